/* mutex_pipe.c - e2e app (tests/e2e/interpose_mutex.sh): the UI thread
 * blocks on a pthread mutex that a worker holds across a slow syscall.
 *
 *   writer  a child process: sleeps DELAY_MS, then writes one byte to
 *           the pipe
 *   worker  locks mu, reads the pipe (blocked until the writer writes),
 *           unlocks mu
 *   main    the "UI" thread: a few short lock/unlock rounds (normal),
 *           then, once the worker holds mu, pthread_mutex_lock(&mu):
 *           blocked in futex() until the worker unlocks
 *
 * usage: mutex_pipe [DELAY_MS (3000)] [kill|wait]
 *   kill: once the UI has the mutex, print the ground truth and SIGKILL
 *         the process at once (the interposer's last records are then
 *         read by argusd from a dead process's ring)
 *   wait: first print PID=<pid> and READY=1 and wait for a line on stdin
 *         (tests/e2e/live_inject_mutex.sh injects the interposer into the
 *         running process meanwhile), then run as usual
 *
 * Ground truth on stdout, KEY=VALUE, after the run:
 *   PID UI_TID WORKER_TID WRITER_PID MUTEX_ADDR (hex) WAITED_MS
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int pfd[2];
static volatile int holding;
static volatile pid_t worker_tid;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
	char c;

	(void)arg;
	worker_tid = my_tid();
	pthread_mutex_lock(&mu);
	holding = 1;
	if (read(pfd[0], &c, 1) != 1)
		perror("mutex_pipe: read");
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	long delay_ms = argc > 1 ? atol(argv[1]) : 3000;
	struct timespec d;
	pthread_t w;
	pid_t writer;
	double t0, waited;
	int st;

	if (delay_ms <= 0 || pipe(pfd)) {
		fprintf(stderr, "usage: mutex_pipe [DELAY_MS] [kill|wait]\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "wait")) {
		char line[64];

		/* bind mutex_lock's GOT slot now (lazy binding): a process that
		 * ran a while has its calls bound, which is what inject meets */
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
		printf("PID=%d\nREADY=1\n", getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	writer = fork();
	if (writer < 0) {
		perror("mutex_pipe: fork");
		return 1;
	}
	if (writer == 0) {
		close(pfd[0]);
		d.tv_sec = delay_ms / 1000;
		d.tv_nsec = (delay_ms % 1000) * 1000000;
		nanosleep(&d, NULL);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	/* normal rounds: the UI takes the mutex without waiting */
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
		usleep(10000);
	}
	if (pthread_create(&w, NULL, worker, NULL)) {
		fprintf(stderr, "mutex_pipe: pthread_create failed\n");
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
		return 1;
	}
	while (!holding)
		usleep(1000);
	t0 = mono_ms();
	pthread_mutex_lock(&mu);        /* the hang: the worker holds it */
	waited = mono_ms() - t0;
	if (argc > 2 && !strcmp(argv[2], "kill")) {
		printf("PID=%d\nUI_TID=%d\nWORKER_TID=%d\n", getpid(), my_tid(), worker_tid);
		fflush(stdout);
		kill(writer, SIGKILL);
		kill(getpid(), SIGKILL);
	}
	pthread_mutex_unlock(&mu);
	pthread_join(w, NULL);
	if (waitpid(writer, &st, 0) != writer || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "mutex_pipe: the writer failed\n");
		return 1;
	}
	printf("PID=%d\nUI_TID=%d\nWORKER_TID=%d\nWRITER_PID=%d\nMUTEX_ADDR=%#lx\nWAITED_MS=%.0f\n",
	       getpid(), my_tid(), worker_tid, writer, (unsigned long)&mu, waited);
	return 0;
}
