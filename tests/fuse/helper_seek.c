/*
 * helper_seek.c -- time a block device as pgiofs does at mount when the
 * device cannot say whether it rotates (pfs_dev_seek_us()), for
 * test_seek_probe.sh.
 *
 *   helper_seek PATH
 *
 * PATH is a block device node (its st_rdev is timed) or any other file
 * (the device of the file system it is on, st_dev).  Prints the median
 * random 4 KiB read time in microseconds and exits 0, or prints the error
 * and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pgiofs_i.h"

int main(int argc, char **argv)
{
	struct stat st;
	int us;

	if (argc != 2) {
		fprintf(stderr, "usage: helper_seek PATH\n");
		return 2;
	}
	if (stat(argv[1], &st) < 0) {
		fprintf(stderr, "helper_seek: \"%s\": %s\n", argv[1], strerror(errno));
		return 2;
	}
	us = pfs_dev_seek_us(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	if (us < 0) {
		printf("error %s\n", strerror(-us));
		return 1;
	}
	printf("%d\n", us);
	return 0;
}
