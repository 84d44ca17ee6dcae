/*
 * pgdisk_i.h -- internals shared by the files of disk/ (not a public header).
 *
 * Three threads: the session thread reads FUSE requests one at a time, in
 * the order the kernel queued them, and passes every request on the image
 * (read, write, flush, discard, write-zeroes) through pgd_dev_submit(),
 * which models it, performs it on the image and queues its reply; the
 * completion thread sends each reply when the model says the disk is done
 * (earliest first: a capped volume completes out of arrival order); the
 * signal thread unmounts on SIGTERM/SIGINT.  With daemon.realtime the
 * session and completion threads run SCHED_FIFO, so that a busy machine
 * delays neither a request's arrival nor its reply.
 */
#ifndef PGIOFS_PGDISK_I_H
#define PGIOFS_PGDISK_I_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "iosched.h"
#include "log.h" /* log_msg(): stderr in the foreground, syslog once daemonized */
#include "pgdisk.h"

#define PGD_MAX_IO     (1u << 20)   /* largest READ or WRITE (max_write, 256 pages) */
#define PGD_NSLOTS     256	    /* requests held at once (arrived, not yet completed) */
#define PGD_NBUFS      6	    /* large reads held at once, each with its data */
#define PGD_NSMALL     64	    /* small reads held at once, besides */
#define PGD_SMALL_IO   (32u << 10)  /* a small read's buffer */
#define PGD_SECTOR     512	    /* an image is whole sectors */
#define PGD_BUF_ALIGN  4096	    /* request buffers: aligned for O_DIRECT */
#define PGD_STACK_SIZE (256u << 10) /* the daemon's threads (memory is locked) */

enum pgd_ino { PGD_INO_ROOT = 1, PGD_INO_DISK = 2, PGD_INO_STATS = 3, PGD_INO_CONTROL = 4 };

/* ---- the write log and the request log (wlog.c) --------------------------
 * With --log FILE, pgdisk records every write, flush, discard and
 * write-zeroes it performed, in the order it received them, as one byte
 * stream in an lz4 frame (`lz4 -d` decompresses it; common/lz4s.h); with
 * --requests FILE, every request, reads and failed ones included, without
 * data, in the same format (header flag PGD_WLOG_H_REQUESTS).  The
 * decompressed stream, all little-endian:
 *
 *   header  0 magic "PGDWLOG1"   8 u16 version (3)   10 u16 header size (48)
 *          12 u16 record size (88)   14 u16 flags (PGD_WLOG_H_*)
 *          16 u64 disk size   24 u64 write cache bytes (0: none)
 *          32 u64 CLOCK_REALTIME ns at the start   40 u64 the log's cap in bytes
 *   record  0 u64 sequence (1, 2, ...)   8 u64 CLOCK_REALTIME ns at arrival
 *          16 u64 offset   24 u64 length   32 u8 kind   33 u8 flags
 *          34 u8 a fault's request   35 u8 a fault's errno   36 u8 limit
 *          (enum ios_disk_limit: what held it back)   37..39 0   40 u32
 *          operations counted (capped volumes)   44 u32 0   48 u64 ns held
 *          back (arrival to start)   56 u64 ns of service (start to
 *          completion)   64 f64 IOPS tokens   72 f64 throughput tokens
 *          (bytes)   80 f64 credits (the buckets once it was admitted; 0 for
 *          other models); a write log's write record is followed by its data
 *
 * A request failed by an injected fault (fault.c) is not performed and is
 * logged as a fault record instead of itself: kind PGD_WLOG_FAULT, the
 * request's offset, length and flags, byte 34 its kind (0 for a read, else
 * the kind it would have been logged as), byte 35 the errno it failed with
 * (0: a lost write or flush, acknowledged as done).  Version 1 (records of
 * 40 bytes, no fault records, no flags in the header) and version 2 (40
 * bytes, fault records) are read too, their model fields 0.  The last
 * record is an end record: flags 0 after a clean stop, or PGD_WLOG_F_CAP
 * when the cap was reached (nothing after it was logged). */
