/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_ptrace.c - the ptrace backend of the step engine: one thread of a
 * live process, seized (PTRACE_SEIZE: no SIGSTOP sent, the rest of the
 * process keeps running) and stopped with PTRACE_INTERRUPT.
 *
 * One step = PTRACE_SINGLESTEP + wait for the SIGTRAP stop.  Stops are
 * classified as rr does:
 *   - SIGTRAP, no event: the step is done;
 *   - another signal (a signal-delivery-stop): it is handed back to the
 *     thread with the next PTRACE_SINGLESTEP, so the thread gets it as it
 *     would have untraced; with a handler the kernel reports the step at
 *     the handler's first instruction;
 *   - PTRACE_EVENT_STOP (a group-stop or our own interrupt): resumed;
 *   - PTRACE_EVENT_EXEC (seized with PTRACE_O_TRACEEXEC): the thread
 *     execed a new program: -ENOEXEC, and nothing more is stepped.  argus
 *     runs as root, so a setuid program execed under it runs with its
 *     privileges; stepping on would show (and record) a root process's
 *     registers and memory to whoever asked to step the old image (issue
 *     25, F2).  Close then detaches at once;
 *   - exited or killed: -ESRCH.
 * A syscall instruction is not single-stepped but run with PTRACE_SYSCALL
 * to its exit stop (entry stop, exit stop: then rip is past it, as after a
 * step).  A single step over a syscall would work too, but the trap flag
 * would stay set while the call blocks, and a thread interrupted out of
 * it then has a SIGTRAP queued (syscall_exit_work's single-step report)
 * behind our interrupt stop: detached there, that SIGTRAP kills it.
 * The wait polls (WNOHANG, spinning briefly and then sleeping) with a
 * time limit instead of a blocking waitpid: a thread blocked for good in
 * read() must not hang argus.  On timeout the thread is left in its
 * syscall; close interrupts it (its exit stop comes, and the kernel
 * restarts the call when it resumes) and detaches.
 *
 * PTRACE_DETACH clears the trap flag, so the thread runs on untraced.
 * Memory is read with process_vm_readv (one syscall, no stop needed).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "step_internal.h"

struct ptb {
	pid_t pid, tid;
	uint32_t timeout_ms;
	bool stopped;            /* in a ptrace-stop now */
	bool attached;
	bool execed;             /* an exec stop was seen: step no more */
};

/* A PTRACE_EVENT_EXEC stop? */
static bool exec_stop(int status)
{
	return WIFSTOPPED(status) && (status >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8));
}

_Static_assert(sizeof(struct user_regs_struct) == ARGUS_STEP_NREGS * 8,
	       "enum argus_step_reg follows user_regs_struct");

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for the next stop of the thread, at most timeout_ms (0: forever).
 * Returns 0 with *status, -ETIMEDOUT, -ESRCH when it is gone. */
static int wait_stop(struct ptb *p, uint32_t timeout_ms, int *status)
{
	int64_t deadline = timeout_ms ? now_ms() + timeout_ms : 0;
	unsigned spins = 0;
	long ns = 20000;

	for (;;) {
		pid_t r = waitpid(p->tid, status, __WALL | (timeout_ms ? WNOHANG : 0));

		if (r == p->tid)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -ESRCH;
		/* A single step comes back in tens of microseconds: spin on
		 * WNOHANG first, then sleep, doubling up to 10 ms. */
		if (++spins < 4000)
			continue;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (ns < 10000000)
			ns *= 2;
	}
	if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
		p->attached = false;
		return -ESRCH;
	}
	p->stopped = true;
	if (exec_stop(*status)) {
		p->execed = true;
		return -ENOEXEC;
	}
	return 0;
}

static int pt_get_regs(void *ctx, struct argus_step_regs *out)
{
	struct ptb *p = ctx;

	if (p->execed)
		return -ENOEXEC;
	if (ptrace(PTRACE_GETREGS, p->tid, NULL, out))
		return -errno;
	return 0;
}

static long pt_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct ptb *p = ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (p->execed)
		return -ENOEXEC;
	n = process_vm_readv(p->pid, &l, 1, &r, 1, 0);
	return n < 0 ? -errno : n;
}

