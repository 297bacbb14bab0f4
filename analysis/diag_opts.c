/* diag_opts.c - the words of hangs, diagnose and report, and of the
 * segment commands (show, similar, slice, diff): their option tables and
 * usage, parsed by parse_opts.h.  The session parses hangs', diagnose's
 * and report's words here whoever typed them (the CLI, the lldb plugin,
 * argusd's hang keeper), so their tables are the one source of those
 * commands' help (`argus diagnose --help`, the man page). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag_front.h"
#include "graph_open.h"
#include "msg.h"
#include "parse_opts.h"
#include "safe_file.h"
#include "until_end.h"

/* A usage error inside a parse: its line (and synopsis), then the answer */
#define USAGE_ERROR(...) (msg_usage_error(__VA_ARGS__), ARGUS_OPT_ERROR)

static const struct argus_usage hangs_usage = {
	.cmd = "hangs",
	.synopsis =
	"argus hangs FILE [--pid PID [--tid TID]] [--threshold MS] [--idle-wait RULE] [--all]\n"
	"                 [--live-rule] [--json]\n"
	"argus hangs --saved [--hang-dir D] [--json]\n",
	.about =
	"  A hang: a thread stayed away from its idle wait (where it waits for new\n"
	"  work: its event loop, learned per thread) for MS or more (default 2000);\n"
	"  a thread with no idle wait (a command-line tool, a script) hangs in any\n"
	"  single wait, spin or retry loop of MS or more.  Marked intervals are\n"
	"  listed whatever their length.  No --pid: every process in the trace,\n"
	"  longest first (waits for a child and lone sleeps left out unless --all).\n"
	"  --saved: the hang snapshots the collector kept by itself (argus start\n"
	"  --watch) in D (default: the running collector's hang directory), newest\n"
	"  first, with their diagnosis' culprit.\n",
};

static const struct argus_usage diagnose_usage = {
	.cmd = "diagnose",
	.synopsis =
	"argus diagnose FILE --pid PID [--tid TID] [--at TIME | --mark TEXT] [--depth N]\n"
	"               [--threshold MS] [--idle-wait RULE] [--pick N,N...] [--json | --dot]\n"
	"               [--schema FILE] [--live | --no-live] [--no-holder-rules]\n"
	"argus diagnose --pid PID --until-end[=SECONDS] [--tid TID] [the flags above]\n",
	.about =
	"  Classifies the hang (busy, blocked, yield), finds a similar normal run,\n"
	"  slices back to who normally wakes the UI thread, names the culprit and\n"
	"  the culprit's culprit (--depth, default 3), and detects cycles.  Without\n"
	"  --at or --mark: the ongoing, else the longest hang of the main thread (or\n"
	"  of --tid); if it has none, of the process's other threads.\n",
};

static const struct argus_usage report_usage = {
	.cmd = "report",
	.synopsis =
	"argus report FILE --pid PID -o hang.html [--force] [--tid TID] [--at TIME | --mark TEXT]\n"
	"             [--threshold MS] [--depth N] [--pick N,N...] [--idle-wait RULE]\n"
	"             [--live | --no-live] [--no-holder-rules]\n"
	"             [--schema FILE]\n",
	.about =
	"  The hang `argus diagnose` takes with the same flags, drawn: a timeline of\n"
	"  the threads of the diagnosis (the hung thread, the path, the culprit and\n"
	"  its chain) over the similar normal run and over the hang, side by side;\n"
	"  their runs and waits (hover: the syscall and its object), the wake-up,\n"
	"  message, timer and data-flag edges as arrows, the verdict, each culprit's\n"
	"  stack (click a thread's name), the text report, the diagnose --json\n"
	"  object and the Perfetto JSON of those processes over both windows.  No\n"
	"  network: one file, opens in any browser.\n",
};

/* --at: integer = CLOCK_MONOTONIC ns; "12.5" or "12.5s" = seconds from the
 * trace start. */
