#!/bin/bash
# relations.sh -- many relations: PostgreSQL with thousands of tables on
# pgiofs against the native file system under it, side by side, with the
# descriptors the daemon holds and its peak memory.
#
# Every sample starts from the same freshly made cluster (initdb once, then
# copied) and runs, timed one after the other:
#   create   --tables tables "(id int primary key, v text)", one statement
#            (one transaction) each: four files per table (heap, primary
#            key, TOAST table and its index);
#   vacuum   VACUUM of the database;
#   dump     pg_dump --schema-only of the database, to /dev/null;
#   sizes    one query over every table's size (pg_total_relation_size: a
#            stat of each of its files);
#   ckpt     CHECKPOINT (an fsync of every file created).
# "native" runs PostgreSQL on the backing directory itself, "pgiofs" on a
# pgiofs mount of it (its default configuration plus --pgiofs-args), and
# "held" (--only) on a mount with files.inode_handles = no: a descriptor per
# file the kernel knows, as before file handles; "noxattr" (--only) on a
# mount with fuse.xattr = no (no GETXATTR at a file's first write);
# "floor" and "floornoopen" (--only) on bench/floorfs.c, the least a FUSE
# passthrough can do (compiled here), with OPEN and with OPEN refused: what
# the kernel's requests cost whatever the daemon, in the same run.  pgiofs is
# started under the open-files limit of --nofile if given.  The samples
# alternate (native, pgiofs, native, ...) for --rounds rounds; the summary
# gives each phase's median per side and its ratio to native, and for each
# mount the most descriptors the daemon held (sampled every 0.2 s), its peak
# RSS (VmHWM), the CPU time it used (user and system, all threads: less noisy
# than the elapsed times on a busy machine) and what `pgiofs stat --json`
# says of its inode descriptors (handles or not, cache size, hit rate,
# evictions).  A phase that fails (under a low --nofile without handles) ends
# the sample, and the run.
#
# It measures and prints, nothing more: no timing is ever asserted.
# Progress goes to stderr, results to stdout.  Exit 0 when every sample
# ran, 1 on an error, 2 when interrupted.  Everything it started (servers,
# mounts, directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=relations.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
TABLES=4000
NOFILE=""
DIR=/var/tmp
PGIOFS_ARGS=""
ONLY="native pgiofs"

usage() {
	cat <<EOF
usage: bench/relations.sh [options]

PostgreSQL with many tables (create, VACUUM, pg_dump --schema-only, every
table's size, CHECKPOINT) on pgiofs and natively, interleaved, with medians,
ratios, the daemon's descriptors and peak RSS.  Needs root.

  --tables N          tables to create (default $TABLES, 1..1000000)
  --rounds N          rounds of samples (default $ROUNDS, 1..100)
  --nofile N          start pgiofs under this open-files limit (soft and
                      hard; default: the limit it inherits), 64..1048576
  --only LIST         comma-separated sides among native,pgiofs,held,noxattr,
                      floor,floornoopen (default native,pgiofs)
  --quick             500 tables, 2 rounds
  --dir DIR           parent of the working directory (default $DIR)
  --pgiofs-args ARGS  extra pgiofs options, e.g. "-s files.inode_fds=1024"
  -h, --help          this text

Environment: PGIOFS (default bin/pgiofs), PGBIN (PostgreSQL binaries).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--tables) [ $# -ge 2 ] || die "--tables needs a value"; range --tables "$2" 1 1000000; TABLES=$2; shift 2 ;;
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 100; ROUNDS=$2; shift 2 ;;
		--nofile) [ $# -ge 2 ] || die "--nofile needs a value"; range --nofile "$2" 64 1048576; NOFILE=$2; shift 2 ;;
		--only) [ $# -ge 2 ] || die "--only needs a value"; ONLY=${2//,/ }; shift 2 ;;
		--quick) TABLES=500 ROUNDS=2; shift ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
for k in $ONLY; do
	case $k in native | pgiofs | held | noxattr | floor | floornoopen) ;;
	*) die "--only: unknown side \"$k\" (native, pgiofs, held, noxattr, floor, floornoopen)" ;;
	esac
done
read -r -a PGIOFS_ARGV <<<"$PGIOFS_ARGS"

[ "$(id -u)" -eq 0 ] ||
	die "must run as root: it mounts pgiofs with -o allow_other and runs PostgreSQL as postgres (try: sudo $0${*:+ $*})"
id postgres >/dev/null 2>&1 || die "no postgres user: run scripts/install-deps.sh"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"
[ -r /dev/fuse ] || die "/dev/fuse missing: load the fuse module (modprobe fuse)"
command -v python3 >/dev/null || die "python3 is needed to read pgiofs stat --json"
if [ -n "$NOFILE" ]; then
	prlimit --nofile="$NOFILE:$NOFILE" true 2>/dev/null ||
		die "--nofile $NOFILE: cannot start a process under that limit (above the hard limit $(ulimit -Hn)?)"
