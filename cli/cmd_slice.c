/* cmd_slice.c - `argus slice FILE ID [--pick N,N...] [--stop TID]`: the
 * backward slice from a segment (argus_diag__slice), the walk diagnose
 * makes from whoever woke the normal run back to the waiting thread.
 *
 * Each step follows the segment's only inter-thread in-edge, else the weak
 * edge from the thread's own previous segment.  Where two or more threads
 * lead in (a choice point) the next --pick answer is taken (1-based, in
 * the order of the list printed here), and once the answers run out the
 * library's default: the edge that woke the segment, else the latest.
 * The walk stops after a segment of thread --stop, at a segment with no
 * in-edge, on coming back to a segment already on the path, or after
 * ARGUS_DIAG_MAX_PATH steps.
 *
 * The choices at each step, the one taken and the ones not taken are
 * recomputed here from the graph with the library's own rule (strong
 * in-edges from another thread, in CSR order, at most 64), so the answer
 * numbers are the ones --pick expects. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"

#define SLICE_MAX_IN 64   /* as in argus_diag__slice */
#define STR_(x) #x
#define STR(x) STR_(x)

struct slice_opts {
	int picks[DIAG_MAX_PICKS];
	uint32_t npicks;
	uint32_t stop_tid;       /* 0 = none */
};

struct pick_ctx {
	const struct slice_opts *so;
	uint32_t next;           /* next --pick answer */
	char notes[1024];        /* answers that did not fit */
	size_t len;
};

static const struct argus_usage usage = {
	.cmd = "slice",
	.synopsis = "argus slice FILE ID [--pick N,N...] [--stop TID] [--json] [--schema FILE] [--no-split]\n",
	.about =
	"  The backward slice diagnose uses: from ID, the one inter-thread in-edge,\n"
	"  else the thread's own previous segment, up to 32 steps.\n",
};

static int pick_cb(const char *cmd, const struct argus_opt *opt, const char *s)
{
	struct slice_opts *so = opt->value;

	return diag_front_parse_picks(cmd, s, so->picks, &so->npicks);
}

static int pick(void *vctx, const struct argus_graph *g, uint32_t seg, const uint32_t *ids,
		uint32_t n)
{
	struct pick_ctx *p = vctx;
	int k;

	if (p->next >= p->so->npicks)
		return argus_diag__default_pick(g, ids, n);
	k = p->so->picks[p->next++] - 1;
	if ((uint32_t)k < n)
		return k;
	k = argus_diag__default_pick(g, ids, n);
	if (p->len < sizeof(p->notes) - 1)
		p->len += (size_t)snprintf(p->notes + p->len, sizeof(p->notes) - p->len,
					   "--pick answer %u is %d but #%u has %u choices: took %d,"
					   " the default\n", p->next, p->so->picks[p->next - 1],
					   seg, n, k + 1);
	return k;
}

/* The inter-thread in-edges of seg, as argus_diag__slice sees them. */
static uint32_t choices_of(const struct argus_graph *g, uint32_t seg, uint32_t *out)
{
	uint32_t tid = argus_graph__thread(g, argus_graph__segment(g, seg)->thread)->tid;
	const uint32_t *ids;
	uint32_t m = argus_graph__in_edges(g, seg, &ids), n = 0;

	for (uint32_t i = 0; i < m && n < SLICE_MAX_IN; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);
		const struct argus_segment *src = argus_graph__segment(g, e->src);

		if (e->type != ARGUS_EDGE_INTRA &&
		    argus_graph__thread(g, src->thread)->tid != tid)
			out[n++] = ids[i];
	}
	return n;
}

