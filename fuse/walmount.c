/*
 * walmount.c -- WAL mounts: with files.wal_mode = passthrough and the
 * kernel's write-back cache on, each pg_wal directory of the mount gets a
 * FUSE connection of its own, mounted over it by this daemon, on which WAL
 * files are opened in passthrough (the kernel allows passthrough only on a
 * connection without the write-back cache).  Data files keep the write-back
 * cache; commits write WAL without a round trip to the daemon.
 *
 * A WAL mount is one more session of the same daemon: its struct pfs has
 * the mount's struct pfs as its core (fs->core), so it shares the
 * scheduler (dbaware's writeback throttle sees its fsyncs), the write
 * cache, the statistics, the trace and the control channel.
 *
 * When: at start, over the pg_wal directory of every data directory (one
 * holding PG_VERSION) in the top SCAN_DEPTH levels of the backing tree (an
 * existing cluster); later, whenever a handler of the mount meets a
 * directory named pg_wal (lookup, mkdir: a fresh initdb; a rename into
 * place) that has not had a WAL mount yet.  A pg_wal that is a symlink
 * (initdb --waldir) is left alone: its WAL is not on the mount.  Each WAL
 * mount is made from a thread of its own, since the mount's path lookup
 * needs the mount's workers, which may be the caller.
 *
 * What must stay true: a backing pg_wal directory (dev, ino) gets at most
 * one WAL mount in the daemon's life (unmounted by itself, its WAL is
 * reached through the mount, direct: it is not mounted again); a WAL
 * session's requests have completed, and been answered, before its
 * /dev/fuse descriptor is closed and its rings, session and filesystem
 * are freed (pfs_drain() of the shared scheduler); the daemon's stop paths
 * unmount the WAL mounts before the mount (the mount is busy while they
 * exist), and when the mount's session ends every WAL session ends with it.
 */
#include "pgiofs_i.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioprio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SCAN_DEPTH    3	   /* levels below the backing root searched at start */
#define SCAN_MAX_DIRS 4096 /* directories looked at, at most */
#define END_WAIT_MS   2000 /* for a WAL session to end before it is aborted */

enum wm_state {
	WM_MOUNTING,
	WM_MOUNTED,
	WM_ENDED,  /* unmounted (by itself, or by the daemon) */
	WM_FAILED, /* could not be mounted: WAL stays direct on the mount */
};

struct walmount {
	struct walmount *next;
	struct pfs_walmounts *wm;
	dev_t dev; /* the backing pg_wal directory */
	ino_t ino;
	char backing[PATH_MAX];
	char point[PATH_MAX];
	struct pfs fs; /* its filesystem; fs.core is the mount's */
	struct fuse_session *se;
	pthread_t thread;
	int hold_fd;	       /* O_PATH of the directory, kept: its inode number is not
				* reused while we remember it (-1: never opened) */
	unsigned major, minor; /* of the WAL mount, for aborting it */
	atomic_int state;      /* enum wm_state */
	char why[256];	       /* WM_FAILED: the reason */
	char prio[64];	       /* its threads' priority in effect (prioritize()) */
	bool at_start;	       /* started by pfs_walmounts_start() */
};

struct pfs_walmounts {
	struct pfs *fs; /* the mount */
	char backing[PATH_MAX];
	char mountpoint[PATH_MAX];
	char opts[2 * PATH_MAX + 256]; /* FUSE options, without fsname */
	pthread_mutex_t lock;
	struct walmount *list; /* under lock; every WAL mount ever started */
	unsigned starting;     /* under lock: WAL mounts of the start not settled */
	int ready_fd;	       /* under lock: told when starting reaches 0, or -1 */
	atomic_bool stopping;  /* no new WAL mount */
};

static void consider(struct pfs *fs, struct pfs_inode *dir, const char *name,
		     const struct stat *st);

