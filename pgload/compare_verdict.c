/*
 * compare_verdict.c -- how `pgload compare` judges its cells: per cell the
 * mean, sd, CV, min and max of the import time and its ratio to the
 * baseline cell (with --oltp the commit latency and tps of the clients
 * over all runs); the figures the report names a best cell of, who wins
 * each and whether the lead is a tie; the kernel's best cell against
 * pgiofs's; and the verdict lines that open the page (compare_html.c).
 * The tables that print these are in compare_table.c, the files of the
 * report in compare_report.c.
 *
 * What must stay true: a cell whose import time varies by more than
 * CV_LIMIT_PCT is flagged noisy wherever it is shown; every ratio is a
 * figure over its reference's (the baseline's, the next cell's, the
 * kernel's), and its word (faster, slower, within noise) agrees with it;
 * a lead that a run of the runner-up matched is never called a win.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"
#include "stats.h"

#define TIE_PCT	     5.0 /* a best cell less than this ahead of the next is a tie */
#define TIE_PCT_TEXT "5 %"

/* pool_figures() -- the figures of every latency of POOL into *F. */
static void pool_figures(const struct lat_pool *pool, struct oltp_figures *f)
{
	double *v = malloc((pool->n ? pool->n : 1) * sizeof(*v));
	memset(f, 0, sizeof(*f));
	f->errors = pool->errors;
	if (!v)
		return;
	if (pool->n)
		memcpy(v, pool->v, pool->n * sizeof(*v));
	pgl_oltp_figures(v, pool->n, pool->secs, f);
	free(v);
}

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
		pool_figures(&m->cell[i].oltp_pool, &m->cell[i].oltp);
		pool_figures(&m->cell[i].floor_pool, &m->cell[i].floor);
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

int pgl_cmp_timeline_run(const struct cell *c)
{
	int r = -1;
	for (int k = 0; k < c->ns; k++)
		if (c->s[k].tl.nsec && (r < 0 || c->s[k].oltp.max > c->s[r].oltp.max))
			r = k;
	return r;
}

bool pgl_cmp_stream_cached(const struct cell *c)
{
	return c->stream_read >= 0 &&
	       (c->stream_resident_pct > STREAM_CACHED_PCT ||
		(c->stream_dev > 0 && c->stream_read > STREAM_CACHED_RATIO * c->stream_dev));
}

const char *pgl_cmp_profile_name(const struct cell *c)
{
	return c->profile ? c->profile : c->walfloor ? "walonly" : "native";
}

const struct cell *pgl_cmp_wal_floor_of(const struct cmp *m, const struct cell *c)
{
	if (c->walfloor || !c->oltp.tx)
		return NULL;
	for (int i = 0; i < m->ncell; i++)
		if (m->cell[i].walfloor && m->cell[i].spec == c->spec && m->cell[i].oltp.tx)
			return &m->cell[i];
	return NULL;
}

bool pgl_cmp_noisy(const struct cell *c)
{
	return c->ns > 1 && c->cv > CV_LIMIT_PCT;
}

