#!/bin/bash
# test_stat.sh -- `pgiofs stat`: the daemon counts every request per class
# (exact counts for O_DIRECT writes and reads, whose requests we control;
# exact bytes for buffered writes once fsync has pushed them through), the
# JSON parses and its counters only grow, interval samples are diffs, the
# counters survive a SIGHUP reload onto a queueing policy, a stopped daemon
# gives a timeout, only root and users who can read the mount root get an
# answer, a path that is not a pgiofs mount is refused, and nothing appears
# in the mount.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 is not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody to test the refusal with"

T=$(mktempdir)
mkdir "$T/b" "$T/m" "$T/b2" "$T/m2"
M=$T/m
# WAL direct: the counts below are of WAL bytes pgiofs sees (in passthrough,
# the default, it sees none: test_passthrough.sh, test_walmount.sh)
printf '[iosched]\npolicy = direct\n[files]\nwal_mode = direct\n' >"$T/conf"
pgiofs_mount "$T/b" "$M" -o allow_other --config "$T/conf"
[ -z "$(ls -A "$M")" ] || fail "the fresh mount is not empty: $(ls -A "$M")"

stat_json() { "$BIN/pgiofs" stat "$M" --json; }

# python3 -c CHECKS -- run CHECKS with `d` = the JSON object on stdin
check_json() {
	python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
c = d["classes"]
'"$1" || fail "JSON check failed: $1"
}

# --- counts ----------------------------------------------------------------
mkdir -p "$M/pg_wal" "$M/base/1"
# 16 O_DIRECT writes of 8 KiB: 16 WRITE requests, then an fsync
dd if=/dev/urandom of="$M/pg_wal/000000010000000000000001" bs=8192 count=16 oflag=direct \
	conv=fsync status=none || fail "dd to pg_wal failed"
# 512 KiB through the write-back cache: the kernel chooses the requests;
# fsync makes sure every byte reached pgiofs
dd if=/dev/urandom of="$M/base/1/16384" bs=8192 count=64 conv=fsync status=none ||
	fail "dd to base/1 failed"
# 8 O_DIRECT reads of 8 KiB
dd if="$M/base/1/16384" of=/dev/null bs=8192 count=8 iflag=direct status=none ||
	fail "O_DIRECT read failed"
stat_json >"$T/s1.json" || fail "pgiofs stat --json failed"
echo "sample: $(head -c 400 "$T/s1.json")..."
check_json '
assert d["schema"] == "pgiofs.stats/1", d["schema"]
assert d["cumulative"] is True and d["policy"] == "direct" and d["stats_enabled"] is True
assert set(c) == {"wal", "xact", "heap", "index", "fsm", "vm", "temp", "meta", "other"}, c.keys()
w, h = c["wal"], c["heap"]
assert w["write_ops"] == 16 and w["write_bytes"] == 16 * 8192, w
assert w["sync_ops"] >= 1 and w["read_ops"] == 0, w
assert h["write_bytes"] == 64 * 8192 and 1 <= h["write_ops"] <= 64, h
assert h["sync_ops"] >= 1, h
assert h["read_ops"] == 8 and h["read_bytes"] == 8 * 8192, h
for k in ("avg", "p50", "p99", "p999", "max", "queue_avg", "service_avg"):
    assert h["latency_ms"][k] >= 0, k
assert w["latency_ms"]["count"] == w["write_ops"] + w["sync_ops"], w
assert w["latency_ms"]["max"] > 0 and w["latency_ms"]["queue_avg"] == 0, w
assert d["total"]["write_bytes"] == sum(x["write_bytes"] for x in c.values())
assert c["index"]["write_ops"] == 0 and c["temp"]["write_ops"] == 0
' <"$T/s1.json"
grep -q "\"mount\":\"$M\"" "$T/s1.json" || fail "the JSON does not name the mount $M"

# the table: one row per active class and a total
"$BIN/pgiofs" stat "$M" >"$T/table" || fail "pgiofs stat failed"
cat "$T/table"
grep -q "^wal " "$T/table" && grep -q "^heap " "$T/table" && grep -q "^total " "$T/table" ||
	fail "the table lacks the wal, heap or total row"
! grep -q "^index " "$T/table" || fail "the table shows an idle class"

