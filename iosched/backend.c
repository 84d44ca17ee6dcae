/*
 * backend.c -- the two ways transfers are executed.
 *
 * uring: a dispatcher thread owns an io_uring.  It takes submissions, lets
 * the policy choose, queues readv/writev/fsync SQEs for what it dispatches
 * and submits them in one batch, then waits for completions, new
 * submissions (an eventfd polled through the ring) or the next timer
 * (policy or emulated device), whichever comes first.  io_uring does not
 * order an fsync after earlier writes: the core only dispatches a sync once
 * those writes have completed.  A short read or write (rare on local
 * filesystems, but what a filesystem filling up in the middle of a write
 * returns) is finished synchronously, which turns it into the backing
 * store's error (ENOSPC, EFBIG, EIO) with the bytes done before it.
 *
 * virtual: for tests.  A transfer is executed synchronously when it is
 * dispatched and completes when the emulated device says so, on a virtual
 * clock driven by ios_virtual_advance().  With ios_virtual_reorder() it is
 * performed only when it completes, after a random delay: transfers are in
 * flight together and take effect and complete out of order, as on a
 * device with a queue.
 */
#include "iosched_i.h"
#include "ringexit.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAKE_TAG ((uint64_t)1)

struct uring_be {
	struct io_uring ring;
	uint64_t wake_val;
	bool poll_armed;
};

/* finish_short() -- do the rest of a transfer io_uring left short after
 * @got bytes: the whole length (less only for a read at EOF), or -errno
 * with rq->xfer_done the bytes done before the error. */
static ssize_t finish_short(struct ios_rq *rq, ssize_t got)
{
	struct iovec stackv[16], *v = stackv;
	size_t skip = (size_t)got, more_done = 0;
	int i, n = 0;
	ssize_t more;

	rq->xfer_done = (size_t)got;
	if (rq->iovcnt > 16 && !(v = malloc(sizeof(*v) * (size_t)rq->iovcnt)))
		return -ENOMEM;
	for (i = 0; i < rq->iovcnt; i++) {
		if (skip >= rq->iov[i].iov_len) {
			skip -= rq->iov[i].iov_len;
			continue;
		}
		v[n].iov_base = (char *)rq->iov[i].iov_base + skip;
		v[n].iov_len = rq->iov[i].iov_len - skip;
		skip = 0;
		n++;
	}
	more = ios_req_rw(rq->req, v, n, rq->off + got, rq->len - (size_t)got, &more_done);
	if (v != stackv)
		free(v);
	rq->xfer_done += more_done;
	return more < 0 ? more : got + more;
}

static struct io_uring_sqe *get_sqe(struct uring_be *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static void arm_wake(struct ios_sched *s, struct uring_be *u)
{
	struct io_uring_sqe *sqe;

	if (u->poll_armed)
		return;
	sqe = get_sqe(u);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, s->wake_fd, &u->wake_val, sizeof(u->wake_val), 0);
	io_uring_sqe_set_data64(sqe, WAKE_TAG);
	u->poll_armed = true;
}

static int uring_start(struct ios_sched *s, struct ios_rq *rq)
{
	struct uring_be *u = s->be;
	struct io_uring_sqe *sqe = get_sqe(u);
	struct ios_req *req = rq->req;

	if (!sqe)
		return -EAGAIN;
	switch (req->dir) {
	case IOS_READ:
		io_uring_prep_readv2(sqe, req->fd, rq->iov, (unsigned)rq->iovcnt, (uint64_t)rq->off,
				     (req->flags & IOS_F_DROPBEHIND) ? RWF_DONTCACHE : 0);
		break;
	case IOS_WRITE:
		io_uring_prep_writev2(sqe, req->fd, rq->iov, (unsigned)rq->iovcnt,
				      (uint64_t)rq->off,
				      (req->flags & IOS_F_DROPBEHIND) ? RWF_DONTCACHE : 0);
		break;
	default:
		io_uring_prep_fsync(sqe, req->fd,
				    (req->flags & IOS_F_DATASYNC) ? IORING_FSYNC_DATASYNC : 0);
		break;
	}
	io_uring_sqe_set_data(sqe, rq);
	if (s->dev) { /* the later of the device's time and an injected delay */
		uint64_t t = ios_device_service(s->dev, rq, s->clock(s));

		if (t > rq->device_done_ns)
			rq->device_done_ns = t;
	}
	return 0;
}

