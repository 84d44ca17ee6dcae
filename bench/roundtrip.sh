#!/bin/bash
# roundtrip.sh -- what one FUSE round trip costs: CALLERS processes call
# statvfs(2) on the mount in a loop (each call one STATFS request, which
# the kernel never caches), through pgiofs with each set of options and on
# the backing directory itself (native), interleaved native A B native A B
# ... so that a drift of the machine weighs on every side alike.
#
# Prints every sample, then per side the median time per call (the mean
# over the callers of each one's time per call), calls per second over all
# callers and the ratio to the first pgiofs side.  It measures and prints;
# nothing is asserted.  Progress on stderr, results on stdout; exit 0 when
# every sample ran, 1 on an error.  Needs root (mounts); removes what it
# made.  With --uring it turns the kernel's FUSE over io_uring switch on
# for its run and puts it back at exit.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=roundtrip.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=5
CALLERS=1
CALLS=20000
SIDES=("-o fuse.uring=no" "-o fuse.uring=yes")
SW=/sys/module/fuse/parameters/enable_uring
URING=0

usage() {
	cat <<EOF
usage: bench/roundtrip.sh [--rounds N] [--callers N] [--calls N] [--uring] [--side "PGIOFS ARGS"]...

Time CALLERS parallel loops of CALLS statvfs(2) each on a pgiofs mount with
each set of options (default sides: ${SIDES[*]/#/[}]) and on the backing
directory.

  --rounds N   samples per side, interleaved (default $ROUNDS, 1..50)
  --callers N  parallel callers (default $CALLERS, 1..64)
  --calls N    calls per caller (default $CALLS, 100..10000000)
  --uring      set $SW to Y for the run (put back at exit)
  --side ARGS  a side's pgiofs options; give it once per side (replaces the defaults)
EOF
}

sides=()
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) range --rounds "${2:-}" 1 50 && ROUNDS=$2 && shift 2 ;;
	--callers) range --callers "${2:-}" 1 64 && CALLERS=$2 && shift 2 ;;
	--calls) range --calls "${2:-}" 100 10000000 && CALLS=$2 && shift 2 ;;
	--uring) URING=1 && shift ;;
	--side) [ $# -ge 2 ] || die "--side needs its options" && sides+=("$2") && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown argument \"$1\"" ;;
	esac
done
[ ${#sides[@]} -gt 0 ] && SIDES=("${sides[@]}")
[ "$(id -u)" -eq 0 ] || die "needs root (it mounts pgiofs)"
[ -x "$PGIOFS" ] || die "$PGIOFS is missing: run make"
if [ "$URING" = 1 ]; then
	[ -e "$SW" ] || die "--uring: the kernel has no FUSE over io_uring ($SW is missing)"
	OLD_SW=$(cat "$SW")
fi

W=$(mktemp -d /var/tmp/pgiofs-roundtrip.XXXXXX) || die "cannot make a working directory"
cleanup() {
	unmount "$W/m" 2>/dev/null
	rm -rf "$W"
	[ -n "${OLD_SW:-}" ] && echo "$OLD_SW" >"$SW"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$W/b" "$W/m"
[ "$URING" = 1 ] && echo Y >"$SW"

# loops DIR -- microseconds per call, the mean over the callers.
loops() {
	local i
	for ((i = 0; i < CALLERS; i++)); do
		python3 -c 'import os, sys, time
n = int(sys.argv[2]); d = sys.argv[1]
for i in range(min(n, 1000)): os.statvfs(d)
t = time.perf_counter()
for i in range(n): os.statvfs(d)
print((time.perf_counter() - t) / n * 1e6)' "$1" "$CALLS" &
	done | awk '{ s += $1 } END { printf "%.2f", s / NR }'
	wait
}

# sample ARGS -- microseconds per call through a mount with ARGS.
sample() {
	local t
	# shellcheck disable=SC2086 # ARGS are words
	"$PGIOFS" $1 "$W/b" "$W/m" 2>"$W/err" || die "pgiofs $1 failed: $(cat "$W/err")"
	t=$(loops "$W/m")
	unmount "$W/m"
	echo "$t"
}

declare -A times
for ((round = 1; round <= ROUNDS; round++)); do
	t=$(loops "$W/b")
	times[native]="${times[native]:-} $t"
	progress "round $round, native: $t us"
	for ((s = 0; s < ${#SIDES[@]}; s++)); do
		t=$(sample "${SIDES[$s]}")
		times[$s]="${times[$s]:-} $t"
		progress "round $round, side $((s + 1)) (${SIDES[$s]}): $t us"
	done
done
echo "$CALLERS callers x $CALLS statvfs(2), $ROUNDS rounds; $SW = $(cat "$SW" 2>/dev/null || echo absent)"
row() {
	printf '%-36s median %8.2f us/call  %9.0f calls/s  ratio %6.3f  (samples:%s)\n' "$1" "$2" \
		"$(awk -v c="$CALLERS" -v t="$2" 'BEGIN { print c * 1e6 / t }')" \
		"$(awk -v a="$2" -v b="$3" 'BEGIN { print a / b }')" "$4"
}
m0=$(median "${times[0]}")
row native "$(median "${times[native]}")" "$m0" "${times[native]}"
for ((s = 0; s < ${#SIDES[@]}; s++)); do
	row "${SIDES[$s]}" "$(median "${times[$s]}")" "$m0" "${times[$s]}"
done
