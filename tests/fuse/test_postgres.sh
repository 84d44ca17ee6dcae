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
#   1. the postmaster is killed with SIGKILL (then the rest of its group);
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

need_root
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"
[ -x "$PGBIN/initdb" ] || fail "PostgreSQL binaries not found in $PGBIN"
NATIVE=${PGIOFS_TEST_NATIVE:-0}
read -r -a EXTRA_ARGS <<<"${PGIOFS_TEST_ARGS:-}"
if [ "$NATIVE" != 1 ]; then
	[ -x "$BIN/pgiofs" ] || fail "$BIN/pgiofs is missing: run make"
fi

PG_UID=$(id -u postgres)
PG_GID=$(id -g postgres)
T0=$(date +%s)
CMD_TIMEOUT=${PG_CMD_TIMEOUT:-150}

log() { printf '[%3ds] %s\n' $(($(date +%s) - T0)) "$*"; }

# fail_log MSG FILE -- show the end of FILE, then fail with MSG.
fail_log() {
	echo "---- last lines of $2" >&2
	tail -n 30 "$2" >&2 2>/dev/null
	echo "----" >&2
	fail "$1"
}

# pgc PROG ARGS... -- run a PostgreSQL program as postgres, with a timeout
# so that a hung file system fails the test instead of hanging it.
pgc() {
	local prog=$1
	shift
	timeout -k 5 "$CMD_TIMEOUT" runuser -u postgres -- "$PGBIN/$prog" "$@"
}

# pgfile CMD... -- run a file utility as postgres: in round b root cannot
# enter the mount at all (no allow_other).
pgfile() { timeout -k 5 30 runuser -u postgres -- "$@"; }

# sql QUERY -- run QUERY in database postgres, print tuples only.
sql() { pgc psql -X -At -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres -c "$1"; }

# free_port -- print a TCP port nobody listens on (the server only uses it
# to name its socket in $RUN, but keep clear of other servers anyway).
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		if ! ss -Hltn "sport = :$p" | grep -q . &&
			! ss -Hlx | grep -q "\.s\.PGSQL\.$p\b"; then
			echo "$p"
			return
		fi
	done
}

# fuse_conn MNT -- print the fuse connection number of the mount at MNT.
fuse_conn() {
	awk -v m="$1" '$5 == m {
		for (i = 7; i <= NF && $i != "-"; i++) ;
		if ($(i + 1) ~ /^fuse/) { split($3, d, ":"); print d[2] }
	}' /proc/self/mountinfo
}

# fuse_abort MNT -- abort the FUSE connection of MNT, as if the daemon had
# died: through fusectl if mounted, else with a forced unmount (the kernel
# aborts the connection before it finds the mount busy).
fuse_abort() {
	local conn
	conn=$(fuse_conn "$1")
	[ -n "$conn" ] || return 0
	if [ -w "/sys/fs/fuse/connections/$conn/abort" ]; then
		echo 1 >"/sys/fs/fuse/connections/$conn/abort"
	else
		umount -f "$1" 2>/dev/null
	fi
	return 0
}

# force_umount MNT -- clean-up: unmount MNT, aborting the FUSE connection
# if the daemon does not answer.
force_umount() {
	local mnt=$1
	[ -n "$(fuse_conn "$mnt")" ] || return 0
	timeout 20 fusermount3 -u "$mnt" 2>/dev/null && return 0
	timeout 20 umount "$mnt" 2>/dev/null && return 0
	echo "test_postgres: aborting the hung fuse connection of $mnt" >&2
	fuse_abort "$mnt"
	timeout 20 umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
}

