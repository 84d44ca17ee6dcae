/*
 * options.c -- the tunables of pgiofs: one table drives config/pgiofs.conf
 * parsing, --set overrides, --help and --print-config (see conf.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgiofs.h"

#define F(x) offsetof(struct pgiofs_settings, x)

const char *const pgiofs_wal_mode_names[] = {
    [PGIOFS_WAL_CACHED] = "cached",
    [PGIOFS_WAL_DIRECT] = "direct",
    [PGIOFS_WAL_PASSTHROUGH] = "passthrough",
    NULL,
};

const char *const pgiofs_backing_direct_names[] = {
    [PGIOFS_DIRECT_NO] = "no",
    [PGIOFS_DIRECT_YES] = "yes",
    [PGIOFS_DIRECT_AUTO] = "auto",
    NULL,
};

const char *const pgiofs_drop_behind_names[] = {
    [PGIOFS_DROP_NO] = "no",
    [PGIOFS_DROP_YES] = "yes",
    [PGIOFS_DROP_AUTO] = "auto",
    NULL,
};

const char *const pgiofs_device_queue_names[] = {
    [PGIOFS_DQ_NO] = "no",
    [PGIOFS_DQ_YES] = "yes",
    [PGIOFS_DQ_AUTO] = "auto",
    NULL,
};

const char *const pgiofs_io_class_names[] = {
    [PGIOFS_IO_INHERIT] = "inherit",
    [PGIOFS_IO_REALTIME] = "realtime",
    [PGIOFS_IO_BEST_EFFORT] = "best-effort",
    NULL,
};

const char *const pgiofs_inode_handles_names[] = {
    [PGIOFS_HANDLES_NO] = "no",
    [PGIOFS_HANDLES_YES] = "yes",
    [PGIOFS_HANDLES_AUTO] = "auto",
    NULL,
};

const char *const pgiofs_uring_names[] = {
    [PGIOFS_URING_NO] = "no",
    [PGIOFS_URING_YES] = "yes",
    [PGIOFS_URING_AUTO] = "auto",
    NULL,
};

static const struct conf_tunable rows[] = {
    {"fuse", "entry_timeout", CONF_DOUBLE, "s", "86400", 0, 1e9, NULL, F(entry_timeout),
     "How long the kernel may cache a name; safe to be long because pgiofs is the only "
     "writer of the backing directory while mounted."},
    {"fuse", "attr_timeout", CONF_DOUBLE, "s", "86400", 0, 1e9, NULL, F(attr_timeout),
     "How long the kernel may cache attributes (size, mode, times)."},
    {"fuse", "negative_timeout", CONF_DOUBLE, "s", "60", 0, 1e9, NULL, F(negative_timeout),
     "How long the kernel may cache that a name does not exist."},
    {"fuse", "writeback_cache", CONF_BOOL, "", "yes", 0, 0, NULL, F(writeback_cache),
     "Let the kernel gather small writes in its page cache and send them in large "
     "WRITE requests (PostgreSQL writes 8 KiB blocks).  Without it pgiofs is the write "
     "cache itself (files.write_cache_mb), and files.wal_mode = passthrough needs no WAL "
     "mount of its own."},
    {"fuse", "keep_cache", CONF_BOOL, "", "yes", 0, 0, NULL, F(keep_cache),
     "Keep a file's cached pages when it is opened again."},
    {"fuse", "cache_readdir", CONF_BOOL, "", "yes", 0, 0, NULL, F(cache_readdir),
     "Let the kernel keep directory listings in its cache across opens (FOPEN_CACHE_DIR) "
     "and list a directory again without asking pgiofs until the mount changes it; like "
     "entry_timeout, right while pgiofs is the only writer of the backing directory.  No "
     "OPENDIR reaches pgiofs then, except where the backing directory offsets count "
     "entries in a list (overlayfs, FUSE, ramfs, SMB, tmpfs before Linux 6.6): there each "
     "open directory keeps a stream of its own, so that a listing under way skips no "
     "name when others are removed."},
    {"fuse", "flush", CONF_BOOL, "", "no", 0, 0, NULL, F(flush),
     "Make every close() of a file a FLUSH request to pgiofs, which waits for the file's "
     "writes pgiofs acknowledged early and returns what closing a duplicate of the backing "
     "descriptor returns (network filesystems report write errors there).  No: the first "
     "FLUSH is answered ENOSYS and the kernel sends none after it, one round trip less per "
     "close; the kernel still writes a file's dirty pages at close and close() still returns "
     "their errors, and an early acknowledged write's error, or the backing close's, goes to "
     "the next fsync of the file."},
    {"fuse", "xattr", CONF_BOOL, "", "yes", 0, 0, NULL, F(xattr),
     "Pass extended attributes (getfattr, setfattr, ACLs, security labels) through to the "
     "backing files.  No: the first request for one is answered ENOSYS, after which the "
     "kernel sends none on that connection and answers EOPNOTSUPP itself; PostgreSQL uses "
     "none, and the kernel no longer asks for security.capability at the first write of "
     "every file (a round trip per new relation file).  Takes effect at the next mount."},
    {"fuse", "max_write_kb", CONF_INT, "KiB", "1024", 4, 1024, NULL, F(max_write_kb),
     "Largest WRITE request the kernel sends."},
    {"fuse", "max_readahead_kb", CONF_INT, "KiB", "1024", 0, 1048576, NULL, F(max_readahead_kb),
     "Largest readahead the daemon accepts (the kernel's readahead is the smaller of this "
     "and bdi.read_ahead_kb)."},
    {"fuse", "max_background", CONF_INT, "", "64", 1, 65535, NULL, F(max_background),
     "Asynchronous requests (readahead, writeback) the kernel keeps in flight to the "
     "daemon; the kernel's default of 12 queues writeback in front of the daemon.  Each "
     "queued WRITE keeps its 1 MiB receive buffer, so this bounds the daemon's memory: 64 "
     "keeps its peak RSS near 80 MiB under a bulk import (256: 260 MiB) with no loss of "
     "commit latency or import speed."},
    {"fuse", "async_read", CONF_BOOL, "", "yes", 0, 0, NULL, F(async_read),
     "Let the kernel send reads as background requests (FUSE_ASYNC_READ), as it sends "
     "writeback.  Background requests share max_background: once the writeback the "
     "daemon holds fills it, a backend's read of a page it needs waits in the kernel "
     "(fuse_get_req) until writes complete.  No: every read is a request of its own, "
     "sent at once; the kernel's readahead is then read in the reader's time.  Takes "
     "effect at the next mount."},
    {"fuse", "max_threads", CONF_INT, "", "32", 1, 1024, NULL, F(max_threads),
     "Worker threads serving /dev/fuse at most.  A worker that takes a request while no "
     "other waits for one starts another, up to this many."},
    {"fuse", "max_idle_threads", CONF_INT, "", "8", 1, 1024, NULL, F(max_idle_threads),
     "Idle worker threads kept ready: a worker that finishes a request while this many "
     "others wait for one exits (at most one per fuse.worker_exit_ms)."},
    {"fuse", "worker_exit_ms", CONF_INT, "ms", "100", 0, 60000, NULL, F(worker_exit_ms),
     "At most one worker thread exits per this many milliseconds, so that the pool "
     "shrinks back to max_idle_threads slowly rather than at every lull.  Bursts of "
     "background WRITEs otherwise grow and shrink it hundreds of times a second (a "
     "thread, its stack and its 1 MiB receive buffer made and unmapped each time): "
     "dbench with 4 clients ran 1.3x faster with 100 than with 0.  0: exit at once."},
    {"fuse", "clone_fd", CONF_BOOL, "", "no", 0, 0, NULL, F(clone_fd),
     "Give each worker thread its own /dev/fuse descriptor (FUSE_DEV_IOC_CLONE), so "
     "that the kernel's list of requests being processed is not one for all; replies go "
     "back through the descriptor of their request.  On two CPUs it changes nothing "
     "measurable, so it is off; it may help with many."},
    {"fuse", "uring", CONF_ENUM, "", "auto", 0, 0, pgiofs_uring_names, F(uring),
     "FUSE over io_uring: requests reach the daemon through ring entries, one queue per "
     "CPU served by threads on that CPU, instead of read(2) and writev(2) on /dev/fuse: "
     "one system call per request instead of two, and the request is served on the CPU of "
     "the process that made it.  auto: where the kernel offers it (Linux 6.14 or later with "
     "/sys/module/fuse/parameters/enable_uring = Y, which pgiofs does not set itself); "
     "yes: refuse to mount without it; no: /dev/fuse only.  Fixed at mount."},
    {"fuse", "uring_threads", CONF_INT, "", "1", 1, 16, NULL, F(uring_threads),
     "Ring threads per CPU with fuse.uring.  A thread serves its entries one request at a "
     "time; more threads let a request that blocks (a cold lookup, an fsync of a "
     "directory) not hold up the next one from the same CPU."},
    {"fuse", "uring_depth", CONF_INT, "", "8", 1, 64, NULL, F(uring_depth),
     "Ring entries per ring thread with fuse.uring: requests of its CPU a thread can hold "
     "at once (queued reads and writes keep theirs until they complete).  Each entry has "
     "a buffer of fuse.max_write_kb."},
    {"fuse", "time_gran_ns", CONF_INT, "ns", "1", 1, 1000000000, NULL, F(time_gran_ns),
     "Timestamp granularity of the mount: 1, exact nanosecond timestamps as on ext4 (cp -a, "
     "rsync and tar preserve them).  Through the write-back cache the kernel keeps mtime "
     "itself and sends it before every fsync whose file's mtime changed, which with "
     "nanosecond timestamps is nearly every commit of cached WAL "
     "(0.6 to 1 SETATTR per commit, measured); WAL opened direct or in "
     "passthrough (files.wal_mode) never goes that way.  1000000000 (whole seconds, as on "
     "ext3) makes those round trips rare for files.wal_mode = cached."},
    {"bdi", "read_ahead_kb", CONF_INT, "KiB", "1024", -1, 65536, NULL, F(read_ahead_kb),
     "Readahead window of the mount (/sys/class/bdi/<dev>/read_ahead_kb), set when "
     "running as root; -1 leaves the kernel's value."},
    {"bdi", "max_ratio", CONF_INT, "%", "50", -1, 100, NULL, F(max_ratio),
     "Share of the dirty page limit the mount may use (FUSE's default is 1%, which "
     "throttles writers at a few MiB); set when running as root; -1 leaves it."},
    {"bdi", "strict_limit", CONF_INT, "", "-1", -1, 1, NULL, F(strict_limit),
     "Whether the mount is held to its own dirty limit (FUSE sets 1); set when running "
     "as root; -1 leaves the kernel's value."},
    {"files", "wal_mode", CONF_ENUM, "", "passthrough", 0, 0, pgiofs_wal_mode_names, F(wal_mode),
     "How pg_wal segments are opened: cached (through the mount's page cache, like every "
     "file), direct (direct_io: every WAL write is a request to pgiofs, acknowledged once "
     "pgiofs has the data unless it is O_DSYNC) or passthrough (FUSE passthrough: the "
     "kernel reads and writes the backing file itself, only opens and fsyncs reach "
     "pgiofs).  Passthrough needs Linux 6.9 or later and root, and a connection without "
     "the write-back cache: with fuse.writeback_cache = yes pgiofs mounts a connection of "
     "its own over each pg_wal directory (unmount with umount -R), with no, the one "
     "connection loses the write-back cache.  Where passthrough cannot be had pgiofs says "
     "so and opens WAL direct."},
    {"files", "write_cache_mb", CONF_INT, "MiB", "32", 0, 4096, NULL, F(write_cache_mb),
     "Without the kernel's write-back cache (fuse.writeback_cache = no, or a WAL mount "
     "of files.wal_mode = passthrough) every write(2) waits for pgiofs: pgiofs then answers a "
     "queued write of a data file as soon as the scheduler holds it, in at most this much "
     "memory (writers wait when it is full), and reports a failed write at the next fsync "
     "of the file, as the kernel does; 0: every write waits for the backing store."},
    {"files", "backing_direct", CONF_ENUM, "", "auto", 0, 0, pgiofs_backing_direct_names,
     F(backing_direct),
     "yes: read and write relation, WAL and temp files on the backing filesystem with "
     "O_DIRECT when offset and length are 4 KiB aligned, so their data is cached once "
     "(in the mount's page cache) instead of twice, and the daemon spends no CPU "
     "filling a second page cache.  no: through the backing filesystem's page cache, "
     "whose writeback sorts, merges and lays out the writes and absorbs rewrites, as "
     "it does for PostgreSQL on a bare disk: on a rotating disk that halves the seeks "
     "and the commit latency under a bulk import.  auto: no when the backing "
     "directory's block device says it is rotational (queue/rotational), else yes, "
     "unless the device answers as a capped or networked volume does: pgiofs times 16 "
     "random 4 KiB reads of it at mount, and a median of 0.5 ms or more (a cloud "
     "volume's is about 1 ms, a local solid-state disk's well under) means no: there "
     "the throughput is the budget, the page cache writes a page rewritten once, and "
     "with O_DIRECT every write-back of the mount, a close() of a file included, waits "
     "for the volume (on a modelled gp3 volume: commits' worst 2 to 4 s, 0.2 s "
     "natively).  A virtio disk cannot say (it always says rotational): it is timed the "
     "same way, and taken as rotating if the median is 2 ms or more.  A device pgiofs "
     "may not open to time (not root, no access to the device node) is taken as a local "
     "disk, and a virtio one as not rotating, as virtual disks mostly are (measured on one: "
     "O_DIRECT made "
     "an import under an OLTP load 0.73x as long and the commits during it 0.55x as "
     "slow at the p99).  `pgiofs stat` says which and why."},
    {"files", "defer_times", CONF_BOOL, "", "yes", 0, 0, NULL, F(defer_times),
     "With the write-back cache the kernel keeps a file's mtime itself and sends it "
     "before each fsync of a file written since (and at close).  yes: pgiofs keeps that "
     "time and applies it to the backing file after the fsync (or at the last close, or "
     "before any other change of the file's attributes), so that an fsync does not find "
     "the backing inode just changed: on ext4 every fsync of a data file otherwise "
     "forces a journal commit of its own (a checkpoint that fsyncs 200 files: 200 "
     "commits, against 1 for PostgreSQL on the bare file system).  Data is as durable "
     "either way; after a crash a file's mtime may be the time pgiofs wrote its data "
     "rather than the time the writer did.  no: applied at once."},
    {"files", "drop_behind", CONF_ENUM, "", "auto", 0, 0, pgiofs_drop_behind_names, F(drop_behind),
     "With the kernel's write-back cache, what the kernel writes back through the backing "
     "page cache (files.backing_direct) can be written without keeping it there "
     "(RWF_DONTCACHE): the backing file system starts its writeback at once and drops the "
     "pages once they are on the disk, so the data is cached once, in the mount's page "
     "cache, and the daemon's writes reuse pages instead of filling new ones.  fsync is "
     "unchanged and still reports every error.  The same for what the kernel reads into "
     "the mount's page cache: the backing file system drops the pages it read, its "
     "read-ahead included, once they are copied out (pages another reader had cached "
     "stay).  yes: for relation files (heap, index, free space and visibility maps) and "
     "for other files past files.drop_behind_other_mb.  auto: the same, but relation "
     "files' writes only where files.backing_direct = auto would reach them O_DIRECT "
     "(not on a rotating disk nor a slow volume), their reads on any disk: on a rotating "
     "disk the backing page cache's writeback, later and sorted, absorbs rewrites and "
     "keeps the heap from the disk while commits wait for it (on a modelled 2004 disk, dropping "
     "relation files "
     "made it write 1.26x the bytes and the commit p99 1.6x; on a virtio disk, imports "
     "0.8x as long and commits during them 1.7x as slow at the p99).  no: keep everything "
     "in the backing page cache too.  Where the kernel (before Linux 6.14) or the backing "
     "file system refuses the flag, reads and writes are made as usual and `pgiofs stat` "
     "says so."},
    {"files", "drop_behind_other_mb", CONF_INT, "MiB", "8", -1, 1048576, NULL,
     F(drop_behind_other_mb),
     "files.drop_behind for files that are not PostgreSQL's relation, WAL or temporary "
     "files, from this offset on: a file written or read past it is a stream (a dump, a "
     "backup, a large copy), while small files that come and go (a benchmark's, which are "
     "often deleted before the kernel would write them back) stay in the backing page "
     "cache.  WAL, temporary files, commit status and control files are never dropped "
     "behind.  -1: never."},
    {"files", "device_queue", CONF_ENUM, "", "auto", 0, 0, pgiofs_device_queue_names,
     F(device_queue),
     "At mount, set the block queue of the backing file system's device (its disk's, for a "
     "partition) so that a commit does not wait behind the bulk writes the kernel's "
     "writeback sends: the scheduler mq-deadline where it was none or kyber (both dispatch "
     "in arrival order, so a WAL write queues behind megabytes of heap on a rotating "
     "disk), and writeback throttling off (queue/wbt_lat_usec 0: while the import's "
     "writeback fills the queue, wbt holds back the writes an fdatasync of WAL starts). "
     "At unmount each value pgiofs changed is put back, unless it was changed since.  "
     "auto: on a device that says it is rotational (a virtio disk, which cannot say, "
     "is left as is), when pgiofs runs as root.  yes: on any block device (as root).  "
     "no: leave the queue as it is.  `pgiofs stat` shows what was set and what it was; "
     "a daemon that is killed leaves the queue set."},
    {"files", "device_write_depth", CONF_INT, "", "-1", -1, 4096, NULL, F(device_write_depth),
     "Where files.device_queue sets the queue and its scheduler is mq-deadline, the most "
     "write requests the scheduler lets be allocated at once (its async_depth; reads that "
     "a process waits for are not limited).  The kernel's default, all of nr_requests "
     "(256 on Linux 6.18; three quarters on some other kernels), lets the writeback put up to 128 "
     "requests of max_sectors_kb each into the device, 160 MiB on a loop device, seconds of a "
     "rotating disk, and a WAL "
     "write and the flush of a commit wait behind all of them; with a few, the rest of "
     "the bulk waits as dirty pages in the page cache, and a WAL write finds at most that "
     "many requests ahead of it.  Set only where it is the kernel's default (an "
     "administrator's value is kept), and put back at unmount with the rest.  -1: auto, "
     "8.  0: leave it as it is."},
    {"files", "device_requests", CONF_INT, "", "-1", -1, 4096, NULL, F(device_requests),
     "Where files.device_write_depth is set, the most requests of all kinds the queue holds "
     "at once (its nr_requests, 256 for a loop device): reads that a process waits for, "
     "which async_depth does not limit, are dispatched to the device ahead of a WAL write "
     "too, up to all of them.  Lowered only (a smaller value is kept), and put back at "
     "unmount with the rest.  -1: auto, 16.  0: leave it as it is."},
    {"files", "device_request_kb", CONF_INT, "KiB", "-1", -1, 1048576, NULL, F(device_request_kb),
     "Where files.device_queue sets the queue, the largest request it sends the device (its "
     "max_sectors_kb, 1280 KiB by default): with files.device_requests, the bound on the bulk "
     "bytes a WAL write finds ahead of it at the device (16 of 256 KiB: 4 MiB, 75 ms at 54 "
     "MB/s, where 1280 KiB requests make it 20 MiB).  A rotating disk reads and writes "
     "contiguous requests at its full speed whatever their size.  Set only where it is the "
     "kernel's default (max_hw_sectors_kb, at most 1280) and above this, and put back at "
     "unmount with the rest.  -1: auto, 256.  0: leave it as it is."},
    {"files", "sync_chunk_kb", CONF_INT, "KiB", "1024", 0, 1048576, NULL, F(sync_chunk_kb),
     "Through the backing page cache (files.backing_direct), the fsync of a heap, index "
     "or other data file writes all its dirty pages at once, and a commit's WAL flush "
     "waits behind them on a disk that serves one request at a time.  With a size here, "
     "pgiofs first writes them in chunks of that size, each waited for, so that a WAL "
     "flush waits behind one chunk at most; then the fsync, which still reports every "
     "error.  A chunk is never less than one folio of the backing page cache (up to a "
     "few MiB, after the size of pgiofs's writes).  WAL and commit status are never "
     "chunked; WAL segments made ahead (files.wal_segments_ahead) are written in such "
     "chunks too.  0: off."},
    {"files", "checkpoint_writeback_kb", CONF_INT, "KiB", "256", 0, 1048576, NULL,
     F(checkpoint_writeback_kb),
     "On a bare disk PostgreSQL's checkpoint asks the kernel to start writing each data "
     "file's pages as it writes them (checkpoint_flush_after), so the file system "
     "allocates them all in one journal transaction and the first fsync commits it for "
     "every file.  Through FUSE those requests only move the pages to pgiofs, and each "
     "fsync then allocates and commits the journal for its own file: a seek and a cache "
     "flush per file (a checkpoint after CREATE DATABASE: 251 ext4 journal commits "
     "against 8).  With a size here, an fsync from PostgreSQL's checkpointer (told by "
     "its process title) first starts the writeback, without waiting for it, of every "
     "heap, index, free space and visibility map file written through the backing page "
     "cache since the last one, if no more than this much was written to it: a file "
     "with more is written by its own fsync (in files.sync_chunk_kb chunks), since "
     "starting all of a checkpoint's large files at once puts them in front of the "
     "commits.  Each fsync still waits for its own file and reports its errors.  0: "
     "off."},
    {"files", "wal_segments_ahead", CONF_INT, "", "-1", -1, 64, NULL, F(wal_segments_ahead),
     "WAL segments made ahead of PostgreSQL.  When a backend fills a WAL segment and no "
     "recycled one is there, it makes the next one itself while every commit waits: a "
     "file of 16 MiB of zeros written and fsynced (on a rotating disk under an import, "
     "a stall of 0.3 s to seconds).  pgiofs sees which segment PostgreSQL reaches and, "
     "in a thread of its own, makes the next ones that do not exist yet the same way "
     "(zeros, fdatasync, a rename that replaces nothing), so PostgreSQL finds them as it "
     "finds recycled segments; pg_wal holds up to that many segments more.  -1 (auto): "
     "4 where the backing device says it is rotational or is a virtio disk, else 0.  "
     "0: off.  `pgiofs stat` counts the segments made and those PostgreSQL still had "
     "to make itself."},
    {"files", "wal_segments_reserve", CONF_INT, "", "-1", -1, 256, NULL, F(wal_segments_reserve),
     "WAL segments made ahead of PostgreSQL once WAL is quiet (no segment reached for "
     "5 s).  A segment made while WAL is written costs its size in zeros written beside "
     "it: an import into a cluster with no recycled segments yet (a fresh one) doubles "
     "what the disk writes for WAL while the commits wait for it.  Made while WAL is "
     "quiet, the first that many segments of the next burst cost nothing then; while "
     "WAL is written only files.wal_segments_ahead are kept ahead.  pg_wal holds up to "
     "that many segments more than PostgreSQL would (its checkpoints recycle old "
     "segments into the names still free and remove the others).  -1 (auto): 16 where "
     "segments are made ahead (files.wal_segments_ahead), else 0; a value no larger "
     "than files.wal_segments_ahead: none."},
    {"files", "space_guard_mb", CONF_INT, "MiB", "256", 0, 1048576, NULL, F(space_guard_mb),
     "Free space on the backing file system (at most an eighth of its size) below which "
     "every write(2) of a data file "
     "is sent to pgiofs before it returns, so that a full disk fails the write that "
     "has no room (PostgreSQL: \"could not extend file\", the statement fails) as it "
     "does natively, instead of a later fsync or close (PostgreSQL PANICs).  While it is "
     "on, the mount shows regular files with the set-user-ID bit (S), which is what "
     "makes the kernel send the writes; the backing files never get it.  Below eight "
     "times this much the mount's dirty page limit is held at a quarter of the free "
     "space (as root), so that what was cached fits.  Only with the write-back cache "
     "(read at mount); writers with CAP_FSETID (root) stay cached.  0: off."},
    {"files", "wal_nice", CONF_INT, "", "-10", -20, 19, NULL, F(wal_nice),
     "CPU priority (nice value) of the threads that serve the WAL mounts "
     "(files.wal_mode = passthrough with the write-back cache).  A commit's fdatasync "
     "is a request to one of them: on a busy machine the thread that answers it waits "
     "for a CPU twice (woken by the request, then by the disk) behind the clients, the "
     "import and its traffic through the daemon.  Those threads only open, close and "
     "sync WAL, so a high priority costs others little.  Negative values need "
     "CAP_SYS_NICE (pgiofs says so when it cannot have them); 0: the daemon's own.  "
     "Applied when a WAL mount starts."},
    {"files", "wal_io_class", CONF_ENUM, "", "realtime", 0, 0, pgiofs_io_class_names,
     F(wal_io_class),
     "I/O priority class of the same threads, which the backing device's elevator "
     "honours (mq-deadline, with aging, and bfq; not none or kyber): realtime "
     "(IOPRIO_CLASS_RT, needs CAP_SYS_ADMIN or CAP_SYS_NICE) has a commit's WAL written "
     "and flushed ahead of the backing page cache's writeback of heap and index data, "
     "which natively is in the same class; best-effort; or inherit the daemon's.  Only "
     "what those threads write is in that class: the WAL their fsyncs write back; the "
     "kernel's flusher writes the rest as before.  Applied when a WAL mount starts."},
    {"files", "inode_handles", CONF_ENUM, "", "auto", 0, 0, pgiofs_inode_handles_names,
     F(inode_handles),
     "How pgiofs keeps hold of the backing files the kernel knows (a PostgreSQL table with a "
     "primary key is two files, four after VACUUM).  auto: by their file handles "
     "(name_to_handle_at), which name an inode and its generation, so a file's inode number "
     "reused after an unlink is never taken for the old file; a descriptor is opened from the "
     "handle (open_by_handle_at) when a request needs one, and at most files.inode_fds of "
     "them are kept: any number of files may be known at once.  Handles need "
     "CAP_DAC_READ_SEARCH (root has it) and a backing file system that exports them (ext4, "
     "xfs, btrfs, tmpfs; not overlayfs without nfs_export, not a FUSE file system); without "
     "them pgiofs says so at mount and in `pgiofs stat`, and holds an O_PATH descriptor for "
     "every file the kernel knows, so that the daemon's open-files limit caps the files known "
     "and open at once.  yes: refuse to mount without handles.  no: a descriptor per known "
     "file.  Fixed at mount."},
    {"files", "inode_fds", CONF_INT, "", "4096", 16, 1048576, NULL, F(inode_fds),
     "With file handles (files.inode_handles), the O_PATH descriptors of known files kept "
     "open at most, the least recently used closed first; a request on a file without one "
     "opens it again from its handle.  No more than a quarter of the daemon's open-files "
     "limit is used, the rest being for open files (one or two descriptors each), the WAL "
     "mounts and io_uring: under a limit of 20,000, 4096 leave 15,904.  Fixed at mount."},
    {"stats", "enabled", CONF_BOOL, "", "yes", 0, 0, NULL, F(stats_enabled),
     "Count every data request per class (operations, bytes, queue and service time, "
     "latency histograms) for `pgiofs stat`; costs two clock reads and a few atomic "
     "additions per request.  The counters live as long as the mount, across SIGHUP "
     "reloads; with no, they stand still."},
};

/* pgiofs's own [fault] rows follow iosched's, in the same section */
static const struct conf_tunable fault_rows[] = {
    {"fault", "no_passthrough", CONF_BOOL, "", "no", 0, 0, NULL, F(fault_no_passthrough),
     "Fault injection: act as if the kernel did not offer FUSE passthrough (tests the "
     "fallback of files.wal_mode = passthrough)."},
    {"fault", "uring_refused", CONF_BOOL, "", "no", 0, 0, NULL, F(fault_uring_refused),
     "Fault injection: after FUSE over io_uring went into the INIT reply, act as if the "
     "kernel refused the ring entries (tests the fallback of fuse.uring to /dev/fuse)."},
};

