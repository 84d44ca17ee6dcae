/*
 * profile.c -- where a scheduler profile named on the command line is found
 * (pgiofs --profile, pgiofs trace --replay --profile): the same lookup for
 * both, so a name means the same file wherever it is given.
 */
#include "pgiofs_i.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* profile_dirs() -- the directories searched for NAME.conf, in order:
 * $PGIOFS_PROFILE_DIR, next to the binary (../config/profiles in a build
 * tree, ../share/pgiofs/profiles installed) and /etc/pgiofs/profiles.
 * Returns how many were put in @dirs. */
static int profile_dirs(char dirs[][PATH_MAX + 64], int max)
{
	const char *rel[] = {"/../config/profiles", "/../share/pgiofs/profiles",
			     "/../../config/profiles"};
	const char *env = getenv("PGIOFS_PROFILE_DIR");
	char exe[PATH_MAX], *slash;
	int n = 0;
	ssize_t len;
	size_t i;

	if (env && *env && n < max)
		snprintf(dirs[n++], sizeof(dirs[0]), "%s", env);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]) && n < max; i++)
			snprintf(dirs[n++], sizeof(dirs[0]), "%s%s", exe, rel[i]);
	}
	if (n < max)
		snprintf(dirs[n++], sizeof(dirs[0]), "/etc/pgiofs/profiles");
	return n;
}

/* pfs_find_profile() -- the file of profile @name: a path if it has a '/',
 * else NAME.conf in the first of profile_dirs() that has it. */
int pfs_find_profile(const char *name, char *out, size_t len)
{
	char dirs[8][PATH_MAX + 64];
	int i, n;

	if (strchr(name, '/'))
		return realpath(name, out) ? 0 : -errno;
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != strlen(name))
		return -EINVAL;
	n = profile_dirs(dirs, 8);
	for (i = 0; i < n; i++) {
		char file[PATH_MAX + 128];

		if (snprintf(file, sizeof(file), "%s/%s.conf", dirs[i], name) >= (int)sizeof(file))
			return -ENAMETOOLONG;
		if (access(file, R_OK) == 0 && realpath(file, out) && strlen(out) < len)
			return 0;
	}
	return -ENOENT;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pfs_list_profiles(char *out, size_t len)
{
	char dirs[8][PATH_MAX + 64], *names[64];
	int i, n = profile_dirs(dirs, 8), k = 0;
	size_t used = 0;

	*out = '\0';
	for (i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d)) && k < 64) {
			size_t l = strlen(e->d_name);
			int j;

			if (l <= 5 || strcmp(e->d_name + l - 5, ".conf") != 0)
				continue;
			for (j = 0; j < k; j++) /* the same name in two directories */
				if (strlen(names[j]) == l - 5 &&
				    !strncmp(names[j], e->d_name, l - 5))
					break;
			if (j == k && (names[k] = strndup(e->d_name, l - 5)))
				k++;
		}
		closedir(d);
	}
	qsort(names, (size_t)k, sizeof(names[0]), cmp_names);
	for (i = 0; i < k; i++) {
		if (used + strlen(names[i]) + 3 < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "",
						 names[i]);
		free(names[i]);
	}
}

void pfs_profile_error(const char *prog, const char *name, int err)
{
	char known[512];

	pfs_list_profiles(known, sizeof(known));
	fprintf(stderr, "%s: profile \"%s\": %s (profiles: %s)\n", prog, name,
		err == -EINVAL	 ? "not a profile name"
		: err == -ENOENT ? "no such profile"
				 : strerror(-err),
		*known ? known : "none installed");
}
