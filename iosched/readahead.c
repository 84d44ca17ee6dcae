/*
 * readahead.c -- large sequential readahead for the queueing policies
 * (ra_window_kb > 0): per-file stream detection, windows that grow like
 * Linux's on-demand readahead, the next window started asynchronously at a
 * marker, and a bounded cache of what was read ahead.
 *
 * A file's stream (struct ra_file): a read that starts where the previous
 * one ended is sequential (a file's first read at offset 0 too).  A
 * sequential read that finds nothing starts a sync window [off, off + W),
 * W = 4x the read up to ra_window_kb (at least the read), and waits for it;
 * its async marker is the first byte after the demanded part.  A read that
 * reaches the marker of the newest window starts the next window, twice as
 * large up to ra_window_kb, whose marker is its first byte: the reader is
 * always one window ahead.  A read that is neither sequential nor served by
 * read-ahead data ends the stream (the window starts small again).
 *
 * A window (struct ra_buf) is a read of the scheduler's own (IOS_F_INTERNAL,
 * not accounted or traced) through the core on a dup() of the triggering
 * read's descriptor, so it is ordered (it waits for earlier overlapping
 * writes), merged and timed by the device model like any read.  Async
 * windows are flagged IOS_F_READAHEAD (dbaware serves them after reads);
 * when a reader starts waiting on a queued one it becomes an ordinary read.
 * Once complete it is cached until every page was read (the data then lives
 * in the mount's page cache), or it is evicted, invalidated or released.
 *
 * A trace replay (IOS_F_NOEXEC reads, no descriptor, no buffers) is read
 * ahead for the same way: its windows are IOS_F_NOEXEC too and hold no
 * data, so the emulated device times them and the cache decides which
 * reads they serve, as in the daemon.
 *
 * What must stay true:
 *   - memory: cached windows plus windows in flight hold at most
 *     ra_cache_mb (least recently used cached windows are evicted to make
 *     room; a window that still does not fit is not read ahead); a file's
 *     state is freed by ios_release() and at destroy;
 *   - coherence: a write (or ios_invalidate()) arriving drops cached data it
 *     overlaps and marks windows in flight that it overlaps stale, before
 *     it is queued; a stale window's data is dropped when it completes and
 *     its waiters are queued as ordinary reads (they arrived before the
 *     write, so either version is theirs to see).  A window issued after a
 *     write waits for it in the core.  So a read is never served data older
 *     than a write that arrived before it;
 *   - the non-stale windows of a file never overlap;
 *   - accounting: every byte read ahead is counted once, as a hit when a
 *     read is first served from it, or as wasted when it is dropped unread
 *     (pages a sync window read for the read that started it are neither).
 * Everything here runs on the dispatcher thread (the core's rule).
 */
#include "iosched_i.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RA_PAGE	     4096u /* granularity of "read" tracking and alignment */
#define RA_TAB	     256u  /* hash buckets (power of two) */
#define RA_MAX_FILES 4096u /* streams tracked at most */
#define RA_OFF_MAX   ((off_t)(~(uint64_t)0 >> 1))

struct ra_file;

/* One window: in flight, then cached. */
struct ra_buf {
	struct ios_req r; /* the window's read */
	struct iovec iov;
	struct ios_sched *s;
	struct ra_file *rf;
	struct ios_rq *rq;	 /* in flight: the core's request */
	struct ios_list fnode;	 /* rf->bufs, by offset */
	struct ios_list lru;	 /* ra->lru once cached */
	struct ios_list waiters; /* rqs of reads waiting for it (anode) */
	off_t off;
	size_t len;   /* in flight: asked for; cached: what was read */
	size_t alloc; /* bytes of data (counted in ra->bytes) */
	off_t marker; /* reading this byte starts the next window; -1: none */
	bool inflight, stale;
	enum ios_class cls;
	uint64_t *seen; /* pages read (or demanded by a sync window's reader) */
	char *data;
};

