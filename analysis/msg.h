/* msg.h - how every front end of the analysis says what went wrong:
 * one line "argus CMD: what", on a stream a host may redirect.
 *
 * The CLI prints to stderr; a program that hosts the analysis in process
 * (the lldb plugin through argus_session.h) collects the lines instead
 * (msg_set_err), so nothing is printed behind its back.  After a usage
 * error comes the synopsis of the command whose options were parsed last
 * (parse_opts.h registers it): none before any parse.  The command
 * "argusd" is the daemon, whose lines read "argusd: what". */
#ifndef ARGUS_MSG_H
#define ARGUS_MSG_H
#include <stdio.h>

/* The stream msg_error() and msg_usage_error() write to: stderr unless
 * msg_set_err() gave another (NULL: stderr again).  Process-wide. */
FILE *msg_err(void);
void msg_set_err(FILE *f);
/* The synopsis ("argus CMD ...\n", lines) msg_usage_error() prints after
 * an error of command cmd; both strings static (they are kept). */
void msg_set_synopsis(const char *cmd, const char *synopsis);
/* Prints "argus CMD: <fmt>" and then CMD's synopsis; returns exit code 2. */
int msg_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "argus CMD: <fmt>"; returns exit code 1. */
int msg_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s (a comm, path, mark: another user's choice) made safe for a terminal
 * and for one line of text: argus_text_escape() (argus_graph.h) into one
 * of 16 rotating buffers, so a printf() may take several; NULL gives "".
 * A string longer than a buffer (16 KiB escaped) ends in "...". */
const char *msg_tstr(const char *s);
/* msg_error() for an -o FILE that argus_out__check()/__open() refused
 * (safe_file.h): says that --force replaces it.  Returns 1. */
struct argus_error;
int msg_out_error(const char *cmd, const struct argus_error *err);
#endif
