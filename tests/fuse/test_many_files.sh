#!/bin/bash
# test_many_files.sh -- a PostgreSQL cluster of more files than the daemon
# may have descriptors: pgiofs started under an open-files limit of
# $NOFILE (512; hard too, so that it cannot raise it), PostgreSQL on the
# mount (max_files_per_process = 64, autovacuum off), then what
# bench/relations.sh times at scale: $TABLES tables "(id int primary key,
# v text)" created one statement each (four files each: about 5,000 files
# with initdb's), VACUUM, pg_dump --schema-only, a query over every table's
# size, CHECKPOINT, and a clean stop.  Every step must succeed; the daemon
# must have used file handles with at most a quarter of its limit cached,
# holding descriptors only for its roots (the mount's and its WAL mount's),
# and it must never have held more than its limit (sampled).  With
# files.inode_handles = no the same cluster cannot be made under that
# limit (bench/relations.sh --nofile shows it).
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"

# 512, not less: PostgreSQL's processes may hold 64 files each open
# through the mount, and the daemon one descriptor for each
NOFILE=512
TABLES=1250
T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
RUN=$T/run PORT=$(free_port) LABEL=many
PGDATA=$M/pg
mkdir "$RUN" && chown postgres "$RUN"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"
on_exit "cleanup_cluster '$RUN'"

log=$T/pgiofs.log
PGIOFS_NOFILE=$NOFILE:$NOFILE pgiofs_mount_fg "$log" "$B" "$M" -o allow_other
pid=$PGIOFS_PID
[ "$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")" = "$NOFILE" ] ||
	fail "the daemon's limit is not $NOFILE"
# the most descriptors the daemon held, every 0.1 s
(
	max=0
	while [ -d "/proc/$pid" ]; do
		n=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		[ "$n" -gt "$max" ] && { max=$n; echo "$max" >"$T/maxfd"; }
		sleep 0.1
	done
) &
on_exit "kill $! 2>/dev/null"

mkdir "$PGDATA" && chown postgres "$PGDATA"
init_cluster <<EOF
max_files_per_process = 64
autovacuum = off
max_locks_per_transaction = 128
EOF
start_server
for ((i = 1; i <= TABLES; i++)); do
	echo "CREATE TABLE t$i (id int PRIMARY KEY, v text);"
done >"$T/create.sql"
chmod 644 "$T/create.sql"
psql_f() { pgc psql -X -q -At -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres "$@"; }
psql_f -f "$T/create.sql" >"$T/create.out" 2>&1 || fail_log "creating $TABLES tables failed" "$T/create.out"
log "$TABLES tables created"
psql_f -c VACUUM >"$T/vacuum.out" 2>&1 || fail_log "VACUUM failed" "$T/vacuum.out"
pgc pg_dump --schema-only -h "$RUN" -p "$PORT" -d postgres -f /dev/null 2>"$T/dump.out" ||
	fail_log "pg_dump --schema-only failed" "$T/dump.out"
n=$(psql_f -c "SELECT count(*) FROM pg_class WHERE relkind = 'r' AND pg_total_relation_size(oid) >= 0 AND relname ~ '^t[0-9]+\$'") ||
	fail_log "the size query failed" "$SERVER_LOG"
[ "$n" = "$TABLES" ] || fail "the size query saw $n of $TABLES tables"
psql_f -c CHECKPOINT >"$T/ckpt.out" 2>&1 || fail_log "CHECKPOINT failed" "$T/ckpt.out"
"$BIN/pgiofs" stat "$M" --json >"$T/stat.json" || fail "pgiofs stat failed"
stop_server
files=$(find "$B/pg" | wc -l)
maxfd=$(cat "$T/maxfd")
python3 - "$T/stat.json" "$NOFILE" <<'PY' || fail "the daemon's descriptors"
import json, sys
s = json.load(open(sys.argv[1]))["inode_fds"]
limit = int(sys.argv[2])
print("pgiofs stat: %s" % s)
assert s["handles"], s
assert s["limit"] == limit // 4 and s["cached"] <= s["limit"], s
assert s["held"] <= 2, s  # the mount's root and its WAL mount's
assert s["inodes"] > 4 * limit, s
PY
grep -q 'out of file descriptors' "$log" && fail "the daemon ran out of descriptors: $(grep 'out of file' "$log")"
log "$files files in the cluster; the daemon held at most $maxfd descriptors under a limit of $NOFILE"
[ "$files" -ge 5000 ] || fail "only $files files in the cluster: the test no longer makes more files than descriptors"
[ "$maxfd" -le "$NOFILE" ] || fail "the daemon held $maxfd descriptors, above its limit $NOFILE"
pgiofs_umount "$M" || fail "cannot unmount"
echo PASS
