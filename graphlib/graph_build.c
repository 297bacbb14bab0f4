/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_build.c - argus_graph__build(): one pass over the trace in time
 * order, then the batching split and the CSR adjacency.
 *
 * Per event (perf-sched style: one handler per type):
 *   - the event is stored in compact form in its thread's chain; in
 *     task context it belongs to the thread's open segment (opened on the
 *     thread's first event), in irq context to whatever segment the
 *     interrupted thread has open (P1: it is not the thread's intent);
 *   - sched_switch closes prev's segment when prev goes to sleep (wait)
 *     or dies, and opens next's segment when next comes back from a wait;
 *     a preemption only moves on-CPU time;
 *   - sched_waking records, on the target, what will explain its next
 *     segment: an edge (graph_edges.c) or an attribution (interrupt,
 *     kernel housekeeping) that is counted, never turned into an edge;
 *   - syscall exits feed the message matcher, hrtimer starts the timer map.
 *
 * Kernel quirk handled here: sched_waking can be traced a few µs *before*
 * the target's own sched_switch that puts it to sleep (the target is
 * dequeued, then traced; the waker on another CPU sees it asleep in
 * between).  Such an "early" wake-up is kept if the target's next
 * task-context event is that sleeping switch within EARLY_WAKE_NS, and
 * dropped (counted as ARGUS_FILT_RUNNING) otherwise.
 */
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "graph_internal.h"
#include "schema.h"
#include "syscall_class.h"

#define EARLY_WAKE_NS 200000ull         /* 200 µs */
#define TASK_DEAD_STATE 0x80            /* include/linux/sched.h TASK_DEAD */
#define TASK_STOPPED_STATE 0x4          /* __TASK_STOPPED: SIGSTOP */
#define TASK_TRACED_STATE 0x8           /* __TASK_TRACED: a debugger stop */
#define PROGRESS_EVERY (1u << 20)

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static bool sleeping_switch(const struct argus_event *ev)
{
	uint64_t st = ev->f[ARGUS_F_SW_PREV_STATE];

	return ev->type == AE_SWITCH && st && !(st & TASK_DEAD_STATE);
}

/* Thread `thr` is switched in (or shows up running) at ts. */
static int switch_in(struct argus_graph *g, uint32_t thr, uint64_t ts)
{
	struct tstate *s = TSTATE(g, thr);
	uint8_t reason;
	uint32_t seg;

	if (s->cur != ARGUS_NONE) {     /* back from a preemption */
		s->run_since = ts;
		return 0;
	}
	reason = s->waiting ? ARGUS_START_WAKE :
		 s->forked ? ARGUS_START_THREAD : ARGUS_START_TRACE;
	if (s->waiting && s->last_seg != ARGUS_NONE)
		SEGS(g)[s->last_seg].wait_ns = ts - s->wait_since;
	seg = gseg_open(g, thr, ts, reason);
	if (seg == ARGUS_NONE)
		return -ENOMEM;
	s = TSTATE(g, thr);
	s->run_since = ts;
	s->waiting = 0;
	s->forked = 0;
	if (reason != ARGUS_START_TRACE || s->pend)
		return gwake_apply(g, thr, seg, ts);
	return 0;
}

/* The user schema cuts the segment at a matching event. */
static int schema_boundary(struct argus_graph *g, uint32_t thr,
			   const struct argus_event *ev, const char *mark,
			   bool *after)
{
	const struct argus_schema *sc = g->b->schema;
	struct tstate *s = TSTATE(g, thr);

	for (uint32_t i = 0; i < sc->nboundaries; i++) {
		const struct schema_boundary *r = &sc->boundaries[i];

		if (!schema_match_event(&r->ev, ev, s->process, s->comm, mark))
			continue;
		if (r->where == SCHEMA_AFTER) {
			*after = true;
			continue;
		}
		/* before: the event starts the new segment */
		if (SEGS(g)[s->cur].nevents == 0)
			continue;
		gseg_close(g, thr, ev->ts, ARGUS_END_SCHEMA);
		if (gseg_open(g, thr, ev->ts, ARGUS_START_SCHEMA) == ARGUS_NONE)
			return -ENOMEM;
		TSTATE(g, thr)->run_since = ev->ts;
		g->st.schema_boundaries++;
		return 0;
	}
	return 0;
}

