#!/bin/bash
# workers.sh -- what the session loop's worker settings cost or gain: the
# time for READERS processes to read their own file through pgiofs in
# 4 KiB O_DIRECT reads (each read one FUSE round trip; the backing files
# stay in the backing page cache, so the round trips are what is timed),
# for each of several sets of pgiofs options, interleaved A B C A B C ...
# so that a drift of the machine weighs on every side alike.
#
# Prints every sample, then per side the median time, requests per second
# and the ratio to the first side.  It measures and prints; nothing is
# asserted.  Progress on stderr, results on stdout; exit 0 when every sample
# ran, 1 on an error.  Needs root (mounts); removes what it made.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=workers.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=5
READERS=4
MB=32
SIDES=("-o clone_fd=no" "-o clone_fd=yes" "-o clone_fd=no -o max_idle_threads=32")

usage() {
	cat <<EOF
usage: bench/workers.sh [--rounds N] [--readers N] [--mb N] [--side "PGIOFS ARGS"]...

Time READERS parallel readers of MB MiB each (4 KiB O_DIRECT reads) through
pgiofs with each set of options (default sides: ${SIDES[*]/#/[}]).

  --rounds N   samples per side, interleaved (default $ROUNDS, 1..50)
  --readers N  parallel readers (default $READERS, 1..64)
  --mb N       MiB each reader reads (default $MB, 1..4096)
  --side ARGS  a side's pgiofs options; give it once per side (replaces the defaults)
EOF
}

sides=()
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) range --rounds "${2:-}" 1 50 && ROUNDS=$2 && shift 2 ;;
	--readers) range --readers "${2:-}" 1 64 && READERS=$2 && shift 2 ;;
	--mb) range --mb "${2:-}" 1 4096 && MB=$2 && shift 2 ;;
	--side) [ $# -ge 2 ] || die "--side needs its options" && sides+=("$2") && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown argument \"$1\"" ;;
	esac
done
[ ${#sides[@]} -gt 0 ] && SIDES=("${sides[@]}")
[ "$(id -u)" -eq 0 ] || die "needs root (it mounts pgiofs)"
[ -x "$PGIOFS" ] || die "$PGIOFS is missing: run make"

W=$(mktemp -d /var/tmp/pgiofs-workers.XXXXXX) || die "cannot make a working directory"
cleanup() {
	unmount "$W/m" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$W/b" "$W/m"
for ((r = 0; r < READERS; r++)); do
	head -c $((MB << 20)) /dev/zero >"$W/b/f$r"
done

# sample ARGS -- seconds for the readers through a mount with ARGS.
sample() {
	local t0 t1 r
	# shellcheck disable=SC2086 # ARGS are words
	"$PGIOFS" $1 "$W/b" "$W/m" || die "pgiofs $1 failed"
	cat "$W/b"/f* >/dev/null # the backing page cache holds the files
	t0=$(now)
	for ((r = 0; r < READERS; r++)); do
		dd if="$W/m/f$r" of=/dev/null bs=4k iflag=direct status=none &
	done
	wait
	t1=$(now)
	unmount "$W/m"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

declare -A times
for ((round = 1; round <= ROUNDS; round++)); do
	for ((s = 0; s < ${#SIDES[@]}; s++)); do
		t=$(sample "${SIDES[$s]}")
		times[$s]="${times[$s]:-} $t"
		progress "round $round, side $((s + 1)) (${SIDES[$s]}): $t s"
	done
done
reqs=$((READERS * MB * 256))
echo "$READERS readers x $MB MiB in 4 KiB O_DIRECT reads ($reqs READ requests), $ROUNDS rounds"
for ((s = 0; s < ${#SIDES[@]}; s++)); do
	m=$(median "${times[$s]}")
	[ "$s" -eq 0 ] && m0=$m
	printf '%-44s median %7.3f s  %8.0f req/s  ratio %.3f  (samples:%s)\n' "${SIDES[$s]}" "$m" \
		"$(awk -v n="$reqs" -v t="$m" 'BEGIN { print n / t }')" \
		"$(awk -v a="$m" -v b="$m0" 'BEGIN { print a / b }')" "${times[$s]}"
done
