/*
 * intr.c -- interrupts and steps: what pgload does when SIGINT, SIGTERM or
 * SIGHUP arrives, and the names of the steps it reports it in.
 *
 * Signals: every thread blocks SIGINT, SIGTERM, SIGHUP; one thread waits for
 * them with sigwait() and does the work a handler could not do safely
 * (taking a mutex, calling PQcancel on each registered connection).  The
 * main flow sees the cancelled queries and pgl_interrupted, cleans up (the
 * embedded server, temporary files) and exits 2.
 *
 * What must stay true: nothing pgload waits on can keep it from seeing an
 * interrupt.  Queries are cancelled (and cancelled again every second until
 * the clean-up starts, for one sent just after the signal); a child is
 * terminated; reads of pipes and connection attempts poll the interrupt
 * descriptor beside their own.  The clean-up itself is never interrupted: a
 * second signal only says that it is under way.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pgload_i.h"

atomic_int pgl_interrupted;

#define MAXCANCEL	   256
#define RECANCEL_EVERY_S   1
#define TEST_INTERRUPT_ENV "PGLOAD_TEST_INTERRUPT_AT"

/* cancel_lock protects everything below it */
static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	PGconn *conn;
	PGcancel *cancel;
} cancels[MAXCANCEL];
static pid_t child_pid;
static char step_desc[256], step_ctx[160], intr_step[448];
static bool cleaning; /* the step "cleanup" began: cancel nothing more */
static int nsignals;  /* signals handled */

static int wake_pipe[2] = {-1, -1};

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

/* describe__() -- the current step as one phrase.  Lock held. */
static void describe__(char *buf, size_t cap)
{
	if (!step_desc[0])
		snprintf(buf, cap, "starting");
	else if (step_ctx[0])
		snprintf(buf, cap, "%s, %s", step_desc, step_ctx);
	else
		snprintf(buf, cap, "%s", step_desc);
}

/* cancel_all__() -- cancel every registered query, stop the child.  Lock held. */
static void cancel_all__(void)
{
	for (int i = 0; i < MAXCANCEL; i++) {
		char err[256];
		if (cancels[i].cancel)
			PQcancel(cancels[i].cancel, err, sizeof(err));
	}
	if (child_pid > 0)
		kill(child_pid, SIGTERM);
}

static sigset_t termsigs;

static void *signal_thread(void *arg)
{
	for (;;) {
		struct timespec ts = {.tv_sec = RECANCEL_EVERY_S};
		int sig = sigtimedwait(&termsigs, NULL, &ts);
		pthread_mutex_lock(&cancel_lock);
		if (sig < 0) {
			/* no signal: cancel again what started after the last one */
			if (atomic_load(&pgl_interrupted) && !cleaning)
				cancel_all__();
			pthread_mutex_unlock(&cancel_lock);
			continue;
		}
		if (nsignals++ == 0) {
			describe__(intr_step, sizeof(intr_step));
			fprintf(stderr, "pgload: %s received while %s; %s\n", strsignal(sig),
				intr_step, cleaning ? "finishing it first" : "aborting the run");
			atomic_store(&pgl_interrupted, sig);
			if (wake_pipe[1] >= 0 && write(wake_pipe[1], "x", 1) < 0) {
				/* the pipe is never read: one byte always fits */
			}
		} else {
			fprintf(stderr, "pgload: %s received again: cleaning up, please wait\n",
				strsignal(sig));
		}
		if (!cleaning)
			cancel_all__();
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
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
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

void pgl_child_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	sigset_t none;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int pgl_interrupt_fd(void)
{
	return wake_pipe[0];
}

int pgl_wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd[2] = {{.fd = fd, .events = events},
				{.fd = wake_pipe[0], .events = POLLIN}};
	for (;;) {
		if (atomic_load(&pgl_interrupted))
			return -EINTR;
		int n = poll(pfd, wake_pipe[0] >= 0 ? 2 : 1, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if (pfd[1].revents)
			return -EINTR;
		return 1;
	}
}

/* test_point() -- does PGLOAD_TEST_INTERRUPT_AT name this start of step ID? */
static bool test_point(const char *id, int nth)
{
	const char *env = getenv(TEST_INTERRUPT_ENV);
	size_t idlen = strlen(id);
	for (const char *s = env; s && *s; s += strcspn(s, ","), s += *s == ',') {
		size_t n = strcspn(s, ",#");
		if (n != idlen || strncmp(s, id, n) != 0)
			continue;
		if (s[n] != '#' || atoi(s + n + 1) == nth)
			return true;
	}
	return false;
}

bool pgl_step(const char *id, const char *fmt, ...)
{
	static struct {
		char id[32];
		int n;
	} seen[32];
	int nth = 0;
	va_list ap;
	pthread_mutex_lock(&cancel_lock);
	va_start(ap, fmt);
	vsnprintf(step_desc, sizeof(step_desc), fmt, ap);
	va_end(ap);
	if (strcmp(id, "cleanup") == 0)
		cleaning = true;
	for (int i = 0; i < 32; i++) {
		if (!seen[i].id[0])
			snprintf(seen[i].id, sizeof(seen[i].id), "%s", id);
		if (strcmp(seen[i].id, id) == 0) {
			nth = ++seen[i].n;
			break;
		}
	}
	int before = nsignals;
	pthread_mutex_unlock(&cancel_lock);
	if (test_point(id, nth)) {
		/* as if a user pressed Ctrl-C just now: wait until it is handled */
		kill(getpid(), SIGINT);
		for (int i = 0; i < 5000; i++) {
			pthread_mutex_lock(&cancel_lock);
			bool done = nsignals > before;
			pthread_mutex_unlock(&cancel_lock);
			if (done)
				break;
			usleep(1000);
		}
	}
	return atomic_load(&pgl_interrupted) != 0;
}

void pgl_step_context(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&cancel_lock);
	step_ctx[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(step_ctx, sizeof(step_ctx), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&cancel_lock);
}

void pgl_interrupted_step(char *buf, size_t cap)
{
	pthread_mutex_lock(&cancel_lock);
	snprintf(buf, cap, "%s", intr_step[0] ? intr_step : "an unknown step");
	pthread_mutex_unlock(&cancel_lock);
}
