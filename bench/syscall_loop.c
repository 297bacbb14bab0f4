// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscall_loop getppid|write|futex N
 *
 * N back-to-back syscalls on one thread, then "NS ns/syscall" on stdout:
 * getppid (not traced by argus: what the syscall slow path and the
 * dispatch into BPF cost every call on the machine), write(2) of one
 * byte to /dev/null (traced: an exit record with its fd's object), or
 * futex(FUTEX_WAKE) of a word nobody waits on (traced with its entry: an
 * entry record, through the per-call syscalls:sys_enter_futex
 * tracepoint by default, and an exit record; it returns at once).  No
 * scheduling, no second thread: a much steadier instrument than a
 * ping-pong for per-syscall costs (bench/syscall_cost.sh).
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	static uint32_t word;   /* a futex nobody waits on */
	long n, i;
	int fd = -1;
	bool futex;

	if (argc != 3 || (strcmp(argv[1], "getppid") && strcmp(argv[1], "write") &&
			  strcmp(argv[1], "futex")) ||
	    (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: syscall_loop getppid|write|futex N\n");
		return 2;
	}
	futex = !strcmp(argv[1], "futex");
	if (!strcmp(argv[1], "write") && (fd = open("/dev/null", O_WRONLY)) < 0) {
		perror("syscall_loop: /dev/null");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		if (futex)
			syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		else if (fd < 0)
			syscall(SYS_getppid);
		else if (write(fd, "x", 1) != 1)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f ns/syscall\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
