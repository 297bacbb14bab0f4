/* cmd_save.c - `argus save [--last DURATION] -o FILE [--force]`: ask the
 * collector to write out what it holds, then copy the ring's chunks (not
 * re-encoded) into a snapshot file that stays private to root: created
 * 0600, O_EXCL|O_NOFOLLOW, never into a file or link a user put at FILE
 * (safe_file.h).
 *
 * The copy of a full 2 GiB ring lasts seconds; on a terminal a watcher
 * thread shows how far it got (progress.h): argus_trace__save_to() takes
 * no progress callback, but the snapshot only ever grows by appended
 * chunks, so its size against the chunks to copy is the progress. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

static const struct argus_usage usage = {
	.cmd = "save",
	.synopsis = "argus save [--last DURATION] -o FILE [--force]\n",
	.about = "  Copies what the running collector holds into FILE, a trace of its own.\n",
};

int cmd_save(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t last = 0, from_ts = 0;
	struct argus_error err = { 0 };
	unsigned out_flags = 0;
	bool force = false;
	int n;
	const struct argus_opt opts[] = {
		OPT_DURATION(0, "last", &last, "DURATION",
			     "only the last DURATION, like 30s, 5m, 1500ms (default:\n"
			     "everything in the ring)", 1, 0),
		OPT_STRING('o', NULL, &out, "FILE",
			   "created new, mode 0600; a FILE argus did not create (another\n"
			   "owner, wider mode, a link) is refused"),
		OPT_BOOL(0, "force", &force, "replace such a FILE (a symbolic link is replaced, not followed)"),
		OPT_END(),
	};

	if ((n = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(n);
	if (n)
		return msg_usage_error("save", "unexpected argument '%s'", msg_tstr(argv[0]));
	if (force)
		out_flags |= ARGUS_OUT_FORCE;
	if (!out)
		return msg_usage_error("save", "needs -o FILE");
	/* before asking the collector for anything: a refused -o costs nothing */
	if (argus_out__check(out, out_flags, &err))
		return msg_out_error("save", &err);
	if (ctl_ring_save("save", out, out_flags, last, &from_ts, true))
		return 1;

	struct argus_trace *t = argus_trace__open(out, &err);
	if (!t)
		return msg_error("save", "saved, but cannot read it back: %s", err.msg);
	const struct argus_trace_stats *st = argus_trace__stats(t);
	printf("argus: saved %llu chunks spanning %.1f s to %s\n",
	       (unsigned long long)st->chunks,
	       st->max_ts > st->min_ts ? (st->max_ts - st->min_ts) / 1e9 : 0.0, out);
	argus_trace__close(t);
	return 0;
}
