/* scenario.h - what the tests that write small synthetic traces share
 * (test_graph_patterns.c, test_diagnosis.c and a dozen more): the trace
 * being written, the tid -> pid table that lets scenario lines name
 * threads only, the events they all write (run, block, wake, enter,
 * leave), opening a generator on a fresh temp file, closing it and
 * building its graph (scenario_build), and the time and kernel constants
 * scenarios are written in.  One test file includes it, so everything is
 * static to that file.  Include after check.h and tracegen.h. */
#ifndef ARGUS_TEST_SCENARIO_H
#define ARGUS_TEST_SCENARIO_H
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define T0 UINT64_C(1000000000000) /* the trace's first event */
#define US UINT64_C(1000)
#define MS UINT64_C(1000000)
#define AT(us) (T0 + (uint64_t)(us) * US)
#define NONE ARGUS_NONE

#define FUTEX_WAIT_OP 0
#define FUTEX_WAKE_OP 1
#define HRTIMER_WAKEUP_FN 0xffffffff81160a40ull /* hrtimer_wakeup() */

static char trace_path[64];
static struct argus_tracegen *tg;       /* the scenario being written */
static struct argus_trace *trace;
static struct argus_graph *graph;

/* tid -> pid of the tasks declared */
static struct { uint32_t tid, pid; } pids[32];
static unsigned npids;

static uint32_t pid_of(uint32_t tid)
{
	for (unsigned i = 0; i < npids; i++)
		if (pids[i].tid == tid)
			return pids[i].pid;
	return tid;
}

/* A tracegen call that must succeed (the scenario would be wrong). */
static void tg_ok(int rc, const char *what, uint64_t ts)
{
	check_count++;
	if (rc) {
		check_failures++;
		fprintf(stderr, "  tracegen %s at T0+%" PRIu64 " ns failed: %d\n",
			what, ts - T0, rc);
	}
}

/* The scenario's events, threads named by tid (pid from the table).
 * tid is switched in on cpu (the CPU was idle). */
static void run(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__run(tg, ts, cpu, tid, pid_of(tid)), "run", ts);
}

/* tid goes to sleep (TASK_INTERRUPTIBLE) in syscall nr, on object obj. */
static void block(uint64_t ts, uint16_t cpu, uint32_t tid, int32_t nr,
		  uint64_t arg, uint32_t kind, uint64_t obj, uint64_t peer)
{
	tg_ok(argus_tracegen__block(tg, ts, cpu, tid, pid_of(tid), nr, arg, kind,
				    obj, peer), "block", ts);
}

/* A task-context wake-up (waker 0: the idle task). */
static void wake(uint64_t ts, uint16_t cpu, uint32_t waker, uint32_t target)
{
	tg_ok(argus_tracegen__wake(tg, ts, cpu, waker, waker ? pid_of(waker) : 0,
				   target, pid_of(target)), "wake", ts);
}

static void enter(uint64_t ts, uint16_t cpu, uint32_t tid, int64_t nr,
		  uint64_t a0, uint64_t a1)
{
	uint64_t args[6] = { a0, a1 };

	tg_ok(argus_tracegen__sys_enter(tg, ts, cpu, tid, pid_of(tid), nr, args),
	      "sys_enter", ts);
}

static void leave(uint64_t ts, uint16_t cpu, uint32_t tid, int64_t nr,
		  int64_t ret, uint64_t a0, uint32_t kind, uint64_t obj,
		  uint64_t peer)
{
	tg_ok(argus_tracegen__sys_exit(tg, ts, cpu, tid, pid_of(tid), nr, ret, a0,
				       kind, obj, peer), "sys_exit", ts);
}

/* Close the generator and open the trace it wrote; false (after a failed
 * check) when there is none. */
static bool scenario_reopen(void)
{
	struct argus_error err = { 0 };

	if (!tg)
		return false;
	tg_ok(argus_tracegen__close(tg), "close", T0);
	tg = NULL;
	trace = argus_trace__open(trace_path, &err);
	if (!trace)
		fprintf(stderr, "  open: %s\n", err.msg);
	CHECK(trace != NULL);
	return trace != NULL;
}

/* scenario_reopen, then build the trace's graph (opts may be NULL) into
 * graph; false (after a failed check) when there is none. */
__attribute__((unused)) static bool scenario_build(const struct argus_graph_opts *o)
{
	struct argus_error err = { 0 };

	if (!scenario_reopen())
		return false;
	graph = argus_graph__build(trace, o, &err);
	if (!graph)
		fprintf(stderr, "  build: %s\n", err.msg);
	CHECK(graph != NULL);
	return graph != NULL;
}

/* The type of edge id (0 for NONE or no such edge), and the tid of the
 * thread of segment s (0 for none). */
__attribute__((unused)) static unsigned edge_type(uint32_t id)
{
	const struct argus_edge *e = id != ARGUS_NONE ? argus_graph__edge(graph, id, ARGUS_EDGE_BUF) : NULL;

	return e ? e->type : 0;
}

__attribute__((unused)) static uint32_t tid_of(uint32_t s)
{
	const struct argus_segment *sg = argus_graph__segment(graph, s);

	return sg ? argus_graph__thread(graph, sg->thread)->tid : 0;
}

/* Free what the scenario made and remove its file. */
static void scenario_end(void)
{
	argus_tracegen__close(tg);
	tg = NULL;
	argus_graph__free(graph);
	graph = NULL;
	argus_trace__close(trace);
	trace = NULL;
	unlink(trace_path);
}

/* Looking at the built graph: segment id (all zero, failing every check,
 * when there is none), and the i-th segment (time order) of thread tid,
 * NONE if it has fewer. */
static const struct argus_segment no_seg;

__attribute__((unused)) static const struct argus_segment *S(uint32_t id)
{
	const struct argus_segment *s = argus_graph__segment(graph, id);

	return s ? s : &no_seg;
}

__attribute__((unused)) static uint32_t seg(uint32_t tid, uint32_t i)
{
	uint32_t t = argus_graph__thread_by_tid(graph, tid), n;
	const uint32_t *v;

	if (t == NONE)
		return NONE;
	n = argus_graph__thread_segments(graph, t, &v);
	return i < n ? v[i] : NONE;
}

/* A generator with options o on a new /tmp/NAME.XXXXXX; the pid table is
 * emptied.  Failing is a failed check (tg stays NULL). */
static void scenario_open(const char *name, const struct argus_tracegen_opts *o)
{
	struct argus_error err = { 0 };
	int fd;

	npids = 0;
	snprintf(trace_path, sizeof(trace_path), "/tmp/%s.XXXXXX", name);
	fd = mkstemp(trace_path);
	if (fd >= 0)
		close(fd);
	tg = fd >= 0 ? argus_tracegen__open(trace_path, o, &err) : NULL;
	if (!tg)
		fprintf(stderr, "  tracegen open %s: %s\n", trace_path, err.msg);
	CHECK(tg != NULL);
}
#endif
