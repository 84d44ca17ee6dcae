/*
 * stat.c -- `pgiofs stat MOUNTPOINT`: the statistics of a running pgiofs,
 * read over its control channel (control.c).
 *
 * The mount is found in /proc/self/mountinfo (a user the mount does not
 * admit cannot even stat() it), which gives the socket name and the mount's
 * owner; the daemon answering must be root or that owner, so no other user
 * can pose as it by binding the name first.  Snapshots come as raw structs
 * ("snapshot-raw"), so that interval samples are exact diffs with their own
 * percentiles; tables and JSON are then produced here by the same functions
 * the daemon would use.
 *
 * Results go to stdout, errors to stderr; exit 1 on error.
 */
#include "pgiofs_i.h"
#include "json.h"
#include "mountinfo.h"
#include "stats.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum stat_format { FMT_TABLE, FMT_JSON, FMT_OPENMETRICS };

struct stat_opts {
	const char *path; /* NULL: list the mounts */
	bool json;	  /* format == FMT_JSON */
	enum stat_format format;
	double interval;	    /* s; 0: one cumulative sample */
	long count;		    /* samples with --interval; 0: until interrupted */
	bool relations;		    /* --relations */
	const char *dsn;	    /* --dsn */
	long top;		    /* relations shown at most (0: all) */
	struct pfs_relnames *names; /* --dsn, or NULL */
	char mount[PATH_MAX];
	unsigned major, minor;
	long owner; /* the mount's user_id, -1 unknown */
};

struct sample {
	struct ios_stats_snapshot snap;
	char extra[PFS_CTL_EXTRA_MAX]; /* JSON members from the daemon */
};

static void stat_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: pgiofs stat MOUNTPOINT [INTERVAL [COUNT]] [--format table|json|openmetrics]\n"
	    "                   [--interval SECONDS] [--count N]\n"
	    "                   [--relations [--top N] [--dsn CONNINFO]]\n"
	    "       pgiofs stat    (no MOUNTPOINT: list the pgiofs mounts)\n"
	    "\n"
	    "Print the I/O statistics of the pgiofs daemon serving MOUNTPOINT.\n"
	    "INTERVAL and COUNT work as in iostat: `pgiofs stat /srv/pg 1 5`.\n"
	    "\n"
	    "  -f, --format FORMAT     table (the default), json (one object per sample,\n"
	    "                          schema pgiofs.stats/1), or openmetrics (the counters\n"
	    "                          since the mount as OpenMetrics text, for\n"
	    "                          node_exporter's textfile collector or a scrape)\n"
	    "  -j, --json              the same as --format json\n"
	    "  -i, --interval SECONDS  a sample every SECONDS: rates, latency and queue\n"
	    "                          depth of what happened in that interval\n"
	    "  -c, --count N           stop after N samples (with --interval)\n"
	    "  -r, --relations         also the relations with the most bytes read and\n"
	    "                          written (per interval with --interval)\n"
	    "  -t, --top N             that many relations (default 10; 0: all)\n"
	    "  -d, --dsn CONNINFO      name the relations (schema.relation, relkind) by\n"
	    "                          asking that PostgreSQL server (libpq; 5 s timeouts;\n"
	    "                          without it, or if it fails, relations show as oids)\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Without --interval: the counters since the mount, one row per class.\n"
	    "Root and users who can read the mount root may read the statistics.\n");
}

/* absolute() -- @path made absolute without following anything, "." and
 * ".." resolved by name (for a mount point the caller may not stat). */
static void absolute(const char *path, char *out, size_t len)
{
	char tmp[2 * PATH_MAX], *save = NULL, *part;
	size_t o = 0;

	if (path[0] == '/' || !getcwd(tmp, PATH_MAX))
		snprintf(tmp, sizeof(tmp), "%s", path);
	else
		snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "/%s", path);
	out[0] = '\0';
	for (part = strtok_r(tmp, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			char *slash = strrchr(out, '/');

			o = slash ? (size_t)(slash - out) : 0;
			out[o] = '\0';
			continue;
		}
		o += (size_t)snprintf(out + o, len - o, "/%s", part);
		if (o >= len)
			o = len - 1;
	}
	if (!out[0])
		snprintf(out, len, "/");
}

/* wal_mount_of() -- whether pgiofs mount @point (@major:@minor) is a WAL
 * mount (docs/pgiofs.md "WAL modes"): it has no control channel of its own
 * and lies in a pgiofs mount, whose daemon serves it; that mount into *@up. */
static bool wal_mount_of(const char *point, unsigned major, unsigned minor,
			 struct pfs_mount_info *up)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", point);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent || !pfs_control_refused(major, minor))
		return false;
	*slash = '\0';
	return pfs_find_mount(parent, false, up) == 0 && strcmp(up->fstype, "fuse.pgiofs") == 0 &&
	       !pfs_control_refused(up->major, up->minor);
}

/* find_pgiofs() -- the pgiofs mount holding o->path; 0 or 1 with a
 * message. */
