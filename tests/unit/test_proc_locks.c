/* test_proc_locks - what a live diagnosis asks the running system about
 * locks (cli/proc_locks.c): which processes hold a file lock now
 * (diag_front_proc_lock_holders: /proc/locks, and /proc/PID/fdinfo for OFD
 * locks and inherited ones), and which thread owns a glibc mutex
 * (diag_front_mutex_owner: /proc/PID/mem).  Real child processes take real
 * flock, POSIX and OFD locks and block on them; a child's threads hold
 * and wait on a real pthread mutex.  Every child is killed and reaped by
 * pid. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "diag_front.h"

static char dir[64];

/* The trace's object of an open file, as resolve_fd() computes it from
 * the inode: the kernel's s_dev (MKDEV: major << 20 | minor) << 32 ^ ino.
 * Here from fstat(), whose st_dev is user space's encoding of the same
 * device. */
static uint64_t obj_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	return ((uint64_t)(major(st.st_dev) << 20 | minor(st.st_dev)) << 32) ^ st.st_ino;
}

static int has(const uint32_t *pids, uint32_t n, pid_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (pids[i] == (uint32_t)pid)
			return 1;
	return 0;
}

static void reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* One byte from the child when it is ready (0 if it died first). */
static char wait_ready(int fd)
{
	char c = 0;

	return read(fd, &c, 1) == 1 ? c : 0;
}

static int open_tmp(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

/* A child that locks fd with lock(fd) (0 ok), says 'r', and waits. */
static pid_t locker(int fd, int (*lock)(int fd), int ready_w, int ready_r)
{
	pid_t pid = fork();

	if (pid == 0) {
		close(ready_r);
		if (lock(fd))
			_exit(1);
		if (write(ready_w, "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

static int flock_ex(int fd) { return flock(fd, LOCK_EX); }

static int posix_wr(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 10 };

	return fcntl(fd, F_SETLK, &fl);
}

static int ofd_wr(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Until /proc/locks shows a "->" waiter line for pid (the kernel has
 * queued it on the lock), at most 5 s. */
static int wait_queued(pid_t pid)
{
	char line[256], want[32];

	snprintf(want, sizeof(want), " %d ", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen("/proc/locks", "re");
		int found = 0;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, "->") && strstr(line, want);
		if (f)
			fclose(f);
		if (found)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void TEST_flock_holder_is_named_and_its_blocked_waiter_is_not(void)
{
	int fd = open_tmp("flock"), pr[2];
	uint32_t pids[16], n;
	pid_t holder, waiter = -1;
	int fd2;

	CHECK(fd >= 0);
	CHECK_EQ(pipe(pr), 0);
	holder = locker(fd, flock_ex, pr[1], pr[0]);
	CHECK(holder > 0);
	CHECK_EQ(wait_ready(pr[0]), 'r');
	/* a second open file description: its flock blocks behind the holder */
	fd2 = open_tmp("flock");
	waiter = fork();
	if (waiter == 0) {
		flock(fd2, LOCK_EX);    /* blocks behind the holder */
		_exit(0);
	}
	CHECK(waiter > 0);
	CHECK(wait_queued(waiter));

	n = diag_front_proc_lock_holders(NULL, obj_of(fd), pids, 16);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, holder));
	CHECK(!has(pids, n, waiter));
	/* /proc/locks alone names it: nothing left for the fdinfo scan */
	{
		bool unresolved = true;

		n = diag_front_lock_holders_quick(obj_of(fd), pids, 16, &unresolved);
		CHECK_EQ(n, 1);
		CHECK(has(pids, n, holder));
		CHECK(!unresolved);
	}
	reap(waiter);
	reap(holder);
	/* a flock belongs to the open file description, and we share the
	 * holder's (it inherited fd): the lock lives on, held by us now */
	n = diag_front_proc_lock_holders(NULL, obj_of(fd), pids, 16);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, getpid()));
	/* gone with the last descriptor */
	{
		uint64_t obj = obj_of(fd);

		close(fd);
		CHECK_EQ(diag_front_proc_lock_holders(NULL, obj, pids, 16), 0);
	}
	close(fd2);
	close(pr[0]);
	close(pr[1]);
}

static void TEST_posix_range_lock_holder_is_named(void)
{
	int fd = open_tmp("posix"), other = open_tmp("unlocked"), pr[2];
	uint32_t pids[16], n;
	pid_t holder;

	CHECK(fd >= 0 && other >= 0);
	CHECK_EQ(pipe(pr), 0);
	holder = locker(fd, posix_wr, pr[1], pr[0]);
	CHECK_EQ(wait_ready(pr[0]), 'r');
	n = diag_front_proc_lock_holders(NULL, obj_of(fd), pids, 16);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, holder));
	/* a file nobody locked */
	CHECK_EQ(diag_front_proc_lock_holders(NULL, obj_of(other), pids, 16), 0);
	reap(holder);
	close(fd);
	close(other);
	close(pr[0]);
	close(pr[1]);
}

