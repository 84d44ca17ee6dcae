/*
 * test_disk.c -- the disk model (iosched.h: ios_disk_*, device.c) on a
 * clock the test drives:
 *   - hdd: a transfer that continues where the head is costs its transfer
 *     time at seq_mb_s alone; a short jump costs a track switch; a seek
 *     costs a track switch plus the rest of the full stroke times the
 *     square root of the distance over the span, plus half a revolution;
 *     seeks grow with the distance; a flush costs a track switch and does
 *     not move the head;
 *   - one head: requests that arrive together are served one after another
 *     in arrival order; one that arrives when the disk is idle starts at
 *     once;
 *   - calibration: seeks between addresses drawn uniformly across the span
 *     average seek_ms (several spans, track sizes and seek times), so that
 *     random 8 KiB reads back to back run at 1 / (seek_ms + half a
 *     revolution + transfer), the figure the loop-device validation
 *     (tests/disk/test_validate.sh) checks pgdisk against;
 *   - ssd: transfers follow one another on the channel, latencies overlap;
 *     none takes no time; every model completes in arrival order;
 *   - bad arguments: a zero span, an unknown model;
 *   - the scheduler's emulated device goes through the model: sequential
 *     1 MiB reads of one file complete one transfer time apart.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "iosched/sched_util.h"

#include "check.h"

#define MiB (1ull << 20)

static void test_hdd_parts(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_HDD);
	uint64_t span = 64ull << 30, full, prev_seek = 0, d, now = 0;
	double ts = 1e6, half = 60e9 / 7200 / 2, xfer_1m = (double)MiB / 54e6 * 1e9;
	struct ios_disk *disk = ios_disk_create(&set, span);
	struct ios_disk_time t;

	CHECK(disk);
	if (!disk)
		return;
	full = ios_disk_full_stroke_ns(disk);
	/* calibrated: about 1.8x the average seek, for a 1 MiB track on 64 GiB */
	CHECK(full > 15000000 && full < 15200000);

	/* the head starts at 0: a read there only transfers */
	ios_disk_serve(disk, 0, MiB, IOS_READ, now, &t);
	CHECK(t.start_ns == 0 && t.seek_ns == 0 && t.rotation_ns == 0 && t.latency_ns == 0);
	CHECK(near((double)t.transfer_ns, xfer_1m, 1e-6));
	CHECK(t.done_ns == t.transfer_ns);
	now = t.done_ns;

	/* continuing: no seek */
	ios_disk_serve(disk, MiB, MiB, IOS_WRITE, now, &t);
	CHECK(t.seek_ns == 0 && t.rotation_ns == 0 && t.start_ns == now);
	now = t.done_ns;

	/* a flush: a track switch, the head stays at 2 MiB */
	ios_disk_serve(disk, 0, 0, IOS_SYNC, now, &t);
	CHECK(t.latency_ns == (uint64_t)ts && t.seek_ns == 0 && t.transfer_ns == 0);
	CHECK(t.done_ns == now + (uint64_t)ts);
	now = t.done_ns;
	ios_disk_serve(disk, 2 * MiB, 8192, IOS_READ, now, &t);
	CHECK(t.seek_ns == 0);
	now = t.done_ns;

	/* a short jump (under track_kb): a track switch, no rotation */
	ios_disk_serve(disk, 2 * MiB + 8192 + 512 * 1024, 8192, IOS_READ, now, &t);
	CHECK(t.seek_ns == (uint64_t)ts && t.rotation_ns == 0);
	now = t.done_ns;

	/* seeks: track switch + (full - ts) * sqrt(distance / span) + half a
	 * revolution, growing with the distance */
	for (d = 4 * MiB; d <= span; d *= 4) {
		uint64_t from = 3 * MiB, expect;

		ios_disk_serve(disk, 0, from, IOS_READ, now, &t); /* head to 3 MiB */
		now = t.done_ns;
		ios_disk_serve(disk, from + d, 8192, IOS_READ, now, &t);
		now = t.done_ns;
		expect = (uint64_t)(ts + ((double)full - ts) * sqrt((double)d / (double)span));
		CHECK(t.seek_ns + 1 >= expect && t.seek_ns <= expect + 1);
		CHECK(near((double)t.rotation_ns, half, 1e-6));
		CHECK(t.seek_ns > prev_seek);
		CHECK(t.done_ns - t.start_ns == t.seek_ns + t.rotation_ns + t.transfer_ns);
		prev_seek = t.seek_ns;
	}
	/* the far end of the span: a full stroke */
	ios_disk_serve(disk, 0, 0, IOS_READ, now, &t);
	now = t.done_ns;
	ios_disk_serve(disk, span, 0, IOS_READ, now, &t);
	CHECK(t.seek_ns + 1 >= full && t.seek_ns <= full + 1);
	ios_disk_destroy(disk);

	/* rotation follows rpm */
	set.rpm = 15000;
	disk = ios_disk_create(&set, span);
	CHECK(disk);
	if (!disk)
		return;
	ios_disk_serve(disk, span / 2, 4096, IOS_READ, 0, &t);
	CHECK(t.rotation_ns == 2000000);
	ios_disk_destroy(disk);
}

