/* diag_query.h - `argus hangs` and `argus diagnose` as structs, for a
 * program that hosts Argus's analysis in process (the lldb plugin).
 *
 * The caller passes the very words it would give the CLI (argv[0] =
 * "diagnose", then FILE, --pid PID, --tid, --threshold, --schema,
 * --no-split, --at, --mark, --pick, --live, --json/--dot ...), parsed by the
 * CLI's own parser (diag_cli_parse), and gets back:
 *   - the hangs of the thread diagnose looks at: struct argus_hang, as
 *     libargus finds them (argus_diag.h);
 *   - the diagnosis: libargus's struct argus_diagnosis, the threads the
 *     report names (the hang's, the culprit's, then each further culprit's:
 *     pid, tid, the function names of its trace stack), the choices the
 *     slice took by default, and the report's text itself (what `argus
 *     diagnose` prints on stdout with the same words: the report, --json
 *     or --dot).
 * The text and the structs come from one run of the CLI's code
 * (diag_run.h): the report is printed from the structs handed back, so
 * the caller never needs to read anything out of the text.
 *
 * One query object keeps one trace's graph: __hangs and __diagnose on
 * words naming the same FILE, --schema and --no-split build it once.
 * Stacks are symbolized as the report does, through the host's symbolizer
 * when one is set (diag_cli_set_symbolizer) and the trace's otherwise.
 *
 * libargus conventions: 0 or -errno, constructors return NULL and set
 * errno, free functions take NULL, nothing is printed: what `argus` would
 * print on stderr for a failed call is kept, argus_diag_query__error().
 * Calls, on any object, are serialized by a process-wide lock: the CLI's
 * code has process-wide state (the host symbolizer, cli_tstr's buffers,
 * cli_err()).  Times: CLOCK_MONOTONIC ns;
 * pid = process (thread group) id, tid = thread id. */
#ifndef ARGUS_DIAG_QUERY_H
#define ARGUS_DIAG_QUERY_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {   /* libargus's headers have no C++ guards of their own */
#endif

#include "argus_diag.h"

struct argus_diag_query;

/* One frame of a trace stack, innermost first. */
struct argus_diag_frame {
	const char *text;        /* as the report prints it: "func+0x1a (f.c:42) [mod]",
	                            escaped for a terminal */
	const char *func;        /* the function's name alone, unescaped; "" when
	                            the frame has none (an address, module+offset) */
};

/* A thread the report names, in the report's order. */
struct argus_diag_thread {
	const char *label;       /* "hang" (the hung thread), "culprit"
	                            (chain[0]) or "then" (chain[1..]) */
	uint32_t pid, tid;
	uint32_t chain;          /* index in diag.chain; UINT32_MAX for "hang" */
	uint8_t cycle;           /* already in the chain above: no frames */
	const struct argus_diag_frame *frames;  /* its trace stack (the wait's,
	                            or the hottest sample's); NULL for "hang" */
	uint32_t nframes;
};

/* Where the slice had two or more ways in and took the default: one way
 * it did not take.  `argus diagnose --pick` answers them in order. */
struct argus_diag_choice {
	uint32_t seg;            /* the segment woken from two or more threads */
	uint32_t edge;           /* the in-edge not taken */
	uint32_t pick;           /* the answer (1-based) that takes it */
	uint32_t pid, tid;       /* the thread at its source */
	const char *text;        /* the report's line for it (no newline) */
};

struct argus_diag_report {
	struct argus_diagnosis diag;         /* libargus's result */
	const char *text;                    /* what argus diagnose prints on stdout */
	const struct argus_diag_thread *threads;
	uint32_t nthreads;
	const struct argus_diag_choice *choices;
	uint32_t nchoices;
	uint32_t nhangs;                     /* hangs it chose from */
};

/* NULL and errno = ENOMEM on failure. */
struct argus_diag_query *argus_diag_query__new(void);
void argus_diag_query__free(struct argus_diag_query *q);

/* The hangs of the thread `argus diagnose` with these words looks at
 * (--tid, else the main thread) at their --threshold (default 2000 ms), in
 * time order: *hangs is malloc'd (free() it; NULL when *n is 0).
 * Returns 0; -EINVAL for words argus would reject (exit 2); -EIO for any
 * other failure argus reports (trace unreadable, no such thread: exit 1);
 * -ENOMEM.  The message: argus_diag_query__error(). */
int argus_diag_query__hangs(struct argus_diag_query *q, int argc, char **argv,
			    struct argus_hang **hangs, uint32_t *n);

/* argus diagnose with these words: *out is the report (free with
 * argus_diag_report__free).  Returns as __hangs; -EIO also when there is
 * no hang to diagnose.  With --until-end[=S], FILE must be a snapshot of
 * the running collector just taken (argus save): the call waits for the
 * hang going on in it to end (cli/until_end.h; up to S seconds, Ctrl-C
 * and the host's until_end_set_tick stop it sooner), replaces FILE with a
 * snapshot of the same window up to now, and diagnoses that; the report
 * says what the wait saw ("until-end" line, "until_end" JSON key). */
int argus_diag_query__diagnose(struct argus_diag_query *q, int argc, char **argv,
			       struct argus_diag_report **out);

/* What argus would have printed on stderr for the last call that failed
 * (one or more lines, the last one ending in a newline); "" after a call
 * that succeeded.  Valid until the next call on q. */
const char *argus_diag_query__error(const struct argus_diag_query *q);

void argus_diag_report__free(struct argus_diag_report *r);

#ifdef __cplusplus
}
#endif
#endif
