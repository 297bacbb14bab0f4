/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_split.c - the batching split (the paper's P3, P6, P8).
 *
 * A server loop that handles requests of several processes inside one
 * segment (it never blocks between them) would chain unrelated clients
 * together.  A segment whose strong out-edges reach two or more other
 * processes is cut in time, walking its inter-process edges in order
 * (in-edges at their receive time, out-edges at their send time):
 *
 *   - an in-edge from process Q after the part has already sent to
 *     another process P != Q starts a new part: the reply to P is done,
 *     Q's request begins.  This covers "send the reply and receive the
 *     next request in one loop turn" (sendmsg + recvmsg back to back);
 *   - an out-edge to Q after an out-edge to P != Q, in a part that has
 *     received nothing, starts a new part (a broadcaster), unless both
 *     come from the same syscall (sendmmsg: same timestamp);
 *   - an out-edge to Q in a part that *received* a request and already
 *     sent to P is one request fanning out: no cut, the part is flagged
 *     ARGUS_SEG_F_MULTI so the diagnosis can ask.
 *
 * The last part inherits the wait that ended the segment; on-CPU time is
 * shared in proportion to each part's duration (the trace has no finer
 * record of it); events and edge ends move to the part covering their
 * time (events stay a run of the thread's chain: one older than the
 * event before it, across a chunk boundary, stays in that one's part).
 * New parts are appended to the segment array (graph_csr.c sorts each
 * thread's segments by start).
 */
#include "graph_internal.h"

struct touch {
	uint64_t ts;
	uint32_t seg;           /* the candidate segment */
	uint32_t peer;          /* the other end's pid */
	uint32_t edge;
	uint8_t out;            /* 1 = out-edge */
	uint8_t same;           /* same process: moved, but not a rule input */
};

static int cmp_touch(const void *a, const void *b)
{
	const struct touch *x = a, *y = b;

	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->out - (int)y->out;       /* receive before send */
}

static uint32_t seg_pid(const struct argus_graph *g, uint32_t seg)
{
	return THRS(g)[SEGS(g)[seg].thread].pid;
}

/* Part of a split segment covering ts, from part k on: 0 the segment
 * itself, i > 0 the one starting at cuts[i - 1] (the last cut <= ts). */
static uint32_t part_of(const uint64_t *cuts, uint32_t n, uint32_t k,
			uint64_t ts)
{
	while (k < n && cuts[k] <= ts)
		k++;
	return k;
}

/* Cut segment `s` at cuts[0..n) (increasing, inside (start, end)). */
static int cut_segment(struct argus_graph *g, uint32_t s, const uint64_t *cuts,
		       uint32_t *ids, uint32_t n, const uint8_t *multi)
{
	struct argus_segment orig = SEGS(g)[s];
	uint64_t span = orig.end > orig.start ? orig.end - orig.start : 1;

	for (uint32_t i = 0; i < n; i++) {
		struct argus_segment *p = gvec_push(&g->seg, sizeof(*p));

		/* its wait shape stays on the first part (graph_internal.h) */
		if (!p || !gvec_push(&g->shape, sizeof(shape_t)))
			return -ENOMEM;
		ids[i] = g->seg.n - 1;
		p->start = cuts[i];
		p->end = i + 1 < n ? cuts[i + 1] : orig.end;
		p->thread = orig.thread;
		p->first_event = ARGUS_NONE;
		p->start_reason = ARGUS_START_SPLIT;
		p->end_reason = i + 1 < n ? ARGUS_END_SPLIT : orig.end_reason;
		p->woken_by = ARGUS_WOKEN_NA;
		p->flags = (orig.flags & ARGUS_SEG_F_KERNEL) |
			   (multi[i + 1] ? ARGUS_SEG_F_MULTI : 0);
		p->wait_nr = -1;
		if (i + 1 == n) {       /* the last part ends in the wait */
			p->wait_nr = orig.wait_nr;
			p->wait_stack = orig.wait_stack;
			p->wait_arg = orig.wait_arg;
			p->wait_obj = orig.wait_obj;
			p->wait_ns = orig.wait_ns;
		}
		p->oncpu = (uint64_t)((double)orig.oncpu *
				      (double)(p->end - p->start) / (double)span);
	}
	{
		struct argus_segment *o = &SEGS(g)[s];

		o->end = cuts[0];
		o->end_reason = ARGUS_END_SPLIT;
		o->wait_nr = -1;
		o->wait_obj = 0;
		o->wait_stack = 0;
		o->wait_arg = o->wait_ns = 0;
		o->oncpu = (uint64_t)((double)orig.oncpu *
				      (double)(o->end - o->start) / (double)span);
		o->flags = (o->flags & ~ARGUS_SEG_F_MULTI) |
			   (multi[0] ? ARGUS_SEG_F_MULTI : 0);
		o->nevents = o->nsamples = 0;
		o->first_event = ARGUS_NONE;
	}
	/* Events: the segment's run of its thread's chain, cut in runs. */
	for (uint32_t e = orig.first_event, c = 0, k = 0; c < orig.nevents;
	     e = gev_next(g, e), c++) {
		const struct argus_gevent *ev = gev_at(g, e, ARGUS_GEVENT_BUF);
		struct argus_segment *ps;

		k = part_of(cuts, n, k, ev->ts);
		ps = &SEGS(g)[k ? ids[k - 1] : s];
		if (ps->first_event == ARGUS_NONE)
			ps->first_event = e;
		ps->nevents++;
		if (ev->type == AE_SAMPLE)
			ps->nsamples++;
	}
	g->st.splits += n;
	return 0;
}

int gsplit_batching(struct argus_graph *g)
{
	uint32_t nseg = g->seg.n, ncand = 0, ntouch = 0, i, j;
	struct touch *t = NULL;
	int rc = 0;

	for (i = 0; i < nseg; i++)
		ncand += SEGX_IS_MULTI(g, i);
	if (!ncand)
		return 0;
	/* Every edge end on a candidate. */
	for (i = 0; i < g->edge.n; i++) {
		const struct argus_edge *e = &EDGES(g)[i];

		ntouch += SEGX_IS_MULTI(g, e->src) + SEGX_IS_MULTI(g, e->dst);
	}
	t = malloc((ntouch + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	ntouch = 0;
	for (i = 0; i < g->edge.n; i++) {
		const struct argus_edge *e = &EDGES(g)[i];
		bool ms = SEGX_IS_MULTI(g, e->src), md = SEGX_IS_MULTI(g, e->dst);
		uint32_t sp, dp;

		/* the pids only for the few edges that touch a candidate: two
		 * loads at random in the segment array per edge were 4% of a
		 * 20 M-event build */
		if (!ms && !md)
			continue;
		sp = seg_pid(g, e->src);
		dp = seg_pid(g, e->dst);
		if (ms)
			t[ntouch++] = (struct touch){ e->src_ts, e->src, dp, i,
						      1, sp == dp };
		if (md)
			t[ntouch++] = (struct touch){ e->dst_ts, e->dst, sp, i,
						      0, sp == dp };
	}
	qsort(t, ntouch, sizeof(*t), cmp_touch);

	uint64_t *cuts = malloc((ntouch + 1) * sizeof(*cuts));
	uint32_t *ids = malloc((ntouch + 1) * sizeof(*ids));
	uint8_t *multi = malloc(ntouch + 2);

	if (!cuts || !ids || !multi) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ntouch; i = j) {
		uint32_t s = t[i].seg, n = 0, peer_out = 0;
		uint64_t last_out_ts = 0;
		bool has_in = false, has_out = false;
		const struct argus_segment *sg = &SEGS(g)[s];

		multi[0] = 0;
		for (j = i; j < ntouch && t[j].seg == s; j++) {
			const struct touch *x = &t[j];
			bool cut = false;

			if (x->same)
				continue;
			if (!x->out) {
				cut = has_out && x->peer != peer_out;
			} else if (has_out && x->peer != peer_out) {
				if (!has_in && x->ts != last_out_ts)
					cut = true;
				else
					multi[n] = 1;
			}
			if (cut && x->ts > sg->start && x->ts < sg->end &&
			    (!n || x->ts > cuts[n - 1])) {
				cuts[n++] = x->ts;
				multi[n] = 0;
				has_in = has_out = false;
				peer_out = 0;
			}
			if (x->out) {
				has_out = true;
				peer_out = x->peer;
				last_out_ts = x->ts;
			} else {
				has_in = true;
			}
		}
		if (!n) {
			if (multi[0])
				SEGS(g)[s].flags |= ARGUS_SEG_F_MULTI;
			continue;
		}
		if ((rc = cut_segment(g, s, cuts, ids, n, multi)))
			goto out;
		/* Re-point this segment's edge ends to the part covering them. */
		for (uint32_t k = i; k < j; k++) {
			struct argus_edge *e = &EDGES(g)[t[k].edge];
			uint32_t q = part_of(cuts, n, 0, t[k].ts), p;

			if (!q)
				continue;
			p = ids[q - 1];
			if (t[k].out)
				e->src = p;
			else
				e->dst = p;
			e->flags |= ARGUS_EDGE_F_SPLIT;
		}
	}
out:
	free(t);
	free(cuts);
	free(ids);
	free(multi);
	return rc;
}
