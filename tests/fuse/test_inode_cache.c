/*
 * test_inode_cache.c -- the descriptor cache of inodes identified by file
 * handles (fuse/inode.c) stays within files.inode_fds: inodes added by
 * lookups, descriptors taken and given back (pfs_inode_fd/_put), files
 * opened from them (pfs_inode_open), in a fixed order and then in a seeded
 * random one.  After every step that leaves nothing pinned, the cache holds
 * at most its limit and the process no more descriptors than the limit
 * above what it had before the inodes; at the end every descriptor is
 * closed.  Needs file handles: root (CAP_DAC_READ_SEARCH) and a directory
 * on a file system that exports them (TMPDIR, default /var/tmp); skips (77)
 * otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgiofs_i.h"

#define NFILES 64
#define LIMIT  8
#define STEPS  20000

static struct pfs *fs;
static struct pfs_inode *inodes[NFILES];
static char dir[PATH_MAX];
static int base_fds;

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d) {
		perror("opendir /proc/self/fd");
		exit(1);
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

static const char *step;

/* check_bound() -- nothing pinned now: the cache within its limit. */
static void check_bound(void)
{
	struct pfs_inode_counters n;
	int fds = open_fds();

	pfs_inodes_counters(fs, &n);
	if (n.cached > LIMIT || fds > base_fds + LIMIT) {
		fprintf(stderr,
			"after %s: %llu descriptors cached, %d open beyond the %d before the "
			"inodes; the limit is %d\n",
			step, (unsigned long long)n.cached, fds - base_fds, base_fds, LIMIT);
		exit(1);
	}
}

/* lookup() -- the inode of file @i, as a LOOKUP makes or finds it. */
static struct pfs_inode *lookup(int i)
{
	char name[32];
	struct pfs_ikey key;
	struct stat st;
	struct pfs_inode *in, *fresh;
	int fd, ret;

	snprintf(name, sizeof(name), "f%d", i);
	fd = openat(fs->root.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s/%s: %s\n", dir, name, strerror(errno));
		exit(1);
	}
	ret = pfs_inode_key(fs, fd, &st, &key);
	if (ret < 0 || key.mnt < 0) {
		fprintf(stderr, "%s/%s: no file handle (%s)\n", dir, name,
			ret < 0 ? strerror(-ret) : "none");
		exit(1);
	}
	in = pfs_inode_find(fs, &key, fd);
	if (in)
		return in;
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		perror("calloc");
		exit(1);
	}
	fresh->fmt = S_IFREG;
	in = pfs_inode_add(fs, &key, fd, fresh);
	if (in != fresh) {
		fprintf(stderr, "%s/%s: pfs_inode_add failed\n", dir, name);
		exit(1);
	}
	return in;
}

static int take(int i)
{
	int fd = pfs_inode_fd(fs, inodes[i]);

	if (fd < 0) {
		fprintf(stderr, "pfs_inode_fd of f%d: %s\n", i, strerror(-fd));
		exit(1);
	}
	return fd;
}

static void reopen(int i)
{
	int fd = pfs_inode_open(fs, inodes[i], O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "pfs_inode_open of f%d: %s\n", i, strerror(-fd));
		exit(1);
	}
	close(fd);
}

static void cleanup(void)
{
	char path[PATH_MAX + 32];
	int i;

	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	struct pfs_inode_counters n;
	unsigned seed = 12345;
	char path[PATH_MAX + 32];
	int i, k, fd;

	snprintf(dir, sizeof(dir), "%s/pgiofs-inode-cache.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
		return 1;
	}
	atexit(cleanup);
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return 1;
		}
		close(fd);
	}

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return 1;
	fs->core = fs;
	fs->set.inode_handles = PGIOFS_HANDLES_AUTO;
	fs->set.inode_fds = LIMIT;
	if (pfs_inodes_init(fs, dir) < 0) {
		fprintf(stderr, "pfs_inodes_init %s failed\n", dir);
		return 1;
	}
	pfs_inodes_counters(fs, &n);
	if (!n.handles) {
		printf("skip: no file handles in %s: %s\n", dir, n.note);
		return 77;
	}
	if (n.limit != LIMIT) {
		printf("skip: the open-files limit caps the cache at %llu, not %d\n",
		       (unsigned long long)n.limit, LIMIT);
		return 77;
	}
	base_fds = open_fds();

	/* Fixed order.  Looked up one after the other: the first ones'
	 * descriptors are evicted.  Then f0's is taken again (opened from
	 * its handle while the list holds others), the most recent one is
	 * taken and given back, and more are looked up: each must still
	 * evict the least recently used. */
	step = "the first lookups";
	for (i = 0; i < 2 * LIMIT; i++) {
		inodes[i] = lookup(i);
		check_bound();
	}
	step = "f0 opened from its handle";
	take(0);
	pfs_inode_fd_put(fs, inodes[0]);
	check_bound();
	step = "the most recent one taken again";
	take(2 * LIMIT - 1);
	pfs_inode_fd_put(fs, inodes[2 * LIMIT - 1]);
	check_bound();
	step = "the other lookups";
	for (i = 2 * LIMIT; i < NFILES; i++) {
		inodes[i] = lookup(i);
		check_bound();
	}

	/* Seeded random order: one or two descriptors pinned at once, files
	 * opened, lookups of known files (their descriptor given to the
	 * cache). */
	for (k = 0; k < STEPS; k++) {
		int a = rand_r(&seed) % NFILES, b = rand_r(&seed) % NFILES;

		switch (rand_r(&seed) % 4) {
		case 0:
			step = "a descriptor taken and given back";
			take(a);
			pfs_inode_fd_put(fs, inodes[a]);
			break;
		case 1:
			step = "two descriptors taken at once";
			take(a);
			take(b);
			pfs_inode_fd_put(fs, inodes[b]);
			pfs_inode_fd_put(fs, inodes[a]);
			break;
		case 2:
			step = "a file opened";
			reopen(a);
			break;
		default:
			step = "a lookup of a known file";
			if (lookup(a) != inodes[a]) {
				fprintf(stderr, "f%d: another inode on a second lookup\n", a);
				return 1;
			}
			pfs_inode_forget(fs, inodes[a], 1, NULL);
			break;
		}
		check_bound();
	}
	pfs_inodes_counters(fs, &n);
	if (n.evictions == 0 || n.misses == 0 || n.hits == 0) {
		fprintf(stderr, "the steps missed a path: %llu hits, %llu misses, %llu evictions\n",
			(unsigned long long)n.hits, (unsigned long long)n.misses,
			(unsigned long long)n.evictions);
		return 1;
	}

	for (i = 0; i < NFILES; i++) {
		if (!pfs_inode_forget(fs, inodes[i], 1, NULL)) {
			fprintf(stderr, "f%d: still referenced after its last forget\n", i);
			return 1;
		}
		pfs_inode_release(fs, inodes[i]);
		free(inodes[i]);
	}
	pfs_inodes_counters(fs, &n);
	if (n.cached != 0 || open_fds() != base_fds) {
		fprintf(stderr, "every inode released: %llu cached, %d descriptors left open\n",
			(unsigned long long)n.cached, open_fds() - base_fds);
		return 1;
	}
	pfs_inodes_destroy(fs);
	free(fs);
	printf("ok: %d steps over %d files, at most %d descriptors cached\n", STEPS, NFILES, LIMIT);
	return 0;
}
