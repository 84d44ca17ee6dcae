/*
 * report.c -- what `pgload run` reports: the summary on stdout, the --json
 * and --csv files.
 *
 * The summary starts with the line users of `time psql` know
 * ("real 1m0.467s user 0m3.290s sys 0m1.646s", means over the measured
 * runs), then a table of mean ± sd, min … max, CV and n per phase and
 * metric, hyperfine style.  Warmup runs appear only in --json and --csv
 * (flagged), never in the statistics.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "pgload.h"
#include "run_i.h"
#include "stats.h"

#define MB 1e6

enum metric { M_REAL, M_USER, M_SYS, M_ROWS_S, M_MB_S, M_WAL, M_NMETRIC };
static const char *const metric_names[M_NMETRIC] = {
    "real", "user", "sys", "rows/s", "MB/s", "WAL",
};
static const char *const metric_units[M_NMETRIC] = {"s", "s", "s", "", "", "MB"};

static bool metric_value(const struct pgl_phase_result *r, enum metric m, double *v)
{
	switch (m) {
	case M_REAL:
		*v = r->real;
		return true;
	case M_USER:
		*v = r->user;
		return true;
	case M_SYS:
		*v = r->sys;
		return true;
	case M_ROWS_S:
		if (!r->rows || r->real <= 0)
			return false;
		*v = (double)r->rows / r->real;
		return true;
	case M_MB_S:
		if (!r->bytes || r->real <= 0)
			return false;
		*v = (double)r->bytes / MB / r->real;
		return true;
	case M_WAL:
		*v = (double)r->wal / MB;
		return true;
	default:
		return false;
	}
}

/* total_of() -- a run's phases added up (rates over the summed time). */
static void total_of(const struct pgl_run_result *rr, struct pgl_phase_result *t)
{
	memset(t, 0, sizeof(*t));
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		const struct pgl_phase_result *r = &rr->ph[ph];
		if (!r->present)
			continue;
		t->present = true;
		t->real += r->real;
		t->user += r->user;
		t->sys += r->sys;
		t->rows += r->rows;
		t->bytes += r->bytes;
		t->wal += r->wal;
		t->statements += r->statements;
		t->errors += r->errors;
	}
}

/*
 * scale_for() -- unit and divisor for values around V: times in s or ms,
 * sizes in MB, rates as plain numbers.
 */
static const char *scale_for(enum metric m, double v, double *div)
{
	*div = 1;
	if (m == M_REAL || m == M_USER || m == M_SYS) {
		if (fabs(v) < 1.0) {
			*div = 1e-3;
			return "ms";
		}
		return "s";
	}
	return metric_units[m];
}

static void fmt_num(char *buf, size_t cap, double v, const char *unit)
{
	const char *sp = *unit ? " " : "";
	if (fabs(v) >= 100000)
		snprintf(buf, cap, "%.0f%s%s", v, sp, unit);
	else if (fabs(v) >= 100)
		snprintf(buf, cap, "%.1f%s%s", v, sp, unit);
	else
		snprintf(buf, cap, "%.3f%s%s", v, sp, unit);
}

/* put_padded() -- S left-aligned in WIDTH display columns (UTF-8 aware). */
static void put_padded(FILE *f, const char *s, int width)
{
	int cols = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			cols++;
	fputs(s, f);
	for (; cols < width; cols++)
		fputc(' ', f);
}

/*
 * print_io() -- the data phase's per-class I/O on pgiofs: means over the
 * measured runs that have figures; classes without any I/O are left out.
 * A class some of whose files were in FUSE passthrough (its reads and
 * writes bypass pgiofs) is marked "*"; one whose files all were shows
 * "n/s" (not seen) for reads and writes rather than zeros.
 */
