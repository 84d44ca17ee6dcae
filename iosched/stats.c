/*
 * stats.c -- per-class I/O statistics: operation and byte counters, errors,
 * merges, readahead use and a latency histogram per class.
 *
 * ios_stats_account() runs on every request, on whichever thread completes
 * it, so the update path takes no lock: every counter is a relaxed atomic
 * addition.  To keep threads on different CPUs from bouncing the same cache
 * lines, the counters are sharded by the CPU the caller runs on
 * (sched_getcpu(), served by rseq without a system call); a thread that
 * migrates in the middle of an update merely adds to two shards.  Snapshots
 * sum the shards.
 *
 * Invariants:
 *   - every counter only grows (until ios_stats_destroy());
 *   - a histogram bucket is at most 1/16 of its lower bound wide, so a
 *     percentile read from it is within 1/32 of a recorded value;
 *   - "over 2 s" and "over 10 s" are counted exactly, not from buckets;
 *   - nothing here allocates or blocks after ios_stats_create();
 *   - per-relation entries (struct ios_stats_rel) are preallocated, never
 *     move or go away before ios_stats_destroy(), and an entry's key is
 *     written before the entry count that publishes it (release/acquire),
 *     so snapshots read the entries without the table's mutex, which only
 *     serializes additions (ios_stats_rel_get(), at lookup time).
 */
#include "iosched.h"
#include "json.h"
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SHARDS 16
#define NS_2S	   2000000000ull
#define NS_10S	   10000000000ull

/* One class's counters in one shard. */
struct shard_class {
	_Atomic uint64_t ops[IOS_NDIR];
	_Atomic uint64_t bytes[2]; /* IOS_READ, IOS_WRITE */
	_Atomic uint64_t errors;
	_Atomic uint64_t merges;
	_Atomic uint64_t ra_hit, ra_wasted;
	_Atomic uint64_t opens, pt_opens, pt_files;
	_Atomic uint64_t queue_sum, service_sum;
	_Atomic uint64_t over_2s, over_10s;
	_Atomic uint64_t max;
	_Atomic uint64_t hist[IOS_STATS_NBUCKETS];
};

struct shard {
	struct shard_class cls[IOS_NCLASS];
} __attribute__((aligned(64)));

/* One relation's counters: not sharded (a relation is rarely hot on two
 * CPUs at once), two cache lines. */
struct ios_stats_rel {
	uint32_t spc, db, relnode; /* the key: set before publication */
	_Atomic uint8_t main_cls;
	_Atomic uint64_t ops[IOS_NDIR];
	_Atomic uint64_t bytes[2][IOS_NFORK]; /* IOS_READ, IOS_WRITE */
} __attribute__((aligned(64)));

#define REL_SLOTS (2 * IOS_STATS_MAX_RELATIONS) /* hash index, a power of 2 */

struct ios_stats {
	unsigned nshards;
	uint64_t created_ns;
	struct shard *shards; /* nshards of them, cache-line aligned */
	/* relations: rels[0] is the overflow entry; rels[1..nrels-1] in the
	 * order they were added; rel_slot[] holds index + 1 (0: empty) */
	pthread_mutex_t rel_lock;
	_Atomic uint32_t nrels;
	_Atomic uint64_t rel_untracked;
	/* the writeback throttle: counters added, gauges stored, per decision
	 * (one thread at a time: the dispatcher of the running scheduler) */
	_Atomic uint64_t thr[7]; /* windows .. held, in struct order */
	_Atomic uint64_t thr_target, thr_depth, thr_max;
	struct ios_stats_rel *rels; /* IOS_STATS_MAX_RELATIONS + 1 */
	uint32_t *rel_slot;	    /* REL_SLOTS */
};

/* bucket_of() -- the histogram bucket of @v ns. */
static inline unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < (1u << IOS_STATS_SUB_BITS))
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= IOS_STATS_SUB_BITS */
	return ((e - IOS_STATS_SUB_BITS + 1) << IOS_STATS_SUB_BITS) |
	       (unsigned)((v >> (e - IOS_STATS_SUB_BITS)) & ((1u << IOS_STATS_SUB_BITS) - 1));
}

/* bucket_lower() / bucket_width() -- the values bucket @b holds are
 * [lower, lower + width). */
static uint64_t bucket_lower(unsigned b)
{
	unsigned e, sub;

	if (b < (1u << IOS_STATS_SUB_BITS))
		return b;
	e = (b >> IOS_STATS_SUB_BITS) + IOS_STATS_SUB_BITS - 1;
	sub = b & ((1u << IOS_STATS_SUB_BITS) - 1);
	return ((uint64_t)((1u << IOS_STATS_SUB_BITS) | sub)) << (e - IOS_STATS_SUB_BITS);
}

static uint64_t bucket_width(unsigned b)
{
	if (b < (1u << IOS_STATS_SUB_BITS))
		return 1;
	return 1ull << ((b >> IOS_STATS_SUB_BITS) - 1);
}

struct ios_stats *ios_stats_create(void)
{
	struct ios_stats *s;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->nshards = ncpu < 1 ? 1 : ncpu > MAX_SHARDS ? MAX_SHARDS : (unsigned)ncpu;
	s->shards = aligned_alloc(64, sizeof(struct shard) * s->nshards);
	if (!s->shards) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	memset(s->shards, 0, sizeof(struct shard) * s->nshards);
	/* calloc: the kernel hands out zero pages only as entries are used */
	s->rels = calloc(IOS_STATS_MAX_RELATIONS + 1, sizeof(*s->rels));
	s->rel_slot = calloc(REL_SLOTS, sizeof(*s->rel_slot));
	if (!s->rels || !s->rel_slot) {
		free(s->rels);
		free(s->rel_slot);
		free(s->shards);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->rels[0].main_cls = IOS_CLASS_OTHER;
	s->nrels = 1;
	pthread_mutex_init(&s->rel_lock, NULL);
	s->created_ns = ios_now_ns();
	return s;
}

void ios_stats_destroy(struct ios_stats *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->rel_lock);
	free(s->rels);
	free(s->rel_slot);
	free(s->shards);
	free(s);
}