static int find_pgiofs(struct stat_opts *o)
{
	char abs[PATH_MAX];
	struct pfs_mount_info m, up;

	if (!realpath(o->path, abs)) {
		if (errno == ENOENT || errno == ENOTDIR) {
			fprintf(stderr, "pgiofs stat: \"%s\": %s\n", o->path, strerror(errno));
			return 1;
		}
		absolute(o->path, abs, sizeof(abs)); /* e.g. EACCES on the mount itself */
	}
	if (pfs_find_mount(abs, false, &m) < 0) {
		fprintf(stderr, "pgiofs stat: cannot read /proc/self/mountinfo\n");
		return 1;
	}
	if (strcmp(m.fstype, "fuse.pgiofs") != 0) {
		fprintf(
		    stderr,
		    "pgiofs stat: \"%s\" is not a pgiofs mount (it is on the %s mount \"%s\")\n",
		    o->path, m.fstype, m.point);
		return 1;
	}
	/* a WAL mount answers through the mount it is in */
	if (wal_mount_of(m.point, m.major, m.minor, &up))
		m = up;
	snprintf(o->mount, sizeof(o->mount), "%s", m.point);
	o->major = m.major;
	o->minor = m.minor;
	o->owner = m.user_id;
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* read_line() -- up to "\n" (excluded) into @buf. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len) {
		int ret = read_all(fd, buf + got, 1);

		if (ret < 0) {
			buf[got] = '\0';
			return got ? -EPIPE : ret;
		}
		if (buf[got] == '\n') {
			buf[got] = '\0';
			return 0;
		}
		got++;
	}
	buf[got] = '\0';
	return -EMSGSIZE;
}

/* json_string_member() -- the value of string member @key in the JSON
 * text @json, unescaped into @out (enough for messages and paths). */
static bool json_string_member(const char *json, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p && json_str_read(p + strlen(pat), out, len);
}

/* ctl_ask() -- connect to the daemon, check who it is, send @request and
 * read the first line of the reply into @line (an error reply is printed).
 * Returns the connected descriptor, or -1 with a message. */