/* Store thread thr's next event, in segment seg (ARGUS_NONE: in none). */
static inline uint32_t add_event(struct argus_graph *g, uint32_t thr, uint32_t seg,
				 const struct argus_gevent *ge)
{
	struct tstate *s = TSTATE(g, thr);
	uint32_t evid = gev_store(g, &s->last_ev, thr, ge);

	if (evid == ARGUS_NONE)
		return ARGUS_NONE;
	if (!s->nev++)
		THRS(g)[thr].first_event = evid;
	if (seg != ARGUS_NONE) {
		struct argus_segment *sg = &SEGS(g)[seg];

		if (sg->first_event == ARGUS_NONE)
			sg->first_event = evid;
		sg->nevents++;
		if (ge->ts > sg->end)
			sg->end = ge->ts;
		if (ge->type == AE_SAMPLE)
			sg->nsamples++;
	}
	return evid;
}

/* Store an event that belongs to no thread. */
static int store_idle(struct argus_graph *g, const struct argus_gevent *ge)
{
	return gev_store(g, &g->b->idle_last, ARGUS_NONE, ge) == ARGUS_NONE ? -ENOMEM : 0;
}

/*
 * Store event ge (compact form of ev) in its thread's chain and segment.
 * Returns the thread index (ARGUS_NONE for the idle task, whose events
 * are stored apart, or on ENOMEM, which sets *rc).
 */
static uint32_t attach(struct argus_graph *g, const struct argus_event *ev,
		       const struct argus_gevent *ge, int *rc)
{
	struct tstate *s;
	uint32_t thr;
	const char *mark = NULL;
	bool after = false;

	if (ev->tid == 0) {
		*rc = store_idle(g, ge);
		return ARGUS_NONE;
	}
	thr = gthread_get(g, ev->tid, ev->pid);
	if (thr == ARGUS_NONE) {
		*rc = -ENOMEM;
		return ARGUS_NONE;
	}
	s = TSTATE(g, thr);
	if (ev->ctx != AE_CTX_TASK) {   /* an interrupt on this thread */
		/* it runs on a CPU: an interrupt as its first traced event
		 * opens its first segment like any other event (P1: the
		 * interrupt is recorded in it, never a boundary) */
		if (s->cur == ARGUS_NONE && !s->waiting && !s->forked &&
		    s->last_seg == ARGUS_NONE && (*rc = switch_in(g, thr, ev->ts)))
			return ARGUS_NONE;
		s = TSTATE(g, thr);
		if (add_event(g, thr, s->cur, ge) == ARGUS_NONE) {
			*rc = -ENOMEM;
			return ARGUS_NONE;
		}
		return thr;
	}
	if (s->pend_early) {
		if (sleeping_switch(ev) && ev->ts - s->pend_wake_ts <= EARLY_WAKE_NS) {
			s->pend_early = 0;
		} else {
			s->pend = s->pend_early = 0;
			g->st.filtered[ARGUS_FILT_RUNNING]++;
		}
	}
	if (s->cur == ARGUS_NONE && (*rc = switch_in(g, thr, ev->ts)))
		return ARGUS_NONE;
	if (g->b->schema) {
		if (ev->type == AE_MARK)
			mark = argus_trace__string(g->trace, ev->str);
		if (g->b->schema->nboundaries &&
		    (*rc = schema_boundary(g, thr, ev, mark, &after)))
			return ARGUS_NONE;
	}
	s = TSTATE(g, thr);
	if (add_event(g, thr, s->cur, ge) == ARGUS_NONE) {
		*rc = -ENOMEM;
		return ARGUS_NONE;
	}
	if (g->b->schema && g->b->schema->nedges &&
	    (*rc = gschema_edges(g, ev, thr, s->cur, mark)))
		return ARGUS_NONE;
	if (after && ev->type != AE_SWITCH) {
		gseg_close(g, thr, ev->ts, ARGUS_END_SCHEMA);
		if (gseg_open(g, thr, ev->ts, ARGUS_START_SCHEMA) == ARGUS_NONE) {
			*rc = -ENOMEM;
			return ARGUS_NONE;
		}
		TSTATE(g, thr)->run_since = ev->ts;
		g->st.schema_boundaries++;
	}
	return thr;
}

