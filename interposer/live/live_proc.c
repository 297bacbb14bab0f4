/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_proc.c - a running process under ptrace, for inject and instrument.
 *
 * Every thread of /proc/PID/task is PTRACE_SEIZE'd (no signal sent, the
 * process keeps running) and stopped on demand with PTRACE_INTERRUPT.
 * Threads born while we stop the others are caught by scanning the task
 * directory again until a scan finds nothing new: only a running thread
 * can clone, and once every known one is stopped none is left to.
 *
 * The remote call (argus_live__call), as gdb's "call" does it:
 *   - save the general registers (GETREGS) and the whole FP/AVX state
 *     (GETREGSET NT_X86_XSTATE);
 *   - rsp: below the red zone (128 bytes the interrupted code may own),
 *     the data copied there, aligned so rsp+8 is 16-aligned at the entry,
 *     with a return address of 0: the function's `ret` faults at pc 0,
 *     and that SIGSEGV stop is how we know it returned;
 *   - orig_rax = -1.  Kernel quirk: a thread interrupted inside a blocking
 *     syscall (futex, poll, read) stops with rax = -ERESTARTSYS (or
 *     -ERESTARTNOHAND / -ERESTART_RESTARTBLOCK) and orig_rax = the syscall
 *     number; on resume, arch_do_signal_or_restart() sees orig_rax >= 0
 *     and a restart code and rewinds rip by 2 to re-run the `syscall`
 *     instruction.  Left as it was, that would rewind *our* pc into the
 *     callee.  With -1 nothing is rewound and the call runs;
 *   - afterwards the saved registers go back as they were, orig_rax and
 *     the restart code included, so when the thread resumes from the
 *     SIGSEGV stop (signal suppressed) the kernel rewinds rip and the
 *     interrupted syscall starts again, exactly as after a signal with no
 *     handler: the process cannot tell (a futex wait or poll with a
 *     timeout restarts with the time left, through restart_block).
 * A signal that arrives for the thread during the call (e.g. SIGCHLD) is
 * held and handed back when the thread resumes.
 *
 * An exec ends the operation (security finding F2 of issue 25).  argus
 * runs as root: a setuid program the target execs while we trace it runs
 * with its new credentials (the kernel keeps them for a tracer with
 * CAP_SYS_PTRACE), and registers or memory saved from the old image
 * written into it would give the user who prepared the old image the new
 * one's registers.  So:
 *   - every thread is seized with PTRACE_O_TRACEEXEC: an exec stops the
 *     execing thread (under the leader's tid) with PTRACE_EVENT_EXEC, and
 *     every wait notes it (l->execed, latched);
 *   - at open we note the process's image and credentials: /proc/PID/exe's
 *     dev and inode, the Uid: and Gid: lines of its status; a call notes
 *     its thread's too.  live_same() checks them, and that the address
 *     space /proc/PID/mem was opened on is still the process's (a read of
 *     it returns 0 bytes once that mm is gone: exec or exit), before every
 *     register restore and every memory write.  Any difference: nothing is
 *     written, nothing restored, -ENOEXEC and why says what happened;
 *   - close then detaches without handing back held signals;
 *   - the one race left: another thread execs between the last check and
 *     PTRACE_SETREGS on the leader, and its new image is already in its
 *     exec stop under the leader's tid.  After the restore the check runs
 *     again; if the mm is gone and the leader's registers now read as the
 *     ones we wrote, the new image (which has not run one instruction)
 *     is killed rather than resumed with them.
 * Memory writes go through the /proc/PID/mem fd opened on the old mm,
 * which never reaches a new image's memory in any case.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "argus_live.h"
#include "proc_creds.h"

struct live_task {
	pid_t tid;
	bool stopped;		/* in a ptrace-stop we caused */
	bool gone;		/* exited while we held it */
	int sig;		/* a signal to hand back at resume (0 none) */
};

struct argus_live {
	pid_t pid;
	int memfd;		/* /proc/PID/mem, O_RDWR */
	struct live_task *t;
	size_t n, cap;
	struct argus_live_ident id;	/* the image and credentials at open */
	bool execed;		/* an exec (or credential change) was seen:
				 * nothing more is written, ever */
};

