/*
 * conf.c -- table-driven tunables and INI parsing (see conf.h).
 *
 * INI syntax is parsed by libinih (Debian libinih-dev); this file only maps
 * keys to table rows and checks types and ranges.  Every error names the
 * file, the line and the reason.
 */
#include "conf.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void seterr(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

const struct conf_tunable *conf_find(const struct conf_table *t, const char *section,
				     const char *name)
{
	const struct conf_tunable *hit = NULL;
	size_t i;

	for (i = 0; i < t->nrows; i++) {
		const struct conf_tunable *r = &t->rows[i];

		if (strcmp(r->name, name) != 0)
			continue;
		if (section && *section) {
			if (strcmp(r->section, section) == 0)
				return r;
			continue;
		}
		if (hit)
			return NULL; /* ambiguous without a section */
		hit = r;
	}
	return hit;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on", NULL};
	static const char *const no[] = {"0", "no", "false", "off", NULL};
	int i;

	for (i = 0; yes[i]; i++)
		if (strcasecmp(v, yes[i]) == 0)
			return *out = true, 0;
	for (i = 0; no[i]; i++)
		if (strcasecmp(v, no[i]) == 0)
			return *out = false, 0;
	return -EINVAL;
}

static int set_row(const struct conf_tunable *r, void *settings, const char *value, char *err,
		   size_t errlen)
{
	char *field = (char *)settings + r->offset;
	char *end;

	while (*value == ' ' || *value == '\t')
		value++;
	switch (r->type) {
	case CONF_BOOL: {
		bool b;

		if (parse_bool(value, &b) < 0) {
			seterr(err, errlen, "%s: \"%s\" is not a boolean (use yes or no)", r->name,
			       value);
			return -EINVAL;
		}
		*(bool *)field = b;
		return 0;
	}
	case CONF_INT: {
		long long v;

		errno = 0;
		v = strtoll(value, &end, 0);
		if (errno || end == value || *end) {
			seterr(err, errlen, "%s: \"%s\" is not an integer", r->name, value);
			return -EINVAL;
		}
		if ((double)v < r->min || (double)v > r->max) {
			seterr(err, errlen, "%s: %lld is out of range (%.0f to %.0f%s%s)", r->name,
			       v, r->min, r->max, *r->unit ? " " : "", r->unit);
			return -ERANGE;
		}
		*(int64_t *)field = v;
		return 0;
	}
	case CONF_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end || !isfinite(v)) {
			seterr(err, errlen, "%s: \"%s\" is not a number", r->name, value);
			return -EINVAL;
		}
		if (v < r->min || v > r->max) {
			seterr(err, errlen, "%s: %g is out of range (%g to %g%s%s)", r->name, v,
			       r->min, r->max, *r->unit ? " " : "", r->unit);
			return -ERANGE;
		}
		*(double *)field = v;
		return 0;
	}
	case CONF_ENUM: {
		int i;
		size_t used = 0;
		char choices[256] = "";

		for (i = 0; r->choices[i]; i++) {
			if (strcmp(value, r->choices[i]) == 0) {
				*(int *)field = i;
				return 0;
			}
			used += snprintf(choices + used, sizeof(choices) - used, "%s%s",
					 i ? ", " : "", r->choices[i]);
			if (used >= sizeof(choices))
				used = sizeof(choices) - 1;
		}
		seterr(err, errlen, "%s: \"%s\" is not one of: %s", r->name, value, choices);
		return -EINVAL;
	}
	case CONF_STRING:
		if (strlen(value) >= CONF_STR_MAX) {
			seterr(err, errlen, "%s: value longer than %d characters", r->name,
			       CONF_STR_MAX - 1);
			return -ERANGE;
		}
		strcpy(field, value);
		return 0;
	}
	return -EINVAL;
}

