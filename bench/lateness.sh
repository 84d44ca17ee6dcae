#!/bin/bash
# lateness.sh -- how late pgdisk releases requests when the machine is busy:
# pgdisk with daemon.realtime = no (its threads in the normal class, as
# before the setting existed) against realtime = yes (SCHED_FIFO), and
# optionally another pgdisk binary (--before: an older build), each under
# the same CPU load: --busy shell loops that never sleep, as `stress --cpu`
# runs, besides whatever else the machine is doing.
#
# Each sample starts a fresh pgdisk (--model, default gp3) on a tmpfs image,
# a loop device with direct I/O on it, the busy loops, and fio's 16 KiB
# random writes 32 at a time for --seconds; then reads the stats file:
# late_ns_p50, _p99, _p999 and _max (how much later than its modelled
# completion each reply went out; the mean from late_ns_sum / completed for
# a binary without the percentiles) and fio's IOPS.  Variants alternate
# within each round (A B A B); the summary gives medians over the rounds.
#
# It measures and prints, nothing more.  Progress on stderr, results on
# stdout.  Exit 0 when every sample ran, 1 on an error, 2 when interrupted;
# everything it started (busy loops, loop devices, pgdisk, the tmpfs,
# directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGDISK=${PGDISK:-$TOP/bin/pgdisk}
ME=lateness.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SECONDS_RUN=10
BUSY=2
BEFORE=""
MODEL_ARGS="--model gp3"
DIR=/var/tmp

