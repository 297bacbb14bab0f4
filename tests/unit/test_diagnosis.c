/* test_diagnosis.c - the hang diagnosis (graphlib/argus_diag.h,
 * docs/diagnosis.md) as a specification, on small synthetic traces.
 *
 * Each TEST writes one scenario with tests/gen/tracegen.h (a temp file),
 * opens it, builds the graph and runs the public diagnosis API on it:
 * argus_diag__hangs (§1), argus_diag__activity (§2), argus_diag__diagnose
 * (§3-5: the similar normal run, the backward slice, the culprit and the
 * chain, wait_origin, the live holder, cycles and timeouts).  Only the
 * public headers argus_graph.h and argus_diag.h are used.
 *
 * Times are written AT(µs after T0).  Thread ids: UI 100 is the UI
 * process's main thread (pid 100); other tids are their own process's
 * main thread unless task() says otherwise.  The scenarios:
 *
 *   - the UI loop: one UI thread whose event loop is poll() with a 100 ms
 *     timeout; between two polls it does whatever a test puts there;
 *   - pipe round: the UI waits on a futex that a worker wakes after it
 *     read a pipe that a feeder process writes (§5: the culprit, then the
 *     pipe's usual writer);
 *   - browser round (case study 1, docs/case-studies.md): the browser's UI
 *     thread asks its ime_worker (futex), which asks the renderer over a
 *     unix socket and wakes the UI when the reply comes; the hang rounds
 *     vary what the renderer does (computes, calls the browser back).
 *
 * Every expected value below is derived from the scenario's numbers in the
 * comment next to it, not read off an output.  A test that shows a bug in
 * graphlib not fixed yet is named KNOWN_BUG_..., says why above it, and is
 * kept out of the default RUN list (none is left).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "trace_format.h"
#include "tracegen.h"

#define ERESTARTSYS 512
#define ERESTARTNOHAND 514
#define TASK_TRACED 0x8         /* prev_state of a ptrace stop */

/* ---- writing a scenario (as tests/unit/test_graph_patterns.c) -------- */

#include "scenario.h"

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_diagnosis", &o);
}

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

/* tid stops (a ptrace stop: prev_state TASK_TRACED), the CPU goes idle. */
static void stop(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__sw(tg, ts, cpu, tid, pid_of(tid), TASK_TRACED, -1, 0,
				 AE_OBJ_NONE, 0, 0, 0, 0), "stop", ts);
}

static void preempt(uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t next)
{
	tg_ok(argus_tracegen__preempt(tg, ts, cpu, tid, pid_of(tid), next,
				      pid_of(next)), "preempt", ts);
}

/* tid arms hrtimer `timer` (task context, as nanosleep/poll/futex do). */
static void arm(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t timer,
		uint64_t expires)
{
	tg_ok(argus_tracegen__hrt_start(tg, ts, cpu, AE_CTX_TASK, tid, pid_of(tid),
					timer, HRTIMER_WAKEUP_FN, (int64_t)expires,
					1, tid), "hrt_start", ts);
}

static void disarm(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t timer)
{
	tg_ok(argus_tracegen__hrt_cancel(tg, ts, cpu, AE_CTX_TASK, tid, pid_of(tid),
					 timer, HRTIMER_WAKEUP_FN, 0, 0, tid),
	      "hrt_cancel", ts);
}

/* The armed timer expires on idle `cpu` (hardirq) and wakes target. */
static void expire(uint64_t ts, uint16_t cpu, uint64_t timer, uint32_t target)
{
	tg_ok(argus_tracegen__timer_wake(tg, ts, cpu, 0, 0, timer, target,
					 pid_of(target)), "timer_wake", ts);
}

static const uint64_t STACK_HOT[] = { 0x401234, 0x401100, 0x400f00 };
static const uint64_t STACK_COLD[] = { 0x402222, 0x400f00 };

static void sample(uint64_t ts, uint16_t cpu, uint32_t tid, const uint64_t *ips,
		   uint32_t n)
{
	tg_ok(argus_tracegen__sample(tg, ts, cpu, tid, pid_of(tid), ips, n),
	      "sample", ts);
}

/* ---- building and looking ------------------------------------------- */

static void end(void)
{
	scenario_end();
}

/* The hangs of UI thread tid (its process pid) at threshold thr_ms. */
static uint32_t hangs(uint32_t pid, uint64_t thr_ns, struct argus_hang **h)
{
	struct argus_hang_opts o = { .sz = sizeof(o), .pid = pid,
				     .threshold_ns = thr_ns };
	uint32_t n = 0;

	*h = NULL;
	CHECK_EQ(argus_diag__hangs(graph, &o, h, &n), 0);
	return n;
}

/* Diagnose the only hang of pid at the default threshold. */
static bool diagnose_only_hang(uint32_t pid, const struct argus_diag_opts *o,
			       struct argus_hang *hang, struct argus_diagnosis *d)
{
	struct argus_hang *h;
	uint32_t n = hangs(pid, 0, &h);

	CHECK_EQ(n, 1);
	if (n != 1) {
		free(h);
		return false;
	}
	*hang = h[0];
	free(h);
	CHECK_EQ(argus_diag__diagnose(graph, hang, o, d), 0);
	return true;
}

/* The stack id `id` of the trace is exactly ips[0..n). */
static bool stack_is(uint32_t id, const uint64_t *ips, uint32_t n)
{
	const uint64_t *v;
	uint32_t nr;

	if (!id || argus_trace__stack(trace, id, &v, &nr) || nr != n)
		return false;
	return !memcmp(v, ips, n * sizeof(*ips));
}

/* ---- the UI event loop (§1, §2) -------------------------------------- */

#define UI 100                  /* "app": its main thread is the UI */
#define HELPER 101              /* "app" helper thread */
#define HOG 400                 /* "hog": another process, CPU-bound */
#define DBG 300                 /* "lldb-server" */
#define T_POLL 0xffff888000010000ull
#define T_FUTEX 0xffff888000020000ull

/* UI leaves poll at `at` µs: the poll timer (armed at the previous poll)
 * expires at at-10, the UI is on CPU at at-5. */
static void ui_poll_return(uint64_t at, int64_t ret)
{
	expire(AT(at - 10), 0, T_POLL, UI);
	run(AT(at - 5), 0, UI);
	leave(AT(at), 0, UI, SYS_poll, ret, 0x7ffc0000, AE_OBJ_NONE, 0, 0);
}

/* UI calls poll at `at` µs with a 100 ms timeout and blocks 10 µs later. */
static void ui_poll_call(uint64_t at)
{
	enter(AT(at), 0, UI, SYS_poll, 0x7ffc0000, 1);
	arm(AT(at + 5), 0, UI, T_POLL, AT(at + 100000));
	block(AT(at + 10), 0, UI, SYS_poll, 100 * MS, AE_OBJ_NONE, 0, 0);
}

static void ui_tasks(void)
{
	task(UI, UI, "app");
	task(HELPER, UI, "app-helper");
	task(HOG, HOG, "hog");
	task(DBG, DBG, "lldb-server");
	run(AT(0), 0, UI);
	run(AT(1), 1, HELPER);
	enter(AT(2), 1, HELPER, SYS_futex, 0x5000, FUTEX_WAIT_OP);
	block(AT(3), 1, HELPER, SYS_futex, 0x5000, AE_OBJ_NONE, 0, 0);
	ui_poll_call(100);
}

/*
 * UI  0.1 ms poll; back at 100 ms, works 1 ms, poll at 101 ms;
 *     back at 201.01 ms, works `gap_us`, poll; back 100 ms later, works
 *     1 ms, poll and stays in it; HOG does a syscall 1 s later (trace end).
 */
static void gap_scenario_marked(uint64_t gap_us, uint64_t mark_us, const char *mark)
{
	uint64_t t;

	begin();
	ui_tasks();
	ui_poll_return(100000, 0);
	ui_poll_call(101000);
	ui_poll_return(201010, 0);          /* the gap starts: 201.01 ms */
	if (mark)       /* `argus mark` from a shell: no thread (tid 0) */
		tg_ok(argus_tracegen__mark(tg, AT(mark_us), 3, 0, 0, mark), "mark",
		      AT(mark_us));
	t = 201010 + gap_us;
	ui_poll_call(t);                    /* ...and ends */
	ui_poll_return(t + 100010, 0);
	ui_poll_call(t + 101010);
	run(AT(t + 1101010), 3, HOG);
	enter(AT(t + 1101020), 3, HOG, SYS_getpid, 0, 0);
}

