/*
 * wlog.c -- pgdisk's write log: every write, flush, discard and
 * write-zeroes the disk performed, in the order it received them, the data
 * of every write with it, as one byte stream in an lz4 frame (common/lz4s.h,
 * the code iosched's traces use).  The layout is in pgdisk_i.h ("the write
 * log"); `pgdisk cut` reads it back to build the disk as a power cut would
 * have left it.
 *
 * What must stay true: records appear in the order pgd_dev_submit()
 * performed the requests, each with the next sequence number (1, 2, ...),
 * and only requests that succeeded (a failed one changed nothing the kernel
 * may rely on), but that a request an injected fault failed or lost is
 * logged as a fault record, which no reader takes for a request performed;
 * nothing is ever dropped: the writer waits for room, so a
 * log that ends cleanly holds every request up to its end record; the log
 * never grows past its cap: the request that would pass it is not logged,
 * an end record says the cap was reached, and logging stops.
 */
#include "pgdisk_i.h"
#include "lz4s.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define LOG_BUFFER (8u << 20) /* bytes held in memory (locked, like the rest) */

struct pgd_wlog {
	struct lz4s_writer *s;
	uint64_t seq;	    /* records written */
	uint64_t bytes;	    /* uncompressed bytes written, header included */
	uint64_t max_bytes; /* the cap */
	bool full;	    /* the cap was reached: no more records */
};

