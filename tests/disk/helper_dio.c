/*
 * helper_dio.c -- direct I/O on a block device (or file) at a given queue
 * depth, timed: what the pgdisk validation test and bench/disk.sh measure
 * the modelled disk with (fio is not a dependency).
 *
 *   helper_dio seq  DEV MIB BS_KIB QD          sequential reads from 0
 *   helper_dio rand DEV COUNT BS_KIB QD SEED   random aligned reads
 *
 * Prints one line: "bytes N seconds S mb_s X iops Y".  Exit 0, or 1 with a
 * message on any error or short read.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int usage(void)
{
	fprintf(stderr, "usage: helper_dio seq DEV MIB BS_KIB QD\n"
			"       helper_dio rand DEV COUNT BS_KIB QD SEED\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	uint64_t size = 0, count, bs, qd, seed = 1, next = 0, submitted = 0, done = 0;
	bool seq;
	char *bufs;
	double t0, t1;
	struct stat st;
	int fd, ret;

	if (argc < 6)
		return usage();
	seq = strcmp(argv[1], "seq") == 0;
	if (!seq && (strcmp(argv[1], "rand") != 0 || argc < 7))
		return usage();
	bs = strtoull(argv[4], NULL, 10) * 1024;
	qd = strtoull(argv[5], NULL, 10);
	count = strtoull(argv[3], NULL, 10);
	if (seq)
		count = count * (1 << 20) / bs;
	else
		seed = strtoull(argv[6], NULL, 10) | 1;
	if (!bs || !qd || qd > 256 || !count)
		return usage();
	fd = open(argv[2], O_RDONLY | O_DIRECT);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "helper_dio: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (S_ISBLK(st.st_mode))
		ioctl(fd, BLKGETSIZE64, &size);
	else
		size = (uint64_t)st.st_size;
	if (size < bs || (seq && count * bs > size)) {
		fprintf(stderr, "helper_dio: %s is too small\n", argv[2]);
		return 1;
	}
	if (posix_memalign((void **)&bufs, 4096, qd * bs) ||
	    io_uring_queue_init((unsigned)qd, &ring, 0) < 0) {
		fprintf(stderr, "helper_dio: cannot set up\n");
		return 1;
	}
	t0 = now_s();
	while (done < count) {
		struct io_uring_cqe *cqe;

		while (submitted < count && submitted - done < qd) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			uint64_t slot = submitted % qd, off;

			off = seq ? next : xorshift(&seed) % (size / bs) * bs;
			next += bs;
			io_uring_prep_read(sqe, fd, bufs + slot * bs, (unsigned)bs, off);
			sqe->user_data = off;
			submitted++;
		}
		io_uring_submit(&ring);
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0 || cqe->res != (int)bs) {
			fprintf(stderr, "helper_dio: read at %llu: %s\n",
				(unsigned long long)(ret < 0 ? 0 : cqe->user_data),
				ret < 0	       ? strerror(-ret)
				: cqe->res < 0 ? strerror(-cqe->res)
					       : "short read");
			return 1;
		}
		io_uring_cqe_seen(&ring, cqe);
		done++;
	}
	t1 = now_s();
	printf("bytes %llu seconds %.4f mb_s %.2f iops %.2f\n", (unsigned long long)(count * bs),
	       t1 - t0, (double)(count * bs) / (t1 - t0) / 1e6, (double)count / (t1 - t0));
	io_uring_queue_exit(&ring);
	close(fd);
	free(bufs);
	return 0;
}
