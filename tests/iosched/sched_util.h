/*
 * sched_util.h -- helpers shared by the scheduler tests that run on the
 * virtual clock (test_sched.c, test_policies.c): a test request that
 * records how often, when and in which order it completed, submission with
 * a filled buffer, settings for a policy and device (readahead off), settings
 * for a disk model alone, a relative comparison, an order of uint64_t for
 * qsort, a seeded generator and an unlinked temporary file.
 *
 * A test request must stay in place (and its buffer allocated) until it
 * completed; its buffer is the caller's to free.
 */
#ifndef PGIOFS_TESTS_SCHED_UTIL_H
#define PGIOFS_TESTS_SCHED_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "check.h"

#define MS 1000000ull
#define US 1000ull

struct treq {
	struct ios_req r;
	struct iovec iov;
	struct ios_sched *s;
	int calls;
	ssize_t res;
	uint64_t done_at;
	int order; /* completion order */
	char *buf;
};

static int completion_counter;
static uint64_t completed_bytes; /* sum of the lengths of completed requests */

static inline void on_done(struct ios_req *r, ssize_t res)
{
	struct treq *t = (struct treq *)r;

	t->calls++;
	t->res = res;
	t->done_at = ios_virtual_now(t->s);
	t->order = ++completion_counter;
	completed_bytes += r->len;
}

/* submit_pid() -- submit @t for process @pid; a read or write gets a
 * buffer of @len bytes filled with @fill. */
static inline void submit_pid(struct ios_sched *s, struct treq *t, pid_t pid, int fd, uint64_t file,
			      enum ios_class cls, enum ios_dir dir, off_t off, size_t len,
			      char fill)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->r.fd = fd;
	t->r.fid.ino = file;
	t->r.cls = cls;
	t->r.dir = dir;
	t->r.off = off;
	t->r.len = dir == IOS_SYNC ? 0 : len;
	t->r.pid = pid;
	t->r.done = on_done;
	if (dir != IOS_SYNC) {
		t->buf = malloc(len);
		memset(t->buf, fill, len);
		t->iov.iov_base = t->buf;
		t->iov.iov_len = len;
		t->r.iov = &t->iov;
		t->r.iovcnt = 1;
	}
	ios_submit(s, &t->r);
}

static inline void submit(struct ios_sched *s, struct treq *t, int fd, uint64_t file,
			  enum ios_class cls, enum ios_dir dir, off_t off, size_t len, char fill)
{
	submit_pid(s, t, 0, fd, file, cls, dir, off, len, fill);
}

static inline void settings(struct ios_settings *set, int policy, int device)
{
	conf_defaults(&ios_conf, set);
	set->policy = policy;
	set->device_model = device;
	set->ra_window_kb = 0;	   /* exact transfer counts; test_readahead.c turns it on */
	set->other_inline = false; /* class other is queued like the rest; test_inline.c */
}

/* model_settings() -- the defaults with [device] model @model. */
static inline struct ios_settings model_settings(int model)
{
	struct ios_settings set;

	CHECK(conf_defaults(&ios_conf, &set) == 0);
	set.device_model = model;
	return set;
}

/* near() -- @a within @rel (relative) of @b */
static inline int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

/* cmp_u64() -- qsort(3) order of uint64_t values, ascending */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int tmpfile_fd(void)
{
	char path[] = "/tmp/test_sched.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	return fd;
}

#endif
