/*
 * test_sched_stats.c -- every request a scheduler completes is accounted in
 * the statistics attached to it (ios_attach_stats()): ops and bytes per
 * class and direction, errors, merges, and queue and service time.
 *
 * Queueing policies run on the virtual clock with the emulated ssd, so the
 * times are exact: a request's latency (queue + service) is the virtual time
 * at which it completed minus its arrival, and the queue time of a request
 * held back by nr_requests is the completion time of the one before it.
 * "direct" runs on real files: counts and bytes are exact, times only > 0.
 * A trace attached (ios_attach_trace()) gets one record per request, with
 * the same times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "check.h"

#define MS 1000000ull

struct treq {
	struct ios_req r;
	struct iovec iov;
	struct ios_sched *s;
	int calls;
	ssize_t res;
	uint64_t done_at;
	char *buf;
	struct ios_stats *st; /* if set, done notes the ops counted so far */
	uint64_t ops_seen;
};

static uint64_t all_ops(struct ios_stats *st)
{
	struct ios_stats_snapshot *snap = calloc(1, sizeof(*snap));
	uint64_t n;

	ios_stats_snapshot(st, snap);
	n = snap->total.read_ops + snap->total.write_ops + snap->total.sync_ops;
	free(snap);
	return n;
}

static void on_done(struct ios_req *r, ssize_t res)
{
	struct treq *t = (struct treq *)r;

	t->calls++;
	t->res = res;
	t->done_at = t->s && ios_is_async(t->s) ? ios_virtual_now(t->s) : 0;
	if (t->st)
		t->ops_seen = all_ops(t->st);
}

static void submit(struct ios_sched *s, struct treq *t, int fd, uint64_t file, enum ios_class cls,
		   enum ios_dir dir, off_t off, size_t len)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->r.fd = fd;
	t->r.fid.ino = file;
	t->r.cls = cls;
	t->r.dir = dir;
	t->r.off = off;
	t->r.len = dir == IOS_SYNC ? 0 : len;
	t->r.done = on_done;
	if (dir != IOS_SYNC) {
		t->buf = malloc(len ? len : 1);
		memset(t->buf, 'x', len);
		t->iov.iov_base = t->buf;
		t->iov.iov_len = len;
		t->r.iov = &t->iov;
		t->r.iovcnt = 1;
	}
	ios_submit(s, &t->r);
}

static int tmpfile_fd(void)
{
	char path[] = "/tmp/test_sched_stats.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	return fd;
}

static struct ios_stats_snapshot *snap_of(struct ios_stats *st)
{
	struct ios_stats_snapshot *snap = calloc(1, sizeof(*snap));

	CHECK(snap && ios_stats_snapshot(st, snap) == 0);
	return snap;
}

/* merged writes: each request is an op with its own bytes; merges counted */
static void test_merge_accounting(void)
{
	struct ios_settings set;
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_snapshot *snap;
	struct ios_sched *s;
	struct treq t[5];
	uint64_t lat = 0;
	int fd = tmpfile_fd(), i;

	conf_defaults(&ios_conf, &set);
	set.policy = IOS_POLICY_NOOP;
	set.device_model = IOS_DEVICE_SSD;
	s = ios_create_virtual(&set);
	ios_attach_stats(s, st);
	for (i = 0; i < 4; i++)
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, (off_t)i * 65536, 65536);
	ios_virtual_advance(s, 100 * MS);
	submit(s, &t[4], fd, 7, IOS_CLASS_WAL, IOS_SYNC, 0, 0);
	ios_virtual_advance(s, 200 * MS);
	snap = snap_of(st);
	for (i = 0; i < 4; i++) {
		CHECK(t[i].calls == 1 && t[i].res == 65536);
		lat += t[i].done_at; /* arrived at 0 */
	}
	CHECK(snap->cls[IOS_CLASS_HEAP].write_ops == 4);
	CHECK(snap->cls[IOS_CLASS_HEAP].write_bytes == 4 * 65536);
	CHECK(snap->cls[IOS_CLASS_HEAP].merges == 3);
	CHECK(snap->cls[IOS_CLASS_HEAP].errors == 0);
	CHECK(snap->cls[IOS_CLASS_HEAP].queue_sum_ns == 0); /* dispatched at once */
	CHECK(snap->cls[IOS_CLASS_HEAP].service_sum_ns == lat);
	CHECK(snap->cls[IOS_CLASS_HEAP].lat_count == 4);
	CHECK(snap->cls[IOS_CLASS_WAL].sync_ops == 1);
	CHECK(snap->cls[IOS_CLASS_WAL].service_sum_ns == t[4].done_at - 100 * MS);
	CHECK(snap->total.read_ops == 0 && snap->total.write_ops == 4);
	for (i = 0; i < 4; i++)
		free(t[i].buf);
	free(snap);
	ios_destroy(s);
	ios_stats_destroy(st);
	close(fd);
}