struct ra_file {
	struct ra_file *hnext;
	struct ios_file_id fid;
	off_t prev_end;	      /* a read starting here is sequential */
	size_t size;	      /* the newest window's size; 0: no stream */
	off_t end;	      /* the newest window's end */
	struct ios_list bufs; /* by offset */
	bool released;	      /* free once its windows in flight are done */
};

struct ios_ra {
	struct ra_file *tab[RA_TAB];
	size_t nfiles;
	struct ios_list lru; /* cached windows, least recently used first */
	size_t bytes;	     /* cached plus in flight */
	size_t cap;	     /* ra_cache_mb */
	size_t max_window;   /* ra_window_kb, whole pages */
	struct ios_counters cnt;
	const struct ios_ra_core *core;
};

/* ---- files --------------------------------------------------------------------- */

static struct ra_file **rf_slot(struct ios_ra *ra, struct ios_file_id id)
{
	uint64_t h = ios_fid_mix(id);

	return &ra->tab[(h ^ (h >> 31)) & (RA_TAB - 1)];
}

static struct ra_file *rf_find(struct ios_ra *ra, struct ios_file_id id)
{
	struct ra_file *rf;

	for (rf = *rf_slot(ra, id); rf; rf = rf->hnext)
		if (ios_fid_eq(rf->fid, id))
			return rf;
	return NULL;
}

static void rf_free(struct ios_ra *ra, struct ra_file *rf)
{
	struct ra_file **pp;

	for (pp = rf_slot(ra, rf->fid); *pp; pp = &(*pp)->hnext)
		if (*pp == rf) {
			*pp = rf->hnext;
			break;
		}
	ra->nfiles--;
	free(rf);
}

/* rf_make_room() -- at RA_MAX_FILES, forget one stream with no data. */
static bool rf_make_room(struct ios_ra *ra)
{
	unsigned i;

	for (i = 0; i < RA_TAB; i++) {
		struct ra_file *rf;

		for (rf = ra->tab[i]; rf; rf = rf->hnext)
			if (ios_list_empty(&rf->bufs)) {
				rf_free(ra, rf);
				return true;
			}
	}
	return false;
}

static struct ra_file *rf_get(struct ios_ra *ra, struct ios_file_id id)
{
	struct ra_file *rf = rf_find(ra, id);
	struct ra_file **slot;

	if (rf)
		return rf;
	if (ra->nfiles >= RA_MAX_FILES && !rf_make_room(ra))
		return NULL;
	rf = calloc(1, sizeof(*rf));
	if (!rf)
		return NULL;
	rf->fid = id;
	ios_list_init(&rf->bufs);
	slot = rf_slot(ra, id);
	rf->hnext = *slot;
	*slot = rf;
	ra->nfiles++;
	return rf;
}

/* ---- windows ------------------------------------------------------------------- */

static struct ra_buf *buf_of(struct ios_list *p)
{
	return ios_container_of(p, struct ra_buf, fnode);
}

/* seen_range() -- mark the pages of @b overlapping [@from, @to) as read;
 * the bytes of @b they hold that were not marked before. */
static size_t seen_range(struct ra_buf *b, off_t from, off_t to)
{
	off_t end = b->off + (off_t)b->len;
	size_t fresh = 0, p;

	if (from < b->off)
		from = b->off;
	if (to > end)
		to = end;
	if (from >= to)
		return 0;
	for (p = (size_t)(from - b->off) / RA_PAGE; b->off + (off_t)(p * RA_PAGE) < to; p++) {
		off_t ps = b->off + (off_t)(p * RA_PAGE), pe = ps + RA_PAGE;

		if (b->seen[p / 64] & (1ull << (p % 64)))
			continue;
		b->seen[p / 64] |= 1ull << (p % 64);
		fresh += (size_t)((pe < end ? pe : end) - ps);
	}
	return fresh;
}

/* unseen() -- bytes of cached @b never read. */
static size_t unseen(const struct ra_buf *b)
{
	size_t p, n = 0;

	for (p = 0; p * RA_PAGE < b->len; p++)
		if (!(b->seen[p / 64] & (1ull << (p % 64)))) {
			size_t left = b->len - p * RA_PAGE;

			n += left < RA_PAGE ? left : RA_PAGE;
		}
	return n;
}

