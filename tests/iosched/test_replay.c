/*
 * test_replay.c -- trace replay (iosched/replay.c) and per-relation
 * counters (iosched/stats.c):
 *   - a replay submits every record once, with its class, direction and
 *     length, and is deterministic: the same trace and settings give
 *     bit-identical statistics and span;
 *   - records are replayed in arrival order although the file holds them
 *     in completion order;
 *   - a sync waits for the write to its file that arrived before it, on
 *     the emulated disk: its latency covers the write's;
 *   - profiles and devices differ on one trace (noop and elevator-2.4 on
 *     the hdd model; hdd against ssd);
 *   - a truncated trace replays the records before the damage and reports
 *     -EBADMSG;
 *   - readahead is modelled: sequential reads are served from windows read
 *     ahead (hits counted, lower latency);
 *   - relation counters: ops and bytes per fork, one entry per key, the
 *     overflow entry once the table is full, diff and top-N.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iosched/trace_gen.h"

#include "check.h"

static char dir[] = "/tmp/test_replay.XXXXXX";

static char *tpath(const char *name)
{
	static char buf[2][256];
	static int i;

	i = (i + 1) % 2;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void write_recs(const char *path, const struct ios_trace_rec *r, size_t n)
{
	struct ios_trace_opts o = {.wait_when_full = 1};
	struct ios_trace_writer *w;
	int err = 0;
	size_t i;

	w = ios_trace_writer_create_opts(path, &o, &err);
	CHECK(w);
	if (!w)
		return;
	for (i = 0; i < n; i++)
		CHECK(ios_trace_write(w, &r[i]) == 0);
	CHECK(ios_trace_writer_close(w, NULL) == 0);
}

/* replay_ra() -- replay @path with policy @policy on device @dev and
 * readahead windows of up to @ra_kb (-1: the default) into @snap; the
 * records replayed, *@span, *@err. */
static int64_t replay_ra(const char *path, const char *policy, int dev, int64_t ra_kb,
			 struct ios_stats_snapshot *snap, uint64_t *span, int *err)
{
	struct ios_settings set;
	struct ios_trace_reader *r;
	struct ios_stats *st = ios_stats_create();
	int64_t n;
	int oerr = 0;

	conf_defaults(&ios_conf, &set);
	set.policy = ios_policy_by_name(policy);
	set.device_model = dev;
	if (ra_kb >= 0)
		set.ra_window_kb = ra_kb;
	r = ios_trace_reader_open(path, &oerr);
	CHECK(r && st);
	if (!r || !st) {
		ios_stats_destroy(st);
		return -1;
	}
	n = ios_trace_replay(r, &set, st, span, err);
	CHECK(ios_stats_snapshot(st, snap) == 0);
	snap->start_ns = snap->time_ns = 0; /* the only real-clock fields */
	ios_trace_reader_close(r);
	ios_stats_destroy(st);
	return n;
}

static int64_t replay_file(const char *path, const char *policy, int dev,
			   struct ios_stats_snapshot *snap, uint64_t *span, int *err)
{
	return replay_ra(path, policy, dev, -1, snap, span, err);
}

static void test_replay(void)
{
	enum { N = 4000 };
	struct ios_trace_rec *recs = calloc(N, sizeof(*recs));
	struct ios_stats_snapshot *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint64_t span_a, span_b, ops;
	int err, i, c;
	struct stat sb;

	for (i = 0; i < N; i++)
		gen_rec(7, (uint64_t)i, &recs[i]);
	/* the file holds completion order: reverse pairs to check sorting */
	for (i = 0; i + 1 < N; i += 2) {
		struct ios_trace_rec t = recs[i];

		recs[i] = recs[i + 1];
		recs[i + 1] = t;
	}
	write_recs(tpath("gen.trc"), recs, N);

	CHECK(replay_file(tpath("gen.trc"), "noop", IOS_DEVICE_HDD, a, &span_a, &err) == N);
	CHECK(err == 0);
	CHECK(replay_file(tpath("gen.trc"), "noop", IOS_DEVICE_HDD, b, &span_b, &err) == N);
	CHECK(span_a == span_b && span_a > 0);
	CHECK(memcmp(a, b, sizeof(*a)) == 0); /* deterministic, bit for bit */
	ops = a->total.read_ops + a->total.write_ops + a->total.sync_ops;
	CHECK(ops == N);
	for (c = 0; c < IOS_NCLASS; c++) {
		uint64_t want_r = 0, want_wb = 0;

		for (i = 0; i < N; i++)
			if (recs[i].cls == c && recs[i].dir == IOS_READ)
				want_r++;
			else if (recs[i].cls == c && recs[i].dir == IOS_WRITE)
				want_wb += recs[i].len;
		CHECK(a->cls[c].read_ops == want_r);
		CHECK(a->cls[c].write_bytes == want_wb);
	}

	/* another policy, another device: other latencies, same work */
	CHECK(replay_file(tpath("gen.trc"), "elevator-2.4", IOS_DEVICE_HDD, b, &span_b, &err) == N);
	CHECK(b->total.write_bytes == a->total.write_bytes);
	CHECK(b->total.lat_avg_ns != a->total.lat_avg_ns || span_b != span_a);
	CHECK(replay_file(tpath("gen.trc"), "noop", IOS_DEVICE_SSD, b, &span_b, &err) == N);
	CHECK(b->total.lat_avg_ns < a->total.lat_avg_ns);

	/* truncated: the records before the cut, then -EBADMSG */
	CHECK(stat(tpath("gen.trc"), &sb) == 0);
	CHECK(truncate(tpath("gen.trc"), sb.st_size / 2) == 0);
	{
		int64_t n = replay_file(tpath("gen.trc"), "noop", IOS_DEVICE_HDD, b, &span_b, &err);

		CHECK(n > 0 && n < N);
		CHECK(err == -EBADMSG);
		CHECK((int64_t)(b->total.read_ops + b->total.write_ops + b->total.sync_ops) == n);
	}
	free(recs);
	free(a);
	free(b);
}

