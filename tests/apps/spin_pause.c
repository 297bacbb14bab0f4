/* spin_pause.c - a pure busy spin (issue 13 §8): the main thread spins
 * with `pause` (no syscall at all) on a flag in heap memory, a field of a
 * malloc'd job; a worker thread sets it after SECONDS.
 *
 * usage: spin_pause [SECONDS]   (default 20)
 * Ground truth on stdout, KEY=VALUE, printed before the spin starts:
 *   SPIN_PID SPIN_TID FLAG_ADDR (hex, in [heap]) FLAG_SIZE=4
 *   HEAP_START (hex, start of [heap] from /proc/self/maps) FLAG_HEAP_OFFSET
 *   SPIN_FUNCTION=spin_until_done SPIN_FUNCTION_ADDR   READY=1 (last)
 */
#include "case_common.h"

struct job {
	long id;
	int done;          /* the flag */
	int result;
};

static int seconds = 20;

static void *worker(void *arg)
{
	struct job *j = arg;

	name_thread("worker");
	sleep_ms(seconds * 1000L);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

CASE_FN void spin_until_done(struct job *j)
{
	while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

int main(int argc, char **argv)
{
	struct job *j;
	pthread_t t;
	unsigned long hs;

	if (argc > 2 || (argc == 2 && (seconds = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: spin_pause [SECONDS]\n");
		return 2;
	}
	become("spin_pause");
	j = calloc(1, sizeof(*j));   /* main arena, before any thread: [heap] */
	if (!j)
		die("out of memory");
	hs = heap_start();
	if (!hs || (unsigned long)&j->done < hs)
		die("the job is not in [heap]");
	if (pthread_create(&t, NULL, worker, j))
		die("pthread_create failed");
	gt("SPIN_PID=%d", getpid());
	gt("SPIN_TID=%d", my_tid());
	gt("FLAG_ADDR=%p", (void *)&j->done);
	gt("FLAG_SIZE=%zu", sizeof j->done);
	gt("HEAP_START=0x%lx", hs);
	gt("FLAG_HEAP_OFFSET=0x%lx", (unsigned long)&j->done - hs);
	gt("SPIN_FUNCTION=spin_until_done");
	gt("SPIN_FUNCTION_ADDR=%p", (void *)spin_until_done);
	gt("READY=1");
	spin_until_done(j);
	pthread_join(t, NULL);
	free(j);
	return 0;
}
