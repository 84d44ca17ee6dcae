/*
 * writebehind.c -- writes acknowledged before they are on the backing
 * store, and what must wait for them.
 *
 * Two kinds of WRITE are answered as soon as pgiofs holds their data:
 *
 *   - WAL on a direct handle (files.wal_mode = direct, or the fallback of
 *     passthrough): the backing write follows in the same worker, right
 *     after the reply, so a commit's WRITE does not wait for the disk;
 *   - without the kernel's write-back cache (files.wal_mode = passthrough,
 *     or fuse.writeback_cache = no), every write(2) of a data file is a
 *     WRITE the caller waits for: pgiofs is then the write cache, and a
 *     queued write is answered once the scheduler has it, in at most
 *     files.write_cache_mb of memory (writers wait when it is full), so
 *     iosched can merge and order writeback as the kernel's cache would.
 *
 * Neither kind is used for a write the caller made synchronous (O_DSYNC)
 * on a direct handle, which no FSYNC follows.  A write that extends the
 * file first has its space allocated on the backing filesystem
 * (pfs_wb_reserve()): a full filesystem is then the writer's error at once,
 * as without the cache (PostgreSQL's "could not extend file"), not a later
 * fsync's, and the file's size already includes the write; where the
 * filesystem cannot allocate ahead, such a write is answered once written.
 *
 * What must stay true: an inode counts its acknowledged writes until they
 * finished, and every size pgiofs tells the kernel includes them (the
 * kernel has already grown the file by them: a smaller size in a later
 * GETATTR would make it cut its page cache and the file); fsync, reads,
 * truncation, fallocate, FLUSH (fuse.flush = yes) and RELEASE of the file
 * wait until none is left; a write that failed (or wrote less than it was
 * given: a full filesystem) is remembered and returned by the next fsync of
 * the file on every handle open when it failed or opened before an fsync
 * reported it, once per handle, as the kernel's errseq reports write-back
 * errors (with fuse.flush = no a close() does not wait for them: it never
 * returned their errors); an inode holding an error no fsync has reported
 * is not freed when the kernel forgets it (fs.c), so that the next open of
 * the file finds it; the cache never holds more than its limit, except for one
 * write larger than the whole cache, which goes alone.  A WAL mount
 * (walmount.c) shares its mount's cache (fs->core).
 *
 * Timestamps acknowledged before they are on the backing store
 * (files.defer_times): with the write-back cache the kernel keeps a
 * written file's mtime itself and sends it in a SETATTR (mtime and ctime,
 * with the file handle) before every fsync of the file and at close.
 * Applied then, it changes the backing inode just before the fsync, and
 * on ext4 an fsync whose inode changed in the running transaction commits
 * the journal: one commit per file fsynced, where PostgreSQL on the bare
 * file system, whose inodes changed when their data was written, shares
 * one commit among all the files of a checkpoint.  So that mtime is kept
 * in the inode and applied after the fsync.  What must stay true: every
 * stat through pgiofs shows the kept mtime; it reaches the backing file
 * after the next fsync of the file, at every RELEASE, before any other
 * change of the file's attributes (which may set times of its own), when
 * the inode is forgotten and when the file system is unmounted; the data
 * is as durable as without it (only the mtime committed by that fsync is
 * the time pgiofs wrote the data, not the time the writer did).
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

int pfs_wb_reserve(int fd, off_t off, size_t len)
{
	struct stat st;

	if (!len)
		return 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (off + (off_t)len <= st.st_size)
		return 0; /* overwrites allocated blocks */
	if (fallocate(fd, 0, off, (off_t)len) == 0)
		return 0;
	return errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
}

void pfs_wb_init(struct pfs *fs, uint64_t limit)
{
	pthread_mutex_init(&fs->wb.lock, NULL);
	pthread_cond_init(&fs->wb.room, NULL);
	fs->wb.cnt.limit = limit;
}

void pfs_wb_inode_init(struct pfs_inode *in)
{
	pthread_mutex_init(&in->wb_lock, NULL);
	pthread_cond_init(&in->wb_done, NULL);
}

void pfs_wb_inode_destroy(struct pfs_inode *in)
{
	pthread_mutex_destroy(&in->wb_lock);
	pthread_cond_destroy(&in->wb_done);
}

void pfs_wb_begin(struct pfs *fs, struct pfs_inode *in, size_t bytes, off_t end)
{
	if (bytes) {
		bool waited = false;

		pthread_mutex_lock(&fs->core->wb.lock);
		while (fs->core->wb.cnt.bytes &&
		       fs->core->wb.cnt.bytes + bytes > fs->core->wb.cnt.limit) {
			waited = true;
			pthread_cond_wait(&fs->core->wb.room, &fs->core->wb.lock);
		}
		fs->core->wb.cnt.bytes += bytes;
		if (fs->core->wb.cnt.bytes > fs->core->wb.cnt.peak)
			fs->core->wb.cnt.peak = fs->core->wb.cnt.bytes;
		fs->core->wb.cnt.writes++;
		fs->core->wb.cnt.waits += waited;
		pthread_mutex_unlock(&fs->core->wb.lock);
	}
	pthread_mutex_lock(&in->wb_lock);
	/* written in this worker after the reply (not queued): the writes
	 * before it must be done, or a rewrite of the same page could land
	 * before the older one */
	while (!bytes && in->wb_pending)
		pthread_cond_wait(&in->wb_done, &in->wb_lock);
	in->wb_pending++;
	if (end > in->wb_size)
		in->wb_size = end;
	pthread_mutex_unlock(&in->wb_lock);
}

