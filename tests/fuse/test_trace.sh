#!/bin/bash
# test_trace.sh -- `pgiofs --trace FILE` records every request and
# `pgiofs trace FILE` decodes it: the records show the expected classes,
# directions and byte totals (through `direct` and, after a SIGHUP reload,
# the queueing core), `lz4 -t` accepts the file, a truncated copy decodes
# partly and exits 1 naming the byte offset, --csv parses with python3's csv
# module, `pgiofs trace --replay` replays every recorded request the same
# way twice (and a truncated copy what it decodes, then exits 1), and an existing trace file is refused at mount time with nothing
# mounted and the file untouched.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 is not installed"
command -v lz4 >/dev/null || skip "lz4 is not installed"

T=$(mktempdir)
mkdir "$T/b" "$T/m"
M=$T/m
TR=$T/io.trace
# WAL direct: the trace below records WAL writes (in passthrough, the
# default, they bypass pgiofs)
printf '[iosched]\npolicy = direct\n[files]\nwal_mode = direct\n' >"$T/conf"
# a relative path: the daemon changes to "/", pgiofs must resolve it first
(cd "$T" && pgiofs_mount "$T/b" "$M" --config "$T/conf" --trace io.trace)
[ -f "$TR" ] || fail "no trace file $TR after the mount"
[ -z "$(ls -A "$M")" ] || fail "the fresh mount is not empty: $(ls -A "$M")"

# --- traffic -------------------------------------------------------------------
mkdir -p "$M/pg_wal" "$M/base/1"
# 16 O_DIRECT writes of 8 KiB, then an fsync
dd if=/dev/urandom of="$M/pg_wal/000000010000000000000001" bs=8192 count=16 oflag=direct \
	conv=fsync status=none || fail "dd to pg_wal failed"
# 512 KiB through the write-back cache, fsync'd
dd if=/dev/urandom of="$M/base/1/16384" bs=8192 count=64 conv=fsync status=none ||
	fail "dd to base/1 failed"
# 8 O_DIRECT reads of 8 KiB
dd if="$M/base/1/16384" of=/dev/null bs=8192 count=8 iflag=direct status=none ||
	fail "O_DIRECT read failed"
# a pause: the writer emits the partly filled chunk as its own lz4 block
sleep 1.5

# --- a reload: the new (queueing) scheduler records into the same trace --------
pid=$(pgrep -f "pgiofs .* $M\$" | head -1)
[ -n "$pid" ] || fail "cannot find the daemon of $M"
printf '[iosched]\npolicy = noop\n' >"$T/conf"
kill -HUP "$pid"
for i in $(seq 50); do
	"$BIN/pgiofs" stat "$M" --json 2>/dev/null | grep -q '"policy":"noop"' && break
	sleep 0.1
done
"$BIN/pgiofs" stat "$M" --json | grep -q '"policy":"noop"' || fail "SIGHUP did not switch to noop"
dd if=/dev/zero of="$M/pg_wal/000000010000000000000002" bs=8192 count=3 oflag=direct \
	status=none || fail "dd after the reload failed"
pgiofs_umount "$M" || fail "cannot unmount $M"
assert_no_mount "$M"

# --- decode --------------------------------------------------------------------
lz4 -q -t "$TR" || fail "lz4 -t refuses the trace"
"$BIN/pgiofs" trace "$TR" >"$T/text" 2>"$T/text.err" || fail "pgiofs trace failed: $(cat "$T/text.err")"
head -3 "$T/text"
head -1 "$T/text" | grep -Eq "^trace .*: started [0-9T:.-]+Z, [0-9]+ records$" ||
	fail "bad header line: $(head -1 "$T/text")"
n=$(head -1 "$T/text" | sed -E 's/.*, ([0-9]+) records$/\1/')
[ "$(($(wc -l <"$T/text") - 1))" -eq "$n" ] || fail "header says $n records, $(($(wc -l <"$T/text") - 1)) printed"
"$BIN/pgiofs" trace "$TR" --csv >"$T/csv" || fail "pgiofs trace --csv failed"
python3 - "$T/csv" "$n" "$T/b" <<'PY' || fail "the CSV does not show the traffic"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
assert list(rows[0].keys()) == ["time_s", "class", "dir", "dev", "file", "offset", "len",
                                "queue_us", "service_us", "pid", "result"], rows[0].keys()
# files are identified by device and inode: the backing filesystem's device
# (directory syncs carry no file)
dev = os.stat(sys.argv[3]).st_dev
assert all(r["dev"] == "%d:%d" % (os.major(dev), os.minor(dev)) for r in rows
           if r["file"] != "0"), {r["dev"] for r in rows}
def sel(cls, d):
    return [r for r in rows if r["class"] == cls and r["dir"] == d]
def total(rs):
    return sum(int(r["result"]) for r in rs)
