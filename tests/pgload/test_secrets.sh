#!/bin/bash
# test_secrets.sh -- a password given in the conninfo never appears in what
# pgload prints or writes: summary, progress and errors, JSON and CSV, for a
# run that succeeds, one whose SQL fails and one whose connection fails.
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
