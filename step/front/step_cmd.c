/* step_cmd.c - `argus step --pid PID [--tid TID] [--count N | --until COND]
 * [--record FILE] [--json]`: single-step one thread of a running process
 * (step/argus_step.h), print or record each instruction, then detach and
 * leave it running.
 *
 * Without --until, N instructions (default 100).  With --until, until the
 * condition holds after a step, at most --count (default 1,000,000).  A
 * syscall is stepped over however long it blocks, up to --syscall-timeout
 * (ms, default 5000).  Ctrl-C stops stepping and detaches.  With --record
 * the instructions go to FILE (docs/step-format.md) and a summary is
 * printed instead of each instruction.
 *
 * Three parts (step_front.h): parse, open the thread, run.  The CLI opens it
 * with ptrace; the lldb plugin parses with step_front_step_parse too, opens
 * the thread through lldb (lldb-plugin/step_backend.cpp) and calls
 * step_front_step_run, so both print the same text and JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_graph.h"
#include "ctl_client.h"
#include "msg.h"
#include "parse_opts.h"
#include "step_front.h"

#define CMD "step"

/* --fast: the thread steps itself (argus_step__record_fast), then the
 * recording is printed or saved as the ptrace path does. */
int step_front_step_fast(uint32_t pid, uint32_t tid, uint32_t count, uint32_t timeout,
		     const char *record, bool json)
{
	struct argus_step_rec *rec = NULL;
	struct argus_step_err err;
	double run = 0;
	size_t n;
	int rc;

	rc = argus_step__record_fast(pid, tid, count, timeout, &rec, &run);
	if (rc == -ESRCH)
		return msg_error(CMD, "no process %u (or thread %u), or it exited while recording", pid,
				 tid ? tid : pid);
	if (rc == -EBUSY || rc == -EPERM)
		return msg_error(CMD, "cannot trace %u: already traced by a debugger, or not root",
				 tid ? tid : pid);
	if (rc)
		return msg_error(CMD, "--fast recording failed: %s", strerror(-rc));
	n = argus_step_rec__count(rec);
	if (record && argus_step_rec__save(rec, record, &err)) {
		argus_step_rec__free(rec);
		return msg_error(CMD, "%s", err.msg);
	}
	if (json) {
		printf("{");
		if (!record) {
			printf("\"insns\":[");
			for (size_t i = 0; i < n; i++) {
				if (i)
					putchar(',');
				step_front_json_insn(rec, i);
			}
			printf("],");
		}
		printf("\"pid\":%u,\"tid\":%u,\"count\":%zu,\"stopped\":\"%s\",\"fast\":true,"
		       "\"seconds\":%.6f,\"record\":", pid, tid ? tid : pid, n,
		       n < count ? "timeout" : "count", run);
		if (record)
			argus_json_write_str(stdout, record);
		else
			printf("null");
		printf("}\n");
	} else {
		if (!record)
			for (size_t i = 0; i < n; i++)
				step_front_print_insn(rec, i);
		printf("%s%zu instructions of thread %u (pid %u) in %.3f s, in process (--fast); stopped: %s%s%s\n",
		       record ? "" : "# ", n, tid ? tid : pid, pid, run, n < count ? "timeout" : "count",
		       record ? "; recorded to " : "", record ? msg_tstr(record) : "");
	}
	argus_step_rec__free(rec);
	return n < count ? msg_error(CMD, "thread %u ran only %zu of %u instructions in %u ms", tid ? tid : pid,
				     n, count, timeout) : 0;
}

static const struct argus_usage usage = {
	.cmd = CMD,
	.synopsis =
	"argus step --pid PID [--tid TID] [--count N | --until COND] [--record FILE] [--json]\n"
	"           [--syscall-timeout MS] [--fast]\n",
	.about =
	"  Stops thread TID (default: the main thread) with ptrace, executes N\n"
	"  instructions (default 100) one at a time, then detaches: it runs on.\n"
	"  Each: address, symbol+offset, disassembly, the registers it changed\n"
	"  (new values), memory it read ([addr]:size->value) or wrote (<-value).\n"
	"  Syscalls are stepped over (at most MS blocked, default 5000); signals\n"
	"  are delivered to the thread.\n",
};

