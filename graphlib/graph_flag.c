/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_flag.c - DATAFLAG edges: a write to a watched flag -> the segment
 * of the thread that was spinning on it and stopped spinning after it.
 *
 * A hardware watchpoint sees writes only (`argus watch`, AE_HWWATCH), so
 * the reader is either named by the user or found by its behaviour
 * (docs/graph.md, "Data-flag edges"):
 *
 *   1. a write W at time tw to address A of process P, by thread T;
 *   2. the waiters, every other thread R of P that
 *      a. is the reader the write's record names (`argus watch --reader`,
 *         ARGUS_F_HW_READER, kept aside in g->flag_readers): a waiter
 *         whatever its syscalls -- a pure busy spin (`pause`) makes none
 *         -- unless it was blocked in a wait that is not a sleep at tw
 *         (then it was not reading anything);
 *      b. or was *in a spin loop* at tw: the last syscall R made at or
 *         before tw was a spin syscall (sched_yield, nanosleep,
 *         clock_nanosleep: gflag_spin_nr), less than SPIN_GAP_NS before
 *         tw; or R was inside one at tw (its first syscall event after tw
 *         is a spin call's exit: sched_yield's entry is not recorded by
 *         default); or R was asleep in such a sleep;
 *      c. or is *armed*: the write before W was R's own and R has not
 *         waited since;
 *   3. L, the first time after tw that R did something else than spin: a
 *      syscall that is not a spin syscall, or the end of a segment in a
 *      wait that is not a sleep (going back to its idle poll), or its
 *      exit.  For a named busy spinner that is simply the first syscall
 *      it makes after the write.  Its state and L are taken from the
 *      earliest time the write can have been, not from its record's
 *      stamp (HIT_LAG_NS); so are another reader's when it was no
 *      longer spinning at the stamp.  No L within LEAVE_MAX_NS: R did not leave (the
 *      write did not release it), no edge;
 *   4. edge: T's segment at tw -> R's segment at L, src_ts = tw (or L
 *      when the record was stamped after it), dst_ts = L, obj = A.  When several writes precede the same L (a
 *      writer that sets the flag twice), only the last one before L gets
 *      the edge: it is the one that released R.
 *
 * A pure busy spin (no syscall at all) whose reader is not named is
 * invisible here: it has no spin syscalls to recognize, and gets no edge.
 *
 * Cost: the writes sorted by time; per write, a look back to the previous
 * write of the same flag, the threads of the same process, and per such
 * thread a walk of its events from the segment at tw to L (bounded by
 * LEAVE_MAX_NS).  Writes are few (a watched flag), but finding them is a
 * walk over every thread's events; a trace without AE_HWWATCH events
 * (the builder counts them, gbuild.nflag_writes) costs nothing.
 */
#include "graph_internal.h"
#include "syscall_class.h"

#define SPIN_GAP_NS 20000000ull         /* a yield loop turns faster than this */
#define LEAVE_MAX_NS 10000000000ull     /* leaves the spin within 10 s of the write */
/*
 * Kernel/VM quirk: a hit's record is stamped when the breakpoint's perf
 * handler runs, and in this VM that is 10-50 us after the write itself
 * (the #DB trap goes through the hypervisor).  A busy spinner on another
 * CPU sees the value within nanoseconds: it has often left its spin, and
 * even gone to sleep in its poll, before the recorded tw.  The real write
 * is after the writer's previous task event (it runs user code between
 * the two) and, we take it, at most HIT_LAG_NS before tw: a named
 * reader's state and leave are looked for from there, and another
 * reader's too when it was no longer spinning at tw (a yield loop is as
 * quick to see the value as a busy spin, and was found already back in
 * its poll at the stamp).
 */
#define HIT_LAG_NS 1000000ull

bool gflag_spin_nr(long nr)
{
	return argus_sys_is(nr, ARGUS_SC_YIELD | ARGUS_SC_SLEEP);
}

#define sleep_nr argus_sys_is_sleep

static bool is_sys(const struct argus_gevent *e)
{
	return e->type == AE_SYS_ENTER || e->type == AE_SYS_EXIT;
}

/*
 * Was thread r spinning at tw?  And if so, when did it leave (*leave_ts)
 * and in which segment (*leave_seg)?  False when it was not spinning or
 * did not leave in time.  armed: r cleared the flag itself (rule 2c);
 * named: the write names r as its reader (rule 2a).  Either makes r a
 * waiter without looking at its spin calls.
 */
