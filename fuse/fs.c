/*
 * fs.c -- the pgiofs low-level FUSE operations: a passthrough to the backing
 * directory.
 *
 * What must stay true:
 *   - Every backing object the kernel knows is a struct pfs_inode in the
 *     connection's inode table (inode.c: what keeps a node id from meeting
 *     a reused inode is stated there), with the kernel's lookup count; it
 *     is made here at its first lookup and freed when the count reaches 0
 *     through FORGET, unless it holds a write error no fsync has reported
 *     yet (then it stays, for the next lookup of its file).  A handler
 *     reaches the backing object through pfs_inode_fd() or
 *     pfs_inode_open(), never a descriptor kept past its request.
 *   - Path operations are relative to a directory descriptor with a single
 *     name component from the kernel (never a path), so nothing escapes the
 *     backing tree; ".." of the root is the root.  The daemon never follows a
 *     symlink the caller would not follow.
 *   - Every data read, write and sync goes through iosched (ios_submit()).
 *   - Errors are the backing filesystem's errno, unchanged.  FSYNC and
 *     FSYNCDIR are always implemented (an ENOSYS reply would make the kernel
 *     report success for every later fsync).
 *   - Objects created through the mount belong to the requesting user: when
 *     the daemon runs as root, creation uses the caller's gid as fsgid (so a
 *     set-gid directory still decides the group) and then chowns to the uid.
 */
#include "pgiofs_i.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* inodes (the table that keys them and holds their descriptors is inode.c) */

static inline struct pfs *pfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct pfs_inode *inode_of(fuse_req_t req, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &pfs_of(req)->root;
	return (struct pfs_inode *)(uintptr_t)ino;
}

/* set_class() -- known inode @in was reached by a name of this kind and
 * class. */
static void set_class(struct pfs *fs, struct pfs_inode *in, enum pgiofs_dirkind kind,
		      enum ios_class cls)
{
	if (in == &fs->root) /* read without the lock elsewhere */
		return;
	__atomic_store_n(&in->kind, (uint8_t)kind, __ATOMIC_RELAXED);
	/* a relation's name says "heap"; its pages may have said "index"
	 * already: keep that */
	if (!(cls == IOS_CLASS_HEAP && __atomic_load_n(&in->by_content, __ATOMIC_RELAXED)))
		__atomic_store_n(&in->cls, (uint8_t)cls, __ATOMIC_RELAXED);
}

/* inode_new() -- an inode for an object of attributes @st reached by a name
 * of this kind and class, not in the table yet; NULL if out of memory. */
static struct pfs_inode *inode_new(const struct stat *st, enum pgiofs_dirkind kind,
				   enum ios_class cls)
{
	struct pfs_inode *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->fd = -1;
	in->fmt = st->st_mode & S_IFMT;
	in->kind = (uint8_t)kind;
	in->cls = (uint8_t)cls;
	pfs_wb_inode_init(in);
	pthread_mutex_init(&in->om_lock, NULL);
	pthread_mutex_init(&in->write_lock, NULL);
	return in;
}

/* inode_free() -- free @in, which is not in the table (any more); @unmounted:
 * the session has ended, nobody is left to hear of an error. */
static void inode_free(struct pfs *fs, struct pfs_inode *in, bool unmounted)
{
	int ret = pfs_wb_apply_mtime(fs, in, -1);

	/* ESTALE: the file is gone, and with it what the mtime was for */
	if (ret < 0 && ret != -ESTALE && !unmounted)
		log_msg(LOG_WARNING, "cannot set the mtime of inode %ju: %s", (uintmax_t)in->ino,
			strerror(-ret));
	pfs_ckpt_forget(fs, in);
	pfs_inode_release(fs, in);
	pfs_wb_inode_destroy(in);
	pthread_mutex_destroy(&in->om_lock);
	pthread_mutex_destroy(&in->write_lock);
	free(in);
}

/* inode_get() -- find or add the inode of the object of @fd (an O_PATH
 * descriptor, consumed) whose attributes are @st, taking one lookup
 * reference, and record the class of the name it was reached by (a hard
 * link in two places takes the class of the last name).  0 or -errno. */
static int inode_get(struct pfs *fs, const struct stat *st, int fd, enum pgiofs_dirkind kind,
		     enum ios_class cls, struct pfs_inode **out)
{
	struct pfs_inode *in, *fresh;
	struct pfs_ikey key;
	int ret = pfs_inode_key(fs, fd, st, &key);

	if (ret < 0) {
		close(fd);
		return ret;
	}
	in = pfs_inode_find(fs, &key, fd);
	if (!in) {
		fresh = inode_new(st, kind, cls);
		if (!fresh) {
			close(fd);
			return -ENOMEM;
		}
		in = pfs_inode_add(fs, &key, fd, fresh);
		if (in != fresh)
			inode_free(fs, fresh, false);
		if (!in)
			return -ENOMEM;
	}
	set_class(fs, in, kind, cls);
	*out = in;
	return 0;
}

/* inode_keeps_error() -- whether @in, which the kernel no longer knows,
 * stays in the table: it holds an error no fsync has reported
 * (writebehind.c) and its file still exists, so the next lookup of the
 * file finds the inode and the next fsync the error.  Such inodes are few:
 * files whose acknowledged writes failed.  Called under the table's lock
 * (pfs_inode_forget()). */
static bool inode_keeps_error(struct pfs *fs, struct pfs_inode *in)
{
	struct stat st;
	bool keep;
	int fd;

	if (!pfs_wb_err_unreported(in) || (fd = pfs_inode_fd(fs, in)) < 0)
		return false;
	keep = fstat(fd, &st) == 0 && st.st_nlink > 0;
	pfs_inode_fd_put(fs, in);
	return keep;
}

/* inode_forget() -- drop @n lookup references; free the inode at zero,
 * unless inode_keeps_error(). */
static void inode_forget(struct pfs *fs, struct pfs_inode *in, uint64_t n)
{
	if (pfs_inode_forget(fs, in, n, inode_keeps_error))
		inode_free(fs, in, false);
}

/* seek_us() -- pfs_dev_seek_us(@dev), timed once per device for the
 * process: a WAL mount on the same disk asks again. */
static int seek_us(dev_t dev)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static dev_t last_dev;
	static int last;
	int us;

	pthread_mutex_lock(&lock);
	if (last == 0 || last_dev != dev) {
		last = pfs_dev_seek_us(dev);
		last_dev = dev;
	}
	us = last;
	pthread_mutex_unlock(&lock);
	return us;
}

int pfs_init_root(struct pfs *fs, const char *backing)
{
	pthread_rwlockattr_t ra;
	int ret;

	if (!fs->core)
		fs->core = fs;
	if (fs->core == fs) { /* a WAL mount uses its mount's */
		pthread_rwlockattr_init(&ra);
		/* a reload must not wait behind a steady stream of submitters */
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&fs->ios_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
		pfs_wb_init(fs, (uint64_t)fs->set.write_cache_mb << 20);
		pfs_ckpt_init(fs);
	}
	ret = pfs_inodes_init(fs, backing);
	if (ret < 0)
		return ret;
	{
		/* a backing directory may itself be pg_wal (a WAL directory on a
		 * mount of its own): its name says what its files are */
		const char *base = strrchr(backing, '/');
		enum pgiofs_dirkind kind;
		enum ios_class cls;

		pgiofs_classify(PGIOFS_DIR_OTHER, base ? base + 1 : backing, true, &kind, &cls);
		fs->root.kind = (uint8_t)kind;
		fs->root.cls = cls;
	}
	fs->backing_medium = pfs_dev_medium(fs->root.dev, fs->backing_dev, sizeof(fs->backing_dev));
	if (fs->backing_medium == PFS_MEDIUM_UNKNOWN || fs->backing_medium == PFS_MEDIUM_SOLID)
		fs->backing_seek_us = seek_us(fs->root.dev);
	pfs_wb_inode_init(&fs->root);
	pthread_mutex_init(&fs->root.om_lock, NULL);
	pthread_mutex_init(&fs->root.write_lock, NULL);
	return 0;
}

void pfs_cleanup(struct pfs *fs)
{
	struct pfs_inode *in;

	while ((in = pfs_inode_take_any(fs)))
		inode_free(fs, in, true);
	pfs_inodes_destroy(fs);
}

/* inode_fid() -- how the scheduler knows @in's backing file. */
static struct ios_file_id inode_fid(const struct pfs_inode *in)
{
	return (struct ios_file_id){(uint64_t)in->dev, (uint64_t)in->ino};
}

/* sched_invalidate() -- [@off, @off + @len) of @in (@len 0: to the end)
 * changed without a queued write: the scheduler's readahead forgets it.
 * Called after the change, before the reply. */
static void sched_invalidate(struct pfs *fs, struct pfs_inode *in, off_t off, off_t len)
{
	pthread_rwlock_rdlock(&fs->core->ios_lock);
	ios_invalidate(fs->core->ios, inode_fid(in), off, len);
	pthread_rwlock_unlock(&fs->core->ios_lock);
}

/* proc_path() -- "/proc/self/fd/N", to reach an O_PATH descriptor's object
 * with calls that have no *at(..., AT_EMPTY_PATH) form. */
static void proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* ------------------------------------------------------------------------ */
/* lookup and attributes */

/* openat_shed() -- openat(2), once more after the descriptor cache gave
 * back what it holds if descriptors ran out (an open takes its descriptor
 * before anything else, so nothing was made by the first try).  A
 * descriptor, or -1 with errno set. */
static int openat_shed(struct pfs *fs, int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags, mode);

	if (fd < 0 && errno == EMFILE && pfs_inodes_shed(fs))
		fd = openat(dirfd, name, flags, mode);
	return fd;
}

/* stat_inode() -- the attributes of @in's backing object.  0 or -errno. */
static int stat_inode(struct pfs *fs, struct pfs_inode *in, struct stat *st)
{
	int fd = pfs_inode_fd(fs, in), ret;

	if (fd < 0)
		return fd;
	ret = fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	pfs_inode_fd_put(fs, in);
	return ret;
}