uint64_t pgd_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pgd_wlog_create(struct pgd_wlog **out, int fd, const char *path, uint64_t disk_size,
		    uint64_t cache_bytes, uint64_t max_bytes, char *err, size_t errlen)
{
	struct lz4s_writer_opts o = {.buffer_bytes = LOG_BUFFER, .wait_when_full = 1, .fd = fd};
	unsigned char head[PGD_WLOG_HEADER_SIZE] = {0};
	struct pgd_wlog *l = calloc(1, sizeof(*l));
	int ret;

	*out = NULL;
	if (!l) {
		snprintf(err, errlen, "write log \"%s\": %s", path, strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	memcpy(head, PGD_WLOG_MAGIC, 8);
	lz4s_put16(head + 8, PGD_WLOG_VERSION);
	lz4s_put16(head + 10, PGD_WLOG_HEADER_SIZE);
	lz4s_put16(head + 12, PGD_WLOG_REC_SIZE);
	lz4s_put64(head + 16, disk_size);
	lz4s_put64(head + 24, cache_bytes);
	lz4s_put64(head + 32, pgd_realtime_ns());
	lz4s_put64(head + 40, max_bytes);
	l->s = lz4s_writer_create(NULL, &o, head, sizeof(head), &ret); /* closes fd on failure */
	if (!l->s) {
		snprintf(err, errlen, "cannot start the write log \"%s\": %s", path,
			 strerror(-ret));
		free(l);
		return ret;
	}
	l->bytes = PGD_WLOG_HEADER_SIZE;
	l->max_bytes = max_bytes;
	*out = l;
	return 0;
}

/* put_fault() -- one record (and @len bytes of @data if not NULL), with
 * a fault record's request kind and errno. */
static void put_fault(struct pgd_wlog *l, enum pgd_wlog_kind kind, unsigned flags, uint64_t off,
		      uint64_t len, const void *data, unsigned fkind, unsigned ferr)
{
	unsigned char h[PGD_WLOG_REC_SIZE] = {0};

	lz4s_put64(h, ++l->seq);
	lz4s_put64(h + 8, pgd_realtime_ns());
	lz4s_put64(h + 16, off);
	lz4s_put64(h + 24, len);
	h[32] = (unsigned char)kind;
	h[33] = (unsigned char)flags;
	h[34] = (unsigned char)fkind;
	h[35] = (unsigned char)ferr;
	/* the writer waits for room and fails only after an output error,
	 * which it reports at close */
	(void)lz4s_write(l->s, h, sizeof(h));
	l->bytes += sizeof(h);
	if (data) {
		(void)lz4s_write(l->s, data, len);
		l->bytes += len;
	}
}

/* put() -- one record (and @len bytes of @data if not NULL). */
static void put(struct pgd_wlog *l, enum pgd_wlog_kind kind, unsigned flags, uint64_t off,
		uint64_t len, const void *data)
{
	put_fault(l, kind, flags, off, len, data, 0, 0);
}

static const enum pgd_wlog_kind kinds[PGD_NOPS] = {
    [PGD_WRITE] = PGD_WLOG_WRITE,
    [PGD_FLUSH] = PGD_WLOG_FLUSH,
    [PGD_DISCARD] = PGD_WLOG_DISCARD,
    [PGD_ZERO] = PGD_WLOG_ZERO,
};

/* room() -- whether a record of @need bytes fits under the cap with the end
 * record after it; if not, the log ends here (once). */
static bool room(struct pgd_wlog *l, uint64_t need)
{
	if (!l || l->full)
		return false;
	if (l->bytes + need + PGD_WLOG_REC_SIZE <= l->max_bytes)
		return true;
	put(l, PGD_WLOG_END, PGD_WLOG_F_CAP, 0, 0, NULL);
	l->full = true;
	log_msg(LOG_WARNING,
		"the write log reached its cap (%" PRIu64
		" bytes): no request after record %" PRIu64 " is logged",
		l->max_bytes, l->seq - 1);
	return false;
}

void pgd_wlog_append(struct pgd_wlog *l, enum pgd_op op, bool fua, uint64_t off, uint64_t len,
		     const void *data)
{
	if (op == PGD_READ || op >= PGD_NOPS ||
	    !room(l, PGD_WLOG_REC_SIZE + (op == PGD_WRITE ? len : 0)))
		return;
	put(l, kinds[op], fua ? PGD_WLOG_F_FUA : 0, off, len, op == PGD_WRITE ? data : NULL);
}

void pgd_wlog_fault(struct pgd_wlog *l, enum pgd_op op, bool fua, uint64_t off, uint64_t len,
		    int fault)
{
	if (op >= PGD_NOPS || !room(l, PGD_WLOG_REC_SIZE))
		return;
	put_fault(l, PGD_WLOG_FAULT, fua ? PGD_WLOG_F_FUA : 0, off, len, NULL,
		  op == PGD_READ ? 0 : kinds[op], fault < 0 ? (unsigned)-fault : 0);
}

void pgd_wlog_counters(const struct pgd_wlog *l, struct pgd_wlog_counters *c)
{
	struct lz4s_writer_stats st;

	memset(c, 0, sizeof(*c));
	if (!l)
		return;
	lz4s_writer_stats(l->s, &st);
	c->records = l->seq;
	c->bytes = l->bytes;
	c->bytes_out = st.bytes_out;
	c->full = l->full;
	c->error = st.error;
}

int pgd_wlog_close(struct pgd_wlog *l)
{
	int ret;

	if (!l)
		return 0;
	if (!l->full)
		put(l, PGD_WLOG_END, 0, 0, 0, NULL);
	ret = lz4s_writer_close(l->s, NULL);
	free(l);
	return ret;
}

/* ---- reading ---------------------------------------------------------------- */

struct pgd_wlog_reader {
	struct lz4s_reader *s;
	struct pgd_wlog_info info;
	uint64_t next_seq;
	bool ended;
};

int pgd_wlog_open(struct pgd_wlog_reader **out, const char *path, char *err, size_t errlen)
{
	struct pgd_wlog_reader *r = calloc(1, sizeof(*r));
	const unsigned char *p;
	int ret;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "write log \"%s\": %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	r->s = lz4s_reader_open(path, "write log", &ret);
	if (!r->s) {
		snprintf(err, errlen, "cannot open the write log \"%s\": %s", path, strerror(-ret));
		free(r);
		return ret;
	}
	ret = lz4s_peek(r->s, PGD_WLOG_HEADER_SIZE, &p);
	if (ret == 0)
		ret = lz4s_fail(r->s, "it ends inside its %d-byte header", PGD_WLOG_HEADER_SIZE);
	else if (ret > 0 && memcmp(p, PGD_WLOG_MAGIC, 8) != 0)
		ret = lz4s_fail(r->s, "not a pgdisk write log (no \"%s\" at the start)",
				PGD_WLOG_MAGIC);
	else if (ret > 0 && ((lz4s_get16(p + 8) != 1 && lz4s_get16(p + 8) != PGD_WLOG_VERSION) ||
			     lz4s_get16(p + 10) != PGD_WLOG_HEADER_SIZE ||
			     lz4s_get16(p + 12) != PGD_WLOG_REC_SIZE))
		ret = lz4s_fail(r->s,
				"format version %u (header %u, record %u bytes) is not supported "
				"(this reader: version %d)",
				lz4s_get16(p + 8), lz4s_get16(p + 10), lz4s_get16(p + 12),
				PGD_WLOG_VERSION);
	if (ret < 0) {
		snprintf(err, errlen, "%s", lz4s_reader_error(r->s));
		pgd_wlog_reader_close(r);
		return ret;
	}
	r->info.disk_size = lz4s_get64(p + 16);
	r->info.cache_bytes = lz4s_get64(p + 24);
	r->info.start_realtime_ns = lz4s_get64(p + 32);
	r->info.max_bytes = lz4s_get64(p + 40);
	lz4s_consume(r->s, PGD_WLOG_HEADER_SIZE, 0);
	r->next_seq = 1;
	*out = r;
	return 0;
}

const struct pgd_wlog_info *pgd_wlog_info(const struct pgd_wlog_reader *r)
{
	return &r->info;
}

int pgd_wlog_next(struct pgd_wlog_reader *r, struct pgd_wlog_rec *rec, void *data)
{
	const unsigned char *p;
	int ret;

	if (r->ended)
		return 0;
	ret = lz4s_peek(r->s, PGD_WLOG_REC_SIZE, &p);
	if (ret == 0)
		return lz4s_fail(r->s,
				 "ends after record %" PRIu64
				 " without an end record (pgdisk did not stop cleanly)",
				 r->next_seq - 1);
	if (ret < 0)
		return ret;
	rec->seq = lz4s_get64(p);
	rec->time_ns = lz4s_get64(p + 8);
	rec->off = lz4s_get64(p + 16);
	rec->len = lz4s_get64(p + 24);
	rec->kind = p[32];
	rec->flags = p[33];
	rec->fault_kind = p[34];
	rec->fault_err = p[35];
	if (rec->seq != r->next_seq || rec->kind < PGD_WLOG_WRITE || rec->kind > PGD_WLOG_FAULT ||
	    (rec->kind == PGD_WLOG_FAULT && rec->fault_kind > PGD_WLOG_ZERO) ||
	    (rec->kind == PGD_WLOG_WRITE && rec->len > PGD_MAX_IO) ||
	    (rec->kind != PGD_WLOG_END && rec->off + rec->len > r->info.disk_size))
		return lz4s_fail(
		    r->s,
		    "record %" PRIu64 " (byte %" PRIu64 " of the decompressed stream) is invalid: "
		    "sequence %" PRIu64 ", kind %u, offset %" PRIu64 ", length %" PRIu64,
		    r->next_seq, lz4s_offset(r->s), rec->seq, rec->kind, rec->off, rec->len);
	lz4s_consume(r->s, PGD_WLOG_REC_SIZE, 1);
	r->next_seq++;
	if (rec->kind == PGD_WLOG_WRITE) {
		ret = lz4s_read(r->s, data, rec->len);
		if (ret == 0)
			ret = lz4s_fail(r->s, "record %" PRIu64 " ends before its data", rec->seq);
		if (ret < 0)
			return ret;
	}
	if (rec->kind == PGD_WLOG_END)
		r->ended = true;
	return 1;
}

const char *pgd_wlog_error(const struct pgd_wlog_reader *r)
{
	return lz4s_reader_error(r->s);
}

void pgd_wlog_reader_close(struct pgd_wlog_reader *r)
{
	if (!r)
		return;
	lz4s_reader_close(r->s);
	free(r);
}
