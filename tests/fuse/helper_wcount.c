/*
 * helper_wcount.c -- count the bytes processes write to the files below one
 * directory, per pgiofs I/O class, for tests/fuse/test_load.sh.
 *
 * One source, built twice by the Makefile:
 *
 *   helper_wcount.so (-DWCOUNT_SHIM, -fPIC -shared): an LD_PRELOAD shim.
 *     With PGIOFS_WCOUNT=FILE and PGIOFS_WCOUNT_ROOT=DIR in the environment,
 *     each process maps FILE (MAP_SHARED) when the shim is loaded and adds,
 *     with atomic additions, the result of every successful write(),
 *     writev(), pwrite(), pwritev(), pwritev2() (and their *64 names) on a
 *     descriptor whose /proc/self/fd link lies below DIR to the counters of
 *     the class pgiofs gives that path: the path below DIR is walked with
 *     pgiofs_classify() from fuse/classify.c, exactly as the daemon walks
 *     its lookups from the mount root.  A forked child inherits the mapping
 *     and an exec'd program maps FILE again, so one file counts a
 *     postmaster and all its children, killed ones included (a write is
 *     counted when it returns).  Loaded into the pgiofs daemon with DIR the
 *     backing directory, it counts what the daemon wrote to the backing
 *     store; with PGIOFS_WCOUNT_FUSE=1 too, it also counts the WRITE
 *     requests the daemon read from /dev/fuse and their bytes: everything
 *     the kernel sent it to write, whichever way (system call or io_uring)
 *     it then went to the backing store.
 *
 *   helper_wcount (a program): `helper_wcount --create FILE` makes a new,
 *     zeroed counter file; `helper_wcount FILE` prints one:
 *       CLASS BYTES PAGES CALLS     for each class, in enum ios_class order
 *       main-heap BYTES             see below
 *       main-index BYTES
 *       short CALLS
 *       stdio-unknown STREAMS
 *       fuse-write BYTES REQUESTS   WRITE requests read from /dev/fuse
 *
 * What is counted, and what must stay true:
 *   - BYTES are the system calls' results; PAGES the same writes rounded out
 *     to whole 4 KiB pages (the most a write can make the kernel's
 *     write-back send on); CALLS the calls with a positive result.
 *   - The path decides the class, so every relation main fork is "heap":
 *     pgiofs tells an index from a table by page content, per file, once
 *     (fuse/fs.c refine_class()).  main-heap and main-index count the bytes
 *     of main-fork writes of 8 KiB or more at an 8 KiB-aligned offset whose
 *     first page pgiofs_page_kind() calls a heap or an index page: pgiofs
 *     counts each such write, received unchanged, in that class.
 *   - short counts calls below DIR that wrote less than asked or failed.
 *   - glibc's stdio writes through its own internal write, which no shim
 *     can interpose.  So a stream fopen()ed for writing ("w" or "a", no
 *     "+") below DIR is counted at fclose(): flushed, then the bytes from
 *     where it started (0, or the end of file for "a") to where the
 *     descriptor's offset ends.  PostgreSQL writes such files (pgstat,
 *     relcache init files, postmaster.opts) sequentially from the start,
 *     which makes that exact.  A writable stream below DIR that cannot be
 *     counted so (opened for update, or the table of open streams is full)
 *     is counted in stdio-unknown instead, which test_load.sh requires to
 *     be 0.
 *   - errno is preserved across the bookkeeping.
 *
 * The counter file's layout is struct wcount (host byte order): it is
 * private to the two halves of this file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pgiofs.h"

#define WCOUNT_MAGIC 0x31544e4357534f49ull /* "IOSWCNT1" */
#define PAGE	     4096u
#define BLCKSZ	     8192u

