/*
 * lz4s.h -- a byte stream in one lz4 frame (liblz4's frame API; `lz4 -d`
 * decompresses it), shared by all modules: iosched's traces and pgdisk's
 * write log are such streams.
 *
 * The writer copies items (any number of bytes) into 64 KiB chunks of a
 * fixed pool under a mutex; a background thread compresses full chunks
 * (and a partly filled one after a second without traffic) and writes them
 * out.  When the pool is full an item is dropped and counted, or, with
 * wait_when_full, the caller waits.  An item is all in the stream or not
 * at all, and the items of one thread appear in the order written.  Memory
 * is fixed at creation: the pool, one compression bound, liblz4's context.
 *
 * The reader decodes, feeding liblz4 no more than it asks for, so that an
 * error names the byte where the failing lz4 block starts; data of a block
 * is handed out only once the block and its checksum were consumed.
 *
 * Conventions: 0 or -errno; constructors return the object or NULL with
 * *err (if not NULL) = -errno and errno set; close and free accept NULL.
 */
#ifndef PGIOFS_LZ4S_H
#define PGIOFS_LZ4S_H

#include <stddef.h>
#include <stdint.h>

#define LZ4S_CHUNK_BYTES    (64u * 1024)
#define LZ4S_DEFAULT_BUFFER (1u << 20) /* bytes held in memory */

struct lz4s_writer_opts {
	size_t buffer_bytes; /* held in memory at most, rounded down to chunks, at
			      * least 2 (0: LZ4S_DEFAULT_BUFFER) */
	int wait_when_full;  /* 1: lz4s_write() waits for room instead of dropping */
	int fd;		     /* with a NULL path: write to this open descriptor,
			      * which the writer takes over */
};

struct lz4s_writer_stats {
	uint64_t items;	    /* accepted by lz4s_write() */
	uint64_t dropped;   /* refused: no room, or the output had failed */
	uint64_t bytes_in;  /* uncompressed bytes handed to lz4 so far */
	uint64_t bytes_out; /* compressed bytes written so far */
	int error;	    /* first output error (-errno), 0 if none */
};

struct lz4s_writer;
struct lz4s_reader;

/* lz4s_writer_create() -- start a stream in a new file @path (O_CREAT |
 * O_EXCL, mode 0600: an existing file is never overwritten, -EEXIST), or
 * on opts->fd when @path is NULL, beginning with the @head_len bytes of
 * @head (the caller's file header, not counted as an item).  The lz4 frame
 * header is written at once, so an unwritable file fails here. */
struct lz4s_writer *lz4s_writer_create(const char *path, const struct lz4s_writer_opts *opts,
				       const void *head, size_t head_len, int *err);

/* lz4s_write() -- append one item of @n bytes.  Thread-safe; copies under a
 * mutex and never does I/O.  0, or -ENOBUFS when the item was dropped
 * (counted): no room without waiting, or the output failed; an item larger
 * than the whole pool needs wait_when_full (else -ENOBUFS). */
int lz4s_write(struct lz4s_writer *w, const void *p, size_t n);

/* lz4s_writer_stats() -- the counters so far. */
void lz4s_writer_stats(struct lz4s_writer *w, struct lz4s_writer_stats *st);

/* lz4s_writer_close() -- compress what is buffered, end the frame, fsync
 * (regular files), close; fill @st (may be NULL); free.  No lz4s_write()
 * may run concurrently or after.  0 or the first output error. */
int lz4s_writer_close(struct lz4s_writer *w, struct lz4s_writer_stats *st);

/* lz4s_reader_open() -- open stream @path; @what names it in messages
 * ("trace", "write log").  Only the open itself fails here; a file that is
 * no lz4 frame is reported by the first read. */
struct lz4s_reader *lz4s_reader_open(const char *path, const char *what, int *err);

/* lz4s_peek() -- make the next @need bytes (at most LZ4S_PEEK_MAX) of the
 * decompressed stream available at *@p without consuming them.  1 if they
 * are; 0 at the clean end of the frame with fewer (lz4s_pending() says how
 * many); a negative error (sticky; lz4s_reader_error() explains it). */
#define LZ4S_PEEK_MAX (32u * 1024)
int lz4s_peek(struct lz4s_reader *r, size_t need, const unsigned char **p);

/* lz4s_consume() -- skip @n bytes that lz4s_peek() made available; @item:
 * they were one of the caller's items (counted in messages). */
void lz4s_consume(struct lz4s_reader *r, size_t n, int item);

/* lz4s_read() -- copy the next @n bytes (any number) into @buf and consume
 * them as part of the current item (not counted).  1; 0 at the clean end
 * of the frame before the first byte; -EBADMSG when the stream ends inside
 * them; another negative error. */
int lz4s_read(struct lz4s_reader *r, void *buf, size_t n);

/* lz4s_pending() -- decompressed bytes waiting (after a 0 from lz4s_peek():
 * the partial item at the end). */
size_t lz4s_pending(const struct lz4s_reader *r);

/* lz4s_offset() -- bytes of the decompressed stream consumed so far. */
uint64_t lz4s_offset(const struct lz4s_reader *r);

/* lz4s_items() -- items consumed so far. */
uint64_t lz4s_items(const struct lz4s_reader *r);

/* lz4s_fail() -- record a format error found by the caller: the message is
 * "WHAT \"PATH\": " and the text; returns -EBADMSG (sticky). */
int lz4s_fail(struct lz4s_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* lz4s_reader_error() -- after an error, a message naming the file, the
 * byte offset in it and the reason; "" otherwise. */
const char *lz4s_reader_error(const struct lz4s_reader *r);

/* lz4s_reader_close() -- close and free.  Accepts NULL. */
void lz4s_reader_close(struct lz4s_reader *r);

/* Little-endian fields of the records written into such streams (traces,
 * pgdisk's write log): lz4s_putN() stores @v at @p, lz4s_getN() reads it. */
static inline void lz4s_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void lz4s_put32(unsigned char *p, uint32_t v)
{
	lz4s_put16(p, (uint16_t)v);
	lz4s_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void lz4s_put64(unsigned char *p, uint64_t v)
{
	lz4s_put32(p, (uint32_t)v);
	lz4s_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t lz4s_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t lz4s_get32(const unsigned char *p)
{
	return (uint32_t)lz4s_get16(p) | (uint32_t)lz4s_get16(p + 2) << 16;
}

static inline uint64_t lz4s_get64(const unsigned char *p)
{
	return (uint64_t)lz4s_get32(p) | (uint64_t)lz4s_get32(p + 4) << 32;
}

#endif
