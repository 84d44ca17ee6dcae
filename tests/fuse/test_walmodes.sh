#!/bin/bash
# test_walmodes.sh -- PostgreSQL on each WAL mode with WAL read by other
# processes while the server writes it.
#
# For files.wal_mode = direct, passthrough on WAL mounts (the default) and
# passthrough on the one connection (no write-back cache): a cluster on a
# pgiofs mount (root, allow_other) under a pgbench load; meanwhile pg_waldump
# decodes the WAL between two flushed positions (the segment the server is
# writing, read by another process: every record must be there and valid)
# and pg_basebackup takes a backup with streamed WAL into a plain directory,
# which pg_verifybackup then checks (checksums of every file and the WAL
# needed to restore it).  Nothing may fail: pgbench, pg_waldump,
# pg_basebackup, pg_verifybackup, and no EIO or other error in the server
# log.  With passthrough, pgiofs's statistics must say that it did not see
# the WAL bytes (its WAL opens were passthrough, some of them held by the
# walsender while the server wrote).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

# CONFIG: its label, the WAL mode pgiofs stat must report, pgiofs options
for config in "direct direct --set files.wal_mode=direct" \
	"walmount passthrough" \
	"single passthrough --set files.wal_mode=passthrough --set fuse.writeback_cache=no"; do
	read -r LABEL mode args <<<"$config"
	# shellcheck disable=SC2086 # the options are words
	mounted_cluster $args </dev/null
	if [ "$LABEL" = walmount ]; then
		grep -q " $PGDATA/pg_wal fuse" /proc/mounts || fail "$LABEL: no WAL mount over $PGDATA/pg_wal"
	fi
	: >"$RUN/clients.pids"
	setsid runuser -u postgres -- "$PGBIN/pgbench" -h "$RUN" -p "$PORT" -n -c 4 -j 2 -T 30 \
		postgres >"$RUN/pgbench.log" 2>&1 &
	echo $! >>"$RUN/clients.pids"
	bench=$!
	sleep 2
	from=$(sql "SELECT pg_current_wal_flush_lsn()") || fail_log "$LABEL: no WAL position" "$SERVER_LOG"
	sleep 3
	to=$(sql "SELECT pg_current_wal_flush_lsn()") || fail_log "$LABEL: no WAL position" "$SERVER_LOG"
	# the segment the server is writing, decoded by another process
	pgc pg_waldump -p "$PGDATA/pg_wal" -s "$from" -e "$to" >"$RUN/waldump.out" 2>&1 ||
		fail_log "$LABEL: pg_waldump $from..$to failed while the server wrote" "$RUN/waldump.out"
	n=$(grep -c '^rmgr:' "$RUN/waldump.out")
	[ "$n" -gt 100 ] || fail_log "$LABEL: pg_waldump decoded only $n records" "$RUN/waldump.out"
	log "$LABEL: pg_waldump decoded $n records from $from to $to while pgbench ran"
	# a backup with streamed WAL while the server writes
	BK=$(mktempdir)/backup
	mkdir "$BK" && chown postgres: "$BK" || fail "$LABEL: cannot make $BK"
	pgc pg_basebackup -h "$RUN" -p "$PORT" -U postgres -D "$BK" -X stream -c fast \
		>"$RUN/basebackup.log" 2>&1 || fail_log "$LABEL: pg_basebackup failed" "$RUN/basebackup.log"
	pgc pg_verifybackup "$BK" >"$RUN/verify.log" 2>&1 ||
		fail_log "$LABEL: pg_verifybackup failed" "$RUN/verify.log"
	log "$LABEL: pg_basebackup -X stream while pgbench ran: $(tail -n 1 "$RUN/verify.log")"
	wait "$bench" || fail_log "$LABEL: pgbench failed" "$RUN/pgbench.log"
	grep -q '^number of failed transactions: 0 ' "$RUN/pgbench.log" ||
		fail_log "$LABEL: pgbench reports failed transactions" "$RUN/pgbench.log"
	! grep -E 'ERROR|FATAL|PANIC|Input/output error' "$RUN"/server.*.log ||
		fail "$LABEL: the server log has errors"
	"$BIN/pgiofs" stat "$MNT" --json >"$RUN/stat.json" || fail "$LABEL: pgiofs stat failed"
	python3 - "$RUN/stat.json" "$mode" <<-'PY' || fail "$LABEL: statistics: $(cat "$RUN/stat.json")"
		import json, sys
		s = json.load(open(sys.argv[1])); w = s["classes"]["wal"]
		assert s["wal_mode"] == sys.argv[2], s["wal_mode"]
		if sys.argv[2] == "passthrough":
		    assert w["passthrough_opens"] > 0 and w["bytes_seen"] != "all" and w["sync_ops"] > 0, w
		else:
		    assert w["passthrough_opens"] == 0 and w["bytes_seen"] == "all" and w["write_ops"] > 0, w
	PY
	amcheck "$LABEL"
	stop_server
	force_umount "$MNT"
	rm -rf "$BK"
done
log "all checks passed"
