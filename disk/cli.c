/*
 * cli.c -- the `pgdisk` command: options, the refusals made before anything
 * is set up, the memory rules of a block-device server, the scheduling of
 * its threads, and a clean stop on SIGTERM/SIGINT.
 *
 * What must stay true: a refused or failed start leaves nothing behind (no
 * mount, no process, the image untouched); in the background the command
 * returns only once the mount exists; every thread of the daemon runs in
 * locked memory and, where the system grants it (CAP_SYS_RESOURCE), with
 * PR_SET_IO_FLUSHER (its allocations never wait for writeback, which may
 * need the very device it serves); a stop never pulls the
 * disk from under a loop device: while the disk file is open the mount is
 * only detached, and pgdisk serves on until its last user closes it.
 */
#include "pgdisk_i.h"
#include "sigthread.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

/* The sanitizers intercept mlockall() and do nothing, and reserve terabytes
 * of shadow memory: under them, the system call itself, locking pages as
 * they are touched rather than populating all of it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define lock_all(flags) syscall(SYS_mlockall, (flags) | MCL_ONFAULT)
#else
#define lock_all(flags) mlockall(flags)
#endif

/* ------------------------------------------------------------------------ */
/* settings: iosched's [device] rows, the one tunables table */

#define MAX_ROWS 32

static struct conf_tunable device_rows[MAX_ROWS];
static struct conf_table device_conf;

/* pgdisk's own rows, after iosched's (struct pgd_settings) */
#define S(field) offsetof(struct pgd_settings, field)
static const struct conf_tunable disk_rows[] = {
    {"device", "write_cache_kb", CONF_INT, "KiB", "8192", 0, 1 << 20, NULL, S(write_cache_kb),
     "The disk's volatile write cache: a write is durable once a flush after it has "
     "arrived, or once this much newer data has been written after it (the cache "
     "destages oldest first); a FUA write at once.  What a power cut may lose, at most "
     "(pgdisk cut); 0: none.  The timing is the same either way."},
    {"log", "max_mb", CONF_INT, "MiB", "4096", 1, 1 << 20, NULL, S(log_max_mb),
     "The write log's cap (--log), and the request log's (--requests), uncompressed: the "
     "request that would pass it is not logged, nor any after it; the log ends there and "
     "pgdisk cut builds no image past it."},
    {"daemon", "realtime", CONF_BOOL, "", "yes", 0, 0, NULL, S(realtime),
     "Run the thread that takes requests and the one that sends replies in the real-time "
     "class (SCHED_FIFO at rt_priority), so that a busy machine neither delays a request's "
     "arrival nor releases it late (late_ns_* in stats).  Where the system refuses it (no "
     "CAP_SYS_NICE, a cgroup without real-time time), pgdisk raises their nice value as far "
     "as granted and says so; stats shows what they got (sched_*).  no: the normal class."},
    {"daemon", "rt_priority", CONF_INT, "", "20", 1, 99, NULL, S(rt_priority),
     "Their SCHED_FIFO priority: above the kernel's threaded interrupt handlers' 50 would "
     "hold those back; 20 is above every normal process and below them."},
};
#undef S

/* device_table() -- the [device] rows of ios_conf, but queue_depth (the
 * scheduler's: how many transfers it hands its emulated device; pgdisk's
 * disk takes what the kernel sends, and a capped volume serves cloud_depth
 * of them at once) and with hdd as the default model; then pgdisk's own
 * rows. */
static const struct conf_table *device_table(void)
{
	size_t i, n = 0;

	for (i = 0; i < ios_conf.nrows && n < MAX_ROWS; i++) {
		const struct conf_tunable *r = &ios_conf.rows[i];

		if (strcmp(r->section, "device") != 0 || strcmp(r->name, "queue_depth") == 0)
			continue;
		device_rows[n] = *r;
		if (strcmp(r->name, "model") == 0)
			device_rows[n].def = "hdd";
		n++;
	}
	for (i = 0; i < sizeof(disk_rows) / sizeof(disk_rows[0]) && n < MAX_ROWS; i++)
		device_rows[n++] = disk_rows[i];
	device_conf = (struct conf_table){
	    .rows = device_rows, .nrows = n, .settings_size = sizeof(struct pgd_settings)};
	return &device_conf;
}

