/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_edges.c - where the strong edges come from.
 *
 *   wake-ups    sched_waking in task context: waker's segment -> the
 *               target's next segment.  Typed by what the waker was doing
 *               (futex -> FUTEX, kill -> SIGNAL, exiting -> EXIT).  Wakes
 *               from irq context, idle, kernel threads, or of kernel
 *               threads are attributions, not edges (P1, P2).
 *   timers      hrtimer_start in task context remembers timer -> segment;
 *               a wake-up inside that timer's expiry (vector HRTIMER)
 *               becomes a TIMER edge from the arming segment.
 *   messages    a send's bytes are queued on the object's stream; a
 *               receive on the matching end consumes them, FIFO, linking
 *               every send it drew bytes from (P7: whichever thread
 *               receives).  Key: pipes/eventfd by inode or file; sockets
 *               by (own, peer) on send and (peer, own) on receive.
 *   schema      a user rule's source event queues its attribute value; the
 *               destination event with the same value links to it.
 *
 * A wake-up and a message between the same two segments are one edge: the
 * message upgrades the wake-up edge (flag ARGUS_EDGE_F_WOKE stays), and
 * repeated receives from one sending segment add their bytes to one edge.
 */
#include "graph_internal.h"
#include "schema.h"
#include "syscall_class.h"

#define STREAM_MAX_ITEMS 4096   /* unread sends kept per stream */

struct timer_ent {
	uint64_t timer;         /* kernel hrtimer address */
	uint64_t ts;            /* when it was armed */
	uint32_t seg;           /* arming segment, ARGUS_NONE if cancelled */
	uint32_t pad;
};

struct mstream {
	uint64_t a, b;          /* (object, peer) as seen by the sender */
	uint32_t kind;          /* ae_obj_kind, or 0x1000 + schema rule */
	uint32_t head, tail;    /* item list, ARGUS_NONE when empty */
	uint32_t nitems;
	uint32_t debt, ndebts;  /* receives still owed a send (pay_debts()) */
	uint32_t debt_tail;     /* the debt list's last item, ARGUS_NONE */
};

/* A send not read yet, or (on a stream's debt list) a receive that read
 * more than the sends recorded so far. */
struct mitem {
	uint64_t ts;            /* send time; for a debt, the receive's */
	int64_t left;           /* unread bytes; -1 = one whole datagram;
	                           for a debt, bytes (or messages) owed */
	uint32_t seg;           /* sending segment; for a debt, receiving */
	uint32_t next;
	uint32_t wake;          /* debt: the receiver's wake-up edge into seg,
	                           ARGUS_NONE */
};

#define SCHEMA_STREAM 0x1000u

/* ---- edges ------------------------------------------------------------ */

int64_t gedge_push(struct argus_graph *g, uint8_t type, uint32_t src,
		   uint32_t dst, uint64_t src_ts, uint64_t dst_ts, uint64_t obj)
{
	struct argus_edge *e;

	if (src == ARGUS_NONE || dst == ARGUS_NONE || src == dst)
		return -EINVAL;
	if (gedge_count(g) >= ARGUS_NONE - 1)   /* ids are uint32_t */
		return -ENOMEM;
	e = gvec_push(&g->edge, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->src = src;
	e->dst = dst;
	e->type = type;
	e->src_ts = src_ts;
	e->dst_ts = dst_ts;
	e->obj = obj;
	if (g->b && type != ARGUS_EDGE_INTRA) {
		struct segx *x = SEGX(g, src);
		uint32_t sp = THRS(g)[SEGS(g)[src].thread].pid;
		uint32_t dp = THRS(g)[SEGS(g)[dst].thread].pid;

		if (sp != dp) {
			if (!x->dst_pid)
				x->dst_pid = dp;
			else if (x->dst_pid != dp)
				x->dst_pid = SEGX_MULTI;
		}
	}
	g->csr_dirty = true;
	/* pushed after the INTRA edges when there are any: their ids come
	 * first (graph_internal.h) */
	return (int64_t)g->edge.n - 1 + g->nintra;
}

/* ---- objects ----------------------------------------------------------- */

/* Hash of a (kind, obj, peer) key: one mix instead of argus_hash_u64s'
 * four (objects and streams are looked up on every syscall exit and
 * blocking switch).  Only the hash index sees it: ids do not depend on it. */
static inline uint32_t key3_hash(uint32_t kind, uint64_t a, uint64_t b)
{
	return (uint32_t)argus_mix64(a ^ (b * 0x9e3779b97f4a7c15ull) ^
				     ((uint64_t)kind << 48));
}

static bool obj_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_object *o = &OBJS((const struct argus_graph *)ctx)[id - 1];
	const struct argus_object *k = key;

	return o->kind == k->kind && o->obj == k->obj && o->peer == k->peer;
}

