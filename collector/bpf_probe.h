/* bpf_probe.h - the BPF programs of kernel-patch/ as seen from user space:
 * check the machine, load, configure, attach, and drain raw records
 * (struct ae_* from argus_events.h).  See bpf_probe.c for the details. */
#ifndef ARGUS_BPF_PROBE_H
#define ARGUS_BPF_PROBE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --wait-stacks: enough stack for the unwinder to get from a blocking
 * syscall's libc wrapper up through a dozen typical frames. */
#define ARGUS_WAIT_STACK_COPY 1024

struct argus_probe;

struct argus_probe_opts {
	size_t sz;                 /* sizeof(struct argus_probe_opts) */
	uint32_t self_tgid;        /* process whose activity is not traced */
	uint32_t sample_hz;        /* CPU sampler rate; 0 = default 49 */
	bool no_sampler;           /* do not attach the CPU sampler */
	bool no_irq;               /* skip irq/softirq/workqueue records */
	uint32_t sample_copy;      /* user-stack copy bytes per sample (<= AE_MAX_STACK_COPY) */
	uint32_t block_copy;       /* user-stack copy bytes per blocking switch-out
	                              (0, the default: frame-pointer stacks only;
	                              --wait-stacks: ARGUS_WAIT_STACK_COPY) */
	uint32_t ringbuf_mb;       /* the ring records go to, MiB, power of 2; 0 = 16 */
	const uint64_t *syscalls;  /* 512-bit bitmap of traced syscall nrs; NULL = default set */
	bool all_entries;          /* record sys_enter for every traced syscall, not only
	                              for those whose exit cannot stand for the call */
	uint32_t spill_mb;         /* the ring they go to when that one is full, MiB,
	                              power of 2; 0 = 64 (argus.bpf.c "the two rings") */
};

/* Called once per raw record; return < 0 to stop draining. */
typedef int (*argus_probe_cb)(void *ctx, const void *rec, size_t size);

/* Checks privileges, BTF and tracefs (mounting it when missing), then
 * loads and attaches everything.  On failure returns NULL and writes one
 * line into errbuf that says what is wrong and how to fix it. */
struct argus_probe *argus_probe__open(const struct argus_probe_opts *opts,
				      char *errbuf, size_t errlen);
/* Consume every record available now. Returns records consumed or -errno. */
int argus_probe__drain(struct argus_probe *p, argus_probe_cb cb, void *ctx);
/* Wait up to timeout_ms for the watermark wake-up, then drain. */
int argus_probe__poll(struct argus_probe *p, int timeout_ms,
		      argus_probe_cb cb, void *ctx);
/* Records dropped because the ring buffer was full, per CPU (cumulative).
 * Fills at most ncpu entries; returns the number of CPUs. */
int argus_probe__lost(struct argus_probe *p, uint64_t *per_cpu, int ncpu);
int argus_probe__ncpus(const struct argus_probe *p);
/* Records drained from the spill ring: written while the first ring was
 * full (argus.bpf.c "the two rings"), none lost. */
uint64_t argus_probe__spilled(const struct argus_probe *p);
/* Inside a drain's callback: 0 while the record comes from the first
 * ring, 1 from the spill ring. */
int argus_probe__draining(const struct argus_probe *p);
/* The spill ring holds records not drained yet. */
bool argus_probe__spill_pending(const struct argus_probe *p);
/* Task-context records wait in per-CPU batches (kernel-patch/argus.bpf.c)
 * before they reach the ring, so the ring's order is no longer time
 * order.  A horizon: every record with a timestamp before ts is in a
 * ring below its position pos[ring], or drained already.  ts is the oldest record
 * still in a batch, or the clock; it never goes backwards.  Once
 * argus_probe__drained() says the consumer passed pos, no record older
 * than ts can come any more. */
struct argus_horizon {
	uint64_t ts;
	uint64_t pos[2];           /* rb's and rb_spill's producer positions */
};
void argus_probe__horizon(const struct argus_probe *p, struct argus_horizon *h);
bool argus_probe__drained(const struct argus_probe *p, const struct argus_horizon *h);
/* Moves into the ring the batch of every CPU whose oldest record is
 * older than older_than (UINT64_MAX: every non-empty batch).  Returns the
 * CPUs flushed.  A batch busy three times in a row (its CPU in the middle
 * of an append) or a CPU that cannot run the flush (offline) is left for
 * the next call; such CPUs keep the horizon back until then. */
int argus_probe__flush_batches(struct argus_probe *p, uint64_t older_than);
/* The oldest timestamp in cpu's batch, 0 when it is empty. */
uint64_t argus_probe__batch_first(const struct argus_probe *p, int cpu);
/* Detaches every program, then flushes every batch: the ring then holds
 * everything recorded.  Returns the CPUs whose batch still is not empty
 * (0), their records counted lost, or -errno.  Drain, then close. */
int argus_probe__stop(struct argus_probe *p);
/* fd of the hardware-watchpoint program (on_watch), loaded but attached
 * to nothing until collector/hw_watch.c links it to breakpoint events. */
int argus_probe__watch_prog_fd(const struct argus_probe *p);
/* fd of its hw_watches map (struct ae_hw_key -> struct ae_hw_val). */
int argus_probe__watch_map_fd(const struct argus_probe *p);
void argus_probe__close(struct argus_probe *p);

/*
 * The verifier's work on each program, loaded as argus_probe__open()
 * would load it with opts (the same .rodata, so the same paths pruned),
 * with BPF_LOG_STATS, attached to nothing, then unloaded: fn gets each
 * program's name, the instructions the verifier processed (its limit is
 * 1,000,000 per program) and its verification time in microseconds.  It
 * is the collector's start-up time (docs/collector.md, "Kernel quirks").
 * 0, or -errno with one line in errbuf saying why (the verifier's log
 * under ARGUS_BPF_DEBUG=1).
 */
typedef void (*argus_verifier_fn)(void *ctx, const char *prog, uint64_t insns,
				  uint64_t usec);
int argus_probe__verifier_stats(const struct argus_probe_opts *opts,
				argus_verifier_fn fn, void *ctx,
				char *errbuf, size_t errlen);

/* The default traced syscall set (documented in docs/collector.md). */
void argus_probe__default_syscalls(uint64_t bitmap[8]);
/* Of those, the calls whose entry is recorded by default: all but the
 * data-transfer calls (read/write/send/recv families), whose exit record
 * already holds the number, fd, object and result. */
void argus_probe__default_entries(uint64_t bitmap[8]);
#endif
