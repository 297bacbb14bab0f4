/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_diag.h - libargus: hang diagnosis on the event graph
 * (docs/diagnosis.md is the prose version; keep them in step).
 *
 *   1. hangs: intervals where a UI thread did not come back to its
 *      event-loop wait (poll family) for longer than a threshold;
 *   2. classify the UI thread in the hang: busy, blocked or yield;
 *   3. blocked: find a similar segment in normal execution (same thread,
 *      event sets that contain one another), slice backward from what woke
 *      it to get the normal wake-up path, and name the first thread of
 *      that path that was stuck in the hang window: the culprit;
 *   4. recurse on the culprit's own wait (the chain), detecting cycles.
 *
 * All times CLOCK_MONOTONIC ns.  Conventions as in argus_graph.h.
 */
#ifndef ARGUS_DIAG_H
#define ARGUS_DIAG_H

#include <stdbool.h>

#include "argus_graph.h"

enum argus_hang_kind {
	ARGUS_KIND_NONE = 0,
	ARGUS_KIND_BUSY,        /* mostly on CPU */
	ARGUS_KIND_BLOCKED,     /* one long wait */
	ARGUS_KIND_YIELD,       /* many short yields/sleeps/zero-timeout polls */
};

/* argus_hang.flags */
#define ARGUS_HANG_F_LOOP       0x1 /* the thread has a learned idle wait: the
                                       hang is time away from it */
#define ARGUS_HANG_F_DELIBERATE 0x2 /* only waiting for a child (wait4,
                                       waitid) or sleeping: the program's own
                                       choice, left out of machine-wide lists */
#define ARGUS_HANG_F_UNDER      0x4 /* shorter than the threshold (asked for
                                       with --at, or annotated) */
#define ARGUS_HANG_F_DORMANT    0x8 /* a thread seen only asleep: its one wait
                                       began before the trace and never ended
                                       (an idle daemon as much as a hang);
                                       left out of machine-wide lists */
#define ARGUS_HANG_F_UNSETTLED  0x10 /* (argusd's live rule, replayed) still
                                       open at the end, on a request whose
                                       reply was not seen: the full model
                                       may call that wait idle */

struct argus_hang {
	uint32_t tid, pid;
	uint64_t start, end;    /* left / came back to the idle wait (a thread
	                           with no idle wait: the long wait, or the
	                           stretch of runs and short waits) */
	uint32_t seg;           /* segment at the middle of the hang */
	uint8_t ongoing;        /* still not back at the end of the trace */
	uint8_t annotated;      /* an `argus mark` falls inside */
	uint8_t kind;           /* enum argus_hang_kind (argus_diag__activity
	                           over the hang); filled for every hang */
	uint8_t flags;          /* ARGUS_HANG_F_* */
	uint32_t mark;          /* string id of that mark's text, 0 none */
};

/* How a thread's idle wait (where it waits for new work) is found. */
enum argus_idle_rule {
	ARGUS_IDLE_LEARN = 0,   /* learned per thread (docs/diagnosis.md §1) */
	ARGUS_IDLE_POLL,        /* every poll/select/epoll wait is idle */
	ARGUS_IDLE_NONE,        /* no idle wait: any long wait is a hang */
};

/* argus_hang_opts.scope */
enum argus_hang_scope {
	ARGUS_HANGS_THREAD = 0, /* the one thread (tid, or the main thread) */
	ARGUS_HANGS_PROCESS,    /* every thread of pid, longest first */
	ARGUS_HANGS_MACHINE,    /* every user thread in the trace, longest
	                           first; pid ignored */
};

struct argus_hang_opts {
	size_t sz;
	uint32_t pid;           /* the process (required unless MACHINE) */
	uint32_t tid;           /* the thread, 0 = the main thread (tid == pid) */
	uint64_t threshold_ns;  /* 0 = 2 s */
	uint8_t scope;          /* enum argus_hang_scope */
	uint8_t idle_rule;      /* enum argus_idle_rule */
	uint8_t deliberate;     /* 1: machine-wide lists keep deliberate and
	                           dormant waits (ARGUS_HANG_F_DELIBERATE,
	                           ARGUS_HANG_F_DORMANT) too */
	uint8_t pad[5];
};

