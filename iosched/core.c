/*
 * core.c -- the scheduler core: submission, per-file ordering rules,
 * dispatch-time merging, completion; the policies only choose the order.
 *
 * What must stay true (iosched.h states it for callers):
 *   - every request is completed exactly once: it is on exactly one of
 *     submitted, a policy queue, a file's parked list, ready, in flight or
 *     held, and leaves the last through ios_core_complete();
 *   - a sync is dispatched only when no write to its file that arrived
 *     before it is still outstanding (writes after it do not wait for it);
 *   - a read or write is dispatched only when no write that arrived before
 *     it and overlaps it is still outstanding (dependencies always point to
 *     earlier arrivals, so there is no cycle);
 *   - merging only joins requests that are eligible now, so a transfer is
 *     never held back by one of its own members;
 *   - at most nr_requests requests (and max_inflight_kb, if set) are in
 *     flight.
 *
 * Everything from ios_core_take_submissions() on runs on the dispatcher
 * thread (or the test driving the virtual clock) only.
 */
#include "iosched_i.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ---- per-file state ------------------------------------------------------------ */

static size_t file_hash(const struct ios_sched *s, struct ios_file_id id)
{
	uint64_t h = ios_fid_mix(id);

	return (size_t)(h ^ (h >> 31)) & (s->nfiles_tab - 1);
}

static struct ios_file *file_get(struct ios_sched *s, struct ios_file_id id)
{
	size_t h = file_hash(s, id);
	struct ios_file *f;

	for (f = s->files[h]; f; f = f->hnext)
		if (ios_fid_eq(f->fid, id)) {
			f->refs++;
			return f;
		}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->fid = id;
	f->refs = 1;
	ios_list_init(&f->queued);
	ios_list_init(&f->parked);
	ios_list_init(&f->writes);
	f->hnext = s->files[h];
	s->files[h] = f;
	s->nfiles++;
	return f;
}

