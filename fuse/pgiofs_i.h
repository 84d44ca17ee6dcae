/*
 * pgiofs_i.h -- internals shared by the files of fuse/ (not a public header).
 *
 * Conventions: functions return >= 0 on success and -errno on failure; a
 * FUSE handler turns that into its reply at the boundary
 * (fuse_reply_err(req, -ret)); constructors follow iosched's (the object,
 * or NULL with errno set) and their destroy or stop functions accept NULL
 * or a channel that was never opened.  Messages go through log_msg()
 * (common/log.h): stderr in the foreground, syslog once daemonized.
 */
#ifndef PGIOFS_PGIOFS_I_H
#define PGIOFS_PGIOFS_I_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "iosched.h"
#include "log.h"
#include "pgiofs.h"

/* One backing inode the kernel knows about (it holds a lookup count).  The
 * inode table (inode.c) owns hnext to lru_next, dev, ino and nlookup. */
struct pfs_inode {
	struct pfs_inode *hnext; /* hash chain, under pfs.lock */
	/* how the backing object is reached (use pfs_inode_fd()): by its file
	 * handle @fh on mount @mnt, with an O_PATH descriptor in @fd while the
	 * descriptor cache holds one (-1 otherwise; fd, fd_pins and the list
	 * links under the cache's lock); or, @fd_held, by the O_PATH
	 * descriptor @fd it holds for its life */
	struct file_handle *fh;
	int fd;
	int mnt;
	bool fd_held;
	uint32_t fd_pins;		       /* requests using fd now */
	struct pfs_inode *lru_prev, *lru_next; /* the cache's list while unpinned */
	dev_t dev;
	ino_t ino;
	mode_t fmt;	    /* S_IFMT bits */
	uint8_t kind;	    /* enum pgiofs_dirkind (directories) */
	uint8_t cls;	    /* enum ios_class (files) */
	uint8_t by_content; /* cls was decided by a page's content (heap/index) */
	uint64_t nlookup;   /* under pfs.lock */
	/* per-relation statistics (read and written with relaxed atomics):
	 * directories: their name as a number and their tablespace
	 * (pgiofs_dir_oids()); relation files: their counters, or NULL */
	uint32_t oid, spc;
	struct ios_stats_rel *rel;
	uint32_t nopen; /* open handles (atomic): iosched readahead state is
			 * released with the last */
	bool read_seen; /* a READ went to the scheduler since that release
			 * (atomic): without one there is no readahead state
			 * to release, and no dispatcher to wake for it */
	/* writes acknowledged before they are on the backing store
	 * (writebehind.c), under wb_lock: how many are left */
	pthread_mutex_t wb_lock;
	pthread_cond_t wb_done; /* wb_pending reached 0 */
	uint32_t wb_pending;
	off_t wb_size; /* the file's size once they are written, or 0 */
	/* errors no caller has had yet (an acknowledged write's, a close's),
	 * for the next fsync of every open handle, as the kernel's errseq
	 * keeps write-back errors (writebehind.c), under wb_lock: the latest
	 * (a positive errno), how many were kept (0: never one; a new one
	 * counts only once the one before was reported) and whether an fsync
	 * has reported the latest */
	int wb_err;
	uint32_t wb_errseq;
	bool wb_err_seen;
	/* files.defer_times: the mtime the kernel sent, not yet applied to
	 * the backing file (under wb_lock) */
	bool wb_mtime_kept;
	struct timespec wb_mtime;
	/* how the file is open (passthrough.c), under om_lock: the kernel
	 * refuses a page-cache open while a passthrough one is outstanding
	 * and the other way round, and wants one backing id for all of them */
	pthread_mutex_t om_lock;
	uint32_t n_cached, n_direct, n_passthrough; /* open handles per mode */
	int backing_id;				    /* registered while n_passthrough > 0, else 0 */
	bool uncached_seen;			    /* ever open direct or passthrough: the mount's
						     * page cache of it may be stale, drop it at open */
	/* held by a buffered write to the backing file that runs at arrival
	 * (struct ios_req.serial) */
	pthread_mutex_t write_lock;
	/* files.drop_behind: the backing file system refused it (atomic) */
	bool drop_refused;
	/* files.checkpoint_writeback_kb (ckpt.c): on the core's list of relation
	 * files written through the backing page cache since the checkpointer
	 * last synced (links under ckpt.lock; ckpt_noted atomic, set under it) */
	struct pfs_inode *ckpt_prev, *ckpt_next;
	bool ckpt_noted;
	uint64_t ckpt_bytes; /* written since it was last taken off (atomic) */
};

/* How one open handle reaches the file (struct pfs_fh.mode). */
enum pfs_open_mode {
	PFS_OPEN_CACHED,      /* through the mount's page cache */
	PFS_OPEN_DIRECT,      /* FOPEN_DIRECT_IO: every read and write a request */
	PFS_OPEN_PASSTHROUGH, /* FOPEN_PASSTHROUGH: reads and writes bypass us */
};

struct pfs;
struct iovec;
typedef int (*pfs_ring_reply_fn)(struct pfs *fs, const struct iovec *iov, int count);

/* wire.c's state of the connection (atomics: every worker reads them). */
struct pfs_wire {
	_Atomic uint64_t init_unique; /* the INIT request, UINT64_MAX once answered */
	atomic_bool offered_killpriv_v2, offered_passthrough, offered_dio_mmap; /* in INIT */
	atomic_bool passthrough;   /* put into the INIT reply */
	atomic_bool offered_uring; /* FUSE_OVER_IO_URING in INIT */
	atomic_bool allow_uring;   /* may be put into the INIT reply */
	atomic_bool uring;	   /* put into the INIT reply, and registered */
	/* takes the reply to a request that came over a ring (uring.c): 1, or
	 * 0 if it is not one of those */
	_Atomic(pfs_ring_reply_fn) ring_reply;
};