static void usage(FILE *out, const struct conf_table *t)
{
	fprintf(
	    out,
	    "Usage: pgdisk [OPTIONS] IMAGE MOUNTPOINT\n"
	    "\n"
	    "Serve the disk image IMAGE as the file MOUNTPOINT/" PGDISK_DISK_NAME
	    ", every request held back\n"
	    "by a model of a disk: hdd (one head, seek by distance, rotation, transfer, one\n"
	    "request at a time; the defaults are a 2004 disk: 54 MB/s, 8.5 ms, 7200 rpm),\n"
	    "ssd (per-request latency plus transfer), none, or a capped cloud volume:\n"
	    "gp3, gp2[:SIZE] (SIZE GiB; bare: the image's size), io2 (the published caps of\n"
	    "these EBS volumes) or cloud (gp3's, for every cloud_* setting not given).\n"
	    "Put a block device on it:\n"
	    "\n"
	    "    losetup --direct-io=on --find --show MOUNTPOINT/" PGDISK_DISK_NAME "\n"
	    "\n"
	    "MOUNTPOINT/" PGDISK_STATS_NAME
	    " shows the model and counters; MOUNTPOINT/" PGDISK_CONTROL_NAME " lists the\n"
	    "fault rules (write \"add RULE\", \"clear ID\" or \"clear all\" to it).\n"
	    "IMAGE must be a regular file of whole 512-byte sectors (truncate -s 2G IMAGE\n"
	    "makes one); MOUNTPOINT an empty directory.  Runs as root.\n"
	    "\n"
	    "Options:\n"
	    "  -f, --foreground        stay in the foreground (default: daemonize once mounted)\n"
	    "  -m, --model MODEL       hdd, ssd, none, gp3, gp2, gp2:SIZE, io2 or cloud (the\n"
	    "                          same as --set model=MODEL; gp2:SIZE also sets\n"
	    "                          cloud_volume_gib=SIZE, in GiB, or with a G or T suffix)\n"
	    "  -c, --config FILE       read [device] settings from an INI file\n"
	    "  -s, --set NAME=VALUE    set one setting (after --config); NAME may be\n"
	    "                          device.NAME\n"
	    "  -l, --log FILE          log every write, flush, discard and write-zeroes\n"
	    "                          with its data into FILE, a new file (lz4), for\n"
	    "                          `pgdisk cut` (cap: log.max_mb)\n"
	    "  -F, --fault RULE        fail chosen requests (repeatable; "
	    "MOUNTPOINT/" PGDISK_CONTROL_NAME "\n"
	    "                          changes them at run time).  RULE: KEY=VALUE words,\n"
	    "                          op=read,write,flush,discard,zero|all (required)\n"
	    "                          sectors=FIRST-LAST|FIRST+COUNT (512-byte sectors;\n"
	    "                          default the whole disk; none for a flush rule)\n"
	    "                          nth=N (the Nth matching request fails first; 1)\n"
	    "                          count=N (fail N, then no more; 0: no limit)\n"
	    "                          for=DURATION (from the first fault: 5s, 500ms, 2m;\n"
	    "                          0: for good) error=eio|enospc|lost (eio; lost:\n"
	    "                          acknowledged, not performed)\n"
	    "  -r, --requests FILE     log every request, reads included, without data, with\n"
	    "                          what held it back and the buckets' levels, into FILE,\n"
	    "                          a new file (lz4; `pgdisk log --records FILE`)\n"
	    "      --print-config [IMAGE [MOUNTPOINT]]\n"
	    "                          print the effective settings as INI and exit (a\n"
	    "                          capped volume's from the image's size if given)\n"
	    "      --check IMAGE       check IMAGE as pgdisk does before serving it, and exit\n"
	    "                          (0: it can be served)\n"
	    "  -h, --help              this help, with every setting\n"
	    "  -V, --version           print the version\n"
	    "\n"
	    "Other commands: `pgdisk cut --help` (the disk after a power cut, from a write\n"
	    "log), `pgdisk log LOG` (what a write log holds).\n"
	    "\n"
	    "SIGTERM or SIGINT unmounts; while the disk is open (a loop device on it) the\n"
	    "mount is detached and pgdisk serves on until its last user closes it\n"
	    "(losetup -d), then exits.\n"
	    "\n"
	    "Settings (section.name, default, range):\n");
	conf_print_help(out, t);
}

struct cli {
	bool foreground, print_config, check;
	const char *log, *requests;
	const char *config;
	const char *overrides[64];
	int noverrides;
	const char *faults[PGD_MAX_RULES];
	int nfaults;
	const char *image, *mountpoint;
};

