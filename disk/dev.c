/*
 * dev.c -- the modelled device: the image, the disk model and the requests
 * held until the model completes them.
 *
 * Every request on the image passes pgd_dev_submit(), in the order the
 * session thread received it from the kernel: it is stamped with the time
 * it reached the disk, modelled (ios_disk_serve(): the hdd serves one
 * request at a time, in arrival order, each starting when the one before is
 * done; a capped volume admits them in arrival order and serves many at
 * once, each with its own latency), performed on the image at once, and
 * held; the completion thread replies to each when the model says the disk
 * has completed it.  The hdd, the ssd and none complete in arrival order, a
 * capped volume does not, so the held requests are a min-heap by
 * completion time and the completion thread waits for its top, woken early
 * when a request that completes sooner arrives.  Every request performed is
 * then logged (wlog.c, with --log) in that order, before its reply can go
 * out: the write log, from which `pgdisk cut` builds the disk a power cut
 * would leave, holding each write until a later flush; with --requests,
 * every request with what the model said of it.
 *
 * What must stay true: a reply is sent exactly once, never before the
 * modelled completion (except when the session has ended); a write is
 * acknowledged only when all of it is on the image (a FUA write: and
 * synced), a flush only after fdatasync() of the image succeeded, and a
 * failure reaches the kernel as the error itself; a request an injected
 * fault (fault.c) fails or loses is not performed, and is logged as a
 * fault, never as performed; every request that succeeded is in the write
 * log before its reply is queued; nothing on the request path allocates
 * memory (a block device's server must not wait for memory that writeback
 * to its own device would free): the slots and buffers are allocated,
 * touched and locked before serving.
 */
#include "pgdisk_i.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* how the model sees each: a flush or discard moves no data */
static const enum ios_dir op_dir[PGD_NOPS] = {
    [PGD_READ] = IOS_READ,    [PGD_WRITE] = IOS_WRITE, [PGD_FLUSH] = IOS_SYNC,
    [PGD_DISCARD] = IOS_SYNC, [PGD_ZERO] = IOS_WRITE,
};

/* check_sector() -- read sector @n of the image: 0, or -errno (-EIO for a
 * short read) with the reason in @err. */
static int check_sector(int fd, uint64_t n, const char *path, char *err, size_t errlen)
{
	char buf[PGD_SECTOR];
	ssize_t r = pread(fd, buf, sizeof(buf), (off_t)(n * PGD_SECTOR));

	if (r == (ssize_t)sizeof(buf))
		return 0;
	snprintf(err, errlen, "image \"%s\" is damaged: cannot read sector %llu: %s", path,
		 (unsigned long long)n, r < 0 ? strerror(errno) : "it ends early");
	return r < 0 ? -errno : -EIO;
}

/* dio_alignment() -- what O_DIRECT on @fd needs of offsets, lengths and
 * buffers; 0 if the buffers we have (PGD_BUF_ALIGN) are not enough. */
static unsigned dio_alignment(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0 ||
	    !(stx.stx_mask & STATX_DIOALIGN) || stx.stx_dio_offset_align == 0)
		return PGD_BUF_ALIGN; /* not reported: the usual worst case */
	if (stx.stx_dio_mem_align > PGD_BUF_ALIGN)
		return 0;
	return stx.stx_dio_offset_align;
}

#define BUFS_BYTES ((size_t)PGD_NBUFS * PGD_MAX_IO + (size_t)PGD_NSMALL * PGD_SMALL_IO)

