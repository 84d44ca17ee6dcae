/*
 * blkqueue.c -- the kernel's block queue under a back end of `pgload
 * compare` (testbed.h): which elevators the kernel has, the tunables of a
 * queue and of each elevator (one table: names, owner, range), setting
 * them on a loop device, reading them back for the report, and the raw
 * streaming figures of the seeds (`hdparm -t`, `dd if=big-file`).
 *
 * What must stay true: every name and value is checked against the table
 * before anything is set up (the kernel still has the last word when the
 * value is written, and a refusal names the file and the value); an
 * elevator tunable is written only on a queue running that elevator, after
 * the elevator (switching elevators resets the queue's nr_requests); what
 * the report says a cell used is read back from sysfs, not assumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgload_i.h"
#include "testbed.h"

#define STREAM_CHUNK (1024 * 1024) /* bytes per read or write of a streaming figure */

const char *const pgl_elevator_names[] = {"none", "mq-deadline", "bfq", "kyber", NULL};

/* The tunables pgload knows, as Linux 6.x names them (Documentation/block/). */
const struct pgl_queue_tunable pgl_queue_tunables[] = {
    /* the queue's own, whatever its elevator */
    {"read_ahead_kb", NULL, 0, 1 << 20, "readahead window of buffered reads, KiB"},
    {"nr_requests", NULL, 4, 1 << 16, "requests the queue holds (the elevator's depth)"},
    {"max_sectors_kb", NULL, 4, 1 << 20, "largest request, KiB"},
    {"nomerges", NULL, 0, 2, "0 merge, 1 simple merges only, 2 none"},
    {"rq_affinity", NULL, 0, 2, "completion CPU"},
    {"wbt_lat_usec", NULL, -1, 1000000000, "writeback throttling target, us (0 off)"},
    {"rotational", NULL, 0, 1, "1: a spinning disk (bfq idles, file systems lay out)"},
    /* mq-deadline */
    {"read_expire", "mq-deadline", 0, 1 << 30, "deadline of a read, ms"},
    {"write_expire", "mq-deadline", 0, 1 << 30, "deadline of a write, ms"},
    {"fifo_batch", "mq-deadline", 1, 1 << 20, "requests per batch in sector order"},
    {"writes_starved", "mq-deadline", 0, 1 << 20, "read batches before a write batch"},
    {"front_merges", "mq-deadline", 0, 1, "merge a request in front of another"},
    {"async_depth", "mq-deadline", 1, 1 << 16, "tags asynchronous requests may take"},
    {"prio_aging_expire", "mq-deadline", 0, 1 << 30, "lower priority served after, ms"},
    /* bfq */
    {"low_latency", "bfq", 0, 1, "raise the weight of interactive and soft real-time tasks"},
    {"slice_idle", "bfq", 0, 1 << 20, "idling for the next request of a queue, ms"},
    {"slice_idle_us", "bfq", 0, 1 << 30, "the same, us"},
    {"timeout_sync", "bfq", 1, 1 << 20, "budget timeout of a synchronous queue, ms"},
    {"max_budget", "bfq", 0, 1 << 30, "sectors per budget (0: automatic)"},
    {"back_seek_max", "bfq", 0, 1 << 30, "backward seek allowed, KiB"},
    {"back_seek_penalty", "bfq", 1, 1 << 20, "cost of a backward seek"},
    {"fifo_expire_sync", "bfq", 1, 1 << 30, "deadline of a synchronous request, ms"},
    {"fifo_expire_async", "bfq", 1, 1 << 30, "deadline of an asynchronous request, ms"},
    {"strict_guarantees", "bfq", 0, 1, "idle for guarantees even on fast devices"},
    /* kyber */
    {"read_lat_nsec", "kyber", 1, 1000000000000LL, "target latency of reads, ns"},
    {"write_lat_nsec", "kyber", 1, 1000000000000LL, "target latency of writes, ns"},
    {NULL, NULL, 0, 0, NULL},
};

/* The queue attributes read back for the report, besides the elevator's. */
static const char *const report_attrs[] = {"read_ahead_kb", "nr_requests", "max_sectors_kb",
					   "rotational",    "nomerges",	   "wbt_lat_usec"};

bool pgl_elevator_known(const char *name)
{
	for (int i = 0; pgl_elevator_names[i]; i++)
		if (strcmp(name, pgl_elevator_names[i]) == 0)
			return true;
	return false;
}

const struct pgl_queue_tunable *pgl_queue_tunable_find(const char *name)
{
	for (const struct pgl_queue_tunable *t = pgl_queue_tunables; t->name; t++)
		if (strcmp(name, t->name) == 0)
			return t;
	return NULL;
}

