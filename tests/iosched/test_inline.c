/*
 * test_inline.c -- iosched.wal_inline on the real (io_uring) scheduler:
 * with dbaware and wal_inline, WAL and commit-status requests complete in
 * the submitting thread before ios_submit() returns, everything else is
 * queued and completes on the dispatcher thread; inline requests are
 * accounted per class and fault injection still applies to them; the
 * option is ignored with an emulated device and off by default; and under
 * concurrent submitters (inline WAL writes and syncs on one file, queued
 * heap writes on another) every request completes exactly once and both
 * files hold what was written.  iosched.other_inline: with it (the
 * default) a request of class other completes in the submitting thread, a
 * heap request still queues; without it, or with an emulated device, class
 * other queues.  iosched.data_inline: auto (the default) runs the data
 * classes (heap, index, fsm, vm, temp, meta) at arrival only when the
 * caller says they go through the backing page cache, yes always, no
 * never, and never with an emulated device; with them inline dbaware has
 * no writeback throttle (nothing is queued for it to hold), a heap write
 * and a failing one complete in the submitting thread with their result.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched_util.h"

struct ireq {
	struct ios_req r;
	struct iovec iov;
	char buf[8192];
	atomic_int calls;
	atomic_long res;
	pthread_t done_thread;
};

static void ion_done(struct ios_req *r, ssize_t res)
{
	struct ireq *q = (struct ireq *)r;

	q->done_thread = pthread_self();
	atomic_store(&q->res, (long)res);
	atomic_fetch_add(&q->calls, 1);
}

static void prep(struct ireq *q, int fd, uint64_t file, enum ios_class cls, enum ios_dir dir,
		 off_t off, size_t len, char fill)
{
	memset(q, 0, sizeof(*q));
	q->r.fd = fd;
	q->r.fid.ino = file;
	q->r.cls = cls;
	q->r.dir = dir;
	q->r.off = off;
	q->r.done = ion_done;
	if (dir != IOS_SYNC) {
		memset(q->buf, fill, len);
		q->iov = (struct iovec){q->buf, len};
		q->r.iov = &q->iov;
		q->r.iovcnt = 1;
		q->r.len = len;
	}
}

/* wait_done() -- wait (at most 10 s) until @q completed; its call count. */
static int wait_done(struct ireq *q)
{
	for (int i = 0; i < 10000 && atomic_load(&q->calls) == 0; i++)
		usleep(1000);
	return atomic_load(&q->calls);
}

static struct ios_sched *dbaware(bool wal_inline, int device, struct ios_settings *set)
{
	settings(set, IOS_POLICY_DBAWARE, device);
	set->wal_inline = wal_inline;
	return ios_create_with(set);
}

static void test_which(void)
{
	struct ios_settings set;
	struct ios_sched *s;

	s = dbaware(true, IOS_DEVICE_NONE, &set);
	CHECK(s && ios_is_async(s));
	CHECK(ios_runs_inline(s, IOS_CLASS_WAL) && ios_runs_inline(s, IOS_CLASS_XACT));
	CHECK(!ios_runs_inline(s, IOS_CLASS_HEAP) && !ios_runs_inline(s, IOS_CLASS_TEMP));
	ios_destroy(s);
	s = dbaware(false, IOS_DEVICE_NONE, &set);
	CHECK(s && !ios_runs_inline(s, IOS_CLASS_WAL));
	ios_destroy(s);
	/* with an emulated device WAL queues for the modelled disk */
	s = dbaware(true, IOS_DEVICE_HDD, &set);
	CHECK(s && !ios_runs_inline(s, IOS_CLASS_WAL));
	ios_destroy(s);
	/* on by default (dbaware is the default policy) */
	conf_defaults(&ios_conf, &set);
	CHECK(set.wal_inline && set.policy == IOS_POLICY_DBAWARE);
	/* direct runs everything inline */
	settings(&set, IOS_POLICY_DIRECT, IOS_DEVICE_NONE);
	s = ios_create_with(&set);
	CHECK(s && ios_runs_inline(s, IOS_CLASS_HEAP));
	ios_destroy(s);
}