static int on_switch(struct argus_graph *g, const struct argus_event *ev,
		     const struct argus_gevent *ge)
{
	uint64_t state = ev->f[ARGUS_F_SW_PREV_STATE];
	uint32_t next = (uint32_t)ev->f[ARGUS_F_SW_NEXT_TID], thr;
	int rc = 0;

	thr = attach(g, ev, ge, &rc);
	if (rc)
		return rc;
	if (thr != ARGUS_NONE) {
		struct tstate *s = TSTATE(g, thr);
		struct argus_segment *seg = &SEGS(g)[s->cur];

		if (!state) {                   /* preempted: not a boundary */
			if (s->run_since && ev->ts > s->run_since)
				seg->oncpu += ev->ts - s->run_since;
			s->run_since = 0;
		} else if (state & TASK_DEAD_STATE) {
			gseg_close(g, thr, ev->ts, ARGUS_END_EXIT);
			s->run_since = 0;
		} else {
			seg->wait_nr = (int32_t)ev->f[ARGUS_F_SW_SYS_NR];
			seg->wait_arg = ev->f[ARGUS_F_SW_SYS_ARG];
			seg->wait_obj = ge->obj;        /* interned by on_event */
			seg->wait_stack = ev->stack;
			if (state & (TASK_STOPPED_STATE | TASK_TRACED_STATE))
				seg->flags |= ARGUS_SEG_F_STOPPED;
			if (state & TASK_TRACED_STATE) {
				seg->flags |= ARGUS_SEG_F_TRACED;
				s->last_traced = 1;
				gdebug_interrupted(g, thr);
			}
			gseg_close(g, thr, ev->ts, ARGUS_END_WAIT);
			s->run_since = 0;
			s->waiting = 1;
			s->wait_since = ev->ts;
		}
	}
	if (next) {
		thr = gthread_get(g, next, (uint32_t)ev->f[ARGUS_F_SW_NEXT_PID]);
		if (thr == ARGUS_NONE)
			return -ENOMEM;
		return switch_in(g, thr, ev->ts);
	}
	return 0;
}

/* fork / wakeup_new: the child's first segment gets a FORK in-edge. */
static int on_fork(struct argus_graph *g, const struct argus_event *ev,
		   uint32_t thr)
{
	uint32_t child = (uint32_t)ev->f[ARGUS_F_TK_CHILD_TID];
	uint32_t cpid = (uint32_t)ev->f[ARGUS_F_TK_CHILD_PID], c;
	struct tstate *cs;

	if (!child || thr == ARGUS_NONE)
		return 0;
	c = gthread_get(g, child, cpid);
	if (c == ARGUS_NONE)
		return -ENOMEM;
	cs = TSTATE(g, c);
	if (cs->exited) {       /* the tid was reused: a new thread */
		c = gthread_new(g, child, cpid);
		if (c == ARGUS_NONE)
			return -ENOMEM;
		cs = TSTATE(g, c);
	}
	if (cs->forked || cs->last_seg != ARGUS_NONE)
		return 0;                       /* the other tracepoint did it */
	if (cpid != ev->pid && !THRS(g)[c].ppid)
		THRS(g)[c].ppid = ev->pid;
	cs->forked = 1;
	cs->pend = 1;
	cs->pend_type = ARGUS_EDGE_FORK;
	cs->pend_src = TSTATE(g, thr)->cur;
	cs->pend_ts = ev->ts;
	cs->pend_obj = 0;
	return 0;
}

