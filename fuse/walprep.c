/* walprep.c -- WAL segments made ahead (files.wal_segments_ahead).
 *
 * When PostgreSQL fills a WAL segment and finds no next one to reuse, the
 * backend that crossed the boundary makes it while holding WALWriteLock:
 * a temporary file, 16 MiB of zeros written and fsynced, a rename
 * (XLogFileInit()).  Every commit waits behind it; on a rotating disk under
 * an import that is the most a commit waits in PostgreSQL itself (0.3 s at
 * the disk's speed, seconds behind the import's writeback).  Checkpoints
 * recycle old segments into future names, but an import writes WAL faster
 * than checkpoints come, so it keeps meeting the boundary.
 *
 * pgiofs sees which segment PostgreSQL reaches: a lookup of a segment name
 * in a pg_wal directory (the WAL mounts keep no entries, so every open of a
 * segment is one) and the rename that installs one, from any process but
 * the checkpointer (which looks up future names to recycle old segments
 * into: those are not segments WAL has reached).  When segment N is met,
 * a thread of its own makes N+1 .. N+k that do not exist yet, the way
 * PostgreSQL would, with a first page header as a recycled segment has
 * (below): written with zeros (allocated blocks, so the
 * fdatasyncs of commits write no metadata) to a temporary file
 * (".pgiofs-xlogtemp"), written back in files.sync_chunk_kb chunks, two
 * at the device at most (16 MiB written back at once would put a third of
 * a second of a 2004 disk in front of every WAL write that comes then;
 * the chunks put two chunks), except the segment right after the one met
 * when it is not there yet (behind, the disk's pace is what counts),
 * fdatasync, then renamed into place without
 * replacing anything (RENAME_NOREPLACE: PostgreSQL may have made it
 * meanwhile) and the directory fsynced.  PostgreSQL then opens the file as
 * it opens a recycled segment.  A segment it had to make itself all the
 * same (the thread fell behind) is counted.  Nothing changes for recovery
 * or archiving: a zeroed segment beyond the end of WAL is what PostgreSQL
 * makes itself, and it removes or recycles spare future segments at its
 * checkpoints.  pg_wal holds up to k segments more than it would; none is
 * made where the file system would be left with less than eight times
 * what the k segments hold.
 *
 * Once no segment has been met and no WAL file synced through the mount
 * (an fsync request) for WP_QUIET_MS, the thread also makes the
 * segments up to files.wal_segments_reserve after the last one met (the
 * reserve), in chunks, ending at the first segment met meanwhile: a segment
 * made while WAL is written costs its size in zeros written beside it,
 * which an import into a cluster with no recycled segments yet pays for
 * every segment of WAL it writes.  While WAL is written only k are kept
 * ahead, so the next burst of WAL spends the reserve and the quiet after
 * it makes it up again.
 *
 * One thread per daemon serves the mount and its WAL mounts; a request
 * carries its own descriptor of the directory, so nothing of the inode
 * table is touched outside the request that made it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "pgiofs_i.h"

#define WP_TEMP	   ".pgiofs-xlogtemp"
#define WP_DIRS	   16 /* directories followed at once (clusters) */
#define WP_CHUNK   (1 << 20)
#define WP_AUTO	   4 /* segments ahead with files.wal_segments_ahead = -1 */
#define WP_RESERVE 16 /* made while WAL is quiet with files.wal_segments_reserve = -1 */
#define WP_QUIET_MS 5000 /* WAL is quiet: no segment reached, no WAL synced for this long */
#define SEG_NAMELEN 24

struct wp_dir {
	dev_t dev;
	ino_t ino;
	uint32_t tli;
	uint64_t upto; /* the segments up to it are there (an order key) */
};

