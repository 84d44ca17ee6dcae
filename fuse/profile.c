/*
 * profile.c -- where a scheduler profile named on the command line is found
 * (pgiofs --profile, pgiofs trace --replay --profile): the same lookup for
 * both, so a name means the same file wherever it is given.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* pfs_find_profile() -- the file of profile @name: a path if it has a '/',
 * else NAME.conf in $PGIOFS_PROFILE_DIR, next to the binary
 * (../config/profiles, ../share/pgiofs/profiles) or /etc/pgiofs/profiles. */
int pfs_find_profile(const char *name, char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	const char *env = getenv("PGIOFS_PROFILE_DIR");
	const char *rel[] = {"/../config/profiles", "/../share/pgiofs/profiles",
			     "/../../config/profiles"};
	ssize_t n;
	size_t i;

	if (strchr(name, '/'))
		return realpath(name, out) ? 0 : -errno;
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != strlen(name))
		return -EINVAL;
	if (env) {
		snprintf(out, len, "%s/%s.conf", env, name);
		if (access(out, R_OK) == 0)
			return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char dir[PATH_MAX + 64];

			snprintf(dir, sizeof(dir), "%s%s/%s.conf", exe, rel[i], name);
			if (access(dir, R_OK) == 0 && realpath(dir, out))
				return 0;
		}
	}
	snprintf(out, len, "/etc/pgiofs/profiles/%s.conf", name);
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}
