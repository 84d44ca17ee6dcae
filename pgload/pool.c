/*
 * pool.c -- the worker pool of `pgload run --jobs N`.
 *
 * The script is still read once, in order, by the dispatcher (exec.c), which
 * keeps the main connection.  It hands the pool:
 *   - COPY ... FROM stdin blocks: a worker opens the script itself, skips to
 *     the block's data (lseek for plain files, decompression for lz4) and
 *     streams it on its own connection, so memory stays bounded;
 *   - statements bound to one table (CREATE INDEX ... ON t, ALTER TABLE t
 *     ...): post-data work that can run beside work on other tables;
 *   - session settings (SET ..., set_config()): replayed in order on every
 *     worker connection before its next job.
 * Anything else is a barrier: the dispatcher waits for the pool to drain
 * and runs it on the main connection.
 *
 * Ordering rules (a job starts only when they all hold):
 *   - jobs on the same table run in script order;
 *   - a foreign key job waits for every earlier non-foreign-key job (the
 *     referenced keys and the data must exist);
 *   - a COPY into a table waits for the COPY jobs of the tables its foreign
 *     keys reference (read from pg_constraint), so inline REFERENCES work;
 *   - the chunks of one COPY block (exec.c cuts large blocks at line
 *     boundaries) are one group: they run side by side, and later jobs on
 *     the table wait for all of them;
 *   - a deadlock between two jobs (SQLSTATE 40P01) retries the victim.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgload.h"
#include "run_i.h"

#define DEADLOCK_RETRIES 5

enum job_kind { JOB_COPY, JOB_SQL };

struct job {
	enum job_kind kind;
	char *text;
	unsigned long line;	/* line of the statement */
	uint64_t offset;	/* COPY: byte offset of the data */
	unsigned long dataline; /* COPY: line of the first data row */
	uint64_t end;		/* COPY: stop at this offset (0: at the \\. line) */
	unsigned long group;	/* COPY: chunks of one block share it */
	char *key;		/* table the job works on ("" if unknown) */
	unsigned oid;		/* that table's oid, 0 if unknown */
	bool fk;
	bool stop;    /* ON_ERROR_STOP when it was dispatched */
	size_t after; /* wait for every job below this index */
	size_t *deps; /* and for these */
	size_t ndeps;
	size_t npre; /* preamble statements to apply first */
	bool running, done;
};

struct fkdep {
	unsigned from, to;
};

struct pgl_pool {
	struct pgl_ctx *c;
	char *path, *dbname;
	int nworkers;
	pthread_t *threads;

	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job finished, or was added */
	struct job *jobs;
	size_t njobs, capjobs;
	size_t first_open;    /* jobs below are all done */
	size_t last_nonfk;    /* index + 1 of the last non-FK job */
	unsigned long groups; /* COPY blocks handed out */
	char **pre;	      /* session preamble */
	size_t npre;
	bool closing; /* no more jobs will come */
	int status;   /* 0, or the first error (-errno), unless a later one aborts */
	int running;

	struct fkdep *fks; /* foreign keys between tables */
	size_t nfks;
	bool fks_loaded;

	struct pgl_phase_result acc; /* what the workers loaded */
};

/* ---- statement classification ------------------------------------------- */

enum cls { CL_OTHER, CL_SESSION, CL_TABLE, CL_TABLE_FK };

/*
 * classify() -- what the pool may do with statement TEXT; for CL_TABLE* the
 * table's name as written goes to NAME.
 */
