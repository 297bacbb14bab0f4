/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_flag.c - the data-flag flow of the diagnosis (BRIEF §1, step 4;
 * docs/diagnosis.md "Yield hangs: the data flag").
 *
 * A thread that spins (`while (!flag) sched_yield();`) waits for a
 * write, not for a wake-up, so the blocked-wait flow has nothing to
 * follow.  With the flag watched (`argus watch`), the graph has DATAFLAG
 * edges: writer's segment -> the spinner's segment that left the loop
 * (graph_flag.c).  Then:
 *
 *   1. N = the dataflag edge into the hung thread from a normal run (its
 *      destination outside the hang), the closest one before the hang
 *      (else the closest after): in normal runs, this writer's write
 *      released the spinner;
 *   2. W = N's writer.  During the hang it did not write (or wrote late):
 *      what it was doing instead is judged over the hang's window
 *      (argus_diag__activity).  If W was blocked, its own wake-up path is
 *      followed as for a blocked wait: the thread X whose edge woke W's
 *      writing segment in that normal run is the culprit (W only relays:
 *      it sets the flag when it is woken), judged over the window, and a
 *      blocked X gets the blocked-wait flow for its own culprits
 *      (culprits_culprit).  Busy, spinning, or never woken by anyone
 *      else, W itself is the culprit;
 *   3. the path is the hung thread's normal segment, W's writing segment
 *      (by the dataflag edge), then X's (by the edge that woke W).  The
 *      culprit's rule is "dataflag".
 *
 * No dataflag edge into the thread: nothing to follow; the caller names
 * the thread itself (rule "self") and the report says which commands get
 * the writes (flag_hint): `argus flag`, then `argus watch`.
 *
 * A `busy` hang comes here only when a dataflag edge ended it
 * (diag_flag_hang_edge): a pure busy spin (`pause`, no syscall) whose
 * reader was named to `argus watch --reader`.  Its CPU time was the spin,
 * not work of its own, so the writer is followed the same way.  With no
 * normal run's edge, the hang's own edge is followed: its writer wrote
 * late, and whoever woke it late is the culprit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "diag_internal.h"

#define HANG_END_SLACK_NS 10000000ull   /* the leave may be traced just after
                                           the hang's end (its next wait) */

/* The normal run's dataflag edge into thread tid (see the top). */
static uint32_t normal_flag_edge(const struct argus_graph *g, uint32_t tid, uint64_t from,
				 uint64_t to)
{
	uint32_t before = ARGUS_NONE, after = ARGUS_NONE;

	for (uint32_t i = 0; i < argus_graph__nedges(g); i++) {
		/* no buffer: an INTRA edge (over half of them, never a data
		 * flag's) is not written out, only skipped */
		const struct argus_edge *e = argus_graph__edge(g, i, NULL);

		if (!e || e->type != ARGUS_EDGE_DATAFLAG || diag_seg_tid(g, e->dst) != tid ||
		    diag_seg_tid(g, e->src) == tid)
			continue;
		if (e->dst_ts < from) {
			if (before == ARGUS_NONE || e->dst_ts > argus_graph__edge(g, before, ARGUS_EDGE_BUF)->dst_ts)
				before = i;
		} else if (e->dst_ts > to + HANG_END_SLACK_NS) {
			/* (a leave just after the hang's end is the hang's own:
			 * diag_flag_hang_edge) */
			if (after == ARGUS_NONE || e->dst_ts < argus_graph__edge(g, after, ARGUS_EDGE_BUF)->dst_ts)
				after = i;
		}
	}
	return before != ARGUS_NONE ? before : after;
}

/* k = thread tid judged over [from, to] (activity a); normal_seg: where
 * it normally did its part. */
static void set_culprit(const struct argus_graph *g, struct argus_culprit *k, uint32_t tid,
			const struct argus_activity *a, uint32_t normal_seg, uint64_t from,
			uint64_t to)
{
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	k->pid = argus_graph__thread(g, argus_graph__thread_by_tid(g, tid))->pid;
	k->kind = a->kind;
	k->seg = a->kind == ARGUS_KIND_BLOCKED && a->wait_seg != ARGUS_NONE ? a->wait_seg
		 : a->busy_seg != ARGUS_NONE ? a->busy_seg : argus_graph__segment_at(g, tid, from);
	k->normal_seg = normal_seg;
	k->from = from;
	k->to = to;
	k->wait_nr = -1;
	if (a->kind == ARGUS_KIND_BLOCKED && a->wait_seg != ARGUS_NONE) {
		k->wait_ns = a->wait_ns;
		k->wait_nr = argus_graph__segment(g, a->wait_seg)->wait_nr;
		k->stack = argus_graph__segment(g, a->wait_seg)->wait_stack;
	}
}

/*
 * The culprit c was blocked too: its own culprits, by the blocked-wait
 * flow on c over the same window (argus_diag__diagnose, one level less
 * deep), appended to the chain.  The chain stops before the spinning
 * thread or the writer: the spinner's request was sent before it began
 * to spin (that is what the spin waits on), so a culprit that waits for
 * the spinner's *next* request is no circular wait, and saying so would
 * send the user the wrong way.
 */
static void culprits_culprit(const struct argus_graph *g, const struct argus_diag_opts *o,
			     struct argus_diagnosis *d, uint32_t c, uint32_t w, uint32_t depth)
{
	struct argus_diag_opts so = *o;
	struct argus_diagnosis *sub = calloc(1, sizeof(*sub));
	struct argus_hang ch = { .tid = c, .pid = d->chain[0].pid, .start = d->hang.start,
				 .end = d->hang.end, .ongoing = d->hang.ongoing };

