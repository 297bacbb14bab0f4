/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_helper.h - DWARF unwinding of other users' files outside root.
 *
 * argusd (root) must read the ELF and CFI of every process's files to
 * unwind their stacks, and any user chooses those bytes.  libelf/libdw are
 * large C parsers: a bug in them on a hostile file must not crash, hang
 * or take over root's always-on daemon.  So the parsing runs in a helper
 * process (the "unwind helper"), forked by the collector at start and
 * exec'd as a fresh image of the same binary (/proc/self/exe; the
 * constructor in unwind_helper.c takes over before main):
 *
 *   argusd (root)                          helper (nobody, sandboxed)
 *   -------------                          --------------------------
 *   reads /proc/PID/maps, opens each file
 *   with argus_open_untrusted() (checks
 *   dev/inode, regular file, no tty)
 *   client memo (unwind_memo.h): a hit
 *   answers with no round trip
 *   UNWIND layout,regs,stack copy  ---->   its Dwfl session for the layout
 *                                  <----   NEED_LAYOUT (it has none)
 *   LAYOUT maps                    ---->
 *                                  <----   NEED_FILES idx[] (not cached)
 *   FILES fds (SCM_RIGHTS)         ---->   elf_guard check, libelf, libdwfl
 *                                  <----   LAYOUT_OK
 *   UNWIND again                   ---->   unwinds over the copy
 *                                  <----   FRAMES ips[], words read
 *
 * The helper, before it reads any request: setgroups(0), setresgid and
 * setresuid to the user "argus-unwind" if it exists, else "nobody"
 * (looked up by argusd before the fork), PR_SET_NO_NEW_PRIVS,
 * PR_SET_DUMPABLE 0 (no ptrace, no core), RLIMIT_AS 1 GiB, RLIMIT_CPU,
 * RLIMIT_NOFILE, RLIMIT_FSIZE 0, RLIMIT_NPROC 0, RLIMIT_CORE 0, then a
 * seccomp filter that allows read/write/recvmsg/sendmsg on its socket
 * only, pread64/lseek, close, fstat, fcntl F_GETFD/F_GETFL,
 * non-executable mmap/mprotect, munmap/mremap/brk/madvise, clock_gettime,
 * getrandom, sysinfo and exit; open/openat/readlink/readlinkat fail with
 * EACCES; anything else kills it (the audit log, dmesg, names the call).
 * It opens nothing: the fds come from argusd, already checked (so it
 * does not look for separate debug files in /usr/lib/debug either: files
 * without .eh_frame are rare).
 *
 * The same helper serves root's CLI symbolizer (symbolize.h, sandbox
 * mode) with the UWP_SYM_* messages: files as fds by id (the CLI found
 * their debug files), then lookups.
 *
 * Everything it answers is untrusted: sizes and counts are checked,
 * frames bounded, and the words it says the frames depend on are checked
 * against the stack copy before the memo keeps them.
 *
 * Failure: every request has a deadline (ARGUS_UNWIND_HELPER_TIMEOUT_MS);
 * argusd's socket is non-blocking and polled, so the drain never waits
 * longer.  A helper that times out, dies, exceeds a limit or answers
 * nonsense is killed (SIGKILL) and reaped, the restart counted, and the
 * request falls back to the frame-pointer frames.  It is started again
 * at the next request, after a backoff that doubles with each failure in
 * a row (from 100 ms to 10 s), and a layout whose request killed it is not
 * sent again for 30 s.
 *
 * Conventions (libbpf style): 0 / -errno, free accepts NULL, never prints.
 * Not thread-safe.
 */
#ifndef ARGUS_UNWIND_HELPER_H
#define ARGUS_UNWIND_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc_maps.h"

#define ARGUS_UNWIND_HELPER_TIMEOUT_MS 250
#define ARGUS_UNWIND_HELPER_AS_MAX (1ull << 30)   /* RLIMIT_AS, bytes */
#define ARGUS_UNWIND_HELPER_CPU_S 3600            /* RLIMIT_CPU, seconds:
							a restart per CPU-hour */

