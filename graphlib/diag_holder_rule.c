/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_holder_rule.c - the diagnosis's side of the schema's `holder`
 * rules (docs/schema.md, "Holders only the application knows";
 * docs/diagnosis.md, rule holder-rule).
 *
 * Some waits name no object the kernel can follow: a PostgreSQL backend
 * waiting for another transaction's row lock sleeps in epoll_wait on its
 * own latch, and only PostgreSQL's lock manager knows whose transaction
 * it waits for.  When the diagnosis reaches such a wait and nobody has
 * ended it yet (a hang in progress, on the live system), it asks the host
 * (argus_diag_opts.wait_holders) with the thread and its wait stack; the
 * host symbolizes the stack, matches the rules' functions and runs the
 * command of the first rule that applies.  Here: which thread of the
 * processes it names the chain goes on with.
 *
 * graphlib runs nothing and reads no /proc: the pids come from the host,
 * which has checked them (they exist, they are not the waiter).
 */
#include "argus_diag.h"
#include "diag_internal.h"

/* The segment after the wait that ends segment s, as the diagnosis sees
 * it: through a debugger's stops (graph_debugger.c), and none while the
 * thread sits in a stop nobody woke it from. */
static uint32_t after_wait(const struct argus_graph *g, uint32_t s)
{
	uint32_t last, next;

	argus_graph__wait_through(g, s, &last, &next);
	if (next != ARGUS_NONE && (argus_graph__segment(g, next)->flags & ARGUS_SEG_F_STOPPED) &&
	    diag_waker_edge(g, next) == ARGUS_NONE)
		next = ARGUS_NONE;
	return next;
}

/* Segment next was woken by its own thread's timer (a timeout). */
static bool own_timer(const struct argus_graph *g, uint32_t next)
{
	const uint32_t *ids;
	uint32_t n = argus_graph__in_edges(g, next, &ids);

	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (e->type == ARGUS_EDGE_TIMER && (e->flags & ARGUS_EDGE_F_WOKE) &&
		    argus_graph__segment(g, e->src)->thread ==
			    argus_graph__segment(g, next)->thread)
			return true;
	}
	return false;
}

/* The wait of h's thread still open at the end of the trace: h itself
 * when nobody ended it; else, when its own timer ended it and the thread
 * went back to the same call, again and again, the last of those waits
 * (a wait retried: PostgreSQL's ProcSleep wakes after deadlock_timeout,
 * checks for a deadlock and sleeps again, and the first 1 s wait can be
 * the one the chain judges).  ARGUS_NONE when the wait has ended. */
#define MAX_RETRIES 16
static uint32_t open_wait(const struct argus_graph *g, uint32_t h)
{
	uint32_t s = h;

	for (int i = 0; i <= MAX_RETRIES; i++) {
		uint32_t next = after_wait(g, s);

		if (next == ARGUS_NONE)
			return s;
		if (!own_timer(g, next))
			return ARGUS_NONE;
		/* the thread runs (a deadlock check) and waits again */
		for (s = next; s != ARGUS_NONE &&
			       argus_graph__segment(g, s)->end_reason != ARGUS_END_WAIT;
		     s = argus_graph__seg_next(g, s))
			;
		if (s == ARGUS_NONE ||
		    argus_graph__segment(g, s)->wait_nr != argus_graph__segment(g, h)->wait_nr)
			return ARGUS_NONE;
	}
	return ARGUS_NONE;
}

/* The thread of process pid the chain goes on with: the hung thread or a
 * thread already in the chain when one is of pid (it closes the cycle),
 * else its main thread, else any of its user threads; ARGUS_NONE when the
 * graph has none of its threads. */
static uint32_t thread_for(const struct argus_graph *g, const struct argus_diagnosis *d,
			   uint32_t pid)
{
	uint32_t thr;

	if (pid == d->hang.pid)
		return d->hang.tid;
	for (uint32_t j = 0; j < d->nchain; j++)
		if (d->chain[j].pid == pid)
			return d->chain[j].tid;
	thr = argus_graph__thread_by_tid(g, pid);
	if (thr != ARGUS_NONE && argus_graph__thread(g, thr)->pid == pid)
		return pid;
	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *t = argus_graph__thread(g, i);

		if (t->pid == pid && !t->kernel)
			return t->tid;
	}
	return ARGUS_NONE;
}

/*
 * Thread tid, blocked in segment h (hs: the segment its wait began in,
 * wait_origin), whose wait nobody has ended (or that it retried after its
 * own timeout, and that retry nobody has ended: open_wait): asks the
 * host's holder rules about the open wait, with its stack.
 * Returns the tid to blame -- a thread of the first process named that
 * the graph has, else the first process named (its pid: a holder asleep
 * since before the trace, known only live) -- or ARGUS_NONE.
 */
uint32_t diag_holder_rule_pick(const struct argus_graph *g, const struct argus_diag_opts *o,
			       const struct argus_diagnosis *d, uint32_t tid, uint32_t h, uint32_t hs)
{
	uint32_t pids[ARGUS_LIVE_MAX_PIDS], n, self, stack, pick = ARGUS_NONE, other = ARGUS_NONE;

	uint32_t w;

	if (!o->wait_holders || argus_graph__segment(g, h)->end_reason != ARGUS_END_WAIT ||
	    (w = open_wait(g, h)) == ARGUS_NONE)
		return ARGUS_NONE;
	self = argus_graph__seg_thread(g, h)->pid;
	stack = argus_graph__segment(g, w)->wait_stack;
	if (!stack && w == h)
		stack = argus_graph__segment(g, hs)->wait_stack;
	if (!stack)
		return ARGUS_NONE;      /* a rule matches a function on the stack */
	n = o->wait_holders(o->wait_holders_ctx, self, tid, stack, pids, ARGUS_LIVE_MAX_PIDS);
	if (n > ARGUS_LIVE_MAX_PIDS)
		n = ARGUS_LIVE_MAX_PIDS;
	for (uint32_t i = 0; i < n && pick == ARGUS_NONE; i++) {
		if (!pids[i] || pids[i] == self)
			continue;       /* the host checks it; never the waiter */
		pick = thread_for(g, d, pids[i]);
		if (pick == tid)
			pick = ARGUS_NONE;
		if (other == ARGUS_NONE)
			other = pids[i];
	}
	return pick != ARGUS_NONE ? pick : other;
}