/* Hangs: in time order for one thread, longest first for a process or the
 * machine; *out is malloc'd (free()). */
/* The order of hang lists (qsort of struct argus_hang): longest first,
 * then the earliest. */
int argus_hang_cmp_longest(const void *a, const void *b);
int argus_diag__hangs(const struct argus_graph *g,
		      const struct argus_hang_opts *opts,
		      struct argus_hang **out, uint32_t *n);

/* Whatever thread tid was doing at `ts`, as a hang-shaped interval even
 * under the threshold (flag ARGUS_HANG_F_UNDER when it is): the away
 * interval, long wait or stretch that contains ts.  -ENOENT when the
 * thread did not exist then. */
int argus_diag__hang_at(const struct argus_graph *g, uint32_t tid, uint64_t ts,
			const struct argus_hang_opts *opts, struct argus_hang *out);

/* ---- which hang (diag_choose.c): one rule for every front end ---------- */
enum argus_hang_why {
	ARGUS_CHOSE_AT = 1,     /* it contains the time asked */
	ARGUS_CHOSE_MARK,       /* it holds the mark asked */
	ARGUS_CHOSE_ONGOING,    /* still going at the end of the trace */
	ARGUS_CHOSE_LONGEST,    /* none still going: the longest */
};
const char *argus_hang_why_str(unsigned why);

struct argus_hang_ask {
	size_t sz;
	uint8_t have_at;        /* 1: the hang that contains at_ns */
	uint8_t pad[7];
	uint64_t at_ns;
	const char *mark;       /* the first hang whose mark contains it */
	uint64_t ongoing_min_ns; /* a hang still going is taken from this
	                           length (a trace of the running system just
	                           taken: ARGUS_LIVE_ONGOING_NS; else the
	                           threshold) */
	uint64_t min_ns;        /* the others: the longest of at least this */
};
#define ARGUS_LIVE_ONGOING_NS 100000000ull  /* 100 ms */

/* Chooses among h[0..n) (argus_diag__hangs' list; g for the marks' text):
 * 0 with *index and *why (enum argus_hang_why); -ENOENT when none fits
 * what was asked; -EINVAL. */
int argus_diag__choose_hang(const struct argus_graph *g, const struct argus_hang *h, uint32_t n,
			    const struct argus_hang_ask *ask, uint32_t *index, unsigned *why);

/* Was t saved from the system running now: the same host, kernel and boot
 * (the offset between CLOCK_REALTIME and CLOCK_MONOTONIC), its last event
 * at most max_age_ns ago?  Then /proc can name who holds what a hang
 * still going at its end waits for (argus_diag_opts.holders). */
bool argus_trace__of_running_system(const struct argus_trace *t, uint64_t max_age_ns);

/* What one thread did in [from, to]. */
struct argus_activity {
	uint8_t kind;           /* enum argus_hang_kind */
	uint64_t oncpu_ns;      /* on CPU within the window */
	uint32_t waits;         /* waits begun within the window */
	uint32_t short_waits;   /* yields, short sleeps, zero-timeout polls */
	uint32_t wait_seg;      /* segment whose wait covers most of the
	                           window (blocked; of waits within 1% of
	                           that, the first), ARGUS_NONE */
	uint64_t wait_ns;       /* how much of the window that wait covers */
	uint32_t busy_seg;      /* the segment with most on-CPU time */
	uint32_t samples;       /* CPU samples within the window */
	uint64_t asleep_ns;     /* all its waits' overlap with the window */
	uint64_t run_ns;        /* its segments' overlap with the window: on
	                           CPU or runnable (preempted) */
	uint32_t sleeps;        /* sleeps (nanosleep, clock_nanosleep) begun
	                           within the window */
};

int argus_diag__activity(const struct argus_graph *g, uint32_t tid,
			 uint64_t from, uint64_t to, struct argus_activity *a);
const char *argus_hang_kind_str(unsigned kind);

/* ---- similarity (paper §4.5) ------------------------------------------ */
struct argus_similar {
	uint32_t seg;
	double score;           /* lower is better */
	int64_t dt_ns;          /* candidate start - reference start */
	uint8_t contains;       /* 1 candidate ⊇ reference, 2 ⊆, 3 equal */
};

