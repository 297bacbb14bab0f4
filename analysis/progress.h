/* progress.h - progress of long work on stderr, only where a person
 * watches it (issue 15 §2).
 *
 * Shown when, and only when:
 *   - stderr is a terminal (isatty(2)) and the CLI's messages go there
 *     (msg_err() == stderr: not inside the lldb plugin, whose messages
 *     are handed back to lldb);
 *   - the work has lasted more than CLI_PROGRESS_DELAY_NS: a command that
 *     ends within a second prints nothing, so a quick run on a small
 *     trace looks as it always did.
 * Pipes, files and CI logs therefore never see it.  The line is redrawn
 * in place ("\r", at most ten times a second) and erased by
 * progress_end(), so what the command prints after it starts on a
 * clean line.
 *
 * Usage:
 *   struct progress p;
 *   progress_begin(&p, "building the graph", "events");
 *   opts.progress = progress_cb; opts.progress_ctx = &p;
 *   ...the work, which calls progress_cb(&p, done, total)...
 *   progress_end(&p);
 */
#ifndef ARGUS_CLI_PROGRESS_H
#define ARGUS_CLI_PROGRESS_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define CLI_PROGRESS_DELAY_NS 1000000000ull  /* silent for the first second */

struct progress {
	const char *what;        /* "building the graph" */
	const char *unit;        /* "events", "MiB": after the count */
	bool tty;                /* may draw at all (decided at begin) */
	bool shown;              /* a line is on the screen: end erases it */
	uint64_t t0;             /* CLOCK_MONOTONIC ns at begin */
	uint64_t last;           /* ns of the last redraw */
	volatile sig_atomic_t *cancel;    /* non-NULL: progress_cb returns *cancel
	                            (a Ctrl-C flag), so the work stops */
};

/* Starts timing; draws nothing yet. */
void progress_begin(struct progress *p, const char *what, const char *unit);
/* On: draw on stderr (when it is a terminal) even while msg_err() is
 * another stream: a session run for the CLI (argus_session__set_progress).
 * Process-wide. */
void progress_set_terminal(bool on);
/* Draws "WHAT:  42% [#####...] N UNIT" when due.  The shape of the
 * libargus progress callbacks (argus_graph_opts, argus_export_opts):
 * returns non-zero (cancel) only when p->cancel says so. */
int progress_cb(void *p, uint64_t done, uint64_t total);
/* Erases the line if one was drawn. */
void progress_end(struct progress *p);
#endif
