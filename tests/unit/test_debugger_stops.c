/* test_debugger_stops.c - a debugger attaching to a program is not the
 * program's causality (docs/diagnosis.md, "A debugger's stops"; the graph
 * side in graphlib/graph_edges.c, the hangs in graphlib/diag_hangs.c), on
 * small synthetic traces written with tests/gen/tracegen.h.
 *
 * The traces reproduce what the kernel records when lldb attaches to a
 * waiting thread.  From a real recording (argus dump) of `flock L true`
 * (7642) waiting while `flock L sleep 8` (7639) holds L, lldb-server-16
 * (comm "lldb-server-16.", 7679) attaching at 211.807 s and detaching at
 * 212.130 s:
 *
 *   flock 7642  sys_enter flock(3, LOCK_EX)
 *   flock 7642  switch prev_state=0x1 blocked_in flock(0x3) obj=file  208.405
 *   lldb-server-16. 7679  waking target=flock:7642    the SIGSTOP    211.807
 *   swapper     switch next=flock:7642
 *   flock 7642  sys_exit flock = -512                 -ERESTARTSYS
 *   flock 7642  waking target=lldb-server-16.:7679    tells its tracer
 *   flock 7642  switch prev_state=0x8                 __TASK_TRACED
 *   lldb-server-16. 7679  waking target=flock:7642    the resume     212.130
 *   flock 7642  sys_enter flock(3, LOCK_EX)           the restarted call
 *   flock 7642  switch prev_state=0x1 blocked_in flock(0x3)
 *   flock 7639  waking target=flock:7642              the real end   216.104
 *   flock 7642  sys_exit flock = 0
 *
 * What the collector records (collector/bpf_probe.c, docs/collector.md): no
 * ptrace() and no rt_sigreturn (not traced calls), exits only for the
 * message calls (read, write, ...), entries and exits for flock, poll,
 * wait4, futex, exit_group, clock_nanosleep.  A stop for the tracer is a
 * switch-out with prev_state __TASK_TRACED (0x8) and no syscall; the
 * stopping thread first wakes its tracer (blocked in wait4).  A running
 * thread that is attached gets no sched_waking (the kernel kicks it with an
 * IPI): it just wakes its tracer and stops.
 *
 * The rules checked (R1..R7 of the change that brought this file):
 *   R1  the wake-up that began a segment which ends in a ptrace stop
 *       without returning from a syscall (first exit -ERESTART*, or none)
 *       is the debugger's interrupt: no edge, woken_by DEBUGGER, counted in
 *       filtered[ARGUS_FILT_DEBUGGER];
 *   R2  the wake-up of the segment right after a ptrace stop is the resume:
 *       the same;
 *   R3  an interrupted wait goes on through the stop and the restarted call
 *       (one hang); still stopped or still in the restarted call at the
 *       end of the trace: ongoing, up to the end of the trace;
 *   R4  a busy thread stopped on CPU: its hang ends where the stop began;
 *   R5  debuggers' and Argus's own processes (and the children of a
 *       debugger's front end) are tools: never edges, never culprits, not
 *       in machine-wide hang lists;
 *   R6  the attached flock's culprit is its lock's holder, never the tool;
 *   R7  a signal's restart with no stop does not end the wait either.
 *
 * Times are written TS(s, µs): the recording's clock, 208.000000 s = T0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
#define TASK_DEAD 0x80          /* prev_state of a task's last switch */
#define FUTEX_WAIT_PRIVATE 128

#include "scenario.h"

/* The recording's clock: s seconds and us microseconds, 208 s = T0. */
#define TS(s, us) (T0 + ((uint64_t)(s) - 208) * 1000000000ull + (uint64_t)(us) * 1000ull)

/* ---- the tasks ---------------------------------------------------------- */

#define BASH 7600               /* the shell both flocks were run from */
#define HOLDER 7639             /* flock L sleep 8: holds L */
#define SLEEPER 7640            /* its child: sleep 8 */
#define VICTIM 7642             /* flock L true: waits for L */
#define TRUE_CHILD 7643         /* its child: true */
#define LLDB 7670               /* lldb-16, the front end */
#define DBG 7679                /* lldb-server-16. (or the tracer of a test) */
#define APP 7750                /* "app": a GLib-style event loop */
#define DBUSD 7751              /* dbus-daemon */
#define APP2 7760               /* "app" of the busy test */
#define POOL 7761               /* ...its thread pool-0 */
#define ARGUS_CLI 7820          /* `argus dump t.argus | less` */
#define LESS 7821
#define BACKUP 7900             /* "backup": waits for L, its child exits */
#define GZIP 7901
#define TOP 7800                /* a bystander: its event ends the trace */

/* L: dev 8:3 (s_dev 0x800003), inode 0x1a2b3, as the trace names files */
#define FILE_L ((0x800003ull << 32) ^ 0x1a2b3ull)
/* /dev/pts/1: devpts 136:1 */
#define TTY ((0x8800001ull << 32) ^ 0x4ull)
#define SK_DBG 0x2f1a1ull       /* socketpair lldb <-> lldb-server: the server's end */
#define SK_LLDB 0x2f1a2ull      /* ... lldb's */
#define SK_APP 0x30b11ull       /* the app's D-Bus connection */
#define SK_BUS 0x30b12ull       /* ... dbus-daemon's end */
#define PIPE_POOL 0x4c0a1ull    /* pool-0 -> app wake-up pipe */
#define PIPE_LESS 0x4c0b7ull    /* argus | less */
#define T_SLEEP 0xffffc90001a3fd28ull   /* sleep's hrtimer_sleeper */
#define HRTIMER_WAKEUP 0xffffffff81160a40ull
#define NO_TIMEOUT (~0ull)

static const uint64_t STACK_HOT[] = { 0x55d0c0401234, 0x55d0c0401100, 0x55d0c0400f00 };

/* The tracer's name, and whether a front end (lldb-16) drives it. */
static const char *tracer_comm = "lldb-server-16.";
static bool front_end = true;

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_debugger_stops", &o);
	tracer_comm = "lldb-server-16.";
	front_end = true;
}

static void task(uint32_t tid, uint32_t pid, uint32_t ppid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, ppid, comm), "task", T0);
}

/* tid stops for its tracer (ptrace stop, no syscall); the CPU goes idle. */
static void stop(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__sw(tg, ts, cpu, tid, pid_of(tid), TASK_TRACED, -1, 0,
				 AE_OBJ_NONE, 0, 0, 0, 0), "stop", ts);
}

/* tid's last switch (it has exited); the CPU goes idle. */
static void dead(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__sw(tg, ts, cpu, tid, pid_of(tid), TASK_DEAD, -1, 0,
				 AE_OBJ_NONE, 0, 0, 0, 0), "dead", ts);
}

/* exit_group(code): entry, then the exit event (the whole group dies). */
static void exit_group(uint64_t ts, uint16_t cpu, uint32_t tid, int32_t code)
{
	enter(ts, cpu, tid, SYS_exit_group, (uint64_t)code, 0);
	tg_ok(argus_tracegen__exit(tg, ts + 5 * US, cpu, tid, pid_of(tid), code, 1), "exit",
	      ts + 5 * US);
}

/* parent forks child (a new process, comm inherited), then wakes it. */
static void fork_child(uint64_t ts, uint16_t cpu, uint32_t parent, uint32_t child,
		       const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ child, child };
	tg_ok(argus_tracegen__fork(tg, ts, cpu, parent, pid_of(parent), child, child, comm),
	      "fork", ts);
	tg_ok(argus_tracegen__wakeup_new(tg, ts + 5 * US, cpu, parent, pid_of(parent), child,
					 child, comm), "wakeup_new", ts + 5 * US);
}

static void exec(uint64_t ts, uint16_t cpu, uint32_t tid, const char *comm,
		 const char *filename)
{
	tg_ok(argus_tracegen__exec(tg, ts, cpu, tid, pid_of(tid), tid, comm, filename), "exec",
	      ts);
}

static void sample(uint64_t ts, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__sample(tg, ts, cpu, tid, pid_of(tid), STACK_HOT, 3), "sample",
	      ts);
}

/* The trace's last event, at `end`: top comes back from its nanosleep on
 * CPU 3. */