/* check_name() -- a single path component from the kernel. */
static int check_name(const char *name)
{
	if (strchr(name, '/'))
		return -EINVAL;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* note_relation() -- what @in, reached as @name in @parent, is to the
 * per-relation statistics: a directory's oids, or a relation file's
 * counters, resolved here once rather than per request. */
static void note_relation(struct pfs *fs, struct pfs_inode *parent, struct pfs_inode *in,
			  const char *name)
{
	uint8_t pkind = __atomic_load_n(&parent->kind, __ATOMIC_RELAXED);
	uint32_t spc, oid;

	if (in == &fs->root)
		return;
	if (in->fmt == S_IFDIR) {
		pgiofs_dir_oids(
		    (enum pgiofs_dirkind)pkind, __atomic_load_n(&parent->spc, __ATOMIC_RELAXED),
		    __atomic_load_n(&parent->oid, __ATOMIC_RELAXED), name,
		    (enum pgiofs_dirkind)__atomic_load_n(&in->kind, __ATOMIC_RELAXED), &spc, &oid);
		__atomic_store_n(&in->spc, spc, __ATOMIC_RELAXED);
		__atomic_store_n(&in->oid, oid, __ATOMIC_RELAXED);
	} else if (in->fmt == S_IFREG && pkind == PGIOFS_DIR_DATABASE &&
		   !__atomic_load_n(&in->rel, __ATOMIC_RELAXED) &&
		   (oid = pgiofs_relfilenode(name)) != 0) {
		__atomic_store_n(
		    &in->rel,
		    ios_stats_rel_get(fs->stats, __atomic_load_n(&parent->spc, __ATOMIC_RELAXED),
				      __atomic_load_n(&parent->oid, __ATOMIC_RELAXED), oid),
		    __ATOMIC_RELAXED);
	}
}

/* shared_with_wal_mount() -- whether @in is a pg_wal directory, or a file
 * in one, that a WAL mount of its own serves as well (walmount.c): a
 * descriptor or working directory from before the WAL mount reaches it
 * through this connection, and so does everything once the WAL mount has
 * ended.  A change made through either connection is not seen in the
 * other's cache, so the kernel keeps no entry, attribute or negative entry
 * of it on this one (the WAL mount keeps none either). */
static bool shared_with_wal_mount(const struct pfs *fs, const struct pfs_inode *in)
{
	return fs->walmounts && (__atomic_load_n(&in->kind, __ATOMIC_RELAXED) == PGIOFS_DIR_WAL ||
				 __atomic_load_n(&in->cls, __ATOMIC_RELAXED) == IOS_CLASS_WAL);
}

static double attr_timeout(const struct pfs *fs, const struct pfs_inode *in)
{
	return shared_with_wal_mount(fs, in) ? 0 : fs->set.attr_timeout;
}

/* do_lookup() -- fill @e for @name in @parent, taking one lookup reference.
 * Returns 0 or -errno. */
static int do_lookup(struct pfs *fs, struct pfs_inode *parent, const char *name,
		     struct fuse_entry_param *e)
{
	struct pfs_inode *in;
	enum pgiofs_dirkind kind;
	enum ios_class cls;
	int pfd, fd, ret;

	memset(e, 0, sizeof(*e));
	e->attr_timeout = fs->set.attr_timeout;
	e->entry_timeout = fs->set.entry_timeout;
	ret = check_name(name);
	if (ret < 0)
		return ret;
	if (parent == &fs->root && strcmp(name, "..") == 0)
		name = ".";
	pfd = pfs_inode_fd(fs, parent);
	if (pfd < 0)
		return pfd;
	fd = openat_shed(fs, pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	ret = fd < 0 ? -errno : 0;
	pfs_inode_fd_put(fs, parent);
	if (ret < 0) {
		pfs_inode_out_of_fds(-ret);
		return ret;
	}
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	pgiofs_classify((enum pgiofs_dirkind)__atomic_load_n(&parent->kind, __ATOMIC_RELAXED), name,
			S_ISDIR(e->attr.st_mode), &kind, &cls);
	ret = inode_get(fs, &e->attr, fd, kind, cls, &in);
	if (ret < 0)
		return ret;
	if (S_ISREG(e->attr.st_mode)) {
		/* acknowledged writes the kernel counts in the size: stat
		 * again now that the inode is known (writebehind.c) */
		off_t pending = pfs_wb_size(in);

		if (pending && stat_inode(fs, in, &e->attr) == 0)
			pfs_wb_fix_size(pending, &e->attr);
		pfs_wb_fix_mtime(in, &e->attr);
		pfs_space_mark(fs, in, &e->attr);
	}
	note_relation(fs, parent, in, name);
	if (shared_with_wal_mount(fs, parent))
		e->entry_timeout = 0;
	e->attr_timeout = attr_timeout(fs, in);
	if (kind == PGIOFS_DIR_WAL && fs->wal_dir_seen)
		fs->wal_dir_seen(fs, parent, name, &e->attr);
	e->ino = in == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	return 0;
}

static void reply_entry_or_err(fuse_req_t req, struct fuse_entry_param *e, int ret)
{
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, e);
}

static void pfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pfs *fs = pfs_of(req);
	struct fuse_entry_param e;
	int ret = do_lookup(fs, inode_of(req, parent), name, &e);

	if (ret == 0 && S_ISREG(e.attr.st_mode))
		pfs_walprep_seen(fs, inode_of(req, parent), name, NULL, fuse_req_ctx(req)->pid);

	if (ret == -ENOENT && fs->set.negative_timeout > 0 &&
	    !shared_with_wal_mount(fs, inode_of(req, parent)) &&
	    !pfs_walprep_active(fs, inode_of(req, parent))) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->set.negative_timeout;
		ret = 0;
	}
	reply_entry_or_err(req, &e, ret);
}