#define WHY(...) do { if (why) snprintf(why, ARGUS_LIVE_WHY, __VA_ARGS__); } while (0)

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

pid_t argus_live__pid(const struct argus_live *l)
{
	return l->pid;
}

static struct live_task *find_task(struct argus_live *l, pid_t tid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].tid == tid)
			return &l->t[i];
	return NULL;
}

/* The Uid: and Gid: lines of /proc/PID/task/TID/status (tid 0: the
 * process's), joined.  0 or -errno. */
static int read_creds(pid_t pid, pid_t tid, char *out, size_t len)
{
	char p[96];
	int dfd, rc;

	if (tid)
		snprintf(p, sizeof(p), "/proc/%d/task/%d", (int)pid, (int)tid);
	else
		snprintf(p, sizeof(p), "/proc/%d", (int)pid);
	dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	rc = argus_proc_creds(dfd, out, len, NULL, NULL);
	close(dfd);
	return rc;
}

int argus_live__ident(pid_t pid, struct argus_live_ident *id)
{
	char p[64];
	struct stat st;

	memset(id, 0, sizeof(*id));
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	if (stat(p, &st)) {
		/* a main thread that exited (pthread_exit) has no exe: any
		 * live thread's is the process's */
		char tp[96];
		struct dirent *d;
		DIR *dir;
		int e = errno;

		snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
		dir = e == ENOENT ? opendir(p) : NULL;
		if (!dir)
			return e == ENOENT ? -ESRCH : -e;
		while ((d = readdir(dir))) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(tp, sizeof(tp), "/proc/%d/task/%.20s/exe", (int)pid, d->d_name);
			if (!stat(tp, &st))
				break;
		}
		closedir(dir);
		if (!d)
			return -ESRCH;
	}
	id->exe_dev = (uint64_t)st.st_dev;
	id->exe_ino = (uint64_t)st.st_ino;
	return read_creds(pid, 0, id->creds, sizeof(id->creds));
}

/* The process's name now (for a message), "?" unknown. */
static void comm_of(pid_t pid, char *out, size_t len)
{
	char p[64];
	FILE *f;

	snprintf(out, len, "?");
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* Is the mm /proc/PID/mem was opened on gone (exec or exit)?  Reading
 * address 0 of a live mm fails (EIO); of a dead one returns 0 bytes. */
static bool mm_gone(const struct argus_live *l)
{
	char b;

	return l->memfd >= 0 && pread(l->memfd, &b, 1, 0) == 0;
}

static void set_execed(struct argus_live *l, char *why)
{
	char name[64];

	l->execed = true;
	comm_of(l->pid, name, sizeof(name));
	WHY("the target (process %d) execed %s during the call; nothing was restored", (int)l->pid,
	    name);
}

/*
 * Still the image and credentials we opened (and, tcreds non-NULL, thread
 * tid's credentials still tcreds)?  0, or -ENOEXEC (latched) with why;
 * -ESRCH when the process is gone.
 */
static int live_same(struct argus_live *l, pid_t tid, const char *tcreds, char *why)
{
	struct argus_live_ident now;
	char tc[sizeof(now.creds)];
	int err;

	if (l->execed) {
		set_execed(l, why);
		return -ENOEXEC;
	}
	err = argus_live__ident(l->pid, &now);
	if (err == -ESRCH || (err && kill(l->pid, 0) && errno == ESRCH)) {
		WHY("process %d is gone", (int)l->pid);
		return -ESRCH;
	}
	if (err || mm_gone(l) || now.exe_dev != l->id.exe_dev || now.exe_ino != l->id.exe_ino) {
		set_execed(l, why);
		return -ENOEXEC;
	}
	if (strcmp(now.creds, l->id.creds) ||
	    (tcreds && (read_creds(l->pid, tid, tc, sizeof(tc)) || strcmp(tc, tcreds)))) {
		l->execed = true;
		WHY("the credentials of process %d changed during the call (now %s); nothing was"
		    " restored", (int)l->pid, now.creds);
		return -ENOEXEC;
	}
	return 0;
}

int argus_live__check(struct argus_live *l, const struct argus_live_ident *before, char *why)
{
	int err = live_same(l, 0, NULL, why);

	if (err || !before)
		return err;
	if (before->exe_dev != l->id.exe_dev || before->exe_ino != l->id.exe_ino ||
	    strcmp(before->creds, l->id.creds)) {
		char name[64];

		l->execed = true;
		comm_of(l->pid, name, sizeof(name));
		WHY("process %d execed %s (or changed its credentials) before it was attached;"
		    " nothing was done", (int)l->pid, name);
		return -ENOEXEC;
	}
	return 0;
}

/* A PTRACE_EVENT_EXEC stop? */
static bool exec_stop(int st)
{
	return WIFSTOPPED(st) && (st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8));
}

