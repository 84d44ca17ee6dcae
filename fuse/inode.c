/*
 * inode.c -- the inode table of a connection: every backing object the
 * kernel knows, by the node id it was given (the struct pfs_inode's
 * address), with the kernel's lookup count; and how the daemon reaches each
 * object: a file handle and a bounded cache of descriptors, or a
 * descriptor of its own.
 *
 * Identity.  Where it can (files.inode_handles), an inode is identified by
 * the file handle of its backing object (name_to_handle_at(2)): (st_dev,
 * handle type, handle bytes), the handle naming the object's inode number
 * and generation on its file system.  The daemon then holds no descriptor
 * per inode: an O_PATH descriptor is opened from the handle
 * (open_by_handle_at(2), on a descriptor of the object's mount) when a
 * request needs one, and kept in the daemon's descriptor cache, at most
 * files.inode_fds of them for all connections, the least recently used
 * closed first.  Handles need CAP_DAC_READ_SEARCH (open_by_handle_at) and
 * a file system with export support (ext4, xfs, btrfs, tmpfs; not
 * overlayfs without nfs_export, not FUSE): without them, or on a file
 * system of the tree that gives none, an inode holds an O_PATH descriptor
 * for its life, keyed by (st_dev, st_ino), as before handles.
 *
 * What must stay true:
 *   - An inode is in its connection's table from the reply that first names
 *     it until the kernel's FORGETs bring its lookup count to 0, and then
 *     stays only if the caller's keep() says so (fs.c keeps an inode whose
 *     file holds a write error no fsync has reported); it is freed only
 *     once out of the table, by the caller, after pfs_inode_release().
 *   - A node id never meets a reused inode.  An inode with a handle is
 *     found only by its handle, and a backing inode number reused after an
 *     unlink comes with another generation, so another handle: the new
 *     object gets an inode (a node id) of its own, and the old handle
 *     opens nothing (ESTALE) rather than the new object.  An inode without
 *     a handle holds its descriptor for its life, so its backing inode
 *     number cannot be reused while the kernel uses its node id.  What is
 *     keyed by (st_dev, st_ino) elsewhere (the scheduler's readahead and
 *     ordering of a file) exists only while an open file's descriptor holds
 *     the backing inode, whose number cannot be reused meanwhile.
 *   - A descriptor handed out by pfs_inode_fd() stays open until the
 *     matching pfs_inode_fd_put() (a pinned descriptor is never evicted);
 *     the cache holds at most its limit of unpinned descriptors, plus
 *     those pinned by requests under way.
 *   - Lock order: a table's lock, then an inode's own locks (keep()), then
 *     the cache's lock.  Nothing is closed under the cache's lock (the last
 *     close of an unlinked file frees its blocks).
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#ifndef AT_HANDLE_MNT_ID_UNIQUE
#define AT_HANDLE_MNT_ID_UNIQUE 0x001 /* Linux 6.12: a 64-bit id never reused */
#endif

#define TAB_INITIAL 1024 /* hash buckets at first (a power of two) */
#define MAX_MOUNTS  64	 /* mounts of the backing tree with handles */
#define MAX_NODEVS  16	 /* file systems of the tree without handles */
#define EVICT_BATCH 8	 /* descriptors closed after one unlock at most */

/* A mount of the backing tree that objects' handles were met on. */
struct pfs_mnt {
	uint64_t id; /* as name_to_handle_at() reports it */
	int fd;	     /* a directory on it (open_by_handle_at() refuses an O_PATH
		      * one), or -1: no handles on this mount */
};

/* The daemon's descriptors of backing objects (the core connection's,
 * shared by its WAL mounts). */
