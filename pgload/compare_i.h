/*
 * compare_i.h -- the internals of `pgload compare` shared by its files:
 * the command (cmd_compare.c: cells and rounds), its options
 * (compare_opts.c), the background loads (bgload.c) and the report
 * (compare_report.c).  It runs on the test bed (testbed.h) and the run
 * engine (run_i.h).  Errors follow pgload_i.h.
 */
#ifndef PGLOAD_COMPARE_I_H
#define PGLOAD_COMPARE_I_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pgload_i.h"
#include "run_i.h"
#include "testbed.h"

#define MAX_BACKENDS 8
#define MAX_PROFILES 12
#define MAX_SETS     4
#define MAX_VALUES   8
#define MAX_CELLS    PGL_TESTBED_MAX_DIRS /* a cell may record a directory */
#define CV_LIMIT_PCT 10.0		  /* a cell with a higher CV is flagged */
#define DEFAULT_SIZE (4ULL << 30)	  /* --size */

/* The background load during the import (--load), as contest's. */
enum load_kind { LOAD_NONE, LOAD_IO, LOAD_READ };
extern const char *const pgl_load_names[]; /* "none", "io_load", "read_load" */

/* A swept pgiofs tunable (--set NAME=V1,V2,...). */
struct sweep {
	char name[64];
	const char *val[MAX_VALUES];
	int nval;
	char *buf; /* owns the values */
};

/* One timed run of one cell. */
struct sample {
	int round;
	double schema, data, post, import; /* s */
	double cpu_pct;		      /* system-wide busy CPU during the import, % of one CPU */
	double load_mb, load_cpu_pct; /* background load's work and CPU */
	uint64_t wal, rows;
};

/* One cell of the matrix: a back end, a profile (or native), --set values. */
struct cell {
	int idx;
	const struct pgl_backend_spec *spec;
	const char *profile; /* NULL: native */
	const char *setv[MAX_SETS];
	char label[160]; /* "xfs/dbaware nr_requests=128" */
	char words[200]; /* "dbaware nr_requests=128 on xfs" */
	/* runtime */
	char dir[256];		/* WD/cellN */
	struct pgl_backend *be; /* set up in dir */
	struct pgl_opts o;
	struct pgl_ctx c;
	struct pgl_server *server;
	char *pgiofs_argv[2 * (MAX_SETS + 1) + 1];
	char pgiofs_argbuf[MAX_SETS + 1][128];
	struct sample *s;
	int ns;
	struct pgl_io lat;
	bool has_lat;
	/* summary */
	double mean, sd, cv, min, max, schema_mean, cpu_mean, load_mean, lcpu_mean;
	double ratio, ratio_sd;
};

/* A comparison: its settings, then what it made and measured. */
struct cmp {
	/* settings */
	const char *workload;
	double gen_scale;
	struct pgl_backend_spec be[MAX_BACKENDS];
	int nbe;
	const char *profile[MAX_PROFILES];
	int nprofile;
	struct sweep sets[MAX_SETS];
	int nsets;
	int runs, jobs;
	enum load_kind load;
	const char *device;
	const char *baseline_arg;
	const char *out;
	uint64_t size;
	const char *pgbin, *pgiofs_bin;
	bool quiet;
	char pgiofs[4096];
	/* runtime */
	struct pgl_testbed *tb;
	char files[PGL_NPHASE][1100];
	struct cell *cell;
	int ncell, baseline;
	char server_version[64], kernel[256], started[32];
	double seconds;
};

/* ---- options (compare_opts.c) -------------------------------------------- */

/*
 * pgl_cmp_args() -- the options into M, checked (back ends, profiles and
 * --set values as pgiofs reads them), and the cells.  Returns 0, 1 after
 * --help, or -errno after saying why.
 */
int pgl_cmp_args(struct cmp *m, int argc, char **argv);

/* pgl_cmp_workload() -- the phase files of workload directory DIR into M. */
int pgl_cmp_workload(struct cmp *m, const char *dir);

/* ---- background loads (bgload.c) ------------------------------------------ */

/* A running background load. */
struct load {
	pid_t pid;
	_Atomic uint64_t *bytes; /* shared with the child */
};

/* pgl_cmp_load_file() -- the file read_load streams, in directory ROOT. */
int pgl_cmp_load_file(const struct cmp *m, const char *root);

/* pgl_cmp_load_start() -- start M's load on ROOT (nothing for LOAD_NONE). */
int pgl_cmp_load_start(const struct cmp *m, const char *root, struct load *l);

/* pgl_cmp_load_stop() -- stop the load; its MB and CPU seconds. */
void pgl_cmp_load_stop(struct load *l, double *mb, double *cpu);

/* ---- the report (compare_report.c) ---------------------------------------- */

/* pgl_cmp_summarize() -- each cell's statistics and ratio to the baseline. */
void pgl_cmp_summarize(struct cmp *m);

/* pgl_cmp_report() -- the table on stdout and every file in --out. */
int pgl_cmp_report(struct cmp *m);

#endif /* PGLOAD_COMPARE_I_H */