#define PGD_WLOG_MAGIC	     "PGDWLOG1"
#define PGD_WLOG_VERSION     3
#define PGD_WLOG_HEADER_SIZE 48
#define PGD_WLOG_REC_SIZE    88
#define PGD_WLOG_REC_SIZE_V1 40	 /* versions 1 and 2 */
#define PGD_WLOG_H_REQUESTS  0x1 /* header: a request log (every request, no data) */
#define PGD_WLOG_F_FUA	     0x1 /* a write: durable at once (forced unit access) */
#define PGD_WLOG_F_CAP	     0x1 /* an end record: the cap was reached */
#define PGD_WLOG_F_ERROR     0x2 /* a request log's record: the request failed */

enum pgd_wlog_kind {
	PGD_WLOG_WRITE = 1,
	PGD_WLOG_FLUSH,
	PGD_WLOG_DISCARD,
	PGD_WLOG_ZERO,
	PGD_WLOG_END,
	PGD_WLOG_FAULT, /* version 2 */
	PGD_WLOG_READ,	/* version 3, request logs only */
};

/* What a request on the image does. */
enum pgd_op { PGD_READ, PGD_WRITE, PGD_FLUSH, PGD_DISCARD, PGD_ZERO, PGD_NOPS };

/* One request held until the model completes it. */
struct pgd_slot {
	fuse_req_t req;
	enum pgd_op op;
	uint64_t done_ns; /* when the modelled disk completes it */
	uint64_t seq;	  /* arrival order, 1, 2, ... */
	ssize_t result;	  /* bytes, 0, or -errno */
	char *buf;	  /* PGD_READ: the data to reply with (one of bufs) */
};

/* Counters (docs/pgdisk.md lists them as MOUNTPOINT/stats prints them). */
struct pgd_counters {
	uint64_t ops[PGD_NOPS];	  /* arrived */
	uint64_t bytes[PGD_NOPS]; /* bytes requested (read, write, discard, zero) */
	uint64_t errors;	  /* failed (counted when performed), injected faults too */
	uint64_t faults;	  /* injected faults (fault.c), lost writes too */
	uint64_t completed;	  /* replies sent */
	uint64_t overtaken;	  /* of which after the reply of one that arrived later */
	uint64_t held_max;	  /* requests held at once, at most */
	uint64_t in_service_max;  /* requests the model had in service at once */
	/* modelled time, summed over the requests (struct ios_disk_time) */
	uint64_t service_ns, seek_ns, rotation_ns, transfer_ns, latency_ns;
	/* replies sent after the modelled completion: by how much (the
	 * histogram of late: lat_count, lat_max_ns, hist) */
	uint64_t late_ns_sum;
	struct ios_stats_class late;
	/* the modelled response time of each request: from its arrival to its
	 * modelled completion (lat_count, lat_max_ns, hist) */
	struct ios_stats_class response;
};

/* How a daemon thread is scheduled (daemon.realtime): what it got. */
struct pgd_sched {
	int policy;   /* SCHED_FIFO or SCHED_OTHER */
	int priority; /* SCHED_FIFO's, or the nice value */
};

/* ---- fault injection (fault.c) ------------------------------------------
 * Rules that fail chosen requests, as dm-error and dm-flakey do: set with
 * --fault at start and through MOUNTPOINT/control at run time.  The rules
 * are the session thread's alone: it checks every request against them in
 * pgd_dev_submit() and it serves the control file; nothing allocates. */
#define PGD_MAX_RULES  32
#define PGD_RULE_MAX   256 /* the longest rule text */
#define PGD_FAULT_LOST 1   /* pgd_fault_check(): acknowledged, not performed */

struct pgd_fault_rule {
	unsigned id;	      /* 1, 2, ... in the order added; 0: a free slot */
	unsigned ops;	      /* 1 << enum pgd_op, for each kind it fails */
	uint64_t first, last; /* the sectors it covers, inclusive */
	uint64_t nth;	      /* the nth request it matches is the first to fail */
	uint64_t count;	      /* it fails this many, then no more; 0: no limit */
	uint64_t for_ns;      /* it fails for this long from its first fault; 0: for good */
	int err;	      /* EIO or ENOSPC; 0: lost (acknowledged, not performed) */
	/* runtime */
	uint64_t seen;	   /* requests it matched */
	uint64_t hits;	   /* faults it injected */
	uint64_t first_ns; /* ios_now_ns() of its first fault */
	bool ended_logged; /* its end (count or time) was logged */
};

