/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_hangs.c - hangs of any thread, and what a thread did in a time
 * window (busy / blocked / yield).  docs/diagnosis.md §1 is the prose.
 *
 * A thread's *idle wait* is where it waits for new work: its event loop.
 * It is learned per thread, from the thread's own waits (struct twait):
 *
 *   - an epoll wait is idle (an epoll set is an event loop by design);
 *   - a poll/ppoll on two or more fds is idle (a loop watches several
 *     sources; a library waiting for one reply watches its one socket);
 *   - a poll on one fd, or a select, is idle unless it has the shape of a
 *     request and its reply: the thread's last operation on a connection
 *     (pipe, unix, TCP, UDP socket) before the wait was an output (write,
 *     send, connect) and the first one after it is an input on that same
 *     connection (or, for a wait still open, no reply has come yet).
 *     That is how libpq, libdbus, xcb and curl wait inside poll();
 *   - under ARGUS_IDLE_POLL every poll-family wait is idle, under
 *     ARGUS_IDLE_NONE none is (the user overrides a wrong guess).
 *
 * A thread with an idle wait hangs when it stays away from it (from a
 * return to the next call) longer than the threshold: a poll-family call
 * counts as a visit of the loop unless it blocked in a reply wait.
 * A thread with none (a command-line tool, a script, a worker) hangs in
 * any single wait of at least the threshold, and in any stretch between
 * such waits (runs, short waits, a retry loop's sleeps) of at least the
 * threshold.  Sleeps (nanosleep) never cut a stretch: a retry loop that
 * sleeps a second between tries is one hang, not many.
 *
 * Either way a thread still away at the end of the trace has an ongoing
 * hang (a user attaching to a hung app), and a debugger's stop ends it.
 * Marks (`argus mark`) inside an interval make it a hang whatever its
 * length.  Waits for a child (wait4) and stretches that are one sleep are
 * flagged deliberate: machine-wide lists leave them out by default (a
 * shell waits for every command it runs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "diag_internal.h"
#include "graph_view.h"
#include "gvec.h"
#include "hang_rule.h"

#define DEFAULT_THRESHOLD_NS 2000000000ull

/* the syscall classes of the hang model (syscalls/hang_rule.h) */
#define loop_nr hang_rule_loop_nr
#define epoll_nr hang_rule_epoll_nr
#define sleep_nr hang_rule_sleep_nr
#define child_nr hang_rule_child_nr
#define visit_nr hang_rule_visit_nr   /* the calls the loop pass follows */

const char *argus_hang_kind_str(unsigned kind)
{
	static const char *const n[] = { "none", "busy", "blocked", "yield" };

	return kind < 4 ? n[kind] : NULL;
}

/* ---- the thread's waits and their shape ------------------------------- */

/* One blocking wait of a thread: from its switch-out to the switch-in
 * after the wake-up.  Its shape comes from the segments' SHAPE_* bytes
 * (graph_view.h), filled while the graph was built: no event is read. */
struct twait {
	uint64_t from, to;      /* ns; to = the end of the trace when ongoing */
	uint32_t seg;           /* the segment the wait ends */
	uint32_t si;            /* that segment's place in the thread's list */
	int32_t nr;             /* syscall blocked in, -1 unknown */
	uint8_t ongoing;        /* nobody has ended it (or a debugger did) */
	uint8_t many_fds;       /* poll/ppoll on two or more fds */
	uint8_t out_new;        /* an output on a connection since the previous
	                           wait (in the segments that lead to it) */
	uint8_t out;            /* an output on a connection since the last
	                           idle wait (a request is outstanding) */
	uint8_t reply;          /* the first connection op after it is an
	                           input on the connection written last */
	uint8_t exit1;          /* SHAPE_EXIT1_* of the first syscall exit after it */
	uint8_t call_new;       /* a return (not a restart) since the previous
	                           wait: no earlier wait is in its call */
	uint8_t timed_out;      /* a futex wait that ended by its timeout */
	uint8_t round;          /* a sleep: HANG_TRY_* of the syscalls since
	                           the previous sleep (hang_rule_round_idle) */
	uint8_t tries_new;      /* HANG_TRY_* of the syscalls since the
	                           previous wait */
	uint8_t cont;           /* it continues the previous wait, a poll that
	                           timed out (hang_rule_poll_continues) */
	uint8_t idle;           /* judged an idle wait */
};

/* A wait whose next segment (v[next]) is a debugger's (or SIGSTOP's)
 * stop that nobody woke, and after which nothing but its tracer woke the
 * thread to the end of the trace: the app's wait has not ended, the
 * thread is still held.  One the tracer let go on, and that something
 * else woke later, is not: `argus inject` stops a thread blocked in
 * read() for a moment, and its restarted read ends by the app's own
 * wake-up; taken as ongoing, that moment became "the ongoing hang" that
 * `argus diagnose --pid` prefers to the 3 s mutex wait that followed
 * (e2e_live_inject_mutex under ASan, where the stop lasted 140 ms).
 * last_woken: the index in v of the thread's last segment woken by an
 * edge that is not itself cut short by a stop (an expression lldb runs in
 * the held thread may block and be woken, and stop again: still held),
 * -1 if none (last_woken_seg()). */
static bool stopped_next(const struct argus_graph *g, const struct gview *gv, const uint32_t *v,
			 uint32_t next, long last_woken)
{
	return (gv->seg[v[next]].flags & ARGUS_SEG_F_STOPPED) &&
	       diag_waker_edge(g, v[next]) == ARGUS_NONE && last_woken <= (long)next;
}

static long last_woken_seg(const struct argus_graph *g, const struct gview *gv, const uint32_t *v,
			   uint32_t n)
{
	for (uint32_t k = n; k-- > 0;)
		if (!(gv->seg[v[k]].flags & ARGUS_SEG_F_STOPPED) &&
		    diag_waker_edge(g, v[k]) != ARGUS_NONE)
			return (long)k;
	return -1;
}

/* The waits of one thread. */
struct wpass {
	struct gvec waits;      /* struct twait, time-ordered */
};

/* The thread's waits and their shape, from its segments in time order:
 * each segment's SHAPE_* byte settles what the waits before it were
 * waiting for (the first connection op and the first syscall exit after
 * a wait) and adds to the waits after it (poll's fd count, outputs). */
static int waits_begin(const struct argus_graph *g, uint32_t thr, struct wpass *p)
{
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);
	uint64_t max_ts = argus_graph__stats(g)->max_ts;
	struct gview gv;
	uint32_t reply_from = 0, exit_from = 0;
	unsigned run_exit1 = SHAPE_EXIT1_NONE, round = 0, run_tries = 0;
	bool many = false, run_out = false;
	long last_woken = -2;   /* not looked for yet (stopped_next) */

	memset(p, 0, sizeof(*p));
	gview_get(g, &gv);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = &gv.seg[v[i]];
		shape_t b = gv.shape[v[i]];
		struct twait *w = p->waits.p;

		if (b & SHAPE_CONN)
			for (; reply_from < p->waits.n; reply_from++)
				w[reply_from].reply = (b & SHAPE_CONN1_REPLY) && !w[reply_from].ongoing;
		if (SHAPE_EXIT1(b)) {
			for (; exit_from < p->waits.n; exit_from++) {
				w[exit_from].exit1 = SHAPE_EXIT1(b);
				/* one-off: a timed futex wait (hang_rule.h) */
				w[exit_from].timed_out = w[exit_from].nr == SYS_futex &&
							 SHAPE_EXIT1(b) == SHAPE_EXIT1_TIMEDOUT;
			}
			if (run_exit1 == SHAPE_EXIT1_NONE)
				run_exit1 = SHAPE_EXIT1(b);
		}
		if (b & SHAPE_POLL)
			many = b & SHAPE_POLL_MANY;
		run_out |= !!(b & SHAPE_OUT);
		round |= SHAPE_TRIES(b);
		run_tries |= SHAPE_TRIES(b);
		if (s->end_reason != ARGUS_END_WAIT || (s->flags & ARGUS_SEG_F_STOPPED))
			continue;
		if (!(w = gvec_push(&p->waits, sizeof(*w))))
			return -ENOMEM;
		w->from = s->end;
		w->seg = v[i];
		w->si = i;
		w->nr = s->wait_nr;
		w->many_fds = argus_sys_is_pollfd(w->nr) && many;
		w->out_new = run_out;
		w->call_new = run_exit1 == SHAPE_EXIT1_PLAIN || run_exit1 == SHAPE_EXIT1_TIMEDOUT;
		w->tries_new = (uint8_t)run_tries;
		run_tries = 0;
		if (sleep_nr(w->nr)) {
			w->round = (uint8_t)round;
			round = 0;
		}
		uint32_t last = v[i], nseg, next = i + 1;

		/* (rare: look closer) */
		if (next < n && argus_graph__wait_may_continue(g, v[next]))
			next = i + argus_graph__wait_through(g, v[i], &last, &nseg);
		if (next < n) {
			w->to = gv.seg[v[next]].start;
			if (last_woken == -2)
				last_woken = last_woken_seg(g, &gv, v, n);
			w->ongoing = last == v[i] && stopped_next(g, &gv, v, next, last_woken);
		} else {
			w->to = max_ts > w->from ? max_ts : w->from;
			w->ongoing = 1;
		}
		run_out = false;
		run_exit1 = SHAPE_EXIT1_NONE;
		/* a debugger's stops inside the wait: the segments up to the
		 * one it ends in are the same wait (what they hold is the
		 * restarted call's entry, no exit) */
		i = next - 1;
	}
	return 0;
}

