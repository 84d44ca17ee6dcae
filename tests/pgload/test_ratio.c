/*
 * test_ratio.c -- pgl_cmp_ratio_word() (pgload/compare_verdict.c): the word
 * a report prints after "took R ± SD times the import time of ..." agrees
 * with R and SD as printed, to two decimals, at the edge of the noise band
 * too (a 1.1249 ± 0.1151 prints as 1.12 ± 0.12 and is within noise); a
 * lower time is faster, a higher rate is faster.
 */
#include <string.h>

#include "check.h"
#include "compare_i.h"

static int is(double r, double sd, bool lower_better, const char *want)
{
	const char *got = pgl_cmp_ratio_word(r, sd, lower_better);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "%.4f ± %.4f: got \"%s\", want \"%s\"\n", r, sd, got, want);
		return 0;
	}
	return 1;
}

int main(void)
{
	CHECK(is(0.80, 0.05, true, "faster"));
	CHECK(is(1.30, 0.05, true, "slower"));
	CHECK(is(0.80, 0.05, false, "slower"));
	CHECK(is(1.30, 0.05, false, "faster"));
	CHECK(is(1.05, 0.10, true, "within noise"));
	CHECK(is(0.95, 0.10, true, "within noise"));
	/* no spread (one run): never "within noise" */
	CHECK(is(1.01, 0.0, true, "slower"));
	/* the edge, as printed */
	CHECK(is(1.12, 0.12, true, "within noise"));
	CHECK(is(1.1249, 0.1151, true, "within noise"));
	CHECK(is(0.8751, 0.1249, true, "within noise"));
	CHECK(is(1.1351, 0.1249, true, "slower"));
	CHECK(is(0.8649, 0.1249, true, "faster"));
	/* no ratio: no word */
	CHECK(is(0, 0.1, true, ""));
	return failures ? 1 : 0;
}
