/*
 * conf.h -- table-driven tunables and INI configuration (shared by all modules).
 *
 * Every tunable of a module is one row of a `struct conf_tunable` table:
 * section, name, type, unit, default, range and help.  The same table drives
 * the INI parser (libinih), command-line overrides, --help output, the
 * generated documentation and the stats output, so they cannot drift apart.
 *
 * Values live in a caller-owned settings struct; each row names the offset of
 * its field.  Field types: CONF_BOOL -> bool, CONF_INT -> int64_t,
 * CONF_DOUBLE -> double, CONF_ENUM -> int (index into `choices`),
 * CONF_STRING -> char[CONF_STR_MAX].
 *
 * Loading is all-or-nothing: conf_load_file() parses into a copy and only
 * writes the caller's struct when the whole file is valid, so a bad reload
 * keeps the old settings.
 */
#ifndef PGIOFS_CONF_H
#define PGIOFS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_STR_MAX 256
#define CONF_ERR_MAX 512

enum conf_type { CONF_BOOL, CONF_INT, CONF_DOUBLE, CONF_ENUM, CONF_STRING };

struct conf_tunable {
	const char *section; /* INI section, e.g. "fuse" */
	const char *name;    /* key, e.g. "attr_timeout" */
	enum conf_type type;
	const char *unit;	    /* "s", "ms", "KiB", "%", "" */
	const char *def;	    /* default, as it would be written in INI */
	double min, max;	    /* inclusive range (CONF_INT, CONF_DOUBLE) */
	const char *const *choices; /* NULL-terminated (CONF_ENUM) */
	size_t offset;		    /* offsetof(settings struct, field) */
	const char *help;	    /* one or two sentences */
};

struct conf_table {
	const struct conf_tunable *rows;
	size_t nrows;
	size_t settings_size; /* sizeof the settings struct */
};

/* conf_defaults() -- fill every field of @settings with its default.
 * Returns 0, or -EINVAL if a default in the table is itself invalid. */
int conf_defaults(const struct conf_table *t, void *settings);

/* conf_find() -- the row for "section.name" or (if unique) "name"; NULL if none. */
const struct conf_tunable *conf_find(const struct conf_table *t, const char *section,
				     const char *name);

/* conf_set() -- parse @value for one tunable into @settings.
 * Returns 0, -ENOENT (unknown name, or a name without a section that more
 * than one section has) or -EINVAL / -ERANGE with a reason
 * ("must be between 0 and 100") written to @err. */
int conf_set(const struct conf_table *t, void *settings, const char *section, const char *name,
	     const char *value, char *err, size_t errlen);

/* conf_set_arg() -- apply a command-line override "[section.]name=value".
 * Same returns as conf_set(). */
int conf_set_arg(const struct conf_table *t, void *settings, const char *arg, char *err,
		 size_t errlen);

/* conf_load_file() -- parse an INI file into @settings (all or nothing).
 * Unknown sections/keys, bad values, a key set twice and a section that
 * appears a second time are errors.  On failure returns
 * -errno and writes "FILE:LINE: reason" (or "FILE: reason") to @err. */
int conf_load_file(const struct conf_table *t, void *settings, const char *path, char *err,
		   size_t errlen);

/* conf_format() -- the current value of a row as text into @buf. */
void conf_format(const struct conf_tunable *row, const void *settings, char *buf, size_t len);

/* conf_print_help() -- one line per tunable: name, default, unit, range, help. */
void conf_print_help(FILE *out, const struct conf_table *t);

/* conf_print_ini() -- a complete, commented INI file of the values in
 * @settings (the documented default configuration when given defaults). */
void conf_print_ini(FILE *out, const struct conf_table *t, const void *settings);

#endif
