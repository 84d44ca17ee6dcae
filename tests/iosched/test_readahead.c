/*
 * test_readahead.c -- the readahead of iosched/readahead.c on the virtual
 * clock: window growth (4x the read, doubling at each async marker up to
 * ra_window_kb) and its reset on a random access; the next window started
 * at the marker while the reader is served from the cache, and a reader
 * waiting for a window in flight; the cache bound with several streams;
 * hit and waste accounting (into the counters and the per-class
 * statistics); invalidation by writes, including a write that overlaps a
 * window in flight, and by ios_invalidate(); partial hits; the end of the
 * file; release freeing a file's state; two files with one inode number
 * on two devices kept apart.  Every read's data is compared with the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

#define KB	1024
#define FILE_ID 7
#define FID	((struct ios_file_id){0, FILE_ID})

/* stamped_file() -- @size bytes, each 4-byte word its own offset ^ @salt. */
static int stamped_file(size_t size, uint32_t salt)
{
	int fd = tmpfile_fd();
	uint32_t *w = malloc(size + 4);
	size_t i;

	for (i = 0; i < size / 4 + 1; i++)
		w[i] = (uint32_t)(i * 4) ^ salt;
	CHECK(pwrite(fd, w, size, 0) == (ssize_t)size);
	free(w);
	return fd;
}

/* same_as_file() -- @t completed once with what the file holds now. */
static bool same_as_file(const struct treq *t, int fd)
{
	char *want = malloc(t->r.len);
	ssize_t n = pread(fd, want, t->r.len, t->r.off);
	bool ok = t->calls == 1 && t->res == n && n >= 0 && memcmp(want, t->buf, (size_t)n) == 0;

	if (!ok)
		fprintf(stderr, "read at %lld+%zu: calls %d res %zd, file gives %zd%s\n",
			(long long)t->r.off, t->r.len, t->calls, t->res, n,
			t->calls == 1 && t->res == n ? " (data differs)" : "");
	free(want);
	return ok;
}

static struct ios_sched *ra_sched(int policy, int device, int64_t ra_kb, int64_t cache_mb)
{
	struct ios_settings set;

	settings(&set, policy, device);
	set.ra_window_kb = ra_kb;
	set.ra_cache_mb = cache_mb;
	return ios_create_virtual(&set);
}

static void rd(struct ios_sched *s, struct treq *t, int fd, uint64_t file, off_t off, size_t len)
{
	submit(s, t, fd, file, IOS_CLASS_HEAP, IOS_READ, off, len, 0);
}

static struct ios_counters counters(struct ios_sched *s)
{
	struct ios_counters c;

	ios_get_counters(s, &c);
	return c;
}

/* read_check() -- read and advance to @at; the read's data must be right. */
static void read_check(struct ios_sched *s, int fd, off_t off, size_t len, uint64_t at)
{
	struct treq t;

	rd(s, &t, fd, FILE_ID, off, len);
	ios_virtual_advance(s, at);
	CHECK(same_as_file(&t, fd));
	free(t.buf);
}