struct pfs_uring;

/* The write cache's state (writebehind.c). */
struct pfs_wb_counters {
	uint64_t limit, bytes, peak; /* bytes: the cache's limit, held now, most */
	uint64_t writes;	     /* writes that went through the cache */
	uint64_t waits;		     /* of which waited for room */
	uint64_t errors;	     /* of which failed on the backing store */
};

struct pfs_walmounts;

/* what a backing file system's block device says of its medium */
enum pfs_medium {
	PFS_MEDIUM_NONE = -1,	   /* no block device (tmpfs, a network file system), or
				    * its queue could not be read */
	PFS_MEDIUM_SOLID = 0,	   /* queue/rotational 0 */
	PFS_MEDIUM_ROTATIONAL = 1, /* queue/rotational 1 */
	/* queue/rotational 1 where the device has no way to say otherwise: a
	 * virtio disk (the virtio block protocol carries no medium type, and
	 * Linux leaves the block layer's default, rotational); treated as
	 * rotational for the WAL segments made ahead (walprep.c) and the
	 * block queue (devqueue.c); whether the data files' writes go past the
	 * backing page cache is decided by timing the disk instead
	 * (pfs_dev_seek_us(), docs/performance.md) */
	PFS_MEDIUM_UNKNOWN = 2,
};

/* the median random 4 KiB read time, in microseconds, below which a disk
 * that cannot say whether it rotates is taken as one that does not seek
 * (a rotating disk's is a seek plus half a turn: 4 ms and more at 15,000
 * rpm; a solid-state or networked volume's well under 1 ms) */
#define PFS_SEEK_US_SOLID 2000

/* the median random 4 KiB read time at or above which a disk that does not
 * rotate is taken as a capped or networked volume (a cloud block volume:
 * about a millisecond; a local solid-state disk answers in tens to a couple
 * of hundred microseconds), whose data files' writes go through the backing
 * page cache under files.backing_direct and files.drop_behind = auto: on
 * such a volume the throughput is the budget, and writes past the page
 * cache make every write-back of the mount wait for the volume (a close of
 * a file waits for its dirty pages) and spend bytes a page cache absorbs
 * (docs/performance.md, "A capped volume answers slowly") */
#define PFS_SEEK_US_DIRECT 500

/* devqueue.c: the backing device's block queue (files.device_queue).  What
 * pgiofs set at mount and what it found there, to put back at unmount. */
struct pfs_devqueue {
	char queue[PATH_MAX + 16]; /* its sysfs queue directory; "" if untouched */
	char device[32];	   /* the backing file system's device, "" if none */
	char sched_was[32];	   /* the scheduler found, "" if left as is */
	long wbt_was;		   /* wbt_lat_usec found, -1 if left as is */
	long depth_was;		   /* mq-deadline's async_depth found, -1 if left as is */
	long depth;		   /* ... and the one set */
	long nr_was, nr;	   /* nr_requests found (-1 if left as is), and set */
	long kb_was, kb;	   /* max_sectors_kb found (-1 if left as is), and set */
	char note[256];		   /* why something was left as is, or "" */
	bool restored;		   /* put back (the main thread's) */
};

/* The filesystem: one per connection.  The daemon's mount has one; each
 * WAL mount over a pg_wal directory of it (walmount.c) has its own, whose
 * core is the mount's: one scheduler, write cache, statistics and trace. */
struct pfs {
	struct pfs *core; /* whose scheduler, write cache and statistics: itself,
			   * or the mount a WAL mount is part of */
	struct pfs_inode root;
	pthread_mutex_t lock; /* inode table */
	struct pfs_inode **tab;
	size_t tabsize, count;
	struct pgiofs_settings set;
	pthread_rwlock_t ios_lock; /* submitters read, a reload writes */
	struct ios_sched *ios;
	struct fuse_session *se;
	bool is_root; /* the daemon runs with euid 0 */
	bool foreground;
	struct pfs_wire wire;
	/* what the mount runs with, decided at INIT (passthrough.c); the
	 * settings keep what was asked for */
	bool writeback;			   /* the kernel's write-back cache is on */
	bool no_opendir;		   /* OPENDIR answered ENOSYS: the kernel opens directories
					    * itself, caches their listings, sends no RELEASEDIR */
	int wal_mode;			   /* enum pgiofs_wal_mode in effect */
	bool wal_split;			   /* passthrough on WAL mounts of their own: WAL files
					    * reached through this connection are direct */
	char wal_note[256];		   /* why wal_mode differs from the setting, or "" */
	_Atomic(struct pfs_uring *) uring; /* the rings (uring.c), or NULL */
	char uring_note[256];		   /* why requests do not come over a ring */
	/* the backing directory's block device (pfs_init_root()): its name
	 * ("" if it has none) and what it says of its medium, for
	 * files.backing_direct and files.drop_behind = auto */
	char backing_dev[32];
	enum pfs_medium backing_medium;
	/* pfs_dev_seek_us() of the backing device, timed at mount where it
	 * does not say it rotates (-errno if it could not be); 0 for a
	 * rotating disk and for no block device */
	int backing_seek_us;
	struct pfs_devqueue devqueue;	 /* files.device_queue (devqueue.c) */
	struct pfs_walprep *walprep;	 /* WAL segments made ahead (walprep.c): the core's */
	struct pfs_space *space;	 /* files.space_guard_mb (space.c): the core's */
	struct pfs_walmounts *walmounts; /* wal_split: the WAL mounts, else NULL */
	/* with WAL mounts: a handler met directory @name in @dir, of kind
	 * PGIOFS_DIR_WAL, whose backing object is @st (walmount.c makes a WAL
	 * mount over it if it is a directory that had none; it does so in a
	 * thread of its own, since the mount's path lookup needs the mount's
	 * workers, which may be the caller); NULL otherwise */
	void (*wal_dir_seen)(struct pfs *fs, struct pfs_inode *dir, const char *name,
			     const struct stat *st);
	/* what `pgiofs stat` shows of the configuration (under ios_lock):
	 * the profile named at mount ("" if none) and the tunables that differ
	 * from their defaults (pgiofs_settings_changed()) */
	char profile[PATH_MAX];
	char changed[2048];
	/* the write cache (writebehind.c): memory of acknowledged writes */
	struct {
		pthread_mutex_t lock;
		pthread_cond_t room;
		struct pfs_wb_counters cnt;
	} wb;
	/* files.checkpoint_writeback_kb (ckpt.c): the relation files noted,
	 * how many times the checkpointer started their writeback (starts)
	 * for how many files in all, and how many it left to their own fsync
	 * for their size (atomics) */
	struct {
		pthread_mutex_t lock;
		struct pfs_inode *head;	       /* stored atomically, under lock */
		uint64_t starts, files, large; /* large: left to their own fsync */
		pid_t pid;		       /* the last checkpointer seen (atomic) */
	} ckpt;
	/* files.drop_behind: bytes written and read without being kept in
	 * the backing page cache, and files whose file system refused it
	 * (atomics) */
	struct {
		uint64_t bytes, read_bytes, refused;
	} drop;
	struct pfs_fdcache *fdc;	/* the inodes' descriptors (inode.c); the core's */
	struct ios_stats *stats;	/* since mount; attached to every scheduler */
	struct pfs_control *control;	/* control channel (control.c), or NULL */
	struct ios_trace_writer *trace; /* --trace, or NULL; every scheduler */
};