	if (!sub)
		return;
	ch.seg = argus_graph__segment_at(g, c, d->hang.start);
	so.sz = sizeof(so);
	so.depth = depth - 1;
	if (!argus_diag__diagnose(g, &ch, &so, sub)) {
		for (uint32_t i = 0; i < sub->nchain && d->nchain < ARGUS_DIAG_MAX_CHAIN; i++) {
			if (sub->chain[i].tid == d->hang.tid || sub->chain[i].tid == w ||
			    sub->chain[i].tid == c)
				break;
			d->chain[d->nchain++] = sub->chain[i];
		}
		d->timeout_ns = sub->timeout_ns;
		d->timeout_tid = sub->timeout_tid;
		d->inspected += sub->inspected > 1 ? sub->inspected - 1 : 0;
	}
	free(sub);
}

/*
 * The dataflag edge that ended hang h: into h's thread, its leave at the
 * hang's end (at most HANG_END_SLACK_NS after it), and its write made in
 * the later part of the hang (more of the hang before the write than
 * after it: the spin was the hang).  A named busy reader leaves at its
 * first syscall, so a release at the start of the hang followed by
 * seconds of real CPU work would also leave at the hang's end; the
 * write's time tells the two apart.  The last such edge, ARGUS_NONE if
 * none.
 */
uint32_t diag_flag_hang_edge(const struct argus_graph *g, const struct argus_hang *h)
{
	uint32_t s = argus_graph__segment_at(g, h->tid, h->start), best = ARGUS_NONE;

	for (; s != ARGUS_NONE && argus_graph__segment(g, s)->start <= h->end + HANG_END_SLACK_NS;
	     s = argus_graph__seg_next(g, s)) {
		const uint32_t *ids;
		uint32_t n = argus_graph__in_edges(g, s, &ids);

		for (uint32_t i = 0; i < n; i++) {
			const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);
			if (e->type != ARGUS_EDGE_DATAFLAG || diag_seg_tid(g, e->src) == h->tid ||
			    e->src_ts < h->start || e->src_ts > h->end ||
			    e->dst_ts > h->end + HANG_END_SLACK_NS ||
			    h->end - e->src_ts >= e->src_ts - h->start)
				continue;
			if (best == ARGUS_NONE || e->dst_ts > argus_graph__edge(g, best, ARGUS_EDGE_BUF)->dst_ts)
				best = ids[i];
		}
	}
	return best;
}

bool diag_flag_follow(const struct argus_graph *g, const struct argus_diag_opts *o,
		      struct argus_diagnosis *d, const struct argus_activity *a,
		      uint32_t depth, uint32_t hang_edge)
{
	const struct argus_edge *n;
	uint32_t ne, w, wthr, np = 0, we, x, c;
	struct argus_activity wa, ca;

	ne = normal_flag_edge(g, d->hang.tid, d->hang.start, d->hang.end);
	if (ne == ARGUS_NONE) {
		ne = hang_edge;
		d->flag_late = ne != ARGUS_NONE;
	}
	if (ne == ARGUS_NONE) {
		d->flag_hint = 1;
		return false;
	}
	n = argus_graph__edge(g, ne, ARGUS_EDGE_BUF);
	w = diag_seg_tid(g, n->src);
	wthr = argus_graph__thread_by_tid(g, w);
	if (wthr == ARGUS_NONE || argus_diag__activity(g, w, d->hang.start, d->hang.end, &wa))
		return false;
	d->flag_writer = w;
	d->flag_edge = ne;
	d->flag_addr = n->obj;
	d->hang_seg = a->busy_seg != ARGUS_NONE ? a->busy_seg : d->hang.seg;
	d->normal_seg = n->dst;
	d->nsimilar = 1;
	d->inspected = 2;       /* the hang, the normal run that got the flag */
	d->path[np++] = (struct argus_step){ .seg = n->dst, .edge = ARGUS_NONE };
	d->path[np++] = (struct argus_step){ .seg = n->src, .edge = ne, .choices = 1 };

	/* who woke the writer before it wrote, in that normal run */
	we = diag_waker_edge(g, n->src);
	x = we != ARGUS_NONE ? argus_graph__edge(g, we, ARGUS_EDGE_BUF)->src : ARGUS_NONE;
	c = x != ARGUS_NONE ? diag_seg_tid(g, x) : 0;
	if (wa.kind == ARGUS_KIND_BLOCKED && x != ARGUS_NONE && c != w && c != d->hang.tid &&
	    argus_graph__thread_by_tid(g, c) != ARGUS_NONE &&
	    !argus_diag__activity(g, c, d->hang.start, d->hang.end, &ca)) {
		/* W waited: the thread that normally wakes it is the culprit */
		d->path[np++] = (struct argus_step){ .seg = x, .edge = we, .choices = 1 };
		set_culprit(g, &d->chain[0], c, &ca, x, d->hang.start, d->hang.end);
		d->nchain = 1;
		d->inspected += 2;      /* the writer's normal segment, the culprit */
		if (ca.kind == ARGUS_KIND_BLOCKED && depth > 1)
			culprits_culprit(g, o, d, c, w, depth);
	} else {
		/* W itself did something else instead of writing */
		set_culprit(g, &d->chain[0], w, &wa, n->src, d->hang.start, d->hang.end);
		d->nchain = 1;
		d->inspected++;
	}
	d->chain[0].rule = ARGUS_RULE_DATAFLAG;
	d->npath = np;
	return true;
}