static bool spin_leave(const struct argus_graph *g, uint32_t r, uint64_t tw, bool armed,
		       bool named, uint64_t *leave_ts, uint32_t *leave_seg)
{
	uint32_t s = gseg_at(g, r, tw), e;
	const struct argus_segment *sg;
	uint64_t last_spin = 0;
	bool asleep = false, other = false;

	if (s == ARGUS_NONE)
		return false;
	sg = &SEGS(g)[s];
	/* what r did last at or before tw, inside the segment */
	for (e = sg->first_event; e != ARGUS_NONE; e = argus_graph__seg_next_event(g, s, e)) {
		const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);

		if (ev->ts > tw)
			break;
		if (!is_sys(ev))
			continue;
		if (gflag_spin_nr(ev->nr)) {
			last_spin = ev->ts;
			other = false;
		} else {
			other = true;
		}
	}
	/* asleep at tw in a sleep that ended this segment */
	if (sg->end <= tw && sg->end_reason == ARGUS_END_WAIT) {
		if (!sleep_nr(sg->wait_nr))
			return false;   /* blocked in a real wait, not spinning */
		asleep = true;
	}
	bool before = armed || named || asleep ||
		      (!other && last_spin && tw - last_spin <= SPIN_GAP_NS);
	bool first = true;

	/* the first thing after tw that is not the spin */
	for (; s != ARGUS_NONE; s = argus_graph__seg_next(g, s)) {
		sg = &SEGS(g)[s];
		if (sg->start > tw + LEAVE_MAX_NS)
			return false;
		for (e = sg->first_event; e != ARGUS_NONE;
		     e = argus_graph__seg_next_event(g, s, e)) {
			const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);

			if (ev->ts <= tw || !is_sys(ev))
				continue;
			if (gflag_spin_nr(ev->nr)) {
				/* inside a spin call at tw (entries of
				 * sched_yield are not recorded by default:
				 * its exit is the first sign) */
				if (first && ev->type == AE_SYS_EXIT)
					before = true;
				first = false;
				continue;
			}
			if (!before || ev->ts > tw + LEAVE_MAX_NS)
				return false;
			*leave_ts = ev->ts;
			*leave_seg = s;
			return true;
		}
		if (sg->end > tw && (sg->end_reason == ARGUS_END_EXIT ||
				     (sg->end_reason == ARGUS_END_WAIT && !sleep_nr(sg->wait_nr)))) {
			if (!before)
				return false;
			*leave_ts = sg->end;
			*leave_seg = s;
			return true;
		}
		if (sg->end_reason == ARGUS_END_TRACE)
			return false;
	}
	return false;
}

/* One candidate edge, before the "last write before L" filter. */
struct cand {
	uint32_t src, dst;      /* segments */
	uint64_t tw, tl;
	uint64_t addr;
	uint32_t reader;        /* thread index */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->reader != y->reader)
		return x->reader < y->reader ? -1 : 1;
	if (x->tl != y->tl)
		return x->tl < y->tl ? -1 : 1;
	return x->tw < y->tw ? -1 : x->tw > y->tw;
}

/* One watched write. */
struct wr {
	uint64_t ts;
	uint32_t thr;           /* writer's thread index */
	uint32_t obj;           /* the flag (AE_OBJ_FLAG object: address, pid) */
	uint32_t src;           /* writer's segment at ts */
	uint32_t reader;        /* the tid its record names, 0 none */
	uint64_t lo;            /* the write was at or after this (HIT_LAG_NS) */
};

