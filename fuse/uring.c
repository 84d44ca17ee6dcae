/*
 * uring.c -- FUSE over io_uring: requests taken from ring entries instead
 * of read(2) on /dev/fuse, replies committed with the next fetch.
 *
 * The kernel (6.14+, enable_uring) has one queue per possible CPU; a
 * request goes to the queue of the CPU its caller runs on.  Here each
 * queue is served by fuse.uring_threads threads pinned to that CPU, each
 * with an io_uring of its own (SQE128) holding fuse.uring_depth entries:
 * a header buffer (struct ring_header) and a payload buffer registered
 * with FUSE_IO_URING_CMD_REGISTER.  A completion on an entry is a request
 * in its buffers; its reply is written back into them and committed with
 * FUSE_IO_URING_CMD_COMMIT_AND_FETCH, one io_uring_enter(2) that also
 * makes the entry wait for the next request.  The caller is woken on its
 * own CPU by a thread of that CPU: no second CPU joins the round trip.
 *
 * Requests still go through libfuse (fuse_session_process_buf()), so every
 * handler, wire.c's INIT and OPEN patching and the request accounting work
 * as for /dev/fuse; a request is copied, as /dev/fuse would give it (the
 * in header, the op header, then the payload), into the thread's receive
 * buffer (loop.c's, laid out the same way: a queued large write takes it).
 * A reply reaches wire.c's writev hook, which hands it here
 * (ring_reply()): it is copied into its entry, and the entry's thread
 * commits it -- at once if that thread is the one replying (a handler may
 * go on working after its reply, as an early acknowledged write does),
 * else after an eventfd wakes it (the scheduler's threads complete queued
 * requests).  Only a ring's own thread submits to it: the next request of
 * an entry is delivered as task work of the thread that submitted the
 * entry's last command.
 *
 * /dev/fuse stays read by loop.c's workers: the kernel sends FORGET and
 * INTERRUPT there, and every request before the ring is ready (the kernel
 * holds new requests from the INIT reply until every queue has an entry,
 * or a registration failed, which turns the ring off for the connection).
 * Notifications are written to /dev/fuse as before.
 *
 * Once INIT has put FUSE_OVER_IO_URING in, the kernel holds every request
 * of the connection until each queue has an entry: a queue left without
 * one (a ring or an eventfd that cannot be had: EMFILE, ENOMEM) would hang
 * the mount.  Then a registration the kernel refuses turns the ring off,
 * and that takes a ring of its own: one is made before INIT
 * (pfs_uring_prepare()) and kept until the rings are up, so that turning
 * off needs no descriptor and no memory the failure may have taken.
 *
 * What must stay true: an entry is committed exactly once per request,
 * by its own thread, after its reply is in its buffers; a handler reads
 * its request from a copy, never from the entry (whose buffers take the
 * reply, and the next request once committed); entries and buffers live
 * until pfs_uring_release(), called once no reply can come any more (a WAL
 * mount's session, drained), or as long as the process (on the list of
 * rings) -- the mount's, whose late replies may still look an entry up;
 * if a queue has no entry after the start, the ring is turned off.
 */