/* The waits' idle verdicts.  Returns whether the thread has an idle wait
 * (a loop thread). */
static bool waits_end(struct wpass *p, unsigned rule)
{
	struct twait *w = p->waits.p;
	uint32_t nw = p->waits.n;
	bool polls = false, loop = false, out = false;

	uint32_t idle_rounds = 0;

	for (uint32_t i = 0; i < nw && !polls; i++)
		polls = loop_nr(w[i].nr);
	for (uint32_t i = 0; i < nw; i++)
		idle_rounds += sleep_nr(w[i].nr) && hang_rule_round_idle(w[i].round);
	for (uint32_t i = 1; i < nw; i++)
		w[i].cont = hang_rule_poll_continues(loop_nr(w[i - 1].nr) &&
						     w[i - 1].exit1 == SHAPE_EXIT1_TIMEDOUT,
						     w[i].nr, w[i].tries_new);
	for (uint32_t i = 0; i < nw; i++) {
		out |= w[i].out_new;
		/* a chain of poll retries entered with a request outstanding
		 * and answered by its reply: one reply wait (hang_rule.h) */
		if (rule == ARGUS_IDLE_LEARN && out && i + 1 < nw && w[i + 1].cont) {
			uint32_t b = i + 1;

			while (b + 1 < nw && w[b + 1].cont)
				b++;
			if (w[b].ongoing || w[b].reply) {
				for (uint32_t k = i; k <= b; k++)
					w[k].out = 1;
				i = b;
				continue;
			}
		}
		/* a timed futex wait that times out, in a thread with no event
		 * loop: a worker's periodic tick or timed wait for work, not a
		 * wait on anyone.  (A loop thread's timed futex wait is a
		 * synchronous wait with a timeout: case study 1's browser.) */
		if (w[i].timed_out && rule == ARGUS_IDLE_LEARN && !polls)
			w[i].idle = 1;
		/* a sleep after a round of tries that worked: the rest of a
		 * periodic idle loop (a retry loop's tries fail) */
		if (sleep_nr(w[i].nr) && rule != ARGUS_IDLE_NONE && hang_rule_round_idle(w[i].round) &&
		    idle_rounds >= HANG_IDLE_ROUNDS)
			w[i].idle = 1;
		if (loop_nr(w[i].nr) && rule != ARGUS_IDLE_NONE) {
			/* a request is outstanding when the thread sent
			 * something since it last sat in its idle wait (a
			 * client library reads earlier answers before it
			 * waits for the one it wants) */
			w[i].out = out;
			if (rule == ARGUS_IDLE_POLL || epoll_nr(w[i].nr) || w[i].many_fds)
				w[i].idle = 1;
			else    /* a request then its reply: a synchronous call */
				w[i].idle = !(w[i].out && (w[i].ongoing || w[i].reply));
			if (w[i].idle)
				out = false;
		}
		loop |= w[i].idle;
	}
	return loop;
}

