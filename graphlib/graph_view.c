/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_view.c - the read-only view of graph_view.h over the storage of
 * graph_internal.h.
 */
#include "graph_internal.h"

void gview_get(const struct argus_graph *g, struct gview *v)
{
	v->seg = SEGS(g);
	v->shape = SHAPES(g);
	gev_arrays_of(g, &v->evs);
	v->blk = BLKS(g);
}