static void gap_scenario(uint64_t gap_us)
{
	gap_scenario_marked(gap_us, 0, NULL);
}

static void TEST_hang_of_2500ms_is_found_at_2000ms_and_2500ms_not_at_3000ms(void)
{
	struct argus_hang *h;
	uint32_t n;

	gap_scenario(2500000);
	if (!scenario_build(NULL))
		goto out;
	n = hangs(UI, 2000 * MS, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].tid, UI);
		CHECK_EQ(h[0].pid, UI);
		CHECK_EQ(h[0].start, AT(201010));           /* poll's return */
		CHECK_EQ(h[0].end, AT(201010 + 2500000));   /* the next call */
		CHECK_EQ(h[0].ongoing, 0);
		CHECK_EQ(h[0].annotated, 0);
		/* UI segments: 0 [0, 0.11 ms], 1 [99.995, 101.01], 2 [201.005 ms,
		 * 2701.02 ms]: the middle of the hang is in 2 */
		CHECK_EQ(h[0].seg, seg(UI, 2));
	}
	free(h);
	/* the bound is inclusive: a gap of exactly the threshold is a hang */
	CHECK_EQ(hangs(UI, 2500 * MS, &h), 1);
	free(h);
	CHECK_EQ(hangs(UI, 2500 * MS + 1, &h), 0);
	free(h);
	CHECK_EQ(hangs(UI, 3000 * MS, &h), 0);
	free(h);
	/* 0 = the default 2 s */
	CHECK_EQ(hangs(UI, 0, &h), 1);
	free(h);
out:
	end();
}

static void TEST_gaps_below_the_threshold_are_not_hangs(void)
{
	struct argus_hang *h;

	gap_scenario(1999000);      /* 1.999 s */
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(hangs(UI, 0, &h), 0);
	free(h);
	CHECK_EQ(hangs(UI, 1000 * MS, &h), 1);
	free(h);
out:
	end();
}

/* `argus mark` (no thread, tid 0) at 1 s, inside a 1 s gap below the
 * threshold: that gap is a hang, annotated with the mark's text. */
static void TEST_mark_inside_a_short_gap_makes_it_an_annotated_hang(void)
{
	struct argus_hang *h;
	uint32_t n;

	gap_scenario_marked(1000000, 1000000, "it froze");
	if (!scenario_build(NULL))
		goto out;
	n = hangs(UI, 0, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, AT(201010));
		CHECK_EQ(h[0].end, AT(1201010));
		CHECK_EQ(h[0].annotated, 1);
		CHECK(h[0].mark && !strcmp(argus_trace__string(trace, h[0].mark) ?: "",
					   "it froze"));
	}
	free(h);
out:
	end();
}

/*
 * UI  back from poll at 100 ms and computes until the end of the trace:
 *     samples every 100 ms up to 2600 ms (the trace's last event).
 */
static void TEST_hang_still_open_at_the_trace_end_is_ongoing(void)
{
	struct argus_hang *h;
	uint32_t n;

	begin();
	ui_tasks();
	ui_poll_return(100000, 0);
	for (int i = 1; i <= 25; i++)
		sample(AT(100000 + 100000 * i), 0, UI, STACK_HOT, 3);
	if (!scenario_build(NULL))
		goto out;
	n = hangs(UI, 0, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, AT(100000));
		CHECK_EQ(h[0].end, AT(2600000));    /* the trace's last event */
		CHECK_EQ(h[0].ongoing, 1);
		CHECK_EQ(h[0].seg, seg(UI, 1));
	}
	free(h);
out:
	end();
}

/*
 * The UI thread leaves its loop at 100 ms and is away until it dies at
 * 2.6 s; the trace goes on to 3 s (HOG).  Killed (SIGKILL: no exit call
 * of its own), that is a hang that ended with the kill, the usual end of a
 * real one: reported, ending at the exit, not ongoing.  Exiting by itself
 * (exit_group) it is the app shutting down, however long that took (ASan's
 * leak check before exit_group takes seconds): no hang.
 */
static void exit_scenario(bool voluntary)
{
	begin();
	ui_tasks();
	ui_poll_return(100000, 0);
	for (int i = 1; i <= 24; i++)
		sample(AT(100000 + 100000 * i), 0, UI, STACK_HOT, 3);
	if (voluntary)
		enter(AT(2599000), 0, UI, SYS_exit_group, 0, 0);
	tg_ok(argus_tracegen__exit(tg, AT(2600000), 0, UI, UI, voluntary ? 0 : 9, 1), "exit",
	      AT(2600000));
	tg_ok(argus_tracegen__sw(tg, AT(2600010), 0, UI, UI, 0x80 /* TASK_DEAD */, -1, 0,
				 AE_OBJ_NONE, 0, 0, 0, 0), "dead", AT(2600010));
	run(AT(3000000), 1, HOG);
	enter(AT(3000010), 1, HOG, SYS_getpid, 0, 0);
}

static void TEST_hang_ended_by_a_kill_is_reported_up_to_the_exit(void)
{
	struct argus_hang *h;
	uint32_t n;

	exit_scenario(false);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(S(seg(UI, 1))->end_reason, ARGUS_END_EXIT);
	n = hangs(UI, 0, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, AT(100000));
		CHECK_EQ(h[0].end, S(seg(UI, 1))->end);    /* the exit, not 3 s */
		CHECK(h[0].end < AT(3000000));
		CHECK_EQ(h[0].ongoing, 0);
	}
	free(h);
out:
	end();
}

static void TEST_leaving_the_loop_to_exit_group_is_no_hang(void)
{
	struct argus_hang *h;

	exit_scenario(true);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(hangs(UI, 0, &h), 0);
	free(h);
out:
	end();
}

/*
 * The same, but a debugger stops the UI thread at 2.4 s (ptrace stop,
 * prev_state TASK_TRACED) and the trace goes on to 3.4 s (lldb-server).
 * The hang in progress ends where the stop began.
 */
static void TEST_ongoing_hang_of_a_stopped_thread_ends_where_the_stop_began(void)
{
	struct argus_hang *h;
	uint32_t n;

	begin();
	ui_tasks();
	ui_poll_return(100000, 0);
	for (int i = 1; i <= 23; i++)
		sample(AT(100000 + 100000 * i), 0, UI, STACK_HOT, 3);
	stop(AT(2400000), 0, UI);
	run(AT(3400000), 3, DBG);
	enter(AT(3400010), 3, DBG, SYS_wait4, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	n = hangs(UI, 0, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, AT(100000));
		CHECK_EQ(h[0].end, AT(2400000));    /* not 3.4 s */
		CHECK_EQ(h[0].ongoing, 1);
	}
	free(h);
out:
	end();
}

/*
 * UI  in poll since 101 ms; at 1 s lldb-server attaches: its SIGSTOP wakes
 *     UI (1000.000 ms), poll returns `ret` (1000.02 ms) and UI sits in a
 *     ptrace stop (1000.03 ms) for 3 s; lldb-server resumes it (4000 ms),
 *     the kernel restarts poll (4000.02 ms), whose timer then expires and
 *     it returns normally (4100 ms); poll again at 4101 ms.
 * With ret = -ERESTARTNOHAND the loop was only interrupted: no hang.  With
 * a real return (ret 1) the same 3 s away from poll would be one.
 */
static void interrupted_poll(int64_t ret)
{
	begin();
	ui_tasks();
	ui_poll_return(100000, 0);
	ui_poll_call(101000);
	run(AT(999990), 3, DBG);
	wake(AT(1000000), 3, DBG, UI);
	run(AT(1000010), 0, UI);
	leave(AT(1000020), 0, UI, SYS_poll, ret, 0x7ffc0000, AE_OBJ_NONE, 0, 0);
	stop(AT(1000030), 0, UI);
	wake(AT(4000000), 3, DBG, UI);
	run(AT(4000010), 0, UI);
	ui_poll_call(4000020);
	ui_poll_return(4100030, 1);
	ui_poll_call(4101000);
}

static void TEST_poll_interrupted_by_erestartnohand_is_not_a_return_from_the_loop(void)
{
	struct argus_hang *h;
	uint32_t n;

	interrupted_poll(-ERESTARTNOHAND);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(hangs(UI, 0, &h), 0);
	free(h);
	end();
	/* control: the same trace with a real return is a 3 s hang */
	interrupted_poll(1);
	if (!scenario_build(NULL))
		goto out;
	n = hangs(UI, 0, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, AT(1000020));
		CHECK_EQ(h[0].end, AT(4000020));
	}
	free(h);
out:
	end();
}

/* ---- classification (§2) ---------------------------------------------- */

