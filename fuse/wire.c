/*
 * wire.c -- hooks on the raw /dev/fuse traffic (libfuse custom I/O).
 *
 * libfuse 3.14 speaks protocol 7.38 and knows neither
 * FUSE_HANDLE_KILLPRIV_V2's use here nor FUSE passthrough (7.40), so these
 * hooks read every request header and may patch two kinds of reply:
 *
 *   - INIT.  FUSE_HANDLE_KILLPRIV_V2 is added when the kernel offered it.
 *     Without it the kernel asks the daemon for "security.capability" before
 *     every write(2) into the page cache (file_remove_privs() on a superblock
 *     without SB_NOSEC): one GETXATTR round trip per 8 KiB PostgreSQL write,
 *     which more than triples the time of a bulk import.  With it, the kernel
 *     sets SB_NOSEC and instead tells the daemon, in the WRITE, SETATTR and
 *     OPEN requests, when set-user-ID and set-group-ID bits must be cleared
 *     (pfs_wire_kill_suidgid()).  FUSE_DIRECT_IO_ALLOW_MMAP (7.39) is added
 *     when offered, so that a WAL file opened direct can still be mapped
 *     shared (otherwise ENODEV).  When passthrough was chosen for the mount
 *     (pfs_wire_enable_passthrough(), called from the INIT handler), the
 *     reply also gets FUSE_PASSTHROUGH and max_stack_depth 1; the kernel
 *     accepts that only without FUSE_WRITEBACK_CACHE, which the handler has
 *     then left out.
 *   - OPEN and CREATE.  A handler that opens a file in passthrough arms its
 *     reply (pfs_wire_arm_passthrough()) with a backing id registered by
 *     pfs_wire_backing_open(); the hook sets FOPEN_PASSTHROUGH and the id in
 *     the fuse_open_out libfuse wrote, and clears FOPEN_KEEP_CACHE and
 *     FOPEN_DIRECT_IO, which must not come with it.
 *
 * libfuse reads a request, processes it and writes its reply in the same
 * worker thread, so what a request carries (its unique id, opcode, the
 * KILL_SUIDGID flag) and what its handler armed are kept per thread.
 *
 * With fuse.clone_fd a worker reads from a /dev/fuse descriptor of its
 * own (loop.c), and the kernel looks a reply up only among the requests
 * read from the descriptor the reply is written to; libfuse 3.14 has no
 * public API for that (its channels are internal), and always writes to the
 * session's descriptor.  So the read hook notes, for each request that gets
 * a reply, the descriptor it came from, and the write hook sends the reply
 * there, whichever thread replies (the scheduler's dispatcher completes
 * queued requests).
 *
 * With FUSE over io_uring (fuse.uring, uring.c) the INIT reply also gets
 * FUSE_OVER_IO_URING when the kernel offered it and the setting allows; a
 * request taken from a ring entry is noted here like one read from
 * /dev/fuse (pfs_wire_note()), and its reply, patched like any other, is
 * handed to the ring instead of being written to a descriptor.
 *
 * What must stay true: any other reply is written unchanged, to the
 * descriptor its request was read from (or to its ring entry); a flag is
 * offered to the kernel only when the kernel offered it; an armed reply is
 * patched only if it answers the request this thread is processing,
 * without error, and is disarmed whatever happens.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <linux/fuse.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

/* Protocol 7.40 (passthrough), newer than <linux/fuse.h> on Debian 12 (7.38)
 * and than libfuse 3.14. */
#ifndef FUSE_PASSTHROUGH
#define FUSE_PASSTHROUGH (1ULL << 37) /* init flags: in flags2, bit 5 */
#endif
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36) /* 7.39: flags2, bit 4 */
#endif
#ifndef FUSE_OVER_IO_URING
#define FUSE_OVER_IO_URING (1ULL << 41) /* 7.42: flags2, bit 9 */
#endif
#ifndef FOPEN_PASSTHROUGH
#define FOPEN_PASSTHROUGH (1u << 7)
#endif
/* fuse_init_out.max_stack_depth: unused[0] in 7.38, after flags2 */
#define INIT_OUT_MAX_STACK_DEPTH (offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t))
/* fuse_open_out.backing_id: the padding of 7.38 */
#define OPEN_OUT_BACKING_ID (offsetof(struct fuse_open_out, open_flags) + sizeof(uint32_t))

struct pfs_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define PFS_DEV_IOC_BACKING_OPEN  _IOW(FUSE_DEV_IOC_MAGIC, 1, struct pfs_backing_map)
#define PFS_DEV_IOC_BACKING_CLOSE _IOW(FUSE_DEV_IOC_MAGIC, 2, uint32_t)

/* the request this worker thread is processing, and what its handler armed */
static __thread bool tls_kill_suidgid;
static __thread uint64_t tls_unique;
static __thread uint32_t tls_opcode;
static __thread int32_t tls_backing_id; /* armed: > 0 */
static __thread bool tls_patched;