/* Why the walk ended at its last step. */
static const char *stop_reason(struct graph_open_ctx *c, const struct argus_step *st, uint32_t n,
			       uint32_t stop_tid)
{
	uint32_t last = st[n - 1].seg;
	const struct argus_segment *s = argus_graph__segment(c->g, last);
	const uint32_t *ids;

	if (stop_tid && n > 1 && argus_graph__thread(c->g, s->thread)->tid == stop_tid)
		return "reached thread --stop";
	if (n == ARGUS_DIAG_MAX_PATH)
		return "the step limit (" STR(ARGUS_DIAG_MAX_PATH) " steps)";
	if (argus_graph__in_edges(c->g, last, &ids) == 0)
		return s->start_reason == ARGUS_START_TRACE ? "no in-edge: the thread's first segment"
							       " in the trace" :
		       s->start_reason == ARGUS_START_THREAD ? "no in-edge: the thread started here" :
		       "no in-edge (woken by an interrupt or the kernel, or before the trace)";
	return "the next step would come back to a segment already on the path";
}

struct step_info {
	uint32_t inter[SLICE_MAX_IN];
	uint32_t n;              /* choices */
	int took;                /* index into inter of the edge taken, -1 */
};

static void step_infos(struct graph_open_ctx *c, const struct argus_step *st, uint32_t n,
		       struct step_info *si)
{
	for (uint32_t i = 0; i < n; i++) {
		si[i].n = choices_of(c->g, st[i].seg, si[i].inter);
		si[i].took = -1;
		for (uint32_t k = 0; i + 1 < n && k < si[i].n; k++)
			if (si[i].inter[k] == st[i + 1].edge)
				si[i].took = (int)k;
	}
}

static void print_text(struct graph_open_ctx *c, const struct argus_step *st, uint32_t n,
		       const struct step_info *si, const struct slice_opts *so,
		       const struct pick_ctx *pc)
{
	char buf[512], sb[24];

	diag_front_seg_str(c, st[0].seg, buf, sizeof(buf));
	printf("backward slice from %s: who made it run, step by step back in time\n", buf);
	printf("(the one inter-thread in-edge, else the thread's previous segment; where two\n"
	       " or more threads lead in, %s)\n",
	       so->npicks ? "the --pick answers, then the edge that woke it" :
	       "the edge that woke it (--pick N,N... to choose)");
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(c->g, st[i].seg);
		const struct argus_edge *e = st[i].edge != ARGUS_NONE ?
			argus_graph__edge(c->g, st[i].edge, ARGUS_EDGE_BUF) : NULL;
		char via[32];

		snprintf(via, sizeof(via), "<-%s-", e ? argus_edge_type_str(e->type) : "");
		diag_front_seg_str(c, st[i].seg, buf, sizeof(buf));
		printf("  %2u %-11s %-32s %.6f s", i, i ? via : "", buf, diag_front_rel_s(c, s->start));
		if (s->end_reason == ARGUS_END_WAIT)
			printf("  then %s %.3f ms", s->wait_nr >= 0 ?
			       diag_front_sys(s->wait_nr, sb, sizeof(sb)) : "waited (not in a syscall)",
			       (double)s->wait_ns / 1e6);
		if (si[i].n >= 2 && si[i].took >= 0)
			printf("  (%u choices; took %d)", si[i].n, si[i].took + 1);
		else if (si[i].n >= 2)
			printf("  (%u choices; stopped here)", si[i].n);
		printf("\n");
		for (uint32_t k = 0; si[i].n >= 2 && k < si[i].n; k++) {
			if ((int)k == si[i].took)
				continue;
			diag_front_edge_str(c, si[i].inter[k], true, buf, sizeof(buf));
			printf("       not taken %u) %s\n", k + 1, buf);
		}
	}
	printf("stopped: %s\n", stop_reason(c, st, n, so->stop_tid));
	if (pc->len)
		printf("%s", pc->notes);
	if (pc->next < so->npicks)
		printf("%u --pick answer(s) not used: the slice made only %u choice(s)\n",
		       so->npicks - pc->next, pc->next);
}

