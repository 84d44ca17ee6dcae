/*
 * compare.c -- `pgload compare`: a matrix of back ends x scheduler profiles
 * (x swept pgiofs tunables), each cell a private PostgreSQL cluster on its
 * own back end, the same workload loaded N times into each, reported as a
 * seed-style table, hyperfine-style ratios, a tiobench-style latency table,
 * JSON, CSV, SVG charts and one HTML page.
 *
 * Layout: everything pgload compare creates lives under one work directory
 * /tmp/pgload-compare.XXXXXX (WD): the state file "state" ("pid N" of the
 * owner, then one "dir PATH" line per directory it made elsewhere, written
 * before the directory is made), the generated workload, the file system
 * images, and per cell "cellN/": the back end's mount point "fs/" (loop
 * image or tmpfs) and the embedded server's private directory (socket, log,
 * pgiofs mount).  The cluster itself (or pgiofs's backing directory) and
 * the load files are on the back end.
 *
 * What must stay true: at exit -- success, error, SIGINT/SIGTERM -- no
 * mount, loop device, image, server, pgiofs daemon or directory made by the
 * run remains.  Clean-up does not trust memory alone: cleanup_workdir()
 * kills processes whose command line names WD or a recorded directory,
 * unmounts every mount under WD (deepest first), detaches loop devices
 * whose backing file is under WD and removes the directories.  The same
 * function cleans the work directories of earlier runs whose owner is dead
 * (killed with SIGKILL, power loss), at the start of every compare.
 *
 * Nothing is created before every argument has been checked: back end
 * names, root for loop and tmpfs back ends, mkfs programs, profiles and
 * --set values (by `pgiofs --print-config`), --baseline.
 *
 * Measurement: runs are interleaved across cells (round 1: A B C, round 2:
 * A B C, ...) so that drift of a shared machine falls on every cell alike;
 * each run gets a fresh database (pgl_prepare_db(): drop, create,
 * CHECKPOINT) and ends with an untimed CHECKPOINT so that an idle cell does
 * not write behind the next one's back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <linux/loop.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "mountinfo.h"
#include "pgload.h"
#include "run_i.h"
#include "stats.h"

#define MAX_BACKENDS   8
#define MAX_PROFILES   12
#define MAX_SETS       4
#define MAX_VALUES     8
#define MAX_CELLS      128
#define CV_LIMIT_PCT   10.0	      /* a cell with a higher CV is flagged */
#define LOAD_CHUNK     (1024 * 1024)  /* bytes per write or read of a load */
#define LOAD_FILE_MAX  (256ULL << 20) /* io_load wraps, read_load's file */
#define DEFAULT_SIZE   (4ULL << 30)   /* --size */
#define WD_PREFIX      "/tmp/pgload-compare."
#define COMPARE_SCHEMA "pgload.compare/1"

enum be_kind { BE_LOOP, BE_TMPFS, BE_DIR };
enum load_kind { LOAD_NONE, LOAD_IO, LOAD_READ };
static const char *const load_names[] = {"none", "io_load", "read_load"};

struct backend {
	enum be_kind kind;
	char name[16];	  /* ext4, xfs, tmpfs, dir */
	const char *path; /* dir:PATH */
};

struct sweep {
	char name[64];
	const char *val[MAX_VALUES];
	int nval;
	char *buf; /* owns the values */
};

/* One timed run of one cell. */
struct sample {
	int round;
	double schema, data, post, import; /* s */
	double cpu_pct;		      /* system-wide busy CPU during the import, % of one CPU */
	double load_mb, load_cpu_pct; /* background load's work and CPU */
	uint64_t wal, rows;
};

struct cell {
	int idx;
	const struct backend *be;
	const char *profile; /* NULL: native */
	const char *setv[MAX_SETS];
	char label[160]; /* "xfs/dbaware nr_requests=128" */
	char words[200]; /* "dbaware nr_requests=128 on xfs" */
	/* runtime */
	char dir[256];	 /* WD/cellN */
	char root[1024]; /* the back end's directory for this cell */
	char img[1100], loopdev[64];
	bool mounted;
	struct pgl_opts o;
	struct pgl_ctx c;
	struct pgl_server *server;
	char *pgiofs_argv[2 * (MAX_SETS + 1) + 1];
	char pgiofs_argbuf[MAX_SETS + 1][128];
	struct sample *s;
	int ns;
	struct pgl_io lat;
	bool has_lat;
	/* summary */
	double mean, sd, cv, min, max, schema_mean, cpu_mean, load_mean, lcpu_mean;
	double ratio, ratio_sd;
};

struct cmp {
	/* settings */
	const char *workload;
	double gen_scale;
	struct backend be[MAX_BACKENDS];
	int nbe;
	const char *profile[MAX_PROFILES];
	int nprofile;
	struct sweep sets[MAX_SETS];
	int nsets;
	int runs, jobs;
	enum load_kind load;
	const char *device;
	const char *baseline_arg;
	const char *out;
	uint64_t size;
	const char *pgbin, *pgiofs_bin;
	bool quiet;
	char pgiofs[4096];
	/* runtime */
	char wd[64];
	char files[PGL_NPHASE][1100];
	struct cell *cell;
	int ncell, baseline;
	char server_version[64], kernel[256], started[32];
	double seconds;
};

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

/*
 * run_cmd() -- run ARGV, its stdout and stderr into OUT (CAP bytes,
 * NUL-terminated; may be NULL), killed by an interrupt.  Returns the exit
 * status (>= 0), or -errno.
 */
static int run_cmd(char *const argv[], char *out, size_t cap)
{
	struct pgl_proc p = {
	    .argv = argv, .out = out, .outcap = cap, .timeout_ms = -1, .interruptible = true};
	return pgl_proc_run(&p);
}

