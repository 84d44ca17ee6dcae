#!/bin/bash
# test_postgres.sh -- PostgreSQL 15 end to end on a pgiofs mount (issue 2,
# tests 3 and 4).
#
# Two rounds, each with its own backing directory and mount:
#   a. pgiofs run by root with -o allow_other; the cluster belongs to postgres.
#   b. pgiofs run by the postgres user itself (/dev/fuse is made 0666 for the
#      duration of the test, as Debian ships it, and restored at exit).
# Each round: initdb (data checksums, fsync on) as postgres on the mount,
# pgbench -i -s 2, pgbench -T 5, pg_amcheck --all clean.  Then two crashes,
# each while two ledger clients insert sequential ids one committed
# transaction at a time (writing an id to a file only after the server
# acknowledged its commit) beside a pgbench tpcb load:
#   1. the postmaster and every backend are killed with SIGKILL;
#   2. the FUSE connection is aborted, then postgres killed and the backing
#      directory mounted again: as if pgiofs had died, the kernel drops the
#      dirty pages it had not sent yet and pgiofs loses whatever it held;
#      all PostgreSQL may rely on is what an fsync or fdatasync had made
#      pgiofs write to the backing files before it returned.  (The backing
#      page cache survives, so this cannot catch a missing fsync on the
#      backing files themselves; that needs power-loss emulation.)
# After each, the server restarts and recovers, and every id a client
# recorded must be present (no gap, at most one unacknowledged id more per
# client), the tpcb balances must add up and pg_amcheck must be clean.
# Then every file under the data directory must be postgres:postgres in the
# backing directory (test 4; what matters is round a, where pgiofs runs as
# root), and after unmounting the cluster is started directly on the backing
# directory and must hold the same rows.
#
# Whatever happens, the servers are stopped, clients killed, mounts removed
# (aborting the FUSE connection if it hangs) and temporary files deleted.
#
# Environment: PGIOFS_TEST_ARGS adds pgiofs options (e.g. "--config FILE");
# PGIOFS_TEST_NATIVE=1 runs the same scenario on plain directories (to tell
# a pgiofs bug from a test bug); PGIOFS_TEST_ROUNDS="a" or "b" runs one round.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

NATIVE=${PGIOFS_TEST_NATIVE:-0}
read -r -a EXTRA_ARGS <<<"${PGIOFS_TEST_ARGS:-}"
if [ "$NATIVE" != 1 ]; then
	[ -x "$BIN/pgiofs" ] || fail "$BIN/pgiofs is missing: run make"
fi

PG_UID=$(id -u postgres)
PG_GID=$(id -g postgres)
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

# crash WHAT A B -- run ledger clients A and B and a pgbench load, then crash:
# WHAT=postgres: SIGKILL the postmaster, then its backends;
# WHAT=fuse: abort the FUSE connection first (the kernel drops every dirty
# page it has not sent to pgiofs: only what PostgreSQL fsynced must be in
# the backing directory), kill postgres, unmount and mount again.  Then restart, check that crash recovery ran and that no
# acknowledged commit of any ledger client so far is lost.
crash() {
	local what=$1 a=$2 b=$3 conn
	: >"$RUN/clients.pids"
	start_ledger "$a" "$(ledger_first "$a")"
	start_ledger "$b" "$(ledger_first "$b")"
	setsid runuser -u postgres -- "$PGBIN/pgbench" -h "$RUN" -p "$PORT" -n -c 2 -j 1 -T 120 \
		postgres >"$RUN/pgbench-crash.$what.log" 2>&1 &
	echo $! >>"$RUN/clients.pids"
	wait_lines "$RUN/ledger.$a" 20 30 || fail_log "$LABEL: ledger client $a does not commit" "$RUN/ledger.$a.err"
	sql "CHECKPOINT" >/dev/null || fail_log "$LABEL: CHECKPOINT failed" "$SERVER_LOG"
	sleep 2
	if [ "$what" = fuse ]; then
		conn=$(fuse_conn "$MNT")
		[ -n "$conn" ] || fail "$LABEL: no fuse connection for $MNT"
		log "$LABEL: abort fuse connection $conn, kill -9 postgres (ledger: $(wc -l <"$RUN/ledger.$a") + $(wc -l <"$RUN/ledger.$b") ids acknowledged)"
		fuse_abort "$MNT"
		! pgfile stat "$MNT/." >/dev/null 2>&1 || fail "$LABEL: fuse connection $conn still answers after the abort"
	else
		log "$LABEL: kill -9 postgres (ledger: $(wc -l <"$RUN/ledger.$a") + $(wc -l <"$RUN/ledger.$b") ids acknowledged)"
	fi
	# the clients must notice, not hang: 60 s bounds that after an abort,
	# where a loaded two-CPU machine once took over 20 s
	if [ "$what" = fuse ]; then kill_postgres 60; else kill_postgres 20; fi
	if [ "$what" = fuse ]; then
		umount_fs
		mount_fs
	fi
	recover_and_check "$b"
	check_balances "crash recovery"
	amcheck "after-$what-crash"
}