struct pgd_faults {
	struct pgd_fault_rule rule[PGD_MAX_RULES];
	unsigned next_id;
	uint64_t disk_size;
	char refused[2 * PGD_RULE_MAX]; /* the last control line refused, and why */
};

/* pgd_op_name() -- "read", "write", "flush", "discard", "zero" (the names
 * rules, the stats and the messages use). */
const char *pgd_op_name(enum pgd_op op);
/* pgd_fault_init() -- no rules, for a disk of @disk_size bytes. */
void pgd_fault_init(struct pgd_faults *f, uint64_t disk_size);
/* pgd_fault_add() -- parse the rule @text and add it: its id, or -errno
 * with a message naming the part of the rule at fault in @err (-EINVAL: a
 * malformed rule or one outside the disk; -ENOSPC: no free slot). */
int pgd_fault_add(struct pgd_faults *f, const char *text, char *err, size_t errlen);
/* pgd_fault_control() -- a write of @len bytes to MOUNTPOINT/control: one
 * or more lines, "add RULE", "clear ID" or "clear all", all applied or,
 * if one is refused, none.  0 or -errno (the reason logged and kept for
 * the control file's listing). */
int pgd_fault_control(struct pgd_faults *f, const char *buf, size_t len);
/* pgd_fault_check() -- whether an injected fault fails @op of @len bytes
 * at @off arriving at @now_ns: 0 (no: perform it), -EIO or -ENOSPC (fail
 * it unperformed) or PGD_FAULT_LOST (acknowledge it unperformed).  Counts
 * the request for every rule that matches it; when several would fail it,
 * the rule added first does.  Logs a rule's first fault and its end. */
int pgd_fault_check(struct pgd_faults *f, enum pgd_op op, uint64_t off, uint64_t len,
		    uint64_t now_ns);
/* pgd_fault_text() -- MOUNTPOINT/control's listing: a malloc()ed text,
 * its length in *@len; NULL if out of memory. */
char *pgd_fault_text(struct pgd_faults *f, size_t *len);
/* pgd_fault_rules() -- rules in the table. */
unsigned pgd_fault_rules(const struct pgd_faults *f);

/* The device: the image, the model and the held requests. */
struct pgd_dev {
	/* set up before serving, then read-only */
	int fd;	       /* the image, O_DIRECT when it allows it */
	int fd_cached; /* the image without O_DIRECT, for what is not aligned */
	uint64_t size;
	unsigned dio_align; /* offset, length and buffer alignment of fd */
	struct ios_disk *disk;
	struct pgd_wlog *wlog;	  /* the write log, or NULL (session thread only) */
	struct pgd_wlog *rlog;	  /* the request log, or NULL (session thread only) */
	struct pgd_faults faults; /* the session thread's only */
	bool realtime;		  /* daemon.realtime */
	int rt_priority;	  /* daemon.rt_priority */
	uint64_t start_ns;	  /* ios_now_ns() when serving began */
	struct pgd_sched sched_session, sched_completer;

	/* runtime data, under lock */
	pthread_mutex_t lock;
	pthread_cond_t work;  /* the completion thread (CLOCK_MONOTONIC): a request
			       * is held that completes before the one it waits for */
	pthread_cond_t space; /* the session thread: a slot or buffer came free */
	struct pgd_slot slot[PGD_NSLOTS];
	uint16_t free_slot[PGD_NSLOTS]; /* slots not in use: nfree of them */
	unsigned nfree;
	uint16_t held[PGD_NSLOTS]; /* slots held: a min-heap by done_ns, nheld of them */
	unsigned nheld;
	char *free_buf[PGD_NBUFS]; /* read buffers not in use: of PGD_MAX_IO */
	unsigned nfree_bufs;
	char *free_small[PGD_NSMALL]; /* ... of PGD_SMALL_IO */
	unsigned nfree_small;
	bool stopping;
	uint64_t arrived;     /* requests so far (slot seq) */
	uint64_t replied_seq; /* the latest arrival replied to so far */
	struct pgd_counters cnt;

