#!/bin/bash
# mixed.sh -- commit latency under a concurrent bulk import.
#
# Per cell, in one fresh PostgreSQL 15 cluster: database "oltp" is
# initialised with `pgbench -i -s CLIENTS` and checkpointed (outside the
# measurement), then `pgbench -c 4 -j 2 -T DURATION -l` runs in it while,
# one second after pgbench started, `pgbench -i -s SCALE` imports into
# database "bulk" of the same cluster.  Reported per cell: commit latency
# p50, p99, p99.9 and max in ms (from the per-transaction logs of
# pgbench -l, the whole run), the p99 of the transactions that ended while
# the import ran ("p99 imp."), tps (without connection time) and the
# wall-clock time of the import (no CHECKPOINT after it), with the
# import's steps as pgbench -i times them, and PostgreSQL's own timing of
# its WAL writes and syncs over the run (pg_stat_wal, track_wal_io_timing
# on in every cell, averages): where WAL is in passthrough pgiofs sees no
# WAL write, and this says whether commits waited in write() or in the sync.
#
# Cells: native (the file system under --dir) and pgiofs with
# --profile noop, deadline-2.6 and dbaware (--profiles), plus cells of
# any pgiofs options (--cell NAME=ARGS), and cells whose pg_wal is a
# second pgiofs mount (--wal-mount NAME=ARGS: initdb --waldir on it, e.g.
# WAL in passthrough while the data files keep the write-back cache).
# With --wal-sync-method LIST every cell, native included, runs once per
# method (PostgreSQL's wal_sync_method).  With --device hdd the pgiofs
# cells also get --set device.model=hdd (the emulated 2004 disk; native
# stays the real file system, a reference only).  Cells are interleaved
# within every round (the order rotates from round to round) and the
# summary shows the medians over the rounds, which cell wins each figure,
# the daemon's peak RSS and its share of the CPUs while pgbench and the
# import ran (CPU time over wall time over CPUs) and, for the --target cell, the ratios to native
# against the targets for the default (p99 <= 1.0x native over
# the run and <= 0.8x during the import, p99.9 <= 1.0x, tps >= 0.95x,
# import <= 1.15x, peak RSS <= 128 MiB).
#
# --wal-native NAME keeps pg_wal of pgiofs cell NAME on the file system
# under --dir (initdb --waldir): what the commits lose to WAL's passage
# through the mount.  --floorfs-wal adds the cell "floorwal":
# bench/floorfs.c, a minimal FUSE passthrough, over the whole data
# directory, pg_wal included: the least a FUSE daemon that sees the
# commits' writes and syncs costs them.  --floorfs adds the cell
# "floorfs": the same with pg_wal on the file system under --dir, the
# least a FUSE daemon over the relation files alone costs (beside a
# --wal-native cell).
#
# --walfloor adds the cell "walonly": native with the data directory on a
# tmpfs and only pg_wal (initdb --waldir) on the file system under --dir.
# A commit waits for its WAL flush, which carries the import's WAL too;
# with nothing but WAL on the disk, walonly is the floor no storage stack
# under PostgreSQL can take a commit below, and the summary prints
# native's and the target cell's p99 during the import against it.
#
# It measures and prints; no timing is asserted.  Progress on stderr,
# results on stdout; exit 0 when every sample ran, 1 on an error, 2 when
# interrupted.  Servers, pgbench runs, mounts and directories it made are
# removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=mixed.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SCALE=40
DURATION=30
CLIENTS=4
JOBS=2
DEVICE=none
DIR=/var/tmp
PGIOFS_ARGS=""
PROFILES="noop deadline-2.6 dbaware"
METHODS=fdatasync
TARGET=""
WALFLOOR=""
FLOORWAL=""
FLOORFS=""
declare -A CELL_ARGS CELL_WALARGS CELL_WALNATIVE CELL_METHOD CELL_BASE
EXTRA_CELLS=()

