/*
 * test_stats.c -- per-class I/O statistics (iosched/stats.c):
 *   - counters per class and direction, bytes as completed, errors, merges,
 *     readahead, out-of-range classes counted as "other";
 *   - percentiles on known distributions (uniform, two-point, constant,
 *     exact small values) within the histogram's resolution;
 *   - the share over 2 s and 10 s counted exactly; average and maximum;
 *   - four threads accounting concurrently sum exactly;
 *   - a diff shows only the interval (counters, percentiles, maximum);
 *   - JSON: the buffer contract (-ENOSPC, length) and a structural check
 *     (balanced, every class and field present); test_stats_json.sh parses
 *     the output with python3's json module;
 *   - the table has a row per active class and a total row.
 * Deterministic: no clocks in assertions, fixed inputs, seeded values.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iosched.h"

#include "check.h"

static void account(struct ios_stats *s, enum ios_class cls, enum ios_dir dir, ssize_t res,
		    uint64_t queue_ns, uint64_t service_ns)
{
	struct ios_req r;

	memset(&r, 0, sizeof(r));
	r.cls = cls;
	r.dir = dir;
	r.len = res > 0 ? (size_t)res : 8192;
	ios_stats_account(s, &r, res, queue_ns, service_ns);
}

/* near() -- @got is within the histogram's resolution (1/16) of @want. */
static int near(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	return d * 16 <= want;
}