/* run_ok() -- run_cmd(); on failure say what failed and its output. */
static int run_ok(const char *what, char *const argv[], char *out, size_t cap)
{
	char buf[4096];
	if (!out) {
		out = buf;
		cap = sizeof(buf);
	}
	int st = run_cmd(argv, out, cap);
	if (st == 0)
		return 0;
	if (atomic_load(&pgl_interrupted))
		return -EINTR;
	fprintf(stderr, "pgload: compare: %s: `%s", what, argv[0]);
	for (int i = 1; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	if (st < 0)
		fprintf(stderr, "` could not run: %s\n", strerror(-st));
	else
		fprintf(stderr, "` failed (exit status %d)%s%s", st, out[0] ? ":\n" : "\n", out);
	return -EIO;
}

/* in_path() -- PROG is an executable on PATH (or in /sbin, /usr/sbin). */
static bool in_path(const char *prog)
{
	char path[4096];
	return pgl_which(prog, path, sizeof(path)) == 0;
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

/* ---- clean-up ------------------------------------------------------------ */

/* read_state() -- the owner pid and the "dir" lines of WD/state. */
static int read_state(const char *wd, pid_t *pid, char dirs[][1024], int maxdirs)
{
	char path[256], line[1100];
	int n = 0;
	*pid = 0;
	snprintf(path, sizeof(path), "%s/state", wd);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "pid ", 4) == 0)
			*pid = (pid_t)atol(line + 4);
		else if (strncmp(line, "dir /", 5) == 0 && n < maxdirs)
			snprintf(dirs[n++], 1024, "%.1023s", line + 4);
	}
	fclose(f);
	return n;
}

/* kill_users() -- kill processes (not us) whose command line names a path under DIRS. */
static int kill_users(char dirs[][1024], int ndirs, bool pgiofs_too)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int killed = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atol(de->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		char path[64], buf[8192];
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		bool hit = false, is_pgiofs = strstr(buf, "pgiofs") && !strstr(buf, "postgres");
		for (char *a = buf; a < buf + n && !hit; a += strlen(a) + 1)
			for (int i = 0; i < ndirs && !hit; i++)
				hit = strstr(a, dirs[i]) != NULL;
		if (!hit || (is_pgiofs && !pgiofs_too))
			continue;
		kill(pid, SIGKILL);
		killed++;
	}
	closedir(d);
	return killed;
}

#define MAX_UNMOUNT 64

struct mounts_under {
	const char *dir;
	char (*mnts)[PATH_MAX];
	int n;
};

static int add_under(const struct mountinfo *m, void *arg)
{
	struct mounts_under *u = arg;
	if (path_is_under(m->point, u->dir))
		snprintf(u->mnts[u->n++], sizeof(u->mnts[0]), "%s", m->point);
	return u->n == MAX_UNMOUNT;
}

/* unmount_under() -- unmount every mount under DIR, deepest first. */
static int unmount_under(const char *dir)
{
	char(*mnts)[PATH_MAX] = calloc(MAX_UNMOUNT, PATH_MAX);
	struct mounts_under u = {.dir = dir, .mnts = mnts};
	int done = 0;
	if (!mnts)
		return 0;
	mountinfo_each(NULL, add_under, &u);
	for (int i = u.n - 1; i >= 0; i--) { /* mountinfo lists parents first */
		bool ok = false;
		for (int t = 0; t < 50 && !ok; t++) {
			ok = umount2(mnts[i], 0) == 0 || errno == EINVAL || errno == ENOENT;
			if (!ok && errno == EPERM) {
				char *argv[] = {"fusermount3", "-u", "-z", mnts[i], NULL};
				ok = run_cmd(argv, NULL, 0) == 0;
				break;
			}
			if (!ok)
				usleep(100000);
		}
		if (!ok && umount2(mnts[i], MNT_DETACH) < 0)
			fprintf(stderr, "pgload: compare: could not unmount \"%s\": %s\n", mnts[i],
				strerror(errno));
		done++;
	}
	free(mnts);
	return done;
}