usage() {
	cat <<EOF
usage: bench/lateness.sh [options]

pgdisk's late replies under CPU load: realtime = no against yes (and an
older binary), fio as the client.  Needs root and fio.

  --rounds N        rounds (default $ROUNDS, 1..20)
  --seconds S       length of each fio run (default $SECONDS_RUN, 3..600)
  --busy N          busy loops during each run (default $BUSY, 0..64)
  --before PGDISK   also this pgdisk binary (its default scheduling)
  --model-args A    pgdisk's model options (default "$MODEL_ARGS")
  --dir DIR         parent of the working directory (default $DIR)
  -h, --help        this text
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 20; ROUNDS=$2; shift 2 ;;
		--seconds) [ $# -ge 2 ] || die "--seconds needs a value"; range --seconds "$2" 3 600; SECONDS_RUN=$2; shift 2 ;;
		--busy) [ $# -ge 2 ] || die "--busy needs a value"; range --busy "$2" 0 64; BUSY=$2; shift 2 ;;
		--before) [ $# -ge 2 ] || die "--before needs a value"; BEFORE=$2; shift 2 ;;
		--model-args) [ $# -ge 2 ] || die "--model-args needs a value"; MODEL_ARGS=$2; shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
read -r -a MODEL <<<"$MODEL_ARGS"

[ "$(id -u)" -eq 0 ] || die "must run as root: pgdisk and losetup need it"
[ -x "$PGDISK" ] || die "$PGDISK not found: run make"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || die "--before \"$BEFORE\": not an executable"
command -v fio >/dev/null || die "fio not found: scripts/install-deps.sh installs it"
command -v jq >/dev/null || die "jq not found"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"

WORK="" LOOPDEV="" BUSYPIDS=() PGPID=""
cleanup() {
	local p i
	trap - EXIT INT TERM
	for p in "${BUSYPIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
	if [ -n "$WORK" ]; then
		mountpoint -q "$WORK/m" && umount "$WORK/m" 2>/dev/null
		if [ -n "$PGPID" ]; then
			for ((i = 0; i < 100; i++)); do kill -0 "$PGPID" 2>/dev/null || break; sleep 0.1; done
		fi
		mountpoint -q "$WORK/img" && umount "$WORK/img"
		rm -rf -- "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM

WORK=$(mktemp -d "$DIR/pgdisk-late.XXXXXX") || die "cannot create a directory in $DIR"
mkdir "$WORK/img" "$WORK/m"
mount -t tmpfs -o size=512M,mode=0700 pgdisk-late "$WORK/img" || die "cannot mount a tmpfs"

declare -A RES
VARIANTS=(realtime=no realtime=yes)
[ -n "$BEFORE" ] && VARIANTS+=(before)

# sample VARIANT ROUND -- one run under the busy loops
sample() {
	local v=$1 bin=$PGDISK args=() i st
	case $v in
		before) bin=$BEFORE ;;
		*) args=(--set "$v") ;;
	esac
	truncate -s 256M "$WORK/img/disk.img"
	"$bin" "${MODEL[@]}" "${args[@]}" "$WORK/img/disk.img" "$WORK/m" 2>/dev/null ||
		die "pgdisk ${MODEL[*]} ${args[*]} failed"
	PGPID=$(pgrep -f -- " $WORK/m\$")
	LOOPDEV=$(losetup --direct-io=on --find --show "$WORK/m/disk") || die "losetup failed"
	echo none >"/sys/block/${LOOPDEV#/dev/}/queue/scheduler"
	for ((i = 0; i < BUSY; i++)); do
		bash -c 'while :; do :; done' &
		BUSYPIDS+=($!)
	done
	fio --name=l --filename="$LOOPDEV" --rw=randwrite --bs=16k --iodepth=32 --ioengine=io_uring \
		--direct=1 --time_based --runtime="$SECONDS_RUN" --output-format=json \
		--output="$WORK/f.json" >/dev/null 2>"$WORK/f.err" || fail_log "fio failed" "$WORK/f.err"
	for i in "${BUSYPIDS[@]}"; do kill "$i"; done
	BUSYPIDS=()
	st=$(cat "$WORK/m/stats")
	losetup -d "$LOOPDEV"
	LOOPDEV=""
	for ((i = 0; i < 50; i++)); do umount "$WORK/m" 2>/dev/null && break; sleep 0.1; done
	for ((i = 0; i < 100; i++)); do kill -0 "$PGPID" 2>/dev/null || break; sleep 0.1; done
	PGPID=""
	rm -f "$WORK/img/disk.img"
	get() { echo "$st" | awk -v k="$1" '$1 == k { print $2 / 1000; f = 1 } END { if (!f) print "-" }'; }
	RES[$v iops]+="$(jq -r '.jobs[0].write.iops' "$WORK/f.json") "
	RES[$v mean]+="$(echo "$st" | awk '$1 == "late_ns_sum" { s = $2 } $1 == "completed" { n = $2 } END { print n ? s / n / 1000 : 0 }') "
	for k in p50 p99 p999 max; do RES[$v $k]+="$(get "late_ns_$k") "; done
	RES[$v sched]=$(echo "$st" | awk '$1 == "sched_completion" { print $2; f = 1 } END { if (!f) print "-" }')
	progress "round $2: $v: $(last_of "${RES[$v iops]}") IOPS, late mean $(last_of "${RES[$v mean]}") us," \
		"p99 $(last_of "${RES[$v p99]}") us, max $(last_of "${RES[$v max]}") us"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	for v in "${VARIANTS[@]}"; do sample "$v" "$r"; done
done

med() { [ "${RES[$1]// /}" = "${RES[$1]//[^-]/}" ] && echo - || median "${RES[$1]}"; }
echo
echo "pgdisk (${MODEL[*]}), fio 16k randwrite QD32, $BUSY busy loops; medians of $ROUNDS round(s)"
echo "of $SECONDS_RUN s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %-10s %9s %10s %10s %10s %10s %10s\n' variant threads IOPS "late mean" p50 p99 p99.9 max
for v in "${VARIANTS[@]}"; do
	printf '%-14s %-10s %9.0f' "$v" "${RES[$v sched]}" "$(med "$v iops")"
	for k in mean p50 p99 p999 max; do
		x=$(med "$v $k")
		[ "$x" = - ] && printf ' %10s' - || printf ' %7.0f us' "$x"
	done
	echo
done
