/*
 * test_dropbehind.c -- IOS_F_DROPBEHIND: a write or a read that asks not to
 * stay in the page cache (RWF_DONTCACHE) is made with the flag where the
 * file system takes it, and without it, the flag cleared from req->flags,
 * where the file system refuses it; either way the bytes are transferred in
 * full.  On every path: inline (the direct policy), the virtual back end,
 * and io_uring (queued, noop), each on a tmpfs (/dev/shm: refuses the flag)
 * and on the disk's file system under /var/tmp (ext4, xfs or btrfs on Linux
 * 6.14 or later take it: a write's pages are gone from the page cache once
 * an fdatasync has written them, a read's once it has copied them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

#define LEN (1 << 20)

/* takes_flag() -- whether the file system of @fd should take RWF_DONTCACHE:
 * ext4, xfs or btrfs, on Linux 6.14 or later. */
static bool takes_flag(int fd)
{
	struct statfs sf;
	struct utsname u;
	int major = 0, minor = 0;

	CHECK(fstatfs(fd, &sf) == 0 && uname(&u) == 0);
	if (sscanf(u.release, "%d.%d", &major, &minor) != 2 || major * 1000 + minor < 6014)
		return false;
	return sf.f_type == 0xEF53 /* ext4 */ || sf.f_type == 0x58465342 /* xfs */ ||
	       sf.f_type == 0x9123683E /* btrfs */;
}

/* resident() -- pages of @fd's first @len bytes in the page cache */
static size_t resident(int fd, size_t len)
{
	size_t pages = len / 4096, n = 0, i;
	unsigned char *vec = malloc(pages);
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	CHECK(vec && p != MAP_FAILED);
	if (!vec || p == MAP_FAILED)
		return pages;
	CHECK(mincore(p, len, vec) == 0);
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	free(vec);
	return n;
}

static void done_real(struct ios_req *r, ssize_t res)
{
	struct treq *t = (struct treq *)r;

	t->res = res;
	__atomic_store_n(&t->calls, t->calls + 1, __ATOMIC_RELEASE);
}

static void wait_done(struct treq *t)
{
	int k;

	for (k = 0; k < 5000 && !__atomic_load_n(&t->calls, __ATOMIC_ACQUIRE); k++)
		usleep(1000);
}

enum path { INLINE, VIRTUAL, URING };
static const char *const path_names[] = {"inline", "virtual", "io_uring"};

/* one() -- a 1 MiB write asking for drop-behind to a new file in @dir by
 * @path, then a read of it by the same path; checks the flag and the bytes. */
static void one(const char *dir, enum path path)
{
	char name[256], *back = malloc(LEN);
	struct ios_settings set;
	struct ios_sched *s;
	struct treq t;
	bool takes;
	int fd;

	snprintf(name, sizeof(name), "%s/test_dropbehind.XXXXXX", dir);
	fd = mkstemp(name);
	CHECK(fd >= 0 && back);
	if (fd < 0 || !back)
		return;
	unlink(name);
	takes = takes_flag(fd);
	settings(&set, path == INLINE ? IOS_POLICY_DIRECT : IOS_POLICY_NOOP, IOS_DEVICE_NONE);
	s = path == VIRTUAL ? ios_create_virtual(&set) : ios_create_with(&set);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(ios_runs_inline(s, IOS_CLASS_HEAP) == (path == INLINE));

	memset(&t, 0, sizeof(t));
	t.s = s;
	t.buf = malloc(LEN);
	memset(t.buf, 'd', LEN);
	t.iov = (struct iovec){t.buf, LEN};
	t.r = (struct ios_req){.fd = fd,
			       .fid.ino = 1,
			       .cls = IOS_CLASS_HEAP,
			       .dir = IOS_WRITE,
			       .flags = IOS_F_DROPBEHIND,
			       .len = LEN,
			       .iov = &t.iov,
			       .iovcnt = 1,
			       .done = done_real};
	ios_submit(s, &t.r);
	if (path == VIRTUAL)
		ios_virtual_advance(s, MS);
	wait_done(&t);
	CHECK(t.calls == 1 && t.res == LEN);
	CHECK(!!(t.r.flags & IOS_F_DROPBEHIND) == takes);
	CHECK(fdatasync(fd) == 0);
	if (takes) { /* written, then dropped (at most a few pages left behind) */
		int k;

		/* the kernel drops them when the writeback ends, which may be
		 * just after the fdatasync returned */
		for (k = 0; k < 100 && resident(fd, LEN) > 16; k++)
			usleep(10000);
		CHECK(resident(fd, LEN) <= 16);
	}
	printf("%s, %s: %s, %zu of %d pages resident after fdatasync\n", dir, path_names[path],
	       (t.r.flags & IOS_F_DROPBEHIND) ? "dropped behind" : "refused, written as usual",
	       resident(fd, LEN), LEN / 4096);
	/* read only now: a plain read of a page still under that writeback
	 * keeps it cached (the kernel clears the page's drop-behind mark) */
	CHECK(pread(fd, back, LEN, 0) == LEN && memcmp(back, t.buf, LEN) == 0);

	/* a read asking for it, of the file out of the page cache: the same
	 * bytes, and (where the flag is taken) none of them cached after */
	CHECK(posix_fadvise(fd, 0, LEN, POSIX_FADV_DONTNEED) == 0);
	t.calls = 0;
	memset(t.buf, 0, LEN);
	t.r.dir = IOS_READ;
	t.r.flags = IOS_F_DROPBEHIND;
	ios_submit(s, &t.r);
	if (path == VIRTUAL)
		ios_virtual_advance(s, 2 * MS);
	wait_done(&t);
	CHECK(t.calls == 1 && t.res == LEN && memcmp(back, t.buf, LEN) == 0);
	CHECK(!!(t.r.flags & IOS_F_DROPBEHIND) == takes);
	if (takes)
		CHECK(resident(fd, LEN) <= 16);
	printf("%s, %s: read %s, %zu of %d pages resident after it\n", dir, path_names[path],
	       (t.r.flags & IOS_F_DROPBEHIND) ? "dropped behind" : "refused, made as usual",
	       resident(fd, LEN), LEN / 4096);

	ios_destroy(s);
	free(t.buf);
	free(back);
	close(fd);
}

int main(void)
{
	static const char *const dirs[] = {"/dev/shm", "/var/tmp"};
	unsigned d;
	int p;

	for (d = 0; d < 2; d++)
		for (p = INLINE; p <= URING; p++)
			one(dirs[d], (enum path)p);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
