/*
 * compare_html.c -- the page people read of `pgload compare`: index.html
 * opens with the verdict lines (compare_verdict.c: what was compared, the
 * best cell of each figure, which cells are faster or slower than the
 * baseline and which are within noise), then the charts, then the tables;
 * the charts are also written alone as import.svg, oltp.svg and timeline.svg
 * (--oltp), latency.svg (pgiofs cells) and caps.svg (capped cloud volumes).
 *
 * The charts are SVG drawn here, inline in the page: it needs no network,
 * no script and no other program, and opens the same offline.  Every chart
 * is horizontal bars, a row per cell: a bar per series (the mean, a
 * percentile, an I/O class, each in a colour of its own), a dot per run
 * over the bar where the runs have the figure; on the import time's chart,
 * which the ratios and the noise are of, the baseline's row and the noisy
 * rows are marked by a band behind them and in the legend.
 *
 * What must stay true: the ratio a chart prints is the one of the tables
 * (a cell's figure over the baseline's, below 1 faster for a time); a row
 * is marked noisy exactly where the table marks it (pgl_cmp_noisy()).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare_i.h"
#include "stats.h"
#include "version.h"

/* The chart's geometry, in SVG user units (px at 100 %). */
#define CHART_W	     1000
#define CHART_TOP    76	 /* title and legend above */
#define CHART_BOTTOM 36	 /* the axis's labels below */
#define CHART_RIGHT  210 /* the value or ratio of each row */
#define MAX_SERIES   PGL_IO_NCLASS

#define COLOUR_BASELINE "#dce9f9"
#define COLOUR_NOISY	"#fbe3d6"
#define COLOUR_NOISY_TX "#b3400b"

/* One colour per I/O class, in pgl_io_class_names' order (wal, xact, heap,
 * index, fsm, vm, temp, meta, other): told apart on screen and in print. */
static const char *const class_colour[PGL_IO_NCLASS] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#17becf",
};

/* A chart: rows (cells) x series; the values come from the callbacks. */
struct chart {
	const char *id, *title, *unit;
	bool log;
	bool histogram; /* percentiles of pgiofs's histograms: printed with their precision */
	bool marks;	/* mark the baseline's row and the noisy rows (the import time's) */
	const struct cmp *m;
	int row[MAX_CELLS], nrow; /* cells shown */
	int nser;
	const char *ser_name[MAX_SERIES], *ser_colour[MAX_SERIES];
	size_t ser_arg[MAX_SERIES]; /* for the callbacks: an offset, a class */
	/* the value of series S of cell C (<= 0 or NaN: none) */
	double (*value)(const struct chart *ch, const struct cell *c, int s);
	/* series S of run R of cell C (< 0: none); NULL: no dots */
	double (*run)(const struct chart *ch, const struct cell *c, int s, int r);
	/* what the right margin says of cell C into BUF; NULL: nothing */
	void (*note)(const struct chart *ch, const struct cell *c, char *buf, size_t cap);
};

