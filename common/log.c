/*
 * log.c -- where a program's messages go (see log.h).
 */
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

static const char *log_name = "pgiofs";
static bool log_syslog;

void log_init(const char *name)
{
	log_name = name;
}

void log_to_syslog(void)
{
	openlog(log_name, LOG_PID, LOG_DAEMON);
	log_syslog = true;
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fprintf(stderr, "%s: ", log_name);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
