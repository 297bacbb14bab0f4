/* cmd_step.c - `argus step`: parse, open the thread with ptrace, run
 * (step/front/step_cmd.c holds the parser and the run, which the lldb
 * plugin calls with a thread opened through lldb). */
#include "cli.h"
#include "step_front.h"

#define CMD "step"

int cmd_step(int argc, char **argv)
{
	struct step_front_step_opts o;
	struct argus_stepper *s;
	int rc;

	rc = step_front_step_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;   /* the help, or an error */
	if (o.fast)
		return step_front_step_fast(o.pid, o.tid, o.count, o.timeout, o.record, o.json);
	s = step_front_open(CMD, o.pid, o.tid, o.timeout);
	if (!s) {
		step_front_step_opts_free(&o);
		return 1;
	}
	step_front_catch_signals();   /* Ctrl-C: stop stepping, detach */
	rc = step_front_step_run(s, &o);
	step_front_step_opts_free(&o);
	return rc;
}