# scenario LABEL PGDATA -- the PostgreSQL part of a round, on $MNT.
scenario() {
	LABEL=$1 PGDATA=$2
	PORT=$(free_port)
	on_exit "cleanup_cluster '$RUN'"

	init_cluster </dev/null

	start_server
	log "$LABEL: server started (postmaster $PMPID)"
	pgc pgbench -h "$RUN" -p "$PORT" -i -s 2 -q postgres >"$RUN/pgbench-i.log" 2>&1 ||
		fail_log "$LABEL: pgbench -i -s 2 failed" "$RUN/pgbench-i.log"
	log "$LABEL: pgbench -i -s 2: $(grep -o 'done in.*' "$RUN/pgbench-i.log")"
	pgc pgbench -h "$RUN" -p "$PORT" -c 2 -j 2 -T 5 postgres >"$RUN/pgbench-T.log" 2>&1 ||
		fail_log "$LABEL: pgbench -T 5 failed" "$RUN/pgbench-T.log"
	log "$LABEL: pgbench -T 5: $(grep -m1 '^tps' "$RUN/pgbench-T.log")"
	amcheck before-crash
	check_balances "pgbench -T 5"

	sql "CREATE TABLE ledger (id bigint PRIMARY KEY)" >/dev/null ||
		fail_log "$LABEL: cannot create the ledger table" "$SERVER_LOG"
	crash postgres 1 2
	[ "$NATIVE" = 1 ] || crash fuse 3 4
	LEDGER_COUNT=$(sql "SELECT count(*) FROM ledger")
	HISTORY_COUNT=$(sql "SELECT count(*) FROM pgbench_history")
	stop_server
	log "$LABEL: server stopped"
	# what the killed servers left in shared memory goes (a CI machine runs
	# this suite many times)
	release_server_shm "$RUN"
	local name
	for name in $(sort -u "$RUN/shm.dsm"); do
		[ ! -e "/dev/shm/$name" ] || fail "$LABEL: a killed server's /dev/shm/$name is left"
	done
	awk 'NR == FNR { ids[$2] = 1; next } ($2 in ids) { exit 1 }' "$RUN/shm.sysv" /proc/sysvipc/shm ||
		fail "$LABEL: a killed server's System V segment is left"
	[ -s "$RUN/shm.sysv" ] && [ -s "$RUN/shm.dsm" ] || fail "$LABEL: no shared memory recorded (test broken)"
	log "$LABEL: none left of the servers' $(sort -u "$RUN/shm.dsm" | wc -l) /dev/shm and $(wc -l <"$RUN/shm.sysv") System V segments"
}

# native_recheck LABEL PGDATA -- after unmounting: start the cluster
# directly on the backing directory; what it holds must be what the server
# saw through the mount.
native_recheck() {
	LABEL="$1 (backing)" PGDATA=$2
	start_server
	local l h
	l=$(sql "SELECT count(*) FROM ledger")
	h=$(sql "SELECT count(*) FROM pgbench_history")
	[ "$l" = "$LEDGER_COUNT" ] && [ "$h" = "$HISTORY_COUNT" ] ||
		fail "$LABEL: backing directory has ledger $l / history $h rows, mount had $LEDGER_COUNT / $HISTORY_COUNT"
	check_balances "unmount"
	stop_server
	log "$LABEL: backing directory holds the same data ($l ledger, $h history rows)"
}

# check_ownership BACKING_DATA -- test 4: everything under the data
# directory, as stored in the backing directory, is postgres:postgres.
check_ownership() {
	local dir=$1 n bad
	n=$(find "$dir" | wc -l)
	bad=$(find "$dir" \( ! -uid "$PG_UID" -o ! -gid "$PG_GID" \) -printf '%u:%g %p\n' | head -n 20)
	[ -z "$bad" ] || fail "$LABEL: files created by postgres are not owned by postgres:postgres in the backing directory:
$bad"
	[ "$n" -gt 500 ] || fail "$LABEL: only $n entries under $dir?"
	log "$LABEL: ownership: all $n entries under the backing data directory are postgres:postgres"
}

