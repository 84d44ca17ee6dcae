/*
 * direct.c -- the "direct" policy: each request is executed synchronously in
 * the submitting thread with preadv/pwritev/fsync/fdatasync, and completed
 * before ios_submit() returns.  It trivially keeps every ordering invariant
 * of iosched.h because nothing is ever queued; queueing policies replace it.
 */
#include "iosched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ios_sched {
	int policy; /* only "direct" so far */
};

static const char *const class_names[IOS_NCLASS] = {
	[IOS_CLASS_WAL] = "wal",     [IOS_CLASS_XACT] = "xact", [IOS_CLASS_HEAP] = "heap",
	[IOS_CLASS_INDEX] = "index", [IOS_CLASS_FSM] = "fsm",	[IOS_CLASS_VM] = "vm",
	[IOS_CLASS_TEMP] = "temp",   [IOS_CLASS_META] = "meta", [IOS_CLASS_OTHER] = "other",
};

static const char *const dir_names[IOS_NDIR] = { "read", "write", "sync" };

const char *ios_class_name(enum ios_class c)
{
	return (unsigned)c < IOS_NCLASS ? class_names[c] : "?";
}

const char *ios_dir_name(enum ios_dir d)
{
	return (unsigned)d < IOS_NDIR ? dir_names[d] : "?";
}

uint64_t ios_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ios_sched *ios_create(const char *name)
{
	struct ios_sched *s;

	if (!name || strcmp(name, "direct") != 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	return s;
}

void ios_destroy(struct ios_sched *s)
{
	free(s);
}

/* advance_iov() -- drop @n bytes from the front of an iovec array. */
static void advance_iov(struct iovec **iov, int *cnt, size_t n)
{
	while (n && *cnt) {
		if (n >= (*iov)->iov_len) {
			n -= (*iov)->iov_len;
			(*iov)++;
			(*cnt)--;
		} else {
			(*iov)->iov_base = (char *)(*iov)->iov_base + n;
			(*iov)->iov_len -= n;
			n = 0;
		}
	}
}

/* do_write() -- pwritev until all is written: a short write is retried, so a
 * partial result is only returned together with the error that stopped it. */
static ssize_t do_write(struct ios_req *r)
{
	struct iovec *iov = r->iov;
	int cnt = r->iovcnt;
	size_t done = 0;
	ssize_t n;

	while (done < r->len) {
		n = pwritev(r->fd, iov, cnt, r->off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
		if (done < r->len)
			advance_iov(&iov, &cnt, (size_t)n);
	}
	return (ssize_t)done;
}

/* do_read() -- preadv; a short read is retried until EOF (n == 0). */
static ssize_t do_read(struct ios_req *r)
{
	struct iovec *iov = r->iov;
	int cnt = r->iovcnt;
	size_t done = 0;
	ssize_t n;

	while (done < r->len) {
		n = preadv(r->fd, iov, cnt, r->off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
		if (done < r->len)
			advance_iov(&iov, &cnt, (size_t)n);
	}
	return (ssize_t)done;
}

int ios_submit(struct ios_sched *s, struct ios_req *r)
{
	ssize_t res;

	(void)s;
	r->arrival_ns = 0;
	switch (r->dir) {
	case IOS_READ:
		res = do_read(r);
		break;
	case IOS_WRITE:
		res = do_write(r);
		break;
	case IOS_SYNC:
		res = (r->flags & IOS_F_DATASYNC) ? fdatasync(r->fd) : fsync(r->fd);
		if (res < 0)
			res = -errno;
		break;
	default:
		res = -EINVAL;
	}
	r->done(r, res);
	return 0;
}
