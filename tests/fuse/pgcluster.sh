# pgcluster.sh -- helpers shared by the PostgreSQL scenarios on a pgiofs
# mount (test_postgres.sh, test_crash*.sh): a cluster as the postgres user
# with a timeout on every command, servers and clients in their own process
# groups (killed and waited for at exit), a client-side ledger of
# acknowledged commits checked after a crash, pg_amcheck, the pgbench
# balance invariant, and FUSE connection handling (abort, forced unmount).
#
# Source it after tests/lib.sh (it needs root, the postgres user and the
# PostgreSQL binaries, and fails the test without them).  Callers set RUN (socket and log directory,
# owned by postgres), PORT, PGDATA and LABEL (prefix of messages); the
# helpers set SERVER_LOG and PMPID.  The load of the crash tests (ledger,
# import, pgbench clients) is at the end.  Not a test (no test_ prefix).

need_root
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"
[ -x "$PGBIN/initdb" ] || fail "PostgreSQL binaries not found in $PGBIN"

# crash_iterations QUICK LONG -- ITER: QUICK, or LONG with LONG=1 (make
# check-long), or $CRASH_ITERATIONS; SEED ($CRASH_SEED, default 1) seeds
# $RANDOM, which picks the crash points.
crash_iterations() {
	if [ "${LONG:-0}" = 1 ]; then ITER=${CRASH_ITERATIONS:-$2}; else ITER=${CRASH_ITERATIONS:-$1}; fi
	SEED=${CRASH_SEED:-1}
	RANDOM=$SEED
}

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

# server_up SECS -- the server answers within SECS seconds (after a PANIC
# the postmaster restarts and recovers by itself)
server_up() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		sql "SELECT 1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
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
	timeout 20 umount -R "$mnt" 2>/dev/null && return 0
	timeout 20 fusermount3 -u "$mnt" 2>/dev/null && return 0
	echo "test_postgres: aborting the hung fuse connection of $mnt" >&2
	fuse_abort "$mnt"
	timeout 20 umount -R "$mnt" 2>/dev/null || umount -R -l "$mnt" 2>/dev/null
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