/* growth: 128 KiB (4 x 32 KiB), 256, 512, 512; a random read resets it */
static void test_growth_and_reset(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 512, 32);
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_snapshot *snap = malloc(sizeof(*snap));
	int fd = stamped_file(8u << 20, 0x1234), i;
	uint64_t t = MS;
	struct ios_counters c;

	ios_attach_stats(s, st);
	read_check(s, fd, 0, 32 * KB, t);
	c = counters(s);
	CHECK(c.ra_windows == 1 && c.ra_async == 0);  /* a sync window */
	CHECK(c.ra_bytes == 128 * KB);		      /* 4 x 32 KiB */
	CHECK(c.ra_read_bytes == 96 * KB);	      /* beyond the read */
	read_check(s, fd, 32 * KB, 32 * KB, t += MS); /* the marker: next window */
	c = counters(s);
	CHECK(c.ra_windows == 2 && c.ra_async == 1);
	CHECK(c.ra_bytes == 128 * KB + 256 * KB); /* doubled */
	CHECK(c.ra_hit_bytes == 32 * KB);
	read_check(s, fd, 64 * KB, 32 * KB, t += MS);
	read_check(s, fd, 96 * KB, 32 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_bytes == 256 * KB); /* the first window was read: gone */
	CHECK(c.ra_hit_bytes == 96 * KB);
	read_check(s, fd, 128 * KB, 32 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_windows == 3 && c.ra_bytes == 256 * KB + 512 * KB);
	for (i = 5; i < 13; i++) /* to [384K, 416K) */
		read_check(s, fd, (off_t)i * 32 * KB, 32 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_windows == 4);		  /* at 384 KiB: the third's marker */
	CHECK(c.ra_bytes == 512 * KB + 512 * KB); /* at most ra_window_kb */
	CHECK(c.ra_hit_bytes == 12 * 32 * KB);	  /* every read but the first */
	/* a random read ends the stream: no window for it */
	read_check(s, fd, 5 << 20, 32 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_windows == 4);
	/* the next sequential read starts small again: 4 x 32 KiB */
	read_check(s, fd, (5 << 20) + 32 * KB, 32 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_windows == 5 && c.ra_async == 3);
	CHECK(c.ra_bytes == 1024 * KB + 128 * KB);
	/* statistics: hits per class; the windows' own reads are not requests */
	ios_stats_snapshot(st, snap);
	CHECK(snap->cls[IOS_CLASS_HEAP].ra_hit_bytes == c.ra_hit_bytes);
	CHECK(snap->cls[IOS_CLASS_HEAP].read_ops == 15);
	ios_release(s, FID);
	ios_virtual_advance(s, t += MS);
	c = counters(s);
	CHECK(c.ra_bytes == 0 && c.ra_files == 0);
	CHECK(c.ra_hit_bytes + c.ra_wasted_bytes == c.ra_read_bytes);
	ios_stats_snapshot(st, snap);
	CHECK(snap->cls[IOS_CLASS_HEAP].ra_wasted_bytes == c.ra_wasted_bytes);
	ios_destroy(s);
	ios_stats_destroy(st);
	free(snap);
	close(fd);
}

/* the next window starts at the marker while the reader is served from the
 * cache at once; a reader that catches up waits for the window in flight,
 * and nothing is read twice */
static void test_async_marker(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_HDD, 512, 32);
	int fd = stamped_file(4u << 20, 0x777), i;
	struct treq a, b[3], w;
	uint64_t t = 100 * MS;
	struct ios_counters c;

	read_check(s, fd, 0, 32 * KB, t);
	rd(s, &a, fd, FILE_ID, 32 * KB, 32 * KB);
	ios_virtual_advance(s, t);				       /* no time passes */
	CHECK(a.calls == 1 && a.done_at == t && same_as_file(&a, fd)); /* a hit */
	CHECK(ios_pending(s) == 1); /* the async window [128K, 384K) */
	c = counters(s);
	CHECK(c.ra_async == 1);
	for (i = 0; i < 2; i++)
		rd(s, &b[i], fd, FILE_ID, (off_t)(2 + i) * 32 * KB, 32 * KB);
	rd(s, &w, fd, FILE_ID, 128 * KB, 32 * KB); /* caught up: waits */
	ios_virtual_advance(s, t);
	CHECK(b[0].calls == 1 && b[1].calls == 1 && w.calls == 0);
	c = counters(s);
	CHECK(c.ra_async == 2); /* its marker was reached: the one after */
	ios_virtual_advance(s, t + 1000 * MS);
	CHECK(w.calls == 1 && w.done_at > t && same_as_file(&w, fd));
	for (i = 0; i < 2; i++) {
		CHECK(same_as_file(&b[i], fd));
		free(b[i].buf);
	}
	c = counters(s);
	CHECK(c.transfers == 3); /* the three windows; every read came from them */
	free(a.buf);
	free(w.buf);
	ios_destroy(s);
	close(fd);
}

