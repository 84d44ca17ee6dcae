/*
 * test_iostat.c -- unit tests of pgload's per-class I/O from `pgiofs stat`
 * (pgload/iostat.c): the strict reading of pgiofs.stats/1 JSON (good input,
 * every truncation, byte mutations, malformed and hostile input), counter
 * differences, finding the pgiofs mount of a path in a mountinfo file, and
 * running a fake pgiofs binary.  Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pgload_i.h"

/* A class object; CLS picks distinct values so that mix-ups show. */
static int class_json(char *buf, size_t cap, const char *name, int cls)
{
	return snprintf(buf, cap,
			"\"%s\":{\"read_ops\":%d,\"read_bytes\":%d,\"write_ops\":%d,"
			"\"write_bytes\":%d,\"sync_ops\":%d,\"errors\":0,\"merges\":0,"
			"\"ra_hit_bytes\":0,\"ra_wasted_bytes\":0,\"latency_ms\":{\"count\":3,"
			"\"avg\":1.763215,\"p50\":0.802815,\"p99\":4.128767,\"p999\":4.128767,"
			"\"max\":4.155204,\"queue_avg\":0.000000,\"service_avg\":1.763215,"
			"\"over_2s_pct\":0.0000,\"over_10s_pct\":0.0000}%s}",
			name, cls * 10 + 1, cls * 10 + 2, cls * 10 + 3, cls * 10 + 4, cls * 10 + 5,
			cls == 0   ? ",\"bytes_seen\":\"none\""
			: cls == 1 ? ",\"bytes_seen\":\"partial\""
				   : "");
}

/* good_json() -- a sample as `pgiofs stat --json` prints it. */
static char *good_json(void)
{
	static const char *names[] = {"wal", "xact", "heap", "index", "fsm",
				      "vm",  "temp", "meta", "other"};
	size_t cap = 16384;
	char *s = malloc(cap);
	size_t n = (size_t)snprintf(
	    s, cap,
	    "{\"schema\":\"pgiofs.stats/1\",\"mount\":\"/tmp/x \\\"q\\\" \\u00e9\","
	    "\"policy\":\"direct\",\"stats_enabled\":true,\"pid\":31287,\"time\":null,"
	    "\"cumulative\":true,\"interval_s\":0.033963,\"classes\":{");
	for (int k = 0; k < 9; k++) {
		if (k)
			s[n++] = ',';
		n += (size_t)class_json(s + n, cap - n, names[k], k);
	}
	n += (size_t)snprintf(s + n, cap - n, "},\"total\":{\"read_ops\":0}}\n");
	return s;
}

/* parse() -- parse exactly LEN bytes from a buffer of that size (ASan sees overreads). */
static int parse(const char *text, size_t len, struct pgl_io *io, char *err)
{
	char *b = malloc(len ? len : 1);
	memcpy(b, text, len);
	int r = pgl_io_parse(b, len, io, err, 256);
	free(b);
	return r;
}

static int parse_str(const char *text)
{
	struct pgl_io io;
	char err[256];
	return parse(text, strlen(text), &io, err);
}

/* replace() -- TEXT with the first FROM replaced by TO (a new string). */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	if (!at)
		return NULL;
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *s = malloc(n);
	snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return s;
}

static void check_bad(const char *good, const char *from, const char *to)
{
	char *s = replace(good, from, to);
	CHECK(s != NULL);
	if (!s)
		return;
	int r = parse_str(s);
	if (r != -EBADMSG)
		fprintf(stderr, "accepted: %s -> %s\n", from, to);
	CHECK(r == -EBADMSG);
	free(s);
}

