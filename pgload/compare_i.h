/*
 * compare_i.h -- the internals of `pgload compare` shared by its files:
 * the command (cmd_compare.c: cells and rounds), its options
 * (compare_opts.c), the background loads (bgload.c), the OLTP clients in
 * the foreground (oltp.c) and the report (compare_verdict.c: figures and
 * verdicts; compare_table.c: the tables; compare_report.c: its files;
 * compare_html.c: the page).  It runs on
 * the test bed (testbed.h) and the run engine (run_i.h).  Errors follow
 * pgload_i.h.
 */
#ifndef PGLOAD_COMPARE_I_H
#define PGLOAD_COMPARE_I_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pgload_i.h"
#include "run_i.h"
#include "testbed.h"

#define MAX_BACKENDS	  8
#define MAX_PROFILES	  12
#define MAX_SETS	  4 /* --set, --queue-set, --disk-set: sweeps of each kind */
#define MAX_SWEEPS	  (3 * MAX_SETS)
#define MAX_VALUES	  8
#define MAX_ELEVATORS	  4
#define MAX_PG_SETS	  8		       /* --pg-set: server settings of every cell */
#define MAX_CELLS	  PGL_TESTBED_MAX_DIRS /* a cell may record a directory */
#define CV_LIMIT_PCT	  10.0		       /* a cell with a higher CV is flagged */
#define DEFAULT_SIZE	  (4ULL << 30)	       /* --size */
#define DEFAULT_STREAM_MB 64		       /* --stream-mb */
/* A "cold" file read that found more than STREAM_CACHED_PCT of the file in
 * the page cache, or was more than STREAM_CACHED_RATIO times as fast as the
 * device read of the same bytes, came from a cache: the report calls it
 * cached, not a result.  The ratio leaves room for the noise of a shared
 * machine (a file read 0.4 to 2.8 times its device read was seen on a
 * loaded virtual machine, guest caches dropped); a read from the page
 * cache is several times faster than that. */
#define STREAM_CACHED_PCT   10.0
#define STREAM_CACHED_RATIO 3.0

/* The background load during the import (--load), as contest's. */
enum load_kind { LOAD_NONE, LOAD_IO, LOAD_READ };
extern const char *const pgl_load_names[]; /* "none", "io_load", "read_load" */

/* What a swept tunable is a tunable of. */
enum sweep_kind {
	SWEEP_PGIOFS, /* --set: pgiofs (pgiofs cells) */
	SWEEP_QUEUE,  /* --queue-set: the loop device's queue (cells on a block device) */
	SWEEP_DISK,   /* --disk-set: pgdisk's model (cells on a modelled disk) */
};
extern const char *const pgl_sweep_prefix[]; /* "", "queue.", "disk.": in labels */

/* A swept tunable (--set, --queue-set, --disk-set NAME=V1,V2,...). */
struct sweep {
	enum sweep_kind kind;
	char name[64];	      /* as pgiofs or pgdisk take it; a queue tunable's own name */
	const char *elevator; /* SWEEP_QUEUE: the elevator it belongs to; NULL: every queue */
	const char *val[MAX_VALUES];
	int nval;
	char *buf; /* owns the values */
};

/* What the OLTP clients did in a window (the import): commit latency. */
struct oltp_figures {
	uint64_t tx, errors;	    /* transactions that ended in the window; failed ones */
	double secs, tps;	    /* the window; tx / secs */
	double p50, p99, p999, max; /* ms, nearest rank */
};

/* A pool of commit latencies (ms) of the OLTP clients, with its windows'
 * length and the failed transactions. */
struct lat_pool {
	double *v;
	size_t n, cap;
	double secs;
	uint64_t errors;
};

/* One second of an import: the OLTP clients' commits that ended in it. */
struct tl_second {
	uint32_t tx;
	float p99, max; /* ms, nearest rank; 0 without commits */
};

/* A checkpoint or a WAL segment's creation, in seconds from the import's
 * start: START < 0 began before it, END < 0 was under way at its end. */
struct tl_span {
	double start, end;
	char what[40];		/* a checkpoint's kind as logged ("wal", "time"); "" */
	double write_s, sync_s; /* a checkpoint's write and sync times; -1: unknown */
};

