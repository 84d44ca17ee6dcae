/*
 * test_sched.c -- the scheduler core and policies on a virtual clock with
 * the emulated device: merging and its limit, sync barriers, overlapping
 * writes kept in order, read-after-write, deadline-2.6 write expiry,
 * dbaware priorities and deadlines, and a seeded property test (random
 * arrivals, errors and reloads (drain, new tunables, maybe another policy);
 * every request completes exactly once with data at least as new as every
 * write that arrived before it; a sync completes after every earlier write
 * to its file, overlapping writes in arrival order; each file holds the
 * last write in arrival order) over every queueing policy, on the
 * synchronous virtual back end and on one that keeps transfers in flight
 * together and performs and completes them in a seeded random order
 * (ios_virtual_reorder()).  The rules of the reference elevators are in
 * test_policies.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

/* merging: adjacent writes become one transfer, up to max_request_kb */
static void test_merge(void)
{
	struct ios_settings set;
	struct ios_counters c;
	struct treq t[8];
	struct ios_sched *s;
	char buf[4096];
	int fd = tmpfile_fd(), i;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_SSD);
	set.max_request_kb = 256;
	s = ios_create_virtual(&set);
	/* 8 x 64 KiB, submitted out of order: 2 transfers of 256 KiB */
	for (i = 0; i < 8; i++) {
		int k = (i * 5) % 8;

		submit(s, &t[k], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, (off_t)k * 65536, 65536,
		       (char)('a' + k));
	}
	ios_virtual_advance(s, 1000 * MS);
	ios_get_counters(s, &c);
	for (i = 0; i < 8; i++)
		CHECK(t[i].calls == 1 && t[i].res == 65536);
	CHECK(c.requests == 8);
	CHECK(c.transfers == 2);
	CHECK(c.merged == 6);
	for (i = 0; i < 8; i++) {
		CHECK(pread(fd, buf, sizeof(buf), (off_t)i * 65536 + 1000) == sizeof(buf));
		CHECK(buf[0] == 'a' + i && buf[4095] == 'a' + i);
		free(t[i].buf);
	}
	/* reads merge too, and split the data back correctly */
	for (i = 0; i < 4; i++)
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, IOS_READ, (off_t)(3 - i) * 65536, 65536, 0);
	ios_virtual_advance(s, 2000 * MS);
	for (i = 0; i < 4; i++) {
		CHECK(t[i].calls == 1 && t[i].res == 65536);
		CHECK(t[i].buf[0] == 'a' + 3 - i && t[i].buf[65535] == 'a' + 3 - i);
		free(t[i].buf);
	}
	/* different descriptors or files never merge */
	{
		int fd2 = dup(fd);
		struct ios_counters c2;

		submit(s, &t[0], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, 0, 4096, 'x');
		submit(s, &t[1], fd2, 1, IOS_CLASS_HEAP, IOS_WRITE, 4096, 4096, 'y');
		submit(s, &t[2], fd, 2, IOS_CLASS_HEAP, IOS_WRITE, 8192, 4096, 'z');
		ios_virtual_advance(s, 3000 * MS);
		ios_get_counters(s, &c2);
		CHECK(c2.transfers - c.transfers == 1 + 3); /* the 4 reads above merged: 1 */
		for (i = 0; i < 3; i++)
			free(t[i].buf);
		close(fd2);
	}
	ios_destroy(s);
	close(fd);
}

