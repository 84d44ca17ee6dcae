/*
 * mount.c -- what pgiofs checks before mounting, and the tuning of the
 * mount's backing-device info (bdi) after.
 *
 * The checks refuse, before anything is mounted, every set-up that would
 * lose data or loop: a backing directory that is missing or already served
 * by pgiofs, a mount point that is missing or not empty, or either directory
 * inside the other.
 */
#include "pgiofs_i.h"
#include "mountinfo.h"
#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* pfs_find_mount() -- the mount that contains absolute path @path (the
 * longest mount point that is a prefix of it), or the one exactly at it when
 * @exact.  Returns 0, or -ENOENT. */
int pfs_find_mount(const char *path, bool exact, struct pfs_mount_info *out)
{
	struct mountinfo m;
	const char *uid;
	int ret = mountinfo_find(NULL, path, exact, &m);

	if (ret <= 0)
		return ret < 0 ? ret : -ENOENT;
	snprintf(out->point, sizeof(out->point), "%s", m.point);
	snprintf(out->fstype, sizeof(out->fstype), "%s", m.fstype);
	out->major = m.major;
	out->minor = m.minor;
	/* FUSE mounts name their owner in the super options */
	uid = strstr(m.super, "user_id=");
	out->user_id = uid && (uid == m.super || uid[-1] == ',') ? strtol(uid + 8, NULL, 10) : -1;
	return 0;
}

static int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

int pgiofs_check_paths(const char *backing, const char *mountpoint, bool nonempty, char *err,
		       size_t errlen)
{
	char rb[PATH_MAX], rm[PATH_MAX];
	struct pfs_mount_info m;
	struct stat st;
	int ret;

	if (stat(backing, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "backing directory \"%s\": %s", backing, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "backing directory \"%s\": not a directory", backing);
		return -ENOTDIR;
	}
	if (stat(mountpoint, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "mount point \"%s\": %s", mountpoint, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "mount point \"%s\": not a directory", mountpoint);
		return -ENOTDIR;
	}
	if (!realpath(backing, rb) || !realpath(mountpoint, rm)) {
		ret = -errno;
		snprintf(err, errlen, "cannot resolve \"%s\" or \"%s\": %s", backing, mountpoint,
			 strerror(-ret));
		return ret;
	}
	if (path_is_under(rm, rb)) {
		snprintf(err, errlen,
			 "mount point \"%s\" is inside the backing directory \"%s\" (the mount "
			 "would contain itself)",
			 mountpoint, backing);
		return -EINVAL;
	}
	if (path_is_under(rb, rm)) {
		snprintf(err, errlen,
			 "backing directory \"%s\" is inside the mount point \"%s\" (it would be "
			 "hidden by the mount)",
			 backing, mountpoint);
		return -EINVAL;
	}
	if (pfs_find_mount(rb, false, &m) == 0 && strcmp(m.fstype, "fuse.pgiofs") == 0) {
		snprintf(err, errlen,
			 "backing directory \"%s\" is already on the pgiofs mount \"%s\" (mount "
			 "its backing directory instead)",
			 backing, m.point);
		return -EINVAL;
	}
	if (!nonempty) {
		ret = dir_is_empty(rm);
		if (ret < 0) {
			snprintf(err, errlen, "mount point \"%s\": %s", mountpoint, strerror(-ret));
			return ret;
		}
		if (!ret) {
			snprintf(err, errlen,
				 "cannot mount \"%s\": mount point is not empty (use -o nonempty)",
				 mountpoint);
			return -ENOTEMPTY;
		}
	}
	return 0;
}

int pfs_mount_dev(const char *mountpoint, unsigned *major, unsigned *minor)
{
	char rm[PATH_MAX];
	struct pfs_mount_info m;
	int ret;

	if (!realpath(mountpoint, rm))
		return -errno;
	ret = pfs_find_mount(rm, true, &m);
	if (ret < 0)
		return ret;
	*major = m.major;
	*minor = m.minor;
	return 0;
}

static void write_bdi(unsigned maj, unsigned min, const char *knob, int64_t value)
{
	char path[128], val[32];
	int fd, n;

	if (value < 0)
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/%s", maj, min, knob);
	n = snprintf(val, sizeof(val), "%lld\n", (long long)value);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, val, (size_t)n) != n)
		log_msg(LOG_WARNING, "cannot set %s to %lld: %s", path, (long long)value,
			strerror(errno));
	if (fd >= 0)
		close(fd);
}

void pfs_tune_bdi(const struct pfs *fs, const char *mountpoint)
{
	unsigned maj, min;

	if (!fs->is_root)
		return;
	if (pfs_mount_dev(mountpoint, &maj, &min) < 0) {
		log_msg(LOG_WARNING, "cannot find the mount of \"%s\" in mountinfo; bdi left as is",
			mountpoint);
		return;
	}
	write_bdi(maj, min, "read_ahead_kb", fs->set.read_ahead_kb);
	write_bdi(maj, min, "max_ratio", fs->set.max_ratio);
	write_bdi(maj, min, "strict_limit", fs->set.strict_limit);
}

