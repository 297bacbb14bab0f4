/* step_capture.c - the C side of `argus step` / `argus flag` in lldb (see
 * step_capture.h).  Runs inside argus_capture__run, so what the CLI's
 * functions print lands in the captured stdout/stderr.  No signal
 * handlers are installed (lldb owns SIGINT): step_front_interrupted stays 0
 * and the commands end at their --count, --until, --max or --timeout. */
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "step_capture.h"
#include "step_front.h"

static argus_step_opener opener;
static void *opener_ctx;

void argus_capture_set_step_opener(argus_step_opener fn, void *ctx)
{
	opener = fn;
	opener_ctx = ctx;
}

static struct argus_stepper *open_thread(const char *cmd, uint32_t pid, uint32_t tid, uint32_t ms)
{
	char err[512] = "";
	struct argus_stepper *s = opener ? opener(opener_ctx, pid, tid, ms, err, sizeof(err)) : NULL;

	if (!s)
		msg_error(cmd, "%s", err[0] ? err : "cannot step this thread through lldb");
	return s;
}

int argus_capture_step(int argc, char **argv)
{
	int rc;

	if (argc < 1)
		return 2;
	if (!strcmp(argv[0], "step")) {
		struct step_front_step_opts o;
		struct argus_stepper *s;

		rc = step_front_step_parse(argc, argv, &o);
		if (rc)
			return rc < 0 ? 0 : rc;   /* the help (printed), or an error */
		if (o.fast) {
			step_front_step_opts_free(&o);
			return msg_usage_error("step", "--fast injects a SIGTRAP handler through ptrace,"
					       " which lldb holds: run it from a shell with no debugger"
					       " attached");
		}
		o.host = true;
		s = open_thread("step", o.pid, o.tid, o.timeout);
		rc = s ? step_front_step_run(s, &o) : 1;
		step_front_step_opts_free(&o);
		return rc;
	}
	if (!strcmp(argv[0], "flag")) {
		struct step_front_flag_opts o;
		struct argus_stepper *s;

		rc = step_front_flag_parse(argc, argv, &o);
		if (rc)
			return rc < 0 ? 0 : rc;   /* the help (printed), or an error */
		o.host = true;
		s = open_thread("flag", o.pid, o.tid, o.syscall_ms);
		rc = s ? step_front_flag_run(s, &o) : 1;
		step_front_flag_opts_free(&o);
		return rc;
	}
	return 2;
}
