/*
 * iostat.c -- per-class I/O of a phase from `pgiofs stat MOUNTPOINT --json`.
 *
 * When the data directory is on a pgiofs mount, `pgload run` takes a
 * snapshot of the daemon's cumulative counters before and after each phase
 * and reports the difference.  This file finds the mount containing a path
 * (/proc/self/mountinfo, file system type "fuse.pgiofs"), finds the pgiofs
 * binary, runs `pgiofs stat MNT --json` with a time limit, and reads the
 * few numbers it needs from the output (schema pgiofs.stats/1, docs/stats.md).
 *
 * The JSON is read with jansson, strictly: anything that is not one
 * well-formed JSON object (duplicate members included), not schema
 * pgiofs.stats/1, or lacks one of the needed fields is refused.  Members it
 * does not know are ignored, as the schema's compatibility rules require.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pgload_i.h"

const char *const pgl_io_class_names[PGL_IO_NCLASS] = {
    "wal", "xact", "heap", "index", "fsm", "vm", "temp", "meta", "other",
};
const char *const pgl_io_field_names[PGL_IO_NFIELD] = {
    "read_ops", "read_bytes", "write_ops", "write_bytes", "sync_ops",
};

const char *const pgl_lat_field_names[PGL_LAT_N] = {
    "avg", "p99", "max", "over_2s_pct", "over_10s_pct",
};

#define MAX_OUTPUT	(1 << 20) /* bytes of `pgiofs stat --json` accepted */
#define STAT_TIMEOUT_MS 10000	  /* a `pgiofs stat` that takes longer is killed */
#define STATS_SCHEMA	"pgiofs.stats/1"

/* ---- reading the JSON (jansson) ------------------------------------------- */

/* counter() -- member NAME of OBJ, a non-negative integer, into OUT. */
static const char *counter(json_t *obj, const char *name, uint64_t *out)
{
	json_t *v = json_object_get(obj, name);

	if (!v)
		return "lacks a counter";
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return "has a counter that is not a non-negative integer";
	*out = (uint64_t)json_integer_value(v);
	return NULL;
}

const char *const pgl_io_seen_names[3] = {
    [PGL_SEEN_ALL] = "all", [PGL_SEEN_PARTIAL] = "partial", [PGL_SEEN_NONE] = "none"};

/* seen() -- the optional "bytes_seen" member of a class into *OUT; NULL or
 * the reason it is malformed. */
static const char *seen(json_t *cls, unsigned char *out)
{
	json_t *v = json_object_get(cls, "bytes_seen");

	*out = PGL_SEEN_ALL;
	if (!v)
		return NULL;
	for (unsigned char i = 0; json_is_string(v) && i < 3; i++)
		if (strcmp(json_string_value(v), pgl_io_seen_names[i]) == 0) {
			*out = i;
			return NULL;
		}
	return "has a bytes_seen that is not \"all\", \"partial\" or \"none\"";
}

/* latency() -- the optional "latency_ms" object of a class into L; false if
 * absent or incomplete, NULL or the reason it is malformed into *WHY. */
static bool latency(json_t *cls, double *l, const char **why)
{
	json_t *lat = json_object_get(cls, "latency_ms");
	bool all = true;

	if (!lat)
		return false;
	if (!json_is_object(lat)) {
		*why = "has a latency_ms that is not an object";
		return false;
	}
	for (int f = 0; f < PGL_LAT_N; f++) {
		json_t *v = json_object_get(lat, pgl_lat_field_names[f]);

		if (!v) {
			all = false;
			continue;
		}
		if (!json_is_number(v) || json_number_value(v) < 0) {
			*why = "has a latency figure that is not a non-negative number";
			return false;
		}
		l[f] = json_number_value(v);
	}
	return all;
}

/* walprep() -- the segments made ahead (OBJ, "wal_segments_ahead", may be
 * NULL) into IO: both counters, or has_walprep false. */
static void walprep(json_t *obj, struct pgl_io *io)
{
	io->has_walprep = json_is_object(obj) && !counter(obj, "made", &io->wal_made) &&
			  !counter(obj, "reserved", &io->wal_reserved);
}

