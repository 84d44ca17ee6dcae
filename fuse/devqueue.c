/* devqueue.c -- the backing device's block queue (files.device_queue).
 *
 * On a rotating disk under a bulk import, what a commit waits for at the
 * device is decided below pgiofs: the import's heap reaches the disk
 * through the backing file system's writeback, and WAL (in passthrough,
 * or written by the daemon) through the same queue.  Two settings of that
 * queue make a WAL write wait behind megabytes of heap:
 *
 *   - the elevator: none and kyber dispatch in arrival order (kyber's
 *     synchronous-write domain admits everything it has tokens for), so a
 *     WAL write joins the back of the writeback's queue; mq-deadline
 *     serves reads and synchronous writes from its FIFOs within their
 *     deadlines;
 *   - writeback throttling (wbt, queue/wbt_lat_usec): while background
 *     writeback keeps the device busy, wbt holds back every buffered write
 *     beyond its depth, the writeback an fdatasync of WAL starts included
 *     (rq_qos_wait() in the committing backend's stack).
 *
 *   - the depth: under mq-deadline a queue's writes may take up to
 *     async_depth of its nr_requests tags (all 256 by default), and a
 *     loop device or a disk takes up to its hardware queue depth of them
 *     (128 for a loop device, each up to max_sectors_kb: 160 MiB).  The
 *     device serves what it holds in its own order, so a WAL write and a
 *     commit's flush that arrive after the writeback's burst wait for all
 *     of it: seconds on a rotating disk, whatever the elevator does with
 *     the requests it still holds.  With async_depth a few, the bulk waits
 *     as dirty pages in the page cache instead, and a WAL write finds at
 *     most that many write requests ahead of it (files.device_write_depth).
 *   - reads and the size of a request: async_depth does not limit the reads
 *     a process waits for (an index build's scan), and each request may be
 *     max_sectors_kb.  nr_requests bounds the requests of every kind in
 *     the queue (files.device_requests) and max_sectors_kb their size
 *     (files.device_request_kb): together the bulk bytes a WAL write finds
 *     ahead of it at the device (16 of 256 KiB: 4 MiB).
 *
 * At mount, with files.device_queue = auto (pgiofs running as root, on a
 * device whose queue says it is rotational; a virtio disk cannot say and
 * is left alone) or yes, the scheduler becomes mq-deadline where it was
 * none or kyber, wbt_lat_usec 0 where it was above, mq-deadline's
 * async_depth files.device_write_depth where it was the kernel's default
 * and with it nr_requests files.device_requests where it was above, and
 * max_sectors_kb files.device_request_kb where it was the kernel's
 * default (max_hw_sectors_kb, at most 1280) and above.
 * What was found is kept here; at unmount each value is put back unless
 * someone changed it since (an administrator's choice is never undone).
 * A daemon that is killed leaves the queue as set: the log and `pgiofs
 * stat` name the values found.  Measured effect: docs/performance.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "json.h"
#include "pgiofs_i.h"

#define DQ_SCHED	 "mq-deadline"
#define DQ_DEPTH_AUTO	 8    /* files.device_write_depth = -1 (docs/performance.md) */
#define DQ_REQUESTS_AUTO 16   /* files.device_requests = -1 */
#define DQ_KB_AUTO	 256  /* files.device_request_kb = -1 */
#define DQ_KB_DEFAULT	 1280 /* the kernel's cap of max_sectors_kb (BLK_DEF_MAX_SECTORS_CAP) */

/* read_knob() -- the first line of @queue/@knob into @buf; 0 or -errno. */
static int read_knob(const char *queue, const char *knob, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", queue, knob);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* write_knob() -- @value into @queue/@knob; 0 or -errno. */
static int write_knob(const char *queue, const char *knob, const char *value)
{
	char path[PATH_MAX + 64];
	size_t len = strlen(value);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", queue, knob);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* current_sched() -- the scheduler in use ("[mq-deadline] kyber none") into
 * @out, and whether mq-deadline is offered in @offered; 0 or -errno. */
static int current_sched(const char *queue, char *out, size_t len, bool *offered)
{
	char buf[256], *open_b, *close_b;
	int ret = read_knob(queue, "scheduler", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	*offered = false;
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		open_b = strchr(t, '[');
		close_b = strchr(t, ']');
		if (open_b && close_b) {
			*close_b = '\0';
			snprintf(out, len, "%s", open_b + 1);
			t = open_b + 1;
		}
		if (strcmp(t, DQ_SCHED) == 0)
			*offered = true;
	}
	return 0;
}

static void set_sched(struct pfs_devqueue *dq)
{
	char cur[32] = "";
	bool offered;
	int ret = current_sched(dq->queue, cur, sizeof(cur), &offered);

	if (ret < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot read its scheduler: %s",
			 strerror(-ret));
		return;
	}
	if (strcmp(cur, "none") && strcmp(cur, "kyber"))
		return; /* mq-deadline, bfq, or a choice of its own: kept */
	if (!offered) {
		snprintf(dq->note, sizeof(dq->note), "the kernel offers no %s for it", DQ_SCHED);
		return;
	}
	ret = write_knob(dq->queue, "scheduler", DQ_SCHED);
	if (ret < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot set its scheduler to %s: %s", DQ_SCHED,
			 strerror(-ret));
		return;
	}
	snprintf(dq->sched_was, sizeof(dq->sched_was), "%s", cur);
}

