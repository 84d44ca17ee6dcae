#!/bin/bash
# test_secrets.sh -- a password given in the conninfo never appears in what
# pgload prints or writes: summary, progress and errors, JSON and CSV, for a
# run that succeeds, one whose SQL fails and one whose connection fails; and
# the identifiers pgload builds (the --db it creates and drops) are quoted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
W=$(mktempdir)
SECRET=S3cr3t-pgload-7f1c
pg_test_server

printf 'CREATE TABLE t (a int);\nCOPY t (a) FROM stdin;\n1\n2\n\\.\n' >"$W/ok.sql"
printf 'CREATE TABLE u (a int);\nSELECT no_such_function();\n' >"$W/bad.sql"

"$PGLOAD" run --progress --dsn "$DSN password=$SECRET" --db sec1 --data "$W/ok.sql" \
	--json "$W/ok.json" --csv "$W/ok.csv" >"$W/ok.out" 2>"$W/ok.err" ||
	{ cat "$W/ok.err"; fail "the run with a password in the conninfo failed"; }
"$PGLOAD" run --dsn "$DSN password=$SECRET" --db sec2 --data "$W/bad.sql" \
	--json "$W/bad.json" >"$W/bad.out" 2>"$W/bad.err" && fail "a failing script succeeded"
grep -q 'no_such_function' "$W/bad.err" || fail "no server error reported"
"$PGLOAD" run --dsn "host=$W/nosocket port=1 user=nobody password=$SECRET" --data "$W/ok.sql" \
	>"$W/conn.out" 2>"$W/conn.err" && fail "a run without a server succeeded"
[ -s "$W/conn.err" ] || fail "no connection error reported"

for f in "$W"/*.out "$W"/*.err "$W"/*.json "$W"/*.csv; do
	if grep -q -- "$SECRET" "$f"; then
		fail "the password appears in $(basename "$f"): $(grep -- "$SECRET" "$f" | head -n 1)"
	fi
done
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/ok.json" || fail "ok.json is not JSON"
echo "ok: the password appears in none of $(ls "$W" | grep -c -v sql) outputs"

# a database name that is SQL if pasted unquoted: created, loaded, dropped
# and re-created as that exact name, nothing else touched
EVIL='x"; DROP DATABASE sec1; --'
"$PGLOAD" run --dsn "$DSN" --db "$EVIL" --runs 2 --data "$W/ok.sql" >"$W/evil.out" 2>"$W/evil.err" ||
	{ cat "$W/evil.err"; fail "--db with quotes and a semicolon"; }
n=$(echo "SELECT count(*) FROM pg_database WHERE datname = :'n'" | psql -X -At -d postgres -v n="$EVIL")
[ "$n" = 1 ] || fail "the database named '$EVIL' does not exist"
psql -X -At -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'sec1'" | grep -qx 1 ||
	fail "a --db name was executed as SQL: sec1 is gone"
echo "ok: --db names are quoted identifiers"
