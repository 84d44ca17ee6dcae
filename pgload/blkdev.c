/*
 * blkdev.c -- a real block device as a back end of `pgload compare`
 * (dev:DEVICE:FS, testbed.h): whether pgload may make a file system on it,
 * destroying what it holds.
 *
 * What must stay true: pgload never writes to a device the user did not
 * name twice (in the back end and in --destroy-device, compared as device
 * numbers, so that /dev/disk/by-id/... and /dev/sdb1 are the same), nor to
 * one the running system uses: one that carries the root file system (on
 * it, on a partition of it, or under a device built on it), one mounted,
 * in use as swap or by a holder (LVM, md, dm-crypt, bcache: the kernel's
 * holders/ directories), a whole disk with a partition table, or one that
 * another program has opened exclusively.  Everything is judged from
 * sysfs, /proc and the device's first sectors (blkid), before anything is
 * set up; the exclusive open at the end catches what the names miss (a
 * btrfs mount, whose device numbers are not the disk's).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pgload_i.h"
#include "testbed.h"

#define MAX_DEVS 64 /* the device, its partitions and what is built on them */

/* The device numbers a device stands for, and the names in sysfs. */
struct devset {
	dev_t dev[MAX_DEVS];
	char name[MAX_DEVS][64];
	int n, nown; /* all; the device and its partitions (the rest: holders) */
};

/* sysfs_dev() -- the device number in sysfs file PATH ("8:17"), or 0. */
static dev_t sysfs_dev(const char *path)
{
	unsigned maj, min;
	FILE *f = fopen(path, "r");
	int n = f ? fscanf(f, "%u:%u", &maj, &min) : 0;
	if (f)
		fclose(f);
	return n == 2 ? makedev(maj, min) : 0;
}

/* devset_add() -- NAME (a name of /sys/class/block) into S once; its
 * device number 0 if sysfs does not give it. */
static void devset_add(struct devset *s, const char *name)
{
	char path[320];
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	dev_t d = sysfs_dev(path);
	for (int i = 0; i < s->n; i++)
		if ((d && s->dev[i] == d) || strcmp(s->name[i], name) == 0)
			return;
	if (s->n == MAX_DEVS)
		return;
	s->dev[s->n] = d;
	snprintf(s->name[s->n++], sizeof(s->name[0]), "%s", name);
}

static bool devset_has(const struct devset *s, dev_t d)
{
	for (int i = 0; i < s->n; i++)
		if (d && s->dev[i] == d)
			return true;
	return false;
}

/* each_entry() -- the names in directory DIR but "." and "..", to FN. */
static void each_entry(const char *dir, void (*fn)(struct devset *, const char *, const char *),
		       struct devset *s, const char *arg)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			fn(s, de->d_name, arg);
	if (d)
		closedir(d);
}

/* add_partition() -- NAME, an entry of a whole disk's sysfs directory WHOLE,
 * if it is a partition. */
static void add_partition(struct devset *s, const char *name, const char *whole)
{
	char path[512];
	snprintf(path, sizeof(path), "/sys/class/block/%s/%s/partition", whole, name);
	if (access(path, F_OK) == 0)
		devset_add(s, name);
}

static void add_holder(struct devset *s, const char *name, const char *unused)
{
	devset_add(s, name);
}

/*
 * devset_of() -- device NAME (of /sys/class/block), its partitions if it is
 * a whole disk, and every device built on any of them (holders, followed
 * to the top).
 */
static void devset_of(struct devset *s, const char *name, bool whole)
{
	char dir[320];
	memset(s, 0, sizeof(*s));
	devset_add(s, name);
	if (whole) {
		snprintf(dir, sizeof(dir), "/sys/class/block/%s", name);
		each_entry(dir, add_partition, s, name);
	}
	s->nown = s->n;
	for (int i = 0; i < s->n; i++) {
		snprintf(dir, sizeof(dir), "/sys/class/block/%s/holders", s->name[i]);
		each_entry(dir, add_holder, s, NULL);
	}
}

/* What find_mount() looks for, and what it found. */
struct mount_hit {
	const struct devset *s;
	char point[PATH_MAX];
};

static int mount_on(const struct mountinfo *mi, void *arg)
{
	struct mount_hit *h = arg;
	if (!mi->major || !devset_has(h->s, makedev(mi->major, mi->minor)))
		return 0;
	snprintf(h->point, sizeof(h->point), "%s", mi->point);
	return 1;
}