/* The UI leaves poll at 100 ms; `body` fills [100 ms, 2600 ms]; poll again
 * at 2600 ms.  The hang is exactly [100 ms, 2600 ms]. */
#define HANG_FROM 100000
#define HANG_TO 2600000

static void classify_begin(void)
{
	begin();
	ui_tasks();
	run(AT(50000), 3, HOG);
	ui_poll_return(HANG_FROM, 0);
}

static void classify_end(void)
{
	ui_poll_call(HANG_TO);
	ui_poll_return(HANG_TO + 100020, 0);
	ui_poll_call(HANG_TO + 101000);
}

static bool classify(struct argus_activity *a, struct argus_diagnosis *d)
{
	struct argus_hang hang;

	if (!scenario_build(NULL))
		return false;
	CHECK_EQ(argus_diag__activity(graph, UI, AT(HANG_FROM), AT(HANG_TO), a), 0);
	if (!diagnose_only_hang(UI, NULL, &hang, d))
		return false;
	CHECK_EQ(hang.start, AT(HANG_FROM));
	CHECK_EQ(hang.end, AT(HANG_TO));
	return true;
}

/* UI computes the whole 2.5 s: 20 samples of one stack, 4 of another. */
static void TEST_on_cpu_for_the_whole_hang_is_busy_with_the_hottest_stack(void)
{
	struct argus_activity a;
	struct argus_diagnosis d;

	classify_begin();
	for (int i = 1; i <= 24; i++)
		sample(AT(HANG_FROM + 100000 * i), 0, UI,
		       i % 6 ? STACK_HOT : STACK_COLD, i % 6 ? 3 : 2);
	classify_end();
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(a.asleep_ns, 0);
	CHECK_EQ(a.waits, 0);
	CHECK_EQ(a.wait_seg, NONE);
	CHECK_EQ(a.samples, 24);
	CHECK_EQ(a.busy_seg, seg(UI, 1));
	/* on CPU [99.995 ms, 2600.01 ms]: all of the window (prorated through
	 * a double: within a few ns) */
	CHECK(a.oncpu_ns + 10 >= 2500 * MS && a.oncpu_ns <= 2500 * MS + 10);
	CHECK_EQ(d.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.chain[0].wait_nr, -1);
	CHECK_EQ(d.hang_seg, seg(UI, 1));
	CHECK_EQ(d.normal_seg, NONE);
	CHECK(stack_is(d.chain[0].stack, STACK_HOT, 3));    /* 20 of 24 */
	CHECK_EQ(d.cycle, 0);
	CHECK_EQ(d.inspected, 1);
out:
	end();
}

/*
 * UI computes, but HOG preempts it every 100 ms: UI on CPU 30 ms, runnable
 * (prev_state 0) 70 ms, 25 times.  It never waits on anyone: busy, with
 * on-CPU 30% of the window, not blocked.
 */
static void TEST_busy_while_mostly_preempted_is_busy_not_blocked(void)
{
	struct argus_activity a;
	struct argus_diagnosis d;

	classify_begin();
	preempt(AT(HANG_FROM + 10), 3, HOG, 0 /* idle */);
	for (int i = 0; i < 25; i++) {
		uint64_t t = HANG_FROM + 100000 * i;

		preempt(AT(t + 30000), 0, UI, HOG);
		preempt(AT(t + 100000), 0, HOG, UI);
	}
	classify_end();
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.asleep_ns, 0);
	CHECK_EQ(a.waits, 0);
	CHECK_EQ(a.wait_seg, NONE);
	/* UI's segment [99.995 ms, 2600.01 ms] is on CPU 25 x 30 ms + 5 µs
	 * before the window + 10 µs after = 750.015 ms of its 2500.015 ms;
	 * prorated to the 2500 ms window: 750.0105 ms, 30% of it */
	CHECK_EQ(S(seg(UI, 1))->oncpu, 750015 * US);
	CHECK(a.oncpu_ns + 2 >= UINT64_C(750010500) && a.oncpu_ns <= UINT64_C(750010502));
	CHECK_EQ(a.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BUSY);
out:
	end();
}

/*
 * UI calls futex(WAIT) at 110 ms and sleeps until HELPER wakes it at
 * 2510 ms (2.4 s of the 2.5 s window), runs at 2510.01 ms.
 */
static void TEST_one_long_wait_is_blocked_on_that_wait(void)
{
	struct argus_activity a;
	struct argus_diagnosis d;

	classify_begin();
	enter(AT(109990), 0, UI, SYS_futex, 0x6000, FUTEX_WAIT_OP);
	block(AT(110000), 0, UI, SYS_futex, 0x6000, AE_OBJ_NONE, 0, 0);
	run(AT(2509990), 1, HELPER);
	enter(AT(2509995), 1, HELPER, SYS_futex, 0x6000, FUTEX_WAKE_OP);
	wake(AT(2510000), 1, HELPER, UI);
	run(AT(2510010), 0, UI);
	leave(AT(2510020), 0, UI, SYS_futex, 0, 0x6000, AE_OBJ_NONE, 0, 0);
	classify_end();
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(a.waits, 1);
	CHECK_EQ(a.short_waits, 0);
	CHECK_EQ(a.wait_seg, seg(UI, 1));
	CHECK_EQ(a.wait_ns, 2400010 * US);          /* 110 ms .. 2510.01 ms */
	CHECK_EQ(a.asleep_ns, 2400010 * US);
	CHECK_EQ(S(seg(UI, 1))->wait_nr, SYS_futex);
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.hang_seg, seg(UI, 1));
out:
	end();
}

/* UI calls sched_yield `n` times (every 90 ms, never sleeping); with
 * long_wait every 30 ms, then it sleeps 1.5 s in a futex. */
static void yield_scenario(int n, bool long_wait)
{
	classify_begin();
	for (int i = 0; i < n; i++) {
		uint64_t t = HANG_FROM + 1000 + (long_wait ? 30000 : 90000) * i;

		enter(AT(t), 0, UI, SYS_sched_yield, 0, 0);
		leave(AT(t + 1), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	}
	if (long_wait) {
		enter(AT(HANG_FROM + 1000000), 0, UI, SYS_futex, 0x6000, FUTEX_WAIT_OP);
		block(AT(HANG_FROM + 1000010), 0, UI, SYS_futex, 0x6000, AE_OBJ_NONE, 0, 0);
		run(AT(HANG_FROM + 2500000 - 20), 1, HELPER);
		wake(AT(HANG_FROM + 2500000 - 10), 1, HELPER, UI);
		run(AT(HANG_FROM + 2500000 - 5), 0, UI);
	}
	classify_end();
}

static void TEST_twenty_sched_yields_and_no_long_wait_are_a_yield_loop(void)
{
	struct argus_activity a;
	struct argus_diagnosis d;

	yield_scenario(20, false);
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.short_waits, 20);
	CHECK_EQ(a.waits, 0);           /* sched_yield never sleeps */
	CHECK_EQ(a.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_YIELD);
	end();
	/* 19 are not enough: on CPU all the time, busy */
	yield_scenario(19, false);
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.short_waits, 19);
	CHECK_EQ(a.kind, ARGUS_KIND_BUSY);
	end();
	/* 25 yields, but one wait covers more than half the window: blocked
	 * (1.5 s, from 1100.01 ms to 2599.995 ms) */
	yield_scenario(25, true);
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.short_waits, 25);
	CHECK_EQ(a.wait_ns, 1499985 * US);
	CHECK_EQ(a.kind, ARGUS_KIND_BLOCKED);
out:
	end();
}

/*
 * UI spins on sched_yield() while HOG wants the CPU too: each yield
 * switches to HOG (prev_state 0, in sched_yield, the yield's stack) and
 * HOG is preempted back to UI 80 ms later.  UI is on a CPU only for its
 * syscalls, so the sampler never caught it: no sample at all.  The
 * culprit's stack is then the yields' (the BPF program gives a yield's
 * switch-out a stack: kernel-patch/argus.bpf.c on_switch), the most
 * frequent of them: 20 of one, 5 of another.
 */