usage() {
	cat <<EOF
usage: bench/mixed.sh [options]

Commit latency of pgbench -c $CLIENTS -j $JOBS while pgbench -i imports into another
database of the same cluster: native against pgiofs with the profiles
$PROFILES.  Needs root.

  --rounds N          rounds over all cells, interleaved (default $ROUNDS, 1..100)
  --scale N           scale factor of the concurrent import (default $SCALE, 1..10000)
  --duration S        seconds of pgbench -c $CLIENTS -j $JOBS -T (default $DURATION, 2..3600)
  --device none|hdd   device model of the pgiofs cells (default $DEVICE;
                      hdd adds --set device.model=hdd)
  --quick             scale 10, 10 s, 1 round
  --dir DIR           parent of the working directory (default $DIR)
  --pgiofs-args ARGS  extra pgiofs options for every pgiofs cell
  --profiles LIST     the pgiofs cells, comma-separated (default: ${PROFILES// /,});
                      "" for none
  --cell NAME=ARGS    one more pgiofs cell, mounted with ARGS (repeatable), e.g.
                      --cell "pt=--set files.wal_mode=passthrough"
  --wal-mount NAME=ARGS
                      cell NAME (a profile or a --cell) keeps pg_wal on a second
                      pgiofs mount with ARGS (initdb --waldir) (repeatable)
  --wal-sync-method LIST
                      PostgreSQL wal_sync_method of every cell, native included;
                      a comma-separated list runs each cell once per method
                      (default $METHODS)
  --wal-native NAME   cell NAME (a profile or a --cell) keeps pg_wal on the
                      file system under --dir (initdb --waldir) (repeatable)
  --floorfs-wal       one more cell, "floorwal": bench/floorfs.c (a minimal
                      FUSE passthrough) over the data directory, pg_wal
                      included
  --floorfs           one more cell, "floorfs": the same with pg_wal on the
                      file system under --dir (initdb --waldir)
  --walfloor          one more native cell, "walonly": the data directory on a
                      tmpfs, pg_wal alone on the disk (the floor of commit
                      latency under the import)
  --target CELL       the cell compared with native against the targets
                      (default: dbaware, else the last cell)
  -h, --help          this text

Environment: PGIOFS (default bin/pgiofs), PGBIN (PostgreSQL binaries).
EOF
}

# add_cell NAME=ARGS / add_wal_mount NAME=ARGS -- parse a cell definition.
add_cell() {
	[[ $1 == *=* && ${1%%=*} =~ ^[A-Za-z0-9._-]+$ ]] || die "--cell wants NAME=ARGS (NAME of letters, digits, . _ -), not \"$1\""
	case ${1%%=*} in native | walonly | floorwal | floorfs) die "--cell: \"${1%%=*}\" is taken" ;; esac
	EXTRA_CELLS+=("${1%%=*}")
	CELL_ARGS[${1%%=*}]=${1#*=}
}
add_wal_mount() {
	[[ $1 == *=* ]] || die "--wal-mount wants NAME=ARGS, not \"$1\""
	CELL_WALARGS[${1%%=*}]=${1#*=}
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--rounds=*) range --rounds "${1#*=}" 1 100; ROUNDS=${1#*=}; shift ;;
		--scale) [ $# -ge 2 ] || die "--scale needs a value"; range --scale "$2" 1 10000; SCALE=$2; shift 2 ;;
		--scale=*) range --scale "${1#*=}" 1 10000; SCALE=${1#*=}; shift ;;
		--duration) [ $# -ge 2 ] || die "--duration needs a value"; range --duration "$2" 2 3600; DURATION=$2; shift 2 ;;
		--duration=*) range --duration "${1#*=}" 2 3600; DURATION=${1#*=}; shift ;;
		--device) [ $# -ge 2 ] || die "--device needs a value"; DEVICE=$2; shift 2 ;;
		--device=*) DEVICE=${1#*=}; shift ;;
		--quick) SCALE=10 DURATION=10 ROUNDS=1; shift ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--dir=*) DIR=${1#*=}; shift ;;
		--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2; shift 2 ;;
		--pgiofs-args=*) PGIOFS_ARGS=${1#*=}; shift ;;
		--profiles) [ $# -ge 2 ] || die "--profiles needs a value"; PROFILES=${2//,/ }; shift 2 ;;
		--profiles=*) PROFILES=${1#*=}; PROFILES=${PROFILES//,/ }; shift ;;
		--cell) [ $# -ge 2 ] || die "--cell needs NAME=ARGS"; add_cell "$2"; shift 2 ;;
		--cell=*) add_cell "${1#*=}"; shift ;;
		--wal-mount) [ $# -ge 2 ] || die "--wal-mount needs NAME=ARGS"; add_wal_mount "$2"; shift 2 ;;
		--wal-mount=*) add_wal_mount "${1#*=}"; shift ;;
		--wal-sync-method) [ $# -ge 2 ] || die "--wal-sync-method needs a value"; METHODS=${2//,/ }; shift 2 ;;
		--wal-sync-method=*) METHODS=${1#*=}; METHODS=${METHODS//,/ }; shift ;;
		--walfloor) WALFLOOR=walonly; shift ;;
		--floorfs-wal) FLOORWAL=floorwal; shift ;;
		--floorfs) FLOORFS=floorfs; shift ;;
		--wal-native) [ $# -ge 2 ] || die "--wal-native needs a cell"; CELL_WALNATIVE[$2]=1; shift 2 ;;
		--wal-native=*) CELL_WALNATIVE[${1#*=}]=1; shift ;;
		--target) [ $# -ge 2 ] || die "--target needs a value"; TARGET=$2; shift 2 ;;
		--target=*) TARGET=${1#*=}; shift ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
case $DEVICE in none | hdd) ;; *) die "--device must be none or hdd, not \"$DEVICE\"" ;; esac
read -r -a PGIOFS_ARGV <<<"$PGIOFS_ARGS"
[ "$DEVICE" = hdd ] && PGIOFS_ARGV+=(--set device.model=hdd)
for m in $METHODS; do
	case $m in fdatasync | fsync | open_datasync | open_sync | fsync_writethrough) ;;
		*) die "--wal-sync-method: \"$m\" is not a wal_sync_method of PostgreSQL 15" ;;
	esac
