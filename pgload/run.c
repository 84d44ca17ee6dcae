/*
 * run.c -- `pgload run`: replay scripts against PostgreSQL and time them.
 *
 * A run creates a fresh database, checkpoints, then executes up to three
 * phases (schema, data, post-data), each one script, each timed on its own:
 * wall clock, this process's user and system CPU (as `time` reports them for
 * psql), rows and bytes per table, WAL bytes from pg_current_wal_lsn().
 *
 * What must stay true:
 *  - Statements go to the server exactly as the parser split them, in order,
 *    on one connection per phase (except with --jobs, see parallel.c).
 *  - An error stops the run (like psql -v ON_ERROR_STOP=1) unless
 *    --continue-on-error; either way it is reported with file:line, the
 *    statement's first line and the server's message, detail and hint.
 *  - A broken connection is never retried or waited on: it ends the run
 *    with exit status 2, and the embedded server is still cleaned up.
 *  - Only databases pgload created (marked with a comment) are dropped,
 *    unless --force.
 *  - An interrupt stops the run in whatever step it is (each step starts
 *    with pgl_step(), which names it), cancels what runs, and the clean-up
 *    then removes what the run made: the embedded server, or with --dsn the
 *    database this process created.  Damaged input (parser.c) is an error
 *    that cancels the COPY it cut: a cut block loads none of its rows.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pgload.h"
#include "pgload_i.h"
#include "run_i.h"

const char *const pgl_phase_names[PGL_NPHASE] = {"schema", "data", "post"};

#define DB_MARKER      "pgload scratch database"
#define PIPELINE_BATCH 256

/* ---- per-table statistics ----------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int pgl_tables_add(struct pgl_tables *t, const char *name, uint64_t rows, uint64_t bytes)
{
	if (!t->hash) {
		t->nbuckets = 256;
		t->hash = calloc(t->nbuckets, sizeof(*t->hash));
		if (!t->hash)
			return -ENOMEM;
	}
	uint64_t h = hash_str(name) % t->nbuckets;
	struct pgl_table_stat *e;
	for (e = t->hash[h]; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			break;
	if (!e) {
		if (t->count >= t->nbuckets * 2) {
			/* grow: rehash in place of the chains */
			size_t nb = t->nbuckets * 4;
			struct pgl_table_stat **nh = calloc(nb, sizeof(*nh));
			if (!nh)
				return -ENOMEM;
			for (struct pgl_table_stat *x = t->first; x; x = x->order) {
				uint64_t k = hash_str(x->name) % nb;
				x->next = nh[k];
				nh[k] = x;
			}
			free(t->hash);
			t->hash = nh;
			t->nbuckets = nb;
			h = hash_str(name) % nb;
		}
		e = calloc(1, sizeof(*e));
		if (!e || !(e->name = strdup(name))) {
			free(e);
			return -ENOMEM;
		}
		e->next = t->hash[h];
		t->hash[h] = e;
		if (t->last)
			t->last->order = e;
		else
			t->first = e;
		t->last = e;
		t->count++;
	}
	e->rows += rows;
	e->bytes += bytes;
	return 0;
}

