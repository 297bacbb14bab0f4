/* wake_watch.c - see wake_watch.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "argus_events.h"
#include "collector.h"
#include "diag_front.h"
#include "syscall_class.h"
#include "wake_watch.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define MAX_FDS 64
#define MAX_HOLDERS 16
/* a lock watch: how often the scan of every process's fdinfo (an OFD lock,
 * a taker gone: diag_front_proc_lock_holders) may run; /proc/locks alone is
 * read at every check */
#define LOCK_SCAN_NS 250000000ull

enum watch_kind { W_LOCK = 1, W_FDS, W_FUTEX, W_TIMER };

struct wake_watch {
	enum watch_kind kind;
	struct wake_watch_wait w;
	/* W_LOCK */
	uint32_t holders[MAX_HOLDERS], nholders;
	uint64_t next_scan;             /* CLOCK_MONOTONIC ns of the next fdinfo scan */
	/* W_FDS: copies of the waiter's fds */
	struct pollfd fds[MAX_FDS];
	uint32_t nfds;
	/* W_FUTEX */
	int mem;                        /* /proc/PID/mem */
	uint32_t expect;                /* the value FUTEX_WAIT waits while it holds */
	/* W_TIMER */
	uint64_t due;
};

/* A copy of fd `fd` of process pid (pidfd_getfd), -errno. */
static int steal_fd(int pidfd, int fd)
{
	int c = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	return c < 0 ? -errno : c;
}

/* fd's inode, 0 when fstat fails */
static uint64_t fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

/* Waits that end when their fd is readable: receives, accepts, epoll
 * waits (the epoll fd); or writable: sends and connects. */
static bool read_call(int nr)
{
	return argus_sys_is(nr, ARGUS_SC_RECV | ARGUS_SC_ACCEPT | ARGUS_SC_EPOLL);
}

static bool write_call(int nr)
{
	return argus_sys_is(nr, ARGUS_SC_SEND | ARGUS_SC_CONNECT);
}

static const char *obj_words(uint32_t kind)
{
	switch (kind) {
	case AE_OBJ_PIPE: return "pipe";
	case AE_OBJ_UNIX: return "unix socket";
	case AE_OBJ_TCP: return "TCP socket";
	case AE_OBJ_UDP: return "UDP socket";
	case AE_OBJ_EVENTFD: return "eventfd";
	case AE_OBJ_TIMERFD: return "timerfd";
	case AE_OBJ_EPOLL: return "epoll fd";
	default: return "fd";
	}
}

/* One fd of the waiter, copied, polled for `events`. */
static int add_fd(struct wake_watch *ww, int pidfd, int fd, short events)
{
	int c;

	if (ww->nfds >= MAX_FDS || fd < 0)
		return -EINVAL;
	if ((c = steal_fd(pidfd, fd)) < 0)
		return c;
	ww->fds[ww->nfds++] = (struct pollfd){ .fd = c, .events = events };
	return 0;
}

/* read/recv/accept/epoll_wait (POLLIN), write/send/connect (POLLOUT) on
 * wait_arg, checked to be the trace's object (a pipe's or a unix socket's
 * inode); else that object's fd, found in /proc/PID/fd. */
static int setup_fd(struct wake_watch *ww, int pidfd, char *what, size_t len)
{
	const struct wake_watch_wait *w = &ww->w;
	short ev = read_call(w->wait_nr) ? POLLIN : POLLOUT;
	bool by_ino = w->obj_kind == AE_OBJ_PIPE || w->obj_kind == AE_OBJ_UNIX ||
		      w->obj_kind == AE_OBJ_SOCK;
	int fd = (int)w->wait_arg, rc;
	char b[32], link[DIAG_FD_LINK_LEN];

	if ((rc = add_fd(ww, pidfd, fd, ev)) == 0 && by_ino && fd_ino(ww->fds[0].fd) != w->obj) {
		close(ww->fds[0].fd);           /* the fd was closed and reused */
		ww->nfds = 0;
		rc = -ESTALE;
	}
	/* else its fd open on the pipe or socket, found in /proc/PID/fd */
	if (rc && by_ino) {
		diag_front_fd_link(w->obj_kind, w->obj, link, sizeof(link));
		if ((fd = diag_front_fd_of(w->pid, link)) >= 0)
			rc = add_fd(ww, pidfd, fd, ev);
	}
	if (rc) {
		snprintf(what, len, "%s: cannot copy its fd %d (%s)",
			 diag_front_sys(w->wait_nr, b, sizeof(b)), (int)w->wait_arg, strerror(-rc));
		return rc;
	}
	if (by_ino)
		snprintf(what, len, "its %s (fd %d, inode %" PRIu64 "), a copy polled for %s",
			 obj_words(w->obj_kind), fd, w->obj, ev == POLLIN ? "reading" : "writing");
	else
		snprintf(what, len, "its %s (fd %d), a copy polled for %s", obj_words(w->obj_kind), fd,
			 ev == POLLIN ? "reading" : "writing");
	return 0;
}