int pfs_walmounts_create(struct pfs *fs, const char *backing, const char *mountpoint,
			 const char *opts)
{
	struct pfs_walmounts *wm = calloc(1, sizeof(*wm));

	if (!wm)
		return -ENOMEM;
	wm->fs = fs;
	snprintf(wm->backing, sizeof(wm->backing), "%s", backing);
	snprintf(wm->mountpoint, sizeof(wm->mountpoint), "%s", mountpoint);
	snprintf(wm->opts, sizeof(wm->opts), "%s", opts);
	pthread_mutex_init(&wm->lock, NULL);
	wm->ready_fd = -1;
	fs->walmounts = wm;
	fs->wal_dir_seen = consider;
	return 0;
}

/* tell_ready() -- the command waiting on @fd may return. */
static void tell_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "1", 1) < 0)
		log_msg(LOG_WARNING, "cannot tell the command the mount is ready: %s",
			strerror(errno));
	close(fd);
}

/* settled() -- @m is mounted or failed: the command returns once every WAL
 * mount of the start is. */
static void settled(struct walmount *m)
{
	struct pfs_walmounts *wm = m->wm;

	pthread_mutex_lock(&wm->lock);
	if (m->at_start && --wm->starting == 0) {
		tell_ready(wm->ready_fd);
		wm->ready_fd = -1;
	}
	m->at_start = false;
	pthread_mutex_unlock(&wm->lock);
}

/* fail() -- @m could not be mounted: say why, once. */
static void fail(struct walmount *m, const char *fmt, const char *arg)
{
	snprintf(m->why, sizeof(m->why), fmt, arg);
	log_msg(LOG_WARNING,
		"WAL mount over \"%s\": %s; WAL there is opened direct through the mount instead",
		m->point, m->why);
	atomic_store(&m->state, WM_FAILED);
}

/* session_new() -- the WAL mount's FUSE session (the mount's options, its
 * own fsname), or NULL. */
static struct fuse_session *session_new(struct walmount *m)
{
	char opts[sizeof(m->wm->opts) + PATH_MAX + 16], *argv[4];
	struct fuse_args args;
	struct fuse_session *se;
	char *p;

	snprintf(opts, sizeof(opts), "%s", m->wm->opts);
	if (!strstr(opts, "fsname=")) {
		size_t n = strlen(opts);

		snprintf(opts + n, sizeof(opts) - n, ",fsname=%s", m->backing);
		for (p = opts + n + 8; *p; p++) /* commas would split the option */
			if (*p == ',')
				*p = '_';
	}
	argv[0] = "pgiofs";
	argv[1] = "-o";
	argv[2] = opts;
	argv[3] = NULL;
	args = (struct fuse_args)FUSE_ARGS_INIT(3, argv);
	se = fuse_session_new(&args, &pfs_ops, sizeof(pfs_ops), &m->fs);
	fuse_opt_free_args(&args);
	return se;
}

/* wait_visible() -- until the mount shows @m's directory: a handler that
 * created it (mkdir) has not answered yet, and until it does the kernel
 * may say the name does not exist.  0 or -errno. */
static int wait_visible(const struct walmount *m)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	struct stat st;
	int i;

	for (i = 0;; i++) {
		if (stat(m->point, &st) == 0)
			return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
		if (errno != ENOENT || i == END_WAIT_MS / 10)
			return -errno;
		nanosleep(&ts, NULL);
	}
}

/* set_priority() -- set thread @tid's priority from @m's settings. */
static void set_priority(const struct walmount *m, pid_t tid)
{
	int io;

	if (m->fs.set.wal_nice != 0 &&
	    setpriority(PRIO_PROCESS, (id_t)tid, (int)m->fs.set.wal_nice) < 0)
		log_msg(LOG_WARNING, "WAL mount over \"%s\": cannot set files.wal_nice = %lld: %s",
			m->point, (long long)m->fs.set.wal_nice, strerror(errno));
	switch (m->fs.set.wal_io_class) {
	case PGIOFS_IO_REALTIME:
		io = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 4);
		break;
	case PGIOFS_IO_BEST_EFFORT:
		io = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4);
		break;
	default:
		return;
	}
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, (int)tid, io) < 0)
		log_msg(LOG_WARNING,
			"WAL mount over \"%s\": cannot set files.wal_io_class = %s: %s", m->point,
			pgiofs_io_class_names[m->fs.set.wal_io_class], strerror(errno));
}