/* my_shard() -- the shard of the CPU the caller runs on. */
static inline struct shard *my_shard(struct ios_stats *s)
{
	int cpu = s->nshards > 1 ? sched_getcpu() : 0;

	return &s->shards[cpu < 0 ? 0 : (unsigned)cpu % s->nshards];
}

static inline void add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline unsigned class_index(enum ios_class c)
{
	return (unsigned)c < IOS_NCLASS ? (unsigned)c : IOS_CLASS_OTHER;
}

/* rel_account() -- the op and bytes of @req into its relation. */
static inline void rel_account(struct ios_stats_rel *r, const struct ios_req *req, ssize_t result)
{
	unsigned fork = req->cls == IOS_CLASS_FSM  ? IOS_FORK_FSM
			: req->cls == IOS_CLASS_VM ? IOS_FORK_VM
						   : IOS_FORK_MAIN;

	add(&r->ops[req->dir], 1);
	if (result > 0 && req->dir != IOS_SYNC)
		add(&r->bytes[req->dir][fork], (uint64_t)result);
	if ((req->cls == IOS_CLASS_HEAP || req->cls == IOS_CLASS_INDEX) &&
	    atomic_load_explicit(&r->main_cls, memory_order_relaxed) != (uint8_t)req->cls)
		atomic_store_explicit(&r->main_cls, (uint8_t)req->cls, memory_order_relaxed);
}

void ios_stats_account(struct ios_stats *s, const struct ios_req *req, ssize_t result,
		       uint64_t queue_ns, uint64_t service_ns)
{
	struct shard_class *k;
	uint64_t lat = queue_ns + service_ns, cur;

	if (!s || !req || (unsigned)req->dir >= IOS_NDIR)
		return;
	if (req->rel)
		rel_account(req->rel, req, result);
	k = &my_shard(s)->cls[class_index(req->cls)];
	add(&k->ops[req->dir], 1);
	if (result > 0 && req->dir != IOS_SYNC)
		add(&k->bytes[req->dir], (uint64_t)result);
	else if (result < 0)
		add(&k->errors, 1);
	add(&k->queue_sum, queue_ns);
	add(&k->service_sum, service_ns);
	add(&k->hist[bucket_of(lat)], 1);
	if (lat > NS_2S) {
		add(&k->over_2s, 1);
		if (lat > NS_10S)
			add(&k->over_10s, 1);
	}
	cur = atomic_load_explicit(&k->max, memory_order_relaxed);
	while (lat > cur && !atomic_compare_exchange_weak_explicit(
				&k->max, &cur, lat, memory_order_relaxed, memory_order_relaxed))
		;
}

void ios_stats_note_merge(struct ios_stats *s, enum ios_class cls, uint64_t n)
{
	if (s && n)
		add(&my_shard(s)->cls[class_index(cls)].merges, n);
}

void ios_stats_note_open(struct ios_stats *s, enum ios_class cls, int passthrough, int new_file)
{
	struct shard_class *k;

	if (!s)
		return;
	k = &my_shard(s)->cls[class_index(cls)];
	add(&k->opens, 1);
	if (passthrough)
		add(&k->pt_opens, 1);
	if (new_file)
		add(&k->pt_files, 1);
}

/* throttle_counters() -- the counters of @t in the order of ios_stats.thr */
static void throttle_counters(const struct ios_stats_throttle *t, uint64_t v[7])
{
	v[0] = t->windows;
	v[1] = t->windows_cut;
	v[2] = t->windows_raised;
	v[3] = t->wal_flushes;
	v[4] = t->wal_slow;
	v[5] = t->throttled_ns;
	v[6] = t->held;
}

void ios_stats_note_throttle(struct ios_stats *s, const struct ios_stats_throttle *t)
{
	uint64_t v[7];
	unsigned i;

	if (!s || !t)
		return;
	throttle_counters(t, v);
	for (i = 0; i < 7; i++)
		if (v[i])
			add(&s->thr[i], v[i]);
	atomic_store_explicit(&s->thr_target, t->target_ns, memory_order_relaxed);
	atomic_store_explicit(&s->thr_depth, t->depth, memory_order_relaxed);
	atomic_store_explicit(&s->thr_max, t->max_depth, memory_order_relaxed);
}

void ios_stats_note_readahead(struct ios_stats *s, enum ios_class cls, uint64_t hit_bytes,
			      uint64_t wasted_bytes)
{
	struct shard_class *k;

	if (!s)
		return;
	k = &my_shard(s)->cls[class_index(cls)];
	if (hit_bytes)
		add(&k->ra_hit, hit_bytes);
	if (wasted_bytes)
		add(&k->ra_wasted, wasted_bytes);
}

void ios_stats_hist_add(struct ios_stats_class *c, uint64_t ns)
{
	c->hist[bucket_of(ns)]++;
	c->lat_count++;
	if (ns > c->lat_max_ns)
		c->lat_max_ns = ns;
}

uint64_t ios_stats_percentile(const struct ios_stats_class *c, double q)
{
	uint64_t rank, seen = 0, v;
	unsigned b;
	double x;

	if (!c || c->lat_count == 0)
		return 0;
	if (q > 1)
		q = 1;
	/* the smallest value with at least q of them at or below it; the
	 * epsilon keeps 0.99 * 1000 from becoming rank 991 */
	x = q * (double)c->lat_count;
	rank = (uint64_t)ceil(x - x * 1e-12);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < IOS_STATS_NBUCKETS; b++) {
		seen += c->hist[b];
		if (seen >= rank)
			break;
	}
	if (b == IOS_STATS_NBUCKETS) /* torn snapshot: count > histogram */
		return c->lat_max_ns;
	v = bucket_lower(b) + (bucket_width(b) - 1) / 2;
	if (c->lat_max_ns && v > c->lat_max_ns)
		v = c->lat_max_ns;
	return v;
}

