/*
 * test_trace.c -- I/O traces (iosched/trace.c):
 *   - round trip of 1e6 records (every field, in order, none dropped when
 *     the writer may wait), header info, clean end that stays clean;
 *   - an empty trace reads as zero records; an empty file is an error;
 *   - bounded memory: with a 128 KiB buffer and an output that does not
 *     drain, a million records are dropped and counted instead of growing
 *     memory, and what was accepted decodes in order once it drains;
 *   - truncated files at many lengths and flipped bytes at many places:
 *     every record before the damage comes back intact, then -EBADMSG with
 *     a message naming the byte; never a wrong record, never a clean end;
 *   - concurrent writers: four threads, every record present, each
 *     thread's in order;
 *   - output errors (file size limit): close returns the error, waiting
 *     writers do not hang, records are dropped and counted;
 *   - crafted streams: not a trace, a newer version, an invalid record; a
 *     version 1 trace (no dev) and a larger record size from a later
 *     version are read;
 *   - an existing file is refused and left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iosched/trace_gen.h"

#include "check.h"

static char dir[] = "/tmp/test_trace.XXXXXX";

static char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* write_trace() -- @n records of stream @seed into @path, waiting for room. */
static void write_trace(const char *path, uint64_t seed, uint64_t n)
{
	struct ios_trace_opts o = {.wait_when_full = 1};
	struct ios_trace_writer *w;
	struct ios_trace_stats st;
	struct ios_trace_rec rec;
	uint64_t i;
	int err;

	w = ios_trace_writer_create_opts(path, &o, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	for (i = 0; i < n; i++) {
		gen_rec(seed, i, &rec);
		CHECK(ios_trace_write(w, &rec) == 0);
	}
	CHECK(ios_trace_writer_close(w, &st) == 0);
	CHECK(st.records == n && st.dropped == 0 && st.error == 0);
	CHECK(st.bytes_in == IOS_TRACE_HEADER_SIZE + n * IOS_TRACE_REC_SIZE);
}

/* read_prefix() -- read @path comparing with stream @seed; the number of
 * records read intact; *@last gets the final return (0 or -errno). */
static uint64_t read_prefix(const char *path, uint64_t seed, int *last, char *msg, size_t msglen)
{
	struct ios_trace_reader *r;
	struct ios_trace_rec got, want;
	uint64_t i = 0;
	int ret, err;

	r = ios_trace_reader_open(path, &err);
	CHECK(r != NULL);
	if (!r) {
		*last = err;
		return 0;
	}
	while ((ret = ios_trace_read(r, &got)) == 1) {
		struct ios_trace_info info;

		gen_rec(seed, i, &want);
		if (ios_trace_reader_info(r, &info) == 0 && info.version == 1)
			want.dev = 0; /* version 1 had no dev */
		if (!rec_equal(&got, &want)) {
			fprintf(stderr, "%s: record %" PRIu64 " is wrong\n", path, i);
			failures++;
			break;
		}
		i++;
	}
	*last = ret;
	if (msg)
		snprintf(msg, msglen, "%s", ios_trace_reader_error(r));
	if (ret < 0)
		CHECK(ios_trace_read(r, &got) == ret); /* sticky */
	else
		CHECK(ios_trace_read(r, &got) == 0);
	ios_trace_reader_close(r);
	return i;
}

static void test_round_trip(void)
{
	const uint64_t n = 1000000;
	struct ios_trace_reader *r;
	struct ios_trace_info info;
	struct stat st;
	uint64_t got;
	int last, err;

	write_trace(tpath("big.trc"), 7, n);
	CHECK(stat(tpath("big.trc"), &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(st.st_size > 0 && (uint64_t)st.st_size < n * IOS_TRACE_REC_SIZE);
	got = read_prefix(tpath("big.trc"), 7, &last, NULL, 0);
	CHECK(got == n && last == 0);
	r = ios_trace_reader_open(tpath("big.trc"), &err);
	CHECK(r && ios_trace_reader_info(r, &info) == 0);
	CHECK(info.version == 2 && info.header_size == 32 && info.rec_size == 56);
	CHECK(info.start_realtime_ns > 1600000000ull * 1000000000ull);
	CHECK(info.start_monotonic_ns > 0 && info.start_monotonic_ns <= ios_now_ns());
	CHECK(strcmp(ios_trace_reader_error(r), "") == 0);
	ios_trace_reader_close(r);
	ios_trace_reader_close(NULL);
	CHECK(ios_trace_writer_close(NULL, NULL) == 0);
	printf("round trip: %" PRIu64 " records, %lld bytes (%.1f bytes/record)\n", n,
	       (long long)st.st_size, (double)st.st_size / (double)n);
}

static void test_empty(void)
{
	char msg[512];
	uint64_t got;
	int last, err, fd;
	struct ios_trace_writer *w = ios_trace_writer_create(tpath("empty.trc"), &err);

	CHECK(w != NULL);
	CHECK(ios_trace_writer_close(w, NULL) == 0);
	got = read_prefix(tpath("empty.trc"), 1, &last, NULL, 0);
	CHECK(got == 0 && last == 0);

	fd = open(tpath("zero.trc"), O_CREAT | O_WRONLY, 0600);
	close(fd);
	got = read_prefix(tpath("zero.trc"), 1, &last, msg, sizeof(msg));
	CHECK(got == 0 && last == -EBADMSG && strstr(msg, "empty"));
	CHECK(ios_trace_reader_open(tpath("missing.trc"), &err) == NULL && err == -ENOENT);
}

static void test_exists(void)
{
	int err, last;

	write_trace(tpath("keep.trc"), 3, 10);
	CHECK(ios_trace_writer_create(tpath("keep.trc"), &err) == NULL && err == -EEXIST);
	CHECK(read_prefix(tpath("keep.trc"), 3, &last, NULL, 0) == 10 && last == 0);
	CHECK(ios_trace_writer_create(NULL, &err) == NULL && err == -EINVAL);
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

struct drain {
	int rfd, wfd;
};

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(d->rfd, buf, sizeof(buf))) > 0)
		if (write(d->wfd, buf, (size_t)n) != n)
			break;
	return NULL;
}

static void test_bounded_memory(void)
{
	const uint64_t n = 1000000;
	struct ios_trace_opts o = {.buffer_bytes = 128 * 1024};
	struct ios_trace_writer *w;
	struct ios_trace_stats st;
	struct ios_trace_reader *r;
	struct ios_trace_rec rec, prev;
	struct drain d;
	pthread_t th;
	uint64_t i, dropped = 0, got = 0;
	long before, after;
	int p[2], err, ret, ordered = 1;

	CHECK(pipe(p) == 0);
	fcntl(p[1], F_SETPIPE_SZ, 4096); /* the output takes almost nothing */
	o.fd = p[1];
	w = ios_trace_writer_create_opts(NULL, &o, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	before = rss_kib();
	for (i = 0; i < n; i++) {
		gen_rec(5, i, &rec);
		rec.off = i; /* a sequence number, to check the order */
		ret = ios_trace_write(w, &rec);
		CHECK(ret == 0 || ret == -ENOBUFS);
		dropped += ret == -ENOBUFS;
	}
	after = rss_kib();
	ios_trace_writer_stats(w, &st);
	CHECK(st.records + st.dropped == n && st.dropped == dropped);
	/* the pipe holds 4 KiB, lz4 and the pool a few hundred KiB: most of a
	 * million records (48 MB) cannot have been kept */
	CHECK(dropped > n / 2);
	CHECK(after - before < 4096);
	printf("bounded: %" PRIu64 " of %" PRIu64 " dropped, RSS %ld -> %ld KiB\n", dropped, n,
	       before, after);

	/* let it drain into a file and read what was accepted */
	d.rfd = p[0];
	d.wfd = open(tpath("pipe.trc"), O_CREAT | O_EXCL | O_WRONLY, 0600);
	CHECK(d.wfd >= 0);
	CHECK(pthread_create(&th, NULL, drain_pipe, &d) == 0);
	CHECK(ios_trace_writer_close(w, &st) == 0); /* closes p[1] */
	pthread_join(th, NULL);
	close(p[0]);
	close(d.wfd);
	CHECK(st.records + st.dropped == n);
	r = ios_trace_reader_open(tpath("pipe.trc"), &err);
	CHECK(r != NULL);
	while (r && (ret = ios_trace_read(r, &rec)) == 1) {
		if (got && rec.off <= prev.off)
			ordered = 0;
		prev = rec;
		got++;
	}
	CHECK(ret == 0 && got == st.records && ordered);
	ios_trace_reader_close(r);
}

/* copy_file() -- the first @len bytes of @src into @dst; @flip >= 0 flips
 * bit 4 of that byte. */
static void copy_file(const char *src, const char *dst, off_t len, off_t flip)
{
	int in = open(src, O_RDONLY), out = open(dst, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	char *buf = malloc((size_t)len + 1);

	CHECK(in >= 0 && out >= 0 && buf);
	CHECK(pread(in, buf, (size_t)len, 0) == (ssize_t)len);
	if (flip >= 0)
		buf[flip] ^= 0x10;
	CHECK(write(out, buf, (size_t)len) == (ssize_t)len);
	free(buf);
	close(in);
	close(out);
}

static void test_damage(void)
{
	const uint64_t n = 100000;
	struct stat st;
	char msg[512];
	off_t size, cut, pos;
	uint64_t got, prev_got = 0;
	int last, k, monotonic = 1;

	write_trace(tpath("src.trc"), 11, n);
	CHECK(stat(tpath("src.trc"), &st) == 0);
	size = st.st_size;

	/* truncated at 64 lengths from nothing to one byte short */
	for (k = 0; k <= 64; k++) {
		cut = k == 64 ? size - 1 : size * k / 64;
		copy_file(tpath("src.trc"), tpath("cut.trc"), cut, -1);
		got = read_prefix(tpath("cut.trc"), 11, &last, msg, sizeof(msg));
		if (last != -EBADMSG || !strstr(msg, cut ? "byte" : "empty")) {
			fprintf(stderr, "cut at %lld: %d after %" PRIu64 ": %s\n", (long long)cut,
				last, got, msg);
			failures++;
		}
		if (got < prev_got)
			monotonic = 0;
		prev_got = got;
		if (k == 32)
			printf("cut at %lld: %" PRIu64 " records, then: %s\n", (long long)cut, got,
			       msg);
	}
	CHECK(monotonic);
	CHECK(prev_got == n); /* one byte short: every record, then the error */
	CHECK(strstr(msg, "truncated at byte") != NULL);

	/* one flipped bit at 200 places, frame header and checksums included */
	for (k = 0; k < 200; k++) {
		pos = k < 20 ? k : k >= 190 ? size - (200 - k) : (size * (k - 20)) / 170;
		copy_file(tpath("src.trc"), tpath("flip.trc"), size, pos);
		got = read_prefix(tpath("flip.trc"), 11, &last, msg, sizeof(msg));
		if (last != -EBADMSG || !strstr(msg, "byte") || got > n) {
			fprintf(stderr, "flip at %lld: %d after %" PRIu64 ": %s\n", (long long)pos,
				last, got, msg);
			failures++;
		}
		if (k == 100)
			printf("flip at %lld: %" PRIu64 " records, then: %s\n", (long long)pos, got,
			       msg);
	}
}

/* ---- concurrent writers ---------------------------------------------------- */

#define NWRITERS   4
#define PER_WRITER 100000

struct writer_arg {
	struct ios_trace_writer *w;
	unsigned id;
};

static void *writer(void *arg)
{
	struct writer_arg *a = arg;
	struct ios_trace_rec rec;
	uint64_t i;

	for (i = 0; i < PER_WRITER; i++) {
		gen_rec(a->id, i, &rec);
		rec.pid = a->id;
		rec.off = i;
		if (ios_trace_write(a->w, &rec) != 0)
			return (void *)1;
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct ios_trace_opts o = {.wait_when_full = 1, .buffer_bytes = 256 * 1024};
	struct writer_arg a[NWRITERS];
	pthread_t th[NWRITERS];
	uint64_t next[NWRITERS] = {0}, total = 0;
	struct ios_trace_writer *w;
	struct ios_trace_reader *r;
	struct ios_trace_stats st;
	struct ios_trace_rec rec, want;
	void *res;
	int err, ret, i, bad = 0;

	w = ios_trace_writer_create_opts(tpath("conc.trc"), &o, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	for (i = 0; i < NWRITERS; i++) {
		a[i] = (struct writer_arg){w, (unsigned)i};
		CHECK(pthread_create(&th[i], NULL, writer, &a[i]) == 0);
	}
	for (i = 0; i < NWRITERS; i++) {
		pthread_join(th[i], &res);
		CHECK(res == NULL);
	}
	CHECK(ios_trace_writer_close(w, &st) == 0);
	CHECK(st.records == NWRITERS * PER_WRITER && st.dropped == 0);
	r = ios_trace_reader_open(tpath("conc.trc"), &err);
	CHECK(r != NULL);
	while (r && (ret = ios_trace_read(r, &rec)) == 1) {
		if (rec.pid >= NWRITERS || rec.off != next[rec.pid]) {
			bad++;
			continue;
		}
		gen_rec(rec.pid, rec.off, &want);
		want.pid = rec.pid;
		want.off = rec.off;
		bad += !rec_equal(&rec, &want);
		next[rec.pid]++;
		total++;
	}
	CHECK(ret == 0 && bad == 0 && total == NWRITERS * PER_WRITER);
	for (i = 0; i < NWRITERS; i++)
		CHECK(next[i] == PER_WRITER);
	ios_trace_reader_close(r);
}

/* ---- output errors ------------------------------------------------------- */

/* output_error_child() -- in a child: a 32 KiB file size limit makes the
 * output fail with EFBIG; @wait says whether writers wait for room.  The
 * limit is below what the records still buffered at close compress to
 * (2 chunks of 64 KiB, about 60 KiB compressed): the output fails even if
 * the background thread had no time to write anything before the close. */
static int output_error_child(int wait)
{
	struct ios_trace_opts o = {.wait_when_full = wait, .buffer_bytes = 128 * 1024};
	struct rlimit rl = {32768, 32768};
	struct ios_trace_writer *w;
	struct ios_trace_stats st;
	struct ios_trace_rec rec;
	uint64_t i;
	int err, ret;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 2;
	w = ios_trace_writer_create_opts(tpath(wait ? "efbig1.trc" : "efbig0.trc"), &o, &err);
	if (!w)
		return 3;
	for (i = 0; i < 200000; i++) { /* 9.6 MB raw: far beyond the limit */
		gen_rec(9, i, &rec);
		ios_trace_write(w, &rec);
	}
	ret = ios_trace_writer_close(w, &st);
	if (ret != -EFBIG || st.error != -EFBIG || st.dropped == 0 ||
	    st.records + st.dropped != 200000)
		return 4;
	return 0;
}

static void test_output_error(void)
{
	char msg[512];
	int wait, status, last;
	uint64_t got;
	pid_t pid;

	for (wait = 0; wait <= 1; wait++) {
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			_exit(output_error_child(wait));
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "output error (wait %d): child status 0x%x\n", wait,
				status);
			failures++;
		}
		/* what reached the file is a readable, truncated trace */
		got = read_prefix(tpath(wait ? "efbig1.trc" : "efbig0.trc"), 9, &last, msg,
				  sizeof(msg));
		CHECK(last == -EBADMSG && strstr(msg, "truncated"));
		CHECK(got > 0);
	}
}

/* ---- crafted streams ------------------------------------------------------- */

/* write_frame() -- @len bytes of @data as one lz4 frame into @name. */
static void write_frame(const char *name, const void *data, size_t len)
{
	size_t cap = LZ4F_compressFrameBound(len, NULL), n;
	void *buf = malloc(cap);
	int fd = open(tpath(name), O_CREAT | O_TRUNC | O_WRONLY, 0600);

	n = LZ4F_compressFrame(buf, cap, data, len, NULL);
	CHECK(!LZ4F_isError(n) && fd >= 0);
	CHECK(write(fd, buf, n) == (ssize_t)n);
	close(fd);
	free(buf);
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* craft() -- a header (version @ver, record size @rsz) and @n records of
 * stream 13 laid out by hand (version 1 without dev), each followed by
 * 0xEE bytes up to @rsz. */
static size_t craft(unsigned char *buf, unsigned ver, unsigned rsz, unsigned n)
{
	struct ios_trace_rec r;
	unsigned char *p = buf;
	unsigned i;

	memcpy(p, "PGIOTRC1", 8);
	put_le(p + 8, ver, 2);
	put_le(p + 10, 32, 2);
	put_le(p + 12, rsz, 2);
	put_le(p + 14, 0, 2);
	put_le(p + 16, 1, 8);
	put_le(p + 24, 2, 8);
	p += 32;
	for (i = 0; i < n; i++, p += rsz) {
		gen_rec(13, i, &r);
		put_le(p, r.time_ns, 8);
		put_le(p + 8, r.ino, 8);
		put_le(p + 16, r.off, 8);
		put_le(p + 24, r.len, 4);
		put_le(p + 28, r.pid, 4);
		put_le(p + 32, r.queue_us, 4);
		put_le(p + 36, r.service_us, 4);
		put_le(p + 40, (uint32_t)r.result, 4);
		p[44] = r.cls;
		p[45] = r.dir;
		put_le(p + 46, r.flags, 2);
		if (ver >= 2 && rsz >= 56)
			put_le(p + 48, r.dev, 8);
		memset(p + (ver >= 2 ? 56 : 48), 0xEE, rsz - (ver >= 2 ? 56 : 48));
	}
	return (size_t)(p - buf);
}

static void test_crafted(void)
{
	static unsigned char buf[64 * 100 + 64];
	char msg[512];
	uint64_t got;
	size_t len;
	int last;

	/* the hand-made layout is what the writer makes */
	len = craft(buf, 2, 56, 100);
	write_frame("hand.trc", buf, len);
	got = read_prefix(tpath("hand.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 100 && last == 0);
	/* version 1 (no dev) is still read, with dev 0 */
	len = craft(buf, 1, 48, 100);
	write_frame("v1.trc", buf, len);
	got = read_prefix(tpath("v1.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 100 && last == 0);
	/* a later version's longer records: the known fields still read */
	len = craft(buf, 2, 64, 100);
	write_frame("long.trc", buf, len);
	got = read_prefix(tpath("long.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 100 && last == 0);
	/* a newer version is refused */
	len = craft(buf, 3, 56, 10);
	write_frame("v3.trc", buf, len);
	got = read_prefix(tpath("v3.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 0 && last == -EBADMSG && strstr(msg, "version 3"));
	/* a short record size is refused: less than version 2's 56 bytes,
	 * less than version 1's 48 */
	len = craft(buf, 2, 56, 10);
	put_le(buf + 12, 48, 2);
	write_frame("short.trc", buf, len);
	CHECK(read_prefix(tpath("short.trc"), 13, &last, msg, sizeof(msg)) == 0);
	CHECK(last == -EBADMSG && strstr(msg, "record size 48"));
	len = craft(buf, 1, 48, 10);
	put_le(buf + 12, 40, 2);
	write_frame("short1.trc", buf, len);
	CHECK(read_prefix(tpath("short1.trc"), 13, &last, msg, sizeof(msg)) == 0);
	CHECK(last == -EBADMSG && strstr(msg, "record size 40"));
	/* record 7 has class 200: records 0..6, then an error naming it */
	len = craft(buf, 2, 56, 10);
	buf[32 + 7 * 56 + 44] = 200;
	write_frame("badrec.trc", buf, len);
	got = read_prefix(tpath("badrec.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 7 && last == -EBADMSG && strstr(msg, "record 7") && strstr(msg, "class 200"));
	/* a partial record at the end */
	len = craft(buf, 2, 56, 10);
	write_frame("partial.trc", buf, len - 20);
	got = read_prefix(tpath("partial.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 9 && last == -EBADMSG && strstr(msg, "partial record"));
	/* another frame after the trace */
	{
		int fd = open(tpath("hand.trc"), O_WRONLY | O_APPEND);

		CHECK(fd >= 0 && write(fd, "xyz", 3) == 3);
		close(fd);
		got = read_prefix(tpath("hand.trc"), 13, &last, msg, sizeof(msg));
		CHECK(got == 100 && last == -EBADMSG && strstr(msg, "after the end"));
	}
	/* lz4, but not a trace */
	write_frame("other.trc", "0123456789abcdefghijklmnopqrstuvwxyz0123456789", 46);
	got = read_prefix(tpath("other.trc"), 13, &last, msg, sizeof(msg));
	CHECK(got == 0 && last == -EBADMSG && strstr(msg, "not a pgiofs trace"));
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip();
	test_empty();
	test_exists();
	test_bounded_memory();
	test_damage();
	test_concurrent();
	test_output_error();
	test_crafted();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_trace: could not remove %s\n", dir);
	if (failures) {
		fprintf(stderr, "test_trace: %d checks failed\n", failures);
		return 1;
	}
	printf("test_trace: all checks passed\n");
	return 0;
}
