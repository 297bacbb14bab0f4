/* cmd_report.c - `argus report FILE --pid PID [diagnose's flags] -o
 * hang.html [--force]`: the diagnosis of a hang as one self-contained HTML
 * page, drawn by the session (argus_session__report; report_page.h). */
#include "argus_session.h"
#include "cli.h"
#include "diag_front.h"

int cmd_report(int argc, char **argv)
{
	struct diag_front_opts o;
	struct argus_session *q;
	int rc;

	/* the session parses the same words (diag_opts.c); here first for
	 * --help, which the session leaves to its front end */
	if ((rc = diag_front_parse("report", argc, argv, &o)))
		return argus_opts_exit(rc);
	if (!(q = argus_session__new()))
		return msg_error("report", "out of memory");
	argus_session__set_progress(q, true);
	rc = argus_session__run(q, argc, argv);
	argus_session__free(q);
	return rc;
}