static void note(struct ios_sched *s, enum ios_class cls, size_t hit, size_t wasted)
{
	s->ra->cnt.ra_hit_bytes += hit;
	s->ra->cnt.ra_wasted_bytes += wasted;
	if (hit || wasted)
		ios_stats_note_readahead(s->stats, cls, hit, wasted);
}

/* buf_free() -- forget @b (not in flight); its unread bytes are wasted.
 * Its file stays (see rf_free()). */
static void buf_free(struct ios_sched *s, struct ra_buf *b)
{
	struct ios_ra *ra = s->ra;

	note(s, b->cls, 0, unseen(b));
	ios_list_del(&b->fnode);
	ios_list_del(&b->lru);
	ra->bytes -= b->alloc;
	free(b->data);
	free(b->seen);
	free(b);
}

/* drop_range() -- writes (or a release) of [@from, @to): cached windows
 * overlapping it go, windows in flight overlapping it become stale. */
static void drop_range(struct ios_sched *s, struct ra_file *rf, off_t from, off_t to)
{
	struct ios_list *p, *n;

	for (p = rf->bufs.next; p != &rf->bufs; p = n) {
		struct ra_buf *b = buf_of(p);

		n = p->next;
		if (b->off >= to || b->off + (off_t)b->len <= from)
			continue;
		if (b->inflight) {
			if (!b->stale)
				s->ra->cnt.ra_stale++;
			b->stale = true;
			b->marker = -1;
		} else {
			buf_free(s, b);
		}
	}
}

/* reserve() -- room for @size more bytes, evicting cached windows. */
static bool reserve(struct ios_sched *s, size_t size)
{
	struct ios_ra *ra = s->ra;

	while (ra->bytes + size > ra->cap && !ios_list_empty(&ra->lru))
		buf_free(s, ios_container_of(ra->lru.next, struct ra_buf, lru));
	return ra->bytes + size <= ra->cap;
}

static void ra_done(struct ios_req *r, ssize_t res);

/* start_window() -- read [@off, @off + @size) ahead through the core for
 * reads on @fd; with @waiter (a sync window) that read waits for it.
 * The window is shortened so as not to overlap another.  Returns whether a
 * window was started. */