/* A 1 MiB write then, 1 us later, an fsync of the same file: on the hdd
 * model the sync cannot complete before the write. */
static void test_sync_order(void)
{
	struct ios_trace_rec r[3];
	struct ios_stats_snapshot *s = malloc(sizeof(*s));
	uint64_t span;
	int err;

	memset(r, 0, sizeof(r));
	/* in completion order: the sync last, the read of another file first */
	r[0] = (struct ios_trace_rec){.time_ns = 5000,
				      .ino = 2,
				      .off = 0,
				      .len = 8192,
				      .cls = IOS_CLASS_HEAP,
				      .dir = IOS_READ};
	r[1] = (struct ios_trace_rec){.time_ns = 1000,
				      .ino = 1,
				      .off = 0,
				      .len = 1 << 20,
				      .cls = IOS_CLASS_WAL,
				      .dir = IOS_WRITE};
	r[2] = (struct ios_trace_rec){
	    .time_ns = 2000, .ino = 1, .cls = IOS_CLASS_XACT, .dir = IOS_SYNC};
	write_recs(tpath("order.trc"), r, 3);
	CHECK(replay_file(tpath("order.trc"), "noop", IOS_DEVICE_HDD, s, &span, &err) == 3);
	CHECK(err == 0);
	/* the sync (its own class here) waited for the whole write */
	CHECK(s->cls[IOS_CLASS_XACT].sync_ops == 1);
	CHECK(s->cls[IOS_CLASS_XACT].lat_max_ns + 1000 >= s->cls[IOS_CLASS_WAL].lat_max_ns);
	CHECK(s->cls[IOS_CLASS_WAL].lat_max_ns > 1000000); /* 1 MiB on a disk: > 1 ms */
	free(s);
}

/* readahead is modelled: 64 sequential 32 KiB reads, one every 2 ms, of a
 * heap file, and the same of a file with the same inode number on another
 * device; with windows of 512 KiB most reads are served from windows read
 * ahead (hits counted, lower latency than without readahead). */
static void test_readahead(void)
{
	enum { N = 64 };
	struct ios_trace_rec r[2 * N];
	struct ios_stats_snapshot *on = malloc(sizeof(*on)), *off = malloc(sizeof(*off));
	uint64_t span;
	int err, i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < 2 * N; i++)
		r[i] = (struct ios_trace_rec){.time_ns = 1000000 + (uint64_t)(i / 2) * 2000000,
					      .dev = (uint64_t)(1 + i % 2),
					      .ino = 16384,
					      .off = (uint64_t)(i / 2) * 32768,
					      .len = 32768,
					      .result = 32768,
					      .cls = IOS_CLASS_HEAP,
					      .dir = IOS_READ};
	write_recs(tpath("seq.trc"), r, 2 * N);
	CHECK(replay_ra(tpath("seq.trc"), "dbaware", IOS_DEVICE_HDD, 512, on, &span, &err) ==
	      2 * N);
	CHECK(err == 0);
	CHECK(replay_ra(tpath("seq.trc"), "dbaware", IOS_DEVICE_HDD, 0, off, &span, &err) == 2 * N);
	CHECK(on->cls[IOS_CLASS_HEAP].read_ops == 2 * N &&
	      off->cls[IOS_CLASS_HEAP].read_ops == 2 * N);
	CHECK(on->cls[IOS_CLASS_HEAP].read_bytes == 2 * N * 32768);
	CHECK(off->cls[IOS_CLASS_HEAP].ra_hit_bytes == 0);
	/* all but each file's first read (which started its first window) */
	CHECK(on->cls[IOS_CLASS_HEAP].ra_hit_bytes >= 2 * (N - 2) * 32768);
	CHECK(on->cls[IOS_CLASS_HEAP].lat_avg_ns < off->cls[IOS_CLASS_HEAP].lat_avg_ns);
	fprintf(stderr, "replayed readahead: %llu KiB hit, average read %.3f ms (without: %.3f)\n",
		(unsigned long long)on->cls[IOS_CLASS_HEAP].ra_hit_bytes >> 10,
		on->cls[IOS_CLASS_HEAP].lat_avg_ns / 1e6,
		off->cls[IOS_CLASS_HEAP].lat_avg_ns / 1e6);
	free(on);
	free(off);
}

