/*
 * compare_report.c -- what `pgload compare` reports: per cell the mean, sd,
 * CV, min and max of the import time and its ratio to the baseline cell;
 * the seed-style table and a line per cell against the baseline on stdout
 * and in table.txt, with --oltp the commit latency and tps of the clients
 * during the import, the best cell of each figure, the streaming figures,
 * the elevator and tunables of each block device, the modelled disk's
 * settings and counters, a tiobench-style latency table per class on
 * pgiofs; results.json (schema pgload.compare/1) and results.csv in
 * --out; and the verdict lines, which compare_html.c puts at the top of
 * index.html with the table.
 *
 * What must stay true: a cell whose import time varies by more than
 * CV_LIMIT_PCT is flagged noisy wherever it is shown; every ratio is a
 * figure over its reference's (the baseline's, the next cell's, the
 * kernel's), and its word (faster, slower, within noise) agrees with it;
 * what a cell ran on (elevator, tunables, model) is reported as read back,
 * not as asked for.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"
#include "json.h"
#include "stats.h"
#include "version.h"

#include "commit.h" /* PGL_GIT_COMMIT, made by the Makefile */

#define COMPARE_SCHEMA "pgload.compare/1"
#define TIE_PCT	       5.0 /* a best cell less than this ahead of the next is a tie */
#define TIE_PCT_TEXT   "5 %"

void pgl_cmp_summarize(struct cmp *m)
{
	for (int i = 0; i < m->ncell; i++) {
		struct cell *c = &m->cell[i];
		double x[5][1000];
		struct stats_summary s[5];
		int n = c->ns;
		for (int k = 0; k < n; k++) {
			x[0][k] = c->s[k].import;
			x[1][k] = c->s[k].schema;
			x[2][k] = c->s[k].cpu_pct;
			x[3][k] = c->s[k].load_mb;
			x[4][k] = c->s[k].load_cpu_pct;
		}
		for (int v = 0; v < 5; v++)
			stats_summarize(x[v], (size_t)n, &s[v]);
		c->mean = s[0].mean;
		c->sd = s[0].sd;
		c->min = s[0].min;
		c->max = s[0].max;
		c->cv = s[0].cv_pct;
		c->schema_mean = s[1].mean;
		c->cpu_mean = s[2].mean;
		c->load_mean = s[3].mean;
		c->lcpu_mean = s[4].mean;
	}
	for (int i = 0; i < m->ncell && m->oltp_clients; i++) {
		struct cell *c = &m->cell[i];
		double *v = malloc((c->oltp_n ? c->oltp_n : 1) * sizeof(*v));
		c->oltp.errors = c->oltp_errors;
		if (v) {
			memcpy(v, c->oltp_lat, c->oltp_n * sizeof(*v));
			pgl_oltp_figures(v, c->oltp_n, c->oltp_secs, &c->oltp);
			free(v);
		}
	}
	const struct cell *b = &m->cell[m->baseline];
	for (int i = 0; i < m->ncell; i++) {
		struct cell *c = &m->cell[i];
		c->ratio = b->mean > 0 ? c->mean / b->mean : 0;
		c->ratio_sd =
		    c->mean > 0 && b->mean > 0
			? c->ratio * sqrt(pow(c->sd / c->mean, 2) + pow(b->sd / b->mean, 2))
			: 0;
	}
}

uint64_t pgl_cmp_lat_ops(const struct pgl_io *io, int k)
{
	return io->v[k][PGL_IO_READ_OPS] + io->v[k][PGL_IO_WRITE_OPS] + io->v[k][PGL_IO_SYNC_OPS];
}

bool pgl_cmp_noisy(const struct cell *c)
{
	return c->ns > 1 && c->cv > CV_LIMIT_PCT;
}

const char *pgl_cmp_ratio_word(double r, double sd, bool lower_better)
{
	if (r <= 0)
		return "";
	/* Judged on the two decimals the reports print, so that a printed
	 * "1.12 ± 0.12" never reads "slower". */
	r = round(r * 100) / 100;
	sd = round(sd * 100) / 100;
	if (sd > 0 && fabs(r - 1) <= sd + 1e-9)
		return "within noise";
	return (r < 1) == lower_better ? "faster" : "slower";
}

/* disk_value() -- setting or counter NAME of pgdisk's stats STATS into OUT;
 * false if absent. */
static bool disk_value(const char *stats, const char *name, char *out, size_t cap)
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

/* disk_num() -- a numeric setting or counter of pgdisk's stats, or 0. */
static double disk_num(const char *stats, const char *name)
{
	char v[64];
	return disk_value(stats, name, v, sizeof(v)) ? strtod(v, NULL) : 0;
}

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

static const struct figure figures[] = {
    {"import", "s", false, FIG_IMPORT, 0},
    {"commit p50", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p50)},
    {"commit p99", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p99)},
    {"commit p99.9", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p999)},
    {"commit max", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, max)},
    {"tps", "", true, FIG_OLTP, offsetof(struct oltp_figures, tps)},
    {"device read", "MB/s", true, FIG_STREAM_DEV, 0},
    {"file read", "MB/s", true, FIG_STREAM_READ, 0},
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

/* oltp_value() -- member OFF of O, or -1 without transactions. */
static double oltp_value(const struct oltp_figures *o, size_t off)
{
	return o->tx ? *(const double *)((const char *)o + off) : -1;
}

