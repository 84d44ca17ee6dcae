#!/bin/bash
# test_badinput.sh -- pgload run on damaged input: a pg_dump -Fp cut in the
# middle of a COPY block (at a line end and inside a line), inside a dollar
# quote, inside a statement; NUL bytes and binary garbage; invalid UTF-8 in a
# statement and in COPY data of a UTF8 dump; -Fc, -Ft, -Fd and gzip dumps
# given as SQL; a truncated .lz4 dump; a COPY line and a statement of more
# than 1 GB (the real limit, through a pipe, with pgload's peak RSS).  Each
# must fail (exit 1) with a message naming the file, the line where there is
# one and the reason; the COPY it cut short loads nothing; with --dsn the
# run's database is kept and said so; with the embedded server nothing is
# left (no server, no temporary directory).  tests/pgload/test_errors.sh has
# the SQL errors, bad options and connection failures.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
command -v lz4 >/dev/null || skip "no lz4 (scripts/install-deps.sh installs it)"
[ -x /usr/bin/time ] || skip "no /usr/bin/time (scripts/install-deps.sh installs time)"
W=$(mktempdir)
pg_test_server

# insert_line N TEXT -- the dump with the printf-format TEXT as its line N.
insert_line() {
	head -n $(($1 - 1)) "$W/dump.sql"
	printf "$2"
	tail -n +"$1" "$W/dump.sql"
}

# replace_line N TEXT -- the dump with line N replaced by the printf-format TEXT.
replace_line() {
	head -n $(($1 - 1)) "$W/dump.sql"
	printf "$2"
	tail -n +$(($1 + 1)) "$W/dump.sql"
}

# count DB TABLE -- rows of TABLE in DB.
count() { psql -X -At -d "$1" -c "SELECT count(*) FROM $2"; }

createdb src || fail "createdb"
psql -X -q -v ON_ERROR_STOP=1 -d src -f "$TOP/tests/pgload/awkward.sql" >/dev/null 2>&1 ||
	fail "loading awkward.sql"
pg_dump -d src -f "$W/dump.sql" || fail "pg_dump"
grep -q "SET client_encoding = 'UTF8';" "$W/dump.sql" || fail "the dump does not declare UTF8"
"$PGLOAD" run -q --dsn "$DSN" --db whole --data "$W/dump.sql" >/dev/null 2>"$W/err" ||
	{ cat "$W/err"; fail "the whole dump does not load"; }

# ---- truncated dumps ---------------------------------------------------------
copy=$(grep -n '^COPY public.child ' "$W/dump.sql" | cut -d: -f1)
head -n $((copy + 100)) "$W/dump.sql" >"$W/cut_copy.sql"
expect 1 "cut_copy.sql:$((copy + 100)): the input ends inside COPY data (which begins on line $((copy + 1))) without its \\. line (a truncated file?)" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut1 --data "$W/cut_copy.sql"
has "statement (line $copy): COPY public.child (id, parent_id, note) FROM stdin;"
has "the COPY is cancelled: none of its rows are loaded"
has 'database "cut1" is kept as the failed run left it'
[ "$(count cut1 public.child)" = 0 ] || fail "rows of the cut COPY block were loaded"
[ "$(count cut1 '"My Table"')" = "$(count whole '"My Table"')" ] || fail "the block before the cut is not loaded"
# inside a line: a half row must not load as a row
head -c $(($(head -n $((copy + 100)) "$W/dump.sql" | wc -c) + 7)) "$W/dump.sql" >"$W/cut_row.sql"
expect 1 "cut_row.sql:$((copy + 101)): the input ends inside COPY data (which begins on line $((copy + 1)))" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut2 --data "$W/cut_row.sql"
[ "$(count cut2 public.child)" = 0 ] || fail "rows of the cut COPY block were loaded (cut inside a row)"
# the same with --jobs (the block goes to a worker) and in --chunk-mb chunks
expect 1 "cut_copy.sql:$((copy + 100)): the input ends inside COPY data" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut3 --jobs 2 --data "$W/cut_copy.sql"
[ "$(grep -c 'the input ends' "$W/err")" = 1 ] || { cat "$W/err"; fail "--jobs: the error is not said once"; }
[ "$(count cut3 public.child)" = 0 ] || fail "--jobs: rows of the cut COPY block were loaded"
expect 1 "the rest of the block is not loaded; its earlier --chunk-mb chunks are" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut3 --jobs 2 --chunk-mb 0.001 --data "$W/cut_copy.sql"
echo "ok: dump cut inside a COPY block (at a line end, inside a row, --jobs, chunks)"

dq=$(grep -n 'AS \$_\$$' "$W/dump.sql" | head -n 1 | cut -d: -f1)
[ -n "$dq" ] || fail "no dollar-quoted function in the dump (awkward.sql changed?)"
head -n $((dq + 3)) "$W/dump.sql" >"$W/cut_dollar.sql"
expect 1 "cut_dollar.sql:$dq: the input ends inside the dollar-quoted string (\$_\$) that begins here (a truncated file?)" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut4 --data "$W/cut_dollar.sql"
tbl=$(grep -n '^CREATE TABLE public.child ' "$W/dump.sql" | cut -d: -f1)
head -n $((tbl + 2)) "$W/dump.sql" >"$W/cut_stmt.sql"
expect 1 "cut_stmt.sql:$((tbl + 2)): ERROR:  syntax error at end of input" \
	"$PGLOAD" run -q --dsn "$DSN" --db cut5 --data "$W/cut_stmt.sql"
