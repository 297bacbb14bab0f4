/* wake_watch.h - for a thread stopped by a debugger in the middle of a
 * wait (lldb holds it: the wait cannot return), whether the event that
 * would have woken it has come, read from the running system
 * (`argus diagnose --until-end`, until_end.h).
 *
 * What the thread waits on comes from the trace (the wait's syscall, its
 * argument and its object: argus_segment.wait_nr, wait_arg, wait_obj);
 * the watch then looks at the live system:
 *   flock/fcntl on a file   /proc/locks (diag_front_proc_lock_holders): no
 *                           process but the waiter holds a lock on it (an
 *                           OFD lock, or one whose taker has exited, needs
 *                           a scan of every process's fdinfo: at most every
 *                           250 ms)
 *   read/recv/accept, write/send/connect on an fd (a pipe, a socket), and
 *   epoll_wait              a copy of the waiter's fd (pidfd_getfd), polled
 *                           for POLLIN (POLLOUT for a write; the epoll fd
 *                           is readable when one of its fds is ready)
 *   poll/ppoll              the same for each fd of its pollfd array (read
 *                           from the process's memory; the array's address
 *                           from /proc/PID/task/TID/syscall)
 *   futex                   the futex word (/proc/PID/mem) no longer the
 *                           value FUTEX_WAIT was called with (a restarted
 *                           wait would return at once): an unlock, a post,
 *                           a signal changes it before its FUTEX_WAKE
 *   nanosleep, relative clock_nanosleep
 *                           its timer due (the wait's start + its timeout)
 * Other waits (select, wait4, a stop while running) have no watch.
 * Needs root (pidfd_getfd, /proc/PID/mem of another user's process). */
#ifndef ARGUS_WAKE_WATCH_H
#define ARGUS_WAKE_WATCH_H
#include <stddef.h>
#include <stdint.h>

struct wake_watch;

struct wake_watch_wait {
	uint32_t pid, tid;
	int32_t wait_nr;                /* the syscall it waits in */
	uint64_t wait_start;            /* CLOCK_MONOTONIC ns of its switch-out */
	uint64_t wait_arg;              /* argus_segment.wait_arg */
	uint32_t obj_kind;              /* argus_object of its wait_obj; 0 none */
	uint64_t obj, peer;
};

/* A watch for that wait: NULL when there is none for it or it could not
 * be set up; what (len bytes) says what is watched, or why nothing is. */
struct wake_watch *wake_watch__new(const struct wake_watch_wait *w, char *what, size_t len);
/* 1: the event has come (event says which), 0: not yet. */
int wake_watch__check(struct wake_watch *w, char *event, size_t len);
/* The processes that held the lock when the watch began (a lock watch;
 * else 0): who released it, when the trace has no record of it. */
uint32_t wake_watch__lock_holders(const struct wake_watch *w, uint32_t *pids, uint32_t max);
void wake_watch__free(struct wake_watch *w);
#endif