struct pfs_fdcache {
	pthread_mutex_t lock;
	/* set at start, then read without the lock */
	bool handles;	 /* inodes are identified by handles where they can be */
	bool unique_ids; /* AT_HANDLE_MNT_ID_UNIQUE is known to the kernel */
	char note[256];	 /* !handles: why */
	size_t limit;	 /* unpinned cached descriptors at most */
	/* under lock */
	size_t cached;		     /* descriptors of inodes with handles, open now */
	struct pfs_inode *mru, *lru; /* the unpinned ones, most recently used first */
	uint64_t hits, misses, opens, evictions, stale;
	struct pfs_mnt mnts[MAX_MOUNTS];
	dev_t nodevs[MAX_NODEVS]; /* file systems that refused a handle */
	/* atomics */
	size_t nmnts, nnodevs; /* entries published (stored with release) */
	uint64_t inodes, held; /* inodes in every table; descriptors they hold */
};

/* ---- handles ------------------------------------------------------------ */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

/* hash_ids() -- the hash of an inode without a handle. */
static uint64_t hash_ids(dev_t dev, ino_t ino)
{
	return mix((uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev);
}

/* hash_handle() -- the hash of an inode with handle @fh on file system
 * @dev (FNV-1a over the handle, mixed). */
static uint64_t hash_handle(dev_t dev, const struct file_handle *fh)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)dev;
	unsigned i;

	h = (h ^ (uint32_t)fh->handle_type) * 0x100000001b3ull;
	for (i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 0x100000001b3ull;
	return mix(h);
}

