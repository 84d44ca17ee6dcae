/*
 * iosched_i.h -- internals of the I/O scheduler (not a public header).
 *
 * The scheduler state is one struct ios_sched, split into runtime data and
 * tunables.  Everything below "dispatcher only" is touched by one thread at a
 * time: the dispatcher thread (or, in tests, the caller driving a virtual
 * clock); submitters only append to the submission list under sub_lock.
 *
 * A request (struct ios_req) is wrapped in a struct ios_rq when it arrives.
 * Policies order rqs; at dispatch the core merges the chosen rq with queued
 * rqs that are adjacent on the same file, descriptor and direction (one
 * transfer of up to max_request_kb, the buffers of every request in one
 * iovec: no copy), checks the ordering rules, and hands it to the backend.
 */
#ifndef PGIOFS_IOSCHED_I_H
#define PGIOFS_IOSCHED_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "iosched.h"

/* ---- lists ---------------------------------------------------------------- */

struct ios_list {
	struct ios_list *next, *prev;
};

static inline void ios_list_init(struct ios_list *h)
{
	h->next = h->prev = h;
}

static inline bool ios_list_empty(const struct ios_list *h)
{
	return h->next == h;
}

static inline void ios_list_insert_after(struct ios_list *pos, struct ios_list *n)
{
	n->prev = pos;
	n->next = pos->next;
	pos->next->prev = n;
	pos->next = n;
}

static inline void ios_list_add_tail(struct ios_list *h, struct ios_list *n)
{
	ios_list_insert_after(h->prev, n);
}

