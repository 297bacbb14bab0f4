/* flag_cmd.c - `argus flag --pid PID [--tid TID] [--normal FILE] [--json] [--watch]`:
 * the data flag a spinning thread waits for (BRIEF §1 "Data-flag flow").
 *
 * The thread is single-stepped (step/) until its loop has come round
 * ITERATIONS times (a yield loop, a sleep-retry loop: the sleep is stepped
 * through, a pure spin), at most --max instructions or --timeout seconds,
 * then left running.  The flag is then read off the recording:
 *   without --normal: the loop's exit branch whose condition reads memory
 *                     the thread never writes (argus_step_rec__find_flag);
 *   with --normal F:  the first divergence from F, a recording of the same
 *                     code when it did not hang (argus step --record), and
 *                     the memory its branch reads (argus_step_diff__flag);
 *                     the loop's own exit branch if they do not diverge.
 * The flag's name: a symbol (a global), else its mapping and offset
 * ("[heap]+0x2a0", "[stack]+0x1f8c").  Next step: argus watch on it,
 * naming the stepped thread as its reader (--reader); --watch does it
 * (the collector must be running).
 *
 * Parse, open, run (step_front.h): the CLI opens the thread with ptrace and
 * leaves it running; the lldb plugin opens it through lldb, calls
 * step_front_flag_run, and the process stays stopped in lldb. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argus_graph.h"
#include "ctl_client.h"
#include "msg.h"
#include "parse_opts.h"
#include "step_front.h"

#define CMD "flag"
#define ITERATIONS 4        /* loop turns to see before judging */
#define CHECK_EVERY 256     /* instructions between loop checks */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct argus_usage usage = {
	.cmd = CMD,
	.synopsis =
	"argus flag --pid PID [--tid TID] [--normal FILE] [--json] [--record FILE]\n"
	"           [--max N] [--timeout SEC] [--syscall-timeout MS] [--watch]\n",
	.about =
	"  Steps the spinning thread (a yield loop, a sleep-retry loop, a busy spin)\n"
	"  for a few turns of its loop (at most N instructions, default 200000, or\n"
	"  SEC seconds, default 10), leaves it running, and prints the flag: the\n"
	"  memory its loop's exit test reads that the thread itself never writes:\n"
	"  address, size, symbol (or mapping+offset for heap and stack), the value\n"
	"  seen, and the instruction that reads it.  Then watch it: argus watch.\n",
};