/* a sync waits for the writes before it, not for those after it */
static void test_sync_barrier(void)
{
	struct ios_settings set;
	struct treq w1, sy, w2;
	struct ios_sched *s;
	int fd = tmpfile_fd();

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_HDD);
	s = ios_create_virtual(&set);
	submit(s, &w1, fd, 7, IOS_CLASS_HEAP, IOS_WRITE, 0, 1 << 20, 'a');
	submit(s, &sy, fd, 7, IOS_CLASS_HEAP, IOS_SYNC, 0, 0, 0);
	submit(s, &w2, fd, 7, IOS_CLASS_HEAP, IOS_WRITE, 50 << 20, 4096, 'b');
	ios_virtual_advance(s, 0);
	CHECK(w1.calls == 0 && sy.calls == 0); /* the device takes its time */
	ios_virtual_advance(s, 10000 * MS);
	CHECK(w1.calls == 1 && sy.calls == 1 && w2.calls == 1);
	CHECK(w1.res == 1 << 20 && sy.res == 0 && w2.res == 4096);
	CHECK(sy.order > w1.order); /* after the write before it */
	CHECK(w2.order < sy.order); /* the later write was not held back */
	CHECK(sy.done_at >= w1.done_at);
	free(w1.buf);
	free(w2.buf);
	/* a sync error is passed through, never turned into success */
	submit(s, &sy, -1, 8, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	ios_virtual_advance(s, 20000 * MS);
	CHECK(sy.calls == 1 && sy.res == -EBADF);
	ios_destroy(s);
	close(fd);
}

/* overlapping writes keep their order; a read sees earlier writes */
static void test_overlap_order(void)
{
	struct ios_settings set;
	struct treq heap, wal, rd;
	struct ios_sched *s;
	char buf[12288];
	int fd = tmpfile_fd(), i;

	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_SSD);
	s = ios_create_virtual(&set);
	/* dbaware would serve the WAL-class write first: it overlaps the
	 * heap write that arrived before it, so it must wait */
	submit(s, &heap, fd, 3, IOS_CLASS_HEAP, IOS_WRITE, 0, 8192, 'h');
	submit(s, &wal, fd, 3, IOS_CLASS_WAL, IOS_WRITE, 4096, 8192, 'w');
	submit(s, &rd, fd, 3, IOS_CLASS_HEAP, IOS_READ, 0, 12288, 0);
	ios_virtual_advance(s, 1000 * MS);
	CHECK(heap.calls == 1 && wal.calls == 1 && rd.calls == 1);
	CHECK(heap.order < wal.order);
	CHECK(rd.order > wal.order);
	CHECK(rd.res == 12288);
	CHECK(pread(fd, buf, sizeof(buf), 0) == sizeof(buf));
	for (i = 0; i < 12288; i++)
		if (buf[i] != (i < 4096 ? 'h' : 'w') || rd.buf[i] != buf[i])
			break;
	CHECK(i == 12288);
	free(heap.buf);
	free(wal.buf);
	free(rd.buf);
	ios_destroy(s);
	close(fd);
}

/* deadline-2.6: reads are preferred; a write goes after writes_starved
 * read batches, or, if that is set high, once it has expired (within
 * write_expire plus one batch) even under a steady stream of reads */
static uint64_t deadline_write_wait(int64_t writes_starved, uint64_t *reads_before)
{
	struct ios_settings set;
	static struct treq reads[4000];
	struct treq w;
	struct ios_sched *s;
	int fd = tmpfile_fd(), i, n = 0;
	uint64_t t, done_at;

	settings(&set, IOS_POLICY_DEADLINE, IOS_DEVICE_HDD);
	set.write_expire_ms = 200;
	set.writes_starved = writes_starved;
	set.nr_requests = 1;
	s = ios_create_virtual(&set);
	CHECK(ftruncate(fd, 1 << 30) == 0);
	submit(s, &w, fd, 2, IOS_CLASS_HEAP, IOS_WRITE, 0, 4096, 'w');
	/* random reads across a big file, always 4 waiting, for 2 s */
	for (t = 0; t < 2000 * MS && n < 4000; t += MS) {
		while (n < 4000 && ios_pending(s) < 5) {
			submit(s, &reads[n], fd, 1, IOS_CLASS_HEAP, IOS_READ,
			       (off_t)((n * 7919u) % 200000) * 4096, 4096, 0);
			n++;
		}
		ios_virtual_advance(s, t);
	}
	CHECK(w.calls == 1);
	*reads_before = 0;
	for (i = 0; i < n; i++)
		if (reads[i].calls && reads[i].order < w.order)
			(*reads_before)++;
	ios_destroy(s);
	for (i = 0; i < n; i++)
		free(reads[i].buf);
	free(w.buf);
	close(fd);
	done_at = w.done_at;
	return done_at;
}

