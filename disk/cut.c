/*
 * cut.c -- `pgdisk cut`: the disk as a power cut would have left it, built
 * from the image pgdisk started with (the base) and its write log; and
 * `pgdisk log`: what a write log holds.
 *
 * The rules of the modelled disk's volatile write cache (docs/pgdisk.md):
 * a write (or discard, or write-zeroes) is durable once a flush that
 * arrived after it has arrived, or once write_cache_kb of newer writes have
 * arrived after it (the cache destages oldest first), and a FUA write at
 * once; a power cut after record P keeps every durable request up to P and
 * a choice of the others: all, none, or each with probability 1/2 drawn
 * from the seed and the record's sequence number alone (the same seed and
 * log always give the same image).  A request is kept whole or not at all
 * (no torn writes).
 *
 * What must stay true: OUT is a new file, never an existing one, and on
 * any failure it is removed; the base and the log are only read; a cut
 * the log cannot answer (past its end, past its cap, a damaged log before
 * the point) is refused with the reason, building nothing.
 */
#include "pgdisk_i.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum keep { KEEP_RANDOM, KEEP_ALL, KEEP_NONE };

static const char *const kind_names[] = {
    [PGD_WLOG_WRITE] = "write", [PGD_WLOG_FLUSH] = "flush", [PGD_WLOG_DISCARD] = "discard",
    [PGD_WLOG_ZERO] = "zero",	[PGD_WLOG_END] = "end",	    [PGD_WLOG_FAULT] = "fault",
    [PGD_WLOG_READ] = "read",
};

/* survives() -- the seeded choice for unflushed record @seq: a splitmix64
 * hash of both, so that it does not depend on the order of the questions. */
static bool survives(uint64_t seed, uint64_t seq)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + seq;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z & 1;
}

/* parse_num() -- a whole number into *@out: 0, or -1 after a message. */
static int parse_num(const char *opt, const char *arg, uint64_t min, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min) {
		fprintf(stderr, "pgdisk: option %s \"%s\": not a whole number of at least %llu\n",
			opt, arg, (unsigned long long)min);
		return -1;
	}
	*out = v;
	return 0;
}

/* The records after the last flush before the cut: the ones a cut may lose. */
struct pending {
	uint64_t seq, len;
	bool fua;
	bool lost;
};

struct plan {
	uint64_t cut;	   /* the power fails after this record */
	uint64_t cut_time; /* its arrival (CLOCK_REALTIME ns) */
	uint64_t flush;	   /* the last flush at or before the cut (0: none) */
	uint64_t nflushes; /* flushes up to the cut */
	struct pending *p; /* requests after it, up to the cut */
	size_t np, cap;
	uint64_t volatile_n; /* of those, still in the cache at the cut */
	uint64_t lost_n;
};

static int pending_add(struct plan *pl, const struct pgd_wlog_rec *r)
{
	if (pl->np == pl->cap) {
		size_t n = pl->cap ? 2 * pl->cap : 1024;
		struct pending *q = realloc(pl->p, n * sizeof(*q));

		if (!q)
			return -ENOMEM;
		pl->p = q;
		pl->cap = n;
	}
	pl->p[pl->np++] = (struct pending){.seq = r->seq,
					   .len = r->kind == PGD_WLOG_WRITE ? r->len : 0,
					   .fua = (r->flags & PGD_WLOG_F_FUA) != 0};
	return 0;
}

/* scan() -- the first pass: find the cut (@at, or the @flush_no-th flush,
 * or the last record when both are 0), the last flush before it and the
 * requests after that.  0, or 1 after a message. */