/* derive() -- lat_count and the derived fields of @c from its counters. */
static void derive(struct ios_stats_class *c)
{
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < IOS_STATS_NBUCKETS; b++)
		n += c->hist[b];
	c->lat_count = n;
	if (n == 0) {
		c->lat_avg_ns = c->lat_p50_ns = c->lat_p99_ns = c->lat_p999_ns = 0;
		c->over_2s_pct = c->over_10s_pct = 0;
		return;
	}
	c->lat_avg_ns = (c->queue_sum_ns + c->service_sum_ns) / n;
	c->lat_p50_ns = ios_stats_percentile(c, 0.50);
	c->lat_p99_ns = ios_stats_percentile(c, 0.99);
	c->lat_p999_ns = ios_stats_percentile(c, 0.999);
	c->over_2s_pct = 100.0 * (double)c->lat_over_2s / (double)n;
	c->over_10s_pct = 100.0 * (double)c->lat_over_10s / (double)n;
}

/* seen() -- whether the byte counters of a class with these cumulative
 * open counts cover all of its data. */
static enum ios_bytes_seen seen(const struct ios_stats_class *c)
{
	if (!c->passthrough_opens)
		return IOS_SEEN_ALL;
	return c->passthrough_opens < c->opens ? IOS_SEEN_PARTIAL : IOS_SEEN_NONE;
}

/* accumulate() -- add the counters of @c to @sum (max: the larger). */
static void accumulate(struct ios_stats_class *sum, const struct ios_stats_class *c)
{
	unsigned b;

	sum->read_ops += c->read_ops;
	sum->read_bytes += c->read_bytes;
	sum->write_ops += c->write_ops;
	sum->write_bytes += c->write_bytes;
	sum->sync_ops += c->sync_ops;
	sum->errors += c->errors;
	sum->merges += c->merges;
	sum->ra_hit_bytes += c->ra_hit_bytes;
	sum->ra_wasted_bytes += c->ra_wasted_bytes;
	sum->opens += c->opens;
	sum->passthrough_opens += c->passthrough_opens;
	sum->passthrough_files += c->passthrough_files;
	sum->queue_sum_ns += c->queue_sum_ns;
	sum->service_sum_ns += c->service_sum_ns;
	sum->lat_over_2s += c->lat_over_2s;
	sum->lat_over_10s += c->lat_over_10s;
	if (c->lat_max_ns > sum->lat_max_ns)
		sum->lat_max_ns = c->lat_max_ns;
	for (b = 0; b < IOS_STATS_NBUCKETS; b++)
		sum->hist[b] += c->hist[b];
}

/* finish() -- the total and every derived field of @snap. */
static void finish(struct ios_stats_snapshot *snap)
{
	unsigned c;

	memset(&snap->total, 0, sizeof(snap->total));
	for (c = 0; c < IOS_NCLASS; c++) {
		derive(&snap->cls[c]);
		accumulate(&snap->total, &snap->cls[c]);
	}
	derive(&snap->total);
}

static uint64_t load(const _Atomic uint64_t *c)
{
	return atomic_load_explicit((_Atomic uint64_t *)c, memory_order_relaxed);
}

int ios_stats_snapshot(const struct ios_stats *s, struct ios_stats_snapshot *out)
{
	unsigned i, c, b;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->start_ns = s->created_ns;
	out->time_ns = ios_now_ns();
	out->cumulative = 1;
	for (i = 0; i < s->nshards; i++) {
		for (c = 0; c < IOS_NCLASS; c++) {
			const struct shard_class *k = &s->shards[i].cls[c];
			struct ios_stats_class *o = &out->cls[c];
			uint64_t m = load(&k->max);

			o->read_ops += load(&k->ops[IOS_READ]);
			o->write_ops += load(&k->ops[IOS_WRITE]);
			o->sync_ops += load(&k->ops[IOS_SYNC]);
			o->read_bytes += load(&k->bytes[IOS_READ]);
			o->write_bytes += load(&k->bytes[IOS_WRITE]);
			o->errors += load(&k->errors);
			o->merges += load(&k->merges);
			o->ra_hit_bytes += load(&k->ra_hit);
			o->ra_wasted_bytes += load(&k->ra_wasted);
			o->opens += load(&k->opens);
			o->passthrough_opens += load(&k->pt_opens);
			o->passthrough_files += load(&k->pt_files);
			o->queue_sum_ns += load(&k->queue_sum);
			o->service_sum_ns += load(&k->service_sum);
			o->lat_over_2s += load(&k->over_2s);
			o->lat_over_10s += load(&k->over_10s);
			if (m > o->lat_max_ns)
				o->lat_max_ns = m;
			for (b = 0; b < IOS_STATS_NBUCKETS; b++)
				o->hist[b] += load(&k->hist[b]);
		}
	}
	out->throttle.windows = load(&s->thr[0]);
	out->throttle.windows_cut = load(&s->thr[1]);
	out->throttle.windows_raised = load(&s->thr[2]);
	out->throttle.wal_flushes = load(&s->thr[3]);
	out->throttle.wal_slow = load(&s->thr[4]);
	out->throttle.throttled_ns = load(&s->thr[5]);
	out->throttle.held = load(&s->thr[6]);
	out->throttle.target_ns = load(&s->thr_target);
	out->throttle.depth = load(&s->thr_depth);
	out->throttle.max_depth = load(&s->thr_max);
	finish(out);
	for (c = 0; c < IOS_NCLASS; c++)
		out->cls[c].bytes_seen = seen(&out->cls[c]);
	out->total.bytes_seen = seen(&out->total);
	return 0;
}

static uint64_t sub(uint64_t b, uint64_t a)
{
	return b > a ? b - a : 0;
}

/* diff_class() -- @out = @b - @a for one class (@out may be @b). */
static void diff_class(const struct ios_stats_class *a, const struct ios_stats_class *b,
		       struct ios_stats_class *out)
{
	uint64_t bmax = b->lat_max_ns, amax = a->lat_max_ns;
	int top = -1;
	unsigned i;

