/*
 * iosched.h -- the I/O request interface between pgiofs and the backing store.
 *
 * Every data read, write and sync that pgiofs sends to a backing file is one
 * `struct ios_req` submitted to an `struct ios_sched`.  The scheduler owns the
 * request from ios_submit() until it calls req->done exactly once with the
 * result: a write's full length, a read's bytes (fewer than asked only when
 * the file ends), 0 for a sync, or -errno.  A write the backing store took
 * only part of fails with the store's error (ENOSPC, EFBIG, EIO ...), never
 * with a short count; in a merged transfer that failed part-way, the
 * requests wholly inside the part done succeed and the one cut short and
 * every later one get that error.  done may run before ios_submit()
 * returns (the "direct" policy executes the request in the caller's thread)
 * or later on a dispatcher thread (queueing policies): callers must not touch
 * the request or its buffers after submitting it, except from done.
 *
 * Conventions: functions return >= 0 on success and -errno on failure;
 * constructors return the object, or NULL with errno set (the trace writer
 * and reader also store -errno in *err, if not NULL); destroy and close
 * functions accept NULL.
 *
 * Invariants every policy keeps:
 *   - no request is lost, duplicated or completed twice;
 *   - a sync is issued only after every write to the same file submitted
 *     before it has completed, and its error is passed through unchanged;
 *   - overlapping writes complete in submission order and a read never
 *     returns data older than a write submitted before it.
 */
#ifndef PGIOFS_IOSCHED_H
#define PGIOFS_IOSCHED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "conf.h"

/* What an I/O is for, as far as PostgreSQL's data directory tells. */
enum ios_class {
	IOS_CLASS_WAL,	 /* pg_wal segments */
	IOS_CLASS_XACT,	 /* pg_xact, pg_multixact, pg_subtrans, pg_commit_ts */
	IOS_CLASS_HEAP,	 /* table and TOAST main forks */
	IOS_CLASS_INDEX, /* index main forks */
	IOS_CLASS_FSM,	 /* free space maps */
	IOS_CLASS_VM,	 /* visibility maps */
	IOS_CLASS_TEMP,	 /* pgsql_tmp spill files */
	IOS_CLASS_META,	 /* pg_control, relation maps */
	IOS_CLASS_OTHER, /* everything else */
	IOS_NCLASS
};

enum ios_dir { IOS_READ, IOS_WRITE, IOS_SYNC, IOS_NDIR };

/* req->flags */
#define IOS_F_DATASYNC 0x1 /* IOS_SYNC: fdatasync rather than fsync */
/* virtual schedulers only: execute nothing, succeed with the full length
 * (a trace replay) */
#define IOS_F_NOEXEC 0x2
/* IOS_WRITE: the caller made it synchronous (O_DSYNC on the descriptor):
 * for WAL it is a commit's flush, which the writeback throttle times */
#define IOS_F_DSYNC 0x4
/* IOS_READ or IOS_WRITE on a descriptor without O_DIRECT: do not keep the
 * pages in the page cache (RWF_DONTCACHE, Linux 6.14 and later, on file
 * systems that support it, such as ext4 and xfs).  A write's pages: the
 * file system starts their writeback at once and drops them when it ends;
 * durability is unchanged, errors of that writeback reach the next fsync.
 * A read's pages, read ahead included: dropped once copied out (pages
 * another reader had cached stay).  Where the kernel or the file system
 * refuses it the transfer is made without it, and the flag is cleared from
 * req->flags before done() runs, so the caller can tell and stop asking. */
#define IOS_F_DROPBEHIND 0x8

/* A backing file's identity: its device and inode number, as stat(2) gives
 * them (st_dev, st_ino).  An inode number is unique within one filesystem
 * only, and a backing tree may span several. */
struct ios_file_id {
	uint64_t dev;
	uint64_t ino;
};

struct ios_req;
struct ios_stats_rel;
typedef void (*ios_done_fn)(struct ios_req *req, ssize_t result);

struct ios_req {
	/* set by the submitter */
	int fd;			/* backing file descriptor */
	struct ios_file_id fid; /* the backing file */
	enum ios_class cls;
	enum ios_dir dir;
	unsigned flags;	   /* IOS_F_* */
	off_t off;	   /* byte offset (READ, WRITE) */
	size_t len;	   /* bytes (READ, WRITE); sum of iov lengths */
	struct iovec *iov; /* buffers (READ, WRITE) */
	int iovcnt;
	pid_t pid;		   /* requesting process, 0 if unknown */
	struct ios_stats_rel *rel; /* the relation's counters (ios_stats_rel_get()), or
				    * NULL: not a relation file */
	ios_done_fn done;	   /* called exactly once with the result (above) */
	/* IOS_WRITE through the backing page cache (not O_DIRECT): the
	 * submitter's lock of the file, one per file, or NULL.  A write that
	 * runs at arrival (the direct policy, the inline classes) holds it
	 * for its transfer (iosched.serial_writes), so such writes go to one
	 * file one at a time, as io_uring's workers take the queued ones */
	pthread_mutex_t *serial;
	void *priv; /* for the submitter */

	/* set by the scheduler */
	uint64_t arrival_ns; /* CLOCK_MONOTONIC at ios_submit() */
};

/* ---- tunables ---------------------------------------------------------------
 * One table (ios_conf) drives the INI sections [iosched] and [device], the
 * profiles in config/profiles/, --help and the documentation. */

enum ios_policy {
	IOS_POLICY_DIRECT,	 /* no queue: each request runs in its submitter */
	IOS_POLICY_NOOP,	 /* FIFO with merging */
	IOS_POLICY_ELEVATOR24,	 /* Linux 2.4 elevator_linus */
	IOS_POLICY_ELEVATOR24AA, /* 2.4-aa low-latency elevator */
	IOS_POLICY_DEADLINE,	 /* Linux 2.6 deadline */
	IOS_POLICY_AS,		 /* Linux 2.6 anticipatory */
	IOS_POLICY_DBAWARE,	 /* database-aware (pgiofs) */
	IOS_NPOLICY
};

/* [device] model: the last four are capped cloud volumes, one model
 * (cloud) with the presets of EBS's gp3, gp2 and io2 for what is left 0 */
