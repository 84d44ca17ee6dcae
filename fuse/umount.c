/*
 * umount.c -- `pgiofs umount MOUNTPOINT`: unmount a pgiofs mount the way a
 * script stopping a database wants it, and return once the daemon is gone.
 *
 * A plain umount(8) right after `pg_ctl stop` can fail with EBUSY: pg_ctl
 * returns when the postmaster has removed its pid file, a moment before the
 * process (whose working directory is the data directory) has exited.  And
 * umount(8) returns before the daemon has finished: it completes the
 * requests it still holds after the kernel has let go of the mount.  So
 * this command waits until --timeout for no process to hold anything
 * under MOUNTPOINT (its working directory, root or an open file), names
 * them if it gives up (and then changes nothing), takes down pgiofs mounts
 * below MOUNTPOINT first, deepest first (the WAL mounts over pg_wal
 * directories, which keep the mount busy while they exist), retrying a
 * busy unmount until --timeout, and waits until each daemon has closed its
 * control channel, the last thing it does.
 *
 * What must stay true: nothing is detached or forced; a mount that stays
 * busy is left mounted and the command fails naming who holds it; nothing
 * below it is taken down while a process it can see holds the mount, and
 * if something it cannot see does, it says which mounts below went.
 */
#include "pgiofs_i.h"
#include "mountinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct target {
	char point[PATH_MAX];
	unsigned major, minor;
	bool wal; /* a WAL mount (no control channel of its own) */
};

struct collect {
	const char *top;
	struct target *t; /* n of them, room for cap */
	int n, cap;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* below() -- collect the pgiofs mounts at or below c->top (a later mount
 * at the same point replaces the earlier entry: it hides it). */
static int below(const struct mountinfo *m, void *arg)
{
	struct collect *c = arg;
	int i;

	if (strcmp(m->fstype, "fuse.pgiofs") != 0 || !path_is_under(m->point, c->top))
		return 0;
	for (i = 0; i < c->n; i++)
		if (strcmp(c->t[i].point, m->point) == 0)
			break;
	if (i == c->cap) { /* a WAL mount per cluster: as many as there are */
		struct target *t = realloc(c->t, sizeof(*t) * (size_t)(c->cap ? 2 * c->cap : 16));

		if (!t)
			return -ENOMEM;
		c->t = t;
		c->cap = c->cap ? 2 * c->cap : 16;
	}
	snprintf(c->t[i].point, sizeof(c->t[i].point), "%s", m->point);
	c->t[i].major = m->major;
	c->t[i].minor = m->minor;
	if (i == c->n)
		c->n++;
	return 0;
}

static int deeper_first(const void *a, const void *b)
{
	size_t la = strlen(((const struct target *)a)->point);
	size_t lb = strlen(((const struct target *)b)->point);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* holders() -- the processes whose working directory, root or an open
 * file lies on @point (what keeps it busy), printed if @print (20 at
 * most); how many were found. */
static int holders(const char *point, bool print)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	int shown = 0;

	if (!proc)
		return 0;
	while ((e = readdir(proc)) && shown < 20) {
		char path[300], link[PATH_MAX], comm[64] = "?";
		const char *what = NULL;
		ssize_t n;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cwd", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', path_is_under(link, point)))
			what = "working directory";
		snprintf(path, sizeof(path), "/proc/%s/root", e->d_name);
		n = what ? -1 : readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', path_is_under(link, point)))
			what = "root directory";
		if (!what) {
			DIR *fds;
			struct dirent *fe;

			snprintf(path, sizeof(path), "/proc/%s/fd", e->d_name);
			fds = opendir(path);
			while (fds && !what && (fe = readdir(fds))) {
				char fpath[600];

				snprintf(fpath, sizeof(fpath), "%s/%s", path, fe->d_name);
				n = readlink(fpath, link, sizeof(link) - 1);
				if (n > 0 && (link[n] = '\0', path_is_under(link, point)))
					what = "open file";
			}
			if (fds)
				closedir(fds);
		}
		if (!what)
			continue;
		shown++;
		if (!print)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		fprintf(stderr, "  pid %s (%s): %s %s\n", e->d_name, comm, what, link);
	}
	closedir(proc);
	return shown;
}

/* say_busy() -- @point stays mounted: who holds it. */
static void say_busy(const char *point)
{
	fprintf(stderr, "  it is still mounted, in use by (stop them first):\n");
	if (!holders(point, true))
		fprintf(stderr, "  no process that can be seen here (a bind mount, another mount "
				"namespace, a mapped file?)\n");
}

/* say_left() -- @point stayed mounted after the @n mounts in @t below it
 * were unmounted: say what that leaves. */
static void say_left(const char *point, const struct target *t, int n)
{
	int i;

	fprintf(stderr, "pgiofs umount: \"%s\" stays mounted, but these below it were unmounted:\n",
		point);
	for (i = 0; i < n; i++)
		fprintf(stderr, "  %s (%s)\n", t[i].point,
			t[i].wal ? "a WAL mount: its WAL is now opened direct through the mount, "
				   "until pgiofs is mounted again"
				 : "a pgiofs mount: its daemon has exited");
}

/* daemon_pid() -- the daemon of mount @t, as its control channel names it
 * ("pid" among a snapshot's members; the socket's own credentials are the
 * process that bound it, before the daemon forked).  0 if it does not
 * answer. */
static pid_t daemon_pid(const struct target *t)
{
	struct timeval tv = {PFS_CTL_TIMEOUT_S, 0};
	struct sockaddr_un sa;
	unsigned len = pfs_control_addr(t->major, t->minor, &sa);
	static char buf[PFS_CTL_EXTRA_MAX + 512];
	const char *p;
	size_t got = 0;
	ssize_t n;
	pid_t pid = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, len) == 0 &&
	    send(fd, "snapshot-raw\n", 13, MSG_NOSIGNAL) == 13) {
		/* the header line, then the members' JSON: enough to find it */
		while (got < sizeof(buf) - 1 &&
		       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)n;
			buf[got] = '\0';
			if ((p = strstr(buf, "\"pid\":")) && strchr(p, ','))
				break;
		}
		buf[got] = '\0';
		if ((p = strstr(buf, "\"pid\":")))
			pid = (pid_t)strtol(p + 6, NULL, 10);
	}
	close(fd);
	return pid;
}

