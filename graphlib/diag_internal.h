/* diag_internal.h - what the diagnosis's files (diag_*.c) call of each
 * other.  Not part of libargus's API (argus_diag.h): the front ends never
 * see these, and each is declared once, here, not copied into its callers.
 * The diagnosis reads the graph through its API (argus_graph.h) and, in
 * its hot loops (hang finding, event walks), graph_view.h; never
 * graph_internal.h. */
#ifndef ARGUS_DIAG_INTERNAL_H
#define ARGUS_DIAG_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

#include "argus_diag.h"

/* The tid of segment s's thread (s a valid id). */
static inline uint32_t diag_seg_tid(const struct argus_graph *g, uint32_t s)
{
	return argus_graph__seg_thread(g, s)->tid;
}

/* diag_similar.c: the strong in-edge from another thread that woke segment
 * seg (the one flagged ARGUS_EDGE_F_WOKE, else the first), or ARGUS_NONE. */
uint32_t diag_waker_edge(const struct argus_graph *g, uint32_t seg);

/* diag_similar.c: the segments of seg's thread similar to seg, outside
 * [ex_from, ex_to], best first (exact: the same object, else the same
 * kind of object); how many were written to out (at most max). */
int diag_similar(const struct argus_graph *g, uint32_t seg, uint64_t ex_from,
		 uint64_t ex_to, struct argus_similar *out, uint32_t max, bool exact);

/* diag_flag.c: follow a data flag's writer (see its top comment); the
 * hang's own dataflag edge, ARGUS_NONE none. */
bool diag_flag_follow(const struct argus_graph *g, const struct argus_diag_opts *o,
		      struct argus_diagnosis *d, const struct argus_activity *a,
		      uint32_t depth, uint32_t hang_edge);
uint32_t diag_flag_hang_edge(const struct argus_graph *g, const struct argus_hang *h);

/* diag_holder_rule.c: the holder a schema `holder` rule names for thread
 * tid blocked in segment h (hs: the hang's segment), ARGUS_NONE none. */
uint32_t diag_holder_rule_pick(const struct argus_graph *g, const struct argus_diag_opts *o,
			       const struct argus_diagnosis *d, uint32_t tid, uint32_t h, uint32_t hs);

/* diag_work.c: thread tid blocked in segment h, judged over [wfrom, wto],
 * waits for a work item it handed to another thread: 1 with *culprit and
 * k's rule and item fields set, 0 when the rule does not apply, -ENOMEM. */
int diag_work_find(const struct argus_graph *g, uint32_t tid, uint32_t h, uint64_t wfrom,
		   uint64_t wto, uint32_t *culprit, struct argus_culprit *k);
#endif
