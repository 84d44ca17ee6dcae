/*
 * iosched.h -- the I/O request interface between pgiofs and the backing store.
 *
 * Every data read, write and sync that pgiofs sends to a backing file is one
 * `struct ios_req` submitted to an `struct ios_sched`.  The scheduler owns the
 * request from ios_submit() until it calls req->done exactly once with the
 * result (bytes transferred, or -errno).  done may run before ios_submit()
 * returns (the "direct" policy executes the request in the caller's thread)
 * or later on a dispatcher thread (queueing policies): callers must not touch
 * the request or its buffers after submitting it, except from done.
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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

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

struct ios_req;
typedef void (*ios_done_fn)(struct ios_req *req, ssize_t result);

struct ios_req {
	/* set by the submitter */
	int fd;		  /* backing file descriptor */
	uint64_t file_id; /* identity of the file (backing inode number) */
	enum ios_class cls;
	enum ios_dir dir;
	unsigned flags;	   /* IOS_F_* */
	off_t off;	   /* byte offset (READ, WRITE) */
	size_t len;	   /* bytes (READ, WRITE); sum of iov lengths */
	struct iovec *iov; /* buffers (READ, WRITE) */
	int iovcnt;
	pid_t pid;	  /* requesting process, 0 if unknown */
	ios_done_fn done; /* called exactly once with bytes or -errno */
	void *priv;	  /* for the submitter */

	/* set by the scheduler */
	uint64_t arrival_ns; /* CLOCK_MONOTONIC at ios_submit() */
};

struct ios_sched;

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

/* ios_class_name() / ios_dir_name() -- "wal", "heap", ...; "read", ... */
const char *ios_class_name(enum ios_class c);
const char *ios_dir_name(enum ios_dir d);

/* ios_now_ns() -- CLOCK_MONOTONIC in nanoseconds. */
uint64_t ios_now_ns(void);

#endif