int pgl_io_parse(const char *buf, size_t len, struct pgl_io *out, char *err, size_t errcap)
{
	json_error_t je;
	json_t *root, *classes, *schema;
	struct pgl_io io;
	const char *why = NULL;
	int k;

	memset(&io, 0, sizeof(io));
	/* one value and nothing after it; a duplicate member is an error at
	 * any level; jansson limits nesting (JSON_PARSER_MAX_DEPTH) */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (err && errcap)
			snprintf(err, errcap, "%s at byte %d", je.text, je.position);
		return -EBADMSG;
	}
	schema = json_object_get(root, "schema");
	classes = json_object_get(root, "classes");
	if (!json_is_object(root))
		why = "not a JSON object";
	else if (!json_is_string(schema) || strcmp(json_string_value(schema), STATS_SCHEMA) != 0)
		why = "not schema " STATS_SCHEMA;
	else if (!json_is_object(classes))
		why = "no \"classes\" object";
	if (why) {
		if (err && errcap)
			snprintf(err, errcap, "%s", why);
		json_decref(root);
		return -EBADMSG;
	}
	io.has_lat = true;
	for (k = 0; k < PGL_IO_NCLASS; k++) {
		json_t *cls = json_object_get(classes, pgl_io_class_names[k]);

		if (!json_is_object(cls))
			why = cls ? "is not an object" : "missing";
		for (int f = 0; f < PGL_IO_NFIELD && !why; f++)
			why = counter(cls, pgl_io_field_names[f], &io.v[k][f]);
		if (!why)
			why = seen(cls, &io.seen[k]);
		if (!why && !latency(cls, io.lat[k], &why))
			io.has_lat = false;
		if (why)
			break;
	}
	if (!why)
		walprep(json_object_get(root, "wal_segments_ahead"), &io);
	json_decref(root);
	if (why) {
		if (err && errcap)
			snprintf(err, errcap, "class \"%s\" %s", pgl_io_class_names[k], why);
		return -EBADMSG;
	}
	*out = io;
	return 0;
}

int pgl_io_delta(const struct pgl_io *before, const struct pgl_io *after, struct pgl_io *d)
{
	for (int k = 0; k < PGL_IO_NCLASS; k++) {
		for (int f = 0; f < PGL_IO_NFIELD; f++) {
			if (after->v[k][f] < before->v[k][f])
				return -ERANGE;
			d->v[k][f] = after->v[k][f] - before->v[k][f];
		}
		d->seen[k] = after->seen[k];
	}
	d->has_walprep = before->has_walprep && after->has_walprep;
	if (d->has_walprep) {
		if (after->wal_made < before->wal_made ||
		    after->wal_reserved < before->wal_reserved)
			return -ERANGE;
		d->wal_made = after->wal_made - before->wal_made;
		d->wal_reserved = after->wal_reserved - before->wal_reserved;
	}
	return 0;
}

/* ---- finding the mount and the binary ------------------------------------- */

int pgl_io_find_mount(const char *path, const char *mountinfo, char *mnt, size_t cap)
{
	char *real = realpath(path, NULL);
	struct mountinfo *m = malloc(sizeof(*m));
	int ret = m ? mountinfo_find(mountinfo, real ? real : path, false, m) : -ENOMEM;

	free(real);
	if (ret > 0 && strcmp(m->fstype, "fuse.pgiofs") != 0)
		ret = 0;
	else if (ret > 0 && strlen(m->point) >= cap)
		ret = -ENAMETOOLONG;
	else if (ret > 0)
		snprintf(mnt, cap, "%s", m->point);
	free(m);
	return ret;
}

/* ---- running `pgiofs stat` ------------------------------------------------ */

int pgl_io_sample(const char *bin, const char *mnt, struct pgl_io *out, char *err, size_t errcap)
{
	char *argv[] = {(char *)bin, "stat", (char *)mnt, "--json", NULL};
	char *buf = malloc(MAX_OUTPUT + 1), ebuf[512];
	struct pgl_proc p = {.argv = argv,
			     .out = buf,
			     .outcap = MAX_OUTPUT + 1,
			     .err = ebuf,
			     .errcap = sizeof(ebuf),
			     .timeout_ms = STAT_TIMEOUT_MS};
	int ret, st;

	if (!buf) {
		snprintf(err, errcap, "out of memory");
		return -ENOMEM;
	}
	st = pgl_proc_run(&p);
	ebuf[strcspn(ebuf, "\n")] = '\0';
	if (st == -ETIMEDOUT) {
		snprintf(err, errcap, "no answer within %d s", STAT_TIMEOUT_MS / 1000);
		ret = st;
	} else if (st < 0) {
		snprintf(err, errcap, "could not run it: %s", strerror(-st));
		ret = st;
	} else if (p.signal) {
		snprintf(err, errcap, "killed by signal %d", p.signal);
		ret = -ECHILD;
	} else if (st != 0) {
		snprintf(err, errcap, "exit status %d%s%s", st, ebuf[0] ? ": " : "", ebuf);
		ret = -ECHILD;
	} else if (p.cut) {
		snprintf(err, errcap, "output larger than %d bytes", MAX_OUTPUT);
		ret = -E2BIG;
	} else {
		char why[200];
		ret = pgl_io_parse(buf, p.outlen, out, why, sizeof(why));
		if (ret < 0)
			snprintf(err, errcap, "unexpected output: %s", why);
	}
	free(buf);
	return ret;
}
