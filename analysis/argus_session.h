/* argus_session.h - one analysis session: what every front end of Argus
 * (the `argus` CLI, the lldb plugin, argusd's hang keeper) asks of a trace,
 * decided in one place (docs/design.md, "One analysis session").
 *
 * A session opens a trace file, or first takes the live ring through
 * argusd (__save_live), and then:
 *   - lists hangs, machine-wide, of a process or of one thread
 *     (__list_hangs, __hangs);
 *   - chooses the hang by libargus's one policy (argus_diag__choose_hang:
 *     the asked time, the mark, the ongoing hang, the longest) and says
 *     which and why;
 *   - diagnoses it, with the live holders of an open wait when the trace
 *     is of this running system (docs/diagnosis.md, "Live holders") and
 *     the schema's holder rules, or first waits for the hang's end
 *     (--until-end);
 *   - symbolizes stacks through a symbolizer the host hands in
 *     (__set_symbolizer: lldb's target in the plugin);
 *   - draws the diagnosis as the report (text, --json, --dot) and as the
 *     HTML page (__report).
 * None of the front ends decides any of this itself.
 *
 * The caller passes the words a user types (argv[0] = "diagnose",
 * "hangs" or "report", then FILE, --pid PID, --tid, --threshold, --schema,
 * --no-split, --at, --mark, --pick, --live, --json/--dot ...), so a flag
 * means the same in every front end, and gets back structs:
 *   - the hangs: struct argus_hang, as libargus finds them (argus_diag.h);
 *   - the diagnosis: libargus's struct argus_diagnosis, the threads the
 *     report names (the hang's, the culprit's, then each further culprit's:
 *     pid, tid, the function names of its trace stack), the choices the
 *     slice took by default, which hang was taken and why, and the
 *     report's text rendered from those structs (what `argus diagnose`
 *     prints with the same words: the report, --json or --dot).
 *
 * One session keeps one trace's graph: calls on words naming the same
 * FILE, --schema and --no-split build it once.
 *
 * libargus conventions: 0 or -errno, constructors return NULL and set
 * errno, free functions take NULL, nothing is printed: what `argus` would
 * print on stderr for a failed call is kept, argus_session__error();
 * -EINVAL is a usage error (the CLI's exit 2), -EIO any other failure it
 * reports (exit 1).  Calls, on any session, are serialized by a
 * process-wide lock (the host symbolizer, msg_tstr's buffers and msg_err()
 * are process-wide).  Times: CLOCK_MONOTONIC ns; pid = process (thread
 * group) id, tid = thread id. */
#ifndef ARGUS_SESSION_H
#define ARGUS_SESSION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {   /* libargus's headers have no C++ guards of their own */
#endif

#include "argus_diag.h"

struct argus_session;

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
	const char *picked;                  /* which hang was taken, and why
	                                        ("the ongoing hang of the main
	                                        thread ...") */
};

/* NULL and errno = ENOMEM on failure. */
struct argus_session *argus_session__new(void);
void argus_session__free(struct argus_session *q);

/* The hangs of the thread `argus diagnose` with these words looks at
 * (--tid, else the main thread) at their --threshold (default 2000 ms), in
 * time order: *hangs is malloc'd (free() it; NULL when *n is 0).
 * Returns 0; -EINVAL for words argus would reject (exit 2); -EIO for any
 * other failure argus reports (trace unreadable, no such thread: exit 1);
 * -ENOMEM.  The message: argus_session__error(). */
int argus_session__hangs(struct argus_session *q, int argc, char **argv,
			    struct argus_hang **hangs, uint32_t *n);

/* argus diagnose with these words: *out is the report (free with
 * argus_diag_report__free).  Returns as __hangs; -EIO also when there is
 * no hang to diagnose, -ENODATA (the CLI's exit 3) when the thread has
 * none but slept from before the trace began, its wait older than the
 * trace: a longer snapshot may hold the hang.  With --until-end[=S], FILE must be a snapshot of
 * the running collector just taken (argus save): the call waits for the
 * hang going on in it to end (until_end.h; up to S seconds, Ctrl-C
 * and the host's until_end_set_tick stop it sooner), replaces FILE with a
 * snapshot of the same window up to now, and diagnoses that; the report
 * says what the wait saw ("until-end" line, "until_end" JSON key). */
int argus_session__diagnose(struct argus_session *q, int argc, char **argv,
			       struct argus_diag_report **out);

/* What argus would have printed on stderr for the last call that failed
 * (one or more lines, the last one ending in a newline); "" after a call
 * that succeeded.  Valid until the next call on q. */
