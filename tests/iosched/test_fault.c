/*
 * test_fault.c -- fault injection ([fault] tunables, iosched/fault.c) under
 * every policy: the nth matching request of a class and direction fails
 * with the configured error and is not performed (its bytes never reach the
 * file), the others are untouched and do not merge with it; with
 * in_transfer it merges, and the transfer fails where it starts (the
 * requests before it succeed, it and those after it get the error); count and
 * fraction pick the same requests in every run and under every policy;
 * delays hold completions on the virtual clock; abort_after kills the
 * process before the request is performed; failures are counted as errors
 * in the statistics.  Queueing policies run on the virtual clock, "direct"
 * executes in this thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iosched.h"

#include "sched_util.h"

#define BLK  4096
#define NREQ 64

/* fault_settings() -- @policy with a fault on @cls/@dir: @err at @nth. */
static void fault_settings(struct ios_settings *set, int policy, int cls, int dir, int err,
			   int64_t nth)
{
	settings(set, policy, IOS_DEVICE_NONE);
	set->fault_class = cls + 1;
	set->fault_direction = dir + 1;
	set->fault_error = err;
	set->fault_nth = nth;
}

/* new_sched() -- virtual for queueing policies, real for direct. */
static struct ios_sched *new_sched(const struct ios_settings *set)
{
	return set->policy == IOS_POLICY_DIRECT ? ios_create_with(set) : ios_create_virtual(set);
}

static void settle(struct ios_sched *s, const struct ios_settings *set, uint64_t until)
{
	if (set->policy != IOS_POLICY_DIRECT)
		ios_virtual_advance(s, until);
}

/* block_is() -- whether block @i of @fd is all @c (a hole reads as 0). */
static bool block_is(int fd, int i, char c)
{
	char buf[BLK];
	ssize_t n = pread(fd, buf, BLK, (off_t)i * BLK);
	int k;

	if (n < 0)
		return false;
	for (k = 0; k < BLK; k++)
		if ((k < n ? buf[k] : 0) != c)
			return false;
	return true;
}

static void test_defaults_off(void)
{
	struct ios_settings set;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_NONE);
	CHECK(!ios_fault_configured(&set));
	set.fault_seed = 2; /* any [fault] value counts, even without an action */
	CHECK(ios_fault_configured(&set));
}

/* the 3rd heap write of 8 adjacent ones fails with EIO and is not written;
 * WAL writes and syncs are not counted; the rest merge around it */
static void test_nth(int policy)
{
	struct ios_settings set;
	struct treq t[10];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	fault_settings(&set, policy, IOS_CLASS_HEAP, IOS_WRITE, IOS_FAULT_EIO, 3);
	s = new_sched(&set);
	CHECK(s != NULL);
	if (!s)
		return;
	submit(s, &t[8], fd, 2, IOS_CLASS_WAL, IOS_WRITE, 20 * BLK, BLK, 'w');
	for (i = 0; i < 8; i++)
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, (off_t)i * BLK, BLK,
		       (char)('a' + i));
	submit(s, &t[9], fd, 1, IOS_CLASS_HEAP, IOS_SYNC, 0, 0, 0);
	settle(s, &set, 1000 * MS);
	for (i = 0; i < 8; i++) {
		CHECK(t[i].calls == 1);
		CHECK(t[i].res == (i == 2 ? -EIO : BLK));
		CHECK(block_is(fd, i, i == 2 ? 0 : (char)('a' + i)));
	}
	CHECK(t[8].calls == 1 && t[8].res == BLK);
	CHECK(t[9].calls == 1 && t[9].res == 0);
	if (policy != IOS_POLICY_DIRECT) {
		struct ios_counters c;

		ios_get_counters(s, &c);
		CHECK(c.requests == 10);
		/* wal, heap 0-1, the failed one, heap 3-7, the sync */
		CHECK(c.transfers == 5);
	}
	ios_destroy(s);
	for (i = 0; i < 9; i++)
		free(t[i].buf);
	close(fd);
}

/* in_transfer: the 4th of 8 adjacent heap writes (or reads) is picked and
 * merged with the others; the transfer stops where it starts: the 3 before
 * it are performed and succeed, it and the 4 after it fail with EIO and are
 * not performed (writes: their blocks stay holes) */
static void test_in_transfer(int policy, enum ios_dir dir)
{
	struct ios_settings set;
	struct ios_counters c;
	struct treq t[8];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	if (dir == IOS_READ)
		for (i = 0; i < 8; i++)
			CHECK(pwrite(fd, "abcdefgh" + i, 1, (off_t)i * BLK) == 1);
	fault_settings(&set, policy, IOS_CLASS_HEAP, dir, IOS_FAULT_EIO, 4);
	set.fault_in_transfer = true;
	s = ios_create_virtual(&set);
	/* all 8 arrive before the first dispatch: one transfer */
	for (i = 0; i < 8; i++)
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, dir, (off_t)i * BLK, BLK, (char)('a' + i));
	ios_virtual_advance(s, 1000 * MS);
	ios_get_counters(s, &c);
	CHECK(c.transfers == 1 && c.merged == 7);
	for (i = 0; i < 8; i++) {
		CHECK(t[i].calls == 1);
		CHECK(t[i].res == (i < 3 ? BLK : -EIO));
		if (dir == IOS_WRITE)
			CHECK(block_is(fd, i, i < 3 ? (char)('a' + i) : 0));
		else if (i < 3)
			CHECK(t[i].buf[0] == 'a' + i);
		free(t[i].buf);
	}
	ios_destroy(s);
	close(fd);
}