struct pfs_walprep {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool joined; /* the thread has ended (the main thread's) */
	int ahead;
	int reserve; /* made once WAL is quiet (> ahead), or 0 */
	/* the request to serve: the newest segment met (one at a time: a
	 * newer one replaces one not yet taken) */
	bool pending;
	int dirfd;
	char name[SEG_NAMELEN + 1];
	struct wp_dir req; /* its directory, timeline and order key (upto) */
	struct wp_dir dirs[WP_DIRS];
	unsigned next_dir;
	bool low_space; /* the last segment was not made for want of space */
	off_t chunk;	/* segments written back in chunks this large; 0: whole */
	/* the last segment served, for the reserve: its directory (or -1) and
	 * whether the reserve after it is made (the thread's) */
	int rdirfd;
	char rname[SEG_NAMELEN + 1];
	bool rdone;
	uint64_t busy_ns; /* when WAL was last met or synced (CLOCK_MONOTONIC; atomic) */
	/* statistics (atomics) */
	uint64_t made, bytes, missed, errors, skipped, reserved;
	char note[256]; /* the last error, under lock */
};

/* The first page of a segment starts with PostgreSQL's long page header
 * (access/xlog_internal.h, XLogLongPageHeaderData): a segment made ahead
 * gets one, copied from the segment met with its address set to its own,
 * as a recycled segment has an old one.  A reader that takes the segment
 * size from the first segment file it finds (pg_waldump without a start
 * file) then finds it there too, where a file of zeros stops it; recovery
 * reads the header, then no record (a length of 0: the end of WAL), as it
 * does at the end of any segment PostgreSQL made. */
struct wal_long_header {
	uint16_t magic;
	uint16_t info;
	uint32_t tli;
	uint64_t pageaddr;
	uint32_t rem_len;
	uint32_t pad;
	uint64_t sysid;
	uint32_t seg_size;
	uint32_t blcksz;
};
_Static_assert(sizeof(struct wal_long_header) == 40, "XLogLongPageHeaderData is 40 bytes");
#define XLP_LONG_HEADER 0x0002

/* read_header() -- the long page header of segment @name of @size bytes
 * in @dirfd into @h; false if it has none (a file of zeros). */
static bool read_header(int dirfd, const char *name, off_t size, struct wal_long_header *h)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, h, sizeof(*h), 0);
	close(fd);
	return n == (ssize_t)sizeof(*h) && (h->info & XLP_LONG_HEADER) &&
	       h->seg_size == (uint64_t)size && h->blcksz >= 1024 && h->blcksz <= 65536 &&
	       (h->blcksz & (h->blcksz - 1)) == 0;
}

/* segment_name() -- whether @name is a WAL segment's (24 upper-case hex
 * digits: timeline, then the segment number's two halves); its parts. */
static bool segment_name(const char *name, uint32_t *tli, uint32_t *hi, uint32_t *lo)
{
	for (int i = 0; i < SEG_NAMELEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'A' && name[i] <= 'F')))
			return false;
	return name[SEG_NAMELEN] == '\0' && sscanf(name, "%8X%8X%8X", tli, hi, lo) == 3;
}

int pfs_walprep_resolve(const struct pfs *fs)
{
	int64_t set = fs->set.wal_segments_ahead;

	if (set >= 0)
		return (int)set;
	return fs->backing_medium == PFS_MEDIUM_ROTATIONAL ||
			       fs->backing_medium == PFS_MEDIUM_UNKNOWN
		   ? WP_AUTO
		   : 0;
}

int pfs_walprep_reserve(const struct pfs *fs)
{
	int ahead = pfs_walprep_resolve(fs);
	int64_t set = fs->set.wal_segments_reserve;

	if (ahead <= 0)
		return 0;
	if (set < 0)
		set = WP_RESERVE;
	return set > ahead ? (int)set : 0; /* no more than the segments ahead: none */
}

static void note_error(struct pfs_walprep *w, const char *what, const char *name, int err)
{
	pthread_mutex_lock(&w->lock);
	snprintf(w->note, sizeof(w->note), "%s %s: %s", what, name, strerror(err));
	pthread_mutex_unlock(&w->lock);
	__atomic_add_fetch(&w->errors, 1, __ATOMIC_RELAXED);
	log_msg(LOG_WARNING, "files.wal_segments_ahead: %s %s: %s", what, name, strerror(err));
}

