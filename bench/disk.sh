#!/bin/bash
# disk.sh -- pgdisk's validation figures: what a loop device with direct I/O
# on pgdisk's disk delivers, against what its model predicts.
#
# Two pgdisk instances run side by side, the 2004 hdd (the defaults: 54 MB/s,
# 8.5 ms average seek, 7200 rpm) and an ssd (--ssd-args, default 500 MB/s and
# 100 us), each under a loop device whose elevator is "none" (requests reach
# pgdisk in the order they were issued).  Every round runs each case once,
# interleaved (hdd and ssd cases alternate); the summary gives each case's
# median over the rounds, the model's prediction and their ratio:
#
#   seq  QDn   sequential 1 MiB reads, n in flight: seq_mb_s (hdd); for the
#              ssd, n MiB per (latency + transfer), at most seq_mb_s
#   seq  RA    sequential reads of the device through its page cache, the
#              kernel's readahead issuing the requests (as `hdparm -t` and a
#              plain `dd` read), predicted like seq QD2
#   rand QDn   random 8 KiB reads over the whole disk: 1 / (seek_ms + half a
#              revolution + transfer) for the hdd (its one head serves them
#              one at a time, whatever n); min(1 / transfer, n / (latency +
#              transfer)) for the ssd
#
# With --elevators, random 8 KiB reads 32 at a time on the hdd under each
# kernel elevator (none, mq-deadline, bfq, kyber), IOPS and ratio to none:
# the elevators hold the requests pgdisk has not taken yet and reorder them
# by position, which the modelled head's seeks reward.
#
# The "seeks" column is the modelled seek time per sample (median, ms): a
# sequential case seeks only back to its start unless the requests reached
# pgdisk out of order (io_uring issues more than two at once from several
# threads, and elevator none keeps whatever order they arrive in).
#
# It measures and prints, nothing more: no timing is ever asserted.  Figures
# taken while other work runs on the machine are noisy in the cases where
# pgdisk's queue runs dry (queue depth 1, the fast ssd); the hdd cases with
# requests waiting are modelled time.  Progress goes to stderr, results to
# stdout.  Exit 0 when every sample ran, 1 on an error, 2 when interrupted.
# Everything it started (loop devices, pgdisk, directories) is removed at
# exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGDISK=${PGDISK:-$TOP/bin/pgdisk}
HELPER_DIO=${HELPER_DIO:-$TOP/build/release/tests/disk/helper_dio}
ME=disk.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SEQ_MB=128
RAND_N=300
DIR=/var/tmp
SSD_ARGS="--set seq_mb_s=500 --set ssd_latency_us=100"
ELEVATORS=0

