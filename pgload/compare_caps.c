/*
 * compare_caps.c -- what each import used of a capped cloud volume (gp3,
 * gp2, io2, cloud: pgdisk's models, docs/pgdisk.md), set against its caps:
 * pgdisk's MOUNTPOINT/stats sampled every CAPS_PERIOD_MS by a thread while
 * the import runs, as its command-line contract says (IOPS used = delta
 * cloud_ops / delta uptime_ns, MiB/s = delta cloud_bytes / delta
 * uptime_ns, the credit balance `credits`, a run-out counted by
 * `credits_outs` at `credits_last_out_ns`); then, in the report, a row per
 * cell (the caps, the mean and the busiest second of the imports, what
 * held requests back) and a line per cell with credits.
 *
 * What must stay true: every figure is pgdisk's own counters, differenced
 * over the import; nothing here writes to pgdisk or changes its timing
 * but the reads of its stats file; the sampler is stopped (and joined)
 * before the run's figures are read.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare_i.h"
#include "json.h"

#define CAPS_PERIOD_MS 100 /* how often the sampler reads pgdisk's stats */
#define CAPS_WINDOW_S  1.0 /* the peak: the busiest second (IOPS are per second) */

bool pgl_cmp_disk_value(const char *stats, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);
	for (const char *l = stats; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ' ') {
			size_t len = strcspn(l + n + 1, "\n");
			snprintf(out, cap, "%.*s", (int)len, l + n + 1);
			return true;
		}
	out[0] = '\0';
	return false;
}

double pgl_cmp_disk_num(const char *stats, const char *name)
{
	char v[64];
	return pgl_cmp_disk_value(stats, name, v, sizeof(v)) ? strtod(v, NULL) : 0;
}

/* One reading of pgdisk's stats. */
struct caps_point {
	double up; /* uptime_ns, in s */
	double ops, bytes, credits, outs, last_out;
	double held[3]; /* requests held by the IOPS, throughput, credit buckets */
};

static const char *const held_names[3] = {"limit_iops", "limit_throughput", "limit_credits"};

struct caps_watch {
	const struct pgl_backend *be;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct caps_point *p; /* the readings; the sampler's until it is joined */
	size_t n, cap;
	char buf[8192];
};

/* read_point() -- one reading into W's list; false if pgdisk did not answer. */
static bool read_point(struct caps_watch *w)
{
	if (pgl_backend_disk_stats(w->be, w->buf, sizeof(w->buf)) <= 0)
		return false;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct caps_point *p = realloc(w->p, cap * sizeof(*p));
		if (!p)
			return false;
		w->p = p;
		w->cap = cap;
	}
	struct caps_point *p = &w->p[w->n++];
	p->up = pgl_cmp_disk_num(w->buf, "uptime_ns") / 1e9;
	p->ops = pgl_cmp_disk_num(w->buf, "cloud_ops");
	p->bytes = pgl_cmp_disk_num(w->buf, "cloud_bytes");
	p->credits = pgl_cmp_disk_num(w->buf, "credits");
	p->outs = pgl_cmp_disk_num(w->buf, "credits_outs");
	p->last_out = pgl_cmp_disk_num(w->buf, "credits_last_out_ns") / 1e9;
	for (int k = 0; k < 3; k++)
		p->held[k] = pgl_cmp_disk_num(w->buf, held_names[k]);
	return true;
}

/* sampler() -- a reading every CAPS_PERIOD_MS until told to stop. */
static void *sampler(void *arg)
{
	struct caps_watch *w = arg;
	struct timespec at;
	clock_gettime(CLOCK_MONOTONIC, &at);
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		at.tv_nsec += CAPS_PERIOD_MS * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&w->cv, &w->mu, &at) == ETIMEDOUT && !w->stop) {
			pthread_mutex_unlock(&w->mu);
			read_point(w); /* the list is the sampler's alone until the join */
			pthread_mutex_lock(&w->mu);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int pgl_caps_start(const struct pgl_backend *be, struct caps_watch **out)
{
	struct caps_watch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;
	int ret;
	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->be = be;
	if (!read_point(w)) {
		fprintf(stderr, "pgload compare: could not read pgdisk's stats: the caps' use of "
				"this run is not measured\n");
		free(w->p);
		free(w);
		return 0;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((ret = pthread_create(&w->thread, NULL, sampler, w)) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w->p);
		free(w);
		return -ret;
	}
	*out = w;
	return 0;
}

/* peak() -- the busiest CAPS_WINDOW_S of field OFF (a counter) in N
 * readings P, per second: from each reading, to the first at least a
 * window later (the whole import if it is shorter). */
static double peak(const struct caps_point *p, size_t n, size_t off)
{
	double best = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		size_t j = i + 1;
		while (j + 1 < n && p[j].up - p[i].up < CAPS_WINDOW_S)
			j++;
		double dt = p[j].up - p[i].up;
		if (dt < CAPS_WINDOW_S && (i > 0 || j + 1 < n))
			break; /* a short window at the end: only a whole import that short counts
				*/
		double v = (*(const double *)((const char *)&p[j] + off) -
			    *(const double *)((const char *)&p[i] + off)) /
			   dt;
		if (dt > 0 && v > best)
			best = v;
	}
	return best;
}

