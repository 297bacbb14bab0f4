/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_diagnose.c - from a hang to the culprit and the culprit's culprit.
 *
 *   1. classify the UI thread over the hang (diag_hangs.c): busy and
 *      yield stop here, the UI thread itself is the culprit, except a
 *      yield loop whose flag writes are in the trace, and a busy spin
 *      that a watched write ended (diag_flag.c);
 *   2. blocked: H = the UI segment whose wait covers most of the hang.
 *      Find N, the best similar segment of the same thread outside the
 *      hang (diag_similar.c), i.e. the same request that went well;
 *   3. the segment that woke N's successor is X; slice backward from X
 *      (inter-thread edges first, the weak intra edge otherwise) down to
 *      the start of N: that is the normal wake-up path, and its threads in
 *      order are who normally got the UI thread going again;
 *   4. the culprit is the first thread of that path, judged over the wait
 *      window: what it was doing instead of waking the next thread
 *      (blocked, busy, yield);
 *   5. a blocked culprit gets the same treatment on its own wait, up to
 *      `depth` levels; reaching a thread already in the chain (or the UI
 *      thread) is a cycle.  When the UI thread's wait ended by its own
 *      timer, that timeout is what broke the cycle: a deadlock turned
 *      into a livelock.
 *
 * A wait still open at the end of a trace of the running system is asked
 * of the live system (argus_diag_opts.live, docs/diagnosis.md "Live
 * holders"): who holds its other end, its lock, its mutex, which child
 * it waits for, and whether a culprit is stopped and by which tracer.
 * graphlib reads no /proc: it only calls the callbacks, and each chain
 * entry says which source named it (argus_culprit.live_source).
 *
 * "inspected" counts the nodes a user has to look at to follow this:
 * the hang segment, the normal node, each slice step where two or more
 * inter-thread edges made a choice, and the culprit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "diag_internal.h"
#include "graph_view.h"
#include "hang_rule.h"

#define MAX_SIMILAR 64

/* The most frequent stack of thread tid in [from, to]: its samples' and
 * its yields' (gview_event_stack()). */
static uint32_t hot_stack(const struct argus_graph *g, uint32_t tid,
			  uint64_t from, uint64_t to)
{
	uint32_t thr = argus_graph__thread_by_tid(g, tid), best = 0, bestn = 0;
	uint32_t ids[512], cnt[512], n = 0;
	const struct argus_gevent *ev;
	struct gview_walk it;
	struct gview v;

	if (thr == ARGUS_NONE)
		return 0;
	gview_get(g, &v);
	for (gview_walk_thread(&v, argus_graph__thread(g, thr),
			       argus_graph__thread(g, thr)->first_event, &it);
	     (ev = gview_walk_next(&v, &it));) {
		uint32_t i;

		if (ev->ts > to)
			break;
		uint32_t stk = ev->ts < from ? 0 : gview_event_stack(ev);

		if (!stk)
			continue;
		for (i = 0; i < n && ids[i] != stk; i++)
			;
		if (i == n) {
			if (n == 512)
				continue;
			ids[n] = stk;
			cnt[n++] = 0;
		}
		if (++cnt[i] > bestn) {
			bestn = cnt[i];
			best = ids[i];
		}
	}
	return best;
}

/* Wait window of segment h: from its switch-out to the next switch-in. */
static void wait_window(const struct argus_graph *g, uint32_t h, uint64_t *from,
			uint64_t *to, uint32_t *next)
{
	uint32_t last;

	/* a wait an attach interrupted runs from before the stop to the
	 * restarted call's end (graph_debugger.c) */
	*from = argus_graph__segment(g, argus_graph__wait_began(g, h))->end;
	argus_graph__wait_through(g, h, &last, next);
	*to = *next != ARGUS_NONE ? argus_graph__segment(g, *next)->start
				  : argus_graph__stats(g)->max_ts;
}

/* A wait that ended by the waiting thread's own timer: its timeout. */
static uint64_t own_timeout(const struct argus_graph *g, uint32_t h, uint32_t next)
{
	const uint32_t *ids;
	uint32_t n;

	if (next == ARGUS_NONE)
		return 0;
	n = argus_graph__in_edges(g, next, &ids);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (e->type == ARGUS_EDGE_TIMER && (e->flags & ARGUS_EDGE_F_WOKE) &&
		    diag_seg_tid(g, e->src) == diag_seg_tid(g, h))
			return argus_graph__segment(g, next)->start -
			       argus_graph__segment(g, h)->end;
	}
	return 0;
}

/* Did segment s make a syscall of its own (enter or exit)? */
static bool has_syscall(const struct argus_graph *g, uint32_t s)
{
	for (uint32_t e = argus_graph__segment(g, s)->first_event; e != ARGUS_NONE;
	     e = argus_graph__seg_next_event(g, s, e)) {
		uint8_t type = argus_graph__event(g, e, ARGUS_GEVENT_BUF)->type;

		if (type == AE_SYS_ENTER || type == AE_SYS_EXIT)
			return true;
	}
	return false;
}

/*
 * The segment in which the wait that h ends in began.  The kernel wakes a
 * reader blocked on a unix stream socket when its peer *reads* (that
 * makes room to write); the reader runs for microseconds, finds no data
 * and sleeps again inside the same read().  Such a segment makes no
 * syscall of its own (the read never returned) and re-blocks on the same
 * object: it continues the wait before it.  It exists only when the peer
 * reads and then does not reply at once -- in the hang, not in the normal
 * runs -- so similarity must start from the segment that entered the wait.
 */
static uint32_t wait_origin(const struct argus_graph *g, uint32_t h)
{
	for (int guard = 0; guard < 64; guard++) {
		const struct argus_segment *s = argus_graph__segment(g, h);
		uint32_t p = argus_graph__seg_prev(g, h);
		const struct argus_segment *ps;
		const struct argus_object *o, *po;

		if (p == ARGUS_NONE || s->start_reason != ARGUS_START_WAKE ||
		    s->end_reason != ARGUS_END_WAIT || s->wait_nr < 0)
			break;
		ps = argus_graph__segment(g, p);
		/* a debugger's stop inside the wait: h is the restarted call,
		 * the wait began before the stop */
		if (argus_graph__seg_interrupted(g, p)) {
			uint32_t b = argus_graph__wait_began(g, h);

			if (b == h)
				break;
			h = b;
			continue;
		}
		o = argus_graph__object(g, s->wait_obj);
		po = argus_graph__object(g, ps->wait_obj);
		if (ps->end_reason != ARGUS_END_WAIT || ps->wait_nr != s->wait_nr ||
		    (o ? o->kind : 0) != (po ? po->kind : 0) ||
		    (o ? o->obj : 0) != (po ? po->obj : 0) || has_syscall(g, h))
			break;
		h = p;
	}
	return h;
}

static void blame_wait(const struct argus_graph *g, const struct argus_diag_opts *o,
		       struct argus_diagnosis *d, uint32_t tid, uint32_t h,
		       uint64_t lo, uint64_t hi, uint32_t level, uint32_t depth);

/* Thread c is the next culprit (it normally wakes the waiting thread in
 * normal_seg, or holds the other end of its wait): judge it over the wait
 * window, close a cycle, or follow its own wait one level deeper. */
enum culprit_via { VIA_PATH, VIA_HOLDER, VIA_ASKED, VIA_LOCK, VIA_MUTEX, VIA_MUTEX_HOLDER,
		   VIA_COND,
		  VIA_WORK_ITEM, VIA_QUEUED_BEHIND, VIA_CHILD, VIA_TRACER, VIA_HOLDER_RULE };