uint32_t gobj_intern(struct argus_graph *g, uint32_t kind, uint64_t obj,
		     uint64_t peer)
{
	struct argus_object key = { .kind = kind, .obj = obj, .peer = peer }, *o;
	uint32_t h = key3_hash(kind, obj, peer), id;

	/* hidx ids are 1-based over g->obj, whose slot 0 is "none" */
	id = argus_hidx_find(&g->obj_idx, h, obj_eq, g, &key);
	if (id)
		return id - 1;
	o = gvec_push(&g->obj, sizeof(*o));
	if (!o)
		return 0;
	*o = key;
	if (argus_hidx_insert(&g->obj_idx, h, g->obj.n))
		return 0;
	return g->obj.n - 1;
}

/* ---- wake-ups ---------------------------------------------------------- */

static bool timer_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct gbuild *b = ctx;

	return GV(b->timers, struct timer_ent)[id - 1].timer == *(const uint64_t *)key;
}

static struct timer_ent *timer_find(struct argus_graph *g, uint64_t timer)
{
	uint32_t id = argus_hidx_find(&g->b->timer_idx,
				      (uint32_t)argus_mix64(timer), timer_eq,
				      g->b, &timer);

	return id ? &GV(g->b->timers, struct timer_ent)[id - 1] : NULL;
}

int gtimer_start(struct argus_graph *g, const struct argus_event *ev,
		 uint32_t seg)
{
	uint64_t timer = ev->f[ARGUS_F_HT_TIMER];
	struct timer_ent *t = timer_find(g, timer);

	if (!t) {
		t = gvec_push(&g->b->timers, sizeof(*t));
		if (!t || argus_hidx_insert(&g->b->timer_idx,
					    (uint32_t)argus_mix64(timer),
					    g->b->timers.n))
			return -ENOMEM;
		t->timer = timer;
	}
	t->seg = seg;
	t->ts = ev->ts;
	if (seg != ARGUS_NONE) {
		struct tstate *s = TSTATE(g, SEGS(g)[seg].thread);

		s->tmr = timer;
		s->tmr_ts = ev->ts;
		s->tmr_expires = ev->f[ARGUS_F_HT_EXPIRES];
		s->tmr_seg = seg;
	}
	return 0;
}

void gtimer_cancel(struct argus_graph *g, const struct argus_event *ev)
{
	struct timer_ent *t = timer_find(g, ev->f[ARGUS_F_HT_TIMER]);

	if (t)
		t->seg = ARGUS_NONE;
}

static uint8_t waker_edge_type(const struct tstate *w)
{
	uint32_t cls = argus_sys_class(w->sys_nr);

	if (cls & ARGUS_SC_FUTEX)
		return ARGUS_EDGE_FUTEX;
	if (cls & ARGUS_SC_SIGNAL)
		return ARGUS_EDGE_SIGNAL;
	if ((cls & ARGUS_SC_EXIT) || w->exited)
		return ARGUS_EDGE_EXIT;
	return ARGUS_EDGE_WAKEUP;
}

