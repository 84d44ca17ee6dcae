#!/bin/bash
# test_errors.sh -- pgload's error reports and exit statuses: a syntax error
# at a known line, a bad COPY row, an unknown meta-command, connection
# refused, bad options, --continue-on-error, the server killed mid-run and
# Ctrl-C; the embedded server and its files are gone afterwards.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
W=$(mktempdir)

cat >"$W/syntax.sql" <<'SQL'
CREATE TABLE t (a int);
-- a comment
SELECT 1;
INSERT INTO t
    VALUES (1),
    (2) garbage;
SELECT 2;
SQL
cat >"$W/badcopy.sql" <<'SQL'
CREATE TABLE t (a int, b text);
COPY t (a, b) FROM stdin;
1	one
2	two
three	3
4	four
\.
SELECT 1;
SQL
printf 'SELECT 1;\n\n\\gexec\nSELECT 2;\n' >"$W/meta.sql"
printf 'CREATE TABLE t (a int);\nSELECT 1/0;\nINSERT INTO t VALUES (1);\nSELECT nosuchfn();\nINSERT INTO t VALUES (2);\n' >"$W/two.sql"
printf 'SELECT pg_sleep(60);\n' >"$W/sleep.sql"

# option checks, before any server is started
expect 1 'invalid value "0" for --runs: must be an integer from 1 to 1000' "$PGLOAD" run --runs 0 --data "$W/syntax.sql"
expect 1 'invalid value "65" for --jobs' "$PGLOAD" run --jobs 65 --data "$W/syntax.sql"
expect 1 'give at least one of --schema, -f/--data, --post' "$PGLOAD" run --runs 2
expect 1 'cannot read data file "/nonexistent.sql"' "$PGLOAD" run --data /nonexistent.sql
echo "ok: option checks"

# connection refused
expect 1 'could not connect to database' "$PGLOAD" run -q --dsn "host=$W port=1" --data "$W/syntax.sql"
echo "ok: connection refused"

pg_test_server

expect 1 'syntax.sql:6: ERROR:  syntax error at or near "garbage"' \
	"$PGLOAD" run -q --dsn "$DSN" --db e1 --data "$W/syntax.sql"
grep -q 'statement (line 4): INSERT INTO t' "$W/err" || { cat "$W/err"; fail "statement's first line missing"; }
[ "$(psql -X -At -d e1 -c 'SELECT count(*) FROM t')" = 0 ] || fail "statement after the error ran"
echo "ok: syntax error at a known line"

expect 1 'badcopy.sql:5: ERROR:  invalid input syntax for type integer: "three"' \
	"$PGLOAD" run -q --dsn "$DSN" --db e2 --data "$W/badcopy.sql"
grep -q 'CONTEXT:  COPY t, line 3' "$W/err" || { cat "$W/err"; fail "COPY context missing"; }
echo "ok: bad COPY row"

expect 1 'meta.sql:3: unsupported meta-command "\gexec"' \
	"$PGLOAD" run -q --dsn "$DSN" --db e3 --data "$W/meta.sql"
echo "ok: unsupported meta-command"

expect 0 'two.sql:4: ERROR:  function nosuchfn() does not exist' \
	"$PGLOAD" run -q --dsn "$DSN" --db e4 --data "$W/two.sql" --continue-on-error
grep -q 'two.sql:2: ERROR:  division by zero' "$W/err" || fail "first error not reported"
grep -q '^errors: 2' "$W/out" || { cat "$W/out"; fail "error count missing from the summary"; }
[ "$(psql -X -At -d e4 -c 'SELECT count(*) FROM t')" = 2 ] || fail "--continue-on-error stopped"
echo "ok: --continue-on-error"

# the embedded server: an SQL error still removes everything
expect 1 'syntax.sql:6: ERROR' "$PGLOAD" run -q --embedded --data "$W/syntax.sql"
assert_clean
echo "ok: embedded server removed after an error"

# server killed mid-run: exit 2, clear message, nothing left (its shared
# memory neither: a killed postmaster leaves its System V segment and its
# dynamic shared memory in /dev/shm)
"$PGLOAD" run -q --embedded --data "$W/sleep.sql" >"$W/out" 2>"$W/err" &
pid=$!
pm=""
for i in $(seq 100); do
	pm=$(pgrep -f "postgres -D $TMPDIR/pgload\.[^ ]*/data" -P "$pid" || true)
	[ -n "$pm" ] && psql -X -At -h "$(ls -d "$TMPDIR"/pgload.*/sock 2>/dev/null | head -1)" -d postgres \
		-p "$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$W/err" | head -1)" -c "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'" 2>/dev/null | grep -q 1 && break
	sleep 0.1
done
[ -n "$pm" ] || { kill "$pid"; fail "embedded server not found"; }
# the segments the server's processes map (other tests' servers may make
# theirs meanwhile)
# shellcheck disable=SC2046 # pids are words
dsm_ours=$(shm_mapped_by "$pm" $(pgrep -P "$pm"))
sysv_ours=$(ipcs -m -p | awk -v p="$pm" '$3 == p { print $1 }')
[ -n "$dsm_ours" ] && [ -n "$sysv_ours" ] ||
	{ kill "$pid"; fail "the server's shared memory not found: /dev/shm: $dsm_ours; System V: $sysv_ours"; }
kill -9 "$pm"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 2 ] || { cat "$W/err"; fail "server killed: exit status $rc, want 2"; }
for f in $dsm_ours; do
	[ ! -e "/dev/shm/$f" ] || fail "the killed server's dynamic shared memory is left: /dev/shm/$f"
done
[ -z "$(ipcs -m -p | awk -v p="$pm" '$3 == p')" ] ||
	fail "the killed server's System V segment is left: $(ipcs -m -p | awk -v p="$pm" '$3 == p')"
grep -q 'sleep.sql:1: lost connection to the server' "$W/err" || { cat "$W/err"; fail "no lost-connection message"; }
grep -q 'the server was killed by signal 9' "$W/err" || { cat "$W/err"; fail "server fate not reported"; }
assert_clean
echo "ok: server killed mid-run"

# Ctrl-C (SIGINT) during a statement: exit 2, clean
"$PGLOAD" run -q --embedded --data "$W/sleep.sql" >"$W/out" 2>"$W/err" &
pid=$!
for i in $(seq 100); do # until our server's backend runs the statement
	pm=$(pgrep -f "postgres -D $TMPDIR/pgload\." -P "$pid" || true)
	[ -n "$pm" ] && pgrep -f "postgres: .*SELECT" -P "$pm" >/dev/null && break
	[ -n "$pm" ] && [ "$i" -gt 30 ] && break
	sleep 0.1
done
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 2 ] || { cat "$W/err"; fail "SIGINT: exit status $rc, want 2"; }
grep -q 'Interrupt received' "$W/err" || { cat "$W/err"; fail "no interrupt message"; }
assert_clean
echo "ok: SIGINT"
