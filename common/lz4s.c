/*
 * lz4s.c -- a byte stream in one lz4 frame: the writer (a fixed pool of
 * chunks, a background thread that compresses them) and the reader (the
 * decoder fed unit by unit, so that damage is found and named at the block
 * it hits).  See lz4s.h.
 *
 * Writer invariants:
 *   - the items of one thread appear in the file in the order written, each
 *     whole or (dropped) not at all;
 *   - items == (items in the file) and dropped counts every refusal;
 *   - only the background thread touches the descriptor and the lz4 context
 *     after lz4s_writer_create() returns;
 *   - after an output error nothing more is written, later items are
 *     dropped, and close returns the error.
 *
 * The thread compresses one chunk per LZ4F_compressUpdate() with autoFlush,
 * so every chunk is on its way to the file as soon as it is compressed, and
 * a partly filled chunk is taken after a second without traffic.
 */
#include "lz4s.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIN_CHUNKS    2
#define IDLE_FLUSH_NS 1000000000ull /* a partly filled chunk waits at most 1 s */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- writer ------------------------------------------------------------------ */

struct chunk {
	struct chunk *next;
	size_t used;
	unsigned char data[LZ4S_CHUNK_BYTES];
};

struct lz4s_writer {
	/* an item that may wait for room is copied whole under this lock, so
	 * that items of several threads do not interleave */
	pthread_mutex_t order;

	/* shared, under lock */
	pthread_mutex_t lock;
	pthread_cond_t work; /* the thread: a full chunk, or stop */
	pthread_cond_t room; /* waiting writers: a chunk was freed, or error */
	struct chunk *cur;   /* being filled; NULL when none was free */
	struct chunk *full_head, *full_tail;
	struct chunk *free_list;
	size_t nfree;
	size_t nchunks;
	uint64_t cur_since_ns; /* when cur got its first byte */
	uint64_t items, dropped;
	int stop;
	int error; /* first output error, -errno */
	int wait_when_full;

	/* counters the thread updates, read by lz4s_writer_stats() */
	_Atomic uint64_t bytes_in, bytes_out;

	/* the background thread's own */
	int fd;
	int is_reg;
	LZ4F_cctx *cctx;
	LZ4F_preferences_t prefs;
	unsigned char *out;
	size_t out_cap;
	pthread_t thread;
	struct chunk *pool;
};

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* emit() -- write @n compressed bytes of w->out. */
static int emit(struct lz4s_writer *w, size_t n)
{
	int ret = write_all(w->fd, w->out, n);

	if (ret == 0)
		atomic_fetch_add_explicit(&w->bytes_out, n, memory_order_relaxed);
	return ret;
}

/* compress_chunk() -- compress and write one chunk (thread, no lock held). */
static int compress_chunk(struct lz4s_writer *w, const struct chunk *c)
{
	size_t n = LZ4F_compressUpdate(w->cctx, w->out, w->out_cap, c->data, c->used, NULL);

	if (LZ4F_isError(n))
		return -EIO; /* cannot happen with out_cap = compressBound */
	atomic_fetch_add_explicit(&w->bytes_in, c->used, memory_order_relaxed);
	return n ? emit(w, n) : 0;
}

/* set_error() -- remember the first output error and wake waiting writers
 * so they drop instead of waiting forever.  Caller holds lock. */
static void set_error(struct lz4s_writer *w, int err)
{
	if (err && !w->error) {
		w->error = err;
		pthread_cond_broadcast(&w->room);
	}
}

/* push_full() -- queue w->cur for the thread.  Caller holds lock. */
static void push_full(struct lz4s_writer *w)
{
	struct chunk *c = w->cur;

	w->cur = NULL;
	c->next = NULL;
	if (w->full_tail)
		w->full_tail->next = c;
	else
		w->full_head = c;
	w->full_tail = c;
	pthread_cond_signal(&w->work);
}

/* take_free() -- make a free chunk current.  Caller holds lock, a chunk is
 * free. */
static void take_free(struct lz4s_writer *w)
{
	w->cur = w->free_list;
	w->free_list = w->cur->next;
	w->nfree--;
	w->cur_since_ns = mono_ns();
}