static int scan(const char *log, uint64_t at, uint64_t flush_no, struct plan *pl, char *data)
{
	struct pgd_wlog_reader *r;
	struct pgd_wlog_rec rec;
	char err[PATH_MAX + 256];
	uint64_t last = 0;
	bool capped = false;
	int ret;

	if (pgd_wlog_open(&r, log, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", err);
		return 1;
	}
	while ((ret = pgd_wlog_next(r, &rec, data)) > 0) {
		if (rec.kind == PGD_WLOG_END) {
			capped = rec.flags & PGD_WLOG_F_CAP;
			break;
		}
		last = rec.seq;
		if (rec.kind == PGD_WLOG_FAULT) {
			/* a request not performed: nothing to keep or lose */
		} else if (rec.kind == PGD_WLOG_FLUSH) {
			pl->flush = rec.seq;
			pl->nflushes++;
			pl->np = 0;
		} else if (pending_add(pl, &rec) < 0) {
			fprintf(stderr, "pgdisk: out of memory\n");
			goto fail;
		}
		pl->cut = rec.seq;
		pl->cut_time = rec.time_ns;
		if ((at && rec.seq == at) || (flush_no && pl->nflushes == flush_no))
			break;
	}
	if (ret < 0) {
		fprintf(stderr, "pgdisk: %s\n", pgd_wlog_error(r));
		goto fail;
	}
	if ((at && pl->cut != at) || (flush_no && pl->nflushes != flush_no)) {
		if (at)
			fprintf(stderr,
				"pgdisk: no cut after record %" PRIu64
				": the log ends at record %" PRIu64 "%s\n",
				at, last,
				capped ? " (its cap was reached: nothing later was logged)" : "");
		else
			fprintf(stderr,
				"pgdisk: no flush number %" PRIu64 ": the log holds %" PRIu64
				" flushes%s\n",
				flush_no, pl->nflushes,
				capped ? " (its cap was reached: nothing later was logged)" : "");
		goto fail;
	}
	if (!pl->cut) {
		fprintf(stderr, "pgdisk: write log \"%s\" holds no request\n", log);
		goto fail;
	}
	pgd_wlog_reader_close(r);
	return 0;
fail:
	pgd_wlog_reader_close(r);
	return 1;
}

/* decide() -- which pending requests the cut loses: those still in the
 * cache (newest first, up to @cache bytes of writes; FUA writes never),
 * as @keep says. */
static void decide(struct plan *pl, uint64_t cache, enum keep keep, uint64_t seed)
{
	uint64_t held = 0;
	size_t i;

	if (cache == 0)
		return;
	for (i = pl->np; i-- > 0;) {
		struct pending *q = &pl->p[i];

		if (q->fua)
			continue;
		held += q->len;
		if (held > cache)
			break; /* this one and every older one were destaged */
		pl->volatile_n++;
		q->lost = keep == KEEP_NONE || (keep == KEEP_RANDOM && !survives(seed, q->seq));
		pl->lost_n += q->lost;
	}
}

/* copy_sparse() -- @in to @out, holes as holes.  0 or -errno. */
static int copy_sparse(int in, int out, uint64_t size)
{
	off_t pos = 0, end;

	while ((uint64_t)pos < size) {
		pos = lseek(in, pos, SEEK_DATA);
		if (pos < 0)
			return errno == ENXIO ? 0 : -errno;
		end = lseek(in, pos, SEEK_HOLE);
		if (end < 0)
			return -errno;
		while (pos < end) {
			loff_t a = pos, b = pos;
			ssize_t n = copy_file_range(in, &a, out, &b, (size_t)(end - pos), 0);

			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO;
			pos += n;
		}
	}
	return 0;
}

/* apply() -- the second pass: every record up to the cut that is not lost,
 * onto @fd.  0, or 1 after a message. */
static int apply(const char *log, const char *out, int fd, const struct plan *pl, char *data,
		 uint64_t *applied)
{
	struct pgd_wlog_reader *r;
	struct pgd_wlog_rec rec;
	char err[PATH_MAX + 256];
	size_t next = 0;
	int ret;

	if (pgd_wlog_open(&r, log, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", err);
		return 1;
	}
	while ((ret = pgd_wlog_next(r, &rec, data)) > 0 && rec.seq <= pl->cut) {
		bool lost = false;

		if (rec.kind == PGD_WLOG_FLUSH || rec.kind == PGD_WLOG_END ||
		    rec.kind == PGD_WLOG_FAULT)
			continue;
		if (rec.seq > pl->flush) {
			lost = pl->p[next].lost; /* the pending list is in log order */
			next++;
		}
		if (lost)
			continue;
		if (rec.kind == PGD_WLOG_WRITE) {
			uint64_t done = 0;

			while (done < rec.len) {
				ssize_t n = pwrite(fd, data + done, rec.len - done,
						   (off_t)(rec.off + done));

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					fprintf(stderr, "pgdisk: cannot write \"%s\": %s\n", out,
						n < 0 ? strerror(errno) : "short write");
					goto fail;
				}
				done += (uint64_t)n;
			}
		} else if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)rec.off,
				     (off_t)rec.len) < 0) {
			fprintf(stderr, "pgdisk: cannot punch a hole in \"%s\": %s\n", out,
				strerror(errno));
			goto fail;
		}
		(*applied)++;
	}
	if (ret < 0) {
		fprintf(stderr, "pgdisk: %s\n", pgd_wlog_error(r));
		goto fail;
	}
	pgd_wlog_reader_close(r);
	return 0;
