/*
 * pol_elevator24.c -- the Linux 2.4 elevators: elevator-2.4 (2.4.20's
 * elevator_linus) and elevator-2.4-aa (the same queue throttled by bytes in
 * flight, as in the 2.4-aa low-latency elevator).
 *
 * One queue, reads and writes together, in position order (file, offset)
 * as a one-way sweep: a new request is inserted where it fits between two
 * neighbours (bh_rq_in_between(): between them, or at the wrap point where
 * the sweep starts over), scanning from the tail towards the head.  Every
 * queued request carries a passover budget, read_passover for reads and
 * write_passover for writes (elevator_sequence in 2.4); each request
 * inserted in front of it takes one from it, and once it is 0 the scan stops
 * there: nothing may be put in front of it any more, later requests go
 * behind it.  Dispatch is from the head; there are no deadlines, the budget
 * is the only bound on waiting.
 *
 * What must stay true:
 *   - a request is passed over at most its budget times (inserted in front
 *     of it: the scan checks the budget of every request it walks past);
 *   - nothing is ever inserted in front of the first queued request (2.4
 *     scans back to the head but never inserts before it);
 *   - elevator-2.4-aa: bytes in flight never exceed max_inflight_kb through
 *     a request this policy chose (the bound counts the merge the core will
 *     make), and once the limit was reached nothing is chosen until the
 *     bytes in flight have fallen to half of it (a batch of half).
 *
 * Differences from 2.4.20: merges are made by the core at dispatch, not at
 * insertion, so they cost no budget.  2.4.20 charged a seeky insertion
 * ELV_LINUS_SEEK_COST (16) against budgets of 2048 (reads) and 8192
 * (writes), i.e. 128 and 512 passes; the -aa tree and 2.4.22 set the cost
 * to 1 with budgets of 128 and 512.  Here every insertion in front costs 1,
 * so read_passover and write_passover count passes (128 and 512 reproduce
 * both kernels' behaviour).  In 2.4-aa the submitting processes slept in
 * get_request_wait() while the queue held more than MAX_QUEUE_SECTORS;
 * pgiofs never blocks a submitter, so the same throttle is applied to
 * dispatch.  Requests the core dispatches from its ready list (parked
 * behind an overlapping write) bypass the policy: only the core's own
 * check, made before merging, applies to them.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>

struct elv24 {
	/* runtime data */
	struct ios_list queue; /* pol[0]; rq->pol_queue is the passover budget */
	bool refilling;	       /* 2.4-aa: limit reached, wait for half */
	/* tunables */
	int budget[2];	     /* [0] reads, [1] writes */
	size_t limit;	     /* 2.4-aa: bytes in flight at most (0: none) */
	size_t max_transfer; /* max_request_kb in bytes */
	bool front_merges;
};

static struct ios_rq *q_entry(struct ios_list *p)
{
	return ios_container_of(p, struct ios_rq, pol[0]);
}

static int elv_init_common(struct ios_sched *s, bool throttle)
{
	struct elv24 *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	ios_list_init(&e->queue);
	e->budget[0] = (int)s->set.read_passover;
	e->budget[1] = (int)s->set.write_passover;
	e->limit = throttle ? (size_t)s->set.max_inflight_kb * 1024 : 0;
	e->max_transfer = (size_t)s->set.max_request_kb * 1024;
	e->front_merges = s->set.front_merges;
	s->pol = e;
	return 0;
}

static int elv_init(struct ios_sched *s)
{
	return elv_init_common(s, false);
}

static int elv_aa_init(struct ios_sched *s)
{
	return elv_init_common(s, true);
}

static void elv_exit(struct ios_sched *s)
{
	free(s->pol);
	s->pol = NULL;
}

/* in_between() -- whether @rq belongs right after @at (bh_rq_in_between()):
 * strictly between @at and its successor, or, where the sweep wraps (the
 * successor sorts before @at), beyond @at or before the successor.  Never
 * after the tail: that is where a request goes when no place is found. */
static bool in_between(const struct elv24 *e, const struct ios_rq *rq, struct ios_rq *at)
{
	struct ios_rq *next;

	if (at->pol[0].next == &e->queue)
		return false;
	next = q_entry(at->pol[0].next);
	if (ios_rq_before(at, rq) && ios_rq_before(rq, next))
		return true;
	if (ios_rq_before(at, next))
		return false; /* ordered, and @rq is not between them */
	return ios_rq_before(at, rq) || ios_rq_before(rq, next);
}

