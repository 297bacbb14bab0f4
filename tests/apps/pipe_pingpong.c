/* pipe_pingpong.c - e2e app: a parent and a child process bounce a few
 * bytes over two pipes.
 *
 *   pipe A: parent writes "ping", child reads it
 *   pipe B: child writes "pong", parent reads it
 *
 * Before each write the writer sleeps DELAY_US so the reader is surely
 * blocked in read(): the write must wake it (task context, waker = writer).
 *
 * usage: pipe_pingpong [ROUNDS (20)] [DELAY_US (2000)]
 *
 * Ground truth on stdout, KEY=VALUE:
 *   PARENT_PID PARENT_TID CHILD_PID CHILD_TID
 *   PIPE_A_INO PIPE_A_RFD PIPE_A_WFD  (st_ino of the pipe, both ends agree)
 *   PIPE_B_INO PIPE_B_RFD PIPE_B_WFD
 *   ROUNDS START_NS END_NS            (CLOCK_MONOTONIC, parent)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static unsigned long long ino_of(int fd)
{
	struct stat st;
	if (fstat(fd, &st)) {
		perror("fstat");
		exit(1);
	}
	return (unsigned long long)st.st_ino;
}

static void xwrite(int fd, const char *buf, size_t n)
{
	if (write(fd, buf, n) != (ssize_t)n) {
		perror("write");
		exit(1);
	}
}

static void xread(int fd, char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "read: %s\n", r ? strerror(errno) : "EOF");
			exit(1);
		}
		got += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long delay_us = argc > 2 ? atol(argv[2]) : 2000;
	int a[2], b[2], status;
	char buf[4];
	pid_t child;

	if (rounds <= 0 || delay_us < 0) {
		fprintf(stderr, "usage: pipe_pingpong [ROUNDS] [DELAY_US]\n");
		return 2;
	}
	if (pipe(a) || pipe(b)) {
		perror("pipe");
		return 1;
	}
	printf("PARENT_PID=%d\nPARENT_TID=%d\n", getpid(), my_tid());
	printf("PIPE_A_INO=%llu\nPIPE_A_RFD=%d\nPIPE_A_WFD=%d\n", ino_of(a[0]), a[0], a[1]);
	printf("PIPE_B_INO=%llu\nPIPE_B_RFD=%d\nPIPE_B_WFD=%d\n", ino_of(b[0]), b[0], b[1]);
	printf("ROUNDS=%d\n", rounds);
	fflush(stdout);
	if (ino_of(a[0]) != ino_of(a[1]) || ino_of(b[0]) != ino_of(b[1])) {
		fprintf(stderr, "pipe ends disagree on the inode\n");
		return 1;
	}

	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(a[1]);
		close(b[0]);
		printf("CHILD_PID=%d\nCHILD_TID=%d\n", getpid(), my_tid());
		fflush(stdout);
		for (int i = 0; i < rounds; i++) {
			xread(a[0], buf, 4);
			if (memcmp(buf, "ping", 4))
				_exit(1);
			usleep((useconds_t)delay_us);
			xwrite(b[1], "pong", 4);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	unsigned long long start = now_ns();
	for (int i = 0; i < rounds; i++) {
		usleep((useconds_t)delay_us);
		xwrite(a[1], "ping", 4);
		xread(b[0], buf, 4);
		if (memcmp(buf, "pong", 4)) {
			fprintf(stderr, "bad reply\n");
			return 1;
		}
	}
	unsigned long long end = now_ns();
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child failed\n");
		return 1;
	}
	printf("START_NS=%llu\nEND_NS=%llu\n", start, end);
	return 0;
}
