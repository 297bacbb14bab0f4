/* test_diag_flag.c - the data-flag flow of the diagnosis (graphlib/
 * diag_flag.c, docs/diagnosis.md §2a) on small synthetic traces, shaped
 * like case_flag_spin: UI (100) clears a flag, sends a request to SERVER
 * (another process) and spins on sched_yield until WORKER (a thread of
 * the UI's process) sets the flag, which it does when SERVER's reply
 * comes.  One normal round, then the hang round, where:
 *   - REPLY_DROPPED: SERVER reads the request and never replies;
 *   - WORKER_BUSY: SERVER replies, but WORKER computes instead of reading;
 *   - NO_WATCH: as REPLY_DROPPED, with no hwwatch events at all;
 *   - WATCHED_LATE: the watch was armed during the hang (argus flag
 *     --watch), so the only write in the trace is the one that ended it:
 *     SERVER replies late, WORKER sets the flag, UI leaves its spin. */
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
#include "scenario.h"

#define UI 100
#define WORKER 102
#define SERVER 201
#define FLAG 0x55d0c0a04010ull
#define HANG_FROM 100000        /* us */
#define HANG_TO 2600000

enum mode { REPLY_DROPPED, WORKER_BUSY, NO_WATCH, WATCHED_LATE };

static bool watch_armed;        /* WATCHED_LATE: from the late reply on */

static enum mode mode;

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_diag_flag", &o);
}

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

static void hw_write(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t value)
{
	struct argus_event ev = { .ts = ts, .tid = tid, .pid = pid_of(tid), .type = AE_HWWATCH,
				  .cpu = cpu };

	if (mode == NO_WATCH || (mode == WATCHED_LATE && !watch_armed))
		return;
	ev.f[ARGUS_F_HW_ADDR] = FLAG;
	ev.f[ARGUS_F_HW_VALUE] = value;
	ev.f[ARGUS_F_HW_LEN] = 4;
	ev.f[ARGUS_F_HW_ID] = 1;
	ev.f[ARGUS_F_HW_VALUE_OK] = 1;
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, NULL, 0), "hwwatch", ts);
}