/* o->live asked q: 0 with *a (a->n clamped), -errno (nothing known), or 1
 * when there is no such callback or it does not answer this query
 * (-EOPNOTSUPP): the older callbacks are asked instead. */
static int ask_live(const struct argus_diag_opts *o, const struct argus_live_query *q,
		    struct argus_live_answer *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->sz = sizeof(*a);
	if (!o->live)
		return 1;
	rc = o->live(o->live_ctx, q, a);
	if (rc == -EOPNOTSUPP)
		return 1;
	if (a->n > ARGUS_LIVE_MAX_PIDS)
		a->n = ARGUS_LIVE_MAX_PIDS;
	return rc < 0 ? rc : 0;
}

static bool live_stopped(const struct argus_graph *g, const struct argus_diag_opts *o,
			 struct argus_diagnosis *d, struct argus_culprit *k, uint64_t wfrom,
			 uint64_t wto, uint32_t level, uint32_t depth);
static bool blame_continuer(const struct argus_graph *g, const struct argus_diag_opts *o,
			    struct argus_diagnosis *d, uint32_t c, uint64_t wfrom, uint64_t wto,
			    uint32_t level, uint32_t depth);

static uint8_t via_rule(enum culprit_via via, bool late)
{
	switch (via) {
	case VIA_HOLDER: return ARGUS_RULE_PEER;
	case VIA_ASKED: return ARGUS_RULE_HANDOFF;
	case VIA_LOCK: return ARGUS_RULE_LOCK;
	case VIA_MUTEX: return ARGUS_RULE_MUTEX;
	case VIA_MUTEX_HOLDER: return ARGUS_RULE_MUTEX_HOLDER;
	case VIA_COND: return ARGUS_RULE_COND_SIGNALLER;
	case VIA_WORK_ITEM: return ARGUS_RULE_WORK_ITEM;
	case VIA_QUEUED_BEHIND: return ARGUS_RULE_QUEUED_BEHIND;
	case VIA_CHILD: return ARGUS_RULE_CHILD;
	case VIA_TRACER: return ARGUS_RULE_TRACER;
	case VIA_HOLDER_RULE: return ARGUS_RULE_HOLDER_RULE;
	case VIA_PATH: break;
	}
	return late ? ARGUS_RULE_WAKER : ARGUS_RULE_NORMAL_PATH;
}

/* src: the live source that named c (enum argus_live_source), 0 the
 * trace.  A child or a tracer the trace never saw (asleep since before
 * it) is still an entry, known only live (argus_culprit.live_only). */
static void add_culprit(const struct argus_graph *g, const struct argus_diag_opts *o,
			struct argus_diagnosis *d, uint32_t c, uint32_t normal_seg,
			bool late, enum culprit_via via, uint8_t src, uint64_t wfrom, uint64_t wto,
			uint32_t level, uint32_t depth)
{
	struct argus_activity a;
	struct argus_culprit *k;
	uint32_t thr = argus_graph__thread_by_tid(g, c);

	if (d->nchain == ARGUS_DIAG_MAX_CHAIN || !c)
		return;
	if (thr == ARGUS_NONE) {
		if (via != VIA_CHILD && via != VIA_TRACER && via != VIA_HOLDER_RULE)
			return;
		k = &d->chain[d->nchain++];
		memset(k, 0, sizeof(*k));
		k->tid = k->pid = c;    /* a process: its main thread */
		k->kind = ARGUS_KIND_NONE;
		k->seg = k->normal_seg = ARGUS_NONE;
		k->late = late;
		k->wait_nr = -1;
		k->rule = via_rule(via, late);
		k->live_source = src;
		k->live_only = 1;
		k->from = wfrom;
		k->to = wto;
		return;
	}
	/* a debugger or Argus itself is never to blame for a program's
	 * hang (graph_debugger.c): only when the user diagnoses the tool,
	 * or when a debugger the user did not attach holds the thread in a
	 * ptrace stop (VIA_TRACER: live_stopped left the user's own out) */
	if (argus_graph__thread(g, thr)->tool && via != VIA_TRACER) {
		uint32_t ht = argus_graph__thread_by_tid(g, d->hang.tid);

		if (ht == ARGUS_NONE || !argus_graph__thread(g, ht)->tool)
			return;
	}
	if (argus_diag__activity(g, c, wfrom, wto, &a))
		return;
	k = &d->chain[d->nchain++];
	memset(k, 0, sizeof(*k));
	k->tid = c;
	k->pid = argus_graph__thread(g, thr)->pid;
	k->kind = a.kind;
	k->normal_seg = normal_seg;
	k->late = late;
	k->holder = via == VIA_HOLDER;
	k->asked = via == VIA_ASKED;
	k->rule = via_rule(via, late);
	k->live_source = src;
	k->from = wfrom;
	k->to = wto;
	k->seg = a.kind == ARGUS_KIND_BLOCKED && a.wait_seg != ARGUS_NONE ? a.wait_seg
		 : a.busy_seg;
	if (k->seg == ARGUS_NONE)
		k->seg = argus_graph__segment_at(g, c, wfrom);
	if (a.kind == ARGUS_KIND_BLOCKED && a.wait_seg != ARGUS_NONE) {
		k->wait_ns = a.wait_ns;
		k->wait_nr = argus_graph__segment(g, a.wait_seg)->wait_nr;
		k->stack = argus_graph__segment(g, a.wait_seg)->wait_stack;
	} else {
		k->wait_nr = -1;
		k->stack = hot_stack(g, c, wfrom, wto);
	}
	/* a cycle: the chain came back to a thread already in it */
	for (uint32_t j = 0; j + 1 < d->nchain; j++)
		if (d->chain[j].tid == c)
			k->cycle = 1;
	if (c == d->hang.tid)
		k->cycle = 1;
	if (k->cycle) {
		d->cycle = 1;
		return;
	}
	/* stopped now: the stop is why it does not answer, not its wait */
	if (live_stopped(g, o, d, k, wfrom, wto, level, depth))
		return;
	if (level + 1 < depth && blame_continuer(g, o, d, c, wfrom, wto, level, depth))
		return;
	if (a.kind == ARGUS_KIND_BLOCKED && a.wait_seg != ARGUS_NONE && level + 1 < depth)
		blame_wait(g, o, d, c, a.wait_seg, wfrom, wto, level + 1, depth);
}

/*
 * Thread c sat stopped by a signal (SIGSTOP, SIGTSTP) for most of the
 * window, until another thread continued it (the SIGCONT's wake-up, a
 * signal edge into the segment after the stop): the stop, not what c did
 * once it ran again, is why it did not answer, and the thread that sent
 * SIGCONT ended it (rule waker: late, no normal run of a stop).  A
 * debugger's ptrace stop has no such edge (its resume is filtered,
 * graph_debugger.c).  True when that thread was added.
 */
