/* until_end.h - `argus diagnose --pid PID --until-end[=SECONDS]`: keep the
 * collector recording until the chosen ongoing hang ends, then diagnose it
 * with its real wake-up (docs/diagnosis.md, "Waiting for the end").
 *
 * Who calls what:
 *   - the CLI (cmd_diagnose.c): a snapshot of the running collector into a
 *     private temp dir (until_end_begin, until_end_snapshot), its graph,
 *     until_end_wait, a second snapshot of the same window up to now, its
 *     graph, until_end_annotate, diag_run, until_end_cleanup;
 *   - the lldb plugin, through session.c: the same on the session's
 *     snapshot (FILE, taken by the plugin), which the second snapshot
 *     replaces.
 *
 * When the hang has ended:
 *   - a thread that runs: libargus says so on a fresh snapshot (the hang
 *     that contains the chosen one's middle is no longer ongoing), which
 *     is taken whenever /proc/PID/task/TID/syscall changed (rate-limited),
 *     and every few seconds anyway.  A retry loop changes its syscall line
 *     at every try, but stays one ongoing hang for libargus;
 *   - a thread stopped by a debugger (lldb holds it: its wait cannot
 *     return): when the event that would have woken it arrives
 *     (wake_watch.h: the file lock released, the fd readable, the futex
 *     word changed, the sleep's timer due);
 *   - the thread exited.
 * At the timeout (or Ctrl-C) the diagnosis is of what is known, and says
 * that the hang is still going. */
#ifndef ARGUS_UNTIL_END_H
#define ARGUS_UNTIL_END_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag_front.h"
#include "graph_open.h"
#include "wake_watch.h"

#define UNTIL_END_DEFAULT_S 60          /* --until-end without =SECONDS */
#define UNTIL_END_MAX_S (24 * 3600)

/* Who did what ended the wait (from the second snapshot's trace). */
struct until_end_by {
	uint32_t pid, tid;                  /* 0: nobody named */
	char how[96];                       /* "woke it (wakeup edge)",
	                                       "held the lock (the trace's lock records)",
	                                       "wrote 6 B to the pipe" ... */
	uint64_t ts;                        /* when it acted, 0 unknown */
	char comm[32];                      /* its name (the trace's, else /proc) */
};

struct until_end {
	/* asked */
	uint64_t timeout_ns;
	/* the hang chosen on the first snapshot: its thread (wait.pid,
	 * wait.tid), and the wait it was in then (wait.wait_nr -1: none, a
	 * busy or yield hang; wait.obj_kind: enum ae_obj_kind, 0 none), what
	 * a stopped waiter's watch is set up for */
	struct wake_watch_wait wait;
	uint64_t at_ns;                     /* a time inside it (--at for the end) */
	char picked[160];                   /* why it was taken */
	bool ongoing;                       /* still going at the first snapshot */
	/* what happened */
	bool ended;                         /* it ended while argus waited */
	bool interrupted;                   /* Ctrl-C */
	bool stopped;                       /* the waiter was stopped (a debugger)
	                                       when the wait for its end stopped:
	                                       with `ended`, `event` is what
	                                       would have woken it */
	bool exited;                        /* the thread exited */
	uint64_t waited_ns;                 /* from the first snapshot to the end */
	uint64_t seen_ns;                   /* CLOCK_MONOTONIC when argus saw the end */
	uint64_t end_ns;                    /* the hang's end in the trace (or the
	                                       waking event's time), 0 unknown */
	char watched[160];                  /* what was watched for a stopped waiter */
	char event[160];                    /* what ended it, in words */
	uint32_t checks;                    /* snapshots taken to confirm an end */
	uint32_t lock_holder;               /* a lock wait: a holder /proc/locks
	                                       named when the watch began, 0 none */
	struct until_end_by by;
	/* the private temp dir of the snapshots (0700), and its files */
	char dir[4096];
	char first[4200], check[4200], final[4200];
	uint64_t from_ts;                   /* the window's start, for every snapshot */
	/* the snapshot that showed the end (`check`), its graph built: it is
	 * the second snapshot (until_end_take_graph) */
	struct graph_open_ctx kept;
	bool have_kept;
};

/* Called about 50 times a second while waiting: draw progress, and return
 * non-zero to stop waiting (the user interrupted); once more with waited_ns
 * UINT64_MAX when the wait is over (erase the line).  The lldb plugin sets
 * one (its progress line, lldb's interrupt); without one a line is drawn
 * on stderr when it is a terminal (progress.h).  Process-wide. */
typedef int (*until_end_tick_fn)(void *ctx, uint64_t waited_ns, uint64_t timeout_ns,
				 const char *what);
void until_end_set_tick(until_end_tick_fn fn, void *ctx);

/* "--until-end" or "--until-end=SECONDS" (1..UNTIL_END_MAX_S, decimals
 * allowed): 1 and *ns when arg is one, 0 when it is not, -1 after a usage
 * error. */
int until_end_parse(const char *cmd, const char *arg, uint64_t *ns);

/* Makes ue's private temp dir (under $TMPDIR or /tmp).  0, or 1 after an
 * error line. */
int until_end_begin(const char *cmd, struct until_end *ue, uint64_t timeout_ns);
/* Removes the dir and what it holds (and a graph not taken). */
void until_end_cleanup(struct until_end *ue);

/* Snapshots the running collector's ring into out (from ue->from_ts; 0:
 * the last 2 minutes, and sets ue->from_ts to where that began).  Quiet on
 * success; 1 after an error line (the collector not running...). */
int until_end_snapshot(const char *cmd, struct until_end *ue, const char *out);

/* c: the graph of a snapshot just taken; o: the diagnose flags.  Chooses
 * the hang as diagnose does; when it is going on, waits until it ends, the
 * timeout passes or the user interrupts.  Copies what it needs out of c
 * (it may be closed after).  Returns 0 (ue says what happened), or the
 * exit code after an error line.  The caller then snapshots again
 * (until_end_snapshot) and diagnoses that with until_end_annotate. */
int until_end_wait(const char *cmd, struct graph_open_ctx *c, struct diag_front_opts *o,
		   struct until_end *ue);

/* After until_end_wait: when a snapshot taken to confirm the end showed
 * it, that snapshot (ue->check) is the second one, and its graph moves to
 * c (true; graph_open_close it): no need to snapshot again.  False: take
 * the second snapshot (until_end_snapshot). */
bool until_end_take_graph(struct until_end *ue, struct graph_open_ctx *c);

/* On the graph of the second snapshot: when and by whom the wait ended
 * (ue->end_ns, ue->by), and the flags diag_run takes: o->tid, --at the
 * hang's middle, o->until_end = ue. */
void until_end_annotate(struct graph_open_ctx *c, struct diag_front_opts *o, struct until_end *ue);

/* The report's line(s) ("until-end ..."), and the JSON object of the
 * "until_end" key (docs/diagnosis.md). */
void until_end_fprint(FILE *f, struct graph_open_ctx *c, const struct until_end *ue);
void until_end_fjson(FILE *f, const struct until_end *ue);
#endif
