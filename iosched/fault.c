/*
 * fault.c -- fault injection: the [fault] tunables make chosen requests fail
 * with EIO or ENOSPC, complete late, or kill the process, so that tests can
 * see what PostgreSQL and pgiofs do when storage misbehaves.
 *
 * What must stay true:
 *   - with every [fault] setting at its default, no state exists and no
 *     request is touched (ios_fault_configured() is false, s->fault NULL);
 *   - a request picked to fail is never performed: a write that "failed"
 *     wrote nothing and a sync synced nothing, and the error reaches the
 *     submitter unchanged (never turned into success); one picked to be
 *     skipped (error = skip) is not performed either and reports success:
 *     the one deliberate lie, for tests that must catch a lying stack;
 *   - the choice depends only on the settings and the order in which
 *     matching requests arrive (seeded generator, no clock), so a
 *     single-threaded sequence of requests always fails at the same places;
 *   - counting starts when the scheduler is created (mount, SIGHUP reload).
 *
 * The core asks ios_fault_pick() once per request when it arrives (in
 * arrival order, on the dispatcher thread); the "direct" policy calls
 * ios_fault_execute() instead of ios_execute() in the submitting thread.
 * pgiofs refuses non-default [fault] settings unless started with
 * --allow-faults.
 */
#include "iosched_i.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ios_fault {
	pthread_mutex_t lock; /* direct: any submitting thread picks */
	/* tunables */
	int cls; /* enum ios_class, or -1: any */
	int dir; /* enum ios_dir, or -1: any */
	int err; /* -errno injected, or 0: delay only */
	uint64_t nth, count, abort_after, delay_ns;
	double fraction;
	/* runtime data */
	uint64_t seen; /* matching requests so far */
	uint64_t rng;  /* splitmix64 state */
};

static const int fault_errors[] = {[IOS_FAULT_NONE] = 0,
				   [IOS_FAULT_EIO] = -EIO,
				   [IOS_FAULT_ENOSPC] = -ENOSPC,
				   [IOS_FAULT_SKIP] = IOS_FAULT_SKIPPED};

bool ios_fault_configured(const struct ios_settings *set)
{
	struct ios_settings def;
	char a[CONF_STR_MAX + 32], b[CONF_STR_MAX + 32];
	size_t i;

	conf_defaults(&ios_conf, &def);
	for (i = 0; i < ios_conf.nrows; i++) {
		const struct conf_tunable *r = &ios_conf.rows[i];

		if (strcmp(r->section, "fault") != 0)
			continue;
		conf_format(r, set, a, sizeof(a));
		conf_format(r, &def, b, sizeof(b));
		if (strcmp(a, b) != 0)
			return true;
	}
	return false;
}

struct ios_fault *ios_fault_create(const struct ios_settings *set)
{
	struct ios_fault *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	pthread_mutex_init(&f->lock, NULL);
	f->cls = set->fault_class - 1; /* choice 0 is "any" */
	f->dir = set->fault_direction - 1;
	f->err = fault_errors[set->fault_error];
	f->nth = (uint64_t)set->fault_nth;
	f->count = (uint64_t)set->fault_count;
	f->abort_after = (uint64_t)set->fault_abort_after;
	f->delay_ns = (uint64_t)set->fault_delay_ms * 1000000u;
	f->fraction = set->fault_fraction;
	f->rng = (uint64_t)set->fault_seed;
	return f;
}

void ios_fault_destroy(struct ios_fault *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* next_unit() -- the generator's next value as a double in [0, 1). */
static double next_unit(struct ios_fault *f)
{
	return (double)(ios_splitmix64(&f->rng) >> 11) / 9007199254740992.0; /* 2^53 */
}

int ios_fault_pick(struct ios_fault *f, const struct ios_req *req, uint64_t *delay_ns)
{
	bool picked;
	uint64_t n;

	*delay_ns = 0;
	if ((f->cls >= 0 && (int)req->cls != f->cls) || (f->dir >= 0 && (int)req->dir != f->dir))
		return 0;
	if (f->err == IOS_FAULT_SKIPPED && req->dir == IOS_READ)
		return 0; /* a skipped read would return garbage, not a broken disk */
	pthread_mutex_lock(&f->lock);
	n = ++f->seen;
	if (f->abort_after && n >= f->abort_after) {
		/* as if the process had crashed: no clean-up of any kind */
		fprintf(stderr, "iosched: fault injection: killing the process at request %llu\n",
			(unsigned long long)n);
		raise(SIGKILL);
	}
	picked = f->nth && n >= f->nth && (f->count == 0 || n - f->nth < f->count);
	if (f->fraction > 0 && next_unit(f) < f->fraction)
		picked = true;
	pthread_mutex_unlock(&f->lock);
	if (!picked)
		return 0;
	*delay_ns = f->delay_ns;
	return f->err;
}

ssize_t ios_fault_result(int fault, enum ios_dir dir, size_t len)
{
	if (fault == IOS_FAULT_SKIPPED)
		return dir == IOS_SYNC ? 0 : (ssize_t)len;
	return fault;
}

ssize_t ios_fault_execute(struct ios_fault *f, struct ios_req *req)
{
	uint64_t delay;
	int err = ios_fault_pick(f, req, &delay);

	if (delay) {
		struct timespec ts = {(time_t)(delay / 1000000000u), (long)(delay % 1000000000u)};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return err ? ios_fault_result(err, req->dir, req->len) : ios_execute(req);
}
