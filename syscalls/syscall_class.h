/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syscall_class.h - the one table of what a syscall means to Argus.
 *
 * Every layer asks the same questions of a syscall number: is it a
 * poll-family wait, a sleep, a wait for a child, a file lock; does it send
 * or receive bytes through its fd; does it take a timeout, and in which
 * argument; does argusd trace it by default, and its entry too?  The
 * answers live here only, as one X-macro list (ARGUS_SYSCALL_CLASSES),
 * read by:
 *   - the BPF programs (kernel-patch/argus.bpf.c: what a blocked task's
 *     key argument is, which fd names a call's object; they read the
 *     classes from a .rodata word per syscall that the loader fills from
 *     this table, with the run's traced/entry bits, so that one load says
 *     both whether a call is traced and what it is),
 *   - argusd (collector/bpf_probe.c: the default syscall bitmaps;
 *     collector/hang_watch.c through syscalls/hang_rule.h),
 *   - the graph, the diagnosis and the front ends (graphlib/, analysis/).
 * A syscall's class is a bitmask (ARGUS_SC_*); argus_sys_class(nr) looks
 * it up in a const array indexed by nr (also compilable into a BPF
 * program, where it is a .rodata load).
 *
 * Numbers are x86_64's: the BPF side is built with __TARGET_ARCH_x86 only
 * and has no libc headers, and the collector reads orig_ax of x86_64
 * pt_regs.  tests/unit/test_syscall_class.c checks every number against
 * the name table generated from the installed UAPI header
 * (scripts/gen-syscall-names.sh), and the classes' invariants.
 *
 * Single-syscall rules (futex's uaddr as its key, fcntl's lock commands,
 * restart_syscall, wait4's pid vs waitid's id) stay where they are used:
 * they compare one number for its own meaning, not a class.
 *
 * Usable from BPF C (include vmlinux.h first) and from C user space; C++
 * gets the classes and numbers only (the lookup's array designators are
 * C), and asks syscall_names.h's argus_syscall_class_by_name().
 */
#ifndef ARGUS_SYSCALL_CLASS_H
#define ARGUS_SYSCALL_CLASS_H

#ifdef __BPF__
/* vmlinux.h supplies __u32 and bool */
#if !defined(__TARGET_ARCH_x86)
#error "syscall_class.h holds x86_64 syscall numbers"
#endif
#else
#include <linux/types.h>
#include <stdbool.h>
#if !defined(__x86_64__)
#error "syscall_class.h holds x86_64 syscall numbers"
#endif
#endif

/* ---- the classes -------------------------------------------------------- */
/* argusd's default syscall set: traced at exit (and at entry unless
 * ARGUS_SC_EXIT_ONLY); collector/bpf_probe.c says why each is there. */
#define ARGUS_SC_TRACED           (1u << 0)
/* traced, but its entry is not recorded by default (--all-entries does):
 * the exit has all the graph reads (bytes moved, fd, object, result) */
#define ARGUS_SC_EXIT_ONLY        (1u << 1)
/* the poll family: an event loop's wait (the hang model's loop call) */
#define ARGUS_SC_POLL             (1u << 2)
/* the epoll subset of the poll family: always an idle wait */
#define ARGUS_SC_EPOLL            (1u << 3)
/* takes a pollfd array (arg0) and its length (arg1): poll, ppoll */
#define ARGUS_SC_POLLFD           (1u << 4)
/* sleeps for a time it was given */
#define ARGUS_SC_SLEEP            (1u << 5)
/* gives up the CPU and never blocks: sched_yield */
#define ARGUS_SC_YIELD            (1u << 6)
/* waits for a child's exit */
#define ARGUS_SC_CHILD_WAIT       (1u << 7)
/* the futex call: a lock's or a condition's wait and wake (key: uaddr) */
#define ARGUS_SC_FUTEX            (1u << 8)
/* takes or drops a file lock on its fd (arg0): flock, fcntl's lock cmds */
#define ARGUS_SC_FILE_LOCK        (1u << 9)
/* sends bytes through its fd (a request, when on a connection) */
#define ARGUS_SC_SEND             (1u << 10)
/* receives bytes through its fd (a reply, when on a connection) */
#define ARGUS_SC_RECV             (1u << 11)
/* returns a count of messages, not of bytes */
#define ARGUS_SC_MSG_COUNT        (1u << 12)
/* opens a connection (writable when it is made) */
#define ARGUS_SC_CONNECT          (1u << 13)
/* takes a connection (readable when one is queued) */
#define ARGUS_SC_ACCEPT           (1u << 14)
/* arg0 is the fd it waits on or moves data through */
#define ARGUS_SC_FD_ARG0          (1u << 15)
/* returns a new fd: the call's object is the one behind the result */
#define ARGUS_SC_NEW_FD           (1u << 16)
/* writes a pair of new fds to user memory (pipe2: arg0, socketpair: arg3) */
#define ARGUS_SC_FD_PAIR          (1u << 17)
/* sends a signal */
#define ARGUS_SC_SIGNAL           (1u << 18)
/* ends the thread or the process */
#define ARGUS_SC_EXIT             (1u << 19)
/* takes a timeout that the BPF side records as the wait's key argument
 * (ns, ~0 = none) at its switch-out: which argument and its unit are in
 * the entry's ARGUS_SC_TIMEOUT_AT() fields */