ww, hw, hr = sel("wal", "write"), sel("heap", "write"), sel("heap", "read")
assert len(ww) == 19 and total(ww) == 19 * 8192, (len(ww), total(ww))
assert all(int(r["len"]) == 8192 for r in ww)
assert len({r["file"] for r in ww}) == 2, ww
assert 1 <= len(hw) <= 64 and total(hw) == 64 * 8192, (len(hw), total(hw))
assert len(hr) == 8 and total(hr) == 8 * 8192, (len(hr), total(hr))
assert sel("wal", "sync") and sel("heap", "sync")
assert not sel("wal", "read"), sel("wal", "read")
for r in rows:
    assert float(r["time_s"]) >= 0 and int(r["queue_us"]) >= 0 and int(r["service_us"]) >= 0, r
    assert int(r["result"]) >= 0, r
# the 3 writes after the reload went through the queueing core: they come last
assert [r["file"] for r in ww[-3:]] == [ww[-1]["file"]] * 3
times = [float(r["time_s"]) for r in ww]
assert times == sorted(times), times
print("csv: %d records, wal writes %d, heap writes %d (%d bytes), heap reads %d"
      % (len(rows), len(ww), len(hw), total(hw), len(hr)))
PY

# --- a truncated copy: what decodes, then the offset, exit 1 -------------------
size=$(stat -c %s "$TR")
head -c $((size - 16)) "$TR" >"$T/cut.trace"
rc=0
"$BIN/pgiofs" trace "$T/cut.trace" >"$T/cut" 2>"$T/cut.err" || rc=$?
echo "truncated ($((size - 16)) of $size bytes): $(cat "$T/cut.err")"
[ $rc -eq 1 ] || fail "a truncated trace exited $rc, not 1"
grep -q "byte [0-9]" "$T/cut.err" || fail "no byte offset in: $(cat "$T/cut.err")"
got=$(($(wc -l <"$T/cut") - 1))
[ "$got" -gt 0 ] && [ "$got" -le "$n" ] || fail "the truncated copy decoded $got of $n records"
head -1 "$T/cut" | grep -q "before the damage" || fail "bad header: $(head -1 "$T/cut")"
head -n $((got + 1)) "$T/text" | tail -n +2 | cmp -s - <(tail -n +2 "$T/cut") ||
	fail "the truncated copy's records differ from the full trace's"
# cut inside the first block: no record, still an error, no crash
head -c 40 "$TR" >"$T/cut2.trace"
rc=0
"$BIN/pgiofs" trace "$T/cut2.trace" >/dev/null 2>"$T/cut2.err" || rc=$?
[ $rc -eq 1 ] || fail "a 40-byte trace exited $rc: $(cat "$T/cut2.err")"

# --- replay: the recorded requests through a profile, twice the same ------------
"$BIN/pgiofs" trace "$TR" --replay --profile dbaware --device hdd --json >"$T/rp1" ||
	fail "replay of the recorded trace failed"
"$BIN/pgiofs" trace "$TR" --replay --profile dbaware --device hdd --json >"$T/rp2" ||
	fail "second replay failed"
cmp -s "$T/rp1" "$T/rp2" || fail "two replays of one trace differ"
python3 - "$T/rp1" "$n" <<'PY' || fail "replay JSON"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["total"]
assert d["replay"] is True and d["complete"] is True and d["policy"] == "dbaware", d
assert d["ra_window_kb"] == 512, d   # the dbaware profile's readahead is modelled
assert d["records"] == int(sys.argv[2]) == t["read_ops"] + t["write_ops"] + t["sync_ops"], d
assert d["classes"]["wal"]["write_ops"] >= 16 and t["latency_ms"]["max"] > 0, d
PY
rc=0
"$BIN/pgiofs" trace "$T/cut.trace" --replay --profile noop >"$T/rpcut" 2>"$T/rpcut.err" || rc=$?
[ $rc -eq 1 ] || fail "replaying a truncated trace exited $rc, not 1"
head -1 "$T/rpcut" | grep -q "$got records before the damage" || fail "bad header: $(head -1 "$T/rpcut")"
grep -q "byte [0-9]" "$T/rpcut.err" || fail "no byte offset in: $(cat "$T/rpcut.err")"

# --- an existing trace file is refused before anything is mounted ---------------
sum=$(md5sum <"$TR")
rc=0
"$BIN/pgiofs" --trace "$TR" "$T/b" "$M" 2>"$T/refuse.err" || rc=$?
cat "$T/refuse.err"
[ $rc -ne 0 ] || { pgiofs_umount "$M"; fail "pgiofs mounted over an existing trace file"; }
assert_no_mount "$M"
grep -q "already exists" "$T/refuse.err" || fail "unclear refusal: $(cat "$T/refuse.err")"
[ "$(md5sum <"$TR")" = "$sum" ] || fail "the existing trace file was changed"
# a trace in a missing directory: refused too, nothing mounted
rc=0
"$BIN/pgiofs" --trace "$T/nodir/x.trace" "$T/b" "$M" 2>/dev/null || rc=$?
[ $rc -ne 0 ] || { pgiofs_umount "$M"; fail "pgiofs mounted with an uncreatable trace"; }
assert_no_mount "$M"
echo "ok"