/* pfs_sched_create() -- a scheduler with settings @set, accounting into
 * fs->stats when set->stats_enabled and recording into fs->trace if set.
 * NULL with errno set on failure. */
struct ios_sched *pfs_sched_create(struct pfs *fs, const struct pgiofs_settings *set);

extern const struct fuse_lowlevel_ops pfs_ops;

/* pfs_reload() -- adopt new settings: a scheduler with them is started,
 * then the running one is drained (so nothing it holds can be overtaken)
 * and replaced.  0 or -errno: the new scheduler could not be started, and
 * the old one and the old settings stay. */
int pfs_reload(struct pfs *fs, const struct pgiofs_settings *ns);
/* pfs_describe() -- record the profile named (NULL: none) and the
 * tunables of @s that differ from their defaults, for `pgiofs stat`. */
void pfs_describe(struct pfs *fs, const char *profile, const struct pgiofs_settings *s);
/* pfs_drain() -- complete everything the scheduler holds: replace it with
 * one of the same settings or, if that cannot be started, with "direct".
 * 0 or -errno. */
int pfs_drain(struct pfs *fs);

/* pfs_init_root() -- open the backing root; returns 0 or -errno.  fs->core
 * is set to @fs unless already set. */
int pfs_init_root(struct pfs *fs, const char *backing);
/* pfs_backing_direct() -- whether relation, WAL and temp files are opened
 * O_DIRECT on the backing store now (files.backing_direct as set, auto
 * decided by the backing device); with @why, a line saying why. */
bool pfs_backing_direct(const struct pfs *fs, char *why, size_t len);

/* pfs_drop_relations() -- whether the write-back of relation files through
 * the backing page cache is dropped from it once on the disk
 * (files.drop_behind as set, auto resolved on the backing device); their
 * reads are whenever files.drop_behind is not no. */
bool pfs_drop_relations(const struct pfs *fs);
/* pfs_cleanup() -- free every inode and the table (the session has ended). */
void pfs_cleanup(struct pfs *fs);

/* inode.c: the inode table of a connection and how the daemon reaches the
 * backing objects (see there for what must stay true).  fs.c makes and
 * frees the inodes; the table keys them and holds their descriptors. */

struct stat;
/* What identifies a backing object in the table (pfs_inode_key()): its
 * file handle on file system @dev, or (@dev, @ino) without one. */
struct pfs_ikey {
	dev_t dev;
	ino_t ino;
	int mnt; /* the handle's mount (an index of the cache's), or -1: no handle */
	uint64_t hash;
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
};
/* pfs_inodes_init() -- an empty table for @fs and its root, the backing
 * directory @backing (fs->root's members the table owns); for the core
 * connection also the descriptor cache, which decides whether inodes are
 * identified by file handles (files.inode_handles, the daemon's
 * privileges, the backing file system).  0 or -errno. */
int pfs_inodes_init(struct pfs *fs, const char *backing);
/* pfs_inodes_files() -- the regular files other than WAL the kernel knows
 * now, with whether each has open handles, in *@out (malloc()ed, NULL if
 * memory ran out); how many. */
struct pfs_inode_ref {
	fuse_ino_t id;
	bool open;
};
size_t pfs_inodes_files(struct pfs *fs, struct pfs_inode_ref **out);
/* What `pgiofs stat` shows of the inodes and their descriptors. */
struct pfs_inode_counters {
	bool handles;		 /* inodes are identified by file handles */
	char note[256];		 /* if not, why */
	uint64_t setting, limit; /* files.inode_fds; the cache's limit in effect */
	uint64_t cached;	 /* descriptors in the cache now */
	uint64_t held;		 /* descriptors held by inodes without a handle */
	uint64_t inodes;	 /* inodes the kernel knows (every connection) */
	uint64_t hits, misses;	 /* a descriptor found cached; opened from a handle */
	uint64_t opens;		 /* files opened from their handles, none cached */
	uint64_t evictions;	 /* cached descriptors closed to make room */
	uint64_t stale;		 /* handles of objects gone (ESTALE) */
};
void pfs_inodes_counters(struct pfs *fs, struct pfs_inode_counters *out);
/* pfs_inodes_describe() -- one line for the log at mount: handles and the
 * cache's size, or why not and the limit that follows. */
