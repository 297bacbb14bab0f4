/* argus.c - the `argus` command: a table of subcommands, each in its own
 * cmd_<name>.c file.  Common flags (--help) are handled here once. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "diag_front.h"
#include "step_front.h"
#include "live_cli.h"
#include "argus_graph.h"
#include "control.h"
#include "trace_format.h"

static const struct argus_command commands[] = {
	{ "start", cmd_start, "start the always-on collector (argusd)",
	  "argus start [--size SIZE] [--dir DIR] [--sample-hz HZ] [--no-irq] [--all-entries] [--no-unwind]\n"
	  "            [--wait-stacks] [--watch PID|COMM]... [--watch-uid UIDS] [--no-watch-interactive]\n"
	  "            [--hang-threshold MS] [--hang-dir D] [--hang-before S] [--hang-grace S]\n"
	  "            [--hang-keep N] [--hang-max-mb MB]\n"
	  "  Starts argusd, which records system-wide into a bounded ring file\n"
	  "  DIR/ring.argus (default /var/lib/argus, 2G). Needs root.\n"
	  "  --all-entries  also record the entries (sys_enter) of read/write/send/recv\n"
	  "                 calls; by default only their exits, which carry everything\n"
	  "                 the graph uses\n"
	  "  --watch PID|COMM  watch that process, or every process of that name, for\n"
	  "                 hangs (repeatable); display servers' clients are watched too\n"
	  "                 unless --no-watch-interactive.  A hang (no return for MS,\n"
	  "                 default 2000) is kept by itself in D (default DIR/hangs):\n"
	  "                 the ring from S (10s) before it, with its diagnosis; at most\n"
	  "                 N (20) snapshots per uid and MB (512) MiB in all.  `argus\n"
	  "                 hangs --saved` lists them\n"
	  "  --watch-uid UIDS  --watch COMM watches only the processes of these users\n"
	  "                 (uids or user names, comma-separated, or all; default 0,\n"
	  "                 root's only: any user can give a process any name).\n"
	  "                 --watch PID is not limited\n" },
	{ "stop", cmd_stop, "stop the collector (the ring stays on disk)",
	  "argus stop\n" },
	{ "status", cmd_status, "show event rates, ring fill, lost events, collector CPU",
	  "argus status [--raw]\n"
	  "  --raw  the collector's own KEY=VALUE lines, for scripts\n" },
	{ "mark", cmd_mark, "add a user annotation to the trace",
	  "argus mark TEXT...\n" },
	{ "watch", cmd_watch, "hardware write watchpoints on a data flag, into the trace",
	  CMD_WATCH_USAGE },
	{ "save", cmd_save, "snapshot the ring into a trace file",
	  "argus save [--last DURATION] -o FILE [--force]\n"
	  "  DURATION like 30s, 5m, 1500ms (default: everything in the ring)\n"
	  "  -o FILE   created new, mode 0600; a FILE argus did not create (another\n"
	  "            owner, wider mode, a link) is refused\n"
	  "  --force   replace such a FILE (a symbolic link is replaced, not followed)\n" },
	{ "record", cmd_record, "trace system-wide while a command runs",
	  "argus record -o FILE [--force] [--size SIZE] [--sample-hz HZ] [--no-irq] [--all-entries]\n"
	  "             [--no-unwind] [--wait-stacks] -- CMD [ARGS...]\n"
	  "  -o FILE      created new, mode 0600; --force replaces a FILE argus did not\n"
	  "               create (a symbolic link is replaced, not followed)\n"
	  "  --no-unwind  keep frame-pointer stacks only (no DWARF unwinding of the\n"
	  "               sampler's stack copies: cheaper, but shallow stacks for\n"
	  "               programs built without frame pointers)\n"
	  "  --wait-stacks  DWARF-unwindable stacks where threads block, too (a 1 KiB\n"
	  "               stack copy per blocking switch: deep waits in Debian's\n"
	  "               libraries, for more collector CPU; also for start)\n"
	  "  Exits with CMD's exit status.  --size bounds the file as a ring.\n" },
	{ "dump", cmd_dump, "print the events of a trace file, one per line",
	  "argus dump FILE [--stacks] [--pid PID] [--tid TID] [--stats] [--json]\n"
	  "  --stacks  print symbolized user stacks under events that have one\n"
	  "  --stats   print only the per-CPU counts, lost events and time span\n"
	  "  --json    one JSON object per event and line, then a {\"stats\":...} line\n"
	  "            (fields: docs/trace-format.md, \"dump --json\")\n" },
	{ "hangs", cmd_hangs, "list the threads that stopped answering, longest first",
	  DIAG_HANGS_USAGE },
	{ "diagnose", cmd_diagnose, "name the thread, in any process, that caused a hang",
	  DIAG_DIAGNOSE_USAGE },
	{ "report", cmd_report, "the diagnosis of a hang as one self-contained HTML page",
	  DIAG_REPORT_USAGE },
	{ "show", cmd_show, "one segment in full: times, wait, events, stack, edges",
	  "argus show FILE ID [--json] [--schema FILE] [--no-split]\n"
	  "  ID is a segment id as argus diagnose, hangs and graph print it (#261 or 261).\n"
	  "  Thread and process, times (s from the trace start and CLOCK_MONOTONIC ns),\n"
	  "  on-CPU time, how it began and ended, the wait that ended it and who ended\n"
	  "  that wait, its events (at most 200), the wait's user stack, its edges.\n"
	  "  Give --schema/--no-split as to the command that printed the id.\n" },
	{ "similar", cmd_similar, "segments of the same thread that did the same thing",
	  "argus similar FILE ID [--max N] [--kind] [--json] [--schema FILE] [--no-split]\n"
	  "  Ranks the other segments of ID's thread whose normalized event sets\n"
	  "  (distinct syscalls, the final wait and its object, threads woken and\n"
	  "  messaged) contain ID's or are contained in it: the candidates diagnose\n"
	  "  picks a normal run from.  Lower score is better.  --max N (default 10).\n"
	  "  --kind: the wait's object by its kind only (what diagnose falls back to,\n"
	  "  \"match\": \"kind\" in its JSON, when no run outside the hang waited on\n"
	  "  the same object).\n" },
	{ "slice", cmd_slice, "walk back from a segment along who made it run",
	  "argus slice FILE ID [--pick N,N...] [--stop TID] [--json] [--schema FILE] [--no-split]\n"
	  "  The backward slice diagnose uses: from ID, the one inter-thread in-edge,\n"
	  "  else the thread's own previous segment, up to 32 steps.  Where two or more\n"
	  "  threads lead in, the edge that woke the segment is taken unless --pick\n"
	  "  gives the answers in order (1-based); the others are listed.\n"
	  "  --stop TID  stop after the first segment of thread TID\n" },
	{ "diff", cmd_diff, "two segments side by side: a normal run and the hang",
	  "argus diff FILE ID_NORMAL ID_HANG [--json] [--schema FILE] [--no-split]\n"
	  "  Duration, on-CPU, the wait, how each began, event counts, syscalls only in\n"
	  "  one of them, return values that differ, and who woke each one's next\n"
	  "  segment: the line that says why the hang waited.\n" },
	{ "graph", cmd_graph, "build the event graph: its size, or one node and its neighbours",
	  "argus graph FILE [--stats] [--node ID | --pid PID... | --tid TID...] [--dot|--json]\n"
	  "            [--schema FILE] [--no-split]\n"
	  "  --stats      vertices, edges by type, processes, threads, IPC messages,\n"
	  "               filtered wake-ups by reason, build time and memory (default)\n"
	  "  --node ID    one segment with its predecessors and successors\n"
	  "  --pid/--tid  every segment of these processes/threads (repeatable)\n"
	  "  --dot/--json the node's neighbourhood, or the selected segments and the\n"
	  "               edges among them, as Graphviz DOT or JSON\n"
	  "  --schema F   user schema: extra boundaries, edges, filters (docs/schema.md)\n"
	  "  --no-split   do not split server-loop segments (batching heuristic)\n" },
	{ "export", cmd_export, "write the event graph for another tool (Perfetto, Graphviz)",
	  "argus export FILE [--format perfetto|dot] -o OUT [--force] [--from SEC] [--to SEC]\n"
	  "            [--pid PID...] [--kernel] [--schema FILE] [--no-split]\n"
	  "  --format perfetto  Chrome trace-event JSON for ui.perfetto.dev or\n"
	  "                     chrome://tracing: a track per thread, a slice per\n"
	  "                     segment, an arrow per causal edge (the default)\n"
	  "  --format dot       the same segments and the edges among them, for\n"
	  "                     Graphviz (dot -Tsvg); narrow it with --pid/--from/--to\n"
	  "  -o OUT             written whole or not at all, mode 0600; an OUT argus did\n"
	  "                     not create is replaced only with --force\n"
	  "  --from/--to SEC    only this window, in seconds from the trace's start\n"
	  "                     (or with a unit: 2500ms)\n"
	  "  --pid PID          only these processes (repeatable, at most 64)\n"
	  "  --kernel           also kernel threads (left out by default)\n"
	  "  --schema F         user schema (docs/schema.md); --no-split as for graph\n" },
	{ "step", cmd_step, "single-step a thread of a running process; print or record it",
	  "argus step --pid PID [--tid TID] [--count N | --until COND] [--record FILE] [--json]\n"
	  "           [--syscall-timeout MS] [--fast]\n"
	  "  Stops thread TID (default: the main thread) with ptrace, executes N\n"
	  "  instructions (default 100) one at a time, then detaches: it runs on.\n"
	  "  Each: address, symbol+offset, disassembly, the registers it changed\n"
	  "  (new values), memory it read ([addr]:size->value) or wrote (<-value).\n"
	  "  Syscalls are stepped over (at most MS blocked, default 5000); signals\n"
	  "  are delivered to the thread.\n"
	  "  --until COND  step until COND holds (at most --count, default 1000000):\n"
	  "                REG OP VALUE        rip == 0x401136, rax != 0\n"
	  "                memN(ADDR) OP VALUE N = 8/16/32/64: mem32(0x404028) != 0\n"
	  "                left FUNC           the thread left function FUNC (a\n"
	  "                                    return or jump out; its calls do not count)\n"
	  "                OP: == != < > <= >= (unsigned); numbers decimal or 0x...\n"
	  "  --record FILE write the instructions to FILE (docs/step-format.md) for\n"
	  "                argus step-diff / argus flag --normal; prints a summary\n"
	  "  --fast        the thread steps itself through a SIGTRAP handler argus\n"
	  "                puts in the process (several times faster, N instructions,\n"
	  "                no --until): registers and memory addresses, no memory\n"
	  "                values; the process's own SIGTRAP action is set aside\n"
	  "                meanwhile (MS: how long it may take, default 5000)\n" },
	{ "step-diff", cmd_step_diff, "where two step recordings (normal, hang) first differ",
	  "argus step-diff A B [--json]\n"
	  "  A: a recording of the normal case, B: of the hang (argus step --record).\n"
	  "  Aligns them by control flow (same function+offset) and prints the first\n"
	  "  divergence: the branch, where each went, its condition's inputs on each\n"
	  "  side (registers, memory: address and value) and the loop around it.\n" },
	{ "flag", cmd_flag, "find the data flag a spinning thread waits for",
	  "argus flag --pid PID [--tid TID] [--normal FILE] [--json] [--record FILE]\n"
	  "           [--max N] [--timeout SEC] [--syscall-timeout MS] [--watch]\n"
	  "  Steps the spinning thread (a yield loop, a sleep-retry loop, a busy spin)\n"
	  "  for a few turns of its loop (at most N instructions, default 200000, or\n"
	  "  SEC seconds, default 10), leaves it running, and prints the flag: the\n"
	  "  memory its loop's exit test reads that the thread itself never writes:\n"
	  "  address, size, symbol (or mapping+offset for heap and stack), the value\n"
	  "  seen, and the instruction that reads it.  Then watch it: argus watch.\n"
	  "  --normal FILE  a recording of the same code when it did not hang: the\n"
	  "                 flag is the memory read by the first divergent branch\n"
	  "  --record FILE  keep this recording (docs/step-format.md)\n"
	  "  --watch        then arm argus watch on the flag, the stepped thread its\n"
	  "                 reader (the collector must be running)\n" },
	{ "inject", cmd_inject, "load the interposer into a running process (ptrace + dlopen)",
	  CMD_INJECT_USAGE },
	{ "instrument", cmd_instrument, "patch a function of a running process to record work items",
	  CMD_INSTRUMENT_USAGE },
	{ "lldb-init", cmd_lldb_init, "make lldb load the Argus plugin at start (~/.lldbinit)",
	  "argus lldb-init [--file LLDBINIT] [--plugin SO] [--print | --remove]\n"
	  "  Adds `plugin load .../libargus-lldb.so` to LLDBINIT (default ~/.lldbinit\n"
	  "  of the user running it: run it as the user who runs lldb, e.g. as root\n"
	  "  for lldb-16 run as root).  Idempotent; an older Argus line is replaced.\n"
	  "  --plugin SO  the plugin to load (default: the one installed beside argus)\n"
	  "  --print      print the line, change nothing\n"
	  "  --remove     take the Argus lines out again\n" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int cli_help(const char *cmd)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(commands[i].name, cmd)) {
			printf("usage: %s", commands[i].usage);
			return 0;
		}
	}
	return 2;
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

/* msg_usage_error()'s usage line: the command's from commands[]. */
static const char *usage_of(const char *cmd)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, cmd))
			return commands[i].usage;
	return NULL;
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
	msg_set_usage(usage_of);
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
		if (cli_wants_help(argc - 1, argv + 1))
			return cli_help(argv[1]);
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "argus: unknown command '%s'\n", argv[1]);
	main_usage(stderr);
	return 2;
}
