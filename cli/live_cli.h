/* live_cli.h - what `argus inject` and `argus instrument` share
 * (cli/cmd_inject.c, cli/cmd_instrument.c; interposer/live/). */
#ifndef ARGUS_LIVE_CLI_H
#define ARGUS_LIVE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LIVE_IPOSE_NAME "libargus-interpose.so"

int cmd_inject(int argc, char **argv);
int cmd_instrument(int argc, char **argv);

/* The interposer beside this argus (lib/libargus-interpose.so), resolved;
 * 0, or 1 after one error line. */
int live_default_lib(const char *cmd, char *out, size_t len);
/* Whether a file named like lib's basename is mapped in pid (its path in
 * found, may be NULL).  1 yes, 0 no, -errno. */
int live_lib_mapped(pid_t pid, const char *lib, char *found, size_t len);
/* dlopen lib (a root-owned file, not writable by others) in pid, and with
 * bind point the process's lock calls at its wrappers (argus_live__bind);
 * prints what it did on stdout.  0, or 1 after one error line prefixed
 * with cmd. */
int live_inject(const char *cmd, pid_t pid, const char *lib, bool bind);
#endif /* ARGUS_LIVE_CLI_H */
