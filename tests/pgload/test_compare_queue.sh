#!/bin/bash
# test_compare_queue.sh -- `pgload compare` leaves the block queues of its
# loop devices as it found them, and does not measure what an earlier user
# left on one.  A loop device's queue outlives the device: the next device
# of the same number keeps a limit set on it (max_sectors_kb, read_ahead_kb).
#   - a leftover: a loop device attached and given max_sectors_kb 64, then
#     detached, is the first a run attaches; its cell reads back the
#     kernel's default largest request, not 64;
#   - --queue-set read_ahead_kb=512,1024: each cell runs with its value (the
#     report reads it back), and after the run each device it used has the
#     read_ahead_kb it had before (the kernel's default for a new one);
#   - on a modelled hdd, where pgiofs lowers nr_requests and max_sectors_kb
#     (files.device_queue), a dbaware cell swept with --queue-set
#     max_sectors_kb=1024 and nr_requests=64 runs with them, as its label
#     says, and one with --queue-set read_ahead_kb only with pgiofs's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
need_root
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
W=$(mktempdir)

# the leftover, on the loop device the run will attach first
truncate -s 16M "$W/scratch.img"
LEFT=$(losetup --find --show "$W/scratch.img") || fail "cannot attach a loop device"
q=/sys/block/${LEFT#/dev/}/queue
echo 64 >"$q/max_sectors_kb" || fail "cannot set $LEFT's max_sectors_kb"
DEFAULT_KB=$(cat "$q/max_hw_sectors_kb")
[ "$DEFAULT_KB" -gt 64 ] || skip "$LEFT's largest request is $DEFAULT_KB KiB: nothing to tell 64 from"
RA_BEFORE=$(cat "$q/read_ahead_kb")
losetup -d "$LEFT" || fail "cannot detach $LEFT"
[ "$(cat "$q/max_sectors_kb")" = 64 ] || skip "this kernel does not keep a loop device's limit after detaching"

"$PGLOAD" compare --gen 0.005 --backends ext4 --profiles native --elevators mq-deadline \
	--queue-set read_ahead_kb=512,1024 --runs 1 --size 256M --stream-mb 0 --out "$W/out" \
	>"$W/stdout" 2>"$W/stderr" || { cat "$W/stderr"; fail "compare failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
# DEVICE READ_AHEAD MAX_SECTORS per cell, as the report read them back
python3 - "$W/out/results.json" >"$W/cells" <<'PY' || fail "results.json lacks the cells' queues"
import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    q = c["queue"]
    print(q["device"], q["tunables"]["read_ahead_kb"], q["tunables"]["max_sectors_kb"], c["queue_set"]["read_ahead_kb"])
PY
cat "$W/cells"
[ "$(wc -l <"$W/cells")" = 2 ] || fail "want 2 cells, the report has $(wc -l <"$W/cells")"
while read -r dev ra kb want; do
	[ "$ra" = "$want" ] || fail "the cell of read_ahead_kb=$want ran with $ra on $dev"
	[ "$kb" != 64 ] || fail "the cell on $dev ran with the leftover max_sectors_kb 64"
	now=/sys/block/${dev#/dev/}/queue
	[ "$(cat "$now/read_ahead_kb")" != "$want" ] ||
		fail "$dev still has the run's read_ahead_kb $want after it"
	if [ "$dev" = "$LEFT" ]; then
		[ "$kb" = "$DEFAULT_KB" ] ||
			fail "the cell on $dev ran with max_sectors_kb $kb, not the kernel's default $DEFAULT_KB"
		[ "$(cat "$now/read_ahead_kb")" = "$RA_BEFORE" ] ||
			fail "$dev has read_ahead_kb $(cat "$now/read_ahead_kb") after the run, $RA_BEFORE before"
		seen=1
	fi
done <"$W/cells"
[ "${seen:-}" = 1 ] || fail "no cell ran on $LEFT, the device with the leftover (the cells: $(cut -d' ' -f1 "$W/cells" | tr '\n' ' '))"

for sweep in "max_sectors_kb=1024 --queue-set nr_requests=64" "read_ahead_kb=256"; do
	rm -rf "$W/out2"
	# shellcheck disable=SC2086 # the sweep is two options
	# mq-deadline before the mount: a new elevator takes the queue's nr_requests
	"$PGLOAD" compare --gen 0.005 --backends hdd:ext4 --profiles dbaware \
		--pgiofs-elevators mq-deadline --queue-set $sweep \
		--runs 1 --size 256M --stream-mb 0 --out "$W/out2" >"$W/stdout2" 2>"$W/stderr2" ||
		{ cat "$W/stderr2"; fail "compare --queue-set $sweep failed"; }
	assert_compare_clean "$(compare_work_dir "$W/stderr2")"
	got=$(python3 -c 'import json, sys; q = json.load(open(sys.argv[1]))["cells"][0]["queue"]["tunables"]; print(q["nr_requests"], q["max_sectors_kb"])' "$W/out2/results.json") ||
		fail "results.json lacks the dbaware cell's queue"
	case $sweep in
	max*) want="64 1024" ;;
	*) want="16 256" ;;
	esac
	[ "$got" = "$want" ] || fail "the dbaware cell of --queue-set $sweep ran with nr_requests and max_sectors_kb $got, want $want"
done
echo "ok"