/* fig_cell() -- FIG of cell C; < 0: the cell has no such figure. */
static double fig_cell(const struct figure *fig, const struct cell *c)
{
	switch (fig->src) {
	case FIG_IMPORT:
		return c->ns ? c->mean : -1;
	case FIG_OLTP:
		return oltp_value(&c->oltp, fig->off);
	case FIG_STREAM_DEV:
		return c->stream_dev;
	case FIG_STREAM_READ:
		return c->stream_read;
	}
	return -1;
}

/* fig_run() -- FIG of one run; < 0: none (a streaming figure is measured
 * once per cell, not per run). */
static double fig_run(const struct figure *fig, const struct sample *s)
{
	if (fig->src == FIG_IMPORT)
		return s->import;
	return fig->src == FIG_OLTP ? oltp_value(&s->oltp, fig->off) : -1;
}

/* Which cells best() looks at. */
enum side { ALL_CELLS, NATIVE_CELLS, PGIOFS_CELLS };

/* best() -- the best cell of figure F among the cells of SIDE and the
 * runner-up (-1: none). */
static int best(const struct cmp *m, const struct figure *fig, enum side side, int *second)
{
	int b = -1;
	*second = -1;
	for (int i = 0; i < m->ncell; i++) {
		double v = fig_cell(fig, &m->cell[i]);
		if (v < 0 || (side == NATIVE_CELLS && m->cell[i].profile) ||
		    (side == PGIOFS_CELLS && !m->cell[i].profile))
			continue;
		bool better_than_b = b < 0 || (fig->higher_better ? v > fig_cell(fig, &m->cell[b])
								  : v < fig_cell(fig, &m->cell[b]));
		if (better_than_b) {
			*second = b;
			b = i;
		} else if (*second < 0 ||
			   (fig->higher_better ? v > fig_cell(fig, &m->cell[*second])
					       : v < fig_cell(fig, &m->cell[*second]))) {
			*second = i;
		}
	}
	return b;
}

/* ratio() -- how far V is ahead of W in FIG's direction (>= 1 if it is). */
static double ratio(const struct figure *fig, double v, double w)
{
	if (fig->higher_better)
		return w > 0 ? v / w : 0;
	return v > 0 ? w / v : 0;
}

/* worst() -- the worst value of figure FIG among the cells having it, and
 * how many have it into *N. */
static double worst(const struct cmp *m, const struct figure *fig, int *n)
{
	double w = -1;
	*n = 0;
	for (int i = 0; i < m->ncell; i++) {
		double v = fig_cell(fig, &m->cell[i]);
		if (v < 0)
			continue;
		if (!(*n)++ || ratio(fig, w, v) > 1)
			w = v;
	}
	return w;
}

/* tied() -- whether V is less than TIE_PCT ahead of W. */
static bool tied(const struct figure *fig, double v, double w)
{
	return ratio(fig, v, w) < 1.0 + TIE_PCT / 100.0;
}

/* runs_overlap() -- whether a run of cell A was no better on FIG than a run
 * of cell B: then A's lead over B is within the spread of the runs, and
 * the report does not call it a win. */
static bool runs_overlap(const struct figure *fig, const struct cell *a, const struct cell *b)
{
	double worst_a = -1, best_b = -1;
	for (int i = 0; i < a->ns; i++) {
		double v = fig_run(fig, &a->s[i]);
		if (v >= 0 && (worst_a < 0 || ratio(fig, worst_a, v) > 1))
			worst_a = v;
	}
	for (int i = 0; i < b->ns; i++) {
		double v = fig_run(fig, &b->s[i]);
		if (v >= 0 && (best_b < 0 || ratio(fig, v, best_b) > 1))
			best_b = v;
	}
	return worst_a >= 0 && best_b >= 0 && ratio(fig, worst_a, best_b) <= 1;
}

/* Who wins a figure. */
struct verdict {
	int best, second; /* cells; second -1 if only one cell has the figure */
	double vb, vs;	  /* their values */
	double vlo, vhi;  /* the range of the cells' values */
	int n;		  /* cells having the figure */
	bool all_tied;	  /* every cell within TIE_PCT of the best: no winner */
	bool tie_next;	  /* the best within TIE_PCT of the second, or their runs overlap */
	bool overlap;	  /* their runs overlap */
};

/* judge() -- the verdict on figure FIG into V; false if fewer than two
 * cells have it. */
static bool judge(const struct cmp *m, const struct figure *fig, struct verdict *v)
{
	v->best = best(m, fig, ALL_CELLS, &v->second);
	if (v->best < 0 || v->second < 0)
		return false;
	v->vb = fig_cell(fig, &m->cell[v->best]);
	v->vs = fig_cell(fig, &m->cell[v->second]);
	double vw = worst(m, fig, &v->n);
	v->vlo = fig->higher_better ? vw : v->vb;
	v->vhi = fig->higher_better ? v->vb : vw;
	v->all_tied = tied(fig, v->vb, vw);
	v->overlap = runs_overlap(fig, &m->cell[v->best], &m->cell[v->second]);
	v->tie_next = tied(fig, v->vb, v->vs) || v->overlap;
	return true;
}

/* print_sides() -- the kernel against pgiofs: the best native cell of each
 * figure against the best pgiofs cell, under the same rule for a tie. */
