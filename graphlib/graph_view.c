/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_view.c - the read-only view of graph_view.h: the wait shapes and
 * the prefetching event walk, over the storage of graph_internal.h.
 */
#include "graph_internal.h"

const shape_t *gview_shapes(const struct argus_graph *g)
{
	return SHAPES(g);
}

/* A thread's blocks are 384 bytes scattered among every other thread's,
 * so each block is a cache miss the hardware prefetcher cannot guess: on
 * entering a block, prefetch the chain's next one, whose id is known. */
static void prefetch_next_block(const struct argus_graph *g, uint32_t ev)
{
	uint32_t nb = BLKS(g)[ev >> EVBLK_SHIFT].next;

	if (nb != ARGUS_NONE) {
		const char *p = (const char *)&EVS(g)[nb];

		for (unsigned i = 0; i < EVBLK * sizeof(struct argus_gevent); i += 64)
			__builtin_prefetch(p + i);
	}
}

/* The run of n events of a chain from event first. */
static void walk_run(const struct argus_graph *g, uint32_t first, uint32_t n,
		     struct gview_walk *w)
{
	w->ev = n && first < g->ev.n ? first : ARGUS_NONE;
	w->left = w->ev != ARGUS_NONE ? n - 1 : 0;
	if (w->ev != ARGUS_NONE)
		prefetch_next_block(g, w->ev);
}

void gview_walk_seg(const struct argus_graph *g, uint32_t seg, struct gview_walk *w)
{
	if (seg >= g->seg.n)
		walk_run(g, ARGUS_NONE, 0, w);
	else
		walk_run(g, SEGS(g)[seg].first_event, SEGS(g)[seg].nevents, w);
}

void gview_walk_thread(const struct argus_graph *g, uint32_t thr, uint32_t ev,
		       struct gview_walk *w)
{
	const struct argus_thread *t = thr < g->thr.n ? &THRS(g)[thr] : NULL;

	if (!t || ev == ARGUS_NONE || t->first_event == ARGUS_NONE)
		walk_run(g, ARGUS_NONE, 0, w);
	else    /* ev's place in the chain: the events before it are skipped */
		walk_run(g, ev, t->nevents - (gev_pos(g, ev) - gev_pos(g, t->first_event)), w);
}

const struct argus_gevent *gview_walk_next(const struct argus_graph *g, struct gview_walk *w)
{
	uint32_t ev = w->ev;

	if (ev == ARGUS_NONE)
		return NULL;
	if (!w->left) {
		w->ev = ARGUS_NONE;
	} else {
		w->left--;
		w->ev = gev_next(g, ev);
		if (!(w->ev & (EVBLK - 1)))
			prefetch_next_block(g, w->ev);
	}
	return &EVS(g)[ev];
}
