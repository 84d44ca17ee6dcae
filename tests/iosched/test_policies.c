/*
 * test_policies.c -- the rules of the reference elevators, on the virtual
 * clock with the emulated device:
 *   - elevator-2.4: a request is passed over at most read_passover (reads)
 *     or write_passover (writes) times, and is never put behind requests
 *     that arrived later once its budget is spent;
 *   - elevator-2.4-aa: bytes in flight never exceed max_inflight_kb, and
 *     once the limit was reached the queue is refilled only after half of
 *     it came back (batches of half);
 *   - as-2.6: after a read completes, the same process's next read is
 *     waited for (another process's read queued meanwhile goes after it),
 *     the wait ends after antic_expire_us, and reads and writes alternate
 *     in batches so a write is not starved by a reader that keeps coming
 *     back.
 * The correctness property test (every request once, data order) runs over
 * these policies in test_sched.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

/* ---- elevator-2.4 ------------------------------------------------------------ */

/* passes() -- how many requests that arrived after t[i] completed before it
 * (with nr_requests 1 and no merges: were inserted in front of it). */
static int passes(const struct treq *t, int n, int i)
{
	int j, k = 0;

	for (j = i + 1; j < n; j++)
		if (t[j].order < t[i].order)
			k++;
	return k;
}

/* the example: P, then a far read X, then nearer reads that sort between
 * P and X; X lets exactly read_passover of them go first */
static void test_passover_example(int dir, int budget)
{
	struct ios_settings set;
	struct treq first, t[8];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	settings(&set, IOS_POLICY_ELEVATOR24, IOS_DEVICE_HDD);
	set.nr_requests = 1;
	set.read_passover = dir == IOS_READ ? budget : 1000;
	set.write_passover = dir == IOS_WRITE ? budget : 1000;
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	/* one in flight, so the others queue */
	submit(s, &first, fd, 1, IOS_CLASS_HEAP, (enum ios_dir)dir, 0, 4096, 'f');
	ios_virtual_advance(s, 0);
	submit(s, &t[0], fd, 1, IOS_CLASS_HEAP, (enum ios_dir)dir, 1 << 20, 4096, 'p');
	submit(s, &t[1], fd, 1, IOS_CLASS_HEAP, (enum ios_dir)dir, 100 << 20, 4096, 'x');
	for (i = 2; i < 8; i++)
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, (enum ios_dir)dir, (off_t)i << 20, 4096,
		       'n');
	ios_virtual_advance(s, 10000 * MS);
	for (i = 0; i < 8; i++)
		CHECK(t[i].calls == 1 && t[i].res == 4096);
	CHECK(passes(t, 8, 1) == budget);
	/* order: P, the first `budget` nearer ones (sorted), X, the rest */
	CHECK(t[0].order < t[2].order);
	for (i = 2; i < 8; i++) {
		if (i < 2 + budget)
			CHECK(t[i].order < t[1].order);
		else
			CHECK(t[i].order > t[1].order);
		if (i > 2)
			CHECK(t[i].order > t[i - 1].order);
	}
	free(first.buf);
	for (i = 0; i < 8; i++)
		free(t[i].buf);
	ios_destroy(s);
	close(fd);
}

/* random arrivals: no request is passed over more than its budget, and
 * some are passed over exactly that often (the limit is what holds) */
static void test_passover_random(void)
{
	enum { N = 600 };
	static struct treq t[N];
	struct ios_settings set;
	struct ios_sched *s;
	int fd = tmpfile_fd(), i, at_limit = 0, over = 0;
	uint64_t x = 12345, now = 0;

	settings(&set, IOS_POLICY_ELEVATOR24, IOS_DEVICE_HDD);
	set.nr_requests = 1;
	set.read_passover = 3;
	set.write_passover = 5;
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	for (i = 0; i < N; i++) {
		enum ios_dir dir;
		off_t off;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		dir = (x >> 40) % 3 == 0 ? IOS_WRITE : IOS_READ;
		/* distinct 8 KiB slots with 4 KiB requests: never adjacent,
		 * never overlapping (no merges, no ordering rules) */
		off = (off_t)(((unsigned)i * 7919u) % 20000u) * 8192;
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, dir, off, 4096, 'r');
		if (i % 3 == 2) {
			now += 2 * MS;
			ios_virtual_advance(s, now);
		}
	}
	ios_virtual_advance(s, now + 600000 * MS);
	for (i = 0; i < N; i++) {
		int budget = t[i].r.dir == IOS_READ ? 3 : 5, k = passes(t, N, i);

		CHECK(t[i].calls == 1);
		if (k > budget)
			over++;
		if (k == budget)
			at_limit++;
		free(t[i].buf);
	}
	CHECK(over == 0);
	CHECK(at_limit > 10);
	ios_destroy(s);
	close(fd);
}