/* /proc/locks shows pid -1 for an OFD lock: the holder comes from fdinfo. */
static void TEST_ofd_lock_holder_is_found_through_fdinfo(void)
{
	int fd = open_tmp("ofd"), pr[2];
	uint32_t pids[16], n;
	pid_t holder;

	CHECK(fd >= 0);
	CHECK_EQ(pipe(pr), 0);
	/* the child opens its own description, so the parent does not share
	 * it (a shared one would make the parent a holder too) */
	holder = fork();
	if (holder == 0) {
		int own = open_tmp("ofd");

		close(pr[0]);
		if (own < 0 || ofd_wr(own) || write(pr[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK_EQ(wait_ready(pr[0]), 'r');
	n = diag_front_proc_lock_holders(NULL, obj_of(fd), pids, 16);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, holder));
	/* /proc/locks alone: no holder named, one only fdinfo finds */
	{
		bool unresolved = false;

		CHECK_EQ(diag_front_lock_holders_quick(obj_of(fd), pids, 16, &unresolved), 0);
		CHECK(unresolved);
	}
	reap(holder);
	close(fd);
	close(pr[0]);
	close(pr[1]);
}

/* `flock FILE CMD` style: the taker exits, the child that inherited the
 * descriptor keeps the lock; /proc/locks still names the dead taker. */
static void TEST_inherited_flock_is_held_by_the_child_after_the_taker_exits(void)
{
	int pr[2], fd = open_tmp("inherit");
	uint32_t pids[16], n;
	pid_t taker, heir = 0;

	CHECK(fd >= 0);
	CHECK_EQ(pipe(pr), 0);
	taker = fork();
	if (taker == 0) {
		int own = open_tmp("inherit");
		pid_t c;
		char msg[16];

		close(pr[0]);
		if (own < 0 || flock(own, LOCK_EX))
			_exit(1);
		c = fork();
		if (c == 0) {
			pause();
			_exit(0);
		}
		snprintf(msg, sizeof(msg), "%d\n", (int)c);
		if (write(pr[1], msg, strlen(msg)) <= 0)
			_exit(1);
		_exit(0);       /* the heir is reparented and keeps the lock */
	}
	{
		char buf[16] = { 0 };

		CHECK(read(pr[0], buf, sizeof(buf) - 1) > 0);
		heir = atoi(buf);
	}
	CHECK(heir > 0);
	waitpid(taker, NULL, 0);
	n = diag_front_proc_lock_holders(NULL, obj_of(fd), pids, 16);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, heir));
	CHECK(!has(pids, n, taker));
	reap(heir);     /* ours again: we are its subreaper (main) */
	close(fd);
	close(pr[0]);
	close(pr[1]);
}

/* ---- glibc mutex owner ---------------------------------------------------- */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int report_fd;

