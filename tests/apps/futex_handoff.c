/* futex_handoff.c - e2e app: thread B hands work to thread A through a
 * pthread mutex + condition variable, ROUNDS times.
 *
 * A waits on the condition until B has posted; B sleeps DELAY_US before
 * each post so A is surely blocked in futex() when B signals: B's
 * futex(FUTEX_WAKE) must wake A (task context, waker = B), on the same
 * futex word A blocked on.
 *
 * usage: futex_handoff [ROUNDS (10)] [DELAY_US (5000)]
 *
 * Ground truth on stdout, KEY=VALUE:
 *   PID A_TID B_TID ROUNDS
 *   COND_ADDR MUTEX_ADDR (hex; the cond's futex words live inside COND)
 *   COND_SIZE
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int posted, rounds = 10;
static long delay_us = 5000;
static volatile pid_t b_tid;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void *thread_b(void *arg)
{
	(void)arg;
	b_tid = my_tid();
	for (int i = 0; i < rounds; i++) {
		usleep((useconds_t)delay_us);
		pthread_mutex_lock(&mu);
		posted++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t b;
	int consumed = 0;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		delay_us = atol(argv[2]);
	if (rounds <= 0 || delay_us < 0) {
		fprintf(stderr, "usage: futex_handoff [ROUNDS] [DELAY_US]\n");
		return 2;
	}
	if (pthread_create(&b, NULL, thread_b, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_mutex_lock(&mu);
	while (consumed < rounds) {
		while (posted == consumed)
			pthread_cond_wait(&cond, &mu);
		consumed++;
	}
	pthread_mutex_unlock(&mu);
	pthread_join(b, NULL);

	printf("PID=%d\nA_TID=%d\nB_TID=%d\nROUNDS=%d\n", getpid(), my_tid(), b_tid, rounds);
	printf("COND_ADDR=%#lx\nCOND_SIZE=%zu\nMUTEX_ADDR=%#lx\n", (unsigned long)&cond,
	       sizeof(cond), (unsigned long)&mu);
	return 0;
}
