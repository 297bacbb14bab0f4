/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_hangs.c - hang intervals of a UI thread, and what a thread did in
 * a time window (busy / blocked / yield).
 *
 * The event loop's wait is the poll family (poll, ppoll, select, pselect6,
 * epoll_wait, epoll_pwait, epoll_pwait2): a hang is a gap longer than the
 * threshold between a return from that wait (sys_exit) and the next call
 * (sys_enter).  A thread that never calls one falls back to "any blocking
 * wait" (segment ends).  A thread still away at the end of the trace has
 * an ongoing hang: the case of a user attaching to a hung app.  Marks
 * (`argus mark`) inside a gap flag it as annotated and make it a hang even
 * below the threshold.
 */
#include <sys/syscall.h>

#include "argus_diag.h"
#include "graph_internal.h"

#define DEFAULT_THRESHOLD_NS 2000000000ull
#define SHORT_WAIT_NS 2000000ull        /* a wait this short is a "yield" */

static bool loop_nr(long nr)
{
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select ||
	       nr == SYS_pselect6 || nr == SYS_epoll_wait ||
	       nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2;
}

const char *argus_hang_kind_str(unsigned kind)
{
	static const char *const n[] = { "none", "busy", "blocked", "yield" };

	return kind < 4 ? n[kind] : NULL;
}

struct gap { uint64_t from, to; uint8_t ongoing; };

static int push_gap(struct gvec *v, uint64_t from, uint64_t to, bool ongoing)
{
	struct gap *g = gvec_push(v, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->from = from;
	g->to = to;
	g->ongoing = ongoing;
	return 0;
}

/* Every interval the thread spent away from its event loop. */
static int loop_gaps(const struct argus_graph *g, uint32_t thr, struct gvec *gaps)
{
	const struct argus_thread *t = &THRS(g)[thr];
	uint64_t back = 0, last = 0;
	bool in_loop = false, any = false, bye = false;
	int rc;

	for (uint32_t e = t->first_event; e != ARGUS_NONE;
	     e = argus_graph__thread_next_event(g, thr, e)) {
		const struct argus_gevent *ev = &EVS(g)[e];

		if (ev->ctx != AE_CTX_TASK)
			continue;
		last = ev->ts;
		if (ev->type == AE_SYS_ENTER && (ev->nr == SYS_exit_group || ev->nr == SYS_exit))
			bye = true;
		if (ev->type == AE_SYS_ENTER && loop_nr(ev->nr)) {
			if (any && !in_loop && (rc = push_gap(gaps, back, ev->ts, false)))
				return rc;
			in_loop = true;
			any = true;
		} else if (ev->type == AE_SYS_EXIT && loop_nr(ev->nr)) {
			/* -ERESTARTSYS .. -ERESTART_RESTARTBLOCK: the wait was
			 * interrupted (a signal, a debugger attaching) and will
			 * be restarted: the thread never left its loop */
			if (ev->val <= -512 && ev->val >= -516)
				continue;
			back = ev->ts;
			in_loop = false;
			any = true;
		}
	}
	if (any) {
		uint64_t end = g->st.max_ts > last ? g->st.max_ts : last;
		const uint32_t *v;
		uint32_t n = argus_graph__thread_segments(g, thr, &v);

		/* Stopped at the end (a debugger attached): the hang in progress
		 * ends where the stop began, not at the end of the trace. */
		if (n && (SEGS(g)[v[n - 1]].flags & ARGUS_SEG_F_STOPPED))
			end = SEGS(g)[v[n - 1]].end;
		/* Left its loop and exited by itself (exit_group): the app shutting
		 * down, not a hang (under ASan the leak check before exit_group
		 * alone takes seconds).  Killed while away from its loop: a hang
		 * that ended with the kill, the usual end of a real one. */
		if (n && SEGS(g)[v[n - 1]].end_reason == ARGUS_END_EXIT) {
			if (bye || in_loop)
				return 0;
			end = SEGS(g)[v[n - 1]].end;
			return end > back ? push_gap(gaps, back, end, false) : 0;
		}
		if (!in_loop && end > back)
			return push_gap(gaps, back, end, true);
		return 0;
	}
	/* No poll-family call: any blocking wait counts as the loop. */
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);

	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = &SEGS(g)[v[i]];

		if ((rc = push_gap(gaps, s->start, s->end,
				   s->end_reason == ARGUS_END_TRACE)))
			return rc;
	}
	return 0;
}

int argus_diag__hangs(const struct argus_graph *g,
		      const struct argus_hang_opts *opts,
		      struct argus_hang **out, uint32_t *n)
{
	uint64_t thr_ns = opts && opts->threshold_ns ? opts->threshold_ns
						     : DEFAULT_THRESHOLD_NS;
	struct gvec gaps = { 0 }, hangs = { 0 };
	uint32_t tid, thr;
	int rc;