/* The tracer's pid from /proc/TID/status, 0 none. */
static long tracer_of(pid_t pid)
{
	char p[64], line[256];
	long tp = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tp) == 1)
			break;
	fclose(f);
	return tp;
}

/* Seize every thread not seized yet; *added how many were new. */
static int seize_new(struct argus_live *l, size_t *added, char *why)
{
	char p[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	*added = 0;
	snprintf(p, sizeof(p), "/proc/%d/task", (int)l->pid);
	dir = opendir(p);
	if (!dir) {
		WHY("no process %d", (int)l->pid);
		return -ESRCH;
	}
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0 || find_task(l, tid))
			continue;
		/* TRACEEXEC: an exec stops, where we see it (see the top) */
		if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACEEXEC)) {
			if (errno == ESRCH)
				continue;	/* exited meanwhile */
			err = -errno;
			if (err == -EPERM && tracer_of(tid))
				WHY("thread %d is already traced by process %ld (a debugger?)", (int)tid,
				    tracer_of(tid));
			else
				WHY("cannot ptrace thread %d: %s", (int)tid, strerror(errno));
			break;
		}
		if (l->n == l->cap) {
			size_t nc = l->cap ? l->cap * 2 : 16;
			struct live_task *nt = realloc(l->t, nc * sizeof(*nt));

			if (!nt) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				err = -ENOMEM;
				break;
			}
			l->t = nt;
			l->cap = nc;
		}
		l->t[l->n++] = (struct live_task){ .tid = tid };
		(*added)++;
	}
	closedir(dir);
	return err;
}

int argus_live__open(pid_t pid, struct argus_live **out, char *why)
{
	struct argus_live *l;
	char p[64];
	size_t added;
	int err;

	*out = NULL;
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		WHY("no process %d", (int)pid);
		return -ESRCH;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->pid = pid;
	l->memfd = -1;
	err = seize_new(l, &added, why);
	if (!err && !l->n) {
		WHY("no process %d", (int)pid);
		err = -ESRCH;
	}
	if (err) {
		argus_live__close(l);
		return err;
	}
	/* opened after the seize: the kernel checks ptrace access at open */
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)pid);
	l->memfd = open(p, O_RDWR | O_CLOEXEC);
	if (l->memfd < 0) {
		err = -errno;
		WHY("cannot open %s: %s", p, strerror(errno));
		argus_live__close(l);
		return err;
	}
	/* after the seize: an exec from now on stops and is seen */
	err = argus_live__ident(pid, &l->id);
	if (err) {
		WHY("cannot read the image and credentials of process %d: %s", (int)pid,
		    strerror(-err));
		argus_live__close(l);
		return err;
	}
	*out = l;
	return 0;
}

/* Wait for tid's next stop, at most ms.  0 and *status, -ESRCH gone,
 * -ETIMEDOUT. */
static int wait_tid(pid_t tid, uint32_t ms, int *status)
{
	int64_t deadline = now_ms() + ms;

	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);

		if (r == tid)
			return WIFEXITED(*status) || WIFSIGNALED(*status) ? -ESRCH : 0;
		if (r < 0 && errno != EINTR)
			return -ESRCH;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
}

