/*
 * test_cloud.c -- the capped cloud volume (iosched.h: model cloud, gp3, gp2,
 * io2; device.c) on a clock the test drives, with closed-loop clients like
 * fio's (a queue depth of requests; each completion submits the next at its
 * completion time):
 *   - presets: gp3, io2, cloud, gp2 by size (baseline 3 IOPS per GiB within
 *     100..16,000, burst and credits below 3,000, 128 or 250 MiB/s), gp2's
 *     size from the span, settings given kept, the p99's ratio to a median
 *     given; bad combinations refused with the setting named;
 *   - accounting: one operation up to 256 KiB, one per 256 KiB begun above,
 *     sequential small requests in one direction merged up to 256 KiB (not
 *     across directions, not with a gap, not past 256 KiB), a sync none;
 *   - the IOPS bucket: 16 KiB random writes at depth 32 run at the cap, held
 *     back by it; the throughput bucket: 1 MiB writes at the cap;
 *     sequential 4 KiB writes reach the throughput cap, never the IOPS cap;
 *   - an idle volume's buckets are full: a burst of cloud_bucket_ms of
 *     tokens goes at once, the next waits;
 *   - credits: a burst lasts credits / (burst - baseline), then the volume
 *     runs at the baseline; idle, the bucket refills at the baseline rate
 *     and a second burst lasts as long; the moments it ran out counted;
 *   - latency: median and p99 of the draws as set, deterministic by seed,
 *     fixed when the p99 is the median; demand above the cap queues
 *     (Little's law), nothing refused; cloud_depth in service at most;
 *     completions out of arrival order;
 *   - the scheduler's emulated device on gp3 completes every request.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iosched/sched_util.h"

#include "check.h"

#define KiB 1024ull
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SEC 1000000000ull

static struct ios_settings resolved(int model, uint64_t span, int64_t gib)
{
	struct ios_settings set = model_settings(model);
	char err[256];

	set.cloud_volume_gib = gib;
	CHECK(ios_disk_resolve(&set, span, err, sizeof(err)) == 0);
	return set;
}

static void test_presets(void)
{
	struct ios_settings s;
	char err[256];

	s = resolved(IOS_DEVICE_GP3, GiB, 0);
	CHECK(s.cloud_iops == 3000 && s.cloud_mib_s == 125 && s.cloud_credits == 0 &&
	      s.cloud_baseline_iops == 0);
	CHECK(s.cloud_latency_us == 1000 && s.cloud_latency_p99_us == 3000);
	CHECK(s.cloud_depth == 64 && s.cloud_op_kib == 256 && s.cloud_bucket_ms == 10);
	CHECK(s.cloud_volume_gib == 1);
	s = resolved(IOS_DEVICE_CLOUD, GiB, 0);
	CHECK(s.cloud_iops == 3000 && s.cloud_mib_s == 125);
	s = resolved(IOS_DEVICE_IO2, GiB, 0);
	CHECK(s.cloud_iops == 256000 && s.cloud_mib_s == 4000 && s.cloud_latency_us == 250 &&
	      s.cloud_latency_p99_us == 500 && s.cloud_depth == 128);

	/* gp2 by size: 100 GiB: 300 baseline, burst 3,000, 5.4 M credits */
	s = resolved(IOS_DEVICE_GP2, GiB, 100);
	CHECK(s.cloud_baseline_iops == 300 && s.cloud_iops == 3000 && s.cloud_credits == 5.4e6 &&
	      s.cloud_mib_s == 128);
	s = resolved(IOS_DEVICE_GP2, GiB, 20); /* the minimum baseline */
	CHECK(s.cloud_baseline_iops == 100 && s.cloud_iops == 3000);
	s = resolved(IOS_DEVICE_GP2, GiB, 171);
	CHECK(s.cloud_mib_s == 250 && s.cloud_baseline_iops == 513);
	s = resolved(IOS_DEVICE_GP2, GiB, 1000); /* 3,000 baseline: no burst */
	CHECK(s.cloud_iops == 3000 && s.cloud_baseline_iops == 0 && s.cloud_credits == 0);
	s = resolved(IOS_DEVICE_GP2, GiB, 16384); /* the maximum */
	CHECK(s.cloud_iops == 16000 && s.cloud_credits == 0);
	s = resolved(IOS_DEVICE_GP2, 200 * GiB + 5, 0); /* the span's size */
	CHECK(s.cloud_volume_gib == 200 && s.cloud_baseline_iops == 600);
	s = resolved(IOS_DEVICE_GP2, 100 * MiB, 0); /* under a GiB: one */
	CHECK(s.cloud_volume_gib == 1 && s.cloud_baseline_iops == 100);

	/* what is set stays; a p99 left 0 keeps the preset's ratio */
	s = model_settings(IOS_DEVICE_GP3);
	s.cloud_iops = 6000;
	s.cloud_latency_us = 2000;
	CHECK(ios_disk_resolve(&s, GiB, err, sizeof(err)) == 0);
	CHECK(s.cloud_iops == 6000 && s.cloud_mib_s == 125 && s.cloud_latency_p99_us == 6000);
	s = model_settings(IOS_DEVICE_GP2);
	s.cloud_credits = 1000;
	CHECK(ios_disk_resolve(&s, 100 * GiB, err, sizeof(err)) == 0);
	CHECK(s.cloud_credits == 1000 && s.cloud_baseline_iops == 300);

	/* other models: untouched */
	s = model_settings(IOS_DEVICE_HDD);
	CHECK(ios_disk_resolve(&s, GiB, err, sizeof(err)) == 0 && s.cloud_iops == 0);

	/* refusals name the setting */
	s = model_settings(IOS_DEVICE_GP3);
	s.cloud_latency_p99_us = 500;
	CHECK(ios_disk_resolve(&s, GiB, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "cloud_latency_p99_us") != NULL);
	s = model_settings(IOS_DEVICE_CLOUD);
	s.cloud_credits = 1000;
	CHECK(ios_disk_resolve(&s, GiB, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "cloud_baseline_iops") != NULL);
	s = model_settings(IOS_DEVICE_CLOUD);
	s.cloud_credits = 1000;
	s.cloud_baseline_iops = 5000;
	CHECK(ios_disk_resolve(&s, GiB, err, sizeof(err)) == -EINVAL);
	errno = 0;
	CHECK(ios_disk_create(&s, GiB) == NULL && errno == EINVAL);
	CHECK(ios_device_check(&s, err, sizeof(err)) == -EINVAL);
}

