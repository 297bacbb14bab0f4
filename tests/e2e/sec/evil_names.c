/* evil_names: a process whose name is terminal escapes (window title,
 * erase line, bell), that hangs in one long sleep so the diagnosis
 * commands have something of it to print.  argv[1]: seconds. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { argc > 1 ? atoi(argv[1]) : 3, 0 };

	prctl(PR_SET_NAME, "\x1b]0;PWNED\x07\x1b[2K", 0, 0, 0);
	printf("PID=%d\n", getpid());
	fflush(stdout);
	nanosleep(&ts, NULL);
	return 0;
}