/* read_long() -- @queue/@knob as a number into @v; 0 or -errno. */
static int read_long(const char *queue, const char *knob, long *v)
{
	char buf[32], *end;
	int ret = read_knob(queue, knob, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

static void set_wbt(struct pfs_devqueue *dq)
{
	long was;
	int ret = read_long(dq->queue, "wbt_lat_usec", &was);

	if (ret == -ENOENT)
		return; /* a kernel without wbt, or a queue without it */
	if (ret < 0 || was < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot read its wbt_lat_usec: %s",
			 ret < 0 ? strerror(-ret) : "a negative value");
		return;
	}
	if (was == 0)
		return;
	ret = write_knob(dq->queue, "wbt_lat_usec", "0");
	if (ret < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot turn its writeback throttling off: %s",
			 strerror(-ret));
		return;
	}
	dq->wbt_was = was;
}

/* write_long() -- @v into @queue/@knob; 0 or -errno. */
static int write_long(const char *queue, const char *knob, long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%ld", v);
	return write_knob(queue, knob, num);
}

/* set_depth() -- mq-deadline's async_depth to @want where it is a
 * kernel's default (dd_depth_updated(): nr_requests on 6.18, max(1, 3/4
 * of it) on some other kernels): any other value is an administrator's.
 * With it, nr_requests to @nr_want where it is above (a new nr_requests
 * makes async_depth the default again, so it is written first). */
static void set_depth(struct pfs_devqueue *dq, long want, long nr_want)
{
	char cur[32] = "";
	long depth, nr;
	bool offered;
	int ret;

	if (want == 0 || current_sched(dq->queue, cur, sizeof(cur), &offered) < 0 ||
	    strcmp(cur, DQ_SCHED))
		return; /* not asked, or another scheduler kept: no async_depth */
	if ((ret = read_long(dq->queue, "iosched/async_depth", &depth)) == -ENOENT)
		return; /* a kernel whose mq-deadline has none (before 5.14) */
	if (ret < 0 || (ret = read_long(dq->queue, "nr_requests", &nr)) < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot read its async_depth: %s",
			 strerror(-ret));
		return;
	}
	if (depth != nr && depth != (3 * nr / 4 > 1 ? 3 * nr / 4 : 1))
		return;
	if (nr_want > 0 && nr > nr_want) {
		if ((ret = write_long(dq->queue, "nr_requests", nr_want)) < 0) {
			snprintf(dq->note, sizeof(dq->note),
				 "cannot set its nr_requests to %ld: %s", nr_want, strerror(-ret));
			return;
		}
		dq->nr_was = nr;
		dq->nr = nr_want;
	}
	if (dq->nr_was >= 0 && want > dq->nr)
		want = dq->nr; /* the kernel takes no more */
	if (depth == want && dq->nr_was < 0)
		return;
	if ((ret = write_long(dq->queue, "iosched/async_depth", want)) < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot set its async_depth to %ld: %s", want,
			 strerror(-ret));
		return;
	}
	dq->depth_was = depth;
	dq->depth = want;
}

/* set_kb() -- max_sectors_kb to @want where it is the kernel's default
 * (max_hw_sectors_kb, at most DQ_KB_DEFAULT) and above @want. */
