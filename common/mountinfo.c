/*
 * mountinfo.c -- reading /proc/self/mountinfo (mountinfo.h).
 *
 * What must stay true: a line that does not have the documented shape is
 * passed over, never half read; a mount point is compared unescaped.
 */
#include "mountinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* unescape() -- undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* parse() -- one line into M; false if it is not a mountinfo line. */
static bool parse(const char *line, struct mountinfo *m)
{
	const char *sep;

	if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &m->major, &m->minor, m->point) != 3)
		return false;
	/* the optional fields end at a lone "-" */
	sep = strstr(line, " - ");
	if (!sep || sscanf(sep + 3, "%63s %*s %255s", m->fstype, m->super) < 1)
		return false;
	unescape(m->point);
	return true;
}

int mountinfo_each(const char *file, int (*fn)(const struct mountinfo *m, void *arg), void *arg)
{
	FILE *f = fopen(file ? file : "/proc/self/mountinfo", "r");
	struct mountinfo *m;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	if (!f)
		return -errno;
	m = malloc(sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while (ret == 0 && getline(&line, &cap, f) > 0) {
		memset(m, 0, sizeof(*m));
		if (parse(line, m))
			ret = fn(m, arg);
	}
	free(line);
	free(m);
	fclose(f);
	return ret;
}

struct find {
	const char *path;
	bool exact, found;
	size_t best; /* length of the best mount point so far */
	struct mountinfo *out;
};

static int find_one(const struct mountinfo *m, void *arg)
{
	struct find *q = arg;
	size_t n = strlen(m->point);

	if (q->exact ? strcmp(m->point, q->path) != 0 : !path_is_under(q->path, m->point))
		return 0;
	/* ">=": a later line at the same point is mounted on top */
	if (!q->found || n >= q->best) {
		*q->out = *m;
		q->best = n;
		q->found = true;
	}
	return 0;
}

int mountinfo_find(const char *file, const char *path, bool exact, struct mountinfo *out)
{
	struct find q = {.path = path, .exact = exact, .out = out};
	int ret = mountinfo_each(file, find_one, &q);

	return ret < 0 ? ret : q.found;
}

bool path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
