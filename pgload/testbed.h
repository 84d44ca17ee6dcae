/*
 * testbed.h -- the test bed of `pgload compare`: a work directory that
 * holds everything a comparison makes and the clean-up that removes it
 * all, even after a run that was killed (testbed.c); the back ends its
 * clusters run on (backends.c); and the kernel's block queues under the
 * back ends that are block devices (blkqueue.c): elevators, tunables,
 * streaming figures.
 *
 * Layout: everything lives under one work directory
 * $TMPDIR/pgload-compare.XXXXXX (WD): the state file "state" ("pid N" of
 * the owner, then one "dir PATH" line per directory made elsewhere,
 * written before the directory is made), and the directories the caller
 * makes in it (pgl_testbed_mkdir()), in which back ends put their images,
 * mount points and, for a modelled disk, pgdisk's mount.
 *
 * What must stay true: after pgl_testbed_destroy() no mount, loop device,
 * image, process or directory made in the test bed remains.  The clean-up
 * does not trust memory alone: it kills processes whose command line names
 * WD or a recorded directory (but the daemons serving mounts, pgiofs and
 * pgdisk, which go with their mounts), unmounts every mount under WD
 * (deepest first, pgdisk's last: a loop device sits on it), detaches loop
 * devices whose backing file is under WD, unmounts pgdisk's mounts, kills
 * what is left and removes the directories.  pgl_testbed_create() does the
 * same for the work directories of earlier runs whose owner is dead
 * (killed with SIGKILL, power loss).
 *
 * A back end is one row of a table in backends.c: its names, what to check
 * before anything is made (root, programs), how to set it up and, if more
 * than the generic tear-down (unmount, detach, remove) is needed, what to
 * do after it.  Errors follow pgload_i.h: -errno after saying why.
 */
#ifndef PGLOAD_TESTBED_H
#define PGLOAD_TESTBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many directories outside WD are recorded (and cleaned). */
#define PGL_TESTBED_MAX_DIRS 128

struct pgl_testbed;
struct pgl_backend_ops;

/*
 * pgl_testbed_create() -- clean up after earlier runs whose owner is gone
 * (saying so), then make a fresh work directory and its state file.
 * Returns 0 and sets *out, or -errno.
 */
int pgl_testbed_create(struct pgl_testbed **out);

/* pgl_testbed_dir() -- the work directory. */
const char *pgl_testbed_dir(const struct pgl_testbed *tb);

/*
 * pgl_testbed_mkdir() -- make WD/NAME (mode 0711: the server user may pass
 * through it) and put its path into PATH.  Returns 0 or -errno.
 */
int pgl_testbed_mkdir(struct pgl_testbed *tb, const char *name, char *path, size_t cap);

/*
 * pgl_testbed_destroy() -- remove everything made in the test bed: its
 * processes, mounts, loop devices and directories.  Returns how many
 * things were still there (0: the back ends were all torn down already).
 * Accepts NULL.
 */
int pgl_testbed_destroy(struct pgl_testbed *tb);

/* A back end as named on the command line. */
struct pgl_backend_spec {
	const struct pgl_backend_ops *ops;
	char name[64];	     /* ext2, ..., tmpfs, dir, hdd:ext4, ssd:xfs, hdd:IMAGE'S NAME,
				dev:sdb1:xfs */
	char fs[8];	     /* the file system: ext2, ext3, ext4, xfs, tmpfs ("" for dir:) */
	const char *model;   /* hdd, ssd, gp3, gp2, io2, cloud: the image is a disk modelled
				by pgdisk; else NULL */
	char disk_model[24]; /* pgdisk's --model: the model, gp2's with its size ("gp2:100G") */
	bool capped;	     /* a capped cloud volume (gp3, gp2, io2, cloud) */
	const char *path;    /* dir:PATH, MODEL:IMAGE (an image of a file system), else NULL */
	char device[128];    /* dev:DEVICE:FS: the user's block device; else "" */
	const char *arg;     /* dev:DEVICE:FS: the argument, as given */
};

