#!/bin/bash
# test_psql_compat.sh -- a hand-written psql script (\copy from the script,
# from files and lz4 files, \copy to a file, variables, \set ON_ERROR_STOP,
# \echo, \connect, standard_conforming_strings off, statements without a
# final semicolon) loads through pgload as through psql.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

pg_test_server
W=$(mktempdir)
chmod 777 "$W"
printf '1,one\n2,"two, quoted"\n3,\n' >"$W/in.csv"
printf '10\tten\n11\t\\N\n' >"$W/in.tsv"
lz4 -q -z "$W/in.tsv" "$W/in.tsv.lz4" || fail "lz4"
cat >"$W/script.sql" <<SQL
\\set ON_ERROR_STOP on
\\set tbl items
\\set greeting 'it''s here'
\\echo loading :tbl
CREATE TABLE :tbl (id int PRIMARY KEY, name text);
CREATE TABLE other (id int, v text);
\\copy items from '$W/in.csv' with (format csv)
\\copy items (id, name) FROM stdin
4	four
5	five\\ttabbed
\\.
\\copy items from '$W/in.tsv'
INSERT INTO other VALUES (1, :'greeting'), (2, :'tbl');
SET standard_conforming_strings = off;
INSERT INTO other VALUES (3, 'back\\\\slash; \\'quote');
SET standard_conforming_strings = on;
\\copy (SELECT * FROM items ORDER BY id) to '$W/out-CLIENT.csv' csv
\\c - 
INSERT INTO other VALUES (4, 'after reconnect')
SQL

createdb viapsql
sed "s/CLIENT/psql/" "$W/script.sql" >"$W/psql.sql"
sed "s/CLIENT/pgload/" "$W/script.sql" >"$W/pgload.sql"
(cd "$W" && psql -X -q -d viapsql -f "$W/psql.sql") >"$W/psql.out" 2>&1 || { cat "$W/psql.out"; fail "psql"; }
"$PGLOAD" run -q --dsn "$DSN" --db viapgload --data "$W/pgload.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "pgload"; }
table_checksums viapsql >"$W/a"
table_checksums viapgload >"$W/b"
cmp -s "$W/a" "$W/b" || { diff "$W/a" "$W/b"; fail "contents differ"; }
grep -q 'public.items 7 ' "$W/a" || { cat "$W/a"; fail "want 7 items"; }
grep -q 'public.other 4 ' "$W/a" || { cat "$W/a"; fail "want 4 rows in other"; }
cmp "$W/out-psql.csv" "$W/out-pgload.csv" || fail "\\copy to a file differs"
grep -q '^items  *7 ' "$W/out" || { cat "$W/out"; fail "\\copy rows not counted"; }
echo "ok: same contents as psql"

# pgload extension: \copy from an lz4 file
printf 'CREATE TABLE t (a int, b text);\n\\copy t from %s/in.tsv.lz4\n' "$W" >"$W/lz4.sql"
"$PGLOAD" run -q --dsn "$DSN" --db lz --data "$W/lz4.sql" >/dev/null 2>"$W/err" || { cat "$W/err"; fail "\\copy from lz4"; }
[ "$(psql -X -At -d lz -c "SELECT string_agg(a || ':' || coalesce(b, 'NULL'), ',' ORDER BY a) FROM t")" = "10:ten,11:NULL" ] ||
	fail "\\copy from an lz4 file"
echo "ok: \\copy from an lz4 file"

# \copy from a missing file is an error naming the file and line
printf 'CREATE TABLE t (a int);\n\\copy t from %s/nope.csv\n' "$W" >"$W/bad.sql"
"$PGLOAD" run -q --dsn "$DSN" --db bad --data "$W/bad.sql" >/dev/null 2>"$W/err" && fail "missing file accepted"
grep -q "bad.sql:2: \\\\copy: could not open \"$W/nope.csv\"" "$W/err" || { cat "$W/err"; fail "missing-file message"; }
echo "ok: \\copy from a missing file"
