/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_csr.c - the finished graph's indexes.
 *
 *   thr_segs    each thread's segment ids, sorted by (start, id), as one
 *               array sliced by argus_thread.first_seg / nseg;
 *   INTRA       the weak previous -> next edge of each thread: numbered
 *               once from those slices (intra_first), never stored;
 *   out/in CSR  off[s] .. off[s + 1] index ids[], the edge ids leaving /
 *               entering segment s, in edge-id order;
 *   stats       edges_by_type, recounted in the same pass.
 *
 * Rebuilt from scratch whenever edges change (argus_graph__add_edge marks
 * the graph dirty).  Linear, and kind to the cache: the segment array is
 * read once, in id order, and each segment's start is copied beside its
 * slot in thr_segs (a few thousand threads = a few thousand write
 * streams, which stay cached), so sorting never goes back to the segment
 * array in thread order (a cache miss per segment: a tenth of the whole
 * graph build).  A thread's slice is its segments in creation order:
 * already sorted, or (after the batching split appended parts) two sorted
 * runs, merged; anything else falls back to qsort.
 *
 * The INTRA edges are not stored (graph_internal.h, "Edge ids"): they
 * were 58% of the edges of a 20 M-event trace, 40 bytes each of memory
 * that is fresh, and fresh memory is what a graph build pays most for on
 * a VM (docs/benchmarks.md, session 28).  Their ids follow from a
 * segment's slot in thr_segs: segment s has one INTRA out-edge unless it
 * is its thread's last, one in-edge unless it is its first.  So they are
 * counted and placed in the CSR in segment order; gedge_get() writes one
 * out from its id.
 */
#include "graph_internal.h"

/* A segment's sort key, kept beside its thr_segs slot while building. */
struct skey {
	uint64_t start;
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
		for (i = 0; i < n; i++)
			k[i].start = SEGS(g)[v[i]].start;
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

/* thr_segs and, when pos is not NULL, each segment's slot in thr_segs
 * (*pos, free it). */
static int thread_index(struct argus_graph *g, uint32_t **pos)
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
	free(k);
	free(g->thr_segs);
	g->thr_segs = segs;
	if (pos)
		*pos = ps;
	return 0;
}

/* Number the INTRA edges after the edges stored so far (once, at the
 * end of the build): intra_first, intra_base, nintra. */
static int intra_index(struct argus_graph *g)
{
	uint32_t *f = malloc(((size_t)g->thr.n + 1) * sizeof(*f));
	uint64_t n = 0;

	if (!f)
		return -ENOMEM;
	for (uint32_t t = 0; t < g->thr.n; t++) {
		f[t] = (uint32_t)n;
		n += THRS(g)[t].nseg > 1 ? THRS(g)[t].nseg - 1 : 0;
	}
	if (n + g->edge.n >= ARGUS_NONE - 1) {  /* ids are uint32_t */
		free(f);
		return -ENOMEM;
	}
	f[g->thr.n] = (uint32_t)n;
	free(g->intra_first);
	g->intra_first = f;
	g->intra_base = g->edge.n;
	g->nintra = (uint32_t)n;
	return 0;
}

/* Segment s's INTRA edges (see the top of the file): *out / *in the ids of
 * the edges to its thread's next segment / from the previous, or
 * ARGUS_NONE.  pos[s]: s's slot in thr_segs. */
static inline void intra_ids(const struct argus_graph *g, const uint32_t *pos,
			     uint32_t s, uint32_t *out, uint32_t *in)
{
	uint32_t t = SEGS(g)[s].thread, p = pos[s];
	const struct argus_thread *th = &THRS(g)[t];
	/* the edge into slot i (i > first) is the thread's (i - 1 - first)-th */
	uint32_t o = g->intra_base + g->intra_first[t] - th->first_seg;

	*out = p + 1 < th->first_seg + th->nseg ? o + p : ARGUS_NONE;
	*in = p > th->first_seg ? o + p - 1 : ARGUS_NONE;
}

const struct argus_edge *gedge_get(const struct argus_graph *g, uint32_t id,
				   struct argus_edge *buf)
{
	uint32_t slot = gedge_slot(g, id), o, lo, hi, a;

	if (slot != ARGUS_NONE)
		return &EDGES(g)[slot];
	/* the thread whose INTRA ordinals hold o: the last t with
	 * intra_first[t] <= o (threads with none share their successor's) */
	o = id - g->intra_base;
	lo = 0;
	hi = g->thr.n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (g->intra_first[mid] <= o)
			lo = mid;
		else
			hi = mid;
	}
	a = THRS(g)[lo].first_seg + (o - g->intra_first[lo]);
	memset(buf, 0, sizeof(*buf));
	buf->src = g->thr_segs[a];
	buf->dst = g->thr_segs[a + 1];
	buf->type = ARGUS_EDGE_INTRA;
	buf->src_ts = SEGS(g)[buf->src].end;
	buf->dst_ts = SEGS(g)[buf->dst].start;
	return buf;
}

