#!/bin/bash
# cloud.sh -- pgdisk's capped cloud volumes, validated: fio through a loop
# device with direct I/O on pgdisk's disk, measured against the configured
# caps, and pgdisk's own cost against the bare loop device.
#
# Every image lives on a tmpfs (as pgload compare keeps them), so the
# machine's disk cannot slow a request past its modelled time.  Each check
# prints what was configured, what fio measured, their ratio, and what the
# model's own counters say (the stats file):
#
#   iops      gp3: 16 KiB random writes, 32 in flight: the IOPS cap (3,000)
#   mib_s     gp3: 1 MiB sequential writes, 8 in flight: the throughput cap
#             (125 MiB/s)
#   seq4k     a cloud volume of 100 IOPS and 8 MiB/s: 4 KiB sequential
#             writes, 32 in flight, reach 8 MiB/s (2,048 a second, twenty
#             times the IOPS cap one by one): counted one operation per
#             256 KiB, the IOPS cap never holds one back
#   qd1       gp3: 16 KiB random writes one at a time: fio's median
#             completion latency against the configured median (1 ms), and
#             the model's own median response (stats: response_ns_p50); the
#             same on a volume whose every request takes 1 ms (p99 = median)
#             less 1 ms is the round trip through fio, the loop device, FUSE
#             and pgdisk at that pace, and "net" is gp3's median less it
#   credits   gp2:100 (300 baseline, 3,000 burst) with a bucket of
#             --credits credits, full at the start: 16 KiB random writes,
#             32 in flight, spend them in credits / (3000 - 300) seconds (10 s
#             for the default 27,000), then run at the baseline; the model's
#             moment (credits_first_out_ns, from the first write) and fio's
#             (the quarter second after the last one above the middle of
#             burst and baseline) against the formula, also at the burst
#             rate fio got (a machine that delivers less than 3,000 spends
#             the credits more slowly)
#   overhead  model none against the bare loop device on the same image:
#             16 KiB random writes (32 in flight) and 1 MiB sequential writes
#             (8 in flight), A B A B, the ratio of the medians; and model
#             none with daemon.realtime = no (the loop device's own workers
#             run in the normal class: on a busy machine the real-time
#             class alone can put pgdisk ahead of the bare device)
#
# Rounds interleave the checks; the summary gives medians.  It measures and
# prints, nothing more: no timing is asserted (tests/disk/test_cloud.sh
# holds the model's counters).  Figures taken while other work runs on the
# machine are noisy: say so with them (the load average is printed).
# Progress on stderr, results on stdout.  Exit 0 when every sample ran, 1
# on an error, 2 when interrupted; everything it started (loop devices,
# pgdisk, the tmpfs, directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGDISK=${PGDISK:-$TOP/bin/pgdisk}
ME=cloud.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=1
SECONDS_RUN=10
CREDITS=27000
DIR=/var/tmp
PGDISK_ARGS=""

usage() {
	cat <<EOF
usage: bench/cloud.sh [options]

pgdisk's capped cloud volumes (gp3, gp2, a small cloud volume) through a loop
device, fio as the client, against their configured caps; and pgdisk's cost
(model none) against the bare loop device.  Needs root and fio.

  --rounds N        rounds of every check (default $ROUNDS, 1..20)
  --seconds S       length of each fio run (default $SECONDS_RUN, 3..600)
  --credits N       gp2's credit bucket for the credits check (default $CREDITS:
                    10 s of burst)
  --pgdisk-args A   more pgdisk options for every instance (e.g.
                    "--set realtime=no")
  --dir DIR         parent of the working directory (default $DIR)
  -h, --help        this text

