/*
 * pgiofs_i.h -- internals shared by the files of fuse/ (not a public header).
 *
 * Conventions: functions return >= 0 on success and -errno on failure; a
 * FUSE handler turns that into its reply at the boundary
 * (fuse_reply_err(req, -ret)); constructors follow iosched's (the object,
 * or NULL with errno set) and their destroy or stop functions accept NULL
 * or a channel that was never opened.  Messages go through pfs_log().
 */
#ifndef PGIOFS_PGIOFS_I_H
#define PGIOFS_PGIOFS_I_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "iosched.h"
#include "pgiofs.h"

/* One backing inode the kernel knows about (it holds a lookup count). */
struct pfs_inode {
	struct pfs_inode *hnext; /* hash chain, under pfs.lock */
	int fd;			 /* O_PATH descriptor of the backing object */
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
	/* write-behind (WAL with files.wal_direct_io): held while an
	 * acknowledged write is still being written; its error, kept for the
	 * next fsync */
	pthread_mutex_t wb_lock;
	int wb_err;
};

/* The filesystem: one per mount. */
struct pfs {
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
	struct ios_stats *stats;	/* since mount; attached to every scheduler */
	struct pfs_control *control;	/* control channel (control.c), or NULL */
	struct ios_trace_writer *trace; /* --trace, or NULL; every scheduler */
};

/* pfs_sched_create() -- a scheduler with settings @set, accounting into
 * fs->stats when set->stats_enabled and recording into fs->trace if set.
 * NULL with errno set on failure. */
struct ios_sched *pfs_sched_create(struct pfs *fs, const struct pgiofs_settings *set);

extern const struct fuse_lowlevel_ops pfs_ops;

/* pfs_reload() -- adopt new settings: the running scheduler is drained
 * (so nothing it holds can be overtaken) and replaced.  0 or -errno (the old
 * scheduler and settings stay). */
int pfs_reload(struct pfs *fs, const struct pgiofs_settings *ns);

/* pfs_init_root() -- open the backing root; returns 0 or -errno. */
int pfs_init_root(struct pfs *fs, const char *backing);
/* pfs_cleanup() -- close every inode descriptor and free the table. */
void pfs_cleanup(struct pfs *fs);

/* log.c: stderr in the foreground, syslog once daemonized. */
void pfs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pfs_log_to_syslog(void);

/* loop.c: the session loop; requests may keep their receive buffer */
int pfs_loop(struct fuse_session *se, unsigned nthreads);
/* pfs_loop_take_buffer() -- if @data lies in the calling worker's receive
 * buffer, hand that buffer over: returns its base, to free() when done;
 * NULL otherwise (the caller must copy). */
void *pfs_loop_take_buffer(const void *data);
/* pfs_loop_requests() -- requests the session loop has handled so far. */
unsigned long pfs_loop_requests(void);

/* wire.c: raw protocol hooks (see there for why) */
int pfs_wire_attach(struct fuse_session *se);
bool pfs_wire_kill_suidgid(void);

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

/* control.c: the control channel `pgiofs stat` talks to.  An abstract
 * Unix socket (nothing appears in any directory) named after the mount's
 * st_dev, so a client finds it from /proc/self/mountinfo alone. */
#define PFS_CTL_NAME_FMT  "pgiofs/%u:%u"  /* major, minor; after a NUL byte */
#define PFS_CTL_RAW	  "pgiofs-raw/1"  /* reply to "snapshot-raw\n" */
#define PFS_CTL_RELS	  "pgiofs-rels/1" /* reply to "relations-raw\n" */
#define PFS_CTL_TIMEOUT_S 5

struct sockaddr_un;
/* pfs_control_addr() -- the socket address of mount @major:@minor; returns
 * its length for bind()/connect(). */
unsigned pfs_control_addr(unsigned major, unsigned minor, struct sockaddr_un *sa);
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

/* pfs_trace_main() -- `pgiofs trace FILE [--csv]` and `pgiofs trace FILE
 * --replay [--profile NAME] [--device MODEL] [--json]` (trace.c); argv[0]
 * is "trace".  Returns the exit status. */
int pfs_trace_main(int argc, char **argv);

#endif