/* ---- elevator-2.4-aa --------------------------------------------------------- */

static void test_aa_throttle(void)
{
	enum { N = 400, LIMIT_KB = 256 };
	static struct treq t[N];
	struct ios_settings set;
	struct ios_counters c;
	struct ios_sched *s;
	int fd = tmpfile_fd(), i, g, refills = 0, completions = 0, bad_refills = 0;
	size_t limit = LIMIT_KB * 1024, peak = 0, prev_bytes = 0;
	uint64_t now, prev_transfers = 0, prev_done = 0;

	settings(&set, IOS_POLICY_ELEVATOR24AA, IOS_DEVICE_HDD);
	set.max_inflight_kb = LIMIT_KB;
	set.max_request_kb = 64;
	set.nr_requests = 128;
	set.queue_depth = 1024; /* the byte limit, not the device, must bind */
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	/* 16 KiB reads in runs of 1 to 4 adjacent ones (merged into up to
	 * 64 KiB), the runs 3 MiB apart */
	for (i = 0, g = 0; i < N; g++) {
		int k;

		for (k = 0; k <= g % 4 && i < N; k++, i++)
			submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, IOS_READ,
			       (off_t)g * (3 << 20) + (off_t)k * 16384, 16384, 0);
	}
	completed_bytes = 0;
	ios_virtual_advance(s, 0);
	ios_get_counters(s, &c);
	prev_transfers = c.transfers;
	prev_bytes = c.bytes_inflight;
	peak = prev_bytes;
	CHECK(prev_bytes <= limit && prev_bytes > limit / 2);
	/* one hdd completion at most per 100 us step: see each refill */
	for (now = 100 * US; ios_pending(s) > 0 && now < 60000 * MS; now += 100 * US) {
		ios_virtual_advance(s, now);
		ios_get_counters(s, &c);
		if (c.bytes_inflight > peak)
			peak = c.bytes_inflight;
		CHECK(c.bytes_inflight <= limit && c.peak_bytes_inflight <= limit);
		if (completed_bytes != prev_done)
			completions++;
		if (c.transfers != prev_transfers) {
			/* dispatched after a completion: in flight had fallen to
			 * half (what was in flight minus what completed) */
			refills++;
			if (prev_bytes - (completed_bytes - prev_done) > limit / 2)
				bad_refills++;
		}
		prev_transfers = c.transfers;
		prev_done = completed_bytes;
		prev_bytes = c.bytes_inflight;
	}
	CHECK(ios_pending(s) == 0);
	CHECK(bad_refills == 0);
	CHECK(peak > limit - 64 * 1024);
	/* batches: far fewer refills than completions */
	CHECK(refills > 0 && refills * 2 < completions);
	for (i = 0; i < N; i++) {
		CHECK(t[i].calls == 1 && t[i].res == 16384);
		free(t[i].buf);
	}
	ios_get_counters(s, &c);
	CHECK(c.merged > 0);
	ios_destroy(s);
	close(fd);
}

/* ---- as-2.6 ---------------------------------------------------------------------- */

/* the same process's next read is waited for: B (another process, far
 * away) queued meanwhile goes after A's second read, and after that the
 * wait for A's third read gives up after antic_expire */
