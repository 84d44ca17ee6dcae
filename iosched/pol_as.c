/*
 * pol_as.c -- as-2.6, Linux 2.6's anticipatory scheduler (as-iosched.c).
 *
 * Per direction a list in position order (file, offset) and a FIFO with
 * deadlines (read_expire, write_expire).  Reads and writes alternate in
 * batches: a read batch lasts read_batch_expire from its first completion,
 * a write batch write_batch_expire or write_batch_count writes (adapted to
 * how long the last write batch took, update_write_batch()); a batch
 * changes direction only when the other direction has work, and only after
 * everything in flight completed.  Within a batch requests go in position
 * order from where the last one ended, preferring short forward seeks and
 * allowing backward ones of up to AS_MAXBACK at twice the cost
 * (as_choose_req()); the FIFO head of the batch's direction goes first when
 * it expired (checked at most once per expire interval, as_fifo_expired()).
 *
 * Anticipation: after a read of process P completes, the scheduler keeps
 * the disk idle for up to antic_expire_us, hoping for P's next read, rather
 * than seek away to another process's request or to a write.  The wait
 * ends at once when
 *   - P submits a read: it is served at once, ahead of position order;
 *   - P has another read queued already, or the next read in position order
 *     is P's or is "close": on the same file, from 2 MiB before to 4 MiB
 *     after where P's read ended (as_close_req() with no delay: 8192
 *     sectors ahead, half of that behind) -- it is as good as P's;
 *   - antic_expire_us passed since P's read completed (timer());
 *   - P's read could not even be dispatched (the core parked it behind a
 *     write): waiting for its completion could wait for ever.
 * Anticipation is only for reads with a known process (req->pid != 0), and
 * only within a read batch; the window starts when the read that was
 * dispatched last completes (while it is in flight, other processes'
 * requests already wait), and a write dispatched since ends it (as in 2.6,
 * the io_context is dropped when a write is dispatched).
 *
 * Not modelled: the per-process statistics 2.6 used to decide whether a
 * process is worth waiting for (think time, seek distance, exit
 * probability): every process with a known pid is anticipated.
 *
 * What must stay true: next() returns NULL only while anticipating (ended
 * by an arrival, a completion or the timer), while a batch change waits for
 * transfers in flight (ended by their completion), or with nothing queued.
 */
#include "iosched_i.h"

#include <errno.h>
#include <stdlib.h>

enum { AS_READ, AS_WRITE };

enum antic_state {
	ANTIC_OFF,	 /* not anticipating */
	ANTIC_WAIT_REQ,	 /* waiting for the last read to complete */
	ANTIC_WAIT_NEXT, /* it completed: waiting for the next one */
	ANTIC_FINISHED	 /* gave up or got it: serve the next request */
};

#define AS_MAXBACK	   (1024ll * 1024 * 1024) /* longest backward seek, bytes */
#define AS_BACK_PENALTY	   2			  /* a backward seek costs double */
#define AS_CLOSE_AHEAD	   (4ll << 20)		  /* "close": 8192 sectors ahead ... */
#define AS_CLOSE_BEHIND	   (2ll << 20)		  /* ... half of that behind */
#define AS_MIN_WRITE_BATCH 2

struct as {
	/* runtime data */
	struct ios_list sorted[2];	 /* pol[0] */
	struct ios_list fifo[2];	 /* pol[1], arrival order = deadline order */
	struct ios_rq *next_rq[2];	 /* where each direction continues */
	struct ios_rq *chosen;		 /* returned by next(), not yet removed */
	struct ios_file_id last_file[2]; /* where the last dispatch ended */
	off_t last_end[2];
	uint64_t last_check_fifo[2];
	int batch_dir;
	bool changed_batch; /* new direction: wait for in-flight ones */
	bool new_batch;	    /* read batch timed from its first completion */
	bool after_writes;  /* ... and follows a write batch */
	uint64_t batch_expires;
	int write_batch_count;	 /* writes per write batch, adapted */
	int current_write_count; /* left in this write batch */
	bool write_batch_idled;	 /* the write batch ran out of writes */
	enum antic_state antic;
	pid_t antic_pid;	 /* process of the last dispatched read, 0: none */
	struct ios_rq *antic_rq; /* that read, until it completes */
	bool ioc_finished;	 /* it completed, at antic_start */
	uint64_t antic_start;
	/* tunables */
	uint64_t expire_ns[2], batch_expire_ns[2], antic_expire_ns;
};