/* four interleaved streams through a 1 MiB cache */
static void test_cache_bound(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 512, 1);
	int fds[4], f, i;
	uint64_t t = 0;
	struct ios_counters c;

	for (f = 0; f < 4; f++)
		fds[f] = stamped_file(4u << 20, (uint32_t)f << 24);
	for (i = 0; i < 48; i++)
		for (f = 0; f < 4; f++) {
			struct treq r;

			rd(s, &r, fds[f], 100 + (uint64_t)f, (off_t)i * 64 * KB, 64 * KB);
			ios_virtual_advance(s, t += MS);
			CHECK(same_as_file(&r, fds[f]));
			free(r.buf);
		}
	c = counters(s);
	CHECK(c.ra_peak_bytes <= 1u << 20 && c.ra_peak_bytes >= 512 * KB);
	CHECK(c.ra_hit_bytes > 0 && c.ra_wasted_bytes > 0); /* evictions */
	CHECK(c.ra_files == 4);
	for (f = 0; f < 4; f++)
		ios_release(s, (struct ios_file_id){0, 100 + (uint64_t)f});
	ios_virtual_advance(s, t += MS);
	c = counters(s);
	CHECK(c.ra_bytes == 0 && c.ra_files == 0);
	CHECK(c.ra_hit_bytes + c.ra_wasted_bytes == c.ra_read_bytes);
	ios_destroy(s);
	for (f = 0; f < 4; f++)
		close(fds[f]);
}

/* a window whose room must be made by evicting the window it follows in
 * the file's list (a cache of one window): it goes into the list after
 * the eviction, not after the freed window (a use after free that
 * corrupted the list into a cycle the dispatcher then spun in) */
static void test_evict_predecessor(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 1024, 1);
	int fd = stamped_file(8u << 20, 0x77), i;
	uint64_t t = 0;
	struct ios_counters c;

	for (i = 0; i < 96; i++) /* 6 MiB in 64 KiB reads: windows up to 1 MiB */
		read_check(s, fd, (off_t)i * 64 * KB, 64 * KB, t += MS);
	c = counters(s);
	CHECK(c.ra_windows >= 5);	    /* 128, 256, 512, 1024, 1024 KiB */
	CHECK(c.ra_peak_bytes <= 1u << 20); /* never over the cache */
	ios_release(s, (struct ios_file_id){0, FILE_ID});
	ios_virtual_advance(s, t += MS);
	c = counters(s);
	CHECK(c.ra_bytes == 0 && c.ra_files == 0);
	ios_destroy(s);
	close(fd);
}

/* a write drops the cached data it overlaps before it is queued */
static void test_write_invalidates(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 512, 32);
	int fd = stamped_file(1u << 20, 0x42);
	struct treq wr, r;
	struct ios_counters c0, c;

	read_check(s, fd, 0, 32 * KB, MS); /* [0, 128K) cached */
	c0 = counters(s);
	submit(s, &wr, fd, FILE_ID, IOS_CLASS_HEAP, IOS_WRITE, 64 * KB, 4 * KB, 'W');
	rd(s, &r, fd, FILE_ID, 64 * KB, 32 * KB); /* queued after the write */
	ios_virtual_advance(s, 2 * MS);
	CHECK(wr.calls == 1 && wr.res == 4 * KB);
	CHECK(same_as_file(&r, fd) && r.buf[0] == 'W' && r.buf[4 * KB] != 'W');
	c = counters(s);
	CHECK(c.ra_wasted_bytes - c0.ra_wasted_bytes == 96 * KB);
	CHECK(c.ra_hit_bytes == c0.ra_hit_bytes);
	free(wr.buf);
	free(r.buf);
	ios_destroy(s);
	close(fd);
}

/* a write that arrives while a window is in flight: the window's data may
 * be older than the write, so it must never be served */