static void test_as_anticipation(void)
{
	struct ios_settings set;
	struct treq a1, a2, b1, b2, c1;
	struct ios_sched *s;
	int fd = tmpfile_fd();

	settings(&set, IOS_POLICY_AS, IOS_DEVICE_NONE); /* instant completions */
	set.antic_expire_us = 6000;
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	submit_pid(s, &a1, 100, fd, 1, IOS_CLASS_HEAP, IOS_READ, 0, 8192, 0);
	ios_virtual_advance(s, 0);
	CHECK(a1.calls == 1 && a1.done_at == 0);
	/* B at 1 ms: A may come back, so B waits */
	ios_virtual_advance(s, 1 * MS);
	submit_pid(s, &b1, 200, fd, 2, IOS_CLASS_HEAP, IOS_READ, 500 << 20, 8192, 0);
	ios_virtual_advance(s, 3 * MS);
	CHECK(b1.calls == 0);
	/* A's next nearby read at 3 ms: served at once, before B */
	submit_pid(s, &a2, 100, fd, 1, IOS_CLASS_HEAP, IOS_READ, 8192, 8192, 0);
	ios_virtual_advance(s, 3 * MS);
	CHECK(a2.calls == 1 && a2.done_at == 3 * MS);
	CHECK(b1.calls == 0);
	/* A does not come back: B goes antic_expire after A's read completed */
	ios_virtual_advance(s, 9 * MS - 1);
	CHECK(b1.calls == 0);
	ios_virtual_advance(s, 10 * MS);
	CHECK(b1.calls == 1 && b1.done_at == 3 * MS + 6 * MS);
	CHECK(a2.order < b1.order);

	/* a read close to where B's ended, from a third process, is as good
	 * as B's own: no waiting for B */
	submit_pid(s, &c1, 300, fd, 2, IOS_CLASS_HEAP, IOS_READ, (500 << 20) + (1 << 20), 8192, 0);
	ios_virtual_advance(s, 10 * MS);
	CHECK(c1.calls == 1 && c1.done_at == 10 * MS);
	/* ... while a far one waits for the window after C's read */
	ios_virtual_advance(s, 11 * MS);
	submit_pid(s, &b2, 200, fd, 1, IOS_CLASS_HEAP, IOS_READ, 900 << 20, 8192, 0);
	ios_virtual_advance(s, 12 * MS);
	CHECK(b2.calls == 0);
	ios_virtual_advance(s, 200 * MS);
	CHECK(b2.calls == 1 && b2.done_at == 10 * MS + 6 * MS);
	free(a1.buf);
	free(a2.buf);
	free(b1.buf);
	free(b2.buf);
	free(c1.buf);
	ios_destroy(s);
	close(fd);
}

/* without a known process there is nothing to anticipate, and with
 * antic_expire_us 0 neither */
static void test_as_no_anticipation(void)
{
	struct ios_settings set;
	struct treq a1, b1;
	struct ios_sched *s;
	int fd = tmpfile_fd(), k;

	for (k = 0; k < 2; k++) {
		settings(&set, IOS_POLICY_AS, IOS_DEVICE_NONE);
		if (k == 1)
			set.antic_expire_us = 0;
		s = ios_create_virtual(&set);
		submit_pid(s, &a1, k == 0 ? 0 : 100, fd, 1, IOS_CLASS_HEAP, IOS_READ, 0, 4096, 0);
		ios_virtual_advance(s, 1 * MS);
		submit_pid(s, &b1, 200, fd, 2, IOS_CLASS_HEAP, IOS_READ, 500 << 20, 4096, 0);
		ios_virtual_advance(s, 1 * MS);
		CHECK(b1.calls == 1 && b1.done_at == 1 * MS);
		free(a1.buf);
		free(b1.buf);
		ios_destroy(s);
	}
	close(fd);
}

/* a reader that keeps coming back is anticipated for, yet a queued write
 * goes when the read batch (read_batch_expire) ends, and reads come back
 * after the write batch */
static void test_as_batches(void)
{
	static struct treq r[4000];
	struct ios_settings set;
	struct treq w;
	struct ios_sched *s;
	int fd = tmpfile_fd(), n = 0, i, after = 0;
	uint64_t now;

	settings(&set, IOS_POLICY_AS, IOS_DEVICE_HDD);
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	submit_pid(s, &r[n++], 100, fd, 1, IOS_CLASS_HEAP, IOS_READ, 0, 65536, 0);
	ios_virtual_advance(s, 0);
	submit_pid(s, &w, 300, fd, 9, IOS_CLASS_HEAP, IOS_WRITE, 0, 8192, 'w');
	/* process 100 reads sequentially, each read 0.5 ms after the last */
	for (now = 500 * US; now < 1500 * MS && n < 4000; now += 500 * US) {
		ios_virtual_advance(s, now);
		if (r[n - 1].calls) {
			submit_pid(s, &r[n], 100, fd, 1, IOS_CLASS_HEAP, IOS_READ, (off_t)n * 65536,
				   65536, 0);
			n++;
		}
	}
	ios_virtual_advance(s, now + 1000 * MS);
	CHECK(w.calls == 1 && w.res == 8192);
	/* not before the read batch of 500 ms, not much after it */
	CHECK(w.done_at >= 500 * MS && w.done_at <= 500 * MS + 100 * MS);
	for (i = 0; i < n; i++) {
		CHECK(r[i].calls == 1);
		if (r[i].order > w.order)
			after++;
		free(r[i].buf);
	}
	CHECK(after > 0); /* the reader went on after the write */
	free(w.buf);
	ios_destroy(s);
	close(fd);
}

int main(void)
{
	test_passover_example(IOS_READ, 2);
	test_passover_example(IOS_WRITE, 3);
	test_passover_example(IOS_READ, 0);
	test_passover_random();
	test_aa_throttle();
	test_as_anticipation();
	test_as_no_anticipation();
	test_as_batches();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
