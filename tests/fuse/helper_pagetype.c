/*
 * helper_pagetype.c -- classify the first blocks of PostgreSQL relation
 * files with pgiofs_page_kind(), for test_pagetype.sh.
 *
 *   helper_pagetype [-n BLOCKS] FILE...
 *
 * For each FILE, one line per block read ("FILE BLOCK CLASS AM", or "new" /
 * "invalid"), then "FILE result CLASS AM" from the first block that could
 * be classified.  Exit 0; 1 if the blocks of a file disagree, 2 if a file
 * has no block that could be classified, 3 on a read error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgiofs.h"

static int classify_file(const char *path, int nblocks)
{
	static unsigned char page[8192];
	enum ios_class cls, first_cls = IOS_CLASS_OTHER;
	const char *am, *first_am = NULL;
	int fd = open(path, O_RDONLY), b, ret = 0, r;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "helper_pagetype: cannot open \"%s\": %s\n", path, strerror(errno));
		return 3;
	}
	for (b = 0; b < nblocks; b++) {
		n = pread(fd, page, sizeof(page), (off_t)b * (off_t)sizeof(page));
		if (n < 0) {
			fprintf(stderr, "helper_pagetype: cannot read \"%s\": %s\n", path,
				strerror(errno));
			close(fd);
			return 3;
		}
		if (n < (ssize_t)sizeof(page))
			break; /* end of file (or a partial block) */
		r = pgiofs_page_kind(page, sizeof(page), &cls, &am);
		if (r == -ENODATA) {
			printf("%s %d new\n", path, b);
			continue;
		}
		if (r < 0) {
			printf("%s %d invalid\n", path, b);
			continue;
		}
		printf("%s %d %s %s\n", path, b, ios_class_name(cls), am);
		if (!first_am) {
			first_am = am;
			first_cls = cls;
		} else if (cls != first_cls || strcmp(am, first_am) != 0) {
			ret = 1;
		}
	}
	close(fd);
	if (!first_am) {
		printf("%s result none\n", path);
		return 2;
	}
	printf("%s result %s %s%s\n", path, ios_class_name(first_cls), first_am,
	       ret ? " (blocks disagree)" : "");
	return ret;
}

int main(int argc, char **argv)
{
	int i = 1, nblocks = 4, ret = 0, r;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		nblocks = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || nblocks < 1) {
		fprintf(stderr, "usage: helper_pagetype [-n BLOCKS] FILE...\n");
		return 3;
	}
	for (; i < argc; i++) {
		r = classify_file(argv[i], nblocks);
		if (r > ret)
			ret = r;
	}
	return ret;
}
