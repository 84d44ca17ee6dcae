/*
 * testbed.c -- the work directory of `pgload compare` and the clean-up
 * that leaves nothing behind, even after a run that was killed (see
 * testbed.h); the back ends set up in it are backends.c's, which tears
 * them down with the helpers at the end of testbed.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pgload_i.h"
#include "testbed.h"

#define WD_NAME "pgload-compare."

struct pgl_testbed {
	char wd[PGL_TMPDIR_MAX + 32];
};

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

/* What users() does with the processes it finds. */
enum users_mode {
	USERS_COUNT,	    /* count them (daemons too) */
	USERS_KILL_CLIENTS, /* kill all but the daemons serving mounts (pgiofs, pgdisk) */
	USERS_KILL_ALL,	    /* kill them all */
};

/* is_daemon() -- the program ARGV0 serves a mount: it goes with the mount. */
static bool is_daemon(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	return strcmp(base, "pgiofs") == 0 || strcmp(base, "pgdisk") == 0;
}

/* users() -- the processes (not us) whose command line names a path under
 * DIRS: count or kill them (MODE).  Returns how many. */
static int users(char dirs[][1024], int ndirs, enum users_mode mode)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;
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
		bool hit = false;
		for (char *a = buf; a < buf + n && !hit; a += strlen(a) + 1)
			for (int i = 0; i < ndirs && !hit; i++)
				hit = strstr(a, dirs[i]) != NULL;
		if (!hit || (mode == USERS_KILL_CLIENTS && is_daemon(buf)))
			continue;
		if (mode != USERS_COUNT)
			kill(pid, SIGKILL);
		found++;
	}
	closedir(d);
	return found;
}

/* wait_users() -- until no process names a path under DIRS (SECS at most). */
static void wait_users(char dirs[][1024], int ndirs, double secs)
{
	for (double t0 = pgl_now(); users(dirs, ndirs, USERS_COUNT) && pgl_now() - t0 < secs;)
		usleep(50000);
}

void pgl_testbed_wait_users(const char *dir, double secs, bool kill_left)
{
	char dirs[1][1024];
	snprintf(dirs[0], sizeof(dirs[0]), "%s", dir);
	wait_users(dirs, 1, secs);
	if (kill_left)
		users(dirs, 1, USERS_KILL_ALL);
}

#define MAX_UNMOUNT 64

#define PGDISK_FSTYPE "fuse.pgdisk"

struct mounts_under {
	const char *dir;
	bool but_pgdisk;
	char (*mnts)[PATH_MAX];
	int n;
};

static int add_under(const struct mountinfo *m, void *arg)
{
	struct mounts_under *u = arg;
	const char *base = strrchr(m->point, '/');
	bool below_pgdisk =
	    strcmp(m->fstype, PGDISK_FSTYPE) == 0 ||
	    (strcmp(m->fstype, "tmpfs") == 0 && base && strcmp(base + 1, PGL_IMAGE_TMPFS) == 0);
	if (path_is_under(m->point, u->dir) && !(u->but_pgdisk && below_pgdisk))
		snprintf(u->mnts[u->n++], sizeof(u->mnts[0]), "%s", m->point);
	return u->n == MAX_UNMOUNT;
}

int pgl_testbed_unmount_under(const char *dir, bool but_pgdisk)
{
	char(*mnts)[PATH_MAX] = calloc(MAX_UNMOUNT, PATH_MAX);
	struct mounts_under u = {.dir = dir, .but_pgdisk = but_pgdisk, .mnts = mnts};
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
				ok = pgl_run_cmd(argv, NULL, 0) == 0;
				break;
			}
			if (!ok)
				usleep(100000);
		}
		if (!ok && umount2(mnts[i], MNT_DETACH) < 0)
			fprintf(stderr, "pgload compare: could not unmount \"%s\": %s\n", mnts[i],
				strerror(errno));
		done++;
	}
	free(mnts);
	return done;
}