void pfs_inodes_describe(struct pfs *fs, char *buf, size_t len);
/* pfs_inodes_destroy() -- once pfs_inode_take_any() found nothing left:
 * close the root's descriptor and free the table.  Accepts a table that
 * was never made. */
void pfs_inodes_destroy(struct pfs *fs);
/* pfs_inode_key() -- the key of the object of @fd (an O_PATH descriptor,
 * not consumed) whose attributes are @st.  0 or -errno. */
int pfs_inode_key(struct pfs *fs, int fd, const struct stat *st, struct pfs_ikey *key);
/* pfs_inode_find() -- the inode of @key with one more lookup reference
 * (@fd, if >= 0, a descriptor of the object, is consumed), or NULL (@fd
 * untouched). */
struct pfs_inode *pfs_inode_find(struct pfs *fs, const struct pfs_ikey *key, int fd);
/* pfs_inode_add() -- put @fresh (made by the caller: everything but what
 * the table owns) into the table as the inode of @key, with its first
 * lookup reference and @fd (consumed) as its descriptor; or, if another
 * lookup added an inode of @key meanwhile, take a reference on that one
 * and return it (the caller then frees @fresh, which the table never
 * saw).  NULL if out of memory (@fd closed). */
struct pfs_inode *pfs_inode_add(struct pfs *fs, const struct pfs_ikey *key, int fd,
				struct pfs_inode *fresh);
/* pfs_inode_forget() -- drop @n lookup references of @in.  At zero, unless
 * @keep (NULL: never) says to keep it -- asked under the table's lock, so
 * that no lookup finds the inode meanwhile -- @in leaves the table and
 * true is returned: the caller frees it, pfs_inode_release() first. */
bool pfs_inode_forget(struct pfs *fs, struct pfs_inode *in, uint64_t n,
		      bool (*keep)(struct pfs *fs, struct pfs_inode *in));
/* pfs_inode_take_any() -- once the session has ended: some inode other
 * than the root, taken out of the table for the caller to free, or NULL
 * when none is left. */
struct pfs_inode *pfs_inode_take_any(struct pfs *fs);
/* pfs_inode_release() -- @in has left the table: close its descriptor. */
void pfs_inode_release(struct pfs *fs, struct pfs_inode *in);
/* pfs_inode_fd() -- an O_PATH descriptor of @in's backing object, open
 * until pfs_inode_fd_put(); or -errno (-ESTALE: the object no longer
 * exists, -EMFILE). */
int pfs_inode_fd(struct pfs *fs, struct pfs_inode *in);
void pfs_inode_fd_put(struct pfs *fs, struct pfs_inode *in);
/* pfs_inode_open() -- a new descriptor of @in's backing object opened
 * with open(2)'s @flags (O_CLOEXEC added), for the caller to close; or
 * -errno. */
int pfs_inode_open(struct pfs *fs, struct pfs_inode *in, int flags);
/* pfs_inodes_shed() -- the daemon ran out of descriptors (EMFILE): close
 * every cached descriptor no request is using, so that the caller may try
 * once more (pfs_inode_fd() and pfs_inode_open() do).  Returns how many. */
size_t pfs_inodes_shed(struct pfs *fs);
/* pfs_inode_out_of_fds() -- @err (an errno) is EMFILE or ENFILE: say why,
 * once a minute (the caller only sees "Too many open files"). */
void pfs_inode_out_of_fds(int err);

/* loop.c: the session loop (fuse.max_threads, max_idle_threads,
 * clone_fd); requests may keep their receive buffer.  One per session, in
 * any thread (a WAL mount runs its own).  0 or -errno. */
int pfs_loop(struct fuse_session *se, const struct pgiofs_settings *set);
/* pfs_loop_init() -- read and process the kernel's first request (INIT)
 * in the calling thread; 0 or -errno. */
int pfs_loop_init(struct fuse_session *se);
/* pfs_loop_take_buffer() -- if @data lies in the calling worker's receive
 * buffer, hand that buffer over: returns its base, to free() when done;
 * NULL otherwise (the caller must copy). */
void *pfs_loop_take_buffer(const void *data);
/* pfs_loop_buffer() -- the calling thread's receive buffer (a new one if
 * its last was taken), as a worker reads into it: a request whose headers
 * take @hdr bytes, put at the address returned, has its payload page
 * aligned, and 1 MiB of payload fits.  NULL if out of memory.  For the
 * ring threads (uring.c), which copy requests there. */
char *pfs_loop_buffer(size_t hdr);
/* pfs_loop_buffer_bytes() -- the size of a receive buffer. */
size_t pfs_loop_buffer_bytes(void);
/* pfs_loop_requests() -- requests the session loops have handled so far. */
unsigned long pfs_loop_requests(void);
/* pfs_loop_count_request() -- one more handled (by a ring thread). */
void pfs_loop_count_request(void);

/* wire.c: raw protocol hooks (see there for why) */
int pfs_wire_attach(struct pfs *fs); /* after fuse_session_mount() */
/* pfs_wire_kill_suidgid() -- the request being processed asks for the
 * set-user-ID and set-group-ID bits to be cleared. */
