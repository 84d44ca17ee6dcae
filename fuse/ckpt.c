/*
 * ckpt.c -- files.checkpoint_writeback_kb: the checkpointer's first fsync
 * starts the backing writeback of every relation file written since.
 *
 * On a bare disk PostgreSQL asks the kernel to start writing a data file's
 * pages while a checkpoint writes them (checkpoint_flush_after:
 * sync_file_range), and the file system allocates their blocks then (ext4
 * and xfs allocate at writeback), all in one journal transaction; the first
 * fsync of the checkpoint commits it and the others find nothing left to
 * commit.  Through FUSE those hints only move the pages from the mount's
 * page cache to pgiofs, which writes them into the backing page cache, and
 * the kernel's writeback requests carry no process id, so pgiofs cannot
 * tell them from other writeback.  Each fsync of the checkpoint then
 * allocates its own file and commits the journal for it alone: a seek to
 * the journal and a cache flush per file (251 commits against 8 for a
 * checkpoint after CREATE DATABASE on ext4).
 *
 * What pgiofs can tell is who asks for an fsync: the checkpointer's
 * process title is "postgres: checkpointer" (or "postgres: CLUSTER:
 * checkpointer").  So every relation file (heap, index, free space and
 * visibility maps) written through the backing page cache is noted, and an
 * fsync from the checkpointer starts the writeback of all the noted files
 * (sync_file_range(SYNC_FILE_RANGE_WRITE), which does not wait for it)
 * before its own: what the hints would have done, at the moment the
 * checkpoint wants every one of them on disk.  Only files written no more
 * than files.checkpoint_writeback_kb since: for a large file the journal
 * commit is a small part of its fsync, and starting all of a checkpoint's
 * large files at once queues their data in front of every commit's WAL
 * flush (bench/mixed.sh: commit p99 1.23x, tps 0.88x without the limit);
 * they are written by their own fsyncs, in files.sync_chunk_kb chunks.
 * Nothing is acknowledged differently: each file's fsync still waits for
 * its data, and a writeback error stays in the backing file for that fsync
 * to report.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CKPT_BATCH 64 /* files whose writeback is started per hold of the lock */

/* relation() -- written by PostgreSQL's buffer manager and synced by the
 * checkpointer: the files whose writeback its hints start. */
static bool relation(enum ios_class cls)
{
	return cls == IOS_CLASS_HEAP || cls == IOS_CLASS_INDEX || cls == IOS_CLASS_FSM ||
	       cls == IOS_CLASS_VM;
}

void pfs_ckpt_init(struct pfs *fs)
{
	pthread_mutex_init(&fs->ckpt.lock, NULL);
	fs->ckpt.head = NULL;
	fs->ckpt.starts = fs->ckpt.files = fs->ckpt.large = 0;
	fs->ckpt.pid = 0;
}