/*
 * pgl_backend_parse() -- ARG ("ext4", "tmpfs", "dir:/srv/x", "hdd:ext4",
 * "hdd:/srv/fs.img", "gp3:xfs", "gp2:100G:ext4", "dev:/dev/sdb1:xfs", ...)
 * into *OUT.  Returns 0, or
 * -EINVAL / -ENOTDIR after saying why.
 */
int pgl_backend_parse(const char *arg, struct pgl_backend_spec *out);

/*
 * pgl_backend_check_image() -- a MODEL:IMAGE back end: PGDISK would serve
 * the image (`pgdisk --check`: there, a regular file of whole sectors whose
 * first and last sectors read) and it holds an ext2, ext3, ext4 or xfs file
 * system (blkid), which goes into SPEC->fs.  Returns 0, or -errno after
 * saying why.
 */
int pgl_backend_check_image(struct pgl_backend_spec *spec, const char *pgdisk);

/*
 * pgl_backend_check() -- what the back end needs (root, mkfs, losetup),
 * before anything is made; for dev:DEVICE:FS, that DESTROY (the devices
 * --destroy-device names, NULL-terminated) names DEVICE and that nothing
 * uses it (pgl_blkdev_check()).  Returns 0 or -errno after saying why.
 */
int pgl_backend_check(const struct pgl_backend_spec *spec, const char *const *destroy);

/* pgl_backend_blockdev() -- the back end is a file system on a block device
 * (a loop device, or the user's): its queue can be set up. */
bool pgl_backend_blockdev(const struct pgl_backend_spec *spec);

/* How a block device's queue is set up (see "block queues" below). */
struct pgl_queue_conf {
	const char *elevator;	 /* none, mq-deadline, bfq, kyber; NULL: the kernel's default */
	int rotational;		 /* 0 or 1 written to queue/rotational; -1: left alone */
	const char *const *sets; /* "NAME=VALUE" tunables (the table below), NULL-terminated */
};

/* At most this many pgdisk settings (--disk-set) per back end. */
#define PGL_MAX_DISK_SETS 8

/* What a back end is set up with. */
struct pgl_backend_opts {
	uint64_t size;		     /* image or tmpfs size, bytes */
	struct pgl_queue_conf queue; /* block devices: the loop device's queue */
	const char *pgdisk;	     /* model back ends: the pgdisk binary */
	const char *const
	    *disk_sets; /* model back ends: pgdisk --set NAME=VALUE, NULL-terminated */
};

/* A back end set up in the test bed. */
struct pgl_backend;

/*
 * pgl_backend_up() -- set up back end SPEC as O says in directory DIR of
 * the test bed; pgl_backend_root() is then a fresh directory on it that
 * the server user may use.  A model back end is an image served by
 * pgdisk (in the background, until pgl_backend_down()), a loop device
 * with direct I/O on pgdisk's disk file, its queue set up, mkfs and a
 * mount.  A dev:DEVICE:FS back end is DEVICE's queue set up (what it was
 * is given back by pgl_backend_down()), mkfs on DEVICE and a mount: one
 * back end on a device at a time.  Each step starts with pgl_step().  On
 * failure what was made is torn down.  Returns 0 and sets *out, or -errno.
 */
int pgl_backend_up(struct pgl_testbed *tb, const struct pgl_backend_spec *spec, const char *dir,
		   const struct pgl_backend_opts *o, struct pgl_backend **out);

/* pgl_backend_root() -- the back end's directory. */
const char *pgl_backend_root(const struct pgl_backend *be);

/* pgl_backend_device() -- the block device of the file system ("/dev/loop3",
 * "/dev/sdb1"), or NULL. */
const char *pgl_backend_device(const struct pgl_backend *be);