/* fill() -- @size bytes of a segment into @fd: @first, then @zeros (each
 * WP_CHUNK bytes).  With @chunk, written back as it goes: each chunk is
 * started once written and waited for once the next one is, so at most two
 * chunks of the segment are at the device at once, where the fdatasync of
 * a segment written whole puts all of it there.  A wait reports a
 * write-back error of any chunk (the error is the file's, once: the
 * fdatasync after would no longer see it).  0 or -errno. */
static int fill(int fd, off_t size, off_t chunk, const char *first, const char *zeros)
{
	const unsigned wait =
	    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	off_t piece = chunk && chunk < WP_CHUNK ? chunk : WP_CHUNK;
	off_t off = 0, started = 0, waited = 0;

	while (off < size) {
		ssize_t n = pwrite(fd, off ? zeros : first,
				   (size_t)(size - off < piece ? size - off : piece), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		off += n;
		if (!chunk || (off - started < chunk && off < size))
			continue;
		if (sync_file_range(fd, started, off - started, SYNC_FILE_RANGE_WRITE) < 0 ||
		    (started > waited && sync_file_range(fd, waited, started - waited, wait) < 0))
			return -errno;
		waited = started;
		started = off;
	}
	if (started > waited && sync_file_range(fd, waited, started - waited, wait) < 0)
		return -errno;
	return 0;
}

/* make_one() -- segment @name in @dirfd, unless it exists, of the size,
 * owner and mode of segment @like: @first, then @zeros (WP_CHUNK bytes
 * each), written back in @chunk chunks (0: whole, at its fdatasync); 1 if
 * made, 0 if there, -errno. */
static int make_one(struct pfs_walprep *w, int dirfd, const char *name, const struct stat *like,
		    const char *first, const char *zeros, off_t chunk)
{
	off_t size = like->st_size;
	int fd, ret = 0;

	if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	fd = openat(dirfd, WP_TEMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) { /* a daemon's before this one */
		unlinkat(dirfd, WP_TEMP, 0);
		fd = openat(dirfd, WP_TEMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		ret = -errno;
		note_error(w, "cannot create a temporary file for", name, -ret);
		return ret;
	}
	/* PostgreSQL's, not the daemon's: the server opens it as its own */
	if ((geteuid() == 0 && fchown(fd, like->st_uid, like->st_gid) < 0) ||
	    fchmod(fd, like->st_mode & 07777) < 0)
		ret = -errno;
	if (ret == 0)
		ret = fill(fd, size, chunk, first, zeros);
	if (ret == 0 && fdatasync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret == 0 && renameat2(dirfd, WP_TEMP, dirfd, name, RENAME_NOREPLACE) < 0)
		ret = -errno;
	if (ret < 0) {
		unlinkat(dirfd, WP_TEMP, 0);
		if (ret == -EEXIST) /* PostgreSQL made it meanwhile */
			return 0;
		note_error(w, "cannot make", name, -ret);
		return ret;
	}
	if (fsync(dirfd) < 0) {
		ret = -errno;
		note_error(w, "cannot sync the directory of", name, -ret);
		return ret;
	}
	__atomic_add_fetch(&w->made, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->bytes, (uint64_t)size, __ATOMIC_RELAXED);
	return 1;
}

/* room_for() -- whether a segment of @size may be made in @dirfd: after
 * it, the file system must keep free eight times what the segments ahead
 * hold (512 MiB with 4 of 16 MiB), so that segments made ahead never take
 * the last of a filling disk, which PostgreSQL needs for data and for the
 * WAL it keeps until its next checkpoint. */
static bool room_for(struct pfs_walprep *w, int dirfd, off_t size)
{
	uint64_t keep = (uint64_t)size * (uint64_t)w->ahead * 8, avail;
	struct statvfs sv;

	if (fstatvfs(dirfd, &sv) < 0)
		return true; /* then ENOSPC says it */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail >= keep + (uint64_t)size) {
		w->low_space = false;
		return true;
	}
	__atomic_add_fetch(&w->skipped, 1, __ATOMIC_RELAXED);
	if (!w->low_space)
		log_msg(LOG_INFO,
			"files.wal_segments_ahead: %.0f MiB free, under the %.0f MiB kept free: no "
			"segment made ahead until there is more",
			(double)avail / 1048576.0, (double)(keep + (uint64_t)size) / 1048576.0);
	w->low_space = true;
	return false;
}

/* serve() -- the segments after segment @name in @dirfd (w->ahead, or
 * with @quiet w->reserve), of its size, with the header of @name or of the
 * segment before it (one that PostgreSQL has written); none without one.
 * Whether all of them are there now: a request that comes meanwhile ends
 * it early, and with @quiet so does WAL met or synced. */
static bool serve(struct pfs_walprep *w, int dirfd, const char *name, char *zeros, char *first,
		  bool quiet)
{
	int count = quiet ? w->reserve : w->ahead;
	uint64_t busy = __atomic_load_n(&w->busy_ns, __ATOMIC_RELAXED);
	struct wal_long_header h;
	uint32_t tli, hi, lo;
	struct stat st;
	uint64_t per_id, segno;
	bool header;

	if (!segment_name(name, &tli, &hi, &lo) ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	/* wal_segment_size: a power of two from 1 MiB to 1 GiB; anything
	 * else is a segment still being written */
	if (st.st_size < (1 << 20) || st.st_size > (1 << 30) || (st.st_size & (st.st_size - 1)))
		return false;
	per_id = 0x100000000ull / (uint64_t)st.st_size;
	if (lo >= per_id)
		return false;
	segno = (uint64_t)hi * per_id + lo;
	header = read_header(dirfd, name, st.st_size, &h);
	if (!header && segno > 0) {
		char prev[SEG_NAMELEN + 1];

		snprintf(prev, sizeof(prev), "%08X%08X%08X", tli, (uint32_t)((segno - 1) / per_id),
			 (uint32_t)((segno - 1) % per_id));
		header = read_header(dirfd, prev, st.st_size, &h);
	}
	if (!header) /* initdb's first segment, not written yet */
		return false;
	for (int i = 1; i <= count; i++) {
		uint64_t n = segno + (uint64_t)i;
		char next[SEG_NAMELEN + 1];
		int made;

		if (!room_for(w, dirfd, st.st_size))
			return false;
		snprintf(next, sizeof(next), "%08X%08X%08X", tli, (uint32_t)(n / per_id),
			 (uint32_t)(n % per_id));
		h.info = XLP_LONG_HEADER;
		h.pageaddr = n * (uint64_t)st.st_size;
		h.rem_len = 0;
		memcpy(first, &h, sizeof(h));
		/* the next segment, if it is not there yet, is the one
		 * PostgreSQL needs once the segment met is full: made whole,
		 * at the disk's pace, not the chunks' (behind on them,
		 * PostgreSQL would make it itself while every commit waits) */
		made = make_one(w, dirfd, next, &st, first, zeros, i == 1 && !quiet ? 0 : w->chunk);
		if (made < 0)
			return false;
		if (made && quiet)
			__atomic_add_fetch(&w->reserved, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&w->lock);
		if (w->stop || (w->pending && i < count) || /* unmounting, or moved on */
		    (quiet && __atomic_load_n(&w->busy_ns, __ATOMIC_RELAXED) != busy)) {
			pthread_mutex_unlock(&w->lock);
			return false;
		}
		pthread_mutex_unlock(&w->lock);
	}
	return true;
}

static uint64_t mono_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* wait_quiet() -- under w->lock: whether WAL has been quiet, no segment
 * met and no WAL synced for WP_QUIET_MS, and the thread may make the
 * reserve; false when woken before that (a request, or stopping). */
static bool wait_quiet(struct pfs_walprep *w)
{
	for (;;) {
		uint64_t until = __atomic_load_n(&w->busy_ns, __ATOMIC_RELAXED) +
				 (uint64_t)WP_QUIET_MS * 1000000ull;
		struct timespec ts;

		if (w->pending || w->stop)
			return false;
		if (mono_ns(CLOCK_MONOTONIC) >= until)
			return true;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) != ETIMEDOUT)
			return false;
	}
}

