/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_similar.c - similar segments (paper §4.5) and the backward slice.
 *
 * A segment is normalized to the set of its distinct task-context events:
 * syscall numbers, the wait that ended it (syscall + object kind), the
 * processes it woke or messaged and was messaged by, timer arms and
 * lifecycle events.  Interrupt-context events are left out (P1) and
 * repeats are ignored, so a loop turn that read 3 messages matches one
 * that read 1.  Two segments are similar when one set contains the other.
 *
 * Ranking (lower score is better): distance in time, plus penalties for a
 * candidate that is not a usable "normal" run: its wait was not ended by
 * another thread (nothing to slice from), or it waited as long as the
 * reference (it is a hang too), or the sets are not equal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "diag_internal.h"
#include "graph_view.h"
#include "gvec.h"

#define MAX_KEYS 256

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t tid_pid(const struct argus_graph *g, uint32_t tid)
{
	uint32_t t = argus_graph__thread_by_tid(g, tid);

	return t == ARGUS_NONE ? 0 : argus_graph__thread(g, t)->pid;
}


/* Identity of the object a segment waited on: the fd's object, else the
 * syscall's key argument (a futex address), folded to 32 bits. */
static uint32_t wait_ident(const struct argus_graph *g, const struct argus_segment *sg)
{
	const struct argus_object *o = argus_graph__object(g, sg->wait_obj);
	uint64_t h = o ? o->obj * 31 + o->peer : sg->wait_arg;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

/* The sorted, distinct keys of segment s.  Returns how many.  exact: the
 * final wait's key includes the object's identity. */
static uint32_t seg_keys(const struct argus_graph *g, uint32_t s, uint64_t *k,
			 bool exact)
{
	const struct argus_segment *sg = argus_graph__segment(g, s);
	uint32_t n = 0, m, tid = diag_seg_tid(g, s);
	const struct argus_gevent *ev;
	struct gview_walk it;
	const uint32_t *ids;
	struct gview v;

	gview_get(g, &v);
	for (gview_walk_seg(&v, s, &it); n < MAX_KEYS - 8 && (ev = gview_walk_next(&v, &it));) {
		if (ev->ctx != AE_CTX_TASK)
			continue;
		switch (ev->type) {
		case AE_SYS_ENTER:
		case AE_SYS_EXIT:
			k[n++] = 1ull << 56 | (uint16_t)ev->nr;
			break;
		case AE_WAKING:
			k[n++] = 2ull << 56 | tid_pid(g, (uint32_t)ev->val);
			break;
		case AE_HRT_START:
			k[n++] = 3ull << 56;
			break;
		case AE_FORK:
		case AE_EXEC:
		case AE_EXIT:
			k[n++] = 4ull << 56 | ev->type;
			break;
		}
	}
	if (sg->end_reason == ARGUS_END_WAIT)
		k[n++] = 5ull << 56 | (exact ? (uint64_t)wait_ident(g, sg) << 24 : 0) |
			 (uint64_t)(uint16_t)sg->wait_nr << 8 |
			 (uint8_t)(sg->wait_obj ? argus_graph__object(g, sg->wait_obj)->kind : 0);
	m = argus_graph__out_edges(g, s, &ids);
	for (uint32_t i = 0; i < m && n < MAX_KEYS - 1; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (argus_edge_type_strong(e->type) && diag_seg_tid(g, e->dst) != tid)
			k[n++] = 6ull << 56 | (uint64_t)e->type << 32 |
				 argus_graph__seg_thread(g, e->dst)->pid;
	}
	m = argus_graph__in_edges(g, s, &ids);
	for (uint32_t i = 0; i < m && n < MAX_KEYS - 1; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (argus_edge_type_strong(e->type) && diag_seg_tid(g, e->src) != tid)
			k[n++] = 7ull << 56 | (uint64_t)e->type << 32 |
				 argus_graph__seg_thread(g, e->src)->pid;
	}
	qsort(k, n, sizeof(*k), cmp_u64);
	m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!m || k[m - 1] != k[i])
			k[m++] = k[i];
	return m;
}

static bool subset(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		if (j == nb || b[j] != a[i])
			return false;
	}
	return true;
}

uint32_t diag_waker_edge(const struct argus_graph *g, uint32_t s)
{
	const uint32_t *ids;
	uint32_t n = argus_graph__in_edges(g, s, &ids), best = ARGUS_NONE;

	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

		if (!argus_edge_type_strong(e->type) || diag_seg_tid(g, e->src) == diag_seg_tid(g, s))
			continue;
		if (e->flags & ARGUS_EDGE_F_WOKE)
			return ids[i];
		if (best == ARGUS_NONE)
			best = ids[i];
	}
	return best;
}

static int cmp_sim(const void *a, const void *b)
{
	const struct argus_similar *x = a, *y = b;

	return x->score < y->score ? -1 : x->score > y->score;
}