/* queue time: with nr_requests = 1 the second read waits for the first */
static void test_queue_time(void)
{
	struct ios_settings set;
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_snapshot *snap;
	struct ios_sched *s;
	struct treq t[3];
	int fd = tmpfile_fd();
	char junk[8192];

	memset(junk, 1, sizeof(junk));
	CHECK(pwrite(fd, junk, sizeof(junk), 0) == sizeof(junk));
	conf_defaults(&ios_conf, &set);
	set.policy = IOS_POLICY_NOOP;
	set.device_model = IOS_DEVICE_SSD;
	set.nr_requests = 1;
	s = ios_create_virtual(&set);
	ios_attach_stats(s, st);
	submit(s, &t[0], fd, 1, IOS_CLASS_INDEX, IOS_READ, 0, 4096);
	submit(s, &t[1], fd, 2, IOS_CLASS_INDEX, IOS_READ, 4096, 4096);
	/* a short read at end of file counts what it returned */
	submit(s, &t[2], fd, 3, IOS_CLASS_TEMP, IOS_READ, 6144, 4096);
	ios_virtual_advance(s, 100 * MS);
	snap = snap_of(st);
	CHECK(t[0].res == 4096 && t[1].res == 4096 && t[2].res == 2048);
	CHECK(t[0].done_at > 0 && t[1].done_at > t[0].done_at && t[2].done_at > t[1].done_at);
	CHECK(snap->cls[IOS_CLASS_INDEX].read_ops == 2);
	CHECK(snap->cls[IOS_CLASS_INDEX].read_bytes == 8192);
	CHECK(snap->cls[IOS_CLASS_INDEX].queue_sum_ns == t[0].done_at);
	CHECK(snap->cls[IOS_CLASS_INDEX].service_sum_ns == t[1].done_at);
	CHECK(snap->cls[IOS_CLASS_INDEX].lat_max_ns == t[1].done_at);
	CHECK(snap->cls[IOS_CLASS_TEMP].read_ops == 1);
	CHECK(snap->cls[IOS_CLASS_TEMP].read_bytes == 2048);
	CHECK(snap->cls[IOS_CLASS_TEMP].queue_sum_ns == t[1].done_at);
	CHECK(snap->cls[IOS_CLASS_TEMP].service_sum_ns == t[2].done_at - t[1].done_at);
	free(snap);
	for (int i = 0; i < 3; i++)
		free(t[i].buf);
	ios_destroy(s);
	ios_stats_destroy(st);
	close(fd);
}

