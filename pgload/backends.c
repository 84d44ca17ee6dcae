/*
 * backends.c -- the back ends of `pgload compare`'s test bed (see
 * testbed.h): file system images on loop devices, file systems on a disk
 * modelled by pgdisk, tmpfs, a directory; each an ops table, set up in a
 * directory of the test bed and torn down with its helpers (testbed.c).
 *
 * A modelled disk is a stack, set up bottom up and torn down top down:
 * the image, pgdisk serving it at DIR/disk (a daemon, started as a
 * program), a loop device with direct I/O on DIR/disk/disk, its queue
 * (elevator, tunables), the file system made on the loop device, mounted
 * at DIR/fs.  pgdisk is stopped only after the loop device is gone: while
 * the device is attached, its mount cannot go.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pwd.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pgload_i.h"
#include "testbed.h"

struct pgl_backend {
	struct pgl_testbed *tb;
	const struct pgl_backend_spec *spec;
	const struct pgl_backend_opts *o;
	char dir[256];			     /* the caller's directory in the test bed */
	char root[1024];		     /* the back end's directory for the cluster */
	char img[1100];			     /* a file system or disk image, or "" */
	char blkdev[128];		     /* the block device the file system is on, or "" */
	bool loop;			     /* blkdev is a loop device made here */
	struct pgl_queue_state queue_before; /* its queue before setup_queue(), to restore */
	bool queue_changed;
	char diskmnt[300]; /* pgdisk's mount point (model back ends), or "" */
	char imgdir[300];  /* the tmpfs holding a modelled disk's image, or "" */
	char mnt[300];	   /* the file system's (or tmpfs's) mount point, once mounted */
	bool mounted;
};

/* One kind of back end. */
struct pgl_backend_ops {
	/* check() -- before anything is made (NULL: nothing to check); DESTROY:
	 * the devices --destroy-device names, NULL-terminated */
	int (*check)(const struct pgl_backend_spec *spec, const char *const *destroy);
	/* up() -- set BE up: be->root is then a fresh directory on it */
	int (*up)(struct pgl_backend *be);
	/* down() -- more than the generic tear-down, after it (NULL: none) */
	void (*down)(struct pgl_backend *be);
	bool blockdev; /* a file system on a block device (a loop device, or the user's) */
};

/* ---- back ends ------------------------------------------------------------ */

/* fresh_dir() -- a new directory TEMPLATE (mkdtemp) recorded in the state file. */
static int fresh_dir(struct pgl_backend *be, const char *template)
{
	int ret;
	snprintf(be->root, sizeof(be->root), "%s", template);
	if (!mkdtemp(be->root)) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not create a directory \"%s\": %s\n",
			template, strerror(-ret));
		be->root[0] = '\0';
		return ret;
	}
	if ((ret = pgl_testbed_record(be->tb, be->root)) < 0) {
		rmdir(be->root);
		be->root[0] = '\0';
		return ret;
	}
	chmod(be->root, 0711);
	return 0;
}

/* dir:PATH -- a fresh subdirectory of PATH. */
static int dir_up(struct pgl_backend *be)
{
	char template[1100];
	snprintf(template, sizeof(template), "%s/pgload-compare.XXXXXX", be->spec->path);
	return fresh_dir(be, template);
}

/* tmpfs -- mounted at DIR/fs; without root, a fresh directory of /dev/shm. */
static int tmpfs_up(struct pgl_backend *be)
{
	char fs[300], opts[64];
	int ret;
	snprintf(fs, sizeof(fs), "%s/fs", be->dir);
	if ((ret = pgl_testbed_mkdir_path(fs)) < 0)
		return ret;
	if (geteuid() != 0)
		return fresh_dir(be, "/dev/shm/pgload-compare.XXXXXX");
	snprintf(opts, sizeof(opts), "size=%llu,mode=0711", (unsigned long long)be->o->size);
	if (pgl_step("mount", "mounting a tmpfs at %s", fs))
		return -EINTR;
	if (mount("pgload-compare", fs, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not mount a tmpfs at \"%s\": %s\n", fs,
			strerror(-ret));
		return ret;
	}
	be->mounted = true;
	snprintf(be->mnt, sizeof(be->mnt), "%s", fs);
	snprintf(be->root, sizeof(be->root), "%s", fs);
	return 0;
}

