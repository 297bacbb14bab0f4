/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_unwind.c - what one DWARF unwind costs in the collector's own
 * process (argus_unwinder) and through the sandboxed helper
 * (argus_unwind_client, symbols/unwind_helper.h), memo misses and hits.
 *
 *   bench_unwind BUSY_NOFP [N]
 *
 * BUSY_NOFP (tests/unit's fixture) sends one real frame-pointer-less
 * sample (registers + stack copy) and waits; each of N unwinds gets a
 * different bp, so the memo cannot answer (bp is part of its key), but
 * the CFI walk is the same.  Then N repeats of one key: memo hits.
 * Prints CPU per unwind (this process, plus the helper's from
 * /proc/PID/stat) and wall time per unwind, and the ratios.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_maps.h"
#include "unwind.h"
#include "unwind_helper.h"

struct busy_rec {               /* must match tests/unit/busy_nofp.c */
	uint64_t ip, sp, bp, len;
	uint32_t line[4];
};

static struct busy_rec rec;
static uint8_t copy[4096];
static struct argus_proc_map *maps;
static size_t nmaps;
static pid_t child;

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_full(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* cpu and wall seconds per unwind of N, misses (distinct bp) or hits */
static void run(struct argus_unwinder *u, struct argus_unwind_client *c, int n,
		int hits, double *cpu, double *wl)
{
	uint64_t ips[64];
	double c0 = cpu_self() + argus_unwind_client__cpu_seconds(c), w0 = wall();

	for (int i = 0; i < n; i++) {
		uint64_t bp = hits ? 0x1000 : rec.bp + 0x100000 + (uint64_t)i * 16;
		int k = u ? argus_unwinder__unwind(u, (uint32_t)child, maps, nmaps, rec.ip,
						   rec.sp, bp, copy, rec.len, ips, 64)
			  : argus_unwind_client__unwind(c, (uint32_t)child, maps, nmaps,
							rec.ip, rec.sp, bp, copy, rec.len,
							ips, 64);
		if (k < 4) {
			fprintf(stderr, "bench_unwind: unwind %d gave %d frames\n", i, k);
			exit(1);
		}
	}
	*cpu = (cpu_self() + argus_unwind_client__cpu_seconds(c) - c0) / n;
	*wl = (wall() - w0) / n;
}

int main(int argc, char **argv)
{
	int in[2], out[2], n = argc > 2 ? atoi(argv[2]) : 2000;
	double ic, iw, hc, hw, ihc, ihw, hhc, hhw;
	struct argus_unwinder *u;
	struct argus_unwind_client *c;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: bench_unwind BUSY_NOFP [N]\n");
		return 2;
	}
	if (pipe(in) || pipe(out) || (child = fork()) < 0)
		return 1;
	if (!child) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);   /* else its stdin never ends */
		close(out[0]);
		execl(argv[1], "busy_nofp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (read_full(out[0], &rec, sizeof(rec)) || rec.len > sizeof(copy) ||
	    read_full(out[0], copy, rec.len) ||
	    argus_proc_maps__read((uint32_t)child, &maps, &nmaps)) {
		fprintf(stderr, "bench_unwind: %s sent no sample\n", argv[1]);
		return 1;
	}
	u = argus_unwinder__new();
	c = argus_unwind_client__new();
	if (!u || !c)
		return 1;
	/* warm both: files opened, CFI read */
	run(u, NULL, 50, 0, &ic, &iw);
	run(NULL, c, 50, 0, &hc, &hw);
	run(u, NULL, n, 0, &ic, &iw);
	run(NULL, c, n, 0, &hc, &hw);
	run(u, NULL, n, 1, &ihc, &ihw);
	run(NULL, c, n, 1, &hhc, &hhw);
	printf("unwinds of one real sample, %d each (command: bench_unwind BUSY_NOFP %d)\n", n, n);
	printf("memo misses: in-process %.1f us CPU, %.1f us wall; helper %.1f us CPU (both processes), %.1f us wall: %.2fx CPU, %.2fx wall\n",
	       ic * 1e6, iw * 1e6, hc * 1e6, hw * 1e6, hc / ic, hw / iw);
	printf("memo hits:   in-process %.2f us CPU; helper's client %.2f us CPU (no round trip)\n",
	       ihc * 1e6, hhc * 1e6);
	argus_unwind_client__free(c);
	argus_unwinder__free(u);
	close(in[1]);
	waitpid(child, NULL, 0);
	argus_proc_maps__free(maps, nmaps);
	return 0;
}
