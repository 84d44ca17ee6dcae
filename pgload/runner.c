/*
 * runner.c -- the steps of a run, shared by `pgload run` (cmd_run.c) and
 * `pgload compare` (cmd_compare.c), which drives a cluster per cell, each
 * with its own context: what the server is, a fresh database, one timed
 * phase, and dropping the database again after an interrupt.
 *
 * A phase is timed on its own: wall clock, this process's user and system
 * CPU (as `time` reports them for psql), rows and bytes per table, WAL bytes
 * from pg_current_wal_lsn(), and on a pgiofs mount the per-class I/O from
 * `pgiofs stat` before and after.
 *
 * What must stay true: only databases pgload created (marked with a
 * comment) are dropped, unless --force; after an interrupt only the one
 * this process created.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pgload.h"
#include "pgload_i.h"
#include "run_i.h"

#define DB_MARKER "pgload scratch database"

/* wal_lsn() -- the current WAL insert position in bytes. */
static int wal_lsn(struct pgl_ctx *c, uint64_t *lsn)
{
	char buf[64];
	unsigned hi, lo;
	int ret = pgl_admin_exec(c->admin, "SELECT pg_current_wal_lsn()", buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, "%X/%X", &hi, &lo) != 2) {
		fprintf(stderr, "pgload: cannot parse WAL position \"%s\"\n", buf);
		return -EPROTO;
	}
	*lsn = (uint64_t)hi << 32 | lo;
	return 0;
}

int pgl_prepare_db(struct pgl_ctx *c)
{
	const char *db = c->o->db;
	char *lit = PQescapeLiteral(c->admin, db, strlen(db));
	char *id = PQescapeIdentifier(c->admin, db, strlen(db));
	char sql[1024], val[256];
	int ret;
	if (pgl_step("createdb", "creating the database \"%s\"", db)) {
		ret = -EINTR;
		goto out;
	}
	if (!lit || !id) {
		fprintf(stderr, "pgload: cannot quote the database name \"%s\": %s", db,
			PQerrorMessage(c->admin));
		ret = -ENOMEM;
		goto out;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT coalesce(shobj_description(oid, 'pg_database'), '') || '|' "
		 "FROM pg_database WHERE datname = %s",
		 lit);
	if ((ret = pgl_admin_exec(c->admin, sql, val, sizeof(val))) < 0)
		goto out;
	if (val[0]) {
		bool ours = strcmp(val, DB_MARKER "|") == 0;
		if (!ours && !c->o->force) {
			fprintf(stderr,
				"pgload: database \"%s\" exists and was not created by pgload "
				"(use --force to drop it, or --db NAME)\n",
				db);
			ret = -EEXIST;
			goto out;
		}
		snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", id);
		if ((ret = pgl_admin_exec(c->admin, sql, NULL, 0)) < 0)
			goto out;
		c->db_created = false;
	}
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", id);
	if ((ret = pgl_admin_exec(c->admin, sql, NULL, 0)) < 0)
		goto out;
	c->db_created = true; /* even before the marker: an interrupt drops it */
	snprintf(sql, sizeof(sql), "COMMENT ON DATABASE %s IS '" DB_MARKER "'", id);
	if ((ret = pgl_admin_exec(c->admin, sql, NULL, 0)) < 0)
		goto out;
	ret = pgl_admin_exec(c->admin, "CHECKPOINT", NULL, 0);
out:
	PQfreemem(lit);
	PQfreemem(id);
	return ret;
}

/* io_off() -- say once why there are no per-class I/O figures, and stop. */
static void io_off(struct pgl_ctx *c, const char *why)
{
	pgl_progress_clear(c); /* not in the middle of the progress line */
	fprintf(stderr, "pgload: `%s stat %s --json` failed (%s); going on without per-class I/O\n",
		c->io_bin, c->io_mnt, why);
	c->io_on = false;
}

/* io_snapshot() -- the pgiofs counters now; false if there are none. */
static bool io_snapshot(struct pgl_ctx *c, struct pgl_io *io)
{
	char err[600];
	if (!c->io_on)
		return false;
	if (pgl_io_sample(c->io_bin, c->io_mnt, io, err, sizeof(err)) < 0) {
		io_off(c, err);
		return false;
	}
	return true;
}

void pgl_io_setup(struct pgl_ctx *c)
{
	const char *own = c->server ? pgl_server_mount(c->server) : NULL;
	int ret = 0;
	/* a --dsn server's directory may be on another machine: it must exist here */
	if (c->datadir[0] && (access(c->datadir, F_OK) == 0 || errno != ENOENT))
		ret = pgl_io_find_mount(c->datadir, NULL, c->io_mnt, sizeof(c->io_mnt));
	if (ret <= 0 && own) {
		snprintf(c->io_mnt, sizeof(c->io_mnt), "%s", own);
		ret = 1;
	}
	if (ret <= 0) {
		c->io_mnt[0] = '\0';
		return;
	}
	ret = pgl_find_sibling("pgiofs", c->o->pgiofs_bin, c->io_bin, sizeof(c->io_bin));
	if (ret < 0) {
		snprintf(c->io_bin, sizeof(c->io_bin), "%s",
			 c->o->pgiofs_bin ? c->o->pgiofs_bin : "pgiofs");
		c->io_on = true;
		io_off(c, c->o->pgiofs_bin ? strerror(-ret)
					   : "no pgiofs binary beside pgload or on PATH");
		return;
	}
	c->io_on = true;
	if (!c->o->quiet)
		fprintf(stderr,
			"pgload: data directory on pgiofs mount %s: per-class I/O from `%s stat`\n",
			c->io_mnt, c->io_bin);
}

