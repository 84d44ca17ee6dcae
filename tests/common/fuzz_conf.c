/*
 * fuzz_conf.c -- libFuzzer target for the INI configuration parser
 * (common/conf.c, with iosched's tunables table).
 *
 * Built by tests/common/test_fuzz.sh with clang -fsanitize=fuzzer,address
 * (the top-level Makefile has no rule for it).  Every input, as a file and
 * as a command-line override, must be handled without a crash, leak or
 * overflow; loading is all or nothing (a refused file leaves the settings
 * as they were and says why, naming the file); and an accepted file's
 * values survive conf_print_ini() and a second load unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "iosched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* load() -- @data as a config file over @set; conf_load_file()'s return. */
static int load(int fd, const void *data, size_t size, struct ios_settings *set, char *err)
{
	char path[64];

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = '\0';
	return conf_load_file(&ios_conf, set, path, err, CONF_ERR_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct ios_settings set, before, again;
	char err[CONF_ERR_MAX], *arg, *ini = NULL;
	size_t ini_len = 0;
	FILE *f;

	if (fd < 0)
		fd = memfd_create("fuzz_conf", 0);
	if (fd < 0 || conf_defaults(&ios_conf, &set) < 0)
		abort();
	before = set;
	if (load(fd, data, size, &set, err) < 0) {
		/* all or nothing, and the reason names the file */
		if (memcmp(&set, &before, sizeof(set)) != 0 ||
		    strncmp(err, "/proc/self/fd/", 14) != 0)
			abort();
	} else {
		/* what was accepted prints and loads back to the same values */
		f = open_memstream(&ini, &ini_len);
		if (!f)
			abort();
		conf_print_ini(f, &ios_conf, &set);
		fclose(f);
		conf_defaults(&ios_conf, &again);
		if (load(fd, ini, ini_len, &again, err) < 0)
			abort();
		for (size_t i = 0; i < ios_conf.nrows; i++) {
			char a[CONF_STR_MAX + 32], b[CONF_STR_MAX + 32];

			conf_format(&ios_conf.rows[i], &set, a, sizeof(a));
			conf_format(&ios_conf.rows[i], &again, b, sizeof(b));
			if (strcmp(a, b) != 0)
				abort();
		}
		free(ini);
	}
	/* the same bytes as a --set override */
	arg = strndup((const char *)data, size);
	if (!arg)
		abort();
	conf_defaults(&ios_conf, &set);
	before = set;
	if (conf_set_arg(&ios_conf, &set, arg, err, sizeof(err)) < 0 &&
	    memcmp(&set, &before, sizeof(set)) != 0)
		abort();
	free(arg);
	return 0;
}