/* add_override() -- one more "NAME=VALUE": 0, or -1 after a message. */
static int add_override(struct cli *c, const char *arg)
{
	if (c->noverrides >= (int)(sizeof(c->overrides) / sizeof(c->overrides[0]))) {
		fprintf(stderr, "pgdisk: too many --set options\n");
		return -1;
	}
	c->overrides[c->noverrides++] = arg;
	return 0;
}

/* model_overrides() -- --model MODEL[:SIZE]: model=MODEL, and for gp2
 * cloud_volume_gib=SIZE (GiB; a G or GiB suffix, or T or TiB for TiB).
 * 0, or -1 after a message. */
static int model_overrides(struct cli *c, const char *arg)
{
	static char bufs[4][64];
	static int nbufs;
	const char *colon = strchr(arg, ':');
	unsigned long long gib;
	char *end;

	if (nbufs + 2 > 4) {
		fprintf(stderr, "pgdisk: too many --model options\n");
		return -1;
	}
	snprintf(bufs[nbufs], sizeof(bufs[0]), "model=%.*s",
		 colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	if (add_override(c, bufs[nbufs++]) < 0)
		return -1;
	if (!colon)
		return 0; /* the model's name is checked with the other settings */
	if ((size_t)(colon - arg) != 3 || strncmp(arg, "gp2", 3) != 0) {
		fprintf(stderr,
			"pgdisk: option --model \"%s\": only gp2 takes a size (gp2:SIZE); the caps "
			"of gp3 and io2 do not follow it (set cloud_iops and cloud_mib_s)\n",
			arg);
		return -1;
	}
	errno = 0;
	gib = strtoull(colon + 1, &end, 10);
	if (*end == 'T' && (strcmp(end, "T") == 0 || strcmp(end, "TiB") == 0))
		gib *= 1024;
	else if (*end && strcmp(end, "G") != 0 && strcmp(end, "GiB") != 0)
		gib = 0;
	if (!isdigit((unsigned char)colon[1]) || errno || gib < 1 || gib > 65536) {
		fprintf(stderr,
			"pgdisk: option --model \"%s\": the size must be a whole number of GiB "
			"from 1 to 65536 (a G or T suffix allowed)\n",
			arg);
		return -1;
	}
	snprintf(bufs[nbufs], sizeof(bufs[0]), "cloud_volume_gib=%llu", gib);
	return add_override(c, bufs[nbufs++]);
}

/* parse_args() -- 0, or the exit status: 1 for a usage error, -1 when
 * --help or --version was printed (exit 0). */
static int parse_args(struct cli *c, const struct conf_table *t, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"foreground", no_argument, NULL, 'f'},
	    {"model", required_argument, NULL, 'm'},
	    {"config", required_argument, NULL, 'c'},
	    {"set", required_argument, NULL, 's'},
	    {"print-config", no_argument, NULL, 'P'},
	    {"check", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"log", required_argument, NULL, 'l'},
	    {"fault", required_argument, NULL, 'F'},
	    {"requests", required_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+fm:c:s:l:F:r:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			c->foreground = true;
			break;
		case 'm':
			if (model_overrides(c, optarg) < 0)
				return 1;
			break;
		case 's':
			if (add_override(c, optarg) < 0)
				return 1;
			break;
		case 'r':
			c->requests = optarg;
			break;
		case 'c':
			c->config = optarg;
			break;
		case 'P':
			c->print_config = true;
			break;
		case 'l':
			c->log = optarg;
			break;
		case 'F':
			if (c->nfaults == PGD_MAX_RULES) {
				fprintf(stderr, "pgdisk: too many --fault options (%d at most)\n",
					PGD_MAX_RULES);
				return 1;
			}
			c->faults[c->nfaults++] = optarg;
			break;
		case 'C':
			c->check = true;
			break;
		case 'h':
			usage(stdout, t);
			return -1;
		case 'V':
			printf("pgdisk %s (libfuse %s)\n", PGDISK_VERSION, fuse_pkgversion());
			return -1;
		default:
			if (optopt)
				fprintf(stderr,
					"pgdisk: option -%c needs an argument or is unknown\n",
					optopt);
			else
				fprintf(stderr, "pgdisk: unknown option \"%s\"\n",
					argv[optind - 1]);
			fprintf(stderr, "Try 'pgdisk --help'.\n");
			return 1;
		}
	}
	if (c->print_config && argc - optind <= 2) {
		c->image = argc > optind ? argv[optind] : NULL;
		return 0;
	}
	if (c->check) {
		if (argc - optind != 1) {
			fprintf(stderr, "pgdisk: --check takes one IMAGE, got %d argument%s\n",
				argc - optind, argc - optind == 1 ? "" : "s");
			return 1;
		}
		c->image = argv[optind];
		return 0;
	}
	if (argc - optind != 2) {
		fprintf(stderr,
			"pgdisk: expected IMAGE and MOUNTPOINT, got %d argument%s\n"
			"Try 'pgdisk --help'.\n",
			argc - optind, argc - optind == 1 ? "" : "s");
		return 1;
	}
	c->image = argv[optind];
	c->mountpoint = argv[optind + 1];
	return 0;
}