struct argus_unwind_client;

/*
 * Fork the helper now (it is forked again on demand after it failed).
 * NULL with errno set when the socketpair or the fork fails.
 */
struct argus_unwind_client *argus_unwind_client__new(void);
void argus_unwind_client__free(struct argus_unwind_client *c);

/*
 * As argus_unwinder__unwind() (unwind.h), through the helper: the number
 * of frames written to ips (>= 1), or -errno: -EAGAIN when no helper is
 * running now (backoff after a failure), -ETIMEDOUT / -EPIPE / -EPROTO
 * when the helper failed on this request (it was killed and counted), or
 * -EINVAL.  On error the caller keeps its frame-pointer stack.
 */
int argus_unwind_client__unwind(struct argus_unwind_client *c, uint32_t pid,
				const struct argus_proc_map *maps, size_t nmaps,
				uint64_t ip, uint64_t sp, uint64_t bp,
				const uint8_t *copy, size_t copy_len,
				uint64_t *ips, int max);

/*
 * Another kind of request, for the symbolizer (symbolize.c's sandbox
 * mode, unwind_wire.h's UWP_SYM_*): send type with body and fds (they
 * stay the caller's), and wait up to timeout_ms for one answer of type
 * want whose body is exactly ans_len bytes, copied to ans.  0, -EAGAIN
 * (no helper now: backoff), or -ETIMEDOUT / -EPIPE / -EPROTO when the
 * helper failed on it (killed and counted, as for an unwind).  What ans
 * says is untrusted: the caller checks it.
 */
int argus_unwind_client__call(struct argus_unwind_client *c, uint32_t type,
			      const void *body, size_t len, const int *fds,
			      size_t nfds, uint32_t want, void *ans,
			      size_t ans_len, unsigned timeout_ms);

/* Start a new helper at once after a failure, with no backoff: for a
 * CLI run (the symbolizer), where a failure costs one fork and exec, and
 * waiting would only leave the next files unsymbolized. */
void argus_unwind_client__no_backoff(struct argus_unwind_client *c);

/* A chunk was cut: with its next request, the helper closes its cached
 * files that were deleted (as argus_unwinder__drop_deleted()). */
void argus_unwind_client__chunk_cut(struct argus_unwind_client *c);

struct argus_unwind_client_stats {
	uint64_t unwinds;       /* answered by the helper */
	uint64_t memo_hits;     /* answered by the client's memo */
	uint64_t restarts;      /* helpers killed after a failure */
	uint64_t timeouts;      /* of those, requests past their deadline */
	uint64_t fds_sent;      /* files handed to the helper */
	uint64_t wait_ns;       /* unwind requests' wall time, from the request
	                           to the answer or the failure: the drain's
	                           wait for the helper */
	uint64_t wait_max_ns;   /* the longest of them */
	pid_t pid;              /* the helper's pid now, 0 if none */
};
void argus_unwind_client__stats(const struct argus_unwind_client *c,
				struct argus_unwind_client_stats *st);
/* The running helper's pid (0: none). */
uint32_t argus_unwind_client__pid(const struct argus_unwind_client *c);
/* pid is the running helper's or one of the last few dropped (their last
 * records may still be queued): cheap enough for every record. */
bool argus_unwind_client__is_helper(const struct argus_unwind_client *c,
				    uint32_t pid);
/* CPU time of the helpers, the running one and those reaped: part of the
 * collector's own cost. */
double argus_unwind_client__cpu_seconds(const struct argus_unwind_client *c);

/* The helper's side: runs the request loop on fd sock, never returns.
 * Called in the forked child; exposed for the fuzz target's and tests'
 * sake only through the client. */
void argus_unwind_helper__main(int sock, uid_t uid, gid_t gid) __attribute__((noreturn));

#endif /* ARGUS_UNWIND_HELPER_H */