static void end_at(uint64_t end)
{
	run(end - 10 * US, 3, TOP);
	leave(end, 3, TOP, SYS_nanosleep, 0, 0x7ffe3000, AE_OBJ_NONE, 0, 0);
}

/* ---- the debugger --------------------------------------------------------
 *
 * lldb-16 (CPU 2) reads its terminal; lldb-server (the tracer, CPU 3) reads
 * its end of a socketpair with lldb.  A command: the user's input wakes
 * lldb (a kernel wake-up), lldb writes the packet (waking lldb-server) and
 * waits for the answer; lldb-server reads it.  Without a front end (criu)
 * the tracer is just woken by the kernel and runs.
 */
static void tools_start(void)
{
	task(DBG, DBG, front_end ? LLDB : 1, tracer_comm);
	if (front_end) {
		task(LLDB, LLDB, BASH, "lldb-16");
		/* on CPU when the trace begins: lldb-server has just answered
		 * a packet, lldb reads it and goes back to its prompt */
		wake(TS(208, 100040), 3, DBG, LLDB);
		leave(TS(208, 100045), 3, DBG, SYS_write, 30, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
		block(TS(208, 100050), 3, DBG, SYS_read, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
		run(TS(208, 100060), 2, LLDB);
		leave(TS(208, 100065), 2, LLDB, SYS_read, 30, 5, AE_OBJ_UNIX, SK_LLDB, SK_DBG);
		block(TS(208, 100070), 2, LLDB, SYS_read, 0, AE_OBJ_FILE, TTY, 0);
	} else {
		leave(TS(208, 100045), 3, DBG, SYS_write, 30, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
		block(TS(208, 100050), 3, DBG, SYS_read, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
	}
}

/* The command that makes the tracer act at t: from t-300 µs to t-95 µs. */
static void command(uint64_t t)
{
	if (front_end) {
		wake(t - 300 * US, 2, 0, LLDB);
		run(t - 290 * US, 2, LLDB);
		leave(t - 280 * US, 2, LLDB, SYS_read, 12, 0, AE_OBJ_FILE, TTY, 0);
		wake(t - 200 * US, 2, LLDB, DBG);
		leave(t - 195 * US, 2, LLDB, SYS_write, 20, 5, AE_OBJ_UNIX, SK_LLDB, SK_DBG);
		block(t - 190 * US, 2, LLDB, SYS_read, 5, AE_OBJ_UNIX, SK_LLDB, SK_DBG);
	} else {
		wake(t - 200 * US, 3, 0, DBG);
	}
	run(t - 100 * US, 3, DBG);
	leave(t - 95 * US, 3, DBG, SYS_read, 20, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
}

/* The tracer (on CPU) answers at t and waits for the next command; lldb
 * reads the answer and goes back to its prompt. */
static void reply(uint64_t t)
{
	if (front_end)
		wake(t, 3, DBG, LLDB);
	leave(t + 5 * US, 3, DBG, SYS_write, 30, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
	block(t + 10 * US, 3, DBG, SYS_read, 4, AE_OBJ_UNIX, SK_DBG, SK_LLDB);
	if (front_end) {
		run(t + 20 * US, 2, LLDB);
		leave(t + 25 * US, 2, LLDB, SYS_read, 30, 5, AE_OBJ_UNIX, SK_LLDB, SK_DBG);
		block(t + 30 * US, 2, LLDB, SYS_read, 0, AE_OBJ_FILE, TTY, 0);
	}
}

/* The thread the debugger attaches to, and the call it waits in. */
struct target {
	uint32_t tid;
	uint16_t cpu;
	bool busy;              /* on CPU when attached (no wait to interrupt) */
	int32_t nr;             /* the call it waits in */
	uint64_t a0, a1;        /* its entry's arguments */
	uint64_t arg;           /* the switch's wait arg */
	int64_t restart;        /* its exit when interrupted: -ERESTART* */
	uint32_t kind;          /* the wait's object */
	uint64_t obj, peer;
};

static const struct target FLOCK_WAIT = {
	.tid = VICTIM, .cpu = 0, .nr = SYS_flock, .a0 = 3, .a1 = LOCK_EX, .arg = 3,
	.restart = -ERESTARTSYS, .kind = AE_OBJ_FILE, .obj = FILE_L,
};

/*
 * The attach at t (PTRACE_ATTACH, not traced): the tracer's SIGSTOP wakes
 * the target (no sched_waking for a busy one), the tracer waits for it in
 * wait4; the target's call returns -ERESTART*, it wakes its tracer and
 * stops (t+25 µs); the tracer answers lldb (t+40 µs).
 */
static void attach(uint64_t t, const struct target *x)
{
	command(t);
	if (!x->busy)
		wake(t, 3, DBG, x->tid);
	enter(t + 5 * US, 3, DBG, SYS_wait4, x->tid, 0);
	block(t + 8 * US, 3, DBG, SYS_wait4, x->tid, AE_OBJ_NONE, 0, 0);
	if (!x->busy) {
		run(t + 12 * US, x->cpu, x->tid);
		leave(t + 15 * US, x->cpu, x->tid, x->nr, x->restart, x->a0, x->kind, x->obj,
		      x->peer);
	}
	wake(t + 20 * US, x->cpu, x->tid, DBG);
	stop(t + 25 * US, x->cpu, x->tid);
	run(t + 30 * US, 3, DBG);
	leave(t + 35 * US, 3, DBG, SYS_wait4, x->tid, x->tid, AE_OBJ_NONE, 0, 0);
	reply(t + 40 * US);
}

/*
 * The resume at t (PTRACE_DETACH, or PTRACE_CONT with `cont`): the tracer
 * wakes the target, which enters its call again (t+15 µs) and blocks in it
 * (t+20 µs).  Detached, the tracer answers lldb; continued, it waits for
 * the target's next stop in wait4 (lldb waits for that answer).
 */
static void resume(uint64_t t, const struct target *x, bool cont)
{
	command(t);
	wake(t, 3, DBG, x->tid);
	run(t + 10 * US, x->cpu, x->tid);
	enter(t + 15 * US, x->cpu, x->tid, x->nr, x->a0, x->a1);
	block(t + 20 * US, x->cpu, x->tid, x->nr, x->arg, x->kind, x->obj, x->peer);
	if (cont) {
		enter(t + 30 * US, 3, DBG, SYS_wait4, x->tid, 0);
		block(t + 35 * US, 3, DBG, SYS_wait4, x->tid, AE_OBJ_NONE, 0, 0);
	} else {
		reply(t + 40 * US);
	}
}

/* ---- the flock story ------------------------------------------------------
 *
 * 207.99 s  `flock L sleep 8` took L (before the trace) and forked sleep.
 * 208.1     the trace begins: HOLDER enters wait4 for SLEEPER (CPU 1),
 *           SLEEPER enters clock_nanosleep until 216.100020 (CPU 2).
 * 208.404   bash (woken by the terminal) forks VICTIM, waits in wait4;
 *           VICTIM execs flock, enters flock(3, LOCK_EX) and blocks at
 *           208.405000 (CPU 0).
 * then, by variant, attaches (211.807), resumes (212.130), ... and:
 * 216.100   sleep's timer: it exits and wakes HOLDER; HOLDER exits
 *           (216.104, closing L's last fd) and wakes VICTIM (216.104000),
 *           which runs at 216.104010 and returns from flock with 0; it
 *           forks `true`, reaps it and exits; bash reads its terminal.
 */
enum story {
	ENDED,                  /* attach, detach, the holder ends the wait */
	STOPPED_AT_END,         /* attach; the trace ends in the stop (212.05) */
	RESTARTED_AT_END,       /* attach, detach; the trace ends in the
	                           restarted flock (213.0) */
	TWICE,                  /* attach/detach twice, the holder ends it */
	BREAKPOINT,             /* attach, continue (still attached), the
	                           holder ends the wait, then a breakpoint */
	INJECTED,               /* attach, the tracer runs code in the
	                           thread (argus inject's loader) that stops
	                           again, detach, the holder ends the wait */
};

static const uint64_t STORY_END[] = {
	[ENDED] = TS(216, 200000), [STOPPED_AT_END] = TS(212, 50000),
	[RESTARTED_AT_END] = TS(213, 0), [TWICE] = TS(216, 200000),
	[BREAKPOINT] = TS(216, 200000), [INJECTED] = TS(216, 200000),
};

#define WAIT_START TS(208, 405000)      /* VICTIM's switch-out into flock */
#define ATTACH TS(211, 807000)          /* the SIGSTOP's wake-up */
#define DETACH TS(212, 130000)          /* the resume's wake-up */
#define ATTACH2 TS(213, 500000)
#define DETACH2 TS(213, 800000)
#define REAL_WAKE TS(216, 104000)       /* HOLDER wakes VICTIM */
#define REAL_RUN TS(216, 104010)        /* ...which runs */

/* HOLDER in wait4, SLEEPER in clock_nanosleep, from the trace's start. */
static void holder_start(void)
{
	task(BASH, BASH, 1, "bash");
	task(HOLDER, HOLDER, BASH, "flock");
	task(SLEEPER, SLEEPER, HOLDER, "sleep");
	task(TOP, TOP, 1, "top");
	enter(TS(208, 100000), 1, HOLDER, SYS_wait4, SLEEPER, 0);
	block(TS(208, 100010), 1, HOLDER, SYS_wait4, SLEEPER, AE_OBJ_NONE, 0, 0);
	enter(TS(208, 100020), 2, SLEEPER, SYS_clock_nanosleep, 0 /* CLOCK_REALTIME */, 0);
	tg_ok(argus_tracegen__hrt_start(tg, TS(208, 100025), 2, AE_CTX_TASK, SLEEPER, SLEEPER,
					T_SLEEP, HRTIMER_WAKEUP, (int64_t)TS(216, 100020), 1,
					SLEEPER), "hrt_start", TS(208, 100025));
	block(TS(208, 100030), 2, SLEEPER, SYS_clock_nanosleep, 8000000000ull, AE_OBJ_NONE, 0,
	      0);
}

/* sleep's timer fires; it exits; HOLDER reaps it and exits, which drops L
 * and wakes `waiter` (blocked in flock on CPU 0): its flock returns 0. */
static void holder_ends(uint32_t waiter)
{
	tg_ok(argus_tracegen__timer_wake(tg, TS(216, 100020), 2, 0, 0, T_SLEEP, SLEEPER,
					 SLEEPER), "timer_wake", TS(216, 100020));
	run(TS(216, 100030), 2, SLEEPER);
	leave(TS(216, 100035), 2, SLEEPER, SYS_clock_nanosleep, 0, 0, AE_OBJ_NONE, 0, 0);
	exit_group(TS(216, 100050), 2, SLEEPER, 0);
	wake(TS(216, 100070), 2, SLEEPER, HOLDER);
	dead(TS(216, 100080), 2, SLEEPER);
	run(TS(216, 100090), 1, HOLDER);
	leave(TS(216, 100095), 1, HOLDER, SYS_wait4, SLEEPER, SLEEPER, AE_OBJ_NONE, 0, 0);
	exit_group(TS(216, 103990), 1, HOLDER, 0);
	wake(REAL_WAKE, 1, HOLDER, waiter);
	dead(TS(216, 104005), 1, HOLDER);
	run(REAL_RUN, 0, waiter);
	leave(TS(216, 104015), 0, waiter, SYS_flock, 0, 3, AE_OBJ_FILE, FILE_L, 0);
}

/* The story with tracer `tracer` (comm), driven by lldb-16 if fe. */
static void flock_story_by(enum story v, const char *tracer, bool fe)
{
	begin();
	tracer_comm = tracer;
	front_end = fe;
	holder_start();
	tools_start();
	/* bash runs `flock L true` */
	wake(TS(208, 403990), 1, 0, BASH);
	run(TS(208, 404000), 1, BASH);
	leave(TS(208, 404010), 1, BASH, SYS_read, 1, 0, AE_OBJ_FILE, TTY, 0);
	fork_child(TS(208, 404100), 1, BASH, VICTIM, "bash");
	enter(TS(208, 404110), 1, BASH, SYS_wait4, (uint64_t)-1, 0);
	block(TS(208, 404120), 1, BASH, SYS_wait4, NO_TIMEOUT, AE_OBJ_NONE, 0, 0);
	run(TS(208, 404200), 0, VICTIM);
	exec(TS(208, 404300), 0, VICTIM, "flock", "/usr/bin/flock");
	enter(TS(208, 404990), 0, VICTIM, SYS_flock, 3, LOCK_EX);
	block(WAIT_START, 0, VICTIM, SYS_flock, 3, AE_OBJ_FILE, FILE_L, 0);

	attach(ATTACH, &FLOCK_WAIT);
	if (v == STOPPED_AT_END)
		goto out;
	if (v == INJECTED) {
		/* the tracer makes the stopped thread run the loader (its
		 * registration: a write to a socket here), which ends in a
		 * trap: the thread stops again */
		command(TS(211, 900000));
		wake(TS(211, 900000), 3, DBG, VICTIM);
		run(TS(211, 900010), 0, VICTIM);
		leave(TS(211, 900050), 0, VICTIM, SYS_write, 10, 6, AE_OBJ_NONE, 0, 0);
		wake(TS(211, 900060), 0, VICTIM, DBG);
		stop(TS(211, 900065), 0, VICTIM);
	}
	resume(DETACH, &FLOCK_WAIT, v == BREAKPOINT);
	if (v == RESTARTED_AT_END)
		goto out;
	if (v == TWICE) {
		attach(ATTACH2, &FLOCK_WAIT);
		resume(DETACH2, &FLOCK_WAIT, false);
	}
	holder_ends(VICTIM);
	if (v == BREAKPOINT) {
		/* a breakpoint right after the lock: SIGTRAP, the tracer is
		 * told, the thread stops; lldb gets the stop */
		wake(TS(216, 104100), 0, VICTIM, DBG);
		stop(TS(216, 104105), 0, VICTIM);
		run(TS(216, 104110), 3, DBG);
		leave(TS(216, 104115), 3, DBG, SYS_wait4, VICTIM, VICTIM, AE_OBJ_NONE, 0, 0);
		reply(TS(216, 104120));
		goto out;
	}
	/* flock runs `true` and exits with its status; bash is back */
	fork_child(TS(216, 104100), 0, VICTIM, TRUE_CHILD, "flock");
	enter(TS(216, 104110), 0, VICTIM, SYS_wait4, TRUE_CHILD, 0);
	block(TS(216, 104120), 0, VICTIM, SYS_wait4, TRUE_CHILD, AE_OBJ_NONE, 0, 0);
	run(TS(216, 104130), 2, TRUE_CHILD);
	exec(TS(216, 104200), 2, TRUE_CHILD, "true", "/usr/bin/true");
	exit_group(TS(216, 104300), 2, TRUE_CHILD, 0);
	wake(TS(216, 104310), 2, TRUE_CHILD, VICTIM);
	dead(TS(216, 104315), 2, TRUE_CHILD);
	run(TS(216, 104320), 0, VICTIM);
	leave(TS(216, 104325), 0, VICTIM, SYS_wait4, TRUE_CHILD, TRUE_CHILD, AE_OBJ_NONE, 0, 0);
	exit_group(TS(216, 104400), 0, VICTIM, 0);
	wake(TS(216, 104410), 0, VICTIM, BASH);
	dead(TS(216, 104415), 0, VICTIM);
	run(TS(216, 104420), 1, BASH);
	leave(TS(216, 104425), 1, BASH, SYS_wait4, VICTIM, (uint64_t)-1, AE_OBJ_NONE, 0, 0);
	block(TS(216, 104500), 1, BASH, SYS_read, 0, AE_OBJ_FILE, TTY, 0);
out:
	end_at(STORY_END[v]);
}

static void flock_story(enum story v)
{
	flock_story_by(v, "lldb-server-16.", true);
}

/* ---- looking at the graph ---------------------------------------------- */

/* The segment of tid that begins at ts (a switch-in), NONE if none does. */
static uint32_t seg_from(uint32_t tid, uint64_t ts)
{
	uint32_t s = argus_graph__segment_at(graph, tid, ts);

	return s != NONE && S(s)->start == ts ? s : NONE;
}

static const struct argus_thread *thread_of(uint32_t tid)
{
	uint32_t t = argus_graph__thread_by_tid(graph, tid);

	return t == NONE ? NULL : argus_graph__thread(graph, t);
}

static uint32_t seg_tid(uint32_t sid)
{
	const struct argus_segment *s = argus_graph__segment(graph, sid);
	const struct argus_thread *t = s ? argus_graph__thread(graph, s->thread) : NULL;

	return t ? t->tid : 0;
}

static bool tool_pid(uint32_t pid)
{
	return pid == DBG || pid == LLDB || pid == ARGUS_CLI;
}

/* Strong in-edges of segment sid from another thread; with `woke` only
 * those flagged as its wake-up. */
static uint32_t strong_in(uint32_t sid, bool woke)
{
	const uint32_t *ids;
	uint32_t n = argus_graph__in_edges(graph, sid, &ids), k = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(graph, ids[i], ARGUS_EDGE_BUF);

		if (e && argus_edge_type_strong(e->type) && seg_tid(e->src) != seg_tid(sid) &&
		    (!woke || (e->flags & ARGUS_EDGE_F_WOKE)))
			k++;
	}
	return k;
}

/* The hangs of thread tid alone (ARGUS_HANGS_THREAD, default threshold). */
static uint32_t thread_hangs(uint32_t tid, struct argus_hang **h)
{
	struct argus_hang_opts o = { .sz = sizeof(o), .pid = pid_of(tid), .tid = tid,
				     .scope = ARGUS_HANGS_THREAD };
	uint32_t n = 0;

	*h = NULL;
	CHECK_EQ(argus_diag__hangs(graph, &o, h, &n), 0);
	return n;
}

/* The hang of tid that contains ts, diagnosed with opts o (NULL: the
 * defaults); false (a failed check) when no hang contains ts. */
static bool diagnose_at(uint32_t tid, uint64_t ts, const struct argus_diag_opts *o,
			struct argus_hang *hang, struct argus_diagnosis *d)
{
	struct argus_hang *h;
	uint32_t n = thread_hangs(tid, &h), i;

	for (i = 0; i < n && !(h[i].start <= ts && ts <= h[i].end); i++)
		;
	CHECK(i < n);
	if (i == n) {
		free(h);
		return false;
	}
	*hang = h[i];
	free(h);
	CHECK_EQ(argus_diag__diagnose(graph, hang, o, d), 0);
	return true;
}

/* No tool in the diagnosis: not in the chain, not on the path. */
static void check_no_tool(const struct argus_diagnosis *d)
{
	for (uint32_t i = 0; i < d->nchain; i++) {
		if (tool_pid(d->chain[i].pid))
			fprintf(stderr, "  chain[%u]: tool %u, rule %s\n", i, d->chain[i].tid,
				argus_culprit_rule_str(d->chain[i].rule));
		CHECK(!tool_pid(d->chain[i].pid));
		CHECK(!tool_pid(d->chain[i].tid));
	}
	for (uint32_t i = 0; i < d->npath; i++) {
		const struct argus_edge *e = d->path[i].edge != NONE ?
			argus_graph__edge(graph, d->path[i].edge, ARGUS_EDGE_BUF) : NULL;

		if (tool_pid(pid_of(seg_tid(d->path[i].seg))))
			fprintf(stderr, "  path[%u]: segment of tool %u, reached by %s\n", i,
				seg_tid(d->path[i].seg), e ? argus_edge_type_str(e->type) : "-");
		CHECK(!tool_pid(pid_of(seg_tid(d->path[i].seg))));
	}
}

/* The holders mock (diagnose --live asks /proc/locks for AE_OBJ_FILE):
 * whoever asks about L hears "HOLDER". */
struct holders_mock {
	unsigned calls;
	unsigned kind_asked;
	uint64_t obj_asked;
};

static uint32_t mock_holders(void *ctx, unsigned obj_kind, uint64_t obj, uint32_t *pids_out,
			     uint32_t max)
{
	struct holders_mock *m = ctx;

	m->calls++;
	m->kind_asked = obj_kind;
	m->obj_asked = obj;
	if (obj_kind != AE_OBJ_FILE || obj != FILE_L || !max)
		return 0;
	pids_out[0] = HOLDER;
	return 1;
}

/* ---- R3: one wait through the stops ------------------------------------ */

/* The story v, built: the victim has exactly one hang, from the first
 * switch-out of its flock wait (208.405) to `end`, ongoing or not, and
 * blocked. */
static void check_one_hang(enum story v, uint64_t end, uint8_t ongoing)
{
	struct argus_hang *h;
	uint32_t n;

	flock_story(v);
	if (!scenario_build(NULL))
		goto out;
	if (ongoing)    /* the trace ends where the story says */
		CHECK_EQ(argus_graph__stats(graph)->max_ts, STORY_END[v]);
	n = thread_hangs(VICTIM, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].tid, VICTIM);
		CHECK_EQ(h[0].start, WAIT_START);
		CHECK_EQ(h[0].end, end);
		CHECK_EQ(h[0].ongoing, ongoing);
		CHECK_EQ(h[0].kind, ARGUS_KIND_BLOCKED);
	}
	free(h);
out:
	scenario_end();
}

/* Attached in the middle of its flock wait, detached, and the holder ends
 * the wait at 216.104: one hang, from the first switch-out (208.405) to
 * the switch-in after the holder's wake-up (216.104010), over. */
static void TEST_attach_in_the_middle_of_a_wait_is_one_hang_up_to_the_holders_wakeup(void)
{
	check_one_hang(ENDED, REAL_RUN, 0);
}

/* Attached at 211.807; the trace ends at 212.05 with the thread still
 * stopped: the wait it was in has not ended, one ongoing hang from
 * 208.405 to the end of the trace (not to the stop's start, 211.807025). */
static void TEST_stop_that_outlasts_the_trace_is_an_ongoing_hang_to_the_trace_end(void)
{
	check_one_hang(STOPPED_AT_END, STORY_END[STOPPED_AT_END], 1);
}

/* A tool that stopped the waiting thread, ran code in it and let it go
 * (argus inject): the stop is no ongoing hang, since something other than
 * the tracer (the holder) woke the thread later.  CI: under ASan the
 * inject's stop of a thread in read() lasted 140 ms, and `argus diagnose
 * --pid` chose it, "still at the end of the trace", over the 3 s mutex
 * wait that followed (e2e_live_inject_mutex). */
static void TEST_wait_a_tool_stopped_and_let_go_is_not_ongoing(void)
{
	struct argus_hang *h;
	uint32_t n, ended = 0;

	flock_story(INJECTED);
	if (!scenario_build(NULL))
		goto out;
	n = thread_hangs(VICTIM, &h);
	CHECK(n >= 1);
	for (uint32_t i = 0; i < n; i++) {
		if (h[i].ongoing)
			fprintf(stderr, "  hang %u: %" PRIu64 " .. %" PRIu64 " ongoing\n", i,
				h[i].start, h[i].end);
		CHECK(!h[i].ongoing);
		ended += h[i].end == REAL_RUN;
	}
	CHECK_EQ(ended, 1);     /* the holder's wake-up ends the wait */
	free(h);
out:
	scenario_end();
}

/* Attached, detached at 212.130 (flock entered again and blocked), and the
 * trace ends at 213.0 in the restarted flock: one ongoing hang from
 * 208.405 to the end of the trace. */
static void TEST_trace_ending_in_the_restarted_call_is_an_ongoing_hang_to_the_trace_end(void)
{
	check_one_hang(RESTARTED_AT_END, STORY_END[RESTARTED_AT_END], 1);
}

/* lldb attaches and detaches twice (211.807/212.130, 213.500/213.800)
 * during one flock wait: still one hang, 208.405 .. 216.104010. */
static void TEST_two_attach_detach_cycles_in_one_wait_are_one_hang(void)
{
	check_one_hang(TWICE, REAL_RUN, 0);
}

/* The same wait through the graph's API, as a front end sees it: the
 * segment the attach woke is an interrupt, the wait that began at 208.405
 * goes on through it and the restarted flock (its last segment) to the
 * holder's wake-up, and the restarted call's wait began at 208.405. */
static void TEST_graph_api_follows_an_interrupted_wait_to_its_real_end(void)
{
	uint32_t w, intr, restarted, last = 0, next = 0;

	flock_story(ENDED);
	if (!scenario_build(NULL))
		goto out;
	w = seg(VICTIM, 0);
	intr = seg(VICTIM, 1);
	restarted = seg(VICTIM, 2);
	CHECK_EQ(S(w)->end, WAIT_START);
	CHECK_EQ(S(intr)->start, ATTACH + 12 * US);
	CHECK_EQ(S(restarted)->start, DETACH + 10 * US);
	CHECK(argus_graph__seg_interrupted(graph, intr));
	CHECK(!argus_graph__seg_interrupted(graph, w));
	CHECK(!argus_graph__seg_interrupted(graph, restarted));
	CHECK(argus_graph__wait_may_continue(graph, intr));
	CHECK_EQ(argus_graph__wait_through(graph, w, &last, &next), 3);
	CHECK_EQ(last, restarted);
	CHECK_EQ(next, seg_from(VICTIM, REAL_RUN));
	CHECK_EQ(argus_graph__wait_began(graph, restarted), w);
	CHECK_EQ(argus_graph__wait_began(graph, w), w);
	/* bad ids answer "none", as the rest of the API */
	CHECK(!argus_graph__seg_interrupted(graph, NONE));
	CHECK(!argus_graph__wait_may_continue(graph, NONE));
	CHECK_EQ(argus_graph__wait_through(graph, NONE, &last, &next), 0);
	CHECK_EQ(next, NONE);
	CHECK_EQ(argus_graph__wait_began(graph, NONE), NONE);
out:
	scenario_end();
}

/* Still stopped when the trace ends: the wait has not ended (no next). */
static void TEST_graph_api_wait_stopped_at_the_end_has_no_next_segment(void)
{
	uint32_t last = 0, next = 0;

	flock_story(STOPPED_AT_END);
	if (!scenario_build(NULL))
		goto out;
	argus_graph__wait_through(graph, seg(VICTIM, 0), &last, &next);
	CHECK_EQ(last, seg(VICTIM, 0));
	CHECK_EQ(next, NONE);
out:
	scenario_end();
}

/* ---- R1, R2: the interrupt and the resume are no edges ------------------ */

/* The segment the SIGSTOP began (211.807012 .. the stop at 211.807025; its
 * flock returned -ERESTARTSYS) was woken by the debugger: no edge in. */
static void TEST_segment_woken_by_the_attach_is_woken_by_the_debugger_with_no_edge(void)
{
	uint32_t s;

	flock_story(ENDED);
	if (!scenario_build(NULL))
		goto out;
	s = seg_from(VICTIM, ATTACH + 12 * US);
	CHECK(s != NONE);
	if (s == NONE)
		goto out;
	/* VICTIM 0: from its start to the flock wait; 1: this one */
	CHECK_EQ(S(seg(VICTIM, 0))->end, WAIT_START);
	CHECK_EQ(s, seg(VICTIM, 1));
	CHECK(S(s)->flags & ARGUS_SEG_F_TRACED);        /* it ends in the stop */
	CHECK_EQ(S(s)->woken_by, ARGUS_WOKEN_DEBUGGER);
	CHECK_EQ(strong_in(s, false), 0);
out:
	scenario_end();
}

/* The segment after the stop (212.130010: flock entered again) was woken
 * by the resume: the debugger, no edge in. */
static void TEST_segment_after_the_ptrace_stop_is_woken_by_the_debuggers_resume(void)
{
	uint32_t s;

	flock_story(ENDED);
	if (!scenario_build(NULL))
		goto out;
	s = seg_from(VICTIM, DETACH + 10 * US);
	CHECK(s != NONE);
	if (s == NONE)
		goto out;
	CHECK_EQ(S(s)->woken_by, ARGUS_WOKEN_DEBUGGER);
	CHECK_EQ(strong_in(s, false), 0);
	/* the segment before it is the stop */
	CHECK(S(argus_graph__seg_prev(graph, s))->flags & ARGUS_SEG_F_TRACED);
out:
	scenario_end();
}

/* The same shape by a tracer that is no known tool (criu dumping the
 * process: PTRACE_SEIZE + PTRACE_INTERRUPT, then PTRACE_DETACH): R1 and R2
 * alone make both wake-ups the debugger's, counted as
 * filtered[ARGUS_FILT_DEBUGGER] (and none as a tool's). */
static void TEST_any_tracers_interrupt_and_resume_are_counted_as_debugger_stops(void)
{
	const struct argus_graph_stats *st;
	uint32_t a, r;

	flock_story_by(ENDED, "criu", false);
	if (!scenario_build(NULL))
		goto out;
	st = argus_graph__stats(graph);
	a = seg_from(VICTIM, ATTACH + 12 * US);
	r = seg_from(VICTIM, DETACH + 10 * US);
	CHECK(a != NONE && r != NONE);
	CHECK_EQ(S(a)->woken_by, ARGUS_WOKEN_DEBUGGER);
	CHECK_EQ(S(r)->woken_by, ARGUS_WOKEN_DEBUGGER);
	CHECK_EQ(strong_in(a, false), 0);
	CHECK_EQ(strong_in(r, false), 0);
	CHECK_EQ(st->filtered[ARGUS_FILT_DEBUGGER], 2);
	CHECK_EQ(st->filtered[ARGUS_FILT_TOOL], 0);
	/* criu is not in the tools' list: only the ptrace shape decided */
	CHECK(thread_of(DBG) && thread_of(DBG)->tool == 0);
out:
	scenario_end();
}

/* No WAKEUP or SIGNAL edge leaves a segment of lldb-server, and no strong
 * edge of any type goes from lldb-server (or lldb) into the flock: with
 * one attach/detach and with two.  Each of its wake-ups of the flock is
 * filtered, once: filtered[DEBUGGER] + filtered[TOOL] counts 2 and 4. */
static void TEST_lldb_servers_wakeups_of_the_program_are_no_edges(void)
{
	static const struct { enum story v; uint64_t filtered; } cases[] = {
		{ ENDED, 2 }, { TWICE, 4 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct argus_graph_stats *st;
		uint32_t ne;

		flock_story(cases[c].v);
		if (!scenario_build(NULL))
			goto out;
		ne = argus_graph__nedges(graph);
		for (uint32_t i = 0; i < ne; i++) {
			const struct argus_edge *e = argus_graph__edge(graph, i, ARGUS_EDGE_BUF);
			uint32_t from = seg_tid(e->src), to = seg_tid(e->dst);

			if (from == DBG)
				CHECK(e->type != ARGUS_EDGE_WAKEUP && e->type != ARGUS_EDGE_SIGNAL);
			if (to == VICTIM && argus_edge_type_strong(e->type))
				CHECK(!tool_pid(pid_of(from)));
		}
		st = argus_graph__stats(graph);
		CHECK_EQ(st->filtered[ARGUS_FILT_DEBUGGER] + st->filtered[ARGUS_FILT_TOOL],
			 cases[c].filtered);
		scenario_end();
	}
out:
	scenario_end();
}

/* Still attached (PTRACE_CONT at 212.130), the holder's wake-up at 216.104
 * lets flock return 0, then the thread stops at a breakpoint (216.104105).
 * That segment returned from its call before the stop: its wake-up is the
 * holder's, an edge, not the debugger's. */
static void TEST_wakeup_of_a_wait_that_returned_before_a_ptrace_stop_stays_an_edge(void)
{
	uint32_t s;

	flock_story(BREAKPOINT);
	if (!scenario_build(NULL))
		goto out;
	s = seg_from(VICTIM, REAL_RUN);
	CHECK(s != NONE);
	if (s == NONE)
		goto out;
	CHECK(S(s)->flags & ARGUS_SEG_F_TRACED);        /* it ends in the stop */
	CHECK_EQ(S(s)->woken_by, ARGUS_WOKEN_EDGE);
	CHECK_EQ(strong_in(s, true), 1);
	{
		const uint32_t *ids;
		uint32_t n = argus_graph__in_edges(graph, s, &ids), holder = 0;

		for (uint32_t i = 0; i < n; i++) {
			const struct argus_edge *e = argus_graph__edge(graph, ids[i], ARGUS_EDGE_BUF);

			if ((e->flags & ARGUS_EDGE_F_WOKE) && seg_tid(e->src) == HOLDER)
				holder++;
		}
		CHECK_EQ(holder, 1);
	}
out:
	scenario_end();
}

/* ---- R6: the attached flock's culprit ------------------------------------ */

/* The holder's wake-up is in the trace: it is the culprit (it ended the
 * wait, late: rule waker; or normal-path), never lldb-server. */
static void TEST_attached_flock_that_ended_blames_the_holder_not_lldb_server(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;

	flock_story(ENDED);
	if (!scenario_build(NULL) || !diagnose_at(VICTIM, WAIT_START + 1 * US, NULL, &hang, &d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK(d.nchain >= 1);
	if (d.nchain >= 1) {
		CHECK_EQ(d.chain[0].tid, HOLDER);
		CHECK_EQ(d.chain[0].pid, HOLDER);
		CHECK(d.chain[0].rule == ARGUS_RULE_WAKER ||
		      d.chain[0].rule == ARGUS_RULE_NORMAL_PATH);
	}
	check_no_tool(&d);
out:
	scenario_end();
}

/* A hang still going on at the end of the trace (stopped, or back in the
 * restarted flock), on a saved trace (no holders callback): whatever the
 * chain holds (it may be empty: L was taken before the trace), no tool. */
static void TEST_ongoing_attached_flock_without_holders_names_no_tool(void)
{
	static const enum story v[] = { STOPPED_AT_END, RESTARTED_AT_END };

	for (size_t c = 0; c < sizeof(v) / sizeof(v[0]); c++) {
		struct argus_hang hang;
		struct argus_diagnosis d;

		flock_story(v[c]);
		if (!scenario_build(NULL) || !diagnose_at(VICTIM, WAIT_START + 1 * US, NULL, &hang, &d))
			goto out;
		CHECK_EQ(hang.ongoing, 1);
		check_no_tool(&d);
		scenario_end();
	}
out:
	scenario_end();
}

/* The same, live: /proc/locks says HOLDER holds L.  The culprit is HOLDER
 * by the lock rule, asked about the file L. */
static void TEST_ongoing_attached_flock_with_holders_blames_the_lock_holder(void)
{
	static const enum story v[] = { STOPPED_AT_END, RESTARTED_AT_END };

	for (size_t c = 0; c < sizeof(v) / sizeof(v[0]); c++) {
		struct holders_mock m = { 0 };
		struct argus_diag_opts o = { .sz = sizeof(o), .holders = mock_holders,
					     .holders_ctx = &m };
		struct argus_hang hang;
		struct argus_diagnosis d;

		flock_story(v[c]);
		if (!scenario_build(NULL) || !diagnose_at(VICTIM, WAIT_START + 1 * US, &o, &hang, &d))
			goto out;
		CHECK_EQ(hang.ongoing, 1);
		CHECK(m.calls >= 1);
		CHECK_EQ(m.kind_asked, AE_OBJ_FILE);
		CHECK_EQ(m.obj_asked, FILE_L);
		CHECK(d.nchain >= 1);
		if (d.nchain >= 1) {
			CHECK_EQ(d.chain[0].tid, HOLDER);
			CHECK_EQ(d.chain[0].rule, ARGUS_RULE_LOCK);
		}
		check_no_tool(&d);
		scenario_end();
	}
out:
	scenario_end();
}

/* ---- R3 in an event loop: a reply wait inside poll --------------------- */

static const struct target POLL_REPLY = {
	.tid = APP, .cpu = 0, .nr = SYS_poll, .a0 = 0x7ffd2000, .a1 = 1, .arg = NO_TIMEOUT,
	.restart = -ERESTARTNOHAND, .kind = AE_OBJ_NONE,
};

/*
 * APP  its loop: poll on 3 fds from 208.1 s; dbus-daemon's message ends it
 *      (208.300055: poll returns 1, it reads the message); at 208.4 it
 *      makes a synchronous D-Bus call: writes the request on its
 *      connection, polls that one fd with no timeout (xcb/libdbus style)
 *      and blocks at 208.400020.  The service never answers.
 * lldb attaches at 211.807: poll returns -ERESTARTNOHAND, APP stops; the
 * trace ends at 212.05, still stopped.  It is away from its loop since
 * 208.300055 (the reply wait is no visit of the loop): one ongoing hang,
 * to the end of the trace.
 */
static void TEST_poll_reply_wait_interrupted_by_the_attach_stays_an_ongoing_hang(void)
{
	struct argus_hang *h;
	uint32_t n;

	begin();
	task(BASH, BASH, 1, "bash");
	task(APP, APP, BASH, "app");
	task(DBUSD, DBUSD, 1, "dbus-daemon");
	task(TOP, TOP, 1, "top");
	enter(TS(208, 100000), 0, APP, SYS_poll, 0x7ffd1000, 3);
	block(TS(208, 100010), 0, APP, SYS_poll, NO_TIMEOUT, AE_OBJ_NONE, 0, 0);
	enter(TS(208, 100020), 1, DBUSD, SYS_epoll_wait, 4, 0);
	block(TS(208, 100030), 1, DBUSD, SYS_epoll_wait, 4, AE_OBJ_NONE, 0, 0);
	tools_start();
	/* a signal from the bus: the loop's poll returns */
	wake(TS(208, 299990), 1, 0, DBUSD);
	run(TS(208, 300000), 1, DBUSD);
	leave(TS(208, 300005), 1, DBUSD, SYS_epoll_wait, 1, 4, AE_OBJ_NONE, 0, 0);
	wake(TS(208, 300020), 1, DBUSD, APP);
	leave(TS(208, 300025), 1, DBUSD, SYS_write, 64, 7, AE_OBJ_UNIX, SK_BUS, SK_APP);
	enter(TS(208, 300030), 1, DBUSD, SYS_epoll_wait, 4, 0);
	block(TS(208, 300040), 1, DBUSD, SYS_epoll_wait, 4, AE_OBJ_NONE, 0, 0);
	run(TS(208, 300050), 0, APP);
	leave(TS(208, 300055), 0, APP, SYS_poll, 1, 0x7ffd1000, AE_OBJ_NONE, 0, 0);
	leave(TS(208, 300060), 0, APP, SYS_read, 64, 5, AE_OBJ_UNIX, SK_APP, SK_BUS);
	/* the synchronous call: request, then poll for the reply */
	wake(TS(208, 399995), 0, APP, DBUSD);
	leave(TS(208, 400000), 0, APP, SYS_write, 128, 5, AE_OBJ_UNIX, SK_APP, SK_BUS);
	enter(TS(208, 400010), 0, APP, SYS_poll, 0x7ffd2000, 1);
	block(TS(208, 400020), 0, APP, SYS_poll, NO_TIMEOUT, AE_OBJ_NONE, 0, 0);
	run(TS(208, 400030), 1, DBUSD);
	leave(TS(208, 400035), 1, DBUSD, SYS_epoll_wait, 1, 4, AE_OBJ_NONE, 0, 0);
	leave(TS(208, 400040), 1, DBUSD, SYS_read, 128, 7, AE_OBJ_UNIX, SK_BUS, SK_APP);
	enter(TS(208, 400050), 1, DBUSD, SYS_epoll_wait, 4, 0);
	block(TS(208, 400060), 1, DBUSD, SYS_epoll_wait, 4, AE_OBJ_NONE, 0, 0);
	attach(ATTACH, &POLL_REPLY);
	end_at(TS(212, 50000));
	if (!scenario_build(NULL))
		goto out;
	n = thread_hangs(APP, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, TS(208, 300055));   /* back from the loop's poll */
		CHECK_EQ(h[0].ongoing, 1);
		CHECK(h[0].flags & ARGUS_HANG_F_LOOP);
		CHECK_EQ(h[0].end, TS(212, 50000));      /* the end of the trace */
	}
	free(h);
out:
	scenario_end();
}

/* ---- R4: a busy thread stopped on CPU ------------------------------------ */

static const struct target BUSY = { .tid = APP2, .cpu = 0, .busy = true };

/*
 * APP2  its loop polls 3 fds from 208.1; pool-0 (woken by the kernel at
 *       208.2) writes its wake-up pipe: poll returns at 208.200055, APP2
 *       reads the pipe and computes (samples every 100 ms) with no wait.
 * lldb attaches at 211.807 while it runs: no wake-up, APP2 tells its
 * tracer and stops (211.807025).  The trace ends at 212.807.  The hang is
 * busy, not a wait: it ends where the stop began, ongoing.
 */
static void TEST_busy_thread_stopped_by_ptrace_ends_its_hang_where_the_stop_began(void)
{
	struct argus_hang *h;
	uint32_t n;

	begin();
	task(BASH, BASH, 1, "bash");
	task(APP2, APP2, BASH, "app");
	task(POOL, APP2, BASH, "pool-0");
	task(TOP, TOP, 1, "top");
	enter(TS(208, 100000), 0, APP2, SYS_poll, 0x7ffd1000, 3);
	block(TS(208, 100010), 0, APP2, SYS_poll, NO_TIMEOUT, AE_OBJ_NONE, 0, 0);
	enter(TS(208, 100020), 1, POOL, SYS_futex, 0x55d0c0600100, FUTEX_WAIT_PRIVATE);
	block(TS(208, 100030), 1, POOL, SYS_futex, 0x55d0c0600100, AE_OBJ_NONE, 0, 0);
	tools_start();
	wake(TS(208, 200000), 1, 0, POOL);
	run(TS(208, 200010), 1, POOL);
	leave(TS(208, 200015), 1, POOL, SYS_futex, 0, 0x55d0c0600100, AE_OBJ_NONE, 0, 0);
	wake(TS(208, 200020), 1, POOL, APP2);
	leave(TS(208, 200025), 1, POOL, SYS_write, 8, 9, AE_OBJ_PIPE, PIPE_POOL, 0);
	enter(TS(208, 200030), 1, POOL, SYS_futex, 0x55d0c0600100, FUTEX_WAIT_PRIVATE);
	block(TS(208, 200040), 1, POOL, SYS_futex, 0x55d0c0600100, AE_OBJ_NONE, 0, 0);
	run(TS(208, 200050), 0, APP2);
	leave(TS(208, 200055), 0, APP2, SYS_poll, 1, 0x7ffd1000, AE_OBJ_NONE, 0, 0);
	leave(TS(208, 200060), 0, APP2, SYS_read, 8, 8, AE_OBJ_PIPE, PIPE_POOL, 0);
	for (int i = 1; i <= 35; i++)
		sample(TS(208, 200060) + (uint64_t)i * 100 * MS, 0, APP2);
	attach(ATTACH, &BUSY);
	end_at(TS(212, 807000));
	if (!scenario_build(NULL))
		goto out;
	n = thread_hangs(APP2, &h);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(h[0].start, TS(208, 200055));
		CHECK_EQ(h[0].end, ATTACH + 25 * US);    /* the stop, not 212.807 */
		CHECK_EQ(h[0].ongoing, 1);
		CHECK_EQ(h[0].kind, ARGUS_KIND_BUSY);
	}
	free(h);
out:
	scenario_end();
}

/* ---- R5: the tools --------------------------------------------------------- */

/* Which threads are tools: debuggers and Argus by process name (lldb,
 * lldb-16, lldb-server-16., gdb, gdbserver, strace, ltrace, argus, argusd,
 * argus-unwind), every thread of such a process whatever its own name, and
 * a process a debugger's front end started (lldb-16 runs sh at start-up).
 * Not: the program, its shell, GLib's "gdbus" thread. */
static void TEST_debuggers_argus_and_a_front_ends_children_are_tool_threads_not_what_they_run(void)
{
	static const struct { uint32_t tid, pid, ppid; const char *comm; uint8_t tool; } t[] = {
		{ LLDB, LLDB, BASH, "lldb-16", 1 },
		{ 7671, LLDB, BASH, "dbg.evt-handler", 1 },     /* a thread of lldb-16 */
		{ DBG, DBG, LLDB, "lldb-server-16.", 1 },
		{ 7690, 7690, LLDB, "sh", 1 },                  /* lldb-16's child */
		{ 7801, 7801, BASH, "lldb", 1 },
		{ 7802, 7802, BASH, "gdb", 1 },
		{ 7803, 7803, BASH, "gdbserver", 1 },
		{ 7804, 7804, BASH, "strace", 1 },
		{ 7805, 7805, BASH, "ltrace", 1 },
		{ 7806, 7806, BASH, "argus", 1 },
		{ 7807, 7807, 1, "argusd", 1 },
		{ 7808, 7808, 7807, "argus-unwind", 1 },
		{ BASH, BASH, 1, "bash", 0 },
		{ VICTIM, VICTIM, BASH, "flock", 0 },
		{ APP, APP, BASH, "app", 0 },
		{ 7752, APP, BASH, "gdbus", 0 },                /* a thread of app */
		/* programs a debugger runs are programs: lldb -> lldb-server
		 * -> the app it launched, gdb -> its inferior, and what
		 * `argus record -- CMD` runs */
		{ 7901, 7901, DBG, "launched", 0 },
		{ 7902, 7902, 7901, "launched-kid", 0 },
		{ 7903, 7903, 7802, "inferior", 0 },
		{ 7904, 7904, 7806, "recorded", 0 },
	};
	const size_t n = sizeof(t) / sizeof(t[0]);

	begin();
	for (size_t i = 0; i < n; i++)
		task(t[i].tid, t[i].pid, t[i].ppid, t[i].comm);
	for (size_t i = 0; i < n; i++) {
		uint64_t at = TS(208, 100000) + i * 100 * US;

		run(at, (uint16_t)(i % 4), t[i].tid);
		block(at + 10 * US, (uint16_t)(i % 4), t[i].tid, SYS_read, 3, AE_OBJ_NONE, 0, 0);
	}
	end_at(TS(208, 200000));
	if (!scenario_build(NULL))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct argus_thread *th = thread_of(t[i].tid);

		CHECK(th != NULL);
		if (!th)
			continue;
		if (th->tool != t[i].tool)
			fprintf(stderr, "  %u \"%s\": tool %u, expected %u\n", t[i].tid, t[i].comm,
				th->tool, t[i].tool);
		CHECK_EQ(th->tool, t[i].tool);
	}
out:
	scenario_end();
}

/*
 * `argus dump t.argus | less`: less (CPU 1) blocks reading the pipe at
 * 208.100010; argus computes (samples), writes 4 KiB at 210.5 (waking
 * less), exits.  less runs at 210.500010, reads, draws, waits for a key.
 */
static void argus_less(void)
{
	begin();
	task(BASH, BASH, 1, "bash");
	task(ARGUS_CLI, ARGUS_CLI, BASH, "argus");
	task(LESS, LESS, BASH, "less");
	task(TOP, TOP, 1, "top");
	leave(TS(208, 100000), 1, LESS, SYS_write, 1800, 1, AE_OBJ_FILE, TTY, 0);
	block(TS(208, 100010), 1, LESS, SYS_read, 0, AE_OBJ_PIPE, PIPE_LESS, 0);
	for (int i = 1; i <= 11; i++)     /* 208.3 .. 210.3 s */
		sample(TS(208, 100000) + (uint64_t)i * 200 * MS, 2, ARGUS_CLI);
	wake(TS(210, 499995), 2, ARGUS_CLI, LESS);
	leave(TS(210, 500000), 2, ARGUS_CLI, SYS_write, 4096, 1, AE_OBJ_PIPE, PIPE_LESS, 0);
	run(TS(210, 500010), 1, LESS);
	leave(TS(210, 500015), 1, LESS, SYS_read, 4096, 0, AE_OBJ_PIPE, PIPE_LESS, 0);
	exit_group(TS(210, 500100), 2, ARGUS_CLI, 0);
	dead(TS(210, 500110), 2, ARGUS_CLI);
	leave(TS(210, 500150), 1, LESS, SYS_write, 2000, 1, AE_OBJ_FILE, TTY, 0);
	block(TS(210, 500200), 1, LESS, SYS_read, 3, AE_OBJ_FILE, TTY, 0);
	end_at(TS(210, 600000));
}

/* argus's wake-up of less is the tool's: less's segment is woken by the
 * debugger (Argus itself), filtered as a tool's (once), and no edge that
 * woke it (nor any WAKEUP or SIGNAL edge) comes from argus. */
static void TEST_tool_wakeup_of_a_program_thread_is_filtered_not_an_edge(void)
{
	uint32_t s, ne;

	argus_less();
	if (!scenario_build(NULL))
		goto out;
	CHECK(thread_of(ARGUS_CLI) && thread_of(ARGUS_CLI)->tool == 1);
	CHECK(thread_of(LESS) && thread_of(LESS)->tool == 0);
	s = seg_from(LESS, TS(210, 500010));
	CHECK(s != NONE);
	if (s == NONE)
		goto out;
	CHECK_EQ(S(s)->woken_by, ARGUS_WOKEN_DEBUGGER);
	CHECK_EQ(strong_in(s, true), 0);
	CHECK_EQ(argus_graph__stats(graph)->filtered[ARGUS_FILT_TOOL], 1);
	ne = argus_graph__nedges(graph);
	for (uint32_t i = 0; i < ne; i++) {
		const struct argus_edge *e = argus_graph__edge(graph, i, ARGUS_EDGE_BUF);

		if (seg_tid(e->src) == ARGUS_CLI)
			CHECK(e->type != ARGUS_EDGE_WAKEUP && e->type != ARGUS_EDGE_SIGNAL);
	}
out:
	scenario_end();
}

/* less waited 2.4 s for argus's output: a hang, and argus (the one that
 * ended it) is never its culprit nor a step of its path. */
static void TEST_diagnosis_never_names_the_tool_that_ended_the_wait(void)
{
	struct argus_hang hang;
	struct argus_diagnosis d;

	argus_less();
	if (!scenario_build(NULL) || !diagnose_at(LESS, TS(208, 100010) + 1 * US, NULL, &hang, &d))
		goto out;
	CHECK_EQ(hang.start, TS(208, 100010));
	check_no_tool(&d);
out:
	scenario_end();
}

/* The flock story: lldb-server's own reads of its socket (208.100050 ..
 * 211.806900, 3.7 s, and from 212.130050 to the end, 4.07 s) and lldb's
 * terminal reads are hangs of their threads, but a machine-wide list
 * (with or without deliberate waits) leaves every tool's hang out and
 * keeps the flock's. */
static void TEST_machine_wide_hangs_leave_out_lldb_servers_own_wait(void)
{
	struct argus_hang *h = NULL;
	uint32_t n = 0;

	flock_story(ENDED);
	if (!scenario_build(NULL))
		goto out;
	/* the control: lldb-server's own list has its long read */
	n = thread_hangs(DBG, &h);
	CHECK(n >= 1);
	free(h);
	for (uint8_t deliberate = 0; deliberate <= 1; deliberate++) {
		struct argus_hang_opts o = { .sz = sizeof(o), .scope = ARGUS_HANGS_MACHINE,
					     .deliberate = deliberate };
		uint32_t flock_hangs = 0;

		h = NULL;
		n = 0;
		CHECK_EQ(argus_diag__hangs(graph, &o, &h, &n), 0);
		for (uint32_t i = 0; i < n; i++) {
			if (tool_pid(h[i].pid))
				fprintf(stderr, "  listed: %u [%" PRIu64 ", %" PRIu64 "]\n", h[i].tid,
					h[i].start - T0, h[i].end - T0);
			CHECK(!tool_pid(h[i].pid));
			flock_hangs += h[i].tid == VICTIM;
		}
		CHECK(flock_hangs >= 1);
		free(h);
	}
out:
	scenario_end();
}

/* ---- R7: a signal's restart without a stop ---------------------------- */

/*
 * BACKUP forks gzip (208.3), then waits for L in flock (208.405).  gzip
 * exits at 211.0: its SIGCHLD wakes BACKUP, whose handler makes no syscall
 * (rt_sigreturn is not traced): flock returns -ERESTARTSYS (211.000025)
 * and is entered again (211.000040) and blocks.  The holder ends the wait
 * at 216.104.  No stop, but the same restart: one hang, 208.405 ..
 * 216.104010, not two.
 */
static void TEST_signal_restart_without_a_stop_does_not_end_the_wait(void)
{
	struct argus_hang *h;
	uint32_t n;

	begin();
	holder_start();
	task(BACKUP, BACKUP, BASH, "backup");
	leave(TS(208, 300000), 0, BACKUP, SYS_pipe2, 0, 0x7ffc8000, AE_OBJ_PIPE, 0x4c100, 0);
	fork_child(TS(208, 300010), 0, BACKUP, GZIP, "backup");
	run(TS(208, 300030), 3, GZIP);
	exec(TS(208, 300100), 3, GZIP, "gzip", "/usr/bin/gzip");
	enter(TS(208, 404990), 0, BACKUP, SYS_flock, 3, LOCK_EX);
	block(WAIT_START, 0, BACKUP, SYS_flock, 3, AE_OBJ_FILE, FILE_L, 0);
	for (int i = 0; i < 25; i++)      /* 208.5 .. 210.9 s */
		sample(TS(208, 500000) + (uint64_t)i * 100 * MS, 3, GZIP);
	exit_group(TS(211, 0), 3, GZIP, 0);
	wake(TS(211, 10), 3, GZIP, BACKUP);                  /* SIGCHLD */
	dead(TS(211, 15), 3, GZIP);
	run(TS(211, 20), 0, BACKUP);
	leave(TS(211, 25), 0, BACKUP, SYS_flock, -ERESTARTSYS, 3, AE_OBJ_FILE, FILE_L, 0);
	enter(TS(211, 40), 0, BACKUP, SYS_flock, 3, LOCK_EX);  /* SA_RESTART */
	block(TS(211, 50), 0, BACKUP, SYS_flock, 3, AE_OBJ_FILE, FILE_L, 0);
	holder_ends(BACKUP);
	enter(TS(216, 104100), 0, BACKUP, SYS_wait4, GZIP, 0);
	leave(TS(216, 104110), 0, BACKUP, SYS_wait4, GZIP, GZIP, AE_OBJ_NONE, 0, 0);
	exit_group(TS(216, 104200), 0, BACKUP, 0);
	dead(TS(216, 104210), 0, BACKUP);
	end_at(TS(216, 200000));
	if (!scenario_build(NULL))
		goto out;
	n = thread_hangs(BACKUP, &h);
	CHECK_EQ(n, 1);
	for (uint32_t i = 0; i < n; i++)
		fprintf(stderr, "  hang [%" PRIu64 " ns, %" PRIu64 " ns] ongoing %u\n",
			h[i].start - T0, h[i].end - T0, h[i].ongoing);
	if (n == 1) {
		CHECK_EQ(h[0].start, WAIT_START);
		CHECK_EQ(h[0].end, REAL_RUN);
		CHECK_EQ(h[0].ongoing, 0);
	}
	free(h);
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_attach_in_the_middle_of_a_wait_is_one_hang_up_to_the_holders_wakeup);
	RUN(TEST_stop_that_outlasts_the_trace_is_an_ongoing_hang_to_the_trace_end);
	RUN(TEST_trace_ending_in_the_restarted_call_is_an_ongoing_hang_to_the_trace_end);
	RUN(TEST_two_attach_detach_cycles_in_one_wait_are_one_hang);
	RUN(TEST_wait_a_tool_stopped_and_let_go_is_not_ongoing);
	RUN(TEST_graph_api_follows_an_interrupted_wait_to_its_real_end);
	RUN(TEST_graph_api_wait_stopped_at_the_end_has_no_next_segment);
	RUN(TEST_segment_woken_by_the_attach_is_woken_by_the_debugger_with_no_edge);
	RUN(TEST_segment_after_the_ptrace_stop_is_woken_by_the_debuggers_resume);
	RUN(TEST_any_tracers_interrupt_and_resume_are_counted_as_debugger_stops);
	RUN(TEST_lldb_servers_wakeups_of_the_program_are_no_edges);
	RUN(TEST_wakeup_of_a_wait_that_returned_before_a_ptrace_stop_stays_an_edge);
	RUN(TEST_attached_flock_that_ended_blames_the_holder_not_lldb_server);
	RUN(TEST_ongoing_attached_flock_without_holders_names_no_tool);
	RUN(TEST_ongoing_attached_flock_with_holders_blames_the_lock_holder);
	RUN(TEST_poll_reply_wait_interrupted_by_the_attach_stays_an_ongoing_hang);
	RUN(TEST_busy_thread_stopped_by_ptrace_ends_its_hang_where_the_stop_began);
	RUN(TEST_debuggers_argus_and_a_front_ends_children_are_tool_threads_not_what_they_run);
	RUN(TEST_tool_wakeup_of_a_program_thread_is_filtered_not_an_edge);
	RUN(TEST_diagnosis_never_names_the_tool_that_ended_the_wait);
	RUN(TEST_machine_wide_hangs_leave_out_lldb_servers_own_wait);
	RUN(TEST_signal_restart_without_a_stop_does_not_end_the_wait);
	return check_report();
}