int pgl_tables_merge(struct pgl_tables *dst, const struct pgl_tables *src)
{
	for (struct pgl_table_stat *e = src->first; e; e = e->order) {
		int ret = pgl_tables_add(dst, e->name, e->rows, e->bytes);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void pgl_tables_free(struct pgl_tables *t)
{
	struct pgl_table_stat *e = t->first;
	while (e) {
		struct pgl_table_stat *n = e->order;
		free(e->name);
		free(e);
		e = n;
	}
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* ---- connections -------------------------------------------------------- */

static void notice_quiet(void *arg, const PGresult *res)
{
	(void)arg;
	(void)res;
}

static void notice_print(void *arg, const PGresult *res)
{
	(void)arg;
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	/* NOTICEs are chatter in a replay; warnings are worth seeing */
	if (sev && strcmp(sev, "WARNING") == 0)
		fprintf(stderr, "pgload: server %s", PQresultErrorMessage(res));
}

PGconn *pgl_connect(struct pgl_ctx *c, const char *dbname, const char *user, bool quiet)
{
	const char *kw[6], *val[6];
	int n = 0;
	kw[n] = "dbname";
	val[n++] = c->base;
	if (dbname) {
		kw[n] = "dbname";
		val[n++] = dbname;
	}
	if (user) {
		kw[n] = "user";
		val[n++] = user;
	}
	kw[n] = "fallback_application_name";
	val[n++] = "pgload";
	kw[n] = NULL;
	val[n] = NULL;
	PGconn *conn = PQconnectStartParams(kw, val, 1);
	if (!conn) {
		fprintf(stderr, "pgload: out of memory connecting to the server\n");
		return NULL;
	}
	/*
	 * PQconnectdb() without its blind wait: an interrupt ends the attempt.
	 * connect_timeout (libpq: at least 2 s) bounds the whole attempt here,
	 * not each host's.
	 */
	int timeout_ms = -1;
	PQconninfoOption *ci = PQconninfo(conn);
	for (PQconninfoOption *op = ci; op && op->keyword; op++)
		if (strcmp(op->keyword, "connect_timeout") == 0 && op->val && atoi(op->val) > 0)
			timeout_ms = (atoi(op->val) < 2 ? 2 : atoi(op->val)) * 1000;
	PQconninfoFree(ci);
	double t0 = pgl_now();
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	while (PQstatus(conn) != CONNECTION_BAD && ps != PGRES_POLLING_OK &&
	       ps != PGRES_POLLING_FAILED) {
		int left = -1, w = 0;
		if (timeout_ms >= 0) {
			left = timeout_ms - (int)((pgl_now() - t0) * 1000);
			left = left < 0 ? 0 : left;
		}
		if (left != 0)
			w = pgl_wait_fd(PQsocket(conn),
					ps == PGRES_POLLING_READING ? POLLIN : POLLOUT, left);
		if (w == -EINTR) {
			PQfinish(conn);
			return NULL;
		}
		if (w == 0) {
			if (!quiet)
				fprintf(stderr,
					"pgload: could not connect to database \"%s\": timeout "
					"expired (connect_timeout)\n",
					dbname ? dbname : "(default)");
			PQfinish(conn);
			return NULL;
		}
		ps = PQconnectPoll(conn);
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		if (!quiet)
			fprintf(stderr, "pgload: could not connect to database \"%s\": %s",
				dbname ? dbname : "(default)", PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	PQsetNoticeReceiver(conn, c->o->quiet ? notice_quiet : notice_print, NULL);
	pgl_cancel_register(conn);
	return conn;
}

void pgl_disconnect(PGconn *conn)
{
	if (!conn)
		return;
	pgl_cancel_unregister(conn);
	PQfinish(conn);
}

/*
 * pgl_admin_exec() -- run SQL on the admin connection; print errors (not
 * the cancellation of an interrupt: -EINTR).
 */
int pgl_admin_exec(struct pgl_ctx *c, const char *sql, char *out, size_t cap)
{
	PGresult *res = PQexec(c->admin, sql);
	int st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && atomic_load(&pgl_interrupted)) {
		PQclear(res);
		return -EINTR;
	}
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		if (PQstatus(c->admin) == CONNECTION_BAD)
			fprintf(stderr, "pgload: lost connection to the server: %s",
				PQerrorMessage(c->admin));
		else
			fprintf(stderr, "pgload: %s failed: %s", sql, PQresultErrorMessage(res));
		PQclear(res);
		return PQstatus(c->admin) == CONNECTION_BAD ? -ECONNRESET : -EIO;
	}
	if (out && cap) {
		out[0] = '\0';
		if (st == PGRES_TUPLES_OK && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
			snprintf(out, cap, "%s", PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	return 0;
}

/* wal_lsn() -- the current WAL insert position in bytes. */
static int wal_lsn(struct pgl_ctx *c, uint64_t *lsn)
{
	char buf[64];
	unsigned hi, lo;
	int ret = pgl_admin_exec(c, "SELECT pg_current_wal_lsn()", buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, "%X/%X", &hi, &lo) != 2) {
		fprintf(stderr, "pgload: cannot parse WAL position \"%s\"\n", buf);
		return -EPROTO;
	}
	*lsn = (uint64_t)hi << 32 | lo;
	return 0;
}

/* ---- error reporting ---------------------------------------------------- */

/* first_line() -- the first line of a statement, past comments, shortened. */
void pgl_first_line(const char *text, char *buf, size_t cap)
{
	const char *s = pgl_sql_skip(text);
	size_t n = strcspn(s, "\n");
	if (n >= cap - 4 && cap > 8) {
		snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
		return;
	}
	snprintf(buf, cap, "%.*s", (int)n, s);
}

/*
 * error_line() -- the input line of a character position in a statement; a
 * position at the end of the text ("syntax error at end of input") is on
 * the line of its last visible character.
 */
static unsigned long error_line(const char *text, unsigned long line0, long pos)
{
	unsigned long line = line0, visible = line0;
	long chars = 0;
	const unsigned char *s;
	for (s = (const unsigned char *)text; *s && chars < pos - 1; s++) {
		if ((*s & 0xC0) != 0x80)
			chars++;
		if (*s == '\n')
			line++;
		else if (!isspace(*s))
			visible = line;
	}
	return *s ? line : visible;
}

/*
 * bad_utf8_line() -- the line of the first byte of TEXT (which starts on
 * LINE0) that is not well-formed UTF-8, or 0 if it all is.
 */
static unsigned long bad_utf8_line(const char *text, unsigned long line0)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned long line = line0;
	while (*s) {
		unsigned char c = *s;
		size_t n = c < 0x80		    ? 1
			   : c >= 0xC2 && c <= 0xDF ? 2
			   : c >= 0xE0 && c <= 0xEF ? 3
			   : c >= 0xF0 && c <= 0xF4 ? 4
						    : 0;
		if (n == 0)
			return line;
		for (size_t i = 1; i < n; i++)
			if ((s[i] & 0xC0) != 0x80)
				return line;
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
		    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
			return line;
		line += c == '\n';
		s += n;
	}
	return 0;
}

void pgl_report_error(const char *fname, const char *text, unsigned long line,
		      unsigned long copy_line0, const PGresult *res, const char *connmsg)
{
	char first[128];
	const char *sev = res ? PQresultErrorField(res, PG_DIAG_SEVERITY) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	const char *context = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;
	const char *pos = res ? PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION) : NULL;
	unsigned long eline = line;

	if (pos && text)
		eline = error_line(text, line, atol(pos));
	if (context && copy_line0 && strncmp(context, "COPY ", 5) == 0) {
		const char *l = strstr(context, ", line ");
		if (l)
			eline = copy_line0 + strtoul(l + 7, NULL, 10) - 1;
	} else if (!pos && text && msg && strstr(msg, "for encoding \"UTF8\"")) {
		/* the server checks a statement's encoding whole: find the byte */
		unsigned long l = bad_utf8_line(text, line);
		if (l)
			eline = l;
	}
	if (msg) {
		fprintf(stderr, "pgload: %s:%lu: %s:  %s\n", fname, eline, sev ? sev : "ERROR",
			msg);
	} else {
		const char *m = connmsg ? connmsg
				: res	? PQresultErrorMessage(res)
					: "unknown error";
		fprintf(stderr, "pgload: %s:%lu: %.*s\n", fname, eline, (int)strcspn(m, "\n"), m);
	}
	if (text) {
		pgl_first_line(text, first, sizeof(first));
		fprintf(stderr, "  statement (line %lu): %s\n", line, first);
	}
	if (detail)
		fprintf(stderr, "  DETAIL:  %s\n", detail);
	if (hint)
		fprintf(stderr, "  HINT:  %s\n", hint);
	if (context)
		fprintf(stderr, "  CONTEXT:  %.*s\n", (int)strcspn(context, "\n"), context);
}

/* lost_connection() -- report a dead connection, with the server's fate. */
void pgl_lost_connection(struct pgl_ctx *c, const char *fname, unsigned long line, PGconn *conn)
{
	const char *m = conn ? PQerrorMessage(conn) : "";
	fprintf(stderr, "pgload: %s:%lu: lost connection to the server: %.*s\n", fname, line,
		(int)strcspn(m, "\n"), m);
	if (c->server) {
		/* give a dying postmaster a moment to be reaped */
		for (int i = 0; i < 50 && pgl_server_alive(c->server); i++)
			usleep(10000);
		char how[160];
		pgl_server_describe_exit(c->server, how, sizeof(how));
		fprintf(stderr, "pgload: %s\n", how);
		pgl_server_log_tail(c->server, 8);
	}
}

/* ---- executing one script ----------------------------------------------- */

struct exec {
	struct pgl_ctx *c;
	struct pgl_phase_result *res;
	struct pgl_parser *p;
	struct pgl_input *in;
	const char *fname;
	PGconn *conn;
	char *dbname;
	struct pgl_pool *pool; /* --jobs: the workers */
	bool parallel;	       /* this phase may use a pool */
	/* pipeline: statements sent but not yet read */
	bool in_pipeline;
	int npending;
	struct {
		unsigned long line;
		char *text;
	} pending[PIPELINE_BATCH];
};

static bool var_bool(const char *v, bool dflt)
{
	if (!v)
		return dflt;
	if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	    !strcmp(v, "1"))
		return true;
	if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
	    !strcmp(v, "0"))
		return false;
	return dflt;
}

/* stop_on_error() -- ON_ERROR_STOP as the script left it (default on). */
static bool stop_on_error(const struct exec *e)
{
	if (e->c->o->cont)
		return false;
	return var_bool(pgl_parser_var(e->p, "ON_ERROR_STOP"), true);
}

/* statement_error() -- count an error; PGL_WENT_ON to go on, -EIO to stop. */
static int statement_error(struct exec *e)
{
	e->res->errors++;
	return stop_on_error(e) ? -EIO : PGL_WENT_ON;
}

/*
 * parse_failed() -- the parser returned R < 0: an interrupted read aborts
 * (the signal was reported), anything else is an input error to report.
 */
static int parse_failed(struct exec *e, int r)
{
	if (r == -EINTR || atomic_load(&pgl_interrupted))
		return -EINTR;
	fprintf(stderr, "pgload: %s\n", pgl_parser_error(e->p));
	return pgl_aborts(r) ? -EIO : r;
}

void pgl_report_copy_cancelled(const char *text, unsigned long line, bool chunked)
{
	char first[128];
	pgl_first_line(text, first, sizeof(first));
	fprintf(stderr, "  statement (line %lu): %s\n", line, first);
	if (chunked)
		fprintf(stderr, "  the rest of the block is not loaded; its earlier --chunk-mb "
				"chunks are\n");
	else
		fprintf(stderr, "  the COPY is cancelled: none of its rows are loaded\n");
}

/* skip_copy() -- discard COPY data items up to the end of the block. */
static int skip_copy(struct exec *e)
{
	struct pgl_item it;
	int ret;
	while ((ret = pgl_parser_next(e->p, &it)) > 0)
		if (it.kind == PGL_ITEM_COPY_END)
			return 0;
	if (ret < 0)
		return parse_failed(e, ret);
	return 0;
}

/* count_rows() -- rows of an INSERT or COPY command tag. */
static void count_rows(struct exec *e, const char *text, PGresult *res, uint64_t bytes,
		       bool is_copy)
{
	const char *tag = PQcmdStatus(res);
	uint64_t rows = strtoull(PQcmdTuples(res), NULL, 10);
	char name[256];
	if (!tag || (strncmp(tag, "INSERT ", 7) != 0 && strncmp(tag, "COPY ", 5) != 0))
		return;
	if (!is_copy && strncmp(tag, "COPY ", 5) == 0)
		return; /* COPY ... TO: nothing loaded */
	e->res->rows += rows;
	e->res->bytes += bytes;
	if (is_copy && pgl_copy_target(text, name, sizeof(name)) > 0) {
		pgl_tables_add(&e->res->tables, name, rows, bytes);
	} else if (!is_copy) {
		/* INSERT INTO name ... */
		struct pgl_sql_tok t;
		const char *s = text;
		if (pgl_sql_token(&s, &t) && strcmp(t.word, "insert") == 0 &&
		    pgl_sql_token(&s, &t) && strcmp(t.word, "into") == 0 &&
		    pgl_sql_name(&s, name, sizeof(name)) > 0)
			pgl_tables_add(&e->res->tables, name, rows, 0);
	}
}

/*
 * send_copy() -- stream the COPY data items that follow to the server.
 * Returns 0 with *bytes set once \. was reached, or -errno;
 * the COPY is then ended with an error, so that none of it is loaded.
 */
static int send_copy(struct exec *e, const struct pgl_item *stmt, uint64_t *bytes,
		     unsigned long *line0)
{
	struct pgl_item it;
	int ret;
	bool failed = false;
	*bytes = 0;
	*line0 = 0;
	while ((ret = pgl_parser_next(e->p, &it)) > 0) {
		if (it.kind == PGL_ITEM_COPY_END)
			break;
		if (*line0 == 0)
			*line0 = it.line;
		if (failed)
			continue;
		if (pgl_put_copy(e->conn, it.text, it.len) != 1)
			failed = true; /* the reason comes with PQgetResult */
		*bytes += it.len;
		atomic_fetch_add(&e->c->progress_bytes, it.len);
		if (e->c->progress) {
			atomic_fetch_add(&e->c->progress_rows, pgl_count_lines(it.text, it.len));
			e->c->progress_pos = pgl_input_consumed(e->in);
		}
		if (atomic_load(&pgl_interrupted)) {
			PQputCopyEnd(e->conn, "pgload was interrupted");
			skip_copy(e);
			return -EINTR;
		}
	}
	if (ret < 0) {
		int st = parse_failed(e, ret);
		PQputCopyEnd(e->conn,
			     st == -EINTR ? "pgload was interrupted" : "pgload: input error");
		if (st != -EINTR)
			pgl_report_copy_cancelled(stmt->text, stmt->line, false);
		return st;
	}
	if (*line0 == 0)
		*line0 = it.line;
	if (!failed)
		PQputCopyEnd(e->conn, NULL);
	return 0;
}

int pgl_put_copy(PGconn *conn, const char *buf, size_t len)
{
	while (len > 0) {
		size_t n = len > PGL_COPY_MSG ? PGL_COPY_MSG : len;
		if (PQputCopyData(conn, buf, (int)n) != 1)
			return -1;
		buf += n;
		len -= n;
	}
	return 1;
}

uint64_t pgl_count_lines(const char *buf, size_t len)
{
	uint64_t n = 0;
	const char *end = buf + len;
	while ((buf = memchr(buf, '\n', (size_t)(end - buf)))) {
		n++;
		buf++;
	}
	return n;
}

/* drain_copy_out() -- a COPY ... TO STDOUT: read and drop its data. */
static void drain_copy_out(PGconn *conn)
{
	char *buf;
	while (PQgetCopyData(conn, &buf, 0) > 0)
		PQfreemem(buf);
}

/* after_statement() -- follow session state the parser depends on. */
static void after_statement(struct exec *e)
{
	const char *scs = PQparameterStatus(e->conn, "standard_conforming_strings");
	if (scs)
		pgl_parser_set_std_strings(e->p, strcmp(scs, "on") == 0);
}

/* exec_sql() -- send one statement and process all its results. */
static int exec_sql(struct exec *e, const struct pgl_item *it)
{
	PGresult *res;
	int ret = 0;
	bool copied = false;
	uint64_t bytes = 0;
	unsigned long line0 = 0;

	e->res->statements++;
	if (!PQsendQuery(e->conn, it->text)) {
		if (PQstatus(e->conn) == CONNECTION_BAD) {
			pgl_lost_connection(e->c, e->fname, it->line, e->conn);
			return -ECONNRESET;
		}
		pgl_report_error(e->fname, it->text, it->line, 0, NULL, PQerrorMessage(e->conn));
		return statement_error(e);
	}
	while ((res = PQgetResult(e->conn))) {
		switch (PQresultStatus(res)) {
		case PGRES_COPY_IN:
			if (!it->copy_in) {
				PQputCopyEnd(
				    e->conn,
				    "pgload: COPY FROM STDIN not recognised in the script");
				break;
			}
			copied = true;
			ret = send_copy(e, it, &bytes, &line0);
			break;
		case PGRES_COPY_OUT:
			drain_copy_out(e->conn);
			break;
		case PGRES_FATAL_ERROR:
			if (PQstatus(e->conn) == CONNECTION_BAD) {
				ret = -ECONNRESET;
				break;
			}
			if (atomic_load(&pgl_interrupted)) {
				ret = -EINTR;
				break;
			}
			if (ret != 0)
				break; /* the COPY we ended after an input error: said already */
			pgl_report_error(e->fname, it->text, it->line, line0, res, NULL);
			ret = statement_error(e);
			break;
		case PGRES_COMMAND_OK:
			count_rows(e, it->text, res, bytes, copied);
			break;
		default:
			break;
		}
		PQclear(res);
		if (PQstatus(e->conn) == CONNECTION_BAD)
			break;
	}
	if (PQstatus(e->conn) == CONNECTION_BAD) {
		if (atomic_load(&pgl_interrupted))
			return -EINTR;
		pgl_lost_connection(e->c, e->fname, it->line, e->conn);
		return -ECONNRESET;
	}
	if (it->copy_in && !copied) {
		int r = skip_copy(e);
		if (r < 0)
			return r;
	}
	after_statement(e);
	if (ret == 0 && atomic_load(&pgl_interrupted))
		ret = -EINTR;
	return ret;
}

/* ---- pipeline mode ------------------------------------------------------ */

/* pipelinable() -- INSERT/UPDATE/DELETE go through the pipeline. */
static bool pipelinable(const char *text)
{
	struct pgl_sql_tok t;
	return pgl_sql_token(&text, &t) &&
	       (strcmp(t.word, "insert") == 0 || strcmp(t.word, "update") == 0 ||
		strcmp(t.word, "delete") == 0);
}

/* pipeline_flush() -- sync and read the results of every pending statement. */
static int pipeline_flush(struct exec *e)
{
	int ret = 0;
	if (!e->in_pipeline)
		return 0;
	if (e->npending > 0 && PQpipelineSync(e->conn) != 1) {
		pgl_lost_connection(e->c, e->fname, e->pending[0].line, e->conn);
		ret = -ECONNRESET;
		goto out;
	}
	for (int i = 0; i < e->npending; i++) {
		PGresult *res;
		while ((res = PQgetResult(e->conn))) {
			int st = PQresultStatus(res);
			if (st == PGRES_FATAL_ERROR) {
				if (PQstatus(e->conn) != CONNECTION_BAD) {
					pgl_report_error(e->fname, e->pending[i].text,
							 e->pending[i].line, 0, res, NULL);
					if (ret == 0)
						ret = statement_error(e);
				}
			} else if (st == PGRES_PIPELINE_ABORTED) {
				e->res->errors++;
			} else if (st == PGRES_COMMAND_OK) {
				count_rows(e, e->pending[i].text, res, 0, false);
			}
			PQclear(res);
		}
		if (PQstatus(e->conn) == CONNECTION_BAD)
			break;
	}
	if (PQstatus(e->conn) != CONNECTION_BAD && e->npending > 0) {
		PGresult *res = PQgetResult(e->conn); /* the sync */
		PQclear(res);
	}
	if (PQstatus(e->conn) == CONNECTION_BAD) {
		pgl_lost_connection(e->c, e->fname, e->npending ? e->pending[0].line : 0, e->conn);
		ret = -ECONNRESET;
	}
out:
	for (int i = 0; i < e->npending; i++)
		free(e->pending[i].text);
	e->npending = 0;
	if (ret != -ECONNRESET)
		PQexitPipelineMode(e->conn);
	e->in_pipeline = false;
	return ret;
}

static int pipeline_send(struct exec *e, const struct pgl_item *it)
{
	if (!e->in_pipeline) {
		if (PQenterPipelineMode(e->conn) != 1) {
			fprintf(stderr, "pgload: cannot enter pipeline mode: %s",
				PQerrorMessage(e->conn));
			return -EIO;
		}
		e->in_pipeline = true;
	}
	e->res->statements++;
	if (!PQsendQueryParams(e->conn, it->text, 0, NULL, NULL, NULL, NULL, 0)) {
		if (PQstatus(e->conn) == CONNECTION_BAD) {
			pgl_lost_connection(e->c, e->fname, it->line, e->conn);
			return -ECONNRESET;
		}
		pgl_report_error(e->fname, it->text, it->line, 0, NULL, PQerrorMessage(e->conn));
		return statement_error(e);
	}
	e->pending[e->npending].line = it->line;
	e->pending[e->npending].text = strdup(it->text);
	e->npending++;
	if (e->npending == PIPELINE_BATCH)
		return pipeline_flush(e);
	return 0;
}

/* ---- meta-commands ------------------------------------------------------ */

/* copy_results() -- read the results of a COPY; count rows, report errors. */
static int copy_results(struct exec *e, const char *sql, unsigned long line, uint64_t bytes,
			bool in)
{
	PGresult *res;
	int ret = 0;
	while ((res = PQgetResult(e->conn))) {
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			count_rows(e, sql, res, bytes, in);
		} else if (PQresultStatus(res) == PGRES_FATAL_ERROR && ret == 0) {
			if (atomic_load(&pgl_interrupted)) {
				ret = -EINTR;
			} else if (PQstatus(e->conn) == CONNECTION_BAD) {
				ret = -ECONNRESET;
			} else {
				pgl_report_error(e->fname, sql, line, 0, res, NULL);
				ret = statement_error(e);
			}
		}
		PQclear(res);
		if (PQstatus(e->conn) == CONNECTION_BAD)
			break;
	}
	if (PQstatus(e->conn) == CONNECTION_BAD) {
		if (atomic_load(&pgl_interrupted))
			return -EINTR;
		pgl_lost_connection(e->c, e->fname, line, e->conn);
		return -ECONNRESET;
	}
	return ret;
}