static void test_one_head(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_HDD);
	struct ios_disk *disk = ios_disk_create(&set, 1ull << 30);
	struct ios_disk_time t[8];
	uint64_t addr[8] = {500 * MiB, 10 * MiB,  900 * MiB, 11 * MiB,
			    0,	       700 * MiB, 3 * MiB,   1000 * MiB};
	int i;

	CHECK(disk);
	if (!disk)
		return;
	/* eight requests arrive at once: served in arrival order, each starting
	 * when the one before is done (no reordering by position) */
	for (i = 0; i < 8; i++)
		ios_disk_serve(disk, addr[i], 8192, IOS_READ, 1000, &t[i]);
	CHECK(t[0].start_ns == 1000);
	for (i = 1; i < 8; i++) {
		CHECK(t[i].start_ns == t[i - 1].done_ns);
		CHECK(t[i].done_ns - t[i].start_ns ==
		      t[i].seek_ns + t[i].rotation_ns + t[i].transfer_ns);
	}
	/* one arriving long after: starts at its arrival */
	ios_disk_serve(disk, 5 * MiB, 8192, IOS_READ, t[7].done_ns + 1000000000, &t[0]);
	CHECK(t[0].start_ns == t[7].done_ns + 1000000000);
	ios_disk_destroy(disk);
}

/* mean_seek() -- the mean seek (ns) of @n seeks between uniformly random
 * addresses on a disk of @span bytes; also the mean service time of random
 * 8 KiB reads served back to back into *@mean_service. */
static double mean_seek(const struct ios_settings *set, uint64_t span, int n, double *mean_service)
{
	struct ios_disk *disk = ios_disk_create(set, span);
	struct ios_disk_time t;
	uint64_t seed = 0x2004, now = 0, first = 0;
	double sum = 0;
	int i;

	CHECK(disk);
	if (!disk)
		return 0;
	for (i = 0; i < n; i++) {
		uint64_t a = xorshift(&seed) % (span / 8192) * 8192;

		ios_disk_serve(disk, a, 8192, IOS_READ, 0, &t);
		if (i == 0)
			first = t.done_ns;
		else
			sum += (double)t.seek_ns;
		now = t.done_ns;
	}
	if (mean_service)
		*mean_service = (double)(now - first) / (n - 1);
	ios_disk_destroy(disk);
	return sum / (n - 1);
}

static void test_calibration(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_HDD);
	const uint64_t spans[] = {256 * MiB, 4ull << 30, 64ull << 30, 16 * MiB};
	const double seeks[] = {8.5, 4, 12};
	double service, predicted;
	size_t i, j;

	for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
		for (j = 0; j < sizeof(seeks) / sizeof(seeks[0]); j++) {
			double m;

			set.seek_ms = seeks[j];
			m = mean_seek(&set, spans[i], 200000, NULL);
			if (!near(m, seeks[j] * 1e6, 0.01))
				fprintf(stderr, "span %llu MiB, seek_ms %.1f: mean seek %.3f ms\n",
					(unsigned long long)(spans[i] / MiB), seeks[j], m / 1e6);
			CHECK(near(m, seeks[j] * 1e6, 0.01));
		}
	/* the prediction the loop-device validation uses: random 8 KiB reads
	 * back to back, 1 / (seek_ms + half a revolution + transfer) */
	set = model_settings(IOS_DEVICE_HDD);
	mean_seek(&set, 256 * MiB, 20000, &service);
	predicted = 8.5e6 + 60e9 / 7200 / 2 + 8192 / 54e6 * 1e9;
	CHECK(near(service, predicted, 0.02));
	/* a seek shorter than a track switch: every jump costs seek_ms */
	set.seek_ms = 0.5;
	CHECK(near(mean_seek(&set, 256 * MiB, 1000, NULL), 0.5e6, 1e-6));
}

