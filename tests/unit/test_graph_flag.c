/* test_graph_flag.c - the data-flag edge rule (graphlib/graph_flag.c,
 * docs/graph.md "Data-flag edges") on small synthetic traces: which write
 * links to which spinning thread's segment, and what is not an edge. */
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

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_graph_flag", &o);
}

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	for (unsigned i = 0; i < npids; i++)
		if (pids[i].tid == tid)
			pids[i].pid = pid;
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

/* tid wrote value to the watched flag */
static void hw_write(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t value)
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
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, ips, 2), "hwwatch", ts);
}

/* The DATAFLAG edges of the graph, into out[] (at most max). */
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
 * ui (100) spins on sched_yield from 0 to 700 us, then polls (800 us);
 * writer (101, same process) writes the flag twice (520: 0, 550: 1) and
 * blocks; peer (102, same process) is blocked in read the whole time;
 * ui itself clears the flag at 10 us; later, at 2000 us, writer writes
 * again while ui sleeps in its poll: not spinning.
 */
static void TEST_write_to_a_yield_spinner_is_an_edge_to_its_leaving_segment(void)
{
	const struct argus_edge *e[8];

	begin();
	task(100, 100, "ui");
	task(101, 100, "writer");
	task(102, 100, "peer");
	run(AT(0), 0, 100);
	run(AT(1), 2, 102);
	hw_write(AT(10), 0, 100, 0);
	enter(AT(40), 2, 102, SYS_read, 7, 0);
	block(AT(50), 2, 102, SYS_read, 7, AE_OBJ_PIPE, 0x77, 0);
	for (int us = 100; us <= 400; us += 100)
		leave(AT(us), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	run(AT(450), 1, 101);
	leave(AT(500), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	hw_write(AT(520), 1, 101, 0);
	hw_write(AT(550), 1, 101, 1);
	enter(AT(590), 1, 101, SYS_read, 3, 0);
	block(AT(600), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	for (int us = 650; us <= 700; us += 50)
		leave(AT(us), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	enter(AT(800), 0, 100, SYS_poll, 0, 1);
	block(AT(850), 0, 100, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	wake(AT(1900), 3, 0, 101);
	run(AT(1900), 1, 101);
	hw_write(AT(2000), 1, 101, 1);
	enter(AT(2050), 1, 101, SYS_read, 3, 0);
	block(AT(2100), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(101, 0));
	CHECK_EQ(e[0]->dst, seg(100, 0));       /* the spin segment, ended by poll */
	CHECK_EQ(e[0]->src_ts, AT(550));        /* the last write before the leave */
	CHECK_EQ(e[0]->dst_ts, AT(800));        /* poll: the first non-spin syscall */
	CHECK_EQ(e[0]->obj, FLAG);
	CHECK_EQ(S(e[0]->dst)->end, AT(850));
	CHECK_EQ(argus_graph__stats(graph)->edges_by_type[ARGUS_EDGE_DATAFLAG], 1);
out:
	scenario_end();
}

/*
 * A sleep-retry loop: ui (100) sleeps 1 ms in nanosleep, checks, sleeps
 * again; writer (101) writes while ui sleeps; ui wakes, checks, and goes
 * on with write(): the edge ends in the segment after the last sleep.
 */
static void TEST_write_during_a_retry_sleep_links_to_the_segment_after_it(void)
{
	const struct argus_edge *e[8];

	begin();
	task(100, 100, "ui");
	task(101, 100, "writer");
	run(AT(0), 0, 100);
	enter(AT(10), 0, 100, SYS_nanosleep, 0, 0);
	block(AT(20), 0, 100, SYS_nanosleep, 1000000, AE_OBJ_NONE, 0, 0);
	wake(AT(1020), 0, 0, 100);
	run(AT(1020), 0, 100);
	leave(AT(1030), 0, 100, SYS_nanosleep, 0, 0, AE_OBJ_NONE, 0, 0);
	enter(AT(1040), 0, 100, SYS_nanosleep, 0, 0);
	block(AT(1050), 0, 100, SYS_nanosleep, 1000000, AE_OBJ_NONE, 0, 0);
	run(AT(1500), 1, 101);
	hw_write(AT(1600), 1, 101, 1);
	enter(AT(1650), 1, 101, SYS_read, 3, 0);
	block(AT(1700), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	wake(AT(2050), 0, 0, 100);
	run(AT(2050), 0, 100);
	leave(AT(2060), 0, 100, SYS_nanosleep, 0, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(2100), 0, 100, SYS_write, 1, 9, AE_OBJ_PIPE, 0x99, 0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(101, 0));
	CHECK_EQ(e[0]->dst, seg(100, 2));       /* after the second sleep */
	CHECK_EQ(e[0]->src_ts, AT(1600));
	CHECK_EQ(e[0]->dst_ts, AT(2100));
out:
	scenario_end();
}

/* A write that lands while the reader is busy elsewhere (a syscall that is
 * not a spin call was its last), or in another process: no edge. */
static void TEST_no_edge_to_a_thread_not_spinning_or_in_another_process(void)
{
	const struct argus_edge *e[8];

	begin();
	task(100, 100, "ui");
	task(101, 100, "writer");
	task(200, 200, "other");
	run(AT(0), 0, 100);
	run(AT(1), 2, 200);
	leave(AT(100), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(150), 2, 200, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(200), 0, 100, SYS_write, 1, 9, AE_OBJ_PIPE, 0x99, 0);
	run(AT(250), 1, 101);
	leave(AT(280), 2, 200, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	hw_write(AT(300), 1, 101, 1);
	leave(AT(350), 2, 200, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(400), 0, 100, SYS_getpid, 100, 0, AE_OBJ_NONE, 0, 0);
	leave(AT(950), 2, 200, SYS_getpid, 200, 0, AE_OBJ_NONE, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 0);
out:
	scenario_end();
}

/*
 * The reader cleared the flag itself, sent its request and was preempted
 * before its loop; the writer set the flag meanwhile; the reader never
 * yields and goes back to poll: the write released it (rule 2b).  A
 * second clear-and-set where the reader blocks in read() between its
 * clear and the write is no edge: it was not waiting for the flag.
 */
static void TEST_reader_that_cleared_the_flag_and_never_spun_gets_the_edge(void)
{
	const struct argus_edge *e[8];

	begin();
	task(100, 100, "ui");
	task(101, 100, "writer");
	run(AT(0), 0, 100);
	hw_write(AT(10), 0, 100, 0);
	leave(AT(20), 0, 100, SYS_write, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	tg_ok(argus_tracegen__preempt(tg, AT(30), 0, 100, 100, 101, 100), "preempt", AT(30));
	hw_write(AT(40), 0, 101, 1);
	enter(AT(45), 0, 101, SYS_read, 3, 0);
	block(AT(50), 0, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	run(AT(50), 0, 100);
	enter(AT(60), 0, 100, SYS_poll, 0, 1);
	block(AT(70), 0, 100, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	/* second round: ui clears, then blocks in read (not a flag wait) */
	wake(AT(1000), 1, 0, 100);
	run(AT(1000), 0, 100);
	hw_write(AT(1010), 0, 100, 0);
	enter(AT(1020), 0, 100, SYS_read, 4, 0);
	block(AT(1030), 0, 100, SYS_read, 4, AE_OBJ_PIPE, 0x44, 0);
	wake(AT(1100), 1, 0, 101);
	run(AT(1100), 1, 101);
	hw_write(AT(1110), 1, 101, 1);
	enter(AT(1120), 1, 101, SYS_read, 3, 0);
	block(AT(1130), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	wake(AT(1200), 1, 0, 100);
	run(AT(1200), 0, 100);
	enter(AT(1210), 0, 100, SYS_poll, 0, 1);
	block(AT(1220), 0, 100, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(101, 0));
	CHECK_EQ(e[0]->dst, seg(100, 0));
	CHECK_EQ(e[0]->src_ts, AT(40));
	CHECK_EQ(e[0]->dst_ts, AT(60));
out:
	scenario_end();
}

/*
 * The record of a hardware watchpoint hit is stamped 10-50 us after the
 * write in this VM (graph_flag.c, HIT_LAG_NS).  A yield spinner on the
 * other CPU sees the value at once: here it has left its loop and is
 * blocked in poll before the write's stamp (what e2e watch_flag_spin
 * caught in session 11).  The write was after the writer's read returned,
 * so the spinner's state is looked at from there: an edge.
 */
static void TEST_a_yield_spinner_back_in_poll_before_the_late_stamp_gets_the_edge(void)
{
	const struct argus_edge *e[8];

	begin();
	task(100, 100, "ui");
	task(101, 100, "writer");
	run(AT(0), 0, 100);
	run(AT(1), 1, 101);
	hw_write(AT(10), 0, 100, 0);
	enter(AT(20), 1, 101, SYS_read, 3, 0);
	block(AT(30), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	for (int us = 100; us <= 400; us += 100)
		leave(AT(us), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	wake(AT(450), 3, 0, 101);
	run(AT(450), 1, 101);
	/* the writer's read returns, it writes (not seen yet) ... */
	leave(AT(460), 1, 101, SYS_read, 12, 3, AE_OBJ_UNIX, 0x10, 0x11);
	/* ... the ui sees the flag and goes back to its poll ... */
	leave(AT(470), 0, 100, SYS_sched_yield, 0, 0, AE_OBJ_NONE, 0, 0);
	enter(AT(475), 0, 100, SYS_poll, 0, 1);
	block(AT(480), 0, 100, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	/* ... and only then is the hit recorded */
	hw_write(AT(495), 1, 101, 1);
	enter(AT(500), 1, 101, SYS_read, 3, 0);
	block(AT(510), 1, 101, SYS_read, 3, AE_OBJ_UNIX, 0x10, 0x11);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(flag_edges(e, 8), 1);
	if (flag_edges(e, 8) != 1)
		goto out;
	CHECK_EQ(e[0]->src, seg(101, 1));
	CHECK_EQ(e[0]->dst, seg(100, 0));       /* the spin segment, ended by poll */
	CHECK_EQ(e[0]->dst_ts, AT(475));        /* poll: the first non-spin syscall */
	CHECK(e[0]->src_ts <= e[0]->dst_ts);    /* the write came first */
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_reader_that_cleared_the_flag_and_never_spun_gets_the_edge);
	RUN(TEST_write_to_a_yield_spinner_is_an_edge_to_its_leaving_segment);
	RUN(TEST_write_during_a_retry_sleep_links_to_the_segment_after_it);
	RUN(TEST_no_edge_to_a_thread_not_spinning_or_in_another_process);
	RUN(TEST_a_yield_spinner_back_in_poll_before_the_late_stamp_gets_the_edge);
	return check_report();
}
