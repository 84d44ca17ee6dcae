/*
 * helper_trace.c -- write and check traces for test_trace_lz4.sh.
 *
 *   helper_trace write FILE N   write N records of trace_gen.h (seed 1);
 *                               print "records N dropped D"
 *   helper_trace check FILE N   read FILE, compare every record with
 *                               trace_gen.h; print "records K"; exit 0 if
 *                               the trace ends cleanly after exactly N,
 *                               3 if it reports an error (printed on
 *                               stderr), 1 on a wrong record or count
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iosched/trace_gen.h"

int main(int argc, char **argv)
{
	struct ios_trace_rec want, got;
	uint64_t n, i;
	int err = 0, ret;

	if (argc != 4 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "check") != 0)) {
		fprintf(stderr, "usage: helper_trace write|check FILE N\n");
		return 2;
	}
	n = strtoull(argv[3], NULL, 10);
	if (strcmp(argv[1], "write") == 0) {
		struct ios_trace_opts o = {.wait_when_full = 1};
		struct ios_trace_writer *w = ios_trace_writer_create_opts(argv[2], &o, &err);
		struct ios_trace_stats st;

		if (!w) {
			fprintf(stderr, "helper_trace: cannot create \"%s\": %s\n", argv[2],
				strerror(-err));
			return 1;
		}
		for (i = 0; i < n; i++) {
			gen_rec(1, i, &want);
			ios_trace_write(w, &want);
		}
		ret = ios_trace_writer_close(w, &st);
		printf("records %" PRIu64 " dropped %" PRIu64 "\n", st.records, st.dropped);
		if (ret < 0)
			fprintf(stderr, "helper_trace: closing \"%s\": %s\n", argv[2],
				strerror(-ret));
		return ret < 0 || st.dropped ? 1 : 0;
	} else {
		struct ios_trace_reader *r = ios_trace_reader_open(argv[2], &err);

		if (!r) {
			fprintf(stderr, "helper_trace: cannot open \"%s\": %s\n", argv[2],
				strerror(-err));
			return 1;
		}
		for (i = 0; (ret = ios_trace_read(r, &got)) == 1; i++) {
			gen_rec(1, i, &want);
			if (!rec_equal(&got, &want)) {
				fprintf(stderr, "helper_trace: record %" PRIu64 " differs\n", i);
				ios_trace_reader_close(r);
				return 1;
			}
		}
		printf("records %" PRIu64 "\n", i);
		if (ret < 0)
			fprintf(stderr, "%s\n", ios_trace_reader_error(r));
		ios_trace_reader_close(r);
		if (ret < 0)
			return 3;
		return i == n ? 0 : 1;
	}
}
