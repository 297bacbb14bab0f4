/* cmd_record.c - `argus record -o FILE -- CMD [ARGS...]`: trace the whole
 * system while CMD runs, in this process (no daemon needed).
 *
 * The child is forked first but held on a pipe until the BPF programs are
 * attached, so its whole life is in the trace.  Our own activity is
 * excluded by tgid.  Ctrl-C reaches CMD; we keep recording until it exits,
 * then write the last chunk.  The exit status is CMD's. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "collector.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

static const struct argus_usage usage = {
	.cmd = "record",
	.synopsis =
	"argus record -o FILE [--force] [--size SIZE] [--sample-hz HZ] [--no-irq] [--all-entries]\n"
	"             [--no-unwind] [--wait-stacks] -- CMD [ARGS...]\n",
	.about =
	"  Traces the whole system while CMD runs, without the collector.  Exits\n"
	"  with CMD's exit status.\n",
};

int cmd_record(int argc, char **argv)
{
	struct argus_collector_opts opts = { .sz = sizeof(opts), .zlevel = -1 };
	const char *out = NULL;
	char err[512], sz[32];
	int i, go[2], status = 0;
	bool force = false, wait_stacks = false;
	pid_t child;

	opts.probe.sz = sizeof(opts.probe);
	const struct argus_opt options[] = {
		OPT_STRING('o', NULL, &out, "FILE",
			   "created new, mode 0600; --force replaces a FILE argus did not\n"
			   "create (a symbolic link is replaced, not followed)"),
		OPT_BOOL(0, "force", &force, "replace such a FILE"),
		OPT_SIZE(0, "size", &opts.ring_size, "SIZE",
			 "bound the file as a ring of SIZE (like 512M; at least 1M)", 1u << 20, 0),
		OPT_U32(0, "sample-hz", &opts.probe.sample_hz, "HZ", "on-CPU stack samples per second (default 49)",
			0, 0),
		OPT_BOOL(0, "no-irq", &opts.probe.no_irq, "leave out interrupt events"),
		OPT_BOOL(0, "all-entries", &opts.probe.all_entries,
			 "also record the entries (sys_enter) of read/write/send/recv\n"
			 "calls; by default only their exits, which carry everything\n"
			 "the graph uses"),
		OPT_BOOL(0, "no-unwind", &opts.no_unwind,
			 "keep frame-pointer stacks only (no DWARF unwinding of the\n"
			 "sampler's stack copies: cheaper, but shallow stacks for\n"
			 "programs built without frame pointers)"),
		OPT_BOOL(0, "wait-stacks", &wait_stacks,
			 "DWARF-unwindable stacks where threads block, too (a 1 KiB\n"
			 "stack copy per blocking switch: deep waits in Debian's\n"
			 "libraries, for more collector CPU; also for start)"),
		OPT_END(),
	};

	/* `--` is kept: CMD comes only after it */
	if ((i = argus_opts_parse(&usage, options, argc, argv, ARGUS_OPTS_KEEP_DASHDASH)) < 0)
		return argus_opts_exit(i);
	if (i && strcmp(argv[0], "--"))
		return msg_usage_error("record", "unexpected argument '%s': the command to run goes"
				       " after --", msg_tstr(argv[0]));
	if (force)
		opts.out_flags |= ARGUS_OUT_FORCE;
	if (wait_stacks)
		opts.probe.block_copy = ARGUS_WAIT_STACK_COPY;
	if (!out)
		return msg_usage_error("record", "needs -o FILE");
	if (i < 2)
		return msg_usage_error("record", "needs a command after --");
	i = 0;      /* argv[i] is "--", argv[i + 1] CMD */
	if (geteuid() != 0)
		return msg_error("record", "need root to load BPF programs: run it as root");
	/* refuse a bad -o before the command runs; the collector creates the
	 * file itself with the same rule (safe_file.h) */
	struct argus_error oerr = { 0 };
	if (argus_out__check(out, opts.out_flags, &oerr))
		return msg_out_error("record", &oerr);
	if (pipe(go))
		return msg_error("record", "pipe: %s", strerror(errno));

	child = fork();
	if (child < 0)
		return msg_error("record", "fork: %s", strerror(errno));
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126); /* the recorder failed to start */
		close(go[0]);
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "argus record: cannot run '%s': %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	opts.path = out;
	opts.probe.self_tgid = (uint32_t)getpid();
	struct argus_collector *c = argus_collector__new(&opts, err, sizeof(err));
	if (!c) {
		close(go[1]);
		waitpid(child, NULL, 0);
		return msg_error("record", "%s", err);
	}
	/* after the fork: the command keeps its own priority */
	argus_collector_setup_process();
	signal(SIGINT, SIG_IGN); /* Ctrl-C is for the command; we finish the file */
	signal(SIGTERM, SIG_IGN);
	if (write(go[1], "g", 1) != 1) {
		/* child died already; waitpid below tells */
	}
	close(go[1]);

	int rc = 0;
	for (;;) {
		pid_t w = waitpid(child, &status, WNOHANG);
		if (w == child)
			break;
		int e = argus_collector__run_once(c, 50);
		if (e && e != -EINTR) {
			fprintf(stderr, "argus record: collector: %s\n", strerror(-e));
			rc = 1;
			kill(child, SIGTERM);
			waitpid(child, &status, 0);
			break;
		}
	}
	int ferr = argus_collector__finish(c);
	struct argus_collector_status st;
	argus_collector__status(c, &st);
	argus_collector__free(c);
	if (ferr)
		return msg_error("record", "writing %s: %s", out, strerror(-ferr));

	argus_format_size(st.bytes, sz, sizeof(sz));
	/* before the summary, which scripts read as the last line */
	if (st.spilled)
		fprintf(stderr, "argus record: %llu records went through the BPF spill ring"
			" (the collector was more than the 16 MiB first ring behind)\n",
			(unsigned long long)st.spilled);
	fprintf(stderr, "argus record: %llu events, %s (%.1f bytes/event), %llu lost, in %s"
		" (collector CPU %.3f s; %llu stacks DWARF-unwound, %llu unwinds from the memo)\n",
		(unsigned long long)st.events, sz,
		st.events ? (double)st.bytes / (double)st.events : 0.0,
		(unsigned long long)st.lost, out, st.cpu_seconds,
		(unsigned long long)st.unwound, (unsigned long long)st.unwind_memo_hits);
	if (st.dropped)
		fprintf(stderr, "argus record: %llu records were drained but could not be kept"
			" (out of memory)\n", (unsigned long long)st.dropped);
	if (st.late)
		fprintf(stderr, "argus record: %llu events reached the collector after later ones of"
			" their CPU had been written; they carry that CPU's last timestamp\n",
			(unsigned long long)st.late);
	if (rc)
		return rc;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
