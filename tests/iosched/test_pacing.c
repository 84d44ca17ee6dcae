/*
 * test_pacing.c -- dbaware's bound on the bulk ahead of WAL, and its
 * writeback throttle pacing the bulk to a device whose speed changes
 * mid-run, as properties on the virtual clock.
 *
 * The device is a gp2 volume of 100 GiB (baseline 300 IOPS, bursts to
 * 3,000 on credits, 128 MiB/s) with few credits: it serves the first part of
 * each run at the burst rate and the rest at the baseline, a tenth of it,
 * as a capped cloud volume does once its credits are spent.  The workload is
 * drawn from a seed: random heap writes of 8 to 64 KiB (some of them
 * adjacent, so that they merge) arriving faster than the baseline serves
 * them, random heap reads, and commits (a WAL write of 8 KiB and its sync)
 * at random intervals.  For every seed, at every transfer the device starts
 * (seen by the virtual back end, which counts what it holds, not what the
 * scheduler believes):
 *
 *   - a WAL transfer finds at most iosched.bulk_inflight_kb of writeback
 *     ahead of it at the device;
 *   - a writeback transfer starts only into the room left under the limit
 *     (or alone, when nothing else is in flight);
 *   - with the limit off (0) and the throttle off, the same workload puts
 *     more than the limit ahead of WAL: the property can fail.
 *
 * And the pacing, per seed:
 *   - the credits run out inside the run (the device slows down);
 *   - the throttle's depth at the WAL transfers after the slow-down is
 *     below its depth before it: it follows the device;
 *   - the bulk is paced, not stopped: in the slow part it is written at
 *     no less than half of what the baseline leaves the commits' WAL;
 *   - the commits made in the slow part wait, at their p99, less than a
 *     third of what they wait without the limit and the throttle, and
 *     every request completes.
 */
#include <stdio.h>

#include "sched_util.h"

#define NSEEDS	   8
#define RUN_NS	   (3000 * MS) /* submissions stop here */
#define LIMIT_KB   1024	       /* bulk_inflight_kb */
#define TARGET_US  5000	       /* wal_target_us */
#define MAX_DEPTH  64	       /* nr_requests, and the device's queue */
#define BULK_EVERY (2 * MS)    /* a batch of heap writes this often */
#define MAXREQ	   20000
#define VOLUME_GIB 100 /* gp2: baseline 300 IOPS */
#define BASELINE   300.0
#define CREDITS	   400.0

struct preq {
	struct ios_req r;
	struct iovec iov;
	uint64_t sent, done_at;
	int calls;
	ssize_t res;
	struct ios_sched *s;
};

static char buf[1 << 20]; /* never touched: the requests execute nothing */

/* what one run saw */
struct run {
	size_t wal_ahead_max;	       /* writeback bytes ahead of a WAL transfer, at most */
	int bad_wal, bad_wb;	       /* transfers that broke the limit */
	double depth_fast, depth_slow; /* mean throttle depth at WAL transfers */
	unsigned long nfast, nslow;
	uint64_t out_ns;	/* the credits ran out */
	double slow_bulk_mib_s; /* heap bytes written per second in the slow part */
	uint64_t p99_slow_ns;	/* commits' syncs made in the slow part */
	int incomplete;
};

static struct preq reqs[MAXREQ];
static int nreqs;
static uint64_t lat[MAXREQ];
static struct run *cur;
static size_t cur_limit;

static void done(struct ios_req *r, ssize_t res)
{
	struct preq *p = (struct preq *)r;

	p->calls++;
	p->res = res;
	p->done_at = ios_virtual_now(p->s);
}

