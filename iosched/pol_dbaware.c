/*
 * pol_dbaware.c -- the database-aware policy.
 *
 * Requests are served by tier: WAL and commit-status writes first (a commit
 * waits on them), then reads (a query waits on them), then heap, index and
 * other writeback (nobody waits until a checkpoint's fsync), then temp-file
 * I/O.  Async readahead windows (readahead.c) come after reads and before
 * writeback: nobody waits on them yet (a window a reader starts waiting on
 * is moved to the read tier).  Syncs bypass every policy (the core sends
 * them as soon as the writes before them are done), so a WAL fsync waits
 * only for WAL writes, which go first.  Starvation is bounded: every request has a deadline from
 * its class (wal_expire_ms, xact_expire_ms, read_expire_ms, data_write_expire_ms, temp_expire_ms)
 * and the request whose deadline has passed first is served before any tier order -- except that
 * after an expired request of a lower tier, queued WAL/commit-status work goes next: when writeback
 * is so far behind that all of it has expired, its deadlines would otherwise put every commit
 * behind the whole backlog (seen on the emulated hdd: WAL waits of 2 s); alternating bounds a
 * commit's wait by one writeback transfer.  Within a tier requests go in position order (one sweep
 * across files and offsets), which keeps merges and sequential runs together.
 *
 * The writeback throttle (wbt.c) bounds how much writeback is in flight by the latency of the
 * WAL flushes it observes: a writeback or temp write is chosen only while the throttle allows one
 * more; until then the other tiers go, and the write keeps its place and its deadline.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>

enum { T_LOG, T_READ, T_READAHEAD, T_WRITEBACK, T_TEMP, NTIER };

struct dbaware {
	struct ios_list sorted[NTIER]; /* pol[0] */
	struct ios_list fifo[NTIER];   /* pol[1], arrival order (= deadline order) */
	struct ios_rq *cursor[NTIER];  /* where the sweep continues */
	struct ios_rq *chosen;
	bool chosen_lower;		   /* chosen is an expired request below the log tier */
	bool log_turn;			   /* the last dispatch was: the log tier goes next */
	uint64_t expire_ns[IOS_NCLASS][2]; /* [class][read, write] */
};

static int tier_of(const struct ios_rq *rq)
{
	enum ios_class c = rq->req->cls;

	if (c == IOS_CLASS_TEMP)
		return T_TEMP;
	if (rq->req->flags & IOS_F_READAHEAD)
		return T_READAHEAD;
	if (rq->req->dir == IOS_READ)
		return T_READ;
	if (c == IOS_CLASS_WAL || c == IOS_CLASS_XACT)
		return T_LOG;
	return T_WRITEBACK;
}

static int db_init(struct ios_sched *s)
{
	struct dbaware *d = calloc(1, sizeof(*d));
	const struct ios_settings *t = &s->set;
	int i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < NTIER; i++) {
		ios_list_init(&d->sorted[i]);
		ios_list_init(&d->fifo[i]);
	}
	for (i = 0; i < IOS_NCLASS; i++) {
		d->expire_ns[i][0] = (uint64_t)t->read_expire_ms * 1000000u;
		d->expire_ns[i][1] = (uint64_t)t->data_write_expire_ms * 1000000u;
	}
	d->expire_ns[IOS_CLASS_WAL][1] = (uint64_t)t->wal_expire_ms * 1000000u;
	d->expire_ns[IOS_CLASS_XACT][1] = (uint64_t)t->xact_expire_ms * 1000000u;
	d->expire_ns[IOS_CLASS_TEMP][0] = (uint64_t)t->temp_expire_ms * 1000000u;
	d->expire_ns[IOS_CLASS_TEMP][1] = (uint64_t)t->temp_expire_ms * 1000000u;
	s->pol = d;
	return 0;
}

static void db_exit(struct ios_sched *s)
{
	free(s->pol);
	s->pol = NULL;
}

/* fifo_insert() -- keep a tier's FIFO in deadline order (classes of one
 * tier may have different expiry times). */
static void fifo_insert(struct ios_list *h, struct ios_rq *rq)
{
	struct ios_list *p;

	for (p = h->prev; p != h; p = p->prev)
		if (ios_container_of(p, struct ios_rq, pol[1])->deadline_ns <= rq->deadline_ns)
			break;
	ios_list_insert_after(p, &rq->pol[1]);
}