#define NROWS	   (sizeof(rows) / sizeof(rows[0]))
#define NFAULTROWS (sizeof(fault_rows) / sizeof(fault_rows[0]))

/* The table of pgiofs: its own rows, then iosched's ([iosched], [device],
 * [fault]), then its own [fault] rows, with their offsets moved into pgiofs_settings.ios.  Sized by
 * both tables' row counts, both known when compiling: no row can be left
 * out. */
static struct conf_tunable all_rows[NROWS + IOS_CONF_NROWS + NFAULTROWS];
static struct conf_table table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void)
{
	size_t i, n = 0;

	for (i = 0; i < NROWS; i++)
		all_rows[n++] = rows[i];
	for (i = 0; i < IOS_CONF_NROWS; i++) {
		all_rows[n] = ios_conf.rows[i];
		all_rows[n].offset += offsetof(struct pgiofs_settings, ios);
		n++;
	}
	for (i = 0; i < NFAULTROWS; i++)
		all_rows[n++] = fault_rows[i];
	table.rows = all_rows;
	table.nrows = n;
	table.settings_size = sizeof(struct pgiofs_settings);
}

const struct conf_table *pgiofs_conf(void)
{
	pthread_once(&once, build);
	return &table;
}

bool pgiofs_fault_configured(const struct pgiofs_settings *s)
{
	return ios_fault_configured(&s->ios) || s->fault_no_passthrough || s->fault_uring_refused;
}

void pgiofs_settings_changed(const struct pgiofs_settings *s, char *out, size_t len)
{
	const struct conf_table *t = pgiofs_conf();
	struct pgiofs_settings *def = malloc(sizeof(*def));
	size_t used = 0, i;

	if (len)
		*out = '\0';
	if (!def || conf_defaults(t, def) < 0) {
		free(def);
		return;
	}
	for (i = 0; i < t->nrows; i++) {
		char a[256], b[256];
		int n;

		conf_format(&t->rows[i], s, a, sizeof(a));
		conf_format(&t->rows[i], def, b, sizeof(b));
		if (strcmp(a, b) == 0)
			continue;
		n = snprintf(out + used, len - used, "%s%s.%s=%s", used ? " " : "",
			     t->rows[i].section, t->rows[i].name, a);
		if (n < 0 || (size_t)n >= len - used) {
			out[used] = '\0'; /* whole entries only */
			break;
		}
		used += (size_t)n;
	}
	free(def);
}