/* at() -- counter OFF of N readings P at time T (s of uptime), linear
 * between the readings around it. */
static double at(const struct caps_point *p, size_t n, size_t off, double t)
{
	size_t i = 0;
#define FIELD(k) (*(const double *)((const char *)&p[k] + off))
	while (i + 1 < n && p[i + 1].up < t)
		i++;
	if (i + 1 >= n || t <= p[i].up)
		return FIELD(i);
	double f = (t - p[i].up) / (p[i + 1].up - p[i].up);
	return FIELD(i) + f * (FIELD(i + 1) - FIELD(i));
#undef FIELD
}

/* series() -- U's second-by-second figures from N readings P. */
static void series(struct caps_use *u, const struct caps_point *p, size_t n)
{
	int k, nsec = (int)ceil(u->secs - 1e-9);
	if (nsec <= 0 || !(u->sec_iops = calloc((size_t)nsec, sizeof(float))) ||
	    !(u->sec_mib = calloc((size_t)nsec, sizeof(float))) ||
	    !(u->sec_credits = calloc((size_t)nsec, sizeof(float)))) {
		pgl_caps_free(u);
		return;
	}
	for (k = 0; k < nsec; k++) {
		double t0 = p[0].up + k, t1 = k + 1 < u->secs ? t0 + 1 : p[n - 1].up, dt = t1 - t0;
		if (dt <= 0)
			break;
		u->sec_iops[k] = (float)((at(p, n, offsetof(struct caps_point, ops), t1) -
					  at(p, n, offsetof(struct caps_point, ops), t0)) /
					 dt);
		u->sec_mib[k] = (float)((at(p, n, offsetof(struct caps_point, bytes), t1) -
					 at(p, n, offsetof(struct caps_point, bytes), t0)) /
					dt / (1 << 20));
		u->sec_credits[k] = (float)at(p, n, offsetof(struct caps_point, credits), t1);
	}
	u->nsec = k;
}

void pgl_caps_free(struct caps_use *u)
{
	free(u->sec_iops);
	free(u->sec_mib);
	free(u->sec_credits);
	u->sec_iops = u->sec_mib = u->sec_credits = NULL;
	u->nsec = 0;
}

void pgl_caps_stop(struct caps_watch *w, struct caps_use *u)
{
	memset(u, 0, sizeof(*u));
	u->out_at = -1;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	read_point(w);
	if (w->n >= 2 && w->p[w->n - 1].up > w->p[0].up) {
		const struct caps_point *a = &w->p[0], *z = &w->p[w->n - 1];
		u->has = true;
		u->up_start = a->up;
		u->secs = z->up - a->up;
		u->ops = z->ops - a->ops;
		u->bytes = z->bytes - a->bytes;
		u->iops_peak = peak(w->p, w->n, offsetof(struct caps_point, ops));
		u->mib_peak = peak(w->p, w->n, offsetof(struct caps_point, bytes)) / (1 << 20);
		for (int k = 0; k < 3; k++)
			u->held[k] = z->held[k] - a->held[k];
		u->credits_start = a->credits;
		u->credits_end = z->credits;
		u->credits_min = a->credits;
		for (size_t i = 0; i < w->n; i++) {
			const struct caps_point *p = &w->p[i];
			if (p->credits < u->credits_min)
				u->credits_min = p->credits;
			/* the first run-out of the import: the last one pgdisk saw by
			 * the first reading after it (two in one period: the later) */
			if (u->out_at < 0 && p->outs > a->outs)
				u->out_at = p->last_out - a->up;
		}
		u->outs = z->outs - a->outs;
		series(u, w->p, w->n);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->p);
	free(w);
}

/* ---- the report ------------------------------------------------------------ */

/* The caps' use of a cell over all its runs. */
struct caps_sum {
	double secs, ops, bytes, iops_peak, mib_peak, held[3];
	double credits_start, credits_min, credits_end, outs;
	int out_round;	     /* the first run in whose import they ran out; 0: none */
	double out_at;	     /* its seconds from that import's start */
	double before_out_s; /* ran out before the first import: s after pgdisk began; -1 */
	double up_start;     /* the first import's start, s after pgdisk began */
	int min_round;	     /* the run of the lowest balance */
};