static void print_sides(const struct cmp *m, FILE *f)
{
	bool header = false;
	for (size_t k = 0; k < NFIGURES; k++) {
		const struct figure *fig = &figures[k];
		int unused, kn = best(m, fig, NATIVE_CELLS, &unused);
		int kp = best(m, fig, PGIOFS_CELLS, &unused);
		if (kn < 0 || kp < 0)
			continue;
		if (!header)
			fprintf(f,
				"\nThe kernel against pgiofs (the best cell of each, the same rule "
				"for a tie; pgiofs's figure over the kernel's):\n");
		header = true;
		const struct cell *n = &m->cell[kn], *p = &m->cell[kp];
		double vn = fig_cell(fig, n), vp = fig_cell(fig, p);
		bool nwins = ratio(fig, vn, vp) >= 1;
		const struct cell *w = nwins ? n : p, *l = nwins ? p : n;
		double vw = nwins ? vn : vp, vl = nwins ? vp : vn;
		bool tie = tied(fig, vw, vl) || runs_overlap(fig, w, l);
		fprintf(f, "  %-13s %-7s pgiofs %.2fx the kernel: %.2f %s (%s) against %.2f (%s)\n",
			fig->name,
			tie	? "a tie"
			: nwins ? "kernel"
				: "pgiofs",
			vn > 0 ? vp / vn : 0, vp, fig->unit, p->label, vn, n->label);
	}
}

/*
 * print_figures() -- the verdict on every figure the cells have: the best
 * cell, its value, its figure over the next's and whether that is a tie;
 * or that every cell is within TIE_PCT of the best.  W >= 0: as rows of
 * the table, labels W wide; W < 0: as sentences, a line each.
 */
static void print_figures(const struct cmp *m, FILE *f, int w)
{
	for (size_t k = 0; k < NFIGURES; k++) {
		const struct figure *fig = &figures[k];
		struct verdict v;
		if (!judge(m, fig, &v))
			continue;
		const char *best = m->cell[v.best].label, *next = m->cell[v.second].label;
		double r = v.vs > 0 ? v.vb / v.vs : 0;
		if (v.all_tied && w >= 0)
			fprintf(f, "  %-13s all %d cells within %.0f %% (%.2f to %.2f %s)\n",
				fig->name, v.n, TIE_PCT, v.vlo, v.vhi, fig->unit);
		else if (v.all_tied)
			fprintf(f,
				"%s: no winner, all %d cells within %.0f %% (%.2f to %.2f %s).\n",
				fig->name, v.n, TIE_PCT, v.vlo, v.vhi, fig->unit);
		else if (w >= 0)
			fprintf(f, "  %-13s %-*s %10.2f %-4s %.2fx the next, %s%s\n", fig->name, w,
				best, v.vb, fig->unit, r, next,
				v.overlap    ? " (a tie: their runs overlap)"
				: v.tie_next ? " (a tie)"
					     : "");
		else
			fprintf(f, "%s: best %s, %.2f%s%s, %.2fx the next (%s)%s.\n", fig->name,
				best, v.vb, fig->unit[0] ? " " : "", fig->unit, r, next,
				v.overlap    ? ": a tie, their runs overlap"
				: v.tie_next ? ": a tie, less than " TIE_PCT_TEXT " ahead"
					     : "");
	}
}

/* print_best() -- the best cell of every figure the cells have; a figure
 * on which every cell is within TIE_PCT of the best names no cell. */
static void print_best(const struct cmp *m, FILE *f, int w)
{
	if (m->ncell < 2)
		return;
	fprintf(f,
		"\nBest of each figure (lowest, but tps and MB/s highest; the ratio is the best's "
		"figure over the next's; a tie when within %.0f %% of the next or when a run of "
		"the best was no better than one of the next):\n",
		TIE_PCT);
	print_figures(m, f, w);
	print_sides(m, f);
	/* the pgiofs cells against the native cell of the lowest commit p99 */
	int nat = -1;
	bool pgiofs = false;
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		pgiofs |= c->profile && c->oltp.tx;
		if (!c->profile && c->oltp.tx && (nat < 0 || c->oltp.p99 < m->cell[nat].oltp.p99))
			nat = i;
	}
	if (nat < 0 || !pgiofs)
		return;
	const struct cell *b = &m->cell[nat];
	fprintf(f, "\npgiofs cells against the native cell of the lowest commit p99 (%s):\n",
		b->label);
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (c->profile && c->oltp.tx && b->oltp.p99 > 0 && b->mean > 0)
			fprintf(f, "  %-*s commit p99 %5.2fx  import %5.2fx\n", w, c->label,
				c->oltp.p99 / b->oltp.p99, c->mean / b->mean);
	}
}

