/* interpose_mutex.c - the interposer's cost on the path it must keep
 * cheap: an uncontended pthread_mutex_lock + unlock pair, one thread.
 * bench/interpose_mutex.sh runs it bare and under LD_PRELOAD of
 * libargus-interpose.so in the same run.
 *
 * usage: interpose_mutex [PAIRS (20000000)] [REPEATS (5)]
 * Prints "ring=on|off" (whether this process registered a ring with
 * argusd: only then is the recording path in play) and
 * "<best> ns/pair" over REPEATS timed loops of PAIRS pairs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpose_bench.h"

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 20000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	double best = 0;

	if (pairs <= 0 || reps <= 0) {
		fprintf(stderr, "usage: interpose_mutex [PAIRS] [REPEATS]\n");
		return 2;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns(), ns;

		for (long i = 0; i < pairs; i++) {
			pthread_mutex_lock(&mu);
			pthread_mutex_unlock(&mu);
		}
		ns = (now_ns() - t0) / (double)pairs;
		if (!r || ns < best)
			best = ns;
	}
	printf("ring=%s\n%.3f ns/pair\n", ring_on() ? "on" : "off", best);
	return 0;
}
