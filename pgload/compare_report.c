/*
 * compare_report.c -- the files of `pgload compare`'s report in --out:
 * table.txt (the tables, compare_table.c, also printed on stdout),
 * results.json (schema pgload.compare/1: every figure of every run, the
 * verdict on each figure, and what the cells were measured with) and
 * results.csv (a row per run).  The page, index.html, is compare_html.c's.
 *
 * What must stay true: every key docs/pgload.md lists is written, null
 * where a cell has no such figure, never left out; a number is a JSON
 * number (the values read from sysfs and pgdisk's stats are written as
 * numbers where they are numbers, as strings otherwise).
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"
#include "json.h"
#include "version.h"

#include "commit.h" /* PGL_GIT_COMMIT, made by the Makefile */

#define COMPARE_SCHEMA "pgload.compare/1"

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

/* json_floor() -- the figures of the floor (--floor), or null. */
static void json_floor(FILE *f, const struct cmp *m, const struct oltp_figures *o)
{
	if (!m->floor)
		fprintf(f, "null");
	else
		json_oltp(f, m, o);
}

/* json_spans() -- N spans of a timeline as [{"start_s", "end_s", ...}]. */
static void json_spans(FILE *f, const struct tl_span *x, int n, bool ckpt)
{
	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"start_s\": %.3f, \"end_s\": ", i ? ", " : "", x[i].start);
		if (x[i].end < 0)
			fprintf(f, "null");
		else
			fprintf(f, "%.3f", x[i].end);
		if (ckpt) {
			fprintf(f, ", \"kind\": ");
			json_str_write(f, x[i].what);
			fprintf(f, ", \"write_s\": %.3f, \"sync_s\": %.3f", x[i].write_s,
				x[i].sync_s);
		}
		fprintf(f, "}");
	}
	fprintf(f, "]");
}

/* json_timeline() -- what happened during one import (timeline.c). */
static void json_timeline(FILE *f, const struct timeline *tl)
{
	fprintf(f, "{\"seconds\": %.6f, \"post_start_s\": ", tl->secs);
	if (tl->post_start < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%.3f", tl->post_start);
	fprintf(f, ", \"per_second\": [");
	for (int k = 0; k < tl->nsec; k++)
		fprintf(f, "%s[%u, %.3f, %.3f]", k ? ", " : "", tl->sec[k].tx, tl->sec[k].p99,
			tl->sec[k].max);
	fprintf(f, "],\n         \"checkpoints\": ");
	if (tl->has_log)
		json_spans(f, tl->ckpt, tl->nckpt, true);
	else
		fprintf(f, "null");
	fprintf(f, ", \"wal_segments_created\": ");
	if (tl->has_wal)
		json_spans(f, tl->seg, tl->nseg, false);
	else
		fprintf(f, "null");
	fprintf(f, ", \"wal_segments_recycled\": ");
	if (tl->has_wal)
		fprintf(f, "%d", tl->recycled);
	else
		fprintf(f, "null");
	fprintf(f, ", \"wal_segments_made_ahead\": ");
	if (tl->made_ahead >= 0)
		fprintf(f, "%d}", tl->made_ahead);
	else
		fprintf(f, "null}");
}

/* json_mb_s() -- "NAME": a streaming figure (MB/s, %), or null if not
 * measured (V < 0). */
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
		fprintf(f, ", \"direct_io\": %s",
			c->queue.direct_io < 0 ? "null"
			: c->queue.direct_io   ? "true"
					       : "false");
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
		bool cached = pgl_cmp_stream_cached(c);
		json_mb_s(f, "file_read_mb_s", cached ? -1 : c->stream_read);
		fprintf(f, ", ");
		json_mb_s(f, "file_read_cached_mb_s", cached ? c->stream_read : -1);
		fprintf(f, ", ");
		json_mb_s(f, "file_resident_pct", c->stream_resident_pct);
		fprintf(f, "}");
	}
	fprintf(f, ",\n     \"caps\": ");
	pgl_cmp_json_caps(f, c);
	fprintf(f, ",\n");
}