/* print_devices() -- streaming figures, queues and modelled disks. */
static void print_devices(const struct cmp *m, FILE *f, int w)
{
	bool stream = false, queue = false, disk = false;
	for (int i = 0; i < m->ncell; i++) {
		stream |= m->cell[i].stream_read >= 0;
		queue |= m->cell[i].has_queue;
		disk |= m->cell[i].disk_stats[0] != '\0';
	}
	if (stream) {
		fprintf(f,
			"\nStreaming, %d MiB before the runs (MB/s; device read as hdparm -t, "
			"file as dd and a write + fsync)\n",
			m->stream_mb);
		fprintf(f, "%-*s %12s %11s %10s\n", w, "Backend/profile", "device read",
			"file write", "file read");
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			if (c->stream_read < 0)
				continue;
			char dev[32] = "-";
			if (c->stream_dev >= 0)
				snprintf(dev, sizeof(dev), "%.1f", c->stream_dev);
			fprintf(f, "%-*s %12s %11.1f %10.1f\n", w, c->label, dev, c->stream_write,
				c->stream_read);
		}
	}
	if (queue) {
		fprintf(f, "\nBlock queues as read back (elevator, then its tunables and the "
			   "queue's)\n");
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			if (!c->has_queue)
				continue;
			fprintf(f, "%-*s %s", w, c->label, c->queue.elevator);
			for (int k = 0; k < c->queue.n; k++)
				fprintf(f, " %s=%s", c->queue.attr[k].name, c->queue.attr[k].value);
			fprintf(f, "\n");
		}
	}
	if (disk) {
		fprintf(f, "\nModelled disks (pgdisk): settings, and requests since the start "
			   "(mkfs, initdb and every run)\n");
		fprintf(f, "%-*s %-5s %6s %6s %5s %8s %9s %9s %9s %9s %8s\n", w, "Backend/profile",
			"model", "MB/s", "seek", "rpm", "track", "requests", "read MB", "write MB",
			"seek s", "held");
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			const char *st = c->disk_stats;
			char model[16];
			if (!st[0] || !disk_value(st, "model", model, sizeof(model)))
				continue;
			fprintf(
			    f,
			    "%-*s %-5s %6.1f %6.2f %5.0f %6.0f K %9.0f %9.1f %9.1f %9.2f %8.0f\n",
			    w, c->label, model, disk_num(st, "seq_mb_s"), disk_num(st, "seek_ms"),
			    disk_num(st, "rpm"), disk_num(st, "track_kb"),
			    disk_num(st, "completed"), disk_num(st, "read_bytes") / 1e6,
			    disk_num(st, "write_bytes") / 1e6, disk_num(st, "seek_ns") / 1e9,
			    disk_num(st, "held_max"));
		}
	}
}

/* join_cells() -- the labels of the cells of M but the baseline whose
 * ratio word is WORD, with their ratios, into F; how many. */
static int join_cells(const struct cmp *m, FILE *f, const char *word)
{
	int n = 0;
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (i == m->baseline || c->ratio <= 0 ||
		    strcmp(pgl_cmp_ratio_word(c->ratio, c->ratio_sd, true), word) != 0)
			continue;
		fprintf(f, "%s%s %.2f ± %.2f", n++ ? ", " : " ", c->label, c->ratio, c->ratio_sd);
	}
	return n;
}

/*
 * print_verdicts() -- one line per question a reader of the report asks:
 * what was compared; the best cell of each figure (or that all are
 * within TIE_PCT); which cells were faster, slower, or within noise of
 * the baseline (import time relative to the baseline's: within noise when
 * ratio ± its sd covers 1).  The page opens with them.
 */
static void print_verdicts(const struct cmp *m, FILE *f)
{
	fprintf(f, "Compared %d cell%s (back ends", m->ncell, m->ncell == 1 ? "" : "s");
	for (int i = 0; i < m->nbe; i++)
		fprintf(f, "%s %s", i ? "," : "", m->be[i].name);
	fprintf(f, "; profiles");
	for (int i = 0; i < m->nprofile; i++)
		fprintf(f, "%s %s", i ? "," : "", m->profile[i]);
	if (m->workload)
		fprintf(f, "), loading workload %s", m->workload);
	else
		fprintf(f, "), loading a generated workload (scale %g)", m->gen_scale);
	fprintf(f, " %d time%s each, interleaved; load %s%s; baseline %s.\n", m->runs,
		m->runs == 1 ? "" : "s", pgl_load_names[m->load],
		m->oltp_clients ? ", OLTP clients committing during the import" : "",
		m->cell[m->baseline].label);
	print_figures(m, f, -1);
	if (m->ncell < 2)
		return;
	static const char *const words[] = {"faster", "slower", "within noise"};
	for (size_t w = 0; w < 3; w++) {
		char *line = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&line, &len);
		if (!mem)
			return;
		int n = join_cells(m, mem, words[w]);
		fclose(mem);
		if (n)
			fprintf(f,
				"%s the baseline (import time relative to it, below 1 is "
				"faster):%s.\n",
				w == 0	 ? "Faster than"
				: w == 1 ? "Slower than"
					 : "Within noise of",
				line);
		free(line);
	}
}