/* ---- intervals ------------------------------------------------------- */

struct gap { uint64_t from, to; uint8_t ongoing; uint8_t loop; uint8_t dormant; };

static int push_gap(struct gvec *v, uint64_t from, uint64_t to, bool ongoing, bool loop)
{
	struct gap *g = gvec_push(v, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->from = from;
	g->to = to;
	g->ongoing = ongoing;
	g->loop = loop;
	return 0;
}

/* What the call [enter, exit] blocked in: CALL_RAN (no wait), CALL_IDLE
 * (an idle wait) or CALL_AWAY (a wait that is not idle: a reply wait).
 * *wi advances over the time-ordered waits. */
enum { CALL_RAN, CALL_IDLE, CALL_AWAY };

static int call_kind(const struct twait *w, uint32_t nw, uint32_t *wi, uint64_t enter,
		     uint64_t exit)
{
	int k = CALL_RAN;

	while (*wi < nw && w[*wi].from < enter)
		(*wi)++;
	for (uint32_t j = *wi; j < nw && w[j].from <= exit; j++)
		k = !w[j].idle ? CALL_AWAY : k == CALL_RAN ? CALL_IDLE : k;
	/* a call that did not block, between two polls of a chain that is
	 * a reply wait (curl's zero-timeout poll between its 1 s rounds):
	 * inside that one wait */
	if (k == CALL_RAN && *wi < nw && *wi > 0 && w[*wi].cont && !w[*wi].idle &&
	    w[*wi - 1].to <= enter)
		k = CALL_AWAY;
	return k;
}

/* A visit of the idle loop: a poll-family call that did not block in a
 * reply wait, or a futex call or a sleep that blocked in an idle wait (a
 * worker's timed-out tick, an idle loop's rest). */
static bool loop_visit(long nr, int kind)
{
	return loop_nr(nr) ? kind != CALL_AWAY : visit_nr(nr) && kind == CALL_IDLE;
}

/* The state of the loop pass over a loop thread's events: every interval
 * it spent away from its idle wait goes to gaps. */
struct lpass {
	const struct twait *w;
	uint32_t nw, wi;
	uint64_t back, last, enter;
	bool in_loop, any, bye, in_call;
	bool poll_loop;         /* an idle wait is a poll-family one: an event loop */
	bool restarted;         /* the call's last exit was -ERESTART*: the
	                           next syscall says whether it goes on */
	uint64_t restart_ts;    /* that exit */
	long call_nr;
	struct gvec gaps;       /* struct gap */
};

static void loop_begin(const struct wpass *wp, struct lpass *lp)
{
	memset(lp, 0, sizeof(*lp));
	lp->w = wp->waits.p;
	lp->nw = wp->waits.n;
	lp->call_nr = -1;
	for (uint32_t i = 0; i < lp->nw && !lp->poll_loop; i++)
		lp->poll_loop = lp->w[i].idle && loop_nr(lp->w[i].nr);
}

/* The call lp is in returned at ts (not a restart): a visit of the loop,
 * unless it was a synchronous call's wait for its reply. */
static int loop_return(struct lpass *lp, long nr, uint64_t ts)
{
	if (!lp->in_call || lp->call_nr != nr)
		lp->enter = ts;
	lp->in_call = false;
	/* a synchronous call's wait for its reply is not a visit of the
	 * loop: the thread is still away */
	if (!loop_visit(nr, call_kind(lp->w, lp->nw, &lp->wi, lp->enter, ts)))
		return 0;
	if (lp->any && !lp->in_loop) {
		int rc = push_gap(&lp->gaps, lp->back, lp->enter, false, true);

		if (rc)
			return rc;
	}
	lp->back = ts;
	lp->in_loop = false;
	lp->any = true;
	return 0;
}

/* One event of the thread's sweep, read from its slot (graph_view.h):
 * most are skipped on their type and context alone. */
static int loop_feed(struct lpass *lp, const struct gev_arrays *st, const struct gev *p)
{
	uint8_t type = gev_type(p);
	int16_t nr;
	uint64_t ts;

	if (gev_ctx(p) != AE_CTX_TASK || (type != AE_SYS_ENTER && type != AE_SYS_EXIT))
		return 0;
	nr = gev_nr(st, p);
	ts = gev_ts(st, p);
	lp->last = ts;
	/* A restart exit (-ERESTART*) is settled by the next syscall: the
	 * same call again (or restart_syscall) is the kernel restarting it,
	 * and the thread never left it (a signal with no handler, a debugger
	 * attaching); any other call means user space saw the return (-EINTR
	 * after a handler: make's SIGCHLD in pselect), so the call ended at
	 * that exit. */
	if (lp->restarted) {
		lp->restarted = false;
		if (nr != lp->call_nr && nr != SYS_restart_syscall) {  /* one-off */
			int rc = loop_return(lp, lp->call_nr, lp->restart_ts);

			if (rc)
				return rc;
		}
	}
	if (type == AE_SYS_ENTER && argus_sys_is_exit(nr))
		lp->bye = true;
	if (type == AE_SYS_ENTER && visit_nr(nr)) {
		if (!lp->in_call || lp->call_nr != nr)
			lp->enter = ts;         /* a restarted call keeps its entry */
		lp->in_call = true;
		lp->call_nr = nr;
	} else if (type == AE_SYS_EXIT && visit_nr(nr)) {
		if (hang_rule_restart(gev_val(st, p))) {
			if (!lp->in_call || lp->call_nr != nr)
				lp->enter = ts;
			lp->in_call = true;
			lp->call_nr = nr;
			lp->restarted = true;
			lp->restart_ts = ts;
			return 0;
		}
		return loop_return(lp, nr, ts);
	}
	return 0;
}

/* After the last event: the interval still open at the end, if any. */
static int loop_end(const struct argus_graph *g, uint32_t thr, struct lpass *lp)
{
	struct gvec *gaps = &lp->gaps;
	int rc;

	/* a call still open at the end: in the loop, unless it is a reply
	 * wait nobody has answered */
	if (lp->in_call &&
	    loop_visit(lp->call_nr, call_kind(lp->w, lp->nw, &lp->wi, lp->enter, UINT64_MAX))) {
		if (lp->any && (rc = push_gap(gaps, lp->back, lp->enter, false, true)))
			return rc;
		lp->in_loop = true;
		lp->any = true;
	}
	if (!lp->any)
		return 0;
	uint64_t max_ts = argus_graph__stats(g)->max_ts;
	uint64_t end = max_ts > lp->last ? max_ts : lp->last;
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);
	const struct argus_segment *ls = n ? argus_graph__segment(g, v[n - 1]) : NULL;

	/* lp->last is the last syscall event's time; the thread's last
	 * segment ends at or after its last event of any kind */
	if (ls && ls->end > end)
		end = ls->end;

	/* Stopped at the end (a debugger attached) while it ran: the hang in
	 * progress ends where the stop began, not at the end of the trace.
	 * Stopped inside a wait (the attach interrupted it): it would still
	 * be waiting, so the hang goes on to the end. */
	if (ls && (ls->flags & ARGUS_SEG_F_STOPPED) && !argus_graph__seg_interrupted(g, v[n - 1]))
		end = ls->end;
	/* Left its event loop and exited by itself (exit_group): the app
	 * shutting down, not a hang (under ASan the leak check before
	 * exit_group alone takes seconds).  Killed while away from its loop:
	 * a hang that ended with the kill, the usual end of a real one.  (A
	 * loop of sleeps is no event loop: a spin that ends and exits was a
	 * hang.) */
	if (ls && ls->end_reason == ARGUS_END_EXIT) {
		if ((lp->bye && lp->poll_loop) || lp->in_loop)
			return 0;
		end = ls->end;
		return end > lp->back ? push_gap(gaps, lp->back, end, false, true) : 0;
	}
	if (!lp->in_loop && end > lp->back)
		return push_gap(gaps, lp->back, end, true, true);
	return 0;
}

