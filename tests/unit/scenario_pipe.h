/* scenario_pipe.h - the pipe scenario that test_diagnosis.c and
 * test_diag_query.c both diagnose: the UI (app UI) waits on a futex that
 * its worker (WORKER, a thread of the UI's process) wakes after reading a
 * pipe that the feeder (FEEDER, another process) writes.  Four normal
 * rounds at 100..400 ms, then one at 500 ms whose feeder computes 2.5 s
 * before it writes: the UI is away from poll 500.01 ms .. 3000.6 ms, one
 * hang, not ongoing.
 *
 * The two tests differ only in the stack the worker's read blocks with:
 * test_diag_query.c gives one (its host symbolizer names it),
 * test_diagnosis.c none.
 *
 * Include after scenario.h and the including test's own scenario events:
 * begin(), task(), arm(), expire(), sample(), STACK_HOT, the UI thread's
 * UI and T_POLL, and its poll loop ui_poll_return(at, ret) and
 * ui_poll_call(at).  Times in µs after T0 (AT()). */
#ifndef ARGUS_TEST_SCENARIO_PIPE_H
#define ARGUS_TEST_SCENARIO_PIPE_H

#define WORKER 102              /* "app-worker", a thread of the UI's process */
#define FEEDER 201              /* "feeder": another process */
#define F_DONE 0x7f0000003000ull
#define PIPE_INO 0x80283ull
#define T_FEED 0xffff888000030000ull

/* The user stack WORKER's blocking reads carry (NULL: none), set by
 * pipe_scenario. */
static const uint64_t *pipe_worker_ips;
static uint32_t pipe_worker_nips;

/* WORKER blocks reading the pipe (fd 3), with pipe_worker_ips if any. */
static void pipe_worker_blocks(uint64_t ts)
{
	if (!pipe_worker_ips) {
		block(ts, 1, WORKER, SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0);
		return;
	}
	tg_ok(argus_tracegen__sw_stack(tg, ts, 1, WORKER, pid_of(WORKER), ARGUS_TG_INTERRUPTIBLE,
				       SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0, 0, 0,
				       pipe_worker_ips, pipe_worker_nips), "sw_stack", ts);
}

/*
 * One round at b µs (the feeder computes `busy` µs before it writes):
 *   UI      poll returns (b+10); futex(F_DONE, WAIT) blocks (b+50)
 *   FEEDER  its nanosleep timer wakes it (b+80, runs b+85), [computes
 *           `busy` (samples with STACK_HOT every 100 ms), f = b + busy],
 *           writes 8 bytes to the pipe and wakes WORKER (f+95, f+100),
 *           nanosleeps (f+120)
 *   WORKER  runs (f+200), its read returns the 8 bytes (f+210),
 *           futex(F_DONE, WAKE) wakes UI (f+310), reads the pipe again and
 *           blocks (f+410)
 *   UI      runs (f+500), back to poll (f+600)
 */
static void pipe_round(uint64_t b, uint64_t busy)
{
	uint64_t f = b + busy;

	ui_poll_return(b + 10, 0);
	enter(AT(b + 40), 0, UI, SYS_futex, F_DONE, FUTEX_WAIT_OP);
	block(AT(b + 50), 0, UI, SYS_futex, F_DONE, AE_OBJ_NONE, 0, 0);
	expire(AT(b + 80), 2, T_FEED, FEEDER);
	run(AT(b + 85), 2, FEEDER);
	leave(AT(b + 88), 2, FEEDER, SYS_nanosleep, 0, 0, AE_OBJ_NONE, 0, 0);
	for (uint64_t t = 100000; t < busy; t += 100000)
		sample(AT(b + 85 + t), 2, FEEDER, STACK_HOT, 3);
	enter(AT(f + 90), 2, FEEDER, SYS_write, 4, 0);
	wake(AT(f + 95), 2, FEEDER, WORKER);
	leave(AT(f + 100), 2, FEEDER, SYS_write, 8, 4, AE_OBJ_PIPE, PIPE_INO, 0);
	enter(AT(f + 110), 2, FEEDER, SYS_nanosleep, 0, 0);
	arm(AT(f + 115), 2, FEEDER, T_FEED, AT(f + 100080));
	block(AT(f + 120), 2, FEEDER, SYS_nanosleep, 100 * MS, AE_OBJ_NONE, 0, 0);
	run(AT(f + 200), 1, WORKER);
	leave(AT(f + 210), 1, WORKER, SYS_read, 8, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	enter(AT(f + 300), 1, WORKER, SYS_futex, F_DONE, FUTEX_WAKE_OP);
	wake(AT(f + 310), 1, WORKER, UI);
	leave(AT(f + 320), 1, WORKER, SYS_futex, 1, F_DONE, AE_OBJ_NONE, 0, 0);
	enter(AT(f + 400), 1, WORKER, SYS_read, 3, 0);
	pipe_worker_blocks(AT(f + 410));
	run(AT(f + 500), 0, UI);
	leave(AT(f + 510), 0, UI, SYS_futex, 0, F_DONE, AE_OBJ_NONE, 0, 0);
	ui_poll_call(f + 600);
}

/*
 * Write the whole scenario into a new generator (begin()), WORKER's reads
 * blocking with the user stack ips[0..n) (ips NULL: none).  Four normal
 * rounds at 100, 200, 300, 400 ms; in the round at 500 ms the feeder
 * computes 2.5 s before it writes.  The UI is away from poll from
 * 500.01 ms to 3000.6 ms, blocked in its futex from 500.05 to 3000.5 ms.
 * The generator is left open: the test closes it (scenario_reopen or
 * scenario_build).
 */
static void pipe_scenario_write(const uint64_t *ips, uint32_t n)
{
	pipe_worker_ips = ips;
	pipe_worker_nips = n;
	begin();
	task(UI, UI, "app");
	task(WORKER, UI, "app-worker");
	task(FEEDER, FEEDER, "feeder");
	run(AT(0), 0, UI);
	run(AT(1), 1, WORKER);
	enter(AT(2), 1, WORKER, SYS_read, 3, 0);
	pipe_worker_blocks(AT(3));
	run(AT(4), 2, FEEDER);
	enter(AT(5), 2, FEEDER, SYS_nanosleep, 0, 0);
	arm(AT(6), 2, FEEDER, T_FEED, AT(100080));
	block(AT(7), 2, FEEDER, SYS_nanosleep, 100 * MS, AE_OBJ_NONE, 0, 0);
	ui_poll_call(100);
	for (int k = 0; k < 4; k++)
		pipe_round(100000 * (k + 1), 0);
	pipe_round(500000, 2500000);
}
#endif
