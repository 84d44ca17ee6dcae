/*
 * helper_stats.c -- print iosched statistics for a fixed, known load as
 * JSON, for test_stats_json.sh to parse with a real JSON parser.
 *
 *   helper_stats json      one cumulative snapshot (with extra fields)
 *   helper_stats interval  a cumulative snapshot, then the diff of a second
 *                          load against it, one JSON object per line
 *   helper_stats table     the table
 *
 * The load: wal 100 writes of 8 KiB at 1 ms and 100 fdatasyncs at 2 ms;
 * heap 1000 reads of 8 KiB with latencies 1..1000 us; index 1 failed read
 * (-EIO) of 3 s and 3 merges; temp 2 writes at 12 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "iosched.h"

static void account(struct ios_stats *s, enum ios_class cls, enum ios_dir dir, ssize_t res,
		    uint64_t lat_ns)
{
	struct ios_req r;

	memset(&r, 0, sizeof(r));
	r.cls = cls;
	r.dir = dir;
	ios_stats_account(s, &r, res, lat_ns / 4, lat_ns - lat_ns / 4);
}

static void load(struct ios_stats *s)
{
	int i;

	for (i = 0; i < 100; i++) {
		account(s, IOS_CLASS_WAL, IOS_WRITE, 8192, 1000000);
		account(s, IOS_CLASS_WAL, IOS_SYNC, 0, 2000000);
	}
	for (i = 1; i <= 1000; i++)
		account(s, IOS_CLASS_HEAP, IOS_READ, 8192, (uint64_t)i * 1000);
	account(s, IOS_CLASS_INDEX, IOS_READ, -EIO, 3000000000ull);
	ios_stats_note_merge(s, IOS_CLASS_INDEX, 3);
	for (i = 0; i < 2; i++)
		account(s, IOS_CLASS_TEMP, IOS_WRITE, 65536, 12000000000ull);
	ios_stats_note_readahead(s, IOS_CLASS_HEAP, 131072, 16384);
}

int main(int argc, char **argv)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	const char *mode = argc > 1 ? argv[1] : "json";
	int ret = 0;

	if (!s || !a || !b) {
		perror("helper_stats");
		return 1;
	}
	load(s);
	ios_stats_snapshot(s, a);
	if (strcmp(mode, "json") == 0) {
		ret = ios_stats_write_json(stdout, a, "\"mount\":\"/srv/pg \\\"q\\\"\",\"pid\":42");
	} else if (strcmp(mode, "interval") == 0) {
		ret = ios_stats_write_json(stdout, a, NULL);
		load(s);
		ios_stats_snapshot(s, b);
		ios_stats_snapshot_diff(a, b, b);
		if (ret == 0)
			ret = ios_stats_write_json(stdout, b, NULL);
	} else if (strcmp(mode, "table") == 0) {
		ios_stats_print_table(stdout, a);
	} else {
		fprintf(stderr, "usage: helper_stats json|interval|table\n");
		ret = -EINVAL;
	}
	free(a);
	free(b);
	ios_stats_destroy(s);
	return ret == 0 ? 0 : 1;
}
