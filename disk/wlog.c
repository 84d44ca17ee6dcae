/*
 * wlog.c -- pgdisk's write log: every write, flush, discard and
 * write-zeroes the disk performed, in the order it received them, the data
 * of every write with it, as one byte stream in an lz4 frame (common/lz4s.h,
 * the code iosched's traces use).  The layout is in pgdisk_i.h ("the write
 * log"); `pgdisk cut` reads it back to build the disk as a power cut would
 * have left it.
 *
 * The request log (--requests) is the same format without data: every
 * request, reads and failed ones too, each with what the model said of it
 * (what held it back, for how long, the buckets' levels).
 *
 * What must stay true: records appear in the order pgd_dev_submit()
 * performed the requests, each with the next sequence number (1, 2, ...),
 * in a write log only requests that succeeded (a failed one changed
 * nothing the kernel may rely on) and no reads, but that a request an
 * injected fault failed or lost is logged as a fault record, which no
 * reader takes for a request performed; nothing is ever dropped: the writer waits for room, so a
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
	bool requests;	    /* a request log: every request, no data */
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

int pgd_wlog_create(struct pgd_wlog **out, int fd, const char *path, unsigned flags,
		    uint64_t disk_size, uint64_t cache_bytes, uint64_t max_bytes, char *err,
		    size_t errlen)
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
	lz4s_put16(head + 14, (uint16_t)flags);
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
	l->requests = flags & PGD_WLOG_H_REQUESTS;
	*out = l;
	return 0;
}

/* put_f64() / get_f64() -- a double as its IEEE 754 bits. */
static void put_f64(unsigned char *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	lz4s_put64(p, u);
}