/* note_error__() -- pfs_wb_note_error(); caller holds in->wb_lock. */
static void note_error__(struct pfs_inode *in, int err)
{
	/* errors that follow one nobody has had yet are one error */
	if (in->wb_errseq == 0 || in->wb_err_seen)
		in->wb_errseq++;
	in->wb_err = err;
	in->wb_err_seen = false;
}

void pfs_wb_end(struct pfs *fs, struct pfs_inode *in, size_t bytes, ssize_t res, size_t len)
{
	pthread_mutex_lock(&in->wb_lock);
	if (res < 0)
		note_error__(in, (int)-res);
	else if ((size_t)res < len)
		note_error__(in, ENOSPC); /* a short write: the filesystem is full */
	if (--in->wb_pending == 0) {
		in->wb_size = 0;
		pthread_cond_broadcast(&in->wb_done);
	}
	pthread_mutex_unlock(&in->wb_lock);
	if (bytes) {
		pthread_mutex_lock(&fs->core->wb.lock);
		fs->core->wb.cnt.bytes -= bytes;
		if (res < 0 || (size_t)res < len)
			fs->core->wb.cnt.errors++;
		pthread_cond_broadcast(&fs->core->wb.room);
		pthread_mutex_unlock(&fs->core->wb.lock);
	}
}

void pfs_wb_note_error(struct pfs_inode *in, int err)
{
	pthread_mutex_lock(&in->wb_lock);
	note_error__(in, err);
	pthread_mutex_unlock(&in->wb_lock);
}

uint32_t pfs_wb_err_sample(struct pfs_inode *in)
{
	uint32_t cursor;

	pthread_mutex_lock(&in->wb_lock);
	/* 0 is before every error: a new handle reports one not yet reported */
	cursor = in->wb_err_seen ? in->wb_errseq : 0;
	pthread_mutex_unlock(&in->wb_lock);
	return cursor;
}

int pfs_wb_err_check(struct pfs_inode *in, uint32_t *cursor)
{
	int err = 0;

	pthread_mutex_lock(&in->wb_lock);
	while (in->wb_pending)
		pthread_cond_wait(&in->wb_done, &in->wb_lock);
	if (*cursor != in->wb_errseq) {
		err = in->wb_err;
		in->wb_err_seen = true;
		*cursor = in->wb_errseq;
	}
	pthread_mutex_unlock(&in->wb_lock);
	return err;
}

bool pfs_wb_err_unreported(struct pfs_inode *in)
{
	bool unreported;

	pthread_mutex_lock(&in->wb_lock);
	unreported = in->wb_errseq != 0 && !in->wb_err_seen;
	pthread_mutex_unlock(&in->wb_lock);
	return unreported;
}

off_t pfs_wb_size(struct pfs_inode *in)
{
	off_t size;

	pthread_mutex_lock(&in->wb_lock);
	size = in->wb_size;
	pthread_mutex_unlock(&in->wb_lock);
	return size;
}

void pfs_wb_fix_size(off_t size, struct stat *st)
{
	if (S_ISREG(st->st_mode) && size > st->st_size)
		st->st_size = size;
}

void pfs_wb_keep_mtime(struct pfs_inode *in, const struct timespec *mtime)
{
	pthread_mutex_lock(&in->wb_lock);
	in->wb_mtime = *mtime;
	in->wb_mtime_kept = true;
	pthread_mutex_unlock(&in->wb_lock);
}

int pfs_wb_apply_mtime(struct pfs *fs, struct pfs_inode *in, int fd)
{
	struct timespec tv[2] = {{0, UTIME_OMIT}, {0, 0}};
	char path[64];
	int ret = 0;

	pthread_mutex_lock(&in->wb_lock);
	if (in->wb_mtime_kept && fd >= 0) { /* under the lock: a newer one waits for it */
		in->wb_mtime_kept = false;
		tv[1] = in->wb_mtime;
		if (futimens(fd, tv) < 0)
			ret = -errno;
	} else if (in->wb_mtime_kept) {
		in->wb_mtime_kept = false;
		tv[1] = in->wb_mtime;
		fd = ret = pfs_inode_fd(fs, in);
		if (fd >= 0) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			if (utimensat(AT_FDCWD, path, tv, 0) < 0)
				ret = -errno;
			pfs_inode_fd_put(fs, in);
		}
	}
	pthread_mutex_unlock(&in->wb_lock);
	return ret;
}

void pfs_wb_fix_mtime(struct pfs_inode *in, struct stat *st)
{
	pthread_mutex_lock(&in->wb_lock);
	if (in->wb_mtime_kept)
		st->st_mtim = in->wb_mtime;
	pthread_mutex_unlock(&in->wb_lock);
}

void pfs_wb_wait(struct pfs_inode *in)
{
	pthread_mutex_lock(&in->wb_lock);
	while (in->wb_pending)
		pthread_cond_wait(&in->wb_done, &in->wb_lock);
	pthread_mutex_unlock(&in->wb_lock);
}

void pfs_wb_counters(struct pfs *fs, struct pfs_wb_counters *out)
{
	pthread_mutex_lock(&fs->core->wb.lock);
	*out = fs->core->wb.cnt;
	pthread_mutex_unlock(&fs->core->wb.lock);
}
