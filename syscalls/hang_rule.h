/* hang_rule.h - the words of the hang model, shared by its two runs:
 * argusd's live watch (hang_watch.c, record by record) and the offline
 * finder (graphlib/diag_hangs.c, over a built graph).  docs/diagnosis.md
 * §1 is the prose; each side cites the function it uses, so that a change
 * of the rule is one change here.
 *
 * The model, per thread:
 *   - an *idle wait* is where the thread waits for new work: an epoll
 *     wait; a poll on 2+ fds; a 1-fd poll or a select with no request
 *     outstanding (no output on a connection since the last idle wait, or
 *     one that is not answered by a reply); a timed futex wait that times
 *     out in a thread with no poll-family wait (a worker's tick); and a
 *     sleep after a round of tries that all worked (a periodic idle loop:
 *     hang_rule_round_idle);
 *   - a thread with an idle wait (a *loop thread*) hangs when it stays
 *     away from its idle waits for the threshold or more;
 *   - a thread with none hangs in any wait of the threshold or more, and
 *     in any stretch between such waits of the threshold or more (runs,
 *     short waits, retries: a retry loop's sleeps never cut a stretch);
 *   - a wait that ends by its own timeout and is entered again is one
 *     wait (a GIL or a queue polled with a short timeout): in a loop
 *     thread, a timed-out futex or reply wait is not a visit of the loop.
 * Header-only: both sides are hot loops and inline these.
 */
#ifndef ARGUS_HANG_RULE_H
#define ARGUS_HANG_RULE_H
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "argus_events.h"
#include "syscall_class.h"

/* Which syscalls are which: syscall_class.h, the one table.  These name
 * the classes the model reasons with. */

/* A poll-family call: an event loop's wait (poll, ppoll, select,
 * pselect6 and the epoll waits). */
static inline bool hang_rule_loop_nr(long nr)
{
	return argus_sys_is_poll(nr);
}

static inline bool hang_rule_epoll_nr(long nr)
{
	return argus_sys_is_epoll(nr);
}

static inline bool hang_rule_sleep_nr(long nr)
{
	return argus_sys_is_sleep(nr);
}

static inline bool hang_rule_child_nr(long nr)
{
	return argus_sys_is_child_wait(nr);
}

/* The waits a loop thread's return from may be a visit of its loop: a
 * poll-family call, a futex wait (a worker's tick), a sleep (an idle
 * loop's rest).  Both sides follow only these. */
static inline bool hang_rule_visit_nr(long nr)
{
	return argus_sys_is(nr, ARGUS_SC_POLL | ARGUS_SC_FUTEX | ARGUS_SC_SLEEP);
}

/* An output that may be a request: a write or a send of more than 0
 * bytes, or a connect (made, or under way). */
static inline bool hang_rule_out(long nr, int64_t ret)
{
	uint32_t cls = argus_sys_class(nr);

	return ((cls & ARGUS_SC_SEND) && ret > 0) ||
	       ((cls & ARGUS_SC_CONNECT) && (ret == 0 || ret == -EINPROGRESS));
}

/* An input of more than 0 bytes (a reply, when on the connection the
 * thread wrote to last). */
static inline bool hang_rule_in(long nr, int64_t ret)
{
	return argus_sys_is_recv(nr) && ret > 0;
}

/* A connection: a pipe or a socket (not a file, not an eventfd, which a
 * thread pool's wake-up uses without a reply). */
static inline bool hang_rule_conn_kind(uint32_t kind)
{
	return kind == AE_OBJ_PIPE || kind == AE_OBJ_UNIX || kind == AE_OBJ_TCP ||
	       kind == AE_OBJ_UDP || kind == AE_OBJ_SOCK;
}

/* -ERESTARTSYS .. -ERESTART_RESTARTBLOCK: the call was interrupted (a
 * signal, a debugger attaching) and goes on: the thread never left it. */
static inline bool hang_rule_restart(int64_t ret)
{
	return ret <= -512 && ret >= -516;
}

/* A wait that ended by its own timeout: a futex's -ETIMEDOUT, or a
 * poll-family call that returned 0 (nothing came). */
static inline bool hang_rule_timed_out(long nr, int64_t ret)
{
	return (argus_sys_is(nr, ARGUS_SC_FUTEX) && ret == -ETIMEDOUT) ||
	       (hang_rule_loop_nr(nr) && ret == 0);
}