static bool schema_filtered(struct argus_graph *g, const struct tstate *w,
			    const struct tstate *t)
{
	const struct argus_schema *sc = g->b->schema;

	for (uint32_t i = 0; sc && i < sc->nfilters; i++) {
		const struct schema_filter *f = &sc->filters[i];

		if (f->kind == SCHEMA_FILTER_WAKER && w &&
		    schema_filter_match(f, w->process, w->comm))
			return true;
		if (f->kind == SCHEMA_FILTER_TARGET &&
		    schema_filter_match(f, t->process, t->comm))
			return true;
	}
	return false;
}

/* The wake-up of a thread in a ptrace stop (its last segment ended in
 * __TASK_TRACED and it has not run since) is its tracer's resume: the
 * debugger's, not the program's.  Nothing else wakes a traced task: the
 * wait queue it slept on let go of it when the attach interrupted it.
 * (The attach's own wake-up is only known for one once the woken thread
 * stops: gdebug_interrupted, at that switch-out.) */
static bool debugger_resume(const struct tstate *t)
{
	return t->cur == ARGUS_NONE && t->last_seg != ARGUS_NONE && t->last_traced;
}

/* Decide what a sched_waking means and park it on the target. */
void gwake_classify(struct argus_graph *g, const struct argus_event *ev)
{
	uint32_t tthr = gthread_get(g, (uint32_t)ev->f[ARGUS_F_WK_TARGET_TID],
				    (uint32_t)ev->f[ARGUS_F_WK_TARGET_PID]);
	uint8_t pend = 1, type = ARGUS_EDGE_WAKEUP, filt = 0;
	uint32_t src = ARGUS_NONE;
	uint64_t obj = 0, timer_arm_ts = 0;
	struct tstate *t, *w = NULL;

	g->st.wakeups++;
	if (tthr == ARGUS_NONE)
		return;
	if (ev->tid) {
		uint32_t wthr = gthread_get(g, ev->tid, ev->pid);

		if (wthr != ARGUS_NONE)
			w = TSTATE(g, wthr);
	}
	t = TSTATE(g, tthr);
	if (ev->ctx != AE_CTX_TASK) {
		struct timer_ent *te = NULL;

		if (ev->f[ARGUS_F_WK_VECTOR] == AE_VEC_HRTIMER &&
		    ev->f[ARGUS_F_WK_HRTIMER])
			te = timer_find(g, ev->f[ARGUS_F_WK_HRTIMER]);
		if (te && te->seg != ARGUS_NONE) {
			type = ARGUS_EDGE_TIMER;
			src = te->seg;
			obj = te->timer;
			timer_arm_ts = te->ts;
		} else if (ev->ctx == AE_CTX_SOFTIRQ) {
			pend = 16 + ARGUS_WOKEN_SOFTIRQ;
			filt = ARGUS_FILT_SOFTIRQ;
		} else if (ev->ctx == AE_CTX_NMI) {
			pend = 16 + ARGUS_WOKEN_NMI;
			filt = ARGUS_FILT_NMI;
		} else {
			pend = 16 + ARGUS_WOKEN_HARDIRQ;
			filt = ARGUS_FILT_HARDIRQ;
		}
	} else if (debugger_resume(t)) {
		pend = 16 + ARGUS_WOKEN_DEBUGGER;
		filt = ARGUS_FILT_DEBUGGER;
	} else if (!w || w->cls == TC_KERNEL) {
		pend = 16 + ARGUS_WOKEN_KERNEL;
		filt = ARGUS_FILT_KERNEL_WAKER;
	} else if (w->cls == TC_IRQ) {
		pend = 16 + ARGUS_WOKEN_HARDIRQ;
		filt = ARGUS_FILT_IRQ_THREAD;
	} else if (w->cls == TC_TOOL && t->cls != TC_TOOL) {
		pend = 16 + ARGUS_WOKEN_DEBUGGER;
		filt = ARGUS_FILT_TOOL;
	} else if (t->cls == TC_KERNEL || t->cls == TC_IRQ) {
		pend = 16 + ARGUS_WOKEN_KERNEL;
		filt = ARGUS_FILT_KERNEL_TARGET;
	} else if (schema_filtered(g, w, t)) {
		pend = 16 + ARGUS_WOKEN_FILTERED;
		filt = ARGUS_FILT_SCHEMA;
	} else {
		src = w->cur;
		type = waker_edge_type(w);
		if (type == ARGUS_EDGE_FUTEX)
			obj = w->sys_arg0;
	}
	if (pend == 1 && src == ARGUS_NONE) {
		pend = 16 + ARGUS_WOKEN_UNKNOWN;
		filt = ARGUS_FILT_MAX;
	}
	if (t->forked)
		return;                 /* a new task: its FORK edge stands */
	if (t->pend && !t->pend_early)
		return;                 /* the first wake-up wins */
	t->pend_early = 0;
	if (t->cur != ARGUS_NONE) {
		/* Not (yet) seen asleep: see EARLY_WAKE_NS in graph_build.c. */
		t->pend_early = 1;
	} else if (t->last_seg == ARGUS_NONE) {
		t->waiting = 1;         /* asleep since before the trace */
	}
	t->pend = pend;
	t->pend_type = type;
	t->pend_filt = filt;
	t->pend_src = src;
	/* src_ts is when the source acted: the wake-up, or the timer's arm */
	t->pend_ts = type == ARGUS_EDGE_TIMER && pend == 1 ? timer_arm_ts : ev->ts;
	t->pend_wake_ts = ev->ts;
	t->pend_obj = obj;
}

