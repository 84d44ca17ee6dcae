/*
 * test_conf.c -- the table-driven tunables and INI parser (common/conf.h):
 * defaults, types, ranges, errors naming file:line, all-or-nothing loads,
 * and a round trip through conf_print_ini().
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"

struct s {
	bool b;
	int64_t i, i2;
	double d;
	int e;
	char str[CONF_STR_MAX];
};

static const char *const colours[] = {"red", "green", "blue", NULL};

static const struct conf_tunable rows[] = {
    {"a", "flag", CONF_BOOL, "", "yes", 0, 0, NULL, offsetof(struct s, b), "a flag"},
    {"a", "count", CONF_INT, "KiB", "128", 4, 1024, NULL, offsetof(struct s, i), "a count"},
    {"b", "ratio", CONF_DOUBLE, "s", "0.5", 0, 10, NULL, offsetof(struct s, d), "a ratio"},
    {"b", "colour", CONF_ENUM, "", "green", 0, 0, colours, offsetof(struct s, e), "colour"},
    {"b", "name", CONF_STRING, "", "x", 0, 0, NULL, offsetof(struct s, str), "a name"},
    {"b", "count", CONF_INT, "", "1", 0, 9, NULL, offsetof(struct s, i2), "same name"},
};
static const struct conf_table tab = {rows, sizeof(rows) / sizeof(rows[0]), sizeof(struct s)};

#include "check.h"

static char tmpdir[] = "/tmp/test_conf.XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

int main(void)
{
	struct s v, copy;
	char err[CONF_ERR_MAX], want[512];
	const char *p;
	int ret;

	if (!mkdtemp(tmpdir))
		return 1;

	/* defaults and the row table */
	CHECK(conf_defaults(&tab, &v) == 0);
	CHECK(v.b && v.i == 128 && v.i2 == 1 && v.d == 0.5 && v.e == 1 && strcmp(v.str, "x") == 0);
	CHECK(conf_find(&tab, NULL, "count") == NULL); /* ambiguous */
	CHECK(conf_set(&tab, &v, NULL, "count", "5", err, sizeof(err)) == -ENOENT);
	CHECK(strcmp(err, "option \"count\" is in more than one section: say which (a.count, "
			  "b.count)") == 0);
	CHECK(conf_find(&tab, "a", "count") == &rows[1]);
	CHECK(conf_find(&tab, NULL, "ratio") == &rows[2]);

	/* types and ranges */
	CHECK(conf_set(&tab, &v, "a", "flag", "off", err, sizeof(err)) == 0 && !v.b);
	CHECK(conf_set(&tab, &v, "a", "flag", "maybe", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "\"maybe\" is not a boolean"));
	CHECK(conf_set(&tab, &v, "a", "count", "0x100", err, sizeof(err)) == 0 && v.i == 256);
	CHECK(conf_set(&tab, &v, "a", "count", "2048", err, sizeof(err)) == -ERANGE);
	CHECK(strcmp(err, "count: 2048 is out of range (4 to 1024 KiB)") == 0);
	CHECK(conf_set(&tab, &v, "a", "count", "12abc", err, sizeof(err)) == -EINVAL);
	CHECK(conf_set(&tab, &v, "b", "ratio", "nan", err, sizeof(err)) == -EINVAL);
	CHECK(conf_set(&tab, &v, "b", "ratio", "10.5", err, sizeof(err)) == -ERANGE);
	CHECK(conf_set(&tab, &v, "b", "colour", "blue", err, sizeof(err)) == 0 && v.e == 2);
	CHECK(conf_set(&tab, &v, "b", "colour", "pink", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "not one of: red, green, blue"));
	CHECK(conf_set(&tab, &v, NULL, "nosuch", "1", err, sizeof(err)) == -ENOENT);
	CHECK(conf_set_arg(&tab, &v, "b.count=7", err, sizeof(err)) == 0 && v.i2 == 7);
	CHECK(conf_set_arg(&tab, &v, "ratio=2.5", err, sizeof(err)) == 0 && v.d == 2.5);
	CHECK(conf_set_arg(&tab, &v, "ratio", err, sizeof(err)) == -EINVAL);

	/* a file: comments, sections, values; errors name file and line */
	conf_defaults(&tab, &v);
	p = write_file("ok.ini", "; comment\n[a]\nflag = no\ncount = 64 ; inline\n\n[b]\n"
				 "colour = red\nname = hello world\n");
	ret = conf_load_file(&tab, &v, p, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s\n", err);
	CHECK(ret == 0);
	CHECK(!v.b && v.i == 64 && v.e == 0 && strcmp(v.str, "hello world") == 0);

	memcpy(&copy, &v, sizeof(v));
	p = write_file("bad.ini", "[a]\nflag = yes\ncount = 8\n[b]\nratio = 99\n");
	ret = conf_load_file(&tab, &v, p, err, sizeof(err));
	CHECK(ret == -ERANGE);
	snprintf(want, sizeof(want), "%s:5: ratio: 99 is out of range (0 to 10 s)", p);
	CHECK(strcmp(err, want) == 0);
	CHECK(memcmp(&copy, &v, sizeof(v)) == 0); /* all or nothing */

	p = write_file("unk.ini", "[a]\n\nbogus = 1\n");
	CHECK(conf_load_file(&tab, &v, p, err, sizeof(err)) == -EINVAL);
	snprintf(want, sizeof(want), "%s:3: unknown option \"bogus\" in section [a]", p);
	CHECK(strcmp(err, want) == 0);
	p = write_file("nosec.ini", "flag = 1\n");
	CHECK(conf_load_file(&tab, &v, p, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ":1: \"flag\" outside of any [section]"));
	p = write_file("syntax.ini", "[a]\nflag\n");
	CHECK(conf_load_file(&tab, &v, p, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ":2: syntax error"));
	p = write_file("dupsec.ini", "[a]\nflag = yes\n[b]\nratio = 1\n\n[a]\ncount = 3\n");
	CHECK(conf_load_file(&tab, &v, p, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ":7: section [a] appears a second time (first on line 2): merge them"));
	p = write_file("dupkey.ini", "[a]\ncount = 8\nflag = no\ncount = 16\n");
	CHECK(conf_load_file(&tab, &v, p, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ":4: \"count\" is set a second time in [a] (first on line 2)"));
	CHECK(conf_load_file(&tab, &v, "/nonexistent/x.ini", err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "/nonexistent/x.ini: cannot open: No such file or directory"));

	/* round trip: print the INI of non-default values, load it into defaults */
	{
		struct s w;
		char path[256];
		FILE *f;

		conf_set_arg(&tab, &v, "ratio=3.25", err, sizeof(err));
		snprintf(path, sizeof(path), "%s/round.ini", tmpdir);
		f = fopen(path, "w");
		conf_print_ini(f, &tab, &v);
		fclose(f);
		conf_defaults(&tab, &w);
		ret = conf_load_file(&tab, &w, path, err, sizeof(err));
		if (ret)
			fprintf(stderr, "%s\n", err);
		CHECK(ret == 0);
		CHECK(memcmp(&v, &w, sizeof(v)) == 0);
		unlink(path);
	}
	unlink(write_file("ok.ini", ""));
	unlink(write_file("bad.ini", ""));
	unlink(write_file("unk.ini", ""));
	unlink(write_file("nosec.ini", ""));
	unlink(write_file("dupsec.ini", ""));
	unlink(write_file("dupkey.ini", ""));
	unlink(write_file("syntax.ini", ""));
	rmdir(tmpdir);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
