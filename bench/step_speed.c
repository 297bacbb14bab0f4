/* step_speed.c - instructions per second of single-stepping one thread
 * (issue 13 §7), two ways in the same run, on the same target:
 *   raw     PTRACE_SINGLESTEP + waitpid + PTRACE_GETREGS, nothing else
 *           (the floor of any ptrace stepper);
 *   raw_spin the same, waiting with WNOHANG polls as the engine does;
 *   engine  argus_step__next into a recording: full registers, decode,
 *           memory operands read, changed registers, symbols (the engine
 *           behind argus step / argus flag);
 *   fast    argus_step__record_fast: the target steps itself through an
 *           injected SIGTRAP handler (registers, no memory values), then
 *           the records are decoded into a recording (fast_total adds
 *           setup, teardown and decoding).
 * The target is a child spinning in a small loop with loads and stores
 * (spin_target), forked here and killed at the end.  The lldb peer
 * (SBThread::StepInstruction) is bench/step_speed.sh's Python part.
 *
 * usage: step_speed [N]   (instructions per method, default 200000)
 * Prints "METHOD N SECONDS RATE/s" lines. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "argus_step.h"

static volatile unsigned long sink[4];

__attribute__((noinline)) static void spin_target(void)
{
	for (unsigned long i = 0;; i++) {
		sink[i & 3] += i;
		if (sink[(i + 1) & 3] == 42)
			sink[0] = 0;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double raw(pid_t pid, long n)
{
	struct user_regs_struct regs;
	int st;
	double t0;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) ||
	    waitpid(pid, &st, __WALL) != pid) {
		perror("step_speed: seize");
		return -1;
	}
	t0 = now();
	for (long i = 0; i < n; i++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) || waitpid(pid, &st, __WALL) != pid ||
		    ptrace(PTRACE_GETREGS, pid, NULL, &regs)) {
			perror("step_speed: raw step");
			return -1;
		}
	}
	t0 = now() - t0;
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return t0;
}

/* raw, but waiting as the engine does: WNOHANG spinning instead of a
 * blocking waitpid (no sleep/wake-up of the stepper between stops) */
static double raw_spin(pid_t pid, long n)
{
	struct user_regs_struct regs;
	int st;
	double t0;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) ||
	    waitpid(pid, &st, __WALL) != pid) {
		perror("step_speed: seize");
		return -1;
	}
	t0 = now();
	for (long i = 0; i < n; i++) {
		pid_t r;

		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL)) {
			perror("step_speed: raw_spin step");
			return -1;
		}
		while ((r = waitpid(pid, &st, __WALL | WNOHANG)) == 0)
			;
		if (r != pid || ptrace(PTRACE_GETREGS, pid, NULL, &regs)) {
			perror("step_speed: raw_spin wait");
			return -1;
		}
	}
	t0 = now() - t0;
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return t0;
}

/* in-process: the target steps itself through an injected SIGTRAP
 * handler; the time is the target's recording run plus the decoding of
 * the records into a recording (setup and teardown left out: constant) */
static double fast(pid_t pid, long n)
{
	struct argus_step_rec *rec = NULL;
	double run = 0, t0 = now(), total;
	int rc = argus_step__record_fast((uint32_t)pid, 0, (size_t)n, 60000, &rec, &run);

	total = now() - t0;
	if (rc || argus_step_rec__count(rec) < (size_t)n) {
		fprintf(stderr, "step_speed: fast: %s (%zu recorded)\n", rc ? strerror(-rc) : "short",
			rec ? argus_step_rec__count(rec) : 0);
		argus_step_rec__free(rec);
		return -1;
	}
	argus_step_rec__free(rec);
	printf("fast_total %ld %.3f %.0f/s\n", n, total, n / total);
	return run;
}

static double engine(pid_t pid, long n)
{
	struct argus_stepper *s = argus_step__open_pid((uint32_t)pid, 0, NULL);
	struct argus_step_rec *rec;
	double t0;
	int rc;

	if (!s) {
		fprintf(stderr, "step_speed: attach: %s\n", strerror(errno));
		return -1;
	}
	rec = argus_step__new_rec(s);
	t0 = now();
	for (long i = 0; i < n; i++) {
		rc = argus_step__next(s, rec, NULL);
		if (rc) {
			fprintf(stderr, "step_speed: step: %s\n", strerror(-rc));
			return -1;
		}
	}
	t0 = now() - t0;
	argus_step__close(s);
	argus_step_rec__free(rec);
	return t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	double tr, ts, te, tf;
	pid_t pid;

	if (n <= 0) {
		fprintf(stderr, "usage: step_speed [N]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		cpu_set_t cs;

		/* the target on CPU 0, as step_speed_target (the script runs
		 * the steppers on CPU 1) */
		CPU_ZERO(&cs);
		CPU_SET(0, &cs);
		sched_setaffinity(0, sizeof(cs), &cs);
		spin_target();
	}
	usleep(50000);
	tr = raw(pid, n);
	ts = raw_spin(pid, n);
	te = engine(pid, n);
	tf = fast(pid, n);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (tr < 0 || ts < 0 || te < 0 || tf < 0)
		return 1;
	printf("raw %ld %.3f %.0f/s\n", n, tr, n / tr);
	printf("raw_spin %ld %.3f %.0f/s\n", n, ts, n / ts);
	printf("engine %ld %.3f %.0f/s\n", n, te, n / te);
	printf("fast %ld %.3f %.0f/s\n", n, tf, n / tf);
	return 0;
}