usage() {
	cat <<EOF
usage: bench/disk.sh [options]

pgdisk's modelled hdd and ssd through a loop device, measured against the
model's prediction, interleaved.  Needs root.

  --rounds N        rounds of samples (default $ROUNDS, 1..100)
  --quick           1 round, 64 MiB sequential, 150 random reads
  --elevators       also: random reads 32 at a time on the hdd under each
                    kernel elevator
  --ssd-args ARGS   pgdisk options of the ssd (default "$SSD_ARGS")
  --dir DIR         parent of the working directory (default $DIR)
  -h, --help        this text

Environment: PGDISK (default bin/pgdisk), HELPER_DIO (default
build/release/tests/disk/helper_dio, built by make).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--quick) ROUNDS=1 SEQ_MB=64 RAND_N=150; shift ;;
		--elevators) ELEVATORS=1; shift ;;
		--ssd-args) [ $# -ge 2 ] || die "--ssd-args needs a value"; SSD_ARGS=$2; shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
read -r -a SSD_ARGV <<<"$SSD_ARGS"

[ "$(id -u)" -eq 0 ] || die "must run as root: pgdisk and losetup need it (try: sudo $0${*:+ $*})"
[ -x "$PGDISK" ] || die "$PGDISK not found: run make"
[ -x "$HELPER_DIO" ] || die "$HELPER_DIO not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"

WORK="" LOOPS=() PIDS=() MNTS=()
cleanup() {
	trap - EXIT INT TERM
	pgdisk_teardown
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM

WORK=$(mktemp -d "$DIR/pgdisk-bench.XXXXXX") || die "cannot create a directory in $DIR"

# start NAME ARGS... -- pgdisk NAME on a 1 GiB image, a loop device on it;
# sets LOOP_<NAME> and STATS_<NAME>
declare -A LOOP STATS
start() {
	local name=$1 pid l
	shift
	mkdir "$WORK/$name"
	truncate -s 1G "$WORK/$name.img"
	"$PGDISK" "$@" "$WORK/$name.img" "$WORK/$name" || die "pgdisk $* failed"
	MNTS+=("$WORK/$name")
	pid=$(pgrep -f -- " $WORK/$name\$")
	PIDS+=("$pid")
	l=$(losetup --direct-io=on --find --show "$WORK/$name/disk") || die "losetup failed"
	LOOPS+=("$l")
	echo none >"/sys/block/${l#/dev/}/queue/scheduler" || die "$l: cannot set elevator none"
	LOOP[$name]=$l
	STATS[$name]=$WORK/$name/stats
}

setting() { awk -v k="$2" '$1 == k { print $2 }' "${STATS[$1]}"; }

start hdd
start ssd --model ssd "${SSD_ARGV[@]}"

# predict MODEL KIND QD -- the model's figure (MB/s for seq, IOPS for rand)
predict() {
	local m=$1
	awk -v kind="$2" -v qd="$3" -v model="$(setting "$m" model)" -v seq="$(setting "$m" seq_mb_s)" \
		-v seek="$(setting "$m" seek_ms)" -v rpm="$(setting "$m" rpm)" \
		-v lat="$(setting "$m" ssd_latency_us)" 'BEGIN {
		if (kind == "seq") { b = 1048576 } else { b = 8192 }
		xfer = b / (seq * 1e6)                  # seconds
		if (model == "hdd") {
			if (kind == "seq") print seq
			else print 1 / (seek / 1e3 + 30 / rpm + xfer)
		} else {
			t = qd / (lat / 1e6 + xfer); if (t > 1 / xfer) t = 1 / xfer
			if (kind == "seq") print t * b / 1e6; else print t
		}
	}'
}

declare -A RES SEEKS
CASES=()
# sample NAME KIND QD ROUND -- one measurement (QD RA: buffered, readahead)
sample() {
	local m=$1 kind=$2 qd=$3 key="$1 $2 ${3/#[0-9]/QD$3}" out v s0
	key=${key/QDRA/RA}
	s0=$(setting "$m" seek_ns)
	if [ "$qd" = RA ]; then
		blockdev --flushbufs "${LOOP[$m]}"
		v=$(dd if="${LOOP[$m]}" of=/dev/null bs=1M count="$SEQ_MB" 2>&1 |
			awk '/copied/ { print $(NF - 1) * ($NF == "GB/s" ? 1000 : 1) }')
		[ -n "$v" ] || die "$key failed"
		# leave no cached pages behind for the direct reads that follow
		blockdev --flushbufs "${LOOP[$m]}"
	elif [ "$kind" = seq ]; then
		out=$("$HELPER_DIO" seq "${LOOP[$m]}" "$SEQ_MB" 1024 "$qd") || die "$key failed"
		v=$(echo "$out" | awk '{ print $6 }')
	else
		out=$("$HELPER_DIO" rand "${LOOP[$m]}" "$RAND_N" 8 "$qd" "$((4 + $4))") || die "$key failed"
		v=$(echo "$out" | awk '{ print $8 }')
	fi
	[ -n "${RES[$key]:-}" ] || CASES+=("$key")
	RES[$key]+="$v "
	SEEKS[$key]+="$((($(setting "$m" seek_ns) - s0) / 1000000)) "
	progress "round $4: $key: $v $([ "$kind" = seq ] && echo MB/s || echo IOPS)"
}

for ((r = 1; r <= ROUNDS; r++)); do
	sample hdd seq 1 $r
	sample ssd seq 2 $r
	sample hdd seq 2 $r
	sample ssd seq RA $r
	sample hdd seq 4 $r
	sample hdd seq RA $r
	sample ssd rand 1 $r
	sample hdd rand 1 $r
	sample ssd rand 4 $r
	sample hdd rand 4 $r
done

echo
echo "pgdisk through a loop device (direct I/O, elevator none); medians of $ROUNDS round(s)"
printf '%-16s %12s %12s %8s %8s\n' case measured model ratio seeks
for key in "${CASES[@]}"; do
	read -r m kind qd <<<"$key"
	med=$(median "${RES[$key]}")
	qd=${qd#QD}
	pred=$(predict "$m" "$kind" "${qd/RA/2}")
	unit=$([ "$kind" = seq ] && echo MB/s || echo IOPS)
	printf '%-16s %7.1f %-4s %7.1f %-4s %8.3f %5d ms\n' "$key" "$med" "$unit" "$pred" "$unit" \
		"$(echo "$med / $pred" | bc -l)" "$(median "${SEEKS[$key]}")"
done
for m in hdd ssd; do
	echo "$m: $(setting $m completed) requests, held at most $(setting $m held_max) at once," \
		"in service at most $(setting $m in_service_max), replies late by" \
		"$(awk '$1 == "late_ns_sum" { s = $2 } $1 == "completed" { n = $2 } END { printf "%.0f", n ? s / n / 1000 : 0 }' "${STATS[$m]}") us on average"
done

if [ $ELEVATORS = 1 ]; then
	declare -A EL
	# the elevators this kernel has (bfq and kyber are build options)
	ELS=$(sed 's/[][]//g' "/sys/block/${LOOP[hdd]#/dev/}/queue/scheduler")
	for ((r = 1; r <= ROUNDS; r++)); do
		for e in $ELS; do
			echo "$e" >"/sys/block/${LOOP[hdd]#/dev/}/queue/scheduler" || die "no elevator $e"
			out=$("$HELPER_DIO" rand "${LOOP[hdd]}" "$RAND_N" 8 32 "$((40 + r))") || die "$e failed"
			EL[$e]+="$(echo "$out" | awk '{ print $8 }') "
			progress "round $r: hdd rand QD32 $e: $(last_of "${EL[$e]}") IOPS"
		done
	done
	echo
	echo "hdd, random 8 KiB reads 32 at a time, by kernel elevator; medians of $ROUNDS round(s)"
	base=$(median "${EL[none]}")
	for e in $ELS; do
		printf '%-12s %7.1f IOPS %8.3f\n' "$e" "$(median "${EL[$e]}")" \
			"$(echo "$(median "${EL[$e]}") / $base" | bc -l)"
	done
fi
