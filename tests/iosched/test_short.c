/*
 * test_short.c -- a backing store that fails part-way through a write: the
 * write fails with the store's own error and never completes with a short
 * count (a writer such as the kernel's writeback looks at the error, not
 * the count, and would lose the tail).  The file size limit (RLIMIT_FSIZE)
 * makes a write that crosses it write up to the limit and then fail with
 * EFBIG, like a filesystem filling up in the middle of a write, without a
 * mount.  On every path:
 *   - inline ("direct", and WAL with wal_inline): -EFBIG, the bytes below
 *     the limit written;
 *   - queued, virtual back end and io_uring, one request and a merged
 *     transfer of four: the members wholly below the limit succeed in full,
 *     the one cut short and the one after it get -EFBIG (not a short count,
 *     not EIO);
 *   - reads are still short at the end of the file, not errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

#define BLK   4096
#define LIMIT (2 * BLK + 2148) /* inside the third block */

/* wait_done() -- a real scheduler: until @t (n of them) completed. */
static void wait_done(struct treq *t, int n)
{
	int i, k;

	for (k = 0; k < 5000; k++) {
		for (i = 0; i < n && __atomic_load_n(&t[i].calls, __ATOMIC_ACQUIRE); i++)
			;
		if (i == n)
			return;
		usleep(1000);
	}
}

/* done_real() -- on_done for a real scheduler, which has no virtual clock. */
static void done_real(struct ios_req *r, ssize_t res)
{
	struct treq *t = (struct treq *)r;

	t->res = res;
	t->order = ++completion_counter; /* the dispatcher thread only */
	__atomic_store_n(&t->calls, t->calls + 1, __ATOMIC_RELEASE);
}

/* fill() -- @t as a write of @len bytes of @c at @off on @fd (not submitted). */
static void fill(struct treq *t, struct ios_sched *s, int fd, enum ios_class cls, off_t off,
		 size_t len, char c)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->buf = malloc(len);
	memset(t->buf, c, len);
	t->iov.iov_base = t->buf;
	t->iov.iov_len = len;
	t->r.fd = fd;
	t->r.fid.ino = 1;
	t->r.cls = cls;
	t->r.dir = IOS_WRITE;
	t->r.off = off;
	t->r.len = len;
	t->r.iov = &t->iov;
	t->r.iovcnt = 1;
	t->r.done = done_real;
}

static off_t file_size(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

/* the inline path: one write across the limit */
static void test_inline(int policy, enum ios_class cls)
{
	struct ios_settings set;
	struct ios_sched *s;
	struct treq t;
	int fd = tmpfile_fd();

	settings(&set, policy, IOS_DEVICE_NONE);
	s = ios_create_with(&set);
	CHECK(s && ios_runs_inline(s, cls));
	fill(&t, s, fd, cls, 0, 4 * BLK, 'i');
	ios_submit(s, &t.r);
	CHECK(t.calls == 1 && t.res == -EFBIG);
	CHECK(file_size(fd) == LIMIT); /* what fitted was written */
	free(t.buf);
	ios_destroy(s);
	close(fd);
}

/* check_merged() -- four 4 KiB writes from 0, one transfer: 2 in full, 2 EFBIG */
static void check_merged(struct treq *t, int fd)
{
	char buf[BLK];
	int i;

	for (i = 0; i < 4; i++)
		CHECK(t[i].calls == 1);
	CHECK(t[0].res == BLK && t[1].res == BLK);
	CHECK(t[2].res == -EFBIG && t[3].res == -EFBIG);
	CHECK(file_size(fd) == LIMIT);
	CHECK(pread(fd, buf, BLK, BLK) == BLK && buf[0] == 'b' && buf[BLK - 1] == 'b');
	for (i = 0; i < 4; i++)
		free(t[i].buf);
}

/* the virtual back end: a single write, and a merged transfer */
static void test_virtual(void)
{
	struct ios_settings set;
	struct ios_counters c;
	struct ios_sched *s;
	struct treq t[4];
	char buf[4 * BLK];
	int fd = tmpfile_fd(), i;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_NONE);
	s = ios_create_virtual(&set);
	fill(&t[0], s, fd, IOS_CLASS_HEAP, BLK, 3 * BLK, 's');
	ios_submit(s, &t[0].r);
	ios_virtual_advance(s, MS);
	CHECK(t[0].calls == 1 && t[0].res == -EFBIG);
	CHECK(file_size(fd) == LIMIT);
	free(t[0].buf);
	CHECK(ftruncate(fd, 0) == 0);

	for (i = 0; i < 4; i++) {
		fill(&t[i], s, fd, IOS_CLASS_HEAP, (off_t)i * BLK, BLK, (char)('a' + i));
		ios_submit(s, &t[i].r);
	}
	ios_virtual_advance(s, 2 * MS);
	ios_get_counters(s, &c);
	CHECK(c.transfers == 2 && c.merged == 3); /* the four were one transfer */
	check_merged(t, fd);

	/* a read across the end of the file is short, not an error */
	memset(&t[0], 0, sizeof(t[0]));
	t[0].s = s;
	t[0].iov = (struct iovec){buf, sizeof(buf)};
	t[0].r = (struct ios_req){.fd = fd,
				  .cls = IOS_CLASS_HEAP,
				  .dir = IOS_READ,
				  .off = BLK,
				  .len = sizeof(buf),
				  .iov = &t[0].iov,
				  .iovcnt = 1,
				  .done = done_real};
	ios_submit(s, &t[0].r);
	ios_virtual_advance(s, 3 * MS);
	CHECK(t[0].calls == 1 && t[0].res == LIMIT - BLK);
	ios_destroy(s);
	close(fd);
}

