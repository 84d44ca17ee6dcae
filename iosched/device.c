/*
 * device.c -- the disk model (iosched.h: ios_disk_*) and the scheduler's
 * emulated device built on it: when a transfer started now would complete
 * on a modelled disk, so that scheduling choices show the way they did on
 * the seed's 2004 disks, reproducibly, on fast virtual storage.  pgdisk
 * (disk/) holds the requests of a real block device back by the same model.
 *
 * What must stay true: the model is one piece of arithmetic on a clock the
 * caller gives it, with no clock or thread of its own, so that a virtual
 * clock (tests, trace replay) and the real one (the dispatcher, pgdisk) get
 * the same answers; it starts requests in the order they reach it (the hdd,
 * the ssd and none also complete them in that order; a capped volume's
 * latencies differ, so its completions do not); the hdd's full stroke is
 * calibrated so that random requests across the span average the
 * documented seek_ms; a capped volume never admits more than its buckets
 * hold over any interval (each bucket is exact GCRA arithmetic: a
 * theoretical arrival time per bucket, no rounding of tokens), and its
 * latency draws depend on the seed and the order of requests alone.
 *
 * The emulated device: files sit at spread-out places of a 64 GiB span (by
 * file id), offsets within a file are contiguous.
 */
#include "iosched_i.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TRACK_SWITCH_NS 1e6		   /* a jump to a nearby track, and a cache flush */
#define Z99		2.3263478740408408 /* the standard normal's 99th percentile */
#define GiB		(1ull << 30)

/* A token bucket as GCRA keeps it: the theoretical arrival time tat, at and
 * after which the bucket is full; taking n tokens moves tat on by n times
 * the time one token takes to come back; it holds tau_ns of them.  Exact,
 * with no rounding of tokens, and nothing to do while nothing happens. */
struct bucket {
	double ns_per_token; /* 0: no such bucket */
	double tau_ns;	     /* its depth, in time */
	double tat;	     /* ns on the caller's clock; 0: full from the start */
};

/* A capped volume's state (model cloud and its presets). */
struct cloud {
	struct bucket iops, bytes, credits;
	uint64_t op_bytes;	  /* the accounting's largest operation */
	double lat_mu, lat_sigma; /* log-normal base latency, of ns */
	uint64_t rng;		  /* splitmix64 state, from cloud_seed */
	double spare_z;		  /* Box-Muller gives normals in pairs */
	bool have_spare;
	double refilled; /* credits at which an empty bucket counts as refilled */
	/* runtime data */
	uint64_t prev_start; /* admission is in arrival order */
	int prev_limit;
	uint64_t run_end, run_bytes; /* the last operation: where it ended, its bytes */
	int run_dir;
	size_t depth, nserving;
	uint64_t *serving; /* a min-heap of the completion times of those in service */
};

struct ios_disk {
	/* settings, in the units the arithmetic wants */
	int model; /* enum ios_device_model */
	double ns_per_byte;
	double track_switch_ns; /* TRACK_SWITCH_NS, or seek_ms if that is less */
	double full_stroke_ns;	/* calibrated from seek_ms (ios_disk_create()) */
	double rot_half_ns;
	double track_bytes; /* a shorter jump is a track switch */
	double ssd_latency_ns;
	double span; /* bytes */

	/* runtime data */
	uint64_t busy_until; /* the channel (ssd) or the head (hdd) is free */
	uint64_t head;	     /* byte address after the last transfer */
	struct ios_disk_state st;
	struct cloud *cloud; /* a capped volume, or NULL */
};

static const char *const limit_names[IOS_NLIMIT] = {
    [IOS_LIMIT_NONE] = "none",	     [IOS_LIMIT_BUSY] = "busy",
    [IOS_LIMIT_IOPS] = "iops",	     [IOS_LIMIT_THROUGHPUT] = "throughput",
    [IOS_LIMIT_CREDITS] = "credits",
};

const char *ios_disk_limit_name(enum ios_disk_limit l)
{
	return l >= 0 && l < IOS_NLIMIT ? limit_names[l] : "?";
}

