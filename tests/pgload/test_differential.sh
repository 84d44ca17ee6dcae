#!/bin/bash
# test_differential.sh -- a pg_dump -Fp of an awkward database loads through
# pgload exactly as through psql: same rows (per-table checksums of ordered
# rows) and same schema, also with --jobs 4, from an lz4 copy, and from stdin.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

pg_test_server
W=$(mktempdir)
[ -n "${KEEP:-}" ] && W=$KEEP

createdb src || fail "createdb src"
psql -X -q -v ON_ERROR_STOP=1 -d src -f "$TOP/tests/pgload/awkward.sql" >/dev/null ||
	fail "could not build the awkward database"
pg_dump -Fp -d src >"$W/dump.sql" || fail "pg_dump"
grep -q '^COPY public."My Table"' "$W/dump.sql" || fail "dump lacks the COPY of \"My Table\""

createdb viapsql
psql -X -q -v ON_ERROR_STOP=1 -d viapsql -f "$W/dump.sql" >/dev/null 2>"$W/psql.err" ||
	{ cat "$W/psql.err"; fail "psql could not load the dump"; }

table_checksums src >"$W/src.sum"
table_checksums viapsql >"$W/psql.sum"
[ -s "$W/src.sum" ] || fail "no tables"
cmp -s "$W/src.sum" "$W/psql.sum" || fail "psql's reload differs from the source (test is broken)"
schema_psql=$(schema_checksum viapsql)

check_load() {
	local what=$1 db=$2
	table_checksums "$db" >"$W/$db.sum"
	if ! cmp -s "$W/psql.sum" "$W/$db.sum"; then
		diff "$W/psql.sum" "$W/$db.sum" >&2
		fail "$what: table contents differ from psql's load"
	fi
	[ "$(schema_checksum "$db")" = "$schema_psql" ] || fail "$what: schema differs from psql's load"
	[ "$(psql -X -At -d "$db" -c "SELECT last_value FROM s")" = 4242 ] || fail "$what: sequence value lost"
	[ "$(psql -X -At -d "$db" -c "SELECT plpgsql_fn(1) || atomic_fn(-3)")" = "semi;colon \$\$ and \$x\$;'3" ] ||
		fail "$what: functions differ"
	echo "ok: $what"
}

"$PGLOAD" run -q --dsn "$DSN" --db viapgload --data "$W/dump.sql" >"$W/out1" 2>"$W/err1" ||
	{ cat "$W/err1"; fail "pgload run failed"; }
grep -q '^data    real ' "$W/out1" || fail "no 'data real' line in the summary"
check_load "pgload, one connection" viapgload

"$PGLOAD" run -q --dsn "$DSN" --db viajobs --jobs 4 --data "$W/dump.sql" >"$W/out2" 2>"$W/err2" ||
	{ cat "$W/err2"; fail "pgload --jobs 4 failed"; }
check_load "pgload --jobs 4" viajobs

lz4 -q -z "$W/dump.sql" "$W/dump.sql.lz4" || fail "lz4"
"$PGLOAD" run -q --dsn "$DSN" --db vialz4 --data "$W/dump.sql.lz4" --jobs 2 >"$W/out3" 2>"$W/err3" ||
	{ cat "$W/err3"; fail "pgload from lz4 failed"; }
check_load "pgload from lz4 with --jobs 2" vialz4

"$PGLOAD" run -q --dsn "$DSN" --db viastdin --data - <"$W/dump.sql.lz4" >"$W/out4" 2>"$W/err4" ||
	{ cat "$W/err4"; fail "pgload from stdin failed"; }
check_load "pgload from lz4 on stdin" viastdin

"$PGLOAD" run -q --dsn "$DSN" --db viapipe --pipeline --data "$W/dump.sql" >"$W/out5" 2>"$W/err5" ||
	{ cat "$W/err5"; fail "pgload --pipeline failed"; }
check_load "pgload --pipeline" viapipe

# reloading into a database pgload made is fine; into one it did not, refused
"$PGLOAD" run -q --dsn "$DSN" --db viapgload --data "$W/dump.sql" >/dev/null 2>"$W/err6" ||
	{ cat "$W/err6"; fail "pgload could not reload its own database"; }
if "$PGLOAD" run -q --dsn "$DSN" --db viapsql --data "$W/dump.sql" >/dev/null 2>"$W/err7"; then
	fail "pgload dropped a database it did not create"
fi
grep -q 'database "viapsql" exists and was not created by pgload' "$W/err7" || { cat "$W/err7"; fail "wrong refusal message"; }
cmp -s "$W/psql.sum" <(table_checksums viapsql) || fail "refused run changed viapsql"
echo "ok: refuses to drop a foreign database"
