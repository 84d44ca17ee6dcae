/*
 * fuzz_parser.c -- libFuzzer target for pgload's script splitter.
 *
 * Built by tests/pgload/test_fuzz.sh with clang -fsanitize=fuzzer,address
 * (the top-level Makefile has no rule for it).  Every input must parse
 * without a crash, leak or overflow, and the items must account for the
 * input: SQL text and COPY data never exceed it, lines never go backwards.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pgload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	if (fd < 0)
		fd = memfd_create("fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	struct pgl_input *in;
	struct pgl_parser *p;
	struct pgl_item it;
	char err[256];
	if (pgl_input_open(path, &in, err) < 0)
		abort();
	if (pgl_parser_create(in, "fuzz", &p) < 0)
		abort();
	/* the first byte picks the string mode, as the server could */
	if (size > 0 && (data[0] & 1))
		pgl_parser_set_std_strings(p, false);
	/* and the second bit a small line limit, to reach the limit's paths */
	if (size > 1 && (data[0] & 2))
		pgl_parser_set_max_line(p, 16 + data[1]);
	size_t copy = 0;
	unsigned long line = 1;
	int ret;
	while ((ret = pgl_parser_next(p, &it)) > 0) {
		if (it.kind == PGL_ITEM_COPY_DATA) {
			copy += it.len;
			if (it.len == 0 || copy > size)
				abort();
		} else if (it.kind == PGL_ITEM_SQL) {
			if (strlen(it.text) > it.len)
				abort();
		}
		if (it.kind != PGL_ITEM_META && it.kind != PGL_ITEM_SQL && it.line < line)
			abort();
		if (it.kind != PGL_ITEM_SQL && it.kind != PGL_ITEM_META)
			line = it.line;
	}
	pgl_parser_destroy(p);
	pgl_input_close(in);
	return 0;
}

#ifdef PGL_FUZZ_DRIVER
/*
 * A stand-in for libFuzzer where clang is missing (built with gcc and
 * -fsanitize=address,undefined): seeded random mutations of the corpus
 * files, with the tokens that matter to the splitter spliced in.
 * usage: fuzz_parser SECONDS FILE...
 */
#include <time.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static const char *const toks[] = {"'",
					   "''",
					   "E'",
					   "\\'",
					   "\"",
					   "$$",
					   "$a$",
					   ";",
					   "--",
					   "/*",
					   "*/",
					   "\n",
					   "\\.",
					   "\\.\n",
					   "\\",
					   "COPY t FROM stdin;\n",
					   "BEGIN ATOMIC ",
					   "END;",
					   "CREATE FUNCTION ",
					   "(",
					   ")",
					   ":x",
					   ":'x'",
					   "\\set x 1\n",
					   "\\restrict k\n",
					   "\\unrestrict k\n",
					   "\r\n",
					   "\t"};
	const size_t ntoks = sizeof(toks) / sizeof(toks[0]);
	char *corpus[64];
	size_t sizes[64];
	int n = 0;
	if (argc < 3)
		return 2;
	double secs = atof(argv[1]);
	for (int i = 2; i < argc && n < 64; i++) {
		FILE *f = fopen(argv[i], "r");
		if (!f)
			continue;
		corpus[n] = malloc(1 << 16);
		sizes[n] = fread(corpus[n], 1, 1 << 16, f);
		fclose(f);
		n++;
	}
	if (n == 0)
		return 2;
	uint8_t *buf = malloc(1 << 17);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long runs = 0;
	do {
		int k = (int)(next_rand() % (uint64_t)n);
		size_t len = sizes[k] < 4096 ? sizes[k] : 4096;
		size_t start = sizes[k] > len ? next_rand() % (sizes[k] - len + 1) : 0;
		memcpy(buf, corpus[k] + start, len);
		int muts = 1 + (int)(next_rand() % 8);
		for (int m = 0; m < muts; m++) {
			size_t pos = len ? next_rand() % (len + 1) : 0;
			switch (next_rand() % 4) {
			case 0: /* insert a token */ {
				const char *tok = toks[next_rand() % ntoks];
				size_t tl = strlen(tok);
				if (len + tl < (1 << 17)) {
					memmove(buf + pos + tl, buf + pos, len - pos);
					memcpy(buf + pos, tok, tl);
					len += tl;
				}
				break;
			}
			case 1: /* flip a byte */
				if (pos < len)
					buf[pos] = (uint8_t)next_rand();
				break;
			case 2: /* cut */
				len = pos;
				break;
			default: /* delete a span */
				if (pos < len) {
					size_t d = 1 + next_rand() % 16;
					if (d > len - pos)
						d = len - pos;
					memmove(buf + pos, buf + pos + d, len - pos - d);
					len -= d;
				}
			}
		}
		LLVMFuzzerTestOneInput(buf, len);
		runs++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("stat::number_of_executed_units: %lu\n", runs);
	free(buf);
	for (int i = 0; i < n; i++)
		free(corpus[i]);
	return 0;
}
#endif