bool pfs_wire_kill_suidgid(void);
/* pfs_wire_read_from() -- the calling thread reads requests from @fd, a
 * clone of the session's /dev/fuse descriptor (-1: the session's own),
 * and their replies go back through it, from whichever thread. */
void pfs_wire_read_from(int fd);
/* pfs_wire_passthrough_offered() -- the kernel's INIT offered passthrough. */
bool pfs_wire_passthrough_offered(const struct pfs *fs);
/* pfs_wire_enable_passthrough() -- from the INIT handler: put passthrough
 * into the reply (which must not ask for the write-back cache). */
void pfs_wire_enable_passthrough(struct pfs *fs);
/* pfs_wire_backing_open() -- register backing file @fd (an O_PATH
 * descriptor will do) with the kernel: a backing id > 0, or -errno. */
int pfs_wire_backing_open(const struct pfs *fs, int fd);
void pfs_wire_backing_close(const struct pfs *fs, int backing_id);
/* pfs_wire_arm_passthrough() -- the OPEN or CREATE reply this thread
 * writes next opens the file in passthrough with @backing_id;
 * pfs_wire_disarm() after the reply: whether it was patched. */
void pfs_wire_arm_passthrough(int backing_id);
bool pfs_wire_disarm(void);
/* pfs_wire_note() -- what the request in @buf (as read from /dev/fuse)
 * asks that a reply must know; for requests taken from a ring. */
void pfs_wire_note(struct pfs *fs, const void *buf, size_t len);

/* The kernel lets a request follow only what it was told before (a FORGET
 * after the reply that made the inode's last use), but a thread sanitizer
 * sees that order only through read(2) and write(2) on a descriptor, not
 * through io_uring: requests taken from and replies put into the rings
 * (uring.c), and those on /dev/fuse (wire.c), are marked by hand on the
 * connection's struct pfs_wire. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define pfs_kernel_release(w) __tsan_release(w)
#define pfs_kernel_acquire(w) __tsan_acquire(w)
#else
#define pfs_kernel_release(w) ((void)(w))
#define pfs_kernel_acquire(w) ((void)(w))
#endif

/* uring.c: FUSE over io_uring (see there) */
/* pfs_uring_start() -- after the INIT reply put FUSE_OVER_IO_URING in
 * (fs->wire.uring): the ring threads, every entry registered.  0 (also
 * when there is nothing to start), or -errno: then fs->wire.uring is false
 * and the kernel sends every request to /dev/fuse. */
int pfs_uring_start(struct pfs *fs);
/* pfs_uring_unpin() -- the calling thread may run on every CPU the daemon
 * may (a thread started from a ring thread inherits its one CPU). */
void pfs_uring_unpin(void);
/* pfs_uring_stop() -- once the session loop has ended: wait for the
 * requests being served, serve no more (a connection still up after the
 * loop ended gets no answer from the rings, as from /dev/fuse). */
void pfs_uring_stop(struct pfs *fs);
/* pfs_uring_release() -- once no reply can come any more (the session's
 * requests have all completed): end the ring threads, close the rings and
 * free what pfs_uring_prepare() and pfs_uring_start() made.  Rings whose
 * threads do not end within seconds are kept (and said so). */
void pfs_uring_release(struct pfs *fs);
/* pfs_uring_requests() -- requests served over the rings so far. */
unsigned long pfs_uring_requests(struct pfs *fs);
/* pfs_uring_prepare() -- before INIT: whether FUSE_OVER_IO_URING may go
 * into the INIT reply (fs->wire.allow_uring): fuse.uring is not no and this
 * process can make rings (once the flag is in, only a ring, or a refused
 * registration, releases the requests the kernel then holds); the ring
 * that proves it is kept, for pfs_uring_start() to turn the ring off with
 * if the rings cannot be had.  Else why in fs->uring_note. */
void pfs_uring_prepare(struct pfs *fs);
/* pfs_uring_enabled() -- 1 if the kernel offers FUSE over io_uring to new
 * mounts; else 0 and why in @why. */
int pfs_uring_enabled(char *why, size_t len);
/* pfs_uring_explain() -- after INIT: why the mount has no ring, into
 * fs->uring_note (unless it has one). */
void pfs_uring_explain(struct pfs *fs);
/* pfs_uring_describe() -- the rings ("2 queues x 1 threads x 8 entries"),
 * or why there are none. */
void pfs_uring_describe(struct pfs *fs, char *buf, size_t len);

/* ckpt.c: files.checkpoint_writeback_kb -- PostgreSQL's checkpointer's
 * fsync starts the backing writeback of the relation files written since */
void pfs_ckpt_init(struct pfs *fs);
/* pfs_ckpt_note() -- a write of @len bytes of class @cls to @in reached the
 * backing file (through its page cache when @buffered): note a relation
 * file. */
void pfs_ckpt_note(struct pfs *fs, struct pfs_inode *in, enum ios_class cls, bool buffered,
		   size_t len);
/* pfs_ckpt_forget() -- @in is about to be freed: off the list. */
void pfs_ckpt_forget(struct pfs *fs, struct pfs_inode *in);
/* pfs_ckpt_is_checkpointer() -- is process @pid PostgreSQL's checkpointer
 * (its title "postgres: checkpointer" or "postgres: CLUSTER: checkpointer")? */
bool pfs_ckpt_is_checkpointer(pid_t pid);
/* pfs_ckpt_start() -- an fsync of a file of class @cls from process @pid:
 * if it is a relation file and @pid the checkpointer, start the writeback
 * of every noted file written no more than files.checkpoint_writeback_kb
 * since (not waited for) and empty the list.  Returns how many files. */
size_t pfs_ckpt_start(struct pfs *fs, pid_t pid, enum ios_class cls);