/*
 * slash_copy() -- \copy: as COPY ... FROM STDIN / TO STDOUT with the data
 * from or to the script, a client-side file, or the process's stdin.  Data
 * "to stdout" is dropped (stdout carries the summary).
 */
static int slash_copy(struct exec *e, const struct pgl_item *it)
{
	struct pgl_slash_copy sc;
	if (pgl_slash_copy_parse(it->argv[0], &sc) < 0) {
		fprintf(stderr, "pgload: %s:%lu: cannot parse \\copy\n", e->fname, it->line);
		return -EINVAL;
	}
	if (sc.from && sc.kind == PGL_COPY_INLINE) {
		struct pgl_item q = *it;
		q.kind = PGL_ITEM_SQL;
		q.text = sc.sql;
		q.len = strlen(sc.sql);
		q.copy_in = true;
		return exec_sql(e, &q);
	}
	e->res->statements++;
	if (!sc.from) {
		FILE *out = NULL;
		if (sc.kind == PGL_COPY_FILE && !(out = fopen(sc.source, "w"))) {
			fprintf(stderr, "pgload: %s:%lu: \\copy: could not write \"%s\": %s\n",
				e->fname, it->line, sc.source, strerror(errno));
			return statement_error(e);
		}
		PGresult *res = PQexec(e->conn, sc.sql);
		if (PQresultStatus(res) == PGRES_COPY_OUT) {
			char *buf;
			int n;
			while ((n = PQgetCopyData(e->conn, &buf, 0)) > 0) {
				if (out)
					fwrite(buf, 1, (size_t)n, out);
				PQfreemem(buf);
			}
			PQclear(res);
			res = NULL;
		}
		int ret = 0;
		if (out && fclose(out) != 0) {
			fprintf(stderr, "pgload: %s:%lu: \\copy: could not write \"%s\": %s\n",
				e->fname, it->line, sc.source, strerror(errno));
			ret = statement_error(e);
		}
		if (res) {
			/* the COPY failed to start */
			if (PQstatus(e->conn) == CONNECTION_BAD) {
				PQclear(res);
				pgl_lost_connection(e->c, e->fname, it->line, e->conn);
				return -ECONNRESET;
			}
			pgl_report_error(e->fname, sc.sql, it->line, 0, res, NULL);
			PQclear(res);
			return statement_error(e);
		}
		int r2 = copy_results(e, sc.sql, it->line, 0, false);
		return r2 != 0 ? r2 : ret;
	}
	/* from a client-side file or the process's stdin (lz4 welcome) */
	struct pgl_input *in;
	char err[256];
	if (pgl_input_open(sc.kind == PGL_COPY_FILE ? sc.source : "-", &in, err) < 0) {
		fprintf(stderr, "pgload: %s:%lu: \\copy: %s\n", e->fname, it->line, err);
		return statement_error(e);
	}
	PGresult *res = PQexec(e->conn, sc.sql);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		pgl_input_close(in);
		if (PQstatus(e->conn) == CONNECTION_BAD) {
			PQclear(res);
			pgl_lost_connection(e->c, e->fname, it->line, e->conn);
			return -ECONNRESET;
		}
		pgl_report_error(e->fname, sc.sql, it->line, 0, res, NULL);
		PQclear(res);
		return statement_error(e);
	}
	PQclear(res);
	char *buf = malloc(PGL_COPY_MSG);
	uint64_t bytes = 0;
	ssize_t n = buf ? 0 : -ENOMEM;
	while (buf && (n = pgl_input_read(in, buf, PGL_COPY_MSG)) > 0) {
		if (pgl_put_copy(e->conn, buf, (size_t)n) != 1)
			break;
		bytes += (uint64_t)n;
		atomic_fetch_add(&e->c->progress_bytes, (uint64_t)n);
		if (atomic_load(&pgl_interrupted))
			break;
	}
	free(buf);
	if (n < 0) {
		fprintf(stderr, "pgload: %s:%lu: \\copy: %s\n", e->fname, it->line,
			buf ? pgl_input_error(in) : "out of memory");
		PQputCopyEnd(e->conn, "pgload: could not read the \\copy source");
	} else if (atomic_load(&pgl_interrupted)) {
		PQputCopyEnd(e->conn, "pgload was interrupted");
	} else {
		PQputCopyEnd(e->conn, NULL);
	}
	pgl_input_close(in);
	return copy_results(e, sc.sql, it->line, bytes, true);
}

