/*
 * testbed.h -- the test bed of `pgload compare` (testbed.c): a work
 * directory that holds everything a comparison makes, the back ends its
 * clusters run on, and the clean-up that removes it all, even after a run
 * that was killed.
 *
 * Layout: everything lives under one work directory
 * /tmp/pgload-compare.XXXXXX (WD): the state file "state" ("pid N" of the
 * owner, then one "dir PATH" line per directory made elsewhere, written
 * before the directory is made), and the directories the caller makes in
 * it (pgl_testbed_mkdir()), in which back ends put their images and mount
 * points.
 *
 * What must stay true: after pgl_testbed_destroy() no mount, loop device,
 * image, process or directory made in the test bed remains.  The clean-up
 * does not trust memory alone: it kills processes whose command line names
 * WD or a recorded directory, unmounts every mount under WD (deepest
 * first), detaches loop devices whose backing file is under WD and removes
 * the directories.  pgl_testbed_create() does the same for the work
 * directories of earlier runs whose owner is dead (killed with SIGKILL,
 * power loss).
 *
 * A back end is one row of a table in testbed.c: its names, what to check
 * before anything is made (root, programs), how to set it up and, if more
 * than the generic tear-down (unmount, detach, remove) is needed, how to
 * tear it down.  Errors follow pgload_i.h: -errno after saying why.
 */
#ifndef PGLOAD_TESTBED_H
#define PGLOAD_TESTBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many directories outside WD are recorded (and cleaned). */
#define PGL_TESTBED_MAX_DIRS 128

struct pgl_testbed;
struct pgl_backend_ops;

/*
 * pgl_testbed_create() -- clean up after earlier runs whose owner is gone
 * (saying so), then make a fresh work directory and its state file.
 * Returns 0 and sets *out, or -errno.
 */
int pgl_testbed_create(struct pgl_testbed **out);

/* pgl_testbed_dir() -- the work directory. */
const char *pgl_testbed_dir(const struct pgl_testbed *tb);

/*
 * pgl_testbed_mkdir() -- make WD/NAME (mode 0711: the server user may pass
 * through it) and put its path into PATH.  Returns 0 or -errno.
 */
int pgl_testbed_mkdir(struct pgl_testbed *tb, const char *name, char *path, size_t cap);

/*
 * pgl_testbed_destroy() -- remove everything made in the test bed: its
 * processes, mounts, loop devices and directories.  Returns how many
 * things were still there (0: the back ends were all torn down already).
 * Accepts NULL.
 */
int pgl_testbed_destroy(struct pgl_testbed *tb);

/* A back end as named on the command line. */
struct pgl_backend_spec {
	const struct pgl_backend_ops *ops;
	char name[16];	  /* ext2, ext3, ext4, xfs, tmpfs, dir */
	const char *path; /* dir:PATH, else NULL */
};

/*
 * pgl_backend_parse() -- ARG ("ext4", "tmpfs", "dir:/srv/x", ...) into
 * *OUT.  Returns 0, or -EINVAL / -ENOTDIR after saying why.
 */
int pgl_backend_parse(const char *arg, struct pgl_backend_spec *out);

/*
 * pgl_backend_check() -- what the back end needs (root, mkfs, losetup),
 * before anything is made.  Returns 0 or -errno after saying why.
 */
int pgl_backend_check(const struct pgl_backend_spec *spec);

/* A back end set up in the test bed. */
struct pgl_backend;

/*
 * pgl_backend_up() -- set up back end SPEC of SIZE bytes (images, tmpfs)
 * in directory DIR of the test bed; pgl_backend_root() is then a fresh
 * directory on it that the server user may use.  Each step starts with
 * pgl_step().  On failure what was made is torn down.  Returns 0 and sets
 * *out, or -errno.
 */
int pgl_backend_up(struct pgl_testbed *tb, const struct pgl_backend_spec *spec, const char *dir,
		   uint64_t size, struct pgl_backend **out);

/* pgl_backend_root() -- the back end's directory. */
const char *pgl_backend_root(const struct pgl_backend *be);

/* pgl_backend_down() -- unmount, detach, remove what pgl_backend_up() made; accepts NULL. */
int pgl_backend_down(struct pgl_backend *be);

#endif /* PGLOAD_TESTBED_H */