static enum cls classify(const char *text, char *name, size_t cap)
{
	const char *s = text;
	struct pgl_sql_tok t, t2;
	if (!pgl_sql_token(&s, &t))
		return CL_OTHER;
	if (!strcmp(t.word, "set") || !strcmp(t.word, "reset")) {
		const char *s2 = s;
		/* SET CONSTRAINTS / SET TRANSACTION are not session settings */
		if (pgl_sql_token(&s2, &t2) &&
		    (!strcmp(t2.word, "constraints") || !strcmp(t2.word, "transaction") ||
		     !strcmp(t2.word, "local")))
			return CL_OTHER;
		return CL_SESSION;
	}
	if (!strcmp(t.word, "select")) {
		/* pg_dump: SELECT pg_catalog.set_config('search_path', '', false); */
		if (strstr(s, "set_config(") && !strcasestr(s, "from"))
			return CL_SESSION;
		return CL_OTHER;
	}
	if (!strcmp(t.word, "create")) {
		/* CREATE [UNIQUE] INDEX [CONCURRENTLY] [[IF NOT EXISTS] name] ON [ONLY] t */
		if (!pgl_sql_token(&s, &t))
			return CL_OTHER;
		if (!strcmp(t.word, "unique") && !pgl_sql_token(&s, &t))
			return CL_OTHER;
		if (strcmp(t.word, "index") != 0)
			return CL_OTHER;
		for (int i = 0; i < 8; i++) {
			if (!pgl_sql_token(&s, &t))
				return CL_OTHER;
			if (!strcmp(t.word, "concurrently"))
				return CL_OTHER; /* cannot run in our job's way; keep it serial */
			if (!strcmp(t.word, "on"))
				break;
		}
		if (strcmp(t.word, "on") != 0)
			return CL_OTHER;
		const char *s2 = s;
		if (pgl_sql_token(&s2, &t) && !strcmp(t.word, "only"))
			s = s2;
		return pgl_sql_raw_name(&s, name, cap) ? CL_TABLE : CL_OTHER;
	}
	if (!strcmp(t.word, "alter")) {
		/* ALTER TABLE [IF EXISTS] [ONLY] t ... */
		if (!pgl_sql_token(&s, &t) || strcmp(t.word, "table") != 0)
			return CL_OTHER;
		const char *s2 = s;
		if (pgl_sql_token(&s2, &t) && !strcmp(t.word, "if")) {
			if (!pgl_sql_token(&s2, &t) || !pgl_sql_token(&s2, &t))
				return CL_OTHER;
			s = s2;
		}
		s2 = s;
		if (pgl_sql_token(&s2, &t) && !strcmp(t.word, "only"))
			s = s2;
		if (!pgl_sql_raw_name(&s, name, cap))
			return CL_OTHER;
		/* a second command after a comma, or RENAME, keeps it serial */
		bool fk = false;
		while (pgl_sql_token(&s, &t)) {
			if (!strcmp(t.word, "foreign") || !strcmp(t.word, "references"))
				fk = true;
			if (!strcmp(t.word, "rename") || !strcmp(t.word, "attach") ||
			    !strcmp(t.word, "detach") || !strcmp(t.word, "inherit"))
				return CL_OTHER;
		}
		return fk ? CL_TABLE_FK : CL_TABLE;
	}
	return CL_OTHER;
}

/* ---- the pool ----------------------------------------------------------- */

static void *worker_main(void *arg);

int pgl_pool_create(struct pgl_ctx *c, const char *path, const char *dbname, int nworkers,
		    struct pgl_pool **out)
{
	struct pgl_pool *pool = calloc(1, sizeof(*pool));
	int ret = -ENOMEM;
	*out = NULL;
	if (!pool)
		return -ENOMEM;
	pool->c = c;
	pool->path = strdup(path);
	pool->dbname = strdup(dbname);
	pool->nworkers = nworkers;
	pool->threads = calloc((size_t)nworkers, sizeof(*pool->threads));
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->cond, NULL);
	if (!pool->path || !pool->dbname || !pool->threads)
		goto fail;
	for (int i = 0; i < nworkers; i++) {
		if ((ret = -pthread_create(&pool->threads[i], NULL, worker_main, pool)) < 0) {
			pool->nworkers = i;
			goto fail;
		}
	}
	*out = pool;
	return 0;
fail:
	fprintf(stderr, "pgload: cannot start %d worker threads: %s\n", nworkers, strerror(-ret));
	pgl_pool_destroy(pool, NULL);
	return ret;
}

/* runnable__() -- may job I start now?  Caller holds the lock. */
static bool runnable__(struct pgl_pool *pool, size_t i)
{
	struct job *j = &pool->jobs[i];
	if (j->running || j->done)
		return false;
	for (size_t k = pool->first_open; k < j->after && k < i; k++)
		if (!pool->jobs[k].done)
			return false;
	for (size_t d = 0; d < j->ndeps; d++)
		if (!pool->jobs[j->deps[d]].done)
			return false;
	if (j->key[0]) {
		for (size_t k = pool->first_open; k < i; k++)
			if (!pool->jobs[k].done && strcmp(pool->jobs[k].key, j->key) == 0 &&
			    !(j->group && pool->jobs[k].group == j->group))
				return false;
	}
	return true;
}