static void print_table(const struct cmp *m, FILE *f)
{
	int w = 16;
	for (int i = 0; i < m->ncell; i++)
		if ((int)strlen(m->cell[i].label) > w)
			w = (int)strlen(m->cell[i].label);
	bool loads = m->load != LOAD_NONE, oltp = m->oltp_clients > 0, any_noisy = false;
	char wl[1100], ol[96] = "";
	if (m->workload)
		snprintf(wl, sizeof(wl), "%s", m->workload);
	else
		snprintf(wl, sizeof(wl), "generated (scale %g)", m->gen_scale);
	if (oltp)
		snprintf(ol, sizeof(ol), "; OLTP %d clients (scale %d) during the import",
			 m->oltp_clients, m->oltp_scale);
	fprintf(f,
		"pgload compare: %d run%s per cell, interleaved; workload %s; load %s%s%s%s; "
		"PostgreSQL %s\n\n",
		m->runs, m->runs == 1 ? "" : "s", wl, pgl_load_names[m->load], ol,
		m->device ? "; pgiofs device " : "", m->device ? m->device : "", m->server_version);
	fprintf(f, "%-*s %6s %9s %9s %7s %6s", w, "Backend/profile", "[runs]", "Schema(s)",
		"Import(s)", "±sd", "CPU%");
	if (loads)
		fprintf(f, " %9s %6s", "Loads(MB)", "LCPU%");
	if (oltp)
		fprintf(f, " %8s %8s %8s %8s %7s", "p50(ms)", "p99(ms)", "p99.9", "max(ms)", "tps");
	fprintf(f, " %6s\n", "Ratio");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		char runs[16];
		snprintf(runs, sizeof(runs), "[%d]", c->ns);
		fprintf(f, "%-*s %6s %9.2f %9.2f %7.2f %6.0f", w, c->label, runs, c->schema_mean,
			c->mean, c->sd, c->cpu_mean);
		if (loads)
			fprintf(f, " %9.0f %6.0f", c->load_mean, c->lcpu_mean);
		if (oltp)
			fprintf(f, " %8.2f %8.2f %8.2f %8.2f %7.1f", c->oltp.p50, c->oltp.p99,
				c->oltp.p999, c->oltp.max, c->oltp.tps);
		fprintf(f, " %6.2f%s%s\n", c->ratio, i == m->baseline ? " (baseline)" : "",
			pgl_cmp_noisy(c) ? " !" : "");
		any_noisy |= pgl_cmp_noisy(c);
	}
	fprintf(f, "Ratio: import time relative to the baseline's; below 1 is faster\n");
	if (any_noisy)
		fprintf(f, "! CV of the import time above %.0f %%: noisy, compare with care\n",
			CV_LIMIT_PCT);
	if (oltp)
		fprintf(f,
			"p50 ... tps: the OLTP clients' transactions that ended during the imports "
			"of all runs\n");
	fprintf(f, "\n");
	const struct cell *b = &m->cell[m->baseline];
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (i == m->baseline || c->mean <= 0 || b->mean <= 0)
			continue;
		fprintf(f, "%s took %.2f ± %.2f times the import time of %s: %s\n", c->words,
			c->ratio, c->ratio_sd, b->words,
			pgl_cmp_ratio_word(c->ratio, c->ratio_sd, true));
	}
	print_best(m, f, w);
	print_devices(m, f, w);
	bool any_lat = false;
	for (int i = 0; i < m->ncell; i++)
		any_lat |= m->cell[i].has_lat;
	if (!any_lat)
		return;
	fprintf(f, "\nLatency per class on pgiofs (since the mount: initdb and all runs; p99 from "
		   "pgiofs's histogram, to its two significant digits)\n");
	fprintf(f, "%-*s %-6s %10s %9s %9s %9s %8s %8s\n", w, "Backend/profile", "class", "ops",
		"Avg ms", "p99 ms", "Max ms", "Lat%>2s", "Lat%>10s");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (!c->has_lat)
			continue;
		for (int k = 0; k < PGL_IO_NCLASS; k++) {
			if (!pgl_cmp_lat_ops(&c->lat, k))
				continue;
			const double *l = c->lat.lat[k];
			char p99[24];
			stats_fmt_quantile_ms(p99, sizeof(p99), l[PGL_LAT_P99]);
			fprintf(f, "%-*s %-6s %10llu %9.3f %9s %9.2f %8.5f %8.5f\n", w, c->label,
				pgl_io_class_names[k],
				(unsigned long long)pgl_cmp_lat_ops(&c->lat, k), l[PGL_LAT_AVG],
				p99, l[PGL_LAT_MAX], l[PGL_LAT_OVER_2S], l[PGL_LAT_OVER_10S]);
		}
	}
}

/* json_str_or_null() -- S as a JSON string, or null if S is NULL. */
static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		json_str_write(f, s);
	else
		fprintf(f, "null");
}

/* json_value() -- V as a JSON number if it is one (sysfs and pgdisk values
 * mostly are), else as a string. */