const struct figure pgl_cmp_figures[] = {
    {"import", "s", false, FIG_IMPORT, 0},
    {"commit p50", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p50)},
    {"commit p99", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p99)},
    {"commit p99.9", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, p999)},
    {"commit max", "ms", false, FIG_OLTP, offsetof(struct oltp_figures, max)},
    {"tps", "", true, FIG_OLTP, offsetof(struct oltp_figures, tps)},
    {"device read", "MB/s", true, FIG_STREAM_DEV, 0},
    {"file read", "MB/s", true, FIG_STREAM_READ, 0},
};
const size_t pgl_cmp_nfigures = sizeof(pgl_cmp_figures) / sizeof(pgl_cmp_figures[0]);

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
		return pgl_cmp_stream_cached(c) ? -1 : c->stream_read;
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
		if (v < 0 || m->cell[i].walfloor || (side == NATIVE_CELLS && m->cell[i].profile) ||
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
		if (v < 0 || m->cell[i].walfloor)
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

/* range() -- the lowest and highest of C's runs on FIG into *LO, *HI; how
 * many runs have it (0 for a figure measured once per cell). */
static int range(const struct figure *fig, const struct cell *c, double *lo, double *hi)
{
	int n = 0;
	*lo = *hi = -1;
	for (int i = 0; i < c->ns; i++) {
		double v = fig_run(fig, &c->s[i]);
		if (v < 0)
			continue;
		*lo = !n || v < *lo ? v : *lo;
		*hi = !n || v > *hi ? v : *hi;
		n++;
	}
	return n;
}

void pgl_cmp_separate(const struct figure *fig, const struct cell *a, const struct cell *b,
		      struct separation *s)
{
	memset(s, 0, sizeof(*s));
	s->na = range(fig, a, &s->alo, &s->ahi);
	s->nb = range(fig, b, &s->blo, &s->bhi);
	/* measured once per cell: no spread to judge by, the values alone */
	if (!s->na || !s->nb) {
		s->na = s->nb = 0;
		s->alo = s->ahi = fig_cell(fig, a);
		s->blo = s->bhi = fig_cell(fig, b);
	}
	s->apart = s->ahi < s->blo || s->bhi < s->alo;
}

void pgl_cmp_fmt_separation(const struct figure *fig, const struct separation *s, char *buf,
			    size_t cap)
{
	char runs[48];
	if (!s->na) {
		snprintf(buf, cap, "measured once each");
		return;
	}
	if (s->na == s->nb)
		snprintf(runs, sizeof(runs), "%d run%s each", s->na, s->na == 1 ? "" : "s");
	else
		snprintf(runs, sizeof(runs), "%d and %d runs", s->na, s->nb);
	snprintf(buf, cap, "%s, %.2f to %.2f against %.2f to %.2f%s%s", runs, s->alo, s->ahi,
		 s->blo, s->bhi, fig->unit[0] ? " " : "", fig->unit);
}

const char *pgl_cmp_vs_word(const struct separation *s, double r, bool lower_better)
{
	if (r <= 0)
		return "";
	if (!s->apart)
		return "not separated";
	return (r < 1) == lower_better ? "faster" : "slower";
}

/* cell_vs_baseline() -- C against the baseline on the import time: the
 * separation into *S and its word. */
static const char *cell_vs_baseline(const struct cmp *m, const struct cell *c, struct separation *s)
{
	pgl_cmp_separate(&pgl_cmp_figures[0], c, &m->cell[m->baseline], s);
	return pgl_cmp_vs_word(s, c->ratio, true);
}

bool pgl_cmp_judge(const struct cmp *m, const struct figure *fig, struct verdict *v)
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
	pgl_cmp_separate(fig, &m->cell[v->best], &m->cell[v->second], &v->sep);
	v->overlap = !v->sep.apart;
	v->tie_next = tied(fig, v->vb, v->vs) || v->overlap;
	return true;
}

/* print_sides() -- the kernel against pgiofs: the best native cell of each
 * figure against the best pgiofs cell, under the same rule for a tie. */