static bool start_window(struct ios_sched *s, struct ra_file *rf, off_t off, size_t size,
			 const struct ios_req *trigger, struct ios_rq *waiter)
{
	struct ios_ra *ra = s->ra;
	struct ios_list *p, *pos = &rf->bufs;
	struct ra_buf *b;
	size_t need = waiter ? waiter->req->len : 1;

	for (p = rf->bufs.next; p != &rf->bufs; p = p->next) {
		struct ra_buf *o = buf_of(p);

		if (o->stale || o->off + (off_t)o->len <= off)
			continue;
		if (o->off <= off)
			return false; /* @off is read ahead already */
		if ((size_t)(o->off - off) < size)
			size = (size_t)(o->off - off) / RA_PAGE * RA_PAGE;
		break;
	}
	if (size < need || size == 0 || !reserve(s, size))
		return false;
	/* where it goes, only now: reserve() may have evicted a window of this
	 * file, the one it would have gone after included.  Stale windows may
	 * overlap: keep the list in offset order */
	for (p = rf->bufs.next; p != &rf->bufs && buf_of(p)->off <= off; p = p->next)
		pos = p;
	b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	b->seen = calloc((size + RA_PAGE * 64 - 1) / (RA_PAGE * 64), sizeof(uint64_t));
	if (!b->seen)
		goto fail;
	if (trigger->flags & IOS_F_NOEXEC) { /* a replay: nothing is read */
		b->r.fd = -1;
	} else {
		if (posix_memalign((void **)&b->data, RA_PAGE, size) != 0)
			goto fail;
		/* the caller may close its own */
		b->r.fd = fcntl(trigger->fd, F_DUPFD_CLOEXEC, 0);
		if (b->r.fd < 0)
			goto fail;
	}
	b->s = s;
	b->rf = rf;
	b->off = off;
	b->len = b->alloc = size;
	b->cls = trigger->cls;
	b->inflight = true;
	ios_list_init(&b->lru);
	ios_list_init(&b->waiters);
	b->iov.iov_base = b->data;
	b->iov.iov_len = size;
	b->r.fid = trigger->fid;
	b->r.cls = trigger->cls;
	b->r.dir = IOS_READ;
	b->r.flags = (waiter ? 0 : IOS_F_READAHEAD) | (trigger->flags & IOS_F_NOEXEC);
	b->r.off = off;
	b->r.len = size;
	b->r.iov = &b->iov;
	b->r.iovcnt = 1;
	b->r.pid = trigger->pid;
	b->r.done = ra_done;
	b->r.priv = b;
	if (waiter) {
		/* the demanded pages are the reader's, not read ahead */
		seen_range(b, waiter->req->off, waiter->req->off + (off_t)need);
		b->marker = size > need ? off + (off_t)need : -1;
		b->r.arrival_ns = waiter->arrival_ns;
		ios_list_add_tail(&b->waiters, &waiter->anode);
	} else {
		b->marker = off;
	}
	ios_list_insert_after(pos, &b->fnode);
	ra->bytes += size;
	if (ra->bytes > ra->cnt.ra_peak_bytes)
		ra->cnt.ra_peak_bytes = ra->bytes;
	rf->size = size;
	rf->end = off + (off_t)size;
	ra->cnt.ra_windows++;
	if (!waiter)
		ra->cnt.ra_async++;
	b->rq = s->ra->core->submit(s, &b->r);
	if (b->rq)
		return true;
	/* out of memory: as if it had never been */
	ios_list_init(&b->waiters);
	ios_list_del(&b->fnode);
	ra->bytes -= size;
	ra->cnt.ra_windows--;
	if (!waiter)
		ra->cnt.ra_async--;
	rf->size = 0;
	if (b->r.fd >= 0)
		close(b->r.fd);
fail:
	free(b->seen);
	free(b->data);
	free(b);
	return false;
}

/* next_size() -- the window after one of @size: twice as large. */
static size_t next_size(const struct ios_ra *ra, size_t size)
{
	size_t n = size ? 2 * size : ra->max_window;

	return n < ra->max_window ? n : ra->max_window;
}

/* ---- serving reads ------------------------------------------------------------- */

/* iov_slice() -- the pieces of @req's buffers holding its bytes [@skip,
 * @skip + @n) into @out (room for req->iovcnt); how many. */
static int iov_slice(const struct ios_req *req, size_t skip, size_t n, struct iovec *out)
{
	int i, cnt = 0;

	for (i = 0; i < req->iovcnt && n > 0; i++) {
		size_t l = req->iov[i].iov_len, k;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		k = l - skip < n ? l - skip : n;
		out[cnt].iov_base = (char *)req->iov[i].iov_base + skip;
		out[cnt++].iov_len = k;
		n -= k;
		skip = 0;
	}
	return cnt;
}

/* copy_out() -- @n bytes of @src to byte @skip of @req's buffers. */
static void copy_out(const struct ios_req *req, size_t skip, const char *src, size_t n)
{
	struct iovec v[req->iovcnt > 0 ? req->iovcnt : 1]; /* at most IOV_MAX */
	int i, cnt = iov_slice(req, skip, n, v);

	for (i = 0; i < cnt; i++) {
		memcpy(v[i].iov_base, src, v[i].iov_len);
		src += v[i].iov_len;
	}
}

/* A read served in part from the cache: the rest is read by a sub-read of
 * the scheduler's own into the reader's buffers. */
struct ra_sub {
	struct ios_req r;
	struct ios_sched *s;
	struct ios_rq *orig;
	struct iovec *iov, iov_inline[4];
};

