/* step_speed_target.c - the process bench/step_speed.py steps with lldb:
 * the same loop as step_speed.c's forked child (loads, stores, a compare
 * and two branches per turn), pinned to CPU 0, ended by the bench. */
#include <sched.h>
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

int main(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	sched_setaffinity(0, sizeof(s), &s);
	alarm(600);   /* never outlive a bench that died */
	spin_target();
}