static void print_sides(const struct cmp *m, FILE *f)
{
	bool header = false;
	for (size_t k = 0; k < pgl_cmp_nfigures; k++) {
		const struct figure *fig = &pgl_cmp_figures[k];
		int unused, kn = best(m, fig, NATIVE_CELLS, &unused);
		int kp = best(m, fig, PGIOFS_CELLS, &unused);
		if (kn < 0 || kp < 0)
			continue;
		if (!header)
			fprintf(f,
				"\nThe kernel against pgiofs (the best cell of each, the same rule "
				"for a tie or runs not separated; pgiofs's figure over the "
				"kernel's; pgiofs's runs against the kernel's):\n");
		header = true;
		const struct cell *n = &m->cell[kn], *p = &m->cell[kp];
		double vn = fig_cell(fig, n), vp = fig_cell(fig, p);
		bool nwins = ratio(fig, vn, vp) >= 1;
		double vw = nwins ? vn : vp, vl = nwins ? vp : vn;
		struct separation sep;
		char how[160];
		pgl_cmp_separate(fig, p, n, &sep);
		pgl_cmp_fmt_separation(fig, &sep, how, sizeof(how));
		fprintf(f,
			"  %-13s %-13s pgiofs %.2fx the kernel: %.2f %s (%s) against %.2f (%s); "
			"%s\n",
			fig->name,
			tied(fig, vw, vl) ? "a tie"
			: !sep.apart	  ? "not separated"
			: nwins		  ? "kernel"
					  : "pgiofs",
			vn > 0 ? vp / vn : 0, vp, fig->unit, p->label, vn, n->label, how);
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
	for (size_t k = 0; k < pgl_cmp_nfigures; k++) {
		const struct figure *fig = &pgl_cmp_figures[k];
		struct verdict v;
		if (!pgl_cmp_judge(m, fig, &v))
			continue;
		const char *best = m->cell[v.best].label, *next = m->cell[v.second].label;
		double r = v.vs > 0 ? v.vb / v.vs : 0;
		char how[160];
		pgl_cmp_fmt_separation(fig, &v.sep, how, sizeof(how));
		if (v.all_tied && w >= 0)
			fprintf(f, "  %-13s all %d cells within %.0f %% (%.2f to %.2f %s)\n",
				fig->name, v.n, TIE_PCT, v.vlo, v.vhi, fig->unit);
		else if (v.all_tied)
			fprintf(f,
				"%s: no winner, all %d cells within %.0f %% (%.2f to %.2f %s).\n",
				fig->name, v.n, TIE_PCT, v.vlo, v.vhi, fig->unit);
		else if (w >= 0)
			fprintf(f, "  %-13s %-*s %10.2f %-4s %.2fx the next, %s (%s%s)\n",
				fig->name, w, best, v.vb, fig->unit, r, next,
				v.overlap    ? "not separated: "
				: v.tie_next ? "a tie: "
					     : "",
				how);
		else
			fprintf(f, "%s: best %s, %.2f%s%s, %.2fx the next (%s)%s (%s).\n",
				fig->name, best, v.vb, fig->unit[0] ? " " : "", fig->unit, r, next,
				v.overlap    ? ": not separated"
				: v.tie_next ? ": a tie, less than " TIE_PCT_TEXT " ahead"
					     : "",
				how);
	}
}

void pgl_cmp_print_best(const struct cmp *m, FILE *f, int w)
{
	if (m->ncell < 2)
		return;
	fprintf(f,
		"\nBest of each figure (lowest, but tps and MB/s highest; the ratio is the best's "
		"figure over the next's; a tie when within %.0f %% of the next, not separated "
		"when the ranges of their runs overlap; then the runs, the best's range against "
		"the next's):\n",
		TIE_PCT);
	print_figures(m, f, w);
	print_sides(m, f);
	/* the pgiofs cells against the native cell of the lowest commit p99 */
	int nat = -1;
	bool pgiofs = false;
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		pgiofs |= c->profile && c->oltp.tx;
		if (!c->profile && !c->walfloor && c->oltp.tx &&
		    (nat < 0 || c->oltp.p99 < m->cell[nat].oltp.p99))
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

/* join_cells() -- the labels of the cells of M but the baseline whose word
 * against it is WORD, with their ratios, into F; how many. */
static int join_cells(const struct cmp *m, FILE *f, const char *word)
{
	int n = 0;
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		struct separation sep;
		if (i == m->baseline || c->ratio <= 0 || c->walfloor ||
		    strcmp(cell_vs_baseline(m, c, &sep), word) != 0)
			continue;
		fprintf(f, "%s%s %.2f ± %.2f", n++ ? ", " : " ", c->label, c->ratio, c->ratio_sd);
	}
	return n;
}

void pgl_cmp_print_vs_baseline(const struct cmp *m, FILE *f)
{
	const struct cell *b = &m->cell[m->baseline];
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		struct separation sep;
		char how[160];
		if (i == m->baseline || c->mean <= 0 || b->mean <= 0 || c->walfloor)
			continue;
		const char *word = cell_vs_baseline(m, c, &sep);
		pgl_cmp_fmt_separation(&pgl_cmp_figures[0], &sep, how, sizeof(how));
		fprintf(f, "%s took %.2f ± %.2f times the import time of %s: %s (%s)\n", c->words,
			c->ratio, c->ratio_sd, b->words, word, how);
	}
}

const char *pgl_cmp_baseline_word(const struct cmp *m, const struct cell *c)
{
	struct separation sep;
	return cell_vs_baseline(m, c, &sep);
}

/*
 * pgl_cmp_print_verdicts() -- one line per question a reader of the report
 * asks: what was compared; the best cell of each figure (or that all are
 * within TIE_PCT); which cells were faster or slower than the baseline
 * and which were not separated from it (the ranges of their import times
 * over the runs overlap).  The page opens with them.
 */
void pgl_cmp_print_verdicts(const struct cmp *m, FILE *f)
{
	fprintf(f, "Compared %d cell%s (back ends", m->ncell, m->ncell == 1 ? "" : "s");
	for (int i = 0; i < m->nbe; i++)
		fprintf(f, "%s %s", i ? "," : "", m->be[i].name);
	fprintf(f, "; profiles");
	for (int i = 0; i < m->nprofile; i++)
		fprintf(f, "%s %s", i ? "," : "", m->profile[i]);
	if (m->wal_floor)
		fprintf(f, "; and the WAL-alone floor of each back end");
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
	static const char *const words[] = {"faster", "slower", "not separated"};
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
				"faster; %s):%s.\n",
				w == 0	 ? "Faster than"
				: w == 1 ? "Slower than"
					 : "Not separated from",
				w < 2 ? "every run of theirs apart from every run of the baseline"
				      : "the ranges of their runs overlap the baseline's",
				line);
		free(line);
	}
}