#define ARGUS_SC_TIMEOUT          (1u << 20)
/* may take a timeout that the trace does not record */
#define ARGUS_SC_TIMEOUT_UNTRACED (1u << 21)

/* The timeout's argument (0..5) and unit, in bits 24..29 of an entry.
 * Bits 30 and 31 stay free: the BPF loader adds its per-run bits there
 * (argus_events.h AE_SYS_TRACED, AE_SYS_ENTRY). */
#define ARGUS_TMO_TIMESPEC 0u  /* a struct timespec pointer, NULL = none */
#define ARGUS_TMO_TIMEVAL  1u  /* a struct timeval pointer, NULL = none */
#define ARGUS_TMO_MS       2u  /* an int of ms, negative = none */
#define ARGUS_SC_TIMEOUT_AT(arg, unit) \
	(ARGUS_SC_TIMEOUT | (__u32)(arg) << 24 | (__u32)(unit) << 28)
#define ARGUS_SC_TIMEOUT_ARG(cls)  (((cls) >> 24) & 7u)
#define ARGUS_SC_TIMEOUT_UNIT(cls) (((cls) >> 28) & 3u)

/* ---- the table: X(name, x86_64 number, classes) ------------------------ */
#define ARGUS_SYSCALL_CLASSES(X)                                                        \
	X(read, 0, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |            \
		ARGUS_SC_RECV)                                                          \
	X(write, 1, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |           \
		ARGUS_SC_SEND)                                                          \
	X(poll, 7, ARGUS_SC_TRACED | ARGUS_SC_POLL | ARGUS_SC_POLLFD |                  \
		ARGUS_SC_TIMEOUT_AT(2, ARGUS_TMO_MS))                                   \
	X(readv, 19, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |          \
		ARGUS_SC_RECV)                                                          \
	X(writev, 20, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |         \
		ARGUS_SC_SEND)                                                          \
	X(select, 23, ARGUS_SC_TRACED | ARGUS_SC_POLL |                                 \
		ARGUS_SC_TIMEOUT_AT(4, ARGUS_TMO_TIMEVAL))                              \
	X(sched_yield, 24, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_YIELD)       \
	X(nanosleep, 35, ARGUS_SC_TRACED | ARGUS_SC_SLEEP |                             \
		ARGUS_SC_TIMEOUT_AT(0, ARGUS_TMO_TIMESPEC))                             \
	X(connect, 42, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_CONNECT)           \
	X(accept, 43, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_ACCEPT |            \
		ARGUS_SC_NEW_FD)                                                        \
	X(sendto, 44, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |         \
		ARGUS_SC_SEND)                                                          \
	X(recvfrom, 45, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |       \
		ARGUS_SC_RECV)                                                          \
	X(sendmsg, 46, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |        \
		ARGUS_SC_SEND)                                                          \
	X(recvmsg, 47, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |        \
		ARGUS_SC_RECV)                                                          \
	X(socketpair, 53, ARGUS_SC_TRACED | ARGUS_SC_FD_PAIR)                           \
	X(exit, 60, ARGUS_SC_TRACED | ARGUS_SC_EXIT)                                    \
	X(wait4, 61, ARGUS_SC_TRACED | ARGUS_SC_CHILD_WAIT)                             \
	X(kill, 62, ARGUS_SC_TRACED | ARGUS_SC_SIGNAL)                                  \
	X(fcntl, 72, ARGUS_SC_TRACED | ARGUS_SC_FILE_LOCK)                              \
	X(flock, 73, ARGUS_SC_TRACED | ARGUS_SC_FILE_LOCK)                              \
	X(rt_sigtimedwait, 128, ARGUS_SC_TIMEOUT_UNTRACED)                              \
	X(tkill, 200, ARGUS_SC_TRACED | ARGUS_SC_SIGNAL)                                \
	X(futex, 202, ARGUS_SC_TRACED | ARGUS_SC_FUTEX | ARGUS_SC_TIMEOUT_UNTRACED)     \
	X(io_getevents, 208, ARGUS_SC_TIMEOUT_UNTRACED)                                 \
	X(semtimedop, 220, ARGUS_SC_TIMEOUT_UNTRACED)                                   \
	X(clock_nanosleep, 230, ARGUS_SC_TRACED | ARGUS_SC_SLEEP |                      \
		ARGUS_SC_TIMEOUT_AT(2, ARGUS_TMO_TIMESPEC))                             \
	X(exit_group, 231, ARGUS_SC_TRACED | ARGUS_SC_EXIT)                             \
	X(epoll_wait, 232, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_POLL |         \
		ARGUS_SC_EPOLL | ARGUS_SC_TIMEOUT_UNTRACED)                             \
	X(tgkill, 234, ARGUS_SC_TRACED | ARGUS_SC_SIGNAL)                               \
	X(mq_timedreceive, 243, ARGUS_SC_TIMEOUT_UNTRACED)                              \
	X(waitid, 247, ARGUS_SC_TRACED | ARGUS_SC_CHILD_WAIT)                           \
	X(pselect6, 270, ARGUS_SC_TRACED | ARGUS_SC_POLL |                              \
		ARGUS_SC_TIMEOUT_AT(4, ARGUS_TMO_TIMESPEC))                             \
	X(ppoll, 271, ARGUS_SC_TRACED | ARGUS_SC_POLL | ARGUS_SC_POLLFD |               \
		ARGUS_SC_TIMEOUT_AT(2, ARGUS_TMO_TIMESPEC))                             \
	X(epoll_pwait, 281, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_POLL |        \
		ARGUS_SC_EPOLL | ARGUS_SC_TIMEOUT_UNTRACED)                             \
	X(timerfd_create, 283, ARGUS_SC_TRACED | ARGUS_SC_NEW_FD)                       \
	X(timerfd_settime, 286, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0)                     \
	X(accept4, 288, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_ACCEPT |          \
		ARGUS_SC_NEW_FD)                                                        \
	X(eventfd2, 290, ARGUS_SC_TRACED | ARGUS_SC_NEW_FD)                             \
	X(pipe2, 293, ARGUS_SC_TRACED | ARGUS_SC_FD_PAIR)                               \
	X(recvmmsg, 299, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |      \
		ARGUS_SC_RECV | ARGUS_SC_MSG_COUNT | ARGUS_SC_TIMEOUT_UNTRACED)         \
	X(sendmmsg, 307, ARGUS_SC_TRACED | ARGUS_SC_EXIT_ONLY | ARGUS_SC_FD_ARG0 |      \
		ARGUS_SC_SEND | ARGUS_SC_MSG_COUNT)                                     \
	X(epoll_pwait2, 441, ARGUS_SC_TRACED | ARGUS_SC_FD_ARG0 | ARGUS_SC_POLL |       \
		ARGUS_SC_EPOLL | ARGUS_SC_TIMEOUT_UNTRACED)

