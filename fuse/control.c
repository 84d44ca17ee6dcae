/*
 * control.c -- the control channel of a running pgiofs: `pgiofs stat` asks
 * the daemon for its statistics here.
 *
 * The channel is an abstract Unix socket named "\0pgiofs/MAJOR:MINOR" after
 * the st_dev of the mount, which any process can read from
 * /proc/self/mountinfo.  An abstract name has no file: nothing appears in
 * the mount (PostgreSQL owns its namespace; initdb wants it empty) or
 * anywhere else, and it disappears with the daemon.  The socket is bound
 * before the daemon forks into the background (a descriptor survives
 * fork(), a thread does not), so the mount command returns with the channel
 * ready; the thread serving it starts after.
 *
 * Protocol: the client sends one line and gets one reply, then the daemon
 * closes the connection.
 *   "snapshot\n"      one JSON object, schema pgiofs.stats/1 (docs/stats.md)
 *                     with the mount, backing directory, policy, device
 *                     model, version and time as extra members, then "\n";
 *   "snapshot-raw\n"  "pgiofs-raw/1 VERSION NBUCKETS SIZE EXTRALEN\n", the
 *                     extra members (EXTRALEN bytes of JSON) and the struct
 *                     ios_stats_snapshot (SIZE bytes): what `pgiofs stat`
 *                     uses, so that it can compute interval diffs and
 *                     percentiles from the histograms;
 *   "relations-raw\n" "pgiofs-rels/1 VERSION ENTRYSIZE COUNT UNTRACKED\n" and
 *                     COUNT struct ios_rel_info (ENTRYSIZE bytes each): the
 *                     relations that saw any request (names are resolved
 *                     by the client, never here);
 *   refusals and errors are {"error":"...","errno":N}\n.
 *
 * What must stay true: only root and users who could read the mount root
 * get an answer (SO_PEERCRED and the peer's groups against the root's
 * mode, owner and group, as the kernel's default_permissions check does;
 * without -o allow_other the kernel lets nobody but the mount's owner in,
 * and neither do we); a client is served one at a time with a timeout, so a
 * stuck client delays others by PFS_CTL_TIMEOUT_S at most and never the
 * file system.
 */
#include "pgiofs_i.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX (64 * 1024) /* the JSON of a snapshot is about 6 KiB */

struct pfs_control {
	struct pfs *fs;
	int lfd;     /* listening socket */
	int stop[2]; /* a pipe: written to stop the thread */
	pthread_t thread;
	bool started;
	bool allow_other; /* mounted with -o allow_other */
	uid_t owner;	  /* the daemon's uid: the mount's owner */
	char mountpoint[PATH_MAX], backing[PATH_MAX];
	unsigned major, minor;
	gid_t groups[NGROUPS_MAX];	 /* the thread's: a peer's groups */
	struct ios_stats_snapshot *snap; /* the thread's, reused */
	char *reply;			 /* REPLY_MAX bytes */
};

unsigned pfs_control_addr(unsigned major, unsigned minor, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, PFS_CTL_NAME_FMT, major, minor);
	return (unsigned)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

bool pfs_control_refused(unsigned major, unsigned minor)
{
	struct sockaddr_un sa;
	unsigned len = pfs_control_addr(major, minor, &sa);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool refused;

	if (fd < 0)
		return false;
	refused = connect(fd, (struct sockaddr *)&sa, len) < 0 && errno == ECONNREFUSED;
	close(fd);
	return refused;
}

int pfs_control_open(struct pfs *fs, const char *mountpoint, const char *backing, bool allow_other,
		     char *err, size_t errlen)
{
	struct pfs_control *c;
	struct sockaddr_un sa;
	unsigned len;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fs = fs;
	c->lfd = c->stop[0] = c->stop[1] = -1;
	c->allow_other = allow_other;
	c->owner = geteuid();
	snprintf(c->mountpoint, sizeof(c->mountpoint), "%s", mountpoint);
	snprintf(c->backing, sizeof(c->backing), "%s", backing);
	ret = pfs_mount_dev(mountpoint, &c->major, &c->minor);
	if (ret < 0) {
		snprintf(err, errlen, "cannot find the mount \"%s\" in /proc/self/mountinfo: %s",
			 mountpoint, strerror(-ret));
		goto fail;
	}
	len = pfs_control_addr(c->major, c->minor, &sa);
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* the name is taken: by the daemon of a mount that had this device
	 * number and is gone (no two mounts have one at once), still ending;
	 * it lets go of the name when it exits: 5 s at most */
	ret = c->lfd < 0 ? -1 : bind(c->lfd, (struct sockaddr *)&sa, len);
	for (int i = 0; ret < 0 && errno == EADDRINUSE && i < 50; i++) {
		usleep(100 * 1000);
		ret = bind(c->lfd, (struct sockaddr *)&sa, len);
	}
	if (ret < 0 || listen(c->lfd, 16) < 0) {
		ret = -errno;
		snprintf(err, errlen,
			 "cannot listen on the control socket @" PFS_CTL_NAME_FMT ": %s", c->major,
			 c->minor, strerror(-ret));
		goto fail;
	}
	if (pipe2(c->stop, O_CLOEXEC) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(-ret));
		goto fail;
	}
	fs->control = c;
	return 0;
