/*
 * test_verdict.c -- how `pgload compare` judges cells it did not measure
 * (pgload/compare_verdict.c, compare_table.c), on cells made up here:
 *   - a "cold" file read more than 3 times the device read of its cell,
 *     or one that found the file in the page cache, came from a cache: the
 *     table prints "cached" instead of the figure, the best-of-figure
 *     verdict skips it, and a file read within the device's speed is
 *     printed as measured;
 *   - how sure a verdict is: a cell whose mean import time is 0.8 times the
 *     baseline's but one of whose runs was as slow as one of the
 *     baseline's is "not separated" from it (in its line against the
 *     baseline, in the verdict lines and as the best of the import time),
 *     with how many runs and their ranges; one whose every run is apart is
 *     "faster".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare_i.h"

#define NCELL 4

static struct cmp m;
static struct pgl_backend_spec spec[NCELL];

/* cell() -- cell I labelled LABEL with runs IMPORT[0..N-1] (seconds). */
static struct cell *cell(int i, const char *label, const double *import, int n)
{
	struct cell *c = &m.cell[i];
	memset(c, 0, sizeof(*c));
	c->idx = i;
	snprintf(spec[i].name, sizeof(spec[i].name), "be%d", i);
	c->spec = &spec[i];
	snprintf(c->label, sizeof(c->label), "%s", label);
	snprintf(c->words, sizeof(c->words), "%s", label);
	c->s = calloc((size_t)n, sizeof(*c->s));
	for (int r = 0; r < n; r++) {
		c->s[r].round = r + 1;
		c->s[r].import = import[r];
	}
	c->ns = n;
	c->stream_dev = c->stream_write = c->stream_read = -1;
	return c;
}

/* text() -- what PRINT writes for M, as a string to free. */
static char *text(void (*print)(const struct cmp *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print(&m, f);
	fclose(f);
	return buf;
}

/* line_with() -- the line of TEXT that begins with PREFIX, copied into BUF. */
static const char *line_with(const char *text, const char *prefix, char *buf, size_t cap)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0) {
			snprintf(buf, cap, "%.*s", (int)strcspn(l, "\n"), l);
			return buf;
		}
	buf[0] = '\0';
	return NULL;
}

static void test_cached_file_read(void)
{
	static const double imp[] = {10, 10.5, 9.5};
	memset(&m, 0, sizeof(m));
	m.runs = 3;
	m.stream_mb = 16;
	m.ncell = NCELL;
	m.cell = calloc(NCELL, sizeof(*m.cell));
	m.nbe = NCELL;
	/* the case: one image's file read at memory speed */
	struct cell *a = cell(0, "xfs/native", imp, 3);
	struct cell *b = cell(1, "ext4/native", imp, 3);
	struct cell *t = cell(2, "tmpfs/native", imp, 3);
	struct cell *e = cell(3, "ext3/native", imp, 3);
	a->stream_dev = 1500, a->stream_write = 900, a->stream_read = 10544;
	/* 2.8 times its device read: the noise of a loaded machine, not a cache */
	b->stream_dev = 1000, b->stream_write = 900, b->stream_read = 2800;
	t->stream_write = 2000, t->stream_read = 3000; /* tmpfs: memory is its medium */
	t->stream_resident_pct = -1;
	/* as slow as its device, but half of it was still in the page cache */
	e->stream_dev = 1500, e->stream_write = 900, e->stream_read = 1600;
	e->stream_resident_pct = 50;
	pgl_cmp_summarize(&m);
	CHECK(pgl_cmp_stream_cached(a));
	CHECK(!pgl_cmp_stream_cached(b));
	CHECK(!pgl_cmp_stream_cached(t));
	CHECK(pgl_cmp_stream_cached(e));

	char *tab = text(pgl_cmp_print_table), line[512];
	const char *stream = strstr(tab, "\nStreaming");
	CHECK(stream);
	stream = stream ? stream : tab;
	CHECK(line_with(stream, "xfs/native ", line, sizeof(line)) && strstr(line, " cached"));
	CHECK(!strstr(tab, "10544"));
	CHECK(line_with(stream, "ext4/native ", line, sizeof(line)) && strstr(line, " 2800.0"));
	CHECK(line_with(stream, "ext3/native ", line, sizeof(line)) && strstr(line, " cached"));
	CHECK(line_with(tab, "cached: ", line, sizeof(line)));
	/* the best file read is tmpfs's 3000, then ext4's 2800: never xfs's 10544 */
	CHECK(line_with(tab, "  file read ", line, sizeof(line)) && strstr(line, "tmpfs/native") &&
	      strstr(line, "ext4/native") && !strstr(line, "xfs/native"));
	if (failures)
		fputs(tab, stderr);
	free(tab);
	char *v = text(pgl_cmp_print_verdicts);
	CHECK(line_with(v, "file read: best tmpfs/native", line, sizeof(line)));
	free(v);
	for (int i = 0; i < NCELL; i++)
		free(m.cell[i].s);
	free(m.cell);
}

static void test_how_sure(void)
{
	static const double base[] = {10, 10.5, 9.5}, wide[] = {6, 9.8, 8.2},
			    fast[] = {5, 5.2, 4.8};
	memset(&m, 0, sizeof(m));
	m.runs = 3;
	m.ncell = 3;
	m.cell = calloc(3, sizeof(*m.cell));
	m.nbe = 3;
	cell(0, "dir/native", base, 3);
	cell(1, "dir/wide", wide, 3);
	cell(2, "dir/fast", fast, 3);
	pgl_cmp_summarize(&m);
	char *tab = text(pgl_cmp_print_table), *v = text(pgl_cmp_print_verdicts), line[512];
	CHECK(line_with(tab, "dir/wide took 0.80 ± ", line, sizeof(line)) &&
	      strstr(line, ": not separated (3 runs each, 6.00 to 9.80 against 9.50 to 10.50 s)"));
	CHECK(line_with(tab, "dir/fast took 0.50 ± ", line, sizeof(line)) &&
	      strstr(line, ": faster (3 runs each, 4.80 to 5.20 against 9.50 to 10.50 s)"));
	/* the best import time is fast's, and wide's runs overlap it: no */
	CHECK(line_with(tab, "  import ", line, sizeof(line)) && strstr(line, "dir/fast") &&
	      strstr(line, "(3 runs each, 4.80 to 5.20 against 6.00 to 9.80 s)"));
	CHECK(line_with(v, "Not separated from the baseline", line, sizeof(line)) &&
	      strstr(line, "dir/wide 0.80") && !strstr(line, "dir/fast"));
	CHECK(line_with(v, "Faster than the baseline", line, sizeof(line)) &&
	      strstr(line, "dir/fast 0.50"));
	/* a best that is not apart from the next: the import of wide and native only */
	m.cell[2].ns = 0;
	pgl_cmp_summarize(&m);
	free(v);
	v = text(pgl_cmp_print_verdicts);
	CHECK(line_with(v, "import: best dir/wide", line, sizeof(line)) &&
	      strstr(line, ": not separated (3 runs each, 6.00 to 9.80 against 9.50 to 10.50 s)."));
	if (failures)
		fprintf(stderr, "%s\n%s", tab, v);
	free(tab);
	free(v);
	for (int i = 0; i < 3; i++)
		free(m.cell[i].s);
	free(m.cell);
}

int main(void)
{
	test_cached_file_read();
	test_how_sure();
	return failures ? 1 : 0;
}
