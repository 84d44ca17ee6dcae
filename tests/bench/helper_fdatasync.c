/*
 * helper_fdatasync.c -- write and fdatasync a file N times, for
 * test_walsync.sh (which copies it under the names whose calls
 * bench/walsync.bt must count or leave out: the command name is the file's).
 *
 *   helper_fdatasync FILE N
 *
 * Each time 8 KiB at the next offset, then fdatasync(2).  Exit 0, or 1 with
 * the failing call named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char page[8192];
	int fd, n;

	if (argc != 3 || (n = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: helper_fdatasync FILE N\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT, 0600);
	if (fd < 0) {
		fprintf(stderr, "helper_fdatasync: \"%s\": %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(page, 'x', sizeof(page));
	for (int i = 0; i < n; i++) {
		if (pwrite(fd, page, sizeof(page), (off_t)i * (off_t)sizeof(page)) !=
			(ssize_t)sizeof(page) ||
		    fdatasync(fd) < 0) {
			fprintf(stderr, "helper_fdatasync: \"%s\", round %d: %s\n", argv[1], i,
				strerror(errno));
			return 1;
		}
	}
	return close(fd) < 0;
}
