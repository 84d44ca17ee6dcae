/* space.c -- a full backing file system seen by the writer, as natively
 * (files.space_guard_mb).
 *
 * Through the kernel's write-back cache a write(2) into a file of the
 * mount is answered by the kernel once the data is in the mount's page
 * cache; pgiofs sees it later, when the kernel writes the pages back.  If
 * the backing file system is full by then, the error can only reach the
 * writer at its next fsync or close: PostgreSQL, extending a relation,
 * gets "could not close file" or "could not fsync file" and PANICs, where
 * natively ext4 or xfs refuse the write(2) itself and the statement fails
 * alone ("could not extend file").  Nothing is lost either way, but a
 * full disk must not cost a crash and a recovery.
 *
 * The kernel has one switch from write-back to write-through for a file
 * that is already open: with FUSE_HANDLE_KILLPRIV_V2 (wire.c), a write by
 * a process without CAP_FSETID into a file whose mode has S_ISUID is sent
 * to the daemon before write(2) returns (fuse_cache_write_iter(): the
 * daemon must clear the bit), and its errors are write(2)'s.  So while the
 * backing file system has less than files.space_guard_mb free (as an
 * unprivileged writer sees it, statvfs f_bavail; an eighth of the file
 * system if that is less), the attributes pgiofs
 * gives of regular files other than WAL carry S_ISUID (pfs_space_mark()),
 * and on entering that state the attributes of every one the kernel knows
 * are invalidated, so the next write asks for them.  PostgreSQL's writes then
 * reach pgiofs one by one and ENOSPC reaches the write that has no room,
 * as natively; once the space is back (a quarter above the guard) the bit
 * goes and writes are cached again.  The bit exists only in what the mount
 * shows (ls -l shows "S" meanwhile); the backing files never get it, and a
 * SETATTR of a mode while the guard is on cannot add it (fs.c).
 *
 * What was cached before the switch must still fit: the mount's dirty page
 * limit (bdi.max_ratio, up to half the system's) can hold gigabytes.  So
 * below eight times the guard the mount's limit is held (bdi max_bytes,
 * as root) at a quarter of the free space, and put back once the space is
 * there again; on entering, the mount's dirty pages are written back
 * (syncfs() of the mount, from the guard's thread) once the files'
 * attributes are invalidated, so that what was cached is on the backing
 * file system before the writes going through take what is left.  A program other than PostgreSQL
 * that fills the file system faster than the 100 ms this module looks at it can still leave less
 * room than the cached data needs; that write-back error then reaches the next fsync or close as
 * any other (writebehind.c).
 *
 * A writer with CAP_FSETID (root) is not switched by the kernel: its
 * writes stay cached.  What must stay true: the bit is shown only on
 * regular files of the core connection other than WAL, only while the
 * guard is on; entering and leaving both invalidate the open files'
 * attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "pgiofs_i.h"

#define SP_PERIOD_MS 100	 /* the thread looks this often */
#define SP_POLL_NS   10000000ull /* requests look at most this often */
#define SP_CAP_BAND  8		 /* the dirty limit follows below this many guards */
#define SP_CAP_MIN   (4ull << 20)

