/*
 * timeline.c -- what happened during one import of `pgload compare`, so
 * that a stall is seen where it happens: the checkpoints (from the server
 * log, which log_checkpoints and a log_line_prefix of "%n [%p] " give:
 * each "checkpoint complete" line has its end, its total time, hence its
 * start, and its write and sync times) and the WAL segments PostgreSQL
 * created (from inotify on pg_wal: a segment is created as xlogtemp.PID,
 * filled with zeros and fsynced while commits may wait, then renamed into
 * place; a recycled segment is only renamed, and is counted apart).  The
 * commits of each second are the OLTP clients' (oltp.c).
 *
 * Why these sources: the log gives a checkpoint's start and end to the
 * millisecond and what it did, where polling pg_stat_bgwriter sees only
 * that one ended, a poll later; inotify sees a segment's creation begin
 * and end as they happen (through a pgiofs mount too: the events come
 * from the kernel's VFS), where polling pg_ls_waldir() would miss a
 * zero-fill shorter than its period and cannot tell creation from
 * recycling.
 *
 * What must stay true: every time is in seconds from the import's start
 * (pgl_now() of the caller's t0); the watcher's thread only appends to its
 * own array, read by the caller after the join.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare_i.h"

#define TEMP_PREFIX "xlogtemp." /* a WAL segment being created (xlog.c) */

/* One event on pg_wal. */
struct wal_event {
	double t;
	uint32_t mask, cookie;
	bool temp; /* xlogtemp.PID, else a segment's name */
	char name[40];
};

struct tl_watch {
	int fd; /* inotify, -1: pg_wal not watched */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	struct wal_event *ev;
	size_t nev, cap;
	bool lost; /* events dropped (memory, or the kernel's queue overflowed) */
	char log[512];
	off_t log_off; /* -1: no log to read */
	double mono0, real0;
};

/* is_segment() -- NAME is a WAL segment's: 24 hexadecimal digits. */
static bool is_segment(const char *name)
{
	size_t n = strlen(name);
	return n == 24 && strspn(name, "0123456789ABCDEF") == n;
}

static void record(struct tl_watch *w, const struct inotify_event *e, double t)
{
	bool temp = strncmp(e->name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0;
	if (e->mask & IN_Q_OVERFLOW)
		w->lost = true;
	if (!e->len || (!temp && !is_segment(e->name)))
		return;
	if (w->nev == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct wal_event *ev = realloc(w->ev, cap * sizeof(*ev));
		if (!ev) {
			w->lost = true;
			return;
		}
		w->ev = ev;
		w->cap = cap;
	}
	struct wal_event *x = &w->ev[w->nev++];
	*x = (struct wal_event){.t = t, .mask = e->mask, .cookie = e->cookie, .temp = temp};
	snprintf(x->name, sizeof(x->name), "%s", e->name);
}

static void *watch_main(void *arg)
{
	struct tl_watch *w = arg;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = {.fd = w->fd, .events = POLLIN};
	while (!atomic_load(&w->stop)) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		double t = pgl_now();
		ssize_t n;
		while ((n = read(w->fd, buf, sizeof(buf))) > 0)
			for (char *q = buf; q < buf + n;) {
				const struct inotify_event *e = (const struct inotify_event *)q;
				record(w, e, t);
				q += sizeof(*e) + e->len;
			}
	}
	return NULL;
}

int pgl_tl_start(const char *waldir, const char *log, struct tl_watch **out)
{
	struct tl_watch *w = calloc(1, sizeof(*w));
	struct timespec rt;
	struct stat st;
	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->log_off = -1;
	if (log) {
		snprintf(w->log, sizeof(w->log), "%s", log);
		w->log_off = stat(log, &st) == 0 ? st.st_size : 0;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd >= 0 &&
	    inotify_add_watch(w->fd, waldir, IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE) <
		0) {
		fprintf(stderr,
			"pgload compare: cannot watch \"%s\" (no WAL segments in the "
			"timeline): %s\n",
			waldir, strerror(errno));
		close(w->fd);
		w->fd = -1;
	}
	if (w->fd >= 0 && pthread_create(&w->thread, NULL, watch_main, w) == 0)
		w->started = true;
	clock_gettime(CLOCK_REALTIME, &rt);
	w->mono0 = pgl_now();
	w->real0 = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9;
	*out = w;
	return 0;
}

/* add_span() -- a span from A to B (s) to *V, N of them. */
static void add_span(struct tl_span **v, int *n, double a, double b, const char *what)
{
	struct tl_span *x = realloc(*v, (size_t)(*n + 1) * sizeof(**v));
	if (!x)
		return;
	*v = x;
	x[*n] = (struct tl_span){.start = a, .end = b, .write_s = -1, .sync_s = -1};
	snprintf(x[*n].what, sizeof(x[*n].what), "%s", what ? what : "");
	(*n)++;
}

/* segments() -- W's events on pg_wal as spans of segment creation (from
 * xlogtemp.PID's creation to its rename or removal) and recycled segments,
 * in seconds from T0, into TL. */