static void *writer_thread(void *arg)
{
	struct lz4s_writer *w = arg;
	struct timespec ts;
	struct chunk *c;
	int err;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->full_head && !w->stop) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&w->work, &w->lock, &ts);
			if (!w->full_head && w->cur && w->cur->used &&
			    mono_ns() - w->cur_since_ns >= IDLE_FLUSH_NS)
				push_full(w); /* quiet: send what there is */
		}
		if (!w->full_head)
			break; /* stop, and nothing left */
		c = w->full_head;
		w->full_head = c->next;
		if (!w->full_head)
			w->full_tail = NULL;
		err = w->error;
		pthread_mutex_unlock(&w->lock);

		if (!err)
			err = compress_chunk(w, c);

		pthread_mutex_lock(&w->lock);
		set_error(w, err);
		c->used = 0;
		c->next = w->free_list;
		w->free_list = c;
		w->nfree++;
		pthread_cond_broadcast(&w->room);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* writer_free() -- release everything (the thread is not running). */
static void writer_free(struct lz4s_writer *w)
{
	if (w->cctx)
		LZ4F_freeCompressionContext(w->cctx);
	free(w->out);
	free(w->pool);
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->order);
	free(w);
}

/* copy_in() -- copy @n bytes into the current chunk and those after it:
 * there is room (drop mode checked it), or the caller may wait for it.
 * Caller holds lock.  0, or the output error. */
static int copy_in(struct lz4s_writer *w, const unsigned char *p, size_t n)
{
	while (n > 0) {
		size_t k;

		while (!w->cur && !w->error) {
			if (w->free_list)
				take_free(w);
			else
				pthread_cond_wait(&w->room, &w->lock);
		}
		if (w->error)
			return w->error;
		if (w->cur->used == 0)
			w->cur_since_ns = mono_ns();
		k = LZ4S_CHUNK_BYTES - w->cur->used;
		if (k > n)
			k = n;
		memcpy(w->cur->data + w->cur->used, p, k);
		w->cur->used += k;
		p += k;
		n -= k;
		if (w->cur->used == LZ4S_CHUNK_BYTES)
			push_full(w);
	}
	return 0;
}

struct lz4s_writer *lz4s_writer_create(const char *path, const struct lz4s_writer_opts *opts,
				       const void *head, size_t head_len, int *err)
{
	struct lz4s_writer *w;
	size_t nchunks, i, n, bound;
	struct stat st;
	int ret, dummy;

	if (!err)
		err = &dummy;
	*err = 0;
	if (!path && (!opts || opts->fd < 0)) {
		*err = -EINVAL;
		errno = -*err;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		*err = -ENOMEM;
		if (!path)
			close(opts->fd);
		errno = -*err;
		return NULL;
	}
	pthread_mutex_init(&w->order, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->room, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&w->work, &ca);
		pthread_condattr_destroy(&ca);
	}
	w->fd = -1;
	w->wait_when_full = opts ? opts->wait_when_full : 0;
	nchunks = (opts && opts->buffer_bytes ? opts->buffer_bytes : LZ4S_DEFAULT_BUFFER) /
		  LZ4S_CHUNK_BYTES;
	if (nchunks < MIN_CHUNKS)
		nchunks = MIN_CHUNKS;
	w->nchunks = nchunks;

	if (path) {
		w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (w->fd < 0) {
			ret = -errno;
			goto fail;
		}
	} else {
		w->fd = opts->fd;
	}
	w->is_reg = fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode);

	w->pool = malloc(sizeof(struct chunk) * nchunks);
	memset(&w->prefs, 0, sizeof(w->prefs));
	w->prefs.frameInfo.blockSizeID = LZ4F_max64KB;
	w->prefs.frameInfo.blockMode = LZ4F_blockLinked;
	w->prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	w->prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	w->prefs.autoFlush = 1;
	bound = LZ4F_compressBound(LZ4S_CHUNK_BYTES, &w->prefs);
	if (bound < LZ4F_compressBound(0, &w->prefs))
		bound = LZ4F_compressBound(0, &w->prefs);
	w->out_cap = bound + LZ4F_HEADER_SIZE_MAX;
	w->out = malloc(w->out_cap);
	if (!w->pool || !w->out ||
	    LZ4F_isError(LZ4F_createCompressionContext(&w->cctx, LZ4F_VERSION))) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < nchunks; i++) {
		w->pool[i].used = 0;
		w->pool[i].next = w->free_list;
		w->free_list = &w->pool[i];
	}
	w->nfree = nchunks;

	/* the frame header now, so that an unwritable file fails here */
	n = LZ4F_compressBegin(w->cctx, w->out, w->out_cap, &w->prefs);
	if (LZ4F_isError(n)) {
		ret = -EIO;
		goto fail;
	}
	ret = emit(w, n);
	if (ret < 0)
		goto fail;

	/* the caller's file header opens the stream (the thread is not running) */
	if (head_len > (nchunks - 1) * (size_t)LZ4S_CHUNK_BYTES) {
		ret = -EINVAL;
		goto fail;
	}
	copy_in(w, head, head_len);

	ret = -pthread_create(&w->thread, NULL, writer_thread, w);
	if (ret < 0)
		goto fail;
	return w;