static int at_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	struct diag_front_opts *o = opt->value;
	char *end;

	if (strchr(s, '.') || strchr(s, 's')) {
		double v = strtod(s, &end);

		if (end == s || (*end && strcmp(end, "s")) || v < 0)
			return msg_usage_error(cmd, "--at wants a time (ns, or seconds like 12.5s), got '%s'",
					       msg_tstr(s));
		o->at_ns = (uint64_t)(v * 1e9);
		o->at_rel = true;
	} else {
		errno = 0;
		o->at_ns = strtoull(s, &end, 10);
		if (!*s || *end || errno || s[0] == '-')
			return msg_usage_error(cmd, "--at wants a time (ns, or seconds like 12.5s), got '%s'",
					       msg_tstr(s));
	}
	o->have_at = true;
	return 0;
}

int diag_front_parse_picks(const char *cmd, const char *s, int *picks, uint32_t *n)
{
	const char *p = s;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > 64 || (*end && *end != ','))
			return msg_usage_error(cmd, "--pick wants a list of choices like 1,2,1, got '%s'",
					       msg_tstr(s));
		if (*n == DIAG_MAX_PICKS)
			return msg_usage_error(cmd, "--pick: at most %d choices", DIAG_MAX_PICKS);
		picks[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int pick_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	struct diag_front_opts *o = opt->value;

	return diag_front_parse_picks(cmd, s, o->picks, &o->npicks);
}

static int idle_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	uint8_t *rule = opt->value;

	if (!strcmp(s, "learn"))
		*rule = ARGUS_IDLE_LEARN;
	else if (!strcmp(s, "poll"))
		*rule = ARGUS_IDLE_POLL;
	else if (!strcmp(s, "none"))
		*rule = ARGUS_IDLE_NONE;
	else
		return msg_usage_error(cmd, "--idle-wait wants learn, poll or none, got '%s'", msg_tstr(s));
	return 0;
}

/* --until-end or --until-end=S: until_end_parse reads the whole word */
static int until_end_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	char word[128];

	snprintf(word, sizeof(word), "--until-end%s%s", s ? "=" : "", s ? s : "");
	return until_end_parse(cmd, word, opt->value) < 0 ? 2 : 0;
}

static int html_only_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	(void)s;
	return msg_usage_error(cmd, "--%s: the report is HTML (argus diagnose --%s prints that)",
			       opt->long_name, opt->long_name);
}