/* direct: counted before done runs; errors and EOF; no stats, no counts */
static void test_direct(void)
{
	struct ios_stats *st = ios_stats_create(), *other = ios_stats_create();
	struct ios_stats_snapshot *snap;
	struct ios_sched *s = ios_create("direct"), *s2 = ios_create("direct");
	struct treq t;
	int fd = tmpfile_fd(), i;

	CHECK(s && s2 && st && other);
	submit(s, &t, fd, 1, IOS_CLASS_WAL, IOS_WRITE, 0, 8192); /* not attached yet */
	free(t.buf);
	ios_attach_stats(s, st);
	for (i = 0; i < 3; i++) {
		submit(s, &t, fd, 1, IOS_CLASS_WAL, IOS_WRITE, (off_t)i * 8192, 8192);
		free(t.buf);
	}
	memset(&t, 0, sizeof(t));
	t.st = st;
	t.r.fd = fd;
	t.r.cls = IOS_CLASS_WAL;
	t.r.dir = IOS_SYNC;
	t.r.done = on_done;
	ios_submit(s, &t.r);
	CHECK(t.calls == 1 && t.res == 0);
	CHECK(t.ops_seen == 4); /* the sync was counted before done ran */
	submit(s, &t, fd, 1, IOS_CLASS_WAL, IOS_READ, 20000, 8192); /* 4576 bytes, then EOF */
	CHECK(t.res == 3 * 8192 - 20000);
	free(t.buf);
	submit(s, &t, fd, 1, IOS_CLASS_WAL, IOS_READ, 1 << 20, 8192); /* at EOF: 0 bytes */
	CHECK(t.res == 0);
	free(t.buf);
	submit(s, &t, -1, 1, IOS_CLASS_META, IOS_WRITE, 0, 100); /* EBADF */
	CHECK(t.res == -EBADF);
	free(t.buf);
	/* a second scheduler (a reload) adds to the same statistics */
	ios_attach_stats(s2, st);
	submit(s2, &t, fd, 1, IOS_CLASS_WAL, IOS_WRITE, 0, 4096);
	free(t.buf);
	/* detached: no longer counted */
	ios_attach_stats(s, NULL);
	submit(s, &t, fd, 1, IOS_CLASS_WAL, IOS_WRITE, 0, 4096);
	free(t.buf);

	snap = snap_of(st);
	CHECK(snap->cls[IOS_CLASS_WAL].write_ops == 4);
	CHECK(snap->cls[IOS_CLASS_WAL].write_bytes == 3 * 8192 + 4096);
	CHECK(snap->cls[IOS_CLASS_WAL].sync_ops == 1);
	CHECK(snap->cls[IOS_CLASS_WAL].read_ops == 2);
	CHECK(snap->cls[IOS_CLASS_WAL].read_bytes == 3 * 8192 - 20000);
	CHECK(snap->cls[IOS_CLASS_WAL].errors == 0);
	CHECK(snap->cls[IOS_CLASS_WAL].queue_sum_ns == 0);
	CHECK(snap->cls[IOS_CLASS_WAL].service_sum_ns > 0);
	CHECK(snap->cls[IOS_CLASS_WAL].lat_count == 7);
	CHECK(snap->cls[IOS_CLASS_META].write_ops == 1 && snap->cls[IOS_CLASS_META].errors == 1);
	CHECK(snap->cls[IOS_CLASS_META].write_bytes == 0);
	CHECK(snap->total.lat_count == 8);
	free(snap);
	snap = snap_of(other);
	CHECK(snap->total.lat_count == 0);
	free(snap);
	ios_destroy(s);
	ios_destroy(s2);
	ios_stats_destroy(st);
	ios_stats_destroy(other);
	close(fd);
}

/* read_trace() -- close @w and read the records of @path into @out. */
static int read_trace(struct ios_trace_writer *w, const char *path, struct ios_trace_rec *out,
		      int max)
{
	struct ios_trace_stats tst;
	struct ios_trace_reader *r;
	int n = 0, err = 0, ret;

	CHECK(ios_trace_writer_close(w, &tst) == 0);
	CHECK(tst.dropped == 0);
	r = ios_trace_reader_open(path, &err);
	CHECK(r != NULL);
	if (!r)
		return 0;
	while (n < max && (ret = ios_trace_read(r, &out[n])) == 1)
		n++;
	CHECK(n < max && ret == 0);
	ios_trace_reader_close(r);
	unlink(path);
	return n;
}

/* ios_attach_trace(): one record per completed request, in the queueing
 * core (exact virtual times) and in direct; a reload's scheduler shares the
 * writer; detached, nothing more is recorded */
