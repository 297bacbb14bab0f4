/* event_flood.c - a paced source of traced events, for bench/throughput.sh.
 *
 *   event_flood RATE SECONDS [THREADS]
 *
 * THREADS threads (default 2) together make RATE write(2) calls per second
 * of one byte to /dev/null, for SECONDS.  Each call is one traced event in
 * the collector's default set (its sys_exit; the entries of write are not
 * recorded), so the offered event rate is known and steady.  Threads pace
 * themselves against CLOCK_MONOTONIC in batches of 64 calls: when the
 * machine cannot keep up they run flat out, and the achieved rate (printed
 * on stdout as "calls=N seconds=S rate=R") is what counts. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double rate_per_thread, seconds;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	uint64_t *calls = arg, start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
	double ns_per_call = 1e9 / rate_per_thread;
	/* an fd of its own: threads writing to one struct file bounce its
	 * refcount between CPUs and run at a third of the speed */
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char b = 0;

	if (devnull < 0)
		return NULL;

	for (uint64_t n = 0;;) {
		uint64_t t = now_ns();

		if (t >= end)
			break;
		uint64_t due = start + (uint64_t)((double)n * ns_per_call);
		if (t < due) {
			struct timespec d = { 0, (long)(due - t) };
			nanosleep(&d, NULL);
			continue;
		}
		for (int i = 0; i < 64; i++, n++)
			if (write(devnull, &b, 1) != 1)
				break;
		*calls = n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthr = argc > 3 ? atoi(argv[3]) : 2;
	pthread_t th[64];
	uint64_t calls[64] = { 0 }, total = 0;
	uint64_t t0;

	if (argc < 3 || nthr < 1 || nthr > 64) {
		fprintf(stderr, "usage: event_flood RATE SECONDS [THREADS<=64]\n");
		return 2;
	}
	rate_per_thread = atof(argv[1]) / nthr;
	seconds = atof(argv[2]);
	if (rate_per_thread <= 0 || seconds <= 0) {
		fprintf(stderr, "event_flood: bad arguments\n");
		return 2;
	}
	t0 = now_ns();
	for (int i = 0; i < nthr; i++)
		pthread_create(&th[i], NULL, run, &calls[i]);
	for (int i = 0; i < nthr; i++) {
		pthread_join(th[i], NULL);
		total += calls[i];
	}
	double s = (double)(now_ns() - t0) / 1e9;
	printf("calls=%llu seconds=%.3f rate=%.0f\n", (unsigned long long)total, s, (double)total / s);
	return 0;
}
