/* test_diag_sync.c - the diagnosis on the interposer's rwlock and condvar
 * records (graphlib/diag_diagnose.c: rules mutex-holder for a write-held
 * rwlock and cond-signaller), on small synthetic traces: who is named,
 * by which rule, and when the rules must not apply (readers hold the
 * rwlock; nobody else ever signalled the condvar; the futex is not one of
 * the object's words). */
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "trace_format.h"
#include "tracegen.h"

#include "scenario.h"

#define UI 100                  /* "app": the UI thread */
#define PEER 102                /* "app" thread the UI waits for */
#define FEEDER 201              /* "feeder": another process, fills the pipe */
#define HOG 400                 /* another process: ends the trace */
#define PIPE_INO 0x80283ull
#define T_POLL 0xffff888000010000ull
#define T_FEED 0xffff888000030000ull
#define CV 0x7f0000004000ull    /* the pthread_cond_t */
#define MU 0x7f0000004100ull    /* its mutex */
#define RW 0x7f0000005000ull    /* the pthread_rwlock_t */
#define G_SIGNALS 40            /* __g_signals[0]: what a cond waiter sleeps on */
#define WRPHASE_FUTEX 8         /* rwlock __wrphase_futex: a reader's futex */

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

static void arm(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t timer, uint64_t expires)
{
	tg_ok(argus_tracegen__hrt_start(tg, ts, cpu, AE_CTX_TASK, tid, pid_of(tid), timer,
					HRTIMER_WAKEUP_FN, (int64_t)expires, 1, tid),
	      "hrt_start", ts);
}

static void expire(uint64_t ts, uint16_t cpu, uint64_t timer, uint32_t target)
{
	tg_ok(argus_tracegen__timer_wake(tg, ts, cpu, 0, 0, timer, target, pid_of(target)),
	      "timer_wake", ts);
}

/* An interposer record (AE_MUTEX_* of a kind), as argusd stores it. */
static void rec(uint64_t ts, uint16_t cpu, uint32_t tid, uint16_t type, uint64_t addr,
		uint64_t other, uint64_t kind, uint64_t arg)
{
	struct argus_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.tid = tid;
	ev.pid = pid_of(tid);
	ev.type = type;
	ev.cpu = cpu;
	ev.ctx = AE_CTX_TASK;
	ev.f[ARGUS_F_MX_ADDR] = addr;
	ev.f[ARGUS_F_MX_OTHER] = other;
	ev.f[ARGUS_F_MX_KIND] = kind;
	ev.f[ARGUS_F_MX_ARG] = arg;
	tg_ok(argus_tracegen__event(tg, &ev, NULL, NULL, NULL, 0), "record", ts);
}

static void ui_poll_return(uint64_t at)
{
	expire(AT(at - 10), 0, T_POLL, UI);
	run(AT(at - 5), 0, UI);
	leave(AT(at), 0, UI, SYS_poll, 0, 0x7ffc0000, AE_OBJ_NONE, 0, 0);
}

static void ui_poll_call(uint64_t at)
{
	enter(AT(at), 0, UI, SYS_poll, 0x7ffc0000, 1);
	arm(AT(at + 5), 0, UI, T_POLL, AT(at + 100000));
	block(AT(at + 10), 0, UI, SYS_poll, 100 * MS, AE_OBJ_NONE, 0, 0);
}

enum waits { ON_COND, ON_RWLOCK };

struct scen {
	enum waits on;
	uint64_t futex_off;     /* where the UI sleeps, from the object */
	uint32_t holder;        /* rwlock: the holder its wait recorded */
	bool signals;           /* cond: PEER's signals are recorded */
	bool hang_ends;         /* the last round completes */
};

/*
 * A round at b µs (the feeder computes `busy` µs before it writes):
 *   UI      poll returns (b+10); records its wait (b+30: cond, with MU; or
 *           rdlock with the recorded holder) and sleeps in futex on the
 *           object (b+50)
 *   FEEDER  its timer wakes it (b+80), f = b + busy: writes the pipe and
 *           wakes PEER (f+95), nanosleeps (f+120)
 *   PEER    its read returns (f+210); records the signal / its write
 *           unlock with waiters (f+250); futex wake of UI (f+310); reads
 *           the pipe again (f+410)
 *   UI      returns from futex (f+510), records the return (f+520), polls
 */