/* syncs: the 2nd and 3rd WAL fsync fail with ENOSPC (count 2), later
 * ones succeed again; a heap sync is not counted */
static void test_sync_count(int policy)
{
	struct ios_settings set;
	struct treq t[6];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	fault_settings(&set, policy, IOS_CLASS_WAL, IOS_SYNC, IOS_FAULT_ENOSPC, 2);
	set.fault_count = 2;
	s = new_sched(&set);
	for (i = 0; i < 6; i++) {
		submit(s, &t[i], fd, 1, i == 1 ? IOS_CLASS_HEAP : IOS_CLASS_WAL, IOS_SYNC, 0, 0, 0);
		settle(s, &set, (uint64_t)(i + 1) * MS);
	}
	/* wal syncs: 0 (1st), 2 (2nd), 3 (3rd), 4, 5 */
	CHECK(t[0].res == 0 && t[1].res == 0);
	CHECK(t[2].res == -ENOSPC && t[3].res == -ENOSPC);
	CHECK(t[4].res == 0 && t[5].res == 0);
	for (i = 0; i < 6; i++)
		CHECK(t[i].calls == 1);
	ios_destroy(s);
	close(fd);
}

/* skip: every heap write and sync reports success without being
 * performed (the written block stays a hole), reads are never skipped,
 * WAL writes are untouched */
static void test_skip(int policy)
{
	struct ios_settings set;
	struct treq t[5];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	CHECK(pwrite(fd, "rrrr", 4, 8 * BLK) == 4);
	fault_settings(&set, policy, IOS_CLASS_HEAP, -1, IOS_FAULT_SKIP, 1);
	set.fault_count = 0; /* every one from the first on */
	s = new_sched(&set);
	CHECK(s != NULL);
	if (!s)
		return;
	submit(s, &t[0], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, 0, BLK, 'a');
	submit(s, &t[1], fd, 1, IOS_CLASS_HEAP, IOS_SYNC, 0, 0, 0);
	submit(s, &t[2], fd, 1, IOS_CLASS_WAL, IOS_WRITE, 2 * BLK, BLK, 'w');
	submit(s, &t[3], fd, 1, IOS_CLASS_HEAP, IOS_READ, 8 * BLK, 4, 0);
	submit(s, &t[4], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, BLK, BLK, 'b');
	settle(s, &set, 1000 * MS);
	for (i = 0; i < 5; i++)
		CHECK(t[i].calls == 1);
	CHECK(t[0].res == BLK && t[4].res == BLK && t[1].res == 0); /* success, reported */
	CHECK(block_is(fd, 0, 0) && block_is(fd, 1, 0));	    /* and not performed */
	CHECK(t[2].res == BLK && block_is(fd, 2, 'w'));
	CHECK(t[3].res == 4 && memcmp(t[3].buf, "rrrr", 4) == 0); /* the read was performed */
	ios_destroy(s);
	for (i = 0; i < 5; i++)
		free(t[i].buf);
	close(fd);
}

/* fraction: which of NREQ reads fail depends only on the seed */
static unsigned long long fraction_run(int policy, int64_t seed, int *nfailed)
{
	struct ios_settings set;
	static struct treq t[NREQ];
	struct ios_sched *s;
	unsigned long long mask = 0;
	int fd = tmpfile_fd(), i;

	CHECK(pwrite(fd, "x", 1, (off_t)NREQ * BLK) == 1);
	fault_settings(&set, policy, -1, IOS_READ, IOS_FAULT_EIO, 0);
	set.fault_fraction = 0.25;
	set.fault_seed = seed;
	s = new_sched(&set);
	for (i = 0; i < NREQ; i++) {
		/* spread out: no merging, so the policy's order is its own */
		submit(s, &t[i], fd, 1, IOS_CLASS_HEAP, IOS_READ, (off_t)i * BLK, 512, 0);
		settle(s, &set, (uint64_t)(i + 1) * MS);
	}
	*nfailed = 0;
	for (i = 0; i < NREQ; i++) {
		CHECK(t[i].calls == 1 && (t[i].res == 512 || t[i].res == -EIO));
		if (t[i].res < 0) {
			mask |= 1ull << i;
			++*nfailed;
		}
		free(t[i].buf);
	}
	ios_destroy(s);
	close(fd);
	return mask;
}

static void test_fraction(void)
{
	int n1, n2, n3, p;
	unsigned long long m1 = fraction_run(IOS_POLICY_DIRECT, 7, &n1);

	CHECK(n1 > 4 && n1 < 32); /* about a quarter of 64 */
	for (p = IOS_POLICY_NOOP; p < IOS_NPOLICY; p++) {
		CHECK(fraction_run(p, 7, &n2) == m1); /* same seed, same picks */
		CHECK(n2 == n1);
	}
	CHECK(fraction_run(IOS_POLICY_NOOP, 8, &n3) != m1); /* another seed */
}

