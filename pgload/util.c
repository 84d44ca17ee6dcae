/*
 * util.c -- the small helpers under every part of pgload: the clock,
 * removing a tree, the file system type of a path, `time`'s format, finding
 * a program, and running one to completion.
 *
 * What must stay true: a program pgl_proc_run() starts never outlives
 * pgload (PR_SET_PDEATHSIG), reads nothing from pgload's stdin, gets the
 * default signal dispositions, and is waited for whatever happens; one that
 * says too much is read to the end, not left blocked on a full pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgload_i.h"
#include "version.h"

void pgl_print_version(void)
{
	int v = PQlibVersion(); /* 150013 for 15.13 */
	printf("pgload %s (libpq %d.%d)\n", PGIOFS_RELEASE, v / 10000, v % 10000);
}

double pgl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double pgl_seconds(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path) < 0 && errno != ENOENT)
		fprintf(stderr, "pgload: could not remove \"%s\": %s\n", path, strerror(errno));
	return 0;
}

int pgl_rmtree(const char *path)
{
	if (access(path, F_OK) < 0)
		return 0;
	if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return access(path, F_OK) == 0 ? -ENOTEMPTY : 0;
}

int pgl_tmpdir(const char **out)
{
	const char *t = getenv("TMPDIR");
	struct stat st;

	*out = "/tmp";
	if (!t || !*t)
		return 0;
	if (t[0] != '/' || strlen(t) > PGL_TMPDIR_MAX) {
		fprintf(stderr,
			"pgload: TMPDIR \"%s\" is not usable: it must be an absolute path of at "
			"most %d bytes (a server socket is made below it)\n",
			t, PGL_TMPDIR_MAX);
		return -EINVAL;
	}
	if (stat(t, &st) < 0) {
		int e = errno;

		fprintf(stderr, "pgload: TMPDIR \"%s\" is not usable: %s\n", t, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "pgload: TMPDIR \"%s\" is not usable: not a directory\n", t);
		return -ENOTDIR;
	}
	*out = t;
	return 0;
}

const char *pgl_fstype(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) < 0)
		return "unknown";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53:
		return "ext4";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0x01021994:
		return "tmpfs";
	case 0x65735546:
		return "fuse";
	case 0x794c7630:
		return "overlay";
	case 0x2FC12FC1:
		return "zfs";
	case 0xF2F52010:
		return "f2fs";
	case 0x6969:
		return "nfs";
	default:
		return "other";
	}
}

void pgl_fmt_time(char *buf, size_t cap, double secs)
{
	if (secs < 0)
		secs = 0;
	long ms = (long)(secs * 1000.0 + 0.5);
	snprintf(buf, cap, "%ldm%ld.%03lds", ms / 60000, (ms / 1000) % 60, ms % 1000);
}

int pgl_which(const char *prog, char *out, size_t cap)
{
	const char *env = getenv("PATH");
	char *dirs, *save = NULL;
	int ret = -ENOENT;

	/* mkfs and losetup live in sbin, which a user's PATH may lack */
	if (asprintf(&dirs, "%s:/sbin:/usr/sbin", env ? env : "/usr/bin:/bin") < 0)
		return -ENOMEM;
	for (char *d = strtok_r(dirs, ":", &save); d && ret < 0; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/%s", d, prog);
		if (access(out, X_OK) == 0)
			ret = 0;
	}
	free(dirs);
	return ret;
}

int pgl_find_sibling(const char *prog, const char *given, char *out, size_t cap)
{
	char exe[512];
	if (given) {
		snprintf(out, cap, "%s", given);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, cap, "%s/%s", exe, prog);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	return pgl_which(prog, out, cap);
}

/* drain() -- read what FD has into BUF (CAP bytes with the NUL) at *LEN;
 * what does not fit is read and dropped, and sets *CUT.  false at its end. */
static bool drain(int fd, char *buf, size_t cap, size_t *len, bool *cut)
{
	char scratch[4096];
	bool room = buf && *len + 1 < cap;
	ssize_t got =
	    read(fd, room ? buf + *len : scratch, room ? cap - 1 - *len : sizeof(scratch));

	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (got <= 0)
		return false;
	if (room)
		*len += (size_t)got;
	else
		*cut = true;
	return true;
}

int pgl_proc_run(struct pgl_proc *p)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, st = 0, e = 0;
	char path[4096];
	const char *prog = p->argv[0];
	size_t elen = 0;
	bool timeout = false;

	p->outlen = 0;
	p->cut = false;
	p->signal = 0;
	if (!strchr(prog, '/') && pgl_which(prog, path, sizeof(path)) == 0)
		prog = path;
	if (pipe2(po, O_CLOEXEC) < 0 || (p->err && pipe2(pe, O_CLOEXEC) < 0)) {
		e = errno;
		goto out;
	}
	pid_t pid = fork();
	if (pid < 0) {
		e = errno;
		goto out;
	}
	if (pid == 0) {
		pgl_child_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(p->err ? pe[1] : po[1], 2);
		execv(prog, p->argv);
		fprintf(stderr, "cannot run %s: %s\n", p->argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	po[1] = -1;
	if (p->err) {
		close(pe[1]);
		pe[1] = -1;
	}
	if (p->interruptible)
		pgl_child_register(pid);
	struct pollfd pfd[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
	double t0 = pgl_now();
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		int wait_ms = -1;
		if (p->timeout_ms >= 0) {
			wait_ms = p->timeout_ms - (int)((pgl_now() - t0) * 1000);
			if (wait_ms <= 0) {
				timeout = true;
				break;
			}
		}
		int r = poll(pfd, 2, wait_ms);
		if (r < 0 && errno != EINTR) {
			e = errno;
			break;
		}
		bool cut_err = false;
		if (r > 0 && pfd[0].revents &&
		    !drain(pfd[0].fd, p->out, p->outcap, &p->outlen, &p->cut))
			pfd[0].fd = -1;
		if (r > 0 && pfd[1].revents &&
		    !drain(pfd[1].fd, p->err, p->errcap, &elen, &cut_err))
			pfd[1].fd = -1;
	}
	if (timeout || e)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			e = e ? e : errno;
			break;
		}
	if (p->interruptible)
		pgl_child_register(0);
out:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	if (p->out && p->outcap)
		p->out[p->outlen] = '\0';
	if (p->err && p->errcap)
		p->err[elen] = '\0';
	if (timeout)
		return -ETIMEDOUT;
	if (e)
		return -e;
	if (WIFSIGNALED(st)) {
		p->signal = WTERMSIG(st);
		return 128 + p->signal;
	}
	return WEXITSTATUS(st);
}

int pgl_run_cmd(char *const argv[], char *out, size_t cap)
{
	struct pgl_proc p = {
	    .argv = argv, .out = out, .outcap = cap, .timeout_ms = -1, .interruptible = true};
	return pgl_proc_run(&p);
}

int pgl_run_ok(const char *what, char *const argv[], char *out, size_t cap)
{
	char buf[4096];
	if (!out) {
		out = buf;
		cap = sizeof(buf);
	}
	int st = pgl_run_cmd(argv, out, cap);
	if (st == 0)
		return 0;
	if (atomic_load(&pgl_interrupted))
		return -EINTR;
	fprintf(stderr, "pgload: %s: `%s", what, argv[0]);
	for (int i = 1; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	if (st < 0)
		fprintf(stderr, "` could not run: %s\n", strerror(-st));
	else
		fprintf(stderr, "` failed (exit status %d)%s%s", st, out[0] ? ":\n" : "\n", out);
	return -EIO;
}