int gflag_note_reader(struct argus_graph *g, uint32_t ev, uint32_t tid)
{
	struct gflag_reader *r = gvec_push(&g->flag_readers, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*r = (struct gflag_reader){ .ev = ev, .tid = tid };
	return 0;
}

static int reader_cmp(const void *a, const void *b)
{
	const struct gflag_reader *x = a, *y = b;

	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The reader tid write event ev names, 0 none (g->flag_readers sorted by
 * event id). */
static uint32_t named_reader(const struct argus_graph *g, uint32_t ev)
{
	const struct gflag_reader *v = GV(g->flag_readers, struct gflag_reader);
	uint32_t lo = 0, hi = g->flag_readers.n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->flag_readers.n && v[lo].ev == ev ? v[lo].tid : 0;
}

static int wr_cmp(const void *a, const void *b)
{
	const struct wr *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int gflag_edges(struct argus_graph *g)
{
	struct gvec cv = { 0 }, wv = { 0 };
	int added = 0;

	if (!g->b->nflag_writes)
		return 0;       /* no writes: no walk over every event */
	if (g->flag_readers.n)
		qsort(g->flag_readers.p, g->flag_readers.n, sizeof(struct gflag_reader), reader_cmp);
	for (uint32_t t = 0; t < g->thr.n; t++) {
		const struct argus_thread *wt = &THRS(g)[t];
		uint64_t prev = 0;      /* the thread's last task event before */

		for (uint32_t e = wt->first_event; e != ARGUS_NONE;
		     e = argus_graph__thread_next_event(g, t, e)) {
			const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);
			uint64_t p = prev;
			uint32_t src;
			struct wr *w;

			if (ev->ctx == AE_CTX_TASK)
				prev = ev->ts;
			if (ev->type != AE_HWWATCH || !ev->obj ||
			    (src = gseg_at(g, t, ev->ts)) == ARGUS_NONE)
				continue;
			if (!(w = gvec_push(&wv, sizeof(*w))))
				goto nomem;
			*w = (struct wr){ .ts = ev->ts, .thr = t, .obj = ev->obj, .src = src,
					  .reader = named_reader(g, e) };
			w->lo = ev->ts > HIT_LAG_NS ? ev->ts - HIT_LAG_NS : 0;
			if (p > w->lo)
				w->lo = p;
		}
	}
	if (wv.n)        /* qsort(NULL, 0) is undefined (UBSan) */
		qsort(wv.p, wv.n, sizeof(struct wr), wr_cmp);
	for (uint32_t i = 0; i < wv.n; i++) {
		const struct wr *w = &GV(wv, struct wr)[i];
		const struct argus_thread *wt = &THRS(g)[w->thr];
		const struct argus_object *o = argus_graph__object(g, w->obj);
		uint32_t armed = ARGUS_NONE;

		/* The write before this one to the same flag, by another
		 * thread that has not waited since: that thread cleared the
		 * flag and is waiting for it (rule 2b). */
		for (uint32_t j = i; j-- > 0;) {
			const struct wr *p = &GV(wv, struct wr)[j];

			if (p->obj != w->obj)
				continue;
			if (p->thr != w->thr && gseg_at(g, p->thr, w->ts) == p->src)
				armed = p->thr;
			break;
		}
		for (uint32_t r = 0; r < g->thr.n; r++) {
			const struct argus_thread *rt = &THRS(g)[r];
			bool named = w->reader && rt->tid == w->reader;
			uint64_t tl;
			uint32_t dst;
			struct cand *c;

			/* a named reader is looked at from the earliest time the
			 * write can have been (HIT_LAG_NS); another one at the
			 * record's stamp, and, if it was no longer spinning by
			 * then, from that earliest time too: a yield loop on the
			 * other CPU sees the value as soon as a busy one does,
			 * and was often back in its poll before the stamp (e2e
			 * watch_flag_spin, 1 run in 5 in session 11) */
			uint64_t at = named ? w->lo : w->ts;

			if (r == w->thr || rt->pid != wt->pid || rt->kernel || rt->tid == wt->tid)
				continue;
			if (!spin_leave(g, r, at, r == armed, named, &tl, &dst) &&
			    (at <= w->lo || !spin_leave(g, r, w->lo, r == armed, named, &tl, &dst)))
				continue;
			if (!(c = gvec_push(&cv, sizeof(*c))))
				goto nomem;
			/* src_ts: the write, which was no later than the leave it
			 * caused (the record may be stamped after it) */
			*c = (struct cand){ .src = w->src, .dst = dst, .tw = tl < w->ts ? tl : w->ts,
					    .tl = tl, .addr = o ? o->obj : 0, .reader = r };
		}
	}
	/* the last write before each (reader, leave) released it: sorted by
	 * (reader, leave, write time), that is the last of each run */
	if (cv.n)
		qsort(cv.p, cv.n, sizeof(struct cand), cand_cmp);
	for (uint32_t i = 0; i < cv.n; i++) {
		const struct cand *c = &GV(cv, struct cand)[i], *d = c + 1;

		if (i + 1 < cv.n && d->reader == c->reader && d->tl == c->tl)
			continue;
		if (gedge_push(g, ARGUS_EDGE_DATAFLAG, c->src, c->dst, c->tw, c->tl, c->addr) < 0)
			continue;
		added++;
	}
	gvec_free(&cv);
	gvec_free(&wv);
	return added;
nomem:
	gvec_free(&cv);
	gvec_free(&wv);
	return -ENOMEM;
}