/* delay on the virtual clock: a picked request completes delay_ms after
 * its dispatch, with its error if one is set; others at once */
static void test_delay(void)
{
	struct ios_settings set;
	struct treq t[3];
	struct ios_sched *s;
	int fd = tmpfile_fd(), i;

	fault_settings(&set, IOS_POLICY_DBAWARE, IOS_CLASS_HEAP, -1, IOS_FAULT_NONE, 2);
	set.fault_count = 2;
	set.fault_delay_ms = 50;
	s = ios_create_virtual(&set);
	submit(s, &t[0], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, 0, BLK, 'a');
	submit(s, &t[1], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, BLK, BLK, 'b');
	submit(s, &t[2], fd, 1, IOS_CLASS_HEAP, IOS_READ, 8 * BLK, BLK, 0);
	ios_virtual_advance(s, 10 * MS);
	CHECK(t[0].calls == 1 && t[0].done_at == 0 && t[0].res == BLK);
	CHECK(t[1].calls == 0 && t[2].calls == 0);
	ios_virtual_advance(s, 100 * MS);
	CHECK(t[1].calls == 1 && t[1].done_at == 50 * MS && t[1].res == BLK);
	CHECK(t[2].calls == 1 && t[2].done_at == 50 * MS && t[2].res == 0); /* EOF */
	CHECK(block_is(fd, 1, 'b'));
	ios_destroy(s);
	for (i = 0; i < 3; i++)
		free(t[i].buf);

	/* with an error: late, failed, not performed */
	fault_settings(&set, IOS_POLICY_NOOP, -1, IOS_WRITE, IOS_FAULT_EIO, 1);
	set.fault_delay_ms = 20;
	s = ios_create_virtual(&set);
	submit(s, &t[0], fd, 1, IOS_CLASS_HEAP, IOS_WRITE, 4 * BLK, BLK, 'c');
	ios_virtual_advance(s, 100 * MS);
	CHECK(t[0].calls == 1 && t[0].done_at == 20 * MS && t[0].res == -EIO);
	CHECK(block_is(fd, 4, 0));
	free(t[0].buf);
	ios_destroy(s);
	close(fd);
}

/* abort_after: the process dies with SIGKILL at the 3rd matching request,
 * which is not performed */
static void test_abort(int policy)
{
	int fd = tmpfile_fd(), st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct ios_settings set;
		struct treq t[5];
		struct ios_sched *s;
		int i;

		fault_settings(&set, policy, -1, IOS_WRITE, IOS_FAULT_NONE, 0);
		set.fault_abort_after = 3;
		s = new_sched(&set);
		for (i = 0; i < 5; i++) {
			submit(s, &t[i], fd, 1, IOS_CLASS_OTHER, IOS_WRITE, i, 1, 'z');
			settle(s, &set, (uint64_t)(i + 1) * MS);
		}
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(lseek(fd, 0, SEEK_END) == 2);
	close(fd);
}

/* an injected failure is accounted as an error of its class */
static void test_stats(void)
{
	struct ios_settings set;
	struct ios_stats *st = ios_stats_create();
	struct ios_stats_snapshot *snap = calloc(1, sizeof(*snap));
	struct treq t[2];
	struct ios_sched *s;
	int fd = tmpfile_fd();

	fault_settings(&set, IOS_POLICY_DIRECT, IOS_CLASS_XACT, IOS_WRITE, IOS_FAULT_EIO, 1);
	s = ios_create_with(&set);
	ios_attach_stats(s, st);
	submit(s, &t[0], fd, 1, IOS_CLASS_XACT, IOS_WRITE, 0, BLK, 'a');
	submit(s, &t[1], fd, 1, IOS_CLASS_XACT, IOS_WRITE, 0, BLK, 'b');
	CHECK(t[0].res == -EIO && t[1].res == BLK);
	ios_stats_snapshot(st, snap);
	CHECK(snap->cls[IOS_CLASS_XACT].write_ops == 2);
	CHECK(snap->cls[IOS_CLASS_XACT].errors == 1);
	CHECK(snap->cls[IOS_CLASS_XACT].write_bytes == BLK);
	ios_destroy(s);
	ios_stats_destroy(st);
	free(snap);
	free(t[0].buf);
	free(t[1].buf);
	close(fd);
}

int main(void)
{
	int p;

	test_defaults_off();
	for (p = 0; p < IOS_NPOLICY; p++) {
		test_nth(p);
		test_sync_count(p);
		test_skip(p);
	}
	for (p = IOS_POLICY_NOOP; p < IOS_NPOLICY; p++) {
		test_in_transfer(p, IOS_WRITE);
		test_in_transfer(p, IOS_READ);
	}
	test_fraction();
	test_delay();
	test_abort(IOS_POLICY_DIRECT);
	test_abort(IOS_POLICY_DBAWARE);
	test_stats();
	if (!failures)
		printf("ok\n");
	return failures ? 1 : 0;
}
