/*
 * test_ratio.c -- the word a report of `pgload compare` prints after a
 * ratio (pgload/compare_verdict.c): "faster" or "slower" only when every
 * run of one cell is apart from every run of the other (the ranges over
 * the runs do not overlap), else "not separated"; with how many runs and
 * their ranges.  A lower time is faster, a higher rate is faster; a figure
 * measured once per cell says so.
 */
#include <string.h>

#include "check.h"
#include "compare_i.h"

/* cell() -- a cell whose runs took IMPORT[0..N-1] s (and made that many tps). */
static struct cell cell(struct sample *s, const double *import, int n)
{
	struct cell c = {.s = s, .ns = n, .stream_read = -1, .stream_dev = -1};
	for (int i = 0; i < n; i++)
		s[i] = (struct sample){
		    .round = i + 1, .import = import[i], .oltp = {.tx = 1, .tps = import[i]}};
	return c;
}

/* is() -- A against B on FIG (index in pgl_cmp_figures) says WANT, and its
 * account of the runs is TEXT. */
static int is(int fig, const double *a, int na, const double *b, int nb, double r, const char *want,
	      const char *text)
{
	struct sample sa[8], sb[8];
	struct cell ca = cell(sa, a, na), cb = cell(sb, b, nb);
	struct separation s;
	char got[160];
	const struct figure *f = &pgl_cmp_figures[fig];
	pgl_cmp_separate(f, &ca, &cb, &s);
	pgl_cmp_fmt_separation(f, &s, got, sizeof(got));
	const char *word = pgl_cmp_vs_word(&s, r, !f->higher_better);
	if (strcmp(word, want) != 0 || strcmp(got, text) != 0) {
		fprintf(stderr, "%s: got \"%s\" (%s), want \"%s\" (%s)\n", f->name, word, got, want,
			text);
		return 0;
	}
	return 1;
}

int main(void)
{
	static const double fast[] = {2.4, 2.6, 2.5}, slow[] = {3.0, 3.3, 3.1};
	static const double wide[] = {2.0, 3.5, 2.2}, one[] = {2.5}, other[] = {2.6};
	int tps = -1;
	for (size_t k = 0; k < pgl_cmp_nfigures; k++)
		if (strcmp(pgl_cmp_figures[k].name, "tps") == 0)
			tps = (int)k;
	CHECK(tps > 0);
	/* the import time (figure 0): lower is faster */
	CHECK(is(0, fast, 3, slow, 3, 0.8, "faster",
		 "3 runs each, 2.40 to 2.60 against 3.00 to 3.30 s"));
	CHECK(is(0, slow, 3, fast, 3, 1.25, "slower",
		 "3 runs each, 3.00 to 3.30 against 2.40 to 2.60 s"));
	/* a mean 0.8x the other's, but a run as slow as one of the other's */
	CHECK(is(0, wide, 3, slow, 3, 0.8, "not separated",
		 "3 runs each, 2.00 to 3.50 against 3.00 to 3.30 s"));
	CHECK(is(0, fast, 3, one, 1, 1.0, "not separated",
		 "3 and 1 runs, 2.40 to 2.60 against 2.50 to 2.50 s"));
	/* one run each: apart unless equal, and the account says how little that is */
	CHECK(is(0, one, 1, other, 1, 0.96, "faster",
		 "1 run each, 2.50 to 2.50 against 2.60 to 2.60 s"));
	CHECK(is(0, one, 1, one, 1, 1.0, "not separated",
		 "1 run each, 2.50 to 2.50 against 2.50 to 2.50 s"));
	/* tps: higher is faster */
	CHECK(is(tps, slow, 3, fast, 3, 1.25, "faster",
		 "3 runs each, 3.00 to 3.30 against 2.40 to 2.60"));
	CHECK(is(tps, fast, 3, slow, 3, 0.8, "slower",
		 "3 runs each, 2.40 to 2.60 against 3.00 to 3.30"));
	/* no ratio: no word */
	CHECK(is(0, fast, 3, slow, 3, 0, "", "3 runs each, 2.40 to 2.60 against 3.00 to 3.30 s"));
	return failures ? 1 : 0;
}
