/*
 * testbed.c -- the test bed of `pgload compare`: the work directory, the
 * back ends (file system images on loop devices, tmpfs, a directory) and
 * the clean-up that leaves nothing behind (see testbed.h).
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

struct pgl_backend {
	struct pgl_testbed *tb;
	const struct pgl_backend_spec *spec;
	uint64_t size;
	char dir[256];	 /* the caller's directory in the test bed */
	char root[1024]; /* the back end's directory for the cluster */
	char img[1100];	 /* a file system image, or "" */
	char loopdev[64];
	bool mounted;
};

/* One kind of back end. */
struct pgl_backend_ops {
	/* check() -- before anything is made (NULL: nothing to check) */
	int (*check)(const struct pgl_backend_spec *spec);
	/* up() -- set BE up: be->root is then a fresh directory on it */
	int (*up)(struct pgl_backend *be);
	/* down() -- more than the generic tear-down, before it (NULL: none) */
	void (*down)(struct pgl_backend *be);
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
				ok = pgl_run_cmd(argv, NULL, 0) == 0;
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
	char dirs[PGL_TESTBED_MAX_DIRS + 1][1024];
	pid_t owner;
	int n = read_state(wd, &owner, dirs + 1, PGL_TESTBED_MAX_DIRS);
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
static int state_add_dir(struct pgl_testbed *tb, const char *dir)
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
		fprintf(stderr, "pgload: compare: could not create a directory in \"%s\": %s\n",
			tmp, strerror(-ret));
		free(tb);
		return ret;
	}
	chmod(tb->wd, 0711);
	snprintf(path, sizeof(path), "%s/state", tb->wd);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "pid %d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		ret = -errno;
		fprintf(stderr, "pgload: compare: could not write \"%s\"\n", path);
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

/* mkdir_x() -- make DIR; the server user may traverse it (the server runs as postgres). */
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

int pgl_testbed_mkdir(struct pgl_testbed *tb, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", tb->wd, name);
	return mkdir_x(path);
}

int pgl_testbed_destroy(struct pgl_testbed *tb)
{
	if (!tb)
		return 0;
	int found = cleanup_workdir(tb->wd);
	free(tb);
	return found;
}

/* ---- back ends ------------------------------------------------------------ */

/* fresh_dir() -- a new directory TEMPLATE (mkdtemp) recorded in the state file. */
static int fresh_dir(struct pgl_backend *be, const char *template)
{
	int ret;
	snprintf(be->root, sizeof(be->root), "%s", template);
	if (!mkdtemp(be->root)) {
		ret = -errno;
		fprintf(stderr, "pgload: compare: could not create a directory \"%s\": %s\n",
			template, strerror(-ret));
		be->root[0] = '\0';
		return ret;
	}
	if ((ret = state_add_dir(be->tb, be->root)) < 0) {
		rmdir(be->root);
		be->root[0] = '\0';
		return ret;
	}
	chmod(be->root, 0711);
	return 0;
}

/* dir:PATH -- a fresh subdirectory of PATH. */
static int dir_up(struct pgl_backend *be)
{
	char template[1100];
	snprintf(template, sizeof(template), "%s/pgload-compare.XXXXXX", be->spec->path);
	return fresh_dir(be, template);
}

/* tmpfs -- mounted at DIR/fs; without root, a fresh directory of /dev/shm. */
static int tmpfs_up(struct pgl_backend *be)
{
	char fs[300], opts[64];
	int ret;
	snprintf(fs, sizeof(fs), "%s/fs", be->dir);
	if ((ret = mkdir_x(fs)) < 0)
		return ret;
	if (geteuid() != 0)
		return fresh_dir(be, "/dev/shm/pgload-compare.XXXXXX");
	snprintf(opts, sizeof(opts), "size=%llu,mode=0711", (unsigned long long)be->size);
	if (pgl_step("mount", "mounting a tmpfs at %s", fs))
		return -EINTR;
	if (mount("pgload-compare", fs, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload: compare: could not mount a tmpfs at \"%s\": %s\n", fs,
			strerror(-ret));
		return ret;
	}
	be->mounted = true;
	snprintf(be->root, sizeof(be->root), "%s", fs);
	return 0;
}

/* loop_check() -- root, the back end's mkfs and losetup. */
static int loop_check(const struct pgl_backend_spec *spec)
{
	char mkfs[32], path[4096];
	if (geteuid() != 0) {
		fprintf(stderr,
			"pgload: compare: back end \"%s\" needs root (it makes a file system "
			"image and loop-mounts it); run as root, or use tmpfs or dir:PATH\n",
			spec->name);
		return -EPERM;
	}
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", spec->name);
	if (pgl_which(mkfs, path, sizeof(path)) < 0) {
		fprintf(stderr, "pgload: compare: back end \"%s\": no %s (install %s)\n",
			spec->name, mkfs, strcmp(spec->name, "xfs") ? "e2fsprogs" : "xfsprogs");
		return -ENOENT;
	}
	if (pgl_which("losetup", path, sizeof(path)) < 0) {
		fprintf(stderr, "pgload: compare: back end \"%s\": no losetup\n", spec->name);
		return -ENOENT;
	}
	return 0;
}