struct wcount {
	uint64_t magic;
	uint64_t bytes[IOS_NCLASS];
	uint64_t pages[IOS_NCLASS];
	uint64_t calls[IOS_NCLASS];
	uint64_t main_heap;
	uint64_t main_index;
	uint64_t short_calls;
	uint64_t stdio_unknown;
	uint64_t fuse_write_bytes; /* WRITE requests read from /dev/fuse */
	uint64_t fuse_writes;
};

#ifdef WCOUNT_SHIM

/* built with -fvisibility=hidden: only the interposed calls are exported */
#define EXPORT __attribute__((visibility("default")))

static struct wcount *wc; /* NULL: not counting in this process */
static char root[PATH_MAX];
static size_t rootlen;
static bool count_fuse; /* PGIOFS_WCOUNT_FUSE=1: the daemon's requests */

static void add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* real() -- the next definition of @name (libc's), looked up once. */
static void *real(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		if (!p)
			abort(); /* a libc without it: nothing sensible to do */
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}
/* REAL(ssize_t, write, (int, const void *, size_t)) declares real_write */
#define REAL(ret, name, params)                                                                    \
	static void *name##_slot;                                                                  \
	ret(*real_##name) params = (ret(*) params)real(&name##_slot, #name)

__attribute__((constructor)) static void wcount_init(void)
{
	const char *file = getenv("PGIOFS_WCOUNT"), *dir = getenv("PGIOFS_WCOUNT_ROOT");
	struct wcount *m;
	int fd;

	if (!file || !dir || !realpath(dir, root))
		return;
	rootlen = strlen(root);
	count_fuse = getenv("PGIOFS_WCOUNT_FUSE") && strcmp(getenv("PGIOFS_WCOUNT_FUSE"), "1") == 0;
	fd = open(file, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	if (m->magic != WCOUNT_MAGIC) {
		munmap(m, sizeof(*m));
		return;
	}
	wc = m;
}

/* fd_class() -- the pgiofs class of the file open on @fd, or -1 if it is
 * not below the root. */
static int fd_class(int fd)
{
	static const char deleted[] = " (deleted)";
	char link[32], path[PATH_MAX], *p, *slash;
	enum pgiofs_dirkind kind = PGIOFS_DIR_OTHER;
	enum ios_class cls = IOS_CLASS_OTHER;
	size_t dl = sizeof(deleted) - 1;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	/* written after unlink: pgiofs still has the open file and its class */
	if ((size_t)n > dl && strcmp(path + n - dl, deleted) == 0)
		path[n - dl] = '\0';
	if (strncmp(path, root, rootlen) != 0 || path[rootlen] != '/')
		return -1;
	for (p = path + rootlen + 1;; p = slash + 1) {
		slash = strchr(p, '/');
		if (!slash) {
			pgiofs_classify(kind, p, false, &kind, &cls);
			return (int)cls;
		}
		*slash = '\0';
		pgiofs_classify(kind, p, true, &kind, &cls);
	}
}

/* account() -- a write on @fd of @want bytes at @off (-1: the descriptor's
 * offset, read afterwards) returned @res; @first is the first contiguous
 * piece of its data (@firstlen bytes, NULL if none). */
static void account(int fd, off_t off, size_t want, ssize_t res, const void *first, size_t firstlen)
{
	int saved = errno, c;
	uint64_t end;
	enum ios_class kind;

	if (!wc || (c = fd_class(fd)) < 0) {
		errno = saved;
		return;
	}
	if (res < 0 || (size_t)res < want)
		add(&wc->short_calls, 1);
	if (res > 0) {
		if (off < 0) {
			off = lseek(fd, 0, SEEK_CUR) - (off_t)res;
			if (off < 0)
				off = 0; /* not seekable: round from 0 */
		}
		end = (uint64_t)off + (uint64_t)res;
		add(&wc->bytes[c], (uint64_t)res);
		add(&wc->pages[c], (end + PAGE - 1) / PAGE * PAGE - (uint64_t)off / PAGE * PAGE);
		add(&wc->calls[c], 1);
		if (c == IOS_CLASS_HEAP && first && firstlen >= BLCKSZ && want >= BLCKSZ &&
		    off % BLCKSZ == 0 && pgiofs_page_kind(first, BLCKSZ, &kind, NULL) == 0)
			add(kind == IOS_CLASS_INDEX ? &wc->main_index : &wc->main_heap,
			    (uint64_t)res);
	}
	errno = saved;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	int i;

	for (i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, (int, const void *, size_t));
	ssize_t r = real_write(fd, buf, n);

	account(fd, -1, n, r, buf, n);
	return r;
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
	ssize_t r = real_pwrite(fd, buf, n, off);

	account(fd, off, n, r, buf, n);
	return r;
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	REAL(ssize_t, pwrite64, (int, const void *, size_t, off64_t));
	ssize_t r = real_pwrite64(fd, buf, n, off);

	account(fd, off, n, r, buf, n);
	return r;
}

static const void *iov_first(const struct iovec *iov, int cnt, size_t *len)
{
	*len = cnt > 0 ? iov[0].iov_len : 0;
	return cnt > 0 ? iov[0].iov_base : NULL;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, writev, (int, const struct iovec *, int));
	ssize_t r = real_writev(fd, iov, cnt);
	size_t fl;
	const void *f = iov_first(iov, cnt, &fl);

	account(fd, -1, iov_total(iov, cnt), r, f, fl);
	return r;
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
	ssize_t r = real_pwritev(fd, iov, cnt, off);
	size_t fl;
	const void *f = iov_first(iov, cnt, &fl);

	account(fd, off, iov_total(iov, cnt), r, f, fl);
	return r;
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	REAL(ssize_t, pwritev64, (int, const struct iovec *, int, off64_t));
	ssize_t r = real_pwritev64(fd, iov, cnt, off);
	size_t fl;
	const void *f = iov_first(iov, cnt, &fl);

	account(fd, off, iov_total(iov, cnt), r, f, fl);
	return r;
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	REAL(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int));
	ssize_t r = real_pwritev2(fd, iov, cnt, off, flags);
	size_t fl;
	const void *f = iov_first(iov, cnt, &fl);

	/* off -1: the descriptor's offset, as for writev() */
	account(fd, off, iov_total(iov, cnt), r, f, fl);
	return r;
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	REAL(ssize_t, pwritev64v2, (int, const struct iovec *, int, off64_t, int));
	ssize_t r = real_pwritev64v2(fd, iov, cnt, off, flags);
	size_t fl;
	const void *f = iov_first(iov, cnt, &fl);

	account(fd, off, iov_total(iov, cnt), r, f, fl);
	return r;
}

/* ---- requests the daemon reads from /dev/fuse ---------------------------- */

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	REAL(ssize_t, read, (int, void *, size_t));
	ssize_t r = real_read(fd, buf, n);
	const struct fuse_in_header *in = buf;
	int saved = errno;
	struct stat st;

	if (wc && count_fuse && r >= (ssize_t)(sizeof(*in) + sizeof(struct fuse_write_in)) &&
	    in->opcode == FUSE_WRITE && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
	    st.st_rdev == makedev(10, 229)) { /* /dev/fuse or a clone of it */
		add(&wc->fuse_write_bytes, ((const struct fuse_write_in *)(in + 1))->size);
		add(&wc->fuse_writes, 1);
	}
	errno = saved;
	return r;
}

