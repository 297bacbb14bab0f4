/* flag_writer.c - a process with a data flag for `argus watch` tests
 * (tests/e2e/watch_threads.sh, watch_bad_input.sh).
 *
 * Prints its ground truth, then waits until the file GO (argv[1]) exists
 * (the test arms its watch in between), then:
 *   - the main thread writes `flag` = 1 (a thread that existed when the
 *     watch was armed);
 *   - it creates a thread AFTER that point, which writes flag = 0x1000 +
 *     i for i in 1..NWRITES (values no one else writes);
 *   - it joins, writes flag = 2 and exits.
 * `other` is a second global, never written after the start: writes to
 * it must not show up.
 *
 * usage: flag_writer GO_FILE
 * Ground truth on stdout, KEY=VALUE: PID, FLAG_ADDR (hex), FLAG_SIZE=4,
 * OTHER_ADDR, then after GO: NEW_TID, NWRITES, MAIN_VALUES=1,2,
 * NEW_FIRST_VALUE, NEW_LAST_VALUE.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NWRITES 5

volatile int flag;
volatile int other = 7;
static pid_t new_tid;

static void *writer(void *arg)
{
	(void)arg;
	new_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 1; i <= NWRITES; i++) {
		flag = 0x1000 + i;
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: flag_writer GO_FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("PID=%d\nFLAG_ADDR=%p\nFLAG_SIZE=%zu\nOTHER_ADDR=%p\n", getpid(), (void *)&flag,
	       sizeof flag, (void *)&other);
	for (int i = 0; access(argv[1], F_OK); i++) {
		if (i > 3000) { /* 30 s: the test is gone */
			fprintf(stderr, "flag_writer: no %s after 30 s\n", argv[1]);
			return 1;
		}
		usleep(10000);
	}
	flag = 1;
	if (pthread_create(&t, NULL, writer, NULL)) {
		fprintf(stderr, "flag_writer: pthread_create failed\n");
		return 1;
	}
	pthread_join(t, NULL);
	flag = 2;
	printf("NEW_TID=%d\nNWRITES=%d\nMAIN_VALUES=1,2\nNEW_FIRST_VALUE=%d\nNEW_LAST_VALUE=%d\n",
	       new_tid, NWRITES, 0x1001, 0x1000 + NWRITES);
	usleep(200000); /* the collector sees the writes before the exit */
	return 0;
}