static void test_parse(void)
{
	char *good = good_json();
	size_t len = strlen(good);
	struct pgl_io io;
	char err[256];
	CHECK(parse(good, len, &io, err) == 0);
	CHECK(io.v[0][PGL_IO_READ_OPS] == 1 && io.v[0][PGL_IO_SYNC_OPS] == 5);
	CHECK(io.v[2][PGL_IO_WRITE_BYTES] == 24); /* heap */
	CHECK(io.v[8][PGL_IO_READ_BYTES] == 82);  /* other */
	for (int k = 0; k < 9; k++) /* wal: "none", xact: "partial", the rest absent */
		CHECK(io.seen[k] == (k == 0   ? PGL_SEEN_NONE
				     : k == 1 ? PGL_SEEN_PARTIAL
					      : PGL_SEEN_ALL));

	/* every truncation is refused, and nothing is read past the end */
	for (size_t n = 0; n + 1 < len; n++) /* (the last byte is the newline) */
		CHECK(parse(good, n, &io, err) == -EBADMSG);

	/* byte mutations: never a crash; accepted ones keep sane values */
	static const char subst[] = "\"{}[],:0-9.e\\ ax\n";
	char *m = malloc(len);
	for (size_t i = 0; i < len; i++) {
		for (size_t j = 0; j < sizeof(subst) - 1; j++) {
			memcpy(m, good, len);
			m[i] = subst[j];
			(void)parse(m, len, &io, err);
		}
	}
	free(m);

	/* wrong or missing pieces */
	check_bad(good, "pgiofs.stats/1", "pgiofs.stats/2");
	check_bad(good, "\"schema\":\"pgiofs.stats/1\",", "");
	check_bad(good, "\"heap\"", "\"heapx\"");	    /* class missing */
	check_bad(good, "\"write_bytes\":24", "\"wb\":24"); /* counter missing */
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":-24");
	check_bad(good, "\"none\"", "\"never\""); /* bytes_seen: not a known value */
	check_bad(good, "\"partial\"", "3");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":2.4");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":24e3");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":024");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":\"24\"");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":18446744073709551616");
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":24,\"write_bytes\":25");
	check_bad(good, "\"policy\":\"direct\"", "\"policy\":direct");
	check_bad(good, "\"policy\":\"direct\"", "\"policy\":\"a\tb\"");
	check_bad(good, "\"policy\":\"direct\"", "\"policy\":\"\\x\"");
	check_bad(good, "\"policy\":\"direct\"", "\"policy\":\"\\u12\"");
	check_bad(good, "\"pid\":31287", "\"pid\":-");
	check_bad(good, "\"pid\":31287", "\"pid\":1.");
	check_bad(good, "\"time\":null", "\"time\":nul");
	check_bad(good, "\"stats_enabled\":true,", "\"stats_enabled\":true,,");
	check_bad(good, "}}\n", "}},\n");
	check_bad(good, "}}\n", "}} {}\n");
	CHECK(parse_str("") == -EBADMSG);
	CHECK(parse_str("[]") == -EBADMSG);
	CHECK(parse_str("{}") == -EBADMSG);
	CHECK(parse_str("{\"schema\":\"pgiofs.stats/1\"}") == -EBADMSG);
	CHECK(parse_str("{\"schema\":\"pgiofs.stats/1\",\"classes\":{}}") == -EBADMSG);

	/* the largest counter jansson reads (a signed 64-bit integer) fits;
	 * one more is refused, never wrapped */
	char *big = replace(good, "\"write_bytes\":24", "\"write_bytes\":9223372036854775807");
	CHECK(parse(big, strlen(big), &io, err) == 0 && io.v[2][PGL_IO_WRITE_BYTES] == INT64_MAX);
	free(big);
	check_bad(good, "\"write_bytes\":24", "\"write_bytes\":9223372036854775808");

	/* unknown members are skipped, at any level, with any value */
	char *extra =
	    replace(good, "\"policy\"",
		    "\"new\":[1,-2.5e-3,{\"a\":[true,false,null,\"\\n\"]},[]],\"policy\"");
	CHECK(parse(extra, strlen(extra), &io, err) == 0);
	char *extra2 = replace(extra, "\"classes\":{", "\"classes\":{\"future\":{\"x\":[]},");
	CHECK(parse(extra2, strlen(extra2), &io, err) == 0);
	char *extra3 = replace(extra2, "\"sync_ops\":25", "\"sync_ops\":25,\"new_ops\":{\"a\":1}");
	CHECK(parse(extra3, strlen(extra3), &io, err) == 0 && io.v[2][PGL_IO_SYNC_OPS] == 25);
	free(extra);
	free(extra2);
	free(extra3);

	/* the latency figures of each class; optional, but malformed ones are refused */
	CHECK(parse(good, len, &io, err) == 0 && io.has_lat);
	CHECK(io.lat[2][PGL_LAT_AVG] == 1.763215 && io.lat[2][PGL_LAT_P99] == 4.128767);
	CHECK(io.lat[8][PGL_LAT_MAX] == 4.155204 && io.lat[8][PGL_LAT_OVER_10S] == 0);
	char *nolat = replace(good, "\"p99\":4.128767,", "");
	CHECK(parse(nolat, strlen(nolat), &io, err) == 0 && !io.has_lat);
	free(nolat);
	check_bad(good, "\"p99\":4.128767", "\"p99\":-4.1");
	check_bad(good, "\"p99\":4.128767", "\"p99\":\"4\"");
	check_bad(good, "\"p99\":4.128767", "\"p99\":4.1,\"p99\":4.2");
	check_bad(good, "\"latency_ms\":{", "\"latency_ms\":[");

	/* the WAL segments made ahead: optional; a malformed member is taken
	 * as absent, not as a reason to refuse the sample */
	CHECK(parse(good, len, &io, err) == 0 && !io.has_walprep);
	char *wp = replace(good, "\"total\":{",
			   "\"wal_segments_ahead\":{\"setting\":-1,\"ahead\":4,\"made\":38,"
			   "\"reserved\":16,\"note\":\"\"},\"total\":{");
	CHECK(parse(wp, strlen(wp), &io, err) == 0 && io.has_walprep);
	CHECK(io.wal_made == 38 && io.wal_reserved == 16);
	char *wp2 = replace(wp, "\"made\":38", "\"made\":-38");
	CHECK(parse(wp2, strlen(wp2), &io, err) == 0 && !io.has_walprep && io.has_lat);
	char *wp3 = replace(wp, ",\"reserved\":16", "");
	CHECK(parse(wp3, strlen(wp3), &io, err) == 0 && !io.has_walprep);
	free(wp);
	free(wp2);
	free(wp3);

	/* deep nesting is refused, not recursed into without bound */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 64);
	size_t n = (size_t)sprintf(deep, "{\"schema\":\"pgiofs.stats/1\",\"x\":");
	memset(deep + n, '[', depth);
	memset(deep + n + depth, ']', depth);
	n += 2 * depth;
	deep[n++] = '}';
	CHECK(parse(deep, n, &io, err) == -EBADMSG);
	CHECK(strstr(err, "depth") != NULL && strstr(err, "at byte") != NULL);
	free(deep);
	free(good);
}