/* poll/ppoll: the pollfd array, from the process's memory. */
static int setup_poll(struct wake_watch *ww, int pidfd, char *what, size_t len)
{
	const struct wake_watch_wait *w = &ww->w;
	struct pollfd p[MAX_FDS];
	uint64_t args[6];
	long nr;
	struct iovec local, remote;
	uint32_t n;
	char b[32];

	if (diag_front_task_syscall(w->pid, w->tid, &nr, args) || nr != w->wait_nr || !args[1]) {
		snprintf(what, len, "%s: its pollfd array is not known (/proc syscall)",
			 diag_front_sys(w->wait_nr, b, sizeof(b)));
		return -ENOENT;
	}
	n = args[1] > MAX_FDS ? MAX_FDS : (uint32_t)args[1];
	local = (struct iovec){ p, n * sizeof(*p) };
	remote = (struct iovec){ (void *)(uintptr_t)args[0], n * sizeof(*p) };
	if (process_vm_readv((pid_t)w->pid, &local, 1, &remote, 1, 0) != (ssize_t)(n * sizeof(*p))) {
		snprintf(what, len, "poll: cannot read its pollfd array (%s)", strerror(errno));
		return -EFAULT;
	}
	for (uint32_t i = 0; i < n; i++)
		if (p[i].fd >= 0)
			add_fd(ww, pidfd, p[i].fd, (short)(p[i].events | POLLIN));
	if (!ww->nfds) {
		snprintf(what, len, "poll: none of its %u fds could be copied", n);
		return -ENOENT;
	}
	snprintf(what, len, "the %u fd%s of its poll, copies polled for their events", ww->nfds,
		 ww->nfds == 1 ? "" : "s");
	return 0;
}

static int read_word(int mem, uint64_t addr, uint32_t *v)
{
	return pread(mem, v, sizeof(*v), (off_t)addr) == (ssize_t)sizeof(*v) ? 0 : -1;
}

static int setup_futex(struct wake_watch *ww, char *what, size_t len)
{
	const struct wake_watch_wait *w = &ww->w;
	char path[64];
	uint64_t args[6];
	long nr;
	uint32_t now;

	snprintf(path, sizeof(path), "/proc/%u/mem", w->pid);
	if ((ww->mem = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    read_word(ww->mem, w->wait_arg, &now)) {
		snprintf(what, len, "futex 0x%" PRIx64 ": cannot read the word (%s)", w->wait_arg,
			 strerror(errno));
		return -EFAULT;
	}
	/* FUTEX_WAIT / FUTEX_WAIT_BITSET (op & 127: 0, 9) sleep while the
	 * word holds their third argument */
	if (!diag_front_task_syscall(w->pid, w->tid, &nr, args) && nr == SYS_futex &&
	    args[0] == w->wait_arg && ((args[1] & 127) == 0 || (args[1] & 127) == 9))
		ww->expect = (uint32_t)args[2];
	else
		ww->expect = now;
	snprintf(what, len, "its futex word at 0x%" PRIx64 " (/proc/PID/mem; it sleeps while the word"
		 " is %u, now %u)", w->wait_arg, ww->expect, now);
	return 0;
}

static int setup_timer(struct wake_watch *ww, char *what, size_t len)
{
	const struct wake_watch_wait *w = &ww->w;
	uint64_t args[6];
	long nr;

	if (!w->wait_arg || w->wait_arg == UINT64_MAX) {
		snprintf(what, len, "a sleep with no timeout");
		return -ENOENT;
	}
	/* one-off: clock_nanosleep(clock, flags, ...): TIMER_ABSTIME (1) is
	 * not a length */
	if (w->wait_nr == SYS_clock_nanosleep &&
	    (diag_front_task_syscall(w->pid, w->tid, &nr, args) || nr != SYS_clock_nanosleep ||
	     (args[1] & 1))) {
		snprintf(what, len, "clock_nanosleep: not a relative sleep");
		return -ENOENT;
	}
	ww->due = w->wait_start + w->wait_arg;
	snprintf(what, len, "its sleep's timer (%.1f ms from the wait's start)", (double)w->wait_arg / 1e6);
	return 0;
}

struct wake_watch *wake_watch__new(const struct wake_watch_wait *w, char *what, size_t len)
{
	struct wake_watch *ww = calloc(1, sizeof(*ww));
	int rc = -ENOENT, pidfd = -1;
	char b[32];

	if (!ww) {
		snprintf(what, len, "out of memory");
		return NULL;
	}
	ww->w = *w;
	ww->mem = -1;
	if (argus_sys_is_file_lock(w->wait_nr) && w->obj_kind == AE_OBJ_FILE) {
		uint32_t pids[MAX_HOLDERS], n = diag_front_proc_lock_holders(NULL, w->obj, pids, MAX_HOLDERS);

		ww->kind = W_LOCK;
		ww->next_scan = argus_now_ns() + LOCK_SCAN_NS;
		for (uint32_t i = 0; i < n && i < MAX_HOLDERS; i++)
			if (pids[i] != w->pid)
				ww->holders[ww->nholders++] = pids[i];
		/* the trace's file: s_dev << 32 ^ inode, s_dev = major << 20 | minor */
		snprintf(what, len, "/proc/locks, for the lock it wants on file %" PRIu64 ":%" PRIu64
			 " inode %" PRIu64 " (%u other holder%s when the watch began)", w->obj >> 52,
			 (w->obj >> 32) & 0xfffff, w->obj & 0xffffffffu, ww->nholders,
			 ww->nholders == 1 ? "" : "s");
		rc = 0;
	} else if (w->wait_nr == SYS_futex) {     /* one-off: its key is the word */
		ww->kind = W_FUTEX;
		rc = setup_futex(ww, what, len);
	} else if (argus_sys_is_sleep(w->wait_nr)) {
		ww->kind = W_TIMER;
		rc = setup_timer(ww, what, len);
	} else if (read_call(w->wait_nr) || write_call(w->wait_nr) || argus_sys_is_pollfd(w->wait_nr)) {
		ww->kind = W_FDS;
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)w->pid, 0);
		if (pidfd < 0) {
			snprintf(what, len, "%s: pidfd_open(%u): %s",
				 diag_front_sys(w->wait_nr, b, sizeof(b)), w->pid, strerror(errno));
			rc = -errno;
		} else if (argus_sys_is_pollfd(w->wait_nr)) {
			rc = setup_poll(ww, pidfd, what, len);
		} else {
			rc = setup_fd(ww, pidfd, what, len);
		}
		if (pidfd >= 0)
			close(pidfd);
	} else {
		snprintf(what, len, "a wait in %s, which argus does not watch while the thread is stopped",
			 w->wait_nr >= 0 ? diag_front_sys(w->wait_nr, b, sizeof(b)) : "no syscall");
	}
	if (rc) {
		wake_watch__free(ww);
		return NULL;
	}
	return ww;
}