/* chart_svg() -- chart CH as one <svg> element. */
static void chart_svg(FILE *f, const struct chart *ch)
{
	const struct cmp *m = ch->m;
	size_t longest = 10;
	double lo = -1, hi = -1;
	bool dots = false, any_base = false, any_noisy = false;
	for (int i = 0; i < ch->nrow; i++) {
		const struct cell *c = &m->cell[ch->row[i]];
		size_t l = strlen(c->label) + 2;
		longest = l > longest ? l : longest;
		any_base |= ch->marks && c->idx == m->baseline;
		any_noisy |= ch->marks && pgl_cmp_noisy(c);
		for (int s = 0; s < ch->nser; s++) {
			double v[1 + 1000];
			int n = 0;
			v[n++] = ch->value(ch, c, s);
			for (int r = 0; ch->run && r < c->ns && r < 1000; r++)
				if (pgl_svg_has(v[n] = ch->run(ch, c, s, r)))
					n++, dots = true;
			for (int k = 0; k < n; k++)
				if (pgl_svg_has(v[k])) {
					lo = lo < 0 || v[k] < lo ? v[k] : lo;
					hi = v[k] > hi ? v[k] : hi;
				}
		}
	}
	if (hi <= 0)
		lo = hi = 1;
	double rh = ch->nser > 1 ? 10.0 * ch->nser + 10 : 24, bh = (rh - 8) / ch->nser;
	double left = 16 + 6.6 * (double)(longest > 64 ? 64 : longest);
	struct pgl_axis a = {.log = ch->log, .x0 = left, .w = CHART_W - left - CHART_RIGHT};
	pgl_axis_fit(&a, lo, hi);
	double h = CHART_TOP + rh * ch->nrow + CHART_BOTTOM, bottom = CHART_TOP + rh * ch->nrow;

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"chart\" "
		"viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\" role=\"img\">\n<title>",
		ch->id, CHART_W, h, CHART_W, h);
	pgl_svg_text(f, ch->title);
	fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		   "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
	pgl_svg_text(f, ch->title);
	fprintf(f, "</text>\n");
	/* the legend: series, dots, and the marks of the rows */
	double lx = 8, ly = 46;
	for (int s = 0; s < ch->nser; s++)
		pgl_svg_legend(f, &lx, ly, ch->ser_colour[s], false, ch->ser_name[s]);
	if (dots)
		pgl_svg_legend(f, &lx, ly, NULL, true, "one run");
	lx = 8, ly = 64;
	if (any_base)
		pgl_svg_legend(f, &lx, ly, COLOUR_BASELINE, false,
			       "baseline: the cell ratios refer to");
	if (any_noisy) {
		char t[96];
		snprintf(t, sizeof(t), "! noisy: CV of the import times above %.0f %%",
			 CV_LIMIT_PCT);
		pgl_svg_legend(f, &lx, ly, COLOUR_NOISY, false, t);
	}
	/* the grid and the axis */
	fprintf(f, "<g stroke=\"#ddd\">\n");
	int nt = 0;
	double ticks[64];
	if (a.log)
		for (double t = a.lo; t <= a.hi * 1.0001 && nt < 64; t *= 10)
			ticks[nt++] = t;
	else
		for (double t = 0; t <= a.hi * 1.0001 && nt < 64; t += a.step)
			ticks[nt++] = t;
	for (int i = 0; i < nt; i++)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			pgl_axis_x(&a, ticks[i]), CHART_TOP, pgl_axis_x(&a, ticks[i]), bottom);
	fprintf(f, "</g>\n<g text-anchor=\"middle\" fill=\"#333\">\n");
	for (int i = 0; i < nt; i++) {
		char t[32];
		snprintf(t, sizeof(t), "%g", ticks[i]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", pgl_axis_x(&a, ticks[i]),
			bottom + 15, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", a.x0 + a.w / 2, bottom + 31);
	pgl_svg_text(f, ch->unit);
	fprintf(f, "%s</text>\n</g>\n", ch->log ? " (log scale)" : "");
	/* the rows */
	for (int i = 0; i < ch->nrow; i++) {
		const struct cell *c = &m->cell[ch->row[i]];
		double y = CHART_TOP + rh * i;
		bool base = ch->marks && c->idx == m->baseline;
		bool noise = ch->marks && pgl_cmp_noisy(c);
		fprintf(f, "<g class=\"row%s%s\">\n", base ? " baseline" : "",
			noise ? " noisy" : "");
		if (base || noise)
			fprintf(f,
				"<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
				"fill=\"%s\"/>\n",
				y + 1, CHART_W, rh - 2, base ? COLOUR_BASELINE : COLOUR_NOISY);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"%s%s>%s", left - 8,
			y + rh / 2 + 4, base ? " font-weight=\"bold\"" : "",
			noise ? " fill=\"" COLOUR_NOISY_TX "\"" : "", noise ? "! " : "");
		pgl_svg_text(f, c->label);
		fprintf(f, "</text>\n");
		for (int s = 0; s < ch->nser; s++) {
			double v = ch->value(ch, c, s), by = y + 4 + bh * s;
			if (!pgl_svg_has(v))
				continue;
			char t[32];
			if (ch->histogram)
				stats_fmt_quantile_ms(t, sizeof(t), v);
			else
				pgl_svg_fmt(t, sizeof(t), v);
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>",
				a.x0, by, pgl_axis_x(&a, v) - a.x0, bh - 1, ch->ser_colour[s]);
			pgl_svg_text(f, c->label);
			fprintf(f, " %s: %s ", ch->ser_name[s], t);
			pgl_svg_text(f, ch->unit);
			fprintf(f, "</title></rect>\n");
			for (int r = 0; ch->run && r < c->ns; r++) {
				double rv = ch->run(ch, c, s, r);
				if (pgl_svg_has(rv))
					fprintf(f,
						"<circle class=\"run\" cx=\"%.1f\" cy=\"%.1f\" "
						"r=\"3.5\" fill=\"#222\" fill-opacity=\"0.75\" "
						"stroke=\"#fff\"/>\n",
						pgl_axis_x(&a, rv),
						by + (bh - 1) / 2 + (r % 3 - 1) * 2.0);
			}
		}
		if (ch->note) {
			char t[96];
			ch->note(ch, c, t, sizeof(t));
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", a.x0 + a.w + 8, y + rh / 2 + 4);
			pgl_svg_text(f, t);
			fprintf(f, "</text>\n");
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", a.x0,
		CHART_TOP, a.x0, bottom);
	fprintf(f, "</svg>\n");
}

