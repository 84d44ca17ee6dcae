/*
 * compare_opts.c -- the options of `pgload compare` and the cells they make
 * (back end x profile x, on a block device, elevator x every combination
 * of the sweeps that apply: --set values for pgiofs cells, --queue-set
 * values for cells on a block device (an elevator's tunable only for
 * cells with that elevator), --disk-set values for cells on a modelled
 * disk).
 *
 * What must stay true: nothing is created before every argument has been
 * checked: back end names, root for loop and tmpfs back ends, mkfs programs,
 * a device to destroy (compare_backends.c, backends.c), profiles and --set values (by `pgiofs
 * --print-config`), elevators (known to pgload and present in this kernel), queue tunables (the
 * table of blkqueue.c: name, owner, range), --disk-set values (by `pgdisk --print-config`),
 * --baseline.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
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
	    "                         --size, loop-mounted: root), hdd:FS, ssd:FS (FS on a\n"
	    "                         disk modelled by pgdisk: a 2004 hdd, an ssd),\n"
	    "                         gp3:FS, gp2:FS, gp2:SIZE:FS, io2:FS, cloud:FS (a\n"
	    "                         capped cloud volume; SIZE: gp2's GiB), tmpfs,\n"
	    "                         dir:PATH (a fresh subdirectory of PATH),\n"
	    "                         dev:DEVICE:FS (FS made afresh on DEVICE for each cell:\n"
	    "                         with --destroy-device DEVICE); LABEL=BACKEND\n"
	    "                         names a back end in the report (default: its name;\n"
	    "                         dir:PATH ones told apart by their paths' ends)\n"
	    "      --destroy-device DEVICE  allow a dev:DEVICE:FS back end to destroy what\n"
	    "                         DEVICE holds (repeatable)\n"
	    "  -P, --profiles LIST    comma-separated: native (no pgiofs) and pgiofs profiles\n"
	    "                         (config/profiles: noop, deadline-2.6, dbaware, ...)\n"
	    "  -n, --runs N           runs per cell, interleaved across cells (default 3)\n"
	    "  -s, --set NAME=V1,V2,...  sweep a pgiofs tunable (pgiofs cells; repeatable:\n"
	    "                         every combination is a cell)\n"
	    "  -e, --elevators LIST   kernel elevators of the native cells on block devices\n"
	    "                         (none, mq-deadline, bfq, kyber): a cell each\n"
	    "      --pgiofs-elevators LIST  the same for pgiofs cells (default none)\n"
	    "      --queue-set NAME=V1,V2,...  sweep a tunable of the loop device's queue\n"
	    "                         (read_ahead_kb, nr_requests, ...) or of an elevator\n"
	    "                         (write_expire, low_latency, read_lat_nsec, ...; cells\n"
	    "                         with that elevator); repeatable\n"
	    "      --disk-set NAME=V1,V2,...  sweep a setting of the modelled disk (pgdisk:\n"
	    "                         seq_mb_s, seek_ms, rpm, track_kb, ssd_latency_us,\n"
	    "                         cloud_iops, cloud_mib_s, cloud_credits, ...)\n"
	    "  -l, --load KIND        background load during the import: none, io_load\n"
	    "                         (stream writes on the back end), read_load (stream reads)\n"
	    "      --oltp CLIENTS     that many pgbench-like clients committing during the\n"
	    "                         import: commit latency p50/p99/p99.9/max and tps\n"
	    "      --oltp-scale N     scale of their tables (default: CLIENTS)\n"
	    "      --floor            after each run, the same clients as long again without\n"
	    "                         the import: each cell's distance from that floor\n"
	    "      --wal-floor        a cell per back end with only pg_wal on it (the data\n"
	    "                         directory on the machine's own disk), native, the\n"
	    "                         first elevator: the floor of the commits during the\n"
	    "                         import, each cell's distance from it\n"
	    "      --stream-mb N      streaming figures per cell, MB read from the device and\n"
	    "                         written and read as a file (default 64; 0: none)\n"
	    "      --device MODEL     pgiofs emulated device for pgiofs cells: none, hdd, ssd\n"
	    "      --baseline CELL    the cell ratios refer to: a label (\"ext4/native\") or a\n"
	    "                         number (default 1, the first cell)\n"
	    "  -o, --out DIR          report directory (default pgload-compare-DATE-TIME)\n"
	    "      --size SIZE        image and tmpfs size (default 4G; K, M, G suffixes)\n"
	    "  -j, --jobs N           `pgload run --jobs N` for each run (default 1)\n"
	    "      --pgbin DIR        PostgreSQL server binaries\n"
	    "      --pg-set NAME=VALUE  a server setting of every cell's cluster (repeatable;\n"
	    "                         max_wal_size=144MB: checkpoints during the import)\n"
	    "      --pgiofs-bin PATH  the pgiofs binary (default: beside pgload, or PATH)\n"
	    "      --pgdisk-bin PATH  the pgdisk binary (default: beside pgload, or PATH)\n"
	    "  -q, --quiet            no progress messages\n"
	    "  -h, --help             this help\n"
	    "\n"
	    "Output: the table on stdout; table.txt, results.json, results.csv, import.svg,\n"
	    "latency.svg, oltp.svg (--oltp) and index.html in --out.  Exit status 0, 1 on\n"
	    "errors, 2 if interrupted; everything created is removed in every case.\n");
}

/* split_list() -- split a comma list in place into OUT (at most MAX). */
static int split_list(char *s, const char **out, int max, const char *opt)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			fprintf(stderr, "pgload compare: %s: at most %d items\n", opt, max);
			return -E2BIG;
		}
		out[n++] = t;
	}
	if (n == 0) {
		fprintf(stderr, "pgload compare: %s: empty list\n", opt);
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
			"pgload compare: --size \"%s\": a size from 64M to 16T expected "
			"(suffix K, M or G)\n",
			arg);
		return -EINVAL;
	}
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