/* mean_sqrt_beyond() -- E[sqrt(D); D >= a]: D is the distance between two
 * points drawn uniformly on [0, 1], whose density is 2 (1 - u), so this is
 * the integral of 2 (1 - u) sqrt(u) from a to 1. */
static double mean_sqrt_beyond(double a)
{
	if (a >= 1)
		return 0;
	return 8.0 / 15 - 4.0 / 3 * pow(a, 1.5) + 4.0 / 5 * pow(a, 2.5);
}

/* ---- capped volumes: presets ------------------------------------------------ */

/* The published figures (docs/pgdisk.md): what a capped volume's cloud_*
 * settings left 0 become.  gp2's caps come from its size (resolve_gp2()). */
struct preset {
	double iops, mib_s, latency_us, p99_us;
	int64_t depth;
};

static const struct preset presets[IOS_NDEVICE] = {
    [IOS_DEVICE_CLOUD] = {3000, 125, 1000, 3000, 64},
    [IOS_DEVICE_GP3] = {3000, 125, 1000, 3000, 64},
    [IOS_DEVICE_GP2] = {0, 0, 1000, 3000, 64},
    [IOS_DEVICE_IO2] = {256000, 4000, 250, 500, 128},
};

#define GP2_IOPS_PER_GIB 3
#define GP2_BASELINE_MIN 100
#define GP2_BASELINE_MAX 16000
#define GP2_BURST_IOPS	 3000
#define GP2_CREDITS	 5.4e6
#define GP2_SMALL_GIB	 170 /* up to this size 128 MiB/s, above 250 */
#define OP_KIB		 256
#define BUCKET_MS	 10

/* set_if_zero() -- *@v = @def when it was left 0. */
static void set_if_zero(double *v, double def)
{
	if (*v == 0)
		*v = def;
}

/* resolve_gp2() -- a gp2 volume of @gib: baseline 3 IOPS per GiB within
 * [100, 16000]; below 3,000 a burst to 3,000 on 5.4 million credits. */
static void resolve_gp2(struct ios_settings *set, int64_t gib)
{
	double base = (double)gib * GP2_IOPS_PER_GIB;

	base = base < GP2_BASELINE_MIN	 ? GP2_BASELINE_MIN
	       : base > GP2_BASELINE_MAX ? GP2_BASELINE_MAX
					 : base;
	if (base < GP2_BURST_IOPS) {
		set_if_zero(&set->cloud_iops, GP2_BURST_IOPS);
		set_if_zero(&set->cloud_baseline_iops, base);
		set_if_zero(&set->cloud_credits, GP2_CREDITS);
	} else {
		set_if_zero(&set->cloud_iops, base);
	}
	set_if_zero(&set->cloud_mib_s, gib <= GP2_SMALL_GIB ? 128 : 250);
}

