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
# holding, not the machine's speed, sets the pace; a busy machine only adds
# the late replies pgdisk counts (late_ns_sum, printed below).
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m"
disk_image "$D/img" 256M

# pass_within NAME MEASURED PREDICTED PERCENT
pass_within() {
	awk -v m="$2" -v p="$3" -v pct="$4" -v n="$1" 'BEGIN {
		r = m / p; printf "%s: measured %.2f, model %.2f (ratio %.3f)\n", n, m, p, r
		exit !(r >= 1 - pct / 100 && r <= 1 + pct / 100) }' ||
		fail "$1: $2 is not within $4% of the model's $3"
}

# --- hdd ---------------------------------------------------------------
disk_start "$D/img" "$D/m"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none

out=$("$HELPER_DIO" seq "$LOOP" 64 1024 2) || fail "sequential read failed"
pass_within "hdd sequential MB/s" "$(echo "$out" | awk '{ print $6 }')" 54 10

before=$(stat_of "$D/m" read_ops)
out=$("$HELPER_DIO" rand "$LOOP" 300 8 4 2004) || fail "random read failed"
predict=$(awk 'BEGIN { printf "%.3f", 1000 / (8.5 + 60000 / 7200 / 2 + 8192 / 54e6 * 1000) }')
pass_within "hdd random 8 KiB IOPS" "$(echo "$out" | awk '{ print $8 }')" "$predict" 15
[ $(($(stat_of "$D/m" read_ops) - before)) -eq 300 ] || fail "pgdisk did not see 300 reads"

held=$(stat_of "$D/m" held_max)
busy=$(stat_of "$D/m" in_service_max)
echo "hdd: held_max $held in_service_max $busy late_ns_sum $(stat_of "$D/m" late_ns_sum)" \
	"late_ns_max $(stat_of "$D/m" late_ns_max) over $(stat_of "$D/m" completed) requests"
[ "$held" -gt 1 ] || fail "requests were never waiting in pgdisk together (held_max $held)"
[ "$busy" -eq 1 ] || fail "the hdd had $busy requests in service at once"
[ "$(stat_of "$D/m" errors)" -eq 0 ] || fail "errors on the hdd"
losetup -d "$LOOP"
disk_stop "$D/m" "$DISK_PID"
disk_wait_exit "$DISK_PID" || fail "pgdisk did not exit"

# --- ssd: latencies overlap --------------------------------------------
disk_start "$D/img" "$D/m" --model ssd --set ssd_latency_us=20000
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none
out=$("$HELPER_DIO" rand "$LOOP" 100 8 4 7) || fail "random read failed"
predict=$(awk 'BEGIN { printf "%.3f", 4 * 1000 / (20 + 8192 / 54e6 * 1000) }')
pass_within "ssd random 8 KiB IOPS, 4 in flight" "$(echo "$out" | awk '{ print $8 }')" "$predict" 15
busy=$(stat_of "$D/m" in_service_max)
echo "ssd: in_service_max $busy"
[ "$busy" -gt 1 ] || fail "the ssd never had requests in service together"
echo "ok"
