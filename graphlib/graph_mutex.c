/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_mutex.c - HOLDER edges from the interposer's mutex records
 * (interposer/, docs/interposer.md, docs/graph.md "holder").
 *
 * A thread that waited for a mutex (AE_MUTEX_WAIT ... AE_MUTEX_ACQUIRED
 * with no error) got it from the last unlock that had waiters
 * (AE_MUTEX_WAKE) on the same mutex, by another thread, between its wait
 * and its acquisition.  The edge goes from the unlocker's segment at the
 * unlock to the waiter's segment at the acquisition.  The mutex is the
 * object (AE_OBJ_MUTEX, address, pid): two processes' mutexes at one
 * address are different objects.
 *
 * The same records carry rwlocks, semaphores and condition variables
 * (field kind, docs/trace-format.md), and the same rule gives their
 * edges: an rwlock unlock with waiters -> the waiter's acquisition, a
 * sem_post with waiters -> the waiter's return from sem_wait, a condvar
 * signal/broadcast with waiters -> the waiter's return from
 * pthread_cond_wait.  Their objects are AE_OBJ_MUTEX (rwlocks),
 * AE_OBJ_SEM and AE_OBJ_COND, so one address never mixes kinds.
 *
 * Why an edge of its own when the kernel already gives a FUTEX edge for
 * the same wake-up: the futex edge says who woke the waiter; the holder
 * edge says who had the lock it wanted, also when the wake-up went to
 * another waiter first, or when the waiter spun and never slept.
 */
#include "graph_internal.h"

struct mwake {
	uint32_t obj;           /* mutex object id */
	uint32_t thr;
	uint64_t ts;
};

static int wake_cmp(const void *a, const void *b)
{
	const struct mwake *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int gmutex_edges(struct argus_graph *g)
{
	struct gvec wv = { 0 };
	int added = 0;

	if (!g->b->nmutex_wakes)
		return 0;       /* no unlock with waiters: no walk over every event */
	for (uint32_t t = 0; t < g->thr.n; t++)
		for (uint32_t e = THRS(g)[t].first_event; e != ARGUS_NONE;
		     e = argus_graph__thread_next_event(g, t, e)) {
			const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);
			struct mwake *w;

			if (ev->type != AE_MUTEX_WAKE || !ev->obj)
				continue;
			if (!(w = gvec_push(&wv, sizeof(*w)))) {
				gvec_free(&wv);
				return -ENOMEM;
			}
			*w = (struct mwake){ .obj = ev->obj, .thr = t, .ts = ev->ts };
		}
	if (!wv.n)
		return 0;
	qsort(wv.p, wv.n, sizeof(struct mwake), wake_cmp);
	for (uint32_t t = 0; t < g->thr.n; t++) {
		uint64_t wait_ts = 0;
		uint32_t wait_obj = 0;

		for (uint32_t e = THRS(g)[t].first_event; e != ARGUS_NONE;
		     e = argus_graph__thread_next_event(g, t, e)) {
			const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);
			const struct mwake *ws = wv.p, *best = NULL;
			uint32_t lo = 0, hi = wv.n, src, dst;

			if (ev->type == AE_MUTEX_WAIT) {
				wait_ts = ev->ts;
				wait_obj = ev->obj;
				continue;
			}
			if (ev->type != AE_MUTEX_ACQUIRED)
				continue;
			if (!wait_obj || ev->obj != wait_obj || ev->val) {
				wait_obj = 0;
				continue;
			}
			/* the first wake on this mutex after ev->ts, then back */
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (ws[mid].obj < ev->obj ||
				    (ws[mid].obj == ev->obj && ws[mid].ts <= ev->ts))
					lo = mid + 1;
				else
					hi = mid;
			}
			for (uint32_t i = lo; i-- > 0;) {
				if (ws[i].obj != ev->obj || ws[i].ts < wait_ts)
					break;
				if (ws[i].thr != t) {
					best = &ws[i];
					break;
				}
			}
			wait_obj = 0;
			if (!best || (src = gseg_at(g, best->thr, best->ts)) == ARGUS_NONE ||
			    (dst = gseg_at(g, t, ev->ts)) == ARGUS_NONE)
				continue;
			if (gedge_push(g, ARGUS_EDGE_HOLDER, src, dst, best->ts, ev->ts,
				       argus_graph__object(g, ev->obj)->obj) == -ENOMEM) {
				gvec_free(&wv);
				return -ENOMEM;
			}
			added++;
		}
	}
	gvec_free(&wv);
	return added;
}
