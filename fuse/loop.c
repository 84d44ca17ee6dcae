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
 * What must stay true: a buffer is owned by exactly one party (the worker
 * or one request); the loop ends when the kernel ends the connection
 * (ENODEV) or the session is told to exit.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#define ALIGN 4096u
/* a WRITE's data follows these two headers */
#define WRITE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))
/* libfuse 3.14 reads up to 256 pages plus a header page per request */
#define RECV_SIZE (256u * 4096u + 4096u)

struct loop {
	struct fuse_session *se;
	int error;
	pthread_mutex_t lock;
};

static atomic_ulong handled; /* requests processed, all workers */

unsigned long pfs_loop_requests(void)
{
	return atomic_load_explicit(&handled, memory_order_relaxed);
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

static void *worker(void *arg)
{
	struct loop *l = arg;
	struct fuse_buf fbuf;
	int res = 0;

	while (!fuse_session_exited(l->se)) {
		if (!tls_base || tls_taken) {
			tls_base = buffer_new();
			tls_size = RECV_SIZE + ALIGN;
			tls_taken = false;
			if (!tls_base) {
				res = -ENOMEM;
				break;
			}
		}
		memset(&fbuf, 0, sizeof(fbuf));
		fbuf.mem = tls_base + ALIGN - WRITE_HDR;
		fbuf.size = RECV_SIZE;
		res = fuse_session_receive_buf(l->se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0)
			break;
		fuse_session_process_buf(l->se, &fbuf);
		atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
	}
	if (res < 0 && res != -ENODEV) {
		pthread_mutex_lock(&l->lock);
		if (!l->error)
			l->error = res;
		pthread_mutex_unlock(&l->lock);
	}
	/* the first worker to leave ends the session for all */
	fuse_session_exit(l->se);
	if (!tls_taken)
		free(tls_base);
	tls_base = NULL;
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

int pfs_loop(struct fuse_session *se, unsigned nthreads)
{
	struct loop l = {.se = se, .error = 0};
	pthread_t *t = calloc(nthreads, sizeof(*t));
	unsigned i, started = 0;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&l.lock, NULL);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &l) == 0)
			started++;
		else
			break;
	if (!started) {
		free(t);
		return -EAGAIN;
	}
	/* the others are blocked in read(): the kernel ends the connection for
	 * all of them at unmount; a signal-thread exit has its own timeout */
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	pthread_mutex_destroy(&l.lock);
	return l.error;
}