/* Segments of the same thread similar to `seg` (one normalized event set
 * contains the other), excluding [ex_from, ex_to], ranked best first;
 * at most `max`.  The wait that ends a segment counts with its object's
 * identity (the same pipe, socket, futex); when that finds nothing, with
 * its kind only.  Returns how many, or -errno. */
int argus_diag__similar(const struct argus_graph *g, uint32_t seg,
			uint64_t ex_from, uint64_t ex_to,
			struct argus_similar *out, uint32_t max);
/* The same with the wait's object counted by its kind only, whatever the
 * identity search finds: what the diagnosis falls back to when no run
 * outside the hang waited on the same object (argus similar --kind). */
int argus_diag__similar_by_kind(const struct argus_graph *g, uint32_t seg,
				uint64_t ex_from, uint64_t ex_to,
				struct argus_similar *out, uint32_t max);

/* ---- backward slice ------------------------------------------------------ */
struct argus_step {
	uint32_t seg;           /* a segment on the path */
	uint32_t edge;          /* the edge that leads from it to the previous
	                           step (toward the start), ARGUS_NONE first */
	uint8_t choices;        /* strong in-edges it had (>= 2: a choice) */
};

/* Picks the in-edge to follow when a segment has >= 2 strong in-edges:
 * returns the index into ids[0..n) or -1 to stop.  NULL = default (the
 * latest in-edge that woke the segment, else the latest). */
typedef int (*argus_pick_fn)(void *ctx, const struct argus_graph *g,
			     uint32_t seg, const uint32_t *ids, uint32_t n);

/* The default pick: the in-edge that woke the segment, else the latest
 * (by receive time).  Pick functions can fall back to it. */
int argus_diag__default_pick(const struct argus_graph *g, const uint32_t *ids,
			     uint32_t n);

/* Walk backward from `seg` (the segment that woke the normal node): the
 * only inter-thread in-edge, else the weak intra-thread one, asking `pick`
 * at two or more.  Stops after a segment of thread `stop_tid`, at a
 * segment with no in-edge, at one that ended before `floor_ts`, or after
 * `max` steps.  Returns the number of steps written. */
int argus_diag__slice(const struct argus_graph *g, uint32_t seg,
		      uint32_t stop_tid, uint64_t floor_ts, argus_pick_fn pick,
		      void *pick_ctx, struct argus_step *out, uint32_t max);

/* ---- the whole diagnosis --------------------------------------------- */
#define ARGUS_DIAG_MAX_PATH 32
#define ARGUS_DIAG_MAX_CHAIN 8

/* Which rule named a culprit (argus_culprit.rule). */
enum argus_culprit_rule {
	ARGUS_RULE_SELF = 0,    /* the hung thread itself: busy or yield */
	ARGUS_RULE_NORMAL_PATH, /* woke the thread in the similar normal run */
	ARGUS_RULE_WAKER,       /* no normal run: ended this very wait (late) */
	ARGUS_RULE_PEER,        /* holds the other end of the wait (live) */
	ARGUS_RULE_HANDOFF,     /* was handed work just before the wait */
	ARGUS_RULE_LOCK,        /* holds the file lock the thread wants */
	ARGUS_RULE_MUTEX,       /* owns the mutex the thread waits on (live) */
	ARGUS_RULE_DATAFLAG,    /* reached through the flag a spinning thread
	                           waits on: the flag's writer, or who the
	                           writer waits for (diag_flag.c) */
	ARGUS_RULE_MUTEX_HOLDER, /* held the pthread mutex the thread waited
	                           for, as the interposer recorded it when
	                           the wait began (AE_MUTEX_WAIT) */
	ARGUS_RULE_COND_SIGNALLER, /* signalled the condition variable the
	                           thread waited on (the interposer's
	                           records): the signal that woke it, or in a
	                           wait nobody ended, the thread that last
	                           signalled that condvar */
	ARGUS_RULE_WORK_ITEM, /* ran the work item the thread handed it
	                           and waited for (diag_work.c) */
	ARGUS_RULE_QUEUED_BEHIND, /* ran the item queued ahead of the one the
	                           thread waited for (diag_work.c) */
	ARGUS_RULE_CHILD,       /* a child process the thread waits for in
	                           wait4/waitid, still running (live) */
	ARGUS_RULE_TRACER,      /* ptrace-stopped the previous thread, which
	                           cannot answer until it resumes it (live) */
	ARGUS_RULE_HOLDER_RULE, /* named by the application itself: a schema
	                           `holder` rule whose function is on the
	                           previous thread's wait stack ran its command
	                           (argus_diag_opts.wait_holders; live) */
};
const char *argus_culprit_rule_str(unsigned rule);