static int ctl_ask(const struct stat_opts *o, const char *request, char *line, size_t linelen)
{
	struct timeval tv = {PFS_CTL_TIMEOUT_S, 0};
	struct sockaddr_un sa;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	unsigned len = pfs_control_addr(o->major, o->minor, &sa);
	size_t rlen = strlen(request);
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "pgiofs stat: socket: %s\n", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr,
			"pgiofs stat: the pgiofs daemon of \"%s\" is not answering (control socket "
			"@" PFS_CTL_NAME_FMT ": %s); is it running, and a pgiofs that has `pgiofs "
			"stat`?\n",
			o->mount, o->major, o->minor, strerror(errno));
		goto fail;
	}
	/* the name is first come, first served: believe only root or the
	 * mount's owner */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 ||
	    (cr.uid != 0 && (o->owner < 0 || cr.uid != (uid_t)o->owner))) {
		fprintf(stderr,
			"pgiofs stat: the control socket of \"%s\" is held by uid %u, not by the "
			"mount's owner: not trusting it\n",
			o->mount, (unsigned)cr.uid);
		goto fail;
	}
	if (send(fd, request, rlen, MSG_NOSIGNAL) != (ssize_t)rlen) {
		fprintf(stderr, "pgiofs stat: cannot send to the daemon of \"%s\": %s\n", o->mount,
			strerror(errno));
		goto fail;
	}
	ret = read_line(fd, line, linelen);
	if (ret < 0) {
		fprintf(stderr, "pgiofs stat: no answer from the daemon of \"%s\": %s\n", o->mount,
			ret == -EAGAIN ? "timed out" : strerror(-ret));
		goto fail;
	}
	if (line[0] == '{') {
		char msg[4096];

		if (!json_string_member(line, "error", msg, sizeof(msg)))
			snprintf(msg, sizeof(msg), "%s", line);
		fprintf(stderr, "pgiofs stat: %s\n", msg); /* it names the mount */
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* too_new() -- the message for a daemon of another build. */
static int too_new(const struct stat_opts *o, const char *ver)
{
	fprintf(stderr,
		"pgiofs stat: the daemon of \"%s\" is pgiofs %s, whose statistics this "
		"pgiofs %s cannot read: use the `pgiofs` the mount was made with\n",
		o->mount, ver, PGIOFS_VERSION);
	return 1;
}

/* fetch() -- one snapshot from the daemon into @s; 0, or 1 with a message. */
static int fetch(const struct stat_opts *o, struct sample *s)
{
	char line[4096], ver[64], magic[64];
	int fd, nb;
	size_t size, elen;

	fd = ctl_ask(o, "snapshot-raw\n", line, sizeof(line));
	if (fd < 0)
		return 1;
	if (sscanf(line, "%63s %63s %d %zu %zu", magic, ver, &nb, &size, &elen) != 5 ||
	    strcmp(magic, PFS_CTL_RAW) != 0) {
		fprintf(stderr, "pgiofs stat: unexpected answer from the daemon of \"%s\"\n",
			o->mount);
		goto fail;
	}
	if (nb != IOS_STATS_NBUCKETS || size != sizeof(s->snap) || elen >= sizeof(s->extra)) {
		too_new(o, ver);
		goto fail;
	}
	if (read_all(fd, s->extra, elen) < 0 || read_all(fd, &s->snap, size) < 0) {
		fprintf(stderr, "pgiofs stat: the daemon of \"%s\" closed the connection early\n",
			o->mount);
		goto fail;
	}
	s->extra[elen] = '\0';
	close(fd);
	return 0;
fail:
	close(fd);
	return 1;
}

/* fetch_relations() -- the relations with activity into @l (l->rel to
 * free()); 0, or 1 with a message. */
static int fetch_relations(const struct stat_opts *o, struct ios_rel_list *l)
{
	char line[4096], ver[64], magic[64];
	size_t size, count;
	uint64_t untracked;
	int fd;

	memset(l, 0, sizeof(*l));
	fd = ctl_ask(o, "relations-raw\n", line, sizeof(line));
	if (fd < 0)
		return 1;
	if (sscanf(line, "%63s %63s %zu %zu %" SCNu64, magic, ver, &size, &count, &untracked) !=
		5 ||
	    strcmp(magic, PFS_CTL_RELS) != 0) {
		close(fd);
		fprintf(stderr, "pgiofs stat: unexpected answer from the daemon of \"%s\"\n",
			o->mount);
		return 1;
	}
	if (size != sizeof(*l->rel) || count > IOS_STATS_MAX_RELATIONS + 1) {
		close(fd);
		return too_new(o, ver);
	}
	l->rel = calloc(count ? count : 1, sizeof(*l->rel));
	if (!l->rel || read_all(fd, l->rel, size * count) < 0) {
		fprintf(stderr, "pgiofs stat: the daemon of \"%s\" closed the connection early\n",
			o->mount);
		free(l->rel);
		l->rel = NULL;
		close(fd);
		return 1;
	}
	close(fd);
	l->count = l->active = count;
	l->untracked = untracked;
	return 0;
}

/* ---- output ------------------------------------------------------------------ */

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

static void interval_header(void)
{
	printf("%-8s %-6s %9s %9s %9s %8s %8s %9s %9s %7s\n", "time", "class", "r/s", "w/s",
	       "sync/s", "rMB/s", "wMB/s", "avg_ms", "p99_ms", "aqu-sz");
}

/* interval_row() -- iostat-like: rates over the interval, latency of the
 * requests completed in it, and the average number of requests inside
 * pgiofs (queued or in service: total latency / interval, Little's law). */
static void interval_row(const char *when, const char *name, const struct ios_stats_class *c,
			 double secs)
{
	char p99[24];

	stats_fmt_quantile_ms(p99, sizeof(p99), (double)c->lat_p99_ns / 1e6);
	printf("%-8s %-6s %9.1f %9.1f %9.1f %8.2f %8.2f %9.3f %9s %7.2f\n", when, name,
	       per_s(c->read_ops, secs), per_s(c->write_ops, secs), per_s(c->sync_ops, secs),
	       per_s(c->read_bytes, secs) / 1e6, per_s(c->write_bytes, secs) / 1e6,
	       (double)c->lat_avg_ns / 1e6, p99,
	       secs > 0 ? (double)(c->queue_sum_ns + c->service_sum_ns) / 1e9 / secs : 0);
}

static void print_interval(const struct ios_stats_snapshot *d)
{
	double secs = (double)(d->time_ns - d->start_ns) / 1e9;
	char when[16];
	time_t now = time(NULL);
	struct tm tm;
	unsigned c;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	for (c = 0; c < IOS_NCLASS; c++) {
		const struct ios_stats_class *k = &d->cls[c];
		char name[16];

		/* "*": reads and writes of its passthrough files are not seen */
		snprintf(name, sizeof(name), "%s%s", ios_class_name((enum ios_class)c),
			 k->bytes_seen == IOS_SEEN_ALL ? "" : "*");
		if (k->read_ops || k->write_ops || k->sync_ops)
			interval_row(when, name, k, secs);
	}
	interval_row(when, "total", &d->total, secs);
}

/* json_u64_member() -- the value of number member @key in the object of
 * @json that starts at member @object ("" for the top level), 0 if none. */
static uint64_t json_u64_member(const char *json, const char *object, const char *key)
{
	char pat[64];
	const char *p = json;

	if (*object) {
		snprintf(pat, sizeof(pat), "\"%s\":{", object);
		p = strstr(json, pat);
		if (!p)
			return 0;
	}
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* print_lowered() -- ", NAME N (was W)" where pgiofs set the queue's NAME
 * (NAME_was in @o at least 0). */
static void print_lowered(json_t *o, const char *name)
{
	char was[48];

	snprintf(was, sizeof(was), "%s_was", name);
	if (json_integer_value(json_object_get(o, was)) >= 0)
		printf(", %s %" JSON_INTEGER_FORMAT " (was %" JSON_INTEGER_FORMAT ")", name,
		       json_integer_value(json_object_get(o, name)),
		       json_integer_value(json_object_get(o, was)));
}

/* print_devqueue() -- what files.device_queue did to the backing device's
 * block queue at mount (devqueue.c), from the "device_queue" member. */
static void print_devqueue(const struct sample *s)
{
	const char *p = strstr(s->extra, "\"device_queue\":{");
	json_t *o;

	if (!p || !(o = json_loads(p + strlen("\"device_queue\":"), JSON_DISABLE_EOF_CHECK, NULL)))
		return;
	printf("device queue (files.device_queue = %s): ",
	       json_string_value(json_object_get(o, "setting")));
	if (json_is_true(json_object_get(o, "set"))) {
		const char *was = json_string_value(json_object_get(o, "scheduler_was"));
		json_int_t wbt_was = json_integer_value(json_object_get(o, "wbt_lat_usec_was"));

		printf("%s: scheduler %s", json_string_value(json_object_get(o, "device")),
		       json_string_value(json_object_get(o, "scheduler")));
		if (was && *was)
			printf(" (was %s)", was);
		printf(", wbt_lat_usec %" JSON_INTEGER_FORMAT,
		       json_integer_value(json_object_get(o, "wbt_lat_usec")));
		if (wbt_was >= 0)
			printf(" (was %" JSON_INTEGER_FORMAT ")", wbt_was);
		if (json_integer_value(json_object_get(o, "async_depth")) >= 0)
			printf(", async_depth %" JSON_INTEGER_FORMAT,
			       json_integer_value(json_object_get(o, "async_depth")));
		if (json_integer_value(json_object_get(o, "async_depth_was")) >= 0)
			printf(" (was %" JSON_INTEGER_FORMAT ")",
			       json_integer_value(json_object_get(o, "async_depth_was")));
		print_lowered(o, "nr_requests");
		print_lowered(o, "max_sectors_kb");
		printf("; put back at unmount\n");
	} else {
		const char *note = json_string_value(json_object_get(o, "note"));

		printf("left as is%s%s\n", note && *note ? ": " : "", note ? note : "");
	}
	json_decref(o);
}

/* print_walprep() -- the WAL segments made ahead (walprep.c). */
static void print_walprep(const struct sample *s)
{
	const char *p = strstr(s->extra, "\"wal_segments_ahead\":{");
	json_t *o;
	json_int_t ahead;

	if (!p ||
	    !(o = json_loads(p + strlen("\"wal_segments_ahead\":"), JSON_DISABLE_EOF_CHECK, NULL)))
		return;
	ahead = json_integer_value(json_object_get(o, "ahead"));
	if (ahead > 0) {
		const char *note = json_string_value(json_object_get(o, "note"));
		json_int_t reserve = json_integer_value(json_object_get(o, "reserve"));
		char quiet[64] = "", quietly[64] = "";

		if (reserve > 0) { /* files.wal_segments_reserve */
			snprintf(quiet, sizeof(quiet),
				 ", %" JSON_INTEGER_FORMAT " while WAL is quiet", reserve);
			snprintf(quietly, sizeof(quietly), "; %" JSON_INTEGER_FORMAT " while quiet",
				 json_integer_value(json_object_get(o, "reserved")));
		}
		printf("WAL segments made ahead (files.wal_segments_ahead = %" JSON_INTEGER_FORMAT
		       "): %" JSON_INTEGER_FORMAT " at a time%s, %" JSON_INTEGER_FORMAT
		       " made (%.0f MiB%s), %" JSON_INTEGER_FORMAT
		       " made by PostgreSQL itself, %" JSON_INTEGER_FORMAT
		       " not made for want of space, %" JSON_INTEGER_FORMAT " errors%s%s\n",
		       json_integer_value(json_object_get(o, "setting")), ahead, quiet,
		       json_integer_value(json_object_get(o, "made")),
		       (double)json_integer_value(json_object_get(o, "bytes")) / 1048576.0, quietly,
		       json_integer_value(json_object_get(o, "missed")),
		       json_integer_value(json_object_get(o, "skipped")),
		       json_integer_value(json_object_get(o, "errors")), note && *note ? ": " : "",
		       note ? note : "");
	}
	json_decref(o);
}

/* print_space() -- files.space_guard_mb (space.c): whether writes go
 * through one by one for want of space. */
static void print_space(const struct sample *s)
{
	const char *p = strstr(s->extra, "\"space_guard\":{");
	json_t *o;

	if (!p || !(o = json_loads(p + strlen("\"space_guard\":"), JSON_DISABLE_EOF_CHECK, NULL)))
		return;
	if (json_is_true(json_object_get(o, "on"))) {
		json_int_t cap = json_integer_value(json_object_get(o, "dirty_cap_bytes"));
		const char *note = json_string_value(json_object_get(o, "note"));

		printf("space guard (files.space_guard_mb = %" JSON_INTEGER_FORMAT
		       ", %.0f MiB on this file system): %s, %.0f MiB free"
		       "; on %" JSON_INTEGER_FORMAT " times, %" JSON_INTEGER_FORMAT
		       " writes went through",
		       json_integer_value(json_object_get(o, "setting_mb")),
		       (double)json_integer_value(json_object_get(o, "guard_bytes")) / 1048576.0,
		       json_is_true(json_object_get(o, "low")) ? "ON, writes go through one by one"
							       : "off",
		       (double)json_integer_value(json_object_get(o, "free_bytes")) / 1048576.0,
		       json_integer_value(json_object_get(o, "entered")),
		       json_integer_value(json_object_get(o, "written_through")));
		if (cap > 0)
			printf("; the mount's dirty limit held at %.0f MiB",
			       (double)cap / 1048576.0);
		printf("%s%s\n", note && *note ? "; " : "", note ? note : "");
	}
	json_decref(o);
}

/* print_inodes() -- how the daemon keeps hold of the files the kernel
 * knows: file handles and a descriptor cache, or a descriptor each. */
static void print_inodes(const struct sample *s)
{
	/* misses: descriptors opened from handles, opens: files */
	uint64_t hits = json_u64_member(s->extra, "inode_fds", "hits");
	uint64_t misses = json_u64_member(s->extra, "inode_fds", "misses") +
			  json_u64_member(s->extra, "inode_fds", "opens");
	char note[512] = "";
	const char *p = strstr(s->extra, "\"inode_fds\":{");

	if (!p)
		return;
	if (strstr(p, "\"handles\":true")) {
		printf("inodes: %" PRIu64 " known, by file handles; descriptor cache %" PRIu64
		       " of at most %" PRIu64 " (files.inode_fds",
		       json_u64_member(s->extra, "inode_fds", "inodes"),
		       json_u64_member(s->extra, "inode_fds", "cached"),
		       json_u64_member(s->extra, "inode_fds", "limit"));
		if (json_u64_member(s->extra, "inode_fds", "limit") <
		    json_u64_member(s->extra, "inode_fds", "setting"))
			printf(" %" PRIu64 ", capped at a quarter of the open-files limit",
			       json_u64_member(s->extra, "inode_fds", "setting"));
		printf("), hit rate %.1f%% of %" PRIu64 ", %" PRIu64 " evicted, %" PRIu64
		       " files opened from their handles, %" PRIu64 " stale handles; %" PRIu64
		       " descriptors held (roots, files without handles)\n",
		       hits + misses ? 100.0 * (double)hits / (double)(hits + misses) : 100.0,
		       hits + misses, json_u64_member(s->extra, "inode_fds", "evictions"),
		       json_u64_member(s->extra, "inode_fds", "opens"),
		       json_u64_member(s->extra, "inode_fds", "stale"),
		       json_u64_member(s->extra, "inode_fds", "held"));
		return;
	}
	json_string_member(p, "note", note, sizeof(note));
	printf("inodes: %" PRIu64 " known, each holding a descriptor (%" PRIu64
	       " held): no file handles (%s), so the daemon's open-files limit caps the files "
	       "known and open at once\n",
	       json_u64_member(s->extra, "inode_fds", "inodes"),
	       json_u64_member(s->extra, "inode_fds", "held"), note);
}

/* print_modes() -- how WAL reaches the backing store, and the write cache. */
static void print_modes(const struct sample *s)
{
	char wal[32] = "?", note[512] = "", walm[1024] = "", why[512] = "", ring[512] = "";
	char mode[8] = "";
	const char *p;

	json_string_member(s->extra, "wal_mode", wal, sizeof(wal));
	json_string_member(s->extra, "wal_note", note, sizeof(note));
	json_string_member(s->extra, "wal_mounts", walm, sizeof(walm));
	json_string_member(s->extra, "backing_note", why, sizeof(why));
	printf("WAL %s, write-back cache %s", wal,
	       strstr(s->extra, "\"writeback_cache\":true") ? "on" : "off");
	if (json_u64_member(s->extra, "write_cache", "writes"))
		printf("; write cache %.1f of %.1f MiB held (peak %.1f), %" PRIu64
		       " writes, %" PRIu64 " waited for room, %" PRIu64 " failed",
		       (double)json_u64_member(s->extra, "write_cache", "bytes") / 1048576,
		       (double)json_u64_member(s->extra, "write_cache", "limit_bytes") / 1048576,
		       (double)json_u64_member(s->extra, "write_cache", "peak_bytes") / 1048576,
		       json_u64_member(s->extra, "write_cache", "writes"),
		       json_u64_member(s->extra, "write_cache", "waits"),
		       json_u64_member(s->extra, "write_cache", "errors"));
	printf("\n");
	if (*walm)
		printf("WAL mounts: %s\n", walm);
	json_string_member(s->extra, "uring_note", ring, sizeof(ring));
	if (strstr(s->extra, "\"uring\":true"))
		printf("requests over io_uring (%s): %" PRIu64 " so far\n", ring,
		       json_u64_member(s->extra, "", "uring_requests"));
	else if (*ring)
		printf("requests over /dev/fuse: %s\n", ring);
	if (*why)
		printf("backing files %s (%s)%s\n",
		       strstr(s->extra, "\"backing_direct\":true") ? "O_DIRECT" : "buffered", why,
		       strstr(s->extra, "\"data_inline\":true")
			   ? "; data files' requests run at arrival (iosched.data_inline)"
			   : "");
	if (json_u64_member(s->extra, "checkpoint_writeback", "max_kb"))
		printf("checkpoint writeback (files written up to %" PRIu64 " KiB): %" PRIu64
		       " fsyncs of the checkpointer started the writeback of %" PRIu64
		       " relation files; %" PRIu64 " larger ones left to their own fsync\n",
		       json_u64_member(s->extra, "checkpoint_writeback", "max_kb"),
		       json_u64_member(s->extra, "checkpoint_writeback", "starts"),
		       json_u64_member(s->extra, "checkpoint_writeback", "files"),
		       json_u64_member(s->extra, "checkpoint_writeback", "large"));
	if ((p = strstr(s->extra, "\"drop_behind\":{\"mode\":\"")) &&
	    sscanf(p, "\"drop_behind\":{\"mode\":\"%7[a-z]\"", mode) == 1 && strcmp(mode, "no")) {
		uint64_t refused = json_u64_member(s->extra, "drop_behind", "refused_files");
		int64_t other = (int64_t)json_u64_member(s->extra, "drop_behind", "other_mb");

		printf("cached once (files.drop_behind = %s: relation files%s, ", mode,
		       strstr(p, "\"relations\":true")
			   ? ""
			   : " read, not written (rotational backing device)");
		if (other >= 0)
			printf("other files past %" PRId64 " MiB", other);
		else
			printf("no other files");
		printf("): %.1f MiB written, %.1f MiB read",
		       json_u64_member(s->extra, "drop_behind", "bytes") / 1048576.0,
		       json_u64_member(s->extra, "drop_behind", "read_bytes") / 1048576.0);
		if (refused)
			printf("; %" PRIu64 " files whose backing file system refused it", refused);
		printf("\n");
	}
	print_inodes(s);
	print_devqueue(s);
	print_walprep(s);
	print_space(s);
	if (*note)
		printf("note: %s\n", note);
}

/* print_config() -- the profile named at mount and the tunables that
 * differ from their defaults. */
static void print_config(const struct sample *s)
{
	char profile[PATH_MAX] = "", changed[2048] = "";

	json_string_member(s->extra, "profile", profile, sizeof(profile));
	json_string_member(s->extra, "changed", changed, sizeof(changed));
	printf("profile %s; tunables changed from their defaults: %s\n",
	       *profile ? profile : "none (the defaults)", *changed ? changed : "none");
}

static void print_cumulative(const struct stat_opts *o, const struct sample *s)
{
	char policy[64] = "?", device[32] = "?", backing[PATH_MAX] = "?";

	json_string_member(s->extra, "policy", policy, sizeof(policy));
	json_string_member(s->extra, "device", device, sizeof(device));
	json_string_member(s->extra, "backing", backing, sizeof(backing));
	printf("pgiofs %s (backing %s, policy %s, device %s): %.1f s since mount%s\n", o->mount,
	       backing, policy, device, (double)(s->snap.time_ns - s->snap.start_ns) / 1e9,
	       strstr(s->extra, "\"stats_enabled\":false") ? " (statistics disabled: "
							     "[stats] enabled = no)"
							   : "");
	print_config(s);
	print_modes(s);
	ios_stats_print_table(stdout, &s->snap);
}

/* name_relations() -- cut @l to the top N and name what is left (--dsn);
 * why names are missing, if they are, as a JSON member into @member (""
 * otherwise) and on stderr. */
static void name_relations(const struct stat_opts *o, struct ios_rel_list *l, char *member,
			   size_t len)
{
	char note[1024], quoted[2100];

	member[0] = '\0';
	ios_rel_top(l, (size_t)o->top);
	if (!o->names || pfs_relnames_resolve(o->names, l, note, sizeof(note)) == 0)
		return;
	fprintf(stderr, "pgiofs stat: note: relation names incomplete: %s\n", note);
	json_str_format(quoted, sizeof(quoted), note);
	snprintf(member, len, ",\"relation_names_error\":%s", quoted);
}

/* print_relations() -- the relation table of a text report. */
static void print_relations(const struct ios_rel_list *l, const char *names_member)
{
	printf("\n");
	if (names_member[0])
		printf("(relation names incomplete: see the note on stderr)\n");
	ios_stats_print_relations(stdout, l);
}

/* dup_relations() -- a copy of @l (rel to free()); 0 or 1 with a message. */
static int dup_relations(const struct ios_rel_list *l, struct ios_rel_list *out)
{
	*out = *l;
	out->rel = malloc((l->count ? l->count : 1) * sizeof(*l->rel));
	if (!out->rel) {
		fprintf(stderr, "pgiofs stat: out of memory\n");
		return 1;
	}
	memcpy(out->rel, l->rel, l->count * sizeof(*l->rel));
	return 0;
}

/* sleep_until() -- CLOCK_MONOTONIC @ns. */
static void sleep_until(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int run_intervals(const struct stat_opts *o, struct sample *a, struct sample *b)
{
	struct ios_stats_snapshot *d = malloc(sizeof(*d));
	uint64_t step = (uint64_t)(o->interval * 1e9), next;
	char extra[sizeof(a->extra) + 2300];
	char names[2200];
	struct ios_rel_list prev = {0}, cur = {0}, diff = {0};
	long n;
	int ret = 0;

	if (!d) {
		fprintf(stderr, "pgiofs stat: out of memory\n");
		return 1;
	}
	if (fetch(o, a) || (o->relations && fetch_relations(o, &prev))) {
		free(d);
		return 1;
	}
	if (!o->json)
		interval_header();
	next = ios_now_ns();
	for (n = 1; o->count == 0 || n <= o->count; n++) {
		next += step;
		sleep_until(next);
		ret = fetch(o, b);
		if (ret)
			break;
		if (b->snap.start_ns != a->snap.start_ns) {
			fprintf(stderr,
				"pgiofs stat: the statistics of \"%s\" were reset (was it "
				"mounted again?)\n",
				o->mount);
			ret = 1;
			break;
		}
		ios_stats_snapshot_diff(&a->snap, &b->snap, d);
		names[0] = '\0';
		if (o->relations) {
			ret = fetch_relations(o, &cur) || dup_relations(&cur, &diff);
			if (ret)
				break;
			ios_rel_diff(&prev, &diff);
			name_relations(o, &diff, names, sizeof(names));
			free(prev.rel);
			prev = cur;
			cur.rel = NULL;
		}
		if (o->json) {
			snprintf(extra, sizeof(extra), "%s,\"sample\":%ld%s", b->extra, n, names);
			ios_stats_write_json_rels(stdout, d, extra, o->relations ? &diff : NULL);
		} else {
			print_interval(d);
			if (o->relations)
				print_relations(&diff, names);
		}
		free(diff.rel);
		diff.rel = NULL;
		fflush(stdout);
		memcpy(a, b, sizeof(*a));
	}
	free(prev.rel);
	free(cur.rel);
	free(d);
	return ret;
}

/* parse_interval() / parse_count() -- the sampling options (@what names
 * the option or argument in the message). */
static int parse_interval(struct stat_opts *o, const char *arg, const char *what)
{
	char *end;

	errno = 0;
	o->interval = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(o->interval) || o->interval < 0.01 ||
	    o->interval > 86400) {
		fprintf(stderr,
			"pgiofs stat: %s \"%s\": must be a number of seconds between 0.01 and "
			"86400\n",
			what, arg);
		return 1;
	}
	return 0;
}

static int parse_count(struct stat_opts *o, const char *arg, const char *what)
{
	char *end;

	errno = 0;
	o->count = strtol(arg, &end, 10);
	if (errno || end == arg || *end || o->count < 1) {
		fprintf(stderr, "pgiofs stat: %s \"%s\": must be a whole number of at least 1\n",
			what, arg);
		return 1;
	}
	return 0;
}

static int parse_stat_args(struct stat_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"interval", required_argument, NULL, 'i'},
	    {"format", required_argument, NULL, 'f'},
	    {"count", required_argument, NULL, 'c'},
	    {"relations", no_argument, NULL, 'r'},
	    {"top", required_argument, NULL, 't'},
	    {"dsn", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ji:c:rt:d:hf:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			o->format = FMT_JSON;
			break;
		case 'f':
			if (strcmp(optarg, "table") == 0) {
				o->format = FMT_TABLE;
			} else if (strcmp(optarg, "json") == 0) {
				o->format = FMT_JSON;
			} else if (strcmp(optarg, "openmetrics") == 0) {
				o->format = FMT_OPENMETRICS;
			} else {
				fprintf(stderr,
					"pgiofs stat: --format \"%s\": must be table, json or "
					"openmetrics\n",
					optarg);
				return 1;
			}
			break;
		case 'i':
			if (parse_interval(o, optarg, "--interval"))
				return 1;
			break;
		case 'c':
			if (parse_count(o, optarg, "--count"))
				return 1;
			break;
		case 'r':
			o->relations = true;
			break;
		case 't':
			errno = 0;
			o->top = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->top < 0 ||
			    o->top > IOS_STATS_MAX_RELATIONS + 1) {
				fprintf(stderr,
					"pgiofs stat: --top \"%s\": must be a whole number "
					"from 0 (all) to %d\n",
					optarg, IOS_STATS_MAX_RELATIONS + 1);
				return 1;
			}
			break;
		case 'd':
			o->dsn = optarg;
			break;
		case 'h':
			stat_usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "pgiofs stat: unknown option or missing argument \"%s\"\n",
				argv[optind - 1]);
			fprintf(stderr, "Try 'pgiofs stat --help'.\n");
			return 1;
		}
	}
	if (argc - optind > 3) {
		fprintf(stderr,
			"pgiofs stat: expected MOUNTPOINT [INTERVAL [COUNT]], got %d "
			"arguments\n",
			argc - optind);
		fprintf(stderr, "Try 'pgiofs stat --help'.\n");
		return 1;
	}
	if (argc - optind >= 2) { /* iostat's positional INTERVAL [COUNT] */
		if (o->interval > 0 || o->count) {
			fprintf(stderr, "pgiofs stat: an INTERVAL argument and --interval or "
					"--count: give one or the other\n");
			return 1;
		}
		if (parse_interval(o, argv[optind + 1], "INTERVAL") ||
		    (argc - optind == 3 && parse_count(o, argv[optind + 2], "COUNT")))
			return 1;
	}
	o->json = o->format == FMT_JSON;
	if (o->format == FMT_OPENMETRICS && (o->interval > 0 || o->relations)) {
		fprintf(stderr, "pgiofs stat: --format openmetrics prints the counters since the "
				"mount once: no INTERVAL, --interval or --relations\n");
		return 1;
	}
	if (argc == optind) { /* no MOUNTPOINT: the list of mounts */
		if (o->interval > 0 || o->relations || o->format == FMT_OPENMETRICS) {
			fprintf(stderr, "pgiofs stat: without a MOUNTPOINT it lists the pgiofs "
					"mounts, with no other option than --format json\n");
			return 1;
		}
		o->path = NULL;
		return 0;
	}
	if ((o->dsn || o->top != 10) && !o->relations) {
		fprintf(stderr, "pgiofs stat: --top and --dsn need --relations\n");
		return 1;
	}
	if (o->count && o->interval == 0) {
		fprintf(stderr, "pgiofs stat: --count needs --interval\n");
		return 1;
	}
	o->path = argv[optind];
	return 0;
}