/* prioritize() -- give this thread, and so every thread it starts (the
 * session's workers and ring threads inherit both), the CPU and I/O
 * priority of files.wal_nice and files.wal_io_class; say so where it
 * cannot be had, and note in m->prio what it has. */
static void prioritize(struct walmount *m)
{
	static const char *const classes[] = {"the daemon's", "realtime", "best-effort", "idle"};
	pid_t tid = gettid();
	int io;

	set_priority(m, tid);
	io = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)tid);
	snprintf(m->prio, sizeof(m->prio), "nice %d, I/O %s", getpriority(PRIO_PROCESS, (id_t)tid),
		 io >= 0 && IOPRIO_PRIO_CLASS(io) <= IOPRIO_CLASS_IDLE
		     ? classes[IOPRIO_PRIO_CLASS(io)]
		     : "unknown");
}

/* wal_thread() -- mount @m, serve it until it is unmounted, then let its
 * requests complete and free its session. */
static void *wal_thread(void *arg)
{
	struct walmount *m = arg;
	struct pfs *core = m->wm->fs;
	sigset_t all;
	int ret;

	/* signals are the signal thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pgiofs-walmnt");
	/* started by a handler, maybe in a ring thread pinned to its CPU:
	 * neither this thread nor its workers stay there */
	pfs_uring_unpin();
	m->fs.core = core;
	m->fs.root.fd = -1;
	pthread_rwlock_rdlock(&core->ios_lock); /* a reload writes the settings */
	m->fs.set = core->set;
	pthread_rwlock_unlock(&core->ios_lock);
	m->fs.set.wal_mode = PGIOFS_WAL_PASSTHROUGH;
	m->fs.set.writeback_cache = false; /* which passthrough needs */
	/* the mount's connection serves this directory as well (a descriptor
	 * or working directory from before this WAL mount): neither kernel
	 * keeps what the other may change (fs.c, shared_with_wal_mount()) */
	m->fs.set.entry_timeout = 0;
	m->fs.set.attr_timeout = 0;
	m->fs.set.negative_timeout = 0;
	prioritize(m);
	m->fs.is_root = core->is_root;
	m->fs.foreground = core->foreground;
	m->fs.stats = core->stats;
	m->fs.trace = core->trace;
	ret = pfs_init_root(&m->fs, m->backing);
	if (ret < 0) {
		fail(m, "%s", strerror(-ret));
		goto out;
	}
	if (m->fs.root.dev != m->dev || m->fs.root.ino != m->ino) {
		fail(m, "%s", "the directory was replaced meanwhile");
		goto out;
	}
	pthread_mutex_lock(&m->wm->lock); /* known() reads it */
	m->hold_fd = fcntl(m->fs.root.fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&m->wm->lock);
	ret = wait_visible(m);
	if (ret < 0) {
		fail(m, "%s", strerror(-ret));
		goto out;
	}
	m->se = session_new(m);
	if (!m->se) {
		fail(m, "%s", "cannot start a FUSE session");
		goto out;
	}
	m->fs.se = m->se;
	if (fuse_session_mount(m->se, m->point) != 0) {
		fail(m, "%s", "the mount was refused");
		goto out_session;
	}
	pfs_uring_prepare(&m->fs);
	if (pfs_wire_attach(&m->fs) < 0 || (ret = pfs_loop_init(m->se)) < 0) {
		fail(m, "%s", "the kernel's INIT request failed");
		fuse_session_unmount(m->se);
		goto out_session;
	}
	if (m->fs.wal_note[0])
		log_msg(LOG_WARNING, "WAL mount over \"%s\": %s", m->point, m->fs.wal_note);
	/* a connection of its own: a ring of its own (or /dev/fuse) */
	pfs_uring_start(&m->fs);
	pfs_uring_explain(&m->fs);
	if (m->fs.set.uring != PGIOFS_URING_NO && !atomic_load(&m->fs.wire.uring))
		log_msg(LOG_WARNING, "WAL mount over \"%s\": requests over /dev/fuse: %s", m->point,
			m->fs.uring_note);
	if (pfs_mount_dev(m->point, &m->major, &m->minor) < 0)
		m->major = m->minor = 0;
	atomic_store(&m->state, WM_MOUNTED);
	log_msg(LOG_INFO, "WAL mount over \"%s\" (%s)", m->point,
		pgiofs_wal_mode_names[m->fs.wal_mode]);
	settled(m);
	ret = pfs_loop(m->se, &m->fs.set);
	pfs_uring_stop(&m->fs);
	atomic_store(&m->state, WM_ENDED);
	log_msg(LOG_INFO, "WAL mount over \"%s\" ended%s", m->point,
		atomic_load(&m->wm->stopping) ? ""
					      : ": WAL there is opened direct through the mount");
	/* requests of this session may still be queued in the shared
	 * scheduler: they complete, and their replies are written, while
	 * the session's /dev/fuse descriptor is still its own -- once closed,
	 * its number may be reused by any file the daemon opens */
	ret = pfs_drain(core);
	if (ret < 0)
		log_msg(LOG_ERR, "cannot drain the scheduler: %s", strerror(-ret));
	fuse_session_unmount(m->se); /* closes the descriptor */
out_session:
	/* no reply can come now: the rings go (or the spare of a ring that
	 * was never started) */
	pfs_uring_release(&m->fs);
	fuse_session_destroy(m->se);
	m->se = NULL;
out:
	if (atomic_load(&m->state) == WM_FAILED)
		settled(m);
	pfs_cleanup(&m->fs);
	return NULL;
}