/* ---- the three charts ------------------------------------------------------ */

static double import_value(const struct chart *ch, const struct cell *c, int s)
{
	return c->ns ? c->mean : -1;
}

static double import_run(const struct chart *ch, const struct cell *c, int s, int r)
{
	return c->s[r].import;
}

static void import_note(const struct chart *ch, const struct cell *c, char *buf, size_t cap)
{
	if (c->idx == ch->m->baseline)
		snprintf(buf, cap, "%.2f s, baseline", c->mean);
	else
		snprintf(buf, cap, "%.2f s, %.2fx %s", c->mean, c->ratio,
			 pgl_cmp_baseline_word(ch->m, c));
}

static double oltp_value(const struct chart *ch, const struct cell *c, int s)
{
	return c->oltp.tx ? *(const double *)((const char *)&c->oltp + ch->ser_arg[s]) : -1;
}

static double oltp_run(const struct chart *ch, const struct cell *c, int s, int r)
{
	const struct oltp_figures *o = &c->s[r].oltp;
	return o->tx ? *(const double *)((const char *)o + ch->ser_arg[s]) : -1;
}

static double lat_value(const struct chart *ch, const struct cell *c, int s)
{
	int k = (int)ch->ser_arg[s];
	return pgl_cmp_lat_ops(&c->lat, k) ? c->lat.lat[k][PGL_LAT_P99] : -1;
}

/* write_chart() -- CH into the page F and alone into --out/ID.svg. */
static int write_chart(FILE *f, const struct chart *ch)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.svg", ch->m->out, ch->id);
	FILE *g = fopen(path, "w");
	if (!g)
		return -errno;
	fprintf(g, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
	chart_svg(g, ch);
	if (fclose(g) != 0)
		return -EIO;
	fprintf(f, "<figure>\n");
	chart_svg(f, ch);
	fprintf(f, "</figure>\n");
	return 0;
}

/* write_overtime() -- a chart over the time of the imports, DRAW
 * (compare_tlchart.c, compare_capchart.c), under heading TITLE into the
 * page F and alone into --out/NAME; nothing where it draws nothing. */
static int write_overtime(FILE *f, const struct cmp *m, const char *name, const char *title,
			  int (*draw)(FILE *, const struct cmp *))
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", m->out, name);
	FILE *g = fopen(path, "w");
	if (!g)
		return -errno;
	fprintf(g, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
	int drawn = draw(g, m);
	if (fclose(g) != 0)
		return -EIO;
	if (!drawn) {
		unlink(path);
		return 0;
	}
	fprintf(f, "<h3>%s</h3>\n<figure>\n", title);
	draw(f, m);
	fprintf(f, "</figure>\n");
	return 0;
}

/* write_charts() -- the charts of M into the page F (and their files). */
static int write_charts(FILE *f, const struct cmp *m)
{
	int ret;
	struct chart ch = {
	    .id = "import",
	    .title = "Import time per cell: bars the mean, dots each run; ratio = time relative "
		     "to the baseline, below 1 is faster",
	    .unit = "seconds",
	    .m = m,
	    .nser = 1,
	    .ser_name = {"mean import time (data + post)"},
	    .ser_colour = {"#4e79a7"},
	    .marks = true,
	    .value = import_value,
	    .run = import_run,
	    .note = import_note,
	};
	for (int i = 0; i < m->ncell; i++)
		ch.row[ch.nrow++] = i;
	fprintf(f, "<h3>Import time</h3>\n");
	if ((ret = write_chart(f, &ch)) < 0)
		return ret;
	if (m->oltp_clients) {
		static const char *const names[] = {"p50", "p99", "p99.9", "max"};
		static const char *const colours[] = {"#59a14f", "#edc948", "#f28e2b", "#e15759"};
		static const size_t offs[] = {
		    offsetof(struct oltp_figures, p50), offsetof(struct oltp_figures, p99),
		    offsetof(struct oltp_figures, p999), offsetof(struct oltp_figures, max)};
		ch = (struct chart){
		    .id = "oltp",
		    .title = "Commit latency of the OLTP clients during the import: bars over "
			     "every run, dots each run; lower is faster",
		    .unit = "ms",
		    .log = true,
		    .m = m,
		    .nser = 4,
		    .value = oltp_value,
		    .run = oltp_run,
		};
		for (int s = 0; s < 4; s++) {
			ch.ser_name[s] = names[s];
			ch.ser_colour[s] = colours[s];
			ch.ser_arg[s] = offs[s];
		}
		for (int i = 0; i < m->ncell; i++)
			if (m->cell[i].oltp.tx)
				ch.row[ch.nrow++] = i;
		fprintf(f, "<h3>Commit latency during the import</h3>\n");
		if (ch.nrow && (ret = write_chart(f, &ch)) < 0)
			return ret;
		if ((ret = write_overtime(f, m, "timeline.svg", "Commit latency over the import",
					  pgl_cmp_timeline_svg)) < 0)
			return ret;
	}
	ch = (struct chart){
	    .id = "latency",
	    .title = "p99 latency per I/O class on pgiofs, since the mount (initdb and every run); "
		     "lower is faster",
	    .unit = "ms",
	    .log = true,
	    .histogram = true,
	    .m = m,
	    .value = lat_value,
	};
	for (int k = 0; k < PGL_IO_NCLASS; k++) {
		bool used = false;
		for (int i = 0; i < m->ncell; i++)
			used |= m->cell[i].has_lat && pgl_cmp_lat_ops(&m->cell[i].lat, k);
		if (!used)
			continue;
		ch.ser_name[ch.nser] = pgl_io_class_names[k];
		ch.ser_colour[ch.nser] = class_colour[k];
		ch.ser_arg[ch.nser++] = (size_t)k;
	}
	for (int i = 0; i < m->ncell; i++)
		if (m->cell[i].has_lat)
			ch.row[ch.nrow++] = i;
	if (ch.nrow && ch.nser) {
		fprintf(f, "<h3>Latency per I/O class</h3>\n");
		if ((ret = write_chart(f, &ch)) < 0)
			return ret;
	}
	return write_overtime(f, m, "caps.svg", "The capped volumes' caps over the import",
			      pgl_cmp_caps_svg);
}

