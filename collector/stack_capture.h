/* stack_capture.h - turns a raw user-stack tail (struct ae_ustack) into
 * return addresses, and remembers the executable mappings of the processes
 * whose stacks were captured, so a chunk can carry them for offline
 * symbolization after the process is gone.
 *
 * Frame-pointer ips from BPF are used as they are when they look complete;
 * when a stack copy is present and the frame-pointer walk stopped early
 * (Debian builds without frame pointers), the stack is unwound again with
 * DWARF CFI through libdw (unwind.h).  /proc/PID/maps is read once per
 * process and re-read when an ip falls outside every known mapping. */
#ifndef ARGUS_STACK_CAPTURE_H
#define ARGUS_STACK_CAPTURE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "argus_events.h"
#include "trace_format.h"

struct stack_capture;

struct stack_capture *stack_capture__new(bool unwind);
void stack_capture__free(struct stack_capture *sc);
/* us points at the tail inside a record of `avail` bytes (untrusted sizes
 * are checked).  Writes up to max ips into out; returns how many. */
int stack_capture__resolve(struct stack_capture *sc, uint32_t pid, uint64_t ts,
			   const struct ae_ustack *us, size_t avail,
			   uint64_t *out, int max);
/* The process exec'd or exited: its mappings must be read again.  The old
 * ones stay listed by stack_capture__maps() for the next chunk cuts, for
 * the process's events not yet in a chunk. */
void stack_capture__forget(struct stack_capture *sc, uint32_t pid);
/* A chunk was cut: retired mappings age, and go after a few cuts. */
void stack_capture__chunk_cut(struct stack_capture *sc);
/* Process child was forked from parent at trace time ts: it starts with
 * the parent's mappings, so at its first stack it takes a copy of what is
 * known of them instead of reading /proc/CHILD/maps (a server forking a
 * worker per request paid a maps read per worker).  Only then: most
 * children exec first, and their copy would be thrown away.  A stack
 * outside the copy triggers a read as usual.  The copy is dated ts, not
 * the parent's read: a reader takes, for an event, the newest maps of its
 * pid dated at or before it, and an older date could lose to the maps of
 * a dead process that had the same pid.  (The re-read throttle still
 * counts from the parent's read.) */
void stack_capture__inherit(struct stack_capture *sc, uint32_t parent,
			    uint32_t child, uint64_t ts);
/* Call fn for each mapping of pid known to the capture, retired ones
 * (with their older read time) first. */
typedef void (*stack_capture_map_fn)(void *ctx, uint32_t pid, uint64_t ts,
				     uint64_t start, uint64_t end, uint64_t pgoff,
				     const char *path, const uint8_t *build_id,
				     size_t build_id_len);
void stack_capture__maps(struct stack_capture *sc, uint32_t pid,
			 stack_capture_map_fn fn, void *ctx);
uint64_t stack_capture__unwound(const struct stack_capture *sc);
/* Unwinds answered from the unwinder's memo (unwind_memo.h). */
uint64_t stack_capture__memo_hits(const struct stack_capture *sc);
/* The unwind helper (unwind_helper.h): helpers killed and restarted, the
 * pid of the one running now (0: none, or unwinding in-process), and how
 * long the drain waited for its answers, in all and at most (ns). */
void stack_capture__helper(const struct stack_capture *sc, uint64_t *restarts,
			   int *pid, uint64_t *wait_ns, uint64_t *wait_max_ns);
/* pid is an unwind helper's (running, or just dropped): the collector
 * does not trace it. */
bool stack_capture__is_helper(const struct stack_capture *sc, uint32_t pid);
/* CPU seconds the helper processes used (unwind_helper.h). */
double stack_capture__helper_cpu(const struct stack_capture *sc);
#endif
