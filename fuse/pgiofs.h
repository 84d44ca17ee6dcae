/*
 * pgiofs.h -- public interface of the pgiofs FUSE filesystem.
 *
 * pgiofs mounts a backing directory at a mount point and passes every
 * operation through to it (libfuse3 low-level API).  Every data read, write
 * and sync goes through the iosched request interface (iosched.h).
 *
 * This header exposes what the command-line front end (pgiofs_main.c) and the
 * tests need: the tunables table, the settings it fills, the mount-time
 * checks, and the entry point.
 */
#ifndef PGIOFS_PGIOFS_H
#define PGIOFS_PGIOFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "iosched.h"
#include "version.h"

#define PGIOFS_VERSION PGIOFS_RELEASE

/* How pg_wal segments are opened (files.wal_mode). */
enum pgiofs_wal_mode {
	PGIOFS_WAL_CACHED,	/* through the mount's page cache, like any file */
	PGIOFS_WAL_DIRECT,	/* FOPEN_DIRECT_IO: every write is a request */
	PGIOFS_WAL_PASSTHROUGH, /* FUSE passthrough: reads and writes bypass
				 * the daemon (no write-back cache then) */
};
extern const char *const pgiofs_wal_mode_names[]; /* NULL-terminated */

/* Whether relation, WAL and temp files are reached with O_DIRECT on the
 * backing file system (files.backing_direct). */
enum pgiofs_backing_direct {
	PGIOFS_DIRECT_NO,   /* through the backing page cache */
	PGIOFS_DIRECT_YES,  /* O_DIRECT: the data is cached once, in the mount's */
	PGIOFS_DIRECT_AUTO, /* O_DIRECT unless the backing device is rotational */
};
extern const char *const pgiofs_backing_direct_names[]; /* NULL-terminated */

/* Which writes through the backing page cache are dropped from it once on
 * the disk (files.drop_behind). */
enum pgiofs_drop_behind {
	PGIOFS_DROP_NO,	  /* none */
	PGIOFS_DROP_YES,  /* relation files; other files past drop_behind_other_mb */
	PGIOFS_DROP_AUTO, /* the same, but relation files only where the backing
			   * device does not say it is rotational */
};
extern const char *const pgiofs_drop_behind_names[]; /* NULL-terminated */

/* Whether pgiofs sets the backing device's block queue for commits at
 * mount (files.device_queue; devqueue.c). */
enum pgiofs_device_queue {
	PGIOFS_DQ_NO,	/* leave it as it is */
	PGIOFS_DQ_YES,	/* set it on any block device */
	PGIOFS_DQ_AUTO, /* set it on a device that says it is rotational, as root */
};
extern const char *const pgiofs_device_queue_names[]; /* NULL-terminated */

/* How requests reach the daemon (fuse.uring). */
enum pgiofs_uring {
	PGIOFS_URING_NO,   /* read(2) and writev(2) on /dev/fuse */
	PGIOFS_URING_YES,  /* FUSE over io_uring, or no mount */
	PGIOFS_URING_AUTO, /* FUSE over io_uring where the kernel offers it */
};
extern const char *const pgiofs_uring_names[]; /* NULL-terminated */

/* Whether inodes are identified by file handles (files.inode_handles). */
enum pgiofs_inode_handles {
	PGIOFS_HANDLES_NO,   /* an O_PATH descriptor per inode the kernel knows */
	PGIOFS_HANDLES_YES,  /* file handles, or no mount */
	PGIOFS_HANDLES_AUTO, /* file handles where the privileges and file system allow */
};
extern const char *const pgiofs_inode_handles_names[]; /* NULL-terminated */

/* The I/O priority class of the threads that serve WAL mounts
 * (files.wal_io_class). */
enum pgiofs_io_class {
	PGIOFS_IO_INHERIT,     /* the daemon's own */
	PGIOFS_IO_REALTIME,    /* IOPRIO_CLASS_RT: served before best-effort I/O */
	PGIOFS_IO_BEST_EFFORT, /* IOPRIO_CLASS_BE */
};
extern const char *const pgiofs_io_class_names[]; /* NULL-terminated */

