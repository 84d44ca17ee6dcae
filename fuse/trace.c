/*
 * trace.c -- `pgiofs trace FILE [--csv]`: decode a trace recorded with
 * `pgiofs --trace FILE` (the format is in iosched.h, "traces"); and
 * `pgiofs trace FILE --replay [--profile NAME] [--device MODEL] [--json]`:
 * replay it through iosched on the virtual clock (ios_trace_replay()) and
 * print per-class latency as `pgiofs stat` prints it.
 *
 * The header line gives the start time and the record count, so the file
 * is read twice: once to count, once to print; memory stays bounded however
 * long the trace.  A truncated or corrupt trace prints every record before
 * the damage (a replay: the statistics of replaying them), then the
 * reader's message (file, byte offset, reason) on stderr, and exits 1.
 *
 * Results go to stdout, errors to stderr; exit 1 on error, 2 on usage.
 */
#include "pgiofs_i.h"
#include "json.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

static void trace_usage(FILE *out)
{
	fprintf(out,
		"Usage: pgiofs trace FILE [--csv]\n"
		"       pgiofs trace FILE --replay [--profile NAME] [--device hdd|ssd|none|gp3|gp2|io2|cloud]\n"
		"                    [--json]\n"
		"\n"
		"Decode a trace recorded with `pgiofs --trace FILE`: a header line (start\n"
		"time, record count), then one line per request.  With --csv, a header row\n"
		"time_s,class,dir,file,offset,len,queue_us,service_us,pid,result and one\n"
		"row per request; time_s is seconds since the trace started.\n"
		"\n"
		"--replay submits every request at its recorded arrival time to the\n"
		"scheduler of profile NAME (`pgiofs --help` lists them; default: the built-in\n"
		"defaults) on a virtual clock against the emulated device (--device, else\n"
		"the profile's [device] model), and prints the per-class latency table of\n"
		"`pgiofs stat` (--json: one pgiofs.stats/1 object).  The same trace and\n"
		"profile always give the same output.\n");
}

/* count_records() -- the number of records before the end or the damage. */
static int count_records(const char *path, uint64_t *n)
{
	struct ios_trace_reader *r;
	struct ios_trace_rec rec;
	int err = 0, ret;

	*n = 0;
	r = ios_trace_reader_open(path, &err);
	if (!r)
		return err;
	while ((ret = ios_trace_read(r, &rec)) == 1)
		(*n)++;
	ios_trace_reader_close(r);
	return ret;
}

/* seconds since the start of the trace; arrival may not precede it */
static double rel_seconds(const struct ios_trace_rec *rec, const struct ios_trace_info *info)
{
	if (rec->time_ns < info->start_monotonic_ns)
		return -(double)(info->start_monotonic_ns - rec->time_ns) / 1e9;
	return (double)(rec->time_ns - info->start_monotonic_ns) / 1e9;
}