/*
 * pgl_backend_disk_stats() -- the counters of a model back end's pgdisk
 * (its MOUNTPOINT/stats: "NAME VALUE" lines, docs/pgdisk.md) into BUF.
 * Returns the length, or -ENOENT for a back end without a model.
 */
int pgl_backend_disk_stats(const struct pgl_backend *be, char *buf, size_t cap);

/*
 * pgl_backend_down() -- unmount, detach, stop pgdisk, give a device's queue
 * back as it was, remove what pgl_backend_up() made; accepts NULL.
 */
int pgl_backend_down(struct pgl_backend *be);

/* ---- the user's block devices (blkdev.c) --------------------------------- */

/*
 * pgl_blkdev_check() -- whether back end WHAT may make a file system on the
 * user's block device DEV: DESTROY (NULL-terminated) names the same device
 * (by device number), and neither DEV nor, for a whole disk, a partition of
 * it carries the root file system (itself or under a device built on it),
 * is mounted, in use as swap (/proc/swaps) or by a holder (LVM, md,
 * dm-crypt: holders/ in sysfs), and DEV is not a whole disk with a
 * partition table, nor held open exclusively by another program.  Returns
 * 0, or -errno after saying why.
 */
int pgl_blkdev_check(const char *what, const char *dev, const char *const *destroy);

/* pgl_blkdev_same() -- A and B are the same block device: 1, 0, or -errno. */
int pgl_blkdev_same(const char *a, const char *b);

/* ---- block queues (blkqueue.c) ------------------------------------------ */

/* The elevators pgload knows, NULL-terminated: none, mq-deadline, bfq, kyber. */
extern const char *const pgl_elevator_names[];

/* A tunable of a block queue: the queue's own (elevator NULL, queue/NAME) or
 * an elevator's (queue/iosched/NAME while that elevator runs). */
struct pgl_queue_tunable {
	const char *name;
	const char *elevator;
	long long min, max;
	const char *help;
};

/* Every tunable pgload knows, ending with a NULL name. */
extern const struct pgl_queue_tunable pgl_queue_tunables[];

/* pgl_elevator_known() -- NAME is one of pgl_elevator_names. */
bool pgl_elevator_known(const char *name);

/* pgl_queue_tunable_find() -- the tunable NAME, or NULL. */
const struct pgl_queue_tunable *pgl_queue_tunable_find(const char *name);

/* pgl_queue_value_check() -- VALUE is an integer in T's range: 0 or -ERANGE. */
int pgl_queue_value_check(const struct pgl_queue_tunable *t, const char *value);

/*
 * pgl_elevators_available() -- the elevators this kernel has, as its block
 * queues list them ("none mq-deadline kyber bfq"), into BUF.  Returns 0 or
 * -ENOENT (no block queue to ask).
 */
int pgl_elevators_available(char *buf, size_t cap);

/* pgl_elevator_in() -- NAME is a word of the space-separated LIST. */
bool pgl_elevator_in(const char *list, const char *name);

/*
 * pgl_loop_queue_fresh() -- on loop device DEV just attached, the largest
 * request (max_sectors_kb) back to the kernel's default: a loop device's
 * queue keeps a limit set on it across detaching and attaching, so a
 * device used before would otherwise carry an earlier user's into the
 * measurement.  Writing 0 asks for the default (Linux 6.x; an older kernel
 * refuses it, and the value stays as found, which the report reads back).
 * Returns 0 or -errno, and says nothing.
 */
int pgl_loop_queue_fresh(const char *dev);

/*
 * pgl_queue_apply() -- set up the queue of block device DEV ("/dev/loop3")
 * as Q says: rotational, the elevator, then the tunables.  Returns 0 or
 * -errno after naming the file and the value the kernel refused.
 */
int pgl_queue_apply(const char *dev, const struct pgl_queue_conf *q);

