/*
 * mountinfo.h -- the one reader of /proc/self/mountinfo, and the test of a
 * path being below a directory (shared by all modules).
 *
 * A line of mountinfo (proc(5)):
 *   ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
 * Paths in it escape space, tab, newline and backslash as \ooo; the reader
 * undoes that.  Lines come parents first; a mount made later at the same
 * point is listed later and hides the earlier one.
 */
#ifndef PGIOFS_MOUNTINFO_H
#define PGIOFS_MOUNTINFO_H

#include <limits.h>
#include <stdbool.h>

/* One mount. */
struct mountinfo {
	unsigned major, minor; /* st_dev of the mounted file system */
	char point[PATH_MAX];  /* the mount point, unescaped */
	char fstype[64];       /* "ext4", "tmpfs", "fuse.pgiofs", ... */
	char super[256];       /* the super block's options ("rw,user_id=0,..."), cut to fit */
};

/*
 * mountinfo_each() -- call FN(M, ARG) for every well-formed line of FILE
 * (NULL: /proc/self/mountinfo), in order, until FN returns non-zero.
 * Returns 0, what FN returned, or -errno if FILE cannot be read.
 */
int mountinfo_each(const char *file, int (*fn)(const struct mountinfo *m, void *arg), void *arg);

/*
 * mountinfo_find() -- the mount that holds absolute path PATH as FILE (NULL:
 * /proc/self/mountinfo) lists it: the deepest mount point at or above PATH,
 * of equal ones the last (the one on top); with EXACT, the last mounted at
 * PATH itself.  Returns 1 with *OUT filled, 0 if there is none, or -errno.
 */
int mountinfo_find(const char *file, const char *path, bool exact, struct mountinfo *out);

/*
 * path_is_under() -- PATH is DIR or below it (both absolute and canonical;
 * "/" holds every absolute path).
 */
bool path_is_under(const char *path, const char *dir);

#endif
