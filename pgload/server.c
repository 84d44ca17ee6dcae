/*
 * server.c -- the embedded PostgreSQL server of `pgload run` without --dsn.
 *
 * Layout: a private directory from mkdtemp("$TMPDIR/pgload.XXXXXX")
 * (pgl_tmpdir(): /tmp if TMPDIR is unset) holds the Unix socket ("sock/"),
 * the server log ("server.log") and, unless --pgdata names another place,
 * the cluster ("data/").  The server listens on no TCP
 * address.  As root, the directories are given to the "postgres" user and
 * initdb and postgres run as that user.
 *
 * With --on-pgiofs, the cluster lives on a pgiofs mount ("mnt/", backed by
 * "backing/") that pgload mounts before initdb and unmounts after the
 * server has stopped.  `pgload compare` may put the backing directory
 * elsewhere (on the back end under test: removed at stop as well), the
 * private directory under its own work directory, and pass pgiofs options.
 *
 * What must stay true: after pgl_server_stop(), or after a failed
 * pgl_server_start(), no postmaster and none of those directories remain,
 * nor the shared memory of a postmaster that was killed (a clean shutdown
 * removes its own; a killed one leaves its System V segment and its
 * dynamic shared memory in /dev/shm, which only the next start on the same
 * data directory would remove: note_shm() records them once the server
 * runs, release_shm() removes them after it stopped).
 * The postmaster runs in its own session (a Ctrl-C at the terminal reaches
 * pgload, which shuts the server down in order) and gets SIGQUIT from the
 * kernel if pgload dies (PR_SET_PDEATHSIG).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pgload_i.h"

#define START_TIMEOUT_S 60.0
#define STOP_TIMEOUT_S	30.0

struct pgl_server {
	char tmpdir[256];
	char sockdir[300];
	char logpath[300];
	char *pgdata;
	bool pgdata_given;   /* --pgdata was given */
	bool own_pgdata_dir; /* we created the --pgdata directory itself */
	char bindir[512];
	char user[64];
	uid_t uid;
	gid_t gid;
	bool drop_privs;
	int port;
	pid_t pid;
	int status; /* wait status once exited */
	bool exited;
	char conninfo[512];
	/* --on-pgiofs */
	char mnt[300], backing[1024];
	bool mounted;
	char waldir[1024]; /* initdb --waldir, or "" */
	/* the running server's shared memory (note_shm()) */
	int shm_id;	 /* System V segment, -1 if unknown */
	char dsm[8][48]; /* /dev/shm/PostgreSQL.N the postmaster maps */
	int ndsm;
};

/* note_shm() -- record the shared memory of the running postmaster: the
 * System V segment postmaster.pid names (line 7: key and id) and the
 * dynamic shared memory segments in its memory map. */
static void note_shm(struct pgl_server *s)
{
	char path[600], line[512];
	FILE *f;
	int n = 0, key, id;

	snprintf(path, sizeof(path), "%s/postmaster.pid", s->pgdata);
	if ((f = fopen(path, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (++n == 7 && sscanf(line, "%d %d", &key, &id) == 2)
				s->shm_id = id;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f) && s->ndsm < 8) {
		char *p = strstr(line, "/dev/shm/PostgreSQL.");
		int i;

		if (!p)
			continue;
		p[strcspn(p, " \n")] = '\0';
		for (i = 0; i < s->ndsm && strcmp(s->dsm[i], p) != 0; i++)
			;
		if (i == s->ndsm && strlen(p) < sizeof(s->dsm[0]))
			strcpy(s->dsm[s->ndsm++], p);
	}
	fclose(f);
}

/* PostgreSQL's dynamic shared memory control segment (storage/ipc/dsm.c):
 * a header (magic, nitems, maxitems) and maxitems items, each beginning
 * with the segment's handle and its reference count (0: gone); the
 * segment is exactly that size, so the item size follows from it. */
#define DSM_CONTROL_MAGIC 0x9a503d32u

/* unlink_dsm_segments() -- remove the segments control segment @path
 * lists, as the next postmaster start would; nothing if it is not one. */
static void unlink_dsm_segments(const char *path)
{
	uint32_t hdr[3], *buf = NULL;
	struct stat st;
	size_t off, isz = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size < 12 || st.st_size > (64 << 20) ||
	    pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) || hdr[0] != DSM_CONTROL_MAGIC ||
	    hdr[2] == 0 || hdr[1] > hdr[2])
		goto out;
	for (off = 16; off >= 12; off -= 4) /* items 8-byte aligned, or 4 */
		if (((size_t)st.st_size - off) % hdr[2] == 0 &&
		    ((size_t)st.st_size - off) / hdr[2] >= 8) {
			isz = ((size_t)st.st_size - off) / hdr[2];
			break;
		}
	if (!isz || !(buf = malloc((size_t)st.st_size)) ||
	    pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		goto out;
	for (uint32_t i = 0; i < hdr[1]; i++) {
		const uint32_t *item = (const uint32_t *)((const char *)buf + off + i * isz);
		char seg[64];

		if (item[1] == 0) /* refcnt: gone */
			continue;
		snprintf(seg, sizeof(seg), "/dev/shm/PostgreSQL.%u", item[0]);
		unlink(seg); /* ENOENT for one in the main shared memory region */
	}
out:
	free(buf);
	close(fd);
}