/* A queue as read back from sysfs: the elevator and the tunables in force. */
#define PGL_QUEUE_MAX_ATTRS 24
struct pgl_queue_state {
	char device[64];
	char elevator[32];
	int direct_io; /* a loop device's loop/dio: 1 on, 0 off; -1: not a loop device */
	int n;
	struct {
		char name[32];
		char value[32];
	} attr[PGL_QUEUE_MAX_ATTRS];
};

/* pgl_queue_read() -- the queue of DEV (a partition's is its disk's): its
 * elevator, queue attributes and the elevator's tunables.  Returns 0 or
 * -errno. */
int pgl_queue_read(const char *dev, struct pgl_queue_state *st);

/*
 * pgl_queue_restore() -- the queue of DEV as BEFORE (pgl_queue_read()) had
 * it: the elevator, then every attribute and tunable read then that reads
 * otherwise now.  Returns 0, or the first error after naming the file and
 * the value (it goes on with the others).
 */
int pgl_queue_restore(const char *dev, const struct pgl_queue_state *before);

/* pgl_loop_direct_io() -- whether loop device DEV reads and writes its
 * backing file with direct I/O (sysfs loop/dio): 1 or 0, or -errno (not a
 * loop device). */
int pgl_loop_direct_io(const char *dev);

/* The raw streaming figures of a back end, MB/s of 10^6 bytes. */
struct pgl_stream {
	double dev_mb_s;     /* the device's own reads where the file lies; -1: no device */
	double write_mb_s;   /* the file written and fsynced */
	double read_mb_s;    /* the file read back, cold */
	double resident_pct; /* of the file, in the page cache as its read began */
};

/*
 * pgl_stream() -- the raw streaming figures of a back end, as `dd` and
 * `hdparm -t` give them: write a file of BYTES in DIR and fsync it; if DIR
 * is on block device DEV (else NULL), read where the file lies on DEV (the
 * device's own reads, buffered, the queue's readahead applying); read the
 * file back; remove it.  Before each read every cached copy is dropped:
 * the file's pages, DEV's page cache and, for a loop device, its backing
 * file's pages; how much of the file is still cached as its read begins
 * is measured (a cache below this machine's, such as a virtual machine's
 * host's, is beyond reach).  The figures into *OUT.  Returns 0, -EINTR or
 * -errno after saying why.
 */
int pgl_stream(const char *dir, const char *dev, uint64_t bytes, struct pgl_stream *out);

/* ---- for the back ends: the test bed's own helpers (testbed.c) --------- */

/* The tmpfs a modelled disk's image lives in, DIR/PGL_IMAGE_TMPFS: it goes
 * after pgdisk's mount, as pgdisk's does. */
#define PGL_IMAGE_TMPFS "pgdisk-image"

/* pgl_testbed_mkdir_path() -- make directory PATH (mode 0711, as
 * pgl_testbed_mkdir()); an existing one will do.  Returns 0 or -errno
 * after saying why. */
int pgl_testbed_mkdir_path(const char *path);

/* pgl_testbed_record() -- record DIR, outside the work directory, in the
 * state file before it is made, so that the clean-up removes it.  Returns
 * 0 or -errno. */
int pgl_testbed_record(struct pgl_testbed *tb, const char *dir);

/*
 * pgl_testbed_unmount_under() -- unmount every mount under DIR, deepest
 * first; with BUT_PGDISK not pgdisk's (a loop device on its disk keeps it
 * busy until detached).  Returns how many.
 */
int pgl_testbed_unmount_under(const char *dir, bool but_pgdisk);

/* pgl_testbed_detach_loops_under() -- detach the loop devices whose backing
 * file is under DIR.  Returns how many. */
int pgl_testbed_detach_loops_under(const char *dir);

/* pgl_testbed_wait_users() -- wait until no process's command line names a
 * path under DIR (SECS at most); with KILL_LEFT, kill those left. */
void pgl_testbed_wait_users(const char *dir, double secs, bool kill_left);

#endif /* PGLOAD_TESTBED_H */
