/* hw_watch.h - hardware write watchpoints into the collector's trace
 * (`argus watch`, docs/collector.md "Data-flag watchpoints").
 *
 * A watch is one address range (1, 2, 4 or 8 bytes, aligned to its
 * length) in one process.  It is armed as one perf breakpoint event
 * (PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_W) per thread of the process, each
 * linked to the BPF program on_watch (kernel-patch/argus.bpf.c), which
 * writes an AE_HWWATCH record into the collector's ring on every write.
 * The program finds the watch (its id and length) by (tgid, address) in
 * the hw_watches map, which this file keeps in step with the watches.
 *
 * Threads created later are covered by the kernel: the events are opened
 * with inherit + inherit_thread, so a thread cloned by a watched thread
 * gets its own copy, with the BPF program, at clone time, before it can
 * run a single instruction.  Watching the collector's fork records
 * instead would arm a new thread only once the record is drained (tens
 * of ms later), and miss the writes it makes first.
 *
 * Owned by argusd; single-threaded like the collector.  Library rules:
 * 0/-errno, never prints; errors that a user must read come back as one
 * line in err.
 */
#ifndef ARGUS_HW_WATCH_H
#define ARGUS_HW_WATCH_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct argus_hw_watch;

/* One armed watch, for listing. */
struct argus_hw_watch_info {
	uint32_t id;            /* >= 1, never reused while argusd runs */
	uint32_t pid;
	uint64_t addr;
	uint32_t len;
	uint32_t reader;        /* tid named as the flag's reader (--reader),
	                           0 none; stamped into every AE_HWWATCH */
	uint32_t threads;       /* threads armed by us (inherited copies not
	                           counted) */
	uint64_t hits;          /* AE_HWWATCH records seen for this watch */
	uint64_t armed_ns;      /* CLOCK_MONOTONIC when armed */
};

/* prog_fd, map_fd: argus_probe__watch_prog_fd(), __watch_map_fd().
 * NULL on out of memory. */
struct argus_hw_watch *argus_hw_watch__new(int prog_fd, int map_fd);
void argus_hw_watch__free(struct argus_hw_watch *w);

/* Arm a write watch on every thread of pid.  reader: the tid of pid's
 * thread that spins on the flag (the user knows it: `argus flag` stepped
 * it), 0 none; every write's record carries it, so the graph takes that
 * thread as the waiter whatever its syscalls (a pure busy spin makes
 * none).  0 and *id, or -errno with one line in err: -EINVAL (length not
 * 1/2/4/8, address not aligned or 0, pid is a thread and not a process,
 * reader is not a thread of pid), -ESRCH (no such process),
 * -ENOSPC (a thread has no debug register left: x86 has 4 per thread),
 * -EEXIST (that address of pid is already watched), or what
 * perf_event_open / the BPF link said.  All or nothing: on failure no
 * thread keeps an event of this watch. */
int argus_hw_watch__add(struct argus_hw_watch *w, uint32_t pid, uint64_t addr,
			uint32_t len, uint32_t reader, uint32_t *id, char *err, size_t errlen);
/* Disarm watch id: 0 or -ENOENT. */
int argus_hw_watch__remove(struct argus_hw_watch *w, uint32_t id);
/* Disarm every watch of pid; returns how many (0 = none). */
int argus_hw_watch__remove_pid(struct argus_hw_watch *w, uint32_t pid);

/* The collector's tap (raw argus_events.h records, drain order): counts
 * hits, and disarms the watches of a process that exits or execs (its
 * memory, and so the watched address, is gone). */
void argus_hw_watch__record(struct argus_hw_watch *w, const void *rec, size_t size);

uint32_t argus_hw_watch__count(const struct argus_hw_watch *w);
uint64_t argus_hw_watch__hits(const struct argus_hw_watch *w);
/* The i-th armed watch (0 <= i < __count), ordered by id: 0 or -ENOENT. */
int argus_hw_watch__get(const struct argus_hw_watch *w, uint32_t i,
			struct argus_hw_watch_info *info);

/* argusd's control request "watch ARGS" (the text after "watch "):
 *   add PID ADDR LEN [READER] -> "id=N", "threads=N"
 *   list               -> one "watch id=.. pid=.. addr=0x.. len=.. threads=..
 *                         hits=.. armed_ns=.. reader=.." line per watch
 *   remove ID | remove-pid PID | remove-all -> "removed=N"
 * Writes the answer (or one "error: ..." line) to out; 0 or -errno. */
int argus_hw_watch__request(struct argus_hw_watch *w, const char *args, FILE *out);
#endif