/* The tunables of pgiofs itself (see config/pgiofs.conf). */
struct pgiofs_settings {
	/* [fuse] */
	double entry_timeout;	  /* s: kernel caches names this long */
	double attr_timeout;	  /* s: kernel caches attributes this long */
	double negative_timeout;  /* s: kernel caches "no such file" this long */
	bool writeback_cache;	  /* kernel write-back page cache */
	bool keep_cache;	  /* keep page cache across opens */
	bool cache_readdir;	  /* kernel caches directory listings */
	bool flush;		  /* close() of a file is a FLUSH request */
	bool xattr;		  /* extended attributes passed through */
	int64_t max_write_kb;	  /* largest WRITE request */
	int64_t max_readahead_kb; /* largest readahead the daemon accepts */
	int64_t max_background;	  /* kernel's async request limit */
	bool async_read;	  /* readahead as background requests */
	int64_t max_threads;	  /* worker threads at most */
	int64_t max_idle_threads;
	int64_t worker_exit_ms;
	bool clone_fd;	       /* one /dev/fuse fd per worker */
	int64_t time_gran_ns;  /* timestamp granularity of the mount */
	int uring;	       /* enum pgiofs_uring */
	int64_t uring_threads; /* ring threads per CPU */
	int64_t uring_depth;   /* ring entries per ring thread */
	/* [bdi] (applied when running as root) */
	int64_t read_ahead_kb; /* mount's bdi read_ahead_kb; -1 = leave */
	int64_t max_ratio;     /* mount's bdi max_ratio (%); -1 = leave */
	int64_t strict_limit;  /* mount's bdi strict_limit 0/1; -1 = leave */
	/* [files] */
	int wal_mode;		      /* enum pgiofs_wal_mode */
	int64_t write_cache_mb;	      /* acknowledged writes held at most (no write-back cache) */
	int backing_direct;	      /* enum pgiofs_backing_direct */
	bool defer_times;	      /* the kernel's mtime applied after the next fsync */
	int drop_behind;	      /* enum pgiofs_drop_behind */
	int64_t drop_behind_other_mb; /* ... for other files, past this offset; -1 never */
	int device_queue;	      /* enum pgiofs_device_queue */
	int64_t device_write_depth;   /* mq-deadline's async_depth set with it; -1 auto, 0 leave */
	int64_t device_requests;      /* ... its nr_requests; -1 auto, 0 leave */
	int64_t device_request_kb;    /* the queue's max_sectors_kb; -1 auto, 0 leave */
	int64_t wal_segments_ahead;   /* WAL segments made ahead; -1 auto (walprep.c) */
	int64_t wal_segments_reserve; /* ... and while WAL is quiet; -1 auto (walprep.c) */
	int64_t space_guard_mb;	      /* below, writes go through (space.c); 0 off */
	int64_t sync_chunk_kb;	      /* a data file's fsync writes in chunks this large */
	int64_t checkpoint_writeback_kb; /* the checkpointer's fsync starts others' writeback */
	int64_t wal_nice;		 /* nice value of the WAL mounts' threads */
	int wal_io_class;		 /* enum pgiofs_io_class of the WAL mounts' threads */
	int inode_handles;		 /* enum pgiofs_inode_handles */
	int64_t inode_fds;		 /* descriptors of inodes cached at most */
	/* [stats] */
	bool stats_enabled; /* account every request for `pgiofs stat` */
	/* [fault] of pgiofs itself (tests; needs --allow-faults) */
	bool fault_no_passthrough; /* act as if the kernel had no passthrough */
	bool fault_uring_refused;  /* act as if the kernel refused the rings */
	/* [iosched], [device] */
	struct ios_settings ios;
};

/* pgiofs_conf() -- the tunables table: pgiofs's own and iosched's. */
const struct conf_table *pgiofs_conf(void);

/* pgiofs_settings_changed() -- the tunables of @s that differ from their
 * defaults, as "section.name=value" separated by spaces ("" if none), in
 * @out, cut after the last whole entry that fits. */
