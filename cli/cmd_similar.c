/* cmd_similar.c - `argus similar FILE ID [--max N]`: the segments of ID's
 * thread that did the same thing, ranked as the diagnosis ranks them when
 * it looks for a normal run of a hung wait (argus_diag__similar).
 *
 * Similar means: same thread, and the normalized event sets contain one
 * another.  A set holds the distinct task-context syscalls, the final wait
 * (syscall and object, by identity, else by kind only when that finds
 * nothing), timers armed, lifecycle events, and the processes woken,
 * messaged and messaged by; repeats and interrupts do not count.  Lower
 * score is better: distance in time in seconds, +100 when the next
 * segment was not woken by another thread (nothing to slice from), +50
 * when it waited at least half as long as ID (a hang too), +0.5 unless the
 * sets are equal, +0.25 for a run after ID.  The whole trace is searched
 * (no window excluded); ID itself is left out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"

#define SIMILAR_MAX 10000

struct similar_opts {
	uint32_t max;
	bool kind;      /* --kind: the wait's object by its kind only */
};

static const struct argus_usage usage = {
	.cmd = "similar",
	.synopsis = "argus similar FILE ID [--max N] [--kind] [--json] [--schema FILE] [--no-split]\n",
	.about =
	"  Ranks the other segments of ID's thread whose normalized event sets\n"
	"  (distinct syscalls, the final wait and its object, threads woken and\n"
	"  messaged) contain ID's or are contained in it: the candidates diagnose\n"
	"  picks a normal run from.  Lower score is better.\n",
};

static const char *contains_sym(uint8_t c)
{
	return c == 3 ? "=" : c == 1 ? "\u2287" : c == 2 ? "\u2286" : "?";
}

static const char *contains_word(uint8_t c)
{
	return c == 3 ? "equal" : c == 1 ? "superset" : c == 2 ? "subset" : "?";
}

static void wait_str(const struct argus_segment *s, char *buf, size_t len)
{
	char sb[24];

	if (s->end_reason != ARGUS_END_WAIT)
		snprintf(buf, len, "end: %s", argus_seg_end_str(s->end_reason));
	else if (s->wait_ns)
		snprintf(buf, len, "%s %.3f ms", s->wait_nr >= 0 ?
			 diag_front_sys(s->wait_nr, sb, sizeof(sb)) : "no-syscall",
			 (double)s->wait_ns / 1e6);
	else
		snprintf(buf, len, "%s ?", s->wait_nr >= 0 ?
			 diag_front_sys(s->wait_nr, sb, sizeof(sb)) : "no-syscall");
}

/* "ime_worker/7298 futex", "own timer", "hardirq", "-" */
static void woken_short(struct graph_open_ctx *c, uint32_t seg, char *buf, size_t len)
{
	const struct argus_segment *nx;
	struct diag_resume r;

	diag_front_resume(c, seg, &r);
	nx = r.next != ARGUS_NONE ? argus_graph__segment(c->g, r.next) : NULL;
	if (!nx) {
		snprintf(buf, len, "(no next segment)");
	} else if (r.own_timer) {
		snprintf(buf, len, "own timer");
	} else if (r.edge != ARGUS_NONE) {
		const struct argus_edge *e = argus_graph__edge(c->g, r.edge, ARGUS_EDGE_BUF);
		const struct argus_thread *t =
			argus_graph__thread(c->g, argus_graph__segment(c->g, e->src)->thread);

		snprintf(buf, len, "%s/%u %s (#%u)", graph_open_comm(c->g, t), t->tid,
			 argus_edge_type_str(e->type), r.next);
	} else {
		snprintf(buf, len, "%s (#%u)", nx->start_reason == ARGUS_START_WAKE ?
			 argus_woken_by_str(nx->woken_by) : argus_seg_start_str(nx->start_reason),
			 r.next);
	}
}