static void set_kb(struct pfs_devqueue *dq, long want)
{
	long kb, hw;
	int ret;

	if (want <= 0 || read_long(dq->queue, "max_sectors_kb", &kb) < 0 ||
	    read_long(dq->queue, "max_hw_sectors_kb", &hw) < 0)
		return;
	if (kb <= want || kb != (hw < DQ_KB_DEFAULT ? hw : DQ_KB_DEFAULT))
		return; /* small enough, or an administrator's */
	if ((ret = write_long(dq->queue, "max_sectors_kb", want)) < 0) {
		snprintf(dq->note, sizeof(dq->note), "cannot set its max_sectors_kb to %ld: %s",
			 want, strerror(-ret));
		return;
	}
	dq->kb_was = kb;
	dq->kb = want;
}

/* changed() -- whether pgiofs set anything of the queue. */
static bool changed(const struct pfs_devqueue *dq)
{
	return dq->sched_was[0] || dq->wbt_was >= 0 || dq->depth_was >= 0 || dq->nr_was >= 0 ||
	       dq->kb_was >= 0;
}

void pfs_devqueue_apply(struct pfs *fs)
{
	struct pfs_devqueue *dq = &fs->devqueue;
	char disk[PATH_MAX + 8];

	memset(dq, 0, sizeof(*dq));
	dq->wbt_was = -1;
	dq->depth_was = dq->nr_was = dq->kb_was = -1;
	if (fs->set.device_queue == PGIOFS_DQ_NO)
		return;
	if (pfs_dev_disk(fs->root.dev, disk, sizeof(disk), dq->device, sizeof(dq->device)) < 0) {
		snprintf(dq->note, sizeof(dq->note), "the backing file system has no block device");
		return;
	}
	if (!fs->is_root) {
		snprintf(dq->note, sizeof(dq->note), "pgiofs does not run as root");
		return;
	}
	if (fs->set.device_queue == PGIOFS_DQ_AUTO && fs->backing_medium != PFS_MEDIUM_ROTATIONAL) {
		snprintf(dq->note, sizeof(dq->note), "%s",
			 fs->backing_medium == PFS_MEDIUM_UNKNOWN
			     ? "a virtio disk, which cannot say whether it rotates"
			     : "the device does not say it is rotational");
		return;
	}
	snprintf(dq->queue, sizeof(dq->queue), "%s/queue", disk);
	set_sched(dq);
	set_wbt(dq);
	set_depth(dq, fs->set.device_write_depth < 0 ? DQ_DEPTH_AUTO : fs->set.device_write_depth,
		  fs->set.device_requests < 0 ? DQ_REQUESTS_AUTO : fs->set.device_requests);
	set_kb(dq, fs->set.device_request_kb < 0 ? DQ_KB_AUTO : fs->set.device_request_kb);
	if (changed(dq)) {
		char depth[160] = "";
		int n = 0;

		if (dq->depth_was >= 0)
			n += snprintf(depth + n, sizeof(depth) - (size_t)n,
				      ", async_depth %ld (was %ld)", dq->depth, dq->depth_was);
		if (dq->nr_was >= 0)
			n += snprintf(depth + n, sizeof(depth) - (size_t)n,
				      ", nr_requests %ld (was %ld)", dq->nr, dq->nr_was);
		if (dq->kb_was >= 0)
			snprintf(depth + n, sizeof(depth) - (size_t)n,
				 ", max_sectors_kb %ld (was %ld)", dq->kb, dq->kb_was);
		log_msg(
		    LOG_INFO,
		    "files.device_queue: %s's scheduler %s (was %s), wbt_lat_usec %s (was %ld)%s",
		    dq->device, dq->sched_was[0] ? DQ_SCHED : "unchanged",
		    dq->sched_was[0] ? dq->sched_was : "-", dq->wbt_was >= 0 ? "0" : "unchanged",
		    dq->wbt_was, depth);
	}
	if (dq->note[0])
		log_msg(LOG_WARNING, "files.device_queue: %s: %s", dq->device, dq->note);
}

