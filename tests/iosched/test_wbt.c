/*
 * test_wbt.c -- dbaware's writeback throttle, on the virtual clock with an
 * emulated ssd that takes many transfers at once (so writeback in flight
 * delays a WAL flush, as on a real shared device):
 *
 *   - a bulk of heap writeback with commits (a WAL write and its sync every
 *     5 ms): the throttle cuts the writeback depth, and the p99 of the
 *     commits made while the bulk is written (after the first half second:
 *     what was in flight before the first cut is at the device already) is
 *     a fraction of what it is without the throttle (wal_target_us = 0);
 *   - writeback is paced, not stopped: every heap write completes, and the
 *     whole bulk takes at most twice as long as without the throttle;
 *   - once the bulk is written the commits are fast again and the depth
 *     grows back to its maximum;
 *   - the decisions are in the statistics (windows, cuts, raises, WAL
 *     flushes timed and slow).
 */
#include <stdio.h>

#include "sched_util.h"

#define NHEAP	    1500
#define HEAP_LEN    65536
#define COMMIT_NS   (5 * MS)
#define NCOMMIT	    600
#define STEADY_FROM (500 * MS)	/* commits measured: from here ... */
#define STEADY_TO   (1500 * MS) /* ... to here, while the bulk is written */
#define TARGET_US   2000
#define MAX_DEPTH   64

struct run {
	uint64_t p99_ns;       /* of the commits' syncs */
	uint64_t heap_done_ns; /* when the last heap write completed */
	struct ios_stats_snapshot snap;
};

static void run(int64_t target_us, struct run *out)
{
	static struct treq heap[NHEAP], walw[NCOMMIT], wals[NCOMMIT];
	static uint64_t lat[NCOMMIT];
	int nlat = 0;
	struct ios_settings set;
	struct ios_stats *st = ios_stats_create();
	struct ios_sched *s;
	int fd = tmpfile_fd(), wfd = tmpfile_fd(), i, n;
	uint64_t t, sent[NCOMMIT];

	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_SSD);
	set.ssd_latency_us = 100;
	set.seq_mb_s = 50;
	set.queue_depth = MAX_DEPTH; /* the device takes all we give it */
	set.nr_requests = MAX_DEPTH;
	set.wal_target_us = target_us;
	set.throttle_window_ms = 100;
	s = ios_create_virtual(&set);
	CHECK(s != NULL);
	ios_attach_stats(s, st);
	for (i = 0; i < NHEAP; i++)
		submit(s, &heap[i], fd, 10, IOS_CLASS_HEAP, IOS_WRITE, (off_t)i * HEAP_LEN,
		       HEAP_LEN, 'h');
	memset(out, 0, sizeof(*out));
	for (n = 0, t = 0; n < NCOMMIT; n++, t += COMMIT_NS) {
		ios_virtual_advance(s, t);
		sent[n] = ios_virtual_now(s);
		submit(s, &walw[n], wfd, 1, IOS_CLASS_WAL, IOS_WRITE, (off_t)n * 8192, 8192, 'w');
		submit(s, &wals[n], wfd, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	}
	ios_virtual_advance(s, t + 60000 * MS);
	for (i = 0; i < NHEAP; i++) {
		CHECK(heap[i].calls == 1 && heap[i].res == HEAP_LEN);
		if (heap[i].done_at > out->heap_done_ns)
			out->heap_done_ns = heap[i].done_at;
		free(heap[i].buf);
	}
	for (n = 0; n < NCOMMIT; n++) {
		CHECK(walw[n].calls == 1 && wals[n].calls == 1 && wals[n].res == 0);
		if (sent[n] >= STEADY_FROM && sent[n] < STEADY_TO)
			lat[nlat++] = wals[n].done_at - sent[n];
		free(walw[n].buf);
	}
	qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_u64);
	out->p99_ns = nlat ? lat[nlat * 99 / 100] : 0;
	ios_stats_snapshot(st, &out->snap);
	ios_destroy(s);
	ios_stats_destroy(st);
	close(fd);
	close(wfd);
}

int main(void)
{
	static struct run on, off;

	run(0, &off);
	run(TARGET_US, &on);
	printf("without throttle: commit p99 %.2f ms, bulk written at %.2f s\n",
	       (double)off.p99_ns / MS, (double)off.heap_done_ns / 1e9);
	printf("with throttle:    commit p99 %.2f ms, bulk written at %.2f s; %llu decisions, "
	       "%llu cuts, %llu raises, %llu of %llu WAL flushes slow, throttled %.2f s, "
	       "depth %llu of %llu\n",
	       (double)on.p99_ns / MS, (double)on.heap_done_ns / 1e9,
	       (unsigned long long)on.snap.throttle.windows,
	       (unsigned long long)on.snap.throttle.windows_cut,
	       (unsigned long long)on.snap.throttle.windows_raised,
	       (unsigned long long)on.snap.throttle.wal_slow,
	       (unsigned long long)on.snap.throttle.wal_flushes,
	       (double)on.snap.throttle.throttled_ns / 1e9,
	       (unsigned long long)on.snap.throttle.depth,
	       (unsigned long long)on.snap.throttle.max_depth);
	CHECK(off.snap.throttle.target_ns == 0 && off.snap.throttle.windows == 0);
	CHECK(on.snap.throttle.target_ns == TARGET_US * US);
	CHECK(on.snap.throttle.windows_cut > 0 && on.snap.throttle.windows_raised > 0);
	CHECK(on.snap.throttle.wal_flushes == NCOMMIT);
	CHECK(on.p99_ns * 3 < off.p99_ns);			     /* commits much faster */
	CHECK(off.heap_done_ns > STEADY_TO);			     /* the bulk lasts */
	CHECK(on.heap_done_ns < 2 * off.heap_done_ns);		     /* paced, not stopped */
	CHECK(on.snap.throttle.depth == on.snap.throttle.max_depth); /* open again */
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
