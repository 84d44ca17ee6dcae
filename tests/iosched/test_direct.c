/*
 * test_direct.c -- the iosched request interface with the "direct" policy:
 * every request completes exactly once with the right result; reads stop at
 * EOF with the bytes that exist; scattered buffers are filled in order; the
 * caller's iovec array is left untouched; errors come back as -errno; a
 * sync reaches the file; unknown policies are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "check.h"

struct done_rec {
	int calls;
	ssize_t res;
};

static void on_done(struct ios_req *r, ssize_t res)
{
	struct done_rec *d = r->priv;

	d->calls++;
	d->res = res;
}

static ssize_t run(struct ios_sched *s, int fd, enum ios_dir dir, off_t off, struct iovec *iov,
		   int cnt, unsigned flags)
{
	struct done_rec d = {0, 0};
	struct ios_req r;
	size_t len = 0;
	int i;

	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	memset(&r, 0, sizeof(r));
	r.fd = fd;
	r.cls = IOS_CLASS_HEAP;
	r.dir = dir;
	r.flags = flags;
	r.off = off;
	r.len = len;
	r.iov = iov;
	r.iovcnt = cnt;
	r.done = on_done;
	r.priv = &d;
	CHECK(ios_submit(s, &r) == 0);
	CHECK(d.calls == 1); /* direct: completed before ios_submit returns, once */
	return d.res;
}

int main(void)
{
	char path[] = "/tmp/test_direct.XXXXXX";
	char data[10000], a[3000], b[3000], c[8000];
	struct iovec iov[3], saved[3];
	struct ios_sched *s;
	int fd, i;

	CHECK(ios_create("no-such-policy") == NULL && errno == EINVAL);
	s = ios_create("direct");
	CHECK(s != NULL);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	for (i = 0; i < (int)sizeof(data); i++)
		data[i] = (char)(i * 7 + 3);

	/* write 10000 bytes from three buffers */
	iov[0] = (struct iovec){data, 4000};
	iov[1] = (struct iovec){data + 4000, 4000};
	iov[2] = (struct iovec){data + 8000, 2000};
	CHECK(run(s, fd, IOS_WRITE, 0, iov, 3, 0) == 10000);

	/* read across EOF into scattered buffers: 3000 + 3000 + 8000 asked at
	 * offset 1000, 9000 exist; the iovec array must not change */
	iov[0] = (struct iovec){a, sizeof(a)};
	iov[1] = (struct iovec){b, sizeof(b)};
	iov[2] = (struct iovec){c, sizeof(c)};
	memcpy(saved, iov, sizeof(iov));
	CHECK(run(s, fd, IOS_READ, 1000, iov, 3, 0) == 9000);
	CHECK(memcmp(iov, saved, sizeof(iov)) == 0);
	CHECK(memcmp(a, data + 1000, 3000) == 0);
	CHECK(memcmp(b, data + 4000, 3000) == 0);
	CHECK(memcmp(c, data + 7000, 3000) == 0);

	/* read at EOF: 0 bytes; beyond EOF: 0 bytes */
	iov[0] = (struct iovec){a, 100};
	CHECK(run(s, fd, IOS_READ, 10000, iov, 1, 0) == 0);
	CHECK(run(s, fd, IOS_READ, 123456, iov, 1, 0) == 0);

	/* sync and datasync succeed on a file */
	CHECK(run(s, fd, IOS_SYNC, 0, NULL, 0, 0) == 0);
	CHECK(run(s, fd, IOS_SYNC, 0, NULL, 0, IOS_F_DATASYNC) == 0);

	/* errors are -errno: a read-only descriptor refuses writes, a closed
	 * one everything */
	{
		int ro = open(path, O_RDONLY);

		iov[0] = (struct iovec){data, 10};
		CHECK(run(s, ro, IOS_WRITE, 0, iov, 1, 0) == -EBADF);
		close(ro);
		CHECK(run(s, ro, IOS_READ, 0, iov, 1, 0) == -EBADF);
		CHECK(run(s, ro, IOS_SYNC, 0, NULL, 0, 0) == -EBADF);
	}

	/* names */
	CHECK(strcmp(ios_class_name(IOS_CLASS_WAL), "wal") == 0);
	CHECK(strcmp(ios_class_name(IOS_CLASS_INDEX), "index") == 0);
	CHECK(strcmp(ios_dir_name(IOS_SYNC), "sync") == 0);
	CHECK(strcmp(ios_class_name((enum ios_class)99), "?") == 0);

	close(fd);
	unlink(path);
	ios_destroy(s);
	ios_destroy(NULL);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