static void pfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(pfs_of(req), inode_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void pfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		inode_forget(pfs_of(req), inode_of(req, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

struct pfs_fh; /* below */
static int fh_fd(struct fuse_file_info *fi);

static void pfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_inode *in = inode_of(req, ino);
	off_t pending = pfs_wb_size(in); /* before the stat: see writebehind.c */
	struct stat st;
	int ret;

	if (fi)
		ret = fstat(fh_fd(fi), &st) < 0 ? -errno : 0;
	else
		ret = stat_inode(pfs_of(req), in, &st);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	pfs_wb_fix_size(pending, &st);
	pfs_wb_fix_mtime(in, &st);
	pfs_space_mark(pfs_of(req), in, &st);
	fuse_reply_attr(req, &st, attr_timeout(pfs_of(req), in));
}

/* kill_suidgid() -- what the VFS does on write and truncate by a caller
 * without CAP_FSETID: clear S_ISUID, and S_ISGID if group-executable.  The
 * kernel asks for it (FUSE_HANDLE_KILLPRIV_V2, see wire.c); a root daemon
 * must do it itself because its own writes keep the bits. */
static bool kill_suidgid(struct pfs *fs, int fd, const char *path)
{
	struct stat st;
	mode_t mode;

	if (!fs->is_root || (fd >= 0 ? fstat(fd, &st) : stat(path, &st)) < 0)
		return false;
	mode = st.st_mode & 07777;
	if (mode & S_ISUID)
		mode &= ~S_ISUID;
	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		mode &= ~S_ISGID;
	if (mode == (st.st_mode & 07777))
		return false;
	return (fd >= 0 ? fchmod(fd, mode) : chmod(path, mode)) == 0;
}

/* space_mode() -- the mode a SETATTR of @in asks for: while
 * files.space_guard_mb shows S_ISUID that the backing file has not (space.c),
 * a mode the kernel made from the one shown (chmod g+w) keeps the backing
 * file's S_ISUID instead. */
static mode_t space_mode(const struct pfs *fs, const struct pfs_inode *in, int fd, const char *path,
			 mode_t mode)
{
	struct stat st;

	if (!(mode & S_ISUID) || in->fmt != S_IFREG || !pfs_space_low(fs) ||
	    (fd >= 0 ? fstat(fd, &st) : stat(path, &st)) < 0)
		return mode;
	return (mode & ~(mode_t)S_ISUID) | (st.st_mode & S_ISUID);
}

/* set_times() -- the times of SETATTR's @attr and @valid, on @fd (an open
 * handle's) if >= 0, else on @in's object through @ifd, its descriptor. */
static int set_times(const struct pfs_inode *in, int fd, int ifd, struct stat *attr, int valid)
{
	struct timespec tv[2];
	char path[64];

	tv[0].tv_sec = tv[1].tv_sec = 0;
	tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (fd >= 0)
		return futimens(fd, tv) < 0 ? -errno : 0;
	if (in->fmt == S_IFLNK)
		return utimensat(ifd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	proc_path(path, sizeof(path), ifd);
	return utimensat(AT_FDCWD, path, tv, 0) < 0 ? -errno : 0;
}

/* kernel_times() -- whether a SETATTR is the write-back cache's mtime (and
 * ctime) of a file being written back before an fsync or at close
 * (fuse_flush_times(): only those carry a file handle and no other change),
 * which files.defer_times keeps for later (writebehind.c). */
static bool kernel_times(const struct pfs *fs, const struct pfs_inode *in, int valid,
			 const struct fuse_file_info *fi)
{
	return fs->set.defer_times && fs->writeback && fi && in->fmt == S_IFREG &&
	       (valid & FUSE_SET_ATTR_MTIME) &&
	       !(valid & ~(FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME));
}

static void pfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			struct fuse_file_info *fi)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *in = inode_of(req, ino);
	int fd = fi ? fh_fd(fi) : -1, ifd = -1;
	char path[64] = "";
	struct stat st;
	off_t pending;
	int ret = 0;

	if (kernel_times(fs, in, valid, fi)) {
		pfs_wb_keep_mtime(in, &attr->st_mtim);
		valid = 0;
	} else if ((ret = pfs_wb_apply_mtime(fs, in, fd)) < 0) { /* before what may set times */
		goto out_reply;
	}
	/* an open file's handle does everything; else the inode's descriptor */
	if (fd < 0) {
		ifd = pfs_inode_fd(fs, in);
		if (ifd < 0) {
			ret = ifd;
			goto out_reply;
		}
		proc_path(path, sizeof(path), ifd);
	}
	if (valid & FUSE_SET_ATTR_MODE) {
		mode_t mode = space_mode(fs, in, fd, path, attr->st_mode & 07777);

		if (in->fmt == S_IFLNK)
			ret = -EOPNOTSUPP;
		else if (fd >= 0)
			ret = fchmod(fd, mode) < 0 ? -errno : 0;
		else
			ret = chmod(path, mode) < 0 ? -errno : 0;
		if (ret < 0)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if ((fd >= 0
			 ? fchown(fd, uid, gid)
			 : fchownat(ifd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) < 0) {
			ret = -errno;
			goto out;
		}
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		pfs_wb_wait(in);
		if (fd >= 0)
			ret = ftruncate(fd, attr->st_size) < 0 ? -errno : 0;
		else
			ret = truncate(path, attr->st_size) < 0 ? -errno : 0;
		if (ret < 0)
			goto out;
		sched_invalidate(fs, in, attr->st_size, 0);
		if (valid & FUSE_SET_ATTR_KILL_SUID)
			kill_suidgid(fs, fd, path);
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		     FUSE_SET_ATTR_MTIME_NOW)) {
		/* an acknowledged write landing afterwards would move the
		 * mtime set here */
		pfs_wb_wait(in);
		ret = set_times(in, fd, ifd, attr, valid);
		if (ret < 0)
			goto out;
	}
	pending = pfs_wb_size(in);
	if (fd >= 0)
		ret = fstat(fd, &st) < 0 ? -errno : 0;
	else
		ret = fstatat(ifd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (ret == 0) {
		pfs_wb_fix_size(pending, &st);
		pfs_wb_fix_mtime(in, &st);
		pfs_space_mark(fs, in, &st);
	}
out:
	if (ifd >= 0)
		pfs_inode_fd_put(fs, in);
out_reply:
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, attr_timeout(fs, in));
}

/* ------------------------------------------------------------------------ */
/* creating objects as the requesting user */

struct creds {
	bool active;
	uid_t uid;
	gid_t gid;
};

/* creds_enter() -- when the daemon is root, create with the caller's gid as
 * fsgid (this thread only); the owner is set by creds_own_*() afterwards. */
static struct creds creds_enter(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct creds c = {false, ctx->uid, ctx->gid};

	if (pfs_of(req)->is_root && (ctx->uid != 0 || ctx->gid != 0)) {
		c.active = true;
		setfsgid(ctx->gid);
	}
	return c;
}

static void creds_leave(struct creds *c)
{
	if (c->active)
		setfsgid(0);
}

/* creds_own_at() -- give @name in @dirfd to the caller; on failure the new
 * object is removed so nothing half-made is left.  Returns 0 or -errno. */
static int creds_own_at(const struct creds *c, int dirfd, const char *name, bool isdir)
{
	int e;

	if (!c->active || c->uid == 0)
		return 0;
	if (fchownat(dirfd, name, c->uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	e = errno;
	unlinkat(dirfd, name, isdir ? AT_REMOVEDIR : 0);
	return -e;
}

/* restore_setid() -- chown clears S_ISUID/S_ISGID of a regular file; put
 * back the bits the caller asked for. */
static void restore_setid(int fd, mode_t mode)
{
	if (mode & (S_ISUID | S_ISGID))
		fchmod(fd, mode & 07777);
}

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev,
		      const char *link)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *dir = inode_of(req, parent);
	struct fuse_entry_param e;
	struct creds c;
	int dfd, ret = check_name(name);

	if (ret < 0 || (ret = dfd = pfs_inode_fd(fs, dir)) < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	c = creds_enter(req);
	if (link)
		ret = symlinkat(link, dfd, name);
	else if (S_ISDIR(mode))
		ret = mkdirat(dfd, name, mode & 07777);
	else
		ret = mknodat(dfd, name, mode, rdev);
	ret = ret < 0 ? -errno : 0;
	creds_leave(&c);
	if (ret == 0)
		ret = creds_own_at(&c, dfd, name, S_ISDIR(mode));
	if (ret == 0 && c.active && c.uid != 0 && S_ISREG(mode) && (mode & (S_ISUID | S_ISGID))) {
		int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		char path[64];

		if (fd >= 0) {
			proc_path(path, sizeof(path), fd);
			chmod(path, mode & 07777);
			close(fd);
		}
	}
	pfs_inode_fd_put(fs, dir);
	if (ret == 0)
		ret = do_lookup(fs, dir, name, &e);
	reply_entry_or_err(req, &e, ret);
}

static void pfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL);
}

static void pfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | mode, 0, NULL);
}

static void pfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link);
}

static void pfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *in = inode_of(req, ino);
	struct pfs_inode *dir = inode_of(req, newparent);
	struct fuse_entry_param e;
	char path[64];
	int fd, dfd, ret = check_name(newname);

	if (ret == 0 && (ret = fd = pfs_inode_fd(fs, in)) >= 0) {
		if ((ret = dfd = pfs_inode_fd(fs, dir)) >= 0) {
			/* AT_EMPTY_PATH links the object itself, symlinks
			 * included; it needs CAP_DAC_READ_SEARCH, so fall back
			 * to the /proc path (which for a symlink would follow
			 * it: refuse that case). */
			ret = linkat(fd, "", dfd, newname, AT_EMPTY_PATH);
			if (ret < 0 && (errno == ENOENT || errno == EPERM) && in->fmt != S_IFLNK) {
				proc_path(path, sizeof(path), fd);
				ret = linkat(AT_FDCWD, path, dfd, newname, AT_SYMLINK_FOLLOW);
			}
			ret = ret < 0 ? -errno : 0;
			pfs_inode_fd_put(fs, dir);
		}
		pfs_inode_fd_put(fs, in);
	}
	if (ret == 0)
		ret = do_lookup(fs, dir, newname, &e);
	reply_entry_or_err(req, &e, ret);
}

/* remove_name() -- unlinkat(@flags) @name in directory @parent; 0 or -errno. */
static int remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, int flags)
{
	struct pfs_inode *dir = inode_of(req, parent);
	int fd = pfs_inode_fd(pfs_of(req), dir), ret;

	if (fd < 0)
		return fd;
	ret = unlinkat(fd, name, flags) < 0 ? -errno : 0;
	pfs_inode_fd_put(pfs_of(req), dir);
	return ret;
}

static void pfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, 0));
}

static void pfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, -remove_name(req, parent, name, AT_REMOVEDIR));
}

/* inode_at() -- the inode of the object at @name in @dir, with one more
 * lookup reference (drop it with inode_forget()), if the kernel knows it;
 * else NULL.  Its attributes in @st. */
static struct pfs_inode *inode_at(struct pfs *fs, struct pfs_inode *dir, const char *name,
				  struct stat *st)
{
	struct pfs_inode *in = NULL;
	struct pfs_ikey key;
	int dfd = pfs_inode_fd(fs, dir), fd;

	if (dfd < 0)
		return NULL;
	fd = openat_shed(fs, dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	pfs_inode_fd_put(fs, dir);
	if (fd < 0)
		return NULL;
	if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
	    pfs_inode_key(fs, fd, st, &key) == 0)
		in = pfs_inode_find(fs, &key, fd);
	if (!in)
		close(fd);
	return in;
}

/* reclassify() -- the object now at @name in @dir, if the kernel knows it,
 * takes the class of that name: after a rename the kernel moves its entry
 * without looking the name up again, and a file moved into or out of
 * pg_wal must be opened as what it now is (passthrough.c). */
static void reclassify(struct pfs *fs, struct pfs_inode *dir, const char *name)
{
	enum pgiofs_dirkind kind;
	enum ios_class cls;
	struct pfs_inode *in;
	struct stat st;

	in = inode_at(fs, dir, name, &st);
	if (!in)
		return;
	pgiofs_classify((enum pgiofs_dirkind)__atomic_load_n(&dir->kind, __ATOMIC_RELAXED), name,
			S_ISDIR(st.st_mode), &kind, &cls);
	set_class(fs, in, kind, cls);
	inode_forget(fs, in, 1);
	if (kind == PGIOFS_DIR_WAL && fs->wal_dir_seen) /* a pg_wal moved into place */
		fs->wal_dir_seen(fs, dir, name, &st);
}

static void pfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *from = inode_of(req, parent), *to = inode_of(req, newparent);
	int ffd, tfd, ret = check_name(newname);

	if (ret == 0 && (ret = ffd = pfs_inode_fd(fs, from)) >= 0) {
		if ((ret = tfd = pfs_inode_fd(fs, to)) >= 0) {
			ret = renameat2(ffd, name, tfd, newname, flags) < 0 ? -errno : 0;
			pfs_inode_fd_put(fs, to);
		}
		pfs_inode_fd_put(fs, from);
	}
	if (ret == 0) {
		reclassify(pfs_of(req), inode_of(req, newparent), newname);
		if (!(flags & RENAME_EXCHANGE))
			pfs_walprep_seen(fs, to, newname, name, fuse_req_ctx(req)->pid);
		if (flags & RENAME_EXCHANGE)
			reclassify(pfs_of(req), inode_of(req, parent), name);
	}
	fuse_reply_err(req, -ret);
}

