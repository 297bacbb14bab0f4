/* test_wake_watch.c - `argus diagnose --until-end`'s watch of a stopped
 * waiter (cli/wake_watch.h), with real child processes stopped by SIGSTOP
 * in the middle of their wait: a read on a pipe, a FUTEX_WAIT, a flock;
 * a sleep's timer; a wait it has no watch for.  And --until-end's value
 * (until_end_parse).  The children are this process's own, so no root is
 * needed (pidfd_getfd and /proc/PID/mem of a child of the same user). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "argus_events.h"
#include "check.h"
#include "msg.h"
#include "until_end.h"
#include "wake_watch.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits (up to 5 s) until the child is asleep in syscall nr. */
static int wait_in_syscall(pid_t pid, long nr)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		long n = -2;

		if (f) {
			if (fgets(line, sizeof(line), f))
				n = strtol(line, NULL, 10);
			fclose(f);
		}
		if (n == nr)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* SIGSTOP, and wait until the child is in state T. */
static void stop_child(pid_t pid)
{
	int st;

	kill(pid, SIGSTOP);
	waitpid(pid, &st, WUNTRACED);
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_pipe(void)
{
	int p[2];
	char what[160], ev[160];
	struct stat st;
	struct wake_watch *w;
	pid_t pid;

	CHECK(pipe(p) == 0);
	if ((pid = fork()) == 0) {
		char c;

		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	CHECK(wait_in_syscall(pid, SYS_read) == 0);
	stop_child(pid);
	fstat(p[0], &st);
	struct wake_watch_wait ww = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .wait_nr = SYS_read,
				      .wait_arg = (uint64_t)p[0], .obj_kind = AE_OBJ_PIPE,
				      .obj = st.st_ino };
	w = wake_watch__new(&ww, what, sizeof(what));
	CHECK(w != NULL);
	CHECK(strstr(what, "pipe") != NULL);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 0);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 1);
	CHECK(strstr(ev, "readable") != NULL);
	wake_watch__free(w);
	/* a wrong fd (the trace's fd was closed and reused): found by inode */
	ww.wait_arg = 0;
	w = wake_watch__new(&ww, what, sizeof(what));
	CHECK(w != NULL);
	CHECK(w && wake_watch__check(w, ev, sizeof(ev)) == 1);
	wake_watch__free(w);
	end_child(pid);
	close(p[0]);
	close(p[1]);
}

static void test_futex(void)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char what[160], ev[160];
	struct wake_watch *w;
	pid_t pid;

	CHECK(word != MAP_FAILED);
	*word = 7;
	if ((pid = fork()) == 0) {
		syscall(SYS_futex, word, FUTEX_WAIT, 7, NULL, NULL, 0);
		_exit(0);
	}
	CHECK(wait_in_syscall(pid, SYS_futex) == 0);
	stop_child(pid);
	struct wake_watch_wait ww = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .wait_nr = SYS_futex,
				      .wait_arg = (uint64_t)(uintptr_t)word };
	w = wake_watch__new(&ww, what, sizeof(what));
	CHECK(w != NULL);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 0);
	*word = 0;                      /* an unlock's store */
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 1);
	CHECK(strstr(ev, "7 -> 0") != NULL);
	wake_watch__free(w);
	/* the word changed before the watch began: FUTEX_WAIT's value (7,
	 * from /proc/PID/syscall) says it, not the value seen first */
	w = wake_watch__new(&ww, what, sizeof(what));
	CHECK(w && wake_watch__check(w, ev, sizeof(ev)) == 1);
	wake_watch__free(w);
	end_child(pid);
	munmap(word, 4096);
}

static void test_flock(void)
{
	char path[] = "/tmp/test_wake_watch.XXXXXX", what[200], ev[160];
	int fd = mkstemp(path), cfd;
	struct stat st;
	struct wake_watch *w;
	uint64_t obj;
	pid_t pid;

	CHECK(fd >= 0);
	CHECK(flock(fd, LOCK_EX) == 0);
	cfd = open(path, O_RDONLY);     /* another open file: its own lock */
	if ((pid = fork()) == 0)
		_exit(flock(cfd, LOCK_EX) == 0 ? 0 : 1);
	CHECK(wait_in_syscall(pid, SYS_flock) == 0);
	stop_child(pid);
	fstat(fd, &st);
	/* the trace's file object: the kernel's s_dev (major << 20 | minor)
	 * << 32 ^ inode (kernel-patch/argus.bpf.c resolve_fd) */
	obj = ((uint64_t)((major(st.st_dev) << 20) | minor(st.st_dev)) << 32) ^ (uint64_t)st.st_ino;
	struct wake_watch_wait ww = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .wait_nr = SYS_flock,
				      .wait_arg = (uint64_t)cfd, .obj_kind = AE_OBJ_FILE, .obj = obj };
	w = wake_watch__new(&ww, what, sizeof(what));
	CHECK(w != NULL);
	{
		uint32_t pids[4];

		CHECK_EQ(wake_watch__lock_holders(w, pids, 4), 1);
		CHECK_EQ(pids[0], getpid());
	}
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 0);
	CHECK(flock(fd, LOCK_UN) == 0);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 1);
	CHECK(strstr(ev, "released") != NULL);
	wake_watch__free(w);
	end_child(pid);
	close(cfd);
	close(fd);
	unlink(path);
}

static void test_timer_and_none(void)
{
	char what[160], ev[160];
	struct wake_watch_wait ww = { .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
				      .wait_nr = SYS_nanosleep, .wait_start = now_ns(),
				      .wait_arg = 200000000ull };
	struct wake_watch *w = wake_watch__new(&ww, what, sizeof(what));

	CHECK(w != NULL);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 0);
	usleep(250000);
	CHECK_EQ(wake_watch__check(w, ev, sizeof(ev)), 1);
	wake_watch__free(w);
	ww.wait_nr = SYS_select;
	CHECK(wake_watch__new(&ww, what, sizeof(what)) == NULL);
	CHECK(strstr(what, "select") != NULL);
}

static void test_parse(void)
{
	uint64_t ns = 0;
	FILE *quiet = fopen("/dev/null", "w");

	msg_set_err(quiet);             /* the usage errors */
	CHECK_EQ(until_end_parse("diagnose", "--until-end", &ns), 1);
	CHECK_EQ(ns, (uint64_t)UNTIL_END_DEFAULT_S * 1000000000ull);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=20", &ns), 1);
	CHECK_EQ(ns, 20000000000ull);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=0.5", &ns), 1);
	CHECK_EQ(ns, 500000000ull);
	CHECK_EQ(until_end_parse("diagnose", "--until-endx", &ns), 0);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=", &ns), -1);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=0", &ns), -1);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=-3", &ns), -1);
	CHECK_EQ(until_end_parse("diagnose", "--until-end=9s", &ns), -1);
	msg_set_err(NULL);
	if (quiet)
		fclose(quiet);
}

int main(void)
{
	RUN(test_pipe);
	RUN(test_futex);
	RUN(test_flock);
	RUN(test_timer_and_none);
	RUN(test_parse);
	return check_report();
}