struct argus_culprit {
	uint32_t tid, pid;
	uint8_t kind;           /* what it did in the window */
	uint8_t cycle;          /* 1: this thread is already in the chain */
	uint8_t late;           /* 1: no normal run of the wait was found;
	                           normal_seg is who woke it late instead */
	uint8_t holder;         /* 1: named as the live holder of the other
	                           end of the previous thread's wait
	                           (argus_diag_opts.holders) */
	uint8_t asked;          /* 1: no normal run, no waker, no holder: the
	                           thread the previous one handed work to
	                           (its last edge out) just before it waited */
	uint32_t seg;           /* its segment in the window */
	uint32_t normal_seg;    /* where it normally woke the next thread */
	uint64_t from, to;      /* the window it was judged on */
	uint64_t wait_ns;       /* blocked: how long */
	int32_t wait_nr;        /* blocked: the syscall */
	uint32_t stack;         /* trace stack id (its wait or hottest sample) */
	uint8_t rule;           /* enum argus_culprit_rule */
	/* rules work-item and queued-behind: the item the previous thread
	 * waited for (address, callback 0 unknown, enum aip_work_kind), how
	 * long it sat in the queue (to its begin, or to the window's end) */
	uint64_t item, item_fn, item_queued_ns;
	uint8_t item_kind;
	/* queued-behind: the item that ran ahead of it, on thread ahead_tid
	 * (the culprit), for ahead_ns (to its end, or to the window's end
	 * when ahead_done is 0) */
	uint8_t ahead_kind, ahead_done;
	uint32_t ahead_tid;
	uint64_t ahead, ahead_fn, ahead_ns;
	/* Live state (argus_diag_opts.live, the older .holders/.mutex_owner):
	 * which source named this entry, ARGUS_LIVE_NONE when the trace did;
	 * whether the thread is stopped now (enum argus_live_stop, asked for
	 * every entry but a cycle's: a stopped thread answers nobody, and its
	 * own wait is not followed); and in a ptrace stop, its tracer (the
	 * next entry, rule tracer), 0 none or the user's own debugger. */
	uint8_t live_source;    /* enum argus_live_source */
	uint8_t live_stop;      /* enum argus_live_stop */
	uint8_t live_only;      /* 1: not in the trace, only the live system
	                           knows it (a child or a tracer that did
	                           nothing in the trace): kind NONE, seg
	                           ARGUS_NONE, no stack */
	uint32_t live_tracer;
	/* ns the thread sat stopped by a signal (SIGSTOP, SIGTSTP) in the
	 * window before another thread continued it (the next entry, by
	 * SIGCONT): its kind then says what it did once continued */
	uint64_t stopped_ns;
};

