/*
 * compare_tlchart.c -- the charts of `pgload compare` over the time of an
 * import: for each cell, the run with the slowest commit, second by second
 * (timeline.c): the commits' p99 and max (log scale), how many ended (grey
 * bars), the checkpoints as bands (from the server log), the WAL segments
 * created as marks at the top (their zero-fill, from pg_wal), the start of
 * the post phase as a dashed line.  A stall shows where it happens: a
 * second without commits (no bar), then the max of those that waited
 * through it, under the checkpoint or beside the segment that held them.
 *
 * What must stay true: every panel has the same time axis and the same
 * latency axis, so that cells compare at a glance; what is drawn is what
 * the table and results.json say of the same run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare_i.h"

#define TL_W	    1000
#define TL_LEFT	    70 /* the latency axis's ticks */
#define TL_RIGHT    20
#define TL_TOP	    70	/* title and legend */
#define TL_PANEL    150 /* a cell's panel */
#define TL_GAP	    34	/* its label above it */
#define TL_BOTTOM   40	/* the time axis */
#define COLOUR_P99  "#f28e2b"
#define COLOUR_MAX  "#e15759"
#define COLOUR_TX   "#cfcfcf"
#define COLOUR_CKPT "#dce9f9"
#define COLOUR_SEG  "#8e44ad"

/* One panel: the timeline of a cell's run. */
struct panel {
	const struct cell *c;
	const struct timeline *tl;
	int round;
};

/* pos() -- where second T of a run goes on the time axis AX (its x0, w, hi). */
static double pos(const struct pgl_axis *ax, double t)
{
	t = t < 0 ? 0 : t > ax->hi ? ax->hi : t;
	return ax->x0 + ax->w * t / ax->hi;
}

/* draw_panel() -- panel P at TOP: its bands, bars, lines and marks. */
static void draw_panel(FILE *f, const struct panel *p, double top, const struct pgl_axis *tx,
		       const struct pgl_axis *la, double maxtx)
{
	const struct timeline *tl = p->tl;
	double h = TL_PANEL, x1 = pos(tx, tl->secs);
	fprintf(f, "<g class=\"panel\">\n<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">", TL_LEFT,
		top - 8);
	pgl_svg_text(f, p->c->label);
	fprintf(f,
		"</text><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">run %d, "
		"import %.1f s</text>\n",
		TL_W - TL_RIGHT, top - 8, p->round, tl->secs);
	fprintf(f,
		"<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#999\"/>\n",
		TL_LEFT, top, tx->w, h);
	for (int i = 0; i < tl->nckpt; i++) {
		const struct tl_span *x = &tl->ckpt[i];
		double a = pos(tx, x->start), b = pos(tx, x->end < 0 ? tl->secs : x->end);
		fprintf(f,
			"<rect class=\"checkpoint\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"" COLOUR_CKPT "\"><title>checkpoint (%s) %.1f to ",
			a, top, b - a > 1 ? b - a : 1, h, x->what[0] ? x->what : "?", x->start);
		if (x->end < 0)
			fprintf(f, "the end");
		else
			fprintf(f, "%.1f s, write %.1f s, sync %.1f s", x->end, x->write_s,
				x->sync_s);
		fprintf(f,
			"</title></rect>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
			"fill=\"#36c\">checkpoint</text>\n",
			a + 2, top + h - 4);
	}
	/* the commits of each second, scaled to the busiest second of all */
	for (int k = 0; k < tl->nsec && maxtx > 0; k++) {
		double bh = 0.35 * h * tl->sec[k].tx / maxtx;
		double a = pos(tx, k), b = pos(tx, k + 1 < tl->secs ? k + 1 : tl->secs);
		if (tl->sec[k].tx)
			fprintf(f,
				"<rect class=\"commits\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"" COLOUR_TX
				"\"><title>%d-%d s: %u commits, "
				"p99 %.1f ms, max %.1f ms</title></rect>\n",
				a + 0.5, top + h - bh, b - a > 1.5 ? b - a - 1 : 0.5, bh, k, k + 1,
				tl->sec[k].tx, tl->sec[k].p99, tl->sec[k].max);
	}
	/* p99 as a line, max as dots, at the middle of each second */
	for (int s = 0; s < 2; s++) {
		fprintf(f,
			"<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
			"points=\"",
			s ? "max" : "p99", s ? COLOUR_MAX : COLOUR_P99, s ? "1" : "2");
		for (int k = 0; k < tl->nsec; k++) {
			double v = s ? tl->sec[k].max : tl->sec[k].p99;
			if (tl->sec[k].tx)
				fprintf(f, "%.1f,%.1f ", pos(tx, k + 0.5),
					pgl_axis_y(la, v, top, h));
		}
		fprintf(f, "\"/>\n");
	}
	for (int k = 0; k < tl->nsec; k++)
		if (tl->sec[k].tx)
			fprintf(f,
				"<circle class=\"max\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
				"fill=\"" COLOUR_MAX "\"/>\n",
				pos(tx, k + 0.5), pgl_axis_y(la, tl->sec[k].max, top, h));
	for (int i = 0; i < tl->nseg; i++) {
		const struct tl_span *x = &tl->seg[i];
		double a = pos(tx, x->start), b = pos(tx, x->end < 0 ? tl->secs : x->end);
		fprintf(f,
			"<rect class=\"segment\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"7\" "
			"fill=\"" COLOUR_SEG
			"\"><title>WAL segment created %.2f to %.2f s</title></rect>\n",
			a, top + 1, b - a > 2 ? b - a : 2, x->start,
			x->end < 0 ? tl->secs : x->end);
	}
	if (tl->post_start >= 0) {
		double x = pos(tx, tl->post_start);
		fprintf(f,
			"<line class=\"post\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#333\" stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%.1f\" "
			"font-size=\"10\">post</text>\n",
			x, top, x, top + h, x + 3, top + 18);
	}
	if (x1 < tx->x0 + tx->w) /* the import ended before the longest one */
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"#f4f4f4\"/>\n",
			x1, top, tx->x0 + tx->w - x1, h);
	/* the latency axis's ticks */
	fprintf(f, "<g font-size=\"10\" text-anchor=\"end\" fill=\"#555\">\n");
	for (double t = la->lo; t <= la->hi * 1.0001; t *= 10) {
		char v[32];
		pgl_svg_fmt(v, sizeof(v), t);
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%.1f\">%s ms</text>\n",
			TL_LEFT, pgl_axis_y(la, t, top, h), tx->x0 + tx->w,
			pgl_axis_y(la, t, top, h), TL_LEFT - 4, pgl_axis_y(la, t, top, h) + 3, v);
	}
	fprintf(f, "</g>\n</g>\n");
}

