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
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

crash_iterations 3 25

LABEL=crash
mounted_cluster </dev/null
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
	after_crash_checks "$i"
done
LABEL=crash
stop_server
log "all checks passed"
