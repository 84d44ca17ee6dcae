/*
 * compare_opts.c -- the options of `pgload compare` and the cells they make
 * (back end x profile x every combination of --set values).
 *
 * What must stay true: nothing is created before every argument has been
 * checked: back end names, root for loop and tmpfs back ends, mkfs programs
 * (testbed.c), profiles and --set values (by `pgiofs --print-config`),
 * --baseline.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare_i.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: pgload compare (--workload DIR | --gen SCALE) --backends LIST --profiles LIST\n"
	    "                      [OPTIONS]\n"
	    "\n"
	    "Load the same workload into fresh clusters on every back end x profile\n"
	    "(x --set value) and compare the times.\n"
	    "\n"
	    "  -w, --workload DIR     schema.sql, data.sql and post.sql (each may be .lz4;\n"
	    "                         data.sql is required)\n"
	    "  -g, --gen SCALE        generate the workload (`pgload gen --scale SCALE`)\n"
	    "  -b, --backends LIST    comma-separated: ext2, ext3, ext4, xfs (an image of\n"
	    "                         --size, loop-mounted: root), tmpfs, dir:PATH (a fresh\n"
	    "                         subdirectory of PATH)\n"
	    "  -P, --profiles LIST    comma-separated: native (no pgiofs) and pgiofs profiles\n"
	    "                         (config/profiles: noop, deadline-2.6, dbaware, ...)\n"
	    "  -n, --runs N           runs per cell, interleaved across cells (default 3)\n"
	    "  -s, --set NAME=V1,V2,...  sweep a pgiofs tunable (pgiofs cells; repeatable:\n"
	    "                         every combination is a cell)\n"
	    "  -l, --load KIND        background load during the import: none, io_load\n"
	    "                         (stream writes on the back end), read_load (stream reads)\n"
	    "      --device MODEL     pgiofs emulated device for pgiofs cells: none, hdd, ssd\n"
	    "      --baseline CELL    the cell ratios refer to: a label (\"ext4/native\") or a\n"
	    "                         number (default 1, the first cell)\n"
	    "  -o, --out DIR          report directory (default pgload-compare-DATE-TIME)\n"
	    "      --size SIZE        image and tmpfs size (default 4G; K, M, G suffixes)\n"
	    "  -j, --jobs N           `pgload run --jobs N` for each run (default 1)\n"
	    "      --pgbin DIR        PostgreSQL server binaries\n"
	    "      --pgiofs-bin PATH  the pgiofs binary (default: beside pgload, or PATH)\n"
	    "  -q, --quiet            no progress messages\n"
	    "  -h, --help             this help\n"
	    "\n"
	    "Output: the table on stdout; table.txt, results.json, results.csv, import.svg,\n"
	    "latency.svg and index.html in --out.  Exit status 0, 1 on errors, 2 if\n"
	    "interrupted; everything created is removed in every case.\n");
}

/* split_list() -- split a comma list in place into OUT (at most MAX). */
static int split_list(char *s, const char **out, int max, const char *opt)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			fprintf(stderr, "pgload: compare: %s: at most %d items\n", opt, max);
			return -E2BIG;
		}
		out[n++] = t;
	}
	if (n == 0) {
		fprintf(stderr, "pgload: compare: %s: empty list\n", opt);
		return -EINVAL;
	}
	return n;
}

static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	uint64_t mul = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	}
	if (errno || end == arg || *end || v * (double)mul < 64.0 * (1 << 20) ||
	    v * (double)mul > 16.0 * (1ULL << 40)) {
		fprintf(stderr,
			"pgload: compare: --size \"%s\": a size from 64M to 16T expected "
			"(suffix K, M or G)\n",
			arg);
		return -EINVAL;
	}
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