static void *owner_thread(void *arg)
{
	int tid = (int)syscall(SYS_gettid);

	(void)arg;
	pthread_mutex_lock(&held);
	if (write(report_fd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	pause();
	return NULL;
}

static void *blocked_thread(void *arg)
{
	int tid = (int)syscall(SYS_gettid);

	(void)arg;
	if (write(report_fd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	pthread_mutex_lock(&held);      /* blocks in futex: the owner never lets go */
	return NULL;
}

static void *cond_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cv_lock);
	for (;;)
		pthread_cond_wait(&cv, &cv_lock);
	return NULL;
}

/* Until thread tid of pid sleeps in syscall nr (/proc/.../syscall). */
static int wait_in_syscall(pid_t pid, int tid, long nr)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, tid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "re");

		if (f && fgets(buf, sizeof(buf), f) && atol(buf) == nr) {
			fclose(f);
			return 1;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	return 0;
}

static void TEST_mutex_owner_is_the_locking_thread_and_other_words_are_no_mutex(void)
{
	int pr[2], owner = 0, blocked = 0;
	uint32_t tid = 0;
	pid_t child;

	CHECK_EQ(pipe(pr), 0);
	child = fork();
	if (child == 0) {
		pthread_t a, b, c;

		report_fd = pr[1];
		if (pthread_create(&a, NULL, owner_thread, NULL) ||
		    pthread_create(&c, NULL, cond_thread, NULL))
			_exit(1);
		usleep(50000);  /* the owner has it before the other tries */
		if (pthread_create(&b, NULL, blocked_thread, NULL))
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	CHECK_EQ(read(pr[0], &owner, sizeof(owner)), (long)sizeof(owner));
	CHECK_EQ(read(pr[0], &blocked, sizeof(blocked)), (long)sizeof(blocked));
	CHECK(wait_in_syscall(child, blocked, SYS_futex));

	/* the child's copy of `held` is at the same address as ours (fork) */
	CHECK_EQ(diag_front_mutex_owner(child, (uint64_t)(uintptr_t)&held, &tid), 0);
	CHECK_EQ(tid, owner);
	CHECK(tid != (uint32_t)blocked);
	/* a process, and a thread of it that leads no thread group */
	CHECK(diag_front_pid_alive(child));
	CHECK(!diag_front_pid_alive(owner));
	CHECK(!diag_front_pid_alive(0));
	CHECK(!diag_front_pid_alive(-1));
	/* not held: no owner */
	CHECK_EQ(diag_front_mutex_owner(child, (uint64_t)(uintptr_t)&unlocked, &tid), -ENOENT);
	/* a condition variable a thread waits on is no mutex */
	CHECK_EQ(diag_front_mutex_owner(child, (uint64_t)(uintptr_t)&cv, &tid), -ENOENT);
	/* unmapped memory */
	CHECK_EQ(diag_front_mutex_owner(child, 0x1000, &tid), -EFAULT);
	reap(child);
	/* a process that is gone */
	CHECK(diag_front_mutex_owner(child, (uint64_t)(uintptr_t)&held, &tid) < 0);
	CHECK(!diag_front_pid_alive(child));
	close(pr[0]);
	close(pr[1]);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_proc_locks.XXXXXX");
	/* orphaned grandchildren (the inherited-lock test) come back to us
	 * to be reaped by pid */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(TEST_flock_holder_is_named_and_its_blocked_waiter_is_not);
	RUN(TEST_posix_range_lock_holder_is_named);
	RUN(TEST_ofd_lock_holder_is_found_through_fdinfo);
	RUN(TEST_inherited_flock_is_held_by_the_child_after_the_taker_exits);
	RUN(TEST_mutex_owner_is_the_locking_thread_and_other_words_are_no_mutex);
	{
		const char *names[] = { "flock", "posix", "unlocked", "ofd", "inherit" };
		char path[128];

		for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
		rmdir(dir);
	}
	return check_report();
}
