/*
 * helper_syscalls.c -- a fixed script of syscalls whose normalized output is
 * compared between a plain directory and a pgiofs mount (test_syscalls.sh).
 *
 * Usage: helper_syscalls [--unpriv UID] DIR     run the script inside DIR
 *        helper_syscalls --dump DIR             print DIR's tree, normalized
 *
 * DIR must be empty.  The script prints one line per call: the call, its
 * arguments, the return value (file descriptors print as "fd") and the errno
 * name on failure; stat-like results add type, mode, size, nlink, uid and gid.
 * Lines starting with "  fact:" state derived facts ("read of the hole is all
 * zeros: yes").
 *
 * What must stay true:
 *   - The output depends only on the semantics of the filesystem under DIR:
 *     never inode or device numbers, st_blocks, absolute times or fd numbers.
 *     Timestamps appear only as facts (equal to the value set, advanced after
 *     a write).  Directory listings are sorted.
 *   - Every path is relative to DIR (the program chdirs there), and nothing
 *     outside DIR is ever written: /etc/passwd is only read through a symlink.
 *   - With --unpriv UID a forked child switches to UID (and gid UID) and
 *     checks permission semantics; that needs root, and on a FUSE mount it
 *     needs -o allow_other.
 *   - The script leaves its final tree in DIR; --dump prints a tree so the
 *     backing directory of a mount can be compared with the plain run.
 *
 * Exit status: 0 when the script ran to the end (failed calls are part of the
 * output, not errors), 2 on a usage error or a DIR that is not empty.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/falloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define KiB	     1024L
#define MiB	     (1024L * 1024L)
#define SET_ATIME    1000000000L /* 2001-09-09, an explicit time for utimensat */
#define SET_MTIME    1100000000L
#define OLD_TIME     900000000L	  /* set before a change to see time advance */
#define NOW_SLACK_NS 2000000000LL /* "now" means within 2 s of the call */

/* ------------------------------------------------------------------------ */
/* output */

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

/* result() -- print "<desc> = <ret>", "<desc> = fd" or "<desc> = -1 ENAME". */
static void result(long ret, int err, bool isfd, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void result(long ret, int err, bool isfd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (ret < 0)
		printf(" = %ld %s\n", ret, ename(err));
	else if (isfd)
		printf(" = fd\n");
	else
		printf(" = %ld\n", ret);
}

/* R(expr, fmt, ...) -- run expr (a syscall returning >= 0 or -1 with errno),
 * print its line, yield its value.  RFD is the same for calls returning fds. */
#define R(expr, ...)                                                                               \
	({                                                                                         \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		int e_ = errno;                                                                    \
		result(r_, e_, false, __VA_ARGS__);                                                \
		errno = e_;                                                                        \
		r_;                                                                                \
	})
#define RFD(expr, ...)                                                                             \
	({                                                                                         \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		int e_ = errno;                                                                    \
		result(r_, e_, true, __VA_ARGS__);                                                 \
		errno = e_;                                                                        \
		(int)r_;                                                                           \
	})

static void fact(const char *what, bool yes)
{
	printf("  fact: %s: %s\n", what, yes ? "yes" : "no");
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "lnk";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "sock";
	case S_IFCHR:
		return "chr";
	case S_IFBLK:
		return "blk";
	}
	return "?";
}

/* stat_fields() -- the normalized fields of a stat result. */
static void stat_fields(const struct stat *st)
{
	printf(" type=%s mode=%04o size=%lld nlink=%lu uid=%u gid=%u", type_name(st->st_mode),
	       (unsigned)(st->st_mode & 07777), (long long)st->st_size, (unsigned long)st->st_nlink,
	       (unsigned)st->st_uid, (unsigned)st->st_gid);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		printf(" rdev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
}

static void stat_line(const char *call, const char *what, int ret, int err, const struct stat *st)
{
	printf("%s(%s) = %d", call, what, ret);
	if (ret < 0)
		printf(" %s", ename(err));
	else
		stat_fields(st);
	printf("\n");
}

/* pstat(), plstat(), pfstat() -- stat and print; return 0 or -1. */
/* quote() -- "path", or <N-char name> for the long names of t_names(). */
static const char *quote(const char *path)
{
	static char q[300];

	if (strlen(path) > 60)
		snprintf(q, sizeof(q), "<%zu-char name>", strlen(path));
	else
		snprintf(q, sizeof(q), "\"%s\"", path);
	return q;
}

static int pstat(const char *path, struct stat *out)
{
	struct stat st;
	int r = stat(path, &st), e = errno;
	const char *q = quote(path);

	stat_line("stat", q, r, e, &st);
	if (out)
		*out = st;
	return r;
}

static int plstat(const char *path, struct stat *out)
{
	struct stat st;
	int r = lstat(path, &st), e = errno;
	const char *q = quote(path);

	stat_line("lstat", q, r, e, &st);
	if (out)
		*out = st;
	return r;
}

static int pfstat(int fd, const char *label, struct stat *out)
{
	struct stat st;
	int r = fstat(fd, &st), e = errno;

	stat_line("fstat", label, r, e, &st);
	if (out)
		*out = st;
	return r;
}

static bool ts_eq(struct timespec t, long sec, long nsec)
{
	return t.tv_sec == sec && t.tv_nsec == nsec;
}

static long long ts_ns(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ns(t);
}

static bool ts_near(struct timespec t, long long lo, long long hi)
{
	return ts_ns(t) >= lo - NOW_SLACK_NS && ts_ns(t) <= hi + NOW_SLACK_NS;
}

/* ------------------------------------------------------------------------ */
/* data helpers */

static uint64_t fnv64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* pattern() -- n deterministic bytes from seed (splitmix64); caller frees. */
static char *pattern(size_t n, uint64_t seed)
{
	char *b = malloc(n ? n : 1);

	if (!b) {
		perror("malloc");
		exit(2);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		b[i] = (char)(z ^ (z >> 31));
	}
	return b;
}

static bool all_bytes(const char *b, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != c)
			return false;
	return true;
}

/* slurp() -- read a whole file by path; returns size or -1, *out malloced
 * (NULL on error). */
static long slurp(const char *path, char **out)
{
	int fd = open(path, O_RDONLY);
	size_t cap = 64 * KiB, len = 0;
	char *b;

	*out = NULL;
	if (fd < 0)
		return -1;
	/* drop clean cached pages, so that the read reaches the filesystem */
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
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = b;
	return (long)len;
}

/* content() -- print a file's size and hash (small text files verbatim). */
static void content(const char *path)
{
	char *b;
	long n = slurp(path, &b);

	if (n < 0) {
		printf("content(\"%s\") = -1 %s\n", path, ename(errno));
		return;
	}
	if (n <= 64) {
		bool printable = true;

		for (long i = 0; i < n; i++)
			if (b[i] < 32 || b[i] > 126)
				printable = false;
		if (printable) {
			printf("content(\"%s\") = \"%.*s\"\n", path, (int)n, b);
			free(b);
			return;
		}
	}
	printf("content(\"%s\") = size %ld fnv %016llx\n", path, n,
	       (unsigned long long)fnv64(b, (size_t)n));
	free(b);
}

/* mkfile() -- create path with the given bytes (setup step, printed). */
static void mkfile(const char *path, const char *data, size_t n, mode_t mode)
{
	int fd = RFD(open(path, O_WRONLY | O_CREAT | O_EXCL, mode),
		     "open(\"%s\", O_WRONLY|O_CREAT|O_EXCL, 0%o)", path, (unsigned)mode);

	if (n)
		R(write(fd, data, n), "write(fd, <%zu bytes>)", n);
	R(close(fd), "close(fd)");
}

/* list_dir() -- print the sorted entries of a directory with d_type. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *dtype_name(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return "reg";
	case DT_DIR:
		return "dir";
	case DT_LNK:
		return "lnk";
	case DT_FIFO:
		return "fifo";
	case DT_SOCK:
		return "sock";
	case DT_CHR:
		return "chr";
	case DT_BLK:
		return "blk";
	case DT_UNKNOWN:
		return "unknown";
	}
	return "?";
}

/* try_opendir() -- 0 if the directory opens (it is closed again), else -1. */
static int try_opendir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return -1;
	closedir(d);
	return 0;
}

static void list_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		printf("readdir(\"%s\") = -1 %s\n", path, ename(errno));
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		int r;

		if (n == cap)
			names = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*names));
		if (len > 40) /* the 255-char names */
			r = asprintf(&names[n], "<%zu-char name> %s", len, dtype_name(de->d_type));
		else
			r = asprintf(&names[n], "%s %s", de->d_name, dtype_name(de->d_type));
		if (r < 0)
			exit(2);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	printf("readdir(\"%s\") = %zu entries\n", path, n);
	for (size_t i = 0; i < n; i++) {
		printf("  %s\n", names[i]);
		free(names[i]);
	}
	free(names);
}

/* ------------------------------------------------------------------------ */
/* the script, section by section */

static void sec(const char *name)
{
	printf("\n== %s\n", name);
}