int pgl_testbed_detach_loops_under(const char *dir)
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
				fprintf(stderr, "pgload compare: could not detach %s: %s\n",
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
	char dirs[PGL_TESTBED_MAX_DIRS + 1][1024];
	pid_t owner;
	int n = read_state(wd, &owner, dirs + 1, PGL_TESTBED_MAX_DIRS);
	int found = 0;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", wd);
	/* servers first, so that the file systems can go; then the mounts (the
	 * pgiofs daemons exit with theirs) but pgdisk's, the loop devices on
	 * pgdisk's disks, pgdisk's mounts; then any daemon still there */
	found += users(dirs, n + 1, USERS_KILL_CLIENTS);
	usleep(found ? 200000 : 0);
	found += pgl_testbed_unmount_under(wd, true);
	found += pgl_testbed_detach_loops_under(wd);
	found += pgl_testbed_unmount_under(wd, false);
	wait_users(dirs, n + 1, 5.0);
	found += users(dirs, n + 1, USERS_KILL_ALL);
	for (int i = 1; i <= n; i++) {
		if (access(dirs[i], F_OK) == 0) {
			found++;
			if (pgl_rmtree(dirs[i]) < 0)
				fprintf(stderr, "pgload compare: could not remove \"%s\"\n",
					dirs[i]);
		}
	}
	if (pgl_rmtree(wd) < 0)
		fprintf(stderr, "pgload compare: could not remove \"%s\"\n", wd);
	return found;
}

/*
 * clean_leftovers() -- the work directories of earlier compare runs whose
 * owner is gone: say so and clean them.
 */
static void clean_leftovers(const char *tmp)
{
	char pattern[PGL_TMPDIR_MAX + 32];
	glob_t g;
	snprintf(pattern, sizeof(pattern), "%s/" WD_NAME "*", tmp);
	if (glob(pattern, GLOB_ONLYDIR, NULL, &g) != 0)
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
			"pgload compare: cleaning up after an earlier interrupted run "
			"(pid %d): %s\n",
			(int)owner, wd);
		int n = cleanup_workdir(wd);
		fprintf(stderr,
			"pgload compare: removed %s and %d leftover%s (mounts, loop "
			"devices, processes, directories)\n",
			wd, n, n == 1 ? "" : "s");
	}
	globfree(&g);
}

int pgl_testbed_record(struct pgl_testbed *tb, const char *dir)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/state", tb->wd);
	FILE *f = fopen(path, "a");
	if (!f)
		return -errno;
	fprintf(f, "dir %s\n", dir);
	return fclose(f) == 0 ? 0 : -errno;
}

/* ---- the work directory --------------------------------------------------- */

int pgl_testbed_create(struct pgl_testbed **out)
{
	struct pgl_testbed *tb = calloc(1, sizeof(*tb));
	char path[128];
	int ret;
	*out = NULL;
	const char *tmp;
	if (!tb)
		return -ENOMEM;
	if ((ret = pgl_tmpdir(&tmp)) < 0) {
		free(tb);
		return ret;
	}
	clean_leftovers(tmp);
	snprintf(tb->wd, sizeof(tb->wd), "%s/" WD_NAME "XXXXXX", tmp);
	if (!mkdtemp(tb->wd)) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not create a directory in \"%s\": %s\n", tmp,
			strerror(-ret));
		free(tb);
		return ret;
	}
	chmod(tb->wd, 0711);
	snprintf(path, sizeof(path), "%s/state", tb->wd);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "pid %d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not write \"%s\"\n", path);
		pgl_rmtree(tb->wd);
		free(tb);
		return ret < 0 ? ret : -EIO;
	}
	*out = tb;
	return 0;
}

const char *pgl_testbed_dir(const struct pgl_testbed *tb)
{
	return tb->wd;
}

int pgl_testbed_mkdir_path(const char *dir)
{
	if (mkdir(dir, 0711) < 0 && errno != EEXIST) {
		int e = errno;
		fprintf(stderr, "pgload compare: could not create directory \"%s\": %s\n", dir,
			strerror(e));
		return -e;
	}
	chmod(dir, 0711);
	return 0;
}

int pgl_testbed_mkdir(struct pgl_testbed *tb, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", tb->wd, name);
	return pgl_testbed_mkdir_path(path);
}

int pgl_testbed_destroy(struct pgl_testbed *tb)
{
	if (!tb)
		return 0;
	int found = cleanup_workdir(tb->wd);
	free(tb);
	return found;
}