static void *walprep_thread(void *arg)
{
	struct pfs_walprep *w = arg;
	char *zeros = calloc(1, WP_CHUNK), *first = calloc(1, WP_CHUNK);

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if (!w->pending && w->rdirfd >= 0 && !w->rdone) {
			char name[SEG_NAMELEN + 1];
			uint64_t busy;

			if (!wait_quiet(w))
				continue;
			memcpy(name, w->rname, sizeof(name));
			w->rdone = true;
			busy = __atomic_load_n(&w->busy_ns, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&w->lock);
			if (zeros && first)
				serve(w, w->rdirfd, name, zeros, first, true);
			pthread_mutex_lock(&w->lock);
			/* WAL written meanwhile ended it: again once quiet */
			if (__atomic_load_n(&w->busy_ns, __ATOMIC_RELAXED) != busy)
				w->rdone = false;
			continue;
		}
		if (!w->pending) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		int dirfd = w->dirfd;
		char name[SEG_NAMELEN + 1];
		struct wp_dir req = w->req;
		bool done;

		memcpy(name, w->name, sizeof(name));
		w->pending = false;
		pthread_mutex_unlock(&w->lock);
		done = zeros && first && serve(w, dirfd, name, zeros, first, false);
		pthread_mutex_lock(&w->lock);
		/* the reserve is made after the newest segment served, in
		 * its directory (rdirfd is the thread's alone) */
		if (w->reserve > 0) {
			if (w->rdirfd >= 0)
				close(w->rdirfd);
			w->rdirfd = dirfd;
			memcpy(w->rname, name, sizeof(w->rname));
			w->rdone = false;
		} else {
			close(dirfd);
		}
		/* met far enough now: a lookup of the same segments makes
		 * nothing more (until then, each asks again) */
		for (unsigned i = 0; done && i < WP_DIRS; i++) {
			struct wp_dir *d = &w->dirs[i];

			if (d->dev == req.dev && d->ino == req.ino &&
			    (d->tli != req.tli || d->upto < req.upto)) {
				d->tli = req.tli;
				d->upto = req.upto;
			}
		}
	}
	if (w->rdirfd >= 0) {
		close(w->rdirfd);
		w->rdirfd = -1;
	}
	pthread_mutex_unlock(&w->lock);
	free(zeros);
	free(first);
	return NULL;
}