/*
 * A thread back from a wait that no traced wake-up explains, whose own
 * timer, armed in the segment that ended in that wait, expired during it:
 * the timer woke it.  Wake-ups go untraced when the kernel does not run
 * the tracepoints for the interrupted task: on this VM no record ever has
 * pid 1 (the VM's agent) as current, so an hrtimer expiry that lands while
 * it runs is lost, waking and all (docs/collector.md); a full ring loses
 * records too.  Only a timer on the trace's clock (CLOCK_MONOTONIC:
 * nanosleep, poll/epoll/futex timeouts) can have expired before `ts`; a
 * REALTIME timer's expiry is far beyond it, so it never counts.  A
 * cancelled or re-armed timer does not count either.
 */
static bool timer_explains(struct argus_graph *g, const struct tstate *s,
			   uint32_t arm, uint32_t seg, uint64_t ts)
{
	const struct argus_segment *a;
	const struct timer_ent *te;

	if (arm == ARGUS_NONE || arm == seg)
		return false;
	a = &SEGS(g)[arm];
	if (a->end_reason != ARGUS_END_WAIT || s->tmr_expires < a->end ||
	    s->tmr_expires > ts)
		return false;
	te = timer_find(g, s->tmr);
	return te && te->seg == arm && te->ts == s->tmr_ts;
}