int pgl_run_phase(struct pgl_ctx *c, enum pgl_phase ph, struct pgl_phase_result *r)
{
	struct rusage ru0, ru1;
	uint64_t lsn0 = 0, lsn1 = 0;
	struct pgl_io io0, io1;
	int ret;
	const char *f = c->o->file[ph];
	if (pgl_step(pgl_phase_names[ph], "running the %s phase of %s", pgl_phase_names[ph],
		     strcmp(f, "-") == 0 ? "stdin" : f))
		return -EINTR;
	bool have_io0 = io_snapshot(c, &io0);
	if ((ret = wal_lsn(c, &lsn0)) < 0)
		return ret;
	c->progress_pos = 0;
	atomic_store(&c->progress_bytes, 0);
	atomic_store(&c->progress_rows, 0);
	atomic_store(&c->progress_stmts, 0);
	c->progress_phase = ph;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = pgl_now();
	ret = pgl_exec_file(c, c->o->file[ph], c->o->db, r, ph != PGL_PH_SCHEMA);
	double t1 = pgl_now();
	getrusage(RUSAGE_SELF, &ru1);
	r->present = true;
	r->real = t1 - t0;
	r->user = pgl_seconds(ru1.ru_utime) - pgl_seconds(ru0.ru_utime);
	r->sys = pgl_seconds(ru1.ru_stime) - pgl_seconds(ru0.ru_stime);
	if (pgl_aborts(ret))
		return ret;
	int r2 = wal_lsn(c, &lsn1);
	if (r2 < 0)
		return r2;
	r->wal = lsn1 >= lsn0 ? lsn1 - lsn0 : 0;
	if (have_io0 && io_snapshot(c, &io1)) {
		if (pgl_io_delta(&io0, &io1, &r->io) == 0)
			r->has_io = true;
		else
			io_off(c, "counters went down: was pgiofs remounted?");
	}
	return ret;
}

void pgl_server_info(struct pgl_ctx *c)
{
	static const char *const names[] = {
	    "shared_buffers",
	    "wal_level",
	    "fsync",
	    "synchronous_commit",
	    "full_page_writes",
	    "wal_compression",
	    "max_wal_size",
	    "checkpoint_timeout",
	    "maintenance_work_mem",
	    "work_mem",
	    "wal_buffers",
	    "data_checksums",
	    "max_parallel_maintenance_workers",
	    NULL,
	};
	const char *v = PQparameterStatus(c->admin, "server_version");
	snprintf(c->server_version, sizeof(c->server_version), "%.*s", v ? (int)strcspn(v, " ") : 7,
		 v ? v : "unknown");
	for (int i = 0; names[i] && i < PGL_MAXSETTINGS && !atomic_load(&pgl_interrupted); i++) {
		char sql[128], val[64];
		snprintf(sql, sizeof(sql), "SELECT current_setting('%s')", names[i]);
		if (pgl_admin_exec(c->admin, sql, val, sizeof(val)) == 0) {
			c->setting_name[c->nsettings] = names[i];
			snprintf(c->setting_val[c->nsettings], sizeof(c->setting_val[0]), "%s",
				 val);
			c->nsettings++;
		}
	}
	PGresult *res = PQexec(c->admin, "SELECT current_setting('data_directory')");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		snprintf(c->datadir, sizeof(c->datadir), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (c->datadir[0] && access(c->datadir, F_OK) == 0)
		snprintf(c->fstype, sizeof(c->fstype), "%s", pgl_fstype(c->datadir));
	else
		snprintf(c->fstype, sizeof(c->fstype), "unknown");
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(c->kernel, sizeof(c->kernel), "%s %s %s", u.sysname, u.release, u.machine);
}

void pgl_drop_run_db(struct pgl_ctx *c)
{
	const char *db = c->o->db;
	char *id = PQescapeIdentifier(c->admin, db, strlen(db));
	char sql[256];
	if (!id)
		return;
	PQclear(PQexec(c->admin, "SET statement_timeout = '30s'"));
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", id);
	PQfreemem(id);
	PGresult *res = PQexec(c->admin, sql);
	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		c->db_created = false;
		fprintf(stderr, "pgload: database \"%s\" dropped\n", db);
	} else {
		fprintf(stderr, "pgload: could not drop database \"%s\": %s", db,
			PQerrorMessage(c->admin));
	}
	PQclear(res);
}