static void test_accounting(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_GP3);
	struct ios_disk *d;
	struct ios_disk_time t;
	struct ios_disk_state st;
	uint64_t now = 0;
	int i;

	set.cloud_iops = 1e6; /* nothing held back: only the counting */
	set.cloud_mib_s = 1e5;
	d = ios_disk_create(&set, 64 * GiB);
	CHECK(d);
	if (!d)
		return;
#define OPS(addr, len, dir) (ios_disk_serve(d, addr, len, dir, now, &t), t.ops)
	CHECK(OPS(0, 256 * KiB, IOS_WRITE) == 1);
	CHECK(OPS(GiB, 256 * KiB + 512, IOS_WRITE) == 2);
	CHECK(OPS(2 * GiB, MiB, IOS_READ) == 4);
	CHECK(OPS(3 * GiB, MiB + 4 * KiB, IOS_READ) == 5);
	CHECK(OPS(4 * GiB, 0, IOS_READ) == 1);
	{
		double before = t.bytes_tokens;

		CHECK(OPS(5 * GiB, 0, IOS_SYNC) == 0 && t.bytes_tokens == before);
	}
	/* 64 sequential 4 KiB writes: one operation */
	CHECK(OPS(6 * GiB, 4 * KiB, IOS_WRITE) == 1);
	for (i = 1; i < 64; i++)
		CHECK(OPS(6 * GiB + (uint64_t)i * 4 * KiB, 4 * KiB, IOS_WRITE) == 0);
	/* the 65th begins the next */
	CHECK(OPS(6 * GiB + 256 * KiB, 4 * KiB, IOS_WRITE) == 1);
	/* a sync between them does not break the run */
	CHECK(OPS(0, 0, IOS_SYNC) == 0);
	CHECK(OPS(6 * GiB + 260 * KiB, 4 * KiB, IOS_WRITE) == 0);
	/* a read continuing a write's run: its own operation; a gap too */
	CHECK(OPS(6 * GiB + 264 * KiB, 4 * KiB, IOS_READ) == 1);
	CHECK(OPS(6 * GiB + 272 * KiB, 4 * KiB, IOS_READ) == 1);
	/* one that would pass 256 KiB: a new operation, not split */
	CHECK(OPS(7 * GiB, 250 * KiB, IOS_WRITE) == 1);
	CHECK(OPS(7 * GiB + 250 * KiB, 16 * KiB, IOS_WRITE) == 1);
	/* the tail of a split request takes the small one after it */
	CHECK(OPS(8 * GiB, 300 * KiB, IOS_WRITE) == 2);
	CHECK(OPS(8 * GiB + 300 * KiB, 16 * KiB, IOS_WRITE) == 0);
	/* a whole operation takes nothing more */
	CHECK(OPS(9 * GiB, 256 * KiB, IOS_WRITE) == 1);
	CHECK(OPS(9 * GiB + 256 * KiB, 4 * KiB, IOS_WRITE) == 1);