/* Turn the parked wake-up into segment `seg`'s in-edge or attribution. */
int gwake_apply(struct argus_graph *g, uint32_t thr, uint32_t seg,
		uint64_t ts)
{
	struct tstate *s = TSTATE(g, thr);
	struct argus_segment *sg = &SEGS(g)[seg];
	uint32_t arm = s->tmr_seg;
	bool inferred = false;
	int64_t id;

	s->tmr_seg = ARGUS_NONE;        /* it explains only the next wait */
	if (!s->pend && sg->start_reason == ARGUS_START_WAKE &&
	    timer_explains(g, s, arm, seg, ts)) {
		/* as if its expiry had been traced (gwake_classify) */
		s->pend = 1;
		s->pend_type = ARGUS_EDGE_TIMER;
		s->pend_src = arm;
		s->pend_ts = s->tmr_ts;
		s->pend_obj = s->tmr;
		inferred = true;
	}
	if (!s->pend) {
		sg->woken_by = sg->start_reason == ARGUS_START_WAKE ?
			ARGUS_WOKEN_UNKNOWN : ARGUS_WOKEN_NA;
		return 0;
	}
	if (s->pend == 1) {
		id = gedge_push(g, s->pend_type, s->pend_src, seg, s->pend_ts,
				ts, s->pend_obj);
		if (id == -ENOMEM)
			return -ENOMEM;
		sg = &SEGS(g)[seg];
		if (id >= 0) {
			EDGES(g)[id].flags |= ARGUS_EDGE_F_WOKE;
			s->wake_edge = (uint32_t)id;
			sg->woken_by = ARGUS_WOKEN_EDGE;
			if (inferred)
				g->st.timer_inferred++;
			else if (s->pend_type == ARGUS_EDGE_TIMER)
				g->st.timer_reattributed++;
		} else {
			sg->woken_by = ARGUS_WOKEN_UNKNOWN;
		}
	} else {
		sg->woken_by = s->pend - 16;
		if (s->pend_filt < ARGUS_FILT_MAX)
			g->st.filtered[s->pend_filt]++;
	}
	s->pend = 0;
	s->pend_early = 0;
	return 0;
}

/* ---- messages ---------------------------------------------------------- */

#define is_send argus_sys_is_send
#define is_recv argus_sys_is_recv

static bool stream_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct mstream *s = &GV(((const struct gbuild *)ctx)->streams,
				      struct mstream)[id - 1];
	const struct mstream *k = key;

	return s->kind == k->kind && s->a == k->a && s->b == k->b;
}

static struct mstream *stream_get(struct argus_graph *g, uint32_t kind,
				  uint64_t a, uint64_t b, bool create)
{
	struct mstream key = { .a = a, .b = b, .kind = kind }, *s;
	uint32_t h = key3_hash(kind, a, b), id;

	id = argus_hidx_find(&g->b->stream_idx, h, stream_eq, g->b, &key);
	if (id)
		return &GV(g->b->streams, struct mstream)[id - 1];
	if (!create)
		return NULL;
	s = gvec_push(&g->b->streams, sizeof(*s));
	if (!s || argus_hidx_insert(&g->b->stream_idx, h, g->b->streams.n))
		return NULL;
	*s = key;
	s->head = s->tail = s->debt = s->debt_tail = ARGUS_NONE;
	return s;
}

#define ITEMS(g) GV((g)->b->items, struct mitem)

static void item_pop(struct argus_graph *g, struct mstream *s)
{
	uint32_t i = s->head;

	s->head = ITEMS(g)[i].next;
	if (s->head == ARGUS_NONE)
		s->tail = ARGUS_NONE;
	ITEMS(g)[i].next = g->b->free_item;
	g->b->free_item = i;
	s->nitems--;
}

static int item_push(struct argus_graph *g, struct mstream *s, uint32_t seg,
		     uint64_t ts, int64_t left)
{
	uint32_t i = g->b->free_item;
	struct mitem *it;

	if (s->nitems >= STREAM_MAX_ITEMS)
		item_pop(g, s);         /* nobody reads it: keep it bounded */
	i = g->b->free_item;
	if (i != ARGUS_NONE) {
		g->b->free_item = ITEMS(g)[i].next;
	} else {
		if (!gvec_push(&g->b->items, sizeof(*it)))
			return -ENOMEM;
		i = g->b->items.n - 1;
	}
	it = &ITEMS(g)[i];
	it->ts = ts;
	it->left = left;
	it->seg = seg;
	it->next = ARGUS_NONE;
	if (s->tail != ARGUS_NONE)
		ITEMS(g)[s->tail].next = i;
	else
		s->head = i;
	s->tail = i;
	s->nitems++;
	return 0;
}

/* One send -> receive link; merges with the wake-up or the last message
 * edge into `dst` when they come from the same segment.  `wake` is the
 * wake-up edge into dst when the caller knows it (a late send, whose
 * receiver may have moved on: pay_debts()), else ARGUS_NONE: the
 * receiver's current one. */
