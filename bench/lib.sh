#!/bin/bash
# bench/lib.sh -- helpers shared by the benchmark scripts (source it after
# setting ME to the script's name and PGBIN to the PostgreSQL binaries).
#
#   die MSG                   print "ME: MSG" on stderr, exit 1
#   range NAME VALUE MIN MAX  VALUE must be an integer in MIN..MAX
#   progress MSG              "[  12s] MSG" on stderr (T0 = start time)
#   fail_log MSG FILE         show the end of FILE, then die MSG
#   now                       seconds since the epoch, with nanoseconds
#   free_port                 a TCP port and socket name nobody listens on
#   kill_postgres PID         immediate shutdown of the server PID leads
#   unmount MNT               unmount a FUSE mount; abort it if it hangs
#   build_floorfs OUT         compile bench/floorfs.c to OUT (its log beside)
#   median VALUES             median of a space-separated list
#   last_of VALUES            last element of a space-separated list
#   pgdisk_teardown           end what a benchmark started on pgdisk (LOOPS,
#                             MNTS, PIDS, all under WORK)
#   AS_PG                     array: run a command as postgres
#
# Commands run as postgres are spelled out ("${AS_PG[@]}" cmd ...), not
# wrapped in a shell function: bash applies a function call's redirections in
# the shell itself, so an interrupt trap taken meanwhile would write into that
# command's log.