/* A syscall instruction: PTRACE_SYSCALL to its entry, then its exit. */
static int pt_step_syscall(struct ptb *p, struct argus_step_stop *stop)
{
	int sig = 0, status, rc, phase = 0;

	for (int tries = 0; tries < 64; tries++) {
		if (ptrace(PTRACE_SYSCALL, p->tid, NULL, (void *)(long)sig))
			return errno == ESRCH ? -ESRCH : -errno;
		p->stopped = false;
		sig = 0;
		rc = wait_stop(p, p->timeout_ms, &status);
		if (rc)
			return rc;
		if (status >> 16)            /* event stop: group-stop, interrupt */
			continue;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (++phase == 2)
				return 0;
			continue;
		}
		if (WSTOPSIG(status) == SIGTRAP)
			return 0;
		/* a signal before the call was entered: deliver it as the
		 * single-step path does (stop at the handler's entry) */
		stop->sig = WSTOPSIG(status);
		if (phase == 0) {
			if (ptrace(PTRACE_SINGLESTEP, p->tid, NULL, (void *)(long)stop->sig))
				return errno == ESRCH ? -ESRCH : -errno;
			p->stopped = false;
			rc = wait_stop(p, p->timeout_ms, &status);
			return rc;
		}
		sig = stop->sig;
	}
	return -EAGAIN;
}

static int pt_step(void *ctx, struct argus_step_stop *stop)
{
	struct ptb *p = ctx;
	int sig = 0, status, rc;

	stop->sig = 0;
	if (p->execed)
		return -ENOEXEC;
	if (stop->syscall)
		return pt_step_syscall(p, stop);
	for (int tries = 0; tries < 64; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, p->tid, NULL, (void *)(long)sig))
			return errno == ESRCH ? -ESRCH : -errno;
		p->stopped = false;
		rc = wait_stop(p, p->timeout_ms, &status);
		if (rc)
			return rc;
		if (status >> 16) {          /* event stop: group-stop, interrupt */
			sig = 0;
			continue;
		}
		if (WSTOPSIG(status) == SIGTRAP)
			return 0;
		sig = WSTOPSIG(status);      /* deliver it with the next step */
		stop->sig = sig;
	}
	return -EAGAIN;
}

static void pt_close(void *ctx)
{
	struct ptb *p = ctx;
	int status;

	if (p->attached && !p->stopped) {
		/* left running in a syscall after a timeout: stop it first,
		 * detach needs a ptrace-stop */
		if (!ptrace(PTRACE_INTERRUPT, p->tid, NULL, NULL))
			wait_stop(p, 2000, &status);
	}
	if (p->attached && p->stopped)
		ptrace(PTRACE_DETACH, p->tid, NULL, NULL);
	free(p);
}

/* tid must be a thread of pid. */
static bool thread_of(uint32_t pid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) == 0;
}

int step_ptrace__open(uint32_t pid, uint32_t tid, uint32_t timeout_ms,
		      struct argus_step_backend *out)
{
	struct ptb *p;
	int status, rc;

	if (!tid)
		tid = pid;
	if (!pid || !thread_of(pid, tid))
		return -ESRCH;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = (pid_t)pid;
	p->tid = (pid_t)tid;
	p->timeout_ms = timeout_ms;
	/* TRACESYSGOOD: syscall stops are SIGTRAP|0x80, told apart from a
	 * step's SIGTRAP; TRACEEXEC: an exec stops (see the top) */
	if (ptrace(PTRACE_SEIZE, p->tid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC))) {
		rc = errno == EPERM && thread_of(pid, tid) ? -EBUSY : -errno;
		/* EPERM on a live thread: already traced (a debugger), or
		 * not allowed (yama, not root) */
		free(p);
		return rc;
	}
	p->attached = true;
	if (ptrace(PTRACE_INTERRUPT, p->tid, NULL, NULL)) {
		rc = -errno;
		ptrace(PTRACE_DETACH, p->tid, NULL, NULL);
		free(p);
		return rc;
	}
	/* The interrupt stop comes even from a blocking syscall (it is
	 * interrupted and will be restarted); a signal may come first. */
	for (;;) {
		rc = wait_stop(p, 5000, &status);
		if (rc) {
			pt_close(p);
			return rc;
		}
		if (status >> 16 == PTRACE_EVENT_STOP)
			break;
		/* a signal-delivery-stop before our interrupt: let the thread
		 * have it, our stop is still pending */
		if (ptrace(PTRACE_CONT, p->tid, NULL, (void *)(long)WSTOPSIG(status))) {
			rc = -errno;
			p->stopped = false;
			pt_close(p);
			return rc;
		}
		p->stopped = false;
	}
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	out->ctx = p;
	out->get_regs = pt_get_regs;
	out->read_mem = pt_read_mem;
	out->step = pt_step;
	out->close = pt_close;
	return 0;
}