enum ios_device_model {
	IOS_DEVICE_NONE,
	IOS_DEVICE_HDD,
	IOS_DEVICE_SSD,
	IOS_DEVICE_CLOUD,
	IOS_DEVICE_GP3,
	IOS_DEVICE_GP2,
	IOS_DEVICE_IO2,
	IOS_NDEVICE
};

/* [iosched] data_inline: when the requests of PostgreSQL's data files run at
 * arrival (auto: when they go through the backing page cache, which the
 * caller says in ios_settings.data_buffered) */
enum ios_data_inline { IOS_DATA_INLINE_AUTO, IOS_DATA_INLINE_YES, IOS_DATA_INLINE_NO };

/* [fault] error: what a request picked by fault injection fails with;
 * IOS_FAULT_SKIP: it is not performed and reports success (a write as
 * written, a sync as synced: a broken storage stack, for tests that must
 * catch one); reads are never skipped */
enum ios_fault_error { IOS_FAULT_NONE, IOS_FAULT_EIO, IOS_FAULT_ENOSPC, IOS_FAULT_SKIP };

struct ios_settings {
	/* [iosched] */
	int policy;		 /* enum ios_policy */
	int64_t nr_requests;	 /* requests in flight at most */
	int64_t max_request_kb;	 /* largest merged transfer */
	int64_t max_inflight_kb; /* bytes in flight at most (0: no limit) */
	int64_t read_expire_ms;	 /* deadline, as-2.6 and dbaware reads */
	int64_t write_expire_ms; /* deadline and as-2.6 writes */
	int64_t fifo_batch;	 /* deadline: requests per batch */
	int64_t writes_starved;	 /* deadline: read batches before writes must go */
	bool front_merges;
	int64_t read_passover; /* elevator-2.4: times a read may be passed over */
	int64_t write_passover;
	int64_t antic_expire_us; /* as-2.6: wait for the same process's next read */
	int64_t read_batch_expire_ms;
	int64_t write_batch_expire_ms;
	int64_t wal_expire_ms; /* dbaware: per-class write deadlines */
	int64_t xact_expire_ms;
	int64_t data_write_expire_ms; /* heap, index, fsm, vm, meta, other */
	int64_t temp_expire_ms;
	int64_t wal_target_us;	    /* dbaware: WAL flush latency the throttle aims at (0: off) */
	int64_t throttle_window_ms; /* dbaware: how often the throttle decides */
	int64_t bulk_inflight_kb;   /* dbaware: writeback bytes in flight at most (0: no limit) */
	int64_t ra_window_kb;	    /* largest readahead window (0: no readahead) */
	bool wal_inline;	    /* WAL and commit-status requests run at arrival */
	bool other_inline;	    /* requests of class other run at arrival */
	int data_inline;	    /* enum ios_data_inline: heap, index, ... at arrival */
	bool serial_writes;	    /* buffered writes at arrival: one at a time per file */
	int64_t ra_cache_mb;	    /* read-ahead data held at most */
	/* [device] */
	int device_model;      /* enum ios_device_model */
	double seq_mb_s;       /* hdd/ssd transfer rate */
	double seek_ms;	       /* hdd average seek */
	int64_t rpm;	       /* hdd spindle speed */
	double ssd_latency_us; /* ssd per-request latency */
	double track_kb;       /* hdd: distance within which a seek is a track switch */
	int64_t queue_depth;   /* transfers the emulated device holds at once */
	/* [device] cloud_*: a capped volume (device.c); 0 is the model's value
	 * (ios_disk_resolve() fills them in) */
	int64_t cloud_volume_gib;    /* size for gp2's caps (0: the disk's) */
	double cloud_iops;	     /* IOPS cap (gp2: the burst rate) */
	double cloud_mib_s;	     /* throughput cap, MiB/s */
	double cloud_baseline_iops;  /* credits earned per second (0 with no credits) */
	double cloud_credits;	     /* the credit bucket, full at creation */
	double cloud_latency_us;     /* median base latency */
	double cloud_latency_p99_us; /* its 99th percentile */
	int64_t cloud_depth;	     /* requests in service at once */
	int64_t cloud_op_kib;	     /* the accounting's largest operation */
	double cloud_bucket_ms;	     /* IOPS and throughput buckets' depth */
	int64_t cloud_seed;	     /* of the latency draws */
	/* [fault] (fault.c): off by default; pgiofs needs --allow-faults */
	int fault_class;	   /* 0: any, else enum ios_class + 1 */
	int fault_direction;	   /* 0: any, else enum ios_dir + 1 */
	int fault_error;	   /* enum ios_fault_error */
	int64_t fault_nth;	   /* first matching request picked (0: none) */
	int64_t fault_count;	   /* requests picked from the nth on (0: all) */
	double fault_fraction;	   /* each matching request picked with this chance */
	int64_t fault_seed;	   /* of the generator behind fraction */
	int64_t fault_delay_ms;	   /* picked requests complete this much later */
	int64_t fault_abort_after; /* SIGKILL at this matching request (0: never) */
	bool fault_in_transfer;	   /* picked requests merge; the transfer fails at them */
	/* not a tunable: set by the caller (pgiofs) when data files reach the
	 * backing store through its page cache and the kernel's write-back
	 * cache; data_inline = auto then runs their requests at arrival */
	bool data_buffered;
};

extern const struct conf_table ios_conf;
/* ios_conf's rows, a constant so that a table including them (pgiofs's)
 * has its size at compile time; iosched/conf.c checks it */
#define IOS_CONF_NROWS 55
extern const char *const ios_policy_names[];	  /* NULL-terminated */
extern const char *const ios_data_inline_names[]; /* NULL-terminated */

/* ios_fault_configured() -- whether any [fault] setting differs from its
 * default, i.e. @set injects faults (pgiofs refuses that without
 * --allow-faults). */
bool ios_fault_configured(const struct ios_settings *set);

/* ios_policy_by_name() -- enum ios_policy for @name, or -EINVAL. */
int ios_policy_by_name(const char *name);

