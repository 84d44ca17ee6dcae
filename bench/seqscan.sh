#!/bin/bash
# seqscan.sh -- cold sequential scan of a ~1 GB table: native against pgiofs
# with iosched readahead (iosched.ra_window_kb) 0, 128 and 512 KiB under a
# profile (default dbaware), the issue's third benchmark.
#
# One cluster is built once, natively, in a backing directory; every sample
# then scans the same table: "native" runs PostgreSQL on the backing
# directory itself, "raN" mounts pgiofs over it with -s
# iosched.ra_window_kb=N and runs PostgreSQL on the mount.  A sample stops
# the server, drops the page cache, starts it again and times
# `SELECT count(*)` without parallel workers (psql's \timing).  The samples
# are interleaved (native, ra0, ra128, ra512, native, ...) for --rounds
# rounds; the summary gives each side's median, its ratio to native's, and
# the readahead hits and waste `pgiofs stat` counted during the scan.
#
# It measures and prints, nothing more: no timing is ever asserted.
# Progress goes to stderr, results to stdout.  Exit 0 when every sample ran,
# 1 on an error, 2 when interrupted.  Everything it started (servers,
# mounts, directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=seqscan.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SIZE_MB=1024
PROFILE=dbaware
RA_LIST="0 128 512"
DIR=/var/tmp
PGIOFS_ARGS=""

usage() {
	cat <<EOF
usage: bench/seqscan.sh [options]

Cold sequential scan of one table, native against pgiofs with iosched
readahead windows of several sizes, side by side and interleaved.  Needs root.

  --rounds N          rounds of samples (default $ROUNDS, 1..100)
  --size-mb N         size of the table (default $SIZE_MB, 16..65536)
  --profile NAME      pgiofs profile (default $PROFILE)
  --ra "N N ..."      iosched.ra_window_kb values (default "$RA_LIST")
  --quick             a 256 MB table, 2 rounds
  --dir DIR           parent of the working directory (default $DIR)
  --pgiofs-args ARGS  extra pgiofs options, e.g. "-s bdi.read_ahead_kb=128"
  -h, --help          this text

Environment: PGIOFS (default bin/pgiofs), PGBIN (PostgreSQL binaries).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--size-mb) [ $# -ge 2 ] || die "--size-mb needs a value"; range --size-mb "$2" 16 65536; SIZE_MB=$2; shift 2 ;;
		--profile) [ $# -ge 2 ] || die "--profile needs a value"; PROFILE=$2; shift 2 ;;
		--ra) [ $# -ge 2 ] || die "--ra needs a value"; RA_LIST=$2; shift 2 ;;
		--quick) SIZE_MB=256 ROUNDS=2; shift ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
for ra in $RA_LIST; do range --ra "$ra" 0 16384; done
read -r -a PGIOFS_ARGV <<<"$PGIOFS_ARGS"

[ "$(id -u)" -eq 0 ] ||
	die "must run as root: it mounts pgiofs with -o allow_other, drops the page cache and runs PostgreSQL as postgres (try: sudo $0${*:+ $*})"
id postgres >/dev/null 2>&1 || die "no postgres user: run scripts/install-deps.sh"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"
[ -r /dev/fuse ] || die "/dev/fuse missing: load the fuse module (modprobe fuse)"
command -v python3 >/dev/null || die "python3 is needed to read pgiofs stat --json"

