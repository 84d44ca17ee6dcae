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
 * The reader is a small strict JSON parser: every byte is bounds-checked
 * against the end of the buffer, nesting is limited, integers are checked
 * for overflow, and anything that is not well-formed JSON, not schema
 * pgiofs.stats/1, or lacks one of the needed fields is refused.  Members it
 * does not know are skipped, as the schema's compatibility rules require.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

#define MAX_DEPTH    32
#define MAX_OUTPUT   (1 << 20) /* bytes of `pgiofs stat --json` accepted */
#define STAT_TIMEOUT 10.0      /* s */
#define STATS_SCHEMA "pgiofs.stats/1"

/* ---- the JSON reader ------------------------------------------------------ */

struct cur {
	const char *p, *end;
	const char *err;
};

static int fail(struct cur *c, const char *why)
{
	if (!c->err)
		c->err = why;
	return -1;
}

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/*
 * string() -- a JSON string; its unescaped ASCII text goes to BUF (CAP > 0)
 * when it fits, else BUF gets "" (no name we look for is that long).
 */
static int string(struct cur *c, char *buf, size_t cap)
{
	size_t n = 0;
	bool fits = true;
	ws(c);
	if (c->p >= c->end || *c->p != '"')
		return fail(c, "string expected");
	c->p++;
	for (;;) {
		if (c->p >= c->end)
			return fail(c, "unterminated string");
		unsigned char ch = (unsigned char)*c->p++;
		if (ch == '"')
			break;
		if (ch < 0x20)
			return fail(c, "control character in a string");
		if (ch == '\\') {
			if (c->p >= c->end)
				return fail(c, "unterminated string");
			char e = *c->p++;
			switch (e) {
			case '"':
			case '\\':
			case '/':
				ch = (unsigned char)e;
				break;
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				ch = 0; /* never part of a name we look for */
				fits = false;
				break;
			case 'u':
				if (c->end - c->p < 4 || !is_hex(c->p[0]) || !is_hex(c->p[1]) ||
				    !is_hex(c->p[2]) || !is_hex(c->p[3]))
					return fail(c, "bad \\u escape");
				c->p += 4;
				fits = false;
				break;
			default:
				return fail(c, "bad escape in a string");
			}
		}
		if (fits && n + 1 < cap)
			buf[n++] = (char)ch;
		else
			fits = false;
	}
	if (cap)
		buf[fits ? n : 0] = '\0';
	return 0;
}

/* number() -- skip a JSON number (RFC 8259 grammar). */
static int number(struct cur *c)
{
	ws(c);
	const char *s = c->p;
	if (s < c->end && *s == '-')
		s++;
	if (s >= c->end || *s < '0' || *s > '9')
		return fail(c, "number expected");
	if (*s == '0')
		s++;
	else
		while (s < c->end && *s >= '0' && *s <= '9')
			s++;
	if (s < c->end && *s == '.') {
		s++;
		if (s >= c->end || *s < '0' || *s > '9')
			return fail(c, "bad number");
		while (s < c->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < c->end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < c->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= c->end || *s < '0' || *s > '9')
			return fail(c, "bad number");
		while (s < c->end && *s >= '0' && *s <= '9')
			s++;
	}
	c->p = s;
	return 0;
}

/* integer() -- a non-negative JSON integer that fits in 64 bits. */
static int integer(struct cur *c, uint64_t *out)
{
	ws(c);
	const char *s = c->p;
	uint64_t v = 0;
	if (s >= c->end || *s < '0' || *s > '9')
		return fail(c, "non-negative integer expected");
	if (*s == '0' && s + 1 < c->end && s[1] >= '0' && s[1] <= '9')
		return fail(c, "leading zero in an integer");
	while (s < c->end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(c, "integer out of range");
		v = v * 10 + d;
		s++;
	}
	if (s < c->end && (*s == '.' || *s == 'e' || *s == 'E'))
		return fail(c, "integer expected, not a fraction");
	c->p = s;
	*out = v;
	return 0;
}

static int literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return fail(c, "unexpected character");
	c->p += n;
	return 0;
}