bool pfs_wire_kill_suidgid(void)
{
	return tls_kill_suidgid;
}

bool pfs_wire_passthrough_offered(const struct pfs *fs)
{
	return atomic_load(&fs->wire.offered_passthrough);
}

void pfs_wire_enable_passthrough(struct pfs *fs)
{
	atomic_store(&fs->wire.passthrough, true);
}

void pfs_wire_arm_passthrough(int backing_id)
{
	tls_backing_id = backing_id;
	tls_patched = false;
}

bool pfs_wire_disarm(void)
{
	bool patched = tls_patched;

	tls_backing_id = 0;
	tls_patched = false;
	return patched;
}

int pfs_wire_backing_open(const struct pfs *fs, int fd)
{
	struct pfs_backing_map map = {.fd = fd};
	int id = ioctl(fuse_session_fd(fs->se), PFS_DEV_IOC_BACKING_OPEN, &map);

	if (id < 0)
		return -errno;
	return id > 0 ? id : -EIO; /* 0 is not an id the kernel hands out */
}

void pfs_wire_backing_close(const struct pfs *fs, int backing_id)
{
	uint32_t id = (uint32_t)backing_id;

	if (ioctl(fuse_session_fd(fs->se), PFS_DEV_IOC_BACKING_CLOSE, &id) < 0)
		log_msg(LOG_ERR, "cannot close passthrough backing id %d: %s", backing_id,
			strerror(errno));
}

