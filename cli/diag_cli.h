/* diag_cli.h - what `argus hangs` and `argus diagnose` share: their
 * flags, choosing the hang, and printing hangs, threads and stacks as text
 * or JSON (docs/diagnosis.md has the JSON schema). */
#ifndef ARGUS_DIAG_CLI_H
#define ARGUS_DIAG_CLI_H
#include <stdbool.h>
#include <stdint.h>

#include "argus_diag.h"
#include "graph_cli.h"

#define DIAG_MAX_PICKS 32

struct diag_cli_opts {
	struct graph_cli_opts g;
	uint32_t pid, tid;
	uint64_t threshold_ns;
	bool json, dot;
	bool have_at;
	uint64_t at_ns;          /* absolute CLOCK_MONOTONIC ns once resolved */
	bool at_rel;             /* --at was seconds from the trace start */
	const char *mark;
	uint32_t depth;
	int picks[DIAG_MAX_PICKS];
	uint32_t npicks;
};

/* Parses the flags of hangs (diagnose = false) or diagnose; prints a usage
 * error and returns 2 on bad input. */
int diag_cli_parse(const char *cmd, int argc, char **argv, struct diag_cli_opts *o,
		   bool diagnose);
/* The hangs of o->pid/o->tid; prints an error and returns non-zero if the
 * process or thread is not in the trace. */
int diag_cli_hangs(struct graph_cli_ctx *c, const char *cmd, struct diag_cli_opts *o,
		   struct argus_hang **h, uint32_t *n);

void diag_cli_print_thread_line(struct graph_cli_ctx *c, uint32_t tid);
void diag_cli_print_hang(struct graph_cli_ctx *c, const struct argus_hang *h, uint32_t i);
void diag_cli_json_hang(struct graph_cli_ctx *c, const struct argus_hang *h, unsigned kind);
/* JSON string (escaped, quoted) to stdout. */
void diag_cli_json_str(const char *s);
/* Symbolized frames of a trace stack, one per call: "func+off (file:line)". */
typedef void (*diag_frame_fn)(void *ctx, const char *frame);
void diag_cli_stack(struct graph_cli_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
		    diag_frame_fn fn, void *ctx);
const char *diag_cli_comm(struct graph_cli_ctx *c, uint32_t tid);
const char *diag_cli_process(struct graph_cli_ctx *c, uint32_t tid);
#endif