#define CHECK_NEAR(got, want)                                                                      \
	do {                                                                                       \
		uint64_t g_ = (got), w_ = (want);                                                  \
		if (!near(g_, w_)) {                                                               \
			fprintf(stderr, "%s:%d: %s = %" PRIu64 ", want %" PRIu64 " +- 1/16\n",     \
				__FILE__, __LINE__, #got, g_, w_);                                 \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static struct ios_stats_snapshot *snap_new(void)
{
	struct ios_stats_snapshot *s = malloc(sizeof(*s));

	if (!s) {
		perror("malloc");
		exit(1);
	}
	return s;
}

static void test_counters(void)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *sn = snap_new();
	const struct ios_stats_class *w, *h, *o;

	CHECK(s != NULL);
	account(s, IOS_CLASS_WAL, IOS_WRITE, 8192, 1000, 9000);
	account(s, IOS_CLASS_WAL, IOS_WRITE, 4096, 0, 5000);
	account(s, IOS_CLASS_WAL, IOS_SYNC, 0, 100, 200000);
	account(s, IOS_CLASS_WAL, IOS_WRITE, -ENOSPC, 0, 100);
	account(s, IOS_CLASS_HEAP, IOS_READ, 8192, 0, 50000);
	account(s, IOS_CLASS_HEAP, IOS_READ, 100, 0, 50000); /* short read: bytes done */
	account(s, IOS_CLASS_HEAP, IOS_READ, 0, 0, 50000);   /* EOF */
	account(s, (enum ios_class)77, IOS_READ, 10, 0, 1);  /* unknown class -> other */
	ios_stats_account(s, NULL, 1, 1, 1);		     /* ignored */
	ios_stats_account(NULL, NULL, 1, 1, 1);		     /* ignored */
	ios_stats_note_merge(s, IOS_CLASS_HEAP, 3);
	ios_stats_note_readahead(s, IOS_CLASS_HEAP, 65536, 8192);
	CHECK(ios_stats_snapshot(s, sn) == 0);
	CHECK(sn->cumulative == 1);
	w = &sn->cls[IOS_CLASS_WAL];
	h = &sn->cls[IOS_CLASS_HEAP];
	o = &sn->cls[IOS_CLASS_OTHER];
	CHECK(w->write_ops == 3 && w->write_bytes == 12288 && w->sync_ops == 1 && w->errors == 1);
	CHECK(w->read_ops == 0 && w->read_bytes == 0);
	CHECK(w->lat_count == 4);
	CHECK(w->queue_sum_ns == 1100 && w->service_sum_ns == 214100);
	CHECK(w->lat_avg_ns == (1100 + 214100) / 4);
	CHECK(w->lat_max_ns == 200100);
	CHECK(h->read_ops == 3 && h->read_bytes == 8292 && h->errors == 0);
	CHECK(h->merges == 3 && h->ra_hit_bytes == 65536 && h->ra_wasted_bytes == 8192);
	CHECK(o->read_ops == 1 && o->read_bytes == 10);
	CHECK(sn->total.read_ops == 4 && sn->total.write_ops == 3 && sn->total.sync_ops == 1);
	CHECK(sn->total.lat_count == 8 && sn->total.lat_max_ns == 200100);
	CHECK(sn->total.errors == 1 && sn->total.merges == 3);
	CHECK(ios_stats_snapshot(NULL, sn) == -EINVAL && ios_stats_snapshot(s, NULL) == -EINVAL);
	free(sn);
	ios_stats_destroy(s);
	ios_stats_destroy(NULL);
}

static void test_percentiles(void)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *sn = snap_new();
	const struct ios_stats_class *c;
	uint64_t i;

	/* uniform 1 us .. 100 ms in 1 us steps, in a scrambled order */
	for (i = 0; i < 100000; i++) {
		uint64_t v = (i * 7919) % 100000 + 1; /* 7919 is prime: a permutation */

		account(s, IOS_CLASS_HEAP, IOS_READ, 8192, v * 300, v * 700);
	}
	/* two-point: 990 at 1 ms, 10 at 3 s (1% over 2 s, none over 10 s) */
	for (i = 0; i < 990; i++)
		account(s, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 1000000);
	for (i = 0; i < 10; i++)
		account(s, IOS_CLASS_WAL, IOS_SYNC, 0, 1000000000, 2000000000);
	/* constant small values are exact */
	for (i = 0; i < 50; i++)
		account(s, IOS_CLASS_XACT, IOS_WRITE, 8192, 3, 4);
	for (i = 0; i < 50; i++)
		account(s, IOS_CLASS_XACT, IOS_WRITE, 8192, 10, 11);
	/* one very slow request (20 s), the rest fast */
	account(s, IOS_CLASS_TEMP, IOS_WRITE, 8192, 0, 20000000000ull);
	for (i = 0; i < 3; i++)
		account(s, IOS_CLASS_TEMP, IOS_WRITE, 8192, 0, 1000);
	CHECK(ios_stats_snapshot(s, sn) == 0);

	c = &sn->cls[IOS_CLASS_HEAP];
	CHECK(c->lat_count == 100000);
	CHECK_NEAR(c->lat_p50_ns, 50000 * 1000);
	CHECK_NEAR(c->lat_p99_ns, 99000 * 1000);
	CHECK_NEAR(c->lat_p999_ns, 99900 * 1000);
	CHECK(c->lat_max_ns == 100000 * 1000);
	CHECK(c->lat_avg_ns == 50000500); /* mean of 1..100000 us, exact */
	CHECK_NEAR(ios_stats_percentile(c, 0.25), 25000 * 1000);
	CHECK_NEAR(ios_stats_percentile(c, 0.001), 100 * 1000);
	CHECK(ios_stats_percentile(c, 1.0) <= c->lat_max_ns);
	CHECK_NEAR(ios_stats_percentile(c, 1.0), c->lat_max_ns);
	CHECK(c->over_2s_pct == 0 && c->over_10s_pct == 0);

	c = &sn->cls[IOS_CLASS_WAL];
	CHECK_NEAR(c->lat_p50_ns, 1000000);
	CHECK_NEAR(c->lat_p99_ns, 1000000); /* rank 990 of 1000 is still 1 ms */
	CHECK_NEAR(c->lat_p999_ns, 3000000000ull);
	CHECK(c->lat_max_ns == 3000000000ull);
	CHECK(c->lat_over_2s == 10 && c->lat_over_10s == 0);
	CHECK(c->over_2s_pct == 1.0 && c->over_10s_pct == 0);

	c = &sn->cls[IOS_CLASS_XACT];
	CHECK(c->lat_p50_ns == 7);  /* below 16 ns every value has its own bucket */
	CHECK(c->lat_p99_ns == 21); /* 16..31 too */
	CHECK(c->lat_max_ns == 21);

	c = &sn->cls[IOS_CLASS_TEMP];
	CHECK(c->lat_over_2s == 1 && c->lat_over_10s == 1);
	CHECK(c->over_2s_pct == 25.0 && c->over_10s_pct == 25.0);
	CHECK(c->lat_max_ns == 20000000000ull);
	CHECK_NEAR(c->lat_p50_ns, 1000);
	CHECK_NEAR(c->lat_p999_ns, 20000000000ull);

	c = &sn->cls[IOS_CLASS_INDEX]; /* nothing */
	CHECK(c->lat_count == 0 && c->lat_p50_ns == 0 && c->lat_max_ns == 0 &&
	      ios_stats_percentile(c, 0.5) == 0);

	/* the largest values land in the last buckets without overflow */
	account(s, IOS_CLASS_META, IOS_READ, 1, 0, UINT64_MAX);
	CHECK(ios_stats_snapshot(s, sn) == 0);
	CHECK(sn->cls[IOS_CLASS_META].lat_max_ns == UINT64_MAX);
	CHECK(sn->cls[IOS_CLASS_META].hist[IOS_STATS_NBUCKETS - 1] == 1);
	CHECK_NEAR(sn->cls[IOS_CLASS_META].lat_p50_ns, UINT64_MAX);
	free(sn);
	ios_stats_destroy(s);
}

/* ---- concurrency ---------------------------------------------------------- */

#define NTHREADS   4
#define PER_THREAD 150000 /* a multiple of 3, 100 and 1000 */

struct worker {
	struct ios_stats *s;
	unsigned id;
	pthread_barrier_t *go;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t i;

	pthread_barrier_wait(w->go);
	for (i = 0; i < PER_THREAD; i++) {
		enum ios_class cls = (enum ios_class)((i + w->id) % IOS_NCLASS);
		enum ios_dir dir = (enum ios_dir)(i % IOS_NDIR);

		account(w->s, cls, dir, dir == IOS_SYNC ? 0 : 4096, w->id, i % 1000);
		if (i % 100 == 0) {
			ios_stats_note_merge(w->s, cls, 1);
			ios_stats_note_readahead(w->s, cls, 8192, 4096);
		}
	}
	return NULL;
}

static void test_concurrency(void)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *sn = snap_new();
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t go;
	uint64_t ops = (uint64_t)NTHREADS * PER_THREAD, per_dir = ops / 3, qsum = 0, ssum = 0;
	unsigned i, c;

	pthread_barrier_init(&go, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){s, i, &go};
		CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
	}
	/* snapshots taken while the workers run never go backwards */
	{
		struct ios_stats_snapshot *prev = snap_new();

		CHECK(ios_stats_snapshot(s, prev) == 0);
		for (c = 0; c < 20; c++) {
			CHECK(ios_stats_snapshot(s, sn) == 0);
			CHECK(sn->total.lat_count >= prev->total.lat_count);
			CHECK(sn->total.write_bytes >= prev->total.write_bytes);
			memcpy(prev, sn, sizeof(*sn));
		}
		free(prev);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	CHECK(ios_stats_snapshot(s, sn) == 0);
	/* each direction gets exactly a third */
	CHECK(sn->total.read_ops == per_dir && sn->total.write_ops == per_dir &&
	      sn->total.sync_ops == per_dir);
	CHECK(sn->total.read_ops + sn->total.write_ops + sn->total.sync_ops == ops);
	CHECK(sn->total.lat_count == ops);
	CHECK(sn->total.read_bytes == sn->total.read_ops * 4096);
	CHECK(sn->total.write_bytes == sn->total.write_ops * 4096);
	CHECK(sn->total.merges == NTHREADS * (PER_THREAD / 100));
	CHECK(sn->total.ra_hit_bytes == 8192ull * NTHREADS * (PER_THREAD / 100));
	CHECK(sn->total.ra_wasted_bytes == 4096ull * NTHREADS * (PER_THREAD / 100));
	for (i = 0; i < NTHREADS; i++) {
		qsum += (uint64_t)i * PER_THREAD;
		ssum += (uint64_t)(PER_THREAD / 1000) * (999 * 1000 / 2);
	}
	CHECK(sn->total.queue_sum_ns == qsum);
	CHECK(sn->total.service_sum_ns == ssum);
	CHECK(sn->total.lat_max_ns == 999 + NTHREADS - 1);
	for (c = 0, ops = 0; c < IOS_NCLASS; c++)
		ops += sn->cls[c].lat_count;
	CHECK(ops == sn->total.lat_count);
	free(sn);
	ios_stats_destroy(s);
}

