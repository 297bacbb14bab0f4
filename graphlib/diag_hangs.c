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

static bool epoll_nr(long nr)
{
	return nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2;
}

static bool sleep_nr(long nr)
{
	return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

static bool child_nr(long nr)
{
	return nr == SYS_wait4 || nr == SYS_waitid;
}

const char *argus_hang_kind_str(unsigned kind)
{
	static const char *const n[] = { "none", "busy", "blocked", "yield" };

	return kind < 4 ? n[kind] : NULL;
}

/* ---- the thread's waits and their shape ------------------------------- */

/* One blocking wait of a thread: from its switch-out to the switch-in
 * after the wake-up. */
struct twait {
	uint64_t from, to;      /* ns; to = the end of the trace when ongoing */
	uint32_t seg;           /* the segment the wait ends */
	int32_t nr;             /* syscall blocked in, -1 unknown */
	int64_t nfds;           /* poll/ppoll: fds watched, -1 unknown */
	uint64_t out_obj;       /* the connection of the last output before
	                           it (0 for a pipe: any pipe answers) */
	uint32_t nout;          /* outputs on connections before it */
	uint8_t ongoing;        /* nobody has ended it (or a debugger did) */
	uint8_t out;            /* an output on a connection since the last
	                           idle wait (a request is outstanding) */
	uint8_t reply;          /* the first connection op after it is an
	                           input on that connection */
	uint8_t timed_out;      /* a futex wait that ended by its timeout */
	uint8_t idle;           /* judged an idle wait */
};

enum { OP_NONE, OP_IN, OP_OUT };

/* An operation on a connection: input, output or none.  *key is the
 * object's identity (a pipe's both ends share it, a socket's own inode
 * or endpoint for the socket calls). */
static int conn_op(const struct argus_graph *g, const struct argus_gevent *ev,
		   uint64_t *key, uint32_t *kind)
{
	const struct argus_object *o;
	long nr = ev->nr;
	int op;

	if (ev->type != AE_SYS_EXIT || !ev->obj)
		return OP_NONE;
	if (nr == SYS_read || nr == SYS_readv || nr == SYS_recvfrom || nr == SYS_recvmsg ||
	    nr == SYS_recvmmsg)
		op = ev->val > 0 ? OP_IN : OP_NONE;
	else if (nr == SYS_write || nr == SYS_writev || nr == SYS_sendto ||
		 nr == SYS_sendmsg || nr == SYS_sendmmsg)
		op = ev->val > 0 ? OP_OUT : OP_NONE;
	else if (nr == SYS_connect)     /* asking a server to accept us */
		op = ev->val == 0 || ev->val == -EINPROGRESS ? OP_OUT : OP_NONE;
	else
		op = OP_NONE;
	if (op == OP_NONE || !(o = argus_graph__object(g, ev->obj)))
		return OP_NONE;
	if (o->kind != AE_OBJ_PIPE && o->kind != AE_OBJ_UNIX && o->kind != AE_OBJ_TCP &&
	    o->kind != AE_OBJ_UDP && o->kind != AE_OBJ_SOCK)
		return OP_NONE;
	*key = o->obj;
	*kind = o->kind;
	return op;
}

/* A wait whose next segment is a debugger's (or SIGSTOP's) stop that
 * nobody woke: the app's wait has not ended. */
static bool stopped_next(const struct argus_graph *g, uint32_t next)
{
	return (SEGS(g)[next].flags & ARGUS_SEG_F_STOPPED) &&
	       argus_diag__waker_edge(g, next) == ARGUS_NONE;
}

/* The state of the waits pass over one thread's events (struct twait's
 * shape fields are filled as the events go by). */
struct wpass {
	struct gvec waits;      /* struct twait, time-ordered */
	uint32_t wi, pend, xpend, out_kind, nout;
	uint64_t out_key;
	int64_t nfds;
};

/* The thread's waits, from its segments, before the events are fed. */
static int waits_begin(const struct argus_graph *g, uint32_t thr, struct wpass *p)
{
	const uint32_t *v;
	uint32_t n = argus_graph__thread_segments(g, thr, &v);
	struct twait *w;

	memset(p, 0, sizeof(*p));
	p->nfds = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = &SEGS(g)[v[i]];

		if (s->end_reason != ARGUS_END_WAIT || (s->flags & ARGUS_SEG_F_STOPPED))
			continue;
		if (!(w = gvec_push(&p->waits, sizeof(*w))))
			return -ENOMEM;
		memset(w, 0, sizeof(*w));
		w->from = s->end;
		w->seg = v[i];
		w->nr = s->wait_nr;
		w->nfds = -1;
		if (i + 1 < n) {
			w->to = SEGS(g)[v[i + 1]].start;
			w->ongoing = stopped_next(g, v[i + 1]);
		} else {
			w->to = g->st.max_ts > w->from ? g->st.max_ts : w->from;
			w->ongoing = 1;
		}
	}
	return 0;
}