static void test_inflight_race(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_HDD, 512, 32);
	int fd = stamped_file(1u << 20, 0x99);
	struct treq a, waiter, wr, r;
	uint64_t t = 100 * MS;
	struct ios_counters c;

	read_check(s, fd, 0, 32 * KB, t);
	rd(s, &a, fd, FILE_ID, 32 * KB, 32 * KB); /* starts [128K, 384K) */
	ios_virtual_advance(s, t);
	/* the window was dispatched: the emulated disk holds its completion
	 * (the virtual back end has read the file already) */
	CHECK(ios_pending(s) == 1);
	rd(s, &waiter, fd, FILE_ID, 128 * KB, 32 * KB); /* waits for it */
	submit(s, &wr, fd, FILE_ID, IOS_CLASS_HEAP, IOS_WRITE, 200 * KB, 4 * KB, 'W');
	ios_virtual_advance(s, t + 1000 * MS);
	c = counters(s);
	CHECK(c.ra_stale == 1);
	CHECK(wr.calls == 1 && wr.res == 4 * KB);
	CHECK(same_as_file(&waiter, fd)); /* queued as a plain read */
	rd(s, &r, fd, FILE_ID, 192 * KB, 32 * KB);
	ios_virtual_advance(s, t + 2000 * MS);
	CHECK(same_as_file(&r, fd) && r.buf[8 * KB] == 'W');
	CHECK(c.ra_hit_bytes + c.ra_wasted_bytes + c.ra_bytes >= c.ra_read_bytes);
	free(a.buf);
	free(waiter.buf);
	free(wr.buf);
	free(r.buf);
	ios_destroy(s);
	close(fd);
}

/* truncate, fallocate and copy_file_range reach the file without a queued
 * write: ios_invalidate() says so */
static void test_invalidate_call(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_NOOP, IOS_DEVICE_NONE, 512, 32);
	int fd = stamped_file(1u << 20, 0x5);
	char x[4096];
	struct treq r;
	struct ios_counters c0, c;

	read_check(s, fd, 0, 32 * KB, MS);
	c0 = counters(s);
	/* behind the scheduler's back, not announced: the cache still serves
	 * the old bytes (no backing I/O) -- the reason for ios_invalidate() */
	memset(x, 'X', sizeof(x));
	CHECK(pwrite(fd, x, sizeof(x), 100 * KB) == sizeof(x));
	rd(s, &r, fd, FILE_ID, 96 * KB, 32 * KB);
	ios_virtual_advance(s, 2 * MS);
	c = counters(s);
	CHECK(r.calls == 1 && r.res == 32 * KB && r.buf[4 * KB] != 'X');
	CHECK(c.transfers == c0.transfers);
	free(r.buf);
	/* announced: the next read sees the change */
	read_check(s, fd, 0, 32 * KB, 3 * MS); /* [0, 128K) cached again */
	CHECK(pwrite(fd, x, sizeof(x), 40 * KB) == sizeof(x));
	ios_invalidate(s, FID, 40 * KB, 4 * KB);
	rd(s, &r, fd, FILE_ID, 32 * KB, 32 * KB);
	ios_virtual_advance(s, 4 * MS);
	CHECK(same_as_file(&r, fd) && r.buf[8 * KB] == 'X');
	free(r.buf);
	/* len 0: to the end of the file (a truncation) */
	read_check(s, fd, 0, 32 * KB, 5 * MS);
	CHECK(ftruncate(fd, 48 * KB) == 0);
	ios_invalidate(s, FID, 48 * KB, 0);
	rd(s, &r, fd, FILE_ID, 32 * KB, 32 * KB);
	ios_virtual_advance(s, 6 * MS);
	CHECK(same_as_file(&r, fd) && r.res == 16 * KB);
	free(r.buf);
	ios_destroy(s);
	close(fd);
}

/* a read partly in the cache: the cached part is copied, the rest read */
static void test_partial_hit(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 512, 32);
	int fd = stamped_file(1u << 20, 0x31);
	struct ios_counters c0, c;

	read_check(s, fd, 0, 32 * KB, MS); /* [0, 128K) cached, marker at 32K */
	c0 = counters(s);
	read_check(s, fd, 96 * KB, 64 * KB, 2 * MS);
	c = counters(s);
	CHECK(c.ra_hit_bytes - c0.ra_hit_bytes == 32 * KB);
	CHECK(c.transfers - c0.transfers == 1); /* [128K, 160K) only */
	CHECK(c.ra_windows == c0.ra_windows);	/* not sequential, not at a marker */
	ios_destroy(s);
	close(fd);
}