/* report_once() -- the counters since the mount (and the relations). */
/* openmetrics_label() -- NAME="VALUE" with VALUE escaped as OpenMetrics
 * wants (backslash, double quote, newline). */
static void openmetrics_label(char *out, size_t len, const char *name, const char *value)
{
	size_t n = (size_t)snprintf(out, len, "%s=\"", name);

	for (; *value && n + 3 < len; value++) {
		if (*value == '\\' || *value == '"')
			out[n++] = '\\';
		if (*value == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
			continue;
		}
		out[n++] = *value;
	}
	snprintf(out + n, len - n, "\"");
}

static int report_once(const struct stat_opts *o, struct sample *s)
{
	struct ios_rel_list l = {0};
	char names[2200], extra[sizeof(s->extra) + sizeof(names)];

	names[0] = '\0';
	if (fetch(o, s) || (o->relations && fetch_relations(o, &l)))
		return 1;
	if (o->relations)
		name_relations(o, &l, names, sizeof(names));
	if (o->format == FMT_OPENMETRICS) {
		char label[2 * PATH_MAX + 16];

		openmetrics_label(label, sizeof(label), "mount", o->mount);
		ios_stats_write_openmetrics(stdout, &s->snap, label);
	} else if (o->json) {
		snprintf(extra, sizeof(extra), "%s%s", s->extra, names);
		ios_stats_write_json_rels(stdout, &s->snap, extra, o->relations ? &l : NULL);
	} else {
		print_cumulative(o, s);
		if (o->relations)
			print_relations(&l, names);
	}
	free(l.rel);
	return 0;
}