/* ---- the disk model ---------------------------------------------------------
 * One model of a disk (device.c), with the [device] settings: the
 * scheduler's emulated device holds completions back by it, and pgdisk (the
 * modelled block device, disk/) holds every request of a loop device back by
 * it.  The caller owns the clock: it says when a request reaches the disk
 * (any nanosecond clock, real or virtual, that does not go back); the model
 * says when the disk starts it and when it completes it.
 *
 *   hdd   One head, no command queueing: requests are served one at a time,
 *         in the order they reach the model, each starting when the one
 *         before it is done.  A read or write moves the head from where the
 *         last transfer ended to its address: nothing when it continues
 *         there; a track switch (1 ms, or seek_ms if that is less) when the
 *         jump is shorter than track_kb; otherwise a track switch plus a
 *         part of the rest of a full stroke that grows with the square root
 *         of the distance, plus half a revolution at rpm (the mean
 *         rotational delay).  The full stroke is calibrated so that seeks
 *         between addresses drawn uniformly across the span average exactly
 *         seek_ms (about 1.8 times it).  Then the transfer at seq_mb_s.  A
 *         command that moves no data (IOS_SYNC: a cache flush, a discard)
 *         costs a track switch and leaves the head where it is.
 *   ssd   A transfer takes len / seq_mb_s on the one channel (transfers
 *         follow one another) plus ssd_latency_us, which overlaps with
 *         other requests' latency and transfers.
 *   none  Takes no time.
 *   cloud A capped network volume (gp3, gp2 and io2 are its presets): a
 *         budget, not a head.  Requests are admitted in the order they
 *         reach the model, each when all of these allow it: fewer than
 *         cloud_depth requests are in service; the IOPS bucket (cloud_iops
 *         per second) holds its operations; the throughput bucket
 *         (cloud_mib_s) holds its bytes; the credit bucket, if there is one
 *         (cloud_credits, earned at cloud_baseline_iops per second, full at
 *         creation), holds its operations.  Buckets hold cloud_bucket_ms
 *         of their rate (the credit bucket: cloud_credits); one bigger than
 *         a whole bucket is admitted when the bucket is full and leaves it
 *         owing.  Operations are counted as EBS counts them: a read or
 *         write of up to cloud_op_kib (256 KiB) is one, a larger one one per
 *         cloud_op_kib begun, and one that starts where the one before it in
 *         the same direction ended joins that one's operation while the
 *         operation stays within cloud_op_kib (counted 0).  Admitted, a
 *         request takes a base latency drawn from a log-normal
 *         distribution with median cloud_latency_us and 99th percentile
 *         cloud_latency_p99_us (seeded by cloud_seed: the same requests get
 *         the same draws), so requests complete out of the order they
 *         arrived in.  Demand above a cap waits (its latency grows with the
 *         queue), it is never refused.  A command that moves no data
 *         (IOS_SYNC) spends no tokens but is admitted in its turn and takes
 *         a latency draw.  ios_disk_resolve() gives the presets.
 *
 * hdd, ssd and none complete requests in the order they reach the model;
 * cloud does not (its latencies differ). */

/* What held a request back between its arrival and its start. */
enum ios_disk_limit {
	IOS_LIMIT_NONE,	      /* started at its arrival */
	IOS_LIMIT_BUSY,	      /* the disk was busy: the hdd's head, the ssd's channel,
			       * cloud_depth requests in service */
	IOS_LIMIT_IOPS,	      /* cloud: the IOPS bucket */
	IOS_LIMIT_THROUGHPUT, /* cloud: the throughput bucket */
	IOS_LIMIT_CREDITS,    /* cloud: the credit bucket (gp2's burst spent) */
	IOS_NLIMIT
};

/* ios_disk_limit_name() -- "none", "busy", "iops", "throughput", "credits". */
const char *ios_disk_limit_name(enum ios_disk_limit l);

/* What one request cost on the model; done_ns - start_ns is its service
 * time, the sum of the parts. */
struct ios_disk_time {
	uint64_t start_ns;    /* the disk begins it (the request before it is done;
			       * cloud: admitted) */
	uint64_t done_ns;     /* the disk has completed it */
	uint64_t seek_ns;     /* hdd: head movement (track switch or seek) */
	uint64_t rotation_ns; /* hdd: rotational delay after a seek */
	uint64_t transfer_ns; /* len at seq_mb_s */
	uint64_t latency_ns;  /* ssd: per-request latency; hdd: a flush or discard;
			       * cloud: the base latency drawn */
	int limit;	      /* enum ios_disk_limit: what held it back longest
			       * (a request behind a held one: that one's) */
	/* cloud: the operations it was counted as (0: joined the one before),
	 * and the buckets' levels once it was admitted (tokens: operations,
	 * bytes, credits; negative: owed) */
	uint32_t ops;
	double iops_tokens, bytes_tokens, credits;
};

/* What a disk did, and its buckets now (ios_disk_state()). */
struct ios_disk_state {
	uint64_t requests;		     /* served */
	uint64_t held[IOS_NLIMIT];	     /* requests by what held them back */
	uint64_t held_ns[IOS_NLIMIT];	     /* time they were held back, summed */
	uint64_t in_service, in_service_max; /* cloud: requests in service now, at most */
	/* cloud */
	uint64_t ops;	 /* operations counted against the IOPS cap */
	uint64_t merged; /* requests that joined the operation before them */
	uint64_t bytes;	 /* bytes read and written */
	double iops_tokens, bytes_tokens, credits; /* levels now */
	/* the credit bucket ran out (a request waited for credits) this many
	 * times, first and last at these times (the caller's clock; 0:
	 * never); it counts as refilled once it holds 1 % of cloud_credits */
	uint64_t credits_outs, credits_first_out_ns, credits_last_out_ns;
	bool credits_empty; /* out now */
};

struct ios_disk;

/* ios_model_is_cloud() -- @model (enum ios_device_model) is a capped
 * volume: cloud, gp3, gp2 or io2. */
static inline bool ios_model_is_cloud(int model)
{
	return model >= IOS_DEVICE_CLOUD && model < IOS_NDEVICE;
}

