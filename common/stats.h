/*
 * stats.h -- the one statistics helper of the project (shared by all
 * modules): the summary of a sample of measurements.
 *
 * pgload reports mean ± sd, min … max and CV of its runs, `pgload compare`
 * the same per cell, the benchmarks medians of interleaved rounds.
 */
#ifndef PGIOFS_STATS_H
#define PGIOFS_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double mean;
	double sd; /* sample standard deviation (divides by n - 1); 0 below 2 values */
	double min, max;
	double median; /* the middle value, or the mean of the two middle ones */
	double cv_pct; /* 100 * sd / |mean|; 0 when the mean is 0 */
};

/*
 * stats_summarize() -- the summary of the N values of X into *OUT (all zero
 * when N is 0).  X is sorted in place (for the median).
 */
void stats_summarize(double *x, size_t n, struct stats_summary *out);

#endif