/*
 * Retry loops and idle loops, told apart by what their tries do (the
 * round: the syscalls a thread made since its last sleep).
 *   - a try *failed*: -EAGAIN (= -EWOULDBLOCK: a lock taken with LOCK_NB
 *     or F_SETLK, a queue empty), -EBUSY, -ETIMEDOUT, or a poll-family
 *     call that returned 0 (nothing came);
 *   - a try *worked*: any other call that returned >= 0, except the
 *     plumbing that says nothing of the round (sleeps, sched_yield,
 *     futex: the synchronisation of a lock's fast path).
 * A sleep after a round with a try that worked and none that failed is
 * the rest of a periodic idle loop (a monitor reading /proc then sleeping
 * 100 ms), or of a command that sleeps (sleep(1)): an idle wait.  After a round
 * with a failed try, or with no try at all (a spin on memory, checking a
 * flag between sleeps: it waits on the same thing again), the sleep is a
 * retry loop's, and the stretch goes on.
 */
enum hang_rule_try { HANG_TRY_NONE = 0, HANG_TRY_WORKED = 1, HANG_TRY_FAILED = 2 };

static inline unsigned hang_rule_try(long nr, int64_t ret)
{
	if (argus_sys_is(nr, ARGUS_SC_SLEEP | ARGUS_SC_YIELD | ARGUS_SC_FUTEX) ||
	    hang_rule_restart(ret))
		return HANG_TRY_NONE;
	if (ret == -EAGAIN || ret == -EBUSY || ret == -ETIMEDOUT ||
	    (hang_rule_loop_nr(nr) && ret == 0))
		return HANG_TRY_FAILED;
	return ret >= 0 ? HANG_TRY_WORKED : HANG_TRY_NONE;
}

/* The round's tries (HANG_TRY_* bits, or'ed): is a sleep after it idle? */
static inline bool hang_rule_round_idle(unsigned tries)
{
	return tries == HANG_TRY_WORKED;
}

/* A loop is a loop when it comes round again: a thread's sleeps after
 * rounds that worked are idle waits only once it has made this many.  One
 * alone is a command's lone sleep, or the first sleep of a spin that
 * checks memory between sleeps after doing its work (a deliberate wait,
 * or the start of a retry loop, as before). */
#define HANG_IDLE_ROUNDS 2

/* A hang's kind (both sides sum a stretch up the same way: diag_hangs.c
 * activity(), hang_watch.c deliberate_wait()): a wait this short is a
 * "yield"; this many of them, or this many sleeps of a retry loop, with
 * no one wait covering half the stretch, make it a yield loop. */
#define HANG_SHORT_WAIT_NS 2000000ull
#define HANG_YIELD_LOOP_SHORTS 20
#define HANG_YIELD_LOOP_SLEEPS 3

/* What a stretch of `win` ns was, from its sums: the time asleep in waits
 * and running (or runnable), its longest wait, its short waits and yields,
 * its sleeps of 2 ms or more.  The offline model (diag_hangs.c, activity)
 * and the live watch (hang_watch.c, deliberate_wait) both judge by it.
 * Busy is "running or runnable more than asleep": a thread that computes
 * on a loaded machine may be preempted most of the time, and that is no
 * wait on anyone. */
enum hang_rule_kind { HANG_KIND_BUSY, HANG_KIND_BLOCKED, HANG_KIND_YIELD };

static inline enum hang_rule_kind hang_rule_kind(uint64_t win, uint64_t asleep, uint64_t run,
						 uint64_t longest, uint32_t shorts, uint32_t timed)
{
	if (shorts >= HANG_YIELD_LOOP_SHORTS && longest < win / 2)
		return HANG_KIND_YIELD;         /* a spin on yields or short sleeps */
	if (timed >= HANG_YIELD_LOOP_SLEEPS && longest < win / 2 && asleep > run)
		return HANG_KIND_YIELD;         /* a retry loop: try, sleep, try */
	return run > asleep ? HANG_KIND_BUSY : HANG_KIND_BLOCKED;
}

/* A deliberate stretch (of a thread with no idle wait): blocked, its
 * longest wait a wait for a child (a shell runs every command so) or its
 * only sleep (a command's `sleep 10`): the program's own choice, left out
 * of machine-wide lists and not reported live. */
static inline bool hang_rule_deliberate(enum hang_rule_kind kind, long longest_nr, uint32_t sleeps)
{
	return kind == HANG_KIND_BLOCKED &&
	       (hang_rule_child_nr(longest_nr) || (hang_rule_sleep_nr(longest_nr) && sleeps <= 1));
}

/*
 * Timed poll retries (curl waiting for a response in 1 s poll rounds): a
 * poll-family wait that timed out, followed by another poll-family wait
 * with no try that worked in between (hang_rule_try: only more polls
 * that found nothing), is continued by it: the chain is one wait.  A
 * chain entered with a request outstanding and answered by a reply (the
 * first connection op after it reads the connection written last) is a
 * reply wait, however many fds its polls watch; the polls that return at
 * once inside it are no visits of the loop either.
 */
static inline bool hang_rule_poll_continues(bool prev_poll_timed_out, long nr, unsigned tries)
{
	return prev_poll_timed_out && hang_rule_loop_nr(nr) && !(tries & HANG_TRY_WORKED);
}
#endif