static void test_diff(void)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *a = snap_new(), *b = snap_new(), *d = snap_new();
	const struct ios_stats_class *c;
	int i;

	for (i = 0; i < 1000; i++)
		account(s, IOS_CLASS_HEAP, IOS_READ, 8192, 0, 5000000); /* 5 ms */
	account(s, IOS_CLASS_HEAP, IOS_READ, 8192, 0, 900000000);	/* max 900 ms */
	CHECK(ios_stats_snapshot(s, a) == 0);
	for (i = 0; i < 500; i++)
		account(s, IOS_CLASS_HEAP, IOS_READ, 4096, 0, 100000); /* 100 us */
	account(s, IOS_CLASS_WAL, IOS_SYNC, 0, 0, 7000000);
	CHECK(ios_stats_snapshot(s, b) == 0);
	CHECK(ios_stats_snapshot_diff(a, b, d) == 0);
	CHECK(d->cumulative == 0 && d->start_ns == a->time_ns && d->time_ns == b->time_ns);
	c = &d->cls[IOS_CLASS_HEAP];
	CHECK(c->read_ops == 500 && c->read_bytes == 500 * 4096 && c->lat_count == 500);
	CHECK_NEAR(c->lat_p50_ns, 100000);
	CHECK_NEAR(c->lat_p999_ns, 100000);
	CHECK(c->lat_avg_ns == 100000);
	/* the running max (900 ms) is older: the interval's max comes from
	 * its own buckets, within the resolution */
	CHECK_NEAR(c->lat_max_ns, 100000);
	CHECK(c->lat_max_ns >= 100000);
	c = &d->cls[IOS_CLASS_WAL];
	CHECK(c->sync_ops == 1 && c->lat_max_ns == 7000000); /* new max: exact */
	CHECK(d->total.lat_count == 501 && d->total.read_ops == 500 && d->total.sync_ops == 1);
	CHECK(d->cls[IOS_CLASS_XACT].lat_max_ns == 0);
	/* in place, and a diff with itself is all zero */
	CHECK(ios_stats_snapshot_diff(b, b, b) == 0);
	CHECK(b->total.lat_count == 0 && b->total.read_ops == 0 && b->total.lat_max_ns == 0);
	CHECK(ios_stats_snapshot_diff(d, a, d) == -EINVAL); /* d ends after a */
	CHECK(ios_stats_snapshot_diff(NULL, a, d) == -EINVAL);
	free(a);
	free(b);
	free(d);
	ios_stats_destroy(s);
}

