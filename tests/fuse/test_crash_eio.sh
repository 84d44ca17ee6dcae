#!/bin/bash
# test_crash_eio.sh -- an I/O error on a WAL fsync makes PostgreSQL PANIC
# (its design: it cannot know what reached the disk), and nothing it
# acknowledged is lost.
#
# pgiofs runs with --allow-faults and a configuration without faults; under
# the load of test_crash.sh, a SIGHUP turns on fault injection ([fault]
# class = wal, direction = sync, error = eio, every one): the next WAL
# fsync fails, never performed, and the error reaches PostgreSQL unchanged,
# which PANICs.  Then the faults are switched off again (SIGHUP), the server
# restarts and recovers, and every acknowledged commit and import batch is
# present, the pgbench balances agree and pg_amcheck is clean.  The
# statistics count the injected failures as WAL errors.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
command -v python3 >/dev/null || fail "python3 is needed to read the statistics"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

LABEL=eio
CONF=$TEST_TMP/faults.conf
echo "; no faults yet" >"$CONF"
mounted_cluster --allow-faults -c "$CONF" </dev/null

wal_errors() {
	"$BIN/pgiofs" stat "$MNT" --json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["classes"]["wal"]["errors"])'
}

start_load 1 2 1
wait_lines "$RUN/import.1" 2 60 || fail_log "$LABEL: the import does not commit" "$RUN/import.1.err"
printf '[fault]\nclass = wal\ndirection = sync\nerror = eio\nnth = 1\ncount = 0\n' >"$CONF"
pgiofs_hup "$PGIOFS_LOG" "settings reloaded"
log "$LABEL: WAL syncs fail from now on"
for ((i = 0; i < 300; i++)); do
	grep -q "PANIC:.*could not f.*sync.*Input/output error" "$RUN"/server.*.log && break
	sleep 0.1
done
grep -h "PANIC" "$RUN"/server.*.log | head -n 3 | sed 's/^/    /'
grep -q "PANIC:.*could not f.*sync.*Input/output error" "$RUN"/server.*.log ||
	fail_log "$LABEL: no PANIC on the failed WAL fsync within 30 s" "$SERVER_LOG"
errors=$(wal_errors)
[ "$errors" -gt 0 ] || fail "$LABEL: the statistics show no WAL error"
log "$LABEL: PostgreSQL PANICked; $errors WAL requests failed"
kill_postgres 20

echo "; no faults any more" >"$CONF"
pgiofs_hup "$PGIOFS_LOG" "settings reloaded"
recover_and_check 2
after_crash_checks 1
stop_server
log "all checks passed"