static double get_f64(const unsigned char *p)
{
	uint64_t u = lz4s_get64(p);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/* One record's fields (the header's; a fault record's request kind and
 * errno; what the model said, NULL for none). */
struct rec_out {
	enum pgd_wlog_kind kind;
	unsigned flags, fkind, ferr;
	uint64_t off, len;
	const struct pgd_wlog_model *m;
};

/* put() -- one record, and @len bytes of @data after it if not NULL. */
static void put(struct pgd_wlog *l, const struct rec_out *r, const void *data)
{
	unsigned char h[PGD_WLOG_REC_SIZE] = {0};
	const struct ios_disk_time *t = r->m ? r->m->t : NULL;

	lz4s_put64(h, ++l->seq);
	lz4s_put64(h + 8, r->m ? r->m->arrival_realtime_ns : pgd_realtime_ns());
	lz4s_put64(h + 16, r->off);
	lz4s_put64(h + 24, r->len);
	h[32] = (unsigned char)r->kind;
	h[33] = (unsigned char)r->flags;
	h[34] = (unsigned char)r->fkind;
	h[35] = (unsigned char)r->ferr;
	if (t) {
		h[36] = (unsigned char)t->limit;
		lz4s_put32(h + 40, t->ops);
		lz4s_put64(h + 48, t->start_ns - r->m->arrival_ns);
		lz4s_put64(h + 56, t->done_ns - t->start_ns);
		put_f64(h + 64, t->iops_tokens);
		put_f64(h + 72, t->bytes_tokens);
		put_f64(h + 80, t->credits);
	}
	/* the writer waits for room and fails only after an output error,
	 * which it reports at close */
	(void)lz4s_write(l->s, h, sizeof(h));
	l->bytes += sizeof(h);
	if (data) {
		(void)lz4s_write(l->s, data, r->len);
		l->bytes += r->len;
	}
}

static const enum pgd_wlog_kind kinds[PGD_NOPS] = {
    [PGD_READ] = PGD_WLOG_READ,	      [PGD_WRITE] = PGD_WLOG_WRITE, [PGD_FLUSH] = PGD_WLOG_FLUSH,
    [PGD_DISCARD] = PGD_WLOG_DISCARD, [PGD_ZERO] = PGD_WLOG_ZERO,
};

/* room() -- whether a record of @need bytes fits under the cap with the end
 * record after it; if not, the log ends here (once). */
static bool room(struct pgd_wlog *l, uint64_t need)
{
	struct rec_out end = {.kind = PGD_WLOG_END, .flags = PGD_WLOG_F_CAP};

	if (!l || l->full)
		return false;
	if (l->bytes + need + PGD_WLOG_REC_SIZE <= l->max_bytes)
		return true;
	put(l, &end, NULL);
	l->full = true;
	log_msg(LOG_WARNING,
		"the %s log reached its cap (%" PRIu64 " bytes): no request after record %" PRIu64
		" is logged",
		l->requests ? "request" : "write", l->max_bytes, l->seq - 1);
	return false;
}

void pgd_wlog_append(struct pgd_wlog *l, enum pgd_op op, bool fua, uint64_t off, uint64_t len,
		     const void *data, ssize_t result, int fault, const struct pgd_wlog_model *m)
{
	struct rec_out r = {.kind = op < PGD_NOPS ? kinds[op] : PGD_WLOG_END,
			    .flags = fua ? PGD_WLOG_F_FUA : 0,
			    .off = off,
			    .len = len,
			    .m = m};
	bool with_data;

	if (!l || op >= PGD_NOPS)
		return;
	if (fault) { /* failed or lost: a fault record, the request's own kind in it */
		r.kind = PGD_WLOG_FAULT;
		r.fkind = op == PGD_READ ? 0 : kinds[op];
		r.ferr = fault < 0 ? (unsigned)-fault : 0;
	} else if (!l->requests && (op == PGD_READ || result < 0)) {
		return; /* a write log holds what was performed */
	} else if (result < 0) {
		r.flags |= PGD_WLOG_F_ERROR;
	}
	with_data = !l->requests && r.kind == PGD_WLOG_WRITE;
	if (room(l, PGD_WLOG_REC_SIZE + (with_data ? len : 0)))
		put(l, &r, with_data ? data : NULL);
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
		put(l, &(struct rec_out){.kind = PGD_WLOG_END}, NULL);
	ret = lz4s_writer_close(l->s, NULL);
	free(l);
	return ret;
}

/* ---- reading ---------------------------------------------------------------- */

struct pgd_wlog_reader {
	struct lz4s_reader *s;
	struct pgd_wlog_info info;
	unsigned rec_size;
	uint64_t next_seq;
	bool ended;
};

/* supported() -- a header this reader knows: versions 1 and 2 with 40-byte
 * records, version 3 with 88-byte ones, a 48-byte header. */
static bool supported(const unsigned char *p)
{
	unsigned v = lz4s_get16(p + 8), rec = lz4s_get16(p + 12);

	return lz4s_get16(p + 10) == PGD_WLOG_HEADER_SIZE &&
	       ((v < PGD_WLOG_VERSION && v >= 1 && rec == PGD_WLOG_REC_SIZE_V1) ||
		(v == PGD_WLOG_VERSION && rec == PGD_WLOG_REC_SIZE));
}

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
	else if (ret > 0 && !supported(p))
		ret = lz4s_fail(r->s,
				"format version %u (header %u, record %u bytes) is not supported "
				"(this reader: versions 1 to %d)",
				lz4s_get16(p + 8), lz4s_get16(p + 10), lz4s_get16(p + 12),
				PGD_WLOG_VERSION);
	if (ret < 0) {
		snprintf(err, errlen, "%s", lz4s_reader_error(r->s));
		pgd_wlog_reader_close(r);
		return ret;
	}
	r->info.version = lz4s_get16(p + 8);
	r->info.flags = r->info.version >= PGD_WLOG_VERSION ? lz4s_get16(p + 14) : 0;
	r->rec_size = lz4s_get16(p + 12);
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
	bool requests = r->info.flags & PGD_WLOG_H_REQUESTS, bad;
	const unsigned char *p;
	int ret;

	if (r->ended)
		return 0;
	ret = lz4s_peek(r->s, r->rec_size, &p);
	if (ret == 0)
		return lz4s_fail(r->s,
				 "ends after record %" PRIu64
				 " without an end record (pgdisk did not stop cleanly)",
				 r->next_seq - 1);
	if (ret < 0)
		return ret;
	memset(rec, 0, sizeof(*rec));
	rec->seq = lz4s_get64(p);
	rec->time_ns = lz4s_get64(p + 8);
	rec->off = lz4s_get64(p + 16);
	rec->len = lz4s_get64(p + 24);
	rec->kind = p[32];
	rec->flags = p[33];
	rec->fault_kind = p[34];
	rec->fault_err = p[35];
	if (r->rec_size >= PGD_WLOG_REC_SIZE) {
		rec->limit = p[36];
		rec->ops = lz4s_get32(p + 40);
		rec->wait_ns = lz4s_get64(p + 48);
		rec->service_ns = lz4s_get64(p + 56);
		rec->iops_tokens = get_f64(p + 64);
		rec->bytes_tokens = get_f64(p + 72);
		rec->credits = get_f64(p + 80);
	}
	bad = rec->seq != r->next_seq || rec->kind < PGD_WLOG_WRITE ||
	      rec->kind > (requests ? PGD_WLOG_READ : PGD_WLOG_FAULT) ||
	      (rec->kind == PGD_WLOG_FAULT && rec->fault_kind > PGD_WLOG_ZERO) ||
	      rec->limit >= IOS_NLIMIT;
	/* a request log's failed request may be one the disk refused */
	if (rec->kind != PGD_WLOG_END && !(requests && (rec->flags & PGD_WLOG_F_ERROR)))
		bad = bad || (rec->kind == PGD_WLOG_WRITE && rec->len > PGD_MAX_IO) ||
		      rec->off + rec->len > r->info.disk_size;
	if (bad)
		return lz4s_fail(
		    r->s,
		    "record %" PRIu64 " (byte %" PRIu64 " of the decompressed stream) is invalid: "
		    "sequence %" PRIu64 ", kind %u, offset %" PRIu64 ", length %" PRIu64,
		    r->next_seq, lz4s_offset(r->s), rec->seq, rec->kind, rec->off, rec->len);
	lz4s_consume(r->s, r->rec_size, 1);
	r->next_seq++;
	if (rec->kind == PGD_WLOG_WRITE && !requests) {
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
