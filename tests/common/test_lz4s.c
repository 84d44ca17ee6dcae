/*
 * test_lz4s.c -- the lz4 frame byte stream (common/lz4s.h): items of every
 * size, larger than a chunk and than the whole pool, written through a
 * two-chunk pool that must wait for room, come back byte for byte and in
 * order, through lz4s_peek() and lz4s_read(); `lz4 -d` would take the file
 * (checked by the trace tests); without waiting, an item larger than the
 * room is dropped whole and counted; a stream cut short is reported with
 * the byte and the records decoded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lz4s.h"

#include "check.h"

#define NITEMS 40

/* fill() -- item @i: @n bytes of a pattern only it has. */
static void fill(unsigned char *p, size_t n, int i)
{
	size_t k;

	for (k = 0; k < n; k++)
		p[k] = (unsigned char)(i * 31 + k / 7);
}

static size_t item_len(int i)
{
	static const size_t lens[] = {0, 1, 48, 65535, 65536, 65537, 300000, 7};

	return lens[i % 8] + (size_t)i;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096], cut[4200];
	struct lz4s_writer_opts o = {.buffer_bytes = 2 * LZ4S_CHUNK_BYTES, .wait_when_full = 1};
	struct lz4s_writer_stats st;
	struct lz4s_writer *w;
	struct lz4s_reader *r;
	unsigned char *a = malloc(400000), *b = malloc(400000);
	const unsigned char *p;
	int fd, i, err;
	int ok = 1;

	snprintf(path, sizeof(path), "%s/test_lz4s.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	CHECK(fd >= 0 && a && b);
	o.fd = fd;
	w = lz4s_writer_create(NULL, &o, "HEAD", 4, &err);
	CHECK(w != NULL);
	for (i = 0; i < NITEMS; i++) {
		fill(a, item_len(i), i);
		CHECK(lz4s_write(w, a, item_len(i)) == 0);
	}
	CHECK(lz4s_writer_close(w, &st) == 0);
	CHECK(st.items == NITEMS && st.dropped == 0);

	r = lz4s_reader_open(path, "stream", &err);
	CHECK(r != NULL);
	CHECK(lz4s_peek(r, 4, &p) == 1 && memcmp(p, "HEAD", 4) == 0);
	lz4s_consume(r, 4, 0);
	for (i = 0; i < NITEMS && ok; i++) {
		fill(a, item_len(i), i);
		ok = lz4s_read(r, b, item_len(i)) == 1 && memcmp(a, b, item_len(i)) == 0;
		CHECK(ok);
	}
	CHECK(lz4s_peek(r, 1, &p) == 0 && lz4s_pending(r) == 0);
	CHECK(lz4s_read(r, b, 1) == 0);
	lz4s_reader_close(r);

	/* cut short: the error names the byte */
	snprintf(cut, sizeof(cut), "%s.cut", path);
	{
		int in = open(path, O_RDONLY), out = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ssize_t n = read(in, b, 400000);

		CHECK(n > 100 && write(out, b, (size_t)n / 2) == n / 2);
		close(in);
		close(out);
	}
	r = lz4s_reader_open(cut, "stream", &err);
	for (i = 0; i < NITEMS; i++)
		if (lz4s_read(r, b, item_len(i)) != 1)
			break;
	CHECK(i < NITEMS && strstr(lz4s_reader_error(r), "truncated at byte"));
	lz4s_reader_close(r);
	unlink(cut);
	unlink(path);

	/* without waiting: an item larger than the room is dropped whole */
	o.wait_when_full = 0;
	o.fd = open("/dev/null", O_WRONLY);
	w = lz4s_writer_create(NULL, &o, NULL, 0, &err);
	CHECK(w != NULL);
	CHECK(lz4s_write(w, a, 3 * LZ4S_CHUNK_BYTES) == -ENOBUFS);
	CHECK(lz4s_write(w, a, 100) == 0);
	CHECK(lz4s_writer_close(w, &st) == 0 && st.items == 1 && st.dropped == 1);
	CHECK(st.bytes_in == 100);
	free(a);
	free(b);
	if (!failures)
		printf("ok\n");
	return failures ? 1 : 0;
}