static int as_dir(const struct ios_rq *rq)
{
	return rq->req->dir == IOS_READ ? AS_READ : AS_WRITE;
}

static struct ios_rq *sorted_entry(struct ios_list *p)
{
	return ios_container_of(p, struct ios_rq, pol[0]);
}

static struct ios_rq *fifo_head(struct as *a, int dir)
{
	return ios_list_empty(&a->fifo[dir])
		   ? NULL
		   : ios_container_of(a->fifo[dir].next, struct ios_rq, pol[1]);
}

static int as_init(struct ios_sched *s)
{
	struct as *a = calloc(1, sizeof(*a));
	int i;

	if (!a)
		return -ENOMEM;
	for (i = 0; i < 2; i++) {
		ios_list_init(&a->sorted[i]);
		ios_list_init(&a->fifo[i]);
	}
	a->expire_ns[AS_READ] = (uint64_t)s->set.read_expire_ms * 1000000u;
	a->expire_ns[AS_WRITE] = (uint64_t)s->set.write_expire_ms * 1000000u;
	a->batch_expire_ns[AS_READ] = (uint64_t)s->set.read_batch_expire_ms * 1000000u;
	a->batch_expire_ns[AS_WRITE] = (uint64_t)s->set.write_batch_expire_ms * 1000000u;
	a->antic_expire_ns = (uint64_t)s->set.antic_expire_us * 1000u;
	/* 2.6 starts with batch_expire[write] / 10 writes (in jiffies of 1 ms) */
	a->write_batch_count = (int)(s->set.write_batch_expire_ms / 10);
	if (a->write_batch_count < AS_MIN_WRITE_BATCH)
		a->write_batch_count = AS_MIN_WRITE_BATCH;
	a->batch_dir = AS_READ;
	a->new_batch = true;
	s->pol = a;
	return 0;
}

static void as_exit(struct ios_sched *s)
{
	free(s->pol);
	s->pol = NULL;
}

/* seek_class() -- how far @rq is from where direction @dir last ended:
 * 0 ahead on the same file or a short way back (*dist: bytes, backward
 * ones doubled), 1 on a file further on, 2 behind the head (the sweep has
 * to wrap to reach it). */
static int seek_class(const struct as *a, int dir, const struct ios_rq *rq, uint64_t *dist)
{
	int c = ios_fid_cmp(rq->req->fid, a->last_file[dir]);
	off_t last = a->last_end[dir];

	*dist = 0;
	if (c)
		return c > 0 ? 1 : 2;
	if (rq->off >= last) {
		*dist = (uint64_t)(rq->off - last);
		return 0;
	}
	if (rq->off + AS_MAXBACK >= last) {
		*dist = (uint64_t)(last - rq->off) * AS_BACK_PENALTY;
		return 0;
	}
	return 2;
}

/* as_choose() -- the better of two requests of one direction to serve next
 * (as_choose_req()): the nearer one ahead, then one further on, then the
 * lowest one behind the head. */
static struct ios_rq *as_choose(const struct as *a, int dir, struct ios_rq *r1, struct ios_rq *r2)
{
	uint64_t d1, d2;
	int c1, c2;

