/*
 * test_stats.c -- the statistics helper (common/stats.h): mean, sample
 * standard deviation, min, max, median (odd and even counts), CV, the
 * empty and one-value samples, and precision with large close values;
 * the two significant digits of a histogram's percentile.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

#include "check.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

int main(void)
{
	struct stats_summary s;
	double a[] = {4, 2, 9, 5, 5};
	double b[] = {3, 1, 4, 2};
	double one[] = {7};
	double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
	double neg[] = {-2, -4};

	stats_summarize(a, 5, &s);
	CHECK(s.n == 5 && near(s.mean, 5) && near(s.sd, sqrt(6.5)) && s.min == 2 && s.max == 9);
	CHECK(near(s.median, 5) && near(s.cv_pct, 100 * sqrt(6.5) / 5));
	CHECK(a[0] == 2 && a[4] == 9); /* sorted in place */

	stats_summarize(b, 4, &s);
	CHECK(near(s.mean, 2.5) && near(s.median, 2.5) && near(s.sd, sqrt(5.0 / 3)));

	stats_summarize(one, 1, &s);
	CHECK(s.n == 1 && s.mean == 7 && s.sd == 0 && s.min == 7 && s.max == 7 && s.median == 7);
	CHECK(s.cv_pct == 0);

	stats_summarize(NULL, 0, &s);
	CHECK(s.n == 0 && s.mean == 0 && s.sd == 0 && s.median == 0 && s.cv_pct == 0);

	/* large values close together: a one-pass sum of squares loses this */
	stats_summarize(big, 3, &s);
	CHECK(near(s.sd, 1));

	/* CV of a negative mean is positive */
	stats_summarize(neg, 2, &s);
	CHECK(near(s.mean, -3) && s.cv_pct > 0);

	/* percentiles of a histogram: two significant digits, what its
	 * buckets (1/16 of a power of two wide) support */
	static const struct {
		double ms;
		const char *want;
	} q[] = {
	    {0.999423, "1.00"},	 {1.998847, "2.0"}, {12.3, "12"},   {150.2, "150"},
	    {0.012345, "0.012"}, {0, "0"},	    {2500, "2500"},
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char buf[32];
		stats_fmt_quantile_ms(buf, sizeof(buf), q[i].ms);
		CHECK(strcmp(buf, q[i].want) == 0);
	}
	return failures ? 1 : 0;
}