static bool blame_continuer(const struct argus_graph *g, const struct argus_diag_opts *o,
			    struct argus_diagnosis *d, uint32_t c, uint64_t wfrom, uint64_t wto,
			    uint32_t level, uint32_t depth)
{
	uint32_t s = argus_graph__segment_at(g, c, wfrom), best = ARGUS_NONE;
	uint64_t most = 0;

	for (; s != ARGUS_NONE && argus_graph__segment(g, s)->start <= wto;
	     s = argus_graph__seg_next(g, s)) {
		const struct argus_segment *ss = argus_graph__segment(g, s);
		uint32_t n = argus_graph__seg_next(g, s);
		uint64_t a, b;

		if (!(ss->flags & ARGUS_SEG_F_STOPPED) || n == ARGUS_NONE)
			continue;
		a = ss->end > wfrom ? ss->end : wfrom;
		b = argus_graph__segment(g, n)->start;
		if (b > wto)
			b = wto;
		if (b > a && b - a > most) {
			most = b - a;
			best = n;
		}
	}
	if (best == ARGUS_NONE || most * 2 < wto - wfrom)
		return false;
	const uint32_t *in;
	uint32_t nin = argus_graph__in_edges(g, best, &in);

	for (uint32_t i = 0; i < nin; i++) {
		const struct argus_edge *e = argus_graph__edge(g, in[i], ARGUS_EDGE_BUF);

		if (e->type == ARGUS_EDGE_SIGNAL && diag_seg_tid(g, e->src) != c) {
			/* c's entry, just added: the stop is most of its window */
			d->chain[d->nchain - 1].stopped_ns = most;
			add_culprit(g, o, d, diag_seg_tid(g, e->src), e->src, true, VIA_PATH,
				    ARGUS_LIVE_NONE, wfrom, wto, level + 1, depth);
			return true;
		}
	}
	return false;
}

/* The tid to blame in process pid: its main thread when the graph has
 * it, else any thread of it, else ARGUS_NONE. */
static uint32_t thread_of_pid(const struct argus_graph *g, uint32_t pid)
{
	uint32_t thr = argus_graph__thread_by_tid(g, pid);

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
 * Chain entry k (not a cycle), live: is its thread stopped now?  Stopped
 * by a signal (SIGSTOP, SIGTSTP: state T), it answers nobody until it is
 * continued: that is why it does not wake the previous thread, and its
 * own wait in the trace is not followed.  In a ptrace stop (state t) by
 * a tracer other than the user's own debugger (the caller, which the
 * callback answers as tracer 0, and the hung thread's tracer,
 * d->live_hang_tracer), that tracer is the next entry (rule tracer): it
 * holds the thread stopped.  True when k is stopped.
 */
static bool live_stopped(const struct argus_graph *g, const struct argus_diag_opts *o,
			 struct argus_diagnosis *d, struct argus_culprit *k, uint64_t wfrom,
			 uint64_t wto, uint32_t level, uint32_t depth)
{
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_THREAD, .pid = k->pid,
				      .tid = k->tid };
	struct argus_live_answer a;
	uint32_t tracer, t;

	if (!o->live || ask_live(o, &q, &a) || !a.stop)
		return false;
	/* a ptrace stop by the user's own debugger (the caller's: tracer 0,
	 * or the hung thread's) is no cause (graph_debugger.c): its wait
	 * goes on being followed */
	tracer = a.stop == ARGUS_LIVE_STOP_PTRACE ? a.tracer : 0;
	if (a.stop == ARGUS_LIVE_STOP_PTRACE && (!tracer || tracer == d->live_hang_tracer))
		return false;
	k->live_stop = a.stop;
	if (!tracer || tracer == k->pid)
		return true;
	k->live_tracer = tracer;
	if (level + 1 < depth) {
		t = thread_of_pid(g, tracer);
		add_culprit(g, o, d, t != ARGUS_NONE ? t : tracer, ARGUS_NONE, true, VIA_TRACER,
			    ARGUS_LIVE_TRACER, wfrom, wto, level + 1, depth);
	}
	return true;
}

/* Who holds the other end of object (kind, obj, peer) now, live: up to
 * ARGUS_LIVE_MAX_PIDS pids, how many, and *src the source that said so.
 * o->live first, else the older o->holders (no TCP: it takes one id). */
static uint32_t live_holders(const struct argus_diag_opts *o, unsigned kind, uint64_t obj,
			     uint64_t peer, uint32_t *pids, uint8_t *src)
{
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_HOLDERS, .obj_kind = kind,
				      .obj = obj, .peer = peer };
	struct argus_live_answer a;
	int rc = ask_live(o, &q, &a);
	uint32_t n;

	*src = kind == AE_OBJ_FILE ? ARGUS_LIVE_LOCKS : kind == AE_OBJ_TCP ? ARGUS_LIVE_TCP_PEER
	       : ARGUS_LIVE_FD_PEER;
	if (rc < 0)
		return 0;
	if (rc == 0) {
		memcpy(pids, a.pids, a.n * sizeof(*pids));
		if (a.source && a.source < ARGUS_LIVE_SOURCE_MAX)
			*src = a.source;
		return a.n;
	}
	if (!o->holders || kind == AE_OBJ_TCP)
		return 0;
	n = o->holders(o->holders_ctx, kind, kind == AE_OBJ_UNIX ? peer : obj, pids,
		       ARGUS_LIVE_MAX_PIDS);
	return n < ARGUS_LIVE_MAX_PIDS ? n : ARGUS_LIVE_MAX_PIDS;
}

/*
 * Thread tid tried a file lock in [wfrom, wto] and was refused, or is
 * still waiting for it (a blocking flock/F_SETLKW, SQLite's busy loop of
 * F_SETLK tries and sleeps): the lock's holder is the culprit.  From the
 * trace's lock records first (who acquired a conflicting lock and had
 * not released it), else, live, from /proc/locks.  True when one was
 * added.
 */
static bool blame_lock(const struct argus_graph *g, const struct argus_diag_opts *o,
		       struct argus_diagnosis *d, uint32_t tid, uint64_t wfrom, uint64_t wto,
		       uint32_t level, uint32_t depth)
{
	struct argus_lock_op *ops = NULL, h, *want = NULL;
	uint32_t n = 0, pid, culprit = ARGUS_NONE;
	uint8_t src = ARGUS_LIVE_NONE;

	if (argus_diag__lock_ops(g, tid, wfrom, wto, &ops, &n) || !n) {
		free(ops);
		return false;
	}
	for (uint32_t i = n; i-- > 0 && !want;)
		if (ops[i].file && ops[i].ret < 0 && ops[i].op != ARGUS_LOCK_UNLOCK)
			want = &ops[i];
	pid = want ? want->pid : 0;
	if (want && !argus_diag__lock_blocker(g, want, &h) && h.tid != tid)
		culprit = h.tid;
	if (want && culprit == ARGUS_NONE && (o->live || o->holders)) {
		uint32_t pids[ARGUS_LIVE_MAX_PIDS];
		uint32_t np = live_holders(o, AE_OBJ_FILE, want->file, 0, pids, &src);

		for (uint32_t i = 0; i < np && culprit == ARGUS_NONE; i++)
			if (pids[i] != pid)
				culprit = thread_of_pid(g, pids[i]);
	} else {
		src = ARGUS_LIVE_NONE;  /* the trace's lock records */
	}
	free(ops);
	if (culprit == ARGUS_NONE)
		return false;
	add_culprit(g, o, d, culprit, ARGUS_NONE, true, VIA_LOCK, src, wfrom, wto, level, depth);
	return true;
}

/*
 * A futex wait nobody has ended, live: if the futex word is a glibc
 * mutex's, its owner (the tid glibc stores in it) is who the thread
 * waits for; if it is a PI futex, the owner tid the kernel keeps in the
 * word.  A heuristic: a condition variable or a bare futex has no owner,
 * and the callback says so.
 */