/* ios_disk_resolve() -- for a capped volume, the cloud_* settings of @set
 * left 0 get the model's values, for a disk of @span_bytes (gp2 with
 * cloud_volume_gib 0 takes its size from the span):
 *
 *   gp3   3,000 IOPS, 125 MiB/s, median 1 ms, p99 3 ms, no credits
 *   gp2   baseline 3 IOPS per GiB (at least 100, at most 16,000); below
 *         3,000 a burst to 3,000 IOPS from 5.4 million credits earned at the
 *         baseline; 128 MiB/s up to 170 GiB, 250 MiB/s above; gp3's latency
 *   io2   256,000 IOPS, 4,000 MiB/s, median 250 us, p99 500 us, depth 128
 *   cloud gp3's values
 *
 * and for all of them depth 64 (io2: 128), 256 KiB operations, buckets of
 * 10 ms, seed 1; a p99 left 0 keeps the preset's ratio to a median that
 * was set; cloud_volume_gib left 0 becomes the span's whole GiB (at least
 * 1; a @span_bytes of 0, no disk yet, leaves it 0).  Other models: nothing
 * changes.  0, or -EINVAL with the setting and the reason in @err (gp2
 * with no size to take its caps from, a p99 below the median, a credit
 * bucket without a baseline or the other way round, a baseline above the
 * cap). */
int ios_disk_resolve(struct ios_settings *set, uint64_t span_bytes, char *err, size_t errlen);

/* ios_disk_create() -- a disk of @span_bytes (> 0) with the [device]
 * settings of @set (model, seq_mb_s, seek_ms, rpm, ssd_latency_us,
 * track_kb; cloud_*, resolved here as ios_disk_resolve() does), idle, its
 * head at address 0, its buckets full.  NULL with errno set (EINVAL for a
 * zero span, an unknown model or cloud settings ios_disk_resolve()
 * refuses, ENOMEM). */
struct ios_disk *ios_disk_create(const struct ios_settings *set, uint64_t span_bytes);

/* ios_disk_destroy() -- free.  Accepts NULL. */
void ios_disk_destroy(struct ios_disk *d);

/* ios_disk_serve() -- a request of @len bytes at byte address @addr in
 * direction @dir (IOS_READ, IOS_WRITE; IOS_SYNC: a command that moves no
 * data) reaches the disk at @now_ns: returns when the disk completes it and,
 * if @t is not NULL, fills @t.  Calls must come in the order requests reach
 * the disk, with @now_ns never going back.  Addresses beyond the span seek
 * no further than a full stroke. */
uint64_t ios_disk_serve(struct ios_disk *d, uint64_t addr, uint64_t len, enum ios_dir dir,
			uint64_t now_ns, struct ios_disk_time *t);

/* ios_disk_state() -- the counters of @d and, for a capped volume, its
 * buckets' levels at @now_ns (not before the last ios_disk_serve()) into
 * @out.  Not thread-safe: the caller serializes it with ios_disk_serve(). */
void ios_disk_state(const struct ios_disk *d, uint64_t now_ns, struct ios_disk_state *out);

/* ios_device_check() -- whether the scheduler's emulated device (a disk of
 * 64 GiB) can be made with @set: 0, or -EINVAL with the setting and the
 * reason in @err (ios_disk_resolve()'s refusals). */
int ios_device_check(const struct ios_settings *set, char *err, size_t errlen);

/* ios_disk_full_stroke_ns() -- the hdd's calibrated full-stroke seek (from
 * one end of the span to the other, without rotation); 0 for other models. */
uint64_t ios_disk_full_stroke_ns(const struct ios_disk *d);

struct ios_sched;

/* ios_create_with() -- a scheduler with these settings.  Queueing policies
 * start a dispatcher thread that owns an io_uring.  Returns NULL with errno
 * set on failure. */
struct ios_sched *ios_create_with(const struct ios_settings *set);

/* ios_create_virtual() -- a scheduler for tests: no thread; time is a
 * virtual clock advanced by ios_virtual_advance(); the back end executes
 * each transfer synchronously when it is dispatched (real preadv/pwritev/
 * fsync on the request's descriptor) and reports its completion when the
 * emulated device says it is done (at once without a device model).  A
 * request with IOS_F_NOEXEC executes nothing and succeeds with its full
 * length (what a trace replay submits). */
struct ios_sched *ios_create_virtual(const struct ios_settings *set);

/* ios_virtual_advance() -- run the scheduler until virtual time @until_ns:
 * every submission taken, every dispatch and completion due done. */
void ios_virtual_advance(struct ios_sched *s, uint64_t until_ns);

/* ios_virtual_reorder() -- tests: from now on the virtual back end performs
 * each transfer only when it completes, up to @max_delay_ns after its
 * dispatch (later with a device model), at a time drawn from @seed:
 * transfers are in flight together and take effect and complete out of
 * order, as on a device with a queue, and the ordering invariants above
 * must hold anyway.  Call before the first ios_submit(). */
void ios_virtual_reorder(struct ios_sched *s, uint64_t seed, uint64_t max_delay_ns);

/* ios_virtual_now() -- the virtual clock. */
uint64_t ios_virtual_now(const struct ios_sched *s);

/* What the virtual back end saw when a transfer started: the transfer, and
 * the writeback (heap, index, temp, ... writes) already at the device,
 * counted from the transfers the back end holds, not from the scheduler's
 * own counters, so that a test can check the scheduler's limits by them. */
struct ios_virtual_start {
	uint64_t now_ns;
	enum ios_class cls; /* the transfer's first request's */
	enum ios_dir dir;
	size_t len;		 /* the transfer's bytes (merged requests together) */
	int nreq;		 /* requests merged into it */
	size_t wb_bytes_ahead;	 /* writeback bytes in flight before it started */
	unsigned wb_xfers_ahead; /* writeback transfers in flight before it started */
	unsigned throttle_depth; /* dbaware's writeback throttle: depth now (0: none) */
};
typedef void (*ios_virtual_observe_fn)(void *arg, const struct ios_virtual_start *v);

/* ios_virtual_observe() -- tests: call @fn at every transfer the virtual
 * back end starts (NULL: stop). */
void ios_virtual_observe(struct ios_sched *s, ios_virtual_observe_fn fn, void *arg);

/* ios_virtual_device_state() -- the emulated device's state now (zeros
 * without a device model). */
void ios_virtual_device_state(const struct ios_sched *s, struct ios_disk_state *out);

/* ios_pending() -- requests submitted and not yet completed. */
int ios_pending(struct ios_sched *s);

