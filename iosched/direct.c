/*
 * direct.c -- synchronous execution of a request (preadv/pwritev until done,
 * fsync/fdatasync), used by the "direct" policy in the submitting thread and
 * by back ends for retries; and the names of classes and directions.  The
 * direct policy trivially keeps every ordering invariant of iosched.h:
 * nothing is ever queued.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ios_do_rw() -- preadv/pwritev until @len bytes are done, a read reaches
 * EOF (returns 0) or an error stops the transfer.  Returns the bytes done
 * (@len; fewer only for a read that reached EOF) or -errno: an error after
 * part of the transfer is still an error, never a short count, because a
 * short count looks like success to a writer that does not check it (the
 * kernel's writeback does not), and like EOF to a reader.  *@done (if not
 * NULL) gets the bytes transferred before the error, so that a merged
 * transfer can tell which of its requests were completed in full.  A write
 * that makes no progress and reports no error fails with EIO.  The caller's
 * iovec array is never modified: after a short transfer the rest is
 * described by a copy.  @rwf: RWF_* flags of every call (preadv2,
 * pwritev2). */
static ssize_t ios_do_rw(int fd, enum ios_dir dir, const struct iovec *iov, int iovcnt, off_t off,
			 size_t len, size_t *done_out, int rwf)
{
	struct iovec stackv[8], *copy = NULL, *v = (struct iovec *)iov;
	int cnt = iovcnt;
	size_t done = 0;
	ssize_t n = 0;

	while (done < len) {
		n = dir == IOS_READ ? preadv2(fd, v, cnt, off + (off_t)done, rwf)
				    : pwritev2(fd, v, cnt, off + (off_t)done, rwf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			break;
		}
		if (n == 0) {
			if (dir != IOS_READ)
				n = -EIO;
			break;
		}
		done += (size_t)n;
		if (done >= len)
			break;
		if (!copy) { /* first short transfer: work on a copy */
			copy = cnt <= 8 ? stackv : malloc(sizeof(*copy) * (size_t)cnt);
			if (!copy) {
				n = -ENOMEM;
				break;
			}
			memcpy(copy, iov, sizeof(*copy) * (size_t)cnt);
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
	if (done_out)
		*done_out = done;
	return n < 0 ? n : (ssize_t)done;
}

ssize_t ios_req_rw(struct ios_req *req, const struct iovec *iov, int iovcnt, off_t off, size_t len,
		   size_t *done_out)
{
	int rwf = req->dir != IOS_SYNC && (req->flags & IOS_F_DROPBEHIND) ? RWF_DONTCACHE : 0;
	size_t done = 0;
	ssize_t res = ios_do_rw(req->fd, req->dir, iov, iovcnt, off, len, &done, rwf);

	/* the flags are checked before anything is transferred: EOPNOTSUPP
	 * with nothing done is the kernel (before 6.14) or the file system
	 * refusing RWF_DONTCACHE */
	if (res == -EOPNOTSUPP && rwf && done == 0) {
		req->flags &= ~IOS_F_DROPBEHIND;
		res = ios_do_rw(req->fd, req->dir, iov, iovcnt, off, len, &done, 0);
	}
	if (done_out)
		*done_out = done;
	return res;
}

ssize_t ios_execute(struct ios_req *r)
{
	ssize_t res;

	switch (r->dir) {
	case IOS_READ:
		return ios_req_rw(r, r->iov, r->iovcnt, r->off, r->len, NULL);
	case IOS_WRITE:
		/* The kernel takes the inode's lock for a buffered write
		 * anyway; taken here first, a second writer of the file
		 * sleeps instead of spinning in the kernel on a CPU the
		 * holder's copy and the writing process need */
		if (r->serial)
			pthread_mutex_lock(r->serial);
		res = ios_req_rw(r, r->iov, r->iovcnt, r->off, r->len, NULL);
		if (r->serial)
			pthread_mutex_unlock(r->serial);
		return res;
	case IOS_SYNC:
		res = (r->flags & IOS_F_DATASYNC) ? fdatasync(r->fd) : fsync(r->fd);
		return res < 0 ? -errno : 0;
	default:
		return -EINVAL;
	}
}