fail:
	pgd_wlog_reader_close(r);
	return 1;
}

static void cut_usage(FILE *f)
{
	fprintf(f,
		"Usage: pgdisk cut [OPTIONS] LOG BASE OUT\n"
		"\n"
		"Build OUT, a new disk image: BASE (the image pgdisk served when it started the\n"
		"write log LOG) as a power cut after a logged request would have left it.\n"
		"Every request up to the cut that was durable stays: those before the last\n"
		"flush before the cut, those write_cache_kb of newer writes had pushed out of\n"
		"the cache, FUA writes; of the others (still in the volatile cache), --keep\n"
		"chooses.  A request is kept whole or not at all.\n"
		"\n"
		"Options:\n"
		"  -a, --at SEQ         the power fails after record SEQ (default: the last)\n"
		"  -F, --flush N        the disk as of the Nth flush: everything before it\n"
		"                       and nothing after (--keep none at that flush)\n"
		"  -k, --keep MODE      unflushed requests still in the cache that survive:\n"
		"                       random (each with probability 1/2, from --seed;\n"
		"                       the default), all or none\n"
		"  -s, --seed N         the seed of random (default 1)\n"
		"  -h, --help           this help\n"
		"\n"
		"Prints what it did, one \"NAME VALUE\" per line: cut_seq, cut_time_ns\n"
		"(CLOCK_REALTIME of the record's arrival), flush_seq (the last flush before\n"
		"the cut, 0: none), flushes, pending (requests after it), volatile (of those,\n"
		"still in the cache), lost, applied.  Exit 0, or 1 with a message.\n");
}