#undef OPS
	ios_disk_state(d, now, &st);
	CHECK(st.ops == 1 + 2 + 4 + 5 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1);
	CHECK(st.merged == 63 + 1 + 1);
	CHECK(st.requests == 6 + 64 + 1 + 1 + 1 + 2 + 2 + 2 + 2);
	ios_disk_destroy(d);
}

/* A closed-loop client: @qd requests in flight, each completion submits the
 * next at its completion time, from @t0 until @until. */
struct client {
	struct ios_disk *d;
	int qd;
	uint64_t len, span, next_seq, seed;
	bool sequential;
	enum ios_dir dir;
	uint64_t pending[256];
	/* what it saw */
	uint64_t started, started_in, bytes_in, lat_sum, limit[IOS_NLIMIT], out_of_order;
	uint64_t last_done;
};

/* client_run() -- run it until @until; count what starts in [@from, @until). */
static void client_run(struct client *c, uint64_t t0, uint64_t from, uint64_t until)
{
	int i;

	for (i = 0; i < c->qd; i++)
		c->pending[i] = t0;
	c->started_in = c->bytes_in = 0;
	for (;;) {
		struct ios_disk_time t;
		uint64_t addr;
		int k = 0;

		for (i = 1; i < c->qd; i++)
			if (c->pending[i] < c->pending[k])
				k = i;
		if (c->pending[k] >= until)
			break;
		addr =
		    c->sequential ? c->next_seq : xorshift(&c->seed) % (c->span / c->len) * c->len;
		c->next_seq += c->len;
		ios_disk_serve(c->d, addr, c->len, c->dir, c->pending[k], &t);
		if (t.start_ns >= from && t.start_ns < until) {
			c->started_in++;
			c->bytes_in += c->len;
		}
		c->started++;
		c->limit[t.limit]++;
		c->lat_sum += t.done_ns - c->pending[k];
		if (t.done_ns < c->last_done)
			c->out_of_order++;
		c->last_done = t.done_ns;
		c->pending[k] = t.done_ns;
	}
}

static void test_iops_cap(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_GP3);
	struct client c = {
	    .qd = 32, .len = 16 * KiB, .span = 64 * GiB, .seed = 3, .dir = IOS_WRITE};
	struct ios_disk_state st;
	double iops;

	c.d = ios_disk_create(&set, 64 * GiB);
	CHECK(c.d);
	if (!c.d)
		return;
	client_run(&c, 0, 1 * SEC, 11 * SEC);
	iops = (double)c.started_in / 10;
	CHECK(near(iops, 3000, 0.001));
	CHECK(c.limit[IOS_LIMIT_IOPS] > c.started * 9 / 10);
	CHECK(c.limit[IOS_LIMIT_THROUGHPUT] == 0 && c.limit[IOS_LIMIT_CREDITS] == 0);
	CHECK(c.out_of_order > 0); /* latencies differ: completions pass each other */
	/* Little's law: 32 in flight at 3,000 per second, about 10.7 ms each */
	CHECK(near((double)c.lat_sum / (double)c.started, 32.0 / 3000 * 1e9, 0.02));
	ios_disk_state(c.d, c.last_done, &st);
	CHECK(st.held[IOS_LIMIT_IOPS] == c.limit[IOS_LIMIT_IOPS] && st.requests == c.started);
	CHECK(st.ops == c.started);
	ios_disk_destroy(c.d);
}

