/* hangs_replay.c - `argus hangs FILE --live-rule`: what argusd's live hang
 * watch (collector/hang_watch.h) reports over a recording, listed like the
 * offline finder's hangs so that the two can be compared line for line
 * (docs/diagnosis.md §1: one hang rule, live and offline).
 *
 * Every thread the machine-wide list considers is watched: user threads,
 * not kernel threads nor a debugger's or Argus's own (argus_thread.tool);
 * with --pid, that process's threads.  A thread is watched from its first
 * event, running (argusd finds a thread already running, or asleep in
 * what /proc/TID/syscall says; a recording starts from records only).
 * A hang still open at the end of the recording is ongoing and ends there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "diag_front.h"
#include "hang_watch.h"
#include "hangs_replay.h"
#include "msg.h"
#include "trace_format.h"

#define TASK_DEAD_STATE 0x80    /* prev_state of a task's last switch */
#define TID_BITS (1u << 22)     /* pid_max's ceiling (PID_MAX_LIMIT) */

struct replay {
	const struct argus_graph *g;
	struct argus_hang *h;
	uint32_t n, cap;
	int rc;
};

static unsigned kind_of(enum argus_live_kind k)
{
	return k == ARGUS_LIVE_BLOCKED ? ARGUS_KIND_BLOCKED :
	       k == ARGUS_LIVE_YIELD ? ARGUS_KIND_YIELD : ARGUS_KIND_BUSY;
}

static void add(struct replay *r, const struct argus_live_hang *lh, uint64_t end, bool ongoing)
{
	struct argus_hang *h;

	if (r->n == r->cap) {
		uint32_t nc = r->cap ? r->cap * 2 : 16;
		void *p = realloc(r->h, nc * sizeof(*r->h));

		if (!p) {
			r->rc = -ENOMEM;
			return;
		}
		r->h = p;
		r->cap = nc;
	}
	h = &r->h[r->n++];
	memset(h, 0, sizeof(*h));
	h->tid = lh->tid;
	h->pid = lh->pid;
	h->start = lh->start_ns;
	h->end = end > lh->start_ns ? end : lh->start_ns;
	h->ongoing = ongoing;
	h->kind = kind_of(lh->kind);
	h->flags = lh->loop ? ARGUS_HANG_F_LOOP : 0;
	h->seg = argus_graph__segment_at(r->g, lh->tid, h->start + (h->end - h->start) / 2);
}

static void on_hang(void *ctx, enum argus_hang_change what, const struct argus_live_hang *h)
{
	/* a shutdown is what the live side reported before it could know;
	 * the full model drops it, and so does the keeper's verdict */
	if (what == ARGUS_HANG_ENDED && !h->shutdown)
		add(ctx, h, h->end_ns, false);
}

/* Open hangs at the end: the watch reports them BEGAN only. */
struct open_hangs {
	struct argus_live_hang *h;
	uint32_t n, cap;
};

static void on_open(void *ctx, enum argus_hang_change what, const struct argus_live_hang *h)
{
	struct open_hangs *o = ctx;

	if (what == ARGUS_HANG_ENDED) {
		for (uint32_t i = 0; i < o->n; i++)
			if (o->h[i].id == h->id)
				o->h[i] = o->h[--o->n];
		return;
	}
	if (o->n == o->cap) {
		uint32_t nc = o->cap ? o->cap * 2 : 16;
		void *p = realloc(o->h, nc * sizeof(*o->h));

		if (!p)
			return;
		o->h = p;
		o->cap = nc;
	}
	o->h[o->n++] = *h;
}

struct both {
	struct replay *r;
	struct open_hangs *o;
};

static void on_both(void *ctx, enum argus_hang_change what, const struct argus_live_hang *h)
{
	struct both *b = ctx;

	on_hang(b->r, what, h);
	on_open(b->o, what, h);
}

