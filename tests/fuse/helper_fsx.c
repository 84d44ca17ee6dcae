/*
 * helper_fsx.c -- seeded randomized differential test: apply the same random
 * file operations to two directory trees and require the same results.
 *
 * Usage: helper_fsx --seed S --ops N [--batch B] [--names plain|pg] [--verbose]
 *                   DIR_A DIR_B
 *        helper_fsx --compare DIR_A DIR_B
 *
 * DIR_A is the reference (a plain directory), DIR_B the tree under test (a
 * pgiofs mount); both must start empty.  Each operation -- open, close,
 * pwrite, pread, ftruncate, fallocate, fsync, fdatasync, fstat, create,
 * unlink, mkdir, rmdir, rename/renameat2, link, symlink, truncate, stat,
 * readdir, chmod, xattrs, copy_file_range, posix_fadvise, sync_file_range --
 * runs on both sides and must return the same value and errno; reads must
 * return the same bytes.  Up to NSLOT descriptors stay open across
 * operations (as PostgreSQL keeps its files open), so writes go to renamed,
 * replaced and unlinked files too; some are O_DIRECT (aligned transfers).
 * After every batch of B operations (default 100) and at the end, the two
 * trees are compared: names, types, modes, owners, sizes, link counts, which
 * names are hard links of each other, symlink targets, xattrs (a symlink's
 * own too) and contents.
 *
 * What must stay true:
 *   - The operation sequence is a function of the seed only (splitmix64), so
 *     a failure is reproduced by rerunning with the same seed; results never
 *     steer the generator.
 *   - Names come from a small fixed set so operations collide and often fail
 *     (EEXIST, ENOENT, ENOTDIR, EISDIR, ENOTEMPTY...); --names pg makes them
 *     those of a PostgreSQL data directory (pgiofs treats those files by
 *     class) and first creates its directories; symlink targets are
 *     relative and never contain "..", so nothing outside DIR_A/DIR_B is
 *     ever touched.
 *   - Only semantics are compared: never inode numbers, st_blocks or times.
 *
 * On the first mismatch it prints the seed, the operation number, the
 * operation and both results, then the operations before it, and exits 1.
 * Exit 0: all equal; 2: usage or setup error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/falloc.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#define KiB	      1024L
#define MiB	      (1024L * 1024L)
#define MAX_IO	      (300 * KiB) /* largest write/read of one operation */
#define MAX_FILE      (2 * MiB)	  /* offsets are kept below this */
#define NSLOT	      6		  /* descriptors kept open across operations */
#define HISTORY	      24	  /* operations shown before a mismatch */
#define DESC_MAX      256
#define DEFAULT_BATCH 100

/* The name space: every path operation picks from these.  Each kind of
 * operation mostly uses names of its kind (files for create, directories for
 * mkdir) so the tree grows a few levels deep, and sometimes any name. */
struct names {
	const char *const *file, *const *dir, *const *link, *const *target, *const *list;
	long nfile, ndir, nlink, ntarget, nlist;
};
#define N(a) (long)(sizeof(a) / sizeof(a[0]))
#define NAMES(f, d, l, t, r)                                                                       \
	{                                                                                          \
		f, d, l, t, r, N(f), N(d), N(l), N(t), N(r)                                        \
	}

/* --names plain */
static const char *const file_paths[] = {
    "f0", "f1", "f2", "d0/f0", "d0/f1", "d1/f0", "d0/d0/f0", "d1/d1/f1",
};
static const char *const dir_paths[] = {"d0", "d1", "d0/d0", "d1/d1", "d0/d1"};
static const char *const link_paths[] = {"l0", "l1", "d0/l0"};
/* Symlink targets: relative, without "..": they resolve inside the tree. */
static const char *const targets[] = {"f0", "f1", "d0", "d0/f1", "nowhere", "l0", "f2", "d1/f0"};
/* Directories readdir looks at. */
static const char *const dirs[] = {".", "d0", "d1", "d0/d0", "d1/d1", "d0/d1"};

/* --names pg: a PostgreSQL data directory, so that pgiofs classifies the
 * files (relation forks, WAL, commit log, temp files) and takes its
 * per-class paths, such as O_DIRECT on the backing files. */
static const char *const pg_file_paths[] = {
    "base/1/16384",
    "base/1/16384.1",
    "base/1/16384_fsm",
    "base/1/16385_vm",
    "base/1/pg_filenode.map",
    "pg_wal/000000010000000000000001",
    "pg_wal/xlogtemp.42",
    "pg_xact/0000",
    "base/pgsql_tmp/pgsql_tmp7.0",
    "global/pg_control",
    "global/1260",
};
static const char *const pg_dir_paths[] = {
    "base", "base/1", "pg_wal", "pg_xact", "base/pgsql_tmp", "global", "pg_wal/archive_status",
};
static const char *const pg_link_paths[] = {"pg_tblspc", "base/1/16386", "pg_wal/l"};
static const char *const pg_targets[] = {"base",    "16384",   "pg_wal",
					 "1/16384", "nowhere", "pg_xact"};
static const char *const pg_dirs[] = {".", "base", "base/1", "pg_wal", "pg_xact", "global"};

static const struct names plain_names = NAMES(file_paths, dir_paths, link_paths, targets, dirs);
static const struct names pg_names =
    NAMES(pg_file_paths, pg_dir_paths, pg_link_paths, pg_targets, pg_dirs);
static const struct names *names = &plain_names; /* --names */

enum kind { ANY, FILE_NAME, DIR_NAME, LINK_NAME };

static const mode_t modes[] = {0644, 0600, 0755, 0444, 0640, 0700};

/* ------------------------------------------------------------------------ */
/* state */

