/*
 * fuzz_trace.c -- libFuzzer target for the trace decoder (iosched/trace.c):
 * lz4 frames holding a trace header and records.
 *
 * Built by tests/iosched/test_fuzz.sh with clang -fsanitize=fuzzer,address
 * (the top-level Makefile has no rule for it).  Every input must decode
 * without a crash, leak or overflow; reading ends with 0 (a clean end) or
 * an error that stays (sticky) and is explained by a message naming the
 * file; nothing is returned after an error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "iosched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct ios_trace_reader *r;
	struct ios_trace_info info;
	struct ios_trace_rec rec;
	char path[64];
	int err = 0, ret, n = 0;

	if (fd < 0)
		fd = memfd_create("fuzz_trace", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = ios_trace_reader_open(path, &err);
	if (!r)
		abort(); /* only the open itself may fail */
	(void)ios_trace_reader_info(r, &info);
	while ((ret = ios_trace_read(r, &rec)) == 1)
		if (++n > 10000000)
			abort();
	if (ret < 0) {
		if (ios_trace_read(r, &rec) != ret) /* sticky */
			abort();
		if (!strstr(ios_trace_reader_error(r), path))
			abort();
	}
	ios_trace_reader_close(r);
	return 0;
}