static void test_delta(void)
{
	struct pgl_io a, b, d;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.v[1][2] = 5;
	b.v[1][2] = 12;
	b.v[0][0] = 3;
	b.seen[0] = PGL_SEEN_NONE; /* WAL went into passthrough meanwhile */
	CHECK(pgl_io_delta(&a, &b, &d) == 0 && d.v[1][2] == 7 && d.v[0][0] == 3);
	CHECK(d.seen[0] == PGL_SEEN_NONE && d.seen[1] == PGL_SEEN_ALL);
	CHECK(pgl_io_delta(&b, &a, &d) == -ERANGE);
	/* the segments made ahead: differenced when both samples have them */
	CHECK(pgl_io_delta(&a, &b, &d) == 0 && !d.has_walprep);
	a.has_walprep = b.has_walprep = true;
	a.wal_made = 20, a.wal_reserved = 16;
	b.wal_made = 37, b.wal_reserved = 16;
	CHECK(pgl_io_delta(&a, &b, &d) == 0 && d.has_walprep);
	CHECK(d.wal_made == 17 && d.wal_reserved == 0);
	b.wal_made = 19;
	CHECK(pgl_io_delta(&a, &b, &d) == -ERANGE);
}

static char dir[] = "/tmp/pgload-test-iostat.XXXXXX";

