/*
 * compare_svg.c -- what the charts of `pgload compare` are drawn with
 * (compare_html.c's bars, compare_tlchart.c's time lines): text escaped
 * for SVG and HTML, a value axis (linear or log), numbers for ticks and
 * notes, legend items.  SVG written by hand: the page needs no script,
 * no network and no other program.
 *
 * What must stay true: every text that came from the user or the system
 * (labels, paths) goes through pgl_svg_text().
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare_i.h"

void pgl_svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

bool pgl_svg_has(double v)
{
	return v > 0 && isfinite(v);
}

double pgl_axis_x(const struct pgl_axis *a, double v)
{
	double t;
	if (a->log)
		t = pgl_svg_has(v) ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : 0;
	else
		t = v / a->hi;
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return a->x0 + t * a->w;
}

double pgl_axis_y(const struct pgl_axis *a, double v, double top, double h)
{
	struct pgl_axis v_axis = *a; /* pgl_axis_x() from the bottom */

	v_axis.x0 = 0;
	v_axis.w = h;
	return top + h - pgl_axis_x(&v_axis, v);
}

void pgl_axis_fit(struct pgl_axis *a, double lo, double hi)
{
	if (a->log) {
		a->lo = pow(10, floor(log10(lo)));
		a->hi = pow(10, ceil(log10(hi)));
		if (a->hi <= a->lo)
			a->hi = a->lo * 10;
		return;
	}
	/* ticks at 1, 2 or 5 times a power of ten, about five of them */
	double raw = hi / 5, p = pow(10, floor(log10(raw))), m = raw / p;
	a->step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	a->hi = ceil(hi * 1.02 / a->step) * a->step;
	a->lo = 0;
}

void pgl_svg_fmt(char *buf, size_t cap, double v)
{
	if (v >= 100 || v == floor(v))
		snprintf(buf, cap, "%.0f", v);
	else
		snprintf(buf, cap, "%.*f", v >= 10 ? 1 : v >= 1 ? 2 : 3, v);
}

void pgl_svg_legend(FILE *f, double *x, double y, const char *colour, bool dot, const char *text)
{
	if (dot)
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#222\" "
			"fill-opacity=\"0.75\" stroke=\"#fff\"/>",
			*x + 6, y - 4);
	else if (strncmp(colour, "line:", 5) == 0 || strncmp(colour, "dash:", 5) == 0)
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2\"%s/>",
			*x, y - 4, *x + 14, y - 4, colour + 5,
			colour[0] == 'd' ? " stroke-dasharray=\"3,2\"" : "");
	else
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"11\" fill=\"%s\" "
			"stroke=\"#555\" stroke-width=\"0.5\"/>",
			*x, y - 10, colour);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", *x + 18, y);
	pgl_svg_text(f, text);
	fprintf(f, "</text>\n");
	*x += 18 + 6.6 * (double)strlen(text) + 16;
}

void pgl_svg_time_axis(FILE *f, const struct pgl_axis *tx, double y, const char *caption)
{
	fprintf(f, "<g font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">\n");
	for (double t = 0; t <= tx->hi + 1e-9; t += tx->step) {
		char v[32];
		pgl_svg_fmt(v, sizeof(v), t);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", pgl_axis_x(tx, t), y + 14, v);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", tx->x0 + tx->w / 2, y + 32);
	pgl_svg_text(f, caption);
	fprintf(f, "</text>\n</g>\n");
}
