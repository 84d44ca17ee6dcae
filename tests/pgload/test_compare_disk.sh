#!/bin/bash
# test_compare_disk.sh -- `pgload compare` on a disk modelled by pgdisk:
#   - hdd:ext4 with the kernel's mq-deadline and bfq (kyber on a kernel
#     built without bfq) for the native cells and
#     dbaware (over none) as the pgiofs cell, a tunable of mq-deadline, a
#     model setting, OLTP clients and streaming figures: the table, the
#     JSON, the CSV and the charts name every elevator, model and tunable as
#     the kernel and pgdisk report them; nothing is left behind;
#   - hdd:IMAGE: a file system image of the user's, copied, never written;
#   - bad input is refused before anything is set up, naming it: an unknown
#     elevator, one the kernel lacks, an unknown tunable, a value out of
#     range, an elevator's tunable without a cell of that elevator, a
#     missing, damaged or empty image, a model setting pgdisk refuses;
#   - a run killed with SIGKILL leaves pgdisk, its loop device and mounts,
#     which the next run finds and removes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
need_root
[ -x "$BIN/pgiofs" ] || skip "pgiofs not built"
[ -x "$BIN/pgdisk" ] || skip "pgdisk not built"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
have=$(kernel_elevators)
grep -qw mq-deadline <<<"$have" || fail "this kernel has no elevator mq-deadline (it has: $have)"
# the second elevator and a tunable of its own: bfq where the kernel has it
if grep -qw bfq <<<"$have"; then
	SECOND=bfq TUNABLE=low_latency TUNABLE_RE='low_latency=1'
elif grep -qw kyber <<<"$have"; then
	SECOND=kyber TUNABLE=read_lat_nsec TUNABLE_RE='read_lat_nsec=[0-9]'
else
	fail "this kernel has neither bfq nor kyber (it has: $have)"
fi
W=$(mktempdir)

# ---- hdd:ext4, two kernel elevators and dbaware ------------------------------
"$PGLOAD" compare --gen 0.005 --backends hdd:ext4 --profiles native,dbaware \
	--elevators "mq-deadline,$SECOND" --queue-set write_expire=1000 --disk-set seek_ms=4 \
	--oltp 2 --stream-mb 4 --runs 1 --size 256M --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare on hdd:ext4 failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
MQ="hdd:ext4/native elevator=mq-deadline queue.write_expire=1000 disk.seek_ms=4"
SEC="hdd:ext4/native elevator=$SECOND disk.seek_ms=4"
DBA="hdd:ext4/dbaware elevator=none disk.seek_ms=4"
for cell in "$MQ" "$SEC" "$DBA"; do
	grep -qF -- "$cell " "$W/stdout" || { cat "$W/stdout"; fail "no row for $cell"; }
done
grep -q '^Backend/profile  *\[runs\] Schema(s) Import(s)  *±sd  *CPU%  *p50(ms)  *p99(ms)  *p99.9  *max(ms)  *tps  *late(ms)  *Ratio$' \
	"$W/stdout" || { cat "$W/stdout"; fail "no OLTP columns"; }
grep -q '^  commit p99  ' "$W/stdout" || fail "no best cell of the commit p99"
grep -q '^  device read  ' "$W/stdout" || fail "no best cell of the device read"
grep -qE '^  commit p99 +(kernel|pgiofs|a tie|not separated) +pgiofs [0-9.]+x the kernel: .*; 1 run each, ' "$W/stdout" ||
	{ cat "$W/stdout"; fail "no verdict of the kernel against pgiofs on the commit p99"; }
# queue_row LABEL -- the row of LABEL in the table of block queues
queue_row() { sed -n '/^Block queues/,/^$/p' "$W/stdout" | grep -F -- "$1 "; }
queue_row "$MQ" | grep -q ' mq-deadline read_ahead_kb=.* write_expire=1000 ' ||
	{ cat "$W/stdout"; fail "the queue table lacks mq-deadline with write_expire=1000"; }