void pfs_ckpt_note(struct pfs *fs, struct pfs_inode *in, enum ios_class cls, bool buffered,
		   size_t len)
{
	struct pfs *core = fs->core;

	if (!buffered || !relation(cls) || !core->set.checkpoint_writeback_kb)
		return;
	__atomic_add_fetch(&in->ckpt_bytes, len, __ATOMIC_RELAXED);
	if (__atomic_load_n(&in->ckpt_noted, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&core->ckpt.lock);
	if (!in->ckpt_noted) {
		in->ckpt_prev = NULL;
		in->ckpt_next = core->ckpt.head;
		if (core->ckpt.head)
			core->ckpt.head->ckpt_prev = in;
		__atomic_store_n(&core->ckpt.head, in, __ATOMIC_RELEASE);
		__atomic_store_n(&in->ckpt_noted, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&core->ckpt.lock);
}

/* unlink__() -- take @in off the list (under ckpt.lock). */
static void unlink__(struct pfs *core, struct pfs_inode *in)
{
	if (in->ckpt_prev)
		in->ckpt_prev->ckpt_next = in->ckpt_next;
	else
		__atomic_store_n(&core->ckpt.head, in->ckpt_next, __ATOMIC_RELEASE);
	if (in->ckpt_next)
		in->ckpt_next->ckpt_prev = in->ckpt_prev;
	in->ckpt_prev = in->ckpt_next = NULL;
	__atomic_store_n(&in->ckpt_bytes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&in->ckpt_noted, false, __ATOMIC_RELEASE);
}

void pfs_ckpt_forget(struct pfs *fs, struct pfs_inode *in)
{
	struct pfs *core = fs->core;

	if (!__atomic_load_n(&in->ckpt_noted, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&core->ckpt.lock);
	if (in->ckpt_noted)
		unlink__(core, in);
	pthread_mutex_unlock(&core->ckpt.lock);
}

bool pfs_ckpt_is_checkpointer(pid_t pid)
{
	char path[64], title[128];
	const char *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, title, sizeof(title) - 1);
	close(fd);
	if (n <= 0)
		return false;
	title[n] = '\0'; /* the title is argv[0]: up to its first NUL */
	if (strncmp(title, "postgres: ", 10) != 0)
		return false;
	/* "postgres: checkpointer" or "postgres: CLUSTER: checkpointer", the
	 * whole title but for the space PostgreSQL 15 leaves at its end (a
	 * backend's is "postgres: USER DATABASE HOST STATE") */
	n = (ssize_t)strlen(title);
	while (n > 0 && title[n - 1] == ' ')
		title[--n] = '\0';
	p = title + n - 12;
	return n >= 22 && strcmp(p, "checkpointer") == 0 &&
	       (p == title + 10 || (p[-2] == ':' && p[-1] == ' '));
}

/* checkpointer() -- pfs_ckpt_is_checkpointer(), remembering the last
 * checkpointer found (a checkpoint makes hundreds of fsyncs; a reused pid
 * costs at most one needless start) */
static bool checkpointer(struct pfs *core, pid_t pid)
{
	if (pid > 0 && __atomic_load_n(&core->ckpt.pid, __ATOMIC_RELAXED) == pid)
		return true;
	if (!pfs_ckpt_is_checkpointer(pid))
		return false;
	__atomic_store_n(&core->ckpt.pid, pid, __ATOMIC_RELAXED);
	return true;
}

/* take_batch__() -- open up to CKPT_BATCH of the noted files into @fds and
 * take them off the list (the large ones too, counted in @large), @budget
 * at most; caller holds ckpt.lock.  Returns how many were opened. */
static size_t take_batch__(struct pfs *core, uint64_t max, int *fds, size_t *budget, size_t *large)
{
	struct pfs_inode *in;
	size_t n = 0;

	/* open each noted file under the lock, and only then take it off
	 * the list: an inode on the list is not freed meanwhile (forgetting
	 * it takes the lock) */
	while (n < CKPT_BATCH && *budget && (in = core->ckpt.head)) {
		int fd;

		--*budget;
		if (__atomic_load_n(&in->ckpt_bytes, __ATOMIC_RELAXED) > max) {
			unlink__(core, in); /* its own fsync writes it */
			++*large;
			continue;
		}
		fd = pfs_inode_open(core, in, O_RDONLY | O_NOATIME);
		if (fd == -EPERM) /* O_NOATIME: not the file's owner */
			fd = pfs_inode_open(core, in, O_RDONLY);
		unlink__(core, in); /* the last use of @in */
		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}

size_t pfs_ckpt_start(struct pfs *fs, pid_t pid, enum ios_class cls)
{
	struct pfs *core = fs->core;
	const uint64_t max = (uint64_t)core->set.checkpoint_writeback_kb << 10;
	struct pfs_inode *in;
	size_t n, i, all = 0, large = 0, budget = 0;
	int fds[CKPT_BATCH];

	/* the checkpointer syncs commit status and WAL too, before the
	 * relation files it has written: their fsyncs (every commit's among
	 * them) are not asked who they come from */
	if (!relation(cls) || !max || !__atomic_load_n(&core->ckpt.head, __ATOMIC_ACQUIRE) ||
	    !checkpointer(core, pid))
		return 0;
	/* the files noted now, in batches: a checkpoint after thousands of
	 * new relations must not hold a descriptor for each at once; files
	 * noted meanwhile wait for the next start */
	pthread_mutex_lock(&core->ckpt.lock);
	for (in = core->ckpt.head; in; in = in->ckpt_next)
		budget++;
	do {
		n = take_batch__(core, max, fds, &budget, &large);
		pthread_mutex_unlock(&core->ckpt.lock);
		for (i = 0; i < n; i++) {
			/* an error of the writeback stays in the backing file
			 * for the fsync of it that follows, as the kernel keeps
			 * them */
			(void)sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
			close(fds[i]);
		}
		all += n;
		pthread_mutex_lock(&core->ckpt.lock);
	} while (budget && core->ckpt.head);
	pthread_mutex_unlock(&core->ckpt.lock);
	__atomic_add_fetch(&core->ckpt.starts, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&core->ckpt.files, all, __ATOMIC_RELAXED);
	__atomic_add_fetch(&core->ckpt.large, large, __ATOMIC_RELAXED);
	return all;
}