static void TEST_a_yield_loop_never_sampled_gets_its_yields_stack(void)
{
	struct argus_activity a;
	struct argus_diagnosis d;

	classify_begin();
	for (int i = 0; i < 25; i++) {
		uint64_t t = HANG_FROM + 1000 + 90000 * i;
		bool hot = i % 5 != 4;

		enter(AT(t), 0, UI, SYS_sched_yield, 0, 0);
		tg_ok(argus_tracegen__sw_stack(tg, AT(t + 1), 0, UI, pid_of(UI), 0,
					       SYS_sched_yield, 0, AE_OBJ_NONE, 0, 0,
					       HOG, pid_of(HOG), hot ? STACK_HOT : STACK_COLD,
					       hot ? 3 : 2), "yield switch", AT(t + 1));
		tg_ok(argus_tracegen__preempt(tg, AT(t + 80000), 0, HOG, pid_of(HOG),
					      UI, pid_of(UI)), "preempt", AT(t + 80000));
		leave(AT(t + 80001), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	}
	classify_end();
	if (!classify(&a, &d))
		goto out;
	CHECK_EQ(a.samples, 0);
	CHECK_EQ(a.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_YIELD);
	CHECK(stack_is(d.chain[0].stack, STACK_HOT, 3));    /* 20 of 25 */
out:
	end();
}

/* ---- a blocked UI thread: the culprit and its pipe's writer (§3-5) ---- */

#include "scenario_pipe.h"

/*
 * Four normal rounds at 100, 200, 300, 400 ms; in the round at 500 ms the
 * feeder computes 2.5 s before it writes.  The UI is away from poll from
 * 500.01 ms to 3000.6 ms, blocked in its futex from 500.05 to 3000.5 ms.
 *
 * Segments: UI 0 = [0, 0.11 ms]; round k (0..3) A_k = UI 1+2k (poll
 * return .. futex wait), B_k = UI 2+2k (woken by WORKER .. poll); the hang
 * round's A is UI 9, its B UI 10.  WORKER 0 = [1 µs, 3 µs], w_k = WORKER
 * 1+k, the hang round's WORKER 5.  FEEDER 0, f_k = FEEDER 1+k, FEEDER 5.
 */
static void TEST_blocked_ui_blames_the_thread_that_normally_wakes_it_then_the_pipes_writer(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;
	const struct argus_culprit *c;

	pipe_scenario_write(NULL, 0);       /* the worker's reads: no stack */
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	CHECK_EQ(hang.start, AT(500010));
	CHECK_EQ(hang.end, AT(3000600));
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.hang_seg, seg(UI, 9));
	/* A_0..A_3 are the same request (equal event sets); A_3 is closest */
	CHECK_EQ(d.nsimilar, 4);
	CHECK_EQ(d.normal_seg, seg(UI, 7));
	/* path: B_3 <-futex- w_3 <-message- f_3; f_2 ended before A_3 began */
	CHECK_EQ(d.npath, 3);
	CHECK_EQ(d.path[0].seg, seg(UI, 8));
	CHECK_EQ(d.path[0].edge, NONE);
	CHECK_EQ(d.path[1].seg, seg(WORKER, 4));
	CHECK_EQ(edge_type(d.path[1].edge), ARGUS_EDGE_FUTEX);
	CHECK_EQ(d.path[2].seg, seg(FEEDER, 4));
	CHECK_EQ(edge_type(d.path[2].edge), ARGUS_EDGE_MESSAGE);
	CHECK_EQ(d.choices, 0);
	CHECK_EQ(d.nchain, 2);
	/* the culprit: WORKER, in read on the pipe over the UI's wait
	 * [500.05 ms, 3000.5 ms], from 400.41 ms to 3000.2 ms; the segment
	 * where it woke the UI (w_3) is also the one whose wait never ended */
	c = &d.chain[0];
	CHECK_EQ(c->tid, WORKER);
	CHECK_EQ(c->pid, UI);
	CHECK_EQ(c->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(c->seg, seg(WORKER, 4));
	CHECK_EQ(c->normal_seg, seg(WORKER, 4));
	CHECK_EQ(c->from, AT(500050));
	CHECK_EQ(c->to, AT(3000500));
	CHECK_EQ(c->wait_nr, SYS_read);
	CHECK_EQ(c->wait_ns, (3000200 - 500050) * US);
	CHECK_EQ(c->late, 0);
	CHECK_EQ(c->holder, 0);
	CHECK_EQ(c->cycle, 0);
	/* its culprit: who normally writes that pipe (f_3 woke w_3 after the
	 * normal run w_2), busy computing over the worker's wait window
	 * [500.05 ms, 3000.2 ms] */
	c = &d.chain[1];
	CHECK_EQ(c->tid, FEEDER);
	CHECK_EQ(c->pid, FEEDER);
	CHECK_EQ(c->kind, ARGUS_KIND_BUSY);
	CHECK_EQ(c->seg, seg(FEEDER, 5));
	CHECK_EQ(c->normal_seg, seg(FEEDER, 4));
	CHECK_EQ(c->from, AT(500050));
	CHECK_EQ(c->to, AT(3000200));
	CHECK_EQ(c->wait_nr, -1);
	CHECK(stack_is(c->stack, STACK_HOT, 3));
	CHECK_EQ(c->late, 0);
	CHECK_EQ(c->cycle, 0);
	CHECK_EQ(d.cycle, 0);
	CHECK_EQ(d.timeout_ns, 0);
	/* the hang segment, the normal node, the culprit */
	CHECK_EQ(d.inspected, 3);
	/* depth 1: the culprit only, not its culprit */
	{
		struct argus_diag_opts o = { .sz = sizeof(o), .depth = 1 };

		CHECK_EQ(argus_diag__diagnose(graph, &hang, &o, &d), 0);
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].tid, WORKER);
	}
out:
	end();
}

/* ---- case study 1: browser, ime_worker, renderer (§3-5) --------------- */

#define IME 102                 /* "ime_worker", a thread of the browser */
#define RENDERER 200            /* "renderer" */
#define IMED 500                /* "imed": another process */
#define BYSTANDER 600           /* "top" */
#define F_REQ 0x7f0000001000ull
#define F_RESP 0x7f0000002000ull
#define SK_W 0x1001ull          /* unix socket pair IME <-> RENDERER: IME's end */
#define SK_R 0x2001ull          /* ... the renderer's */
#define SK_C 0x3001ull          /* pair RENDERER <-> browser: the renderer's end */
#define SK_D 0x3002ull          /* ... the browser's */
#define TMO_US 2500000ull       /* the UI's timed wait on F_RESP */

static void browser_tasks(void)
{
	task(UI, UI, "browser");
	task(IME, UI, "ime_worker");
	task(RENDERER, RENDERER, "renderer");
	task(DBG, DBG, "lldb-server");
	task(IMED, IMED, "imed");
	task(BYSTANDER, BYSTANDER, "top");
	run(AT(0), 0, UI);
	run(AT(1), 1, IME);
	enter(AT(2), 1, IME, SYS_futex, F_REQ, FUTEX_WAIT_OP);
	block(AT(3), 1, IME, SYS_futex, F_REQ, AE_OBJ_NONE, 0, 0);
	run(AT(4), 2, RENDERER);
	enter(AT(5), 2, RENDERER, SYS_read, 9, 0);
	block(AT(6), 2, RENDERER, SYS_read, 9, AE_OBJ_UNIX, SK_R, SK_W);
	run(AT(7), 3, IMED);
	enter(AT(8), 3, IMED, SYS_epoll_wait, 4, 0);
	block(AT(9), 3, IMED, SYS_epoll_wait, 4, AE_OBJ_NONE, 0, 0);
	ui_poll_call(100);
}

/* UI: poll returns (b+10), asks IME (futex wake, b+25), then waits for
 * the answer with a 2.5 s timeout (arms T_FUTEX, blocks at b+50). */
static void ui_asks(uint64_t b)
{
	ui_poll_return(b + 10, 0);
	enter(AT(b + 20), 0, UI, SYS_futex, F_REQ, FUTEX_WAKE_OP);
	wake(AT(b + 25), 0, UI, IME);
	leave(AT(b + 30), 0, UI, SYS_futex, 1, F_REQ, AE_OBJ_NONE, 0, 0);
	enter(AT(b + 40), 0, UI, SYS_futex, F_RESP, FUTEX_WAIT_OP);
	arm(AT(b + 45), 0, UI, T_FUTEX, AT(b + 45 + TMO_US));
	block(AT(b + 50), 0, UI, SYS_futex, F_RESP, AE_OBJ_NONE, 0, 0);
}

/* IME: woken (b+100), writes the request to the renderer (wakes it,
 * b+125), blocks reading the reply (b+150). */