static void test_deadline_expiry(void)
{
	uint64_t before, before8, at;

	/* reads are preferred: the write waits for writes_starved (2) read
	 * batches (a batch ends early when no queued read follows in position
	 * order), and is served within write_expire plus one batch of 16 hdd
	 * reads of about 15 ms */
	at = deadline_write_wait(2, &before);
	CHECK(before >= 2);
	CHECK(at <= 200 * MS + 16 * 20 * MS);
	/* more starvation allowed: more reads go first */
	deadline_write_wait(8, &before8);
	CHECK(before8 > before);
}

/* dbaware: a WAL write and its sync go ahead of queued writeback, yet no
 * heap write waits past data_write_expire under a steady WAL load */
static void test_dbaware(void)
{
	struct ios_settings set;
	static struct treq heap[64], walw[400], wals[400];
	struct ios_sched *s;
	int fd = tmpfile_fd(), wfd = tmpfile_fd(), i, n = 0, before = 0;
	uint64_t t;

	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_HDD);
	set.nr_requests = 1;
	set.data_write_expire_ms = 300;
	s = ios_create_virtual(&set);
	for (i = 0; i < 64; i++)
		submit(s, &heap[i], fd, 10 + (uint64_t)i, IOS_CLASS_HEAP, IOS_WRITE,
		       (off_t)i * 8192, 8192, 'h');
	submit(s, &walw[0], wfd, 1, IOS_CLASS_WAL, IOS_WRITE, 0, 8192, 'w');
	submit(s, &wals[0], wfd, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
	ios_virtual_advance(s, 200 * MS);
	CHECK(walw[0].calls == 1 && wals[0].calls == 1);
	for (i = 0; i < 64; i++)
		if (heap[i].calls && heap[i].order < wals[0].order)
			before++;
	CHECK(before == 0); /* all arrived together: the commit went first */
	/* steady commits: a WAL write + sync every 2 ms for 1.6 s */
	for (t = 200 * MS, n = 1; t < 1800 * MS && n < 400; t += 2 * MS, n++) {
		submit(s, &walw[n], wfd, 1, IOS_CLASS_WAL, IOS_WRITE, (off_t)n * 8192, 8192, 'w');
		submit(s, &wals[n], wfd, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
		ios_virtual_advance(s, t);
	}
	ios_virtual_advance(s, 60000 * MS);
	for (i = 0; i < 64; i++) {
		CHECK(heap[i].calls == 1 && heap[i].res == 8192);
		/* started by its deadline: done within it plus a transfer or two */
		CHECK(heap[i].done_at <= 300 * MS + 30 * MS + 64 * 20 * MS);
		free(heap[i].buf);
	}
	for (i = 0; i < n; i++) {
		CHECK(walw[i].calls == 1 && wals[i].calls == 1 && wals[i].res == 0);
		free(walw[i].buf);
	}
	ios_destroy(s);
	close(fd);
	close(wfd);
}

/*
 * test_dbaware_backlog() -- writeback so far behind that all of it has
 * expired: a WAL write arriving then waits for at most one heap transfer
 * (expired lower tiers take every other dispatch), not for the backlog.
 */
static void test_dbaware_backlog(void)
{
	struct ios_settings set;
	static struct treq heap[200], walw[20];
	struct ios_sched *s;
	int fd = tmpfile_fd(), wfd = tmpfile_fd(), i, k, maxwait = 0;

	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_HDD);
	set.nr_requests = 1;
	set.data_write_expire_ms = 100;
	set.ra_window_kb = 0;
	s = ios_create_virtual(&set);
	/* 200 scattered 64 KiB heap writes: seconds of work on the hdd */
	for (i = 0; i < 200; i++)
		submit(s, &heap[i], fd, 10 + (uint64_t)i, IOS_CLASS_HEAP, IOS_WRITE,
		       (off_t)i * 65536, 65536, 'h');
	ios_virtual_advance(s, 500 * MS); /* all of it expired by now */
	for (k = 0; k < 20; k++) {
		int order0 = completion_counter, passed = 0;

		submit(s, &walw[k], wfd, 1, IOS_CLASS_WAL, IOS_WRITE, (off_t)k * 8192, 8192, 'w');
		ios_virtual_advance(s, (500 + 100 * (uint64_t)(k + 1)) * MS);
		CHECK(walw[k].calls == 1);
		for (i = 0; i < 200; i++)
			if (heap[i].calls && heap[i].order > order0 &&
			    heap[i].order < walw[k].order)
				passed++;
		if (passed > maxwait)
			maxwait = passed;
	}
	CHECK(maxwait <= 1); /* at most the one heap write it alternated with */
	ios_virtual_advance(s, 600000 * MS);
	for (i = 0; i < 200; i++) {
		CHECK(heap[i].calls == 1 && heap[i].res == 65536);
		free(heap[i].buf);
	}
	for (k = 0; k < 20; k++)
		free(walw[k].buf);
	ios_destroy(s);
	close(fd);
	close(wfd);
}