#include "pgiofs_i.h"
#include "ringexit.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* Protocol 7.42, newer than <linux/fuse.h> on Debian 12 and libfuse 3.14. */
#define URING_IN_OUT_SZ 128 /* fuse_in_header / fuse_out_header */
#define URING_OP_IN_SZ	128 /* the op's own header (fuse_write_in, ...) */
struct ring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's unique id */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};
struct ring_header {
	char in_out[URING_IN_OUT_SZ];
	char op_in[URING_OP_IN_SZ];
	struct ring_ent_in_out ent;
};
struct ring_cmd { /* in the SQE's 80 command bytes */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
enum { RING_CMD_REGISTER = 1, RING_CMD_COMMIT_AND_FETCH = 2 };

#define ALIGN	       4096u
#define IN_HDR	       sizeof(struct fuse_in_header)
#define OUT_HDR	       sizeof(struct fuse_out_header)
#define EVENTFD_TAG    UINT64_MAX /* user_data of the eventfd read */
#define ENABLE_URING   "/sys/module/fuse/parameters/enable_uring"
#define RELEASE_WAIT_S 5 /* for the ring threads to leave, at release */

struct ring_thread;

struct ring_ent {
	struct ring_thread *t;
	struct ring_header *h;
	char *payload; /* u->payload bytes */
	struct iovec iov[2];
	_Atomic uint64_t unique; /* the request it holds, 0 if none */
	bool dead;		 /* the kernel ended it */
	bool again;		 /* registered again after a refused commit */
	struct ring_ent *next;	 /* on the thread's list of replied entries */
};

struct ring_thread {
	struct pfs_uring *u;
	unsigned qid;
	struct io_uring ring;
	int efd;       /* written when another thread replied */
	uint64_t ebuf; /* the eventfd read's buffer */
	struct ring_ent *ents;
	unsigned nents, live;
	pthread_mutex_t lock;
	struct ring_ent *replied;   /* under lock: to commit */
	pthread_mutex_t serve_lock; /* held while serving a request */
	bool stopped;		    /* under serve_lock: serve no more */
	int started;		    /* under u->lock: 0 starting, 1 ready, -errno */
	bool have_ring;		    /* ring set up (ring_exit() it) */
	atomic_bool quit;	    /* leave the loop (pfs_uring_release()) */
};

struct pfs_uring {
	struct pfs *fs;
	int fd; /* the session's /dev/fuse */
	size_t payload;
	unsigned nqueues, per_queue, nthreads;
	struct ring_thread *threads; /* NULL until pfs_uring_start() */
	struct io_uring spare;	     /* made before INIT, to turn the ring off */
	bool have_spare;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned running;	/* under lock: ring threads not yet ended */
	atomic_ulong requests;	/* served over the ring */
	struct pfs_uring *next; /* in rings */
};

/* every ring the process made: they live as long as it does (a late reply
 * may look an entry up), and stay reachable after their threads and the
 * mount that made them are gone (a leak checker sees them kept, not lost) */
static struct pfs_uring *rings;
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;

/* the entry this thread is serving, until its reply is committed */
static __thread struct ring_ent *tls_ent;

/* ---- entries --------------------------------------------------------- */

static void prep_cmd(struct ring_thread *t, struct ring_ent *e, uint32_t op, uint64_t commit_id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	struct ring_cmd *cmd;

	if (!sqe) { /* the ring holds an SQE per entry and two more */
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
		if (!sqe) {
			log_msg(LOG_ERR, "fuse.uring: queue %u: no room to submit", t->qid);
			return;
		}
	}
	memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = t->u->fd;
	sqe->cmd_op = op;
	sqe->addr = (uint64_t)(uintptr_t)e->iov;
	sqe->len = 2;
	sqe->user_data = (uint64_t)(e - t->ents);
	cmd = (struct ring_cmd *)(void *)sqe->cmd;
	cmd->qid = (uint16_t)t->qid;
	cmd->commit_id = commit_id;
}

static void arm_eventfd(struct ring_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

	if (!sqe) {
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
		if (!sqe) {
			log_msg(LOG_ERR, "fuse.uring: queue %u: no room to submit", t->qid);
			return;
		}
	}
	io_uring_prep_read(sqe, t->efd, &t->ebuf, sizeof(t->ebuf), 0);
	sqe->user_data = EVENTFD_TAG;
}

/* put_reply() -- the reply @iov into entry @e's buffers: its out header,
 * then the rest into the payload; false if it does not fit. */
static bool put_reply(struct ring_ent *e, const struct iovec *iov, int count)
{
	size_t total = 0, at = 0;
	int i;

	for (i = 0; i < count; i++)
		total += iov[i].iov_len;
	if (total < OUT_HDR || total - OUT_HDR > e->t->u->payload)
		return false;
	for (i = 0; i < count; i++) {
		const char *src = iov[i].iov_base;
		size_t len = iov[i].iov_len;

		while (len) {
			size_t n = len;

			if (at < OUT_HDR) {
				n = len < OUT_HDR - at ? len : OUT_HDR - at;
				memcpy(e->h->in_out + at, src, n);
			} else {
				memcpy(e->payload + (at - OUT_HDR), src, n);
			}
			src += n;
			len -= n;
			at += n;
		}
	}
	e->h->ent.payload_sz = (uint32_t)(total - OUT_HDR);
	return true;
}

/* commit() -- send @e's reply and wait for its next request.  Called by
 * the entry's thread only. */
static void commit(struct ring_thread *t, struct ring_ent *e)
{
	uint64_t unique = atomic_load(&e->unique);

	atomic_store(&e->unique, 0);
	pfs_kernel_release(&t->u->fs->wire);
	prep_cmd(t, e, RING_CMD_COMMIT_AND_FETCH, unique);
}

/* find() -- the entry of session @u holding request @unique, or NULL. */
static struct ring_ent *find(struct pfs_uring *u, uint64_t unique)
{
	unsigned i, j;