/* One event of the thread, in its order: the last connection operation
 * before each wait, the first after it, and poll's fd count. */
static void waits_feed(const struct argus_graph *g, struct wpass *p,
		       const struct argus_gevent *ev)
{
	struct twait *w = p->waits.p;
	uint32_t nw = p->waits.n, kind;
	uint64_t key;
	int op;

	if (ev->ctx != AE_CTX_TASK)
		return;
	for (; p->wi < nw && w[p->wi].from <= ev->ts; p->wi++) {
		w[p->wi].nout = p->nout;
		w[p->wi].out_obj = p->out_kind == AE_OBJ_PIPE ? 0 : p->out_key;
		if (w[p->wi].nr == SYS_poll || w[p->wi].nr == SYS_ppoll)
			w[p->wi].nfds = p->nfds;
	}
	if (ev->type == AE_SYS_ENTER && (ev->nr == SYS_poll || ev->nr == SYS_ppoll))
		p->nfds = ev->val;
	/* the call a wait was in returns with the first exit after it */
	if (ev->type == AE_SYS_EXIT) {
		for (; p->xpend < p->wi && w[p->xpend].to <= ev->ts; p->xpend++)
			w[p->xpend].timed_out = w[p->xpend].nr == SYS_futex &&
						ev->nr == SYS_futex && ev->val == -ETIMEDOUT;
	}
	if ((op = conn_op(g, ev, &key, &kind)) == OP_NONE)
		return;
	/* the first connection op after a wait tells a reply: input on
	 * the connection the thread wrote to (any pipe for a pipe: a
	 * request goes down one pipe and the reply comes up another) */
	for (; p->pend < p->wi && w[p->pend].to <= ev->ts; p->pend++)
		w[p->pend].reply = w[p->pend].nout && !w[p->pend].ongoing && op == OP_IN &&
				   (w[p->pend].out_obj ? key == w[p->pend].out_obj :
							 kind == AE_OBJ_PIPE);
	if (op == OP_OUT) {
		p->nout++;
		p->out_key = key;
		p->out_kind = kind;
	}
}

/* After the last event: each wait's idle verdict.  Returns whether the
 * thread has an idle wait (a loop thread). */