/* writebehind.c: writes acknowledged before they reach the backing store */
void pfs_wb_init(struct pfs *fs, uint64_t limit); /* limit: bytes of the write cache */
void pfs_wb_inode_init(struct pfs_inode *in);
void pfs_wb_inode_destroy(struct pfs_inode *in);
/* pfs_wb_begin() -- a write to @in ending at byte @end is about to be
 * acknowledged: counted on the inode, and @bytes of the write cache's
 * memory taken, waiting while it is full.  @bytes 0: a write done by the
 * caller itself after the reply, which first waits for the inode's earlier
 * acknowledged writes (they are queued writes' business otherwise). */
void pfs_wb_begin(struct pfs *fs, struct pfs_inode *in, size_t bytes, off_t end);
/* pfs_wb_reserve() -- before a write of @len bytes at @off to @fd is
 * acknowledged early: the space it needs beyond the end of the file is
 * allocated now (fallocate), so that the write cannot fail for the want of
 * it.  0, -EOPNOTSUPP (the filesystem cannot: answer the write once it is
 * written) or -errno: the writer's error (ENOSPC). */
int pfs_wb_reserve(int fd, off_t off, size_t len);
/* pfs_wb_size() -- before a stat of @in's backing file: the size the file
 * has once the acknowledged writes are written (0: none pending), for
 * pfs_wb_fix_size() to apply to the stat. */
off_t pfs_wb_size(struct pfs_inode *in);
struct stat;
void pfs_wb_fix_size(off_t size, struct stat *st);
/* pfs_wb_end() -- that write finished with @res (bytes, or -errno) of the
 * @len it had: an error or a short write is kept for the next fsync
 * (pfs_wb_note_error()). */
void pfs_wb_end(struct pfs *fs, struct pfs_inode *in, size_t bytes, ssize_t res, size_t len);
/* pfs_wb_note_error() -- keep @err (a positive errno) for the next fsync of
 * @in on every open handle, and on every handle opened before one has
 * reported it (the kernel's errseq_set()). */
void pfs_wb_note_error(struct pfs_inode *in, int err);
/* pfs_wb_err_sample() -- a new handle's error cursor: it will report an
 * error kept now that no fsync has reported yet (errseq_sample()). */
uint32_t pfs_wb_err_sample(struct pfs_inode *in);
/* pfs_wb_err_check() -- pfs_wb_wait(), then the error kept since @cursor
 * (a positive errno, or 0); @cursor moves past it (the kernel's
 * file_check_and_advance_wb_err()). */
int pfs_wb_err_check(struct pfs_inode *in, uint32_t *cursor);
/* pfs_wb_err_unreported() -- whether @in holds an error no fsync has
 * reported: the inode must not be freed while its file exists (the
 * next open and fsync of the file must see it). */
bool pfs_wb_err_unreported(struct pfs_inode *in);
/* pfs_wb_keep_mtime() -- files.defer_times: @mtime, the kernel's mtime of
 * @in sent with the write-back cache (before an fsync or at close), is
 * kept instead of being applied: setting it now would make the fsync that
 * follows commit the backing file system's journal for that change alone.
 * pfs_wb_apply_mtime() applies it after that fsync, at release, before any
 * other change of @in's attributes and when @in is forgotten; until then
 * pfs_wb_fix_mtime() shows it in every stat of @in. */
void pfs_wb_keep_mtime(struct pfs_inode *in, const struct timespec *mtime);
/* pfs_wb_apply_mtime() -- apply the kept mtime, if any, to the backing
 * file: through @fd, an open descriptor of it, if >= 0 (no inode
 * descriptor is needed then), else @in's.  0, or -errno (it is forgotten
 * either way). */
int pfs_wb_apply_mtime(struct pfs *fs, struct pfs_inode *in, int fd);
void pfs_wb_fix_mtime(struct pfs_inode *in, struct stat *st);
/* pfs_wb_wait() -- until no acknowledged write to @in is left. */
void pfs_wb_wait(struct pfs_inode *in);
void pfs_wb_counters(struct pfs *fs, struct pfs_wb_counters *out);

/* passthrough.c: how files are opened (cached, direct, passthrough) */
/* pfs_open_mode_init() -- in the INIT handler: decide fs->writeback,
 * fs->wal_mode and fs->wal_split from the settings, the kernel's offers
 * (@writeback_offered: its write-back cache) and our privileges
 * (fs->wal_note says why if not what was asked for). */
void pfs_open_mode_init(struct pfs *fs, bool writeback_offered);
struct pfs_open_how {
	enum pfs_open_mode mode;
	int backing_id;	 /* passthrough: the inode's backing id */
	bool new_file;	 /* passthrough: the id was registered for this open */
	bool drop_cache; /* the mount's pages of the file may be stale */
};
/* pfs_open_mode_take() -- how a new open handle of @in, a file of class
 * @cls, reaches it, counted until pfs_open_mode_drop(); for passthrough the
 * inode's backing id is registered first if need be.  Never fails: where
 * passthrough cannot be had the handle is direct. */
void pfs_open_mode_take(struct pfs *fs, struct pfs_inode *in, enum ios_class cls,
			struct pfs_open_how *how);
void pfs_open_mode_drop(struct pfs *fs, struct pfs_inode *in, enum pfs_open_mode mode);

/* walmount.c: WAL mounts of their own over the mount's pg_wal directories
 * (files.wal_mode = passthrough with the write-back cache) */
/* pfs_walmounts_create() -- for @fs (wal_split), mounted from @backing at
 * @mountpoint with FUSE options @opts: mounts nothing yet.  0 or -errno. */
int pfs_walmounts_create(struct pfs *fs, const char *backing, const char *mountpoint,
			 const char *opts);
