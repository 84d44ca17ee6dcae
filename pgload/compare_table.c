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
		fprintf(f, "%-*s %-5s %6s %6s %5s %8s %9s %9s %9s %9s %8s %17s\n", w,
			"Backend/profile", "model", "MB/s", "seek", "rpm", "track", "requests",
			"read MB", "write MB", "seek s", "held", "late ms p99/max");
		for (int i = 0; i < m->ncell; i++) {
			const struct cell *c = &m->cell[i];
			const char *st = c->disk_stats;
			char model[16];
			if (!st[0] || !pgl_cmp_disk_value(st, "model", model, sizeof(model)))
				continue;
			char late[48], p99[16] = "-";
			if (pgl_cmp_disk_value(st, "late_ns_p99", p99, sizeof(p99)))
				snprintf(p99, sizeof(p99), "%.2f", strtod(p99, NULL) / 1e6);
			snprintf(late, sizeof(late), "%s/%.2f", p99,
				 pgl_cmp_disk_num(st, "late_ns_max") / 1e6);
			/* an hdd's settings; a capped volume's are in its own table */
			char hdd[48] = "     -      -     -        -";
			if (!c->spec->capped)
				snprintf(hdd, sizeof(hdd), "%6.1f %6.2f %5.0f %6.0f K",
					 pgl_cmp_disk_num(st, "seq_mb_s"),
					 pgl_cmp_disk_num(st, "seek_ms"),
					 pgl_cmp_disk_num(st, "rpm"),
					 pgl_cmp_disk_num(st, "track_kb"));
			fprintf(f, "%-*s %-5s %s %9.0f %9.1f %9.1f %9.2f %8.0f %17s\n", w, c->label,
				model, hdd, pgl_cmp_disk_num(st, "completed"),
				pgl_cmp_disk_num(st, "read_bytes") / 1e6,
				pgl_cmp_disk_num(st, "write_bytes") / 1e6,
				pgl_cmp_disk_num(st, "seek_ns") / 1e9,
				pgl_cmp_disk_num(st, "held_max"), late);
		}
	}
}

/* print_spans() -- "  WHAT: ..." for N spans of a timeline, into F. */
static void print_spans(FILE *f, int w, const char *what, const struct tl_span *x, int n)
{
	fprintf(f, "%-*s   %s:", w, "", what);
	for (int i = 0; i < n; i++) {
		char end[24] = "end";
		if (x[i].end >= 0)
			snprintf(end, sizeof(end), "%.1f", x[i].end);
		fprintf(f, "%s %s%s%.1f-%s s", i ? "," : "", x[i].what, x[i].what[0] ? " " : "",
			x[i].start, end);
		if (x[i].write_s >= 0)
			fprintf(f, " (write %.1f s, sync %.1f s)", x[i].write_s, x[i].sync_s);
	}
	fprintf(f, "%s\n", n ? "" : " none");
}

/*
 * print_timelines() -- per cell, the import of its run with the slowest
 * commit, in brief: its length, the seconds in which no commit ended
 * (stalls), the worst second and what was under way in it, the checkpoints
 * and the WAL segments created.  The page draws it second by second.
 */
static void print_timelines(const struct cmp *m, FILE *f, int w)
{
	bool any = false;
	for (int i = 0; i < m->ncell; i++)
		any |= pgl_cmp_timeline_run(&m->cell[i]) >= 0;
	if (!any)
		return;
	fprintf(f, "\nCommit latency over the import (per cell, its run with the slowest commit; "
		   "stalls: seconds in which no commit ended; checkpoints from the server log, WAL "
		   "segments created from pg_wal)\n");
	fprintf(f, "%-*s %4s %8s %6s %9s %7s %9s %9s  %s\n", w, "Backend/profile", "run",
		"import s", "stalls", "worst s", "commits", "p99 ms", "max ms", "under way then");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		int r = pgl_cmp_timeline_run(c);
		if (r < 0)
			continue;
		const struct timeline *tl = &c->s[r].tl;
		int stalls = 0, k = pgl_tl_worst(tl);
		for (int j = 0; j < tl->nsec; j++)
			stalls += !tl->sec[j].tx;
		char during[512] = "", sec[24] = "-";
		if (k >= 0) {
			pgl_tl_describe(tl, k, during, sizeof(during));
			snprintf(sec, sizeof(sec), "%d-%d", k, k + 1);
		}
		fprintf(f, "%-*s %4d %8.2f %6d %9s %7u %9.1f %9.1f  %s\n", w, c->label,
			c->s[r].round, tl->secs, stalls, sec, k >= 0 ? tl->sec[k].tx : 0,
			k >= 0 ? tl->sec[k].p99 : 0, k >= 0 ? tl->sec[k].max : 0, during);
		if (tl->has_log)
			print_spans(f, w, "checkpoints", tl->ckpt, tl->nckpt);
		if (tl->has_wal) {
			double longest = 0;
			for (int j = 0; j < tl->nseg; j++)
				if (tl->seg[j].end >= 0 &&
				    tl->seg[j].end - tl->seg[j].start > longest)
					longest = tl->seg[j].end - tl->seg[j].start;
			fprintf(f, "%-*s   WAL segments: %d created", w, "", tl->nseg);
			if (tl->nseg)
				fprintf(f, " (the longest in %.2f s)", longest);
			fprintf(f, ", %d recycled", tl->recycled);
			if (tl->made_ahead >= 0)
				fprintf(f, ", %d made ahead by pgiofs", tl->made_ahead);
			fputc('\n', f);
		}
	}
}