int diag_front_parse(const char *cmd, int argc, char **argv, struct diag_front_opts *o)
{
	bool hangs = !strcmp(cmd, "hangs"), report = !strcmp(cmd, "report");
	const struct argus_usage *u = hangs ? &hangs_usage : report ? &report_usage : &diagnose_usage;
	uint32_t threshold_ms = 2000;
	bool force = false;
	int live = 0, n;
	char **av;
	struct argus_opt graph[GRAPH_OPEN_NOPTS];

	memset(o, 0, sizeof(*o));
	graph_open_opts_table(&o->g, graph);
	const struct argus_opt common[] = {
		OPT_U32(0, "pid", &o->pid, "PID", hangs ? "every thread of PID (no --pid: every process)" :
			"the hung process", 1, 0),
		OPT_U32(0, "tid", &o->tid, "TID", hangs ? "that thread of PID, its hangs in time order" :
			"the hung thread (default: the main thread)", 1, 0),
		OPT_U32(0, "threshold", &threshold_ms, "MS", "a hang lasts MS or more (default 2000)", 1, 0),
		OPT_CALLBACK(0, "idle-wait", &o->idle_rule, "RULE",
			     "learn (default): epoll, poll on 2+ fds, and polls that are not a\n"
			     "request's reply wait are idle; poll: every poll-family wait is\n"
			     "idle (the event-loop model); none: no wait is idle", idle_cb),
		OPT_END(),
	};
	const struct argus_opt hangs_opts[] = {
		OPT_INCLUDE(common),
		OPT_BOOL(0, "all", &o->all, "also waits for a child, lone sleeps and threads seen only asleep"),
		OPT_BOOL(0, "live-rule", &o->live_rule,
			 "the hangs argusd's live watch (argus start --watch) reports\n"
			 "over the same events, listed the same way: both should agree"),
		OPT_BOOL(0, "json", &o->json, "{\"hangs\":[...]} (docs/diagnosis.md)"),
		OPT_INCLUDE(graph),
		OPT_END(),
	};
	const struct argus_opt which[] = {
		OPT_CALLBACK(0, "at", o, "TIME",
			     "whatever the thread did at TIME (ns, or seconds from the trace\n"
			     "start: 12.5s), a hang or not, even under the threshold", at_cb),
		OPT_STRING(0, "mark", &o->mark, "TEXT", "the hang annotated by `argus mark TEXT`"),
		OPT_U32(0, "depth", &o->depth, "N", "follow the culprit's culprit N deep (default 3)", 1,
			ARGUS_DIAG_MAX_CHAIN),
		OPT_CALLBACK(0, "pick", o, "N,N...",
			     "answers for the places the slice must choose (else asked on a\n"
			     "TTY, or the edge that woke the segment, alternatives listed)", pick_cb),
		OPT_SET_INT(0, "live", &live, 1,
			    "FILE was just taken from this running system (argus save): a\n"
			    "wait nobody has ended yet is blamed on who holds it now: a file\n"
			    "lock's holder (/proc/locks), a socket's, pipe's or loopback TCP\n"
			    "connection's other end (/proc/PID/fd, /proc/net/tcp), the child\n"
			    "a wait4 waits for, a mutex's owner; a stopped culprit, and the\n"
			    "tracer holding it, are named.  Each such step says its source\n"
			    "(JSON \"live\").  The default when FILE is of this host and boot\n"
			    "and at most 120 s old"),
		OPT_SET_INT(0, "no-live", &live, -1, "the trace alone, never the running system"),
		OPT_BOOL(0, "no-holder-rules", &o->no_holder_rules,
			 "live, run no schema holder command (the built-in PostgreSQL\n"
			 "one, and --schema's): the kernel's sources only"),
		OPT_INCLUDE(graph),
		OPT_END(),
	};
	const struct argus_opt diagnose_opts[] = {
		OPT_INCLUDE(common),
		OPT_INCLUDE(which),
		OPT_BOOL(0, "json", &o->json, "the diagnosis as JSON (docs/diagnosis.md)"),
		OPT_BOOL(0, "dot", &o->dot, "the diagnosis' segments and edges as Graphviz DOT"),
		OPT_CALLBACK_F(0, "until-end", &o->until_end_ns, "SECONDS",
			       "no FILE: snapshot the running collector (the last\n"
			       "2 minutes), take the hang going on, wait until it ends (up to\n"
			       "SECONDS, default 60; Ctrl-C: stop waiting), snapshot again and\n"
			       "diagnose it with its real wake-up.  It ends when its thread's\n"
			       "wait returns (or it is back in its event loop); a thread stopped\n"
			       "by a debugger, when what would wake it happens: the file lock\n"
			       "released, its pipe or socket readable, its futex word changed.\n"
			       "At the timeout: what is known, and the hang is still going",
			       ARGUS_OPT_OPTARG, until_end_cb),
		OPT_END(),
	};
	const struct argus_opt report_opts[] = {
		OPT_STRING('o', NULL, &o->out, "FILE",
			   "the page: created new, mode 0600; a FILE argus did not create\n"
			   "is refused"),
		OPT_BOOL(0, "force", &force, "replace such a FILE (a symbolic link is replaced, not followed)"),
		OPT_INCLUDE(common),
		OPT_INCLUDE(which),
		OPT_CALLBACK_F(0, "json", NULL, NULL, NULL, ARGUS_OPT_NOARG | ARGUS_OPT_HIDDEN, html_only_cb),
		OPT_CALLBACK_F(0, "dot", NULL, NULL, NULL, ARGUS_OPT_NOARG | ARGUS_OPT_HIDDEN, html_only_cb),
		OPT_END(),
	};

	/* the words are the caller's (the plugin keeps them, diagnose passes
	 * them on): parse a copy, which the parser reorders */
	if (argc < 1)
		return USAGE_ERROR(u->cmd, "missing trace FILE");
	if (!(av = calloc((size_t)argc + 1, sizeof(*av)))) {
		msg_error(u->cmd, "out of memory");
		return ARGUS_OPT_ERROR;
	}
	memcpy(av, argv, (size_t)argc * sizeof(*av));
	n = argus_opts_parse(u, hangs ? hangs_opts : report ? report_opts : diagnose_opts, argc, av, 0);
	if (n > 1) {
		msg_usage_error(u->cmd, "unexpected argument '%s'", msg_tstr(av[1]));
		n = ARGUS_OPT_ERROR;
	}
	if (n == 1)
		o->g.path = av[0];
	free(av);
	if (n < 0)
		return n;
	o->threshold_ns = (uint64_t)threshold_ms * 1000000ull;
	o->live = live > 0;
	o->live_flag = (int8_t)live;
	o->out_flags = force ? ARGUS_OUT_FORCE : 0;
	if (!o->g.path && !o->until_end_ns)
		return USAGE_ERROR(u->cmd, "missing trace FILE");
	if (!o->pid && (!hangs || o->tid))
		return USAGE_ERROR(u->cmd, "--pid PID is required (the hung process)");
	if (o->have_at && o->mark)
		return USAGE_ERROR(u->cmd, "--at and --mark are exclusive");
	if (o->until_end_ns && (o->have_at || o->mark))
		return USAGE_ERROR(u->cmd, "--until-end waits for the hang going on now: not with %s",
				       o->have_at ? "--at" : "--mark");
	if (o->json && o->dot)
		return USAGE_ERROR(u->cmd, "--json and --dot are exclusive");
	return 0;
}