/* check_profiles() -- every profile and --set value as pgiofs reads them. */
static int check_profiles(struct cmp *m)
{
	bool any = false;
	for (int p = 0; p < m->nprofile; p++)
		any |= strcmp(m->profile[p], "native") != 0;
	if (!any) {
		if (m->nsets || m->device)
			fprintf(stderr, "pgload: compare: note: --set and --device apply to pgiofs "
					"cells only, and there are none\n");
		return 0;
	}
	int ret = pgl_io_find_bin(m->pgiofs_bin, m->pgiofs, sizeof(m->pgiofs));
	if (ret < 0) {
		fprintf(
		    stderr, "pgload: compare: %s%s%s: %s\n",
		    m->pgiofs_bin ? "--pgiofs-bin \"" : "no pgiofs binary beside pgload or on PATH",
		    m->pgiofs_bin ? m->pgiofs_bin : "", m->pgiofs_bin ? "\"" : "", strerror(-ret));
		return ret;
	}
	for (int p = 0; p < m->nprofile; p++) {
		if (strcmp(m->profile[p], "native") == 0)
			continue;
		char *argv[8 + 2 * (MAX_SETS * MAX_VALUES)];
		char sets[MAX_SETS * MAX_VALUES][128], dev[64];
		int n = 0, k = 0;
		argv[n++] = m->pgiofs;
		argv[n++] = "--profile";
		argv[n++] = (char *)m->profile[p];
		for (int i = 0; i < m->nsets; i++)
			for (int v = 0; v < m->sets[i].nval; v++) {
				snprintf(sets[k], sizeof(sets[k]), "%s=%s", m->sets[i].name,
					 m->sets[i].val[v]);
				argv[n++] = "--set";
				argv[n++] = sets[k++];
			}
		if (m->device) {
			snprintf(dev, sizeof(dev), "device.model=%s", m->device);
			argv[n++] = "--set";
			argv[n++] = dev;
		}
		argv[n++] = "--print-config";
		argv[n] = NULL;
		char out[65536];
		int st = pgl_run_cmd(argv, out, sizeof(out));
		if (st != 0) {
			char *nl = strstr(out, "pgiofs:");
			fprintf(stderr, "pgload: compare: profile \"%s\"%s refused by %s: %s",
				m->profile[p],
				m->nsets || m->device ? " with the --set values" : "", m->pgiofs,
				nl ? nl : "\n");
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_set(struct cmp *m, const char *arg)
{
	if (m->nsets == MAX_SETS) {
		fprintf(stderr, "pgload: compare: at most %d --set sweeps\n", MAX_SETS);
		return -E2BIG;
	}
	struct sweep *s = &m->sets[m->nsets];
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : 0;
	if (!eq || nl == 0 || nl >= sizeof(s->name) || !eq[1] || strchr(eq + 1, '=') ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_.") != nl) {
		fprintf(stderr,
			"pgload: compare: --set \"%s\": NAME=V1,V2,... expected (a pgiofs tunable "
			"such as iosched.nr_requests=128,1024)\n",
			arg);
		return -EINVAL;
	}
	memcpy(s->name, arg, nl);
	s->name[nl] = '\0';
	s->buf = strdup(eq + 1);
	if (!s->buf)
		return -ENOMEM;
	if (strstr(eq + 1, ",,") || eq[1] == ',' || eq[strlen(eq) - 1] == ',') {
		fprintf(stderr, "pgload: compare: --set \"%s\": empty value\n", arg);
		free(s->buf);
		return -EINVAL;
	}
	int n = split_list(s->buf, s->val, MAX_VALUES, "--set");
	if (n < 0) {
		free(s->buf);
		return n;
	}
	s->nval = n;
	m->nsets++;
	return 0;
}

int pgl_cmp_workload(struct cmp *m, const char *dir)
{
	static const char *const base[PGL_NPHASE] = {"schema.sql", "data.sql", "post.sql"};
	for (int ph = 0; ph < PGL_NPHASE; ph++) {
		m->files[ph][0] = '\0';
		for (int z = 0; z < 2 && !m->files[ph][0]; z++) {
			char path[1100];
			snprintf(path, sizeof(path), "%s/%s%s", dir, base[ph], z ? ".lz4" : "");
			if (access(path, R_OK) == 0)
				snprintf(m->files[ph], sizeof(m->files[ph]), "%s", path);
		}
	}
	if (!m->files[PGL_PH_DATA][0]) {
		fprintf(stderr,
			"pgload: compare: --workload \"%s\": no data.sql (or data.sql.lz4)\n", dir);
		return -ENOENT;
	}
	return 0;
}

/* make_cells() -- back end x profile x every combination of --set values. */
static int make_cells(struct cmp *m)
{
	int combos = 1;
	for (int i = 0; i < m->nsets; i++)
		combos *= m->sets[i].nval;
	int max = m->nbe * m->nprofile * combos;
	if (max > MAX_CELLS) {
		fprintf(stderr, "pgload: compare: %d cells; at most %d\n", max, MAX_CELLS);
		return -E2BIG;
	}
	m->cell = calloc((size_t)max, sizeof(*m->cell));
	if (!m->cell)
		return -ENOMEM;
	for (int b = 0; b < m->nbe; b++)
		for (int p = 0; p < m->nprofile; p++) {
			bool native = strcmp(m->profile[p], "native") == 0;
			for (int k = 0; k < (native ? 1 : combos); k++) {
				struct cell *c = &m->cell[m->ncell];
				c->idx = m->ncell++;
				c->spec = &m->be[b];
				c->profile = native ? NULL : m->profile[p];
				char sets[128] = "";
				int rest = k;
				for (int i = 0; i < m->nsets && !native; i++) {
					c->setv[i] = m->sets[i].val[rest % m->sets[i].nval];
					rest /= m->sets[i].nval;
					size_t l = strlen(sets);
					snprintf(sets + l, sizeof(sets) - l, " %s=%s",
						 m->sets[i].name, c->setv[i]);
				}
				snprintf(c->label, sizeof(c->label), "%s/%s%s", c->spec->name,
					 m->profile[p], sets);
				snprintf(c->words, sizeof(c->words), "%s%s on %s", m->profile[p],
					 sets, c->spec->name);
			}
		}
	m->baseline = 0;
	if (m->baseline_arg) {
		char *end;
		long v = strtol(m->baseline_arg, &end, 10);
		m->baseline = -1;
		if (*end == '\0' && v >= 1 && v <= m->ncell)
			m->baseline = (int)v - 1;
		for (int i = 0; i < m->ncell && m->baseline < 0; i++)
			if (strcmp(m->cell[i].label, m->baseline_arg) == 0)
				m->baseline = i;
		if (m->baseline < 0) {
			fprintf(stderr,
				"pgload: compare: --baseline \"%s\": no such cell; the cells are:",
				m->baseline_arg);
			for (int i = 0; i < m->ncell; i++)
				fprintf(stderr, "%s %d \"%s\"", i ? "," : "", i + 1,
					m->cell[i].label);
			fprintf(stderr, "\n");
			return -EINVAL;
		}
	}
	for (int i = 0; i < m->ncell; i++) {
		m->cell[i].s = calloc((size_t)m->runs, sizeof(struct sample));
		if (!m->cell[i].s)
			return -ENOMEM;
	}
	return 0;
}

int pgl_cmp_args(struct cmp *m, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"workload", required_argument, NULL, 'w'},
	    {"gen", required_argument, NULL, 'g'},
	    {"backends", required_argument, NULL, 'b'},
	    {"profiles", required_argument, NULL, 'P'},
	    {"runs", required_argument, NULL, 'n'},
	    {"set", required_argument, NULL, 's'},
	    {"load", required_argument, NULL, 'l'},
	    {"device", required_argument, NULL, 'D'},
	    {"baseline", required_argument, NULL, 'B'},
	    {"out", required_argument, NULL, 'o'},
	    {"size", required_argument, NULL, 'S'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"pgbin", required_argument, NULL, 'X'},
	    {"pgiofs-bin", required_argument, NULL, 'Y'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *backends = NULL, *profiles = NULL, *end;
	int opt, ret;
	m->runs = 3;
	m->jobs = 1;
	m->size = DEFAULT_SIZE;
	m->gen_scale = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "w:g:b:P:n:s:l:o:j:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			m->workload = optarg;
			break;
		case 'g':
			m->gen_scale = strtod(optarg, &end);
			if (*end || end == optarg || !(m->gen_scale > 0 && m->gen_scale <= 1000)) {
				fprintf(stderr,
					"pgload: compare: --gen \"%s\": a scale above 0 and "
					"at most 1000 expected\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			backends = optarg;
			break;
		case 'P':
			profiles = optarg;
			break;
		case 'n':
		case 'j': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > (opt == 'n' ? 1000 : 64)) {
				fprintf(stderr,
					"pgload: compare: %s \"%s\": an integer from 1 to %d "
					"expected\n",
					opt == 'n' ? "--runs" : "--jobs", optarg,
					opt == 'n' ? 1000 : 64);
				return -EINVAL;
			}
			*(opt == 'n' ? &m->runs : &m->jobs) = (int)v;
			break;
		}
		case 's':
			if ((ret = parse_set(m, optarg)) < 0)
				return ret;
			break;
		case 'l':
			for (m->load = LOAD_NONE; m->load <= LOAD_READ; m->load++)
				if (strcmp(optarg, pgl_load_names[m->load]) == 0)
					break;
			if (m->load > LOAD_READ) {
				fprintf(stderr,
					"pgload: compare: --load \"%s\": none, io_load or "
					"read_load expected\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			if (strcmp(optarg, "none") && strcmp(optarg, "hdd") &&
			    strcmp(optarg, "ssd")) {
				fprintf(stderr,
					"pgload: compare: --device \"%s\": none, hdd or ssd "
					"expected\n",
					optarg);
				return -EINVAL;
			}
			m->device = strcmp(optarg, "none") ? optarg : NULL;
			break;
		case 'B':
			m->baseline_arg = optarg;
			break;
		case 'o':
			m->out = optarg;
			break;
		case 'S':
			if ((ret = parse_size(optarg, &m->size)) < 0)
				return ret;
			break;
		case 'X':
			m->pgbin = optarg;
			break;
		case 'Y':
			m->pgiofs_bin = optarg;
			break;
		case 'q':
			m->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload: compare: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!m->workload == (m->gen_scale < 0)) {
		fprintf(stderr, "pgload: compare: give one of --workload DIR and --gen SCALE\n");
		return -EINVAL;
	}
	if (!backends || !profiles) {
		fprintf(stderr, "pgload: compare: --backends and --profiles are required\n");
		return -EINVAL;
	}
	const char *items[MAX_BACKENDS > MAX_PROFILES ? MAX_BACKENDS : MAX_PROFILES];
	int n = split_list(backends, items, MAX_BACKENDS, "--backends");
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if ((ret = pgl_backend_parse(items[i], &m->be[m->nbe++])) < 0)
			return ret;
	if ((n = split_list(profiles, m->profile, MAX_PROFILES, "--profiles")) < 0)
		return n;
	m->nprofile = n;
	for (int i = 0; i < n; i++)
		if (!m->profile[i][0] || strchr(m->profile[i], ' ')) {
			fprintf(stderr, "pgload: compare: bad profile name \"%s\"\n",
				m->profile[i]);
			return -EINVAL;
		}
	if (m->workload && (ret = pgl_cmp_workload(m, m->workload)) < 0)
		return ret;
	for (int i = 0; i < m->nbe; i++)
		if ((ret = pgl_backend_check(&m->be[i])) < 0)
			return ret;
	if ((ret = check_profiles(m)) < 0)
		return ret;
	return make_cells(m);
}
