/* step_speed_target.c - the process bench/step_speed.py steps with lldb,
 * pinned to CPU 0, ended by the bench.
 *   (no argument)  the same loop as step_speed.c's forked child (loads,
 *                  stores, a compare and two branches per turn);
 *   libc           a loop of libc calls (snprintf, qsort, strcmp, strlen,
 *                  memcpy): longer code, calls, returns, stack traffic, as
 *                  a recording of real code sees it. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink[4];

__attribute__((noinline)) static void spin_target(void)
{
	for (unsigned long i = 0;; i++) {
		sink[i & 3] += i;
		if (sink[(i + 1) & 3] == 42)
			sink[0] = 0;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static void libc_target(void)
{
	char buf[64], copy[64];
	int a[16];

	for (unsigned long i = 0;; i++) {
		for (int k = 0; k < 16; k++)
			a[k] = (int)((i * 31 + (unsigned long)k * 7919) % 101);
		qsort(a, 16, sizeof(a[0]), cmp_int);
		snprintf(buf, sizeof(buf), "%lu:%d:%d", i, a[0], a[15]);
		memcpy(copy, buf, sizeof(buf));
		sink[i & 3] += strlen(copy) + (unsigned long)(strcmp(copy, "7:0:100") == 0);
	}
}

int main(int argc, char **argv)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	sched_setaffinity(0, sizeof(s), &s);
	alarm(600);   /* never outlive a bench that died */
	if (argc > 1 && !strcmp(argv[1], "libc"))
		libc_target();
	spin_target();
}
