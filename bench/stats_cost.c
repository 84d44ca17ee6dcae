/*
 * stats_cost.c -- what the per-request bookkeeping costs: ios_stats_account()
 * (without and with a relation's counters, req->rel) and ios_trace_write()
 * in nanoseconds per call, on one thread and on two
 * at once, next to the clock read every request needs anyway and an 8 KiB
 * pread() from the page cache (the cheapest real request pgiofs serves).
 * Built and run by bench/stats_cost.sh; results on stdout, nothing asserted.
 *
 *   stats_cost [-n CALLS]   (default 10000000 per thread)
 */
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iosched.h"
#include "stats.h"

static long ncalls = 10000000;
static struct ios_stats *stats;
static struct ios_trace_writer *tracer;
static int pread_fd = -1;
static volatile uint64_t sink;

enum op { OP_CLOCK, OP_ACCOUNT, OP_ACCOUNT_REL, OP_TRACE, OP_PREAD };

struct job {
	enum op op;
	unsigned id;
	long calls;
	pthread_barrier_t *go;
	double ns_per_call;
};

static void *run(void *arg)
{
	struct job *j = arg;
	struct ios_trace_rec rec;
	struct ios_req req;
	static __thread char buf[8192];
	uint64_t t0, t1, acc = 0;
	long i;

	memset(&req, 0, sizeof(req));
	memset(&rec, 0, sizeof(rec));
	if (j->op == OP_ACCOUNT_REL) /* each thread its own relation, as a file has */
		req.rel = ios_stats_rel_get(stats, 1663, 5, 16384 + j->id);
	if (j->go)
		pthread_barrier_wait(j->go);
	t0 = ios_now_ns();
	for (i = 0; i < j->calls; i++) {
		switch (j->op) {
		case OP_CLOCK:
			acc += ios_now_ns();
			break;
		case OP_ACCOUNT:
		case OP_ACCOUNT_REL:
			/* wal, xact, heap, index; a relation file's class stays */
			req.cls = j->op == OP_ACCOUNT_REL ? IOS_CLASS_HEAP
							  : (enum ios_class)((i + j->id) & 3);
			req.dir = (enum ios_dir)(i & 1);
			ios_stats_account(stats, &req, 8192, (uint64_t)(i & 1023) * 100,
					  50000 + (uint64_t)(i & 4095) * 10);
			break;
		case OP_TRACE:
			rec.time_ns = (uint64_t)i;
			rec.off = (uint64_t)i * 8192;
			rec.pid = j->id;
			ios_trace_write(tracer, &rec);
			break;
		case OP_PREAD:
			acc += (uint64_t)pread(pread_fd, buf, sizeof(buf), (i & 127) * 8192);
			break;
		}
	}
	t1 = ios_now_ns();
	sink += acc;
	j->ns_per_call = (double)(t1 - t0) / (double)j->calls;
	return NULL;
}

/* measure() -- ns per call of @op with @threads threads at once (each makes
 * @calls calls; the figure is the mean of the threads' own). */
static double measure(enum op op, unsigned threads, long calls)
{
	struct job jobs[2];
	pthread_t th[2];
	pthread_barrier_t go;
	double sum = 0;
	unsigned i;

	pthread_barrier_init(&go, NULL, threads);
	for (i = 0; i < threads; i++) {
		jobs[i] = (struct job){op, i, calls, &go, 0};
		pthread_create(&th[i], NULL, run, &jobs[i]);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		sum += jobs[i].ns_per_call;
	}
	pthread_barrier_destroy(&go);
	return sum / threads;
}

#define ROUNDS 7

/* side_by_side() -- ops @a and @b measured alternately (A B A B ...)
 * ROUNDS times with @threads threads, @calls calls per round; the medians
 * into *@ma and *@mb, so that a busy machine slows both alike. */
