/*
 * trace.c -- I/O traces: fixed-size records in a byte stream in one lz4
 * frame (common/lz4s.h: the writer compresses on a background thread with
 * bounded memory, the reader decodes and explains damage).  The layout is
 * in iosched.h ("traces").
 *
 * Invariants:
 *   - records from one thread appear in the file in the order written, each
 *     whole or (dropped, counted) not at all;
 *   - ios_trace_write() copies 48 bytes under a mutex and never does I/O;
 *   - a reader returns every record before the damage, then the error,
 *     which names the byte of the file where the failing lz4 block starts.
 */
#include "iosched.h"
#include "lz4s.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- records (little-endian fields: common/lz4s.h) ------------------------- */

static void encode_rec(unsigned char *p, const struct ios_trace_rec *r)
{
	lz4s_put64(p + 0, r->time_ns);
	lz4s_put64(p + 8, r->ino);
	lz4s_put64(p + 16, r->off);
	lz4s_put32(p + 24, r->len);
	lz4s_put32(p + 28, r->pid);
	lz4s_put32(p + 32, r->queue_us);
	lz4s_put32(p + 36, r->service_us);
	lz4s_put32(p + 40, (uint32_t)r->result);
	p[44] = r->cls;
	p[45] = r->dir;
	lz4s_put16(p + 46, r->flags);
	lz4s_put64(p + 48, r->dev);
}

/* decode_rec() -- a record of format @version (1: no dev). */
static void decode_rec(const unsigned char *p, unsigned version, struct ios_trace_rec *r)
{
	r->time_ns = lz4s_get64(p + 0);
	r->ino = lz4s_get64(p + 8);
	r->off = lz4s_get64(p + 16);
	r->len = lz4s_get32(p + 24);
	r->pid = lz4s_get32(p + 28);
	r->queue_us = lz4s_get32(p + 32);
	r->service_us = lz4s_get32(p + 36);
	r->result = (int32_t)lz4s_get32(p + 40);
	r->cls = p[44];
	r->dir = p[45];
	r->flags = lz4s_get16(p + 46);
	r->dev = version >= 2 ? lz4s_get64(p + 48) : 0;
}

/* ---- writer ------------------------------------------------------------------ */

struct ios_trace_writer {
	struct lz4s_writer *s;
};

