/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_internal.h - the graph's storage and the builder's per-thread
 * state, shared by graphlib's graph_*.c files.  Not part of the API.
 *
 * Who includes it: the graph's own files (graph_*.c) only.  Everything
 * else -- the diagnosis (diag_*.c), the front ends, the tests -- reads a
 * graph through argus_graph.h; the diagnosis's hot loops also through
 * graph_view.h (the segment array, wait shapes, event blocks and a
 * prefetching walk over them, read-only), which this header includes:
 * the layout it reads is defined there once.
 *
 * Data layout (all arrays, ids are uint32_t indexes):
 *
 *   g->seg    struct argus_segment   vertices, in creation order
 *   g->edge   struct argus_edge      stored edges, in creation order (the
 *                                    INTRA edges are not stored: below)
 *   g->ev     struct gev             events, packed (graph_view.h), in
 *                                    blocks of EVBLK slots: each block
 *                                    holds events of one thread only, in
 *                                    time order; g->bigval and g->wide
 *                                    hold what a slot has no room for
 *   g->blk    struct evblk           one per block: the thread's next
 *                                    block, and the block's first slot's
 *                                    position in the thread's chain
 *   g->thr    struct argus_thread    one per thread (a reused tid gets a
 *                                    new entry; tid_idx finds the latest)
 *   g->obj    struct argus_object    interned objects, id 0 = none
 *   CSR       out_off/out_ids, in_off/in_ids (nseg + 1 offsets each),
 *             thr_segs (each thread's segment ids, sorted by start)
 *   INTRA     intra_first (by thread: its first INTRA edge's ordinal)
 *
 * Edge ids.  The weak INTRA edges, one per pair of consecutive segments
 * of a thread (over half of all edges), are not stored: everything in
 * one follows from thr_segs and the two segments (gedge_get).  They are
 * numbered as when they were appended after the build's edges: ids
 * [intra_base, intra_base + nintra); an edge stored before them keeps its
 * slot as id, one pushed after them (data flags, mutexes, work items,
 * argus_graph__add_edge) is stored at slot id - nintra.
 *
 * The builder (struct gbuild) lives only during argus_graph__build().  Its
 * struct tstate array is parallel to g->thr.
 *
 * Invariants:
 *   - a thread has at most one open segment (tstate.cur);
 *   - segments of one thread never overlap in time, so the events of a
 *     segment are a contiguous run of the thread's event chain: the run
 *     of seg->nevents events from seg->first_event (an event's position
 *     in the chain, gev_pos(), tells whether it is in the run);
 *   - unused slots (the tail of each chain's last block) are zeroed:
 *     type AE_NONE;
 *   - CSR arrays are valid only while !g->csr_dirty (argus_graph__add_edge
 *     sets it; queries rebuild lazily).
 */
#ifndef ARGUS_GRAPH_INTERNAL_H
#define ARGUS_GRAPH_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "argus_events.h"
#include "argus_graph.h"
#include "graph_view.h"
#include "gvec.h"
#include "hidx.h"

/*
 * malloc for big arrays that are written in full right away: their pages
 * are faulted in with one madvise(MADV_POPULATE_WRITE) instead of one
 * page fault per 4 KiB as they are written (the faults were a fifth of
 * the graph build).  Best effort: on a kernel without it (< 5.14) the
 * pages fault in as before.  Past GVEC_MAP_MIN they are advised for huge
 * pages first (the first touch of each 4 KiB page is what costs on a VM,
 * gvec.h): these arrays are never realloc'd, so, unlike gvec's realloc'd
 * ones, their huge pages are never split by a move.  The 2 MiB-aligned
 * part gets them; the ends stay 4 KiB.
 */
static inline void *gbig_malloc(size_t bytes)
{
	void *p = malloc(bytes);
	const uintptr_t pg = 4096;
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t e = ((uintptr_t)p + bytes) & ~(pg - 1);

	if (p && bytes >= (1u << 20) && e > a) {
		if (bytes >= GVEC_MAP_MIN)
			madvise((void *)a, e - a, MADV_HUGEPAGE);
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
	}
	return p;
}

struct gbuild;

struct argus_graph {
	struct argus_trace *trace;
	struct argus_graph_stats st;
	struct gvec seg, edge, ev, thr, obj;
	struct gvec bigval;             /* int64_t: GEV_BIGVAL events' values */
	struct gvec wide;               /* struct gev_wide (GEV_WIDE) */
	uint64_t ts_base;               /* a slot's ts is relative to it */
	struct gvec blk;                /* struct evblk, one per EVBLK events */
	struct gvec marks;              /* uint32_t event ids of AE_MARKs */
	struct gvec flag_readers;       /* struct gflag_reader: the AE_HWWATCH
	                                   writes that name their reader, in
	                                   trace order (graph_flag.c) */
	struct argus_hidx obj_idx;      /* (kind, obj, peer) -> obj id */
	struct argus_hidx tid_idx;      /* tid -> thread index + 1 */
	uint32_t *out_off, *out_ids;    /* CSR by source segment */
	uint32_t *in_off, *in_ids;      /* CSR by destination segment */
	uint32_t *thr_segs;             /* per-thread slices, time-ordered */
	uint32_t intra_base, nintra;    /* the INTRA edges' ids (see the top) */
	uint32_t *intra_first;          /* nthr + 1: thread t's INTRA edges
	                                   are ordinals [intra_first[t],
	                                   intra_first[t + 1]) */
	struct gvec shape;              /* shape_t SHAPE_* per segment (graph_view.h) */
	bool csr_dirty;
	struct gbuild *b;               /* only while building */
};

#define SEGS(g) GV((g)->seg, struct argus_segment)
#define SHAPES(g) GV((g)->shape, shape_t)
#define EDGES(g) GV((g)->edge, struct argus_edge)
#define EVS(g) GV((g)->ev, struct gev)
#define THRS(g) GV((g)->thr, struct argus_thread)
#define OBJS(g) GV((g)->obj, struct argus_object)
#define BLKS(g) GV((g)->blk, struct evblk)

/* Edges, INTRA included (see the top). */
static inline uint32_t gedge_count(const struct argus_graph *g)
{
	return g->edge.n + g->nintra;
}

/* The slot of edge id in g->edge, ARGUS_NONE for an INTRA edge. */
static inline uint32_t gedge_slot(const struct argus_graph *g, uint32_t id)
{
	if (id < g->intra_base)
		return id;
	return id - g->intra_base < g->nintra ? ARGUS_NONE : id - g->nintra;
}

/* Edge id (< gedge_count(g)): the stored one, or INTRA written to *buf
 * and buf (graph_csr.c). */
const struct argus_edge *gedge_get(const struct argus_graph *g, uint32_t id,
				   struct argus_edge *buf);

/* Position of event ev in its chain (thread or segment: subtract the
 * first event's) and the chain's next slot after ev (graph_view.h). */
static inline uint32_t gev_pos(const struct argus_graph *g, uint32_t ev)
{
	return evblk_pos(BLKS(g), ev);
}

static inline uint32_t gev_next(const struct argus_graph *g, uint32_t ev)
{
	return evblk_next(BLKS(g), ev);
}

/* What a thread is to the wake-up filters. */
enum thread_class {
	TC_USER = 0,
	TC_KERNEL,      /* housekeeping kernel thread (P2) */
	TC_IRQ,         /* threaded irq handler: its wake-ups are interrupts */
	TC_TOOL,        /* a debugger's or Argus's own thread (lldb,
	                   lldb-server, gdb, strace, argusd, ...): its wake-ups
	                   are the tool's, not the program's */
};

/* Builder state of one thread, parallel to g->thr. */
struct tstate {
	uint32_t cur;           /* open segment, ARGUS_NONE */
	uint32_t last_seg;      /* most recent segment, ARGUS_NONE */
	uint32_t last_ev;       /* its last event stored, ARGUS_NONE */
	uint32_t nev;           /* its events (argus_thread.nevents at the end:
	                           the thread table stays out of the per-event
	                           path) */
	/* Edges into the open segment, for merging a message into them. */
	uint32_t wake_edge;     /* the in-edge created at its switch-in */
	uint32_t msg_edge;      /* last MESSAGE in-edge (merging repeats) */
	uint64_t run_since;     /* switch-in ts while on a CPU, else 0 */
	uint64_t wait_since;    /* switch-out ts while waiting */
	int32_t sys_nr;         /* syscall in progress (sys_enter seen), -1 */
	uint64_t sys_arg0;
	uint8_t waiting;        /* switched out sleeping, not back yet */
	uint8_t exited;         /* sched_process_exit seen */
	uint8_t cls;            /* enum thread_class */
	uint8_t forked;         /* created by a fork seen in the trace */
	uint8_t last_traced;    /* last_seg ended in a ptrace stop
	                           (ARGUS_SEG_F_TRACED): kept here so that a
	                           wake-up's check does not read the segment */
	/* The wake-up to apply at the next switch-in. */
	uint8_t pend;           /* 0 none; 1 edge; else ARGUS_WOKEN_* + 16 */
	uint8_t pend_type;      /* enum argus_edge_type when pend == 1 */
	uint8_t pend_filt;      /* enum argus_filter_reason when filtered */
	uint8_t pend_early;     /* waking seen before the switch-out (race) */
	uint32_t pend_src;      /* source segment */
	uint64_t pend_ts, pend_obj; /* pend_ts: when the source acted */
	uint64_t pend_wake_ts;  /* when the waking itself was traced */
	/* The last timer it armed, for a wake-up no record shows
	 * (gwake_infer_timer() in graph_edges.c). */
	uint64_t tmr, tmr_ts, tmr_expires;
	uint32_t tmr_seg;       /* arming segment, ARGUS_NONE */
	const char *comm, *process; /* names for the schema, NULL unknown */
	/* The last output on a connection, for SHAPE_CONN1_REPLY. */
	uint64_t out_key;       /* its object's identity */
	uint32_t out_kind;      /* AE_OBJ_*, 0 none yet */
	uint32_t big_next, big_end; /* its run of g->bigval (gev_pack_rare) */
};

/* Per-segment scratch used while building (parallel to g->seg): the
 * first other process an out-edge reached, 0 none, SEGX_MULTI when they
 * reach two or more (4 bytes, not 16: it is fresh memory too). */
struct segx {
	uint32_t dst_pid;
};

#define SEGX_MULTI UINT32_MAX
#define SEGX_IS_MULTI(g, i) (SEGX(g, i)->dst_pid == SEGX_MULTI)

#define TCACHE_SIZE 4096

struct gbuild {
	const struct argus_graph_opts *opts;
	const struct argus_schema *schema;
	struct gvec ts;         /* struct tstate, parallel to g->thr */
	struct gvec sx;         /* struct segx, parallel to g->seg */
	struct gvec timers;     /* struct timer_ent */
	struct argus_hidx timer_idx;
	struct gvec streams;    /* struct mstream */
	struct argus_hidx stream_idx;
	struct gvec items;      /* struct mitem, linked per stream */
	uint32_t free_item;     /* free list head, ARGUS_NONE */
	uint32_t dead_edges;    /* edges gdebug_interrupted killed (type 0) */
	uint64_t total_events;  /* from the chunk headers, for progress */
	uint32_t idle_last;     /* last event of no thread, ARGUS_NONE */
	uint32_t idle_big_next, idle_big_end; /* their run of g->bigval */
	uint32_t last_evid;     /* id of the event stored last */
	/* Events of the kinds the passes after the events' pass look for
	 * (graph_flag.c, graph_mutex.c, graph_work.c), counted as they are
	 * stored: each pass walks every thread's events, and most traces
	 * have none of these records, so a pass with none to find is
	 * skipped. */
	uint32_t nflag_writes;  /* AE_HWWATCH */
	uint32_t nmutex_wakes;  /* AE_MUTEX_WAKE */
	uint32_t nwork_items;   /* AE_WORK_ENQUEUE and AE_WORK_BEGIN */
	/* Direct-mapped cache in front of tid_idx: every event looks up its
	 * thread, most of them one of a few hot ones.  tcache_tid[i] == 0
	 * means empty (tid 0, the idle task, never gets a thread entry). */
	uint32_t tcache_tid[TCACHE_SIZE];
	uint32_t tcache_thr[TCACHE_SIZE];
};

#define TSTATE(g, i) (&GV((g)->b->ts, struct tstate)[i])

#define SEGX(g, i) (&GV((g)->b->sx, struct segx)[i])

/* graph_query.c: thread index thr's segment at ts (the last one starting
 * at or before ts), ARGUS_NONE before its first. */
uint32_t gseg_at(const struct argus_graph *g, uint32_t thr, uint64_t ts);

/* graph_segments.c: threads and segments. */
uint32_t gthread_lookup(struct argus_graph *g, uint32_t tid, uint32_t pid);
uint32_t gthread_new(struct argus_graph *g, uint32_t tid, uint32_t pid);
uint32_t gseg_open(struct argus_graph *g, uint32_t thr, uint64_t ts,
		   uint8_t reason);
void gseg_shape_sys(struct argus_graph *g, uint32_t thr, const struct argus_gevent *ge,
		    uint32_t obj_kind, uint64_t obj_key);
void gseg_close(struct argus_graph *g, uint32_t thr, uint64_t ts,
		uint8_t reason);
uint32_t gev_new_block(struct argus_graph *g, uint32_t last, uint32_t thr);
void gthread_names(struct argus_graph *g, uint32_t thr);

/* The thread entry of tid (created on first sight).  ARGUS_NONE on
 * ENOMEM.  Inline for the cache hit: most events' threads are in it. */
static inline uint32_t gthread_get(struct argus_graph *g, uint32_t tid,
				   uint32_t pid)
{
	uint32_t slot = tid & (TCACHE_SIZE - 1);

	if (tid && g->b->tcache_tid[slot] == tid)
		return g->b->tcache_thr[slot];
	return gthread_lookup(g, tid, pid);
}

/* graph_segments.c: slot p for an event whose ts, val or ref does not fit
 * (graph_view.h); false on ENOMEM. */
bool gev_pack_rare(struct argus_graph *g, uint32_t thr, const struct argus_gevent *ge,
		   struct gev *p);

/* Store *ge after the chain (of thread index thr, or ARGUS_NONE) whose
 * last event is *last (ARGUS_NONE: a new chain), in the same block while
 * it has room, else in a new one linked to it (gev_new_block), packed
 * (graph_view.h).  Returns the event id, ARGUS_NONE on ENOMEM.  Inline:
 * every event of the trace comes through here. */
static inline uint32_t gev_store(struct argus_graph *g, uint32_t *last, uint32_t thr,
				 const struct argus_gevent *ge)
{
	uint32_t id = *last + 1;        /* ARGUS_NONE + 1 == 0: a new block */
	uint64_t rel = ge->ts - g->ts_base;
	struct gev *p;

	if (__builtin_expect(!(id & (EVBLK - 1)), 0) &&
	    (id = gev_new_block(g, *last, thr)) == ARGUS_NONE)
		return ARGUS_NONE;
	p = &EVS(g)[id];
	p->w0 = ((uint64_t)(ge->nr & 0xfff) << GEV_NR_SHIFT) |
		((uint64_t)(ge->ctx & 3) << GEV_CTX_SHIFT);
	p->w1 = (uint32_t)ge->type << GEV_TYPE_SHIFT;
	if (__builtin_expect(ge->ts >= g->ts_base && rel <= GEV_TS_MASK &&
			     ge->obj <= GEV_REF_MASK && ge->val == (int32_t)ge->val &&
			     ge->nr >= GEV_NR_MIN && ge->nr <= GEV_NR_MAX, 1)) {
		p->w0 |= rel;
		p->val32 = (int32_t)ge->val;
		p->w1 |= ge->obj;
	} else if (!gev_pack_rare(g, thr, ge, p)) {
		return ARGUS_NONE;
	}
	*last = id;
	g->b->last_evid = id;
	return id;
}

/* The unpacking's view of g's event storage (graph_view.h). */
static inline void gev_arrays_of(const struct argus_graph *g, struct gev_arrays *st)
{
	st->ev = EVS(g);
	st->bigval = GV(g->bigval, int64_t);
	st->wide = GV(g->wide, struct gev_wide);
	st->ts_base = g->ts_base;
}

/* Event slot id, unpacked into *buf; returns buf. */
static inline const struct argus_gevent *gev_at(const struct argus_graph *g, uint32_t id,
						struct argus_gevent *buf)
{
	struct gev_arrays st;

	gev_arrays_of(g, &st);
	gev_unpack(&st, &EVS(g)[id], buf);
	return buf;
}

/* graph_edges.c: edges from wake-ups, messages, timers and the schema. */
int64_t gedge_push(struct argus_graph *g, uint8_t type, uint32_t src,
		   uint32_t dst, uint64_t src_ts, uint64_t dst_ts,
		   uint64_t obj);
void gwake_classify(struct argus_graph *g, const struct argus_event *ev);
int gwake_apply(struct argus_graph *g, uint32_t thr, uint32_t seg,
		uint64_t ts);
int gtimer_start(struct argus_graph *g, const struct argus_event *ev,
		 uint32_t seg);
void gtimer_cancel(struct argus_graph *g, const struct argus_event *ev);
int gmsg_sys_exit(struct argus_graph *g, const struct argus_event *ev,
		  uint32_t seg);
int gschema_edges(struct argus_graph *g, const struct argus_event *ev,
		  uint32_t thr, uint32_t seg, const char *mark);
uint32_t gobj_intern(struct argus_graph *g, uint32_t kind, uint64_t obj,
		     uint64_t peer);
void gedges_build_free(struct argus_graph *g);
/* graph_debugger.c: a debugger's stops (see there). */
/* Thread thr's open segment is about to end in a ptrace stop: if it never
 * returned from a syscall (its first exit is -ERESTART*, or none), the
 * wake-up that began it was the attach's interrupt: its edge is killed
 * (type 0, until gedges_drop_dead) and the segment is marked woken by the
 * debugger. */
void gdebug_interrupted(struct argus_graph *g, uint32_t thr);
/* Removes the edges gdebug_interrupted killed, keeping the others' order;
 * before the batching split and the CSR: nothing holds an edge id past
 * the events' pass. */
void gedges_drop_dead(struct argus_graph *g);
/* The queries on waits a debugger's stops interrupted are the API's:
 * argus_graph__seg_interrupted, __wait_may_continue, __wait_through,
 * __wait_began (argus_graph.h). */

/* graph_split.c: the batching split (P3/P6). */
int gsplit_batching(struct argus_graph *g);

/* graph_csr.c: the per-thread index and the adjacency; with number_intra
 * (once, at the end of the build) the INTRA edges are numbered after the
 * edges stored so far (see the top). */
int gcsr_build(struct argus_graph *g, bool number_intra);

/* graph_flag.c: DATAFLAG edges from the AE_HWWATCH writes (after the
 * first gcsr_build).  Returns the edges added (>= 0) or -errno. */
int gflag_edges(struct argus_graph *g);
/* graph_mutex.c: HOLDER edges from the interposer's mutex records, once
 * the per-thread segment index exists.  Returns the edges added or
 * -ENOMEM; the caller rebuilds the adjacency when > 0. */
int gmutex_edges(struct argus_graph *g);
/* graph_work.c: the interposer's work items.  Cuts at a work_begin
 * (before storing it) and after a work_end or boundary; WORKITEM edges
 * enqueue -> begin once the per-thread segment index exists (returns the
 * edges added or -ENOMEM, as gmutex_edges). */
int gwork_cut_before(struct argus_graph *g, const struct argus_event *ev);
int gwork_cut_after(struct argus_graph *g, uint32_t thr, uint64_t ts);
int gwork_edges(struct argus_graph *g);
/* graph_work.c: a uprobe's live_hit as the work record its kind names
 * (in w); -EINVAL when its kind is none of them. */
int gwork_from_live(const struct argus_event *ev, struct argus_event *w);
/* A watched write (event id ev) whose record names its reader (`argus
 * watch --reader`: ARGUS_F_HW_READER).  The compact event has no room for
 * the tid, so it is kept aside; called by the build as it stores the
 * write.  0 or -ENOMEM. */
struct gflag_reader {
	uint32_t ev;            /* the AE_HWWATCH event id */
	uint32_t tid;           /* the reader's tid (same process) */
};
int gflag_note_reader(struct argus_graph *g, uint32_t ev, uint32_t tid);
/* A syscall a spin loop makes while it waits for a flag: sched_yield and
 * the sleeps (nanosleep, clock_nanosleep, pause-like select/poll with no
 * fds are not counted). */
bool gflag_spin_nr(long nr);

/* graph_locks.c: what the sys_enter event of flock/fcntl keeps in its val,
 * the packed lock request (argus_lock__pack), 0 when it is none. */
uint64_t glock_enter_val(int64_t nr, const uint64_t *args);

#endif /* ARGUS_GRAPH_INTERNAL_H */
