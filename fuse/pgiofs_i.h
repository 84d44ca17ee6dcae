/*
 * pgiofs_i.h -- internals shared by the files of fuse/ (not a public header).
 */
#ifndef PGIOFS_PGIOFS_I_H
#define PGIOFS_PGIOFS_I_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
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
	mode_t fmt;	  /* S_IFMT bits */
	uint8_t kind;	  /* enum pgiofs_dirkind (directories) */
	uint8_t cls;	  /* enum ios_class (files) */
	uint64_t nlookup; /* under pfs.lock */
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
};

extern const struct fuse_lowlevel_ops pfs_ops;

/* pfs_reload() -- adopt new settings: the running scheduler is drained
 * (so nothing it holds can be overtaken) and replaced.  0 or -errno (the old
 * scheduler and settings stay). */
int pfs_reload(struct pfs *fs, const struct pgiofs_settings *ns);

/* pfs_init_root() -- open the backing root; returns 0 or -errno. */
int pfs_init_root(struct pfs *fs, const char *backing);
/* pfs_cleanup() -- close every inode descriptor and free the table. */
void pfs_cleanup(struct pfs *fs);

/* Logging: stderr in the foreground, syslog once daemonized. */
void pfs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pfs_log_to_syslog(void);

/* wire.c: raw protocol hooks (see there for why) */
int pfs_wire_attach(struct fuse_session *se);
bool pfs_wire_kill_suidgid(void);

/* mount.c */
int pfs_mount_dev(const char *mountpoint, unsigned *major, unsigned *minor);
void pfs_tune_bdi(const struct pfs *fs, const char *mountpoint);

#endif
