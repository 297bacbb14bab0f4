/* parse_opts.h - the one option parser of every front end: each `argus`
 * command (cli/cmd_*.c), the words the analysis session is given
 * (diagnose, hangs, report: diag_opts.c, whoever types them: the CLI, the
 * lldb plugin, argusd's hang keeper) and the step front ends.  A flag thus
 * means the same, and fails the same way, everywhere.
 *
 * The shape is git's parse-options: a command describes its options in a
 * table of struct argus_opt, ended by OPT_END(), next to its code; the
 * same table parses argv and prints `argus CMD --help`, from which
 * scripts/gen-manpages.py writes the man page and the bash completion.
 *
 *   --name VALUE, --name=VALUE, -n VALUE, -nVALUE, -n=VALUE  all the same
 *   --                 ends the options: what follows is positional
 *   -h, --help         anywhere before `--`: the help, nothing else runs
 *   -, -5              positional (stdin, a negative number: the command
 *                      judges it), as is anything not starting with '-'
 *
 * Errors are one line on msg_err(), "argus CMD: --pid wants a positive
 * number, got 'x'", then the synopsis (msg_usage_error); the command
 * exits 2.  The synopsis is the last parsed command's (msg_set_synopsis),
 * so the command's own later usage errors show it too.
 *
 * Invariant: a value pointer is written only when its option is given
 * and its value is good; defaults are the caller's initial values. */
#ifndef ARGUS_PARSE_OPTS_H
#define ARGUS_PARSE_OPTS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum argus_opt_type {
	ARGUS_OPT_END,
	ARGUS_OPT_INCLUDE,   /* value: another table (shared flags), spliced here */
	ARGUS_OPT_BOOL,      /* no value: *(bool *)value = true */
	ARGUS_OPT_SET_INT,   /* no value: *(int *)value = defval */
	ARGUS_OPT_U32,       /* *(uint32_t *)value, decimal, in [min, max] */
	ARGUS_OPT_U64,       /* *(uint64_t *)value, decimal or 0x hex, in [min, max] */
	ARGUS_OPT_U32_LIST,  /* repeatable: appended to *(struct argus_opt_list *)value */
	ARGUS_OPT_STRING,    /* *(const char **)value = the word itself */
	ARGUS_OPT_DURATION,  /* *(uint64_t *)value ns ("30s", "1500ms": units.h), in [min, max] */
	ARGUS_OPT_SIZE,      /* *(uint64_t *)value bytes ("512M": units.h), in [min, max] */
	ARGUS_OPT_CALLBACK,  /* cb(cmd, opt, arg): 0, or 2 after msg_usage_error */
};

enum {
	ARGUS_OPT_NOARG = 1 << 0,   /* CALLBACK: takes no value (arg is NULL) */
	ARGUS_OPT_OPTARG = 1 << 1,  /* the value only as --name=VALUE; alone: arg NULL */
	ARGUS_OPT_ONCE = 1 << 2,    /* given twice is an error */
	ARGUS_OPT_HIDDEN = 1 << 3,  /* left out of the help */
};

struct argus_opt;
typedef int (*argus_opt_cb)(const char *cmd, const struct argus_opt *opt, const char *arg);

struct argus_opt {
	enum argus_opt_type type;
	char short_name;         /* 'o' for -o; 0 none */
	const char *long_name;   /* "pid" for --pid; NULL none */
	void *value;             /* where the value goes (CALLBACK: its context) */
	const char *argh;        /* the value's name in the help: "PID" */
	const char *help;        /* prose, joined and wrapped to 80 columns; a
	                            line indented or with a 3-space gap is a
	                            table row, printed as written */
	unsigned flags;          /* ARGUS_OPT_* above */
	uint64_t min, max;       /* numbers, durations, sizes: the accepted range
	                            (both 0: any) */
	argus_opt_cb cb;
	intptr_t defval;         /* SET_INT: the value stored */
};

#define OPT_END()                    { .type = ARGUS_OPT_END }
#define OPT_INCLUDE(table)           { .type = ARGUS_OPT_INCLUDE, .value = (void *)(table) }
#define OPT_(t, s, l, v, a, h)       .type = (t), .short_name = (s), .long_name = (l), \
				     .value = (v), .argh = (a), .help = (h)
