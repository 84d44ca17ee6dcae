#!/bin/bash
# test_crash_daemon.sh -- the pgiofs daemon killed with SIGKILL under load.
#
# A cluster on a pgiofs mount under the load of test_crash.sh (ledger
# clients, COPY import, pgbench -c 4).  At a seeded random point the daemon
# is SIGKILLed: every client must get an error and exit within 10 s, and
# every PostgreSQL process must be gone or die on SIGKILL within 10 s (none
# may hang in the dead mount); the dead mount and its WAL mount are cleaned
# up (umount -R, else umount -R -l) and mounted again, the server restarts and recovers, and
# every acknowledged commit and import batch is present, the pgbench
# balances agree and pg_amcheck is clean.  Only what PostgreSQL fsynced
# must survive: the dirty pages the kernel had not yet sent are lost with
# the connection.
#
# Iterations: 1 (make check); 5 with LONG=1; CRASH_ITERATIONS overrides.
# CRASH_SEED (default 1) picks the points.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

crash_iterations 1 5
LABEL=daemon
mounted_cluster </dev/null
log "$ITER iterations, seed $SEED"

for ((i = 1; i <= ITER; i++)); do
	LABEL="daemon $i/$ITER"
	delay=$((RANDOM % 30 + 5))
	start_load $((2 * i - 1)) $((2 * i)) "$i"
	sleep "$((delay / 10)).$((delay % 10))"
	log "$LABEL: kill -9 pgiofs $PGIOFS_PID (+$((delay / 10)).$((delay % 10)) s)"
	kill -9 "$PGIOFS_PID"
	wait "$PGIOFS_PID" 2>/dev/null
	for pid in $(cat "$RUN/clients.pids"); do
		wait_group_gone "$pid" 10 || fail "$LABEL: client $pid still runs 10 s after pgiofs died"
	done
	if wait_server_gone 10; then
		log "$LABEL: clients failed and exited; postgres shut itself down"
	else
		log "$LABEL: clients failed and exited; postgres still up: $(server_pids | wc -l) processes"
	fi
	grep -h "PANIC\|FATAL" "$RUN"/server.*.log | tail -n 3 | sed 's/^/    /'
	kill_postgres 10
	# -R: the dead WAL mount over pg_wal first
	umount_out=$(umount -R "$MNT" 2>&1) || umount -R -l "$MNT" ||
		fail "$LABEL: cannot clean up the dead mount ($umount_out)"
	assert_no_mount "$MNT"
	remount_cluster_fs
	recover_and_check $((2 * i))
	after_crash_checks "$i"
done
LABEL=daemon
stop_server
log "all checks passed"
