/*
 * stats.h -- the one statistics helper of the project (shared by all
 * modules): the summary of a sample of measurements, and how a percentile
 * of a latency histogram is printed.
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

/*
 * stats_fmt_quantile_ms() -- a latency percentile taken from one of the
 * project's histograms (iosched's: buckets at most 1/16 of their value
 * wide), MS milliseconds, into BUF with the two significant digits those
 * buckets support: "0.98", "12", "150".  `pgiofs stat` and `pgload
 * compare` print them alike.
 */
void stats_fmt_quantile_ms(char *buf, size_t len, double ms);

#endif