static void test_throughput_cap(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_GP3);
	struct client c = {.qd = 8, .len = MiB, .sequential = true, .dir = IOS_WRITE};
	struct client s = {.qd = 64, .len = 4 * KiB, .sequential = true, .dir = IOS_WRITE};
	struct ios_disk_state st;

	/* 1 MiB sequential writes: 125 MiB/s, four operations each */
	c.d = ios_disk_create(&set, 64 * GiB);
	CHECK(c.d);
	if (!c.d)
		return;
	client_run(&c, 0, 1 * SEC, 11 * SEC);
	CHECK(near((double)c.bytes_in / 10 / MiB, 125, 0.002));
	CHECK(c.limit[IOS_LIMIT_THROUGHPUT] > c.started * 9 / 10 && c.limit[IOS_LIMIT_IOPS] == 0);
	ios_disk_state(c.d, c.last_done, &st);
	CHECK(st.ops == 4 * c.started && st.bytes == c.started * MiB);
	ios_disk_destroy(c.d);

	/* 4 KiB sequential writes, 64 at a time (fewer would be held back by
	 * the latency: 32 at about 1.1 ms each make 112 MiB/s): 32,000 a second
	 * would be ten times the IOPS cap one by one; merged, 500 operations a
	 * second reach 125 MiB/s */
	s.d = ios_disk_create(&set, 64 * GiB);
	CHECK(s.d);
	if (!s.d)
		return;
	client_run(&s, 0, 1 * SEC, 11 * SEC);
	CHECK(near((double)s.bytes_in / 10 / MiB, 125, 0.002));
	CHECK(s.limit[IOS_LIMIT_IOPS] == 0 && s.limit[IOS_LIMIT_THROUGHPUT] > s.started / 2);
	ios_disk_state(s.d, s.last_done, &st);
	CHECK(st.ops == (s.started + 63) / 64 && st.merged == s.started - st.ops);
	ios_disk_destroy(s.d);
}

/* An idle volume's buckets are full: at 3,000 IOPS and 10 ms, 30 operations
 * go at once, then one every 1/3000 s; an idle second fills it again. */
static void test_bucket_burst(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_GP3);
	struct ios_disk *d = ios_disk_create(&set, 64 * GiB);
	struct ios_disk_time t;
	struct ios_disk_state st;
	uint64_t t0 = 5 * SEC;
	int i;

	CHECK(d);
	if (!d)
		return;
	ios_disk_state(d, t0, &st);
	CHECK(near(st.iops_tokens, 30, 1e-9) && near(st.bytes_tokens, 1.25 * MiB, 1e-9));
	CHECK(st.credits == 0);
	for (i = 0; i < 30; i++) {
		ios_disk_serve(d, (uint64_t)i * GiB, 16 * KiB, IOS_READ, t0, &t);
		CHECK(t.start_ns == t0 && t.limit == IOS_LIMIT_NONE);
	}
	CHECK(fabs(t.iops_tokens) < 1e-6);
	ios_disk_serve(d, 40 * GiB, 16 * KiB, IOS_READ, t0, &t);
	CHECK(t.limit == IOS_LIMIT_IOPS && fabs((double)(t.start_ns - t0) - 1e9 / 3000) < 1);
	/* behind it, held back in its turn */
	ios_disk_serve(d, 50 * GiB, 16 * KiB, IOS_READ, t0, &t);
	CHECK(t.limit == IOS_LIMIT_IOPS && fabs((double)(t.start_ns - t0) - 2e9 / 3000) < 1);
	ios_disk_state(d, t0 + SEC, &st);
	CHECK(near(st.iops_tokens, 30, 1e-9));
	CHECK(st.held[IOS_LIMIT_NONE] == 30 && st.held[IOS_LIMIT_IOPS] == 2);
	/* a request bigger than the throughput bucket (1.25 MiB): admitted on
	 * a full bucket, which it leaves owing */
	ios_disk_serve(d, 0, 4 * MiB, IOS_WRITE, t0 + SEC, &t);
	CHECK(t.start_ns == t0 + SEC && t.bytes_tokens < 0);
	ios_disk_serve(d, 4 * MiB, 4 * MiB, IOS_WRITE, t0 + SEC, &t);
	CHECK(t.limit == IOS_LIMIT_THROUGHPUT &&
	      near((double)(t.start_ns - t0 - SEC), 4.0 / 125 * 1e9, 1e-6));
	ios_disk_destroy(d);
}