/* detach_loops_under() -- detach loop devices whose backing file is under DIR. */
static int detach_loops_under(const char *dir)
{
	glob_t g;
	int done = 0;
	if (glob("/sys/block/loop*/loop/backing_file", 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char file[1100] = "", dev[64];
		FILE *f = fopen(g.gl_pathv[i], "r");
		if (!f)
			continue;
		if (!fgets(file, sizeof(file), f))
			file[0] = '\0';
		fclose(f);
		file[strcspn(file, "\n")] = '\0';
		if (!path_is_under(file, dir))
			continue;
		if (sscanf(g.gl_pathv[i], "/sys/block/%63[^/]", dev) != 1)
			continue;
		char devpath[80];
		snprintf(devpath, sizeof(devpath), "/dev/%s", dev);
		int fd = open(devpath, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (ioctl(fd, LOOP_CLR_FD, 0) == 0)
				done++;
			else
				fprintf(stderr, "pgload: compare: could not detach %s: %s\n",
					devpath, strerror(errno));
			close(fd);
		}
	}
	globfree(&g);
	return done;
}

/*
 * cleanup_workdir() -- remove everything a compare run with work directory
 * WD made: its processes, mounts, loop devices and directories.  Returns
 * how many things were found (0: nothing was left).
 */
static int cleanup_workdir(const char *wd)
{
	char dirs[MAX_CELLS + 1][1024];
	pid_t owner;
	int n = read_state(wd, &owner, dirs + 1, MAX_CELLS);
	int found = 0;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", wd);
	/* servers first, so that the file systems can go; then the mounts (the
	 * pgiofs daemons exit with theirs); then any daemon still there */
	found += kill_users(dirs, n + 1, false);
	usleep(found ? 200000 : 0);
	found += unmount_under(wd);
	found += kill_users(dirs, n + 1, true);
	found += detach_loops_under(wd);
	for (int i = 1; i <= n; i++) {
		if (access(dirs[i], F_OK) == 0) {
			found++;
			if (pgl_rmtree(dirs[i]) < 0)
				fprintf(stderr, "pgload: compare: could not remove \"%s\"\n",
					dirs[i]);
		}
	}
	if (pgl_rmtree(wd) < 0)
		fprintf(stderr, "pgload: compare: could not remove \"%s\"\n", wd);
	return found;
}

/*
 * clean_leftovers() -- the work directories of earlier compare runs whose
 * owner is gone: say so and clean them.
 */
static void clean_leftovers(void)
{
	glob_t g;
	if (glob(WD_PREFIX "*", GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *wd = g.gl_pathv[i];
		char dirs[1][1024];
		pid_t owner;
		struct stat st;
		read_state(wd, &owner, dirs, 0);
		if (owner > 0 && kill(owner, 0) == 0) {
			char path[64], comm[64] = "";
			snprintf(path, sizeof(path), "/proc/%d/comm", (int)owner);
			FILE *f = fopen(path, "r");
			if (f) {
				if (!fgets(comm, sizeof(comm), f))
					comm[0] = '\0';
				fclose(f);
			}
			if (strncmp(comm, "pgload", 6) == 0)
				continue; /* a live run */
		}
		if (owner <= 0 && stat(wd, &st) == 0 && time(NULL) - st.st_mtime < 60)
			continue; /* just being created */
		if (lstat(wd, &st) < 0 || st.st_uid != geteuid())
			continue;
		fprintf(stderr,
			"pgload: compare: cleaning up after an earlier interrupted run "
			"(pid %d): %s\n",
			(int)owner, wd);
		int n = cleanup_workdir(wd);
		fprintf(stderr,
			"pgload: compare: removed %s and %d leftover%s (mounts, loop "
			"devices, processes, directories)\n",
			wd, n, n == 1 ? "" : "s");
	}
	globfree(&g);
}

/* state_add_dir() -- record DIR in the state file before it is made. */
static int state_add_dir(const struct cmp *m, const char *dir)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/state", m->wd);
	FILE *f = fopen(path, "a");
	if (!f)
		return -errno;
	fprintf(f, "dir %s\n", dir);
	return fclose(f) == 0 ? 0 : -errno;
}

/* ---- back ends ----------------------------------------------------------- */

/* chmod_x() -- let the server user traverse DIR (the server runs as postgres). */
static int mkdir_x(const char *dir)
{
	if (mkdir(dir, 0711) < 0 && errno != EEXIST) {
		int e = errno;
		fprintf(stderr, "pgload: compare: could not create directory \"%s\": %s\n", dir,
			strerror(e));
		return -e;
	}
	chmod(dir, 0711);
	return 0;
}

/* backend_up() -- make the cell's back end: ROOT is then a fresh directory on it. */
static int backend_up(struct cmp *m, struct cell *c)
{
	const struct backend *b = c->be;
	char fs[300];
	int ret;
	snprintf(fs, sizeof(fs), "%s/fs", c->dir);
	if (pgl_step("backend", "preparing the %s back end", b->name))
		return -EINTR;
	switch (b->kind) {
	case BE_DIR: {
		snprintf(c->root, sizeof(c->root), "%s/pgload-compare.XXXXXX", b->path);
		if (!mkdtemp(c->root)) {
			ret = -errno;
			fprintf(stderr,
				"pgload: compare: could not create a directory in \"%s\": %s\n",
				b->path, strerror(-ret));
			return ret;
		}
		if ((ret = state_add_dir(m, c->root)) < 0) {
			rmdir(c->root);
			return ret;
		}
		chmod(c->root, 0711);
		return 0;
	}
	case BE_TMPFS:
		if ((ret = mkdir_x(fs)) < 0)
			return ret;
		if (geteuid() != 0) {
			/* no mount without root: a fresh directory of /dev/shm */
			snprintf(c->root, sizeof(c->root), "/dev/shm/pgload-compare.XXXXXX");
			if (!mkdtemp(c->root))
				return -errno;
			if ((ret = state_add_dir(m, c->root)) < 0)
				return ret;
			chmod(c->root, 0711);
			return 0;
		}
		char opts[64];
		snprintf(opts, sizeof(opts), "size=%llu,mode=0711", (unsigned long long)m->size);
		if (pgl_step("mount", "mounting a tmpfs at %s", fs))
			return -EINTR;
		if (mount("pgload-compare", fs, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
			ret = -errno;
			fprintf(stderr, "pgload: compare: could not mount a tmpfs at \"%s\": %s\n",
				fs, strerror(-ret));
			return ret;
		}
		c->mounted = true;
		snprintf(c->root, sizeof(c->root), "%s", fs);
		return 0;
	case BE_LOOP: {
		char out[256], mkfs[32];
		snprintf(c->img, sizeof(c->img), "%s/fs.img", c->dir);
		int fd = open(c->img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)m->size) < 0) {
			ret = -errno;
			fprintf(stderr, "pgload: compare: could not create image \"%s\": %s\n",
				c->img, strerror(-ret));
			if (fd >= 0)
				close(fd);
			return ret;
		}
		close(fd);
		snprintf(mkfs, sizeof(mkfs), "mkfs.%s", b->name);
		char *xfs[] = {mkfs, "-q", "-f", c->img, NULL};
		char *ext[] = {mkfs, "-q", "-F", c->img, NULL};
		if (pgl_step("mkfs", "running %s on %s", mkfs, c->img))
			return -EINTR;
		if ((ret = run_ok("mkfs", strcmp(b->name, "xfs") == 0 ? xfs : ext, NULL, 0)) < 0)
			return ret;
		char *los[] = {"losetup", "--find", "--show", c->img, NULL};
		if (pgl_step("losetup", "attaching %s to a loop device", c->img))
			return -EINTR;
		if ((ret = run_ok("losetup", los, out, sizeof(out))) < 0)
			return ret;
		out[strcspn(out, "\n")] = '\0';
		snprintf(c->loopdev, sizeof(c->loopdev), "%.63s", out);
		if ((ret = mkdir_x(fs)) < 0)
			return ret;
		if (pgl_step("mount", "mounting %s (%s) at %s", c->loopdev, b->name, fs))
			return -EINTR;
		if (mount(c->loopdev, fs, b->name, MS_NOSUID | MS_NODEV, NULL) < 0) {
			ret = -errno;
			fprintf(stderr,
				"pgload: compare: could not mount %s (%s on %s) at \"%s\": %s\n",
				c->loopdev, b->name, c->img, fs, strerror(-ret));
			return ret;
		}
		c->mounted = true;
		chmod(fs, 0711);
		snprintf(c->root, sizeof(c->root), "%s", fs);
		return 0;
	}
	}
	return -EINVAL;
}

