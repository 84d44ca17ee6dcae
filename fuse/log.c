/*
 * log.c -- where pgiofs's messages go: stderr (prefixed "pgiofs: ") while
 * it runs in the foreground, syslog (daemon facility) once it has
 * daemonized.
 */
#include "pgiofs_i.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

static bool log_syslog;

void pfs_log_to_syslog(void)
{
	openlog("pgiofs", LOG_PID, LOG_DAEMON);
	log_syslog = true;
}

void pfs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fputs("pgiofs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
