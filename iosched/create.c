/*
 * create.c -- the public constructors of a scheduler: by policy name, with
 * settings, or on the virtual clock.  They choose the back end (io_uring,
 * or the virtual clock's) that core.c runs on, so that core.c need not
 * know the back ends, which call into it.
 */
#include "iosched_i.h"

#include <errno.h>

struct ios_sched *ios_create_with(const struct ios_settings *set)
{
	return ios_core_create(set, &ios_backend_uring);
}

struct ios_sched *ios_create_virtual(const struct ios_settings *set)
{
	return ios_core_create(set, &ios_backend_virtual);
}

struct ios_sched *ios_create(const char *name)
{
	struct ios_settings set;
	int p = name ? ios_policy_by_name(name) : -EINVAL;

	if (p < 0) {
		errno = EINVAL;
		return NULL;
	}
	conf_defaults(&ios_conf, &set);
	set.policy = p;
	return ios_create_with(&set);
}