/* find_program() -- PROG of this tree (--PROG-bin GIVEN, beside pgload, on
 * PATH) into OUT; says why not. */
static int find_program(const char *prog, const char *given, char *out, size_t cap)
{
	int ret = pgl_find_sibling(prog, given, out, cap);
	if (ret < 0 && given)
		fprintf(stderr, "pgload compare: --%s-bin \"%s\": %s\n", prog, given,
			strerror(-ret));
	else if (ret < 0)
		fprintf(stderr, "pgload compare: no %s binary beside pgload or on PATH\n", prog);
	return ret;
}

/* check_profiles() -- every profile and --set value as pgiofs reads them. */
static int check_profiles(struct cmp *m)
{
	bool any = false, sets = false;
	for (int p = 0; p < m->nprofile; p++)
		any |= strcmp(m->profile[p], "native") != 0;
	for (int i = 0; i < m->nsets; i++)
		sets |= m->sets[i].kind == SWEEP_PGIOFS;
	if (!any) {
		if (sets || m->device)
			fprintf(stderr, "pgload compare: note: --set and --device apply to pgiofs "
					"cells only, and there are none\n");
		return 0;
	}
	int ret = find_program("pgiofs", m->pgiofs_bin, m->pgiofs, sizeof(m->pgiofs));
	if (ret < 0)
		return ret;
	for (int p = 0; p < m->nprofile; p++) {
		if (strcmp(m->profile[p], "native") == 0)
			continue;
		char *argv[8 + 2 * (MAX_SETS * MAX_VALUES)];
		char setv[MAX_SETS * MAX_VALUES][128], dev[64];
		int n = 0, k = 0;
		argv[n++] = m->pgiofs;
		argv[n++] = "--profile";
		argv[n++] = (char *)m->profile[p];
		for (int i = 0; i < m->nsets; i++)
			for (int v = 0; m->sets[i].kind == SWEEP_PGIOFS && v < m->sets[i].nval;
			     v++) {
				snprintf(setv[k], sizeof(setv[k]), "%s=%s", m->sets[i].name,
					 m->sets[i].val[v]);
				argv[n++] = "--set";
				argv[n++] = setv[k++];
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
			fprintf(stderr, "pgload compare: profile \"%s\"%s refused by %s: %s",
				m->profile[p], sets || m->device ? " with the --set values" : "",
				m->pgiofs, nl ? nl : "\n");
			return -EINVAL;
		}
	}
	return 0;
}

const char *const pgl_sweep_prefix[] = {"", "queue.", "disk."};
static const char *const sweep_option[] = {"--set", "--queue-set", "--disk-set"};

