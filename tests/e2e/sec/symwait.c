/* symwait.c - (sec_bigsym.sh) a program with one function to instrument,
 * target_function, that waits in pause(); the test gives its copy a 1 GiB
 * sparse .symtab (bigsym.py) before running it as nobody. */
#include <stdio.h>
#include <unistd.h>

volatile int calls;

__attribute__((noinline)) void target_function(void)
{
	calls++;	/* a body long enough to patch (5 bytes and more) */
	calls++;
}

int main(void)
{
	target_function();
	printf("pid %d\n", getpid());
	fflush(stdout);
	pause();
	return 0;
}