static void round_at(const struct scen *s, uint64_t b, uint64_t busy, bool last)
{
	uint64_t f = b + busy, obj = s->on == ON_COND ? CV : RW;
	uint64_t kind = s->on == ON_COND ? AE_SYNC_COND : AE_SYNC_RDLOCK;

	ui_poll_return(b + 10);
	rec(AT(b + 30), 0, UI, AE_MUTEX_WAIT, obj, s->on == ON_COND ? 0 : s->holder, kind,
	    s->on == ON_COND ? MU : 0);
	enter(AT(b + 40), 0, UI, SYS_futex, obj + s->futex_off, 0);
	block(AT(b + 50), 0, UI, SYS_futex, obj + s->futex_off, AE_OBJ_NONE, 0, 0);
	expire(AT(b + 80), 2, T_FEED, FEEDER);
	run(AT(b + 85), 2, FEEDER);
	leave(AT(b + 88), 2, FEEDER, SYS_nanosleep, 0, 0, AE_OBJ_NONE, 0, 0);
	if (last && !s->hang_ends) {
		/* the hang in progress: something else runs on until the end */
		run(AT(f + 2000000), 3, HOG);
		enter(AT(f + 2000010), 3, HOG, SYS_getpid, 0, 0);
		return;
	}
	enter(AT(f + 90), 2, FEEDER, SYS_write, 4, 0);
	wake(AT(f + 95), 2, FEEDER, PEER);
	leave(AT(f + 100), 2, FEEDER, SYS_write, 8, 4, AE_OBJ_PIPE, PIPE_INO, 0);
	enter(AT(f + 110), 2, FEEDER, SYS_nanosleep, 0, 0);
	arm(AT(f + 115), 2, FEEDER, T_FEED, AT(f + 100080));
	block(AT(f + 120), 2, FEEDER, SYS_nanosleep, 100 * MS, AE_OBJ_NONE, 0, 0);
	run(AT(f + 200), 1, PEER);
	leave(AT(f + 210), 1, PEER, SYS_read, 8, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	if (s->on == ON_RWLOCK)
		rec(AT(f + 250), 1, PEER, AE_MUTEX_WAKE, RW, 0, AE_SYNC_WRLOCK, 0);
	else if (s->signals)
		rec(AT(f + 250), 1, PEER, AE_MUTEX_WAKE, CV, 1, AE_SYNC_COND, 0);
	enter(AT(f + 300), 1, PEER, SYS_futex, obj + s->futex_off, 1);
	wake(AT(f + 310), 1, PEER, UI);
	leave(AT(f + 320), 1, PEER, SYS_futex, 1, obj + s->futex_off, AE_OBJ_NONE, 0, 0);
	enter(AT(f + 400), 1, PEER, SYS_read, 3, 0);
	block(AT(f + 410), 1, PEER, SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	run(AT(f + 500), 0, UI);
	leave(AT(f + 510), 0, UI, SYS_futex, 0, obj + s->futex_off, AE_OBJ_NONE, 0, 0);
	rec(AT(f + 520), 0, UI, AE_MUTEX_ACQUIRED, obj, 0, kind, s->on == ON_COND ? MU : 0);
	ui_poll_call(f + 600);
}

/* Four normal rounds (100..400 ms), then one whose feeder takes 2.5 s;
 * the diagnosis of the UI's only hang in d.  False when it failed. */
static bool diagnose_scenario(const struct scen *s, struct argus_diagnosis *d)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };
	struct argus_error err = { 0 };
	struct argus_hang_opts ho = { .sz = sizeof(ho), .pid = UI };
	struct argus_hang *h = NULL;
	uint32_t n = 0;
	bool ok;

	scenario_open("test_diag_sync", &o);
	task(UI, UI, "app");
	task(PEER, UI, "app-peer");
	task(FEEDER, FEEDER, "feeder");
	task(HOG, HOG, "hog");
	run(AT(0), 0, UI);
	run(AT(1), 1, PEER);
	enter(AT(2), 1, PEER, SYS_read, 3, 0);
	block(AT(3), 1, PEER, SYS_read, 3, AE_OBJ_PIPE, PIPE_INO, 0);
	run(AT(4), 2, FEEDER);
	enter(AT(5), 2, FEEDER, SYS_nanosleep, 0, 0);
	arm(AT(6), 2, FEEDER, T_FEED, AT(100080));
	block(AT(7), 2, FEEDER, SYS_nanosleep, 100 * MS, AE_OBJ_NONE, 0, 0);
	ui_poll_call(100);
	for (int k = 0; k < 4; k++)
		round_at(s, 100000 * (k + 1), 0, false);
	round_at(s, 500000, 2500000, true);
	if (!scenario_reopen())
		return false;
	graph = argus_graph__build(trace, NULL, &err);
	if (!graph)
		fprintf(stderr, "  build: %s\n", err.msg);
	CHECK(graph != NULL);
	if (!graph)
		return false;
	CHECK_EQ(argus_diag__hangs(graph, &ho, &h, &n), 0);
	CHECK_EQ(n, 1);
	ok = n == 1 && argus_diag__diagnose(graph, &h[0], NULL, d) == 0;
	CHECK(ok);
	free(h);
	return ok;
}

