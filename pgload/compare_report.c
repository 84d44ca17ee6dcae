/*
 * compare_report.c -- what `pgload compare` reports: per cell the mean, sd,
 * CV, min and max of the import time and its ratio to the baseline cell;
 * the seed-style table and hyperfine-style "ran N times faster" lines on
 * stdout and in table.txt, a tiobench-style latency table per class on
 * pgiofs, results.json (schema pgload.compare/1), results.csv, import.svg
 * and latency.svg (gnuplot) and index.html in --out.
 *
 * What must stay true: a cell whose import time varies by more than
 * CV_LIMIT_PCT is flagged noisy wherever it is shown; a missing gnuplot
 * leaves the charts out, never the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"
#include "json.h"
#include "stats.h"

#define COMPARE_SCHEMA "pgload.compare/1"

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

/* lat_ops() -- requests of class K in a latency snapshot. */
static uint64_t lat_ops(const struct pgl_io *io, int k)
{
	return io->v[k][PGL_IO_READ_OPS] + io->v[k][PGL_IO_WRITE_OPS] + io->v[k][PGL_IO_SYNC_OPS];
}

static bool noisy(const struct cell *c)
{
	return c->ns > 1 && c->cv > CV_LIMIT_PCT;
}

static void print_table(const struct cmp *m, FILE *f)
{
	int w = 16;
	for (int i = 0; i < m->ncell; i++)
		if ((int)strlen(m->cell[i].label) > w)
			w = (int)strlen(m->cell[i].label);
	bool loads = m->load != LOAD_NONE, any_noisy = false;
	char wl[1100];
	if (m->workload)
		snprintf(wl, sizeof(wl), "%s", m->workload);
	else
		snprintf(wl, sizeof(wl), "generated (scale %g)", m->gen_scale);
	fprintf(f,
		"pgload compare: %d run%s per cell, interleaved; workload %s; load %s%s%s; "
		"PostgreSQL %s\n\n",
		m->runs, m->runs == 1 ? "" : "s", wl, pgl_load_names[m->load],
		m->device ? "; pgiofs device " : "", m->device ? m->device : "", m->server_version);
	fprintf(f, "%-*s %6s %9s %9s %7s %6s", w, "Backend/profile", "[runs]", "Schema(s)",
		"Import(s)", "±sd", "CPU%");
	if (loads)
		fprintf(f, " %9s %6s", "Loads(MB)", "LCPU%");
	fprintf(f, " %6s\n", "Ratio");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		char runs[16];
		snprintf(runs, sizeof(runs), "[%d]", c->ns);
		fprintf(f, "%-*s %6s %9.2f %9.2f %7.2f %6.0f", w, c->label, runs, c->schema_mean,
			c->mean, c->sd, c->cpu_mean);
		if (loads)
			fprintf(f, " %9.0f %6.0f", c->load_mean, c->lcpu_mean);
		fprintf(f, " %6.2f%s%s\n", c->ratio, i == m->baseline ? " (baseline)" : "",
			noisy(c) ? " !" : "");
		any_noisy |= noisy(c);
	}
	if (any_noisy)
		fprintf(f, "! CV of the import time above %.0f %%: noisy, compare with care\n",
			CV_LIMIT_PCT);
	fprintf(f, "\n");
	const struct cell *b = &m->cell[m->baseline];
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (i == m->baseline || c->mean <= 0 || b->mean <= 0)
			continue;
		bool faster = c->mean < b->mean;
		double r = faster ? b->mean / c->mean : c->ratio;
		double e = r * sqrt(pow(c->sd / c->mean, 2) + pow(b->sd / b->mean, 2));
		fprintf(f, "%s ran %.2f ± %.2f times %s than %s\n", c->words, r, e,
			faster ? "faster" : "slower", b->words);
	}
	bool any_lat = false;
	for (int i = 0; i < m->ncell; i++)
		any_lat |= m->cell[i].has_lat;
	if (!any_lat)
		return;
	fprintf(f, "\nLatency per class on pgiofs (since the mount: initdb and all runs)\n");
	fprintf(f, "%-*s %-6s %10s %9s %9s %9s %8s %8s\n", w, "Backend/profile", "class", "ops",
		"Avg ms", "p99 ms", "Max ms", "Lat%>2s", "Lat%>10s");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		if (!c->has_lat)
			continue;
		for (int k = 0; k < PGL_IO_NCLASS; k++) {
			if (!lat_ops(&c->lat, k))
				continue;
			const double *l = c->lat.lat[k];
			fprintf(f, "%-*s %-6s %10llu %9.3f %9.3f %9.2f %8.5f %8.5f\n", w, c->label,
				pgl_io_class_names[k], (unsigned long long)lat_ops(&c->lat, k),
				l[PGL_LAT_AVG], l[PGL_LAT_P99], l[PGL_LAT_MAX], l[PGL_LAT_OVER_2S],
				l[PGL_LAT_OVER_10S]);
		}
	}
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
	fprintf(f, ",\n  \"settings\": {\n    \"workload\": ");
	if (m->workload)
		json_str_write(f, m->workload);
	else
		fprintf(f, "null");
	if (m->gen_scale > 0)
		fprintf(f, ",\n    \"gen_scale\": %g", m->gen_scale);
	else
		fprintf(f, ",\n    \"gen_scale\": null");
	fprintf(f, ",\n    \"files\": {");
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		fprintf(f, "%s\"%s\": ", ph ? ", " : "", pgl_phase_names[ph]);
		if (m->files[ph][0])
			json_str_write(f, m->files[ph]);
		else
			fprintf(f, "null");
	}
	fprintf(f, "},\n    \"runs\": %d, \"jobs\": %d, \"load\": \"%s\", \"device\": ", m->runs,
		m->jobs, pgl_load_names[m->load]);
	json_str_write(f, m->device ? m->device : "none");
	fprintf(f, ", \"size_bytes\": %llu,\n    \"backends\": [", (unsigned long long)m->size);
	for (int i = 0; i < m->nbe; i++) {
		fprintf(f, "%s", i ? ", " : "");
		if (m->be[i].path) {
			char s[1100];
			snprintf(s, sizeof(s), "dir:%s", m->be[i].path);
			json_str_write(f, s);
		} else {
			json_str_write(f, m->be[i].name);
		}
	}
	fprintf(f, "],\n    \"profiles\": [");
	for (int i = 0; i < m->nprofile; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, m->profile[i]);
	}
	fprintf(f, "],\n    \"sets\": {");
	for (int i = 0; i < m->nsets; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, m->sets[i].name);
		fprintf(f, ": [");
		for (int v = 0; v < m->sets[i].nval; v++) {
			fprintf(f, "%s", v ? ", " : "");
			json_str_write(f, m->sets[i].val[v]);
		}
		fprintf(f, "]");
	}
	fprintf(f, "},\n    \"cv_limit_pct\": %.1f\n  },\n  \"baseline\": ", CV_LIMIT_PCT);
	json_str_write(f, m->cell[m->baseline].label);
	fprintf(f, ",\n  \"cells\": [\n");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		fprintf(f, "    {\"label\": ");
		json_str_write(f, c->label);
		fprintf(f, ", \"backend\": ");
		json_str_write(f, c->spec->name);
		fprintf(f, ", \"backend_path\": ");
		if (c->spec->path)
			json_str_write(f, c->spec->path);
		else
			fprintf(f, "null");
		fprintf(f, ", \"profile\": ");
		json_str_write(f, c->profile ? c->profile : "native");
		fprintf(f, ", \"pgiofs\": %s, \"set\": {", c->profile ? "true" : "false");
		for (int k = 0; k < m->nsets && c->profile; k++) {
			fprintf(f, "%s", k ? ", " : "");
			json_str_write(f, m->sets[k].name);
			fprintf(f, ": ");
			json_str_write(f, c->setv[k]);
		}
		fprintf(f,
			"},\n     \"runs\": %d, \"import_s\": {\"mean\": %.6f, \"sd\": %.6f, "
			"\"min\": %.6f, \"max\": %.6f, \"cv_pct\": %.3f},\n",
			c->ns, c->mean, c->sd, c->min, c->max, c->cv);
		fprintf(
		    f,
		    "     \"schema_s\": %.6f, \"cpu_pct\": %.2f, \"load_mb\": %.3f, "
		    "\"load_cpu_pct\": %.2f, \"ratio\": %.6f, \"ratio_sd\": %.6f, \"noisy\": %s,\n",
		    c->schema_mean, c->cpu_mean, c->load_mean, c->lcpu_mean, c->ratio, c->ratio_sd,
		    noisy(c) ? "true" : "false");
		fprintf(f, "     \"samples\": [");
		for (int k = 0; k < c->ns; k++) {
			const struct sample *s = &c->s[k];
			fprintf(f,
				"%s\n       {\"round\": %d, \"schema_s\": %.6f, \"data_s\": %.6f, "
				"\"post_s\": %.6f, \"import_s\": %.6f, \"cpu_pct\": %.2f, "
				"\"load_mb\": %.3f, \"load_cpu_pct\": %.2f, \"wal_bytes\": %llu, "
				"\"rows\": %llu}",
				k ? "," : "", s->round, s->schema, s->data, s->post, s->import,
				s->cpu_pct, s->load_mb, s->load_cpu_pct, (unsigned long long)s->wal,
				(unsigned long long)s->rows);
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
				    (unsigned long long)lat_ops(&c->lat, k), l[PGL_LAT_AVG],
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

static int write_csv(const struct cmp *m, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "cell,backend,profile,set,round,schema_s,data_s,post_s,import_s,cpu_pct,load_mb,"
		   "load_cpu_pct,wal_bytes,rows\n");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		char set[256] = "";
		for (int k = 0; k < m->nsets && c->profile; k++) {
			size_t l = strlen(set);
			snprintf(set + l, sizeof(set) - l, "%s%s=%s", k ? " " : "", m->sets[k].name,
				 c->setv[k]);
		}
		for (int k = 0; k < c->ns; k++) {
			const struct sample *s = &c->s[k];
			pgl_csv_field(f, c->label);
			fputc(',', f);
			pgl_csv_field(f, c->spec->name);
			fprintf(f, ",%s,", c->profile ? c->profile : "native");
			pgl_csv_field(f, set);
			fprintf(f, ",%d,%.6f,%.6f,%.6f,%.6f,%.2f,%.3f,%.2f,%llu,%llu\n", s->round,
				s->schema, s->data, s->post, s->import, s->cpu_pct, s->load_mb,
				s->load_cpu_pct, (unsigned long long)s->wal,
				(unsigned long long)s->rows);
		}
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

/* write_charts() -- import.svg and latency.svg with gnuplot; false if not made. */
static bool write_charts(const struct cmp *m, bool *lat_chart)
{
	char path[4200];
	*lat_chart = false;
	if (pgl_which("gnuplot", path, sizeof(path)) < 0) {
		fprintf(stderr, "pgload: compare: no gnuplot: no charts (install gnuplot-nox)\n");
		return false;
	}
	snprintf(path, sizeof(path), "%s/import.dat", m->out);
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f, "# cell mean_s sd_s\n");
	for (int i = 0; i < m->ncell; i++)
		fprintf(f, "\"%s\" %.6f %.6f\n", m->cell[i].label, m->cell[i].mean, m->cell[i].sd);
	fclose(f);
	/* latency: p99 per class (columns) of each pgiofs cell (rows) */
	bool cls[PGL_IO_NCLASS] = {false};
	int ncls = 0;
	for (int i = 0; i < m->ncell; i++)
		for (int k = 0; k < PGL_IO_NCLASS && m->cell[i].has_lat; k++)
			cls[k] |= lat_ops(&m->cell[i].lat, k) > 0;
	for (int k = 0; k < PGL_IO_NCLASS; k++)
		ncls += cls[k];
	if (ncls) {
		snprintf(path, sizeof(path), "%s/latency.dat", m->out);
		f = fopen(path, "w");
		if (!f)
			return false;
		fprintf(f, "cell");
		for (int k = 0; k < PGL_IO_NCLASS; k++)
			if (cls[k])
				fprintf(f, " %s", pgl_io_class_names[k]);
		fprintf(f, "\n");
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			if (!c->has_lat)
				continue;
			fprintf(f, "\"%s\"", c->label);
			for (int k = 0; k < PGL_IO_NCLASS; k++)
				if (cls[k]) {
					double v = c->lat.lat[k][PGL_LAT_P99];
					if (lat_ops(&c->lat, k) && v > 0)
						fprintf(f, " %.6f", v);
					else
						fprintf(f, " NaN");
				}
			fprintf(f, "\n");
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/charts.gp", m->out);
	f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f,
		"# charts of pgload compare: gnuplot charts.gp (in this directory)\n"
		"set terminal svg size 1000,560 dynamic font 'sans,11'\n"
		"set style fill solid 0.6 border -1\n"
		"set grid ytics\n"
		"set xtics rotate by 30 right noenhanced\n"
		"set key noenhanced outside right top\n"
		"set lmargin 24\n"
		"set output 'import.svg'\n"
		"set title 'Import time per cell (mean and sd of %d runs)'\n"
		"set ylabel 'seconds'\n"
		"set yrange [0:*]\n"
		"set style data histogram\n"
		"set style histogram errorbars gap 1 lw 1\n"
		"plot 'import.dat' using 2:3:xtic(1) title 'import (data + post)'\n",
		m->runs);
	if (ncls) {
		fprintf(f,
			"set output 'latency.svg'\n"
			"set title 'p99 latency per class on pgiofs (ms, log scale)'\n"
			"set ylabel 'ms'\n"
			"set logscale y\n"
			"set yrange [*:*]\n"
			"set style histogram clustered gap 1\n"
			"plot for [i=2:%d] 'latency.dat' using i:xtic(1) title columnheader(i)\n",
			ncls + 1);
	}
	fclose(f);
	char *argv[] = {"sh", "-c", "cd \"$0\" && gnuplot charts.gp", (char *)m->out, NULL};
	if (pgl_run_ok("compare: gnuplot", argv, NULL, 0) < 0)
		return false;
	*lat_chart = ncls > 0;
	return true;
}

