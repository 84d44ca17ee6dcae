#!/bin/bash
# test_pagetype.sh -- pgiofs_page_kind() on the pages of a real PostgreSQL 15
# cluster: heap or index, and which access method.
#
# A throw-away cluster (initdb as postgres in a temporary directory, socket
# in a private directory, no TCP) gets a table with a TOAST table, one index
# of each kind (btree, hash, gist, spgist, gin, brin; bloom when contrib has
# it), a sequence, a materialized view and an unlogged table; then
# CHECKPOINT.  Every relation of the database with storage (user and
# catalog, shared ones included) is found with pg_relation_filepath(), the
# server is stopped, and helper_pagetype reads the first blocks of each file:
# the class must follow pg_class.relkind (r, t, m -> heap; S -> heap
# "sequence"; i -> index) and the access method pg_am.amname.  The init fork
# of the unlogged table's primary key (a btree metapage) is checked too.
#
# The server is stopped and every file removed at exit, also on failure.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

need_root
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"
[ -x "$PGBIN/initdb" ] || fail "PostgreSQL binaries not found in $PGBIN"
H=$TESTBUILD/fuse/helper_pagetype
[ -x "$H" ] || fail "$H is missing: run make"

D=$(mktempdir)
PGDATA=$D/data
RUN=$D/run
mkdir -p "$PGDATA" "$RUN" || fail "cannot make $D"
chown postgres: "$PGDATA" "$RUN"
chmod 700 "$PGDATA"

# pgc PROG ARGS... -- a PostgreSQL program as postgres, with a timeout.
pgc() {
	local prog=$1
	shift
	timeout -k 5 120 runuser -u postgres -- "$PGBIN/$prog" "$@"
}

# stop_cluster -- at exit: stop the server if it still runs; kill it if
# it does not stop.
stop_cluster() {
	local pid
	pid=$(head -n 1 "$PGDATA/postmaster.pid" 2>/dev/null) || return 0
	[ -n "$pid" ] || return 0
	timeout 30 runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w stop ||
		kill -KILL "$pid"
}
on_exit stop_cluster

sql() { pgc psql -X -At -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres -c "$1"; }

pgc initdb -D "$PGDATA" -U postgres -A trust --no-sync >"$RUN/initdb.log" 2>&1 ||
	{ tail -n 20 "$RUN/initdb.log"; fail "initdb failed"; }
PORT=$(free_port)
pgc pg_ctl -D "$PGDATA" -l "$RUN/server.log" -w -t 60 \
	-o "-c listen_addresses='' -k $RUN -p $PORT -c fsync=off" start >/dev/null ||
	{ tail -n 20 "$RUN/server.log"; fail "the server did not start"; }

BLOOM=0
sql "CREATE EXTENSION bloom" >/dev/null 2>&1 && BLOOM=1
sql "
CREATE TABLE t (id int, txt text, arr int[], pt point, ts timestamptz, big text);
ALTER TABLE t ALTER big SET STORAGE EXTERNAL;
INSERT INTO t
SELECT i, md5(i::text), ARRAY[i % 100, i % 7], point(i % 1000, i / 1000),
       '2020-01-01'::timestamptz + i * interval '1 minute',
       CASE WHEN i % 500 = 0 THEN repeat(md5(i::text), 100) END
FROM generate_series(1, 20000) i;
CREATE INDEX t_btree ON t USING btree (id);
CREATE INDEX t_hash ON t USING hash (id);
CREATE INDEX t_gist ON t USING gist (pt);
CREATE INDEX t_spgist ON t USING spgist (txt);
CREATE INDEX t_gin ON t USING gin (arr);
CREATE INDEX t_brin ON t USING brin (ts);
CREATE SEQUENCE s;
SELECT nextval('s');
CREATE MATERIALIZED VIEW mv AS SELECT id FROM t WHERE id < 100;
CREATE UNLOGGED TABLE u (id int PRIMARY KEY);
INSERT INTO u SELECT generate_series(1, 100);
" >/dev/null || fail "creating the relations failed"
sql "VACUUM t" >/dev/null || fail "VACUUM failed"
[ $BLOOM = 1 ] && { sql "CREATE INDEX t_bloom ON t USING bloom (id)" >/dev/null || fail "bloom index"; }
sql "CHECKPOINT" >/dev/null || fail "CHECKPOINT failed"

# relname|relkind|amname|path of every relation with storage and blocks
sql "SELECT c.relname, c.relkind, coalesce(a.amname, ''), pg_relation_filepath(c.oid)
     FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
     WHERE c.relkind IN ('r', 't', 'm', 'S', 'i') AND pg_relation_size(c.oid) > 0
     ORDER BY 1" >"$RUN/rels" || fail "listing the relations failed"
TOAST=$(sql "SELECT t.relname FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
             WHERE c.relname = 't'") || fail "no TOAST table"
UPKEY=$(sql "SELECT pg_relation_filepath('u_pkey')") || fail "no u_pkey"
pgc pg_ctl -D "$PGDATA" -m fast -w -t 60 stop >/dev/null || fail "the server did not stop"

n=0
bad=0
declare -A got
while IFS='|' read -r name kind am path; do
	case $kind in
	r | t | m) want="heap heap" ;;
	S) want="heap sequence" ;;
	i) want="index $am" ;;
	esac
	out=$("$H" "$PGDATA/$path" 2>&1)
	res=$(echo "$out" | awk '$2 == "result" { $1 = $2 = ""; sub(/^ +/, ""); print }')
	got[$name]=$res
	n=$((n + 1))
	if [ "$res" != "$want" ]; then
		echo "MISMATCH $name (relkind $kind, am '$am', $path): got '$res', want '$want'"
		echo "$out" | sed 's/^/    /'
		bad=$((bad + 1))
	fi
done <"$RUN/rels"

# the relations made for the test must be among them, each as it should be
declare -A expect=([t]="heap heap" [$TOAST]="heap heap" [mv]="heap heap" [u]="heap heap"
	[s]="heap sequence" [t_btree]="index btree" [t_hash]="index hash" [t_gist]="index gist"
	[t_spgist]="index spgist" [t_gin]="index gin" [t_brin]="index brin" [u_pkey]="index btree")
[ $BLOOM = 1 ] && expect[t_bloom]="index bloom"
for r in "${!expect[@]}"; do
	[ "${got[$r]:-}" = "${expect[$r]}" ] ||
		{ echo "$r: got '${got[$r]:-not listed}', want '${expect[$r]}'"; bad=$((bad + 1)); }
done

# the init fork of an unlogged index holds its metapage
res=$("$H" "$PGDATA/${UPKEY}_init" | awk '$2 == "result" { print $3, $4 }')
[ "$res" = "index btree" ] || { echo "u_pkey init fork: got '$res'"; bad=$((bad + 1)); }

echo "$n relations classified, $bad wrong; user relations:"
for r in $(printf '%s\n' "${!expect[@]}" | sort); do printf '  %-24s %s\n' "$r" "${got[$r]:-}"; done
[ $BLOOM = 1 ] || echo "(contrib's bloom is not installed: bloom not tested)"
[ $n -gt 100 ] || fail "only $n relations listed"
[ $bad -eq 0 ] || fail "$bad relations classified wrongly"
echo "test_pagetype: ok"