queue_row "$SEC" | grep -q " $SECOND read_ahead_kb=.* rotational=1 .* $TUNABLE_RE" ||
	{ cat "$W/stdout"; fail "the queue table lacks $SECOND with $TUNABLE"; }
# the dbaware cell's loop device is given none, and pgiofs's
# files.device_queue = auto sets mq-deadline without writeback throttling
# mq-deadline's async_depth 8 (files.device_write_depth), nr_requests 16
# and max_sectors_kb 256 (files.device_requests, device_request_kb) on the
# rotating disk while it is mounted: the table gives the queue the cell ran
# with, read after the mount
queue_row "$DBA" | grep -q ' mq-deadline read_ahead_kb=.* nr_requests=16 max_sectors_kb=256 .* wbt_lat_usec=0 .* async_depth=8 ' ||
	{ cat "$W/stdout"; fail "the queue table lacks dbaware's mq-deadline without wbt, 16 requests of 256 KiB and async_depth 8, set by pgiofs"; }
grep -qE "^$SEC +hdd +54\.0 +4\.00 +7200" "$W/stdout" || { cat "$W/stdout"; fail "the disk table"; }
python3 - "$W/out/results.json" "$SECOND" "$TUNABLE" <<'PY' || fail "results.json does not say what each cell ran on"
import json, sys
d = json.load(open(sys.argv[1]))
second, tunable = sys.argv[2], sys.argv[3]
s = d["settings"]
assert s["elevators"] == ["mq-deadline", second] and s["pgiofs_elevators"] == ["none"], s
assert s["queue_sets"] == {"write_expire": ["1000"]} and s["disk_sets"] == {"seek_ms": ["4"]}, s
assert s["oltp"] == {"clients": 2, "scale": 2, "floor": False, "wal_floor": False} and s["stream_mb"] == 4
cells = {c["label"]: c for c in d["cells"]}
assert len(cells) == 3, list(cells)
for c in cells.values():
    q = c["queue"]
    # a pgiofs cell's queue as it ran: files.device_queue = auto's
    assert q["elevator"] == ("mq-deadline" if c["pgiofs"] else c["elevator"]), (c["elevator"], q)
    assert q["device"].startswith("/dev/loop"), q
    assert q["tunables"]["rotational"] == 1, q                # an hdd says so
    k = c["disk"]
    assert k["model"] == "hdd" and k["seek_ms"] == 4 and k["seq_mb_s"] == 54, k
    assert k["in_service_max"] == 1 and k["completed"] > 0 and k["errors"] == 0, k
    assert c["disk_set"] == {"seek_ms": "4"}
    st = c["stream"]
    assert st["device_read_mb_s"] > 0 and st["file_read_mb_s"] > 0 and st["file_write_mb_s"] > 0
    o = c["oltp"]
    assert o["tx"] > 0 and o["tps"] > 0 and 0 < o["p50_ms"] <= o["p99_ms"] <= o["p999_ms"] <= o["max_ms"], o
    assert c["samples"][0]["oltp"]["tx"] == o["tx"]
mq = [c for c in cells.values() if c["elevator"] == "mq-deadline"][0]
assert mq["queue"]["tunables"]["write_expire"] == 1000 and mq["queue_set"] == {"write_expire": "1000"}
sec = [c for c in cells.values() if c["elevator"] == second][0]
assert tunable in sec["queue"]["tunables"] and sec["queue_set"] == {}
db = [c for c in cells.values() if c["pgiofs"]][0]
assert db["elevator"] == "none" and db["latency"]["wal"]["ops"] > 0
best = {b["figure"]: b for b in d["best"]}             # who wins each figure
assert {"import", "commit p99", "tps", "device read"} <= set(best), list(best)
for b in best.values():
    # the ratio is the best's figure over the next's: below 1 for a time, above for tps and MB/s
    higher = b["figure"] in ("tps", "device read", "file read")
    lead = b["ratio"] if higher else 1 / b["ratio"]
    assert b["next"] in cells and lead >= 1, b
    assert (b["cell"] is None) == b["all_within"] and (b["cell"] is None or b["cell"] in cells), b
    assert b["tie"] == (lead < 1.05 or b["runs_overlap"]) and (not b["all_within"] or b["tie"]), b
    # how sure: the runs of each and their ranges; measured once (streaming): none
    if b["figure"] in ("device read", "file read"):
        assert b["runs"] == [0, 0] and b["ranges"] is None, b
    else:
        (alo, ahi), (blo, bhi) = b["ranges"]
        assert b["runs"] == [1, 1] and b["runs_overlap"] == (not (ahi < blo or bhi < alo)), b