static int link(struct argus_graph *g, uint8_t type, uint32_t src,
		uint32_t dst, uint64_t src_ts, uint64_t dst_ts, uint64_t obj,
		uint16_t kind, int64_t bytes, uint32_t wake)
{
	struct tstate *x = TSTATE(g, SEGS(g)[dst].thread);
	struct argus_edge *e = NULL;
	int64_t id;

	if (src == dst)
		return 0;
	/* what a debugger or Argus itself writes to a program (a pipe into
	 * `less`, lldb-server's replies) is the tool's, as its wake-ups are */
	if (TSTATE(g, SEGS(g)[src].thread)->cls == TC_TOOL && x->cls != TC_TOOL)
		return 0;
	if (wake == ARGUS_NONE)
		wake = x->wake_edge;
	/* each is checked for its dst: a late send's dst is a segment the
	 * receiver may have left */
	if (x->msg_edge != ARGUS_NONE && EDGES(g)[x->msg_edge].src == src &&
	    EDGES(g)[x->msg_edge].dst == dst && EDGES(g)[x->msg_edge].type == type)
		e = &EDGES(g)[x->msg_edge];
	else if (wake != ARGUS_NONE && EDGES(g)[wake].src == src &&
		 EDGES(g)[wake].dst == dst &&
		 EDGES(g)[wake].type == ARGUS_EDGE_WAKEUP) {
		/* The wake-up was this message: keep one edge, timed at the
		 * send and at the receive (the batching split cuts by these). */
		e = &EDGES(g)[wake];
		e->type = type;
		e->src_ts = src_ts;
		e->dst_ts = dst_ts;
		e->obj = obj;
		if (x->cur == dst)
			x->msg_edge = wake;
	}
	if (!e) {
		id = gedge_push(g, type, src, dst, src_ts, dst_ts, obj);
		if (id < 0)
			return id == -ENOMEM ? -ENOMEM : 0;
		e = &EDGES(g)[id];
		if (x->cur == dst)
			x->msg_edge = (uint32_t)id;
	}
	e->obj_kind = kind;
	if (bytes > 0)  /* 40-byte edges: 32 bits, saturating */
		e->bytes = (uint64_t)bytes >= UINT32_MAX - e->bytes ? UINT32_MAX :
			   e->bytes + (uint32_t)bytes;
	if (type == ARGUS_EDGE_MESSAGE) {
		g->st.messages++;
		g->st.bytes += bytes > 0 ? (uint64_t)bytes : 0;
	}
	return 0;
}

/*
 * Late sends.  A receive can read more than the sends recorded so far:
 * the sender copied its bytes and woke the reader, then was preempted
 * before its sys_exit record, while the reader ran on the other CPU and
 * recorded its receive first (seen here: 650 µs between a pipe write's
 * wake-up and its exit).  Queued FIFO, that late send would be taken by
 * the reader's *next* receive, and every pairing after it would be off by
 * one.  So the shortfall is kept as a debt on the stream, and the next
 * sends pay it first: linked into the receiving segment, timed at the
 * receive.  Only a send whose segment had begun by the receive can have
 * supplied its bytes; a later one means the debt was for bytes sent
 * before the trace began (or not traced), and the debts are dropped,
 * counted as receives without a traced send.
 */
static void debt_drop(struct argus_graph *g, struct mstream *s)
{
	while (s->debt != ARGUS_NONE) {
		uint32_t i = s->debt;

		s->debt = ITEMS(g)[i].next;
		ITEMS(g)[i].next = g->b->free_item;
		g->b->free_item = i;
		g->st.unmatched_recv++;
	}
	s->debt_tail = ARGUS_NONE;
	s->ndebts = 0;
}