static void pfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct pfs_inode *in = inode_of(req, ino);
	char buf[PATH_MAX + 1];
	int fd = pfs_inode_fd(pfs_of(req), in);
	ssize_t n;

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	n = readlinkat(fd, "", buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	pfs_inode_fd_put(pfs_of(req), in);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (n == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[n] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

static void pfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct pfs_inode *in = inode_of(req, ino);
	struct statvfs sv;
	int fd = pfs_inode_fd(pfs_of(req), in), ret;

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	ret = fstatvfs(fd, &sv) < 0 ? -errno : 0;
	pfs_inode_fd_put(pfs_of(req), in);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_statfs(req, &sv);
}

/* proc_path_of() -- "/proc/self/fd/N" of @in's descriptor in @buf: 0, and
 * pfs_inode_fd_put() once done with the path; or -errno. */
static int proc_path_of(fuse_req_t req, struct pfs_inode *in, char *buf, size_t len)
{
	int fd = pfs_inode_fd(pfs_of(req), in);

	if (fd < 0)
		return fd;
	proc_path(buf, len, fd);
	return 0;
}

static void pfs_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct pfs_inode *in = inode_of(req, ino);
	char path[64];
	int ret = proc_path_of(req, in, path, sizeof(path));

	if (ret == 0) {
		ret = faccessat(AT_FDCWD, path, mask, AT_EACCESS) < 0 ? -errno : 0;
		pfs_inode_fd_put(pfs_of(req), in);
	}
	fuse_reply_err(req, -ret);
}

/* ------------------------------------------------------------------------ */
/* open files */

struct pfs_fh {
	int fd;	   /* the backing file, opened as the caller asked */
	int dfd;   /* the same file with O_DIRECT, or -1 */
	int flags; /* what fd was opened with */
	struct pfs_inode *inode;
	enum ios_class cls;
	struct pfs_open_how how; /* page cache, direct or passthrough */
	uint32_t err_cursor;	 /* the inode's kept errors this handle has had */
};

/* Alignment of offsets, lengths and buffers for O_DIRECT: 4096 covers the
 * 512- and 4096-byte logical blocks of the devices PostgreSQL runs on. */
#define DIO_ALIGN 4096u
/* a queued write up to this size is copied out of the receive buffer */
#define WRITE_COPY_MAX (128u * 1024u)

static inline bool dio_aligned(off_t off, size_t len)
{
	return ((uint64_t)off | len) % DIO_ALIGN == 0 && len > 0;
}

static inline struct pfs_fh *fh_of(struct fuse_file_info *fi)
{
	return (struct pfs_fh *)(uintptr_t)fi->fh;
}

static int fh_fd(struct fuse_file_info *fi)
{
	return fh_of(fi)->fd;
}

/* open_flags() -- the flags for the backing open.  With the write-back
 * cache the kernel may read pages of a file opened write-only, so open
 * read-write.  The kernel sends every WRITE with its offset, the end of the
 * file for O_APPEND (it knows the size: pgiofs is the only writer), so
 * O_APPEND is dropped: on the backing descriptor it would make the write
 * ignore that offset and land at the backing file's end, which is not the
 * same place while acknowledged writes are pending or their space is
 * reserved (writebehind.c).  O_NOFOLLOW is dropped because /proc/self/fd
 * links are symlinks themselves: the kernel has already refused a symlink
 * for the caller. */
static int open_flags(const struct pfs *fs, int flags, bool *widened)
{
	flags &= ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY | O_APPEND);
	/* a caller's O_DIRECT is honoured by the kernel (no page cache on the
	 * mount); our buffers are not aligned, and backing_direct decides how
	 * the backing file is reached */
	flags &= ~O_DIRECT;
	*widened = false;
	if (fs->writeback && (flags & O_ACCMODE) == O_WRONLY) {
		flags = (flags & ~O_ACCMODE) | O_RDWR;
		*widened = true;
	}
	return flags | O_CLOEXEC;
}

/* direct_pays() -- what the auto settings of files.backing_direct and
 * files.drop_behind go by: whether the data files' writes are better past
 * the backing page cache.  Not on a disk that says it rotates, nor on one
 * timed at mount (pfs_dev_seek_us()) answering in PFS_SEEK_US_DIRECT or
 * more: a capped or networked volume, or a virtio disk, which cannot say,
 * that rotates.  A disk that could not be timed (pgiofs not root, or a
 * device node it may not open) is taken as a local one, as the virtual
 * disks of today mostly are and as measured on one (docs/performance.md,
 * "A virtio disk cannot say"). */
static bool direct_pays(const struct pfs *fs)
{
	return fs->backing_medium != PFS_MEDIUM_ROTATIONAL &&
	       fs->backing_seek_us < PFS_SEEK_US_DIRECT;
}

/* seek_note() -- what the timing at mount found and what direct_pays()
 * took the disk for, in @buf (no parentheses: the mount's log line has the
 * note in a pair): a rotating virtio disk, a capped or networked volume, or
 * a local disk. */
static const char *seek_note(const struct pfs *fs, char *buf, size_t len)
{
	int us = fs->backing_seek_us;
	bool virtio = fs->backing_medium == PFS_MEDIUM_UNKNOWN;
	int limit = virtio && us >= PFS_SEEK_US_SOLID ? PFS_SEEK_US_SOLID : PFS_SEEK_US_DIRECT;
	const char *as = virtio && us >= PFS_SEEK_US_SOLID ? "rotating"
			 : us >= PFS_SEEK_US_DIRECT	   ? "a capped or networked volume"
			 : virtio			   ? "a local disk, not rotating"
							   : "a local disk";

	if (us <= 0)
		snprintf(buf, len, "its read time could not be measured: %s; %s",
			 strerror(us < 0 ? -us : EINVAL),
			 virtio ? "taken as not rotating, as virtual disks mostly are"
				: "taken as a local disk");
	else
		snprintf(buf, len,
			 "the median of 16 random 4 KiB reads was %d.%02d ms, %s %d.%02d ms: "
			 "taken as %s",
			 us / 1000, us % 1000 / 10, us >= limit ? "at least" : "under",
			 limit / 1000, limit % 1000 / 10, as);
	return buf;
}

/* backing_direct() -- what files.backing_direct = @set means on @fs's
 * backing store. */
static bool backing_direct(const struct pfs *fs, int set)
{
	return set == PGIOFS_DIRECT_YES || (set == PGIOFS_DIRECT_AUTO && direct_pays(fs));
}

bool pfs_backing_direct(const struct pfs *fs, char *why, size_t len)
{
	int set = fs->set.backing_direct;
	bool direct = backing_direct(fs, set);

	if (!why)
		return direct;
	if (set != PGIOFS_DIRECT_AUTO)
		snprintf(why, len, "files.backing_direct = %s", pgiofs_backing_direct_names[set]);
	else if (fs->backing_medium == PFS_MEDIUM_NONE)
		snprintf(why, len,
			 "files.backing_direct = auto: the backing store has no block "
			 "device that says whether it is rotational");
	else if (fs->backing_medium == PFS_MEDIUM_UNKNOWN) {
		char note[128];

		snprintf(why, len,
			 "files.backing_direct = auto: the backing device %s is a virtio "
			 "disk, which cannot say whether it is rotational; %s",
			 fs->backing_dev, seek_note(fs, note, sizeof(note)));
	} else if (fs->backing_medium == PFS_MEDIUM_ROTATIONAL)
		snprintf(why, len,
			 "files.backing_direct = auto: the backing device %s is rotational",
			 fs->backing_dev);
	else {
		char note[128];

		snprintf(why, len,
			 "files.backing_direct = auto: the backing device %s is not "
			 "rotational; %s",
			 fs->backing_dev, seek_note(fs, note, sizeof(note)));
	}
	return direct;
}

/* wants_direct() -- relation data, WAL and temp files are cached once, in
 * the FUSE page cache, when pfs_backing_direct() says so; a handle that
 * bypasses the mount's page cache keeps the backing page cache. */
static bool wants_direct(const struct pfs *fs, enum ios_class cls, enum pfs_open_mode mode)
{
	if (mode != PFS_OPEN_CACHED)
		return false;
	switch (cls) {
	case IOS_CLASS_WAL:
	case IOS_CLASS_HEAP:
	case IOS_CLASS_INDEX:
	case IOS_CLASS_FSM:
	case IOS_CLASS_VM:
	case IOS_CLASS_TEMP:
		return pfs_backing_direct(fs, NULL, 0);
	default:
		return false;
	}
}

static int fh_new(struct pfs *fs, struct fuse_file_info *fi, int fd, int flags,
		  struct pfs_inode *in)
{
	struct pfs_fh *fh = malloc(sizeof(*fh));
	char path[64];

