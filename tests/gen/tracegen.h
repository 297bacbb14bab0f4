/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tracegen.h - write synthetic Argus traces: small exact scenarios for the
 * graph unit tests, and (through tests/gen/argus_gen.c) large realistic
 * traces for benchmarks.
 *
 * A generator wraps one struct argus_chunk_builder and one snapshot
 * struct argus_ring (trace/trace_format.h).  Each helper below adds the
 * record(s) the BPF side would hand over for that kernel event
 * (kernel-patch/argus_events.h), with the fields at their ARGUS_F_*
 * positions, so a reader sees exactly what a real recording would hold.
 *
 * Rules:
 *   - Events must be added in global timestamp order: every event's ts is
 *     >= the ts of the event added before it, on any CPU (else -EINVAL and
 *     nothing is added; the generator stays usable).  Then chunks never
 *     overlap in time and the reader returns the events in the order they
 *     were added, except that events with the *same* ts on different CPUs
 *     come back ordered by cpu (the reader merges streams by (ts, cpu)).
 *   - cpu must be < opts.ncpus and ctx an enum ae_ctx (else -EINVAL).
 *   - A chunk is cut after opts.chunk_events events, when the builder's
 *     raw bytes reach opts.chunk_bytes, on __flush() and on __close().
 *   - Tasks: __task() declares (tid, pid, ppid, comm); __fork() and
 *     __wakeup_new() declare the child, __exec() and __rename() change the
 *     comm.  Every declared task that an event of a chunk references (the
 *     current tid, a switch's next tid, a waking's target, a fork/free
 *     child, an hrtimer's owner_tid) goes into that chunk's task table, with
 *     the comm it has when the chunk is cut, so argus_trace__task() resolves
 *     it once the reader has returned an event of that chunk.  Tids never
 *     declared are written but not registered (like a task the collector
 *     never saw); tid 0 (the idle task) is never registered, and a switch to
 *     it gets the next comm "swapper/CPU", as the kernel reports.
 *   - Error returns are 0 or -errno; the library never prints.  A failure
 *     to write (or to allocate) is sticky: every later call and __close()
 *     return it.  -EINVAL for a bad argument is not sticky.
 *   - Strings: comms are truncated to AE_COMM_LEN - 1 = 15 bytes and exec
 *     filenames to AE_PATH_LEN - 1 = 127, as the kernel records them;
 *     marks are stored whole.
 *
 * What each helper writes (h = the record header: ts, cpu, ctx, tid, pid;
 * "sw(...)" is one AE_SWITCH record; fields named as in argus_events.h):
 *
 *   __task              nothing (declares a task)
 *   __sw                AE_SWITCH ctx TASK, h = prev; next_tid/next_pid,
 *                       prev_state, sys_nr, sys_arg, obj kind/obj/peer;
 *                       str = next comm from the task table; no stack
 *   __sw_stack          the same with stack = ips[0..nips) (prev's user
 *                       stack; a blocking user task has one)
 *   __waking            AE_WAKING ctx as given, h = waker; target tid/pid,
 *                       target_cpu = the CPU the target was last switched
 *                       in on (by a __sw* / __run of this generator; the
 *                       waking's own cpu if never), vector, hrtimer
 *   __sys_enter         AE_SYS_ENTER ctx TASK; nr, args[0..5] (NULL = 0s)
 *   __sys_exit          AE_SYS_EXIT ctx TASK; nr, ret, arg0, obj kind/obj/peer
 *   __hrt_start/_expire/_cancel
 *                       AE_HRT_* with the ctx given; timer, function,
 *                       expires, mode, owner_tid.  (The kernel side fills
 *                       expires and mode for START only: pass 0 otherwise.)
 *                       __hrt_start also remembers timer -> (function,
 *                       owner_tid) for __timer_wake; _expire/_cancel forget it
 *   __irq_entry/_exit   AE_IRQ_ENTRY/EXIT ctx HARDIRQ; vector, ret
 *   __softirq_entry/_exit
 *                       AE_SOFTIRQ_ENTRY/EXIT ctx SOFTIRQ; vector (ret 0)
 *   __wq_start/_end     AE_WQ_START/END ctx TASK; work, function
 *   __fork              AE_FORK ctx TASK, h = parent; child tid/pid,
 *                       clone_flags 0, str = comm; declares the child with
 *                       ppid = parent pid for a new process (child_pid ==
 *                       child_tid), the parent's ppid for a new thread
 *   __wakeup_new        AE_WAKEUP_NEW, the same fields and declaration
 *   __exec              AE_EXEC ctx TASK; old_tid, str = comm, str2 =
 *                       filename; the task's comm becomes `comm`
 *   __exit              AE_EXIT ctx TASK; exit_code, group_dead
 *   __free              AE_FREE ctx as given, h = whoever frees (often an
 *                       RCU callback in softirq); child tid/pid, str = the
 *                       freed task's comm from the task table
 *   __rename            AE_RENAME ctx TASK; str = new comm (declares it)
 *   __sample            AE_SAMPLE ctx HARDIRQ (the sampler runs from the
 *                       perf hrtimer); stack = ips[0..n), interned (ips
 *                       NULL: no stack)
 *   __mark              AE_MARK ctx TASK; str = text
 *   __lost              no event: adds count to the chunk's lost-record
 *                       counter of cpu (CPUS section), as the collector does
 *   __event             one argus_event as given (type, f[], ctx...) with
 *                       its string/stack ids taken from str/str2/ips
 *                       content: the escape hatch for anything else
 *
 * Scenario conveniences (each is exactly the records listed):
 *   __block(tid blocks)  sw(prev = tid/pid, prev_state 1 (TASK_INTERRUPTIBLE),
 *                        sys_nr, sys_arg, obj..., next = 0/0 (idle))
 *   __run(tid runs)      sw(prev = 0/0, prev_state 0, sys_nr -1, sys_arg 0,
 *                        no obj, next = tid/pid)
 *   __preempt            sw(prev = tid/pid, prev_state 0, sys_nr -1, sys_arg
 *                        0, no obj, next = next_tid/next_pid)
 *   __wake               waking(ctx TASK, h = waker, target, vector
 *                        AE_VEC_NONE, hrtimer 0)
 *   __timer_wake         hrt_expire(ctx HARDIRQ, h = cur (whoever the timer
 *                        interrupts, 0 = idle), timer, the function and
 *                        owner_tid remembered from __hrt_start, expires 0,
 *                        mode 0), then waking(ctx HARDIRQ, h = cur, target,
 *                        vector AE_VEC_HRTIMER, hrtimer = timer), both at ts;
 *                        -ENOENT if the timer is not armed
 */
#ifndef ARGUS_TRACEGEN_H
#define ARGUS_TRACEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "argus_events.h"
#include "trace_format.h"

/* Kernel task states for __sw's prev_state. */
#define ARGUS_TG_RUNNING 0x0          /* preempted: still runnable */
#define ARGUS_TG_INTERRUPTIBLE 0x1
#define ARGUS_TG_UNINTERRUPTIBLE 0x2
#define ARGUS_TG_DEAD 0x80            /* a task's final switch */
#define ARGUS_TG_IDLE 0x402           /* TASK_IDLE: kernel threads waiting */

struct argus_tracegen;

struct argus_tracegen_opts {
	size_t sz;              /* sizeof(struct argus_tracegen_opts) */
	uint32_t ncpus;         /* file header ncpus, events need cpu < it;
	                           0 = 4; at most 256 */
	uint32_t chunk_events;  /* cut a chunk after this many; 0 = 200000 */
	uint32_t chunk_bytes;   /* ... or at this many raw bytes; 0 = 4 MiB */
	int zlevel;             /* level 1..9; 0 = 1; -1 = store raw */
	bool zlib;              /* zlib chunks, as files before zstd; else
	                           zstd, what the collector writes */
};

struct argus_tracegen_stats {
	uint64_t events;                 /* events added */
	uint64_t type[AE_TYPE_MAX];      /* by enum ae_type */
	uint64_t chunks;                 /* chunks written */
	uint64_t bytes;                  /* file bytes written so far */
	uint64_t last_ts;                /* ts of the last event */
};

/* Create (truncate) a snapshot trace at path.  NULL on error, with the
 * reason in *err (err may be NULL). */
struct argus_tracegen *argus_tracegen__open(const char *path,
					    const struct argus_tracegen_opts *opts,
					    struct argus_error *err);
/* Write the last chunk, close the file, free g.  Returns 0, or the first
 * error any write (or this final one) hit.  NULL is a no-op returning 0. */
int argus_tracegen__close(struct argus_tracegen *g);
/* Cut the current chunk now (no-op when it is empty). */
int argus_tracegen__flush(struct argus_tracegen *g);
const struct argus_tracegen_stats *argus_tracegen__stats(const struct argus_tracegen *g);

/* Tasks. */
int argus_tracegen__task(struct argus_tracegen *g, uint32_t tid, uint32_t pid,
			 uint32_t ppid, const char *comm);

/* Scheduler. */
int argus_tracegen__sw(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
		       uint32_t prev_tid, uint32_t prev_pid, int64_t prev_state,
		       int32_t sys_nr, uint64_t sys_arg, uint32_t obj_kind,
		       uint64_t obj, uint64_t peer, uint32_t next_tid,
		       uint32_t next_pid);
int argus_tracegen__sw_stack(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t prev_tid, uint32_t prev_pid,
			     int64_t prev_state, int32_t sys_nr, uint64_t sys_arg,
			     uint32_t obj_kind, uint64_t obj, uint64_t peer,
			     uint32_t next_tid, uint32_t next_pid,
			     const uint64_t *ips, uint32_t nips);
int argus_tracegen__waking(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint8_t ctx, uint32_t waker_tid, uint32_t waker_pid,
			   uint32_t target_tid, uint32_t target_pid,
			   uint32_t vector, uint64_t hrtimer);
int argus_tracegen__wakeup_new(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint32_t parent_tid, uint32_t parent_pid,
			       uint32_t child_tid, uint32_t child_pid,
			       const char *comm);
int argus_tracegen__fork(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t parent_tid, uint32_t parent_pid,
			 uint32_t child_tid, uint32_t child_pid, const char *comm);
int argus_tracegen__exec(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, uint32_t old_tid,
			 const char *comm, const char *filename);
int argus_tracegen__exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, int32_t code,
			 uint32_t group_dead);
int argus_tracegen__free(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint8_t ctx, uint32_t tid, uint32_t pid,
			 uint32_t child_tid, uint32_t child_pid);
int argus_tracegen__rename(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, const char *comm);

/* Syscalls.  args may be NULL (all 0). */
int argus_tracegen__sys_enter(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint32_t tid, uint32_t pid, int64_t nr,
			      const uint64_t args[6]);
int argus_tracegen__sys_exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, int64_t nr, int64_t ret,
			     uint64_t arg0, uint32_t obj_kind, uint64_t obj,
			     uint64_t peer);

