/*
 * test_parser.c -- unit tests of pgload's psql-compatible script splitter
 * and its input layer (plain, lz4 frames, pipes).
 *
 * Each case feeds a script and compares the items the parser hands out,
 * rendered as text, with what psql would execute; damaged input (truncated,
 * binary, an archive) and lines over the limit must fail with their reason.
 * Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lz4frame.h>

#include "pgload.h"

static int failures;
static size_t max_line; /* pgl_parser_set_max_line() for render_path(), 0: default */
static char tmpdir[] = "/tmp/pgload-test-parser.XXXXXX";

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* A growable text rendering of the items. */
struct out {
	char *s;
	size_t len, cap;
	int ret; /* last pgl_parser_next() result */
	char err[512];
	size_t max_chunk; /* largest COPY_DATA item */
	size_t copy_bytes;
};

static void out_add(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->s = realloc(o->s, o->cap);
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void out_fmt(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(struct out *o, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out_add(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/*
 * render() -- parse PATH; items become lines:
 *   S<line>:<text>      a statement (first 200 bytes, newlines as \n)
 *   C<line>:<bytes>     COPY data (copied whole when small)
 *   E<line>             end of COPY
 *   M<line>:cmd[a][b]   meta-command
 */
static void render_path(const char *path, struct out *o, bool keep_data, bool std_off)
{
	struct pgl_input *in;
	struct pgl_parser *p;
	struct pgl_item it;
	char err[256];
	memset(o, 0, sizeof(*o));
	out_add(o, "", 0);
	if (pgl_input_open(path, &in, err) < 0) {
		o->ret = -1;
		snprintf(o->err, sizeof(o->err), "%s", err);
		return;
	}
	if (pgl_parser_create(in, "t.sql", &p) < 0)
		exit(1);
	if (std_off)
		pgl_parser_set_std_strings(p, false);
	if (max_line)
		pgl_parser_set_max_line(p, max_line);
	while ((o->ret = pgl_parser_next(p, &it)) > 0) {
		switch (it.kind) {
		case PGL_ITEM_SQL:
			out_fmt(o, "S%lu%s:", it.line, it.copy_in ? "c" : "");
			for (size_t i = 0; i < it.len; i++) {
				if (it.text[i] == '\n')
					out_add(o, "\\n", 2);
				else
					out_add(o, it.text + i, 1);
			}
			CHECK(strlen(it.text) == it.len, "SQL item length mismatch");
			out_add(o, "\n", 1);
			break;
		case PGL_ITEM_COPY_DATA:
			if (it.len > o->max_chunk)
				o->max_chunk = it.len;
			o->copy_bytes += it.len;
			if (keep_data) {
				out_fmt(o, "C%lu:", it.line);
				out_add(o, it.text, it.len);
				out_add(o, "|\n", 2);
			}
			break;
		case PGL_ITEM_COPY_END:
			out_fmt(o, "E%lu\n", it.line);
			break;
		case PGL_ITEM_META:
			out_fmt(o, "M%lu:%s", it.line, it.cmd);
			for (int i = 0; i < it.argc; i++)
				out_fmt(o, "[%s]", it.argv[i]);
			out_add(o, "\n", 1);
			break;
		}
	}
	if (o->ret < 0)
		snprintf(o->err, sizeof(o->err), "%s", pgl_parser_error(p));
	pgl_parser_destroy(p);
	pgl_input_close(in);
}

static void render(const char *script, size_t len, struct out *o)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/t.sql", tmpdir);
	write_file(path, script, len);
	render_path(path, o, true, false);
}

static void expect(const char *name, const char *script, const char *want)
{
	struct out o;
	render(script, strlen(script), &o);
	CHECK(o.ret == 0, "%s: parser failed: %s", name, o.err);
	CHECK(strcmp(o.s, want) == 0, "%s:\n--- got ---\n%s--- want ---\n%s", name, o.s, want);
	free(o.s);
}

static void expect_error(const char *name, const char *script, const char *errpart)
{
	struct out o;
	render(script, strlen(script), &o);
	CHECK(o.ret < 0, "%s: expected an error, got success:\n%s", name, o.s);
	CHECK(strstr(o.err, errpart) != NULL, "%s: error \"%s\" lacks \"%s\"", name, o.err,
	      errpart);
	free(o.s);
}

static void test_quoting(void)
{
	expect("simple", "SELECT 1;\nSELECT 2;", "S1:SELECT 1;\nS2:SELECT 2;\n");
	expect("no final semicolon", "SELECT 1;\nSELECT 2\n", "S1:SELECT 1;\nS2:SELECT 2\\n\n");
	expect("only comments at end", "SELECT 1;\n-- bye\n/* x */\n", "S1:SELECT 1;\n");
	expect("single quotes", "SELECT 'a;b', 'it''s;';", "S1:SELECT 'a;b', 'it''s;';\n");
	expect("backslash in std string", "SELECT 'a\\';\nSELECT 2;",
	       "S1:SELECT 'a\\';\nS2:SELECT 2;\n");
	expect("E string", "SELECT E'a\\';b', e'\\\\';\nSELECT 2;",
	       "S1:SELECT E'a\\';b', e'\\\\';\nS2:SELECT 2;\n");
	expect("word ending in e is no E string", "SELECT some'x;';\nSELECT 2;",
	       "S1:SELECT some'x;';\nS2:SELECT 2;\n");
	expect("U& and X strings", "SELECT U&'d\\0061;', X'1F', B'01';",
	       "S1:SELECT U&'d\\0061;', X'1F', B'01';\n");
	expect("double quotes", "SELECT 1 AS \"a;\"\"b\";", "S1:SELECT 1 AS \"a;\"\"b\";\n");
	expect("dollar quote", "SELECT $$a;b$$;\nSELECT $f$ $$; $f$;",
	       "S1:SELECT $$a;b$$;\nS2:SELECT $f$ $$; $f$;\n");
	expect("dollar tags nest",
	       "CREATE FUNCTION f() RETURNS int AS $body$\nBEGIN\n  RETURN $q$;$q$;\nEND $body$ "
	       "LANGUAGE plpgsql;\nSELECT 1;",
	       "S1:CREATE FUNCTION f() RETURNS int AS $body$\\nBEGIN\\n  RETURN $q$;$q$;\\nEND "
	       "$body$ LANGUAGE plpgsql;\nS5:SELECT 1;\n");
	expect("dollar param and identifier", "SELECT $1, a$b$ FROM t; SELECT 2;",
	       "S1:SELECT $1, a$b$ FROM t;\nS1:SELECT 2;\n");
	expect("line comment", "-- head; comment\nSELECT 1 -- tail; comment\n;",
	       "S2:SELECT 1 -- tail; comment\\n;\n");
	expect("nested block comment", "SELECT /* a /* b; */ c; */ 1;",
	       "S1:SELECT /* a /* b; */ c; */ 1;\n");
	expect("parentheses",
	       "CREATE RULE r AS ON INSERT TO t DO (INSERT INTO u VALUES (1); INSERT INTO v VALUES "
	       "(2));\nSELECT 1;",
	       "S1:CREATE RULE r AS ON INSERT TO t DO (INSERT INTO u VALUES (1); INSERT INTO v "
	       "VALUES (2));\nS2:SELECT 1;\n");
	expect("begin atomic",
	       "CREATE FUNCTION f() RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT 1;\n  SELECT "
	       "CASE WHEN true THEN 2 END;\nEND;\nSELECT 3;",
	       "S1:CREATE FUNCTION f() RETURNS int LANGUAGE sql\\nBEGIN ATOMIC\\n  SELECT 1;\\n  "
	       "SELECT CASE WHEN true THEN 2 END;\\nEND;\nS6:SELECT 3;\n");
	expect("begin outside a function", "BEGIN;\nSELECT 1;\nEND;",
	       "S1:BEGIN;\nS2:SELECT 1;\nS3:END;\n");
	expect("casts are not variables", "SELECT a::int, x[1:2] FROM t;",
	       "S1:SELECT a::int, x[1:2] FROM t;\n");
	expect("unicode", "SELECT 'héllo;日本';\nSELECT \"ü;\";",
	       "S1:SELECT 'héllo;日本';\nS2:SELECT \"ü;\";\n");
	expect("CRLF", "SELECT 1;\r\nSELECT 2;\r\n", "S1:SELECT 1;\nS2:SELECT 2;\n");

	/* standard_conforming_strings = off: backslash escapes in '' */
	char path[256];
	struct out o;
	snprintf(path, sizeof(path), "%s/off.sql", tmpdir);
	const char *s = "SELECT 'a\\';b';\nSELECT 2;";
	write_file(path, s, strlen(s));
	render_path(path, &o, true, true);
	CHECK(strcmp(o.s, "S1:SELECT 'a\\';b';\nS2:SELECT 2;\n") == 0, "std strings off: got\n%s",
	      o.s);
	free(o.s);
}

static void test_copy(void)
{
	expect("copy block", "COPY public.t (a, b) FROM stdin;\n1\tx;y\n2\t\\N\n\\.\nSELECT 1;\n",
	       "S1c:COPY public.t (a, b) FROM stdin;\nC2:1\tx;y\n2\t\\N\n|\nE4\nS5:SELECT 1;\n");
	expect("copy empty", "COPY t FROM STDIN;\n\\.\nSELECT 1;",
	       "S1c:COPY t FROM STDIN;\nE2\nS3:SELECT 1;\n");
	expect("copy with options and comment",
	       "copy t from stdin with (format csv); -- data follows\na,\"b;\n\\.\nSELECT 1;",
	       "S1c:copy t from stdin with (format csv);\nC2:a,\"b;\n|\nE3\nS4:SELECT 1;\n");
	expect("escaped backslash-dot is data", "COPY t FROM stdin;\n\\\\.\n\\.x\n\\.\n",
	       "S1c:COPY t FROM stdin;\nC2:\\\\.\n\\.x\n|\nE4\n");
	expect("end marker with CRLF", "COPY t FROM stdin;\r\n1\r\n\\.\r\nSELECT 1;",
	       "S1c:COPY t FROM stdin;\nC2:1\r\n|\nE3\nS4:SELECT 1;\n");
	expect_error("copy to end of input", "COPY t FROM stdin;\n1\n2",
		     "t.sql:3: the input ends inside COPY data (which begins on line 2) without "
		     "its \\. line");
	expect_error("copy to end of input after a newline", "SELECT 1;\nCOPY t FROM stdin;\n1\n",
		     "t.sql:3: the input ends inside COPY data (which begins on line 3)");
	expect_error("empty copy at end of input", "COPY t FROM stdin;\n",
		     "t.sql:2: the input ends inside COPY data");
	expect_error("\\copy data to end of input", "\\copy t from stdin\n1\n",
		     "t.sql:2: the input ends inside COPY data");
	expect("copy marker at end of input", "COPY t FROM stdin;\n1\n\\.",
	       "S1c:COPY t FROM stdin;\nC2:1\n|\nE3\n");
	expect("copy from a file is not stdin", "COPY t FROM '/tmp/x';\nSELECT 1;",
	       "S1:COPY t FROM '/tmp/x';\nS2:SELECT 1;\n");
	expect("copy to stdout", "COPY t TO stdout;\nSELECT 1;",
	       "S1:COPY t TO stdout;\nS2:SELECT 1;\n");
	expect("stdin in parens is not COPY FROM STDIN",
	       "COPY (SELECT 1 AS from, 2 AS stdin) TO stdout;\n",
	       "S1:COPY (SELECT 1 AS from, 2 AS stdin) TO stdout;\n");
	expect_error("text after COPY on its line", "COPY t FROM stdin; SELECT 1;\n1\n\\.\n",
		     "t.sql:1: text after COPY");

	char buf[256];
	CHECK(pgl_copy_target("COPY public.t (a) FROM stdin;", buf, sizeof(buf)) > 0 &&
		  strcmp(buf, "public.t") == 0,
	      "copy target: %s", buf);
	CHECK(pgl_copy_target("  copy ONLY \"My \"\"T\".Foo FROM stdin", buf, sizeof(buf)) > 0 &&
		  strcmp(buf, "My \"T.foo") == 0,
	      "copy target quoted: %s", buf);
	CHECK(pgl_copy_target("COPY (SELECT 1) TO stdout", buf, sizeof(buf)) == -EINVAL,
	      "copy target of a query");
}

static void test_meta(void)
{
	expect("pg_dump meta-commands",
	       "\\restrict abc123\nSET x = 1;\n\\unrestrict abc123\n\\connect -reuse-previous=on "
	       "\"dbname='my db'\"\n\\restrict k2\n",
	       "M1:restrict[abc123]\nS2:SET x = 1;\nM3:unrestrict[abc123]\nM4:connect[dbname='my "
	       "db']\nM5:restrict[k2]\n");
	expect("connect user", "\\c mydb bob\n", "M1:c[mydb][bob]\n");
	expect("set and interpolate",
	       "\\set ON_ERROR_STOP on\n\\set tbl foo\n\\set v 'it''s'\nSELECT :v, :'v', :\"tbl\", "
	       ":tbl, :undefined FROM t;\n",
	       "M1:set[ON_ERROR_STOP][on]\nM2:set[tbl][foo]\nM3:set[v][it's]\n"
	       "S4:SELECT it's, 'it''s', \"foo\", foo, :undefined FROM t;\n");
	expect("meta inside a statement", "SELECT\n\\echo hello world\n1;",
	       "M2:echo[hello world]\nS1:SELECT\\n\\n1;\n");
	expect("no meta in quotes", "SELECT '\\foo', $$\\bar$$, E'\\\\';",
	       "S1:SELECT '\\foo', $$\\bar$$, E'\\\\';\n");
	expect("quit", "SELECT 1;\n\\q\nSELECT 2;\n", "S1:SELECT 1;\nM2:q\n");
	expect_error("unsupported meta", "SELECT 1;\n\n\\gexec\n",
		     "t.sql:3: unsupported meta-command \"\\gexec\"");
	expect("\\copy from stdin",
	       "\\copy t (a) from stdin with (format csv)\n1,x\n\\.\nSELECT 1;\n",
	       "M1:copy[t (a) from stdin with (format csv)]\nC2:1,x\n|\nE3\nS4:SELECT 1;\n");
	expect("\\copy from a file", "\\copy t from 'x.csv' csv\nSELECT 1;\n",
	       "M1:copy[t from 'x.csv' csv]\nS2:SELECT 1;\n");
	expect_error("\\copy program", "\\copy t from program 'ls'\n",
		     "t.sql:1: \\copy ... program is not supported");
	expect_error("\\copy garbage", "\\copy t\n", "t.sql:1: cannot parse \\copy");
	expect_error("restricted mode", "\\restrict k1\n\\set x 1\n",
		     "t.sql:2: \\set is not allowed in restricted mode");
	expect_error("wrong unrestrict key", "\\restrict k1\n\\unrestrict k2\n",
		     "t.sql:2: \\unrestrict: wrong key");
	expect_error("unrestrict without restrict", "\\unrestrict k1\n", "not in restricted mode");
}

/* test_damaged() -- truncated, binary and archived input: errors with reasons. */
static void test_damaged(void)
{
	expect_error("truncated in a dollar quote",
		     "SELECT 1;\nCREATE FUNCTION f() RETURNS int AS $body$\nBEGIN\n  RETURN 1;",
		     "t.sql:2: the input ends inside the dollar-quoted string ($body$) that begins "
		     "here (a truncated file?)");
	expect_error("truncated in a string", "SELECT 1;\nINSERT INTO t VALUES (1,\n 'abc",
		     "t.sql:3: the input ends inside a quoted string ('...')");
	expect_error("truncated in an E string", "SELECT E'a\\'b",
		     "t.sql:1: the input ends inside an escape string");
	expect_error("truncated in an identifier", "SELECT \"a;\n", "inside a quoted identifier");
	expect_error("truncated in a comment", "SELECT 1 /* a\n/* b */ c\n",
		     "t.sql:1: the input ends inside a comment");
	expect("a final line comment is fine", "SELECT 1; -- bye", "S1:SELECT 1;\n");
	expect("no semicolon at the end is fine (psql sends it)", "SELECT (1,\n2",
	       "S1:SELECT (1,\\n2\n");

	struct out o;
	static const char nul[] = "SELECT 1;\nSELECT\n 2\0garbage;\nSELECT 3;\n";
	render(nul, sizeof(nul) - 1, &o);
	CHECK(o.ret == -EBADMSG && strstr(o.err, "t.sql:3: a NUL byte in SQL text"),
	      "NUL in SQL: ret %d, %s", o.ret, o.err);
	free(o.s);
	static const char nulmeta[] = "\\echo a\0b\n";
	render(nulmeta, sizeof(nulmeta) - 1, &o);
	CHECK(o.ret == -EBADMSG && strstr(o.err, "t.sql:1: a NUL byte in a meta-command"),
	      "NUL in a meta-command: %s", o.err);
	free(o.s);
	/* NUL bytes in COPY data are the server's to judge (binary COPY has them) */
	static const char nulcopy[] = "COPY t FROM stdin;\na\0b\n\\.\n";
	render(nulcopy, sizeof(nulcopy) - 1, &o);
	CHECK(o.ret == 0, "NUL in COPY data: %s", o.err);
	free(o.s);

	/* archives and compressed files, by their first bytes */
	static const struct {
		const char *head;
		size_t len;
		const char *want;
	} magic[] = {
	    {"PGDMP\x01\x0e\x00\x04\x08", 10,
	     "t.sql: looks like a pg_dump custom-format archive (-Fc), not SQL; convert it with "
	     "`pg_restore -f FILE.sql t.sql`"},
	    {"\x1f\x8b\x08\x00", 4, "t.sql: is gzip-compressed"},
	    {"\x28\xb5\x2f\xfd\x00", 5, "t.sql: is zstd-compressed"},
	    {"BZh91AY&SY\x00", 11, "t.sql: is bzip2-compressed"},
	    {"\xfd\x37zXZ\x00\x00", 7, "t.sql: is xz-compressed"},
	};
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++) {
		render(magic[i].head, magic[i].len, &o);
		CHECK(o.ret == -EBADMSG && strstr(o.err, magic[i].want), "magic %zu: ret %d, %s", i,
		      o.ret, o.err);
		free(o.s);
	}
	char tar[1024];
	memset(tar, 0, sizeof(tar));
	strcpy(tar, "toc.dat");
	memcpy(tar + 257, "ustar", 6); /* with its NUL, then the version */
	memcpy(tar + 263, "00", 2);
	render(tar, sizeof(tar), &o);
	CHECK(o.ret == -EBADMSG && strstr(o.err, "t.sql: looks like a tar archive (pg_dump -Ft?)"),
	      "tar: %s", o.err);
	free(o.s);
	expect("ustar in SQL is SQL", "SELECT 'ustar';", "S1:SELECT 'ustar';\n");
	expect("BZh in SQL is SQL", "SELECT 'BZh91AY';", "S1:SELECT 'BZh91AY';\n");

	/* a pg_dump directory archive given as a file */
	char dir[300], toc[320];
	snprintf(dir, sizeof(dir), "%s/dumpdir", tmpdir);
	snprintf(toc, sizeof(toc), "%s/toc.dat", dir);
	CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
	write_file(toc, "PGDMP", 5);
	struct pgl_input *in;
	char err[256];
	CHECK(pgl_input_open(dir, &in, err) == -EISDIR &&
		  strstr(err, "looks like a pg_dump directory-format archive (-Fd)"),
	      "directory archive: %s", err);
}

/*
 * test_limits() -- COPY lines, statements and meta-command lines at and over
 * the limit (small here; tests/pgload/test_badinput.sh uses the real 1 GB).
 */
static void test_limits(void)
{
	struct out o;
	char path[256];
	max_line = 100;
	/* 99 bytes pass, 100 fail: in one buffer, and spanning buffers */
	char ok[200], bad[200];
	memset(ok, 'x', sizeof(ok));
	memset(bad, 'x', sizeof(bad));
	char script[600];
	snprintf(script, sizeof(script), "COPY t FROM stdin;\n1\n%.99s\n\\.\nSELECT '%.80s';\n", ok,
		 ok);
	render(script, strlen(script), &o);
	CHECK(o.ret == 0, "99-byte line: %s", o.err);
	free(o.s);
	snprintf(script, sizeof(script), "COPY t FROM stdin;\n1\n%.100s\n\\.\n", bad);
	render(script, strlen(script), &o);
	CHECK(
	    o.ret == -E2BIG &&
		strstr(o.err, "t.sql:3: COPY data line longer than 100 bytes (PostgreSQL's limit)"),
	    "100-byte line: ret %d, %s", o.ret, o.err);
	free(o.s);
	snprintf(script, sizeof(script), "COPY t FROM stdin;\n1\n%.100s", bad);
	render(script, strlen(script), &o);
	CHECK(o.ret == -E2BIG && strstr(o.err, "t.sql:3: COPY data line longer"),
	      "100-byte last line: %s", o.err);
	free(o.s);
	snprintf(script, sizeof(script), "SELECT 1;\nSELECT\n'%.95s';\n", bad);
	render(script, strlen(script), &o);
	CHECK(o.ret == -E2BIG &&
		  strstr(o.err, "t.sql:2: statement longer than 100 bytes (PostgreSQL's limit)"),
	      "long statement: ret %d, %s", o.ret, o.err);
	free(o.s);
	snprintf(script, sizeof(script), "\\echo %.100s", bad);
	render(script, strlen(script), &o);
	CHECK(o.ret == -E2BIG && strstr(o.err, "t.sql:1: meta-command line longer"),
	      "long meta-command: ret %d, %s", o.ret, o.err);
	free(o.s);

	/* a 3 MiB line over a 2 MiB limit: found while streaming, never held */
	max_line = 2 << 20;
	snprintf(path, sizeof(path), "%s/long.sql", tmpdir);
	FILE *f = fopen(path, "w");
	char kib[1024];
	memset(kib, 'y', sizeof(kib));
	fputs("COPY t FROM stdin;\n1\n", f);
	for (int i = 0; i < 3 * 1024; i++)
		fwrite(kib, 1, sizeof(kib), f);
	fputs("\n\\.\n", f);
	fclose(f);
	render_path(path, &o, false, false);
	CHECK(o.ret == -E2BIG && strstr(o.err, "t.sql:3: COPY data line longer than 2097152 bytes"),
	      "3 MiB line: ret %d, %s", o.ret, o.err);
	CHECK(o.max_chunk <= 1024 * 1024 && o.copy_bytes < (3u << 20),
	      "3 MiB line: chunks of %zu, %zu bytes handed out", o.max_chunk, o.copy_bytes);
	free(o.s);
	max_line = 0;
}

/* test_large() -- a COPY block far larger than the buffer, and a huge line. */
static void test_slash_copy_parse(void)
{
	struct pgl_slash_copy sc;
	CHECK(pgl_slash_copy_parse("\"from\" (a) FROM 'my ''file''.csv' csv header", &sc) == 0 &&
		  sc.from && sc.kind == PGL_COPY_FILE && !strcmp(sc.target, "\"from\" (a)") &&
		  !strcmp(sc.source, "my 'file'.csv") &&
		  !strcmp(sc.sql, "COPY \"from\" (a) FROM STDIN csv header"),
	      "\\copy parse 1: %s / %s / %s", sc.target, sc.source, sc.sql);
	CHECK(pgl_slash_copy_parse("(SELECT 1 FROM t) TO 'out.csv' WITH (FORMAT csv)", &sc) == 0 &&
		  !sc.from && !strcmp(sc.target, "(SELECT 1 FROM t)") &&
		  !strcmp(sc.sql, "COPY (SELECT 1 FROM t) TO STDOUT WITH (FORMAT csv)"),
	      "\\copy parse 2: %s", sc.sql);
	CHECK(pgl_slash_copy_parse("t from pstdin", &sc) == 0 && sc.kind == PGL_COPY_PSTD,
	      "\\copy parse pstdin");
	CHECK(pgl_slash_copy_parse("t FROM STDIN", &sc) == 0 && sc.kind == PGL_COPY_INLINE,
	      "\\copy parse stdin");
	CHECK(pgl_slash_copy_parse("t from program 'ls'", &sc) == -ENOTSUP, "\\copy program");
	CHECK(pgl_slash_copy_parse("t", &sc) == -EINVAL, "\\copy without direction");
}

static void test_large(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/big.sql", tmpdir);
	FILE *f = fopen(path, "w");
	size_t data = 0;
	fputs("COPY t FROM stdin;\n", f);
	for (int i = 0; i < 300000; i++)
		data += (size_t)fprintf(f, "%d\tsome text for row %d\t\\N\n", i, i);
	/* one line of 5 MiB */
	fputs("huge\t", f);
	data += 5;
	char block[1024];
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = "0123456789abcdef"[i % 16];
	block[sizeof(block) - 1] = '\\'; /* a COPY escape spanning blocks */
	for (int i = 0; i < 5 * 1024; i++)
		data += fwrite(block, 1, sizeof(block), f);
	fputs("\n\\.\nSELECT 'after';\n", f);
	data += 1;
	/* a 3 MiB string literal with semicolons */
	fputs("SELECT '", f);
	for (int i = 0; i < 3 * 1024 * 1024 / 4; i++)
		fputs("ab;c", f);
	fputs("';\nSELECT 'end';\n", f);
	fclose(f);

	struct out o;
	render_path(path, &o, false, false);
	CHECK(o.ret == 0, "big: %s", o.err);
	CHECK(o.copy_bytes == data, "big: copy bytes %zu, want %zu", o.copy_bytes, data);
	CHECK(o.max_chunk <= 1024 * 1024, "big: chunk of %zu bytes", o.max_chunk);
	CHECK(strstr(o.s, "\nS300004:SELECT 'after';\n") != NULL, "big: line numbers: %.300s", o.s);
	CHECK(strstr(o.s, "S300006:SELECT 'end';\n") != NULL, "big: statement after literal");
	free(o.s);
}

/* test_lz4() -- the same items from an lz4 frame, concatenated frames and stdin. */
static void test_lz4(void)
{
	const char *script =
	    "SET x = 'a;b';\nCOPY t FROM stdin;\n1\n2\n\\.\n\\connect db\nSELECT 1;\n";
	size_t len = strlen(script);
	size_t cap = LZ4F_compressFrameBound(len, NULL);
	char *z = malloc(2 * cap);
	size_t zl = LZ4F_compressFrame(z, cap, script, len, NULL);
	CHECK(!LZ4F_isError(zl), "lz4 compress");
	/* a second frame right after the first */
	size_t zl2 = LZ4F_compressFrame(z + zl, cap, "SELECT 2;\n", 10, NULL);
	char plain[256], lz[256];
	snprintf(plain, sizeof(plain), "%s/p.sql", tmpdir);
	snprintf(lz, sizeof(lz), "%s/p.sql.lz4", tmpdir);
	write_file(plain, script, len);
	write_file(lz, z, zl);
	struct out a, b;
	render_path(plain, &a, true, false);
	render_path(lz, &b, true, false);
	CHECK(a.ret == 0 && b.ret == 0 && strcmp(a.s, b.s) == 0, "lz4 differs:\n%s\nvs\n%s", a.s,
	      b.s);
	free(b.s);

	write_file(lz, z, zl + zl2);
	render_path(lz, &b, true, false);
	CHECK(b.ret == 0 && strstr(b.s, "SELECT 2;") != NULL, "concatenated frames: %s %s", b.s,
	      b.err);
	free(b.s);

	/* truncated frame */
	write_file(lz, z, zl - 3);
	render_path(lz, &b, true, false);
	CHECK(b.ret == -EBADMSG && strstr(b.err, "lz4"), "truncated lz4: ret %d, %s", b.ret, b.err);
	free(b.s);

	/* stdin through a pipe */
	int fds[2];
	CHECK(pipe(fds) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (size_t off = 0; off < zl;) {
			ssize_t n = write(fds[1], z + off, 1); /* a byte at a time */
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	int saved = dup(0);
	dup2(fds[0], 0);
	close(fds[0]);
	render_path("-", &b, true, false);
	dup2(saved, 0);
	close(saved);
	waitpid(pid, NULL, 0);
	CHECK(b.ret == 0 && strcmp(a.s, b.s) == 0, "lz4 from stdin:\n%s", b.s);
	free(a.s);
	free(b.s);
	free(z);

	/* a missing file names the file */
	struct pgl_input *in;
	char err[256];
	CHECK(pgl_input_open("/nonexistent/x.sql", &in, err) == -ENOENT &&
		  strstr(err, "\"/nonexistent/x.sql\"") != NULL,
	      "missing file: %s", err);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_quoting();
	test_copy();
	test_meta();
	test_slash_copy_parse();
	test_damaged();
	test_limits();
	test_large();
	test_lz4();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("all parser tests passed\n");
	return 0;
}