	if (tls_ent && tls_ent->t->u == u && atomic_load(&tls_ent->unique) == unique)
		return tls_ent;
	for (i = 0; i < u->nthreads; i++) {
		struct ring_thread *t = &u->threads[i];

		for (j = 0; j < t->nents; j++)
			if (atomic_load(&t->ents[j].unique) == unique)
				return &t->ents[j];
	}
	return NULL;
}

/* answer_err() -- reply @err (< 0) to request @unique in entry @e. */
static void answer_err(struct ring_ent *e, uint64_t unique, int err)
{
	struct fuse_out_header eh = {.len = OUT_HDR, .error = err, .unique = unique};
	struct iovec iov = {&eh, sizeof(eh)};

	put_reply(e, &iov, 1);
}

/* ring_reply() -- wire.c's writev hook hands every reply here
 * (fs->wire.ring_reply): if it answers a request taken from a ring, put it
 * into its entry and return 1 (committed by the entry's thread); else 0. */
static int ring_reply(struct pfs *fs, const struct iovec *iov, int count)
{
	struct pfs_uring *u = atomic_load(&fs->uring);
	const struct fuse_out_header *out = iov[0].iov_base;
	struct ring_ent *e;
	struct ring_thread *t;
	uint64_t one = 1;

	if (!u || out->unique == 0 || !(e = find(u, out->unique)))
		return 0;
	if (!put_reply(e, iov, count)) {
		static atomic_bool said;

		if (!atomic_exchange(&said, true))
			log_msg(LOG_ERR,
				"fuse.uring: a reply of %u bytes does not fit its ring entry; "
				"answered EIO",
				out->len);
		answer_err(e, out->unique, -EIO);
	}
	t = e->t;
	if (e == tls_ent) {
		/* at once, as a writev would: the handler may go on working
		 * (its request is a copy) */
		tls_ent = NULL;
		commit(t, e);
		io_uring_submit(&t->ring);
		return 1;
	}
	pthread_mutex_lock(&t->lock);
	e->next = t->replied;
	t->replied = e;
	pthread_mutex_unlock(&t->lock);
	if (write(t->efd, &one, sizeof(one)) < 0)
		log_msg(LOG_ERR, "fuse.uring: cannot wake a ring thread: %s", strerror(errno));
	return 1;
}

/* serve() -- the request in entry @e, through libfuse. */
static void serve(struct ring_thread *t, struct ring_ent *e)
{
	struct pfs_uring *u = t->u;
	struct fuse_in_header in;
	struct fuse_buf fbuf;
	uint32_t psz = e->h->ent.payload_sz;
	size_t op;
	char *buf;

	pfs_kernel_acquire(&u->fs->wire);
	memcpy(&in, e->h->in_out, sizeof(in));
	atomic_store(&e->unique, in.unique);
	if (in.len < IN_HDR + psz || (op = in.len - IN_HDR - psz) > URING_OP_IN_SZ ||
	    psz > u->payload) {
		log_msg(LOG_ERR,
			"fuse.uring: malformed request (opcode %u, %u bytes); answered EIO",
			in.opcode, in.len);
		answer_err(e, in.unique, -EIO);
		commit(t, e);
		return;
	}
	/* laid out as a worker reads it: a WRITE's data page aligned */
	buf = pfs_loop_buffer(IN_HDR + op);
	if (!buf) {
		answer_err(e, in.unique, -ENOMEM);
		commit(t, e);
		return;
	}
	memcpy(buf, &in, IN_HDR);
	memcpy(buf + IN_HDR, e->h->op_in, op);
	memcpy(buf + IN_HDR + op, e->payload, psz);
	memset(&fbuf, 0, sizeof(fbuf));
	fbuf.mem = buf;
	fbuf.size = in.len;
	pfs_wire_note(u->fs, buf, in.len);
	tls_ent = e;
	fuse_session_process_buf(u->fs->se, &fbuf);
	tls_ent = NULL; /* replied (committed) or not: from another thread */
	atomic_fetch_add_explicit(&u->requests, 1, memory_order_relaxed);
	pfs_loop_count_request();
}

/* take_replied() -- commit what other threads replied to. */
static void take_replied(struct ring_thread *t)
{
	struct ring_ent *e;

	pthread_mutex_lock(&t->lock);
	e = t->replied;
	t->replied = NULL;
	pthread_mutex_unlock(&t->lock);
	while (e) {
		struct ring_ent *next = e->next;

		if (!e->dead)
			commit(t, e);
		e = next;
	}
}

/* ---- threads ----------------------------------------------------------- */

/* ended() -- the kernel completed entry @e's command with @res < 0. */
static void ended(struct ring_thread *t, struct ring_ent *e, int res)
{
	atomic_store(&e->unique, 0);
	/* a commit the kernel refused on a live connection (its request was
	 * gone): the entry is out of the kernel's hands, register it again,
	 * once, or its queue would lose it */
	if (res != -ENOTCONN && res != -ECANCELED && res != -ECONNABORTED && !e->again &&
	    !e->dead) {
		log_msg(LOG_WARNING,
			"fuse.uring: queue %u: a commit failed (%s); entry registered again",
			t->qid, strerror(-res));
		e->again = true;
		prep_cmd(t, e, RING_CMD_REGISTER, 0);
		return;
	}
	if (res != -ENOTCONN && res != -ECANCELED && res != -ECONNABORTED)
		log_msg(LOG_ERR, "fuse.uring: queue %u: an entry ended: %s", t->qid,
			strerror(-res));
	if (!e->dead) {
		e->dead = true;
		t->live--;
	}
}

static void set_started(struct ring_thread *t, int v)
{
	pthread_mutex_lock(&t->u->lock);
	t->started = v;
	pthread_cond_broadcast(&t->u->cond);
	pthread_mutex_unlock(&t->u->lock);
}

/* setup() -- the ring, its entries registered; 0 or -errno. */
static int setup(struct ring_thread *t)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQE128};
	struct io_uring_cqe *cqe;
	unsigned i, head;
	int ret, err = 0;

	ret = io_uring_queue_init_params(t->nents + 2, &t->ring, &p);
	if (ret < 0)
		return ret;
	t->have_ring = true;
	arm_eventfd(t);
	for (i = 0; i < t->nents; i++)
		prep_cmd(t, &t->ents[i], RING_CMD_REGISTER, 0);
	ret = io_uring_submit(&t->ring);
	if (ret < 0)
		return ret;
	/* a registration the kernel refuses completes at once, with an
	 * error; an entry may also already hold a request (the ring became
	 * ready and requests were waiting): then the loop must run, and
	 * takes the errors as ended entries */
	io_uring_for_each_cqe(&t->ring, head, cqe)
	{
		if (cqe->user_data == EVENTFD_TAG)
			continue;
		if (cqe->res >= 0)
			return 0;
		if (!err)
			err = cqe->res;
	}
	return err;
}

