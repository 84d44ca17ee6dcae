/*
 * util.c -- interrupt handling and small helpers shared by pgload's files.
 *
 * Signals: every thread blocks SIGINT, SIGTERM, SIGHUP; one thread waits for
 * them with sigwait() and does the work a handler could not do safely
 * (taking a mutex, calling PQcancel on each registered connection).  The
 * main flow sees the cancelled queries and pgl_interrupted, cleans up (the
 * embedded server, temporary files) and exits 2.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "pgload_i.h"

atomic_int pgl_interrupted;

#define MAXCANCEL 256

static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	PGconn *conn;
	PGcancel *cancel;
} cancels[MAXCANCEL];
static pid_t child_pid;

void pgl_cancel_register(PGconn *conn)
{
	PGcancel *c = PQgetCancel(conn);
	if (!c)
		return;
	pthread_mutex_lock(&cancel_lock);
	for (int i = 0; i < MAXCANCEL; i++) {
		if (!cancels[i].conn) {
			cancels[i].conn = conn;
			cancels[i].cancel = c;
			c = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&cancel_lock);
	if (c)
		PQfreeCancel(c);
}

void pgl_cancel_unregister(PGconn *conn)
{
	pthread_mutex_lock(&cancel_lock);
	for (int i = 0; i < MAXCANCEL; i++) {
		if (cancels[i].conn == conn) {
			PQfreeCancel(cancels[i].cancel);
			cancels[i].conn = NULL;
			cancels[i].cancel = NULL;
		}
	}
	pthread_mutex_unlock(&cancel_lock);
}

void pgl_child_register(pid_t pid)
{
	pthread_mutex_lock(&cancel_lock);
	child_pid = pid;
	pthread_mutex_unlock(&cancel_lock);
}

static sigset_t termsigs;

static void *signal_thread(void *arg)
{
	for (;;) {
		int sig;
		if (sigwait(&termsigs, &sig) != 0)
			continue;
		if (atomic_load(&pgl_interrupted) == 0)
			fprintf(stderr, "pgload: %s received, aborting the run\n", strsignal(sig));
		atomic_store(&pgl_interrupted, sig);
		pthread_mutex_lock(&cancel_lock);
		for (int i = 0; i < MAXCANCEL; i++) {
			char err[256];
			if (cancels[i].cancel)
				PQcancel(cancels[i].cancel, err, sizeof(err));
		}
		if (child_pid > 0)
			kill(child_pid, SIGTERM);
		pthread_mutex_unlock(&cancel_lock);
	}
	return NULL;
}

int pgl_signals_start(void)
{
	static bool started;
	pthread_t t;
	if (started)
		return 0;
	sigemptyset(&termsigs);
	sigaddset(&termsigs, SIGINT);
	sigaddset(&termsigs, SIGTERM);
	sigaddset(&termsigs, SIGHUP);
	int ret = pthread_sigmask(SIG_BLOCK, &termsigs, NULL);
	if (ret != 0)
		return -ret;
	ret = pthread_create(&t, NULL, signal_thread, NULL);
	if (ret != 0)
		return -ret;
	pthread_detach(t);
	started = true;
	return 0;
}

double pgl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
