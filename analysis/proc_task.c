/* proc_task.c - a process's children and a thread's stop, on the running
 * system: for a wait still open at a live snapshot (`diagnose --live`,
 * the lldb plugin).
 *
 *   - children: a thread blocked in wait4/waitid waits for a child of its
 *     process to exit.  /proc/PID/task/TID/children lists the children
 *     each thread forked (CONFIG_PROC_CHILDREN); a child is any thread's,
 *     so every task of the process is read.  Without those files, every
 *     /proc/N/stat whose ppid is the process.  Zombies are left out: a
 *     wait4 does not block on a child that has exited;
 *   - stop: /proc/PID/task/TID/stat's state, after the comm (which may
 *     hold spaces and parentheses: the fields after its last ')'): T is
 *     stopped by a signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), t a
 *     ptrace stop; /proc/PID/task/TID/status's TracerPid names the
 *     tracer;
 *   - a thread's call: /proc/PID/task/TID/syscall, the call it is blocked
 *     in (or, stopped by a tracer inside one, the call to be restarted)
 *     and its six arguments, "running" when it runs;
 *   - ours: the debugger the caller runs in (the lldb plugin runs the
 *     diagnosis inside lldb, whose lldb-server traces the program) is the
 *     user's own, never a culprit: this process, its ancestors and its
 *     descendants.
 * A pid read here may have been reused since the trace was saved: the
 * trace must be fresh (DIAG_LIVE_MAX_AGE_NS).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag_front.h"

int diag_front_parse_stat(const char *buf, char *state, long *ppid, long *pgrp)
{
	const char *p = buf ? strrchr(buf, ')') : NULL;
	char st;
	long pp, pg;

	if (!p || sscanf(p + 1, " %c %ld %ld", &st, &pp, &pg) != 3)
		return -EINVAL;
	if (state)
		*state = st;
	if (ppid)
		*ppid = pp;
	if (pgrp)
		*pgrp = pg;
	return 0;
}

/* /proc/PATH's stat fields; -errno when it cannot be read (gone). */
static int read_stat(const char *path, char *state, long *ppid, long *pgrp)
{
	char buf[1024];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return diag_front_parse_stat(buf, state, ppid, pgrp);
}

int diag_front_task_state(uint32_t pid, uint32_t tid, char *state)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	return read_stat(path, state, NULL, NULL);
}

int diag_front_task_syscall_line(uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	buf[0] = 0;
	if (!(f = fopen(path, "re")))
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		buf[0] = 0;
		rc = -EIO;
	}
	fclose(f);
	return rc;
}

int diag_front_task_syscall(uint32_t pid, uint32_t tid, long *nr, uint64_t args[6])
{
	char line[256];
	int rc = diag_front_task_syscall_line(pid, tid, line, sizeof(line));

	if (rc)
		return rc;
	/* "running", "-1 SP PC" (blocked, not in a call): fewer fields */
	if (sscanf(line, "%ld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
		   nr, &args[0], &args[1], &args[2], &args[3], &args[4], &args[5]) != 7)
		return -ENOENT;
	return 0;
}

static int pid_stat(uint32_t pid, char *state, long *ppid, long *pgrp)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	return read_stat(path, state, ppid, pgrp);
}

/* Is child c (alive, not a zombie) one that wait4(want) waits for, where
 * the waiting process is in process group own_pgrp? */
static bool waited_for(uint32_t c, int64_t want, long own_pgrp)
{
	char st;
	long pgrp;

	if (pid_stat(c, &st, NULL, &pgrp) || st == 'Z' || st == 'X')
		return false;
	if (want == ARGUS_ASK_ANY_CHILD || want == -1)
		return true;
	if (want > 0)
		return (int64_t)c == want;
	return pgrp == (want == 0 ? own_pgrp : -want);
}

/* Without the children files: every process whose parent is pid. */
static uint32_t children_by_ppid(uint32_t pid, int64_t want, long own_pgrp, uint32_t *pids,
				 uint32_t max)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	uint32_t n = 0;

	if (!proc)
		return 0;
	while (n < max && (p = readdir(proc))) {
		char *end;
		unsigned long c = strtoul(p->d_name, &end, 10);
		long ppid;

		if (*end || !c || c > UINT32_MAX || pid_stat((uint32_t)c, NULL, &ppid, NULL) ||
		    ppid != (long)pid)
			continue;
		if (waited_for((uint32_t)c, want, own_pgrp))
			n = diag_front_pid_add(pids, n, max, (uint32_t)c);
	}
	closedir(proc);
	return n;
}

uint32_t diag_front_proc_children(uint32_t pid, int64_t want, uint32_t *pids, uint32_t max)
{
	char path[64];
	struct dirent *t;
	uint32_t n = 0;
	long own_pgrp = -1;
	bool any_file = false;
	DIR *d;

	if (!pid || !max || pid_stat(pid, NULL, NULL, &own_pgrp))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while (n < max && (t = readdir(d))) {
		unsigned long c;
		FILE *f;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/children", pid, t->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		any_file = true;
		while (n < max && fscanf(f, "%lu", &c) == 1)
			if (c && c <= UINT32_MAX && waited_for((uint32_t)c, want, own_pgrp))
				n = diag_front_pid_add(pids, n, max, (uint32_t)c);
		fclose(f);
	}
	closedir(d);
	return any_file ? n : children_by_ppid(pid, want, own_pgrp, pids, max);
}

int diag_front_proc_thread_state(uint32_t pid, uint32_t tid, uint8_t *stop, uint32_t *tracer)
{
	char path[64], line[128], st;
	FILE *f;
	int rc;

	*stop = ARGUS_LIVE_RUNNING;
	*tracer = 0;
	if ((rc = diag_front_task_state(pid, tid, &st)))
		return rc;
	*stop = st == 'T' ? ARGUS_LIVE_STOP_SIGNAL : st == 't' ? ARGUS_LIVE_STOP_PTRACE
		: ARGUS_LIVE_RUNNING;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long tp;

		if (sscanf(line, "TracerPid: %lu", &tp) == 1) {
			*tracer = tp <= UINT32_MAX ? (uint32_t)tp : 0;
			break;
		}
	}
	fclose(f);
	return 0;
}

/* pid's parent, 0 when unknown (gone, or the top) */
static uint32_t parent_of(uint32_t pid)
{
	long ppid;

	return pid_stat(pid, NULL, &ppid, NULL) || ppid <= 0 ? 0 : (uint32_t)ppid;
}

bool diag_front_pid_is_ours(uint32_t pid)
{
	uint32_t self = (uint32_t)getpid(), p;
	int i;

	if (!pid || pid == self)
		return pid != 0;
	for (i = 0, p = (uint32_t)getppid(); i < 32 && p > 1; i++, p = parent_of(p))
		if (p == pid)
			return true;
	for (i = 0, p = parent_of(pid); i < 32 && p > 1; i++, p = parent_of(p))
		if (p == self)
			return true;
	return false;
}
