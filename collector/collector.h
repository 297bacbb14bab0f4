/* collector.h - the collector core shared by argusd and `argus record`.
 *
 * It drains raw BPF records (bpf_probe.h), turns them into trace events,
 * keeps the task table, unwinds sampled user stacks, holds events back a
 * few milliseconds so every per-CPU stream is written in timestamp order,
 * and cuts chunks into a trace file (trace_format.h).
 *
 * Single-threaded: one caller drives argus_collector__run_once() in a loop.
 */
#ifndef ARGUS_COLLECTOR_H
#define ARGUS_COLLECTOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf_probe.h"
#include "argus_events.h"

struct argus_collector;
struct argus_event;

struct argus_collector_opts {
	size_t sz;               /* sizeof(struct argus_collector_opts) */
	const char *path;        /* trace file to write */
	uint64_t ring_size;      /* ring bytes; 0 = append-only snapshot file */
	uint32_t chunk_ms;       /* cut a chunk at least this often; 0 = 1000 */
	uint32_t chunk_bytes;    /* or when this much raw payload; 0 = 4 MiB */
	int zlevel;              /* zstd level per chunk, 0 = none; -1 = default 1 */
	bool no_unwind;          /* keep frame-pointer stacks only */
	struct argus_probe_opts probe;
	/* Called with every raw record (argus_events.h) as it is drained, in
	 * drain order, before it is queued: argusd's live hang watch.  It runs
	 * on the hot path, so it must cost next to nothing.  NULL = none. */
	void (*tap)(void *ctx, const void *rec, size_t size);
	void *tap_ctx;
	unsigned out_flags;      /* ARGUS_OUT_* for creating path (safe_file.h) */
	/* Called in every run_once() and flush() after the BPF ring is
	 * drained and before the watermark is applied, so that records of
	 * another source drained here (argusd: the interposer rings,
	 * interpose_ring.h) are held back and ordered like BPF records.  It
	 * adds them with argus_collector__user_event().  NULL = none. */
	void (*side_drain)(void *ctx, struct argus_collector *c);
	void *side_ctx;
	/* Called while the BPF ring is drained, before its first record and
	 * then every 256: the side source's records written so far go into
	 * the queues before the BPF records behind them can push the
	 * watermark past them.  A busy CPU's queue emits early (WINDOW, a few
	 * ms of a loaded machine), far sooner than the next side_drain after
	 * the poll (~50 ms): without it most side records would arrive
	 * "late" and be written at their stream's last timestamp, out of
	 * their real order.  Must be cheap (no accept, no liveness checks).
	 * NULL = none. */
	void (*side_peek)(void *ctx, struct argus_collector *c);
};

struct argus_collector_status {
	uint64_t start_ns;       /* CLOCK_MONOTONIC when collection began */
	uint64_t now_ns;
	uint64_t events;         /* events written (or pending) in all */
	uint64_t by_type[AE_TYPE_MAX];
	uint64_t lost;           /* kernel-side drops, all CPUs */
	uint64_t late;           /* events that arrived after their CPU's stream
	                            had moved past them (written with clamped ts) */
	uint64_t dropped;        /* records drained but not kept (out of memory) */
	uint64_t chunks;
	uint64_t bytes;          /* chunk bytes written, headers included */
	uint64_t ring_size;      /* as configured; 0 = unbounded file */
	uint64_t ring_usable;    /* ring_size less what a full disk took away */
	uint64_t ring_fill;      /* bytes of the ring holding live chunks */
	uint64_t oldest_ts;      /* oldest event still in the ring (approx.) */
	uint64_t newest_ts;
	double cpu_seconds;      /* this process's CPU time (and its unwind
	                            helper's) since start_ns (the
	                            BPF load before it is not counted) */
	uint64_t unwound;        /* stacks recovered by DWARF unwinding */
	uint64_t unwind_memo_hits; /* of the unwinds asked for, those answered
	                            by the memo (same place, same stack words) */
	/* what other users' files and processes were refused (elf_guard.h):
	 * process-wide counts since argusd started */
	uint64_t files_skipped;  /* not a regular file, or not the mapped one */
	uint64_t elf_over_budget; /* ELF headers past the byte limits */
	uint64_t unwinds_cut;    /* unwinds stopped by their time budget */
	uint64_t maps_dropped;   /* mappings over the per-process/global caps */
	uint64_t unwind_helper_restarts; /* unwind helpers killed (crash, hang,
				    limit) and started again (unwind_helper.h) */
	int unwind_helper_pid;   /* the running helper, 0 if none */
	uint64_t unwind_wait_ns; /* the drain's wait for the helper's answers */
	uint64_t unwind_wait_max_ns; /* its longest wait for one */
	uint32_t ncpus;
	uint64_t lost_cpu[256];
	uint64_t spilled;        /* records that went to the BPF spill ring (the
	                            first ring was full; none lost by it) */
};