int pgl_cmp_timeline_svg(FILE *f, const struct cmp *m)
{
	struct panel p[MAX_CELLS];
	int n = 0;
	double secs = 0, lo = -1, hi = -1, maxtx = 0;
	for (int i = 0; i < m->ncell; i++) {
		int r = pgl_cmp_timeline_run(&m->cell[i]);
		if (r < 0)
			continue;
		p[n] = (struct panel){&m->cell[i], &m->cell[i].s[r].tl, m->cell[i].s[r].round};
		const struct timeline *tl = p[n++].tl;
		secs = tl->secs > secs ? tl->secs : secs;
		for (int k = 0; k < tl->nsec; k++) {
			const struct tl_second *x = &tl->sec[k];
			if (!x->tx)
				continue;
			lo = lo < 0 || x->p99 < lo ? x->p99 : lo;
			hi = x->max > hi ? x->max : hi;
			maxtx = x->tx > maxtx ? x->tx : maxtx;
		}
	}
	if (!n)
		return 0;
	struct pgl_axis tx = {.x0 = TL_LEFT, .w = TL_W - TL_LEFT - TL_RIGHT};
	struct pgl_axis la = {.log = true};
	pgl_axis_fit(&tx, 1, secs > 0 ? secs : 1);
	tx.hi = secs > 0 ? secs : 1; /* the axis ends with the longest import */
	pgl_axis_fit(&la, lo > 0 ? lo : 1, hi > 0 ? hi : 10);
	double h = TL_TOP + n * (TL_PANEL + TL_GAP) + TL_BOTTOM;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"timeline\" class=\"chart\" "
		"viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\" role=\"img\">\n<title>Commit latency over the import</title>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Commit latency over "
		"the import, second by second (each cell's run with the slowest commit)</text>\n",
		TL_W, h, TL_W, h);
	double lx = 8, ly = 46;
	pgl_svg_legend(f, &lx, ly, "line:" COLOUR_P99, false, "p99 of the second's commits");
	pgl_svg_legend(f, &lx, ly, "line:" COLOUR_MAX, false, "max");
	char bars[64];
	snprintf(bars, sizeof(bars), "commits that ended (the highest bar: %.0f)", maxtx);
	pgl_svg_legend(f, &lx, ly, COLOUR_TX, false, bars);
	pgl_svg_legend(f, &lx, ly, COLOUR_CKPT, false, "checkpoint");
	pgl_svg_legend(f, &lx, ly, COLOUR_SEG, false, "WAL segment created");
	pgl_svg_legend(f, &lx, ly, "dash:#333", false, "post phase");
	for (int i = 0; i < n; i++)
		draw_panel(f, &p[i], TL_TOP + TL_GAP + i * (TL_PANEL + TL_GAP), &tx, &la, maxtx);
	double bottom = TL_TOP + n * (TL_PANEL + TL_GAP);
	pgl_svg_time_axis(f, &tx, bottom,
			  "seconds from the import's start (the latency axis: log scale)");
	fprintf(f, "</svg>\n");
	return 1;
}