static void print_io(const struct pgl_ctx *c, FILE *f)
{
	double sum[PGL_IO_NCLASS][PGL_IO_NFIELD] = {{0}};
	unsigned char seen[PGL_IO_NCLASS] = {0}; /* the least seen of the runs */
	int n = 0;
	for (int i = 0; i < c->nresults; i++) {
		const struct pgl_phase_result *r = &c->results[i].ph[PGL_PH_DATA];
		if (c->results[i].warmup || !r->present || !r->has_io)
			continue;
		n++;
		for (int k = 0; k < PGL_IO_NCLASS; k++) {
			for (int x = 0; x < PGL_IO_NFIELD; x++)
				sum[k][x] += (double)r->io.v[k][x];
			if (r->io.seen[k] > seen[k])
				seen[k] = r->io.seen[k];
		}
	}
	if (n == 0)
		return;
	fprintf(f, "\nI/O of the data phase on pgiofs (%s, mean of %d run%s)\n", c->io_mnt, n,
		n > 1 ? "s" : "");
	fprintf(f, "%-8s %10s %10s %10s %10s %10s\n", "class", "read MB", "read ops", "write MB",
		"write ops", "sync ops");
	double tot[PGL_IO_NFIELD] = {0};
	bool unseen = false;
	for (int k = 0; k < PGL_IO_NCLASS; k++) {
		bool any = false;
		char name[16];
		for (int x = 0; x < PGL_IO_NFIELD; x++) {
			any |= sum[k][x] > 0;
			tot[x] += sum[k][x];
		}
		if (!any)
			continue;
		unseen |= seen[k] != PGL_SEEN_ALL;
		snprintf(name, sizeof(name), "%s%s", pgl_io_class_names[k],
			 seen[k] == PGL_SEEN_PARTIAL ? "*" : "");
		if (seen[k] == PGL_SEEN_NONE)
			fprintf(f, "%-8s %10s %10s %10s %10s %10.0f\n", name, "n/s", "n/s", "n/s",
				"n/s", sum[k][PGL_IO_SYNC_OPS] / n);
		else
			fprintf(f, "%-8s %10.1f %10.0f %10.1f %10.0f %10.0f\n", name,
				sum[k][PGL_IO_READ_BYTES] / n / MB, sum[k][PGL_IO_READ_OPS] / n,
				sum[k][PGL_IO_WRITE_BYTES] / n / MB, sum[k][PGL_IO_WRITE_OPS] / n,
				sum[k][PGL_IO_SYNC_OPS] / n);
	}
	fprintf(f, "%-8s %10.1f %10.0f %10.1f %10.0f %10.0f\n", unseen ? "total*" : "total",
		tot[PGL_IO_READ_BYTES] / n / MB, tot[PGL_IO_READ_OPS] / n,
		tot[PGL_IO_WRITE_BYTES] / n / MB, tot[PGL_IO_WRITE_OPS] / n,
		tot[PGL_IO_SYNC_OPS] / n);
	if (unseen)
		fprintf(f, "n/s: not seen, *: partly seen (files in FUSE passthrough are read and "
			   "written past pgiofs; their opens and syncs are counted)\n");
}