	/* preallocated, locked memory */
	char *bufs;   /* PGD_NBUFS read buffers of PGD_MAX_IO, then PGD_NSMALL of
		       * PGD_SMALL_IO */
	char *bounce; /* write data, aligned (session thread only) */

	pthread_t thread;
	bool started;
};

/* dev.c */
/* pgd_dev_open() -- open and check the image @path (a regular file of
 * whole sectors, at least one, whose first and last sectors read), lock it
 * against a second pgdisk and allocate every buffer.  0, or -errno with a
 * message naming the image and the reason in @err. */
int pgd_dev_open(struct pgd_dev *d, const char *path, char *err, size_t errlen);
/* pgd_dev_model() -- create the disk model for the image: 0 or -errno. */
int pgd_dev_model(struct pgd_dev *d, const struct ios_settings *set);
/* pgd_dev_start() -- start the completion thread, and put it and the
 * calling (session) thread in the real-time class if d->realtime (else, or
 * where refused, as high a nice value as granted; logged).  0 or -errno. */
int pgd_dev_start(struct pgd_dev *d);
/* pgd_dev_submit() -- the one place every request on the image passes, in
 * the order the session thread received them: model it, perform it, and
 * queue its reply for when the model completes it, after logging it
 * (d->wlog).  @data: PGD_WRITE's; @fua: the write is durable at once (the
 * kernel sent it with O_DSYNC or O_SYNC: pgdisk syncs it before the
 * reply). */
void pgd_dev_submit(struct pgd_dev *d, fuse_req_t req, enum pgd_op op, uint64_t off, uint64_t len,
		    const void *data, bool fua);
/* pgd_dev_stop() -- complete every held request now (the session has
 * ended), stop the completion thread, sync the image. */
void pgd_dev_stop(struct pgd_dev *d);
/* pgd_dev_close() -- close the image, free everything.  After stop. */
void pgd_dev_close(struct pgd_dev *d);
/* pgd_dev_counters() -- a copy of the counters and the requests held now. */
void pgd_dev_counters(struct pgd_dev *d, struct pgd_counters *out, uint64_t *held);
/* pgd_sched_name() -- "fifo:PRIO", "nice:N" or "other" into @buf. */
const char *pgd_sched_name(const struct pgd_sched *s, char *buf, size_t len);

/* wlog.c: writing (session thread only) */
struct pgd_wlog;
struct pgd_wlog_counters {
	uint64_t records;   /* logged */
	uint64_t bytes;	    /* uncompressed bytes, header included */
	uint64_t bytes_out; /* compressed bytes written so far */
	bool full;	    /* the cap was reached */
	int error;	    /* the first output error, -errno */
};
/* pgd_wlog_create() -- start a write log (@flags 0) or a request log
 * (PGD_WLOG_H_REQUESTS) on @fd (a new file @path, which it takes over) for
 * a disk of @disk_size bytes with a write cache of @cache_bytes; at most
 * @max_bytes uncompressed.  0, or -errno with a message naming the file in
 * @err. */
int pgd_wlog_create(struct pgd_wlog **out, int fd, const char *path, unsigned flags,
		    uint64_t disk_size, uint64_t cache_bytes, uint64_t max_bytes, char *err,
		    size_t errlen);
/* What the model said of a request, for its record. */
struct pgd_wlog_model {
	uint64_t arrival_realtime_ns;
	const struct ios_disk_time *t; /* NULL: not modelled (refused) */
	uint64_t arrival_ns;	       /* the model's clock at arrival */
};
/* pgd_wlog_append() -- log one request: a write log takes those that
 * succeeded but reads (@result is the request's), with a write's @data; a
 * request log takes every one, without data; in both, one an injected
 * fault failed or lost instead of performing it (@fault:
 * pgd_fault_check()'s answer) is a fault record.  Waits for room; never
 * fails (an output error is the close's).  NULL @l: nothing. */