static void seen(void *arg, const struct ios_virtual_start *v)
{
	struct run *o = arg;
	bool wal = v->cls == IOS_CLASS_WAL || v->cls == IOS_CLASS_XACT;
	bool wb = v->dir == IOS_WRITE && !wal;

	if (wal) {
		if (v->wb_bytes_ahead > o->wal_ahead_max)
			o->wal_ahead_max = v->wb_bytes_ahead;
		if (cur_limit && v->wb_bytes_ahead > cur_limit)
			o->bad_wal++;
		if (o->out_ns && v->now_ns > o->out_ns + 300 * MS) {
			o->depth_slow += v->throttle_depth;
			o->nslow++;
		} else if (!o->out_ns && v->now_ns > 200 * MS) {
			o->depth_fast += v->throttle_depth;
			o->nfast++;
		}
	}
	if (wb && cur_limit && v->wb_bytes_ahead && v->wb_bytes_ahead + v->len > cur_limit)
		o->bad_wb++;
}

static struct preq *add(struct ios_sched *s, int fd, uint64_t file, enum ios_class cls,
			enum ios_dir dir, off_t off, size_t len)
{
	struct preq *p;

	CHECK(nreqs < MAXREQ);
	if (nreqs >= MAXREQ)
		return NULL;
	p = &reqs[nreqs++];
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->r.fd = fd;
	p->r.fid.ino = file;
	p->r.cls = cls;
	p->r.dir = dir;
	p->r.flags = IOS_F_NOEXEC | (dir == IOS_SYNC ? IOS_F_DATASYNC : 0);
	p->r.off = off;
	p->r.done = done;
	if (dir != IOS_SYNC) {
		p->r.len = len;
		p->iov.iov_base = buf;
		p->iov.iov_len = len;
		p->r.iov = &p->iov;
		p->r.iovcnt = 1;
	}
	p->sent = ios_virtual_now(s);
	ios_submit(s, &p->r);
	return p;
}

static void run(uint64_t seed, bool bounded, struct run *o)
{
	struct ios_settings set;
	struct ios_disk_state ds;
	struct ios_sched *s;
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1, t, next_commit = 0, next_bulk = 0;
	uint64_t slow_bytes = 0, slow_from, slow_to = RUN_NS;
	off_t wal_off = 0;
	int i, nlat = 0;

	memset(o, 0, sizeof(*o));
	settings(&set, IOS_POLICY_DBAWARE, IOS_DEVICE_GP2);
	set.cloud_volume_gib = VOLUME_GIB;
	set.cloud_baseline_iops = BASELINE;
	set.cloud_credits = CREDITS;
	set.queue_depth = MAX_DEPTH;
	set.nr_requests = MAX_DEPTH;
	set.bulk_inflight_kb = bounded ? LIMIT_KB : 0;
	set.wal_target_us = bounded ? TARGET_US : 0;
	s = ios_create_virtual(&set);
	CHECK(s != NULL);
	if (!s)
		return;
	cur = o;
	cur_limit = (size_t)set.bulk_inflight_kb * 1024;
	ios_virtual_observe(s, seen, o);
	nreqs = 0;
	for (t = 0; t < RUN_NS; t += 100 * US) {
		ios_virtual_advance(s, t);
		if (!o->out_ns) {
			ios_virtual_device_state(s, &ds);
			if (ds.credits_first_out_ns)
				o->out_ns = ds.credits_first_out_ns;
		}
		if (t >= next_bulk) { /* heap: ~20 MiB/s, twice the baseline's room */
			int n = 1 + (int)(xorshift(&rng) % 3);
			off_t off = (off_t)(xorshift(&rng) % 8192) * 65536;

			for (i = 0; i < n; i++) {
				size_t len = 8192 * (1 + xorshift(&rng) % 8);
				uint64_t file = 10 + xorshift(&rng) % 4;

				add(s, 3, file, IOS_CLASS_HEAP, IOS_WRITE, off, len);
				off += (off_t)len; /* adjacent: merged if queued together */
			}
			if (xorshift(&rng) % 20 == 0) /* 25 reads per second */
				add(s, 3, 10 + xorshift(&rng) % 4, IOS_CLASS_HEAP, IOS_READ,
				    (off_t)(xorshift(&rng) % 65536) * 8192, 8192);
			next_bulk = t + BULK_EVERY;
		}
		if (t >= next_commit) { /* a commit every 5 to 15 ms */
			add(s, 4, 1, IOS_CLASS_WAL, IOS_WRITE, wal_off, 8192);
			add(s, 4, 1, IOS_CLASS_WAL, IOS_SYNC, 0, 0);
			wal_off += 8192;
			next_commit = t + (5 + xorshift(&rng) % 11) * MS;
		}
	}
	ios_virtual_advance(s, RUN_NS + 600000 * MS);
	ios_virtual_observe(s, NULL, NULL);
	slow_from = o->out_ns + 300 * MS;
	for (i = 0; i < nreqs; i++) {
		struct preq *p = &reqs[i];

		if (p->calls != 1 || p->res != (p->r.dir == IOS_SYNC ? 0 : (ssize_t)p->r.len))
			o->incomplete++;
		if (p->r.cls == IOS_CLASS_HEAP && p->r.dir == IOS_WRITE &&
		    p->done_at >= slow_from && p->done_at < slow_to)
			slow_bytes += p->r.len;
		if (p->r.cls == IOS_CLASS_WAL && p->r.dir == IOS_SYNC && p->sent >= slow_from &&
		    p->sent < slow_to)
			lat[nlat++] = p->done_at - p->sent;
	}
	qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_u64);
	o->p99_slow_ns = nlat ? lat[nlat * 99 / 100] : 0;
	if (slow_to > slow_from)
		o->slow_bulk_mib_s =
		    (double)slow_bytes / (1 << 20) / ((double)(slow_to - slow_from) / 1e9);
	if (o->nfast)
		o->depth_fast /= (double)o->nfast;
	if (o->nslow)
		o->depth_slow /= (double)o->nslow;
	ios_destroy(s);
}