/* A thread with no idle wait: each wait of threshold or more (sleeps
 * aside), and each stretch between them. */
static int oneshot_gaps(const struct argus_graph *g, uint32_t thr, const struct twait *w,
			uint32_t nw, uint64_t thr_ns, struct gvec *gaps)
{
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);
	const struct argus_segment *ls;
	uint64_t from, end, max_ts = argus_graph__stats(g)->max_ts;
	bool ongoing = false;
	int rc;

	if (!n)
		return 0;
	ls = argus_graph__segment(g, v[n - 1]);
	from = argus_graph__segment(g, v[0])->start;
	end = ls->end;
	if (ls->end_reason == ARGUS_END_TRACE || (ls->flags & ARGUS_SEG_F_STOPPED)) {
		ongoing = true;
		if (!(ls->flags & ARGUS_SEG_F_STOPPED) && max_ts > end)
			end = max_ts;
	}
	for (uint32_t i = 0; i < nw; i++) {
		uint32_t b = i;

		/* a chain of poll retries is one wait (hang_rule.h) */
		while (b + 1 < nw && w[b + 1].cont)
			b++;
		if (w[b].to - w[i].from < thr_ns || sleep_nr(w[i].nr)) {
			i = b;
			continue;
		}
		if (w[i].from > from && (rc = push_gap(gaps, from, w[i].from, false, false)))
			return rc;
		if ((rc = push_gap(gaps, w[i].from, w[b].to, w[b].ongoing, false)))
			return rc;
		if (w[b].ongoing)
			return 0;
		from = w[b].to;
		i = b;
	}
	if (nw && w[nw - 1].ongoing && w[nw - 1].from >= from) {
		/* a short wait still open at the end: the stretch runs into it
		 * (a retry loop asleep between its tries, too: sleeps never cut
		 * a stretch, and the user attached in the middle of it) */
		end = w[nw - 1].to;
		ongoing = true;
	}
	return end > from ? push_gap(gaps, from, end, ongoing, false) : 0;
}

static uint32_t mark_in(const struct argus_graph *g, uint64_t from, uint64_t to)
{
	const uint32_t *ids;
	uint32_t n = argus_graph__marks(g, &ids);

	/* marks come from `argus mark`, with no thread: match by time */
	for (uint32_t k = 0; k < n; k++) {
		const struct argus_gevent *me = argus_graph__event(g, ids[k], ARGUS_GEVENT_BUF);

		if (me->ts >= from && me->ts <= to)
			return me->str ? me->str : ARGUS_NONE;
	}
	return 0;
}