static void test_trace(void)
{
	char path[] = "/tmp/test_sched_stats.trace.XXXXXX";
	struct ios_trace_opts opts = {.wait_when_full = 1};
	struct ios_trace_rec rec[16];
	struct ios_settings set;
	struct ios_trace_writer *w;
	struct ios_sched *s, *d;
	struct treq t[3];
	int fd = tmpfile_fd(), tfd, err = 0, n;
	char junk[8192];

	memset(junk, 1, sizeof(junk));
	CHECK(pwrite(fd, junk, sizeof(junk), 0) == sizeof(junk));
	tfd = mkstemp(path);
	CHECK(tfd >= 0);
	close(tfd);
	unlink(path);
	w = ios_trace_writer_create_opts(path, &opts, &err);
	CHECK(w != NULL);
	if (!w)
		return;

	conf_defaults(&ios_conf, &set);
	set.policy = IOS_POLICY_NOOP;
	set.device_model = IOS_DEVICE_SSD;
	set.nr_requests = 1;
	s = ios_create_virtual(&set);
	ios_attach_trace(s, w);
	submit(s, &t[0], fd, 1, IOS_CLASS_INDEX, IOS_READ, 0, 4096);
	submit(s, &t[1], fd, 2, IOS_CLASS_INDEX, IOS_READ, 4096, 4096);
	submit(s, &t[2], fd, 3, IOS_CLASS_TEMP, IOS_READ, 6144, 4096); /* short */
	ios_virtual_advance(s, 100 * MS);
	ios_destroy(s);
	for (int i = 0; i < 3; i++)
		free(t[i].buf);

	d = ios_create("direct");
	ios_attach_trace(d, w);
	submit(d, &t[0], fd, 9, IOS_CLASS_WAL, IOS_WRITE, 8192, 100);
	free(t[0].buf);
	memset(&t[1], 0, sizeof(t[1]));
	t[1].r.fd = fd;
	t[1].r.fid.ino = 9;
	t[1].r.cls = IOS_CLASS_WAL;
	t[1].r.dir = IOS_SYNC;
	t[1].r.flags = IOS_F_DATASYNC;
	t[1].r.pid = 4242;
	t[1].r.done = on_done;
	ios_submit(d, &t[1].r);
	submit(d, &t[2], -1, 5, IOS_CLASS_META, IOS_WRITE, 0, 10); /* EBADF */
	free(t[2].buf);
	ios_attach_trace(d, NULL);
	submit(d, &t[0], fd, 9, IOS_CLASS_WAL, IOS_WRITE, 0, 100); /* not recorded */
	free(t[0].buf);
	ios_destroy(d);

	n = read_trace(w, path, rec, 16);
	CHECK(n == 6);
	if (n == 6) {
		/* queueing: times exact on the virtual clock, as in test_queue_time */
		CHECK(rec[0].ino == 1 && rec[0].cls == IOS_CLASS_INDEX && rec[0].dir == IOS_READ);
		CHECK(rec[0].off == 0 && rec[0].len == 4096 && rec[0].result == 4096);
		CHECK(rec[0].time_ns == 0 && rec[0].queue_us == 0 && rec[0].service_us > 0);
		CHECK(rec[1].ino == 2 && rec[1].off == 4096 && rec[1].result == 4096);
		CHECK(rec[1].queue_us == rec[0].service_us);
		CHECK(rec[2].cls == IOS_CLASS_TEMP && rec[2].len == 4096 && rec[2].result == 2048);
		CHECK(rec[2].queue_us > rec[1].queue_us);
		/* direct: no queue time */
		CHECK(rec[3].cls == IOS_CLASS_WAL && rec[3].dir == IOS_WRITE && rec[3].off == 8192);
		CHECK(rec[3].len == 100 && rec[3].result == 100 && rec[3].queue_us == 0);
		CHECK(rec[3].time_ns > 0);
		CHECK(rec[4].dir == IOS_SYNC && rec[4].len == 0 && rec[4].result == 0);
		CHECK(rec[4].pid == 4242 && (rec[4].flags & IOS_TRACE_F_DATASYNC));
		CHECK(rec[4].time_ns >= rec[3].time_ns);
		CHECK(rec[5].cls == IOS_CLASS_META && rec[5].result == -EBADF);
		CHECK(rec[5].flags == 0);
	}
	close(fd);
}

int main(void)
{
	test_merge_accounting();
	test_queue_time();
	test_direct();
	test_trace();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