static void *ring_main(void *arg)
{
	struct ring_thread *t = arg;
	cpu_set_t cpus;
	int ret;

	pthread_setname_np(pthread_self(), "pgiofs-ring");
	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	/* on its CPU: the caller sleeps there while this thread serves it */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	ret = setup(t);
	set_started(t, ret < 0 ? ret : 1);
	if (ret < 0)
		goto out;
	t->live = t->nents;
	while (t->live > 0 && !atomic_load(&t->quit)) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		ret = io_uring_submit_and_wait(&t->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			log_msg(LOG_ERR, "fuse.uring: queue %u: %s", t->qid, strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&t->ring, head, cqe)
		{
			struct ring_ent *e;

			n++;
			if (cqe->user_data == EVENTFD_TAG) {
				arm_eventfd(t);
				continue;
			}
			if (cqe->user_data >= t->nents)
				continue;
			e = &t->ents[cqe->user_data];
			if (cqe->res < 0) {
				ended(t, e, cqe->res);
				continue;
			}
			e->again = false;
			pthread_mutex_lock(&t->serve_lock);
			if (!t->stopped)
				serve(t, e);
			pthread_mutex_unlock(&t->serve_lock);
		}
		io_uring_cq_advance(&t->ring, n);
		take_replied(t);
	}
	/* the ring and the buffers stay: a late reply may look an entry up
	 * (until pfs_uring_release()) */
out:
	pthread_mutex_lock(&t->u->lock);
	t->u->running--;
	pthread_cond_broadcast(&t->u->cond);
	pthread_mutex_unlock(&t->u->lock);
	return NULL;
}