/* release_shm() -- once the postmaster is gone: remove what note_shm()
 * recorded and is still there (only a killed postmaster leaves it), with
 * the dynamic shared memory segments its control segment lists.  The
 * System V segment only if this postmaster created it (its id may have
 * been reused since); a process still attached keeps its mapping either
 * way. */
static void release_shm(struct pgl_server *s)
{
	struct shmid_ds ds;

	if (s->shm_id >= 0 && shmctl(s->shm_id, IPC_STAT, &ds) == 0 && ds.shm_cpid == s->pid)
		shmctl(s->shm_id, IPC_RMID, NULL);
	s->shm_id = -1;
	for (int i = 0; i < s->ndsm; i++) {
		unlink_dsm_segments(s->dsm[i]);
		unlink(s->dsm[i]);
	}
	s->ndsm = 0;
}

/* find_bindir() -- --pgbin, `pg_config --bindir`, PATH, in that order. */
static int find_bindir(const char *pgbin, char *out, size_t cap)
{
	char path[600], line[512], err[256];
	char *argv[] = {"pg_config", "--bindir", NULL};
	struct pgl_proc p = {.argv = argv,
			     .out = line,
			     .outcap = sizeof(line),
			     .err = err,
			     .errcap = sizeof(err),
			     .timeout_ms = -1};
	if (pgbin) {
		snprintf(path, sizeof(path), "%s/initdb", pgbin);
		if (access(path, X_OK) < 0) {
			fprintf(stderr, "pgload: no initdb in --pgbin \"%s\": %s\n", pgbin,
				strerror(errno));
			return -ENOENT;
		}
		snprintf(out, cap, "%s", pgbin);
		return 0;
	}
	if (pgl_proc_run(&p) == 0) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s/initdb", line);
		if (access(path, X_OK) == 0) {
			snprintf(out, cap, "%s", line);
			return 0;
		}
	}
	if (pgl_which("initdb", path, sizeof(path)) == 0) {
		size_t n = (size_t)(strrchr(path, '/') - path);
		if (n < cap) {
			memcpy(out, path, n);
			out[n] = '\0';
			return 0;
		}
	}
	fprintf(stderr, "pgload: cannot find the PostgreSQL server binaries: no initdb in "
			"`pg_config --bindir` or PATH (use --pgbin DIR)\n");
	return -ENOENT;
}

