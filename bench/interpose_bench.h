/* interpose_bench.h - what the interposer's micro-benchmarks share
 * (interpose_mutex.c, interpose_sync.c): a clock, and whether the
 * interposer's ring is mapped into this process (so a run under
 * LD_PRELOAD that failed to register says so instead of timing nothing). */
#ifndef ARGUS_BENCH_INTERPOSE_H
#define ARGUS_BENCH_INTERPOSE_H
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* the interposer's ring is a memfd mapped into this process */
static int ring_on(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int on = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		on |= strstr(line, "memfd:argus-interpose") != NULL;
	fclose(f);
	return on;
}
#endif
