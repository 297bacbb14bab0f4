/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_debugger.c - a debugger's stops are never the program's causality
 * (docs/diagnosis.md, "A debugger's stops").
 *
 * Attaching stops every thread of the program.  What the kernel records
 * for a thread blocked in a syscall (flock, poll, read, futex...):
 *
 *   switch-out, waiting in the call           (the program's wait)
 *   waking by the tracer (lldb-server)        (the attach's SIGSTOP)
 *   switch-in; sys_exit = -ERESTARTSYS        (-512..-516: the call is
 *                                              to be restarted)
 *   switch-out, prev_state __TASK_TRACED      (a ptrace stop)
 *   waking by the tracer                      (continue / detach)
 *   switch-in; sys_enter of the same call     (the kernel restarts it)
 *   switch-out, waiting in the call again
 *   ...the program's real wake-up
 *
 * So, in the graph:
 *   - the attach's wake-up begins a segment that ends in a ptrace stop
 *     without returning from a syscall (an "interrupt segment"): it is no
 *     edge (gdebug_interrupted, at that switch-out; the edge was made at
 *     the switch-in and is dropped before the adjacency is built);
 *   - the wake-up of a thread in a ptrace stop is its tracer's resume: no
 *     edge (graph_edges.c, debugger_resume);
 *   - for the hangs and the diagnosis, a wait an attach interrupted goes
 *     on through the stop(s) and the restarted call, until the call
 *     returns (argus_graph__wait_through, argus_graph__wait_began, the
 *     API's queries): the stop is neither the wait's end nor its culprit,
 *     and a thread still stopped, or still in the restarted call, at the
 *     end of the trace is still in its wait.
 * A call restarted at once, with no stop (a signal with no handler, such
 * as SIGCHLD), goes on the same way.
 * A thread stopped while it ran (a busy hang, Ctrl-C in lldb) is not in a
 * wait: its stop only cuts its run (diag_hangs.c).  A real signal that
 * arrives while a debugger is attached shows the same way as the attach
 * (the tracer sees every signal first); it is dropped with it.
 */
#include <sys/syscall.h>

#include "graph_internal.h"

void gdebug_interrupted(struct argus_graph *g, uint32_t thr)
{
	struct tstate *s = TSTATE(g, thr);
	struct argus_segment *seg;
	unsigned exit1;

	if (s->cur == ARGUS_NONE)
		return;
	seg = &SEGS(g)[s->cur];
	exit1 = SHAPE_EXIT1(SHAPES(g)[s->cur]);
	if (seg->start_reason != ARGUS_START_WAKE ||
	    (exit1 != SHAPE_EXIT1_NONE && exit1 != SHAPE_EXIT1_RESTART))
		return;
	if (seg->woken_by == ARGUS_WOKEN_EDGE && s->wake_edge != ARGUS_NONE &&
	    EDGES(g)[s->wake_edge].dst == s->cur) {
		EDGES(g)[s->wake_edge].type = 0;        /* dead: gedges_drop_dead */
		g->b->dead_edges++;
		s->wake_edge = s->msg_edge = ARGUS_NONE;
		seg->woken_by = ARGUS_WOKEN_DEBUGGER;
		g->st.filtered[ARGUS_FILT_DEBUGGER]++;
	}
}

void gedges_drop_dead(struct argus_graph *g)
{
	struct argus_edge *e = EDGES(g);
	uint32_t n = 0;

	if (!g->b->dead_edges)
		return;
	for (uint32_t i = 0; i < g->edge.n; i++)
		if (e[i].type)
			e[n++] = e[i];
	g->edge.n = n;
	g->b->dead_edges = 0;
	g->csr_dirty = true;
}

/* Segment seg (a valid id) ends in an attach's interrupt
 * (argus_graph__seg_interrupted). */
static bool interrupt_seg(const struct argus_graph *g, uint32_t seg)
{
	const struct argus_segment *s = &SEGS(g)[seg];
	unsigned e = SHAPE_EXIT1(SHAPES(g)[seg]);

	/* woken out of a wait: a thread stopped while it ran (no syscall
	 * in a segment begun at the trace's start) is not in a wait */
	return (s->flags & ARGUS_SEG_F_TRACED) && s->end_reason == ARGUS_END_WAIT &&
	       s->start_reason == ARGUS_START_WAKE &&
	       (e == SHAPE_EXIT1_NONE || e == SHAPE_EXIT1_RESTART);
}

/* Segment seg was woken out of a wait only for its call to be restarted
 * at once, with no stop (a signal with no handler, SIGCHLD's default, or
 * SA_RESTART whose handler made no syscall): its every syscall exit is
 * -ERESTART*, and it blocks again, in the restarted call.  Rare: the
 * events are read only when its first exit is a restart. */
static bool restart_seg(const struct argus_graph *g, uint32_t seg)
{
	const struct argus_segment *s = &SEGS(g)[seg];

	if (SHAPE_EXIT1(SHAPES(g)[seg]) != SHAPE_EXIT1_RESTART || s->end_reason != ARGUS_END_WAIT ||
	    (s->flags & ARGUS_SEG_F_STOPPED))
		return false;
	for (uint32_t e = s->first_event; e != ARGUS_NONE; e = argus_graph__seg_next_event(g, seg, e)) {
		const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);

		if (ev->type == AE_SYS_EXIT && !(ev->val <= -512 && ev->val >= -516))
			return false;
	}
	return true;
}

int argus_graph__seg_interrupted(const struct argus_graph *g, uint32_t seg)
{
	return g && seg < g->seg.n && interrupt_seg(g, seg);
}

int argus_graph__wait_may_continue(const struct argus_graph *g, uint32_t seg)
{
	if (!g || seg >= g->seg.n)
		return 0;
	return interrupt_seg(g, seg) ||
	       (SHAPE_EXIT1(SHAPES(g)[seg]) == SHAPE_EXIT1_RESTART &&
		SEGS(g)[seg].end_reason == ARGUS_END_WAIT);
}

uint32_t argus_graph__wait_through(const struct argus_graph *g, uint32_t seg, uint32_t *last,
				   uint32_t *next)
{
	uint32_t steps = 1, k;

	*last = seg;
	*next = ARGUS_NONE;
	if (!g || seg >= g->seg.n)
		return 0;
	k = argus_graph__seg_next(g, seg);
	while (k != ARGUS_NONE && !interrupt_seg(g, k) && restart_seg(g, k)) {
		*last = k;              /* restarted at once, blocked again */
		k = argus_graph__seg_next(g, k);
		steps++;
	}
	while (k != ARGUS_NONE && interrupt_seg(g, k)) {
		/* stopped after k; r runs when the tracer lets it go (another
		 * stop at once is the same stop: a debugger's interrupt and
		 * continue while it looks around) */
		uint32_t r = argus_graph__seg_next(g, k), rsteps = steps + 1;
		const struct argus_segment *rs;
		unsigned e;

		while (r != ARGUS_NONE && interrupt_seg(g, r)) {
			r = argus_graph__seg_next(g, r);
			rsteps++;
		}
		if (r == ARGUS_NONE) {          /* still stopped at the end */
			k = ARGUS_NONE;
			steps = rsteps;
			break;
		}
		rs = &SEGS(g)[r];
		e = SHAPE_EXIT1(SHAPES(g)[r]);
		if (e != SHAPE_EXIT1_NONE && e != SHAPE_EXIT1_RESTART) {
			k = r;                  /* the call returned: the wait ended */
			steps = rsteps;
			break;
		}
		if (rs->end_reason == ARGUS_END_TRACE) {
			k = ARGUS_NONE;         /* let go, and the trace ends
			                           before the call is back */
			steps = rsteps + 1;
			break;
		}
		if (rs->end_reason != ARGUS_END_WAIT || (rs->flags & ARGUS_SEG_F_STOPPED)) {
			k = r;
			steps = rsteps;
			break;
		}
		*last = r;                      /* the restarted call blocked again */
		k = argus_graph__seg_next(g, r);
		steps = rsteps + 1;
		while (k != ARGUS_NONE && !interrupt_seg(g, k) && restart_seg(g, k)) {
			*last = k;
			k = argus_graph__seg_next(g, k);
			steps++;
		}
	}
	*next = k;
	return steps;
}

uint32_t argus_graph__wait_began(const struct argus_graph *g, uint32_t seg)
{
	if (!g || seg >= g->seg.n)
		return ARGUS_NONE;
	for (int guard = 0; guard < 64; guard++) {
		uint32_t p = argus_graph__seg_prev(g, seg);

		if (p == ARGUS_NONE || !interrupt_seg(g, p))
			break;
		while (p != ARGUS_NONE && interrupt_seg(g, p))
			p = argus_graph__seg_prev(g, p);
		/* the restarted call: the same syscall, or restart_syscall
		 * (a call with a timeout: poll, nanosleep, futex) */
		if (p == ARGUS_NONE || SEGS(g)[p].end_reason != ARGUS_END_WAIT ||
		    (SEGS(g)[p].flags & ARGUS_SEG_F_STOPPED) ||
		    (SEGS(g)[p].wait_nr != SEGS(g)[seg].wait_nr &&
		     SEGS(g)[seg].wait_nr != SYS_restart_syscall))   /* one-off: the same call resumed */
			break;
		seg = p;
	}
	return seg;
}