/* parse_set() -- ARG of --set, --queue-set or --disk-set (KIND) into a sweep. */
static int parse_set(struct cmp *m, const char *arg, enum sweep_kind kind)
{
	static const char *const example[] = {"iosched.nr_requests=128,1024",
					      "read_ahead_kb=128,512", "seek_ms=4,8.5"};
	const char *opt = sweep_option[kind];
	int same = 0;
	for (int i = 0; i < m->nsets; i++)
		same += m->sets[i].kind == kind;
	if (same == MAX_SETS) {
		fprintf(stderr, "pgload compare: at most %d %s sweeps\n", MAX_SETS, opt);
		return -E2BIG;
	}
	struct sweep *s = &m->sets[m->nsets];
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : 0;
	if (!eq || nl == 0 || nl >= sizeof(s->name) || !eq[1] || strchr(eq + 1, '=') ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_.") != nl) {
		fprintf(stderr, "pgload compare: %s \"%s\": NAME=V1,V2,... expected (such as %s)\n",
			opt, arg, example[kind]);
		return -EINVAL;
	}
	s->kind = kind;
	/* the prefix of the label, or pgdisk's section, may be written */
	const char *name = arg;
	if (kind == SWEEP_QUEUE && strncmp(name, "queue.", 6) == 0)
		name += 6;
	if (kind == SWEEP_DISK && strncmp(name, "device.", 7) == 0)
		name += 7;
	else if (kind == SWEEP_DISK && strncmp(name, "disk.", 5) == 0)
		name += 5;
	snprintf(s->name, sizeof(s->name), "%.*s", (int)(eq - name), name);
	if (strstr(eq + 1, ",,") || eq[1] == ',' || eq[strlen(eq) - 1] == ',') {
		fprintf(stderr, "pgload compare: %s \"%s\": empty value\n", opt, arg);
		return -EINVAL;
	}
	const struct pgl_queue_tunable *t = NULL;
	if (kind == SWEEP_QUEUE && !(t = pgl_queue_tunable_find(s->name))) {
		fprintf(
		    stderr,
		    "pgload compare: --queue-set \"%s\": no queue tunable \"%s\"; pgload knows:",
		    arg, s->name);
		for (t = pgl_queue_tunables; t->name; t++)
			fprintf(stderr, " %s%s%s%s", t->name, t->elevator ? " (" : "",
				t->elevator ? t->elevator : "", t->elevator ? ")" : "");
		fprintf(stderr, "\n");
		return -EINVAL;
	}
	s->elevator = t ? t->elevator : NULL;
	s->buf = strdup(eq + 1);
	if (!s->buf)
		return -ENOMEM;
	int n = split_list(s->buf, s->val, MAX_VALUES, opt);
	if (n < 0) {
		free(s->buf);
		return n;
	}
	for (int v = 0; t && v < n; v++)
		if (pgl_queue_value_check(t, s->val[v]) < 0) {
			fprintf(stderr,
				"pgload compare: --queue-set \"%s\": \"%s\" is not an integer from "
				"%lld to %lld (%s: %s)\n",
				arg, s->val[v], t->min, t->max, t->name, t->help);
			free(s->buf);
			return -EINVAL;
		}
	s->nval = n;
	m->nsets++;
	return 0;
}

/* parse_elevators() -- LIST of --elevators or --pgiofs-elevators into OUT. */
static int parse_elevators(char *list, const char **out, int *n, const char *opt)
{
	int k = split_list(list, out, MAX_ELEVATORS, opt);
	if (k < 0)
		return k;
	for (int i = 0; i < k; i++)
		if (!pgl_elevator_known(out[i])) {
			fprintf(stderr,
				"pgload compare: %s: unknown elevator \"%s\" (none, mq-deadline, "
				"bfq or kyber; noop, deadline, cfq and anticipatory were the "
				"single-queue elevators Linux 5.0 removed)\n",
				opt, out[i]);
			return -EINVAL;
		}
	*n = k;
	return 0;
}

/* has_elevator() -- a cell of M may run elevator E. */
static bool has_elevator(const struct cmp *m, const char *e)
{
	for (int i = 0; i < m->nelevators; i++)
		if (strcmp(m->elevators[i], e) == 0)
			return true;
	for (int i = 0; i < m->npgiofs_elevators; i++)
		if (strcmp(m->pgiofs_elevators[i], e) == 0)
			return true;
	return false;
}