static bool waits_end(struct wpass *p, unsigned rule)
{
	struct twait *w = p->waits.p;
	uint32_t nw = p->waits.n, idle_nout = 0;
	bool polls = false, loop = false;

	for (; p->wi < nw; p->wi++) {
		w[p->wi].nout = p->nout;
		w[p->wi].out_obj = p->out_kind == AE_OBJ_PIPE ? 0 : p->out_key;
		if (w[p->wi].nr == SYS_poll || w[p->wi].nr == SYS_ppoll)
			w[p->wi].nfds = p->nfds;
	}
	for (uint32_t i = 0; i < nw && !polls; i++)
		polls = loop_nr(w[i].nr);
	for (uint32_t i = 0; i < nw; i++) {
		/* a timed futex wait that times out, in a thread with no event
		 * loop: a worker's periodic tick or timed wait for work, not a
		 * wait on anyone.  (A loop thread's timed futex wait is a
		 * synchronous wait with a timeout: case study 1's browser.) */
		if (w[i].timed_out && rule == ARGUS_IDLE_LEARN && !polls)
			w[i].idle = 1;
		if (loop_nr(w[i].nr) && rule != ARGUS_IDLE_NONE) {
			/* a request is outstanding when the thread sent
			 * something since it last sat in its idle wait (a
			 * client library reads earlier answers before it
			 * waits for the one it wants) */
			w[i].out = w[i].nout > idle_nout;
			if (rule == ARGUS_IDLE_POLL || epoll_nr(w[i].nr) || w[i].nfds >= 2)
				w[i].idle = 1;
			else    /* a request then its reply: a synchronous call */
				w[i].idle = !(w[i].out && (w[i].ongoing || w[i].reply));
			if (w[i].idle)
				idle_nout = w[i].nout;
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
	return k;
}

/* A visit of the idle loop: a poll-family call that did not block in a
 * reply wait, or a futex call that blocked in an idle (timed-out) wait. */
static bool loop_visit(long nr, int kind)
{
	return loop_nr(nr) ? kind != CALL_AWAY : nr == SYS_futex && kind == CALL_IDLE;
}

/* The state of the loop pass over a loop thread's events: every interval
 * it spent away from its idle wait goes to gaps. */
struct lpass {
	const struct twait *w;
	uint32_t nw, wi;
	uint64_t back, last, enter;
	bool in_loop, any, bye, in_call;
	long call_nr;
	struct gvec gaps;       /* struct gap */
};

static void loop_begin(const struct wpass *wp, struct lpass *lp)
{
	memset(lp, 0, sizeof(*lp));
	lp->w = wp->waits.p;
	lp->nw = wp->waits.n;
	lp->call_nr = -1;
}

static int loop_feed(struct lpass *lp, const struct argus_gevent *ev)
{
	if (ev->ctx != AE_CTX_TASK)
		return 0;
	lp->last = ev->ts;
	if (ev->type == AE_SYS_ENTER && (ev->nr == SYS_exit_group || ev->nr == SYS_exit))
		lp->bye = true;
	if (ev->type == AE_SYS_ENTER && (loop_nr(ev->nr) || ev->nr == SYS_futex)) {
		if (!lp->in_call || lp->call_nr != ev->nr)
			lp->enter = ev->ts;     /* a restarted call keeps its entry */
		lp->in_call = true;
		lp->call_nr = ev->nr;
	} else if (ev->type == AE_SYS_EXIT && (loop_nr(ev->nr) || ev->nr == SYS_futex)) {
		/* -ERESTARTSYS .. -ERESTART_RESTARTBLOCK: the wait was
		 * interrupted (a signal, a debugger attaching) and will be
		 * restarted: the thread never left it */
		if (ev->val <= -512 && ev->val >= -516)
			return 0;
		if (!lp->in_call || lp->call_nr != ev->nr)
			lp->enter = ev->ts;
		lp->in_call = false;
		/* a synchronous call's wait for its reply is not a visit of
		 * the loop: the thread is still away */
		if (!loop_visit(ev->nr, call_kind(lp->w, lp->nw, &lp->wi, lp->enter, ev->ts)))
			return 0;
		if (lp->any && !lp->in_loop) {
			int rc = push_gap(&lp->gaps, lp->back, lp->enter, false, true);

			if (rc)
				return rc;
		}
		lp->back = ev->ts;
		lp->in_loop = false;
		lp->any = true;
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
	uint64_t end = g->st.max_ts > lp->last ? g->st.max_ts : lp->last;
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
		if (lp->bye || lp->in_loop)
			return 0;
		end = SEGS(g)[v[n - 1]].end;
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
	uint64_t from, end;
	bool ongoing = false;
	int rc;

	if (!n)
		return 0;
	from = SEGS(g)[v[0]].start;
	end = SEGS(g)[v[n - 1]].end;
	if (SEGS(g)[v[n - 1]].end_reason == ARGUS_END_TRACE ||
	    (SEGS(g)[v[n - 1]].flags & ARGUS_SEG_F_STOPPED)) {
		ongoing = true;
		if (!(SEGS(g)[v[n - 1]].flags & ARGUS_SEG_F_STOPPED) && g->st.max_ts > end)
			end = g->st.max_ts;
	}
	for (uint32_t i = 0; i < nw; i++) {
		if (w[i].to - w[i].from < thr_ns || sleep_nr(w[i].nr))
			continue;
		if (w[i].from > from && (rc = push_gap(gaps, from, w[i].from, false, false)))
			return rc;
		if ((rc = push_gap(gaps, w[i].from, w[i].to, w[i].ongoing, false)))
			return rc;
		if (w[i].ongoing)
			return 0;
		from = w[i].to;
	}
	if (nw && w[nw - 1].ongoing && !sleep_nr(w[nw - 1].nr) && w[nw - 1].from >= from) {
		/* a short wait still open at the end: the stretch runs into it */
		end = w[nw - 1].to;
		ongoing = true;
	}
	return end > from ? push_gap(gaps, from, end, ongoing, false) : 0;
}

static uint32_t mark_in(const struct argus_graph *g, uint64_t from, uint64_t to)
{
	/* marks come from `argus mark`, with no thread: match by time */
	for (uint32_t k = 0; k < g->marks.n; k++) {
		const struct argus_gevent *me = &EVS(g)[GV(g->marks, uint32_t)[k]];

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
	const struct argus_thread *t = &THRS(g)[thr];
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
		    (child_nr(SEGS(g)[a.wait_seg].wait_nr) ||
		     (sleep_nr(SEGS(g)[a.wait_seg].wait_nr) && a.waits <= 1)))
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
		    SEGS(g)[v[0]].start_reason == ARGUS_START_TRACE)
			GV(*gaps, struct gap)[0].dormant = 1;
	}
	return rc;
}

/* The intervals of one thread, walking its own events (one thread or one
 * process: the machine-wide list sweeps all threads at once instead). */
static int thread_gaps(const struct argus_graph *g, uint32_t thr, unsigned rule,
		       uint64_t thr_ns, struct gvec *gaps)
{
	const struct argus_thread *t = &THRS(g)[thr];
	struct wpass wp;
	struct lpass lp;
	struct gev_walk it;
	bool loop;
	int rc;

	if ((rc = waits_begin(g, thr, &wp)))
		goto out;
	for (gev_walk_start(g, t->first_event, t->nevents, &it); it.ev != ARGUS_NONE;
	     gev_walk_next(g, &it))
		waits_feed(g, &wp, &EVS(g)[it.ev]);
	loop = waits_end(&wp, rule);
	loop_begin(&wp, &lp);
	if (loop)
		for (gev_walk_start(g, t->first_event, t->nevents, &it);
		     it.ev != ARGUS_NONE && !rc; gev_walk_next(g, &it))
			rc = loop_feed(&lp, &EVS(g)[it.ev]);
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
 * Every thread of the machine at once.  A thread's events are in blocks
 * of 16 scattered among everyone else's, so walking thread after thread
 * misses the cache at every block (20x slower than a sequential read on a
 * 20 M-event trace).  Instead sweep the event array once in storage
 * order, handing each block to its thread's pass state (evblk.thr): a thread's
 * blocks are allocated in its own time order, so each thread still sees
 * its events in order.  Twice: the waits pass, then the loop pass for
 * the threads that turned out to have an idle wait.
 */
static int machine_hangs(const struct argus_graph *g, unsigned rule, uint64_t thr_ns,
			 bool keep_deliberate, struct gvec *hangs)
{
	uint32_t nthr = g->thr.n, nblk = g->blk.n;
	uint32_t *left = calloc(nthr ? nthr : 1, sizeof(uint32_t));
	struct wpass *wp = calloc(nthr ? nthr : 1, sizeof(*wp));
	struct lpass *lp = calloc(nthr ? nthr : 1, sizeof(*lp));
	bool *loop = calloc(nthr ? nthr : 1, sizeof(bool));
	bool *sel = calloc(nthr ? nthr : 1, sizeof(bool));
	int rc = 0;

	if (!left || !wp || !lp || !loop || !sel) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t thr = 0; thr < nthr && !rc; thr++) {
		const struct argus_thread *t = &THRS(g)[thr];

		if (t->kernel || !t->tid)
			continue;
		sel[thr] = true;
		if ((rc = waits_begin(g, thr, &wp[thr])))
			break;
		left[thr] = t->first_event == ARGUS_NONE ? 0 : t->nevents;
	}
	for (uint32_t b = 0; b < nblk && !rc; b++) {
		uint32_t thr = BLKS(g)[b].thr;
		const struct argus_gevent *ev = &EVS(g)[(size_t)b << EVBLK_SHIFT];

		if (thr == ARGUS_NONE || !sel[thr])
			continue;
		for (uint32_t i = 0; i < EVBLK && left[thr]; i++, left[thr]--)
			waits_feed(g, &wp[thr], &ev[i]);
	}
	for (uint32_t thr = 0; thr < nthr && !rc; thr++) {
		if (!sel[thr])
			continue;
		loop[thr] = waits_end(&wp[thr], rule);
		loop_begin(&wp[thr], &lp[thr]);
		left[thr] = loop[thr] && THRS(g)[thr].first_event != ARGUS_NONE ?
			THRS(g)[thr].nevents : 0;
	}
	for (uint32_t b = 0; b < nblk && !rc; b++) {
		uint32_t thr = BLKS(g)[b].thr;
		const struct argus_gevent *ev = &EVS(g)[(size_t)b << EVBLK_SHIFT];

		if (thr == ARGUS_NONE || !loop[thr])
			continue;
		for (uint32_t i = 0; i < EVBLK && left[thr] && !rc; i++, left[thr]--)
			rc = loop_feed(&lp[thr], &ev[i]);
	}
	for (uint32_t thr = 0; thr < nthr && !rc; thr++) {
		struct gvec gaps = { 0 };

		if (!sel[thr])
			continue;
		rc = thread_gaps_end(g, thr, &wp[thr], loop[thr], &lp[thr], thr_ns, &gaps);
		if (!rc)
			rc = gaps_to_hangs(g, thr, &gaps, thr_ns, keep_deliberate, false, hangs);
		gvec_free(&gaps);
	}
out:
	for (uint32_t thr = 0; wp && lp && thr < nthr; thr++) {
		gvec_free(&wp[thr].waits);
		gvec_free(&lp[thr].gaps);
	}
	free(left);
	free(wp);
	free(lp);
	free(loop);
	free(sel);
	return rc;
}

static int longest_first(const void *a, const void *b)
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
		if (thr == ARGUS_NONE || THRS(g)[thr].pid != o.pid)
			return -ENOENT;
		rc = thread_hangs(g, thr, o.idle_rule, thr_ns, true, false, &hangs);
	} else {
		bool any = false;

		if (o.scope == ARGUS_HANGS_PROCESS && !o.pid)
			return -EINVAL;
		if (o.scope != ARGUS_HANGS_PROCESS)
			rc = machine_hangs(g, o.idle_rule, thr_ns, o.deliberate, &hangs);
		for (uint32_t thr = 0; o.scope == ARGUS_HANGS_PROCESS && thr < g->thr.n && !rc;
		     thr++) {
			const struct argus_thread *t = &THRS(g)[thr];

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
			qsort(hangs.p, hangs.n, sizeof(struct argus_hang), longest_first);
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
		const struct argus_segment *sg = &SEGS(g)[s];
		uint32_t nx = argus_graph__seg_next(g, s);
		struct gap gp = { .from = sg->start, .to = sg->end };

		if (ts > sg->end && sg->end_reason == ARGUS_END_WAIT) {
			gp.from = sg->end;
			gp.to = nx != ARGUS_NONE ? SEGS(g)[nx].start : g->st.max_ts;
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
	uint64_t win = to > from ? to - from : 1, best_cpu = 0;
	const uint32_t *v;

	memset(a, 0, sizeof(*a));
	a->wait_seg = a->busy_seg = ARGUS_NONE;
	if (thr == ARGUS_NONE)
		return -ENOENT;
	n = argus_graph__thread_segments(g, thr, &v);
	/* the first segment that can overlap the window: binary search */
	uint32_t lo = 0, hi = n, timed = 0, ev0 = THRS(g)[thr].first_event;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (mid + 1 < n && SEGS(g)[v[mid + 1]].start <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && SEGS(g)[v[lo]].first_event != ARGUS_NONE)
		ev0 = SEGS(g)[v[lo]].first_event;
	for (uint32_t i = lo; i < n; i++) {
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
			else if (sleep_nr(s->wait_nr))
				timed++;
		}
		if (w > a->wait_ns) {
			a->wait_ns = w;
			a->wait_seg = v[i];
		}
	}
	/* sched_yield does not sleep (the switch is "runnable"): count calls,
	 * by their exits (the collector records no entry for it) */
	struct gev_walk it;
	const struct argus_thread *t = &THRS(g)[thr];
	uint32_t skip = ev0 != ARGUS_NONE && t->first_event != ARGUS_NONE ?
		gev_pos(g, ev0) - gev_pos(g, t->first_event) : 0;

	/* the yields can only make it a yield loop when the waits cover
	 * less than half the window, and 20 settle it */
	if (!exact && (a->wait_ns >= win / 2 || a->short_waits >= 20))
		ev0 = ARGUS_NONE;
	for (gev_walk_start(g, ev0, ev0 == ARGUS_NONE ? 0 : t->nevents - skip, &it);
	     it.ev != ARGUS_NONE; gev_walk_next(g, &it)) {
		const struct argus_gevent *ev = &EVS(g)[it.ev];

		if (ev->ts > to)
			break;
		if (ev->ts < from)
			continue;
		if (ev->type == AE_SAMPLE)
			a->samples++;
		else if (ev->type == AE_SYS_EXIT && ev->nr == SYS_sched_yield &&
			 ++a->short_waits >= 20 && !exact)
			break;
	}
	/* Busy is "running or runnable more than asleep": on a loaded machine
	 * a thread that computes may spend most of the window preempted, and
	 * that is not a wait on anyone (on-CPU < 50% read as blocked, with no
	 * wait to blame).  Time the thread was not there (before its start,
	 * after its exit) counts for neither.  The report's on-CPU figure
	 * tells computing from starved. */
	if (a->short_waits >= 20 && a->wait_ns < win / 2)
		a->kind = ARGUS_KIND_YIELD;     /* a spin on yields or short sleeps */
	else if (timed >= 3 && a->wait_ns < win / 2 && a->asleep_ns > a->run_ns)
		a->kind = ARGUS_KIND_YIELD;     /* a retry loop: try, sleep, try */
	else if (a->run_ns > a->asleep_ns)
		a->kind = ARGUS_KIND_BUSY;
	else
		a->kind = ARGUS_KIND_BLOCKED;
	return 0;
}

int argus_diag__activity(const struct argus_graph *g, uint32_t tid,
			 uint64_t from, uint64_t to, struct argus_activity *a)
{
	return activity(g, tid, from, to, true, a);
}