# the documented protocol, without pgiofs stat: "snapshot\n" -> one JSON line
dev=$(awk -v m="$M" '$5 == m { print $3 }' /proc/self/mountinfo)
python3 - "$dev" <<'EOF' || fail "the control socket does not answer \"snapshot\" with JSON"
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0pgiofs/" + sys.argv[1])
s.sendall(b"snapshot\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
assert data.endswith(b"\n") and data.count(b"\n") == 1, data[:200]
d = json.loads(data)
assert d["schema"] == "pgiofs.stats/1" and d["classes"]["wal"]["write_ops"] == 16, d
EOF

# --- intervals -------------------------------------------------------------
"$BIN/pgiofs" stat "$M" --interval 0.2 --count 2 >"$T/iv" || fail "--interval 0.2 --count 2 failed"
cat "$T/iv"
[ "$(grep -c '^[0-9:]* *total ' "$T/iv")" -eq 2 ] || fail "--count 2 did not print 2 samples"
# writes made during a 3 s interval are in its diff, and only they (made 1 s
# in: the first snapshot is taken as the command starts)
"$BIN/pgiofs" stat "$M" --json --interval 3 --count 1 >"$T/ivj" &
spid=$!
sleep 1
dd if=/dev/zero of="$M/pg_wal/000000010000000000000002" bs=8192 count=5 oflag=direct \
	status=none || fail "dd failed"
wait $spid || fail "pgiofs stat --json --interval 3 --count 1 failed"
[ "$(wc -l <"$T/ivj")" -eq 1 ] || fail "--count 1 printed $(wc -l <"$T/ivj") JSON lines"
check_json '
assert d["cumulative"] is False and d["sample"] == 1, d
assert 2.5 < d["interval_s"] < 10, d["interval_s"]
assert c["wal"]["write_ops"] == 5 and c["wal"]["write_bytes"] == 5 * 8192, c["wal"]
assert c["heap"]["write_ops"] == 0, c["heap"]
' <"$T/ivj"
# copy_file_range within the mount: pgiofs leaves it to the kernel's READ +
# WRITE fallback, so the copy's bytes go through iosched and are counted
stat_json >"$T/cb.json" || fail "pgiofs stat --json failed"
python3 -c 'import os, sys
s = os.open(sys.argv[1], os.O_RDONLY); d = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o600)
n = 0
while n < 65536:
    k = os.copy_file_range(s, d, 65536 - n)
    assert k > 0, k
    n += k
os.fsync(d)' "$M/base/1/16384" "$M/pg_wal/000000010000000000000003" ||
	fail "copy_file_range on the mount failed"
cmp -n 65536 "$M/base/1/16384" "$M/pg_wal/000000010000000000000003" || fail "copy differs"
stat_json >"$T/ca.json" || fail "pgiofs stat --json failed"
python3 - "$T/cb.json" "$T/ca.json" <<'PY' || fail "a copy_file_range was not counted as WAL writes"
import json, sys
b, a = (json.load(open(f))["classes"]["wal"] for f in sys.argv[1:])
assert a["write_bytes"] - b["write_bytes"] == 65536, (b, a)
PY
"$BIN/pgiofs" stat "$M" --json --interval 0.2 --count 2 >"$T/ivj2" || fail "--json --interval failed"
[ "$(wc -l <"$T/ivj2")" -eq 2 ] || fail "--json --count 2 printed $(wc -l <"$T/ivj2") lines"
while read -r line; do check_json 'assert d["cumulative"] is False' <<<"$line"; done <"$T/ivj2"

# --- a reload keeps the counters (and accounts through the queueing core) ----
pid=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' <"$T/s1.json")
stat_json >"$T/before.json"
printf '[iosched]\npolicy = noop\n' >"$T/conf"
kill -HUP "$pid"
for i in $(seq 50); do
	stat_json | grep -q '"policy":"noop"' && break
	sleep 0.1
done
dd if=/dev/zero of="$M/pg_wal/000000010000000000000003" bs=8192 count=3 oflag=direct \
	status=none || fail "dd after the reload failed"
stat_json >"$T/after.json"
grep -q '"policy":"noop"' "$T/after.json" || fail "SIGHUP did not switch to noop"
python3 - "$T/before.json" "$T/after.json" <<'EOF' || fail "counters did not survive the reload or went down"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def walk(x, y, path=""):
    if isinstance(x, dict):
        for k in x:
            walk(x[k], y[k], path + "." + k)
    elif isinstance(x, int) and not isinstance(x, bool) and "latency" not in path:
        assert y >= x, (path, x, y)
walk(a["classes"], b["classes"])
walk(a["total"], b["total"])
assert b["classes"]["wal"]["write_ops"] == a["classes"]["wal"]["write_ops"] + 3, (a, b)
EOF