/* After a PTRACE_INTERRUPT: wait for the thread's stop.  A signal that
 * reaches it first gives a signal-delivery-stop instead: that is a stop
 * too (registers valid); the signal is remembered for the resume. */
static int wait_stopped(struct argus_live *l, struct live_task *t)
{
	int st, err = wait_tid(t->tid, 5000, &st);

	if (err == -ESRCH) {
		t->gone = true;
		return err;
	}
	if (err)
		return err;
	if (!WIFSTOPPED(st))
		return -ECHILD;
	if (exec_stop(st))
		l->execed = true;	/* stopped all the same */
	else if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
		t->sig = WSTOPSIG(st);
	t->stopped = true;
	return 0;
}

static int stop_task(struct argus_live *l, struct live_task *t)
{
	if (t->stopped || t->gone)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0)) {
		if (errno == ESRCH) {
			t->gone = true;
			return -ESRCH;
		}
		return -errno;
	}
	return wait_stopped(l, t);
}

int argus_live__stop(struct argus_live *l, pid_t tid)
{
	struct live_task *t = find_task(l, tid);

	return t ? stop_task(l, t) : -ESRCH;
}

int argus_live__stop_one(struct argus_live *l, pid_t *tid)
{
	int err = -ESRCH;

	/* the main thread first; it may be a zombie (pthread_exit in main) */
	if (!argus_live__stop(l, l->pid)) {
		*tid = l->pid;
		return 0;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (l->t[i].tid == l->pid)
			continue;
		err = stop_task(l, &l->t[i]);
		if (!err) {
			*tid = l->t[i].tid;
			return 0;
		}
	}
	return err;
}

int argus_live__stop_all(struct argus_live *l)
{
	size_t added;
	int err;

	do {
		for (size_t i = 0; i < l->n; i++) {
			err = stop_task(l, &l->t[i]);
			if (err && err != -ESRCH)
				return err;
		}
		err = seize_new(l, &added, NULL);
		if (err)
			return err;
	} while (added);
	return 0;
}

static void resume_task(struct argus_live *l, struct live_task *t)
{
	if (!t->stopped || t->gone)
		return;
	/* after an exec the held signal was for the old image */
	ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)(l->execed ? 0 : t->sig));
	t->sig = 0;
	t->stopped = false;
}

int argus_live__resume_all(struct argus_live *l)
{
	for (size_t i = 0; i < l->n; i++)
		resume_task(l, &l->t[i]);
	return 0;
}

void argus_live__close(struct argus_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct live_task *t = &l->t[i];

		if (t->gone)
			continue;
		/* PTRACE_DETACH needs a stopped tracee; it hands the held
		 * signal back and lets the thread run */
		if (!t->stopped && stop_task(l, t))
			continue;
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)(l->execed ? 0 : t->sig));
	}
	if (l->memfd >= 0)
		close(l->memfd);
	free(l->t);
	free(l);
}

int argus_live__pcs(struct argus_live *l, pid_t *tids, uint64_t *pc, uint64_t *sp, size_t cap,
		    size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct user_regs_struct r;

		if (l->t[i].gone || !l->t[i].stopped)
			continue;
		if (*n == cap)
			return -E2BIG;
		if (ptrace(PTRACE_GETREGS, l->t[i].tid, 0, &r))
			return -errno;
		tids[*n] = l->t[i].tid;
		pc[*n] = r.rip;
		sp[*n] = r.rsp;
		(*n)++;
	}
	return 0;
}

