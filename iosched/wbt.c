/*
 * wbt.c -- dbaware's writeback throttle: what Linux's blk-wbt does for
 * reads, done for commits.
 *
 * A commit waits for its WAL flush (an fdatasync of the segment, or an
 * O_DSYNC write), and on a shared device that flush queues behind whatever
 * writeback is in flight: a checkpoint or a bulk import can put many
 * megabytes in front of it.  So the throttle times every WAL flush that
 * reaches the scheduler, and decides:
 *
 *   - as soon as 1% or more of the WAL flushes since its last decision took
 *     longer than the target (wal_target_us; that is, their p99 is over
 *     it), the depth of writeback in flight -- heap, index, fsm, vm, temp,
 *     meta and other writes, counted in transfers -- is halved, down to 1
 *     (at once: by the end of a window more commits would have queued);
 *   - at the end of a window (throttle_window_ms) in which none did (or
 *     there was no flush: nobody waits for a commit), it grows by a quarter
 *     (at least 1), up to nr_requests.
 *
 * Writeback is paced, never stopped: at depth 1 one transfer is always in
 * flight, and the policy's deadlines still order what goes next.  Reads,
 * WAL and commit status are never held.  Where no WAL flush reaches pgiofs
 * (WAL in passthrough with wal_sync_method = open_datasync) the throttle
 * has nothing to go by and stays open.
 *
 * What must stay true: observations are lock-free and may come from any
 * thread (the FUSE workers run WAL requests inline); everything else runs
 * on the dispatcher; the depth stays within [1, max_depth].
 */
#include "iosched_i.h"

#include <stdlib.h>

#define MIN_DEPTH 1

struct ios_wbt *ios_wbt_create(const struct ios_settings *set)
{
	struct ios_wbt *w;

	if (set->wal_target_us <= 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->target_ns = (uint64_t)set->wal_target_us * 1000u;
	w->window_ns = (uint64_t)set->throttle_window_ms * 1000000u;
	w->max_depth = set->nr_requests > MIN_DEPTH ? (unsigned)set->nr_requests : MIN_DEPTH;
	w->depth = w->max_depth;
	return w;
}

void ios_wbt_destroy(struct ios_wbt *w)
{
	free(w);
}

bool ios_wbt_is_flush(const struct ios_req *req)
{
	return req->cls == IOS_CLASS_WAL &&
	       (req->dir == IOS_SYNC || (req->dir == IOS_WRITE && (req->flags & IOS_F_DSYNC)));
}

bool ios_wbt_is_writeback(const struct ios_req *req)
{
	return req->dir == IOS_WRITE && req->cls != IOS_CLASS_WAL && req->cls != IOS_CLASS_XACT &&
	       !(req->flags & IOS_F_INTERNAL);
}

void ios_wbt_observe(struct ios_wbt *w, const struct ios_req *req, uint64_t lat_ns)
{
	if (!w || !ios_wbt_is_flush(req))
		return;
	atomic_fetch_add_explicit(&w->flushes, 1, memory_order_relaxed);
	if (lat_ns > w->target_ns)
		atomic_fetch_add_explicit(&w->slow, 1, memory_order_relaxed);
}

bool ios_bulk_fits(const struct ios_sched *s, const struct ios_rq *rq)
{
	return !s->bulk_limit || !s->wb_bytes_inflight || !ios_wbt_is_writeback(rq->req) ||
	       s->wb_bytes_inflight + rq->len <= s->bulk_limit;
}

bool ios_wbt_allows(struct ios_sched *s, const struct ios_rq *rq)
{
	struct ios_wbt *w = s->wbt;

	if (!ios_bulk_fits(s, rq)) /* the bytes first */
		return false;
	if (!w || s->nr_wb_inflight < w->depth)
		return true;
	if (!w->held_round) { /* counted once per dispatch round */
		w->held_round = true;
		w->held++;
	}
	return false;
}

void ios_wbt_round(struct ios_sched *s)
{
	if (s->wbt)
		s->wbt->held_round = false;
}

void ios_wbt_publish(struct ios_sched *s, const struct ios_stats_throttle *counters)
{
	struct ios_stats_throttle t = {0};

	if (counters)
		t = *counters;
	if (s->wbt) {
		t.target_ns = s->wbt->target_ns;
		t.depth = s->wbt->depth;
		t.max_depth = s->wbt->max_depth;
	}
	ios_stats_note_throttle(s->stats, &t);
}

uint64_t ios_wbt_tick(struct ios_sched *s, uint64_t now)
{
	struct ios_wbt *w = s->wbt;
	struct ios_stats_throttle t = {0};
	uint64_t flushes, slow;
	unsigned before;

	if (!w)
		return UINT64_MAX;
	if (!w->window_end) { /* the first window starts now */
		w->window_start = now;
		w->window_end = now + w->window_ns;
		return w->window_end;
	}
	/* a slow flush is acted on at once: by the end of the window more
	 * commits would queue behind the writeback it waited for */
	if (now < w->window_end && !atomic_load_explicit(&w->slow, memory_order_relaxed))
		return w->window_end;
	flushes = atomic_exchange_explicit(&w->flushes, 0, memory_order_relaxed);
	slow = atomic_exchange_explicit(&w->slow, 0, memory_order_relaxed);
	before = w->depth;
	t.windows = 1;
	if (slow && slow * 100 >= flushes) {
		w->depth = w->depth / 2 > MIN_DEPTH ? w->depth / 2 : MIN_DEPTH;
		t.windows_cut = w->depth < before;
	} else if (!slow && w->depth < w->max_depth) {
		unsigned step = w->depth / 4 > 1 ? w->depth / 4 : 1;

		w->depth = w->depth + step < w->max_depth ? w->depth + step : w->max_depth;
		t.windows_raised = 1;
	}
	t.wal_flushes = flushes;
	t.wal_slow = slow;
	t.throttled_ns = before < w->max_depth ? now - w->window_start : 0;
	t.held = w->held;
	w->held = 0;
	ios_wbt_publish(s, &t);
	w->window_start = now;
	w->window_end = now + w->window_ns;
	return w->window_end;
}

bool ios_wbt_open(const struct ios_sched *s)
{
	return !s->wbt || s->wbt->depth >= s->wbt->max_depth;
}