done
for c in "${!CELL_WALARGS[@]}"; do
	[[ " $PROFILES ${EXTRA_CELLS[*]} " == *" $c "* ]] || die "--wal-mount $c: no such pgiofs cell"
	[ -z "${CELL_WALNATIVE[$c]:-}" ] || die "--wal-mount $c and --wal-native $c: pg_wal goes to one place"
done
for c in "${!CELL_WALNATIVE[@]}"; do
	[[ " $PROFILES ${EXTRA_CELLS[*]} " == *" $c "* ]] || die "--wal-native $c: no such pgiofs cell"
done
# the cells: BASE (native, a profile or a --cell) per wal_sync_method,
# named BASE/METHOD when more than one method runs
CELLS=()
for m in $METHODS; do
	for b in native $WALFLOOR $FLOORWAL $FLOORFS $PROFILES "${EXTRA_CELLS[@]}"; do
		c=$b
		[ "$(wc -w <<<"$METHODS")" -gt 1 ] && c=$b/$m
		CELLS+=("$c")
		CELL_BASE[$c]=$b
		CELL_METHOD[$c]=$m
	done
done
[ -n "$TARGET" ] || TARGET=$([[ " $PROFILES " == *" dbaware "* ]] && echo dbaware || echo "${CELLS[-1]%/*}")

[ "$(id -u)" -eq 0 ] ||
	die "must run as root: it mounts pgiofs with -o allow_other and runs PostgreSQL as the postgres user (try: sudo $0${*:+ $*})"
id postgres >/dev/null 2>&1 || die "no postgres user: run scripts/install-deps.sh"
[ -x "$PGBIN/pgbench" ] || die "PostgreSQL 15 binaries not found in $PGBIN: run scripts/install-deps.sh"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"
[ -r /dev/fuse ] || die "/dev/fuse missing: load the fuse module (modprobe fuse)"
# on_floorfs BASE -- is cell BASE a floorfs mount (floorwal, floorfs)?
on_floorfs() { [ "$1" = floorwal ] || [ "$1" = floorfs ]; }
# on_pgiofs BASE -- is cell BASE a pgiofs mount (not native, walonly or
# floorfs's)?
on_pgiofs() { [ "$1" != native ] && [ "$1" != walonly ] && ! on_floorfs "$1"; }
# cell_argv BASE -- the pgiofs arguments of pgiofs cell BASE, into ARGV
cell_argv() {
	local extra
	if [[ " $PROFILES " == *" $1 "* ]]; then
		ARGV=(--profile "$1")
	else
		read -r -a extra <<<"${CELL_ARGS[$1]}"
		ARGV=("${extra[@]}")
	fi
	ARGV+=("${PGIOFS_ARGV[@]}")
}
for p in $PROFILES "${EXTRA_CELLS[@]}"; do
	cell_argv "$p"
	"$PGIOFS" "${ARGV[@]}" --print-config >/dev/null 2>&1 ||
		die "$PGIOFS ${ARGV[*]} is refused: $("$PGIOFS" "${ARGV[@]}" --print-config 2>&1 >/dev/null | head -n 1)"
