/*
 * log.h -- where a program's messages go (shared by all modules): stderr,
 * prefixed "NAME: ", while it runs in the foreground; syslog (daemon
 * facility, ident NAME, with the pid) once it has daemonized.
 *
 * What must stay true: one line per message; the switch to syslog happens
 * once, before any thread other than the caller's logs.
 */
#ifndef PGIOFS_LOG_H
#define PGIOFS_LOG_H

/* log_init() -- the program's name: the prefix on stderr and the syslog
 * ident.  @name must outlive the program (a string literal).  Until it is
 * called the name is "pgiofs". */
void log_init(const char *name);

/* log_to_syslog() -- from now on, messages go to syslog. */
void log_to_syslog(void);

/* log_msg() -- one message of syslog priority @prio (LOG_ERR, ...). */
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