fi

WORK="" MNT="" PM_PID="" SAMPLER=""
cleanup() {
	trap - EXIT INT TERM
	[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
	kill_postgres "$PM_PID"
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "$ME: interrupted" >&2; exit 2' INT TERM

PHASES="create vacuum dump sizes ckpt"
declare -A SECS FDS RSS CPU
CLK=$(getconf CLK_TCK)

psql_do() { # psql_do OUT ARGS... -- psql as postgres on the sample's server
	local out=$1
	shift
	"${AS_PG[@]}" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -d postgres \
		"$@" >"$out" 2>&1
}

# timed KIND PHASE CMD... -- run CMD, add its seconds to SECS[KIND.PHASE]
timed() {
	local kind=$1 phase=$2 t0 t1
	shift 2
	t0=$(now)
	"$@" || fail_log "$kind: $phase failed" "$WORK/logs/$kind.$phase.log"
	t1=$(now)
	SECS[$kind.$phase]+="$(echo "$t1 - $t0" | bc -l) "
}

# fd_sampler PID OUT -- the most descriptors PID held, every 0.2 s, into OUT
fd_sampler() {
	local pid=$1 out=$2 n max=0
	while [ -d "/proc/$pid" ]; do
		n=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		[ "$n" -gt "$max" ] && { max=$n; echo "$max" >"$out"; }
		sleep 0.2
	done
}

# cache_of JSON -- one line of what pgiofs says of its inode descriptors
cache_of() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
h = s.get("inode_fds")
if not h:
    print("(no inode_fds in pgiofs stat)")
else:
    look = h["hits"] + h["misses"] + h["opens"]
    print("handles %s%s, cache %d of %d, hit rate %.1f%%, %d evictions, %d inodes" % (
        "yes" if h["handles"] else "no", "" if h["handles"] else " (" + h["note"] + ")",
        h["cached"], h["limit"], 100.0 * h["hits"] / look if look else 100.0,
        h["evictions"], h["inodes"]))' "$1"
}

# sample KIND ROUND -- one run of every phase on a fresh copy of the cluster
sample() {
	local kind=$1 round=$2 data=$WORK/backing/data pid="" files line rss fds cpu
	rm -rf "$WORK/backing/data"
	cp -a "$WORK/template" "$WORK/backing/data"
	if [[ $kind == floor* ]]; then
		MNT=$WORK/mnt
		local opt=()
		[ "$kind" = floornoopen ] && opt=(--noopen)
		"$WORK/floorfs" "${opt[@]}" "$WORK/backing" "$MNT" 2>"$WORK/logs/$kind.$round.log" ||
			fail_log "floorfs mount failed" "$WORK/logs/$kind.$round.log"
		data=$MNT/data
	elif [ "$kind" != native ]; then
		MNT=$WORK/mnt
		local side=()
		[ "$kind" = held ] && side=(-s files.inode_handles=no)
		[ "$kind" = noxattr ] && side=(-s fuse.xattr=no)
		${NOFILE:+prlimit --nofile="$NOFILE:$NOFILE"} "$PGIOFS" -o allow_other "${PGIOFS_ARGV[@]}" \
			"${side[@]}" "$WORK/backing" "$MNT" 2>"$WORK/logs/$kind.$round.log" ||
			fail_log "pgiofs mount failed" "$WORK/logs/$kind.$round.log"
		mountpoint -q "$MNT" || die "$MNT is not a mount point after pgiofs returned"
		data=$MNT/data
		pid=$("$PGIOFS" stat "$MNT" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])') ||
			die "pgiofs stat failed"
		echo 0 >"$WORK/fds"
		fd_sampler "$pid" "$WORK/fds" &
		SAMPLER=$!
	fi
	start_server "$data"
	timed "$kind" create psql_do "$WORK/logs/$kind.create.log" -f "$WORK/create.sql"
	timed "$kind" vacuum psql_do "$WORK/logs/$kind.vacuum.log" -c VACUUM
	timed "$kind" dump "${AS_PG[@]}" "$PGBIN/pg_dump" --schema-only -h "$SOCK" -p "$PORT" -d postgres \
		-f /dev/null 2>"$WORK/logs/$kind.dump.log"
	timed "$kind" sizes psql_do "$WORK/logs/$kind.sizes.log" \
		-c "SELECT count(*), sum(pg_total_relation_size(oid)) FROM pg_class WHERE relkind = 'r'"
	timed "$kind" ckpt psql_do "$WORK/logs/$kind.ckpt.log" -c CHECKPOINT
	stop_server "$data"
	if [[ $kind == floor* ]]; then
		unmount "$MNT"
		MNT=""
	fi
	files=$(find "$WORK/backing/data" | wc -l)
	line=""
	if [ -n "$pid" ]; then
		"$PGIOFS" stat "$MNT" --json >"$WORK/stat.json" || die "pgiofs stat failed"
		rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
		cpu=$(awk -v clk="$CLK" '{ printf "%.2f", ($14 + $15) / clk }' "/proc/$pid/stat")
		CPU[$kind]+="$cpu "
		kill "$SAMPLER" 2>/dev/null
		wait "$SAMPLER" 2>/dev/null
		SAMPLER=""
		fds=$(cat "$WORK/fds")
		RSS[$kind]+="$rss "
		FDS[$kind]+="$fds "
		unmount "$MNT"
		MNT=""
		line="; daemon: at most $fds descriptors, peak RSS $((rss / 1024)) MiB, CPU $cpu s; $(cache_of "$WORK/stat.json")"
	fi
	printf 'round %d  %-11s' "$round" "$kind"
	for p in $PHASES; do printf '  %s %7.2f s' "$p" "$(last_of "${SECS[$kind.$p]}")"; done
	printf '  (%d files)%s\n' "$files" "$line"
}

