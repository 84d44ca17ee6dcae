/*
 * cmd_compare.c -- `pgload compare`: a matrix of back ends x scheduler
 * profiles (x swept pgiofs tunables), each cell a private PostgreSQL
 * cluster on its own back end of the test bed (testbed.h), the same
 * workload loaded N times into each, reported as a seed-style table,
 * ratios to a baseline, a tiobench-style latency table, JSON, CSV, SVG
 * charts and one HTML page (compare_verdict.c, compare_table.c,
 * compare_report.c, compare_html.c).
 *
 * This file is the command: the cells (back end, its queue and streaming
 * figures, server through pgiofs unless native, admin connection, the
 * OLTP tables), the rounds, and the clean-up.  The options are in
 * compare_opts.c, the background loads in bgload.c, the OLTP clients in
 * oltp.c.
 *
 * Measurement: runs are interleaved across cells (round 1: A B C, round 2:
 * A B C, ...) so that drift of a shared machine falls on every cell alike;
 * each run gets a fresh database (pgl_prepare_db(): drop, create,
 * CHECKPOINT) and ends with an untimed CHECKPOINT so that an idle cell does
 * not write behind the next one's back.  With --oltp the clients start
 * before the import and count only what ended during it.
 *
 * What must stay true: at exit -- success, error, SIGINT/SIGTERM -- no
 * mount, loop device, image, server, pgiofs daemon or directory made by the
 * run remains: every cell is stopped, then the test bed is destroyed, which
 * removes whatever a cell left.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "compare_i.h"
#include "pgload.h"

/* ---- small helpers ------------------------------------------------------- */

