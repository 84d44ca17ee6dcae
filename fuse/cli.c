/*
 * cli.c -- the `pgiofs` command: options, the refusals made before
 * mounting, the session loop, and a clean unmount on SIGTERM/SIGINT.
 *
 * What must stay true: a refused or failed start leaves nothing mounted; in
 * the background the command returns only once the mount exists; a signal
 * unmounts only after every dirty page of the mount has been written through
 * the daemon to the backing store.
 */
#include "pgiofs_i.h"
#include "sigthread.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

extern char **environ;

/* notify_status() -- under systemd (NOTIFY_SOCKET set, as for a unit with
 * NotifyAccess=all), tell it what the daemon is doing: the line
 * `systemctl status` shows.  The datagram protocol of sd_notify(3), which
 * systemd documents as stable for exactly such use; nothing happens
 * without the variable, and a failure is not an error. */
static void notify_status(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char msg[1024];
	socklen_t len;
	va_list ap;
	int fd, n;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	n = snprintf(msg, sizeof(msg), "STATUS=");
	va_start(ap, fmt);
	n += vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(msg))
		n = (int)sizeof(msg) - 1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)!sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

static void usage(FILE *out)
{
	char profiles[512];

	pfs_list_profiles(profiles, sizeof(profiles));
	fprintf(
	    out,
	    "Usage: pgiofs [OPTIONS] BACKING_DIR MOUNTPOINT [OPTIONS]\n"
	    "       pgiofs stat MOUNTPOINT [--json] [--interval SECONDS] [--count N]\n"
	    "                   [--relations [--top N] [--dsn CONNINFO]]\n"
	    "       pgiofs trace FILE [--csv]\n"
	    "       pgiofs trace FILE --replay [--profile NAME] [--device MODEL] [--json]\n"
	    "\n"
	    "Mount BACKING_DIR at MOUNTPOINT through pgiofs, a database-aware passthrough\n"
	    "filesystem for PostgreSQL data directories.  pgiofs must be the only writer of\n"
	    "BACKING_DIR while it is mounted.\n"
	    "\n"
	    "Options (before or after the two paths):\n"
	    "  -f, --foreground        stay in the foreground (default: daemonize once mounted)\n"
	    "  -d, --debug             print every FUSE request (implies -f)\n"
	    "  -o OPT[,OPT...]         mount options: allow_other, allow_root, ro, nosuid,\n"
	    "                          nodev, noexec, noatime, fsname=, nonempty (mount over a\n"
	    "                          non-empty directory), profile=NAME, config=FILE, or any\n"
	    "                          tunable as NAME=VALUE (as fstab and mount.fuse3 pass them)\n"
	    "  -c, --config FILE       read tunables from an INI file\n"
	    "  -p, --profile NAME      scheduler profile, read before --config: NAME or a path\n"
	    "                          (%s)\n"
	    "  -s, --set NAME=VALUE    set one tunable (after --config); NAME may be\n"
	    "                          SECTION.NAME\n"
	    "      --trace FILE        record every request into FILE, a new file (lz4;\n"
	    "                          decode with `pgiofs trace FILE`)\n"
	    "      --allow-faults      accept [fault] settings (fault injection, for tests)\n"
	    "      --print-config      print the effective configuration as INI and exit\n"
	    "      --help-tunables     every tunable: name, default, unit, range, meaning\n"
	    "  -h, --help              this help\n"
	    "  -V, --version           print the version\n"
	    "\n"
	    "Unmount with `pgiofs umount MOUNTPOINT`, `umount -R MOUNTPOINT` (as root; -R:\n"
	    "the WAL mounts pgiofs makes over pg_wal directories first, files.wal_mode),\n"
	    "`fusermount3 -u MOUNTPOINT` or SIGTERM.\n"
	    "SIGHUP re-reads the profile, the config file and the overrides.\n"
	    "Tunables: pgiofs --help-tunables, pgiofs(1), /etc/pgiofs/pgiofs.conf.\n",
	    *profiles ? profiles : "none found");
}

/* FUSE mount options passed to the kernel unchanged. */
static const char *const mount_opts[] = {
    "allow_other", "allow_root", "ro",	 "rw",	    "nosuid",  "suid",	       "nodev",
    "dev",	   "noexec",	 "exec", "noatime", "atime",   "relatime",     "norelatime",
    "strictatime", "nodiratime", "sync", "async",   "dirsync", "auto_unmount", NULL};
static const char *const mount_opts_valued[] = {
    "fsname=", "max_read=", "context=", "fscontext=", "defcontext=", "rootcontext=", NULL};

static bool is_mount_opt(const char *o)
{
	int i;

	for (i = 0; mount_opts[i]; i++)
		if (strcmp(o, mount_opts[i]) == 0)
			return true;
	for (i = 0; mount_opts_valued[i]; i++)
		if (strncmp(o, mount_opts_valued[i], strlen(mount_opts_valued[i])) == 0)
			return true;
	return false;
}

/* is_fstab_only() -- an fstab option meant for mount(8) or systemd, which
 * mount.fuse3 drops but a hand-written command line may still carry. */
