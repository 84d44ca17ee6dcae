#!/bin/bash
# passthrough.sh -- PostgreSQL 15 on pgiofs against PostgreSQL 15 on the
# native file system underneath it.
#
# Runs the same three measurements, interleaved native, pgiofs, native,
# pgiofs, ... for --rounds rounds, every cluster in a fresh directory on the
# same file system (--dir), and prints the median of each side and the
# pgiofs/native ratio next to two targets: the first ones (import <= 1.25,
# tps >= 0.80, cold scan <= 1.20) and the stricter ones set with WAL out of
# the page cache (import <= 1.10, tps >= 0.95, cold scan <= 0.9).  More
# pgiofs cells with other options (--cell NAME=ARGS) run in the same rounds,
# each against the same native samples, and with --floorfs a cell
# "floorfs": bench/floorfs.c (a minimal FUSE passthrough, no tuning) over
# the data directory with pg_wal on the native file system, a reference for
# what FUSE costs the relation files alone, with --floorfs-wal a cell
# "floorwal": floorfs over all of it, pg_wal included, the least a FUSE
# daemon that sees the commits' writes and syncs costs, and with --wal-native a cell
# "walnative": pgiofs the same way (pg_wal on the native file system), what
# the tps lose to WAL's passage through the mount; --wal-sync-method sets
# PostgreSQL's wal_sync_method in every cluster, native included:
#   import   `pgbench -i -s SCALE` plus a final CHECKPOINT, wall-clock seconds
#   tps      `pgbench -c 4 -j 2 -T DURATION`, tps without connection time
#   seqscan  `SELECT count(*) FROM pgbench_accounts` on cold caches (after a
#            CHECKPOINT, a server restart and drop_caches), parallel workers
#            off, time as measured by psql's \timing
# pgiofs runs as root with -o allow_other; the clusters belong to postgres
# and use the PostgreSQL defaults except for the connection settings.
#
# It measures and prints, nothing more: no timing is ever asserted.  Progress
# goes to stderr, results to stdout.  Exit 0 when every sample ran, 1 on an
# error, 2 when interrupted.  Everything it started (servers, mounts,
# directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=passthrough.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SCALE=50
DURATION=30
CLIENTS=4
JOBS=2
DIR=/var/tmp
PGIOFS_ARGS=""
METHOD=fdatasync
KINDS=(native pgiofs)
declare -A CELL_ARGS
ACCOUNT=0
WALSYNC=0
FLOOR=0
FLOORWAL=0
WALNATIVE=0