static void json_value(FILE *f, const char *v)
{
	/* JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
	const char *p = v + (*v == '-');
	bool ok = isdigit((unsigned char)*p) && !(p[0] == '0' && isdigit((unsigned char)p[1]));
	while (ok && isdigit((unsigned char)*p))
		p++;
	if (ok && *p == '.') {
		ok = isdigit((unsigned char)*++p);
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (ok && (*p == 'e' || *p == 'E')) {
		p += p[1] == '+' || p[1] == '-' ? 2 : 1;
		ok = isdigit((unsigned char)*p);
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (ok && *p == '\0')
		fputs(v, f);
	else
		json_str_write(f, v);
}

/* json_sweeps() -- {NAME: [values]} of the sweeps of KIND. */
static void json_sweeps(const struct cmp *m, FILE *f, enum sweep_kind kind)
{
	bool first = true;
	fprintf(f, "{");
	for (int i = 0; i < m->nsets; i++) {
		if (m->sets[i].kind != kind)
			continue;
		fprintf(f, "%s", first ? "" : ", ");
		first = false;
		json_str_write(f, m->sets[i].name);
		fprintf(f, ": [");
		for (int v = 0; v < m->sets[i].nval; v++) {
			fprintf(f, "%s", v ? ", " : "");
			json_str_write(f, m->sets[i].val[v]);
		}
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

/* json_cell_sweeps() -- {NAME: value} of cell C's sweeps of KIND. */
static void json_cell_sweeps(const struct cmp *m, const struct cell *c, FILE *f,
			     enum sweep_kind kind)
{
	bool first = true;
	fprintf(f, "{");
	for (int k = 0; k < m->nsets; k++) {
		if (m->sets[k].kind != kind || !c->setv[k])
			continue;
		fprintf(f, "%s", first ? "" : ", ");
		first = false;
		json_str_write(f, m->sets[k].name);
		fprintf(f, ": ");
		json_str_write(f, c->setv[k]);
	}
	fprintf(f, "}");
}

/* json_list() -- N strings as a JSON array. */
static void json_list(FILE *f, const char *const *v, int n)
{
	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, v[i]);
	}
	fprintf(f, "]");
}

/* json_oltp() -- the figures of OLTP clients, or null. */
static void json_oltp(FILE *f, const struct cmp *m, const struct oltp_figures *o)
{
	if (!m->oltp_clients) {
		fprintf(f, "null");
		return;
	}
	fprintf(f,
		"{\"tx\": %llu, \"errors\": %llu, \"seconds\": %.6f, \"tps\": %.3f, "
		"\"p50_ms\": %.6f, \"p99_ms\": %.6f, \"p999_ms\": %.6f, \"max_ms\": %.6f}",
		(unsigned long long)o->tx, (unsigned long long)o->errors, o->secs, o->tps, o->p50,
		o->p99, o->p999, o->max);
}

/* json_stream_value() -- a streaming figure, or null if not measured. */
static void json_mb_s(FILE *f, const char *name, double v)
{
	fprintf(f, "\"%s\": ", name);
	if (v < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%.3f", v);
}

/* json_cell_devices() -- a cell's elevator, queue, modelled disk and streaming figures. */
static void json_cell_devices(FILE *f, const struct cell *c)
{
	fprintf(f, "     \"elevator\": ");
	json_str_or_null(f, c->elevator);
	fprintf(f, ", \"queue\": ");
	if (!c->has_queue) {
		fprintf(f, "null");
	} else {
		fprintf(f, "{\"device\": ");
		json_str_write(f, c->queue.device);
		fprintf(f, ", \"elevator\": ");
		json_str_write(f, c->queue.elevator);
		fprintf(f, ", \"tunables\": {");
		for (int k = 0; k < c->queue.n; k++) {
			fprintf(f, "%s", k ? ", " : "");
			json_str_write(f, c->queue.attr[k].name);
			fprintf(f, ": ");
			json_value(f, c->queue.attr[k].value);
		}
		fprintf(f, "}}");
	}
	fprintf(f, ",\n     \"disk\": ");
	if (!c->disk_stats[0]) {
		fprintf(f, "null");
	} else {
		/* pgdisk's "NAME VALUE" lines (docs/pgdisk.md), as they are */
		bool first = true;
		fprintf(f, "{");
		for (const char *l = c->disk_stats; *l;) {
			size_t len = strcspn(l, "\n");
			char line[256], *sp;
			snprintf(line, sizeof(line), "%.*s", (int)len, l);
			l += len + (l[len] == '\n');
			if (!(sp = strchr(line, ' ')) || strcmp(line, "pgdisk") == 0)
				continue;
			*sp = '\0';
			if (strncmp(line, "pgdisk", 6) == 0)
				continue;
			fprintf(f, "%s", first ? "" : ", ");
			first = false;
			json_str_write(f, line);
			fprintf(f, ": ");
			json_value(f, sp + 1);
		}
		fprintf(f, "}");
	}
	fprintf(f, ",\n     \"stream\": ");
	if (c->stream_read < 0) {
		fprintf(f, "null");
	} else {
		fprintf(f, "{");
		json_mb_s(f, "device_read_mb_s", c->stream_dev);
		fprintf(f, ", ");
		json_mb_s(f, "file_write_mb_s", c->stream_write);
		fprintf(f, ", ");
		json_mb_s(f, "file_read_mb_s", c->stream_read);
		fprintf(f, "}");
	}
	fprintf(f, ",\n");
}

/* json_best() -- ", "best": [...]": the verdict on every figure. */
static void json_best(FILE *f, const struct cmp *m)
{
	fprintf(f, ",\n  \"best\": [");
	const char *sep = "";
	for (size_t k = 0; k < NFIGURES; k++) {
		const struct figure *fig = &figures[k];
		struct verdict v;
		if (!judge(m, fig, &v))
			continue;
		fprintf(f, "%s\n    {\"figure\": ", sep);
		json_str_write(f, fig->name);
		fprintf(f, ", \"unit\": ");
		json_str_write(f, fig->unit);
		fprintf(f, ", \"cell\": ");
		json_str_or_null(f, v.all_tied ? NULL : m->cell[v.best].label);
		fprintf(f, ", \"value\": %.6g, \"next\": ", v.vb);
		json_str_write(f, m->cell[v.second].label);
		fprintf(f,
			", \"ratio\": %.4f, \"tie\": %s, \"runs_overlap\": %s, \"all_within\": %s}",
			v.vs > 0 ? v.vb / v.vs : 0, v.tie_next ? "true" : "false",
			v.overlap ? "true" : "false", v.all_tied ? "true" : "false");
		sep = ",";
	}
	fprintf(f, "\n  ]");
}

static int write_json(const struct cmp *m, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "{\n  \"schema\": \"" COMPARE_SCHEMA "\",\n  \"started\": ");
	json_str_write(f, m->started);
	fprintf(f, ",\n  \"seconds\": %.3f,\n  \"kernel\": ", m->seconds);
	json_str_write(f, m->kernel);
	fprintf(f, ",\n  \"server_version\": ");
	json_str_write(f, m->server_version);
	fprintf(f, ", \"server_version_num\": %d, \"cpus\": %ld,\n  \"pgload_version\": ",
		m->server_version_num, m->ncpu);
	json_str_write(f, "pgload " PGIOFS_RELEASE);
	fprintf(f, ", \"pgiofs_version\": ");
	json_str_or_null(f, m->pgiofs_version[0] ? m->pgiofs_version : NULL);
	fprintf(f, ", \"git_commit\": ");
	json_str_write(f, PGL_GIT_COMMIT);
	fprintf(f, ",\n  \"settings\": {\n    \"workload\": ");
	json_str_or_null(f, m->workload);
	if (m->gen_scale > 0)
		fprintf(f, ",\n    \"gen_scale\": %g", m->gen_scale);
	else
		fprintf(f, ",\n    \"gen_scale\": null");
	fprintf(f, ",\n    \"files\": {");
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		fprintf(f, "%s\"%s\": ", ph ? ", " : "", pgl_phase_names[ph]);
		json_str_or_null(f, m->files[ph][0] ? m->files[ph] : NULL);
	}
	fprintf(f, "},\n    \"runs\": %d, \"jobs\": %d, \"load\": \"%s\", \"device\": ", m->runs,
		m->jobs, pgl_load_names[m->load]);
	json_str_write(f, m->device ? m->device : "none");
	fprintf(f, ", \"size_bytes\": %llu,\n    \"backends\": [", (unsigned long long)m->size);
	for (int i = 0; i < m->nbe; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, m->be_arg[i]);
	}
	fprintf(f, "],\n    \"profiles\": [");
	for (int i = 0; i < m->nprofile; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, m->profile[i]);
	}
	fprintf(f, "],\n    \"sets\": ");
	json_sweeps(m, f, SWEEP_PGIOFS);
	fprintf(f, ",\n    \"elevators\": ");
	json_list(f, m->elevators, m->nelevators);
	fprintf(f, ", \"pgiofs_elevators\": ");
	json_list(f, m->pgiofs_elevators, m->npgiofs_elevators);
	fprintf(f, ",\n    \"queue_sets\": ");
	json_sweeps(m, f, SWEEP_QUEUE);
	fprintf(f, ", \"disk_sets\": ");
	json_sweeps(m, f, SWEEP_DISK);
	fprintf(f, ",\n    \"oltp\": ");
	if (m->oltp_clients)
		fprintf(f, "{\"clients\": %d, \"scale\": %d}", m->oltp_clients, m->oltp_scale);
	else
		fprintf(f, "null");
	fprintf(f, ", \"stream_mb\": %d", m->stream_mb);
	fprintf(f, ",\n    \"cv_limit_pct\": %.1f\n  },\n  \"baseline\": ", CV_LIMIT_PCT);
	json_str_write(f, m->cell[m->baseline].label);
	json_best(f, m);
	fprintf(f, ",\n  \"cells\": [\n");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		fprintf(f, "    {\"label\": ");
		json_str_write(f, c->label);
		fprintf(f, ", \"backend\": ");
		json_str_write(f, c->spec->name);
		fprintf(f, ", \"backend_path\": ");
		json_str_or_null(f, c->spec->path);
		fprintf(f, ", \"profile\": ");
		json_str_write(f, c->profile ? c->profile : "native");
		fprintf(f, ", \"pgiofs\": %s, \"set\": ", c->profile ? "true" : "false");
		json_cell_sweeps(m, c, f, SWEEP_PGIOFS);
		fprintf(f, ",\n     \"queue_set\": ");
		json_cell_sweeps(m, c, f, SWEEP_QUEUE);
		fprintf(f, ", \"disk_set\": ");
		json_cell_sweeps(m, c, f, SWEEP_DISK);
		fprintf(f, ",\n");
		json_cell_devices(f, c);
		fprintf(f, "     \"oltp\": ");
		json_oltp(f, m, &c->oltp);
		fprintf(f,
			",\n     \"runs\": %d, \"import_s\": {\"mean\": %.6f, \"sd\": %.6f, "
			"\"min\": %.6f, \"max\": %.6f, \"cv_pct\": %.3f},\n",
			c->ns, c->mean, c->sd, c->min, c->max, c->cv);
		fprintf(
		    f,
		    "     \"schema_s\": %.6f, \"cpu_pct\": %.2f, \"load_mb\": %.3f, "
		    "\"load_cpu_pct\": %.2f, \"ratio\": %.6f, \"ratio_sd\": %.6f, \"noisy\": %s,\n",
		    c->schema_mean, c->cpu_mean, c->load_mean, c->lcpu_mean, c->ratio, c->ratio_sd,
		    pgl_cmp_noisy(c) ? "true" : "false");
		fprintf(f, "     \"samples\": [");
		for (int k = 0; k < c->ns; k++) {
			const struct sample *s = &c->s[k];
			fprintf(f,
				"%s\n       {\"round\": %d, \"schema_s\": %.6f, \"data_s\": %.6f, "
				"\"post_s\": %.6f, \"import_s\": %.6f, \"cpu_pct\": %.2f, "
				"\"load_mb\": %.3f, \"load_cpu_pct\": %.2f, \"wal_bytes\": %llu, "
				"\"rows\": %llu, \"oltp\": ",
				k ? "," : "", s->round, s->schema, s->data, s->post, s->import,
				s->cpu_pct, s->load_mb, s->load_cpu_pct, (unsigned long long)s->wal,
				(unsigned long long)s->rows);
			json_oltp(f, m, &s->oltp);
			fprintf(f, "}");
		}
		fprintf(f, "],\n     \"latency\": ");
		if (!c->has_lat) {
			fprintf(f, "null");
		} else {
			fprintf(f, "{");
			for (int k = 0; k < PGL_IO_NCLASS; k++) {
				const double *l = c->lat.lat[k];
				fprintf(
				    f,
				    "%s\n       \"%s\": {\"ops\": %llu, \"avg_ms\": %.6f, "
				    "\"p99_ms\": %.6f, \"max_ms\": %.6f, \"over_2s_pct\": %.5f, "
				    "\"over_10s_pct\": %.5f}",
				    k ? "," : "", pgl_io_class_names[k],
				    (unsigned long long)pgl_cmp_lat_ops(&c->lat, k), l[PGL_LAT_AVG],
				    l[PGL_LAT_P99], l[PGL_LAT_MAX], l[PGL_LAT_OVER_2S],
				    l[PGL_LAT_OVER_10S]);
			}
			fprintf(f, "}");
		}
		fprintf(f, "}%s\n", i + 1 < m->ncell ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f) == 0 ? 0 : -EIO;
}