static void ime_requests(uint64_t b)
{
	run(AT(b + 100), 1, IME);
	leave(AT(b + 110), 1, IME, SYS_futex, 0, F_REQ, AE_OBJ_NONE, 0, 0);
	enter(AT(b + 120), 1, IME, SYS_write, 7, 0);
	wake(AT(b + 125), 1, IME, RENDERER);
	leave(AT(b + 130), 1, IME, SYS_write, 8, 7, AE_OBJ_UNIX, SK_W, SK_R);
	enter(AT(b + 140), 1, IME, SYS_read, 7, 0);
	block(AT(b + 150), 1, IME, SYS_read, 7, AE_OBJ_UNIX, SK_W, SK_R);
}

/* RENDERER: runs (b+200), reads the request; reading makes room on the
 * socket, so the kernel wakes the blocked IME (b+205, task context). */
static void renderer_reads(uint64_t b)
{
	run(AT(b + 200), 2, RENDERER);
	wake(AT(b + 205), 2, RENDERER, IME);
	leave(AT(b + 210), 2, RENDERER, SYS_read, 8, 9, AE_OBJ_UNIX, SK_R, SK_W);
}

/* RENDERER replies at r (wakes IME), blocks for the next request (r+30). */
static void renderer_replies(uint64_t r)
{
	enter(AT(r), 2, RENDERER, SYS_write, 9, 0);
	wake(AT(r + 5), 2, RENDERER, IME);
	leave(AT(r + 10), 2, RENDERER, SYS_write, 8, 9, AE_OBJ_UNIX, SK_R, SK_W);
	enter(AT(r + 20), 2, RENDERER, SYS_read, 9, 0);
	block(AT(r + 30), 2, RENDERER, SYS_read, 9, AE_OBJ_UNIX, SK_R, SK_W);
}

/* IME runs at t, reads the reply, wakes the UI if it still waits (t+25),
 * waits for the next request (t+50). */
static void ime_answers(uint64_t t, bool ui_waits)
{
	run(AT(t), 1, IME);
	leave(AT(t + 10), 1, IME, SYS_read, 8, 7, AE_OBJ_UNIX, SK_W, SK_R);
	enter(AT(t + 20), 1, IME, SYS_futex, F_RESP, FUTEX_WAKE_OP);
	if (ui_waits)
		wake(AT(t + 25), 1, IME, UI);
	leave(AT(t + 30), 1, IME, SYS_futex, ui_waits, F_RESP, AE_OBJ_NONE, 0, 0);
	enter(AT(t + 40), 1, IME, SYS_futex, F_REQ, FUTEX_WAIT_OP);
	block(AT(t + 50), 1, IME, SYS_futex, F_REQ, AE_OBJ_NONE, 0, 0);
}

/* A keystroke that goes well, at b µs. */
static void normal_round(uint64_t b)
{
	ui_asks(b);
	ime_requests(b);
	renderer_reads(b);
	renderer_replies(b + 300);
	ime_answers(b + 400, true);
	run(AT(b + 500), 0, UI);
	disarm(AT(b + 505), 0, UI, T_FUTEX);
	leave(AT(b + 510), 0, UI, SYS_futex, 0, F_RESP, AE_OBJ_NONE, 0, 0);
	ui_poll_call(b + 600);
}

#define HB 500000               /* the hanging keystroke, µs */

/*
 * Four normal rounds (100..400 ms), then the hanging keystroke at HB: the
 * UI asks, IME asks the renderer, the renderer reads the request -- and
 * so wakes IME, which runs 5 µs and sleeps again in the same read (HB+215
 * .. HB+220): the spurious segment.  With ime_syscall, its read returns
 * -EINTR there and it calls read again: a new wait.
 *
 * Segments: UI 0; A_k = UI 1+2k, B_k = UI 2+2k; the hang's A = UI 9.
 * IME 0; w1_k = IME 1+2k (request .. read), w2_k = IME 2+2k (reply ..
 * futex); the hang's w1 = IME 9, the spurious one IME 10.  RENDERER 0,
 * r_k = RENDERER 1+k, the hang's RENDERER 5.
 */
static void hanging_keystroke(bool ime_syscall)
{
	begin();
	browser_tasks();
	for (int k = 0; k < 4; k++)
		normal_round(100000 * (k + 1));
	ui_asks(HB);
	ime_requests(HB);
	renderer_reads(HB);
	run(AT(HB + 215), 1, IME);
	if (ime_syscall) {
		leave(AT(HB + 216), 1, IME, SYS_read, -EINTR, 7, AE_OBJ_UNIX, SK_W, SK_R);
		enter(AT(HB + 218), 1, IME, SYS_read, 7, 0);
	}
	block(AT(HB + 220), 1, IME, SYS_read, 7, AE_OBJ_UNIX, SK_W, SK_R);
}

/* The normal path of every browser test: B_3 <-futex- w2_3 <-message-
 * r_3 <-message- w1_3 <-futex- A_3. */
static void check_browser_path(const struct argus_diagnosis *d)
{
	CHECK_EQ(d->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d->hang_seg, seg(UI, 9));
	CHECK_EQ(d->normal_seg, seg(UI, 7));
	CHECK_EQ(d->npath, 5);
	CHECK_EQ(d->path[0].seg, seg(UI, 8));
	CHECK_EQ(d->path[1].seg, seg(IME, 8));
	CHECK_EQ(edge_type(d->path[1].edge), ARGUS_EDGE_FUTEX);
	CHECK_EQ(d->path[2].seg, seg(RENDERER, 4));
	CHECK_EQ(edge_type(d->path[2].edge), ARGUS_EDGE_MESSAGE);
	CHECK_EQ(d->path[3].seg, seg(IME, 7));
	CHECK_EQ(edge_type(d->path[3].edge), ARGUS_EDGE_MESSAGE);
	CHECK_EQ(d->path[4].seg, seg(UI, 7));
	CHECK_EQ(edge_type(d->path[4].edge), ARGUS_EDGE_FUTEX);
	CHECK_EQ(d->choices, 0);
	CHECK_EQ(d->nchain >= 1, 1);
	CHECK_EQ(d->chain[0].tid, IME);
	CHECK_EQ(d->chain[0].pid, UI);
	CHECK_EQ(d->chain[0].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d->chain[0].normal_seg, seg(IME, 8));
	CHECK_EQ(d->chain[0].wait_nr, SYS_read);
	CHECK_EQ(d->chain[0].late, 0);
	CHECK_EQ(d->chain[0].holder, 0);
}

/*
 * The hanging keystroke, then the renderer computes (a hang in progress:
 * samples every 100 ms up to HB + 2600.2 ms, the end of the trace).  IME's
 * wait in the window is the spurious segment (IME 10), which has no
 * syscall, no normal run and no waker yet; the wait it continues began in
 * IME 9, whose normal runs (w1_3) say the renderer answers it.
 */
static void TEST_spurious_wakeup_segment_continues_the_wait_it_interrupts(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;
	const struct argus_culprit *c;

	hanging_keystroke(false);
	for (int i = 1; i <= 26; i++)
		sample(AT(HB + 200 + 100000 * i), 2, RENDERER, STACK_HOT, 3);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	CHECK_EQ(hang.start, AT(HB + 10));
	CHECK_EQ(hang.end, AT(HB + 2600200));
	CHECK_EQ(hang.ongoing, 1);
	check_browser_path(&d);
	CHECK_EQ(d.chain[0].seg, seg(IME, 10));
	CHECK_EQ(d.chain[0].wait_ns, (2600200 - 220) * US);
	CHECK_EQ(d.nchain, 2);
	/* the renderer, from the normal run of the wait IME 9 began: the
	 * segment that normally answers it is r_3 (not a late waker) */
	c = &d.chain[1];
	CHECK_EQ(c->tid, RENDERER);
	CHECK_EQ(c->pid, RENDERER);
	CHECK_EQ(c->kind, ARGUS_KIND_BUSY);
	CHECK_EQ(c->seg, seg(RENDERER, 5));
	CHECK_EQ(c->normal_seg, seg(RENDERER, 4));
	CHECK_EQ(c->late, 0);
	CHECK_EQ(c->holder, 0);
	CHECK_EQ(c->from, AT(HB + 220));
	CHECK_EQ(c->to, AT(HB + 2600200));
	CHECK(stack_is(c->stack, STACK_HOT, 3));
	CHECK_EQ(d.cycle, 0);
out:
	end();
}

/* The same, but IME's re-woken segment made a syscall (read returned
 * -EINTR, read again): it is a new wait, with no normal run, so the chain
 * stops at IME. */
static void TEST_rewoken_segment_that_made_a_syscall_is_a_new_wait(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;

	hanging_keystroke(true);
	for (int i = 1; i <= 26; i++)
		sample(AT(HB + 200 + 100000 * i), 2, RENDERER, STACK_HOT, 3);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	check_browser_path(&d);
	CHECK_EQ(d.chain[0].seg, seg(IME, 10));
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.cycle, 0);
out:
	end();
}