int diag_similar(const struct argus_graph *g, uint32_t seg, uint64_t ex_from,
		 uint64_t ex_to, struct argus_similar *out, uint32_t max, bool exact)
{
	uint64_t ref[MAX_KEYS], k[MAX_KEYS];
	const struct argus_segment *r;
	struct gvec c = { 0 };
	uint32_t nref, n, cnt;
	const uint32_t *v;

	if (!g || seg >= argus_graph__nsegments(g))
		return -EINVAL;
	r = argus_graph__segment(g, seg);
	nref = seg_keys(g, seg, ref, exact);
	n = argus_graph__thread_segments(g, r->thread, &v);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(g, v[i]);
		uint32_t nk, next;
		struct argus_similar *x;
		uint8_t contains;
		double score;

		if (v[i] == seg || (s->end >= ex_from && s->start <= ex_to))
			continue;
		nk = seg_keys(g, v[i], k, exact);
		contains = (subset(ref, nref, k, nk) ? 1 : 0) |
			   (subset(k, nk, ref, nref) ? 2 : 0);
		if (!contains || !nk)
			continue;
		/* cut by the trace's start, a segment holds only the tail of what
		 * it did: that it is contained in the reference says nothing
		 * (a ring snapshot's first segment of every thread is one) */
		if (s->start_reason == ARGUS_START_TRACE && contains != 3)
			continue;
		score = (double)(s->start > r->start ? s->start - r->start
						     : r->start - s->start) / 1e9;
		next = i + 1 < n ? v[i + 1] : ARGUS_NONE;
		if (next == ARGUS_NONE || diag_waker_edge(g, next) == ARGUS_NONE)
			score += 100;
		if (r->wait_ns && s->wait_ns * 2 >= r->wait_ns)
			score += 50;
		if (contains != 3)
			score += 0.5;
		if (s->start > r->start)
			score += 0.25;  /* prefer runs before the hang */
		x = gvec_push(&c, sizeof(*x));
		if (!x) {
			gvec_free(&c);
			return -ENOMEM;
		}
		x->seg = v[i];
		x->score = score;
		x->dt_ns = (int64_t)(s->start - r->start);
		x->contains = contains;
	}
	if (c.n)
		qsort(c.p, c.n, sizeof(struct argus_similar), cmp_sim);
	cnt = c.n < max ? c.n : max;
	if (cnt)
		memcpy(out, c.p, cnt * sizeof(*out));
	gvec_free(&c);
	return (int)cnt;
}

int argus_diag__similar(const struct argus_graph *g, uint32_t seg,
			uint64_t ex_from, uint64_t ex_to,
			struct argus_similar *out, uint32_t max)
{
	int n = diag_similar(g, seg, ex_from, ex_to, out, max, true);

	return n ? n : diag_similar(g, seg, ex_from, ex_to, out, max, false);
}

int argus_diag__similar_by_kind(const struct argus_graph *g, uint32_t seg,
				uint64_t ex_from, uint64_t ex_to,
				struct argus_similar *out, uint32_t max)
{
	return diag_similar(g, seg, ex_from, ex_to, out, max, false);
}

int argus_diag__default_pick(const struct argus_graph *g, const uint32_t *ids,
			     uint32_t n)
{
	int best = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF)->flags & ARGUS_EDGE_F_WOKE)
			return (int)i;
		if (argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF)->dst_ts > argus_graph__edge(g, ids[best], ARGUS_EDGE_BUF)->dst_ts)
			best = (int)i;
	}
	return best;
}

int argus_diag__slice(const struct argus_graph *g, uint32_t seg,
		      uint32_t stop_tid, uint64_t floor_ts, argus_pick_fn pick,
		      void *pick_ctx, struct argus_step *out, uint32_t max)
{
	uint32_t n = 0, cur = seg, via = ARGUS_NONE;

	if (!g || seg >= argus_graph__nsegments(g))
		return -EINVAL;
	while (n < max) {
		uint32_t inter[64], ni = 0, intra = ARGUS_NONE, m, next_edge;
		const uint32_t *ids;

		bool seen = false;

		for (uint32_t i = 0; i < n && !seen; i++)
			seen = out[i].seg == cur;
		if (seen)
			break;          /* a loop in the graph */
		out[n].seg = cur;
		out[n].edge = via;
		out[n].choices = 0;
		n++;
		if (diag_seg_tid(g, cur) == stop_tid && n > 1)
			break;
		m = argus_graph__in_edges(g, cur, &ids);
		for (uint32_t i = 0; i < m; i++) {
			const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);

			if (e->type == ARGUS_EDGE_INTRA ||
			    diag_seg_tid(g, e->src) == diag_seg_tid(g, cur)) {
				if (e->type == ARGUS_EDGE_INTRA)
					intra = ids[i];
			} else if (ni < 64) {
				inter[ni++] = ids[i];
			}
		}
		out[n - 1].choices = (uint8_t)(ni > 255 ? 255 : ni);
		if (ni == 1) {
			next_edge = inter[0];
		} else if (ni >= 2) {
			int k = pick ? pick(pick_ctx, g, cur, inter, ni)
				     : argus_diag__default_pick(g, inter, ni);

			if (k < 0 || (uint32_t)k >= ni)
				break;
			next_edge = inter[k];
		} else if (intra != ARGUS_NONE) {
			next_edge = intra;
		} else {
			break;
		}
		via = next_edge;
		cur = argus_graph__edge(g, next_edge, ARGUS_EDGE_BUF)->src;
		if (argus_graph__segment(g, cur)->end < floor_ts)
			break;
	}
	return (int)n;
}
