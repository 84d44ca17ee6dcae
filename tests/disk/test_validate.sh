#!/bin/bash
# test_validate.sh -- the modelled disk, measured through a loop device with
# direct I/O on pgdisk's disk file, matches its model:
#   - hdd, sequential 1 MiB reads: within 10% of seq_mb_s (54 MB/s);
#   - hdd, random 8 KiB reads: within 15% of the IOPS that the mean seek
#     plus half a revolution plus the transfer predict (78 IOPS);
#   - hdd: one request in service at a time although several were waiting
#     in pgdisk (in_service_max 1, held_max > 1);
#   - ssd with a 20 ms latency: four random reads in flight overlap (about
#     4 / 20 ms = 200 IOPS, not the 50 of one at a time; in_service_max > 1).
# Timing is modelled time: the reads are issued several at a time (with the
# queue's elevator "none", which keeps their order), so each request is
# already waiting in pgdisk when the one before completes and the model's
# holding, not the machine's speed, sets the pace.  A busy machine can still
# starve the chain now and then (late replies: late_ns_sum, printed below),
# so each figure gets up to 3 runs; one within the bound passes, and any
# run faster than the model fails.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m"
disk_image "$D/img" 256M

# within NAME PREDICTED PERCENT CMD... -- CMD RUN (RUN = 1, 2, 3) prints the
# measured figure; pass when one of up to 3 runs is within PERCENT% of
# PREDICTED.  A busy
# machine can only make a run slower than the model, now and then; a run
# more than 5% faster means the model is not holding requests back, and
# fails at once.
within() {
	local name=$1 pred=$2 pct=$3 i m
	shift 3
	for ((i = 1; i <= 3; i++)); do
		m=$("$@" $i) || fail "$name: the measurement failed"
		awk -v m="$m" -v p="$pred" -v n="$name" 'BEGIN {
			printf "%s: measured %.2f, model %.2f (ratio %.3f)\n", n, m, p, m / p }'
		awk -v m="$m" -v p="$pred" 'BEGIN { exit !(m / p > 1.05) }' &&
			fail "$name: $m is faster than the model's $pred"
		awk -v m="$m" -v p="$pred" -v pct="$pct" 'BEGIN { exit !(m / p >= 1 - pct / 100) }' &&
			return 0
	done
	fail "$name: not within $pct% of the model's $pred in 3 runs"
}
seq_mb_s() { "$HELPER_DIO" seq "$1" 64 1024 2 | awk '{ print $6 }'; }
# random reads: the same addresses in the same run (seed 2004 + RUN)
rand_iops() { "$HELPER_DIO" rand "$1" "$2" 8 4 $((2004 + $3)) | awk '{ print $8 }'; }

# --- hdd ---------------------------------------------------------------
disk_start "$D/img" "$D/m"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none

# two 1 MiB reads in flight: more, and the submitter's threads may issue
# them out of order, which costs seeks (bench/disk.sh shows it)
within "hdd sequential MB/s" 54 10 seq_mb_s "$LOOP"
[ "$(stat_of "$D/m" errors)" -eq 0 ] || fail "errors on the hdd"

before=$(stat_of "$D/m" read_ops)
predict=$(awk 'BEGIN { printf "%.3f", 1000 / (8.5 + 60000 / 7200 / 2 + 8192 / 54e6 * 1000) }')
within "hdd random 8 KiB IOPS" "$predict" 15 rand_iops "$LOOP" 300
[ $(($(stat_of "$D/m" read_ops) - before)) -ge 300 ] || fail "pgdisk did not see the reads"

held=$(stat_of "$D/m" held_max)
busy=$(stat_of "$D/m" in_service_max)
echo "hdd: held_max $held in_service_max $busy late_ns_sum $(stat_of "$D/m" late_ns_sum)" \
	"late_ns_max $(stat_of "$D/m" late_ns_max) over $(stat_of "$D/m" completed) requests"
[ "$held" -gt 1 ] || fail "requests were never waiting in pgdisk together (held_max $held)"
[ "$busy" -eq 1 ] || fail "the hdd had $busy requests in service at once"
losetup -d "$LOOP"
disk_stop "$D/m" "$DISK_PID"
disk_wait_exit "$DISK_PID" || fail "pgdisk did not exit"

# --- ssd: latencies overlap --------------------------------------------
disk_start "$D/img" "$D/m" --model ssd --set ssd_latency_us=20000
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none
predict=$(awk 'BEGIN { printf "%.3f", 4 * 1000 / (20 + 8192 / 54e6 * 1000) }')
within "ssd random 8 KiB IOPS, 4 in flight" "$predict" 15 rand_iops "$LOOP" 100
busy=$(stat_of "$D/m" in_service_max)
echo "ssd: in_service_max $busy"
[ "$busy" -gt 1 ] || fail "the ssd never had requests in service together"
echo "ok"
