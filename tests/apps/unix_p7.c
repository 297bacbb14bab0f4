/* unix_p7.c - e2e app for the paper's P7 pattern: a request is received
 * by one thread and answered by another, on the same unix socket.
 *
 *   client process:  send(request) ; recv(reply)          x ROUNDS
 *   server process:  thread R: recv(request) -> queue -> cond signal
 *                    thread W: cond wait -> dequeue -> send(reply)
 *
 * The two ends are a socketpair(AF_UNIX, SOCK_STREAM): the client's end
 * has inode CLIENT_INO (X), the server's SERVER_INO (Y).  A send on X must
 * show obj=unix:X->Y and the matching recv on Y obj=unix:Y->X.
 *
 * usage: unix_p7 [ROUNDS (10)] [DELAY_US (2000)]
 *
 * Ground truth on stdout, KEY=VALUE:
 *   CLIENT_PID CLIENT_TID SERVER_PID R_TID W_TID
 *   CLIENT_INO SERVER_INO CLIENT_FD SERVER_FD ROUNDS
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG 16
#define QMAX 64

static int rounds = 10, sfd;
static long delay_us = 2000;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char queue[QMAX][MSG];
static int q_head, q_tail;
static volatile pid_t r_tid, w_tid;

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

static void xsend(int fd, const char *buf)
{
	if (send(fd, buf, MSG, 0) != MSG) {
		perror("send");
		exit(1);
	}
}

static void xrecv(int fd, char *buf)
{
	ssize_t r;
	do
		r = recv(fd, buf, MSG, MSG_WAITALL);
	while (r < 0 && errno == EINTR);
	if (r != MSG) {
		fprintf(stderr, "recv: %s\n", r < 0 ? strerror(errno) : "short");
		exit(1);
	}
}

static void *receiver(void *arg)
{
	char req[MSG];
	(void)arg;
	r_tid = my_tid();
	for (int i = 0; i < rounds; i++) {
		xrecv(sfd, req);
		pthread_mutex_lock(&mu);
		memcpy(queue[q_tail++ % QMAX], req, MSG);
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *worker(void *arg)
{
	char rep[MSG];
	(void)arg;
	w_tid = my_tid();
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&mu);
		while (q_head == q_tail)
			pthread_cond_wait(&cond, &mu);
		memcpy(rep, queue[q_head++ % QMAX], MSG);
		pthread_mutex_unlock(&mu);
		rep[0] = 'R'; /* "req N" -> "Rep N" */
		rep[1] = 'e';
		rep[2] = 'p';
		xsend(sfd, rep);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int sv[2], status;
	pid_t client;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		delay_us = atol(argv[2]);
	if (rounds <= 0 || delay_us < 0) {
		fprintf(stderr, "usage: unix_p7 [ROUNDS] [DELAY_US]\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	printf("CLIENT_INO=%llu\nSERVER_INO=%llu\nCLIENT_FD=%d\nSERVER_FD=%d\nROUNDS=%d\n",
	       ino_of(sv[0]), ino_of(sv[1]), sv[0], sv[1], rounds);
	fflush(stdout);

	client = fork();
	if (client < 0) {
		perror("fork");
		return 1;
	}
	if (client == 0) {
		char req[MSG], rep[MSG];
		close(sv[1]);
		printf("CLIENT_PID=%d\nCLIENT_TID=%d\n", getpid(), my_tid());
		fflush(stdout);
		for (int i = 0; i < rounds; i++) {
			usleep((useconds_t)delay_us);
			memset(req, 0, MSG);
			snprintf(req, MSG, "req %d", i);
			xsend(sv[0], req);
			xrecv(sv[0], rep);
			if (strncmp(rep, "Rep ", 4) || atoi(rep + 4) != i) {
				fprintf(stderr, "bad reply '%.16s' to request %d\n", rep, i);
				_exit(1);
			}
		}
		_exit(0);
	}
	close(sv[0]);
	sfd = sv[1];
	pthread_t r, w;
	if (pthread_create(&w, NULL, worker, NULL) || pthread_create(&r, NULL, receiver, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	if (waitpid(client, &status, 0) != client || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "client failed\n");
		return 1;
	}
	printf("SERVER_PID=%d\nR_TID=%d\nW_TID=%d\n", getpid(), r_tid, w_tid);
	return 0;
}
