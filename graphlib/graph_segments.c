/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_segments.c - the thread table and segment open/close.
 *
 * A thread has at most one open segment.  Opening one closes nothing: the
 * caller closes first (gseg_close) with the reason the segment ended.  The
 * thread's on-CPU time is accumulated into its open segment at each
 * switch-out (graph_build.c) and at close.
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "hang_rule.h"
#include "graph_internal.h"
#include "schema.h"

static bool tid_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_graph *g = ctx;

	return THRS(g)[id - 1].tid == *(const uint32_t *)key;
}

/* A debugger's or Argus's own process, by its name (the kernel's comm:
 * 15 bytes, so lldb-server-16 is "lldb-server-16.").  Their wake-ups of a
 * program are the tool's (an attach, a resume, a read of /proc), never the
 * program's causality, and they are never a culprit (docs/diagnosis.md,
 * "The debugger is never to blame"). */
static bool tool_name(const char *c)
{
	static const char *const names[] = {
		"lldb", "gdb", "gdbserver", "strace", "ltrace", "argus", "argusd", "argus-unwind",
		"argus-pg-holder",      /* argus-pg-holders, cut to 15 bytes */
	};

	if (!c)
		return false;
	if (!strncmp(c, "lldb-", 5))    /* lldb-16, lldb-server-16., lldb-dap */
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(c, names[i]))
			return true;
	return false;
}

/* lldb's front end: what it starts for itself (it runs lsb_release
 * through sh at start-up) is the tool's too.  Not gdb, whose children are
 * the programs it runs, nor lldb-server or gdbserver, whose children are
 * the programs being debugged: met on the way up, the process is a
 * program (lldb -> lldb-server -> the app it launched). */
static bool frontend_name(const char *c)
{
	return c && (!strcmp(c, "lldb") ||
		     (!strncmp(c, "lldb-", 5) && strncmp(c, "lldb-server", 11)));
}

static bool server_name(const char *c)
{
	return c && (!strncmp(c, "lldb-server", 11) || !strcmp(c, "gdbserver") || !strcmp(c, "gdb"));
}

/* Is one of the process's ancestors (up to 4 generations, as far as the
 * trace's task table knows them) lldb's front end, with no debug server
 * between them? */
static bool frontend_child(const struct argus_graph *g, uint32_t ppid)
{
	for (int depth = 0; depth < 4 && ppid > 2; depth++) {
		const struct argus_task *pk = argus_trace__task(g->trace, ppid);
		const char *c;

		if (!pk)
			return false;
		c = argus_trace__string(g->trace, pk->comm);
		if (server_name(c))
			return false;
		if (frontend_name(c))
			return true;
		if (pk->ppid == ppid)
			return false;
		ppid = pk->ppid;
	}
	return false;
}

/* Kernel threads are children of kthreadd (pid 2).  Threaded irq handlers
 * are named irq/N-name; their wake-ups are interrupt work, not intent. */
static uint8_t thread_class(const struct argus_graph *g, const struct argus_thread *t,
			    const char *comm, const char *process)
{
	if (comm && !strncmp(comm, "irq/", 4) && (t->ppid == 2 || !t->ppid))
		return TC_IRQ;
	if (t->tid == 0 || t->pid == 2 || t->ppid == 2)
		return TC_KERNEL;
	if (tool_name(process) || tool_name(comm) || frontend_child(g, t->ppid))
		return TC_TOOL;
	return TC_USER;
}

void gthread_names(struct argus_graph *g, uint32_t thr)
{
	struct argus_thread *t = &THRS(g)[thr];
	struct tstate *s = g->b ? TSTATE(g, thr) : NULL;
	const struct argus_task *tk = argus_trace__task(g->trace, t->tid);
	const struct argus_task *pk = t->pid == t->tid ? tk :
		argus_trace__task(g->trace, t->pid);
	const char *comm;

	if (tk) {
		t->comm = tk->comm;
		if (tk->ppid)
			t->ppid = tk->ppid;
	}
	t->process = pk ? pk->comm : t->comm;
	comm = argus_trace__string(g->trace, t->comm);
	if (!s)
		return;
	s->comm = comm;
	s->process = argus_trace__string(g->trace, t->process);
	s->cls = thread_class(g, t, comm, argus_trace__string(g->trace, t->process));
	t->kernel = s->cls == TC_KERNEL || s->cls == TC_IRQ;
	t->tool = s->cls == TC_TOOL;
	if (g->b->schema) {
		const struct argus_schema *sc = g->b->schema;

		for (uint32_t i = 0; i < sc->nfilters; i++)
			if (sc->filters[i].kind == SCHEMA_FILTER_KERNEL &&
			    schema_filter_match(&sc->filters[i], s->process,
						s->comm))
				s->cls = TC_KERNEL;
	}
}

