/* hangs_replay.h - argusd's live hang watch (collector/hang_watch.h) run
 * over a recording, its hangs listed as the offline finder lists them
 * (argus_diag__hangs): `argus hangs FILE --live-rule`, and the tests that
 * check the two agree (docs/diagnosis.md §1). */
#ifndef ARGUS_HANGS_REPLAY_H
#define ARGUS_HANGS_REPLAY_H
#include <stdint.h>

#include "argus_diag.h"
#include "argus_graph.h"

struct hangs_replay_opts {
	uint64_t threshold_ns;  /* 0 = 2 s */
	uint32_t pid;           /* 0: every user thread but tools' */
	uint32_t tid;           /* 0: every thread of pid; else that one
	                           (its hangs then in time order) */
};

/* The hangs the live watch reports over t (g built from it), longest
 * first: kind as the watch saw it when the hang began, ARGUS_HANG_F_LOOP
 * for a thread it had seen in an idle wait, ongoing when still open at
 * the end (which then ends at the trace's end).  *out is malloc'ed.
 * 0 or -errno. */
int hangs_replay_graph(const struct argus_graph *g, struct argus_trace *t,
		       const struct hangs_replay_opts *o, struct argus_hang **out, uint32_t *n);
#endif