/* advance__() -- move first_open past finished jobs.  Caller holds the lock. */
static void advance__(struct pgl_pool *pool)
{
	while (pool->first_open < pool->njobs && pool->jobs[pool->first_open].done)
		pool->first_open++;
}

/* fail__() -- record error ST: the first, unless a later one aborts.  Lock held. */
static void fail__(struct pgl_pool *pool, int st)
{
	if (pool->status == 0 || (pgl_aborts(st) && !pgl_aborts(pool->status)))
		pool->status = st;
}

/* apply_preamble() -- bring a worker connection's session up to job J. */
static int apply_preamble(struct pgl_pool *pool, PGconn *conn, size_t *applied, size_t upto)
{
	while (*applied < upto) {
		pthread_mutex_lock(&pool->lock);
		char *sql = strdup(pool->pre[*applied]);
		pthread_mutex_unlock(&pool->lock);
		if (!sql)
			return -ENOMEM;
		PGresult *res = PQexec(conn, sql);
		int st = PQresultStatus(res);
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
			fprintf(stderr, "pgload: worker could not apply \"%s\": %s", sql,
				PQresultErrorMessage(res));
			PQclear(res);
			free(sql);
			return PQstatus(conn) == CONNECTION_BAD ? -ECONNRESET : -EIO;
		}
		PQclear(res);
		free(sql);
		(*applied)++;
	}
	return 0;
}

/* count__() -- rows of a finished job into the pool's totals.  Lock held. */
static void count__(struct pgl_pool *pool, const struct job *j, PGresult *res, uint64_t bytes)
{
	const char *tag = PQcmdStatus(res);
	if (!tag || strncmp(tag, "COPY ", 5) != 0)
		return;
	uint64_t rows = strtoull(PQcmdTuples(res), NULL, 10);
	char name[256];
	pool->acc.rows += rows;
	pool->acc.bytes += bytes;
	if (pgl_copy_target(j->text, name, sizeof(name)) > 0)
		pgl_tables_add(&pool->acc.tables, name, rows, bytes);
}

/* job_error() -- a job's statement failed: report, count, maybe stop. */
static int job_error(struct pgl_pool *pool, const struct job *j, PGconn *conn, PGresult *res,
		     unsigned long copyline)
{
	if (atomic_load(&pgl_interrupted))
		return -EINTR;
	if (PQstatus(conn) == CONNECTION_BAD) {
		pgl_lost_connection(pool->c->server, pool->path, j->line, conn);
		return -ECONNRESET;
	}
	pthread_mutex_lock(&pool->lock);
	pgl_report_error(pool->path, j->text, j->line, copyline, res,
			 res ? NULL : PQerrorMessage(conn));
	pool->acc.errors++;
	pthread_mutex_unlock(&pool->lock);
	return j->stop ? -EIO : PGL_WENT_ON;
}

