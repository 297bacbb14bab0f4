/* proc_holders.c - the CLI's answers to the diagnosis's live questions
 * (argus_live_fn, argus_holders_fn: graphlib/argus_diag.h), from /proc of
 * the running system.  graphlib reads no /proc; `diagnose --live` (the
 * default on a fresh trace of this system, diag_front_resolve_live) and the
 * lldb plugin pass these.  docs/diagnosis.md "Live holders" lists the
 * sources:
 *
 *   who holds the other end   unix socket, pipe: /proc/PID/fd (here);
 *                             loopback TCP: proc_tcp.c, then /proc/PID/fd;
 *                             a file lock: proc_locks.c (/proc/locks)
 *   the children it waits for proc_task.c (/proc/PID/task/TID/children)
 *   a lock's owner            proc_locks.c (/proc/PID/mem: glibc's mutex
 *                             owner, else a PI futex's)
 *   a thread's stop, tracer   proc_task.c (/proc/PID/task/TID/stat,
 *                             status), the caller's own debugger left out
 *
 * Every answer names its source (argus_live_answer.source), which the
 * report and the JSON show for the entry it named.  A pid read now is
 * trusted to be the one the trace saw: the trace must be fresh.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_events.h"
#include "diag_front.h"

const char *diag_front_fd_link(unsigned obj_kind, uint64_t inode, char *buf, size_t len)
{
	snprintf(buf, len, "%s:[%" PRIu64 "]", obj_kind == AE_OBJ_PIPE ? "pipe" : "socket", inode);
	return buf;
}

int diag_front_fd_of(uint32_t pid, const char *want)
{
	char path[64], link[64];
	struct dirent *f;
	int found = -1;
	DIR *fds;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	if (!(fds = opendir(path)))
		return -1;      /* gone, or a kernel thread */
	while (found < 0 && (f = readdir(fds))) {
		ssize_t len;
		char *end;
		long fd;

		if (f->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/fd/%.16s", pid, f->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		fd = strtol(f->d_name, &end, 10);
		if (!*end && fd >= 0 && fd <= INT32_MAX && !strcmp(link, want))
			found = (int)fd;
	}
	closedir(fds);
	return found;
}

uint32_t diag_front_fd_holders(const char *want, uint32_t *pids, uint32_t max)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	uint32_t n = 0;

	if (!proc)
		return 0;
	while (n < max && (p = readdir(proc))) {
		char *end;
		unsigned long pid = strtoul(p->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (diag_front_fd_of((uint32_t)pid, want) >= 0)
			pids[n++] = (uint32_t)pid;
	}
	closedir(proc);
	return n;
}

uint32_t diag_front_proc_holders(void *ctx, unsigned obj_kind, uint64_t obj, uint32_t *pids,
			       uint32_t max)
{
	char want[DIAG_FD_LINK_LEN];

	if (obj_kind == AE_OBJ_FILE)    /* a file lock's holders */
		return diag_front_proc_lock_holders(ctx, obj, pids, max);
	if (obj_kind != AE_OBJ_UNIX && obj_kind != AE_OBJ_PIPE)
		return 0;
	return diag_front_fd_holders(diag_front_fd_link(obj_kind, obj, want, sizeof(want)), pids, max);
}

/* A field of a growable struct is there when it fits in its sz. */
#define HAS(s, field) ((s)->sz >= offsetof(__typeof__(*(s)), field) + sizeof((s)->field))

static int holders(const struct argus_live_query *q, struct argus_live_answer *a)
{
	char want[DIAG_FD_LINK_LEN];
	bool listener = false;

	switch (q->obj_kind) {
	case AE_OBJ_UNIX: {     /* the trace's peer is the other end's inode */
		uint32_t lst;

		if (q->peer) {
			diag_front_fd_link(AE_OBJ_UNIX, q->peer, want, sizeof(want));
			a->n = diag_front_fd_holders(want, a->pids, ARGUS_LIVE_MAX_PIDS);
			a->source = ARGUS_LIVE_FD_PEER;
			if (a->n)
				return 0;
		}
		/* no peer inode (the trace saw an embryo), or nobody holds it:
		 * a connection still in a listener's queue */
		if (q->obj && q->obj <= UINT32_MAX &&
		    !diag_front_unix_listener((uint32_t)q->obj, &lst)) {
			diag_front_fd_link(AE_OBJ_UNIX, lst, want, sizeof(want));
			a->n = diag_front_fd_holders(want, a->pids, ARGUS_LIVE_MAX_PIDS);
			a->source = ARGUS_LIVE_UNIX_LISTENER;
		}
		return 0;
	}
	case AE_OBJ_PIPE:
		diag_front_fd_link(AE_OBJ_PIPE, q->obj, want, sizeof(want));
		a->n = diag_front_fd_holders(want, a->pids, ARGUS_LIVE_MAX_PIDS);
		a->source = ARGUS_LIVE_FD_PEER;
		return 0;
	case AE_OBJ_FILE:
		a->n = diag_front_proc_lock_holders(NULL, q->obj, a->pids, ARGUS_LIVE_MAX_PIDS);
		a->source = ARGUS_LIVE_LOCKS;
		return 0;
	case AE_OBJ_TCP:
		if (!q->obj || !q->peer)
			return -ENOENT;
		a->n = diag_front_tcp_peer_holders(q->obj, q->peer, a->pids, ARGUS_LIVE_MAX_PIDS,
						 &listener);
		a->source = listener ? ARGUS_LIVE_TCP_LISTENER : ARGUS_LIVE_TCP_PEER;
		return 0;
	}
	return -ENOENT;
}

int diag_front_live(void *ctx, const struct argus_live_query *q, struct argus_live_answer *a)
{
	uint32_t owner = 0;

	(void)ctx;
	if (!q || !a || !HAS(q, arg) || !HAS(a, pids))
		return -EINVAL;
	a->n = 0;
	switch (q->ask) {
	case ARGUS_ASK_HOLDERS:
		return holders(q, a);
	case ARGUS_ASK_CHILDREN:
		a->n = diag_front_proc_children(q->pid, q->arg, a->pids, ARGUS_LIVE_MAX_PIDS);
		a->source = ARGUS_LIVE_CHILDREN;
		return 0;
	case ARGUS_ASK_LOCK_OWNER:
		if (!diag_front_mutex_owner(q->pid, (uint64_t)q->arg, &owner))
			a->source = ARGUS_LIVE_MUTEX_OWNER;
		else if (!diag_front_pi_owner(q->pid, (uint64_t)q->arg, &owner))
			a->source = ARGUS_LIVE_PI_OWNER;
		else
			return -ENOENT;
		a->pids[0] = owner;
		a->n = 1;
		return 0;
	case ARGUS_ASK_THREAD: {
		int rc = diag_front_proc_thread_state(q->pid, q->tid, &a->stop, &a->tracer);

		/* the debugger this runs in (lldb, its lldb-server) is the
		 * user's own: no tracer to blame */
		if (!rc && a->tracer && diag_front_pid_is_ours(a->tracer))
			a->tracer = 0;
		return rc;
	}
	}
	return -EOPNOTSUPP;
}