static void TEST_cond_wait_that_ended_names_the_signal_that_ended_it(void)
{
	struct scen s = { .on = ON_COND, .futex_off = G_SIGNALS, .signals = true,
			  .hang_ends = true };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d)) {
		/* segments as in test_diagnosis: round k is UI 1+2k (poll
		 * return .. futex wait) and 2+2k; the hang round's wait is 9 */
		CHECK_EQ(d.hang_seg, seg(UI, 9));
		CHECK(d.nchain >= 2);
		CHECK_EQ(d.chain[0].tid, PEER);
		CHECK_EQ(d.chain[0].rule, ARGUS_RULE_COND_SIGNALLER);
		CHECK_EQ(d.chain[0].wait_nr, SYS_read);
		/* the path: the UI's return <-holder- PEER's signal */
		CHECK_EQ(d.npath, 2);
		CHECK_EQ(edge_type(d.path[1].edge), ARGUS_EDGE_HOLDER);
		CHECK_EQ(S(d.path[1].seg)->thread, argus_graph__thread_by_tid(graph, PEER));
		CHECK_EQ(S(d.path[0].seg)->thread, argus_graph__thread_by_tid(graph, UI));
		/* and on to the pipe's writer */
		CHECK_EQ(d.chain[1].tid, FEEDER);
	}
	scenario_end();
}

static void TEST_cond_wait_in_progress_names_the_condvars_last_signaller(void)
{
	struct scen s = { .on = ON_COND, .futex_off = G_SIGNALS, .signals = true,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d)) {
		CHECK(d.nchain >= 1);
		CHECK_EQ(d.chain[0].tid, PEER);
		CHECK_EQ(d.chain[0].rule, ARGUS_RULE_COND_SIGNALLER);
		CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
	}
	scenario_end();
}

static void TEST_cond_nobody_signalled_is_not_the_cond_rule(void)
{
	struct scen s = { .on = ON_COND, .futex_off = G_SIGNALS, .signals = false,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d))
		CHECK(!d.nchain || d.chain[0].rule != ARGUS_RULE_COND_SIGNALLER);
	scenario_end();
}

static void TEST_cond_record_but_futex_elsewhere_is_not_the_cond_rule(void)
{
	/* a futex on the condvar's mutex (re-locking it on the way out), not
	 * on the condvar's words: the record does not describe this sleep */
	struct scen s = { .on = ON_COND, .futex_off = MU - CV, .signals = true,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d))
		CHECK(!d.nchain || d.chain[0].rule != ARGUS_RULE_COND_SIGNALLER);
	scenario_end();
}

static void TEST_rwlock_write_held_names_the_writer_by_mutex_holder(void)
{
	struct scen s = { .on = ON_RWLOCK, .futex_off = WRPHASE_FUTEX, .holder = PEER,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d)) {
		CHECK(d.nchain >= 1);
		CHECK_EQ(d.chain[0].tid, PEER);
		CHECK_EQ(d.chain[0].rule, ARGUS_RULE_MUTEX_HOLDER);
	}
	scenario_end();
}

static void TEST_rwlock_held_by_readers_is_not_mutex_holder(void)
{
	struct scen s = { .on = ON_RWLOCK, .futex_off = WRPHASE_FUTEX, .holder = 0,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d))
		CHECK(!d.nchain || d.chain[0].rule != ARGUS_RULE_MUTEX_HOLDER);
	scenario_end();
}

static void TEST_rwlock_futex_outside_its_words_is_not_mutex_holder(void)
{
	/* offset 16 (__pad3): glibc never sleeps there */
	struct scen s = { .on = ON_RWLOCK, .futex_off = 16, .holder = PEER,
			  .hang_ends = false };
	struct argus_diagnosis d;

	if (diagnose_scenario(&s, &d))
		CHECK(!d.nchain || d.chain[0].rule != ARGUS_RULE_MUTEX_HOLDER);
	scenario_end();
}

int main(void)
{
	RUN(TEST_cond_wait_that_ended_names_the_signal_that_ended_it);
	RUN(TEST_cond_wait_in_progress_names_the_condvars_last_signaller);
	RUN(TEST_cond_nobody_signalled_is_not_the_cond_rule);
	RUN(TEST_cond_record_but_futex_elsewhere_is_not_the_cond_rule);
	RUN(TEST_rwlock_write_held_names_the_writer_by_mutex_holder);
	RUN(TEST_rwlock_held_by_readers_is_not_mutex_holder);
	RUN(TEST_rwlock_futex_outside_its_words_is_not_mutex_holder);
	return check_report();
}
