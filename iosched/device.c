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
 * the same answers; it serves requests in the order they reach it and
 * completes them in that order; the hdd's full stroke is calibrated so that
 * random requests across the span average the documented seek_ms.
 *
 * The emulated device: files sit at spread-out places of a 64 GiB span (by
 * file id), offsets within a file are contiguous.
 */
#include "iosched_i.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define TRACK_SWITCH_NS 1e6 /* a jump to a nearby track, and a cache flush */

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
};

/* mean_sqrt_beyond() -- E[sqrt(D); D >= a]: D is the distance between two
 * points drawn uniformly on [0, 1], whose density is 2 (1 - u), so this is
 * the integral of 2 (1 - u) sqrt(u) from a to 1. */
static double mean_sqrt_beyond(double a)
{
	if (a >= 1)
		return 0;
	return 8.0 / 15 - 4.0 / 3 * pow(a, 1.5) + 4.0 / 5 * pow(a, 2.5);
}

/* ios_disk_create() -- see iosched.h.  The mean seek between uniformly
 * random addresses is ts + (full - ts) * mean_sqrt_beyond(track / span) (a
 * shorter jump costs ts alone): solve it for the full stroke. */
struct ios_disk *ios_disk_create(const struct ios_settings *set, uint64_t span_bytes)
{
	double seek = set->seek_ms * 1e6, k;
	struct ios_disk *d;

	if (span_bytes == 0 || set->device_model < IOS_DEVICE_NONE ||
	    set->device_model > IOS_DEVICE_SSD || set->seq_mb_s <= 0 || set->rpm <= 0) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->model = set->device_model;
	d->ns_per_byte = 1e9 / (set->seq_mb_s * 1e6);
	d->track_switch_ns = seek < TRACK_SWITCH_NS ? seek : TRACK_SWITCH_NS;
	d->rot_half_ns = 60e9 / (double)set->rpm / 2;
	d->track_bytes = set->track_kb * 1024;
	d->ssd_latency_ns = set->ssd_latency_us * 1e3;
	d->span = (double)span_bytes;
	k = mean_sqrt_beyond(d->track_bytes / d->span);
	d->full_stroke_ns = d->track_switch_ns;
	if (k > 0)
		d->full_stroke_ns += (seek - d->track_switch_ns) / k;
	return d;
}

void ios_disk_destroy(struct ios_disk *d)
{
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
	if (dir != IOS_SYNC)
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
	default: /* none: no time at all */
		tt.start_ns = now_ns;
		tt.transfer_ns = 0;
		tt.done_ns = now_ns;
		break;
	}
	if (t)
		*t = tt;
	return tt.done_ns;
}

/* ---- the scheduler's emulated device ---------------------------------------- */

#define SPAN_BYTES (64ull << 30)

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
