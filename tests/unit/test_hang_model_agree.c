/* test_hang_model_agree.c - one hang model, run in two places (issue 26,
 * docs/diagnosis.md §1): the offline finder (argus_diag__hangs, the
 * machine-wide list of `argus hangs FILE`) and argusd's live watch
 * (collector/hang_watch.h), replayed over the same recorded trace by
 * hangs_replay_graph (`argus hangs FILE --live-rule`), must list the same
 * hangs: every hang of one overlaps a hang of the same thread in the
 * other.
 *
 * The traces are written here with tests/gen's generator, record for
 * record what the BPF side hands over, one scenario per trace, each the
 * shape of a program issue 26 names: a periodic monitor, a lock retry
 * loop, dbus-send's reply wait, a GLib main loop polling a queue with a
 * timeout, a lock wait, an idle epoll server, a worker's timed tick, a
 * shell waiting for its child, a command's lone sleep, a retry loop with
 * long sleeps; and the shapes where comparing real recordings found the
 * two apart (a driver forking short children, a pool worker's lone sleep,
 * a service sleeping in its handler).  Each scenario also says how many hangs it
 * has, so that agreeing on nothing cannot pass.  (The e2e real_* tests and
 * hang_watch_idle_loop.sh do the same over real programs' recordings.)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "hangs_replay.h"
#include "trace_format.h"
#include "tracegen.h"

#include "scenario.h"

#define APP 500
#define FD_FILE 0xf00ull
#define SOCK 0x5c0ull

static uint64_t now;    /* the scenario's clock */

static void begin(const char *comm)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 2 };

	scenario_open("test_hang_model_agree", &o);
	pids[npids++] = (typeof(pids[0])){ APP, APP };
	tg_ok(argus_tracegen__task(tg, APP, APP, 1, comm), "task", T0);
	now = T0;
	run(now, 0, APP);
	now += 1 * MS;
}

/* A call that returns at once with ret (on object kind/obj). */
static void call(int64_t nr, int64_t ret, uint32_t kind, uint64_t obj)
{
	enter(now, 0, APP, nr, 3, 0);
	leave(now + 2 * US, 0, APP, nr, ret, 3, kind, obj, 0);
	now += 10 * US;
}

/* A call that blocks for dur (key arg arg, a1 its second argument: poll's
 * nfds), woken by the idle task's interrupt, then returns ret. */
static void wait_call(int64_t nr, uint64_t arg, uint64_t a1, uint64_t dur, int64_t ret,
		      uint32_t kind, uint64_t obj)
{
	enter(now, 0, APP, nr, arg, a1);
	block(now + 1 * US, 0, APP, (int32_t)nr, arg, kind, obj, 0);
	wake(now + dur, 0, 0, APP);
	run(now + dur + 1 * US, 0, APP);
	leave(now + dur + 2 * US, 0, APP, nr, ret, arg, kind, obj, 0);
	now += dur + 10 * US;
}

static void spin(uint64_t dur)
{
	now += dur;
}

/* Builds the graph, lists both ways, and checks they agree and that the
 * offline list holds `want` hangs of the app. */
static void agree(const char *what, uint32_t want)
{
	struct argus_graph_opts go = { .sz = sizeof(go) };
	struct argus_hang_opts ho = { .sz = sizeof(ho), .scope = ARGUS_HANGS_MACHINE };
	struct hangs_replay_opts ro = { .threshold_ns = 0 };
	struct argus_hang *off = NULL, *live = NULL;
	uint32_t noff = 0, nlive = 0;
	struct argus_error err = { 0 };

	/* the app exits: the trace's last events */
	tg_ok(argus_tracegen__exit(tg, now, 0, APP, APP, 0, 1), "exit", now);
	if (!scenario_reopen())
		return;
	graph = argus_graph__build(trace, &go, &err);
	CHECK(graph != NULL);
	if (!graph) {
		scenario_end();
		return;
	}
	CHECK_EQ(argus_diag__hangs(graph, &ho, &off, &noff), 0);
	CHECK_EQ(hangs_replay_graph(graph, trace, &ro, &live, &nlive), 0);
	fprintf(stderr, "  %s: offline %u hang(s), live %u\n", what, noff, nlive);
	CHECK_EQ(noff, want);
	for (uint32_t i = 0; i < noff; i++) {
		bool found = false;

		for (uint32_t j = 0; j < nlive && !found; j++)
			found = live[j].tid == off[i].tid && live[j].start < off[i].end &&
				live[j].end > off[i].start;
		if (!found)
			fprintf(stderr, "  offline hang of %u at +%.3f..%.3f s: none live\n", off[i].tid,
				(double)(off[i].start - T0) / 1e9, (double)(off[i].end - T0) / 1e9);
		CHECK(found);
	}
	for (uint32_t j = 0; j < nlive; j++) {
		bool found = false;

		for (uint32_t i = 0; i < noff && !found; i++)
			found = live[j].tid == off[i].tid && live[j].start < off[i].end &&
				live[j].end > off[i].start;
		if (!found)
			fprintf(stderr, "  live hang of %u at +%.3f..%.3f s: none offline\n", live[j].tid,
				(double)(live[j].start - T0) / 1e9, (double)(live[j].end - T0) / 1e9);
		CHECK(found);
	}
	free(off);
	free(live);
	scenario_end();
}