/* backend_down() -- unmount, detach, remove what backend_up() made. */
static int backend_down(struct cell *c)
{
	int ret = 0;
	if (c->mounted) {
		unmount_under(c->root);
		c->mounted = false;
	}
	if (c->loopdev[0]) {
		detach_loops_under(c->dir);
		c->loopdev[0] = '\0';
	}
	if (!c->root[0])
		return 0;
	if (c->be->kind != BE_LOOP && c->be->kind != BE_TMPFS)
		ret = pgl_rmtree(c->root);
	else if (!path_is_under(c->root, c->dir))
		ret = pgl_rmtree(c->root); /* /dev/shm without root */
	c->root[0] = '\0';
	return ret;
}

/* ---- background loads (contest's io_load and read_load) ----------------- */

struct load {
	pid_t pid;
	_Atomic uint64_t *bytes; /* shared with the child */
};

/* make_read_file() -- the file read_load streams (LOAD_FILE_MAX or size/8). */
static int make_read_file(const struct cmp *m, const struct cell *c)
{
	char path[1100];
	uint64_t size = m->size / 8 < LOAD_FILE_MAX ? m->size / 8 : LOAD_FILE_MAX;
	snprintf(path, sizeof(path), "%s/read_load.dat", c->root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	char *buf = malloc(LOAD_CHUNK);
	int ret = buf ? 0 : -ENOMEM;
	for (uint64_t done = 0; buf && done < size && ret == 0; done += LOAD_CHUNK) {
		memset(buf, (int)(done >> 20), LOAD_CHUNK);
		if (write(fd, buf, LOAD_CHUNK) != LOAD_CHUNK)
			ret = -EIO;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	free(buf);
	close(fd);
	return ret;
}

/* load_child() -- the load's loop; ends when killed. */
static void load_child(enum load_kind kind, const char *root, _Atomic uint64_t *bytes)
{
	char path[1100];
	char *buf = aligned_alloc(4096, LOAD_CHUNK);
	if (!buf)
		_exit(1);
	memset(buf, 'x', LOAD_CHUNK);
	if (kind == LOAD_IO) {
		snprintf(path, sizeof(path), "%s/io_load.dat", root);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(1);
		for (uint64_t off = 0;; off += LOAD_CHUNK) {
			if (off >= LOAD_FILE_MAX) {
				/* as contest's io_load: write the file again, from the start */
				fdatasync(fd);
				off = 0;
				lseek(fd, 0, SEEK_SET);
			}
			if (write(fd, buf, LOAD_CHUNK) != LOAD_CHUNK)
				_exit(1);
			atomic_fetch_add(bytes, LOAD_CHUNK);
		}
	}
	snprintf(path, sizeof(path), "%s/read_load.dat", root);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(1);
	for (;;) {
		/* from the device, not the page cache, where the back end has one */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		lseek(fd, 0, SEEK_SET);
		ssize_t n;
		while ((n = read(fd, buf, LOAD_CHUNK)) > 0)
			atomic_fetch_add(bytes, (uint64_t)n);
		if (n < 0)
			_exit(1);
	}
}

static int load_start(const struct cmp *m, const struct cell *c, struct load *l)
{
	l->pid = 0;
	if (m->load == LOAD_NONE)
		return 0;
	atomic_store(l->bytes, 0);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pgl_child_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		load_child(m->load, c->root, l->bytes);
		_exit(0);
	}
	l->pid = pid;
	return 0;
}

/* load_stop() -- stop the load; its MB and CPU seconds. */
static void load_stop(struct load *l, double *mb, double *cpu)
{
	*mb = 0;
	*cpu = 0;
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	struct rusage ru;
	int st;
	while (wait4(l->pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	*mb = (double)atomic_load(l->bytes) / 1e6;
	*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
	l->pid = 0;
}

/* ---- cells ---------------------------------------------------------------- */

/* cell_start() -- back end, server (through pgiofs unless native), admin connection. */
static int cell_start(struct cmp *m, struct cell *c)
{
	int ret;
	snprintf(c->dir, sizeof(c->dir), "%s/cell%d", m->wd, c->idx + 1);
	if ((ret = mkdir_x(c->dir)) < 0 || (ret = backend_up(m, c)) < 0)
		return ret;
	if (m->load == LOAD_READ &&
	    pgl_step("loadfile", "writing the read_load file in %s", c->root))
		return -EINTR;
	if (m->load == LOAD_READ && (ret = make_read_file(m, c)) < 0) {
		fprintf(stderr,
			"pgload: compare: could not write the read_load file in \"%s\": %s\n",
			c->root, strerror(-ret));
		return ret;
	}
	char pgdata[1100], backing[1100];
	snprintf(pgdata, sizeof(pgdata), "%s/data", c->root);
	snprintf(backing, sizeof(backing), "%s/backing", c->root);
	int na = 0;
	for (int i = 0; i < m->nsets && c->profile; i++) {
		snprintf(c->pgiofs_argbuf[i], sizeof(c->pgiofs_argbuf[i]), "%s=%s", m->sets[i].name,
			 c->setv[i]);
		c->pgiofs_argv[na++] = "--set";
		c->pgiofs_argv[na++] = c->pgiofs_argbuf[i];
	}
	if (c->profile && m->device) {
		snprintf(c->pgiofs_argbuf[MAX_SETS], sizeof(c->pgiofs_argbuf[0]), "device.model=%s",
			 m->device);
		c->pgiofs_argv[na++] = "--set";
		c->pgiofs_argv[na++] = c->pgiofs_argbuf[MAX_SETS];
	}
	c->pgiofs_argv[na] = NULL;
	struct pgl_server_opts so = {
	    .pgbin = m->pgbin,
	    .pgdata = c->profile ? NULL : pgdata,
	    .quiet = true,
	    .on_pgiofs = c->profile != NULL,
	    .profile = c->profile,
	    .pgiofs_bin = m->pgiofs,
	    .pgiofs_args = (const char *const *)c->pgiofs_argv,
	    .backing = c->profile ? backing : NULL,
	    .tmp_parent = c->dir,
	    .port = 20000 + (int)((getpid() + 97 * c->idx) % 30000),
	};
	say(m, "cell %d: %s: starting a cluster on %s", c->idx + 1, c->label, c->root);
	if ((ret = pgl_server_start(&so, &c->server)) < 0)
		return ret;
	c->o = (struct pgl_opts){.runs = 1, .jobs = m->jobs, .db = "pgload", .quiet = true};
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		c->o.file[ph] = m->files[ph][0] ? m->files[ph] : NULL;
	c->c = (struct pgl_ctx){.o = &c->o, .server = c->server};
	c->c.base = pgl_server_conninfo(c->server);
	if (pgl_step("connect", "connecting to the server"))
		return -EINTR;
	c->c.admin = pgl_connect(c->c.base, "postgres", NULL, false, !c->o.quiet);
	if (!c->c.admin)
		return atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
	pgl_server_info(&c->c);
	if (!m->server_version[0])
		snprintf(m->server_version, sizeof(m->server_version), "%s", c->c.server_version);
	return 0;
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
	if (c->dir[0] && backend_down(c) < 0)
		ret = -EIO;
	return ret;
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
	if ((ret = load_start(m, c, l)) < 0) {
		fprintf(stderr, "pgload: compare: could not start %s: %s\n", load_names[m->load],
			strerror(-ret));
		goto out;
	}
	double cpu0 = cpu_busy();
	for (int ph = PGL_PH_DATA; ph < PGL_NPHASE && ret >= 0; ph++)
		if (c->o.file[ph])
			ret = pgl_run_phase(&c->c, (enum pgl_phase)ph, &rr.ph[ph]);
	double cpu1 = cpu_busy(), lcpu;
	load_stop(l, &s->load_mb, &lcpu);
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
out:
	for (int ph = 0; ph < PGL_NPHASE; ph++)
		pgl_tables_free(&rr.ph[ph].tables);
	return ret;
}

/* ---- arguments ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: pgload compare (--workload DIR | --gen SCALE) --backends LIST --profiles LIST\n"
	    "                      [OPTIONS]\n"
	    "\n"
	    "Load the same workload into fresh clusters on every back end x profile\n"
	    "(x --set value) and compare the times.\n"
	    "\n"
	    "  -w, --workload DIR     schema.sql, data.sql and post.sql (each may be .lz4;\n"
	    "                         data.sql is required)\n"
	    "  -g, --gen SCALE        generate the workload (`pgload gen --scale SCALE`)\n"
	    "  -b, --backends LIST    comma-separated: ext2, ext3, ext4, xfs (an image of\n"
	    "                         --size, loop-mounted: root), tmpfs, dir:PATH (a fresh\n"
	    "                         subdirectory of PATH)\n"
	    "  -P, --profiles LIST    comma-separated: native (no pgiofs) and pgiofs profiles\n"
	    "                         (config/profiles: noop, deadline-2.6, dbaware, ...)\n"
	    "  -n, --runs N           runs per cell, interleaved across cells (default 3)\n"
	    "  -s, --set NAME=V1,V2,...  sweep a pgiofs tunable (pgiofs cells; repeatable:\n"
	    "                         every combination is a cell)\n"
	    "  -l, --load KIND        background load during the import: none, io_load\n"
	    "                         (stream writes on the back end), read_load (stream reads)\n"
	    "      --device MODEL     pgiofs emulated device for pgiofs cells: none, hdd, ssd\n"
	    "      --baseline CELL    the cell ratios refer to: a label (\"ext4/native\") or a\n"
	    "                         number (default 1, the first cell)\n"
	    "  -o, --out DIR          report directory (default pgload-compare-DATE-TIME)\n"
	    "      --size SIZE        image and tmpfs size (default 4G; K, M, G suffixes)\n"
	    "  -j, --jobs N           `pgload run --jobs N` for each run (default 1)\n"
	    "      --pgbin DIR        PostgreSQL server binaries\n"
	    "      --pgiofs-bin PATH  the pgiofs binary (default: beside pgload, or PATH)\n"
	    "  -q, --quiet            no progress messages\n"
	    "  -h, --help             this help\n"
	    "\n"
	    "Output: the table on stdout; table.txt, results.json, results.csv, import.svg,\n"
	    "latency.svg and index.html in --out.  Exit status 0, 1 on errors, 2 if\n"
	    "interrupted; everything created is removed in every case.\n");
}

/* split_list() -- split a comma list in place into OUT (at most MAX). */
static int split_list(char *s, const char **out, int max, const char *opt)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			fprintf(stderr, "pgload: compare: %s: at most %d items\n", opt, max);
			return -E2BIG;
		}
		out[n++] = t;
	}
	if (n == 0) {
		fprintf(stderr, "pgload: compare: %s: empty list\n", opt);
		return -EINVAL;
	}
	return n;
}