/* loop_check() -- root, the back end's mkfs and losetup. */
static int loop_check(const struct pgl_backend_spec *spec, const char *const *destroy)
{
	char mkfs[32], path[4096];
	if (geteuid() != 0) {
		fprintf(stderr,
			"pgload compare: back end \"%s\" needs root (it makes a file system "
			"image and loop-mounts it); run as root, or use tmpfs or dir:PATH\n",
			spec->name);
		return -EPERM;
	}
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", spec->fs);
	if (pgl_which(mkfs, path, sizeof(path)) < 0) {
		fprintf(stderr, "pgload compare: back end \"%s\": no %s (install %s)\n", spec->name,
			mkfs, strcmp(spec->fs, "xfs") ? "e2fsprogs" : "xfsprogs");
		return -ENOENT;
	}
	if (pgl_which("losetup", path, sizeof(path)) < 0) {
		fprintf(stderr, "pgload compare: back end \"%s\": no losetup\n", spec->name);
		return -ENOENT;
	}
	return 0;
}

/* model_check() -- as loop_check() (but mkfs for an image), and /dev/fuse
 * for pgdisk. */
static int model_check(const struct pgl_backend_spec *spec, const char *const *destroy)
{
	struct pgl_backend_spec fresh = *spec;
	if (spec->path) /* its file system is there: it needs no mkfs */
		snprintf(fresh.fs, sizeof(fresh.fs), "ext2");
	int ret = loop_check(&fresh, destroy);
	if (ret == 0 && access("/dev/fuse", R_OK | W_OK) < 0) {
		ret = -errno;
		fprintf(stderr,
			"pgload compare: back end \"%s\": /dev/fuse: %s (pgdisk needs it)\n",
			spec->name, strerror(-ret));
	}
	return ret;
}

/* make_image() -- a sparse image BE->img of the back end's size, in
 * be->imgdir if there is one, else in be->dir. */
static int make_image(struct pgl_backend *be, const char *name)
{
	int ret;
	snprintf(be->img, sizeof(be->img), "%s/%s", be->imgdir[0] ? be->imgdir : be->dir, name);
	int fd = open(be->img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)be->o->size) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not create image \"%s\": %s\n", be->img,
			strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(fd);
	return 0;
}

/* mkfs() -- make the back end's file system on TARGET (an image or a device). */
static int mkfs(struct pgl_backend *be, const char *target)
{
	char mkfs[32];
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", be->spec->fs);
	/* on a modelled disk or the user's, the inode tables and the journal at
	 * once, not by a kernel thread under the runs (pgdisk.md) */
	char *xfs[] = {mkfs, "-q", "-f", (char *)target, NULL};
	char *ext[] = {mkfs, "-q", "-F", (char *)target, NULL};
	char *ext_now[] = {
	    mkfs, "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", (char *)target, NULL};
	char **argv = strcmp(be->spec->fs, "xfs") == 0	       ? xfs
		      : be->spec->model || be->spec->device[0] ? ext_now
							       : ext;
	if (pgl_step("mkfs", "running %s on %s", mkfs, target))
		return -EINTR;
	return pgl_run_ok("compare: mkfs", argv, NULL, 0);
}

static int setup_queue(struct pgl_backend *be);

/*
 * attach() -- a loop device on FILE with direct I/O, and its queue as the
 * options say.  Direct I/O: the loop device reads and writes the disk under
 * FILE, not a second copy of it in the page cache (without it a "cold"
 * read of the file system comes from memory, and the images of every cell
 * compete for it).  Where the file system under FILE has no direct I/O the
 * kernel keeps it off, and the run says so.
 */