/* Timers. */
int argus_tracegen__hrt_start(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint8_t ctx, uint32_t tid, uint32_t pid,
			      uint64_t timer, uint64_t function, int64_t expires,
			      uint32_t mode, uint32_t owner_tid);
int argus_tracegen__hrt_expire(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint8_t ctx, uint32_t tid, uint32_t pid,
			       uint64_t timer, uint64_t function, int64_t expires,
			       uint32_t mode, uint32_t owner_tid);
int argus_tracegen__hrt_cancel(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint8_t ctx, uint32_t tid, uint32_t pid,
			       uint64_t timer, uint64_t function, int64_t expires,
			       uint32_t mode, uint32_t owner_tid);

/* Interrupts and kernel work.  tid/pid: the interrupted task. */
int argus_tracegen__irq_entry(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint32_t tid, uint32_t pid, uint32_t vector);
int argus_tracegen__irq_exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, uint32_t vector,
			     int32_t ret);
int argus_tracegen__softirq_entry(struct argus_tracegen *g, uint64_t ts,
				  uint16_t cpu, uint32_t tid, uint32_t pid,
				  uint32_t vector);
int argus_tracegen__softirq_exit(struct argus_tracegen *g, uint64_t ts,
				 uint16_t cpu, uint32_t tid, uint32_t pid,
				 uint32_t vector);