int step_front_step_parse(int argc, char **argv, struct step_front_step_opts *o)
{
	char cerr[200];
	int n;

	memset(o, 0, sizeof(*o));
	o->timeout = 5000;
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &o->pid, "PID", "the process", 1, 0),
		OPT_U32(0, "tid", &o->tid, "TID", "its thread (default: the main thread)", 1, 0),
		OPT_U32(0, "count", &o->count, "N",
			"instructions to step (default 100; with --until, at most\n"
			"1000000)", 1, 0),
		OPT_STRING(0, "until", &o->until, "COND",
			   "step until COND holds (at most --count, default 1000000):\n"
			   "REG OP VALUE          rip == 0x401136, rax != 0\n"
			   "memN(ADDR) OP VALUE   N = 8/16/32/64: mem32(0x404028) != 0\n"
			   "left FUNC             the thread left function FUNC (a\n"
			   "                      return or jump out; its calls do not count)\n"
			   "OP: == != < > <= >= (unsigned); numbers decimal or 0x..."),
		OPT_STRING(0, "record", &o->record, "FILE",
			   "write the instructions to FILE (docs/step-format.md) for\n"
			   "argus step-diff / argus flag --normal; prints a summary"),
		OPT_BOOL(0, "json", &o->json, "the instructions as JSON"),
		OPT_U32(0, "syscall-timeout", &o->timeout, "MS",
			"how long a stepped-over syscall may block (default 5000)", 1, 0),
		OPT_BOOL(0, "fast", &o->fast,
			 "the thread steps itself through a SIGTRAP handler argus\n"
			 "puts in the process (several times faster, N instructions,\n"
			 "no --until): registers and memory addresses, no memory\n"
			 "values; the process's own SIGTRAP action is set aside\n"
			 "meanwhile (MS: how long it may take, default 5000)"),
		OPT_END(),
	};

	if ((n = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return n == ARGUS_OPT_HELP ? n : 2;
	if (n)
		return msg_usage_error(CMD, "unexpected argument '%s'", msg_tstr(argv[0]));
	if (!o->pid)
		return msg_usage_error(CMD, "--pid PID is required");
	if (o->until) {
		o->cond = argus_step_cond__parse(o->until, cerr, sizeof(cerr));
		if (!o->cond)
			return msg_usage_error(CMD, "--until '%s': %s", msg_tstr(o->until), cerr);
	}
	if (o->fast && o->cond) {
		step_front_step_opts_free(o);
		return msg_usage_error(CMD, "--fast records a --count of instructions; no --until");
	}
	if (!o->count)
		o->count = o->until ? 1000000 : 100;
	return 0;
}

void step_front_step_opts_free(struct step_front_step_opts *o)
{
	argus_step_cond__free(o->cond);
	o->cond = NULL;
}

int step_front_step_run(struct argus_stepper *s, const struct step_front_step_opts *o)
{
	const char *stopped = "count";
	struct argus_step_cond *cond = o->cond;
	struct argus_step_rec *rec = NULL;
	struct argus_step_err err;
	uint32_t pid = o->pid, tid = o->tid, count = o->count, timeout = o->timeout;
	const char *until = o->until, *record = o->record;
	bool json = o->json;
	size_t n = 0;
	int rc = 0, status = 0;

	rec = argus_step__new_rec(s);
	if (!rec) {
		rc = msg_error(CMD, "out of memory");
		goto out;
	}
	if (cond)
		argus_step_cond__eval(cond, s, NULL);  /* arms "left FUNC" */
	if (json && !record)
		printf("{\"insns\":[");
	while (n < count) {
		struct argus_step_insn in;

		if (step_front_interrupted) {
			stopped = "interrupted";
			break;
		}
		status = argus_step__next(s, rec, &in);
		if (status == -ESRCH) {
			stopped = "exited";
			break;
		}
		if (status == -ETIMEDOUT) {
			stopped = "syscall-timeout";
			break;
		}
		if (status == -ENOEXEC) {   /* step_ptrace.c: nothing of it is stepped */
			stopped = "exec";
			break;
		}
		if (status) {
			stopped = "error";
			break;
		}
		if (!record) {
			if (json) {
				if (n)
					putchar(',');
				step_front_json_insn(rec, n);
			} else {
				step_front_print_insn(rec, n);
			}
		}
		n++;
		if (cond) {
			int c = argus_step_cond__eval(cond, s, &in);

			if (c > 0) {
				stopped = "until";
				break;
			}
			if (c < 0) {
				stopped = "until-unreadable";
				status = c;
				break;
			}
		}
	}
	if (json && !record)
		printf("],");
	else if (json)
		printf("{");
	argus_step__close(s);  /* ptrace: detach now, the thread runs on */
	s = NULL;

	if (record && argus_step_rec__save(rec, record, &err)) {
		if (json)
			printf("\"error\":");
		rc = msg_error(CMD, "%s", err.msg);
		if (json) {
			argus_json_write_str(stdout, err.msg);
			printf("}\n");
		}
		goto out;
	}
	if (json) {
		printf("\"pid\":%u,\"tid\":%u,\"count\":%zu,\"stopped\":\"%s\",\"record\":", pid,
		       tid ? tid : pid, n, stopped);
		if (record)
			argus_json_write_str(stdout, record);
		else
			printf("null");
		printf("}\n");
	} else {
		printf("%s%zu instructions of thread %u (pid %u); stopped: %s%s%s\n", record ? "" : "# ",
		       n, tid ? tid : pid, pid, stopped, record ? "; recorded to " : "",
		       record ? msg_tstr(record) : "");
	}
	if (cond && !strcmp(stopped, "count"))
		rc = msg_error(CMD, "--until '%s' did not hold within %u instructions (--count)",
			       msg_tstr(until), count);
	else if (!strcmp(stopped, "exited"))
		rc = msg_error(CMD, "thread %u exited after %zu instructions", tid ? tid : pid, n);
	else if (!strcmp(stopped, "exec"))
		rc = msg_error(CMD, "thread %u execed a new program after %zu instructions: detached,"
			       " nothing of the new program was stepped", tid ? tid : pid, n);
	else if (!strcmp(stopped, "syscall-timeout"))
		rc = msg_error(CMD, "thread %u stayed in a syscall longer than %u ms (--syscall-timeout);"
			       " %s", tid ? tid : pid, timeout, o->host ? "stopped in it: it restarts the"
			       " call when the process continues" : "detached, it is still in it");
	else if (!strcmp(stopped, "error") || !strcmp(stopped, "until-unreadable"))
		rc = msg_error(CMD, "stopped after %zu instructions: %s", n, strerror(-status));
out:
	argus_step__close(s);
	argus_step_rec__free(rec);
	return rc;
}
