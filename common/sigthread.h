/*
 * sigthread.h -- the thread that takes a daemon's signals (shared by
 * pgiofs and pgdisk): it waits for the signals of a set with sigwait(2)
 * and hands each to a handler, one at a time, until the daemon says its
 * work is over.
 *
 * A daemon blocks its signals in every thread (pthread_sigmask() before
 * any other thread starts) so that only this thread takes them, and a
 * signal may come at any moment, also while the daemon is tearing down
 * what the handler uses.  So the thread's own state lives as long as the
 * process (there is one per process), and sig_thread_end() is a barrier:
 * once it returns no handler runs and none will; a signal that comes later
 * is taken and dropped (it stays blocked, so it cannot kill the daemon
 * half-way through its clean-up either).
 *
 * What must stay true: a handler never runs after sig_thread_end()
 * returned; handlers never run concurrently; the handler's argument is
 * used by nothing here but the handler.
 */
#ifndef PGIOFS_SIGTHREAD_H
#define PGIOFS_SIGTHREAD_H

#include <signal.h>
#include <stddef.h>

/* sig_thread_start() -- start the (detached) thread taking the signals of
 * @set, already blocked in the caller and in every thread it started,
 * calling @handle(sig, @arg) for each until sig_thread_end().  @stack_size
 * 0 is the default stack.  Returns 0, -EBUSY if the process started one
 * before, or -errno of pthread_create(). */
int sig_thread_start(const sigset_t *set, void (*handle)(int sig, void *arg), void *arg,
		     size_t stack_size);

/* sig_thread_end() -- wait for a handler that is running, and run none
 * from now on.  Does nothing if no thread was started. */
void sig_thread_end(void);

#endif