	out->read_ops = sub(b->read_ops, a->read_ops);
	out->read_bytes = sub(b->read_bytes, a->read_bytes);
	out->write_ops = sub(b->write_ops, a->write_ops);
	out->write_bytes = sub(b->write_bytes, a->write_bytes);
	out->sync_ops = sub(b->sync_ops, a->sync_ops);
	out->errors = sub(b->errors, a->errors);
	out->merges = sub(b->merges, a->merges);
	out->ra_hit_bytes = sub(b->ra_hit_bytes, a->ra_hit_bytes);
	out->ra_wasted_bytes = sub(b->ra_wasted_bytes, a->ra_wasted_bytes);
	out->opens = sub(b->opens, a->opens);
	out->passthrough_opens = sub(b->passthrough_opens, a->passthrough_opens);
	out->passthrough_files = sub(b->passthrough_files, a->passthrough_files);
	out->bytes_seen = b->bytes_seen; /* about the mount, not the interval */
	out->queue_sum_ns = sub(b->queue_sum_ns, a->queue_sum_ns);
	out->service_sum_ns = sub(b->service_sum_ns, a->service_sum_ns);
	out->lat_over_2s = sub(b->lat_over_2s, a->lat_over_2s);
	out->lat_over_10s = sub(b->lat_over_10s, a->lat_over_10s);
	for (i = 0; i < IOS_STATS_NBUCKETS; i++) {
		out->hist[i] = sub(b->hist[i], a->hist[i]);
		if (out->hist[i])
			top = (int)i;
	}
	/* The interval's maximum: exact if the running maximum moved in it;
	 * otherwise the top of the highest bucket used, which cannot exceed
	 * the running maximum. */
	if (top < 0)
		out->lat_max_ns = 0;
	else if (bmax > amax)
		out->lat_max_ns = bmax;
	else {
		uint64_t hi = bucket_lower((unsigned)top) + bucket_width((unsigned)top) - 1;

		out->lat_max_ns = hi < bmax ? hi : bmax;
	}
}

int ios_stats_snapshot_diff(const struct ios_stats_snapshot *a, const struct ios_stats_snapshot *b,
			    struct ios_stats_snapshot *out)
{
	enum ios_bytes_seen total_seen;
	uint64_t start, av[7], bv[7];
	unsigned c;

	if (!a || !b || !out || b->time_ns < a->time_ns)
		return -EINVAL;
	start = a->time_ns;
	total_seen = b->total.bytes_seen;
	for (c = 0; c < IOS_NCLASS; c++)
		diff_class(&a->cls[c], &b->cls[c], &out->cls[c]);
	throttle_counters(&a->throttle, av);
	throttle_counters(&b->throttle, bv);
	out->throttle = b->throttle; /* the gauges */
	out->throttle.windows = sub(bv[0], av[0]);
	out->throttle.windows_cut = sub(bv[1], av[1]);
	out->throttle.windows_raised = sub(bv[2], av[2]);
	out->throttle.wal_flushes = sub(bv[3], av[3]);
	out->throttle.wal_slow = sub(bv[4], av[4]);
	out->throttle.throttled_ns = sub(bv[5], av[5]);
	out->throttle.held = sub(bv[6], av[6]);
	out->time_ns = b->time_ns;
	out->start_ns = start;
	out->cumulative = 0;
	finish(out);
	out->total.bytes_seen = total_seen;
	return 0;
}

/* ---- relations --------------------------------------------------------------- */

static uint32_t rel_hash(uint32_t spc, uint32_t db, uint32_t relnode)
{
	uint64_t h = ((uint64_t)spc * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)db << 32 | relnode);

	h *= 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 40) & (REL_SLOTS - 1);
}

struct ios_stats_rel *ios_stats_rel_get(struct ios_stats *s, uint32_t spc, uint32_t db,
					uint32_t relnode)
{
	struct ios_stats_rel *r = NULL;
	uint32_t h, n;

	if (!s || relnode == 0)
		return NULL;
	pthread_mutex_lock(&s->rel_lock);
	for (h = rel_hash(spc, db, relnode); s->rel_slot[h]; h = (h + 1) & (REL_SLOTS - 1)) {
		r = &s->rels[s->rel_slot[h] - 1];
		if (r->spc == spc && r->db == db && r->relnode == relnode)
			goto out;
	}
	n = atomic_load_explicit(&s->nrels, memory_order_relaxed);
	if (n > IOS_STATS_MAX_RELATIONS) { /* full: the overflow entry */
		add(&s->rel_untracked, 1);
		r = &s->rels[0];
		goto out;
	}
	r = &s->rels[n];
	r->spc = spc;
	r->db = db;
	r->relnode = relnode;
	atomic_store_explicit(&r->main_cls, IOS_CLASS_OTHER, memory_order_relaxed);
	s->rel_slot[h] = n + 1;
	atomic_store_explicit(&s->nrels, n + 1, memory_order_release);
out:
	pthread_mutex_unlock(&s->rel_lock);
	return r;
}

uint64_t ios_rel_bytes(const struct ios_rel_info *r)
{
	uint64_t n = 0;
	unsigned f;

	for (f = 0; f < IOS_NFORK; f++)
		n += r->read_bytes[f] + r->write_bytes[f];
	return n;
}

static bool rel_active(const struct ios_rel_info *r)
{
	return r->read_ops || r->write_ops || r->sync_ops;
}

int ios_stats_rel_snapshot(const struct ios_stats *s, struct ios_rel_list *out)
{
	uint32_t n, i, f;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	n = atomic_load_explicit((_Atomic uint32_t *)&s->nrels, memory_order_acquire);
	out->rel = calloc(n, sizeof(*out->rel));
	if (!out->rel)
		return -ENOMEM;
	out->untracked = load(&s->rel_untracked);
	for (i = 0; i < n; i++) {
		const struct ios_stats_rel *r = &s->rels[i];
		struct ios_rel_info *o = &out->rel[out->count];

		memset(o, 0, sizeof(*o));
		o->spc = r->spc;
		o->db = r->db;
		o->relnode = r->relnode;
		o->main_cls =
		    atomic_load_explicit((_Atomic uint8_t *)&r->main_cls, memory_order_relaxed);
		o->read_ops = load(&r->ops[IOS_READ]);
		o->write_ops = load(&r->ops[IOS_WRITE]);
		o->sync_ops = load(&r->ops[IOS_SYNC]);
		for (f = 0; f < IOS_NFORK; f++) {
			o->read_bytes[f] = load(&r->bytes[IOS_READ][f]);
			o->write_bytes[f] = load(&r->bytes[IOS_WRITE][f]);
		}
		if (rel_active(o))
			out->count++;
	}
	out->active = out->count;
	return 0;
}