	if (!r1 || r1 == r2)
		return r2;
	if (!r2)
		return r1;
	c1 = seek_class(a, dir, r1, &d1);
	c2 = seek_class(a, dir, r2, &d2);
	if (c1 != c2)
		return c1 < c2 ? r1 : r2;
	if (c1 == 0 && d1 != d2)
		return d1 < d2 ? r1 : r2;
	return ios_rq_before(r2, r1) ? r2 : r1;
}

/* find_next() -- where the sweep goes after @last (still queued): the
 * better of its successor (or, at the end, the first request) and its
 * predecessor. */
static struct ios_rq *find_next(struct as *a, struct ios_rq *last)
{
	int dir = as_dir(last);
	struct ios_list *h = &a->sorted[dir];
	struct ios_rq *next = NULL, *prev = NULL;

	if (last->pol[0].prev != h)
		prev = sorted_entry(last->pol[0].prev);
	if (last->pol[0].next != h)
		next = sorted_entry(last->pol[0].next);
	else if (h->next != &last->pol[0])
		next = sorted_entry(h->next);
	return as_choose(a, dir, next, prev);
}

/* ---- anticipation ------------------------------------------------------------ */

static bool pid_has_queued_read(struct as *a, pid_t pid)
{
	struct ios_list *p;

	for (p = a->fifo[AS_READ].next; p != &a->fifo[AS_READ]; p = p->next)
		if (ios_container_of(p, struct ios_rq, pol[1])->req->pid == pid)
			return true;
	return false;
}

/* close_req() -- whether read @rq is as good as the anticipated one. */
static bool close_req(const struct as *a, const struct ios_rq *rq)
{
	off_t last = a->last_end[AS_READ];

	return ios_fid_eq(rq->req->fid, a->last_file[AS_READ]) &&
	       rq->off + AS_CLOSE_BEHIND >= last && rq->off <= last + AS_CLOSE_AHEAD;
}

/* can_break() -- whether anticipating the last read's process is pointless
 * because of @rq (a read, may be NULL) or of what is known already. */
static bool can_break(struct as *a, const struct ios_rq *rq, uint64_t now)
{
	if (rq && rq->req->pid == a->antic_pid)
		return true; /* the process's own read */
	if (a->ioc_finished && now >= a->antic_start + a->antic_expire_ns)
		return true; /* waited long enough */
	if (!a->ioc_finished && (!a->antic_rq || a->antic_rq->state != RQ_INFLIGHT))
		return true; /* its read is parked: it may never complete first */
	if (pid_has_queued_read(a, a->antic_pid))
		return true; /* nothing to wait for */
	if (rq && close_req(a, rq))
		return true;
	return false;
}

static bool can_anticipate(struct as *a, const struct ios_rq *rq, uint64_t now)
{
	if (!a->antic_pid || !a->antic_expire_ns)
		return false; /* the last dispatch was a write, or pid unknown */
	if (a->antic == ANTIC_FINISHED)
		return false; /* just finished: run the next request */
	return !can_break(a, rq, now);
}

/* antic_still_waiting() -- end a wait whose time is up, or whose read
 * cannot complete; whether the wait goes on. */
static bool antic_still_waiting(struct as *a, uint64_t now)
{
	if (a->antic == ANTIC_WAIT_NEXT && now >= a->antic_start + a->antic_expire_ns)
		a->antic = ANTIC_FINISHED;
	else if (a->antic == ANTIC_WAIT_REQ && (!a->antic_rq || a->antic_rq->state != RQ_INFLIGHT))
		a->antic = ANTIC_FINISHED;
	return a->antic == ANTIC_WAIT_REQ || a->antic == ANTIC_WAIT_NEXT;
}

/* ---- queueing ---------------------------------------------------------------- */

