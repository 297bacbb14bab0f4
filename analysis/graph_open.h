/* graph_open.h - what the graph-based subcommands (graph, export, and the
 * diagnosis commands) share: the common flags, opening a trace and
 * building its graph with a progress bar on a TTY, and printing names. */
#ifndef ARGUS_GRAPH_OPEN_H
#define ARGUS_GRAPH_OPEN_H
#include <stdbool.h>
#include <stdio.h>

#include "argus_graph.h"
#include "parse_opts.h"

struct graph_open_opts {
	const char *path;        /* the trace FILE */
	const char *schema_path; /* --schema FILE */
	bool no_split;           /* --no-split */
};

struct graph_open_ctx {
	struct argus_trace *t;
	struct argus_schema *schema;
	struct argus_graph *g;
};

/* The common flags (--schema FILE, --no-split) into o, as an option table
 * to include (OPT_INCLUDE: parse_opts.h) in a command's. */
#define GRAPH_OPEN_NOPTS 3
void graph_open_opts_table(struct graph_open_opts *o, struct argus_opt t[GRAPH_OPEN_NOPTS]);
/* Opens o->path, loads the schema, builds the graph.  Prints one line
 * naming the file and the problem and returns the exit code on failure. */
int graph_open_trace(struct graph_open_ctx *c, const char *cmd,
		   const struct graph_open_opts *o);
void graph_open_close(struct graph_open_ctx *c);

/* Names of a thread and its process ("?" when unknown), escaped for a
 * terminal (msg_tstr(): they are whatever the traced program chose), in
 * rotating buffers: several fit in one printf.  JSON takes the _raw ones
 * (argus_json_write_str escapes on its own). */
const char *graph_open_comm(const struct argus_graph *g, const struct argus_thread *t);
const char *graph_open_process(const struct argus_graph *g, const struct argus_thread *t);
const char *graph_open_comm_raw(const struct argus_graph *g, const struct argus_thread *t);
const char *graph_open_process_raw(const struct argus_graph *g, const struct argus_thread *t);
/* Prints " in SYSCALL(obj) for N ms[, timeout T ms]" for a segment that
 * ended in a wait. */
void graph_open_print_wait(const struct argus_graph *g, const struct argus_segment *s);
void graph_open_fprint_wait(FILE *f, const struct argus_graph *g, const struct argus_segment *s);
#endif
