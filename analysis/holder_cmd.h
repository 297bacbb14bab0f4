/* holder_cmd.h - the schema's `holder` rules, run by the CLI and the lldb
 * plugin for `diagnose --live` (docs/schema.md, "Holders only the
 * application knows"; the rules: graphlib/argus_holder_rule.h).
 *
 * libargus asks (argus_diag_opts.wait_holders) with a waiting thread and
 * its wait stack; holder_cmd_wait_holders symbolizes the stack, and for
 * the first rule whose function is on it (the user's --schema first, then
 * the built-in ones: PostgreSQL's) runs the rule's command:
 *   - never as root: as the waiting process's real uid, gid and groups
 *     (/proc/PID/status), or as the rule's `as USER`; a waiter that runs
 *     as root is skipped, and said so;
 *   - never through a shell: argv is the rule's words, %p/%t expanded;
 *   - with a timeout (the rule's, default 2000 ms): its process group is
 *     killed at the deadline; RLIMIT_CPU too;
 *   - no fds but stdin /dev/null, stdout a pipe (4 KiB read at most) and
 *     stderr /dev/null; the environment is PATH=/usr/bin:/bin and LC_ALL=C;
 *     no new privileges (PR_SET_NO_NEW_PRIVS);
 *   - its output is untrusted: pids only (argus_holder__parse_pids), at
 *     most 16, each an existing process other than the waiter, and an
 *     exit status of 0; anything else is no answer.
 * What each rule did is kept for the report (text and --json). */
#ifndef ARGUS_HOLDER_CMD_H
#define ARGUS_HOLDER_CMD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "argus_diag.h"
#include "argus_holder_rule.h"
#include "graph_open.h"

#define HOLDER_CMD_MAX_CALLS 8  /* commands run by one diagnosis */
#define HOLDER_CMD_MAX_GROUPS 64

/* The schema's built-in rules, always loaded (the user's --schema adds
 * to them): PostgreSQL's heavyweight lock waits. */
extern const char holder_cmd_builtin_schema[];
#define HOLDER_CMD_BUILTIN_NAME "<built-in>"

enum holder_state {
	HOLDER_ANSWERED = 1,    /* named one or more processes */
	HOLDER_NOBODY,          /* ran, and named nobody */
	HOLDER_FAILED,          /* ran, and gave no answer (timeout, exit
	                           status, output not pids...) */
	HOLDER_SKIPPED,         /* not run (the waiter runs as root, argus is
	                           not root, no such user or command...) */
};

/* One rule that applied to one waiting thread, and what came of it. */
struct holder_call {
	uint32_t pid, tid;      /* the waiting thread */
	uint8_t state;          /* enum holder_state */
	char rule[160];         /* "<built-in>:4", "app.schema:12" */
	char func[ARGUS_HOLDER_FUNC_LEN]; /* the rule's function on the stack */
	char path[256];         /* the program run ("" not resolved) */
	char argv[512];         /* its words, expanded, joined by spaces */
	char words[1024];       /* the same words, each NUL-terminated */
	uint32_t argc;          /* how many words */
	uint32_t uid;           /* whom it ran as (when it ran) */
	char user[33];          /* that uid's name, "" unknown */
	uint64_t ms;            /* how long it ran */
	uint32_t pids[ARGUS_HOLDER_MAX_PIDS], npids; /* the answer */
	char why[224];          /* HOLDER_FAILED/SKIPPED: why, in words */
};

struct holder_cmd;

/* For diag_run (o->live): the rules of c->schema (named schema_path in
 * the report) and the built-in ones.  NULL when out of memory. */
struct holder_cmd *holder_cmd_new(struct graph_open_ctx *c, const char *schema_path);
void holder_cmd_free(struct holder_cmd *h);
/* argus_diag_opts.wait_holders, ctx = a holder_cmd. */
uint32_t holder_cmd_wait_holders(void *ctx, uint32_t pid, uint32_t tid, uint32_t stack,
				 uint32_t *pids, uint32_t max);

/* What the rules did, in order (h NULL: nothing). */
uint32_t holder_cmd_ncalls(const struct holder_cmd *h);
const struct holder_call *holder_cmd_call(const struct holder_cmd *h, uint32_t i);
/* The call that named chain entry k (rule holder-rule), NULL none. */
const struct holder_call *holder_cmd_call_of(const struct holder_cmd *h,
					     const struct argus_culprit *k);

/* The report's lines: under a holder-rule culprit, which rule named it
 * and what its command said; before "inspected", every rule that applied
 * and gave no answer.  And the same in --json: the culprit's
 * ,"holder_rule":{...} (nothing for other rules) and the top-level
 * ,"holder_rules":[...] (always; [] when no rule applied). */
void holder_cmd_print_culprit(FILE *f, const struct holder_cmd *h, const struct argus_culprit *k);
void holder_cmd_print_notes(FILE *f, const struct holder_cmd *h);
void holder_cmd_json_culprit(FILE *f, const struct holder_cmd *h, const struct argus_culprit *k);
void holder_cmd_json_calls(FILE *f, const struct holder_cmd *h);

/* ---- the parts, for tests ---------------------------------------------- */
struct holder_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[HOLDER_CMD_MAX_GROUPS];
};
/* The real uid, gid and groups of process pid (/proc/PID/status), or of
 * user (getpwnam, getgrouplist).  0; -EPERM for uid 0 (never root);
 * -ENOENT, -errno otherwise; why[len] says it in words. */
int holder_cmd_cred_of_pid(uint32_t pid, struct holder_cred *cr, char *why, size_t len);
int holder_cmd_cred_of_user(const char *user, struct holder_cred *cr, char *why, size_t len);
/* The program a rule's COMMAND names: an absolute path as it is, a bare
 * name beside argus (ctl_bin_dir), else in /usr/bin, /bin.  It must be a
 * regular, executable file owned by root or by uid, and writable by
 * neither group nor others.  0 with path[len]; -errno and why. */
int holder_cmd_resolve(const char *cmd, uint32_t uid, char *path, size_t len, char *why,
		       size_t wlen);
/* Runs path with argv (argv[0] first, NULL-terminated) as cr (no change
 * when argus is not root and cr is its own uid; refused otherwise, and
 * always for uid 0), for at most timeout_ms: 0 when it exited 0, with its
 * output in out[0..*n) (at most cap bytes; *n = cap + 1 never: more is an
 * error); -ETIMEDOUT, -E2BIG (output over cap), -ECHILD (exit status not
 * 0: why says), -EPERM, -errno; *ms how long it ran. */
int holder_cmd_exec(const char *path, char *const argv[], const struct holder_cred *cr,
		    uint32_t timeout_ms, char *out, size_t cap, size_t *n, uint64_t *ms, char *why,
		    size_t wlen);
/* The output of a command, checked: argus_holder__parse_pids, and every
 * pid a process that exists now (/proc/PID) and is not waiter_pid.
 * Returns how many (0: nobody), -EINVAL and why. */
int holder_cmd_check_output(const char *out, size_t n, uint32_t waiter_pid, uint32_t *pids,
			    uint32_t max, char *why, size_t wlen);
#endif
