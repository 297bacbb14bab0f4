/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_choose.c - which hang a front end diagnoses, and whether a trace is
 * of the system running now.  One rule for every front end (the CLI, the
 * lldb plugin, argusd's keeper, argus report), so that a fix made for one
 * holds for all (docs/diagnosis.md, "Which hang").
 *
 * The rule, over the hangs of one thread (argus_diag__hangs, time order):
 *   1. a time asked (--at): the hang that contains it;
 *   2. a mark asked (--mark TEXT): the first hang whose mark's text
 *      contains TEXT;
 *   3. else the hang still going at the end of the trace (a user attached
 *      to a hung program: that is the one they mean), if it lasted at least
 *      ongoing_min_ns -- which is the threshold for a recording, and less
 *      for a trace of the running system just taken (the plugin's
 *      snapshot, `argus save` then `argus diagnose`): a user who attaches
 *      1 s into a hang means that one, not a longer one a minute ago;
 *   4. else the longest hang of at least min_ns.
 * Times are CLOCK_MONOTONIC ns.
 */
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "argus_diag.h"

const char *argus_hang_why_str(unsigned why)
{
	static const char *const n[] = {
		[ARGUS_CHOSE_AT] = "at", [ARGUS_CHOSE_MARK] = "mark",
		[ARGUS_CHOSE_ONGOING] = "ongoing", [ARGUS_CHOSE_LONGEST] = "longest",
	};

	return why < sizeof(n) / sizeof(n[0]) ? n[why] : NULL;
}

int argus_diag__choose_hang(const struct argus_graph *g, const struct argus_hang *h, uint32_t n,
			    const struct argus_hang_ask *ask, uint32_t *index, unsigned *why)
{
	uint32_t best = ARGUS_NONE;

	if (!ask || ask->sz < sizeof(*ask) || !index || !why || (n && !h))
		return -EINVAL;
	if (ask->have_at) {
		for (uint32_t i = 0; i < n; i++)
			if (ask->at_ns >= h[i].start && ask->at_ns <= h[i].end) {
				*index = i;
				*why = ARGUS_CHOSE_AT;
				return 0;
			}
		return -ENOENT;
	}
	if (ask->mark) {
		const struct argus_trace *t = g ? argus_graph__trace(g) : NULL;

		for (uint32_t i = 0; i < n; i++) {
			const char *m = h[i].annotated && t ? argus_trace__string(t, h[i].mark) : NULL;

			if (m && strstr(m, ask->mark)) {
				*index = i;
				*why = ARGUS_CHOSE_MARK;
				return 0;
			}
		}
		return -ENOENT;
	}
	/* the hang still going (one thread has at most one; of a process's
	 * threads, the one that began first: it is the one the others wait
	 * behind, if any) */
	for (uint32_t i = 0; i < n; i++)
		if (h[i].ongoing && h[i].end - h[i].start >= ask->ongoing_min_ns &&
		    (best == ARGUS_NONE || h[i].start < h[best].start))
			best = i;
	if (best != ARGUS_NONE) {
		*index = best;
		*why = ARGUS_CHOSE_ONGOING;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (h[i].end - h[i].start >= ask->min_ns &&
		    (best == ARGUS_NONE || h[i].end - h[i].start > h[best].end - h[best].start))
			best = i;
	if (best == ARGUS_NONE)
		return -ENOENT;
	*index = best;
	*why = ARGUS_CHOSE_LONGEST;
	return 0;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: constant while the system
 * runs (NTP slews it by milliseconds), different after a reboot. */
static int64_t boot_offset_now(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000ll + ((int64_t)r.tv_nsec - m.tv_nsec);
}

bool argus_trace__of_running_system(const struct argus_trace *t, uint64_t max_age_ns)
{
	const struct argus_file_header *fh = argus_trace__header(t);
	const struct argus_trace_stats *st = argus_trace__stats(t);
	struct utsname u;
	struct timespec m;
	int64_t off, d;
	uint64_t now;

	if (!fh || uname(&u))
		return false;
	if (strncmp(fh->hostname, u.nodename, sizeof(fh->hostname) - 1) ||
	    strncmp(fh->kernel, u.release, sizeof(fh->kernel) - 1))
		return false;
	/* the same boot: a reboot restarts CLOCK_MONOTONIC, and the offset
	 * to the wall clock jumps by the time the machine was up (allow 5 s
	 * for NTP's steps) */
	off = (int64_t)fh->created_real_ns - (int64_t)fh->created_mono_ns;
	d = off - boot_offset_now();
	if (d > 5000000000ll || d < -5000000000ll)
		return false;
	/* and recent: its last event not long before now */
	clock_gettime(CLOCK_MONOTONIC, &m);
	now = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	if (!st || !st->max_ts || st->max_ts > now + 1000000000ull)
		return false;
	return now <= st->max_ts || now - st->max_ts <= max_age_ns;
}