static void test_threads_and_stats(void)
{
	struct ios_settings set;
	struct ios_sched *s = dbaware(true, IOS_DEVICE_NONE, &set);
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_snapshot *snap = calloc(1, sizeof(*snap));
	static struct ireq w, y, h, x;
	char back[8192];
	int wal = tmpfile_fd(), heap = tmpfile_fd();

	CHECK(s && st && snap && wal >= 0 && heap >= 0);
	ios_attach_stats(s, st);
	prep(&w, wal, 1, IOS_CLASS_WAL, IOS_WRITE, 0, 8192, 'w');
	CHECK(ios_submit(s, &w.r) == 0);
	/* inline: done before ios_submit returned, in this thread */
	CHECK(atomic_load(&w.calls) == 1 && atomic_load(&w.res) == 8192);
	CHECK(pthread_equal(w.done_thread, pthread_self()));
	prep(&y, wal, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	y.r.flags = IOS_F_DATASYNC;
	CHECK(ios_submit(s, &y.r) == 0);
	CHECK(atomic_load(&y.calls) == 1 && atomic_load(&y.res) == 0);
	prep(&x, wal, 1, IOS_CLASS_XACT, IOS_READ, 0, 8192, 0);
	CHECK(ios_submit(s, &x.r) == 0);
	CHECK(atomic_load(&x.calls) == 1 && atomic_load(&x.res) == 8192);
	CHECK(memcmp(x.buf, w.buf, 8192) == 0);
	/* heap: queued, completed by the dispatcher thread */
	prep(&h, heap, 2, IOS_CLASS_HEAP, IOS_WRITE, 8192, 4096, 'h');
	CHECK(ios_submit(s, &h.r) == 0);
	CHECK(wait_done(&h) == 1 && atomic_load(&h.res) == 4096);
	CHECK(!pthread_equal(h.done_thread, pthread_self()));
	CHECK(pread(heap, back, 4096, 8192) == 4096 && memcmp(back, h.buf, 4096) == 0);

	/* every request accounted in its class */
	ios_destroy(s); /* drains: all accounted */
	CHECK(ios_stats_snapshot(st, snap) == 0);
	CHECK(snap->cls[IOS_CLASS_WAL].write_ops == 1 &&
	      snap->cls[IOS_CLASS_WAL].write_bytes == 8192);
	CHECK(snap->cls[IOS_CLASS_WAL].sync_ops == 1);
	CHECK(snap->cls[IOS_CLASS_XACT].read_ops == 1 &&
	      snap->cls[IOS_CLASS_XACT].read_bytes == 8192);
	CHECK(snap->cls[IOS_CLASS_HEAP].write_ops == 1 &&
	      snap->cls[IOS_CLASS_HEAP].write_bytes == 4096);
	ios_stats_destroy(st);
	free(snap);
	close(wal);
	close(heap);
}

static void test_other_inline(void)
{
	struct ios_settings set;
	struct ios_sched *s;
	static struct ireq o, r, q;
	int fd = tmpfile_fd();

	conf_defaults(&ios_conf, &set);
	CHECK(set.other_inline); /* on by default */
	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_NONE);
	set.other_inline = true;
	s = ios_create_with(&set);
	CHECK(s && ios_runs_inline(s, IOS_CLASS_OTHER) && !ios_runs_inline(s, IOS_CLASS_HEAP));
	prep(&o, fd, 1, IOS_CLASS_OTHER, IOS_WRITE, 0, 8192, 'o');
	CHECK(ios_submit(s, &o.r) == 0);
	/* inline: done before ios_submit returned, in this thread */
	CHECK(atomic_load(&o.calls) == 1 && atomic_load(&o.res) == 8192);
	CHECK(pthread_equal(o.done_thread, pthread_self()));
	prep(&r, fd, 1, IOS_CLASS_OTHER, IOS_READ, 0, 8192, 0);
	CHECK(ios_submit(s, &r.r) == 0 && atomic_load(&r.calls) == 1);
	CHECK(atomic_load(&r.res) == 8192 && memcmp(r.buf, o.buf, 8192) == 0);
	ios_destroy(s);
	/* off: class other queues and completes on the dispatcher thread */
	set.other_inline = false;
	s = ios_create_with(&set);
	CHECK(s && !ios_runs_inline(s, IOS_CLASS_OTHER));
	prep(&q, fd, 1, IOS_CLASS_OTHER, IOS_WRITE, 8192, 4096, 'q');
	CHECK(ios_submit(s, &q.r) == 0);
	CHECK(wait_done(&q) == 1 && atomic_load(&q.res) == 4096);
	CHECK(!pthread_equal(q.done_thread, pthread_self()));
	ios_destroy(s);
	/* with an emulated device it queues for the modelled disk */
	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_HDD);
	set.other_inline = true;
	s = ios_create_with(&set);
	CHECK(s && !ios_runs_inline(s, IOS_CLASS_OTHER));
	ios_destroy(s);
	close(fd);
}