static bool blame_mutex(const struct argus_graph *g, const struct argus_diag_opts *o,
			struct argus_diagnosis *d, uint32_t tid, uint32_t h, uint64_t wfrom,
			uint64_t wto, uint32_t level, uint32_t depth)
{
	const struct argus_segment *s = argus_graph__segment(g, h);
	uint32_t owner = 0, pid = argus_graph__seg_thread(g, h)->pid;
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_LOCK_OWNER, .pid = pid,
				      .tid = tid, .arg = (int64_t)s->wait_arg };
	struct argus_live_answer a;
	uint8_t src = ARGUS_LIVE_MUTEX_OWNER;
	int rc;

	if (s->wait_nr != SYS_futex || (!o->live && !o->mutex_owner))
		return false;
	rc = ask_live(o, &q, &a);
	if (rc == 0 && a.n) {
		owner = a.pids[0];
		if (a.source && a.source < ARGUS_LIVE_SOURCE_MAX)
			src = a.source;
	} else if (rc != 1 || !o->mutex_owner ||
		   o->mutex_owner(o->mutex_ctx, pid, s->wait_arg, &owner)) {
		return false;
	}
	if (!owner || owner == tid || argus_graph__thread_by_tid(g, owner) == ARGUS_NONE)
		return false;
	add_culprit(g, o, d, owner, ARGUS_NONE, true, VIA_MUTEX, src, wfrom, wto, level, depth);
	return true;
}

/*
 * A wait for a child (wait4, waitid) nobody has ended, live: the child
 * it waits for is who would end it, by exiting.  The trace knows the
 * children only by what they did; which of them still run, only the
 * live system says (o->live, ARGUS_ASK_CHILDREN).  wait4's pid argument
 * (its sys_enter, in h or in the segments the same wait went on through)
 * narrows it to one child or a process group.  Of several children, the
 * first the trace has; else the first, known only live (a child asleep
 * since before the trace).  True when one was added.
 */
static bool blame_children(const struct argus_graph *g, const struct argus_diag_opts *o,
			   struct argus_diagnosis *d, uint32_t tid, uint32_t h, uint64_t wfrom,
			   uint64_t wto, uint32_t level, uint32_t depth)
{
	const struct argus_segment *hs = argus_graph__segment(g, h);
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_CHILDREN,
				      .pid = argus_graph__seg_thread(g, h)->pid, .tid = tid,
				      .arg = ARGUS_ASK_ANY_CHILD };
	struct argus_live_answer a;
	uint32_t s = h, pick = ARGUS_NONE;
	bool found = false;

	if (!o->live)
		return false;
	for (int back = 0; back < 8 && s != ARGUS_NONE && !found; back++) {
		for (uint32_t e = argus_graph__segment(g, s)->first_event; e != ARGUS_NONE;
		     e = argus_graph__seg_next_event(g, s, e)) {
			const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);

			if (ev->type != AE_SYS_ENTER || !argus_sys_is_child_wait(ev->nr))
				continue;
			found = true;
			/* wait4(pid, ...): the graph keeps arg0; waitid's id
			 * is its second argument, not kept: any child */
			q.arg = ev->nr == SYS_wait4 ? (int64_t)(int32_t)ev->val : ARGUS_ASK_ANY_CHILD;
		}
		s = argus_graph__seg_prev(g, s);
		/* the same wait goes on only through segments that ended in it */
		const struct argus_segment *ps = argus_graph__segment(g, s);

		if (ps && (ps->end_reason != ARGUS_END_WAIT || ps->wait_nr != hs->wait_nr))
			break;
	}
	if (ask_live(o, &q, &a) || !a.n)
		return false;
	for (uint32_t i = 0; i < a.n && pick == ARGUS_NONE; i++)
		if (a.pids[i] != q.pid)
			pick = thread_of_pid(g, a.pids[i]);
	if (pick == ARGUS_NONE)
		pick = a.pids[0] != q.pid ? a.pids[0] : ARGUS_NONE;
	if (pick == ARGUS_NONE || pick == tid)
		return false;
	add_culprit(g, o, d, pick, ARGUS_NONE, true, VIA_CHILD,
		    a.source && a.source < ARGUS_LIVE_SOURCE_MAX ? a.source : ARGUS_LIVE_CHILDREN,
		    wfrom, wto, level, depth);
	return true;
}

/*
 * A futex wait inside pthread_mutex_lock under the interposer: its
 * AE_MUTEX_WAIT record, written just before the thread went to sleep,
 * names the mutex and the thread that held it (glibc's owner field).
 * That holder is the culprit, whether or not the wait has ended, with no
 * normal run needed: it is a fact recorded at the wait, not a guess.
 * The record is the last mutex record of the thread before the wait's
 * switch-out, in h or, when glibc's lock loop slept more than once (a
 * wake-up that another thread beat it to), a few segments back; an
 * AE_MUTEX_ACQUIRED in between means that wait was over.  The futex the
 * thread slept on must be the mutex's lock word (its first field).
 */
#define MUTEX_WAIT_BACK 8

/*
 * Whether a futex at `uaddr` is one that glibc sleeps on inside a call
 * on object mo (glibc 2.36, x86_64): a mutex's lock word (offset 0); an
 * rwlock's __readers (0, PREFER_WRITER readers), __wrphase_futex (8) or
 * __writers_futex (12) -- rwlocks are AE_OBJ_MUTEX objects too, and a
 * mutex is never slept on at 8 or 12; a semaphore's value (0); a
 * condvar's __g_refs (16..23) or __g_signals (40..47).
 */
static bool sync_futex_of(const struct argus_object *mo, uint64_t uaddr)
{
	uint64_t off = uaddr - mo->obj;

	if (uaddr < mo->obj)
		return false;
	switch (mo->kind) {
	case AE_OBJ_MUTEX:
		return off == 0 || off == 8 || off == 12;
	case AE_OBJ_SEM:
		return off == 0;
	case AE_OBJ_COND:
		return (off >= 16 && off < 24) || (off >= 40 && off < 48);
	}
	return false;
}

/*
 * The interposer's record of the call a futex wait of segment h sleeps
 * in (AE_MUTEX_WAIT, up to MUTEX_WAIT_BACK segments back: a wait can be
 * cut by signals), copied to *wait and returned, and *mo its object, when the futex is that object's
 * (sync_futex_of); NULL when h is no futex wait, or the call it is in
 * acquired its lock already, or the futex is not the object's.
 */
static const struct argus_gevent *sync_wait_of(const struct argus_graph *g, uint32_t h,
					       const struct argus_object **mo,
					       struct argus_gevent *wait)
{
	const struct argus_segment *hs = argus_graph__segment(g, h);
	bool found = false;
	uint32_t s = h;

	if (hs->end_reason != ARGUS_END_WAIT || hs->wait_nr != SYS_futex)
		return NULL;
	for (int back = 0; back < MUTEX_WAIT_BACK && s != ARGUS_NONE && !found;
	     back++, s = argus_graph__seg_prev(g, s)) {
		/* the segment's last MUTEX_WAIT or MUTEX_ACQUIRED, into *wait */
		for (uint32_t e = argus_graph__segment(g, s)->first_event; e != ARGUS_NONE;
		     e = argus_graph__seg_next_event(g, s, e)) {
			const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);

			if (ev->type == AE_MUTEX_WAIT || ev->type == AE_MUTEX_ACQUIRED) {
				*wait = *ev;
				found = true;
			}
		}
		if (found && wait->type == AE_MUTEX_ACQUIRED)
			return NULL;
	}
	if (!found || !(*mo = argus_graph__object(g, wait->obj)) ||
	    !sync_futex_of(*mo, hs->wait_arg))
		return NULL;
	return wait;
}

