/*
 * inode.c -- the inode table of a connection: every backing object the
 * kernel knows, by the node id it was given (the struct pfs_inode's
 * address), with the kernel's lookup count; and how the daemon reaches each
 * object (its descriptor).
 *
 * What must stay true:
 *   - An inode is in its connection's table from the reply that first names
 *     it until the kernel's FORGETs bring its lookup count to 0, and then
 *     stays only if the caller's keep() says so (fs.c keeps an inode whose
 *     file holds a write error no fsync has reported); it is freed only
 *     once out of the table, by the caller, after pfs_inode_release().
 *   - A node id never meets a reused inode: every inode holds an O_PATH
 *     descriptor of its backing object for its whole life, so the backing
 *     inode number cannot be reused while the kernel still uses our node
 *     id, and (st_dev, st_ino) names one object in the table.
 *   - A descriptor handed out by pfs_inode_fd() stays open until the
 *     matching pfs_inode_fd_put().
 *   - Lock order: a table's lock, then nothing of this file (keep() may
 *     take the inode's own locks).
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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define TAB_INITIAL 1024 /* hash buckets at first (a power of two) */

static size_t hash_of(const struct pfs *fs, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev;

	return (size_t)(h ^ (h >> 29)) & (fs->tabsize - 1);
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
			size_t h = hash_of(fs, in->dev, in->ino);

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

	for (in = fs->tab[hash_of(fs, key->dev, key->ino)]; in; in = in->hnext)
		if (in->ino == key->ino && in->dev == key->dev)
			return in;
	return NULL;
}

/* unhash__() -- take @in out of the table; caller holds fs->lock. */
static void unhash__(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs_inode **pp;

	for (pp = &fs->tab[hash_of(fs, in->dev, in->ino)]; *pp; pp = &(*pp)->hnext)
		if (*pp == in) {
			*pp = in->hnext;
			fs->count--;
			return;
		}
}

int pfs_inodes_init(struct pfs *fs, const char *backing)
{
	struct stat st;

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
	fs->root.dev = st.st_dev;
	fs->root.ino = st.st_ino;
	fs->root.fmt = S_IFDIR;
	fs->root.nlookup = 2; /* never freed */
	fs->tab[hash_of(fs, st.st_dev, st.st_ino)] = &fs->root;
	fs->count = 1;
	return 0;
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

void pfs_inodes_destroy(struct pfs *fs)
{
	if (!fs->tab)
		return;
	free(fs->tab);
	fs->tab = NULL;
	if (fs->root.fd >= 0)
		close(fs->root.fd);
	fs->root.fd = -1;
	pthread_mutex_destroy(&fs->lock);
}

int pfs_inode_key(struct pfs *fs, int fd, const struct stat *st, struct pfs_ikey *key)
{
	(void)fs;
	(void)fd;
	key->dev = st->st_dev;
	key->ino = st->st_ino;
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
	if (in && fd >= 0)
		close(fd);
	return in;
}

struct pfs_inode *pfs_inode_add(struct pfs *fs, const struct pfs_ikey *key, int fd,
				struct pfs_inode *fresh)
{
	struct pfs_inode *in;
	size_t h;

	pthread_mutex_lock(&fs->lock);
	in = find__(fs, key);
	if (in) { /* added by another lookup meanwhile */
		in->nlookup++;
		pthread_mutex_unlock(&fs->lock);
		close(fd);
		return in;
	}
	fresh->dev = key->dev;
	fresh->ino = key->ino;
	fresh->fd = fd;
	fresh->nlookup = 1;
	h = hash_of(fs, key->dev, key->ino);
	fresh->hnext = fs->tab[h];
	fs->tab[h] = fresh;
	if (++fs->count > fs->tabsize * 2)
		table_grow__(fs);
	pthread_mutex_unlock(&fs->lock);
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

void pfs_inode_release(struct pfs *fs, struct pfs_inode *in)
{
	(void)fs;
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

int pfs_inode_fd(struct pfs *fs, struct pfs_inode *in)
{
	(void)fs;
	return in->fd;
}

void pfs_inode_fd_put(struct pfs *fs, struct pfs_inode *in)
{
	(void)fs;
	(void)in;
}

int pfs_inode_open(struct pfs *fs, struct pfs_inode *in, int flags)
{
	char path[64];
	int fd = pfs_inode_fd(fs, in), ret;

	if (fd < 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = open(path, flags | O_CLOEXEC);
	if (ret < 0)
		ret = -errno;
	pfs_inode_fd_put(fs, in);
	return ret;
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
			"per file the kernel knows and per open file: start it as root, which "
			"raises the limit to fs.nr_open, or with a higher hard limit)",
			strerror(err), (unsigned long long)rl.rlim_cur);
}
