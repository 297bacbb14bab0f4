/* test_graph_work.c - the interposer's work items in the graph and the
 * diagnosis (graphlib/graph_work.c, graphlib/diag_work.c; docs/graph.md
 * "Work items", docs/diagnosis.md rules work-item and queued-behind), on
 * small synthetic traces written with tests/gen/tracegen. */
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

#include "scenario.h"

#define UI 100          /* the app's main thread */
#define W 101           /* its pool's worker */
#define WRITER 200      /* another process: fills the pipe the slow item reads */
#define PIPE_INO 777
#define ITEM_A 0x5000a0 /* the slow item */
#define ITEM_B 0x5000b0 /* the item the UI waits for */
#define FN_RUN 0x401230 /* the pool's function */
#define QUEUE_FUTEX 0x7000

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_graph_work", &o);
	tg_ok(argus_tracegen__task(tg, UI, UI, 1, "app"), "task", T0);
	tg_ok(argus_tracegen__task(tg, W, UI, 1, "pool"), "task", T0);
	tg_ok(argus_tracegen__task(tg, WRITER, WRITER, 1, "writer"), "task", T0);
	pids[npids++] = (typeof(pids[0])){ UI, UI };
	pids[npids++] = (typeof(pids[0])){ W, UI };
	pids[npids++] = (typeof(pids[0])){ WRITER, WRITER };
}

/* One interposer record of a work item, as argus_ip__parse makes it. */
static void work(uint64_t ts, uint16_t cpu, uint32_t tid, uint16_t type, uint64_t item,
		 uint64_t fn, uint64_t kind)
{
	struct argus_event ev = { .ts = ts, .tid = tid, .pid = pid_of(tid), .type = type,
				  .cpu = cpu, .ctx = AE_CTX_TASK };

	ev.f[ARGUS_F_WI_ITEM] = item;
	ev.f[ARGUS_F_WI_FN] = fn;
	ev.f[ARGUS_F_WI_KIND] = kind;
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, NULL, 0), "work", ts);
}

/* The WORKITEM edges of the graph: how many, and src/dst of the first
 * two in id order. */
static uint32_t workitem_edges(uint32_t *src, uint32_t *dst, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < argus_graph__nedges(graph); i++) {
		const struct argus_edge *e = argus_graph__edge(graph, i, ARGUS_EDGE_BUF);

		if (e->type != ARGUS_EDGE_WORKITEM)
			continue;
		if (n < max) {
			src[n] = e->src;
			dst[n] = e->dst;
		}
		n++;
	}
	return n;
}

/*
 * A worker that never sleeps between items (it takes the next one at
 * once) still runs each in a segment of its own: cut at each begin and
 * after each end; the enqueue -> begin edges go from the UI's segment to
 * each item's; an item the UI queues to itself gets no edge.
 */
