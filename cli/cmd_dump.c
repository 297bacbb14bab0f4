/* cmd_dump.c - `argus dump FILE`: every event as one readable line, in
 * timestamp order, like `perf script`; with --stacks, symbolized user
 * stacks under the events that carry one; with --json, one JSON object per
 * line instead (docs/trace-format.md, "dump --json").  Both are written by
 * the one event formatter (graphlib/argus_event_format.h).  Lost events
 * and chunks lost to ring wrap or a crash are always reported at the end,
 * never hidden: "# " lines in the text, a last {"stats":...} line in JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_event_format.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "cli.h"
#include "symbolize.h"
#include "trace_format.h"

/* The symbolizer lives until exit (one CLI run): a work item's callback
 * and, with --stacks, each frame, from the process's mappings in the
 * trace (argus_event_fmt.symbolize). */
struct dump_sym {
	const struct argus_trace *t;
	struct argus_symbolizer *sym;
};

static int symbolize(void *arg, uint32_t pid, uint64_t ts, uint64_t ip, char *buf, size_t len)
{
	struct dump_sym *d = arg;
	struct argus_sym s;

	if (!d->sym)
		d->sym = argus_symbolizer__new();
	if (!d->sym || argus_symbolize_trace_ip(d->sym, d->t, pid, ts, ip, &s))
		return -1;
	argus_sym__format(&s, ip, buf, len);
	return 0;
}

static void print_stats(const struct argus_trace *t)
{
	const struct argus_trace_stats *st = argus_trace__stats(t);
	const struct argus_file_header *fh = argus_trace__header(t);

	printf("# %s from %s (kernel %s, %u CPUs); wait stacks: %s\n",
	       fh->flags & ARGUS_FILE_RING ? "ring" : "snapshot", msg_tstr(fh->hostname), msg_tstr(fh->kernel),
	       fh->ncpus, fh->flags & ARGUS_FILE_WAIT_STACKS ? "DWARF-unwound (--wait-stacks)"
	       : "frame pointers only");
	printf("# %" PRIu64 " events in %" PRIu64 " chunks, %.3f s",
	       st->events, st->chunks,
	       st->max_ts > st->min_ts ? (st->max_ts - st->min_ts) / 1e9 : 0.0);
	if (st->chunks_overwritten || st->chunks_incomplete)
		printf(", %" PRIu64 " chunks overwritten by the ring, %" PRIu64 " cut by a crash",
		       st->chunks_overwritten, st->chunks_incomplete);
	if (st->chunks_corrupt)
		printf(", %" PRIu64 " corrupt chunks skipped (first at offset 0x%" PRIx64 ", %s)",
		       st->chunks_corrupt, st->corrupt_offset, st->corrupt_why);
	if (st->out_of_order)
		printf(", %" PRIu64 " out of order", st->out_of_order);
	printf("\n# lost events:");
	uint64_t total = 0;
	for (uint32_t c = 0; c < st->ncpus && c < 256; c++) {
		printf(" cpu%u=%" PRIu64, c, st->cpu[c].lost);
		total += st->cpu[c].lost;
	}
	printf(" total=%" PRIu64 "\n", total);
}

/* The same totals as print_stats, as the last JSON line: an object with
 * one key, "stats", so a reader that selects events by "type" skips it. */
static void print_stats_json(const struct argus_trace *t)
{
	const struct argus_trace_stats *st = argus_trace__stats(t);
	const struct argus_file_header *fh = argus_trace__header(t);
	uint64_t total = 0;

	printf("{\"stats\":{\"ring\":%s,\"hostname\":", fh->flags & ARGUS_FILE_RING ? "true" : "false");
	argus_json_write_str(stdout, fh->hostname);
	printf(",\"kernel\":");
	argus_json_write_str(stdout, fh->kernel);
	printf(",\"ncpus\":%u,\"wait_stacks\":%s,\"events\":%" PRIu64 ",\"chunks\":%" PRIu64
	       ",\"min_ts\":%" PRIu64 ",\"max_ts\":%" PRIu64 ",\"chunks_overwritten\":%" PRIu64
	       ",\"chunks_incomplete\":%" PRIu64 ",\"chunks_corrupt\":%" PRIu64
	       ",\"out_of_order\":%" PRIu64 ",\"lost\":[",
	       fh->ncpus, fh->flags & ARGUS_FILE_WAIT_STACKS ? "true" : "false", st->events,
	       st->chunks, st->min_ts, st->max_ts, st->chunks_overwritten, st->chunks_incomplete,
	       st->chunks_corrupt, st->out_of_order);
	for (uint32_t c = 0; c < st->ncpus && c < 256; c++) {
		printf("%s%" PRIu64, c ? "," : "", st->cpu[c].lost);
		total += st->cpu[c].lost;
	}
	printf("],\"lost_total\":%" PRIu64 "}}\n", total);
}