static void print_text(struct graph_open_ctx *c, uint32_t id, const struct argus_similar *v,
		       int n, uint32_t max)
{
	const struct argus_segment *ref = argus_graph__segment(c->g, id);
	const struct argus_thread *t = argus_graph__thread(c->g, ref->thread);
	char w[64], wb[128];

	wait_str(ref, w, sizeof(w));
	printf("similar to #%u %s %u/%u at %.6f s (%s, on CPU %.3f ms):\n", id,
	       graph_open_comm(c->g, t), t->pid, t->tid, diag_front_rel_s(c, ref->start), w,
	       (double)ref->oncpu / 1e6);
	printf("similar = same thread, and normalized event sets (distinct syscalls, the final wait"
	       " and its object, who it woke or messaged) that contain #%u's (\u2287), are contained"
	       " in it (\u2286) or are equal (=); lower score is better\n", id);
	if (n == 0) {
		printf("  none: no other segment of this thread did the same thing\n");
		return;
	}
	printf("  %4s %-7s %-22s %12s %11s %-22s %9s %3s %8s  %s\n", "rank", "segment", "thread",
	       "start s", "dt ms", "wait", "on-CPU ms", "set", "score", "next woken by");
	for (int i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(c->g, v[i].seg);
		char th[64];

		snprintf(th, sizeof(th), "%s %u/%u", graph_open_comm(c->g, t), t->pid, t->tid);
		wait_str(s, w, sizeof(w));
		woken_short(c, v[i].seg, wb, sizeof(wb));
		/* the symbols are 3 bytes in UTF-8 and one column wide */
		printf("  %4d #%-6u %-22s %12.6f %+11.3f %-22s %9.3f  %s  %8.3f  %s\n", i + 1,
		       v[i].seg, th, diag_front_rel_s(c, s->start), (double)v[i].dt_ns / 1e6, w,
		       (double)s->oncpu / 1e6, contains_sym(v[i].contains), v[i].score, wb);
	}
	if ((uint32_t)n == max)
		printf("  (the first %u; --max N for more)\n", max);
}

static void print_json(struct graph_open_ctx *c, uint32_t id, const struct argus_similar *v,
		       int n)
{
	const struct argus_segment *ref = argus_graph__segment(c->g, id);
	const struct argus_thread *t = argus_graph__thread(c->g, ref->thread);
	char sb[24];

	printf("{\"segment\":%u,\"tid\":%u,\"pid\":%u,\"comm\":", id, t->tid, t->pid);
	diag_front_json_str(graph_open_comm_raw(c->g, t));
	printf(",\"start_ns\":%" PRIu64 ",\"candidates\":[", ref->start);
	for (int i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(c->g, v[i].seg);
		struct diag_resume r;

		diag_front_resume(c, v[i].seg, &r);
		printf("%s\n{\"rank\":%d,\"segment\":%u,\"tid\":%u,\"start_ns\":%" PRIu64
		       ",\"start_s\":%.9f,\"dt_ns\":%" PRId64 ",\"oncpu_ns\":%" PRIu64
		       ",\"end_reason\":\"%s\",\"wait_syscall\":",
		       i ? "," : "", i + 1, v[i].seg, t->tid, s->start, diag_front_rel_s(c, s->start),
		       v[i].dt_ns, s->oncpu, argus_seg_end_str(s->end_reason));
		if (s->end_reason == ARGUS_END_WAIT && s->wait_nr >= 0)
			diag_front_json_str(diag_front_sys(s->wait_nr, sb, sizeof(sb)));
		else
			printf("null");
		printf(",\"wait_ns\":");
		if (s->wait_ns)
			printf("%" PRIu64, s->wait_ns);
		else
			printf("null");
		printf(",\"contains\":\"%s\",\"score\":%.6f,\"resumed\":",
		       contains_word(v[i].contains), v[i].score);
		diag_front_json_resume(c, v[i].seg, &r);
		printf("}");
	}
	printf("]}\n");
}

int cmd_similar(int argc, char **argv)
{
	static const char *const names[] = { "ID" };
	struct argus_similar *v = NULL;
	struct seg_cli_opts o;
	struct graph_open_ctx c;
	struct similar_opts so = { .max = 10 };
	uint32_t max;
	int rc, n;

	const struct argus_opt opts[] = {
		OPT_U32(0, "max", &so.max, "N", "at most N segments (default 10)", 1, SIMILAR_MAX),
		OPT_BOOL(0, "kind", &so.kind,
			 "the wait's object by its kind only (what diagnose falls back to,\n"
			 "\"match\": \"kind\" in its JSON, when no run outside the hang waited\n"
			 "on the same object)"),
		OPT_END(),
	};

	if ((rc = diag_front_parse_segs(&usage, opts, argc, argv, &o, 1, names)))
		return argus_opts_exit(rc);
	max = so.max;
	if ((rc = diag_front_open_segs(&c, "similar", &o)))
		return rc;
	v = calloc(max, sizeof(*v));
	if (!v) {
		rc = msg_error("similar", "out of memory");
		goto out;
	}
	n = so.kind ? argus_diag__similar_by_kind(c.g, o.ids[0], 0, 0, v, max) :
		      argus_diag__similar(c.g, o.ids[0], 0, 0, v, max);
	if (n < 0) {
		rc = msg_error("similar", "%s: %s", o.g.path, strerror(-n));
		goto out;
	}
	if (o.json)
		print_json(&c, o.ids[0], v, n);
	else
		print_text(&c, o.ids[0], v, n, max);
	if (fflush(stdout) || ferror(stdout))
		rc = msg_error("similar", "writing the output failed");
out:
	free(v);
	graph_open_close(&c);
	return rc;
}