done

# ---- clean-up -----------------------------------------------------------------
WORK=""
MNT=""
WALMNT=""
DATATMPFS=""
PM_PID=""
BENCH_PID=""

cleanup() {
	trap - EXIT INT TERM
	[ -n "$BENCH_PID" ] && kill -TERM "$BENCH_PID" 2>/dev/null
	kill_postgres "$PM_PID"
	[ -n "$BENCH_PID" ] && wait "$BENCH_PID" 2>/dev/null
	[ -n "$WALMNT" ] && unmount "$WALMNT"
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$DATATMPFS" ] && umount "$DATATMPFS"
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "mixed.sh: interrupted" >&2; exit 2' INT TERM

# ---- one cell -------------------------------------------------------------------
# Results: per cell, space-separated samples.
declare -A P50 P99 P999 PMAX TPS IMPORT P99I RSS CPU

# cpu_s PID -- the CPU time (user + system) process PID has used, in s
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}

# latency T0 T1 FILE... -- "p50 p99 p99.9 max count p99_import count_import"
# in ms of the per-transaction logs (third field: latency in microseconds,
# fifth and sixth: the end time); nearest-rank percentiles; the last two are
# of the transactions that ended while the import ran (T0..T1).
latency() {
	local t0=$1 t1=$2 all imp
	shift 2
	all=$(cat "$@" | awk '{ print $3 }' | sort -n | awk "$PCT_AWK") || return 1
	imp=$(cat "$@" | awk -v a="$t0" -v b="$t1" '{ e = $5 + $6 / 1e6; if (e >= a && e <= b) print $3 }' |
		sort -n | awk "$PCT_AWK") || imp="0 0 0 0 0"
	echo "$all $(echo "$imp" | awk '{ print $2, $5 }')"
}
PCT_AWK='
	{ v[NR] = $1 }
	function pct(p,  k) { k = int(p * NR + 0.999999); if (k < 1) k = 1; if (k > NR) k = NR; return v[k] / 1000 }
	END { if (NR == 0) exit 1; printf "%.3f %.3f %.3f %.3f %d\n", pct(0.50), pct(0.99), pct(0.999), v[NR] / 1000, NR }'