	*out = NULL;
	*n = 0;
	if (!g || !opts || !opts->pid)
		return -EINVAL;
	tid = opts->tid ? opts->tid : opts->pid;
	thr = argus_graph__thread_by_tid(g, tid);
	if (thr == ARGUS_NONE || THRS(g)[thr].pid != opts->pid)
		return -ENOENT;
	if ((rc = loop_gaps(g, thr, &gaps)))
		goto out;
	for (uint32_t i = 0; i < gaps.n; i++) {
		const struct gap *gp = &GV(gaps, struct gap)[i];
		uint32_t mark = 0;
		struct argus_hang *h;

		/* marks come from `argus mark`, with no thread: match by time */
		for (uint32_t k = 0; k < g->marks.n && !mark; k++) {
			const struct argus_gevent *me = &EVS(g)[GV(g->marks, uint32_t)[k]];

			if (me->ts >= gp->from && me->ts <= gp->to)
				mark = me->str ? me->str : ARGUS_NONE;
		}
		if (gp->to - gp->from < thr_ns && !mark)
			continue;
		h = gvec_push(&hangs, sizeof(*h));
		if (!h) {
			rc = -ENOMEM;
			goto out;
		}
		h->tid = tid;
		h->pid = opts->pid;
		h->start = gp->from;
		h->end = gp->to;
		h->ongoing = gp->ongoing;
		h->annotated = mark != 0;
		h->mark = mark == ARGUS_NONE ? 0 : mark;
		h->seg = argus_graph__segment_at(g, tid, gp->from + (gp->to - gp->from) / 2);
	}
	*out = hangs.p;
	*n = hangs.n;
	hangs.p = NULL;
out:
	gvec_free(&gaps);
	gvec_free(&hangs);
	return rc;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

int argus_diag__activity(const struct argus_graph *g, uint32_t tid,
			 uint64_t from, uint64_t to, struct argus_activity *a)
{
	uint32_t thr = argus_graph__thread_by_tid(g, tid), n;
	uint64_t win = to > from ? to - from : 1, best_cpu = 0;
	const uint32_t *v;

	memset(a, 0, sizeof(*a));
	a->wait_seg = a->busy_seg = ARGUS_NONE;
	if (thr == ARGUS_NONE)
		return -ENOENT;
	n = argus_graph__thread_segments(g, thr, &v);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = &SEGS(g)[v[i]];
		uint64_t wend = i + 1 < n ? SEGS(g)[v[i + 1]].start :
			(s->end_reason == ARGUS_END_WAIT ? g->st.max_ts : s->end);
		uint64_t run = overlap(s->start, s->end, from, to), w, cpu;

		if (s->start > to)
			break;
		a->run_ns += run;
		if (run) {
			cpu = s->end > s->start ?
				(uint64_t)((double)s->oncpu * (double)run /
					   (double)(s->end - s->start)) : 0;
			a->oncpu_ns += cpu;
			if (cpu >= best_cpu) {
				best_cpu = cpu;
				a->busy_seg = v[i];
			}
		}
		if (s->end_reason != ARGUS_END_WAIT)
			continue;
		w = overlap(s->end, wend, from, to);
		a->asleep_ns += w;
		if (s->end >= from && s->end < to) {
			a->waits++;
			if (wend - s->end < SHORT_WAIT_NS)
				a->short_waits++;
		}
		if (w > a->wait_ns) {
			a->wait_ns = w;
			a->wait_seg = v[i];
		}
	}
	/* sched_yield does not sleep (the switch is "runnable"): count calls,
	 * by their exits (the collector records no entry for it) */
	for (uint32_t e = THRS(g)[thr].first_event; e != ARGUS_NONE;
	     e = argus_graph__thread_next_event(g, thr, e)) {
		const struct argus_gevent *ev = &EVS(g)[e];

		if (ev->ts > to)
			break;
		if (ev->ts < from)
			continue;
		if (ev->type == AE_SAMPLE)
			a->samples++;
		else if (ev->type == AE_SYS_EXIT && ev->nr == SYS_sched_yield)
			a->short_waits++;
	}
	/* Busy is "running or runnable more than asleep": on a loaded machine
	 * a thread that computes may spend most of the window preempted, and
	 * that is not a wait on anyone (on-CPU < 50% read as blocked, with no
	 * wait to blame).  Time the thread was not there (before its start,
	 * after its exit) counts for neither.  The report's on-CPU figure
	 * tells computing from starved. */
	if (a->short_waits >= 20 && a->wait_ns < win / 2)
		a->kind = ARGUS_KIND_YIELD;
	else if (a->run_ns > a->asleep_ns)
		a->kind = ARGUS_KIND_BUSY;
	else
		a->kind = ARGUS_KIND_BLOCKED;
	return 0;
}