static int cmp_key(const struct ios_rel_info *a, const struct ios_rel_info *b)
{
	if (a->spc != b->spc)
		return a->spc < b->spc ? -1 : 1;
	if (a->db != b->db)
		return a->db < b->db ? -1 : 1;
	if (a->relnode != b->relnode)
		return a->relnode < b->relnode ? -1 : 1;
	return 0;
}

static int cmp_key_q(const void *a, const void *b)
{
	return cmp_key(a, b);
}

static int cmp_bytes_q(const void *pa, const void *pb)
{
	const struct ios_rel_info *a = pa, *b = pb;
	uint64_t x = ios_rel_bytes(a), y = ios_rel_bytes(b);

	if (x != y)
		return x > y ? -1 : 1;
	return cmp_key(a, b);
}

void ios_rel_diff(struct ios_rel_list *a, struct ios_rel_list *b)
{
	size_t i, n = 0;
	unsigned f;

	qsort(a->rel, a->count, sizeof(*a->rel), cmp_key_q);
	for (i = 0; i < b->count; i++) {
		struct ios_rel_info *r = &b->rel[i];
		const struct ios_rel_info *o =
		    a->count ? bsearch(r, a->rel, a->count, sizeof(*r), cmp_key_q) : NULL;

		if (o) {
			r->read_ops = sub(r->read_ops, o->read_ops);
			r->write_ops = sub(r->write_ops, o->write_ops);
			r->sync_ops = sub(r->sync_ops, o->sync_ops);
			for (f = 0; f < IOS_NFORK; f++) {
				r->read_bytes[f] = sub(r->read_bytes[f], o->read_bytes[f]);
				r->write_bytes[f] = sub(r->write_bytes[f], o->write_bytes[f]);
			}
		}
		if (rel_active(r))
			b->rel[n++] = *r;
	}
	b->count = b->active = n;
}

void ios_rel_top(struct ios_rel_list *l, size_t n)
{
	if (!l || !l->rel)
		return;
	qsort(l->rel, l->count, sizeof(*l->rel), cmp_bytes_q);
	l->active = l->count;
	if (n && n < l->count)
		l->count = n;
}

/* ---- output ---------------------------------------------------------------- */

/* A bounded string builder: keeps counting past the end so the caller learns
 * the length it would have needed. */
struct sbuf {
	char *buf;
	size_t len, pos;
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room = sb->pos < sb->len ? sb->len - sb->pos : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? sb->buf + sb->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->pos += (size_t)n;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static const char *const seen_names[] = {
    [IOS_SEEN_ALL] = "all",
    [IOS_SEEN_PARTIAL] = "partial",
    [IOS_SEEN_NONE] = "none",
};

static void json_class(struct sbuf *sb, const struct ios_stats_class *c)
{
	uint64_t n = c->lat_count;

	sb_printf(sb,
		  "{\"read_ops\":%" PRIu64 ",\"read_bytes\":%" PRIu64 ",\"write_ops\":%" PRIu64
		  ",\"write_bytes\":%" PRIu64 ",\"sync_ops\":%" PRIu64 ",\"errors\":%" PRIu64
		  ",\"merges\":%" PRIu64 ",\"ra_hit_bytes\":%" PRIu64
		  ",\"ra_wasted_bytes\":%" PRIu64,
		  c->read_ops, c->read_bytes, c->write_ops, c->write_bytes, c->sync_ops, c->errors,
		  c->merges, c->ra_hit_bytes, c->ra_wasted_bytes);
	sb_printf(sb,
		  ",\"opens\":%" PRIu64 ",\"passthrough_opens\":%" PRIu64
		  ",\"passthrough_files\":%" PRIu64 ",\"bytes_seen\":\"%s\"",
		  c->opens, c->passthrough_opens, c->passthrough_files, seen_names[c->bytes_seen]);
	sb_printf(
	    sb,
	    ",\"latency_ms\":{\"count\":%" PRIu64
	    ",\"avg\":%.6f,\"p50\":%.6f,\"p99\":%.6f,\"p999\":%.6f,\"max\":%.6f"
	    ",\"queue_avg\":%.6f,\"service_avg\":%.6f,\"over_2s_pct\":%.4f,\"over_10s_pct\":%.4f}}",
	    n, ms(c->lat_avg_ns), ms(c->lat_p50_ns), ms(c->lat_p99_ns), ms(c->lat_p999_ns),
	    ms(c->lat_max_ns), n ? ms(c->queue_sum_ns / n) : 0.0,
	    n ? ms(c->service_sum_ns / n) : 0.0, c->over_2s_pct, c->over_10s_pct);
}

/* rel_kind() -- what relation @r is: pg_class.relkind spelled out when
 * resolved, else the class its main fork's pages showed. */
static const char *rel_kind(const struct ios_rel_info *r)
{
	switch (r->relkind) {
	case 'r':
		return "table";
	case 'i':
		return "index";
	case 't':
		return "toast";
	case 'S':
		return "sequence";
	case 'm':
		return "matview";
	default:
		break;
	}
	if (r->relnode == 0)
		return "-";
	return r->main_cls == IOS_CLASS_HEAP || r->main_cls == IOS_CLASS_INDEX
		   ? ios_class_name((enum ios_class)r->main_cls)
		   : "?";
}

static const char *const fork_names[IOS_NFORK] = {"main", "fsm", "vm"};

/* json_quoted() -- @s as a JSON string (common/json.h). */
static void json_quoted(struct sbuf *sb, const char *s)
{
	size_t room = sb->pos < sb->len ? sb->len - sb->pos : 0;

	sb->pos += json_str_format(room ? sb->buf + sb->pos : NULL, room, s);
}

static void json_relations(struct sbuf *sb, const struct ios_rel_list *l)
{
	size_t i;
	unsigned f;

	sb_printf(sb,
		  ",\"relations_active\":%zu,\"relations_untracked\":%" PRIu64 ",\"relations\":[",
		  l->active, l->untracked);
	for (i = 0; i < l->count; i++) {
		const struct ios_rel_info *r = &l->rel[i];

		sb_printf(sb,
			  "%s{\"spc\":%" PRIu32 ",\"db\":%" PRIu32 ",\"relfilenode\":%" PRIu32
			  ",\"name\":",
			  i ? "," : "", r->spc, r->db, r->relnode);
		if (r->name[0])
			json_quoted(sb, r->name);
		else
			sb_printf(sb, "null");
		sb_printf(sb,
			  ",\"kind\":\"%s\",\"relkind\":%s%c%s,\"read_ops\":%" PRIu64
			  ",\"write_ops\":%" PRIu64 ",\"sync_ops\":%" PRIu64,
			  rel_kind(r), r->relkind ? "\"" : "", r->relkind ? r->relkind : 'n',
			  r->relkind ? "\"" : "ull", r->read_ops, r->write_ops, r->sync_ops);
		sb_printf(sb, ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64 ",\"forks\":{",
			  r->read_bytes[0] + r->read_bytes[1] + r->read_bytes[2],
			  r->write_bytes[0] + r->write_bytes[1] + r->write_bytes[2]);
		for (f = 0; f < IOS_NFORK; f++)
			sb_printf(
			    sb, "%s\"%s\":{\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64 "}",
			    f ? "," : "", fork_names[f], r->read_bytes[f], r->write_bytes[f]);
		sb_printf(sb, "}}");
	}
	sb_printf(sb, "]");
}