static int attach(struct pgl_backend *be, const char *file)
{
	char out[256];
	int ret;
	char *los[] = {"losetup", "--direct-io=on", "--find", "--show", (char *)file, NULL};
	if (pgl_step("losetup", "attaching %s to a loop device", file))
		return -EINTR;
	if ((ret = pgl_run_ok("compare: losetup", los, out, sizeof(out))) < 0)
		return ret;
	/* the device, on a line of its own (a warning may come before it) */
	const char *dev = strstr(out, "/dev/loop");
	while (dev && dev != out && dev[-1] != '\n')
		dev = strstr(dev + 1, "/dev/loop");
	if (!dev) {
		fprintf(stderr, "pgload compare: losetup named no loop device for \"%s\": %s\n",
			file, out);
		return -EIO;
	}
	snprintf(be->blkdev, sizeof(be->blkdev), "%.*s", (int)strcspn(dev, "\n"), dev);
	be->loop = true;
	(void)pgl_loop_queue_fresh(be->blkdev);
	if (pgl_loop_direct_io(be->blkdev) != 1)
		fprintf(stderr,
			"pgload compare: %s: the loop device on \"%s\" could not use direct I/O "
			"(the file system under it has none): what it reads may come from the "
			"page cache\n",
			be->blkdev, file);
	return setup_queue(be);
}

/* setup_queue() -- the queue of BE's block device as the options say;
 * what it was is kept, and given back by pgl_backend_down().  A loop
 * device's queue outlives the device (the next one of its number keeps
 * what was set), so without that a --queue-set of one run would be what
 * the next run's cell on that number measures. */
static int setup_queue(struct pgl_backend *be)
{
	const struct pgl_queue_conf *q = &be->o->queue;
	int ret;
	if (!q->elevator && q->rotational < 0 && !(q->sets && q->sets[0]))
		return 0;
	if (pgl_step("queue", "setting up the queue of %s (elevator %s)", be->blkdev,
		     q->elevator ? q->elevator : "as it is"))
		return -EINTR;
	if ((ret = pgl_queue_read(be->blkdev, &be->queue_before)) < 0) {
		fprintf(stderr, "pgload compare: could not read the queue of %s: %s\n", be->blkdev,
			strerror(-ret));
		return ret;
	}
	be->queue_changed = true;
	return pgl_queue_apply(be->blkdev, q);
}

/* mount_fs() -- mount the block device at DIR/fs: the back end's root. */
static int mount_fs(struct pgl_backend *be)
{
	char fs[300];
	int ret;
	snprintf(fs, sizeof(fs), "%s/fs", be->dir);
	if ((ret = pgl_testbed_mkdir_path(fs)) < 0)
		return ret;
	if (pgl_step("mount", "mounting %s (%s) at %s", be->blkdev, be->spec->fs, fs))
		return -EINTR;
	if (mount(be->blkdev, fs, be->spec->fs, MS_NOSUID | MS_NODEV, NULL) < 0) {
		ret = -errno;
		fprintf(stderr, "pgload compare: could not mount %s (%s on %s) at \"%s\": %s\n",
			be->blkdev, be->spec->fs, be->img, fs, strerror(-ret));
		return ret;
	}
	be->mounted = true;
	snprintf(be->mnt, sizeof(be->mnt), "%s", fs);
	chmod(fs, 0711);
	snprintf(be->root, sizeof(be->root), "%s", fs);
	return 0;
}

/* ext2, ext3, ext4, xfs -- an image of SIZE in DIR on a loop device, mounted at DIR/fs. */
static int loop_up(struct pgl_backend *be)
{
	int ret;
	if ((ret = make_image(be, "fs.img")) < 0 || (ret = mkfs(be, be->img)) < 0 ||
	    (ret = attach(be, be->img)) < 0)
		return ret;
	return mount_fs(be);
}