/* cell_sweeps() -- C's values of the sweeps of KIND, "NAME=VALUE ...", into BUF. */
static void cell_sweeps(const struct cmp *m, const struct cell *c, enum sweep_kind kind, char *buf,
			size_t cap)
{
	buf[0] = '\0';
	for (int k = 0; k < m->nsets; k++) {
		size_t l = strlen(buf);
		if (m->sets[k].kind == kind && c->setv[k])
			snprintf(buf + l, cap - l, "%s%s=%s", l ? " " : "", m->sets[k].name,
				 c->setv[k]);
	}
}

static int write_csv(const struct cmp *m, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "cell,backend,profile,set,round,schema_s,data_s,post_s,import_s,cpu_pct,load_mb,"
		   "load_cpu_pct,wal_bytes,rows,elevator,queue_set,disk_set,oltp_tx,oltp_errors,"
		   "oltp_tps,oltp_p50_ms,oltp_p99_ms,oltp_p999_ms,oltp_max_ms\n");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		char set[256], qset[256], dset[256];
		cell_sweeps(m, c, SWEEP_PGIOFS, set, sizeof(set));
		cell_sweeps(m, c, SWEEP_QUEUE, qset, sizeof(qset));
		cell_sweeps(m, c, SWEEP_DISK, dset, sizeof(dset));
		for (int k = 0; k < c->ns; k++) {
			const struct sample *s = &c->s[k];
			pgl_csv_field(f, c->label);
			fputc(',', f);
			pgl_csv_field(f, c->spec->name);
			fprintf(f, ",%s,", c->profile ? c->profile : "native");
			pgl_csv_field(f, set);
			fprintf(f, ",%d,%.6f,%.6f,%.6f,%.6f,%.2f,%.3f,%.2f,%llu,%llu,%s,", s->round,
				s->schema, s->data, s->post, s->import, s->cpu_pct, s->load_mb,
				s->load_cpu_pct, (unsigned long long)s->wal,
				(unsigned long long)s->rows, c->has_queue ? c->queue.elevator : "");
			pgl_csv_field(f, qset);
			fputc(',', f);
			pgl_csv_field(f, dset);
			if (m->oltp_clients)
				fprintf(f, ",%llu,%llu,%.3f,%.6f,%.6f,%.6f,%.6f\n",
					(unsigned long long)s->oltp.tx,
					(unsigned long long)s->oltp.errors, s->oltp.tps,
					s->oltp.p50, s->oltp.p99, s->oltp.p999, s->oltp.max);
			else
				fprintf(f, ",,,,,,,\n");
		}
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

void pgl_cmp_print_table(const struct cmp *m, FILE *f)
{
	print_table(m, f);
}

void pgl_cmp_print_verdicts(const struct cmp *m, FILE *f)
{
	print_verdicts(m, f);
}

int pgl_cmp_report(struct cmp *m)
{
	char *table = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&table, &len);
	if (!mem)
		return -ENOMEM;
	print_table(m, mem);
	fclose(mem);
	fputs(table, stdout);
	fflush(stdout);
	char path[4200];
	int ret = 0;
	snprintf(path, sizeof(path), "%s/table.txt", m->out);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(table, f);
		if (fclose(f) != 0)
			ret = -EIO;
	} else {
		ret = -errno;
	}
	free(table);
	snprintf(path, sizeof(path), "%s/results.json", m->out);
	if (ret == 0)
		ret = write_json(m, path);
	snprintf(path, sizeof(path), "%s/results.csv", m->out);
	if (ret == 0)
		ret = write_csv(m, path);
	if (ret < 0)
		fprintf(stderr, "pgload compare: could not write the report in \"%s\": %s\n",
			m->out, strerror(-ret));
	return ret;
}