static void handle_cqe(struct ios_sched *s, struct uring_be *u, struct io_uring_cqe *cqe)
{
	struct ios_rq *rq;
	ssize_t res = cqe->res;

	if (io_uring_cqe_get_data64(cqe) == WAKE_TAG) {
		u->poll_armed = false; /* the eventfd was read: re-armed below */
		return;
	}
	rq = io_uring_cqe_get_data(cqe);
	rq->xfer_done = 0;
	if (res == -EOPNOTSUPP && (rq->req->flags & IOS_F_DROPBEHIND))
		res = -EAGAIN;		     /* refused before anything was done: below */
	if (res == -EINTR || res == -EAGAIN) /* retry synchronously */
		res = rq->req->dir == IOS_SYNC ? ios_execute(rq->req)
					       : ios_req_rw(rq->req, rq->iov, rq->iovcnt, rq->off,
							    rq->len, &rq->xfer_done);
	else if (res >= 0 && (size_t)res < rq->len && (res > 0 || rq->req->dir == IOS_WRITE))
		res = finish_short(rq, res);	/* a write's error, or a read's EOF */
	if (rq->device_done_ns > s->clock(s)) { /* emulated device, injected delay */
		rq->result = res;
		ios_core_hold(s, rq);
		return;
	}
	ios_core_complete(s, rq, res);
}

static void *dispatcher(void *arg)
{
	struct ios_sched *s = arg;
	struct uring_be *u = s->be;

	for (;;) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts, *tsp = NULL;
		uint64_t next, now;
		unsigned head, n = 0;
		bool stop;
		int ret;

		ios_core_take_submissions(s);
		ios_core_release_held(s);
		ios_core_dispatch(s);
		pthread_mutex_lock(&s->sub_lock);
		stop = s->stopping;
		pthread_mutex_unlock(&s->sub_lock);
		if (stop && ios_core_idle(s) && ios_list_empty(&s->held))
			break;
		arm_wake(s, u);
		next = ios_core_next_event(s);
		now = s->clock(s);
		if (next != UINT64_MAX) {
			uint64_t d = next > now ? next - now : 0;

			ts.tv_sec = (long long)(d / 1000000000u);
			ts.tv_nsec = (long long)(d % 1000000000u);
			tsp = &ts;
		}
		ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, tsp, NULL);
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			continue;
		io_uring_for_each_cqe(&u->ring, head, cqe)
		{
			handle_cqe(s, u, cqe);
			n++;
		}
		io_uring_cq_advance(&u->ring, n);
	}
	return NULL;
}

static int uring_init(struct ios_sched *s)
{
	struct uring_be *u = calloc(1, sizeof(*u));
	unsigned entries = 8;
	int ret;

	if (!u)
		return -ENOMEM;
	while (entries < (unsigned)s->set.nr_requests + 8 && entries < 4096)
		entries *= 2;
	ret = io_uring_queue_init(entries, &u->ring, 0);
	if (ret < 0) {
		free(u);
		return ret;
	}
	s->be = u;
	ret = pthread_create(&s->thread, NULL, dispatcher, s);
	if (ret) {
		ring_exit(&u->ring);
		free(u);
		s->be = NULL;
		return -ret;
	}
	s->thread_started = true;
	return 0;
}

/* uring_exit() -- stop taking work once everything submitted completed. */
static void uring_exit(struct ios_sched *s)
{
	struct uring_be *u = s->be;
	uint64_t one = 1;

	pthread_mutex_lock(&s->sub_lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->sub_lock);
	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* saturated: the dispatcher is awake */
	}
	if (s->thread_started)
		pthread_join(s->thread, NULL);
	ring_exit(&u->ring); /* through libc under ThreadSanitizer (ringexit.h) */
	free(u);
	s->be = NULL;
}

const struct ios_backend_ops ios_backend_uring = {
    .name = "uring",
    .init = uring_init,
    .exit = uring_exit,
    .start = uring_start,
};

/* ---- virtual ------------------------------------------------------------------ */

/* ios_virtual_reorder()'s state: transfers in flight, by completion time */
struct virt_be {
	uint64_t rng; /* splitmix64 */
	uint64_t max_delay_ns;
	struct ios_list pending; /* rq->anode */
};

static int virt_init(struct ios_sched *s)
{
	(void)s;
	return 0;
}

static void virt_exit(struct ios_sched *s)
{
	/* complete what is left, as the real back end drains before stopping */
	ios_virtual_advance(s, UINT64_MAX / 2);
	free(s->be);
	s->be = NULL;
}

