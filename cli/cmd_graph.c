/* cmd_graph.c - `argus graph FILE`: build the event graph of a trace and
 * print its size (--stats, like the paper's table) or one node with its
 * predecessors and successors (--node ID, as text, --dot or --json). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_graph.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"
#include "syscall_names.h"

static void print_stats(const char *path, const struct argus_graph *g)
{
	const struct argus_graph_stats *st = argus_graph__stats(g);
	uint64_t filtered = 0;
	double secs = (double)st->build_ns / 1e9;

	for (unsigned r = 0; r < ARGUS_FILT_MAX; r++)
		filtered += st->filtered[r];
	printf("trace:      %s\n", path);
	printf("events:     %" PRIu64 " over %.3f s (lost by the collector: %" PRIu64 ")\n",
	       st->events, st->max_ts > st->min_ts ? (double)(st->max_ts - st->min_ts) / 1e9 : 0.0,
	       st->lost);
	printf("vertices:   %" PRIu64 " segments\n", st->vertices);
	printf("edges:      %" PRIu64 "\n", st->edges);
	for (unsigned t = ARGUS_EDGE_WAKEUP; t < ARGUS_EDGE_TYPE_MAX; t++)
		if (st->edges_by_type[t])
			printf("  %-10s %" PRIu64 "%s\n", argus_edge_type_str(t),
			       st->edges_by_type[t], t == ARGUS_EDGE_INTRA ? " (weak)" : "");
	printf("processes:  %" PRIu64 "\n", st->processes);
	printf("threads:    %" PRIu64 "\n", st->threads);
	printf("messages:   %" PRIu64 " IPC send->receive pairs, %" PRIu64 " bytes"
	       " (%" PRIu64 " receives without a traced send; %" PRIu64
	       " sends recorded after their receive)\n",
	       st->messages, st->bytes, st->unmatched_recv, st->late_sends);
	printf("wake-ups:   %" PRIu64 " seen, %" PRIu64 " filtered (not an edge):\n",
	       st->wakeups, filtered);
	for (unsigned r = 0; r < ARGUS_FILT_MAX; r++)
		if (st->filtered[r])
			printf("  %-14s %" PRIu64 "\n", argus_filter_reason_str(r), st->filtered[r]);
	printf("timer wake-ups re-attributed to the arming segment: %" PRIu64 "\n",
	       st->timer_reattributed);
	printf("timer wake-ups inferred (untraced, an expired own timer): %" PRIu64 "\n",
	       st->timer_inferred);
	printf("batching splits: %" PRIu64 "\n", st->splits);
	if (st->schema_boundaries || st->schema_edges)
		printf("schema:     %" PRIu64 " boundaries, %" PRIu64 " edges\n",
		       st->schema_boundaries, st->schema_edges);
	printf("build:      %.3f s, %.2f M events/s\n", secs,
	       secs > 0 ? (double)st->events / secs / 1e6 : 0.0);
	printf("memory:     %.1f MiB, %.1f B/event (%" PRIu64 " values past 32 bits, %" PRIu64
	       " events outside the packed slot)\n", (double)st->mem_bytes / 1048576.0,
	       st->events ? (double)st->mem_bytes / (double)st->events : 0.0,
	       st->big_values, st->wide_events);
}

static void print_edge(struct graph_open_ctx *c, uint32_t edge, bool in)
{
	char buf[512];

	diag_front_edge_str(c, edge, in, buf, sizeof(buf));
	printf("  %s %s\n", in ? "<-" : "->", buf);
}

static void print_node(struct graph_open_ctx *c, uint32_t id)
{
	const struct argus_graph *g = c->g;
	const struct argus_segment *s = argus_graph__segment(g, id);
	const struct argus_thread *t = argus_graph__thread(g, s->thread);
	const struct argus_graph_stats *st = argus_graph__stats(g);
	const uint32_t *ids;
	uint32_t n;

	printf("segment #%u: %s %u/%u (process %s)\n", id, graph_open_comm(g, t), t->pid,
	       t->tid, graph_open_process(g, t));
	printf("  time      %.6f .. %.6f s (%.3f ms), on CPU %.3f ms, %u events, %u samples\n",
	       (double)(s->start - st->min_ts) / 1e9, (double)(s->end - st->min_ts) / 1e9,
	       (double)(s->end - s->start) / 1e6, (double)s->oncpu / 1e6, s->nevents,
	       s->nsamples);
	printf("  began     %s%s%s\n", argus_seg_start_str(s->start_reason),
	       s->woken_by ? ", woken by " : "",
	       s->woken_by ? argus_woken_by_str(s->woken_by) : "");
	printf("  ended     %s", argus_seg_end_str(s->end_reason));
	if (s->end_reason == ARGUS_END_WAIT) {
		graph_open_print_wait(g, s);
	}
	printf("\n");
	if (s->flags & ARGUS_SEG_F_MULTI)
		printf("  note      serves several processes (batching not split)\n");
	n = argus_graph__in_edges(g, id, &ids);
	printf("predecessors (%u):\n", n);
	for (uint32_t i = 0; i < n; i++)
		print_edge(c, ids[i], true);
	n = argus_graph__out_edges(g, id, &ids);
	printf("successors (%u):\n", n);
	for (uint32_t i = 0; i < n; i++)
		print_edge(c, ids[i], false);
}

/* The node and its direct neighbours, for --dot / --json. */
static int write_neighbourhood(const struct argus_graph *g, uint32_t id, bool dot)
{
	const uint32_t *in, *out;
	uint32_t nin = argus_graph__in_edges(g, id, &in);
	uint32_t nout = argus_graph__out_edges(g, id, &out), n = 0;
	uint32_t *v = malloc((nin + nout + 1) * sizeof(*v));
	int rc;

	if (!v)
		return -12;
	v[n++] = id;
	for (uint32_t i = 0; i < nin; i++)
		v[n++] = argus_graph__edge(g, in[i], ARGUS_EDGE_BUF)->src;
	for (uint32_t i = 0; i < nout; i++)
		v[n++] = argus_graph__edge(g, out[i], ARGUS_EDGE_BUF)->dst;
	rc = dot ? argus_graph__write_dot(g, v, n, stdout)
		 : argus_graph__write_json(g, v, n, stdout);
	free(v);
	return rc;
}