/* file_header() -- the 32-byte header at the start of the stream. */
static void file_header(unsigned char *p)
{
	struct timespec rt, mt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	memcpy(p, IOS_TRACE_MAGIC, 8);
	lz4s_put16(p + 8, IOS_TRACE_VERSION);
	lz4s_put16(p + 10, IOS_TRACE_HEADER_SIZE);
	lz4s_put16(p + 12, IOS_TRACE_REC_SIZE);
	lz4s_put16(p + 14, 0);
	lz4s_put64(p + 16, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
	lz4s_put64(p + 24, (uint64_t)mt.tv_sec * 1000000000u + (uint64_t)mt.tv_nsec);
}

struct ios_trace_writer *ios_trace_writer_create_opts(const char *path,
						      const struct ios_trace_opts *opts, int *err)
{
	struct lz4s_writer_opts so = {.fd = -1};
	unsigned char head[IOS_TRACE_HEADER_SIZE];
	struct ios_trace_writer *w;
	int dummy;

	if (!err)
		err = &dummy;
	if (opts) {
		so.buffer_bytes =
		    opts->buffer_bytes ? opts->buffer_bytes : IOS_TRACE_DEFAULT_BUFFER;
		so.wait_when_full = opts->wait_when_full;
		so.fd = opts->fd;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		*err = -ENOMEM;
		if (!path && opts && opts->fd >= 0)
			close(opts->fd);
		errno = ENOMEM;
		return NULL;
	}
	file_header(head);
	w->s = lz4s_writer_create(path, &so, head, sizeof(head), err);
	if (!w->s) {
		free(w);
		return NULL;
	}
	return w;
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
	unsigned char p[IOS_TRACE_REC_SIZE];

	if (!w || !rec)
		return -EINVAL;
	encode_rec(p, rec);
	return lz4s_write(w->s, p, sizeof(p));
}

static void stats_of(const struct lz4s_writer_stats *s, struct ios_trace_stats *st)
{
	st->records = s->items;
	st->dropped = s->dropped;
	st->bytes_in = s->bytes_in;
	st->bytes_out = s->bytes_out;
	st->error = s->error;
}

void ios_trace_writer_stats(struct ios_trace_writer *w, struct ios_trace_stats *st)
{
	struct lz4s_writer_stats s;

	if (!w || !st)
		return;
	lz4s_writer_stats(w->s, &s);
	stats_of(&s, st);
}

int ios_trace_writer_close(struct ios_trace_writer *w, struct ios_trace_stats *st)
{
	struct lz4s_writer_stats s;
	int ret;

	if (!w)
		return 0;
	ret = lz4s_writer_close(w->s, &s);
	if (st)
		stats_of(&s, st);
	free(w);
	return ret;
}

/* ---- reader ------------------------------------------------------------------ */

struct ios_trace_reader {
	struct lz4s_reader *s;
	int header_done;
	struct ios_trace_info info;
};

/* read_header() -- parse and check the file header. */
static int read_header(struct ios_trace_reader *r)
{
	const unsigned char *p;
	int ret;

	ret = lz4s_peek(r->s, IOS_TRACE_HEADER_SIZE, &p);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return lz4s_fail(r->s, "the trace ends inside its %d-byte header",
				 IOS_TRACE_HEADER_SIZE);
	if (memcmp(p, IOS_TRACE_MAGIC, 8) != 0)
		return lz4s_fail(r->s,
				 "not a pgiofs trace (no \"%s\" at the start of the lz4 data)",
				 IOS_TRACE_MAGIC);
	r->info.version = lz4s_get16(p + 8);
	r->info.header_size = lz4s_get16(p + 10);
	r->info.rec_size = lz4s_get16(p + 12);
	r->info.start_realtime_ns = lz4s_get64(p + 16);
	r->info.start_monotonic_ns = lz4s_get64(p + 24);
	if (r->info.version == 0 || r->info.version > IOS_TRACE_VERSION)
		return lz4s_fail(r->s,
				 "trace format version %u is not supported (this reader: 1..%d)",
				 r->info.version, IOS_TRACE_VERSION);
	if (r->info.header_size < IOS_TRACE_HEADER_SIZE ||
	    r->info.rec_size <
		(r->info.version == 1 ? IOS_TRACE_REC_SIZE_V1 : IOS_TRACE_REC_SIZE) ||
	    r->info.header_size > LZ4S_PEEK_MAX || r->info.rec_size > LZ4S_PEEK_MAX)
		return lz4s_fail(r->s, "invalid header: header size %u, record size %u",
				 r->info.header_size, r->info.rec_size);
	/* skip the header, with any fields a later version appended */
	ret = lz4s_peek(r->s, r->info.header_size, &p);
	if (ret <= 0)
		return ret < 0 ? ret : lz4s_fail(r->s, "the trace ends inside its header");
	lz4s_consume(r->s, r->info.header_size, 0);
	r->header_done = 1;
	return 0;
}

struct ios_trace_reader *ios_trace_reader_open(const char *path, int *err)
{
	struct ios_trace_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		if (err)
			*err = -ENOMEM;
		errno = ENOMEM;
		return NULL;
	}
	r->s = lz4s_reader_open(path, "trace", err);
	if (!r->s) {
		free(r);
		return NULL;
	}
	return r;
}

int ios_trace_reader_info(struct ios_trace_reader *r, struct ios_trace_info *info)
{
	int ret;

	if (!r)
		return -EINVAL;
	if (!r->header_done && (ret = read_header(r)) < 0)
		return ret;
	if (info)
		*info = r->info;
	return 0;
}

int ios_trace_read(struct ios_trace_reader *r, struct ios_trace_rec *out)
{
	const unsigned char *p;
	uint64_t at, nrec;
	int ret;

	if (!r || !out)
		return -EINVAL;
	if (!r->header_done && (ret = read_header(r)) < 0)
		return ret;
	ret = lz4s_peek(r->s, r->info.rec_size, &p);
	if (ret < 0)
		return ret;
	nrec = lz4s_items(r->s);
	if (ret == 0) {
		if (lz4s_pending(r->s))
			return lz4s_fail(
			    r->s,
			    "the trace ends with a partial record (%zu of %u bytes) after "
			    "%" PRIu64 " records",
			    lz4s_pending(r->s), r->info.rec_size, nrec);
		return 0;
	}
	at = lz4s_offset(r->s);
	decode_rec(p, r->info.version, out);
	if (out->cls >= IOS_NCLASS || out->dir >= IOS_NDIR)
		return lz4s_fail(r->s,
				 "record %" PRIu64 " (byte %" PRIu64
				 " of the decompressed stream) is "
				 "invalid: class %u, direction %u",
				 nrec, at, out->cls, out->dir);
	lz4s_consume(r->s, r->info.rec_size, 1);
	return 1;
}

const char *ios_trace_reader_error(const struct ios_trace_reader *r)
{
	return r ? lz4s_reader_error(r->s) : "";
}

void ios_trace_reader_close(struct ios_trace_reader *r)
{
	if (!r)
		return;
	lz4s_reader_close(r->s);
	free(r);
}