/* read_flag() -- the 0 or 1 in sysfs file @path, or -errno. */
static int read_flag(const char *path)
{
	char buf[8] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	return buf[0] == '1';
}

/* driver_is() -- whether the driver of the disk at sysfs path @disk is
 * @driver. */
static bool driver_is(const char *disk, const char *driver)
{
	char path[PATH_MAX + 32], real[PATH_MAX];
	const char *base;

	snprintf(path, sizeof(path), "%s/device/driver", disk);
	if (!realpath(path, real))
		return false;
	base = strrchr(real, '/');
	return strcmp(base ? base + 1 : real, driver) == 0;
}

int pfs_dev_disk(dev_t dev, char *disk, size_t len, char *name, size_t name_len)
{
	char link[64], path[PATH_MAX + 32], real[PATH_MAX];
	const char *base;

	name[0] = '\0';
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (!realpath(link, real))
		return -1;
	/* a partition has no queue of its own: its disk's is one level up */
	snprintf(path, sizeof(path), "%s/partition", real);
	snprintf(disk, len, access(path, F_OK) == 0 ? "%s/.." : "%s", real);
	base = strrchr(real, '/');
	snprintf(name, name_len, "%s", base ? base + 1 : real);
	return 0;
}

enum pfs_medium pfs_dev_medium(dev_t dev, char *name, size_t len)
{
	char path[PATH_MAX + 32], disk[PATH_MAX + 8];
	int flag;

	if (pfs_dev_disk(dev, disk, sizeof(disk), name, len) < 0)
		return PFS_MEDIUM_NONE;
	snprintf(path, sizeof(path), "%s/queue/rotational", disk);
	flag = read_flag(path);
	if (flag < 0) {
		name[0] = '\0';
		return PFS_MEDIUM_NONE;
	}
	if (flag == 0)
		return PFS_MEDIUM_SOLID;
	return driver_is(disk, "virtio_blk") ? PFS_MEDIUM_UNKNOWN : PFS_MEDIUM_ROTATIONAL;
}

#define SEEK_READS 16
#define SEEK_BLOCK 4096u

/* open_dev() -- block device @dev for O_DIRECT reads, by /dev/block/M:m
 * (udev's link) or /dev/NAME (its sysfs name), whichever is that device;
 * the descriptor or -errno. */
static int open_dev(dev_t dev)
{
	char path[2][PATH_MAX + 16], disk[PATH_MAX + 8], name[NAME_MAX + 1];
	int err = -ENOENT;

	snprintf(path[0], sizeof(path[0]), "/dev/block/%u:%u", major(dev), minor(dev));
	path[1][0] = '\0';
	if (pfs_dev_disk(dev, disk, sizeof(disk), name, sizeof(name)) == 0 && *name)
		snprintf(path[1], sizeof(path[1]), "/dev/%s", name);
	for (int i = 0; i < 2; i++) {
		struct stat st;
		int fd;

		if (!*path[i])
			continue;
		fd = open(path[i], O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			if (errno != ENOENT || err == -ENOENT)
				err = -errno;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
			return fd;
		close(fd);
	}
	return err;
}

int pfs_dev_seek_us(dev_t dev)
{
	double us[SEEK_READS];
	struct stats_summary sum;
	uint64_t size = 0, blocks;
	void *buf = NULL;
	int fd, err = 0;

	fd = open_dev(dev);
	if (fd < 0)
		return fd;
	if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
		err = -errno;
		goto out;
	}
	blocks = size / SEEK_BLOCK;
	if (blocks < 2 * (SEEK_READS + 1)) {
		err = -EINVAL; /* too small to seek on */
		goto out;
	}
	if (posix_memalign(&buf, SEEK_BLOCK, SEEK_BLOCK) != 0) {
		err = -ENOMEM;
		goto out;
	}
	/* read i goes to the block (i * 7 mod 17) / 17 of the way in: every
	 * read a jump of at least a seventeenth of the disk from the one
	 * before, back and forth, none of them twice */
	for (int i = 0; i <= SEEK_READS; i++) {
		uint64_t slot = (uint64_t)(i * 7 % (SEEK_READS + 1));
		off_t off = (off_t)(slot * (blocks / (SEEK_READS + 1)) * SEEK_BLOCK);
		uint64_t t0 = ios_now_ns();
		ssize_t n = pread(fd, buf, SEEK_BLOCK, off);

		if (n != (ssize_t)SEEK_BLOCK) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		if (i > 0) /* the first: the device may wake from idle */
			us[i - 1] = (double)(ios_now_ns() - t0) / 1000;
	}
	stats_summarize(us, SEEK_READS, &sum);
	err = sum.median < 1 ? 1 : sum.median > INT32_MAX ? INT32_MAX : (int)sum.median;
out:
	free(buf);
	close(fd);
	return err;
}

int pfs_run_fusermount(const char *flags, const char *mountpoint)
{
	char *argv[] = {"fusermount3", (char *)flags, "-q", "--", (char *)mountpoint, NULL};
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