struct argus_diagnosis {
	struct argus_hang hang;
	uint8_t kind;           /* the UI thread's class in the hang */
	uint32_t hang_seg;      /* the UI segment that blocked / ran */
	uint32_t normal_seg;    /* the similar normal segment, ARGUS_NONE */
	uint32_t nsimilar;      /* candidates seen (at most 64 are ranked) */
	uint8_t normal_relaxed; /* 1: they waited on the same kind of object,
	                           not on the hang's object itself */
	struct argus_step path[ARGUS_DIAG_MAX_PATH];
	uint32_t npath;
	struct argus_culprit chain[ARGUS_DIAG_MAX_CHAIN]; /* [0] = culprit */
	uint32_t nchain;
	uint8_t cycle;          /* the chain came back to a thread in it */
	uint64_t timeout_ns;    /* cycle broken by this timeout, 0 none */
	uint32_t timeout_tid;
	uint32_t inspected;     /* nodes the user had to look at */
	uint32_t choices;       /* places where the slice had to choose */
	uint32_t choice_seg[ARGUS_DIAG_MAX_PATH]; /* ...those segments */
	/* The data-flag flow (yield hangs, diag_flag.c). */
	uint32_t flag_writer;   /* tid of the flag's writer followed, 0 none */
	uint32_t flag_edge;     /* the normal run's dataflag edge it came by
	                           (valid when flag_writer) */
	uint64_t flag_addr;     /* the flag's address (valid when flag_writer) */
	uint8_t flag_hint;      /* 1: a yield hang and no flag writes to follow:
	                           the report says to run `argus flag`, then
	                           `argus watch` */
	uint8_t flag_late;      /* 1: flag_edge is the write that ended this
	                           hang (no normal run's write was in the
	                           trace), not a normal run's */
	uint32_t live_hang_tracer; /* live: the pid ptrace-tracing the hung
	                           thread (the user's debugger), 0 none: never
	                           blamed as a chain entry's tracer */
};

/* Which processes hold an IPC object open now, on the live system the
 * trace was just taken from (the lldb plugin; /proc/PID/fd): up to max
 * pids into pids, returns how many.  obj: a unix socket's inode (the
 * other end's, as the trace records peers), a pipe's inode.  The older,
 * narrower form of argus_live_fn's ARGUS_ASK_HOLDERS. */
typedef uint32_t (*argus_holders_fn)(void *ctx, unsigned obj_kind, uint64_t obj,
				     uint32_t *pids, uint32_t max);

/* ---- live state (docs/diagnosis.md, "Live holders") ---------------------
 * A wait still open at the end of a trace of the running system has no
 * waker in the trace yet: the live system can say whom it waits for.
 * graphlib reads no /proc itself; it asks argus_diag_opts.live (the CLI's
 * diag_front_live answers from /proc) and records which source answered in
 * each chain entry (argus_culprit.live_source). */
enum argus_live_source {
	ARGUS_LIVE_NONE = 0,    /* the trace named it */
	ARGUS_LIVE_LOCKS,       /* /proc/locks (+ /proc/PID/fdinfo): holds
	                           the file lock (flock, POSIX, OFD) */
	ARGUS_LIVE_FD_PEER,     /* /proc/PID/fd: holds the other end of a
	                           unix socket, or a pipe */
	ARGUS_LIVE_TCP_PEER,    /* /proc/net/tcp{,6}, then /proc/PID/fd: holds
	                           the other end of a loopback TCP connection */
	ARGUS_LIVE_TCP_LISTENER, /* ...the connection is not accepted yet:
	                           holds the socket listening on its port */
	ARGUS_LIVE_CHILDREN,    /* /proc/PID/task/TID/children: a child that
	                           wait4/waitid waits for */
	ARGUS_LIVE_MUTEX_OWNER, /* /proc/PID/mem: glibc's owner of the mutex */
	ARGUS_LIVE_PI_OWNER,    /* /proc/PID/mem: the owner tid in a PI futex */
	ARGUS_LIVE_TRACER,      /* /proc/PID/status TracerPid: ptrace-stopped
	                           the previous entry */
	ARGUS_LIVE_HOLDER_RULE, /* a schema `holder` rule's command named it
	                           (argus_holder_rule.h) */
	ARGUS_LIVE_UNIX_LISTENER, /* NETLINK_SOCK_DIAG, then /proc/PID/fd: the
	                           unix connection is not accepted yet: holds
	                           the socket in whose queue it waits */
	ARGUS_LIVE_SOURCE_MAX
};
/* "locks" "fd-peer" "tcp-peer" "tcp-listener" "children" "mutex-owner"
 * "pi-owner" "tracer" "holder-rule" "unix-listener"; NULL for NONE and out
 * of range. */
const char *argus_live_source_str(unsigned source);

/* Whether a thread is stopped now (argus_culprit.live_stop). */
enum argus_live_stop {
	ARGUS_LIVE_RUNNING = 0, /* not stopped (running, or in a wait) */
	ARGUS_LIVE_STOP_SIGNAL, /* state T: SIGSTOP, SIGTSTP, SIGTTIN/OU */
	ARGUS_LIVE_STOP_PTRACE, /* state t: a ptrace stop (a debugger,
	                           strace between two syscalls) */
};
/* "signal" "ptrace"; NULL for RUNNING and out of range. */
const char *argus_live_stop_str(unsigned stop);