struct argus_collector *argus_collector__new(const struct argus_collector_opts *opts,
					     char *errbuf, size_t errlen);
/* Wait up to timeout_ms for records, process them, cut a chunk when due.
 * Returns 0 or -errno. */
int argus_collector__run_once(struct argus_collector *c, int timeout_ms);
/* Drain and write everything up to now as a chunk (used before save). */
int argus_collector__flush(struct argus_collector *c);
/* Drain everything, detach the BPF programs and write the last chunk;
 * the status counts are final afterwards. */
int argus_collector__finish(struct argus_collector *c);
/* A user annotation at the current time, attributed to the process that
 * asked for it (pid; tid 0 = its main thread) and to its uid (both from
 * SO_PEERCRED: docs/collector.md, "Marks from the desktop"). */
int argus_collector__mark(struct argus_collector *c, uint32_t pid, uint32_t tid,
			  uint32_t uid, const char *text);
/* An event that did not come from BPF (the interposer's records, already
 * validated by the caller): ev->type, ts, tid, pid, cpu, ctx and f[] are
 * taken; it carries no stack and no strings.  A cpu the collector does
 * not have goes to CPU 0's stream.  Returns 0 or -ENOMEM. */
int argus_collector__user_event(struct argus_collector *c,
				const struct argus_event *ev);
/* True when the last run_once() stopped at its drain budget: records
 * older than the call may still wait in the BPF ring. */
bool argus_collector__behind(const struct argus_collector *c);
void argus_collector__status(struct argus_collector *c,
			     struct argus_collector_status *st);
const char *argus_collector__path(const struct argus_collector *c);
/* The loaded probe (NULL after __finish): for hw_watch.c's program fd. */
struct argus_probe *argus_collector__probe(struct argus_collector *c);
/* Flushes, then frees.  Accepts NULL. */
void argus_collector__free(struct argus_collector *c);

/* Process settings for a program whose main job is collecting (argusd,
 * `argus record`), applied to the calling process:
 *  - priority (nice ARGUS_COLLECTOR_NICE): under a flood (160 runnable
 *    threads of hackbench) a nice-0 drainer gets 1/160th of the CPUs, the
 *    BPF ring fills and records are lost; at -20 its weight is that of ~87
 *    nice-0 threads, enough to keep up, and it still sleeps between drains;
 *  - malloc keeps freed memory instead of returning it: every chunk
 *    allocates and frees MiB-sized buffers (the builder's streams, zlib's
 *    state, the output), and with glibc's defaults each was an mmap +
 *    page faults + munmap, ~25% of the collector's CPU on a quiet desktop.
 * Returns 0 or -errno (the priority is not raised without CAP_SYS_NICE). */
#define ARGUS_COLLECTOR_NICE (-20)
int argus_collector_setup_process(void);

/* Monotonic clock in ns, the trace's time base. */
uint64_t argus_now_ns(void);
#endif
