/*
 * replay.c -- replay a recorded trace through a scheduler on the virtual
 * clock, so that scheduler profiles and device models can be compared on
 * one recording, reproducibly.
 *
 * A trace holds its records in completion order (they are written when a
 * request completes); a replay needs them in arrival order, so the records
 * are read into memory (56 bytes each) and sorted by arrival time, ties in
 * file order.  Each is then submitted at its recorded arrival time, relative
 * to the first, to a virtual-clock scheduler (ios_create_virtual()) whose
 * requests carry IOS_F_NOEXEC: the back end executes nothing and the
 * emulated device alone decides how long a transfer takes.  The core keeps
 * its ordering rules (a sync waits for the writes to its file that arrived
 * before it; overlapping writes stay in order), keyed by the recorded file
 * identity (device and inode; a version 1 trace has device 0).
 *
 * What must stay true: nothing here reads a real clock or depends on thread
 * timing, so the same trace and settings give the same statistics, bit for
 * bit; a damaged trace replays every record decoded before the damage and
 * then reports the reader's error.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct replay_rec {
	struct ios_trace_rec r;
	uint64_t seq; /* position in the file: the tie-break */
};

static int by_arrival(const void *pa, const void *pb)
{
	const struct replay_rec *a = pa, *b = pb;

	if (a->r.time_ns != b->r.time_ns)
		return a->r.time_ns < b->r.time_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void replay_done(struct ios_req *req, ssize_t res)
{
	(void)res;
	free(req);
}

/* read_all_records() -- every decodable record of @r into *@out (sorted by
 * arrival); their number, or -ENOMEM.  *@err gets the reader's verdict. */
static int64_t read_all_records(struct ios_trace_reader *r, struct replay_rec **out, int *err)
{
	struct replay_rec *v = NULL;
	size_t n = 0, cap = 0;
	int ret;

	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 4096;
			struct replay_rec *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		ret = ios_trace_read(r, &v[n].r);
		if (ret <= 0)
			break;
		v[n].seq = n;
		n++;
	}
	*err = ret;
	qsort(v, n, sizeof(*v), by_arrival);
	*out = v;
	return (int64_t)n;
}

/* drain() -- run @s until every request has completed. */
static void drain(struct ios_sched *s)
{
	ios_virtual_advance(s, s->vclock);
	while (!ios_core_idle(s)) {
		uint64_t t = ios_core_next_event(s);

		if (t == UINT64_MAX) /* cannot happen: something is queued */
			break;
		ios_virtual_advance(s, t > s->vclock ? t : s->vclock + 1);
	}
}

int64_t ios_trace_replay(struct ios_trace_reader *r, const struct ios_settings *set,
			 struct ios_stats *st, uint64_t *span_ns, int *err)
{
	struct replay_rec *v = NULL;
	struct ios_sched *s;
	int64_t n, i;
	uint64_t base;

	*err = 0;
	*span_ns = 0;
	n = read_all_records(r, &v, err);
	if (n < 0)
		return n;
	s = ios_create_virtual(set);
	if (!s) {
		free(v);
		return -errno;
	}
	ios_attach_stats(s, st);
	base = n ? v[0].r.time_ns : 0;
	for (i = 0; i < n; i++) {
		const struct ios_trace_rec *t = &v[i].r;
		struct ios_req *req = calloc(1, sizeof(*req));

		if (!req) {
			drain(s);
			ios_destroy(s);
			free(v);
			return -ENOMEM;
		}
		ios_virtual_advance(s, t->time_ns - base);
		req->fd = -1;
		req->fid = (struct ios_file_id){t->dev, t->ino};
		req->cls = t->cls < IOS_NCLASS ? (enum ios_class)t->cls : IOS_CLASS_OTHER;
		req->dir = t->dir < IOS_NDIR ? (enum ios_dir)t->dir : IOS_READ;
		/* nothing to execute: see ios_create_virtual() */
		req->flags =
		    IOS_F_NOEXEC | ((t->flags & IOS_TRACE_F_DATASYNC) ? IOS_F_DATASYNC : 0);
		req->off = req->dir == IOS_SYNC ? 0 : (off_t)t->off;
		req->len = req->dir == IOS_SYNC ? 0 : t->len;
		req->pid = (pid_t)t->pid;
		req->done = replay_done;
		ios_submit(s, req);
	}
	drain(s);
	*span_ns = s->vclock;
	ios_destroy(s);
	free(v);
	return n;
}