static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	uint64_t mul = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	}
	if (errno || end == arg || *end || v * (double)mul < 64.0 * (1 << 20) ||
	    v * (double)mul > 16.0 * (1ULL << 40)) {
		fprintf(stderr,
			"pgload: compare: --size \"%s\": a size from 64M to 16T expected "
			"(suffix K, M or G)\n",
			arg);
		return -EINVAL;
	}
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

static int parse_backend(const char *arg, struct backend *b)
{
	static const char *const loops[] = {"ext2", "ext3", "ext4", "xfs"};
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < sizeof(loops) / sizeof(loops[0]); i++)
		if (strcmp(arg, loops[i]) == 0) {
			b->kind = BE_LOOP;
			snprintf(b->name, sizeof(b->name), "%s", arg);
			return 0;
		}
	if (strcmp(arg, "tmpfs") == 0) {
		b->kind = BE_TMPFS;
		snprintf(b->name, sizeof(b->name), "tmpfs");
		return 0;
	}
	if (strncmp(arg, "dir:", 4) == 0) {
		struct stat st;
		b->kind = BE_DIR;
		b->path = arg + 4;
		snprintf(b->name, sizeof(b->name), "dir");
		if (b->path[0] != '/') {
			fprintf(stderr,
				"pgload: compare: back end \"%s\": the path must be absolute\n",
				arg);
			return -EINVAL;
		}
		if (stat(b->path, &st) < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "pgload: compare: back end \"%s\": %s\n", arg,
				errno && !S_ISDIR(st.st_mode) ? strerror(errno)
							      : "not a directory");
			return -ENOTDIR;
		}
		return 0;
	}
	fprintf(stderr,
		"pgload: compare: unknown back end \"%s\" (ext2, ext3, ext4, xfs, tmpfs or "
		"dir:PATH)\n",
		arg);
	return -EINVAL;
}