static void print_json(struct graph_open_ctx *c, const struct argus_step *st, uint32_t n,
		       const struct step_info *si, const struct slice_opts *so,
		       const struct pick_ctx *pc)
{
	printf("{\"from\":%u,\"stop_tid\":", st[0].seg);
	if (so->stop_tid)
		printf("%u", so->stop_tid);
	else
		printf("null");
	printf(",\"picks_used\":%u,\"steps\":[", pc->next);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(c->g, st[i].seg);
		const struct argus_thread *t = argus_graph__thread(c->g, s->thread);
		bool first = true;

		printf("%s\n{\"step\":%u,\"segment\":%u,\"tid\":%u,\"pid\":%u,\"comm\":", i ? "," : "",
		       i, st[i].seg, t->tid, t->pid);
		diag_front_json_str(graph_open_comm_raw(c->g, t));
		printf(",\"process\":");
		diag_front_json_str(graph_open_process_raw(c->g, t));
		printf(",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"edge\":", s->start, s->end);
		if (st[i].edge != ARGUS_NONE)
			diag_front_json_edge(c, st[i].edge);
		else
			printf("null");
		printf(",\"choices\":%u,\"took\":", si[i].n);
		if (si[i].n >= 2 && si[i].took >= 0)
			printf("%d", si[i].took + 1);
		else
			printf("null");
		printf(",\"not_taken\":[");
		for (uint32_t k = 0; si[i].n >= 2 && k < si[i].n; k++) {
			if ((int)k == si[i].took)
				continue;
			printf("%s{\"choice\":%u,\"edge\":", first ? "" : ",", k + 1);
			diag_front_json_edge(c, si[i].inter[k]);
			printf("}");
			first = false;
		}
		printf("]}");
	}
	printf("],\"stopped\":");
	diag_front_json_str(stop_reason(c, st, n, so->stop_tid));
	printf("}\n");
}

int cmd_slice(int argc, char **argv)
{
	static const char *const names[] = { "ID" };
	struct argus_step st[ARGUS_DIAG_MAX_PATH];
	struct step_info *si = NULL;
	struct slice_opts so = { 0 };
	struct pick_ctx pc = { .so = &so };
	struct seg_cli_opts o;
	struct graph_open_ctx c;
	int rc, n;

	const struct argus_opt opts[] = {
		{ OPT_(ARGUS_OPT_CALLBACK, 0, "pick", &so, "N,N...",
		       "where two or more threads lead in, the edge that woke the\n"
		       "segment is taken unless --pick gives the answers in order\n"
		       "(1-based); the others are listed"),
		  .flags = ARGUS_OPT_ONCE, .cb = pick_cb },
		OPT_U32(0, "stop", &so.stop_tid, "TID", "stop after the first segment of thread TID", 1, 0),
		OPT_END(),
	};

	if ((rc = diag_front_parse_segs(&usage, opts, argc, argv, &o, 1, names)))
		return argus_opts_exit(rc);
	if ((rc = diag_front_open_segs(&c, "slice", &o)))
		return rc;
	if (so.stop_tid && argus_graph__thread_by_tid(c.g, so.stop_tid) == ARGUS_NONE) {
		fprintf(stderr, "argus slice: %s: --stop %u: no such thread in the trace\n", o.g.path,
			so.stop_tid);
		rc = 2;
		goto out;
	}
	n = argus_diag__slice(c.g, o.ids[0], so.stop_tid, 0, so.npicks ? pick : NULL, &pc, st,
			      ARGUS_DIAG_MAX_PATH);
	if (n <= 0) {
		rc = msg_error("slice", "%s: the slice failed: %s", o.g.path,
			       n ? strerror(-n) : "no step");
		goto out;
	}
	si = calloc((size_t)n, sizeof(*si));
	if (!si) {
		rc = msg_error("slice", "out of memory");
		goto out;
	}
	step_infos(&c, st, (uint32_t)n, si);
	if (o.json)
		print_json(&c, st, (uint32_t)n, si, &so, &pc);
	else
		print_text(&c, st, (uint32_t)n, si, &so, &pc);
	if (fflush(stdout) || ferror(stdout))
		rc = msg_error("slice", "writing the output failed");
out:
	free(si);
	graph_open_close(&c);
	return rc;
}