static void test_relations(void)
{
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_rel *r1, *r2, *again, *over = NULL;
	struct ios_req req;
	struct ios_rel_list l, l2;
	uint32_t i;

	CHECK(st);
	if (!st)
		return;
	r1 = ios_stats_rel_get(st, 1663, 5, 16384);
	r2 = ios_stats_rel_get(st, 1664, 0, 1262);
	again = ios_stats_rel_get(st, 1663, 5, 16384);
	CHECK(r1 && r2 && r1 != r2 && again == r1);
	CHECK(ios_stats_rel_get(st, 1663, 5, 0) == NULL);
	memset(&req, 0, sizeof(req));
	req.rel = r1;
	req.cls = IOS_CLASS_INDEX;
	req.dir = IOS_WRITE;
	ios_stats_account(st, &req, 8192, 0, 1000);
	ios_stats_account(st, &req, 8192, 0, 1000);
	req.cls = IOS_CLASS_FSM;
	ios_stats_account(st, &req, 4096, 0, 1000);
	req.dir = IOS_READ;
	req.cls = IOS_CLASS_VM;
	ios_stats_account(st, &req, 100, 0, 1000);
	req.dir = IOS_SYNC;
	ios_stats_account(st, &req, 0, 0, 1000);
	req.rel = r2;
	req.dir = IOS_READ;
	req.cls = IOS_CLASS_HEAP;
	ios_stats_account(st, &req, -5, 0, 1000); /* an error: an op, no bytes */

	CHECK(ios_stats_rel_snapshot(st, &l) == 0);
	CHECK(l.count == 2 && l.untracked == 0);
	ios_rel_top(&l, 0);
	CHECK(l.rel[0].relnode == 16384 && l.rel[1].relnode == 1262);
	CHECK(l.rel[0].write_ops == 3 && l.rel[0].read_ops == 1 && l.rel[0].sync_ops == 1);
	CHECK(l.rel[0].write_bytes[IOS_FORK_MAIN] == 16384);
	CHECK(l.rel[0].write_bytes[IOS_FORK_FSM] == 4096);
	CHECK(l.rel[0].read_bytes[IOS_FORK_VM] == 100);
	CHECK(l.rel[0].main_cls == IOS_CLASS_INDEX);
	CHECK(ios_rel_bytes(&l.rel[0]) == 16384 + 4096 + 100);
	CHECK(l.rel[1].read_ops == 1 && ios_rel_bytes(&l.rel[1]) == 0);
	CHECK(l.rel[1].spc == 1664 && l.rel[1].db == 0);

	/* an interval: only what happened since */
	req.rel = r2;
	ios_stats_account(st, &req, 8192, 0, 1000);
	CHECK(ios_stats_rel_snapshot(st, &l2) == 0);
	ios_rel_diff(&l, &l2);
	CHECK(l2.count == 1 && l2.rel[0].relnode == 1262 && l2.rel[0].read_ops == 1);
	CHECK(ios_rel_bytes(&l2.rel[0]) == 8192);
	free(l.rel);
	free(l2.rel);

	/* fill the table: later relations share the overflow entry */
	for (i = 0; i < IOS_STATS_MAX_RELATIONS + 10; i++)
		over = ios_stats_rel_get(st, 1663, 6, 20000 + i);
	CHECK(ios_stats_rel_get(st, 1663, 6, 20000) != over); /* an early one kept */
	req.rel = over;
	ios_stats_account(st, &req, 8192, 0, 1000);
	CHECK(ios_stats_rel_snapshot(st, &l) == 0);
	CHECK(l.untracked == 12); /* two of ours were in already: 8190 new fit */
	ios_rel_top(&l, 1);
	CHECK(l.count == 1 && l.active == 3);
	CHECK(l.rel[0].relnode == 16384);
	free(l.rel);
	ios_stats_destroy(st);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_replay();
	test_sync_order();
	test_readahead();
	test_relations();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_replay: could not remove %s\n", dir);
	if (failures) {
		fprintf(stderr, "test_replay: %d checks failed\n", failures);
		return 1;
	}
	printf("test_replay: all checks passed\n");
	return 0;
}