static void t_open_create(void)
{
	int fd, fd2;
	char buf[64];
	struct stat st;

	sec("open and create");
	fd = RFD(open("f1", O_RDWR | O_CREAT | O_EXCL, 0644),
		 "open(\"f1\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	pfstat(fd, "f1", NULL);
	R(write(fd, "hello world\n", 12), "write(fd, \"hello world\\n\", 12)");
	R(open("f1", O_RDWR | O_CREAT | O_EXCL, 0644), "open(\"f1\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	fd2 = RFD(open("f1", O_RDWR | O_CREAT, 0600), "open(\"f1\", O_RDWR|O_CREAT, 0600)");
	pfstat(fd2, "f1", NULL);
	memset(buf, 0, sizeof(buf));
	R(read(fd2, buf, sizeof(buf)), "read(fd2, buf, 64)");
	note("data \"%.11s\"", buf);
	R(close(fd2), "close(fd2)");
	R(open("missing", O_RDONLY), "open(\"missing\", O_RDONLY)");
	R(open("f1/x", O_RDONLY), "open(\"f1/x\", O_RDONLY)");
	R(open("f1/x", O_RDWR | O_CREAT, 0644), "open(\"f1/x\", O_RDWR|O_CREAT, 0644)");
	R(open("f1", O_RDONLY | O_DIRECTORY), "open(\"f1\", O_RDONLY|O_DIRECTORY)");
	R(open("nodir/f", O_RDWR | O_CREAT, 0644), "open(\"nodir/f\", O_RDWR|O_CREAT, 0644)");
	fd2 = RFD(open("f1", O_WRONLY | O_TRUNC), "open(\"f1\", O_WRONLY|O_TRUNC)");
	pfstat(fd2, "f1", NULL);
	pfstat(fd, "f1 (other fd)", NULL);
	R(read(fd2, buf, 4), "read(O_WRONLY fd, buf, 4)");
	R(write(fd2, "abc", 3), "write(O_WRONLY fd, \"abc\", 3)");
	R(close(fd2), "close(fd2)");
	R(pread(fd, buf, sizeof(buf), 0), "pread(fd, buf, 64, 0)");
	note("data \"%.3s\"", buf);
	R(close(fd), "close(fd)");
	fd = RFD(open("f1", O_RDONLY), "open(\"f1\", O_RDONLY)");
	R(write(fd, "x", 1), "write(O_RDONLY fd, \"x\", 1)");
	R(close(fd), "close(fd)");
	R(close(fd), "close(fd) again");
	R(open("f1", O_RDONLY | O_CREAT | O_EXCL, 0644),
	  "open(\"f1\", O_RDONLY|O_CREAT|O_EXCL, 0644)");
	/* creating with a read-only mode still gives the creator a writable fd */
	fd = RFD(open("ro_created", O_RDWR | O_CREAT | O_EXCL, 0444),
		 "open(\"ro_created\", O_RDWR|O_CREAT|O_EXCL, 0444)");
	R(write(fd, "ok", 2), "write(fd, \"ok\", 2)");
	R(close(fd), "close(fd)");
	pstat("ro_created", &st);
	content("ro_created");
	fd = RFD(open("dsync", O_RDWR | O_CREAT | O_DSYNC, 0600),
		 "open(\"dsync\", O_RDWR|O_CREAT|O_DSYNC, 0600)");
	R(write(fd, "durable", 7), "write(fd, \"durable\", 7)");
	R(close(fd), "close(fd)");
	content("dsync");
}

static void t_append(void)
{
	int fd, fd2;

	sec("O_APPEND");
	mkfile("app", "0123456789", 10, 0644);
	fd = RFD(open("app", O_WRONLY | O_APPEND), "open(\"app\", O_WRONLY|O_APPEND)");
	R(lseek(fd, 0, SEEK_SET), "lseek(fd, 0, SEEK_SET)");
	R(write(fd, "abc", 3), "write(fd, \"abc\", 3)");
	R(lseek(fd, 0, SEEK_CUR), "lseek(fd, 0, SEEK_CUR)");
	/* Linux appends with pwrite on an O_APPEND descriptor, offset ignored */
	R(pwrite(fd, "XY", 2, 0), "pwrite(fd, \"XY\", 2, 0)");
	pfstat(fd, "app", NULL);
	fd2 = RFD(open("app", O_RDWR | O_APPEND), "open(\"app\", O_RDWR|O_APPEND)");
	R(write(fd2, "-2-", 3), "write(fd2, \"-2-\", 3)");
	R(write(fd, "-1-", 3), "write(fd, \"-1-\", 3)");
	R(write(fd2, "+2+", 3), "write(fd2, \"+2+\", 3)");
	R(close(fd2), "close(fd2)");
	R(close(fd), "close(fd)");
	content("app");
	pstat("app", NULL);
}

static void t_pread_pwrite(void)
{
	int fd;
	char *a = malloc(4096), *b = malloc(300 * KiB), *big, *back;
	struct stat st;
	long n;

	sec("pread/pwrite and holes");
	memset(a, 'A', 4096);
	fd = RFD(open("holes", O_RDWR | O_CREAT | O_EXCL, 0644),
		 "open(\"holes\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	R(pwrite(fd, a, 4096, 0), "pwrite(fd, 'A'x4096, 4096, 0)");
	memset(a, 'B', 100);
	R(pwrite(fd, a, 100, MiB + 10), "pwrite(fd, 'B'x100, 100, 1MiB+10)");
	pfstat(fd, "holes", NULL);
	memset(b, 'x', 100);
	n = R(pread(fd, b, 100, 500000), "pread(fd, buf, 100, 500000)");
	fact("read of the hole is all zeros", n == 100 && all_bytes(b, 100, 0));
	n = R(pread(fd, b, 8192, 0), "pread(fd, buf, 8192, 0)");
	fact("first 4096 bytes 'A', next 4096 zeros",
	     n == 8192 && all_bytes(b, 4096, 'A') && all_bytes(b + 4096, 4096, 0));
	n = R(pread(fd, b, 100, MiB + 60), "pread(fd, buf, 100, 1MiB+60) (crosses EOF)");
	fact("short read has the 'B' tail", n == 50 && all_bytes(b, 50, 'B'));
	R(pread(fd, b, 100, MiB + 110), "pread(fd, buf, 100, EOF)");
	R(pread(fd, b, 100, 5 * MiB), "pread(fd, buf, 100, 5MiB) (beyond EOF)");
	R(pwrite(fd, a, 0, 5 * MiB), "pwrite(fd, buf, 0, 5MiB) (empty write)");
	pfstat(fd, "holes", NULL);
	R(pwrite(fd, a, 10, -1), "pwrite(fd, buf, 10, -1)");
	R(pread(fd, b, 10, -1), "pread(fd, buf, 10, -1)");
	/* a large unaligned write crossing many pages, read back exactly */
	big = pattern(300 * KiB, 1);
	R(pwrite(fd, big, 300 * KiB, 12345), "pwrite(fd, pattern 300KiB, 307200, 12345)");
	n = R(pread(fd, b, 300 * KiB, 12345), "pread(fd, buf, 307200, 12345)");
	fact("300 KiB read back equals what was written",
	     n == 300 * KiB && memcmp(b, big, 300 * KiB) == 0);
	n = R(pread(fd, b, 12345 - 8192, 8192), "pread(fd, buf, 4153, 8192)");
	fact("bytes 8192..12344 are still zeros", n == 4153 && all_bytes(b, 12345 - 8192, 0));
	/* sequential read and write through the file offset */
	R(lseek(fd, 4000, SEEK_SET), "lseek(fd, 4000, SEEK_SET)");
	R(write(fd, "seq", 3), "write(fd, \"seq\", 3)");
	R(lseek(fd, 0, SEEK_CUR), "lseek(fd, 0, SEEK_CUR)");
	R(lseek(fd, -10, SEEK_END), "lseek(fd, -10, SEEK_END)");
	n = R(read(fd, b, 100), "read(fd, buf, 100)");
	fact("last 10 bytes are 'B'", n == 10 && all_bytes(b, 10, 'B'));
	R(lseek(fd, -1, SEEK_SET), "lseek(fd, -1, SEEK_SET)");
	R(lseek(fd, 10 * MiB, SEEK_SET), "lseek(fd, 10MiB, SEEK_SET) (beyond EOF)");
	R(read(fd, b, 10), "read(fd, buf, 10) (beyond EOF)");
	pfstat(fd, "holes", &st);
	R(close(fd), "close(fd)");
	content("holes");
	n = slurp("holes", &back);
	fact("whole file read by path matches", n == st.st_size && n > 12345 + 300 * KiB &&
						    memcmp(back + 12345, big, 300 * KiB) == 0 &&
						    memcmp(back + 4000, "seq", 3) == 0);
	free(back);
	free(big);
	free(a);
	free(b);
}

static void t_truncate(void)
{
	int fd, fdr;
	char buf[200];
	struct stat st;
	long n;

	sec("ftruncate and truncate");
	mkfile("tr", "0123456789", 10, 0644);
	fd = RFD(open("tr", O_RDWR), "open(\"tr\", O_RDWR)");
	fdr = RFD(open("tr", O_RDONLY), "open(\"tr\", O_RDONLY)");
	R(ftruncate(fd, 20000), "ftruncate(fd, 20000)");
	pfstat(fd, "tr", NULL);
	n = R(pread(fdr, buf, 100, 5), "pread(fdr, buf, 100, 5)");
	fact("bytes 5..9 kept, then zeros",
	     n == 100 && memcmp(buf, "56789", 5) == 0 && all_bytes(buf + 5, 95, 0));
	R(pwrite(fd, "tail", 4, 19996), "pwrite(fd, \"tail\", 4, 19996)");
	R(ftruncate(fd, 7), "ftruncate(fd, 7)");
	pfstat(fdr, "tr (read-only fd)", NULL);
	n = R(pread(fdr, buf, 100, 0), "pread(fdr, buf, 100, 0)");
	note("data \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(ftruncate(fd, 20000), "ftruncate(fd, 20000) (grow again)");
	n = R(pread(fdr, buf, 8, 19996), "pread(fdr, buf, 8, 19996)");
	fact("old tail does not reappear", n == 4 && all_bytes(buf, 4, 0));
	R(truncate("tr", 3), "truncate(\"tr\", 3)");
	pfstat(fd, "tr (fd open across truncate)", NULL);
	pstat("tr", NULL);
	content("tr");
	R(truncate("tr", 8192 * 3), "truncate(\"tr\", 24576)");
	pstat("tr", NULL);
	R(ftruncate(fdr, 0), "ftruncate(O_RDONLY fd, 0)");
	R(ftruncate(fd, -1), "ftruncate(fd, -1)");
	R(truncate("missing", 0), "truncate(\"missing\", 0)");
	R(mkdir("trdir", 0755), "mkdir(\"trdir\", 0755)");
	R(truncate("trdir", 0), "truncate(\"trdir\", 0)");
	/* time facts: set an old mtime, then change the size */
	{
		struct timespec ts[2] = {{OLD_TIME, 0}, {OLD_TIME, 0}};

		R(futimens(fd, ts), "futimens(fd, {OLD, OLD})");
	}
	R(ftruncate(fd, 100), "ftruncate(fd, 100)");
	fstat(fd, &st);
	fact("mtime advanced after ftruncate", st.st_mtim.tv_sec > OLD_TIME);
	fact("ctime advanced after ftruncate", st.st_ctim.tv_sec > OLD_TIME);
	R(close(fdr), "close(fdr)");
	R(close(fd), "close(fd)");
	pstat("tr", NULL);
}

static void t_fallocate(void)
{
	int fd, fdr;
	char *b = malloc(70000), *c = malloc(65536);
	long n;

	sec("fallocate");
	fd = RFD(open("fa", O_RDWR | O_CREAT | O_EXCL, 0644),
		 "open(\"fa\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	R(fallocate(fd, 0, 0, 65536), "fallocate(fd, 0, 0, 65536)");
	pfstat(fd, "fa", NULL);
	n = R(pread(fd, b, 65536, 0), "pread(fd, buf, 65536, 0)");
	fact("allocated range reads as zeros", n == 65536 && all_bytes(b, 65536, 0));
	R(fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536),
	  "fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536)");
	pfstat(fd, "fa", NULL);
	memset(c, 'C', 65536);
	R(pwrite(fd, c, 65536, 0), "pwrite(fd, 'C'x65536, 65536, 0)");
	R(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192),
	  "fallocate(fd, FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE, 4096, 8192)");
	pfstat(fd, "fa", NULL);
	n = R(pread(fd, b, 16384, 0), "pread(fd, buf, 16384, 0)");
	fact("punched 4096..12287 reads zeros, the rest 'C'",
	     n == 16384 && all_bytes(b, 4096, 'C') && all_bytes(b + 4096, 8192, 0) &&
		 all_bytes(b + 12288, 4096, 'C'));
	R(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 30001, 100),
	  "fallocate(fd, FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE, 30001, 100) (unaligned)");
	n = R(pread(fd, b, 102, 30000), "pread(fd, buf, 102, 30000)");
	fact("unaligned punch zeroed exactly 30001..30100",
	     n == 102 && b[0] == 'C' && all_bytes(b + 1, 100, 0) && b[101] == 'C');
	R(fallocate(fd, FALLOC_FL_ZERO_RANGE, 20000, 10000),
	  "fallocate(fd, FALLOC_FL_ZERO_RANGE, 20000, 10000)");
	n = R(pread(fd, b, 10002, 19999), "pread(fd, buf, 10002, 19999)");
	fact("zeroed exactly 20000..29999",
	     n == 10002 && b[0] == 'C' && all_bytes(b + 1, 10000, 0) && b[10001] == 'C');
	R(fallocate(fd, FALLOC_FL_ZERO_RANGE, 60000, 10000),
	  "fallocate(fd, FALLOC_FL_ZERO_RANGE, 60000, 10000) (past EOF)");
	pfstat(fd, "fa", NULL);
	R(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 69000, 5000),
	  "fallocate(fd, FALLOC_FL_ZERO_RANGE|FALLOC_FL_KEEP_SIZE, 69000, 5000)");
	pfstat(fd, "fa", NULL);
	R(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096),
	  "fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096) (no KEEP_SIZE)");
	R(fallocate(fd, 0, 0, 0), "fallocate(fd, 0, 0, 0)");
	R(fallocate(fd, 0, -1, 10), "fallocate(fd, 0, -1, 10)");
	R(fallocate(fd, 0, 100000, 4096), "fallocate(fd, 0, 100000, 4096) (extends)");
	pfstat(fd, "fa", NULL);
	fdr = RFD(open("fa", O_RDONLY), "open(\"fa\", O_RDONLY)");
	R(fallocate(fdr, 0, 0, 4096), "fallocate(O_RDONLY fd, 0, 0, 4096)");
	R(close(fdr), "close(fdr)");
	R(close(fd), "close(fd)");
	content("fa");
	free(b);
	free(c);
}