/* Every segment of the selected processes / threads, for --dot / --json. */
static int write_selection(struct graph_open_ctx *c, const uint32_t *pids,
			   uint32_t npid, const uint32_t *tids, uint32_t ntid, bool dot,
			   bool text)
{
	const struct argus_graph *g = c->g;
	uint32_t nseg = argus_graph__nsegments(g), n = 0;
	uint32_t *v = malloc(((size_t)nseg + 1) * sizeof(*v));
	int rc;

	if (!v)
		return -12;
	for (uint32_t s = 0; s < nseg; s++) {
		const struct argus_thread *t =
			argus_graph__thread(g, argus_graph__segment(g, s)->thread);
		bool keep = false;

		for (uint32_t i = 0; i < npid && !keep; i++)
			keep = t->pid == pids[i];
		for (uint32_t i = 0; i < ntid && !keep; i++)
			keep = t->tid == tids[i];
		if (keep)
			v[n++] = s;
	}
	if (text) {
		for (uint32_t i = 0; i < n; i++)
			print_node(c, v[i]);
		rc = 0;
	} else {
		rc = dot ? argus_graph__write_dot(g, v, n, stdout)
			 : argus_graph__write_json(g, v, n, stdout);
	}
	free(v);
	return rc;
}

#define MAX_SEL 64

static const struct argus_usage usage = {
	.cmd = "graph",
	.synopsis =
	"argus graph FILE [--stats] [--node ID | --pid PID... | --tid TID...] [--dot|--json]\n"
	"            [--schema FILE] [--no-split]\n",
	.about = "  Builds the event graph of FILE: its size, or one node and its neighbours.\n",
};

int cmd_graph(int argc, char **argv)
{
	struct graph_open_opts o = { 0 };
	bool stats = false, dot = false, json = false;
	uint32_t pids[MAX_SEL], tids[MAX_SEL], npid, ntid, seg = ARGUS_NONE;
	struct argus_opt_list pl = { pids, 0, MAX_SEL }, tl = { tids, 0, MAX_SEL };
	struct argus_opt graph[GRAPH_OPEN_NOPTS];
	long long node;
	struct graph_open_ctx c;
	int rc, n;

	graph_open_opts_table(&o, graph);
	const struct argus_opt opts[] = {
		OPT_BOOL(0, "stats", &stats,
			 "vertices, edges by type, processes, threads, IPC messages,\n"
			 "filtered wake-ups by reason, build time and memory (default)"),
		OPT_U32(0, "node", &seg, "ID", "one segment with its predecessors and successors", 0,
			ARGUS_NONE - 1),
		OPT_U32_LIST(0, "pid", &pl, "PID", "every segment of these processes (repeatable)", 1, 0),
		OPT_U32_LIST(0, "tid", &tl, "TID", "every segment of these threads (repeatable)", 1, 0),
		OPT_BOOL(0, "dot", &dot, "the node's neighbourhood, or the selected segments and the\n"
			 "edges among them, as Graphviz DOT"),
		OPT_BOOL(0, "json", &json, "the same as JSON"),
		OPT_INCLUDE(graph),
		OPT_END(),
	};

	if ((n = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(n);
	if (n > 1)
		return msg_usage_error("graph", "unexpected argument '%s'", msg_tstr(argv[1]));
	o.path = n ? argv[0] : NULL;
	node = seg == ARGUS_NONE ? -1 : (long long)seg;
	npid = pl.n;
	ntid = tl.n;
	if (!o.path)
		return msg_usage_error("graph", "missing trace FILE");
	if (dot && json)
		return msg_usage_error("graph", "--dot and --json are exclusive");
	if ((dot || json) && node < 0 && !npid && !ntid)
		return msg_usage_error("graph", "--dot/--json need --node ID or --pid/--tid");
	if (node >= 0 && (npid || ntid))
		return msg_usage_error("graph", "--node and --pid/--tid are exclusive");
	if (!stats && node < 0 && !npid && !ntid)
		stats = true;
	if ((rc = graph_open_trace(&c, "graph", &o)))
		return rc;
	if (node >= 0 && (uint64_t)node >= argus_graph__nsegments(c.g)) {
		rc = msg_error("graph", "%s: no segment #%lld (the graph has %u)", o.path,
			       node, argus_graph__nsegments(c.g));
	} else {
		if (stats)
			print_stats(o.path, c.g);
		if (node >= 0 && !dot && !json)
			print_node(&c, (uint32_t)node);
		else if (node >= 0 && write_neighbourhood(c.g, (uint32_t)node, dot))
			rc = msg_error("graph", "writing the output failed");
		else if ((npid || ntid) && write_selection(&c, pids, npid, tids, ntid, dot,
							       !dot && !json))
			rc = msg_error("graph", "writing the output failed");
	}
	graph_open_close(&c);
	return rc;
}