static void segments(const struct tl_watch *w, double t0, struct timeline *tl)
{
	for (size_t i = 0; i < w->nev; i++) {
		const struct wal_event *e = &w->ev[i];
		if (e->temp && (e->mask & IN_CREATE)) {
			double end = -1;
			for (size_t k = i + 1; k < w->nev && end < 0; k++)
				if (w->ev[k].temp && strcmp(w->ev[k].name, e->name) == 0 &&
				    (w->ev[k].mask & (IN_MOVED_FROM | IN_DELETE)))
					end = w->ev[k].t - t0;
			add_span(&tl->seg, &tl->nseg, e->t - t0, end, NULL);
		} else if (!e->temp && (e->mask & IN_MOVED_TO)) {
			/* renamed from another segment's name: recycled */
			for (size_t k = i; k-- > 0;)
				if ((w->ev[k].mask & IN_MOVED_FROM) &&
				    w->ev[k].cookie == e->cookie) {
					tl->recycled += !w->ev[k].temp;
					break;
				}
		}
	}
}

/* field() -- the number after KEY ("write=") in S, or -1. */
static double field(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	return p ? strtod(p + strlen(key), NULL) : -1;
}

/*
 * checkpoints() -- the checkpoints in W's server log since the watch
 * started, in seconds from T0 (at mono clock), into TL: a "checkpoint
 * complete" line gives the end, and its total= the start; the "checkpoint
 * starting" line before it the kind.  One started but not complete is
 * under way at the end (its end -1).
 */
static void checkpoints(const struct tl_watch *w, double t0, struct timeline *tl)
{
	char line[2048], kind[64] = "";
	double started = -1e9;
	FILE *f = w->log_off >= 0 ? fopen(w->log, "r") : NULL;
	if (!f)
		return;
	tl->has_log = true;
	fseeko(f, w->log_off, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		char *end;
		double epoch = strtod(line, &end);
		if (end == line || *end != ' ')
			continue;
		double t = epoch - w->real0 + w->mono0 - t0;
		const char *s = strstr(line, "LOG:  checkpoint starting: ");
		const char *c = strstr(line, "LOG:  checkpoint complete: ");
		if (s) {
			snprintf(kind, sizeof(kind), "%.*s", (int)strcspn(s + 27, "\n"), s + 27);
			started = t;
		} else if (c) {
			double total = field(c, "total="), a = total >= 0 ? t - total : started;
			add_span(&tl->ckpt, &tl->nckpt, a, t, started > -1e9 ? kind : "");
			tl->ckpt[tl->nckpt - 1].write_s = field(c, "write=");
			tl->ckpt[tl->nckpt - 1].sync_s = field(c, "sync=");
			started = -1e9;
			kind[0] = '\0';
		}
	}
	if (started > -1e9)
		add_span(&tl->ckpt, &tl->nckpt, started, -1, kind);
	fclose(f);
}

void pgl_tl_stop(struct tl_watch *w, double t0, struct timeline *tl)
{
	if (!w)
		return;
	atomic_store(&w->stop, true);
	if (w->started)
		pthread_join(w->thread, NULL);
	if (w->fd >= 0) {
		tl->has_wal = !w->lost;
		segments(w, t0, tl);
		close(w->fd);
	}
	checkpoints(w, t0, tl);
	free(w->ev);
	free(w);
}

void pgl_tl_free(struct timeline *tl)
{
	free(tl->sec);
	free(tl->ckpt);
	free(tl->seg);
	memset(tl, 0, sizeof(*tl));
}

/* overlaps() -- span X is under way at some time of [A, B) (an end < 0:
 * to the import's end, SECS). */
static bool overlaps(const struct tl_span *x, double a, double b, double secs)
{
	double end = x->end < 0 ? secs : x->end;
	return x->start < b && end >= a;
}

int pgl_tl_worst(const struct timeline *tl)
{
	int w = -1;
	for (int k = 0; k < tl->nsec; k++)
		if (tl->sec[k].tx && (w < 0 || tl->sec[k].max > tl->sec[w].max))
			w = k;
	return w;
}

void pgl_tl_describe(const struct timeline *tl, int k, char *buf, size_t cap)
{
	size_t n = 0;
	int segs = 0;
	buf[0] = '\0';
	for (int i = 0; i < tl->nckpt && n < cap; i++) {
		const struct tl_span *x = &tl->ckpt[i];
		char end[24] = "the end";
		if (!overlaps(x, k, k + 1, tl->secs))
			continue;
		if (x->end >= 0)
			snprintf(end, sizeof(end), "%.1f s", x->end);
		n += (size_t)snprintf(buf + n, cap - n, "%scheckpoint (%s) %.1f s to %s",
				      n ? "; " : "", x->what[0] ? x->what : "?", x->start, end);
	}
	for (int i = 0; i < tl->nseg; i++)
		segs += overlaps(&tl->seg[i], k, k + 1, tl->secs);
	if (n < cap && segs)
		n += (size_t)snprintf(buf + n, cap - n, "%s%d WAL segment%s created", n ? "; " : "",
				      segs, segs == 1 ? "" : "s");
	if (n < cap && tl->post_start >= 0)
		snprintf(buf + n, cap - n, "%s%s", n ? "; " : "",
			 tl->post_start >= k + 1 ? "data phase"
			 : tl->post_start <= k	 ? "post phase"
						 : "data, then post phase");
}
