/* test_hang_model_recorded.c - one hang model, run in two places (issue
 * 26), over real recordings: the offline finder's machine-wide list
 * (`argus hangs FILE`) and argusd's live watch replayed over the same
 * trace (`argus hangs FILE --live-rule`, hangs_replay_graph) list the
 * same hangs, thread for thread.
 *
 * The traces in tests/unit/data were recorded on this project's test
 * machine with `argus record -- sleep 6..7` while `make -j2` built this
 * project next to it (a recursive make: gmake's jobserver loop, whose
 * pselect SIGCHLD interrupts with -ERESTARTNOHAND, then wait4, write and
 * pselect again; compilers; shells; pid 1's workers):
 *   recorded_make_j2.argus    found the offline model keeping an
 *                             interrupted call open across other calls
 *                             (a sub-make's 2.2 s "hang" the live rule
 *                             did not see);
 *   recorded_make_exit.argus  found the live rule reporting a make that
 *                             left its loop and exited (a shutdown, no
 *                             hang offline).
 *
 * The two may differ only where the live side has not seen the end: a
 * thread seen only asleep, whose one wait began before the recording
 * (offline: dormant), and a hang still open on a request whose reply has
 * not been seen (live: unsettled).  Those are checked to be exactly that;
 * anything else fails.  Each trace must also have hangs, so that agreeing
 * on nothing cannot pass.  No mock: real records, read by the real reader.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "argus_diag.h"
#include "argus_graph.h"
#include "check.h"
#include "hangs_replay.h"
#include "trace_format.h"

static bool overlaps(const struct argus_hang *a, const struct argus_hang *b)
{
	return a->tid == b->tid && a->start < b->end && a->end > b->start;
}

static bool in(const struct argus_hang *x, const struct argus_hang *ys, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (overlaps(x, &ys[i]))
			return true;
	return false;
}

static void agree_on(const char *name, uint32_t min_hangs)
{
	char path[4096];
	struct argus_error err = { 0 };
	struct argus_graph_opts go = { .sz = sizeof(go) };
	struct argus_hang_opts ho = { .sz = sizeof(ho), .scope = ARGUS_HANGS_MACHINE };
	struct argus_hang_opts ha = ho;
	struct hangs_replay_opts ro = { .threshold_ns = 0 };
	struct argus_hang *off = NULL, *all = NULL, *live = NULL;
	uint32_t noff = 0, nall = 0, nlive = 0, allowed = 0;
	struct argus_trace *t;
	struct argus_graph *g;

	snprintf(path, sizeof(path), "%s/%s", ARGUS_TEST_DATA, name);
	t = argus_trace__open(path, &err);
	if (!t)
		fprintf(stderr, "  %s: %s\n", path, err.msg);
	CHECK(t != NULL);
	if (!t)
		return;
	g = argus_graph__build(t, &go, &err);
	CHECK(g != NULL);
	if (!g) {
		argus_trace__close(t);
		return;
	}
	ha.deliberate = 1;
	CHECK_EQ(argus_diag__hangs(g, &ho, &off, &noff), 0);
	CHECK_EQ(argus_diag__hangs(g, &ha, &all, &nall), 0);
	CHECK_EQ(hangs_replay_graph(g, t, &ro, &live, &nlive), 0);
	fprintf(stderr, "  %s: offline %u hang(s), live %u\n", name, noff, nlive);
	CHECK(noff >= min_hangs);
	for (uint32_t i = 0; i < noff; i++) {
		bool ok = in(&off[i], live, nlive);

		if (!ok)
			fprintf(stderr, "  offline hang of %u/%u, %.3f s: none live\n", off[i].pid,
				off[i].tid, (double)(off[i].end - off[i].start) / 1e9);
		CHECK(ok);
	}
	for (uint32_t j = 0; j < nlive; j++) {
		bool dormant = false;

		if (in(&live[j], off, noff))
			continue;
		for (uint32_t i = 0; i < nall; i++)
			dormant |= overlaps(&live[j], &all[i]) && (all[i].flags & ARGUS_HANG_F_DORMANT);
		if (dormant || (live[j].ongoing && (live[j].flags & ARGUS_HANG_F_UNSETTLED))) {
			allowed++;
			continue;
		}
		fprintf(stderr, "  live hang of %u/%u, %.3f s: none offline\n", live[j].pid,
			live[j].tid, (double)(live[j].end - live[j].start) / 1e9);
		CHECK(false);
	}
	fprintf(stderr, "  %s: %u live-only hang(s) the live side has not seen the end of\n", name,
		allowed);
	free(off);
	free(all);
	free(live);
	argus_graph__free(g);
	argus_trace__close(t);
}

static void test_make_j2_interrupted_pselect(void)
{
	agree_on("recorded_make_j2.argus", 4);
}

static void test_make_exiting_after_its_loop(void)
{
	agree_on("recorded_make_exit.argus", 3);
}

int main(void)
{
	RUN(test_make_j2_interrupted_pselect);
	RUN(test_make_exiting_after_its_loop);
	return check_report();
}