/* elv_add() -- elevator_linus_merge() without the merging: scan from the
 * tail for the place of @rq, stopping at a request whose budget is spent;
 * charge one pass to every request @rq was put in front of. */
static void elv_add(struct ios_sched *s, struct ios_rq *rq)
{
	struct elv24 *e = s->pol;
	struct ios_list *p, *at = e->queue.prev;

	rq->pol_queue = e->budget[rq->req->dir != IOS_READ];
	for (p = e->queue.prev; p != &e->queue; p = p->prev) {
		struct ios_rq *o = q_entry(p);

		if (o->pol_queue <= 0)
			break; /* may not be passed any more: go to the tail */
		if (in_between(e, rq, o)) {
			at = p;
			break;
		}
	}
	ios_list_insert_after(at, &rq->pol[0]);
	for (p = rq->pol[0].next; p != &e->queue; p = p->next)
		q_entry(p)->pol_queue--;
}

static void elv_remove(struct ios_sched *s, struct ios_rq *rq)
{
	(void)s;
	ios_list_del(&rq->pol[0]);
}

/* transfer_bound() -- the most the core can make of @rq's transfer: @rq
 * plus the queued requests of the same direction and descriptor that are
 * contiguous with it on its file (behind it, and in front with
 * front_merges), at most max_request_kb.  The core merges a subset of
 * these, so the bound is never too small. */
static size_t transfer_bound(const struct elv24 *e, const struct ios_rq *rq)
{
	const struct ios_list *h = &rq->file->queued, *p;
	size_t n = rq->len;
	off_t end = rq->off + (off_t)rq->len, start = rq->off;

	for (p = rq->fnode.next; p != h && n < e->max_transfer; p = p->next) {
		const struct ios_rq *c = ios_container_of(p, struct ios_rq, fnode);

		if (c->off < end)
			continue; /* overlapping or equal offset: not mergeable */
		if (c->off > end || c->req->dir != rq->req->dir || c->req->fd != rq->req->fd)
			break;
		n += c->len;
		end += (off_t)c->len;
	}
	/* in front: what the core's front merge would find, repeatedly */
	while (e->front_merges && n < e->max_transfer) {
		const struct ios_rq *found = NULL;

		for (p = h->next; p != h; p = p->next) {
			const struct ios_rq *c = ios_container_of(p, struct ios_rq, fnode);

			if (c->off >= start)
				break;
			if (c->off + (off_t)c->len == start && c->req->dir == rq->req->dir &&
			    c->req->fd == rq->req->fd) {
				found = c;
				break;
			}
		}
		if (!found)
			break;
		n += found->len;
		start = found->off;
	}
	return n < e->max_transfer ? n : e->max_transfer > rq->len ? e->max_transfer : rq->len;
}

static struct ios_rq *elv_next(struct ios_sched *s, uint64_t now)
{
	struct elv24 *e = s->pol;
	struct ios_rq *rq;

	(void)now;
	if (ios_list_empty(&e->queue))
		return NULL;
	rq = q_entry(e->queue.next);
	if (!e->limit)
		return rq;
	/* 2.4-aa: once full, refill only after half of the bytes came back */
	if (e->refilling) {
		if (s->bytes_inflight > e->limit / 2)
			return NULL;
		e->refilling = false;
	}
	if (s->nr_inflight > 0 && s->bytes_inflight + transfer_bound(e, rq) > e->limit) {
		e->refilling = true;
		return NULL;
	}
	return rq;
}

static void elv_completed(struct ios_sched *s, struct ios_rq *rq, uint64_t now)
{
	(void)s;
	(void)rq;
	(void)now;
}

const struct ios_policy_ops ios_policy_elevator24 = {
    .name = "elevator-2.4",
    .init = elv_init,
    .exit = elv_exit,
    .add = elv_add,
    .remove = elv_remove,
    .next = elv_next,
    .completed = elv_completed,
};

const struct ios_policy_ops ios_policy_elevator24aa = {
    .name = "elevator-2.4-aa",
    .init = elv_aa_init,
    .exit = elv_exit,
    .add = elv_add,
    .remove = elv_remove,
    .next = elv_next,
    .completed = elv_completed,
};