/* What the diagnosis asks (argus_live_query.ask). */
enum argus_live_ask {
	ARGUS_ASK_HOLDERS = 1,  /* who holds the other end of the object
	                           (obj_kind, obj, peer) as the trace records
	                           it: AE_OBJ_UNIX (peer: the other end's
	                           inode), AE_OBJ_PIPE (obj: the inode),
	                           AE_OBJ_TCP (obj: local ip:port, peer: remote
	                           ip:port, as argus_events.h packs them),
	                           AE_OBJ_FILE (obj: the file; its lock
	                           holders).  pids[]: processes */
	ARGUS_ASK_CHILDREN,     /* the children of process pid that thread
	                           tid's wait4/waitid waits for; arg: wait4's
	                           pid argument (> 0 that child, -1 any, 0 or
	                           < -1 a process group) or ARGUS_ASK_ANY_CHILD
	                           when unknown (waitid, or its entry was not
	                           traced).  pids[]: processes */
	ARGUS_ASK_LOCK_OWNER,   /* the owner of the lock whose futex word is at
	                           address arg in process pid (a glibc mutex, a
	                           PI futex).  pids[0]: its tid */
	ARGUS_ASK_THREAD,       /* thread tid of process pid: stopped, and by
	                           which tracer (answer.stop, .tracer) */
};
#define ARGUS_ASK_ANY_CHILD INT64_MIN

struct argus_live_query {
	size_t sz;              /* sizeof: a callback reads a field only
	                           when it fits (offsetof + size <= sz) */
	uint32_t ask;           /* enum argus_live_ask */
	uint32_t obj_kind;      /* HOLDERS: enum ae_obj_kind */
	uint64_t obj, peer;     /* HOLDERS */
	uint32_t pid, tid;      /* CHILDREN, LOCK_OWNER, THREAD */
	int64_t arg;            /* CHILDREN, LOCK_OWNER */
};

#define ARGUS_LIVE_MAX_PIDS 16
struct argus_live_answer {
	size_t sz;              /* set by the diagnosis (zeroed): a callback
	                           writes a field only when it fits */
	uint8_t source;         /* enum argus_live_source that answered
	                           (HOLDERS: which /proc table; 0: the
	                           diagnosis infers it from the kind) */
	uint8_t stop;           /* THREAD: enum argus_live_stop */
	uint8_t pad[2];
	uint32_t tracer;        /* THREAD: the pid ptrace-tracing it (stopped
	                           or not), 0 none, and 0 when the tracer is
	                           the caller's own (the lldb the plugin runs
	                           in, its lldb-server): a ptrace stop with
	                           tracer 0 is the user's debugger's, no
	                           cause */
	uint32_t n;             /* pids[] filled */
	uint32_t pids[ARGUS_LIVE_MAX_PIDS];
};

/* Answers one query about the running system: 0 with *a filled (n may be
 * 0: nobody), -ENOENT nothing known, -EOPNOTSUPP a query it does not
 * answer (then the older callbacks are asked, if set). */
typedef int (*argus_live_fn)(void *ctx, const struct argus_live_query *q,
			     struct argus_live_answer *a);

