/* msg.h - how every front end of the analysis says what went wrong:
 * one line "argus CMD: what", on a stream a host may redirect.
 *
 * The CLI prints to stderr; a program that hosts the analysis in process
 * (the lldb plugin through argus_session.h) collects the lines instead
 * (msg_set_err), so nothing is printed behind its back.  The usage text
 * after a usage error is the front end's: the CLI registers its table of
 * commands (msg_set_usage); without one, no usage line is printed. */
#ifndef ARGUS_MSG_H
#define ARGUS_MSG_H
#include <stdio.h>

/* The stream msg_error() and msg_usage_error() write to: stderr unless
 * msg_set_err() gave another (NULL: stderr again).  Process-wide. */
FILE *msg_err(void);
void msg_set_err(FILE *f);
/* The usage text of command cmd, or NULL (the CLI's commands[] table). */
typedef const char *(*msg_usage_fn)(const char *cmd);
void msg_set_usage(msg_usage_fn fn);
msg_usage_fn msg_get_usage(void);
/* Prints "argus CMD: <fmt>" and then CMD's usage; returns exit code 2. */
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