static int activity(const struct argus_graph *g, uint32_t tid, uint64_t from, uint64_t to,
		    bool exact, struct argus_activity *a);

/* Fill a hang for [gp->from, gp->to] of thread thr: its kind, flags. */
static void fill_hang(const struct argus_graph *g, uint32_t thr, const struct gap *gp,
		      uint32_t mark, struct argus_hang *h)
{
	const struct argus_thread *t = argus_graph__thread(g, thr);
	struct argus_activity a;

	memset(h, 0, sizeof(*h));
	h->tid = t->tid;
	h->pid = t->pid;
	h->start = gp->from;
	h->end = gp->to;
	h->ongoing = gp->ongoing;
	h->annotated = mark != 0;
	h->mark = mark == ARGUS_NONE ? 0 : mark;
	h->seg = argus_graph__segment_at(g, t->tid, gp->from + (gp->to - gp->from) / 2);
	h->flags = (gp->loop ? ARGUS_HANG_F_LOOP : 0) | (gp->dormant ? ARGUS_HANG_F_DORMANT : 0);
	if (!activity(g, t->tid, gp->from, gp->to, false, &a)) {
		h->kind = a.kind;
		if (a.kind == ARGUS_KIND_BLOCKED && a.wait_seg != ARGUS_NONE && !gp->loop &&
		    hang_rule_deliberate(HANG_KIND_BLOCKED, argus_graph__segment(g, a.wait_seg)->wait_nr,
					 a.sleeps))
			h->flags |= ARGUS_HANG_F_DELIBERATE;
	}
}

/* After both passes: the intervals of thread index thr that hangs are
 * made of, into *gaps (a loop thread's come from its loop pass). */
static int thread_gaps_end(const struct argus_graph *g, uint32_t thr, struct wpass *wp,
			   bool loop, struct lpass *lp, uint64_t thr_ns, struct gvec *gaps)
{
	int rc;

	/* Only a blocking idle wait makes a loop: a poll that returns at once
	 * says nothing (libpq polls before each send), and a thread seen only
	 * in such polls and reply waits is a one-shot thread. */
	if (loop) {
		rc = loop_end(g, thr, lp);
		*gaps = lp->gaps;
		memset(&lp->gaps, 0, sizeof(lp->gaps));
		return rc;
	}
	rc = oneshot_gaps(g, thr, wp->waits.p, wp->waits.n, thr_ns, gaps);
	/* seen only going to sleep (or not at all) and never waking */
	if (!rc && wp->waits.n <= 1 && gaps->n == 1 && GV(*gaps, struct gap)[0].ongoing) {
		const uint32_t *v;

		if (argus_graph__thread_segments(g, thr, &v) &&
		    argus_graph__segment(g, v[0])->start_reason == ARGUS_START_TRACE)
			GV(*gaps, struct gap)[0].dormant = 1;
	}
	return rc;
}

/* The intervals of one thread, walking its own events (one thread or one
 * process: the machine-wide list sweeps all threads at once instead). */
static int thread_gaps(const struct argus_graph *g, uint32_t thr, unsigned rule,
		       uint64_t thr_ns, struct gvec *gaps)
{
	const struct argus_thread *t = argus_graph__thread(g, thr);
	struct wpass wp;
	struct lpass lp;
	struct gview gv;
	struct gview_walk it;
	const struct gev *ev;
	bool loop;
	int rc;

	if ((rc = waits_begin(g, thr, &wp)))
		goto out;
	loop = waits_end(&wp, rule);
	loop_begin(&wp, &lp);
	gview_get(g, &gv);
	if (loop)
		for (gview_walk_thread(&gv, t, t->first_event, &it);
		     !rc && (ev = gview_walk_next_slot(&gv, &it));)
			rc = loop_feed(&lp, &gv.evs, ev);
	if (!rc)
		rc = thread_gaps_end(g, thr, &wp, loop, &lp, thr_ns, gaps);
	gvec_free(&lp.gaps);
out:
	gvec_free(&wp.waits);
	return rc;
}

/* The hangs among a thread's intervals, appended to hangs. */
static int gaps_to_hangs(const struct argus_graph *g, uint32_t thr, const struct gvec *gaps,
			 uint64_t thr_ns, bool keep_deliberate, bool under, struct gvec *hangs)
{
	for (uint32_t i = 0; i < gaps->n; i++) {
		const struct gap *gp = &GV(*gaps, struct gap)[i];
		uint32_t mark = mark_in(g, gp->from, gp->to);
		struct argus_hang *h, tmp;

		if (gp->to - gp->from < thr_ns && !mark && !under)
			continue;
		fill_hang(g, thr, gp, mark, &tmp);
		if (gp->to - gp->from < thr_ns)
			tmp.flags |= ARGUS_HANG_F_UNDER;
		if ((tmp.flags & (ARGUS_HANG_F_DELIBERATE | ARGUS_HANG_F_DORMANT)) &&
		    !keep_deliberate && !mark)
			continue;
		if (!(h = gvec_push(hangs, sizeof(*h))))
			return -ENOMEM;
		*h = tmp;
	}
	return 0;
}

static int thread_hangs(const struct argus_graph *g, uint32_t thr, unsigned rule,
			uint64_t thr_ns, bool keep_deliberate, bool under, struct gvec *hangs)
{
	struct gvec gaps = { 0 };
	int rc;

	if (!(rc = thread_gaps(g, thr, rule, thr_ns, &gaps)))
		rc = gaps_to_hangs(g, thr, &gaps, thr_ns, keep_deliberate, under, hangs);
	gvec_free(&gaps);
	return rc;
}

