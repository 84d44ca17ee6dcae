/*
 * loop.c -- the session loop: worker threads that read requests from
 * /dev/fuse into buffers the requests may keep.
 *
 * libfuse's own loop reuses a worker's buffer as soon as the handler
 * returns, so a queued write would have to copy its data out.  Here each
 * worker reads into a buffer laid out so that a WRITE's data lands 4 KiB
 * aligned (ready for O_DIRECT); a handler that queues the data takes the
 * whole buffer with pfs_loop_take_buffer() and frees it when the request
 * completes, and the worker reads the next request into a fresh one.
 *
 * Workers come and go as libfuse's multi-threaded loop has them: one at
 * first; a worker that takes a request when no other is waiting for one
 * starts another (up to fuse.max_threads); a worker that finishes a request
 * while fuse.max_idle_threads others are waiting exits, but at most one per
 * fuse.worker_exit_ms: libfuse's loop lets them all go at once, and a burst
 * of background WRITEs then makes and ends hundreds of threads a second (a
 * stack and a receive buffer mapped, faulted in and unmapped each time).
 * With
 * fuse.clone_fd each worker reads from a /dev/fuse descriptor of its own
 * (FUSE_DEV_IOC_CLONE), so that the kernel's per-descriptor queue of
 * requests being processed is not shared by all; wire.c sends each reply
 * back through the descriptor its request came from, the only one the
 * kernel looks it up in.  A descriptor a worker leaves behind stays open
 * (kept for the next worker) until the process exits, because requests
 * read from it may still be completed, and replied to through it, by the
 * scheduler after the loop ended.
 *
 * What must stay true: a buffer is owned by exactly one party (the worker
 * or one request); at least one worker runs until the loop ends; the loop
 * ends when the kernel ends the connection (ENODEV) or the session is told
 * to exit, and only then.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <syslog.h>
#include <unistd.h>

#define ALIGN 4096u
/* a WRITE's data follows these two headers */
#define WRITE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))
/* libfuse 3.14 reads up to 256 pages plus a header page per request */
#define RECV_SIZE (256u * 4096u + 4096u)

struct loop {
	struct fuse_session *se;
	unsigned max_threads, max_idle;
	uint64_t exit_gap_ns; /* fuse.worker_exit_ms */
	bool clone_fd;
	pthread_mutex_t lock;
	pthread_cond_t gone; /* a worker exited */
	/* under lock */
	unsigned nworkers;     /* running */
	unsigned nidle;	       /* waiting for a request */
	int error;	       /* the first error that ended the loop */
	uint64_t last_exit_ns; /* when a worker last left for being idle */
	int *spare_fds;	       /* cloned descriptors of workers that exited */
	unsigned nspare;
	bool clone_failed;  /* said once */
	struct loop *older; /* the loop started before this one */
};

static atomic_ulong handled; /* requests processed, all workers */
/* every loop started, kept for the process's life (see pfs_loop()) */
static _Atomic(struct loop *) loops;

unsigned long pfs_loop_requests(void)
{
	return atomic_load_explicit(&handled, memory_order_relaxed);
}

void pfs_loop_count_request(void)
{
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

/* this worker's current buffer: base (to free) and its size */
static __thread char *tls_base;
static __thread size_t tls_size;
static __thread bool tls_taken;

static char *buffer_new(void)
{
	void *p = NULL;

	/* + ALIGN: the request starts WRITE_HDR bytes before a page boundary */
	if (posix_memalign(&p, ALIGN, RECV_SIZE + ALIGN) != 0)
		return NULL;
	return p;
}

char *pfs_loop_buffer(size_t hdr)
{
	if (!tls_base || tls_taken) {
		tls_base = buffer_new();
		tls_size = RECV_SIZE + ALIGN;
		tls_taken = false;
		if (!tls_base)
			return NULL;
	}
	return tls_base + ALIGN - hdr;
}

size_t pfs_loop_buffer_bytes(void)
{
	return RECV_SIZE + ALIGN;
}

void *pfs_loop_take_buffer(const void *data)
{
	const char *d = data;

	if (!tls_base || tls_taken || d < tls_base || d >= tls_base + tls_size)
		return NULL;
	tls_taken = true;
	return tls_base;
}

/* clone_fd__() -- a /dev/fuse descriptor of the session's connection for a
 * new worker: one a worker left, or a new clone; -1 (the session's own) if
 * none can be made.  Caller holds l->lock. */
static int clone_fd__(struct loop *l)
{
	uint32_t master = (uint32_t)fuse_session_fd(l->se);
	int fd;

	if (l->nspare)
		return l->spare_fds[--l->nspare];
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd >= 0 && ioctl(fd, FUSE_DEV_IOC_CLONE, &master) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0 && !l->clone_failed) {
		l->clone_failed = true;
		log_msg(LOG_WARNING,
			"fuse.clone_fd: cannot clone the /dev/fuse descriptor (%s); workers "
			"share one",
			strerror(errno));
	}
	return fd;
}

static void *worker(void *arg);

/* may_leave__() -- whether an idle worker may exit now: none did for
 * fuse.worker_exit_ms.  Caller holds l->lock. */
static bool may_leave__(struct loop *l)
{
	uint64_t now;

	if (!l->exit_gap_ns)
		return true;
	now = ios_now_ns();
	if (l->last_exit_ns && now - l->last_exit_ns < l->exit_gap_ns)
		return false;
	l->last_exit_ns = now;
	return true;
}