static inline void ios_list_del(struct ios_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define ios_container_of(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

/* ios_splitmix64() -- the next value of the seeded generator at *@state
 * (splitmix64: every seed gives a full-period, well-mixed sequence). */
static inline uint64_t ios_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- file identities ---------------------------------------------------------- */

static inline bool ios_fid_eq(struct ios_file_id a, struct ios_file_id b)
{
	return a.ino == b.ino && a.dev == b.dev;
}

/* ios_fid_cmp() -- position order of files: by device, then inode. */
static inline int ios_fid_cmp(struct ios_file_id a, struct ios_file_id b)
{
	if (a.dev != b.dev)
		return a.dev < b.dev ? -1 : 1;
	return a.ino < b.ino ? -1 : a.ino > b.ino;
}

/* ios_fid_mix() -- a well-spread 64-bit value of @f (hash tables, the
 * emulated disk's placement of files). */
static inline uint64_t ios_fid_mix(struct ios_file_id f)
{
	return (f.ino ^ f.dev * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
}

/* ---- requests -------------------------------------------------------------- */

enum ios_rq_state { RQ_QUEUED, RQ_PARKED, RQ_READY, RQ_INFLIGHT };

/* req->flags the scheduler sets on requests of its own (readahead.c) */
#define IOS_F_INTERNAL	0x100 /* not a caller's: neither accounted nor traced */
#define IOS_F_READAHEAD 0x200 /* an async readahead window: low priority */

/* rq->ctl: a control node on the submission list (rq->req is NULL) */
enum ios_ctl { CTL_NONE, CTL_INVALIDATE, CTL_RELEASE };

struct ios_file;

/* One request as the scheduler sees it; after a merge, the head rq carries
 * the others (in offset order) on its `merged` list. */
struct ios_rq {
	struct ios_req *req;
	struct ios_file *file;
	enum ios_rq_state state;
	uint64_t seq; /* arrival order, global */
	uint64_t arrival_ns;
	uint64_t deadline_ns; /* set by the policy (0: none) */
	off_t off;	      /* of the whole transfer once merged */
	size_t len;
	int nreq;	  /* requests in this transfer */
	uint64_t barrier; /* IOS_SYNC: writes to the file up to this seq first */
	uint64_t dispatch_ns;
	uint64_t device_done_ns; /* emulated device: completion time */

	struct ios_list pol[2]; /* for the policy: e.g. sorted list and FIFO */
	int pol_queue;		/* for the policy: which queue it is on */
	struct ios_list fnode;	/* file->queued (sorted by offset) or file->parked */
	struct ios_list wnode;	/* file->writes: outstanding writes, arrival order */
	struct ios_list anode;	/* ready list, in-flight list, held completions */
	struct ios_list merged; /* head: rqs merged behind this one */
	struct ios_list mnode;	/* member of a head's merged list */
	struct iovec *iov;	/* built at dispatch */
	int iovcnt;
	struct iovec iov_inline[4];
	ssize_t result;		 /* held completions: the transfer's result */
	size_t xfer_done;	 /* a failed transfer: bytes done before the error
				  * (set by the back end before completing) */
	int fault;		 /* injected -errno: fail without performing;
				  * IOS_FAULT_SKIPPED: succeed without performing */
	int cut_err;		 /* a transfer stopped short of a member picked to
				  * fail (fault.in_transfer): its -errno */
	uint64_t fault_delay_ns; /* injected: complete this much after dispatch */
	enum ios_ctl ctl;	 /* control nodes: what, of which file and range */
	struct ios_file_id ctl_file;
};

/* Per-file state: what the ordering rules need. */
struct ios_file {
	struct ios_file *hnext;
	struct ios_file_id fid;
	int refs;		/* rqs pointing here */
	struct ios_list queued; /* policy-queued rqs, sorted by offset (merging) */
	struct ios_list parked; /* chosen but waiting for an ordering rule */
	struct ios_list writes; /* outstanding writes, arrival order */
	/* readahead state outlives requests: it is readahead.c's (struct ra_file) */
};

/* ---- policies ---------------------------------------------------------------- */

struct ios_policy_ops {
	const char *name;
	/* init() -- allocate s->pol; 0 or -errno. */
	int (*init)(struct ios_sched *s);
	void (*exit)(struct ios_sched *s);
	/* add() -- a new rq (RQ_QUEUED); set rq->deadline_ns if the policy has one. */
	void (*add)(struct ios_sched *s, struct ios_rq *rq);
	/* remove() -- take a queued rq out (merged into another, or parked). */
	void (*remove)(struct ios_sched *s, struct ios_rq *rq);
	/* next() -- the rq to dispatch now, still queued (the core removes it),
	 * or NULL: nothing queued, or the policy waits (see timer()). */
	struct ios_rq *(*next)(struct ios_sched *s, uint64_t now);
	/* completed() -- an rq finished (after its requests were completed). */
	void (*completed)(struct ios_sched *s, struct ios_rq *rq, uint64_t now);
	/* timer() -- the time next() wants to be asked again even if nothing
	 * happens (anticipation, deadlines); UINT64_MAX for none.  Optional. */
	uint64_t (*timer)(struct ios_sched *s, uint64_t now);
};

/* pol_simple.c: position order (file, offset) shared by the elevators */
bool ios_rq_before(const struct ios_rq *a, const struct ios_rq *b);
void ios_sorted_insert(struct ios_list *head, struct ios_rq *rq, int link);
struct ios_rq *ios_sorted_next(struct ios_list *head, struct ios_rq *rq, int link);

extern const struct ios_policy_ops ios_policy_noop, ios_policy_elevator24, ios_policy_elevator24aa,
    ios_policy_deadline, ios_policy_as, ios_policy_dbaware;

/* ---- execution back ends ---------------------------------------------------- */

struct ios_backend_ops {
	const char *name;
	bool virtual_clock; /* time is the replay's clock, not the real one */
	int (*init)(struct ios_sched *s);
	void (*exit)(struct ios_sched *s);
	/* start() -- begin @rq's transfer; completion is reported later
	 * through ios_core_complete().  0 or -errno (then completed by the
	 * caller with that error). */
	int (*start)(struct ios_sched *s, struct ios_rq *rq);
	/* due() -- when the back end's next transfer of its own completes on
	 * the clock (UINT64_MAX: none); step() -- perform and complete those
	 * due.  Optional: a back end that keeps transfers in flight by itself
	 * (the virtual one, reordering). */
	uint64_t (*due)(const struct ios_sched *s);
	void (*step)(struct ios_sched *s);
};

/* ---- the scheduler ---------------------------------------------------------- */

struct ios_sched {
	/* tunables */
	struct ios_settings set;
	const struct ios_policy_ops *pol_ops;
	const struct ios_backend_ops *be_ops;
	ios_virtual_observe_fn observe; /* ios_virtual_observe() */
	void *observe_arg;
	bool sync_mode;		 /* "direct": execute in the submitting thread */
	unsigned inline_classes; /* 1 << class: run at arrival (wal_inline, other_inline) */

	/* submission (any thread) */
	pthread_mutex_t sub_lock;
	struct ios_list submitted;
	int wake_fd; /* eventfd the dispatcher waits on */
	bool stopping;

	/* runtime data: dispatcher only */
	uint64_t (*clock)(struct ios_sched *s); /* real or virtual */
	uint64_t vclock;
	uint64_t next_seq;
	struct ios_file **files;
	size_t nfiles_tab, nfiles;
	struct ios_list ready; /* parked rqs that became eligible */
	struct ios_list inflight;
	struct ios_list held;	 /* emulated device: done, not yet due */
	int nr_inflight;	 /* requests (not transfers) in flight */
	int nr_xfers_inflight;	 /* transfers in flight */
	unsigned nr_wb_inflight; /* of which writeback (ios_wbt_is_writeback()) */
	size_t bytes_inflight;
	size_t wb_bytes_inflight; /* of which writeback */
	size_t bulk_limit;	  /* dbaware's bulk_inflight_kb in bytes (0: none) */
	size_t nr_queued;	  /* requests in the policy */
	struct ios_counters cnt;
	void *pol;			/* policy state */
	void *be;			/* back-end state */
	struct ios_disk *dev;		/* emulated device, or NULL */
	struct ios_stats *stats;	/* optional */
	struct ios_trace_writer *trace; /* optional */
	struct ios_fault *fault;	/* fault injection, or NULL */
	struct ios_ra *ra;		/* readahead, or NULL (ra_window_kb 0, direct) */
	struct ios_wbt *wbt;		/* writeback throttle (dbaware), or NULL */
	bool ra_flush_all;		/* under sub_lock: a control node could not be
					 * allocated, drop all read-ahead data */
	pthread_t thread;
	bool thread_started;
};

extern const struct ios_backend_ops ios_backend_uring, ios_backend_virtual;

/* ios_core_create() -- a scheduler with settings @set on back end @be (the
 * public constructors in create.c choose it).  NULL with errno set. */
struct ios_sched *ios_core_create(const struct ios_settings *set, const struct ios_backend_ops *be);

/* direct.c: synchronous execution.  ios_execute() -- perform @r: its
 * full length (less only for a read at EOF), 0 for a sync, or -errno; a
 * write under @r->serial if it names one. */
ssize_t ios_execute(struct ios_req *r);
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux 6.14; glibc 2.36 does not know it */
#endif
/* ios_req_rw() -- transfer part of @req (@iov, @off, @len) in full:
 * preadv2/pwritev2 until done, a read reaches EOF or an error stops it.
 * Returns the bytes done (@len; fewer only for a read at EOF) or -errno,
 * never a short count for a write; *@done (if not NULL) gets the bytes
 * transferred before an error.  Per call it passes the flags @req asks for
 * (IOS_F_DROPBEHIND); a flag the kernel or the file system refuses is
 * cleared from @req->flags and the transfer made without it. */
ssize_t ios_req_rw(struct ios_req *req, const struct iovec *iov, int iovcnt, off_t off, size_t len,
		   size_t *done);

/* core.c: used by back ends and the dispatcher */
void ios_core_take_submissions(struct ios_sched *s);
void ios_core_dispatch(struct ios_sched *s);
void ios_core_complete(struct ios_sched *s, struct ios_rq *rq, ssize_t res);
uint64_t ios_core_next_event(struct ios_sched *s);
bool ios_core_idle(struct ios_sched *s);
void ios_core_hold(struct ios_sched *s, struct ios_rq *rq);
void ios_core_hold_on(struct ios_list *list, struct ios_rq *rq);
void ios_core_release_held(struct ios_sched *s);

/* fault.c: fault injection ([fault] tunables) */
struct ios_fault;
/* ios_fault_create() -- state for @set's [fault] settings; NULL, errno set. */
struct ios_fault *ios_fault_create(const struct ios_settings *set);
void ios_fault_destroy(struct ios_fault *f);
/* ios_fault_pick() -- decide for one arriving request: 0, the -errno it
 * must fail with (without being performed), or IOS_FAULT_SKIPPED (it
 * succeeds without being performed: ios_fault_result()); *delay_ns, how
 * much later than its execution it completes.  Kills the process at
 * abort_after. */
#define IOS_FAULT_SKIPPED 1
/* ios_fault_result() -- what a request picked with @fault completes with
 * instead of being performed: the error, or for a skipped one success (a
 * write's length, 0 for a sync). */
ssize_t ios_fault_result(int fault, enum ios_dir dir, size_t len);
int ios_fault_pick(struct ios_fault *f, const struct ios_req *req, uint64_t *delay_ns);
/* ios_fault_execute() -- ios_execute() with the fault picked for @req. */
ssize_t ios_fault_execute(struct ios_fault *f, struct ios_req *req);
/* readahead.c: sequential streams, async windows and the readahead cache
 * (dispatcher only, like the rest of the core) */
struct ios_ra;
/* What readahead needs of the core, which gives it these (core.c) rather
 * than readahead.c calling back into core.c: */
struct ios_ra_core {
	/* submit() -- a request of the scheduler's own (a window's read): it
	 * arrives like a submitted one; NULL if out of memory */
	struct ios_rq *(*submit)(struct ios_sched *s, struct ios_req *req);
	/* queue() -- hand an arrived read to the policy after all */
	void (*queue)(struct ios_sched *s, struct ios_rq *rq);
	/* finish() -- complete arrived @rq without a transfer (served) */
	void (*finish)(struct ios_sched *s, struct ios_rq *rq, ssize_t res);
};
struct ios_ra *ios_ra_create(const struct ios_settings *set, const struct ios_ra_core *core);
void ios_ra_destroy(struct ios_sched *s);
/* ios_ra_read() -- a read arrived: true if readahead took it over (served
 * from the cache, or waiting for a window); false: queue it as usual. */
bool ios_ra_read(struct ios_sched *s, struct ios_rq *rq);
/* ios_ra_invalidate() -- a write or change of [off, off+len) arrived. */
void ios_ra_invalidate(struct ios_sched *s, struct ios_file_id fid, off_t off, off_t len);
void ios_ra_release(struct ios_sched *s, struct ios_file_id fid);
void ios_ra_flush(struct ios_sched *s);
void ios_ra_counters(const struct ios_sched *s, struct ios_counters *out);

/* wbt.c: dbaware's writeback throttle (see there) */
struct ios_wbt {
	/* tunables */
	uint64_t target_ns, window_ns;
	unsigned max_depth;
	/* observations: any thread */
	_Atomic uint64_t flushes, slow; /* WAL flushes in this window, over the target */
	/* dispatcher only */
	unsigned depth; /* writeback transfers in flight at most */
	uint64_t window_start, window_end;
	uint64_t held; /* dispatch rounds in this window that held writeback */
	bool held_round;
};
/* ios_wbt_create() -- a throttle for @set, or NULL: off (wal_target_us 0)
 * or out of memory. */
struct ios_wbt *ios_wbt_create(const struct ios_settings *set);
void ios_wbt_destroy(struct ios_wbt *w);
/* ios_wbt_is_flush() -- @req is a WAL flush, which the throttle times. */
bool ios_wbt_is_flush(const struct ios_req *req);
/* ios_wbt_is_writeback() -- @req is writeback, which the throttle holds. */
bool ios_wbt_is_writeback(const struct ios_req *req);
/* ios_wbt_observe() -- @req completed @lat_ns after it arrived (any
 * thread; ignores what is not a WAL flush; @w may be NULL). */
void ios_wbt_observe(struct ios_wbt *w, const struct ios_req *req, uint64_t lat_ns);
/* ios_bulk_fits() -- @rq is not writeback, or bulk_inflight_kb leaves room
 * for it (a transfer larger than the limit fits when no writeback is in
 * flight). */
bool ios_bulk_fits(const struct ios_sched *s, const struct ios_rq *rq);
/* ios_wbt_allows() -- writeback transfer @rq may start now: within the
 * throttle's depth and the bytes bulk_inflight_kb leaves room for. */
bool ios_wbt_allows(struct ios_sched *s, const struct ios_rq *rq);
/* ios_wbt_round() -- a dispatch round begins. */
void ios_wbt_round(struct ios_sched *s);
/* ios_wbt_tick() -- decide if a window ended by @now; when to ask next. */
uint64_t ios_wbt_tick(struct ios_sched *s, uint64_t now);
/* ios_wbt_open() -- no throttle, or at its maximum depth. */
bool ios_wbt_open(const struct ios_sched *s);
/* ios_wbt_publish() -- @counters (NULL: none) and the throttle's gauges
 * (none without a throttle) into the statistics. */
void ios_wbt_publish(struct ios_sched *s, const struct ios_stats_throttle *counters);

/* device.c: the emulated device, a disk model (iosched.h) of 64 GiB on
 * which each file starts at a spread-out place */
struct ios_disk *ios_device_create(const struct ios_settings *set);
void ios_device_destroy(struct ios_disk *dev);
/* ios_device_service() -- when a transfer started at @now completes on the
 * modelled device (one head: transfers are served one after another). */
uint64_t ios_device_service(struct ios_disk *dev, const struct ios_rq *rq, uint64_t now);

#endif