struct side {
	const char *root;
	int dfd; /* O_DIRECTORY descriptor of the root */
};

struct slot {
	bool used;
	int fd[2];
	int flags;
	char path[48];
};

struct result {
	long r;
	int e;
};

static struct side side[2];
static struct slot slots[NSLOT];
static uint64_t rng;
static uint64_t seed;
static long opno;
static long batch = DEFAULT_BATCH;
static bool verbose;
static bool compare_only; /* --compare: no operations, no seed */
static char history[HISTORY][DESC_MAX];
static char compare_desc[DESC_MAX];
static const char *cur_desc = ""; /* what is running: an op or a comparison */
static char *buf[2];		  /* read buffers, one per side */
static char *wbuf;		  /* write data */

/* per-operation statistics for the summary */
enum op {
	OP_OPEN,
	OP_CLOSE,
	OP_PWRITE,
	OP_PREAD,
	OP_FTRUNCATE,
	OP_FALLOCATE,
	OP_FSYNC,
	OP_FDATASYNC,
	OP_FSTAT,
	OP_CREATE,
	OP_UNLINK,
	OP_MKDIR,
	OP_RMDIR,
	OP_RENAME,
	OP_LINK,
	OP_SYMLINK,
	OP_TRUNCATE,
	OP_STAT,
	OP_READDIR,
	OP_CHMOD,
	OP_XATTR,
	OP_COPY,
	OP_ADVISE,
	NOPS
};
static const char *const op_names[NOPS] = {
    "open",    "close",	    "pwrite", "pread",		 "ftruncate",	"fallocate",
    "fsync",   "fdatasync", "fstat",  "create",		 "unlink",	"mkdir",
    "rmdir",   "rename",    "link",   "symlink",	 "truncate",	"stat",
    "readdir", "chmod",	    "xattr",  "copy_file_range", "fadvise/sfr",
};
/* relative frequency of each operation */
static const int op_weight[NOPS] = {
    [OP_OPEN] = 12,	[OP_CLOSE] = 6,	   [OP_PWRITE] = 18,   [OP_PREAD] = 12,	 [OP_FTRUNCATE] = 4,
    [OP_FALLOCATE] = 5, [OP_FSYNC] = 3,	   [OP_FDATASYNC] = 3, [OP_FSTAT] = 3,	 [OP_CREATE] = 5,
    [OP_UNLINK] = 7,	[OP_MKDIR] = 5,	   [OP_RMDIR] = 5,     [OP_RENAME] = 7,	 [OP_LINK] = 4,
    [OP_SYMLINK] = 4,	[OP_TRUNCATE] = 3, [OP_STAT] = 3,      [OP_READDIR] = 3, [OP_CHMOD] = 2,
    [OP_XATTR] = 4,	[OP_COPY] = 2,	   [OP_ADVISE] = 3,
};
static long stat_ok[NOPS], stat_err[NOPS];

/* ------------------------------------------------------------------------ */
/* randomness (splitmix64) */

static uint64_t next64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* rnd() -- uniform in [0, n). */
static long rnd(long n)
{
	return n <= 1 ? 0 : (long)(next64() % (uint64_t)n);
}

static bool chance(int percent)
{
	return rnd(100) < percent;
}

/* pick_path() -- a name of that kind 3 times out of 4, else any name. */
static const char *pick_path(enum kind k)
{
	const struct names *n = names;

	if (k == ANY || chance(25)) {
		long x = rnd(n->nfile + n->ndir + n->nlink);

		if (x < n->nfile)
			return n->file[x];
		x -= n->nfile;
		return x < n->ndir ? n->dir[x] : n->link[x - n->ndir];
	}
	if (k == FILE_NAME)
		return n->file[rnd(n->nfile)];
	if (k == DIR_NAME)
		return n->dir[rnd(n->ndir)];
	return n->link[rnd(n->nlink)];
}

/* align_direct() -- O_DIRECT transfers use 4 KiB-aligned offsets and
 * lengths (the buffers are aligned too): FUSE does not enforce the backing
 * device's alignment, so unaligned O_DIRECT is not compared. */
#define DIO_ALIGN 4096
static void align_direct(int flags, off_t *off, size_t *len)
{
	if (!(flags & O_DIRECT))
		return;
	*off -= *off % DIO_ALIGN;
	*len = (*len + DIO_ALIGN - 1) / DIO_ALIGN * DIO_ALIGN;
}

/* pick_offset() -- mostly inside the first MiB, often page-aligned. */
static off_t pick_offset(void)
{
	switch (rnd(10)) {
	case 0:
	case 1:
	case 2:
	case 3:
		return rnd(MiB);
	case 4:
	case 5:
	case 6:
		return rnd(MiB / 8192) * 8192;
	case 7:
	case 8:
		return rnd(16 * KiB);
	default:
		return MiB + rnd(MiB / 2);
	}
}

static size_t pick_len(void)
{
	switch (rnd(10)) {
	case 0:
	case 1:
	case 2:
		return 1 + rnd(512);
	case 3:
	case 4:
		return 8192;
	case 5:
		return MAX_IO;
	default:
		return 1 + rnd(MAX_IO);
	}
}

/* ------------------------------------------------------------------------ */
/* reporting */

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static void fmt_result(char *out, size_t len, struct result r)
{
	if (r.r < 0)
		snprintf(out, len, "-1 %s", ename(r.e));
	else
		snprintf(out, len, "%ld", r.r);
}