# ---- the cluster, made once ------------------------------------------------------
WORK=$(mktemp -d "$DIR/pgiofs-relations.XXXXXX") || die "cannot create a directory in $DIR"
chmod 755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/sock" "$WORK/backing" "$WORK/mnt" "$WORK/template"
chown postgres: "$WORK/logs" "$WORK/sock" "$WORK/backing" "$WORK/template"
chmod 700 "$WORK/template"
chmod 700 "$WORK/sock"
SOCK=$WORK/sock
PORT=$(free_port)
LOG=$WORK/logs/server.log

progress "initdb"
"${AS_PG[@]}" "$PGBIN/initdb" -D "$WORK/template" -U postgres -A trust -E UTF8 --locale=C \
	--no-instructions >"$WORK/logs/initdb.log" 2>&1 || fail_log "initdb failed" "$WORK/logs/initdb.log"
# pg_dump locks every table: the lock table must hold them all
cat >>"$WORK/template/postgresql.conf" <<EOF
# bench/relations.sh: a private socket, room in the lock table for pg_dump
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SOCK'
max_locks_per_transaction = $((TABLES / 50 + 64))
EOF
if [[ " $ONLY " == *" floor"* ]]; then
	build_floorfs "$WORK/floorfs"
fi
for ((i = 1; i <= TABLES; i++)); do
	echo "CREATE TABLE t$i (id int PRIMARY KEY, v text);"
done >"$WORK/create.sql"
chmod 644 "$WORK/create.sql"

fsinfo=$(df -PT "$WORK" | awk 'NR == 2 { print $2 " on " $1 }')
echo "pgiofs with many relations: PostgreSQL $("$PGBIN/postgres" -V | awk '{ print $3 }'), $TABLES tables," \
	"$ROUNDS rounds${NOFILE:+, pgiofs under an open-files limit of $NOFILE}${PGIOFS_ARGS:+, $PGIOFS_ARGS}"
echo "backing: $WORK ($fsinfo); kernel $(uname -r), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "raw samples:"
for ((r = 1; r <= ROUNDS; r++)); do
	for k in $ONLY; do
		progress "round $r: $k"
		sample "$k" "$r"
	done
done

echo
echo "medians of $ROUNDS rounds (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%-8s' phase
for k in $ONLY; do printf ' %12s' "$k"; done
for k in $ONLY; do
	[ "$k" != native ] && [[ " $ONLY " == *" native "* ]] && printf ' %16s' "$k/nat"
done
printf '\n'
for p in $PHASES; do
	printf '%-8s' "$p"
	for k in $ONLY; do printf ' %10.2f s' "$(median "${SECS[$k.$p]}")"; done
	for k in $ONLY; do
		[ "$k" != native ] && [[ " $ONLY " == *" native "* ]] &&
			printf ' %15.2fx' "$(echo "$(median "${SECS[$k.$p]}") / $(median "${SECS[native.$p]}")" | bc -l)"
	done
	printf '\n'
done
for k in $ONLY; do
	case $k in native | floor*) continue ;; esac
	echo "$k daemon: at most $(median "${FDS[$k]}") descriptors held, peak RSS $(($(median "${RSS[$k]}") / 1024)) MiB, CPU $(median "${CPU[$k]}") s (medians of rounds)"
done
progress "done"
exit 0