static void db_add(struct ios_sched *s, struct ios_rq *rq)
{
	struct dbaware *d = s->pol;
	int t = tier_of(rq);

	rq->pol_queue = t;
	rq->deadline_ns = rq->arrival_ns + d->expire_ns[rq->req->cls][rq->req->dir != IOS_READ];
	ios_sorted_insert(&d->sorted[t], rq, 0);
	fifo_insert(&d->fifo[t], rq);
}

static void db_remove(struct ios_sched *s, struct ios_rq *rq)
{
	struct dbaware *d = s->pol;
	int t = rq->pol_queue;

	if (d->cursor[t] == rq || rq == d->chosen)
		d->cursor[t] = ios_sorted_next(&d->sorted[t], rq, 0);
	if (rq == d->chosen) {
		d->log_turn = d->chosen_lower;
		d->chosen = NULL;
	}
	ios_list_del(&rq->pol[0]);
	ios_list_del(&rq->pol[1]);
}

/* log_pick() -- the log tier's next request: its expired head, else the
 * sweep's */
static struct ios_rq *log_pick(struct dbaware *d, uint64_t now)
{
	struct ios_rq *h = ios_container_of(d->fifo[T_LOG].next, struct ios_rq, pol[1]);

	if (h->deadline_ns <= now)
		return h;
	h = d->cursor[T_LOG];
	return h ? h : ios_container_of(d->sorted[T_LOG].next, struct ios_rq, pol[0]);
}

/* held() -- @rq (the head of tier @t) must wait for the throttle. */
static bool held(struct ios_sched *s, struct ios_rq *rq)
{
	return (rq->pol_queue == T_WRITEBACK || rq->pol_queue == T_TEMP) &&
	       ios_wbt_is_writeback(rq->req) && !ios_wbt_allows(s, rq);
}

static struct ios_rq *db_next(struct ios_sched *s, uint64_t now)
{
	struct dbaware *d = s->pol;
	struct ios_rq *best = NULL;
	int t;

	ios_wbt_tick(s, now);
	d->chosen_lower = false;
	/* after an expired lower-tier request, queued log work goes: an
	 * overloaded writeback backlog, all of it past its deadline, takes
	 * every other dispatch, never all of them */
	if (d->log_turn && !ios_list_empty(&d->sorted[T_LOG]))
		return d->chosen = log_pick(d, now);
	/* a passed deadline comes first: the earliest of them */
	for (t = 0; t < NTIER; t++) {
		struct ios_rq *h;

		if (ios_list_empty(&d->fifo[t]))
			continue;
		h = ios_container_of(d->fifo[t].next, struct ios_rq, pol[1]);
		if (h->deadline_ns <= now && (!best || h->deadline_ns < best->deadline_ns) &&
		    !held(s, h))
			best = h;
	}
	if (best) {
		d->chosen_lower = best->pol_queue != T_LOG;
		return d->chosen = best;
	}
	/* else the first tier with work, sweeping in position order */
	for (t = 0; t < NTIER; t++) {
		if (ios_list_empty(&d->sorted[t]))
			continue;
		best = d->cursor[t];
		if (!best)
			best = ios_container_of(d->sorted[t].next, struct ios_rq, pol[0]);
		if (held(s, best))
			continue;
		return d->chosen = best;
	}
	return NULL;
}

static void db_completed(struct ios_sched *s, struct ios_rq *rq, uint64_t now)
{
	(void)s;
	(void)rq;
	(void)now;
}

/* db_timer() -- wake up when the earliest queued deadline passes, so an
 * expired request is not left waiting for the next arrival, and when the
 * throttle's window ends. */
static uint64_t db_timer(struct ios_sched *s, uint64_t now)
{
	struct dbaware *d = s->pol;
	uint64_t t = UINT64_MAX;
	int i;

	for (i = 0; i < NTIER; i++)
		if (!ios_list_empty(&d->fifo[i])) {
			uint64_t dl =
			    ios_container_of(d->fifo[i].next, struct ios_rq, pol[1])->deadline_ns;

			if (dl < t)
				t = dl;
		}
	/* the throttle decides while there is writeback, or until it is open
	 * again */
	if (s->nr_wb_inflight || !ios_list_empty(&d->sorted[T_WRITEBACK]) ||
	    !ios_list_empty(&d->sorted[T_TEMP]) || !ios_wbt_open(s)) {
		uint64_t w = ios_wbt_tick(s, now);

		if (w < t)
			t = w;
	}
	return t;
}

const struct ios_policy_ops ios_policy_dbaware = {
    .name = "dbaware",
    .init = db_init,
    .exit = db_exit,
    .add = db_add,
    .remove = db_remove,
    .next = db_next,
    .completed = db_completed,
    .timer = db_timer,
};