/* copy_image() -- the user's image MODEL:IMAGE copied to BE->img (sparse): the
 * runs never write to the original. */
static int copy_image(struct pgl_backend *be)
{
	snprintf(be->img, sizeof(be->img), "%s/disk.img", be->imgdir[0] ? be->imgdir : be->dir);
	char *cp[] = {"cp", "--sparse=always", "--reflink=auto", (char *)be->spec->path, be->img,
		      NULL};
	if (pgl_step("copy", "copying the image %s", be->spec->path))
		return -EINTR;
	return pgl_run_ok("compare: copying the image", cp, NULL, 0);
}

/* mem_available() -- MemAvailable of /proc/meminfo in bytes, 0 if unknown. */
static uint64_t mem_available(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

/* image_tmpfs() -- a tmpfs of the image's size at DIR/pgdisk-image, for the
 * modelled disk's image: pgdisk then performs each request in memory, and
 * only the model decides how long it takes, whatever else the machine's
 * own disk is doing.  Where memory cannot hold the image (MemAvailable
 * under its size plus 1 GiB) or the mount fails, the image stays in DIR
 * and the run says so. */
static int image_tmpfs(struct pgl_backend *be)
{
	char dir[sizeof(be->imgdir)], opts[64];
	uint64_t size = be->o->size, avail = mem_available();
	struct stat st;
	int ret;
	if (be->spec->path && stat(be->spec->path, &st) == 0) /* a copy of the user's */
		size = (uint64_t)st.st_size;
	if (avail < size + (1ull << 30)) {
		fprintf(stderr,
			"pgload compare: the image of the modelled disk (%llu MiB) stays in %s, "
			"not in memory (%llu MiB available): how busy that disk is may show in "
			"the figures\n",
			(unsigned long long)(size >> 20), be->dir,
			(unsigned long long)(avail >> 20));
		return 0;
	}
	snprintf(dir, sizeof(dir), "%.250s/" PGL_IMAGE_TMPFS, be->dir);
	if ((ret = pgl_testbed_mkdir_path(dir)) < 0)
		return ret;
	snprintf(opts, sizeof(opts), "size=%llu,mode=0700", (unsigned long long)size);
	if (pgl_step("imgtmpfs", "mounting a tmpfs for the image at %s", dir))
		return -EINTR;
	if (mount("pgload-disk-image", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		fprintf(stderr,
			"pgload compare: could not mount a tmpfs for the modelled disk's image at "
			"\"%s\" (%s); it stays in %s\n",
			dir, strerror(errno), be->dir);
		return 0;
	}
	snprintf(be->imgdir, sizeof(be->imgdir), "%s", dir);
	return 0;
}

/*
 * hdd:FS, ssd:FS, and the capped volumes gp3:FS, gp2[:SIZE]:FS, io2:FS,
 * cloud:FS -- an image of SIZE in DIR served by pgdisk at DIR/disk, a loop
 * device with direct I/O on DIR/disk/disk, mkfs on it, mounted at DIR/fs.
 * MODEL:IMAGE -- the same with a copy of IMAGE and the file system on it,
 * no mkfs; the cluster goes in a fresh directory of it.
 */
static int model_up(struct pgl_backend *be)
{
	char disk[400];
	int ret;
	if ((ret = image_tmpfs(be)) < 0)
		return ret;
	if ((ret = be->spec->path ? copy_image(be) : make_image(be, "disk.img")) < 0)
		return ret;
	snprintf(be->diskmnt, sizeof(be->diskmnt), "%s/disk", be->dir);
	if ((ret = pgl_testbed_mkdir_path(be->diskmnt)) < 0)
		return ret;
	char *argv[8 + 2 * PGL_MAX_DISK_SETS];
	int n = 0;
	argv[n++] = (char *)be->o->pgdisk;
	argv[n++] = "--model";
	argv[n++] = (char *)be->spec->disk_model;
	for (int i = 0; be->o->disk_sets && be->o->disk_sets[i] && i < PGL_MAX_DISK_SETS; i++) {
		argv[n++] = "--set";
		argv[n++] = (char *)be->o->disk_sets[i];
	}
	argv[n++] = be->img;
	argv[n++] = be->diskmnt;
	argv[n] = NULL;
	if (pgl_step("pgdisk", "starting pgdisk (%s) on %s", be->spec->disk_model, be->img))
		return -EINTR;
	/* it returns once mounted and serves on in the background */
	if ((ret = pgl_run_ok("compare: pgdisk", argv, NULL, 0)) < 0)
		return ret;
	snprintf(disk, sizeof(disk), "%s/disk", be->diskmnt);
	if ((ret = attach(be, disk)) < 0 || (!be->spec->path && (ret = mkfs(be, be->blkdev)) < 0) ||
	    (ret = mount_fs(be)) < 0)
		return ret;
	if (be->spec->path) {
		char template[sizeof(be->root)];
		snprintf(template, sizeof(template), "%.999s/pgload-compare.XXXXXX", be->root);
		if (!mkdtemp(template)) {
			ret = -errno;
			fprintf(stderr,
				"pgload compare: could not create a directory in \"%s\": %s\n",
				be->root, strerror(-ret));
			return ret;
		}
		chmod(template, 0711);
		snprintf(be->root, sizeof(be->root), "%s", template);
	}
	return 0;
}

/* model_down() -- after the loop device is gone: stop pgdisk (unmounting
 * ends it) and wait for it to exit. */
static void model_down(struct pgl_backend *be)
{
	if (!be->diskmnt[0])
		return;
	pgl_testbed_unmount_under(be->diskmnt, false);
	pgl_testbed_wait_users(be->diskmnt, 10.0, true);
	if (be->imgdir[0]) { /* pgdisk has let the image go */
		pgl_testbed_wait_users(be->imgdir, 10.0, false);
		pgl_testbed_unmount_under(be->imgdir, false);
	}
}

/* dev_check() -- as loop_check(), and DEVICE is the user's to destroy
 * (blkdev.c): named by --destroy-device, used by nothing. */
static int dev_check(const struct pgl_backend_spec *spec, const char *const *destroy)
{
	int ret = loop_check(spec, destroy);
	return ret < 0 ? ret : pgl_blkdev_check(spec->arg, spec->device, destroy);
}

/*
 * dev:DEVICE:FS -- the user's device: its queue set up as the options say
 * (what it was is kept, and given back by pgl_backend_down()), the file system
 * made afresh on it, mounted at DIR/fs.
 */
static int dev_up(struct pgl_backend *be)
{
	int ret;
	snprintf(be->blkdev, sizeof(be->blkdev), "%s", be->spec->device);
	if ((ret = setup_queue(be)) < 0)
		return ret;
	if ((ret = mkfs(be, be->blkdev)) < 0)
		return ret;
	return mount_fs(be);
}

static const struct pgl_backend_ops loop_ops = {
    .check = loop_check, .up = loop_up, .blockdev = true};
static const struct pgl_backend_ops model_ops = {
    .check = model_check, .up = model_up, .down = model_down, .blockdev = true};
static const struct pgl_backend_ops dev_ops = {.check = dev_check, .up = dev_up, .blockdev = true};
static const struct pgl_backend_ops tmpfs_ops = {.up = tmpfs_up};
static const struct pgl_backend_ops dir_ops = {.up = dir_up};

/* The file systems of the loop and model back ends, and pgdisk's models
 * (docs/pgdisk.md): a capped cloud volume is a budget of IOPS, MiB/s and,
 * for gp2, credits, whose use the report sets against its caps. */
static const char *const fs_names[] = {"ext2", "ext3", "ext4", "xfs"};
static const struct {
	const char *name;
	bool capped;
} models[] = {{"hdd", false}, {"ssd", false}, {"gp3", true},
	      {"gp2", true},  {"io2", true},  {"cloud", true}};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * model_size() -- the size of "gp2:SIZE:FS" (SIZE in GiB, a G or GiB, T or
 * TiB suffix allowed, 1 to 64 TiB, as pgdisk takes it): B->disk_model is
 * then "gp2:SIZE", and *FS moves past it; without one, the model's name.
 * Only gp2's caps follow its size: a size for another model is refused.
 * Returns 0, or -EINVAL after saying why.
 */
static int model_size(const char *arg, struct pgl_backend_spec *b, const char **fs)
{
	const char *size = *fs, *colon = strchr(size, ':');
	snprintf(b->disk_model, sizeof(b->disk_model), "%s", b->model);
	if (!isdigit((unsigned char)size[0]) || !colon)
		return 0; /* no size: a file system's name or an image's path */
	if (strcmp(b->model, "gp2") != 0) {
		if (b->capped)
			fprintf(stderr,
				"pgload compare: back end \"%s\": only gp2 takes a size "
				"(gp2:SIZE:FS); the caps of %s do not follow a volume's size (set "
				"them with --disk-set cloud_iops=N, --disk-set cloud_mib_s=N)\n",
				arg, b->model);
		else
			fprintf(stderr,
				"pgload compare: back end \"%s\": only gp2 takes a size "
				"(gp2:SIZE:FS); the %s's image is of --size\n",
				arg, b->model);
		return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long long gib = strtoull(size, &end, 10);
	size_t unit = (size_t)(colon - end);
	if (unit == 1 && *end == 'T')
		gib *= 1024;
	else if (unit == 3 && strncmp(end, "TiB", 3) == 0)
		gib *= 1024;
	else if (unit && !(unit == 1 && *end == 'G') && !(unit == 3 && strncmp(end, "GiB", 3) == 0))
		gib = 0;
	if (errno || gib < 1 || gib > 65536) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": the size \"%.*s\" of the gp2 volume "
			"must be a whole number of GiB from 1 to 65536 (a G or T suffix allowed, "
			"such as gp2:100G:ext4)\n",
			arg, (int)(colon - size), size);
		return -EINVAL;
	}
	snprintf(b->disk_model, sizeof(b->disk_model), "gp2:%llu", gib);
	*fs = colon + 1;
	return 0;
}

/* server_cannot_reach() -- when pgload runs as root, the server runs as
 * postgres: 0 if that user can search @path (every directory on the way),
 * else the errno its access() got.  Checked in a child that becomes
 * postgres, so that modes, groups and ACLs are the kernel's to judge. */
static int server_cannot_reach(const char *path)
{
	struct passwd *pw;
	pid_t pid;
	int st;

	if (geteuid() != 0 || !(pw = getpwnam("postgres")))
		return 0; /* the server runs as us, or the start says why not */
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
		    setuid(pw->pw_uid) < 0)
			_exit(0);
		_exit(access(path, X_OK) < 0 ? (errno & 0x7f) : 0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

/* dev_parse() -- "dev:DEVICE:FS" into B; named "dev:NAME:FS" by the
 * device's file name. */
static int dev_parse(const char *arg, struct pgl_backend_spec *b)
{
	const char *dev = arg + 4, *colon = strrchr(dev, ':');
	const char *fs = colon ? colon + 1 : "";
	b->ops = &dev_ops;
	b->arg = arg;
	for (size_t i = 0; i < NELEM(fs_names); i++)
		if (strcmp(fs, fs_names[i]) == 0)
			snprintf(b->fs, sizeof(b->fs), "%s", fs_names[i]);
	if (dev[0] != '/' || !colon || (size_t)(colon - dev) >= sizeof(b->device) || !b->fs[0]) {
		fprintf(stderr,
			"pgload compare: back end \"%s\": dev:DEVICE:FS expected, DEVICE an "
			"absolute path and FS one of ext2, ext3, ext4, xfs (such as "
			"dev:/dev/sdb1:xfs)\n",
			arg);
		return -EINVAL;
	}
	snprintf(b->device, sizeof(b->device), "%.*s", (int)(colon - dev), dev);
	const char *base = strrchr(b->device, '/') + 1;
	snprintf(b->name, sizeof(b->name), "dev:%.40s:%s", base, b->fs);
	return 0;
}

int pgl_backend_parse(const char *arg, struct pgl_backend_spec *b)
{
	struct stat st;
	memset(b, 0, sizeof(*b));
	if (strncmp(arg, "dir:", 4) == 0) {
		b->ops = &dir_ops;
		snprintf(b->name, sizeof(b->name), "dir");
		b->path = arg + 4;
		if (b->path[0] != '/') {
			fprintf(stderr,
				"pgload compare: back end \"%s\": the path must be absolute\n",
				arg);
			return -EINVAL;
		}
		if (stat(b->path, &st) < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "pgload compare: back end \"%s\": %s\n", arg,
				errno && !S_ISDIR(st.st_mode) ? strerror(errno)
							      : "not a directory");
			return -ENOTDIR;
		}
		int err = server_cannot_reach(b->path);
		if (err) {
			fprintf(stderr,
				"pgload compare: back end \"%s\": the postgres user, which runs "
				"the server, cannot reach it (%s)\n",
				arg, strerror(err));
			return -err;
		}
		return 0;
	}
	if (strncmp(arg, "dev:", 4) == 0)
		return dev_parse(arg, b);
	if (strcmp(arg, "tmpfs") == 0) {
		b->ops = &tmpfs_ops;
		snprintf(b->name, sizeof(b->name), "tmpfs");
		snprintf(b->fs, sizeof(b->fs), "tmpfs");
		return 0;
	}
	const char *colon = strchr(arg, ':'), *fs = colon ? colon + 1 : arg;
	for (size_t m = 0; colon && m < NELEM(models); m++)
		if (strncmp(arg, models[m].name, (size_t)(colon - arg)) == 0 &&
		    strlen(models[m].name) == (size_t)(colon - arg)) {
			b->model = models[m].name;
			b->capped = models[m].capped;
		}
	if (b->model) {
		int ret = model_size(arg, b, &fs);
		if (ret < 0)
			return ret;
	}
	if (b->model && fs[0] == '/') {
		/* an image of a file system: named by its file name */
		const char *base = strrchr(fs, '/') + 1;
		b->ops = &model_ops;
		b->path = fs;
		snprintf(b->name, sizeof(b->name), "%.*s%.*s", (int)(fs - arg), arg, 40, base);
		if (!*base) {
			fprintf(stderr, "pgload compare: back end \"%s\": an image file expected\n",
				arg);
			return -EINVAL;
		}
		return 0;
	}
	for (size_t i = 0; i < NELEM(fs_names) && (b->model || !colon); i++) {
		if (strcmp(fs, fs_names[i]) != 0)
			continue;
		b->ops = b->model ? &model_ops : &loop_ops;
		snprintf(b->name, sizeof(b->name), "%s", arg);
		snprintf(b->fs, sizeof(b->fs), "%s", fs_names[i]);
		return 0;
	}
	if (b->model)
		fprintf(stderr,
			"pgload compare: back end \"%s\": no file system \"%s\" on a modelled "
			"disk (%.*sext2, ext3, ext4, xfs, or the absolute path of an image)\n",
			arg, fs, (int)(fs - arg), arg);
	else
		fprintf(stderr,
			"pgload compare: unknown back end \"%s\" (ext2, ext3, ext4, xfs, tmpfs, "
			"dir:PATH, a modelled disk: hdd:FS, ssd:FS, a capped cloud volume: gp3:FS, "
			"gp2:FS, gp2:SIZE:FS, io2:FS, cloud:FS, or a device: dev:DEVICE:FS)\n",
			arg);
	return -EINVAL;
}

int pgl_backend_check_image(struct pgl_backend_spec *spec, const char *pgdisk)
{
	char out[1024];
	char *check[] = {(char *)pgdisk, "--check", (char *)spec->path, NULL};
	char *blkid[] = {"blkid", "-p", "-o", "value", "-s", "TYPE", (char *)spec->path, NULL};
	if (pgl_run_cmd(check, out, sizeof(out)) != 0) {
		const char *why = strstr(out, "pgdisk: ");
		fprintf(stderr, "pgload compare: back end \"%s:%s\": %s", spec->disk_model,
			spec->path, why ? why + 8 : "refused by pgdisk --check\n");
		return -EINVAL;
	}
	int st = pgl_run_cmd(blkid, out, sizeof(out));
	out[strcspn(out, "\n")] = '\0';
	for (size_t i = 0; st == 0 && i < NELEM(fs_names); i++)
		if (strcmp(out, fs_names[i]) == 0) {
			snprintf(spec->fs, sizeof(spec->fs), "%s", fs_names[i]);
			return 0;
		}
	fprintf(stderr,
		"pgload compare: back end \"%s:%s\": the image is damaged or not a file system "
		"image: blkid finds %s%s%s on it (ext2, ext3, ext4 or xfs expected)\n",
		spec->disk_model, spec->path, st == 0 ? "\"" : "", st == 0 ? out : "no file system",
		st == 0 ? "\"" : "");
	return -EINVAL;
}

int pgl_backend_check(const struct pgl_backend_spec *spec, const char *const *destroy)
{
	return spec->ops->check ? spec->ops->check(spec, destroy) : 0;
}

bool pgl_backend_blockdev(const struct pgl_backend_spec *spec)
{
	return spec->ops->blockdev;
}

int pgl_backend_up(struct pgl_testbed *tb, const struct pgl_backend_spec *spec, const char *dir,
		   const struct pgl_backend_opts *o, struct pgl_backend **out)
{
	struct pgl_backend *be = calloc(1, sizeof(*be));
	int ret;
	*out = NULL;
	if (!be)
		return -ENOMEM;
	be->tb = tb;
	be->spec = spec;
	be->o = o;
	snprintf(be->dir, sizeof(be->dir), "%s", dir);
	if (pgl_step("backend", "preparing the %s back end", spec->name))
		ret = -EINTR;
	else
		ret = spec->ops->up(be);
	if (ret < 0) {
		pgl_backend_down(be);
		return ret;
	}
	*out = be;
	return 0;
}

const char *pgl_backend_root(const struct pgl_backend *be)
{
	return be->root;
}

const char *pgl_backend_device(const struct pgl_backend *be)
{
	return be->blkdev[0] ? be->blkdev : NULL;
}

int pgl_backend_disk_stats(const struct pgl_backend *be, char *buf, size_t cap)
{
	char path[400];
	if (!be->diskmnt[0])
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/stats", be->diskmnt);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	ssize_t got;
	while (n + 1 < cap && (got = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

int pgl_backend_down(struct pgl_backend *be)
{
	int ret = 0;
	if (!be)
		return 0;
	if (be->mounted)
		pgl_testbed_unmount_under(be->mnt, false);
	if (be->queue_changed) /* after the unmount, before a loop device goes */
		pgl_queue_restore(be->blkdev, &be->queue_before);
	if (be->loop)
		pgl_testbed_detach_loops_under(be->dir);
	if (be->spec->ops->down)
		be->spec->ops->down(be);
	/* the directory of the test bed goes with it; one elsewhere goes now */
	if (be->root[0] && !path_is_under(be->root, be->dir))
		ret = pgl_rmtree(be->root);
	free(be);
	return ret;
}
