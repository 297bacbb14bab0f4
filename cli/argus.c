/* argus.c - the `argus` command: a table of subcommands, each in its own
 * cmd_<name>.c file with its options and usage (parse_opts.h: each
 * command's table also prints its --help). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "live_cli.h"

static const struct argus_command commands[] = {
	{ "start", cmd_start, "start the always-on collector (argusd)" },
	{ "stop", cmd_stop, "stop the collector (the ring stays on disk)" },
	{ "status", cmd_status, "show event rates, ring fill, lost events, collector CPU" },
	{ "mark", cmd_mark, "add a user annotation to the trace" },
	{ "watch", cmd_watch, "hardware write watchpoints on a data flag, into the trace" },
	{ "save", cmd_save, "snapshot the ring into a trace file" },
	{ "record", cmd_record, "trace system-wide while a command runs" },
	{ "dump", cmd_dump, "print the events of a trace file, one per line" },
	{ "hangs", cmd_hangs, "list the threads that stopped answering, longest first" },
	{ "diagnose", cmd_diagnose, "name the thread, in any process, that caused a hang" },
	{ "report", cmd_report, "the diagnosis of a hang as one self-contained HTML page" },
	{ "show", cmd_show, "one segment in full: times, wait, events, stack, edges" },
	{ "similar", cmd_similar, "segments of the same thread that did the same thing" },
	{ "slice", cmd_slice, "walk back from a segment along who made it run" },
	{ "diff", cmd_diff, "two segments side by side: a normal run and the hang" },
	{ "graph", cmd_graph, "build the event graph: its size, or one node and its neighbours" },
	{ "export", cmd_export, "write the event graph for another tool (Perfetto, Graphviz)" },
	{ "step", cmd_step, "single-step a thread of a running process; print or record it" },
	{ "step-diff", cmd_step_diff, "where two step recordings (normal, hang) first differ" },
	{ "flag", cmd_flag, "find the data flag a spinning thread waits for" },
	{ "inject", cmd_inject, "load the interposer into a running process (ptrace + dlopen)" },
	{ "instrument", cmd_instrument, "patch a function of a running process to record work items" },
	{ "lldb-init", cmd_lldb_init, "make lldb load the Argus plugin at start (~/.lldbinit)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* `argus help CMD`: the command prints its own help (its option table,
 * parse_opts.h), before it would do anything. */
static int cli_help(const char *cmd)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(commands[i].name, cmd)) {
			char *argv[] = { (char *)commands[i].name, "--help", NULL };

			return commands[i].fn(2, argv);
		}
	}
	fprintf(stderr, "argus: unknown command '%s'\n", cmd);
	return 2;
}

static void main_usage(FILE *f)
{
	fprintf(f, "usage: argus COMMAND [ARGS...]\n\n"
		   "Argus: system-wide causal tracing for performance hangs.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n`argus COMMAND --help` shows a command's options.\n");
}

int argus_cli_main(int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			return cli_help(argv[2]);
		main_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, argv[1]))
			continue;
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "argus: unknown command '%s'\n", argv[1]);
	main_usage(stderr);
	return 2;
}