# --- a daemon that does not answer (stopped): a timeout, not a hang ----------
on_exit "kill -CONT $pid"
kill -STOP "$pid"
out=$(timeout 30 "$BIN/pgiofs" stat "$M" 2>&1) && fail "pgiofs stat succeeded with the daemon stopped"
kill -CONT "$pid"
echo "stopped daemon: $out"
grep -q "no answer from the daemon.*timed out" <<<"$out" || fail "unclear message for a stopped daemon: $out"

# --- who may read the statistics --------------------------------------------
chmod 0700 "$M"
out=$(as_user nobody "$BIN/pgiofs" stat "$M" 2>&1) && fail "nobody read the statistics of a 0700 mount root"
echo "refused as expected: $out"
grep -q "permission denied" <<<"$out" || fail "the refusal does not say permission denied: $out"
chgrp daemon "$M"
chmod 0750 "$M"
as_user nobody "$BIN/pgiofs" stat "$M" >/dev/null 2>&1 && fail "nobody (not in group daemon) was let in"
runuser -u nobody -G daemon -- "$BIN/pgiofs" stat "$M" --json >"$T/grp.json" ||
	fail "a member of the mount root's group (supplementary) was refused"
check_json 'assert d["schema"] == "pgiofs.stats/1"' <"$T/grp.json"
chgrp root "$M"
chmod 0755 "$M"
as_user nobody "$BIN/pgiofs" stat "$M" --json >"$T/nobody.json" ||
	fail "nobody was refused although the mount root is 0755"
check_json 'assert c["wal"]["write_ops"] >= 16' <"$T/nobody.json"

# without allow_other the kernel admits only the owner; so does pgiofs stat
pgiofs_mount "$T/b2" "$T/m2"
# the name of the control socket still held by a daemon that is ending (a
# mount gone whose device number the next mount gets): the new daemon
# waits for it instead of serving no statistics.  The kernel gives a new
# mount the lowest free device number, so the one just freed, unless a
# mount elsewhere takes it first: tried until it is
dev=$(mountpoint -d "$T/m2") || fail "mountpoint -d $T/m2 failed"
for ((try = 0; try < 10; try++)); do
	pgiofs_umount "$T/m2" || fail "cannot unmount $T/m2"
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0pgiofs/" + sys.argv[1]); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(1.5)' "$dev" "$T/held" &
	holder=$!
	for ((i = 0; i < 50; i++)); do [ -e "$T/held" ] && break; sleep 0.1; done
	pgiofs_mount "$T/b2" "$T/m2"
	wait "$holder"
	rm -f "$T/held"
	[ "$(mountpoint -d "$T/m2")" = "$dev" ] && break
	dev=$(mountpoint -d "$T/m2")
done
[ "$try" -lt 10 ] || echo "the device number was taken elsewhere 10 times: the wait for the control socket not exercised"
"$BIN/pgiofs" stat "$T/m2" >/dev/null ||
	fail "the control socket of a mount whose device number an ending daemon's socket held"
out=$(as_user nobody "$BIN/pgiofs" stat "$T/m2" 2>&1) && fail "nobody read a mount without allow_other"
grep -q "allow_other" <<<"$out" || fail "the refusal does not mention allow_other: $out"
"$BIN/pgiofs" stat "$T/m2" >/dev/null || fail "root was refused on a mount without allow_other"
pgiofs_umount "$T/m2" || fail "cannot unmount $T/m2"

# --- not a pgiofs mount, bad options -----------------------------------------
out=$("$BIN/pgiofs" stat /tmp 2>&1) && fail "pgiofs stat /tmp succeeded"
grep -q '"/tmp" is not a pgiofs mount' <<<"$out" || fail "unclear message for /tmp: $out"
out=$("$BIN/pgiofs" stat "$T/nope" 2>&1) && fail "pgiofs stat of a missing path succeeded"
grep -q "No such file" <<<"$out" || fail "unclear message for a missing path: $out"
out=$("$BIN/pgiofs" stat "$M" --interval 0 2>&1) && fail "--interval 0 was accepted"
grep -q "between 0.01 and 86400" <<<"$out" || fail "unclear message for --interval 0: $out"

# --- nothing in the mount or the backing directory ----------------------------
[ "$(ls -a "$M" | tr '\n' ' ')" = ". .. base pg_wal " ] || fail "unexpected entries: $(ls -a "$M")"
[ "$(ls -a "$T/b" | tr '\n' ' ')" = ". .. base pg_wal " ] || fail "unexpected backing entries"
pgiofs_umount "$M" || fail "cannot unmount $M"
assert_no_mount "$M"
echo ok