/* connect_to() -- \connect: replace the session's connection. */
static int connect_to(struct exec *e, const struct pgl_item *it, const char *db, const char *user)
{
	if (e->pool) {
		/* the workers are connected to the old database: drain, restart */
		int st = pgl_pool_destroy(e->pool, e->res);
		e->pool = NULL;
		if (st < 0)
			return st;
	}
	PGconn *n = pgl_connect(e->c, db, user, false);
	if (!n) {
		fprintf(stderr, "pgload: %s:%lu: \\connect failed\n", e->fname, it->line);
		return -ECONNREFUSED;
	}
	pgl_disconnect(e->conn);
	e->conn = n;
	free(e->dbname);
	e->dbname = strdup(PQdb(n));
	after_statement(e);
	if (e->c->o->jobs > 1 && e->parallel)
		return pgl_pool_create(e->c, e->fname, e->dbname, e->c->o->jobs, &e->pool);
	return 0;
}

static int do_meta(struct exec *e, const struct pgl_item *it)
{
	switch (it->meta) {
	case PGL_META_CONNECT: {
		const char *db = it->argc > 0 ? it->argv[0] : "-";
		const char *user = it->argc > 1 ? it->argv[1] : NULL;
		char *cdb = NULL, *cuser = NULL;
		if (strchr(db, '=') || strncmp(db, "postgres://", 11) == 0 ||
		    strncmp(db, "postgresql://", 13) == 0) {
			/* a connection string: take its database and user, keep our server */
			PQconninfoOption *opts = PQconninfoParse(db, NULL);
			if (!opts) {
				fprintf(stderr,
					"pgload: %s:%lu: invalid connection string in \\connect\n",
					e->fname, it->line);
				return -EINVAL;
			}
			for (PQconninfoOption *op = opts; op->keyword; op++) {
				if (!op->val || !*op->val)
					continue;
				if (strcmp(op->keyword, "dbname") == 0)
					cdb = strdup(op->val);
				else if (strcmp(op->keyword, "user") == 0)
					cuser = strdup(op->val);
			}
			PQconninfoFree(opts);
			db = cdb ? cdb : "-";
			if (!user)
				user = cuser;
		}
		if (strcmp(db, "-") == 0)
			db = e->dbname;
		if (user && strcmp(user, "-") == 0)
			user = NULL;
		int r = connect_to(e, it, db, user);
		free(cdb);
		free(cuser);
		return r;
	}
	case PGL_META_COPY:
		return slash_copy(e, it);
	case PGL_META_ECHO:
		if (!e->c->o->quiet)
			fprintf(stderr, "%s\n", it->argv[0]);
		return 0;
	case PGL_META_ENCODING:
		if (PQsetClientEncoding(e->conn, it->argv[0]) != 0) {
			fprintf(stderr, "pgload: %s:%lu: invalid encoding name \"%s\"\n", e->fname,
				it->line, it->argv[0]);
			return statement_error(e);
		}
		return 0;
	default:
		return 0;
	}
}