static void TEST_items_get_their_own_segments_and_workitem_edges(void)
{
	uint32_t src[4], dst[4], n;

	begin();
	run(AT(0), 0, UI);
	run(AT(0), 1, W);
	enter(AT(5), 1, W, SYS_getpid, 0, 0);
	work(AT(10), 0, UI, AE_WORK_ENQUEUE, ITEM_A, FN_RUN, AIP_WORK_POOL);
	work(AT(11), 0, UI, AE_WORK_ENQUEUE, ITEM_B, FN_RUN, AIP_WORK_POOL);
	work(AT(12), 0, UI, AE_WORK_ENQUEUE, 0x9000, 0x402000, AIP_WORK_IDLE);
	work(AT(20), 1, W, AE_WORK_BEGIN, ITEM_A, FN_RUN, AIP_WORK_POOL);
	enter(AT(500), 1, W, SYS_getpid, 0, 0);
	work(AT(1000), 1, W, AE_WORK_END, ITEM_A, FN_RUN, AIP_WORK_POOL);
	work(AT(1000), 1, W, AE_WORK_BEGIN, ITEM_B, FN_RUN, AIP_WORK_POOL);
	work(AT(1100), 1, W, AE_WORK_END, ITEM_B, FN_RUN, AIP_WORK_POOL);
	enter(AT(1200), 1, W, SYS_futex, QUEUE_FUTEX, FUTEX_WAIT_OP);
	block(AT(1210), 1, W, SYS_futex, QUEUE_FUTEX, 0, 0, 0);
	work(AT(1300), 0, UI, AE_WORK_BEGIN, 0x9000, 0x402000, AIP_WORK_IDLE);
	work(AT(1310), 0, UI, AE_WORK_END, 0x9000, 0x402000, AIP_WORK_IDLE);
	enter(AT(1400), 0, UI, SYS_getpid, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	/* the worker: before A, A's run, B's run, after B up to its wait */
	CHECK_EQ(S(seg(W, 0))->end, AT(20));
	CHECK_EQ(S(seg(W, 0))->end_reason, ARGUS_END_WORK);
	CHECK_EQ(S(seg(W, 1))->start, AT(20));
	CHECK_EQ(S(seg(W, 1))->start_reason, ARGUS_START_WORK);
	CHECK_EQ(S(seg(W, 1))->end, AT(1000));
	CHECK_EQ(S(seg(W, 1))->end_reason, ARGUS_END_WORK);
	/* the on-CPU clock runs on across the cuts */
	CHECK_EQ(S(seg(W, 0))->oncpu, 20 * US);
	CHECK_EQ(S(seg(W, 1))->oncpu, 980 * US);
	CHECK_EQ(S(seg(W, 2))->start, AT(1000));
	CHECK_EQ(S(seg(W, 2))->end, AT(1100));
	CHECK_EQ(S(seg(W, 3))->start, AT(1100));
	CHECK_EQ(S(seg(W, 3))->end_reason, ARGUS_END_WAIT);
	/* the UI's own idle: its run cut too */
	CHECK_EQ(S(seg(UI, 1))->start, AT(1300));
	CHECK_EQ(S(seg(UI, 1))->start_reason, ARGUS_START_WORK);
	CHECK_EQ(S(seg(UI, 2))->start, AT(1310));
	n = workitem_edges(src, dst, 4);
	CHECK_EQ(n, 2);
	if (n != 2)
		goto out;
	CHECK_EQ(src[0], seg(UI, 0));
	CHECK_EQ(src[1], seg(UI, 0));
	/* A's edge to A's segment, B's to B's (either order of ids) */
	CHECK_EQ((dst[0] == seg(W, 1) && dst[1] == seg(W, 2)) ||
		 (dst[0] == seg(W, 2) && dst[1] == seg(W, 1)), 1);
	CHECK_EQ(argus_graph__stats(graph)->edges_by_type[ARGUS_EDGE_WORKITEM], 2);
out:
	scenario_end();
}

/* An item address reused: each begin takes the oldest enqueue not taken
 * yet (first in, first out), and a begin with no enqueue gets no edge. */
static void TEST_reused_item_address_is_matched_first_in_first_out(void)
{
	uint32_t src[4], dst[4], n;

	begin();
	run(AT(0), 0, UI);
	run(AT(0), 1, W);
	enter(AT(1), 1, W, SYS_getpid, 0, 0);
	work(AT(2), 1, W, AE_WORK_BEGIN, ITEM_A, FN_RUN, AIP_WORK_API);   /* before the trace's enqueue */
	work(AT(3), 1, W, AE_WORK_END, ITEM_A, FN_RUN, AIP_WORK_API);
	work(AT(10), 0, UI, AE_WORK_ENQUEUE, ITEM_A, 0, AIP_WORK_API);
	enter(AT(15), 0, UI, SYS_getpid, 0, 0);
	enter(AT(20), 0, UI, SYS_write, 1, 0);          /* a segment boundary of its own: */
	enter(AT(25), 0, UI, SYS_futex, QUEUE_FUTEX, FUTEX_WAKE_OP);
	work(AT(30), 1, W, AE_WORK_BEGIN, ITEM_A, 0, AIP_WORK_API);
	work(AT(40), 1, W, AE_WORK_END, ITEM_A, 0, AIP_WORK_API);
	work(AT(50), 0, UI, AE_WORK_ENQUEUE, ITEM_A, 0, AIP_WORK_API);
	work(AT(60), 1, W, AE_WORK_BEGIN, ITEM_A, 0, AIP_WORK_API);
	work(AT(70), 1, W, AE_WORK_END, ITEM_A, 0, AIP_WORK_API);
	enter(AT(80), 1, W, SYS_getpid, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	n = workitem_edges(src, dst, 4);
	CHECK_EQ(n, 2);
	if (n != 2)
		goto out;
	CHECK_EQ(S(dst[0])->start == AT(30) || S(dst[1])->start == AT(30), 1);
	CHECK_EQ(S(dst[0])->start == AT(60) || S(dst[1])->start == AT(60), 1);
out:
	scenario_end();
}

/*
 * The GLib app of tests/e2e/interpose_glib.sh, in small: the UI queues the
 * slow item A, then B, and waits (futex) for B's result; the pool's one
 * worker runs A, which reads a pipe the writer fills 3 s later, then B,
 * then wakes the UI.  Culprit: the worker, rule queued-behind, with B
 * waiting behind A, which ran ~3 s on it; its own wait then names the
 * writer.
 */
static void slow_pool(bool wanted_is_slow)
{
	uint64_t a = wanted_is_slow ? ITEM_B : ITEM_A;

	run(AT(0), 0, UI);
	run(AT(0), 1, W);
	run(AT(0), 2, WRITER);
	enter(AT(1), 2, WRITER, SYS_nanosleep, 0, 0);
	block(AT(2), 2, WRITER, SYS_nanosleep, 0, 0, 0, 0);
	enter(AT(5), 1, W, SYS_futex, QUEUE_FUTEX, FUTEX_WAIT_OP);
	block(AT(6), 1, W, SYS_futex, QUEUE_FUTEX, 0, 0, 0);
	work(AT(100), 0, UI, AE_WORK_ENQUEUE, a, FN_RUN, AIP_WORK_POOL);
	if (!wanted_is_slow)
		work(AT(110), 0, UI, AE_WORK_ENQUEUE, ITEM_B, FN_RUN, AIP_WORK_POOL);
	enter(AT(115), 0, UI, SYS_futex, QUEUE_FUTEX, FUTEX_WAKE_OP);
	wake(AT(116), 0, UI, W);
	leave(AT(117), 0, UI, SYS_futex, 1, QUEUE_FUTEX, 0, 0, 0);
	run(AT(118), 1, W);
	leave(AT(119), 1, W, SYS_futex, 0, QUEUE_FUTEX, 0, 0, 0);
	enter(AT(120), 0, UI, SYS_futex, QUEUE_FUTEX + 8, FUTEX_WAIT_OP);
	block(AT(130), 0, UI, SYS_futex, QUEUE_FUTEX + 8, 0, 0, 0);
	work(AT(200), 1, W, AE_WORK_BEGIN, a, FN_RUN, AIP_WORK_POOL);
	enter(AT(210), 1, W, SYS_read, 3, 0);
	block(AT(220), 1, W, SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	/* 3 s later the writer writes the pipe */
	run(AT(3000000), 2, WRITER);
	leave(AT(3000001), 2, WRITER, SYS_nanosleep, 0, 0, 0, 0, 0);
	enter(AT(3000002), 2, WRITER, SYS_write, 4, 0);
	wake(AT(3000003), 2, WRITER, W);
	leave(AT(3000004), 2, WRITER, SYS_write, 1, 4, AE_OBJ_PIPE, PIPE_INO, 0);
	run(AT(3000010), 1, W);
	leave(AT(3000011), 1, W, SYS_read, 1, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	work(AT(3000020), 1, W, AE_WORK_END, a, FN_RUN, AIP_WORK_POOL);
	if (!wanted_is_slow) {
		work(AT(3000020), 1, W, AE_WORK_BEGIN, ITEM_B, FN_RUN, AIP_WORK_POOL);
		work(AT(3000100), 1, W, AE_WORK_END, ITEM_B, FN_RUN, AIP_WORK_POOL);
	}
	enter(AT(3000110), 1, W, SYS_futex, QUEUE_FUTEX + 8, FUTEX_WAKE_OP);
	wake(AT(3000111), 1, W, UI);
	leave(AT(3000112), 1, W, SYS_futex, 1, QUEUE_FUTEX + 8, 0, 0, 0);
	run(AT(3000120), 0, UI);
	leave(AT(3000121), 0, UI, SYS_futex, 0, QUEUE_FUTEX + 8, 0, 0, 0);
	enter(AT(3000200), 0, UI, SYS_getpid, 0, 0);
	enter(AT(3000200), 1, W, SYS_getpid, 0, 0);
}

static bool diagnose_ui(struct argus_diagnosis *d)
{
	struct argus_hang_opts o = { .sz = sizeof(o), .pid = UI };
	struct argus_hang *h = NULL, hang;
	uint32_t n = 0;

	CHECK_EQ(argus_diag__hangs(graph, &o, &h, &n), 0);
	for (uint32_t i = 0; i < n; i++)
		if (h[i].tid == UI) {
			hang = h[i];
			free(h);
			CHECK_EQ(argus_diag__diagnose(graph, &hang, NULL, d), 0);
			return true;
		}
	free(h);
	CHECK_EQ(n > 0, 1);
	return false;
}

static void TEST_ui_waiting_for_an_item_queued_behind_a_slow_one_names_the_worker_and_that_item(void)
{
	struct argus_diagnosis d;

	begin();
	slow_pool(false);
	if (!scenario_build(NULL) || !diagnose_ui(&d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.nchain >= 2, 1);
	if (d.nchain < 1)
		goto out;
	CHECK_EQ(d.chain[0].tid, W);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_QUEUED_BEHIND);
	CHECK(!strcmp(argus_culprit_rule_str(d.chain[0].rule), "queued-behind"));
	CHECK_EQ(d.chain[0].item, ITEM_B);
	CHECK_EQ(d.chain[0].item_fn, FN_RUN);
	CHECK_EQ(d.chain[0].item_kind, AIP_WORK_POOL);
	CHECK_EQ(d.chain[0].ahead, ITEM_A);
	CHECK_EQ(d.chain[0].ahead_fn, FN_RUN);
	CHECK_EQ(d.chain[0].ahead_tid, W);
	CHECK_EQ(d.chain[0].ahead_done, 1);
	CHECK_EQ(d.chain[0].ahead_ns, AT(3000020) - AT(200));
	CHECK_EQ(d.chain[0].item_queued_ns, AT(3000020) - AT(110));
	/* the path: the UI's woken segment, then the worker's that woke it
	 * (after B's run), sliced back: B's run came from the UI's enqueue
	 * (its workitem edge, the only inter-thread in-edge of B's segment) */
	CHECK_EQ(d.npath >= 3, 1);
	if (d.npath >= 3) {
		CHECK_EQ(argus_graph__thread(graph, S(d.path[0].seg)->thread)->tid, UI);
		CHECK_EQ(argus_graph__thread(graph, S(d.path[1].seg)->thread)->tid, W);
		CHECK_EQ(argus_graph__edge(graph, d.path[1].edge, ARGUS_EDGE_BUF)->type, ARGUS_EDGE_FUTEX);
		CHECK_EQ(argus_graph__thread(graph, S(d.path[d.npath - 1].seg)->thread)->tid, UI);
		CHECK_EQ(argus_graph__edge(graph, d.path[d.npath - 1].edge, ARGUS_EDGE_BUF)->type, ARGUS_EDGE_WORKITEM);
	}
	/* the worker was blocked reading the pipe: its wait names the writer */
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.chain[0].wait_nr, SYS_read);
	if (d.nchain >= 2)
		CHECK_EQ(d.chain[1].tid, WRITER);
out:
	scenario_end();
}

/* The item it waits for is itself the slow one: work-item, the worker. */
static void TEST_ui_waiting_for_a_slow_item_names_the_worker_that_ran_it(void)
{
	struct argus_diagnosis d;

	begin();
	slow_pool(true);
	if (!scenario_build(NULL) || !diagnose_ui(&d))
		goto out;
	CHECK_EQ(d.nchain >= 1, 1);
	if (d.nchain < 1)
		goto out;
	CHECK_EQ(d.chain[0].tid, W);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_WORK_ITEM);
	CHECK(!strcmp(argus_culprit_rule_str(d.chain[0].rule), "work-item"));
	CHECK_EQ(d.chain[0].item, ITEM_B);
	CHECK_EQ(d.chain[0].ahead, 0);
out:
	scenario_end();
}

/* An item that ended before the wait began is not what the thread waits
 * for: no work rule (the usual rules decide). */
static void TEST_item_done_before_the_wait_is_not_blamed(void)
{
	struct argus_diagnosis d;

	begin();
	run(AT(0), 0, UI);
	run(AT(0), 1, W);
	run(AT(0), 2, WRITER);
	enter(AT(1), 1, W, SYS_getpid, 0, 0);
	work(AT(10), 0, UI, AE_WORK_ENQUEUE, ITEM_A, FN_RUN, AIP_WORK_POOL);
	work(AT(20), 1, W, AE_WORK_BEGIN, ITEM_A, FN_RUN, AIP_WORK_POOL);
	work(AT(30), 1, W, AE_WORK_END, ITEM_A, FN_RUN, AIP_WORK_POOL);
	enter(AT(40), 1, W, SYS_futex, QUEUE_FUTEX, FUTEX_WAIT_OP);
	block(AT(41), 1, W, SYS_futex, QUEUE_FUTEX, 0, 0, 0);
	enter(AT(100), 0, UI, SYS_read, 3, 0);
	block(AT(110), 0, UI, SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	enter(AT(3000000), 2, WRITER, SYS_write, 4, 0);
	wake(AT(3000001), 2, WRITER, UI);
	leave(AT(3000002), 2, WRITER, SYS_write, 1, 4, AE_OBJ_PIPE, PIPE_INO, 0);
	run(AT(3000010), 0, UI);
	leave(AT(3000011), 0, UI, SYS_read, 1, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	enter(AT(3000100), 0, UI, SYS_getpid, 0, 0);
	if (!scenario_build(NULL) || !diagnose_ui(&d))
		goto out;
	CHECK_EQ(d.nchain >= 1, 1);
	if (d.nchain < 1)
		goto out;
	CHECK_EQ(d.chain[0].tid, WRITER);
	CHECK_EQ(d.chain[0].rule != ARGUS_RULE_WORK_ITEM &&
		 d.chain[0].rule != ARGUS_RULE_QUEUED_BEHIND, 1);
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_items_get_their_own_segments_and_workitem_edges);
	RUN(TEST_reused_item_address_is_matched_first_in_first_out);
	RUN(TEST_ui_waiting_for_an_item_queued_behind_a_slow_one_names_the_worker_and_that_item);
	RUN(TEST_ui_waiting_for_a_slow_item_names_the_worker_that_ran_it);
	RUN(TEST_item_done_before_the_wait_is_not_blamed);
	return check_report();
}