static void side_by_side(enum op a, enum op b, unsigned threads, long calls, double *ma, double *mb)
{
	double xa[ROUNDS], xb[ROUNDS];
	struct stats_summary sa, sb;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		xa[i] = measure(a, threads, calls);
		xb[i] = measure(b, threads, calls);
	}
	stats_summarize(xa, ROUNDS, &sa);
	stats_summarize(xb, ROUNDS, &sb);
	*ma = sa.median;
	*mb = sb.median;
}

int main(int argc, char **argv)
{
	struct ios_trace_opts topts = {0};
	struct ios_trace_stats tst;
	char path[] = "/tmp/stats_cost.XXXXXX";
	double clock1, acc1, acc2, rel1, rel2, tr1, tr2, pr1;
	int c, err;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c == 'n' && atol(optarg) > 0) {
			ncalls = atol(optarg);
		} else {
			fprintf(stderr, "usage: stats_cost [-n CALLS]\n");
			return 1;
		}
	}
	stats = ios_stats_create();
	topts.fd = open("/dev/null", O_WRONLY);
	tracer = ios_trace_writer_create_opts(NULL, &topts, &err);
	pread_fd = mkstemp(path);
	if (!stats || !tracer || pread_fd < 0) {
		perror("stats_cost: setup");
		return 1;
	}
	unlink(path);
	{
		static char blk[8192];
		int i;

		memset(blk, 'x', sizeof(blk));
		for (i = 0; i < 128; i++)
			if (write(pread_fd, blk, sizeof(blk)) != (ssize_t)sizeof(blk))
				return 1;
	}
	fprintf(stderr, "stats_cost: %ld calls per thread and measurement\n", ncalls);
	measure(OP_ACCOUNT, 1, ncalls / 10); /* warm up */
	clock1 = measure(OP_CLOCK, 1, ncalls);
	side_by_side(OP_ACCOUNT, OP_ACCOUNT_REL, 1, ncalls / ROUNDS, &acc1, &rel1);
	side_by_side(OP_ACCOUNT, OP_ACCOUNT_REL, 2, ncalls / ROUNDS, &acc2, &rel2);
	tr1 = measure(OP_TRACE, 1, ncalls);
	tr2 = measure(OP_TRACE, 2, ncalls);
	pr1 = measure(OP_PREAD, 1, ncalls / 20 > 0 ? ncalls / 20 : 1);
	ios_trace_writer_close(tracer, &tst);
	ios_stats_destroy(stats);
	close(pread_fd);

	printf("%-34s %7s %10s\n", "operation", "threads", "ns/call");
	printf("%-34s %7d %10.1f\n", "ios_now_ns (clock read)", 1, clock1);
	printf("%-34s %7d %10.1f\n", "ios_stats_account", 1, acc1);
	printf("%-34s %7d %10.1f\n", "ios_stats_account", 2, acc2);
	printf("%-34s %7d %10.1f\n", "ios_stats_account, with req->rel", 1, rel1);
	printf("%-34s %7d %10.1f\n", "ios_stats_account, with req->rel", 2, rel2);
	printf("%-34s %7d %10.1f\n", "ios_trace_write", 1, tr1);
	printf("%-34s %7d %10.1f\n", "ios_trace_write", 2, tr2);
	printf("%-34s %7d %10.1f\n", "pread 8 KiB from the page cache", 1, pr1);
	printf("ios_stats_account / pread 8 KiB: %.1f%% (1 thread), %.1f%% (2 threads)\n",
	       100 * acc1 / pr1, 100 * acc2 / pr1);
	printf("relation counters add: %.1f ns (1 thread), %.1f ns (2 threads) (medians of %d "
	       "rounds, side by side)\n",
	       rel1 - acc1, rel2 - acc2, ROUNDS);
	printf("ios_trace_write / pread 8 KiB:   %.1f%% (1 thread), %.1f%% (2 threads)\n",
	       100 * tr1 / pr1, 100 * tr2 / pr1);
	printf("trace: %llu records kept, %llu dropped (output /dev/null, 1 MiB buffer)\n",
	       (unsigned long long)tst.records, (unsigned long long)tst.dropped);
	return 0;
}