static void t_seek_data(void)
{
	int fd;
	char *d = malloc(8192);

	sec("lseek SEEK_DATA/SEEK_HOLE");
	fd = RFD(open("sparse", O_RDWR | O_CREAT | O_EXCL, 0644),
		 "open(\"sparse\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	memset(d, 'D', 8192);
	R(pwrite(fd, d, 8192, 0), "pwrite(fd, 'D'x8192, 8192, 0)");
	R(pwrite(fd, d, 8192, MiB), "pwrite(fd, 'D'x8192, 8192, 1MiB)");
	R(ftruncate(fd, 2 * MiB), "ftruncate(fd, 2MiB)");
	R(fsync(fd), "fsync(fd)");
	R(lseek(fd, 0, SEEK_DATA), "lseek(fd, 0, SEEK_DATA)");
	R(lseek(fd, 0, SEEK_HOLE), "lseek(fd, 0, SEEK_HOLE)");
	R(lseek(fd, 8192, SEEK_DATA), "lseek(fd, 8192, SEEK_DATA)");
	R(lseek(fd, 100000, SEEK_DATA), "lseek(fd, 100000, SEEK_DATA)");
	R(lseek(fd, MiB, SEEK_HOLE), "lseek(fd, 1MiB, SEEK_HOLE)");
	R(lseek(fd, MiB + 100, SEEK_HOLE), "lseek(fd, 1MiB+100, SEEK_HOLE)");
	R(lseek(fd, MiB + 8192, SEEK_DATA), "lseek(fd, 1MiB+8192, SEEK_DATA) (trailing hole)");
	R(lseek(fd, MiB + 8192, SEEK_HOLE), "lseek(fd, 1MiB+8192, SEEK_HOLE)");
	R(lseek(fd, 2 * MiB, SEEK_DATA), "lseek(fd, 2MiB, SEEK_DATA) (at EOF)");
	R(lseek(fd, 2 * MiB, SEEK_HOLE), "lseek(fd, 2MiB, SEEK_HOLE) (at EOF)");
	R(lseek(fd, 3 * MiB, SEEK_HOLE), "lseek(fd, 3MiB, SEEK_HOLE) (beyond EOF)");
	R(lseek(fd, -1, SEEK_DATA), "lseek(fd, -1, SEEK_DATA)");
	R(lseek(fd, 0, SEEK_CUR), "lseek(fd, 0, SEEK_CUR) (offset after the last seek)");
	R(close(fd), "close(fd)");
	free(d);
}

static void t_copy_file_range(void)
{
	int src, dst, dro;
	char *p = pattern(100000, 2), *b;
	loff_t oi, oo;
	long n;

	sec("copy_file_range");
	mkfile("cfr_src", p, 100000, 0644);
	src = RFD(open("cfr_src", O_RDONLY), "open(\"cfr_src\", O_RDONLY)");
	dst = RFD(open("cfr_dst", O_RDWR | O_CREAT | O_EXCL, 0644),
		  "open(\"cfr_dst\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	oi = 1000;
	oo = 500;
	R(copy_file_range(src, &oi, dst, &oo, 50000, 0),
	  "copy_file_range(src, &1000, dst, &500, 50000, 0)");
	note("off_in %lld off_out %lld", (long long)oi, (long long)oo);
	R(lseek(src, 0, SEEK_CUR), "lseek(src, 0, SEEK_CUR) (untouched)");
	pfstat(dst, "cfr_dst", NULL);
	n = slurp("cfr_dst", &b);
	fact("dst = 500 zeros + src[1000..51000)",
	     n == 50500 && all_bytes(b, 500, 0) && memcmp(b + 500, p + 1000, 50000) == 0);
	free(b);
	oi = 100000;
	oo = 0;
	R(copy_file_range(src, &oi, dst, &oo, 100, 0),
	  "copy_file_range(src, &EOF, dst, &0, 100, 0)");
	oi = 99990;
	oo = 60000;
	R(copy_file_range(src, &oi, dst, &oo, 100, 0),
	  "copy_file_range(src, &99990, dst, &60000, 100, 0) (crosses src EOF)");
	pfstat(dst, "cfr_dst", NULL);
	R(lseek(dst, 0, SEEK_END), "lseek(dst, 0, SEEK_END)");
	R(lseek(src, 10, SEEK_SET), "lseek(src, 10, SEEK_SET)");
	R(copy_file_range(src, NULL, dst, NULL, 1000, 0),
	  "copy_file_range(src, NULL, dst, NULL, 1000, 0)");
	R(lseek(src, 0, SEEK_CUR), "lseek(src, 0, SEEK_CUR)");
	R(lseek(dst, 0, SEEK_CUR), "lseek(dst, 0, SEEK_CUR)");
	oi = 0;
	oo = 100;
	R(copy_file_range(dst, &oi, dst, &oo, 1000, 0),
	  "copy_file_range(dst, &0, dst, &100, 1000, 0) (overlapping)");
	dro = RFD(open("cfr_dst", O_RDONLY), "open(\"cfr_dst\", O_RDONLY)");
	oi = 0;
	oo = 0;
	R(copy_file_range(src, &oi, dro, &oo, 10, 0),
	  "copy_file_range(src, &0, O_RDONLY fd, &0, 10, 0)");
	R(copy_file_range(src, &oi, dst, &oo, 10, 1), "copy_file_range(..., flags 1)");
	R(close(dro), "close(dro)");
	R(close(dst), "close(dst)");
	R(close(src), "close(src)");
	content("cfr_dst");
	free(p);
}

static void t_dirs(void)
{
	int fd;

	sec("mkdir, rmdir, unlink");
	R(mkdir("d1", 0755), "mkdir(\"d1\", 0755)");
	pstat("d1", NULL);
	R(mkdir("d1", 0755), "mkdir(\"d1\", 0755)");
	R(mkdir("f1", 0755), "mkdir(\"f1\", 0755) (a file)");
	R(mkdir("nodir/x", 0755), "mkdir(\"nodir/x\", 0755)");
	R(mkdir("f1/x", 0755), "mkdir(\"f1/x\", 0755)");
	R(mkdir("d1/sub", 0700), "mkdir(\"d1/sub\", 0700)");
	pstat("d1", NULL);
	pstat("d1/sub", NULL);
	fd = RFD(open("d1/file", O_WRONLY | O_CREAT | O_EXCL, 0644),
		 "open(\"d1/file\", O_WRONLY|O_CREAT|O_EXCL, 0644)");
	R(close(fd), "close(fd)");
	list_dir("d1");
	R(rmdir("d1"), "rmdir(\"d1\")");
	R(rmdir("f1"), "rmdir(\"f1\") (a file)");
	R(rmdir("missing"), "rmdir(\"missing\")");
	R(rmdir("d1/sub/."), "rmdir(\"d1/sub/.\")");
	R(rmdir("d1/sub/.."), "rmdir(\"d1/sub/..\")");
	R(unlink("d1"), "unlink(\"d1\")");
	R(unlink("missing"), "unlink(\"missing\")");
	R(unlink("d1/file/"), "unlink(\"d1/file/\")");
	R(rmdir("d1/sub"), "rmdir(\"d1/sub\")");
	pstat("d1", NULL);
	R(unlink("d1/file"), "unlink(\"d1/file\")");
	R(unlink("d1/file"), "unlink(\"d1/file\")");
	R(rmdir("d1"), "rmdir(\"d1\")");
	pstat("d1", NULL);
	R(mkdir("d1", 0777), "mkdir(\"d1\", 0777) (again, umask 022)");
	pstat("d1", NULL);
	R(mkdir("sticky", 01777), "mkdir(\"sticky\", 01777)");
	pstat("sticky", NULL);
	R(mkdir("d1/", 0755), "mkdir(\"d1/\", 0755)");
	R(mkdir("newdir/", 0755), "mkdir(\"newdir/\", 0755) (trailing slash)");
	pstat("newdir", NULL);
}

static void t_rename(void)
{
	int fd, fd2;
	struct stat a, b;

	sec("rename");
	mkfile("r1", "one", 3, 0644);
	mkfile("r2", "two", 3, 0600);
	R(rename("r1", "r2"), "rename(\"r1\", \"r2\") (over an existing file)");
	pstat("r1", NULL);
	pstat("r2", NULL);
	content("r2");
	R(rename("r2", "r2"), "rename(\"r2\", \"r2\")");
	R(rename("missing", "r3"), "rename(\"missing\", \"r3\")");
	R(mkdir("rd1", 0755), "mkdir(\"rd1\", 0755)");
	R(mkdir("rd2", 0755), "mkdir(\"rd2\", 0755)");
	R(mkdir("rde", 0755), "mkdir(\"rde\", 0755)");
	mkfile("rd1/x", "x", 1, 0644);
	mkfile("rd2/y", "y", 1, 0644);
	R(mkdir("rd2/sub", 0755), "mkdir(\"rd2/sub\", 0755)");
	R(rename("rd1", "rd2"), "rename(\"rd1\", \"rd2\") (over a non-empty dir)");
	R(rename("rd1", "rde"), "rename(\"rd1\", \"rde\") (over an empty dir)");
	pstat("rd1", NULL);
	pstat("rde/x", NULL);
	R(rename("r2", "rd2"), "rename(\"r2\", \"rd2\") (file over dir)");
	R(rename("rd2", "r2"), "rename(\"rd2\", \"r2\") (dir over file)");
	R(rename("rd2", "rd2/sub/inside"), "rename(\"rd2\", \"rd2/sub/inside\")");
	R(rename("rd2/sub/..", "x"), "rename(\"rd2/sub/..\", \"x\")");
	R(rename("r2", "nodir/r2"), "rename(\"r2\", \"nodir/r2\")");
	R(rename("r2", "r2/x"), "rename(\"r2\", \"r2/x\")");
	/* moving a directory between directories changes both link counts */
	pstat("rd2", NULL);
	R(rename("rd2/sub", "rde/sub"), "rename(\"rd2/sub\", \"rde/sub\")");
	pstat("rd2", NULL);
	pstat("rde", NULL);
	R(rename("rd2/y", "rde/y2"), "rename(\"rd2/y\", \"rde/y2\")");
	list_dir("rde");
	list_dir("rd2");

	sec("renameat2");
	mkfile("n1", "n-one", 5, 0644);
	mkfile("n2", "n-two", 5, 0644);
	R(renameat2(AT_FDCWD, "n1", AT_FDCWD, "n2", RENAME_NOREPLACE),
	  "renameat2(\"n1\", \"n2\", RENAME_NOREPLACE)");
	R(renameat2(AT_FDCWD, "n1", AT_FDCWD, "n3", RENAME_NOREPLACE),
	  "renameat2(\"n1\", \"n3\", RENAME_NOREPLACE)");
	pstat("n1", NULL);
	content("n3");
	R(renameat2(AT_FDCWD, "n2", AT_FDCWD, "n3", RENAME_EXCHANGE),
	  "renameat2(\"n2\", \"n3\", RENAME_EXCHANGE)");
	content("n2");
	content("n3");
	R(renameat2(AT_FDCWD, "n2", AT_FDCWD, "rde", RENAME_EXCHANGE),
	  "renameat2(\"n2\", \"rde\", RENAME_EXCHANGE) (file <-> dir)");
	pstat("n2", NULL);
	pstat("rde", NULL);
	pstat("n2/x", NULL);
	content("rde");
	R(renameat2(AT_FDCWD, "n3", AT_FDCWD, "missing", RENAME_EXCHANGE),
	  "renameat2(\"n3\", \"missing\", RENAME_EXCHANGE)");
	R(renameat2(AT_FDCWD, "n3", AT_FDCWD, "n2", RENAME_EXCHANGE | RENAME_NOREPLACE),
	  "renameat2(\"n3\", \"n2\", RENAME_EXCHANGE|RENAME_NOREPLACE)");
	R(renameat2(AT_FDCWD, "n3", AT_FDCWD, "n4", 0x80), "renameat2(\"n3\", \"n4\", 0x80)");

	sec("rename and open files");
	fd = RFD(open("n3", O_RDWR), "open(\"n3\", O_RDWR)");
	R(rename("n3", "moved"), "rename(\"n3\", \"moved\")");
	R(pwrite(fd, "MOVED", 5, 0), "pwrite(fd, \"MOVED\", 5, 0)");
	content("moved");
	mkfile("victim", "victim", 6, 0644);
	fd2 = RFD(open("victim", O_RDONLY), "open(\"victim\", O_RDONLY)");
	R(rename("moved", "victim"), "rename(\"moved\", \"victim\") (replaces victim)");
	R(pwrite(fd, "!", 1, 5), "pwrite(fd, \"!\", 1, 5)");
	pfstat(fd, "victim", NULL);
	pfstat(fd2, "replaced file, still open", NULL);
	{
		char old[8] = {0};

		R(pread(fd2, old, 6, 0), "pread(fd2, buf, 6, 0)");
		note("data \"%.6s\"", old);
	}
	R(close(fd2), "close(fd2)");
	R(close(fd), "close(fd)");
	content("victim");
	/* renaming one hard link onto another of the same inode does nothing */
	R(link("victim", "victim2"), "link(\"victim\", \"victim2\")");
	R(rename("victim", "victim2"), "rename(\"victim\", \"victim2\") (same inode)");
	plstat("victim", &a);
	plstat("victim2", &b);
	fact("both names are the same inode", a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	R(unlink("victim2"), "unlink(\"victim2\")");
}

static void t_link(void)
{
	int fa, fb;
	char buf[32];
	struct stat sa, sb;
	long n;

	sec("link");
	mkfile("l_a", "linkdata", 8, 0640);
	R(link("l_a", "l_b"), "link(\"l_a\", \"l_b\")");
	pstat("l_a", &sa);
	pstat("l_b", &sb);
	fact("l_a and l_b are the same inode", sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev);
	R(link("l_a", "l_b"), "link(\"l_a\", \"l_b\") (exists)");
	R(link("missing", "l_c"), "link(\"missing\", \"l_c\")");
	R(link("d1", "d1link"), "link(\"d1\", \"d1link\") (a dir)");
	R(link("l_a", "nodir/l"), "link(\"l_a\", \"nodir/l\")");
	R(link("l_a", "d1/l_a3"), "link(\"l_a\", \"d1/l_a3\")");
	pstat("l_a", NULL);
	/* both names open at once: a write through one is seen through the other */
	fa = RFD(open("l_a", O_RDWR), "open(\"l_a\", O_RDWR)");
	fb = RFD(open("l_b", O_RDONLY), "open(\"l_b\", O_RDONLY)");
	memset(buf, 0, sizeof(buf));
	R(pread(fb, buf, sizeof(buf), 0), "pread(fb, buf, 32, 0)");
	R(pwrite(fa, "LINK", 4, 0), "pwrite(fa, \"LINK\", 4, 0)");
	R(pwrite(fa, "++", 2, 8), "pwrite(fa, \"++\", 2, 8)");
	n = R(pread(fb, buf, sizeof(buf), 0), "pread(fb, buf, 32, 0)");
	note("data \"%.*s\"", n > 0 ? (int)n : 0, buf);
	pfstat(fb, "l_b", NULL);
	R(close(fa), "close(fa)");
	R(close(fb), "close(fb)");
	R(unlink("l_a"), "unlink(\"l_a\")");
	pstat("l_b", NULL);
	R(unlink("d1/l_a3"), "unlink(\"d1/l_a3\")");
	pstat("l_b", NULL);
	content("l_b");

	sec("link to a symlink");
	R(symlink("l_b", "sl_b"), "symlink(\"l_b\", \"sl_b\")");
	R(link("sl_b", "sl_hard"), "link(\"sl_b\", \"sl_hard\") (links the symlink itself)");
	plstat("sl_b", NULL);
	plstat("sl_hard", NULL);
	n = R(readlink("sl_hard", buf, sizeof(buf)), "readlink(\"sl_hard\")");
	note("target \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(linkat(AT_FDCWD, "sl_b", AT_FDCWD, "l_c", AT_SYMLINK_FOLLOW),
	  "linkat(\"sl_b\", \"l_c\", AT_SYMLINK_FOLLOW) (links the target)");
	plstat("l_c", NULL);
	pstat("l_b", NULL);
	plstat("sl_b", NULL);
	R(linkat(AT_FDCWD, "dangling_to_nothing", AT_FDCWD, "l_d", AT_SYMLINK_FOLLOW),
	  "linkat(\"dangling_to_nothing\", \"l_d\", AT_SYMLINK_FOLLOW)");
	R(unlink("sl_hard"), "unlink(\"sl_hard\")");
	plstat("sl_b", NULL);
}

static void t_symlink(void)
{
	char buf[5000], *pw, *direct;
	char longt[4001];
	int fd;
	long n, m;
	struct stat st;

	sec("symlink and readlink");
	R(symlink("target_missing", "dangling"), "symlink(\"target_missing\", \"dangling\")");
	plstat("dangling", NULL);
	pstat("dangling", NULL);
	n = R(readlink("dangling", buf, sizeof(buf)), "readlink(\"dangling\")");
	note("target \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(open("dangling", O_RDONLY), "open(\"dangling\", O_RDONLY)");
	R(open("dangling", O_WRONLY | O_CREAT | O_EXCL, 0644),
	  "open(\"dangling\", O_WRONLY|O_CREAT|O_EXCL, 0644)");
	fd = RFD(open("dangling", O_WRONLY | O_CREAT, 0640),
		 "open(\"dangling\", O_WRONLY|O_CREAT, 0640) (creates the target)");
	R(close(fd), "close(fd)");
	pstat("target_missing", NULL);
	pstat("dangling", NULL);
	R(symlink("x", "dangling"), "symlink(\"x\", \"dangling\") (exists)");
	R(symlink("x", "nodir/s"), "symlink(\"x\", \"nodir/s\")");
	R(symlink("", "empty_target"), "symlink(\"\", \"empty_target\")");

	R(symlink("/etc/passwd", "pw"), "symlink(\"/etc/passwd\", \"pw\")");
	plstat("pw", NULL);
	/* stat through the link follows it to the real /etc/passwd */
	{
		struct stat real;
		int r = stat("pw", &st), e = errno;

		stat("/etc/passwd", &real);
		printf("stat(\"pw\") = %d", r);
		if (r < 0)
			printf(" %s\n", ename(e));
		else
			printf(" type=%s mode=%04o uid=%u gid=%u\n", type_name(st.st_mode),
			       (unsigned)(st.st_mode & 07777), st.st_uid, st.st_gid);
		fact("stat via pw is /etc/passwd itself", r == 0 && st.st_ino == real.st_ino &&
							      st.st_dev == real.st_dev &&
							      st.st_size == real.st_size);
	}
	n = slurp("pw", &pw);
	m = slurp("/etc/passwd", &direct);
	fact("read via pw equals /etc/passwd", n > 0 && n == m && memcmp(pw, direct, n) == 0);
	free(pw);
	free(direct);
	n = R(readlink("pw", buf, 4), "readlink(\"pw\", buf, 4) (truncates)");
	note("target \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(open("pw", O_RDONLY | O_NOFOLLOW), "open(\"pw\", O_RDONLY|O_NOFOLLOW)");
	fd = RFD(open("pw", O_PATH | O_NOFOLLOW), "open(\"pw\", O_PATH|O_NOFOLLOW)");
	pfstat(fd, "O_PATH fd of pw", NULL);
	R(close(fd), "close(fd)");
	R(readlink("f1", buf, sizeof(buf)), "readlink(\"f1\") (a file)");
	R(readlink("missing", buf, sizeof(buf)), "readlink(\"missing\")");

	R(symlink("loop2", "loop1"), "symlink(\"loop2\", \"loop1\")");
	R(symlink("loop1", "loop2"), "symlink(\"loop1\", \"loop2\")");
	pstat("loop1", NULL);
	R(open("loop1", O_RDONLY), "open(\"loop1\", O_RDONLY)");

	R(symlink("d1", "sd"), "symlink(\"d1\", \"sd\") (to a dir)");
	fd = RFD(open("sd", O_RDONLY | O_DIRECTORY), "open(\"sd\", O_RDONLY|O_DIRECTORY)");
	R(close(fd), "close(fd)");
	fd = RFD(open("sd/through", O_WRONLY | O_CREAT, 0644),
		 "open(\"sd/through\", O_WRONLY|O_CREAT, 0644)");
	R(close(fd), "close(fd)");
	pstat("d1/through", NULL);
	R(rmdir("sd"), "rmdir(\"sd\")");
	R(unlink("sd/"), "unlink(\"sd/\")");
	R(unlink("d1/through"), "unlink(\"d1/through\")");

	memset(longt, 't', 4000);
	longt[4000] = 0;
	R(symlink(longt, "longlink"), "symlink(<4000 x 't'>, \"longlink\")");
	plstat("longlink", NULL);
	n = R(readlink("longlink", buf, sizeof(buf)), "readlink(\"longlink\")");
	fact("readlink returns the 4000-char target", n == 4000 && memcmp(buf, longt, 4000) == 0);
}

static void t_perm(void)
{
	int fd;
	struct stat st, st2;

	sec("chmod, fchmod, chown");
	mkfile("perm", "perm", 4, 0644);
	R(chmod("perm", 0600), "chmod(\"perm\", 0600)");
	pstat("perm", NULL);
	fd = RFD(open("perm", O_RDONLY), "open(\"perm\", O_RDONLY)");
	R(fchmod(fd, 04755), "fchmod(fd, 04755)");
	pfstat(fd, "perm", NULL);
	R(chown("perm", 101, 101), "chown(\"perm\", 101, 101) (clears set-uid)");
	pstat("perm", NULL);
	R(chown("perm", -1, -1), "chown(\"perm\", -1, -1)");
	R(fchown(fd, 0, -1), "fchown(fd, 0, -1)");
	pfstat(fd, "perm", NULL);
	R(fchown(fd, -1, 0), "fchown(fd, -1, 0)");
	pstat("perm", NULL);
	R(chmod("perm", 02755), "chmod(\"perm\", 02755)");
	R(chown("perm", 0, 0), "chown(\"perm\", 0, 0) (clears set-gid on group-exec)");
	pstat("perm", NULL);
	R(chmod("perm", 07777), "chmod(\"perm\", 07777)");
	pstat("perm", NULL);
	R(chmod("perm", 0644), "chmod(\"perm\", 0644)");
	R(chmod("missing", 0644), "chmod(\"missing\", 0644)");
	R(chown("missing", 0, 0), "chown(\"missing\", 0, 0)");
	R(close(fd), "close(fd)");
	R(chmod("d1", 0700), "chmod(\"d1\", 0700)");
	pstat("d1", NULL);
	R(chmod("d1", 0755), "chmod(\"d1\", 0755)");
	/* lchown changes the symlink, not its target */
	R(symlink("perm", "perm_link"), "symlink(\"perm\", \"perm_link\")");
	R(lchown("perm_link", 101, 101), "lchown(\"perm_link\", 101, 101)");
	plstat("perm_link", NULL);
	pstat("perm_link", NULL);
	R(chown("perm_link", 101, -1), "chown(\"perm_link\", 101, -1) (follows)");
	pstat("perm", NULL);
	R(chown("perm", 0, 0), "chown(\"perm\", 0, 0)");
	R(fchmodat(AT_FDCWD, "perm_link", 0600, AT_SYMLINK_NOFOLLOW),
	  "fchmodat(\"perm_link\", 0600, AT_SYMLINK_NOFOLLOW)");
	plstat("perm_link", NULL);
	R(chmod("perm_link", 0640), "chmod(\"perm_link\", 0640) (follows)");
	pstat("perm", NULL);
	/* ctime moves forward on a change of mode */
	{
		struct timespec ts[2] = {{OLD_TIME, 0}, {OLD_TIME, 0}};

		R(utimensat(AT_FDCWD, "perm", ts, 0), "utimensat(\"perm\", {OLD, OLD})");
		stat("perm", &st);
		usleep(30000);
		R(chmod("perm", 0644), "chmod(\"perm\", 0644)");
		stat("perm", &st2);
		fact("ctime advanced after chmod", ts_ns(st2.st_ctim) > ts_ns(st.st_ctim));
		fact("mtime unchanged by chmod", ts_eq(st2.st_mtim, OLD_TIME, 0));
	}

	sec("set-gid directory");
	R(mkdir("sgid", 0755), "mkdir(\"sgid\", 0755)");
	R(chown("sgid", 0, 101), "chown(\"sgid\", 0, 101)");
	R(chmod("sgid", 02775), "chmod(\"sgid\", 02775)");
	pstat("sgid", NULL);
	mkfile("sgid/file", "g", 1, 0644);
	pstat("sgid/file", NULL);
	R(mkdir("sgid/sub", 0755), "mkdir(\"sgid/sub\", 0755)");
	pstat("sgid/sub", NULL);
	R(symlink("file", "sgid/link"), "symlink(\"file\", \"sgid/link\")");
	plstat("sgid/link", NULL);
	R(mknod("sgid/fifo", S_IFIFO | 0644, 0), "mknod(\"sgid/fifo\", S_IFIFO|0644, 0)");
	plstat("sgid/fifo", NULL);
}

static void t_times(void)
{
	struct timespec ts[2];
	struct stat st, st2;
	long long t0, t1;
	int fd;

	sec("utimensat");
	mkfile("tm", "time", 4, 0644);
	ts[0] = (struct timespec){SET_ATIME, 123456789};
	ts[1] = (struct timespec){SET_MTIME, 987654321};
	R(utimensat(AT_FDCWD, "tm", ts, 0),
	  "utimensat(\"tm\", {SET_ATIME.123456789, SET_MTIME.987654321}, 0)");
	pstat("tm", &st);
	fact("atime == the value set", ts_eq(st.st_atim, SET_ATIME, 123456789));
	fact("mtime == the value set", ts_eq(st.st_mtim, SET_MTIME, 987654321));
	ts[0] = (struct timespec){0, UTIME_OMIT};
	ts[1] = (struct timespec){0, UTIME_NOW};
	t0 = now_ns();
	R(utimensat(AT_FDCWD, "tm", ts, 0), "utimensat(\"tm\", {UTIME_OMIT, UTIME_NOW}, 0)");
	t1 = now_ns();
	stat("tm", &st);
	fact("atime unchanged (UTIME_OMIT)", ts_eq(st.st_atim, SET_ATIME, 123456789));
	fact("mtime is now (UTIME_NOW)", ts_near(st.st_mtim, t0, t1));
	ts[0] = (struct timespec){0, UTIME_NOW};
	ts[1] = (struct timespec){SET_MTIME, 5};
	R(utimensat(AT_FDCWD, "tm", ts, 0), "utimensat(\"tm\", {UTIME_NOW, SET_MTIME.5}, 0)");
	t1 = now_ns();
	stat("tm", &st);
	fact("atime is now", ts_near(st.st_atim, t0, t1));
	fact("mtime == SET_MTIME.5", ts_eq(st.st_mtim, SET_MTIME, 5));
	ts[0] = ts[1] = (struct timespec){0, UTIME_OMIT};
	R(utimensat(AT_FDCWD, "tm", ts, 0), "utimensat(\"tm\", {UTIME_OMIT, UTIME_OMIT}, 0)");
	stat("tm", &st2);
	fact("both times unchanged",
	     ts_ns(st2.st_mtim) == ts_ns(st.st_mtim) && ts_ns(st2.st_atim) == ts_ns(st.st_atim));
	t0 = now_ns();
	R(utimensat(AT_FDCWD, "tm", NULL, 0), "utimensat(\"tm\", NULL, 0)");
	t1 = now_ns();
	stat("tm", &st);
	fact("atime and mtime are now", ts_near(st.st_atim, t0, t1) && ts_near(st.st_mtim, t0, t1));
	ts[0] = (struct timespec){SET_ATIME, 0};
	ts[1] = (struct timespec){SET_MTIME, 1000000000};
	R(utimensat(AT_FDCWD, "tm", ts, 0), "utimensat(\"tm\", {SET_ATIME, nsec 1e9}, 0)");
	R(utimensat(AT_FDCWD, "missing", NULL, 0), "utimensat(\"missing\", NULL, 0)");
	ts[0] = (struct timespec){-1, 0};
	ts[1] = (struct timespec){SET_MTIME, 0};
	R(utimensat(AT_FDCWD, "tm", ts, 0),
	  "utimensat(\"tm\", {-1.0, SET_MTIME}, 0) (before 1970)");
	stat("tm", &st);
	fact("atime == -1", ts_eq(st.st_atim, -1, 0));

	fd = RFD(open("tm", O_RDWR), "open(\"tm\", O_RDWR)");
	ts[0] = (struct timespec){SET_ATIME, 1};
	ts[1] = (struct timespec){SET_MTIME, 2};
	R(futimens(fd, ts), "futimens(fd, {SET_ATIME.1, SET_MTIME.2})");
	fstat(fd, &st);
	fact("futimens set both",
	     ts_eq(st.st_atim, SET_ATIME, 1) && ts_eq(st.st_mtim, SET_MTIME, 2));
	R(pwrite(fd, "T", 1, 0), "pwrite(fd, \"T\", 1, 0)");
	fstat(fd, &st);
	fact("mtime advanced after write", ts_ns(st.st_mtim) > (long long)SET_MTIME * 1000000000LL);
	fact("ctime advanced after write", st.st_ctim.tv_sec > SET_MTIME);
	R(futimens(fd, ts), "futimens(fd, {SET_ATIME.1, SET_MTIME.2})");
	{
		char c;

		R(pread(fd, &c, 1, 0), "pread(fd, buf, 1, 0)");
	}
	R(fsync(fd), "fsync(fd)");
	stat("tm", &st);
	fact("mtime unchanged by read and fsync", ts_eq(st.st_mtim, SET_MTIME, 2));
	R(close(fd), "close(fd)");
	stat("tm", &st);
	fact("mtime unchanged by close", ts_eq(st.st_mtim, SET_MTIME, 2));

	sec("utimensat on a symlink");
	R(symlink("tm", "tm_link"), "symlink(\"tm\", \"tm_link\")");
	ts[0] = (struct timespec){SET_ATIME + 7, 7};
	ts[1] = (struct timespec){SET_MTIME + 7, 7};
	R(utimensat(AT_FDCWD, "tm_link", ts, AT_SYMLINK_NOFOLLOW),
	  "utimensat(\"tm_link\", {SET_ATIME+7.7, SET_MTIME+7.7}, AT_SYMLINK_NOFOLLOW)");
	lstat("tm_link", &st);
	stat("tm", &st2);
	fact("symlink mtime == the value set", ts_eq(st.st_mtim, SET_MTIME + 7, 7));
	fact("symlink atime == the value set", ts_eq(st.st_atim, SET_ATIME + 7, 7));
	fact("target mtime unchanged", ts_eq(st2.st_mtim, SET_MTIME, 2));
	ts[1] = (struct timespec){SET_MTIME + 9, 9};
	R(utimensat(AT_FDCWD, "tm_link", ts, 0),
	  "utimensat(\"tm_link\", {SET_ATIME+7.7, SET_MTIME+9.9}, 0) (follows)");
	lstat("tm_link", &st);
	stat("tm", &st2);
	fact("target mtime == the value set", ts_eq(st2.st_mtim, SET_MTIME + 9, 9));
	fact("symlink mtime unchanged", ts_eq(st.st_mtim, SET_MTIME + 7, 7));
	R(utimensat(AT_FDCWD, "dangling", NULL, AT_SYMLINK_NOFOLLOW),
	  "utimensat(\"dangling\", NULL, AT_SYMLINK_NOFOLLOW)");

	sec("directory times");
	ts[0] = ts[1] = (struct timespec){OLD_TIME, 0};
	R(mkdir("tdir", 0755), "mkdir(\"tdir\", 0755)");
	R(utimensat(AT_FDCWD, "tdir", ts, 0), "utimensat(\"tdir\", {OLD, OLD}, 0)");
	mkfile("tdir/f", "", 0, 0644);
	stat("tdir", &st);
	fact("dir mtime advanced after create", st.st_mtim.tv_sec > OLD_TIME);
	R(utimensat(AT_FDCWD, "tdir", ts, 0), "utimensat(\"tdir\", {OLD, OLD}, 0)");
	R(unlink("tdir/f"), "unlink(\"tdir/f\")");
	stat("tdir", &st);
	fact("dir mtime advanced after unlink", st.st_mtim.tv_sec > OLD_TIME);
}

static void t_special(void)
{
	int fd, s, c;
	char buf[8];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	sec("mknod, FIFO, socket");
	R(mknod("fifo", S_IFIFO | 0640, 0), "mknod(\"fifo\", S_IFIFO|0640, 0)");
	plstat("fifo", NULL);
	R(mkfifo("fifo", 0600), "mkfifo(\"fifo\", 0600) (exists)");
	fd = RFD(open("fifo", O_RDWR | O_NONBLOCK), "open(\"fifo\", O_RDWR|O_NONBLOCK)");
	R(write(fd, "pipe", 4), "write(fd, \"pipe\", 4)");
	memset(buf, 0, sizeof(buf));
	R(read(fd, buf, sizeof(buf)), "read(fd, buf, 8)");
	note("data \"%.4s\"", buf);
	R(read(fd, buf, sizeof(buf)), "read(fd, buf, 8) (empty)");
	R(close(fd), "close(fd)");
	R(mknod("regnode", S_IFREG | 0600, 0), "mknod(\"regnode\", S_IFREG|0600, 0)");
	plstat("regnode", NULL);
	R(mknod("chrnode", S_IFCHR | 0600, makedev(1, 3)), "mknod(\"chrnode\", S_IFCHR|0600, 1:3)");
	plstat("chrnode", NULL);
	R(mknod("dirnode", S_IFDIR | 0755, 0), "mknod(\"dirnode\", S_IFDIR|0755, 0)");
	R(mknod("fifo", S_IFIFO | 0600, 0), "mknod(\"fifo\", S_IFIFO|0600, 0) (exists)");

	s = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, "sock");
	R(bind(s, (struct sockaddr *)&sa, sizeof(sa)), "bind(unix socket, \"sock\")");
	R(listen(s, 1), "listen(s, 1)");
	plstat("sock", NULL);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	R(connect(c, (struct sockaddr *)&sa, sizeof(sa)), "connect(unix socket, \"sock\")");
	close(c);
	close(s);
	R(open("sock", O_RDONLY), "open(\"sock\", O_RDONLY)");
	R(unlink("sock"), "unlink(\"sock\")");
}

static void t_xattr(void)
{
	char buf[4096], *big = pattern(2000, 3);
	long n;
	int fd;

	sec("extended attributes");
	mkfile("xa", "x", 1, 0644);
	R(setxattr("xa", "user.a", "v1", 2, 0), "setxattr(\"xa\", \"user.a\", \"v1\", 2, 0)");
	R(getxattr("xa", "user.a", NULL, 0), "getxattr(\"xa\", \"user.a\", NULL, 0)");
	n = R(getxattr("xa", "user.a", buf, sizeof(buf)), "getxattr(\"xa\", \"user.a\")");
	note("value \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(getxattr("xa", "user.a", buf, 1), "getxattr(\"xa\", \"user.a\", buf, 1)");
	R(setxattr("xa", "user.a", "v2", 2, XATTR_CREATE),
	  "setxattr(\"xa\", \"user.a\", \"v2\", 2, XATTR_CREATE)");
	R(setxattr("xa", "user.b", "v2", 2, XATTR_REPLACE),
	  "setxattr(\"xa\", \"user.b\", \"v2\", 2, XATTR_REPLACE)");
	R(setxattr("xa", "user.a", "v3", 2, XATTR_REPLACE),
	  "setxattr(\"xa\", \"user.a\", \"v3\", 2, XATTR_REPLACE)");
	R(setxattr("xa", "user.empty", "", 0, 0), "setxattr(\"xa\", \"user.empty\", \"\", 0, 0)");
	R(getxattr("xa", "user.empty", buf, sizeof(buf)), "getxattr(\"xa\", \"user.empty\")");
	R(setxattr("xa", "user.big", big, 2000, 0),
	  "setxattr(\"xa\", \"user.big\", <2000 bytes>, 0)");
	n = R(getxattr("xa", "user.big", buf, sizeof(buf)), "getxattr(\"xa\", \"user.big\")");
	fact("2000-byte value read back", n == 2000 && memcmp(buf, big, 2000) == 0);
	R(getxattr("xa", "user.missing", buf, sizeof(buf)), "getxattr(\"xa\", \"user.missing\")");
	R(getxattr("missing", "user.a", buf, sizeof(buf)), "getxattr(\"missing\", \"user.a\")");
	R(setxattr("xa", "trusted.t", "tv", 2, 0), "setxattr(\"xa\", \"trusted.t\", \"tv\", 2, 0)");
	R(setxattr("xa", "bogus.ns", "v", 1, 0), "setxattr(\"xa\", \"bogus.ns\", \"v\", 1, 0)");
	R(setxattr("xa", "user.", "v", 1, 0), "setxattr(\"xa\", \"user.\", \"v\", 1, 0)");
	R(setxattr("xa", "user.a", "v", 1, 0x10), "setxattr(\"xa\", \"user.a\", \"v\", 1, 0x10)");
	/* the list, sorted: names are NUL-separated */
	{
		char *names[16];
		int k = 0;

		n = R(listxattr("xa", NULL, 0), "listxattr(\"xa\", NULL, 0)");
		n = R(listxattr("xa", buf, sizeof(buf)), "listxattr(\"xa\")");
		for (long i = 0; i < n && k < 16; i += (long)strlen(buf + i) + 1)
			names[k++] = buf + i;
		qsort(names, k, sizeof(*names), cmp_str);
		for (int i = 0; i < k; i++)
			note("%s", names[i]);
		R(listxattr("xa", buf, 3), "listxattr(\"xa\", buf, 3)");
	}
	R(removexattr("xa", "user.a"), "removexattr(\"xa\", \"user.a\")");
	R(removexattr("xa", "user.a"), "removexattr(\"xa\", \"user.a\")");
	R(getxattr("xa", "user.a", buf, sizeof(buf)), "getxattr(\"xa\", \"user.a\")");
	R(removexattr("xa", "trusted.t"), "removexattr(\"xa\", \"trusted.t\")");
	fd = RFD(open("xa", O_RDONLY), "open(\"xa\", O_RDONLY)");
	R(fsetxattr(fd, "user.f", "fv", 2, 0), "fsetxattr(fd, \"user.f\", \"fv\", 2, 0)");
	n = R(fgetxattr(fd, "user.f", buf, sizeof(buf)), "fgetxattr(fd, \"user.f\")");
	note("value \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(flistxattr(fd, NULL, 0), "flistxattr(fd, NULL, 0)");
	R(fremovexattr(fd, "user.f"), "fremovexattr(fd, \"user.f\")");
	R(close(fd), "close(fd)");
	R(setxattr("d1", "user.d", "dv", 2, 0), "setxattr(\"d1\", \"user.d\", \"dv\", 2, 0)");
	n = R(getxattr("d1", "user.d", buf, sizeof(buf)), "getxattr(\"d1\", \"user.d\")");
	R(removexattr("d1", "user.d"), "removexattr(\"d1\", \"user.d\")");
	/* user.* is not allowed on symlinks; l* calls must not follow */
	R(symlink("xa", "xa_link"), "symlink(\"xa\", \"xa_link\")");
	R(lsetxattr("xa_link", "user.l", "lv", 2, 0),
	  "lsetxattr(\"xa_link\", \"user.l\", \"lv\", 2, 0)");
	R(lgetxattr("xa_link", "user.big", buf, sizeof(buf)),
	  "lgetxattr(\"xa_link\", \"user.big\")");
	R(getxattr("xa_link", "user.big", buf, sizeof(buf)),
	  "getxattr(\"xa_link\", \"user.big\") (follows)");
	R(setxattr("xa_link", "user.via", "v", 1, 0),
	  "setxattr(\"xa_link\", \"user.via\", \"v\", 1, 0) (follows)");
	R(getxattr("xa", "user.via", buf, sizeof(buf)), "getxattr(\"xa\", \"user.via\")");
	R(llistxattr("xa_link", buf, sizeof(buf)), "llistxattr(\"xa_link\")");
	R(lsetxattr("xa_link", "trusted.l", "lv", 2, 0),
	  "lsetxattr(\"xa_link\", \"trusted.l\", \"lv\", 2, 0)");
	n = R(lgetxattr("xa_link", "trusted.l", buf, sizeof(buf)),
	      "lgetxattr(\"xa_link\", \"trusted.l\")");
	R(getxattr("xa", "trusted.l", buf, sizeof(buf)), "getxattr(\"xa\", \"trusted.l\")");
	/* a symlink's own xattrs follow it through renames and links */
	R(symlink("xa", "xs1"), "symlink(\"xa\", \"xs1\")");
	R(lsetxattr("xs1", "trusted.a", "A", 1, 0),
	  "lsetxattr(\"xs1\", \"trusted.a\", \"A\", 1, 0)");
	R(rename("xs1", "xs2"), "rename(\"xs1\", \"xs2\")");
	R(lsetxattr("xs2", "trusted.b", "B", 1, 0),
	  "lsetxattr(\"xs2\", \"trusted.b\", \"B\", 1, 0)");
	R(lgetxattr("xs2", "trusted.a", buf, sizeof(buf)), "lgetxattr(\"xs2\", \"trusted.a\")");
	mkfile("xs1", "new", 3, 0644);
	R(lsetxattr("xs2", "trusted.c", "C", 1, 0),
	  "lsetxattr(\"xs2\", \"trusted.c\", \"C\", 1, 0)");
	R(getxattr("xs1", "trusted.c", buf, sizeof(buf)),
	  "getxattr(\"xs1\", \"trusted.c\") (the new file of the old name)");
	R(link("xs2", "xs3"), "link(\"xs2\", \"xs3\") (hard link of the symlink)");
	R(unlink("xs2"), "unlink(\"xs2\")");
	R(lsetxattr("xs3", "trusted.d", "D", 1, 0),
	  "lsetxattr(\"xs3\", \"trusted.d\", \"D\", 1, 0)");
	n = R(llistxattr("xs3", buf, sizeof(buf)), "llistxattr(\"xs3\")");
	R(lremovexattr("xs3", "trusted.a"), "lremovexattr(\"xs3\", \"trusted.a\")");
	R(mkdir("xd", 0755), "mkdir(\"xd\", 0755)");
	R(symlink("t", "xd/s"), "symlink(\"t\", \"xd/s\")");
	R(lsetxattr("xd/s", "trusted.e", "E", 1, 0),
	  "lsetxattr(\"xd/s\", \"trusted.e\", \"E\", 1, 0)");
	R(rename("xd", "xd2"), "rename(\"xd\", \"xd2\")");
	R(mkdir("xd", 0755), "mkdir(\"xd\", 0755)");
	R(symlink("t", "xd/s"), "symlink(\"t\", \"xd/s\") (a new symlink of the old path)");
	R(lsetxattr("xd2/s", "trusted.f", "F", 1, 0),
	  "lsetxattr(\"xd2/s\", \"trusted.f\", \"F\", 1, 0)");
	R(lgetxattr("xd2/s", "trusted.e", buf, sizeof(buf)), "lgetxattr(\"xd2/s\", \"trusted.e\")");
	R(lgetxattr("xd/s", "trusted.f", buf, sizeof(buf)), "lgetxattr(\"xd/s\", \"trusted.f\")");
	R(llistxattr("xd/s", buf, sizeof(buf)), "llistxattr(\"xd/s\")");
	R(mknod("xa_fifo", S_IFIFO | 0644, 0), "mknod(\"xa_fifo\", S_IFIFO|0644, 0)");
	R(setxattr("xa_fifo", "user.p", "pv", 2, 0),
	  "setxattr(\"xa_fifo\", \"user.p\", \"pv\", 2, 0)");
	R(setxattr("xa_fifo", "trusted.p", "pv", 2, 0),
	  "setxattr(\"xa_fifo\", \"trusted.p\", \"pv\", 2, 0)");
	R(getxattr("xa_fifo", "trusted.p", buf, sizeof(buf)),
	  "getxattr(\"xa_fifo\", \"trusted.p\")");
	free(big);
}

static void t_access(void)
{
	int fd;

	sec("access and faccessat (as root)");
	mkfile("acc_ro", "r", 1, 0444);
	mkfile("acc_rw", "r", 1, 0644);
	mkfile("acc_x", "x", 1, 0100);
	mkfile("acc_none", "n", 1, 0000);
	R(access("acc_ro", F_OK), "access(\"acc_ro\", F_OK)");
	R(access("acc_ro", R_OK), "access(\"acc_ro\", R_OK)");
	R(access("acc_ro", W_OK), "access(\"acc_ro\", W_OK)");
	R(access("acc_rw", X_OK), "access(\"acc_rw\", X_OK)");
	R(access("acc_x", X_OK), "access(\"acc_x\", X_OK)");
	R(access("acc_none", R_OK | W_OK), "access(\"acc_none\", R_OK|W_OK)");
	R(access("acc_none", X_OK), "access(\"acc_none\", X_OK)");
	R(access("missing", F_OK), "access(\"missing\", F_OK)");
	R(access("acc_rw/x", F_OK), "access(\"acc_rw/x\", F_OK)");
	R(access("d1", X_OK), "access(\"d1\", X_OK)");
	R(faccessat(AT_FDCWD, "acc_ro", W_OK, AT_EACCESS),
	  "faccessat(\"acc_ro\", W_OK, AT_EACCESS)");
	R(faccessat(AT_FDCWD, "acc_rw", X_OK, AT_EACCESS),
	  "faccessat(\"acc_rw\", X_OK, AT_EACCESS)");
	R(faccessat(AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW),
	  "faccessat(\"dangling\", F_OK, AT_SYMLINK_NOFOLLOW)");
	R(faccessat(AT_FDCWD, "loop1", F_OK, 0), "faccessat(\"loop1\", F_OK, 0)");
	fd = RFD(open("acc_none", O_RDWR), "open(\"acc_none\", O_RDWR) (root)");
	R(close(fd), "close(fd)");
	fd = RFD(open("acc_none", O_RDONLY | O_NOATIME), "open(\"acc_none\", O_RDONLY|O_NOATIME)");
	R(close(fd), "close(fd)");
}

static void t_statfs(void)
{
	struct statfs sf;
	int fd;
	long r;

	sec("statfs");
	r = R(statfs(".", &sf), "statfs(\".\")");
	fact("f_bsize > 0", r == 0 && sf.f_bsize > 0);
	fact("f_namelen == 255", r == 0 && sf.f_namelen == 255);
	fd = RFD(open("f1", O_RDONLY), "open(\"f1\", O_RDONLY)");
	r = R(fstatfs(fd, &sf), "fstatfs(fd)");
	fact("f_bsize > 0", r == 0 && sf.f_bsize > 0);
	R(close(fd), "close(fd)");
	R(statfs("missing", &sf), "statfs(\"missing\")");
}

static void t_readdir(void)
{
	char name[64];
	DIR *d;
	int n1 = 0, n2 = 0, nseen = 0;
	struct dirent *de;
	static char seen[300];

	sec("readdir");
	R(mkdir("many", 0755), "mkdir(\"many\", 0755)");
	for (int i = 0; i < 300; i++) {
		int fd;

		snprintf(name, sizeof(name), "many/entry_with_a_longish_name_%03d", i);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			printf("open(\"%s\") = -1 %s\n", name, ename(errno));
		else
			close(fd);
	}
	note("created 300 files in many/");
	d = opendir("many");
	while (d && (de = readdir(d))) {
		int k;

		n1++;
		if (sscanf(de->d_name, "entry_with_a_longish_name_%d", &k) == 1 && k >= 0 &&
		    k < 300 && !seen[k]) {
			seen[k] = 1;
			nseen++;
		}
	}
	if (d) {
		rewinddir(d);
		while ((de = readdir(d)))
			n2++;
		closedir(d);
	}
	note("readdir(\"many\") %d entries, %d distinct files, after rewinddir %d", n1, nseen, n2);
	for (int i = 0; i < 300; i += 2) {
		snprintf(name, sizeof(name), "many/entry_with_a_longish_name_%03d", i);
		if (unlink(name) < 0)
			printf("unlink(\"%s\") = -1 %s\n", name, ename(errno));
	}
	note("unlinked the even ones");
	n1 = 0;
	d = opendir("many");
	while (d && (de = readdir(d)))
		n1++;
	if (d)
		closedir(d);
	note("readdir(\"many\") %d entries", n1);
	list_dir(".");
	list_dir("d1");
	list_dir("sgid");
	R(try_opendir("f1"), "opendir(\"f1\")");
	R(try_opendir("missing"), "opendir(\"missing\")");
}

static void t_sync(void)
{
	int fd;

	sec("fsync and fdatasync");
	fd = RFD(open("f1", O_RDWR), "open(\"f1\", O_RDWR)");
	R(pwrite(fd, "synced", 6, 0), "pwrite(fd, \"synced\", 6, 0)");
	R(fsync(fd), "fsync(fd)");
	R(pwrite(fd, "data", 4, 6), "pwrite(fd, \"data\", 4, 6)");
	R(fdatasync(fd), "fdatasync(fd)");
	R(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE),
	  "sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)");
	R(posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) == 0 ? 0 : -1,
	  "posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED)");
	R(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 ? 0 : -1,
	  "posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)");
	R(close(fd), "close(fd)");
	content("f1");
	fd = RFD(open("f1", O_RDONLY), "open(\"f1\", O_RDONLY)");
	R(fsync(fd), "fsync(O_RDONLY fd)");
	R(fdatasync(fd), "fdatasync(O_RDONLY fd)");
	R(close(fd), "close(fd)");
	fd = RFD(open(".", O_RDONLY), "open(\".\", O_RDONLY)");
	R(fsync(fd), "fsync(dir fd)");
	R(fdatasync(fd), "fdatasync(dir fd)");
	R(close(fd), "close(fd)");
	fd = RFD(open("d1", O_RDONLY | O_DIRECTORY), "open(\"d1\", O_RDONLY|O_DIRECTORY)");
	R(fsync(fd), "fsync(dir fd)");
	pfstat(fd, "d1", NULL);
	R(close(fd), "close(fd)");
	R(fsync(-1), "fsync(-1)");

	sec("opening directories");
	R(open("d1", O_WRONLY), "open(\"d1\", O_WRONLY)");
	R(open("d1", O_RDWR), "open(\"d1\", O_RDWR)");
	R(open("d1", O_RDONLY | O_CREAT, 0644), "open(\"d1\", O_RDONLY|O_CREAT, 0644)");
	R(open("d1", O_RDONLY | O_CREAT | O_EXCL, 0644),
	  "open(\"d1\", O_RDONLY|O_CREAT|O_EXCL, 0644)");
	R(open("d1", O_RDONLY | O_TRUNC), "open(\"d1\", O_RDONLY|O_TRUNC)");
	fd = RFD(open("d1", O_RDONLY), "open(\"d1\", O_RDONLY)");
	{
		char c;

		R(read(fd, &c, 1), "read(dir fd, buf, 1)");
		R(write(fd, &c, 1), "write(dir fd, buf, 1)");
	}
	R(close(fd), "close(fd)");
	R(open("dangling", O_RDONLY | O_NOFOLLOW), "open(\"dangling\", O_RDONLY|O_NOFOLLOW)");
	R(open("sl_b", O_RDWR | O_NOFOLLOW), "open(\"sl_b\", O_RDWR|O_NOFOLLOW)");
	R(open("sl_b", O_RDONLY | O_NOFOLLOW | O_CREAT, 0644),
	  "open(\"sl_b\", O_RDONLY|O_NOFOLLOW|O_CREAT, 0644)");
	R(open("f1", O_RDONLY | O_DIRECTORY), "open(\"f1\", O_RDONLY|O_DIRECTORY)");
	R(open("f1/", O_RDONLY), "open(\"f1/\", O_RDONLY)");
	R(open("d1/", O_RDWR | O_CREAT, 0644), "open(\"d1/\", O_RDWR|O_CREAT, 0644)");
	R(open("newfile/", O_RDWR | O_CREAT, 0644), "open(\"newfile/\", O_RDWR|O_CREAT, 0644)");
}

static void t_names(void)
{
	char n255[256], n256[257], buf[300];
	int fd;

	sec("name length");
	memset(n255, 'n', 255);
	n255[255] = 0;
	memset(n256, 'n', 256);
	n256[256] = 0;
	R(open(n256, O_WRONLY | O_CREAT, 0644), "open(<256 x 'n'>, O_WRONLY|O_CREAT, 0644)");
	R(open(n256, O_RDONLY), "open(<256 x 'n'>, O_RDONLY)");
	R(mkdir(n256, 0755), "mkdir(<256 x 'n'>, 0755)");
	R(symlink("x", n256), "symlink(\"x\", <256 x 'n'>)");
	R(access(n256, F_OK), "access(<256 x 'n'>, F_OK)");
	fd = RFD(open(n255, O_WRONLY | O_CREAT | O_EXCL, 0644),
		 "open(<255 x 'n'>, O_WRONLY|O_CREAT|O_EXCL, 0644)");
	R(close(fd), "close(fd)");
	plstat(n255, NULL);
	R(rename(n255, n256), "rename(<255 x 'n'>, <256 x 'n'>)");
	R(link(n255, n256), "link(<255 x 'n'>, <256 x 'n'>)");
	snprintf(buf, sizeof(buf), "d1/%s", n255);
	R(rename(n255, buf), "rename(<255 x 'n'>, \"d1/\"<255 x 'n'>)");
	list_dir("d1");
	R(unlink(buf), "unlink(\"d1/\"<255 x 'n'>)");
	R(setxattr("f1",
		   "user.nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
		   "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
		   "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
		   "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
		   "v", 1, 0),
	  "setxattr(\"f1\", \"user.\"<256 x 'n'>, \"v\", 1, 0)");
}

static void t_umask(void)
{
	int fd;

	sec("umask");
	umask(077);
	note("umask(077)");
	fd = RFD(open("um_077", O_WRONLY | O_CREAT | O_EXCL, 0666),
		 "open(\"um_077\", O_WRONLY|O_CREAT|O_EXCL, 0666)");
	R(close(fd), "close(fd)");
	pstat("um_077", NULL);
	R(mkdir("um_077d", 0777), "mkdir(\"um_077d\", 0777)");
	pstat("um_077d", NULL);
	umask(0);
	note("umask(0)");
	fd = RFD(open("um_000", O_WRONLY | O_CREAT | O_EXCL, 0666),
		 "open(\"um_000\", O_WRONLY|O_CREAT|O_EXCL, 0666)");
	R(close(fd), "close(fd)");
	pstat("um_000", NULL);
	R(mkdir("um_000d", 0777), "mkdir(\"um_000d\", 0777)");
	pstat("um_000d", NULL);
	R(mknod("um_000p", S_IFIFO | 0666, 0), "mknod(\"um_000p\", S_IFIFO|0666, 0)");
	plstat("um_000p", NULL);
	R(symlink("x", "um_000l"), "symlink(\"x\", \"um_000l\")");
	plstat("um_000l", NULL);
	umask(027);
	note("umask(027)");
	fd = RFD(open("um_027", O_WRONLY | O_CREAT | O_EXCL, 0777),
		 "open(\"um_027\", O_WRONLY|O_CREAT|O_EXCL, 0777)");
	R(close(fd), "close(fd)");
	pstat("um_027", NULL);
	R(mkdir("um_027d", 01777), "mkdir(\"um_027d\", 01777)");
	pstat("um_027d", NULL);
	R(mknod("um_027p", S_IFIFO | 0777, 0), "mknod(\"um_027p\", S_IFIFO|0777, 0)");
	plstat("um_027p", NULL);
	umask(022);
	note("umask(022)");
}

static void t_wronly(void)
{
	int w, r2;
	char *a = malloc(3 * 8192), *b = malloc(3 * 8192);
	long n;

	sec("O_WRONLY writes read back through another fd");
	memset(a, 'a', 3 * 8192);
	mkfile("wo", a, 3 * 8192, 0644);
	w = RFD(open("wo", O_WRONLY), "open(\"wo\", O_WRONLY)");
	r2 = RFD(open("wo", O_RDONLY), "open(\"wo\", O_RDONLY)");
	/* partial-page writes: the page must be merged with what is on disk */
	R(pwrite(w, "WXYZ", 4, 100), "pwrite(w, \"WXYZ\", 4, 100)");
	R(pwrite(w, "tail", 4, 8190), "pwrite(w, \"tail\", 4, 8190) (crosses a page)");
	n = R(pread(r2, b, 3 * 8192, 0), "pread(r, buf, 24576, 0) (writer still open)");
	memcpy(a + 100, "WXYZ", 4);
	memcpy(a + 8190, "tail", 4);
	fact("reader sees the merged data", n == 3 * 8192 && memcmp(a, b, 3 * 8192) == 0);
	R(pwrite(w, "end", 3, 3 * 8192 + 5), "pwrite(w, \"end\", 3, 24581) (past EOF)");
	R(close(w), "close(w)");
	n = R(pread(r2, b, 3 * 8192, 8192), "pread(r, buf, 24576, 8192)");
	fact("hole before \"end\" is zeros", n == 16392 && memcmp(b, a + 8192, 16384) == 0 &&
						 all_bytes(b + 16384, 5, 0) &&
						 memcmp(b + 16389, "end", 3) == 0);
	R(close(r2), "close(r)");
	content("wo");
	/* a new O_WRONLY file, written and closed, then read */
	w = RFD(open("wo2", O_WRONLY | O_CREAT | O_EXCL, 0200),
		"open(\"wo2\", O_WRONLY|O_CREAT|O_EXCL, 0200)");
	R(pwrite(w, "abcdefgh", 8, 5000), "pwrite(w, \"abcdefgh\", 8, 5000)");
	R(pwrite(w, "12", 2, 5003), "pwrite(w, \"12\", 2, 5003)");
	R(close(w), "close(w)");
	content("wo2");
	pstat("wo2", NULL);

	sec("mmap");
	w = RFD(open("wo", O_RDWR), "open(\"wo\", O_RDWR)");
	{
		char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, w, 0);
		int e = errno;

		R(m == MAP_FAILED ? (errno = e, -1) : 0,
		  "mmap(8192, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)");
		if (m != MAP_FAILED) {
			fact("mapping shows the file", memcmp(m + 100, "WXYZ", 4) == 0);
			memcpy(m + 200, "MMAP", 4);
			R(msync(m, 8192, MS_SYNC), "msync(m, 8192, MS_SYNC)");
			R(munmap(m, 8192), "munmap(m, 8192)");
		}
	}
	R(close(w), "close(fd)");
	free(b);
	n = slurp("wo", &b);
	fact("write through the mapping reached the file",
	     n > 204 && memcmp(b + 200, "MMAP", 4) == 0);
	free(a);
	free(b);
}

/* t_direct() -- O_DIRECT with aligned buffers, offsets and lengths only:
 * FUSE does not enforce the backing device's alignment, so unaligned
 * O_DIRECT is not compared. */
static void t_direct(void)
{
	int fd, fb;
	char *b, *c;
	long n;

	sec("O_DIRECT (aligned)");
	if (posix_memalign((void **)&b, 4096, 65536) || posix_memalign((void **)&c, 4096, 65536))
		exit(2);
	memset(b, 'q', 65536);
	fd = RFD(open("direct", O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0644),
		 "open(\"direct\", O_RDWR|O_CREAT|O_EXCL|O_DIRECT, 0644)");
	R(pwrite(fd, b, 4096, 0), "pwrite(fd, 'q'x4096, 4096, 0)");
	R(pwrite(fd, b, 65536, 8192), "pwrite(fd, 'q'x65536, 65536, 8192)");
	pfstat(fd, "direct", NULL);
	n = R(pread(fd, c, 65536, 0), "pread(fd, buf, 65536, 0)");
	fact("4096 'q', 4096 zeros, then 'q'", n == 65536 && all_bytes(c, 4096, 'q') &&
						   all_bytes(c + 4096, 4096, 0) &&
						   all_bytes(c + 8192, 65536 - 8192, 'q'));
	n = R(pread(fd, c, 65536, 65536), "pread(fd, buf, 65536, 65536) (crosses EOF)");
	fact("the 8192 bytes before EOF are 'q'", n == 8192 && all_bytes(c, 8192, 'q'));
	R(pread(fd, c, 4096, 1 * MiB), "pread(fd, buf, 4096, 1MiB) (beyond EOF)");
	/* coherence with buffered I/O on another descriptor, both ways */
	fb = RFD(open("direct", O_RDWR), "open(\"direct\", O_RDWR) (buffered)");
	n = R(pread(fb, c, 4096, 8192), "pread(fb, buf, 4096, 8192)");
	fact("buffered read sees the direct write", n == 4096 && all_bytes(c, 4096, 'q'));
	memset(b, 'r', 8192);
	R(pwrite(fd, b, 8192, 8192),
	  "pwrite(fd, 'r'x8192, 8192, 8192) (direct, over cached pages)");
	n = R(pread(fb, c, 8192, 8192), "pread(fb, buf, 8192, 8192)");
	fact("buffered read sees the second direct write", n == 8192 && all_bytes(c, 8192, 'r'));
	R(pwrite(fb, "buffered", 8, 100), "pwrite(fb, \"buffered\", 8, 100)");
	n = R(pread(fd, c, 4096, 0), "pread(fd, buf, 4096, 0) (direct, after a buffered write)");
	fact("direct read sees the buffered write",
	     n == 4096 && memcmp(c + 100, "buffered", 8) == 0 && all_bytes(c, 100, 'q'));
	R(ftruncate(fd, 5000), "ftruncate(fd, 5000)");
	n = R(pread(fd, c, 8192, 0), "pread(fd, buf, 8192, 0)");
	R(fsync(fd), "fsync(fd)");
	R(close(fb), "close(fb)");
	R(close(fd), "close(fd)");
	content("direct");
	free(b);
	free(c);
}

static void t_unlinked_open(void)
{
	int fd, fd2;
	char buf[32];
	struct stat st;
	long n;

	sec("unlinked open files");
	fd = RFD(open("gone", O_RDWR | O_CREAT | O_EXCL, 0600),
		 "open(\"gone\", O_RDWR|O_CREAT|O_EXCL, 0600)");
	fd2 = RFD(open("gone", O_RDONLY), "open(\"gone\", O_RDONLY)");
	R(write(fd, "still here", 10), "write(fd, \"still here\", 10)");
	R(unlink("gone"), "unlink(\"gone\")");
	pstat("gone", NULL);
	pfstat(fd, "unlinked", NULL);
	R(pwrite(fd, "!", 1, 10), "pwrite(fd, \"!\", 1, 10)");
	n = R(pread(fd2, buf, sizeof(buf), 0), "pread(fd2, buf, 32, 0)");
	note("data \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(ftruncate(fd, 5), "ftruncate(fd, 5)");
	pfstat(fd2, "unlinked (other fd)", &st);
	R(fsync(fd), "fsync(fd)");
	R(fdatasync(fd), "fdatasync(fd)");
	R(fchmod(fd, 0640), "fchmod(fd, 0640)");
	R(fsetxattr(fd, "user.u", "u", 1, 0), "fsetxattr(fd, \"user.u\", \"u\", 1, 0)");
	R(fallocate(fd, 0, 0, 8192), "fallocate(fd, 0, 0, 8192)");
	pfstat(fd, "unlinked", NULL);
	R(close(fd2), "close(fd2)");
	R(close(fd), "close(fd)");
	/* a name reused while the old file is still open */
	fd = RFD(open("reuse", O_RDWR | O_CREAT | O_EXCL, 0644),
		 "open(\"reuse\", O_RDWR|O_CREAT|O_EXCL, 0644)");
	R(write(fd, "old", 3), "write(fd, \"old\", 3)");
	R(unlink("reuse"), "unlink(\"reuse\")");
	mkfile("reuse", "new!", 4, 0644);
	R(pwrite(fd, "OLD", 3, 0), "pwrite(fd, \"OLD\", 3, 0)");
	content("reuse");
	n = R(pread(fd, buf, sizeof(buf), 0), "pread(fd, buf, 32, 0)");
	note("data \"%.*s\"", n > 0 ? (int)n : 0, buf);
	R(close(fd), "close(fd)");
}

/* ------------------------------------------------------------------------ */
/* permission checks as an unprivileged user (child process) */

static void t_unpriv_child(uid_t uid)
{
	int fd;
	struct timespec ts[2] = {{SET_ATIME, 0}, {SET_MTIME, 0}};
	char buf[16];

	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		printf("cannot switch to uid %u: %s\n", (unsigned)uid, ename(errno));
		return;
	}
	note("now uid %u gid %u", (unsigned)getuid(), (unsigned)getgid());
	R(open("u/secret", O_RDONLY), "open(\"u/secret\", O_RDONLY) (root 0600)");
	fd = RFD(open("u/ro", O_RDONLY), "open(\"u/ro\", O_RDONLY) (root 0644)");
	R(close(fd), "close(fd)");
	R(open("u/ro", O_WRONLY), "open(\"u/ro\", O_WRONLY)");
	R(open("u/ro", O_RDONLY | O_TRUNC), "open(\"u/ro\", O_RDONLY|O_TRUNC)");
	R(truncate("u/ro", 0), "truncate(\"u/ro\", 0)");
	R(open("u/new", O_WRONLY | O_CREAT, 0644),
	  "open(\"u/new\", O_WRONLY|O_CREAT, 0644) (root dir 0755)");
	R(mkdir("u/newd", 0755), "mkdir(\"u/newd\", 0755)");
	R(symlink("x", "u/newl"), "symlink(\"x\", \"u/newl\")");
	R(unlink("u/ro"), "unlink(\"u/ro\")");
	R(rename("u/ro", "u/ro2"), "rename(\"u/ro\", \"u/ro2\")");
	R(link("u/ro", "u/pub/ro_link"), "link(\"u/ro\", \"u/pub/ro_link\")");
	R(access("u/secret", R_OK), "access(\"u/secret\", R_OK)");
	R(access("u/ro", R_OK), "access(\"u/ro\", R_OK)");
	R(access("u/ro", W_OK), "access(\"u/ro\", W_OK)");
	R(faccessat(AT_FDCWD, "u/ro", W_OK, AT_EACCESS), "faccessat(\"u/ro\", W_OK, AT_EACCESS)");
	R(chmod("u/ro", 0777), "chmod(\"u/ro\", 0777)");
	R(chown("u/ro", uid, -1), "chown(\"u/ro\", self, -1)");
	R(utimensat(AT_FDCWD, "u/ro", NULL, 0), "utimensat(\"u/ro\", NULL, 0)");
	R(utimensat(AT_FDCWD, "u/ro", ts, 0), "utimensat(\"u/ro\", {SET_ATIME, SET_MTIME}, 0)");
	R(setxattr("u/ro", "user.x", "v", 1, 0), "setxattr(\"u/ro\", \"user.x\", \"v\", 1, 0)");
	R(getxattr("u/ro", "user.root", buf, sizeof(buf)), "getxattr(\"u/ro\", \"user.root\")");
	R(getxattr("u/secret", "user.root", buf, sizeof(buf)),
	  "getxattr(\"u/secret\", \"user.root\") (no read permission)");
	R(try_opendir("u/closed"), "opendir(\"u/closed\") (root 0700)");
	R(access("u/closed/inner", F_OK), "access(\"u/closed/inner\", F_OK)");
	R(open("u/closed/inner", O_RDONLY), "open(\"u/closed/inner\", O_RDONLY)");
	R(access("u/noread/inner", R_OK), "access(\"u/noread/inner\", R_OK) (dir 0711)");
	R(try_opendir("u/noread"), "opendir(\"u/noread\") (root 0711)");
	R(setxattr("u/pub", "trusted.x", "v", 1, 0),
	  "setxattr(\"u/pub\", \"trusted.x\", \"v\", 1, 0)");

	/* creating in the world-writable sticky directory */
	fd = RFD(open("u/pub/mine", O_WRONLY | O_CREAT | O_EXCL, 0644),
		 "open(\"u/pub/mine\", O_WRONLY|O_CREAT|O_EXCL, 0644)");
	R(write(fd, "mine", 4), "write(fd, \"mine\", 4)");
	R(close(fd), "close(fd)");
	pstat("u/pub/mine", NULL);
	R(mkdir("u/pub/mydir", 0755), "mkdir(\"u/pub/mydir\", 0755)");
	pstat("u/pub/mydir", NULL);
	R(symlink("mine", "u/pub/mylink"), "symlink(\"mine\", \"u/pub/mylink\")");
	plstat("u/pub/mylink", NULL);
	R(mknod("u/pub/myfifo", S_IFIFO | 0644, 0), "mknod(\"u/pub/myfifo\", S_IFIFO|0644, 0)");
	plstat("u/pub/myfifo", NULL);
	R(link("u/pub/mine", "u/pub/mine2"), "link(\"u/pub/mine\", \"u/pub/mine2\")");
	R(rename("u/pub/mine2", "u/pub/mine3"), "rename(\"u/pub/mine2\", \"u/pub/mine3\")");
	pstat("u/pub/mine3", NULL);
	R(mknod("u/pub/mychr", S_IFCHR | 0600, makedev(1, 3)),
	  "mknod(\"u/pub/mychr\", S_IFCHR|0600, 1:3)");
	/* a creator may write a file it creates read-only */
	fd = RFD(open("u/pub/ro0", O_RDWR | O_CREAT | O_EXCL, 0444),
		 "open(\"u/pub/ro0\", O_RDWR|O_CREAT|O_EXCL, 0444)");
	R(write(fd, "x", 1), "write(fd, \"x\", 1)");
	R(close(fd), "close(fd)");
	R(open("u/pub/ro0", O_RDWR), "open(\"u/pub/ro0\", O_RDWR) (now read-only)");
	/* write-only file: an O_WRONLY open must work and partial writes merge */
	fd = RFD(open("u/pub/wo", O_WRONLY | O_CREAT | O_EXCL, 0200),
		 "open(\"u/pub/wo\", O_WRONLY|O_CREAT|O_EXCL, 0200)");
	R(write(fd, "abcdefgh", 8), "write(fd, \"abcdefgh\", 8)");
	R(close(fd), "close(fd)");
	fd = RFD(open("u/pub/wo", O_WRONLY), "open(\"u/pub/wo\", O_WRONLY)");
	R(pwrite(fd, "XY", 2, 3), "pwrite(fd, \"XY\", 2, 3)");
	R(close(fd), "close(fd)");
	R(open("u/pub/wo", O_RDONLY), "open(\"u/pub/wo\", O_RDONLY)");
	R(open("u/pub/wo", O_RDWR), "open(\"u/pub/wo\", O_RDWR)");
	/* sticky directory: someone else's file cannot be removed or renamed */
	R(unlink("u/pub/rootfile"), "unlink(\"u/pub/rootfile\") (sticky dir)");
	R(rename("u/pub/rootfile", "u/pub/stolen"), "rename(\"u/pub/rootfile\", \"u/pub/stolen\")");
	R(rename("u/pub/mine", "u/pub/rootfile"), "rename(\"u/pub/mine\", \"u/pub/rootfile\")");
	R(setxattr("u/pub/rootfile", "user.x", "v", 1, 0),
	  "setxattr(\"u/pub/rootfile\", \"user.x\", \"v\", 1, 0) (root 0666 in sticky dir)");
	fd =
	    RFD(open("u/pub/rootfile", O_WRONLY), "open(\"u/pub/rootfile\", O_WRONLY) (root 0666)");
	R(write(fd, "w", 1), "write(fd, \"w\", 1)");
	R(close(fd), "close(fd)");
	R(utimensat(AT_FDCWD, "u/pub/rootfile", NULL, 0),
	  "utimensat(\"u/pub/rootfile\", NULL, 0) (writable)");
	R(utimensat(AT_FDCWD, "u/pub/rootfile", ts, 0),
	  "utimensat(\"u/pub/rootfile\", {SET_ATIME, SET_MTIME}, 0) (not owner)");
	/* ownership and mode changes on one's own file */
	R(chown("u/pub/mine", 0, -1), "chown(\"u/pub/mine\", 0, -1)");
	R(chown("u/pub/mine", -1, 0), "chown(\"u/pub/mine\", -1, 0) (not a member of gid 0)");
	R(chown("u/pub/mine", uid, uid), "chown(\"u/pub/mine\", self, self)");
	R(utimensat(AT_FDCWD, "u/pub/mine", ts, 0),
	  "utimensat(\"u/pub/mine\", {SET_ATIME, SET_MTIME}, 0)");
	R(chmod("u/pub/mine", 06755), "chmod(\"u/pub/mine\", 06755)");
	pstat("u/pub/mine", NULL);
	/* a write by a non-root user clears set-uid and set-gid */
	fd = RFD(open("u/pub/mine", O_WRONLY), "open(\"u/pub/mine\", O_WRONLY)");
	R(write(fd, "M", 1), "write(fd, \"M\", 1)");
	R(close(fd), "close(fd)");
	pstat("u/pub/mine", NULL);
	R(chmod("u/pub/mine", 0644), "chmod(\"u/pub/mine\", 0644)");
	R(truncate("u/pub/mine", 2), "truncate(\"u/pub/mine\", 2)");
	R(setxattr("u/pub/mine", "user.mine", "v", 1, 0),
	  "setxattr(\"u/pub/mine\", \"user.mine\", \"v\", 1, 0)");
	R(setxattr("u/pub/mine", "trusted.mine", "v", 1, 0),
	  "setxattr(\"u/pub/mine\", \"trusted.mine\", \"v\", 1, 0)");
	list_dir("u/pub");
	R(rmdir("u/pub/mydir"), "rmdir(\"u/pub/mydir\")");
	R(rmdir("u/closed"), "rmdir(\"u/closed\")");
}

static void t_unpriv(uid_t uid)
{
	pid_t pid;
	int status;

	sec("permissions as an unprivileged user");
	R(mkdir("u", 0755), "mkdir(\"u\", 0755)");
	R(mkdir("u/pub", 0755), "mkdir(\"u/pub\", 0755)");
	R(chmod("u/pub", 01777), "chmod(\"u/pub\", 01777)");
	R(mkdir("u/closed", 0700), "mkdir(\"u/closed\", 0700)");
	mkfile("u/closed/inner", "in", 2, 0644);
	R(mkdir("u/noread", 0711), "mkdir(\"u/noread\", 0711)");
	mkfile("u/noread/inner", "in", 2, 0644);
	mkfile("u/secret", "secret", 6, 0600);
	R(setxattr("u/secret", "user.root", "r", 1, 0),
	  "setxattr(\"u/secret\", \"user.root\", \"r\", 1, 0)");
	mkfile("u/ro", "read-only", 9, 0644);
	R(setxattr("u/ro", "user.root", "r", 1, 0),
	  "setxattr(\"u/ro\", \"user.root\", \"r\", 1, 0)");
	mkfile("u/pub/rootfile", "root", 4, 0666);
	R(chmod("u/pub/rootfile", 0666), "chmod(\"u/pub/rootfile\", 0666)");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		t_unpriv_child(uid);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	note("child exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	content("u/pub/wo");
	pstat("u/pub/wo", NULL);
	content("u/pub/rootfile");
	pstat("u/pub/rootfile", NULL);
	content("u/ro");
	pstat("u/pub/ro0", NULL);
	content("u/pub/mine");
}

/* ------------------------------------------------------------------------ */
/* --dump: the tree, normalized */

static void dump(const char *path, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (lstat(path, &st) < 0) {
		printf("%s: lstat failed: %s\n", path, ename(errno));
		return;
	}
	printf("%s", depth ? path + 2 : ".");
	stat_fields(&st);
	if (S_ISREG(st.st_mode)) {
		char *b;
		long len = slurp(path, &b);

		printf(" fnv=%016llx", len < 0 ? 0ULL : (unsigned long long)fnv64(b, (size_t)len));
		free(b);
	} else if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t l = readlink(path, t, sizeof(t));

		printf(" -> \"%.*s\"", l > 40 ? 40 : (int)l, t);
	}
	{
		char x[4096];
		ssize_t l = llistxattr(path, x, sizeof(x));
		char *xn[32];
		int k = 0;

		for (ssize_t i = 0; i < l && k < 32; i += (ssize_t)strlen(x + i) + 1)
			xn[k++] = x + i;
		qsort(xn, k, sizeof(*xn), cmp_str);
		for (int i = 0; i < k; i++)
			printf(" xattr:%s", xn[i]);
	}
	printf("\n");
	if (!S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap)
			names = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*names));
		if (asprintf(&names[n++], "%s/%s", path, de->d_name) < 0)
			exit(2);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		dump(names[i], depth + 1);
		free(names[i]);
	}
	free(names);
}