/* fault_on() -- the second request of @cls in direction @dir fails with
 * @err. */
static void fault_on(struct ios_settings *set, enum ios_class cls, enum ios_dir dir,
		     enum ios_fault_error err)
{
	set->fault_class = (int)cls + 1; /* 0 is "any" */
	set->fault_direction = (int)dir + 1;
	set->fault_error = (int)err;
	set->fault_nth = 2;
}

static const enum ios_class data_classes[] = {IOS_CLASS_HEAP, IOS_CLASS_INDEX, IOS_CLASS_FSM,
					      IOS_CLASS_VM,   IOS_CLASS_TEMP,  IOS_CLASS_META};

/* data_inline() -- whether every data class of @s runs inline, or none
 * does (-1: some do, some do not). */
static int data_inline(const struct ios_sched *s)
{
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(data_classes) / sizeof(data_classes[0]); i++)
		n += ios_runs_inline(s, data_classes[i]);
	return n == 0 ? 0 : n == sizeof(data_classes) / sizeof(data_classes[0]) ? 1 : -1;
}

/* throttle_target() -- the writeback throttle's target @s published into
 * @st, attached before anything was submitted (0: no throttle). */
static uint64_t throttle_target(struct ios_stats *st)
{
	struct ios_stats_snapshot *snap = calloc(1, sizeof(*snap));
	uint64_t t = UINT64_MAX;

	if (snap && ios_stats_snapshot(st, snap) == 0)
		t = snap->throttle.target_ns;
	free(snap);
	return t;
}

static void test_data_inline(void)
{
	static const struct {
		int mode;
		bool buffered;
		int device;
		int want;
	} cases[] = {
	    {IOS_DATA_INLINE_AUTO, false, IOS_DEVICE_NONE, 0},
	    {IOS_DATA_INLINE_AUTO, true, IOS_DEVICE_NONE, 1},
	    {IOS_DATA_INLINE_YES, false, IOS_DEVICE_NONE, 1},
	    {IOS_DATA_INLINE_NO, true, IOS_DEVICE_NONE, 0},
	    {IOS_DATA_INLINE_AUTO, true, IOS_DEVICE_HDD, 0},
	    {IOS_DATA_INLINE_YES, true, IOS_DEVICE_SSD, 0},
	};
	struct ios_settings set;
	struct ios_sched *s;
	struct ios_stats *st;
	static struct ireq h, f, r;
	int fd = tmpfile_fd();

	conf_defaults(&ios_conf, &set);
	CHECK(set.data_inline == IOS_DATA_INLINE_AUTO && !set.data_buffered);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		settings(&set, IOS_POLICY_DBAWARE, cases[i].device);
		set.wal_inline = set.other_inline = true;
		set.wal_target_us = 2000;
		set.data_inline = cases[i].mode;
		set.data_buffered = cases[i].buffered;
		s = ios_create_with(&set);
		st = ios_stats_create();
		CHECK(s && st && data_inline(s) == cases[i].want);
		if (!s || !st)
			continue;
		ios_attach_stats(s, st);
		/* WAL and other keep their own settings */
		CHECK(ios_runs_inline(s, IOS_CLASS_WAL) == (cases[i].device == IOS_DEVICE_NONE));
		/* the throttle holds queued writeback: none to hold inline */
		CHECK(throttle_target(st) == (cases[i].want ? 0 : 2000000u));
		ios_destroy(s);
		ios_stats_destroy(st);
	}

	/* inline: a heap write and a read of it complete in this thread; an
	 * injected failure reaches the submitter as the request's result */
	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_NONE);
	set.data_inline = IOS_DATA_INLINE_AUTO;
	set.data_buffered = true;
	fault_on(&set, IOS_CLASS_HEAP, IOS_WRITE, IOS_FAULT_ENOSPC);
	s = ios_create_with(&set);
	CHECK(s && ios_runs_inline(s, IOS_CLASS_HEAP));
	prep(&h, fd, 3, IOS_CLASS_HEAP, IOS_WRITE, 0, 8192, 'h');
	CHECK(ios_submit(s, &h.r) == 0 && atomic_load(&h.calls) == 1);
	CHECK(atomic_load(&h.res) == 8192 && pthread_equal(h.done_thread, pthread_self()));
	prep(&f, fd, 3, IOS_CLASS_HEAP, IOS_WRITE, 8192, 8192, 'f');
	CHECK(ios_submit(s, &f.r) == 0 && atomic_load(&f.calls) == 1);
	CHECK(atomic_load(&f.res) == -ENOSPC);
	prep(&r, fd, 3, IOS_CLASS_HEAP, IOS_READ, 0, 8192, 0);
	CHECK(ios_submit(s, &r.r) == 0 && atomic_load(&r.calls) == 1);
	CHECK(atomic_load(&r.res) == 8192 && memcmp(r.buf, h.buf, 8192) == 0);
	ios_destroy(s);
	close(fd);
}