static bool same_handle(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

static inline struct pfs_fdcache *cache_of(const struct pfs *fs)
{
	return fs->core->fdc;
}

/* nodev() -- whether file system @dev refused a handle before. */
static bool nodev(struct pfs_fdcache *c, dev_t dev)
{
	size_t i, n = __atomic_load_n(&c->nnodevs, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (c->nodevs[i] == dev)
			return true;
	return false;
}

/* note_nodev() -- file system @dev, met at @fd, gives no handles: its
 * objects hold a descriptor each (said once). */
static void note_nodev(struct pfs_fdcache *c, dev_t dev, int fd, int err)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	pthread_mutex_lock(&c->lock);
	if (nodev(c, dev) || c->nnodevs == MAX_NODEVS) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->nodevs[c->nnodevs] = dev;
	__atomic_store_n(&c->nnodevs, c->nnodevs + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->lock);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	log_msg(LOG_NOTICE,
		"the file system of \"%s\" (device %u:%u) gives no file handles (%s): its files "
		"each hold a descriptor while the kernel knows them",
		path, major(dev), minor(dev), strerror(err));
}

/* get_handle() -- the handle of the object of @fd into @fh (room for
 * MAX_HANDLE_SZ bytes), its mount's id into @mnt_id.  0 or -errno. */
static int get_handle(const struct pfs_fdcache *c, int fd, struct file_handle *fh, uint64_t *mnt_id)
{
	int id = 0;

	fh->handle_bytes = MAX_HANDLE_SZ;
	if (c->unique_ids) {
		if (name_to_handle_at(fd, "", fh, (int *)(void *)mnt_id,
				      AT_EMPTY_PATH | AT_HANDLE_MNT_ID_UNIQUE) < 0)
			return -errno;
		return 0;
	}
	if (name_to_handle_at(fd, "", fh, &id, AT_EMPTY_PATH) < 0)
		return -errno;
	*mnt_id = (uint64_t)(unsigned)id;
	return 0;
}

/* probe_mount() -- whether handles of the mount of directory @dirfd (an
 * O_PATH descriptor) can be opened: @fh, its handle, opens it again on a
 * descriptor of that directory.  That descriptor (>= 0) or -errno. */
static int probe_mount(int dirfd, const struct stat *st, struct file_handle *fh)
{
	char path[64];
	struct stat st2;
	int mfd, fd, ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	mfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	fd = open_by_handle_at(mfd, fh, O_PATH | O_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	if (ret == 0 &&
	    (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino))
		ret = -ESTALE; /* not the object: no use */
	if (fd >= 0)
		close(fd);
	if (ret < 0) {
		close(mfd);
		return ret;
	}
	return mfd;
}

/* mount_index() -- the index in c->mnts of mount @id, met at @fd (of
 * attributes @st, handle @fh), registered if new; -1 if objects there get
 * no handles. */
static int mount_index(struct pfs_fdcache *c, uint64_t id, int fd, const struct stat *st,
		       struct file_handle *fh)
{
	size_t i, n = __atomic_load_n(&c->nmnts, __ATOMIC_ACQUIRE);
	bool added = false;
	int mfd;

	for (i = 0; i < n; i++)
		if (c->mnts[i].id == id)
			return c->mnts[i].fd >= 0 ? (int)i : -1;
	/* a mount met for the first time is a mount point (a directory) met
	 * below the backing root, or a file mounted on its own: that file
	 * keeps a descriptor */
	mfd = S_ISDIR(st->st_mode) ? probe_mount(fd, st, fh) : -ENOTDIR;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->nmnts; i++)
		if (c->mnts[i].id == id)
			break;
	if (i == c->nmnts && i < MAX_MOUNTS) {
		c->mnts[i].id = id;
		c->mnts[i].fd = mfd >= 0 ? mfd : -1;
		__atomic_store_n(&c->nmnts, i + 1, __ATOMIC_RELEASE);
		added = true;
	}
	pthread_mutex_unlock(&c->lock);
	if (i == MAX_MOUNTS) {
		if (mfd >= 0)
			close(mfd);
		return -1;
	}
	if (!added && mfd >= 0)
		close(mfd); /* another lookup registered the mount meanwhile */
	if (added && mfd < 0)
		log_msg(
		    LOG_NOTICE,
		    "a mount inside the backing directory (id %" PRIu64 ") cannot open file "
		    "handles (%s): its files each hold a descriptor while the kernel knows them",
		    id, strerror(-mfd));
	return c->mnts[i].fd >= 0 ? (int)i : -1;
}

/* ---- the cache ------------------------------------------------------------ */

static void lru_unlink__(struct pfs_fdcache *c, struct pfs_inode *in)
{
	if (in->lru_prev)
		in->lru_prev->lru_next = in->lru_next;
	else
		c->mru = in->lru_next;
	if (in->lru_next)
		in->lru_next->lru_prev = in->lru_prev;
	else
		c->lru = in->lru_prev;
	in->lru_prev = in->lru_next = NULL;
}

static void lru_push__(struct pfs_fdcache *c, struct pfs_inode *in)
{
	in->lru_prev = NULL;
	in->lru_next = c->mru;
	if (c->mru)
		c->mru->lru_prev = in;
	else
		c->lru = in;
	c->mru = in;
}

/* evict__() -- close the least recently used unpinned descriptors over
 * the limit: they go into @out (EVICT_BATCH at most), for the caller to
 * close once unlocked.  Returns how many. */
static size_t evict__(struct pfs_fdcache *c, int *out)
{
	size_t n = 0;

	while (c->cached > c->limit && c->lru && n < EVICT_BATCH) {
		struct pfs_inode *in = c->lru;

		lru_unlink__(c, in);
		out[n++] = in->fd;
		in->fd = -1;
		c->cached--;
		c->evictions++;
	}
	return n;
}

static void close_all(const int *fds, size_t n)
{
	while (n--)
		close(fds[n]);
}

/* cache_fill() -- @fd (consumed), an O_PATH descriptor of @in's object,
 * becomes its cached one unless it has one. */
static void cache_fill(struct pfs_fdcache *c, struct pfs_inode *in, int fd)
{
	int out[EVICT_BATCH + 1];
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	if (in->fd >= 0) {
		out[n++] = fd;
	} else {
		in->fd = fd;
		c->cached++;
		if (!in->fd_pins)
			lru_push__(c, in);
		n = evict__(c, out);
	}
	pthread_mutex_unlock(&c->lock);
	close_all(out, n);
}

size_t pfs_inodes_shed(struct pfs *fs)
{
	struct pfs_fdcache *c = cache_of(fs);
	size_t n, all = 0;
	int out[EVICT_BATCH];

	if (!c->handles)
		return 0;
	do {
		size_t keep;

		pthread_mutex_lock(&c->lock);
		keep = c->limit;
		c->limit = 0; /* evict__() down to the pinned ones */
		n = evict__(c, out);
		c->limit = keep;
		pthread_mutex_unlock(&c->lock);
		close_all(out, n);
		all += n;
	} while (n == EVICT_BATCH);
	return all;
}

/* open_handle() -- open_by_handle_at() of @in with @flags; on EMFILE the
 * cache gives back its unused descriptors and it is tried once more.  A
 * descriptor, or -errno. */
static int open_handle(struct pfs *fs, struct pfs_inode *in, int flags)
{
	struct pfs_fdcache *c = cache_of(fs);
	int fd = open_by_handle_at(c->mnts[in->mnt].fd, in->fh, flags | O_CLOEXEC);

	if (fd < 0 && errno == EMFILE && pfs_inodes_shed(fs))
		fd = open_by_handle_at(c->mnts[in->mnt].fd, in->fh, flags | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ESTALE)
		__atomic_add_fetch(&c->stale, 1, __ATOMIC_RELAXED);
	return -errno;
}

/* pin__() -- one more user of @in's cached descriptor (it has one). */
static void pin__(struct pfs_fdcache *c, struct pfs_inode *in)
{
	if (in->fd_pins++ == 0)
		lru_unlink__(c, in);
}

int pfs_inode_fd(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs_fdcache *c = cache_of(fs);
	int out[EVICT_BATCH + 1], fd;
	size_t n = 0;

	if (in->fd_held)
		return in->fd;
	pthread_mutex_lock(&c->lock);
	if (in->fd >= 0) {
		pin__(c, in);
		c->hits++;
		fd = in->fd;
		pthread_mutex_unlock(&c->lock);
		return fd;
	}
	c->misses++;
	pthread_mutex_unlock(&c->lock);
	fd = open_handle(fs, in, O_PATH);
	if (fd < 0) {
		pfs_inode_out_of_fds(-fd);
		return fd;
	}
	pthread_mutex_lock(&c->lock);
	if (in->fd >= 0) { /* opened by another request meanwhile */
		out[n++] = fd;
		fd = in->fd;
		pin__(c, in);
	} else {
		/* pinned from the start: never on the list, so not unlinked
		 * from it (unlinking an inode that is not on the list would
		 * empty the list's ends, and the cache would lose track of
		 * every descriptor on it and evict none of them again) */
		in->fd = fd;
		c->cached++;
		in->fd_pins++;
	}
	n += evict__(c, out + n);
	pthread_mutex_unlock(&c->lock);
	close_all(out, n);
	return fd;
}

void pfs_inode_fd_put(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs_fdcache *c = cache_of(fs);
	int out[EVICT_BATCH];
	size_t n = 0;

	if (in->fd_held)
		return;
	pthread_mutex_lock(&c->lock);
	if (--in->fd_pins == 0) {
		lru_push__(c, in);
		n = evict__(c, out);
	}
	pthread_mutex_unlock(&c->lock);
	close_all(out, n);
}

int pfs_inode_open(struct pfs *fs, struct pfs_inode *in, int flags)
{
	struct pfs_fdcache *c = cache_of(fs);
	char path[64];
	int fd = -1, ret;

	if (!in->fd_held) {
		/* a cached descriptor, else straight from the handle: an O_PATH
		 * descriptor opened only to be reopened would cost a call */
		pthread_mutex_lock(&c->lock);
		if (in->fd >= 0) {
			pin__(c, in);
			c->hits++;
			fd = in->fd;
		} else {
			c->opens++;
		}
		pthread_mutex_unlock(&c->lock);
		if (fd < 0)
			return open_handle(fs, in, flags);
	} else {
		fd = in->fd;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = open(path, flags | O_CLOEXEC);
	if (ret < 0 && errno == EMFILE && pfs_inodes_shed(fs))
		ret = open(path, flags | O_CLOEXEC);
	if (ret < 0)
		ret = -errno;
	pfs_inode_fd_put(fs, in);
	return ret;
}

/* ---- the table ------------------------------------------------------------ */

static uint64_t hash_in(const struct pfs_inode *in)
{
	return in->fh ? hash_handle(in->dev, in->fh) : hash_ids(in->dev, in->ino);
}

/* table_grow__() -- double the table; caller holds fs->lock. */
static void table_grow__(struct pfs *fs)
{
	size_t newsize = fs->tabsize * 2, i;
	struct pfs_inode **nt = calloc(newsize, sizeof(*nt));
	struct pfs_inode **old = fs->tab, *in, *next;
	size_t oldsize = fs->tabsize;

	if (!nt)
		return; /* keep the longer chains */
	fs->tab = nt;
	fs->tabsize = newsize;
	for (i = 0; i < oldsize; i++)
		for (in = old[i]; in; in = next) {
			size_t h = (size_t)hash_in(in) & (newsize - 1);

			next = in->hnext;
			in->hnext = nt[h];
			nt[h] = in;
		}
	free(old);
}

/* find__() -- the inode of @key, or NULL; caller holds fs->lock. */
static struct pfs_inode *find__(struct pfs *fs, const struct pfs_ikey *key)
{
	struct pfs_inode *in;

	for (in = fs->tab[key->hash & (fs->tabsize - 1)]; in; in = in->hnext) {
		if (in->dev != key->dev)
			continue;
		if (key->mnt >= 0 ? in->fh && same_handle(in->fh, &key->u.fh)
				  : !in->fh && in->ino == key->ino)
			return in;
	}
	return NULL;
}

/* hash__() -- put @in (with its key's @hash) into the table; caller holds
 * fs->lock. */
static void hash__(struct pfs *fs, struct pfs_inode *in, uint64_t hash)
{
	size_t h = (size_t)hash & (fs->tabsize - 1);

	in->hnext = fs->tab[h];
	fs->tab[h] = in;
	if (++fs->count > fs->tabsize * 2)
		table_grow__(fs);
}

/* unhash__() -- take @in out of the table; caller holds fs->lock. */
static void unhash__(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs_inode **pp;

	for (pp = &fs->tab[hash_in(in) & (fs->tabsize - 1)]; *pp; pp = &(*pp)->hnext)
		if (*pp == in) {
			*pp = in->hnext;
			fs->count--;
			return;
		}
}

int pfs_inode_key(struct pfs *fs, int fd, const struct stat *st, struct pfs_ikey *key)
{
	struct pfs_fdcache *c = cache_of(fs);
	uint64_t id = 0;
	int ret;

	key->dev = st->st_dev;
	key->ino = st->st_ino;
	key->mnt = -1;
	key->hash = hash_ids(st->st_dev, st->st_ino);
	if (!c->handles || nodev(c, st->st_dev))
		return 0;
	ret = get_handle(c, fd, &key->u.fh, &id);
	if (ret == -EOPNOTSUPP || ret == -EOVERFLOW) { /* this file system: never */
		note_nodev(c, st->st_dev, fd, -ret);
		return 0;
	}
	if (ret < 0)
		return ret;
	key->mnt = mount_index(c, id, fd, st, &key->u.fh);
	if (key->mnt >= 0)
		key->hash = hash_handle(st->st_dev, &key->u.fh);
	return 0;
}

struct pfs_inode *pfs_inode_find(struct pfs *fs, const struct pfs_ikey *key, int fd)
{
	struct pfs_inode *in;

	pthread_mutex_lock(&fs->lock);
	in = find__(fs, key);
	if (in)
		in->nlookup++;
	pthread_mutex_unlock(&fs->lock);
	if (in && fd >= 0) {
		if (in->fd_held)
			close(fd);
		else
			cache_fill(cache_of(fs), in, fd);
	}
	return in;
}

struct pfs_inode *pfs_inode_add(struct pfs *fs, const struct pfs_ikey *key, int fd,
				struct pfs_inode *fresh)
{
	struct pfs_fdcache *c = cache_of(fs);
	struct file_handle *fh = NULL;
	struct pfs_inode *in;

	if (key->mnt >= 0) {
		size_t len = sizeof(*fh) + key->u.fh.handle_bytes;

		fh = malloc(len);
		if (!fh) {
			close(fd);
			return NULL;
		}
		memcpy(fh, &key->u.fh, len);
	}
	pthread_mutex_lock(&fs->lock);
	in = find__(fs, key);
	if (in) { /* added by another lookup meanwhile */
		in->nlookup++;
		pthread_mutex_unlock(&fs->lock);
		free(fh);
		if (in->fd_held)
			close(fd);
		else
			cache_fill(c, in, fd);
		return in;
	}
	fresh->dev = key->dev;
	fresh->ino = key->ino;
	fresh->nlookup = 1;
	fresh->fh = fh;
	fresh->mnt = key->mnt;
	fresh->fd = -1;
	fresh->fd_held = !fh;
	if (fresh->fd_held) {
		fresh->fd = fd;
		__atomic_add_fetch(&c->held, 1, __ATOMIC_RELAXED);
	}
	hash__(fs, fresh, key->hash);
	pthread_mutex_unlock(&fs->lock);
	__atomic_add_fetch(&c->inodes, 1, __ATOMIC_RELAXED);
	if (!fresh->fd_held)
		cache_fill(c, fresh, fd);
	return fresh;
}

bool pfs_inode_forget(struct pfs *fs, struct pfs_inode *in, uint64_t n,
		      bool (*keep)(struct pfs *fs, struct pfs_inode *in))
{
	if (in == &fs->root)
		return false;
	pthread_mutex_lock(&fs->lock);
	if (n > in->nlookup) {
		log_msg(LOG_ERR, "forget of %" PRIu64 " on inode %ju with %" PRIu64 " lookups", n,
			(uintmax_t)in->ino, in->nlookup);
		n = in->nlookup;
	}
	in->nlookup -= n;
	if (in->nlookup || (keep && keep(fs, in))) {
		pthread_mutex_unlock(&fs->lock);
		return false;
	}
	unhash__(fs, in);
	pthread_mutex_unlock(&fs->lock);
	return true;
}

struct pfs_inode *pfs_inode_take_any(struct pfs *fs)
{
	struct pfs_inode *in = NULL;
	size_t i;

	if (!fs->tab)
		return NULL;
	pthread_mutex_lock(&fs->lock);
	for (i = 0; i < fs->tabsize && !in; i++)
		for (in = fs->tab[i]; in && in == &fs->root; in = in->hnext)
			;
	if (in)
		unhash__(fs, in);
	pthread_mutex_unlock(&fs->lock);
	return in;
}

size_t pfs_inodes_files(struct pfs *fs, struct pfs_inode_ref **out)
{
	struct pfs_inode_ref *r;
	struct pfs_inode *in;
	size_t i, n = 0;

	*out = NULL;
	if (!fs->tab)
		return 0;
	pthread_mutex_lock(&fs->lock);
	r = malloc((fs->count + 1) * sizeof(*r));
	for (i = 0; r && i < fs->tabsize; i++)
		for (in = fs->tab[i]; in && n <= fs->count; in = in->hnext)
			if (in->fmt == S_IFREG &&
			    __atomic_load_n(&in->cls, __ATOMIC_RELAXED) != IOS_CLASS_WAL) {
				r[n].id = (fuse_ino_t)(uintptr_t)in;
				r[n++].open = __atomic_load_n(&in->nopen, __ATOMIC_RELAXED) > 0;
			}
	pthread_mutex_unlock(&fs->lock);
	*out = r;
	return n;
}

void pfs_inode_release(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs_fdcache *c = cache_of(fs);
	int fd = -1;

	if (in->fd_held) {
		fd = in->fd;
		if (fd >= 0)
			__atomic_sub_fetch(&c->held, 1, __ATOMIC_RELAXED);
	} else if (in->fh) {
		pthread_mutex_lock(&c->lock);
		if (in->fd >= 0) {
			if (!in->fd_pins)
				lru_unlink__(c, in);
			c->cached--;
			fd = in->fd;
		}
		pthread_mutex_unlock(&c->lock);
	}
	if (in->fh || in->fd_held) /* it was in a table */
		__atomic_sub_fetch(&c->inodes, 1, __ATOMIC_RELAXED);
	in->fd = -1;
	free(in->fh);
	in->fh = NULL;
	if (fd >= 0)
		close(fd);
}

/* ---- start and end ------------------------------------------------------------ */

/* cache_limit() -- files.inode_fds, but no more than a quarter of the
 * open-files limit: the rest is for open files. */
static size_t cache_limit(int64_t set)
{
	struct rlimit rl;
	size_t limit = (size_t)set;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < limit)
		limit = (size_t)(rl.rlim_cur / 4);
	return limit ? limit : 1;
}

/* decide() -- whether @c identifies inodes by handles: files.inode_handles
 * (@set) allows it and a handle of the backing root @fd (attributes @st)
 * opens again.  Registers the root's mount.  Else why in c->note. */
static void decide(struct pfs_fdcache *c, int set, int fd, const struct stat *st)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	uint64_t id = 0;
	int ret, mfd;

	if (set == PGIOFS_HANDLES_NO) {
		snprintf(c->note, sizeof(c->note), "files.inode_handles = no");
		return;
	}
	c->unique_ids = true;
	ret = get_handle(c, fd, &u.fh, &id);
	if (ret == -EINVAL) { /* before Linux 6.12: the mount ids that may be reused */
		c->unique_ids = false;
		ret = get_handle(c, fd, &u.fh, &id);
	}
	if (ret == -EOPNOTSUPP || ret == -EOVERFLOW) {
		snprintf(c->note, sizeof(c->note),
			 "the backing file system gives no file handles (no export support)");
		return;
	}
	if (ret < 0) {
		snprintf(c->note, sizeof(c->note),
			 "name_to_handle_at() of the backing directory: %s", strerror(-ret));
		return;
	}
	mfd = probe_mount(fd, st, &u.fh);
	if (mfd == -EPERM) {
		snprintf(c->note, sizeof(c->note),
			 "the daemon lacks CAP_DAC_READ_SEARCH, which open_by_handle_at() needs");
		return;
	}
	if (mfd < 0) {
		snprintf(c->note, sizeof(c->note),
			 "open_by_handle_at() of the backing directory: %s", strerror(-mfd));
		return;
	}
	c->mnts[0].id = id;
	c->mnts[0].fd = mfd;
	c->nmnts = 1;
	c->handles = true;
}