/* Counters of what the core did (dispatcher thread's view). */
struct ios_counters {
	uint64_t requests;	      /* completed */
	uint64_t transfers;	      /* dispatched transfers (merged requests count once) */
	uint64_t merged;	      /* requests joined to another's transfer */
	uint64_t parked;	      /* times a request had to wait for an ordering rule */
	uint64_t bytes_inflight;      /* now */
	uint64_t peak_bytes_inflight; /* the most at any time */
	/* readahead (readahead.c) */
	uint64_t ra_windows;	  /* windows issued (sync and async) */
	uint64_t ra_read_bytes;	  /* read ahead (beyond what the reads asked for) */
	uint64_t ra_async;	  /* of which started at an async marker */
	uint64_t ra_hit_bytes;	  /* read ahead, then served from the cache */
	uint64_t ra_wasted_bytes; /* read ahead, dropped unread */
	uint64_t ra_stale;	  /* windows dropped: a write overlapped them in flight */
	uint64_t ra_bytes;	  /* cache plus windows in flight, now */
	uint64_t ra_peak_bytes;	  /* the most at any time (<= ra_cache_mb) */
	uint64_t ra_files;	  /* files with readahead state, now */
};

/* ios_get_counters() -- a copy of the counters (exact once idle). */
void ios_get_counters(struct ios_sched *s, struct ios_counters *out);

/* ios_is_async() -- whether done may run after ios_submit() returns, on
 * another thread (the submitter must then own the buffers it passes). */
bool ios_is_async(const struct ios_sched *s);

/* ios_runs_inline() -- whether a request of class @cls is executed in the
 * submitting thread, done called before ios_submit() returns (direct, and
 * WAL/commit status with wal_inline): its buffers need not outlive it. */
bool ios_runs_inline(const struct ios_sched *s, enum ios_class cls);

/* ios_create() -- a scheduler running policy @name ("direct" executes each
 * request synchronously in the submitting thread).  Returns NULL with errno
 * set (EINVAL for an unknown policy). */
struct ios_sched *ios_create(const char *name);

/* ios_destroy() -- complete nothing new; wait for requests in flight; free.
 * Accepts NULL. */
void ios_destroy(struct ios_sched *s);

/* ios_submit() -- hand @req to the scheduler.  Always returns 0: errors are
 * reported through req->done. */
int ios_submit(struct ios_sched *s, struct ios_req *req);

/* ios_invalidate() -- @len bytes of file @fid from @off (@len 0: to
 * the end) changed other than by an ios_submit()ed write (truncate,
 * fallocate, copy_file_range): drop read-ahead data of that range.  Call it
 * after the change and before replying to the caller; it takes effect in
 * submission order, so a read submitted afterwards never sees older data.
 * No-op without readahead. */
void ios_invalidate(struct ios_sched *s, struct ios_file_id fid, off_t off, off_t len);

/* ios_release() -- the last open handle of @fid was closed: free its
 * readahead state and read-ahead data (counted as wasted if unread).
 * No-op without readahead. */
void ios_release(struct ios_sched *s, struct ios_file_id fid);

/* ios_class_name() / ios_dir_name() -- "wal", "heap", ...; "read", ... */
const char *ios_class_name(enum ios_class c);
const char *ios_dir_name(enum ios_dir d);

/* ios_now_ns() -- CLOCK_MONOTONIC in nanoseconds. */
uint64_t ios_now_ns(void);

/* ---- statistics -------------------------------------------------------------
 * Per-class I/O statistics (stats.c), cheap enough to update on every request
 * from every thread: relaxed atomic additions into per-CPU shards, no lock.
 * Readers take snapshots, plain structs that can be compared, printed as a
 * table or as JSON (schema "pgiofs.stats/1", documented in docs/stats.md). */

#include <stdio.h>

/* Whether a class's read and write counters cover all of its data: not
 * when some of its files were opened in FUSE passthrough. */
enum ios_bytes_seen { IOS_SEEN_ALL, IOS_SEEN_PARTIAL, IOS_SEEN_NONE };

/* Latency histogram: values below 16 ns have a bucket each; above, every
 * power of two is split into 16 sub-buckets, so a bucket is at most 1/16
 * (6.25%) of its lower bound wide.  Covers the whole uint64_t range. */
#define IOS_STATS_SUB_BITS 4
#define IOS_STATS_NBUCKETS ((64 - IOS_STATS_SUB_BITS + 1) << IOS_STATS_SUB_BITS)

#define IOS_STATS_SCHEMA "pgiofs.stats/1"

/* The counters of one class (or of all of them: ios_stats_snapshot.total).
 * Counters only grow between ios_stats_create() and ios_stats_destroy(). */
struct ios_stats_class {
	uint64_t read_ops, read_bytes;	 /* bytes: as completed, not requested */
	uint64_t write_ops, write_bytes; /* ops count failed requests too */
	uint64_t sync_ops;		 /* fsync and fdatasync */
	uint64_t errors;		 /* requests completed with -errno */
	uint64_t merges;		 /* requests merged into another */
	uint64_t ra_hit_bytes;		 /* readahead bytes later read */
	uint64_t ra_wasted_bytes;	 /* readahead bytes never read */
	/* opens of the class's files through the mount, and of those, the ones
	 * in FUSE passthrough, whose reads and writes bypass pgiofs and are in
	 * none of the counters above (their fsyncs are); passthrough_files:
	 * files that went into passthrough (for WAL, a segment taken into use) */
	uint64_t opens, passthrough_opens, passthrough_files;
	/* latency = queue wait + service time, over every accounted request */
	uint64_t lat_count;	 /* requests in the histogram */
	uint64_t queue_sum_ns;	 /* total queue wait */
	uint64_t service_sum_ns; /* total service time */
	uint64_t lat_max_ns;	 /* exact in a cumulative snapshot; in a diff,
				  * exact if set in the interval, else the upper
				  * bound of the highest bucket used */
	uint64_t lat_over_2s;	 /* requests with latency > 2 s */
	uint64_t lat_over_10s;	 /* ... > 10 s */
	/* derived (ios_stats_snapshot() and ios_stats_snapshot_diff() fill them) */
	uint64_t lat_avg_ns, lat_p50_ns, lat_p99_ns, lat_p999_ns;
	double over_2s_pct, over_10s_pct; /* percent of lat_count */
	enum ios_bytes_seen bytes_seen;	  /* from the cumulative open counts */
	uint64_t hist[IOS_STATS_NBUCKETS];
};

