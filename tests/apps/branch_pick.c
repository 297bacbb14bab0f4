/* branch_pick.c - a loop whose one branch goes the way argv says, for
 * `argus step-diff` (issue 13 §8): two runs, `branch_pick a` and
 * `branch_pick b`, run the same instructions except at the `if (mode)` of
 * choose_path(), which reads the global `mode`.
 *
 * usage: branch_pick a|b [SECONDS]   (default 20)
 * Ground truth on stdout, KEY=VALUE, printed before the loop starts:
 *   SPIN_PID SPIN_TID MODE (1 for a, 0 for b) MODE_ADDR (hex)
 *   BRANCH_FUNCTION=choose_path BRANCH_FUNCTION_ADDR (hex)  READY=1 (last)
 */
#include "case_common.h"

static volatile int mode;
static volatile long hits_a, hits_b;
static volatile int stop;
static int seconds = 20;

CASE_FN void choose_path(void)
{
	if (mode)
		hits_a++;
	else
		hits_b++;
}

static void *timer(void *arg)
{
	(void)arg;
	sleep_ms(seconds * 1000L);
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || argc > 3 || (strcmp(argv[1], "a") && strcmp(argv[1], "b")) ||
	    (argc == 3 && (seconds = atoi(argv[2])) <= 0)) {
		fprintf(stderr, "usage: branch_pick a|b [SECONDS]\n");
		return 2;
	}
	become("branch_pick");
	mode = argv[1][0] == 'a';
	if (pthread_create(&t, NULL, timer, NULL))
		die("pthread_create failed");
	gt("SPIN_PID=%d", getpid());
	gt("SPIN_TID=%d", my_tid());
	gt("MODE=%d", mode);
	gt("MODE_ADDR=%p", (void *)&mode);
	gt("BRANCH_FUNCTION=choose_path");
	gt("BRANCH_FUNCTION_ADDR=%p", (void *)choose_path);
	gt("READY=1");
	while (!stop) {
		choose_path();
		__builtin_ia32_pause();
	}
	pthread_join(t, NULL);
	return 0;
}