fail:
	if (w->fd >= 0)
		close(w->fd);
	if (path && w->fd >= 0)
		unlink(path);
	writer_free(w);
	*err = ret;
	errno = -*err;
	return NULL;
}

int lz4s_write(struct lz4s_writer *w, const void *p, size_t n)
{
	int ret;

	if (!w || (!p && n))
		return -EINVAL;
	if (w->wait_when_full)
		pthread_mutex_lock(&w->order);
	pthread_mutex_lock(&w->lock);
	if (!w->wait_when_full) {
		size_t room = w->nfree * (size_t)LZ4S_CHUNK_BYTES;

		if (w->cur)
			room += LZ4S_CHUNK_BYTES - w->cur->used;
		if (room < n || w->error) {
			w->dropped++;
			pthread_mutex_unlock(&w->lock);
			return -ENOBUFS;
		}
	}
	ret = copy_in(w, p, n); /* fails only on an output error: dropped */
	if (ret < 0)
		w->dropped++;
	else
		w->items++;
	pthread_mutex_unlock(&w->lock);
	if (w->wait_when_full)
		pthread_mutex_unlock(&w->order);
	return ret < 0 ? -ENOBUFS : 0;
}

void lz4s_writer_stats(struct lz4s_writer *w, struct lz4s_writer_stats *st)
{
	if (!w || !st)
		return;
	pthread_mutex_lock(&w->lock);
	st->items = w->items;
	st->dropped = w->dropped;
	st->error = w->error;
	pthread_mutex_unlock(&w->lock);
	st->bytes_in = atomic_load_explicit(&w->bytes_in, memory_order_relaxed);
	st->bytes_out = atomic_load_explicit(&w->bytes_out, memory_order_relaxed);
}

int lz4s_writer_close(struct lz4s_writer *w, struct lz4s_writer_stats *st)
{
	int ret;
	size_t n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	if (w->cur && w->cur->used)
		push_full(w);
	w->stop = 1;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);

	/* the thread is gone: the rest is ours */
	ret = w->error;
	if (ret == 0) {
		n = LZ4F_compressEnd(w->cctx, w->out, w->out_cap, NULL);
		ret = LZ4F_isError(n) ? -EIO : emit(w, n);
	}
	if (ret == 0 && w->is_reg && fsync(w->fd) < 0)
		ret = -errno;
	if (close(w->fd) < 0 && ret == 0 && errno != EINTR)
		ret = -errno;
	w->error = ret;
	lz4s_writer_stats(w, st);
	writer_free(w);
	return ret;
}

/* ---- reader ------------------------------------------------------------------ */

#define IN_CAP	(128u * 1024)
#define OUT_CAP (128u * 1024)