WORK="" MNT="" PM_PID=""
cleanup() {
	trap - EXIT INT TERM
	kill_postgres "$PM_PID"
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM

ra_of() { # ra_of JSON-FILE -- "hit wasted" heap readahead bytes
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["classes"]["heap"]
print(c["ra_hit_bytes"], c["ra_wasted_bytes"])' "$1"
}

# sample KIND ROUND -- one cold scan; KIND is native or raN.
declare -A SECS HIT WASTE
sample() {
	local kind=$1 round=$2 data=$WORK/backing/data out ms h0 w0 h1 w1
	out=$WORK/logs/$kind.$round.log
	if [ "$kind" != native ]; then
		MNT=$WORK/mnt
		"$PGIOFS" -o allow_other --profile "$PROFILE" -s "iosched.ra_window_kb=${kind#ra}" \
			"${PGIOFS_ARGV[@]}" "$WORK/backing" "$MNT" || die "pgiofs mount for $kind failed"
		mountpoint -q "$MNT" || die "$MNT is not a mount point after pgiofs returned"
		data=$MNT/data
	fi
	drop_caches
	start_server "$data"
	[ -n "$MNT" ] && { "$PGIOFS" stat "$MNT" --json >"$WORK/s0.json" || die "pgiofs stat failed"; }
	"${AS_PG[@]}" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -d postgres \
		-c "SET max_parallel_workers_per_gather = 0" -c '\timing on' \
		-c "SELECT count(*) FROM scan" >"$out" 2>&1 || fail_log "$kind: the scan failed" "$out"
	ms=$(awk '/^Time: / { print $2 }' "$out")
	[ -n "$ms" ] || fail_log "$kind: no timing in the scan output" "$out"
	SECS[$kind]+="$(echo "$ms / 1000" | bc -l) "
	if [ -n "$MNT" ]; then
		"$PGIOFS" stat "$MNT" --json >"$WORK/s1.json" || die "pgiofs stat failed"
		read -r h0 w0 <<<"$(ra_of "$WORK/s0.json")"
		read -r h1 w1 <<<"$(ra_of "$WORK/s1.json")"
		HIT[$kind]+="$(((h1 - h0) >> 20)) "
		WASTE[$kind]+="$(((w1 - w0) >> 20)) "
	fi
	stop_server "$data"
	if [ -n "$MNT" ]; then
		unmount "$MNT"
		MNT=""
	fi
	printf 'round %d  %-7s  %8.3f s%s\n' "$round" "$kind" "$(last_of "${SECS[$kind]}")" \
		"${HIT[$kind]:+  readahead hit $(last_of "${HIT[$kind]}") MiB, wasted $(last_of "${WASTE[$kind]}") MiB}"
}

# ---- the cluster, built once ------------------------------------------------------
WORK=$(mktemp -d "$DIR/pgiofs-seqscan.XXXXXX") || die "cannot create a directory in $DIR"
chmod 755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/sock" "$WORK/backing" "$WORK/mnt"
chown postgres: "$WORK/logs" "$WORK/sock" "$WORK/backing"
chmod 700 "$WORK/sock"
SOCK=$WORK/sock
PORT=$(free_port)
LOG=$WORK/logs/server.log

progress "initdb and a $SIZE_MB MB table"
"${AS_PG[@]}" "$PGBIN/initdb" -D "$WORK/backing/data" -U postgres -A trust -E UTF8 --locale=C \
	--no-instructions >"$WORK/logs/initdb.log" 2>&1 || fail_log "initdb failed" "$WORK/logs/initdb.log"
cat >>"$WORK/backing/data/postgresql.conf" <<EOF
# bench/seqscan.sh: a private socket, defaults otherwise
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SOCK'
EOF
start_server "$WORK/backing/data"
# about 10240 rows of ~100 bytes per MB
"${AS_PG[@]}" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -d postgres \
	-c "CREATE TABLE scan AS SELECT g AS id, md5(g::text) || md5((g + 1)::text) AS pad
	    FROM generate_series(1, $((SIZE_MB * 10240))) g" \
	-c "VACUUM (FREEZE, ANALYZE) scan" -c CHECKPOINT >"$WORK/logs/load.log" 2>&1 ||
	fail_log "loading the table failed" "$WORK/logs/load.log"
size=$("${AS_PG[@]}" "$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT" -d postgres \
	-c "SELECT pg_size_pretty(pg_relation_size('scan'))")
stop_server "$WORK/backing/data"

fsinfo=$(df -PT "$WORK" | awk 'NR == 2 { print $2 " on " $1 }')
echo "pgiofs cold sequential scan: PostgreSQL $("$PGBIN/postgres" -V | awk '{ print $3 }'), table of $size," \
	"$ROUNDS rounds, profile $PROFILE, iosched.ra_window_kb in: $RA_LIST${PGIOFS_ARGS:+, $PGIOFS_ARGS}"
echo "backing: $WORK ($fsinfo); kernel $(uname -r), $(nproc) CPUs"
echo
echo "raw samples:"
KINDS="native"
for ra in $RA_LIST; do KINDS+=" ra$ra"; done
for ((r = 1; r <= ROUNDS; r++)); do
	for k in $KINDS; do sample "$k" "$r"; done
done

echo
echo "medians of $ROUNDS rounds:"
nat=$(median "${SECS[native]}")
for k in $KINDS; do
	med=$(median "${SECS[$k]}")
	printf '%-7s %8.3f s  ratio to native %.2f%s\n' "$k" "$med" "$(echo "$med / $nat" | bc -l)" \
		"${HIT[$k]:+  readahead hit $(median "${HIT[$k]}") MiB, wasted $(median "${WASTE[$k]}") MiB}"
done
progress "done"
exit 0