/* ---- the segment commands (show, similar, slice, diff) ---------------- */

/* A segment id: a decimal number; 0 is a segment like any other. */
static int parse_seg_id(const char *cmd, const char *name, const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v >= ARGUS_NONE)
		return msg_usage_error(cmd, "%s: '%s' is not a segment id (a number as printed by"
				       " argus diagnose, hangs or graph, like 261 or #261)", name,
				       msg_tstr(s));
	*out = (uint32_t)v;
	return 0;
}

int diag_front_parse_segs(const struct argus_usage *u, const struct argus_opt *extra, int argc,
			  char **argv, struct seg_cli_opts *o, uint32_t nids,
			  const char *const *id_names)
{
	static const struct argus_opt none[] = { OPT_END() };
	struct argus_opt graph[GRAPH_OPEN_NOPTS];
	int n;

	memset(o, 0, sizeof(*o));
	graph_open_opts_table(&o->g, graph);
	const struct argus_opt opts[] = {
		OPT_INCLUDE(extra ? extra : none),
		OPT_BOOL(0, "json", &o->json, "the same as one JSON object (docs/diagnosis.md)"),
		OPT_INCLUDE(graph),
		OPT_END(),
	};

	if ((n = argus_opts_parse(u, opts, argc, argv, 0)) < 0)
		return n;
	if (n < 1)
		return USAGE_ERROR(u->cmd, "missing trace FILE");
	o->g.path = argv[0];
	for (int i = 1; i < n; i++) {
		const char *a = argv[i];

		if (o->nids == nids)
			return USAGE_ERROR(u->cmd, "unexpected argument '%s'", msg_tstr(a));
		/* "#261", as the reports print it, is accepted too */
		if (parse_seg_id(u->cmd, id_names[o->nids], a + (a[0] == '#'), &o->ids[o->nids]))
			return ARGUS_OPT_ERROR;
		o->nids++;
	}
	if (o->nids < nids)
		return USAGE_ERROR(u->cmd, "missing %s (a segment id from argus diagnose, hangs"
				       " or graph)", id_names[o->nids]);
	return 0;
}