/* swap_on() -- a line of /proc/swaps naming a device of S, into WHAT. */
static bool swap_on(const struct devset *s, char *what, size_t cap)
{
	char line[PATH_MAX + 128], path[PATH_MAX];
	struct stat st;
	bool hit = false;
	FILE *f = fopen("/proc/swaps", "r");
	while (f && !hit && fgets(line, sizeof(line), f))
		if (sscanf(line, "%4095s", path) == 1 && path[0] == '/' && stat(path, &st) == 0 &&
		    S_ISBLK(st.st_mode) && devset_has(s, st.st_rdev)) {
			snprintf(what, cap, "%s", path);
			hit = true;
		}
	if (f)
		fclose(f);
	return hit;
}

/* root_dev() -- the device number of the file system mounted at /, or 0. */
static dev_t root_dev(void)
{
	struct mountinfo mi;
	if (mountinfo_find(NULL, "/", true, &mi) != 1 || !mi.major)
		return 0;
	return makedev(mi.major, mi.minor);
}

/* same_device() -- PATH is block device number D. */
static bool same_device(const char *path, dev_t d)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == d;
}

int pgl_blkdev_check(const char *what, const char *dev, const char *const *destroy)
{
	struct stat st;
	char sys[320], name[64], found[PATH_MAX];
	struct devset s;
	if (stat(dev, &st) < 0) {
		int e = errno;
		fprintf(stderr, "pgload compare: back end \"%s\": %s: %s\n", what, dev,
			strerror(e));
		return -e;
	}
	if (!S_ISBLK(st.st_mode)) {
		fprintf(stderr, "pgload compare: back end \"%s\": %s is not a block device\n", what,
			dev);
		return -ENOTBLK;
	}
	bool named = false;
	for (int i = 0; destroy && destroy[i] && !named; i++)
		named = same_device(destroy[i], st.st_rdev);
	if (!named) {
		fprintf(stderr,
			"pgload compare: back end \"%s\" makes a file system afresh on %s for each "
			"cell, destroying what it holds: give --destroy-device %s to allow it\n",
			what, dev, dev);
		return -EPERM;
	}
	/* its name in sysfs, and whether it is a partition */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	char *real = realpath(sys, NULL);
	const char *base = real ? strrchr(real, '/') : NULL;
	snprintf(name, sizeof(name), "%s", base ? base + 1 : "");
	free(real);
	snprintf(sys, sizeof(sys), "/sys/class/block/%s/partition", name);
	bool partition = access(sys, F_OK) == 0;
	if (!name[0]) {
		fprintf(stderr, "pgload compare: back end \"%s\": %s is not in /sys/dev/block\n",
			what, dev);
		return -ENODEV;
	}
	devset_of(&s, name, !partition);

	dev_t root = root_dev();
	if (root && devset_has(&s, root)) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": %s carries the file system of the "
			"running system (/ is on %s)\n",
			what, dev, s.name[0]);
		return -EBUSY;
	}
	struct mount_hit h = {.s = &s};
	if (mountinfo_each(NULL, mount_on, &h) == 1) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": %s is mounted (%s or a device on it is "
			"mounted at %s): unmount it first\n",
			what, dev, s.name[0], h.point);
		return -EBUSY;
	}
	if (swap_on(&s, found, sizeof(found))) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": %s is in use as swap (%s in "
			"/proc/swaps)\n",
			what, dev, found);
		return -EBUSY;
	}
	if (s.n > s.nown) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": %s is in use by %s (a holder in sysfs: "
			"LVM, md, dm-crypt or the like is built on it)\n",
			what, dev, s.name[s.nown]);
		return -EBUSY;
	}
	if (!partition) {
		char out[256] = "";
		char *blkid[] = {"blkid", "-p", "-o", "value", "-s", "PTTYPE", (char *)dev, NULL};
		if (s.nown > 1)
			snprintf(out, sizeof(out), "partitions such as %s", s.name[1]);
		else if (pgl_run_cmd(blkid, out, sizeof(out)) == 0 && out[0])
			out[strcspn(out, "\n")] = '\0';
		else
			out[0] = '\0';
		if (out[0]) {
			fprintf(stderr,
				"pgload compare: back end \"%s\": %s holds a partition table (%s): "
				"name a partition, not the whole disk\n",
				what, dev, out);
			return -EBUSY;
		}
	}
	int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, "pgload compare: back end \"%s\": %s is in use: %s\n", what, dev,
			e == EBUSY ? "another program holds it open exclusively" : strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

int pgl_blkdev_same(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return -errno;
	return S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode) && sa.st_rdev == sb.st_rdev;
}
