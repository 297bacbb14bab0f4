/* diag_run.h - the work of `argus diagnose` on an opened graph, split from
 * its printing so that two callers share one computation:
 *   - cmd_diagnose.c (the CLI): parse, graph_open_trace, diag_run to stdout;
 *   - session.c (the structured API the lldb plugin calls): the same
 *     diag_run into a memory stream, and its structs (the diagnosis, the
 *     symbolized stacks, the choices not taken) handed back as they are.
 *
 * The report is printed from what diag_run keeps (the culprits' stacks are
 * symbolized once into run->stacks, the choices into run->choices), so
 * what the text says and what the structs say cannot differ. */
#ifndef ARGUS_DIAG_RUN_H
#define ARGUS_DIAG_RUN_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "argus_diag.h"
#include "diag_front.h"
#include "graph_open.h"

#define DIAG_RUN_MAX_CHOICES 32

/* One place where the slice took the default among two or more ways in,
 * and one of the ways it did not take (the report's "choices" lines). */
struct diag_choice {
	uint32_t seg;            /* the segment woken from two or more threads */
	uint32_t edge;           /* the in-edge not taken */
	uint32_t pick;           /* answering --pick with this (1-based) takes it */
	uint32_t pid, tid;       /* the thread at the edge's source */
	char text[192];          /* the report's line, without the newline:
	                            "  at #S not taken: TYPE from #N COMM P/T (--pick K)" */
};

/* One frame of a symbolized trace stack. */
struct diag_frame {
	char *text;              /* as the report prints it (escaped: msg_tstr) */
	char *func;              /* the function's name alone, raw; "" none */
};

struct diag_run_stack {
	struct diag_frame *f;    /* innermost first */
	uint32_t n;
};

struct diag_run {
	struct argus_diagnosis *d;       /* NULL until the diagnosis ran */
	uint32_t nhangs;                 /* hangs it chose from (the report says) */
	char picked[160];                /* which hang was taken, and why */
	struct diag_choice choices[DIAG_RUN_MAX_CHOICES];
	uint32_t nchoices;
	/* d->chain[i]'s trace stack, symbolized once with
	 * diag_front_stack_funcs (the text report leaves out a cycle entry's,
	 * --json shows it); not for --dot without DIAG_RUN_STACKS */
	struct diag_run_stack stacks[ARGUS_DIAG_MAX_CHAIN];
	/* diagnose --until-end: what the wait saw (o->until_end), printed
	 * first in the report and as "until_end" in the JSON; NULL none */
	const struct until_end *until_end;
	/* diagnose --live: what the schema's holder rules did (holder_cmd.h),
	 * owned (diag_run_free); NULL when not live */
	struct holder_cmd *holders;
};

/* diag_run flags */
#define DIAG_RUN_TTY    1u   /* ask the user at a choice (stdin/stderr) */
#define DIAG_RUN_STACKS 2u   /* symbolize the stacks even for --dot */

/* After graph_open_trace(c, "diagnose", &o->g): chooses the hang (--at,
 * --mark, else the ongoing one, else the longest; none of the main thread:
 * the process's other threads), diagnoses it, and writes the report --
 * text, --json or --dot as o says -- to out.  pre/npre: the hangs of the
 * thread that diag_front_hang_opts(o, ARGUS_HANGS_THREAD) finds, when the
 * caller already has them (copied), else NULL.  Errors go through
 * msg_error() (msg_err()).  Returns argus diagnose's exit code; run is
 * filled as far as it got: diag_run_free() it in any case. */
int diag_run(struct graph_open_ctx *c, struct diag_front_opts *o, const struct argus_hang *pre,
	     uint32_t npre, unsigned flags, FILE *out, struct diag_run *run);
void diag_run_free(struct diag_run *run);
/* Only the choice of the hang, as diag_run makes it (run->picked,
 * run->nhangs filled; nothing printed but errors): 0 and *chosen, or the
 * exit code.  diag_run_free(run) after. */
int diag_run_choose(struct graph_open_ctx *c, struct diag_front_opts *o, const struct argus_hang *pre,
		    uint32_t npre, struct diag_run *run, struct argus_hang *chosen);
/* The exit code (of diag_run, diag_run_choose and `argus diagnose`) when
 * the thread has no hang in the trace but slept from before it began:
 * a longer trace may hold its hang (the lldb plugin then takes one). */
#define DIAG_RUN_BEFORE_TRACE 3
/* The report's verdict line, in words, without "verdict   " ("circular
 * wait between ...").  For `argus report`, which draws what diag_run kept. */
void diag_run_verdict(struct graph_open_ctx *c, const struct argus_diagnosis *d, char *buf,
		      size_t len);
/* The text report, or the --json object, of a run whose diagnosis ran
 * (run->d): what diag_run printed, again, to f. */
void diag_run_print(FILE *f, struct graph_open_ctx *c, const struct diag_run *run, bool json);
#endif