/* queues() -- the kernel's queue count: its possible CPUs. */
static unsigned queues(void)
{
	int n = get_nprocs_conf();

	return n > 0 ? (unsigned)n : 1;
}

/* drop_spare() -- the ring kept to turn the ring off is not needed. */
static void drop_spare(struct pfs_uring *u)
{
	if (u && u->have_spare) {
		ring_exit(&u->spare);
		u->have_spare = false;
	}
}

/* turn_off() -- make the kernel give up the ring of @u's connection: a
 * registration it refuses (no buffers) turns FUSE over io_uring off and
 * lets the requests it holds go to /dev/fuse.  Sent on the spare ring,
 * made before INIT; the spare is dropped. */
static void turn_off(struct pfs_uring *u)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	if (!u->have_spare) {
		log_msg(LOG_ERR, "fuse.uring: cannot turn the ring off: requests may hang");
		return;
	}
	sqe = io_uring_get_sqe(&u->spare);
	if (sqe) {
		memset(sqe, 0, 2 * sizeof(*sqe));
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = u->fd;
		sqe->cmd_op = RING_CMD_REGISTER; /* sqe->len 0: refused */
		io_uring_submit_and_wait(&u->spare, 1);
		if (io_uring_peek_cqe(&u->spare, &cqe) == 0)
			io_uring_cqe_seen(&u->spare, cqe);
	}
	drop_spare(u);
}

/* uring_fill() -- the threads and buffers of @u's rings, not started;
 * 0 or -errno (what was made is freed by pfs_uring_release()). */
static int uring_fill(struct pfs_uring *u)
{
	unsigned i, j;

	u->fd = fuse_session_fd(u->fs->se);
	u->threads = calloc(u->nthreads, sizeof(*u->threads));
	if (!u->threads)
		return -ENOMEM;
	for (i = 0; i < u->nthreads; i++) {
		struct ring_thread *t = &u->threads[i];

		t->u = u;
		t->qid = i / u->per_queue;
		t->nents = (unsigned)u->fs->set.uring_depth;
		pthread_mutex_init(&t->lock, NULL);
		pthread_mutex_init(&t->serve_lock, NULL);
		t->efd = eventfd(0, EFD_CLOEXEC);
		if (t->efd < 0)
			return -errno;
		t->ents = calloc(t->nents, sizeof(*t->ents));
		if (!t->ents)
			return -ENOMEM;
		for (j = 0; j < t->nents; j++) {
			struct ring_ent *e = &t->ents[j];
			void *h = NULL, *p = NULL;

			if (posix_memalign(&h, 64, sizeof(*e->h)) != 0 ||
			    posix_memalign(&p, ALIGN, u->payload) != 0) {
				free(h);
				return -ENOMEM;
			}
			e->t = t;
			e->h = h;
			e->payload = p;
			e->iov[0] = (struct iovec){e->h, sizeof(*e->h)};
			e->iov[1] = (struct iovec){e->payload, u->payload};
		}
	}
	return 0;
}

/* unserved() -- the first queue none of whose threads has its entries
 * registered, or @u->nqueues if every queue has one.  Caller holds
 * u->lock, every thread has started (or failed). */