int pgl_server_check_settings(const char *pgbin, const char *const *settings, const char *who)
{
	char bindir[512], postgres[600], err[256];
	int ret;
	if (!settings || !settings[0])
		return 0;
	if ((ret = find_bindir(pgbin, bindir, sizeof(bindir))) < 0)
		return ret;
	snprintf(postgres, sizeof(postgres), "%s/postgres", bindir);
	char *argv[] = {postgres, "--describe-config", NULL};
	size_t cap = 1u << 20; /* about 100 KiB on PostgreSQL 15 */
	char *out = malloc(cap);
	if (!out)
		return -ENOMEM;
	struct pgl_proc p = {.argv = argv,
			     .out = out,
			     .outcap = cap,
			     .err = err,
			     .errcap = sizeof(err),
			     .timeout_ms = 30000};
	int st = pgl_proc_run(&p);
	if (st != 0 || p.cut) {
		fprintf(stderr, "%s: cannot check the settings: `%s --describe-config` %s%s%s\n",
			who, postgres,
			st < 0	? strerror(-st)
			: p.cut ? "wrote too much"
				: "failed",
			err[0] ? ": " : "", err);
		free(out);
		return st < 0 ? st : -EIO;
	}
	ret = 0;
	for (int i = 0; settings[i] && !ret; i++) {
		size_t n = strcspn(settings[i], "=");
		if (memchr(settings[i], '.', n))
			continue; /* an extension's, which the server takes as it is */
		bool known = false;
		/* one setting per line: its name, a tab, the rest */
		for (const char *l = out; l && *l && !known; l = strchr(l, '\n'), l = l ? l + 1 : l)
			known = strncmp(l, settings[i], n) == 0 && l[n] == '\t';
		if (!known) {
			fprintf(stderr, "%s \"%s\": the server (%s) has no setting \"%.*s\"\n", who,
				settings[i], postgres, (int)n, settings[i]);
			ret = -EINVAL;
		}
	}
	free(out);
	return ret;
}

/*
 * spawn() -- run ARGV as the server user with stdout and stderr appended to
 * the log, in a new session.  Returns the pid or -errno.
 */
static pid_t spawn(struct pgl_server *s, char *const argv[], bool pdeath)
{
	int logfd = open(s->logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return -errno;
	if (s->drop_privs && fchown(logfd, s->uid, s->gid) < 0) {
		int e = errno;
		close(logfd);
		return -e;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(logfd);
		return -e;
	}
	if (pid == 0) {
		pgl_child_signals();
		setsid();
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (s->drop_privs) {
			if (setgid(s->gid) < 0 || initgroups(s->user, s->gid) < 0 ||
			    setuid(s->uid) < 0) {
				fprintf(stderr, "pgload: cannot become user \"%s\": %s\n", s->user,
					strerror(errno));
				_exit(126);
			}
		}
		if (pdeath)
			prctl(PR_SET_PDEATHSIG, SIGQUIT);
		if (chdir(s->tmpdir) < 0)
			_exit(126);
		execv(argv[0], argv);
		fprintf(stderr, "pgload: cannot run \"%s\": %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(logfd);
	return pid;
}

/* run_wait() -- spawn ARGV and wait for it; killable by an interrupt. */
static int run_wait(struct pgl_server *s, char *const argv[])
{
	pid_t pid = spawn(s, argv, true);
	int st;
	if (pid < 0)
		return (int)pid;
	pgl_child_register(pid);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			pgl_child_register(0);
			return -errno;
		}
	}
	pgl_child_register(0);
	if (atomic_load(&pgl_interrupted))
		return -EINTR;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -ECHILD;
	return 0;
}

const char *pgl_server_log(const struct pgl_server *s)
{
	return s->logpath;
}

void pgl_server_log_tail(const struct pgl_server *s, int lines)
{
	FILE *f = fopen(s->logpath, "r");
	if (!f)
		return;
	char buf[16384];
	if (fseek(f, 0, SEEK_END) == 0) {
		long sz = ftell(f);
		fseek(f, sz > (long)sizeof(buf) - 1 ? sz - (long)sizeof(buf) + 1 : 0, SEEK_SET);
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	int count = 0;
	char *p = buf + n;
	while (p > buf) {
		p--;
		if (*p == '\n' && p != buf + n - 1 && ++count == lines) {
			p++;
			break;
		}
	}
	fprintf(stderr, "pgload: last lines of the server log (%s):\n", s->logpath);
	for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n"))
		fprintf(stderr, "  | %s\n", line);
}

static int prepare_dir(struct pgl_server *s, const char *dir, mode_t mode)
{
	if (mkdir(dir, mode) < 0 && errno != EEXIST) {
		int e = errno;
		fprintf(stderr, "pgload: could not create directory \"%s\": %s\n", dir,
			strerror(e));
		return -e;
	}
	if (s->drop_privs && chown(dir, s->uid, s->gid) < 0) {
		int e = errno;
		fprintf(stderr, "pgload: could not give \"%s\" to user \"%s\": %s\n", dir, s->user,
			strerror(e));
		return -e;
	}
	return 0;
}

/* check_waldir() -- a pg_wal directory for initdb --waldir: absent, so that
 * pgl_server_stop() may remove all of it. */
static int check_waldir(const char *dir)
{
	struct stat st;
	int e = lstat(dir, &st) == 0 ? EEXIST : errno;
	if (e == ENOENT)
		return 0;
	fprintf(stderr, "pgload: cannot put pg_wal in \"%s\": %s\n", dir,
		e == EEXIST ? "it exists already" : strerror(e));
	return -e;
}

/* check_pgdata() -- --pgdata must be absent or an empty directory. */
static int check_pgdata(struct pgl_server *s, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT) {
			fprintf(stderr, "pgload: cannot use --pgdata \"%s\": %s\n", dir,
				strerror(errno));
			return -errno;
		}
		s->own_pgdata_dir = true;
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "pgload: cannot use --pgdata \"%s\": not a directory\n", dir);
		return -ENOTDIR;
	}
	int n = 0;
	char path[1024];
	snprintf(path, sizeof(path), "%s/PG_VERSION", dir);
	if (access(path, F_OK) == 0) {
		fprintf(stderr,
			"pgload: cannot use --pgdata \"%s\": it already holds a cluster "
			"(pgload creates and removes its own)\n",
			dir);
		return -EEXIST;
	}
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	if (n > 0) {
		fprintf(stderr, "pgload: cannot use --pgdata \"%s\": directory is not empty\n",
			dir);
		return -ENOTEMPTY;
	}
	return 0;
}

