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
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* queue_path() -- /sys/block/DEV/queue/[iosched/]NAME of /dev/DEV. */
static void queue_path(char *buf, size_t cap, const char *dev, bool iosched, const char *name)
{
	const char *base = strrchr(dev, '/');
	snprintf(buf, cap, "/sys/block/%s/queue/%s%s", base ? base + 1 : dev,
		 iosched ? "iosched/" : "", name);
}

/* queue_write() -- VALUE into the queue file of DEV; says why on failure. */
static int queue_write(const char *dev, bool iosched, const char *name, const char *value)
{
	char path[256];
	queue_path(path, sizeof(path), dev, iosched, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;
	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0)
		fprintf(stderr, "pgload compare: could not write \"%s\" to %s: %s\n", value, path,
			strerror(-ret));
	return ret;
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

int pgl_queue_read(const char *dev, struct pgl_queue_state *st)
{
	char path[256], line[512];
	memset(st, 0, sizeof(*st));
	snprintf(st->device, sizeof(st->device), "%s", dev);
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

/* stream_read() -- read FD from the start, BYTES at most, timed; MB/s (1e6). */
static int stream_read(int fd, uint64_t bytes, char *buf, double *mb_s)
{
	uint64_t done = 0;
	double t0 = pgl_now();
	while (done < bytes) {
		size_t want = bytes - done < STREAM_CHUNK ? (size_t)(bytes - done) : STREAM_CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (uint64_t)n;
		if (atomic_load(&pgl_interrupted))
			return -EINTR;
	}
	double secs = pgl_now() - t0;
	*mb_s = secs > 0 ? (double)done / 1e6 / secs : 0;
	return 0;
}

int pgl_stream_device(const char *dev, uint64_t bytes, double *mb_s)
{
	char *buf = malloc(STREAM_CHUNK);
	int fd = open(dev, O_RDONLY | O_CLOEXEC), ret = 0;
	*mb_s = 0;
	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	/* as hdparm -t: from the disk, not from the page cache */
	ioctl(fd, BLKFLSBUF, 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	ret = stream_read(fd, bytes, buf, mb_s);
out:
	if (ret < 0 && ret != -EINTR)
		fprintf(stderr, "pgload compare: could not read %s: %s\n", dev, strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

int pgl_stream_file(const char *dir, uint64_t bytes, double *write_mb_s, double *read_mb_s)
{
	char path[1100];
	char *buf = malloc(STREAM_CHUNK);
	int ret = 0;
	*write_mb_s = *read_mb_s = 0;
	snprintf(path, sizeof(path), "%s/stream.dat", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	/* a large write + sync, then dd if=big-file of=/dev/null */
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
	*write_mb_s = secs > 0 ? (double)bytes / 1e6 / secs : 0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (lseek(fd, 0, SEEK_SET) < 0)
		ret = -errno;
	else
		ret = stream_read(fd, bytes, buf, read_mb_s);
out:
	if (ret < 0 && ret != -EINTR)
		fprintf(stderr, "pgload compare: could not stream through \"%s\": %s\n", path,
			strerror(-ret));
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(buf);
	return ret;
}