static void sub_done(struct ios_req *r, ssize_t res)
{
	struct ra_sub *sub = (struct ra_sub *)r;
	struct ios_req *o = sub->orig->req;
	ssize_t total = res;

	if (res >= 0)
		total = (size_t)res < r->len ? (ssize_t)(r->off - o->off) + res : (ssize_t)o->len;
	sub->s->ra->core->finish(sub->s, sub->orig, total);
	if (sub->iov != sub->iov_inline)
		free(sub->iov);
	free(sub);
}

/* sub_read() -- read [@lo, @hi) of @rq's range into its buffers, then
 * complete it.  false if out of memory (nothing done). */
static bool sub_read(struct ios_sched *s, struct ios_rq *rq, off_t lo, off_t hi)
{
	struct ios_req *o = rq->req;
	struct ra_sub *sub = calloc(1, sizeof(*sub));
	int cnt;

	if (!sub)
		return false;
	sub->iov = o->iovcnt <= 4 ? sub->iov_inline : calloc((size_t)o->iovcnt, sizeof(*sub->iov));
	if (!sub->iov) {
		free(sub);
		return false;
	}
	cnt = iov_slice(o, (size_t)(lo - o->off), (size_t)(hi - lo), sub->iov);
	sub->s = s;
	sub->orig = rq;
	sub->r = *o;
	sub->r.flags = o->flags & IOS_F_NOEXEC;
	sub->r.off = lo;
	sub->r.len = (size_t)(hi - lo);
	sub->r.iov = sub->iov;
	sub->r.iovcnt = cnt;
	sub->r.done = sub_done;
	sub->r.priv = sub;
	if (s->ra->core->submit(s, &sub->r))
		return true;
	if (sub->iov != sub->iov_inline)
		free(sub->iov);
	free(sub);
	return false;
}

/* promote() -- a reader waits on queued async window @b: an ordinary read now. */
static void promote(struct ios_sched *s, struct ra_buf *b)
{
	if (!b->rq || b->rq->state != RQ_QUEUED || !(b->r.flags & IOS_F_READAHEAD))
		return;
	s->pol_ops->remove(s, b->rq);
	b->r.flags &= ~IOS_F_READAHEAD;
	s->pol_ops->add(s, b->rq);
}

/* serve() -- what the windows of @rf can do for read @rq: wait for a
 * window in flight that it overlaps; or copy what is cached and read the
 * rest (one sub-read from the first to the last byte not cached); or
 * nothing (false).  A read over the newest window's marker starts the next
 * window (reads served or waiting only: the stream is sequential). */
