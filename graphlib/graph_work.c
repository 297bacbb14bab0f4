/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_work.c - work items from the interposer (AE_WORK_*: the
 * argus_work_* API, GLib sources, GThreadPool, GTask; docs/graph.md
 * "Work items").
 *
 * Segments are cut at a work item's begin (the begin starts the item's
 * segment) and after its end (what the thread does next is another
 * segment), and after a boundary.  A worker that takes the next item
 * without sleeping thus runs each item in a segment of its own, and what
 * it did before an item (a slow item queued ahead) is a different one.
 *
 * WORKITEM edges go from the segment that enqueued an item to the segment
 * that began it, on another thread.  Items are matched per object
 * (AE_OBJ_WORK: address, pid) first in, first out: each begin takes the
 * oldest enqueue of the same item not taken yet, at or before it (an item
 * address may be reused once its run ended; a repeating GLib timeout is
 * enqueued once and begun at each dispatch: only the first dispatch gets
 * the edge).  Same-thread enqueue -> begin (a main loop's own idle
 * callbacks) gets no edge: the thread's order already says it.
 */
#include "graph_internal.h"

const char *argus_work_kind_str(unsigned kind)
{
	static const char *const n[] = {
		[AIP_WORK_API] = "api", [AIP_WORK_IDLE] = "idle",
		[AIP_WORK_TIMEOUT] = "timeout", [AIP_WORK_SOURCE] = "source",
		[AIP_WORK_POOL] = "pool", [AIP_WORK_TASK] = "task",
		[ARGUS_WORK_KIND_LIVE] = "live",
	};
	return kind < sizeof(n) / sizeof(n[0]) && n[kind] ? n[kind] : "?";
}

/* A uprobe's live_hit (`argus instrument --via uprobe`) is the work record
 * its --as names, made by kind "live": the same cuts and edges as the
 * interposer's records of a patched function.  0, or -EINVAL for a kind
 * that is none of 1 boundary, 2 enqueue, 3 begin, 4 end. */
int gwork_from_live(const struct argus_event *ev, struct argus_event *w)
{
	static const uint16_t type_of[] = {
		[1] = AE_WORK_BOUNDARY, [2] = AE_WORK_ENQUEUE, [3] = AE_WORK_BEGIN, [4] = AE_WORK_END,
	};
	uint64_t k = ev->f[ARGUS_F_LIVE_KIND];

	if (k < 1 || k > 4 || !ev->f[ARGUS_F_LIVE_ITEM])
		return -EINVAL;
	*w = *ev;
	memset(w->f, 0, sizeof(w->f));
	w->type = type_of[k];
	w->f[ARGUS_F_WI_ITEM] = ev->f[ARGUS_F_LIVE_ITEM];
	if (k != 1) {
		w->f[ARGUS_F_WI_FN] = ev->f[ARGUS_F_LIVE_FUNC];
		w->f[ARGUS_F_WI_KIND] = ARGUS_WORK_KIND_LIVE;
	}
	return 0;
}

/* Before storing a work_begin of ev's thread: cut its open segment, so
 * that the begin starts a new one, unless that segment is empty and starts
 * right there (the previous item's end at the same time).  Time between
 * items with nothing traced in it stays a segment of its own. */
int gwork_cut_before(struct argus_graph *g, const struct argus_event *ev)
{
	uint32_t thr = gthread_get(g, ev->tid, ev->pid);
	struct tstate *s;

	if (thr == ARGUS_NONE)
		return -ENOMEM;
	s = TSTATE(g, thr);
	if (s->cur == ARGUS_NONE || s->pend_early ||
	    (!SEGS(g)[s->cur].nevents && SEGS(g)[s->cur].start >= ev->ts))
		return 0;
	/* gseg_close moves the on-CPU clock (run_since) to ts, or leaves it
	 * stopped if the thread was preempted: the new segment goes on from
	 * there */
	gseg_close(g, thr, ev->ts, ARGUS_END_WORK);
	if (gseg_open(g, thr, ev->ts, ARGUS_START_WORK) == ARGUS_NONE)
		return -ENOMEM;
	return 0;
}

/* After storing a work_end or boundary of thread thr: what follows is a
 * new segment. */
int gwork_cut_after(struct argus_graph *g, uint32_t thr, uint64_t ts)
{
	if (thr == ARGUS_NONE || TSTATE(g, thr)->cur == ARGUS_NONE)
		return 0;
	gseg_close(g, thr, ts, ARGUS_END_WORK);
	if (gseg_open(g, thr, ts, ARGUS_START_WORK) == ARGUS_NONE)
		return -ENOMEM;
	return 0;
}

struct wev {
	uint32_t obj;
	uint32_t thr;
	uint64_t ts;
	uint8_t begin;          /* 0 enqueue, 1 begin */
};

static int wev_cmp(const void *a, const void *b)
{
	const struct wev *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->begin - (int)y->begin;   /* enqueue first */
}

int gwork_edges(struct argus_graph *g)
{
	struct gvec v = { 0 };
	struct wev *w;
	int added = 0;

	if (!g->b->nwork_items)
		return 0;       /* no enqueue or begin: no walk over every event */
	for (uint32_t t = 0; t < g->thr.n; t++)
		for (uint32_t e = THRS(g)[t].first_event; e != ARGUS_NONE;
		     e = argus_graph__thread_next_event(g, t, e)) {
			const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);
			struct wev *x;

			if ((ev->type != AE_WORK_ENQUEUE && ev->type != AE_WORK_BEGIN) || !ev->obj)
				continue;
			if (!(x = gvec_push(&v, sizeof(*x)))) {
				gvec_free(&v);
				return -ENOMEM;
			}
			*x = (struct wev){ ev->obj, t, ev->ts, ev->type == AE_WORK_BEGIN };
		}
	if (!v.n)
		return 0;
	w = v.p;
	qsort(w, v.n, sizeof(*w), wev_cmp);
	/* per object: enqueues not taken yet are w[q..) of type 0 */
	for (uint32_t i = 0, q = 0; i < v.n; i++) {
		uint32_t src, dst;

		if (i == 0 || w[i].obj != w[i - 1].obj)
			q = i;
		if (!w[i].begin)
			continue;
		while (q < i && w[q].begin)
			q++;
		if (q >= i)
			continue;       /* begun with no enqueue (before the trace) */
		if (w[q].thr != w[i].thr &&
		    (src = gseg_at(g, w[q].thr, w[q].ts)) != ARGUS_NONE &&
		    (dst = gseg_at(g, w[i].thr, w[i].ts)) != ARGUS_NONE) {
			if (gedge_push(g, ARGUS_EDGE_WORKITEM, src, dst, w[q].ts, w[i].ts,
				       argus_graph__object(g, w[i].obj)->obj) == -ENOMEM) {
				gvec_free(&v);
				return -ENOMEM;
			}
			added++;
		}
		q++;
	}
	gvec_free(&v);
	return added;
}
