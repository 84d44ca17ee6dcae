/*
 * floorfs.c -- the least a FUSE passthrough can do, to measure the floor
 * under pgiofs: what the kernel's requests cost when the daemon does
 * nothing with them but the backing call.  bench/relations.sh mounts it as
 * its "floor" and "floornoopen" sides, bench/passthrough.sh --floorfs as a
 * reference cell (with pg_wal outside it).  A floor for the cost of the
 * requests a workload makes (opens, lookups, syncs), not for moving data,
 * which pgiofs does its own way (write-behind, drop-behind, its queue).
 * Not a product: no scheduling, no classification, no error keeping, no
 * limits on descriptors (an O_PATH descriptor per inode the kernel knows),
 * no extended attributes.
 *
 * Usage: floorfs [--noopen] SOURCE MOUNTPOINT
 * It mounts like pgiofs does (write-back cache, default_permissions,
 * allow_other, day-long entry and attribute timeouts, 60 s negative
 * entries, FLUSH refused once), serves in the background with libfuse's
 * multi-threaded loop, and exits at unmount.  --noopen answers ENOSYS to
 * the first OPEN and CREATE: the kernel then sends no OPEN, CREATE (a
 * MKNOD instead) or RELEASE on the connection, and reads, writes and syncs
 * come with no handle; they are served from the inode's descriptor,
 * reopened read-write at its first use (one descriptor per inode either
 * way).
 *
 * Built by the scripts that use it (cc ... -lfuse3).
 */
#define FUSE_USE_VERSION 312
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define TIMEOUT	    86400.0
#define NEG_TIMEOUT 60.0
#define NBUCKETS    (1u << 18)

struct node {
	struct node *next; /* hash chain, under lock */
	int fd;		   /* O_PATH, or with --noopen once used for I/O, iofd */
	int iofd;	   /* --noopen: fd, once reopened read-write; or -1 */
	dev_t dev;
	ino_t ino;
	uint64_t nlookup; /* under lock */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *table[NBUCKETS];
static struct node root;
static bool noopen;

static struct node *node_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &root : (struct node *)(uintptr_t)ino;
}

static unsigned bucket(dev_t dev, ino_t ino)
{
	return (unsigned)((ino * 0x9E3779B97F4A7C15ull) ^ dev) & (NBUCKETS - 1);
}

static void proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* lookup_at() -- the entry of @name in @parent: the node found or made,
 * with one more lookup counted; a negative entry for a missing name */
static int lookup_at(struct node *parent, const char *name, struct fuse_entry_param *e)
{
	struct node *n;
	unsigned b;
	int fd;

	memset(e, 0, sizeof(*e));
	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			e->entry_timeout = NEG_TIMEOUT; /* ino 0: a negative entry */
			return 0;
		}
		return -errno;
	}
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	b = bucket(e->attr.st_dev, e->attr.st_ino);
	pthread_mutex_lock(&lock);
	for (n = table[b]; n; n = n->next)
		if (n->dev == e->attr.st_dev && n->ino == e->attr.st_ino)
			break;
	if (n) {
		n->nlookup++;
		pthread_mutex_unlock(&lock);
		close(fd);
	} else {
		n = calloc(1, sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&lock);
			close(fd);
			return -ENOMEM;
		}
		n->fd = fd;
		n->iofd = -1;
		n->dev = e->attr.st_dev;
		n->ino = e->attr.st_ino;
		n->nlookup = 1;
		n->next = table[b];
		table[b] = n;
		pthread_mutex_unlock(&lock);
	}
	e->ino = (fuse_ino_t)(uintptr_t)n;
	e->attr_timeout = TIMEOUT;
	e->entry_timeout = TIMEOUT;
	return 0;
}