static bool serve(struct ios_sched *s, struct ra_file *rf, struct ios_rq *rq)
{
	struct ios_req *req = rq->req;
	off_t a = req->off, e = a + (off_t)req->len, cur = a, lo = -1, hi = -1;
	struct ra_buf *wait = NULL;
	bool covered = false, fire = false, done = false;
	struct ios_list *p, *n;

	for (p = rf->bufs.next; p != &rf->bufs; p = p->next) {
		struct ra_buf *b = buf_of(p);
		off_t x = b->off, y = b->off + (off_t)b->len;

		if (b->stale || y <= a)
			continue;
		if (x >= e)
			break;
		covered = true;
		if (b->inflight)
			wait = b;
		if (b->marker >= a && b->marker < e) {
			fire = fire || b->off + (off_t)b->alloc == rf->end;
			b->marker = -1;
		}
		if (x > cur) {
			if (lo < 0)
				lo = cur;
			hi = x;
		}
		if (y > cur)
			cur = y;
	}
	if (!covered)
		return false;
	if (cur < e) {
		if (lo < 0)
			lo = cur;
		hi = e;
	}
	if (wait) {
		ios_list_add_tail(&wait->waiters, &rq->anode);
		promote(s, wait);
	} else {
		/* copy what is cached (inside [lo, hi) too: the sub-read
		 * overwrites it with the same bytes) */
		for (p = rf->bufs.next; p != &rf->bufs; p = n) {
			struct ra_buf *b = buf_of(p);
			off_t x = b->off > a ? b->off : a;
			off_t y = b->off + (off_t)b->len < e ? b->off + (off_t)b->len : e;

			n = p->next;
			if (b->stale || x >= y)
				continue;
			if (b->data) /* a replay's windows hold none */
				copy_out(req, (size_t)(x - a), b->data + (x - b->off),
					 (size_t)(y - x));
			note(s, b->cls, seen_range(b, x, y), 0);
			ios_list_del(&b->lru);
			ios_list_add_tail(&s->ra->lru, &b->lru);
		}
		/* an O_DIRECT descriptor needs whole pages (the read's own
		 * range is aligned if it uses one) */
		if (lo >= 0) {
			lo = lo / RA_PAGE * RA_PAGE;
			hi = (hi + RA_PAGE - 1) / RA_PAGE * RA_PAGE;
			lo = lo < a ? a : lo;
			hi = hi > e ? e : hi;
		}
		done = lo < 0;
		if (!done && !sub_read(s, rq, lo, hi))
			return false; /* read in full as usual */
	}
	/* before the read completes: done may free it */
	if (fire && rf->size)
		start_window(s, rf, rf->end > e ? rf->end : e, next_size(s->ra, rf->size), req,
			     NULL);
	if (wait)
		return true;
	/* fully read windows go: the data is in the mount's cache now */
	for (p = rf->bufs.next; p != &rf->bufs; p = n) {
		struct ra_buf *b = buf_of(p);

		n = p->next;
		if (b->off >= e)
			break;
		if (!b->inflight && b->off + (off_t)b->len > a && unseen(b) == 0)
			buf_free(s, b);
	}
	if (done)
		s->ra->core->finish(s, rq, (ssize_t)(e - a));
	return true;
}

bool ios_ra_read(struct ios_sched *s, struct ios_rq *rq)
{
	struct ios_ra *ra = s->ra;
	struct ios_req *req = rq->req;
	struct ra_file *rf;
	bool seq;
	size_t w;

	if (req->len == 0)
		return false;
	rf = rf_get(ra, req->fid);
	if (!rf)
		return false;
	rf->released = false;
	seq = req->off == rf->prev_end;
	rf->prev_end = req->off + (off_t)req->len;
	if (serve(s, rf, rq))
		return true;
	if (!seq) {
		rf->size = 0; /* a random access ends the stream */
		return false;
	}
	/* a sequential miss: a sync window, 4x the read to start with */
	w = rf->size ? next_size(ra, rf->size) : 4 * req->len;
	if (w > ra->max_window)
		w = ra->max_window;
	w = (w + RA_PAGE - 1) / RA_PAGE * RA_PAGE;
	if (w > req->len)
		return start_window(s, rf, req->off, w, req, rq);
	/* reads as large as a window: read ahead of them, one window on */
	if (!start_window(s, rf, rf->prev_end, ra->max_window, req, NULL))
		rf->size = 0;
	return false;
}

/* ra_done() -- a window's read completed. */
static void ra_done(struct ios_req *r, ssize_t res)
{
	struct ra_buf *b = r->priv;
	struct ios_sched *s = b->s;
	struct ra_file *rf = b->rf;
	struct ios_list waiters, *p;

	if (r->fd >= 0)
		close(r->fd);
	b->rq = NULL;
	b->inflight = false;
	ios_list_init(&waiters);
	if (!ios_list_empty(&b->waiters)) { /* take them over */
		waiters.next = b->waiters.next;
		waiters.prev = b->waiters.prev;
		waiters.next->prev = &waiters;
		waiters.prev->next = &waiters;
		ios_list_init(&b->waiters);
	}
	b->len = res > 0 ? (size_t)res : 0;
	if (b->len < b->alloc) {
		/* the end of the file (or an error): the stream stops here */
		if (b->marker >= b->off + (off_t)b->len)
			b->marker = -1;
		if (rf->end == b->off + (off_t)b->alloc)
			rf->size = 0;
	}
	s->ra->cnt.ra_read_bytes += unseen(b); /* the reader's own pages are seen */
	if (b->stale || res < 0) {
		while (!ios_list_empty(&waiters)) {
			p = waiters.next;
			ios_list_del(p);
			s->ra->core->queue(s, ios_container_of(p, struct ios_rq, anode));
		}
		buf_free(s, b); /* what it read is wasted */
		if (rf->released && ios_list_empty(&rf->bufs))
			rf_free(s->ra, rf);
		return;
	}
	ios_list_add_tail(&s->ra->lru, &b->lru);
	if (ios_list_empty(&waiters) && unseen(b) == 0) {
		buf_free(s, b);
		return;
	}
	while (!ios_list_empty(&waiters)) {
		struct ios_rq *w;

		p = waiters.next;
		ios_list_del(p);
		w = ios_container_of(p, struct ios_rq, anode);
		if (!serve(s, rf, w))
			s->ra->core->queue(s, w);
	}
}