void pgiofs_settings_changed(const struct pgiofs_settings *s, char *out, size_t len);

/* pgiofs_fault_configured() -- whether @s injects any fault (iosched's
 * [fault] or pgiofs's own): pgiofs refuses that without --allow-faults. */
bool pgiofs_fault_configured(const struct pgiofs_settings *s);

/* What a directory is to PostgreSQL; children are classified by it. */
enum pgiofs_dirkind {
	PGIOFS_DIR_OTHER,
	PGIOFS_DIR_WAL,		       /* pg_wal */
	PGIOFS_DIR_XACT,	       /* pg_xact, pg_subtrans, pg_commit_ts,
					* pg_multixact/{offsets,members} */
	PGIOFS_DIR_MULTIXACT,	       /* pg_multixact */
	PGIOFS_DIR_BASE,	       /* base */
	PGIOFS_DIR_DATABASE,	       /* base/<oid>, global, tablespace db dirs */
	PGIOFS_DIR_TABLESPACE_VERSION, /* pg_tblspc/<oid>/PG_<ver>_<catver> */
	PGIOFS_DIR_TEMP,	       /* pgsql_tmp and below */
};

/* pgiofs_classify() -- the kind (directories) and I/O class (files) of
 * @name inside a directory of kind @parent. */
void pgiofs_classify(enum pgiofs_dirkind parent, const char *name, bool isdir,
		     enum pgiofs_dirkind *kind, enum ios_class *cls);

/* Tablespace oids of the two built-in tablespaces (pg_tablespace.dat). */
#define PGIOFS_DEFAULTTABLESPACE_OID 1663 /* pg_default: base/ */
#define PGIOFS_GLOBALTABLESPACE_OID  1664 /* pg_global: global/ */

/* pgiofs_dir_oids() -- what directory @name (of kind @kind, inside a
 * directory of kind @parent whose own numbers are @parent_spc and
 * @parent_oid) stands for: *@oid its name as a number (0 if not all
 * digits; 0 for global/), and *@spc the tablespace of a database directory
 * (base/N: pg_default, global: pg_global, pg_tblspc/T/PG_.../N: T) or the
 * tablespace a PG_<ver>_<catver> directory belongs to (its parent's
 * number: 0 when pgiofs reached it under a name that is not the oid). */
void pgiofs_dir_oids(enum pgiofs_dirkind parent, uint32_t parent_spc, uint32_t parent_oid,
		     const char *name, enum pgiofs_dirkind kind, uint32_t *spc, uint32_t *oid);

/* pgiofs_relfilenode() -- the relfilenode a relation file name stands for
 * ("16384", "16384.2", "16384_fsm", "16384_vm.1", "16384_init"), or 0. */
uint32_t pgiofs_relfilenode(const char *name);

/* pgiofs_check_paths() -- the refusals made before mounting: BACKING must be
 * an existing directory not already served by pgiofs; MOUNTPOINT an existing
 * directory, empty unless @nonempty; neither inside the other.  Returns 0 or
 * -errno with a message naming the path and the reason in @err. */
int pgiofs_check_paths(const char *backing, const char *mountpoint, bool nonempty, char *err,
		       size_t errlen);

/* pgiofs_main() -- the `pgiofs` command (mount, --help, --version; `pgiofs
 * stat MOUNTPOINT` asks a running daemon for its statistics). */
int pgiofs_main(int argc, char **argv);

/* pgiofs_page_kind() -- what a PostgreSQL 15 relation block is, from the
 * first 8192 bytes of @page (@len >= 8192): *@cls IOS_CLASS_HEAP with *@am
 * "heap" or "sequence", or IOS_CLASS_INDEX with *@am "btree", "hash",
 * "gist", "spgist", "gin", "brin", "bloom" or "unknown" (special space of
 * another access method).  Returns 0, -ENODATA for an all-zero (new) page,
 * or -EINVAL when the header is not a valid page header.  @cls and @am may
 * be NULL; *@am is a static string. */
int pgiofs_page_kind(const void *page, size_t len, enum ios_class *cls, const char **am);

#endif
