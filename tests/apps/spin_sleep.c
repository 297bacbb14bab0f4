/* spin_sleep.c - a sleep-retry spin (issue 13 §8): the main thread checks
 * a global flag and sleeps 5 ms (usleep -> nanosleep) between checks; a
 * worker thread sets the flag after SECONDS.  For `argus flag`, which must
 * step through the sleep to see the loop.
 *
 * usage: spin_sleep [SECONDS]   (default 20)
 * Ground truth on stdout, KEY=VALUE, printed before the spin starts:
 *   SPIN_PID SPIN_TID WRITER_TID FLAG_ADDR (hex) FLAG_SIZE=4
 *   FLAG_SYMBOL=config_ready SPIN_FUNCTION=wait_config SPIN_FUNCTION_ADDR
 *   READY=1 (last line)
 */
#include "case_common.h"

static int config_ready;   /* the flag: set by the loader thread */
static int seconds = 20;
static pid_t writer_tid;

static void *loader(void *arg)
{
	(void)arg;
	name_thread("loader");
	writer_tid = my_tid();
	sleep_ms(seconds * 1000L);
	__atomic_store_n(&config_ready, 1, __ATOMIC_RELEASE);
	return NULL;
}

CASE_FN long wait_config(void)
{
	long tries = 0;

	while (!__atomic_load_n(&config_ready, __ATOMIC_ACQUIRE)) {
		usleep(5000);
		tries++;
	}
	return tries;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 2 || (argc == 2 && (seconds = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: spin_sleep [SECONDS]\n");
		return 2;
	}
	become("spin_sleep");
	if (pthread_create(&t, NULL, loader, NULL))
		die("pthread_create failed");
	while (!__atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	gt("SPIN_PID=%d", getpid());
	gt("SPIN_TID=%d", my_tid());
	gt("WRITER_TID=%d", writer_tid);
	gt("FLAG_ADDR=%p", (void *)&config_ready);
	gt("FLAG_SIZE=%zu", sizeof config_ready);
	gt("FLAG_SYMBOL=config_ready");
	gt("SPIN_FUNCTION=wait_config");
	gt("SPIN_FUNCTION_ADDR=%p", (void *)wait_config);
	gt("READY=1");
	wait_config();
	pthread_join(t, NULL);
	return 0;
}
