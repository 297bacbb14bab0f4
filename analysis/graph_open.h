/* graph_open.h - what the graph-based subcommands (graph, export, and the
 * diagnosis commands) share: the common flags, opening a trace and
 * building its graph with a progress bar on a TTY, and printing names. */
#ifndef ARGUS_GRAPH_OPEN_H
#define ARGUS_GRAPH_OPEN_H
#include <stdbool.h>
#include <stdio.h>

#include "argus_graph.h"

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

/* Consumes argv[i] (and its value) if it is a common flag: returns how
 * many arguments were used, 0 if not one, -1 after printing a usage error. */
int graph_open_common_flag(struct graph_open_opts *o, int argc, char **argv, int i);
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