/* run_copy() -- stream one COPY block from the script on CONN. */
static int run_copy(struct pgl_pool *pool, const struct job *j, PGconn *conn)
{
	struct pgl_input *in = NULL;
	struct pgl_parser *p = NULL;
	struct pgl_item it;
	char err[256];
	int ret = 0, r;
	uint64_t bytes = 0;

	if ((r = pgl_input_open(pool->path, &in, err)) < 0) {
		fprintf(stderr, "pgload: %s\n", err);
		return r;
	}
	if ((r = pgl_input_skip(in, j->offset)) < 0) {
		fprintf(stderr, "pgload: %s\n", pgl_input_error(in));
		pgl_input_close(in);
		return r;
	}
	if ((r = pgl_parser_create(in, pool->path, &p)) < 0 ||
	    (r = pgl_parser_begin_copy(p, j->offset, j->dataline)) < 0) {
		pgl_parser_destroy(p);
		pgl_input_close(in);
		return r;
	}
	PGresult *res = PQexec(conn, j->text);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		ret = job_error(pool, j, conn, res, 0);
		PQclear(res);
		goto out;
	}
	PQclear(res);
	bool failed = false;
	while ((r = pgl_parser_next(p, &it)) > 0 && it.kind == PGL_ITEM_COPY_DATA) {
		bool last = false;
		if (j->end && it.offset + it.len >= j->end) {
			it.len = (size_t)(j->end - it.offset); /* the chunk ends in this span */
			last = true;
		}
		if (pgl_put_copy(conn, it.text, it.len) != 1) {
			failed = true;
			break;
		}
		bytes += it.len;
		atomic_fetch_add(&pool->c->progress_bytes, it.len);
		if (pool->c->progress)
			atomic_fetch_add(&pool->c->progress_rows, pgl_count_lines(it.text, it.len));
		if (atomic_load(&pgl_interrupted)) {
			PQputCopyEnd(conn, "pgload was interrupted");
			failed = true;
			break;
		}
		if (last)
			break;
	}
	if (r < 0) {
		bool intr = r == -EINTR || atomic_load(&pgl_interrupted);
		/* damaged input: the main reader meets it too and says so */
		if (!intr && r != -EBADMSG && r != -E2BIG)
			fprintf(stderr, "pgload: %s\n", pgl_parser_error(p));
		PQputCopyEnd(conn, intr ? "pgload was interrupted" : "pgload: input error");
		ret = intr ? -EINTR : r == -ECONNRESET ? -EIO : r;
	} else if (!failed) {
		PQputCopyEnd(conn, NULL);
	}
	while ((res = PQgetResult(conn))) {
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			pthread_mutex_lock(&pool->lock);
			count__(pool, j, res, bytes);
			pthread_mutex_unlock(&pool->lock);
		} else if (PQresultStatus(res) == PGRES_FATAL_ERROR && ret == 0) {
			ret = job_error(pool, j, conn, res, j->dataline);
		}
		PQclear(res);
		if (PQstatus(conn) == CONNECTION_BAD)
			break;
	}
	if (PQstatus(conn) == CONNECTION_BAD && !pgl_aborts(ret)) {
		if (atomic_load(&pgl_interrupted)) {
			ret = -EINTR;
		} else {
			pgl_lost_connection(pool->c->server, pool->path, j->line, conn);
			ret = -ECONNRESET;
		}
	}
out:
	pgl_parser_destroy(p);
	pgl_input_close(in);
	return ret;
}

/* run_sql() -- one statement; a deadlock victim is retried. */
static int run_sql(struct pgl_pool *pool, const struct job *j, PGconn *conn)
{
	for (int attempt = 0;; attempt++) {
		PGresult *res = PQexec(conn, j->text);
		int st = PQresultStatus(res);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) {
			PQclear(res);
			return 0;
		}
		const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		if (code && strcmp(code, "40P01") == 0 && attempt < DEADLOCK_RETRIES &&
		    PQstatus(conn) == CONNECTION_OK) {
			PQclear(res);
			usleep(10000u << attempt);
			continue;
		}
		int ret = job_error(pool, j, conn, res, 0);
		PQclear(res);
		return ret;
	}
}

static void *worker_main(void *arg)
{
	struct pgl_pool *pool = arg;
	PGconn *conn = NULL;
	size_t applied = 0;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		size_t i;
		bool found = false;
		if (pool->status >= 0) {
			for (i = pool->first_open; i < pool->njobs; i++) {
				if (runnable__(pool, i)) {
					found = true;
					break;
				}
			}
		}
		if (!found) {
			if (pool->closing && (pool->first_open == pool->njobs || pool->status < 0))
				break;
			pthread_cond_wait(&pool->cond, &pool->lock);
			continue;
		}
		struct job *j = &pool->jobs[i];
		j->running = true;
		pool->running++;
		struct job copy = *j; /* the array may move while we work */
		pthread_mutex_unlock(&pool->lock);

		int ret = 0;
		if (!conn) {
			conn = pgl_connect(&pool->c->base, pool->dbname, NULL,
					   atomic_load(&pgl_interrupted), !pool->c->o->quiet);
			if (!conn)
				ret = atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
		}
		if (ret == 0)
			ret = apply_preamble(pool, conn, &applied, copy.npre);
		if (ret == 0)
			ret = copy.kind == JOB_COPY ? run_copy(pool, &copy, conn)
						    : run_sql(pool, &copy, conn);

		pthread_mutex_lock(&pool->lock);
		j = &pool->jobs[i];
		j->running = false;
		j->done = true;
		pool->running--;
		if (ret < 0)
			fail__(pool, ret);
		advance__(pool);
		pthread_cond_broadcast(&pool->cond);
		if (pgl_aborts(ret) && conn && PQstatus(conn) == CONNECTION_BAD) {
			pgl_disconnect(conn);
			conn = NULL;
		}
	}
	pthread_mutex_unlock(&pool->lock);
	pgl_disconnect(conn);
	return NULL;
}