static int debt_push(struct argus_graph *g, struct mstream *s, uint32_t seg,
		     uint64_t ts, int64_t owed)
{
	struct tstate *x = TSTATE(g, SEGS(g)[seg].thread);
	uint32_t i;

	if (s->ndebts >= 64)
		debt_drop(g, s);        /* nobody sends: keep it bounded */
	i = g->b->free_item;
	if (i != ARGUS_NONE) {
		g->b->free_item = ITEMS(g)[i].next;
	} else {
		if (!gvec_push(&g->b->items, sizeof(struct mitem)))
			return -ENOMEM;
		i = g->b->items.n - 1;
	}
	ITEMS(g)[i] = (struct mitem){
		.ts = ts, .left = owed, .seg = seg, .next = ARGUS_NONE,
		.wake = x->cur == seg ? x->wake_edge : ARGUS_NONE,
	};
	/* appended at the kept tail: walking the list to its end was a
	 * chain of cache misses per debt (up to 64) */
	if (s->debt_tail != ARGUS_NONE)
		ITEMS(g)[s->debt_tail].next = i;
	else
		s->debt = i;
	s->debt_tail = i;
	s->ndebts++;
	return 0;
}

/* Send `*n` bytes (or, `whole`, messages) from segment seg at ts: pay the
 * stream's debts first; *n is left with what remains to queue. */
static int pay_debts(struct argus_graph *g, struct mstream *s, uint32_t seg,
		     uint64_t ts, uint64_t obj, int64_t *n, bool whole)
{
	int rc;

	while (*n > 0 && s->debt != ARGUS_NONE) {
		struct mitem d = ITEMS(g)[s->debt];
		int64_t took;

		if (SEGS(g)[seg].start > d.ts) {
			debt_drop(g, s);
			break;
		}
		if (whole || d.left <= *n) {
			uint32_t i = s->debt;

			took = d.left;
			*n -= whole ? 1 : d.left;
			s->debt = d.next;
			if (s->debt == ARGUS_NONE)
				s->debt_tail = ARGUS_NONE;
			ITEMS(g)[i].next = g->b->free_item;
			g->b->free_item = i;
			s->ndebts--;
		} else {
			took = *n;
			ITEMS(g)[s->debt].left -= *n;
			*n = 0;
		}
		/* the bytes were there by the receive: the send acted by then */
		rc = link(g, ARGUS_EDGE_MESSAGE, seg, d.seg, ts < d.ts ? ts : d.ts,
			  d.ts, obj, (uint16_t)s->kind, took, d.wake);
		if (rc)
			return rc;
		g->st.late_sends++;
	}
	return 0;
}

/* Draw `need` bytes (or messages, for recvmmsg) from stream s. */
static int consume(struct argus_graph *g, struct mstream *s, uint8_t type,
		   uint32_t seg, uint64_t ts, uint64_t obj, int64_t need,
		   bool msgs)
{
	int rc;

	while (need > 0 && s->head != ARGUS_NONE) {
		struct mitem it = ITEMS(g)[s->head];
		int64_t took;

		if (it.left < 0 || msgs) {
			took = it.left < 0 ? 0 : it.left;
			need -= msgs ? 1 : need;
			item_pop(g, s);
		} else if (it.left <= need) {
			took = it.left;
			need -= it.left;
			item_pop(g, s);
		} else {
			took = need;
			ITEMS(g)[s->head].left -= need;
			need = 0;
		}
		if (it.seg == ARGUS_NONE)
			continue;
		rc = link(g, type, it.seg, seg, it.ts, ts, obj,
			  (uint16_t)(s->kind < SCHEMA_STREAM ? s->kind : 0), took,
			  ARGUS_NONE);
		if (rc)
			return rc;
	}
	if (need > 0)
		return debt_push(g, s, seg, ts, need);
	return 0;
}