/* What happened during one import, second by second (timeline.c). */
struct timeline {
	double secs;	   /* the import's length */
	double post_start; /* the post phase's start; < 0: none */
	struct tl_second *sec;
	int nsec;	      /* ceil(secs) seconds, with --oltp; else none */
	struct tl_span *ckpt; /* checkpoints, from the server log */
	struct tl_span *seg;  /* WAL segments created (zero-filled), from inotify */
	int nckpt, nseg;
	int recycled;	       /* WAL segments recycled (renamed: nothing written) */
	int made_ahead;	       /* WAL segments pgiofs made ahead meanwhile; -1: not on pgiofs */
	bool has_log, has_wal; /* checkpoints, segments were looked for */
};

/* What an import used of a capped cloud volume (compare_caps.c): pgdisk's
 * counters differenced over it, sampled every CAPS_PERIOD_MS. */
struct caps_use {
	bool has;		    /* measured (a capped volume whose stats answered) */
	double up_start, secs;	    /* the import's start in pgdisk's uptime, its length; s */
	uint64_t ops, bytes;	    /* operations as the volume counts them, bytes */
	double iops_peak, mib_peak; /* the busiest second (or the whole import if shorter) */
	double held[3]; /* requests held back by the IOPS, throughput and credit buckets */
	double credits_start, credits_min, credits_end; /* the balance (0 without credits) */
	uint64_t outs;					/* times the credits ran out */
	double out_at; /* the first of them, s from the import's start; -1: none */
	/* second by second from the import's start (the last one may be
	 * shorter): IOPS and MiB/s used, the credit balance at its end;
	 * NULL without readings (pgl_caps_free()) */
	float *sec_iops, *sec_mib, *sec_credits;
	int nsec;
};

/* One timed run of one cell. */
struct sample {
	int round;
	double schema, data, post, import; /* s */
	double cpu_pct;		      /* system-wide busy CPU during the import, % of one CPU */
	double load_mb, load_cpu_pct; /* background load's work and CPU */
	uint64_t wal, rows;
	struct oltp_figures oltp;  /* --oltp: commits during the import */
	struct oltp_figures floor; /* --floor: the same clients after it, no import */
	struct timeline tl;
	struct caps_use caps; /* on a capped cloud volume */
};

/*
 * One cell of the matrix: a back end, a profile (or native), on a block
 * device an elevator, and a value of every sweep that applies to it.
 */
struct cell {
	int idx;
	const struct pgl_backend_spec *spec;
	const char *profile;  /* NULL: native */
	bool walfloor;	      /* --wal-floor's cell: native, only pg_wal on the back end, data
			       * directory on the machine's own disk; no verdict names it */
	const char *elevator; /* block devices: the queue's elevator; NULL: the kernel's */
	const char *setv[MAX_SWEEPS]; /* per sweep of the cmp: the value, NULL: not applied */
	char label[256];	      /* "hdd:xfs/native elevator=bfq queue.low_latency=0" */
	char words[300];	      /* "native elevator=bfq queue.low_latency=0 on hdd:xfs" */
	/* runtime */
	char dir[256]; /* WD/cellN */
	struct pgl_backend_opts bo;
	const char *queue_sets[MAX_SETS + 1], *disk_sets[MAX_SETS + 1];
	char set_buf[2 * MAX_SETS][128];
	struct pgl_backend *be; /* set up in dir */
	struct pgl_opts o;
	struct pgl_ctx c;
	struct pgl_server *server;
	char *pgiofs_argv[2 * (MAX_SETS + 4) + 1]; /* --set of each sweep, the device, 3 queue's */
	char pgiofs_argbuf[MAX_SETS + 1][128];
	struct sample *s;
	int ns;
	struct pgl_io lat;
	bool has_lat;
	struct pgl_queue_state queue; /* read back after the set-up */
	bool has_queue;
	int data_on_backend, wal_on_backend; /* native cells: whether the data directory
					      * and pg_wal are on the back end's file
					      * system (1) or not (0); -1: not known */
	char disk_stats[4096]; /* pgdisk's stats after the last round ("NAME VALUE" lines) */
	double stream_dev, stream_write, stream_read; /* MB/s; < 0: not measured */
	double stream_resident_pct; /* of the file read, cached as the read began; -1: tmpfs */
	bool streamed;		    /* the streaming figures are taken */
	bool turns; /* on a device other cells use too: set up afresh for each of its runs */
	struct lat_pool oltp_pool, floor_pool; /* --oltp: every commit latency of the windows */
	/* summary */
	double mean, sd, cv, min, max, schema_mean, cpu_mean, load_mean, lcpu_mean;
	double ratio, ratio_sd;
	struct oltp_figures oltp;  /* every run's window together */
	struct oltp_figures floor; /* --floor: every floor window together */
};

