/* step_front.h - shared by `argus step`, `argus step-diff` and `argus flag`
 * (cmd_step.c, cmd_step_diff.c, cmd_flag.c): opening a thread with errors
 * a user can act on, and printing instructions, inputs and loops. */
#ifndef ARGUS_STEP_CLI_H
#define ARGUS_STEP_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "argus_step.h"


/*
 * `argus step` and `argus flag` in three parts: parse argv, open the
 * thread, run.  The CLI opens the thread with ptrace (step_front_open); a
 * host that owns the process (the lldb plugin) parses with the same
 * functions, opens the thread over its own backend
 * (argus_step__open_backend) and calls the same run, so the text and the
 * JSON are the same.  parse (the options' tables and usage are beside
 * it, parse_opts.h): 0, or the exit code after printing the error (2
 * usage, 1 a bad --normal file), or ARGUS_OPT_HELP (< 0) after printing
 * the help to stdout (exit 0).  run: takes s and closes it (ptrace
 * detaches: the thread runs on; lldb's backend leaves it stopped), prints
 * the result, returns the exit code.
 */
struct step_front_step_opts {
	uint32_t pid, tid;          /* tid 0: pid */
	uint32_t count;             /* instructions (default 100; 1,000,000
				       with --until) */
	uint32_t timeout;           /* --syscall-timeout, ms */
	const char *until, *record; /* point into argv */
	struct argus_step_cond *cond; /* parsed --until (owned) */
	bool json, fast;
	bool host;                  /* set by a host: the thread is stopped,
				       not detached, after run (messages) */
};
int step_front_step_parse(int argc, char **argv, struct step_front_step_opts *o);
int step_front_step_run(struct argus_stepper *s, const struct step_front_step_opts *o);
void step_front_step_opts_free(struct step_front_step_opts *o);
/* --fast: the thread steps itself (argus_step__record_fast), then the
 * recording is printed or saved as the ptrace path does.  Exit code. */
int step_front_step_fast(uint32_t pid, uint32_t tid, uint32_t count, uint32_t timeout,
			 const char *record, bool json);

struct step_front_flag_opts {
	uint32_t pid, tid, max, timeout_s, syscall_ms;
	const char *normal, *record;  /* point into argv */
	struct argus_step_rec *normal_rec; /* --normal, loaded by parse (owned) */
	bool json;
	bool host;                  /* as in step_front_step_opts */
	bool watch;                 /* --watch: arm `argus watch` on the flag,
	                               naming the stepped thread its reader */
};
int step_front_flag_parse(int argc, char **argv, struct step_front_flag_opts *o);
int step_front_flag_run(struct argus_stepper *s, const struct step_front_flag_opts *o);
void step_front_flag_opts_free(struct step_front_flag_opts *o);

/* argus_step__open_pid() with one error line on failure (NULL). */
struct argus_stepper *step_front_open(const char *cmd, uint32_t pid, uint32_t tid,
				    uint32_t syscall_timeout_ms);

/* Set by SIGINT/SIGTERM while stepping (the handlers are installed by
 * step_front_catch_signals): the loops stop and detach cleanly. */
extern volatile int step_front_interrupted;
void step_front_catch_signals(void);

/* "wait_for_display_flag+0x1c" or "0x55..." */
const char *step_front_where(const struct argus_step_rec *r, const struct argus_step_insn *in,
			   char *buf, size_t len);
/* One instruction as text: index, address, symbol, disassembly, changed
 * registers and memory operands. */
void step_front_print_insn(const struct argus_step_rec *r, size_t i);
/* One instruction as a JSON object. */
void step_front_json_insn(const struct argus_step_rec *r, size_t i);
void step_front_json_input(const struct argus_step_input *in);
void step_front_json_loop(const struct argus_step_loop *l);

#endif