	if (!fh)
		return -ENOMEM;
	fh->fd = fd;
	fh->dfd = -1;
	fh->flags = flags;
	fh->inode = in;
	fh->err_cursor = pfs_wb_err_sample(in);
	fh->cls = (enum ios_class)__atomic_load_n(&in->cls, __ATOMIC_RELAXED);
	pfs_open_mode_take(fs, in, fh->cls, &fh->how);
	/* read without ios_lock: a reload may change it meanwhile */
	if (__atomic_load_n(&fs->core->set.stats_enabled, __ATOMIC_RELAXED))
		ios_stats_note_open(fs->stats, fh->cls, fh->how.mode == PFS_OPEN_PASSTHROUGH,
				    fh->how.new_file);
	if (in->fmt == S_IFREG && wants_direct(fs, fh->cls, fh->how.mode)) {
		/* a second descriptor: aligned transfers use it, the rest the
		 * first (the kernel keeps the two coherent); a backing
		 * filesystem without O_DIRECT just gets buffered I/O */
		proc_path(path, sizeof(path), fd);
		fh->dfd = open(path, (flags & ~(O_TRUNC | O_CREAT | O_EXCL)) | O_DIRECT);
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	__atomic_add_fetch(&in->nopen, 1, __ATOMIC_RELAXED);
	return 0;
}

/* fh_free() -- close and free @fh.  Returns 0, or the -errno of closing
 * its backing descriptor (a network filesystem reports write errors
 * there). */
static int fh_free(struct pfs *fs, struct pfs_fh *fh)
{
	int ret = 0;

	if (__atomic_sub_fetch(&fh->inode->nopen, 1, __ATOMIC_RELAXED) == 0 &&
	    __atomic_exchange_n(&fh->inode->read_seen, false, __ATOMIC_ACQ_REL)) {
		pthread_rwlock_rdlock(&fs->core->ios_lock);
		ios_release(fs->core->ios, inode_fid(fh->inode));
		pthread_rwlock_unlock(&fs->core->ios_lock);
	}
	pfs_open_mode_drop(fs, fh->inode, fh->how.mode);
	if (close(fh->fd) < 0 && errno != EINTR)
		ret = -errno;
	if (fh->dfd >= 0)
		close(fh->dfd);
	free(fh);
	return ret;
}

/* set_open_reply() -- how the kernel is to open @fi; a passthrough reply is
 * armed (wire.c), and reply_opened() checks it.  Returns whether it was:
 * once the reply is sent the handle may already be released and freed. */
static bool set_open_reply(const struct pfs *fs, struct fuse_file_info *fi)
{
	const struct pfs_open_how *how = &fh_of(fi)->how;

	fi->keep_cache = fs->set.keep_cache && !how->drop_cache;
	fi->direct_io = 0;
	if (how->mode == PFS_OPEN_DIRECT) {
		fi->direct_io = 1;
		fi->keep_cache = 0;
	} else if (how->mode == PFS_OPEN_PASSTHROUGH) {
		fi->keep_cache = 0;
		pfs_wire_arm_passthrough(how->backing_id);
		return true;
	}
	return false;
}

/* reply_opened() -- after the OPEN or CREATE reply (@ret from libfuse;
 * @armed: set_open_reply()'s answer): false if nobody will release the
 * handle (the caller was interrupted). */
static bool reply_opened(bool armed, int ret)
{
	bool patched = pfs_wire_disarm();

	if (armed && !patched && ret == 0)
		log_msg(LOG_ERR, "an open reply could not be made passthrough");
	return ret != -ENOENT;
}

static void pfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *in = inode_of(req, ino);
	bool widened, armed;
	int flags = open_flags(fs, fi->flags, &widened);
	int fd, ret;

	/* libfuse enables atomic O_TRUNC: the open truncates, as setattr does */
	if (flags & O_TRUNC)
		pfs_wb_wait(in); /* an acknowledged write lands before, not after it */
	fd = pfs_inode_open(fs, in, flags);
	if (fd == -EACCES && widened)
		fd = pfs_inode_open(fs, in, (flags & ~O_ACCMODE) | O_WRONLY);
	if (fd < 0) {
		pfs_inode_out_of_fds(-fd);
		fuse_reply_err(req, -fd);
		return;
	}
	if (flags & O_TRUNC) {
		sched_invalidate(fs, in, 0, 0); /* no read-ahead data of before */
		if (pfs_wire_kill_suidgid() && kill_suidgid(fs, fd, NULL))
			fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	}
	ret = fh_new(fs, fi, fd, flags, in);
	if (ret < 0) {
		close(fd);
		fuse_reply_err(req, -ret);
		return;
	}
	armed = set_open_reply(fs, fi);
	if (!reply_opened(armed, fuse_reply_open(req, fi)))
		fh_free(fs, fh_of(fi)); /* the caller was interrupted: nobody will release it */
}

static void pfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_inode *dir = inode_of(req, parent), *old = NULL;
	struct fuse_entry_param e;
	bool widened, armed;
	int flags = open_flags(fs, fi->flags, &widened);
	struct creds c;
	struct stat st;
	int dfd, fd, ret = check_name(name);

	if (ret < 0 || (ret = dfd = pfs_inode_fd(fs, dir)) < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	pfs_space_poll(fs); /* a new file: the space may be going */
	/* the kernel sends O_EXCL if the caller asked; keep it for the backing */
	flags |= O_CREAT | (fi->flags & O_EXCL);
	/* a file that exists after all (the kernel's negative entry was out
	 * of date) is truncated here, as in pfs_open() */
	if ((flags & (O_TRUNC | O_EXCL)) == O_TRUNC && (old = inode_at(fs, dir, name, &st)))
		pfs_wb_wait(old);
	c = creds_enter(req);
	fd = openat_shed(fs, dfd, name, flags, mode);
	if (fd < 0 && errno == EACCES && widened)
		fd = openat_shed(fs, dfd, name, (flags & ~O_ACCMODE) | O_WRONLY, mode);
	ret = fd < 0 ? -errno : 0;
	creds_leave(&c);
	if (ret == 0 && c.active && c.uid != 0) {
		if (fchown(fd, c.uid, (gid_t)-1) < 0) {
			ret = -errno;
			unlinkat(dfd, name, 0);
		} else {
			restore_setid(fd, mode);
		}
	}
	if (ret == 0)
		ret = do_lookup(fs, dir, name, &e);
	if (old)
		inode_forget(fs, old, 1);
	if (ret == 0 && (flags & O_TRUNC))
		sched_invalidate(fs, inode_of(req, e.ino), 0, 0);
	if (ret == 0) {
		ret = fh_new(fs, fi, fd, flags, (struct pfs_inode *)(uintptr_t)e.ino);
		if (ret < 0)
			inode_forget(fs, inode_of(req, e.ino), 1);
	}
	if (ret < 0) {
		pfs_inode_out_of_fds(-ret);
		if (fd >= 0) {
			close(fd);
			/* created here (O_EXCL), so not left behind for a
			 * caller who was told it failed */
			if (flags & O_EXCL)
				unlinkat(dfd, name, 0);
		}
		pfs_inode_fd_put(fs, dir);
		fuse_reply_err(req, -ret);
		return;
	}
	pfs_inode_fd_put(fs, dir);
	armed = set_open_reply(fs, fi);
	if (!reply_opened(armed, fuse_reply_create(req, &e, fi))) {
		fh_free(fs, fh_of(fi));
		inode_forget(fs, inode_of(req, e.ino), 1);
	}
}

/* pfs_release() -- the last close of an open file.  Nobody waits for its
 * reply (the kernel sends it in the background), so an error of the
 * backing close is kept for the next fsync of the file, as an early
 * acknowledged write's is. */
static void pfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_inode *in = fh_of(fi)->inode;
	int ret;

	pfs_wb_wait(in); /* an acknowledged write may still use the fd */
	/* sent at close: see writebehind.c */
	ret = pfs_wb_apply_mtime(pfs_of(req), in, fh_fd(fi));
	if (ret < 0)
		pfs_wb_note_error(in, -ret);
	ret = fh_free(pfs_of(req), fh_of(fi));
	if (ret < 0)
		pfs_wb_note_error(in, -ret);
	fuse_reply_err(req, 0);
}

/* pfs_flush() -- every close() of a file, with fuse.flush = yes: it waits
 * for the file's acknowledged writes, and close() of a duplicate reports
 * what the backing filesystem reports at close (network filesystems report
 * write errors there) without giving up the descriptor.  With fuse.flush =
 * no (the default) the first FLUSH is answered ENOSYS and the kernel sends
 * none after it (fc->no_flush): it still writes the file's dirty pages at
 * close, before it would have sent the FLUSH, and close() returns their
 * errors; an acknowledged write's error goes to the next fsync, as it did. */
static void pfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd;

	if (!pfs_of(req)->set.flush) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	pfs_wb_wait(fh_of(fi)->inode);
	fd = dup(fh_fd(fi));
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	fuse_reply_err(req, close(fd) < 0 ? errno : 0);
}

/* ------------------------------------------------------------------------ */
/* data path: every read, write and sync is an iosched request */

/* acknowledge_early() -- whether a WRITE is answered before it is on the
 * backing store (writebehind.c): WAL on a direct handle (a commit's WRITE
 * then does not wait for the disk, its FSYNC does) unless WAL mounts of
 * their own read it in passthrough, and, without the
 * kernel's write-back cache, a queued write of a data file (pgiofs is the
 * write cache then).  Never a write the caller made synchronous on a direct
 * handle: no FSYNC follows it.  Caller holds ios_lock. */
static bool acknowledge_early(const struct pfs *fs, const struct pfs_fh *fh, bool queued,
			      bool dsync)
{
	if (queued && fs->core->wb.cnt.limit == 0)
		return false;
	/* WAL reached through this connection while WAL mounts of their own
	 * exist: a passthrough reader there must see every acknowledged byte */
	if (fh->how.mode == PFS_OPEN_DIRECT)
		return !dsync && fh->cls == IOS_CLASS_WAL && !fs->wal_split;
	return fh->how.mode == PFS_OPEN_CACHED && !fs->writeback && queued;
}

/* submit() -- hand a request to the current scheduler (a reload swaps it
 * under the write lock). */
static void submit(struct pfs *fs, struct ios_req *r)
{
	pthread_rwlock_rdlock(&fs->core->ios_lock);
	ios_submit(fs->core->ios, r);
	pthread_rwlock_unlock(&fs->core->ios_lock);
}

struct ios_sched *pfs_sched_create(struct pfs *fs, const struct pgiofs_settings *set)
{
	struct ios_settings is = set->ios;
	struct ios_sched *s;

	/* for iosched.data_inline = auto: the setting asked for, as the
	 * kernel's INIT may not have come yet (every kernel since 3.15 offers
	 * the write-back cache) */
	is.data_buffered = set->writeback_cache && !backing_direct(fs, set->backing_direct);
	s = ios_create_with(&is);

	if (s && set->stats_enabled)
		ios_attach_stats(s, fs->stats); /* before anything is submitted */
	if (s && fs->trace)
		ios_attach_trace(s, fs->trace);
	return s;
}

