// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * argus-verifier-stats [--wait-stacks] [--max INSNS]
 *
 * How much work the kernel's verifier does on each BPF program, loaded as
 * the collector loads them (argus_probe__verifier_stats(): the same
 * .rodata, attached to nothing): instructions processed (the kernel's
 * limit is 1,000,000 per program) and verification time.  Their sum is
 * most of the collector's start-up time (docs/collector.md, "Kernel
 * quirks").  --wait-stacks loads the blocking switches' stack-copy path
 * too, as argusd --wait-stacks does.  With --max, exits 1 when a program
 * processed more than INSNS instructions (tests/unit's budget test); 2
 * when the load failed or a program's log gave no figure.  Needs root.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_events.h"
#include "bpf_probe.h"

struct tally {
	uint64_t max, insns, usec;
	char worst[64];         /* the name dies with the skeleton */
	uint64_t worst_insns;
	int over, unparsed;
};

static void one(void *ctx, const char *prog, uint64_t insns, uint64_t usec)
{
	struct tally *t = ctx;
	bool over = t->max && insns > t->max;

	printf("%-32s %9llu insns %9llu us%s\n", prog, (unsigned long long)insns,
	       (unsigned long long)usec, over ? "  OVER THE BUDGET" : "");
	t->unparsed += !insns;  /* the log said nothing: no figure to judge */
	t->insns += insns;
	t->usec += usec;
	t->over += over;
	if (insns > t->worst_insns) {
		t->worst_insns = insns;
		snprintf(t->worst, sizeof(t->worst), "%s", prog);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "wait-stacks", no_argument, NULL, 'w' },
		{ "max", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct argus_probe_opts o = { .sz = sizeof(o), .sample_copy = 2048 };
	struct tally t = { 0 };
	char errbuf[512], *end;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			o.block_copy = ARGUS_WAIT_STACK_COPY;
			break;
		case 'm':
			errno = 0;
			t.max = strtoull(optarg, &end, 10);
			if (errno || *end || !t.max) {
				fprintf(stderr, "argus-verifier-stats: --max wants a positive count of instructions, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: argus-verifier-stats [--wait-stacks] [--max INSNS]\n");
			return 0;
		default:
			fprintf(stderr, "usage: argus-verifier-stats [--wait-stacks] [--max INSNS]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "argus-verifier-stats: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	err = argus_probe__verifier_stats(&o, one, &t, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "argus-verifier-stats: %s%s\n", errbuf,
			err == -EPERM ? " (run as root)" : "");
		return 2;
	}
	if (t.unparsed) {
		fprintf(stderr, "argus-verifier-stats: %d program(s) loaded without a \"processed N insns\" line in their log\n",
			t.unparsed);
		return 2;
	}
	printf("total %llu insns, %.3f s of verification; most: %s, %llu insns (%.1f%% of the kernel's 1,000,000)\n",
	       (unsigned long long)t.insns, t.usec / 1e6, t.worst[0] ? t.worst : "-",
	       (unsigned long long)t.worst_insns, t.worst_insns / 1e4);
	return t.over ? 1 : 0;
}