struct lz4s_reader {
	int fd;
	char *path;
	const char *what;
	LZ4F_dctx *dctx;
	unsigned char *in;
	size_t in_len, in_pos;
	uint64_t in_off;    /* file offset of in[0] */
	uint64_t unit_off;  /* file offset where the decoder's current unit began */
	size_t hint;	    /* what the decoder asked for last */
	size_t unit_fed;    /* bytes of the current unit fed so far */
	unsigned char *out; /* decompressed, not yet consumed: [out_pos, out_len) */
	size_t out_len, out_pos;
	size_t out_safe;   /* out[out_pos, out_safe) came from checked units */
	uint64_t consumed; /* decompressed bytes consumed before out[out_pos] */
	int frame_done;
	uint64_t trailing_off; /* > 0: bytes follow the frame from there */
	int err;	       /* sticky */
	uint64_t nitems;
	char msg[512];
};

int lz4s_fail(struct lz4s_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->msg, sizeof(r->msg), "%s \"%s\": ", r->what, r->path);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->msg))
		vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->err = -EBADMSG;
	return r->err;
}

/* lz4_reason() -- liblz4's error name in words. */
static const char *lz4_reason(size_t code)
{
	const char *name = LZ4F_getErrorName(code);

	if (strstr(name, "frameType_unknown"))
		return "not an lz4 frame (bad magic number)";
	if (strstr(name, "headerChecksum"))
		return "lz4 frame header checksum mismatch";
	if (strstr(name, "blockChecksum"))
		return "lz4 block checksum mismatch";
	if (strstr(name, "contentChecksum"))
		return "lz4 content checksum mismatch (data damaged)";
	if (strstr(name, "maxBlockSize") || strstr(name, "frameHeader") ||
	    strstr(name, "reservedFlag") || strstr(name, "parameter"))
		return "invalid lz4 frame header";
	if (strstr(name, "decompressionFailed"))
		return "lz4 block does not decompress (data damaged)";
	return name;
}

/* fill() -- decode until at least @need bytes from checked units are
 * waiting in r->out.  Output of a unit is held back until the decoder has
 * consumed the whole unit (with its checksum): liblz4 copies uncompressed
 * blocks out before it can check them.  Returns 1 if they are, 0 at the
 * clean end of the frame with fewer, or a negative error. */
static int fill(struct lz4s_reader *r, size_t need)
{
	if (r->err)
		return r->err;
	while (r->out_safe - r->out_pos < need) {
		size_t dst, src, ret;
		ssize_t k;

		if (r->frame_done) {
			if (r->trailing_off)
				return lz4s_fail(
				    r, "unexpected data after the end of the %s at byte %" PRIu64,
				    r->what, r->trailing_off);
			return 0;
		}
		if (r->out_pos) { /* keep the unconsumed tail at the front */
			memmove(r->out, r->out + r->out_pos, r->out_len - r->out_pos);
			r->out_len -= r->out_pos;
			r->out_safe -= r->out_pos;
			r->consumed += r->out_pos;
			r->out_pos = 0;
		}
		if (r->in_pos == r->in_len) {
			r->in_off += r->in_len;
			r->in_len = r->in_pos = 0;
			do
				k = read(r->fd, r->in, IN_CAP);
			while (k < 0 && errno == EINTR);
			if (k < 0) {
				r->err = -errno;
				snprintf(r->msg, sizeof(r->msg),
					 "%s \"%s\": read error at byte %" PRIu64 ": %s", r->what,
					 r->path, r->in_off, strerror(errno));
				return r->err;
			}
			if (k == 0) {
				if (r->in_off == 0)
					return lz4s_fail(r, "the file is empty (no lz4 frame)");
				return lz4s_fail(
				    r,
				    "truncated at byte %" PRIu64 ": the lz4 frame has no end "
				    "(the writer did not finish; %" PRIu64 " records decoded)",
				    r->in_off, r->nitems);
			}
			r->in_len = (size_t)k;
		}
		/* feed no more than the decoder asked for, so that an error
		 * belongs to the unit that started at unit_off */
		src = r->in_len - r->in_pos;
		if (src > r->hint - r->unit_fed)
			src = r->hint - r->unit_fed;
		dst = OUT_CAP - r->out_len;
		ret = LZ4F_decompress(r->dctx, r->out + r->out_len, &dst, r->in + r->in_pos, &src,
				      NULL);
		if (LZ4F_isError(ret))
			return lz4s_fail(
			    r, "corrupt at byte %" PRIu64 ": %s (%" PRIu64 " records decoded)",
			    r->unit_off, lz4_reason(ret), r->nitems);
		r->in_pos += src;
		r->out_len += dst;
		r->unit_fed += src;
		if (r->unit_fed >= r->hint) { /* the decoder's next unit */
			r->unit_off = r->in_off + r->in_pos;
			r->unit_fed = 0;
			r->hint = ret;
			r->out_safe = r->out_len;
		}
		if (ret == 0) {
			r->frame_done = 1;
			r->out_safe = r->out_len;
			/* the frame is complete: anything after it is not ours,
			 * which is reported once the data is consumed */
			if (r->in_pos < r->in_len) {
				r->trailing_off = r->in_off + r->in_pos;
			} else {
				do
					k = read(r->fd, r->in, 1);
				while (k < 0 && errno == EINTR);
				if (k > 0)
					r->trailing_off = r->in_off + r->in_len;
			}
		}
	}
	return 1;
}

