/* cmd_export.c - `argus export FILE --format perfetto|dot -o OUT`: the
 * event graph of a trace as a file another tool opens.  perfetto: Chrome
 * trace-event JSON for ui.perfetto.dev or chrome://tracing, one track per
 * thread, a slice per segment, an arrow per strong edge.  dot: the same
 * selection of segments (window, processes) and the edges among them, for
 * Graphviz (docs/graph.md, "Exports").
 *
 * OUT is written as a temporary file next to it (mkstemp: mode 0600, as
 * traces are private to root) and renamed over OUT only once complete and
 * synced, so an error or Ctrl-C never leaves a half-written OUT behind. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_graph.h"
#include "cli.h"
#include "graph_open.h"
#include "progress.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

static const char *const formats[] = { "perfetto", "dot" };

#define MAX_PIDS 64
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* tmp = "DIR/.NAME.XXXXXX" for out = "DIR/NAME"; -1 if it does not fit
 * or out names no file. */
static int temp_name(const char *out, char *tmp, size_t len)
{
	const char *slash = strrchr(out, '/');
	const char *base = slash ? slash + 1 : out;
	int dirlen = slash ? (int)(base - out) : 0, n;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -1;
	n = snprintf(tmp, len, "%.*s.%s.XXXXXX", dirlen, out, base);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A time flag: seconds since the trace's first event ("2.5"), or a
 * duration with a unit ("2500ms"). */
/* Write the export into the open temp file f, then sync and close it.
 * Returns 0 or -errno; f is closed either way. */
static int write_out(const struct argus_graph *g, const struct argus_export_opts *eo,
		     bool dot, FILE *f, uint64_t *size)
{
	off_t end;
	int rc;

	errno = 0;
	rc = dot ? argus_graph__write_dot_window(g, eo, f) : argus_graph__write_perfetto(g, eo, f);
	if (rc == -EIO && errno)
		rc = -errno;    /* what stdio saw, e.g. ENOSPC */
	if (!rc && interrupted)
		rc = -ECANCELED;
	if (!rc) {
		end = ftello(f);
		*size = end > 0 ? (uint64_t)end : 0;
		if (fflush(f) || fsync(fileno(f)))
			rc = -errno;
	}
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static const struct argus_usage usage = {
	.cmd = "export",
	.synopsis =
	"argus export FILE [--format perfetto|dot] -o OUT [--force] [--from SEC] [--to SEC]\n"
	"            [--pid PID...] [--kernel] [--schema FILE] [--no-split]\n",
	.about = "  Writes the event graph of FILE for another tool.\n",
};

/* --from/--to: *value gets the time; the flag after it says it was given */
struct when {
	uint64_t ns;
	bool given;
};

static int time_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	struct when *w = opt->value;

	if (argus_parse_duration(s, &w->ns))
		return msg_usage_error(cmd, "--%s wants seconds from the start of the trace, e.g. 2.5"
				       " or 2500ms, got '%s'", opt->long_name, msg_tstr(s));
	w->given = true;
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct graph_open_opts o = { 0 };
	struct argus_export_opts eo = { .sz = sizeof(eo) };
	const char *format = "perfetto", *out = NULL;
	uint64_t from = 0, to = 0, size = 0;
	uint32_t pids[MAX_PIDS];
	bool has_from = false, has_to = false, known = false;
	struct progress prog;
	char tmp[PATH_MAX], sz[32];
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	struct graph_open_ctx c;
	struct stat si, so;
	const struct argus_graph_stats *st;
	FILE *f;
	int fd, rc;
	unsigned out_flags = 0;
	struct argus_error oerr = { 0 };

	struct when wfrom = { 0 }, wto = { 0 };
	struct argus_opt_list pl = { pids, 0, MAX_PIDS };
	struct argus_opt graph[GRAPH_OPEN_NOPTS];
	bool force = false, kernel = false;

	graph_open_opts_table(&o, graph);
	const struct argus_opt opts[] = {
		OPT_STRING(0, "format", &format, "perfetto|dot",
			   "perfetto: Chrome trace-event JSON for ui.perfetto.dev or\n"
			   "chrome://tracing: a track per thread, a slice per\n"
			   "segment, an arrow per causal edge (the default);\n"
			   "dot: the same segments and the edges among them, for\n"
			   "Graphviz (dot -Tsvg); narrow it with --pid/--from/--to"),
		OPT_STRING('o', NULL, &out, "OUT",
			   "written whole or not at all, mode 0600; an OUT argus did\n"
			   "not create is replaced only with --force"),
		OPT_BOOL(0, "force", &force, "replace such an OUT (a symbolic link is replaced, not followed)"),
		OPT_CALLBACK(0, "from", &wfrom, "SEC",
			     "only this window, in seconds from the trace's start\n"
			     "(or with a unit: 2500ms)", time_cb),
		OPT_CALLBACK(0, "to", &wto, "SEC", "the window's end, as --from", time_cb),
		OPT_U32_LIST(0, "pid", &pl, "PID", "only these processes (repeatable, at most 64)", 1, 0),
		OPT_BOOL(0, "kernel", &kernel, "also kernel threads (left out by default)"),
		OPT_INCLUDE(graph),
		OPT_END(),
	};

	if ((rc = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(rc);
	if (rc > 1)
		return msg_usage_error("export", "unexpected argument '%s'", msg_tstr(argv[1]));
	o.path = rc ? argv[0] : NULL;
	if (force)
		out_flags |= ARGUS_OUT_FORCE;
	eo.include_kernel = kernel;
	eo.npids = pl.n;
	eo.pids = pl.n ? pids : NULL;
	from = wfrom.ns;
	to = wto.ns;
	has_from = wfrom.given;
	has_to = wto.given;
	for (size_t i = 0; i < NFORMATS; i++)
		known |= !strcmp(format, formats[i]);
	if (!known) {
		char list[128] = "";

		for (size_t i = 0; i < NFORMATS; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", formats[i]);
		return msg_usage_error("export", "unknown --format '%s' (known: %s)", format, list);
	}
	if (!o.path)
		return msg_usage_error("export", "needs a trace FILE");
	if (!out)
		return msg_usage_error("export", "needs -o OUT (the %s file to write)", format);
	if (has_from && has_to && to <= from)
		return msg_usage_error("export", "--to must be later than --from");
	if (temp_name(out, tmp, sizeof(tmp)))
		return msg_usage_error("export", "-o '%s' does not name a file", out);
	if (!stat(out, &so) && !stat(o.path, &si) && so.st_dev == si.st_dev &&
	    so.st_ino == si.st_ino)
		return msg_usage_error("export", "-o %s would overwrite the trace", out);
	/* the temp file is mkstemp's (O_EXCL, 0600) and rename() replaces a
	 * link rather than following it; what is left to refuse is replacing
	 * a file argus did not create */
	if (argus_out__check(out, out_flags, &oerr))
		return msg_out_error("export", &oerr);

	if ((rc = graph_open_trace(&c, "export", &o)))
		return rc;
	st = argus_graph__stats(c.g);
	if (has_from)
		eo.from_ts = st->min_ts + from;
	if (has_to)
		eo.to_ts = st->min_ts + to;
	/* a bar on a terminal once the write has lasted a second; a non-zero
	 * return (Ctrl-C) cancels the export */
	progress_begin(&prog, "writing", "items");
	prog.cancel = &interrupted;
	eo.progress = progress_cb;
	eo.progress_ctx = &prog;

	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = msg_error("export", "cannot write %s: %s", out, strerror(errno));
		graph_open_close(&c);
		return rc;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = msg_error("export", "cannot write %s: %s", out, strerror(errno));
		close(fd);
		unlink(tmp);
		graph_open_close(&c);
		return rc;
	}
	/* From here on Ctrl-C cancels cleanly: the temp file goes away. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = write_out(c.g, &eo, !strcmp(format, "dot"), f, &size);
	progress_end(&prog);
	if (!rc && rename(tmp, out))
		rc = -errno;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc) {
		unlink(tmp);
		graph_open_close(&c);
		if (rc == -ECANCELED)
			return msg_error("export", "interrupted: %s not written", out);
		return msg_error("export", "writing %s: %s (nothing written)", out, strerror(-rc));
	}
	argus_format_size(size, sz, sizeof(sz));
	fprintf(stderr, "argus export: %s: %" PRIu64 " segments, %" PRIu64
		" edges (%" PRIu64 " strong) -> %s (%s, %s)\n",
		o.path, st->vertices, st->edges,
		st->edges - st->edges_by_type[ARGUS_EDGE_INTRA], out, format, sz);
	graph_open_close(&c);
	return 0;
}