/* reads to the end of a file that is not a whole number of windows */
static void test_eof(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_SSD, 64, 32);
	size_t size = 200 * KB + 100, got = 0;
	int fd = stamped_file(size, 0xe0f);
	uint64_t t = 0;
	off_t off;

	for (off = 0;; off += 16 * KB) {
		struct treq r;

		rd(s, &r, fd, FILE_ID, off, 16 * KB);
		ios_virtual_advance(s, t += 10 * MS);
		CHECK(same_as_file(&r, fd));
		free(r.buf);
		if (r.res <= 0)
			break;
		got += (size_t)r.res;
	}
	CHECK(got == size);
	ios_release(s, FID);
	ios_virtual_advance(s, t += 10 * MS);
	CHECK(counters(s).ra_bytes == 0);
	ios_destroy(s);
	close(fd);
}

/* release with a window in flight: freed when it completes */
static void test_release(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_HDD, 512, 32);
	int fd = stamped_file(1u << 20, 0x66);
	uint64_t t = 100 * MS;
	struct ios_counters c;

	read_check(s, fd, 0, 32 * KB, t);
	read_check(s, fd, 32 * KB, 32 * KB, t); /* window 2 in flight */
	c = counters(s);
	CHECK(c.ra_files == 1 && c.ra_bytes == 128 * KB + 256 * KB);
	ios_release(s, FID);
	ios_virtual_advance(s, t);
	c = counters(s);
	CHECK(c.ra_bytes == 256 * KB && c.ra_files == 1); /* only what is in flight */
	ios_virtual_advance(s, t + 1000 * MS);
	c = counters(s);
	CHECK(c.ra_bytes == 0 && c.ra_files == 0 && ios_pending(s) == 0);
	CHECK(c.ra_wasted_bytes == 64 * KB + 256 * KB);
	CHECK(c.ra_hit_bytes + c.ra_wasted_bytes == c.ra_read_bytes);
	/* the file again: a new stream */
	read_check(s, fd, 0, 32 * KB, t + 2000 * MS);
	CHECK(counters(s).ra_files == 1);
	ios_destroy(s);
	close(fd);
}

/* two files with one inode number on two devices (a backing tree that
 * spans filesystems): separate streams, neither served the other's data */
static void test_two_devices(void)
{
	struct ios_sched *s = ra_sched(IOS_POLICY_DBAWARE, IOS_DEVICE_NONE, 512, 32);
	int fa = stamped_file(1 << 20, 0xAAAAAAAA), fb = stamped_file(1 << 20, 0xBBBBBBBB);
	struct treq a, b;
	uint64_t t = 0;
	off_t off;

	for (off = 0; off < 512 * KB; off += 32 * KB) {
		submit(s, &a, fa, FILE_ID, IOS_CLASS_HEAP, IOS_READ, off, 32 * KB, 0);
		a.r.fid.dev = 1; /* set before the scheduler looks at it */
		submit(s, &b, fb, FILE_ID, IOS_CLASS_HEAP, IOS_READ, off, 32 * KB, 0);
		b.r.fid.dev = 2;
		ios_virtual_advance(s, t += MS);
		CHECK(same_as_file(&a, fa));
		CHECK(same_as_file(&b, fb));
		free(a.buf);
		free(b.buf);
	}
	CHECK(counters(s).ra_files == 2 && counters(s).ra_hit_bytes > 0);
	ios_destroy(s);
	close(fa);
	close(fb);
}

int main(void)
{
	test_growth_and_reset();
	test_async_marker();
	test_cache_bound();
	test_evict_predecessor();
	test_write_invalidates();
	test_inflight_race();
	test_invalidate_call();
	test_partial_hit();
	test_eof();
	test_release();
	test_two_devices();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