/* A new thread entry for tid; the tid index then finds it (a reused tid
 * replaces the dead thread's entry there).  ARGUS_NONE on ENOMEM. */
uint32_t gthread_new(struct argus_graph *g, uint32_t tid, uint32_t pid)
{
	uint32_t h = (uint32_t)argus_mix64(tid), slot = tid & (TCACHE_SIZE - 1);
	struct argus_thread *t = gvec_push(&g->thr, sizeof(*t));
	struct tstate *s = gvec_push(&g->b->ts, sizeof(*s));

	if (!t || !s)
		return ARGUS_NONE;
	t->tid = tid;
	t->pid = pid;
	t->first_event = ARGUS_NONE;
	s->cur = s->last_seg = s->last_ev = s->tmr_seg = ARGUS_NONE;
	s->sys_nr = -1;
	if (argus_hidx_set(&g->tid_idx, h, tid_eq, g, &tid, g->thr.n) &&
	    argus_hidx_insert(&g->tid_idx, h, g->thr.n))
		return ARGUS_NONE;
	g->b->tcache_tid[slot] = tid;
	g->b->tcache_thr[slot] = g->thr.n - 1;
	gthread_names(g, g->thr.n - 1);
	return g->thr.n - 1;
}

/* gthread_get() past a miss in the cache: the tid index, or a new entry. */
uint32_t gthread_lookup(struct argus_graph *g, uint32_t tid, uint32_t pid)
{
	uint32_t h, id, slot = tid & (TCACHE_SIZE - 1);

	h = (uint32_t)argus_mix64(tid);
	id = argus_hidx_find(&g->tid_idx, h, tid_eq, g, &tid);
	if (id) {
		g->b->tcache_tid[slot] = tid;
		g->b->tcache_thr[slot] = id - 1;
		return id - 1;
	}
	return gthread_new(g, tid, pid);
}

uint32_t gseg_open(struct argus_graph *g, uint32_t thr, uint64_t ts,
		   uint8_t reason)
{
	struct tstate *s = TSTATE(g, thr);
	struct argus_segment *seg = gvec_push(&g->seg, sizeof(*seg));
	struct segx *x = gvec_push(&g->b->sx, sizeof(*x));
	shape_t *shape = gvec_push(&g->shape, sizeof(shape_t));

	if (!seg || !x || !shape)
		return ARGUS_NONE;
	seg->start = seg->end = ts;
	seg->thread = thr;
	seg->first_event = ARGUS_NONE;
	seg->start_reason = reason;
	seg->wait_nr = -1;
	if (s->cls == TC_KERNEL || s->cls == TC_IRQ)
		seg->flags |= ARGUS_SEG_F_KERNEL;
	s->wake_edge = s->msg_edge = ARGUS_NONE;
	s->cur = s->last_seg = g->seg.n - 1;
	s->last_traced = 0;
	return s->cur;
}

/* A syscall entry or exit ge of thread thr, in its open segment: its wait
 * shape (SHAPE_*).  obj_kind and obj_key: the exit's object (0: none). */
void gseg_shape_sys(struct argus_graph *g, uint32_t thr, const struct argus_gevent *ge,
		    uint32_t obj_kind, uint64_t obj_key)
{
	struct tstate *s = TSTATE(g, thr);
	shape_t *b;
	long nr = ge->nr;
	bool in, out;

	if (s->cur == ARGUS_NONE || ge->ctx != AE_CTX_TASK)
		return;
	b = &SHAPES(g)[s->cur];
	if (ge->type == AE_SYS_ENTER) {
		if (argus_sys_is_pollfd(nr))   /* ge->val: its nfds (graph_build.c) */
			*b = (*b & ~SHAPE_POLL_MANY) | SHAPE_POLL | (ge->val >= 2 ? SHAPE_POLL_MANY : 0);
		return;
	}
	if (!SHAPE_EXIT1(*b)) {
		unsigned k = hang_rule_restart(ge->val) ? SHAPE_EXIT1_RESTART :
			     hang_rule_timed_out(nr, ge->val) ? SHAPE_EXIT1_TIMEDOUT :
			     SHAPE_EXIT1_PLAIN;
		*b |= (shape_t)(k << SHAPE_EXIT1_SHIFT);
	}
	*b |= (shape_t)(hang_rule_try(nr, ge->val) << SHAPE_TRY_SHIFT);
	if (!obj_kind || !hang_rule_conn_kind(obj_kind))
		return;
	in = hang_rule_in(nr, ge->val);
	out = hang_rule_out(nr, ge->val);
	if (!in && !out)
		return;
	if (!(*b & SHAPE_CONN)) {
		/* a reply: input on the connection written last (a request
		 * goes down one pipe and its reply comes up another) */
		if (in && s->out_kind &&
		    (s->out_kind == AE_OBJ_PIPE ? obj_kind == AE_OBJ_PIPE : obj_key == s->out_key))
			*b |= SHAPE_CONN1_REPLY;
		*b |= SHAPE_CONN;
	}
	if (out) {
		*b |= SHAPE_OUT;
		s->out_key = obj_key;
		s->out_kind = obj_kind;
	}
}

