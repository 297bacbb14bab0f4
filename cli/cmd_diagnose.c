/* cmd_diagnose.c - `argus diagnose FILE --pid PID`, and `argus diagnose
 * --pid PID --until-end[=S]` on the running collector: the session
 * (argus_session.h) chooses the hang, diagnoses it and renders the report;
 * this file only runs it and prints (docs/diagnosis.md).
 *
 * --until-end without FILE: the first snapshot of the running collector
 * goes into a private temp dir (until_end.h), and the session waits on
 * it, replaces it with a snapshot up to the hang's end, and diagnoses that.
 * The dir is removed after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_session.h"
#include "cli.h"
#include "diag_front.h"
#include "until_end.h"

int cmd_diagnose(int argc, char **argv)
{
	struct diag_front_opts o;
	struct argus_session *q;
	struct until_end *ue = NULL;
	char **av = NULL;
	int rc;

	/* the flags first: a bad one costs no snapshot */
	if ((rc = diag_front_parse("diagnose", argc, argv, &o)))
		return argus_opts_exit(rc);
	if (o.until_end_ns && o.g.path)
		return msg_usage_error("diagnose", "--until-end takes its own snapshots of the running"
				       " collector: give --pid PID, not FILE (%s)", o.g.path);
	if (!(q = argus_session__new()))
		return msg_error("diagnose", "out of memory");
	argus_session__set_progress(q, true);
	argus_session__set_interactive(q, isatty(0) && isatty(1) && !o.json && !o.dot);
	if (o.until_end_ns) {
		/* argv with the first snapshot as FILE */
		if (!(ue = calloc(1, sizeof(*ue))) || !(av = calloc((size_t)argc + 2, sizeof(*av)))) {
			rc = msg_error("diagnose", "out of memory");
			goto out;
		}
		if ((rc = until_end_begin("diagnose", ue, o.until_end_ns)) ||
		    (rc = until_end_snapshot("diagnose", ue, ue->first)))
			goto out;
		av[0] = argv[0];
		av[1] = ue->first;
		memcpy(av + 2, argv + 1, (size_t)(argc - 1) * sizeof(*av));
		argc++;
		argv = av;
	}
	rc = argus_session__run(q, argc, argv);
out:
	argus_session__free(q);
	if (ue) {
		until_end_cleanup(ue);
		free(ue);
	}
	free(av);
	return rc;
}