static void as_add(struct ios_sched *s, struct ios_rq *rq)
{
	struct as *a = s->pol;
	int dir = as_dir(rq);

	rq->deadline_ns = rq->arrival_ns + a->expire_ns[dir];
	ios_sorted_insert(&a->sorted[dir], rq, 0);
	ios_list_add_tail(&a->fifo[dir], &rq->pol[1]);
	a->next_rq[dir] = as_choose(a, dir, rq, a->next_rq[dir]);
	if (dir != AS_READ || (a->antic != ANTIC_WAIT_REQ && a->antic != ANTIC_WAIT_NEXT))
		return;
	if (rq->req->pid == a->antic_pid) {
		/* what we waited for: serve it at once */
		a->next_rq[AS_READ] = rq;
		a->antic = ANTIC_FINISHED;
	} else if (can_break(a, rq, s->clock(s))) {
		a->antic = ANTIC_FINISHED;
	}
}

/* as_remove() -- taken off the queues: dispatched (or parked) if it is the
 * one next() chose (as_move_to_dispatch()), else merged into a transfer. */
static void as_remove(struct ios_sched *s, struct ios_rq *rq)
{
	struct as *a = s->pol;
	int dir = as_dir(rq);

	if (rq == a->chosen) {
		a->chosen = NULL;
		a->antic = ANTIC_OFF;
		a->last_file[dir] = rq->req->fid;
		a->last_end[dir] = rq->off + (off_t)rq->len;
		if (dir == AS_READ) {
			a->antic_pid = rq->req->pid;
			a->antic_rq = rq;
		} else {
			a->antic_pid = 0;
			a->antic_rq = NULL;
			if (a->current_write_count > 0)
				a->current_write_count--;
		}
		a->ioc_finished = false;
		a->next_rq[dir] = find_next(a, rq);
	} else if (a->next_rq[dir] == rq) {
		a->next_rq[dir] = find_next(a, rq);
	}
	ios_list_del(&rq->pol[0]);
	ios_list_del(&rq->pol[1]);
}

/* ---- batches --------------------------------------------------------------------- */

static bool batch_expired(const struct as *a, uint64_t now)
{
	if (a->changed_batch || a->new_batch)
		return false;
	if (a->batch_dir == AS_READ)
		return now > a->batch_expires;
	return now > a->batch_expires || a->current_write_count == 0;
}

/* fifo_expired() -- whether the FIFO head of @dir is past its deadline,
 * looked at no more often than once per expire interval. */
static bool fifo_expired(struct as *a, int dir, uint64_t now)
{
	struct ios_rq *h;

	if (now - a->last_check_fifo[dir] < a->expire_ns[dir])
		return false;
	a->last_check_fifo[dir] = now;
	h = fifo_head(a, dir);
	return h && now > h->deadline_ns;
}

/* update_write_batch() -- at the start of a read batch: more writes per
 * batch if the last write batch finished early, fewer if it overran. */
static void update_write_batch(struct as *a, uint64_t now)
{
	int64_t batch = (int64_t)a->batch_expire_ns[AS_WRITE];
	int64_t write_time = (int64_t)(now - a->batch_expires) + batch;

	if (write_time < 0)
		write_time = 0;
	if (write_time > batch && !a->write_batch_idled) {
		if (write_time > batch * 3)
			a->write_batch_count /= 2;
		else
			a->write_batch_count--;
	} else if (write_time < batch && a->current_write_count == 0) {
		if (batch > write_time * 3)
			a->write_batch_count *= 2;
		else
			a->write_batch_count++;
	}
	if (a->write_batch_count < 1)
		a->write_batch_count = 1;
}

/* as_next() -- as_dispatch_request(): go on with the batch (anticipating
 * within a read batch), or switch direction when the batch expired. */
static struct ios_rq *as_next(struct ios_sched *s, uint64_t now)
{
	struct as *a = s->pol;
	bool reads = !ios_list_empty(&a->fifo[AS_READ]);
	bool writes = !ios_list_empty(&a->fifo[AS_WRITE]);
	struct ios_rq *rq;
	int dir;