fail:
	if (c->lfd >= 0)
		close(c->lfd);
	free(c);
	return ret;
}

/* ---- authorisation ------------------------------------------------------- */

/* peer_groups() -- the supplementary groups of the peer: SO_PEERGROUPS (the
 * credentials it connected with), else /proc/PID/status "Groups:".  Returns
 * the count (at most @max), or -errno. */
static int peer_groups(int fd, pid_t pid, gid_t *groups, int max)
{
	socklen_t len = (socklen_t)(sizeof(gid_t) * (size_t)max);
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int n = -ENOENT;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
		return (int)(len / sizeof(gid_t));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *p = line + 7, *end;

		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (n = 0; n < max; n++) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			groups[n] = (gid_t)g;
			p = end;
		}
		break;
	}
	free(line);
	fclose(f);
	return n;
}

/* authorize() -- 0 if the peer may read the statistics: root, or a user
 * who could read the mount root.  Else -EACCES with the reason in @why. */
static int authorize(struct pfs_control *c, int fd, const struct ucred *cr, char *why, size_t len)
{
	struct stat st;
	mode_t bit;
	int i, n;

	if (cr->uid == 0)
		return 0;
	if (!c->allow_other && cr->uid != c->owner) {
		snprintf(why, len,
			 "permission denied: uid %u cannot use \"%s\" (mounted without -o "
			 "allow_other: only its owner, uid %u, and root may)",
			 (unsigned)cr->uid, c->mountpoint, (unsigned)c->owner);
		return -EACCES;
	}
	if (fstat(c->fs->root.fd, &st) < 0) {
		snprintf(why, len, "cannot stat the mount root: %s", strerror(errno));
		return -EIO;
	}
	if (cr->uid == st.st_uid) {
		bit = S_IRUSR;
	} else {
		bit = S_IROTH;
		if (cr->gid == st.st_gid)
			bit = S_IRGRP;
		n = peer_groups(fd, cr->pid, c->groups, NGROUPS_MAX);
		for (i = 0; i < n && bit != S_IRGRP; i++)
			if (c->groups[i] == st.st_gid)
				bit = S_IRGRP;
	}
	if (st.st_mode & bit)
		return 0;
	snprintf(why, len,
		 "permission denied: uid %u cannot read the mount root \"%s\" (mode %04o, owner "
		 "uid %u, group gid %u), and only root and users who can may read its statistics",
		 (unsigned)cr->uid, c->mountpoint, (unsigned)(st.st_mode & 07777),
		 (unsigned)st.st_uid, (unsigned)st.st_gid);
	return -EACCES;
}

/* ---- replies ----------------------------------------------------------------- */