static void json_throttle(struct sbuf *sb, const struct ios_stats_throttle *t)
{
	sb_printf(sb,
		  ",\"throttle\":{\"target_ms\":%.6f,\"depth\":%" PRIu64 ",\"max_depth\":%" PRIu64
		  ",\"windows\":%" PRIu64 ",\"windows_cut\":%" PRIu64 ",\"windows_raised\":%" PRIu64
		  ",\"wal_flushes\":%" PRIu64 ",\"wal_slow\":%" PRIu64
		  ",\"throttled_s\":%.6f,\"held\":%" PRIu64 "}",
		  ms(t->target_ns), t->depth, t->max_depth, t->windows, t->windows_cut,
		  t->windows_raised, t->wal_flushes, t->wal_slow, (double)t->throttled_ns / 1e9,
		  t->held);
}

/* json_build() -- the JSON object of @snap (and @rels, if any) into @sb. */
static void json_build(struct sbuf *sb, const struct ios_stats_snapshot *snap,
		       const char *extra_json_fields, const struct ios_rel_list *rels)
{
	unsigned c;

	sb_printf(sb, "{\"schema\":\"%s\",", IOS_STATS_SCHEMA);
	if (extra_json_fields && *extra_json_fields)
		sb_printf(sb, "%s,", extra_json_fields);
	sb_printf(sb, "\"cumulative\":%s,\"interval_s\":%.6f,\"classes\":{",
		  snap->cumulative ? "true" : "false",
		  (double)sub(snap->time_ns, snap->start_ns) / 1e9);
	for (c = 0; c < IOS_NCLASS; c++) {
		sb_printf(sb, "%s\"%s\":", c ? "," : "", ios_class_name((enum ios_class)c));
		json_class(sb, &snap->cls[c]);
	}
	sb_printf(sb, "},\"total\":");
	json_class(sb, &snap->total);
	json_throttle(sb, &snap->throttle);
	if (rels)
		json_relations(sb, rels);
	sb_printf(sb, "}");
}

int ios_stats_to_json(const struct ios_stats_snapshot *snap, const char *extra_json_fields,
		      char *buf, size_t len)
{
	struct sbuf sb = {buf, len, 0};

	if (!snap || (!buf && len))
		return -EINVAL;
	json_build(&sb, snap, extra_json_fields, NULL);
	if (sb.pos >= len) {
		if (len)
			buf[len - 1] = '\0';
		return -ENOSPC;
	}
	return (int)sb.pos; /* a few KiB at most */
}

int ios_stats_write_json(FILE *f, const struct ios_stats_snapshot *snap,
			 const char *extra_json_fields)
{
	return ios_stats_write_json_rels(f, snap, extra_json_fields, NULL);
}

int ios_stats_write_json_rels(FILE *f, const struct ios_stats_snapshot *snap,
			      const char *extra_json_fields, const struct ios_rel_list *rels)
{
	struct sbuf sb = {NULL, 0, 0};
	int ret = 0;

	if (!f || !snap)
		return -EINVAL;
	json_build(&sb, snap, extra_json_fields, rels); /* measure */
	sb.len = sb.pos + 1;
	sb.pos = 0;
	sb.buf = malloc(sb.len);
	if (!sb.buf)
		return -ENOMEM;
	json_build(&sb, snap, extra_json_fields, rels);
	if (fputs(sb.buf, f) == EOF || fputc('\n', f) == EOF)
		ret = -(errno ? errno : EIO);
	free(sb.buf);
	return ret;
}

/* active() -- whether class @c saw anything worth a table row. */
static int active(const struct ios_stats_class *c)
{
	return c->read_ops || c->write_ops || c->sync_ops || c->merges || c->ra_hit_bytes ||
	       c->ra_wasted_bytes || c->passthrough_opens;
}

/* table_row() -- one class; read and write columns of data pgiofs does not
 * see all of (passthrough) are marked: "*" some, "n/s" none. */