int wake_watch__check(struct wake_watch *ww, char *event, size_t len)
{
	const struct wake_watch_wait *w;

	if (!ww)
		return 0;
	w = &ww->w;
	switch (ww->kind) {
	case W_LOCK: {
		uint32_t pids[MAX_HOLDERS], n;
		bool unresolved;
		uint64_t now;

		/* /proc/locks names a live holder, or no lock at all: that
		 * read is the answer */
		n = diag_front_lock_holders_quick(w->obj, pids, MAX_HOLDERS, &unresolved);
		for (uint32_t i = 0; i < n && i < MAX_HOLDERS; i++)
			if (pids[i] != w->pid)
				return 0;
		/* an OFD lock, a taker gone: the holders are in some process's
		 * fdinfo, a scan of every process, at most every LOCK_SCAN_NS */
		if (unresolved) {
			if ((now = argus_now_ns()) < ww->next_scan)
				return 0;
			ww->next_scan = now + LOCK_SCAN_NS;
			n = diag_front_proc_lock_holders(NULL, w->obj, pids, MAX_HOLDERS);
			for (uint32_t i = 0; i < n && i < MAX_HOLDERS; i++)
				if (pids[i] != w->pid)
					return 0;
		}
		snprintf(event, len, "the lock it waits for was released (no other holder in /proc/locks)");
		return 1;
	}
	case W_FDS: {
		int n = poll(ww->fds, ww->nfds, 0);

		if (n <= 0)
			return 0;
		for (uint32_t i = 0; i < ww->nfds; i++) {
			short r = ww->fds[i].revents;

			if (!r)
				continue;
			snprintf(event, len, "its %s became %s", obj_words(argus_sys_is_pollfd(w->wait_nr) ?
				 0 : w->obj_kind),
				 r & (POLLHUP | POLLERR) ? (r & POLLIN ? "readable (data or its other end closed)" :
							  "closed at its other end") :
				 r & POLLIN ? "readable" : "writable");
			return 1;
		}
		return 0;
	}
	case W_FUTEX: {
		uint32_t v;

		if (read_word(ww->mem, w->wait_arg, &v))
			return 0;
		if (v == ww->expect)
			return 0;
		snprintf(event, len, "its futex word at 0x%" PRIx64 " changed (%u -> %u): a wake-up's"
			 " store", w->wait_arg, ww->expect, v);
		return 1;
	}
	case W_TIMER:
		if (argus_now_ns() < ww->due)
			return 0;
		snprintf(event, len, "its sleep's timer came due");
		return 1;
	}
	return 0;
}

uint32_t wake_watch__lock_holders(const struct wake_watch *ww, uint32_t *pids, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; ww && ww->kind == W_LOCK && i < ww->nholders && n < max; i++)
		pids[n++] = ww->holders[i];
	return n;
}

void wake_watch__free(struct wake_watch *ww)
{
	if (!ww)
		return;
	for (uint32_t i = 0; i < ww->nfds; i++)
		close(ww->fds[i].fd);
	if (ww->mem >= 0)
		close(ww->mem);
	free(ww);
}