static void reply_entry(fuse_req_t req, struct node *parent, const char *name)
{
	struct fuse_entry_param e;
	int err = lookup_at(parent, name, &e);

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void forget_one(fuse_ino_t ino, uint64_t count)
{
	struct node *n = node_of(ino), **p;

	if (n == &root)
		return;
	pthread_mutex_lock(&lock);
	n->nlookup -= count < n->nlookup ? count : n->nlookup;
	if (n->nlookup) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (p = &table[bucket(n->dev, n->ino)]; *p != n; p = &(*p)->next)
		;
	*p = n->next;
	pthread_mutex_unlock(&lock);
	close(n->fd); /* iofd, if any, is the same number */
	free(n);
}

/* io_fd() -- the descriptor a read, write or sync works on.  With
 * --noopen, the node's own: its O_PATH descriptor is reopened read-write
 * (or read-only) at the first use, in place (dup2() swaps the file behind
 * the number at once, so a request using the number meanwhile has one or
 * the other, both the same inode), so a node holds one descriptor either
 * way. */
static int io_fd(fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	char path[64];
	int fd;

	if (!noopen)
		return (int)fi->fh;
	pthread_mutex_lock(&lock);
	if (n->iofd < 0) {
		proc_path(path, sizeof(path), n->fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup3(fd, n->fd, O_CLOEXEC);
			close(fd);
			n->iofd = n->fd;
		}
	}
	fd = n->iofd;
	pthread_mutex_unlock(&lock);
	return fd;
}

/* as_caller() / as_daemon() -- new files are the caller's, as natively */
static void as_caller(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	setfsgid(c->gid);
	setfsuid(c->uid);
}

static void as_daemon(void)
{
	setfsuid(0);
	setfsgid(0);
}

static void ff_init(void *data, struct fuse_conn_info *conn)
{
	if (conn->capable & FUSE_CAP_WRITEBACK_CACHE)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
}

static void ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_entry(req, node_of(parent), name);
}

static void ff_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(ino, nlookup);
	fuse_reply_none(req);
}

static void ff_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
	for (size_t i = 0; i < count; i++)
		forget_one(f[i].ino, f[i].nlookup);
	fuse_reply_none(req);
}

static void ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	if (fstatat(node_of(ino)->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, TIMEOUT);
}

static void ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	char path[64];
	int res = 0;

	proc_path(path, sizeof(path), n->fd);
	if (to_set & FUSE_SET_ATTR_MODE)
		res = chmod(path, attr->st_mode);
	if (!res && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		res = fchownat(n->fd, "", (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1,
			       (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1,
			       AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (!res && (to_set & FUSE_SET_ATTR_SIZE)) {
		if (fi || noopen) {
			res = ftruncate(io_fd(ino, fi), attr->st_size);
		} else {
			res = truncate(path, attr->st_size);
		}
	}
	if (!res && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};

		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		res = utimensat(AT_FDCWD, path, tv, 0);
	}
	if (res < 0)
		fuse_reply_err(req, errno);
	else
		ff_getattr(req, ino, fi);
}

static void ff_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	int res;

	as_caller(req);
	res = S_ISDIR(mode) ? mkdirat(node_of(parent)->fd, name, mode)
			    : mknodat(node_of(parent)->fd, name, mode, rdev);
	as_daemon();
	if (res < 0)
		fuse_reply_err(req, errno);
	else
		reply_entry(req, node_of(parent), name);
}

static void ff_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	ff_mknod(req, parent, name, mode | S_IFDIR, 0);
}

static void ff_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	int res;

	as_caller(req);
	res = symlinkat(link, node_of(parent)->fd, name);
	as_daemon();
	if (res < 0)
		fuse_reply_err(req, errno);
	else
		reply_entry(req, node_of(parent), name);
}

static void ff_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	char path[64];

	proc_path(path, sizeof(path), node_of(ino)->fd);
	if (linkat(AT_FDCWD, path, node_of(parent)->fd, name, AT_SYMLINK_FOLLOW) < 0)
		fuse_reply_err(req, errno);
	else
		reply_entry(req, node_of(parent), name);
}

static void ff_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[4096];
	ssize_t n = readlinkat(node_of(ino)->fd, "", buf, sizeof(buf) - 1);

	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

static void ff_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, unlinkat(node_of(parent)->fd, name, 0) < 0 ? errno : 0);
}

static void ff_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, unlinkat(node_of(parent)->fd, name, AT_REMOVEDIR) < 0 ? errno : 0);
}

static void ff_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	int res = renameat2(node_of(parent)->fd, name, node_of(newparent)->fd, newname, flags);

	fuse_reply_err(req, res < 0 ? errno : 0);
}

/* open_flags() -- the backing open's flags: read-write under the write-back
 * cache (the kernel reads pages of files opened write-only), no O_APPEND
 * (the kernel gives every write its offset) */
static int open_flags(int flags)
{
	flags &= ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY | O_APPEND | O_DIRECT);
	if ((flags & O_ACCMODE) == O_WRONLY)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	return flags | O_CLOEXEC;
}