int pgd_cut_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"at", required_argument, NULL, 'a'},   {"flush", required_argument, NULL, 'F'},
	    {"keep", required_argument, NULL, 'k'}, {"seed", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	uint64_t at = 0, flush_no = 0, seed = 1, applied = 0;
	enum keep keep = KEEP_RANDOM;
	struct plan pl = {0};
	struct pgd_wlog_reader *r;
	char err[PATH_MAX + 256], *data = NULL;
	const char *log, *base, *out;
	struct pgd_wlog_info info;
	struct stat st;
	int opt, in = -1, fd = -1, ret = 1;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+a:F:k:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			if (parse_num("--at", optarg, 1, &at) < 0)
				return 1;
			break;
		case 'F':
			if (parse_num("--flush", optarg, 1, &flush_no) < 0)
				return 1;
			break;
		case 's':
			if (parse_num("--seed", optarg, 0, &seed) < 0)
				return 1;
			break;
		case 'k':
			if (strcmp(optarg, "random") == 0)
				keep = KEEP_RANDOM;
			else if (strcmp(optarg, "all") == 0)
				keep = KEEP_ALL;
			else if (strcmp(optarg, "none") == 0)
				keep = KEEP_NONE;
			else {
				fprintf(stderr,
					"pgdisk: option --keep \"%s\": not random, all or none\n",
					optarg);
				return 1;
			}
			break;
		case 'h':
			cut_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "pgdisk cut: unknown option or missing argument \"%s\"\n",
				argv[optind - 1]);
			fprintf(stderr, "Try 'pgdisk cut --help'.\n");
			return 1;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr,
			"pgdisk cut: expected LOG BASE OUT, got %d argument%s\n"
			"Try 'pgdisk cut --help'.\n",
			argc - optind, argc - optind == 1 ? "" : "s");
		return 1;
	}
	if (at && flush_no) {
		fprintf(stderr, "pgdisk cut: --at and --flush exclude each other\n");
		return 1;
	}
	log = argv[optind];
	base = argv[optind + 1];
	out = argv[optind + 2];
	if (flush_no)
		keep = KEEP_NONE;

	if (pgd_wlog_open(&r, log, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", err);
		return 1;
	}
	info = *pgd_wlog_info(r);
	pgd_wlog_reader_close(r);
	if (info.flags & PGD_WLOG_H_REQUESTS) {
		fprintf(stderr,
			"pgdisk: \"%s\" is a request log (--requests: no data): pgdisk cut needs "
			"a write log (--log)\n",
			log);
		return 1;
	}
	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		fprintf(stderr, "pgdisk: base image \"%s\": %s\n", base, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != info.disk_size) {
		fprintf(stderr,
			"pgdisk: base image \"%s\" is not the disk of the log: %s%llu bytes, the "
			"log's disk %" PRIu64 "\n",
			base, S_ISREG(st.st_mode) ? "" : "not a regular file, ",
			(unsigned long long)st.st_size, info.disk_size);
		goto out;
	}
	data = malloc(PGD_MAX_IO);
	if (!data) {
		fprintf(stderr, "pgdisk: out of memory\n");
		goto out;
	}
	if (scan(log, at, flush_no, &pl, data))
		goto out;
	decide(&pl, info.cache_bytes, keep, seed);

	fd = open(out, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "pgdisk: cannot create \"%s\": %s%s\n", out, strerror(errno),
			errno == EEXIST ? " (it is never overwritten)" : "");
		goto out;
	}
	if (ftruncate(fd, (off_t)info.disk_size) < 0 ||
	    (ret = copy_sparse(in, fd, info.disk_size)) < 0) {
		fprintf(stderr, "pgdisk: cannot copy \"%s\" to \"%s\": %s\n", base, out,
			strerror(ret < 0 ? -ret : errno));
		ret = 1;
		goto out_unlink;
	}
	ret = apply(log, out, fd, &pl, data, &applied);
	if (ret == 0 && fsync(fd) < 0) {
		fprintf(stderr, "pgdisk: cannot sync \"%s\": %s\n", out, strerror(errno));
		ret = 1;
	}
	if (ret)
		goto out_unlink;
	printf(
	    "cut_seq %" PRIu64 "\ncut_time_ns %" PRIu64 "\nflush_seq %" PRIu64 "\nflushes %" PRIu64
	    "\npending %zu\nvolatile %" PRIu64 "\nlost %" PRIu64 "\napplied %" PRIu64 "\n",
	    pl.cut, pl.cut_time, pl.flush, pl.nflushes, pl.np, pl.volatile_n, pl.lost_n, applied);
	goto out;
out_unlink:
	unlink(out);
out:
	if (fd >= 0)
		close(fd);
	if (in >= 0)
		close(in);
	free(pl.p);
	free(data);
	return ret;
}

/* ---- pgdisk log ------------------------------------------------------------- */