static void write_file(const char *name, const char *text, mode_t mode)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void test_mount(void)
{
	char mi[256], mnt[256];
	snprintf(mi, sizeof(mi), "%s/mountinfo", dir);
	write_file("mountinfo",
		   "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		   "40 22 0:40 / /srv/pg rw,nosuid - fuse.pgiofs /srv/back rw,user_id=0\n"
		   "41 40 0:41 / /srv/pg/data/pg_wal rw master:3 - tmpfs tmpfs rw\n"
		   "42 22 0:42 / /mnt/my\\040disk rw - fuse.pgiofs /b rw\n"
		   "43 22 0:43 / /over rw - fuse.pgiofs /b rw\n"
		   "44 22 0:44 / /over rw - ext4 /dev/sdb rw\n"
		   "45 22 0:45 / /under rw - ext4 /dev/sdc rw\n"
		   "46 22 0:46 / /under rw - fuse.pgiofs /c rw\n"
		   "47 22 0:47 / /short\n",
		   0644);
	CHECK(pgl_io_find_mount("/srv/pg/data", mi, mnt, sizeof(mnt)) == 1 &&
	      strcmp(mnt, "/srv/pg") == 0);
	CHECK(pgl_io_find_mount("/srv/pg", mi, mnt, sizeof(mnt)) == 1);
	CHECK(pgl_io_find_mount("/srv/pgx/data", mi, mnt, sizeof(mnt)) == 0);
	CHECK(pgl_io_find_mount("/srv/pg/data/pg_wal/x", mi, mnt, sizeof(mnt)) == 0);
	CHECK(pgl_io_find_mount("/mnt/my disk/data", mi, mnt, sizeof(mnt)) == 1 &&
	      strcmp(mnt, "/mnt/my disk") == 0);
	CHECK(pgl_io_find_mount("/over/data", mi, mnt, sizeof(mnt)) == 0);
	CHECK(pgl_io_find_mount("/under/data", mi, mnt, sizeof(mnt)) == 1);
	CHECK(pgl_io_find_mount("/srv/pg/data", mi, mnt, 4) == -ENAMETOOLONG);
	CHECK(pgl_io_find_mount("/x", "/nonexistent/mountinfo", mnt, sizeof(mnt)) == -ENOENT);
	/* the real table: / is no pgiofs mount here */
	CHECK(pgl_io_find_mount("/", NULL, mnt, sizeof(mnt)) == 0);
}

static void test_sample(void)
{
	char bin[256], err[600];
	struct pgl_io io;
	char *good = good_json();
	char script[20000];
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n[ \"$1 $3\" = \"stat --json\" ] || exit 9\ncat <<'EOF'\n%sEOF\n",
		 good);
	write_file("good", script, 0755);
	write_file("fails", "#!/bin/sh\necho 'pgiofs: no such mount' >&2\nexit 3\n", 0755);
	write_file("garbage", "#!/bin/sh\necho '{\"schema\":\"other/1\"}'\n", 0755);
	write_file("huge", "#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\0' ' '\n", 0755);
	write_file("killed", "#!/bin/sh\nkill -9 $$\n", 0755);

	snprintf(bin, sizeof(bin), "%s/good", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) == 0);
	CHECK(io.v[2][PGL_IO_WRITE_BYTES] == 24);
	snprintf(bin, sizeof(bin), "%s/fails", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) < 0);
	CHECK(strstr(err, "exit status 3: pgiofs: no such mount") != NULL);
	snprintf(bin, sizeof(bin), "%s/garbage", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) == -EBADMSG);
	CHECK(strstr(err, "not schema pgiofs.stats/1") != NULL);
	snprintf(bin, sizeof(bin), "%s/huge", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) == -E2BIG);
	snprintf(bin, sizeof(bin), "%s/killed", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) < 0);
	CHECK(strstr(err, "signal 9") != NULL);
	snprintf(bin, sizeof(bin), "%s/absent", dir);
	CHECK(pgl_io_sample(bin, "/mnt", &io, err, sizeof(err)) < 0);
	CHECK(strstr(err, "exit status 127") != NULL);
	free(good);

	snprintf(bin, sizeof(bin), "%s/good", dir);
	char out[512];
	CHECK(pgl_find_sibling("pgiofs", bin, out, sizeof(out)) == 0 && strcmp(out, bin) == 0);
	snprintf(bin, sizeof(bin), "%s/absent", dir);
	CHECK(pgl_find_sibling("pgiofs", bin, out, sizeof(out)) == -ENOENT);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_delta();
	test_mount();
	test_sample();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failures++;
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	else
		printf("ok: iostat\n");
	return failures ? 1 : 0;
}