Environment: PGDISK (default bin/pgdisk).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 20; ROUNDS=$2; shift 2 ;;
		--seconds) [ $# -ge 2 ] || die "--seconds needs a value"; range --seconds "$2" 3 600; SECONDS_RUN=$2; shift 2 ;;
		--credits) [ $# -ge 2 ] || die "--credits needs a value"; range --credits "$2" 1000 100000000; CREDITS=$2; shift 2 ;;
		--pgdisk-args) [ $# -ge 2 ] || die "--pgdisk-args needs a value"; PGDISK_ARGS=$2; shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
read -r -a EXTRA <<<"$PGDISK_ARGS"

[ "$(id -u)" -eq 0 ] || die "must run as root: pgdisk and losetup need it (try: sudo $0${*:+ $*})"
[ -x "$PGDISK" ] || die "$PGDISK not found: run make"
command -v fio >/dev/null || die "fio not found: scripts/install-deps.sh installs it"
command -v jq >/dev/null || die "jq not found"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"

WORK="" LOOPS=() PIDS=() MNTS=()
cleanup() {
	trap - EXIT INT TERM
	pgdisk_teardown
	if [ -n "$WORK" ]; then
		mountpoint -q "$WORK/img" && umount "$WORK/img"
		rm -rf -- "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM

WORK=$(mktemp -d "$DIR/pgdisk-cloud.XXXXXX") || die "cannot create a directory in $DIR"
mkdir "$WORK/img"
mount -t tmpfs -o size=2560M,mode=0700 pgdisk-cloud "$WORK/img" || die "cannot mount a tmpfs"

declare -A LOOP STATS
# start NAME ARGS... -- pgdisk NAME (model ARGS) on a 256 MiB image, a
# loop device (elevator none) on it: LOOP[NAME], STATS[NAME]
start() {
	local name=$1 pid l
	shift
	mkdir -p "$WORK/$name"
	truncate -s 256M "$WORK/img/$name.img"
	"$PGDISK" "$@" "${EXTRA[@]}" "$WORK/img/$name.img" "$WORK/$name" || die "pgdisk $* failed"
	MNTS+=("$WORK/$name")
	pid=$(pgrep -f -- " $WORK/$name\$")
	PIDS+=("$pid")
	l=$(losetup --direct-io=on --find --show "$WORK/$name/disk") || die "losetup failed"
	LOOPS+=("$l")
	echo none >"/sys/block/${l#/dev/}/queue/scheduler" || die "$l: cannot set elevator none"
	LOOP[$name]=$l
	STATS[$name]=$WORK/$name/stats
}

# stop NAME -- its loop device and pgdisk (to start it afresh: full credits)
stop() {
	local name=$1 l=${LOOP[$1]} i
	losetup -d "$l" || die "losetup -d $l failed"
	# not to be detached again at exit: the name may be another's by then
	for i in "${!LOOPS[@]}"; do [ "${LOOPS[$i]}" = "$l" ] && unset 'LOOPS[i]'; done
	for ((i = 0; i < 50; i++)); do [ -e "/sys/block/${l#/dev/}/loop" ] || break; sleep 0.1; done
	umount "$WORK/$name" || die "cannot unmount $WORK/$name"
	for ((i = 0; i < 100; i++)); do pgrep -f -- " $WORK/$name\$" >/dev/null || break; sleep 0.1; done
	rm -f "$WORK/img/$name.img"
}

stat_of() { awk -v k="$2" '$1 == k { print $2 }' "${STATS[$1]}"; }

# fio_run DEV JSON RW BS QD [ARGS...] -- one fio job, JSON output to the file
fio_run() {
	local dev=$1 out=$2 rw=$3 bs=$4 qd=$5
	shift 5
	fio --name=c --filename="$dev" --rw="$rw" --bs="$bs" --iodepth="$qd" --ioengine=io_uring \
		--direct=1 --time_based --runtime="$SECONDS_RUN" --randseed=$RANDOM \
		--output-format=json --output="$out" "$@" >/dev/null 2>"$out.err" ||
		fail_log "fio $rw $bs QD$qd on $dev failed" "$out.err"
}
jget() { jq -r "$2" "$1"; }

declare -A RES
add() { RES[$1]+="$2 "; }

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start bare-pgdisk --model none
start none-nort --model none --set realtime=no
start gp3 --model gp3
start lat --model gp3
start fixed --model cloud --set cloud_latency_us=1000 --set cloud_latency_p99_us=1000
start small --model cloud --set cloud_iops=100 --set cloud_mib_s=8
truncate -s 256M "$WORK/img/bare.img"
BARE=$(losetup --direct-io=on --find --show "$WORK/img/bare.img") || die "losetup failed"
LOOPS+=("$BARE")
echo none >"/sys/block/${BARE#/dev/}/queue/scheduler"

for ((r = 1; r <= ROUNDS; r++)); do
	# the IOPS cap, and how many requests it held back
	w0=$(stat_of gp3 write_ops) l0=$(stat_of gp3 limit_iops)
	fio_run "${LOOP[gp3]}" "$WORK/f.json" randwrite 16k 32
	add iops "$(jget "$WORK/f.json" '.jobs[0].write.iops')"
	add iops_held "$(echo "($(stat_of gp3 limit_iops) - $l0) / ($(stat_of gp3 write_ops) - $w0)" | bc -l)"
	progress "round $r: iops $(last_of "${RES[iops]}"), $(last_of "${RES[iops_held]}") of them held back by the cap"

	# the throughput cap
	fio_run "${LOOP[gp3]}" "$WORK/f.json" write 1m 8
	add mib_s "$(jget "$WORK/f.json" '.jobs[0].write.bw_bytes / 1048576')"
	progress "round $r: mib_s $(last_of "${RES[mib_s]}")"

	# 4 KiB sequential writes on the small volume: counted per 256 KiB
	o0=$(stat_of small cloud_ops) b0=$(stat_of small cloud_bytes) w0=$(stat_of small write_ops)
	l0=$(stat_of small limit_iops) t0=$(stat_of small limit_throughput)
	fio_run "${LOOP[small]}" "$WORK/f.json" write 4k 32
	o1=$(stat_of small cloud_ops) b1=$(stat_of small cloud_bytes) w1=$(stat_of small write_ops)
	add seq4k "$(jget "$WORK/f.json" '.jobs[0].write.bw_bytes / 1048576')"
	add seq4k_ops_per_256k "$(echo "($o1 - $o0) / (($b1 - $b0) / 262144)" | bc -l)"
	add seq4k_req_kib "$(echo "($b1 - $b0) / ($w1 - $w0) / 1024" | bc -l)"
	add seq4k_iops_held "$(($(stat_of small limit_iops) - l0))"
	add seq4k_tput_held "$(($(stat_of small limit_throughput) - t0))"
	progress "round $r: seq4k $(last_of "${RES[seq4k]}") MiB/s," \
		"$(last_of "${RES[seq4k_ops_per_256k]}") operations per 256 KiB," \
		"requests of $(last_of "${RES[seq4k_req_kib]}") KiB on average"

	# latency one at a time, and the round trip at that pace
	fio_run "${LOOP[lat]}" "$WORK/f.json" randwrite 16k 1
	add qd1 "$(jget "$WORK/f.json" '.jobs[0].write.clat_ns.percentile["50.000000"] / 1000')"
	fio_run "${LOOP[fixed]}" "$WORK/f.json" randwrite 16k 1
	add qd1_fixed "$(jget "$WORK/f.json" '.jobs[0].write.clat_ns.percentile["50.000000"] / 1000')"
	progress "round $r: qd1 $(last_of "${RES[qd1]}") us, on a fixed 1 ms $(last_of "${RES[qd1_fixed]}") us"

	# gp2's credits, from a full bucket
	rm -f "$WORK/gp2.req"
	start gp2 --model gp2:100 --set "cloud_credits=$CREDITS" --requests "$WORK/gp2.req"
	fio_run "${LOOP[gp2]}" "$WORK/f.json" randwrite 16k 32 --runtime=$((CREDITS / 2700 * 2 + 5)) \
		--write_iops_log="$WORK/iops" --log_avg_msec=250
	[ "$(stat_of gp2 credits_outs)" -ge 1 ] || die "gp2's credits did not run out"
	# from the first write (the kernel reads the device when it is
	# attached) to the moment the model's bucket ran out, both realtime
	out=$(($(stat_of gp2 start_realtime_ns) + $(stat_of gp2 credits_first_out_ns)))
	stop gp2
	first=$("$PGDISK" log --records "$WORK/gp2.req" | awk '$2 == "write" { print $3; exit }')
	[ -n "$first" ] || die "no write in gp2's request log"
	add credits_model "$(echo "($out - $first) / 1000000000" | bc -l)"
	# fio's log: msec, IOPS over 250 ms; the step after the last one above
	# the middle of burst and baseline (a stall of the machine may dip
	# below it before)
	add credits_fio "$(awk -F, '$2 + 0 > 1650 { t = $1 } END { printf "%.3f", (t + 250) / 1000 }' "$WORK"/iops_iops*.log)"
	add credits_after "$(awk -F, -v t=$((CREDITS / 2700 * 1000 + 3000)) '$1 + 0 > t { s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }' "$WORK"/iops_iops*.log)"
	# the formula at the burst rate this machine delivered (fio's IOPS
	# until the credits ran out)
	add credits_rate "$(awk -F, -v t="$(last_of "${RES[credits_fio]}")" '$1 / 1000 < t - 0.25 && $1 > 500 { s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }' "$WORK"/iops_iops*.log)"
	rm -f "$WORK"/iops_iops*.log
	progress "round $r: credits out after $(last_of "${RES[credits_model]}") s (model)," \
		"$(last_of "${RES[credits_fio]}") s (fio), then $(last_of "${RES[credits_after]}") IOPS"

	# pgdisk's cost: model none against the bare loop device, A B C A B C
	for pair in "randwrite 16k 32 iops" "write 1m 8 bw_bytes"; do
		read -r rw bs qd field <<<"$pair"
		fio_run "${LOOP[bare-pgdisk]}" "$WORK/f.json" "$rw" "$bs" "$qd"
		add "ovh_$rw" "$(jget "$WORK/f.json" ".jobs[0].write.$field")"
		fio_run "$BARE" "$WORK/f.json" "$rw" "$bs" "$qd"
		add "bare_$rw" "$(jget "$WORK/f.json" ".jobs[0].write.$field")"
		fio_run "${LOOP[none-nort]}" "$WORK/f.json" "$rw" "$bs" "$qd"
		add "nort_$rw" "$(jget "$WORK/f.json" ".jobs[0].write.$field")"
		progress "round $r: $rw $bs: pgdisk none $(last_of "${RES[ovh_$rw]}"), bare" \
			"$(last_of "${RES[bare_$rw]}"), none without real-time $(last_of "${RES[nort_$rw]}")"
	done
done

m() { median "${RES[$1]}"; }
ratio() { echo "$1 / $2" | bc -l; }
MEDIAN_US=$(stat_of gp3 cloud_latency_us)
BURST=$(echo "$CREDITS / (3000 - 300)" | bc -l)
echo
echo "pgdisk's capped volumes through a loop device (direct I/O, elevator none), fio;"
echo "medians of $ROUNDS round(s) of ${SECONDS_RUN} s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %14s %14s %8s\n' check configured measured ratio
printf '%-34s %9d IOPS %9.1f IOPS %8.3f\n' "gp3 16k randwrite QD32" 3000 "$(m iops)" "$(ratio "$(m iops)" 3000)"
printf '%-34s %14s %14.3f\n' "  share held back by the IOPS cap" - "$(m iops_held)"
printf '%-34s %7d MiB/s %7.1f MiB/s %8.3f\n' "gp3 1M write QD8" 125 "$(m mib_s)" "$(ratio "$(m mib_s)" 125)"
printf '%-34s %7d MiB/s %7.2f MiB/s %8.3f\n' "cloud 100 IOPS 8 MiB/s: 4k write QD32" 8 "$(m seq4k)" "$(ratio "$(m seq4k)" 8)"
printf '%-34s %14s %14.3f\n' "  operations per 256 KiB" 1 "$(m seq4k_ops_per_256k)"
printf '%-34s %14s %14.1f\n' "  KiB per request reaching pgdisk" - "$(m seq4k_req_kib)"
printf '%-34s %14s %14s\n' "  held back by IOPS / throughput" "0 / -" "$(m seq4k_iops_held) / $(m seq4k_tput_held)"
RT=$(echo "$(m qd1_fixed) - 1000" | bc -l)
NET=$(echo "$(m qd1) - $RT" | bc -l)
printf '%-34s %11.0f us %11.0f us %8.3f\n' "gp3 16k randwrite QD1, p50" "$MEDIAN_US" "$(m qd1)" "$(ratio "$(m qd1)" "$MEDIAN_US")"
RESP=$(echo "$(stat_of lat response_ns_p50) / 1000" | bc -l)
printf '%-34s %11.0f us %11.0f us %8.3f\n' "  the model's median response" "$MEDIAN_US" "$RESP" "$(ratio "$RESP" "$MEDIAN_US")"
printf '%-34s %11.0f us %11.0f us\n' "  a fixed 1 ms volume, p50" 1000 "$(m qd1_fixed)"
printf '%-34s %11.0f us %11.0f us %8.3f\n' "  net of its round trip" "$MEDIAN_US" "$NET" "$(ratio "$NET" "$MEDIAN_US")"
printf '%-34s %12.2f s %12.2f s %8.3f\n' "gp2:100, $CREDITS credits: run out (model)" "$BURST" "$(m credits_model)" "$(ratio "$(m credits_model)" "$BURST")"
printf '%-34s %12.2f s %12.2f s %8.3f\n' "  run out (fio, 250 ms steps)" "$BURST" "$(m credits_fio)" "$(ratio "$(m credits_fio)" "$BURST")"
AT_RATE=$(echo "$CREDITS / ($(m credits_rate) - 300)" | bc -l)
printf '%-34s %12.2f s %12.2f s %8.3f\n' "  (model) at the burst fio got" "$AT_RATE" "$(m credits_model)" "$(ratio "$(m credits_model)" "$AT_RATE")"
printf '%-34s %9d IOPS %9.1f IOPS %8.3f\n' "  burst fio got" 3000 "$(m credits_rate)" "$(ratio "$(m credits_rate)" 3000)"
printf '%-34s %9d IOPS %9.1f IOPS %8.3f\n' "  then" 300 "$(m credits_after)" "$(ratio "$(m credits_after)" 300)"
echo
echo "pgdisk's cost, model none against the bare loop device on the same tmpfs image:"
printf '%-34s %14s %14s %14s %8s %8s\n' case bare none "none, no rt" ratio "no rt"
printf '%-34s %9.0f IOPS %9.0f IOPS %9.0f IOPS %8.3f %8.3f\n' "16k randwrite QD32" "$(m bare_randwrite)" \
	"$(m ovh_randwrite)" "$(m nort_randwrite)" "$(ratio "$(m ovh_randwrite)" "$(m bare_randwrite)")" \
	"$(ratio "$(m nort_randwrite)" "$(m bare_randwrite)")"
printf '%-34s %8.1f MiB/s %8.1f MiB/s %8.1f MiB/s %8.3f %8.3f\n' "1M write QD8" \
	"$(echo "$(m bare_write) / 1048576" | bc -l)" "$(echo "$(m ovh_write) / 1048576" | bc -l)" \
	"$(echo "$(m nort_write) / 1048576" | bc -l)" "$(ratio "$(m ovh_write)" "$(m bare_write)")" \
	"$(ratio "$(m nort_write)" "$(m bare_write)")"
for n in gp3 small lat bare-pgdisk none-nort; do
	echo "$n: replies late p50 $(stat_of $n late_ns_p50) ns, p99 $(stat_of $n late_ns_p99) ns," \
		"max $(stat_of $n late_ns_max) ns; threads $(stat_of $n sched_session), $(stat_of $n sched_completion)"
done
