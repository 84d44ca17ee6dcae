/*
 * trace.c -- I/O traces: a writer that streams fixed-size records into an
 * lz4 frame (liblz4's frame API) on a background thread with bounded memory,
 * and a reader that decodes them and explains damage.  The layout is in
 * iosched.h ("traces").
 *
 * Writer.  Records go into 64 KiB chunks taken from a fixed pool: the
 * chunk being filled, a FIFO of full chunks for the background thread, and
 * a free list.  ios_trace_write() copies one record under the mutex; when no
 * chunk is free (the thread is a whole pool behind) the record is dropped
 * and counted, or, with wait_when_full, the caller waits.  The background
 * thread compresses one chunk per LZ4F_compressUpdate() with autoFlush, so
 * every chunk is on its way to the file as soon as it is compressed, and a
 * partly filled chunk is taken after a second without traffic.  Memory:
 * the pool, one compression bound and liblz4's context, fixed at creation.
 *
 * Invariants:
 *   - records from one thread appear in the file in the order written;
 *   - records == (records in the file) and dropped counts every refusal;
 *   - only the background thread touches the descriptor and the lz4 context
 *     after ios_trace_writer_create() returns;
 *   - after an output error nothing more is written, later records are
 *     dropped, and close returns the error.
 *
 * Reader.  The decoder is fed at most what it asks for, so an error names
 * the byte where the failing lz4 block starts; records decoded before the
 * damage are returned first.  Blocks carry checksums (and the frame a
 * content checksum), so corruption is found at the block it hits.
 */
#include "iosched.h"

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

#define CHUNK_BYTES   (64u * 1024)
#define MIN_CHUNKS    2
#define IDLE_FLUSH_NS 1000000000ull /* a partly filled chunk waits at most 1 s */

/* ---- little-endian encoding ------------------------------------------------ */

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void encode_rec(unsigned char *p, const struct ios_trace_rec *r)
{
	put64(p + 0, r->time_ns);
	put64(p + 8, r->ino);
	put64(p + 16, r->off);
	put32(p + 24, r->len);
	put32(p + 28, r->pid);
	put32(p + 32, r->queue_us);
	put32(p + 36, r->service_us);
	put32(p + 40, (uint32_t)r->result);
	p[44] = r->cls;
	p[45] = r->dir;
	put16(p + 46, r->flags);
	put64(p + 48, r->dev);
}

/* decode_rec() -- a record of format @version (1: no dev). */
static void decode_rec(const unsigned char *p, unsigned version, struct ios_trace_rec *r)
{
	r->time_ns = get64(p + 0);
	r->ino = get64(p + 8);
	r->off = get64(p + 16);
	r->len = get32(p + 24);
	r->pid = get32(p + 28);
	r->queue_us = get32(p + 32);
	r->service_us = get32(p + 36);
	r->result = (int32_t)get32(p + 40);
	r->cls = p[44];
	r->dir = p[45];
	r->flags = get16(p + 46);
	r->dev = version >= 2 ? get64(p + 48) : 0;
}

/* ---- writer ------------------------------------------------------------------ */

struct chunk {
	struct chunk *next;
	size_t used;
	unsigned char data[CHUNK_BYTES];
};

struct ios_trace_writer {
	/* shared, under lock */
	pthread_mutex_t lock;
	pthread_cond_t work; /* the thread: a full chunk, or stop */
	pthread_cond_t room; /* waiting writers: a chunk was freed, or error */
	struct chunk *cur;   /* being filled; NULL when none was free */
	struct chunk *full_head, *full_tail;
	struct chunk *free_list;
	uint64_t cur_since_ns; /* when cur got its first record */
	uint64_t records, dropped;
	int stop;
	int error; /* first output error, -errno */
	int wait_when_full;

	/* counters the thread updates, read by ios_trace_writer_stats() */
	_Atomic uint64_t bytes_in, bytes_out;