static void show_history(void)
{
	long last = cur_desc == compare_desc ? opno : opno - 1;
	long first = last - HISTORY + 2;

	if (first < 1)
		first = 1;
	fprintf(stdout, "operations before it:\n");
	for (long i = first; i <= last; i++)
		fprintf(stdout, "  op %ld: %s\n", i, history[i % HISTORY]);
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void mismatch(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	if (compare_only)
		printf("MISMATCH (--compare)\n");
	else
		printf("MISMATCH seed=%llu op=%ld: %s\n", (unsigned long long)seed, opno, cur_desc);
	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n  (A = %s, B = %s)\n", side[0].root, side[1].root);
	if (compare_only)
		exit(1);
	show_history();
	printf("reproduce: helper_fsx --seed %llu --ops %ld --batch %ld --names %s --verbose "
	       "DIR_A DIR_B\n",
	       (unsigned long long)seed, opno, batch, names == &pg_names ? "pg" : "plain");
	fflush(stdout);
	exit(1);
}

/* begin() -- record the description of the operation about to run. */
static void begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void begin(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(history[opno % HISTORY], DESC_MAX, fmt, ap);
	va_end(ap);
	cur_desc = history[opno % HISTORY];
}

/* check() -- both sides must agree; count and optionally print the result. */
static void check(enum op op, struct result a, struct result b)
{
	char ra[64], rb[64];

	fmt_result(ra, sizeof(ra), a);
	fmt_result(rb, sizeof(rb), b);
	if (a.r != b.r || (a.r < 0 && a.e != b.e))
		mismatch("results differ: A %s, B %s", ra, rb);
	if (a.r < 0)
		stat_err[op]++;
	else
		stat_ok[op]++;
	if (verbose)
		printf("op %ld: %s = %s\n", opno, history[opno % HISTORY], ra);
}

/* BOTH(res, expr) -- evaluate expr for i = 0 (A) and 1 (B) into res[i]. */
#define BOTH(res, expr)                                                                            \
	do {                                                                                       \
		for (int i = 0; i < 2; i++) {                                                      \
			errno = 0;                                                                 \
			(res)[i].r = (long)(expr);                                                 \
			(res)[i].e = (res)[i].r < 0 ? errno : 0;                                   \
		}                                                                                  \
	} while (0)

static const char *flags_str(int flags)
{
	static char s[128];
	int acc = flags & O_ACCMODE;

	snprintf(s, sizeof(s), "%s%s%s%s%s%s%s%s",
		 acc == O_RDONLY   ? "O_RDONLY"
		 : acc == O_WRONLY ? "O_WRONLY"
				   : "O_RDWR",
		 flags & O_CREAT ? "|O_CREAT" : "", flags & O_EXCL ? "|O_EXCL" : "",
		 flags & O_TRUNC ? "|O_TRUNC" : "", flags & O_APPEND ? "|O_APPEND" : "",
		 flags & O_DIRECTORY ? "|O_DIRECTORY" : "", flags & O_NOFOLLOW ? "|O_NOFOLLOW" : "",
		 flags & O_DIRECT ? "|O_DIRECT" : "");
	return s;
}

static const char *slot_str(int k)
{
	static char s[2][80];
	static int which;

	which ^= 1;
	snprintf(s[which], sizeof(s[which]), "slot%d[%s %s]", k, slots[k].path,
		 flags_str(slots[k].flags));
	return s[which];
}

/* ------------------------------------------------------------------------ */
/* tree comparison */

struct seen {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

struct walk {
	struct seen *v;
	size_t n, cap;
};

/* first_name() -- the first path of this inode seen in the walk (hard links). */
static const char *first_name(struct walk *w, const struct stat *st, const char *rel)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].dev == st->st_dev && w->v[i].ino == st->st_ino)
			return w->v[i].path;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->v = realloc(w->v, w->cap * sizeof(*w->v));
		if (!w->v)
			exit(2);
	}
	w->v[w->n].dev = st->st_dev;
	w->v[w->n].ino = st->st_ino;
	snprintf(w->v[w->n].path, PATH_MAX, "%s", rel);
	return w->v[w->n++].path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* list_names() -- sorted entry names of a directory (without . and ..);
 * returns the count or -errno. */
static long list_names(int dfd, const char *rel, char ***out)
{
	int fd = openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return (long)n;
}

static void free_names(char **v, long n)
{
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* read_all() -- whole content of a regular file; returns size or -errno. */
static long read_all(int dfd, const char *rel, char **out)
{
	int fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW);
	size_t cap = 256 * KiB, len = 0;
	char *b;

	*out = NULL;
	if (fd < 0)
		return -errno;
	/* drop clean cached pages: the comparison should read the filesystem */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	b = malloc(cap);
	for (;;) {
		ssize_t n;

		if (len == cap)
			b = realloc(b, cap *= 2);
		n = read(fd, b + len, cap - len);
		if (n < 0) {
			int e = errno;

			free(b);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = b;
	return (long)len;
}

/* xattr_list() -- "name=value;..." of an inode's xattrs, sorted by name. */
static char *xattr_list(int dfd, const char *rel)
{
	char path[PATH_MAX], list[4096], *v[64], *out;
	ssize_t n;
	int k = 0;
	size_t cap = 1, len = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, rel);
	n = llistxattr(path, list, sizeof(list));
	if (n < 0) {
		if (asprintf(&out, "(llistxattr: %s)", ename(errno)) < 0)
			exit(2);
		return out;
	}
	for (ssize_t i = 0; i < n && k < 64; i += (ssize_t)strlen(list + i) + 1)
		v[k++] = list + i;
	qsort(v, k, sizeof(*v), cmp_str);
	out = calloc(1, cap);
	for (int i = 0; i < k; i++) {
		char val[512];
		ssize_t vl = lgetxattr(path, v[i], val, sizeof(val));
		size_t need = strlen(v[i]) + 2 * sizeof(val) + 32;

		if (len + need >= cap)
			out = realloc(out, cap = 2 * (len + need));
		len += (size_t)sprintf(out + len, "%s=", v[i]);
		if (vl < 0)
			len += (size_t)sprintf(out + len, "(%s)", ename(errno));
		for (ssize_t j = 0; j < vl; j++)
			len += (size_t)sprintf(out + len, "%02x", (unsigned char)val[j]);
		out[len++] = ';';
		out[len] = 0;
	}
	return out;
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "file";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "fifo";
	}
	return "other";
}

