/* cli.h - shared by the `argus` subcommands (one file each, cmd_*.c),
 * dispatched from argus.c's commands[] table, perf/git style. */
#ifndef ARGUS_CLI_H
#define ARGUS_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The whole CLI: argv[0] is "argus", argv[1] the subcommand.  main.c
 * calls it; so does the lldb plugin, in process. */
int argus_cli_main(int argc, char **argv);

struct argus_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;
};

int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_watch(int argc, char **argv);
/* Arm a write watch on [addr, addr+len) of process pid through the
 * collector (`argus watch --pid --addr --len [--reader]`), after checking
 * the process and the reader thread exist; the "argus: watch N armed"
 * line goes to out, the watch id to *id (may be NULL).  0, or 1 after one
 * error line (prefixed with cmd). */
int cli_watch_arm(const char *cmd, uint64_t pid, uint64_t addr, uint64_t len, uint64_t reader,
		  FILE *out, int *id);
#define CMD_WATCH_USAGE \
	"argus watch --pid PID --addr ADDR [--len N] [--reader TID]\n" \
	"argus watch --list\n" \
	"argus watch --remove ID | --remove --pid PID | --remove --all\n" \
	"  Arms a hardware write watchpoint (x86: 4 debug registers per thread)\n" \
	"  on every thread of PID, and on the threads it creates later.  Each\n" \
	"  write becomes a `hwwatch` event in the running collector's trace\n" \
	"  (tid, time, ip, address, new value, user stack); the graph turns\n" \
	"  them into `dataflag` edges.  Find ADDR with `argus flag --pid PID`.\n" \
	"  --addr ADDR  hex (0x...) or decimal, aligned to N\n" \
	"  --len N      1, 2, 4 or 8 bytes (default 4)\n" \
	"  --reader TID the thread of PID that spins on the flag (the one\n" \
	"               `argus flag --tid` stepped): every write is an edge to\n" \
	"               where it leaves the spin, even a pure busy spin that\n" \
	"               makes no syscall (without it the spinner is recognized\n" \
	"               by its sched_yield/nanosleep calls)\n" \
	"  Watches of a process are removed when it exits or execs.\n"

int cmd_save(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_hangs(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_similar(int argc, char **argv);
int cmd_slice(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_lldb_init(int argc, char **argv);

/* The stream cli_error() and cli_usage_error() write to: stderr unless
 * cli_set_err() gave another (NULL: stderr again).  Set by cli/diag_query.c
 * for the length of one call, so that code run in process inside another
 * program hands its messages back instead of printing them. */
FILE *cli_err(void);
void cli_set_err(FILE *f);
/* Prints "argus NAME: <fmt>" to stderr; returns exit code 2 (usage) */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints "argus NAME: <fmt>" to stderr; returns exit code 1 */
int cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s (a comm, path, mark: another user's choice) made safe for a terminal
 * and for one line of text: argus_text_escape() (argus_graph.h) into one
 * of 16 rotating buffers, so a printf() may take several; NULL gives "".
 * A string longer than a buffer (16 KiB escaped) ends in "...". */
const char *cli_tstr(const char *s);
/* cli_error() for an -o FILE that argus_out__check()/__open() refused
 * (safe_file.h): says that --force replaces it.  Returns 1. */
struct argus_error;
int cli_out_error(const char *cmd, const struct argus_error *err);
/* Prints the usage text of a command (from commands[]) to stdout. */
int cli_help(const char *cmd);
/* True when argv[i] is -h/--help. */
bool cli_wants_help(int argc, char **argv);
/* Directory of the running argus binary (for argusd), or the one set by
 * cli_set_bin_dir() when the CLI runs inside another program (lldb). */
void cli_self_dir(char *buf, size_t len);
void cli_set_bin_dir(const char *dir);
/* Sends a request to the running collector; prints a clear error and
 * returns non-zero if it is not running. */
int cli_request(const char *cmd, const char *req, char *resp, size_t len);
/* Asks the running collector to write out what it holds ("flush"): the
 * path of its ring into ring (len bytes) and its CLOCK_MONOTONIC now.
 * 0, or 1 after an error line (cmd_save.c). */
int cli_ring_flush(const char *cmd, char *ring, size_t len, uint64_t *now);
/* Flushes the collector (cli_ring_flush) and copies its ring's chunks from
 * *from_ts on into a new snapshot out (argus_trace__save_to, out_flags
 * ARGUS_OUT_*: safe_file.h).  *from_ts 0: the last `last` ns before the
 * collector's now, set to where that began (0, the whole ring, when last
 * is 0 or the ring is younger).  A warning line when corrupt chunks were
 * skipped; with progress, a progress line on a terminal.  0, or 1 after
 * an error line (cmd_save.c). */
int cli_ring_save(const char *cmd, const char *out, unsigned out_flags, uint64_t last,
		  uint64_t *from_ts, bool progress);
#endif