/* The writeback throttle of dbaware (docs/iosched.md), as the statistics
 * see it: counters since creation (or in the interval, for a diff), and the
 * running scheduler's settings and depth at its last decision. */
struct ios_stats_throttle {
	uint64_t windows;	 /* decisions taken */
	uint64_t windows_cut;	 /* of which cut the writeback depth */
	uint64_t windows_raised; /* of which raised it */
	uint64_t wal_flushes;	 /* WAL flushes (syncs, O_DSYNC writes) timed */
	uint64_t wal_slow;	 /* of which slower than the target */
	uint64_t throttled_ns;	 /* time the depth was below its maximum */
	uint64_t held;		 /* dispatch rounds in which writeback waited for the depth */
	/* gauges */
	uint64_t target_ns; /* 0: no throttle (another policy, or wal_target_us 0) */
	uint64_t depth, max_depth;
};

/* A snapshot: about 80 KiB, so allocate it rather than put it on the stack
 * of a thread with a small one. */
struct ios_stats_snapshot {
	uint64_t start_ns; /* ios_now_ns() at the start of the interval covered
			    * (creation, or the earlier snapshot of a diff) */
	uint64_t time_ns;  /* ios_now_ns() when taken */
	int cumulative;	   /* 1: since creation; 0: an interval (a diff) */
	struct ios_stats_class cls[IOS_NCLASS];
	struct ios_stats_class total; /* sum of the classes */
	struct ios_stats_throttle throttle;
};

struct ios_stats;

/* ios_stats_create() -- zeroed statistics.  NULL with errno set on failure. */
struct ios_stats *ios_stats_create(void);

/* ios_stats_destroy() -- free.  Accepts NULL.  No thread may still be
 * accounting into @s. */
void ios_stats_destroy(struct ios_stats *s);

/* ios_stats_account() -- count one completed request: an op (and, if
 * @result > 0, that many bytes) of req->cls and req->dir, an error if
 * @result < 0, and a latency of @queue_ns + @service_ns; the op and bytes
 * also into req->rel if set (which must belong to @s).  Only req->cls,
 * req->dir and req->rel are read.  Thread-safe and lock-free; @s may be
 * NULL. */
void ios_stats_account(struct ios_stats *s, const struct ios_req *req, ssize_t result,
		       uint64_t queue_ns, uint64_t service_ns);

/* ios_stats_note_merge() -- @n requests of class @cls were merged into
 * others (they are still accounted one by one when they complete). */
void ios_stats_note_merge(struct ios_stats *s, enum ios_class cls, uint64_t n);

/* ios_stats_note_readahead() -- readahead of class @cls: @hit_bytes read
 * ahead and then used, @wasted_bytes read ahead and dropped unused. */
void ios_stats_note_readahead(struct ios_stats *s, enum ios_class cls, uint64_t hit_bytes,
			      uint64_t wasted_bytes);

/* ios_stats_note_open() -- a file of class @cls was opened, in FUSE
 * passthrough if @passthrough, which took a file into passthrough if
 * @new_file. */
void ios_stats_note_open(struct ios_stats *s, enum ios_class cls, int passthrough, int new_file);

/* ios_stats_note_throttle() -- one decision of the writeback throttle: its
 * counters (windows, windows_cut, windows_raised, wal_flushes, wal_slow,
 * throttled_ns, held) are added, its gauges replace the last ones. */
void ios_stats_note_throttle(struct ios_stats *s, const struct ios_stats_throttle *t);

/* ios_stats_snapshot() -- copy the counters into @out and derive average,
 * percentiles and shares.  Each counter is exact; a snapshot taken while
 * requests complete may show one in some counters and not yet in others.
 * Returns 0 or -EINVAL. */
int ios_stats_snapshot(const struct ios_stats *s, struct ios_stats_snapshot *out);

/* ios_stats_snapshot_diff() -- what happened between snapshots @a and the
 * later @b (the same statistics), as an interval snapshot.  @out may be @b.
 * Returns 0 or -EINVAL (NULL, or @b older than @a). */
int ios_stats_snapshot_diff(const struct ios_stats_snapshot *a, const struct ios_stats_snapshot *b,
			    struct ios_stats_snapshot *out);

/* ios_stats_hist_add() -- count one latency of @ns into @c's histogram,
 * lat_count and lat_max_ns (a class of the caller's own: pgdisk's lateness;
 * not thread-safe, no atomics), for ios_stats_percentile(). */
void ios_stats_hist_add(struct ios_stats_class *c, uint64_t ns);

/* ios_stats_percentile() -- the latency at quantile @q (0..1] of @c, in ns:
 * the middle of the histogram bucket holding it, at most lat_max_ns; 0 when
 * nothing was counted. */
uint64_t ios_stats_percentile(const struct ios_stats_class *c, double q);

/* ios_stats_to_json() -- @snap as one JSON object (schema IOS_STATS_SCHEMA,
 * see docs/stats.md), without a newline.  @extra_json_fields, if not NULL or
 * empty, is inserted verbatim after "schema" and must be valid members,
 * e.g. "\"mount\": \"/srv/pg\", \"pid\": 42".  Returns the length written
 * (excluding the NUL) or -ENOSPC if @len is too small (the output is then
 * truncated but NUL-terminated when @len > 0). */
int ios_stats_to_json(const struct ios_stats_snapshot *snap, const char *extra_json_fields,
		      char *buf, size_t len);

/* ios_stats_write_json() -- the same, followed by a newline, to @f.
 * Returns 0 or -errno. */
int ios_stats_write_json(FILE *f, const struct ios_stats_snapshot *snap,
			 const char *extra_json_fields);

/* ios_stats_write_openmetrics() -- cumulative snapshot @snap in the
 * OpenMetrics text format (for node_exporter's textfile collector or a
 * scrape), ending with "# EOF": request, byte, error and merge counters
 * and a latency summary (p50, p99, p99.9, count, sum) per class, and the
 * throttle's decisions.  @labels ("" or NULL: none), e.g.
 * "mount=\"/srv/pg\"", already escaped, go first on every sample.  Returns
 * 0, -EINVAL (not cumulative) or -errno of the stream. */
int ios_stats_write_openmetrics(FILE *f, const struct ios_stats_snapshot *snap, const char *labels);