int ios_disk_resolve(struct ios_settings *set, uint64_t span_bytes, char *err, size_t errlen)
{
	const struct preset *p;

	if (!ios_model_is_cloud(set->device_model))
		return 0;
	p = &presets[set->device_model];
	if (set->cloud_volume_gib == 0 && span_bytes)
		set->cloud_volume_gib = span_bytes >= GiB ? (int64_t)(span_bytes / GiB) : 1;
	if (set->device_model == IOS_DEVICE_GP2 && set->cloud_volume_gib == 0) {
		snprintf(err, errlen,
			 "device.model gp2 takes its caps from the volume's size: there is no disk "
			 "to take it from, so give it (gp2:SIZE, or device.cloud_volume_gib)");
		return -EINVAL;
	}
	if (set->device_model == IOS_DEVICE_GP2)
		resolve_gp2(set, set->cloud_volume_gib);
	set_if_zero(&set->cloud_iops, p->iops);
	set_if_zero(&set->cloud_mib_s, p->mib_s);
	if (set->cloud_latency_p99_us == 0)
		set->cloud_latency_p99_us = set->cloud_latency_us == 0
						? p->p99_us
						: set->cloud_latency_us * p->p99_us / p->latency_us;
	set_if_zero(&set->cloud_latency_us, p->latency_us);
	if (set->cloud_depth == 0)
		set->cloud_depth = p->depth;
	if (set->cloud_op_kib == 0)
		set->cloud_op_kib = OP_KIB;
	set_if_zero(&set->cloud_bucket_ms, BUCKET_MS);
	if (set->cloud_latency_p99_us < set->cloud_latency_us) {
		snprintf(err, errlen,
			 "device.cloud_latency_p99_us (%g us) is below the median, "
			 "device.cloud_latency_us (%g us)",
			 set->cloud_latency_p99_us, set->cloud_latency_us);
		return -EINVAL;
	}
	if ((set->cloud_credits > 0) != (set->cloud_baseline_iops > 0)) {
		snprintf(err, errlen,
			 "device.cloud_credits (%g) and device.cloud_baseline_iops (%g) go "
			 "together: a credit bucket and the rate its credits are earned at",
			 set->cloud_credits, set->cloud_baseline_iops);
		return -EINVAL;
	}
	if (set->cloud_baseline_iops > set->cloud_iops) {
		snprintf(err, errlen,
			 "device.cloud_baseline_iops (%g) is above device.cloud_iops (%g): the "
			 "burst the credits pay for would be below the baseline",
			 set->cloud_baseline_iops, set->cloud_iops);
		return -EINVAL;
	}
	return 0;
}

/* ---- capped volumes: the model ---------------------------------------------- */

static void bucket_init(struct bucket *b, double per_s, double depth_tokens)
{
	b->ns_per_token = per_s > 0 ? 1e9 / per_s : 0;
	b->tau_ns = depth_tokens * b->ns_per_token;
	b->tat = 0;
}

/* bucket_ready() -- the earliest time from @t at which @b admits @n tokens:
 * when it holds them, or when it is full for more than it can hold. */
static double bucket_ready(const struct bucket *b, double n, double t)
{
	double cost = n * b->ns_per_token, r;

	if (b->ns_per_token == 0 || n <= 0)
		return t;
	r = b->tat - b->tau_ns + (cost < b->tau_ns ? cost : b->tau_ns);
	return r > t + 0.5 ? r : t; /* not for the rounding of a double */
}

/* bucket_take() -- @n tokens leave @b at @t. */
static void bucket_take(struct bucket *b, double n, double t)
{
	if (b->ns_per_token > 0 && n > 0)
		b->tat = (b->tat > t ? b->tat : t) + n * b->ns_per_token;
}

/* bucket_level() -- the tokens @b holds at @t (negative: owed). */
static double bucket_level(const struct bucket *b, double t)
{
	if (b->ns_per_token == 0)
		return 0;
	return (b->tau_ns - (b->tat > t ? b->tat - t : 0)) / b->ns_per_token;
}

static struct cloud *cloud_create(const struct ios_settings *set)
{
	struct cloud *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->depth = (size_t)set->cloud_depth;
	c->serving = calloc(c->depth, sizeof(*c->serving));
	if (!c->serving) {
		free(c);
		return NULL;
	}
	bucket_init(&c->iops, set->cloud_iops, set->cloud_iops * set->cloud_bucket_ms / 1e3);
	bucket_init(&c->bytes, set->cloud_mib_s * 1048576,
		    set->cloud_mib_s * 1048576 * set->cloud_bucket_ms / 1e3);
	bucket_init(&c->credits, set->cloud_baseline_iops, set->cloud_credits);
	c->refilled = set->cloud_credits / 100;
	c->op_bytes = (uint64_t)set->cloud_op_kib << 10;
	c->lat_mu = log(set->cloud_latency_us * 1e3);
	c->lat_sigma = log(set->cloud_latency_p99_us / set->cloud_latency_us) / Z99;
	c->rng = (uint64_t)set->cloud_seed;
	return c;
}

static void cloud_destroy(struct cloud *c)
{
	if (c)
		free(c->serving);
	free(c);
}