/* check_backends() -- root and mkfs for the loop back ends, before anything is made. */
static int check_backends(const struct cmp *m)
{
	for (int i = 0; i < m->nbe; i++) {
		const struct backend *b = &m->be[i];
		if (b->kind != BE_LOOP)
			continue;
		if (geteuid() != 0) {
			fprintf(
			    stderr,
			    "pgload: compare: back end \"%s\" needs root (it makes a file system "
			    "image and loop-mounts it); run as root, or use tmpfs or dir:PATH\n",
			    b->name);
			return -EPERM;
		}
		char mkfs[32];
		snprintf(mkfs, sizeof(mkfs), "mkfs.%s", b->name);
		if (!in_path(mkfs)) {
			fprintf(stderr, "pgload: compare: back end \"%s\": no %s (install %s)\n",
				b->name, mkfs, strcmp(b->name, "xfs") ? "e2fsprogs" : "xfsprogs");
			return -ENOENT;
		}
		if (!in_path("losetup")) {
			fprintf(stderr, "pgload: compare: back end \"%s\": no losetup\n", b->name);
			return -ENOENT;
		}
	}
	return 0;
}

/* check_profiles() -- every profile and --set value as pgiofs reads them. */
static int check_profiles(struct cmp *m)
{
	bool any = false;
	for (int p = 0; p < m->nprofile; p++)
		any |= strcmp(m->profile[p], "native") != 0;
	if (!any) {
		if (m->nsets || m->device)
			fprintf(stderr, "pgload: compare: note: --set and --device apply to pgiofs "
					"cells only, and there are none\n");
		return 0;
	}
	int ret = pgl_io_find_bin(m->pgiofs_bin, m->pgiofs, sizeof(m->pgiofs));
	if (ret < 0) {
		fprintf(
		    stderr, "pgload: compare: %s%s%s: %s\n",
		    m->pgiofs_bin ? "--pgiofs-bin \"" : "no pgiofs binary beside pgload or on PATH",
		    m->pgiofs_bin ? m->pgiofs_bin : "", m->pgiofs_bin ? "\"" : "", strerror(-ret));
		return ret;
	}
	for (int p = 0; p < m->nprofile; p++) {
		if (strcmp(m->profile[p], "native") == 0)
			continue;
		char *argv[8 + 2 * (MAX_SETS * MAX_VALUES)];
		char sets[MAX_SETS * MAX_VALUES][128], dev[64];
		int n = 0, k = 0;
		argv[n++] = m->pgiofs;
		argv[n++] = "--profile";
		argv[n++] = (char *)m->profile[p];
		for (int i = 0; i < m->nsets; i++)
			for (int v = 0; v < m->sets[i].nval; v++) {
				snprintf(sets[k], sizeof(sets[k]), "%s=%s", m->sets[i].name,
					 m->sets[i].val[v]);
				argv[n++] = "--set";
				argv[n++] = sets[k++];
			}
		if (m->device) {
			snprintf(dev, sizeof(dev), "device.model=%s", m->device);
			argv[n++] = "--set";
			argv[n++] = dev;
		}
		argv[n++] = "--print-config";
		argv[n] = NULL;
		char out[65536];
		int st = run_cmd(argv, out, sizeof(out));
		if (st != 0) {
			char *nl = strstr(out, "pgiofs:");
			fprintf(stderr, "pgload: compare: profile \"%s\"%s refused by %s: %s",
				m->profile[p],
				m->nsets || m->device ? " with the --set values" : "", m->pgiofs,
				nl ? nl : "\n");
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_set(struct cmp *m, const char *arg)
{
	if (m->nsets == MAX_SETS) {
		fprintf(stderr, "pgload: compare: at most %d --set sweeps\n", MAX_SETS);
		return -E2BIG;
	}
	struct sweep *s = &m->sets[m->nsets];
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : 0;
	if (!eq || nl == 0 || nl >= sizeof(s->name) || !eq[1] || strchr(eq + 1, '=') ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_.") != nl) {
		fprintf(stderr,
			"pgload: compare: --set \"%s\": NAME=V1,V2,... expected (a pgiofs tunable "
			"such as iosched.nr_requests=128,1024)\n",
			arg);
		return -EINVAL;
	}
	memcpy(s->name, arg, nl);
	s->name[nl] = '\0';
	s->buf = strdup(eq + 1);
	if (!s->buf)
		return -ENOMEM;
	if (strstr(eq + 1, ",,") || eq[1] == ',' || eq[strlen(eq) - 1] == ',') {
		fprintf(stderr, "pgload: compare: --set \"%s\": empty value\n", arg);
		free(s->buf);
		return -EINVAL;
	}
	int n = split_list(s->buf, s->val, MAX_VALUES, "--set");
	if (n < 0) {
		free(s->buf);
		return n;
	}
	s->nval = n;
	m->nsets++;
	return 0;
}

/* find_workload() -- the phase files of --workload DIR. */
static int find_workload(struct cmp *m, const char *dir)
{
	static const char *const base[PGL_NPHASE] = {"schema.sql", "data.sql", "post.sql"};
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		m->files[ph][0] = '\0';
		for (int z = 0; z < 2 && !m->files[ph][0]; z++) {
			char path[1100];
			snprintf(path, sizeof(path), "%s/%s%s", dir, base[ph], z ? ".lz4" : "");
			if (access(path, R_OK) == 0)
				snprintf(m->files[ph], sizeof(m->files[ph]), "%s", path);
		}
	}
	if (!m->files[PGL_PH_DATA][0]) {
		fprintf(stderr,
			"pgload: compare: --workload \"%s\": no data.sql (or data.sql.lz4)\n", dir);
		return -ENOENT;
	}
	return 0;
}

/* make_cells() -- back end x profile x every combination of --set values. */
static int make_cells(struct cmp *m)
{
	int combos = 1;
	for (int i = 0; i < m->nsets; i++)
		combos *= m->sets[i].nval;
	int max = m->nbe * m->nprofile * combos;
	if (max > MAX_CELLS) {
		fprintf(stderr, "pgload: compare: %d cells; at most %d\n", max, MAX_CELLS);
		return -E2BIG;
	}
	m->cell = calloc((size_t)max, sizeof(*m->cell));
	if (!m->cell)
		return -ENOMEM;
	for (int b = 0; b < m->nbe; b++)
		for (int p = 0; p < m->nprofile; p++) {
			bool native = strcmp(m->profile[p], "native") == 0;
			for (int k = 0; k < (native ? 1 : combos); k++) {
				struct cell *c = &m->cell[m->ncell];
				c->idx = m->ncell++;
				c->be = &m->be[b];
				c->profile = native ? NULL : m->profile[p];
				char sets[128] = "";
				int rest = k;
				for (int i = 0; i < m->nsets && !native; i++) {
					c->setv[i] = m->sets[i].val[rest % m->sets[i].nval];
					rest /= m->sets[i].nval;
					size_t l = strlen(sets);
					snprintf(sets + l, sizeof(sets) - l, " %s=%s",
						 m->sets[i].name, c->setv[i]);
				}
				snprintf(c->label, sizeof(c->label), "%s/%s%s", c->be->name,
					 m->profile[p], sets);
				snprintf(c->words, sizeof(c->words), "%s%s on %s", m->profile[p],
					 sets, c->be->name);
			}
		}
	m->baseline = 0;
	if (m->baseline_arg) {
		char *end;
		long v = strtol(m->baseline_arg, &end, 10);
		m->baseline = -1;
		if (*end == '\0' && v >= 1 && v <= m->ncell)
			m->baseline = (int)v - 1;
		for (int i = 0; i < m->ncell && m->baseline < 0; i++)
			if (strcmp(m->cell[i].label, m->baseline_arg) == 0)
				m->baseline = i;
		if (m->baseline < 0) {
			fprintf(stderr,
				"pgload: compare: --baseline \"%s\": no such cell; the cells are:",
				m->baseline_arg);
			for (int i = 0; i < m->ncell; i++)
				fprintf(stderr, "%s %d \"%s\"", i ? "," : "", i + 1,
					m->cell[i].label);
			fprintf(stderr, "\n");
			return -EINVAL;
		}
	}
	for (int i = 0; i < m->ncell; i++) {
		m->cell[i].s = calloc((size_t)m->runs, sizeof(struct sample));
		if (!m->cell[i].s)
			return -ENOMEM;
	}
	return 0;
}

/* parse_args() -- 0, 1 for --help, or -errno (after saying why). */
static int parse_args(struct cmp *m, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"workload", required_argument, NULL, 'w'},
	    {"gen", required_argument, NULL, 'g'},
	    {"backends", required_argument, NULL, 'b'},
	    {"profiles", required_argument, NULL, 'P'},
	    {"runs", required_argument, NULL, 'n'},
	    {"set", required_argument, NULL, 's'},
	    {"load", required_argument, NULL, 'l'},
	    {"device", required_argument, NULL, 'D'},
	    {"baseline", required_argument, NULL, 'B'},
	    {"out", required_argument, NULL, 'o'},
	    {"size", required_argument, NULL, 'S'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"pgbin", required_argument, NULL, 'X'},
	    {"pgiofs-bin", required_argument, NULL, 'Y'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *backends = NULL, *profiles = NULL, *end;
	int opt, ret;
	m->runs = 3;
	m->jobs = 1;
	m->size = DEFAULT_SIZE;
	m->gen_scale = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "w:g:b:P:n:s:l:o:j:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			m->workload = optarg;
			break;
		case 'g':
			m->gen_scale = strtod(optarg, &end);
			if (*end || end == optarg || !(m->gen_scale > 0 && m->gen_scale <= 1000)) {
				fprintf(stderr,
					"pgload: compare: --gen \"%s\": a scale above 0 and "
					"at most 1000 expected\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			backends = optarg;
			break;
		case 'P':
			profiles = optarg;
			break;
		case 'n':
		case 'j': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > (opt == 'n' ? 1000 : 64)) {
				fprintf(stderr,
					"pgload: compare: %s \"%s\": an integer from 1 to %d "
					"expected\n",
					opt == 'n' ? "--runs" : "--jobs", optarg,
					opt == 'n' ? 1000 : 64);
				return -EINVAL;
			}
			*(opt == 'n' ? &m->runs : &m->jobs) = (int)v;
			break;
		}
		case 's':
			if ((ret = parse_set(m, optarg)) < 0)
				return ret;
			break;
		case 'l':
			for (m->load = LOAD_NONE; m->load <= LOAD_READ; m->load++)
				if (strcmp(optarg, load_names[m->load]) == 0)
					break;
			if (m->load > LOAD_READ) {
				fprintf(stderr,
					"pgload: compare: --load \"%s\": none, io_load or "
					"read_load expected\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			if (strcmp(optarg, "none") && strcmp(optarg, "hdd") &&
			    strcmp(optarg, "ssd")) {
				fprintf(stderr,
					"pgload: compare: --device \"%s\": none, hdd or ssd "
					"expected\n",
					optarg);
				return -EINVAL;
			}
			m->device = strcmp(optarg, "none") ? optarg : NULL;
			break;
		case 'B':
			m->baseline_arg = optarg;
			break;
		case 'o':
			m->out = optarg;
			break;
		case 'S':
			if ((ret = parse_size(optarg, &m->size)) < 0)
				return ret;
			break;
		case 'X':
			m->pgbin = optarg;
			break;
		case 'Y':
			m->pgiofs_bin = optarg;
			break;
		case 'q':
			m->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload: compare: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!m->workload == (m->gen_scale < 0)) {
		fprintf(stderr, "pgload: compare: give one of --workload DIR and --gen SCALE\n");
		return -EINVAL;
	}
	if (!backends || !profiles) {
		fprintf(stderr, "pgload: compare: --backends and --profiles are required\n");
		return -EINVAL;
	}
	const char *items[MAX_BACKENDS > MAX_PROFILES ? MAX_BACKENDS : MAX_PROFILES];
	int n = split_list(backends, items, MAX_BACKENDS, "--backends");
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if ((ret = parse_backend(items[i], &m->be[m->nbe++])) < 0)
			return ret;
	if ((n = split_list(profiles, m->profile, MAX_PROFILES, "--profiles")) < 0)
		return n;
	m->nprofile = n;
	for (int i = 0; i < n; i++)
		if (!m->profile[i][0] || strchr(m->profile[i], ' ')) {
			fprintf(stderr, "pgload: compare: bad profile name \"%s\"\n",
				m->profile[i]);
			return -EINVAL;
		}
	if (m->workload && (ret = find_workload(m, m->workload)) < 0)
		return ret;
	if ((ret = check_backends(m)) < 0 || (ret = check_profiles(m)) < 0)
		return ret;
	return make_cells(m);
}

/* ---- report ---------------------------------------------------------------- */

static void summarize(struct cmp *m)
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
		m->runs, m->runs == 1 ? "" : "s", wl, load_names[m->load],
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
		m->jobs, load_names[m->load]);
	json_str_write(f, m->device ? m->device : "none");
	fprintf(f, ", \"size_bytes\": %llu,\n    \"backends\": [", (unsigned long long)m->size);
	for (int i = 0; i < m->nbe; i++) {
		fprintf(f, "%s", i ? ", " : "");
		if (m->be[i].kind == BE_DIR) {
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
		json_str_write(f, c->be->name);
		fprintf(f, ", \"backend_path\": ");
		if (c->be->kind == BE_DIR)
			json_str_write(f, c->be->path);
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
			pgl_csv_field(f, c->be->name);
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
	if (!in_path("gnuplot")) {
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
	if (run_ok("gnuplot", argv, NULL, 0) < 0)
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

/* report() -- the table on stdout and every file in --out. */
static int report(struct cmp *m)
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
		fprintf(stderr, "pgload: compare: could not create --out \"%s\": %s\n", m->out,
			strerror(e));
		return -e;
	}
	return 0;
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
			if ((ret = cell_run(m, c, r, &l)) < 0) {
				if (c->server && !pgl_server_alive(c->server)) {
					char how[128];
					pgl_server_describe_exit(c->server, how, sizeof(how));
					fprintf(stderr, "pgload: compare: cell %s: %s\n", c->label,
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
	for (int i = 0; i < m->ncell; i++) {
		struct cell *c = &m->cell[i];
		const char *mnt = c->server ? pgl_server_mount(c->server) : NULL;
		char err[600];
		if (!mnt)
			continue;
		if (pgl_step("latency", "reading the latency of cell %d %s", i + 1, c->label)) {
			ret = -EINTR;
			goto out;
		}
		if (pgl_io_sample(m->pgiofs, mnt, &c->lat, err, sizeof(err)) < 0)
			fprintf(stderr, "pgload: compare: cell %s: `%s stat %s --json`: %s\n",
				c->label, m->pgiofs, mnt, err);
		else
			c->has_lat = c->lat.has_lat;
	}
	ret = 0;
out:
	pgl_step_context(NULL);
	munmap((void *)counter, sizeof(*counter));
	return ret;
}

int pgl_cmd_compare(int argc, char **argv)
{
	struct cmp m = {0};
	char outbuf[64], path[128];
	int ret = parse_args(&m, argc, argv), status = 0;
	if (ret != 0)
		return ret > 0 ? 0 : 1;
	signal(SIGPIPE, SIG_IGN);
	if (pgl_signals_start() < 0) {
		fprintf(stderr, "pgload: cannot set up signal handling\n");
		return 1;
	}
	clean_leftovers();
	bool out_made = false;
	if (make_out(&m, outbuf, sizeof(outbuf), &out_made) < 0)
		return 1;
	snprintf(m.wd, sizeof(m.wd), WD_PREFIX "XXXXXX");
	if (!mkdtemp(m.wd)) {
		fprintf(stderr, "pgload: compare: could not create a directory in /tmp: %s\n",
			strerror(errno));
		return 1;
	}
	chmod(m.wd, 0711);
	snprintf(path, sizeof(path), "%s/state", m.wd);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "pid %d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		fprintf(stderr, "pgload: compare: could not write \"%s\"\n", path);
		pgl_rmtree(m.wd);
		if (out_made)
			rmdir(m.out);
		return 1;
	}
	say(&m, "%d cells x %d runs, interleaved; work directory %s", m.ncell, m.runs, m.wd);
	time_t t0 = time(NULL);
	struct tm tm;
	localtime_r(&t0, &tm);
	strftime(m.started, sizeof(m.started), "%Y-%m-%dT%H:%M:%S%z", &tm);
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(m.kernel, sizeof(m.kernel), "%s %s %s", u.sysname, u.release, u.machine);
	double start = pgl_now();
	if (m.gen_scale > 0) {
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/workload", m.wd);
		struct pgl_gen_opts g = {.scale = m.gen_scale, .seed = 1, .outdir = dir};
		say(&m, "generating the workload (scale %g) in %s", m.gen_scale, dir);
		if (pgl_step("gen", "generating the workload")) {
			status = 2;
			goto out;
		}
		if (pgl_gen(&g) < 0 || find_workload(&m, dir) < 0) {
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
	int left = cleanup_workdir(m.wd);
	if (left)
		fprintf(stderr, "pgload: compare: %d thing%s left by the cells removed\n", left,
			left == 1 ? " was" : "s were");
	m.seconds = pgl_now() - start;
	bool reported = false;
	if (status == 0 && !atomic_load(&pgl_interrupted)) {
		pgl_step("report", "writing the report");
		summarize(&m);
		if (report(&m) < 0)
			status = 1;
		reported = true;
		say(&m, "done in %.0f s", m.seconds);
	}
	if (atomic_load(&pgl_interrupted)) {
		char step[512];
		pgl_interrupted_step(step, sizeof(step));
		if (reported)
			fprintf(stderr,
				"pgload: compare: interrupted while %s: the report in %s is "
				"complete; nothing else of the run is left\n",
				step, m.out);
		else
			fprintf(stderr,
				"pgload: compare: interrupted; everything it created is removed "
				"(the signal came while %s)\n",
				step);
	}
	if ((status != 0 || atomic_load(&pgl_interrupted)) && out_made)
		rmdir(m.out); /* an --out it made goes too if it stayed empty */
	for (int i = 0; i < m.ncell; i++)
		free(m.cell[i].s);
	free(m.cell);
	for (int i = 0; i < m.nsets; i++)
		free(m.sets[i].buf);
	if (atomic_load(&pgl_interrupted))
		status = 2;
	return status;
}
