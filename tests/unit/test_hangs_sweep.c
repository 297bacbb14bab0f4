/* test_hangs_sweep.c - the machine-wide hang list (argus hangs without
 * --pid) takes shortcuts the one-thread list does not: it reads each
 * thread's waits from the segments' shape bytes and feeds the loop pass
 * only the stretches between two sure visits of the loop that are long
 * enough, or hold a mark (diag_hangs.c, loop_spans).  Here both are run on
 * the same graphs, traces written by argus-gen (path in argv[1]) with
 * several seeds, shapes and thresholds down to 1 ms (where nearly every
 * stretch is read), and the machine-wide list must hold exactly the hangs
 * of the one-thread lists of every user thread: same thread, start, end,
 * kind and flags. */
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_events.h"          /* AE_NONE */
#include "argus_graph.h"
#include "check.h"
#include "run_gen.h"

static const char *gen_path;

/* argus-gen -o out extra..., its report thrown away. */
static int run_gen(const char *out, const char *const *extra)
{
	return run_gen_to(gen_path, out, extra, "/dev/null");
}

static int cmp_hang(const void *a, const void *b)
{
	const struct argus_hang *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static bool same_hang(const struct argus_hang *x, const struct argus_hang *y)
{
	return x->tid == y->tid && x->pid == y->pid && x->start == y->start && x->end == y->end &&
	       x->ongoing == y->ongoing && x->kind == y->kind && x->flags == y->flags &&
	       x->seg == y->seg && x->annotated == y->annotated;
}

/* Machine-wide vs every thread's own list, at threshold thr_ns; returns
 * the number of hangs compared (-1 on a mismatch, printed). */
static long compare(const struct argus_graph *g, uint64_t thr_ns, const char *what)
{
	struct argus_hang_opts o = { .sz = sizeof(o), .threshold_ns = thr_ns,
				     .scope = ARGUS_HANGS_MACHINE, .deliberate = 1 };
	struct argus_hang *m = NULL, *all = NULL;
	uint32_t nm = 0, nall = 0, cap = 0;
	long rc;

	if (argus_diag__hangs(g, &o, &m, &nm))
		return -1;
	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *t = argus_graph__thread(g, i);
		struct argus_hang_opts to = { .sz = sizeof(to), .threshold_ns = thr_ns,
					      .scope = ARGUS_HANGS_THREAD, .pid = t->pid,
					      .tid = t->tid };
		struct argus_hang *h;
		uint32_t nh;

		/* the one-thread list finds a tid's latest thread only */
		if (t->kernel || !t->tid || argus_graph__thread_by_tid(g, t->tid) != i)
			continue;
		if (argus_diag__hangs(g, &to, &h, &nh))
			return -1;
		if (nall + nh > cap) {
			cap = (nall + nh) * 2 + 16;
			all = realloc(all, cap * sizeof(*all));
		}
		if (nh)
			memcpy(all + nall, h, nh * sizeof(*h));
		nall += nh;
		free(h);
	}
	/* drop the machine list's hangs of reused tids' earlier threads */
	uint32_t k = 0;
	for (uint32_t i = 0; i < nm; i++) {
		uint32_t thr = argus_graph__thread_by_tid(g, m[i].tid);

		if (m[i].seg != ARGUS_NONE ? argus_graph__segment(g, m[i].seg)->thread == thr :
					     thr != ARGUS_NONE && argus_graph__thread(g, thr)->pid == m[i].pid)
			m[k++] = m[i];
	}
	nm = k;
	if (nm)         /* (a list may be empty: m and all are then NULL) */
		qsort(m, nm, sizeof(*m), cmp_hang);
	if (nall)
		qsort(all, nall, sizeof(*all), cmp_hang);
	rc = nm;
	if (nm != nall) {
		printf("  %s: machine-wide %u hangs, one-thread lists %u\n", what, nm, nall);
		rc = -1;
	}
	for (uint32_t i = 0; i < nm && i < nall && rc >= 0; i++)
		if (!same_hang(&m[i], &all[i])) {
			printf("  %s: hang %u differs: tid %u %llu..%llu kind %u flags %x vs tid %u %llu..%llu kind %u flags %x\n",
			       what, i, m[i].tid, (unsigned long long)m[i].start,
			       (unsigned long long)m[i].end, m[i].kind, m[i].flags, all[i].tid,
			       (unsigned long long)all[i].start, (unsigned long long)all[i].end,
			       all[i].kind, all[i].flags);
			rc = -1;
		}
	free(m);
	free(all);
	return rc;
}

