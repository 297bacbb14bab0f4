/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_csr.c - the finished graph's indexes.
 *
 *   thr_segs    each thread's segment ids, sorted by start time, as one
 *               array sliced by argus_thread.first_seg / nseg;
 *   INTRA       the weak previous -> next edge of each thread, added once
 *               from those slices;
 *   out/in CSR  off[s] .. off[s + 1] index ids[], the edge ids leaving /
 *               entering segment s, in edge-id (creation) order.
 *
 * Rebuilt from scratch whenever edges change (argus_graph__add_edge marks
 * the graph dirty); the build is linear apart from sorting the rare
 * threads whose segments were appended out of order by the split.
 */
#include "graph_internal.h"

static const struct argus_graph *sort_g;        /* qsort has no context */

static int cmp_seg_start(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct argus_segment *sx = &SEGS(sort_g)[x], *sy = &SEGS(sort_g)[y];

	if (sx->start != sy->start)
		return sx->start < sy->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int thread_index(struct argus_graph *g)
{
	uint32_t nthr = g->thr.n, nseg = g->seg.n, *fill;

	uint32_t *segs = malloc((nseg + 1) * sizeof(uint32_t));

	fill = calloc(nthr + 1, sizeof(uint32_t));
	if (!segs || !fill) {   /* keep the old index */
		free(segs);
		free(fill);
		return -ENOMEM;
	}
	free(g->thr_segs);
	g->thr_segs = segs;
	for (uint32_t t = 0; t < nthr; t++)
		THRS(g)[t].nseg = 0;
	for (uint32_t s = 0; s < nseg; s++)
		THRS(g)[SEGS(g)[s].thread].nseg++;
	for (uint32_t t = 0, off = 0; t < nthr; t++) {
		THRS(g)[t].first_seg = off;
		off += THRS(g)[t].nseg;
	}
	for (uint32_t s = 0; s < nseg; s++) {
		uint32_t t = SEGS(g)[s].thread;

		g->thr_segs[THRS(g)[t].first_seg + fill[t]++] = s;
	}
	free(fill);
	for (uint32_t t = 0; t < nthr; t++) {
		uint32_t *v = g->thr_segs + THRS(g)[t].first_seg, n = THRS(g)[t].nseg;
		bool sorted = true;

		for (uint32_t i = 1; i < n && sorted; i++)
			sorted = SEGS(g)[v[i - 1]].start <= SEGS(g)[v[i]].start;
		if (!sorted) {
			sort_g = g;
			qsort(v, n, sizeof(*v), cmp_seg_start);
		}
	}
	return 0;
}

static int add_intra(struct argus_graph *g)
{
	for (uint32_t t = 0; t < g->thr.n; t++) {
		const uint32_t first = THRS(g)[t].first_seg, n = THRS(g)[t].nseg;

		for (uint32_t i = 1; i < n; i++) {
			uint32_t a = g->thr_segs[first + i - 1];
			uint32_t b = g->thr_segs[first + i];
			int64_t id = gedge_push(g, ARGUS_EDGE_INTRA, a, b,
						SEGS(g)[a].end, SEGS(g)[b].start, 0);

			if (id == -ENOMEM)
				return -ENOMEM;
		}
	}
	return 0;
}

/* off[nseg + 1] / ids[nedges] for one direction. */
static int csr(struct argus_graph *g, bool out, uint32_t **offp, uint32_t **idsp)
{
	uint32_t nseg = g->seg.n, nedge = g->edge.n;
	uint32_t *off = calloc((size_t)nseg + 2, sizeof(*off));
	uint32_t *ids = malloc(((size_t)nedge + 1) * sizeof(*ids));

	if (!off || !ids) {
		free(off);
		free(ids);
		return -ENOMEM;
	}
	for (uint32_t e = 0; e < nedge; e++)
		off[(out ? EDGES(g)[e].src : EDGES(g)[e].dst) + 2]++;
	for (uint32_t s = 2; s < nseg + 2; s++)
		off[s] += off[s - 1];
	/* off[s + 1] is the fill cursor of s; after filling, off[s + 1] is
	 * the end of s, i.e. off[] shifted into place. */
	for (uint32_t e = 0; e < nedge; e++)
		ids[off[(out ? EDGES(g)[e].src : EDGES(g)[e].dst) + 1]++] = e;
	free(*offp);
	free(*idsp);
	*offp = off;
	*idsp = ids;
	return 0;
}

int gcsr_build(struct argus_graph *g, bool intra)
{
	int rc;

	if ((rc = thread_index(g)))
		return rc;
	if (intra && (rc = add_intra(g)))
		return rc;
	if ((rc = csr(g, true, &g->out_off, &g->out_ids)) ||
	    (rc = csr(g, false, &g->in_off, &g->in_ids)))
		return rc;
	g->csr_dirty = false;
	return 0;
}
