#!/bin/bash
# test_cluster.sh -- docs/cluster.md as a DBA follows it: a cluster managed
# by Debian's postgresql-common is moved onto pgiofs and back by the guide's
# own command blocks, run as written (extracted from the guide, not copied),
# with V and C naming a scratch cluster.
#
# The scratch cluster lives in the test's directory: postgresql-common's
# PG_CLUSTER_CONF_ROOT puts its configuration there instead of
# /etc/postgresql, and pg_createcluster puts its data, socket, log and pid
# file there, so the machine's own clusters are never touched.  Checked: the
# data directory is a fuse.pgiofs mount after the first block and the
# server runs on it (rows written before are there, new ones are written,
# pgiofs counts the server's WAL); after the second block it is a plain
# directory again with every row, the ones written through pgiofs
# included.  Everything is dropped at exit, on failure too.
source "$(dirname "$0")/../lib.sh"
need_root
for c in pg_createcluster pg_ctlcluster pg_conftool pg_dropcluster; do
	command -v $c >/dev/null || fail "$c is missing (Debian package postgresql-common)"
done
command -v python3 >/dev/null || fail "python3 is needed to read the statistics"
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"

T=$(mktempdir)
V=15 C=pgiofst$$
export PG_CLUSTER_CONF_ROOT=$T/etc
mkdir -p "$T/etc" "$T/data" "$T/run"
chown postgres: "$T/data" "$T/run"
PORT=$(free_port)
DATA=$T/data/main
on_exit "pg_ctlcluster $V $C stop -m immediate >/dev/null 2>&1; umount -l '$DATA' 2>/dev/null; pg_dropcluster $V $C >/dev/null 2>&1; true"
pg_createcluster "$V" "$C" -d "$DATA" -p "$PORT" -l "$T/run/server.log" -s "$T/run" \
	-o external_pid_file="$T/run/pid" >"$T/create.log" 2>&1 ||
	{ cat "$T/create.log"; fail "pg_createcluster failed"; }
pg_ctlcluster "$V" "$C" start || fail "the scratch cluster does not start"

sql() { runuser -u postgres -- psql -X -At -v ON_ERROR_STOP=1 -h "$T/run" -p "$PORT" -d postgres -c "$1"; }
sql "CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 1000) g" >/dev/null ||
	fail "cannot write to the scratch cluster"

# run_block NAME -- run it as the guide's reader would, pgiofs on PATH.
run_block() {
	local b
	b=$(doc_block "$TOP/docs/cluster.md" "$1")
	[ -n "$b" ] || fail "docs/cluster.md has no block marked $1"
	printf '%s\n' "$b" >"$T/$1.sh"
	PATH="$(dirname "$(realpath "$BIN/pgiofs")"):$PATH" V=$V C=$C bash -e -x "$T/$1.sh" \
		>"$T/$1.log" 2>&1 || { cat "$T/$1.log"; fail "the guide's block $1 failed"; }
}

run_block cluster-in
awk -v m="$DATA" '$2 == m { print $3 }' /proc/mounts | grep -qx fuse.pgiofs ||
	fail "$DATA is not a pgiofs mount after the guide's first block"
[ "$(stat -c %U:%a "$DATA.pgiofs")" = postgres:700 ] || fail "the backing directory lost its owner or mode"
[ "$(sql "SELECT count(*) FROM t")" = 1000 ] || fail "the rows written before the move are not there"
sql "INSERT INTO t SELECT g FROM generate_series(1001, 2000) g; CHECKPOINT" >/dev/null ||
	fail "cannot write through pgiofs"
"$BIN/pgiofs" stat "$DATA" --json >"$T/stat.json" || fail "pgiofs stat failed"
python3 - "$T/stat.json" <<'PY' || fail "pgiofs did not see the server's WAL: $(cat "$T/stat.json")"
import json, sys
c = json.load(open(sys.argv[1]))["classes"]
assert c["wal"]["sync_ops"] > 0, c["wal"]   # commits' WAL flushes, in every WAL mode
assert c["heap"]["write_bytes"] > 0, c["heap"]
PY
echo "ok: the guide's first block put the cluster on pgiofs; it runs there"

# the recommended wal_sync_method: commits then send pgiofs no FSYNC (their
# O_DSYNC writes are passthrough on the WAL mount)
run_block cluster-wal
[ "$(sql "SHOW wal_sync_method")" = open_datasync ] || fail "wal_sync_method is not open_datasync after the guide's block"
wal_syncs() {
	"$BIN/pgiofs" stat "$DATA" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["classes"]["wal"]["sync_ops"])'
}
s0=$(wal_syncs) || fail "pgiofs stat failed"
for i in $(seq 1 20); do sql "INSERT INTO t VALUES ($((2000 + i)))" >/dev/null || fail "commit $i failed"; done
s1=$(wal_syncs) || fail "pgiofs stat failed"
[ "$s1" -eq "$s0" ] || fail "20 commits with open_datasync sent pgiofs $((s1 - s0)) WAL syncs, not 0"
sql "DELETE FROM t WHERE id > 2000" >/dev/null || fail "cannot delete the commits' rows"
echo "ok: with the guide's wal_sync_method, commits send pgiofs no WAL sync"

# a backup through the mount (docs/operations.md) is a data directory a
# server starts on without pgiofs, with every row
runuser -u postgres -- /usr/lib/postgresql/$V/bin/pg_basebackup -D "$T/data/bb" -h "$T/run" -p "$PORT" \
	-X stream -c fast >"$T/bb.log" 2>&1 || { cat "$T/bb.log"; fail "pg_basebackup through pgiofs failed"; }
# Debian keeps the configuration in /etc/postgresql (here $T/etc), outside
# the data directory: the backup gets the access files and an empty
# postgresql.conf
install -o postgres -g postgres -m 0600 "$T/etc/$V/$C/pg_hba.conf" "$T/etc/$V/$C/pg_ident.conf" "$T/data/bb/" &&
	install -o postgres -g postgres -m 0600 /dev/null "$T/data/bb/postgresql.conf" ||
	fail "cannot give the backup its configuration"
BBPORT=$(free_port)
runuser -u postgres -- /usr/lib/postgresql/$V/bin/pg_ctl -D "$T/data/bb" -l "$T/run/bb.log" -w \
	-o "-p $BBPORT -k $T/run -c external_pid_file=" start >/dev/null ||
	{ cat "$T/run/bb.log"; fail "the backup does not start"; }
on_exit "runuser -u postgres -- /usr/lib/postgresql/$V/bin/pg_ctl -D '$T/data/bb' -m immediate stop >/dev/null 2>&1; true"
n=$(runuser -u postgres -- psql -X -At -h "$T/run" -p "$BBPORT" -d postgres -c "SELECT count(*) FROM t")
runuser -u postgres -- /usr/lib/postgresql/$V/bin/pg_ctl -D "$T/data/bb" stop >/dev/null
[ "$n" = 2000 ] || fail "the backup taken through pgiofs has $n rows, not 2000"
echo "ok: pg_basebackup through the mount gives a backup that starts with every row"

run_block cluster-out
! is_mounted "$DATA" || fail "$DATA is still mounted after the guide's second block"
[ ! -e "$DATA.pgiofs" ] || fail "the backing directory is still there"
[ "$(sql "SELECT count(*) FROM t")" = 2000 ] || fail "rows are missing after the way back"
echo "ok: the guide's second block took it off again, every row kept"
pg_ctlcluster "$V" "$C" stop || fail "the scratch cluster does not stop"
pg_dropcluster "$V" "$C" || fail "pg_dropcluster failed"
echo ok