/* ---- control ------------------------------------------------------------------- */

void ios_ra_invalidate(struct ios_sched *s, struct ios_file_id fid, off_t off, off_t len)
{
	struct ra_file *rf = rf_find(s->ra, fid);

	if (rf)
		drop_range(s, rf, off, len > 0 && off <= RA_OFF_MAX - len ? off + len : RA_OFF_MAX);
}

void ios_ra_release(struct ios_sched *s, struct ios_file_id fid)
{
	struct ra_file *rf = rf_find(s->ra, fid);

	if (!rf)
		return;
	drop_range(s, rf, 0, RA_OFF_MAX);
	if (ios_list_empty(&rf->bufs)) {
		rf_free(s->ra, rf);
		return;
	}
	rf->released = true; /* freed with its last window in flight */
	rf->size = 0;
	rf->prev_end = 0;
}

void ios_ra_flush(struct ios_sched *s)
{
	unsigned i;

	for (i = 0; i < RA_TAB; i++) {
		struct ra_file *rf = s->ra->tab[i], *next;

		for (; rf; rf = next) {
			next = rf->hnext;
			ios_ra_release(s, rf->fid); /* frees rf at most */
		}
	}
}

/* ---- creation ------------------------------------------------------------------ */

struct ios_ra *ios_ra_create(const struct ios_settings *set, const struct ios_ra_core *core)
{
	struct ios_ra *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->core = core;
	ios_list_init(&ra->lru);
	ra->max_window = (size_t)set->ra_window_kb * 1024 / RA_PAGE * RA_PAGE;
	if (ra->max_window < RA_PAGE)
		ra->max_window = RA_PAGE;
	ra->cap = (size_t)set->ra_cache_mb << 20;
	return ra;
}

/* ios_ra_destroy() -- after the scheduler drained (nothing in flight). */
void ios_ra_destroy(struct ios_sched *s)
{
	unsigned i;

	if (!s->ra)
		return;
	for (i = 0; i < RA_TAB; i++)
		while (s->ra->tab[i]) {
			struct ra_file *rf = s->ra->tab[i];

			while (!ios_list_empty(&rf->bufs))
				buf_free(s, buf_of(rf->bufs.next));
			rf_free(s->ra, rf);
		}
	free(s->ra);
	s->ra = NULL;
}

void ios_ra_counters(const struct ios_sched *s, struct ios_counters *out)
{
	const struct ios_ra *ra = s->ra;

	if (!ra)
		return;
	out->ra_windows = ra->cnt.ra_windows;
	out->ra_read_bytes = ra->cnt.ra_read_bytes;
	out->ra_async = ra->cnt.ra_async;
	out->ra_hit_bytes = ra->cnt.ra_hit_bytes;
	out->ra_wasted_bytes = ra->cnt.ra_wasted_bytes;
	out->ra_stale = ra->cnt.ra_stale;
	out->ra_bytes = ra->bytes;
	out->ra_peak_bytes = ra->cnt.ra_peak_bytes;
	out->ra_files = ra->nfiles;
}
