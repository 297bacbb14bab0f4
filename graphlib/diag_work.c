/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_work.c - a thread blocked waiting for the result of a work item it
 * handed to another thread (docs/diagnosis.md, rules work-item and
 * queued-behind).
 *
 * The item: the latest one the waiting thread enqueued (AE_WORK_ENQUEUE)
 * before its wait began that had not ended by then, and that another
 * thread runs (its begin is on another thread; an item not begun at all
 * must be a pool's, a task's or the API's: a main-loop source the thread
 * queued to itself cannot be what it waits for while it blocks).
 *
 *   - it waited in the queue for at least half the wait, behind another
 *     item that ran on a worker meanwhile (the worker that then ran it,
 *     or, when it never began, a thread that ran items of the same
 *     callback and kind: the same pool): queued-behind, the culprit is
 *     the thread that ran the item ahead, the one that overlapped the
 *     wait the most;
 *   - else it began, and its run covered at least half the wait:
 *     work-item, the culprit is the worker that ran it.
 * Otherwise the rule does not apply and the usual ones follow.  The
 * facts are in the trace (the interposer's records), not guessed from
 * similar runs, so the rule comes before the similarity search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "diag_internal.h"
#include "graph_view.h"

#define MAX_CANDIDATES 64

struct wrec {
	uint64_t ts;
	uint32_t thr;
	uint32_t obj;
	uint64_t fn;
	uint8_t type;
	uint8_t kind;
};

static int wrec_cmp(const void *a, const void *b)
{
	const struct wrec *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* for pairing each begin with its end: by item, thread, then time (the
 * array is already in time order, so the index breaks ties) */
static int pair_cmp(const void *a, const void *b, void *ctx)
{
	const struct wrec *base = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct wrec *x = &base[i], *y = &base[j];

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->thr != y->thr)
		return x->thr < y->thr ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* end[j]: for a begin w[j], the index of the first end of the same item
 * on the same thread after it, -1 none.  O(n log n): a process may run
 * many thousands of items. */
static int pair_ends(const struct wrec *w, uint32_t n, int64_t *end)
{
	uint32_t *ix = malloc(n * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		ix[i] = i;
		end[i] = -1;
	}
	qsort_r(ix, n, sizeof(*ix), pair_cmp, (void *)w);
	for (uint32_t a = 0; a < n; a++) {
		const struct wrec *x = &w[ix[a]];

		if (x->type != AE_WORK_BEGIN)
			continue;
		for (uint32_t b = a + 1; b < n; b++) {
			const struct wrec *y = &w[ix[b]];

			if (y->obj != x->obj || y->thr != x->thr || y->type == AE_WORK_BEGIN)
				break;
			if (y->type == AE_WORK_END) {
				end[ix[a]] = ix[b];
				break;
			}
		}
	}
	free(ix);
	return 0;
}

/* Begin and end (index, -1 none) of the run of w[i] (an enqueue): the
 * first begin of the same item at or after it, the first end of that item
 * on the begin's thread after the begin. */
static void run_of(const struct wrec *w, uint32_t n, uint32_t i, int64_t *b, int64_t *e)
{
	*b = *e = -1;
	for (uint32_t j = i + 1; j < n && *b < 0; j++)
		if (w[j].type == AE_WORK_BEGIN && w[j].obj == w[i].obj)
			*b = j;
	for (uint32_t j = *b < 0 ? n : (uint32_t)*b + 1; j < n && *e < 0; j++)
		if (w[j].type == AE_WORK_END && w[j].obj == w[i].obj && w[j].thr == w[*b].thr)
			*e = j;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

int diag_work_find(const struct argus_graph *g, uint32_t tid, uint32_t h, uint64_t wfrom,
		   uint64_t wto, uint32_t *culprit, struct argus_culprit *k)
{
	uint32_t t = argus_graph__thread_by_tid(g, tid), pid, n = 0, cap = 0, tried = 0;
	uint64_t wait_start = argus_graph__segment(g, h)->end, win = wto > wfrom ? wto - wfrom : 0;
	struct wrec *w = NULL;
	int64_t *end = NULL;
	struct gview v;
	int rc = 0;

	if (t == ARGUS_NONE || !win)
		return 0;
	pid = argus_graph__thread(g, t)->pid;
	gview_get(g, &v);
	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *th = argus_graph__thread(g, i);
		const struct argus_gevent *ev;
		struct gview_walk it;

		if (th->pid != pid)
			continue;
		for (gview_walk_thread(&v, th, th->first_event, &it); (ev = gview_walk_next(&v, &it));) {
			if (ev->type != AE_WORK_ENQUEUE && ev->type != AE_WORK_BEGIN &&
			    ev->type != AE_WORK_END)
				continue;
			if (n == cap) {
				struct wrec *nw = realloc(w, (cap = cap ? cap * 2 : 256) * sizeof(*w));

				if (!nw) {
					free(w);
					return -ENOMEM;
				}
				w = nw;
			}
			w[n++] = (struct wrec){ ev->ts, i, ev->obj, (uint64_t)ev->val, ev->type,
						(uint8_t)ev->nr };
		}
	}
	if (!n)
		goto out;
	qsort(w, n, sizeof(*w), wrec_cmp);
	if (!(end = malloc(n * sizeof(*end))) || pair_ends(w, n, end)) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = n; i-- > 0 && tried < MAX_CANDIDATES;) {
		int64_t b, e, yb = -1;
		uint64_t qend, qwait, best = 0, yend = 0;
		uint32_t ythr = ARGUS_NONE;
		bool ydone = false;

		if (w[i].type != AE_WORK_ENQUEUE || w[i].thr != t || w[i].ts > wait_start)
			continue;
		tried++;
		run_of(w, n, i, &b, &e);
		if (e >= 0 && w[e].ts <= wait_start)
			continue;       /* done before the wait began */
		if (b >= 0 && w[b].thr == t)
			continue;       /* its own: not what it blocks for */
		if (b < 0 && w[i].kind != AIP_WORK_POOL && w[i].kind != AIP_WORK_TASK &&
		    w[i].kind != AIP_WORK_API)
			continue;
		/* the runs of other items on its worker (or its pool's) while
		 * it sat in the queue */
		qend = b >= 0 && w[b].ts < wto ? w[b].ts : wto;
		qwait = overlap(w[i].ts, qend, wfrom, wto);
		for (uint32_t j = 0; j < n && w[j].ts < qend; j++) {
			uint64_t ov, jend = end[j] >= 0 ? w[end[j]].ts : wto;

			if (w[j].type != AE_WORK_BEGIN || w[j].obj == w[i].obj)
				continue;
			if (b >= 0 ? w[j].thr != w[b].thr :
			    w[j].thr == t || w[j].kind != w[i].kind || w[j].fn != w[i].fn)
				continue;
			ov = overlap(w[j].ts, jend, w[i].ts > wfrom ? w[i].ts : wfrom, qend);
			if (ov > best) {
				best = ov;
				yb = j;
				yend = jend;
				ydone = end[j] >= 0;
				ythr = w[j].thr;
			}
		}
		k->item = argus_graph__object(g, w[i].obj)->obj;
		k->item_fn = w[i].fn ? w[i].fn : b >= 0 ? w[b].fn : 0;
		k->item_kind = w[i].kind;
		k->item_queued_ns = (b >= 0 ? w[b].ts : wto) - w[i].ts;
		if (yb >= 0 && qwait * 2 >= win && best * 2 >= win) {
			k->ahead = argus_graph__object(g, w[yb].obj)->obj;
			k->ahead_fn = w[yb].fn;
			k->ahead_kind = w[yb].kind;
			k->ahead_tid = argus_graph__thread(g, ythr)->tid;
			k->ahead_ns = yend - w[yb].ts;
			k->ahead_done = ydone;
			k->rule = ARGUS_RULE_QUEUED_BEHIND;
			*culprit = k->ahead_tid;
			rc = 1;
		} else if (b >= 0 &&
			   overlap(w[b].ts, e >= 0 ? w[e].ts : wto, wfrom, wto) * 2 >= win) {
			k->rule = ARGUS_RULE_WORK_ITEM;
			*culprit = argus_graph__thread(g, w[b].thr)->tid;
			rc = 1;
		}
		break;          /* the latest unfinished item is the one */
	}
out:
	free(end);
	free(w);
	return rc;
}
