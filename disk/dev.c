/*
 * dev.c -- the modelled device: the image, the disk model and the requests
 * held until the model completes them.
 *
 * Every request on the image passes pgd_dev_submit(), in the order the
 * session thread received it from the kernel: it is stamped with the time
 * it reached the disk, modelled (ios_disk_serve(): the hdd serves one
 * request at a time, in arrival order, each starting when the one before is
 * done), performed on the image at once, and queued; the completion thread
 * replies to each when the model says the disk has completed it.  Models
 * complete in arrival order, so the queue is a ring in arrival order and
 * the completion thread only ever waits for its head.  Every request
 * performed is then logged (wlog.c, with --log) in that order, before its
 * reply can go out: the write log, from which `pgdisk cut` builds the disk
 * a power cut would leave, holding each write until a later flush.
 *
 * What must stay true: a reply is sent exactly once, never before the
 * modelled completion (except when the session has ended); a write is
 * acknowledged only when all of it is on the image (a FUA write: and
 * synced), a flush only after fdatasync() of the image succeeded, and a
 * failure reaches the kernel as the error itself; a request an injected
 * fault (fault.c) fails or loses is not performed, and is logged as a
 * fault, never as performed; every request that
 * succeeded is in the write log before its reply is queued; nothing on the request path allocates
 * memory (a block device's server must not wait for memory that writeback to its own device would
 * free): the slots and buffers are allocated, touched and locked before serving.
 */
#include "pgdisk_i.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

int pgd_dev_open(struct pgd_dev *d, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int ret;

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
	if (posix_memalign((void **)&d->bufs, PGD_BUF_ALIGN, (size_t)PGD_NBUFS * PGD_MAX_IO) ||
	    posix_memalign((void **)&d->bounce, PGD_BUF_ALIGN, PGD_MAX_IO)) {
		snprintf(err, errlen, "cannot allocate the request buffers: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* touched now: resident before mlockall() locks them */
	memset(d->bufs, 0, (size_t)PGD_NBUFS * PGD_MAX_IO);
	memset(d->bounce, 0, PGD_MAX_IO);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
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

void pgd_dev_submit(struct pgd_dev *d, fuse_req_t req, enum pgd_op op, uint64_t off, uint64_t len,
		    const void *data, bool fua)
{
	struct ios_disk_time t = {0};
	struct pgd_slot *s;
	char *buf = NULL;
	ssize_t result;
	uint64_t i, busy = 1, now;
	bool modelled = false;
	int fault = 0;

	pthread_mutex_lock(&d->lock);
	while (d->tail - d->head == PGD_NSLOTS ||
	       (op == PGD_READ && d->bufs_taken - d->bufs_freed == PGD_NBUFS))
		pthread_cond_wait(&d->space, &d->lock);
	if (op == PGD_READ)
		buf = d->bufs + (d->bufs_taken++ % PGD_NBUFS) * (size_t)PGD_MAX_IO;
	/* slot[tail] is outside [head, tail): ours until tail moves */
	s = &d->slot[d->tail % PGD_NSLOTS];
	pthread_mutex_unlock(&d->lock);

	now = ios_now_ns();
	t.start_ns = t.done_ns = now;
	if (op == PGD_READ && off + len > d->size) /* a short read at the end */
		len = off < d->size ? d->size - off : 0;
	if (off + len > d->size || off + len < off) {
		result = -ENOSPC; /* beyond the end of the disk: nothing done */
	} else if ((op == PGD_READ || op == PGD_WRITE) && len > PGD_MAX_IO) {
		result = -EINVAL; /* more than the kernel was told it may send */
	} else {
		ios_disk_serve(d->disk, off, len, op_dir[op], now, &t);
		fault = pgd_fault_check(&d->faults, op, off, len, now);
		if (fault) /* failed or lost: not performed, logged as a fault */
			result = fault < 0 ? fault : op == PGD_WRITE ? (ssize_t)len : 0;
		else
			result = perform(d, op, off, len, data, buf, fua);
		modelled = true;
		if (fault)
			pgd_wlog_fault(d->wlog, op, fua, off, len, fault);
		else if (result >= 0) /* the data of a write is in d->bounce */
			pgd_wlog_append(d->wlog, op, fua, off, len, d->bounce);
	}

	pthread_mutex_lock(&d->lock);
	*s = (struct pgd_slot){
	    .req = req, .op = op, .done_ns = t.done_ns, .result = result, .buf = buf};
	/* in service at its start: this one and those held that end later */
	for (i = d->tail; i > d->head && d->slot[(i - 1) % PGD_NSLOTS].done_ns > t.start_ns; i--)
		busy++;
	if (modelled && busy > d->cnt.in_service_max)
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
	d->tail++;
	if (d->tail - d->head > d->cnt.held_max)
		d->cnt.held_max = d->tail - d->head;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
}

/* sleep_until() -- until CLOCK_MONOTONIC (ios_now_ns()) reaches @ns. */
static void sleep_until(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
			      .tv_nsec = (long)(ns % 1000000000u)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
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

/* completer() -- the completion thread: reply to the head of the ring when
 * its modelled completion comes. */
static void *completer(void *arg)
{
	struct pgd_dev *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct pgd_slot s;
		uint64_t late;
		bool stopping;

		while (d->head == d->tail && !d->stopping)
			pthread_cond_wait(&d->work, &d->lock);
		if (d->head == d->tail)
			break;
		s = d->slot[d->head % PGD_NSLOTS];
		stopping = d->stopping;
		pthread_mutex_unlock(&d->lock);
		if (!stopping)
			sleep_until(s.done_ns);
		late = ios_now_ns();
		late = late > s.done_ns ? late - s.done_ns : 0;
		reply(&s);
		pthread_mutex_lock(&d->lock);
		d->head++;
		if (s.op == PGD_READ)
			d->bufs_freed++;
		d->cnt.completed++;
		d->cnt.late_ns_sum += late;
		if (late > d->cnt.late_ns_max)
			d->cnt.late_ns_max = late;
		pthread_cond_signal(&d->space);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int pgd_dev_start(struct pgd_dev *d)
{
	pthread_attr_t a;
	int ret;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PGD_STACK_SIZE);
	ret = pthread_create(&d->thread, &a, completer, d);
	pthread_attr_destroy(&a);
	if (ret)
		return -ret;
	d->started = true;
	return 0;
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
	*held = d->tail - d->head;
	pthread_mutex_unlock(&d->lock);
}