/* The holder edge on object obj into one of the MUTEX_WAIT_BACK
 * segments after h (graph_mutex.c: the unlock, or the signal, that let
 * the wait of h return), ARGUS_NONE if none; *into its segment. */
static uint32_t holder_edge_after(const struct argus_graph *g, uint32_t h, uint64_t obj,
				  uint32_t *into)
{
	uint32_t nx = argus_graph__seg_next(g, h);

	for (int i = 0; i < MUTEX_WAIT_BACK && nx != ARGUS_NONE; i++, nx = argus_graph__seg_next(g, nx)) {
		const uint32_t *ids;
		uint32_t n = argus_graph__in_edges(g, nx, &ids);

		for (uint32_t j = 0; j < n; j++) {
			const struct argus_edge *e = argus_graph__edge(g, ids[j], ARGUS_EDGE_BUF);

			if (e->type == ARGUS_EDGE_HOLDER && e->obj == obj) {
				*into = nx;
				return ids[j];
			}
		}
	}
	return ARGUS_NONE;
}

/* The diagnosis' path: seg, then the source of edge e into it. */
static void path_via(const struct argus_graph *g, struct argus_diagnosis *d, uint32_t seg,
		     uint32_t e)
{
	d->path[0] = (struct argus_step){ .seg = seg, .edge = ARGUS_NONE };
	d->path[1] = (struct argus_step){ .seg = argus_graph__edge(g, e, ARGUS_EDGE_BUF)->src, .edge = e };
	d->npath = 2;
}

static bool blame_mutex_holder(const struct argus_graph *g, const struct argus_diag_opts *o,
			       struct argus_diagnosis *d, uint32_t tid, uint32_t h,
			       uint64_t wfrom, uint64_t wto, uint32_t level, uint32_t depth)
{
	const struct argus_object *mo = NULL;
	struct argus_gevent wait_buf;
	const struct argus_gevent *wait = sync_wait_of(g, h, &mo, &wait_buf);
	uint32_t holder;

	if (!wait)
		return false;
	holder = (uint32_t)wait->val;
	if (!holder || holder == tid || argus_graph__thread_by_tid(g, holder) == ARGUS_NONE)
		return false;
	/* the wait ended: the path is the holder edge into the segment that
	 * acquired the mutex (graph_mutex.c), when the unlock is traced */
	if (level == 0 && !d->npath) {
		uint32_t into, e = holder_edge_after(g, h, mo->obj, &into);

		if (e != ARGUS_NONE)
			path_via(g, d, into, e);
	}
	add_culprit(g, o, d, holder, ARGUS_NONE, false, VIA_MUTEX_HOLDER, ARGUS_LIVE_NONE, wfrom, wto,
		    level, depth);
	return true;
}

/*
 * A futex wait inside pthread_cond_wait under the interposer (its
 * AE_MUTEX_WAIT of kind cond, found as for a mutex).  A condvar has no
 * holder; whom the thread waits for is whoever will signal it:
 *   - the wait ended: the signal that let it return, i.e. the holder edge
 *     (graph_mutex.c: a signal or broadcast with waiters, by another
 *     thread, between the wait and the return) into the segment that
 *     returned; the path goes through it;
 *   - the wait has not ended (the hang in progress): the thread that
 *     last signalled this condvar before the window's end -- the one the
 *     program relies on to signal it.  Not the last holder of the
 *     condvar's mutex: that is the waiter itself (pthread_cond_wait is
 *     called with the mutex held and releases it), and uncontended
 *     locks are not recorded anyway.
 * A condvar no other thread ever signalled names nobody: the usual rules
 * go on (the kernel's futex wakers, normal runs).
 */
static bool blame_cond_signaller(const struct argus_graph *g, const struct argus_diag_opts *o,
				 struct argus_diagnosis *d, uint32_t tid, uint32_t h,
				 uint64_t wfrom, uint64_t wto, uint32_t level, uint32_t depth)
{
	const struct argus_object *mo = NULL;
	struct argus_gevent wait_buf;
	const struct argus_gevent *wait = sync_wait_of(g, h, &mo, &wait_buf);
	uint32_t who = 0, pid;
	struct gview v;
	uint64_t best_ts = 0;

	if (!wait || mo->kind != AE_OBJ_COND)
		return false;
	/* ended: the holder edge of the signal into the returning segment */
	uint32_t into, e = holder_edge_after(g, h, mo->obj, &into);
	bool ended;

	if (e != ARGUS_NONE) {
		who = diag_seg_tid(g, argus_graph__edge(g, e, ARGUS_EDGE_BUF)->src);
		if (level == 0 && !d->npath)
			path_via(g, d, into, e);
	}
	ended = who != 0;
	/* not ended (or its signal not recorded): the last signaller */
	pid = argus_graph__seg_thread(g, h)->pid;
	gview_get(g, &v);
	for (uint32_t t = 0; t < argus_graph__nthreads(g) && !ended; t++) {
		const struct argus_thread *th = argus_graph__thread(g, t);
		const struct argus_gevent *ev;
		struct gview_walk it;

		if (th->pid != pid || th->tid == tid)
			continue;
		for (gview_walk_thread(&v, th, th->first_event, &it); (ev = gview_walk_next(&v, &it));) {
			if (ev->type == AE_MUTEX_WAKE && ev->obj == wait->obj && ev->ts <= wto &&
			    ev->ts >= best_ts) {
				best_ts = ev->ts;
				who = th->tid;
			}
		}
	}
	if (!who || who == tid || argus_graph__thread_by_tid(g, who) == ARGUS_NONE)
		return false;
	add_culprit(g, o, d, who, ARGUS_NONE, false, VIA_COND, ARGUS_LIVE_NONE, wfrom, wto, level,
		    depth);
	return true;
}

/*
 * A wait for a work item the thread handed to another thread, from the
 * interposer's records (diag_work.c): the worker that ran it, or the one
 * that ran the item queued ahead of it.  Facts, not a guess from similar
 * runs: before the similarity search.
 */
