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
/* pid from a --pid value: 0 or 2 after a usage line. */
int live_parse_pid(const char *cmd, const char *v, pid_t *pid);

#define CMD_INJECT_USAGE \
	"argus inject --pid PID [--lib PATH] [--no-bind]\n" \
	"  Loads the interposer (default: the libargus-interpose.so beside this\n" \
	"  argus) into the running process PID without restarting it: ptrace\n" \
	"  stops one thread, calls dlopen(PATH, RTLD_NOW) on it, restores every\n" \
	"  register (a syscall it was blocked in restarts), and detaches.  The\n" \
	"  library's constructor then registers its ring with the argusd of\n" \
	"  the process's $ARGUS_RUN_DIR (default /run/argus).\n" \
	"  A late dlopen is not in the global symbol scope, so the calls the\n" \
	"  process had bound keep going to glibc: inject then rewrites, with\n" \
	"  every thread stopped, the GOT slots of the lock functions\n" \
	"  (pthread_mutex_*, pthread_rwlock_*, pthread_cond_*, sem_*) in every\n" \
	"  mapped file but libc and the loader to the wrappers, of the same\n" \
	"  symbol version, as LD_PRELOAD would have bound them.  A thread\n" \
	"  already waiting in glibc finishes there; later waits are recorded.\n" \
	"  GLib's wrappers are not bound (their state starts when a pool or\n" \
	"  source is made).  --no-bind: load only (argus_work_* for\n" \
	"  `argus instrument`).\n" \
	"  PATH must be owned by root and writable by nobody else.\n"

#define CMD_INSTRUMENT_USAGE \
	"argus instrument --pid PID --func FUNC --as KIND [--at-return KIND] [--lib PATH]\n" \
	"argus instrument --pid PID --func FUNC --as KIND --count-only\n" \
	"argus instrument --pid PID --func FUNC --as KIND --via uprobe\n" \
	"argus instrument --pid PID --func FUNC --remove\n" \
	"argus instrument --pid PID --schema FILE [--remove]\n" \
	"argus instrument --pid PID --list\n" \
	"  Patches the entry of a function of a running process (Detours-style:\n" \
	"  a jmp to a trampoline page near it, the displaced instructions\n" \
	"  relocated with capstone) so that each call first records a work-item\n" \
	"  event with the function's first argument (rdi) as the item:\n" \
	"    --as enqueue   argus_work_enqueue(item)\n" \
	"    --as begin     argus_work_begin(item)   (--as dequeue: the same)\n" \
	"    --as end       argus_work_end(item)\n" \
	"    --as boundary  argus_work_boundary(item): cut the segment here\n" \
	"  --at-return KIND  also at the function's return, with the same item\n" \
	"            (--as begin --at-return end: each call is one work item):\n" \
	"            the return address is swapped for a stub in the trampoline\n" \
	"            page.  Not for functions C++ exceptions unwind through;\n" \
	"            --remove waits until no hooked call is in flight\n" \
	"  FUNC: [LIB:]SYMBOL (LIB: a mapped file's basename or a prefix of it,\n" \
	"  default the executable; .symtab, or .dynsym when stripped), 0xADDR,\n" \
	"  or LIB+0xOFFSET (a virtual address as readelf shows it).\n" \
	"  The interposer is injected first when the process has not loaded it\n" \
	"  (see argus inject; --lib PATH).  --count-only patches with the hit\n" \
	"  counter alone (no hook, no interposer needed).\n" \
	"  Every thread is stopped while bytes change; none may be executing the\n" \
	"  bytes replaced (retried for 1 s).  Refused: a function shorter than\n" \
	"  5 bytes, a jump inside it back into those bytes, an instruction\n" \
	"  capstone cannot relocate.\n" \
	"  --remove  puts the original bytes back (kept in the trampoline's\n" \
	"            header page)\n" \
	"            and unmaps the trampoline\n" \
	"  --list    the patches in PID: function, kinds, hits, calls in flight\n" \
	"            (and its uprobes)\n" \
	"  --via uprobe  no patch: a uprobe on the entry, whose BPF program writes\n" \
	"            a live_hit record (function, item, kind) into the running\n" \
	"            collector's ring; costs a trap per call (bench/live_hook.sh).\n" \
	"            --remove takes it away (also --via uprobe)\n" \
	"  --schema FILE  apply (or --remove) every `instrument FUNC as KIND\n" \
	"            [at-return KIND]` line of a schema file (docs/schema.md)\n"

#endif /* ARGUS_LIVE_CLI_H */