static void test_machine_list_equals_thread_lists(void)
{
	static const char *const runs[][12] = {
		{ "--events", "1500000", "--seed", "1", "--ui-hang", NULL },
		{ "--events", "300000", "--seed", "7", "--procs", "12", "--threads-per-proc", "6", NULL },
		{ "--events", "2500000", "--seed", "42", "--cpus", "4", "--ui-hang", NULL },
	};
	static const uint64_t thresholds[] = { 2000000000ull, 100000000ull, 10000000ull, 1000000ull };
	char path[] = "/tmp/argus-test-hangs-sweep-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		struct argus_error err = { 0 };
		struct argus_trace *t;
		struct argus_graph *g;

		CHECK_EQ(run_gen(path, (const char *const *)runs[r]), 0);
		t = argus_trace__open(path, &err);
		CHECK(t != NULL);
		if (!t)
			continue;
		g = argus_graph__build(t, NULL, &err);
		CHECK(g != NULL);
		for (size_t k = 0; g && k < sizeof(thresholds) / sizeof(thresholds[0]); k++) {
			char what[64];
			long n;

			snprintf(what, sizeof(what), "run %zu, threshold %llu ns", r,
				 (unsigned long long)thresholds[k]);
			n = compare(g, thresholds[k], what);
			CHECK(n >= 0);
			/* the lower thresholds must really have hangs to compare */
			if (thresholds[k] <= 10000000ull)
				CHECK(n > 10);
		}
		argus_graph__free(g);
		argus_trace__close(t);
	}
	unlink(path);
}

/* Slots of g that hold an event (type not AE_NONE). */
static uint64_t used_slots(const struct argus_graph *g)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < argus_graph__nevents(g); i++)
		n += argus_graph__event(g, i, ARGUS_GEVENT_BUF)->type != AE_NONE;
	return n;
}

/* The sweep reads every slot in storage order and skips the unused ones
 * by their type, AE_NONE, so the unused tails of the chains' last blocks
 * must be zeroed by the build (gev_new_block), not by luck: a graph built
 * in a long-lived process (argusd, lldb) gets its event array from a heap
 * full of old bytes, where a fresh mmap would have been zero.  Here the
 * heap is filled with 0xa5 and freed first, with malloc made to serve even
 * big blocks from it.  Every slot but the tails must hold an event, and
 * the machine-wide list still equals the thread lists.  (Session 22 tried
 * zeroing only the tails, after the events: no gain the rounds could
 * tell; without any zeroing this test fails.) */
static void test_a_graph_on_a_dirty_heap_has_clean_tails(void)
{
	static const char *const run[] = { "--events", "300000", "--seed", "3", NULL };
	char path[] = "/tmp/argus-test-hangs-sweep-XXXXXX";
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_graph *g;
	enum { NBLK = 48 };
	void *blk[NBLK];
	int fd = mkstemp(path);
	uint64_t used;

	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(run_gen(path, run), 0);
	t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t) {
		unlink(path);
		return;
	}
	/* big blocks from the heap (not fresh zeroed mmaps), and the heap
	 * kept after free.  A sanitizer's malloc has no mallopt (it returns
	 * 0): there the graph is checked all the same, on whatever memory
	 * that allocator hands out (ASan fills a block's first 4 KiB with
	 * 0xbe). */
	if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 256 << 20) != 1)
		printf("note: malloc is not glibc's (a sanitizer's?): the heap is not made dirty first\n");
	for (int i = 0; i < NBLK; i++)
		if ((blk[i] = malloc(1 << 20)))
			memset(blk[i], 0xa5, 1 << 20);
	for (int i = 0; i < NBLK; i++)
		free(blk[i]);
	g = argus_graph__build(t, NULL, &err);
	CHECK(g != NULL);
	if (g) {
		used = used_slots(g);
		CHECK_EQ(used, argus_graph__stats(g)->events);
		CHECK(compare(g, 10000000ull, "dirty heap, threshold 10 ms") > 0);
	}
	argus_graph__free(g);
	argus_trace__close(t);
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_hangs_sweep ARGUS_GEN\n");
		return 2;
	}
	gen_path = argv[1];
	RUN(test_machine_list_equals_thread_lists);
	RUN(test_a_graph_on_a_dirty_heap_has_clean_tails);
	return check_report();
}