void pgd_wlog_append(struct pgd_wlog *l, enum pgd_op op, bool fua, uint64_t off, uint64_t len,
		     const void *data, ssize_t result, int fault, const struct pgd_wlog_model *m);
/* pgd_wlog_counters() -- what was logged (zeros for NULL). */
void pgd_wlog_counters(const struct pgd_wlog *l, struct pgd_wlog_counters *c);
/* pgd_wlog_close() -- the end record, the end of the frame, fsync, close.
 * 0 or the first output error.  Accepts NULL. */
int pgd_wlog_close(struct pgd_wlog *l);
/* pgd_realtime_ns() -- CLOCK_REALTIME in nanoseconds (the log's clock). */
uint64_t pgd_realtime_ns(void);

/* wlog.c: reading */
struct pgd_wlog_reader;
struct pgd_wlog_info {
	unsigned version, flags; /* PGD_WLOG_H_* */
	uint64_t disk_size, cache_bytes, start_realtime_ns, max_bytes;
};
struct pgd_wlog_rec {
	uint64_t seq, time_ns, off, len;
	unsigned kind, flags;
	unsigned fault_kind, fault_err; /* a fault record's bytes 34 and 35 */
	/* version 3: the model (0 before) */
	unsigned limit, ops;
	uint64_t wait_ns, service_ns;
	double iops_tokens, bytes_tokens, credits;
};
/* pgd_wlog_open() -- open a write log and check its header.  0, or -errno
 * with a message naming the file and the reason in @err. */
int pgd_wlog_open(struct pgd_wlog_reader **out, const char *path, char *err, size_t errlen);
const struct pgd_wlog_info *pgd_wlog_info(const struct pgd_wlog_reader *r);
/* pgd_wlog_next() -- the next record into @rec and a write's data into
 * @data (PGD_MAX_IO bytes; a request log has none).  1; 0 after the end record; a negative error
 * (pgd_wlog_error() names the file, the place and the reason), also for a
 * log that ends without an end record. */
int pgd_wlog_next(struct pgd_wlog_reader *r, struct pgd_wlog_rec *rec, void *data);
const char *pgd_wlog_error(const struct pgd_wlog_reader *r);
void pgd_wlog_reader_close(struct pgd_wlog_reader *r);

/* cut.c: `pgdisk cut` and `pgdisk log` (the exit status) */
int pgd_cut_main(int argc, char **argv);
int pgd_log_main(int argc, char **argv);

/* The settings: iosched's [device] rows (the model) first, so that their
 * offsets hold, then pgdisk's own (cli.c's table). */
struct pgd_settings {
	struct ios_settings dev;
	int64_t write_cache_kb; /* [device]: unflushed writes a power cut may lose */
	int64_t log_max_mb;	/* [log]: the write log's cap */
	bool realtime;		/* [daemon]: SCHED_FIFO for the session and completion */
	int64_t rt_priority;	/* [daemon]: their priority */
};

/* The server: one per mount. */
struct pgd {
	struct pgd_dev dev;
	struct pgd_settings set;
	const struct conf_table *conf;
	char image[PATH_MAX];	   /* absolute */
	char mountpoint[PATH_MAX]; /* absolute */
	struct stat image_st;	   /* owner and mode shown for the disk file */
	bool foreground;
	char log_path[PATH_MAX]; /* --log (absolute), or "" */
	int log_fd;		 /* opened before daemonizing, or -1 */
	char req_path[PATH_MAX]; /* --requests (absolute), or "" */
	int req_fd;		 /* opened before daemonizing, or -1 */
	bool served;		 /* the session loop ran (a log is kept) */
};

/* fs.c: the FUSE operations */
extern const struct fuse_lowlevel_ops pgd_ops;
/* pgd_stats_text() -- MOUNTPOINT/stats: a malloc()ed text, its length in
 * *@len; NULL if out of memory. */
char *pgd_stats_text(struct pgd *p, size_t *len);

#endif