void pfs_wire_note(struct pfs *fs, const void *buf, size_t len)
{
	const struct fuse_in_header *in = buf;
	const char *arg = (const char *)buf + sizeof(*in);

	tls_kill_suidgid = false;
	tls_backing_id = 0;
	if (len < sizeof(*in))
		return;
	tls_unique = in->unique;
	tls_opcode = in->opcode;
	switch (in->opcode) {
	case FUSE_INIT:
		if (len >= sizeof(*in) + offsetof(struct fuse_init_in, flags2)) {
			const struct fuse_init_in *ii = (const void *)arg;
			uint64_t flags = ii->flags;

			if ((flags & FUSE_INIT_EXT) && len >= sizeof(*in) + sizeof(*ii))
				flags |= (uint64_t)ii->flags2 << 32;
			atomic_store(&fs->wire.offered_killpriv_v2,
				     (flags & FUSE_HANDLE_KILLPRIV_V2) != 0);
			atomic_store(&fs->wire.offered_passthrough,
				     (flags & FUSE_INIT_EXT) && (flags & FUSE_PASSTHROUGH));
			atomic_store(&fs->wire.offered_uring,
				     (flags & FUSE_INIT_EXT) && (flags & FUSE_OVER_IO_URING));
			atomic_store(&fs->wire.offered_dio_mmap,
				     (flags & FUSE_INIT_EXT) &&
					 (flags & FUSE_DIRECT_IO_ALLOW_MMAP));
			atomic_store(&fs->wire.init_unique, in->unique);
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

/* a request's unique id is unique within its connection only (a WAL mount
 * is a connection of its own): a route is keyed by the session's
 * descriptor too */
struct route {
	struct route *next;
	uint64_t unique;
	int session_fd;
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

/* route_add() -- the reply to @unique of the session on @session_fd goes
 * to @fd. */
static void route_add(uint64_t unique, int session_fd, int fd)
{
	struct route *r = malloc(sizeof(*r));
	static atomic_bool said;

	if (!r) {
		if (!atomic_exchange(&said, true))
			log_msg(LOG_ERR, "out of memory: a reply may not reach the kernel");
		return;
	}
	r->unique = unique;
	r->session_fd = session_fd;
	r->fd = fd;
	pthread_mutex_lock(&route_lock);
	r->next = routes[unique / 2 % ROUTE_BUCKETS];
	routes[unique / 2 % ROUTE_BUCKETS] = r;
	atomic_fetch_add(&nroutes, 1);
	pthread_mutex_unlock(&route_lock);
}

/* route_take() -- where the reply to @unique of the session on @fd goes:
 * the descriptor its request was read from, or @fd. */
static int route_take(uint64_t unique, int fd)
{
	struct route **pp, *r;

	if (atomic_load(&nroutes) == 0)
		return fd;
	pthread_mutex_lock(&route_lock);
	for (pp = &routes[unique / 2 % ROUTE_BUCKETS]; (r = *pp); pp = &r->next)
		if (r->unique == unique && r->session_fd == fd) {
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

	if (n > 0) {
		pfs_kernel_acquire(&((struct pfs *)userdata)->wire);
		pfs_wire_note(userdata, buf, (size_t)n);
	}
	if (from != fd && n >= (ssize_t)sizeof(struct fuse_in_header)) {
		const struct fuse_in_header *in = buf;

		if (has_reply(in->opcode))
			route_add(in->unique, fd, from);
	}
	return n;
}

/* field() -- the @len bytes at byte @pos of the reply, if one iovec element
 * holds them all (libfuse writes a header and one argument), else NULL. */
static char *field(struct iovec *iov, int count, size_t pos, size_t len)
{
	size_t at = 0;
	int i;

	for (i = 0; i < count; i++) {
		if (pos >= at && pos + len <= at + iov[i].iov_len)
			return (char *)iov[i].iov_base + (pos - at);
		at += iov[i].iov_len;
	}
	return NULL;
}

static void set_u32(char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t get_u32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* patch_init() -- the INIT reply's flags: FUSE_HANDLE_KILLPRIV_V2 if the
 * kernel offered it; FUSE_PASSTHROUGH (and what comes with it) if enabled. */
static void patch_init(struct pfs *fs, struct iovec *iov, int count, size_t total)
{
	const size_t hdr = sizeof(struct fuse_out_header);
	char *flags = field(iov, count, hdr + offsetof(struct fuse_init_out, flags), 4);
	char *flags2 = field(iov, count, hdr + offsetof(struct fuse_init_out, flags2), 4);
	char *depth = field(iov, count, hdr + INIT_OUT_MAX_STACK_DEPTH, 4);
	uint32_t f;

	if (!flags)
		return;
	f = get_u32(flags);
	if (atomic_load(&fs->wire.offered_killpriv_v2))
		f |= FUSE_HANDLE_KILLPRIV_V2;
	if (atomic_load(&fs->wire.offered_dio_mmap) && flags2) {
		f |= FUSE_INIT_EXT;
		set_u32(flags2, get_u32(flags2) | (uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32));
	}
	if (atomic_load(&fs->wire.allow_uring) && atomic_load(&fs->wire.offered_uring) && flags2 &&
	    total >= hdr + offsetof(struct fuse_init_out, flags2) + 4) {
		f |= FUSE_INIT_EXT;
		set_u32(flags2, get_u32(flags2) | (uint32_t)(FUSE_OVER_IO_URING >> 32));
		atomic_store(&fs->wire.uring, true);
	}
	if (atomic_load(&fs->wire.passthrough)) {
		if (flags2 && depth && total >= hdr + INIT_OUT_MAX_STACK_DEPTH + 4 &&
		    !(f & FUSE_WRITEBACK_CACHE)) {
			f |= FUSE_INIT_EXT;
			set_u32(flags2, get_u32(flags2) | (uint32_t)(FUSE_PASSTHROUGH >> 32));
			set_u32(depth, 1); /* a backing file may not be stacked itself */
		} else {
			/* the handler checked all this: never reached */
			atomic_store(&fs->wire.passthrough, false);
		}
	}
	set_u32(flags, f);
}

/* patch_open() -- the armed fuse_open_out of an OPEN or CREATE reply. */
static void patch_open(struct iovec *iov, int count)
{
	size_t pos = sizeof(struct fuse_out_header);
	char *of, *id;

	if (tls_opcode == FUSE_CREATE)
		pos += sizeof(struct fuse_entry_out);
	else if (tls_opcode != FUSE_OPEN)
		return;
	of = field(iov, count, pos + offsetof(struct fuse_open_out, open_flags), 4);
	id = field(iov, count, pos + OPEN_OUT_BACKING_ID, 4);
	if (!of || !id)
		return;
	set_u32(of, (get_u32(of) & ~(uint32_t)(FOPEN_KEEP_CACHE | FOPEN_DIRECT_IO)) |
			FOPEN_PASSTHROUGH);
	set_u32(id, (uint32_t)tls_backing_id);
	tls_patched = true;
}

static ssize_t hook_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct pfs *fs = userdata;

	if (count > 0 && iov[0].iov_len >= sizeof(struct fuse_out_header)) {
		const struct fuse_out_header *out = iov[0].iov_base;
		pfs_ring_reply_fn ring_reply = atomic_load(&fs->wire.ring_reply);

		if (out->unique == atomic_load(&fs->wire.init_unique) && out->error == 0 &&
		    out->len >= sizeof(*out) + offsetof(struct fuse_init_out, max_write)) {
			patch_init(fs, iov, count, out->len);
			atomic_store(&fs->wire.init_unique, UINT64_MAX);
		} else if (tls_backing_id > 0 && out->unique == tls_unique && out->error == 0) {
			patch_open(iov, count);
		}
		/* a request that came over the ring is answered there */
		if (ring_reply && ring_reply(fs, iov, count))
			return (ssize_t)out->len;
		if (out->unique != 0) /* 0: a notification */
			fd = route_take(out->unique, fd);
	}
	pfs_kernel_release(&fs->wire);
	return writev(fd, iov, count);
}

static const struct fuse_custom_io wire_io = {
    .read = hook_read,
    .writev = hook_writev,
};

int pfs_wire_attach(struct pfs *fs)
{
	int ret;

	atomic_store(&fs->wire.init_unique, UINT64_MAX);
	ret = fuse_session_custom_io(fs->se, &wire_io, fuse_session_fd(fs->se));
	return ret < 0 ? ret : 0;
}
