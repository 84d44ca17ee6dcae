/*
 * run_i.h -- internals of `pgload run` shared by run.c, parallel.c and
 * report.c (not installed).
 */
#ifndef PGLOAD_RUN_I_H
#define PGLOAD_RUN_I_H

#include <stdatomic.h>
#include <stdio.h>

#include <libpq-fe.h>

#include "pgload_i.h"

#define PGL_MAXSETTINGS 16

/* Command-line settings of `pgload run`. */
struct pgl_opts {
	const char *file[PGL_NPHASE];
	int runs, warmup, jobs;
	uint64_t chunk_bytes; /* --chunk-mb: split COPY blocks for --jobs (0 = never) */
	const char *db, *dsn, *pgdata, *pgbin, *json, *csv, *label;
	bool quiet, force, cont, pipeline, on_pgiofs;
	const char *profile;
	const char *pgiofs_bin; /* --pgiofs-bin */
	int progress;		/* -1 auto (stderr is a tty), 0 off, 1 on */
	const char *settings[PGL_MAXSETTINGS + 1];
	int nsettings;
};

struct pgl_ctx {
	struct pgl_opts *o;
	struct pgl_server *server; /* embedded server, or NULL with --dsn */
	const char *base;	   /* conninfo every connection starts from */
	PGconn *admin;		   /* creates databases, reads the WAL position */
	bool db_created;	   /* o->db exists, created by this process */

	/* what the report says about the server */
	char server_version[64];
	char datadir[512];
	char fstype[32];
	char kernel[256];
	const char *setting_name[PGL_MAXSETTINGS];
	char setting_val[PGL_MAXSETTINGS][64];
	int nsettings;

	/* per-class I/O: the data directory is on the pgiofs mount io_mnt */
	char io_mnt[4096];
	char io_bin[4096];
	bool io_on; /* snapshots are taken (off after the first failure) */

	struct pgl_run_result *results; /* warmup runs first */
	int nresults;			/* runs completed */

	/* progress, read by the progress thread */
	atomic_uint_fast64_t progress_bytes; /* COPY bytes sent in this phase */
	atomic_uint_fast64_t progress_rows;  /* COPY lines sent in this phase */
	_Atomic uint64_t progress_pos;	     /* input bytes consumed in this phase */
	_Atomic int progress_phase, progress_run;
	struct pgl_progress *progress;
};

PGconn *pgl_connect(struct pgl_ctx *c, const char *dbname, const char *user, bool quiet);
void pgl_disconnect(PGconn *conn);
void pgl_first_line(const char *text, char *buf, size_t cap);
void pgl_report_error(const char *fname, const char *text, unsigned long line,
		      unsigned long copy_line0, const PGresult *res, const char *connmsg);
void pgl_lost_connection(struct pgl_ctx *c, const char *fname, unsigned long line, PGconn *conn);
/*
 * pgl_report_copy_cancelled() -- after an input error inside the data of
 * COPY statement TEXT: which COPY, and that it is cancelled (CHUNKED: the
 * block was loaded in --chunk-mb chunks, the earlier ones are in).
 */
void pgl_report_copy_cancelled(const char *text, unsigned long line, bool chunked);

/*
 * pgl_exec_file() -- run one script (run.c); with PARALLEL and --jobs > 1,
 * COPY blocks and table-bound statements go to a pool of connections.
 */
int pgl_exec_file(struct pgl_ctx *c, const char *path, const char *dbname,
		  struct pgl_phase_result *res, bool parallel);

/* parallel.c: the worker pool (see there for the ordering rules) */
struct pgl_pool;
enum { PGL_CL_OTHER, PGL_CL_SESSION, PGL_CL_TABLE, PGL_CL_TABLE_FK };
int pgl_pool_create(struct pgl_ctx *c, const char *path, const char *dbname, int nworkers,
		    struct pgl_pool **out);
int pgl_pool_classify(const char *text, char *name, size_t cap);
int pgl_pool_copy(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		  uint64_t offset, unsigned long dataline, uint64_t end, bool same_block,
		  bool stop);
/* pgl_pool_splittable() -- may COPY statement TEXT's block load in chunks? */
bool pgl_pool_splittable(PGconn *main, const char *text);
int pgl_pool_sql(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		 const char *name, bool fk, bool stop);
int pgl_pool_preamble(struct pgl_pool *pool, const char *text);
int pgl_pool_wait(struct pgl_pool *pool);
int pgl_pool_destroy(struct pgl_pool *pool, struct pgl_phase_result *res);

/*
 * pgl_put_copy() -- send LEN bytes of COPY data as CopyData messages of at
 * most PGL_COPY_MSG bytes: large enough to keep per-message costs out of
 * the way, small enough that the server starts parsing while the rest of a
 * parser span is still on its way.  Returns 1, or -1 (see PQerrorMessage).
 */
#define PGL_COPY_MSG (128 * 1024)

/* pgl_count_lines() -- newlines in BUF (rows, for the progress line). */
uint64_t pgl_count_lines(const char *buf, size_t len);
int pgl_put_copy(PGconn *conn, const char *buf, size_t len);

/*
 * The steps of a run, also used by `pgload compare` (compare.c), which
 * drives several servers, each with its own context:
 *   pgl_server_info()  -- version and settings of c->admin's server;
 *   pgl_io_setup()     -- find the pgiofs mount of the data directory;
 *   pgl_prepare_db()   -- drop and create c->o->db, then CHECKPOINT;
 *   pgl_run_phase()    -- one timed phase into R;
 *   pgl_admin_exec()   -- SQL on c->admin (first value of the result into OUT).
 * They return 0 or -errno (after printing why).
 */
void pgl_server_info(struct pgl_ctx *c);
void pgl_io_setup(struct pgl_ctx *c);
int pgl_prepare_db(struct pgl_ctx *c);
int pgl_run_phase(struct pgl_ctx *c, enum pgl_phase ph, struct pgl_phase_result *r);
int pgl_admin_exec(struct pgl_ctx *c, const char *sql, char *out, size_t cap);

/* report.c */
void pgl_report_summary(struct pgl_ctx *c, FILE *f);
int pgl_report_json(struct pgl_ctx *c, const char *path);
int pgl_report_csv(struct pgl_ctx *c, const char *path);
void pgl_progress_start(struct pgl_ctx *c);
void pgl_progress_stop(struct pgl_ctx *c);
void pgl_progress_run_done(struct pgl_ctx *c, int run);

#endif /* PGLOAD_RUN_I_H */