/* compare_node() -- compare one path (and below it) between the two trees. */
static void compare_node(const char *rel, struct walk w[2], int depth)
{
	struct stat st[2];
	const char *q = *rel ? rel : ".";

	for (int i = 0; i < 2; i++) {
		if (fstatat(side[i].dfd, q, &st[i], AT_SYMLINK_NOFOLLOW) < 0)
			mismatch("tree: lstat \"%s\" fails on %s: %s", q, i ? "B" : "A",
				 ename(errno));
	}
	if ((st[0].st_mode & S_IFMT) != (st[1].st_mode & S_IFMT))
		mismatch("tree: \"%s\" is a %s in A, a %s in B", q, type_name(st[0].st_mode),
			 type_name(st[1].st_mode));
	if ((st[0].st_mode & 07777) != (st[1].st_mode & 07777))
		mismatch("tree: \"%s\" mode %04o in A, %04o in B", q, st[0].st_mode & 07777,
			 st[1].st_mode & 07777);
	if (st[0].st_uid != st[1].st_uid || st[0].st_gid != st[1].st_gid)
		mismatch("tree: \"%s\" owner %u:%u in A, %u:%u in B", q, st[0].st_uid, st[0].st_gid,
			 st[1].st_uid, st[1].st_gid);
	if (st[0].st_nlink != st[1].st_nlink)
		mismatch("tree: \"%s\" nlink %lu in A, %lu in B", q, (unsigned long)st[0].st_nlink,
			 (unsigned long)st[1].st_nlink);
	if (!S_ISDIR(st[0].st_mode) && st[0].st_size != st[1].st_size)
		mismatch("tree: \"%s\" size %lld in A, %lld in B", q, (long long)st[0].st_size,
			 (long long)st[1].st_size);
	if (depth > 0) {
		const char *fa = first_name(&w[0], &st[0], rel);
		const char *fb = first_name(&w[1], &st[1], rel);

		if (strcmp(fa, fb))
			mismatch("tree: \"%s\" is a hard link of \"%s\" in A, of \"%s\" in B", q,
				 fa, fb);
	}
	if (S_ISLNK(st[0].st_mode)) {
		char t[2][PATH_MAX];
		ssize_t n[2];

		for (int i = 0; i < 2; i++) {
			n[i] = readlinkat(side[i].dfd, q, t[i], sizeof(t[i]) - 1);
			t[i][n[i] < 0 ? 0 : n[i]] = 0;
		}
		if (n[0] != n[1] || strcmp(t[0], t[1]))
			mismatch("tree: symlink \"%s\" -> \"%s\" in A, -> \"%s\" in B", q, t[0],
				 t[1]);
	}
	{
		char *xa = xattr_list(side[0].dfd, *rel ? rel : ".");
		char *xb = xattr_list(side[1].dfd, *rel ? rel : ".");

		if (strcmp(xa, xb))
			mismatch("tree: \"%s\" xattrs {%s} in A, {%s} in B", q, xa, xb);
		free(xa);
		free(xb);
	}
	if (S_ISREG(st[0].st_mode)) {
		char *c[2];
		long n[2];

		for (int i = 0; i < 2; i++)
			n[i] = read_all(side[i].dfd, q, &c[i]);
		if (n[0] != n[1])
			mismatch("tree: reading \"%s\" gives %ld bytes in A, %ld in B", q, n[0],
				 n[1]);
		if (n[0] > 0 && memcmp(c[0], c[1], (size_t)n[0])) {
			long off = 0;

			while (c[0][off] == c[1][off])
				off++;
			mismatch("tree: content of \"%s\" differs from byte %ld (A %02x, B %02x)",
				 q, off, (unsigned char)c[0][off], (unsigned char)c[1][off]);
		}
		free(c[0]);
		free(c[1]);
	} else if (S_ISDIR(st[0].st_mode)) {
		char **v[2];
		long n[2];

		for (int i = 0; i < 2; i++)
			n[i] = list_names(side[i].dfd, q, &v[i]);
		if (n[0] < 0 || n[1] < 0)
			mismatch("tree: listing \"%s\": A %s, B %s", q,
				 n[0] < 0 ? ename(-n[0]) : "ok", n[1] < 0 ? ename(-n[1]) : "ok");
		for (long i = 0; i < n[0] || i < n[1]; i++) {
			const char *a = i < n[0] ? v[0][i] : "(none)";
			const char *b = i < n[1] ? v[1][i] : "(none)";

			if (strcmp(a, b))
				mismatch(
				    "tree: directory \"%s\" entry %ld is \"%s\" in A, \"%s\" in B",
				    q, i, a, b);
		}
		for (long i = 0; i < n[0]; i++) {
			char sub[PATH_MAX];

			snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", v[0][i]);
			compare_node(sub, w, depth + 1);
		}
		free_names(v[0], n[0]);
		free_names(v[1], n[1]);
	}
}

static void compare_trees(const char *when)
{
	struct walk w[2] = {{0}, {0}};

	snprintf(compare_desc, sizeof(compare_desc), "comparing the trees (%s, after op %ld)", when,
		 opno);
	cur_desc = compare_desc;
	compare_node("", w, 0);
	free(w[0].v);
	free(w[1].v);
	if (verbose)
		printf("op %ld: trees equal (%s)\n", opno, when);
}