/* ------------------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr, "usage: helper_syscalls [--unpriv UID] DIR\n"
			"       helper_syscalls --dump DIR\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *dir;
	bool do_dump = false;
	long unpriv = -1;
	DIR *d;
	struct dirent *de;

	while (argc > 2 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--dump")) {
			do_dump = true;
			argv++, argc--;
		} else if (!strcmp(argv[1], "--unpriv") && argc > 3) {
			char *end;

			unpriv = strtol(argv[2], &end, 10);
			if (*end || unpriv <= 0 || unpriv > 65534)
				return usage();
			argv += 2, argc -= 2;
		} else {
			return usage();
		}
	}
	if (argc != 2)
		return usage();
	dir = argv[1];
	if (chdir(dir) < 0) {
		fprintf(stderr, "helper_syscalls: cannot enter \"%s\": %s\n", dir, strerror(errno));
		return 2;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (do_dump) {
		dump(".", 0);
		return 0;
	}
	d = opendir(".");
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			fprintf(stderr, "helper_syscalls: \"%s\" is not empty\n", dir);
			return 2;
		}
	}
	if (d)
		closedir(d);
	umask(022);

	t_open_create();
	t_append();
	t_pread_pwrite();
	t_truncate();
	t_fallocate();
	t_seek_data();
	t_copy_file_range();
	t_dirs();
	t_rename();
	t_link();
	t_symlink();
	t_perm();
	t_times();
	t_special();
	t_xattr();
	t_access();
	t_statfs();
	t_sync();
	t_names();
	t_umask();
	t_wronly();
	t_direct();
	t_unlinked_open();
	if (unpriv > 0)
		t_unpriv((uid_t)unpriv);
	t_readdir();
	printf("\n== end\n");
	return 0;
}
