/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_query.c - read access to a built graph, and edges added later
 * (interposed work items, data-flag watchpoints).
 *
 * Accessors check ids and return NULL / 0 / ARGUS_NONE for bad ones, so a
 * caller walking ids from user input cannot read out of bounds.  Adjacency
 * queries rebuild the CSR first if an edge was added since.
 */
#include "graph_internal.h"

struct argus_trace *argus_graph__trace(const struct argus_graph *g)
{
	return g ? g->trace : NULL;
}

const struct argus_graph_stats *argus_graph__stats(const struct argus_graph *g)
{
	return g ? &g->st : NULL;
}

uint32_t argus_graph__nsegments(const struct argus_graph *g)
{
	return g ? g->seg.n : 0;
}

const struct argus_segment *argus_graph__segment(const struct argus_graph *g,
						 uint32_t id)
{
	return g && id < g->seg.n ? &SEGS(g)[id] : NULL;
}

uint32_t argus_graph__nedges(const struct argus_graph *g)
{
	return g ? gedge_count(g) : 0;
}

const struct argus_edge *argus_graph__edge(const struct argus_graph *g,
					   uint32_t id, struct argus_edge *buf)
{
	if (!g || id >= gedge_count(g))
		return NULL;
	if (gedge_slot(g, id) == ARGUS_NONE && !buf)
		return NULL;    /* an INTRA edge needs somewhere to go */
	return gedge_get(g, id, buf);
}

uint32_t argus_graph__nthreads(const struct argus_graph *g)
{
	return g ? g->thr.n : 0;
}

const struct argus_thread *argus_graph__thread(const struct argus_graph *g,
					       uint32_t idx)
{
	return g && idx < g->thr.n ? &THRS(g)[idx] : NULL;
}

uint32_t argus_graph__nevents(const struct argus_graph *g)
{
	return g ? g->ev.n : 0;
}

const struct argus_gevent *argus_graph__event(const struct argus_graph *g,
					      uint32_t id, struct argus_gevent *buf)
{
	return g && buf && id < g->ev.n ? gev_at(g, id, buf) : NULL;
}

const struct argus_object *argus_graph__object(const struct argus_graph *g,
					       uint32_t id)
{
	return g && id && id < g->obj.n ? &OBJS(g)[id] : NULL;
}

/* The event after ev in the run of n events from first (a segment's or
 * a thread's), ARGUS_NONE at its end.  ev must be in the run (an event
 * before its first, or of no chain, also gives ARGUS_NONE). */
static uint32_t run_next(const struct argus_graph *g, uint32_t first,
			 uint32_t n, uint32_t ev)
{
	if (first >= g->ev.n || ev >= g->ev.n ||
	    gev_pos(g, ev) - gev_pos(g, first) + 1 >= n)
		return ARGUS_NONE;
	return gev_next(g, ev);
}

uint32_t argus_graph__seg_next_event(const struct argus_graph *g,
				     uint32_t seg, uint32_t ev)
{
	if (!g || seg >= g->seg.n)
		return ARGUS_NONE;
	return run_next(g, SEGS(g)[seg].first_event, SEGS(g)[seg].nevents, ev);
}

uint32_t argus_graph__thread_next_event(const struct argus_graph *g,
					uint32_t thr, uint32_t ev)
{
	if (!g || thr >= g->thr.n)
		return ARGUS_NONE;
	return run_next(g, THRS(g)[thr].first_event, THRS(g)[thr].nevents, ev);
}

/* Rebuild the adjacency after argus_graph__add_edge.  On ENOMEM the old
 * arrays are kept (gcsr_build frees them only after allocating new ones)
 * and the graph stays dirty: queries answer without the new edges rather
 * than not at all, and the next query retries. */
static void ensure_csr(const struct argus_graph *cg)
{
	struct argus_graph *g = (struct argus_graph *)cg;

	if (g->csr_dirty && gcsr_build(g, false))
		g->csr_dirty = true;
}

uint32_t argus_graph__out_edges(const struct argus_graph *g, uint32_t seg,
				const uint32_t **ids)
{
	if (!g || seg >= g->seg.n)
		return 0;
	ensure_csr(g);
	if (!g->out_off)
		return 0;
	*ids = g->out_ids + g->out_off[seg];
	return g->out_off[seg + 1] - g->out_off[seg];
}

uint32_t argus_graph__in_edges(const struct argus_graph *g, uint32_t seg,
			       const uint32_t **ids)
{
	if (!g || seg >= g->seg.n)
		return 0;
	ensure_csr(g);
	if (!g->in_off)
		return 0;
	*ids = g->in_ids + g->in_off[seg];
	return g->in_off[seg + 1] - g->in_off[seg];
}