/* check_queues() -- the elevators are in this kernel; each elevator's
 * tunable has cells running that elevator. */
static int check_queues(struct cmp *m)
{
	bool blockdev = false, native = false, pgiofs = false;
	for (int i = 0; i < m->nbe; i++)
		blockdev |= pgl_backend_blockdev(&m->be[i]);
	for (int p = 0; p < m->nprofile; p++)
		*(strcmp(m->profile[p], "native") == 0 ? &native : &pgiofs) = true;
	bool queue_sets = false;
	for (int i = 0; i < m->nsets; i++)
		queue_sets |= m->sets[i].kind == SWEEP_QUEUE;
	if (!blockdev) {
		if (m->elevators_given || queue_sets)
			fprintf(stderr,
				"pgload compare: note: elevators and --queue-set apply to "
				"back ends on a block device (ext2, ext3, ext4, xfs, hdd:FS, "
				"ssd:FS), and there are none\n");
		return 0;
	}
	if (m->nelevators && !native)
		fprintf(stderr, "pgload compare: note: --elevators applies to native cells, and "
				"there are none (--pgiofs-elevators sets those of pgiofs cells)\n");
	char have[512];
	if (pgl_elevators_available(have, sizeof(have)) < 0) {
		fprintf(stderr, "pgload compare: cannot tell which elevators this kernel has: no "
				"/sys/block/*/queue/scheduler\n");
		return -ENOENT;
	}
	for (int k = 0; k < 2; k++) {
		const char **list = k ? m->pgiofs_elevators : m->elevators;
		int n = k ? m->npgiofs_elevators : m->nelevators;
		for (int i = 0; i < n; i++)
			if (!pgl_elevator_in(have, list[i])) {
				struct utsname u;
				fprintf(stderr,
					"pgload compare: %s: this kernel (%s) has no elevator "
					"\"%s\"; it has: %s\n",
					k ? "--pgiofs-elevators" : "--elevators",
					uname(&u) == 0 ? u.release : "?", list[i], have);
				return -ENOENT;
			}
	}
	for (int i = 0; i < m->nsets; i++) {
		const struct sweep *s = &m->sets[i];
		if (s->kind != SWEEP_QUEUE || !s->elevator || has_elevator(m, s->elevator))
			continue;
		fprintf(stderr,
			"pgload compare: --queue-set %s: a tunable of %s, and no cell runs %s "
			"(give it in --elevators%s)\n",
			s->name, s->elevator, s->elevator, pgiofs ? " or --pgiofs-elevators" : "");
		return -EINVAL;
	}
	return 0;
}

/*
 * check_disks() -- pgdisk is there and takes the model and --disk-set
 * values of every cell on a modelled disk, together (`pgdisk --model M
 * --set ... --print-config`: a capped volume's settings are checked
 * against each other, a p99 below the median refused).  A bare gp2 is
 * sized as pgdisk will size it, from the image: --size, or the user's.
 */
