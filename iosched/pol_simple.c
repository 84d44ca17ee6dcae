/*
 * pol_simple.c -- the noop and deadline-2.6 policies, and the sorted-queue
 * helpers the elevators share.
 *
 * noop: one FIFO; the core still merges adjacent requests at dispatch.
 *
 * deadline-2.6 (after Linux mq-deadline): per direction a list sorted by
 * position (file, offset) and a FIFO with deadlines (read_expire,
 * write_expire).  Requests go in batches of up to fifo_batch in position
 * order; between batches the direction is chosen (reads unless writes have
 * been starved writes_starved times) and, if the FIFO head of that
 * direction has expired, the batch starts there instead of at the next
 * position.  Deadlines are checked between batches: they bound the start of
 * service, not completion.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>

/* ---- shared: position order ----------------------------------------------------- */

bool ios_rq_before(const struct ios_rq *a, const struct ios_rq *b)
{
	int c = ios_fid_cmp(a->req->fid, b->req->fid);

	if (c)
		return c < 0;
	return a->off < b->off;
}

void ios_sorted_insert(struct ios_list *head, struct ios_rq *rq, int link)
{
	struct ios_list *p;

	for (p = head->prev; p != head; p = p->prev)
		if (!ios_rq_before(rq, ios_container_of(p, struct ios_rq, pol[link])))
			break;
	ios_list_insert_after(p, &rq->pol[link]);
}

struct ios_rq *ios_sorted_next(struct ios_list *head, struct ios_rq *rq, int link)
{
	struct ios_list *n = rq->pol[link].next;

	return n == head ? NULL : ios_container_of(n, struct ios_rq, pol[link]);
}

/* ---- noop ---------------------------------------------------------------------- */

struct noop {
	struct ios_list fifo;
};

static int noop_init(struct ios_sched *s)
{
	struct noop *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	ios_list_init(&n->fifo);
	s->pol = n;
	return 0;
}

static void noop_exit(struct ios_sched *s)
{
	free(s->pol);
	s->pol = NULL;
}

static void noop_add(struct ios_sched *s, struct ios_rq *rq)
{
	ios_list_add_tail(&((struct noop *)s->pol)->fifo, &rq->pol[0]);
}

static void noop_remove(struct ios_sched *s, struct ios_rq *rq)
{
	(void)s;
	ios_list_del(&rq->pol[0]);
}

static struct ios_rq *noop_next(struct ios_sched *s, uint64_t now)
{
	struct noop *n = s->pol;

	(void)now;
	return ios_list_empty(&n->fifo) ? NULL
					: ios_container_of(n->fifo.next, struct ios_rq, pol[0]);
}

static void noop_completed(struct ios_sched *s, struct ios_rq *rq, uint64_t now)
{
	(void)s;
	(void)rq;
	(void)now;
}

const struct ios_policy_ops ios_policy_noop = {
    .name = "noop",
    .init = noop_init,
    .exit = noop_exit,
    .add = noop_add,
    .remove = noop_remove,
    .next = noop_next,
    .completed = noop_completed,
};

/* ---- deadline-2.6 ----------------------------------------------------------------- */

enum { DL_READ, DL_WRITE };

struct deadline {
	/* runtime data */
	struct ios_list sorted[2]; /* pol[0] */
	struct ios_list fifo[2];   /* pol[1] */
	struct ios_rq *next_rq[2]; /* where the batch continues */
	struct ios_rq *chosen;	   /* returned by next(), not yet removed */
	int dir;		   /* direction of the current batch */
	int batching;		   /* requests in the current batch */
	int starved;		   /* read batches while writes waited */
	/* tunables */
	uint64_t expire_ns[2];
	int fifo_batch, writes_starved;
};

static int dl_dir(const struct ios_rq *rq)
{
	return rq->req->dir == IOS_READ ? DL_READ : DL_WRITE;
}

static int dl_init(struct ios_sched *s)
{
	struct deadline *d = calloc(1, sizeof(*d));
	int i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < 2; i++) {
		ios_list_init(&d->sorted[i]);
		ios_list_init(&d->fifo[i]);
	}
	d->expire_ns[DL_READ] = (uint64_t)s->set.read_expire_ms * 1000000u;
	d->expire_ns[DL_WRITE] = (uint64_t)s->set.write_expire_ms * 1000000u;
	d->fifo_batch = (int)s->set.fifo_batch;
	d->writes_starved = (int)s->set.writes_starved;
	s->pol = d;
	return 0;
}

static void dl_add(struct ios_sched *s, struct ios_rq *rq)
{
	struct deadline *d = s->pol;
	int dir = dl_dir(rq);

	rq->deadline_ns = rq->arrival_ns + d->expire_ns[dir];
	ios_sorted_insert(&d->sorted[dir], rq, 0);
	ios_list_add_tail(&d->fifo[dir], &rq->pol[1]);
}

static void dl_remove(struct ios_sched *s, struct ios_rq *rq)
{
	struct deadline *d = s->pol;
	int dir = dl_dir(rq);
	struct ios_rq *succ = ios_sorted_next(&d->sorted[dir], rq, 0);

	if (rq == d->chosen) { /* dispatched: the batch goes on after it */
		d->chosen = NULL;
		d->batching++;
		d->next_rq[dir] = succ;
	} else if (d->next_rq[dir] == rq) {
		d->next_rq[dir] = succ;
	}
	ios_list_del(&rq->pol[0]);
	ios_list_del(&rq->pol[1]);
}

static bool dl_expired(struct deadline *d, int dir, uint64_t now)
{
	return !ios_list_empty(&d->fifo[dir]) &&
	       ios_container_of(d->fifo[dir].next, struct ios_rq, pol[1])->deadline_ns <= now;
}

static struct ios_rq *dl_next(struct ios_sched *s, uint64_t now)
{
	struct deadline *d = s->pol;
	bool reads = !ios_list_empty(&d->fifo[DL_READ]);
	bool writes = !ios_list_empty(&d->fifo[DL_WRITE]);
	struct ios_rq *rq;
	int dir;

	/* inside a batch: continue in position order */
	if (d->next_rq[d->dir] && d->batching < d->fifo_batch)
		return d->chosen = d->next_rq[d->dir];
	if (reads && !(writes && d->starved >= d->writes_starved)) {
		dir = DL_READ;
		if (writes)
			d->starved++;
	} else if (writes) {
		dir = DL_WRITE;
		d->starved = 0;
	} else {
		return NULL;
	}
	rq = d->next_rq[dir];
	if (dl_expired(d, dir, now) || !rq)
		rq = ios_container_of(d->fifo[dir].next, struct ios_rq, pol[1]);
	d->dir = dir;
	d->batching = 0;
	d->next_rq[dir] = rq;
	return d->chosen = rq;
}

static void dl_completed(struct ios_sched *s, struct ios_rq *rq, uint64_t now)
{
	(void)s;
	(void)rq;
	(void)now;
}

const struct ios_policy_ops ios_policy_deadline = {
    .name = "deadline-2.6",
    .init = dl_init,
    .exit = noop_exit,
    .add = dl_add,
    .remove = dl_remove,
    .next = dl_next,
    .completed = dl_completed,
};