void pgl_report_summary(struct pgl_ctx *c, FILE *f)
{
	const struct pgl_opts *o = c->o;
	int nmeasured = 0;
	uint64_t errors = 0;
	struct pgl_phase_result tot;
	const int NROW = PGL_NPHASE + 1; /* phases, then total */
	struct stats_summary sum[PGL_NPHASE + 1][M_NMETRIC];
	/* the values of each row and metric over the measured runs */
	size_t nval[PGL_NPHASE + 1][M_NMETRIC] = {{0}};
	double *val = malloc(sizeof(*val) * (size_t)(NROW * M_NMETRIC) * (size_t)(c->nresults + 1));

	if (!val) {
		fprintf(f, "pgload: out of memory for the summary\n");
		return;
	}
	for (int i = 0; i < c->nresults; i++) {
		const struct pgl_run_result *rr = &c->results[i];
		if (rr->warmup)
			continue;
		nmeasured++;
		total_of(rr, &tot);
		errors += tot.errors;
		for (int row = 0; row < NROW; row++) {
			const struct pgl_phase_result *r = row < PGL_NPHASE ? &rr->ph[row] : &tot;
			if (!r->present)
				continue;
			for (int m = 0; m < M_NMETRIC; m++) {
				double *v =
				    val + (size_t)(row * M_NMETRIC + m) * (size_t)c->nresults;
				if (metric_value(r, (enum metric)m, &v[nval[row][m]]))
					nval[row][m]++;
			}
		}
	}
	for (int row = 0; row < NROW; row++)
		for (int m = 0; m < M_NMETRIC; m++)
			stats_summarize(val + (size_t)(row * M_NMETRIC + m) * (size_t)c->nresults,
					nval[row][m], &sum[row][m]);
	free(val);
	if (nmeasured == 0) {
		fprintf(f, "pgload: no measured run completed\n");
		return;
	}
	fprintf(f, "pgload: %d run%s%s", nmeasured, nmeasured > 1 ? "s" : "", o->warmup ? "" : "");
	if (o->warmup)
		fprintf(f, " after %d warmup", o->warmup);
	fprintf(f, ", PostgreSQL %s, %s%s%s, jobs %d%s\n", c->server_version,
		c->server ? "embedded server" : "named server", o->label ? ", " : "",
		o->label ? o->label : "", o->jobs, o->pipeline ? ", pipeline" : "");
	fprintf(f, "\n");
	/* the `time` lines: means over the measured runs */
	int nphases = (sum[0][M_REAL].n != 0) + (sum[1][M_REAL].n != 0) + (sum[2][M_REAL].n != 0);
	for (int row = 0; row < NROW; row++) {
		if (sum[row][M_REAL].n == 0 || (row == PGL_NPHASE && nphases < 2))
			continue;
		char r[32], u[32], s[32];
		pgl_fmt_time(r, sizeof(r), sum[row][M_REAL].mean);
		pgl_fmt_time(u, sizeof(u), sum[row][M_USER].mean);
		pgl_fmt_time(s, sizeof(s), sum[row][M_SYS].mean);
		fprintf(f, "%-7s real %s user %s sys %s\n",
			row < PGL_NPHASE ? pgl_phase_names[row] : "total", r, u, s);
	}
	fprintf(f, "\n");
	put_padded(f, "phase", 8);
	put_padded(f, "metric", 8);
	put_padded(f, "mean ± sd", 26);
	put_padded(f, "min … max", 28);
	fprintf(f, "%6s %4s\n", "CV", "n");
	for (int row = 0; row < NROW; row++) {
		if (sum[row][M_REAL].n == 0 || (row == PGL_NPHASE && nphases < 2))
			continue;
		for (int m = 0; m < M_NMETRIC; m++) {
			const struct stats_summary *a = &sum[row][m];
			if (a->n == 0)
				continue;
			char mean[32], sd[32], mn[32], mx[32], ms[72], range[72];
			double d;
			const char *unit = scale_for((enum metric)m, a->mean, &d);
			fmt_num(mean, sizeof(mean), a->mean / d, unit);
			fmt_num(sd, sizeof(sd), a->sd / d, unit);
			fmt_num(mn, sizeof(mn), a->min / d, unit);
			fmt_num(mx, sizeof(mx), a->max / d, unit);
			snprintf(ms, sizeof(ms), "%s ± %s", mean, sd);
			snprintf(range, sizeof(range), "%s … %s", mn, mx);
			put_padded(f, row < PGL_NPHASE ? pgl_phase_names[row] : "total", 8);
			put_padded(f, metric_names[m], 8);
			put_padded(f, ms, 26);
			put_padded(f, range, 28);
			fprintf(f, "%5.1f%% %4zu\n", a->cv_pct, a->n);
		}
	}

	print_io(c, f);

	/* tables of the last measured run */
	const struct pgl_run_result *last = NULL;
	for (int i = c->nresults - 1; i >= 0 && !last; i--)
		if (!c->results[i].warmup)
			last = &c->results[i];
	struct pgl_tables all = {0};
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		pgl_tables_merge(&all, &last->ph[ph].tables);
	if (all.count > 0) {
		fprintf(f, "\n%-40s %14s %12s\n", "table (last run)", "rows", "MB");
		uint64_t rows = 0, bytes = 0;
		for (struct pgl_table_stat *e = all.first; e; e = e->order) {
			fprintf(f, "%-40s %14llu %12.1f\n", e->name, (unsigned long long)e->rows,
				(double)e->bytes / MB);
			rows += e->rows;
			bytes += e->bytes;
		}
		fprintf(f, "%-40s %14llu %12.1f\n", "total", (unsigned long long)rows,
			(double)bytes / MB);
	}
	pgl_tables_free(&all);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(f, "\npgload peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
	if (errors)
		fprintf(f, "\nerrors: %llu (continued past them)\n", (unsigned long long)errors);
	fflush(f);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_phase(FILE *f, const struct pgl_phase_result *r)
{
	fprintf(f,
		"{\"real_s\": %.6f, \"user_s\": %.6f, \"sys_s\": %.6f, \"rows\": %llu, "
		"\"bytes\": %llu, \"wal_bytes\": %llu, \"statements\": %llu, \"errors\": %llu, "
		"\"tables\": [",
		r->real, r->user, r->sys, (unsigned long long)r->rows, (unsigned long long)r->bytes,
		(unsigned long long)r->wal, (unsigned long long)r->statements,
		(unsigned long long)r->errors);
	for (struct pgl_table_stat *e = r->tables.first; e; e = e->order) {
		fprintf(f, "%s{\"name\": ", e == r->tables.first ? "" : ", ");
		json_str_write(f, e->name);
		fprintf(f, ", \"rows\": %llu, \"bytes\": %llu}", (unsigned long long)e->rows,
			(unsigned long long)e->bytes);
	}
	fprintf(f, "]");
	if (r->has_io) {
		/* every class, as `pgiofs stat` names them: after minus before */
		fprintf(f, ", \"io\": {");
		for (int k = 0; k < PGL_IO_NCLASS; k++) {
			fprintf(f, "%s\"%s\": {", k ? ", " : "", pgl_io_class_names[k]);
			for (int x = 0; x < PGL_IO_NFIELD; x++)
				fprintf(f, "%s\"%s\": %llu", x ? ", " : "", pgl_io_field_names[x],
					(unsigned long long)r->io.v[k][x]);
			fprintf(f, ", \"bytes_seen\": \"%s\"}", pgl_io_seen_names[r->io.seen[k]]);
		}
		fprintf(f, "}");
	}
	fprintf(f, "}");
}

static FILE *open_out(const char *path)
{
	if (strcmp(path, "-") == 0)
		return stdout;
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "pgload: could not write \"%s\": %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) == 0 ? 0 : -EIO;
	if (ferror(f) | (fclose(f) != 0)) {
		fprintf(stderr, "pgload: could not write \"%s\": %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int pgl_report_json(struct pgl_ctx *c, const char *path)
{
	const struct pgl_opts *o = c->o;
	FILE *f = open_out(path);
	if (!f)
		return -errno;
	fprintf(f, "{\n  \"tool\": \"pgload\",\n  \"label\": ");
	json_str_write(f, o->label);
	fprintf(f,
		",\n  \"settings\": {\"runs\": %d, \"warmup\": %d, \"jobs\": %d, "
		"\"pipeline\": %s, \"continue_on_error\": %s, \"db\": ",
		o->runs, o->warmup, o->jobs, o->pipeline ? "true" : "false",
		o->cont ? "true" : "false");
	json_str_write(f, o->db);
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		fprintf(f, ", \"%s_file\": ", pgl_phase_names[ph]);
		if (o->file[ph])
			json_str_write(f, o->file[ph]);
		else
			fprintf(f, "null");
	}
	fprintf(f, "},\n  \"server\": {\"version\": ");
	json_str_write(f, c->server_version);
	fprintf(f, ", \"embedded\": %s, \"data_directory\": ", c->server ? "true" : "false");
	json_str_write(f, c->datadir);
	fprintf(f, ", \"fstype\": ");
	json_str_write(f, c->fstype);
	fprintf(f, ", \"on_pgiofs\": %s, \"pgiofs_profile\": ", o->on_pgiofs ? "true" : "false");
	if (o->on_pgiofs)
		json_str_write(f, o->profile ? o->profile : "default");
	else
		fprintf(f, "null");
	fprintf(f, ", \"pgiofs_mount\": ");
	if (c->io_mnt[0])
		json_str_write(f, c->io_mnt);
	else
		fprintf(f, "null");
	fprintf(f, ", \"kernel\": ");
	json_str_write(f, c->kernel);
	fprintf(f, ", \"settings\": {");
	for (int i = 0; i < c->nsettings; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str_write(f, c->setting_name[i]);
		fprintf(f, ": ");
		json_str_write(f, c->setting_val[i]);
	}
	struct rusage ru;
	fprintf(f, "}},\n  \"client_peak_rss_kb\": %ld,\n  \"runs\": [",
		getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1L);
	for (int i = 0; i < c->nresults; i++) {
		const struct pgl_run_result *rr = &c->results[i];
		fprintf(f, "%s\n    {\"run\": %d, \"warmup\": %s, \"phases\": {", i ? "," : "",
			i + 1, rr->warmup ? "true" : "false");
		bool first = true;
		for (int ph = 0; ph < PGL_NPHASE; ph++) {
			if (!rr->ph[ph].present)
				continue;
			fprintf(f, "%s\n      \"%s\": ", first ? "" : ",", pgl_phase_names[ph]);
			json_phase(f, &rr->ph[ph]);
			first = false;
		}
		fprintf(f, "}}");
	}
	fprintf(f, "\n  ]\n}\n");
	return close_out(f, path);
}

void pgl_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int pgl_report_csv(struct pgl_ctx *c, const char *path)
{
	FILE *f = open_out(path);
	if (!f)
		return -errno;
	fprintf(f, "label,run,warmup,phase,real_s,user_s,sys_s,rows,bytes,wal_bytes,statements,"
		   "errors");
	/* on pgiofs: CLASS_COUNTER columns for every class, empty without figures */
	bool io = c->io_mnt[0] != '\0';
	for (int k = 0; io && k < PGL_IO_NCLASS; k++)
		for (int x = 0; x < PGL_IO_NFIELD; x++)
			fprintf(f, ",%s_%s", pgl_io_class_names[k], pgl_io_field_names[x]);
	fprintf(f, "\n");
	const char *label = c->o->label ? c->o->label : "";
	for (int i = 0; i < c->nresults; i++) {
		const struct pgl_run_result *rr = &c->results[i];
		for (int ph = 0; ph < PGL_NPHASE; ph++) {
			const struct pgl_phase_result *r = &rr->ph[ph];
			if (!r->present)
				continue;
			pgl_csv_field(f, label);
			fprintf(f, ",%d,%d,%s,%.6f,%.6f,%.6f,%llu,%llu,%llu,%llu,%llu", i + 1,
				rr->warmup ? 1 : 0, pgl_phase_names[ph], r->real, r->user, r->sys,
				(unsigned long long)r->rows, (unsigned long long)r->bytes,
				(unsigned long long)r->wal, (unsigned long long)r->statements,
				(unsigned long long)r->errors);
			for (int k = 0; io && k < PGL_IO_NCLASS; k++)
				for (int x = 0; x < PGL_IO_NFIELD; x++) {
					if (r->has_io)
						fprintf(f, ",%llu",
							(unsigned long long)r->io.v[k][x]);
					else
						fputc(',', f);
				}
			fputc('\n', f);
		}
	}
	return close_out(f, path);
}