static bool blame_work(const struct argus_graph *g, const struct argus_diag_opts *o,
		       struct argus_diagnosis *d, uint32_t tid, uint32_t h, uint64_t wfrom,
		       uint64_t wto, uint32_t level, uint32_t depth)
{
	struct argus_culprit w = { 0 }, *k;
	uint32_t c = 0, at = d->nchain;

	if (diag_work_find(g, tid, h, wfrom, wto, &c, &w) <= 0 || !c || c == tid)
		return false;
	/* the path: whoever ended the wait, sliced back to its start (the
	 * worker finishing the item ahead, then the item, then waking it) */
	if (level == 0) {
		uint64_t f, t;
		uint32_t next, e;

		wait_window(g, h, &f, &t, &next);
		if (next != ARGUS_NONE && (e = diag_waker_edge(g, next)) != ARGUS_NONE) {
			int ns;

			d->path[0] = (struct argus_step){ .seg = next, .edge = ARGUS_NONE };
			ns = argus_diag__slice(g, argus_graph__edge(g, e, ARGUS_EDGE_BUF)->src, tid,
					       argus_graph__segment(g, h)->end, o->pick, o->pick_ctx,
					       d->path + 1, ARGUS_DIAG_MAX_PATH - 1);
			if (ns > 0)
				d->path[1].edge = e;
			d->npath = ns > 0 ? (uint32_t)ns + 1 : 1;
		}
	}
	add_culprit(g, o, d, c, ARGUS_NONE, false,
		    w.rule == ARGUS_RULE_QUEUED_BEHIND ? VIA_QUEUED_BEHIND : VIA_WORK_ITEM,
		    ARGUS_LIVE_NONE, wfrom, wto, level, depth);
	if (d->nchain <= at)
		return false;
	k = &d->chain[at];
	k->item = w.item;
	k->item_fn = w.item_fn;
	k->item_kind = w.item_kind;
	k->item_queued_ns = w.item_queued_ns;
	k->ahead = w.ahead;
	k->ahead_fn = w.ahead_fn;
	k->ahead_kind = w.ahead_kind;
	k->ahead_done = w.ahead_done;
	k->ahead_tid = w.ahead_tid;
	k->ahead_ns = w.ahead_ns;
	return true;
}

/*
 * A wait with no normal run that nobody has ended yet (a hang in
 * progress): the renderer blocked reading a socket it uses only in the
 * hang.  Who would write to it is whoever holds the other end, and the
 * trace cannot say until that thread touches it; a live system can
 * (o->live or o->holders, e.g. /proc/PID/fd; for a loopback TCP
 * connection /proc/net/tcp first).  Of the holding process, the thread
 * taken is one already in the chain or the hung UI thread (it serves its
 * process's IPC from its event loop, and naming it closes the cycle),
 * else the process's main thread.  True when a culprit was added.
 */
static bool blame_holder(const struct argus_graph *g, const struct argus_diag_opts *o,
			 struct argus_diagnosis *d, uint32_t tid, uint32_t h,
			 uint64_t wfrom, uint64_t wto, uint32_t level, uint32_t depth)
{
	const struct argus_segment *s = argus_graph__segment(g, h);
	const struct argus_object *wo = argus_graph__object(g, s->wait_obj);
	uint32_t pids[ARGUS_LIVE_MAX_PIDS], n, self = argus_graph__seg_thread(g, h)->pid, pick = 0;
	uint8_t src;

	/* a pipe has no peer id: its inode is both ends'; a unix socket's
	 * peer is 0 while the server has not accepted it (the live side then
	 * looks for the listener) */
	if (s->end_reason != ARGUS_END_WAIT || !wo ||
	    (!wo->peer && wo->kind != AE_OBJ_PIPE && wo->kind != AE_OBJ_UNIX) ||
	    (wo->kind != AE_OBJ_UNIX && wo->kind != AE_OBJ_PIPE && wo->kind != AE_OBJ_TCP))
		return false;
	n = live_holders(o, wo->kind, wo->obj, wo->peer, pids, &src);
	for (uint32_t i = 0; i < n && !pick; i++) {
		if (pids[i] == self && wo->kind == AE_OBJ_PIPE)
			continue;       /* a pipe's inode is both ends' */
		if (pids[i] == d->hang.pid)
			pick = d->hang.tid;
		for (uint32_t j = 0; j < d->nchain && !pick; j++)
			if (d->chain[j].pid == pids[i])
				pick = d->chain[j].tid;
		if (!pick && argus_graph__thread_by_tid(g, pids[i]) != ARGUS_NONE)
			pick = pids[i];
		if (pick == tid)
			pick = 0;       /* its own process holds the end too: go on */
	}
	if (!pick)
		return false;
	add_culprit(g, o, d, pick, ARGUS_NONE, true, VIA_HOLDER, src, wfrom, wto, level, depth);
	return true;
}

/*
 * The last strong edge segment h sent to another thread before it blocked:
 * the request whose answer it waits for, when nothing else says whom it
 * waits for (no normal run of the wait, nobody has woken it, no holder).
 * ARGUS_NONE if it handed nothing to anyone.
 */
static uint32_t last_handoff(const struct argus_graph *g, uint32_t h)
{
	const uint32_t *ids;
	uint32_t n = argus_graph__out_edges(g, h, &ids), best = ARGUS_NONE;
	uint64_t last_send = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (!argus_edge_type_strong(e->type) || e->type == ARGUS_EDGE_TIMER ||
		    argus_graph__segment(g, e->dst)->thread == argus_graph__segment(g, h)->thread)
			continue;
		if (best == ARGUS_NONE || e->src_ts >= argus_graph__edge(g, best, ARGUS_EDGE_BUF)->src_ts)
			best = ids[i];
	}
	/* A send after that edge that reached nobody yet (no message edge:
	 * nobody has read it) is the real request, to a receiver the trace
	 * cannot name: guessing the earlier edge would be wrong (the
	 * renderer's spurious wake-up of ime_worker, then its call to the
	 * browser). */
	for (uint32_t e = argus_graph__segment(g, h)->first_event; e != ARGUS_NONE;
	     e = argus_graph__seg_next_event(g, h, e)) {
		const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);

		if (ev->type == AE_SYS_EXIT && ev->val > 0 && ev->obj && argus_sys_is_send(ev->nr))
			last_send = ev->ts;
	}
	if (best != ARGUS_NONE && last_send > argus_graph__edge(g, best, ARGUS_EDGE_BUF)->src_ts)
		return ARGUS_NONE;
	return best;
}

/* The segment that began the chain of poll retries segment h's wait
 * continues (hang_rule_poll_continues: curl's 1 s polls for a response),
 * h itself if none: walking back while the wait before is a poll that
 * timed out and the segment between tried nothing that worked.  Its
 * request was sent from there. */
static uint32_t poll_chain_first(const struct argus_graph *g, uint32_t h)
{
	uint32_t cur = h;
	struct gview v;

	gview_get(g, &v);
	for (int n = 0; n < 4096; n++) {
		uint32_t prev = argus_graph__seg_prev(g, cur);
		const struct argus_segment *ps = argus_graph__segment(g, prev);
		shape_t b = v.shape[cur];

		if (!ps || ps->end_reason != ARGUS_END_WAIT ||
		    !hang_rule_poll_continues(hang_rule_loop_nr(ps->wait_nr) &&
					      SHAPE_EXIT1(b) == SHAPE_EXIT1_TIMEDOUT,
					      argus_graph__segment(g, cur)->wait_nr, SHAPE_TRIES(b)))
			return cur;
		cur = prev;
	}
	return cur;
}

/* Thread `tid` blocked in segment h, judged over [lo, hi]: find who
 * normally wakes it and add that thread to the chain; recurse. */