int argus_live__read(struct argus_live *l, uint64_t addr, void *buf, size_t len)
{
	ssize_t r = pread(l->memfd, buf, len, (off_t)addr);

	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

int argus_live__write(struct argus_live *l, uint64_t addr, const void *buf, size_t len)
{
	ssize_t r;
	int err = live_same(l, 0, NULL, NULL);

	if (err)
		return err;
	r = pwrite(l->memfd, buf, len, (off_t)addr);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

/* the x86 XSAVE area: 4 KiB covers AVX-512 (2.7 KiB) */
#define XSTATE_MAX 4096

/* After the restore: did an exec slip in between live_same() and
 * SETREGS (see the top)?  0, or -ENOEXEC with why; the new image is
 * killed when it may hold the registers we wrote. */
static int restored_where(struct argus_live *l, pid_t tid, const struct user_regs_struct *saved,
			  char *why)
{
	struct user_regs_struct now;

	if (!l->execed && !mm_gone(l))
		return 0;
	set_execed(l, why);
	if (tid == l->pid && !ptrace(PTRACE_GETREGS, tid, 0, &now) && now.rip == saved->rip &&
	    now.rsp == saved->rsp) {
		kill(l->pid, SIGKILL);
		WHY("the target (process %d) execed during the register restore and may hold the"
		    " old image's registers: killed before it ran", (int)l->pid);
	}
	return -ENOEXEC;
}

int argus_live__call(struct argus_live *l, pid_t tid, const struct argus_live_call *c,
		     uint64_t *ret, char *why)
{
	struct live_task *t = find_task(l, tid);
	struct user_regs_struct saved, r;
	static _Alignas(64) uint8_t xs[XSTATE_MAX];
	struct iovec xiov = { xs, sizeof(xs) };
	uint64_t sp, data_at = 0, zero = 0;
	uint32_t ms = c->timeout_ms ? c->timeout_ms : 5000;
	char tcreds[sizeof(l->id.creds)];
	int64_t deadline;
	bool have_xs;
	int err, st, held;

	if (!t || !t->stopped || t->gone)
		return -ESRCH;
	if (c->data_len > 4096)
		return -E2BIG;
	/* the image we opened, and this thread's credentials for the end */
	if ((err = live_same(l, 0, NULL, why)))
		return err;
	if ((err = read_creds(l->pid, tid, tcreds, sizeof(tcreds)))) {
		WHY("cannot read the credentials of thread %d: %s", (int)tid, strerror(-err));
		return err;
	}
	held = t->sig;
	if (ptrace(PTRACE_GETREGS, tid, 0, &saved))
		return -errno;
	have_xs = !ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xiov);

	sp = saved.rsp - 128;	/* the red zone stays untouched */
	if (c->data_len) {
		sp = (sp - c->data_len) & ~15ull;
		data_at = sp;
		err = argus_live__write(l, data_at, c->data, c->data_len);
		if (err) {
			WHY("cannot write the call's data on thread %d's stack: %s", (int)tid,
			    strerror(-err));
			return err;
		}
	}
	sp = (sp & ~15ull) - 8;	/* at entry (rsp + 8) % 16 == 0, as after a call */
	err = argus_live__write(l, sp, &zero, sizeof(zero));
	if (err) {
		WHY("cannot write on thread %d's stack: %s", (int)tid, strerror(-err));
		return err;
	}

	r = saved;
	r.rip = c->fn;
	r.rsp = sp;
	r.rdi = c->args[0];
	r.rsi = c->args[1];
	r.rdx = c->args[2];
	r.rcx = c->args[3];
	r.r8 = c->args[4];
	r.r9 = c->args[5];
	if (c->data_arg >= 0 && c->data_arg < 6) {
		unsigned long long *a[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };

		*a[c->data_arg] = data_at;
	}
	r.rax = 0;		/* no vector registers for a variadic callee */
	r.orig_rax = (uint64_t)-1;	/* no syscall restart: see the top */
	r.eflags &= ~0x400ull;	/* DF clear, as the ABI promises a callee */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r))
		return -errno;
	if (ptrace(PTRACE_CONT, tid, 0, 0)) {
		err = -errno;
		goto restore;
	}
	t->stopped = false;

	deadline = now_ms() + ms;
	for (;;) {
		int64_t left = deadline - now_ms();

		err = left > 0 ? wait_tid(tid, (uint32_t)left, &st) : -ETIMEDOUT;
		if (err == -ESRCH) {
			t->gone = true;
			/* a thread other than the leader that execs loses its
			 * tid (it takes the leader's); another thread's exec
			 * kills it: either way no thread of ours is left */
			if (mm_gone(l) && !kill(l->pid, 0)) {
				set_execed(l, why);
				return -ENOEXEC;
			}
			WHY("thread %d died during the call", (int)tid);
			return err;
		}
		if (err == -ETIMEDOUT) {
			WHY("the call on thread %d did not return in %u ms (a lock held by a stopped thread?)",
			    (int)tid, ms);
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0 && wait_stopped(l, t) == 0) {
				struct user_regs_struct e;

				/* the call returned just as time ran out: that
				 * SIGSEGV at pc 0 is ours, never the thread's */
				if (!l->execed && t->sig == SIGSEGV &&
				    !ptrace(PTRACE_GETREGS, tid, 0, &e) && !e.rip) {
					t->sig = held;
					*ret = e.rax;
					err = 0;
				}
				goto restore;
			}
			return err;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (exec_stop(st)) {
			/* the process execed (this thread, or another one under
			 * this, the leader's, tid): the registers we saved are
			 * the old image's and must never reach the new one */
			t->stopped = true;
			set_execed(l, why);
			return -ENOEXEC;
		}
		if ((st >> 16) != 0 || WSTOPSIG(st) == SIGTRAP) {
			/* a group-stop or a spurious trap: carry on */
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		if (WSTOPSIG(st) == SIGSEGV) {
			struct user_regs_struct e;

			t->stopped = true;
			if (ptrace(PTRACE_GETREGS, tid, 0, &e)) {
				err = -errno;
				goto restore;
			}
			if (e.rip == 0) {
				*ret = e.rax;
				err = 0;
			} else {
				WHY("the call crashed (SIGSEGV at pc %#llx)", (unsigned long long)e.rip);
				err = -EFAULT;
			}
			goto restore;
		}
		/* any other signal: held for the thread's resume (one only: a
		 * signal the thread was stopped with before the call wins) */
		if (!t->sig)
			t->sig = WSTOPSIG(st);
		ptrace(PTRACE_CONT, tid, 0, 0);
	}

restore:
	t->stopped = true;
	{
		/* the image, the process's and the thread's credentials: as
		 * at the start, or nothing is written back */
		int e = live_same(l, tid, tcreds, why);

		if (e)
			return e;
	}
	if (ptrace(PTRACE_SETREGS, tid, 0, &saved) && !err)
		err = -errno;
	if (have_xs) {
		xiov.iov_base = xs;
		if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xiov) && !err)
			err = -errno;
	}
	{
		int e = restored_where(l, tid, &saved, why);

		if (e)
			return e;
	}
	return err;
}