/* add_job() -- append a job and wake the workers. */
static int add_job(struct pgl_pool *pool, struct job *j)
{
	pthread_mutex_lock(&pool->lock);
	int st = pool->status;
	struct job *nj = pool->jobs;
	size_t nc = pool->capjobs;
	if (st >= 0 && pool->njobs == pool->capjobs) {
		nc = nc ? nc * 2 : 64;
		nj = realloc(pool->jobs, nc * sizeof(*nj));
		st = nj ? 0 : -ENOMEM;
	}
	if (st < 0) {
		pthread_mutex_unlock(&pool->lock);
		free(j->text);
		free(j->key);
		free(j->deps);
		return st;
	}
	pool->jobs = nj;
	pool->capjobs = nc;
	j->npre = pool->npre;
	if (j->fk)
		j->after = pool->last_nonfk;
	pool->jobs[pool->njobs++] = *j;
	if (!j->fk)
		pool->last_nonfk = pool->njobs;
	pthread_cond_broadcast(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
	return 0;
}

/* resolve() -- the oid of table NAME (as written) on CONN, 0 if unknown. */
static unsigned resolve(PGconn *conn, const char *name)
{
	const char *vals[1] = {name};
	PGresult *res =
	    PQexecParams(conn, "SELECT to_regclass($1)::oid", 1, NULL, vals, NULL, NULL, 0);
	unsigned oid = 0;
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
	    !PQgetisnull(res, 0, 0))
		oid = (unsigned)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return oid;
}

static void load_fks(struct pgl_pool *pool, PGconn *conn)
{
	if (pool->fks_loaded)
		return;
	pool->fks_loaded = true;
	PGresult *res = PQexec(conn, "SELECT conrelid::oid, confrelid::oid FROM pg_constraint "
				     "WHERE contype = 'f' AND conrelid <> confrelid");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0) {
		pool->fks = calloc((size_t)PQntuples(res), sizeof(*pool->fks));
		for (int i = 0; pool->fks && i < PQntuples(res); i++) {
			pool->fks[i].from = (unsigned)strtoul(PQgetvalue(res, i, 0), NULL, 10);
			pool->fks[i].to = (unsigned)strtoul(PQgetvalue(res, i, 1), NULL, 10);
			pool->nfks++;
		}
	}
	PQclear(res);
}

/* make_key() -- "oid:N" for a known table, else the name as written. */
static char *make_key(unsigned oid, const char *name)
{
	char *k;
	int n = oid ? asprintf(&k, "oid:%u", oid) : asprintf(&k, "%s", name);
	return n < 0 ? NULL : k;
}

int pgl_pool_copy(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		  uint64_t offset, unsigned long dataline, uint64_t end, bool same_block, bool stop)
{
	char name[512] = "";
	const char *s = text;
	struct pgl_sql_tok t;
	struct job j = {.kind = JOB_COPY,
			.line = line,
			.offset = offset,
			.dataline = dataline,
			.end = end,
			.stop = stop};
	pthread_mutex_lock(&pool->lock);
	j.group = same_block ? pool->groups : ++pool->groups;
	pthread_mutex_unlock(&pool->lock);
	pgl_sql_token(&s, &t); /* COPY */
	const char *s2 = s;
	if (pgl_sql_token(&s2, &t) && !strcmp(t.word, "only"))
		s = s2;
	if (pgl_sql_raw_name(&s, name, sizeof(name)))
		j.oid = resolve(main, name);
	load_fks(pool, main);
	if (j.oid) {
		/* wait for the COPY jobs of the tables this one references */
		pthread_mutex_lock(&pool->lock);
		for (size_t f = 0; f < pool->nfks; f++) {
			if (pool->fks[f].from != j.oid)
				continue;
			for (size_t k = 0; k < pool->njobs; k++) {
				if (pool->jobs[k].kind == JOB_COPY &&
				    pool->jobs[k].oid == pool->fks[f].to) {
					size_t *nd = realloc(j.deps, (j.ndeps + 1) * sizeof(*nd));
					if (nd) {
						j.deps = nd;
						j.deps[j.ndeps++] = k;
					}
				}
			}
		}
		pthread_mutex_unlock(&pool->lock);
	}
	j.text = strdup(text);
	j.key = make_key(j.oid, name);
	if (!j.text || !j.key) {
		free(j.text);
		free(j.key);
		free(j.deps);
		return -ENOMEM;
	}
	return add_job(pool, &j);
}