/* A comparison: its settings, then what it made and measured. */
struct cmp {
	/* settings */
	const char *workload;
	double gen_scale;
	struct pgl_backend_spec be[MAX_BACKENDS]; /* name: as the report labels it */
	const char *be_arg[MAX_BACKENDS];	  /* as given ("fast=dir:/srv/a") */
	int nbe;
	const char *destroy[MAX_BACKENDS + 1]; /* --destroy-device, NULL-terminated */
	int ndestroy;
	const char *profile[MAX_PROFILES];
	int nprofile;
	struct sweep sets[MAX_SWEEPS];
	int nsets;
	const char *elevators[MAX_ELEVATORS];	     /* --elevators: native cells */
	const char *pgiofs_elevators[MAX_ELEVATORS]; /* --pgiofs-elevators (default none) */
	int nelevators, npgiofs_elevators;
	bool elevators_given; /* either option: labels name the elevator */
	int runs, jobs;
	enum load_kind load;
	int oltp_clients, oltp_scale; /* --oltp, --oltp-scale; 0 clients: none */
	bool floor;		      /* --floor: the clients without the import too */
	bool wal_floor;		      /* --wal-floor: a cell per back end with only pg_wal on it */
	int stream_mb;		      /* --stream-mb; 0: no streaming figures */
	const char *device;
	const char *baseline_arg;
	const char *out;
	uint64_t size;
	const char *pgbin, *pgiofs_bin, *pgdisk_bin;
	const char *pg_set[MAX_PG_SETS + 1]; /* --pg-set NAME=VALUE: every cell's server */
	int npg_set;
	bool quiet;
	char pgiofs[4096], pgdisk[4096];
	/* runtime */
	struct pgl_testbed *tb;
	char files[PGL_NPHASE][1100];
	struct cell *cell;
	int ncell, baseline;
	char server_version[64], kernel[256], started[32];
	int server_version_num;	  /* the server's server_version_num (150004) */
	char pgiofs_version[128]; /* `pgiofs --version` of the pgiofs cells; "" without */
	long ncpu;		  /* CPUs online */
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

/* ---- the back ends (compare_backends.c) ------------------------------------ */

/*
 * pgl_cmp_backends() -- the N items of --backends (LABEL=BACKEND or
 * BACKEND) parsed into M->be, each named for the report: its LABEL, or its
 * name, told apart from another's by its path's end.  Returns 0, or
 * -EINVAL after saying why.
 */
int pgl_cmp_backends(struct cmp *m, const char *const *items, int n);

/*
 * pgl_cmp_check_backends() -- what every back end needs, before anything
 * is made (pgl_backend_check()); every --destroy-device names the device
 * of a dev:DEVICE:FS back end.  Returns 0, or -errno after saying why.
 */
int pgl_cmp_check_backends(struct cmp *m);

/* pgl_cmp_backend_opts() -- how C's back end is set up (C->bo): size, the
 * loop device's queue (elevator, --queue-set values; an hdd says it is
 * rotational), the model's --disk-set values (C->disk_sets). */
void pgl_cmp_backend_opts(const struct cmp *m, struct cell *c);

/* ---- capped cloud volumes (compare_caps.c) ----------------------------------- */

/* pgl_cmp_disk_value() -- setting or counter NAME of pgdisk's stats STATS
 * ("NAME VALUE" lines) into OUT; false if absent. */
bool pgl_cmp_disk_value(const char *stats, const char *name, char *out, size_t cap);

/* pgl_cmp_disk_num() -- a numeric setting or counter of pgdisk's stats, or 0. */
double pgl_cmp_disk_num(const char *stats, const char *name);

/* A sampler of a capped volume's use during an import. */
struct caps_watch;

/*
 * pgl_caps_start() -- read BE's pgdisk stats now and every CAPS_PERIOD_MS
 * after, in a thread, until pgl_caps_stop().  Returns 0 and *OUT (NULL,
 * after saying so, if pgdisk's stats cannot be read: the run goes on
 * unmeasured), or -errno.
 */
int pgl_caps_start(const struct pgl_backend *be, struct caps_watch **out);

/* pgl_caps_stop() -- a last reading, the sampler stopped, what the import
 * used into *U (U->has false without readings); frees W (NULL: none). */
void pgl_caps_stop(struct caps_watch *w, struct caps_use *u);

/* pgl_caps_free() -- what pgl_caps_stop() allocated in U. */
void pgl_caps_free(struct caps_use *u);

/*
 * pgl_cmp_caps_svg() -- per cell on a capped volume, one run's IOPS and
 * MiB/s second by second as a share of the caps, and the credit balance as
 * a share of the bucket (compare_capchart.c), as one <svg> (id "caps")
 * into F.  Returns 1 if it drew one.
 */
int pgl_cmp_caps_svg(FILE *f, const struct cmp *m);

/* pgl_cmp_print_caps() -- per cell on a capped volume, its caps against
 * what its imports used, and its credits, with labels W wide, into F. */
void pgl_cmp_print_caps(const struct cmp *m, FILE *f, int w);

/* pgl_cmp_json_caps() -- C's caps and use over all runs as a JSON object
 * (null off a capped volume); pgl_cmp_json_caps_use() -- one run's. */
void pgl_cmp_json_caps(FILE *f, const struct cell *c);
void pgl_cmp_json_caps_use(FILE *f, const struct caps_use *u);

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

/* ---- the OLTP clients in the foreground (oltp.c) ------------------------- */

/* The database of the OLTP clients, in every cell's cluster. */
#define OLTP_DB "oltp"

/*
 * pgl_oltp_init() -- create database OLTP_DB in the server of ADMIN (whose
 * connections go to BASE) with pgbench's tables at SCALE (as `pgbench -i -s
 * SCALE`, generated on the server), then CHECKPOINT.  Returns 0 or -errno.
 */
int pgl_oltp_init(PGconn *admin, const struct pgl_target *base, int scale);

/* Running OLTP clients. */
struct oltp;

/*
 * pgl_oltp_start() -- CLIENTS connections to OLTP_DB of BASE, each running
 * pgbench's TPC-B-like transaction (its seven statements, one round trip
 * each) over and over, timing each; seeded by SEED.  Returns once every
 * client has committed once (warm), 0 and *OUT, or -errno.
 */
int pgl_oltp_start(const struct pgl_target *base, int clients, int scale, uint64_t seed,
		   struct oltp **out);

/*
 * pgl_oltp_stop() -- stop the clients (each ends its transaction) and add
 * the latencies of the transactions that ended between T0 and T1
 * (pgl_now()) to POOL; their figures into *F; with TL (else NULL), the
 * commits of each second from T0 into TL->sec.  Frees O.  Returns 0, or
 * -errno if a client lost its connection.
 */
int pgl_oltp_stop(struct oltp *o, double t0, double t1, struct lat_pool *pool,
		  struct oltp_figures *f, struct timeline *tl);

/* pgl_oltp_figures() -- the figures of N latencies (ms, sorted in place) over SECS. */
void pgl_oltp_figures(double *lat, size_t n, double secs, struct oltp_figures *f);

/* ---- the timeline of an import (timeline.c) ------------------------------- */

/* A watch on a running server during an import. */
struct tl_watch;

/*
 * pgl_tl_start() -- watch WALDIR (the cluster's pg_wal) for WAL segments
 * created and recycled, and note where server log LOG (NULL: none) ends,
 * from now on.  A WALDIR that cannot be watched is said and left out.
 * Returns 0 and *OUT, or -ENOMEM.
 */
int pgl_tl_start(const char *waldir, const char *log, struct tl_watch **out);

/* pgl_tl_stop() -- stop W and put what it saw into TL (checkpoints from the
 * log, WAL segments), in seconds from T0 (pgl_now()); frees W. */
void pgl_tl_stop(struct tl_watch *w, double t0, struct timeline *tl);

/* pgl_tl_free() -- free what TL holds; TL is then empty. */
void pgl_tl_free(struct timeline *tl);

/* pgl_tl_worst() -- the second of TL with the slowest commit, or -1. */
int pgl_tl_worst(const struct timeline *tl);

/* pgl_tl_describe() -- what was under way in second K of TL (checkpoints,
 * WAL segments created, the phase), into BUF. */
void pgl_tl_describe(const struct timeline *tl, int k, char *buf, size_t cap);

/* ---- figures and verdicts (compare_verdict.c) ----------------------------- */

/* pgl_cmp_summarize() -- each cell's statistics and ratio to the baseline. */
void pgl_cmp_summarize(struct cmp *m);

/* pgl_cmp_over() -- V over BASE, 0 without a base. */
static inline double pgl_cmp_over(double v, double base)
{
	return base > 0 ? v / base : 0;
}

/* pgl_cmp_profile_name() -- C's profile as reports name it: "native",
 * "walonly" (--wal-floor's cell) or the pgiofs profile. */
const char *pgl_cmp_profile_name(const struct cell *c);

/* pgl_cmp_wal_floor_of() -- --wal-floor's cell of C's back end, if C has
 * commit figures and is not that cell itself; else NULL. */
const struct cell *pgl_cmp_wal_floor_of(const struct cmp *m, const struct cell *c);

/* pgl_cmp_noisy() -- C's import times vary by more than CV_LIMIT_PCT. */
bool pgl_cmp_noisy(const struct cell *c);

/* pgl_cmp_timeline_run() -- the run of C whose timeline the report shows:
 * the one with the slowest commit; -1 without --oltp. */
int pgl_cmp_timeline_run(const struct cell *c);

/* pgl_cmp_stream_cached() -- C's "cold" file read came from a cache (see
 * STREAM_CACHED_PCT): it is no figure of the disk. */
bool pgl_cmp_stream_cached(const struct cell *c);

/* pgl_cmp_lat_ops() -- requests of class K in a latency snapshot. */
uint64_t pgl_cmp_lat_ops(const struct pgl_io *io, int k);

/* Where a figure's values come from. */
enum fig_src {
	FIG_IMPORT,	/* the mean import time; per run, its import time */
	FIG_OLTP,	/* a member of struct oltp_figures, of the cell and of each run */
	FIG_STREAM_DEV, /* streaming figures: measured once per cell */
	FIG_STREAM_READ,
};

/* A figure the report names the best cell of. */
struct figure {
	const char *name, *unit;
	bool higher_better;
	enum fig_src src;
	size_t off; /* FIG_OLTP: offsetof(struct oltp_figures, member) */
};

/* Two cells' runs on one figure: how many, their ranges, whether apart. */
struct separation {
	int na, nb;		   /* runs having the figure; 0: it is measured once per cell */
	double alo, ahi, blo, bhi; /* the ranges (once: the value, twice) */
	bool apart;		   /* the ranges do not overlap */
};

/* pgl_cmp_separate() -- cells A and B on FIG into *S. */
void pgl_cmp_separate(const struct figure *fig, const struct cell *a, const struct cell *b,
		      struct separation *s);

/* pgl_cmp_fmt_separation() -- S as the report says it ("3 runs each, 2.41 to
 * 2.60 against 2.90 to 3.12 s"; "measured once each"), into BUF. */
void pgl_cmp_fmt_separation(const struct figure *fig, const struct separation *s, char *buf,
			    size_t cap);

/*
 * pgl_cmp_vs_word() -- what a cell's figure over another's, R, says with
 * separation S: "faster" or "slower" (LOWER_BETTER: below 1 is faster, as
 * for a time) only when every run of one is apart from every run of the
 * other, else "not separated"; "" without a ratio.
 */
const char *pgl_cmp_vs_word(const struct separation *s, double r, bool lower_better);

/* pgl_cmp_baseline_word() -- pgl_cmp_vs_word() of C's import time against
 * the baseline's. */
const char *pgl_cmp_baseline_word(const struct cmp *m, const struct cell *c);

/* pgl_cmp_print_vs_baseline() -- a line per cell but the baseline: its
 * import time over the baseline's with the error of both, its word, how
 * many runs and their ranges, into F. */
void pgl_cmp_print_vs_baseline(const struct cmp *m, FILE *f);

/* Who wins a figure. */
struct verdict {
	int best, second;      /* cells; second -1 if only one cell has the figure */
	double vb, vs;	       /* their values */
	double vlo, vhi;       /* the range of the cells' values */
	int n;		       /* cells having the figure */
	bool all_tied;	       /* every cell within TIE_PCT of the best: no winner */
	bool tie_next;	       /* the best within TIE_PCT of the second, or their runs overlap */
	bool overlap;	       /* their runs overlap */
	struct separation sep; /* the best's runs against the second's */
};

/* The figures the report names the best cell of, in the report's order. */
extern const struct figure pgl_cmp_figures[];
extern const size_t pgl_cmp_nfigures;

/* pgl_cmp_judge() -- the verdict on figure FIG into V; false if fewer than
 * two cells have it. */
bool pgl_cmp_judge(const struct cmp *m, const struct figure *fig, struct verdict *v);

/* pgl_cmp_print_verdicts() -- the verdict lines (what was compared, the
 * best of each figure, faster, slower or within noise of the baseline),
 * one a line, into F. */
void pgl_cmp_print_verdicts(const struct cmp *m, FILE *f);

/* pgl_cmp_print_best() -- the best cell of every figure the cells have (a
 * figure on which every cell is within 5 % of the best names no cell), the
 * kernel's best against pgiofs's, each pgiofs cell against the native
 * cell of the lowest commit p99, as rows of a table with labels W wide,
 * into F. */
void pgl_cmp_print_best(const struct cmp *m, FILE *f, int w);

/* ---- the tables (compare_table.c) ------------------------------------------ */

/* pgl_cmp_print_table() -- the tables of the report (as on stdout) into F. */
void pgl_cmp_print_table(const struct cmp *m, FILE *f);

/* ---- the files of the report (compare_report.c) ---------------------------- */

/* pgl_cmp_report() -- the table on stdout, and table.txt, results.json and
 * results.csv in --out.  Returns 0 or -errno after saying why. */
int pgl_cmp_report(struct cmp *m);

/* ---- what the charts are drawn with (compare_svg.c) ----------------------- */

/* pgl_svg_text() -- S escaped for XML text and attribute values, into F. */
void pgl_svg_text(FILE *f, const char *s);

/* pgl_svg_has() -- V is a value to draw: above 0 and finite. */
bool pgl_svg_has(double v);

/* The scale of a chart's value axis. */
struct pgl_axis {
	bool log;
	double lo, hi; /* log: powers of ten */
	double step;   /* linear: the ticks' distance */
	double x0, w;  /* where the plot is (an x axis; a y axis: its top and height) */
};

/* pgl_axis_x() -- where value V goes on A, clamped to it. */
double pgl_axis_x(const struct pgl_axis *a, double v);
/* pgl_axis_y() -- where value V goes on A drawn upwards in a panel from
 * TOP, H high (A's own x0 and w are not used), clamped to it. */
double pgl_axis_y(const struct pgl_axis *a, double v, double top, double h);

/* pgl_axis_fit() -- A's scale for values from LO to HI (both > 0): powers of
 * ten for a log axis, about five ticks of 1, 2 or 5 times a power of ten
 * for a linear one (from 0). */
void pgl_axis_fit(struct pgl_axis *a, double lo, double hi);

/* pgl_svg_fmt() -- V as a tick's or a note's number, into BUF. */
void pgl_svg_fmt(char *buf, size_t cap, double v);

/* pgl_svg_legend() -- a legend item at *X: a swatch of COLOUR, or a dot,
 * or for COLOUR "line:C" ("dash:C") a line (dashed) of colour C; then TEXT.
 * *X moves past it. */
void pgl_svg_legend(FILE *f, double *x, double y, const char *colour, bool dot, const char *text);

/* pgl_svg_time_axis() -- the ticks of time axis TX (seconds, from 0) under
 * the panels ending at Y, and CAPTION under them. */
void pgl_svg_time_axis(FILE *f, const struct pgl_axis *tx, double y, const char *caption);

/* ---- time lines (compare_tlchart.c) ----------------------------------------- */

/*
 * pgl_cmp_timeline_svg() -- the commit latency of each cell over its import
 * (pgl_cmp_timeline_run()), second by second, with its checkpoints, WAL
 * segments created and the start of the post phase, as one <svg> (id
 * "timeline") into F; nothing without --oltp.  Returns 1 if it drew one.
 */
int pgl_cmp_timeline_svg(FILE *f, const struct cmp *m);

/* ---- the page (compare_html.c) --------------------------------------------- */

/*
 * pgl_cmp_write_html() -- index.html in --out: the verdict lines, the
 * charts (inline SVG, also written as import.svg, oltp.svg, latency.svg),
 * then the tables.  Returns 0 or -errno after saying why.
 */
int pgl_cmp_write_html(const struct cmp *m);

#endif /* PGLOAD_COMPARE_I_H */
