/* omp_barrier.c - a driver for libgomp (GCC's OpenMP runtime, Debian's
 * libgomp1), the real code under test: two OpenMP threads, and the master
 * is slow (3 s of sleeps) before the barrier at the end of the parallel
 * region.  With OMP_WAIT_POLICY=active the other thread waits at that
 * barrier in libgomp's own spin loop (do_spin: a load of the barrier's
 * generation word and `pause`, no syscall) until the master arrives and
 * bumps the word: a pure busy spin on a flag in heap memory that nobody
 * here wrote.
 *
 * Ground truth on stdout: PID, MASTER_TID, WORKER_TID (once both run),
 * ARRIVE_NS (CLOCK_MONOTONIC just before the master enters the barrier),
 * DONE_NS (after the region). */
#include <omp.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 3000;

	omp_set_num_threads(2);
	printf("PID=%d\n", getpid());
	fflush(stdout);
	#pragma omp parallel
	{
		if (omp_get_thread_num() == 0) {
			printf("MASTER_TID=%ld\n", (long)syscall(SYS_gettid));
			fflush(stdout);
			for (int i = 0; i < ms / 100; i++)
				usleep(100000);
			printf("ARRIVE_NS=%lld\n", now_ns());
			fflush(stdout);
		} else {
			#pragma omp critical
			{
				printf("WORKER_TID=%ld\n", (long)syscall(SYS_gettid));
				fflush(stdout);
			}
		}
		#pragma omp barrier
	}
	printf("DONE_NS=%lld\n", now_ns());
	return 0;
}