/* caps_sum() -- C's runs together; false if C is on no capped volume. */
static bool caps_sum(const struct cell *c, struct caps_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->before_out_s = -1;
	if (!c->spec->capped || !c->disk_stats[0])
		return false;
	bool first = true;
	for (int r = 0; r < c->ns; r++) {
		const struct caps_use *u = &c->s[r].caps;
		if (!u->has)
			continue;
		s->secs += u->secs;
		s->ops += (double)u->ops;
		s->bytes += (double)u->bytes;
		s->iops_peak = u->iops_peak > s->iops_peak ? u->iops_peak : s->iops_peak;
		s->mib_peak = u->mib_peak > s->mib_peak ? u->mib_peak : s->mib_peak;
		for (int k = 0; k < 3; k++)
			s->held[k] += u->held[k];
		s->outs += (double)u->outs;
		if (first || u->credits_min < s->credits_min) {
			s->credits_min = u->credits_min;
			s->min_round = c->s[r].round;
		}
		if (first) {
			s->credits_start = u->credits_start;
			s->up_start = u->up_start;
		}
		s->credits_end = u->credits_end;
		if (!s->out_round && u->out_at >= 0) {
			s->out_round = c->s[r].round;
			s->out_at = u->out_at;
		}
		first = false;
	}
	/* pgdisk's first run-out, if it came before any import's */
	double first_out = pgl_cmp_disk_num(c->disk_stats, "credits_first_out_ns") / 1e9;
	if (first_out > 0 && !first && first_out < s->up_start)
		s->before_out_s = first_out;
	return !first;
}

void pgl_cmp_print_caps(const struct cmp *m, FILE *f, int w)
{
	struct caps_sum s;
	bool any = false, credits = false;
	for (int i = 0; i < m->ncell; i++)
		if (caps_sum(&m->cell[i], &s)) {
			any = true;
			credits |= pgl_cmp_disk_num(m->cell[i].disk_stats, "cloud_credits") > 0;
		}
	if (!any)
		return;
	fprintf(f, "\nCapped volumes (pgdisk): the caps, and what the imports used of them "
		   "(all runs: the mean, and the busiest second); requests each cap held back\n");
	fprintf(f, "%-*s %-5s %9s %8s %8s %5s %7s %7s %7s %5s %17s\n", w, "Backend/profile",
		"model", "IOPS cap", "mean", "peak", "%cap", "MiB/s", "mean", "peak", "%cap",
		"held iops/MiB/cr");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (!caps_sum(c, &s))
			continue;
		char model[16], held[48];
		pgl_cmp_disk_value(c->disk_stats, "model", model, sizeof(model));
		double iops = pgl_cmp_disk_num(c->disk_stats, "cloud_iops");
		double mib = pgl_cmp_disk_num(c->disk_stats, "cloud_mib_s");
		double iops_mean = s.secs > 0 ? s.ops / s.secs : 0;
		double mib_mean = s.secs > 0 ? s.bytes / s.secs / (1 << 20) : 0;
		snprintf(held, sizeof(held), "%.0f/%.0f/%.0f", s.held[0], s.held[1], s.held[2]);
		fprintf(f, "%-*s %-5s %9.0f %8.0f %8.0f %5.0f %7.1f %7.1f %7.1f %5.0f %17s\n", w,
			c->label, model, iops, iops_mean, s.iops_peak,
			iops > 0 ? 100 * s.iops_peak / iops : 0, mib, mib_mean, s.mib_peak,
			mib > 0 ? 100 * s.mib_peak / mib : 0, held);
	}
	fprintf(f,
		"IOPS: operations as the volume counts them (pgdisk's cloud_ops: up to "
		"cloud_op_kib an operation, sequential requests merged); %%cap: the peak over "
		"the cap; held: requests that waited on the IOPS, throughput or credit bucket\n");
	if (!credits)
		return;
	fprintf(f, "Credits (gp2's burst: spent above the baseline, earned back at it)\n");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		double cap = pgl_cmp_disk_num(c->disk_stats, "cloud_credits");
		if (!caps_sum(c, &s) || cap <= 0)
			continue;
		fprintf(f,
			"%-*s baseline %.0f IOPS, burst %.0f; credits %.0f of %.0f at the first "
			"import, lowest %.0f (run %d), %.0f at the last's end; ",
			w, c->label, pgl_cmp_disk_num(c->disk_stats, "cloud_baseline_iops"),
			pgl_cmp_disk_num(c->disk_stats, "cloud_iops"), s.credits_start, cap,
			s.credits_min, s.min_round, s.credits_end);
		if (s.before_out_s >= 0)
			fprintf(f,
				"ran out before the imports (%.1f s after pgdisk started: mkfs, "
				"initdb), ",
				s.before_out_s);
		if (s.out_round)
			fprintf(
			    f, "ran out %.2f s into run %d's import (%.0f time%s in the imports)\n",
			    s.out_at, s.out_round, s.outs, s.outs == 1 ? "" : "s");
		else
			fprintf(f, "%s\n",
				s.before_out_s >= 0 ? "not during the imports" : "never ran out");
	}
}