/* ios_stats_print_table() -- a table with one row per class that saw any
 * activity and a total row: ops and MB per direction, errors, merges and
 * latency (avg, p50, p99, p99.9, max in ms; % over 2 s and 10 s); then, if
 * anything was read ahead, a line of readahead MB hit and wasted per class. */
void ios_stats_print_table(FILE *f, const struct ios_stats_snapshot *snap);

/* ios_attach_stats() -- from now on @s accounts every request it completes
 * into @st (NULL: stop accounting): an op with queue time (arrival to
 * dispatch) and service time (dispatch to completion; with "direct", the
 * time ios_execute() took and no queue time), before req->done runs, and
 * every merge.  Call before the first ios_submit() (not concurrently with
 * it); several schedulers may share @st, which must outlive them. */
void ios_attach_stats(struct ios_sched *s, struct ios_stats *st);

/* ---- per-relation statistics -------------------------------------------------
 * Bytes and ops per PostgreSQL relation, keyed by (tablespace oid, database
 * oid, relfilenode) as the file's path names them; the segments and forks
 * of a relation share one entry, with bytes split by fork.  The submitter
 * resolves a file's entry once (ios_stats_rel_get(), when the file is looked
 * up) and sets req->rel on each request: accounting it is two more relaxed
 * atomic additions.  The table is bounded (IOS_STATS_MAX_RELATIONS entries
 * for the life of the statistics); once it is full, new relations share one
 * overflow entry (key 0/0/0) and each such lookup is counted as untracked. */

#define IOS_STATS_MAX_RELATIONS 8192

/* A relation's forks, as the class of their requests tells them: main
 * (heap, index and the _init fork), fsm, vm. */
enum ios_rel_fork { IOS_FORK_MAIN, IOS_FORK_FSM, IOS_FORK_VM, IOS_NFORK };

/* ios_stats_rel_get() -- the counters of relation (@spc, @db, @relnode),
 * added if new (the overflow entry when the table is full).  Takes a mutex:
 * call it when a file is looked up, not per request.  NULL if @s is NULL or
 * @relnode is 0. */
struct ios_stats_rel *ios_stats_rel_get(struct ios_stats *s, uint32_t spc, uint32_t db,
					uint32_t relnode);

#define IOS_REL_NAME_MAX 132 /* "schema.relation": two NAMEDATALEN-1 names */

/* One relation in a snapshot. */
struct ios_rel_info {
	uint32_t spc, db, relnode; /* 0/0/0: the overflow entry */
	uint8_t main_cls;	   /* IOS_CLASS_HEAP or _INDEX as the main fork's
				    * requests last said; IOS_CLASS_OTHER if none */
	char relkind;		   /* pg_class.relkind when resolved, else 0 */
	uint64_t read_ops, write_ops, sync_ops;
	uint64_t read_bytes[IOS_NFORK], write_bytes[IOS_NFORK];
	char name[IOS_REL_NAME_MAX]; /* "schema.relation" when resolved, else "" */
};

/* A set of relations: what ios_stats_rel_snapshot() took, perhaps diffed,
 * sorted and cut to the top N. */
struct ios_rel_list {
	struct ios_rel_info *rel;
	size_t count;	    /* entries in rel */
	size_t active;	    /* relations with any activity before a cut */
	uint64_t untracked; /* lookups given the overflow entry (table full) */
};

/* ios_stats_rel_snapshot() -- the relations of @s that saw any request, into
 * a new array (out->rel, to free()); out->untracked as counted.  Returns 0,
 * -EINVAL or -ENOMEM. */
int ios_stats_rel_snapshot(const struct ios_stats *s, struct ios_rel_list *out);

/* ios_rel_bytes() -- bytes read and written, all forks. */
uint64_t ios_rel_bytes(const struct ios_rel_info *r);

/* ios_rel_diff() -- @b minus @a, per relation (matched by key; a relation
 * only in @b counts whole), keeping those with activity.  @b->rel is
 * rewritten in place; @a is sorted by key.  out->untracked is @b's. */
void ios_rel_diff(struct ios_rel_list *a, struct ios_rel_list *b);

/* ios_rel_top() -- sort @l by bytes (read + written, descending; ties by
 * key) and keep the first @n (0: all).  l->active keeps the count before. */
void ios_rel_top(struct ios_rel_list *l, size_t n);

/* ios_stats_print_relations() -- a table, one row per relation of @l in its
 * order: name (if any), key, main-fork class or relkind, ops and MB per
 * direction, and MB per fork. */
void ios_stats_print_relations(FILE *f, const struct ios_rel_list *l);

/* ios_stats_write_json_rels() -- ios_stats_write_json() with a "relations"
 * array (docs/stats.md) after "total" when @rels is not NULL. */
int ios_stats_write_json_rels(FILE *f, const struct ios_stats_snapshot *snap,
			      const char *extra_json_fields, const struct ios_rel_list *rels);

struct ios_trace_writer;

/* ios_attach_trace() -- from now on @s appends one record to @w (NULL:
 * stop) for every request it completes, where the statistics are accounted
 * (time = arrival, queue and service time, result).  Call before the first
 * ios_submit(); several schedulers may share @w, which must outlive them. */
void ios_attach_trace(struct ios_sched *s, struct ios_trace_writer *w);

/* ---- traces -----------------------------------------------------------------
 * I/O traces (trace.c): one fixed-size record per request, streamed into a
 * file in the lz4 frame format (`lz4 -d` decompresses it) by a background
 * thread with a bounded buffer.  The decompressed stream is a 32-byte file
 * header followed by 56-byte records, all little-endian:
 *
 *   header  0 magic "PGIOTRC1"      8 u16 version (2)   10 u16 header size (32)
 *          12 u16 record size (56) 14 u16 reserved (0)  16 u64 CLOCK_REALTIME ns
 *          24 u64 CLOCK_MONOTONIC ns, both taken when the writer was created
 *   record  0 u64 time_ns    8 u64 ino  16 u64 off   24 u32 len  28 u32 pid
 *          32 u32 queue_us  36 u32 service_us  40 i32 result  44 u8 cls
 *          45 u8 dir  46 u16 flags  48 u64 dev
 *
 * Version 1 (records of 48 bytes) had no dev: the reader gives 0.  A reader
 * accepts a larger header or record size (a later version may append fields)
 * and refuses a smaller one, and a version it does not know. */