int pfs_reload(struct pfs *fs, const struct pgiofs_settings *ns)
{
	/* the new scheduler first: if it cannot be made (no memory, no file
	 * descriptor for its io_uring), the old one keeps running */
	struct ios_sched *n = pfs_sched_create(fs, ns);

	if (!n)
		return -errno;
	pthread_rwlock_wrlock(&fs->core->ios_lock);
	ios_destroy(fs->core->ios); /* completes everything it holds */
	/* only what is read under ios_lock changes here: the [fuse] and
	 * [files] settings are read by every handler without a lock and take
	 * effect at the next mount */
	fs->core->ios = n;
	__atomic_store_n(&fs->set.stats_enabled, ns->stats_enabled, __ATOMIC_RELAXED);
	fs->set.ios = ns->ios;
	pthread_rwlock_unlock(&fs->core->ios_lock);
	return 0;
}

void pfs_describe(struct pfs *fs, const char *profile, const struct pgiofs_settings *s)
{
	char changed[sizeof(fs->changed)];

	pgiofs_settings_changed(s, changed, sizeof(changed));
	pthread_rwlock_wrlock(&fs->ios_lock);
	snprintf(fs->profile, sizeof(fs->profile), "%s", profile ? profile : "");
	memcpy(fs->changed, changed, sizeof(changed));
	pthread_rwlock_unlock(&fs->ios_lock);
}

int pfs_drain(struct pfs *fs)
{
	struct pgiofs_settings cur;

	/* a copy taken under the lock a reload writes them under: two WAL
	 * mounts may end, and drain, at once */
	pthread_rwlock_rdlock(&fs->core->ios_lock);
	cur = fs->set;
	pthread_rwlock_unlock(&fs->core->ios_lock);
	if (pfs_reload(fs, &cur) == 0)
		return 0;
	cur.ios.policy = IOS_POLICY_DIRECT; /* needs no thread or descriptor */
	return pfs_reload(fs, &cur);
}

/* refine_class() -- a relation main fork's name cannot tell a table from
 * an index: its first full page read or written can (pd_special and the
 * special space, see pagetype.c).  Decided once per file. */
static void refine_class(struct pfs_inode *in, const void *data, size_t len, off_t off)
{
	enum ios_class cls;
	const char *am;

	if (__atomic_load_n(&in->cls, __ATOMIC_RELAXED) != IOS_CLASS_HEAP ||
	    __atomic_load_n(&in->by_content, __ATOMIC_RELAXED) || off % 8192 != 0 || len < 8192)
		return;
	if (pgiofs_page_kind(data, 8192, &cls, &am) != 0)
		return; /* a new (zero) page or not a page: ask the next one */
	__atomic_store_n(&in->cls, (uint8_t)cls, __ATOMIC_RELAXED);
	__atomic_store_n(&in->by_content, 1, __ATOMIC_RELAXED);
}

/* fh_class() -- the class of @fh's file now (it may have been refined
 * since the file was opened). */
static enum ios_class fh_class(const struct pfs_fh *fh)
{
	if (fh->cls != IOS_CLASS_HEAP)
		return fh->cls;
	return (enum ios_class)__atomic_load_n(&fh->inode->cls, __ATOMIC_RELAXED);
}

struct rw_ctx {
	struct ios_req r;
	fuse_req_t req;
	struct pfs *fs;
	struct pfs_inode *in; /* the file's inode (NULL for directories) */
	size_t held;	      /* acknowledged early: bytes of the write cache held */
	struct iovec iov;
	void *buf;     /* owned buffer (reads, and writes copied for O_DIRECT) */
	bool close_fd; /* r.fd was opened for this request */
	bool buffered; /* a write through the backing page cache */
	bool drop;     /* ... asked not to stay there (IOS_F_DROPBEHIND) */
};

static void rw_free(struct rw_ctx *c)
{
	if (c->close_fd)
		close(c->r.fd);
	free(c->buf);
	free(c);
}

/* write_error() -- the errno of a completed write, 0 if it succeeded.
 * iosched completes a write in full or with the backing store's -errno; a
 * short count is never answered as a success (the kernel's writeback looks
 * at the error, not the count, and would lose the tail): EIO. */
static int write_error(const struct ios_req *r, ssize_t res)
{
	if (res < 0)
		return (int)-res;
	return (size_t)res == r->len ? 0 : EIO;
}

/* dropped() -- account @len bytes of a transfer of @c that succeeded and
 * asked for files.drop_behind: dropped, or refused by its file system. */
static void dropped(struct rw_ctx *c, size_t len)
{
	struct pfs *core = c->fs->core;

	if (!c->drop)
		return;
	if (c->r.flags & IOS_F_DROPBEHIND) {
		__atomic_add_fetch(c->r.dir == IOS_READ ? &core->drop.read_bytes
							: &core->drop.bytes,
				   len, __ATOMIC_RELAXED);
	} else if (!__atomic_exchange_n(&c->in->drop_refused, true, __ATOMIC_RELAXED) &&
		   __atomic_fetch_add(&core->drop.refused, 1, __ATOMIC_RELAXED) == 0) {
		log_msg(LOG_NOTICE,
			"files.drop_behind: the backing file system of inode %ju refuses "
			"RWF_DONTCACHE (it needs Linux 6.14 or later and a file system that "
			"supports it); such files' pages stay in the backing page cache",
			(uintmax_t)c->in->ino);
	}
}

static void read_done(struct ios_req *r, ssize_t res)
{
	struct rw_ctx *c = (struct rw_ctx *)r;

	if (res < 0) {
		fuse_reply_err(c->req, (int)-res);
	} else {
		if (c->in) {
			refine_class(c->in, c->buf, (size_t)res, r->off);
			dropped(c, (size_t)res);
		}
		fuse_reply_buf(c->req, c->buf, (size_t)res);
	}
	rw_free(c);
}

/* written() -- account a buffered write of @c that succeeded. */
static void written(struct rw_ctx *c)
{
	pfs_ckpt_note(c->fs, c->in, c->r.cls, c->buffered, c->r.len);
	dropped(c, c->r.len);
}

static void write_done(struct ios_req *r, ssize_t res)
{
	struct rw_ctx *c = (struct rw_ctx *)r;
	int err = write_error(r, res);

	if (!err && c->in)
		written(c);
	if (err)
		fuse_reply_err(c->req, err);
	else
		fuse_reply_write(c->req, r->len);
	rw_free(c);
}

/* write_behind_done() -- an acknowledged write finished: its error is kept
 * for the next fsync. */
static void write_behind_done(struct ios_req *r, ssize_t res)
{
	struct rw_ctx *c = (struct rw_ctx *)r;

	if (res >= 0)
		written(c);
	pfs_wb_end(c->fs, c->in, c->held, res, r->len);
	rw_free(c);
}

/* write_dsync_done() -- a write the caller made synchronous (RWF_DSYNC) on
 * a direct handle whose backing file is not O_DSYNC: no FSYNC follows such
 * a write, so it is on the backing store before the reply. */
static void write_dsync_done(struct ios_req *r, ssize_t res)
{
	if (res > 0 && fdatasync(r->fd) < 0)
		res = -errno;
	write_done(r, res);
}

static void sync_done(struct ios_req *r, ssize_t res)
{
	struct rw_ctx *c = (struct rw_ctx *)r;
	int ret;

	/* the kernel's mtime, kept until the fsync had what it needed to
	 * commit (writebehind.c): applied now, it is committed later */
	if (c->in && (ret = pfs_wb_apply_mtime(c->fs, c->in, r->fd)) < 0 && res >= 0)
		res = ret;

	fuse_reply_err(c->req, res < 0 ? (int)-res : 0);
	rw_free(c);
}

/* rw_new() -- a request on @fd of @fh (NULL for directories). */
static struct rw_ctx *rw_new(fuse_req_t req, struct pfs_fh *fh, int fd, enum ios_dir dir)
{
	struct rw_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->req = req;
	c->fs = pfs_of(req);
	c->r.fd = fd;
	if (fh)
		c->r.fid = inode_fid(fh->inode);
	c->r.cls = fh ? fh_class(fh) : IOS_CLASS_OTHER;
	c->r.rel = fh ? __atomic_load_n(&fh->inode->rel, __ATOMIC_RELAXED) : NULL;
	c->in = fh ? fh->inode : NULL;
	c->r.dir = dir;
	c->r.pid = fuse_req_ctx(req)->pid;
	c->r.priv = c;
	return c;
}

/* rw_data() -- point the request at @len bytes of @buf at @off. */
static void rw_data(struct rw_ctx *c, void *buf, size_t len, off_t off)
{
	c->iov.iov_base = buf;
	c->iov.iov_len = len;
	c->r.iov = &c->iov;
	c->r.iovcnt = 1;
	c->r.off = off;
	c->r.len = len;
}

bool pfs_drop_relations(const struct pfs *fs)
{
	int set = fs->set.drop_behind;

	return set == PGIOFS_DROP_YES || (set == PGIOFS_DROP_AUTO && direct_pays(fs));
}

/* drop_behind() -- whether a transfer (@read or a write) of @size bytes at
 * @off of @fh, through the backing page cache, is not to stay there
 * (files.drop_behind): only what the kernel writes back of its page cache or
 * reads into it, so that the data is still cached once.  A relation file's
 * reads are dropped on any disk: what argues for keeping its writes on a
 * rotating one (pfs_drop_relations) is the backing page cache's writeback. */
static bool drop_behind(const struct pfs *fs, const struct pfs_fh *fh, off_t off, size_t size,
			bool read)
{
	int64_t mb = fs->set.drop_behind_other_mb;
	int set = fs->set.drop_behind;

	if (!fs->writeback || set == PGIOFS_DROP_NO || fh->how.mode != PFS_OPEN_CACHED ||
	    __atomic_load_n(&fh->inode->drop_refused, __ATOMIC_RELAXED))
		return false;
	switch (fh_class(fh)) {
	case IOS_CLASS_HEAP:
	case IOS_CLASS_INDEX:
	case IOS_CLASS_FSM:
	case IOS_CLASS_VM:
		return read || pfs_drop_relations(fs); /* reads: on any disk */
	case IOS_CLASS_OTHER:
		return mb >= 0 && (uint64_t)off + size > (uint64_t)mb << 20;
	default: /* WAL, temp files, commit status, control files */
		return false;
	}
}