# server_pids [RUN] -- every process of the cluster started from RUN
# ($RUN by default) still running: the postmaster and its backends and
# auxiliary processes.  Those make themselves session leaders, so they are
# not in the postmaster's process group, and they outlive a killed
# postmaster; they are found by their working directory, the data
# directory (start_server records the postmaster's in RUN/pgdata.cwd).
server_pids() {
	local run=${1:-$RUN} cwd p
	cwd=$(cat "$run/pgdata.cwd" 2>/dev/null) || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$PGBIN/postgres" ] || continue
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$cwd" ] && echo "${p#/proc/}"
	done
}

# note_server_shm [RUN] -- record the dynamic shared memory segments
# (/dev/shm) the cluster's processes have mapped, for release_server_shm.
note_server_shm() {
	local run=${1:-$RUN}
	# shellcheck disable=SC2046 # pids are words
	shm_mapped_by $(cat "$run/postmaster.pid" 2>/dev/null) $(server_pids "$run") >>"$run/shm.dsm"
}

# dsm_listed SEGMENT -- if SEGMENT is a PostgreSQL dynamic shared memory
# control segment, the names of the segments it lists (dsm.c's
# dsm_control_header: magic, nitems, maxitems, then 40-byte items from
# offset 16 whose first word is the handle and second the reference count).
dsm_listed() {
	[ -r "$1" ] || return 0
	python3 - "$1" <<-'PY'
		import struct, sys
		with open(sys.argv[1], "rb") as f:
		    head = f.read(16)
		    if len(head) < 16:
		        sys.exit(0)
		    magic, nitems, maxitems = struct.unpack_from("<III", head)
		    if magic != 0x9A503D32 or nitems > maxitems:
		        sys.exit(0)
		    for i in range(nitems):
		        handle, refcnt = struct.unpack("<II", f.read(40)[:8])
		        if refcnt:
		            print("PostgreSQL.%u" % handle)
	PY
}

# release_server_shm RUN -- once the cluster's processes are gone: remove
# the shared memory its killed servers left, as their next start would.  A
# restart does it only on the same device and inode of the data directory,
# and a remounted FUSE file system may have another device number (the
# kernel's next free anonymous one), so after a crash and remount
# PostgreSQL takes the old segments for another cluster's and leaves them.
# A segment some process still maps is kept; a System V segment only if
# the recorded postmaster created it and nothing is attached.
release_server_shm() {
	local run=$1 name pm id
	# a server's control segment lists every segment of its cluster, also
	# those no process had mapped when it was killed (pinned ones: the
	# statistics' and a parallel query's), as a restart would find them
	for name in $(sort -u "$run/shm.dsm" 2>/dev/null); do
		dsm_listed "/dev/shm/$name"
	done >>"$run/shm.dsm"
	# and those of a server that made them after it was last noted (a
	# crash restart makes a new control segment) and died on its own: the
	# segments made since the cluster started that no process maps and no
	# live server's control segment lists (another test's cluster; one
	# being made is mapped and listed within microseconds: 2 s of grace)
	if [ -e "$run/shm.since" ]; then
		live_dsm >"$run/shm.live"
		find /dev/shm -maxdepth 1 -name 'PostgreSQL.*' -user postgres -newer "$run/shm.since" \
			! -newermt '2 seconds ago' -printf '%f\n' 2>/dev/null |
			grep -vxF -f "$run/shm.live" >>"$run/shm.dsm"
	fi
	for name in $(sort -u "$run/shm.dsm" 2>/dev/null); do
		[ -e "/dev/shm/$name" ] || continue
		grep -qsF "/dev/shm/$name" /proc/[0-9]*/maps || rm -f "/dev/shm/$name"
	done
	# System V: the segments the recorded postmasters made (a crash restart
	# makes a new one) with nothing attached
	while read -r pm _; do
		awk -v pm="$pm" '$5 == pm && $7 == 0 { print $2 }' /proc/sysvipc/shm |
			while read -r id; do ipcrm -m "$id" 2>/dev/null; done
	done < <(cat "$run/shm.sysv" 2>/dev/null)
	return 0
}

# live_dsm -- the /dev/shm segments some process maps, and every segment
# the control segments among them list: the segments of running servers.
live_dsm() {
	local name
	for name in $(sed -n 's|.* /dev/shm/\(PostgreSQL\.[0-9]*\).*|\1|p' /proc/[0-9]*/maps 2>/dev/null | sort -u); do
		echo "$name"
		dsm_listed "/dev/shm/$name"
	done
}

# kill_server [RUN] -- SIGKILL every process of the cluster: the
# postmaster first, so that it starts no backend the list would miss.
kill_server() {
	local pm pids
	note_server_shm "$@"
	pm=$(cat "${1:-$RUN}/postmaster.pid" 2>/dev/null)
	[ -z "$pm" ] || ! is_ours "$pm" || kill -KILL "$pm" 2>/dev/null
	pids=$(server_pids "$@")
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
}

# wait_server_gone SECS [RUN] -- wait until no process of the cluster is
# left, the postmaster not even as a zombie (its pid would still make the
# next start refuse postmaster.pid).
wait_server_gone() {
	local i secs=$1 pm
	shift
	pm=$(cat "${1:-$RUN}/postmaster.pid" 2>/dev/null)
	for ((i = 0; i < secs * 10; i++)); do
		if [ -z "$(server_pids "$@")" ] && { [ -z "$pm" ] || [ ! -e "/proc/$pm" ]; }; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# cleanup_cluster RUN -- at exit: kill the clients and the server recorded
# in RUN.
cleanup_cluster() {
	local run=$1 pid
	for pid in $(cat "$run/clients.pids" 2>/dev/null); do
		kill_group "$pid"
	done
	pid=$(cat "$run/postmaster.pid" 2>/dev/null)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -QUIT "$pid" 2>/dev/null # immediate shutdown
		wait_server_gone 10 "$run"
	fi
	kill_server "$run"
	wait_server_gone 10 "$run"
	release_server_shm "$run"
}

# start_server -- start the cluster in $PGDATA and record its postmaster.
# Each start logs to its own file, $SERVER_LOG.  SERVER_ENV holds
# NAME=VALUE words for the server's environment (test_load.sh preloads a
# write-counting shim with them).
START_NO=0
SERVER_ENV=()
start_server() {
	START_NO=$((START_NO + 1))
	SERVER_LOG=$RUN/server.$START_NO.log
	timeout -k 5 "$CMD_TIMEOUT" runuser -u postgres -- env "${SERVER_ENV[@]}" \
		"$PGBIN/pg_ctl" -D "$PGDATA" -l "$SERVER_LOG" -w -t 120 start >"$RUN/pg_ctl.out" 2>&1 ||
		fail_log "$LABEL: pg_ctl start failed" "$SERVER_LOG"
	record_server
}

# record_server -- after a start: the postmaster in $RUN/postmaster.pid and
# $PMPID, its working directory (which server_pids looks for) in
# $RUN/pgdata.cwd.
record_server() {
	pgfile head -n 1 "$PGDATA/postmaster.pid" >"$RUN/postmaster.pid" ||
		fail "$LABEL: cannot read $PGDATA/postmaster.pid"
	PMPID=$(cat "$RUN/postmaster.pid")
	readlink "/proc/$PMPID/cwd" >"$RUN/pgdata.cwd" ||
		fail "$LABEL: cannot read the working directory of postmaster $PMPID"
	# postmaster.pid's 7th line: the System V segment's key and id
	echo "$PMPID $(pgfile sed -n '7s/^ *[0-9]* *//p' "$PGDATA/postmaster.pid")" >>"$RUN/shm.sysv"
	# the cluster's shared memory is newer than its first postmaster.pid
	[ -e "$RUN/shm.since" ] || touch -d "@$(pgfile stat -c %Y "$PGDATA/postmaster.pid")" "$RUN/shm.since"
	note_server_shm
}

stop_server() {
	pgc pg_ctl -D "$PGDATA" -w -t 120 -m fast stop >>"$RUN/pg_ctl.out" 2>&1 ||
		fail_log "$LABEL: pg_ctl stop failed" "$SERVER_LOG"
	wait_server_gone 20 || fail "$LABEL: postgres processes left after stop"
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

# init_cluster -- initdb $PGDATA (checksums, trust) as postgres, with a
# configuration that makes eviction, checkpoints (sync_file_range, fsync)
# and WAL recycling (durable rename) happen within a short test; more
# postgresql.conf lines may come on stdin.
init_cluster() {
	log "$LABEL: initdb $PGDATA (port $PORT, socket in $RUN)"
	pgc initdb -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C -k \
		--no-instructions >"$RUN/initdb.log" 2>&1 ||
		fail_log "$LABEL: initdb failed" "$RUN/initdb.log"
	{
		cat <<-EOF
			# tests/fuse/pgcluster.sh
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
		[ -t 0 ] || cat
	} | pgfile tee -a "$PGDATA/postgresql.conf" >/dev/null || fail "$LABEL: cannot write postgresql.conf"
}

# kill_postgres SECS -- SIGKILL the postmaster and every backend and
# auxiliary process at once (a backend left behind by a killed postmaster
# can wait forever for a lock a dead backend held, with its client); the
# clients in $RUN/clients.pids must notice and exit within SECS seconds.
# A process stuck in the kernel on a FUSE request survives SIGKILL.
kill_postgres() {
	local pid
	kill_server
	wait_server_gone 20 || fail "$LABEL: postgres processes survive SIGKILL: $(server_pids | tr '\n' ' ')"
	for pid in $(cat "$RUN/clients.pids"); do
		wait_group_gone "$pid" "$1" || { kill_group "$pid"; fail "$LABEL: client $pid did not notice the crash within $1 s"; }
	done
	rm -f "$RUN/postmaster.pid"
}

# recover_and_check N -- start the server after a crash: crash recovery must
# run and finish, and every commit ledger clients 1..N saw acknowledged
# must be present.
recover_and_check() {
	local n
	start_server
	grep -q "database system was interrupted\|not properly shut down" "$SERVER_LOG" ||
		fail_log "$LABEL: restart after the crash did not run crash recovery" "$SERVER_LOG"
	[ "$(sql 'SELECT pg_is_in_recovery()')" = f ] || fail "$LABEL: still in recovery after restart"
	log "$LABEL: crash recovery done ($(grep -o 'redo done at [^ ]*' "$SERVER_LOG" | tail -n 1))"
	for ((n = 1; n <= $1; n++)); do
		check_ledger "$n" "$(ledger_first "$n")"
	done
}

# ---- the load of the crash tests (test_crash*.sh): a bulk-import client
# that loads batches of rows with COPY, one transaction per batch, recording a
# batch only after its COPY was acknowledged; pgbench; the ledger clients.

IMPORT_ROWS=${IMPORT_ROWS:-20000}

# create_load_tables -- the ledger and the import table.
create_load_tables() {
	sql "CREATE TABLE ledger (id bigint PRIMARY KEY);
	     CREATE TABLE bulk (batch bigint, id int, pad text, PRIMARY KEY (batch, id))" >/dev/null ||
		fail_log "$LABEL: cannot create the ledger and import tables" "$SERVER_LOG"
}

# start_import N -- background import client N: batches FIRST, FIRST+1, ...
# (FIRST = ledger_first N) of $IMPORT_ROWS rows; it stops at its first error.
start_import() {
	local n=$1 first
	first=$(ledger_first "$n")
	setsid bash -c "for ((b = $first; ; b++)); do
		awk -v b=\$b 'BEGIN { for (i = 1; i <= $IMPORT_ROWS; i++)
			printf \"%d\\t%d\\t%s\\n\", b, i, \"row \" i \" of batch \" b \" padded to about a hundred bytes ..........................\" }' |
		runuser -u postgres -- '$PGBIN/psql' -X -q -v ON_ERROR_STOP=1 -h '$RUN' -p $PORT \
			-d postgres -c '\\copy bulk FROM STDIN' || exit 1
		echo \$b
	done" >"$RUN/import.$n" 2>"$RUN/import.$n.err" &
	echo $! >>"$RUN/clients.pids"
}

# check_import N -- every batch import client N saw acknowledged holds all
# its rows, and any other batch of its range is absent or complete.
check_import() {
	local n=$1 first recorded r bad missing
	first=$(ledger_first "$n")
	recorded=$(wc -l <"$RUN/import.$n")
	r=$(pgc psql -X -q -At -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres \
		-c "CREATE TEMP TABLE acked (batch bigint)" \
		-c "\\copy acked FROM '$RUN/import.$n'" \
		-c "SELECT (SELECT count(*) FROM (SELECT batch FROM bulk
		                  WHERE batch BETWEEN $first AND $((first + 9999999))
		                  GROUP BY batch HAVING count(*) <> $IMPORT_ROWS) x) || ' ' ||
		           (SELECT count(*) FROM acked a WHERE NOT EXISTS
		                  (SELECT 1 FROM bulk b WHERE b.batch = a.batch))") ||
		fail_log "$LABEL: import check query failed" "$SERVER_LOG"
	read -r bad missing <<<"$r"
	log "$LABEL: import $n: $recorded batches acknowledged, $missing missing, $bad partial"
	[ "$missing" -eq 0 ] || fail "$LABEL: $missing acknowledged import batches of client $n lost"
	[ "$bad" -eq 0 ] || fail "$LABEL: $bad import batches of client $n are present in part"
}

# start_load A B I -- ledger clients A and B, import client I and a pgbench
# tpcb load with 4 clients, all in the background.
start_load() {
	: >"$RUN/clients.pids"
	start_ledger "$1" "$(ledger_first "$1")"
	start_ledger "$2" "$(ledger_first "$2")"
	start_import "$3"
	setsid runuser -u postgres -- "$PGBIN/pgbench" -h "$RUN" -p "$PORT" -n -c 4 -j 2 -T 600 \
		postgres >"$RUN/pgbench.$3.log" 2>&1 &
	echo $! >>"$RUN/clients.pids"
	wait_lines "$RUN/ledger.$1" 5 60 || fail_log "$LABEL: ledger client $1 does not commit" "$RUN/ledger.$1.err"
}

# mounted_cluster [PGIOFS_ARGS...] -- a fresh backing directory mounted by
# pgiofs (root, -o allow_other, ARGS; in the foreground, logging to
# $PGIOFS_LOG) and a started cluster on it (more postgresql.conf lines on
# stdin) holding pgbench tables (scale 2), the ledger and the import table.
# Sets BACKING ($BACKING_DIR if set), MNT, RUN, PGDATA, PORT, PGIOFS_PID.
mounted_cluster() {
	local tmp
	tmp=$(mktempdir)
	BACKING=${BACKING_DIR:-$tmp/backing} MNT=$tmp/mnt RUN=$tmp/run PGIOFS_LOG=$tmp/pgiofs.log
	mkdir -p "$BACKING" "$MNT" "$RUN"
	chown postgres: "$RUN"
	chmod 700 "$RUN"
	MOUNT_ARGS=("$@")
	on_exit "force_umount '$MNT'"
	remount_cluster_fs
	mkdir "$MNT/pg" && chown postgres: "$MNT/pg" || fail "$LABEL: cannot make $MNT/pg"
	PGDATA=$MNT/pg/data
	PORT=$(free_port)
	on_exit "cleanup_cluster '$RUN'"
	init_cluster
	start_server
	pgc pgbench -h "$RUN" -p "$PORT" -i -s 2 -q postgres >"$RUN/pgbench-i.log" 2>&1 ||
		fail_log "$LABEL: pgbench -i failed" "$RUN/pgbench-i.log"
	create_load_tables
}

# remount_cluster_fs -- mount $BACKING on $MNT again as mounted_cluster did.
remount_cluster_fs() {
	pgiofs_mount_fg "$PGIOFS_LOG" "$BACKING" "$MNT" -o allow_other "${MOUNT_ARGS[@]}"
}

# after_crash_checks I -- after the restart of iteration I: import client
# I's batches, the pgbench balances, pg_amcheck; then the import table is
# emptied for the next iteration.
after_crash_checks() {
	check_import "$1"
	check_balances "crash $1"
	amcheck "after-crash-$1"
	sql "TRUNCATE bulk" >/dev/null || fail_log "$LABEL: TRUNCATE failed" "$SERVER_LOG"
}
