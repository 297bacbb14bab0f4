/* test_graph_flag_reader.c - the data-flag edge rule for a reader named
 * by `argus watch --reader` (graphlib/graph_flag.c rule 2a, docs/graph.md
 * "Data-flag edges") on small synthetic traces.
 *
 * The shape is a pure busy spin: UI (100) sends a request, then spins
 * with `pause` on a counter it never writes -- no syscall, no clear of
 * its own -- until READER (101, same process) bumps the counter; UI's
 * next syscall is the poll of its event loop.  Nothing in the trace says
 * that UI waits, except the name the write's record carries. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "tracegen.h"
#include "trace_format.h"
#include "scenario.h"

#define FLAG 0x55d0c0a04010ull
#define UI 100
#define READER 101
#define OTHER 102       /* a third thread of the process, computing */

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_graph_flag_reader", &o);
}

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

/* tid wrote value to the watched flag; the record names reader (0 none) */
static void hw_write(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t value, uint32_t reader)
{
	struct argus_event ev = { .ts = ts, .tid = tid, .pid = pid_of(tid), .type = AE_HWWATCH,
				  .cpu = cpu };
	uint64_t ips[2] = { 0x55d0c0a01234, 0x55d0c0a05678 };

	ev.f[ARGUS_F_HW_ADDR] = FLAG;
	ev.f[ARGUS_F_HW_VALUE] = value;
	ev.f[ARGUS_F_HW_LEN] = 4;
	ev.f[ARGUS_F_HW_ID] = 1;
	ev.f[ARGUS_F_HW_IP] = 0x55d0c0a01234;
	ev.f[ARGUS_F_HW_VALUE_OK] = 1;
	ev.f[ARGUS_F_HW_READER] = reader;
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, ips, 2), "hwwatch", ts);
}

static uint32_t flag_edges(const struct argus_edge **out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < argus_graph__nedges(graph); i++) {
		const struct argus_edge *e = argus_graph__edge(graph, i, ARGUS_EDGE_BUF);

		if (e->type == ARGUS_EDGE_DATAFLAG && n < max)
			out[n++] = e;
	}
	return n;
}

/*
 * UI: request at 20 us, then spins (CPU samples only, and a preemption by
 * OTHER, 300-350 us, that is not a wait) until its poll at 800 us.
 * READER bumps the counter at 500 and at 520 (two replies) and blocks in
 * read.  OTHER computes, runnable from 350, and makes a syscall at 900 us:
 * it was not spinning.  reader: the name the writes carry (0: none).
 */
static void busy_spin(uint32_t reader)
{
	begin();
	task(UI, 100, "mixer");
	task(READER, 100, "reply_reader");
	task(OTHER, 100, "meter");
	run(AT(0), 0, UI);
	leave(AT(20), 0, UI, SYS_write, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	tg_ok(argus_tracegen__sample(tg, AT(200), 0, UI, 100,
				     (const uint64_t[]){ 0x401234, 0x400f00 }, 2), "sample", AT(200));
	tg_ok(argus_tracegen__preempt(tg, AT(300), 0, UI, 100, OTHER, 100), "preempt", AT(300));
	tg_ok(argus_tracegen__preempt(tg, AT(350), 0, OTHER, 100, UI, 100), "preempt", AT(350));
	run(AT(450), 1, READER);
	leave(AT(460), 1, READER, SYS_read, 12, 5, AE_OBJ_UNIX, 0x13, 0x12);
	hw_write(AT(500), 1, READER, 1, reader);
	hw_write(AT(520), 1, READER, 2, reader);
	enter(AT(590), 1, READER, SYS_read, 5, 0);
	block(AT(600), 1, READER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
	tg_ok(argus_tracegen__sample(tg, AT(700), 0, UI, 100,
				     (const uint64_t[]){ 0x401234, 0x400f00 }, 2), "sample", AT(700));
	enter(AT(800), 0, UI, SYS_poll, 0, 1);
	block(AT(850), 0, UI, SYS_poll, ~0ull, AE_OBJ_PIPE, 0x99, 0);
	run(AT(860), 2, OTHER);                 /* runnable since 350 */
	leave(AT(900), 2, OTHER, SYS_getpid, 100, 0, AE_OBJ_NONE, 0, 0);
}

static void TEST_named_busy_spinner_gets_an_edge_to_its_first_syscall_after_the_write(void)
{
	const struct argus_edge *e[8];

	busy_spin(UI);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(READER, 0));    /* the writing segment */
	CHECK_EQ(e[0]->dst, seg(UI, 0));        /* the spin, ended by poll */
	CHECK_EQ(e[0]->src_ts, AT(520));        /* the last write before the leave */
	CHECK_EQ(e[0]->dst_ts, AT(800));        /* poll: its first syscall after it */
	CHECK_EQ(e[0]->obj, FLAG);
	CHECK_EQ(S(e[0]->dst)->end, AT(850));   /* one segment: preemption is no wait */
	CHECK_EQ(argus_graph__stats(graph)->edges_by_type[ARGUS_EDGE_DATAFLAG], 1);
out:
	scenario_end();
}

/* The same trace, the writes naming no reader: nothing says UI waits (no
 * spin syscall, no clear of its own), and OTHER was not spinning. */
static void TEST_same_busy_spin_without_a_reader_name_gets_no_edge(void)
{
	const struct argus_edge *e[8];

	busy_spin(0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 0);
out:
	scenario_end();
}

/* Named, but not the thread the write names: OTHER is named, UI spins.
 * OTHER gets the edge (the user said so: it leaves at its getpid), UI
 * none. */
static void TEST_only_the_named_thread_is_taken_as_the_reader(void)
{
	const struct argus_edge *e[8];

	busy_spin(OTHER);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->dst, seg(OTHER, 0));
	CHECK_EQ(e[0]->dst_ts, AT(900));
out:
	scenario_end();
}