int pgd_dev_open(struct pgd_dev *d, const char *path, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	struct stat st;
	int ret, i;

	d->fd = d->fd_cached = -1;
	if (stat(path, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "image \"%s\": %s", path, strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "image \"%s\" is not a regular file", path);
		return -EINVAL;
	}
	d->fd_cached = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd_cached < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open image \"%s\" for reading and writing: %s", path,
			 strerror(errno));
		return ret;
	}
	if (flock(d->fd_cached, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		snprintf(err, errlen, "image \"%s\" is in use: %s", path,
			 errno == EWOULDBLOCK ? "another pgdisk serves it" : strerror(errno));
		return ret;
	}
	if (fstat(d->fd_cached, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "image \"%s\": %s", path, strerror(errno));
		return ret;
	}
	d->size = (uint64_t)st.st_size;
	if (d->size == 0 || d->size % PGD_SECTOR) {
		snprintf(err, errlen,
			 "image \"%s\" is damaged: its size (%llu bytes) is not a whole, non-zero "
			 "number of %d-byte sectors",
			 path, (unsigned long long)d->size, PGD_SECTOR);
		return -EINVAL;
	}
	ret = check_sector(d->fd_cached, 0, path, err, errlen);
	if (ret == 0)
		ret = check_sector(d->fd_cached, d->size / PGD_SECTOR - 1, path, err, errlen);
	if (ret < 0)
		return ret;
	/* O_DIRECT where the image's file system takes it: the image is not
	 * cached a second time below the file system on the loop device */
	d->fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (d->fd >= 0 && !(d->dio_align = dio_alignment(d->fd))) {
		close(d->fd);
		d->fd = -1;
	}
	if (d->fd < 0) {
		d->fd = dup(d->fd_cached);
		d->dio_align = 1;
		if (d->fd < 0)
			return -errno;
	}
	if (posix_memalign((void **)&d->bufs, PGD_BUF_ALIGN, BUFS_BYTES) ||
	    posix_memalign((void **)&d->bounce, PGD_BUF_ALIGN, PGD_MAX_IO)) {
		snprintf(err, errlen, "cannot allocate the request buffers: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* touched now: resident before mlockall() locks them */
	memset(d->bufs, 0, BUFS_BYTES);
	memset(d->bounce, 0, PGD_MAX_IO);
	for (i = 0; i < PGD_NBUFS; i++)
		d->free_buf[d->nfree_bufs++] = d->bufs + (size_t)i * PGD_MAX_IO;
	for (i = 0; i < PGD_NSMALL; i++)
		d->free_small[d->nfree_small++] =
		    d->bufs + (size_t)PGD_NBUFS * PGD_MAX_IO + (size_t)i * PGD_SMALL_IO;
	for (i = 0; i < PGD_NSLOTS; i++)
		d->free_slot[d->nfree++] = (uint16_t)(PGD_NSLOTS - 1 - i);
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* ios_now_ns()'s */
	pthread_cond_init(&d->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&d->space, NULL);
	pgd_fault_init(&d->faults, d->size);
	return 0;
}

int pgd_dev_model(struct pgd_dev *d, const struct ios_settings *set)
{
	d->disk = ios_disk_create(set, d->size);
	return d->disk ? 0 : -errno;
}

/* rw() -- all of @len bytes at @off, or -errno (a short transfer retried;
 * the end of the image reached early is -EIO). */
static ssize_t rw(struct pgd_dev *d, bool write, char *buf, uint64_t off, uint64_t len)
{
	int fd = off % d->dio_align == 0 && len % d->dio_align == 0 ? d->fd : d->fd_cached;
	uint64_t done = 0;

	while (done < len) {
		ssize_t r = write ? pwrite(fd, buf + done, len - done, (off_t)(off + done))
				  : pread(fd, buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += (uint64_t)r;
	}
	return (ssize_t)len;
}

/* perform() -- do @op on the image. */
static ssize_t perform(struct pgd_dev *d, enum pgd_op op, uint64_t off, uint64_t len,
		       const void *data, char *buf, bool fua)
{
	ssize_t r;

	switch (op) {
	case PGD_READ:
		return rw(d, false, buf, off, len);
	case PGD_WRITE:
		memcpy(d->bounce, data, len); /* aligned for O_DIRECT */
		r = rw(d, true, d->bounce, off, len);
		if (r >= 0 && fua && fdatasync(d->fd) < 0)
			r = -errno;
		return r;
	case PGD_FLUSH:
		return fdatasync(d->fd) < 0 ? -errno : 0;
	case PGD_DISCARD:
		return fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
				 (off_t)len) < 0
			   ? -errno
			   : 0;
	case PGD_ZERO:
		if (fallocate(d->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			      (off_t)len) == 0)
			return 0;
		if (errno != EOPNOTSUPP)
			return -errno;
		/* an image on a file system without ZERO_RANGE (tmpfs): a hole
		 * reads as zeros, and its space is allocated again, as a write
		 * of zeros would leave it */
		return fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
				 (off_t)len) < 0 ||
			       fallocate(d->fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0
			   ? -errno
			   : 0;
	default:
		return -EINVAL;
	}
}

/* ---- the held requests: a min-heap of slots by completion time --------------
 * (under d->lock) */

static bool held_before(const struct pgd_dev *d, unsigned a, unsigned b)
{
	return d->slot[d->held[a]].done_ns < d->slot[d->held[b]].done_ns;
}

static void held_swap(struct pgd_dev *d, unsigned a, unsigned b)
{
	uint16_t x = d->held[a];

	d->held[a] = d->held[b];
	d->held[b] = x;
}

/* held_push() -- hold slot @i; true if it is now the first to complete. */
static bool held_push(struct pgd_dev *d, uint16_t i)
{
	unsigned k = d->nheld++;

	d->held[k] = i;
	for (; k > 0 && held_before(d, k, (k - 1) / 2); k = (k - 1) / 2)
		held_swap(d, k, (k - 1) / 2);
	return k == 0;
}

/* held_pop() -- release the first to complete; its slot. */
static uint16_t held_pop(struct pgd_dev *d)
{
	uint16_t top = d->held[0];
	unsigned k = 0;

	d->held[0] = d->held[--d->nheld];
	for (;;) {
		unsigned c = 2 * k + 1;

		if (c >= d->nheld)
			break;
		if (c + 1 < d->nheld && held_before(d, c + 1, c))
			c++;
		if (!held_before(d, c, k))
			break;
		held_swap(d, c, k);
		k = c;
	}
	return top;
}

/* take_buf() -- a read buffer for @len bytes (a small one if it fits and
 * one is free), or NULL: wait. */
static char *take_buf(struct pgd_dev *d, uint64_t len)
{
	if (len <= PGD_SMALL_IO && d->nfree_small)
		return d->free_small[--d->nfree_small];
	return d->nfree_bufs ? d->free_buf[--d->nfree_bufs] : NULL;
}

static void give_buf(struct pgd_dev *d, char *buf)
{
	if (buf >= d->bufs + (size_t)PGD_NBUFS * PGD_MAX_IO)
		d->free_small[d->nfree_small++] = buf;
	else
		d->free_buf[d->nfree_bufs++] = buf;
}

void pgd_dev_submit(struct pgd_dev *d, fuse_req_t req, enum pgd_op op, uint64_t off, uint64_t len,
		    const void *data, bool fua)
{
	struct ios_disk_time t = {0};
	struct pgd_wlog_model m = {.arrival_realtime_ns = pgd_realtime_ns()};
	struct pgd_slot *s;
	char *buf = NULL;
	ssize_t result;
	uint64_t busy = 1, now;
	uint16_t si;
	unsigned i;
	int fault = 0;

	pthread_mutex_lock(&d->lock);
	while (!d->nfree || (op == PGD_READ && !(buf = take_buf(d, len))))
		pthread_cond_wait(&d->space, &d->lock);
	si = d->free_slot[--d->nfree]; /* ours until held_push() */
	s = &d->slot[si];
	pthread_mutex_unlock(&d->lock);

	m.arrival_ns = now = ios_now_ns();
	t.start_ns = t.done_ns = now;
	if (op == PGD_READ && off + len > d->size) /* a short read at the end */
		len = off < d->size ? d->size - off : 0;
	if (off + len > d->size || off + len < off) {
		result = -ENOSPC; /* beyond the end of the disk: nothing done */
	} else if ((op == PGD_READ || op == PGD_WRITE) && len > PGD_MAX_IO) {
		result = -EINVAL; /* more than the kernel was told it may send */
	} else {
		ios_disk_serve(d->disk, off, len, op_dir[op], now, &t);
		m.t = &t;
		fault = pgd_fault_check(&d->faults, op, off, len, now);
		if (fault) /* failed or lost: not performed, logged as a fault */
			result = fault < 0 ? fault : op == PGD_WRITE ? (ssize_t)len : 0;
		else
			result = perform(d, op, off, len, data, buf, fua);
		/* the data of a write is in d->bounce */
		pgd_wlog_append(d->wlog, op, fua, off, len, d->bounce, result, fault, &m);
	}
	pgd_wlog_append(d->rlog, op, fua, off, len, NULL, result, fault, &m);

	pthread_mutex_lock(&d->lock);
	*s = (struct pgd_slot){.req = req,
			       .op = op,
			       .done_ns = t.done_ns,
			       .seq = ++d->arrived,
			       .result = result,
			       .buf = buf};
	/* in service at its start: this one and those held that end later */
	for (i = 0; i < d->nheld; i++)
		busy += d->slot[d->held[i]].done_ns > t.start_ns;
	if (m.t && busy > d->cnt.in_service_max)
		d->cnt.in_service_max = busy;
	d->cnt.ops[op]++;
	d->cnt.bytes[op] += len;
	if (result < 0) /* counted before the reply, which the caller may act on */
		d->cnt.errors++;
	d->cnt.faults += fault != 0;
	d->cnt.service_ns += t.done_ns - t.start_ns;
	d->cnt.seek_ns += t.seek_ns;
	d->cnt.rotation_ns += t.rotation_ns;
	d->cnt.transfer_ns += t.transfer_ns;
	d->cnt.latency_ns += t.latency_ns;
	ios_stats_hist_add(&d->cnt.response, t.done_ns - now);
	if (held_push(d, si)) /* the completion thread waits for a later one */
		pthread_cond_signal(&d->work);
	if (d->nheld > d->cnt.held_max)
		d->cnt.held_max = d->nheld;
	pthread_mutex_unlock(&d->lock);
}

static void reply(const struct pgd_slot *s)
{
	if (s->result < 0)
		fuse_reply_err(s->req, (int)-s->result);
	else if (s->op == PGD_READ)
		fuse_reply_buf(s->req, s->buf, (size_t)s->result);
	else if (s->op == PGD_WRITE)
		fuse_reply_write(s->req, (size_t)s->result);
	else
		fuse_reply_err(s->req, 0);
}

/* completer() -- the completion thread: reply to the first held request to
 * complete when its modelled completion comes (every one at once when the
 * session has ended). */
static void *completer(void *arg)
{
	struct pgd_dev *d = arg;

	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0); /* wake when asked, not up to 50 us later */
	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct pgd_slot s;
		uint64_t now, late;

		while (!d->nheld && !d->stopping)
			pthread_cond_wait(&d->work, &d->lock);
		if (!d->nheld)
			break;
		s = d->slot[d->held[0]];
		now = ios_now_ns();
		if (!d->stopping && s.done_ns > now) {
			struct timespec ts = {.tv_sec = (time_t)(s.done_ns / 1000000000u),
					      .tv_nsec = (long)(s.done_ns % 1000000000u)};

			/* woken early by one that completes sooner, or on time */
			pthread_cond_timedwait(&d->work, &d->lock, &ts);
			continue;
		}
		d->free_slot[d->nfree++] = held_pop(d);
		pthread_mutex_unlock(&d->lock);
		late = now > s.done_ns ? now - s.done_ns : 0;
		reply(&s);
		pthread_mutex_lock(&d->lock);
		if (s.buf)
			give_buf(d, s.buf);
		d->cnt.completed++;
		if (s.seq < d->replied_seq)
			d->cnt.overtaken++;
		else
			d->replied_seq = s.seq;
		d->cnt.late_ns_sum += late;
		ios_stats_hist_add(&d->cnt.late, late);
		pthread_cond_signal(&d->space);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* ---- scheduling of the daemon's threads ------------------------------------- */

const char *pgd_sched_name(const struct pgd_sched *s, char *buf, size_t len)
{
	if (s->policy == SCHED_FIFO)
		snprintf(buf, len, "fifo:%d", s->priority);
	else if (s->priority)
		snprintf(buf, len, "nice:%d", s->priority);
	else
		snprintf(buf, len, "other");
	return buf;
}

/* set_sched() -- put thread @th (@tid for its nice value) in the real-time
 * class at @prio when @realtime; where that is refused (no CAP_SYS_NICE, a
 * cgroup without real-time time), the highest priority of the normal class
 * granted.  What it got into @out; a refusal is logged once per thread. */
static void set_sched(pthread_t th, pid_t tid, const char *name, bool realtime, int prio,
		      struct pgd_sched *out)
{
	struct sched_param sp = {.sched_priority = prio};
	int ret = realtime ? pthread_setschedparam(th, SCHED_FIFO, &sp) : 0, nice;

	*out = (struct pgd_sched){.policy = SCHED_OTHER};
	if (realtime && ret == 0) {
		*out = (struct pgd_sched){.policy = SCHED_FIFO, .priority = prio};
		return;
	}
	if (!realtime)
		return;
	/* the normal class, as high as granted: -20, else what it has */
	for (nice = -20; nice < 0; nice += 5)
		if (setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0)
			break;
	out->priority = nice < 0 ? nice : 0;
	log_msg(LOG_WARNING,
		"the %s thread cannot run SCHED_FIFO: %s; %s (a busy machine may release "
		"requests late: see late_ns_* in stats)",
		name, strerror(ret), nice < 0 ? "raised its nice value instead" : "left as it is");
}

/* completer_start() -- the completion thread's own start: its tid for
 * set_sched(). */
struct completer_arg {
	struct pgd_dev *d;
	pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t ready;
};

static void *completer_main(void *arg)
{
	struct completer_arg *a = arg;
	struct pgd_dev *d = a->d;

	pthread_mutex_lock(&a->lock);
	a->tid = gettid();
	pthread_cond_signal(&a->ready);
	pthread_mutex_unlock(&a->lock); /* a is the starter's: not touched after */
	return completer(d);
}

int pgd_dev_start(struct pgd_dev *d)
{
	struct completer_arg a = {.d = d};
	pthread_attr_t attr;
	int ret;

	pthread_mutex_init(&a.lock, NULL);
	pthread_cond_init(&a.ready, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PGD_STACK_SIZE);
	ret = pthread_create(&d->thread, &attr, completer_main, &a);
	pthread_attr_destroy(&attr);
	if (ret == 0) {
		pthread_mutex_lock(&a.lock);
		while (!a.tid)
			pthread_cond_wait(&a.ready, &a.lock);
		pthread_mutex_unlock(&a.lock);
		d->started = true;
		d->start_ns = ios_now_ns();
		set_sched(d->thread, a.tid, "completion", d->realtime, d->rt_priority,
			  &d->sched_completer);
		set_sched(pthread_self(), gettid(), "session", d->realtime, d->rt_priority,
			  &d->sched_session);
	}
	pthread_cond_destroy(&a.ready);
	pthread_mutex_destroy(&a.lock);
	return -ret;
}

void pgd_dev_stop(struct pgd_dev *d)
{
	if (d->started) {
		pthread_mutex_lock(&d->lock);
		d->stopping = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		d->started = false;
	}
	if (d->fd >= 0 && fdatasync(d->fd) < 0)
		log_msg(LOG_ERR, "fdatasync of the image failed: %s", strerror(errno));
	if (d->wlog) {
		int ret = pgd_wlog_close(d->wlog);

		if (ret < 0)
			log_msg(LOG_ERR, "the write log is incomplete: %s", strerror(-ret));
		d->wlog = NULL;
	}
	if (d->rlog) {
		int ret = pgd_wlog_close(d->rlog);

		if (ret < 0)
			log_msg(LOG_ERR, "the request log is incomplete: %s", strerror(-ret));
		d->rlog = NULL;
	}
}

void pgd_dev_close(struct pgd_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->fd_cached >= 0)
		close(d->fd_cached);
	d->fd = d->fd_cached = -1;
	ios_disk_destroy(d->disk);
	d->disk = NULL;
	free(d->bufs);
	free(d->bounce);
	d->bufs = d->bounce = NULL;
}

void pgd_dev_counters(struct pgd_dev *d, struct pgd_counters *out, uint64_t *held)
{
	pthread_mutex_lock(&d->lock);
	*out = d->cnt;
	*held = d->nheld;
	pthread_mutex_unlock(&d->lock);
}
