/*
 * compare_capchart.c -- the chart of `pgload compare` over the time of an
 * import on a capped cloud volume: for each such cell, one run (the one
 * with the slowest commit under --oltp, else the first), second by second
 * (compare_caps.c's series): the IOPS and the MiB/s it used as a share of
 * their caps, and, where the volume has a credit bucket, the balance as a
 * share of the bucket, and its baseline (the IOPS cap once they are
 * gone) as a dotted line; a dashed line at 100 %.  Which cap held the import,
 * when, and when the credits ran out shows where it happens.
 *
 * What must stay true: every panel has the same time axis and the same
 * share axis; what is drawn is what results.json's samples[].caps and the
 * table's figures say of the same run (pgdisk's own counters).
 */
#include <stdio.h>

#include "compare_i.h"

#define CC_W	    1000
#define CC_LEFT	    70
#define CC_RIGHT    20
#define CC_TOP	    70
#define CC_PANEL    130
#define CC_GAP	    34
#define CC_BOTTOM   40
#define COLOUR_IOPS "#4e79a7"
#define COLOUR_MIB  "#f28e2b"
#define COLOUR_CRED "#59a14f"

/* One panel: a cell's run, and its caps. */
struct cpanel {
	const struct cell *c;
	const struct caps_use *u;
	int round;
	double iops, mib, bucket; /* the caps; the credit bucket (0: none) */
	double baseline;	  /* IOPS without credits (0: no bucket) */
};

/* line() -- series V (N seconds) as a share of CAP, a polyline of COLOUR. */
static void line(FILE *f, const float *v, int n, double cap, const char *colour,
		 const struct pgl_axis *tx, const struct pgl_axis *ya, double top, double h)
{
	if (cap <= 0 || n <= 0)
		return;
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colour);
	for (int k = 0; k < n; k++)
		fprintf(f, "%s%.1f,%.1f", k ? " " : "", pgl_axis_x(tx, k + 0.5),
			pgl_axis_y(ya, 100.0 * v[k] / cap, top, h));
	fprintf(f, "\"/>\n");
}

static void draw(FILE *f, const struct cpanel *p, double top, const struct pgl_axis *tx,
		 const struct pgl_axis *ya)
{
	double h = CC_PANEL;
	fprintf(f, "<g class=\"panel\">\n<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">", CC_LEFT,
		top - 8);
	pgl_svg_text(f, p->c->label);
	fprintf(f,
		"</text><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">run %d, import "
		"%.1f s; caps %.0f IOPS, %.0f MiB/s",
		CC_W - CC_RIGHT, top - 8, p->round, p->u->secs, p->iops, p->mib);
	if (p->bucket > 0)
		fprintf(f, ", %.0f credits", p->bucket);
	fprintf(f,
		"</text>\n<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#999\"/>\n",
		CC_LEFT, top, tx->w, h);
	fprintf(f,
		"<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" "
		"stroke-dasharray=\"4 3\"/>\n",
		CC_LEFT, pgl_axis_y(ya, 100, top, h), tx->x0 + tx->w, pgl_axis_y(ya, 100, top, h));
	if (p->baseline > 0 && p->iops > 0) { /* gp2: the cap once the credits are gone */
		double yb = pgl_axis_y(ya, 100 * p->baseline / p->iops, top, h);

		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COLOUR_IOPS
			"\" stroke-dasharray=\"1 3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
			"text-anchor=\"end\" fill=\"" COLOUR_IOPS "\">baseline %.0f IOPS</text>\n",
			CC_LEFT, yb, tx->x0 + tx->w, yb, tx->x0 + tx->w - 2, yb - 3, p->baseline);
	}
	line(f, p->u->sec_iops, p->u->nsec, p->iops, COLOUR_IOPS, tx, ya, top, h);
	line(f, p->u->sec_mib, p->u->nsec, p->mib, COLOUR_MIB, tx, ya, top, h);
	line(f, p->u->sec_credits, p->u->nsec, p->bucket, COLOUR_CRED, tx, ya, top, h);
	if (p->u->out_at >= 0)
		fprintf(
		    f,
		    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COLOUR_CRED
		    "\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"" COLOUR_CRED
		    "\">credits ran out</text>\n",
		    pgl_axis_x(tx, p->u->out_at), top, pgl_axis_x(tx, p->u->out_at), top + h,
		    pgl_axis_x(tx, p->u->out_at) + 2, top + 12);
	fprintf(f, "<g font-size=\"11\" text-anchor=\"end\" fill=\"#333\">\n");
	for (double v = 0; v <= ya->hi + 1e-9; v += ya->step)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">%.0f %%</text>\n", CC_LEFT - 4,
			pgl_axis_y(ya, v, top, h) + 3, v);
	fprintf(f, "</g>\n</g>\n");
}