/*
 * The loop pass of a loop thread over only the stretches that can hold a
 * hang (the machine-wide list: every thread of a 20 M-event trace).
 *
 * A *sure visit* is a poll-family call that blocked once, in an idle
 * wait, and returned: wait k is idle, a return (not a restart) came
 * between wait k-1 and wait k, and the first syscall exit after wait k is
 * a return that comes before wait k+1.  The loop pass counts it as a
 * visit of the loop whatever else happens, so every interval it finds
 * away from the loop lies between two consecutive sure visits A and B,
 * within [A's wait end, B's wait start].  A stretch shorter than the
 * threshold cannot hold a hang and is not read at all (unless the trace
 * has marks, which make any interval a hang); the others are fed to
 * loop_feed from A's return to B's return, as the whole-thread pass would
 * have fed them.  Run on the same waits, both passes give the same hangs
 * (test_hangs_sweep.c checks it).
 */
static bool sure_visit(const struct twait *w, uint32_t nw, uint32_t k)
{
	return loop_nr(w[k].nr) && w[k].idle && w[k].call_new &&
	       (w[k].exit1 == SHAPE_EXIT1_PLAIN || w[k].exit1 == SHAPE_EXIT1_TIMEDOUT) &&
	       (k + 1 == nw || w[k + 1].call_new);
}

/* Feed lp the thread's events from the segment after sure visit a's wait
 * (a == ARGUS_NONE: from the thread's first segment, lp fresh) up to and
 * including sure visit b's return (b == ARGUS_NONE: to the end). */
static int loop_span(const struct argus_graph *g, const uint32_t *v, uint32_t n,
		     const struct wpass *wp, struct lpass *lp, uint32_t a, uint32_t b)
{
	const struct twait *w = wp->waits.p;
	uint32_t from = 0;
	struct gview gv;
	int rc = 0;

	gview_get(g, &gv);
	if (a != ARGUS_NONE) {
		/* inside a's call, which returns in the next segment: as the
		 * whole pass would be, but with no visit counted before */
		lp->in_call = true;
		lp->call_nr = w[a].nr;
		lp->enter = w[a].from;
		lp->wi = a;
		lp->any = false;
		lp->in_loop = false;
		from = w[a].si + 1;
	}
	for (uint32_t i = from; i < n; i++) {
		struct gview_walk it;
		const struct gev *ev;

		for (gview_walk_seg(&gv, v[i], &it); (ev = gview_walk_next_slot(&gv, &it));) {
			if ((rc = loop_feed(lp, &gv.evs, ev)))
				return rc;
			if (b != ARGUS_NONE && gev_type(ev) == AE_SYS_EXIT &&
			    gev_ctx(ev) == AE_CTX_TASK && gev_nr(&gv.evs, ev) == w[b].nr &&
			    gev_ts(&gv.evs, ev) >= w[b].to)
				return 0;       /* b's return: the span is done */
		}
	}
	return 0;
}

/* The times of the trace's marks, sorted (a mark makes any interval
 * around it a hang, however short). */