/* Stored edges [from, to) counted into the CSR offsets (and the stats). */
static void count_stored(struct argus_graph *g, uint32_t *oo, uint32_t *io,
			 uint32_t from, uint32_t to)
{
	const struct argus_edge *e = EDGES(g);

	for (uint32_t i = from; i < to; i++) {
		oo[e[i].src + 2]++;
		io[e[i].dst + 2]++;
		g->st.edges_by_type[e[i].type]++;
	}
}

/* Stored edges [from, to), ids slot + shift, placed at the fill cursors. */
static void place_stored(const struct argus_graph *g, uint32_t *oo, uint32_t *oi,
			 uint32_t *io, uint32_t *ii, uint32_t from, uint32_t to,
			 uint32_t shift)
{
	const struct argus_edge *e = EDGES(g);

	for (uint32_t i = from; i < to; i++) {
		oi[oo[e[i].src + 1]++] = i + shift;
		ii[io[e[i].dst + 1]++] = i + shift;
	}
}

/* off[nseg + 1] / ids[all edges] for both directions, in two passes over
 * the stored edges instead of four; the INTRA edges placed by segment,
 * from pos (each segment's thr_segs slot; NULL when there are none).
 * Each list is in id order: stored edges below intra_base, INTRA, the
 * stored ones pushed after. */
static int csr(struct argus_graph *g, const uint32_t *pos)
{
	uint32_t nseg = g->seg.n, nedge = g->edge.n, base = pos ? g->intra_base : nedge;
	size_t offsz = ((size_t)nseg + 2) * sizeof(uint32_t);
	size_t idsz = ((size_t)gedge_count(g) + 1) * sizeof(uint32_t);
	uint32_t *oo = gbig_malloc(offsz), *oi = gbig_malloc(idsz);
	uint32_t *io = gbig_malloc(offsz), *ii = gbig_malloc(idsz);

	if (!oo || !oi || !io || !ii) {
		free(oo);
		free(oi);
		free(io);
		free(ii);
		return -ENOMEM;
	}
	memset(oo, 0, offsz);
	memset(io, 0, offsz);
	/* the stats' count by type comes with the same pass (one pass
	 * fewer over the edge array) */
	memset(g->st.edges_by_type, 0, sizeof(g->st.edges_by_type));
	count_stored(g, oo, io, 0, nedge);
	if (pos) {
		for (uint32_t s = 0; s < nseg; s++) {
			uint32_t out, in;

			intra_ids(g, pos, s, &out, &in);
			oo[s + 2] += out != ARGUS_NONE;
			io[s + 2] += in != ARGUS_NONE;
		}
		g->st.edges_by_type[ARGUS_EDGE_INTRA] += g->nintra;
	}
	for (uint32_t s = 2; s < nseg + 2; s++) {
		oo[s] += oo[s - 1];
		io[s] += io[s - 1];
	}
	/* off[s + 1] is the fill cursor of s; after filling, off[s + 1] is
	 * the end of s, i.e. off[] shifted into place.  Placing in id order
	 * keeps each list in id order. */
	place_stored(g, oo, oi, io, ii, 0, base, 0);
	for (uint32_t s = 0; pos && s < nseg; s++) {
		uint32_t out, in;

		intra_ids(g, pos, s, &out, &in);
		if (out != ARGUS_NONE)
			oi[oo[s + 1]++] = out;
		if (in != ARGUS_NONE)
			ii[io[s + 1]++] = in;
	}
	place_stored(g, oo, oi, io, ii, base, nedge, g->nintra);
	free(g->out_off);
	free(g->out_ids);
	free(g->in_off);
	free(g->in_ids);
	g->out_off = oo;
	g->out_ids = oi;
	g->in_off = io;
	g->in_ids = ii;
	return 0;
}

int gcsr_build(struct argus_graph *g, bool intra)
{
	uint32_t *pos = NULL;
	int rc;

	if ((rc = thread_index(g, intra || g->nintra ? &pos : NULL)))
		return rc;
	if (intra)
		rc = intra_index(g);
	if (!rc)
		rc = csr(g, g->nintra ? pos : NULL);
	free(pos);
	if (rc)
		return rc;
	g->csr_dirty = false;
	return 0;
}