static unsigned unserved(const struct pfs_uring *u)
{
	unsigned q, i;

	for (q = 0; q < u->nqueues; q++) {
		for (i = q * u->per_queue; i < (q + 1) * u->per_queue; i++)
			if (u->threads[i].started > 0)
				break;
		if (i == (q + 1) * u->per_queue)
			return q;
	}
	return q;
}

int pfs_uring_start(struct pfs *fs)
{
	struct pfs_uring *u = atomic_load(&fs->uring);
	sigset_t all, old;
	unsigned i, q;
	int ret = 0, err = 0;

	if (!atomic_load(&fs->wire.uring) || !u) {
		drop_spare(u); /* INIT did not take the ring */
		return 0;
	}
	u->fd = fuse_session_fd(fs->se);
	if (fs->set.fault_uring_refused) {
		ret = -ECONNREFUSED;
		goto off;
	}
	ret = uring_fill(u);
	if (ret < 0)
		goto off;
	/* replies look the threads up from now on */
	atomic_store(&fs->wire.ring_reply, ring_reply);
	/* the threads take no signals (they are the signal thread's) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < u->nthreads; i++) {
		pthread_attr_t attr;
		pthread_t th;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&u->lock);
		if (pthread_create(&th, &attr, ring_main, &u->threads[i]) != 0)
			u->threads[i].started = -EAGAIN;
		else
			u->running++;
		pthread_mutex_unlock(&u->lock);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->nthreads; i++) {
		while (u->threads[i].started == 0)
			pthread_cond_wait(&u->cond, &u->lock);
		if (u->threads[i].started < 0 && err == 0)
			err = u->threads[i].started;
	}
	q = unserved(u);
	pthread_mutex_unlock(&u->lock);
	if (q < u->nqueues) {
		/* the kernel waits for that queue forever: unless a refused
		 * registration turned the ring off already, turn it off */
		ret = err;
		goto off;
	}
	if (err < 0)
		log_msg(LOG_WARNING,
			"fuse.uring: a ring thread could not be set up (%s); its queue is served "
			"by the others",
			strerror(-err));
	drop_spare(u);
	return 0;
off:
	turn_off(u);
	atomic_store(&fs->wire.uring, false);
	snprintf(fs->uring_note, sizeof(fs->uring_note), "the ring could not be set up: %s",
		 strerror(-ret));
	return ret;
}

void pfs_uring_stop(struct pfs *fs)
{
	struct pfs_uring *u = atomic_load(&fs->uring);
	unsigned i;

	for (i = 0; u && u->threads && i < u->nthreads; i++) {
		pthread_mutex_lock(&u->threads[i].serve_lock);
		u->threads[i].stopped = true;
		pthread_mutex_unlock(&u->threads[i].serve_lock);
	}
}