#define IOS_TRACE_MAGIC		 "PGIOTRC1"
#define IOS_TRACE_VERSION	 2
#define IOS_TRACE_HEADER_SIZE	 32
#define IOS_TRACE_REC_SIZE	 56
#define IOS_TRACE_REC_SIZE_V1	 48
#define IOS_TRACE_DEFAULT_BUFFER (1u << 20) /* bytes of records held in memory */

/* ios_trace_rec.flags */
#define IOS_TRACE_F_DATASYNC 0x1 /* an IOS_SYNC that was an fdatasync */

struct ios_trace_rec {
	uint64_t time_ns;    /* CLOCK_MONOTONIC at submission (ios_now_ns()) */
	uint64_t dev;	     /* the backing file: device (st_dev) ... */
	uint64_t ino;	     /* ... and inode number */
	uint64_t off;	     /* byte offset */
	uint32_t len;	     /* bytes requested */
	uint32_t pid;	     /* requesting process, 0 if unknown */
	uint32_t queue_us;   /* time queued in the scheduler */
	uint32_t service_us; /* time the backing store took */
	int32_t result;	     /* bytes transferred or -errno */
	uint8_t cls;	     /* enum ios_class */
	uint8_t dir;	     /* enum ios_dir */
	uint16_t flags;	     /* IOS_TRACE_F_* */
};

struct ios_trace_opts {
	size_t buffer_bytes; /* records held in memory at most, rounded to 64 KiB
			      * chunks, at least 2 (0: IOS_TRACE_DEFAULT_BUFFER) */
	int wait_when_full;  /* 1: ios_trace_write() waits for room instead of
			      * dropping (offline tools, tests) */
	int fd;		     /* with a NULL path: write the trace to this open
			      * descriptor, which the writer takes over */
};

struct ios_trace_stats {
	uint64_t records;   /* accepted by ios_trace_write() */
	uint64_t dropped;   /* refused: buffer full, or the output had failed */
	uint64_t bytes_in;  /* uncompressed bytes handed to lz4 so far */
	uint64_t bytes_out; /* compressed bytes written so far */
	int error;	    /* first output error (-errno), 0 if none */
};

struct ios_trace_writer;
struct ios_trace_reader;

/* ios_trace_writer_create() -- start a trace in a new file @path (created
 * O_CREAT|O_EXCL, mode 0600: an existing file is never overwritten, -EEXIST)
 * with the default options.  Writes the lz4 frame header at once, so an
 * unwritable file fails here.  NULL with *err = -errno on failure. */
struct ios_trace_writer *ios_trace_writer_create(const char *path, int *err);

/* ios_trace_writer_create_opts() -- the same with options (NULL: defaults);
 * a NULL @path writes to opts->fd (a pipe, a socket or an open file). */
struct ios_trace_writer *ios_trace_writer_create_opts(const char *path,
						      const struct ios_trace_opts *opts, int *err);

/* ios_trace_write() -- append one record.  Thread-safe; copies 56 bytes
 * under a mutex and never does I/O.  Returns 0, or -ENOBUFS when the record
 * was dropped (counted) because the background thread is a whole buffer
 * behind or the output failed. */
int ios_trace_write(struct ios_trace_writer *w, const struct ios_trace_rec *rec);

/* ios_trace_writer_stats() -- the counters so far. */
void ios_trace_writer_stats(struct ios_trace_writer *w, struct ios_trace_stats *st);

/* ios_trace_writer_close() -- compress what is buffered, end the frame,
 * fsync (regular files) and close; fill @st (may be NULL) with the final
 * counters, dropped records included; free.  No ios_trace_write() may run
 * concurrently or after.  Returns 0 or the first output error (-errno).
 * Accepts NULL. */
int ios_trace_writer_close(struct ios_trace_writer *w, struct ios_trace_stats *st);

struct ios_trace_info {
	uint32_t version;
	uint32_t header_size, rec_size;
	uint64_t start_realtime_ns;  /* CLOCK_REALTIME when the trace began */
	uint64_t start_monotonic_ns; /* CLOCK_MONOTONIC at the same moment */
};

/* ios_trace_reader_open() -- open trace @path.  Only the open itself can
 * fail here (NULL, *err = -errno); a file that is not a valid trace opens
 * and its first ios_trace_read() reports why. */
struct ios_trace_reader *ios_trace_reader_open(const char *path, int *err);

/* ios_trace_read() -- the next record into @out: 1; 0 at the clean end of
 * the trace; -EBADMSG when the file is truncated, corrupt or not a trace
 * (after every record before the damage was returned), -EIO etc. on read
 * errors.  Errors are sticky; ios_trace_reader_error() explains them. */
int ios_trace_read(struct ios_trace_reader *r, struct ios_trace_rec *out);

/* ios_trace_reader_info() -- the file header (read if not yet).  0 or the
 * error ios_trace_read() would return. */
int ios_trace_reader_info(struct ios_trace_reader *r, struct ios_trace_info *info);

/* ios_trace_reader_error() -- after an error, a message naming the file,
 * the byte offset in it and the reason; "" otherwise. */
const char *ios_trace_reader_error(const struct ios_trace_reader *r);

/* ios_trace_reader_close() -- close and free.  Accepts NULL. */
void ios_trace_reader_close(struct ios_trace_reader *r);

/* ios_trace_replay() -- replay the records of @r (read to the end or the
 * damage, held in memory, 56 bytes each) through a virtual-clock scheduler
 * with settings @set, accounting into @st: each record is submitted at its
 * recorded arrival time (relative to the first), in arrival order, with
 * IOS_F_NOEXEC (the emulated device alone times it), then the scheduler runs
 * until all have completed.  Deterministic: no real clock, no thread.
 * Returns the number of records replayed (or -ENOMEM, or -errno from
 * ios_create_virtual()); *@err is 0 at a clean end of the trace, else the
 * reader's error (ios_trace_reader_error() says why); *@span_ns the virtual
 * time from the first arrival to the last completion. */
int64_t ios_trace_replay(struct ios_trace_reader *r, const struct ios_settings *set,
			 struct ios_stats *st, uint64_t *span_ns, int *err);

#endif