int pgl_cmp_caps_svg(FILE *f, const struct cmp *m)
{
	struct cpanel p[MAX_CELLS];
	int n = 0;
	double secs = 0, hi = 100;
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		int r = pgl_cmp_timeline_run(c);
		if (r < 0 || !c->s[r].caps.nsec)
			for (r = 0; r < c->ns && !c->s[r].caps.nsec; r++)
				;
		if (r >= c->ns || !c->spec->capped)
			continue;
		p[n] = (struct cpanel){c,
				       &c->s[r].caps,
				       c->s[r].round,
				       pgl_cmp_disk_num(c->disk_stats, "cloud_iops"),
				       pgl_cmp_disk_num(c->disk_stats, "cloud_mib_s"),
				       pgl_cmp_disk_num(c->disk_stats, "cloud_credits"),
				       0};
		if (p[n].bucket > 0)
			p[n].baseline = pgl_cmp_disk_num(c->disk_stats, "cloud_baseline_iops");
		const struct caps_use *u = p[n].u;
		secs = u->secs > secs ? u->secs : secs;
		for (int k = 0; k < u->nsec; k++) {
			double a = p[n].iops > 0 ? 100 * u->sec_iops[k] / p[n].iops : 0;
			double b = p[n].mib > 0 ? 100 * u->sec_mib[k] / p[n].mib : 0;
			hi = a > hi ? a : hi;
			hi = b > hi ? b : hi;
		}
		n++;
	}
	if (!n)
		return 0;
	struct pgl_axis tx = {.x0 = CC_LEFT, .w = CC_W - CC_LEFT - CC_RIGHT};
	struct pgl_axis ya = {0};
	pgl_axis_fit(&tx, 1, secs > 0 ? secs : 1);
	tx.hi = secs > 0 ? secs : 1;
	pgl_axis_fit(&ya, 1, hi);
	double h = CC_TOP + n * (CC_PANEL + CC_GAP) + CC_BOTTOM;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"caps\" class=\"chart\" "
		"viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\" role=\"img\">\n<title>The caps over the import</title>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">What the import used "
		"of the volume's caps, second by second (pgdisk's counters)</text>\n",
		CC_W, h, CC_W, h);
	double lx = 8, ly = 46;
	pgl_svg_legend(f, &lx, ly, "line:" COLOUR_IOPS, false, "IOPS, % of the IOPS cap");
	pgl_svg_legend(f, &lx, ly, "line:" COLOUR_MIB, false, "MiB/s, % of the throughput cap");
	pgl_svg_legend(f, &lx, ly, "line:" COLOUR_CRED, false, "credit balance, % of the bucket");
	pgl_svg_legend(f, &lx, ly, "dash:#333", false, "100 %");
	for (int i = 0; i < n; i++)
		draw(f, &p[i], CC_TOP + CC_GAP + i * (CC_PANEL + CC_GAP), &tx, &ya);
	double bottom = CC_TOP + n * (CC_PANEL + CC_GAP);
	pgl_svg_time_axis(f, &tx, bottom, "seconds from the import's start");
	fprintf(f, "</svg>\n");
	return 1;
}