/* ---- stdio streams: counted at fclose() ---------------------------------- */

#define MAX_STREAMS 64

static struct {
	FILE *f;
	off_t start;
} streams[MAX_STREAMS];
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

/* track() -- remember @f, just opened with @mode, if it writes below the
 * root. */
static void track(FILE *f, const char *mode)
{
	int saved = errno, fd, i;
	off_t start = 0;

	if (!wc || !f || (mode[0] == 'r' && !strchr(mode, '+')))
		goto out;
	fd = fileno(f);
	if (fd_class(fd) < 0)
		goto out;
	if (strchr(mode, '+') || (mode[0] != 'w' && mode[0] != 'a')) {
		add(&wc->stdio_unknown, 1);
		goto out;
	}
	if (mode[0] == 'a')
		start = lseek(fd, 0, SEEK_END);
	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS && streams[i].f; i++)
		;
	if (i < MAX_STREAMS) {
		streams[i].f = f;
		streams[i].start = start;
	} else {
		add(&wc->stdio_unknown, 1);
	}
	pthread_mutex_unlock(&streams_lock);
out:
	errno = saved;
}

/* untrack() -- forget @f; its start offset, or -1 if it was not tracked. */
static off_t untrack(FILE *f)
{
	off_t start = -1;
	int i;

	if (!wc)
		return -1;
	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i].f == f) {
			streams[i].f = NULL;
			start = streams[i].start;
			break;
		}
	pthread_mutex_unlock(&streams_lock);
	return start;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	REAL(FILE *, fopen, (const char *, const char *));
	FILE *f = real_fopen(path, mode);

	track(f, mode);
	return f;
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	REAL(FILE *, fopen64, (const char *, const char *));
	FILE *f = real_fopen64(path, mode);

	track(f, mode);
	return f;
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *old)
{
	REAL(FILE *, freopen, (const char *, const char *, FILE *));
	FILE *f;

	untrack(old); /* its buffered bytes are not counted: see stdio-unknown */
	f = real_freopen(path, mode, old);
	track(f, mode);
	return f;
}