static int check_disks(struct cmp *m)
{
	static char sets[MAX_CELLS][512]; /* each cell's --disk-set values, or "" */
	bool any = false;
	for (int i = 0; i < m->nbe; i++)
		any |= m->be[i].model != NULL;
	if (!any) {
		for (int i = 0; i < m->nsets; i++)
			if (m->sets[i].kind == SWEEP_DISK) {
				fprintf(stderr, "pgload compare: note: --disk-set applies to back "
						"ends on a modelled disk (hdd:FS, ssd:FS, gp3:FS, "
						"gp2:FS, io2:FS, cloud:FS), and there are none\n");
				break;
			}
		return 0;
	}
	int ret = find_program("pgdisk", m->pgdisk_bin, m->pgdisk, sizeof(m->pgdisk));
	if (ret < 0)
		return ret;
	for (int i = 0; i < m->nbe; i++)
		if (m->be[i].model && m->be[i].path &&
		    (ret = pgl_backend_check_image(&m->be[i], m->pgdisk)) < 0)
			return ret;
	for (int i = 0; i < m->ncell; i++) {
		struct cell *c = &m->cell[i];
		const struct pgl_backend_spec *spec = c->spec;
		char model[32], *argv[8 + 2 * PGL_MAX_DISK_SETS];
		int n = 0;
		sets[i][0] = '\0';
		if (!spec->model)
			continue;
		pgl_cmp_backend_opts(m, c);
		snprintf(model, sizeof(model), "%s", spec->disk_model);
		if (strcmp(model, "gp2") == 0 && !spec->path) /* pgdisk: whole GiB, at least 1 */
			snprintf(model, sizeof(model), "gp2:%llu",
				 (unsigned long long)(m->size >> 30 ? m->size >> 30 : 1));
		argv[n++] = m->pgdisk;
		argv[n++] = "--model";
		argv[n++] = model;
		size_t k = 0;
		for (int j = 0; c->disk_sets[j]; j++) {
			argv[n++] = "--set";
			argv[n++] = (char *)c->disk_sets[j];
			if (k < sizeof(sets[i]))
				k += (size_t)snprintf(sets[i] + k, sizeof(sets[i]) - k, "%s%s",
						      j ? " " : "", c->disk_sets[j]);
		}
		argv[n++] = "--print-config";
		if (spec->path)
			argv[n++] = (char *)spec->path;
		argv[n] = NULL;
		bool seen = false; /* the same back end and values as a cell before */
		for (int j = 0; j < i && !seen; j++)
			seen = m->cell[j].spec == spec && strcmp(sets[j], sets[i]) == 0;
		char out[16384];
		if (seen || pgl_run_cmd(argv, out, sizeof(out)) == 0)
			continue;
		char *why = strstr(out, "pgdisk:");
		fprintf(stderr,
			"pgload compare: the %s model%s refused by %s (back end \"%s\"%s%s): %s",
			spec->disk_model, sets[i][0] ? " with the --disk-set values" : "",
			m->pgdisk, spec->name, sets[i][0] ? ", " : "", sets[i], why ? why : "\n");
		return -EINVAL;
	}
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
			"pgload compare: --workload \"%s\": no data.sql (or data.sql.lz4)\n", dir);
		return -ENOENT;
	}
	return 0;
}

/* sweep_applies() -- sweep S applies to a cell on SPEC, through pgiofs or not,
 * with ELEVATOR. */
static bool sweep_applies(const struct sweep *s, const struct pgl_backend_spec *spec, bool pgiofs,
			  const char *elevator)
{
	switch (s->kind) {
	case SWEEP_PGIOFS:
		return pgiofs;
	case SWEEP_QUEUE:
		return pgl_backend_blockdev(spec) &&
		       (!s->elevator || (elevator && strcmp(s->elevator, elevator) == 0));
	case SWEEP_DISK:
		return spec->model != NULL;
	}
	return false;
}

/* combos() -- the cells of one back end, profile and elevator: the product
 * of the values of the sweeps that apply. */
static int combos(const struct cmp *m, const struct pgl_backend_spec *spec, bool pgiofs,
		  const char *elevator)
{
	int n = 1;
	for (int i = 0; i < m->nsets; i++)
		if (sweep_applies(&m->sets[i], spec, pgiofs, elevator))
			n *= m->sets[i].nval;
	return n;
}

/* cut() -- a label of N characters (snprintf's count) into CAP ends in
 * "..." if it did not fit. */
static void cut(char *buf, size_t cap, int n)
{
	if (n < 0 || (size_t)n >= cap)
		memcpy(buf + cap - 4, "...", 4);
}

/* add_cell() -- combination K of back end SPEC, PROFILE (NULL: native) and
 * ELEVATOR as the next cell; WALFLOOR: --wal-floor's cell (native, labelled
 * "BACKEND/walonly ..."). */
