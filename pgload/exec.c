/*
 * exec.c -- the executor: one script on one connection, statement by
 * statement as the parser splits it, with its COPY data, psql's
 * meta-commands, pipeline batches (--pipeline), and with --jobs the
 * hand-over of COPY blocks and table-bound statements to the pool (pool.c).
 *
 * What must stay true:
 *  - Statements go to the server exactly as the parser split them, in order,
 *    on one connection (except what the pool takes, see pool.c).
 *  - An error stops the script (like psql -v ON_ERROR_STOP=1) unless
 *    --continue-on-error or the script turned ON_ERROR_STOP off; either way
 *    it is reported with file:line, the statement's first line and the
 *    server's message, detail and hint (session.c).
 *  - A broken connection is never retried or waited on: it ends the run
 *    (-ECONNRESET, exit status 2).
 *  - Damaged input (parser.c) is an error that cancels the COPY it cut: a
 *    cut block loads none of its rows.
 *  - An interrupt stops the script before anything more is sent, and ends
 *    the COPY under way with an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgload.h"
#include "pgload_i.h"
#include "run_i.h"

#define PIPELINE_BATCH 256 /* statements sent before their results are read */

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
 * lost() -- the connection broke at LINE: an interrupt's cancellation may
 * have broken it, else say so.  Returns the error that ends the run.
 */
static int lost(struct exec *e, unsigned long line)
{
	if (atomic_load(&pgl_interrupted))
		return -EINTR;
	pgl_lost_connection(e->c->server, e->fname, line, e->conn);
	return -ECONNRESET;
}

/*
 * start_failed() -- statement SQL at LINE could not be sent or did not
 * start (RES, which is cleared, says why; NULL: the connection says): a
 * lost connection ends the run, anything else is a statement error.
 */
static int start_failed(struct exec *e, const char *sql, unsigned long line, PGresult *res)
{
	if (PQstatus(e->conn) == CONNECTION_BAD) {
		PQclear(res);
		pgl_lost_connection(e->c->server, e->fname, line, e->conn);
		return -ECONNRESET;
	}
	pgl_report_error(e->fname, sql, line, 0, res, res ? NULL : PQerrorMessage(e->conn));
	PQclear(res);
	return statement_error(e);
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
	if (!PQsendQuery(e->conn, it->text))
		return start_failed(e, it->text, it->line, NULL);
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
	if (PQstatus(e->conn) == CONNECTION_BAD)
		return lost(e, it->line);
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
		pgl_lost_connection(e->c->server, e->fname, e->pending[0].line, e->conn);
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
		pgl_lost_connection(e->c->server, e->fname, e->npending ? e->pending[0].line : 0,
				    e->conn);
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
	if (!PQsendQueryParams(e->conn, it->text, 0, NULL, NULL, NULL, NULL, 0))
		return start_failed(e, it->text, it->line, NULL);
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
	if (PQstatus(e->conn) == CONNECTION_BAD)
		return lost(e, line);
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
		if (res) /* the COPY failed to start */
			return start_failed(e, sc.sql, it->line, res);
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
		return start_failed(e, sc.sql, it->line, res);
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
	PGconn *n = pgl_connect(&e->c->base, db, user, false, !e->c->o->quiet);
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
		if (pgl_is_conninfo(db)) {
			/* a connection string: take its database and user, keep our server */
			if (pgl_conninfo_get(db, "dbname", &cdb) < 0 ||
			    pgl_conninfo_get(db, "user", &cuser) < 0) {
				fprintf(stderr,
					"pgload: %s:%lu: invalid connection string in \\connect\n",
					e->fname, it->line);
				return -EINVAL;
			}
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
	e.conn = pgl_connect(&c->base, dbname, NULL, false, !c->o->quiet);
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
		if (it.kind == PGL_ITEM_SQL)
			atomic_fetch_add(&c->progress_stmts, 1);
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
