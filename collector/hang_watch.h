/* hang_watch.h - argusd's live hang detector for watched threads.
 *
 * argusd drains every raw BPF record; it hands each one to
 * argus_hang_watch__record() too (collector.h's record tap).  For the few
 * threads it watches, the detector keeps when each last "came back", and
 * argus_hang_watch__check() (called between drains, with the time up to
 * which every record has been drained) reports a hang once a watched
 * thread has not come back for the threshold, and again when it ends.
 *
 * The live rule (docs/collector.md, "Always-on hang reports", says what it
 * gets wrong): a thread comes back when it
 *   1. returns from a wait that is not a sleep (nanosleep,
 *      clock_nanosleep): a loop of short sleeps or sched_yield() calls
 *      does not come back, a thread woken from a lock, a read or a futex
 *      does;
 *   2. returns from a poll-family call (poll, ppoll, select, pselect6,
 *      epoll_wait, epoll_pwait, epoll_pwait2), blocking or not: it is back
 *      in its event loop;
 *   3. enters an idle wait: a poll-family wait with nothing outstanding,
 *      i.e. no write/send to a pipe or socket since its segment began (the
 *      last return from a blocking wait).  A poll-family wait entered after
 *      such a write is a request waiting for its reply (client libraries
 *      wait inside poll), and counts like any other wait.
 * While in an idle wait the thread is at rest and never hung; otherwise it
 * is hung when it has not come back for threshold ns.  The hang began when
 * it last came back and ends when it comes back again (or exits).
 *
 * Cost: for every record, a bit test of the tid(s) it names in a 64 Ki-bit
 * filter, and a hash lookup only when the bit is set; exec, fork and
 * rename records (rare) are also matched against the watched names.
 *
 * Single-threaded, like the collector.  The library never prints.
 * Times are CLOCK_MONOTONIC ns, tid = kernel task id, pid = its tgid.
 */
#ifndef ARGUS_HANG_WATCH_H
#define ARGUS_HANG_WATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct argus_hang_watch;

/* Why a thread is watched (bits). */
#define ARGUS_WATCH_PID 0x1          /* named by --watch PID (or TID) */
#define ARGUS_WATCH_COMM 0x2         /* its process's name matched --watch COMM */
#define ARGUS_WATCH_INTERACTIVE 0x4  /* connected to a display server */

/* What a live hang looks like when it is reported (the full model
 * diagnoses the snapshot afterwards; this is only the live view). */
enum argus_live_kind {
	ARGUS_LIVE_BLOCKED = 1, /* in one wait for at least half of the hang */
	ARGUS_LIVE_YIELD = 2,   /* slept or yielded 4+ times since it came back */
	ARGUS_LIVE_BUSY = 3,    /* running or runnable */
};

struct argus_live_hang {
	uint64_t id;          /* 1, 2, 3... in the order hangs were seen */
	uint32_t tid, pid;
	uint32_t uid;         /* the process's real uid when it was found or
	                         took its watched name (the keeper's per-uid
	                         bounds); 0 when unknown (a replay) */
	char comm[16];        /* process (main thread) name, NUL-terminated */
	unsigned why;         /* ARGUS_WATCH_* bits */
	enum argus_live_kind kind;
	int32_t sys_nr;       /* the wait's syscall when blocked, else -1 */
	bool request;         /* blocked in a poll-family wait entered after a
	                         write: a request waiting for its reply */
	uint64_t start_ns;    /* when the thread last came back */
	uint64_t end_ns;      /* when it came back again; 0 while ongoing */
	bool exited;          /* it ended because the thread exited */
	bool shutdown;        /* ...by itself (exit_group), away from its
	                         event loop: the app shutting down, which the
	                         full model lists as no hang (the live side
	                         could not know it when it reported) */
	bool loop;            /* the thread had been seen in an idle wait (a
	                         loop thread: hung away from its loop) */
	bool late;            /* found only when it ended: no check ran while
	                         it was past the threshold (argusd was
	                         descheduled or busy); its BEGAN and ENDED are
	                         reported together */
};