/* load_settings() -- defaults, the config file, then the overrides.
 * 0, or -1 after a message naming the file or option and the reason. */
static int load_settings(const struct cli *c, const struct conf_table *t, struct pgd_settings *s)
{
	char why[CONF_ERR_MAX];
	int i;

	if (conf_defaults(t, s) < 0) {
		fprintf(stderr, "pgdisk: internal error: invalid default in the settings table\n");
		return -1;
	}
	if (c->config && conf_load_file(t, s, c->config, why, sizeof(why)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", why);
		return -1;
	}
	for (i = 0; i < c->noverrides; i++)
		if (conf_set_arg(t, s, c->overrides[i], why, sizeof(why)) < 0) {
			fprintf(stderr, "pgdisk: option \"%s\": %s (see pgdisk --help)\n",
				c->overrides[i], why);
			return -1;
		}
	return 0;
}

/* resolve_model() -- a capped volume's settings left 0 from its model and
 * the image's size (ios_disk_resolve()), so that a bad combination is
 * refused before anything is set up and --print-config prints what will
 * be used.  0, or -1 after a message.  With no image to size it (none
 * given to --print-config), gp2 needs gp2:SIZE; an image the checks will
 * refuse is left to them, and resolved once open (open_logs()'s caller). */
static int resolve_model(const struct cli *c, struct ios_settings *set, uint64_t size)
{
	char why[256];
	struct stat st;

	if (!size && c->image && stat(c->image, &st) == 0 && S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	if (!size && !c->print_config)
		return 0;
	if (ios_disk_resolve(set, size, why, sizeof(why)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", why);
		return -1;
	}
	return 0;
}

/* create_log() -- a new file for a log (never overwrite one), its
 * absolute name in @abs (the daemon changes to "/"): the descriptor, or -1
 * after a message. */
static int create_log(const char *path, const char *what, char *abs)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0 || !realpath(path, abs)) {
		fprintf(stderr, "pgdisk: cannot create the %s \"%s\": %s%s\n", what, path,
			strerror(errno), errno == EEXIST ? " (a log is never overwritten)" : "");
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return -1;
	}
	return fd;
}

/* check_mountpoint() -- an existing, empty directory.  0 or -1 after a
 * message. */
static int check_mountpoint(const char *path)
{
	struct stat st;
	DIR *dir;
	struct dirent *e;
	int n = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "pgdisk: mount point \"%s\": %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "pgdisk: mount point \"%s\" is not a directory\n", path);
		return -1;
	}
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "pgdisk: mount point \"%s\": %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(dir);
	if (n) {
		fprintf(stderr, "pgdisk: mount point \"%s\" is not empty\n", path);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* stopping on a signal */

/* on_signal() -- SIGHUP: nothing to reload; SIGTERM, SIGINT: unmount (the
 * signal thread's handler, common/sigthread.h) */
static void on_signal(int sig, void *arg)
{
	struct pgd *p = arg;

	if (sig == SIGHUP) {
		log_msg(LOG_INFO, "SIGHUP: nothing to reload (settings apply at start)");
		return;
	}
	log_msg(LOG_INFO, "signal %d: unmounting %s", sig, p->mountpoint);
	/* unmounted, the kernel ends the session and the loop returns */
	if (umount2(p->mountpoint, UMOUNT_NOFOLLOW) == 0)
		return;
	if (errno == EINVAL) { /* detached already */
		log_msg(LOG_INFO, "serving until the last user closes the disk");
		return;
	}
	if (errno != EBUSY) {
		log_msg(LOG_ERR, "cannot unmount %s: %s", p->mountpoint, strerror(errno));
		return;
	}
	/* the disk is open (a loop device on it): pulling it would fail the
	 * file system on top; detach the mount and serve on until the last
	 * user closes the disk, which ends the session */
	log_msg(LOG_WARNING,
		"%s/%s is in use (a loop device on it?): detached the mount; serving until its "
		"last user closes it (losetup -d)",
		p->mountpoint, PGDISK_DISK_NAME);
	if (umount2(p->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
		log_msg(LOG_ERR, "cannot detach %s: %s", p->mountpoint, strerror(errno));
}

/* The rules of a block-device server: its allocations must not wait on
 * writeback, which may be writeback to the device it serves
 * (PR_SET_IO_FLUSHER: the kernel allocates for it as GFP_NOIO), and none of
 * its memory may need reclaim to be used again (mlockall).  The flag is
 * inherited across fork and by threads: it is set before daemonizing, so a
 * refusal is reported on the terminal; memory locks are not inherited by a
 * fork: they are taken after. */
static void io_flusher(void)
{
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) < 0)
		log_msg(LOG_WARNING,
			"prctl(PR_SET_IO_FLUSHER): %s%s: its allocations may wait for writeback to "
			"its own disk",
			strerror(errno), errno == EPERM ? " (it needs CAP_SYS_RESOURCE)" : "");
}

static void lock_memory(void)
{
	if (lock_all(MCL_CURRENT | MCL_FUTURE) < 0)
		log_msg(LOG_WARNING, "mlockall: %s: the daemon's memory may be paged out",
			strerror(errno));
}

/* start_log() -- the log on *@fd (if any), which it takes over, into
 * *@out: 0, or -1 after a message. */
static int start_log(struct pgd *p, struct pgd_wlog **out, int *fd, const char *path,
		     unsigned flags)
{
	char err[PATH_MAX + 128];
	int f = *fd;

	if (f < 0)
		return 0;
	*fd = -1;
	if (pgd_wlog_create(out, f, path, flags, p->dev.size, (uint64_t)p->set.write_cache_kb << 10,
			    (uint64_t)p->set.log_max_mb << 20, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return -1;
	}
	return 0;
}

/* serve() -- everything after the checks; the exit status. */
static int serve(struct pgd *p)
{
	char fsname[PATH_MAX + 64], opts[PATH_MAX + 128];
	char *fargv[] = {"pgdisk", "-o", opts, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	sigset_t sigs;
	int ret = 1;

	/* commas would split the option: fsname is informational */
	snprintf(fsname, sizeof(fsname), "pgdisk:%s", p->image);
	for (char *q = fsname; *q; q++)
		if (*q == ',')
			*q = '_';
	snprintf(opts, sizeof(opts), "default_permissions,subtype=pgdisk,fsname=%s", fsname);
	se = fuse_session_new(&args, &pgd_ops, sizeof(pgd_ops), p);
	fuse_opt_free_args(&args);
	if (!se) {
		fprintf(stderr, "pgdisk: cannot start a FUSE session\n");
		return 1;
	}
	if (fuse_session_mount(se, p->mountpoint) != 0) {
		fprintf(stderr, "pgdisk: cannot mount \"%s\" (see the message above)\n",
			p->mountpoint);
		goto out_destroy;
	}
	io_flusher();
	if (fuse_daemonize(p->foreground) != 0)
		goto out_unmount;
	if (!p->foreground) {
		log_to_syslog();
	}
	lock_memory();
	/* only the signal thread takes these */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the logs' threads start after the fork */
	if (start_log(p, &p->dev.wlog, &p->log_fd, p->log_path, 0) < 0 ||
	    start_log(p, &p->dev.rlog, &p->req_fd, p->req_path, PGD_WLOG_H_REQUESTS) < 0)
		goto out_stop;
	/* the signal thread first: it is not to inherit the real-time class
	 * pgd_dev_start() gives the session thread */
	if (sig_thread_start(&sigs, on_signal, p, PGD_STACK_SIZE) < 0 ||
	    pgd_dev_start(&p->dev) < 0) {
		log_msg(LOG_ERR, "cannot start a thread");
		goto out_stop;
	}
	log_msg(LOG_INFO, "serving %s (%llu bytes) at %s/%s", p->image,
		(unsigned long long)p->dev.size, p->mountpoint, PGDISK_DISK_NAME);
	p->served = true;
	ret = fuse_session_loop(se) < 0 ? 1 : 0;
out_stop:
	sig_thread_end(); /* p is freed after this returns */
	pgd_dev_stop(&p->dev);
out_unmount:
	fuse_session_unmount(se);
out_destroy:
	fuse_session_destroy(se);
	return ret;
}

int pgdisk_main(int argc, char **argv)
{
	const struct conf_table *t = device_table();
	struct cli c;
	struct pgd *p;
	char err[PATH_MAX + 256];
	int ret;

	log_init("pgdisk");
	if (argc > 1 && strcmp(argv[1], "cut") == 0)
		return pgd_cut_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "log") == 0)
		return pgd_log_main(argc - 1, argv + 1);
	memset(&c, 0, sizeof(c));
	ret = parse_args(&c, t, argc, argv);
	if (ret)
		return ret < 0 ? 0 : ret;
	p = calloc(1, sizeof(*p));
	if (!p) {
		fprintf(stderr, "pgdisk: out of memory\n");
		return 1;
	}
	p->conf = t;
	p->foreground = c.foreground;
	p->dev.fd = p->dev.fd_cached = -1;
	p->log_fd = p->req_fd = -1;
	ret = 1;
	if (load_settings(&c, t, &p->set) < 0 || resolve_model(&c, &p->set.dev, 0) < 0)
		goto out;
	if (c.print_config) {
		printf("; pgdisk settings (INI).  Use them with: pgdisk --config FILE ...\n"
		       "; Every setting, its unit, range and default; printed by\n"
		       "; `pgdisk --print-config`, which prints the effective values.\n\n");
		conf_print_ini(stdout, t, &p->set);
		ret = 0;
		goto out;
	}
	if (c.check) {
		/* the refusals of a start that concern the image, nothing else */
		if (pgd_dev_open(&p->dev, c.image, err, sizeof(err)) < 0) {
			fprintf(stderr, "pgdisk: %s\n", err);
			goto out;
		}
		printf("pgdisk: image \"%s\": %llu bytes, can be served\n", c.image,
		       (unsigned long long)p->dev.size);
		ret = 0;
		goto out;
	}
	if (geteuid() != 0) {
		fprintf(stderr,
			"pgdisk: must run as root: a block-device server needs "
			"PR_SET_IO_FLUSHER and locked memory (and loop devices need root)\n");
		goto out;
	}
	/* the daemon changes to "/": absolute paths from here on */
	if (!realpath(c.image, p->image)) {
		fprintf(stderr, "pgdisk: image \"%s\": %s\n", c.image, strerror(errno));
		goto out;
	}
	if (check_mountpoint(c.mountpoint) < 0)
		goto out;
	if (!realpath(c.mountpoint, p->mountpoint)) {
		fprintf(stderr, "pgdisk: mount point \"%s\": %s\n", c.mountpoint, strerror(errno));
		goto out;
	}
	if (pgd_dev_open(&p->dev, p->image, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgdisk: %s\n", err);
		goto out;
	}
	fstat(p->dev.fd_cached, &p->image_st); /* owner and mode of the disk file */
	if (resolve_model(&c, &p->set.dev, p->dev.size) < 0)
		goto out;
	for (int i = 0; i < c.nfaults; i++)
		if (pgd_fault_add(&p->dev.faults, c.faults[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "pgdisk: --fault \"%s\": %s\n", c.faults[i], err);
			goto out;
		}
	if (c.log && (p->log_fd = create_log(c.log, "write log", p->log_path)) < 0)
		goto out;
	if (c.requests && (p->req_fd = create_log(c.requests, "request log", p->req_path)) < 0)
		goto out;
	p->dev.realtime = p->set.realtime;
	p->dev.rt_priority = (int)p->set.rt_priority;
	if (pgd_dev_model(&p->dev, &p->set.dev) < 0) {
		fprintf(stderr, "pgdisk: cannot create the disk model: %s\n", strerror(errno));
		goto out;
	}
	ret = serve(p);
out:
	if (p->log_fd >= 0)
		close(p->log_fd);
	if (p->req_fd >= 0)
		close(p->req_fd);
	if (p->log_path[0] && !p->served)
		unlink(p->log_path); /* a refused or failed start leaves nothing */
	if (p->req_path[0] && !p->served)
		unlink(p->req_path);
	pgd_dev_close(&p->dev);
	free(p);
	return ret;
}