int step_front_flag_parse(int argc, char **argv, struct step_front_flag_opts *o)
{
	struct argus_step_err err;
	int n;

	memset(o, 0, sizeof(*o));
	o->max = 200000;
	o->timeout_s = 10;
	o->syscall_ms = 5000;
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &o->pid, "PID", "the process", 1, 0),
		OPT_U32(0, "tid", &o->tid, "TID", "its spinning thread (default: the main thread)", 1, 0),
		OPT_STRING(0, "normal", &o->normal, "FILE",
			   "a recording of the same code when it did not hang: the\n"
			   "flag is the memory read by the first divergent branch"),
		OPT_STRING(0, "record", &o->record, "FILE", "keep this recording (docs/step-format.md)"),
		OPT_BOOL(0, "json", &o->json, "the flag as JSON"),
		OPT_U32(0, "max", &o->max, "N", "at most N instructions (default 200000)", 1, 0),
		OPT_U32(0, "timeout", &o->timeout_s, "SEC", "at most SEC seconds (default 10)", 1, 0),
		OPT_U32(0, "syscall-timeout", &o->syscall_ms, "MS",
			"how long a stepped-over syscall may block (default 5000)", 1, 0),
		OPT_BOOL(0, "watch", &o->watch,
			 "then arm argus watch on the flag, the stepped thread its\n"
			 "reader (the collector must be running)"),
		OPT_END(),
	};

	if ((n = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return n == ARGUS_OPT_HELP ? n : 2;
	if (n)
		return msg_usage_error(CMD, "unexpected argument '%s'", msg_tstr(argv[0]));
	if (!o->pid)
		return msg_usage_error(CMD, "--pid PID is required");
	/* a bad --normal costs no stepping */
	if (o->normal && !(o->normal_rec = argus_step_rec__load(o->normal, &err)))
		return msg_error(CMD, "--normal %s", msg_tstr(err.msg));
	return 0;
}

void step_front_flag_opts_free(struct step_front_flag_opts *o)
{
	argus_step_rec__free(o->normal_rec);
	o->normal_rec = NULL;
}

int step_front_flag_run(struct argus_stepper *s, const struct step_front_flag_opts *opts)
{
	struct step_front_flag_opts o = *opts;
	const struct argus_step_rec *normal = o.normal_rec;
	struct argus_step_rec *rec = NULL;
	struct argus_step_flag f;
	struct argus_step_loop loop;
	struct argus_step_err err;
	struct argus_step_diff d;
	const char *method = "loop";
	char sym[256] = "", map[256] = "", where[300], bwhere[300];
	uint64_t sym_off = 0, map_off = 0;
	bool have_sym = false, have_map;
	uint32_t tid;
	double deadline;
	size_t n = 0;
	int rc = 0, st = 0;

	tid = o.tid ? o.tid : o.pid;
	rec = argus_step__new_rec(s);
	if (!rec) {
		rc = msg_error(CMD, "out of memory");
		goto out;
	}
	deadline = now_s() + o.timeout_s;
	while (n < o.max && !step_front_interrupted) {
		st = argus_step__next(s, rec, NULL);
		if (st)
			break;
		n++;
		if (n % CHECK_EVERY == 0) {
			if (!argus_step_rec__loop(rec, &loop) && loop.iterations >= ITERATIONS)
				break;
			if (now_s() > deadline)
				break;
		}
	}
	if (st == -ESRCH) {
		rc = msg_error(CMD, "thread %u exited while being stepped (after %zu instructions)", tid, n);
		goto out;
	}
	if (st == -ETIMEDOUT) {
		rc = msg_error(CMD, "thread %u is not spinning: it stayed in one syscall for more than"
			       " %u ms (a blocking wait: see argus diagnose)", tid, o.syscall_ms);
		goto out;
	}
	if (st) {
		rc = msg_error(CMD, "stepping thread %u failed after %zu instructions: %s", tid, n,
			       strerror(-st));
		goto out;
	}
	if (step_front_interrupted) {
		rc = msg_error(CMD, "interrupted after %zu instructions; thread %u %s", n, tid,
			       o.host ? "stopped" : "detached");
		goto out;
	}

	st = -ENOENT;
	if (normal) {
		rc = argus_step_rec__diff(normal, rec, &d);
		if (!rc && d.diverged) {
			st = argus_step_diff__flag(rec, &d, &f);
			if (!st)
				method = "diff";
		}
		rc = 0;
	}
	/* Stopped by --timeout or --max before a loop came round ITERATIONS
	 * times: no flag is read off a loop seen once or twice.  Attached
	 * late in case_flag_spin's 8 s hang beside a build, the stepping was
	 * slow enough for the spin to end under it; main's loop came round
	 * twice around the next spins, and its exit test gave
	 * "_rtld_global_ro" as the flag (2 of 5 attaches at random moments). */
	if (st && !argus_step_rec__loop(rec, &loop) && loop.iterations < ITERATIONS) {
		rc = msg_error(CMD, "thread %u came round no loop %d times in %zu instructions (--timeout"
			       " %u s, --max %u): not spinning in one loop, or its wait ended while"
			       " stepped; a slow loop needs a longer --timeout", tid, ITERATIONS, n,
			       o.timeout_s, o.max);
		goto out;
	}
	if (st)
		st = argus_step_rec__find_flag(rec, &f);
	if (st == -ENOENT) {
		rc = msg_error(CMD, "thread %u is not spinning: no loop in its %zu instructions", tid, n);
		goto out;
	}
	if (st == -ENODATA) {
		const struct argus_step_insn *h = NULL;

		for (size_t i = 0; i < n && !h; i++)
			if (argus_step_rec__insn(rec, i)->addr == f.loop.head)
				h = argus_step_rec__insn(rec, i);
		rc = msg_error(CMD, "thread %u loops (head %s) but no exit of the loop tests memory that"
			       " another thread or process could set: not a flag spin", tid,
			       h ? step_front_where(rec, h, where, sizeof(where)) : "?");
		goto out;
	}
	if (st) {
		rc = msg_error(CMD, "%s", strerror(-st));
		goto out;
	}
	if (argus_step__symbolize(s, f.addr, sym, sizeof(sym), &sym_off, &have_sym) || !have_sym)
		have_sym = false;
	have_map = !argus_step__mapping(s, f.addr, map, sizeof(map), &map_off);
	argus_step__close(s);   /* ptrace: the thread runs on; lldb: stays stopped */
	s = NULL;
	if (o.record && argus_step_rec__save(rec, o.record, &err)) {
		rc = msg_error(CMD, "%s", msg_tstr(err.msg));
		goto out;
	}

	{
		const struct argus_step_insn *ri = argus_step_rec__insn(rec, f.insn_index);
		const struct argus_step_insn *bi = argus_step_rec__insn(rec, f.branch_index);

		step_front_where(rec, ri, where, sizeof(where));
		step_front_where(rec, bi, bwhere, sizeof(bwhere));
		if (o.json) {
			printf("{\"flag\":{\"addr\":%" PRIu64 ",\"size\":%u,\"symbol\":", f.addr, f.size);
			if (have_sym)
				argus_json_write_str(stdout, sym);
			else
				printf("null");
			printf(",\"symbol_offset\":%" PRIu64 ",\"mapping\":", have_sym ? sym_off : 0);
			if (have_map)
				argus_json_write_str(stdout, map);
			else
				printf("null");
			printf(",\"offset\":%" PRIu64 ",\"value\":%" PRIu64 ",\"insn\":{\"addr\":%" PRIu64
			       ",\"text\":", map_off, f.value, ri->addr);
			argus_json_write_str(stdout, ri->text);
			printf(",\"where\":");
			argus_json_write_str(stdout, where);
			printf("}},\"branch\":{\"addr\":%" PRIu64 ",\"text\":", bi->addr);
			argus_json_write_str(stdout, bi->text);
			printf(",\"where\":");
			argus_json_write_str(stdout, bwhere);
			printf("},\"loop\":");
			step_front_json_loop(&f.loop);
			printf(",\"method\":\"%s\",\"pid\":%u,\"tid\":%u,\"instructions\":%zu}\n", method,
			       o.pid, tid, n);
		} else {
			printf("flag 0x%" PRIx64 " (%u bytes) = %" PRIu64 "  ", f.addr, f.size, f.value);
			if (have_sym)
				printf("%s+0x%" PRIx64 " ", msg_tstr(sym), sym_off);
			if (have_map)
				printf("(%s+0x%" PRIx64 ")", msg_tstr(map), map_off);
			printf("\n  read by    0x%" PRIx64 " %s  %s\n", ri->addr, where, ri->text);
			printf("  exit test  0x%" PRIx64 " %s  %s\n", bi->addr, bwhere, bi->text);
			printf("  loop       head 0x%" PRIx64 ", body 0x%" PRIx64 "..0x%" PRIx64
			       ", %u iterations in %zu instructions (%s)\n", f.loop.head, f.loop.body_lo,
			       f.loop.body_hi, f.loop.iterations, n,
			       !strcmp(method, "diff") ? "found by the diff with --normal" :
			       "found by the loop's exit branch");
			/* --reader: the thread just stepped is the one that
			 * spins; named, its writes get edges even when its spin
			 * makes no syscall (docs/graph.md) */
			if (!o.watch)
				printf("next: argus watch --pid %u --addr 0x%" PRIx64 " --len %u --reader %u\n",
				       o.pid, f.addr, f.size, tid);
		}
	}
	/* --watch: the next step done here; with --json its line goes to
	 * stderr, stdout stays one JSON object */
	if (o.watch) {
		fflush(stdout);
		rc = ctl_watch_arm(CMD, o.pid, f.addr, f.size, tid, o.json ? stderr : stdout, NULL);
	}
out:
	argus_step__close(s);
	argus_step_rec__free(rec);
	return rc;
}