struct argus_hang_watch_opts {
	size_t sz;              /* sizeof(struct argus_hang_watch_opts) */
	uint64_t threshold_ns;  /* 0 = 2 s */
	/* Who may be watched by name: called when a process not watched yet
	 * takes a watched name (exec, fork, rename), with its pid; true to
	 * watch it, its real uid in *uid.  Any process can name itself
	 * anything, so argusd watches by name only the uids the admin named
	 * (--watch-uid).  NULL = any process (a replay of a recording). */
	bool (*comm_ok)(void *ctx, uint32_t pid, uint32_t *uid);
	void *comm_ok_ctx;
};

/* NULL and errno on failure. */
struct argus_hang_watch *argus_hang_watch__new(const struct argus_hang_watch_opts *opts);
void argus_hang_watch__free(struct argus_hang_watch *w);

/* Watch every process whose name (comm, first 15 bytes) is `comm`, from
 * now on: its main thread is added when an exec, fork or rename record
 * gives it that name.  Processes already running are added by the caller
 * (argus_watch_thread__from_proc()).  0 or -errno. */
int argus_hang_watch__add_comm(struct argus_hang_watch *w, const char *comm);

/* A thread to watch and what it was doing when found. */
struct argus_watch_thread {
	uint32_t tid, pid;
	uint32_t uid;         /* its real uid */
	char comm[16];        /* its process's name */
	unsigned why;         /* ARGUS_WATCH_* */
	bool blocked;         /* asleep (in a syscall or not) when found */
	bool stopped;         /* in a debugger's stop (ptrace): at rest, like
	                         an idle wait (a SIGSTOP's stop is not) */
	int32_t sys_nr;       /* that syscall, or -1 */
	uint64_t since_ns;    /* when it was found (its "came back" time) */
};

/* Fill *t from /proc/TID (status, stat, syscall) at time now_ns (uid: the
 * real uid of its status).  A poll-
 * family wait it is found in counts as idle (what it wrote before cannot
 * be known).  0, or -errno (-ESRCH: no such thread). */
int argus_watch_thread__from_proc(uint32_t tid, uint64_t now_ns,
				  struct argus_watch_thread *t);

/* Start watching t->tid (or add t->why to its reasons).  0 or -errno. */
int argus_hang_watch__add_thread(struct argus_hang_watch *w,
				 const struct argus_watch_thread *t);
/* True when tid is watched. */
bool argus_hang_watch__watching(const struct argus_hang_watch *w, uint32_t tid);
/* True when tid's stretch away rests on a request whose reply has not
 * been seen: it blocked in a poll-family wait after an output, and no
 * connection op since has said whether its wake-up was the reply.  A hang
 * still open then is one the full model may judge idle once it sees that
 * op (or, at the end of a recording, its absence): the live side errs
 * toward keeping (docs/diagnosis.md §1, "One model, two runs"). */
bool argus_hang_watch__unsettled(const struct argus_hang_watch *w, uint32_t tid);
/* Threads watched now. */
uint32_t argus_hang_watch__count(const struct argus_hang_watch *w);

/* The record tap: one raw BPF record (argus_events.h), in drain order. */
void argus_hang_watch__record(struct argus_hang_watch *w, const void *rec, size_t size);

/* A recorded event (trace_format.h), handed to __record() as the raw
 * record the collector made it from (hang_watch_replay.c): the live rule
 * replayed over a recording (`argus hangs FILE --live-rule`, the tests).
 * t resolves its string ids (comms). */
struct argus_trace;
struct argus_event;
void argus_hang_watch__event(struct argus_hang_watch *w, const struct argus_trace *t,
			     const struct argus_event *ev);

/* Hang began (crossed the threshold) or ended. */
enum argus_hang_change { ARGUS_HANG_BEGAN = 1, ARGUS_HANG_ENDED = 2 };
typedef void (*argus_hang_fn)(void *ctx, enum argus_hang_change what,
			      const struct argus_live_hang *h);

/* Reports what changed up to now_ns, the time up to which every record has
 * been handed to __record(): hangs that crossed the threshold (BEGAN,
 * once per hang) and hangs that ended (ENDED, once, after their BEGAN).
 * A hang that came and went between two checks is reported late, its
 * BEGAN (late set, end_ns 0) right before its ENDED.
 * Returns the number of reports. */
int argus_hang_watch__check(struct argus_hang_watch *w, uint64_t now_ns,
			    argus_hang_fn fn, void *ctx);

/* Counters for `argus status`. */
uint64_t argus_hang_watch__seen(const struct argus_hang_watch *w);
#endif
