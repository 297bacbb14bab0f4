/* busy.c - e2e app: CPU-bound work in a named call chain,
 *
 *   main -> busy_outer -> busy_middle -> busy_leaf
 *
 * busy_leaf spins on a volatile accumulator for SECONDS (default 2).
 * Built twice: busy_nofp (-O2 -g -fomit-frame-pointer: the sampler needs
 * DWARF unwinding to see the callers) and busy_fp (frame pointers).
 * Every function is noinline and none is a tail call, so each is a real
 * frame on the stack.
 *
 * With --wait the leaf is wait_leaf instead: it blocks in poll() (a timed
 * wait, 100 ms at a time) for SECONDS, so the chain is seen in blocking
 * switch-outs' stacks (argus record --wait-stacks) rather than samples.
 *
 * usage: busy_nofp|busy_fp [--wait] [SECONDS]
 *
 * Ground truth on stdout, KEY=VALUE: PID TID SECONDS, and the entry
 * addresses BUSY_LEAF BUSY_MIDDLE BUSY_OUTER (hex, as mapped).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define BUSY_FN __attribute__((noinline, disable_tail_calls))
#else
#define BUSY_FN __attribute__((noinline, noipa))
#endif

volatile unsigned long busy_sink;
static int wait_mode;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

BUSY_FN unsigned long busy_leaf(double seconds)
{
	volatile unsigned long acc = 0;
	double end = now_s() + seconds;

	for (;;) {
		for (unsigned long i = 0; i < (1ul << 20); i++)
			acc += i ^ (acc >> 3);
		if (now_s() >= end)
			break;
	}
	return acc;
}

BUSY_FN unsigned long wait_leaf(double seconds)
{
	double end = now_s() + seconds;
	unsigned long n = 0;

	while (now_s() < end) {
		poll(NULL, 0, 100);
		n++;
	}
	return n;
}

BUSY_FN unsigned long busy_middle(double seconds)
{
	unsigned long r = wait_mode ? wait_leaf(seconds) : busy_leaf(seconds);
	busy_sink = r;
	return r + 1;
}

BUSY_FN unsigned long busy_outer(double seconds)
{
	unsigned long r = busy_middle(seconds);
	busy_sink = r;
	return r + 2;
}

int main(int argc, char **argv)
{
	double seconds;

	if (argc > 1 && !strcmp(argv[1], "--wait")) {
		wait_mode = 1;
		argc--;
		argv++;
	}
	seconds = argc > 1 ? atof(argv[1]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: busy [--wait] [SECONDS]\n");
		return 2;
	}
	printf("PID=%d\nTID=%ld\nSECONDS=%g\n", getpid(), (long)syscall(SYS_gettid), seconds);
	printf("BUSY_LEAF=%p\nBUSY_MIDDLE=%p\nBUSY_OUTER=%p\n", (void *)busy_leaf,
	       (void *)busy_middle, (void *)busy_outer);
	fflush(stdout);
	busy_sink = busy_outer(seconds);
	return busy_sink == 12345 ? 3 : 0;
}