/* running() -- @pid exists and has not exited (a zombie has). */
static bool running(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

/* unmount_one() -- unmount @t, retrying while busy until @deadline, then
 * wait for its daemon until @deadline: its control channel closes after
 * it has completed everything, then the process exits.  0, or 1 with a
 * message. */
static int unmount_one(const struct target *t, double deadline)
{
	bool root = geteuid() == 0;
	pid_t pid = daemon_pid(t);
	int err = 0;

	for (;;) {
		if (root ? umount2(t->point, UMOUNT_NOFOLLOW) == 0
			 : pfs_run_fusermount("-u", t->point) == 0)
			break;
		err = root ? errno : EBUSY; /* fusermount3 says why on stderr */
		if (root && err == EINVAL)
			break; /* no longer mounted: someone else unmounted it */
		if (err != EBUSY || now_s() >= deadline) {
			fprintf(stderr, "pgiofs umount: cannot unmount \"%s\": %s\n", t->point,
				strerror(err));
			if (err == EBUSY)
				say_busy(t->point);
			return 1;
		}
		usleep(100 * 1000);
	}
	while (!pfs_control_refused(t->major, t->minor) || (pid > 0 && running(pid))) {
		if (now_s() >= deadline) {
			fprintf(stderr,
				"pgiofs umount: \"%s\" is unmounted, but its daemon has not "
				"finished yet (it completes what it still holds); not waiting "
				"longer\n",
				t->point);
			return 1;
		}
		usleep(50 * 1000);
	}
	return 0;
}

static void umount_usage(FILE *out)
{
	fprintf(out, "Usage: pgiofs umount MOUNTPOINT [--timeout SECONDS]\n"
		     "\n"
		     "Unmount the pgiofs mount at MOUNTPOINT (and pgiofs mounts below it,\n"
		     "deepest first), waiting while it is busy for up to SECONDS (30), and\n"
		     "return once its daemon has written everything through and exited.  If\n"
		     "it stays busy, nothing is changed and the processes using it are named.\n");
}

int pfs_umount_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"timeout", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct collect c = {0};
	char abs[PATH_MAX], *end;
	double timeout = 30, deadline;
	int opt, i, ret = 1;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(timeout >= 0 && timeout <= 86400)) {
				fprintf(stderr,
					"pgiofs umount: --timeout \"%s\": not a number of "
					"seconds from 0 to 86400\n",
					optarg);
				return 1;
			}
			break;
		case 'h':
			umount_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "pgiofs umount: unknown option \"%s\"\n", argv[optind - 1]);
			umount_usage(stderr);
			return 1;
		}
	}
	if (argc - optind != 1) {
		umount_usage(stderr);
		return 1;
	}
	if (!realpath(argv[optind], abs)) {
		fprintf(stderr, "pgiofs umount: \"%s\": %s\n", argv[optind], strerror(errno));
		return 1;
	}
	c.top = abs;
	opt = mountinfo_each(NULL, below, &c);
	if (opt < 0) {
		fprintf(stderr, "pgiofs umount: reading the mount table: %s\n", strerror(-opt));
		goto out;
	}
	for (i = 0; i < c.n && strcmp(c.t[i].point, abs) != 0; i++)
		;
	if (i == c.n) {
		fprintf(stderr, "pgiofs umount: \"%s\" is not a pgiofs mount point\n", abs);
		goto out;
	}
	qsort(c.t, (size_t)c.n, sizeof(c.t[0]), deeper_first);
	for (i = 0; i < c.n - 1; i++)
		c.t[i].wal = pfs_control_refused(c.t[i].major, c.t[i].minor);
	deadline = now_s() + timeout;
	/* nothing is taken down while a process holds anything under the
	 * mount: the mounts below would go (the WAL mounts first) and the
	 * mount stay */
	while (holders(abs, false) > 0) {
		if (now_s() >= deadline) {
			fprintf(stderr, "pgiofs umount: cannot unmount \"%s\": %s\n", abs,
				strerror(EBUSY));
			say_busy(abs);
			goto out;
		}
		usleep(100 * 1000);
	}
	for (i = 0; i < c.n; i++)
		if (unmount_one(&c.t[i], deadline)) {
			if (i > 0) /* held by what the scan above cannot see */
				say_left(c.t[i].point, c.t, i);
			goto out;
		}
	ret = 0;
out:
	free(c.t);
	return ret;
}
