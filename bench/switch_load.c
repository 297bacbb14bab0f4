/* switch_load.c - a switch-heavy load of fixed work per hop, for
 * bench/overhead.sh's third workload: the throughput a tracer costs.
 *
 *   switch_load --calibrate RATE [--pairs P]     prints ITERS: the work per
 *       hop at which this machine, untraced, switches about RATE times/s
 *   switch_load --iters ITERS --secs S [--pairs P]
 *       runs S seconds and prints "hops_per_s=... switches_per_s=..."
 *
 * P pairs of threads (default 4, more threads than this machine's CPUs, as
 * a server's pool) pass a token back and forth over pipes.  Each hop is
 * ITERS iterations of arithmetic, a one-byte write() and a blocking read():
 * a context switch each way, and the shape of a server answering requests
 * (Brendan Gregg's MySQL figures: 102 K switches/s).  The work per hop is
 * a count of iterations, not a time, so a tracer that slows the switches
 * or the syscalls shows as fewer hops in the same seconds.  Switches are
 * the machine's (/proc/stat ctxt) over the run. */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 64

struct end {
	int in, out;           /* read the token here, pass it there */
	uint64_t iters;
	uint64_t hops;
	bool first;            /* starts with the token */
};

static atomic_bool stop;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ctxt(void)
{
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen("/proc/stat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "ctxt ", 5))
			v = strtoull(line + 5, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* the hop's work: a dependency chain the compiler cannot fold */
static void work(uint64_t iters)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static void *run(void *arg)
{
	struct end *e = arg;
	char tok = 't';

	if (e->first && write(e->out, &tok, 1) != 1)
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (read(e->in, &tok, 1) != 1)
			break;
		work(e->iters);
		e->hops++;
		if (write(e->out, &tok, 1) != 1)
			break;
	}
	return NULL;
}

struct result {
	double hops_per_s, switches_per_s;
};

static int load(unsigned pairs, uint64_t iters, double secs, struct result *r)
{
	struct end ends[2 * MAX_PAIRS];
	pthread_t th[2 * MAX_PAIRS];
	uint64_t t0, t1, c0, c1, hops = 0;
	unsigned n = 2 * pairs;

	atomic_store(&stop, false);
	for (unsigned p = 0; p < pairs; p++) {
		int ab[2], ba[2];

		if (pipe(ab) || pipe(ba)) {
			perror("switch_load: pipe");
			return -1;
		}
		ends[2 * p] = (struct end){ .in = ba[0], .out = ab[1], .iters = iters, .first = true };
		ends[2 * p + 1] = (struct end){ .in = ab[0], .out = ba[1], .iters = iters };
	}
	c0 = ctxt();
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, run, &ends[i])) {
			fprintf(stderr, "switch_load: cannot start thread %u\n", i);
			exit(1);
		}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, true);
	t1 = now_ns();
	c1 = ctxt();
	/* a thread blocked in read() wakes when its peer closes: close the
	 * write ends after the stop flag so every loop ends */
	for (unsigned i = 0; i < n; i++)
		close(ends[i].out);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		close(ends[i].in);
		hops += ends[i].hops;
	}
	r->hops_per_s = (double)hops / ((double)(t1 - t0) / 1e9);
	r->switches_per_s = (double)(c1 - c0) / ((double)(t1 - t0) / 1e9);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: switch_load --calibrate RATE [--pairs P]\n"
	      "       switch_load --iters ITERS --secs S [--pairs P]\n", f);
}

int main(int argc, char **argv)
{
	unsigned pairs = 4;
	uint64_t iters = 0;
	double secs = 0, rate = 0;
	struct result r;

	/* FLAG VALUE pairs */
	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		if (!strcmp(argv[i], "--pairs"))
			pairs = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(argv[i], "--iters"))
			iters = strtoull(v, NULL, 10);
		else if (!strcmp(argv[i], "--secs"))
			secs = strtod(v, NULL);
		else if (!strcmp(argv[i], "--calibrate"))
			rate = strtod(v, NULL);
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!pairs || pairs > MAX_PAIRS || (rate <= 0 && (!iters || secs <= 0))) {
		usage(stderr);
		return 2;
	}
	if (rate > 0) {
		/* more work per hop, fewer switches: bisect ITERS on 1 s runs
		 * (the rate falls as ITERS grows) */
		uint64_t lo = 1, hi = 1u << 20;

		while (hi - lo > lo / 50 + 1) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (load(pairs, mid, 1.0, &r))
				return 1;
			if (r.switches_per_s > rate)
				lo = mid;
			else
				hi = mid;
		}
		load(pairs, lo, 2.0, &r);
		printf("%llu\n", (unsigned long long)lo);
		fprintf(stderr, "switch_load: %llu iterations per hop: %.0f switches/s, %.0f hops/s\n",
			(unsigned long long)lo, r.switches_per_s, r.hops_per_s);
		return 0;
	}
	if (load(pairs, iters, secs, &r))
		return 1;
	printf("hops_per_s=%.0f switches_per_s=%.0f\n", r.hops_per_s, r.switches_per_s);
	return 0;
}