void gseg_close(struct argus_graph *g, uint32_t thr, uint64_t ts,
		uint8_t reason)
{
	struct tstate *s = TSTATE(g, thr);
	struct argus_segment *seg;

	if (s->cur == ARGUS_NONE)
		return;
	seg = &SEGS(g)[s->cur];
	if (ts > seg->end)
		seg->end = ts;
	if (s->run_since && ts > s->run_since) {
		seg->oncpu += ts - s->run_since;
		s->run_since = ts;
	}
	seg->end_reason = reason;
	s->cur = ARGUS_NONE;
}

/* A new block of event slots, linked after the chain's last event `last`
 * (ARGUS_NONE: it starts a chain).  Returns its first slot, ARGUS_NONE on
 * ENOMEM.  Its slots are zeroed: unused ones read as AE_NONE. */
uint32_t gev_new_block(struct argus_graph *g, uint32_t last, uint32_t thr)
{
	struct evblk *b = gvec_push(&g->blk, sizeof(*b));
	uint32_t id;

	if (!b || !gvec_push_n(&g->ev, sizeof(struct gev), EVBLK))
		return ARGUS_NONE;
	id = g->ev.n - EVBLK;
	b->next = ARGUS_NONE;
	b->pos = 0;
	b->thr = thr;
	if (last != ARGUS_NONE) {
		struct evblk *pb = &BLKS(g)[last >> EVBLK_SHIFT];

		pb->next = id;
		b->pos = pb->pos + EVBLK;
	}
	return id;
}

/* A thread's big values go to runs of GEV_BIGRUN entries of its own, in
 * its events' order: a walk over its events reads them in order, one
 * cache miss per run.  Appended one at a time, they were a miss per value
 * (30% of a hang finding's sweep of a generated trace where 18% of the
 * values are big: futex addresses, kernel timer ids). */
#define GEV_BIGRUN 16

bool gev_pack_rare(struct argus_graph *g, uint32_t thr, const struct argus_gevent *ge,
		   struct gev *p)
{
	uint64_t rel = ge->ts - g->ts_base;

	if (ge->ts >= g->ts_base && rel <= GEV_TS_MASK && ge->obj <= GEV_REF_MASK &&
	    ge->nr >= GEV_NR_MIN && ge->nr <= GEV_NR_MAX) {
		/* only the value is too big: the usual case */
		uint32_t *next = thr != ARGUS_NONE ? &TSTATE(g, thr)->big_next : &g->b->idle_big_next;
		uint32_t *end = thr != ARGUS_NONE ? &TSTATE(g, thr)->big_end : &g->b->idle_big_end;

		if (*next == *end) {
			if (g->bigval.n > (uint32_t)INT32_MAX - GEV_BIGRUN ||
			    !gvec_push_n(&g->bigval, sizeof(int64_t), GEV_BIGRUN))
				return false;
			*end = g->bigval.n;
			*next = *end - GEV_BIGRUN;
		}
		GV(g->bigval, int64_t)[*next] = ge->val;
		g->st.big_values++;
		p->w0 |= rel | GEV_BIGVAL;
		p->val32 = (int32_t)(*next)++;
		p->w1 |= ge->obj;
	} else {
		struct gev_wide *w;

		if (g->wide.n >= (uint32_t)INT32_MAX || !(w = gvec_push(&g->wide, sizeof(*w))))
			return false;
		w->ts = ge->ts;
		w->val = ge->val;
		w->ref = ge->obj;
		w->nr = ge->nr;
		g->st.wide_events++;
		p->w0 |= GEV_WIDE;
		p->val32 = (int32_t)(g->wide.n - 1);
	}
	return true;
}