/* pfs_walmounts_start() -- mount over every pg_wal directory of a data
 * directory found near the top of the backing tree (an existing cluster),
 * in threads that wait for @fs's session loop; once each is mounted or has
 * failed, a byte is written to @ready_fd (if >= 0: the daemonizing
 * command's pipe), which is closed.  Accepts an @fs without WAL mounts. */
void pfs_walmounts_start(struct pfs *fs, int ready_fd);
/* pfs_walmounts_unmount() -- unmount every WAL mount (@detach: lazily),
 * before the mount itself; 0, or -EBUSY if one is in use. */
int pfs_walmounts_unmount(struct pfs *fs, bool detach);
/* pfs_walmounts_stop() -- once @fs's session ended, before its scheduler
 * goes: end every WAL session (unmounting, or aborting a connection still
 * held open) and wait for them.  No new WAL mount is made after it.  Accepts
 * an @fs without WAL mounts. */
void pfs_walmounts_stop(struct pfs *fs);
/* pfs_walmounts_destroy() -- stop, then free (once the control channel,
 * which describes them, is stopped).  Accepts an @fs without WAL mounts. */
void pfs_walmounts_destroy(struct pfs *fs);
/* pfs_walmounts_describe() -- the WAL mounts for `pgiofs stat`: "" when
 * none is wanted. */
void pfs_walmounts_describe(struct pfs *fs, char *buf, size_t len);

/* walprep.c: WAL segments made ahead (files.wal_segments_ahead). */
struct pfs_walprep;
/* pfs_walprep_resolve() -- how many segments ahead the setting means on
 * this backing device (auto: 4 on a rotating or virtio disk, else 0). */
int pfs_walprep_resolve(const struct pfs *fs);
/* pfs_walprep_reserve() -- how many segments files.wal_segments_reserve
 * means: made ahead once WAL is quiet (auto: 16 where segments are made
 * ahead); 0 when no more than pfs_walprep_resolve(). */
int pfs_walprep_reserve(const struct pfs *fs);
/* pfs_walprep_start() -- the mount's thread (after daemonizing), if any
 * segment is to be made ahead; 0 or -errno (then none are). */
int pfs_walprep_start(struct pfs *fs);
/* pfs_walprep_stop() -- end its thread (once no request runs); idempotent.
 * Its statistics stay for `pgiofs stat` until pfs_walprep_free(). */
void pfs_walprep_stop(struct pfs *fs);
/* pfs_walprep_free() -- once the control thread has ended. */
void pfs_walprep_free(struct pfs *fs);
/* pfs_walprep_seen() -- a request of process @pid met segment @name in WAL
 * directory @dir (a lookup; a rename from @from, else NULL): unless @pid
 * is the checkpointer, the segments after it are made ahead, in the
 * thread. */
void pfs_walprep_seen(struct pfs *fs, struct pfs_inode *dir, const char *name, const char *from,
		      pid_t pid);
/* pfs_walprep_synced() -- a WAL file was synced through the mount (an
 * fsync request): WAL is not quiet, no reserve is made for WP_QUIET_MS. */
void pfs_walprep_synced(struct pfs *fs);
/* pfs_walprep_active() -- segments are made ahead in @dir behind the
 * kernel's back: no negative entry of a name in it may be cached. */
bool pfs_walprep_active(const struct pfs *fs, const struct pfs_inode *dir);
/* pfs_walprep_json() -- "wal_segments_ahead":{...} into @buf. */
int pfs_walprep_json(const struct pfs *fs, char *buf, size_t len);

/* space.c: a full backing file system seen by the writer
 * (files.space_guard_mb; see there for the mechanism). */
struct pfs_space;
/* pfs_space_start() -- the guard's thread (after daemonizing, once the
 * mount at @mountpoint exists), if the setting and the write-back cache
 * call for it; 0 or -errno (then there is no guard). */
int pfs_space_start(struct pfs *fs, const char *mountpoint);
/* pfs_space_stop() -- end its thread; idempotent.  pfs_space_free() once
 * the control thread has ended. */
void pfs_space_stop(struct pfs *fs);
void pfs_space_free(struct pfs *fs);
/* pfs_space_poll() -- have the guard look at the free space now if nobody has for 10 ms
 * (a WRITE or a CREATE: the space may be going fast); never waits. */
void pfs_space_poll(struct pfs *fs);
/* pfs_space_low() -- the guard is on: writes go through one by one. */
bool pfs_space_low(const struct pfs *fs);
/* pfs_space_mark() -- attributes @st of @in as the mount shows them: with
 * S_ISUID on a regular file other than WAL while the guard is on. */
void pfs_space_mark(const struct pfs *fs, const struct pfs_inode *in, struct stat *st);
/* pfs_space_write_through() -- count a WRITE sent by write(2) itself. */
void pfs_space_write_through(const struct pfs *fs);
/* pfs_space_json() -- "space_guard":{...} for `pgiofs stat --json`. */
int pfs_space_json(const struct pfs *fs, char *buf, size_t len);

/* devqueue.c (struct pfs_devqueue above struct pfs) */
/* pfs_devqueue_apply() -- at mount, set the backing device's queue as
 * files.device_queue says (a mount's, not a WAL mount's). */
void pfs_devqueue_apply(struct pfs *fs);
/* pfs_devqueue_restore() -- at unmount, put back what apply changed and
 * nobody has changed since; idempotent. */
void pfs_devqueue_restore(struct pfs *fs);
/* pfs_devqueue_json() -- "device_queue":{...} for `pgiofs stat --json`
 * into @buf; the length snprintf gives. */
int pfs_devqueue_json(const struct pfs *fs, char *buf, size_t len);