/* The named reader asleep in its idle poll when the write lands (a late
 * reply after it gave up): it was reading nothing, no edge, though its
 * next syscall comes well within 10 s. */
static void TEST_named_reader_blocked_in_a_real_wait_gets_no_edge(void)
{
	const struct argus_edge *e[8];

	begin();
	task(UI, 100, "mixer");
	task(READER, 100, "reply_reader");
	run(AT(0), 0, UI);
	enter(AT(10), 0, UI, SYS_poll, 0, 1);
	block(AT(20), 0, UI, SYS_poll, ~0ull, AE_OBJ_PIPE, 0x99, 0);
	run(AT(100), 1, READER);
	hw_write(AT(150), 1, READER, 1, UI);
	enter(AT(160), 1, READER, SYS_read, 5, 0);
	block(AT(170), 1, READER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
	wake(AT(5000), 2, 0, UI);
	run(AT(5000), 0, UI);
	leave(AT(5010), 0, UI, SYS_poll, 1, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(5020), 0, UI, SYS_read, 1, 0, AE_OBJ_PIPE, 0x99, 0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 0);
out:
	scenario_end();
}

/*
 * The hit's record is stamped after the write (the #DB trap goes through
 * the hypervisor here: 10-50 us).  UI saw the value first: its poll at
 * 470 us, asleep at 475, before the write's stamp at 500.  The write was
 * after READER's read returned (460): UI's poll is its leave, and the
 * edge's src_ts is no later than it.
 */
static void TEST_named_reader_that_left_before_the_hit_was_stamped_gets_the_edge(void)
{
	const struct argus_edge *e[8];

	begin();
	task(UI, 100, "mixer");
	task(READER, 100, "reply_reader");
	run(AT(0), 0, UI);
	leave(AT(20), 0, UI, SYS_write, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	run(AT(450), 1, READER);
	leave(AT(460), 1, READER, SYS_read, 12, 5, AE_OBJ_UNIX, 0x13, 0x12);
	enter(AT(470), 0, UI, SYS_poll, 0, 1);
	block(AT(475), 0, UI, SYS_poll, ~0ull, AE_OBJ_PIPE, 0x99, 0);
	hw_write(AT(500), 1, READER, 1, UI);
	enter(AT(510), 1, READER, SYS_read, 5, 0);
	block(AT(520), 1, READER, SYS_read, 5, AE_OBJ_UNIX, 0x13, 0x12);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(READER, 0));
	CHECK_EQ(e[0]->dst, seg(UI, 0));
	CHECK_EQ(e[0]->dst_ts, AT(470));
	CHECK_EQ(e[0]->src_ts, AT(470));
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_named_busy_spinner_gets_an_edge_to_its_first_syscall_after_the_write);
	RUN(TEST_same_busy_spin_without_a_reader_name_gets_no_edge);
	RUN(TEST_only_the_named_thread_is_taken_as_the_reader);
	RUN(TEST_named_reader_blocked_in_a_real_wait_gets_no_edge);
	RUN(TEST_named_reader_that_left_before_the_hit_was_stamped_gets_the_edge);
	return check_report();
}
