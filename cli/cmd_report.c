/* cmd_report.c - `argus report FILE --pid PID [diagnose's flags] -o
 * hang.html [--force]`: the diagnosis of a hang as one self-contained HTML
 * page, drawn by the session (argus_session__report; report_page.h). */
#include "argus_session.h"
#include "cli.h"

int cmd_report(int argc, char **argv)
{
	struct argus_session *q = argus_session__new();
	int rc;

	if (!q)
		return msg_error("report", "out of memory");
	argus_session__set_progress(q, true);
	rc = argus_session__run(q, argc, argv);
	argus_session__free(q);
	return rc;
}