/* is_fuse_mount() -- PATH is the root of a FUSE mount. */
static bool is_fuse_mount(const char *path)
{
	return strcmp(pgl_fstype(path), "fuse") == 0;
}

/* find_pgiofs() -- --pgiofs-bin, the pgiofs binary beside pgload, or on PATH. */
static int find_pgiofs(const char *given, char *out, size_t cap)
{
	int ret = pgl_find_sibling("pgiofs", given, out, cap);
	if (ret < 0 && given)
		fprintf(stderr, "pgload: --pgiofs-bin \"%s\": %s\n", given, strerror(-ret));
	else if (ret < 0)
		fprintf(stderr, "pgload: --on-pgiofs: no pgiofs binary beside pgload or on PATH\n");
	return ret;
}

/*
 * profile_file() -- whether PROFILE names a file (it has a '/' or exists);
 * then it must be readable.  A bare name is left to pgiofs --profile, which
 * finds its profiles itself (pfs_find_profile: beside its binary, in
 * $PGIOFS_PROFILE_DIR or /etc/pgiofs/profiles).
 */
static int profile_file(const char *profile, bool *is_file)
{
	*is_file = strchr(profile, '/') || access(profile, F_OK) == 0;
	if (*is_file && access(profile, R_OK) != 0) {
		int e = errno;
		fprintf(stderr, "pgload: --profile \"%s\": %s\n", profile,
			e == ENOENT ? "no such file" : strerror(e));
		return -e;
	}
	return 0;
}

/* mount_pgiofs() -- mount pgiofs over backing/ at mnt/ (it daemonizes). */
static int mount_pgiofs(struct pgl_server *s, const struct pgl_server_opts *o)
{
	char bin[600];
	bool is_file = false;
	int ret;
	if ((ret = find_pgiofs(o->pgiofs_bin, bin, sizeof(bin))) < 0)
		return ret;
	if (o->profile && (ret = profile_file(o->profile, &is_file)) < 0)
		return ret;
	char *argv[12 + PGL_MAX_PGIOFS_ARGS];
	int n = 0;
	argv[n++] = bin;
	if (o->profile) {
		argv[n++] = is_file ? "--config" : "--profile";
		argv[n++] = (char *)o->profile;
	}
	for (int i = 0; o->pgiofs_args && o->pgiofs_args[i] && i < PGL_MAX_PGIOFS_ARGS; i++)
		argv[n++] = (char *)o->pgiofs_args[i];
	if (s->drop_privs) {
		/* the server runs as postgres on a mount made by root */
		argv[n++] = "-o";
		argv[n++] = "allow_other";
	}
	argv[n++] = s->backing;
	argv[n++] = s->mnt;
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pgl_child_signals();
		int logfd = open(s->logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
		}
		execv(bin, argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !is_fuse_mount(s->mnt)) {
		fprintf(stderr, "pgload: --on-pgiofs: could not mount pgiofs at \"%s\"\n", s->mnt);
		pgl_server_log_tail(s, 10);
		return -EIO;
	}
	s->mounted = true;
	if (!o->quiet)
		fprintf(stderr, "pgload: pgiofs mounted at %s%s%s\n", s->mnt,
			o->profile ? ", profile " : "", o->profile ? o->profile : "");
	return 0;
}