struct list_ctx {
	struct stat_opts *o;
	struct sample *s;
	int found, failed;
};

/* list_one() -- a line (or JSON object) for one pgiofs mount. */
static int list_one(const struct mountinfo *m, void *arg)
{
	struct list_ctx *l = arg;
	struct stat_opts *o = l->o;
	struct pfs_mount_info up;
	const char *uid;
	char backing[PATH_MAX] = "?", profile[PATH_MAX] = "", policy[64] = "?", wal[32] = "?";

	if (strcmp(m->fstype, "fuse.pgiofs") != 0)
		return 0;
	snprintf(o->mount, sizeof(o->mount), "%s", m->point);
	o->major = m->major;
	o->minor = m->minor;
	uid = strstr(m->super, "user_id=");
	o->owner = uid && (uid == m->super || uid[-1] == ',') ? strtol(uid + 8, NULL, 10) : -1;
	if (!l->found++ && !o->json)
		printf("%-32s %-32s %-14s %-14s %-11s %10s %8s\n", "mount", "backing", "profile",
		       "policy", "wal_mode", "uptime_s", "pid");
	if (wal_mount_of(m->point, m->major, m->minor, &up)) {
		if (o->json) {
			printf("{\"mount\":");
			json_str_write(stdout, m->point);
			printf(",\"wal_mount_of\":");
			json_str_write(stdout, up.point);
			printf("}\n");
		} else
			printf("%-32s (a WAL mount of %s, served by its daemon)\n", m->point,
			       up.point);
		return 0;
	}
	if (fetch(o, l->s)) { /* the reason is on stderr */
		l->failed++;
		return 0;
	}
	if (o->json) {
		printf("{%s}\n", l->s->extra);
		return 0;
	}
	json_string_member(l->s->extra, "backing", backing, sizeof(backing));
	json_string_member(l->s->extra, "profile", profile, sizeof(profile));
	json_string_member(l->s->extra, "policy", policy, sizeof(policy));
	json_string_member(l->s->extra, "wal_mode", wal, sizeof(wal));
	printf("%-32s %-32s %-14s %-14s %-11s %10.0f %8" PRIu64 "\n", o->mount, backing,
	       *profile ? profile : "-", policy, wal,
	       (double)(l->s->snap.time_ns - l->s->snap.start_ns) / 1e9,
	       json_u64_member(l->s->extra, "", "pid"));
	return 0;
}