static bool is_fstab_only(const char *o)
{
	return !strcmp(o, "nofail") || !strcmp(o, "_netdev") || !strcmp(o, "auto") ||
	       !strcmp(o, "noauto") || !strncmp(o, "x-", 2) || !strncmp(o, "comment=", 8);
}

struct cli {
	bool foreground, debug, nonempty, print_config, allow_faults;
	const char *config, *profile, *trace;
	char trace_abs[PATH_MAX];
	char config_abs[PATH_MAX], profile_path[PATH_MAX];
	const char *backing, *mountpoint;
	char backing_abs[PATH_MAX], mountpoint_abs[PATH_MAX];
	char fuse_opts[4096]; /* comma-separated, for libfuse */
	char *overrides[256];
	int noverrides;
};

/* has_fuse_opt() -- whether mount option @o was given. */
static bool has_fuse_opt(const struct cli *c, const char *o)
{
	size_t n = strlen(o);
	const char *p;

	for (p = c->fuse_opts; (p = strstr(p, o)); p += n)
		if ((p == c->fuse_opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static int add_fuse_opt(struct cli *c, const char *o)
{
	size_t used = strlen(c->fuse_opts);

	if (used + strlen(o) + 2 >= sizeof(c->fuse_opts))
		return -E2BIG;
	snprintf(c->fuse_opts + used, sizeof(c->fuse_opts) - used, "%s%s", used ? "," : "", o);
	return 0;
}

static int add_override(struct cli *c, const char *o)
{
	if (c->noverrides >= (int)(sizeof(c->overrides) / sizeof(c->overrides[0])))
		return -E2BIG;
	c->overrides[c->noverrides++] = (char *)o;
	return 0;
}

/* split_o() -- sort one -o argument into mount options and tunables. */
static int split_o(struct cli *c, char *arg)
{
	char *save = NULL, *o;

	for (o = strtok_r(arg, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char name[128];
		const char *eq = strchr(o, '=');

		if (strcmp(o, "nonempty") == 0) {
			c->nonempty = true;
			continue;
		}
		if (strcmp(o, "default_permissions") == 0 || strcmp(o, "defaults") == 0)
			continue; /* always on; fstab's placeholder */
		if (is_fstab_only(o))
			continue; /* mount(8)'s and systemd's business, not the mount's */
		if (strncmp(o, "profile=", 8) == 0) {
			c->profile = o + 8;
			continue;
		}
		if (strncmp(o, "config=", 7) == 0) {
			c->config = o + 7;
			continue;
		}
		if (is_mount_opt(o)) {
			if (add_fuse_opt(c, o) < 0)
				goto toolong;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - o) : (int)strlen(o), o);
		if (eq && (conf_find(pgiofs_conf(), NULL, name) || strchr(name, '.'))) {
			if (add_override(c, o) < 0)
				goto toolong;
			continue;
		}
		fprintf(stderr, "pgiofs: unknown mount option \"%s\" (see pgiofs --help)\n", o);
		return -EINVAL;
	}
	return 0;
toolong:
	fprintf(stderr, "pgiofs: too many options\n");
	return -E2BIG;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"foreground", no_argument, NULL, 'f'},    {"debug", no_argument, NULL, 'd'},
	    {"config", required_argument, NULL, 'c'},  {"set", required_argument, NULL, 's'},
	    {"print-config", no_argument, NULL, 'P'},  {"help", no_argument, NULL, 'h'},
	    {"help-tunables", no_argument, NULL, 'H'}, {"version", no_argument, NULL, 'V'},
	    {"profile", required_argument, NULL, 'p'}, {"trace", required_argument, NULL, 'T'},
	    {"allow-faults", no_argument, NULL, 'F'},  {NULL, 0, NULL, 0},
	};
	const char *paths[2] = {NULL, NULL};
	int opt, npaths = 0;

	opterr = 0;
	/* options may follow the paths, as mount.fuse3 (fstab, systemd mount
	 * units) puts them: "pgiofs BACKING MOUNT -o OPTS"; "--" ends them */
	while ((opt = getopt_long(argc, argv, "-fdo:c:s:p:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			c->foreground = true;
			break;
		case 'd':
			c->debug = c->foreground = true;
			break;
		case 'o':
			if (split_o(c, optarg) < 0)
				return 1;
			break;
		case 'c':
			c->config = optarg;
			break;
		case 'p':
			c->profile = optarg;
			break;
		case 's':
			if (add_override(c, optarg) < 0)
				return 1;
			break;
		case 'T':
			c->trace = optarg;
			break;
		case 'P':
			c->print_config = true;
			break;
		case 'F':
			c->allow_faults = true;
			break;
		case 1: /* a path, in order */
			if (npaths < 2)
				paths[npaths] = optarg;
			npaths++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'H':
			printf("Tunables (section.name, default, range); set them in a config "
			       "file (-c), with --set or -o:\n");
			conf_print_help(stdout, pgiofs_conf());
			exit(0);
		case 'V':
			printf("pgiofs %s (libfuse %s)\n", PGIOFS_VERSION, fuse_pkgversion());
			exit(0);
		default:
			if (optopt)
				fprintf(stderr,
					"pgiofs: option -%c needs an argument or is unknown\n",
					optopt);
			else
				fprintf(stderr, "pgiofs: unknown option \"%s\"\n",
					argv[optind - 1]);
			fprintf(stderr, "Try 'pgiofs --help'.\n");
			return 1;
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (npaths++ < 2)
			paths[npaths - 1] = argv[optind];
	if (c->print_config && npaths == 0)
		return 0;
	if (npaths != 2) {
		fprintf(stderr,
			"pgiofs: expected BACKING_DIR and MOUNTPOINT, got %d argument%s\n"
			"Try 'pgiofs --help'.\n",
			npaths, npaths == 1 ? "" : "s");
		return 1;
	}
	c->backing = paths[0];
	c->mountpoint = paths[1];
	return 0;
}

/* load_settings() -- defaults, then the profile, the config file and the
 * overrides, in that order.  Returns 0, or -1 with a message in @err. */
static int load_settings(const struct cli *c, struct pgiofs_settings *s, char *err, size_t errlen)
{
	char why[CONF_ERR_MAX];
	int i;

	if (conf_defaults(pgiofs_conf(), s) < 0) {
		snprintf(err, errlen, "internal error: invalid default in the tunables table");
		return -1;
	}
	if (c->profile && conf_load_file(pgiofs_conf(), s, c->profile_path, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "profile \"%s\": %s", c->profile, why);
		return -1;
	}
	if (c->config && conf_load_file(pgiofs_conf(), s, c->config_abs, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	for (i = 0; i < c->noverrides; i++)
		if (conf_set_arg(pgiofs_conf(), s, c->overrides[i], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "option \"%s\": %s", c->overrides[i], why);
			return -1;
		}
	if (ios_device_check(&s->ios, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	/* injected I/O errors in a real mount would look like a failing disk */
	if (pgiofs_fault_configured(s) && !c->allow_faults && !c->print_config) {
		snprintf(err, errlen,
			 "[fault] settings inject I/O errors and crashes; they are for tests "
			 "and need --allow-faults");
		return -1;
	}
	return 0;
}

/* resolve_files() -- absolute paths for the profile and config file, which
 * SIGHUP reads again after the daemon changed to "/". */
static int resolve_files(struct cli *c)
{
	int ret;

	if (c->profile) {
		ret = pfs_find_profile(c->profile, c->profile_path, sizeof(c->profile_path));
		if (ret < 0) {
			pfs_profile_error("pgiofs", c->profile, ret);
			return 1;
		}
	}
	if (c->config) {
		if (!realpath(c->config, c->config_abs)) {
			fprintf(stderr, "pgiofs: %s: cannot open: %s\n", c->config,
				strerror(errno));
			return 1;
		}
	}
	return 0;
}

/* check_dev_fuse() -- say what to do when /dev/fuse cannot be used. */
static int check_dev_fuse(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT)
		fprintf(stderr, "pgiofs: cannot open /dev/fuse: no such device (load the fuse "
				"module: modprobe fuse)\n");
	else if (errno == EACCES || errno == EPERM)
		fprintf(stderr,
			"pgiofs: cannot open /dev/fuse: %s (run pgiofs as root, or make the device "
			"usable by other users as Debian does: chmod 0666 /dev/fuse)\n",
			strerror(errno));
	else
		fprintf(stderr, "pgiofs: cannot open /dev/fuse: %s\n", strerror(errno));
	return 1;
}

/* raise_nofile() -- pgiofs holds a descriptor for every open file, and,
 * where inodes have no file handles (files.inode_handles), for every file
 * the kernel knows (until its FORGET): a data directory of many relations,
 * or bonnie++'s 64 Ki files, then needs tens of thousands.  As many as the
 * system lets a process have (fs.nr_open) where the daemon may raise its
 * hard limit (root), else its hard limit; before the inode table is made,
 * which sizes its descriptor cache by it. */
static void raise_nofile(void)
{
	struct rlimit rl;
	unsigned long long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (nr_open > rl.rlim_max) {
		struct rlimit up = {(rlim_t)nr_open, (rlim_t)nr_open};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ------------------------------------------------------------------------ */
/* unmounting on a signal */

struct sigctx {
	struct fuse_session *se;
	struct pfs *fs;
	const struct cli *cli;
	const char *mountpoint;
	int backing_fd;
	bool is_root;
	bool unmounting; /* a SIGTERM or SIGINT came */
	atomic_bool loop_done;
};

/* flush_mount() -- write every dirty page of the mount through the daemon
 * (syncfs on a FUSE mount writes back its page cache, whose WRITE requests
 * the still-running workers serve), then sync the backing filesystem. */
static void flush_mount(struct sigctx *c)
{
	int fd = open(c->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		if (syncfs(fd) < 0)
			log_msg(LOG_ERR, "syncfs of the mount failed: %s", strerror(errno));
		close(fd);
	}
	if (syncfs(c->backing_fd) < 0)
		log_msg(LOG_ERR, "syncfs of the backing filesystem failed: %s", strerror(errno));
}

/* reload() -- SIGHUP: read the profile, config file and overrides again;
 * a bad value keeps every old setting.  What the kernel negotiated at mount
 * time (write-back cache, request sizes) needs a remount. */
static void reload(struct sigctx *c)
{
	struct pgiofs_settings *ns = malloc(sizeof(*ns));
	char err[CONF_ERR_MAX + 64];
	int ret;

	if (!ns)
		return;
	if (load_settings(c->cli, ns, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "SIGHUP: %s; keeping the current settings", err);
		free(ns);
		return;
	}
	{
		/* [fuse], [files] and [bdi] apply at the next mount: say so if
		 * any of them changed */
		struct pgiofs_settings cur = c->fs->set;

		cur.ios = ns->ios;
		cur.stats_enabled = ns->stats_enabled;
		if (memcmp(&cur, ns, sizeof(cur)) != 0)
			log_msg(LOG_WARNING, "SIGHUP: [fuse], [files] and [bdi] settings take "
					     "effect at the next mount; [iosched], [device] and "
					     "[stats] now");
	}
	ret = pfs_reload(c->fs, ns);
	if (ret < 0)
		log_msg(LOG_ERR, "SIGHUP: cannot start the new scheduler: %s; keeping the old one",
			strerror(-ret));
	else {
		pfs_describe(c->fs, c->cli->profile, &c->fs->set); /* in effect now */
		notify_status("serving %s: reloaded, policy %s", c->mountpoint,
			      ios_policy_names[ns->ios.policy]);
		log_msg(LOG_INFO,
			"SIGHUP: settings reloaded (policy %s; changed from the defaults: %s)",
			ios_policy_names[ns->ios.policy],
			c->fs->changed[0] ? c->fs->changed : "none");
	}
	free(ns);
}

#define QUIET_MS    500
#define QUIET_MAX_S 30

/* wait_quiet() -- until the session loop has handled no request for
 * QUIET_MS, or QUIET_MAX_S have passed (writers still at work). */
static void wait_quiet(void)
{
	unsigned long last = pfs_loop_requests(), now;
	int quiet = 0, i;

	for (i = 0; i < QUIET_MAX_S * 20 && quiet < QUIET_MS / 50; i++) {
		usleep(50 * 1000);
		now = pfs_loop_requests();
		quiet = now == last ? quiet + 1 : 0;
		last = now;
	}
	if (quiet < QUIET_MS / 50)
		log_msg(LOG_WARNING, "requests still arriving after %d s: detaching anyway",
			QUIET_MAX_S);
}

/* on_signal() -- the signal thread's handler (common/sigthread.h): SIGHUP
 * reloads, SIGTERM and SIGINT unmount.  The main thread ends the handling
 * (sig_thread_end()) once the loop has returned, before it tears down
 * what a handler uses (the WAL mounts' list, the scheduler, this context). */
static void on_signal(int sig, void *arg)
{
	struct sigctx *c = arg;
	int i, ret;

	if (c->unmounting) /* one unmount; no reload during it */
		return;
	if (sig == SIGHUP) {
		reload(c);
		return;
	}
	c->unmounting = true;
	log_msg(LOG_INFO, "signal %d: unmounting %s", sig, c->mountpoint);
	notify_status("unmounting %s: writing everything through", c->mountpoint);
	/* A plain unmount writes everything back through us, then ends the
	 * connection, and the session loop returns.  WAL mounts first: the
	 * mount is busy while they exist. */
	if (pfs_walmounts_unmount(c->fs, false) == 0 &&
	    (c->is_root ? umount2(c->mountpoint, UMOUNT_NOFOLLOW) == 0
			: pfs_run_fusermount("-u", c->mountpoint) == 0))
		return;
	/* Busy: flush, detach, and end the session ourselves.  syncfs starts
	 * the write-back of every dirty page, but on a FUSE mount it need not
	 * wait for our replies, and a queueing scheduler may still hold what
	 * arrived: wait until no request has come for QUIET_MS (at most
	 * QUIET_MAX_S), drain the scheduler (pfs_drain(): a new one takes
	 * over once the old one completed everything it holds) and sync the
	 * backing store before the session ends. */
	log_msg(LOG_WARNING, "%s is busy: flushing and detaching it", c->mountpoint);
	flush_mount(c);
	wait_quiet();
	ret = pfs_drain(c->fs);
	if (ret < 0)
		log_msg(LOG_ERR, "cannot drain the scheduler: %s", strerror(-ret));
	if (syncfs(c->backing_fd) < 0)
		log_msg(LOG_ERR, "syncfs of the backing filesystem failed: %s", strerror(errno));
	pfs_walmounts_unmount(c->fs, true);
	if (c->is_root)
		umount2(c->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW);
	else
		pfs_run_fusermount("-uz", c->mountpoint);
	fuse_session_exit(c->se);
	for (i = 0; i < 20 && !atomic_load(&c->loop_done); i++)
		usleep(100 * 1000);
	if (!atomic_load(&c->loop_done)) {
		/* files still open on the detached mount keep the connection up:
		 * complete what the scheduler holds, take no more (the write
		 * lock is never released), sync, and leave */
		log_msg(LOG_WARNING, "exiting with files still open on the detached mount");
		pthread_rwlock_wrlock(&c->fs->ios_lock);
		ios_destroy(c->fs->ios);
		c->fs->ios = NULL;
		if (syncfs(c->backing_fd) < 0)
			log_msg(LOG_ERR, "syncfs of the backing filesystem failed: %s",
				strerror(errno));
		_exit(0);
	}
}

/* ------------------------------------------------------------------------ */

/* daemonize() -- what fuse_daemonize() does (fork, a new session, "/" as
 * the working directory, /dev/null as stdin, stdout and stderr), except
 * that the command returns only when the daemon writes a byte to
 * *@ready_fd (or exits, which fails the command): the WAL mounts of the
 * clusters already on the mount are made after the fork, since they need
 * the session's workers and fork keeps no threads.  In the foreground
 * *@ready_fd is -1.  0 in the daemon, -1 after a message. */
static int daemonize(bool foreground, int *ready_fd)
{
	int waiter[2], nullfd;
	char ready = 0;
	pid_t pid;

	*ready_fd = -1;
	if (foreground)
		return 0;
	if (pipe2(waiter, O_CLOEXEC) < 0) {
		fprintf(stderr, "pgiofs: cannot daemonize: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "pgiofs: cannot daemonize: %s\n", strerror(errno));
		close(waiter[0]);
		close(waiter[1]);
		return -1;
	}
	if (pid > 0) {
		close(waiter[1]);
		while (read(waiter[0], &ready, 1) < 0 && errno == EINTR)
			;
		_exit(ready ? 0 : 1);
	}
	close(waiter[0]);
	if (setsid() < 0 || chdir("/") < 0)
		return -1; /* the parent reads EOF: the command fails */
	nullfd = open("/dev/null", O_RDWR);
	if (nullfd >= 0) {
		dup2(nullfd, 0);
		dup2(nullfd, 1);
		dup2(nullfd, 2);
		if (nullfd > 2)
			close(nullfd);
	}
	*ready_fd = waiter[1];
	return 0;
}

/* open_trace() -- create the --trace file (absolute path, O_EXCL: an
 * existing file is refused); its descriptor, or -1 after a message. */
static int open_trace(struct cli *c)
{
	char dir[PATH_MAX], *slash;
	const char *base;
	int fd;

	/* the daemon changes to "/": resolve the directory now */
	snprintf(dir, sizeof(dir), "%s", c->trace);
	slash = strrchr(dir, '/');
	if (slash) {
		base = c->trace + (slash - dir) + 1;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	} else {
		base = c->trace;
		snprintf(dir, sizeof(dir), ".");
	}
	if (!*base) {
		fprintf(stderr, "pgiofs: --trace \"%s\": not a file name\n", c->trace);
		return -1;
	}
	{
		char rdir[PATH_MAX];

		if (!realpath(dir, rdir)) {
			fprintf(stderr, "pgiofs: --trace \"%s\": %s\n", c->trace, strerror(errno));
			return -1;
		}
		if ((size_t)snprintf(c->trace_abs, sizeof(c->trace_abs), "%s/%s",
				     strcmp(rdir, "/") == 0 ? "" : rdir,
				     base) >= sizeof(c->trace_abs)) {
			fprintf(stderr, "pgiofs: --trace \"%s\": path too long\n", c->trace);
			return -1;
		}
	}
	c->trace = c->trace_abs;
	{
		/* inside the backing tree the trace would appear in the data
		 * directory and be written behind pgiofs's back */
		size_t n = strlen(c->backing);

		if (strncmp(c->trace, c->backing, n) == 0 &&
		    (c->trace[n] == '/' || c->trace[n] == '\0')) {
			fprintf(stderr,
				"pgiofs: trace file \"%s\" is inside the backing directory \"%s\": "
				"put it elsewhere\n",
				c->trace, c->backing);
			return -1;
		}
	}
	fd = open(c->trace, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			fprintf(stderr,
				"pgiofs: trace file \"%s\" already exists; pgiofs never "
				"overwrites a trace: remove it or choose another name\n",
				c->trace);
		else
			fprintf(stderr, "pgiofs: cannot create trace file \"%s\": %s\n", c->trace,
				strerror(errno));
		return -1;
	}
	return fd;
}

/* drop_trace() -- a mount that failed leaves no trace file behind. */
static void drop_trace(const struct cli *c, int fd)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(c->trace);
}

/* close_trace() -- flush, fsync and close the trace; log what it lost. */
static void close_trace(struct pfs *fs, const char *path)
{
	struct ios_trace_stats st;
	int ret;

	if (!fs->trace)
		return;
	memset(&st, 0, sizeof(st));
	ret = ios_trace_writer_close(fs->trace, &st);
	fs->trace = NULL;
	if (ret < 0)
		log_msg(LOG_ERR, "trace \"%s\": %s; it is incomplete", path, strerror(-ret));
	if (st.dropped)
		log_msg(LOG_WARNING,
			"trace \"%s\": %" PRIu64 " of %" PRIu64
			" records dropped (the writer fell behind or failed)",
			path, st.dropped, st.records + st.dropped);
}

static int run(struct cli *c, struct pfs *fs)
{
	char *fargv[8];
	int fargc = 0, ret = 1;
	struct fuse_args args;
	struct fuse_session *se;
	char opts[sizeof(c->fuse_opts) + PATH_MAX + 128];
	struct sigctx sc;
	sigset_t sigs;
	char err[512];
	int trace_fd = -1, ready_fd = -1;

	if (check_dev_fuse())
		return 1;
	if (pgiofs_check_paths(c->backing, c->mountpoint, c->nonempty, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgiofs: %s\n", err);
		return 1;
	}
	/* the daemon changes to "/": from here on only absolute paths */
	if (!realpath(c->backing, c->backing_abs) || !realpath(c->mountpoint, c->mountpoint_abs)) {
		fprintf(stderr, "pgiofs: cannot resolve \"%s\" or \"%s\": %s\n", c->backing,
			c->mountpoint, strerror(errno));
		return 1;
	}
	c->backing = c->backing_abs;
	c->mountpoint = c->mountpoint_abs;
	/* a trial scheduler reports bad settings while we still have a
	 * terminal; the real one is started after daemonizing (fork keeps no
	 * threads) */
	fs->ios = ios_create_with(&fs->set.ios);
	if (!fs->ios) {
		fprintf(stderr, "pgiofs: cannot start the I/O scheduler (policy %s): %s\n",
			ios_policy_names[fs->set.ios.policy], strerror(errno));
		return 1;
	}
	ios_destroy(fs->ios);
	fs->ios = NULL;
	ret = pfs_init_root(fs, c->backing);
	if (ret < 0) {
		fprintf(stderr, "pgiofs: backing directory \"%s\": %s\n", c->backing,
			strerror(-ret));
		return 1;
	}
	{
		/* said while there is a terminal: without handles, the
		 * open-files limit caps the files known at once */
		struct pfs_inode_counters n;
		char line[512];

		pfs_inodes_counters(fs, &n);
		if (!n.handles && fs->set.inode_handles == PGIOFS_HANDLES_YES) {
			fprintf(stderr,
				"pgiofs: cannot mount \"%s\" with files.inode_handles = yes: %s\n",
				c->mountpoint, n.note);
			return 1;
		}
		if (!n.handles && fs->set.inode_handles == PGIOFS_HANDLES_AUTO) {
			pfs_inodes_describe(fs, line, sizeof(line));
			fprintf(stderr, "pgiofs: warning: %s\n", line);
		}
	}
	/* the statistics live as long as the mount, across reloads */
	fs->stats = ios_stats_create();
	if (!fs->stats) {
		fprintf(stderr, "pgiofs: cannot allocate the statistics: %s\n", strerror(errno));
		return 1;
	}
	/* refused before anything is mounted */
	if (fs->set.uring == PGIOFS_URING_YES && !pfs_uring_enabled(err, sizeof(err))) {
		fprintf(stderr, "pgiofs: cannot mount \"%s\" with fuse.uring = yes: %s\n",
			c->mountpoint, err);
		return 1;
	}
	ret = 1;
	/* the trace file is created (never overwritten) while we still have a
	 * terminal to refuse on; its writer thread starts after daemonizing */
	if (c->trace && (trace_fd = open_trace(c)) < 0)
		return 1;
	/* the subtype lets other instances (and people) see what a mount is */
	snprintf(opts, sizeof(opts), "default_permissions,subtype=pgiofs%s%s",
		 strstr(c->fuse_opts, "fsname=") ? "" : ",fsname=", "");
	if (!strstr(c->fuse_opts, "fsname=")) {
		char rb[PATH_MAX];

		snprintf(rb, sizeof(rb), "%s", c->backing);
		/* commas would split the option: fsname is informational */
		for (char *p = rb; *p; p++)
			if (*p == ',')
				*p = '_';
		strncat(opts, rb, sizeof(opts) - strlen(opts) - 1);
	}
	if (*c->fuse_opts) {
		strncat(opts, ",", sizeof(opts) - strlen(opts) - 1);
		strncat(opts, c->fuse_opts, sizeof(opts) - strlen(opts) - 1);
	}
	fargv[fargc++] = "pgiofs";
	fargv[fargc++] = "-o";
	fargv[fargc++] = opts;
	if (c->debug)
		fargv[fargc++] = "-d";
	fargv[fargc] = NULL;
	args = (struct fuse_args)FUSE_ARGS_INIT(fargc, fargv);

	se = fuse_session_new(&args, &pfs_ops, sizeof(pfs_ops), fs);
	fuse_opt_free_args(&args);
	if (!se) {
		fprintf(stderr, "pgiofs: cannot start a FUSE session with options \"%s\"\n", opts);
		goto out_trace;
	}
	fs->se = se;
	if (fuse_session_mount(se, c->mountpoint) != 0) {
		fprintf(stderr, "pgiofs: cannot mount \"%s\" (see the message above)\n",
			c->mountpoint);
		goto out_destroy;
	}
	if (pfs_wire_attach(fs) < 0) {
		fprintf(stderr, "pgiofs: cannot attach to the FUSE session\n");
		goto out_unmount;
	}
	/* INIT now, while there is a terminal: what the kernel offers decides
	 * how WAL is opened, and a fallback is said where the user sees it */
	pfs_uring_prepare(fs);
	ret = pfs_loop_init(se);
	if (ret < 0) {
		fprintf(stderr, "pgiofs: the kernel's INIT request for \"%s\" failed: %s\n",
			c->mountpoint, strerror(-ret));
		fuse_session_unmount(se);
		fuse_session_destroy(se);
		drop_trace(c, trace_fd);
		return 1;
	}
	ret = 1;
	pfs_uring_explain(fs);
	if (fs->set.uring == PGIOFS_URING_YES && !atomic_load(&fs->wire.uring)) {
		fprintf(stderr, "pgiofs: cannot mount \"%s\" with fuse.uring = yes: %s\n",
			c->mountpoint, fs->uring_note);
		goto out_unmount;
	}
	if (fs->wal_note[0])
		fprintf(stderr, "pgiofs: %s\n", fs->wal_note);
	if (fs->wal_split) {
		/* the mount's own options, and its fsname (from the user, or
		 * each WAL mount's backing directory) */
		char walopts[sizeof(c->fuse_opts) + 64];

		snprintf(walopts, sizeof(walopts), "default_permissions,subtype=pgiofs%s%s%s",
			 c->debug ? ",debug" : "", *c->fuse_opts ? "," : "", c->fuse_opts);
		if (pfs_walmounts_create(fs, c->backing, c->mountpoint, walopts) < 0) {
			fprintf(stderr, "pgiofs: out of memory\n");
			goto out_unmount;
		}
	}
	pfs_tune_bdi(fs, c->mountpoint);
	pfs_devqueue_apply(fs);
	/* bound now, served after daemonizing: ready when the command returns */
	if (pfs_control_open(fs, c->mountpoint, c->backing, has_fuse_opt(c, "allow_other"), err,
			     sizeof(err)) < 0)
		fprintf(stderr, "pgiofs: warning: %s; `pgiofs stat` will not work for this mount\n",
			err);
	fs->foreground = c->foreground;
	if (daemonize(c->foreground, &ready_fd) != 0)
		goto out_unmount;
	if (!c->foreground)
		log_to_syslog();
	pfs_describe(fs, c->profile, &fs->set);
	notify_status("serving %s on %s: profile %s, policy %s, WAL %s", c->backing, c->mountpoint,
		      c->profile ? c->profile : "none", ios_policy_names[fs->set.ios.policy],
		      pgiofs_wal_mode_names[fs->wal_mode]);
	{
		char why[384];
		bool direct = pfs_backing_direct(fs, why, sizeof(why));

		char ring[256], inodes[512];

		pfs_uring_describe(fs, ring, sizeof(ring));
		pfs_inodes_describe(fs, inodes, sizeof(inodes));
		log_msg(LOG_INFO,
			"mounted %s on %s: profile %s, policy %s, WAL %s, backing files %s (%s), "
			"requests over %s (%s), %s; tunables changed from their defaults: %s",
			c->backing, c->mountpoint, c->profile ? c->profile : "none",
			ios_policy_names[fs->set.ios.policy], pgiofs_wal_mode_names[fs->wal_mode],
			direct ? "O_DIRECT" : "buffered", why,
			atomic_load(&fs->wire.uring) ? "io_uring" : "/dev/fuse", ring, inodes,
			fs->changed[0] ? fs->changed : "none");
	}
	if (trace_fd >= 0) {
		struct ios_trace_opts to = {.fd = trace_fd};
		sigset_t all, old;
		int e = 0;

		/* takes trace_fd over, closing it on failure; its thread takes
		 * no signals (they are the signal thread's) */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		fs->trace = ios_trace_writer_create_opts(NULL, &to, &e);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		trace_fd = -1; /* the writer's now, or closed */
		if (!fs->trace) {
			log_msg(LOG_ERR, "cannot start the trace \"%s\": %s", c->trace,
				strerror(-e));
			unlink(c->trace);
			goto out_unmount;
		}
	}
	/* before any thread starts (a queueing scheduler's dispatcher): only
	 * the signal thread takes these, or a SIGHUP would kill the daemon */
	memset(&sc, 0, sizeof(sc));
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	fs->ios = pfs_sched_create(fs, &fs->set);
	if (!fs->ios) {
		log_msg(LOG_ERR, "cannot start the I/O scheduler: %s", strerror(errno));
		goto out_unmount;
	}
	pfs_walprep_start(fs); /* without it, PostgreSQL makes its segments itself */
	pfs_space_start(fs, c->mountpoint);
	/* the rings serve requests at once, so after the scheduler; and as
	 * soon as can be: the kernel holds every request from the INIT reply
	 * until the rings are ready (threads do not survive the fork, so not
	 * before it); nothing of the daemon touches the mount until then */
	if (pfs_uring_start(fs) < 0 && fs->set.uring == PGIOFS_URING_YES) {
		log_msg(LOG_ERR, "cannot serve \"%s\" with fuse.uring = yes: %s", c->mountpoint,
			fs->uring_note);
		goto out_unmount;
	}

	sc.se = se;
	sc.fs = fs;
	sc.cli = c;
	sc.mountpoint = c->mountpoint;
	sc.is_root = fs->is_root;
	sc.backing_fd = open(c->backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sc.backing_fd < 0)
		sc.backing_fd = fs->root.fd;
	signal(SIGPIPE, SIG_IGN);
	if (sig_thread_start(&sigs, on_signal, &sc, 0) < 0) {
		log_msg(LOG_ERR, "cannot start the signal thread");
		goto out_backing;
	}
	/* the existing clusters' WAL mounts, before `pgiofs stat` answers (it
	 * shows them mounting); they wait for the loop's workers, and the
	 * command returns once they are mounted (or failed) */
	pfs_walmounts_start(fs, ready_fd);
	ready_fd = -1; /* theirs */
	/* after the signal mask: only the signal thread takes those signals */
	if (fs->control && (ret = pfs_control_start(fs)) < 0) {
		log_msg(LOG_WARNING,
			"cannot start the control thread: %s; `pgiofs stat` will not work for "
			"this mount",
			strerror(-ret));
		pfs_control_stop(fs);
	}

	ret = pfs_loop(se, &fs->set) < 0 ? 1 : 0;
	pfs_uring_stop(fs);
	atomic_store(&sc.loop_done, true);
	/* a handler running (an unmount waiting for loop_done, a reload)
	 * finishes, and none runs from now on: what it uses goes below */
	sig_thread_end();
	/* the WAL sessions end with the mount's, and their requests complete
	 * in the scheduler they share */
	pfs_walmounts_stop(fs);
	pfs_walprep_stop(fs);
	pfs_space_stop(fs);
	/* requests still queued complete (their replies go nowhere now)
	 * before the session they belong to goes away; under the lock, as in
	 * a reload: the control thread may be reading the scheduler */
	pthread_rwlock_wrlock(&fs->ios_lock);
	ios_destroy(fs->ios);
	fs->ios = NULL;
	pthread_rwlock_unlock(&fs->ios_lock);
	/* every request has completed: nothing writes to the trace any more */
	close_trace(fs, c->trace);
	/* one clean-up path, in reverse order of acquisition */
out_backing:
	if (sc.backing_fd != fs->root.fd)
		close(sc.backing_fd);
out_unmount:
	fuse_session_unmount(se);
	/* after the unmount: nothing of this mount is queued any more */
	pfs_walprep_stop(fs);
	pfs_space_stop(fs);
	pfs_devqueue_restore(fs);
out_destroy:
	fuse_session_destroy(se);
out_trace:
	drop_trace(c, trace_fd);
	return ret;
}

int pgiofs_main(int argc, char **argv)
{
	struct cli c;
	struct pfs fs;
	int ret;

	log_init("pgiofs");
	if (argc >= 2 && strcmp(argv[1], "stat") == 0)
		return pfs_stat_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "trace") == 0)
		return pfs_trace_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "umount") == 0)
		return pfs_umount_main(argc - 1, argv + 1);
	memset(&c, 0, sizeof(c));
	memset(&fs, 0, sizeof(fs));
	fs.root.fd = -1;
	if (parse_args(&c, argc, argv) || resolve_files(&c))
		return 1;
	{
		char err[CONF_ERR_MAX + 64];

		if (load_settings(&c, &fs.set, err, sizeof(err)) < 0) {
			fprintf(stderr, "pgiofs: %s\n", err);
			return 1;
		}
	}
	if (c.print_config) {
		printf("; pgiofs configuration (INI).  Use it with: pgiofs --config FILE ...\n"
		       "; Every option, its unit, range and default; generated by\n"
		       "; `pgiofs --print-config`, which prints the effective values.\n\n");
		conf_print_ini(stdout, pgiofs_conf(), &fs.set);
		return 0;
	}
	fs.is_root = geteuid() == 0;
	raise_nofile();
	umask(0); /* the kernel has applied the caller's umask already */
	ret = run(&c, &fs);
	pfs_walmounts_stop(&fs); /* after a failed start */
	pfs_control_stop(&fs);
	pfs_walmounts_destroy(&fs); /* the control channel described them */
	pfs_walprep_free(&fs);	    /* and counted its segments */
	pfs_space_free(&fs);
	ios_destroy(fs.ios);
	close_trace(&fs, c.trace); /* after a failed start */
	ios_stats_destroy(fs.stats);
	pfs_cleanup(&fs);
	return ret;
}
