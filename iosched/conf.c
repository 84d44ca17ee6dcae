/*
 * conf.c -- the tunables of iosched: one table for the [iosched] and
 * [device] sections (see conf.h).  Defaults are the dbaware policy's; the
 * profiles in config/profiles/ set the reference elevators' values.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "iosched.h"

#define F(x) offsetof(struct ios_settings, x)

const char *const ios_policy_names[] = {
    [IOS_POLICY_DIRECT] = "direct",	      [IOS_POLICY_NOOP] = "noop",
    [IOS_POLICY_ELEVATOR24] = "elevator-2.4", [IOS_POLICY_ELEVATOR24AA] = "elevator-2.4-aa",
    [IOS_POLICY_DEADLINE] = "deadline-2.6",   [IOS_POLICY_AS] = "as-2.6",
    [IOS_POLICY_DBAWARE] = "dbaware",	      NULL,
};

static const char *const device_names[] = {
    [IOS_DEVICE_NONE] = "none", [IOS_DEVICE_HDD] = "hdd",
    [IOS_DEVICE_SSD] = "ssd",	[IOS_DEVICE_CLOUD] = "cloud",
    [IOS_DEVICE_GP3] = "gp3",	[IOS_DEVICE_GP2] = "gp2",
    [IOS_DEVICE_IO2] = "io2",	NULL,
};
const char *const ios_data_inline_names[] = {"auto", "yes", "no", NULL};

/* [fault]: choice 0 is "any", then the enum's order (direct.c's names) */
static const char *const fault_class_names[] = {
    "any", "wal", "xact", "heap", "index", "fsm", "vm", "temp", "meta", "other", NULL,
};
static const char *const fault_dir_names[] = {"any", "read", "write", "sync", NULL};
static const char *const fault_error_names[] = {
    [IOS_FAULT_NONE] = "none",
    [IOS_FAULT_EIO] = "eio",
    [IOS_FAULT_ENOSPC] = "enospc",
    [IOS_FAULT_SKIP] = "skip",
    NULL,
};