static void print_header(const char *path, const struct ios_trace_info *info, uint64_t n,
			 bool damaged, bool csv)
{
	time_t sec = (time_t)(info->start_realtime_ns / 1000000000ull);
	struct tm tm;
	char when[64];

	if (csv) {
		printf("time_s,class,dir,dev,file,offset,len,queue_us,service_us,pid,result\n");
		return;
	}
	if (!gmtime_r(&sec, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(when, sizeof(when), "?");
	printf("trace %s: started %s.%06" PRIu64 "Z, %" PRIu64 " record%s%s\n", path, when,
	       (uint64_t)(info->start_realtime_ns % 1000000000ull / 1000), n, n == 1 ? "" : "s",
	       damaged ? " before the damage" : "");
}

static void print_record(const struct ios_trace_rec *rec, const struct ios_trace_info *info,
			 bool csv)
{
	const char *dir = ios_dir_name((enum ios_dir)rec->dir);
	char file[64];

	if (csv) {
		printf("%.6f,%s,%s,%u:%u,%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32
		       ",%" PRIu32 ",%" PRId32 "\n",
		       rel_seconds(rec, info), ios_class_name((enum ios_class)rec->cls), dir,
		       major(rec->dev), minor(rec->dev), rec->ino, rec->off, rec->len,
		       rec->queue_us, rec->service_us, rec->pid, rec->result);
		return;
	}
	if (rec->dir == IOS_SYNC && (rec->flags & IOS_TRACE_F_DATASYNC))
		dir = "dsync";
	snprintf(file, sizeof(file), "%u:%u:%" PRIu64, major(rec->dev), minor(rec->dev), rec->ino);
	printf("%12.6f %-5s %-5s file %-18s off %-12" PRIu64 " len %-8" PRIu32 " queue %6" PRIu32
	       "us service %6" PRIu32 "us pid %-7" PRIu32 " result %" PRId32 "\n",
	       rel_seconds(rec, info), ios_class_name((enum ios_class)rec->cls), dir, file,
	       rec->off, rec->len, rec->queue_us, rec->service_us, rec->pid, rec->result);
}

struct replay_opts {
	const char *profile; /* NULL: defaults */
	const char *device;  /* NULL: the profile's */
	bool json;
};

/* replay_settings() -- the defaults, the profile and the --device override
 * into @set; 0 or 1 with a message. */
static int replay_settings(const struct replay_opts *o, struct pgiofs_settings *set)
{
	char path[PATH_MAX], why[CONF_ERR_MAX], arg[64];
	int ret;

	if (conf_defaults(pgiofs_conf(), set) < 0) {
		fprintf(stderr, "pgiofs trace: internal error: invalid default tunable\n");
		return 1;
	}
	if (o->profile) {
		ret = pfs_find_profile(o->profile, path, sizeof(path));
		if (ret < 0) {
			pfs_profile_error("pgiofs trace", o->profile, ret);
			return 1;
		}
		if (conf_load_file(pgiofs_conf(), set, path, why, sizeof(why)) < 0) {
			fprintf(stderr, "pgiofs trace: profile \"%s\": %s\n", o->profile, why);
			return 1;
		}
	}
	if (o->device) {
		snprintf(arg, sizeof(arg), "device.model=%s", o->device);
		if (conf_set_arg(pgiofs_conf(), set, arg, why, sizeof(why)) < 0) {
			fprintf(stderr, "pgiofs trace: --device \"%s\": %s\n", o->device, why);
			return 1;
		}
	}
	return 0;
}

/* replay() -- `pgiofs trace FILE --replay`: the exit status. */
static int replay(const char *path, const struct replay_opts *o)
{
	struct pgiofs_settings set;
	struct ios_trace_reader *r;
	struct ios_trace_info info;
	struct ios_stats_snapshot *snap = NULL;
	struct ios_stats *st = NULL;
	char model[32], qpath[2 * PATH_MAX + 8], qprof[2 * PATH_MAX + 8], extra[5 * PATH_MAX];
	const char *policy;
	uint64_t span = 0;
	int64_t n, ra_kb;
	int err = 0, status = 1;

	if (replay_settings(o, &set))
		return 1;
	r = ios_trace_reader_open(path, &err);
	if (!r) {
		fprintf(stderr, "pgiofs trace: cannot open \"%s\": %s\n", path, strerror(-err));
		return 1;
	}
	if (ios_trace_reader_info(r, &info) < 0) { /* not a trace at all */
		fprintf(stderr, "pgiofs trace: %s\n", ios_trace_reader_error(r));
		goto out;
	}
	st = ios_stats_create();
	snap = malloc(sizeof(*snap));
	if (!st || !snap) {
		fprintf(stderr, "pgiofs trace: out of memory\n");
		goto out;
	}
	n = ios_trace_replay(r, &set.ios, st, &span, &err);
	if (n < 0) {
		fprintf(stderr, "pgiofs trace: cannot replay \"%s\": %s\n", path,
			strerror((int)-n));
		goto out;
	}
	ios_stats_snapshot(st, snap);
	snap->start_ns = 0; /* virtual time: from the first arrival */
	snap->time_ns = span;
	policy = ios_policy_names[set.ios.policy];
	/* direct reads nothing ahead (a replay queues it, as noop) */
	ra_kb = set.ios.policy == IOS_POLICY_DIRECT ? 0 : set.ios.ra_window_kb;
	conf_format(conf_find(pgiofs_conf(), "device", "model"), &set, model, sizeof(model));
	if (o->json) {
		json_str_format(qpath, sizeof(qpath), path);
		json_str_format(qprof, sizeof(qprof), o->profile ? o->profile : "");
		snprintf(extra, sizeof(extra),
			 "\"trace\":%s,\"replay\":true,\"profile\":%s,\"policy\":\"%s\","
			 "\"device\":\"%s\",\"ra_window_kb\":%" PRId64 ",\"records\":%" PRId64
			 ",\"complete\":%s",
			 qpath, o->profile ? qprof : "null", policy, model, ra_kb, n,
			 err < 0 ? "false" : "true");
		ios_stats_write_json(stdout, snap, extra);
	} else {
		printf("replay of %s: %" PRId64 " record%s%s, profile %s (policy %s, device %s): "
		       "%.3f s from the first arrival to the last completion\n",
		       path, n, n == 1 ? "" : "s", err < 0 ? " before the damage" : "",
		       o->profile ? o->profile : "(defaults)", policy, model, (double)span / 1e9);
		if (ra_kb > 0)
			printf("readahead modelled: windows of up to %" PRId64
			       " KiB (the trace has no file sizes: a window may reach past "
			       "the end of a file)\n",
			       ra_kb);
		else
			printf("readahead: none (ra_window_kb 0 or policy direct)\n");
		ios_stats_print_table(stdout, snap);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "pgiofs trace: writing the output: %s\n", strerror(errno));
		goto out;
	}
	if (err < 0) {
		fprintf(stderr, "pgiofs trace: %s\n", ios_trace_reader_error(r));
		goto out;
	}
	status = 0;
out:
	free(snap);
	ios_stats_destroy(st);
	ios_trace_reader_close(r);
	return status;
}

int pfs_trace_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"csv", no_argument, NULL, 'C'},
	    {"replay", no_argument, NULL, 'R'},
	    {"profile", required_argument, NULL, 'p'},
	    {"device", required_argument, NULL, 'D'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct replay_opts ro = {0};
	struct ios_trace_reader *r;
	struct ios_trace_info info;
	struct ios_trace_rec rec;
	const char *path;
	bool csv = false, do_replay = false;
	uint64_t n;
	int opt, err = 0, ret;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hp:j", longopts, NULL)) != -1) {
		switch (opt) {
		case 'C':
			csv = true;
			break;
		case 'R':
			do_replay = true;
			break;
		case 'p':
			ro.profile = optarg;
			break;
		case 'D':
			ro.device = optarg;
			break;
		case 'j':
			ro.json = true;
			break;
		case 'h':
			trace_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "pgiofs trace: unknown option \"%s\"\n", argv[optind - 1]);
			trace_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		trace_usage(stderr);
		return 2;
	}
	path = argv[optind];
	if (do_replay && csv) {
		fprintf(stderr, "pgiofs trace: --csv decodes, --replay replays: choose one\n");
		return 2;
	}
	if (!do_replay && (ro.profile || ro.device || ro.json)) {
		fprintf(stderr, "pgiofs trace: --profile, --device and --json need --replay\n");
		return 2;
	}
	if (do_replay)
		return replay(path, &ro);

	r = ios_trace_reader_open(path, &err);
	if (!r) {
		fprintf(stderr, "pgiofs trace: cannot open \"%s\": %s\n", path, strerror(-err));
		return 1;
	}
	ret = ios_trace_reader_info(r, &info);
	if (ret < 0) {
		fprintf(stderr, "pgiofs trace: %s\n", ios_trace_reader_error(r));
		ios_trace_reader_close(r);
		return 1;
	}
	ret = count_records(path, &n);
	print_header(path, &info, n, ret < 0, csv);
	while ((ret = ios_trace_read(r, &rec)) == 1)
		print_record(&rec, &info, csv);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "pgiofs trace: writing the output: %s\n", strerror(errno));
		ios_trace_reader_close(r);
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "pgiofs trace: %s\n", ios_trace_reader_error(r));
		ios_trace_reader_close(r);
		return 1;
	}
	ios_trace_reader_close(r);
	return 0;
}