/*
 * pool_copy() -- with --jobs: hand COPY block IT to the pool, as chunks of
 * about --chunk-mb cut at line boundaries so that one large table loads on
 * several connections.  The block is read (and skipped) here as the workers
 * start on it.  A block stays whole with --continue-on-error (psql loads a
 * block all or nothing), for lz4 input (each worker would decompress up to
 * its chunk), and for tables with a self-referencing foreign key or user
 * triggers (see pgl_pool_splittable()).
 */
static int pool_copy(struct exec *e, const struct pgl_item *it)
{
	uint64_t off = pgl_parser_offset(e->p);
	unsigned long dl = pgl_parser_line(e->p);
	uint64_t chunk = e->c->o->chunk_bytes;
	bool split = chunk > 0 && stop_on_error(e) && !pgl_input_is_lz4(e->in) &&
		     pgl_pool_splittable(e->conn, it->text);
	bool same = false;
	uint64_t cut = 0; /* a chunk ends here, once more data follows it */
	unsigned long cutline = 0;
	struct pgl_item d;
	int ret = 0, r = 0;

	while (split && (r = pgl_parser_next(e->p, &d)) > 0 && d.kind == PGL_ITEM_COPY_DATA) {
		for (;;) {
			if (cut) {
				ret = pgl_pool_copy(e->pool, e->conn, it->text, it->line, off, dl,
						    cut, same, true);
				if (ret < 0)
					return ret;
				same = true;
				off = cut;
				dl = cutline;
				cut = 0;
			}
			/* the first line end in D at or past off + chunk ends a chunk */
			uint64_t from = off + chunk - 1;
			if (from >= d.offset + d.len)
				break;
			size_t i = from > d.offset ? (size_t)(from - d.offset) : 0;
			const char *nl = memchr(d.text + i, '\n', d.len - i);
			if (!nl)
				break;
			size_t n = (size_t)(nl - d.text) + 1;
			cut = d.offset + n;
			cutline = d.line + pgl_count_lines(d.text, n);
			if (n == d.len)
				break; /* at the end of D: emitted once more data follows */
		}
	}
	if (split && r < 0) {
		ret = parse_failed(e, r);
		if (ret != -EINTR)
			pgl_report_copy_cancelled(it->text, it->line, same);
		return ret;
	}
	/* the rest of the block (all of it when not split) */
	ret =
	    pgl_pool_copy(e->pool, e->conn, it->text, it->line, off, dl, 0, same, stop_on_error(e));
	if (!split) {
		int r2 = skip_copy(e);
		if (r2 < 0 && r2 != -EINTR)
			pgl_report_copy_cancelled(it->text, it->line, false);
		if (r2 < 0)
			return r2;
	}
	return ret;
}

/*
 * pool_sql() -- with --jobs: hand a statement to the pool, or run it on the
 * main connection (after draining the pool if it is a barrier).
 */
static int pool_sql(struct exec *e, const struct pgl_item *it)
{
	char name[512];
	int ret;
	if (it->copy_in)
		return pool_copy(e, it);
	switch (pgl_pool_classify(it->text, name, sizeof(name))) {
	case PGL_CL_SESSION:
		ret = exec_sql(e, it);
		if (ret == 0)
			ret = pgl_pool_preamble(e->pool, it->text);
		return ret;
	case PGL_CL_TABLE:
	case PGL_CL_TABLE_FK:
		return pgl_pool_sql(e->pool, e->conn, it->text, it->line, name,
				    pgl_pool_classify(it->text, name, sizeof(name)) ==
					PGL_CL_TABLE_FK,
				    stop_on_error(e));
	default:
		ret = pgl_pool_wait(e->pool);
		if (ret < 0)
			return ret;
		return exec_sql(e, it);
	}
}

/*
 * pgl_exec_file() -- run script PATH on a new connection to DBNAME,
 * accumulating into RES.  Returns 0 (errors may have been counted), or
 * -errno.
 */
int pgl_exec_file(struct pgl_ctx *c, const char *path, const char *dbname,
		  struct pgl_phase_result *res, bool parallel)
{
	/* messages say <stdin>, as psql's do */
	struct exec e = {.c = c, .res = res, .fname = strcmp(path, "-") == 0 ? "<stdin>" : path};
	struct pgl_item it;
	char err[256];
	int ret = 0, r;

	if ((r = pgl_input_open(path, &e.in, err)) < 0) {
		if (r == -EINTR)
			return r; /* a FIFO's writer never came: said already */
		fprintf(stderr, "pgload: %s\n", err);
		return r;
	}
	if ((r = pgl_parser_create(e.in, e.fname, &e.p)) < 0) {
		pgl_input_close(e.in);
		return r;
	}
	e.conn = pgl_connect(c, dbname, NULL, false);
	if (!e.conn) {
		ret = atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
		goto out;
	}
	e.dbname = strdup(dbname);
	after_statement(&e);
	e.parallel = parallel && c->o->jobs > 1;
	if (e.parallel && pgl_input_size(e.in) < 0) {
		if (!c->o->quiet)
			fprintf(
			    stderr,
			    "pgload: --jobs needs a regular file to reopen, not stdin or a pipe: "
			    "loading %s on one connection\n",
			    path);
		e.parallel = false;
	}
	if (e.parallel && (ret = pgl_pool_create(c, path, dbname, c->o->jobs, &e.pool)) < 0)
		goto out;
	while ((r = pgl_parser_next(e.p, &it)) > 0) {
		if (atomic_load(&pgl_interrupted)) {
			ret = -EINTR; /* before sending anything more */
			break;
		}
		if (it.kind == PGL_ITEM_SQL && c->o->pipeline && !it.copy_in &&
		    pipelinable(it.text)) {
			ret = pipeline_send(&e, &it);
		} else {
			ret = pipeline_flush(&e);
			if (ret >= 0) {
				if (it.kind == PGL_ITEM_SQL && e.pool)
					ret = pool_sql(&e, &it);
				else if (it.kind == PGL_ITEM_SQL)
					ret = exec_sql(&e, &it);
				else if (it.kind == PGL_ITEM_META)
					ret = do_meta(&e, &it);
			}
		}
		if (ret < 0)
			break;
		if (atomic_load(&pgl_interrupted)) {
			ret = -EINTR;
			break;
		}
		c->progress_pos = pgl_input_consumed(e.in);
		ret = 0;
	}
	if (r < 0)
		ret = parse_failed(&e, r);
	if (ret == 0) {
		ret = pipeline_flush(&e);
		if (ret == PGL_WENT_ON)
			ret = 0;
	} else if (e.in_pipeline && !pgl_aborts(ret)) {
		pipeline_flush(&e);
	}
	if (e.pool) {
		int st = pgl_pool_wait(e.pool);
		st = pgl_pool_destroy(e.pool, res);
		e.pool = NULL;
		/* the first error, unless a later one aborts */
		if ((ret == 0 && st < 0) || (!pgl_aborts(ret) && pgl_aborts(st)))
			ret = st;
	}
out:
	pgl_pool_destroy(e.pool, res);
	if (e.conn && pgl_aborts(ret) && atomic_load(&pgl_interrupted))
		PQrequestCancel(e.conn);
	pgl_disconnect(e.conn);
	for (int i = 0; i < e.npending; i++)
		free(e.pending[i].text);
	free(e.dbname);
	pgl_parser_destroy(e.p);
	pgl_input_close(e.in);
	return ret;
}

/* ---- runs --------------------------------------------------------------- */