static void pfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct pfs_fh *fh = fh_of(fi);
	bool direct = fh->dfd >= 0 && dio_aligned(off, size);
	struct rw_ctx *c;

	pfs_wb_wait(fh->inode); /* see acknowledged writes */
	if (!__atomic_load_n(&fh->inode->read_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&fh->inode->read_seen, true, __ATOMIC_RELEASE);
	c = rw_new(req, fh, direct ? fh->dfd : fh->fd, IOS_READ);

	if (!c || posix_memalign(&c->buf, DIO_ALIGN, size ? size : 1) != 0) {
		free(c);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rw_data(c, c->buf, size, off);
	c->r.done = read_done;
	if (!direct && drop_behind(pfs_of(req), fh, off, size, true)) {
		c->r.flags |= IOS_F_DROPBEHIND;
		c->drop = true;
	}
	submit(pfs_of(req), &c->r);
}

static void pfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_fh *fh = fh_of(fi);
	bool direct = fh->dfd >= 0 && dio_aligned(off, size), queued, early;
	bool dsync = (fi->flags & O_DSYNC) != 0;
	struct rw_ctx *c;

	refine_class(fh->inode, buf, size, off);
	pfs_space_poll(fs);
	if (!fi->writepage && fh->how.mode == PFS_OPEN_CACHED && fs->writeback && pfs_space_low(fs))
		pfs_space_write_through(fs); /* write(2) waits for it (space.c) */
	c = rw_new(req, fh, direct ? fh->dfd : fh->fd, IOS_WRITE);
	if (!c) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	c->buffered = !direct;
	/* the reply carries no attributes: drop the kernel's copy of the mode */
	if (pfs_wire_kill_suidgid() && kill_suidgid(fs, fh->fd, NULL))
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	c->r.done = write_done;
	if (!direct) /* through the backing page cache */
		c->r.serial = &fh->inode->write_lock;
	if (!direct && drop_behind(fs, fh, off, size, false)) {
		c->r.flags |= IOS_F_DROPBEHIND;
		c->drop = true;
	}
	if (dsync) /* for WAL, a commit's flush: the writeback throttle times it */
		c->r.flags |= IOS_F_DSYNC;
	/* the caller's O_DSYNC (or RWF_DSYNC): on a direct handle no FSYNC
	 * follows, so the write must be on the backing store before the reply */
	if (dsync && fh->how.mode == PFS_OPEN_DIRECT && !(fh->flags & O_DSYNC))
		c->r.done = write_dsync_done;
	pthread_rwlock_rdlock(&fs->core->ios_lock);
	queued = !ios_runs_inline(fs->core->ios, c->r.cls);
	early = acknowledge_early(fs, fh, queued, dsync);
	if (early) {
		int ret = pfs_wb_reserve(fh->fd, off, size);

		if (ret == -EOPNOTSUPP) {
			early = false;
		} else if (ret < 0) {
			pthread_rwlock_unlock(&fs->core->ios_lock);
			free(c);
			fuse_reply_err(req, -ret);
			return;
		}
	}
	if (!queued && (!direct || (uintptr_t)buf % DIO_ALIGN == 0)) {
		/* done before this handler returns: the receive buffer will do
		 * (loop.c lays it out so that a write's data is page aligned) */
		rw_data(c, (void *)buf, size, off);
	} else {
		/* a queueing scheduler keeps the data after this handler
		 * returns, or O_DIRECT needs an aligned buffer.  A large write
		 * takes the receive buffer (no copy); a small one is copied
		 * into a buffer of its own size, so a queued 8 KiB page holds
		 * 8 KiB, not a 1 MiB receive buffer, and queued memory follows
		 * the queued bytes.  A buffer that cannot be taken is copied
		 * too (O_DIRECT needs alignment).  An early acknowledged
		 * write first waits for room in the write cache. */
		bool take = (!direct || (uintptr_t)buf % DIO_ALIGN == 0) && size > WRITE_COPY_MAX;

		if (take) /* not from a ring entry (uring.c): copied */
			c->buf = pfs_loop_take_buffer(buf);
		if (early && queued) {
			c->held = c->buf ? pfs_loop_buffer_bytes() : size;
			pfs_wb_begin(fs, fh->inode, c->held, off + (off_t)size);
		}
		if (c->buf) {
			rw_data(c, (void *)buf, size, off);
		} else if (posix_memalign(&c->buf, DIO_ALIGN, size) != 0) {
			pthread_rwlock_unlock(&fs->core->ios_lock);
			if (early && queued)
				pfs_wb_end(fs, fh->inode, c->held, 0, 0);
			free(c);
			fuse_reply_err(req, ENOMEM);
			return;
		} else {
			memcpy(c->buf, buf, size);
			rw_data(c, c->buf, size, off);
		}
	}
	if (!early) {
		ios_submit(fs->core->ios, &c->r);
		pthread_rwlock_unlock(&fs->core->ios_lock);
		return;
	}
	c->req = NULL;
	c->r.done = write_behind_done;
	if (queued) {
		/* queued first: a request that follows the reply is ordered
		 * after this write */
		ios_submit(fs->core->ios, &c->r);
		fuse_reply_write(req, size);
	} else {
		/* inline: the reply first, the backing write in this worker
		 * right after; readers wait for it (pfs_wb_wait()) */
		pfs_wb_begin(fs, fh->inode, 0, off + (off_t)size);
		fuse_reply_write(req, size);
		ios_submit(fs->core->ios, &c->r);
	}
	pthread_rwlock_unlock(&fs->core->ios_lock);
}

/* submit_sync() -- fsync or fdatasync @fd through the scheduler; @own_fd:
 * it was opened for this request and is closed when it is done. */
static void submit_sync(fuse_req_t req, struct pfs_fh *fh, int fd, int datasync, bool own_fd)
{
	struct rw_ctx *c = rw_new(req, fh, fd, IOS_SYNC);

	if (!c) {
		if (own_fd)
			close(fd);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	c->close_fd = own_fd;
	c->r.flags = datasync ? IOS_F_DATASYNC : 0;
	c->r.done = sync_done;
	submit(pfs_of(req), &c->r);
}

/* sync_in_chunks() -- files.sync_chunk_kb: the dirty pages of a data file
 * reached through the backing page cache written in chunks, each waited
 * for, before its fsync: a WAL flush queued meanwhile waits behind one
 * chunk, not the whole file.  0, or the -errno of a chunk: that is the
 * fsync's answer.  A wait of sync_file_range() reports a write-back error
 * of the backing file and moves this descriptor's cursor past it (the
 * kernel's file_check_and_advance_wb_err()), so the fsync that follows
 * would find nothing: the error must not be dropped here. */
static int sync_in_chunks(const struct pfs *fs, const struct pfs_fh *fh)
{
	const unsigned flags =
	    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	off_t chunk = (off_t)fs->set.sync_chunk_kb << 10, off;
	enum ios_class cls = fh_class(fh);
	struct stat st;

	if (!chunk || fh->dfd >= 0 || fh->how.mode != PFS_OPEN_CACHED || cls == IOS_CLASS_WAL ||
	    cls == IOS_CLASS_XACT || fstat(fh->fd, &st) < 0 || st.st_size <= chunk)
		return 0;
	for (off = 0; off < st.st_size; off += chunk)
		if (sync_file_range(fh->fd, off, chunk, flags) < 0)
			return -errno;
	return 0;
}

static void pfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct pfs_fh *fh = fh_of(fi);
	int err;

	/* acknowledged writes first; an error of theirs is this fsync's */
	err = pfs_wb_err_check(fh->inode, &fh->err_cursor);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	pfs_ckpt_start(pfs_of(req), fuse_req_ctx(req)->pid, fh_class(fh));
	if (fh_class(fh) == IOS_CLASS_WAL)
		pfs_walprep_synced(pfs_of(req));
	err = sync_in_chunks(pfs_of(req), fh);
	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	submit_sync(req, fh, fh_fd(fi), datasync, false);
}

static void pfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			  struct fuse_file_info *fi)
{
	int ret;

	pfs_wb_wait(fh_of(fi)->inode);
	ret = fallocate(fh_fd(fi), mode, offset, length) < 0 ? errno : 0;
	if (ret == 0) /* to the end: collapse and insert move what follows */
		sched_invalidate(pfs_of(req), fh_of(fi)->inode, offset, 0);
	fuse_reply_err(req, ret);
}

static void pfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	off_t res = lseek(fh_fd(fi), off, whence);

	if (res < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

/* copy_file_range is not implemented on purpose: the kernel then copies
 * with READs and WRITEs through the mount, so every byte written goes
 * through iosched (its ordering, its classes, its statistics), which a
 * server-side copy on the backing store would bypass. */

/* ------------------------------------------------------------------------ */
/* directories */

/* offsets_are_positions() -- whether the directory offsets of the file
 * system of @fd count entries in a list rather than name a place that
 * stays put: a READDIR served from a fresh stream seeked to such an offset
 * skips as many names as were removed before it since the last one.  The
 * file systems whose offsets are known to be positions: overlayfs (merged
 * directories), FUSE, ramfs, SMB, and tmpfs before Linux 6.6 (which gave
 * it stable offsets). */
static bool offsets_are_positions(int fd)
{
	struct statfs sf;
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case OVERLAYFS_SUPER_MAGIC:
	case FUSE_SUPER_MAGIC:
	case RAMFS_MAGIC:
	case SMB2_SUPER_MAGIC:
	case CIFS_SUPER_MAGIC:
		return true;
	case TMPFS_MAGIC:
		return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
		       (major < 6 || (major == 6 && minor < 6));
	default:
		return false;
	}
}

struct pfs_dir {
	DIR *dp;
	struct dirent *entry; /* read but not yet returned */
	off_t offset;
};