void pfs_devqueue_restore(struct pfs *fs)
{
	struct pfs_devqueue *dq = &fs->devqueue;
	char cur[32] = "", num[32];
	bool offered;
	long depth, nr, kb;
	int ret;

	if (!dq->queue[0] || dq->restored)
		return;
	dq->restored = true;
	if (dq->kb_was >= 0 && read_long(dq->queue, "max_sectors_kb", &kb) == 0 && kb == dq->kb &&
	    (ret = write_long(dq->queue, "max_sectors_kb", dq->kb_was)) < 0)
		log_msg(LOG_WARNING,
			"files.device_queue: cannot put %s's max_sectors_kb back to %ld: %s",
			dq->device, dq->kb_was, strerror(-ret));
	/* the depth and nr_requests before the scheduler: a scheduler put
	 * back takes mq-deadline's with it.  nr_requests put back makes
	 * async_depth the kernel's default for it, which is what was found;
	 * an async_depth someone else set meanwhile is written again */
	if (dq->depth_was < 0 || read_long(dq->queue, "iosched/async_depth", &depth) < 0)
		depth = -1;
	if (dq->nr_was >= 0 && read_long(dq->queue, "nr_requests", &nr) == 0 && nr == dq->nr) {
		if ((ret = write_long(dq->queue, "nr_requests", dq->nr_was)) < 0)
			log_msg(LOG_WARNING,
				"files.device_queue: cannot put %s's nr_requests back to %ld: %s",
				dq->device, dq->nr_was, strerror(-ret));
		else if (depth >= 0 && depth != dq->depth) {
			if ((ret = write_long(dq->queue, "iosched/async_depth", depth)) < 0)
				log_msg(LOG_WARNING,
					"files.device_queue: cannot set %s's async_depth to %ld "
					"again after putting nr_requests back: %s",
					dq->device, depth, strerror(-ret));
		} else
			depth = -1; /* back with nr_requests */
	}
	if (depth >= 0 && depth == dq->depth &&
	    (ret = write_long(dq->queue, "iosched/async_depth", dq->depth_was)) < 0)
		log_msg(LOG_WARNING,
			"files.device_queue: cannot put %s's async_depth back to %ld: %s",
			dq->device, dq->depth_was, strerror(-ret));
	if (dq->sched_was[0] && current_sched(dq->queue, cur, sizeof(cur), &offered) == 0 &&
	    strcmp(cur, DQ_SCHED) == 0 &&
	    (ret = write_knob(dq->queue, "scheduler", dq->sched_was)) < 0)
		log_msg(LOG_WARNING, "files.device_queue: cannot put %s's scheduler back to %s: %s",
			dq->device, dq->sched_was, strerror(-ret));
	if (dq->wbt_was >= 0 && read_knob(dq->queue, "wbt_lat_usec", cur, sizeof(cur)) == 0 &&
	    strcmp(cur, "0") == 0) {
		snprintf(num, sizeof(num), "%ld", dq->wbt_was);
		if ((ret = write_knob(dq->queue, "wbt_lat_usec", num)) < 0)
			log_msg(LOG_WARNING,
				"files.device_queue: cannot put %s's wbt_lat_usec back to %s: %s",
				dq->device, num, strerror(-ret));
	}
}

int pfs_devqueue_json(const struct pfs *fs, char *buf, size_t len)
{
	const struct pfs_devqueue *dq = &fs->devqueue;
	char sched[32] = "", wbt[32] = "", dev[80], was[80], note[600];
	bool offered;
	long depth = -1, nr = -1, kb = -1;

	if (dq->queue[0]) {
		current_sched(dq->queue, sched, sizeof(sched), &offered);
		if (read_knob(dq->queue, "wbt_lat_usec", wbt, sizeof(wbt)) < 0)
			wbt[0] = '\0';
		if (read_long(dq->queue, "iosched/async_depth", &depth) < 0)
			depth = -1;
		if (read_long(dq->queue, "nr_requests", &nr) < 0)
			nr = -1;
		if (read_long(dq->queue, "max_sectors_kb", &kb) < 0)
			kb = -1;
	}
	json_str_format(dev, sizeof(dev), dq->device);
	json_str_format(was, sizeof(was), dq->sched_was);
	json_str_format(note, sizeof(note), dq->note);
	return snprintf(buf, len,
			"\"device_queue\":{\"setting\":\"%s\",\"device\":%s,\"set\":%s,"
			"\"scheduler\":\"%s\",\"scheduler_was\":%s,\"wbt_lat_usec\":%s,"
			"\"wbt_lat_usec_was\":%ld,\"async_depth\":%ld,\"async_depth_was\":%ld,"
			"\"nr_requests\":%ld,\"nr_requests_was\":%ld,\"max_sectors_kb\":%ld,"
			"\"max_sectors_kb_was\":%ld,\"note\":%s}",
			pgiofs_device_queue_names[fs->set.device_queue], dev,
			dq->queue[0] && changed(dq) ? "true" : "false", sched, was,
			wbt[0] ? wbt : "-1", dq->wbt_was, depth, dq->depth_was, nr, dq->nr_was, kb,
			dq->kb_was, note);
}