int pfs_inodes_init(struct pfs *fs, const char *backing)
{
	struct pfs_fdcache *c;
	struct pfs_ikey key;
	struct stat st;
	int ret;

	pthread_mutex_init(&fs->lock, NULL);
	fs->tabsize = TAB_INITIAL;
	fs->tab = calloc(fs->tabsize, sizeof(*fs->tab));
	if (!fs->tab)
		return -ENOMEM;
	fs->root.fd = open(backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root.fd < 0)
		return -errno;
	if (fstat(fs->root.fd, &st) < 0)
		return -errno;
	if (fs->core == fs) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		pthread_mutex_init(&c->lock, NULL);
		c->limit = cache_limit(fs->set.inode_fds);
		decide(c, fs->set.inode_handles, fs->root.fd, &st);
		fs->fdc = c;
	}
	c = cache_of(fs);
	ret = pfs_inode_key(fs, fs->root.fd, &st, &key);
	if (ret < 0)
		return ret;
	if (key.mnt >= 0) {
		size_t len = sizeof(struct file_handle) + key.u.fh.handle_bytes;

		fs->root.fh = malloc(len);
		if (!fs->root.fh)
			return -ENOMEM;
		memcpy(fs->root.fh, &key.u.fh, len);
	}
	fs->root.mnt = key.mnt;
	fs->root.dev = st.st_dev;
	fs->root.ino = st.st_ino;
	fs->root.fmt = S_IFDIR;
	fs->root.fd_held = true; /* the root keeps its descriptor */
	fs->root.nlookup = 2;	 /* never freed */
	hash__(fs, &fs->root, key.hash);
	__atomic_add_fetch(&c->held, 1, __ATOMIC_RELAXED);
	return 0;
}

