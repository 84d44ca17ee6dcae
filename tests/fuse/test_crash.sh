#!/bin/bash
# test_crash.sh -- PostgreSQL killed with SIGKILL at seeded random points
# under load through pgiofs, again and again.
#
# One cluster on a pgiofs mount (root, allow_other).  Each iteration starts
# two ledger clients (one committed transaction per id, an id recorded only
# once acknowledged), a bulk-import client (COPY batches, a batch recorded
# once acknowledged) and pgbench -c 4; at a point drawn from a generator
# seeded with CRASH_SEED (a checkpoint or not, then 0-4 s) the postmaster and
# its backends are SIGKILLed.  Then: the clients notice, the server restarts
# and runs crash recovery, every acknowledged commit of every ledger client
# so far is present without gaps, every acknowledged import batch is
# complete and none is present in part, the pgbench balances add up, and
# pg_amcheck --all is clean.
#
# Iterations: 3 (make check); 25 with LONG=1 (make check-long);
# CRASH_ITERATIONS overrides.  CRASH_SEED (default 1) picks the points.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_root
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"
[ -x "$PGBIN/initdb" ] || fail "PostgreSQL binaries not found in $PGBIN"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

if [ "${LONG:-0}" = 1 ]; then ITER=${CRASH_ITERATIONS:-25}; else ITER=${CRASH_ITERATIONS:-3}; fi
SEED=${CRASH_SEED:-1}
RANDOM=$SEED

tmp=$(mktempdir)
BACKING=$tmp/backing MNT=$tmp/mnt RUN=$tmp/run LABEL=crash
mkdir -p "$BACKING" "$MNT" "$RUN"
chown postgres: "$RUN"
chmod 700 "$RUN"
on_exit "force_umount '$MNT'"
pgiofs_mount "$BACKING" "$MNT" -o allow_other
mkdir "$MNT/pg" && chown postgres: "$MNT/pg" || fail "cannot make the data directory's parent"
PGDATA=$MNT/pg/data
PORT=$(free_port)
on_exit "cleanup_cluster '$RUN'"
init_cluster </dev/null
start_server
pgc pgbench -h "$RUN" -p "$PORT" -i -s 2 -q postgres >"$RUN/pgbench-i.log" 2>&1 ||
	fail_log "pgbench -i failed" "$RUN/pgbench-i.log"
create_load_tables
log "$ITER iterations, seed $SEED"

for ((i = 1; i <= ITER; i++)); do
	LABEL="crash $i/$ITER"
	checkpoint=$((RANDOM % 2))
	delay=$((RANDOM % 40))
	start_load $((2 * i - 1)) $((2 * i)) "$i"
	[ $checkpoint = 0 ] || sql "CHECKPOINT" >/dev/null || fail_log "$LABEL: CHECKPOINT failed" "$SERVER_LOG"
	sleep "$((delay / 10)).$((delay % 10))"
	log "$LABEL: kill -9 postgres (checkpoint $checkpoint, +$((delay / 10)).$((delay % 10)) s;" \
		"$(wc -l <"$RUN/ledger.$((2 * i - 1))") + $(wc -l <"$RUN/ledger.$((2 * i))") ids," \
		"$(wc -l <"$RUN/import.$i") batches acknowledged)"
	kill_postgres 20
	recover_and_check $((2 * i))
	check_import "$i"
	check_balances "crash $i"
	amcheck "after-crash-$i"
	sql "TRUNCATE bulk" >/dev/null || fail_log "$LABEL: TRUNCATE failed" "$SERVER_LOG"
done
LABEL=crash
stop_server
log "all checks passed"