static void add_cell(struct cmp *m, const struct pgl_backend_spec *spec, const char *profile,
		     const char *elevator, int k, bool walfloor)
{
	struct cell *c = &m->cell[m->ncell];
	const char *word = profile ? profile : walfloor ? "walonly" : "native";
	char sets[200] = "";
	c->idx = m->ncell++;
	c->spec = spec;
	c->profile = profile;
	c->walfloor = walfloor;
	c->elevator = elevator;
	if (elevator && (m->elevators_given || spec->model))
		snprintf(sets, sizeof(sets), " elevator=%s", elevator);
	for (int i = 0; i < m->nsets; i++) {
		const struct sweep *s = &m->sets[i];
		if (!sweep_applies(s, spec, profile != NULL, elevator))
			continue;
		c->setv[i] = s->val[k % s->nval];
		k /= s->nval;
		size_t l = strlen(sets);
		snprintf(sets + l, sizeof(sets) - l, " %s%s=%s", pgl_sweep_prefix[s->kind], s->name,
			 c->setv[i]);
	}
	cut(c->label, sizeof(c->label),
	    snprintf(c->label, sizeof(c->label), "%s/%s%s", spec->name, word, sets));
	cut(c->words, sizeof(c->words),
	    snprintf(c->words, sizeof(c->words), "%s%s on %s", word, sets, spec->name));
}

/*
 * make_cells() -- back end x profile x (block devices) elevator x every
 * combination of the sweeps that apply.
 */
