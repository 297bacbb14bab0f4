/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_holder_rule.h - libargus: the schema's `holder` rules
 * (docs/schema.md, "Holders only the application knows").
 *
 *   holder FUNC[,FUNC...] [process=GLOB] [as USER] [timeout MS] run COMMAND [ARG...]
 *
 * A rule maps a wait site -- a function on the waiting thread's stack,
 * like PostgreSQL's ProcSleep -- to a command that names the holder of
 * what the thread waits for (PostgreSQL: pg_blocking_pids()).  libargus
 * parses the rules and decides when one is asked (argus_diag.h,
 * argus_diag_opts.wait_holders: a wait nobody has ended yet, live); it
 * never runs anything itself.  The host (the CLI and the lldb plugin,
 * cli/holder_cmd.c) symbolizes the wait's stack, matches FUNC, runs
 * COMMAND without root and with a timeout, and reads its output with
 * argus_holder__parse_pids() as untrusted input.
 *
 * Conventions as in argus_graph.h: 0 or -errno.
 */
#ifndef ARGUS_HOLDER_RULE_H
#define ARGUS_HOLDER_RULE_H

#include <stddef.h>
#include <stdint.h>

#define ARGUS_HOLDER_MAX_FUNCS 16       /* FUNCs of one rule */
#define ARGUS_HOLDER_FUNC_LEN 128       /* a FUNC, with its NUL */
#define ARGUS_HOLDER_MAX_ARGS 24        /* COMMAND and its ARGs */
#define ARGUS_HOLDER_USER_LEN 33        /* a user name, with its NUL */
#define ARGUS_HOLDER_TIMEOUT_MS 2000    /* without `timeout` */
#define ARGUS_HOLDER_MAX_TIMEOUT_MS 60000
#define ARGUS_HOLDER_MAX_RULES 256      /* holder lines of one schema */
#define ARGUS_HOLDER_MAX_PIDS 16        /* pids an answer may name */
#define ARGUS_HOLDER_MAX_OUTPUT 4096    /* bytes of output read */

struct argus_holder_rule {
	uint32_t line;          /* its line in the schema */
	uint32_t timeout_ms;    /* 1..ARGUS_HOLDER_MAX_TIMEOUT_MS */
	uint32_t nfuncs;        /* 1..ARGUS_HOLDER_MAX_FUNCS */
	uint32_t argc;          /* 1..ARGUS_HOLDER_MAX_ARGS */
	const char *funcs[ARGUS_HOLDER_MAX_FUNCS]; /* exact function names */
	/* argv[0]: an absolute path, or a bare name (no '/') the host looks
	 * up; the others may hold %p (the waiting thread's pid), %t (its
	 * tid) and %% (a '%'), expanded by argus_holder__expand().  argv[argc]
	 * is NULL. */
	const char *argv[ARGUS_HOLDER_MAX_ARGS + 1];
	char process[16];       /* fnmatch glob on the waiter's process name
	                           (a comm, at most 15), "" any */
	char user[ARGUS_HOLDER_USER_LEN]; /* run as this user (never root);
	                           "": as the waiting process's real uid */
	char *text;             /* owns the strings above */
};

struct argus_schema;

/* The schema's holder rules, in file order: how many, and the i-th (NULL
 * when out of range, or s is NULL). */
uint32_t argus_schema__nholders(const struct argus_schema *s);
const struct argus_holder_rule *argus_schema__holder(const struct argus_schema *s, uint32_t i);

/* One ARG with %p -> pid, %t -> tid, %% -> '%' (decimal), into out[len]:
 * 0, -EINVAL for another '%' sequence, -ENAMETOOLONG when it does not fit. */
int argus_holder__expand(const char *arg, uint32_t pid, uint32_t tid, char *out, size_t len);

/* A holder command's output, read strictly: decimal pids (1..4194304)
 * separated by spaces, tabs, line ends, commas or braces
 * (pg_blocking_pids() prints "{1234,5678}"), nothing else.  Repeated pids
 * are kept once.  Returns how many (0: it named nobody), -EINVAL for any
 * other byte or a pid out of range, -E2BIG for more than max pids. */
int argus_holder__parse_pids(const char *out, size_t len, uint32_t *pids, uint32_t max);

#endif /* ARGUS_HOLDER_RULE_H */
