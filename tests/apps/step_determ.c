/* step_determ.c - deterministic work for tests/e2e/lldb_step_remote.sh:
 * the same instructions, registers and memory in every run launched the
 * same way (lldb launches with ASLR off), so two step recordings of work()
 * made by two stepping paths can be compared line by line.  libc is in
 * it (qsort, snprintf, strlen, memcpy) so the recording leaves main's code.
 *
 * argv[1] == "alarm": a SIGALRM every 20 ms (setitimer) counted by a
 * handler, so that signals arrive while the thread is being stepped; the
 * result does not depend on them.
 * Prints COUNTER=<value> and ALARMS=<count>, exits 0. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

volatile unsigned long counter;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) void work(void)
{
	char buf[128], copy[128];
	int a[64];

	for (unsigned long i = 0; i < 100; i++) {
		counter += i ^ (counter >> 3);
		if (i % 25 == 0)
			sched_yield();   /* syscalls: steps that go through lldb */
	}
	for (int i = 0; i < 64; i++)
		a[i] = (i * 7919) % 101;
	qsort(a, 64, sizeof(a[0]), cmp_int);
	snprintf(buf, sizeof(buf), "%d %d %s", a[0], a[63], "deterministic");
	memcpy(copy, buf, sizeof(buf));
	counter += strlen(copy);
	for (unsigned long i = 0; i < 300000; i++)
		counter += i ^ (counter >> 3);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "alarm")) {
		struct itimerval it = { { 0, 20000 }, { 0, 20000 } };

		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	work();
	printf("COUNTER=%lu\nALARMS=%d\n", counter, (int)alarms);
	return 0;
}