void pfs_inodes_destroy(struct pfs *fs)
{
	struct pfs_fdcache *c = fs->fdc;
	size_t i;

	if (fs->tab) {
		free(fs->tab);
		fs->tab = NULL;
		pthread_mutex_destroy(&fs->lock);
	}
	if (fs->root.fd >= 0) {
		close(fs->root.fd);
		if (fs->core && cache_of(fs))
			__atomic_sub_fetch(&cache_of(fs)->held, 1, __ATOMIC_RELAXED);
	}
	fs->root.fd = -1;
	free(fs->root.fh);
	fs->root.fh = NULL;
	if (!c)
		return;
	for (i = 0; i < c->nmnts; i++)
		if (c->mnts[i].fd >= 0)
			close(c->mnts[i].fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	fs->fdc = NULL;
}

/* ---- what is said of it ------------------------------------------------------------ */

void pfs_inodes_counters(struct pfs *fs, struct pfs_inode_counters *out)
{
	struct pfs_fdcache *c = cache_of(fs);

	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->handles = c->handles;
	snprintf(out->note, sizeof(out->note), "%s", c->note);
	out->limit = c->limit;
	out->setting = (uint64_t)fs->core->set.inode_fds;
	pthread_mutex_lock(&c->lock);
	out->cached = c->cached;
	out->hits = c->hits;
	out->misses = c->misses;
	out->opens = c->opens;
	out->evictions = c->evictions;
	pthread_mutex_unlock(&c->lock);
	out->stale = __atomic_load_n(&c->stale, __ATOMIC_RELAXED);
	out->inodes = __atomic_load_n(&c->inodes, __ATOMIC_RELAXED);
	out->held = __atomic_load_n(&c->held, __ATOMIC_RELAXED);
}

void pfs_inodes_describe(struct pfs *fs, char *buf, size_t len)
{
	struct pfs_inode_counters n;
	struct rlimit rl;

	pfs_inodes_counters(fs, &n);
	if (n.handles) {
		snprintf(buf, len,
			 "inodes identified by file handles, at most %" PRIu64
			 " descriptors cached (files.inode_fds%s)",
			 n.limit,
			 n.limit < n.setting ? ", capped at a quarter of the open-files limit"
					     : "");
		return;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_cur = 0;
	snprintf(buf, len,
		 "every inode the kernel knows holds a descriptor (%s): files known and open at "
		 "once are limited by the open-files limit, %llu",
		 n.note, (unsigned long long)rl.rlim_cur);
}

void pfs_inode_out_of_fds(int err)
{
	static _Atomic time_t said;
	time_t now = time(NULL), last = atomic_load(&said);
	struct rlimit rl;

	if ((err != EMFILE && err != ENFILE) || now - last < 60 ||
	    !atomic_compare_exchange_strong(&said, &last, now))
		return;
	if (err == ENFILE || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_msg(LOG_ERR, "out of file descriptors: %s (the system's limit, fs.file-max)",
			strerror(err));
	else
		log_msg(LOG_ERR,
			"out of file descriptors: %s (the daemon's limit is %llu; pgiofs holds one "
			"per open file, and per file the kernel knows where inodes have no file "
			"handles (pgiofs stat says whether they do): start it as root, which "
			"raises the limit to fs.nr_open, or with a higher hard limit)",
			strerror(err), (unsigned long long)rl.rlim_cur);
}