/* virt_perform() -- do @rq's transfer now. */
static void virt_perform(struct ios_rq *rq)
{
	struct ios_req *req = rq->req;

	if (req->flags & IOS_F_NOEXEC) /* a replay: the device alone times it */
		rq->result = req->dir == IOS_SYNC ? 0 : (ssize_t)rq->len;
	else if (req->dir == IOS_SYNC)
		rq->result = ios_execute(req);
	else
		rq->result = ios_req_rw(req, rq->iov, rq->iovcnt, rq->off, rq->len, &rq->xfer_done);
}

/* wb_ahead() -- add the writeback transfers on @list (in flight) to @o. */
static void wb_ahead(const struct ios_list *list, struct ios_virtual_start *o)
{
	const struct ios_list *p;

	for (p = list->next; p != list; p = p->next) {
		const struct ios_rq *h = ios_container_of(p, struct ios_rq, anode);

		if (ios_wbt_is_writeback(h->req)) {
			o->wb_bytes_ahead += h->len;
			o->wb_xfers_ahead++;
		}
	}
}

/* observe() -- tell ios_virtual_observe()'s function that @rq starts. */
static void observe(struct ios_sched *s, const struct ios_rq *rq, uint64_t now)
{
	struct virt_be *v = s->be;
	struct ios_virtual_start o = {
	    .now_ns = now,
	    .cls = rq->req->cls,
	    .dir = rq->req->dir,
	    .len = rq->len,
	    .nreq = rq->nreq,
	    .throttle_depth = s->wbt ? s->wbt->depth : 0,
	};

	wb_ahead(&s->held, &o);
	if (v)
		wb_ahead(&v->pending, &o);
	s->observe(s->observe_arg, &o);
}

static int virt_start(struct ios_sched *s, struct ios_rq *rq)
{
	struct virt_be *v = s->be;
	uint64_t now = s->clock(s);

	if (s->observe)
		observe(s, rq, now);

	if (s->dev) {
		uint64_t t = ios_device_service(s->dev, rq, now);

		if (t > rq->device_done_ns)
			rq->device_done_ns = t;
	}
	if (v) { /* performed when it completes, after a random delay */
		uint64_t t = now + ios_splitmix64(&v->rng) % (v->max_delay_ns + 1);

		if (t > rq->device_done_ns)
			rq->device_done_ns = t;
		ios_core_hold_on(&v->pending, rq);
		return 0;
	}
	virt_perform(rq);
	ios_core_hold(s, rq);
	return 0;
}

void ios_virtual_reorder(struct ios_sched *s, uint64_t seed, uint64_t max_delay_ns)
{
	struct virt_be *v;

	if (s->be_ops != &ios_backend_virtual || s->be || !(v = calloc(1, sizeof(*v))))
		return;
	v->rng = seed;
	v->max_delay_ns = max_delay_ns;
	ios_list_init(&v->pending);
	s->be = v;
}

void ios_virtual_observe(struct ios_sched *s, ios_virtual_observe_fn fn, void *arg)
{
	if (s->be_ops != &ios_backend_virtual)
		return;
	s->observe = fn;
	s->observe_arg = arg;
}

void ios_virtual_device_state(const struct ios_sched *s, struct ios_disk_state *out)
{
	if (s->dev)
		ios_disk_state(s->dev, s->vclock, out);
	else
		memset(out, 0, sizeof(*out));
}

/* virt_due() -- when the next reordered transfer completes; UINT64_MAX if
 * none is pending. */
static uint64_t virt_due(const struct ios_sched *s)
{
	const struct virt_be *v = s->be_ops == &ios_backend_virtual ? s->be : NULL;

	if (!v || ios_list_empty(&v->pending))
		return UINT64_MAX;
	return ios_container_of(v->pending.next, struct ios_rq, anode)->device_done_ns;
}

/* virt_step() -- perform and complete the reordered transfers due. */
static void virt_step(struct ios_sched *s)
{
	struct virt_be *v = s->be_ops == &ios_backend_virtual ? s->be : NULL;

	while (v && !ios_list_empty(&v->pending)) {
		struct ios_rq *rq = ios_container_of(v->pending.next, struct ios_rq, anode);

		if (rq->device_done_ns > s->vclock)
			break;
		virt_perform(rq);
		ios_core_complete(s, rq, rq->result);
	}
}

const struct ios_backend_ops ios_backend_virtual = {
    .name = "virtual",
    .virtual_clock = true,
    .init = virt_init,
    .exit = virt_exit,
    .start = virt_start,
    .due = virt_due,
    .step = virt_step,
};
