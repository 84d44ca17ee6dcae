#!/bin/bash
# test_gen.sh -- `pgload gen` is deterministic (same seed, same bytes;
# another seed, other bytes), its output splits cleanly and loads with
# every foreign key and index of post.sql, one connection or four.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

W=$(mktempdir)
"$PGLOAD" gen -q --scale 0.02 --seed 42 --out "$W/a" || fail "gen a"
"$PGLOAD" gen -q --scale 0.02 --seed 42 --out "$W/b" || fail "gen b"
"$PGLOAD" gen -q --scale 0.02 --seed 43 --out "$W/c" || fail "gen c"
for f in schema.sql data.sql post.sql; do
	cmp "$W/a/$f" "$W/b/$f" || fail "$f differs for the same seed"
done
cmp -s "$W/a/data.sql" "$W/c/data.sql" && fail "data.sql is the same for another seed"
size=$(stat -c %s "$W/a/data.sql")
[ "$size" -gt 1500000 ] && [ "$size" -lt 2500000 ] || fail "scale 0.02 gave $size bytes, want about 2 MB"
echo "ok: deterministic ($size bytes at scale 0.02)"

# bad options
"$PGLOAD" gen --scale 0 --out "$W/x" 2>"$W/err" && fail "scale 0 accepted"
grep -q 'invalid --scale "0"' "$W/err" || fail "bad --scale message"
"$PGLOAD" gen --scale 1 2>"$W/err" && fail "missing --out accepted"
grep -q -- '--out DIR is required' "$W/err" || fail "missing --out message"
echo "ok: option checks"

# every COPY block ends, and the splitter sees the statements
"$PGLOAD" split "$W/a/data.sql" >"$W/split" || fail "split"
[ "$(grep -c '^copy-end' "$W/split")" = 5 ] || fail "want 5 COPY blocks"

pg_test_server
for jobs in 1 4; do
	# --chunk-mb 0.1: the larger COPY blocks load as several chunks side by side
	"$PGLOAD" run -q --dsn "$DSN" --db gen$jobs --jobs $jobs --chunk-mb 0.1 --schema "$W/a/schema.sql" \
		--data "$W/a/data.sql" --post "$W/a/post.sql" >"$W/out" 2>"$W/err" ||
		{ cat "$W/err"; fail "load with --jobs $jobs"; }
	counts=$(psql -X -At -d gen$jobs -c "SELECT (SELECT count(*) FROM customers) || ' ' ||
		(SELECT count(*) FROM products) || ' ' || (SELECT count(*) FROM orders) || ' ' ||
		(SELECT count(*) > 0 FROM order_items) || ' ' || (SELECT count(*) FROM documents)")
	[ "$counts" = "2000 400 11200 true 110" ] || fail "row counts: $counts"
	n=$(psql -X -At -d gen$jobs -c "SELECT count(*) FROM pg_constraint WHERE contype = 'f'")
	[ "$n" = 4 ] || fail "want 4 foreign keys, have $n"
	n=$(psql -X -At -d gen$jobs -c "SELECT string_agg(DISTINCT am.amname, ',' ORDER BY am.amname) FROM pg_class c JOIN pg_am am ON am.oid = c.relam WHERE c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace")
	[ "$n" = "brin,btree,gin" ] || fail "index methods: $n"
	# TOASTed values exist
	n=$(psql -X -At -d gen$jobs -c "SELECT count(*) FROM documents WHERE pg_column_size(body) < octet_length(body) OR octet_length(body) > 8000")
	[ "$n" -gt 0 ] || fail "no large document bodies"
	grep -q 'public.order_items' "$W/out" || fail "per-table rows missing from the summary"
	echo "ok: loads with --jobs $jobs"
done
table_checksums gen1 >"$W/s1"
table_checksums gen4 >"$W/s4"
cmp -s "$W/s1" "$W/s4" || fail "--jobs 4 loaded different contents"
echo "ok: --jobs 4 loads the same rows"

# a chunked block commits in one transaction per chunk; one connection
# loads it in one
xmins() { psql -X -At -d "$1" -c "SELECT count(DISTINCT xmin::text) FROM $2"; }
[ "$(xmins gen1 order_items)" = 1 ] || fail "--jobs 1 split a COPY block"
n=$(xmins gen4 order_items)
[ "$n" -gt 1 ] || fail "--jobs 4 --chunk-mb 0.1 did not split order_items' COPY block ($n transactions)"
echo "ok: --jobs 4 --chunk-mb 0.1 loaded order_items in $n chunks"

# a self-referencing table stays whole: each row references the next one,
# which a chunk loaded beside it would not see
{
	echo 'CREATE TABLE chain (id int PRIMARY KEY, next int REFERENCES chain);'
	echo 'COPY chain (id, next) FROM stdin;'
	awk 'BEGIN { for (i = 1; i < 200000; i++) printf "%d\t%d\n", i, i + 1; print "200000\t\\N"; print "\\." }'
} >"$W/chain.sql"
"$PGLOAD" run -q --dsn "$DSN" --db chain --jobs 4 --chunk-mb 0.1 --data "$W/chain.sql" \
	>"$W/out" 2>"$W/err" || { cat "$W/err"; fail "self-referencing table with --chunk-mb 0.1"; }
[ "$(xmins chain chain)" = 1 ] || fail "a self-referencing table was split"
[ "$(psql -X -At -d chain -c 'SELECT count(*) FROM chain')" = 200000 ] || fail "chain rows"
echo "ok: a self-referencing table loads whole"

"$PGLOAD" run --dsn "$DSN" --db x --chunk-mb -1 --data "$W/chain.sql" 2>"$W/err" && fail "--chunk-mb -1 accepted"
grep -q 'invalid value "-1" for --chunk-mb' "$W/err" || fail "bad --chunk-mb message"