/* ------------------------------------------------------------------------ */
/* operations */

static int free_slot(void)
{
	for (int k = 0; k < NSLOT; k++)
		if (!slots[k].used)
			return k;
	return -1;
}

/* used_slot() -- a random open slot, or -1 if none is open. */
static int used_slot(void)
{
	int k = (int)rnd(NSLOT);

	for (int j = 0; j < NSLOT; j++, k = (k + 1) % NSLOT)
		if (slots[k].used)
			return k;
	return -1;
}

static void op_close(int k)
{
	struct result r[2];

	begin("close(%s)", slot_str(k));
	BOTH(r, close(slots[k].fd[i]));
	slots[k].used = false;
	check(OP_CLOSE, r[0], r[1]);
}

static void op_open(void)
{
	const char *p = pick_path(chance(10) ? DIR_NAME : FILE_NAME);
	int flags, k = free_slot();
	mode_t mode = modes[rnd(N(modes))];
	struct result r[2];

	flags = (int[]){O_RDONLY, O_WRONLY, O_RDWR, O_RDWR}[rnd(4)];
	if (chance(50)) {
		flags |= O_CREAT;
		if (chance(25))
			flags |= O_EXCL;
	}
	if (chance(10))
		flags |= O_TRUNC;
	if (chance(8))
		flags |= O_DIRECT; /* transfers on it are then kept aligned */
	else if (chance(10))
		flags |= O_APPEND; /* an append to an unaligned size is not */
	if (chance(6))
		flags |= O_DIRECTORY;
	if (chance(6))
		flags |= O_NOFOLLOW;
	if (k < 0) {
		op_close((int)rnd(NSLOT));
		return;
	}
	begin("open(\"%s\", %s, 0%o) -> slot%d", p, flags_str(flags), mode, k);
	BOTH(r, openat(side[i].dfd, p, flags | O_CLOEXEC, mode));
	if ((r[0].r >= 0) != (r[1].r >= 0)) {
		for (int i = 0; i < 2; i++)
			if (r[i].r >= 0)
				close((int)r[i].r);
	}
	if (r[0].r >= 0 && r[1].r >= 0) {
		slots[k].used = true;
		slots[k].fd[0] = (int)r[0].r;
		slots[k].fd[1] = (int)r[1].r;
		slots[k].flags = flags;
		snprintf(slots[k].path, sizeof(slots[k].path), "%s", p);
		r[0].r = r[1].r = 0; /* descriptor numbers may differ: compare success */
	}
	check(OP_OPEN, r[0], r[1]);
}

static void op_pwrite(int k)
{
	off_t off = pick_offset();
	size_t len = pick_len();
	uint64_t save = rng;
	struct result r[2];

	if (off + (off_t)len > MAX_FILE)
		len = (size_t)(MAX_FILE - off);
	align_direct(slots[k].flags, &off, &len);
	/* the data: a fresh stream, so its bytes do not consume the op stream */
	rng = seed ^ ((uint64_t)opno * 0x9e3779b97f4a7c15ULL);
	for (size_t j = 0; j < len; j += 8) {
		uint64_t x = next64();

		memcpy(wbuf + j, &x, len - j < 8 ? len - j : 8);
	}
	rng = save;
	begin("pwrite(%s, off=%lld, len=%zu)", slot_str(k), (long long)off, len);
	BOTH(r, pwrite(slots[k].fd[i], wbuf, len, off));
	check(OP_PWRITE, r[0], r[1]);
}

static void op_pread(int k)
{
	off_t off = pick_offset();
	size_t len = pick_len();
	struct result r[2];

	align_direct(slots[k].flags, &off, &len);
	begin("pread(%s, off=%lld, len=%zu)", slot_str(k), (long long)off, len);
	BOTH(r, pread(slots[k].fd[i], buf[i], len, off));
	check(OP_PREAD, r[0], r[1]);
	if (r[0].r > 0 && memcmp(buf[0], buf[1], (size_t)r[0].r)) {
		long j = 0;

		while (buf[0][j] == buf[1][j])
			j++;
		mismatch("read data differs at file offset %lld (A %02x, B %02x)",
			 (long long)(off + j), (unsigned char)buf[0][j], (unsigned char)buf[1][j]);
	}
}

static void op_ftruncate(int k)
{
	off_t len = chance(20) ? 0 : chance(50) ? rnd(64 * KiB) : rnd(MAX_FILE);
	struct result r[2];

	begin("ftruncate(%s, %lld)", slot_str(k), (long long)len);
	BOTH(r, ftruncate(slots[k].fd[i], len));
	check(OP_FTRUNCATE, r[0], r[1]);
}