EXPORT int fclose(FILE *f)
{
	REAL(int, fclose, (FILE *));
	off_t start = f ? untrack(f) : -1;

	if (start >= 0) {
		int saved = errno;
		off_t end;

		fflush(f);
		end = lseek(fileno(f), 0, SEEK_CUR);
		errno = saved;
		if (end >= start)
			account(fileno(f), start, (size_t)(end - start), end - start, NULL, 0);
		else
			add(&wc->stdio_unknown, 1);
	}
	return real_fclose(f);
}

#else /* the reader */

static int usage(void)
{
	fprintf(stderr, "usage: helper_wcount --create FILE | helper_wcount FILE\n");
	return 2;
}

static int create(const char *path)
{
	struct wcount w;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

	memset(&w, 0, sizeof(w));
	w.magic = WCOUNT_MAGIC;
	if (fd < 0 || write(fd, &w, sizeof(w)) != (ssize_t)sizeof(w) || close(fd) < 0) {
		fprintf(stderr, "helper_wcount: cannot create \"%s\": %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int print(const char *path)
{
	struct wcount w;
	int fd = open(path, O_RDONLY), c;
	ssize_t n = fd < 0 ? -1 : read(fd, &w, sizeof(w));

	if (n != (ssize_t)sizeof(w) || w.magic != WCOUNT_MAGIC) {
		fprintf(stderr, "helper_wcount: \"%s\" is not a counter file%s%s\n", path,
			n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		return 1;
	}
	close(fd);
	for (c = 0; c < IOS_NCLASS; c++)
		printf("%s %llu %llu %llu\n", ios_class_name((enum ios_class)c),
		       (unsigned long long)w.bytes[c], (unsigned long long)w.pages[c],
		       (unsigned long long)w.calls[c]);
	printf("main-heap %llu\nmain-index %llu\nshort %llu\nstdio-unknown %llu\n",
	       (unsigned long long)w.main_heap, (unsigned long long)w.main_index,
	       (unsigned long long)w.short_calls, (unsigned long long)w.stdio_unknown);
	printf("fuse-write %llu %llu\n", (unsigned long long)w.fuse_write_bytes,
	       (unsigned long long)w.fuse_writes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--create") == 0)
		return create(argv[2]);
	if (argc == 2 && argv[1][0] != '-')
		return print(argv[1]);
	return usage();
}

#endif