/* A monitor: read three /proc files and log a line (all work), sleep
 * 100 ms, for 6 s.  An idle loop: no hang either way. */
static void test_periodic_monitor_is_no_hang(void)
{
	begin("monloop");
	for (int i = 0; i < 60; i++) {
		call(SYS_openat, 3, 0, 0);
		call(SYS_read, 400, AE_OBJ_FILE, FD_FILE);
		call(SYS_close, 0, 0, 0);
		call(SYS_write, 6, AE_OBJ_FILE, FD_FILE + 1);
		wait_call(SYS_clock_nanosleep, 100 * MS, 0, 100 * MS, 0, 0, 0);
	}
	agree("periodic monitor", 0);
}

/* apt's lock retry: F_SETLK refused, a message, a 100 ms sleep, for 5 s. */
static void test_retry_loop_is_one_hang(void)
{
	begin("apt-get");
	call(SYS_openat, 3, 0, 0);
	for (int i = 0; i < 50; i++) {
		call(SYS_fcntl, -EAGAIN, AE_OBJ_FILE, FD_FILE);
		call(SYS_write, 40, AE_OBJ_FILE, FD_FILE + 1);
		wait_call(SYS_nanosleep, 100 * MS, 0, 100 * MS, 0, 0, 0);
	}
	call(SYS_fcntl, 0, AE_OBJ_FILE, FD_FILE);
	agree("lock retry loop", 1);
}

/* dbus-send: the call sent, a first message read, an empty read, then
 * 3 s in poll on its one socket for the reply, which it reads. */
static void test_reply_wait_after_an_early_message(void)
{
	begin("dbus-send");
	call(SYS_sendmsg, 128, AE_OBJ_UNIX, SOCK);
	wait_call(SYS_poll, 25000ull * MS, 1, 100 * US, 1, AE_OBJ_UNIX, SOCK);
	call(SYS_recvmsg, 89, AE_OBJ_UNIX, SOCK);
	call(SYS_recvmsg, -EAGAIN, AE_OBJ_UNIX, SOCK);
	wait_call(SYS_poll, 25000ull * MS, 1, 3000 * MS, 1, AE_OBJ_UNIX, SOCK);
	call(SYS_recvmsg, 74, AE_OBJ_UNIX, SOCK);
	call(SYS_write, 111, AE_OBJ_FILE, FD_FILE + 1);
	agree("dbus-send reply wait", 1);
}

/* A GLib main loop: idle in poll on 3 fds, then a pool job's result
 * waited for with g_async_queue_timeout_pop(50 ms), 60 times, then the
 * loop again. */