static void file_put(struct ios_sched *s, struct ios_file *f)
{
	struct ios_file **pp;

	if (--f->refs > 0)
		return;
	for (pp = &s->files[file_hash(s, f->fid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	s->nfiles--;
	free(f);
}

/* ---- submission (any thread) ----------------------------------------------------- */

static uint64_t real_clock(struct ios_sched *s)
{
	(void)s;
	return ios_now_ns();
}

static uint64_t virtual_clock(struct ios_sched *s)
{
	return s->vclock;
}

static void wake(struct ios_sched *s)
{
	uint64_t one = 1;

	if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the dispatcher is awake anyway */
	}
}

static uint32_t ns_to_us(uint64_t ns)
{
	uint64_t us = ns / 1000;

	return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* account() -- one completed request into the statistics and the trace, if
 * attached. */
static void account(struct ios_sched *s, const struct ios_req *req, ssize_t res, uint64_t queue_ns,
		    uint64_t service_ns)
{
	struct ios_trace_rec rec;

	if (req->flags & IOS_F_INTERNAL)
		return; /* the scheduler's own (readahead): the caller's reads count */
	ios_stats_account(s->stats, req, res, queue_ns, service_ns);
	if (!s->trace)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.time_ns = req->arrival_ns;
	rec.dev = req->fid.dev;
	rec.ino = req->fid.ino;
	rec.off = req->dir == IOS_SYNC ? 0 : (uint64_t)req->off;
	rec.len =
	    req->dir == IOS_SYNC ? 0 : (req->len > UINT32_MAX ? UINT32_MAX : (uint32_t)req->len);
	rec.pid = req->pid > 0 ? (uint32_t)req->pid : 0;
	rec.queue_us = ns_to_us(queue_ns);
	rec.service_us = ns_to_us(service_ns);
	rec.result = res > INT32_MAX ? INT32_MAX : res < INT32_MIN ? INT32_MIN : (int32_t)res;
	rec.cls = (uint8_t)req->cls;
	rec.dir = (uint8_t)req->dir;
	if (req->dir == IOS_SYNC && (req->flags & IOS_F_DATASYNC))
		rec.flags |= IOS_TRACE_F_DATASYNC;
	(void)ios_trace_write(s->trace, &rec); /* a drop is counted by the writer */
}

int ios_submit(struct ios_sched *s, struct ios_req *req)
{
	struct ios_rq *rq;

	if (ios_runs_inline(s, req->cls)) {
		struct ios_stats *st = s->stats;
		ssize_t res;

		uint64_t lat;

		if (!s->set.serial_writes) /* ios_execute() takes no lock */
			req->serial = NULL;
		if (!st && !s->trace && !s->fault && !(s->wbt && ios_wbt_is_flush(req))) {
			req->arrival_ns = 0;
			req->done(req, ios_execute(req));
			return 0;
		}
		/* no queue: all of the latency is service time; accounted
		 * before done, so a completed request is already counted */
		req->arrival_ns = ios_now_ns();
		res = s->fault ? ios_fault_execute(s->fault, req) : ios_execute(req);
		lat = ios_now_ns() - req->arrival_ns;
		account(s, req, res, 0, lat);
		ios_wbt_observe(s->wbt, req, lat);
		req->done(req, res);
		return 0;
	}
	rq = calloc(1, sizeof(*rq));
	if (!rq) {
		req->arrival_ns = ios_now_ns();
		account(s, req, -ENOMEM, 0, 0);
		req->done(req, -ENOMEM);
		return 0;
	}
	rq->req = req;
	pthread_mutex_lock(&s->sub_lock);
	req->arrival_ns = s->clock(s);
	ios_list_add_tail(&s->submitted, &rq->anode);
	pthread_mutex_unlock(&s->sub_lock);
	wake(s);
	return 0;
}

/* ---- arrival --------------------------------------------------------------------- */

static bool eligible(const struct ios_rq *rq);
static void park(struct ios_sched *s, struct ios_rq *rq);
static void ios_core_queue(struct ios_sched *s, struct ios_rq *rq);

/* queued_insert() -- keep file->queued sorted by offset. */
static void queued_insert(struct ios_file *f, struct ios_rq *rq)
{
	struct ios_list *p;

	for (p = f->queued.prev; p != &f->queued; p = p->prev) {
		struct ios_rq *o = ios_container_of(p, struct ios_rq, fnode);

		if (o->off <= rq->off)
			break;
	}
	ios_list_insert_after(p, &rq->fnode);
}

static void arrive(struct ios_sched *s, struct ios_rq *rq)
{
	struct ios_req *req = rq->req;

	rq->seq = ++s->next_seq;
	rq->arrival_ns = req->arrival_ns;
	rq->off = req->off;
	rq->len = req->dir == IOS_SYNC ? 0 : req->len;
	rq->nreq = 1;
	rq->state = RQ_QUEUED;
	ios_list_init(&rq->pol[0]);
	ios_list_init(&rq->pol[1]);
	ios_list_init(&rq->fnode);
	ios_list_init(&rq->wnode);
	ios_list_init(&rq->merged);
	ios_list_init(&rq->mnode);
	rq->file = file_get(s, req->fid);
	if (!rq->file) {
		account(s, req, -ENOMEM, 0, 0);
		req->done(req, -ENOMEM);
		free(rq);
		return;
	}
	if (s->fault) /* in arrival order: a seeded choice is reproducible */
		rq->fault = ios_fault_pick(s->fault, req, &rq->fault_delay_ns);
	if (req->dir == IOS_WRITE) {
		/* before it is queued: no read after it may see read-ahead data
		 * older than it */
		if (s->ra && req->len)
			ios_ra_invalidate(s, req->fid, req->off, (off_t)req->len);
		ios_list_add_tail(&rq->file->writes, &rq->wnode);
	}
	if (req->dir == IOS_READ && s->ra && !rq->fault && !(req->flags & IOS_F_INTERNAL) &&
	    ios_ra_read(s, rq))
		return;
	if (req->dir == IOS_SYNC) {
		/* syncs bypass the policy, as flushes bypass a Linux elevator:
		 * they go as soon as the writes before them are done */
		if (eligible(rq)) {
			rq->state = RQ_READY;
			ios_list_add_tail(&s->ready, &rq->anode);
		} else {
			park(s, rq);
		}
		return;
	}
	ios_core_queue(s, rq);
}

/* ios_core_queue() -- hand an arrived read or write to the policy. */
static void ios_core_queue(struct ios_sched *s, struct ios_rq *rq)
{
	queued_insert(rq->file, rq);
	s->nr_queued++;
	s->pol_ops->add(s, rq);
}

/* ios_core_submit_internal() -- a request of the scheduler's own (flags
 * IOS_F_INTERNAL), arriving now, on the dispatcher thread; NULL if out of
 * memory (nothing was done). */
static struct ios_rq *ios_core_submit_internal(struct ios_sched *s, struct ios_req *req)
{
	struct ios_rq *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->req = req;
	req->flags |= IOS_F_INTERNAL;
	if (!req->arrival_ns)
		req->arrival_ns = s->clock(s);
	arrive(s, rq);
	return rq;
}

/* ios_core_finish() -- complete arrived @rq without a transfer (readahead
 * served it from its cache): all of its latency is service time. */
static void ios_core_finish(struct ios_sched *s, struct ios_rq *rq, ssize_t res)
{
	uint64_t now = s->clock(s);
	struct ios_req *req = rq->req;

	s->cnt.requests++;
	account(s, req, res, 0, now > rq->arrival_ns ? now - rq->arrival_ns : 0);
	req->done(req, res);
	file_put(s, rq->file);
	free(rq);
}

/* control() -- a control node from the submission list. */
static void control(struct ios_sched *s, struct ios_rq *rq)
{
	if (s->ra && rq->ctl == CTL_INVALIDATE)
		ios_ra_invalidate(s, rq->ctl_file, rq->off, (off_t)rq->len);
	else if (s->ra && rq->ctl == CTL_RELEASE)
		ios_ra_release(s, rq->ctl_file);
	free(rq);
}

/* submit_control() -- queue a control node in submission order; if it
 * cannot be allocated, all read-ahead data goes (coherence first). */
static void submit_control(struct ios_sched *s, enum ios_ctl ctl, struct ios_file_id fid, off_t off,
			   off_t len)
{
	struct ios_rq *rq;

	if (s->sync_mode || !s->ra)
		return;
	rq = calloc(1, sizeof(*rq));
	pthread_mutex_lock(&s->sub_lock);
	if (rq) {
		rq->ctl = ctl;
		rq->ctl_file = fid;
		rq->off = off;
		rq->len = (size_t)len;
		ios_list_add_tail(&s->submitted, &rq->anode);
	} else if (ctl == CTL_INVALIDATE) {
		s->ra_flush_all = true;
	}
	pthread_mutex_unlock(&s->sub_lock);
	wake(s);
}

void ios_invalidate(struct ios_sched *s, struct ios_file_id fid, off_t off, off_t len)
{
	submit_control(s, CTL_INVALIDATE, fid, off, len);
}

void ios_release(struct ios_sched *s, struct ios_file_id fid)
{
	submit_control(s, CTL_RELEASE, fid, 0, 0);
}

void ios_core_take_submissions(struct ios_sched *s)
{
	struct ios_list batch;
	bool flush;

	ios_list_init(&batch);
	pthread_mutex_lock(&s->sub_lock);
	flush = s->ra_flush_all;
	s->ra_flush_all = false;
	if (!ios_list_empty(&s->submitted)) {
		batch.next = s->submitted.next;
		batch.prev = s->submitted.prev;
		batch.next->prev = &batch;
		batch.prev->next = &batch;
		ios_list_init(&s->submitted);
	}
	pthread_mutex_unlock(&s->sub_lock);
	if (flush && s->ra)
		ios_ra_flush(s);
	while (!ios_list_empty(&batch)) {
		struct ios_rq *rq = ios_container_of(batch.next, struct ios_rq, anode);

		ios_list_del(&rq->anode);
		if (rq->req)
			arrive(s, rq);
		else
			control(s, rq);
	}
}

/* ---- ordering rules ------------------------------------------------------------- */

static bool overlaps(const struct ios_rq *a, const struct ios_rq *b)
{
	return a->off < b->off + (off_t)b->len && b->off < a->off + (off_t)a->len;
}

/* eligible() -- whether @rq may be dispatched now (see the file comment).
 * Members of one transfer are adjacent, never overlapping, so they are no
 * obstacle to one another. */
static bool eligible(const struct ios_rq *rq)
{
	const struct ios_list *p;

	for (p = rq->file->writes.next; p != &rq->file->writes; p = p->next) {
		const struct ios_rq *w = ios_container_of(p, struct ios_rq, wnode);

		if (w->seq >= rq->seq)
			break; /* arrival order: nothing earlier left */
		if (rq->req->dir == IOS_SYNC || overlaps(w, rq))
			return false;
	}
	return true;
}

static void park(struct ios_sched *s, struct ios_rq *rq)
{
	rq->state = RQ_PARKED;
	ios_list_add_tail(&rq->file->parked, &rq->fnode);
	s->cnt.parked++;
}

/* unpark() -- after a write to @f completed, parked rqs that may go now go
 * to the ready list, which is served before the policy is asked again. */
static void unpark(struct ios_sched *s, struct ios_file *f)
{
	struct ios_list *p, *n;

	for (p = f->parked.next; p != &f->parked; p = n) {
		struct ios_rq *rq = ios_container_of(p, struct ios_rq, fnode);

		n = p->next;
		if (!eligible(rq))
			continue;
		ios_list_del(&rq->fnode);
		rq->state = RQ_READY;
		ios_list_add_tail(&s->ready, &rq->anode);
	}
}

/* ---- merging ------------------------------------------------------------------ */

/* max_transfer() -- the largest transfer @head may grow to now:
 * max_request_kb, and no more than max_inflight_kb leaves room for, nor
 * for writeback what bulk_inflight_kb does (its head itself always fits). */
static size_t max_transfer(const struct ios_sched *s, const struct ios_rq *head)
{
	size_t cap = (size_t)s->set.max_request_kb * 1024;
	size_t limit = (size_t)s->set.max_inflight_kb * 1024;

	if (limit && s->bytes_inflight < limit && limit - s->bytes_inflight < cap)
		cap = limit - s->bytes_inflight;
	if (s->bulk_limit && ios_wbt_is_writeback(head->req)) {
		size_t room =
		    s->wb_bytes_inflight < s->bulk_limit ? s->bulk_limit - s->wb_bytes_inflight : 0;

		if (room < cap)
			cap = room > head->len ? room : head->len;
	}
	return cap;
}

static bool can_join(const struct ios_sched *s, const struct ios_rq *head, const struct ios_rq *c,
		     size_t xlen, int nreq)
{
	return c->req->dir == head->req->dir && c->req->fd == head->req->fd &&
	       (!c->fault || (s->set.fault_in_transfer && c->fault < 0)) && !c->fault_delay_ns &&
	       xlen + c->len <= max_transfer(s, head) && nreq + c->req->iovcnt <= IOV_MAX / 2;
}

/* take_member() -- move queued @c into @head's transfer. */
static void take_member(struct ios_sched *s, struct ios_rq *head, struct ios_rq *c, bool front)
{
	s->pol_ops->remove(s, c);
	ios_list_del(&c->fnode);
	s->nr_queued--;
	c->state = RQ_INFLIGHT;
	if (front)
		ios_list_insert_after(&head->merged, &c->mnode);
	else
		ios_list_add_tail(&head->merged, &c->mnode);
	head->nreq++;
	s->cnt.merged++;
	ios_stats_note_merge(s->stats, c->req->cls, 1);
}

/* merge() -- grow @head (just taken off the queues, eligible) with queued,
 * eligible requests adjacent to it on the same file, descriptor and
 * direction; the transfer's range ends up in head->xoff/xlen and its
 * members, in offset order, on head->merged (head included). */
static void merge(struct ios_sched *s, struct ios_rq *head, off_t *xoff, size_t *xlen)
{
	struct ios_file *f = head->file;
	struct ios_list *p;

	*xoff = head->off;
	*xlen = head->len;
	ios_list_add_tail(&head->merged, &head->mnode);
	/* an injected fault concerns its own request only, unless it is to
	 * fail a transfer part-way (fault.in_transfer); a skipped one always */
	if (head->req->dir == IOS_SYNC ||
	    (head->fault && (!s->set.fault_in_transfer || head->fault > 0)) || head->fault_delay_ns)
		return;
	/* back merges: the queue is sorted by offset */
	for (p = f->queued.next; p != &f->queued;) {
		struct ios_rq *c = ios_container_of(p, struct ios_rq, fnode);

		p = p->next;
		if (c->off < *xoff + (off_t)*xlen)
			continue;
		if (c->off > *xoff + (off_t)*xlen)
			break;
		if (!can_join(s, head, c, *xlen, head->nreq) || !eligible(c))
			break;
		take_member(s, head, c, false);
		*xlen += c->len;
		p = f->queued.next; /* the list changed: rescan from the start */
	}
	if (!s->set.front_merges)
		return;
	for (;;) {
		struct ios_rq *found = NULL;

		for (p = f->queued.next; p != &f->queued; p = p->next) {
			struct ios_rq *c = ios_container_of(p, struct ios_rq, fnode);

			if (c->off + (off_t)c->len == *xoff) {
				found = c;
				break;
			}
			if (c->off >= *xoff)
				break;
		}
		if (!found || !can_join(s, head, found, *xlen, head->nreq) || !eligible(found))
			return;
		take_member(s, head, found, true);
		*xoff = found->off;
		*xlen += found->len;
	}
}

/* fault_cut() -- bytes of transfer @head (from @xoff) before its first
 * member picked by fault injection, whose error goes to *@err; the whole
 * length and 0 if none was picked. */
static size_t fault_cut(const struct ios_rq *head, off_t xoff, size_t xlen, int *err)
{
	const struct ios_list *p;

	*err = 0;
	for (p = head->merged.next; p != &head->merged; p = p->next) {
		const struct ios_rq *m = ios_container_of(p, struct ios_rq, mnode);

		if (m->fault) {
			*err = m->fault;
			return (size_t)(m->req->off - xoff);
		}
	}
	return xlen;
}

/* build_iov() -- one iovec over the buffers of the members in the first
 * head->len bytes of the transfer, in offset order. */
static int build_iov(struct ios_rq *head)
{
	off_t end = head->off + (off_t)head->len;
	struct ios_list *p;
	int n = 0, i;

	for (p = head->merged.next; p != &head->merged; p = p->next)
		n += ios_container_of(p, struct ios_rq, mnode)->req->iovcnt;
	head->iov = n <= 4 ? head->iov_inline : malloc(sizeof(struct iovec) * (size_t)n);
	if (!head->iov)
		return -ENOMEM;
	head->iovcnt = 0;
	for (p = head->merged.next; p != &head->merged; p = p->next) {
		struct ios_req *r = ios_container_of(p, struct ios_rq, mnode)->req;

		if (r->off >= end)
			break;
		for (i = 0; i < r->iovcnt; i++)
			head->iov[head->iovcnt++] = r->iov[i];
	}
	return 0;
}

/* ---- dispatch -------------------------------------------------------------------- */

static bool throttled(struct ios_sched *s, const struct ios_rq *rq)
{
	size_t limit = (size_t)s->set.max_inflight_kb * 1024;

	if (s->nr_inflight >= s->set.nr_requests)
		return true;
	/* an emulated device takes few transfers at a time, as a disk does */
	if (s->dev && s->nr_xfers_inflight >= s->set.queue_depth)
		return true;
	if (!limit || s->nr_inflight == 0)
		return false;
	/* 2.4-aa: once the limit is reached, refill in batches of half of it */
	if (s->bytes_inflight + rq->len > limit)
		return true;
	return false;
}

static void start(struct ios_sched *s, struct ios_rq *head)
{
	off_t xoff;
	size_t xlen, cut;
	int ret, err;

	merge(s, head, &xoff, &xlen);
	head->off = xoff; /* the head now describes the whole transfer */
	head->len = xlen;
	/* a member picked to fail: the transfer stops where it starts (the
	 * members before it are performed) and then fails with its error */
	cut = fault_cut(head, xoff, xlen, &err);
	if (err && cut > 0) {
		head->len = xlen = cut;
		head->cut_err = err;
	}
	head->state = RQ_INFLIGHT;
	head->dispatch_ns = s->clock(s);
	s->cnt.transfers++;
	ios_list_add_tail(&s->inflight, &head->anode);
	s->nr_inflight += head->nreq;
	s->nr_xfers_inflight++;
	if (ios_wbt_is_writeback(head->req)) {
		s->nr_wb_inflight++;
		s->wb_bytes_inflight += xlen;
	}
	s->bytes_inflight += xlen;
	if (s->bytes_inflight > s->cnt.peak_bytes_inflight)
		s->cnt.peak_bytes_inflight = s->bytes_inflight;
	/* an injected delay: back ends hold the completion until then */
	head->device_done_ns = head->fault_delay_ns ? head->dispatch_ns + head->fault_delay_ns : 0;
	if (err && cut == 0) { /* injected: the transfer is not performed */
		head->result = ios_fault_result(err, head->req->dir, head->len);
		if (head->device_done_ns)
			ios_core_hold(s, head);
		else
			ios_core_complete(s, head, head->result);
		return;
	}
	ret = head->req->dir == IOS_SYNC ? 0 : build_iov(head);
	if (ret == 0)
		ret = s->be_ops->start(s, head);
	if (ret < 0)
		ios_core_complete(s, head, ret);
}

void ios_core_dispatch(struct ios_sched *s)
{
	uint64_t now = s->clock(s);

	ios_wbt_round(s);
	for (;;) {
		struct ios_rq *rq;
		/* a parked writeback transfer that bulk_inflight_kb has no room
		 * for waits for a completion, and the policy's work goes */
		bool from_ready =
		    !ios_list_empty(&s->ready) &&
		    ios_bulk_fits(s, ios_container_of(s->ready.next, struct ios_rq, anode));

		if (from_ready)
			rq = ios_container_of(s->ready.next, struct ios_rq, anode);
		else
			rq = s->pol_ops->next(s, now);
		if (!rq || throttled(s, rq))
			return;
		if (from_ready) {
			ios_list_del(&rq->anode);
		} else {
			s->pol_ops->remove(s, rq);
			ios_list_del(&rq->fnode); /* file->queued (syncs: no-op) */
			s->nr_queued--;
			if (!eligible(rq)) {
				park(s, rq);
				continue;
			}
		}
		start(s, rq);
	}
}

/* ---- completion ------------------------------------------------------------------ */

/* member_result() -- what member @m of transfer @head gets when the
 * transfer ended with @res.  A failed transfer (head->xfer_done bytes done
 * before the error): the members wholly inside the part done succeed in
 * full, the one cut short and every later one get the error itself.  A
 * transfer that succeeded: each member its share, which for a read that
 * reached EOF may be short.  A write never completes short: the back ends
 * turn a short write into the backing store's error, and were one to slip
 * through, EIO is answered rather than a count that a writer would take
 * for success. */
static ssize_t member_result(const struct ios_rq *head, const struct ios_rq *m, ssize_t res)
{
	const struct ios_req *req = m->req;
	size_t start_at = (size_t)(req->off - head->off);
	size_t got;

	if (req->dir == IOS_SYNC)
		return res < 0 ? res : 0;
	if (res < 0)
		return start_at + req->len <= head->xfer_done ? (ssize_t)req->len : res;
	got = (size_t)res > start_at ? (size_t)res - start_at : 0;
	if (got > req->len)
		got = req->len;
	if (req->dir == IOS_WRITE && got < req->len)
		return -EIO;
	return (ssize_t)got;
}

void ios_core_complete(struct ios_sched *s, struct ios_rq *head, ssize_t res)
{
	enum ios_dir dir = head->req->dir;
	struct ios_file *f = head->file;
	uint64_t now = s->clock(s);
	struct ios_list *p, *n;
	bool wrote = dir == IOS_WRITE;

	if (head->cut_err && res >= 0) { /* stopped at a member picked to fail */
		head->xfer_done = (size_t)res;
		res = head->cut_err;
	}
	ios_list_del(&head->anode);
	s->nr_inflight -= head->nreq;
	s->nr_xfers_inflight--;
	if (ios_wbt_is_writeback(head->req)) {
		s->nr_wb_inflight--;
		s->wb_bytes_inflight -= head->len;
	}
	s->bytes_inflight -= head->len;
	s->pol_ops->completed(s, head, now);
	for (p = head->merged.next; p != &head->merged; p = n) {
		struct ios_rq *m = ios_container_of(p, struct ios_rq, mnode);
		struct ios_req *req = m->req;
		ssize_t r;

		n = p->next;
		r = member_result(head, m, res);
		if (dir == IOS_WRITE)
			ios_list_del(&m->wnode);
		ios_list_del(&m->mnode);
		s->cnt.requests++;
		/* queue: arrival to dispatch; service: dispatch to completion
		 * (emulated device included) */
		account(s, req, r,
			head->dispatch_ns > m->arrival_ns ? head->dispatch_ns - m->arrival_ns : 0,
			now > head->dispatch_ns ? now - head->dispatch_ns : 0);
		ios_wbt_observe(s->wbt, req, now > m->arrival_ns ? now - m->arrival_ns : 0);
		req->done(req, r);
		if (m != head) {
			file_put(s, m->file);
			free(m);
		}
	}
	if (head->iov && head->iov != head->iov_inline)
		free(head->iov);
	if (wrote)
		unpark(s, f);
	file_put(s, f);
	free(head);
}

/* ---- waiting --------------------------------------------------------------------- */

uint64_t ios_core_next_event(struct ios_sched *s)
{
	uint64_t now = s->clock(s), t = UINT64_MAX;

	if (!ios_list_empty(&s->held))
		t = ios_container_of(s->held.next, struct ios_rq, anode)->device_done_ns;
	if (s->be_ops->due && s->be_ops->due(s) < t)
		t = s->be_ops->due(s);
	if (s->pol_ops->timer) {
		uint64_t pt = s->pol_ops->timer(s, now);

		if (pt > now && pt < t)
			t = pt;
	}
	return t;
}

bool ios_core_idle(struct ios_sched *s)
{
	bool idle;

	pthread_mutex_lock(&s->sub_lock);
	idle = ios_list_empty(&s->submitted);
	pthread_mutex_unlock(&s->sub_lock);
	return idle && s->nr_queued == 0 && s->nr_inflight == 0 && ios_list_empty(&s->ready);
}

/* ios_core_hold() -- an emulated-device completion: keep @rq until its
 * modelled completion time (held is sorted by that time). */
void ios_core_hold(struct ios_sched *s, struct ios_rq *rq)
{
	ios_core_hold_on(&s->held, rq);
}

/* ios_core_hold_on() -- move @rq to @list, sorted by device_done_ns
 * (after those due at the same time). */
void ios_core_hold_on(struct ios_list *list, struct ios_rq *rq)
{
	struct ios_list *p;

	ios_list_del(&rq->anode);
	for (p = list->prev; p != list; p = p->prev)
		if (ios_container_of(p, struct ios_rq, anode)->device_done_ns <= rq->device_done_ns)
			break;
	ios_list_insert_after(p, &rq->anode);
}

/* ios_core_release_held() -- complete held transfers that are due. */
void ios_core_release_held(struct ios_sched *s)
{
	uint64_t now = s->clock(s);

	while (!ios_list_empty(&s->held)) {
		struct ios_rq *rq = ios_container_of(s->held.next, struct ios_rq, anode);

		if (rq->device_done_ns > now)
			break;
		ios_core_complete(s, rq, rq->result);
	}
}

/* ---- creation -------------------------------------------------------------------- */

static const struct ios_policy_ops *const policies[IOS_NPOLICY] = {
    [IOS_POLICY_NOOP] = &ios_policy_noop,
    [IOS_POLICY_ELEVATOR24] = &ios_policy_elevator24,
    [IOS_POLICY_ELEVATOR24AA] = &ios_policy_elevator24aa,
    [IOS_POLICY_DEADLINE] = &ios_policy_deadline,
    [IOS_POLICY_AS] = &ios_policy_as,
    [IOS_POLICY_DBAWARE] = &ios_policy_dbaware,
};

/* What readahead issues its reads through (struct ios_ra_core). */
static const struct ios_ra_core ra_core = {
    .submit = ios_core_submit_internal,
    .queue = ios_core_queue,
    .finish = ios_core_finish,
};

struct ios_sched *ios_core_create(const struct ios_settings *set, const struct ios_backend_ops *be)
{
	struct ios_sched *s;
	bool virt = be->virtual_clock;
	int ret;

	if ((unsigned)set->policy >= IOS_NPOLICY ||
	    (set->policy != IOS_POLICY_DIRECT && !policies[set->policy])) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->set = *set;
	s->wake_fd = -1;
	pthread_mutex_init(&s->sub_lock, NULL);
	ios_list_init(&s->submitted);
	ios_list_init(&s->ready);
	ios_list_init(&s->inflight);
	ios_list_init(&s->held);
	s->clock = virt ? virtual_clock : real_clock;
	if (ios_fault_configured(set) && !(s->fault = ios_fault_create(set)))
		goto fail;
	if (set->policy == IOS_POLICY_DIRECT && !virt) {
		s->sync_mode = true;
		return s;
	}
	s->pol_ops = policies[set->policy] ? policies[set->policy] : &ios_policy_noop;
	s->nfiles_tab = 256;
	s->files = calloc(s->nfiles_tab, sizeof(*s->files));
	if (!s->files)
		goto fail;
	if (set->device_model != IOS_DEVICE_NONE) {
		s->dev = ios_device_create(set);
		if (!s->dev)
			goto fail;
	}
	if (set->wal_inline && !s->dev && !virt)
		s->inline_classes = 1u << IOS_CLASS_WAL | 1u << IOS_CLASS_XACT;
	if (set->other_inline && !s->dev && !virt)
		s->inline_classes |= 1u << IOS_CLASS_OTHER;
	if ((set->data_inline == IOS_DATA_INLINE_YES ||
	     (set->data_inline == IOS_DATA_INLINE_AUTO && set->data_buffered)) &&
	    !s->dev && !virt)
		s->inline_classes |= 1u << IOS_CLASS_HEAP | 1u << IOS_CLASS_INDEX |
				     1u << IOS_CLASS_FSM | 1u << IOS_CLASS_VM |
				     1u << IOS_CLASS_TEMP | 1u << IOS_CLASS_META;
	if (set->ra_window_kb > 0 && set->policy != IOS_POLICY_DIRECT) { /* as in the daemon */
		s->ra = ios_ra_create(set, &ra_core);
		if (!s->ra)
			goto fail;
	}
	/* the throttle and the bulk limit hold queued writeback: none when
	 * data runs inline */
	if (set->policy == IOS_POLICY_DBAWARE && !(s->inline_classes & 1u << IOS_CLASS_HEAP))
		s->bulk_limit = (size_t)set->bulk_inflight_kb * 1024;
	if (set->policy == IOS_POLICY_DBAWARE && set->wal_target_us > 0 &&
	    !(s->inline_classes & 1u << IOS_CLASS_HEAP) && !(s->wbt = ios_wbt_create(set)))
		goto fail;
	ret = s->pol_ops->init(s);
	if (ret < 0) {
		errno = -ret;
		goto fail;
	}
	s->be_ops = be;
	if (!virt) {
		s->wake_fd = eventfd(0, EFD_CLOEXEC);
		if (s->wake_fd < 0)
			goto fail_pol;
	}
	ret = s->be_ops->init(s);
	if (ret < 0) {
		errno = -ret;
		goto fail_pol;
	}
	return s;
fail_pol:
	s->pol_ops->exit(s);
fail:
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	ios_ra_destroy(s);
	ios_wbt_destroy(s->wbt);
	ios_device_destroy(s->dev);
	ios_fault_destroy(s->fault);
	free(s->files);
	pthread_mutex_destroy(&s->sub_lock);
	free(s);
	return NULL;
}

void ios_destroy(struct ios_sched *s)
{
	if (!s)
		return;
	if (!s->sync_mode) {
		s->be_ops->exit(s); /* drains: every request completes first */
		ios_ra_destroy(s);
		s->pol_ops->exit(s);
		if (s->wake_fd >= 0)
			close(s->wake_fd);
		ios_device_destroy(s->dev);
		ios_wbt_destroy(s->wbt);
		free(s->files);
	}
	ios_fault_destroy(s->fault);
	pthread_mutex_destroy(&s->sub_lock);
	free(s);
}

void ios_get_counters(struct ios_sched *s, struct ios_counters *out)
{
	*out = s->cnt;
	out->bytes_inflight = s->bytes_inflight;
	ios_ra_counters(s, out);
}

bool ios_runs_inline(const struct ios_sched *s, enum ios_class cls)
{
	return s->sync_mode || (s->inline_classes >> (unsigned)cls & 1u);
}

bool ios_is_async(const struct ios_sched *s)
{
	return !s->sync_mode;
}

void ios_attach_stats(struct ios_sched *s, struct ios_stats *st)
{
	s->stats = st;
	ios_wbt_publish(s, NULL); /* this scheduler's throttle, or none */
}

void ios_attach_trace(struct ios_sched *s, struct ios_trace_writer *w)
{
	s->trace = w;
}

int ios_pending(struct ios_sched *s)
{
	int n = 0;
	struct ios_list *p;

	pthread_mutex_lock(&s->sub_lock);
	for (p = s->submitted.next; p != &s->submitted; p = p->next)
		n++;
	pthread_mutex_unlock(&s->sub_lock);
	return n + (int)s->nr_queued + s->nr_inflight;
}

/* ---- the virtual clock ------------------------------------------------------------- */

uint64_t ios_virtual_now(const struct ios_sched *s)
{
	return s->vclock;
}

/* backend_step() -- the back end's own transfers that are due complete. */
static void backend_step(struct ios_sched *s)
{
	if (s->be_ops->step)
		s->be_ops->step(s);
}

void ios_virtual_advance(struct ios_sched *s, uint64_t until)
{
	for (;;) {
		uint64_t t;

		ios_core_take_submissions(s);
		ios_core_dispatch(s);
		backend_step(s);
		ios_core_release_held(s);
		ios_core_dispatch(s);
		t = ios_core_next_event(s);
		if (t > until)
			break;
		if (t > s->vclock)
			s->vclock = t;
	}
	if (until > s->vclock)
		s->vclock = until;
	ios_core_take_submissions(s);
	ios_core_dispatch(s);
	backend_step(s);
	ios_core_release_held(s);
	ios_core_dispatch(s);
}