static void op_fallocate(int k)
{
	static const int fmodes[] = {
	    0,
	    FALLOC_FL_KEEP_SIZE,
	    FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    FALLOC_FL_ZERO_RANGE,
	    FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	static const char *const fnames[] = {
	    "0",
	    "KEEP_SIZE",
	    "PUNCH_HOLE|KEEP_SIZE",
	    "PUNCH_HOLE|KEEP_SIZE",
	    "ZERO_RANGE",
	    "ZERO_RANGE|KEEP_SIZE",
	};
	int m = (int)rnd(6);
	off_t off = pick_offset();
	off_t len = (off_t)pick_len();
	struct result r[2];

	if (off + len > MAX_FILE)
		len = MAX_FILE - off;
	begin("fallocate(%s, %s, off=%lld, len=%lld)", slot_str(k), fnames[m], (long long)off,
	      (long long)len);
	BOTH(r, fallocate(slots[k].fd[i], fmodes[m], off, len));
	check(OP_FALLOCATE, r[0], r[1]);
}

static void op_sync(int k, bool data)
{
	struct result r[2];

	begin("%s(%s)", data ? "fdatasync" : "fsync", slot_str(k));
	if (data)
		BOTH(r, fdatasync(slots[k].fd[i]));
	else
		BOTH(r, fsync(slots[k].fd[i]));
	check(data ? OP_FDATASYNC : OP_FSYNC, r[0], r[1]);
}

/* same_stat() -- compare the semantic fields of two stat results. */
static void same_stat(const struct stat *a, const struct stat *b)
{
	if (a->st_mode != b->st_mode || a->st_size != b->st_size || a->st_nlink != b->st_nlink ||
	    a->st_uid != b->st_uid || a->st_gid != b->st_gid)
		mismatch(
		    "stat differs: A mode %o size %lld nlink %lu, B mode %o size %lld nlink %lu",
		    a->st_mode, (long long)a->st_size, (unsigned long)a->st_nlink, b->st_mode,
		    (long long)b->st_size, (unsigned long)b->st_nlink);
}

static void op_fstat(int k)
{
	struct stat st[2];
	struct result r[2];

	begin("fstat(%s)", slot_str(k));
	BOTH(r, fstat(slots[k].fd[i], &st[i]));
	check(OP_FSTAT, r[0], r[1]);
	if (r[0].r == 0) {
		/* a directory's size is the filesystem's business */
		if (S_ISDIR(st[0].st_mode))
			st[0].st_size = st[1].st_size;
		same_stat(&st[0], &st[1]);
	}
}

static void op_create(void)
{
	const char *p = pick_path(FILE_NAME);
	mode_t mode = modes[rnd(N(modes))];
	struct result r[2];

	begin("create(\"%s\", 0%o) (O_CREAT|O_EXCL, close)", p, mode);
	BOTH(r, openat(side[i].dfd, p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
	for (int i = 0; i < 2; i++)
		if (r[i].r >= 0) {
			close((int)r[i].r);
			r[i].r = 0;
		}
	check(OP_CREATE, r[0], r[1]);
}

static void op_path1(enum op op)
{
	const char *p = pick_path(op == OP_MKDIR || op == OP_RMDIR ? DIR_NAME : ANY);
	mode_t mode = modes[rnd(N(modes))];
	struct result r[2];

	switch (op) {
	case OP_UNLINK:
		begin("unlink(\"%s\")", p);
		BOTH(r, unlinkat(side[i].dfd, p, 0));
		break;
	case OP_RMDIR:
		begin("rmdir(\"%s\")", p);
		BOTH(r, unlinkat(side[i].dfd, p, AT_REMOVEDIR));
		break;
	case OP_MKDIR:
		begin("mkdir(\"%s\", 0%o)", p, mode | 0700);
		BOTH(r, mkdirat(side[i].dfd, p, mode | 0700));
		break;
	case OP_CHMOD:
		begin("chmod(\"%s\", 0%o)", p, mode);
		BOTH(r, fchmodat(side[i].dfd, p, mode, 0));
		break;
	default:
		abort();
	}
	check(op, r[0], r[1]);
}

static void op_rename(void)
{
	enum kind kd = (enum kind)rnd(4);
	const char *a = pick_path(kd), *b = pick_path(kd);
	static const unsigned fl[] = {0, 0, 0, RENAME_NOREPLACE, RENAME_EXCHANGE};
	static const char *const fn[] = {"0", "0", "0", "RENAME_NOREPLACE", "RENAME_EXCHANGE"};
	int f = (int)rnd(5);
	struct result r[2];

	begin("renameat2(\"%s\", \"%s\", %s)", a, b, fn[f]);
	BOTH(r, renameat2(side[i].dfd, a, side[i].dfd, b, fl[f]));
	check(OP_RENAME, r[0], r[1]);
}

static void op_link(void)
{
	const char *a = pick_path(FILE_NAME), *b = pick_path(chance(50) ? FILE_NAME : LINK_NAME);
	int follow = chance(25) ? AT_SYMLINK_FOLLOW : 0;
	struct result r[2];

	begin("linkat(\"%s\", \"%s\", %s)", a, b, follow ? "AT_SYMLINK_FOLLOW" : "0");
	BOTH(r, linkat(side[i].dfd, a, side[i].dfd, b, follow));
	check(OP_LINK, r[0], r[1]);
}

static void op_symlink(void)
{
	const char *t = names->target[rnd(names->ntarget)], *p = pick_path(LINK_NAME);
	struct result r[2];

	begin("symlink(\"%s\", \"%s\")", t, p);
	BOTH(r, symlinkat(t, side[i].dfd, p));
	check(OP_SYMLINK, r[0], r[1]);
}

static void op_truncate(void)
{
	const char *p = pick_path(FILE_NAME);
	off_t len = chance(30) ? 0 : rnd(MAX_FILE);
	char path[2][PATH_MAX];
	struct result r[2];

	for (int i = 0; i < 2; i++)
		snprintf(path[i], PATH_MAX, "%s/%s", side[i].root, p);
	begin("truncate(\"%s\", %lld)", p, (long long)len);
	BOTH(r, truncate(path[i], len));
	check(OP_TRUNCATE, r[0], r[1]);
}

static void op_stat(void)
{
	const char *p = pick_path(ANY);
	int fl = chance(50) ? AT_SYMLINK_NOFOLLOW : 0;
	struct stat st[2];
	struct result r[2];

	begin("%s(\"%s\")", fl ? "lstat" : "stat", p);
	BOTH(r, fstatat(side[i].dfd, p, &st[i], fl));
	check(OP_STAT, r[0], r[1]);
	if (r[0].r == 0) {
		if (S_ISDIR(st[0].st_mode))
			st[0].st_size = st[1].st_size;
		same_stat(&st[0], &st[1]);
	}
}

/* op_readdir() -- sorted "name type" lists must be equal. */
static void op_readdir(void)
{
	const char *p = names->list[rnd(names->nlist)];
	char *v[2][64];
	int n[2] = {0, 0};
	struct result r[2];

	begin("readdir(\"%s\")", p);
	for (int i = 0; i < 2; i++) {
		int fd = openat(side[i].dfd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d;
		struct dirent *de;

		r[i].e = errno;
		r[i].r = fd < 0 ? -1 : 0;
		if (fd < 0 || !(d = fdopendir(fd)))
			continue;
		while ((de = readdir(d)) && n[i] < 64) {
			if (asprintf(&v[i][n[i]++], "%s:%d", de->d_name, de->d_type) < 0)
				exit(2);
		}
		closedir(d);
		qsort(v[i], n[i], sizeof(char *), cmp_str);
		r[i].r = n[i];
	}
	check(OP_READDIR, r[0], r[1]);
	for (int j = 0; j < n[0]; j++)
		if (strcmp(v[0][j], v[1][j]))
			mismatch("readdir entry %d: A \"%s\", B \"%s\" (name:d_type)", j, v[0][j],
				 v[1][j]);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < n[i]; j++)
			free(v[i][j]);
}

/* op_xattr() -- set, get, remove or list xattrs: user.* following
 * symlinks, or trusted.* with the l* calls (on symlinks themselves; root). */
static void op_xattr(void)
{
	bool l = chance(40);
	const char *p = pick_path(l && chance(70) ? LINK_NAME : ANY);
	const char *name =
	    l ? (chance(50) ? "trusted.t0" : "trusted.t1") : (chance(50) ? "user.k0" : "user.k1");
	char path[2][PATH_MAX], val[64], got[2][256];
	int what = (int)rnd(4), fl = (int[]){0, 0, XATTR_CREATE, XATTR_REPLACE}[rnd(4)];
	size_t vlen = 1 + (size_t)rnd(sizeof(val));
	struct result r[2];

	for (int i = 0; i < 2; i++)
		snprintf(path[i], PATH_MAX, "%s/%s", side[i].root, p);
	for (size_t j = 0; j < vlen; j++)
		val[j] = (char)('a' + rnd(26));
	switch (what) {
	case 0:
		begin("%ssetxattr(\"%s\", \"%s\", <%zu bytes>, %s)", l ? "l" : "", p, name, vlen,
		      fl == XATTR_CREATE    ? "XATTR_CREATE"
		      : fl == XATTR_REPLACE ? "XATTR_REPLACE"
					    : "0");
		if (l)
			BOTH(r, lsetxattr(path[i], name, val, vlen, fl));
		else
			BOTH(r, setxattr(path[i], name, val, vlen, fl));
		break;
	case 1:
		begin("%sgetxattr(\"%s\", \"%s\")", l ? "l" : "", p, name);
		if (l)
			BOTH(r, lgetxattr(path[i], name, got[i], sizeof(got[i])));
		else
			BOTH(r, getxattr(path[i], name, got[i], sizeof(got[i])));
		break;
	case 2:
		begin("%sremovexattr(\"%s\", \"%s\")", l ? "l" : "", p, name);
		if (l)
			BOTH(r, lremovexattr(path[i], name));
		else
			BOTH(r, removexattr(path[i], name));
		break;
	default:
		begin("%slistxattr(\"%s\") (size)", l ? "l" : "", p);
		if (l)
			BOTH(r, llistxattr(path[i], NULL, 0));
		else
			BOTH(r, listxattr(path[i], NULL, 0));
		break;
	}
	check(OP_XATTR, r[0], r[1]);
	if (what == 1 && r[0].r > 0 && memcmp(got[0], got[1], (size_t)r[0].r))
		mismatch("xattr values differ");
}

static void op_copy(int k)
{
	int k2 = used_slot();
	loff_t oi = pick_offset(), oo = pick_offset(), o[2][2];
	size_t len = pick_len();
	struct result r[2];

	if (oo + (loff_t)len > MAX_FILE)
		len = (size_t)(MAX_FILE - oo);
	if ((slots[k].flags | slots[k2].flags) & O_DIRECT) {
		op_fstat(k); /* splice on O_DIRECT files has its own alignment rules */
		return;
	}
	begin("copy_file_range(%s, off=%lld, %s, off=%lld, len=%zu)", slot_str(k), (long long)oi,
	      slot_str(k2), (long long)oo, len);
	for (int i = 0; i < 2; i++) {
		o[i][0] = oi;
		o[i][1] = oo;
	}
	BOTH(r, copy_file_range(slots[k].fd[i], &o[i][0], slots[k2].fd[i], &o[i][1], len, 0));
	check(OP_COPY, r[0], r[1]);
}

/* op_advise() -- page cache hints: DONTNEED makes later reads of clean pages
 * go to the filesystem (through the daemon on a FUSE mount). */
static void op_advise(int k)
{
	off_t off = chance(50) ? 0 : pick_offset();
	off_t len = chance(50) ? 0 : (off_t)pick_len();
	struct result r[2];

	switch (rnd(3)) {
	case 0:
		begin("posix_fadvise(%s, off=%lld, len=%lld, DONTNEED)", slot_str(k),
		      (long long)off, (long long)len);
		/* posix_fadvise returns the error number instead of setting errno */
		BOTH(r, (errno = posix_fadvise(slots[k].fd[i], off, len, POSIX_FADV_DONTNEED)) ? -1
											       : 0);
		break;
	case 1:
		begin("posix_fadvise(%s, off=%lld, len=%lld, WILLNEED)", slot_str(k),
		      (long long)off, (long long)len);
		BOTH(r, (errno = posix_fadvise(slots[k].fd[i], off, len, POSIX_FADV_WILLNEED)) ? -1
											       : 0);
		break;
	default:
		begin("sync_file_range(%s, off=%lld, len=%lld, WRITE)", slot_str(k), (long long)off,
		      (long long)len);
		BOTH(r, sync_file_range(slots[k].fd[i], off, len, SYNC_FILE_RANGE_WRITE));
		break;
	}
	check(OP_ADVISE, r[0], r[1]);
}

/* one_op() -- draw an operation by weight and run it on both trees. */
static void one_op(void)
{
	long total = 0, x;
	int op = 0, k;

	for (int j = 0; j < NOPS; j++)
		total += op_weight[j];
	x = rnd(total);
	while (x >= op_weight[op])
		x -= op_weight[op++];

	switch (op) {
	case OP_OPEN:
		op_open();
		return;
	case OP_CREATE:
		op_create();
		return;
	case OP_UNLINK:
	case OP_MKDIR:
	case OP_RMDIR:
	case OP_CHMOD:
		op_path1(op);
		return;
	case OP_RENAME:
		op_rename();
		return;
	case OP_LINK:
		op_link();
		return;
	case OP_SYMLINK:
		op_symlink();
		return;
	case OP_TRUNCATE:
		op_truncate();
		return;
	case OP_STAT:
		op_stat();
		return;
	case OP_READDIR:
		op_readdir();
		return;
	case OP_XATTR:
		op_xattr();
		return;
	}
	/* descriptor operations: open something first if nothing is open */
	k = used_slot();
	if (k < 0) {
		op_open();
		return;
	}
	switch (op) {
	case OP_CLOSE:
		op_close(k);
		break;
	case OP_PWRITE:
		op_pwrite(k);
		break;
	case OP_PREAD:
		op_pread(k);
		break;
	case OP_FTRUNCATE:
		op_ftruncate(k);
		break;
	case OP_FALLOCATE:
		op_fallocate(k);
		break;
	case OP_FSYNC:
		op_sync(k, false);
		break;
	case OP_FDATASYNC:
		op_sync(k, true);
		break;
	case OP_FSTAT:
		op_fstat(k);
		break;
	case OP_COPY:
		op_copy(k);
		break;
	case OP_ADVISE:
		op_advise(k);
		break;
	}
}

/* ------------------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr, "usage: helper_fsx --seed S --ops N [--batch B] [--names plain|pg]\n"
			"                  [--verbose] DIR_A DIR_B\n"
			"       helper_fsx --compare DIR_A DIR_B\n");
	return 2;
}

static bool parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool is_empty(int dfd)
{
	char **v;
	long n = list_names(dfd, ".", &v);

	free_names(v, n > 0 ? n : 0);
	return n == 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"seed", required_argument, NULL, 's'},
	    {"ops", required_argument, NULL, 'n'},
	    {"batch", required_argument, NULL, 'b'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"compare", no_argument, NULL, 'c'},
	    {"names", required_argument, NULL, 'N'},
	    {0},
	};
	long nops = -1, s = -1;
	int c;

	while ((c = getopt_long(argc, argv, "s:n:b:vc", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!parse_num(optarg, 0, LONG_MAX, &s))
				return usage();
			break;
		case 'n':
			if (!parse_num(optarg, 0, 100000000, &nops))
				return usage();
			break;
		case 'b':
			if (!parse_num(optarg, 1, 100000000, &batch))
				return usage();
			break;
		case 'v':
			verbose = true;
			break;
		case 'c':
			compare_only = true;
			break;
		case 'N':
			if (!strcmp(optarg, "pg"))
				names = &pg_names;
			else if (strcmp(optarg, "plain"))
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2 || (!compare_only && (s < 0 || nops < 0)))
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 2; i++) {
		side[i].root = argv[optind + i];
		side[i].dfd = open(side[i].root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (side[i].dfd < 0) {
			fprintf(stderr, "helper_fsx: cannot open \"%s\": %s\n", side[i].root,
				strerror(errno));
			return 2;
		}
	}
	if (compare_only) {
		compare_trees("--compare");
		printf("trees equal: %s %s\n", side[0].root, side[1].root);
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		if (!is_empty(side[i].dfd)) {
			fprintf(stderr, "helper_fsx: \"%s\" is not an empty directory\n",
				side[i].root);
			return 2;
		}
	}
	seed = (uint64_t)s;
	rng = seed;
	umask(022);
	if (posix_memalign((void **)&buf[0], DIO_ALIGN, MAX_IO) ||
	    posix_memalign((void **)&buf[1], DIO_ALIGN, MAX_IO) ||
	    posix_memalign((void **)&wbuf, DIO_ALIGN, MAX_IO))
		return 2;

	if (names == &pg_names) { /* the directory skeleton, as op 0 */
		for (long j = 0; j < names->ndir; j++) {
			struct result r[2];

			begin("mkdir(\"%s\", 0700) (skeleton)", names->dir[j]);
			BOTH(r, mkdirat(side[i].dfd, names->dir[j], 0700));
			check(OP_MKDIR, r[0], r[1]);
		}
	}
	for (opno = 1; opno <= nops; opno++) {
		one_op();
		if (opno % batch == 0)
			compare_trees("after a batch");
	}
	opno = nops + 1;
	for (int k = 0; k < NSLOT; k++)
		if (slots[k].used)
			op_close(k);
	compare_trees("at the end, all closed");

	printf("seed %llu: %ld operations, trees compared every %ld: all equal\n",
	       (unsigned long long)seed, nops, batch);
	for (int j = 0; j < NOPS; j++)
		printf("  %-16s %6ld ok %6ld failed\n", op_names[j], stat_ok[j], stat_err[j]);
	return 0;
}