/* pgl_prepare_db() -- drop (if ours or --force) and create the run's database. */
int pgl_prepare_db(struct pgl_ctx *c)
{
	const char *db = c->o->db;
	char *lit = PQescapeLiteral(c->admin, db, strlen(db));
	char *id = PQescapeIdentifier(c->admin, db, strlen(db));
	char sql[1024], val[256];
	int ret;
	if (pgl_step("createdb", "creating the database \"%s\"", db)) {
		ret = -EINTR;
		goto out;
	}
	if (!lit || !id) {
		fprintf(stderr, "pgload: cannot quote the database name \"%s\": %s", db,
			PQerrorMessage(c->admin));
		ret = -ENOMEM;
		goto out;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT coalesce(shobj_description(oid, 'pg_database'), '') || '|' "
		 "FROM pg_database WHERE datname = %s",
		 lit);
	if ((ret = pgl_admin_exec(c, sql, val, sizeof(val))) < 0)
		goto out;
	if (val[0]) {
		bool ours = strcmp(val, DB_MARKER "|") == 0;
		if (!ours && !c->o->force) {
			fprintf(stderr,
				"pgload: database \"%s\" exists and was not created by pgload "
				"(use --force to drop it, or --db NAME)\n",
				db);
			ret = -EEXIST;
			goto out;
		}
		snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", id);
		if ((ret = pgl_admin_exec(c, sql, NULL, 0)) < 0)
			goto out;
		c->db_created = false;
	}
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", id);
	if ((ret = pgl_admin_exec(c, sql, NULL, 0)) < 0)
		goto out;
	c->db_created = true; /* even before the marker: an interrupt drops it */
	snprintf(sql, sizeof(sql), "COMMENT ON DATABASE %s IS '" DB_MARKER "'", id);
	if ((ret = pgl_admin_exec(c, sql, NULL, 0)) < 0)
		goto out;
	ret = pgl_admin_exec(c, "CHECKPOINT", NULL, 0);
out:
	PQfreemem(lit);
	PQfreemem(id);
	return ret;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* io_off() -- say once why there are no per-class I/O figures, and stop. */
static void io_off(struct pgl_ctx *c, const char *why)
{
	if (c->progress)
		fprintf(stderr, "\r\033[K"); /* not in the middle of the progress line */
	fprintf(stderr, "pgload: `%s stat %s --json` failed (%s); going on without per-class I/O\n",
		c->io_bin, c->io_mnt, why);
	c->io_on = false;
}

/* io_snapshot() -- the pgiofs counters now; false if there are none. */
static bool io_snapshot(struct pgl_ctx *c, struct pgl_io *io)
{
	char err[600];
	if (!c->io_on)
		return false;
	if (pgl_io_sample(c->io_bin, c->io_mnt, io, err, sizeof(err)) < 0) {
		io_off(c, err);
		return false;
	}
	return true;
}

/*
 * pgl_io_setup() -- if the data directory is on a pgiofs mount (as
 * /proc/self/mountinfo says; --on-pgiofs makes one), find the pgiofs binary
 * whose `stat` gives the per-class I/O of each phase.
 */
void pgl_io_setup(struct pgl_ctx *c)
{
	const char *own = c->server ? pgl_server_mount(c->server) : NULL;
	int ret = 0;
	/* a --dsn server's directory may be on another machine: it must exist here */
	if (c->datadir[0] && (access(c->datadir, F_OK) == 0 || errno != ENOENT))
		ret = pgl_io_find_mount(c->datadir, NULL, c->io_mnt, sizeof(c->io_mnt));
	if (ret <= 0 && own) {
		snprintf(c->io_mnt, sizeof(c->io_mnt), "%s", own);
		ret = 1;
	}
	if (ret <= 0) {
		c->io_mnt[0] = '\0';
		return;
	}
	ret = pgl_io_find_bin(c->o->pgiofs_bin, c->io_bin, sizeof(c->io_bin));
	if (ret < 0) {
		snprintf(c->io_bin, sizeof(c->io_bin), "%s",
			 c->o->pgiofs_bin ? c->o->pgiofs_bin : "pgiofs");
		c->io_on = true;
		io_off(c, c->o->pgiofs_bin ? strerror(-ret)
					   : "no pgiofs binary beside pgload or on PATH");
		return;
	}
	c->io_on = true;
	if (!c->o->quiet)
		fprintf(stderr,
			"pgload: data directory on pgiofs mount %s: per-class I/O from `%s stat`\n",
			c->io_mnt, c->io_bin);
}

/* pgl_run_phase() -- one timed phase of one run. */
int pgl_run_phase(struct pgl_ctx *c, enum pgl_phase ph, struct pgl_phase_result *r)
{
	struct rusage ru0, ru1;
	uint64_t lsn0 = 0, lsn1 = 0;
	struct pgl_io io0, io1;
	int ret;
	const char *f = c->o->file[ph];
	if (pgl_step(pgl_phase_names[ph], "running the %s phase of %s", pgl_phase_names[ph],
		     strcmp(f, "-") == 0 ? "stdin" : f))
		return -EINTR;
	bool have_io0 = io_snapshot(c, &io0);
	if ((ret = wal_lsn(c, &lsn0)) < 0)
		return ret;
	c->progress_pos = 0;
	atomic_store(&c->progress_bytes, 0);
	atomic_store(&c->progress_rows, 0);
	c->progress_phase = ph;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = pgl_now();
	ret = pgl_exec_file(c, c->o->file[ph], c->o->db, r, ph != PGL_PH_SCHEMA);
	double t1 = pgl_now();
	getrusage(RUSAGE_SELF, &ru1);
	r->present = true;
	r->real = t1 - t0;
	r->user = tv(ru1.ru_utime) - tv(ru0.ru_utime);
	r->sys = tv(ru1.ru_stime) - tv(ru0.ru_stime);
	if (pgl_aborts(ret))
		return ret;
	int r2 = wal_lsn(c, &lsn1);
	if (r2 < 0)
		return r2;
	r->wal = lsn1 >= lsn0 ? lsn1 - lsn0 : 0;
	if (have_io0 && io_snapshot(c, &io1)) {
		if (pgl_io_delta(&io0, &io1, &r->io) == 0)
			r->has_io = true;
		else
			io_off(c, "counters went down: was pgiofs remounted?");
	}
	return ret;
}

/* pgl_server_info() -- version and the settings that matter, for the report. */
void pgl_server_info(struct pgl_ctx *c)
{
	static const char *const names[] = {
	    "shared_buffers",
	    "wal_level",
	    "fsync",
	    "synchronous_commit",
	    "full_page_writes",
	    "wal_compression",
	    "max_wal_size",
	    "checkpoint_timeout",
	    "maintenance_work_mem",
	    "work_mem",
	    "wal_buffers",
	    "data_checksums",
	    "max_parallel_maintenance_workers",
	    NULL,
	};
	const char *v = PQparameterStatus(c->admin, "server_version");
	snprintf(c->server_version, sizeof(c->server_version), "%.*s", v ? (int)strcspn(v, " ") : 7,
		 v ? v : "unknown");
	for (int i = 0; names[i] && i < PGL_MAXSETTINGS && !atomic_load(&pgl_interrupted); i++) {
		char sql[128], val[64];
		snprintf(sql, sizeof(sql), "SELECT current_setting('%s')", names[i]);
		if (pgl_admin_exec(c, sql, val, sizeof(val)) == 0) {
			c->setting_name[c->nsettings] = names[i];
			snprintf(c->setting_val[c->nsettings], sizeof(c->setting_val[0]), "%s",
				 val);
			c->nsettings++;
		}
	}
	PGresult *res = PQexec(c->admin, "SELECT current_setting('data_directory')");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		snprintf(c->datadir, sizeof(c->datadir), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (c->datadir[0] && access(c->datadir, F_OK) == 0)
		snprintf(c->fstype, sizeof(c->fstype), "%s", pgl_fstype(c->datadir));
	else
		snprintf(c->fstype, sizeof(c->fstype), "unknown");
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(c->kernel, sizeof(c->kernel), "%s %s %s", u.sysname, u.release, u.machine);
}

/*
 * drop_run_db() -- after an interrupt, drop the database this process
 * created on a --dsn server (never one it did not create: c->db_created).
 * The admin connection is no longer cancelled by signals (the step is
 * "cleanup"), and the drop is bounded in time.
 */
static void drop_run_db(struct pgl_ctx *c)
{
	const char *db = c->o->db;
	char *id = PQescapeIdentifier(c->admin, db, strlen(db));
	char sql[256];
	if (!id)
		return;
	PQclear(PQexec(c->admin, "SET statement_timeout = '30s'"));
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", id);
	PQfreemem(id);
	PGresult *res = PQexec(c->admin, sql);
	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		c->db_created = false;
		fprintf(stderr, "pgload: database \"%s\" dropped\n", db);
	} else {
		fprintf(stderr, "pgload: could not drop database \"%s\": %s", db,
			PQerrorMessage(c->admin));
	}
	PQclear(res);
}

/* ---- options ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: pgload run [--schema FILE] [--data FILE] [--post FILE] [OPTIONS]\n"
	       "\n"
	       "Replay psql scripts (pg_dump -Fp output works; lz4 frames and \"-\" for stdin\n"
	       "are accepted) into a fresh database per run and time each phase.\n"
	       "\n"
	       "inputs (at least one):\n"
	       "  -s, --schema FILE        schema phase script\n"
	       "  -d, --data FILE          data phase script (a whole dump works alone)\n"
	       "  -p, --post FILE          post-data phase script (indexes, constraints)\n"
	       "runs:\n"
	       "  -n, --runs N             measured runs (1..1000, default 1)\n"
	       "  -w, --warmup N           unmeasured runs first (0..100, default 0)\n"
	       "      --db NAME            database to (re)create per run (default pgload)\n"
	       "      --force              drop --db even if pgload did not create it\n"
	       "      --continue-on-error  count errors and go on (default: stop at the first)\n"
	       "  -j, --jobs N             parallel connections for data and post-data (1..64)\n"
	       "      --chunk-mb N         with --jobs, load COPY blocks in chunks of N MB on\n"
	       "                           several connections (default 16, 0 = whole blocks)\n"
	       "      --pipeline           send INSERT/UPDATE/DELETE in libpq pipeline batches\n"
	       "server:\n"
	       "      --dsn CONNINFO       use this server (its database, or postgres, for admin)\n"
	       "      --pgdata DIR         embedded server: cluster directory (absent or empty)\n"
	       "      --pgbin DIR          embedded server: directory of initdb and postgres\n"
	       "      --set NAME=VALUE     embedded server: a server setting (repeatable)\n"
	       "      --on-pgiofs          embedded server: cluster on a pgiofs mount of its own\n"
	       "      --profile NAME       pgiofs profile (pgiofs --profile NAME) or a file\n"
	       "      --pgiofs-bin PATH    pgiofs binary for --on-pgiofs and `pgiofs stat`\n"
	       "                           (default: beside pgload, else on PATH)\n"
	       "output:\n"
	       "      --json FILE          every sample and the settings as JSON (\"-\" = stdout)\n"
	       "      --csv FILE           one row per run and phase\n"
	       "      --label TEXT         label for this configuration in JSON/CSV\n"
	       "  -q, --quiet              no progress or notices on stderr\n"
	       "      --progress           progress on stderr even if it is not a terminal\n"
	       "      --no-progress        no progress line\n"
	       "\n"
	       "Exit status: 0 success, 1 error, 2 aborted (interrupted or server lost).\n");
}

static int parse_int(const char *opt, const char *arg, long min, long max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > max) {
		fprintf(
		    stderr,
		    "pgload run: invalid value \"%s\" for %s: must be an integer from %ld to %ld\n",
		    arg, opt, min, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/*
 * check_input() -- read the first item of PATH, so that a file that is no
 * SQL script (an archive, a compressed or binary file) fails before any
 * server or database is made.  Pipes are left alone: they read once.
 */
static int check_input(const char *path)
{
	struct pgl_input *in;
	struct pgl_parser *p = NULL;
	struct pgl_item it;
	struct stat st;
	char err[256];
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	int ret = pgl_input_open(path, &in, err);
	if (ret < 0) {
		fprintf(stderr, "pgload: %s\n", err);
		return ret;
	}
	if ((ret = pgl_parser_create(in, path, &p)) == 0 && (ret = pgl_parser_next(p, &it)) < 0)
		fprintf(stderr, "pgload: %s\n", pgl_parser_error(p));
	pgl_parser_destroy(p);
	pgl_input_close(in);
	return ret < 0 ? ret : 0;
}

static int parse_opts(int argc, char **argv, struct pgl_opts *o)
{
	enum {
		O_DB = 256,
		O_FORCE,
		O_CONT,
		O_PIPE,
		O_DSN,
		O_PGDATA,
		O_PGBIN,
		O_SET,
		O_JSON,
		O_CSV,
		O_LABEL,
		O_PROGRESS,
		O_NOPROGRESS,
		O_PGIOFS,
		O_PROFILE,
		O_PGIOFS_BIN,
		O_CHUNK
	};
	static const struct option opts[] = {
	    {"schema", required_argument, NULL, 's'},
	    {"data", required_argument, NULL, 'd'},
	    {"post", required_argument, NULL, 'p'},
	    {"runs", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"chunk-mb", required_argument, NULL, O_CHUNK},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"db", required_argument, NULL, O_DB},
	    {"force", no_argument, NULL, O_FORCE},
	    {"continue-on-error", no_argument, NULL, O_CONT},
	    {"pipeline", no_argument, NULL, O_PIPE},
	    {"dsn", required_argument, NULL, O_DSN},
	    {"pgdata", required_argument, NULL, O_PGDATA},
	    {"pgbin", required_argument, NULL, O_PGBIN},
	    {"set", required_argument, NULL, O_SET},
	    {"json", required_argument, NULL, O_JSON},
	    {"csv", required_argument, NULL, O_CSV},
	    {"label", required_argument, NULL, O_LABEL},
	    {"progress", no_argument, NULL, O_PROGRESS},
	    {"no-progress", no_argument, NULL, O_NOPROGRESS},
	    {"on-pgiofs", no_argument, NULL, O_PGIOFS},
	    {"profile", required_argument, NULL, O_PROFILE},
	    {"pgiofs-bin", required_argument, NULL, O_PGIOFS_BIN},
	    {NULL, 0, NULL, 0},
	};
	int ch;
	o->runs = 1;
	o->jobs = 1;
	o->chunk_bytes = 16 << 20;
	o->db = "pgload";
	o->progress = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:d:p:n:w:j:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->file[PGL_PH_SCHEMA] = optarg;
			break;
		case 'd':
			o->file[PGL_PH_DATA] = optarg;
			break;
		case 'p':
			o->file[PGL_PH_POST] = optarg;
			break;
		case 'n':
			if (parse_int("--runs", optarg, 1, 1000, &o->runs) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_int("--warmup", optarg, 0, 100, &o->warmup) < 0)
				return -EINVAL;
			break;
		case 'j':
			if (parse_int("--jobs", optarg, 1, 64, &o->jobs) < 0)
				return -EINVAL;
			break;
		case O_CHUNK: {
			char *end;
			errno = 0;
			double mb = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(mb >= 0 && mb <= 65536)) {
				fprintf(
				    stderr,
				    "pgload run: invalid value \"%s\" for --chunk-mb: must be a "
				    "number of MB from 0 to 65536\n",
				    optarg);
				return -EINVAL;
			}
			o->chunk_bytes = (uint64_t)(mb * 1048576);
			break;
		}
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case O_DB:
			if (!*optarg || strlen(optarg) > 63) {
				fprintf(stderr, "pgload run: invalid --db \"%s\": 1 to 63 bytes\n",
					optarg);
				return -EINVAL;
			}
			o->db = optarg;
			break;
		case O_FORCE:
			o->force = true;
			break;
		case O_CONT:
			o->cont = true;
			break;
		case O_PIPE:
			o->pipeline = true;
			break;
		case O_DSN:
			o->dsn = optarg;
			break;
		case O_PGDATA:
			o->pgdata = optarg;
			break;
		case O_PGBIN:
			o->pgbin = optarg;
			break;
		case O_SET:
			if (!strchr(optarg, '=') || o->nsettings >= PGL_MAXSETTINGS) {
				fprintf(stderr,
					"pgload run: invalid --set \"%s\": NAME=VALUE expected (at "
					"most %d)\n",
					optarg, PGL_MAXSETTINGS);
				return -EINVAL;
			}
			o->settings[o->nsettings++] = optarg;
			break;
		case O_JSON:
			o->json = optarg;
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case O_LABEL:
			o->label = optarg;
			break;
		case O_PROGRESS:
			o->progress = 1;
			break;
		case O_NOPROGRESS:
			o->progress = 0;
			break;
		case O_PGIOFS:
			o->on_pgiofs = true;
			break;
		case O_PROFILE:
			o->profile = optarg;
			break;
		case O_PGIOFS_BIN:
			if (access(optarg, X_OK) < 0) {
				fprintf(stderr, "pgload run: --pgiofs-bin \"%s\": %s\n", optarg,
					strerror(errno));
				return -EINVAL;
			}
			o->pgiofs_bin = optarg;
			break;
		default:
			fprintf(stderr, "Try \"pgload run --help\".\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload run: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->file[0] && !o->file[1] && !o->file[2]) {
		fprintf(stderr, "pgload run: give at least one of --schema, --data, --post\n");
		return -EINVAL;
	}
	int nstdin = 0;
	for (int i = 0; i < PGL_NPHASE; i++)
		if (o->file[i] && strcmp(o->file[i], "-") == 0)
			nstdin++;
	if (nstdin > 1 || (nstdin == 1 && o->runs + o->warmup > 1)) {
		fprintf(stderr, "pgload run: stdin (\"-\") can be read once: use it for one input "
				"and one run\n");
		return -EINVAL;
	}
	for (int i = 0; i < PGL_NPHASE; i++) {
		if (o->file[i] && strcmp(o->file[i], "-") != 0 && access(o->file[i], R_OK) < 0) {
			fprintf(stderr, "pgload run: cannot read %s file \"%s\": %s\n",
				pgl_phase_names[i], o->file[i], strerror(errno));
			return -errno;
		}
		if (o->file[i] && strcmp(o->file[i], "-") != 0 && check_input(o->file[i]) < 0)
			return -EINVAL;
	}
	if (o->dsn && (o->pgdata || o->pgbin || o->nsettings || o->on_pgiofs)) {
		fprintf(stderr,
			"pgload run: --dsn excludes --pgdata, --pgbin, --set and --on-pgiofs\n");
		return -EINVAL;
	}
	if (o->profile && !o->on_pgiofs) {
		fprintf(stderr, "pgload run: --profile needs --on-pgiofs\n");
		return -EINVAL;
	}
	if (o->on_pgiofs && o->pgdata) {
		fprintf(stderr, "pgload run: --on-pgiofs puts the cluster on its own mount: "
				"drop --pgdata\n");
		return -EINVAL;
	}
	if (o->progress < 0)
		o->progress = !o->quiet && isatty(STDERR_FILENO);
	return 0;
}

