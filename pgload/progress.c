/*
 * progress.c -- the progress line of `pgload run` on stderr: run, phase, MB
 * done (of the input's size when known), rows/s, MB/s and an ETA, redrawn
 * twice a second by a thread of its own; and the line that ends each run.
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

static void *progress_thread(void *arg)
{
	struct pgl_ctx *c = arg;
	struct pgl_progress *pr = c->progress;
	int lastph = -1, lastrun = -1;
	double t0 = pgl_now(), tprev = t0;
	uint64_t sprev = 0, rprev = 0;
	double mbs = 0, rps = 0;
	int64_t total = -1;
	bool lz4 = false;
	pthread_mutex_lock(&pr->lock);
	while (!pr->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pr->cond, &pr->lock, &ts);
		if (pr->stop)
			break;
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
	pthread_mutex_unlock(&pr->lock);
	fprintf(stderr, "\r\033[K");
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

void pgl_progress_run_done(struct pgl_ctx *c, int run)
{
	const struct pgl_run_result *rr = &c->results[run];
	char r[32];
	double real = 0;
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		real += rr->ph[ph].real;
	pgl_fmt_time(r, sizeof(r), real);
	if (c->progress)
		fprintf(stderr, "\r\033[K");
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