/* start_worker__() -- one more worker; false if it could not be started.
 * Caller holds l->lock. */
static bool start_worker__(struct loop *l)
{
	pthread_attr_t attr;
	pthread_t t;
	bool ok;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	l->nworkers++;
	ok = pthread_create(&t, &attr, worker, l) == 0;
	if (!ok)
		l->nworkers--;
	pthread_attr_destroy(&attr);
	return ok;
}

/* worker_exit__() -- this worker leaves: hand its descriptor on.  Caller
 * (the worker itself) holds l->lock.  Its thread is renamed first: it
 * lingers a moment after it stops counting, and a new worker may start
 * meanwhile, so /proc shows at most max_threads "pgiofs-fuse" threads. */
static void worker_exit__(struct loop *l, int fd)
{
	pthread_setname_np(pthread_self(), "pgiofs-leaving");
	if (fd >= 0)
		l->spare_fds[l->nspare++] = fd; /* at most max_threads */
	l->nworkers--;
	pthread_cond_broadcast(&l->gone);
}

static void *worker(void *arg)
{
	struct loop *l = arg;
	struct fuse_buf fbuf;
	bool ended = false;
	int res = 0, fd = -1;

	pthread_setname_np(pthread_self(), "pgiofs-fuse");
	if (l->clone_fd) {
		pthread_mutex_lock(&l->lock);
		fd = clone_fd__(l);
		pthread_mutex_unlock(&l->lock);
	}
	pfs_wire_read_from(fd); /* this thread reads from it, replies go back */
	while (!fuse_session_exited(l->se)) {
		bool more;

		memset(&fbuf, 0, sizeof(fbuf));
		fbuf.mem = pfs_loop_buffer(WRITE_HDR);
		fbuf.size = RECV_SIZE;
		if (!fbuf.mem) {
			res = -ENOMEM;
			ended = true;
			break;
		}
		pthread_mutex_lock(&l->lock);
		l->nidle++;
		pthread_mutex_unlock(&l->lock);
		res = fuse_session_receive_buf(l->se, &fbuf);
		pthread_mutex_lock(&l->lock);
		l->nidle--;
		/* nobody else waits for the next request: start someone */
		more = res > 0 && l->nidle == 0 && l->nworkers < l->max_threads;
		if (more)
			start_worker__(l);
		pthread_mutex_unlock(&l->lock);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) {
			ended = true;
			break;
		}
		fuse_session_process_buf(l->se, &fbuf);
		atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
		pthread_mutex_lock(&l->lock);
		if (l->nidle >= l->max_idle && may_leave__(l)) { /* enough others wait */
			if (!tls_taken)
				free(tls_base);
			tls_base = NULL;
			worker_exit__(l, fd);
			pthread_mutex_unlock(&l->lock);
			return NULL;
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (!tls_taken)
		free(tls_base);
	tls_base = NULL;
	pthread_mutex_lock(&l->lock);
	if (ended && res < 0 && res != -ENODEV && !l->error)
		l->error = res;
	/* the end of the connection (or an error) ends the session for all */
	fuse_session_exit(l->se);
	worker_exit__(l, fd);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int pfs_loop_init(struct fuse_session *se)
{
	struct fuse_buf fbuf;
	char *base = buffer_new();
	int res;

	if (!base)
		return -ENOMEM;
	do {
		memset(&fbuf, 0, sizeof(fbuf));
		fbuf.mem = base + ALIGN - WRITE_HDR;
		fbuf.size = RECV_SIZE;
		res = fuse_session_receive_buf(se, &fbuf);
	} while (res == -EINTR || res == -EAGAIN);
	if (res > 0) {
		fuse_session_process_buf(se, &fbuf);
		atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
	}
	free(base);
	return res > 0 ? 0 : res == 0 ? -ENODEV : res;
}

int pfs_loop(struct fuse_session *se, const struct pgiofs_settings *set)
{
	/* one loop per session (the mount's and each WAL mount's); never
	 * freed: a worker's last unlock may still be running when the loop
	 * sees it gone, and its spare descriptors stay open (above) */
	struct loop *l = calloc(1, sizeof(*l));
	int ret;

	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->gone, NULL);
	l->se = se;
	l->max_threads = (unsigned)set->max_threads;
	l->max_idle = (unsigned)set->max_idle_threads;
	l->exit_gap_ns = (uint64_t)set->worker_exit_ms * 1000000u;
	l->clone_fd = set->clone_fd;
	l->spare_fds = calloc(l->max_threads, sizeof(*l->spare_fds));
	if (!l->spare_fds) {
		free(l);
		return -ENOMEM;
	}
	/* kept where the process can reach it, as it is meant to be (a leak
	 * checker would otherwise take it for one) */
	l->older = atomic_load(&loops);
	while (!atomic_compare_exchange_weak(&loops, &l->older, l))
		;
	pthread_mutex_lock(&l->lock);
	ret = start_worker__(l) ? 0 : -EAGAIN;
	/* the workers are blocked in read(): the kernel ends the connection
	 * for all of them at unmount; a signal-thread exit has its own
	 * timeout */
	while (ret == 0 && l->nworkers > 0)
		pthread_cond_wait(&l->gone, &l->lock);
	if (ret == 0)
		ret = l->error;
	/* the cloned descriptors stay open (see the top of the file) */
	pthread_mutex_unlock(&l->lock);
	return ret;
}