int argus_tracegen__wq_start(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, uint64_t work,
			     uint64_t function);
int argus_tracegen__wq_end(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, uint64_t work,
			   uint64_t function);

/* Stacks, marks, lost records. */
int argus_tracegen__sample(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, const uint64_t *ips,
			   uint32_t n);
int argus_tracegen__mark(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, const char *text);
int argus_tracegen__lost(struct argus_tracegen *g, uint16_t cpu, uint64_t count);

/* Any event: ev->stack/str/str2 are ignored; the ids come from the content
 * given here (NULL / nips 0 = none). */
int argus_tracegen__event(struct argus_tracegen *g, const struct argus_event *ev,
			  const char *str, const char *str2,
			  const uint64_t *ips, uint32_t nips);

/* Scenario conveniences (records listed at the top). */
int argus_tracegen__block(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			  uint32_t tid, uint32_t pid, int32_t sys_nr,
			  uint64_t sys_arg, uint32_t obj_kind, uint64_t obj,
			  uint64_t peer);
int argus_tracegen__run(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			uint32_t tid, uint32_t pid);
int argus_tracegen__preempt(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			    uint32_t tid, uint32_t pid, uint32_t next_tid,
			    uint32_t next_pid);
int argus_tracegen__wake(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t waker_tid, uint32_t waker_pid,
			 uint32_t target_tid, uint32_t target_pid);
int argus_tracegen__timer_wake(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint32_t cur_tid, uint32_t cur_pid, uint64_t timer,
			       uint32_t target_tid, uint32_t target_pid);

#endif /* ARGUS_TRACEGEN_H */