/* extras() -- the members `pgiofs stat` adds after "schema". */
static int extras(struct pfs_control *c, char *buf, size_t len)
{
	struct pfs *fs = c->fs;
	char mnt[2 * PATH_MAX + 8], back[2 * PATH_MAX + 8], model[32], when[64];
	char note[2 * sizeof(fs->wal_note) + 8], walm[1024], walm_json[2 * sizeof(walm) + 8];
	char profile[2 * sizeof(fs->profile) + 8], changed[2 * sizeof(fs->changed) + 8];
	char why[384], why_json[2 * sizeof(why) + 8];
	char ring[256], ring_json[2 * sizeof(ring) + 8];
	struct pfs_inode_counters in;
	char in_note[2 * sizeof(in.note) + 8];
	struct pfs_wb_counters wb;
	const char *policy;
	bool enabled, direct, data_inline;
	int64_t ckpt_kb, drop_other_mb;
	const char *drop_mode;
	bool drop_rel;
	struct timespec ts;
	struct tm tm;
	int n;

	pthread_rwlock_rdlock(&fs->ios_lock); /* a reload changes the settings */
	policy = ios_policy_names[fs->set.ios.policy];
	conf_format(conf_find(pgiofs_conf(), "device", "model"), &fs->set, model, sizeof(model));
	enabled = fs->set.stats_enabled;
	ckpt_kb = fs->set.checkpoint_writeback_kb;
	drop_mode = fs->writeback ? pgiofs_drop_behind_names[fs->set.drop_behind] : "no";
	drop_rel = fs->writeback && pfs_drop_relations(fs);
	drop_other_mb = fs->writeback && fs->set.drop_behind != PGIOFS_DROP_NO
			    ? fs->set.drop_behind_other_mb
			    : -1;
	json_str_format(profile, sizeof(profile), fs->profile);
	json_str_format(changed, sizeof(changed), fs->changed);
	direct = pfs_backing_direct(fs, why, sizeof(why));
	data_inline = fs->ios && ios_runs_inline(fs->ios, IOS_CLASS_HEAP);
	pthread_rwlock_unlock(&fs->ios_lock);
	json_str_format(why_json, sizeof(why_json), why);
	pfs_uring_describe(fs, ring, sizeof(ring));
	json_str_format(ring_json, sizeof(ring_json), ring);
	json_str_format(mnt, sizeof(mnt), c->mountpoint);
	json_str_format(back, sizeof(back), c->backing);
	json_str_format(note, sizeof(note), fs->wal_note);
	pfs_walmounts_describe(fs, walm, sizeof(walm));
	json_str_format(walm_json, sizeof(walm_json), walm);
	pfs_wb_counters(fs, &wb);
	pfs_inodes_counters(fs, &in);
	json_str_format(in_note, sizeof(in_note), in.note);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(
	    buf, len,
	    "\"mount\":%s,\"backing\":%s,\"profile\":%s,\"changed\":%s,"
	    "\"policy\":\"%s\",\"device\":\"%s\","
	    "\"stats_enabled\":%s,\"version\":\"%s\",\"pid\":%d,"
	    "\"time\":\"%s.%03ldZ\",\"wal_mode\":\"%s\",\"wal_note\":%s,\"wal_mounts\":%s,"
	    "\"backing_direct\":%s,\"backing_note\":%s,\"backing_seek_us\":%d,\"data_inline\":%s,"
	    "\"writeback_cache\":%s,\"write_cache\":{\"limit_bytes\":%" PRIu64 ",\"bytes\":%" PRIu64
	    ",\"peak_bytes\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"waits\":%" PRIu64
	    ",\"errors\":%" PRIu64 "},\"uring\":%s,\"uring_note\":%s,\"uring_requests\":%lu,"
	    "\"checkpoint_writeback\":{\"max_kb\":%" PRId64 ",\"starts\":%" PRIu64
	    ",\"files\":%" PRIu64 ",\"large\":%" PRIu64 "},"
	    "\"drop_behind\":{\"mode\":\"%s\",\"relations\":%s,\"other_mb\":%" PRId64
	    ",\"bytes\":%" PRIu64 ",\"read_bytes\":%" PRIu64 ",\"refused_files\":%" PRIu64 "},"
	    "\"inode_fds\":{\"handles\":%s,\"note\":%s,\"setting\":%" PRIu64 ",\"limit\":%" PRIu64
	    ",\"cached\":%" PRIu64 ",\"held\":%" PRIu64 ",\"inodes\":%" PRIu64 ",\"hits\":%" PRIu64
	    ",\"misses\":%" PRIu64 ",\"opens\":%" PRIu64 ",\"evictions\":%" PRIu64
	    ",\"stale\":%" PRIu64 "}",
	    mnt, back, profile, changed, policy, model, enabled ? "true" : "false", PGIOFS_VERSION,
	    (int)getpid(), when, ts.tv_nsec / 1000000, pgiofs_wal_mode_names[fs->wal_mode], note,
	    walm_json, direct ? "true" : "false", why_json, fs->backing_seek_us,
	    data_inline ? "true" : "false", fs->writeback ? "true" : "false", wb.limit, wb.bytes,
	    wb.peak, wb.writes, wb.waits, wb.errors,
	    atomic_load(&fs->wire.uring) ? "true" : "false", ring_json, pfs_uring_requests(fs),
	    ckpt_kb, __atomic_load_n(&fs->core->ckpt.starts, __ATOMIC_RELAXED),
	    __atomic_load_n(&fs->core->ckpt.files, __ATOMIC_RELAXED),
	    __atomic_load_n(&fs->core->ckpt.large, __ATOMIC_RELAXED), drop_mode,
	    drop_rel ? "true" : "false", drop_other_mb,
	    __atomic_load_n(&fs->core->drop.bytes, __ATOMIC_RELAXED),
	    __atomic_load_n(&fs->core->drop.read_bytes, __ATOMIC_RELAXED),
	    __atomic_load_n(&fs->core->drop.refused, __ATOMIC_RELAXED),
	    in.handles ? "true" : "false", in_note, in.setting, in.limit, in.cached, in.held,
	    in.inodes, in.hits, in.misses, in.opens, in.evictions, in.stale);
	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	buf[n++] = ',';
	n += pfs_devqueue_json(fs, buf + n, len - (size_t)n);
	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	buf[n++] = ',';
	n += pfs_walprep_json(fs, buf + n, len - (size_t)n);
	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	buf[n++] = ',';
	return n + pfs_space_json(fs, buf + n, len - (size_t)n);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void reply_error(int fd, int err, const char *msg)
{
	char quoted[1024], line[1200];
	int n;

	json_str_format(quoted, sizeof(quoted), msg);
	n = snprintf(line, sizeof(line), "{\"error\":%s,\"errno\":%d}\n", quoted, err);
	write_all(fd, line, (size_t)n);
}

/* read_request() -- the request line (without "\n") into @buf. */
static int read_request(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len) {
		ssize_t n = recv(fd, buf + got, len - 1 - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if (strchr(buf, '\n')) {
			*strchr(buf, '\n') = '\0';
			return 0;
		}
	}
	return -1;
}

/* serve_relations() -- the "relations-raw" reply. */
static void serve_relations(struct pfs_control *c, int fd)
{
	struct ios_rel_list l;
	char head[256];
	int hn, ret = ios_stats_rel_snapshot(c->fs->stats, &l);

	if (ret < 0) {
		reply_error(fd, -ret, "no relation statistics");
		return;
	}
	hn = snprintf(head, sizeof(head), "%s %s %zu %zu %" PRIu64 "\n", PFS_CTL_RELS,
		      PGIOFS_VERSION, sizeof(*l.rel), l.count, l.untracked);
	if (write_all(fd, head, (size_t)hn) == 0)
		write_all(fd, l.rel, sizeof(*l.rel) * l.count);
	free(l.rel);
}

static void serve(struct pfs_control *c, int fd)
{
	struct timeval tv = {PFS_CTL_TIMEOUT_S, 0};
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	char req[128], why[PATH_MAX + 256], ext[PFS_CTL_EXTRA_MAX];
	bool raw, rels;
	int n, ret;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
		return;
	if (read_request(fd, req, sizeof(req)) < 0)
		return;
	raw = strcmp(req, "snapshot-raw") == 0;
	rels = strcmp(req, "relations-raw") == 0;
	if (!raw && !rels && strcmp(req, "snapshot") != 0) {
		reply_error(fd, EINVAL, "unknown request (expected \"snapshot\")");
		return;
	}
	ret = authorize(c, fd, &cr, why, sizeof(why));
	if (ret < 0) {
		log_msg(LOG_NOTICE, "control: refused pid %d: %s", (int)cr.pid, why);
		reply_error(fd, -ret, why);
		return;
	}
	if (rels) {
		serve_relations(c, fd);
		return;
	}
	if (ios_stats_snapshot(c->fs->stats, c->snap) < 0) {
		reply_error(fd, EINVAL, "no statistics");
		return;
	}
	n = extras(c, ext, sizeof(ext));
	if (n < 0 || (size_t)n >= sizeof(ext)) {
		reply_error(fd, ENAMETOOLONG, "paths too long");
		return;
	}
	if (raw) {
		char head[256];
		int hn = snprintf(head, sizeof(head), "%s %s %d %zu %d\n", PFS_CTL_RAW,
				  PGIOFS_VERSION, IOS_STATS_NBUCKETS, sizeof(*c->snap), n);

		if (write_all(fd, head, (size_t)hn) == 0 && write_all(fd, ext, (size_t)n) == 0)
			write_all(fd, c->snap, sizeof(*c->snap));
		return;
	}
	n = ios_stats_to_json(c->snap, ext, c->reply, REPLY_MAX - 1);
	if (n < 0) {
		reply_error(fd, -n, "reply too large");
		return;
	}
	c->reply[n++] = '\n';
	write_all(fd, c->reply, (size_t)n);
}

static void *control_thread(void *arg)
{
	struct pfs_control *c = arg;
	struct pollfd pfd[2] = {{c->lfd, POLLIN, 0}, {c->stop[0], POLLIN, 0}};

	for (;;) {
		int fd;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_ERR, "control: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(c, fd);
		close(fd);
	}
	return NULL;
}

int pfs_control_start(struct pfs *fs)
{
	struct pfs_control *c = fs->control;
	int ret;

	if (!c)
		return -EINVAL;
	c->snap = malloc(sizeof(*c->snap));
	c->reply = malloc(REPLY_MAX);
	if (!c->snap || !c->reply)
		return -ENOMEM;
	ret = pthread_create(&c->thread, NULL, control_thread, c);
	if (ret)
		return -ret;
	c->started = true;
	return 0;
}

void pfs_control_stop(struct pfs *fs)
{
	struct pfs_control *c = fs->control;

	if (!c)
		return;
	if (c->started) {
		if (write(c->stop[1], "x", 1) < 0) {
			/* cannot happen with an empty pipe */
		}
		pthread_join(c->thread, NULL);
	}
	close(c->lfd);
	close(c->stop[0]);
	close(c->stop[1]);
	free(c->snap);
	free(c->reply);
	free(c);
	fs->control = NULL;
}