int pgl_queue_value_check(const struct pgl_queue_tunable *t, const char *value)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (errno || end == value || *end || v < t->min || v > t->max)
		return -ERANGE;
	return 0;
}

/* read_line() -- the first line of FILE into BUF, without its newline. */
static int read_line(const char *file, char *buf, size_t cap)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)cap, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int pgl_elevators_available(char *buf, size_t cap)
{
	glob_t g;
	int ret = -ENOENT;
	buf[0] = '\0';
	if (glob("/sys/block/*/queue/scheduler", 0, NULL, &g) != 0)
		return -ENOENT;
	for (size_t i = 0; i < g.gl_pathc && ret < 0; i++) {
		char line[512], *out = buf;
		if (read_line(g.gl_pathv[i], line, sizeof(line)) < 0 || !line[0])
			continue;
		/* "[none] mq-deadline kyber bfq": the brackets mark the one in use */
		for (char *p = line; *p && (size_t)(out - buf) + 1 < cap; p++)
			if (*p != '[' && *p != ']')
				*out++ = *p;
		*out = '\0';
		while (out > buf && out[-1] == ' ')
			*--out = '\0';
		ret = 0;
	}
	globfree(&g);
	return ret;
}

bool pgl_elevator_in(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* queue_path() -- /sys/block/DEV/queue/[iosched/]NAME of /dev/DEV; of a
 * partition, its disk's (/sys/class/block/PART/../queue). */
static void queue_path(char *buf, size_t cap, const char *dev, bool iosched, const char *name)
{
	const char *base = strrchr(dev, '/');
	base = base ? base + 1 : dev;
	snprintf(buf, cap, "/sys/class/block/%s/partition", base);
	bool part = access(buf, F_OK) == 0;
	if (part)
		snprintf(buf, cap, "/sys/class/block/%s/../queue/%s%s", base,
			 iosched ? "iosched/" : "", name);
	else
		snprintf(buf, cap, "/sys/block/%s/queue/%s%s", base, iosched ? "iosched/" : "",
			 name);
}

/* queue_put() -- VALUE into the queue file PATH; 0 or -errno. */
static int queue_put(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;
	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* queue_write() -- VALUE into the queue file of DEV; says why on failure. */
static int queue_write(const char *dev, bool iosched, const char *name, const char *value)
{
	char path[256];
	queue_path(path, sizeof(path), dev, iosched, name);
	int ret = queue_put(path, value);
	if (ret < 0)
		fprintf(stderr, "pgload compare: could not write \"%s\" to %s: %s\n", value, path,
			strerror(-ret));
	return ret;
}

int pgl_loop_queue_fresh(const char *dev)
{
	char path[256];
	queue_path(path, sizeof(path), dev, false, "max_sectors_kb");
	return queue_put(path, "0");
}

int pgl_queue_apply(const char *dev, const struct pgl_queue_conf *q)
{
	int ret;
	char sched[512], want[48];
	/* rotational first: bfq decides how it idles when it is attached */
	if (q->rotational >= 0 &&
	    (ret = queue_write(dev, false, "rotational", q->rotational ? "1" : "0")) < 0)
		return ret;
	if (q->elevator) {
		/* a loop device is reused: its elevator may still be the one
		 * asked for, with the tunables an earlier run gave it; through
		 * none it is attached afresh, with its defaults */
		if (strcmp(q->elevator, "none") != 0 &&
		    (ret = queue_write(dev, false, "scheduler", "none")) < 0)
			return ret;
		if ((ret = queue_write(dev, false, "scheduler", q->elevator)) < 0)
			return ret;
		queue_path(sched, sizeof(sched), dev, false, "scheduler");
		if (read_line(sched, sched, sizeof(sched)) == 0) {
			snprintf(want, sizeof(want), "[%s]", q->elevator);
			if (!strstr(sched, want)) {
				fprintf(stderr,
					"pgload compare: %s kept the elevator \"%s\" instead of "
					"%s\n",
					dev, sched, q->elevator);
				return -EIO;
			}
		}
	}
	for (int i = 0; q->sets && q->sets[i]; i++) {
		char name[64];
		const char *eq = strchr(q->sets[i], '=');
		if (!eq || (size_t)(eq - q->sets[i]) >= sizeof(name))
			return -EINVAL;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - q->sets[i]), q->sets[i]);
		const struct pgl_queue_tunable *t = pgl_queue_tunable_find(name);
		if (!t)
			return -EINVAL;
		if ((ret = queue_write(dev, t->elevator != NULL, name, eq + 1)) < 0)
			return ret;
	}
	return 0;
}

