/*
 * trace.c -- `pgiofs trace FILE [--csv]`: decode a trace recorded with
 * `pgiofs --trace FILE` (the format is in iosched.h, "traces").
 *
 * The header line gives the start time and the record count, so the file
 * is read twice: once to count, once to print; memory stays bounded however
 * long the trace.  A truncated or corrupt trace prints every record before
 * the damage, then the reader's message (file, byte offset, reason) on
 * stderr, and exits 1.
 *
 * Results go to stdout, errors to stderr; exit 1 on error, 2 on usage.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void trace_usage(FILE *out)
{
	fprintf(out, "Usage: pgiofs trace FILE [--csv]\n"
		     "\n"
		     "Decode a trace recorded with `pgiofs --trace FILE`: a header line (start\n"
		     "time, record count), then one line per request.  With --csv, a header row\n"
		     "time_s,class,dir,file,offset,len,queue_us,service_us,pid,result and one\n"
		     "row per request; time_s is seconds since the trace started.\n");
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
		printf("time_s,class,dir,file,offset,len,queue_us,service_us,pid,result\n");
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

	if (csv) {
		printf("%.6f,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32
		       ",%" PRIu32 ",%" PRId32 "\n",
		       rel_seconds(rec, info), ios_class_name((enum ios_class)rec->cls), dir,
		       rec->file_id, rec->off, rec->len, rec->queue_us, rec->service_us, rec->pid,
		       rec->result);
		return;
	}
	if (rec->dir == IOS_SYNC && (rec->flags & IOS_TRACE_F_DATASYNC))
		dir = "dsync";
	printf("%12.6f %-5s %-5s file %-10" PRIu64 " off %-12" PRIu64 " len %-8" PRIu32
	       " queue %6" PRIu32 "us service %6" PRIu32 "us pid %-7" PRIu32 " result %" PRId32
	       "\n",
	       rel_seconds(rec, info), ios_class_name((enum ios_class)rec->cls), dir, rec->file_id,
	       rec->off, rec->len, rec->queue_us, rec->service_us, rec->pid, rec->result);
}

int pfs_trace_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"csv", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct ios_trace_reader *r;
	struct ios_trace_info info;
	struct ios_trace_rec rec;
	const char *path;
	bool csv = false;
	uint64_t n;
	int opt, err = 0, ret;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'C':
			csv = true;
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
