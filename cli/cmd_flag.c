/* cmd_flag.c - `argus flag`: parse, open the thread with ptrace, run
 * (step/front/flag_cmd.c holds the parser and the run, which the lldb
 * plugin calls with a thread opened through lldb). */
#include "cli.h"
#include "step_front.h"

#define CMD "flag"

int cmd_flag(int argc, char **argv)
{
	struct step_front_flag_opts o;
	struct argus_stepper *s;
	int rc;

	rc = step_front_flag_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;   /* the help, or an error */
	s = step_front_open(CMD, o.pid, o.tid, o.syscall_ms);
	if (!s) {
		step_front_flag_opts_free(&o);
		return 1;
	}
	step_front_catch_signals();   /* Ctrl-C: stop stepping, detach */
	rc = step_front_flag_run(s, &o);
	step_front_flag_opts_free(&o);
	return rc;
}