static void blame_wait(const struct argus_graph *g, const struct argus_diag_opts *o,
		       struct argus_diagnosis *d, uint32_t tid, uint32_t h,
		       uint64_t lo, uint64_t hi, uint32_t level, uint32_t depth)
{
	const struct argus_segment *hseg = argus_graph__segment(g, h);
	struct argus_similar sim[MAX_SIMILAR];
	struct argus_step steps[ARGUS_DIAG_MAX_PATH];
	uint64_t wfrom, wto, tmo;
	uint32_t next, x = ARGUS_NONE, normal = ARGUS_NONE, nsteps = 0, hs;
	int nsim;

	wait_window(g, h, &wfrom, &wto, &next);
	/* A wait the debugger broke (attaching signals every blocked thread;
	 * its wake-up is filtered, then the thread sits in a ptrace stop) has
	 * not ended as far as the app is concerned: no one has woken it. */
	if (next != ARGUS_NONE && (argus_graph__segment(g, next)->flags & ARGUS_SEG_F_STOPPED) &&
	    diag_waker_edge(g, next) == ARGUS_NONE)
		next = ARGUS_NONE;
	if (wfrom < lo)
		wfrom = lo;
	if (wto > hi)
		wto = hi;
	/* The hang's own wait, still open because a debugger holds the
	 * waiter stopped, whose end the host saw happen (--until-end): the
	 * thread that did it. */
	if (level == 0 && next == ARGUS_NONE && o->ended_by_tid &&
	    o->ended_by_tid != tid && o->ended_by_ns >= hseg->end) {
		uint32_t ws = argus_graph__segment_at(g, o->ended_by_tid, o->ended_by_ns);

		/* judged up to what it did: what it waited for after it had
		 * woken the waiter (its event loop, up to now) is not why the
		 * waiter waited, and may lead back to it as a false cycle */
		if (ws != ARGUS_NONE) {
			add_culprit(g, o, d, o->ended_by_tid, ws, true, VIA_PATH, ARGUS_LIVE_NONE,
				    wfrom, wto < o->ended_by_ns ? wto : o->ended_by_ns, level, depth);
			d->normal_seg = ARGUS_NONE;
			return;
		}
	}
	/* A sleep (nanosleep) waits for no one: the thread chose to wait,
	 * and the chain ends with it (the `sleep` a script runs, a retry
	 * loop's pause).  Its timer is not a timeout that broke a cycle. */
	if (argus_sys_is_sleep(hseg->wait_nr))
		return;
	/* A mutex whose holder the interposer recorded: that holder. */
	if (blame_mutex_holder(g, o, d, tid, h, wfrom, wto, level, depth) ||
	    blame_cond_signaller(g, o, d, tid, h, wfrom, wto, level, depth)) {
		if (level == 0)
			d->normal_seg = ARGUS_NONE;
		return;
	}
	/* A work item it handed to another thread and waits for. */
	if (blame_work(g, o, d, tid, h, wfrom, wto, level, depth)) {
		if (level == 0)
			d->normal_seg = ARGUS_NONE;
		return;
	}
	tmo = own_timeout(g, h, next);
	if (tmo && !d->timeout_ns) {
		d->timeout_ns = tmo;
		d->timeout_tid = tid;
	}
	/* Normal runs of the same wait on the same object first.  When there
	 * are none, this wait is not a usual one (the renderer calling the
	 * browser only in the hang): whoever finally woke it says more than a
	 * wait that merely looks alike, so that comes before relaxing to
	 * waits on the same kind of object. */
	/* Waiting for a file lock and nobody has ended it: its holder. */
	if (next == ARGUS_NONE && argus_sys_is_file_lock(hseg->wait_nr) &&
	    blame_lock(g, o, d, tid, wfrom, wto, level, depth)) {
		if (level == 0)
			d->normal_seg = ARGUS_NONE;
		return;
	}
	/* Waiting for a child and nobody has ended it: the child, live (a
	 * normal run of the wait would name a child long gone). */
	if (next == ARGUS_NONE &&
	    argus_sys_is_child_wait(hseg->wait_nr) &&
	    blame_children(g, o, d, tid, h, wfrom, wto, level, depth)) {
		if (level == 0)
			d->normal_seg = ARGUS_NONE;
		return;
	}
	hs = wait_origin(g, h);
	/* Nobody has ended it (or its retry after its own timeout), and the
	 * application says who holds what it waits for (a schema holder rule,
	 * live; diag_holder_rule.c): a fact, before any guess from similar
	 * runs. */
	if ((next == ARGUS_NONE || tmo) && o->wait_holders) {
		uint32_t c = diag_holder_rule_pick(g, o, d, tid, h, hs);

		if (c != ARGUS_NONE) {
			add_culprit(g, o, d, c, ARGUS_NONE, true, VIA_HOLDER_RULE,
				    ARGUS_LIVE_HOLDER_RULE, wfrom, wto, level, depth);
			if (level == 0)
				d->normal_seg = ARGUS_NONE;
			return;
		}
	}
	nsim = diag_similar(g, hs, argus_graph__segment(g, hs)->start, wto, sim, MAX_SIMILAR, true);
	/* Not a usual wait and nobody has ended it yet: who holds the other
	 * end of it (live systems only) says more than waits on the same
	 * kind of object. */
	if (nsim == 0 && next == ARGUS_NONE &&
	    (((o->live || o->holders) && blame_holder(g, o, d, tid, hs, wfrom, wto, level, depth)) ||
	     blame_mutex(g, o, d, tid, hs, wfrom, wto, level, depth))) {
		if (level == 0)
			d->normal_seg = ARGUS_NONE;
		return;
	}
	bool relaxed = false;

	if (nsim == 0 && (next == ARGUS_NONE || diag_waker_edge(g, next) == ARGUS_NONE)) {
		nsim = diag_similar(g, hs, argus_graph__segment(g, hs)->start, wto, sim, MAX_SIMILAR,
				    false);
		relaxed = nsim > 0;
	}
	if (level == 0) {
		d->nsimilar = nsim > 0 ? (uint32_t)nsim : 0;
		d->normal_relaxed = relaxed;
	}
	uint32_t woke = ARGUS_NONE, xedge = ARGUS_NONE;

	for (int i = 0; i < nsim && x == ARGUS_NONE; i++) {
		uint32_t nn = argus_graph__seg_next(g, sim[i].seg), e;

		if (nn == ARGUS_NONE || (e = diag_waker_edge(g, nn)) == ARGUS_NONE)
			continue;
		normal = sim[i].seg;
		woke = nn;
		xedge = e;
		x = argus_graph__edge(g, e, ARGUS_EDGE_BUF)->src;
	}
	if (x == ARGUS_NONE && next != ARGUS_NONE) {
		/* no normal run: whoever finally woke it (late) */
		uint32_t e = diag_waker_edge(g, next);

		if (e != ARGUS_NONE) {
			woke = next;
			xedge = e;
			x = argus_graph__edge(g, e, ARGUS_EDGE_BUF)->src;
		}
	}
	if (level == 0)
		d->normal_seg = normal;
	if (x == ARGUS_NONE) {
		uint32_t e = last_handoff(g, hs), first;

		/* a chain of poll retries: the request was sent before its
		 * first poll */
		if (e == ARGUS_NONE && (first = poll_chain_first(g, hs)) != hs)
			e = last_handoff(g, first);

		if (e != ARGUS_NONE) {
			uint32_t dst = argus_graph__edge(g, e, ARGUS_EDGE_BUF)->dst;

			add_culprit(g, o, d, diag_seg_tid(g, dst), dst, true, VIA_ASKED,
				    ARGUS_LIVE_NONE, wfrom, wto, level, depth);
		}
		return;
	}
	/* steps[0] is the woken segment of the waiting thread, then the slice */
	steps[0] = (struct argus_step){ .seg = woke, .edge = ARGUS_NONE };
	int ns = argus_diag__slice(g, x, tid,
				   normal != ARGUS_NONE ? argus_graph__segment(g, normal)->start : 0,
				   o->pick, o->pick_ctx, steps + 1, ARGUS_DIAG_MAX_PATH - 1);
	nsteps = ns > 0 ? (uint32_t)ns + 1 : 1;
	steps[1].edge = xedge;
	for (uint32_t i = 0; i < nsteps; i++) {
		uint32_t j;

		if (steps[i].choices < 2)
			continue;
		for (j = 0; j < d->choices && d->choice_seg[j] != steps[i].seg; j++)
			;
		if (j == d->choices && j < ARGUS_DIAG_MAX_PATH)
			d->choice_seg[d->choices++] = steps[i].seg;
	}
	if (level == 0) {
		memcpy(d->path, steps, nsteps * sizeof(*steps));
		d->npath = nsteps;
	}
	/* the first thread of the path other than the waiting one */
	for (uint32_t i = 0; i < nsteps; i++) {
		uint32_t c = diag_seg_tid(g, steps[i].seg);

		if (c == tid)
			continue;
		add_culprit(g, o, d, c, steps[i].seg, normal == ARGUS_NONE, VIA_PATH, ARGUS_LIVE_NONE,
			    wfrom, wto, level, depth);
		return;
	}
}