struct pfs_space {
	struct pfs *fs;
	uint64_t guard; /* bytes */
	int fd;		/* the backing root, for fstatvfs() */
	pthread_t thread;
	pthread_mutex_t lock; /* a check at a time; stop */
	pthread_cond_t cond;
	bool stop, joined;
	/* the mount's bdi (as root): its directory, the dirty limit in
	 * bytes found there, what it was set to (0: left) */
	char bdi[96];
	char mnt[PATH_MAX]; /* the mount */
	char ratio_was[32]; /* max_ratio_fine found, to put back */
	uint64_t cap;
	/* atomics */
	bool low;
	bool served; /* a request has been answered (pfs_space_mark()) */
	uint64_t last_ns, free, entered, left, through, invalidated;
	pthread_mutex_t note_lock;
	char note[160]; /* under note_lock */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct pfs_space *space_of(const struct pfs *fs)
{
	return __atomic_load_n(&fs->core->space, __ATOMIC_ACQUIRE);
}

static int read_knob(const struct pfs_space *sp, const char *knob, char *buf, size_t len)
{
	char path[160];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", sp->bdi, knob);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_knob(const struct pfs_space *sp, const char *knob, const char *val)
{
	char path[160];
	size_t n = strlen(val);
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", sp->bdi, knob);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != (ssize_t)n)
		ret = -errno;
	close(fd);
	return ret;
}

/* invalidate() -- the attributes of every regular file the kernel knows,
 * so that the next write asks for them (and sees whether the guard is
 * on). */
static void invalidate(struct pfs_space *sp)
{
	struct pfs *fs = sp->fs;
	struct pfs_inode_ref *r;
	size_t n = pfs_inodes_files(fs, &r), i;

	if (!r) {
		log_msg(LOG_WARNING, "files.space_guard_mb: out of memory: the files' attributes "
				     "stay as the kernel has them");
		return;
	}
	for (i = 0; i < n; i++)
		if (fuse_lowlevel_notify_inval_inode(fs->se, r[i].id, -1, 0) == 0)
			__atomic_add_fetch(&sp->invalidated, 1, __ATOMIC_RELAXED);
	free(r);
}

/* flush_mount() -- write the mount's dirty pages back (to pgiofs, which
 * writes them to the backing file system) and wait: syncfs() of the mount.
 * That waits for WRITEs the workers serve: only the guard's thread calls
 * it, never holding what a worker may wait for.  The descriptor (an
 * OPENDIR the workers answer) is closed at once: held, it would keep the
 * mount busy at unmount. */
static void flush_mount(struct pfs_space *sp)
{
	int fd = open(sp->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || syncfs(fd) < 0)
		log_msg(
		    LOG_WARNING,
		    "files.space_guard_mb: cannot write back what the mount \"%s\" has cached: %s",
		    sp->mnt, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* follow_cap() -- below SP_CAP_BAND guards of free space, the mount's
 * dirty limit at a quarter of it; above, as it was.  Caller holds lock. */
static void follow_cap(struct pfs_space *sp, uint64_t free)
{
	uint64_t want = 0;
	char val[32];
	int ret;

	if (!sp->bdi[0])
		return;
	if (free < SP_CAP_BAND * sp->guard)
		want = free / 4 > SP_CAP_MIN ? free / 4 : SP_CAP_MIN;
	if (want == sp->cap)
		return;
	if (!want) {
		ret = write_knob(sp, "max_ratio_fine", sp->ratio_was);
		if (ret < 0)
			log_msg(LOG_WARNING,
				"files.space_guard_mb: cannot put %s/max_ratio_fine back to %s: %s",
				sp->bdi, sp->ratio_was, strerror(-ret));
		__atomic_store_n(&sp->cap, 0, __ATOMIC_RELAXED);
		return;
	}
	/* within an eighth of the limit set: left */
	if (sp->cap && want > sp->cap - sp->cap / 8 && want < sp->cap + sp->cap / 8)
		return;
	if (!sp->cap && read_knob(sp, "max_ratio_fine", sp->ratio_was, sizeof(sp->ratio_was)) < 0) {
		pthread_mutex_lock(&sp->note_lock);
		snprintf(sp->note, sizeof(sp->note),
			 "cannot read %s/max_ratio_fine: the mount's dirty limit left as is",
			 sp->bdi);
		pthread_mutex_unlock(&sp->note_lock);
		sp->bdi[0] = 0;
		return;
	}
	snprintf(val, sizeof(val), "%" PRIu64 "\n", want);
	ret = write_knob(sp, "max_bytes", val);
	if (ret < 0) {
		/* more than the system's whole limit (EINVAL): nothing to hold */
		if (ret != -EINVAL)
			log_msg(LOG_WARNING,
				"files.space_guard_mb: cannot set %s/max_bytes to %" PRIu64 ": %s",
				sp->bdi, want, strerror(-ret));
		if (!sp->cap)
			return;
		want = 0;
		write_knob(sp, "max_ratio_fine", sp->ratio_was);
	}
	__atomic_store_n(&sp->cap, want, __ATOMIC_RELAXED);
}

/* check() -- look at the free space and switch; caller holds lock. */
static void check(struct pfs_space *sp)
{
	struct statvfs sv;
	uint64_t free;
	bool low = __atomic_load_n(&sp->low, __ATOMIC_RELAXED);

	__atomic_store_n(&sp->last_ns, now_ns(), __ATOMIC_RELAXED);
	if (fstatvfs(sp->fd, &sv) < 0)
		return;
	free = (uint64_t)sv.f_bavail * sv.f_frsize;
	__atomic_store_n(&sp->free, free, __ATOMIC_RELAXED);
	follow_cap(sp, free);
	if (!low && free < sp->guard) {
		__atomic_store_n(&sp->low, true, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sp->entered, 1, __ATOMIC_RELAXED);
		log_msg(LOG_NOTICE,
			"%" PRIu64
			" MiB free on the backing file system, under files.space_guard_mb: "
			"writes go through to it one by one",
			free >> 20);
		invalidate(sp);
		/* nothing can be cached before the first request: and before
		 * the workers run, the open would wait for them */
		if (__atomic_load_n(&sp->served, __ATOMIC_ACQUIRE))
			flush_mount(sp);
	} else if (low && free >= sp->guard + sp->guard / 4) {
		__atomic_store_n(&sp->low, false, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sp->left, 1, __ATOMIC_RELAXED);
		log_msg(LOG_NOTICE,
			"%" PRIu64 " MiB free on the backing file system: writes cached again",
			free >> 20);
		invalidate(sp);
	}
}

static void *space_thread(void *arg)
{
	struct pfs_space *sp = arg;
	struct timespec ts;

	pthread_mutex_lock(&sp->lock);
	while (!sp->stop) {
		check(sp);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SP_PERIOD_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sp->cond, &sp->lock, &ts);
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

int pfs_space_start(struct pfs *fs, const char *mountpoint)
{
	struct pfs_space *sp;
	struct statvfs sv;
	unsigned maj, min;
	int rfd, ret;

	if (fs->set.space_guard_mb <= 0 || !fs->writeback)
		return 0;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->fs = fs;
	if (!realpath(mountpoint, sp->mnt))
		snprintf(sp->mnt, sizeof(sp->mnt), "%s", mountpoint);
	sp->guard = (uint64_t)fs->set.space_guard_mb << 20;
	rfd = pfs_inode_fd(fs, &fs->root);
	sp->fd = rfd < 0 ? -1 : fcntl(rfd, F_DUPFD_CLOEXEC, 0);
	if (rfd >= 0)
		pfs_inode_fd_put(fs, &fs->root);
	if (sp->fd < 0) {
		ret = rfd < 0 ? rfd : -errno;
		log_msg(LOG_WARNING, "files.space_guard_mb: cannot reach the backing root: %s",
			strerror(-ret));
		free(sp);
		return ret;
	}
	/* a file system of less than eight guards: an eighth of it, so that
	 * a small one is not written through for good */
	if (fstatvfs(sp->fd, &sv) == 0 && (uint64_t)sv.f_blocks * sv.f_frsize / 8 < sp->guard)
		sp->guard = (uint64_t)sv.f_blocks * sv.f_frsize / 8;
	if (!fs->is_root)
		snprintf(sp->note, sizeof(sp->note),
			 "not root: the mount's dirty limit is not held to the free space");
	else if (pfs_mount_dev(mountpoint, &maj, &min) < 0)
		snprintf(
		    sp->note, sizeof(sp->note),
		    "the mount is not in mountinfo: its dirty limit is not held to the free space");
	else
		snprintf(sp->bdi, sizeof(sp->bdi), "/sys/class/bdi/%u:%u", maj, min);
	pthread_mutex_init(&sp->lock, NULL);
	pthread_mutex_init(&sp->note_lock, NULL);
	pthread_cond_init(&sp->cond, NULL);
	ret = pthread_create(&sp->thread, NULL, space_thread, sp);
	if (ret) {
		log_msg(LOG_WARNING, "files.space_guard_mb: cannot start its thread: %s",
			strerror(ret));
		pthread_cond_destroy(&sp->cond);
		pthread_mutex_destroy(&sp->note_lock);
		pthread_mutex_destroy(&sp->lock);
		close(sp->fd);
		free(sp);
		return -ret;
	}
	pthread_setname_np(sp->thread, "pgiofs-space");
	__atomic_store_n(&fs->space, sp, __ATOMIC_RELEASE);
	return 0;
}

void pfs_space_stop(struct pfs *fs)
{
	struct pfs_space *sp = __atomic_load_n(&fs->space, __ATOMIC_ACQUIRE);

	if (!sp || sp->joined)
		return;
	pthread_mutex_lock(&sp->lock);
	sp->stop = true;
	pthread_cond_signal(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	pthread_join(sp->thread, NULL);
	sp->joined = true;
}

void pfs_space_free(struct pfs *fs)
{
	struct pfs_space *sp = __atomic_load_n(&fs->space, __ATOMIC_ACQUIRE);

	if (!sp)
		return;
	pfs_space_stop(fs);
	__atomic_store_n(&fs->space, NULL, __ATOMIC_RELEASE);
	pthread_cond_destroy(&sp->cond);
	pthread_mutex_destroy(&sp->note_lock);
	pthread_mutex_destroy(&sp->lock);
	close(sp->fd);
	free(sp);
}

void pfs_space_poll(struct pfs *fs)
{
	struct pfs_space *sp = space_of(fs);

	if (!sp || now_ns() - __atomic_load_n(&sp->last_ns, __ATOMIC_RELAXED) < SP_POLL_NS)
		return;
	/* the thread looks now; never wait for it: it may be waiting for
	 * the WRITEs of this worker's fellows (invalidate()) */
	if (pthread_mutex_trylock(&sp->lock) != 0)
		return; /* it is looking */
	__atomic_store_n(&sp->last_ns, now_ns(), __ATOMIC_RELAXED);
	pthread_cond_signal(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

bool pfs_space_low(const struct pfs *fs)
{
	const struct pfs_space *sp = space_of(fs);

	return sp && __atomic_load_n(&sp->low, __ATOMIC_ACQUIRE);
}

void pfs_space_mark(const struct pfs *fs, const struct pfs_inode *in, struct stat *st)
{
	struct pfs_space *sp = space_of(fs);

	if (sp && !__atomic_load_n(&sp->served, __ATOMIC_RELAXED))
		__atomic_store_n(&sp->served, true, __ATOMIC_RELEASE);
	if (S_ISREG(st->st_mode) && fs->core == fs &&
	    __atomic_load_n(&in->cls, __ATOMIC_RELAXED) != IOS_CLASS_WAL && pfs_space_low(fs))
		st->st_mode |= S_ISUID;
}

void pfs_space_write_through(const struct pfs *fs)
{
	struct pfs_space *sp = space_of(fs);

	if (sp)
		__atomic_add_fetch(&sp->through, 1, __ATOMIC_RELAXED);
}

int pfs_space_json(const struct pfs *fs, char *buf, size_t len)
{
	struct pfs_space *sp = space_of(fs);
	char note[400] = "\"\"";
	uint64_t cap = 0;

	if (sp) {
		/* not sp->lock: the thread holds it through a syncfs() */
		pthread_mutex_lock(&sp->note_lock);
		json_str_format(note, sizeof(note), sp->note);
		pthread_mutex_unlock(&sp->note_lock);
		cap = __atomic_load_n(&sp->cap, __ATOMIC_RELAXED);
	} else if (fs->set.space_guard_mb > 0 && !fs->writeback) {
		json_str_format(
		    note, sizeof(note),
		    "no write-back cache: every write reaches pgiofs before write(2) returns");
	}
	return snprintf(buf, len,
			"\"space_guard\":{\"setting_mb\":%" PRId64 ",\"guard_bytes\":%" PRIu64
			",\"on\":%s,\"low\":%s"
			",\"free_bytes\":%" PRIu64 ",\"entered\":%" PRIu64 ",\"left\":%" PRIu64
			",\"written_through\":%" PRIu64 ",\"invalidated\":%" PRIu64
			",\"dirty_cap_bytes\":%" PRIu64 ",\"note\":%s}",
			fs->set.space_guard_mb, sp ? sp->guard : 0, sp ? "true" : "false",
			sp && __atomic_load_n(&sp->low, __ATOMIC_RELAXED) ? "true" : "false",
			sp ? __atomic_load_n(&sp->free, __ATOMIC_RELAXED) : 0,
			sp ? __atomic_load_n(&sp->entered, __ATOMIC_RELAXED) : 0,
			sp ? __atomic_load_n(&sp->left, __ATOMIC_RELAXED) : 0,
			sp ? __atomic_load_n(&sp->through, __ATOMIC_RELAXED) : 0,
			sp ? __atomic_load_n(&sp->invalidated, __ATOMIC_RELAXED) : 0, cap, note);
}