#define OPT_BOOL(s, l, v, h)         { OPT_(ARGUS_OPT_BOOL, s, l, v, NULL, h) }
#define OPT_SET_INT(s, l, v, i, h)   { OPT_(ARGUS_OPT_SET_INT, s, l, v, NULL, h), .defval = (i) }
#define OPT_U32(s, l, v, a, h, lo, hi) { OPT_(ARGUS_OPT_U32, s, l, v, a, h), .min = (lo), .max = (hi) }
#define OPT_U64(s, l, v, a, h, lo, hi) { OPT_(ARGUS_OPT_U64, s, l, v, a, h), .min = (lo), .max = (hi) }
#define OPT_U32_LIST(s, l, v, a, h, lo, hi) \
	{ OPT_(ARGUS_OPT_U32_LIST, s, l, v, a, h), .min = (lo), .max = (hi) }
#define OPT_STRING(s, l, v, a, h)    { OPT_(ARGUS_OPT_STRING, s, l, v, a, h) }
#define OPT_DURATION(s, l, v, a, h, lo, hi) \
	{ OPT_(ARGUS_OPT_DURATION, s, l, v, a, h), .min = (lo), .max = (hi) }
#define OPT_SIZE(s, l, v, a, h, lo, hi) { OPT_(ARGUS_OPT_SIZE, s, l, v, a, h), .min = (lo), .max = (hi) }
#define OPT_CALLBACK(s, l, ctx, a, h, fn) { OPT_(ARGUS_OPT_CALLBACK, s, l, ctx, a, h), .cb = (fn) }
#define OPT_CALLBACK_F(s, l, ctx, a, h, f, fn) \
	{ OPT_(ARGUS_OPT_CALLBACK, s, l, ctx, a, h), .flags = (f), .cb = (fn) }
/* Another type with flags (ARGUS_OPT_ONCE, _HIDDEN): OPT_() and .flags,
 * { OPT_(ARGUS_OPT_STRING, 0, "dir", &dir, "DIR", "..."), .flags = ARGUS_OPT_ONCE } */

/* A repeatable number (--pid 1 --pid 2): v[0..n), at most max of them. */
struct argus_opt_list {
	uint32_t *v;
	uint32_t n, max;
};

/* What a command says of itself, beside its table. */
struct argus_usage {
	const char *cmd;         /* "diagnose": errors read "argus diagnose: ..." */
	const char *synopsis;    /* "argus diagnose FILE --pid PID [...]\n", one
	                            line per form, continuations indented */
	const char *about;       /* what it does, lines indented two spaces;
	                            printed between the synopsis and the options
	                            (NULL none) */
};

/* The parse's answer when it is not a count of positionals. */
#define ARGUS_OPT_HELP  (-1)     /* -h/--help: the help was printed to stdout */
#define ARGUS_OPT_ERROR (-2)     /* a usage error was printed */

enum {
	/* the first positional ends the options (argus mark TEXT..., a
	 * command to run): it and all after it are kept as they are */
	ARGUS_OPTS_STOP_AT_NON_OPTION = 1 << 0,
	/* `--` is kept as the first of the positionals after it, so the
	 * command can tell `-- CMD` from a bare CMD */
	ARGUS_OPTS_KEEP_DASHDASH = 1 << 1,
};

/* Parses argv[1..argc) (argv[0] is the command's name) against opts and
 * moves the positionals, in order, to argv[0..n); returns n, ARGUS_OPT_HELP
 * or ARGUS_OPT_ERROR.  argv[n] is set to NULL when n < argc. */
int argus_opts_parse(const struct argus_usage *u, const struct argus_opt *opts, int argc,
		     char **argv, unsigned flags);
/* The exit code of a parse that did not return a count: 0 after the help,
 * 2 after an error. */
static inline int argus_opts_exit(int rc)
{
	return rc == ARGUS_OPT_HELP ? 0 : 2;
}
/* `argus CMD --help`: "usage: " and the synopsis, the about text, then
 * the options, one per line (or more), their help aligned. */
void argus_opts_usage(FILE *f, const struct argus_usage *u, const struct argus_opt *opts);
/* A positive decimal uint32_t ("a number" errors like the parser's):
 * for callbacks and words that are numbers (--pick's list, ids). */
int argus_opts_u32(const char *cmd, const char *what, const char *s, uint64_t lo, uint64_t hi,
		   uint32_t *out);
#endif