static inline struct pfs_dir *dir_of(struct fuse_file_info *fi)
{
	return (struct pfs_dir *)(uintptr_t)fi->fh;
}

/* dir_fd() -- a descriptor of directory @ino of its own, or -errno. */
static int dir_fd(fuse_req_t req, fuse_ino_t ino)
{
	return pfs_inode_open(pfs_of(req), inode_of(req, ino), O_RDONLY | O_DIRECTORY);
}

static void pfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_dir *d;
	int fd, e;

	if (pfs_of(req)->no_opendir) {
		/* the kernel takes ENOSYS as "no opendir needed", for good: it
		 * opens this and every later directory itself (fh 0) */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = dir_fd(req, ino);
	if (fd < 0) {
		errno = -fd;
		goto err;
	}
	d->dp = fdopendir(fd);
	if (!d->dp) {
		e = errno;
		close(fd);
		errno = e;
		goto err;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	/* the listing stays in the kernel's cache across opens; the kernel
	 * drops it when the directory changes through the mount */
	fi->cache_readdir = pfs_of(req)->set.cache_readdir;
	fi->keep_cache = pfs_of(req)->set.cache_readdir;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
	return;
err:
	e = errno;
	free(d);
	fuse_reply_err(req, e);
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct pfs *fs = pfs_of(req);
	struct pfs_dir *d = dir_of(fi), own = {0};
	char *buf = malloc(size), *p = buf;
	size_t rem = size;
	int err = 0;

	if (!d) {
		/* no OPENDIR (fs->no_opendir): a stream for this request, at
		 * @offset (the d_off of the last entry the kernel has) */
		int fd = dir_fd(req, ino);

		if (fd < 0 || !(own.dp = fdopendir(fd))) {
			err = fd < 0 ? -fd : errno;
			if (fd >= 0)
				close(fd);
			free(buf);
			fuse_reply_err(req, err);
			return;
		}
		d = &own;
	}
	if (!buf) {
		if (d == &own)
			closedir(own.dp);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (offset != d->offset) {
		seekdir(d->dp, offset);
		d->entry = NULL;
		d->offset = offset;
	}
	for (;;) {
		struct fuse_entry_param e;
		const char *name;
		off_t next;
		size_t sz;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		name = d->entry->d_name;
		next = d->entry->d_off;
		if (plus) {
			if (is_dot_or_dotdot(name)) {
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			} else {
				int ret = do_lookup(fs, inode_of(req, ino), name, &e);

				if (ret == -ENOENT) { /* gone meanwhile */
					d->entry = NULL;
					d->offset = next;
					continue;
				}
				if (ret < 0) {
					err = -ret;
					break;
				}
			}
			sz = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (sz > rem) {
				if (e.ino)
					inode_forget(fs, inode_of(req, e.ino), 1);
				break;
			}
		} else {
			struct stat st;

			memset(&st, 0, sizeof(st));
			st.st_ino = d->entry->d_ino;
			st.st_mode = (mode_t)d->entry->d_type << 12;
			sz = fuse_add_direntry(req, p, rem, name, &st, next);
			if (sz > rem)
				break;
		}
		p += sz;
		rem -= sz;
		d->entry = NULL;
		d->offset = next;
	}
	/* an error can only be reported if nothing was returned yet */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
	if (d == &own)
		closedir(own.dp);
}

static void pfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, false);
}

static void pfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, true);
}

static void pfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_dir *d = dir_of(fi);

	if (d) {
		closedir(d->dp);
		free(d);
	}
	fuse_reply_err(req, 0);
}

static void pfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct pfs_dir *d = dir_of(fi);
	int fd;

	if (d) {
		submit_sync(req, NULL, dirfd(d->dp), datasync, false);
		return;
	}
	/* no OPENDIR: a descriptor of its own, closed when the sync is done */
	fd = dir_fd(req, ino);
	if (fd < 0)
		fuse_reply_err(req, -fd);
	else
		submit_sync(req, NULL, fd, datasync, true);
}

/* ------------------------------------------------------------------------ */
/* extended attributes: through /proc/self/fd for files and directories;
 * a symlink's own attributes cannot be reached from an O_PATH descriptor
 * without following it, so they are reported as unsupported. */

/* For a symlink's O_PATH descriptor the *xattr() calls on its /proc link
 * (proc_path_of()) act on the link itself, as l*xattr() would, not on what
 * it points to. */

/* xattr_off() -- with fuse.xattr = no, answer @req ENOSYS: the kernel then
 * sets no_getxattr (no_setxattr, ...) for the connection, sends no such
 * request again and answers EOPNOTSUPP itself, file_remove_privs()'s
 * security.capability included (fs/fuse/xattr.c). */
static bool xattr_off(fuse_req_t req)
{
	if (pfs_of(req)->set.xattr)
		return false;
	fuse_reply_err(req, ENOSYS);
	return true;
}

/* reply_xattr() -- answer an xattr request whose call returned @n (-errno
 * on failure): the error, the size (@size 0) or the @n bytes of @buf. */
static void reply_xattr(fuse_req_t req, size_t size, ssize_t n, const char *buf)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void pfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct pfs_inode *in = inode_of(req, ino);
	char path[64], *buf = NULL;
	ssize_t n;

	if (xattr_off(req))
		return;
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = proc_path_of(req, in, path, sizeof(path));
	if (n == 0) {
		n = getxattr(path, name, buf, size);
		if (n < 0)
			n = -errno;
		pfs_inode_fd_put(pfs_of(req), in);
	}
	reply_xattr(req, size, n, buf);
	free(buf);
}

static void pfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct pfs_inode *in = inode_of(req, ino);
	char path[64], *buf = NULL;
	ssize_t n;

	if (xattr_off(req))
		return;
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = proc_path_of(req, in, path, sizeof(path));
	if (n == 0) {
		n = listxattr(path, buf, size);
		if (n < 0)
			n = -errno;
		pfs_inode_fd_put(pfs_of(req), in);
	}
	reply_xattr(req, size, n, buf);
	free(buf);
}

static void pfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			 size_t size, int flags)
{
	struct pfs_inode *in = inode_of(req, ino);
	char path[64];
	int ret;

	if (xattr_off(req))
		return;
	ret = proc_path_of(req, in, path, sizeof(path));
	if (ret == 0) {
		ret = setxattr(path, name, value, size, flags) < 0 ? -errno : 0;
		pfs_inode_fd_put(pfs_of(req), in);
	}
	fuse_reply_err(req, -ret);
}

static void pfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct pfs_inode *in = inode_of(req, ino);
	char path[64];
	int ret;

	if (xattr_off(req))
		return;
	ret = proc_path_of(req, in, path, sizeof(path));
	if (ret == 0) {
		ret = removexattr(path, name) < 0 ? -errno : 0;
		pfs_inode_fd_put(pfs_of(req), in);
	}
	fuse_reply_err(req, -ret);
}

/* ------------------------------------------------------------------------ */
/* session */

static void pfs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct pfs *fs = userdata;
	const struct pgiofs_settings *s = &fs->set;

	pfs_open_mode_init(fs, (conn->capable & FUSE_CAP_WRITEBACK_CACHE) != 0);
	if (fs->writeback)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* with cached listings, a directory's open and release are two round
	 * trips that buy nothing: answered ENOSYS once, OPENDIR is never sent
	 * again, and the kernel keeps every listing (FOPEN_CACHE_DIR); except
	 * where offsets are positions, where a listing needs its stream */
	fs->no_opendir = s->cache_readdir && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) &&
			 !offsets_are_positions(fs->root.fd);
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
	/* ordering across the async queue is iosched's business; without
	 * it reads are not background requests, which writeback can hold up
	 * (fuse.async_read) */
	if (s->async_read)
		conn->want |= conn->capable & FUSE_CAP_ASYNC_READ;
	else
		conn->want &= ~FUSE_CAP_ASYNC_READ;
	/* pgiofs is the backing files' only writer, so a changed mtime in the
	 * attributes is our own doing, never a reason to drop the mount's
	 * cached pages of the file (without the write-back cache every write
	 * changes it: the next lseek(SEEK_END) would drop them all) */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/* locks stay local to the kernel: the backing files are ours alone */
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	conn->max_write = (unsigned)(s->max_write_kb * 1024);
	conn->max_readahead = (unsigned)(s->max_readahead_kb * 1024);
	conn->max_background = (unsigned)s->max_background;
	conn->congestion_threshold = (unsigned)(s->max_background * 3 / 4);
	conn->time_gran = (unsigned)s->time_gran_ns;
}

static void pfs_destroy(void *userdata)
{
	(void)userdata;
}

const struct fuse_lowlevel_ops pfs_ops = {
    .init = pfs_init,
    .destroy = pfs_destroy,
    .lookup = pfs_lookup,
    .forget = pfs_forget,
    .forget_multi = pfs_forget_multi,
    .getattr = pfs_getattr,
    .setattr = pfs_setattr,
    .readlink = pfs_readlink,
    .mknod = pfs_mknod,
    .mkdir = pfs_mkdir,
    .unlink = pfs_unlink,
    .rmdir = pfs_rmdir,
    .symlink = pfs_symlink,
    .rename = pfs_rename,
    .link = pfs_link,
    .open = pfs_open,
    .read = pfs_read,
    .write = pfs_write,
    .flush = pfs_flush,
    .release = pfs_release,
    .fsync = pfs_fsync,
    .opendir = pfs_opendir,
    .readdir = pfs_readdir,
    .readdirplus = pfs_readdirplus,
    .releasedir = pfs_releasedir,
    .fsyncdir = pfs_fsyncdir,
    .statfs = pfs_statfs,
    .setxattr = pfs_setxattr,
    .getxattr = pfs_getxattr,
    .listxattr = pfs_listxattr,
    .removexattr = pfs_removexattr,
    .access = pfs_access,
    .create = pfs_create,
    .fallocate = pfs_fallocate,
    .lseek = pfs_lseek,
};