/* The table's numbers (ARGUS_NR_futex...): for the BPF side, which has
 * no <sys/syscall.h>; user space may use SYS_* alike (the same numbers). */
enum argus_sys_nr {
#define ARGUS_SC_NR_(name, nr, cls) ARGUS_NR_##name = nr,
	ARGUS_SYSCALL_CLASSES(ARGUS_SC_NR_)
#undef ARGUS_SC_NR_
};

#ifndef __cplusplus
/* Numbers the lookup covers: the BPF syscall bitmaps' 512
 * (AE_SYSCALL_WORDS * 64; collector/bpf_probe.c asserts it). */
#define ARGUS_SYS_CLASS_NRS 512

/* nr's classes (ARGUS_SC_* and its timeout fields); 0 for a number out of
 * range (-1: not in a syscall) or in no class. */
static inline __u32 argus_sys_class(long nr)
{
	static const __u32 classes[ARGUS_SYS_CLASS_NRS] = {
#define ARGUS_SC_ROW_(name, nr, cls) [nr] = (cls),
		ARGUS_SYSCALL_CLASSES(ARGUS_SC_ROW_)
#undef ARGUS_SC_ROW_
	};

	return (unsigned long)nr < ARGUS_SYS_CLASS_NRS ? classes[nr] : 0;
}

/* Is nr in any of the classes of mask? */
static inline bool argus_sys_is(long nr, __u32 mask)
{
	return (argus_sys_class(nr) & mask) != 0;
}

static inline bool argus_sys_is_poll(long nr) { return argus_sys_is(nr, ARGUS_SC_POLL); }
static inline bool argus_sys_is_epoll(long nr) { return argus_sys_is(nr, ARGUS_SC_EPOLL); }
static inline bool argus_sys_is_pollfd(long nr) { return argus_sys_is(nr, ARGUS_SC_POLLFD); }
static inline bool argus_sys_is_sleep(long nr) { return argus_sys_is(nr, ARGUS_SC_SLEEP); }
static inline bool argus_sys_is_child_wait(long nr)
{
	return argus_sys_is(nr, ARGUS_SC_CHILD_WAIT);
}
static inline bool argus_sys_is_file_lock(long nr) { return argus_sys_is(nr, ARGUS_SC_FILE_LOCK); }
static inline bool argus_sys_is_send(long nr) { return argus_sys_is(nr, ARGUS_SC_SEND); }
static inline bool argus_sys_is_recv(long nr) { return argus_sys_is(nr, ARGUS_SC_RECV); }
static inline bool argus_sys_is_exit(long nr) { return argus_sys_is(nr, ARGUS_SC_EXIT); }
#endif /* !__cplusplus */
#endif