/* write_lines() -- the lines of TEXT as list items. */
static void write_lines(FILE *f, const char *text)
{
	fprintf(f, "<ul class=\"verdict\">\n");
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		if (line[0]) {
			fprintf(f, "<li>");
			pgl_svg_text(f, line);
			fprintf(f, "</li>\n");
		}
		l += n + (l[n] == '\n');
	}
	fprintf(f, "</ul>\n");
}

/* write_page() -- index.html into F: the verdict lines VERDICTS, the
 * charts, the tables TABLE. */
static int write_page(FILE *f, const struct cmp *m, const char *verdicts, const char *table)
{
	int ret;
	fprintf(f,
		"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<title>pgload compare</title>\n"
		"<style>body{font-family:sans-serif;margin:1.5em 2em;max-width:1040px;color:#222}"
		"pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}"
		"figure{margin:0 0 1.5em 0}svg.chart{max-width:100%%;height:auto}"
		"ul.verdict{padding-left:1.2em;line-height:1.45}p.meta{color:#555}</style>\n"
		"</head><body>\n<h1>pgload compare</h1>\n<p class=\"meta\">");
	pgl_svg_text(f, m->started);
	fprintf(f, "; %ld CPUs, ", m->ncpu);
	pgl_svg_text(f, m->kernel);
	fprintf(f, "; PostgreSQL ");
	pgl_svg_text(f, m->server_version);
	fprintf(f, "; pgload " PGIOFS_RELEASE);
	if (m->pgiofs_version[0]) {
		fprintf(f, ", ");
		pgl_svg_text(f, m->pgiofs_version);
	}
	fprintf(f, ". Raw data: <a href=\"results.json\">results.json</a>, "
		   "<a href=\"results.csv\">results.csv</a>.</p>\n<h2>Verdict</h2>\n");
	write_lines(f, verdicts);
	fprintf(f, "<h2>Charts</h2>\n");
	if ((ret = write_charts(f, m)) < 0)
		return ret;
	fprintf(f, "<h2>Tables</h2>\n<pre>");
	pgl_svg_text(f, table);
	fprintf(f, "</pre>\n</body></html>\n");
	return 0;
}

/* text_of() -- what PRINT writes of M, as a string to free; NULL if out of memory. */
static char *text_of(const struct cmp *m, void (*print)(const struct cmp *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return NULL;
	print(m, mem);
	if (fclose(mem) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int pgl_cmp_write_html(const struct cmp *m)
{
	char path[4200];
	char *table = text_of(m, pgl_cmp_print_table),
	     *verdicts = text_of(m, pgl_cmp_print_verdicts);
	int ret = -ENOMEM;
	FILE *f;
	snprintf(path, sizeof(path), "%s/index.html", m->out);
	if (!table || !verdicts)
		ret = -ENOMEM;
	else if (!(f = fopen(path, "w")))
		ret = -errno;
	else if ((ret = write_page(f, m, verdicts, table)) < 0)
		fclose(f);
	else
		ret = fclose(f) == 0 ? 0 : -EIO;
	free(table);
	free(verdicts);
	if (ret < 0)
		fprintf(stderr, "pgload compare: could not write \"%s\": %s\n", path,
			strerror(-ret));
	return ret;
}
