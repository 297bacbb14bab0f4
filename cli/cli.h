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
#include "parse_opts.h"   /* options, usage and --help */

/* The whole CLI: argv[0] is "argus", argv[1] the subcommand.  main.c
 * calls it; so does the lldb plugin, in process. */
int argus_cli_main(int argc, char **argv);

/* One line of `argus --help`; the command's own --help is its option
 * table's (parse_opts.h), in its cmd_*.c. */
struct argus_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_watch(int argc, char **argv);

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
#endif