/* heap_pop() / heap_push() -- the min-heap of completion times. */
static void heap_pop(struct cloud *c)
{
	size_t i = 0, n = --c->nserving;
	uint64_t last = c->serving[n];

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && c->serving[k + 1] < c->serving[k])
			k++;
		if (last <= c->serving[k])
			break;
		c->serving[i] = c->serving[k];
		i = k;
	}
	if (n)
		c->serving[i] = last;
}

static void heap_push(struct cloud *c, uint64_t v)
{
	size_t i = c->nserving++;

	while (i > 0 && c->serving[(i - 1) / 2] > v) {
		c->serving[i] = c->serving[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->serving[i] = v;
}

/* finish_until() -- those in service that are done by @t leave it. */
static void finish_until(struct cloud *c, uint64_t t)
{
	while (c->nserving && c->serving[0] <= t)
		heap_pop(c);
}

/* count_ops() -- the operations a request counts as (EBS's rule): 0 when
 * it continues the last operation in the same direction and still fits in
 * it, else one per op_bytes begun (a request of no bytes: one). */
static uint32_t count_ops(struct cloud *c, uint64_t addr, uint64_t len, enum ios_dir dir)
{
	uint64_t n;

	if (dir == IOS_SYNC)
		return 0;
	if (c->run_bytes && (int)dir == c->run_dir && addr == c->run_end &&
	    c->run_bytes + len <= c->op_bytes) {
		c->run_bytes += len;
		c->run_end += len;
		return 0;
	}
	n = len ? (len + c->op_bytes - 1) / c->op_bytes : 1;
	c->run_dir = (int)dir;
	c->run_end = addr + len;
	c->run_bytes = len - (n - 1) * c->op_bytes;
	return (uint32_t)n;
}

/* std_normal() -- the next standard normal of the seeded sequence
 * (Box-Muller on splitmix64). */
static double std_normal(struct cloud *c)
{
	double u1, u2, r;

	if (c->have_spare) {
		c->have_spare = false;
		return c->spare_z;
	}
	u1 = (double)((ios_splitmix64(&c->rng) >> 11) + 1) * 0x1p-53; /* (0, 1] */
	u2 = (double)(ios_splitmix64(&c->rng) >> 11) * 0x1p-53;
	r = sqrt(-2 * log(u1));
	c->spare_z = r * sin(2 * M_PI * u2);
	c->have_spare = true;
	return r * cos(2 * M_PI * u2);
}

/* cloud_serve() -- admit a request in its turn, when a place in service and
 * every bucket allow it; then its latency. */
static void cloud_serve(struct ios_disk *d, uint64_t addr, uint64_t len, enum ios_dir dir,
			uint64_t now, struct ios_disk_time *t)
{
	struct cloud *c = d->cloud;
	uint64_t t0 = now > c->prev_start ? now : c->prev_start, start;
	double ops, bytes = dir == IOS_SYNC ? 0 : (double)len, at[IOS_NLIMIT], latest, other;
	int limit = t0 > now ? c->prev_limit : IOS_LIMIT_NONE, l;

	t->ops = count_ops(c, addr, len, dir);
	ops = t->ops;
	finish_until(c, t0);
	at[IOS_LIMIT_NONE] = (double)t0;
	at[IOS_LIMIT_BUSY] = c->nserving < c->depth ? (double)t0 : (double)c->serving[0];
	at[IOS_LIMIT_IOPS] = bucket_ready(&c->iops, ops, (double)t0);
	at[IOS_LIMIT_THROUGHPUT] = bucket_ready(&c->bytes, bytes, (double)t0);
	at[IOS_LIMIT_CREDITS] = bucket_ready(&c->credits, ops, (double)t0);
	/* the latest wins; a tie goes to the later in the list (credits over
	 * the IOPS cap they pay for) */
	latest = (double)t0;
	other = (double)t0;
	for (l = IOS_LIMIT_BUSY; l < IOS_NLIMIT; l++) {
		if (l != IOS_LIMIT_CREDITS && at[l] > other)
			other = at[l];
		if (at[l] > (double)t0 && at[l] >= latest) {
			latest = at[l];
			limit = l;
		}
	}
	start = (uint64_t)ceil(latest);
	/* the credit bucket ran out, or holds enough again */
	if (limit == IOS_LIMIT_CREDITS && at[IOS_LIMIT_CREDITS] > other && !d->st.credits_empty) {
		d->st.credits_empty = true;
		d->st.credits_outs++;
		d->st.credits_last_out_ns = (uint64_t)other;
		if (!d->st.credits_first_out_ns)
			d->st.credits_first_out_ns = (uint64_t)other;
	} else if (d->st.credits_empty && bucket_level(&c->credits, (double)start) >= c->refilled) {
		d->st.credits_empty = false;
	}
	finish_until(c, start);
	bucket_take(&c->iops, ops, (double)start);
	bucket_take(&c->bytes, bytes, (double)start);
	bucket_take(&c->credits, ops, (double)start);
	t->latency_ns =
	    (uint64_t)exp(c->lat_mu + (c->lat_sigma > 0 ? c->lat_sigma * std_normal(c) : 0));
	t->start_ns = start;
	t->done_ns = start + t->latency_ns;
	t->limit = limit;
	t->iops_tokens = bucket_level(&c->iops, (double)start);
	t->bytes_tokens = bucket_level(&c->bytes, (double)start);
	t->credits = bucket_level(&c->credits, (double)start);
	heap_push(c, t->done_ns);
	if (c->nserving > d->st.in_service_max)
		d->st.in_service_max = c->nserving;
	c->prev_start = start;
	c->prev_limit = limit;
	d->st.ops += t->ops;
	d->st.merged += dir != IOS_SYNC && t->ops == 0;
	d->st.bytes += (uint64_t)bytes;
}

/* ---- every model ------------------------------------------------------------ */

/* ios_disk_create() -- see iosched.h.  The mean seek between uniformly
 * random addresses is ts + (full - ts) * mean_sqrt_beyond(track / span) (a
 * shorter jump costs ts alone): solve it for the full stroke. */
struct ios_disk *ios_disk_create(const struct ios_settings *set_in, uint64_t span_bytes)
{
	struct ios_settings set = *set_in;
	double seek = set.seek_ms * 1e6, k;
	char why[256];
	struct ios_disk *d;

	if (span_bytes == 0 || set.device_model < IOS_DEVICE_NONE ||
	    set.device_model >= IOS_NDEVICE || set.seq_mb_s <= 0 || set.rpm <= 0 ||
	    ios_disk_resolve(&set, span_bytes, why, sizeof(why)) < 0) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->model = set.device_model;
	if (ios_model_is_cloud(d->model) && !(d->cloud = cloud_create(&set))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->ns_per_byte = 1e9 / (set.seq_mb_s * 1e6);
	d->track_switch_ns = seek < TRACK_SWITCH_NS ? seek : TRACK_SWITCH_NS;
	d->rot_half_ns = 60e9 / (double)set.rpm / 2;
	d->track_bytes = set.track_kb * 1024;
	d->ssd_latency_ns = set.ssd_latency_us * 1e3;
	d->span = (double)span_bytes;
	k = mean_sqrt_beyond(d->track_bytes / d->span);
	d->full_stroke_ns = d->track_switch_ns;
	if (k > 0)
		d->full_stroke_ns += (seek - d->track_switch_ns) / k;
	return d;
}

void ios_disk_destroy(struct ios_disk *d)
{
	if (d)
		cloud_destroy(d->cloud);
	free(d);
}

uint64_t ios_disk_full_stroke_ns(const struct ios_disk *d)
{
	return d->model == IOS_DEVICE_HDD ? (uint64_t)d->full_stroke_ns : 0;
}

/* hdd_move() -- seek and rotation from the head to @to. */
static void hdd_move(const struct ios_disk *d, uint64_t to, struct ios_disk_time *t)
{
	uint64_t dist = to > d->head ? to - d->head : d->head - to;
	double x = (double)dist / d->span;

	if (dist == 0)
		return;
	if ((double)dist < d->track_bytes) {
		t->seek_ns = (uint64_t)d->track_switch_ns;
		return;
	}
	if (x > 1)
		x = 1;
	t->seek_ns =
	    (uint64_t)(d->track_switch_ns + (d->full_stroke_ns - d->track_switch_ns) * sqrt(x));
	t->rotation_ns = (uint64_t)d->rot_half_ns;
}

uint64_t ios_disk_serve(struct ios_disk *d, uint64_t addr, uint64_t len, enum ios_dir dir,
			uint64_t now_ns, struct ios_disk_time *t)
{
	struct ios_disk_time tt = {0};

	tt.start_ns = now_ns > d->busy_until ? now_ns : d->busy_until;
	if (dir != IOS_SYNC && d->model != IOS_DEVICE_NONE && !d->cloud)
		tt.transfer_ns = (uint64_t)(d->ns_per_byte * (double)len);
	switch (d->model) {
	case IOS_DEVICE_HDD:
		if (dir == IOS_SYNC) {
			tt.latency_ns = (uint64_t)d->track_switch_ns;
		} else {
			hdd_move(d, addr, &tt);
			d->head = addr + len;
		}
		tt.done_ns =
		    tt.start_ns + tt.seek_ns + tt.rotation_ns + tt.transfer_ns + tt.latency_ns;
		d->busy_until = tt.done_ns;
		break;
	case IOS_DEVICE_SSD:
		/* the channel is busy for the transfer; latencies overlap */
		d->busy_until = tt.start_ns + tt.transfer_ns;
		tt.latency_ns = (uint64_t)d->ssd_latency_ns;
		tt.done_ns = d->busy_until + tt.latency_ns;
		break;
	case IOS_DEVICE_NONE: /* no time at all */
		tt.start_ns = now_ns;
		tt.done_ns = now_ns;
		break;
	default:
		cloud_serve(d, addr, len, dir, now_ns, &tt);
		break;
	}
	if (!d->cloud && tt.start_ns > now_ns)
		tt.limit = IOS_LIMIT_BUSY;
	d->st.requests++;
	d->st.held[tt.limit]++;
	d->st.held_ns[tt.limit] += tt.start_ns - now_ns;
	if (t)
		*t = tt;
	return tt.done_ns;
}

void ios_disk_state(const struct ios_disk *d, uint64_t now_ns, struct ios_disk_state *out)
{
	const struct cloud *c = d->cloud;
	size_t i;

	*out = d->st;
	if (!c)
		return;
	out->iops_tokens = bucket_level(&c->iops, (double)now_ns);
	out->bytes_tokens = bucket_level(&c->bytes, (double)now_ns);
	out->credits = bucket_level(&c->credits, (double)now_ns);
	out->in_service = 0;
	for (i = 0; i < c->nserving; i++)
		out->in_service += c->serving[i] > now_ns;
}

/* ---- the scheduler's emulated device ---------------------------------------- */

#define SPAN_BYTES (64ull << 30)

int ios_device_check(const struct ios_settings *set, char *err, size_t errlen)
{
	struct ios_settings copy = *set;

	return ios_disk_resolve(&copy, SPAN_BYTES, err, errlen);
}

struct ios_disk *ios_device_create(const struct ios_settings *set)
{
	return ios_disk_create(set, SPAN_BYTES);
}

void ios_device_destroy(struct ios_disk *dev)
{
	ios_disk_destroy(dev);
}

/* address() -- where a file's byte lies on the emulated disk: files start
 * at spread-out places in the first half of the span. */
static uint64_t address(struct ios_file_id fid, off_t off)
{
	uint64_t base = ios_fid_mix(fid) % (SPAN_BYTES / 2);

	return base + (uint64_t)off;
}

uint64_t ios_device_service(struct ios_disk *dev, const struct ios_rq *rq, uint64_t now)
{
	return ios_disk_serve(dev, address(rq->req->fid, rq->off), rq->len, rq->req->dir, now,
			      NULL);
}