static void table_row(FILE *f, const char *name, const struct ios_stats_class *c)
{
	char rops[24], rmb[24], wops[24], wmb[24], p50[24], p99[24], p999[24];
	const char *mark = c->bytes_seen == IOS_SEEN_PARTIAL ? "*" : "";

	if (c->bytes_seen == IOS_SEEN_NONE) {
		snprintf(rops, sizeof(rops), "n/s");
		snprintf(rmb, sizeof(rmb), "n/s");
		snprintf(wops, sizeof(wops), "n/s");
		snprintf(wmb, sizeof(wmb), "n/s");
	} else {
		snprintf(rops, sizeof(rops), "%" PRIu64 "%s", c->read_ops, mark);
		snprintf(rmb, sizeof(rmb), "%.2f%s", (double)c->read_bytes / 1e6, mark);
		snprintf(wops, sizeof(wops), "%" PRIu64 "%s", c->write_ops, mark);
		snprintf(wmb, sizeof(wmb), "%.2f%s", (double)c->write_bytes / 1e6, mark);
	}
	stats_fmt_quantile_ms(p50, sizeof(p50), (double)c->lat_p50_ns / 1e6);
	stats_fmt_quantile_ms(p99, sizeof(p99), (double)c->lat_p99_ns / 1e6);
	stats_fmt_quantile_ms(p999, sizeof(p999), (double)c->lat_p999_ns / 1e6);
	fprintf(f,
		"%-6s %10s %10s %10s %10s %9" PRIu64 " %7" PRIu64 " %7" PRIu64
		" %9.3f %9s %9s %9s %9.3f %6.2f %6.2f\n",
		name, rops, rmb, wops, wmb, c->sync_ops, c->errors, c->merges, ms(c->lat_avg_ns),
		p50, p99, p999, ms(c->lat_max_ns), c->over_2s_pct, c->over_10s_pct);
}

/* table_notes() -- what the marks of the table mean, and the throttle. */
static void table_notes(FILE *f, const struct ios_stats_snapshot *snap)
{
	const struct ios_stats_throttle *t = &snap->throttle;
	unsigned c;

	for (c = 0; c < IOS_NCLASS; c++) {
		const struct ios_stats_class *k = &snap->cls[c];

		if (k->bytes_seen == IOS_SEEN_ALL)
			continue;
		fprintf(f,
			"%s: %s of %" PRIu64 " opens in passthrough (%" PRIu64 " files): their "
			"reads and writes bypass pgiofs and are not counted (%s)\n",
			ios_class_name((enum ios_class)c),
			k->bytes_seen == IOS_SEEN_NONE ? "all" : "some", k->opens,
			k->passthrough_files, k->bytes_seen == IOS_SEEN_NONE ? "n/s" : "*");
	}
	if (!t->target_ns)
		return;
	fprintf(f,
		"throttle: WAL flush target %.3f ms; writeback depth %" PRIu64 " of %" PRIu64
		"; %" PRIu64 " of %" PRIu64 " WAL flushes slower; %" PRIu64 " of %" PRIu64
		" decisions cut the depth, %" PRIu64 " raised it; throttled %.1f s, writeback "
		"held %" PRIu64 " times\n",
		ms(t->target_ns), t->depth, t->max_depth, t->wal_slow, t->wal_flushes,
		t->windows_cut, t->windows, t->windows_raised, (double)t->throttled_ns / 1e9,
		t->held);
	/* WAL writes in passthrough never reach the scheduler: only fsyncs
	 * are timed, and O_DSYNC writes (open_datasync) are not seen at all */
	if (snap->cls[IOS_CLASS_WAL].bytes_seen != IOS_SEEN_ALL)
		fprintf(f, "throttle: WAL in passthrough: only its fsyncs are timed%s\n",
			t->wal_flushes ? " (with wal_sync_method = open_datasync there are none)"
				       : "; none seen (wal_sync_method = open_datasync?): the "
					 "throttle has nothing to steer by");
}

void ios_stats_print_table(FILE *f, const struct ios_stats_snapshot *snap)
{
	unsigned c;

	if (!f || !snap)
		return;
	fprintf(f, "%-6s %10s %10s %10s %10s %9s %7s %7s %9s %9s %9s %9s %9s %6s %6s\n", "class",
		"read_ops", "read_MB", "write_ops", "write_MB", "sync_ops", "errors", "merges",
		"avg_ms", "p50_ms", "p99_ms", "p99.9_ms", "max_ms", ">2s%", ">10s%");
	for (c = 0; c < IOS_NCLASS; c++)
		if (active(&snap->cls[c]))
			table_row(f, ios_class_name((enum ios_class)c), &snap->cls[c]);
	table_row(f, "total", &snap->total);
	table_notes(f, snap);
	if (!snap->total.ra_hit_bytes && !snap->total.ra_wasted_bytes)
		return;
	fprintf(f, "readahead (MB):");
	for (c = 0; c < IOS_NCLASS; c++)
		if (snap->cls[c].ra_hit_bytes || snap->cls[c].ra_wasted_bytes)
			fprintf(f, " %s hit %.2f wasted %.2f;", ios_class_name((enum ios_class)c),
				(double)snap->cls[c].ra_hit_bytes / 1e6,
				(double)snap->cls[c].ra_wasted_bytes / 1e6);
	fprintf(f, " total hit %.2f wasted %.2f\n", (double)snap->total.ra_hit_bytes / 1e6,
		(double)snap->total.ra_wasted_bytes / 1e6);
}

void ios_stats_print_relations(FILE *f, const struct ios_rel_list *l)
{
	size_t i;

	if (!f || !l)
		return;
	fprintf(f, "%-32s %-8s %5s %6s %10s %10s %9s %10s %9s %8s %9s %7s %7s\n", "relation",
		"kind", "spc", "db", "relfilenode", "read_ops", "read_MB", "write_ops", "write_MB",
		"sync_ops", "main_MB", "fsm_MB", "vm_MB");
	for (i = 0; i < l->count; i++) {
		const struct ios_rel_info *r = &l->rel[i];
		const char *name = r->name[0] ? r->name : r->relnode ? "?" : "(other relations)";

		fprintf(f,
			"%-32s %-8s %5" PRIu32 " %6" PRIu32 " %10" PRIu32 " %10" PRIu64
			" %9.2f %10" PRIu64 " %9.2f %8" PRIu64 " %9.2f %7.2f %7.2f\n",
			name, rel_kind(r), r->spc, r->db, r->relnode, r->read_ops,
			(double)(r->read_bytes[0] + r->read_bytes[1] + r->read_bytes[2]) / 1e6,
			r->write_ops,
			(double)(r->write_bytes[0] + r->write_bytes[1] + r->write_bytes[2]) / 1e6,
			r->sync_ops, (double)(r->read_bytes[0] + r->write_bytes[0]) / 1e6,
			(double)(r->read_bytes[1] + r->write_bytes[1]) / 1e6,
			(double)(r->read_bytes[2] + r->write_bytes[2]) / 1e6);
	}
	if (l->count < l->active)
		fprintf(f, "(top %zu of %zu relations with I/O)\n", l->count, l->active);
	if (l->untracked)
		fprintf(f,
			"(the relation table was full: %" PRIu64 " lookups were counted under "
			"\"(other relations)\")\n",
			l->untracked);
}