/* ---- property test ------------------------------------------------------------- */

#define PFILES 3
#define PCHUNK 512
#define PSIZE  (64 * PCHUNK)

static uint64_t rng;
static uint64_t next_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct preq {
	struct treq t;
	int kind, file;
	uint32_t stamp;			/* writes: the value written */
	uint32_t floor[PSIZE / PCHUNK]; /* reads: newest stamp arrived before */
	bool bad;			/* submitted with a bad descriptor */
};

static const int all_policies[] = {IOS_POLICY_NOOP,	    IOS_POLICY_DEADLINE,
				   IOS_POLICY_DBAWARE,	    IOS_POLICY_ELEVATOR24,
				   IOS_POLICY_ELEVATOR24AA, IOS_POLICY_AS};
#define NPOLICIES (int)(sizeof(all_policies) / sizeof(all_policies[0]))
static int reloads;

/* reload_policy() -- the policy after a reload: the same one or another */
static int reload_policy(int policy)
{
	return next_rand() % 2 ? policy : all_policies[next_rand() % NPOLICIES];
}
static struct ios_counters ra_seen; /* readahead over all property runs */

/* collect_ra() -- add S's readahead counters to ra_seen */
static void collect_ra(struct ios_sched *s)
{
	struct ios_counters c;

	ios_get_counters(s, &c);
	ra_seen.ra_windows += c.ra_windows;
	ra_seen.ra_hit_bytes += c.ra_hit_bytes;
	ra_seen.ra_stale += c.ra_stale;
}

/* check_order() -- the ordering invariants of iosched.h, from the
 * completion order: a sync completes after every write to its file that
 * arrived before it; overlapping writes complete in arrival order. */
static void check_order(const struct preq *p, int n, uint64_t seed, int policy)
{
	int i, j;

	for (j = 0; j < n; j++) {
		const struct preq *b = &p[j];

		if (b->kind == IOS_READ)
			continue;
		for (i = 0; i < j; i++) {
			const struct preq *a = &p[i];

			if (a->kind != IOS_WRITE || a->file != b->file || a->t.order < b->t.order)
				continue;
			if (b->kind == IOS_SYNC || (a->t.r.off < b->t.r.off + (off_t)b->t.r.len &&
						    b->t.r.off < a->t.r.off + (off_t)a->t.r.len)) {
				fprintf(stderr,
					"seed %llu policy %d: %s %d completed before write %d, "
					"which arrived before it%s\n",
					(unsigned long long)seed, policy,
					b->kind == IOS_SYNC ? "sync" : "write", j, i,
					b->kind == IOS_SYNC ? "" : " and overlaps it");
				failures++;
				return;
			}
		}
	}
}

