/*
 * fuzz_iostat.c -- libFuzzer target for pgload's reader of
 * `pgiofs stat --json` output (pgl_io_parse in pgload/iostat.c).
 *
 * Built by tests/pgload/test_fuzz.sh with clang -fsanitize=fuzzer,address
 * (the top-level Makefile has no rule for it).  The input is copied into a
 * buffer of exactly its size, so that any read past the end is caught; an
 * accepted input must parse the same way twice.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgload_i.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	char err[256];
	struct pgl_io a, b;
	if (!buf)
		abort();
	memcpy(buf, data, size);
	int r = pgl_io_parse(buf, size, &a, err, sizeof(err));
	if (r == 0 &&
	    (pgl_io_parse(buf, size, &b, err, sizeof(err)) != 0 || memcmp(&a, &b, sizeof(a)) != 0))
		abort();
	if (r != 0 && memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	free(buf);
	return 0;
}
