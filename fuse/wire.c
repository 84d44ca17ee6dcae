/*
 * wire.c -- hooks on the raw /dev/fuse traffic (libfuse custom I/O).
 *
 * libfuse 3.14 does not know FUSE_HANDLE_KILLPRIV_V2 (protocol 7.33).
 * Without it the kernel asks the daemon for "security.capability" before
 * every write(2) into the page cache (file_remove_privs() on a superblock
 * without SB_NOSEC): one GETXATTR round trip per 8 KiB PostgreSQL write,
 * which more than triples the time of a bulk import.  With it, the kernel
 * sets SB_NOSEC and instead tells the daemon, in the WRITE, SETATTR and OPEN
 * requests, when set-user-ID and set-group-ID bits must be cleared.
 *
 * So these hooks (1) add FUSE_HANDLE_KILLPRIV_V2 to the INIT reply libfuse
 * writes, and (2) remember, per worker thread, whether the request being
 * processed carries a KILL_SUIDGID flag; pfs_wire_kill_suidgid() reads it.
 * libfuse reads a request and processes it in the same worker thread.
 *
 * (3) With fuse.clone_fd a worker reads from a /dev/fuse descriptor of its
 * own (loop.c), and the kernel looks a reply up only among the requests
 * read from the descriptor the reply is written to; libfuse 3.14 has no
 * public API for that (its channels are internal), and always writes to the
 * session's descriptor.  So the read hook notes, for each request that gets
 * a reply, the descriptor it came from, and the write hook sends the reply
 * there, whichever thread replies (the scheduler's dispatcher completes
 * queued requests).
 *
 * What must stay true: a reply other than INIT's is written unchanged, to
 * the descriptor its request was read from; the flag is offered only when
 * the kernel offered it.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <linux/fuse.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/uio.h>
#include <unistd.h>

static _Atomic uint64_t init_unique = UINT64_MAX;
static atomic_bool kernel_has_killpriv_v2;
static __thread bool tls_kill_suidgid;

bool pfs_wire_kill_suidgid(void)
{
	return tls_kill_suidgid;
}

static void note_request(const void *buf, size_t len)
{
	const struct fuse_in_header *in = buf;
	const char *arg = (const char *)buf + sizeof(*in);

	tls_kill_suidgid = false;
	if (len < sizeof(*in))
		return;
	switch (in->opcode) {
	case FUSE_INIT:
		if (len >= sizeof(*in) + sizeof(struct fuse_init_in)) {
			const struct fuse_init_in *ii = (const void *)arg;

			atomic_store(&kernel_has_killpriv_v2,
				     (ii->flags & FUSE_HANDLE_KILLPRIV_V2) != 0);
			atomic_store(&init_unique, in->unique);
		}
		break;
	case FUSE_WRITE:
		if (len >= sizeof(*in) + sizeof(struct fuse_write_in))
			tls_kill_suidgid =
			    (((const struct fuse_write_in *)(const void *)arg)->write_flags &
			     FUSE_WRITE_KILL_SUIDGID) != 0;
		break;
	case FUSE_SETATTR:
		if (len >= sizeof(*in) + sizeof(struct fuse_setattr_in))
			tls_kill_suidgid =
			    (((const struct fuse_setattr_in *)(const void *)arg)->valid &
			     FATTR_KILL_SUIDGID) != 0;
		break;
	case FUSE_OPEN:
		if (len >= sizeof(*in) + sizeof(struct fuse_open_in))
			tls_kill_suidgid =
			    (((const struct fuse_open_in *)(const void *)arg)->open_flags &
			     FUSE_OPEN_KILL_SUIDGID) != 0;
		break;
	default:
		break;
	}
}

/* ---- (3) replies through the descriptor of their request ---------------- */

#define ROUTE_BUCKETS 1024 /* power of two */

struct route {
	struct route *next;
	uint64_t unique;
	int fd;
};

static __thread int tls_read_fd = -1;
static pthread_mutex_t route_lock = PTHREAD_MUTEX_INITIALIZER;
static struct route *routes[ROUTE_BUCKETS]; /* under route_lock */
static atomic_uint nroutes;

