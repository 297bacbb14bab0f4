/* timed_sleep.c - e2e app: one thread sleeps with nanosleep() COUNT times
 * for MS milliseconds.  Each sleep arms an hrtimer from the sleeper's own
 * context; the timer fires in hard-irq context and wakes the sleeper.
 *
 * usage: timed_sleep [COUNT (5)] [MS (50)]
 *
 * Ground truth on stdout, KEY=VALUE: PID SLEEPER_TID COUNT MS
 * and per sleep SLEEP<i>_START_NS / SLEEP<i>_END_NS (CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 5;
	long ms = argc > 2 ? atol(argv[2]) : 50;
	unsigned long long t0[64], t1[64];

	if (count <= 0 || count > 64 || ms <= 0) {
		fprintf(stderr, "usage: timed_sleep [COUNT<=64] [MS]\n");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		struct timespec req = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
		t0[i] = now_ns();
		while (nanosleep(&req, &req) && errno == EINTR)
			;
		t1[i] = now_ns();
	}
	printf("PID=%d\nSLEEPER_TID=%ld\nCOUNT=%d\nMS=%ld\n", getpid(), (long)syscall(SYS_gettid),
	       count, ms);
	for (int i = 0; i < count; i++)
		printf("SLEEP%d_START_NS=%llu\nSLEEP%d_END_NS=%llu\n", i, t0[i], i, t1[i]);
	return 0;
}