/* ---- the live holder (§3, step 2) -------------------------------------- */

/*
 * argus_holders_fn mock.  On a live system the lldb plugin answers from
 * /proc/PID/fd (socket:[INODE]); a synthetic trace has no live processes
 * behind it, so this answers "the process holding object `obj` is pid"
 * and records what it was asked.
 */
struct holders_mock {
	uint64_t obj;           /* the inode it knows */
	uint32_t pid;           /* ...and who holds it */
	unsigned calls;
	unsigned kind_asked;
	uint64_t obj_asked;
};

static uint32_t mock_holders(void *ctx, unsigned obj_kind, uint64_t obj,
			     uint32_t *pids, uint32_t max)
{
	struct holders_mock *m = ctx;

	m->calls++;
	m->kind_asked = obj_kind;
	m->obj_asked = obj;
	if (obj != m->obj || !max)
		return 0;
	pids[0] = m->pid;
	return 1;
}

/*
 * The hanging keystroke, then the renderer calls the browser: it writes
 * on its other socket (SK_C, whose other end SK_D the browser holds) and
 * blocks reading the answer (HB+240) -- a wait it never does in normal
 * runs, and nobody has woken it.  With `debugger`, lldb-server's SIGSTOP
 * wakes the renderer at HB+2500 ms: its read returns -ERESTARTSYS and it
 * sits in a ptrace stop (HB+2500.02 ms).  "top" does a syscall at
 * HB+2600 ms: the trace ends at HB+2600.01 ms, the hang is in progress.
 */
static void renderer_calls_browser(bool debugger)
{
	hanging_keystroke(false);
	enter(AT(HB + 230), 2, RENDERER, SYS_write, 11, 0);
	leave(AT(HB + 235), 2, RENDERER, SYS_write, 8, 11, AE_OBJ_UNIX, SK_C, SK_D);
	enter(AT(HB + 238), 2, RENDERER, SYS_read, 11, 0);
	block(AT(HB + 240), 2, RENDERER, SYS_read, 11, AE_OBJ_UNIX, SK_C, SK_D);
	if (debugger) {
		run(AT(HB + 2499990), 3, DBG);
		wake(AT(HB + 2500000), 3, DBG, RENDERER);
		run(AT(HB + 2500010), 2, RENDERER);
		leave(AT(HB + 2500015), 2, RENDERER, SYS_read, -ERESTARTSYS, 11,
		      AE_OBJ_UNIX, SK_C, SK_D);
		stop(AT(HB + 2500020), 2, RENDERER);
	}
	run(AT(HB + 2600000), 3, BYSTANDER);
	enter(AT(HB + 2600010), 3, BYSTANDER, SYS_getpid, 0, 0);
}

/* The chain up to the renderer, common to the holder tests. */
static void check_up_to_renderer(const struct argus_diagnosis *d)
{
	check_browser_path(d);
	CHECK_EQ(d->chain[0].seg, seg(IME, 10));
	CHECK_EQ(d->nchain >= 2, 1);
	CHECK_EQ(d->chain[1].tid, RENDERER);
	CHECK_EQ(d->chain[1].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d->chain[1].seg, seg(RENDERER, 5));
	CHECK_EQ(d->chain[1].normal_seg, seg(RENDERER, 4));
	CHECK_EQ(d->chain[1].wait_nr, SYS_read);
	CHECK_EQ(d->chain[1].late, 0);
	CHECK_EQ(d->chain[1].holder, 0);
}

static void TEST_live_holder_of_the_renderers_socket_is_the_hung_ui_a_cycle(void)
{
	struct holders_mock m = { .obj = SK_D, .pid = UI };
	struct argus_diag_opts o = { .sz = sizeof(o), .holders = mock_holders,
				     .holders_ctx = &m };
	struct argus_hang hang;
	struct argus_diagnosis d;
	const struct argus_culprit *c;

	renderer_calls_browser(false);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, &o, &hang, &d))
		goto out;
	CHECK_EQ(hang.ongoing, 1);
	check_up_to_renderer(&d);
	/* blocked in read from HB+240 to the end, HB+2600.01 ms */
	CHECK_EQ(d.chain[1].wait_ns, (2600010 - 240) * US);
	/* asked once, about the other end of the renderer's socket */
	CHECK_EQ(m.calls, 1);
	CHECK_EQ(m.kind_asked, AE_OBJ_UNIX);
	CHECK_EQ(m.obj_asked, SK_D);
	/* the browser holds it: the thread taken is the hung UI thread */
	CHECK_EQ(d.nchain, 3);
	c = &d.chain[2];
	CHECK_EQ(c->tid, UI);
	CHECK_EQ(c->pid, UI);
	CHECK_EQ(c->holder, 1);
	CHECK_EQ(c->late, 1);
	CHECK_EQ(c->cycle, 1);
	CHECK_EQ(c->normal_seg, NONE);
	CHECK_EQ(c->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(c->seg, seg(UI, 9));
	CHECK_EQ(c->wait_nr, SYS_futex);
	CHECK_EQ(c->from, AT(HB + 240));
	CHECK_EQ(c->to, AT(HB + 2600010));
	CHECK_EQ(d.cycle, 1);
	CHECK_EQ(d.timeout_ns, 0);      /* nothing has timed out yet */
	CHECK_EQ(d.normal_seg, seg(UI, 7));
out:
	end();
}

/* A saved trace (holders NULL): the trace alone cannot say who holds SK_D,
 * so no culprit is named as a holder, and the holder's thread (the hung
 * UI) does not show up through it. */
static void TEST_without_holders_the_same_trace_names_no_holder(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;

	renderer_calls_browser(false);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	check_up_to_renderer(&d);
	for (uint32_t i = 0; i < d.nchain; i++) {
		CHECK_EQ(d.chain[i].holder, 0);
		CHECK(d.chain[i].tid != UI);
	}
out:
	end();
}

/*
 * A loaded machine: in every normal round IME answers before the UI even
 * waits (the UI's futex wait on F_RESP returns -EAGAIN at once), so the
 * UI never blocked on F_RESP before the hang.  In the hang it does, and
 * nobody wakes it: no normal run, no waker, and a futex has no holder.
 * The thread it handed the job to just before (its futex wake of IME) is
 * named, marked `asked`, and the chain goes on from IME's own wait, which
 * does have normal runs (IME always blocks reading the renderer's reply).
 */
static void quick_round(uint64_t b)
{
	ui_poll_return(b + 10, 0);
	enter(AT(b + 20), 0, UI, SYS_futex, F_REQ, FUTEX_WAKE_OP);
	wake(AT(b + 25), 0, UI, IME);
	leave(AT(b + 30), 0, UI, SYS_futex, 1, F_REQ, AE_OBJ_NONE, 0, 0);
	ime_requests(b);
	renderer_reads(b);
	renderer_replies(b + 300);
	ime_answers(b + 400, false);
	enter(AT(b + 500), 0, UI, SYS_futex, F_RESP, FUTEX_WAIT_OP);
	leave(AT(b + 505), 0, UI, SYS_futex, -EAGAIN, F_RESP, AE_OBJ_NONE, 0, 0);
	ui_poll_call(b + 600);
}

static void TEST_no_normal_run_no_waker_blames_the_thread_handed_the_work(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;

	begin();
	browser_tasks();
	for (int k = 0; k < 4; k++)
		quick_round(100000 * (k + 1));
	ui_asks(HB);
	ime_requests(HB);
	run(AT(HB + 2600000), 3, BYSTANDER);
	enter(AT(HB + 2600010), 3, BYSTANDER, SYS_getpid, 0, 0);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	CHECK_EQ(hang.ongoing, 1);
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.normal_seg, ARGUS_NONE);
	CHECK_EQ(d.npath, 0);
	CHECK_EQ(d.nchain >= 2, 1);
	if (d.nchain < 2)
		goto out;
	CHECK_EQ(d.chain[0].tid, IME);
	CHECK_EQ(d.chain[0].asked, 1);
	CHECK_EQ(d.chain[0].holder, 0);
	CHECK_EQ(d.chain[0].cycle, 0);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.chain[0].wait_nr, SYS_read);
	/* from IME's wait, its normal runs: the renderer replies to it */
	CHECK_EQ(d.chain[1].tid, RENDERER);
	CHECK_EQ(d.chain[1].asked, 0);
	CHECK_EQ(d.chain[1].late, 0);
out:
	end();
}