void pfs_wire_read_from(int fd)
{
	tls_read_fd = fd;
}

/* route_add() -- the reply to @unique goes to @fd. */
static void route_add(uint64_t unique, int fd)
{
	struct route *r = malloc(sizeof(*r));
	static atomic_bool said;

	if (!r) {
		if (!atomic_exchange(&said, true))
			pfs_log(LOG_ERR, "out of memory: a reply may not reach the kernel");
		return;
	}
	r->unique = unique;
	r->fd = fd;
	pthread_mutex_lock(&route_lock);
	r->next = routes[unique / 2 % ROUTE_BUCKETS];
	routes[unique / 2 % ROUTE_BUCKETS] = r;
	atomic_fetch_add(&nroutes, 1);
	pthread_mutex_unlock(&route_lock);
}

/* route_take() -- where the reply to @unique goes: the descriptor its
 * request was read from, or @fd. */
static int route_take(uint64_t unique, int fd)
{
	struct route **pp, *r;

	if (atomic_load(&nroutes) == 0)
		return fd;
	pthread_mutex_lock(&route_lock);
	for (pp = &routes[unique / 2 % ROUTE_BUCKETS]; (r = *pp); pp = &r->next)
		if (r->unique == unique) {
			*pp = r->next;
			atomic_fetch_sub(&nroutes, 1);
			fd = r->fd;
			free(r);
			break;
		}
	pthread_mutex_unlock(&route_lock);
	return fd;
}

/* has_reply() -- whether a request of @opcode is answered (the others:
 * forgets, interrupts and notification replies). */
static bool has_reply(uint32_t opcode)
{
	return opcode != FUSE_FORGET && opcode != FUSE_BATCH_FORGET && opcode != FUSE_INTERRUPT &&
	       opcode != FUSE_NOTIFY_REPLY;
}

static ssize_t hook_read(int fd, void *buf, size_t len, void *userdata)
{
	int from = tls_read_fd >= 0 ? tls_read_fd : fd;
	ssize_t n = read(from, buf, len);

	(void)userdata;
	if (n > 0)
		note_request(buf, (size_t)n);
	if (from != fd && n >= (ssize_t)sizeof(struct fuse_in_header)) {
		const struct fuse_in_header *in = buf;

		if (has_reply(in->opcode))
			route_add(in->unique, from);
	}
	return n;
}

/* patch_init() -- set FUSE_HANDLE_KILLPRIV_V2 in the INIT reply's flags,
 * wherever the iovec split puts that field. */
static void patch_init(struct iovec *iov, int count)
{
	size_t want = sizeof(struct fuse_out_header) + offsetof(struct fuse_init_out, flags);
	size_t pos = 0;
	int i;

	for (i = 0; i < count; i++) {
		if (want >= pos && want + sizeof(uint32_t) <= pos + iov[i].iov_len) {
			uint32_t flags;
			char *p = (char *)iov[i].iov_base + (want - pos);

			memcpy(&flags, p, sizeof(flags));
			flags |= FUSE_HANDLE_KILLPRIV_V2;
			memcpy(p, &flags, sizeof(flags));
			return;
		}
		pos += iov[i].iov_len;
	}
}

static ssize_t hook_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	if (count > 0 && iov[0].iov_len >= sizeof(struct fuse_out_header)) {
		const struct fuse_out_header *out = iov[0].iov_base;
		uint64_t iu = atomic_load(&init_unique);

		if (out->unique != 0) /* 0: a notification */
			fd = route_take(out->unique, fd);
		if (out->unique == iu && out->error == 0 &&
		    out->len >= sizeof(*out) + offsetof(struct fuse_init_out, max_write) &&
		    atomic_load(&kernel_has_killpriv_v2)) {
			patch_init(iov, count);
			atomic_store(&init_unique, UINT64_MAX);
		}
	}
	return writev(fd, iov, count);
}

static const struct fuse_custom_io wire_io = {
    .read = hook_read,
    .writev = hook_writev,
};

int pfs_wire_attach(struct fuse_session *se)
{
	int ret = fuse_session_custom_io(se, &wire_io, fuse_session_fd(se));

	return ret < 0 ? ret : 0;
}