static void test_timed_queue_pops_in_a_main_loop(void)
{
	begin("glib_app");
	for (int i = 0; i < 3; i++)
		wait_call(SYS_poll, ~0ull, 3, 400 * MS, 1, 0, 0);
	call(SYS_write, 8, 0, 0);       /* the job pushed: an eventfd write */
	for (int i = 0; i < 60; i++)
		wait_call(SYS_futex, 0x7000, 0, 50 * MS, -ETIMEDOUT, 0, 0);
	wait_call(SYS_futex, 0x7000, 0, 5 * MS, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		wait_call(SYS_poll, ~0ull, 3, 400 * MS, 1, 0, 0);
	agree("GLib timed pops", 1);
}

/* flock(1): 3 s in flock() for a lock someone holds. */
static void test_lock_wait(void)
{
	begin("flock");
	call(SYS_openat, 3, 0, 0);
	spin(2 * MS);
	wait_call(SYS_flock, 3, 0, 3000 * MS, 0, AE_OBJ_FILE, FD_FILE);
	agree("flock wait", 1);
}

/* A server idle in epoll_wait 5 s at a time, with 10 ms of work between. */
static void test_idle_epoll_server(void)
{
	begin("server");
	for (int i = 0; i < 3; i++) {
		wait_call(SYS_epoll_wait, 4, 0, 5000 * MS, 1, 0, 0);
		call(SYS_read, 100, AE_OBJ_UNIX, SOCK);
		spin(10 * MS);
		call(SYS_write, 100, AE_OBJ_UNIX, SOCK);
	}
	agree("idle epoll server", 0);
}

/* A worker's tick: a timed futex wait for work that times out every
 * 500 ms, for 5 s.  Idle, not a hang. */
static void test_worker_tick(void)
{
	begin("worker");
	for (int i = 0; i < 10; i++)
		wait_call(SYS_futex, 0x8000, 0, 500 * MS, -ETIMEDOUT, 0, 0);
	agree("worker tick", 0);
}

/* A shell waiting 4 s for its child: deliberate, left out of the list,
 * and at rest for argusd. */
static void test_shell_waiting_for_its_child(void)
{
	begin("sh");
	call(SYS_clone, 777, 0, 0);
	wait_call(SYS_wait4, 777, 0, 4000 * MS, 777, 0, 0);
	agree("shell wait4", 0);
}

/* sleep(1) the command: its set-up works, then one 4 s sleep.  A
 * deliberate wait: left out of the list, and not reported live. */
static void test_lone_sleep(void)
{
	begin("sleep");
	call(SYS_openat, 3, 0, 0);
	call(SYS_close, 0, 0, 0);
	wait_call(SYS_clock_nanosleep, 4000 * MS, 0, 4000 * MS, 0, 0, 0);
	agree("lone sleep", 0);
}

/* A retry loop with long sleeps: a lock refused, 1.5 s asleep, three
 * times.  One hang. */
static void test_retry_loop_with_long_sleeps(void)
{
	begin("retry");
	for (int i = 0; i < 3; i++) {
		call(SYS_flock, -EAGAIN, AE_OBJ_FILE, FD_FILE);
		wait_call(SYS_nanosleep, 1500 * MS, 0, 1500 * MS, 0, 0, 0);
	}
	call(SYS_flock, 0, AE_OBJ_FILE, FD_FILE);
	agree("retry loop, long sleeps", 1);
}

/* A test driver: computes, forking short children it waits for (wait4
 * of 50 ms), for 4 s.  The short child waits do not cut the stretch: one
 * busy hang (found by comparing real recordings: the live side once took
 * every wait4 for a rest). */
static void test_busy_with_short_child_waits(void)
{
	begin("driver");
	for (int i = 0; i < 20; i++) {
		call(SYS_clone, 900 + i, 0, 0);
		wait_call(SYS_wait4, 900 + i, 0, 50 * MS, 900 + i, 0, 0);
		spin(150 * MS);
	}
	agree("busy driver with short child waits", 1);
}

/* A pool worker: jobs between waits for work, then one 3 s sleep, then
 * waiting for work again.  Its one sleep is deliberate on both sides,
 * after it as before. */
static void test_worker_lone_sleep_then_waits(void)
{
	begin("pool");
	for (int i = 0; i < 5; i++) {
		wait_call(SYS_futex, 0x9000, 0, 100 * MS, 0, 0, 0);
		spin(2 * MS);
	}
	call(SYS_write, 20, AE_OBJ_FILE, FD_FILE + 1);
	wait_call(SYS_clock_nanosleep, 3000 * MS, 0, 3000 * MS, 0, 0, 0);
	call(SYS_write, 20, AE_OBJ_FILE, FD_FILE + 1);
	wait_call(SYS_futex, 0x9000, 0, 300 * MS, 0, 0, 0);
	agree("pool worker's lone sleep", 0);
}

/* A D-Bus service: a GLib loop (poll on 3 fds), whose method sleeps 3 s
 * in the loop's thread.  A loop thread away from its loop: a hang,
 * though the sleep is its only one. */
static void test_loop_thread_sleeping_in_a_handler(void)
{
	begin("service");
	for (int i = 0; i < 3; i++)
		wait_call(SYS_poll, ~0ull, 3, 300 * MS, 1, 0, 0);
	call(SYS_recvmsg, 100, AE_OBJ_UNIX, SOCK);
	wait_call(SYS_clock_nanosleep, 3000 * MS, 0, 3000 * MS, 0, 0, 0);
	call(SYS_sendmsg, 100, AE_OBJ_UNIX, SOCK);
	for (int i = 0; i < 3; i++)
		wait_call(SYS_poll, ~0ull, 3, 300 * MS, 1, 0, 0);
	agree("service sleeping in its handler", 1);
}

/* curl (real_http): the request sent, then polls on 2 fds (the socket
 * and its wake-up pair) that time out every second, with a zero-timeout
 * poll that finds nothing between them, for 3 s; then the response.  A
 * chain of poll retries with a request outstanding, answered by the
 * reply: one reply wait, though each poll watches 2 fds. */
static void test_poll_retries_for_a_reply(void)
{
	begin("curl");
	wait_call(SYS_poll, 200 * MS, 2, 20 * MS, 1, 0, 0);    /* connected */
	call(SYS_sendto, 80, AE_OBJ_TCP, SOCK);
	for (int i = 0; i < 3; i++) {
		wait_call(SYS_poll, 1000 * MS, 2, 1000 * MS, 0, 0, 0);
		enter(now, 0, APP, SYS_poll, 0x10, 1);
		leave(now + 1 * US, 0, APP, SYS_poll, 0, 0, 0, 0, 0);
		now += 10 * US;
	}
	wait_call(SYS_poll, 1000 * MS, 2, 300 * MS, 1, 0, 0);
	call(SYS_recvfrom, 204, AE_OBJ_TCP, SOCK);
	agree("curl's poll retries", 1);
}

/* A GUI loop: polls on 3 fds with a 500 ms timer; each timeout runs the
 * timer's work (it draws: a write to the X socket); for 5 s.  The polls
 * that time out are followed by work that worked: no chain, idle. */
static void test_timer_loop_is_idle(void)
{
	begin("xclock");
	call(SYS_write, 64, AE_OBJ_UNIX, SOCK);
	for (int i = 0; i < 10; i++) {
		wait_call(SYS_poll, 500 * MS, 3, 500 * MS, 0, 0, 0);
		call(SYS_write, 64, AE_OBJ_UNIX, SOCK);
	}
	wait_call(SYS_poll, 500 * MS, 3, 100 * MS, 1, 0, 0);
	call(SYS_read, 32, AE_OBJ_UNIX, SOCK);
	agree("a timer-driven GUI loop", 0);
}

/* A shell's `until grep -q READY f; do sleep 0.1; done` for 4 s: a quick
 * grep child (1 ms) and a sleep child (100 ms) each round.  Its many
 * short child waits make it a retry loop (a yield hang), not a shell
 * waiting for its command: listed, and reported live. */
static void test_shell_polling_loop(void)
{
	begin("bash");
	for (int i = 0; i < 40; i++) {
		call(SYS_clone, 1000 + 2 * i, 0, 0);
		wait_call(SYS_wait4, 1000 + 2 * i, 0, 1 * MS, 1000 + 2 * i, 0, 0);
		call(SYS_clone, 1001 + 2 * i, 0, 0);
		wait_call(SYS_wait4, 1001 + 2 * i, 0, 100 * MS, 1001 + 2 * i, 0, 0);
	}
	agree("shell polling loop", 1);
}

/* The same shell running one command of 4 s: deliberate, on both sides. */
static void test_shell_running_a_command(void)
{
	begin("bash");
	for (int i = 0; i < 3; i++) {
		call(SYS_clone, 1100 + i, 0, 0);
		wait_call(SYS_wait4, 1100 + i, 0, 1 * MS, 1100 + i, 0, 0);
	}
	call(SYS_clone, 1200, 0, 0);
	wait_call(SYS_wait4, 1200, 0, 1500 * MS, 1200, 0, 0);
	call(SYS_clone, 1201, 0, 0);
	wait_call(SYS_wait4, 1201, 0, 1200 * MS, 1201, 0, 0);
	agree("shell running commands", 0);
}

int main(void)
{
	RUN(test_periodic_monitor_is_no_hang);
	RUN(test_retry_loop_is_one_hang);
	RUN(test_reply_wait_after_an_early_message);
	RUN(test_timed_queue_pops_in_a_main_loop);
	RUN(test_lock_wait);
	RUN(test_idle_epoll_server);
	RUN(test_worker_tick);
	RUN(test_shell_waiting_for_its_child);
	RUN(test_lone_sleep);
	RUN(test_retry_loop_with_long_sleeps);
	RUN(test_busy_with_short_child_waits);
	RUN(test_worker_lone_sleep_then_waits);
	RUN(test_loop_thread_sleeping_in_a_handler);
	RUN(test_poll_retries_for_a_reply);
	RUN(test_timer_loop_is_idle);
	RUN(test_shell_polling_loop);
	RUN(test_shell_running_a_command);
	return check_report();
}