int pgd_log_main(int argc, char **argv)
{
	struct pgd_wlog_reader *r;
	struct pgd_wlog_rec rec;
	char err[PATH_MAX + 256], *data;
	uint64_t n[PGD_WLOG_READ + 1] = {0}, bytes = 0, last = 0, fua = 0, failed = 0;
	const struct pgd_wlog_info *info;
	bool records = false, capped = false;
	int ret, i = 1;

	if (argc > 1 && strcmp(argv[1], "--records") == 0) {
		records = true;
		i++;
	}
	if (argc - i != 1 || argv[i][0] == '-') {
		fprintf(
		    stderr,
		    "Usage: pgdisk log [--records] LOG\n"
		    "Print what pgdisk's write log or request log LOG holds (with --records:\n"
		    "one line per record first, \"SEQ KIND TIME_NS OFFSET LENGTH FLAGS LIMIT\n"
		    "WAIT_NS SERVICE_NS OPS IOPS_TOKENS THROUGHPUT_TOKENS CREDITS\"; an injected\n"
		    "fault's adds the request's kind and its error, or \"lost\", after FLAGS).\n");
		return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 1;
	}
	if (pgd_wlog_open(&r, argv[i], err, sizeof(err)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", err);
		return 1;
	}
	data = malloc(PGD_MAX_IO);
	if (!data) {
		pgd_wlog_reader_close(r);
		return 1;
	}
	info = pgd_wlog_info(r);
	while ((ret = pgd_wlog_next(r, &rec, data)) > 0) {
		if (records && rec.kind == PGD_WLOG_FAULT)
			printf("%" PRIu64 " fault %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %s %s",
			       rec.seq, rec.time_ns, rec.off, rec.len, rec.flags,
			       rec.fault_kind ? kind_names[rec.fault_kind] : "read",
			       rec.fault_err ? strerrorname_np((int)rec.fault_err) : "lost");
		else if (records)
			printf("%" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %u", rec.seq,
			       kind_names[rec.kind], rec.time_ns, rec.off, rec.len, rec.flags);
		if (records)
			printf(" %s %" PRIu64 " %" PRIu64 " %u %.3f %.0f %.3f\n",
			       ios_disk_limit_name(rec.limit), rec.wait_ns, rec.service_ns, rec.ops,
			       rec.iops_tokens, rec.bytes_tokens, rec.credits);
		n[rec.kind]++;
		failed += rec.kind != PGD_WLOG_END && (rec.flags & PGD_WLOG_F_ERROR);
		if (rec.kind == PGD_WLOG_WRITE)
			bytes += rec.len;
		if (rec.kind == PGD_WLOG_WRITE && (rec.flags & PGD_WLOG_F_FUA))
			fua++;
		if (rec.kind == PGD_WLOG_END)
			capped = rec.flags & PGD_WLOG_F_CAP;
		else
			last = rec.seq;
	}
	printf("kind %s\nversion %u\n", info->flags & PGD_WLOG_H_REQUESTS ? "requests" : "writes",
	       info->version);
	printf("disk_size %" PRIu64 "\nwrite_cache_bytes %" PRIu64 "\nstart_time_ns %" PRIu64
	       "\nmax_bytes %" PRIu64 "\nrecords %" PRIu64 "\nwrites %" PRIu64
	       "\nwrite_bytes %" PRIu64 "\nflushes %" PRIu64 "\ndiscards %" PRIu64
	       "\nzeroes %" PRIu64 "\nfua_writes %" PRIu64 "\nfaults %" PRIu64 "\nended %s\n",
	       info->disk_size, info->cache_bytes, info->start_realtime_ns, info->max_bytes, last,
	       n[PGD_WLOG_WRITE], bytes, n[PGD_WLOG_FLUSH], n[PGD_WLOG_DISCARD], n[PGD_WLOG_ZERO],
	       fua, n[PGD_WLOG_FAULT],
	       ret < 0	? "damaged"
	       : capped ? "cap"
			: "clean");
	printf("reads %" PRIu64 "\nfailed %" PRIu64 "\n", n[PGD_WLOG_READ], failed);
	if (ret < 0)
		fprintf(stderr, "pgdisk: %s\n", pgd_wlog_error(r));
	free(data);
	pgd_wlog_reader_close(r);
	return ret < 0 ? 1 : 0;
}
