/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_view.h - the little libargus's own hot loops read of a graph
 * beyond its API (argus_graph.h), read-only.  The diagnosis (diag_*.c)
 * includes this and argus_graph.h, never graph_internal.h: the storage
 * is the graph's own files' (graph_*.c).  Not part of the API.
 *
 * What is here, and why the API does not do instead: hang finding
 * sweeps every thread of a 20 M-event trace (diag_hangs.c, machine-wide
 * `argus hangs`), and the diagnosis walks the events of whole threads
 * (work items, condvar signals, hot stacks) and of every candidate of a
 * similarity search; there a call per segment or per event (the API's
 * argus_graph__segment, __seg_next_event, __event) costs more than the
 * work done on it:
 *   - the segment array, the same records argus_graph__segment() gives;
 *   - each segment's wait shape (shape_t, below): a summary of its
 *     syscalls the builder keeps so that hang finding reads segments, not
 *     events; the API has no such field;
 *   - an inline walk over a run of events (a segment's, or a thread's from
 *     one of its events) that prefetches the chain's next block as it
 *     enters one: a thread's blocks are scattered among every other
 *     thread's, a cache miss the hardware prefetcher cannot guess.  It
 *     needs the event blocks' links (struct evblk), which the graph's own
 *     files use too.
 * Everything is const; the pointers stay valid until the graph is
 * changed or freed, as the API's.  Ids given to the inline functions
 * must be valid (they come from the API's own lists).
 */
#ifndef ARGUS_GRAPH_VIEW_H
#define ARGUS_GRAPH_VIEW_H

#include <stdint.h>

#include "argus_graph.h"
#include "syscall_class.h"

/*
 * A segment's wait shape: what hang finding (diag_hangs.c) needs to know
 * of a thread's syscalls, summed up per segment while the events are
 * built (hot in the cache), so that it reads segments instead of sweeping
 * 20 M events.  One shape_t per segment, indexed by segment id.  A
 * connection op is a read/recv (input, > 0 bytes), a write/send (output,
 * > 0 bytes) or a connect (output) on a pipe or a socket.
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

/*
 * Event storage.  A thread's events go to blocks of EVBLK slots of its
 * own, so a thread's (and a segment's) events are found without a link
 * per event, and the builder appends to a few hot blocks instead of
 * writing a link into the thread's previous event, wherever that is.
 * 16 slots (256 bytes): the link costs 0.75 byte per event, the unused
 * tail of a thread's last block at most 15 slots.
 *
 * A slot is a packed event, 16 bytes (struct gev): the graph's largest
 * array (20 M events: 305 MiB, where struct argus_gevent's 24 bytes took
 * 458), and fresh memory is what a build pays most for (docs/graph.md).
 * What the API and the walks below give is the unpacked struct
 * argus_gevent (gev_unpack()):
 *   w0   bits 0-47   ts - the graph's ts_base
 *        bits 48-59  nr (signed, 12 bits: syscall numbers, x86 vectors
 *                    and the waking's -(0x100 + v) fit; an irq number
 *                    past 2047, on a machine with many MSI-X queues, makes
 *                    the event wide)
 *        bits 60-61  ctx (enum ae_ctx; the build keeps its low 2 bits)
 *        bit 62      GEV_BIGVAL: val is bigval[val32]
 *        bit 63      GEV_WIDE: ts, val, ref and nr are wide[val32] (a
 *                    ts 78 h or more after ts_base or before it, a ref
 *                    past 24 bits or such an nr: in no real trace so
 *                    far; 40 bytes for the event, where it was 24)
 *   val32  val (int32_t range), or the index above
 *   w1   bits 0-23   obj / stack / str (the union of argus_gevent)
 *        bits 24-31  type (AE_NONE: an unused slot)
 * 18% of a generated trace's values need bigval (futex addresses, kernel
 * timer ids), 0.016% and 0.03% of real messaging and switch-load recordings'.
 */
struct gev {
	uint64_t w0;
	int32_t val32;
	uint32_t w1;
};

#define GEV_TS_BITS 48
#define GEV_TS_MASK ((1ull << GEV_TS_BITS) - 1)
#define GEV_NR_SHIFT 48
#define GEV_NR_MIN (-2048)
#define GEV_NR_MAX 2047
#define GEV_CTX_SHIFT 60
#define GEV_BIGVAL (1ull << 62)
#define GEV_WIDE (1ull << 63)
#define GEV_REF_MASK 0xffffffu
#define GEV_TYPE_SHIFT 24

/* A wide event's fields (GEV_WIDE). */
struct gev_wide {
	uint64_t ts;
	int64_t val;
	uint32_t ref;
	int16_t nr;
	uint16_t pad;
};

/* What unpacking needs beside the slots. */
struct gev_arrays {
	const struct gev *ev;           /* by event slot */
	const int64_t *bigval;
	const struct gev_wide *wide;
	uint64_t ts_base;
};

/* One field of slot p.  A hot loop that reads a few fields of each event
 * reads them from the slot (gview_walk_next_slot) rather than unpacking
 * all: a big value is a second, dependent load. */
static inline uint8_t gev_type(const struct gev *p)
{
	return (uint8_t)(p->w1 >> GEV_TYPE_SHIFT);
}

static inline uint8_t gev_ctx(const struct gev *p)
{
	return (uint8_t)((p->w0 >> GEV_CTX_SHIFT) & 3);
}

static inline int16_t gev_nr(const struct gev_arrays *st, const struct gev *p)
{
	if (__builtin_expect(p->w0 & GEV_WIDE, 0))
		return st->wide[(uint32_t)p->val32].nr;
	return (int16_t)((int64_t)(p->w0 << (64 - GEV_NR_SHIFT - 12)) >> (64 - 12));
}

static inline uint64_t gev_ts(const struct gev_arrays *st, const struct gev *p)
{
	if (__builtin_expect(p->w0 & GEV_WIDE, 0))
		return st->wide[(uint32_t)p->val32].ts;
	return st->ts_base + (p->w0 & GEV_TS_MASK);
}

static inline int64_t gev_val(const struct gev_arrays *st, const struct gev *p)
{
	if (__builtin_expect(!(p->w0 & (GEV_BIGVAL | GEV_WIDE)), 1))
		return p->val32;
	if (!(p->w0 & GEV_WIDE))
		return st->bigval[(uint32_t)p->val32];
	return st->wide[(uint32_t)p->val32].val;
}

static inline uint32_t gev_ref(const struct gev_arrays *st, const struct gev *p)
{
	if (__builtin_expect(p->w0 & GEV_WIDE, 0))
		return st->wide[(uint32_t)p->val32].ref;
	return p->w1 & GEV_REF_MASK;
}

/* Slot p as the API's event. */
static inline void gev_unpack(const struct gev_arrays *st, const struct gev *p,
			      struct argus_gevent *out)
{
	out->ts = gev_ts(st, p);
	out->val = gev_val(st, p);
	out->obj = gev_ref(st, p);
	out->nr = gev_nr(st, p);
	out->type = gev_type(p);
	out->ctx = gev_ctx(p);
}
#define EVBLK_SHIFT 4
#define EVBLK (1u << EVBLK_SHIFT)

struct evblk {
	uint32_t next;          /* event id of the chain's next block's slot
	                           0 (not a block index), ARGUS_NONE */
	uint32_t pos;           /* chain position of the block's slot 0 */
	uint32_t thr;           /* thread index of the chain, ARGUS_NONE for
	                           events of no thread: lets a pass sweep the
	                           event array in storage order (diag_hangs.c) */
};

static inline uint32_t evblk_pos(const struct evblk *blk, uint32_t ev)
{
	return blk[ev >> EVBLK_SHIFT].pos + (ev & (EVBLK - 1));
}

static inline uint32_t evblk_next(const struct evblk *blk, uint32_t ev)
{
	return (ev + 1) & (EVBLK - 1) ? ev + 1 : blk[ev >> EVBLK_SHIFT].next;
}

/* The read-only arrays, as the hot loops index them. */
struct gview {
	const struct argus_segment *seg; /* by segment id (argus_graph__segment) */
	const shape_t *shape;           /* by segment id (wait shapes, above) */
	struct gev_arrays evs;           /* the event slots (argus_graph__event) */
	const struct evblk *blk;        /* by event slot >> EVBLK_SHIFT */
};

/* The view of g; valid until g is changed or freed. */
void gview_get(const struct argus_graph *g, struct gview *v);

/* A walk over a run of events, in their chain's (time) order:
 *
 *	struct gview_walk it;
 *	const struct argus_gevent *ev;
 *
 *	for (gview_walk_seg(&v, seg, &it); (ev = gview_walk_next(&v, &it));)
 *		...
 */
struct gview_walk {
	uint32_t ev;            /* the next event to visit, ARGUS_NONE: done */
	uint32_t left;          /* events still to visit after it */
	struct argus_gevent cur; /* the one gview_walk_next() gave */
};

/* The chain's next block after ev's, prefetched (256 bytes). */
static inline void gview_prefetch_next_block(const struct gview *v, uint32_t ev)
{
	uint32_t nb = v->blk[ev >> EVBLK_SHIFT].next;

	if (nb != ARGUS_NONE) {
		const char *p = (const char *)&v->evs.ev[nb];

		for (unsigned i = 0; i < EVBLK * sizeof(struct gev); i += 64)
			__builtin_prefetch(p + i);
	}
}

/* The run of n events of a chain from event first. */
static inline void gview_walk_run(const struct gview *v, uint32_t first, uint32_t n,
				  struct gview_walk *w)
{
	w->ev = n ? first : ARGUS_NONE;
	w->left = n ? n - 1 : 0;
	if (w->ev != ARGUS_NONE)
		gview_prefetch_next_block(v, w->ev);
}

/* Segment seg's events. */
static inline void gview_walk_seg(const struct gview *v, uint32_t seg, struct gview_walk *w)
{
	gview_walk_run(v, v->seg[seg].first_event, v->seg[seg].nevents, w);
}

/* Thread t's events from ev, which must be one of them, to its last (none
 * when ev is ARGUS_NONE). */
static inline void gview_walk_thread(const struct gview *v, const struct argus_thread *t,
				     uint32_t ev, struct gview_walk *w)
{
	if (ev == ARGUS_NONE || t->first_event == ARGUS_NONE)
		gview_walk_run(v, ARGUS_NONE, 0, w);
	else    /* the events before ev in the chain are skipped */
		gview_walk_run(v, ev, t->nevents - (evblk_pos(v->blk, ev) -
						    evblk_pos(v->blk, t->first_event)), w);
}

/* The walk's next slot, NULL at its end (its fields: gev_type() ...). */
static inline const struct gev *gview_walk_next_slot(const struct gview *v,
						     struct gview_walk *w)
{
	uint32_t ev = w->ev;

	if (ev == ARGUS_NONE)
		return NULL;
	if (!w->left) {
		w->ev = ARGUS_NONE;
	} else {
		w->left--;
		w->ev = evblk_next(v->blk, ev);
		if (!(w->ev & (EVBLK - 1)))
			gview_prefetch_next_block(v, w->ev);
	}
	return &v->evs.ev[ev];
}

/* The walk's next event, NULL at its end.  It is the walk's own copy
 * (w->cur): valid until the next call. */
static inline const struct argus_gevent *gview_walk_next(const struct gview *v,
							 struct gview_walk *w)
{
	const struct gev *p = gview_walk_next_slot(v, w);

	if (!p)
		return NULL;
	gev_unpack(&v->evs, p, &w->cur);
	return &w->cur;
}

/* The user stack event ev carries (a trace stack id), 0 none: a sample's,
 * or a yield's (the switch out of sched_yield(), graph_build.c: a thread
 * that spins on yields while other programs run is never sampled). */
static inline uint32_t gview_event_stack(const struct argus_gevent *ev)
{
	if (ev->type == AE_SAMPLE)
		return ev->stack;
	if (ev->type == AE_SWITCH && argus_sys_is(ev->nr, ARGUS_SC_YIELD))
		return ev->stack;
	return 0;
}

#endif /* ARGUS_GRAPH_VIEW_H */