int main(void)
{
	static struct run on, off;
	uint64_t seed;

	for (seed = 1; seed <= NSEEDS; seed++) {
		/* what the baseline leaves the heap writes: a commit's WAL write
		 * is an operation, one every 10 ms on average, and a heap read
		 * one, 25 per second; a heap write of up to 64 KiB is one, at
		 * 36 KiB on average */
		double room_mib_s = (BASELINE - 100 - 25) * 36.0 / 1024;

		run(seed, true, &on);
		run(seed, false, &off);
		printf(
		    "seed %llu: credits out at %.2f s; bulk ahead of WAL at most %zu KiB bounded, "
		    "%zu KiB without; throttle depth %.1f before, %.1f after; heap %.1f MiB/s "
		    "after (room %.1f); commit p99 after %.1f ms bounded, %.1f ms without\n",
		    (unsigned long long)seed, (double)on.out_ns / 1e9, on.wal_ahead_max / 1024,
		    off.wal_ahead_max / 1024, on.depth_fast, on.depth_slow, on.slow_bulk_mib_s,
		    room_mib_s, (double)on.p99_slow_ns / MS, (double)off.p99_slow_ns / MS);
		CHECK(on.incomplete == 0 && off.incomplete == 0);
		CHECK(on.bad_wal == 0 && on.bad_wb == 0);	    /* the bound */
		CHECK(on.wal_ahead_max <= (size_t)LIMIT_KB * 1024); /* (the same, as a figure) */
		CHECK(off.wal_ahead_max > (size_t)LIMIT_KB * 1024); /* it can be broken */
		CHECK(on.out_ns > 200 * MS &&
		      on.out_ns < RUN_NS - 1000 * MS); /* the device slows */
		CHECK(on.nfast > 0 && on.nslow > 0 && on.depth_slow < on.depth_fast); /* followed */
		CHECK(on.slow_bulk_mib_s >= room_mib_s / 2); /* paced, not stopped */
		CHECK(on.p99_slow_ns * 3 < off.p99_slow_ns); /* commits wait less */
	}
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
