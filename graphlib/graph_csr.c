/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_csr.c - the finished graph's indexes.
 *
 *   thr_segs    each thread's segment ids, sorted by (start, id), as one
 *               array sliced by argus_thread.first_seg / nseg;
 *   INTRA       the weak previous -> next edge of each thread, added once
 *               from those slices;
 *   out/in CSR  off[s] .. off[s + 1] index ids[], the edge ids leaving /
 *               entering segment s, in edge-id (creation) order;
 *   stats       edges_by_type, recounted in the same pass.
 *
 * Rebuilt from scratch whenever edges change (argus_graph__add_edge marks
 * the graph dirty).  Linear, and kind to the cache: the segment array is
 * read once, in id order, and each segment's start/end is copied beside
 * its slot in thr_segs (a few thousand threads = a few thousand write
 * streams, which stay cached), so sorting and INTRA never go back to the
 * segment array in thread order (a cache miss per segment: a tenth of the
 * whole graph build).  A thread's slice is its segments in creation order:
 * already sorted, or (after the batching split appended parts) two sorted
 * runs, merged; anything else falls back to qsort.
 *
 * The INTRA edges, appended last and in thread order, are placed in the
 * CSR without reading them: segment s has one INTRA out-edge unless it is
 * its thread's last, one in-edge unless it is its first, and their ids
 * follow from s's slot in thr_segs.  So they are counted and placed in
 * segment order; walked in thread order (edge order) they were a random
 * access into all four CSR arrays each, most of gcsr_build's time.
 */
#include "graph_internal.h"

/* A segment's sort key, kept beside its thr_segs slot while building. */
struct skey {
	uint64_t start, end;
};

static inline bool key_less(const struct skey *k, const uint32_t *v,
			    uint32_t a, uint32_t b)
{
	return k[a].start != k[b].start ? k[a].start < k[b].start : v[a] < v[b];
}

static const struct argus_graph *sort_g;        /* qsort has no context */