static const struct argus_usage usage = {
	.cmd = "dump",
	.synopsis = "argus dump FILE [--stacks] [--pid PID] [--tid TID] [--stats] [--json]\n",
	.about = "  Prints the events of a trace file, one per line.\n",
};

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	bool stacks = false, stats_only = false, json = false;
	long pid = -1, tid = -1;
	struct argus_error err = { 0 };
	struct argus_event ev;
	struct dump_sym ds = { 0 };
	struct argus_event_fmt fmt = { .symbolize = symbolize, .arg = &ds };
	int rc;

	uint32_t upid = UINT32_MAX, utid = UINT32_MAX;   /* not given */
	const struct argus_opt opts[] = {
		OPT_BOOL(0, "stacks", &stacks, "print symbolized user stacks under events that have one"),
		OPT_U32(0, "pid", &upid, "PID", "only the events of process PID (and its wake-ups)", 0,
			INT32_MAX),
		OPT_U32(0, "tid", &utid, "TID", "only the events of thread TID (and its wake-ups)", 0,
			INT32_MAX),
		OPT_BOOL(0, "stats", &stats_only, "print only the per-CPU counts, lost events and time span"),
		OPT_BOOL(0, "json", &json, "one JSON object per event and line, then a {\"stats\":...} line "
			 "(fields: docs/trace-format.md, \"dump --json\")"),
		OPT_END(),
	};

	if ((rc = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(rc);
	if (rc > 1)
		return msg_usage_error("dump", "unexpected argument '%s'", msg_tstr(argv[1]));
	path = rc ? argv[0] : NULL;
	pid = upid == UINT32_MAX ? -1 : (long)upid;
	tid = utid == UINT32_MAX ? -1 : (long)utid;
	if (!path)
		return msg_usage_error("dump", "needs a trace FILE");
	struct argus_trace *t = argus_trace__open(path, &err);
	if (!t)
		return msg_error("dump", "%s", err.msg);
	ds.t = fmt.trace = t;
	fmt.stacks = stacks;
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		if (stats_only)
			continue;
		if (pid >= 0 && ev.pid != pid && !(ev.type == AE_SWITCH && ev.f[ARGUS_F_SW_NEXT_PID] == (uint64_t)pid) &&
		    !(ev.type == AE_WAKING && ev.f[ARGUS_F_WK_TARGET_PID] == (uint64_t)pid))
			continue;
		if (tid >= 0 && ev.tid != tid && !(ev.type == AE_SWITCH && ev.f[ARGUS_F_SW_NEXT_TID] == (uint64_t)tid) &&
		    !(ev.type == AE_WAKING && ev.f[ARGUS_F_WK_TARGET_TID] == (uint64_t)tid))
			continue;
		if (json)
			argus_event__write_json(stdout, &fmt, &ev);
		else
			argus_event__write_text(stdout, &fmt, &ev);
	}
	if (rc < 0) {
		fflush(stdout);
		argus_symbolizer__free(ds.sym);
		argus_trace__close(t);
		return msg_error("dump", "%s", err.msg);
	}
	if (json)
		print_stats_json(t);
	else
		print_stats(t);
	argus_symbolizer__free(ds.sym);
	argus_trace__close(t);
	if (fflush(stdout) || ferror(stdout))
		return msg_error("dump", "writing the output failed");
	return 0;
}