/* json_shape_ok() -- balanced braces outside strings, no trailing comma
 * before a brace, and every class and latency field present. */
static int json_shape_ok(const char *j)
{
	static const char *const fields[] = {
	    "\"read_ops\":",	"\"read_bytes\":",   "\"write_ops\":",
	    "\"write_bytes\":", "\"sync_ops\":",     "\"errors\":",
	    "\"merges\":",	"\"ra_hit_bytes\":", "\"ra_wasted_bytes\":",
	    "\"latency_ms\":",	"\"avg\":",	     "\"p50\":",
	    "\"p99\":",		"\"p999\":",	     "\"max\":",
	    "\"over_2s_pct\":", "\"over_10s_pct\":"};
	int depth = 0, in_str = 0;
	const char *p;
	char key[32];
	unsigned c, f;

	for (p = j; *p; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_str = 0;
			continue;
		}
		if (*p == '"')
			in_str = 1;
		else if (*p == '{')
			depth++;
		else if (*p == '}') {
			if (--depth < 0 || p[-1] == ',')
				return 0;
		}
	}
	if (depth != 0 || in_str || strncmp(j, "{\"schema\":\"pgiofs.stats/1\"", 26) != 0)
		return 0;
	for (c = 0; c < IOS_NCLASS; c++) {
		snprintf(key, sizeof(key), "\"%s\":{", ios_class_name((enum ios_class)c));
		if (!strstr(j, key))
			return 0;
	}
	for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		if (!strstr(j, fields[f]))
			return 0;
	return strstr(j, "\"total\":{") != NULL;
}

