#!/bin/bash
# stats_overhead.sh -- what counting every request costs a bulk import:
# `pgbench -i -s SCALE` (plus a final CHECKPOINT) on PostgreSQL 15 on pgiofs
# with `[stats] enabled = yes` against the same with `no`.
#
# Samples are interleaved in ABBA order (on, off, off, on, ...) so that a
# drift of the machine weighs on both sides alike; each starts from a copy
# of one cluster made by initdb (on the native file system, outside the
# timing) in a fresh backing directory.  Prints every sample, the median of
# each side, their ratio on/off (the issue's target: under 1.02) and the
# median of the per-round ratios, and the table of `pgiofs stat` after the
# last sample with accounting (how many requests were counted).
#
# It measures and prints; no timing is asserted.  Progress on stderr,
# results on stdout; exit 0 when every sample ran, 1 on an error, 2 when
# interrupted.  Servers, mounts and directories it made are removed at exit.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=stats_overhead.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SCALE=20
DIR=/var/tmp
PGIOFS_ARGS=""

usage() {
	cat <<EOF
usage: bench/stats_overhead.sh [options]

Time \`pgbench -i -s SCALE\` on pgiofs with and without statistics
([stats] enabled = yes / no), interleaved.  Needs root.

  --rounds N          rounds of 2 samples per side, ABBA (default $ROUNDS, 1..50)
  --scale N           pgbench scale factor (default $SCALE, 1..10000)
  --dir DIR           parent of the working directory (default $DIR)
  --pgiofs-args ARGS  extra pgiofs options for both sides, e.g. "--profile dbaware"
  -h, --help          this text

Environment: PGIOFS (default bin/pgiofs), PGBIN (PostgreSQL binaries).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 50; ROUNDS=$2; shift 2 ;;
		--scale) [ $# -ge 2 ] || die "--scale needs a value"; range --scale "$2" 1 10000; SCALE=$2; shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
read -r -a PGIOFS_ARGV <<<"$PGIOFS_ARGS"

[ "$(id -u)" -eq 0 ] || die "must run as root (it mounts pgiofs with -o allow_other and runs PostgreSQL as postgres)"
id postgres >/dev/null 2>&1 || die "no postgres user: run scripts/install-deps.sh"
[ -x "$PGBIN/pgbench" ] || die "PostgreSQL 15 binaries not found in $PGBIN"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"

WORK=""
MNT=""
PM_PID=""

cleanup() {
	trap - EXIT INT TERM
	kill_postgres "$PM_PID"
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "stats_overhead.sh: interrupted" >&2; exit 2' INT TERM

WORK=$(mktemp -d "$DIR/pgiofs-stats-overhead.XXXXXX") || die "cannot create a directory in $DIR"
chmod 755 "$WORK"
mkdir "$WORK/logs" "$WORK/sock" "$WORK/mnt"
chown postgres: "$WORK/sock" "$WORK/logs"
SOCK=$WORK/sock
MNT=$WORK/mnt

progress "initdb (once, native; every sample starts from a copy)"
mkdir "$WORK/template" && chown postgres: "$WORK/template"
"${AS_PG[@]}" "$PGBIN/initdb" -D "$WORK/template/data" -U postgres -A trust -E UTF8 --locale=C \
	--no-instructions >"$WORK/logs/initdb.log" 2>&1 || fail_log "initdb failed" "$WORK/logs/initdb.log"

declare -A TIMES
# sample on|off ROUND -- one timed import with statistics on or off
sample() {
	local kind=$1 round=$2 data port log out t0 t1 secs
	rm -rf -- "$WORK/backing"
	cp -a "$WORK/template" "$WORK/backing" || die "cannot copy the cluster"
	"$PGIOFS" -o allow_other "${PGIOFS_ARGV[@]}" --set "stats.enabled=$([ "$kind" = on ] && echo yes || echo no)" \
		"$WORK/backing" "$MNT" || die "pgiofs failed"
	data=$MNT/data
	port=$(free_port)
	cat >>"$data/postgresql.conf" <<-EOF
		listen_addresses = ''
		port = $port
		unix_socket_directories = '$SOCK'
	EOF
	log=$WORK/logs/$kind.$round.server.log
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$data" -l "$log" -w -t 300 start >/dev/null 2>&1 ||
		fail_log "pg_ctl start failed" "$log"
	PM_PID=$(head -n 1 "$data/postmaster.pid")
	progress "round $round stats $kind: pgbench -i -s $SCALE"
	out=$WORK/logs/$kind.$round.import.log
	t0=$(now)
	"${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$port" -i -s "$SCALE" -q postgres >"$out" 2>&1 ||
		fail_log "pgbench -i failed" "$out"
	"${AS_PG[@]}" "$PGBIN/psql" -X -q -h "$SOCK" -p "$port" -d postgres -c CHECKPOINT >>"$out" 2>&1 ||
		fail_log "CHECKPOINT failed" "$out"
	t1=$(now)
	secs=$(echo "$t1 - $t0" | bc -l)
	TIMES[$kind]+="$secs "
	printf 'round %d  stats %-3s  import %7.2f s\n' "$round" "$kind" "$secs"
	[ "$kind" = on ] && "$PGIOFS" stat "$MNT" >"$WORK/last_stat.txt" 2>&1
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$data" -w -t 300 -m fast stop >/dev/null 2>&1 ||
		fail_log "pg_ctl stop failed" "$log"
	PM_PID=""
	unmount "$MNT"
}

RATIOS=""
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="on off"; else order="off on"; fi
	for k in $order; do sample "$k" "$r"; done
	# the two samples of a round ran back to back: their ratio is the
	# least disturbed by whatever else the machine does
	RATIOS+="$(echo "$(last_of "${TIMES[on]}") / $(last_of "${TIMES[off]}")" | bc -l) "
done

on=$(median "${TIMES[on]}")
off=$(median "${TIMES[off]}")
echo
printf 'pgbench -i -s %d, %d samples per side (median): stats on %.2f s, off %.2f s\n' \
	"$SCALE" "$ROUNDS" "$on" "$off"
printf 'ratio of the medians on/off %.4f (%+.2f%%; target: under +2%%)\n' \
	"$(echo "$on / $off" | bc -l)" "$(echo "($on / $off - 1) * 100" | bc -l)"
rr=$(median "$RATIOS")
printf 'median of the per-round ratios on/off %.4f (%+.2f%%)\n' "$rr" "$(echo "($rr - 1) * 100" | bc -l)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes samples noisy)"
echo
echo "pgiofs stat after the last sample with statistics:"
cat "$WORK/last_stat.txt"