/* skip() -- any JSON value, nested at most MAX_DEPTH deep. */
static int skip(struct cur *c, int depth)
{
	if (depth > MAX_DEPTH)
		return fail(c, "nested too deeply");
	ws(c);
	if (c->p >= c->end)
		return fail(c, "value expected");
	switch (*c->p) {
	case '"':
		return string(c, NULL, 0);
	case '{':
		c->p++;
		if (eat(c, '}'))
			return 0;
		do {
			if (string(c, NULL, 0) < 0)
				return -1;
			if (!eat(c, ':'))
				return fail(c, "':' expected");
			if (skip(c, depth + 1) < 0)
				return -1;
		} while (eat(c, ','));
		return eat(c, '}') ? 0 : fail(c, "'}' expected");
	case '[':
		c->p++;
		if (eat(c, ']'))
			return 0;
		do {
			if (skip(c, depth + 1) < 0)
				return -1;
		} while (eat(c, ','));
		return eat(c, ']') ? 0 : fail(c, "']' expected");
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		return number(c);
	}
}

static int lookup(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* real() -- a non-negative JSON number as a double. */
static int real(struct cur *c, double *out)
{
	ws(c);
	const char *s = c->p;
	char buf[64];
	if (number(c) < 0)
		return -1;
	size_t n = (size_t)(c->p - s);
	if (n >= sizeof(buf) || *s == '-')
		return fail(c, "latency: non-negative number expected");
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	return 0;
}

/* latency() -- the "latency_ms" object of a class: the figures we use into L. */
static int latency(struct cur *c, double *l, unsigned *seen)
{
	char name[32];
	if (!eat(c, '{'))
		return fail(c, "latency_ms: object expected");
	if (eat(c, '}'))
		return 0;
	do {
		if (string(c, name, sizeof(name)) < 0)
			return -1;
		if (!eat(c, ':'))
			return fail(c, "':' expected");
		int f = lookup(pgl_lat_field_names, PGL_LAT_N, name);
		if (f < 0) {
			if (skip(c, 4) < 0)
				return -1;
			continue;
		}
		if (*seen & (1u << f))
			return fail(c, "duplicate latency field");
		if (real(c, &l[f]) < 0)
			return -1;
		*seen |= 1u << f;
	} while (eat(c, ','));
	return eat(c, '}') ? 0 : fail(c, "'}' expected");
}

/*
 * one_class() -- the object of one class: the fields we need into V, the
 * latency figures into L (bits of LSEEN).
 */
static int one_class(struct cur *c, uint64_t *v, unsigned *seen, double *l, unsigned *lseen)
{
	char name[32];
	if (!eat(c, '{'))
		return fail(c, "class: object expected");
	if (eat(c, '}'))
		return 0;
	do {
		if (string(c, name, sizeof(name)) < 0)
			return -1;
		if (!eat(c, ':'))
			return fail(c, "':' expected");
		int f = lookup(pgl_io_field_names, PGL_IO_NFIELD, name);
		if (f < 0 && strcmp(name, "latency_ms") == 0) {
			if (*lseen)
				return fail(c, "duplicate latency_ms");
			*lseen = 1u << 31;
			if (latency(c, l, lseen) < 0)
				return -1;
			continue;
		}
		if (f < 0) {
			if (skip(c, 3) < 0)
				return -1;
			continue;
		}
		if (*seen & (1u << f))
			return fail(c, "duplicate field");
		if (integer(c, &v[f]) < 0)
			return -1;
		*seen |= 1u << f;
	} while (eat(c, ','));
	return eat(c, '}') ? 0 : fail(c, "'}' expected");
}

static int classes(struct cur *c, struct pgl_io *io, unsigned seen[PGL_IO_NCLASS],
		   unsigned lseen[PGL_IO_NCLASS])
{
	char name[32];
	if (!eat(c, '{'))
		return fail(c, "\"classes\": object expected");
	if (eat(c, '}'))
		return 0;
	do {
		if (string(c, name, sizeof(name)) < 0)
			return -1;
		if (!eat(c, ':'))
			return fail(c, "':' expected");
		int k = lookup(pgl_io_class_names, PGL_IO_NCLASS, name);
		if (k < 0) {
			if (skip(c, 2) < 0)
				return -1;
			continue;
		}
		if (seen[k])
			return fail(c, "duplicate class");
		seen[k] = 1u << 31;
		if (one_class(c, io->v[k], &seen[k], io->lat[k], &lseen[k]) < 0)
			return -1;
	} while (eat(c, ','));
	return eat(c, '}') ? 0 : fail(c, "'}' expected");
}

int pgl_io_parse(const char *buf, size_t len, struct pgl_io *out, char *err, size_t errcap)
{
	struct cur c = {.p = buf, .end = buf + len};
	struct pgl_io io;
	unsigned seen[PGL_IO_NCLASS] = {0}, lseen[PGL_IO_NCLASS] = {0};
	bool have_classes = false, first = true;
	char name[32], schema[32];
	memset(&io, 0, sizeof(io));
	if (!eat(&c, '{')) {
		fail(&c, "a JSON object expected");
		goto bad;
	}
	if (eat(&c, '}')) {
		fail(&c, "no \"schema\" member");
		goto bad;
	}
	do {
		if (string(&c, name, sizeof(name)) < 0)
			goto bad;
		if (!eat(&c, ':')) {
			fail(&c, "':' expected");
			goto bad;
		}
		if (first) {
			/* the schema comes first (docs/stats.md) */
			if (strcmp(name, "schema") != 0) {
				fail(&c, "the first member is not \"schema\"");
				goto bad;
			}
			if (string(&c, schema, sizeof(schema)) < 0)
				goto bad;
			if (strcmp(schema, STATS_SCHEMA) != 0) {
				fail(&c, "not schema " STATS_SCHEMA);
				goto bad;
			}
			first = false;
		} else if (strcmp(name, "classes") == 0) {
			if (have_classes) {
				fail(&c, "duplicate \"classes\"");
				goto bad;
			}
			have_classes = true;
			if (classes(&c, &io, seen, lseen) < 0)
				goto bad;
		} else if (skip(&c, 1) < 0) {
			goto bad;
		}
	} while (eat(&c, ','));
	if (!eat(&c, '}')) {
		fail(&c, "'}' expected");
		goto bad;
	}
	ws(&c);
	if (c.p != c.end) {
		fail(&c, "data after the object");
		goto bad;
	}
	if (!have_classes) {
		fail(&c, "no \"classes\" member");
		goto bad;
	}
	for (int k = 0; k < PGL_IO_NCLASS; k++) {
		if ((seen[k] & ((1u << PGL_IO_NFIELD) - 1)) != (1u << PGL_IO_NFIELD) - 1) {
			if (err && errcap)
				snprintf(err, errcap, "class \"%s\" %s", pgl_io_class_names[k],
					 seen[k] ? "lacks a counter" : "missing");
			return -EBADMSG;
		}
	}
	io.has_lat = true;
	for (int k = 0; k < PGL_IO_NCLASS; k++)
		if ((lseen[k] & ((1u << PGL_LAT_N) - 1)) != (1u << PGL_LAT_N) - 1)
			io.has_lat = false;
	*out = io;
	return 0;
bad:
	if (err && errcap)
		snprintf(err, errcap, "%s at byte %zu", c.err ? c.err : "malformed JSON",
			 (size_t)(c.p - buf));
	return -EBADMSG;
}

int pgl_io_delta(const struct pgl_io *before, const struct pgl_io *after, struct pgl_io *d)
{
	for (int k = 0; k < PGL_IO_NCLASS; k++)
		for (int f = 0; f < PGL_IO_NFIELD; f++) {
			if (after->v[k][f] < before->v[k][f])
				return -ERANGE;
			d->v[k][f] = after->v[k][f] - before->v[k][f];
		}
	return 0;
}

/* ---- finding the mount and the binary ------------------------------------- */

/* unescape() -- mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
}

/* under() -- PATH is MNT or below it. */
static bool under(const char *path, const char *mnt)
{
	size_t n = strlen(mnt);
	if (strcmp(mnt, "/") == 0)
		return path[0] == '/';
	return strncmp(path, mnt, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int pgl_io_find_mount(const char *path, const char *mountinfo, char *mnt, size_t cap)
{
	char *real = realpath(path, NULL);
	const char *p = real ? real : path;
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t lcap = 0;
	char best[4096] = "";
	bool best_pgiofs = false;
	size_t bestlen = 0;
	int ret = 0;
	if (!f) {
		ret = -errno;
		free(real);
		return ret;
	}
	while (getline(&line, &lcap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ... */
		char *save = NULL, *tok, *mp = NULL, *fstype = NULL;
		int i = 0;
		bool sep = false;
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
			if (i == 4)
				mp = tok;
			else if (sep) {
				fstype = tok;
				break;
			} else if (i > 5 && strcmp(tok, "-") == 0)
				sep = true;
		}
		if (!mp || !fstype)
			continue;
		unescape(mp);
		size_t n = strlen(mp);
		/* the deepest mount point wins; of equal ones the later (on top) */
		if (under(p, mp) && n >= bestlen && n < sizeof(best)) {
			memcpy(best, mp, n + 1);
			bestlen = n;
			best_pgiofs = strcmp(fstype, "fuse.pgiofs") == 0;
		}
	}
	free(line);
	fclose(f);
	free(real);
	if (best_pgiofs) {
		if (strlen(best) >= cap)
			return -ENAMETOOLONG;
		snprintf(mnt, cap, "%s", best);
		ret = 1;
	}
	return ret;
}

int pgl_io_find_bin(const char *given, char *out, size_t cap)
{
	if (given) {
		snprintf(out, cap, "%s", given);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, cap, "%s/pgiofs", exe);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	const char *env = getenv("PATH");
	char *dup = strdup(env ? env : "/usr/bin:/bin"), *save = NULL;
	if (!dup)
		return -ENOMEM;
	for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/pgiofs", d);
		if (access(out, X_OK) == 0) {
			free(dup);
			return 0;
		}
	}
	free(dup);
	return -ENOENT;
}

/* ---- running `pgiofs stat` ------------------------------------------------ */

int pgl_io_sample(const char *bin, const char *mnt, struct pgl_io *out, char *err, size_t errcap)
{
	int po[2], pe[2];
	char *argv[] = {(char *)bin, "stat", (char *)mnt, "--json", NULL};
	char *buf = malloc(MAX_OUTPUT);
	char ebuf[512];
	size_t n = 0, en = 0;
	int ret = 0;
	if (!buf) {
		snprintf(err, errcap, "out of memory");
		return -ENOMEM;
	}
	if (pipe2(po, O_CLOEXEC) < 0) {
		ret = -errno;
		snprintf(err, errcap, "pipe: %s", strerror(-ret));
		free(buf);
		return ret;
	}
	if (pipe2(pe, O_CLOEXEC) < 0) {
		ret = -errno;
		snprintf(err, errcap, "pipe: %s", strerror(-ret));
		close(po[0]);
		close(po[1]);
		free(buf);
		return ret;
	}
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(bin, argv);
		_exit(127);
	}
	int e = errno;
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		snprintf(err, errcap, "fork: %s", strerror(e));
		close(po[0]);
		close(pe[0]);
		free(buf);
		return -e;
	}
	struct pollfd pfd[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
	double t0 = pgl_now();
	bool big = false, timeout = false, broken = false;
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		double left = STAT_TIMEOUT - (pgl_now() - t0);
		if (left <= 0) {
			timeout = true;
			break;
		}
		int r = poll(pfd, 2, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			e = errno;
			broken = true;
			break;
		}
		for (int i = 0; i < 2 && r > 0; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			char scratch[4096];
			char *dst = i == 0 ? (n < MAX_OUTPUT ? buf + n : scratch)
					   : (en < sizeof(ebuf) - 1 ? ebuf + en : scratch);
			size_t room = i == 0 ? (n < MAX_OUTPUT ? MAX_OUTPUT - n : sizeof(scratch))
					     : (en < sizeof(ebuf) - 1 ? sizeof(ebuf) - 1 - en
								      : sizeof(scratch));
			ssize_t got = read(pfd[i].fd, dst, room);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				continue;
			}
			if (dst == scratch) {
				big |= i == 0;
				continue;
			}
			if (i == 0)
				n += (size_t)got;
			else
				en += (size_t)got;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	if (timeout || broken)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ebuf[en] = '\0';
	ebuf[strcspn(ebuf, "\n")] = '\0';
	if (timeout) {
		snprintf(err, errcap, "no answer within %.0f s", STAT_TIMEOUT);
		ret = -ETIMEDOUT;
	} else if (broken) {
		snprintf(err, errcap, "poll: %s", strerror(e));
		ret = -EIO;
	} else if (WIFSIGNALED(st)) {
		snprintf(err, errcap, "killed by signal %d", WTERMSIG(st));
		ret = -ECHILD;
	} else if (WEXITSTATUS(st) != 0) {
		snprintf(err, errcap, "exit status %d%s%s", WEXITSTATUS(st), ebuf[0] ? ": " : "",
			 ebuf);
		ret = -ECHILD;
	} else if (big) {
		snprintf(err, errcap, "output larger than %d bytes", MAX_OUTPUT);
		ret = -E2BIG;
	} else {
		char why[200];
		ret = pgl_io_parse(buf, n, out, why, sizeof(why));
		if (ret < 0)
			snprintf(err, errcap, "unexpected output: %s", why);
	}
	free(buf);
	return ret;
}