int pgl_queue_restore(const char *dev, const struct pgl_queue_state *before)
{
	struct pgl_queue_state now;
	int ret = 0, r;
	if ((r = pgl_queue_read(dev, &now)) < 0)
		return r;
	if (before->elevator[0] && strcmp(now.elevator, before->elevator) != 0 &&
	    (r = queue_write(dev, false, "scheduler", before->elevator)) < 0)
		ret = r;
	if ((r = pgl_queue_read(dev, &now)) < 0)
		return ret < 0 ? ret : r;
	for (int i = 0; i < before->n; i++) {
		const char *name = before->attr[i].name;
		const struct pgl_queue_tunable *t = pgl_queue_tunable_find(name);
		bool elevator = t && t->elevator;
		for (int k = 0; k < now.n; k++)
			if (strcmp(now.attr[k].name, name) == 0 &&
			    strcmp(now.attr[k].value, before->attr[i].value) != 0 &&
			    (r = queue_write(dev, elevator, name, before->attr[i].value)) < 0 &&
			    ret == 0)
				ret = r;
	}
	return ret;
}

/* loop_path() -- /sys/block/DEV/loop/NAME of loop device /dev/DEV. */
static void loop_path(char *buf, size_t cap, const char *dev, const char *name)
{
	const char *base = strrchr(dev, '/');
	snprintf(buf, cap, "/sys/block/%s/loop/%s", base ? base + 1 : dev, name);
}

int pgl_loop_direct_io(const char *dev)
{
	char path[256], line[32];
	loop_path(path, sizeof(path), dev, "dio");
	if (read_line(path, line, sizeof(line)) < 0)
		return -errno;
	return strcmp(line, "1") == 0;
}

int pgl_queue_read(const char *dev, struct pgl_queue_state *st)
{
	char path[256], line[512];
	memset(st, 0, sizeof(*st));
	snprintf(st->device, sizeof(st->device), "%s", dev);
	st->direct_io = pgl_loop_direct_io(dev);
	if (st->direct_io < 0)
		st->direct_io = -1;
	queue_path(path, sizeof(path), dev, false, "scheduler");
	if (read_line(path, line, sizeof(line)) < 0)
		return -errno;
	char *open_br = strchr(line, '['), *close_br = open_br ? strchr(open_br, ']') : NULL;
	if (open_br && close_br)
		snprintf(st->elevator, sizeof(st->elevator), "%.*s", (int)(close_br - open_br - 1),
			 open_br + 1);
	for (size_t i = 0; i < sizeof(report_attrs) / sizeof(report_attrs[0]); i++) {
		queue_path(path, sizeof(path), dev, false, report_attrs[i]);
		if (read_line(path, line, sizeof(line)) < 0 || st->n == PGL_QUEUE_MAX_ATTRS)
			continue;
		snprintf(st->attr[st->n].name, sizeof(st->attr[0].name), "%s", report_attrs[i]);
		snprintf(st->attr[st->n++].value, sizeof(st->attr[0].value), "%.31s", line);
	}
	/* the elevator's own, in the table's order */
	for (const struct pgl_queue_tunable *t = pgl_queue_tunables; t->name; t++) {
		if (!t->elevator || strcmp(t->elevator, st->elevator) != 0 ||
		    st->n == PGL_QUEUE_MAX_ATTRS)
			continue;
		queue_path(path, sizeof(path), dev, true, t->name);
		if (read_line(path, line, sizeof(line)) < 0)
			continue;
		snprintf(st->attr[st->n].name, sizeof(st->attr[0].name), "%s", t->name);
		snprintf(st->attr[st->n++].value, sizeof(st->attr[0].value), "%.31s", line);
	}
	return 0;
}

/* ---- streaming figures -------------------------------------------------- */

/* drop_file() -- what the page cache holds of FILE: written back, then
 * dropped (pages still dirty or mapped stay; a cold read says nothing about
 * them). */
