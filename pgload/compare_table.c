/*
 * compare_table.c -- the tables of `pgload compare`, on stdout, in
 * table.txt and at the end of index.html: the seed-style table (a row per
 * cell: runs, schema and import times, CPU, with --loads and --oltp their
 * columns, the ratio to the baseline), a line per cell against the
 * baseline, the best cell of each figure (compare_verdict.c), the
 * streaming figures, the elevator and tunables of each block device, the
 * modelled disk's settings and counters, and a tiobench-style latency
 * table per class on pgiofs.
 *
 * What must stay true: a noisy cell is marked in the table (`!`); what a
 * cell ran on (elevator, tunables, model) is printed as read back, not as
 * asked for.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"
#include "stats.h"

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
		bool cached = false;
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			if (c->stream_read < 0)
				continue;
			char dev[32] = "-", rd[32];
			if (c->stream_dev >= 0)
				snprintf(dev, sizeof(dev), "%.1f", c->stream_dev);
			snprintf(rd, sizeof(rd), "%.1f", c->stream_read);
			if (pgl_cmp_stream_cached(c))
				snprintf(rd, sizeof(rd), "cached");
			cached |= pgl_cmp_stream_cached(c);
			fprintf(f, "%-*s %12s %11.1f %10s\n", w, c->label, dev, c->stream_write,
				rd);
		}
		if (cached)
			fprintf(
			    f,
			    "cached: the file was still in the page cache as its read began "
			    "(over %.0f %%), or its read was over %.0f times the device read of "
			    "the same bytes: it came from a cache, not the disk (results.json "
			    "has the figure)\n",
			    STREAM_CACHED_PCT, STREAM_CACHED_RATIO);
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
			if (c->queue.direct_io >= 0)
				fprintf(f, " loop.direct_io=%d", c->queue.direct_io);
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

void pgl_cmp_print_table(const struct cmp *m, FILE *f)
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
	int turns = 0;
	for (int i = 0; i < m->ncell; i++)
		if (m->cell[i].turns)
			fprintf(f, "%s%s",
				turns++ ? ", "
					: "Cells on one device take turns on it (a file system "
					  "made afresh, initdb, for each run): ",
				m->cell[i].label);
	if (turns)
		fprintf(f, "\n");
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
	pgl_cmp_print_best(m, f, w);
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