/* umount_pgiofs() -- unmount and wait for the daemon to let go.  As root
 * with umount -R: pgiofs mounts a WAL mount of its own over the cluster's
 * pg_wal (files.wal_mode = passthrough, its default), which goes first. */
static int umount_pgiofs(struct pgl_server *s)
{
	char *recursive[] = {"umount", "-R", s->mnt, NULL};
	char *fusermount[] = {"fusermount3", "-u", s->mnt, NULL};
	char *umount[] = {"umount", s->mnt, NULL};
	struct pgl_proc p = {.argv = recursive, .timeout_ms = -1};
	if (!s->mounted)
		return 0;
	if (geteuid() != 0 || pgl_proc_run(&p) != 0) {
		p.argv = fusermount;
		if (pgl_proc_run(&p) == 127) {
			p.argv = umount;
			pgl_proc_run(&p);
		}
	}
	for (int i = 0; i < 500 && is_fuse_mount(s->mnt); i++)
		usleep(10000);
	if (is_fuse_mount(s->mnt)) {
		fprintf(stderr, "pgload: could not unmount \"%s\"; detaching it\n", s->mnt);
		umount2(s->mnt, MNT_DETACH);
	}
	s->mounted = false;
	return 0;
}

int pgl_server_start(const struct pgl_server_opts *o, struct pgl_server **out)
{
	struct pgl_server *s = calloc(1, sizeof(*s));
	int ret;
	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->shm_id = -1;
	if ((ret = find_bindir(o->pgbin, s->bindir, sizeof(s->bindir))) < 0) {
		free(s);
		return ret;
	}
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("postgres");
		if (!pw) {
			fprintf(stderr,
				"pgload: running as root needs a \"postgres\" user to run the "
				"server as, and there is none\n");
			free(s);
			return -ENOENT;
		}
		s->drop_privs = true;
		s->uid = pw->pw_uid;
		s->gid = pw->pw_gid;
		snprintf(s->user, sizeof(s->user), "postgres");
	} else {
		struct passwd *pw = getpwuid(geteuid());
		snprintf(s->user, sizeof(s->user), "%s", pw ? pw->pw_name : "postgres");
	}
	if (o->pgdata && (ret = check_pgdata(s, o->pgdata)) < 0) {
		free(s);
		return ret;
	}
	const char *parent = o->tmp_parent;

	if (!parent && (ret = pgl_tmpdir(&parent)) < 0) {
		free(s);
		return ret;
	}
	snprintf(s->tmpdir, sizeof(s->tmpdir), "%s/pgload.XXXXXX", parent);
	if (!mkdtemp(s->tmpdir)) {
		ret = -errno;
		fprintf(stderr, "pgload: could not create a temporary directory in \"%s\": %s\n",
			parent, strerror(-ret));
		free(s);
		return ret;
	}
	snprintf(s->sockdir, sizeof(s->sockdir), "%s/sock", s->tmpdir);
	snprintf(s->logpath, sizeof(s->logpath), "%s/server.log", s->tmpdir);
	if (o->on_pgiofs) {
		if (o->backing)
			snprintf(s->backing, sizeof(s->backing), "%s", o->backing);
		else
			snprintf(s->backing, sizeof(s->backing), "%s/backing", s->tmpdir);
		snprintf(s->mnt, sizeof(s->mnt), "%s/mnt", s->tmpdir);
		if ((ret = prepare_dir(s, s->tmpdir, 0711)) < 0 ||
		    (ret = prepare_dir(s, s->backing, 0700)) < 0 ||
		    (ret = prepare_dir(s, s->mnt, 0700)) < 0)
			goto fail;
		if (pgl_step("pgiofs", "mounting pgiofs at %s", s->mnt)) {
			ret = -EINTR;
			goto fail;
		}
		if ((ret = mount_pgiofs(s, o)) < 0)
			goto fail;
		if (asprintf(&s->pgdata, "%s/data", s->mnt) < 0)
			s->pgdata = NULL;
	} else if (o->pgdata) {
		s->pgdata_given = true;
		s->pgdata = realpath(o->pgdata, NULL);
		if (!s->pgdata) {
			/* absent: make it absolute by hand */
			char cwd[1024];
			if (o->pgdata[0] == '/' || !getcwd(cwd, sizeof(cwd)))
				s->pgdata = strdup(o->pgdata);
			else if (asprintf(&s->pgdata, "%s/%s", cwd, o->pgdata) < 0)
				s->pgdata = NULL;
		}
	} else if (asprintf(&s->pgdata, "%s/data", s->tmpdir) < 0) {
		s->pgdata = NULL;
	}
	if (!s->pgdata) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = prepare_dir(s, s->tmpdir, 0700)) < 0 ||
	    (ret = prepare_dir(s, s->sockdir, 0700)) < 0 ||
	    (ret = prepare_dir(s, s->pgdata, 0700)) < 0)
		goto fail;
	if (o->waldir) {
		if ((ret = check_waldir(o->waldir)) < 0)
			goto fail;
		snprintf(s->waldir, sizeof(s->waldir), "%s", o->waldir);
		if ((ret = prepare_dir(s, s->waldir, 0700)) < 0) {
			s->waldir[0] = '\0';
			goto fail;
		}
	}
	s->port = o->port ? o->port : 20000 + (int)(getpid() % 30000);
	snprintf(s->conninfo, sizeof(s->conninfo), "host=%s port=%d user=%s", s->sockdir, s->port,
		 s->user);

	/* initdb */
	char initdb[600], postgres[600], portstr[16];
	snprintf(initdb, sizeof(initdb), "%s/initdb", s->bindir);
	snprintf(postgres, sizeof(postgres), "%s/postgres", s->bindir);
	snprintf(portstr, sizeof(portstr), "%d", s->port);
	char *iargv[] = {initdb,  "-D", s->pgdata, "-A",	  "trust",     "-U",
			 s->user, "-E", "UTF8",	   "--no-locale", "--no-sync", "--no-instructions",
			 NULL,	  NULL};
	char waldirarg[1100];
	if (s->waldir[0]) {
		snprintf(waldirarg, sizeof(waldirarg), "--waldir=%s", s->waldir);
		iargv[12] = waldirarg;
	}
	if (pgl_step("initdb", "running initdb of %s", s->pgdata)) {
		ret = -EINTR;
		goto fail;
	}
	if (!o->quiet)
		fprintf(stderr, "pgload: initdb %s\n", s->pgdata);
	ret = run_wait(s, iargv);
	if (ret < 0) {
		if (ret != -EINTR) {
			fprintf(stderr, "pgload: initdb of \"%s\" failed\n", s->pgdata);
			pgl_server_log_tail(s, 20);
		}
		goto fail;
	}

	/* start the postmaster */
	char *pargv[64];
	int n = 0;
	pargv[n++] = postgres;
	pargv[n++] = "-D";
	pargv[n++] = s->pgdata;
	pargv[n++] = "-k";
	pargv[n++] = s->sockdir;
	pargv[n++] = "-p";
	pargv[n++] = portstr;
	pargv[n++] = "-c";
	pargv[n++] = "listen_addresses=";
	for (int i = 0; o->settings && o->settings[i] && n < 60; i++) {
		pargv[n++] = "-c";
		pargv[n++] = (char *)o->settings[i];
	}
	pargv[n] = NULL;
	if (pgl_step("postmaster", "starting the server")) {
		ret = -EINTR;
		goto fail;
	}
	pid_t pid = spawn(s, pargv, true);
	if (pid < 0) {
		ret = (int)pid;
		fprintf(stderr, "pgload: could not start postgres: %s\n", strerror(-ret));
		goto fail;
	}
	s->pid = pid;
	double t0 = pgl_now();
	for (;;) {
		if (PQping(s->conninfo) == PQPING_OK)
			break;
		if (!pgl_server_alive(s)) {
			char how[128];
			pgl_server_describe_exit(s, how, sizeof(how));
			fprintf(stderr, "pgload: the server did not start: %s\n", how);
			pgl_server_log_tail(s, 20);
			ret = -ECHILD;
			goto fail;
		}
		if (atomic_load(&pgl_interrupted)) {
			ret = -EINTR;
			goto fail;
		}
		if (pgl_now() - t0 > START_TIMEOUT_S) {
			fprintf(stderr,
				"pgload: the server did not accept connections within %.0f s\n",
				START_TIMEOUT_S);
			pgl_server_log_tail(s, 20);
			ret = -ETIMEDOUT;
			goto fail;
		}
		usleep(20000);
	}
	note_shm(s);
	if (!o->quiet)
		fprintf(stderr, "pgload: server started (pid %d, socket %s, port %d)\n",
			(int)s->pid, s->sockdir, s->port);
	*out = s;
	return 0;
