/* hanger.c - NPROC processes named COMM (prctl), each "hanging" ROUNDS
 * times: HOLD_MS ms blocked in read() on a pipe that a thread of its own
 * writes to afterwards, then 300 ms of normal running.  Any user can name
 * its processes like the admin's watched program (sec_hang_flood.sh).
 * Usage: hanger COMM NPROC HOLD_MS ROUNDS; prints "started N" when all
 * processes are named, exits when all are done. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int hold_ms;

static void *writer(void *arg)
{
	int fd = *(int *)arg;
	struct timespec ts = { hold_ms / 1000, (long)(hold_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	if (write(fd, "x", 1) != 1)
		_exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	int nproc, rounds, ready[2];

	if (argc != 5)
		return 2;
	nproc = atoi(argv[2]);
	hold_ms = atoi(argv[3]);
	rounds = atoi(argv[4]);
	if (pipe(ready))
		return 1;
	for (int i = 0; i < nproc; i++) {
		if (fork() != 0)
			continue;
		close(ready[0]);
		prctl(PR_SET_NAME, argv[1]);
		usleep(300000); /* named and seen running before the first hang */
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		for (int r = 0; r < rounds; r++) {
			int p[2];
			pthread_t th;
			char c;

			if (pipe(p) || pthread_create(&th, NULL, writer, &p[1]))
				_exit(1);
			if (read(p[0], &c, 1) != 1) /* the hang */
				_exit(1);
			pthread_join(th, NULL);
			close(p[0]);
			close(p[1]);
			usleep(300000);
		}
		_exit(0);
	}
	close(ready[1]);
	{
		char c;
		int n = 0;
		while (n < nproc && read(ready[0], &c, 1) == 1)
			n++;
		printf("started %d\n", n);
		fflush(stdout);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