static void test_fault_applies(void)
{
	struct ios_settings set;
	struct ios_sched *s;
	static struct ireq a, b;
	int fd = tmpfile_fd();

	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_NONE);
	set.wal_inline = true;
	fault_on(&set, IOS_CLASS_WAL, IOS_SYNC, IOS_FAULT_EIO);
	s = ios_create_with(&set);
	CHECK(s && ios_runs_inline(s, IOS_CLASS_WAL));
	prep(&a, fd, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	CHECK(ios_submit(s, &a.r) == 0 && atomic_load(&a.calls) == 1 && atomic_load(&a.res) == 0);
	prep(&b, fd, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	CHECK(ios_submit(s, &b.r) == 0 && atomic_load(&b.calls) == 1);
	CHECK(atomic_load(&b.res) == -EIO); /* the injected error, never success */
	ios_destroy(s);
	close(fd);
}

/* Concurrent submitters: 2 threads write WAL pages (and datasync after
 * each) to one file, 2 threads write heap pages to another. */
#define PER_THREAD 200
struct worker {
	struct ios_sched *s;
	int fd, id;
	enum ios_class cls;
	struct ireq *q; /* PER_THREAD writes and, for WAL, PER_THREAD syncs */
};

static void *work(void *arg)
{
	struct worker *k = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		off_t off = (off_t)(i * 2 + k->id % 2) * 8192;
		struct ireq *q = &k->q[2 * i];

		prep(q, k->fd, (uint64_t)k->cls + 10, k->cls, IOS_WRITE, off, 8192,
		     (char)('a' + (i + k->id) % 26));
		ios_submit(k->s, &q->r);
		if (k->cls == IOS_CLASS_WAL) {
			prep(&k->q[2 * i + 1], k->fd, (uint64_t)k->cls + 10, k->cls, IOS_SYNC, 0, 0,
			     0);
			ios_submit(k->s, &k->q[2 * i + 1].r);
		}
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct ios_settings set;
	struct ios_sched *s = dbaware(true, IOS_DEVICE_NONE, &set);
	struct worker k[4];
	pthread_t t[4];
	int wal = tmpfile_fd(), heap = tmpfile_fd(), bad = 0;
	char back[8192];

	CHECK(s != NULL);
	for (int i = 0; i < 4; i++) {
		k[i] = (struct worker){s, i < 2 ? wal : heap, i,
				       i < 2 ? IOS_CLASS_WAL : IOS_CLASS_HEAP,
				       calloc(2 * PER_THREAD, sizeof(struct ireq))};
		CHECK(k[i].q != NULL);
		pthread_create(&t[i], NULL, work, &k[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ios_destroy(s); /* everything queued completes first */
	for (int i = 0; i < 4; i++) {
		for (int j = 0; j < PER_THREAD; j++) {
			struct ireq *q = &k[i].q[2 * j];
			off_t off = (off_t)(j * 2 + i % 2) * 8192;

			bad += atomic_load(&q->calls) != 1 || atomic_load(&q->res) != 8192;
			if (k[i].cls == IOS_CLASS_WAL)
				bad += atomic_load(&k[i].q[2 * j + 1].calls) != 1 ||
				       atomic_load(&k[i].q[2 * j + 1].res) != 0;
			bad += pread(k[i].fd, back, 8192, off) != 8192 ||
			       memcmp(back, q->buf, 8192) != 0;
		}
		free(k[i].q);
	}
	if (bad)
		fprintf(stderr, "concurrent: %d request(s) wrong\n", bad);
	CHECK(bad == 0);
	close(wal);
	close(heap);
}

int main(void)
{
	test_which();
	test_threads_and_stats();
	test_other_inline();
	test_fault_applies();
	test_data_inline();
	test_concurrent();
	printf("%s\n", failures ? "FAILED" : "ok: inline");
	return failures ? 1 : 0;
}