int pfs_walprep_start(struct pfs *fs)
{
	struct pfs_walprep *w;
	int ahead = pfs_walprep_resolve(fs), ret;
	pthread_condattr_t ca;

	if (ahead <= 0)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ahead = ahead;
	w->reserve = pfs_walprep_reserve(fs);
	w->chunk = (off_t)fs->set.sync_chunk_kb << 10;
	w->dirfd = -1;
	w->rdirfd = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca); /* the reserve's wait for a quiet WAL */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&w->thread, NULL, walprep_thread, w);
	if (ret) {
		log_msg(LOG_WARNING, "files.wal_segments_ahead: cannot start its thread: %s",
			strerror(ret));
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -ret;
	}
	pthread_setname_np(w->thread, "pgiofs-walprep");
	__atomic_store_n(&fs->walprep, w, __ATOMIC_RELEASE);
	return 0;
}

static void stop_w(struct pfs_walprep *w)
{
	if (!w || w->joined)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->joined = true;
}

void pfs_walprep_stop(struct pfs *fs)
{
	stop_w(__atomic_load_n(&fs->walprep, __ATOMIC_ACQUIRE));
}

void pfs_walprep_free(struct pfs *fs)
{
	struct pfs_walprep *w = __atomic_exchange_n(&fs->walprep, NULL, __ATOMIC_ACQ_REL);

	if (!w)
		return;
	stop_w(w);
	if (w->pending) /* met after the thread ended */
		close(w->dirfd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

bool pfs_walprep_active(const struct pfs *fs, const struct pfs_inode *dir)
{
	return __atomic_load_n(&fs->core->walprep, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&dir->kind, __ATOMIC_RELAXED) == PGIOFS_DIR_WAL;
}

void pfs_walprep_seen(struct pfs *fs, struct pfs_inode *dir, const char *name, const char *from,
		      pid_t pid)
{
	struct pfs_walprep *w = __atomic_load_n(&fs->core->walprep, __ATOMIC_ACQUIRE);
	uint32_t tli, hi, lo;
	struct wp_dir *d = NULL;
	uint64_t key;
	int dirfd;

	if (!w || __atomic_load_n(&dir->kind, __ATOMIC_RELAXED) != PGIOFS_DIR_WAL ||
	    !segment_name(name, &tli, &hi, &lo))
		return;
	__atomic_store_n(&w->busy_ns, mono_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
	/* an order of segments on any segment size (hi counts 4 GiB of WAL);
	 * where lo wraps, a segment only looks further than it is */
	key = ((uint64_t)hi << 32) | lo;
	if (from && strncmp(from, "xlogtemp.", 9) == 0)
		__atomic_add_fetch(&w->missed, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < WP_DIRS; i++)
		if (w->dirs[i].dev == dir->dev && w->dirs[i].ino == dir->ino) {
			d = &w->dirs[i];
			break;
		}
	if (!d) {
		d = &w->dirs[w->next_dir++ % WP_DIRS];
		*d = (struct wp_dir){.dev = dir->dev, .ino = dir->ino};
	}
	/* made or met far enough already (a new timeline starts afresh) */
	if (d->tli == tli && d->upto >= key + (uint64_t)w->ahead) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	pthread_mutex_unlock(&w->lock);
	/* the checkpointer recycles old segments into future names: it looks
	 * them up one after the other until a name is free, opens and renames;
	 * made ahead from there, each name it meets would be followed by more,
	 * up to its limit.  Only what the writers of WAL meet counts. */
	if (pid > 0 && pfs_ckpt_is_checkpointer(pid))
		return;
	dirfd = pfs_inode_open(fs, dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->pending)
		close(w->dirfd);
	w->pending = true;
	w->dirfd = dirfd;
	memcpy(w->name, name, sizeof(w->name));
	w->req = (struct wp_dir){
	    .dev = dir->dev, .ino = dir->ino, .tli = tli, .upto = key + (uint64_t)w->ahead};
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void pfs_walprep_synced(struct pfs *fs)
{
	struct pfs_walprep *w = __atomic_load_n(&fs->core->walprep, __ATOMIC_ACQUIRE);

	if (w && w->reserve)
		__atomic_store_n(&w->busy_ns, mono_ns(CLOCK_MONOTONIC_COARSE), __ATOMIC_RELAXED);
}

int pfs_walprep_json(const struct pfs *fs, char *buf, size_t len)
{
	struct pfs_walprep *w = __atomic_load_n(&fs->walprep, __ATOMIC_ACQUIRE);
	char note[600] = "\"\"";

	if (w) {
		pthread_mutex_lock(&w->lock);
		json_str_format(note, sizeof(note), w->note);
		pthread_mutex_unlock(&w->lock);
	}
	return snprintf(
	    buf, len,
	    "\"wal_segments_ahead\":{\"setting\":%" PRId64 ",\"ahead\":%d,\"reserve\":%d,"
	    "\"made\":%" PRIu64 ",\"reserved\":%" PRIu64 ",\"bytes\":%" PRIu64
	    ",\"missed\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"skipped\":%" PRIu64 ",\"note\":%s}",
	    fs->set.wal_segments_ahead, w ? w->ahead : 0, w ? w->reserve : 0,
	    w ? __atomic_load_n(&w->made, __ATOMIC_RELAXED) : 0,
	    w ? __atomic_load_n(&w->reserved, __ATOMIC_RELAXED) : 0,
	    w ? __atomic_load_n(&w->bytes, __ATOMIC_RELAXED) : 0,
	    w ? __atomic_load_n(&w->missed, __ATOMIC_RELAXED) : 0,
	    w ? __atomic_load_n(&w->errors, __ATOMIC_RELAXED) : 0,
	    w ? __atomic_load_n(&w->skipped, __ATOMIC_RELAXED) : 0, note);
}