has "statement (line $tbl): CREATE TABLE public.child ("
echo "ok: dump cut inside a dollar quote and inside a statement"

# ---- NUL bytes, garbage, invalid UTF-8 ---------------------------------------
fn=$(grep -n '^CREATE FUNCTION public.plpgsql_fn' "$W/dump.sql" | cut -d: -f1)
insert_line $((fn + 4)) '    -- a\0b\n' >"$W/nul.sql"
expect 1 "nul.sql:$((fn + 4)): a NUL byte in SQL text (a binary or damaged file?)" \
	"$PGLOAD" run -q --dsn "$DSN" --db nul --data "$W/nul.sql"
# a line of binary garbage between two statements
insert_line $tbl '\x89\xfe\xa0garbage\x01\x02\n' >"$W/garbage.sql"
expect 1 "garbage.sql:$tbl: ERROR:  invalid byte sequence for encoding \"UTF8\": 0x89" \
	"$PGLOAD" run -q --dsn "$DSN" --db garbage --data "$W/garbage.sql"
# invalid UTF-8 on the 5th line of a statement: the line of the byte, not the statement's first
insert_line $((fn + 4)) '    -- caf\xe9\n' >"$W/latin1.sql"
expect 1 "latin1.sql:$((fn + 4)): ERROR:  invalid byte sequence for encoding \"UTF8\": 0xe9" \
	"$PGLOAD" run -q --dsn "$DSN" --db utf1 --data "$W/latin1.sql"
has "statement (line $fn): CREATE FUNCTION public.plpgsql_fn"
# ... and in COPY data: the server says which row
replace_line $((copy + 5)) '999999\t1\tcaf\xe9\n' >"$W/latin1copy.sql"
expect 1 "latin1copy.sql:$((copy + 5)): ERROR:  invalid byte sequence for encoding \"UTF8\": 0xe9" \
	"$PGLOAD" run -q --dsn "$DSN" --db utf2 --data "$W/latin1copy.sql"
has "CONTEXT:  COPY child, line 5"
[ "$(count utf2 public.child)" = 0 ] || fail "rows of the COPY block with invalid UTF-8 were loaded"
echo "ok: NUL bytes, binary garbage, invalid UTF-8 in a statement and in COPY data"

# ---- archives and compressed dumps given as SQL: refused before anything starts
pg_dump -d src -Fc -f "$W/dump.custom" || fail "pg_dump -Fc"
pg_dump -d src -Ft -f "$W/dump.tar" || fail "pg_dump -Ft"
pg_dump -d src -Fd -f "$W/dump.dir" || fail "pg_dump -Fd"
gzip -c "$W/dump.sql" >"$W/dump.sql.gz"
before=$(ls -d "$TMPDIR"/pgload.* 2>/dev/null | wc -l)
expect 1 "dump.custom: looks like a pg_dump custom-format archive (-Fc), not SQL; convert it with \`pg_restore -f FILE.sql $W/dump.custom\`" \
	"$PGLOAD" run --data "$W/dump.custom"
expect 1 "dump.tar: looks like a tar archive (pg_dump -Ft?), not SQL; convert it with \`pg_restore -f FILE.sql" \
	"$PGLOAD" run --data "$W/dump.tar"
expect 1 "dump.dir: looks like a pg_dump directory-format archive (-Fd), not SQL" \
	"$PGLOAD" run --data "$W/dump.dir"
expect 1 "dump.sql.gz: is gzip-compressed; pgload reads plain and lz4 input" \
	"$PGLOAD" run --schema "$W/dump.sql" --data "$W/dump.sql.gz"
grep -q 'initdb' "$W/err" && fail "a server was started for a gzip file"
[ "$(ls -d "$TMPDIR"/pgload.* 2>/dev/null | wc -l)" = "$before" ] || fail "a temporary directory was made"
# from a pipe the archive is found when the phase reads it
pg_dump -d src -Fc | "$PGLOAD" run -q --dsn "$DSN" --db pipe --data - >/dev/null 2>"$W/err"
[ $? = 1 ] || fail "-Fc from a pipe: not exit status 1"
has "<stdin>: looks like a pg_dump custom-format archive (-Fc), not SQL"
echo "ok: custom, tar, directory and gzip dumps refused with what to do"

# ---- an unusable TMPDIR: said, before anything is made
printf 'SELECT 1;\n' >"$W/one.sql"
expect 1 'TMPDIR "relative/dir" is not usable: it must be an absolute path' \
	env TMPDIR=relative/dir "$PGLOAD" run --embedded --schema "$W/one.sql"
expect 1 "TMPDIR \"$W/one.sql\" is not usable: not a directory" \
	env TMPDIR="$W/one.sql" "$PGLOAD" run --embedded --schema "$W/one.sql"