	a->chosen = NULL;
	if (a->batch_dir == AS_WRITE && !reads && (a->current_write_count == 0 || !writes))
		a->write_batch_idled = true;
	if (!(reads || writes) || antic_still_waiting(a, now))
		return NULL;
	if (a->changed_batch) {
		if (s->nr_inflight > 0)
			return NULL;
		a->changed_batch = false;
		if (a->batch_dir == AS_WRITE)
			a->batch_expires = now + a->batch_expire_ns[AS_WRITE];
		else
			a->new_batch = true;
	}
	dir = a->batch_dir;
	if (!(reads && writes && batch_expired(a, now))) {
		/* the batch goes on */
		rq = a->next_rq[dir];
		if (dir == AS_READ) {
			if (fifo_expired(a, AS_READ, now))
				return a->chosen = fifo_head(a, AS_READ);
			if (can_anticipate(a, rq, now)) {
				if (a->antic == ANTIC_OFF)
					a->antic =
					    a->ioc_finished ? ANTIC_WAIT_NEXT : ANTIC_WAIT_REQ;
				return NULL;
			}
		}
		if (rq) {
			if (reads && !writes)
				a->batch_expires = now + a->batch_expire_ns[AS_READ];
			goto dispatch;
		}
	}
	/* a new batch: reads, unless the last batch was reads and writes wait */
	if (reads && !(writes && a->batch_dir == AS_READ)) {
		if (a->batch_dir == AS_WRITE) {
			a->changed_batch = true;
			a->after_writes = true;
		}
		a->batch_dir = dir = AS_READ;
		a->last_check_fifo[AS_READ] = now;
		rq = fifo_head(a, AS_READ);
	} else {
		if (a->batch_dir == AS_READ) {
			a->changed_batch = true;
			a->new_batch = false;
		}
		a->batch_dir = dir = AS_WRITE;
		a->current_write_count = a->write_batch_count;
		a->write_batch_idled = false;
		rq = a->next_rq[AS_WRITE] ? a->next_rq[AS_WRITE] : fifo_head(a, AS_WRITE);
	}
dispatch:
	if (fifo_expired(a, dir, now))
		rq = fifo_head(a, dir);
	if (a->changed_batch) {
		if (s->nr_inflight > 0)
			return NULL; /* the batch starts when the disk is drained */
		a->changed_batch = false;
		if (dir == AS_WRITE)
			a->batch_expires = now + a->batch_expire_ns[AS_WRITE];
		else
			a->new_batch = true;
	}
	return a->chosen = rq;
}

static void as_completed(struct ios_sched *s, struct ios_rq *rq, uint64_t now)
{
	struct as *a = s->pol;

	if (rq->req->dir == IOS_SYNC)
		return;
	if (a->new_batch && a->batch_dir == as_dir(rq)) {
		/* the read batch is timed from its first completion */
		if (a->after_writes)
			update_write_batch(a, now);
		a->after_writes = false;
		a->batch_expires = now + a->batch_expire_ns[AS_READ];
		a->new_batch = false;
	}
	if (rq == a->antic_rq) {
		a->antic_rq = NULL;
		a->antic_start = now;
		a->ioc_finished = true;
		a->last_file[AS_READ] = rq->req->fid;
		a->last_end[AS_READ] = rq->off + (off_t)rq->len; /* the whole transfer */
		if (a->antic == ANTIC_WAIT_REQ)
			a->antic = ANTIC_WAIT_NEXT;
	}
}

/* as_timer() -- the end of the anticipation window. */
static uint64_t as_timer(struct ios_sched *s, uint64_t now)
{
	struct as *a = s->pol;

	(void)now;
	if (a->antic == ANTIC_WAIT_NEXT)
		return a->antic_start + a->antic_expire_ns;
	return UINT64_MAX;
}

const struct ios_policy_ops ios_policy_as = {
    .name = "as-2.6",
    .init = as_init,
    .exit = as_exit,
    .add = as_add,
    .remove = as_remove,
    .next = as_next,
    .completed = as_completed,
    .timer = as_timer,
};
