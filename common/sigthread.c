/*
 * sigthread.c -- the thread that takes a daemon's signals: sigthread.h.
 */
#include "sigthread.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

/* the process's one signal thread: a static, so a signal that comes while
 * the daemon is ending never finds its state gone */
static struct {
	pthread_mutex_t lock; /* held while a handler runs */
	bool started, ended;
	sigset_t set;
	void (*handle)(int sig, void *arg);
	void *arg;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *sig_main(void *unused)
{
	(void)unused;
	for (;;) {
		int sig;

		if (sigwait(&st.set, &sig) != 0)
			continue;
		pthread_mutex_lock(&st.lock);
		if (!st.ended)
			st.handle(sig, st.arg);
		pthread_mutex_unlock(&st.lock);
	}
	return NULL;
}

int sig_thread_start(const sigset_t *set, void (*handle)(int sig, void *arg), void *arg,
		     size_t stack_size)
{
	pthread_attr_t a;
	pthread_t t;
	int ret;

	pthread_mutex_lock(&st.lock);
	if (st.started) {
		pthread_mutex_unlock(&st.lock);
		return -EBUSY;
	}
	st.set = *set;
	st.handle = handle;
	st.arg = arg;
	st.ended = false;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (stack_size)
		pthread_attr_setstacksize(&a, stack_size);
	ret = pthread_create(&t, &a, sig_main, NULL);
	pthread_attr_destroy(&a);
	st.started = ret == 0;
	pthread_mutex_unlock(&st.lock);
	return -ret;
}

void sig_thread_end(void)
{
	pthread_mutex_lock(&st.lock);
	st.ended = true;
	pthread_mutex_unlock(&st.lock);
}