static bool tid_eq(const void *ctx, uint32_t id, const void *key)
{
	return THRS((const struct argus_graph *)ctx)[id - 1].tid ==
	       *(const uint32_t *)key;
}

uint32_t argus_graph__thread_by_tid(const struct argus_graph *g, uint32_t tid)
{
	uint32_t id;

	if (!g)
		return ARGUS_NONE;
	id = argus_hidx_find(&g->tid_idx, (uint32_t)argus_mix64(tid), tid_eq,
			     g, &tid);
	return id ? id - 1 : ARGUS_NONE;
}

uint32_t argus_graph__thread_segments(const struct argus_graph *g,
				      uint32_t thread, const uint32_t **ids)
{
	if (!g || thread >= g->thr.n || !g->thr_segs)
		return 0;
	*ids = g->thr_segs + THRS(g)[thread].first_seg;
	return THRS(g)[thread].nseg;
}

uint32_t gseg_at(const struct argus_graph *g, uint32_t thr, uint64_t ts)
{
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v), lo, hi;

	if (!n || SEGS(g)[v[0]].start > ts)
		return ARGUS_NONE;
	/* last i with start <= ts */
	for (lo = 0, hi = n; hi - lo > 1;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (SEGS(g)[v[mid]].start <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return v[lo];
}

uint32_t argus_graph__segment_at(const struct argus_graph *g, uint32_t tid,
				 uint64_t ts)
{
	uint32_t t = argus_graph__thread_by_tid(g, tid);

	return t == ARGUS_NONE ? ARGUS_NONE : gseg_at(g, t, ts);
}

/* Position of seg in its thread's slice, or ARGUS_NONE. */
static uint32_t seg_pos(const struct argus_graph *g, uint32_t seg,
			const uint32_t **v, uint32_t *n)
{
	uint32_t lo, hi;

	if (!g || seg >= g->seg.n || !g->thr_segs)
		return ARGUS_NONE;
	*n = argus_graph__thread_segments(g, SEGS(g)[seg].thread, v);
	for (lo = 0, hi = *n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct argus_segment *m = &SEGS(g)[(*v)[mid]];

		if (m->start < SEGS(g)[seg].start ||
		    (m->start == SEGS(g)[seg].start && (*v)[mid] < seg))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* equal starts are ordered by id (graph_csr.c) */
	while (lo < *n && (*v)[lo] != seg)
		lo++;
	return lo < *n ? lo : ARGUS_NONE;
}

uint32_t argus_graph__seg_prev(const struct argus_graph *g, uint32_t seg)
{
	const uint32_t *v;
	uint32_t n, i = seg_pos(g, seg, &v, &n);

	return i == ARGUS_NONE || i == 0 ? ARGUS_NONE : v[i - 1];
}

uint32_t argus_graph__seg_next(const struct argus_graph *g, uint32_t seg)
{
	const uint32_t *v;
	uint32_t n, i = seg_pos(g, seg, &v, &n);

	return i == ARGUS_NONE || i + 1 >= n ? ARGUS_NONE : v[i + 1];
}

const struct argus_thread *argus_graph__seg_thread(const struct argus_graph *g,
						   uint32_t seg)
{
	return g && seg < g->seg.n ? &THRS(g)[SEGS(g)[seg].thread] : NULL;
}

uint32_t argus_graph__marks(const struct argus_graph *g, const uint32_t **ids)
{
	if (!g || !g->marks.n)
		return 0;
	*ids = GV(g->marks, uint32_t);
	return g->marks.n;
}

int64_t argus_graph__add_edge(struct argus_graph *g, enum argus_edge_type type,
			      uint32_t src_tid, uint64_t src_ts,
			      uint32_t dst_tid, uint64_t dst_ts, uint64_t obj)
{
	uint32_t src, dst;
	int64_t id;

	if (!g || type < ARGUS_EDGE_WAKEUP || type >= ARGUS_EDGE_TYPE_MAX ||
	    type == ARGUS_EDGE_INTRA)
		return -EINVAL;
	src = argus_graph__segment_at(g, src_tid, src_ts);
	dst = argus_graph__segment_at(g, dst_tid, dst_ts);
	if (src == ARGUS_NONE || dst == ARGUS_NONE)
		return -ENOENT;
	id = gedge_push(g, (uint8_t)type, src, dst, src_ts, dst_ts, obj);
	if (id >= 0) {
		g->st.edges++;
		g->st.edges_by_type[type]++;
	}
	return id;
}