	/* the background thread's own */
	int fd;
	int is_reg;
	LZ4F_cctx *cctx;
	LZ4F_preferences_t prefs;
	unsigned char *out;
	size_t out_cap;
	pthread_t thread;
	int thread_started;
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
static int emit(struct ios_trace_writer *w, size_t n)
{
	int ret = write_all(w->fd, w->out, n);

	if (ret == 0)
		atomic_fetch_add_explicit(&w->bytes_out, n, memory_order_relaxed);
	return ret;
}

/* compress_chunk() -- compress and write one chunk (thread, no lock held). */
static int compress_chunk(struct ios_trace_writer *w, const struct chunk *c)
{
	size_t n = LZ4F_compressUpdate(w->cctx, w->out, w->out_cap, c->data, c->used, NULL);

	if (LZ4F_isError(n))
		return -EIO; /* cannot happen with out_cap = compressBound */
	atomic_fetch_add_explicit(&w->bytes_in, c->used, memory_order_relaxed);
	return n ? emit(w, n) : 0;
}

/* set_error() -- remember the first output error and wake waiting
 * writers so they drop instead of waiting forever.  Caller holds lock. */
static void set_error(struct ios_trace_writer *w, int err)
{
	if (err && !w->error) {
		w->error = err;
		pthread_cond_broadcast(&w->room);
	}
}

/* push_full() -- queue w->cur for the thread.  Caller holds lock. */
static void push_full(struct ios_trace_writer *w)
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

static void *writer_thread(void *arg)
{
	struct ios_trace_writer *w = arg;
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
			    ios_now_ns() - w->cur_since_ns >= IDLE_FLUSH_NS)
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
		pthread_cond_broadcast(&w->room);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* file_header() -- the 32-byte header at the start of the stream. */
static void file_header(unsigned char *p)
{
	struct timespec rt, mt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	memcpy(p, IOS_TRACE_MAGIC, 8);
	put16(p + 8, IOS_TRACE_VERSION);
	put16(p + 10, IOS_TRACE_HEADER_SIZE);
	put16(p + 12, IOS_TRACE_REC_SIZE);
	put16(p + 14, 0);
	put64(p + 16, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
	put64(p + 24, (uint64_t)mt.tv_sec * 1000000000u + (uint64_t)mt.tv_nsec);
}

/* writer_free() -- release everything (the thread is not running). */
static void writer_free(struct ios_trace_writer *w)
{
	if (w->cctx)
		LZ4F_freeCompressionContext(w->cctx);
	free(w->out);
	free(w->pool);
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

struct ios_trace_writer *ios_trace_writer_create_opts(const char *path,
						      const struct ios_trace_opts *opts, int *err)
{
	struct ios_trace_writer *w;
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
	nchunks = (opts && opts->buffer_bytes ? opts->buffer_bytes : IOS_TRACE_DEFAULT_BUFFER) /
		  CHUNK_BYTES;
	if (nchunks < MIN_CHUNKS)
		nchunks = MIN_CHUNKS;

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
	bound = LZ4F_compressBound(CHUNK_BYTES, &w->prefs);
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

	/* the frame header now, so that an unwritable file fails here */
	n = LZ4F_compressBegin(w->cctx, w->out, w->out_cap, &w->prefs);
	if (LZ4F_isError(n)) {
		ret = -EIO;
		goto fail;
	}
	ret = emit(w, n);
	if (ret < 0)
		goto fail;

	/* the file header opens the first chunk */
	w->cur = w->free_list;
	w->free_list = w->cur->next;
	file_header(w->cur->data);
	w->cur->used = IOS_TRACE_HEADER_SIZE;
	w->cur_since_ns = ios_now_ns();

	ret = -pthread_create(&w->thread, NULL, writer_thread, w);
	if (ret < 0)
		goto fail;
	w->thread_started = 1;
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

struct ios_trace_writer *ios_trace_writer_create(const char *path, int *err)
{
	if (!path) {
		if (err)
			*err = -EINVAL;
		errno = EINVAL;
		return NULL;
	}
	return ios_trace_writer_create_opts(path, NULL, err);
}

int ios_trace_write(struct ios_trace_writer *w, const struct ios_trace_rec *rec)
{
	if (!w || !rec)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	/* a chunk to fill: the current one, else a free one; while we wait,
	 * another writer may have taken one and made it current */
	while (!w->cur && !w->error) {
		if (w->free_list) {
			w->cur = w->free_list;
			w->free_list = w->cur->next;
		} else if (w->wait_when_full) {
			pthread_cond_wait(&w->room, &w->lock);
		} else {
			break;
		}
	}
	if (!w->cur || w->error) {
		w->dropped++;
		pthread_mutex_unlock(&w->lock);
		return -ENOBUFS;
	}
	if (w->cur->used == 0)
		w->cur_since_ns = ios_now_ns();
	encode_rec(w->cur->data + w->cur->used, rec);
	w->cur->used += IOS_TRACE_REC_SIZE;
	w->records++;
	if (w->cur->used + IOS_TRACE_REC_SIZE > CHUNK_BYTES)
		push_full(w);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void ios_trace_writer_stats(struct ios_trace_writer *w, struct ios_trace_stats *st)
{
	if (!w || !st)
		return;
	pthread_mutex_lock(&w->lock);
	st->records = w->records;
	st->dropped = w->dropped;
	st->error = w->error;
	pthread_mutex_unlock(&w->lock);
	st->bytes_in = atomic_load_explicit(&w->bytes_in, memory_order_relaxed);
	st->bytes_out = atomic_load_explicit(&w->bytes_out, memory_order_relaxed);
}

int ios_trace_writer_close(struct ios_trace_writer *w, struct ios_trace_stats *st)
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
	ios_trace_writer_stats(w, st);
	writer_free(w);
	return ret;
}

/* ---- reader ------------------------------------------------------------------ */

#define IN_CAP	(128u * 1024)
#define OUT_CAP (128u * 1024)

struct ios_trace_reader {
	int fd;
	char *path;
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
	int header_done;
	int err; /* sticky */
	uint64_t nrec;
	struct ios_trace_info info;
	char msg[512];
};

static int __attribute__((format(printf, 2, 3)))
fail_at(struct ios_trace_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->msg, sizeof(r->msg), "trace \"%s\": ", r->path);
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
static int fill(struct ios_trace_reader *r, size_t need)
{
	while (r->out_safe - r->out_pos < need) {
		size_t dst, src, ret;
		ssize_t k;

		if (r->frame_done) {
			if (r->trailing_off)
				return fail_at(
				    r,
				    "unexpected data after the end of the trace at byte %" PRIu64,
				    r->trailing_off);
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
					 "trace \"%s\": read error at byte %" PRIu64 ": %s",
					 r->path, r->in_off, strerror(errno));
				return r->err;
			}
			if (k == 0) {
				if (r->in_off == 0)
					return fail_at(r, "the file is empty (no lz4 frame)");
				return fail_at(
				    r,
				    "truncated at byte %" PRIu64 ": the lz4 frame has no end "
				    "(the writer did not finish; %" PRIu64 " records decoded)",
				    r->in_off, r->nrec);
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
			return fail_at(
			    r, "corrupt at byte %" PRIu64 ": %s (%" PRIu64 " records decoded)",
			    r->unit_off, lz4_reason(ret), r->nrec);
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
			 * which is reported once the records are consumed */
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

/* read_header() -- parse and check the file header. */
static int read_header(struct ios_trace_reader *r)
{
	const unsigned char *p;
	int ret;

	ret = fill(r, IOS_TRACE_HEADER_SIZE);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return fail_at(r, "the trace ends inside its %d-byte header",
			       IOS_TRACE_HEADER_SIZE);
	p = r->out + r->out_pos;
	if (memcmp(p, IOS_TRACE_MAGIC, 8) != 0)
		return fail_at(r, "not a pgiofs trace (no \"%s\" at the start of the lz4 data)",
			       IOS_TRACE_MAGIC);
	r->info.version = get16(p + 8);
	r->info.header_size = get16(p + 10);
	r->info.rec_size = get16(p + 12);
	r->info.start_realtime_ns = get64(p + 16);
	r->info.start_monotonic_ns = get64(p + 24);
	if (r->info.version == 0 || r->info.version > IOS_TRACE_VERSION)
		return fail_at(r, "trace format version %u is not supported (this reader: 1..%d)",
			       r->info.version, IOS_TRACE_VERSION);
	if (r->info.header_size < IOS_TRACE_HEADER_SIZE ||
	    r->info.rec_size < (r->info.version == 1 ? IOS_TRACE_REC_SIZE_V1 : IOS_TRACE_REC_SIZE))
		return fail_at(r, "invalid header: header size %u, record size %u",
			       r->info.header_size, r->info.rec_size);
	/* skip the header, with any fields a later version appended */
	ret = fill(r, r->info.header_size);
	if (ret <= 0)
		return ret < 0 ? ret : fail_at(r, "the trace ends inside its header");
	r->out_pos += r->info.header_size;
	r->header_done = 1;
	return 0;
}

struct ios_trace_reader *ios_trace_reader_open(const char *path, int *err)
{
	struct ios_trace_reader *r;
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
		ios_trace_reader_close(r);
		*err = -ENOMEM;
		errno = -*err;
		return NULL;
	}
	return r;
}

int ios_trace_reader_info(struct ios_trace_reader *r, struct ios_trace_info *info)
{
	if (!r)
		return -EINVAL;
	if (r->err)
		return r->err;
	if (!r->header_done && read_header(r) < 0)
		return r->err;
	if (info)
		*info = r->info;
	return 0;
}

int ios_trace_read(struct ios_trace_reader *r, struct ios_trace_rec *out)
{
	const unsigned char *p;
	uint64_t at;
	int ret;

	if (!r || !out)
		return -EINVAL;
	if (r->err)
		return r->err;
	if (!r->header_done && read_header(r) < 0)
		return r->err;
	ret = fill(r, r->info.rec_size);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (r->out_safe > r->out_pos)
			return fail_at(
			    r,
			    "the trace ends with a partial record (%zu of %u bytes) after "
			    "%" PRIu64 " records",
			    r->out_safe - r->out_pos, r->info.rec_size, r->nrec);
		return 0;
	}
	p = r->out + r->out_pos;
	at = r->consumed + r->out_pos;
	decode_rec(p, r->info.version, out);
	if (out->cls >= IOS_NCLASS || out->dir >= IOS_NDIR)
		return fail_at(r,
			       "record %" PRIu64 " (byte %" PRIu64
			       " of the decompressed stream) is "
			       "invalid: class %u, direction %u",
			       r->nrec, at, out->cls, out->dir);
	r->out_pos += r->info.rec_size;
	r->nrec++;
	return 1;
}

const char *ios_trace_reader_error(const struct ios_trace_reader *r)
{
	return r && r->err ? r->msg : "";
}

void ios_trace_reader_close(struct ios_trace_reader *r)
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