/* ---- OpenMetrics text ---------------------------------------------------- */

/* om_family() -- the "# TYPE", "# UNIT" and "# HELP" lines of a family. */
static void om_family(FILE *f, const char *name, const char *type, const char *unit,
		      const char *help)
{
	fprintf(f, "# TYPE %s %s\n", name, type);
	if (unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s %s\n", name, help);
}

int ios_stats_write_openmetrics(FILE *f, const struct ios_stats_snapshot *snap, const char *labels)
{
	static const double quantiles[] = {0.5, 0.99, 0.999};
	const char *sep = labels && *labels ? "," : "";
	uint64_t kept;
	int c;
	size_t q;

	if (!f || !snap || !snap->cumulative)
		return -EINVAL;
	if (!labels)
		labels = "";
	errno = 0;
	om_family(f, "pgiofs_requests", "counter", NULL,
		  "Data requests completed (failed ones too), by class and direction.");
	for (c = 0; c < IOS_NCLASS; c++) {
		const struct ios_stats_class *k = &snap->cls[c];
		const char *n = ios_class_name((enum ios_class)c);

		fprintf(f,
			"pgiofs_requests_total{%s%sclass=\"%s\",direction=\"read\"} %" PRIu64 "\n",
			labels, sep, n, k->read_ops);
		fprintf(f,
			"pgiofs_requests_total{%s%sclass=\"%s\",direction=\"write\"} %" PRIu64 "\n",
			labels, sep, n, k->write_ops);
		fprintf(f,
			"pgiofs_requests_total{%s%sclass=\"%s\",direction=\"sync\"} %" PRIu64 "\n",
			labels, sep, n, k->sync_ops);
	}
	om_family(f, "pgiofs_transferred_bytes", "counter", "bytes",
		  "Bytes read from and written to the backing store, by class.");
	for (c = 0; c < IOS_NCLASS; c++) {
		const struct ios_stats_class *k = &snap->cls[c];
		const char *n = ios_class_name((enum ios_class)c);

		fprintf(f,
			"pgiofs_transferred_bytes_total{%s%sclass=\"%s\",direction=\"read\"} "
			"%" PRIu64 "\n",
			labels, sep, n, k->read_bytes);
		fprintf(f,
			"pgiofs_transferred_bytes_total{%s%sclass=\"%s\",direction=\"write\"} "
			"%" PRIu64 "\n",
			labels, sep, n, k->write_bytes);
	}
	om_family(f, "pgiofs_errors", "counter", NULL,
		  "Requests completed with an error, by class.");
	for (c = 0; c < IOS_NCLASS; c++)
		fprintf(f, "pgiofs_errors_total{%s%sclass=\"%s\"} %" PRIu64 "\n", labels, sep,
			ios_class_name((enum ios_class)c), snap->cls[c].errors);
	om_family(f, "pgiofs_merges", "counter", NULL,
		  "Requests merged into another transfer, by class.");
	for (c = 0; c < IOS_NCLASS; c++)
		fprintf(f, "pgiofs_merges_total{%s%sclass=\"%s\"} %" PRIu64 "\n", labels, sep,
			ios_class_name((enum ios_class)c), snap->cls[c].merges);
	om_family(f, "pgiofs_request_latency_seconds", "summary", "seconds",
		  "Queue wait plus service time of the requests, by class (quantiles from "
		  "a histogram whose buckets are 1/16 of a power of two wide).");
	for (c = 0; c < IOS_NCLASS; c++) {
		const struct ios_stats_class *k = &snap->cls[c];
		const char *n = ios_class_name((enum ios_class)c);

		for (q = 0; q < sizeof(quantiles) / sizeof(quantiles[0]); q++)
			fprintf(f,
				"pgiofs_request_latency_seconds{%s%sclass=\"%s\",quantile=\"%g\"} "
				"%.9f\n",
				labels, sep, n, quantiles[q],
				(double)ios_stats_percentile(k, quantiles[q]) / 1e9);
		fprintf(f, "pgiofs_request_latency_seconds_count{%s%sclass=\"%s\"} %" PRIu64 "\n",
			labels, sep, n, k->lat_count);
		fprintf(f, "pgiofs_request_latency_seconds_sum{%s%sclass=\"%s\"} %.9f\n", labels,
			sep, n, (double)(k->queue_sum_ns + k->service_sum_ns) / 1e9);
	}
	om_family(f, "pgiofs_throttle_windows", "counter", NULL,
		  "Decisions of dbaware's writeback throttle, by what they did (cut, "
		  "raised, or kept the writeback depth).");
	fprintf(f, "pgiofs_throttle_windows_total{%s%saction=\"cut\"} %" PRIu64 "\n", labels, sep,
		snap->throttle.windows_cut);
	fprintf(f, "pgiofs_throttle_windows_total{%s%saction=\"raised\"} %" PRIu64 "\n", labels,
		sep, snap->throttle.windows_raised);
	kept = snap->throttle.windows_cut + snap->throttle.windows_raised;
	kept = snap->throttle.windows > kept ? snap->throttle.windows - kept : 0;
	fprintf(f, "pgiofs_throttle_windows_total{%s%saction=\"kept\"} %" PRIu64 "\n", labels, sep,
		kept);
	fprintf(f, "# EOF\n");
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}
