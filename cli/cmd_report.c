/* cmd_report.c - `argus report FILE --pid PID [diagnose's flags] -o
 * hang.html [--force]`: the diagnosis of a hang as one self-contained HTML
 * page, drawn by the session (argus_session__report; report_page.h). */
#include <stdio.h>
#include <stdlib.h>

#include "argus_session.h"
#include "cli.h"

int cmd_report(int argc, char **argv)
{
	struct argus_session *q = argus_session__new();
	char *summary = NULL;
	int rc;

	if (!q)
		return msg_error("report", "out of memory");
	argus_session__set_progress(q, true);
	rc = argus_session__report(q, argc, argv, &summary);
	if (rc)
		rc = cli_session_failed(q, rc);
	else
		fputs(summary, stdout);
	free(summary);
	argus_session__free(q);
	return rc;
}