/* json_best() -- ", "best": [...]": the verdict on every figure. */
static void json_best(FILE *f, const struct cmp *m)
{
	fprintf(f, ",\n  \"best\": [");
	const char *sep = "";
	for (size_t k = 0; k < pgl_cmp_nfigures; k++) {
		const struct figure *fig = &pgl_cmp_figures[k];
		struct verdict v;
		if (!pgl_cmp_judge(m, fig, &v))
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
			", \"ratio\": %.4f, \"tie\": %s, \"runs_overlap\": %s, \"all_within\": %s",
			v.vs > 0 ? v.vb / v.vs : 0, v.tie_next ? "true" : "false",
			v.overlap ? "true" : "false", v.all_tied ? "true" : "false");
		fprintf(f, ", \"runs\": [%d, %d], \"ranges\": ", v.sep.na, v.sep.nb);
		if (v.sep.na)
			fprintf(f, "[[%.6g, %.6g], [%.6g, %.6g]]}", v.sep.alo, v.sep.ahi, v.sep.blo,
				v.sep.bhi);
		else
			fprintf(f, "null}");
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
	fprintf(f, ", \"pg_sets\": ");
	json_list(f, m->pg_set, m->npg_set);
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
		fprintf(f, "{\"clients\": %d, \"scale\": %d, \"floor\": %s, \"wal_floor\": %s}",
			m->oltp_clients, m->oltp_scale, m->floor ? "true" : "false",
			m->wal_floor ? "true" : "false");
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
		json_str_or_null(f, c->spec->device[0] ? c->spec->device : c->spec->path);
		fprintf(f, ", \"set_up_per_run\": %s", c->turns ? "true" : "false");
		fprintf(f, ", \"profile\": ");
		json_str_write(f, pgl_cmp_profile_name(c));
		fprintf(f, ", \"pgiofs\": %s, \"wal_floor\": %s, \"set\": ",
			c->profile ? "true" : "false", c->walfloor ? "true" : "false");
		json_cell_sweeps(m, c, f, SWEEP_PGIOFS);
		fprintf(f, ",\n     \"queue_set\": ");
		json_cell_sweeps(m, c, f, SWEEP_QUEUE);
		fprintf(f, ", \"disk_set\": ");
		json_cell_sweeps(m, c, f, SWEEP_DISK);
		/* as the cell's server said (current_setting()), --pg-set's among them */
		fprintf(f, ",\n     \"server_settings\": {");
		for (int k = 0; k < c->c.nsettings; k++) {
			fprintf(f, "%s", k ? ", " : "");
			json_str_write(f, c->c.setting_name[k]);
			fprintf(f, ": ");
			json_str_write(f, c->c.setting_val[k]);
		}
		fprintf(f, "},\n");
		/* native cells: where the cluster was (--wal-floor's: pg_wal only) */
		fprintf(f, "     \"on_backend\": ");
		if (c->data_on_backend < 0 || c->wal_on_backend < 0)
			fprintf(f, "null,\n");
		else
			fprintf(f, "{\"data\": %s, \"pg_wal\": %s},\n",
				c->data_on_backend ? "true" : "false",
				c->wal_on_backend ? "true" : "false");
		json_cell_devices(f, c);
		fprintf(f, "     \"oltp\": ");
		json_oltp(f, m, &c->oltp);
		fprintf(f, ", \"floor\": ");
		json_floor(f, m, &c->floor);
		/* over --wal-floor's cell of the same back end */
		const struct cell *wf = pgl_cmp_wal_floor_of(m, c);
		fprintf(f, ",\n     \"vs_wal_floor\": ");
		if (wf)
			fprintf(f,
				"{\"cell\": %d, \"p50\": %.6f, \"p99\": %.6f, \"p999\": %.6f, "
				"\"max\": %.6f, \"tps\": %.6f}",
				wf->idx + 1, pgl_cmp_over(c->oltp.p50, wf->oltp.p50),
				pgl_cmp_over(c->oltp.p99, wf->oltp.p99),
				pgl_cmp_over(c->oltp.p999, wf->oltp.p999),
				pgl_cmp_over(c->oltp.max, wf->oltp.max),
				pgl_cmp_over(c->oltp.tps, wf->oltp.tps));
		else
			fprintf(f, "null");
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
		fprintf(f, "     \"vs_baseline\": ");
		json_str_or_null(f, i == m->baseline ? NULL : pgl_cmp_baseline_word(m, c));
		fprintf(f, ",\n");
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
			fprintf(f, ", \"floor\": ");
			json_floor(f, m, &s->floor);
			fprintf(f, ", \"caps\": ");
			if (c->spec->capped)
				pgl_cmp_json_caps_use(f, &s->caps);
			else
				fprintf(f, "null");
			fprintf(f, ",\n        \"timeline\": ");
			json_timeline(f, &s->tl);
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
			fprintf(f, ",%s,", pgl_cmp_profile_name(c));
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

int pgl_cmp_report(struct cmp *m)
{
	char *table = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&table, &len);
	if (!mem)
		return -ENOMEM;
	pgl_cmp_print_table(m, mem);
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