static void test_json_and_table(void)
{
	struct ios_stats *s = ios_stats_create();
	struct ios_stats_snapshot *sn = snap_new();
	char big[16384], small[64], *table = NULL;
	size_t tlen = 0;
	FILE *f;
	int n;

	account(s, IOS_CLASS_WAL, IOS_WRITE, 8192, 1000, 2000);
	account(s, IOS_CLASS_INDEX, IOS_READ, 8192, 0, 2500000000ull);
	CHECK(ios_stats_snapshot(s, sn) == 0);
	n = ios_stats_to_json(sn, "\"mount\":\"/srv/pg \\\"x\\\"\",\"pid\":42", big, sizeof(big));
	CHECK(n > 0 && (size_t)n == strlen(big));
	CHECK(json_shape_ok(big));
	CHECK(strstr(big, "\"mount\":\"/srv/pg \\\"x\\\"\",\"pid\":42,") != NULL);
	CHECK(strstr(big, "\"wal\":{\"read_ops\":0,\"read_bytes\":0,\"write_ops\":1,"
			  "\"write_bytes\":8192,") != NULL);
	CHECK(strstr(big, "\"max\":0.003000,") != NULL);	 /* 3 us in ms */
	CHECK(strstr(big, "\"over_2s_pct\":100.0000,") != NULL); /* the index read */
	CHECK(strstr(big, "\"cumulative\":true,") != NULL);
	/* too small: -ENOSPC and a terminated prefix; the exact size fits */
	CHECK(ios_stats_to_json(sn, NULL, small, sizeof(small)) == -ENOSPC);
	CHECK(strlen(small) == sizeof(small) - 1);
	n = ios_stats_to_json(sn, NULL, big, sizeof(big));
	CHECK(n > 0);
	CHECK(ios_stats_to_json(sn, NULL, big, (size_t)n) == -ENOSPC);
	CHECK(ios_stats_to_json(sn, NULL, big, (size_t)n + 1) == n);
	CHECK(ios_stats_to_json(NULL, NULL, big, sizeof(big)) == -EINVAL);
	CHECK(json_shape_ok(big));
	/* FILE variant: the same text plus a newline */
	f = open_memstream(&table, &tlen);
	CHECK(f && ios_stats_write_json(f, sn, NULL) == 0);
	fclose(f);
	CHECK(tlen == (size_t)n + 1 && strncmp(table, big, (size_t)n) == 0 && table[n] == '\n');
	free(table);
	/* the table: header, wal, index, total */
	table = NULL;
	f = open_memstream(&table, &tlen);
	ios_stats_print_table(f, sn);
	fclose(f);
	CHECK(strncmp(table, "class ", 6) == 0);
	CHECK(strstr(table, "\nwal ") && strstr(table, "\nindex ") && strstr(table, "\ntotal "));
	CHECK(!strstr(table, "\nheap "));
	fputs(table, stdout);
	free(table);
	free(sn);
	ios_stats_destroy(s);
}

int main(void)
{
	test_counters();
	test_percentiles();
	test_concurrency();
	test_diff();
	test_json_and_table();
	if (failures) {
		fprintf(stderr, "test_stats: %d checks failed\n", failures);
		return 1;
	}
	printf("test_stats: all checks passed\n");
	return 0;
}
