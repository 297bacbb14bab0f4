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
#include "argus_session.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"
#include "hangs_saved.h"

int cmd_hangs(int argc, char **argv)
{
	struct diag_front_opts o;
	struct argus_session *q;
	int rc;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--saved"))
			return hangs_saved_cmd(argc, argv);
	/* the session parses the same words (diag_opts.c); here first for
	 * --help, which the session leaves to its front end */
	if ((rc = diag_front_parse("hangs", argc, argv, &o)))
		return argus_opts_exit(rc);
	if (!(q = argus_session__new()))
		return msg_error("hangs", "out of memory");
	argus_session__set_progress(q, true);
	rc = argus_session__run(q, argc, argv);
	argus_session__free(q);
	return rc;
}