usage() {
	cat <<EOF
usage: bench/passthrough.sh [options]

Benchmark PostgreSQL 15 on pgiofs against the native file system, side by
side and interleaved (native, pgiofs, native, pgiofs, ...).  Needs root.

  --rounds N          rounds of native + pgiofs samples (default $ROUNDS, 1..100)
  --scale N           pgbench scale factor for the import (default $SCALE, 1..10000)
  --duration S        seconds of pgbench -c $CLIENTS -j $JOBS per sample (default $DURATION, 1..3600)
  --quick             scale 5, 10 s, 2 rounds (what \`make demo\` runs)
  --dir DIR           parent of the working directory, on the file system
                      to measure (default $DIR)
  --pgiofs-args ARGS  extra pgiofs options, e.g. "--config config/pgiofs.conf"
  --cell NAME=ARGS    one more pgiofs cell with ARGS besides --pgiofs-args
                      (repeatable), e.g. --cell "ns=--set fuse.time_gran_ns=1"
  --wal-sync-method M PostgreSQL's wal_sync_method in every cluster (default $METHOD)
  --floorfs           one more cell, "floorfs": bench/floorfs.c (a minimal
                      FUSE passthrough) over the data directory, pg_wal on
                      the native file system (WAL never crosses FUSE)
  --floorfs-wal       one more cell, "floorwal": bench/floorfs.c over the
                      data directory, pg_wal included (every WAL write and
                      sync crosses FUSE, through the write-back cache)
  --wal-native        one more cell, "walnative": pgiofs as the pgiofs cell
                      over the data directory, pg_wal on the native file
                      system (initdb --waldir): what the relation files cost
                      alone, and the rest of the pgiofs cell's what WAL's
                      passage through the mount costs
  --account           also the time account of every import and every tps
                      sample (bench/account.bt under bpftrace: CPU, waits
                      for a CPU, blocked time by cause, FUSE requests),
                      medians per side and phase at the end
  --walsync           also what the transactions' WAL syncs wait for during
                      every tps sample (bench/walsync.bt under bpftrace:
                      PostgreSQL's fdatasync calls, the WAL mount's FSYNC
                      requests, the daemon's own fdatasync calls), medians
                      per side at the end
  -h, --help          this text

Environment: PGIOFS (default bin/pgiofs), PGBIN (PostgreSQL binaries).
EOF
}

# add_cell NAME=ARGS -- one more pgiofs cell.
add_cell() {
	[[ $1 == *=* && ${1%%=*} =~ ^[A-Za-z0-9._-]+$ ]] || die "--cell wants NAME=ARGS (NAME of letters, digits, . _ -), not \"$1\""
	case ${1%%=*} in native | pgiofs | floorfs | floorwal | walnative) die "--cell: \"${1%%=*}\" is taken" ;; esac
	KINDS+=("${1%%=*}")
	CELL_ARGS[${1%%=*}]=${1#*=}
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--rounds=*) range --rounds "${1#*=}" 1 100; ROUNDS=${1#*=}; shift ;;
		--scale) [ $# -ge 2 ] || die "--scale needs a value"; range --scale "$2" 1 10000; SCALE=$2; shift 2 ;;
		--scale=*) range --scale "${1#*=}" 1 10000; SCALE=${1#*=}; shift ;;
		--duration) [ $# -ge 2 ] || die "--duration needs a value"; range --duration "$2" 1 3600; DURATION=$2; shift 2 ;;
		--duration=*) range --duration "${1#*=}" 1 3600; DURATION=${1#*=}; shift ;;
		--quick) SCALE=5 DURATION=10 ROUNDS=2; shift ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--dir=*) DIR=${1#*=}; shift ;;
		--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2; shift 2 ;;
		--pgiofs-args=*) PGIOFS_ARGS=${1#*=}; shift ;;
		--cell) [ $# -ge 2 ] || die "--cell needs NAME=ARGS"; add_cell "$2"; shift 2 ;;
		--cell=*) add_cell "${1#*=}"; shift ;;
		--wal-sync-method) [ $# -ge 2 ] || die "--wal-sync-method needs a value"; METHOD=$2; shift 2 ;;
		--wal-sync-method=*) METHOD=${1#*=}; shift ;;
		--account) ACCOUNT=1; shift ;;
		--walsync) WALSYNC=1; shift ;;
		--floorfs) FLOOR=1; shift ;;
		--floorfs-wal) FLOORWAL=1; shift ;;
		--wal-native) WALNATIVE=1; shift ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
read -r -a PGIOFS_ARGV <<<"$PGIOFS_ARGS"
case $METHOD in fdatasync | fsync | open_datasync | open_sync | fsync_writethrough) ;;
	*) die "--wal-sync-method: \"$METHOD\" is not a wal_sync_method of PostgreSQL 15" ;;
esac

[ "$(id -u)" -eq 0 ] ||
	die "must run as root: it mounts pgiofs with -o allow_other, drops the page cache (/proc/sys/vm/drop_caches) and runs PostgreSQL as the postgres user (try: sudo $0${*:+ $*})"
id postgres >/dev/null 2>&1 || die "no postgres user: run scripts/install-deps.sh"
[ -x "$PGBIN/pgbench" ] || die "PostgreSQL 15 binaries not found in $PGBIN: run scripts/install-deps.sh"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"
[ -r /dev/fuse ] || die "/dev/fuse missing: load the fuse module (modprobe fuse)"
ACG="" ACG_ROOT=""
for opt in account walsync; do
	[ "$opt" = account ] && [ "$ACCOUNT" = 0 ] && continue
	[ "$opt" = walsync ] && [ "$WALSYNC" = 0 ] && continue
	command -v bpftrace >/dev/null || die "--$opt needs bpftrace (apt-get install bpftrace)"
	need_tracefs
	ACG_ROOT=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[ -n "$ACG_ROOT" ] || die "--$opt needs a cgroup2 file system mounted (none in /proc/mounts)"
done

# ---- clean-up -----------------------------------------------------------------
WORK=""
MNT=""
DAEMON_PID=""
PM_PID=""

cleanup() {
	trap - EXIT INT TERM
	local pid
	for pid in ${ACCT_PIDS:-}; do
		kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	kill_postgres "$PM_PID"
	[ -n "$MNT" ] && unmount "$MNT"
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		sleep 1
		kill -TERM "$DAEMON_PID" 2>/dev/null
	fi
	[ -n "$WORK" ] && rm -rf -- "$WORK"
	[ -n "$ACG" ] && rmdir "$ACG" 2>/dev/null
}
trap cleanup EXIT
trap 'echo "passthrough.sh: interrupted" >&2; exit 2' INT TERM

# ---- helpers ------------------------------------------------------------------------
# account_start KIND ROUND PHASE -- with --account: the server's processes,
# the daemon and the client in a cgroup of their own, and account.bt
# counting them (and the mount's FUSE connections) over PHASE (import or
# tps) into $WORK/logs/KIND.ROUND.PHASE.account.
ACCT_PIDS="" ACCT_FILES=()
# acg_join KIND -- the server's processes and the daemon into the cgroup
# ACG (made at the first call); DEV and WAL: the mount's and its WAL mount's
# FUSE connections (0 for none and natively).
acg_join() {
	local pid
	if [ -z "$ACG" ]; then
		ACG=$ACG_ROOT/pgiofs-bench.$$
		mkdir "$ACG" || die "cannot make the cgroup $ACG"
	fi
	for pid in "$PM_PID" $(pgrep -P "$PM_PID") ${DAEMON_PID:-}; do
		echo "$pid" >"$ACG/cgroup.procs" 2>/dev/null
	done
	DEV=0 WAL=0
	if [ "$1" != native ]; then
		DEV=$(mountpoint -d "$MNT") && DEV=${DEV#*:}
		! mountpoint -q "$DATA/pg_wal" || { WAL=$(mountpoint -d "$DATA/pg_wal") && WAL=${WAL#*:}; }
	fi
}
# trace_start SCRIPT OUT ARGS... -- bpftrace SCRIPT ARGS in the background
# into OUT, once it has attached; its pid is added to ACCT_PIDS.
trace_start() {
	local script=$1 out=$2 i pid
	shift 2
	bpftrace "$script" "$@" >"$out" 2>"$out.err" &
	pid=$!
	ACCT_PIDS+=" $pid"
	for ((i = 0; i < 300; i++)); do
		grep -qs '^Attaching' "$out" && return 0
		kill -0 "$pid" 2>/dev/null || fail_log "bpftrace $script failed" "$out.err"
		sleep 0.1
	done
}
account_start() {
	local out=$WORK/logs/$1.$2.$3.account
	[ "$ACCOUNT" = 1 ] || return 0
	acg_join "$1"
	trace_start "$TOP/bench/account.bt" "$out" "$DEV" "$(stat -c %i "$ACG")" "$WAL"
	ACCT_FILES+=("$3:$1=$out")
}
# walsync_start KIND ROUND / walsync_stop KIND -- with --walsync: walsync.bt
# over the tps sample; walsync_stop adds the sample's figures to the
# WS_* arrays (averages in us, and syncs per second of the sample).
declare -A WS_PG WS_RATE WS_REQ WS_DAEMON
walsync_start() {
	[ "$WALSYNC" = 1 ] || return 0
	acg_join "$1"
	WS_OUT=$WORK/logs/$1.$2.walsync
	trace_start "$TOP/bench/walsync.bt" "$WS_OUT" "$(stat -c %i "$ACG")" "$WAL" "${DAEMON_PID:-0}"
}
# ws_field MAP FIELD -- FIELD of walsync.bt's stats() line of @MAP in WS_OUT:
# "@pg: count 33360, average 200, total 6688784"
ws_field() {
	awk -v m="@$1:" -v f="$2" '$1 == m {
		for (i = 2; i < NF; i++) if ($i == f) { v = $(i + 1); sub(",", "", v); print v } }' "$WS_OUT"
}
walsync_stop() {
	local pg
	[ "$WALSYNC" = 1 ] || return 0
	pg=$(ws_field pg count)
	[ -n "$pg" ] || fail_log "$1: bench/walsync.bt counted no fdatasync of PostgreSQL" "$WS_OUT"
	WS_PG[$1]+="$(ws_field pg average) "
	WS_RATE[$1]+="$(echo "$pg / $DURATION" | bc -l) "
	WS_LAST_REQ=$(ws_field req average) WS_LAST_DAEMON=$(ws_field daemon average)
	[ -z "$WS_LAST_REQ" ] || WS_REQ[$1]+="$WS_LAST_REQ "
	[ -z "$WS_LAST_DAEMON" ] || WS_DAEMON[$1]+="$WS_LAST_DAEMON "
}
# account_stop -- stops every bpftrace trace_start started (their maps are
# printed at SIGINT).
account_stop() {
	local pid
	for pid in $ACCT_PIDS; do
		kill -INT "$pid" && wait "$pid"
	done
	ACCT_PIDS=""
}
# in_acg CMD... -- run CMD in the traces' cgroup (without one, as is)
in_acg() {
	( [ -z "$ACG" ] || echo "$BASHPID" >"$ACG/cgroup.procs" && exec "$@" )
}
# sample KIND ROUND -- one full sample on KIND (native or pgiofs): fresh
# cluster, import, tps, cold seq scan.  Appends to the result arrays.
declare -A IMPORT TPS SEQSCAN
sample() {
	KIND=$1
	local round=$2 base t0 t1 out ms
	local waldir=()
	rm -rf -- "$WORK/native" "$WORK/backing" "$WORK/nativewal"
	if [ "$KIND" = floorfs ] || [ "$KIND" = floorwal ]; then
		mkdir -p "$WORK/backing" "$WORK/mnt"
		MNT=$WORK/mnt
		"$WORK/floorfs" "$WORK/backing" "$MNT" || die "floorfs $WORK/backing $MNT failed"
		DAEMON_PID=$(pgrep -f -- " $MNT\$" | head -n 1)
		base=$MNT
	elif [ "$KIND" != native ]; then
		local extra=()
		read -r -a extra <<<"${CELL_ARGS[$KIND]:-}"
		mkdir -p "$WORK/backing" "$WORK/mnt"
		MNT=$WORK/mnt
		"$PGIOFS" -o allow_other "${PGIOFS_ARGV[@]}" "${extra[@]}" "$WORK/backing" "$MNT" ||
			die "$PGIOFS ${PGIOFS_ARGS} ${extra[*]} $WORK/backing $MNT failed"
		mountpoint -q "$MNT" || die "$MNT is not a mount point after pgiofs returned"
		DAEMON_PID=$(pgrep -f -- " $MNT\$" | head -n 1)
		base=$MNT
	else
		mkdir -p "$WORK/native"
		base=$WORK/native
	fi
	if [ "$KIND" = floorfs ] || [ "$KIND" = walnative ]; then
		mkdir -p "$WORK/nativewal" && chown postgres: "$WORK/nativewal"
		waldir=(--waldir "$WORK/nativewal/pg_wal")
	fi
	mkdir "$base/pg" && chown postgres: "$base/pg" || die "cannot create $base/pg"
	DATA=$base/pg/data
	LOG=$WORK/logs/$KIND.$round.server.log
	PORT=$(free_port)
	PSQL=("${AS_PG[@]}" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -d postgres)

	progress "round $round $KIND: initdb"
	"${AS_PG[@]}" "$PGBIN/initdb" -D "$DATA" "${waldir[@]}" -U postgres -A trust -E UTF8 --locale=C \
		--no-instructions >"$WORK/logs/$KIND.$round.initdb.log" 2>&1 ||
		fail_log "$KIND: initdb failed" "$WORK/logs/$KIND.$round.initdb.log"
	cat >>"$DATA/postgresql.conf" <<-EOF
		# bench/passthrough.sh: a private socket, defaults otherwise
		listen_addresses = ''
		port = $PORT
		unix_socket_directories = '$SOCK'
		wal_sync_method = $METHOD
	EOF
	start_server "$DATA"

	progress "round $round $KIND: pgbench -i -s $SCALE"
	out=$WORK/logs/$KIND.$round.import.log
	account_start "$KIND" "$round" import
	t0=$(now)
	in_acg "${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -i -s "$SCALE" -q postgres >"$out" 2>&1 ||
		fail_log "$KIND: pgbench -i failed" "$out"
	in_acg "${PSQL[@]}" -c CHECKPOINT >>"$out" 2>&1 || fail_log "$KIND: CHECKPOINT failed" "$out"
	t1=$(now)
	account_stop
	IMPORT[$KIND]+="$(echo "$t1 - $t0" | bc -l) "

	progress "round $round $KIND: pgbench -c $CLIENTS -j $JOBS -T $DURATION"
	out=$WORK/logs/$KIND.$round.tps.log
	account_start "$KIND" "$round" tps
	walsync_start "$KIND" "$round"
	in_acg "${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -c "$CLIENTS" -j "$JOBS" -T "$DURATION" postgres >"$out" 2>&1 ||
		fail_log "$KIND: pgbench -T failed" "$out"
	account_stop
	walsync_stop "$KIND"
	TPS[$KIND]+="$(awk '/^tps = .*without initial connection time/ { print $3 }' "$out") "

	progress "round $round $KIND: cold seq scan"
	out=$WORK/logs/$KIND.$round.seqscan.log
	"${PSQL[@]}" -c CHECKPOINT >"$out" 2>&1 || fail_log "$KIND: CHECKPOINT failed" "$out"
	stop_server "$DATA"
	drop_caches
	start_server "$DATA"
	"${PSQL[@]}" -c "SET max_parallel_workers_per_gather = 0" -c '\timing on' \
		-c "SELECT count(*) FROM pgbench_accounts" >>"$out" 2>&1 ||
		fail_log "$KIND: seq scan failed" "$out"
	ms=$(awk '/^Time: / { print $2 }' "$out")
	[ -n "$ms" ] || fail_log "$KIND: no timing in the seq scan output" "$out"
	SEQSCAN[$KIND]+="$(echo "$ms / 1000" | bc -l) "
	stop_server "$DATA"

	printf 'round %d  %-8s  import %7.2f s  tps %8.1f  seqscan %7.3f s\n' "$round" "$KIND" \
		"$(last_of "${IMPORT[$KIND]}")" "$(last_of "${TPS[$KIND]}")" "$(last_of "${SEQSCAN[$KIND]}")"
	[ "$WALSYNC" = 0 ] || printf '          WAL syncs: %.0f/s, %.0f us each in PostgreSQL, %s us in the FSYNC request, %s us in the daemon'"'"'s fdatasync\n' \
		"$(last_of "${WS_RATE[$KIND]}")" "$(last_of "${WS_PG[$KIND]}")" "${WS_LAST_REQ:--}" "${WS_LAST_DAEMON:--}"

	if [ "$KIND" != native ]; then
		umount -R "$MNT" || die "umount -R $MNT failed" # WAL mounts first
		local i
		for ((i = 0; i < 600; i++)); do
			kill -0 "$DAEMON_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$DAEMON_PID" 2>/dev/null && die "pgiofs (pid $DAEMON_PID) still running 60 s after unmount"
		MNT="" DAEMON_PID=""
	fi
	rm -rf -- "$WORK/native" "$WORK/backing" "$WORK/nativewal"
}

# ---- main ---------------------------------------------------------------------------
WORK=$(mktemp -d "$DIR/pgiofs-bench.XXXXXX") || die "cannot create a directory in $DIR"
chmod 755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/sock"
chown postgres: "$WORK/logs" "$WORK/sock"
chmod 700 "$WORK/sock"
SOCK=$WORK/sock
[ "$FLOOR" = 0 ] || KINDS+=(floorfs)
[ "$FLOORWAL" = 0 ] || KINDS+=(floorwal)
[ "$FLOOR$FLOORWAL" = 00 ] || build_floorfs "$WORK/floorfs"
[ "$WALNATIVE" = 0 ] || KINDS+=(walnative)

fsinfo=$(df -PT "$WORK" | awk 'NR == 2 { print $2 " on " $1 }')
echo "pgiofs passthrough benchmark: PostgreSQL $("$PGBIN/postgres" -V | awk '{ print $3 }'), $ROUNDS rounds," \
	"pgbench -i -s $SCALE, pgbench -c $CLIENTS -j $JOBS -T $DURATION, cold seq scan without parallel workers"
echo "backing: $WORK ($fsinfo); pgiofs: $PGIOFS -o allow_other${PGIOFS_ARGS:+ $PGIOFS_ARGS} ($("$PGIOFS" --version 2>/dev/null | head -n 1)); wal_sync_method $METHOD"
for k in "${KINDS[@]:2}"; do
	if [ "$k" = floorfs ]; then
		echo "cell floorfs: bench/floorfs.c over the data directory, pg_wal on the native file system"
	elif [ "$k" = floorwal ]; then
		echo "cell floorwal: bench/floorfs.c over the data directory, pg_wal included"
	elif [ "$k" = walnative ]; then
		echo "cell walnative: pgiofs over the data directory, pg_wal on the native file system"
	else
		echo "cell $k: the same with ${CELL_ARGS[$k]}"
	fi
done
echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
echo

echo "raw samples:"
for ((r = 1; r <= ROUNDS; r++)); do
	for k in "${KINDS[@]}"; do
		sample "$k" "$r"
	done
done

# ratio CELL METRIC FORMAT UNIT OP TARGET STRICT ARRAY -- one summary line:
# CELL against native, with the first target and the stricter one.
ratio() {
	local cell=$1 name=$2 fmt=$3 unit=$4 op=$5 target=$6 strict=$7 nat pgi rat
	declare -n arr=$8
	nat=$(median "${arr[native]}")
	pgi=$(median "${arr[$cell]}")
	rat=$(echo "$pgi / $nat" | bc -l)
	printf "%-8s %-8s native %10s  pgiofs %10s  ratio %.2f (targets %s %s, %s %s: %s)\n" "$cell" "$name" \
		"$(printf "$fmt%s" "$nat" "$unit")" "$(printf "$fmt%s" "$pgi" "$unit")" "$rat" "$op" "$target" \
		"$op" "$strict" "$(awk -v r="$rat" -v op="$op" -v a="$target" -v b="$strict" 'BEGIN {
			ok = op == "<=" ? (r <= a) + (r <= b) : (r >= a) + (r >= b)
			print ok == 2 ? "both met" : ok == 1 ? "first met" : "not met" }')"
}
echo
echo "medians of $ROUNDS rounds:"
for k in "${KINDS[@]:1}"; do
	ratio "$k" import "%.2f" " s" "<=" 1.25 1.10 IMPORT
	ratio "$k" tps "%.0f" "" ">=" 0.80 0.95 TPS
	ratio "$k" seqscan "%.3f" " s" "<=" 1.20 0.90 SEQSCAN
done
if [ "$WALSYNC" = 1 ]; then
	echo
	echo "WAL syncs during the tps samples (medians; us per sync):"
	printf '%-8s %10s %12s %14s %14s %18s\n' side "syncs/s" "PostgreSQL" "FSYNC request" "daemon sync" "before the request"
	for k in "${KINDS[@]}"; do
		pg=$(median "${WS_PG[$k]}") req="" dm=""
		[ -z "${WS_REQ[$k]:-}" ] || req=$(median "${WS_REQ[$k]}")
		[ -z "${WS_DAEMON[$k]:-}" ] || dm=$(median "${WS_DAEMON[$k]}")
		printf '%-8s %10.0f %12.0f %14s %14s %18s\n' "$k" "$(median "${WS_RATE[$k]}")" "$pg" "${req:--}" "${dm:--}" \
			"$([ -n "$req" ] && printf '%.0f' "$(echo "$pg - $req" | bc -l)" || echo -)"
	done
fi
if [ "$ACCOUNT" = 1 ]; then
	for phase in import tps; do
		echo
		echo "the ${phase/tps/tps sample}s:"
		args=()
		for k in "${KINDS[@]}"; do
			files=$(printf '%s\n' "${ACCT_FILES[@]}" | sed -n "s/^$phase:$k=//p" | paste -sd,)
			args+=("$k=$files")
		done
		python3 "$TOP/bench/account.py" "${args[@]}" || die "bench/account.py failed"
	done
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
progress "done"
exit 0