int argus_live__trusted_code(pid_t pid, uint64_t addr, char *why)
{
	struct argus_live_map *m;
	char p[128];
	struct stat st;
	size_t n;
	int err = argus_live__maps(pid, &m, &n);

	if (err) {
		WHY("cannot read the maps of process %d: %s", (int)pid, strerror(-err));
		return err;
	}
	err = -EPERM;
	WHY("%#llx is not in a mapped file of process %d", (unsigned long long)addr, (int)pid);
	for (size_t i = 0; i < n; i++) {
		if (addr < m[i].start || addr >= m[i].end)
			continue;
		if (!m[i].path[0] || m[i].path[0] != '/')
			break;
		/* the inode mapped, whatever its path says now (stat of the
		 * magic link: nothing is opened) */
		snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m[i].start, (unsigned long long)m[i].end);
		if (stat(p, &st)) {
			err = errno == ENOENT ? -ESRCH : -errno;
			WHY("cannot stat %s: %s", p, strerror(-err));
		} else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
			WHY("the %s mapped at %#llx in process %d is owned by uid %u (mode %o), not"
			    " root-only: a user's file, not the system's (refused)", m[i].path,
			    (unsigned long long)m[i].start, (int)pid, (unsigned)st.st_uid,
			    (unsigned)(st.st_mode & 07777));
		} else {
			err = 0;
		}
		break;
	}
	free(m);
	return err;
}