void pfs_uring_release(struct pfs *fs)
{
	struct pfs_uring *u = atomic_exchange(&fs->uring, NULL), **pp;
	struct timespec until;
	uint64_t one = 1;
	unsigned i, j;

	if (!u)
		return;
	atomic_store(&fs->wire.ring_reply, NULL);
	drop_spare(u);
	/* the threads leave their loops (an entry the kernel still holds
	 * would otherwise keep one waiting for good) */
	for (i = 0; u->threads && i < u->nthreads; i++) {
		atomic_store(&u->threads[i].quit, true);
		if (u->threads[i].efd >= 0 && write(u->threads[i].efd, &one, sizeof(one)) < 0)
			log_msg(LOG_ERR, "fuse.uring: cannot wake a ring thread: %s",
				strerror(errno));
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += RELEASE_WAIT_S;
	pthread_mutex_lock(&u->lock);
	while (u->running > 0 && pthread_cond_timedwait(&u->cond, &u->lock, &until) == 0)
		;
	i = u->running;
	pthread_mutex_unlock(&u->lock);
	if (i > 0) {
		log_msg(LOG_WARNING,
			"fuse.uring: %u ring threads did not end; their rings are kept", i);
		return;
	}
	/* closing a ring cancels what its entries still had in the kernel */
	for (i = 0; u->threads && i < u->nthreads; i++) {
		struct ring_thread *t = &u->threads[i];

		if (t->have_ring)
			ring_exit(&t->ring);
		if (t->efd >= 0)
			close(t->efd);
		for (j = 0; t->ents && j < t->nents; j++) {
			free(t->ents[j].h);
			free(t->ents[j].payload);
		}
		free(t->ents);
		pthread_mutex_destroy(&t->lock);
		pthread_mutex_destroy(&t->serve_lock);
	}
	pthread_mutex_lock(&rings_lock);
	for (pp = &rings; *pp && *pp != u; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = u->next;
	pthread_mutex_unlock(&rings_lock);
	free(u->threads);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	free(u);
}

unsigned long pfs_uring_requests(struct pfs *fs)
{
	struct pfs_uring *u = atomic_load(&fs->uring);

	return u ? atomic_load(&u->requests) : 0;
}

/* the CPUs the daemon may run on, as before any ring thread pinned itself */
static cpu_set_t process_cpus;
static atomic_bool have_process_cpus;

void pfs_uring_unpin(void)
{
	if (atomic_load(&have_process_cpus))
		pthread_setaffinity_np(pthread_self(), sizeof(process_cpus), &process_cpus);
}

void pfs_uring_prepare(struct pfs *fs)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQE128};
	struct pfs_uring *u;
	int ret;

	if (fs->set.uring == PGIOFS_URING_NO)
		return;
	/* the mount's, from the main thread: before any ring thread exists */
	if (!atomic_load(&have_process_cpus) &&
	    sched_getaffinity(0, sizeof(process_cpus), &process_cpus) == 0)
		atomic_store(&have_process_cpus, true);
	u = calloc(1, sizeof(*u));
	ret = u ? io_uring_queue_init_params(2, &u->spare, &p) : -ENOMEM;
	if (ret < 0) {
		snprintf(fs->uring_note, sizeof(fs->uring_note),
			 "io_uring with 128-byte entries is not available here: %s",
			 strerror(-ret));
		free(u);
		return;
	}
	/* the spare, kept: pfs_uring_start() turns the ring off with it if
	 * the rings cannot be had; and what describes the rings */
	u->have_spare = true;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	u->fs = fs;
	u->fd = -1;
	/* the kernel's largest request: max_write, or max_pages pages */
	u->payload = (size_t)fs->set.max_write_kb * 1024;
	if (u->payload < 256 * 4096)
		u->payload = 256 * 4096;
	u->nqueues = queues();
	u->per_queue = (unsigned)fs->set.uring_threads;
	u->nthreads = u->nqueues * u->per_queue;
	pthread_mutex_lock(&rings_lock);
	u->next = rings;
	rings = u;
	pthread_mutex_unlock(&rings_lock);
	atomic_store(&fs->uring, u);
	atomic_store(&fs->wire.allow_uring, true);
}

int pfs_uring_enabled(char *why, size_t len)
{
	char buf[8] = "";
	int fd = open(ENABLE_URING, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		snprintf(why, len,
			 "the kernel has no FUSE over io_uring: it needs Linux 6.14 or later built "
			 "with CONFIG_FUSE_IO_URING");
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0 && (buf[0] == 'Y' || buf[0] == '1'))
		return 1;
	snprintf(why, len, "the kernel offers FUSE over io_uring only with %s = Y", ENABLE_URING);
	return 0;
}

void pfs_uring_explain(struct pfs *fs)
{
	if (atomic_load(&fs->wire.uring) || fs->uring_note[0])
		return;
	if (fs->set.uring == PGIOFS_URING_NO)
		snprintf(fs->uring_note, sizeof(fs->uring_note), "fuse.uring = no");
	else if (pfs_uring_enabled(fs->uring_note, sizeof(fs->uring_note)))
		snprintf(fs->uring_note, sizeof(fs->uring_note),
			 "the kernel did not offer FUSE over io_uring in INIT");
}

void pfs_uring_describe(struct pfs *fs, char *buf, size_t len)
{
	const struct pfs_uring *u = atomic_load(&fs->uring);

	if (atomic_load(&fs->wire.uring) && u)
		snprintf(buf, len, "%u queues x %u threads x %u entries", u->nqueues, u->per_queue,
			 (unsigned)fs->set.uring_depth);
	else
		snprintf(buf, len, "%s", fs->uring_note);
}
