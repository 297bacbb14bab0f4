/* interpose_sync.c - the interposer's cost on rwlocks and on a contended
 * mutex (bench/interpose_sync.sh runs it bare and under LD_PRELOAD of
 * libargus-interpose.so in the same run).
 *
 * usage: interpose_sync rdpair [PAIRS (20000000)] [REPEATS (5)]
 *          one thread, uncontended pthread_rwlock_rdlock + unlock pairs:
 *          "<best> ns/pair"
 *        interpose_sync contended [THREADS (4)] [ITERS (200000)] [REPEATS (5)]
 *          THREADS threads each lock one shared mutex, bump a counter,
 *          unlock, ITERS times: "<best> ns/op" (wall time / all ops) and
 *          the counter, checked
 * Both print "ring=on|off" first (whether this process registered a
 * ring: only then is the recording path in play).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpose_bench.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long iters, counter;

static void *hammer(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double best = 0;

	printf("ring=%s\n", ring_on() ? "on" : "off");
	if (!strcmp(mode, "rdpair")) {
		long pairs = argc > 2 ? atol(argv[2]) : 20000000;
		int reps = argc > 3 ? atoi(argv[3]) : 5;
		pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

		if (pairs <= 0 || reps <= 0)
			goto usage;
		for (int r = 0; r < reps; r++) {
			double t0 = now_ns(), ns;

			for (long i = 0; i < pairs; i++) {
				pthread_rwlock_rdlock(&rw);
				pthread_rwlock_unlock(&rw);
			}
			ns = (now_ns() - t0) / (double)pairs;
			if (!r || ns < best)
				best = ns;
		}
		printf("%.2f ns/pair\n", best);
		return 0;
	}
	if (!strcmp(mode, "contended")) {
		int nt = argc > 2 ? atoi(argv[2]) : 4, reps = argc > 4 ? atoi(argv[4]) : 5;
		pthread_t t[64];

		iters = argc > 3 ? atol(argv[3]) : 200000;
		if (nt <= 1 || nt > 64 || iters <= 0 || reps <= 0)
			goto usage;
		for (int r = 0; r < reps; r++) {
			double t0 = now_ns(), ns;

			counter = 0;
			for (int i = 0; i < nt; i++)
				if (pthread_create(&t[i], NULL, hammer, NULL)) {
					fprintf(stderr, "interpose_sync: pthread_create failed\n");
					return 1;
				}
			for (int i = 0; i < nt; i++)
				pthread_join(t[i], NULL);
			ns = (now_ns() - t0) / (double)(nt * iters);
			if (counter != nt * iters) {
				fprintf(stderr, "interpose_sync: counter %ld, expected %ld\n", counter,
					nt * iters);
				return 1;
			}
			if (!r || ns < best)
				best = ns;
		}
		printf("%.2f ns/op\n", best);
		return 0;
	}
usage:
	fprintf(stderr, "usage: interpose_sync rdpair [PAIRS] [REPEATS] | contended [THREADS] [ITERS] [REPEATS]\n");
	return 2;
}