static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

static int write_html(const struct cmp *m, const char *table, bool charts, bool lat_chart)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/index.html", m->out);
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
		   "<title>pgload compare</title>\n"
		   "<style>body{font-family:sans-serif;margin:2em} pre{background:#f6f6f6;"
		   "padding:1em;overflow-x:auto} img{max-width:100%%}</style>\n"
		   "</head><body>\n<h1>pgload compare</h1>\n<p>");
	html_text(f, m->started);
	fprintf(f, ", ");
	html_text(f, m->kernel);
	fprintf(f, ", PostgreSQL ");
	html_text(f, m->server_version);
	fprintf(f, ". Raw data: <a href=\"results.json\">results.json</a>, "
		   "<a href=\"results.csv\">results.csv</a>.</p>\n<h2>Import time</h2>\n<pre>");
	html_text(f, table);
	fprintf(f, "</pre>\n");
	if (charts) {
		fprintf(f, "<p><img src=\"import.svg\" alt=\"import time per cell\"></p>\n");
		if (lat_chart)
			fprintf(f, "<h2>Latency per class</h2>\n<p><img src=\"latency.svg\" "
				   "alt=\"p99 latency per class\"></p>\n");
	} else {
		fprintf(f, "<p>(no charts: gnuplot is not installed)</p>\n");
	}
	fprintf(f, "</body></html>\n");
	return fclose(f) == 0 ? 0 : -EIO;
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
	snprintf(path, sizeof(path), "%s/results.json", m->out);
	if (ret == 0)
		ret = write_json(m, path);
	snprintf(path, sizeof(path), "%s/results.csv", m->out);
	if (ret == 0)
		ret = write_csv(m, path);
	bool lat_chart;
	bool charts = ret == 0 && write_charts(m, &lat_chart);
	if (ret == 0)
		ret = write_html(m, table, charts, charts && lat_chart);
	if (ret < 0)
		fprintf(stderr, "pgload: compare: could not write the report in \"%s\": %s\n",
			m->out, strerror(-ret));
	else {
		char *abs = realpath(m->out, NULL);
		printf("\nreport: %s/index.html\n", abs ? abs : m->out);
		free(abs);
	}
	free(table);
	return ret;
}