/* mount.c */
struct pfs_mount_info {
	char point[PATH_MAX];
	char fstype[64];
	unsigned major, minor; /* st_dev of the mount */
	long user_id;	       /* FUSE mounts: the owner's uid; -1 if not given */
};
int pfs_find_mount(const char *path, bool exact, struct pfs_mount_info *out);
int pfs_mount_dev(const char *mountpoint, unsigned *major, unsigned *minor);
void pfs_tune_bdi(const struct pfs *fs, const char *mountpoint);
/* pfs_dev_disk() -- the sysfs directory of the disk under file system
 * @dev (st_dev; a partition's disk) in @disk, and the device's own name in
 * @name.  0, or -1 if @dev is no block device. */
int pfs_dev_disk(dev_t dev, char *disk, size_t len, char *name, size_t name_len);
/* pfs_dev_medium() -- what the block device of file system @dev (st_dev)
 * says of its medium (sysfs queue/rotational, a partition's disk's), with
 * its name in @name ("" for PFS_MEDIUM_NONE). */
enum pfs_medium pfs_dev_medium(dev_t dev, char *name, size_t len);
/* pfs_dev_seek_us() -- time the block device @dev (st_rdev of a device
 * node, or st_dev of a file system on it): 17 reads of 4 KiB with O_DIRECT
 * at offsets spread over the device in a fixed scattered order, the first
 * one untimed; the median of the others in microseconds (at least 1), or
 * -errno if the device cannot be opened (not root) or read.  Reads only;
 * at most 17 seeks, about a quarter of a second on a 2004 disk. */
int pfs_dev_seek_us(dev_t dev);
/* pfs_run_fusermount() -- run `fusermount3 FLAGS -q -- MOUNTPOINT` (an
 * unprivileged unmount); 0 if it exited 0, else -1. */
int pfs_run_fusermount(const char *flags, const char *mountpoint);

/* control.c: the control channel `pgiofs stat` talks to.  An abstract
 * Unix socket (nothing appears in any directory) named after the mount's
 * st_dev, so a client finds it from /proc/self/mountinfo alone. */
#define PFS_CTL_NAME_FMT  "pgiofs/%u:%u"  /* major, minor; after a NUL byte */
#define PFS_CTL_RAW	  "pgiofs-raw/1"  /* reply to "snapshot-raw\n" */
#define PFS_CTL_RELS	  "pgiofs-rels/1" /* reply to "relations-raw\n" */
#define PFS_CTL_TIMEOUT_S 5
/* the daemon's members of a snapshot (mount, backing, profile, changed
 * tunables, ...) are at most this long as JSON text */
#define PFS_CTL_EXTRA_MAX (8 * PATH_MAX + 8192)

struct sockaddr_un;
/* pfs_control_addr() -- the socket address of mount @major:@minor; returns
 * its length for bind()/connect(). */
unsigned pfs_control_addr(unsigned major, unsigned minor, struct sockaddr_un *sa);
/* pfs_control_refused() -- nothing listens on the control socket of mount
 * @major:@minor (a connect is refused): no daemon, or a mount that has no
 * channel of its own (a WAL mount answers through its data mount's). */
bool pfs_control_refused(unsigned major, unsigned minor);
/* pfs_control_open() -- bind and listen (before daemonizing: the command
 * returns with the channel ready); 0 or -errno with a reason in @err. */
int pfs_control_open(struct pfs *fs, const char *mountpoint, const char *backing, bool allow_other,
		     char *err, size_t errlen);
/* pfs_control_start() -- the thread serving the socket (after daemonizing:
 * fork keeps no threads).  0 or -errno. */
int pfs_control_start(struct pfs *fs);
/* pfs_control_stop() -- stop the thread, close, free.  Accepts no channel. */
void pfs_control_stop(struct pfs *fs);

/* stat.c: `pgiofs stat` */
int pfs_stat_main(int argc, char **argv);
/* umount.c: `pgiofs umount` */
int pfs_umount_main(int argc, char **argv);

/* relnames.c: relation names for `pgiofs stat --dsn` (libpq, in the client
 * process only) */
struct pfs_relnames;
/* pfs_relnames_create() -- a name cache for server @dsn; NULL if out of
 * memory.  Connects to nothing yet. */
struct pfs_relnames *pfs_relnames_create(const char *dsn);
void pfs_relnames_destroy(struct pfs_relnames *r);
/* pfs_relnames_resolve() -- fill name and relkind of the entries of @l,
 * asking the server for those not known yet (time-limited).  0, or -1 when
 * some could not be asked for, with the reason in @note (one line). */
int pfs_relnames_resolve(struct pfs_relnames *r, struct ios_rel_list *l, char *note, size_t len);

/* pfs_find_profile() -- the file of scheduler profile @name (profile.c): a
 * path if it has a '/', else NAME.conf in $PGIOFS_PROFILE_DIR, next to the
 * binary or in /etc/pgiofs/profiles.  0, -EINVAL (not a name) or -errno. */
int pfs_find_profile(const char *name, char *out, size_t len);
/* pfs_list_profiles() -- the names of the profiles pfs_find_profile()
 * finds by name, sorted, comma-separated, in @out ("" if none). */
void pfs_list_profiles(char *out, size_t len);
/* pfs_profile_error() -- "PROG: profile "NAME": why (profiles: ...)" on
 * stderr, for an error @err of pfs_find_profile(). */
void pfs_profile_error(const char *prog, const char *name, int err);

/* pfs_trace_main() -- `pgiofs trace FILE [--csv]` and `pgiofs trace FILE
 * --replay [--profile NAME] [--device MODEL] [--json]` (trace.c); argv[0]
 * is "trace".  Returns the exit status. */
int pfs_trace_main(int argc, char **argv);

#endif