int conf_defaults(const struct conf_table *t, void *settings)
{
	size_t i;
	int ret;

	memset(settings, 0, t->settings_size);
	for (i = 0; i < t->nrows; i++) {
		ret = set_row(&t->rows[i], settings, t->rows[i].def, NULL, 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int conf_set(const struct conf_table *t, void *settings, const char *section, const char *name,
	     const char *value, char *err, size_t errlen)
{
	const struct conf_tunable *r = conf_find(t, section, name), *first = NULL;
	size_t i;

	if (!r && !(section && *section))
		for (i = 0; i < t->nrows; i++)
			if (strcmp(t->rows[i].name, name) == 0) {
				if (first) {
					seterr(err, errlen,
					       "option \"%s\" is in more than one section: say "
					       "which (%s.%s, %s.%s)",
					       name, first->section, name, t->rows[i].section,
					       name);
					return -ENOENT;
				}
				first = &t->rows[i];
			}
	if (!r) {
		if (section && *section)
			seterr(err, errlen, "unknown option \"%s\" in section [%s]", name, section);
		else
			seterr(err, errlen, "unknown option \"%s\"", name);
		return -ENOENT;
	}
	return set_row(r, settings, value, err, errlen);
}

int conf_set_arg(const struct conf_table *t, void *settings, const char *arg, char *err,
		 size_t errlen)
{
	char key[128], *dot;
	const char *eq = strchr(arg, '=');
	size_t klen;

	if (!eq || eq == arg) {
		seterr(err, errlen, "\"%s\": expected name=value", arg);
		return -EINVAL;
	}
	klen = (size_t)(eq - arg);
	if (klen >= sizeof(key)) {
		seterr(err, errlen, "\"%s\": name too long", arg);
		return -EINVAL;
	}
	memcpy(key, arg, klen);
	key[klen] = '\0';
	dot = strchr(key, '.');
	if (dot) {
		*dot = '\0';
		return conf_set(t, settings, key, dot + 1, eq + 1, err, errlen);
	}
	return conf_set(t, settings, NULL, key, eq + 1, err, errlen);
}

struct load_ctx {
	const struct conf_table *t;
	void *settings;
	const char *path;
	char *err;
	size_t errlen;
	int ret;
	FILE *f;
	int lineno;		    /* lines read so far: Debian's libinih passes no line number */
	int *set_on;		    /* per row: the line that set it, 0 if none yet */
	char section[CONF_STR_MAX]; /* the section of the previous key */
	char seen[16][64];	    /* sections left so far, to catch a repeat */
	int seen_line[16], nseen;
};

/* read_line() -- fgets for ini_parse_stream() that counts lines. */
static char *read_line(char *str, int num, void *stream)
{
	struct load_ctx *c = stream;
	char *r = fgets(str, num, c->f);

	if (r)
		c->lineno++;
	return r;
}

static int known_section(const struct conf_table *t, const char *section)
{
	size_t i;

	for (i = 0; i < t->nrows; i++)
		if (strcmp(t->rows[i].section, section) == 0)
			return 1;
	return 0;
}

static int ini_cb(void *user, const char *section, const char *name, const char *value)
{
	/* inih: nonzero = go on; our own errors are kept in c->ret */
	struct load_ctx *c = user;
	int lineno = c->lineno;
	char reason[CONF_ERR_MAX];
	int ret;

	if (c->ret)
		return 1;
	if (!*section) {
		seterr(c->err, c->errlen, "%s:%d: \"%s\" outside of any [section]", c->path, lineno,
		       name);
		c->ret = -EINVAL;
		return 1;
	}
	if (!known_section(c->t, section)) {
		seterr(c->err, c->errlen, "%s:%d: unknown section [%s]", c->path, lineno, section);
		c->ret = -EINVAL;
		return 1;
	}
	if (strcmp(section, c->section) != 0) {
		/* a section that comes back would make a later value win
		 * silently: refuse it, as a repeated key */
		int i;

		for (i = 0; i < c->nseen; i++)
			if (strcmp(c->seen[i], section) == 0) {
				seterr(
				    c->err, c->errlen,
				    "%s:%d: section [%s] appears a second time (first on line %d): "
				    "merge them",
				    c->path, lineno, section, c->seen_line[i]);
				c->ret = -EINVAL;
				return 1;
			}
		if (c->nseen < 16 && strlen(section) < sizeof(c->seen[0])) {
			strcpy(c->seen[c->nseen], section);
			c->seen_line[c->nseen++] = lineno;
		}
		snprintf(c->section, sizeof(c->section), "%s", section);
	}
	{
		const struct conf_tunable *r = conf_find(c->t, section, name);
		size_t row = r ? (size_t)(r - c->t->rows) : 0;

		if (r && c->set_on[row]) {
			seterr(c->err, c->errlen,
			       "%s:%d: \"%s\" is set a second time in [%s] (first on line %d)",
			       c->path, lineno, name, section, c->set_on[row]);
			c->ret = -EINVAL;
			return 1;
		}
		if (r)
			c->set_on[row] = lineno;
	}
	ret = conf_set(c->t, c->settings, section, name, value, reason, sizeof(reason));
	if (ret < 0) {
		seterr(c->err, c->errlen, "%s:%d: %s", c->path, lineno, reason);
		c->ret = ret == -ENOENT ? -EINVAL : ret;
	}
	return 1;
}

int conf_load_file(const struct conf_table *t, void *settings, const char *path, char *err,
		   size_t errlen)
{
	struct load_ctx c = {.t = t, .path = path, .err = err, .errlen = errlen};
	FILE *f;
	int line;

	c.settings = malloc(t->settings_size);
	c.set_on = calloc(t->nrows ? t->nrows : 1, sizeof(*c.set_on));
	if (!c.settings || !c.set_on) {
		free(c.settings);
		free(c.set_on);
		return -ENOMEM;
	}
	memcpy(c.settings, settings, t->settings_size);
	f = fopen(path, "r");
	if (!f) {
		int e = errno;

		seterr(err, errlen, "%s: cannot open: %s", path, strerror(e));
		free(c.settings);
		free(c.set_on);
		return -e;
	}
	c.f = f;
	line = ini_parse_stream(read_line, &c, ini_cb, &c);
	fclose(f);
	if (!c.ret && line > 0) {
		seterr(err, errlen, "%s:%d: syntax error (expected [section] or name = value)",
		       path, line);
		c.ret = -EINVAL;
	} else if (!c.ret && line < 0) {
		seterr(err, errlen, "%s: out of memory while parsing", path);
		c.ret = -ENOMEM;
	}
	if (!c.ret)
		memcpy(settings, c.settings, t->settings_size);
	free(c.settings);
	free(c.set_on);
	return c.ret;
}

void conf_format(const struct conf_tunable *r, const void *settings, char *buf, size_t len)
{
	const char *field = (const char *)settings + r->offset;

	switch (r->type) {
	case CONF_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
		break;
	case CONF_INT:
		snprintf(buf, len, "%lld", (long long)*(const int64_t *)field);
		break;
	case CONF_DOUBLE:
		snprintf(buf, len, "%g", *(const double *)field);
		break;
	case CONF_ENUM:
		snprintf(buf, len, "%s", r->choices[*(const int *)field]);
		break;
	case CONF_STRING:
		snprintf(buf, len, "%s", field);
		break;
	}
}

static void range_text(const struct conf_tunable *r, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	switch (r->type) {
	case CONF_BOOL:
		snprintf(buf, len, "yes|no");
		break;
	case CONF_INT:
		snprintf(buf, len, "%.0f..%.0f", r->min, r->max);
		break;
	case CONF_DOUBLE:
		snprintf(buf, len, "%g..%g", r->min, r->max);
		break;
	case CONF_ENUM:
		buf[0] = '\0';
		for (i = 0; r->choices[i] && used < len; i++)
			used +=
			    snprintf(buf + used, len - used, "%s%s", i ? "|" : "", r->choices[i]);
		break;
	case CONF_STRING:
		snprintf(buf, len, "text");
		break;
	}
}

void conf_print_help(FILE *out, const struct conf_table *t)
{
	char range[256];
	size_t i;

	for (i = 0; i < t->nrows; i++) {
		const struct conf_tunable *r = &t->rows[i];
		char key[96];

		range_text(r, range, sizeof(range));
		snprintf(key, sizeof(key), "%s.%s", r->section, r->name);
		fprintf(out, "  %-28s default %s%s%s; %s\n      %s\n", key, r->def,
			*r->unit ? " " : "", r->unit, range, r->help);
	}
}

/* print_wrapped() -- @text as "; " comment lines of at most 78 columns. */
static void print_wrapped(FILE *out, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strlen(p), cut = n;

		if (n > 76) {
			cut = 76;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = 76;
		}
		fprintf(out, "; %.*s\n", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

void conf_print_ini(FILE *out, const struct conf_table *t, const void *settings)
{
	const char *section = NULL;
	char range[256], val[CONF_STR_MAX + 32];
	size_t i;

	for (i = 0; i < t->nrows; i++) {
		const struct conf_tunable *r = &t->rows[i];

		if (!section || strcmp(section, r->section) != 0) {
			fprintf(out, "%s[%s]\n", section ? "\n" : "", r->section);
			section = r->section;
		}
		range_text(r, range, sizeof(range));
		conf_format(r, settings, val, sizeof(val));
		fputc('\n', out);
		print_wrapped(out, r->help);
		fprintf(out, "; unit: %s; range: %s; default: %s\n%s = %s\n",
			*r->unit ? r->unit : "-", range, r->def, r->name, val);
	}
}
