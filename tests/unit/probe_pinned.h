/* probe_pinned.h - the set-up of the tests that load the real BPF programs
 * and watch their own syscalls (test_batch_probe, test_ring_spill): root
 * or exit 77 (skipped), the thread pinned to the last online CPU so its
 * records go to one CPU's batch, the probe opened with opts (self_tgid 1:
 * not us; no sampler, no irq records), /dev/null opened to write to.
 * Returns 0, or the exit code main() should return. */
#ifndef ARGUS_TEST_PROBE_PINNED_H
#define ARGUS_TEST_PROBE_PINNED_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "bpf_probe.h"

static int probe_pinned_open(struct argus_probe_opts *o, struct argus_probe **p,
			     int *cpu, int *devnull)
{
	char err[512];
	cpu_set_t set;

	*cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: loading BPF programs needs root\n");
		return 77;
	}
	CPU_ZERO(&set);
	CPU_SET(*cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	o->self_tgid = 1;  /* not us: our own syscalls are what the tests look for */
	o->no_sampler = true;
	o->no_irq = true;
	*p = argus_probe__open(o, err, sizeof(err));
	if (!*p) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	*devnull = open("/dev/null", O_WRONLY);
	if (*devnull < 0) {
		perror("/dev/null");
		return 1;
	}
	return 0;
}

#endif