bool pgl_pool_splittable(PGconn *main, const char *text)
{
	char name[512] = "";
	const char *s = text;
	struct pgl_sql_tok t;
	pgl_sql_token(&s, &t); /* COPY */
	const char *s2 = s;
	if (pgl_sql_token(&s2, &t) && !strcmp(t.word, "only"))
		s = s2;
	if (!pgl_sql_raw_name(&s, name, sizeof(name)))
		return false;
	/* rows of one chunk may reference rows of another: keep self-referencing
	 * tables whole; user triggers may depend on row order: keep those too */
	const char *vals[1] = {name};
	PGresult *res = PQexecParams(
	    main,
	    "SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE contype = 'f' AND "
	    "conrelid = r AND confrelid = r) AND NOT EXISTS (SELECT 1 FROM pg_trigger "
	    "WHERE tgrelid = r AND NOT tgisinternal) FROM to_regclass($1) AS r WHERE r IS NOT NULL",
	    1, NULL, vals, NULL, NULL, 0);
	bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		  strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return ok;
}

int pgl_pool_classify(const char *text, char *name, size_t cap)
{
	return (int)classify(text, name, cap);
}

int pgl_pool_sql(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		 const char *name, bool fk, bool stop)
{
	struct job j = {.kind = JOB_SQL, .line = line, .fk = fk, .stop = stop};
	j.oid = resolve(main, name);
	j.text = strdup(text);
	j.key = make_key(j.oid, name);
	if (!j.text || !j.key) {
		free(j.text);
		free(j.key);
		return -ENOMEM;
	}
	return add_job(pool, &j);
}

int pgl_pool_preamble(struct pgl_pool *pool, const char *text)
{
	char *s = strdup(text);
	pthread_mutex_lock(&pool->lock);
	char **np = realloc(pool->pre, (pool->npre + 1) * sizeof(*np));
	if (np)
		pool->pre = np;
	if (!s || !np) {
		pthread_mutex_unlock(&pool->lock);
		free(s);
		return -ENOMEM;
	}
	pool->pre[pool->npre++] = s;
	pthread_mutex_unlock(&pool->lock);
	return 0;
}

int pgl_pool_wait(struct pgl_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	while (pool->running > 0 || (pool->first_open < pool->njobs && pool->status >= 0))
		pthread_cond_wait(&pool->cond, &pool->lock);
	int st = pool->status;
	pthread_mutex_unlock(&pool->lock);
	return st;
}

int pgl_pool_destroy(struct pgl_pool *pool, struct pgl_phase_result *res)
{
	if (!pool)
		return 0;
	pthread_mutex_lock(&pool->lock);
	pool->closing = true;
	pthread_cond_broadcast(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
	for (int i = 0; i < pool->nworkers; i++)
		pthread_join(pool->threads[i], NULL);
	int st = pool->status;
	if (res) {
		res->rows += pool->acc.rows;
		res->bytes += pool->acc.bytes;
		res->errors += pool->acc.errors;
		res->statements += pool->njobs;
		pgl_tables_merge(&res->tables, &pool->acc.tables);
	}
	pgl_tables_free(&pool->acc.tables);
	for (size_t i = 0; i < pool->njobs; i++) {
		free(pool->jobs[i].text);
		free(pool->jobs[i].key);
		free(pool->jobs[i].deps);
	}
	for (size_t i = 0; i < pool->npre; i++)
		free(pool->pre[i]);
	free(pool->pre);
	free(pool->jobs);
	free(pool->fks);
	free(pool->threads);
	free(pool->path);
	free(pool->dbname);
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->cond);
	free(pool);
	return st;
}