/*
 * Was a bug (fixed in graphlib/diag_similar.c, diag_similar()): the same
 * trace without holders closed a false cycle IME -> renderer -> IME.
 *
 * The renderer's read on SK_C has no exact normal run and no waker, so
 * blame_wait relaxes the match to the wait's kind ("read on a unix
 * socket").  Its key set is {read, write, wait read/unix, message in from
 * the browser, wake-up out to the browser}.  No normal renderer round is
 * similar (they have a message out, not a wake-up out), but the renderer's
 * first segment, RENDERER 0 = [4 µs, 6 µs], which began at the trace's
 * start and so holds only {read, wait read/unix}, is *contained* in it.
 * Its successor was woken by IME, so IME was named the renderer's culprit
 * and, already in the chain, a cycle: "circular wait between ime_worker
 * and renderer", which is false (the renderer waits for the browser's main
 * thread).  A segment cut by the start of the trace has an event set
 * truncated at the front: "contained" says nothing, and it is skipped
 * unless its set is equal.
 */
static void TEST_relaxed_match_skips_the_truncated_first_segment(void)
{
	struct argus_similar sim[8];
	struct argus_hang hang;
	struct argus_diagnosis d;
	uint32_t rh;
	int n;

	renderer_calls_browser(false);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	/* the mechanism: the trace-start segment, contained in the wait, was
	 * the only candidate; it is no candidate now */
	rh = seg(RENDERER, 5);
	CHECK_EQ(S(seg(RENDERER, 0))->start_reason, ARGUS_START_TRACE);
	n = argus_diag__similar(graph, rh, S(rh)->start, argus_graph__stats(graph)->max_ts,
				sim, 8);
	CHECK_EQ(n, 0);
	/* what holds: the chain stops at the renderer, no cycle.  Nor is its
	 * last edge out (the spurious wake-up of IME) taken as the thread it
	 * handed work to: its write to the browser came after, and nobody
	 * has read it, so the trace cannot name whom it waits for */
	CHECK_EQ(d.nchain, 2);
	CHECK_EQ(d.cycle, 0);
out:
	end();
}

/* The holder is another process (imed, blocked in epoll_wait since the
 * start): its main thread is named, and it closes no cycle. */
static void TEST_holder_in_another_process_is_its_main_thread(void)
{
	struct holders_mock m = { .obj = SK_D, .pid = IMED };
	struct argus_diag_opts o = { .sz = sizeof(o), .holders = mock_holders,
				     .holders_ctx = &m };
	struct argus_hang hang;
	struct argus_diagnosis d;

	renderer_calls_browser(false);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, &o, &hang, &d))
		goto out;
	check_up_to_renderer(&d);
	CHECK_EQ(m.calls, 1);
	CHECK_EQ(d.nchain, 3);
	CHECK_EQ(d.chain[2].tid, IMED);
	CHECK_EQ(d.chain[2].pid, IMED);
	CHECK_EQ(d.chain[2].holder, 1);
	CHECK_EQ(d.chain[2].cycle, 0);
	CHECK_EQ(d.chain[2].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.chain[2].wait_nr, SYS_epoll_wait);
	CHECK_EQ(d.cycle, 0);
out:
	end();
}

/*
 * The renderer's wait is broken by the debugger: lldb-server's wake-up,
 * then a ptrace stop that lasts to the end of the trace.  As far as the
 * app is concerned nobody answered the renderer: its wait goes on through
 * the stop, and the holder is asked.  lldb-server is a debugger (a tool
 * thread): its wake-up is never an edge, with or without the user's
 * schema filter that used to be needed for it.
 */
static void TEST_wait_broken_by_the_debugger_still_asks_the_holder(void)
{
	static const char text[] = "filter waker process=lldb-server\n";
	struct holders_mock m = { .obj = SK_D, .pid = UI };
	struct argus_diag_opts o = { .sz = sizeof(o), .holders = mock_holders,
				     .holders_ctx = &m };
	struct argus_error err = { 0 };
	struct argus_schema *sc = argus_schema__parse(text, strlen(text), "test", &err);
	struct argus_graph_opts go = { .sz = sizeof(go), .schema = sc };
	struct argus_hang hang;
	struct argus_diagnosis d;

	CHECK(sc != NULL);
	for (int with_filter = 1; with_filter >= 0; with_filter--) {
		m.calls = 0;
		renderer_calls_browser(true);
		if (!sc || !scenario_build(with_filter ? &go : NULL) ||
		    !diagnose_only_hang(UI, &o, &hang, &d))
			goto out;
		/* the renderer: 5 = its wait in read, 6 = woken by the
		 * debugger, ended in the stop */
		CHECK_EQ(S(seg(RENDERER, 6))->woken_by, ARGUS_WOKEN_DEBUGGER);
		CHECK(S(seg(RENDERER, 6))->flags & ARGUS_SEG_F_TRACED);
		check_up_to_renderer(&d);
		/* its read covers HB+240 .. the end of the trace (HB+2600.01
		 * ms): the stop is inside the wait, not its end */
		CHECK_EQ(d.chain[1].wait_ns, (2600010 - 240) * US);
		CHECK_EQ(m.calls, 1);
		CHECK_EQ(m.obj_asked, SK_D);
		CHECK_EQ(d.nchain, 3);
		CHECK_EQ(d.chain[2].tid, UI);
		CHECK_EQ(d.chain[2].holder, 1);
		CHECK_EQ(d.chain[2].cycle, 1);
		CHECK_EQ(d.chain[2].from, AT(HB + 240));
		CHECK_EQ(d.cycle, 1);
		for (uint32_t i = 0; i < d.nchain; i++)
			CHECK(d.chain[i].tid != DBG);
		end();
	}
	argus_schema__free(sc);
	return;
out:
	end();
	argus_schema__free(sc);
}

/* ---- the cycle broken by a timeout (§5, case study 1) ------------------ */

/*
 * The renderer calls the browser, as above; the UI's timed wait expires
 * at E = HB+50+2500 ms (its own T_FUTEX, in hardirq on the idle CPU 0):
 *   UI        runs (E+5), futex -ETIMEDOUT, poll finds the renderer's
 *             call (E+20, E+30), reads it on SK_D (E+50), answers (wakes
 *             the renderer E+65), back to poll (E+80)
 *   RENDERER  runs (E+100), reads the answer, replies to IME (E+120)
 *   IME       runs (E+200), reads the late reply; the UI no longer waits
 * The hang is HB+10 .. E+20.  The chain goes IME, renderer, and back to
 * the UI, which finally woke the renderer (late): a cycle, broken by the
 * UI's own 2.5 s timeout.
 */