/* io_uring: a single write, and a merged transfer.  To have the four
 * writes merged, they are queued behind a read of a pipe that holds the
 * only request slot until a byte is written to the pipe. */
static void test_uring(void)
{
	struct ios_settings set;
	struct ios_sched *s;
	struct treq t[4], hold;
	char one = 'x';
	int fd = tmpfile_fd(), pfd[2], i;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_NONE);
	set.nr_requests = 1;
	s = ios_create_with(&set);
	CHECK(s && !ios_runs_inline(s, IOS_CLASS_HEAP));
	fill(&t[0], s, fd, IOS_CLASS_HEAP, 0, 4 * BLK, 's');
	ios_submit(s, &t[0].r);
	wait_done(t, 1);
	CHECK(t[0].calls == 1 && t[0].res == -EFBIG);
	CHECK(file_size(fd) == LIMIT);
	free(t[0].buf);
	CHECK(ftruncate(fd, 0) == 0);

	CHECK(pipe(pfd) == 0);
	fill(&hold, s, pfd[0], IOS_CLASS_OTHER, 0, 1, 0);
	hold.r.fid.ino = 2;
	hold.r.dir = IOS_READ;
	ios_submit(s, &hold.r);
	usleep(20000); /* let the dispatcher start it */
	for (i = 0; i < 4; i++) {
		fill(&t[i], s, fd, IOS_CLASS_HEAP, (off_t)(3 - i) * BLK, BLK, (char)('d' - i));
		ios_submit(s, &t[i].r);
	}
	usleep(20000);
	CHECK(write(pfd[1], &one, 1) == 1);
	wait_done(&hold, 1);
	CHECK(hold.calls == 1 && hold.res == 1);
	wait_done(t, 4);
	{
		/* submitted from the last block down: reorder to offset order */
		struct treq byoff[4];

		for (i = 0; i < 4; i++)
			byoff[3 - i] = t[i];
		CHECK(byoff[0].order == byoff[3].order - 3); /* one transfer */
		check_merged(byoff, fd);
	}
	free(hold.buf);
	close(pfd[0]);
	close(pfd[1]);
	ios_destroy(s);
	close(fd);
}

int main(void)
{
	struct rlimit rl = {LIMIT, RLIM_INFINITY};

	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	test_inline(IOS_POLICY_DIRECT, IOS_CLASS_HEAP);
	test_inline(IOS_POLICY_DBAWARE, IOS_CLASS_WAL); /* wal_inline */
	test_virtual();
	test_uring();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