int gmsg_sys_exit(struct argus_graph *g, const struct argus_event *ev,
		  uint32_t seg)
{
	long nr = (long)ev->f[ARGUS_F_SX_NR];
	int64_t ret = (int64_t)ev->f[ARGUS_F_SX_RET];
	uint32_t kind = (uint32_t)ev->f[ARGUS_F_SX_OBJ_KIND];
	uint64_t obj = ev->f[ARGUS_F_SX_OBJ], peer = ev->f[ARGUS_F_SX_PEER];
	bool send = is_send(nr), recv = !send && is_recv(nr);
	bool mmsg = argus_sys_is(nr, ARGUS_SC_MSG_COUNT);
	struct mstream *s;

	if ((!send && !recv) || ret <= 0 || seg == ARGUS_NONE)
		return 0;
	switch (kind) {
	case AE_OBJ_PIPE:
	case AE_OBJ_EVENTFD:
		peer = 0;
		break;
	case AE_OBJ_UNIX:
	case AE_OBJ_TCP:
	case AE_OBJ_UDP:
		if (!peer)
			return 0;       /* unconnected: cannot match */
		if (recv) {
			uint64_t t = obj;

			obj = peer;
			peer = t;
		}
		break;
	default:
		return 0;
	}
	/* a receive creates the stream too: it may be owed a late send */
	s = stream_get(g, kind, obj, peer, true);
	if (!s)
		return -ENOMEM;
	if (send) {
		int64_t n = ret;
		int rc;

		/* the receiver's end: the pipe, or the sender's peer */
		if (s->debt != ARGUS_NONE &&
		    (rc = pay_debts(g, s, seg, ev->ts, peer ? peer : obj, &n, mmsg)))
			return rc;
		for (int64_t i = 0; i < (mmsg ? n : n > 0); i++)
			if (item_push(g, s, seg, ev->ts, mmsg ? -1 : n))
				return -ENOMEM;
		return 0;
	}
	return consume(g, s, ARGUS_EDGE_MESSAGE, seg, ev->ts,
		       ev->f[ARGUS_F_SX_OBJ], ret, mmsg);
}

/* ---- user schema edges ------------------------------------------------- */

int gschema_edges(struct argus_graph *g, const struct argus_event *ev,
		  uint32_t thr, uint32_t seg, const char *mark)
{
	const struct argus_schema *sc = g->b->schema;
	const struct tstate *t = TSTATE(g, thr);
	int rc;

	for (uint32_t i = 0; i < sc->nedges; i++) {
		const struct schema_edge *r = &sc->edges[i];
		struct mstream *s;
		uint64_t v;

		if (schema_match_event(&r->dst, ev, t->process, t->comm, mark)) {
			v = schema_attr(r->dst_attr, ev, mark);
			s = stream_get(g, SCHEMA_STREAM + i, v, 0, false);
			if (s && s->head != ARGUS_NONE) {
				struct mitem it = ITEMS(g)[s->head];

				if (!r->many)
					item_pop(g, s);
				rc = link(g, r->type, it.seg, seg, it.ts, ev->ts,
					  v, 0, 0, ARGUS_NONE);
				if (rc)
					return rc;
				/* counted here, not by new edge ids: the link may
				 * have retyped the wake-up edge instead */
				if (it.seg != seg)
					g->st.schema_edges++;
			}
		}
		if (schema_match_event(&r->src, ev, t->process, t->comm, mark)) {
			v = schema_attr(r->src_attr, ev, mark);
			s = stream_get(g, SCHEMA_STREAM + i, v, 0, true);
			if (!s)
				return -ENOMEM;
			if (r->many)
				while (s->head != ARGUS_NONE)
					item_pop(g, s);
			if (item_push(g, s, seg, ev->ts, -1))
				return -ENOMEM;
		}
	}
	return 0;
}

void gedges_build_free(struct argus_graph *g)
{
	/* receives still owed a send: none was traced */
	for (uint32_t i = 0; i < g->b->streams.n; i++)
		g->st.unmatched_recv += GV(g->b->streams, struct mstream)[i].ndebts;
	gvec_free(&g->b->timers);
	argus_hidx_free(&g->b->timer_idx);
	gvec_free(&g->b->streams);
	argus_hidx_free(&g->b->stream_idx);
	gvec_free(&g->b->items);
}
