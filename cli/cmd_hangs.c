/* cmd_hangs.c - `argus hangs FILE [--pid PID [--tid TID]]`: the threads
 * that stopped answering.  With --tid, that thread's hangs in time order;
 * with --pid, every thread of the process; without either, every process
 * in the trace ("what froze?"), longest first.  docs/diagnosis.md §1 says
 * what a hang is for a thread with and without an idle wait. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "cli.h"
#include "diag_cli.h"
#include "graph_cli.h"

int cmd_hangs(int argc, char **argv)
{
	struct diag_cli_opts d = { 0 };
	struct graph_cli_ctx c;
	struct argus_hang *h = NULL;
	uint32_t n = 0;
	unsigned scope;
	int rc;

	if ((rc = diag_cli_parse("hangs", argc, argv, &d, false)))
		return rc;
	scope = d.tid ? ARGUS_HANGS_THREAD : d.pid ? ARGUS_HANGS_PROCESS : ARGUS_HANGS_MACHINE;
	if ((rc = graph_cli_open(&c, "hangs", &d.g)))
		return rc;
	rc = diag_cli_hangs(&c, "hangs", &d, scope, &h, &n);
	if (rc) {
		graph_cli_close(&c);
		return rc;
	}
	if (d.json) {
		printf("{\"hangs\":[");
		for (uint32_t i = 0; i < n; i++) {
			printf("%s", i ? "," : "");
			diag_cli_json_hang(&c, &h[i], h[i].kind);
		}
		printf("]}\n");
	} else {
		if (scope == ARGUS_HANGS_THREAD)
			diag_cli_print_thread_line(&c, d.tid);
		else if (scope == ARGUS_HANGS_PROCESS)
			printf("process %u (%s)", d.pid, diag_cli_process(&c, d.pid));
		else
			printf("every process");
		printf(": %u hang%s of %.0f ms or more, or annotated%s\n", n, n == 1 ? "" : "s",
		       (double)d.threshold_ns / 1e6, scope == ARGUS_HANGS_THREAD ? "" : ", longest first");
		for (uint32_t i = 0; i < n; i++)
			diag_cli_print_hang(&c, &h[i], i + 1, scope != ARGUS_HANGS_THREAD);
		if (scope == ARGUS_HANGS_MACHINE && !d.all)
			printf("(waits for a child, lone sleeps and threads seen only asleep are left out:"
			       " --all shows them)\n");
	}
	free(h);
	graph_cli_close(&c);
	return 0;
}
