/*
 * stats.c -- the summary of a sample (stats.h).
 *
 * The standard deviation takes two passes (the mean first), which keeps its
 * precision when the values are large and close together, as the times of
 * repeated runs are.
 */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void stats_summarize(double *x, size_t n, struct stats_summary *out)
{
	double sum = 0, sq = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(x, n, sizeof(*x), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	out->n = n;
	out->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (x[i] - out->mean) * (x[i] - out->mean);
	out->sd = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->min = x[0];
	out->max = x[n - 1];
	out->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	out->cv_pct = out->mean != 0 ? 100.0 * out->sd / fabs(out->mean) : 0;
}

void stats_fmt_quantile_ms(char *buf, size_t len, double ms)
{
	int decimals = 0;

	/* two significant digits: a bucket is up to 1/16 (6 %) of its value
	 * wide, so a third digit would claim more than the histogram knows */
	if (ms > 0)
		decimals = 1 - (int)floor(log10(ms));
	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	snprintf(buf, len, "%.*f", decimals, ms);
}