# sample CELL ROUND -- CELL is one of CELLS.
sample() {
	local cell=$1 round=$2 base data log port tag out ilog t0 t1 lat p50 p99 p999 pmax n p99i ni
	local b=${CELL_BASE[$cell]} waldir=() ARGV wargv
	tag=${cell//\//_}.$round
	rm -rf -- "$WORK/native" "$WORK/backing" "$WORK/walbacking" "$WORK/nativewal"
	if [ "$b" = native ]; then
		mkdir -p "$WORK/native"
		base=$WORK/native
	elif [ "$b" = walonly ]; then
		# the data directory in memory, pg_wal on the disk
		mkdir -p "$WORK/native/pg_wal" "$WORK/tmpfs"
		chown postgres: "$WORK/native/pg_wal"
		mount -t tmpfs -o mode=0755 pgiofs-mixed-data "$WORK/tmpfs" || die "cannot mount a tmpfs on $WORK/tmpfs"
		DATATMPFS=$WORK/tmpfs
		base=$WORK/tmpfs
		waldir=(--waldir "$WORK/native/pg_wal")
	elif on_floorfs "$b"; then
		mkdir -p "$WORK/backing" "$WORK/mnt"
		MNT=$WORK/mnt
		"$WORK/floorfs" "$WORK/backing" "$MNT" || die "floorfs $WORK/backing $MNT failed"
		base=$MNT
		if [ "$b" = floorfs ]; then
			mkdir -p "$WORK/nativewal" && chown postgres: "$WORK/nativewal"
			waldir=(--waldir "$WORK/nativewal/pg_wal")
		fi
	else
		mkdir -p "$WORK/backing" "$WORK/mnt"
		MNT=$WORK/mnt
		cell_argv "$b"
		"$PGIOFS" -o allow_other "${ARGV[@]}" "$WORK/backing" "$MNT" ||
			die "$PGIOFS ${ARGV[*]} $WORK/backing $MNT failed"
		mountpoint -q "$MNT" || die "$MNT is not a mount point after pgiofs returned"
		base=$MNT
		if [ -n "${CELL_WALARGS[$b]:-}" ]; then
			mkdir -p "$WORK/walbacking" "$WORK/walmnt"
			WALMNT=$WORK/walmnt
			read -r -a wargv <<<"${CELL_WALARGS[$b]}"
			"$PGIOFS" -o allow_other "${wargv[@]}" "$WORK/walbacking" "$WALMNT" ||
				die "$PGIOFS ${wargv[*]} $WORK/walbacking $WALMNT failed"
			# named pg_wal, so that pgiofs classifies its files as WAL
			mkdir "$WALMNT/pg_wal" && chown postgres: "$WALMNT/pg_wal" || die "cannot create $WALMNT/pg_wal"
			waldir=(--waldir "$WALMNT/pg_wal")
		elif [ -n "${CELL_WALNATIVE[$b]:-}" ]; then
			mkdir -p "$WORK/nativewal" && chown postgres: "$WORK/nativewal"
			waldir=(--waldir "$WORK/nativewal/pg_wal")
		fi
	fi
	mkdir "$base/pg" && chown postgres: "$base/pg" || die "cannot create $base/pg"
	data=$base/pg/data
	log=$WORK/logs/$tag.server.log
	port=$(free_port)
	local psql=("${AS_PG[@]}" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$port" -d postgres)

	progress "round $round $cell: initdb, oltp database (pgbench -i -s $CLIENTS)"
	"${AS_PG[@]}" "$PGBIN/initdb" -D "$data" "${waldir[@]}" -U postgres -A trust -E UTF8 --locale=C --no-instructions \
		>"$WORK/logs/$tag.initdb.log" 2>&1 || fail_log "$cell: initdb failed" "$WORK/logs/$tag.initdb.log"
	cat >>"$data/postgresql.conf" <<-EOF
		# bench/mixed.sh: a private socket, defaults otherwise
		listen_addresses = ''
		port = $port
		unix_socket_directories = '$SOCK'
		wal_sync_method = ${CELL_METHOD[$cell]}
		track_wal_io_timing = on
	EOF
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$data" -l "$log" -w -t 300 start >/dev/null 2>&1 ||
		fail_log "$cell: pg_ctl start failed" "$log"
	PM_PID=$(head -n 1 "$data/postmaster.pid")
	out=$WORK/logs/$tag.setup.log
	"${psql[@]}" -c "CREATE DATABASE oltp" -c "CREATE DATABASE bulk" >"$out" 2>&1 ||
		fail_log "$cell: CREATE DATABASE failed" "$out"
	"${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$port" -i -s "$CLIENTS" -q oltp >>"$out" 2>&1 ||
		fail_log "$cell: pgbench -i oltp failed" "$out"
	"${psql[@]}" -c CHECKPOINT -c "SELECT pg_stat_reset_shared('wal')" >>"$out" 2>&1 ||
		fail_log "$cell: CHECKPOINT or the reset of the WAL statistics failed" "$out"

	progress "round $round $cell: pgbench -c $CLIENTS -j $JOBS -T $DURATION -l, import -s $SCALE after 1 s"
	local dpid="" cpu0="" w0
	on_pgiofs "$b" && dpid=$(pgrep -f -n -- "$(basename "$PGIOFS") .*$MNT\$") && cpu0=$(cpu_s "$dpid")
	w0=$(now)
	mkdir "$WORK/txlog/$tag" && chown postgres: "$WORK/txlog/$tag"
	out=$WORK/logs/$tag.tps.log
	ilog=$WORK/logs/$tag.import.log
	"${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$port" -c "$CLIENTS" -j "$JOBS" -T "$DURATION" \
		-l --log-prefix="$WORK/txlog/$tag/pgbench_log" oltp >"$out" 2>&1 &
	BENCH_PID=$!
	sleep 1
	t0=$(now)
	"${AS_PG[@]}" "$PGBIN/pgbench" -h "$SOCK" -p "$port" -i -s "$SCALE" -q bulk >"$ilog" 2>&1 ||
		fail_log "$cell: pgbench -i -s $SCALE bulk failed" "$ilog"
	t1=$(now)
	wait "$BENCH_PID" || { BENCH_PID=""; fail_log "$cell: pgbench -T failed" "$out"; }
	BENCH_PID=""
	IMPORT[$cell]+="$(echo "$t1 - $t0" | bc -l) "
	TPS[$cell]+="$(awk '/^tps = .*without initial connection time/ { print $3 }' "$out") "
	lat=$(latency "$t0" "$t1" "$WORK/txlog/$tag"/pgbench_log.*) || die "$cell: no transactions in the pgbench -l logs"
	read -r p50 p99 p999 pmax n p99i ni <<<"$lat"
	P50[$cell]+="$p50 " P99[$cell]+="$p99 " P999[$cell]+="$p999 " PMAX[$cell]+="$pmax " P99I[$cell]+="$p99i "
	printf 'round %d  %-12s  p50 %6.2f  p99 %6.2f  p99.9 %7.2f  max %7.2f ms (%d tx)  p99 during import %6.2f ms (%d tx)  tps %7.1f  import %6.2f s\n' \
		"$round" "$cell" "$p50" "$p99" "$p999" "$pmax" "$n" "$p99i" "$ni" "$(last_of "${TPS[$cell]}")" "$(last_of "${IMPORT[$cell]}")"
	# the import's steps, as pgbench -i timed them
	sed -n 's/^done in [0-9.]* s (\(.*\))\.$/          import steps: \1/p' "$ilog"
	# WAL writes and syncs as PostgreSQL timed them (track_wal_io_timing):
	# what a commit waited for, where pgiofs does not see WAL's writes
	"${psql[@]}" -F ' ' -c "SELECT wal_write, wal_write_time, wal_sync, wal_sync_time FROM pg_stat_wal" \
		>"$WORK/logs/$tag.wal.log" 2>&1 &&
		awk '{ printf "          WAL as PostgreSQL timed it: %d writes, avg %.3f ms; %d syncs, avg %.3f ms\n",
			$1, $1 ? $2 / $1 : 0, $3, $3 ? $4 / $3 : 0 }' "$WORK/logs/$tag.wal.log" ||
		fail_log "$cell: pg_stat_wal could not be read" "$WORK/logs/$tag.wal.log"

	if on_pgiofs "$b"; then
		# the daemon's peak RSS (under 128 MiB with defaults), and its
		# share of the CPUs while pgbench and the import ran
		local rss cpu1 share
		[ -n "$dpid" ] &&
			rss=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$dpid/status") &&
			RSS[$cell]+="$rss " && echo "          pgiofs $cell peak RSS $rss MiB"
		if [ -n "$cpu0" ] && cpu1=$(cpu_s "$dpid"); then
			share=$(echo "100 * ($cpu1 - $cpu0) / ($(now) - $w0) / $(nproc)" | bc -l)
			CPU[$cell]+="$share "
			printf '          pgiofs %s CPU %.1f s, %.1f%% of %d CPUs\n' "$cell" "$(echo "$cpu1 - $cpu0" | bc -l)" "$share" "$(nproc)"
		fi
		# where commits waited: the scheduler's own latency per class
		# (queue wait + service) over the whole sample
		"$PGIOFS" stat "$MNT" --json >"$WORK/logs/$tag.stat.json" 2>&1 &&
			python3 - "$WORK/logs/$tag.stat.json" <<-'PY' || true
				import json, sys
				c = json.load(open(sys.argv[1]))["classes"]
				def f(k):
				    l = c.get(k, {}).get("latency_ms", {})
				    return "%s avg %.1f p99 %.1f max %.1f" % (k, l.get("avg", 0), l.get("p99", 0), l.get("max", 0))
				print("          in pgiofs (ms): " + "; ".join(f(k) for k in ("wal", "heap", "index")))
				t = json.load(open(sys.argv[1])).get("throttle", {})
				if t.get("target_ms"):
				    print("          throttle: %d of %d WAL flushes over %.1f ms; %d cuts, %d raises; "
				          "throttled %.1f s; depth now %d of %d" % (t["wal_slow"], t["wal_flushes"],
				          t["target_ms"], t["windows_cut"], t["windows_raised"], t["throttled_s"],
				          t["depth"], t["max_depth"]))
			PY
	fi
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$data" -w -t 300 -m fast stop >/dev/null 2>&1 ||
		fail_log "$cell: pg_ctl stop failed" "$log"
	PM_PID=""
	if [ -n "$WALMNT" ]; then
		unmount "$WALMNT"
		mountpoint -q "$WALMNT" && die "cannot unmount $WALMNT"
		WALMNT=""
	fi
	if [ -n "$DATATMPFS" ]; then
		umount "$DATATMPFS" || die "cannot unmount $DATATMPFS"
		DATATMPFS=""
	fi
	if on_pgiofs "$b" || on_floorfs "$b"; then
		unmount "$MNT"
		mountpoint -q "$MNT" && die "cannot unmount $MNT"
		MNT=""
	fi
	rm -rf -- "$WORK/native" "$WORK/backing" "$WORK/walbacking" "$WORK/nativewal" "$WORK/txlog/$tag"
}

# ---- main ---------------------------------------------------------------------------
WORK=$(mktemp -d "$DIR/pgiofs-mixed.XXXXXX") || die "cannot create a directory in $DIR"
chmod 755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/sock" "$WORK/txlog"
chown postgres: "$WORK/logs" "$WORK/sock" "$WORK/txlog"
chmod 700 "$WORK/sock"
SOCK=$WORK/sock
[ -z "$FLOORWAL$FLOORFS" ] || build_floorfs "$WORK/floorfs"

fsinfo=$(df -PT "$WORK" | awk 'NR == 2 { print $2 " on " $1 }')
echo "pgiofs mixed-load benchmark: PostgreSQL $("$PGBIN/postgres" -V | awk '{ print $3 }'), $ROUNDS round(s)," \
	"pgbench -c $CLIENTS -j $JOBS -T $DURATION -l (oltp, -s $CLIENTS) during pgbench -i -s $SCALE (bulk, started after 1 s)"
echo "backing: $WORK ($fsinfo); pgiofs: $PGIOFS -o allow_other ARGS${PGIOFS_ARGV[*]:+ ${PGIOFS_ARGV[*]}}" \
	"($("$PGIOFS" --version 2>/dev/null | head -n 1)); device: $DEVICE; wal_sync_method: ${METHODS// /, }"
for b in $PROFILES "${EXTRA_CELLS[@]}"; do
	cell_argv "$b"
	echo "cell $b: ARGS = ${ARGV[*]}${CELL_WALARGS[$b]:+; pg_wal on a second mount: ${CELL_WALARGS[$b]}}${CELL_WALNATIVE[$b]:+; pg_wal on the native file system}"
done
[ "$DEVICE" = hdd ] && echo "note: native runs on the real file system, not on an emulated disk: a reference only"
echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "raw samples (latency in ms):"
n=${#CELLS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < n; i++)); do
		sample "${CELLS[$(((i + r - 1) % n))]}" "$r"
	done
done

# ---- summary --------------------------------------------------------------------
declare -A MED
for c in "${CELLS[@]}"; do
	MED[$c,p50]=$(median "${P50[$c]}") MED[$c,p99]=$(median "${P99[$c]}")
	MED[$c,p999]=$(median "${P999[$c]}") MED[$c,max]=$(median "${PMAX[$c]}")
	MED[$c,tps]=$(median "${TPS[$c]}") MED[$c,import]=$(median "${IMPORT[$c]}")
	MED[$c,p99i]=$(median "${P99I[$c]}") MED[$c,rss]=""
	[ -n "${RSS[$c]:-}" ] && MED[$c,rss]=$(median "${RSS[$c]}")
	MED[$c,cpu]=""
	[ -n "${CPU[$c]:-}" ] && MED[$c,cpu]=$(median "${CPU[$c]}")
done
echo
echo "medians of $ROUNDS round(s), device $DEVICE:"
printf '%-28s %8s %8s %9s %8s %12s %8s %9s %8s %8s\n' cell "p50 ms" "p99 ms" "p99.9 ms" "max ms" "p99 imp. ms" tps "import s" "RSS MiB" "CPU %"
for c in "${CELLS[@]}"; do
	printf '%-28s %8.2f %8.2f %9.2f %8.2f %12.2f %8.1f %9.2f %8s %8s\n' "$(on_pgiofs "${CELL_BASE[$c]}" && echo "pgiofs $c" || echo "$c")" \
		"${MED[$c,p50]}" "${MED[$c,p99]}" "${MED[$c,p999]}" "${MED[$c,max]}" "${MED[$c,p99i]}" "${MED[$c,tps]}" "${MED[$c,import]}" \
		"$([ -n "${MED[$c,rss]}" ] && printf '%.1f' "${MED[$c,rss]}" || echo -)" \
		"$([ -n "${MED[$c,cpu]}" ] && printf '%.1f' "${MED[$c,cpu]}" || echo -)"
done

# best FIGURE low|high CELLS... -- the cell with the lowest (highest) median.
best() {
	local fig=$1 dir=$2 c
	shift 2
	for c in "$@"; do echo "${MED[$c,$fig]} $c"; done |
		if [ "$dir" = low ]; then sort -g; else sort -gr; fi | head -n 1 | awk '{ print $2 }'
}
PGIOFS_CELLS=()
for c in "${CELLS[@]}"; do on_pgiofs "${CELL_BASE[$c]}" && PGIOFS_CELLS+=("$c"); done
if [ ${#PGIOFS_CELLS[@]} -gt 0 ]; then
	echo
	echo "wins (best of all cells / best pgiofs cell):"
	for f in p50:low p99:low p999:low max:low p99i:low tps:high import:low; do
		fig=${f%:*} dir=${f#*:}
		printf '  %-7s %-22s / %s\n' "$(sed 's/p999/p99.9/; s/p99i/p99imp/' <<<"$fig")" "$(best "$fig" "$dir" "${CELLS[@]}")" \
			"$(best "$fig" "$dir" "${PGIOFS_CELLS[@]}")"
	done
fi

# ratio TEXT A B OP LIMIT -- A/B against a target.
ratio() {
	local r verdict
	if ! awk -v a="$2" -v b="$3" 'BEGIN { exit !(a > 0 && b > 0) }'; then
		printf '  %-36s    n/a  (cell not run, or no transactions)\n' "$1"
		return
	fi
	r=$(echo "$2 / $3" | bc -l)
	verdict=$(awk -v r="$r" -v op="$4" -v l="$5" 'BEGIN {
		if ((op == "<=" && r <= l) || (op == ">=" && r >= l)) print "met"; else print "not met" }')
	printf '  %-36s %6.2f  (target %s %s: %s)\n' "$1" "$r" "$4" "$5" "$verdict"
}
# limit TEXT VALUE LIMIT -- VALUE <= LIMIT.
limit() {
	if [ -z "$2" ]; then
		printf '  %-36s    n/a\n' "$1"
		return
	fi
	printf '  %-36s %6.1f  (target <= %s: %s)\n' "$1" "$2" "$3" \
		"$(awk -v v="$2" -v l="$3" 'BEGIN { print (v <= l) ? "met" : "not met" }')"
}
for m in $METHODS; do
	sfx=""
	[ "$(wc -w <<<"$METHODS")" -gt 1 ] && sfx=/$m
	t=$TARGET$sfx nat=native$sfx
	: "${MED[$t,p99]:=0}" "${MED[$t,p99i]:=0}" "${MED[$t,p999]:=0}" "${MED[$t,tps]:=0}" "${MED[$t,import]:=0}" "${MED[$t,rss]:=}"
	echo
	echo "targets, $TARGET against native, wal_sync_method = $m (medians):"
	ratio "p99 / native p99" "${MED[$t,p99]}" "${MED[$nat,p99]}" "<=" 1.0
	ratio "  the same during the import" "${MED[$t,p99i]}" "${MED[$nat,p99i]}" "<=" 0.8
	ratio "p99.9 / native p99.9" "${MED[$t,p999]}" "${MED[$nat,p999]}" "<=" 1.0
	ratio "tps / native tps" "${MED[$t,tps]}" "${MED[$nat,tps]}" ">=" 0.95
	ratio "import / native import" "${MED[$t,import]}" "${MED[$nat,import]}" "<=" 1.15
	limit "daemon peak RSS (MiB)" "${MED[$t,rss]}" 128
	if [ -n "$WALFLOOR" ]; then
		echo "  the floor: only pg_wal on the disk (walonly), p99 during the import"
		for c in native "$TARGET"; do
			printf '    %-34s %6.2f\n' "$c / walonly" "$(echo "${MED[$c$sfx,p99i]:-0} / ${MED[walonly$sfx,p99i]}" | bc -l)"
		done
		awk -v w="${MED[walonly$sfx,p99i]}" -v n="${MED[$nat,p99i]}" 'BEGIN {
			printf "    %-34s %6.2f  (the 0.8 target is %s it)\n", "walonly / native", w / n,
			       (w / n > 0.8) ? "below" : "not below" }'
	fi
	if [ -n "${MED[noop$sfx,p99]:-}" ] && [ -n "${MED[dbaware$sfx,p99]:-}" ]; then
		echo "  scheduler: dbaware against noop"
		ratio "  dbaware p99 / noop p99" "${MED[dbaware$sfx,p99]}" "${MED[noop$sfx,p99]}" "<=" 0.5
		ratio "    the same during the import" "${MED[dbaware$sfx,p99i]}" "${MED[noop$sfx,p99i]}" "<=" 0.5
	fi
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
progress "done"
exit 0