const char *argus_culprit_rule_str(unsigned rule)
{
	static const char *const n[] = { "self", "normal-path", "waker", "peer-holder",
					 "handoff", "lock-holder", "mutex-owner", "dataflag",
					 "mutex-holder", "cond-signaller",
					 [ARGUS_RULE_WORK_ITEM] = "work-item",
					 [ARGUS_RULE_QUEUED_BEHIND] = "queued-behind",
					 [ARGUS_RULE_CHILD] = "child",
					 [ARGUS_RULE_TRACER] = "tracer",
					 [ARGUS_RULE_HOLDER_RULE] = "holder-rule" };

	return rule < sizeof(n) / sizeof(n[0]) ? n[rule] : NULL;
}

const char *argus_live_source_str(unsigned source)
{
	static const char *const n[ARGUS_LIVE_SOURCE_MAX] = {
		[ARGUS_LIVE_LOCKS] = "locks", [ARGUS_LIVE_FD_PEER] = "fd-peer",
		[ARGUS_LIVE_TCP_PEER] = "tcp-peer", [ARGUS_LIVE_TCP_LISTENER] = "tcp-listener",
		[ARGUS_LIVE_CHILDREN] = "children", [ARGUS_LIVE_MUTEX_OWNER] = "mutex-owner",
		[ARGUS_LIVE_PI_OWNER] = "pi-owner", [ARGUS_LIVE_TRACER] = "tracer",
		[ARGUS_LIVE_HOLDER_RULE] = "holder-rule",
		[ARGUS_LIVE_UNIX_LISTENER] = "unix-listener",
	};

	return source < ARGUS_LIVE_SOURCE_MAX ? n[source] : NULL;
}

const char *argus_live_stop_str(unsigned stop)
{
	return stop == ARGUS_LIVE_STOP_SIGNAL ? "signal" :
	       stop == ARGUS_LIVE_STOP_PTRACE ? "ptrace" : NULL;
}

int argus_diag__diagnose(const struct argus_graph *g,
			 const struct argus_hang *hang,
			 const struct argus_diag_opts *opts,
			 struct argus_diagnosis *d)
{
	struct argus_diag_opts oo = { .sz = sizeof(oo) }, *o = &oo;
	struct argus_activity a;
	uint32_t depth;
	int rc;

	if (!g || !hang || !d)
		return -EINVAL;
	if (opts)       /* an older, shorter struct: the rest stays default */
		memcpy(&oo, opts, opts->sz < sizeof(oo) ? opts->sz : sizeof(oo));
	depth = o->depth ? o->depth : 3;
	memset(d, 0, sizeof(*d));
	d->hang = *hang;
	d->normal_seg = ARGUS_NONE;
	d->hang_seg = ARGUS_NONE;
	if (o->live) {
		/* the hung thread's tracer is the user's debugger: never blamed */
		struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_THREAD,
					      .pid = hang->pid, .tid = hang->tid };
		struct argus_live_answer la;

		if (!ask_live(o, &q, &la))
			d->live_hang_tracer = la.tracer;
	}
	if ((rc = argus_diag__activity(g, hang->tid, hang->start, hang->end, &a)))
		return rc;
	d->kind = a.kind;
	d->inspected = 1;
	/* A retry loop on a file lock (try, refused, sleep, try): the lock's
	 * holder, not the loop, is to blame. */
	if (a.kind == ARGUS_KIND_YIELD &&
	    blame_lock(g, o, d, hang->tid, hang->start, hang->end, 0, depth)) {
		d->hang_seg = a.busy_seg != ARGUS_NONE ? a.busy_seg : hang->seg;
		d->inspected += d->nchain > 0;
		return 0;
	}
	/* The same loop seen before it has slept three times (attached 2 s
	 * into apt's 1 s retries on the dpkg lock): one long sleep so far,
	 * after a refused try in the run that ended in it. */
	const struct argus_segment *ws = argus_graph__segment(g, a.wait_seg);

	if (a.kind == ARGUS_KIND_BLOCKED && ws &&
	    argus_sys_is_sleep(ws->wait_nr) &&
	    blame_lock(g, o, d, hang->tid, ws->start < hang->start ? ws->start : hang->start,
		       hang->end, 0, depth)) {
		d->hang_seg = a.wait_seg;
		d->inspected += d->nchain > 0;
		return 0;
	}
	/* A spin on a data flag with its writes in the trace: its writer
	 * (diag_flag.c); without them, the report says how to get them.  A
	 * normal run's write comes first; with none (the watch was armed
	 * during this very hang: `argus flag --watch`), the write that ended
	 * the hang, whose writer wrote late. */
	if (a.kind == ARGUS_KIND_YIELD &&
	    diag_flag_follow(g, o, d, &a, depth, diag_flag_hang_edge(g, hang)))
		return 0;
	/* A busy hang that a flag's write ended: a pure busy spin (`pause`,
	 * no syscall) whose reader was named to `argus watch --reader`.  Its
	 * CPU time was the wait, so the writer is followed as for a yield
	 * loop.  Real CPU work has no such edge and stays its own culprit. */
	if (a.kind == ARGUS_KIND_BUSY) {
		uint32_t he = diag_flag_hang_edge(g, hang);

		if (he != ARGUS_NONE && diag_flag_follow(g, o, d, &a, depth, he))
			return 0;
	}
	if (a.kind != ARGUS_KIND_BLOCKED || a.wait_seg == ARGUS_NONE) {
		/* busy or yield: the UI thread is its own culprit */
		struct argus_culprit *k = &d->chain[d->nchain++];

		d->hang_seg = a.busy_seg != ARGUS_NONE ? a.busy_seg : hang->seg;
		k->tid = hang->tid;
		k->pid = hang->pid;
		k->kind = a.kind;
		k->seg = d->hang_seg;
		k->normal_seg = ARGUS_NONE;
		k->from = hang->start;
		k->to = hang->end;
		k->wait_nr = -1;
		k->stack = hot_stack(g, hang->tid, hang->start, hang->end);
		if (!k->stack && d->hang_seg != ARGUS_NONE)
			k->stack = argus_graph__segment(g, d->hang_seg)->wait_stack;
		return 0;
	}
	d->hang_seg = a.wait_seg;
	blame_wait(g, o, d, hang->tid, a.wait_seg, hang->start, hang->end, 0, depth);
	d->inspected += (d->normal_seg != ARGUS_NONE) + d->choices + (d->nchain > 0);
	return 0;
}
