/* cli.h - shared by the `argus` subcommands (one file each, cmd_*.c),
 * dispatched from argus.c's commands[] table, perf/git style. */
#ifndef ARGUS_CLI_H
#define ARGUS_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl_client.h"   /* the collector: requests, ring snapshots */
#include "msg.h"          /* error lines */

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
int cmd_step(int argc, char **argv);
int cmd_step_diff(int argc, char **argv);
int cmd_flag(int argc, char **argv);

/* Prints the usage text of a command (from commands[]) to stdout. */
int cli_help(const char *cmd);
/* True when argv[i] is -h/--help. */
bool cli_wants_help(int argc, char **argv);
#endif
