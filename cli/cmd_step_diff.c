/* cmd_step_diff.c - `argus step-diff A B [--json]`: the first point where
 * two step recordings (a normal run A and a hang B) take different paths
 * (argus_step_rec__diff): the branch, where each side went, the inputs of
 * its condition on each side (registers and memory, with addresses and
 * values), and the loop around it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "argus_graph.h"
#include "cli.h"
#include "step_front.h"

#define CMD "step-diff"

static void print_inputs(const char *side, const struct argus_step_rec *r,
			 const struct argus_step_input *in, int n)
{
	char where[300];

	for (int k = 0; k < n; k++) {
		const struct argus_step_insn *at = argus_step_rec__insn(r, in[k].at);

		if (in[k].is_mem)
			printf("  %-6s mem [0x%" PRIx64 "] %u bytes = 0x%" PRIx64 "%s   read by 0x%" PRIx64
			       " %s  %s\n", side, in[k].addr, in[k].size, in[k].value,
			       in[k].self_written ? " (the thread writes it too)" : "", at->addr,
			       step_front_where(r, at, where, sizeof(where)), at->text);
		else
			printf("  %-6s reg %-8s = 0x%" PRIx64 "   at 0x%" PRIx64 " %s  %s\n", side,
			       argus_step_reg__name(in[k].reg), in[k].value, at->addr,
			       step_front_where(r, at, where, sizeof(where)), at->text);
	}
}

static void json_side(const char *name, const struct argus_step_rec *r, size_t at, uint64_t next,
		      const struct argus_step_input *in, int n)
{
	printf("\"%s\":{\"index\":%zu,\"insn\":", name, at);
	step_front_json_insn(r, at);
	printf(",\"next\":%" PRIu64 ",\"inputs\":[", next);
	for (int k = 0; k < n; k++) {
		if (k)
			putchar(',');
		step_front_json_input(&in[k]);
	}
	printf("]}");
}

static const struct argus_usage usage = {
	.cmd = CMD,
	.synopsis = "argus step-diff A B [--json]\n",
	.about =
	"  A: a recording of the normal case, B: of the hang (argus step --record).\n"
	"  Aligns them by control flow (same function+offset) and prints the first\n"
	"  divergence: the branch, where each went, its condition's inputs on each\n"
	"  side (registers, memory: address and value) and the loop around it.\n",
};

int cmd_step_diff(int argc, char **argv)
{
	const char *pa = NULL, *pb = NULL;
	struct argus_step_rec *a = NULL, *b = NULL;
	struct argus_step_err err;
	struct argus_step_diff d;
	bool json = false;
	char where[300];
	int rc = 0;

	const struct argus_opt opts[] = {
		OPT_BOOL(0, "json", &json, "the divergence as JSON"),
		OPT_END(),
	};
	int n = argus_opts_parse(&usage, opts, argc, argv, 0);

	if (n < 0)
		return argus_opts_exit(n);
	if (n > 2)
		return msg_usage_error(CMD, "three recordings given: A (normal) and B (hang) only");
	pa = n > 0 ? argv[0] : NULL;
	pb = n > 1 ? argv[1] : NULL;
	if (!pb)
		return msg_usage_error(CMD, "two recordings needed: A (normal) and B (hang)");
	if (!(a = argus_step_rec__load(pa, &err)) || !(b = argus_step_rec__load(pb, &err))) {
		rc = msg_error(CMD, "%s", msg_tstr(err.msg));
		goto out;
	}
	rc = argus_step_rec__diff(a, b, &d);
	if (rc) {
		rc = msg_error(CMD, "%s", strerror(-rc));
		goto out;
	}
	if (json) {
		printf("{\"a\":{\"count\":%zu,\"pid\":%u,\"tid\":%u},\"b\":{\"count\":%zu,\"pid\":%u,"
		       "\"tid\":%u},\"aligned\":%s,\"diverged\":%s,\"common\":%zu",
		       argus_step_rec__count(a), argus_step_rec__pid(a), argus_step_rec__tid(a),
		       argus_step_rec__count(b), argus_step_rec__pid(b), argus_step_rec__tid(b),
		       d.aligned ? "true" : "false", d.diverged ? "true" : "false", d.common);
		if (d.diverged) {
			printf(",\"divergence\":{");
			json_side("a", a, d.a_at, d.a_next, d.a_in, d.na);
			putchar(',');
			json_side("b", b, d.b_at, d.b_next, d.b_in, d.nb);
			printf("},\"loop\":");
			if (d.have_loop)
				step_front_json_loop(&d.loop);
			else
				printf("null");
		}
		printf("}\n");
		goto out;
	}
	if (!d.aligned) {
		printf("no instruction in common: A and B ran different code\n");
		goto out;
	}
	printf("aligned at A #%zu, B #%zu (%s); %zu instructions in lockstep\n", d.a_start, d.b_start,
	       step_front_where(a, argus_step_rec__insn(a, d.a_start), where, sizeof(where)), d.common);
	if (!d.diverged) {
		printf("no divergence: %s ended first, running the same instructions as the other\n",
		       d.a_start + d.common == argus_step_rec__count(a) ? "A" : "B");
		goto out;
	}
	{
		const struct argus_step_insn *ia = argus_step_rec__insn(a, d.a_at);
		const struct argus_step_insn *ib = argus_step_rec__insn(b, d.b_at);

		printf("first divergence: A #%zu / B #%zu  %s  %s\n", d.a_at, d.b_at,
		       step_front_where(b, ib, where, sizeof(where)), ib->text);
		printf("  A (normal) at 0x%" PRIx64 " went to 0x%" PRIx64 "\n", ia->addr, d.a_next);
		printf("  B (hang)   at 0x%" PRIx64 " went to 0x%" PRIx64 "\n", ib->addr, d.b_next);
		if (!(ib->kind & ARGUS_STEP_K_JCC))
			printf("  not a conditional branch (%s): no condition to show\n", ib->text);
		else
			printf("condition inputs:\n");
		print_inputs("A", a, d.a_in, d.na);
		print_inputs("B", b, d.b_in, d.nb);
		if (d.have_loop)
			printf("loop: head 0x%" PRIx64 ", back edge at 0x%" PRIx64 ", body 0x%" PRIx64 "..0x%" PRIx64
			       ", %u iterations recorded, %u instructions per iteration\n", d.loop.head,
			       d.loop.latch, d.loop.body_lo, d.loop.body_hi, d.loop.iterations,
			       d.loop.body_insns);
		else
			printf("loop: none around the divergence\n");
	}
out:
	argus_step_rec__free(a);
	argus_step_rec__free(b);
	return rc;
}
