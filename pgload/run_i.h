/*
 * run_i.h -- the run engine of pgload: the options and context of a run,
 * the executor (exec.c) and its worker pool (pool.c), the steps of a run
 * (runner.c), its report (report.c) and progress line (progress.c).  The
 * commands `pgload run` and `pgload compare` drive it.  Errors follow
 * pgload_i.h.
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
	const char *db, *pgdata, *pgbin, *json, *csv, *label;
	/* the server: --dsn, or psql's -h -p -U -d (NULL: left to libpq) */
	const char *dsn, *host, *port, *user, *dbname;
	bool external; /* use that server, not the embedded one */
	bool quiet, force, cont, pipeline, on_pgiofs, embedded;
	const char *profile;
	const char *pgiofs_bin; /* --pgiofs-bin */
	int progress;		/* -1 auto (stderr is a tty), 0 off, 1 on */
	double progress_every;	/* -P SEC: a progress line every SEC seconds (0: no) */
	const char *settings[PGL_MAXSETTINGS + 1];
	int nsettings;
};

struct pgl_ctx {
	struct pgl_opts *o;
	struct pgl_server *server; /* embedded server, or NULL with o->external */
	struct pgl_target base;	   /* where every connection goes */
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
	atomic_uint_fast64_t progress_stmts; /* statements sent in this phase */
	_Atomic int progress_phase, progress_run;
	struct pgl_progress *progress;
};

/* ---- the executor (exec.c) ---------------------------------------------- */

/*
 * pgl_exec_file() -- run script PATH on a new connection to DBNAME,
 * accumulating into RES; with PARALLEL and --jobs > 1, COPY blocks and
 * table-bound statements go to a pool of connections.  Returns 0 (errors
 * may have been counted in RES with --continue-on-error), or -errno.
 */
int pgl_exec_file(struct pgl_ctx *c, const char *path, const char *dbname,
		  struct pgl_phase_result *res, bool parallel);

/* ---- the worker pool of --jobs (pool.c; see there for the ordering rules) - */

struct pgl_pool;

/*
 * pgl_pool_create() -- NWORKERS threads that connect to DBNAME as they get
 * their first job from script PATH.  Returns 0 and sets *out, or -errno.
 */
int pgl_pool_create(struct pgl_ctx *c, const char *path, const char *dbname, int nworkers,
		    struct pgl_pool **out);

/* What the pool may do with a statement (pgl_pool_classify()). */
enum { PGL_CL_OTHER, PGL_CL_SESSION, PGL_CL_TABLE, PGL_CL_TABLE_FK };

/*
 * pgl_pool_classify() -- PGL_CL_SESSION for a session setting every worker
 * replays, PGL_CL_TABLE(_FK) for a statement bound to one table (adding a
 * foreign key), whose name as written goes to NAME; PGL_CL_OTHER for a
 * barrier the dispatcher runs itself once the pool is idle.
 */
int pgl_pool_classify(const char *text, char *name, size_t cap);

/*
 * pgl_pool_copy() -- queue COPY statement TEXT (at LINE) whose data begins
 * at byte OFFSET, line DATALINE of the script, up to byte END (0: its \.
 * line); SAME_BLOCK: a further chunk of the block queued last.  STOP: an
 * error stops the run.  MAIN resolves the table.  Returns 0 or the pool's
 * first error.
 */
int pgl_pool_copy(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		  uint64_t offset, unsigned long dataline, uint64_t end, bool same_block,
		  bool stop);

/* pgl_pool_splittable() -- may COPY statement TEXT's block load in chunks? */
bool pgl_pool_splittable(PGconn *main, const char *text);

/* pgl_pool_sql() -- queue statement TEXT bound to table NAME (FK: adds a foreign key). */
int pgl_pool_sql(struct pgl_pool *pool, PGconn *main, const char *text, unsigned long line,
		 const char *name, bool fk, bool stop);

/* pgl_pool_preamble() -- a session setting every worker applies before its next job. */
int pgl_pool_preamble(struct pgl_pool *pool, const char *text);

/* pgl_pool_wait() -- wait until every job is done; 0 or the pool's first error. */
int pgl_pool_wait(struct pgl_pool *pool);

/*
 * pgl_pool_destroy() -- finish, stop the workers, add what they loaded to
 * RES (if not NULL) and free.  Accepts NULL.  Returns 0 or the first error.
 */
int pgl_pool_destroy(struct pgl_pool *pool, struct pgl_phase_result *res);

/* ---- the steps of a run (runner.c) --------------------------------------- */

/* pgl_server_info() -- version and settings of c->admin's server, for the report. */
void pgl_server_info(struct pgl_ctx *c);

/*
 * pgl_io_setup() -- if the data directory is on a pgiofs mount (as
 * /proc/self/mountinfo says; --on-pgiofs makes one), find the pgiofs binary
 * whose `stat` gives the per-class I/O of each phase.
 */
void pgl_io_setup(struct pgl_ctx *c);

/* pgl_prepare_db() -- drop c->o->db (if ours or --force), create it, CHECKPOINT. */
int pgl_prepare_db(struct pgl_ctx *c);

/* pgl_run_phase() -- run and time phase PH of a run into R. */
int pgl_run_phase(struct pgl_ctx *c, enum pgl_phase ph, struct pgl_phase_result *r);

/*
 * pgl_drop_run_db() -- after an interrupt, drop the database this process
 * created on a server it did not start (never one it did not create: c->db_created).
 * The admin connection is no longer cancelled by signals (the step is
 * "cleanup"), and the drop is bounded in time.
 */
void pgl_drop_run_db(struct pgl_ctx *c);

/* ---- what a run reports (report.c, progress.c) ---------------------------- */

/* pgl_report_summary() -- the `time` lines and the statistics of the measured runs. */
void pgl_report_summary(struct pgl_ctx *c, FILE *f);

/* pgl_report_json(), pgl_report_csv() -- every run into PATH ("-": stdout). */
int pgl_report_json(struct pgl_ctx *c, const char *path);
int pgl_report_csv(struct pgl_ctx *c, const char *path);

/* pgl_csv_field() -- S as a CSV field on F, quoted only if it must be. */
void pgl_csv_field(FILE *f, const char *s);

/*
 * pgl_progress_start() -- progress on stderr: a line redrawn twice a second,
 * or with -P SEC one line every SEC seconds, as pgbench -P prints them.
 * 0 or -errno.
 */
int pgl_progress_start(struct pgl_ctx *c);

/* pgl_progress_stop() -- end the progress line; nothing if there is none. */
void pgl_progress_stop(struct pgl_ctx *c);

/*
 * pgl_progress_clear() -- erase the redrawn progress line, if there is one,
 * before printing a message.
 */
void pgl_progress_clear(struct pgl_ctx *c);

/* pgl_progress_run_done() -- say on stderr that run RUN is done, and its times. */
void pgl_progress_run_done(struct pgl_ctx *c, int run);

#endif /* PGLOAD_RUN_I_H */