struct mark_times {
	uint64_t *ts;
	uint32_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int mark_times_get(const struct argus_graph *g, struct mark_times *m)
{
	const uint32_t *ids;

	m->n = argus_graph__marks(g, &ids);
	m->ts = NULL;
	if (!m->n)
		return 0;
	if (!(m->ts = malloc((size_t)m->n * sizeof(*m->ts))))
		return -ENOMEM;
	for (uint32_t k = 0; k < m->n; k++)
		m->ts[k] = argus_graph__event(g, ids[k], ARGUS_GEVENT_BUF)->ts;
	qsort(m->ts, m->n, sizeof(*m->ts), cmp_u64);
	return 0;
}

/* Is there a mark in [from, to]? */
static bool mark_within(const struct mark_times *m, uint64_t from, uint64_t to)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {       /* the first mark at or after from */
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->ts[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->ts[lo] <= to;
}

/* The loop pass of loop thread thr over its stretches that can hold a
 * hang of thr_ns or more, or a mark; the intervals go to lp->gaps. */
static int loop_spans(const struct argus_graph *g, uint32_t thr, const struct wpass *wp,
		      struct lpass *lp, uint64_t thr_ns, const struct mark_times *marks)
{
	const struct twait *w = wp->waits.p;
	uint32_t nw = wp->waits.n, a = ARGUS_NONE;
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);
	uint64_t first;
	int rc;

	if (!n)
		return 0;
	first = argus_graph__segment(g, v[0])->start;
	for (uint32_t k = 0; k < nw; k++) {
		uint64_t since;

		if (!sure_visit(w, nw, k))
			continue;
		since = a == ARGUS_NONE ? first : w[a].to;
		if ((w[k].from >= since + thr_ns || mark_within(marks, since, w[k].from)) &&
		    (rc = loop_span(g, v, n, wp, lp, a, k)))
			return rc;
		a = k;
	}
	/* the tail always: the state at the end decides an ongoing hang */
	return loop_span(g, v, n, wp, lp, a, ARGUS_NONE);
}

/*
 * Every thread of the machine at once: the waits from the segments, and
 * the loop pass only where a stretch is long enough (loop_spans).  Events
 * are read for those stretches alone: a full sweep of the 20 M-event
 * array, even in storage order, cost as much as a quarter of the build.
 */
static int machine_hangs(const struct argus_graph *g, unsigned rule, uint64_t thr_ns,
			 bool keep_deliberate, struct gvec *hangs)
{
	struct mark_times marks;
	int rc = mark_times_get(g, &marks);

	for (uint32_t thr = 0; thr < argus_graph__nthreads(g) && !rc; thr++) {
		const struct argus_thread *t = argus_graph__thread(g, thr);
		struct gvec gaps = { 0 };
		struct wpass wp;
		struct lpass lp;
		bool loop;

		/* kernel threads; and a debugger's or Argus's own threads:
		 * the tool the user runs is not what hangs (asked for by
		 * pid, they are listed) */
		if (t->kernel || t->tool || !t->tid)
			continue;
		if ((rc = waits_begin(g, thr, &wp)))
			break;
		loop = waits_end(&wp, rule);
		loop_begin(&wp, &lp);
		if (loop)
			rc = loop_spans(g, thr, &wp, &lp, thr_ns, &marks);
		if (!rc)
			rc = thread_gaps_end(g, thr, &wp, loop, &lp, thr_ns, &gaps);
		if (!rc)
			rc = gaps_to_hangs(g, thr, &gaps, thr_ns, keep_deliberate, false, hangs);
		gvec_free(&gaps);
		gvec_free(&lp.gaps);
		gvec_free(&wp.waits);
	}
	free(marks.ts);
	return rc;
}

int argus_hang_cmp_longest(const void *a, const void *b)
{
	const struct argus_hang *x = a, *y = b;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int argus_diag__hangs(const struct argus_graph *g,
		      const struct argus_hang_opts *opts,
		      struct argus_hang **out, uint32_t *n)
{
	struct argus_hang_opts o = { .sz = sizeof(o) };
	struct gvec hangs = { 0 };
	uint64_t thr_ns;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!g || !opts)
		return -EINVAL;
	memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	thr_ns = o.threshold_ns ? o.threshold_ns : DEFAULT_THRESHOLD_NS;
	if (o.scope == ARGUS_HANGS_THREAD) {
		uint32_t tid = o.tid ? o.tid : o.pid;
		uint32_t thr = argus_graph__thread_by_tid(g, tid);

		if (!o.pid)
			return -EINVAL;
		if (thr == ARGUS_NONE || argus_graph__thread(g, thr)->pid != o.pid)
			return -ENOENT;
		rc = thread_hangs(g, thr, o.idle_rule, thr_ns, true, false, &hangs);
	} else {
		bool any = false;

		if (o.scope == ARGUS_HANGS_PROCESS && !o.pid)
			return -EINVAL;
		if (o.scope != ARGUS_HANGS_PROCESS)
			rc = machine_hangs(g, o.idle_rule, thr_ns, o.deliberate, &hangs);
		for (uint32_t thr = 0;
		     o.scope == ARGUS_HANGS_PROCESS && thr < argus_graph__nthreads(g) && !rc; thr++) {
			const struct argus_thread *t = argus_graph__thread(g, thr);

			if (t->pid != o.pid)
				continue;
			any = true;
			if (t->kernel || !t->tid)
				continue;
			rc = thread_hangs(g, thr, o.idle_rule, thr_ns, true, false, &hangs);
		}
		if (!rc && o.scope == ARGUS_HANGS_PROCESS && !any)
			rc = -ENOENT;
		if (!rc && hangs.n)
			qsort(hangs.p, hangs.n, sizeof(struct argus_hang), argus_hang_cmp_longest);
	}
	if (rc) {
		gvec_free(&hangs);
		return rc;
	}
	*out = hangs.p;
	*n = hangs.n;
	return 0;
}

int argus_diag__hang_at(const struct argus_graph *g, uint32_t tid, uint64_t ts,
			const struct argus_hang_opts *opts, struct argus_hang *out)
{
	struct argus_hang_opts o = { .sz = sizeof(o) };
	uint32_t thr = g ? argus_graph__thread_by_tid(g, tid) : ARGUS_NONE;
	struct gvec hangs = { 0 };
	uint64_t thr_ns;
	int rc;

	if (!g || !out)
		return -EINVAL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	thr_ns = o.threshold_ns ? o.threshold_ns : DEFAULT_THRESHOLD_NS;
	if (thr == ARGUS_NONE)
		return -ENOENT;
	if ((rc = thread_hangs(g, thr, o.idle_rule, thr_ns, true, true, &hangs)))
		goto done;
	rc = -ENOENT;
	for (uint32_t i = 0; i < hangs.n; i++) {
		const struct argus_hang *h = &GV(hangs, struct argus_hang)[i];

		if (ts >= h->start && ts <= h->end) {
			*out = *h;
			rc = 0;
			goto done;
		}
	}
	/* inside the idle wait itself, or a gap under the threshold of a
	 * loop thread that ends in it: the wait the thread was in */
	uint32_t s = argus_graph__segment_at(g, tid, ts);

	if (s != ARGUS_NONE) {
		const struct argus_segment *sg = argus_graph__segment(g, s);
		uint32_t nx = argus_graph__seg_next(g, s);
		struct gap gp = { .from = sg->start, .to = sg->end };

		if (ts > sg->end && sg->end_reason == ARGUS_END_WAIT) {
			gp.from = sg->end;
			gp.to = nx != ARGUS_NONE ? argus_graph__segment(g, nx)->start
						 : argus_graph__stats(g)->max_ts;
			gp.ongoing = nx == ARGUS_NONE;
		}
		fill_hang(g, thr, &gp, mark_in(g, gp.from, gp.to), out);
		out->flags |= ARGUS_HANG_F_UNDER;
		rc = 0;
	}
done:
	gvec_free(&hangs);
	return rc;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* What thread tid did in [from, to].  With !exact (the kind of each hang
 * of a machine-wide list) the event walk that counts yields and samples
 * stops as soon as the kind is settled: samples and short_waits are then
 * lower bounds. */
static int activity(const struct argus_graph *g, uint32_t tid, uint64_t from, uint64_t to,
		    bool exact, struct argus_activity *a)
{
	uint32_t thr = argus_graph__thread_by_tid(g, tid), n;
	uint64_t win = to > from ? to - from : 1, best_cpu = 0, seg_w = 0;
	uint64_t max_ts = argus_graph__stats(g)->max_ts;
	const uint32_t *v;

	memset(a, 0, sizeof(*a));
	a->wait_seg = a->busy_seg = ARGUS_NONE;
	if (thr == ARGUS_NONE)
		return -ENOENT;
	n = argus_graph__thread_segments(g, thr, &v);
	/* the first segment that can overlap the window: binary search */
	uint32_t lo = 0, hi = n, timed = 0, ev0 = argus_graph__thread(g, thr)->first_event;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (mid + 1 < n && argus_graph__segment(g, v[mid + 1])->start <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && argus_graph__segment(g, v[lo])->first_event != ARGUS_NONE)
		ev0 = argus_graph__segment(g, v[lo])->first_event;
	for (uint32_t i = lo; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(g, v[i]);
		uint64_t wend = i + 1 < n ? argus_graph__segment(g, v[i + 1])->start :
			(s->end_reason == ARGUS_END_WAIT ? max_ts : s->end);
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
		/* a stop (a debugger's, SIGSTOP) is no wait of the thread's
		 * own: a thread stepped by argus flag stops at every
		 * instruction, and that says nothing of what it was doing.
		 * The time stopped counts for neither side. */
		if (s->end_reason != ARGUS_END_WAIT || (s->flags & ARGUS_SEG_F_STOPPED))
			continue;
		/* a wait a debugger's attach interrupted goes on through the
		 * stop and the restarted call: one wait, counted at its last
		 * segment (whose wake-up, if any, is the real one) */
		uint32_t last = v[i], nseg, next = i + 1;
		uint64_t stopped = 0, w_own;

		if (next < n && argus_graph__wait_may_continue(g, v[next]))
			next = i + argus_graph__wait_through(g, v[i], &last, &nseg);
		if (next != i + 1)
			wend = next < n ? argus_graph__segment(g, v[next])->start : max_ts;
		w = overlap(s->end, wend, from, to);
		/* of it, the time the debugger held the thread stopped */
		for (uint32_t j = i + 1; j < next && j < n; j++) {
			const struct argus_segment *q = argus_graph__segment(g, v[j]);

			if (q->flags & ARGUS_SEG_F_STOPPED)
				stopped += overlap(q->end, j + 1 < n ?
						   argus_graph__segment(g, v[j + 1])->start : max_ts,
						   from, to);
		}
		w_own = w > stopped ? w - stopped : 0;
		a->asleep_ns += w;
		if (s->end >= from && s->end < to) {
			a->waits++;
			a->sleeps += sleep_nr(s->wait_nr);
			if (wend - s->end < HANG_SHORT_WAIT_NS)
				a->short_waits++;
			else if (sleep_nr(s->wait_nr))
				timed++;
		}
		/* The hang's wait: the longest, but of waits within 1% of each
		 * other the first.  A timed wait that timed out and was
		 * entered again (case_circular's 1500 ms condvar wait, twice)
		 * is one wait retried; the first began with the work, and
		 * which retry lasted microseconds longer is chance.  Compared
		 * without the time a debugger held the thread stopped: the
		 * retry lldb attached in, still stopped at the end of its
		 * snapshot, outgrew the first by however long the user took
		 * (CI: 1540 ms against 1500 when lldb's save came 1.1 s after
		 * its attach), and which wait was the hang's depended on it. */
		if (w && (a->wait_seg == ARGUS_NONE || w_own > seg_w + seg_w / 100)) {
			seg_w = w_own;
			a->wait_seg = last;
			a->wait_ns = w;
		}
		i = next - 1;
	}
	/* sched_yield does not sleep (the switch is "runnable"): count calls,
	 * by their exits (the collector records no entry for it) */
	struct gview gv;
	struct gview_walk it;
	const struct gev *ev;

	/* the yields can only make it a yield loop when the waits cover
	 * less than half the window, and 20 settle it */
	if (!exact && (a->wait_ns >= win / 2 || a->short_waits >= HANG_YIELD_LOOP_SHORTS))
		ev0 = ARGUS_NONE;
	gview_get(g, &gv);
	for (gview_walk_thread(&gv, argus_graph__thread(g, thr), ev0, &it);
	     (ev = gview_walk_next_slot(&gv, &it));) {
		uint64_t ts = gev_ts(&gv.evs, ev);
		uint8_t type = gev_type(ev);

		if (ts > to)
			break;
		if (ts < from)
			continue;
		if (type == AE_SAMPLE)
			a->samples++;
		else if (type == AE_SYS_EXIT && argus_sys_is(gev_nr(&gv.evs, ev), ARGUS_SC_YIELD) &&
			 ++a->short_waits >= HANG_YIELD_LOOP_SHORTS && !exact)
			break;
	}
	/* Busy is "running or runnable more than asleep": on a loaded machine
	 * a thread that computes may spend most of the window preempted, and
	 * that is not a wait on anyone (on-CPU < 50% read as blocked, with no
	 * wait to blame).  Time the thread was not there (before its start,
	 * after its exit) counts for neither.  The report's on-CPU figure
	 * tells computing from starved. */
	switch (hang_rule_kind(win, a->asleep_ns, a->run_ns, a->wait_ns, a->short_waits, timed)) {
	case HANG_KIND_YIELD: a->kind = ARGUS_KIND_YIELD; break;
	case HANG_KIND_BUSY: a->kind = ARGUS_KIND_BUSY; break;
	case HANG_KIND_BLOCKED: a->kind = ARGUS_KIND_BLOCKED; break;
	}
	return 0;
}

int argus_diag__activity(const struct argus_graph *g, uint32_t tid,
			 uint64_t from, uint64_t to, struct argus_activity *a)
{
	return activity(g, tid, from, to, true, a);
}