static void ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	char path[64];
	int fd;

	if (noopen) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	proc_path(path, sizeof(path), node_of(ino)->fd);
	fd = open(path, open_flags(fi->flags));
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		close(fd);
}

static void ff_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int fd, err;

	if (noopen) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	as_caller(req);
	fd = openat(node_of(parent)->fd, name,
		    open_flags(fi->flags) | O_CREAT | (fi->flags & O_EXCL), mode);
	err = fd < 0 ? errno : 0;
	as_daemon();
	if (fd < 0) {
		fuse_reply_err(req, err);
		return;
	}
	err = lookup_at(node_of(parent), name, &e);
	if (err) {
		close(fd);
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		close(fd);
}

static void ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, ENOSYS); /* never again on this connection */
}

static void ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = io_fd(ino, fi);
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void ff_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			 struct fuse_file_info *fi)
{
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	ssize_t res;

	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = io_fd(ino, fi);
	out.buf[0].pos = off;
	res = fuse_buf_copy(&out, in, 0);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = io_fd(ino, fi);
	int res = datasync ? fdatasync(fd) : fsync(fd);

	fuse_reply_err(req, res < 0 ? errno : 0);
}

static void ff_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	fuse_reply_err(req, fallocate(io_fd(ino, fi), mode, off, len) < 0 ? errno : 0);
}

static void ff_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd = openat(node_of(ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) == -ENOENT)
		closedir(d);
}

static void ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	DIR *d = (DIR *)(uintptr_t)fi->fh;
	char *buf = malloc(size), *p = buf;
	size_t left = size;
	struct dirent *de;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	seekdir(d, off);
	while ((de = readdir(d))) {
		struct stat st = {.st_ino = de->d_ino, .st_mode = (mode_t)de->d_type << 12};
		size_t n = fuse_add_direntry(req, p, left, de->d_name, &st, de->d_off);

		if (n > left)
			break;
		p += n;
		left -= n;
	}
	fuse_reply_buf(req, buf, size - left);
	free(buf);
}

static void ff_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	closedir((DIR *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void ff_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = dirfd((DIR *)(uintptr_t)fi->fh);

	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}

static void ff_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	if (fstatvfs(node_of(ino)->fd, &st) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &st);
}

static const struct fuse_lowlevel_ops ops = {
    .init = ff_init,
    .lookup = ff_lookup,
    .forget = ff_forget,
    .forget_multi = ff_forget_multi,
    .getattr = ff_getattr,
    .setattr = ff_setattr,
    .readlink = ff_readlink,
    .mknod = ff_mknod,
    .mkdir = ff_mkdir,
    .symlink = ff_symlink,
    .link = ff_link,
    .unlink = ff_unlink,
    .rmdir = ff_rmdir,
    .rename = ff_rename,
    .open = ff_open,
    .create = ff_create,
    .release = ff_release,
    .flush = ff_flush,
    .read = ff_read,
    .write_buf = ff_write_buf,
    .fsync = ff_fsync,
    .fallocate = ff_fallocate,
    .opendir = ff_opendir,
    .readdir = ff_readdir,
    .releasedir = ff_releasedir,
    .fsyncdir = ff_fsyncdir,
    .statfs = ff_statfs,
};

int main(int argc, char **argv)
{
	char *fargv[] = {argv[0], "-o",
			 "allow_other,default_permissions,fsname=floorfs,subtype=floorfs", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	struct stat st;
	int a = 1, ret;

	if (argc > 1 && strcmp(argv[1], "--noopen") == 0) {
		noopen = true;
		a++;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: floorfs [--noopen] SOURCE MOUNTPOINT\n");
		return 2;
	}
	root.fd = open(argv[a], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root.fd < 0 || fstat(root.fd, &st) < 0) {
		fprintf(stderr, "floorfs: %s: %s\n", argv[a], strerror(errno));
		return 1;
	}
	root.iofd = -1;
	root.dev = st.st_dev;
	root.ino = st.st_ino;
	root.nlookup = 2;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	if (fuse_session_mount(se, argv[a + 1]) != 0) {
		fuse_session_destroy(se);
		return 1;
	}
	if (fuse_daemonize(0) != 0) {
		fuse_session_unmount(se);
		fuse_session_destroy(se);
		return 1;
	}
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, 10);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return ret ? 1 : 0;
}