static int cmp_seg_start(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct argus_segment *sx = &SEGS(sort_g)[x], *sy = &SEGS(sort_g)[y];

	if (sx->start != sy->start)
		return sx->start < sy->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Sort one thread's slice v[0..n) (keys k[]) by (start, id).  tv/tk are
 * scratch of n entries.  Returns whether it moved anything. */
static bool sort_slice(const struct argus_graph *g, uint32_t *v, struct skey *k,
		       uint32_t n, uint32_t *tv, struct skey *tk)
{
	uint32_t m = 1, i, a, b, o;

	while (m < n && !key_less(k, v, m, m - 1))
		m++;
	if (m == n)
		return false;           /* sorted: the usual case */
	for (i = m + 1; i < n && !key_less(k, v, i, i - 1); i++)
		;
	if (i < n) {                    /* more than two runs: rare */
		sort_g = g;
		qsort(v, n, sizeof(*v), cmp_seg_start);
		for (i = 0; i < n; i++) {
			k[i].start = SEGS(g)[v[i]].start;
			k[i].end = SEGS(g)[v[i]].end;
		}
		return true;
	}
	/* two sorted runs [0, m) and [m, n): merge */
	memcpy(tv, v, n * sizeof(*v));
	memcpy(tk, k, n * sizeof(*k));
	for (a = 0, b = m, o = 0; a < m || b < n; o++) {
		uint32_t j = b == n || (a < m && key_less(tk, tv, a, b)) ? a++ : b++;

		v[o] = tv[j];
		k[o] = tk[j];
	}
	return true;
}

/* thr_segs and, for the caller, the keys beside it (*keys, free it) and,
 * when pos is not NULL, each segment's slot in thr_segs (*pos, free it). */
static int thread_index(struct argus_graph *g, struct skey **keys, uint32_t **pos)
{
	uint32_t nthr = g->thr.n, nseg = g->seg.n, *fill, *segs, *tv = NULL;
	uint32_t maxn = 0, *ps = NULL;
	struct skey *k, *tk = NULL;

	segs = gbig_malloc((nseg + 1) * sizeof(uint32_t));
	k = gbig_malloc((nseg + 1) * sizeof(*k));
	fill = calloc(nthr + 1, sizeof(uint32_t));
	if (pos)
		ps = gbig_malloc((nseg + 1) * sizeof(uint32_t));
	if (!segs || !k || !fill || (pos && !ps)) {     /* keep the old index */
		free(segs);
		free(k);
		free(fill);
		free(ps);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < nthr; t++)
		THRS(g)[t].nseg = 0;
	for (uint32_t s = 0; s < nseg; s++)
		THRS(g)[SEGS(g)[s].thread].nseg++;
	for (uint32_t t = 0, off = 0; t < nthr; t++) {
		THRS(g)[t].first_seg = off;
		off += THRS(g)[t].nseg;
		if (THRS(g)[t].nseg > maxn)
			maxn = THRS(g)[t].nseg;
	}
	for (uint32_t s = 0; s < nseg; s++) {
		const struct argus_segment *sg = &SEGS(g)[s];
		uint32_t t = sg->thread, at = THRS(g)[t].first_seg + fill[t]++;

		segs[at] = s;
		k[at].start = sg->start;
		k[at].end = sg->end;
		if (ps)
			ps[s] = at;
	}
	free(fill);
	for (uint32_t t = 0; t < nthr; t++) {
		uint32_t first = THRS(g)[t].first_seg, n = THRS(g)[t].nseg;

		if (n < 2)
			continue;
		if (!tv) {
			tv = malloc(maxn * sizeof(*tv));
			tk = malloc(maxn * sizeof(*tk));
			if (!tv || !tk) {
				free(tv);
				free(tk);
				free(segs);
				free(k);
				free(ps);
				return -ENOMEM;
			}
		}
		if (sort_slice(g, segs + first, k + first, n, tv, tk) && ps)
			for (uint32_t i = first; i < first + n; i++)
				ps[segs[i]] = i;
	}
	free(tv);
	free(tk);
	free(g->thr_segs);
	g->thr_segs = segs;
	*keys = k;
	if (pos)
		*pos = ps;
	return 0;
}

/* The INTRA edges, appended in thread order: what gedge_push would make
 * of each (type INTRA, obj 0; INTRA edges feed no per-segment scratch),
 * reserved INTRA_PIECE at a time and written in place instead of a call,
 * a capacity check and a zeroing per edge (2.7 M of them here).  A piece
 * (40 KiB) is zeroed and written while in the cache; one push of all of
 * them would zero 100 MiB, then write it again. */
#define INTRA_PIECE 1024u

static int add_intra(struct argus_graph *g, const struct skey *k)
{
	uint32_t n = 0, t = 0, i = 0;   /* next: thread t's slots i -> i + 1 */

	for (uint32_t u = 0; u < g->thr.n; u++)
		n += THRS(g)[u].nseg > 1 ? THRS(g)[u].nseg - 1 : 0;
	for (uint32_t done = 0; done < n;) {
		uint32_t m = n - done < INTRA_PIECE ? n - done : INTRA_PIECE;
		struct argus_edge *e = gvec_push_n(&g->edge, sizeof(*e), m);

		if (!e)
			return -ENOMEM;
		for (uint32_t j = 0; j < m; j++, e++, i++) {
			uint32_t a;

			while (i + 1 >= THRS(g)[t].nseg) {      /* no pair left */
				t++;
				i = 0;
			}
			a = THRS(g)[t].first_seg + i;
			e->src = g->thr_segs[a];
			e->dst = g->thr_segs[a + 1];
			e->type = ARGUS_EDGE_INTRA;
			e->src_ts = k[a].end;
			e->dst_ts = k[a + 1].start;
		}
		done += m;
	}
	if (n)
		g->csr_dirty = true;
	return 0;
}

/* Segment s's INTRA edges (see the top of the file): *out / *in the ids of
 * the edges to its thread's next segment / from the previous, or
 * ARGUS_NONE.  zb[t]: threads before t with segments. */
static inline void intra_ids(const struct argus_graph *g, uint32_t nplain,
			     const uint32_t *pos, const uint32_t *zb, uint32_t s,
			     uint32_t *out, uint32_t *in)
{
	uint32_t t = SEGS(g)[s].thread, p = pos[s];
	const struct argus_thread *th = &THRS(g)[t];

	/* add_intra made the edge into slot i (i > first) the
	 * (i - 1 - zb[t])-th INTRA edge */
	*out = p + 1 < th->first_seg + th->nseg ? nplain + p - zb[t] : ARGUS_NONE;
	*in = p > th->first_seg ? nplain + p - 1 - zb[t] : ARGUS_NONE;
}

/* off[nseg + 1] / ids[nedges] for both directions, in two passes over the
 * edges instead of four.  With pos (each segment's thr_segs slot), edges
 * from nplain on are add_intra's and are placed by segment instead. */
static int csr(struct argus_graph *g, uint32_t nplain, const uint32_t *pos)
{
	uint32_t nseg = g->seg.n, nedge = g->edge.n, *zb = NULL;
	size_t offsz = ((size_t)nseg + 2) * sizeof(uint32_t);
	size_t idsz = ((size_t)nedge + 1) * sizeof(uint32_t);
	uint32_t *oo = gbig_malloc(offsz), *oi = gbig_malloc(idsz);
	uint32_t *io = gbig_malloc(offsz), *ii = gbig_malloc(idsz);
	const struct argus_edge *e = EDGES(g);

	if (!pos)
		nplain = nedge;
	else if (!(zb = malloc(((size_t)g->thr.n + 1) * sizeof(*zb))))
		goto nomem;
	if (!oo || !oi || !io || !ii)
		goto nomem;
	memset(oo, 0, offsz);
	memset(io, 0, offsz);
	/* the stats' count by type comes with the same pass (one pass
	 * fewer over the edge array) */
	memset(g->st.edges_by_type, 0, sizeof(g->st.edges_by_type));
	for (uint32_t i = 0; i < nplain; i++) {
		oo[e[i].src + 2]++;
		io[e[i].dst + 2]++;
		g->st.edges_by_type[e[i].type]++;
	}
	if (pos) {
		for (uint32_t t = 0, z = 0; t < g->thr.n; t++) {
			zb[t] = z;
			z += THRS(g)[t].nseg > 0;
		}
		for (uint32_t s = 0; s < nseg; s++) {
			uint32_t out, in;

			intra_ids(g, nplain, pos, zb, s, &out, &in);
			oo[s + 2] += out != ARGUS_NONE;
			io[s + 2] += in != ARGUS_NONE;
		}
		g->st.edges_by_type[ARGUS_EDGE_INTRA] += nedge - nplain;
	}
	for (uint32_t s = 2; s < nseg + 2; s++) {
		oo[s] += oo[s - 1];
		io[s] += io[s - 1];
	}
	/* off[s + 1] is the fill cursor of s; after filling, off[s + 1] is
	 * the end of s, i.e. off[] shifted into place.  The INTRA edges have
	 * the largest ids: last in each list, as in id order. */
	for (uint32_t i = 0; i < nplain; i++) {
		oi[oo[e[i].src + 1]++] = i;
		ii[io[e[i].dst + 1]++] = i;
	}
	for (uint32_t s = 0; pos && s < nseg; s++) {
		uint32_t out, in;

		intra_ids(g, nplain, pos, zb, s, &out, &in);
		if (out != ARGUS_NONE)
			oi[oo[s + 1]++] = out;
		if (in != ARGUS_NONE)
			ii[io[s + 1]++] = in;
	}
	free(zb);
	free(g->out_off);
	free(g->out_ids);
	free(g->in_off);
	free(g->in_ids);
	g->out_off = oo;
	g->out_ids = oi;
	g->in_off = io;
	g->in_ids = ii;
	return 0;
nomem:
	free(zb);
	free(oo);
	free(oi);
	free(io);
	free(ii);
	return -ENOMEM;
}

int gcsr_build(struct argus_graph *g, bool intra)
{
	struct skey *k = NULL;
	uint32_t *pos = NULL, nplain = g->edge.n;
	int rc;

	if ((rc = thread_index(g, &k, intra ? &pos : NULL)))
		return rc;
	if (intra)
		rc = add_intra(g, k);
	free(k);
	if (!rc)
		rc = csr(g, nplain, pos);
	free(pos);
	if (rc)
		return rc;
	g->csr_dirty = false;
	return 0;
}