static int make_cells(struct cmp *m)
{
	static const char *const kernel_default[] = {NULL};
	int max = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int b = 0; b < m->nbe; b++)
			for (int p = 0; p < m->nprofile; p++) {
				const struct pgl_backend_spec *spec = &m->be[b];
				bool native = strcmp(m->profile[p], "native") == 0;
				const char *const *elv = kernel_default;
				int nelv = 1;
				if (pgl_backend_blockdev(spec) && native && m->nelevators) {
					elv = m->elevators;
					nelv = m->nelevators;
				} else if (pgl_backend_blockdev(spec) && !native) {
					elv = m->pgiofs_elevators;
					nelv = m->npgiofs_elevators;
				}
				for (int e = 0; e < nelv; e++) {
					int n = combos(m, spec, !native, elv[e]);
					for (int k = 0; pass == 1 && k < n; k++)
						add_cell(m, spec, native ? NULL : m->profile[p],
							 elv[e], k, false);
					max += pass == 0 ? n : 0;
				}
			}
		/* last, so that no default baseline is one */
		for (int b = 0; b < m->nbe && m->wal_floor; b++) {
			const struct pgl_backend_spec *spec = &m->be[b];
			const char *elv =
			    pgl_backend_blockdev(spec) && m->nelevators ? m->elevators[0] : NULL;
			if (pass == 0)
				max++;
			else
				add_cell(m, spec, NULL, elv, 0, true);
		}
		if (pass == 1)
			break;
		if (max > MAX_CELLS) {
			fprintf(stderr, "pgload compare: %d cells; at most %d\n", max, MAX_CELLS);
			return -E2BIG;
		}
		m->cell = calloc((size_t)max, sizeof(*m->cell));
		if (!m->cell)
			return -ENOMEM;
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
				"pgload compare: --baseline \"%s\": no such cell; the cells are:",
				m->baseline_arg);
			for (int i = 0; i < m->ncell; i++)
				fprintf(stderr, "%s %d \"%s\"", i ? "," : "", i + 1,
					m->cell[i].label);
			fprintf(stderr, "\n");
			return -EINVAL;
		}
		if (m->cell[m->baseline].walfloor) {
			fprintf(stderr,
				"pgload compare: --baseline \"%s\": that is --wal-floor's cell, "
				"the floor the cells are measured against, not one of them\n",
				m->baseline_arg);
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

/* check_wal_floor() -- --wal-floor keeps a cell's data directory in the test
 * bed, on the machine's own disk: a dir:PATH back end on that file system
 * would hold it too. */
static int check_wal_floor(const struct cmp *m)
{
	const char *tb;
	struct stat a, b;
	int ret;
	if (!m->wal_floor)
		return 0;
	if ((ret = pgl_tmpdir(&tb)) < 0)
		return ret;
	for (int i = 0; i < m->nbe; i++) {
		const struct pgl_backend_spec *spec = &m->be[i];
		if (spec->model || !spec->path || spec->fs[0])
			continue; /* a file system of its own */
		if (stat(spec->path, &a) == 0 && stat(tb, &b) == 0 && a.st_dev != b.st_dev)
			continue;
		fprintf(stderr,
			"pgload compare: --wal-floor: back end %s (\"%s\") is on the file system "
			"of the test bed (\"%s\"), so the floor's data directory cannot be kept "
			"off it\n",
			spec->name, spec->path, tb);
		return -EINVAL;
	}
	return 0;
}

int pgl_cmp_args(struct cmp *m, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"workload", required_argument, NULL, 'w'},
	    {"gen", required_argument, NULL, 'g'},
	    {"backends", required_argument, NULL, 'b'},
	    {"destroy-device", required_argument, NULL, 'R'},
	    {"profiles", required_argument, NULL, 'P'},
	    {"runs", required_argument, NULL, 'n'},
	    {"set", required_argument, NULL, 's'},
	    {"elevators", required_argument, NULL, 'e'},
	    {"pgiofs-elevators", required_argument, NULL, 'E'},
	    {"queue-set", required_argument, NULL, 'Q'},
	    {"disk-set", required_argument, NULL, 'K'},
	    {"oltp", required_argument, NULL, 'O'},
	    {"oltp-scale", required_argument, NULL, 'C'},
	    {"floor", no_argument, NULL, 'F'},
	    {"wal-floor", no_argument, NULL, 'W'},
	    {"stream-mb", required_argument, NULL, 'M'},
	    {"pgdisk-bin", required_argument, NULL, 'Z'},
	    {"load", required_argument, NULL, 'l'},
	    {"device", required_argument, NULL, 'D'},
	    {"baseline", required_argument, NULL, 'B'},
	    {"out", required_argument, NULL, 'o'},
	    {"size", required_argument, NULL, 'S'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"pgbin", required_argument, NULL, 'X'},
	    {"pgiofs-bin", required_argument, NULL, 'Y'},
	    {"pg-set", required_argument, NULL, 'G'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *backends = NULL, *profiles = NULL, *end;
	static char pgiofs_none[] = "none";
	char *elevators = NULL, *pgiofs_elevators = pgiofs_none;
	int opt, ret;
	m->runs = 3;
	m->jobs = 1;
	m->size = DEFAULT_SIZE;
	m->gen_scale = -1;
	m->stream_mb = DEFAULT_STREAM_MB;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "w:g:b:P:n:s:e:l:o:j:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			m->workload = optarg;
			break;
		case 'g':
			m->gen_scale = strtod(optarg, &end);
			if (*end || end == optarg || !(m->gen_scale > 0 && m->gen_scale <= 1000)) {
				fprintf(stderr,
					"pgload compare: --gen \"%s\": a scale above 0 and "
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
		case 'R':
			if (m->ndestroy == MAX_BACKENDS) {
				fprintf(stderr,
					"pgload compare: --destroy-device: at most %d devices\n",
					MAX_BACKENDS);
				return -E2BIG;
			}
			m->destroy[m->ndestroy++] = optarg;
			break;
		case 'n':
		case 'j': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > (opt == 'n' ? 1000 : 64)) {
				fprintf(stderr,
					"pgload compare: %s \"%s\": an integer from 1 to %d "
					"expected\n",
					opt == 'n' ? "--runs" : "--jobs", optarg,
					opt == 'n' ? 1000 : 64);
				return -EINVAL;
			}
			*(opt == 'n' ? &m->runs : &m->jobs) = (int)v;
			break;
		}
		case 's':
		case 'Q':
		case 'K':
			if ((ret = parse_set(m, optarg,
					     opt == 's'	  ? SWEEP_PGIOFS
					     : opt == 'Q' ? SWEEP_QUEUE
							  : SWEEP_DISK)) < 0)
				return ret;
			break;
		case 'e':
			elevators = optarg;
			m->elevators_given = true;
			break;
		case 'E':
			pgiofs_elevators = optarg;
			m->elevators_given = true;
			break;
		case 'O':
		case 'C':
		case 'M': {
			long v = strtol(optarg, &end, 10);
			long lo = opt == 'C' ? 1 : 0, hi = opt == 'O'	? 64
							   : opt == 'C' ? 10000
									: 65536;
			const char *name = opt == 'O'	? "--oltp"
					   : opt == 'C' ? "--oltp-scale"
							: "--stream-mb";
			if (*end || end == optarg || v < lo || v > hi) {
				fprintf(stderr,
					"pgload compare: %s \"%s\": an integer from %ld to %ld "
					"expected\n",
					name, optarg, lo, hi);
				return -EINVAL;
			}
			*(opt == 'O'   ? &m->oltp_clients
			  : opt == 'C' ? &m->oltp_scale
				       : &m->stream_mb) = (int)v;
			break;
		}
		case 'Z':
			m->pgdisk_bin = optarg;
			break;
		case 'F':
			m->floor = true;
			break;
		case 'W':
			m->wal_floor = true;
			break;
		case 'l':
			for (m->load = LOAD_NONE; m->load <= LOAD_READ; m->load++)
				if (strcmp(optarg, pgl_load_names[m->load]) == 0)
					break;
			if (m->load > LOAD_READ) {
				fprintf(stderr,
					"pgload compare: --load \"%s\": none, io_load or "
					"read_load expected\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			if (strcmp(optarg, "none") && strcmp(optarg, "hdd") &&
			    strcmp(optarg, "ssd")) {
				fprintf(stderr,
					"pgload compare: --device \"%s\": none, hdd or ssd "
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
		case 'G': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg ||
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789_.") !=
				(size_t)(eq - optarg) ||
			    m->npg_set >= MAX_PG_SETS) {
				fprintf(
				    stderr,
				    "pgload compare: --pg-set \"%s\": NAME=VALUE expected, NAME "
				    "a server setting (at most %d)\n",
				    optarg, MAX_PG_SETS);
				return -EINVAL;
			}
			if (!strncmp(optarg, "log_checkpoints=", 16) ||
			    !strncmp(optarg, "log_line_prefix=", 16)) {
				fprintf(stderr,
					"pgload compare: --pg-set \"%s\": pgload sets it (the "
					"timeline reads the checkpoints from the server log)\n",
					optarg);
				return -EINVAL;
			}
			m->pg_set[m->npg_set++] = optarg;
			break;
		}
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
		fprintf(stderr, "pgload compare: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!m->workload == (m->gen_scale < 0)) {
		fprintf(stderr, "pgload compare: give one of --workload DIR and --gen SCALE\n");
		return -EINVAL;
	}
	if (!backends || !profiles) {
		fprintf(stderr, "pgload compare: --backends and --profiles are required\n");
		return -EINVAL;
	}
	const char *items[MAX_BACKENDS > MAX_PROFILES ? MAX_BACKENDS : MAX_PROFILES];
	int n = split_list(backends, items, MAX_BACKENDS, "--backends");
	if (n < 0)
		return n;
	if ((ret = pgl_cmp_backends(m, items, n)) < 0)
		return ret;
	if ((n = split_list(profiles, m->profile, MAX_PROFILES, "--profiles")) < 0)
		return n;
	m->nprofile = n;
	for (int i = 0; i < n; i++)
		if (!m->profile[i][0] || strchr(m->profile[i], ' ')) {
			fprintf(stderr, "pgload compare: bad profile name \"%s\"\n", m->profile[i]);
			return -EINVAL;
		}
	if (elevators &&
	    (ret = parse_elevators(elevators, m->elevators, &m->nelevators, "--elevators")) < 0)
		return ret;
	if ((ret = parse_elevators(pgiofs_elevators, m->pgiofs_elevators, &m->npgiofs_elevators,
				   "--pgiofs-elevators")) < 0)
		return ret;
	if ((m->oltp_scale || m->floor || m->wal_floor) && !m->oltp_clients) {
		fprintf(stderr, "pgload compare: %s needs --oltp CLIENTS\n",
			m->floor       ? "--floor"
			: m->wal_floor ? "--wal-floor"
				       : "--oltp-scale");
		return -EINVAL;
	}
	if (m->oltp_clients && !m->oltp_scale)
		m->oltp_scale = m->oltp_clients;
	if (m->workload && (ret = pgl_cmp_workload(m, m->workload)) < 0)
		return ret;
	if ((ret = pgl_server_check_settings(m->pgbin, m->pg_set, "pgload compare: --pg-set")) < 0)
		return ret;
	if ((ret = pgl_cmp_check_backends(m)) < 0 || (ret = check_wal_floor(m)) < 0)
		return ret;
	if ((ret = check_queues(m)) < 0 || (ret = check_profiles(m)) < 0 ||
	    (ret = make_cells(m)) < 0)
		return ret;
	return check_disks(m);
}