/* list_mounts() -- `pgiofs stat` without a mount point: every pgiofs mount
 * of this mount namespace, with its backing directory, configuration and
 * daemon.  Exits 1 if a daemon did not answer. */
static int list_mounts(struct stat_opts *o)
{
	struct list_ctx l = {o, calloc(1, sizeof(struct sample)), 0, 0};
	int ret;

	if (!l.s) {
		fprintf(stderr, "pgiofs stat: out of memory\n");
		return 1;
	}
	ret = mountinfo_each(NULL, list_one, &l);
	free(l.s);
	if (ret < 0) {
		fprintf(stderr, "pgiofs stat: cannot read /proc/self/mountinfo: %s\n",
			strerror(-ret));
		return 1;
	}
	if (!l.found && !o->json)
		printf("no pgiofs mounts\n");
	return l.failed ? 1 : 0;
}

int pfs_stat_main(int argc, char **argv)
{
	struct stat_opts o;
	struct sample *s;
	int ret;

	memset(&o, 0, sizeof(o));
	o.top = 10;
	if (parse_stat_args(&o, argc, argv))
		return 1;
	if (!o.path)
		return list_mounts(&o);
	if (find_pgiofs(&o))
		return 1;
	if (o.dsn && !(o.names = pfs_relnames_create(o.dsn))) {
		fprintf(stderr, "pgiofs stat: out of memory\n");
		return 1;
	}
	s = calloc(2, sizeof(*s));
	if (!s) {
		fprintf(stderr, "pgiofs stat: out of memory\n");
		return 1;
	}
	if (o.interval > 0) {
		ret = run_intervals(&o, &s[0], &s[1]);
	} else {
		ret = report_once(&o, &s[0]);
	}
	pfs_relnames_destroy(o.names);
	free(s);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "pgiofs stat: cannot write the output: %s\n", strerror(errno));
		return 1;
	}
	return ret;
}