/* ext2, ext3, ext4, xfs -- an image of SIZE in DIR on a loop device, mounted at DIR/fs. */
static int loop_up(struct pgl_backend *be)
{
	const char *type = be->spec->name;
	char fs[300], out[256], mkfs[32];
	int ret;
	snprintf(fs, sizeof(fs), "%s/fs", be->dir);
	snprintf(be->img, sizeof(be->img), "%s/fs.img", be->dir);
	int fd = open(be->img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)be->size) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload: compare: could not create image \"%s\": %s\n", be->img,
			strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(fd);
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", type);
	char *xfs[] = {mkfs, "-q", "-f", be->img, NULL};
	char *ext[] = {mkfs, "-q", "-F", be->img, NULL};
	if (pgl_step("mkfs", "running %s on %s", mkfs, be->img))
		return -EINTR;
	if ((ret = pgl_run_ok("compare: mkfs", strcmp(type, "xfs") == 0 ? xfs : ext, NULL, 0)) < 0)
		return ret;
	char *los[] = {"losetup", "--find", "--show", be->img, NULL};
	if (pgl_step("losetup", "attaching %s to a loop device", be->img))
		return -EINTR;
	if ((ret = pgl_run_ok("compare: losetup", los, out, sizeof(out))) < 0)
		return ret;
	out[strcspn(out, "\n")] = '\0';
	snprintf(be->loopdev, sizeof(be->loopdev), "%.63s", out);
	if ((ret = mkdir_x(fs)) < 0)
		return ret;
	if (pgl_step("mount", "mounting %s (%s) at %s", be->loopdev, type, fs))
		return -EINTR;
	if (mount(be->loopdev, fs, type, MS_NOSUID | MS_NODEV, NULL) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload: compare: could not mount %s (%s on %s) at \"%s\": %s\n",
			be->loopdev, type, be->img, fs, strerror(-ret));
		return ret;
	}
	be->mounted = true;
	chmod(fs, 0711);
	snprintf(be->root, sizeof(be->root), "%s", fs);
	return 0;
}

static const struct pgl_backend_ops loop_ops = {.check = loop_check, .up = loop_up};
static const struct pgl_backend_ops tmpfs_ops = {.up = tmpfs_up};
static const struct pgl_backend_ops dir_ops = {.up = dir_up};

/* The back ends by name ("dir:" takes a path). */
static const struct {
	const char *name;
	const struct pgl_backend_ops *ops;
} backends[] = {
    {"ext2", &loop_ops}, {"ext3", &loop_ops},	{"ext4", &loop_ops},
    {"xfs", &loop_ops},	 {"tmpfs", &tmpfs_ops}, {"dir", &dir_ops},
};

int pgl_backend_parse(const char *arg, struct pgl_backend_spec *b)
{
	struct stat st;
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		size_t n = strlen(backends[i].name);
		bool dir = backends[i].ops == &dir_ops;
		if (dir ? strncmp(arg, "dir:", 4) != 0 : strcmp(arg, backends[i].name) != 0)
			continue;
		b->ops = backends[i].ops;
		snprintf(b->name, sizeof(b->name), "%.*s", (int)n, backends[i].name);
		if (!dir)
			return 0;
		b->path = arg + 4;
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

int pgl_backend_check(const struct pgl_backend_spec *spec)
{
	return spec->ops->check ? spec->ops->check(spec) : 0;
}

int pgl_backend_up(struct pgl_testbed *tb, const struct pgl_backend_spec *spec, const char *dir,
		   uint64_t size, struct pgl_backend **out)
{
	struct pgl_backend *be = calloc(1, sizeof(*be));
	int ret;
	*out = NULL;
	if (!be)
		return -ENOMEM;
	be->tb = tb;
	be->spec = spec;
	be->size = size;
	snprintf(be->dir, sizeof(be->dir), "%s", dir);
	if (pgl_step("backend", "preparing the %s back end", spec->name))
		ret = -EINTR;
	else
		ret = spec->ops->up(be);
	if (ret < 0) {
		pgl_backend_down(be);
		return ret;
	}
	*out = be;
	return 0;
}

const char *pgl_backend_root(const struct pgl_backend *be)
{
	return be->root;
}

int pgl_backend_down(struct pgl_backend *be)
{
	int ret = 0;
	if (!be)
		return 0;
	if (be->spec->ops->down)
		be->spec->ops->down(be);
	if (be->mounted)
		unmount_under(be->root);
	if (be->loopdev[0])
		detach_loops_under(be->dir);
	/* the directory of the test bed goes with it; one elsewhere goes now */
	if (be->root[0] && !path_is_under(be->root, be->dir))
		ret = pgl_rmtree(be->root);
	free(be);
	return ret;
}