static void property(uint64_t seed, int policy, bool reorder)
{
	static struct preq p[3000];
	uint32_t latest[PFILES][PSIZE / PCHUNK];
	struct ios_settings set;
	struct ios_sched *s;
	int fds[PFILES], seq_next[PFILES] = {0}, i, j, n = 3000;
	uint64_t t = 0;

	rng = seed;
	memset(latest, 0, sizeof(latest));
	settings(&set, policy, (int)(seed % 3));
	set.nr_requests = 1 + (int64_t)(seed % 7);
	set.max_request_kb = 4 + (int64_t)(seed % 5) * 4;
	/* the elevators' limits, small enough to be reached */
	set.read_passover = (int64_t)(seed % 4);
	set.write_passover = (int64_t)(seed % 6);
	if (policy == IOS_POLICY_ELEVATOR24AA)
		set.max_inflight_kb = set.max_request_kb * (1 + (int64_t)(seed % 3));
	/* readahead on every other seed, windows of 4 to 16 KiB (the files
	 * are 32 KiB) */
	set.ra_window_kb = seed % 2 ? 4 << (seed / 2 % 3) : 0;
	s = ios_create_virtual(&set);
	/* transfers in flight together, performed and completed out of order */
	if (reorder)
		ios_virtual_reorder(s, seed, 3 * MS);
	for (i = 0; i < PFILES; i++) {
		fds[i] = tmpfile_fd();
		CHECK(ftruncate(fds[i], PSIZE) == 0);
	}
	for (i = 0; i < n; i++) {
		struct preq *q = &p[i];
		int f = (int)(next_rand() % PFILES), kind = (int)(next_rand() % 10);
		int c0 = (int)(next_rand() % (PSIZE / PCHUNK)), nc = 1 + (int)(next_rand() % 8);
		enum ios_class cls = (enum ios_class)(next_rand() % IOS_NCLASS);

		/* half of the reads continue the file's last read, so that
		 * readahead finds streams */
		if (kind >= 5 && kind < 9 && next_rand() % 2 && seq_next[f] < PSIZE / PCHUNK)
			c0 = seq_next[f];
		if (c0 + nc > PSIZE / PCHUNK)
			nc = PSIZE / PCHUNK - c0;
		if (kind >= 5 && kind < 9)
			seq_next[f] = c0 + nc;
		q->file = f;
		q->bad = next_rand() % 50 == 0;
		q->kind = kind < 5 ? IOS_WRITE : kind < 9 ? IOS_READ : IOS_SYNC;
		/* three processes, so that as-2.6 anticipates */
		submit_pid(s, &q->t, 100 + i % 3, q->bad ? -1 : fds[f], (uint64_t)f + 1, cls,
			   (enum ios_dir)q->kind, (off_t)c0 * PCHUNK, (size_t)nc * PCHUNK, 0);
		if (q->kind == IOS_WRITE) {
			q->stamp = (uint32_t)i + 1;
			for (j = 0; j < nc * PCHUNK / 4; j++)
				memcpy(q->t.buf + j * 4, &q->stamp, 4);
			if (!q->bad)
				for (j = c0; j < c0 + nc; j++)
					latest[f][j] = q->stamp;
		} else if (q->kind == IOS_READ) {
			for (j = 0; j < nc; j++)
				q->floor[j] = latest[f][c0 + j];
		}
		/* the buffer was filled after submit: only legal because the
		 * virtual scheduler runs nothing until advanced */
		if (next_rand() % 4 == 0) {
			t += next_rand() % (2 * MS);
			ios_virtual_advance(s, t);
		}
		/* a reload (SIGHUP): pgiofs drains the old scheduler and starts
		 * one with the new tunables and maybe another policy */
		if (next_rand() % 400 == 0) {
			int64_t ra_kb = set.ra_window_kb; /* the bad-fd rule below */

			collect_ra(s);
			ios_destroy(s);
			for (j = 0; j <= i; j++) /* destroy completed all it held */
				CHECK(p[j].t.calls == 1);
			settings(&set, reload_policy(policy), (int)(next_rand() % 3));
			set.nr_requests = 1 + (int64_t)(next_rand() % 7);
			set.max_request_kb = 4 + (int64_t)(next_rand() % 5) * 4;
			set.ra_window_kb = ra_kb;
			s = ios_create_virtual(&set);
			CHECK(s != NULL);
			if (reorder)
				ios_virtual_reorder(s, seed + (uint64_t)i, 3 * MS);
			reloads++;
			t = 0;
		}
	}
	ios_virtual_advance(s, t + 600000 * MS);
	CHECK(ios_pending(s) == 0);
	collect_ra(s);
	check_order(p, n, seed, policy);
	for (i = 0; i < n; i++) {
		struct preq *q = &p[i];

		if (q->t.calls != 1) {
			fprintf(stderr, "seed %llu: request %d completed %d times\n",
				(unsigned long long)seed, i, q->t.calls);
			failures++;
			continue;
		}
		if (q->bad) {
			/* readahead serves a file, whatever the descriptor */
			CHECK(q->t.res == -EBADF || (set.ra_window_kb && q->kind == IOS_READ &&
						     q->t.res == (ssize_t)q->t.r.len));
		} else if (q->kind == IOS_SYNC) {
			CHECK(q->t.res == 0);
		} else {
			CHECK(q->t.res == (ssize_t)q->t.r.len);
		}
		if (q->kind == IOS_READ && q->t.res > 0) {
			for (j = 0; j < (int)(q->t.r.len / PCHUNK); j++) {
				uint32_t got;

				memcpy(&got, q->t.buf + j * PCHUNK, 4);
				if (got < q->floor[j]) {
					fprintf(stderr,
						"seed %llu policy %d: read %d chunk %d saw %u, "
						"older than "
						"write %u that arrived before it\n",
						(unsigned long long)seed, policy, i, j, got,
						q->floor[j]);
					failures++;
					break;
				}
			}
		}
		free(q->t.buf);
	}
	/* the files hold, per chunk, the last write in arrival order */
	for (i = 0; i < PFILES; i++) {
		for (j = 0; j < PSIZE / PCHUNK; j++) {
			uint32_t got = 0;

			CHECK(pread(fds[i], &got, 4, (off_t)j * PCHUNK) == 4);
			if (got != latest[i][j]) {
				fprintf(stderr,
					"seed %llu policy %d: file %d chunk %d holds %u, want %u\n",
					(unsigned long long)seed, policy, i, j, got, latest[i][j]);
				failures++;
				break;
			}
		}
		close(fds[i]);
	}
	ios_destroy(s);
}

int main(void)
{
	uint64_t seed;
	int k;

	test_merge();
	test_sync_barrier();
	test_overlap_order();
	test_deadline_expiry();
	test_dbaware();
	test_dbaware_backlog();
	for (k = 0; k < NPOLICIES; k++)
		for (seed = 1; seed <= 12; seed++) {
			property(seed * 7919 + (uint64_t)k, all_policies[k], false);
			property(seed * 7919 + (uint64_t)k, all_policies[k], true);
		}
	CHECK(reloads > 0); /* the seeds do exercise reloads */
	printf("property test: %d reloads\n", reloads);
	/* the property held with readahead really at work */
	fprintf(stderr, "readahead: %llu windows, %llu bytes hit, %llu stale\n",
		(unsigned long long)ra_seen.ra_windows, (unsigned long long)ra_seen.ra_hit_bytes,
		(unsigned long long)ra_seen.ra_stale);
	CHECK(ra_seen.ra_windows > 0 && ra_seen.ra_hit_bytes > 0 && ra_seen.ra_stale > 0);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