# mount_fs -- mount $BACKING on $MNT, pgiofs run by $MOUNT_AS: root (with
# allow_other) or postgres.
mount_fs() {
	if [ "$MOUNT_AS" = root ]; then
		pgiofs_mount "$BACKING" "$MNT" -o allow_other "${EXTRA_ARGS[@]}"
	else
		# Not pgiofs_mount: root may not enter a user's mount without
		# allow_other, so `mountpoint` as root fails; ask /proc instead.
		timeout 30 runuser -u postgres -- "$BIN/pgiofs" "${EXTRA_ARGS[@]}" "$BACKING" "$MNT" ||
			fail "$LABEL: pgiofs as postgres failed to mount $BACKING on $MNT"
		[ -n "$(fuse_conn "$MNT")" ] || fail "$LABEL: $MNT is not a fuse mount after pgiofs returned"
		pgfile mountpoint -q "$MNT" || fail "$LABEL: postgres cannot use its own mount $MNT"
	fi
	log "$LABEL: pgiofs (run by $MOUNT_AS) mounted $BACKING on $MNT"
}

# umount_fs -- unmount $MNT as its owner; the daemon must exit.
umount_fs() {
	if [ "$MOUNT_AS" = root ]; then
		pgiofs_umount "$MNT" || fail "$LABEL: unmounting $MNT failed"
	else
		timeout 30 runuser -u postgres -- fusermount3 -u "$MNT" ||
			fail "$LABEL: fusermount3 -u $MNT as postgres failed"
	fi
	wait_daemon_gone "$MNT" || fail "$LABEL: pgiofs still running 20 s after unmounting $MNT"
	assert_no_mount "$MNT"
	log "$LABEL: unmounted $MNT"
}

# round LABEL USER -- a round: a fresh backing directory mounted by pgiofs
# running as USER, PostgreSQL on it, then the backing directory checked.
round() {
	local tmp data bad
	LABEL=$1 MOUNT_AS=$2
	tmp=$(mktempdir)
	on_exit "rm -rf '$tmp'" # mktempdir's own registration dies with $(...)
	BACKING=$tmp/backing MNT=$tmp/mnt RUN=$tmp/run
	mkdir -p "$BACKING" "$MNT" "$RUN"
	chown postgres: "$RUN"
	chmod 700 "$RUN"
	[ "$MOUNT_AS" = root ] || chown postgres: "$BACKING" "$MNT"
	if [ "$NATIVE" = 1 ]; then
		MNT=$BACKING
	else
		[ "$MOUNT_AS" = root ] || fuse_dev_open_to_all
		on_exit "force_umount '$MNT'"
		mount_fs
	fi
	data=data
	if [ "$MOUNT_AS" = root ]; then
		# A directory for postgres, made and handed over through the mount.
		mkdir "$MNT/pg" && chown postgres:postgres "$MNT/pg" ||
			fail "$LABEL: cannot mkdir/chown through the mount"
		[ "$(stat -c %u:%g "$BACKING/pg")" = "$PG_UID:$PG_GID" ] ||
			fail "$LABEL: chown through the mount did not reach the backing directory ($(stat -c %u:%g "$BACKING/pg"))"
		data=pg/data
	fi

	scenario "$LABEL" "$MNT/$data"
	check_ownership "$BACKING/$data"
	if [ "$MOUNT_AS" = root ]; then
		# The kernel's view through the mount must agree.
		bad=$(find "$MNT/$data" \( ! -uid "$PG_UID" -o ! -gid "$PG_GID" \) -printf '%u:%g %p\n' | head -n 5)
		[ -z "$bad" ] || fail "$LABEL: through the mount, files are not owned by postgres:
$bad"
	fi

	if [ "$NATIVE" != 1 ]; then
		umount_fs
		native_recheck "$LABEL" "$BACKING/$data"
	fi
}

for r in ${PGIOFS_TEST_ROUNDS:-a b}; do
	case $r in
		a) round a root ;;
		b) round b postgres ;;
		*) fail "PGIOFS_TEST_ROUNDS: unknown round $r (a, b)" ;;
	esac
done
log "all checks passed"
exit 0
