/*
 * trace_gen.h -- deterministic trace records for test_trace.c and
 * helper_trace.c: record @i of stream @seed, and a comparison.
 */
#ifndef PGIOFS_TESTS_TRACE_GEN_H
#define PGIOFS_TESTS_TRACE_GEN_H

#include <stdint.h>
#include <string.h>

#include "iosched.h"

static inline void gen_rec(uint64_t seed, uint64_t i, struct ios_trace_rec *r)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;

	x ^= x >> 29;
	memset(r, 0, sizeof(*r));
	r->time_ns = 1000000000ull + i * 1000 + (x & 511);
	r->dev = 0x800 + (x >> 50) % 3; /* 8:0 .. 8:2 */
	r->ino = 16384 + (x >> 9) % 23;
	r->off = ((x >> 17) % 131072) * 8192;
	r->len = 8192u << (i % 3);
	r->pid = (uint32_t)(1000 + seed % 7);
	r->queue_us = (uint32_t)(i % 100);
	r->service_us = (uint32_t)((x >> 40) % 5000);
	r->result = i % 1000 == 999 ? -5 : (int32_t)r->len;
	r->cls = (uint8_t)(i % IOS_NCLASS);
	r->dir = (uint8_t)(i % IOS_NDIR);
	r->flags = r->dir == IOS_SYNC && (x & 1) ? IOS_TRACE_F_DATASYNC : 0;
}

static inline int rec_equal(const struct ios_trace_rec *a, const struct ios_trace_rec *b)
{
	return a->time_ns == b->time_ns && a->dev == b->dev && a->ino == b->ino &&
	       a->off == b->off && a->len == b->len && a->pid == b->pid &&
	       a->queue_us == b->queue_us && a->service_us == b->service_us &&
	       a->result == b->result && a->cls == b->cls && a->dir == b->dir &&
	       a->flags == b->flags;
}

#endif