/* gp2 with a small bucket: 30,000 credits at 300 baseline and 3,000 burst
 * last 30000 / 2700 = 11.1 s; then 300 IOPS; 100 s idle refill them (the
 * bucket holds 100 s of baseline), and the next burst lasts as long. */
static void test_credits(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_GP2);
	struct client c = {.qd = 32, .len = 16 * KiB, .span = 64 * GiB, .seed = 5, .dir = IOS_READ};
	struct ios_disk_state st;
	double burst = 30000.0 / 2700 * 1e9;
	uint64_t t1;

	set.cloud_volume_gib = 100;
	set.cloud_credits = 30000;
	c.d = ios_disk_create(&set, 64 * GiB);
	CHECK(c.d);
	if (!c.d)
		return;
	ios_disk_state(c.d, 0, &st);
	CHECK(st.credits == 30000 && !st.credits_empty);
	client_run(&c, 0, 0, 8 * SEC);
	CHECK(near((double)c.started_in / 8, 3000, 0.01));
	ios_disk_state(c.d, 8 * SEC, &st);
	CHECK(st.credits_outs == 0 && near(st.credits, 30000 - 8 * 2700, 0.01));
	client_run(&c, 8 * SEC, 20 * SEC, 40 * SEC);
	ios_disk_state(c.d, 40 * SEC, &st);
	CHECK(st.credits_outs == 1 && st.credits_empty);
	if (!near((double)st.credits_first_out_ns, burst, 0.005))
		fprintf(stderr, "credits ran out after %.3f s, expected %.3f s\n",
			(double)st.credits_first_out_ns / 1e9, burst / 1e9);
	CHECK(near((double)st.credits_first_out_ns, burst, 0.005));
	CHECK(near((double)c.started_in / 20, 300, 0.01));
	CHECK(c.limit[IOS_LIMIT_CREDITS] > 0);
	/* idle 100 s: full again */
	t1 = c.last_done + 100 * SEC;
	ios_disk_state(c.d, t1, &st);
	CHECK(near(st.credits, 30000, 1e-6));
	client_run(&c, t1, t1, t1 + 30 * SEC);
	ios_disk_state(c.d, t1 + 30 * SEC, &st);
	CHECK(st.credits_outs == 2);
	CHECK(near((double)(st.credits_last_out_ns - t1), burst, 0.005));
	ios_disk_destroy(c.d);
}

/* draws() -- @n latencies at depth 1 (nothing held back), sorted. */
static void draws(const struct ios_settings *set, uint64_t *lat, int n)
{
	struct ios_disk *d = ios_disk_create(set, 64 * GiB);
	struct ios_disk_time t;
	uint64_t now = 0;
	int i;

	CHECK(d);
	if (!d)
		return;
	for (i = 0; i < n; i++) {
		ios_disk_serve(d, (uint64_t)i * GiB % (60 * GiB), 16 * KiB, IOS_WRITE, now, &t);
		CHECK(t.start_ns == now && t.limit == IOS_LIMIT_NONE);
		lat[i] = t.latency_ns;
		CHECK(t.done_ns == now + t.latency_ns);
		now = t.done_ns;
	}
	ios_disk_destroy(d);
}