: "${ME:=bench}"
# PostgreSQL's server binaries: $PGBIN, else pg_config's, else Debian's 15
PGBIN=${PGBIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
[ -x "$PGBIN/initdb" ] || PGBIN=/usr/lib/postgresql/15/bin
T0=${T0:-$(date +%s)}
# shellcheck disable=SC2034 # used by the scripts that source this file
AS_PG=(runuser -u postgres --)

die() {
	echo "$ME: $*" >&2
	exit 1
}

range() {
	[[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
		die "$1 must be an integer from $3 to $4, not \"$2\""
}

progress() { printf '[%4ds] %s\n' $(($(date +%s) - T0)) "$*" >&2; }

fail_log() {
	echo "---- last lines of $2" >&2
	tail -n 20 "$2" >&2 2>/dev/null
	die "$1"
}

now() { date +%s.%N; }

free_port() {
	local p
	for ((p = 40000 + RANDOM % 10000; ; p++)); do
		if ! ss -Hltn "sport = :$p" | grep -q . && ! ss -Hlx | grep -q "\.s\.PGSQL\.$p\b"; then
			echo "$p"
			return
		fi
	done
}

# kill_postgres PID -- stop the server whose postmaster is PID (pg_ctl made it
# a session leader, so its backends share its process group).
kill_postgres() {
	local pid=$1 i p
	[ -n "$pid" ] || return 0
	if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$PGBIN/postgres" ]; then
		kill -QUIT "$pid" 2>/dev/null # immediate shutdown
	fi
	for ((i = 0; i < 100; i++)); do
		pgrep -g "$pid" >/dev/null || return 0
		sleep 0.1
	done
	for p in $(pgrep -g "$pid"); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$PGBIN/postgres" ] && kill -KILL "$p"
	done
}

# unmount MNT -- unmount; if the daemon hangs, abort its FUSE connection.
# Waits up to 10 s for the daemon serving MNT to exit.
unmount() {
	local mnt=$1 conn i
	conn=$(awk -v m="$mnt" '$5 == m {
		for (i = 7; i <= NF && $i != "-"; i++) ;
		if ($(i + 1) ~ /^fuse/) { split($3, d, ":"); print d[2] }
	}' /proc/self/mountinfo)
	[ -n "$conn" ] || return 0
	# -R: the WAL mounts pgiofs made over pg_wal directories first
	if ! timeout 60 umount -R "$mnt" 2>/dev/null && ! timeout 60 fusermount3 -u "$mnt" 2>/dev/null; then
		echo "$ME: aborting the hung FUSE connection of $mnt" >&2
		echo 1 >"/sys/fs/fuse/connections/$conn/abort" 2>/dev/null
		umount -R -l "$mnt" 2>/dev/null
	fi
	for ((i = 0; i < 100; i++)); do
		pgrep -f -- " $mnt\$" >/dev/null || return 0
		sleep 0.1
	done
}

build_floorfs() {
	cc -O2 -D_GNU_SOURCE -I/usr/include/fuse3 -o "$1" "$TOP/bench/floorfs.c" -lfuse3 -lpthread \
		2>"$1.cc.log" || fail_log "cannot build bench/floorfs.c" "$1.cc.log"
}

median() {
	echo "$1" | tr ' ' '\n' | grep . | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

last_of() { echo "$1" | awk '{ print $NF }'; }

# start_server DATADIR / stop_server DATADIR -- pg_ctl as the postgres user
# (AS_PG), the server log in $LOG; PM_PID is the postmaster while it runs
start_server() {
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$1" -l "$LOG" -w -t 300 start >/dev/null 2>&1 ||
		fail_log "pg_ctl start on $1 failed" "$LOG"
	PM_PID=$(head -n 1 "$1/postmaster.pid")
}

stop_server() {
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$1" -w -t 300 -m fast stop >/dev/null 2>&1 ||
		fail_log "pg_ctl stop on $1 failed" "$LOG"
	PM_PID=""
}

# need_tracefs -- the kernel's tracing file system at /sys/kernel/tracing,
# whose tracepoints bpftrace attaches to: mounted there where it is not (a
# container or a minimal boot may leave it out) and left mounted, as a
# system that boots with it has it.
need_tracefs() {
	[ -d /sys/kernel/tracing/events ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && [ -d /sys/kernel/tracing/events ] ||
		die "cannot mount tracefs on /sys/kernel/tracing: bpftrace needs the kernel's tracepoints"
}

# drop_caches -- write everything back and drop the page cache (cold reads).
# On a virtual machine whose balloon driver reports free memory to the host
# (free page reporting: /sys/module/page_reporting), memory freed moments
# ago is still backed by the host and fast to fill, while memory reported
# costs a host fault per page on first touch: a cold read right after the
# drop would go as fast as the amount of memory the step before it had
# cached (2.5 GB/s against 0.7 for the same file).  So there, wait until the
# host has been given the freed memory (the kernel's count of reported
# memory still for 2 s, or 15 s at most), and every cold read starts alike.
drop_caches() {
	local rep=/sys/module/page_reporting/parameters/reported_kib last now i same=0
	sync
	echo 3 >/proc/sys/vm/drop_caches || die "cannot write /proc/sys/vm/drop_caches"
	[ -d /sys/module/page_reporting ] || return 0
	if [ ! -r "$rep" ]; then
		sleep 5
		return 0
	fi
	last=$(cat "$rep")
	for ((i = 0; i < 30 && same < 4; i++)); do
		sleep 0.5
		now=$(cat "$rep")
		if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
		last=$now
	done
}

# pgdisk_teardown -- the loop devices in LOOPS still on a file under WORK
# (a number let go may be another's by now), then the mounts in MNTS (which
# ends each pgdisk; its executable may have been rebuilt meanwhile, so not
# by its path), then waits for the pgdisk processes in PIDS serving under
# WORK; one still mounted (a loop device not let go yet) detaches its mount
# on SIGTERM and exits once the disk is closed.
pgdisk_teardown() {
	local l m p i
	for l in "${LOOPS[@]}"; do
		case $(cat "/sys/block/${l#/dev/}/loop/backing_file" 2>/dev/null) in
			"$WORK"/*) losetup -d "$l" 2>/dev/null ;;
		esac
	done
	for m in "${MNTS[@]}"; do mountpoint -q "$m" && umount "$m" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF "$WORK/" && kill -TERM "$p"
		for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
}
