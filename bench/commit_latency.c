/*
 * commit_latency.c -- what a commit costs on one file: COMMITS times an
 * 8 KiB pwrite at the next offset of a preallocated 16 MiB file (as
 * PostgreSQL fills a WAL segment), each followed by fdatasync(), or made
 * with an O_DSYNC descriptor (--dsync).  Prints one line:
 * "avg P50 P99 P999" in microseconds.  Used by bench/commit_latency.sh.
 *
 *   commit_latency FILE COMMITS [--dsync]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEGMENT (16 << 20)
#define PAGE	8192

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static char page[PAGE];
	double *lat, sum = 0;
	int fd, dsync, n;
	off_t o;

	if (argc < 3 || (n = atoi(argv[2])) < 10 || (argc > 3 && strcmp(argv[3], "--dsync"))) {
		fprintf(stderr, "usage: commit_latency FILE COMMITS(>=10) [--dsync]\n");
		return 2;
	}
	dsync = argc > 3;
	memset(page, 'w', sizeof(page));
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* a preallocated, synced segment, as PostgreSQL recycles them */
	for (o = 0; o < SEGMENT; o += PAGE)
		if (pwrite(fd, page, PAGE, o) != PAGE) {
			perror("prefill");
			return 1;
		}
	if (fsync(fd) < 0 || close(fd) < 0) {
		perror("fsync");
		return 1;
	}
	fd = open(argv[1], O_RDWR | (dsync ? O_DSYNC : 0));
	lat = malloc(sizeof(*lat) * (size_t)n);
	if (fd < 0 || !lat) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		double t = now_us();

		if (pwrite(fd, page, PAGE, (off_t)(i % (SEGMENT / PAGE)) * PAGE) != PAGE ||
		    (!dsync && fdatasync(fd) < 0)) {
			perror("commit");
			return 1;
		}
		lat[i] = now_us() - t;
		sum += lat[i];
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp);
	printf("%.1f %.1f %.1f %.1f\n", sum / n, lat[n / 2], lat[n * 99 / 100],
	       lat[n * 999 / 1000]);
	close(fd);
	free(lat);
	return 0;
}