/* known() -- whether @m stands for directory (@dev, @ino): one that
 * failed before it could be held may have gone, its number reused.  Caller
 * holds wm->lock. */
static bool known(const struct walmount *m, dev_t dev, ino_t ino)
{
	return m->dev == dev && m->ino == ino &&
	       (m->hold_fd >= 0 || atomic_load(&m->state) != WM_FAILED);
}

/* start__() -- a WAL mount over @rel/pg_wal (@rel relative to the backing
 * root, "" for the root itself), the directory (@dev, @ino), unless it had
 * one; @at_start: the command waits for it.  Caller holds wm->lock. */
static void start__(struct pfs_walmounts *wm, const char *rel, dev_t dev, ino_t ino, bool at_start)
{
	struct walmount *m;
	const char *sep = *rel ? "/" : "";

	if (atomic_load(&wm->stopping))
		return;
	for (m = wm->list; m; m = m->next)
		if (known(m, dev, ino))
			return;
	m = calloc(1, sizeof(*m));
	if (!m) {
		log_msg(LOG_ERR, "out of memory: no WAL mount over %s/pg_wal", rel);
		return;
	}
	m->wm = wm;
	m->hold_fd = -1;
	m->dev = dev;
	m->ino = ino;
	if ((size_t)snprintf(m->backing, sizeof(m->backing), "%s%s%s/pg_wal", wm->backing, sep,
			     rel) >= sizeof(m->backing) ||
	    (size_t)snprintf(m->point, sizeof(m->point), "%s%s%s/pg_wal",
			     strcmp(wm->mountpoint, "/") ? wm->mountpoint : "", sep,
			     rel) >= sizeof(m->point)) {
		free(m);
		return;
	}
	atomic_store(&m->state, WM_MOUNTING);
	m->next = wm->list;
	wm->list = m;
	m->at_start = at_start;
	wm->starting += at_start;
	if (pthread_create(&m->thread, NULL, wal_thread, m) != 0) {
		m->at_start = false; /* we hold the lock settled() takes */
		wm->starting -= at_start;
		fail(m, "%s", "cannot start its thread");
	}
}

