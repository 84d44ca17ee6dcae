/*
 * device.c -- the emulated disk: when a transfer started now would complete
 * on a modelled device, so that scheduling choices show the way they did on
 * the seed's 2004 disks, reproducibly, on fast virtual storage.
 *
 * hdd: one head.  A transfer waits for the head, seeks from where the last
 * one ended (no cost when it continues sequentially; a track switch for a
 * short jump; otherwise track switch + (full stroke - track switch) *
 * sqrt(distance / span), with the full stroke twice the average seek, plus
 * half a revolution of rotational latency), then transfers at seq_mb_s.
 * Files sit at spread-out places of a 64 GiB span (by file id), offsets
 * within a file are contiguous.  A sync costs one track switch (a cache
 * flush) without moving the head.
 *
 * ssd: a fixed per-request latency plus transfer time; transfers share one
 * channel (bandwidth) but their latencies overlap.
 */
#include "iosched_i.h"

#include <math.h>
#include <stdlib.h>

#define SPAN_BYTES	(64ull << 30)
#define TRACK_SWITCH_NS 1000000ull

struct ios_device {
	int model;
	double ns_per_byte;
	double full_stroke_ns, rot_half_ns, track_bytes, ssd_latency_ns;
	uint64_t busy_until;
	uint64_t head; /* byte address after the last transfer */
};

struct ios_device *ios_device_create(const struct ios_settings *set)
{
	struct ios_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->model = set->device_model;
	d->ns_per_byte = 1e9 / (set->seq_mb_s * 1e6);
	d->full_stroke_ns = 2 * set->seek_ms * 1e6;
	d->rot_half_ns = 60e9 / (double)set->rpm / 2;
	d->track_bytes = set->track_kb * 1024;
	d->ssd_latency_ns = set->ssd_latency_us * 1e3;
	return d;
}

void ios_device_destroy(struct ios_device *d)
{
	free(d);
}

static uint64_t address(struct ios_file_id fid, off_t off)
{
	uint64_t base = ios_fid_mix(fid) % (SPAN_BYTES / 2);

	return base + (uint64_t)off;
}

uint64_t ios_device_service(struct ios_device *d, const struct ios_rq *rq, uint64_t now)
{
	uint64_t start = now > d->busy_until ? now : d->busy_until;
	double xfer = d->ns_per_byte * (double)rq->len, cost;

	if (d->model == IOS_DEVICE_SSD) {
		d->busy_until = start + (uint64_t)xfer;
		return start + (uint64_t)(d->ssd_latency_ns + xfer);
	}
	if (rq->req->dir == IOS_SYNC) {
		cost = TRACK_SWITCH_NS;
	} else {
		uint64_t to = address(rq->req->fid, rq->off);
		uint64_t dist = to > d->head ? to - d->head : d->head - to;

		if (dist == 0)
			cost = 0;
		else if ((double)dist < d->track_bytes)
			cost = TRACK_SWITCH_NS;
		else
			cost = TRACK_SWITCH_NS +
			       (d->full_stroke_ns - TRACK_SWITCH_NS) *
				   sqrt((double)dist / (double)SPAN_BYTES) +
			       d->rot_half_ns;
		cost += xfer;
		d->head = to + rq->len;
	}
	d->busy_until = start + (uint64_t)cost;
	return d->busy_until;
}
