#!/bin/bash
# commit_requests.sh -- the FUSE requests a commit costs, per WAL mode.
#
# A commit is what PostgreSQL does to a WAL segment: an 8 KiB write, then
# fdatasync (wal_sync_method = fdatasync, the default), or an 8 KiB write on
# a descriptor opened O_DSYNC (open_datasync).  For every WAL mode
# (files.wal_mode) and timestamp granularity (fuse.time_gran_ns: 1 and whole
# seconds) this mounts pgiofs in the foreground with -d (every request
# logged, the WAL mount's too with passthrough), makes --commits commits to pg_wal/000000010000000000000001 and
# prints the requests per commit by opcode, counted from the log.  The
# counts do not depend on the machine's speed or load: they are the round
# trips a commit waits for in each mode.
#
# Needs root (passthrough needs CAP_SYS_ADMIN; the mount uses allow_other).
# Progress on stderr, results on stdout; exit 1 on error, 2 if interrupted;
# every mount and directory it made is removed at exit.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=commit_requests.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

COMMITS=200
DIR=/var/tmp
MODES="cached direct passthrough"

usage() {
	cat <<EOF
usage: bench/commit_requests.sh [options]

FUSE requests per commit (8 KiB WAL write + fdatasync, or an O_DSYNC write)
for each files.wal_mode and fuse.time_gran_ns 1 and 1000000000.  Needs root.

  --commits N     commits per cell (default $COMMITS, 10..100000)
  --modes LIST    WAL modes, comma-separated (default ${MODES// /,})
  --dir DIR       parent of the working directory (default $DIR)
  -h, --help      this text

Environment: PGIOFS (default bin/pgiofs).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
		--commits) [ $# -ge 2 ] || die "--commits needs a value"; range --commits "$2" 10 100000; COMMITS=$2; shift 2 ;;
		--commits=*) range --commits "${1#*=}" 10 100000; COMMITS=${1#*=}; shift ;;
		--modes) [ $# -ge 2 ] || die "--modes needs a value"; MODES=${2//,/ }; shift 2 ;;
		--modes=*) MODES=${1#*=}; MODES=${MODES//,/ }; shift ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--dir=*) DIR=${1#*=}; shift ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "must run as root (try: sudo $0${*:+ $*})"
[ -x "$PGIOFS" ] || die "$PGIOFS not found: run make"
[ -d "$DIR" ] || die "--dir \"$DIR\": no such directory"
command -v python3 >/dev/null || die "python3 is needed"
for m in $MODES; do
	"$PGIOFS" --set "files.wal_mode=$m" --print-config >/dev/null 2>&1 ||
		die "--modes: \"$m\" is not a files.wal_mode"
done

WORK=""
MNT=""
DPID=""
cleanup() {
	trap - EXIT INT TERM
	[ -n "$MNT" ] && unmount "$MNT"
	[ -n "$DPID" ] && wait "$DPID" 2>/dev/null
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'echo "commit_requests.sh: interrupted" >&2; exit 2' INT TERM

WORK=$(mktemp -d "$DIR/pgiofs-commits.XXXXXX") || die "cannot create a directory in $DIR"

# cell MODE GRAN SYNC -- one mount, COMMITS commits, the requests per commit
cell() {
	local mode=$1 gran=$2 sync=$3 log=$WORK/$1.$2.$3.log i
	rm -rf -- "$WORK/backing" "$WORK/mnt"
	mkdir -p "$WORK/backing/pg_wal" "$WORK/mnt"
	: >"$WORK/backing/PG_VERSION" # a data directory: passthrough mounts over its pg_wal
	MNT=$WORK/mnt
	"$PGIOFS" -d -o allow_other --set "files.wal_mode=$mode" --set "fuse.time_gran_ns=$gran" \
		"$WORK/backing" "$MNT" 2>"$log" &
	DPID=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$MNT" && break
		sleep 0.05
	done
	mountpoint -q "$MNT" || fail_log "$mode: pgiofs did not mount" "$log"
	if [ "$mode" = passthrough ]; then # the WAL mount comes a moment later (-f)
		for ((i = 0; i < 100; i++)); do
			mountpoint -q "$MNT/pg_wal" && break
			sleep 0.05
		done
		mountpoint -q "$MNT/pg_wal" || fail_log "$mode: no WAL mount over pg_wal" "$log"
	fi
	# what the counts include besides the commits: create, open, close
	python3 - "$MNT/pg_wal/000000010000000000000001" "$sync" "$COMMITS" <<-'PY' ||
		import os, sys
		path, sync, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
		fd = os.open(path, os.O_RDWR | os.O_CREAT | (os.O_DSYNC if sync == "open_datasync" else 0), 0o600)
		page = b"w" * 8192
		for i in range(n):
		    os.pwrite(fd, page, (i % 2048) * 8192)
		    if sync == "fdatasync":
		        os.fdatasync(fd)
		os.close(fd)
	PY
		fail_log "$mode: the commits failed" "$log"
	unmount "$MNT"
	MNT=""
	wait "$DPID" 2>/dev/null
	DPID=""
	printf '%-12s %-10s %-14s' "$mode" "$([ "$gran" = 1 ] && echo "1 ns" || echo "1 s")" "$sync"
	grep -o 'opcode: [A-Z_]*' "$log" | awk -v n="$COMMITS" '{ c[$2]++ }
		END {
			split("WRITE SETATTR FSYNC FLUSH GETATTR", k, " ")
			for (i = 1; i <= 5; i++) printf " %8.2f", c[k[i]] / n
			printf "\n" }'
}

echo "FUSE requests per commit ($COMMITS commits of 8 KiB to one WAL segment; pgiofs $("$PGIOFS" --version | awk '{ print $2 }'), kernel $(uname -r))"
printf '%-12s %-10s %-14s %8s %8s %8s %8s %8s\n' wal_mode time_gran wal_sync WRITE SETATTR FSYNC FLUSH GETATTR
for m in $MODES; do
	for g in 1 1000000000; do
		for s in fdatasync open_datasync; do
			progress "$m, time_gran_ns $g, $s"
			cell "$m" "$g" "$s"
		done
	done
done
progress "done"
exit 0