static void test_latency(void)
{
	enum { N = 40000 };
	struct ios_settings set = model_settings(IOS_DEVICE_GP3);
	uint64_t *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
	int i, same = 1;

	if (!a || !b)
		return;
	draws(&set, a, N);
	draws(&set, b, N);
	for (i = 0; i < N; i++)
		same &= a[i] == b[i];
	CHECK(same); /* the same seed: the same draws */
	set.cloud_seed = 2;
	draws(&set, b, N);
	CHECK(memcmp(a, b, N * sizeof(*a)) != 0);
	qsort(a, N, sizeof(*a), cmp_u64);
	CHECK(near((double)a[N / 2], 1e6, 0.02));
	CHECK(near((double)a[N * 99 / 100], 3e6, 0.04));
	/* p99 = median: every request the median */
	set.cloud_latency_us = 5000;
	set.cloud_latency_p99_us = 5000;
	draws(&set, a, 100);
	for (i = 0; i < 100; i++)
		CHECK(a[i] == 5000000);
	/* io2: sub-millisecond */
	set = model_settings(IOS_DEVICE_IO2);
	draws(&set, a, N);
	qsort(a, N, sizeof(*a), cmp_u64);
	CHECK(near((double)a[N / 2], 250e3, 0.02) && near((double)a[N * 99 / 100], 500e3, 0.04));
	free(a);
	free(b);
}

/* cloud_depth: four in service at most; a burst of 1,000 at once is queued,
 * not refused, each waiting its turn. */
static void test_depth_queue(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_CLOUD);
	struct client c = {.qd = 32, .len = 4 * KiB, .span = 64 * GiB, .seed = 9, .dir = IOS_READ};
	struct ios_disk_state st;
	struct ios_disk_time t;
	struct ios_disk *d;
	int i;

	set.cloud_iops = 1e6;
	set.cloud_mib_s = 1e5;
	set.cloud_depth = 4;
	set.cloud_latency_us = 1000;
	set.cloud_latency_p99_us = 1000;
	c.d = ios_disk_create(&set, 64 * GiB);
	CHECK(c.d);
	if (!c.d)
		return;
	client_run(&c, 0, SEC, 3 * SEC);
	CHECK(near((double)c.started_in / 2, 4000, 0.001));
	CHECK(c.limit[IOS_LIMIT_BUSY] > c.started * 9 / 10);
	ios_disk_state(c.d, c.last_done, &st);
	CHECK(st.in_service_max == 4);
	ios_disk_destroy(c.d);

	set = model_settings(IOS_DEVICE_GP3);
	set.cloud_latency_p99_us = 1000;
	d = ios_disk_create(&set, 64 * GiB);
	CHECK(d);
	if (!d)
		return;
	for (i = 0; i < 1000; i++)
		ios_disk_serve(d, (uint64_t)i * 64 * MiB, 16 * KiB, IOS_WRITE, SEC, &t);
	/* 30 at once, 970 more at 3,000 a second */
	CHECK(t.limit == IOS_LIMIT_IOPS &&
	      near((double)(t.start_ns - SEC), 970.0 / 3000 * 1e9, 1e-6));
	ios_disk_state(d, t.start_ns, &st);
	CHECK(st.requests == 1000 && st.held[IOS_LIMIT_IOPS] == 970);
	ios_disk_destroy(d);
}

/* The scheduler's emulated device on gp3: 64 random reads queued at once
 * all complete, held back by the model, some out of arrival order. */
static void test_emulated_device(void)
{
	struct ios_settings set;
	struct ios_sched *s;
	struct treq t[64];
	int fd = tmpfile_fd(), i, inverted = 0;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_GP3);
	set.queue_depth = 64;
	s = ios_create_virtual(&set);
	CHECK(s);
	if (!s)
		return;
	CHECK(ftruncate(fd, 64 * MiB) == 0);
	for (i = 0; i < 64; i++)
		submit(s, &t[i], fd, 7, IOS_CLASS_HEAP, IOS_READ,
		       (off_t)((i * 37) % 64) * (off_t)MiB, 16 * KiB, 0);
	ios_virtual_advance(s, 10000 * MS);
	for (i = 0; i < 64; i++) {
		CHECK(t[i].calls == 1 && t[i].res == (ssize_t)(16 * KiB));
		CHECK(t[i].done_at >= 1 * MS / 10);
		if (i && t[i].order < t[i - 1].order)
			inverted++;
	}
	CHECK(inverted > 0);
	ios_destroy(s);
	for (i = 0; i < 64; i++)
		free(t[i].buf);
	close(fd);
}

int main(void)
{
	test_presets();
	test_accounting();
	test_iops_cap();
	test_throughput_cap();
	test_bucket_burst();
	test_credits();
	test_latency();
	test_depth_queue();
	test_emulated_device();
	return failures ? 1 : 0;
}