int pgl_cmd_run(int argc, char **argv)
{
	struct pgl_opts o = {0};
	struct pgl_ctx c = {.o = &o};
	int ret = parse_opts(argc, argv, &o);
	int status = 0;
	if (ret != 0)
		return ret > 0 ? 0 : 1;
	signal(SIGPIPE, SIG_IGN); /* a closed stdout must not skip the clean-up */
	if (pgl_signals_start() < 0) {
		fprintf(stderr, "pgload: cannot set up signal handling\n");
		return 1;
	}

	char *admin_db = NULL;
	if (o.dsn) {
		PQconninfoOption *opts = PQconninfoParse(o.dsn, NULL);
		if (!opts) {
			fprintf(stderr, "pgload: invalid --dsn \"%s\"\n", o.dsn);
			return 1;
		}
		for (PQconninfoOption *op = opts; op->keyword; op++)
			if (strcmp(op->keyword, "dbname") == 0 && op->val && *op->val)
				admin_db = strdup(op->val);
		PQconninfoFree(opts);
		if (!admin_db)
			admin_db = strdup("postgres");
		c.base = o.dsn;
	} else {
		struct pgl_server_opts so = {
		    .pgbin = o.pgbin,
		    .pgdata = o.pgdata,
		    .quiet = o.quiet,
		    .settings = o.settings,
		    .on_pgiofs = o.on_pgiofs,
		    .profile = o.profile,
		    .pgiofs_bin = o.pgiofs_bin,
		};
		ret = pgl_server_start(&so, &c.server);
		if (ret < 0) {
			status = pgl_exit_status(ret);
			goto out;
		}
		c.base = pgl_server_conninfo(c.server);
		admin_db = strdup("postgres");
	}
	if (admin_db && o.db && strcmp(admin_db, o.db) == 0) {
		fprintf(stderr,
			"pgload: --db \"%s\" is the database pgload administers from; "
			"choose another name\n",
			o.db);
		status = 1;
		goto out;
	}
	if (pgl_step("connect", "connecting to the server")) {
		status = 2;
		goto out;
	}
	c.admin = pgl_connect(&c, admin_db, NULL, false);
	if (!c.admin) {
		status = atomic_load(&pgl_interrupted) ? 2 : 1;
		goto out;
	}
	pgl_server_info(&c);
	pgl_io_setup(&c);
	if (!o.quiet)
		fprintf(stderr, "pgload: PostgreSQL %s, data directory %s (%s)\n", c.server_version,
			c.datadir[0] ? c.datadir : "(not visible)", c.fstype);

	int total = o.warmup + o.runs;
	c.results = calloc((size_t)total, sizeof(*c.results));
	if (!c.results) {
		status = 1;
		goto out;
	}
	if (o.progress)
		pgl_progress_start(&c);
	for (int run = 0; run < total; run++) {
		struct pgl_run_result *rr = &c.results[run];
		rr->warmup = run < o.warmup;
		c.progress_run = run;
		pgl_step_context("run %d/%d%s", run + 1, total, rr->warmup ? ", a warmup" : "");
		if ((ret = pgl_prepare_db(&c)) < 0) {
			status = pgl_exit_status(ret);
			break;
		}
		for (int ph = 0; ph < PGL_NPHASE && ret >= 0; ph++)
			if (o.file[ph])
				ret = pgl_run_phase(&c, (enum pgl_phase)ph, &rr->ph[ph]);
		if (ret < 0) {
			status = pgl_exit_status(ret);
			break;
		}
		c.nresults = run + 1;
		if (!o.quiet)
			pgl_progress_run_done(&c, run);
	}
	pgl_progress_stop(&c);
	pgl_step_context(NULL);
	if (status == 0 || c.nresults > 0) {
		pgl_step("report", "writing the report");
		pgl_report_summary(&c, stdout);
		if (o.json && pgl_report_json(&c, o.json) < 0 && status == 0)
			status = 1;
		if (o.csv && pgl_report_csv(&c, o.csv) < 0 && status == 0)
			status = 1;
	}
out:
	pgl_step_context(NULL);
	pgl_step("cleanup", "cleaning up");
	bool intr = atomic_load(&pgl_interrupted) != 0;
	if (intr && c.admin && c.db_created && o.dsn)
		drop_run_db(&c);
	else if (status == 1 && c.db_created && o.dsn)
		fprintf(stderr, "pgload: database \"%s\" is kept as the failed run left it\n",
			o.db);
	pgl_disconnect(c.admin);
	if (c.server && pgl_server_stop(c.server) < 0 && status == 0)
		status = 1;
	if (intr) {
		char step[512];
		pgl_interrupted_step(step, sizeof(step));
		fprintf(stderr, "pgload: interrupted while %s; %s\n", step,
			!o.dsn	       ? "the embedded server is stopped and its files are removed"
			: c.db_created ? "could not drop the run's database"
				       : "nothing of the run is left on the server");
	}
	if (c.results) {
		for (int i = 0; i < o.warmup + o.runs; i++)
			for (int ph = 0; ph < PGL_NPHASE; ph++)
				pgl_tables_free(&c.results[i].ph[ph].tables);
		free(c.results);
	}
	free(admin_db);
	if (atomic_load(&pgl_interrupted))
		status = 2; /* whatever failed on the way, the run was aborted */
	return status;
}