static int by_start(const void *a, const void *b)
{
	const struct argus_hang *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Is thread tid one the replay watches? */
static bool wanted(const struct argus_graph *g, uint32_t tid, const struct hangs_replay_opts *o)
{
	uint32_t i = argus_graph__thread_by_tid(g, tid);
	const struct argus_thread *t;

	if (!tid || i == ARGUS_NONE)
		return false;
	t = argus_graph__thread(g, i);
	if (t->kernel || (!o->pid && t->tool))
		return false;
	return (!o->pid || t->pid == o->pid) && (!o->tid || t->tid == o->tid);
}

static void watch_new(struct argus_hang_watch *w, const struct argus_graph *g,
		      const struct hangs_replay_opts *o, uint32_t tid, uint64_t ts)
{
	struct argus_watch_thread wt;
	uint32_t i;

	if (!tid || argus_hang_watch__watching(w, tid) || !wanted(g, tid, o))
		return;
	i = argus_graph__thread_by_tid(g, tid);
	memset(&wt, 0, sizeof(wt));
	wt.tid = tid;
	wt.pid = argus_graph__thread(g, i)->pid;
	wt.why = ARGUS_WATCH_PID;
	wt.sys_nr = -1;
	wt.since_ns = ts;
	argus_hang_watch__add_thread(w, &wt);
}

int hangs_replay_graph(const struct argus_graph *g, struct argus_trace *t,
		       const struct hangs_replay_opts *o, struct argus_hang **out, uint32_t *nout)
{
	struct argus_hang_watch_opts wo = { .sz = sizeof(wo), .threshold_ns = o->threshold_ns };
	struct argus_hang_watch *w;
	struct replay r = { .g = g };
	struct open_hangs oh = { 0 };
	struct both b = { &r, &oh };
	struct argus_event ev;
	uint64_t last = 0, end = argus_graph__stats(g)->max_ts;
	uint8_t *gone;          /* tids that exited: not watched again until
	                           a fork reuses the tid */
	int rc;

	*out = NULL;
	*nout = 0;
	if ((rc = argus_trace__rewind(t)))
		return rc;
	if (!(gone = calloc(TID_BITS / 8, 1)))
		return -ENOMEM;
	if (!(w = argus_hang_watch__new(&wo))) {
		free(gone);
		return -ENOMEM;
	}
	/* the check runs as argusd's does between drains; a recording has
	 * every record at once, so every 100 ms of trace time */
	while ((rc = argus_trace__next(t, &ev, NULL)) > 0 && !r.rc) {
		uint32_t tid = ev.tid & (TID_BITS - 1);

		/* a thread's exit, and what it does after (its last wake-ups
		 * and its TASK_DEAD switch) come after the watch forgot it */
		if (ev.type == AE_EXIT)
			gone[tid / 8] |= (uint8_t)(1u << (tid % 8));
		if ((ev.type == AE_FORK || ev.type == AE_WAKEUP_NEW)) {
			uint32_t c = (uint32_t)ev.f[ARGUS_F_TK_CHILD_TID] & (TID_BITS - 1);

			gone[c / 8] &= (uint8_t)~(1u << (c % 8));
		}
		if (!(gone[tid / 8] & (1u << (tid % 8))) &&
		    !(ev.type == AE_SWITCH && (ev.f[ARGUS_F_SW_PREV_STATE] & TASK_DEAD_STATE)))
			watch_new(w, g, o, ev.tid, ev.ts);
		if (ev.type == AE_SWITCH) {
			uint32_t nt = (uint32_t)ev.f[ARGUS_F_SW_NEXT_TID] & (TID_BITS - 1);

			if (!(gone[nt / 8] & (1u << (nt % 8))))
				watch_new(w, g, o, (uint32_t)ev.f[ARGUS_F_SW_NEXT_TID], ev.ts);
		}
		argus_hang_watch__event(w, t, &ev);
		if (ev.ts >= last + 100000000ull) {
			argus_hang_watch__check(w, ev.ts, on_both, &b);
			last = ev.ts;
		}
	}
	if (rc >= 0)
		argus_hang_watch__check(w, end, on_both, &b);
	/* open at the end: ongoing, to the end of the trace */
	for (uint32_t i = 0; i < oh.n && !r.rc; i++) {
		add(&r, &oh.h[i], end, true);
		if (!r.rc && argus_hang_watch__unsettled(w, oh.h[i].tid))
			r.h[r.n - 1].flags |= ARGUS_HANG_F_UNSETTLED;
	}
	free(oh.h);
	free(gone);
	argus_hang_watch__free(w);
	if (rc < 0 || r.rc) {
		free(r.h);
		return rc < 0 ? rc : r.rc;
	}
	if (r.n)
		qsort(r.h, r.n, sizeof(*r.h), o->tid ? by_start : argus_hang_cmp_longest);
	*out = r.h;
	*nout = r.n;
	return 0;
}

int hangs_replay(struct graph_open_ctx *c, const char *cmd, const struct diag_front_opts *o,
		 unsigned scope, struct argus_hang **out, uint32_t *nout)
{
	struct hangs_replay_opts ro = { .threshold_ns = o->threshold_ns, .pid = o->pid,
					.tid = scope == ARGUS_HANGS_THREAD ? o->tid : 0 };
	int rc;

	if (o->pid && argus_graph__thread_by_tid(c->g, o->tid ? o->tid : o->pid) == ARGUS_NONE)
		return msg_error(cmd, "%s: no process %u in the trace", o->g.path, o->pid);
	if ((rc = hangs_replay_graph(c->g, c->t, &ro, out, nout)))
		return msg_error(cmd, "%s: %s", o->g.path, strerror(-rc));
	return 0;
}
