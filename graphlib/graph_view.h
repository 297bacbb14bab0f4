/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_view.h - the little libargus's own hot loops read of a graph
 * beyond its API (argus_graph.h), read-only.  The diagnosis (diag_*.c)
 * includes this and argus_graph.h, never graph_internal.h: the storage
 * is the graph's own files' (graph_*.c).  Not part of the API.
 *
 * What is here, and why the API does not do instead: hang finding
 * sweeps every thread of a 20 M-event trace (diag_hangs.c, machine-wide
 * `argus hangs`), where one call per element would not do:
 *   - each segment's wait shape (shape_t, below): a summary of its
 *     syscalls the builder keeps so that hang finding reads segments, not
 *     events; the API has no such field;
 *   - a walk over a run of events (a segment's, or a thread's from one of
 *     its events) that prefetches the chain's next block as it enters one:
 *     a thread's blocks are scattered among every other thread's, a cache
 *     miss the hardware prefetcher cannot guess.
 * Nothing here writes; pointers stay valid until the graph is changed
 * or freed, as the API's.
 */
#ifndef ARGUS_GRAPH_VIEW_H
#define ARGUS_GRAPH_VIEW_H

#include <stdint.h>

#include "argus_graph.h"

/*
 * A segment's wait shape: what hang finding (diag_hangs.c) needs to know
 * of a thread's syscalls, summed up per segment while the events are
 * built (hot in the cache), so that it reads segments instead of sweeping
 * 20 M events.  One shape_t per segment, indexed by segment id.  A connection
 * op is a read/recv (input, > 0 bytes), a write/send (output, > 0 bytes)
 * or a connect (output) on a pipe or a socket.
 *
 * Invariant: a segment cut by the batching split (graph_split.c) keeps
 * the byte of the whole segment on its first part (the original id, the
 * earliest), and its later parts get 0.  No wait falls between the parts
 * and every use reads a thread's segments in time order, accumulating
 * between waits, so the sum over the parts is all that counts.
 */
#define SHAPE_POLL        0x01  /* a poll/ppoll entry */
#define SHAPE_POLL_MANY   0x02  /* the last such entry watched >= 2 fds */
#define SHAPE_OUT         0x04  /* an output on a connection */
#define SHAPE_CONN        0x08  /* a connection op (input or output) */
#define SHAPE_CONN1_REPLY 0x10  /* the first one was an input on the
                                   connection the thread last wrote to (any
                                   pipe after a write to a pipe), and the
                                   thread had written before: a reply */
#define SHAPE_EXIT1_SHIFT 5     /* its first syscall exit: */
#define SHAPE_EXIT1_MASK  0x60
#define SHAPE_EXIT1_NONE     0  /*   none */
#define SHAPE_EXIT1_PLAIN    1  /*   a return */
#define SHAPE_EXIT1_RESTART  2  /*   -ERESTART*: the call goes on */
#define SHAPE_EXIT1_TIMEDOUT 3  /*   futex -ETIMEDOUT */
#define SHAPE_EXIT1(b) (((b) & SHAPE_EXIT1_MASK) >> SHAPE_EXIT1_SHIFT)
#define SHAPE_TRY_SHIFT 7       /* its syscalls' tries (syscalls/hang_rule.h): */
#define SHAPE_TRY_WORKED  0x080 /*   one worked */
#define SHAPE_TRY_FAILED  0x100 /*   one failed (refused, timed out, nothing came) */
#define SHAPE_TRIES(b) (((b) >> SHAPE_TRY_SHIFT) & 3u)
typedef uint16_t shape_t;

/* The wait shapes, indexed by segment id (argus_graph__nsegments of them;
 * the builder fills them, graph_segments.c). */
const shape_t *gview_shapes(const struct argus_graph *g);

/* A walk over a run of events, in their chain's (time) order:
 *
 *	struct gview_walk it;
 *	const struct argus_gevent *ev;
 *
 *	for (gview_walk_seg(g, seg, &it); (ev = gview_walk_next(g, &it));)
 *		...
 */
struct gview_walk {
	uint32_t ev;            /* the next event to visit, ARGUS_NONE: done */
	uint32_t left;          /* events still to visit after it */
};

/* Segment seg's events (none for a bad id). */
void gview_walk_seg(const struct argus_graph *g, uint32_t seg, struct gview_walk *w);
/* Thread index thr's events from ev, which must be one of them, to its
 * last (none when ev is ARGUS_NONE). */
void gview_walk_thread(const struct argus_graph *g, uint32_t thr, uint32_t ev,
		       struct gview_walk *w);
/* The walk's next event, NULL at its end. */
const struct argus_gevent *gview_walk_next(const struct argus_graph *g, struct gview_walk *w);

#endif /* ARGUS_GRAPH_VIEW_H */