static int on_event(struct argus_graph *g, const struct argus_event *ev)
{
	struct argus_gevent ge = {
		.ts = ev->ts, .type = (uint8_t)ev->type, .ctx = ev->ctx,
	}, *e = &ge;
	uint32_t thr;
	int rc = 0;

	switch (ev->type) {
	case AE_SWITCH:
		e->nr = (int16_t)(int32_t)ev->f[ARGUS_F_SW_SYS_NR];
		e->val = (int64_t)ev->f[ARGUS_F_SW_SYS_ARG];
		if (ev->f[ARGUS_F_SW_OBJ_KIND])
			e->obj = gobj_intern(g, (uint32_t)ev->f[ARGUS_F_SW_OBJ_KIND],
					     ev->f[ARGUS_F_SW_OBJ],
					     ev->f[ARGUS_F_SW_PEER]);
		else if (!ev->f[ARGUS_F_SW_PREV_STATE] && ev->stack &&
			 argus_sys_is(e->nr, ARGUS_SC_YIELD))
			/* a yield's switch-out has no object: its stack,
			 * where the spin loop is (argus_graph.h) */
			e->stack = ev->stack;
		return on_switch(g, ev, e);
	case AE_WAKING:
		e->val = (int64_t)ev->f[ARGUS_F_WK_TARGET_TID];
		e->nr = ev->f[ARGUS_F_WK_VECTOR] == AE_VEC_NONE ? -1 :
			ev->f[ARGUS_F_WK_VECTOR] == AE_VEC_HRTIMER ? -2 :
			(ev->f[ARGUS_F_WK_VECTOR] & ~0xffull) == AE_VEC_APIC ?
			(int16_t)-(0x100 + (int)(ev->f[ARGUS_F_WK_VECTOR] & 0xff)) :
			(int16_t)ev->f[ARGUS_F_WK_VECTOR];
		attach(g, ev, e, &rc);
		if (!rc)
			gwake_classify(g, ev);
		return rc;
	case AE_WAKEUP_NEW:
	case AE_FORK:
		e->val = (int64_t)ev->f[ARGUS_F_TK_CHILD_TID];
		thr = attach(g, ev, e, &rc);
		return rc ? rc : on_fork(g, ev, thr);
	case AE_EXIT:
		e->val = (int64_t)ev->f[ARGUS_F_EXIT_CODE];
		thr = attach(g, ev, e, &rc);
		if (thr != ARGUS_NONE)
			TSTATE(g, thr)->exited = 1;
		return rc;
	case AE_EXEC:
	case AE_RENAME:
		thr = attach(g, ev, e, &rc);
		if (thr != ARGUS_NONE)
			gthread_names(g, thr);
		return rc;
	case AE_SYS_ENTER:
		e->nr = (int16_t)ev->f[ARGUS_F_SE_NR];
		e->val = (int64_t)ev->f[ARGUS_F_SE_ARG0];
		if (argus_sys_is_pollfd(e->nr))
			/* poll's fds pointer says nothing; how many fds it
			 * watches (nfds, arg1) tells an event loop from a
			 * wait for one reply (diag_hangs.c) */
			e->val = (int64_t)ev->f[ARGUS_F_SE_ARG0 + 1];
		else if (argus_sys_is_file_lock(e->nr))   /* the lock request (diag_locks.c) */
			e->val = (int64_t)glock_enter_val(e->nr, &ev->f[ARGUS_F_SE_ARG0]);
		thr = attach(g, ev, e, &rc);
		if (thr != ARGUS_NONE) {
			TSTATE(g, thr)->sys_nr = (int32_t)ev->f[ARGUS_F_SE_NR];
			TSTATE(g, thr)->sys_arg0 = ev->f[ARGUS_F_SE_ARG0];
			gseg_shape_sys(g, thr, e, 0, 0);
		}
		return rc;
	case AE_SYS_EXIT:
		e->nr = (int16_t)ev->f[ARGUS_F_SX_NR];
		e->val = (int64_t)ev->f[ARGUS_F_SX_RET];
		if (ev->f[ARGUS_F_SX_OBJ_KIND])
			e->obj = gobj_intern(g, (uint32_t)ev->f[ARGUS_F_SX_OBJ_KIND],
					     ev->f[ARGUS_F_SX_OBJ],
					     ev->f[ARGUS_F_SX_PEER]);
		thr = attach(g, ev, e, &rc);
		if (rc || thr == ARGUS_NONE)
			return rc;
		TSTATE(g, thr)->sys_nr = -1;
		gseg_shape_sys(g, thr, e, e->obj ? (uint32_t)ev->f[ARGUS_F_SX_OBJ_KIND] : 0,
			       ev->f[ARGUS_F_SX_OBJ]);
		return gmsg_sys_exit(g, ev, TSTATE(g, thr)->cur);
	case AE_HRT_START:
	case AE_HRT_EXPIRE:
	case AE_HRT_CANCEL:
		e->val = (int64_t)ev->f[ARGUS_F_HT_TIMER];
		thr = attach(g, ev, e, &rc);
		if (rc)
			return rc;
		if (ev->type == AE_HRT_START && ev->ctx == AE_CTX_TASK &&
		    thr != ARGUS_NONE)
			return gtimer_start(g, ev, TSTATE(g, thr)->cur);
		if (ev->type == AE_HRT_CANCEL)
			gtimer_cancel(g, ev);
		return 0;
	case AE_IRQ_ENTRY:
	case AE_IRQ_EXIT:
	case AE_SOFTIRQ_ENTRY:
	case AE_SOFTIRQ_EXIT:
		e->nr = (int16_t)ev->f[ARGUS_F_IRQ_VECTOR];
		attach(g, ev, e, &rc);
		return rc;
	case AE_SAMPLE:
		e->stack = ev->stack;
		attach(g, ev, e, &rc);
		return rc;
	case AE_HWWATCH:        /* a write to a watched flag (graph_flag.c) */
		g->b->nflag_writes++;
		e->val = (int64_t)ev->f[ARGUS_F_HW_VALUE];
		e->nr = (int16_t)ev->f[ARGUS_F_HW_LEN];
		e->obj = gobj_intern(g, AE_OBJ_FLAG, ev->f[ARGUS_F_HW_ADDR], ev->pid);
		if (!e->obj)
			return -ENOMEM;
		if (attach(g, ev, e, &rc) != ARGUS_NONE && !rc && ev->f[ARGUS_F_HW_READER])
			rc = gflag_note_reader(g, g->b->last_evid, (uint32_t)ev->f[ARGUS_F_HW_READER]);
		return rc;
	case AE_MARK: {
		uint32_t *m;

		e->str = ev->str;
		attach(g, ev, e, &rc);
		if (rc)
			return rc;
		m = gvec_push(&g->marks, sizeof(*m));
		if (!m)
			return -ENOMEM;
		*m = g->b->last_evid;
		return 0;
	}
	case AE_LOST:
		g->st.lost += ev->f[ARGUS_F_LOST_COUNT];
		return store_idle(g, e);
	case AE_MUTEX_WAIT:     /* the interposer's (graph_mutex.c) */
	case AE_MUTEX_ACQUIRED:
	case AE_MUTEX_WAKE:
		e->val = (int64_t)ev->f[ARGUS_F_MX_OTHER];
		g->b->nmutex_wakes += ev->type == AE_MUTEX_WAKE;
		/* rwlocks are locks with holders like mutexes; semaphores and
		 * condvars are objects of their own (docs/interposer.md) */
		e->obj = gobj_intern(g, ev->f[ARGUS_F_MX_KIND] == AE_SYNC_SEM ? AE_OBJ_SEM :
				     ev->f[ARGUS_F_MX_KIND] == AE_SYNC_COND ? AE_OBJ_COND :
				     AE_OBJ_MUTEX, ev->f[ARGUS_F_MX_ADDR], ev->pid);
		if (!e->obj)
			return -ENOMEM;
		attach(g, ev, e, &rc);
		return rc;
	case AE_WORK_ENQUEUE:   /* the interposer's work items (graph_work.c) */
	case AE_WORK_BEGIN:
	case AE_WORK_END:
		e->val = (int64_t)ev->f[ARGUS_F_WI_FN];
		g->b->nwork_items += ev->type != AE_WORK_END;
		e->nr = (int16_t)ev->f[ARGUS_F_WI_KIND];
		e->obj = gobj_intern(g, AE_OBJ_WORK, ev->f[ARGUS_F_WI_ITEM], ev->pid);
		if (!e->obj)
			return -ENOMEM;
		/* an item's run is a segment of its own: cut at the begin
		 * and after the end */
		if (ev->type == AE_WORK_BEGIN && (rc = gwork_cut_before(g, ev)))
			return rc;
		thr = attach(g, ev, e, &rc);
		if (rc || ev->type != AE_WORK_END)
			return rc;
		return gwork_cut_after(g, thr, ev->ts);
	case AE_WORK_BOUNDARY:
		e->val = (int64_t)ev->f[ARGUS_F_WI_ITEM];
		thr = attach(g, ev, e, &rc);
		return rc ? rc : gwork_cut_after(g, thr, ev->ts);
	case AE_LIVE_HIT: {     /* a uprobe's work record (graph_work.c) */
		struct argus_event w;

		if (gwork_from_live(ev, &w)) {
			attach(g, ev, e, &rc);   /* a kind we do not know: a plain event */
			return rc;
		}
		return on_event(g, &w);
	}
	default:
		attach(g, ev, e, &rc);
		return rc;
	}
}