static void TEST_ui_wait_ended_by_its_own_timer_is_the_timeout_that_broke_the_cycle(void)
{
	const uint64_t e = HB + 50 + TMO_US;
	struct argus_hang hang;
	struct argus_diagnosis d;
	const struct argus_culprit *c;

	hanging_keystroke(false);
	enter(AT(HB + 230), 2, RENDERER, SYS_write, 11, 0);
	leave(AT(HB + 235), 2, RENDERER, SYS_write, 8, 11, AE_OBJ_UNIX, SK_C, SK_D);
	enter(AT(HB + 238), 2, RENDERER, SYS_read, 11, 0);
	block(AT(HB + 240), 2, RENDERER, SYS_read, 11, AE_OBJ_UNIX, SK_C, SK_D);
	expire(AT(e), 0, T_FUTEX, UI);
	run(AT(e + 5), 0, UI);
	leave(AT(e + 10), 0, UI, SYS_futex, -ETIMEDOUT, F_RESP, AE_OBJ_NONE, 0, 0);
	enter(AT(e + 20), 0, UI, SYS_poll, 0x7ffc0000, 1);
	leave(AT(e + 30), 0, UI, SYS_poll, 1, 0x7ffc0000, AE_OBJ_NONE, 0, 0);
	enter(AT(e + 40), 0, UI, SYS_read, 12, 0);
	leave(AT(e + 50), 0, UI, SYS_read, 8, 12, AE_OBJ_UNIX, SK_D, SK_C);
	enter(AT(e + 60), 0, UI, SYS_write, 12, 0);
	wake(AT(e + 65), 0, UI, RENDERER);
	leave(AT(e + 70), 0, UI, SYS_write, 8, 12, AE_OBJ_UNIX, SK_D, SK_C);
	ui_poll_call(e + 80);
	run(AT(e + 100), 2, RENDERER);
	leave(AT(e + 110), 2, RENDERER, SYS_read, 8, 11, AE_OBJ_UNIX, SK_C, SK_D);
	renderer_replies(e + 120);
	ime_answers(e + 200, false);
	if (!scenario_build(NULL) || !diagnose_only_hang(UI, NULL, &hang, &d))
		goto out;
	CHECK_EQ(hang.start, AT(HB + 10));
	CHECK_EQ(hang.end, AT(e + 20));
	CHECK_EQ(hang.ongoing, 0);
	check_browser_path(&d);
	/* the UI's wait: HB+50 .. E+5, ended by the timer it armed itself */
	CHECK_EQ(d.timeout_ns, (TMO_US + 5) * US);
	CHECK_EQ(d.timeout_tid, UI);
	CHECK_EQ(d.timeout_ns, S(seg(UI, 9))->wait_ns);
	/* IME: the spurious segment's read, HB+220 .. E+5 (the window's end) */
	CHECK_EQ(d.chain[0].seg, seg(IME, 10));
	CHECK_EQ(d.chain[0].from, AT(HB + 50));
	CHECK_EQ(d.chain[0].to, AT(e + 5));
	CHECK_EQ(d.chain[0].wait_ns, (TMO_US + 5 - 170) * US);
	CHECK_EQ(d.nchain, 3);
	c = &d.chain[1];
	CHECK_EQ(c->tid, RENDERER);
	CHECK_EQ(c->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(c->seg, seg(RENDERER, 5));
	CHECK_EQ(c->normal_seg, seg(RENDERER, 4));
	CHECK_EQ(c->late, 0);
	CHECK_EQ(c->from, AT(HB + 220));
	CHECK_EQ(c->to, AT(e + 5));
	CHECK_EQ(c->wait_ns, (TMO_US + 5 - 190) * US);
	CHECK_EQ(c->cycle, 0);
	/* the renderer's read on SK_C has no normal run; the UI's segment
	 * after its timeout (UI 10) answered it, late: back to the UI */
	c = &d.chain[2];
	CHECK_EQ(c->tid, UI);
	CHECK_EQ(c->late, 1);
	CHECK_EQ(c->holder, 0);
	CHECK_EQ(c->normal_seg, seg(UI, 10));
	CHECK_EQ(c->cycle, 1);
	CHECK_EQ(c->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(c->wait_nr, SYS_futex);
	CHECK_EQ(c->from, AT(HB + 240));
	CHECK_EQ(c->to, AT(e + 5));
	CHECK_EQ(d.cycle, 1);
	CHECK_EQ(d.inspected, 3);
out:
	end();
}

/* `--until-end` with the waiter held stopped by lldb (python3 reading the
 * pipe a late child fills): its read never returns, so the trace has no
 * wake-up, but the host saw the child's write (ended_by).  The writer is
 * the culprit, rule waker, and its own wait (for its sleep) is followed;
 * without ended_by nobody is (the write is unread, no normal run).  Also
 * when the writer then waits longer than it waited before the write (the
 * debugger kept the waiter stopped for long; real_dbus: dbus-daemon back
 * in its event loop), that later wait is not followed. */
static void TEST_wait_ended_while_the_waiter_is_stopped_blames_who_ended_it(void)
{
	enum { PY = 500, SH = 501, SLEEP = 502 };
	const uint64_t PIPE_X = 0x7777;

	for (int run_ = 0; run_ < 3; run_++) {
		int with = run_ > 0;
		/* the trace's end: 0.5 s after the write, or 6 s */
		uint64_t last = run_ < 2 ? AT(3500000) : AT(9000000);
		struct argus_diag_opts o = { .sz = sizeof(o) };
		struct argus_hang hang = { .tid = PY, .pid = PY, .ongoing = 1 };
		struct argus_diagnosis d;

		begin();
		task(PY, PY, "python3");
		task(SH, SH, "sh");
		task(SLEEP, SLEEP, "sleep");
		run(AT(0), 0, PY);
		run(AT(1), 1, SH);
		run(AT(2), 2, SLEEP);
		enter(AT(100), 0, PY, SYS_read, 3, 0);
		block(AT(110), 0, PY, SYS_read, 3, AE_OBJ_PIPE, PIPE_X, 0);
		enter(AT(120), 1, SH, SYS_wait4, SLEEP, 0);
		block(AT(130), 1, SH, SYS_wait4, SLEEP, 0, 0, 0);
		enter(AT(140), 2, SLEEP, SYS_clock_nanosleep, 0, 0);
		block(AT(150), 2, SLEEP, SYS_clock_nanosleep, 3000000000ull, 0, 0, 0);
		run(AT(3000000), 2, SLEEP);
		tg_ok(argus_tracegen__exit(tg, AT(3000010), 2, SLEEP, SLEEP, 0, 1), "exit", AT(3000010));
		wake(AT(3000015), 2, SLEEP, SH);
		tg_ok(argus_tracegen__sw(tg, AT(3000020), 2, SLEEP, SLEEP, ARGUS_TG_DEAD, -1, 0,
					 AE_OBJ_NONE, 0, 0, 0, 0), "dead", AT(3000020));
		run(AT(3000030), 1, SH);
		leave(AT(3000035), 1, SH, SYS_wait4, SLEEP, SLEEP, AE_OBJ_NONE, 0, 0);
		enter(AT(3000040), 1, SH, SYS_write, 4, 0);
		leave(AT(3000050), 1, SH, SYS_write, 2, 4, AE_OBJ_PIPE, PIPE_X, 0);
		block(AT(3000060), 1, SH, SYS_wait4, 0, 0, 0, 0);
		run(last, 3, 0);
		if (!scenario_build(NULL))
			goto out;
		hang.start = AT(110);
		hang.end = last;
		hang.seg = argus_graph__segment_at(graph, PY, AT(110));
		if (with) {
			o.ended_by_tid = SH;
			o.ended_by_ns = AT(3000050);
		}
		CHECK_EQ(argus_diag__diagnose(graph, &hang, &o, &d), 0);
		if (!with) {
			CHECK_EQ(d.nchain, 0);
		} else {
			CHECK(d.nchain >= 2);
			if (d.nchain >= 2) {
				CHECK_EQ(d.chain[0].tid, SH);
				CHECK_EQ(d.chain[0].rule, ARGUS_RULE_WAKER);
				CHECK_EQ(d.chain[1].tid, SLEEP);
			}
		}
		end();
	}
	return;
out:
	end();
}

int main(void)
{
	RUN(TEST_hang_of_2500ms_is_found_at_2000ms_and_2500ms_not_at_3000ms);
	RUN(TEST_gaps_below_the_threshold_are_not_hangs);
	RUN(TEST_mark_inside_a_short_gap_makes_it_an_annotated_hang);
	RUN(TEST_hang_still_open_at_the_trace_end_is_ongoing);
	RUN(TEST_hang_ended_by_a_kill_is_reported_up_to_the_exit);
	RUN(TEST_leaving_the_loop_to_exit_group_is_no_hang);
	RUN(TEST_ongoing_hang_of_a_stopped_thread_ends_where_the_stop_began);
	RUN(TEST_poll_interrupted_by_erestartnohand_is_not_a_return_from_the_loop);
	RUN(TEST_on_cpu_for_the_whole_hang_is_busy_with_the_hottest_stack);
	RUN(TEST_busy_while_mostly_preempted_is_busy_not_blocked);
	RUN(TEST_one_long_wait_is_blocked_on_that_wait);
	RUN(TEST_twenty_sched_yields_and_no_long_wait_are_a_yield_loop);
	RUN(TEST_a_yield_loop_never_sampled_gets_its_yields_stack);
	RUN(TEST_blocked_ui_blames_the_thread_that_normally_wakes_it_then_the_pipes_writer);
	RUN(TEST_spurious_wakeup_segment_continues_the_wait_it_interrupts);
	RUN(TEST_rewoken_segment_that_made_a_syscall_is_a_new_wait);
	RUN(TEST_live_holder_of_the_renderers_socket_is_the_hung_ui_a_cycle);
	RUN(TEST_without_holders_the_same_trace_names_no_holder);
	RUN(TEST_holder_in_another_process_is_its_main_thread);
	RUN(TEST_wait_broken_by_the_debugger_still_asks_the_holder);
	RUN(TEST_ui_wait_ended_by_its_own_timer_is_the_timeout_that_broke_the_cycle);
	RUN(TEST_relaxed_match_skips_the_truncated_first_segment);
	RUN(TEST_no_normal_run_no_waker_blames_the_thread_handed_the_work);
	RUN(TEST_wait_ended_while_the_waiter_is_stopped_blames_who_ended_it);
	return check_report();
}