static void drop_file(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/*
 * drop_device() -- every cached copy of block device DEV's contents: its
 * own page cache (the file system's metadata in it too) and, for a loop
 * device, its backing file's pages in the page cache of the file system
 * under it (an image written by mkfs before it was attached, or any read
 * if direct I/O could not be turned on): a figure read after it comes from
 * the disk under the image, not from memory.
 */
static void drop_device(const char *dev)
{
	char path[256], backing[4096];
	int fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ioctl(fd, BLKFLSBUF, 0); /* as hdparm -t */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	loop_path(path, sizeof(path), dev, "backing_file");
	if (read_line(path, backing, sizeof(backing)) == 0 && backing[0] == '/')
		drop_file(backing);
}

/* A stretch of a file or device to read. */
struct stretch {
	uint64_t off, len;
};

#define MAX_STRETCHES 256

/* read_stretches() -- read the N stretches of FD in order, timed; MB/s (1e6). */
static int read_stretches(int fd, const struct stretch *st, int n, char *buf, double *mb_s)
{
	uint64_t done = 0;
	double t0 = pgl_now();
	for (int i = 0; i < n; i++) {
		for (uint64_t at = 0; at < st[i].len;) {
			uint64_t left = st[i].len - at;
			size_t want = left < STREAM_CHUNK ? (size_t)left : STREAM_CHUNK;
			ssize_t got = pread(fd, buf, want, (off_t)(st[i].off + at));
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return -errno;
			if (got == 0)
				break;
			at += (uint64_t)got;
			done += (uint64_t)got;
			if (atomic_load(&pgl_interrupted))
				return -EINTR;
		}
	}
	double secs = pgl_now() - t0;
	*mb_s = secs > 0 ? (double)done / 1e6 / secs : 0;
	return 0;
}

/*
 * file_stretches() -- where the first BYTES of FD lie on its device
 * (FIEMAP), at most MAX stretches into ST, in the file's order.  Returns
 * how many; 0 if the file system does not say (or the data is not where a
 * read of the device finds it: inline, encoded, not yet allocated).
 */
static int file_stretches(int fd, uint64_t bytes, struct stretch *st, int max)
{
	struct fiemap *fm = calloc(1, sizeof(*fm) + (size_t)max * sizeof(fm->fm_extents[0]));
	int n = 0;
	if (!fm)
		return 0;
	fm->fm_start = 0;
	fm->fm_length = bytes;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = (unsigned)max;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) == 0) {
		const unsigned bad = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
				     FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
				     FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_UNWRITTEN;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (e->fe_flags & bad) {
				n = 0;
				break;
			}
			st[n++] = (struct stretch){e->fe_physical, e->fe_length};
		}
	}
	free(fm);
	return n;
}

/* resident_pct() -- how much of FD's first BYTES the page cache holds, in %
 * (mincore() of a mapping, which reads nothing in); 0 if it cannot tell. */
static double resident_pct(int fd, uint64_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t npages = (size_t)((bytes + (uint64_t)page - 1) / (uint64_t)page), in = 0;
	unsigned char *vec = malloc(npages ? npages : 1);
	void *map = bytes ? mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (vec && map != MAP_FAILED && mincore(map, (size_t)bytes, vec) == 0)
		for (size_t i = 0; i < npages; i++)
			in += vec[i] & 1;
	if (map != MAP_FAILED)
		munmap(map, (size_t)bytes);
	free(vec);
	return npages ? 100.0 * (double)in / (double)npages : 0;
}

int pgl_stream(const char *dir, const char *dev, uint64_t bytes, struct pgl_stream *out)
{
	char path[1100];
	char *buf = malloc(STREAM_CHUNK);
	struct stretch *st = calloc(MAX_STRETCHES, sizeof(*st));
	int ret = 0, dfd = -1;
	*out = (struct pgl_stream){.dev_mb_s = dev ? 0 : -1};
	snprintf(path, sizeof(path), "%s/stream.dat", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !buf || !st) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	/* a large write + sync */
	memset(buf, 'p', STREAM_CHUNK);
	double t0 = pgl_now();
	for (uint64_t done = 0; done < bytes && ret == 0; done += STREAM_CHUNK) {
		if (write(fd, buf, STREAM_CHUNK) != STREAM_CHUNK)
			ret = errno ? -errno : -EIO;
		else if (atomic_load(&pgl_interrupted))
			ret = -EINTR;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	double secs = pgl_now() - t0;
	if (ret < 0)
		goto out;
	out->write_mb_s = secs > 0 ? (double)bytes / 1e6 / secs : 0;
	if (dev) {
		/* as hdparm -t, where the file lies: the start of a fresh image
		 * is mostly holes, which read as zeros without touching a disk */
		int n = file_stretches(fd, bytes, st, MAX_STRETCHES);
		if (n == 0) {
			st[0] = (struct stretch){0, bytes};
			n = 1;
		}
		if ((dfd = open(dev, O_RDONLY | O_CLOEXEC)) < 0) {
			ret = -errno;
			goto out;
		}
		syncfs(fd);
		drop_device(dev);
		if ((ret = read_stretches(dfd, st, n, buf, &out->dev_mb_s)) < 0)
			goto out;
	}
	/* as dd if=big-file of=/dev/null, cold: the file's pages, then the
	 * device's and the image's under it */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (dev)
		drop_device(dev);
	out->resident_pct = resident_pct(fd, bytes);
	st[0] = (struct stretch){0, bytes};
	ret = read_stretches(fd, st, 1, buf, &out->read_mb_s);
out:
	if (ret < 0 && ret != -EINTR)
		fprintf(stderr, "pgload compare: could not stream through \"%s\"%s%s: %s\n", path,
			dev ? " and " : "", dev ? dev : "", strerror(-ret));
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(st);
	free(buf);
	return ret;
}