static void say(const struct cmp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct cmp *m, const char *fmt, ...)
{
	if (m->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("pgload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* cpu_busy() -- busy CPU seconds of the whole system (/proc/stat). */
static double cpu_busy(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		       &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return 0;
	/* user nice system [idle iowait] irq softirq steal */
	unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return (double)busy / (double)sysconf(_SC_CLK_TCK);
}

/* pgiofs_version() -- the first line of `pgiofs --version` of M's pgiofs
 * cells ("pgiofs 0.1.0 (libfuse 3.14.0)"); "" without pgiofs cells or if
 * it does not answer. */
static void pgiofs_version(struct cmp *m)
{
	char out[256];
	char *argv[] = {m->pgiofs, "--version", NULL};
	m->pgiofs_version[0] = '\0';
	if (m->pgiofs[0] && pgl_run_cmd(argv, out, sizeof(out)) == 0)
		snprintf(m->pgiofs_version, sizeof(m->pgiofs_version), "%.*s",
			 (int)strcspn(out, "\n"), out);
}

/* ---- cells ---------------------------------------------------------------- */

/* stream() -- the raw streaming figures of C's back end, on an idle disk. */
static int stream(const struct cmp *m, struct cell *c)
{
	uint64_t bytes = (uint64_t)m->stream_mb << 20;
	const char *dev = pgl_backend_device(c->be);
	struct pgl_stream st;
	if (c->streamed) /* a cell set up again (a device taken in turns): once is enough */
		return 0;
	c->stream_dev = c->stream_write = c->stream_read = -1;
	if (!m->stream_mb)
		return 0;
	if (pgl_step("stream", "measuring streaming reads and writes of %s",
		     dev ? dev : pgl_backend_root(c->be)))
		return -EINTR;
	int ret = pgl_stream(pgl_backend_root(c->be), dev, bytes, &st);
	if (ret < 0)
		return ret;
	c->stream_dev = st.dev_mb_s;
	c->stream_write = st.write_mb_s;
	c->stream_read = st.read_mb_s;
	/* tmpfs's medium is the page cache: nothing to drop, nothing to judge */
	c->stream_resident_pct = strcmp(c->spec->fs, "tmpfs") == 0 ? -1 : st.resident_pct;
	c->streamed = true;
	return 0;
}

/* settle() -- untimed: what the cluster has written goes to the disks now,
 * not during a run: initdb's files (written --no-sync, which no CHECKPOINT
 * syncs) and a run's leftovers would otherwise be written back by the
 * kernel 30 s later, in the middle of some run.  sync(2) twice: a pgiofs
 * mount's writeback lands in the page cache of the file system under it,
 * which the first pass may have synced already. */
static int settle(void)
{
	if (pgl_step("settle", "writing everything back (sync)"))
		return -EINTR;
	sync();
	sync();
	return 0;
}

/* The queue's tunables files.device_queue lowers on a rotating disk, each
 * with its pgiofs setting and the value that leaves it alone. */
static char *const queue_owned[][3] = {
    {"nr_requests", "files.device_requests", "files.device_requests=0"},
    {"max_sectors_kb", "files.device_request_kb", "files.device_request_kb=0"},
    {"async_depth", "files.device_write_depth", "files.device_write_depth=0"},
};

/* swept() -- whether M sweeps NAME with a --set of KIND. */
static bool swept(const struct cmp *m, enum sweep_kind kind, const char *name)
{
	for (int i = 0; i < m->nsets; i++)
		if (m->sets[i].kind == kind && strcmp(m->sets[i].name, name) == 0)
			return true;
	return false;
}

/* same_fs() -- 1 if A and B (symbolic links followed) are on one file
 * system, 0 if not, -1 if either cannot be looked at. */
static int same_fs(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return -1;
	return sa.st_dev == sb.st_dev;
}

/* where() -- whether a native cell's data directory and pg_wal are on its
 * back end ROOT, as the report says (--wal-floor's cell keeps only pg_wal
 * there); a pgiofs cell's are on its mount, above the back end. */
static void where(struct cell *c, const char *root)
{
	char wal[1100];
	const char *data = pgl_server_datadir(c->server);
	c->data_on_backend = c->wal_on_backend = -1;
	if (c->profile)
		return;
	snprintf(wal, sizeof(wal), "%s/pg_wal", data);
	c->data_on_backend = same_fs(data, root);
	c->wal_on_backend = same_fs(wal, root);
}

/* cell_start() -- back end, server (through pgiofs unless native), admin connection. */
static int cell_start(struct cmp *m, struct cell *c)
{
	char name[32];
	int ret;
	snprintf(name, sizeof(name), "cell%d", c->idx + 1);
	pgl_cmp_backend_opts(m, c);
	if ((ret = pgl_testbed_mkdir(m->tb, name, c->dir, sizeof(c->dir))) < 0 ||
	    (ret = pgl_backend_up(m->tb, c->spec, c->dir, &c->bo, &c->be)) < 0)
		return ret;
	const char *dev = pgl_backend_device(c->be);
	c->has_queue = dev && pgl_queue_read(dev, &c->queue) == 0;
	if ((ret = stream(m, c)) < 0)
		return ret;
	const char *root = pgl_backend_root(c->be);
	if (m->load == LOAD_READ && pgl_step("loadfile", "writing the read_load file in %s", root))
		return -EINTR;
	if (m->load == LOAD_READ && (ret = pgl_cmp_load_file(m, root)) < 0) {
		fprintf(stderr,
			"pgload compare: could not write the read_load file in \"%s\": %s\n", root,
			strerror(-ret));
		return ret;
	}
	char pgdata[1100], backing[1100], waldir[1100];
	snprintf(pgdata, sizeof(pgdata), "%s/data", root);
	snprintf(backing, sizeof(backing), "%s/backing", root);
	snprintf(waldir, sizeof(waldir), "%s/pg_wal", root);
	int na = 0, nb = 0;
	for (int i = 0; i < m->nsets && c->profile; i++) {
		if (m->sets[i].kind != SWEEP_PGIOFS || !c->setv[i])
			continue;
		snprintf(c->pgiofs_argbuf[nb], sizeof(c->pgiofs_argbuf[0]), "%s=%s",
			 m->sets[i].name, c->setv[i]);
		c->pgiofs_argv[na++] = "--set";
		c->pgiofs_argv[na++] = c->pgiofs_argbuf[nb++];
	}
	if (c->profile && m->device) {
		snprintf(c->pgiofs_argbuf[MAX_SETS], sizeof(c->pgiofs_argbuf[0]), "device.model=%s",
			 m->device);
		c->pgiofs_argv[na++] = "--set";
		c->pgiofs_argv[na++] = c->pgiofs_argbuf[MAX_SETS];
	}
	/* a --queue-set of what pgiofs's files.device_queue would lower: the
	 * cell runs with the value swept, as its label says */
	for (size_t k = 0; k < sizeof(queue_owned) / sizeof(queue_owned[0]) && c->profile; k++)
		if (swept(m, SWEEP_QUEUE, queue_owned[k][0]) &&
		    !swept(m, SWEEP_PGIOFS, queue_owned[k][1])) {
			c->pgiofs_argv[na++] = "--set";
			c->pgiofs_argv[na++] = queue_owned[k][2];
		}
	c->pgiofs_argv[na] = NULL;
	/* the checkpoints of a run's timeline, stamped with the epoch
	 * (timeline.c), then --pg-set's, which may not change those two */
	const char *settings[2 + MAX_PG_SETS + 1] = {"log_checkpoints=on",
						     "log_line_prefix=%n [%p] "};
	memcpy(settings + 2, m->pg_set, sizeof(m->pg_set));
	struct pgl_server_opts so = {
	    .pgbin = m->pgbin,
	    .settings = settings,
	    /* the WAL-alone floor: the cluster in the server's private
	     * directory in the cell's, on the machine's own disk */
	    .pgdata = c->profile || c->walfloor ? NULL : pgdata,
	    .waldir = c->walfloor ? waldir : NULL,
	    .quiet = true,
	    .on_pgiofs = c->profile != NULL,
	    .profile = c->profile,
	    .pgiofs_bin = m->pgiofs,
	    .pgiofs_args = (const char *const *)c->pgiofs_argv,
	    .backing = c->profile ? backing : NULL,
	    .tmp_parent = c->dir,
	    .port = 20000 + (int)((getpid() + 97 * c->idx) % 30000),
	};
	say(m, "cell %d: %s: starting a cluster on %s", c->idx + 1, c->label, root);
	if ((ret = pgl_server_start(&so, &c->server)) < 0)
		return ret;
	/* pgiofs may have set the queue for commits (files.device_queue): the
	 * report gives what the cell ran with */
	if (c->profile && c->has_queue)
		c->has_queue = pgl_queue_read(dev, &c->queue) == 0;
	where(c, root);
	c->o = (struct pgl_opts){.runs = 1, .jobs = m->jobs, .db = "pgload", .quiet = true};
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		c->o.file[ph] = m->files[ph][0] ? m->files[ph] : NULL;
	c->c = (struct pgl_ctx){.o = &c->o, .server = c->server};
	c->c.base.conninfo = pgl_server_conninfo(c->server);
	if (pgl_step("connect", "connecting to the server"))
		return -EINTR;
	c->c.admin = pgl_connect(&c->c.base, "postgres", NULL, false, !c->o.quiet);
	if (!c->c.admin)
		return atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
	pgl_server_info(&c->c);
	if (!m->server_version[0]) {
		snprintf(m->server_version, sizeof(m->server_version), "%s", c->c.server_version);
		m->server_version_num = PQserverVersion(c->c.admin);
	}
	if (m->oltp_clients && (ret = pgl_oltp_init(c->c.admin, &c->c.base, m->oltp_scale)) < 0)
		return ret;
	return settle();
}

/* cell_stop() -- undo cell_start(); safe on a half-started cell. */
static int cell_stop(struct cell *c)
{
	int ret = 0;
	pgl_disconnect(c->c.admin);
	c->c.admin = NULL;
	if (c->server && pgl_server_stop(c->server) < 0)
		ret = -EIO;
	c->server = NULL;
	if (pgl_backend_down(c->be) < 0)
		ret = -EIO;
	c->be = NULL;
	return ret;
}

/*
 * floor_window() -- after run S of cell C (its checkpoint and sync done):
 * the OLTP clients alone on the same cell, as long as the import took: the
 * floor of its commit latency, which no import can improve on; then a
 * checkpoint and a sync, as after a run.
 */
static int floor_window(struct cmp *m, struct cell *c, int round, struct sample *s)
{
	struct oltp *oltp = NULL;
	int ret;
	if (pgl_step("floor", "running %d OLTP client%s without the import (the floor)",
		     m->oltp_clients, m->oltp_clients == 1 ? "" : "s"))
		return -EINTR;
	if ((ret = pgl_oltp_start(&c->c.base, m->oltp_clients, m->oltp_scale,
				  (uint64_t)(round + 1) * 7919u + (uint64_t)c->idx + 104729u,
				  &oltp)) < 0)
		return ret;
	double t0 = pgl_now();
	int w = pgl_wait_fd(pgl_interrupt_fd(), POLLIN, (int)(s->import * 1000.0 + 0.5));
	double t1 = pgl_now();
	ret = pgl_oltp_stop(oltp, t0, t1, &c->floor_pool, &s->floor, NULL);
	if (w != 0 || atomic_load(&pgl_interrupted))
		return -EINTR;
	if (ret < 0)
		return ret;
	if (pgl_step("checkpoint", "checkpointing after the floor"))
		return -EINTR;
	if ((ret = pgl_admin_exec(c->c.admin, "CHECKPOINT", NULL, 0)) < 0)
		return ret;
	return settle();
}

/* cell_run() -- one timed run of cell C in round ROUND. */
static int cell_run(struct cmp *m, struct cell *c, int round, struct load *l)
{
	struct pgl_run_result rr;
	struct sample *s = &c->s[c->ns];
	int ret;
	memset(&rr, 0, sizeof(rr));
	memset(s, 0, sizeof(*s));
	s->round = round + 1;
	if ((ret = pgl_prepare_db(&c->c)) < 0)
		return ret;
	if (c->o.file[PGL_PH_SCHEMA] &&
	    (ret = pgl_run_phase(&c->c, PGL_PH_SCHEMA, &rr.ph[PGL_PH_SCHEMA])) < 0)
		goto out;
	if ((ret = pgl_cmp_load_start(m, pgl_backend_root(c->be), l)) < 0) {
		fprintf(stderr, "pgload compare: could not start %s: %s\n", pgl_load_names[m->load],
			strerror(-ret));
		goto out;
	}
	struct oltp *oltp = NULL;
	if (m->oltp_clients) {
		if (pgl_step("oltpstart", "starting %d OLTP client%s", m->oltp_clients,
			     m->oltp_clients == 1 ? "" : "s"))
			ret = -EINTR;
		else
			ret =
			    pgl_oltp_start(&c->c.base, m->oltp_clients, m->oltp_scale,
					   (uint64_t)(round + 1) * 7919u + (uint64_t)c->idx, &oltp);
	}
	struct tl_watch *watch = NULL;
	char waldir[1100];
	snprintf(waldir, sizeof(waldir), "%s/pg_wal", pgl_server_datadir(c->server));
	if (ret >= 0)
		ret = pgl_tl_start(waldir, pgl_server_log(c->server), &watch);
	struct caps_watch *caps = NULL;
	if (ret >= 0 && c->spec->capped)
		ret = pgl_caps_start(c->be, &caps);
	/* the segments pgiofs makes ahead of PostgreSQL: pg_wal's watch does
	 * not see them (made in the backing directory) */
	const char *mnt = c->server ? pgl_server_mount(c->server) : NULL;
	struct pgl_io io0 = {0}, io1, made;
	char ioerr[600];
	if (ret >= 0 && mnt)
		pgl_io_sample(m->pgiofs, mnt, &io0, ioerr, sizeof(ioerr)); /* else none */
	double cpu0 = cpu_busy(), t0 = pgl_now();
	s->tl.post_start = -1;
	for (int ph = PGL_PH_DATA; ph < PGL_NPHASE && ret >= 0; ph++) {
		if (!c->o.file[ph])
			continue;
		if (ph == PGL_PH_POST)
			s->tl.post_start = pgl_now() - t0;
		ret = pgl_run_phase(&c->c, (enum pgl_phase)ph, &rr.ph[ph]);
	}
	double cpu1 = cpu_busy(), t1 = pgl_now(), lcpu;
	pgl_caps_stop(caps, &s->caps);
	s->tl.secs = t1 - t0;
	if (oltp) {
		int r = pgl_oltp_stop(oltp, t0, t1, &c->oltp_pool, &s->oltp, &s->tl);
		ret = ret < 0 ? ret : r;
	}
	pgl_tl_stop(watch, t0, &s->tl);
	s->tl.made_ahead = -1;
	if (io0.has_walprep && pgl_io_sample(m->pgiofs, mnt, &io1, ioerr, sizeof(ioerr)) == 0 &&
	    pgl_io_delta(&io0, &io1, &made) == 0 && made.has_walprep)
		s->tl.made_ahead = (int)made.wal_made;
	pgl_cmp_load_stop(l, &s->load_mb, &lcpu);
	if (ret < 0)
		goto out;
	s->schema = rr.ph[PGL_PH_SCHEMA].real;
	s->data = rr.ph[PGL_PH_DATA].real;
	s->post = rr.ph[PGL_PH_POST].real;
	s->import = s->data + s->post;
	s->cpu_pct = s->import > 0 ? 100.0 * (cpu1 - cpu0) / s->import : 0;
	s->load_cpu_pct = s->import > 0 ? 100.0 * lcpu / s->import : 0;
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		s->wal += rr.ph[ph].wal;
		s->rows += rr.ph[ph].rows;
	}
	c->ns++;
	/* untimed: write back now, not during the next cell's run */
	if (pgl_step("checkpoint", "checkpointing after the run"))
		ret = -EINTR;
	else
		ret = pgl_admin_exec(c->c.admin, "CHECKPOINT", NULL, 0);
	if (ret >= 0)
		ret = settle();
	if (ret >= 0 && m->floor)
		ret = floor_window(m, c, round, s);
out:
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		pgl_tables_free(&rr.ph[ph].tables);
	if (ret < 0 && s == &c->s[c->ns]) { /* the run did not count */
		pgl_tl_free(&s->tl);
		pgl_caps_free(&s->caps);
	}
	return ret;
}

/* ---- the command ---------------------------------------------------------- */

/* make_out() -- create --out (made tells whether it was not there before). */
static int make_out(struct cmp *m, char *buf, size_t cap, bool *made)
{
	if (!m->out) {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(buf, cap, "pgload-compare-%Y%m%d-%H%M%S", &tm);
		m->out = buf;
	}
	*made = mkdir(m->out, 0755) == 0;
	if (!*made && errno != EEXIST) {
		int e = errno;
		fprintf(stderr, "pgload compare: could not create --out \"%s\": %s\n", m->out,
			strerror(e));
		return -e;
	}
	return 0;
}

/* cell_finish() -- what C's back end says after its runs: the modelled
 * disk's counters, pgiofs's latency per class. */
static int cell_finish(struct cmp *m, struct cell *c)
{
	const char *mnt = c->server ? pgl_server_mount(c->server) : NULL;
	char err[600];
	if (c->spec->model &&
	    pgl_backend_disk_stats(c->be, c->disk_stats, sizeof(c->disk_stats)) < 0)
		fprintf(stderr, "pgload compare: cell %s: could not read pgdisk's stats\n",
			c->label);
	if (!mnt)
		return 0;
	if (pgl_step("latency", "reading the latency of cell %d %s", c->idx + 1, c->label))
		return -EINTR;
	if (pgl_io_sample(m->pgiofs, mnt, &c->lat, err, sizeof(err)) < 0)
		fprintf(stderr, "pgload compare: cell %s: `%s stat %s --json`: %s\n", c->label,
			m->pgiofs, mnt, err);
	else
		c->has_lat = c->lat.has_lat;
	return 0;
}

/* shares_device() -- C's back end is a device (dev:DEVICE:FS) another cell
 * is on too: they take turns on it, one file system at a time. */
static bool shares_device(const struct cmp *m, const struct cell *c)
{
	for (int i = 0; i < m->ncell && c->spec->device[0]; i++)
		if (i != c->idx && m->cell[i].spec->device[0] &&
		    pgl_blkdev_same(m->cell[i].spec->device, c->spec->device) == 1)
			return true;
	return false;
}

/* take_device() -- C's turn on its device: the cell there is finished and
 * stopped, then C is started on a file system made afresh. */
static int take_device(struct cmp *m, struct cell *c)
{
	int ret;
	for (int i = 0; i < m->ncell; i++) {
		struct cell *o = &m->cell[i];
		if (o == c || !o->be || !o->spec->device[0] ||
		    pgl_blkdev_same(o->spec->device, c->spec->device) != 1)
			continue;
		if ((ret = cell_finish(m, o)) < 0 || (ret = cell_stop(o)) < 0)
			return ret;
	}
	say(m, "cell %d: %s: its turn on %s", c->idx + 1, c->label, c->spec->device);
	return cell_start(m, c);
}

/* run_matrix() -- start the cells, run the rounds, take the latency figures. */
static int run_matrix(struct cmp *m)
{
	int ret;
	_Atomic uint64_t *counter =
	    mmap(NULL, sizeof(*counter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counter == MAP_FAILED)
		return -errno;
	struct load l = {.bytes = counter};
	for (int i = 0; i < m->ncell; i++) {
		pgl_step_context("cell %d %s", i + 1, m->cell[i].label);
		if ((m->cell[i].turns = shares_device(m, &m->cell[i])))
			continue; /* set up when its turn comes */
		if ((ret = cell_start(m, &m->cell[i])) < 0) {
			if (atomic_load(&pgl_interrupted))
				ret = -EINTR;
			goto out;
		}
	}
	for (int r = 0; r < m->runs; r++)
		for (int i = 0; i < m->ncell; i++) {
			struct cell *c = &m->cell[i];
			pgl_step_context("round %d/%d, cell %d %s", r + 1, m->runs, i + 1,
					 c->label);
			if (!c->be && (ret = take_device(m, c)) < 0) {
				if (atomic_load(&pgl_interrupted))
					ret = -EINTR;
				goto out;
			}
			if ((ret = cell_run(m, c, r, &l)) < 0) {
				if (c->server && !pgl_server_alive(c->server)) {
					char how[128];
					pgl_server_describe_exit(c->server, how, sizeof(how));
					fprintf(stderr, "pgload compare: cell %s: %s\n", c->label,
						how);
					pgl_server_log_tail(c->server, 10);
				}
				if (atomic_load(&pgl_interrupted))
					ret = -EINTR;
				goto out;
			}
			const struct sample *s = &c->s[c->ns - 1];
			say(m, "round %d/%d: %-28s import %.2f s (data %.2f, post %.2f)", r + 1,
			    m->runs, c->label, s->import, s->data, s->post);
		}
	pgl_step_context(NULL);
	for (int i = 0; i < m->ncell; i++)
		if (m->cell[i].be && (ret = cell_finish(m, &m->cell[i])) < 0)
			goto out;
	ret = 0;
out:
	pgl_step_context(NULL);
	munmap((void *)counter, sizeof(*counter));
	return ret;
}

int pgl_cmd_compare(int argc, char **argv)
{
	struct cmp m = {0};
	char outbuf[64];
	int ret = pgl_cmp_args(&m, argc, argv), status = 0;
	if (ret != 0)
		return ret > 0 ? 0 : 1;
	signal(SIGPIPE, SIG_IGN);
	if (pgl_signals_start() < 0) {
		fprintf(stderr, "pgload: cannot set up signal handling\n");
		return 1;
	}
	bool out_made = false;
	if (make_out(&m, outbuf, sizeof(outbuf), &out_made) < 0)
		return 1;
	if (pgl_testbed_create(&m.tb) < 0) {
		if (out_made)
			rmdir(m.out);
		return 1;
	}
	say(&m, "%d cells x %d runs, interleaved; work directory %s", m.ncell, m.runs,
	    pgl_testbed_dir(m.tb));
	time_t t0 = time(NULL);
	struct tm tm;
	localtime_r(&t0, &tm);
	strftime(m.started, sizeof(m.started), "%Y-%m-%dT%H:%M:%S%z", &tm);
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(m.kernel, sizeof(m.kernel), "%s %s %s", u.sysname, u.release, u.machine);
	m.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pgiofs_version(&m);
	double start = pgl_now();
	if (m.gen_scale > 0) {
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/workload", pgl_testbed_dir(m.tb));
		struct pgl_gen_opts g = {.scale = m.gen_scale, .seed = 1, .outdir = dir};
		say(&m, "generating the workload (scale %g) in %s", m.gen_scale, dir);
		if (pgl_step("gen", "generating the workload")) {
			status = 2;
			goto out;
		}
		if (pgl_gen(&g) < 0 || pgl_cmp_workload(&m, dir) < 0) {
			status = 1;
			goto out;
		}
		chmod(dir, 0755);
	}
	ret = run_matrix(&m);
	if (ret < 0)
		status = pgl_exit_status(ret);
out:
	pgl_step("cleanup", "cleaning up");
	for (int i = m.ncell - 1; i >= 0; i--)
		if (cell_stop(&m.cell[i]) < 0 && status == 0)
			status = 1;
	int left = pgl_testbed_destroy(m.tb);
	if (left)
		fprintf(stderr, "pgload compare: %d thing%s left by the cells removed\n", left,
			left == 1 ? " was" : "s were");
	m.seconds = pgl_now() - start;
	bool reported = false;
	if (status == 0 && !atomic_load(&pgl_interrupted)) {
		pgl_step("report", "writing the report");
		pgl_cmp_summarize(&m);
		if (pgl_cmp_report(&m) < 0 || pgl_cmp_write_html(&m) < 0) {
			status = 1;
		} else {
			char *abs = realpath(m.out, NULL);
			printf("\nreport: %s/index.html\n", abs ? abs : m.out);
			free(abs);
		}
		reported = true;
		say(&m, "done in %.0f s", m.seconds);
	}
	if (atomic_load(&pgl_interrupted)) {
		char step[512];
		pgl_interrupted_step(step, sizeof(step));
		if (reported)
			fprintf(stderr,
				"pgload compare: interrupted while %s: the report in %s is "
				"complete; nothing else of the run is left\n",
				step, m.out);
		else
			fprintf(stderr,
				"pgload compare: interrupted; everything it created is removed "
				"(the signal came while %s)\n",
				step);
	}
	if ((status != 0 || atomic_load(&pgl_interrupted)) && out_made)
		rmdir(m.out); /* an --out it made goes too if it stayed empty */
	for (int i = 0; i < m.ncell; i++) {
		for (int k = 0; k < m.cell[i].ns; k++) {
			pgl_tl_free(&m.cell[i].s[k].tl);
			pgl_caps_free(&m.cell[i].s[k].caps);
		}
		free(m.cell[i].s);
		free(m.cell[i].oltp_pool.v);
		free(m.cell[i].floor_pool.v);
	}
	free(m.cell);
	for (int i = 0; i < m.nsets; i++)
		free(m.sets[i].buf);
	if (atomic_load(&pgl_interrupted))
		status = 2;
	return status;
}