struct argus_diag_opts {
	size_t sz;
	uint32_t depth;         /* culprit's culprit levels, 0 = 3 */
	argus_pick_fn pick;     /* NULL = default pick */
	void *pick_ctx;
	argus_holders_fn holders; /* NULL: the trace only (a saved trace).
	                           Also asked for AE_OBJ_FILE: the processes
	                           holding a file lock on it (/proc/locks) */
	void *holders_ctx;
	/* The owner of the mutex whose futex word is at uaddr in process pid,
	 * live (glibc's pthread_mutex_t keeps its owner's tid): 0 and *tid,
	 * or non-zero when it is no mutex.  NULL: the trace only. */
	int (*mutex_owner)(void *ctx, uint32_t pid, uint64_t uaddr, uint32_t *tid);
	void *mutex_ctx;
	/* Live state, every source (argus_live_fn): asked before holders and
	 * mutex_owner, which are asked only for what it does not answer
	 * (-EOPNOTSUPP).  NULL: the older callbacks alone. */
	argus_live_fn live;
	void *live_ctx;
	/* The schema's `holder` rules (argus_holder_rule.h): who holds what
	 * thread tid of process pid waits for, by the application's own
	 * account (PostgreSQL's lock manager: pg_blocking_pids).  Asked, live,
	 * for a wait nobody has ended yet (or retried after the thread's own
	 * timeout and still open: diag_holder_rule.c), before the search for
	 * normal runs, with the trace stack id of the open wait (a wait
	 * without one is not asked).  The host symbolizes
	 * it, and for a rule whose function is on it runs the rule's command
	 * (graphlib runs nothing): up to max pids (processes) into pids,
	 * returns how many; 0 when no rule applies or none answered.  The
	 * chain entry it names has rule holder-rule and live_source
	 * ARGUS_LIVE_HOLDER_RULE.  NULL: not asked. */
	uint32_t (*wait_holders)(void *ctx, uint32_t pid, uint32_t tid, uint32_t stack,
				 uint32_t *pids, uint32_t max);
	void *wait_holders_ctx;
	/* Who ended the hang's wait, when the trace cannot show it: a
	 * debugger holds the waiter stopped, so its wait never returns and no
	 * wake-up is traced, but the host watched for (`--until-end`) and saw
	 * what would have woken it, done by thread ended_by_tid at
	 * ended_by_ns (the byte written into its pipe, the lock released).
	 * That thread is the culprit (rule waker: late), from its segment at
	 * that time.  0: none known. */
	uint32_t ended_by_tid;
	uint64_t ended_by_ns;
};

int argus_diag__diagnose(const struct argus_graph *g,
			 const struct argus_hang *hang,
			 const struct argus_diag_opts *opts,
			 struct argus_diagnosis *d);

/* ---- file locks: flock, fcntl (diag_locks.c) ----------------------------
 * The trace records every flock() and fcntl() (entry: the request; exit:
 * the result and the file, docs/collector.md "Locks").  These read them
 * back: a thread's attempts, and who held a lock at some time.
 *
 * In the graph, the sys_enter event of flock/fcntl keeps the decoded
 * request instead of arg0 (argus_gevent.val, see argus_lock__unpack): the
 * fd is not needed there (the exit has it, with the file's object).
 *
 * What is approximate:
 *   - the owner of a lock is taken to be the process that took it.  For
 *     POSIX locks that is the kernel's rule; flock and OFD locks belong to
 *     the open file description, which children inherit (`flock FILE CMD`
 *     forks CMD with the lock): the process that took it is named;
 *   - a lock dropped without a traced unlock (close() of the fd, which is
 *     not traced, drops POSIX locks) is seen to end only when someone
 *     else takes a conflicting lock on the range, or its process exits;
 *   - locks taken before the trace began are unknown;
 *   - ranges are kept in the graph as 32-bit start and 24-bit length:
 *     one that does not fit, and one relative to SEEK_CUR/SEEK_END, is
 *     widened to a range that contains it (start clipped, to EOF).
 */
enum argus_lock_kind {
	ARGUS_LOCK_FLOCK = 1,   /* flock(2): whole file, per open file */
	ARGUS_LOCK_POSIX = 2,   /* fcntl F_SETLK/F_SETLKW: per process */
	ARGUS_LOCK_OFD = 3,     /* fcntl F_OFD_SETLK/F_OFD_SETLKW */
};
enum argus_lock_opcode {
	ARGUS_LOCK_SHARED = 1,  /* LOCK_SH, F_RDLCK */
	ARGUS_LOCK_EXCL = 2,    /* LOCK_EX, F_WRLCK */
	ARGUS_LOCK_UNLOCK = 3,  /* LOCK_UN, F_UNLCK */
};
#define ARGUS_LOCK_EOF 0        /* len: to the end of the file, and beyond */

