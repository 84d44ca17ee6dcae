/*
 * pgdisk_i.h -- internals shared by the files of disk/ (not a public header).
 *
 * Three threads: the session thread reads FUSE requests one at a time, in
 * the order the kernel queued them, and passes every request on the image
 * (read, write, flush, discard, write-zeroes) through pgd_dev_submit(),
 * which models it, performs it on the image and queues its reply; the
 * completion thread sends each reply when the model says the disk is done;
 * the signal thread unmounts on SIGTERM/SIGINT.
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
#define PGD_NBUFS      8	    /* reads held at once, each with its data */
#define PGD_SECTOR     512	    /* an image is whole sectors */
#define PGD_BUF_ALIGN  4096	    /* request buffers: aligned for O_DIRECT */
#define PGD_STACK_SIZE (256u << 10) /* the daemon's threads (memory is locked) */

enum pgd_ino { PGD_INO_ROOT = 1, PGD_INO_DISK = 2, PGD_INO_STATS = 3 };

/* What a request on the image does. */
enum pgd_op { PGD_READ, PGD_WRITE, PGD_FLUSH, PGD_DISCARD, PGD_ZERO, PGD_NOPS };

/* One request held until the model completes it. */
struct pgd_slot {
	fuse_req_t req;
	enum pgd_op op;
	uint64_t done_ns; /* when the modelled disk completes it */
	ssize_t result;	  /* bytes, 0, or -errno */
	char *buf;	  /* PGD_READ: the data to reply with */
};

/* Counters (docs/pgdisk.md lists them as MOUNTPOINT/stats prints them). */
struct pgd_counters {
	uint64_t ops[PGD_NOPS];	  /* arrived */
	uint64_t bytes[PGD_NOPS]; /* bytes requested (read, write, discard, zero) */
	uint64_t errors;	  /* failed (counted when performed) */
	uint64_t completed;	  /* replies sent */
	uint64_t held_max;	  /* requests held at once, at most */
	uint64_t in_service_max;  /* requests the model had in service at once */
	/* modelled time, summed over the requests (struct ios_disk_time) */
	uint64_t service_ns, seek_ns, rotation_ns, transfer_ns, latency_ns;
	/* replies sent after the modelled completion: by how much */
	uint64_t late_ns_sum, late_ns_max;
};

/* The device: the image, the model and the held requests. */
struct pgd_dev {
	/* set up before serving, then read-only */
	int fd;	       /* the image, O_DIRECT when it allows it */
	int fd_cached; /* the image without O_DIRECT, for what is not aligned */
	uint64_t size;
	unsigned dio_align; /* offset, length and buffer alignment of fd */
	struct ios_disk *disk;

	/* runtime data, under lock */
	pthread_mutex_t lock;
	pthread_cond_t work;  /* the completion thread: a request was queued */
	pthread_cond_t space; /* the session thread: a slot or buffer came free */
	struct pgd_slot slot[PGD_NSLOTS];
	uint64_t head, tail; /* slot[head..tail) are held, in arrival order */
	uint64_t bufs_taken, bufs_freed;
	bool stopping;
	struct pgd_counters cnt;

	/* preallocated, locked memory */
	char *bufs;   /* PGD_NBUFS read buffers of PGD_MAX_IO */
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
/* pgd_dev_start() -- start the completion thread.  0 or -errno. */
int pgd_dev_start(struct pgd_dev *d);
/* pgd_dev_submit() -- the one place every request on the image passes, in
 * the order the session thread received them: model it, perform it, and
 * queue its reply for when the model completes it.  @data: PGD_WRITE's. */
void pgd_dev_submit(struct pgd_dev *d, fuse_req_t req, enum pgd_op op, uint64_t off, uint64_t len,
		    const void *data);
/* pgd_dev_stop() -- complete every held request now (the session has
 * ended), stop the completion thread, sync the image. */
void pgd_dev_stop(struct pgd_dev *d);
/* pgd_dev_close() -- close the image, free everything.  After stop. */
void pgd_dev_close(struct pgd_dev *d);
/* pgd_dev_counters() -- a copy of the counters and the requests held now. */
void pgd_dev_counters(struct pgd_dev *d, struct pgd_counters *out, uint64_t *held);
/* pgd_op_name() -- "read", "write", "flush", "discard", "zero". */
const char *pgd_op_name(enum pgd_op op);

/* The server: one per mount. */
struct pgd {
	struct pgd_dev dev;
	struct ios_settings set; /* [device] */
	const struct conf_table *conf;
	char image[PATH_MAX];	   /* absolute */
	char mountpoint[PATH_MAX]; /* absolute */
	struct stat image_st;	   /* owner and mode shown for the disk file */
	bool foreground;
};

/* fs.c: the FUSE operations */
extern const struct fuse_lowlevel_ops pgd_ops;
/* pgd_stats_text() -- MOUNTPOINT/stats: a malloc()ed text, its length in
 * *@len; NULL if out of memory. */
char *pgd_stats_text(struct pgd *p, size_t *len);

#endif