struct lz4s_reader *lz4s_reader_open(const char *path, const char *what, int *err)
{
	struct lz4s_reader *r;
	int dummy;

	if (!err)
		err = &dummy;
	*err = 0;
	if (!path) {
		*err = -EINVAL;
		errno = -*err;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*err = -ENOMEM;
		errno = -*err;
		return NULL;
	}
	r->what = what ? what : "stream";
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		*err = -errno;
		free(r);
		errno = -*err;
		return NULL;
	}
	r->hint = LZ4F_HEADER_SIZE_MIN; /* the first unit: the frame header */
	r->path = strdup(path);
	r->in = malloc(IN_CAP);
	r->out = malloc(OUT_CAP);
	if (!r->path || !r->in || !r->out ||
	    LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION))) {
		lz4s_reader_close(r);
		*err = -ENOMEM;
		errno = -*err;
		return NULL;
	}
	return r;
}

int lz4s_peek(struct lz4s_reader *r, size_t need, const unsigned char **p)
{
	int ret;

	if (!r || need > LZ4S_PEEK_MAX)
		return -EINVAL;
	ret = fill(r, need);
	if (ret == 1)
		*p = r->out + r->out_pos;
	return ret;
}

void lz4s_consume(struct lz4s_reader *r, size_t n, int item)
{
	r->out_pos += n;
	if (item)
		r->nitems++;
}

int lz4s_read(struct lz4s_reader *r, void *buf, size_t n)
{
	unsigned char *dst = buf;
	size_t done = 0;

	while (done < n) {
		size_t k = n - done < LZ4S_PEEK_MAX ? n - done : LZ4S_PEEK_MAX;
		const unsigned char *p;
		int ret = fill(r, k);

		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (done == 0 && lz4s_pending(r) == 0)
				return 0;
			return lz4s_fail(
			    r, "ends inside a record (%zu of %zu bytes) after %" PRIu64 " records",
			    done + lz4s_pending(r), n, r->nitems);
		}
		p = r->out + r->out_pos;
		memcpy(dst + done, p, k);
		r->out_pos += k;
		done += k;
	}
	return 1;
}

size_t lz4s_pending(const struct lz4s_reader *r)
{
	return r->out_safe - r->out_pos;
}

uint64_t lz4s_offset(const struct lz4s_reader *r)
{
	return r->consumed + r->out_pos;
}

uint64_t lz4s_items(const struct lz4s_reader *r)
{
	return r->nitems;
}

const char *lz4s_reader_error(const struct lz4s_reader *r)
{
	return r && r->err ? r->msg : "";
}

void lz4s_reader_close(struct lz4s_reader *r)
{
	if (!r)
		return;
	if (r->dctx)
		LZ4F_freeDecompressionContext(r->dctx);
	if (r->fd >= 0)
		close(r->fd);
	free(r->in);
	free(r->out);
	free(r->path);
	free(r);
}
