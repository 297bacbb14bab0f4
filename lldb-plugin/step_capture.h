/* step_capture.h - `argus step` and `argus flag` inside lldb: the CLI's own
 * parser and output (cli/step_front.h), over a stepper the plugin opens
 * through lldb instead of ptrace (step_capture.c). */
#ifndef ARGUS_LLDB_STEP_CAPTURE_H
#define ARGUS_LLDB_STEP_CAPTURE_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

struct argus_stepper;

/* Opens thread tid of process pid (the CLI's parsed --pid/--tid) over the
 * host's backend; NULL with one line in err on failure. */
typedef struct argus_stepper *(*argus_step_opener)(void *ctx, uint32_t pid, uint32_t tid,
						   uint32_t syscall_ms, char *err, size_t errlen);
void argus_capture_set_step_opener(argus_step_opener fn, void *ctx);

/* A capture function (argus_capture__run): argv = {"step"|"flag", ARGS...}
 * with --pid and --tid.  Parses as the CLI does (usage errors: 2), opens
 * the thread with the opener (1 and its message on failure), then runs the
 * CLI's step or flag on it.  --fast is refused (it needs ptrace). */
int argus_capture_step(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