/* Close what is still open at the end of the trace. */
static void close_all(struct argus_graph *g)
{
	for (uint32_t i = 0; i < g->thr.n; i++) {
		struct tstate *s = TSTATE(g, i);

		THRS(g)[i].nevents = s->nev;
		if (s->pend_early) {    /* it never went to sleep after all */
			s->pend = s->pend_early = 0;
			g->st.filtered[ARGUS_FILT_RUNNING]++;
		}
		if (s->cur == ARGUS_NONE)
			continue;
		gseg_close(g, i, SEGS(g)[s->cur].end, ARGUS_END_TRACE);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void fill_stats(struct argus_graph *g, uint64_t t0)
{
	struct argus_graph_stats *st = &g->st;
	const struct argus_trace_stats *ts = argus_trace__stats(g->trace);
	uint32_t *pidv = malloc((g->thr.n + 1) * sizeof(*pidv));

	st->vertices = g->seg.n;
	st->edges = gedge_count(g);
	/* edges_by_type: counted by gcsr_build's pass over the edges */
	st->threads = g->thr.n;
	st->processes = 0;
	if (pidv) {     /* distinct pids: sort and count */
		for (uint32_t i = 0; i < g->thr.n; i++)
			pidv[i] = THRS(g)[i].pid;
		qsort(pidv, g->thr.n, sizeof(*pidv), cmp_u32);
		for (uint32_t i = 0; i < g->thr.n; i++)
			st->processes += !i || pidv[i] != pidv[i - 1];
		free(pidv);
	}
	if (ts) {
		st->min_ts = ts->min_ts;
		st->max_ts = ts->max_ts;
		if (!st->lost)
			for (uint32_t c = 0; c < ts->ncpus && c < 256; c++)
				st->lost += ts->cpu[c].lost;
	}
	st->mem_bytes = (uint64_t)g->seg.cap * sizeof(struct argus_segment) +
		(uint64_t)g->shape.cap * sizeof(shape_t) +
		(uint64_t)g->edge.cap * sizeof(struct argus_edge) +
		(uint64_t)g->ev.cap * sizeof(struct gev) +
		(uint64_t)g->bigval.cap * sizeof(int64_t) +
		(uint64_t)g->wide.cap * sizeof(struct gev_wide) +
		(uint64_t)g->blk.cap * sizeof(struct evblk) +
		(uint64_t)g->thr.cap * sizeof(struct argus_thread) +
		(uint64_t)g->obj.cap * sizeof(struct argus_object) +
		((uint64_t)g->obj_idx.cap + g->tid_idx.cap) * sizeof(struct argus_hslot) +
		(uint64_t)(g->seg.n + 1) * 2 * sizeof(uint32_t) +
		(uint64_t)gedge_count(g) * 2 * sizeof(uint32_t) +
		(uint64_t)g->seg.n * sizeof(uint32_t) +
		((uint64_t)g->thr.n + 1) * sizeof(uint32_t);     /* intra_first */
	st->build_ns = mono_ns() - t0;
}

static void build_free(struct argus_graph *g)
{
	if (!g->b)
		return;
	gedges_build_free(g);
	gvec_free(&g->b->ts);
	gvec_free(&g->b->sx);
	free(g->b);
	g->b = NULL;
}

struct argus_graph *argus_graph__build(struct argus_trace *t,
				       const struct argus_graph_opts *opts,
				       struct argus_error *err)
{
	static const struct argus_graph_opts defaults = { .sz = sizeof(defaults) };
	struct argus_graph *g;
	uint64_t t0 = mono_ns(), n = 0;
	int rc = 0;

	if (!opts)
		opts = &defaults;
	if (!t || opts->sz < offsetof(struct argus_graph_opts, progress)) {
		if (err) {
			err->code = -EINVAL;
			err->offset = 0;
			snprintf(err->msg, sizeof(err->msg), "graph: bad arguments");
		}
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g)
		g->b = calloc(1, sizeof(*g->b));
	if (!g || !g->b)
		goto nomem;
	g->trace = t;
	g->b->opts = opts;
	g->b->schema = opts->schema;
	g->b->free_item = ARGUS_NONE;
	g->b->idle_last = ARGUS_NONE;
	if (!gvec_push(&g->obj, sizeof(struct argus_object)))  /* id 0 */
		goto nomem;
	/* the events' times are kept relative to the earliest chunk's start
	 * (graph_view.h); a header that lies only sends events to the wide
	 * slots */
	g->ts_base = UINT64_MAX;
	for (size_t i = 0; i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;

		if (!argus_trace__chunk(t, i, &ci)) {
			g->b->total_events += ci.nevents;
			if (ci.nevents && ci.min_ts < g->ts_base)
				g->ts_base = ci.min_ts;
		}
	}
	if (g->ts_base == UINT64_MAX)
		g->ts_base = 0;
	/* The chunk headers give the event count: reserve the event array
	 * once, with room for the unused tails of the threads' last blocks
	 * (doubling would reserve up to twice the largest array; only what
	 * is used is faulted in, 2 MiB at a time, and the shrink at the end
	 * gives back the rest). */
	if (g->b->total_events && g->b->total_events < ARGUS_NONE / 2) {
		uint64_t cap = g->b->total_events + g->b->total_events / 8 + 64 * EVBLK;

		if (gvec_reserve(&g->ev, sizeof(struct gev), cap) ||
		    gvec_reserve(&g->blk, sizeof(struct evblk), cap / EVBLK))
			goto nomem;
	}
	if ((rc = argus_trace__rewind(t)))
		goto fail;
	/* Whole chunks at a time, in place: no copy of each event. */
	for (;;) {
		const struct argus_event *evs;

		rc = argus_trace__next_batch(t, &evs, err);
		if (rc <= 0)
			break;
		for (int i = 0; i < rc; i++) {
			int erc = on_event(g, &evs[i]);

			if (erc) {
				rc = erc;
				goto fail;
			}
			if (++n % PROGRESS_EVERY == 0 && opts->sz >= sizeof(*opts) &&
			    opts->progress &&
			    opts->progress(opts->progress_ctx, n, g->b->total_events)) {
				rc = -ECANCELED;
				goto fail;
			}
		}
	}
	if (rc < 0)
		goto out_err;   /* *err says which chunk is corrupt */
	g->st.events = n;
	close_all(g);
	gedges_drop_dead(g);
	if (!opts->no_split && (rc = gsplit_batching(g)))
		goto fail;
	if (opts->no_split)     /* not split: say which ones served several */
		for (uint32_t i = 0; i < g->seg.n; i++)
			if (SEGX_IS_MULTI(g, i))
				SEGS(g)[i].flags |= ARGUS_SEG_F_MULTI;
	if ((rc = gcsr_build(g, true)))
		goto fail;
	/* data-flag edges need the per-thread segment index just built; they
	 * are few, so the adjacency is rebuilt once more when there are any */
	if ((rc = gflag_edges(g)) >= 0) {
		int m = gmutex_edges(g);

		rc = m < 0 ? m : rc + m;
	}
	if (rc >= 0) {          /* work items (graph_work.c) */
		int w = gwork_edges(g);

		rc = w < 0 ? w : rc + w;
	}
	if (rc > 0)
		rc = gcsr_build(g, false);
	if (rc < 0)
		goto fail;
	for (uint32_t i = 0; i < g->thr.n; i++)
		gthread_names(g, i);
	build_free(g);
	/* The arrays grew by doubling: give back the unused tail. */
	gvec_shrink(&g->seg, sizeof(struct argus_segment));
	gvec_shrink(&g->shape, sizeof(shape_t));
	gvec_shrink(&g->edge, sizeof(struct argus_edge));
	gvec_shrink(&g->ev, sizeof(struct gev));
	gvec_shrink(&g->bigval, sizeof(int64_t));
	gvec_shrink(&g->wide, sizeof(struct gev_wide));
	gvec_shrink(&g->blk, sizeof(struct evblk));
	gvec_shrink(&g->thr, sizeof(struct argus_thread));
	gvec_shrink(&g->obj, sizeof(struct argus_object));
	fill_stats(g, t0);
	return g;
nomem:
	rc = -ENOMEM;
fail:
	if (err) {
		err->code = rc;
		err->offset = 0;
		snprintf(err->msg, sizeof(err->msg), "graph: %s after %llu events",
			 rc == -ECANCELED ? "cancelled" : strerror(-rc),
			 (unsigned long long)n);
	}
out_err:
	if (g)
		build_free(g);
	argus_graph__free(g);
	return NULL;
}

void argus_graph__free(struct argus_graph *g)
{
	if (!g)
		return;
	build_free(g);
	gvec_free(&g->seg);
	gvec_free(&g->shape);
	gvec_free(&g->edge);
	gvec_free(&g->ev);
	gvec_free(&g->bigval);
	gvec_free(&g->wide);
	gvec_free(&g->blk);
	gvec_free(&g->thr);
	gvec_free(&g->obj);
	gvec_free(&g->marks);
	gvec_free(&g->flag_readers);
	argus_hidx_free(&g->obj_idx);
	argus_hidx_free(&g->tid_idx);
	free(g->out_off);
	free(g->out_ids);
	free(g->in_off);
	free(g->in_ids);
	free(g->thr_segs);
	free(g->intra_first);
	free(g);
}