/* json_num() -- "NAME": V. */
static void json_num(FILE *f, const char *name, double v, bool comma)
{
	fprintf(f, "%s\"%s\": %.15g", comma ? ", " : "", name, v);
}

void pgl_cmp_json_caps_use(FILE *f, const struct caps_use *u)
{
	if (!u->has) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{");
	json_num(f, "seconds", u->secs, false);
	json_num(f, "ops", (double)u->ops, true);
	json_num(f, "bytes", (double)u->bytes, true);
	json_num(f, "iops_peak", u->iops_peak, true);
	json_num(f, "mib_s_peak", u->mib_peak, true);
	json_num(f, "held_iops", u->held[0], true);
	json_num(f, "held_throughput", u->held[1], true);
	json_num(f, "held_credits", u->held[2], true);
	json_num(f, "credits_start", u->credits_start, true);
	json_num(f, "credits_min", u->credits_min, true);
	json_num(f, "credits_end", u->credits_end, true);
	json_num(f, "credits_outs", (double)u->outs, true);
	fprintf(f, ", \"credits_out_s\": ");
	if (u->out_at < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%.3f", u->out_at);
	/* what caps.svg draws (compare_capchart.c) */
	const float *const series[3] = {u->sec_iops, u->sec_mib, u->sec_credits};
	const char *const names[3] = {"iops", "mib_s", "credits"};
	fprintf(f, ", \"per_second\": {");
	for (int k = 0; k < 3; k++) {
		fprintf(f, "%s\"%s\": [", k ? ", " : "", names[k]);
		for (int i = 0; i < u->nsec; i++)
			fprintf(f, "%s%.3f", i ? ", " : "", series[k][i]);
		fprintf(f, "]");
	}
	fprintf(f, "}}");
}

void pgl_cmp_json_caps(FILE *f, const struct cell *c)
{
	struct caps_sum s;
	if (!caps_sum(c, &s)) {
		fprintf(f, "null");
		return;
	}
	const char *st = c->disk_stats;
	fprintf(f, "{");
	json_num(f, "iops_cap", pgl_cmp_disk_num(st, "cloud_iops"), false);
	json_num(f, "mib_s_cap", pgl_cmp_disk_num(st, "cloud_mib_s"), true);
	json_num(f, "baseline_iops", pgl_cmp_disk_num(st, "cloud_baseline_iops"), true);
	json_num(f, "credits_cap", pgl_cmp_disk_num(st, "cloud_credits"), true);
	json_num(f, "volume_gib", pgl_cmp_disk_num(st, "cloud_volume_gib"), true);
	json_num(f, "seconds", s.secs, true);
	json_num(f, "iops_mean", s.secs > 0 ? s.ops / s.secs : 0, true);
	json_num(f, "iops_peak", s.iops_peak, true);
	json_num(f, "mib_s_mean", s.secs > 0 ? s.bytes / s.secs / (1 << 20) : 0, true);
	json_num(f, "mib_s_peak", s.mib_peak, true);
	json_num(f, "held_iops", s.held[0], true);
	json_num(f, "held_throughput", s.held[1], true);
	json_num(f, "held_credits", s.held[2], true);
	fprintf(f, ", \"credits\": ");
	if (pgl_cmp_disk_num(st, "cloud_credits") <= 0) {
		fprintf(f, "null}");
		return;
	}
	fprintf(f, "{");
	json_num(f, "start", s.credits_start, false);
	json_num(f, "min", s.credits_min, true);
	json_num(f, "end", s.credits_end, true);
	json_num(f, "outs_in_imports", s.outs, true);
	json_num(f, "outs", pgl_cmp_disk_num(st, "credits_outs"), true);
	fprintf(f, ", \"ran_out\": ");
	if (s.out_round)
		fprintf(f, "{\"run\": %d, \"at_s\": %.3f}", s.out_round, s.out_at);
	else
		fprintf(f, "null");
	fprintf(f, ", \"ran_out_before_s\": ");
	if (s.before_out_s >= 0)
		fprintf(f, "%.3f", s.before_out_s);
	else
		fprintf(f, "null");
	fprintf(f, "}}");
}
