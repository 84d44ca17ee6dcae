#!/bin/bash
# commit_latency.sh -- what pgiofs adds to one commit: the latency of an
# 8 KiB write followed by fdatasync() (PostgreSQL's default
# wal_sync_method), or of an O_DSYNC write (--dsync, open_datasync), to a
# preallocated 16 MiB segment in pg_wal, on the native file system and on
# pgiofs mounts over it, without any other load.
#
# Each pgiofs cell mounts a scratch backing directory holding what pgiofs
# takes for a cluster (PG_VERSION and pg_wal), so the default configuration
# makes its WAL mount over pg_wal at start, as for a real cluster; the
# default cells are WAL mounts (passthrough, the default), `direct` and
# `cached` (files.wal_mode), and --cell NAME=ARGS adds any.  Rounds are
# interleaved (the cell order rotates each round); per cell it prints each
# sample (avg, p50, p99, p99.9 in us of COMMITS commits), then the medians
# over the rounds and their ratios to native.  A single thread commits, so
# the difference to native is the daemon's round trip and work per commit
# (with passthrough: the FSYNC only).
#
#   sudo bench/commit_latency.sh [--rounds N] [--commits N] [--dsync]
#                                [--cell NAME=ARGS]... [--dir DIR]
#
# Needs root (passthrough needs CAP_SYS_ADMIN).  Measures and prints,
# asserts nothing.  Exit 1 on error, 2 if interrupted; every mount and
# directory it made is removed at exit.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=commit_latency.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=5
COMMITS=2000
DSYNC=""
DIR=/var/tmp
CELLS=(walmount direct cached)
declare -A CELL_ARGS=([walmount]="" [direct]="--set files.wal_mode=direct"
	[cached]="--set files.wal_mode=cached")

usage() {
	cat <<EOF
usage: bench/commit_latency.sh [options]
Latency of an 8 KiB write + fdatasync (or an O_DSYNC write) to a WAL segment,
native against pgiofs cells, interleaved rounds, medians and ratios.  Needs root.
  --rounds N        rounds (default $ROUNDS, 1..100)
  --commits N       commits per sample (default $COMMITS, 100..1000000)
  --dsync           O_DSYNC writes instead of write + fdatasync
  --cell NAME=ARGS  one more pgiofs cell mounted with ARGS (repeatable)
  --dir DIR         parent of the working directory (default $DIR)
  -h, --help        this text
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--commits) [ $# -ge 2 ] || die "--commits needs a value"; range --commits "$2" 100 1000000; COMMITS=$2; shift 2 ;;
		--dsync) DSYNC=--dsync; shift ;;
		--cell)
			[ $# -ge 2 ] && [[ $2 == *=* && ${2%%=*} =~ ^[A-Za-z0-9._-]+$ ]] ||
				die "--cell wants NAME=ARGS (NAME of letters, digits, . _ -)"
			[ "${2%%=*}" != native ] || die "--cell: \"native\" is the native cell"
			CELLS+=("${2%%=*}")
			CELL_ARGS[${2%%=*}]=${2#*=}
			shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "needs root (passthrough needs CAP_SYS_ADMIN)"
[ -x "$PGIOFS" ] || die "no pgiofs at $PGIOFS (make first, or set PGIOFS)"
[ -d "$DIR" ] || die "--dir \"$DIR\": not a directory"

WORK=""
MNT=""
cleanup() {
	trap - EXIT INT TERM
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM
WORK=$(mktemp -d "$DIR/pgiofs-commitlat.XXXXXX") || die "cannot create a directory in $DIR"
PROBE=$WORK/commit_latency
cc -std=gnu11 -O2 -Wall -Wextra -D_GNU_SOURCE -o "$PROBE" "$TOP/bench/commit_latency.c" ||
	die "cannot build bench/commit_latency.c"
SEG=pg/data/pg_wal/000000010000000000000001

declare -A AVG P50 P99 P999
# sample CELL ROUND -- one sample of CELL
sample() {
	local cell=$1 round=$2 dir args out a p50 p99 p999
	rm -rf -- "$WORK/backing"
	mkdir -p "$WORK/backing/pg/data/pg_wal" "$WORK/mnt"
	echo 15 >"$WORK/backing/pg/data/PG_VERSION"
	if [ "$cell" = native ]; then
		dir=$WORK/backing
	else
		read -r -a args <<<"${CELL_ARGS[$cell]}"
		"$PGIOFS" -o allow_other "${args[@]}" "$WORK/backing" "$WORK/mnt" ||
			die "$PGIOFS ${args[*]} $WORK/backing $WORK/mnt failed"
		MNT=$WORK/mnt dir=$WORK/mnt
	fi
	out=$("$PROBE" "$dir/$SEG" "$COMMITS" $DSYNC) || die "$cell: the commits failed"
	if [ -n "$MNT" ]; then
		unmount "$MNT"
		MNT=""
	fi
	read -r a p50 p99 p999 <<<"$out"
	AVG[$cell]+="$a " P50[$cell]+="$p50 " P99[$cell]+="$p99 " P999[$cell]+="$p999 "
	printf 'round %d  %-12s avg %8.1f  p50 %8.1f  p99 %8.1f  p99.9 %8.1f us\n' "$round" "$cell" "$a" "$p50" "$p99" "$p999"
}

ALL=(native "${CELLS[@]}")
echo "commit latency: $COMMITS commits of 8 KiB per sample, $([ -n "$DSYNC" ] && echo "O_DSYNC writes" || echo "write + fdatasync"), $ROUNDS rounds"
echo "directory: $WORK ($(stat -f -c %T "$WORK")); pgiofs: $PGIOFS ($("$PGIOFS" --version 2>/dev/null | head -n 1))"
for c in "${CELLS[@]}"; do echo "cell $c: ${CELL_ARGS[$c]:-(the defaults)}"; done
echo "kernel $(uname -r), $(nproc) CPUs, load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
n=${#ALL[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	progress "round $r"
	for ((i = 0; i < n; i++)); do
		sample "${ALL[$(((i + r - 1) % n))]}" "$r"
	done
done
echo
echo "medians of $ROUNDS rounds (us), and ratios to native:"
printf '%-12s %9s %9s %9s %9s   %7s %7s %7s %7s\n' cell avg p50 p99 p99.9 avg/n p50/n p99/n p99.9/n
nat=()
for c in "${ALL[@]}"; do
	m=("$(median "${AVG[$c]}")" "$(median "${P50[$c]}")" "$(median "${P99[$c]}")" "$(median "${P999[$c]}")")
	[ "$c" = native ] && nat=("${m[@]}")
	printf '%-12s %9.1f %9.1f %9.1f %9.1f  ' "$c" "${m[@]}"
	for k in 0 1 2 3; do printf ' %7.2f' "$(echo "${m[$k]} / ${nat[$k]}" | bc -l)"; done
	echo
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
