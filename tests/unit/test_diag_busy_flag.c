/* test_diag_busy_flag.c - a `busy` hang that a watched flag's write ended
 * is followed to the writer (graphlib/diag_flag.c, docs/diagnosis.md
 * §2a), and a busy hang that is real CPU work stays its own culprit.
 *
 * The shape of tests/apps/busy_spin_reply.c: UI (100) sends a request to
 * SERVER (another process) and spins with `pause` -- no syscall -- on a
 * heap counter that READER (102, a thread of the UI's process) bumps when
 * SERVER's reply comes; the writes name UI as their reader (`argus watch
 * --reader`).  One normal round, then the hang round, where:
 *   - LATE_REPLY: SERVER sleeps 2.5 s before it replies; the write comes
 *     at the end of the hang, and UI goes back to its poll at once;
 *   - WORK_AFTER: SERVER replies at once, UI leaves the spin and then
 *     computes for 2.5 s before its poll (a real busy hang, whose flag
 *     edge is at its start);
 *   - NO_READER: LATE_REPLY with writes that name no reader (a watch
 *     armed without --reader): no edge, the UI is its own culprit. */
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
#define READER 102
#define SERVER 201
#define FLAG 0x55d0c0a04010ull
#define HANG_FROM 100000        /* us */
#define HANG_TO 2600000

enum mode { LATE_REPLY, WORK_AFTER, NO_READER };

static enum mode mode;
static uint64_t count;          /* the counter's value */

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_diag_busy_flag", &o);
}

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

static void hw_write(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	struct argus_event ev = { .ts = ts, .tid = tid, .pid = pid_of(tid), .type = AE_HWWATCH,
				  .cpu = cpu };

	ev.f[ARGUS_F_HW_ADDR] = FLAG;
	ev.f[ARGUS_F_HW_VALUE] = ++count;
	ev.f[ARGUS_F_HW_LEN] = 4;
	ev.f[ARGUS_F_HW_ID] = 1;
	ev.f[ARGUS_F_HW_VALUE_OK] = 1;
	ev.f[ARGUS_F_HW_READER] = mode == NO_READER ? 0 : UI;
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, NULL, 0), "hwwatch", ts);
}

/* UI's request (unix 0x10 <-> 0x11), SERVER reads it */
static void send_req(uint64_t us)
{
	leave(AT(us), 0, UI, SYS_write, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	wake(AT(us + 1), 0, UI, SERVER);
	run(AT(us + 5), 2, SERVER);
	leave(AT(us + 6), 2, SERVER, SYS_read, 12, 4, AE_OBJ_UNIX, 0x11, 0x10);
}

/* SERVER's reply to READER (0x12 <-> 0x13), READER bumps the counter */
static void reply(uint64_t us)
{
	leave(AT(us), 2, SERVER, SYS_write, 12, 4, AE_OBJ_UNIX, 0x12, 0x13);
	wake(AT(us + 1), 2, SERVER, READER);
	run(AT(us + 2), 1, READER);
	leave(AT(us + 3), 1, READER, SYS_read, 12, 5, AE_OBJ_UNIX, 0x13, 0x12);
	hw_write(AT(us + 4), 1, READER);
	enter(AT(us + 5), 1, READER, SYS_read, 5, 0);
	block(AT(us + 6), 1, READER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
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

/* UI on CPU, sampled every 10 ms in [from, to) us */
static void ui_samples(uint64_t from, uint64_t to)
{
	for (uint64_t us = from; us < to; us += 10000)
		tg_ok(argus_tracegen__sample(tg, AT(us), 0, UI, 100,
					     (const uint64_t[]){ 0x401234, 0x400f00 }, 2),
		      "sample", AT(us));
}

static void scenario(enum mode m)
{
	mode = m;
	count = 0;
	begin();
	task(UI, 100, "mixer");
	task(READER, 100, "reply_reader");
	task(SERVER, 200, "audio_server");
	run(AT(0), 0, UI);
	run(AT(1), 1, READER);
	run(AT(2), 2, SERVER);
	enter(AT(3), 1, READER, SYS_read, 5, 0);
	block(AT(4), 1, READER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
	server_waits(5);
	/* the normal round: ask, spin, the reply bumps the counter, poll */
	send_req(20);
	reply(30);
	server_waits(40);
	ui_polls(50);
	/* the hang round */
	wake(AT(HANG_FROM), 3, 0, UI);
	run(AT(HANG_FROM), 0, UI);
	send_req(HANG_FROM + 20);
	if (m == WORK_AFTER) {
		reply(HANG_FROM + 30);
		server_waits(HANG_FROM + 40);
	} else {
		/* the server sleeps before it answers */
		enter(AT(HANG_FROM + 30), 2, SERVER, SYS_clock_nanosleep, 1, 0);
		block(AT(HANG_FROM + 31), 2, SERVER, SYS_clock_nanosleep, 2500000000ull,
		      AE_OBJ_NONE, 0, 0);
	}
	ui_samples(HANG_FROM + 1000, HANG_TO - 100);
	if (m != WORK_AFTER) {
		wake(AT(HANG_TO - 100), 2, 0, SERVER);
		run(AT(HANG_TO - 100), 2, SERVER);
		leave(AT(HANG_TO - 95), 2, SERVER, SYS_clock_nanosleep, 0, 1, AE_OBJ_NONE, 0, 0);
		reply(HANG_TO - 90);
		server_waits(HANG_TO - 80);
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

static void TEST_busy_spin_ended_by_a_late_write_follows_the_writer_to_the_server(void)
{
	struct argus_diagnosis d;

	scenario(LATE_REPLY);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.flag_writer, READER);
	CHECK_EQ(d.flag_addr, FLAG);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, SERVER);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_DATAFLAG);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);  /* its sleep */
	CHECK_EQ(d.cycle, 0);
	CHECK_EQ(d.npath, 3);
	CHECK_EQ(tid_of(d.path[0].seg), UI);
	CHECK_EQ(tid_of(d.path[1].seg), READER);
	CHECK_EQ(edge_type(d.path[1].edge), ARGUS_EDGE_DATAFLAG);
	CHECK_EQ(tid_of(d.path[2].seg), SERVER);
	CHECK_EQ(d.path[0].seg, seg(UI, 0));    /* the normal round's edge */
	CHECK(S(d.path[0].seg)->end < AT(HANG_FROM));
out:
	scenario_end();
}

/* The flag came at the start of the hang; the CPU time after it is UI's
 * own work: UI itself, as for any busy hang. */
static void TEST_busy_work_after_an_early_write_stays_its_own_culprit(void)
{
	struct argus_diagnosis d;

	scenario(WORK_AFTER);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.flag_writer, 0);
	CHECK_EQ(d.flag_hint, 0);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_SELF);
out:
	scenario_end();
}

static void TEST_busy_spin_without_a_named_reader_stays_its_own_culprit(void)
{
	struct argus_diagnosis d;

	scenario(NO_READER);
	if (!diagnose(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BUSY);
	CHECK_EQ(d.flag_writer, 0);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, UI);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_SELF);
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_busy_spin_ended_by_a_late_write_follows_the_writer_to_the_server);
	RUN(TEST_busy_work_after_an_early_write_stays_its_own_culprit);
	RUN(TEST_busy_spin_without_a_named_reader_stays_its_own_culprit);
	return check_report();
}
