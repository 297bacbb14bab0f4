/* capture.h - the output of Argus's code as strings, for the lldb plugin
 * to hand to lldb's SBCommandReturnObject:
 *   - code run in process (argus step / flag through lldb: the step front
 *     end, step/front/), with fds 1 and 2 redirected while it runs;
 *   - the argus binary beside the plugin, run as a child, for the commands
 *     that are the CLI's own on the session's trace (show, similar, slice,
 *     diff, export, status, save, step-diff, watch).
 * The diagnosis itself is not captured: it comes back as structs from the
 * analysis session (analysis/argus_session.h).
 *
 * Invariant: while an in-process capture runs, fds 1 and 2 of the whole
 * process (lldb included) point at private temp files; they are restored
 * before argus_capture__run returns.  Captures are serialized by a mutex. */
#ifndef ARGUS_LLDB_CAPTURE_H
#define ARGUS_LLDB_CAPTURE_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

struct argus_capture {
	char *out;               /* what it printed on stdout, NUL-terminated, never NULL after run */
	char *err;               /* what it printed on stderr, likewise */
	int rc;                  /* its exit code: 0 ok, 1 error, 2 usage */
};

typedef int (*argus_capture_fn)(int argc, char **argv);

/* Calls fn(argc, argv) with fds 1 and 2 redirected; fills cap.  Returns 0,
 * or -errno when the capture itself could not be set up (fn not called). */
int argus_capture__run(argus_capture_fn fn, int argc, char **argv, struct argus_capture *cap);
/* Runs the program at path with argv (NULL-terminated) as a child, stdin
 * /dev/null, and waits for it; fills cap.  0, or -errno when it could not
 * be started. */
int argus_capture__spawn(const char *path, char **argv, struct argus_capture *cap);
void argus_capture__free(struct argus_capture *cap);

#ifdef __cplusplus
}
#endif
#endif