expect 1 "TMPDIR \"$W/none\" is not usable: No such file or directory" \
	env TMPDIR="$W/none" "$PGLOAD" compare --gen 1 --backends tmpfs --profiles native
grep -q 'initdb' "$W/err" && fail "a server was started with an unusable TMPDIR"
echo "ok: an unusable TMPDIR is refused, naming it"

# ---- a truncated .lz4 dump ---------------------------------------------------
lz4 -q -B4 -f "$W/dump.sql" "$W/dump.sql.lz4" || fail "lz4"
head -c $(($(stat -c %s "$W/dump.sql.lz4") * 2 / 3)) "$W/dump.sql.lz4" >"$W/cut.sql.lz4"
expect 1 "could not decompress \"$W/cut.sql.lz4\": truncated lz4 frame" \
	"$PGLOAD" run -q --dsn "$DSN" --db cutlz4 --data "$W/cut.sql.lz4"
grep -q "^pgload: $W/cut.sql.lz4:[0-9]*: could not decompress" "$W/err" || { cat "$W/err"; fail "no file:line"; }
has "the COPY is cancelled: none of its rows are loaded"
[ "$(count cutlz4 public.texts)" = 0 ] || fail "rows of the COPY block cut by the lz4 truncation were loaded"
echo "ok: truncated lz4 dump"

# ---- the embedded server: an input error leaves nothing ------------------------
expect 1 "cut_copy.sql:$((copy + 100)): the input ends inside COPY data" \
	"$PGLOAD" run --embedded --data "$W/cut_copy.sql"
grep -q 'is kept' "$W/err" && fail "the embedded server's database is said to be kept"
assert_clean
echo "ok: embedded server removed after a truncated dump"

# ---- over 1 GB: PostgreSQL's limit, found while streaming -----------------------
# the real limit: a 1.1 GB COPY line and statement through a pipe (nothing on disk)
GB=$((1 << 30))
{
	printf 'CREATE TABLE t (a text);\nCOPY t FROM stdin;\n1\n'
	head -c $((GB + GB / 10)) /dev/zero | tr '\0' x
	printf '\n\\.\n'
} | /usr/bin/time -o "$W/rss" -f %M "$PGLOAD" run -q --dsn "$DSN" --db big --data - \
	>/dev/null 2>"$W/err"
[ "${PIPESTATUS[1]}" = 1 ] || { cat "$W/err"; fail "1.1 GB COPY line: exit status ${PIPESTATUS[1]}, want 1"; }
has "<stdin>:4: COPY data line longer than 1 GB (PostgreSQL's limit)"
has "the COPY is cancelled: none of its rows are loaded"
rss=$(tail -n 1 "$W/rss")
[ "$rss" -lt 200000 ] || fail "1.1 GB COPY line: pgload's peak RSS was $rss kB (the line was held)"
[ "$(count big t)" = 0 ] || fail "rows of the COPY block with the long line were loaded"
echo "ok: a 1.1 GB COPY line: refused while streaming, peak RSS $((rss / 1024)) MiB"
# exactly at the limit is refused, one byte less streams on (the server decides then)
for n in $GB $((GB - 1)); do
	{
		printf 'COPY t FROM stdin;\n'
		head -c $n /dev/zero | tr '\0' x
		printf '\n\\.\n'
	} | "$PGLOAD" split - >"$W/out" 2>"$W/err"
	echo "$n ${PIPESTATUS[1]}" >>"$W/limits"
done
[ "$(cat "$W/limits")" = "$GB 1
$((GB - 1)) 0" ] || { cat "$W/limits" "$W/err"; fail "the limit is not 1 GB exactly"; }
grep -q "^copy-end 3 $((GB - 1 + 1)) bytes" "$W/out" || { cat "$W/out"; fail "the line under the limit was not handed out whole"; }
{
	printf 'CREATE TABLE t (a text);\nINSERT INTO t VALUES (\x27'
	head -c $((GB + GB / 10)) /dev/zero | tr '\0' x
	printf '\x27);\n'
} | /usr/bin/time -o "$W/rss" -f %M "$PGLOAD" run -q --dsn "$DSN" --db big2 --data - \
	>/dev/null 2>"$W/err"
[ "${PIPESTATUS[1]}" = 1 ] || { cat "$W/err"; fail "1.1 GB statement: exit status ${PIPESTATUS[1]}, want 1"; }
has "<stdin>:2: statement longer than 1 GB (PostgreSQL's limit)"
rss=$(tail -n 1 "$W/rss")
# a statement is sent whole, so it is held up to the limit, never more; a
# sanitizer build (make check-asan/-tsan) adds shadow memory for every byte
# held, so there the bound is that many times larger
san=1
ldd "$PGLOAD" 2>/dev/null | grep -q 'lib[at]san\.so' && san=4
[ "$rss" -lt $(((1024 * 1024 + 200000) * san)) ] || fail "1.1 GB statement: pgload's peak RSS was $rss kB"
echo "ok: a 1.1 GB statement: refused at the limit, peak RSS $((rss / 1024)) MiB"
