/* cli_capture.h - the C side of the lldb plugin: run the `argus` CLI in
 * process (argus_cli_main, the very code of build/bin/argus) with its
 * stdout and stderr captured as strings, so the C++ glue can hand them to
 * lldb's SBCommandReturnObject.
 *
 * Invariant: while a capture runs, fds 1 and 2 of the whole process (lldb
 * included) point at private temp files; they are restored before
 * argus_capture__run returns.  Captures are serialized by a mutex. */
#ifndef ARGUS_LLDB_CLI_CAPTURE_H
#define ARGUS_LLDB_CLI_CAPTURE_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

struct argus_capture {
	char *out;               /* what fn printed on stdout, NUL-terminated, never NULL after run */
	char *err;               /* what it printed on stderr, likewise */
	int rc;                  /* fn's return value: 0 ok, 1 error, 2 usage */
};

typedef int (*argus_capture_fn)(int argc, char **argv);

/* Calls fn(argc, argv) with fds 1 and 2 redirected; fills cap.  Returns 0,
 * or -errno when the capture itself could not be set up (fn not called). */
int argus_capture__run(argus_capture_fn fn, int argc, char **argv, struct argus_capture *cap);
void argus_capture__free(struct argus_capture *cap);

/* argv = {"argus", SUBCOMMAND, ARGS...}: the whole CLI (argus_cli_main). */
int argus_capture_cli(int argc, char **argv);
/* argv = {"hangs"|"diagnose", FILE, ARGS...}: only the CLI's own flag
 * parser for these commands (no trace is opened); 2 after printing a usage
 * error, else 0.  Lets the plugin reject bad flags before it snapshots. */
int argus_capture_check_diag_args(int argc, char **argv);

/* The host's symbolizer for the stacks the CLI prints (diag_cli.h,
 * diag_cli_set_symbolizer): fn fills buf with one frame and func with its
 * function's name alone, and returns 0, or returns non-zero to leave the
 * frame to the trace's symbolizer.  It serves the diagnosis API
 * (cli/diag_query.h) as well as the CLI run in process. */
typedef int (*argus_sym_fn)(void *ctx, uint32_t pid, uint64_t ip, char *buf, size_t len,
			    char *func, size_t func_len);
void argus_capture_set_symbolizer(argus_sym_fn fn, void *ctx);

/* Where argusd lives, for the CLI (cli_set_bin_dir). */
void argus_capture_set_bin_dir(const char *dir);

/* `argus diagnose --until-end`'s wait calls fn about 50 times a second
 * (cli/until_end.h, until_end_set_tick): the host draws its progress line
 * and returns non-zero to stop waiting (the user's interrupt); a last call
 * with waited_ns UINT64_MAX says the wait is over. */
typedef int (*argus_until_end_tick_fn)(void *ctx, uint64_t waited_ns, uint64_t timeout_ns,
				       const char *what);
void argus_capture_set_until_end_tick(argus_until_end_tick_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
