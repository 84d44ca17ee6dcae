/*
 * check.h -- the assertion the C tests share: CHECK(cond) reports the file,
 * line and condition of a failure and counts it in `failures`; a test ends
 * with `return failures ? 1 : 0;` so that every failed check is reported,
 * not only the first.
 */
#ifndef PGIOFS_TESTS_CHECK_H
#define PGIOFS_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