static void test_ssd_none(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_SSD);
	struct ios_disk *disk = ios_disk_create(&set, 1ull << 30);
	struct ios_disk_time a, b, c;
	double xfer = 4096 / 54e6 * 1e9;

	CHECK(disk);
	if (!disk)
		return;
	/* two 4 KiB reads at once: the second's transfer follows the first's,
	 * the latencies overlap */
	ios_disk_serve(disk, 0, 4096, IOS_READ, 0, &a);
	ios_disk_serve(disk, 512 * MiB, 4096, IOS_READ, 0, &b);
	CHECK(a.latency_ns == 100000 && a.seek_ns == 0 && a.rotation_ns == 0);
	CHECK(near((double)a.transfer_ns, xfer, 1e-4));
	CHECK(a.done_ns == a.transfer_ns + 100000);
	CHECK(b.start_ns == a.transfer_ns);
	CHECK(b.done_ns == b.start_ns + b.transfer_ns + 100000);
	CHECK(b.done_ns < a.done_ns + 100000); /* overlapped */
	/* a flush: the latency alone, after the earlier ones */
	ios_disk_serve(disk, 0, 0, IOS_SYNC, 0, &c);
	CHECK(c.transfer_ns == 0 && c.done_ns >= b.done_ns);
	CHECK(ios_disk_full_stroke_ns(disk) == 0);
	ios_disk_destroy(disk);

	set.device_model = IOS_DEVICE_NONE;
	disk = ios_disk_create(&set, 1ull << 30);
	CHECK(disk);
	if (!disk)
		return;
	CHECK(ios_disk_serve(disk, 100 * MiB, MiB, IOS_WRITE, 12345, &a) == 12345);
	CHECK(a.start_ns == 12345 && a.transfer_ns == 0);
	ios_disk_destroy(disk);
}

static void test_bad_args(void)
{
	struct ios_settings set = model_settings(IOS_DEVICE_HDD);

	errno = 0;
	CHECK(ios_disk_create(&set, 0) == NULL && errno == EINVAL);
	set.device_model = 7;
	errno = 0;
	CHECK(ios_disk_create(&set, 1 << 20) == NULL && errno == EINVAL);
	ios_disk_destroy(NULL);
}

/* The scheduler's emulated device uses the model: queued 1 MiB reads of one
 * file, 256 KiB apart (a track switch), complete a track switch plus one
 * transfer time (1 MiB at 54 MB/s) apart. */
static void test_emulated_device(void)
{
	struct ios_settings set;
	struct ios_sched *s;
	struct treq t[4];
	int fd = tmpfile_fd(), i;
	uint64_t step = (uint64_t)((double)MiB / 54e6 * 1e9) + 1000000;

	settings(&set, IOS_POLICY_NOOP, IOS_DEVICE_HDD);
	set.queue_depth = 1;
	s = ios_create_virtual(&set);
	CHECK(s);
	if (!s)
		return;
	CHECK(ftruncate(fd, 8 * MiB) == 0);
	for (i = 0; i < 4; i++)
		submit(s, &t[i], fd, 7, IOS_CLASS_HEAP, IOS_READ,
		       (off_t)i * (off_t)(MiB + 256 * 1024), MiB, 0);
	ios_virtual_advance(s, 10000 * MS);
	for (i = 0; i < 4; i++)
		CHECK(t[i].calls == 1 && t[i].res == (ssize_t)MiB);
	for (i = 1; i < 4; i++) {
		uint64_t gap = t[i].done_at - t[i - 1].done_at;

		CHECK(gap + 2 >= step && gap <= step + 2);
	}
	ios_destroy(s);
	for (i = 0; i < 4; i++)
		free(t[i].buf);
	close(fd);
}

int main(void)
{
	test_hdd_parts();
	test_one_head();
	test_calibration();
	test_ssd_none();
	test_bad_args();
	test_emulated_device();
	return failures ? 1 : 0;
}