# the lateness of the modelled disk, beside the figures
for c in cells.values():
    assert c["disk"]["late_ns_max"] >= 0, c["disk"]
PY
grep -qE "^$SEC +\[1\] .* [0-9]+\.[0-9]{2} +[0-9.]+$" "$W/stdout" ||
	{ cat "$W/stdout"; fail "no lateness beside $SEC's figures"; }
grep -q ',mq-deadline,write_expire=1000,seek_ms=4,[1-9]' "$W/out/results.csv" || fail "results.csv: elevator and tunables"
python3 -c 'import sys, xml.dom.minidom as x; assert x.parse(sys.argv[1]).documentElement.tagName == "svg"' \
	"$W/out/oltp.svg" || fail "oltp.svg is not an SVG"
grep -qE '<li>commit p99: (best |no winner)' "$W/out/index.html" || fail "index.html does not name the best cell of the commit p99"
grep -q '<svg [^>]*id="oltp"' "$W/out/index.html" || fail "index.html lacks the chart of oltp.svg"
echo "ok: hdd:ext4 with mq-deadline, $SECOND and dbaware: report names elevators, tunables, model; nothing left"

# ---- hdd:IMAGE: the user's file system image, copied ------------------------
truncate -s 96M "$W/fs.img"
mkfs.ext4 -q -F "$W/fs.img" || fail "mkfs.ext4 of the image"
sum=$(md5sum <"$W/fs.img")
"$PGLOAD" compare --gen 0.002 --backends "ssd:$W/fs.img" --profiles native --runs 1 --stream-mb 0 \
	--out "$W/img" >"$W/stdout" 2>"$W/stderr" || { cat "$W/stderr"; fail "compare on ssd:IMAGE failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
grep -q '^ssd:fs.img/native  *\[1\] ' "$W/stdout" || { cat "$W/stdout"; fail "no row for ssd:fs.img/native"; }
[ "$(md5sum <"$W/fs.img")" = "$sum" ] || fail "the image was written to"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["cells"][0]; assert c["backend_path"] == sys.argv[2] and c["disk"]["model"] == "ssd", c' \
	"$W/img/results.json" "$W/fs.img" || fail "results.json: the image back end"
echo "ok: ssd:IMAGE runs on a copy of the image"

# ---- bad input: refused before anything is set up -----------------------------
compare_snapshot >"$W/before"
bad() { compare_refused "$W" "$@"; }
HDD=(--backends hdd:ext4 --profiles native,dbaware)
bad '--elevators: unknown elevator "cfq" (none, mq-deadline, bfq or kyber' "${HDD[@]}" --elevators mq-deadline,cfq
bad '--pgiofs-elevators: unknown elevator "deadline"' "${HDD[@]}" --pgiofs-elevators deadline
bad '--queue-set "readahead=128": no queue tunable "readahead"; pgload knows: read_ahead_kb' \
	"${HDD[@]}" --queue-set readahead=128
bad '--queue-set "low_latency=0,2": "2" is not an integer from 0 to 1' \
	"${HDD[@]}" --elevators bfq --queue-set low_latency=0,2
bad '--queue-set "nr_requests=many": "many" is not an integer' "${HDD[@]}" --queue-set nr_requests=many
bad '--queue-set low_latency: a tunable of bfq, and no cell runs bfq' \
	"${HDD[@]}" --elevators mq-deadline --queue-set low_latency=0
bad 'the hdd model with the --disk-set values refused by' "${HDD[@]}" --disk-set seek_ms=-1
bad 'seek_ms: -1 is out of range' "${HDD[@]}" --disk-set seek_ms=-1
bad 'back end "hdd:zfs": no file system "zfs" on a modelled disk' --backends hdd:zfs --profiles native
bad "back end \"hdd:$W/none.img\": image \"$W/none.img\": No such file or directory" \
	--backends "hdd:$W/none.img" --profiles native
head -c 1000 /dev/zero >"$W/odd.img"
bad "back end \"hdd:$W/odd.img\": image \"$W/odd.img\" is damaged: its size (1000 bytes)" \
	--backends "hdd:$W/odd.img" --profiles native
truncate -s 8M "$W/blank.img"
bad "back end \"hdd:$W/blank.img\": the image is damaged or not a file system image: blkid finds no file system" \
	--backends "hdd:$W/blank.img" --profiles native
bad '--oltp-scale needs --oltp CLIENTS' "${HDD[@]}" --oltp-scale 4
# a kernel without bfq: its block queues (a private /sys/block) list none and mq-deadline
unshare -m bash -c '
	mount -t tmpfs none /sys/block && mkdir -p /sys/block/vdz/queue &&
	echo "[none] mq-deadline" >/sys/block/vdz/queue/scheduler &&
	exec "$@"' lacks "$PGLOAD" compare --gen 0.01 --out "$W/bad" "${HDD[@]}" --elevators bfq \
	>/dev/null 2>"$W/err" && fail "an elevator the kernel lacks was accepted"
grep -qF -- "--elevators: this kernel ($(uname -r)) has no elevator \"bfq\"; it has: none mq-deadline" "$W/err" ||
	{ cat "$W/err"; fail "message for an elevator the kernel lacks"; }
[ -e "$W/bad" ] && fail "--out created for an elevator the kernel lacks"
cmp -s "$W/before" <(compare_snapshot) || fail "something was set up for an elevator the kernel lacks"
echo "ok: bad elevators, tunables, images and model settings refused, nothing set up"

# ---- SIGKILL on the modelled disk; the next run removes what it left ------------
"$PGLOAD" compare --gen 0.01 --backends hdd:ext2 --profiles native,dbaware --elevators mq-deadline \
	--runs 50 --size 256M --stream-mb 0 --out "$W/kill" >/dev/null 2>"$W/err.kill" &
pid=$!
for ((i = 0; i < 900; i++)); do
	[ "$(grep -c '^pgload: round 1/' "$W/err.kill")" -ge 2 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
grep -q '^pgload: round 1/' "$W/err.kill" || { cat "$W/err.kill"; fail "the run did not get going"; }
kill -KILL $pid
wait $pid 2>/dev/null
killed=$(compare_work_dir "$W/err.kill")
grep -q " $killed/cell1/disk fuse.pgdisk" /proc/mounts || fail "no pgdisk mount left by SIGKILL (test broken)"
losetup -a | grep -q "$killed" || fail "no loop device left by SIGKILL (test broken)"
"$PGLOAD" compare --gen 0.002 --backends tmpfs --profiles native --runs 1 --stream-mb 0 \
	--out "$W/next" >/dev/null 2>"$W/stderr" || { cat "$W/stderr"; fail "the next run failed"; }
grep -q "cleaning up after an earlier interrupted run (pid $pid): $killed" "$W/stderr" ||
	{ cat "$W/stderr"; fail "the killed run's leftovers were not reported"; }
assert_compare_clean "$killed"
assert_compare_clean "$(compare_work_dir "$W/stderr")"
echo "ok: SIGKILL on hdd:ext2: pgdisk, its loop devices and mounts removed by the next run"