/* scan() -- start WAL mounts under backing directory @fd (path @rel from
 * the backing root), @depth levels deep at most.  *@budget: directories
 * that may still be looked at. */
static void scan(struct pfs_walmounts *wm, int fd, const char *rel, int depth, int *budget)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (--*budget < 0)
		return;
	if (fstatat(fd, "PG_VERSION", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* a data directory: its pg_wal, and nothing deeper */
		if (fstatat(fd, "pg_wal", &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		if (S_ISDIR(st.st_mode)) {
			pthread_mutex_lock(&wm->lock);
			start__(wm, rel, st.st_dev, st.st_ino, true);
			pthread_mutex_unlock(&wm->lock);
		} else if (S_ISLNK(st.st_mode)) {
			log_msg(LOG_INFO,
				"%s/%s/pg_wal is a symbolic link (initdb --waldir): its WAL is not "
				"on this mount, pgiofs does not serve it",
				wm->mountpoint, rel);
		}
		return;
	}
	if (depth == 0)
		return;
	d = fdopendir(dup(fd));
	if (!d)
		return;
	while ((e = readdir(d)) && *budget > 0) {
		char sub[PATH_MAX];
		int cfd;

		/* DT_UNKNOWN: a file system that does not say (xfs with
		 * ftype=0, ext4 without filetype); the open below refuses
		 * what is not a directory */
		if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
		    sizeof(sub))
			continue;
		cfd = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		scan(wm, cfd, sub, depth - 1, budget);
		close(cfd);
	}
	closedir(d);
}

void pfs_walmounts_start(struct pfs *fs, int ready_fd)
{
	struct pfs_walmounts *wm = fs->walmounts;
	int budget = SCAN_MAX_DIRS, fd;

	if (!wm) {
		tell_ready(ready_fd);
		return;
	}
	fd = open(wm->backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		scan(wm, fd, "", SCAN_DEPTH, &budget);
		close(fd);
	}
	pthread_mutex_lock(&wm->lock);
	if (wm->starting)
		wm->ready_fd = ready_fd; /* the last to settle tells */
	else
		tell_ready(ready_fd);
	pthread_mutex_unlock(&wm->lock);
}

/* consider() -- fs->wal_dir_seen (pgiofs_i.h). */
static void consider(struct pfs *fs, struct pfs_inode *dir, const char *name, const struct stat *st)
{
	struct pfs_walmounts *wm = fs->walmounts;
	char link[64], path[PATH_MAX];
	size_t n = strlen(wm->backing);
	ssize_t len;
	int fd;

	if (!S_ISDIR(st->st_mode) || strcmp(name, "pg_wal") != 0)
		return;
	pthread_mutex_lock(&wm->lock);
	/* the directory is known (the common case: every later lookup) */
	for (struct walmount *m = wm->list; m; m = m->next)
		if (known(m, st->st_dev, st->st_ino)) {
			pthread_mutex_unlock(&wm->lock);
			return;
		}
	pthread_mutex_unlock(&wm->lock);
	/* where @dir is, relative to the backing root */
	fd = pfs_inode_fd(fs, dir);
	if (fd < 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	pfs_inode_fd_put(fs, dir);
	if (len < 0)
		return;
	path[len] = '\0';
	if (strncmp(path, wm->backing, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return; /* moved out of the backing tree meanwhile */
	pthread_mutex_lock(&wm->lock);
	start__(wm, path[n] ? path + n + 1 : "", st->st_dev, st->st_ino, false);
	pthread_mutex_unlock(&wm->lock);
}

int pfs_walmounts_unmount(struct pfs *fs, bool detach)
{
	struct pfs_walmounts *wm = fs->walmounts;
	struct walmount *m;
	int ret = 0;

	if (!wm)
		return 0;
	/* not under the lock: the unmount looks the path up through the
	 * mount's workers, whose lookups may want it (consider()); entries
	 * are only ever added at the head, so the list from here is stable */
	pthread_mutex_lock(&wm->lock);
	m = wm->list;
	pthread_mutex_unlock(&wm->lock);
	for (; m; m = m->next) {
		int st = atomic_load(&m->state);

		if (st != WM_MOUNTED && st != WM_MOUNTING)
			continue;
		if (umount2(m->point, UMOUNT_NOFOLLOW | (detach ? MNT_DETACH : 0)) < 0 &&
		    errno == EBUSY)
			ret = -EBUSY;
	}
	return ret;
}

/* abort_connection() -- end @m's connection as a dying daemon would (its
 * files still open keep it up after an unmount). */
static void abort_connection(const struct walmount *m)
{
	char path[96];
	int fd;

	if (!m->major && !m->minor)
		return;
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", m->minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) < 0)
		log_msg(LOG_WARNING, "cannot abort the WAL mount over \"%s\": %s", m->point,
			strerror(errno));
	close(fd);
}

void pfs_walmounts_stop(struct pfs *fs)
{
	struct pfs_walmounts *wm = fs->walmounts;
	struct walmount *m;
	int i;

	if (!wm || atomic_load(&wm->stopping))
		return;
	pthread_mutex_lock(&wm->lock); /* start__() checks it under the lock */
	atomic_store(&wm->stopping, true);
	pthread_mutex_unlock(&wm->lock);
	/* no new WAL mount now; the list no longer changes */
	for (m = wm->list; m; m = m->next)
		if (atomic_load(&m->state) == WM_MOUNTED)
			umount2(m->point, UMOUNT_NOFOLLOW | MNT_DETACH);
	for (m = wm->list; m; m = m->next) {
		for (i = 0; i < END_WAIT_MS / 10 && atomic_load(&m->state) <= WM_MOUNTED; i++) {
			struct timespec ts = {0, 10 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
		if (atomic_load(&m->state) == WM_MOUNTED)
			abort_connection(m);
	}
	for (m = wm->list; m; m = m->next)
		if (m->thread)
			pthread_join(m->thread, NULL);
}

void pfs_walmounts_destroy(struct pfs *fs)
{
	struct pfs_walmounts *wm = fs->walmounts;
	struct walmount *m, *next;

	if (!wm)
		return;
	pfs_walmounts_stop(fs);
	for (m = wm->list; m; m = next) {
		next = m->next;
		if (m->hold_fd >= 0)
			close(m->hold_fd);
		free(m);
	}
	pthread_mutex_destroy(&wm->lock);
	free(wm);
	fs->walmounts = NULL;
	fs->wal_dir_seen = NULL;
}

void pfs_walmounts_describe(struct pfs *fs, char *buf, size_t len)
{
	static const char *const states[] = {"mounting", NULL, "ended", "failed"};
	struct pfs_walmounts *wm = fs->walmounts;
	struct walmount *m;
	size_t at = 0;

	buf[0] = '\0';
	if (!wm)
		return;
	pthread_mutex_lock(&wm->lock);
	for (m = wm->list; m && at < len; m = m->next) {
		int st = atomic_load(&m->state);

		at += (size_t)snprintf(
		    buf + at, len - at, "%s%s (%s%s%s)%s%s", at ? "; " : "", m->point,
		    st == WM_MOUNTED ? pgiofs_wal_mode_names[m->fs.wal_mode] : states[st],
		    st == WM_FAILED ? ": " : "", st == WM_FAILED ? m->why : "",
		    st == WM_MOUNTED ? ", " : "", st == WM_MOUNTED ? m->prio : "");
	}
	if (!wm->list)
		snprintf(buf, len,
			 "none yet (one is mounted over each pg_wal directory as it "
			 "appears)");
	pthread_mutex_unlock(&wm->lock);
}