const char *argus_session__error(const struct argus_session *q);

void argus_diag_report__free(struct argus_diag_report *r);


/* ---- the host's hooks (process-wide) ---------------------------------- */

/* A symbolizer that knows a process better than the trace does (the lldb
 * plugin: the attached process, through lldb's target and its debug
 * info).  fn gets the lookup address (a return address already moved back
 * into its call) and fills buf with one frame as argus_sym__format prints
 * it ("func+0x1a (file.c:42) [module]") and func with the function's name
 * alone ("" if none), returning 0; non-zero leaves the frame to the
 * trace's symbolizer.  NULL fn: the trace's for everything. */
typedef int (*argus_session_sym_fn)(void *ctx, uint32_t pid, uint64_t ip, char *buf, size_t len,
				    char *func, size_t func_len);
void argus_session__set_symbolizer(argus_session_sym_fn fn, void *ctx);
/* Where argusd lives (its control socket is found through it; holder
 * commands of the built-in schema are beside it): for a host whose own
 * binary is not argus (lldb). */
void argus_session__set_bin_dir(const char *dir);
/* --until-end's wait calls fn about 50 times a second: the host draws its
 * progress line and returns non-zero to stop waiting (the user's
 * interrupt); a last call with waited_ns UINT64_MAX says the wait is
 * over.  Without one, a line is drawn on stderr when it is a terminal. */
typedef int (*argus_session_tick_fn)(void *ctx, uint64_t waited_ns, uint64_t timeout_ns,
				     const char *what);
void argus_session__set_until_end_tick(argus_session_tick_fn fn, void *ctx);
/* On: where the slice must choose, __diagnose asks the user on the
 * terminal (stderr, stdin) instead of taking the default.  The CLI on a
 * TTY.  Off by default. */
void argus_session__set_interactive(struct argus_session *q, bool on);
/* On: long steps (building the graph, saving the ring) draw a progress
 * line on stderr when it is a terminal, as the CLI does.  Off by default:
 * a host's terminal is its own (lldb). */
void argus_session__set_progress(struct argus_session *q, bool on);

/* The words of `argus diagnose`, `argus hangs` or `argus report` (argv[0]
 * the command, then FILE and its flags) run on q, printed as argus prints
 * them: the output on stdout, the messages on stderr.  Returns argus's
 * exit code (0, 1, 2; 3 for -ENODATA).  The CLI's commands, and argusd's hang keeper (in
 * a child process, its output into files). */
int argus_session__run(struct argus_session *q, int argc, char **argv);

/* Only parses the words (argv[0] "diagnose", "hangs" or "report"): 0, or
 * -EINVAL after a usage message.  Lets a host refuse a bad flag before it
 * takes a snapshot. */
int argus_session__check_words(struct argus_session *q, int argc, char **argv);

/* ---- the live ring ------------------------------------------------------ */

/* Snapshots the running collector's ring into a new file out (0600,
 * O_EXCL: safe_file.h; ARGUS_OUT_FORCE in out_flags replaces a file argus
 * did not make): the last last_ns before the collector's now (0: all of
 * it).  *from_ts (may be NULL) gets where the snapshot begins.  -EIO
 * after a message (the collector not running, the file refused). */
int argus_session__save_live(struct argus_session *q, const char *out, unsigned out_flags,
			     uint64_t last_ns, uint64_t *from_ts);

/* ---- hangs, any scope --------------------------------------------------- */

struct argus_hang_list {
	struct argus_hang *hangs;            /* in the order `argus hangs` lists them */
	uint32_t n;
	unsigned scope;                      /* enum argus_hang_scope: thread with
	                                        --tid, process with --pid, else machine */
	const char *text;                    /* what `argus hangs` prints with these
	                                        words (the list, or --json) */
};
/* `argus hangs` with these words (argv[0] "hangs"; --saved is the CLI's,
 * not a trace's).  *out: free with argus_hang_list__free. */
int argus_session__list_hangs(struct argus_session *q, int argc, char **argv,
			      struct argus_hang_list **out);
void argus_hang_list__free(struct argus_hang_list *l);

/* ---- the report page ---------------------------------------------------- */

/* `argus report` with these words (argv[0] "report"; diagnose's flags, and
 * -o FILE.html [--force]): the diagnosis diagnose would print, drawn as one
 * self-contained HTML page written to FILE (0600, O_EXCL: safe_file.h).
 * *summary (malloc'd, free it) is its one line: hang, culprit, file, size,
 * times. */
int argus_session__report(struct argus_session *q, int argc, char **argv, char **summary);

#ifdef __cplusplus
}
#endif
#endif