/* One lock request, decoded from a sys_enter record. */
struct argus_lock_req {
	uint8_t kind;           /* enum argus_lock_kind */
	uint8_t op;             /* enum argus_lock_opcode; 0: the fcntl's
	                           struct flock could not be read */
	uint8_t wait;           /* 1: a blocking request (F_SETLKW, flock
	                           without LOCK_NB) */
	uint8_t pad[5];
	uint64_t start, len;    /* bytes [start, start + len); len 0 = to EOF;
	                           flock: 0, 0 */
};

/* The lock request of syscall nr with the six arguments of its sys_enter
 * record (argus_event.f[ARGUS_F_SE_ARG0..]): 0 and *r filled, -ENOENT when
 * it is not one (another syscall, another fcntl cmd).  A range relative to
 * SEEK_CUR/SEEK_END is reported from 0 to EOF (the file position is not
 * known); a negative l_len is turned into the range it stands for. */
int argus_lock__decode(int64_t nr, const uint64_t args[6], struct argus_lock_req *r);
/* The request as the graph keeps it in argus_gevent.val of a flock/fcntl
 * sys_enter (0: not a lock request), and back.  Layout: bits 0-1 kind,
 * 2-3 op, 4 wait, 8-39 start, 40-63 len (widened when they do not fit). */
uint64_t argus_lock__pack(const struct argus_lock_req *r);
int argus_lock__unpack(uint64_t val, struct argus_lock_req *r);
/* "flock" "posix" "ofd" / "shared" "exclusive" "unlock"; NULL when out
 * of range. */
const char *argus_lock_kind_str(unsigned kind);
const char *argus_lock_op_str(unsigned op);

/* One lock attempt, from the trace. */
struct argus_lock_op {
	uint32_t tid, pid;
	uint64_t ts;            /* sys_exit time; for an attempt still
	                           waiting (ret -EINPROGRESS): its entry */
	uint64_t file;          /* AE_OBJ_FILE object: dev<<32 ^ ino; 0 when
	                           the fd was not a file the exit resolved */
	uint8_t kind;           /* enum argus_lock_kind */
	uint8_t op;             /* enum argus_lock_opcode, 0 unknown */
	uint8_t wait;           /* 1 blocking request (F_SETLKW, flock
	                           without LOCK_NB) */
	uint8_t pad[5];
	int64_t ret;            /* 0 ok, -EAGAIN/-EWOULDBLOCK/-EACCES
	                           refused, -ERESTARTSYS (-512; the program
	                           sees EINTR) a wait cut by a signal, ...;
	                           -EINPROGRESS: no exit by `to` (or by the
	                           end of the trace): still waiting */
	uint64_t start, len;    /* the range, as in argus_lock_req */
};

/* Lock attempts of thread tid in [from, to] (by ts), time order, and the
 * attempt it was still in at `to` (ret -EINPROGRESS, whenever it began);
 * *out malloc'd (free()), NULL when *n is 0.  -ENOENT: no such thread. */
int argus_diag__lock_ops(const struct argus_graph *g, uint32_t tid, uint64_t from,
			 uint64_t to, struct argus_lock_op **out, uint32_t *n);

/* Who holds a lock on `file` at `ts` that conflicts with a request of
 * type `op` (exclusive: any lock; shared: an exclusive one; 0 or unlock:
 * any lock), other than process not_pid: the last successful acquisition
 * by another process not followed by its unlock, by a conflicting
 * acquisition of someone else, or by its process's exit.  0 and *h filled
 * (the acquisition), -ENOENT none.  The whole file: flock and fcntl locks
 * both count.  O(events of the trace). */
int argus_diag__lock_holder(const struct argus_graph *g, uint64_t file, uint64_t ts,
			    uint32_t not_pid, uint8_t op, struct argus_lock_op *h);

/* The same for one attempt (a refused try, or one still waiting, from
 * argus_diag__lock_ops): its file, time, process, type, and range; and
 * only locks of its family (flock locks do not conflict with fcntl ones on
 * Linux; POSIX and OFD locks do).  This is what names the holder of
 * SQLite's byte-range locks: 0 and *h filled, -ENOENT none. */
int argus_diag__lock_blocker(const struct argus_graph *g, const struct argus_lock_op *attempt,
			     struct argus_lock_op *h);

#endif /* ARGUS_DIAG_H */