/* UI's request (unix 0x10 <-> 0x11) and SERVER's reply to WORKER (0x12 <-> 0x13) */
static void send_req(uint64_t us)
{
	leave(AT(us), 0, UI, SYS_write, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	wake(AT(us + 1), 0, UI, SERVER);
	run(AT(us + 5), 2, SERVER);
	leave(AT(us + 6), 2, SERVER, SYS_read, 12, 4, AE_OBJ_UNIX, 0x11, 0x10);
}

static void reply(uint64_t us)
{
	leave(AT(us), 2, SERVER, SYS_write, 12, 4, AE_OBJ_UNIX, 0x12, 0x13);
	wake(AT(us + 1), 2, SERVER, WORKER);
	run(AT(us + 2), 1, WORKER);
	leave(AT(us + 3), 1, WORKER, SYS_read, 12, 5, AE_OBJ_UNIX, 0x13, 0x12);
	hw_write(AT(us + 4), 1, WORKER, 1);
	enter(AT(us + 5), 1, WORKER, SYS_read, 5, 0);
	block(AT(us + 6), 1, WORKER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
}

static void server_waits(uint64_t us)
{
	enter(AT(us), 2, SERVER, SYS_read, 4, 0);
	block(AT(us + 1), 2, SERVER, SYS_read, 4, AE_OBJ_UNIX, 0x11, 0x10);
}

static void ui_polls(uint64_t us)
{
	enter(AT(us), 0, UI, SYS_poll, 0, 1);
	block(AT(us + 1), 0, UI, SYS_poll, ~0ull, AE_OBJ_PIPE, 0x99, 0);
}

static void scenario(enum mode m)
{
	mode = m;
	watch_armed = false;
	begin();
	task(UI, 100, "sysprefs");
	task(WORKER, 100, "display_client");
	task(SERVER, 200, "display_server");
	run(AT(0), 0, UI);
	run(AT(1), 1, WORKER);
	run(AT(2), 2, SERVER);
	enter(AT(3), 1, WORKER, SYS_read, 5, 0);
	block(AT(4), 1, WORKER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
	server_waits(5);
	/* the normal round: UI clears, asks, spins; the reply sets the flag */
	hw_write(AT(10), 0, UI, 0);
	send_req(20);
	leave(AT(27), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	reply(30);
	leave(AT(38), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	server_waits(40);
	ui_polls(50);
	/* the hang round */
	wake(AT(HANG_FROM), 3, 0, UI);
	run(AT(HANG_FROM), 0, UI);
	hw_write(AT(HANG_FROM + 10), 0, UI, 0);
	send_req(HANG_FROM + 20);
	if (m == WORKER_BUSY) {
		/* the reply comes, the worker is busy elsewhere and never reads it */
		leave(AT(HANG_FROM + 30), 2, SERVER, SYS_write, 12, 4, AE_OBJ_UNIX, 0x12, 0x13);
		wake(AT(HANG_FROM + 31), 2, SERVER, WORKER);
		run(AT(HANG_FROM + 32), 1, WORKER);
	}
	server_waits(HANG_FROM + 40);
	for (uint64_t us = HANG_FROM + 1000; us < HANG_TO; us += 10000) {
		leave(AT(us), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
		if (m == WORKER_BUSY)
			tg_ok(argus_tracegen__sample(tg, AT(us + 5), 1, WORKER, 100,
						     (const uint64_t[]){ 0x401234, 0x400f00 }, 2),
			      "sample", AT(us + 5));
	}
	if (m == WATCHED_LATE) {
		/* the reply comes at last; the spin's next turn sees the flag */
		watch_armed = true;
		reply(HANG_TO - 8);
		leave(AT(HANG_TO - 1), 0, UI, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	}
	ui_polls(HANG_TO);
}

static bool diagnose(struct argus_diagnosis *d)
{
	struct argus_hang h = { .tid = UI, .pid = 100, .start = AT(HANG_FROM), .end = AT(HANG_TO) };

	if (!scenario_build(NULL))
		return false;
	h.seg = argus_graph__segment_at(graph, UI, AT((HANG_FROM + HANG_TO) / 2));
	CHECK_EQ(argus_diag__diagnose(graph, &h, NULL, d), 0);
	return true;
}

static void TEST_spin_follows_the_flag_to_the_writer_then_to_the_server_that_wakes_it(void)
{
	struct argus_diagnosis d;

	scenario(REPLY_DROPPED);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.flag_writer, WORKER);
	CHECK_EQ(d.flag_late, 0);       /* a normal run's write */
	CHECK_EQ(d.flag_addr, FLAG);
	CHECK_EQ(d.flag_hint, 0);
	CHECK_EQ(d.nchain, 1);          /* stops before the UI: no false cycle */
	CHECK_EQ(d.chain[0].tid, SERVER);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_DATAFLAG);
	CHECK_EQ(d.chain[0].wait_nr, SYS_read);
	CHECK_EQ(d.cycle, 0);
	CHECK_EQ(d.npath, 3);
	CHECK_EQ(tid_of(d.path[0].seg), UI);
	CHECK_EQ(tid_of(d.path[1].seg), WORKER);
	CHECK_EQ(edge_type(d.path[1].edge), ARGUS_EDGE_DATAFLAG);
	CHECK_EQ(tid_of(d.path[2].seg), SERVER);
	CHECK(edge_type(d.path[2].edge) == ARGUS_EDGE_MESSAGE ||
	      edge_type(d.path[2].edge) == ARGUS_EDGE_WAKEUP);
	CHECK(S(d.path[0].seg)->end < AT(HANG_FROM));
	CHECK_EQ(d.path[0].seg, seg(UI, 0));    /* the normal round's segment */
	CHECK_EQ(strcmp(argus_culprit_rule_str(ARGUS_RULE_DATAFLAG), "dataflag"), 0);
out:
	scenario_end();
}

static void TEST_writer_busy_instead_of_writing_is_the_culprit(void)
{
	struct argus_diagnosis d;

	scenario(WORKER_BUSY);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.flag_writer, WORKER);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, WORKER);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_DATAFLAG);
	CHECK_EQ(d.npath, 2);
out:
	scenario_end();
}

static void TEST_no_flag_writes_names_the_spinner_and_asks_for_a_watch(void)
{
	struct argus_diagnosis d;

	scenario(NO_WATCH);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.flag_writer, 0);
	CHECK_EQ(d.flag_hint, 1);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_SELF);
out:
	scenario_end();
}

/* No normal run's write to compare with: the write that ended the hang
 * is followed (its writer wrote late), then whoever woke the writer late. */
static void TEST_spin_ended_by_the_only_watched_write_follows_that_write(void)
{
	struct argus_diagnosis d;

	scenario(WATCHED_LATE);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_YIELD);
	CHECK_EQ(d.flag_writer, WORKER);
	CHECK_EQ(d.flag_hint, 0);
	CHECK_EQ(d.flag_late, 1);
	CHECK(d.nchain >= 1);
	CHECK_EQ(d.chain[0].tid, SERVER);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_DATAFLAG);
	CHECK(d.npath >= 2);
	CHECK_EQ(tid_of(d.path[1].seg), WORKER);
	CHECK_EQ(edge_type(d.path[1].edge), ARGUS_EDGE_DATAFLAG);
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_spin_follows_the_flag_to_the_writer_then_to_the_server_that_wakes_it);
	RUN(TEST_writer_busy_instead_of_writing_is_the_culprit);
	RUN(TEST_no_flag_writes_names_the_spinner_and_asks_for_a_watch);
	RUN(TEST_spin_ended_by_the_only_watched_write_follows_that_write);
	return check_report();
}