static const struct conf_tunable rows[] = {
    {"iosched", "policy", CONF_ENUM, "", "dbaware", 0, 0, ios_policy_names, F(policy),
     "How every data read, write and sync is scheduled: dbaware (database-aware "
     "priorities and deadlines), direct (no queue), noop, elevator-2.4, elevator-2.4-aa, "
     "deadline-2.6 or as-2.6."},
    {"iosched", "nr_requests", CONF_INT, "", "128", 1, 65536, NULL, F(nr_requests),
     "Requests in flight to the backing store at most."},
    {"iosched", "max_request_kb", CONF_INT, "KiB", "512", 4, 16384, NULL, F(max_request_kb),
     "Largest transfer that adjacent requests are merged into."},
    {"iosched", "max_inflight_kb", CONF_INT, "KiB", "0", 0, 1048576, NULL, F(max_inflight_kb),
     "Bytes in flight at most (0: no limit); the 2.4-aa elevator throttles by this "
     "and dispatches in batches of half of it."},
    {"iosched", "read_expire_ms", CONF_INT, "ms", "500", 1, 600000, NULL, F(read_expire_ms),
     "A read is served no later than this after it arrived (deadline-2.6, as-2.6, "
     "dbaware)."},
    {"iosched", "write_expire_ms", CONF_INT, "ms", "5000", 1, 600000, NULL, F(write_expire_ms),
     "A write's deadline (deadline-2.6, as-2.6)."},
    {"iosched", "fifo_batch", CONF_INT, "", "16", 1, 4096, NULL, F(fifo_batch),
     "Requests served in offset order before deadlines are checked again "
     "(deadline-2.6)."},
    {"iosched", "writes_starved", CONF_INT, "", "2", 1, 1000, NULL, F(writes_starved),
     "Read batches that may pass waiting writes (deadline-2.6)."},
    {"iosched", "front_merges", CONF_BOOL, "", "yes", 0, 0, NULL, F(front_merges),
     "Merge a request in front of an adjacent queued one, not only behind it."},
    {"iosched", "read_passover", CONF_INT, "", "2048", 0, 1000000, NULL, F(read_passover),
     "Times a queued read may be passed over by requests sorted in front of it "
     "(elevator-2.4)."},
    {"iosched", "write_passover", CONF_INT, "", "8192", 0, 1000000, NULL, F(write_passover),
     "Times a queued write may be passed over (elevator-2.4)."},
    {"iosched", "antic_expire_us", CONF_INT, "us", "6000", 0, 1000000, NULL, F(antic_expire_us),
     "After a read completes, wait this long for the same process's next nearby read "
     "(as-2.6)."},
    {"iosched", "read_batch_expire_ms", CONF_INT, "ms", "500", 1, 600000, NULL,
     F(read_batch_expire_ms), "Length of a read batch (as-2.6)."},
    {"iosched", "write_batch_expire_ms", CONF_INT, "ms", "125", 1, 600000, NULL,
     F(write_batch_expire_ms), "Length of a write batch (as-2.6)."},
    {"iosched", "wal_expire_ms", CONF_INT, "ms", "5", 1, 600000, NULL, F(wal_expire_ms),
     "dbaware: WAL writes and syncs are served first and no later than this."},
    {"iosched", "xact_expire_ms", CONF_INT, "ms", "10", 1, 600000, NULL, F(xact_expire_ms),
     "dbaware: commit-status (pg_xact, ...) writes and syncs."},
    {"iosched", "data_write_expire_ms", CONF_INT, "ms", "1000", 1, 600000, NULL,
     F(data_write_expire_ms),
     "dbaware: heap, index and other writeback and syncs are served no later than "
     "this after they arrive (bounded write latency)."},
    {"iosched", "temp_expire_ms", CONF_INT, "ms", "5000", 1, 600000, NULL, F(temp_expire_ms),
     "dbaware: temp-file (pgsql_tmp) reads and writes."},
    {"iosched", "wal_target_us", CONF_INT, "us", "2000", 0, 10000000, NULL, F(wal_target_us),
     "dbaware: the writeback throttle's target for WAL flushes (a commit's fdatasync of the "
     "segment, or its O_DSYNC write): when 1% or more of them in a window take longer, "
     "the heap, index and temp writeback in flight is halved (down to one transfer); "
     "while none does, it grows back by a quarter (up to nr_requests).  0: no throttle."},
    {"iosched", "throttle_window_ms", CONF_INT, "ms", "100", 1, 60000, NULL, F(throttle_window_ms),
     "dbaware: how often the writeback throttle decides."},
    {"iosched", "bulk_inflight_kb", CONF_INT, "KiB", "0", 0, 1048576, NULL, F(bulk_inflight_kb),
     "dbaware: heap, index and temp writeback in flight at most, in bytes: what a WAL "
     "write or sync can find ahead of it at the device, whatever the throttle's depth "
     "(a transfer larger than this goes alone).  It applies to the writeback the "
     "scheduler queues, not to writes run at arrival (data_inline).  0: no limit."},
    {"iosched", "wal_inline", CONF_BOOL, "", "yes", 0, 0, NULL, F(wal_inline),
     "Queueing policies: run WAL and commit-status (pg_xact, ...) requests at arrival "
     "in the requesting thread, as direct does, instead of queueing them for the "
     "dispatcher.  They would be served first anyway; inline they save the hand-over "
     "to the dispatcher thread and back, two context switches per write and per sync "
     "of every commit.  Every request of such a file runs inline, so their order is "
     "the kernel's, as with direct.  Off with an emulated device, where WAL has to "
     "compete for the modelled disk.  The profiles that reproduce kernel elevators "
     "set it to no."},
    {"iosched", "other_inline", CONF_BOOL, "", "yes", 0, 0, NULL, F(other_inline),
     "Queueing policies: run the requests of files that are not PostgreSQL's (class "
     "other: a benchmark's, a copy's, names pgiofs does not know) at arrival in the "
     "requesting thread, as direct does.  Such a file has nothing to be ordered against "
     "in a cluster, and the hand-over to the dispatcher thread and back costs two context "
     "switches per request, the most of a cold read or a write from a file system "
     "benchmark.  Their writes are then not held back by the writeback throttle.  Off "
     "with an emulated device, and in the profiles that reproduce kernel elevators."},
    {"iosched", "data_inline", CONF_ENUM, "", "auto", 0, 0, ios_data_inline_names, F(data_inline),
     "Queueing policies: run the requests of PostgreSQL's data files (heap, index, free "
     "space and visibility maps, temp files, pg_control and relation maps) at arrival in "
     "the requesting thread, as direct does.  auto: when they go through the backing page "
     "cache (files.backing_direct resolved to no) under the kernel's write-back cache.  "
     "There the backing page cache takes every write at once and the kernel's writeback "
     "and each fsync, not the order pages enter that cache, decide what the disk does; "
     "queued, each request only pays the hand-over to the dispatcher and back and holds "
     "its receive buffer meanwhile (the mixed load: slower import, fewer commits per "
     "second, more memory).  Inline, the writeback throttle has no writeback to hold "
     "and the scheduler's own readahead does not read ahead for them (the kernel's on "
     "the mount and the backing file system's do).  With O_DIRECT on the backing files "
     "(auto: not inline) the queue is what orders the device's work.  Off with an "
     "emulated device, and in the profiles that reproduce kernel elevators."},
    {"iosched", "serial_writes", CONF_BOOL, "", "yes", 0, 0, NULL, F(serial_writes),
     "Writes through the backing page cache that run at arrival (the direct policy, "
     "wal_inline, other_inline, data_inline) go to one backing file one at a time, "
     "behind a lock of pgiofs's that a waiting worker sleeps on.  Without it, workers "
     "writing the same file at once meet on its inode lock in the kernel, where a waiter "
     "spins on the CPU while "
     "the holder copies, the CPU a two-core machine needs for the copies themselves.  "
     "io_uring's workers take the queued classes' buffered writes to one file one at a "
     "time in the same way."},
    {"iosched", "ra_window_kb", CONF_INT, "KiB", "512", 0, 16384, NULL, F(ra_window_kb),
     "Largest readahead window of a sequential reader (0: none), read by the scheduler "
     "itself (bdi.read_ahead_kb is the kernel's, above it).  A stream starts at 4x "
     "its read, the window doubles at every async marker; windows are read through the "
     "scheduler at low priority into the readahead cache.  Any queueing policy."},
    {"iosched", "ra_cache_mb", CONF_INT, "MiB", "32", 1, 4096, NULL, F(ra_cache_mb),
     "Read-ahead data held at most, windows in flight included (least recently used "
     "dropped first); a window that does not fit is not read ahead."},
    {"device", "model", CONF_ENUM, "", "none", 0, 0, device_names, F(device_model),
     "Emulated device: none (real timing), hdd (one head: seek by distance, rotation, "
     "transfer), ssd (per-request latency plus transfer), or a capped cloud volume: "
     "gp3, gp2 or io2 (the published caps of these EBS volumes) or cloud (your own "
     "caps; gp3's where left 0): IOPS and throughput buckets, gp2's burst credits, a "
     "base latency per request, requests served cloud_depth at a time.  Completions "
     "are held back until the modelled device would have finished them.  pgdisk "
     "serves a block device's image through the same model."},
    {"device", "seq_mb_s", CONF_DOUBLE, "MB/s", "54", 1, 100000, NULL, F(seq_mb_s),
     "Transfer rate of the emulated device (the seed's 2004 disk: about 54 MB/s)."},
    {"device", "seek_ms", CONF_DOUBLE, "ms", "8.5", 0, 1000, NULL, F(seek_ms),
     "Average seek of the emulated hdd: what seeks between random places across the "
     "disk average (the full stroke is calibrated from it, about 1.8 times it)."},
    {"device", "rpm", CONF_INT, "rpm", "7200", 1000, 30000, NULL, F(rpm),
     "Spindle speed of the emulated hdd (half a turn of rotational latency on a seek)."},
    {"device", "ssd_latency_us", CONF_DOUBLE, "us", "100", 0, 1e6, NULL, F(ssd_latency_us),
     "Per-request latency of the emulated ssd."},
    {"device", "track_kb", CONF_DOUBLE, "KiB", "1024", 0, 1e6, NULL, F(track_kb),
     "Emulated hdd: a jump shorter than this costs a track switch (1 ms, or seek_ms "
     "if less), not a seek."},
    {"device", "queue_depth", CONF_INT, "", "2", 1, 1024, NULL, F(queue_depth),
     "Transfers the emulated device accepts at once (a 2004 IDE disk: one or two); the "
     "rest stay in the scheduler, where priorities can still reorder them.  A capped "
     "volume reaches its caps only with enough in flight (about its IOPS times its "
     "latency): raise this with it."},
    {"device", "cloud_volume_gib", CONF_INT, "GiB", "0", 0, 65536, NULL, F(cloud_volume_gib),
     "Capped volumes: the volume's size, from which gp2 takes its baseline (3 IOPS per "
     "GiB, at least 100) and throughput (128 MiB/s up to 170 GiB, 250 above); 0: the "
     "disk's size (pgdisk: the image's; pgiofs's emulated device: 64 GiB)."},
    {"device", "cloud_iops", CONF_DOUBLE, "IOPS", "0", 0, 1e7, NULL, F(cloud_iops),
     "Capped volumes: operations per second at most (gp2: its burst, 3,000 below 1 TiB); "
     "a read or write of up to cloud_op_kib is one operation, larger ones one per "
     "cloud_op_kib begun, sequential small ones merge.  0: the model's (gp3 and "
     "cloud 3,000; io2 256,000; gp2 from its size)."},
    {"device", "cloud_mib_s", CONF_DOUBLE, "MiB/s", "0", 0, 1e6, NULL, F(cloud_mib_s),
     "Capped volumes: bytes read and written per second at most.  0: the model's (gp3 "
     "and cloud 125; io2 4,000; gp2 128 or 250 by size)."},
    {"device", "cloud_baseline_iops", CONF_DOUBLE, "IOPS", "0", 0, 1e7, NULL,
     F(cloud_baseline_iops),
     "Capped volumes with burst credits (gp2): credits earned per second; every "
     "operation spends one, so once the bucket is empty the volume runs at this rate.  "
     "0: the model's (gp2 3 per GiB, at least 100, none at 1,000 GiB and above; the "
     "others have no credits)."},
    {"device", "cloud_credits", CONF_DOUBLE, "", "0", 0, 1e12, NULL, F(cloud_credits),
     "Capped volumes with burst credits: the credit bucket, full when the disk is "
     "created (a burst at cloud_iops lasts cloud_credits / (cloud_iops - "
     "cloud_baseline_iops) seconds).  0: the model's (gp2 5.4 million; others none)."},
    {"device", "cloud_latency_us", CONF_DOUBLE, "us", "0", 0, 1e7, NULL, F(cloud_latency_us),
     "Capped volumes: the median base latency of a request once admitted (log-normal).  "
     "0: the model's (gp3, gp2 and cloud 1,000; io2 250)."},
    {"device", "cloud_latency_p99_us", CONF_DOUBLE, "us", "0", 0, 1e8, NULL,
     F(cloud_latency_p99_us),
     "Capped volumes: the base latency's 99th percentile (not below the median; equal: "
     "every request the median).  0: the model's ratio to the median (gp3, gp2, cloud "
     "3x; io2 2x)."},
    {"device", "cloud_depth", CONF_INT, "", "0", 0, 4096, NULL, F(cloud_depth),
     "Capped volumes: requests in service at once; more wait their turn.  0: the "
     "model's (64; io2 128)."},
    {"device", "cloud_op_kib", CONF_INT, "KiB", "0", 0, 65536, NULL, F(cloud_op_kib),
     "Capped volumes: the largest operation of the IOPS accounting (EBS: 256 KiB).  0: "
     "256."},
    {"device", "cloud_bucket_ms", CONF_DOUBLE, "ms", "0", 0, 60000, NULL, F(cloud_bucket_ms),
     "Capped volumes: how much the IOPS and throughput buckets hold, in time at their "
     "rate: the burst an idle volume takes at once.  0: 10 ms."},
    {"device", "cloud_seed", CONF_INT, "", "1", 0, 1e15, NULL, F(cloud_seed),
     "Capped volumes: seed of the latency draws (the same requests in the same order get "
     "the same latencies)."},
    {"fault", "class", CONF_ENUM, "", "any", 0, 0, fault_class_names, F(fault_class),
     "Fault injection (testing only; pgiofs refuses any [fault] setting unless started "
     "with --allow-faults): the class of the requests it considers, or any."},
    {"fault", "direction", CONF_ENUM, "", "any", 0, 0, fault_dir_names, F(fault_direction),
     "Fault injection: the direction of the requests it considers (read, write, sync) "
     "or any.  Matching requests are counted from the mount or the last SIGHUP."},
    {"fault", "error", CONF_ENUM, "", "none", 0, 0, fault_error_names, F(fault_error),
     "Fault injection: what a picked request fails with, without being performed (a "
     "failed write writes nothing, a failed sync syncs nothing); none only delays it; "
     "skip reports success without performing it (a write not written, an fsync that "
     "syncs nothing: the broken storage a power-cut test must catch; reads are never "
     "skipped)."},
    {"fault", "nth", CONF_INT, "", "0", 0, 1e15, NULL, F(fault_nth),
     "Fault injection: the first matching request picked (1: the first one; 0: none "
     "by count)."},
    {"fault", "count", CONF_INT, "", "1", 0, 1e15, NULL, F(fault_count),
     "Fault injection: how many consecutive matching requests are picked from the nth "
     "on (0: every one from then on)."},
    {"fault", "fraction", CONF_DOUBLE, "", "0", 0, 1, NULL, F(fault_fraction),
     "Fault injection: each matching request is also picked with this probability, "
     "drawn from a generator seeded with seed (the same order of requests fails at the "
     "same places)."},
    {"fault", "seed", CONF_INT, "", "1", 0, 1e15, NULL, F(fault_seed),
     "Fault injection: seed of the generator behind fraction."},
    {"fault", "delay_ms", CONF_INT, "ms", "0", 0, 600000, NULL, F(fault_delay_ms),
     "Fault injection: a picked request completes this much later than it would "
     "(after its error, if any, or after being performed)."},
    {"fault", "abort_after", CONF_INT, "", "0", 0, 1e15, NULL, F(fault_abort_after),
     "Fault injection: when this many matching requests have arrived, the process "
     "kills itself with SIGKILL (a crash: nothing is cleaned up) before performing "
     "the last one; 0: never."},
    {"fault", "in_transfer", CONF_BOOL, "", "no", 0, 0, NULL, F(fault_in_transfer),
     "Fault injection, queueing policies: a picked read or write is merged with adjacent "
     "requests like any other, and the transfer holding it fails where it starts, as a "
     "device failing at one sector of a large transfer: the requests before it are "
     "performed and succeed, it and every request after it fail with the error and are "
     "not performed.  With no, a picked request is never merged and fails alone."},
};

_Static_assert(sizeof(rows) / sizeof(rows[0]) == IOS_CONF_NROWS,
	       "IOS_CONF_NROWS (iosched.h) must be the number of rows");

const struct conf_table ios_conf = {
    .rows = rows,
    .nrows = IOS_CONF_NROWS,
    .settings_size = sizeof(struct ios_settings),
};

int ios_policy_by_name(const char *name)
{
	int i;

	for (i = 0; ios_policy_names[i]; i++)
		if (strcmp(ios_policy_names[i], name) == 0)
			return i;
	return -EINVAL;
}
