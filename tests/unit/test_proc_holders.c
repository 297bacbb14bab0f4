/* test_proc_holders - diag_front_proc_holders(), what `diagnose --live`
 * asks /proc/PID/fd: which processes hold a pipe or a unix socket open
 * now.  Real processes and real descriptors: a child keeps one end of a
 * pipe and of a socketpair and waits; the parent keeps the other ends.
 * Needs no privilege for its own children. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argus_events.h"
#include "check.h"
#include "diag_front.h"

static uint64_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

static int has(const uint32_t *pids, uint32_t n, pid_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (pids[i] == (uint32_t)pid)
			return 1;
	return 0;
}

static void test_holders_of_a_pipe_and_of_each_socket_end(void)
{
	int pfd[2], sv[2], ready[2];
	uint64_t pipe_ino, mine, theirs;
	uint32_t pids[64], n;
	pid_t child;
	char c;

	CHECK_EQ(pipe(pfd), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(pipe(ready), 0);
	pipe_ino = inode_of(pfd[0]);
	mine = inode_of(sv[0]);
	theirs = inode_of(sv[1]);
	CHECK(pipe_ino && mine && theirs && mine != theirs);
	child = fork();
	if (child == 0) {       /* keeps the pipe's read end and sv[1] */
		close(pfd[1]);
		close(sv[0]);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	if (child <= 0)
		return;
	close(pfd[0]);          /* the parent keeps the write end and sv[0] */
	close(sv[1]);
	close(ready[1]);
	CHECK_EQ(read(ready[0], &c, 1), 1);

	n = diag_front_proc_holders(NULL, AE_OBJ_PIPE, pipe_ino, pids, 64);
	CHECK(has(pids, n, getpid()));
	CHECK(has(pids, n, child));
	CHECK_EQ(n, 2);         /* nobody else has this pipe */

	/* each socket end is its own inode: the child holds only the other */
	n = diag_front_proc_holders(NULL, AE_OBJ_UNIX, theirs, pids, 64);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, child));
	n = diag_front_proc_holders(NULL, AE_OBJ_UNIX, mine, pids, 64);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, getpid()));

	/* one process's fd on it (the link text diag_front_fd_link makes) */
	{
		uint32_t me = (uint32_t)getpid();
		char link[DIAG_FD_LINK_LEN];

		CHECK_EQ(diag_front_fd_of(me, diag_front_fd_link(AE_OBJ_UNIX, mine, link, sizeof(link))),
			 sv[0]);
		CHECK(!strncmp(link, "socket:[", 8));
		CHECK_EQ(diag_front_fd_of(me, diag_front_fd_link(AE_OBJ_PIPE, pipe_ino, link, sizeof(link))),
			 pfd[1]);
		CHECK(!strncmp(link, "pipe:[", 6));
		CHECK_EQ(diag_front_fd_of(me, diag_front_fd_link(AE_OBJ_UNIX, theirs, link, sizeof(link))),
			 -1);
	}

	/* max bounds the answer */
	CHECK_EQ(diag_front_proc_holders(NULL, AE_OBJ_PIPE, pipe_ino, pids, 1), 1);
	/* a pipe's inode asked as a socket, and kinds it does not look up */
	CHECK_EQ(diag_front_proc_holders(NULL, AE_OBJ_UNIX, pipe_ino, pids, 64), 0);
	CHECK_EQ(diag_front_proc_holders(NULL, AE_OBJ_TCP, mine, pids, 64), 0);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* gone with the child: only the parent's end is left */
	n = diag_front_proc_holders(NULL, AE_OBJ_UNIX, theirs, pids, 64);
	CHECK_EQ(n, 0);
	n = diag_front_proc_holders(NULL, AE_OBJ_PIPE, pipe_ino, pids, 64);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, getpid()));
	close(pfd[1]);
	close(sv[0]);
	close(ready[0]);
}

int main(void)
{
	RUN(test_holders_of_a_pipe_and_of_each_socket_end);
	return check_report();
}
