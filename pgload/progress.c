/*
 * progress.c -- the progress of `pgload run` on stderr, in one of two forms:
 *  - a line redrawn twice a second (when stderr is a terminal, or with
 *    --progress): run, phase, MB done (of the input's size when known),
 *    rows/s, MB/s and an ETA;
 *  - with -P SEC, as pgbench -P prints it: one line every SEC seconds,
 *    "progress: ELAPSED s, run R/N PHASE, MB read, statements/s, rows/s,
 *    MB/s", rates over the last interval, whatever stderr is;
 * and the line that ends each run.  A thread of its own prints them.
 *
 * What must stay true: the thread only reads the run's counters (atomics
 * in the context); it never delays the load.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pgload.h"
#include "run_i.h"

#define MB 1e6

struct pgl_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

/* input_total() -- size of FILE and whether it is an lz4 frame stream. */
static int64_t input_total(const char *file, bool *lz4)
{
	struct stat st;
	*lz4 = false;
	/* not a FIFO: opening one would wait for its writer, reading steal its data */
	if (!file || strcmp(file, "-") == 0 || stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	FILE *fp = fopen(file, "r");
	if (!fp)
		return -1;
	unsigned char m[4];
	if (fread(m, 1, 4, fp) == 4 && m[0] == 0x04 && m[1] == 0x22 && m[2] == 0x4D && m[3] == 0x18)
		*lz4 = true;
	fseek(fp, 0, SEEK_END);
	int64_t total = ftell(fp);
	fclose(fp);
	return total;
}

/* wait_until() -- sleep until T (pgl_now() time) or a stop; false on a stop. */
static bool wait_until(struct pgl_progress *pr, double t)
{
	while (!pr->stop) {
		double left = t - pgl_now();
		if (left <= 0)
			return true;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long ns = ts.tv_nsec + (long)((left - (long)left) * 1e9);
		ts.tv_sec += (time_t)left + ns / 1000000000L;
		ts.tv_nsec = ns % 1000000000L;
		pthread_cond_timedwait(&pr->cond, &pr->lock, &ts);
	}
	return false;
}

/*
 * every_line() -- -P: one line per interval, rates over that interval (as
 * pgbench -P: a phase that changed restarts the counters, not the clock).
 */
static void every_line(struct pgl_ctx *c)
{
	struct pgl_progress *pr = c->progress;
	double t0 = pgl_now(), tprev = t0, every = c->o->progress_every;
	uint64_t sprev = 0, rprev = 0, qprev = 0;
	int lastph = -1, lastrun = -1;
	for (long k = 1; wait_until(pr, t0 + (double)k * every); k++) {
		int ph = atomic_load(&c->progress_phase), run = atomic_load(&c->progress_run);
		uint64_t sent = atomic_load(&c->progress_bytes);
		uint64_t rows = atomic_load(&c->progress_rows);
		uint64_t stmts = atomic_load(&c->progress_stmts);
		double now = pgl_now(), dt = now - tprev;
		if (ph != lastph || run != lastrun || sent < sprev || rows < rprev ||
		    stmts < qprev) {
			/* a new phase: what it did so far, over the part of the interval it had */
			lastph = ph;
			lastrun = run;
			sprev = rprev = qprev = 0;
		}
		uint64_t done = c->o->jobs > 1 ? sent : atomic_load(&c->progress_pos);
		fprintf(stderr,
			"progress: %.1f s, run %d/%d %s, %.1f MB read, %.1f statements/s, "
			"%.0f rows/s, %.1f MB/s\n",
			now - t0, run + 1, c->o->runs + c->o->warmup, pgl_phase_names[ph],
			(double)done / MB, dt > 0 ? (double)(stmts - qprev) / dt : 0,
			dt > 0 ? (double)(rows - rprev) / dt : 0,
			dt > 0 ? (double)(sent - sprev) / MB / dt : 0);
		tprev = now;
		sprev = sent;
		rprev = rows;
		qprev = stmts;
	}
}

/* live_line() -- the line redrawn twice a second. */
static void live_line(struct pgl_ctx *c)
{
	struct pgl_progress *pr = c->progress;
	int lastph = -1, lastrun = -1;
	double t0 = pgl_now(), tprev = t0;
	uint64_t sprev = 0, rprev = 0;
	double mbs = 0, rps = 0;
	int64_t total = -1;
	bool lz4 = false;
	while (wait_until(pr, pgl_now() + 0.5)) {
		int ph = atomic_load(&c->progress_phase), run = atomic_load(&c->progress_run);
		double now = pgl_now();
		uint64_t sent = atomic_load(&c->progress_bytes);
		uint64_t rows = atomic_load(&c->progress_rows);
		if (ph != lastph || run != lastrun || sent < sprev) {
			lastph = ph;
			lastrun = run;
			t0 = tprev = now;
			sprev = sent;
			rprev = rows;
			mbs = rps = 0;
			total = input_total(c->o->file[ph], &lz4);
			continue;
		}
		/* rates over the last interval, smoothed */
		double dt = now - tprev;
		if (dt > 0) {
			double m = (double)(sent - sprev) / MB / dt,
			       r = (double)(rows - rprev) / dt;
			mbs = mbs == 0 ? m : 0.7 * mbs + 0.3 * m;
			rps = rps == 0 ? r : 0.7 * rps + 0.3 * r;
		}
		tprev = now;
		sprev = sent;
		rprev = rows;
		/* done: COPY bytes with --jobs (the reader runs ahead), else input read */
		uint64_t done = c->o->jobs > 1 ? sent : atomic_load(&c->progress_pos);
		if (c->o->jobs > 1 && lz4)
			total = -1; /* uncompressed bytes against a compressed size */
		char eta[32] = "", tot[32] = "";
		double el = now - t0;
		if (total > 0) {
			snprintf(tot, sizeof(tot), "/%.1f", (double)total / MB);
			if (done > 0 && el > 2 && (uint64_t)total > done) {
				double rem = el * (double)((uint64_t)total - done) / (double)done;
				snprintf(eta, sizeof(eta), ", ETA %d:%02d", (int)rem / 60,
					 (int)rem % 60);
			}
		}
		fprintf(stderr, "\r\033[Krun %d/%d %s: %.1f%s MB, %.0f rows/s, %.1f MB/s%s",
			run + 1, c->o->runs + c->o->warmup, pgl_phase_names[ph], (double)done / MB,
			tot, rps, mbs, eta);
	}
	fprintf(stderr, "\r\033[K");
}

static void *progress_thread(void *arg)
{
	struct pgl_ctx *c = arg;
	pthread_mutex_lock(&c->progress->lock);
	if (c->o->progress_every > 0)
		every_line(c);
	else
		live_line(c);
	pthread_mutex_unlock(&c->progress->lock);
	return NULL;
}

int pgl_progress_start(struct pgl_ctx *c)
{
	struct pgl_progress *pr = calloc(1, sizeof(*pr));
	int ret;
	if (!pr)
		return -ENOMEM;
	pthread_mutex_init(&pr->lock, NULL);
	pthread_cond_init(&pr->cond, NULL);
	c->progress = pr;
	if ((ret = pthread_create(&pr->thread, NULL, progress_thread, c)) != 0) {
		pthread_mutex_destroy(&pr->lock);
		pthread_cond_destroy(&pr->cond);
		free(pr);
		c->progress = NULL;
		return -ret;
	}
	return 0;
}

void pgl_progress_stop(struct pgl_ctx *c)
{
	struct pgl_progress *pr = c->progress;
	if (!pr)
		return;
	pthread_mutex_lock(&pr->lock);
	pr->stop = true;
	pthread_cond_signal(&pr->cond);
	pthread_mutex_unlock(&pr->lock);
	pthread_join(pr->thread, NULL);
	pthread_mutex_destroy(&pr->lock);
	pthread_cond_destroy(&pr->cond);
	free(pr);
	c->progress = NULL;
}

void pgl_progress_clear(struct pgl_ctx *c)
{
	if (c->progress && c->o->progress_every <= 0)
		fprintf(stderr, "\r\033[K");
}

void pgl_progress_run_done(struct pgl_ctx *c, int run)
{
	const struct pgl_run_result *rr = &c->results[run];
	char r[32];
	double real = 0;
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		real += rr->ph[ph].real;
	pgl_fmt_time(r, sizeof(r), real);
	pgl_progress_clear(c);
	fprintf(stderr, "pgload: run %d/%d%s done: real %s", run + 1, c->o->runs + c->o->warmup,
		rr->warmup ? " (warmup)" : "", r);
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		if (!rr->ph[ph].present)
			continue;
		pgl_fmt_time(r, sizeof(r), rr->ph[ph].real);
		fprintf(stderr, ", %s %s", pgl_phase_names[ph], r);
	}
	fprintf(stderr, "\n");
}