fail:
	pgl_server_stop(s);
	return ret;
}

const char *pgl_server_conninfo(const struct pgl_server *s)
{
	return s->conninfo;
}

const char *pgl_server_mount(const struct pgl_server *s)
{
	return s->mounted ? s->mnt : NULL;
}

const char *pgl_server_datadir(const struct pgl_server *s)
{
	return s->pgdata;
}

bool pgl_server_alive(struct pgl_server *s)
{
	if (s->pid <= 0 || s->exited)
		return false;
	pid_t r = waitpid(s->pid, &s->status, WNOHANG);
	if (r == s->pid) {
		s->exited = true;
		return false;
	}
	return true;
}

void pgl_server_describe_exit(struct pgl_server *s, char *buf, size_t cap)
{
	if (pgl_server_alive(s))
		snprintf(buf, cap, "the server is still running");
	else if (WIFSIGNALED(s->status))
		snprintf(buf, cap, "the server was killed by signal %d (%s)", WTERMSIG(s->status),
			 strsignal(WTERMSIG(s->status)));
	else
		snprintf(buf, cap, "the server exited with status %d", WEXITSTATUS(s->status));
}

/* wait_exit() -- wait up to SECS for the postmaster to exit. */
static bool wait_exit(struct pgl_server *s, double secs)
{
	double t0 = pgl_now();
	while (pgl_now() - t0 < secs) {
		if (!pgl_server_alive(s))
			return true;
		usleep(10000);
	}
	return !pgl_server_alive(s);
}