/* print_floor() -- each cell's commit latency against its floor: the same
 * clients on the same cell without the import (--floor). */
static void print_floor(const struct cmp *m, FILE *f, int w)
{
	if (!m->floor)
		return;
	fprintf(f,
		"\nCommit latency against the floor (the same clients on the same cell, as long, "
		"without the import; all runs): the floor, then the import's figure over it\n");
	fprintf(f, "%-*s %9s %9s %9s %7s %8s %8s %8s %7s\n", w, "Backend/profile", "floor p99",
		"p99.9", "max", "tps", "p99 x", "p99.9 x", "max x", "tps x");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i];
		const struct oltp_figures *o = &c->oltp, *fl = &c->floor;
		if (!fl->tx || !o->tx)
			continue;
		fprintf(f, "%-*s %9.2f %9.2f %9.2f %7.1f %8.2f %8.2f %8.2f %7.2f\n", w, c->label,
			fl->p99, fl->p999, fl->max, fl->tps, pgl_cmp_over(o->p99, fl->p99),
			pgl_cmp_over(o->p999, fl->p999), pgl_cmp_over(o->max, fl->max),
			pgl_cmp_over(o->tps, fl->tps));
	}
}

/* print_wal_floor() -- each cell's commit latency during the import over
 * that of --wal-floor's cell of its back end: the same import and clients
 * with only pg_wal on the back end, which no ordering of the other writes
 * can beat. */
static void print_wal_floor(const struct cmp *m, FILE *f, int w)
{
	if (!m->wal_floor)
		return;
	fprintf(f, "\nCommit latency against the WAL-alone floor (the same import and clients "
		   "with only pg_wal on the back end, the \"walonly\" cell; all runs): each "
		   "figure over the floor's, then the floor's\n");
	fprintf(f, "%-*s %8s %8s %8s %8s %7s  %s\n", w, "Backend/profile", "p50 x", "p99 x",
		"p99.9 x", "max x", "tps x", "floor p50 / p99 / p99.9 / max ms, tps");
	for (int i = 0; i < m->ncell; i++) {
		const struct cell *c = &m->cell[i], *wf = pgl_cmp_wal_floor_of(m, c);
		if (!wf)
			continue;
		const struct oltp_figures *o = &c->oltp, *fl = &wf->oltp;
		fprintf(f, "%-*s %8.2f %8.2f %8.2f %8.2f %7.2f  %.1f / %.1f / %.1f / %.1f, %.1f\n",
			w, c->label, pgl_cmp_over(o->p50, fl->p50), pgl_cmp_over(o->p99, fl->p99),
			pgl_cmp_over(o->p999, fl->p999), pgl_cmp_over(o->max, fl->max),
			pgl_cmp_over(o->tps, fl->tps), fl->p50, fl->p99, fl->p999, fl->max,
			fl->tps);
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
		"PostgreSQL %s",
		m->runs, m->runs == 1 ? "" : "s", wl, pgl_load_names[m->load], ol,
		m->device ? "; pgiofs device " : "", m->device ? m->device : "", m->server_version);
	for (int i = 0; i < m->npg_set; i++)
		fprintf(f, "%s%s", i ? ", " : " with ", m->pg_set[i]);
	fprintf(f, "\n\n");
	fprintf(f, "%-*s %6s %9s %9s %7s %6s", w, "Backend/profile", "[runs]", "Schema(s)",
		"Import(s)", "±sd", "CPU%");
	if (loads)
		fprintf(f, " %9s %6s", "Loads(MB)", "LCPU%");
	if (oltp)
		fprintf(f, " %8s %8s %8s %8s %7s", "p50(ms)", "p99(ms)", "p99.9", "max(ms)", "tps");
	bool late = false;
	for (int i = 0; i < m->ncell; i++)
		late |= pgl_cmp_disk_num(m->cell[i].disk_stats, "late_ns_max") > 0;
	if (late)
		fprintf(f, " %8s", "late(ms)");
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
		if (late && c->disk_stats[0])
			fprintf(f, " %8.2f", pgl_cmp_disk_num(c->disk_stats, "late_ns_max") / 1e6);
		else if (late)
			fprintf(f, " %8s", "-");
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
	if (late)
		fprintf(f, "late: the most pgdisk released a request later than its model said "
			   "(a busy machine), since it started; its percentiles below\n");
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
	pgl_cmp_print_vs_baseline(m, f);
	pgl_cmp_print_best(m, f, w);
	print_timelines(m, f, w);
	print_floor(m, f, w);
	print_wal_floor(m, f, w);
	print_devices(m, f, w);
	pgl_cmp_print_caps(m, f, w);
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
