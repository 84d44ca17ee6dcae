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
    [IOS_CLASS_WAL] = "wal",	 [IOS_CLASS_XACT] = "xact", [IOS_CLASS_HEAP] = "heap",
    [IOS_CLASS_INDEX] = "index", [IOS_CLASS_FSM] = "fsm",   [IOS_CLASS_VM] = "vm",
    [IOS_CLASS_TEMP] = "temp",	 [IOS_CLASS_META] = "meta", [IOS_CLASS_OTHER] = "other",
};

static const char *const dir_names[IOS_NDIR] = {"read", "write", "sync"};

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

/* do_rw() -- preadv/pwritev until @r->len bytes are done, EOF (a read
 * returning 0) or an error; a partial count is returned only together with
 * the error or EOF that stopped it.  The caller's iovec array is never
 * modified: after a short transfer the rest is described by a copy. */
static ssize_t do_rw(struct ios_req *r)
{
	struct iovec stackv[8], *copy = NULL, *v = r->iov;
	int cnt = r->iovcnt;
	size_t done = 0;
	ssize_t n = 0;

	while (done < r->len) {
		n = r->dir == IOS_READ ? preadv(r->fd, v, cnt, r->off + (off_t)done)
				       : pwritev(r->fd, v, cnt, r->off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
		if (done >= r->len)
			break;
		if (!copy) { /* first short transfer: work on a copy */
			copy = cnt <= 8 ? stackv : malloc(sizeof(*copy) * (size_t)cnt);
			if (!copy) {
				n = -ENOMEM;
				break;
			}
			memcpy(copy, r->iov, sizeof(*copy) * (size_t)cnt);
			v = copy;
		}
		while (n > 0 && cnt > 0) { /* drop what was transferred */
			if ((size_t)n >= v->iov_len) {
				n -= (ssize_t)v->iov_len;
				v++;
				cnt--;
			} else {
				v->iov_base = (char *)v->iov_base + n;
				v->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	if (copy && copy != stackv)
		free(copy);
	return done ? (ssize_t)done : n;
}

int ios_submit(struct ios_sched *s, struct ios_req *r)
{
	ssize_t res;

	(void)s;
	r->arrival_ns = 0;
	switch (r->dir) {
	case IOS_READ:
	case IOS_WRITE:
		res = do_rw(r);
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