int pgl_server_stop(struct pgl_server *s)
{
	int ret = 0;
	if (!s)
		return 0;
	if (s->pid > 0 && pgl_server_alive(s)) {
		/* immediate shutdown: the cluster is thrown away anyway */
		kill(s->pid, SIGQUIT);
		if (!wait_exit(s, STOP_TIMEOUT_S)) {
			fprintf(stderr, "pgload: server pid %d did not stop, killing it\n",
				(int)s->pid);
			kill(s->pid, SIGKILL);
			wait_exit(s, 5.0);
		}
	}
	if (s->pid > 0 && !pgl_server_alive(s))
		release_shm(s);
	if (s->mounted) {
		/* the cluster goes with the backing directory */
		umount_pgiofs(s);
		if (strncmp(s->backing, s->tmpdir, strlen(s->tmpdir)) != 0 &&
		    pgl_rmtree(s->backing) < 0) {
			fprintf(stderr, "pgload: could not remove \"%s\"\n", s->backing);
			ret = -ENOTEMPTY;
		}
		free(s->pgdata);
		s->pgdata = NULL;
	}
	if (s->pgdata) {
		int r = pgl_rmtree(s->pgdata);
		if (r < 0) {
			fprintf(stderr, "pgload: could not remove \"%s\": %s\n", s->pgdata,
				strerror(-r));
			ret = r;
		} else if (!s->own_pgdata_dir && s->pgdata_given) {
			/* leave the directory the user gave us as we found it: empty */
			mkdir(s->pgdata, 0700);
		}
		free(s->pgdata);
	}
	if (s->tmpdir[0] && pgl_rmtree(s->tmpdir) < 0) {
		fprintf(stderr, "pgload: could not remove \"%s\"\n", s->tmpdir);
		ret = -ENOTEMPTY;
	}
	if (s->waldir[0] && pgl_rmtree(s->waldir) < 0) {
		fprintf(stderr, "pgload: could not remove \"%s\"\n", s->waldir);
		ret = -ENOTEMPTY;
	}
	free(s);
	return ret;
}
