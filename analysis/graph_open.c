/* graph_open.c - see graph_open.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "argus_event_format.h"
#include "argus_events.h"
#include "msg.h"
#include "graph_open.h"
#include "progress.h"

void graph_open_opts_table(struct graph_open_opts *o, struct argus_opt t[GRAPH_OPEN_NOPTS])
{
	const struct argus_opt opts[GRAPH_OPEN_NOPTS] = {
		OPT_STRING(0, "schema", &o->schema_path, "FILE",
			   "user schema: extra boundaries, edges, filters (docs/schema.md)"),
		OPT_BOOL(0, "no-split", &o->no_split,
			 "do not split server-loop segments (batching heuristic); ids\n"
			 "printed with --schema or --no-split need the same flag again"),
		OPT_END(),
	};

	memcpy(t, opts, sizeof(opts));
}

int graph_open_trace(struct graph_open_ctx *c, const char *cmd,
		   const struct graph_open_opts *o)
{
	struct argus_graph_opts go = { .sz = sizeof(go) };
	struct argus_error err = { 0 };
	struct progress prog;

	memset(c, 0, sizeof(*c));
	c->t = argus_trace__open(o->path, &err);
	if (!c->t)
		return msg_error(cmd, "%s", err.msg);
	if (o->schema_path) {
		c->schema = argus_schema__load(o->schema_path, &err);
		if (!c->schema) {
			argus_trace__close(c->t);
			return msg_error(cmd, "%s", err.msg);
		}
	}
	go.schema = c->schema;
	go.no_split = o->no_split;
	/* a bar on a terminal once the build has lasted a second (progress.h) */
	progress_begin(&prog, "building the graph", "events");
	go.progress = progress_cb;
	go.progress_ctx = &prog;
	c->g = argus_graph__build(c->t, &go, &err);
	progress_end(&prog);
	if (!c->g) {
		int rc = msg_error(cmd, "%s: %s", o->path, err.msg);

		graph_open_close(c);
		return rc;
	}
	return 0;
}

void graph_open_close(struct graph_open_ctx *c)
{
	argus_graph__free(c->g);
	argus_schema__free(c->schema);
	argus_trace__close(c->t);
	memset(c, 0, sizeof(*c));
}

const char *graph_open_comm_raw(const struct argus_graph *g, const struct argus_thread *t)
{
	const char *s = t ? argus_trace__string(argus_graph__trace(g), t->comm) : NULL;
	return s ? s : (t && !t->tid ? "swapper" : "?");
}

const char *graph_open_process_raw(const struct argus_graph *g, const struct argus_thread *t)
{
	const char *s = t ? argus_trace__string(argus_graph__trace(g), t->process) : NULL;
	return s ? s : "?";
}

const char *graph_open_comm(const struct argus_graph *g, const struct argus_thread *t)
{
	return msg_tstr(graph_open_comm_raw(g, t));
}

const char *graph_open_process(const struct argus_graph *g, const struct argus_thread *t)
{
	return msg_tstr(graph_open_process_raw(g, t));
}

void graph_open_fprint_wait(FILE *f, const struct argus_graph *g, const struct argus_segment *s)
{
	char b[24];

	if (s->wait_nr >= 0)
		fprintf(f, " in %s", argus_event_fmt_sys(s->wait_nr, b, sizeof(b)));
	else
		fprintf(f, " (not in a syscall)");
	if (s->wait_obj)
		fprintf(f, " on %s", argus_obj_kind_str(argus_graph__object(g, s->wait_obj)->kind));
	if (s->wait_ns)
		fprintf(f, " for %.3f ms", (double)s->wait_ns / 1e6);
}

void graph_open_print_wait(const struct argus_graph *g, const struct argus_segment *s)
{
	graph_open_fprint_wait(stdout, g, s);
}