# wait_daemon_gone MNT -- wait up to 20 s for the pgiofs serving MNT to exit.
wait_daemon_gone() {
	local i
	for ((i = 0; i < 200; i++)); do
		pgrep -f "pgiofs .* $1\$" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# is_ours PID -- true if PID is a running postgres/psql/pgbench process
# (guards against killing a recycled pid at clean-up).
is_ours() {
	local exe
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
	case "$exe" in "$PGBIN"/* | /usr/bin/* | /usr/sbin/* | /bin/*) return 0 ;; esac
	return 1
}

# kill_group PGID -- SIGKILL every remaining process of group PGID that we
# started (postmaster and its backends, or a client pipeline).
kill_group() {
	local pgid=$1 p
	for p in $(pgrep -g "$pgid" 2>/dev/null); do
		is_ours "$p" && kill -KILL "$p" 2>/dev/null
	done
}

# wait_group_gone PGID SECS -- wait until no process of group PGID is left.
wait_group_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		pgrep -g "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# cleanup_cluster RUN -- at exit: kill the clients and the server recorded
# in RUN (pg_ctl put the postmaster in its own session, so its pid is the
# process group of all its backends).
cleanup_cluster() {
	local run=$1 pid
	for pid in $(cat "$run/clients.pids" 2>/dev/null); do
		kill_group "$pid"
	done
	pid=$(cat "$run/postmaster.pid" 2>/dev/null)
	[ -n "$pid" ] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -QUIT "$pid" 2>/dev/null # immediate shutdown
		wait_group_gone "$pid" 10
	fi
	kill_group "$pid"
	wait_group_gone "$pid" 10
}

# start_server -- start the cluster in $PGDATA and record its postmaster.
# Each start logs to its own file, $SERVER_LOG.
START_NO=0
start_server() {
	START_NO=$((START_NO + 1))
	SERVER_LOG=$RUN/server.$START_NO.log
	pgc pg_ctl -D "$PGDATA" -l "$SERVER_LOG" -w -t 120 start >"$RUN/pg_ctl.out" 2>&1 ||
		fail_log "$LABEL: pg_ctl start failed" "$SERVER_LOG"
	pgfile head -n 1 "$PGDATA/postmaster.pid" >"$RUN/postmaster.pid" ||
		fail "$LABEL: cannot read $PGDATA/postmaster.pid"
	PMPID=$(cat "$RUN/postmaster.pid")
	[ "$(ps -o pgid= -p "$PMPID" | tr -d ' ')" = "$PMPID" ] ||
		fail "$LABEL: postmaster $PMPID is not a process group leader"
}

stop_server() {
	pgc pg_ctl -D "$PGDATA" -w -t 120 -m fast stop >>"$RUN/pg_ctl.out" 2>&1 ||
		fail_log "$LABEL: pg_ctl stop failed" "$SERVER_LOG"
	wait_group_gone "$PMPID" 20 || fail "$LABEL: postgres processes left after stop"
	rm -f "$RUN/postmaster.pid"
}

# amcheck WHEN -- pg_amcheck every database (installing amcheck where
# missing), heap and btree, all index tuples: must report nothing.
amcheck() {
	local out=$RUN/amcheck.$1.out rc
	pgc pg_amcheck -h "$RUN" -p "$PORT" -U postgres --all --install-missing \
		--heapallindexed >"$out" 2>"$out.err"
	rc=$?
	grep -v 'NOTICE:  extension "amcheck" already exists' "$out.err" >>"$out"
	[ $rc -eq 0 ] && [ ! -s "$out" ] || fail_log "$LABEL: pg_amcheck $1 exited $rc or reported problems" "$out"
	log "$LABEL: pg_amcheck $1: clean"
}

# check_balances -- the tpcb invariant: every transaction moved the same
# delta into one account, teller, branch and a history row.
check_balances() {
	local r a t b h
	r=$(sql "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' ||
	               (SELECT sum(tbalance) FROM pgbench_tellers) || ' ' ||
	               (SELECT sum(bbalance) FROM pgbench_branches) || ' ' ||
	               (SELECT coalesce(sum(delta), 0) FROM pgbench_history)") ||
		fail_log "$LABEL: balance query failed" "$SERVER_LOG"
	read -r a t b h <<<"$r"
	[ "$a" = "$t" ] && [ "$t" = "$b" ] && [ "$b" = "$h" ] ||
		fail "$LABEL: pgbench balances disagree after $1 (accounts tellers branches history: $r)"
	log "$LABEL: pgbench balances agree after $1 ($a)"
}

# start_ledger N FIRST -- background client N: inserts FIRST, FIRST+1, ...
# each in its own committed transaction; psql prints an id (line-buffered)
# only after the server acknowledged the commit.
start_ledger() {
	local n=$1 first=$2
	setsid bash -c "seq $first $((first + 9999999)) |
		sed 's/.*/INSERT INTO ledger VALUES (&) RETURNING id;/' |
		runuser -u postgres -- stdbuf -oL '$PGBIN/psql' -X -q -At -v ON_ERROR_STOP=1 \
			-h '$RUN' -p $PORT -d postgres" >"$RUN/ledger.$n" 2>"$RUN/ledger.$n.err" &
	echo $! >>"$RUN/clients.pids"
}

# check_ledger N FIRST -- every id client N recorded is present, the ids
# present are FIRST..K without gaps, and K is the last recorded id or one
# more (a commit whose acknowledgement the crash swallowed).
check_ledger() {
	local n=$1 first=$2 f=$RUN/ledger.$1 recorded last r cnt lo hi missing
	recorded=$(wc -l <"$f")
	last=$(tail -n 1 "$f")
	[ "$recorded" -gt 0 ] || fail "$LABEL: ledger client $n recorded no commit before the crash"
	[ "$last" -eq $((first + recorded - 1)) ] ||
		fail "$LABEL: ledger client $n file is not sequential (last $last, $recorded lines)"
	r=$(pgc psql -X -q -At -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres \
		-c "CREATE TEMP TABLE seen (id bigint)" \
		-c "\\copy seen FROM '$f'" \
		-c "SELECT (SELECT count(*) FROM seen s WHERE NOT EXISTS
		                  (SELECT 1 FROM ledger l WHERE l.id = s.id)) || ' ' ||
		           count(*) || ' ' || min(id) || ' ' || max(id)
		      FROM ledger WHERE id BETWEEN $first AND $((first + 9999999))") ||
		fail_log "$LABEL: ledger query failed" "$SERVER_LOG"
	read -r missing cnt lo hi <<<"$r"
	log "$LABEL: ledger $n: $recorded ids acknowledged, $cnt present ($lo..$hi), $missing missing"
	[ "$missing" -eq 0 ] || fail "$LABEL: $missing acknowledged commits of ledger client $n lost in the crash"
	[ "$lo" -eq "$first" ] && [ "$cnt" -eq $((hi - lo + 1)) ] ||
		fail "$LABEL: ledger client $n has gaps: $cnt ids in $lo..$hi"
	[ "$hi" -eq "$last" ] || [ "$hi" -eq $((last + 1)) ] ||
		fail "$LABEL: ledger client $n: max id $hi, last acknowledged $last"
}

# wait_lines FILE N SECS -- wait until FILE has at least N lines.
wait_lines() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# ledger_first N -- the first id of ledger client N (each has its own range).
ledger_first() { echo $((($1 - 1) * 1000000000 + 1)); }

# crash WHAT A B -- run ledger clients A and B and a pgbench load, then crash:
# WHAT=postgres: SIGKILL the postmaster, then its backends;
# WHAT=fuse: abort the FUSE connection first (the kernel drops every dirty
# page it has not sent to pgiofs: only what PostgreSQL fsynced must be in
# the backing directory), kill postgres, unmount and mount again.  Then restart, check that crash recovery ran and that no
# acknowledged commit of any ledger client so far is lost.
crash() {
	local what=$1 a=$2 b=$3 pid conn n
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
		log "$LABEL: abort fuse connection $conn, kill -9 postmaster $PMPID (ledger: $(wc -l <"$RUN/ledger.$a") + $(wc -l <"$RUN/ledger.$b") ids acknowledged)"
		fuse_abort "$MNT"
		! pgfile stat "$MNT/." >/dev/null 2>&1 || fail "$LABEL: fuse connection $conn still answers after the abort"
	else
		log "$LABEL: kill -9 postmaster $PMPID (ledger: $(wc -l <"$RUN/ledger.$a") + $(wc -l <"$RUN/ledger.$b") ids acknowledged)"
	fi
	kill -KILL "$PMPID"
	kill_group "$PMPID"
	wait_group_gone "$PMPID" 20 || fail "$LABEL: postgres processes survive SIGKILL"
	for pid in $(cat "$RUN/clients.pids"); do
		wait_group_gone "$pid" 20 || { kill_group "$pid"; fail "$LABEL: client $pid did not notice the crash"; }
	done
	rm -f "$RUN/postmaster.pid"
	if [ "$what" = fuse ]; then
		umount_fs
		mount_fs
	fi

	start_server
	grep -q "database system was interrupted\|not properly shut down" "$SERVER_LOG" ||
		fail_log "$LABEL: restart after the crash did not run crash recovery" "$SERVER_LOG"
	[ "$(sql 'SELECT pg_is_in_recovery()')" = f ] || fail "$LABEL: still in recovery after restart"
	log "$LABEL: crash recovery done ($(grep -o 'redo done at [^ ]*' "$SERVER_LOG" | tail -n 1))"
	for ((n = 1; n <= b; n++)); do
		check_ledger "$n" "$(ledger_first "$n")"
	done
	check_balances "crash recovery"
	amcheck "after-$what-crash"
}

# scenario LABEL PGDATA -- the PostgreSQL part of a round, on $MNT.
scenario() {
	LABEL=$1 PGDATA=$2
	PORT=$(free_port)
	on_exit "cleanup_cluster '$RUN'"

	log "$LABEL: initdb $PGDATA (port $PORT, socket in $RUN)"
	pgc initdb -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C -k \
		--no-instructions >"$RUN/initdb.log" 2>&1 ||
		fail_log "$LABEL: initdb failed" "$RUN/initdb.log"
	# Small buffers and WAL so that eviction, checkpoints (sync_file_range,
	# fsync) and WAL recycling (durable rename) all happen during the test.
	pgfile tee -a "$PGDATA/postgresql.conf" >/dev/null <<-EOF || fail "$LABEL: cannot write postgresql.conf"
		# test_postgres.sh
		listen_addresses = ''
		port = $PORT
		unix_socket_directories = '$RUN'
		fsync = on
		synchronous_commit = on
		full_page_writes = on
		recovery_init_sync_method = fsync
		shared_buffers = 16MB
		min_wal_size = 32MB
		max_wal_size = 64MB
		checkpoint_timeout = 30s
		log_checkpoints = on
	EOF

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
