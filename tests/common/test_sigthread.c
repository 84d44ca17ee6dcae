/*
 * test_sigthread.c -- the signal thread (common/sigthread.h): a signal of
 * its set reaches the handler with the handler's argument; handlers never
 * overlap; sig_thread_end() waits for a handler that is running and none
 * runs after it returned, also for a signal that comes later; a second
 * thread is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "sigthread.h"

#include "check.h"

static atomic_int calls, running, overlapped, finished, last_sig;
static int token;

static void handle(int sig, void *arg)
{
	if (atomic_fetch_add(&running, 1) != 0)
		atomic_store(&overlapped, 1);
	CHECK(arg == &token);
	atomic_store(&last_sig, sig);
	atomic_fetch_add(&calls, 1);
	if (sig == SIGUSR2)
		usleep(300 * 1000); /* a slow handler: sig_thread_end() waits for it */
	atomic_fetch_sub(&running, 1);
	atomic_fetch_add(&finished, 1);
}

/* wait_for() -- until *@v >= @n, at most 10 s; whether it got there */
static int wait_for(atomic_int *v, int n)
{
	for (int i = 0; i < 10000; i++) {
		if (atomic_load(v) >= n)
			return 1;
		usleep(1000);
	}
	return 0;
}

static void noop(int sig, void *arg)
{
	(void)sig;
	(void)arg;
}

int main(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	CHECK(sig_thread_start(&set, handle, &token, 0) == 0);
	CHECK(sig_thread_start(&set, noop, NULL, 0) == -EBUSY);

	/* each signal reaches the handler, one at a time */
	for (int i = 1; i <= 5; i++) {
		kill(getpid(), SIGUSR1);
		CHECK(wait_for(&finished, i));
	}
	CHECK(atomic_load(&calls) == 5);
	CHECK(atomic_load(&last_sig) == SIGUSR1);
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1); /* pending while the slow one runs */
	CHECK(wait_for(&finished, 7));
	CHECK(atomic_load(&overlapped) == 0);

	/* the end waits for a running handler */
	kill(getpid(), SIGUSR2);
	CHECK(wait_for(&running, 1));
	sig_thread_end();
	CHECK(atomic_load(&running) == 0);
	CHECK(atomic_load(&finished) == 8);

	/* and after it no handler runs: the signals are taken (no longer
	 * pending) and dropped */
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR2);
	{
		int i;

		for (i = 0; i < 10000; i++) {
			sigset_t pending;

			sigpending(&pending);
			if (!sigismember(&pending, SIGUSR1) && !sigismember(&pending, SIGUSR2))
				break;
			usleep(1000);
		}
		CHECK(i < 10000);
	}
	usleep(100 * 1000);
	CHECK(atomic_load(&calls) == 8);
	return failures ? 1 : 0;
}
