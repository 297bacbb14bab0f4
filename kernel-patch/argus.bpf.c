// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * argus.bpf.c - the "kernel patch" of Argus for Linux: BPF programs that
 * record waits, wake-ups, syscalls, IPC objects, timers, interrupts and
 * user stacks system-wide into a BPF ring buffer (struct ae_* records of
 * argus_events.h; "the two rings" below).  Loaded at run time by collector/bpf_probe.c; no kernel
 * rebuild, no kernel module.
 *
 * What this machine's kernel offers (see shared/BRIEF.md §5): raw
 * tracepoints, perf_event programs, the ringbuf map and CO-RE work; kprobes,
 * fentry/fexit and tp_btf do not exist.  So every program here is a
 * raw_tracepoint plus one perf_event program for the CPU sampler.
 *
 * Reading kernel memory: raw_tp arguments are untyped u64s, so the usual
 * way is BPF_CORE_READ, one bpf_probe_read_kernel() helper call per
 * pointer hop (~50 ns each in this VM).  Instead we retype them with the
 * bpf_rdonly_cast() kfunc (KPTR below): the verifier then allows plain
 * CO-RE-relocated loads, which the JIT turns into fault-safe PROBE_MEM
 * loads costing a few ns, and a NULL anywhere in a chain reads as 0.  Only
 * pointer-to-pointer (the fd array) and strings still need a helper.
 *
 * Data structures:
 *   rb        - the BPF_MAP_TYPE_RINGBUF records go to (16 MiB by default,
 *               size set by the loader).
 *   rb_spill  - the ring they go to when rb is full (64 MiB by default).
 *   lost      - PERCPU_ARRAY[1] of u64: records that fit in neither.
 *   cpustate  - PERCPU_ARRAY[1] of struct cpu_state: the irq number,
 *               softirq vector and hrtimer this CPU is handling right now
 *               (so AE_WAKING can say *why* an interrupt woke a task), and
 *               where this CPU's preempt count lives.
 *   scratch   - PERCPU_ARRAY[2] of 8 KiB: where variable-size records (with
 *               a user-stack tail) are built before bpf_ringbuf_output().
 *               Slot 0: sched_switch (runs with irqs off, cannot nest);
 *               slot 1: the sampler (hardirq), so a sample can never
 *               scribble over a half-built switch record; slot 2: the
 *               watchpoint program (a debug trap, which the sampler's
 *               hardirq may interrupt).
 *   timers    - LRU_HASH hrtimer address -> tid of the user task that armed
 *               it, so EXPIRE/CANCEL are recorded only for timers that user
 *               code armed (the kernel's own timers are most of the volume).
 *   batch     - PERCPU_ARRAY[1] of struct tbatch: this CPU's task-context
 *               records on their way to rb as one AE_BATCH ("batches").
 *   batch_first - ARRAY[cpu] of u64, mmapped by the collector: the oldest
 *               timestamp in that CPU's batch, 0 when it is empty.
 *
 * Invariants:
 *   - every record begins with a fully filled struct ae_hdr; h.size is the
 *     exact record length; h.tid/h.pid is current (see argus_events.h).
 *   - every byte of a record is written (ringbuf memory is not zeroed).
 *   - records are submitted with BPF_RB_NO_WAKEUP; user space polls on a
 *     timer.  Only when more than wake_bytes (1/4 of the ring) are waiting
 *     do we force a wake-up, so a burst cannot overrun a sleeping drainer,
 *     and once per young process, for its maps (young_wake()).
 *   - nothing here blocks or loops unboundedly; per-event work is a handful
 *     of loads and helper calls (hot path: sched_switch, sched_waking, sys_*).
 *   - the process self_tgid (the collector) produces no syscall, sample or
 *     hrtimer records and never gets a stack tail; its sched records stay
 *     because the graph needs every switch-in of everybody else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "argus_events.h"
#include "syscall_class.h"  /* x86_64 numbers and classes: ARGUS_NR_*, ARGUS_SC_* */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- settings written by the loader into .rodata before load ---------- */
const volatile __u32 self_tgid = 0;
/* per syscall nr: its classes (syscalls/syscall_class.h) | AE_SYS_TRACED |
 * AE_SYS_ENTRY; one load answers both "is it traced?" and "what is it?" */
const volatile __u32 sys_class[AE_SYSCALL_WORDS * 64] = {};
const volatile __u32 sample_copy = 0;   /* bytes of user stack per sample */
const volatile __u32 block_copy = 0;    /* bytes of user stack per blocking switch */
const volatile bool no_irq = false;     /* no AE_IRQ_* / AE_SOFTIRQ_* / AE_WQ_* */
const volatile __u64 wake_bytes = 16 << 20; /* force wake-up above this backlog */
const volatile __s64 pc_from_rq = 0;    /* see cur_ctx() */
/* Callbacks of the scheduler's own hrtimers (dl_task_timer of the fair
 * server, hrtick, bandwidth timers, ...).  They are armed from task context
 * by whatever user task happens to run, so "armed by a user task" is not
 * enough to keep them out; the loader resolves them from /proc/kallsyms. */
#define HRT_SKIP_MAX 12
const volatile __u64 hrt_skip_fn[HRT_SKIP_MAX] = {};

/* ---- kernel constants that are macros, hence not in vmlinux.h ---------- */
#define PF_KTHREAD      0x00200000
#define PF_USER_WORKER  0x00004000  /* io_uring / vhost workers: no user regs */
#define TASK_DEAD       0x00000080
#define NMI_MASK        0x00f00000
#define HARDIRQ_MASK    0x000f0000
#define SOFTIRQ_OFFSET  0x00000100  /* set while *serving* a softirq */
#define S_IFMT   00170000
#define S_IFSOCK 0140000
#define S_IFIFO  0010000
#define AF_UNIX  1
#define AF_INET  2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define ANON_INODE_FS_MAGIC 0x09041934
#define ENOSYS 38


/* Retype a kernel address for direct, fault-safe loads (see the top). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define KPTR(T, p) \
	((struct T *)bpf_rdonly_cast((const void *)(p), bpf_core_type_id_kernel(struct T)))

/* ---- maps --------------------------------------------------------------- */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);  /* overridden by the loader */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);  /* overridden by the loader */
} rb_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct cpu_state {
	__u32 irq;       /* irq being handled (AE_VEC_NONE when none) */
	__u32 softirq;   /* softirq vector being served (AE_VEC_NONE when none) */
	__u64 hrt_hard;  /* hrtimer expiring in hardirq context, else 0 */
	__u64 hrt_soft;  /* hrtimer expiring in softirq context, else 0 */
	__u32 apic;      /* AE_VEC_APIC | vector in an APIC system interrupt,
	                    else 0 (they do not nest: they run irqs-off) */
	__u32 spill;     /* this CPU writes to rb_spill until it is empty */
	__u64 pc_addr;   /* this CPU's &__preempt_count, 0 until found */
	__u32 inited;
	__u32 nrec;      /* records submitted on this CPU (wraps) */
	__u64 last_wake; /* when this CPU last forced a drainer wake-up, ns */
	__u64 last_yield_copy; /* when a yield here last got a stack copy, ns */
};

/* A yield's stack gets the samples' copy (for DWARF unwinding: the spin
 * loop's code often has no frame pointers, and the walk then stops in
 * libc's syscall wrapper) at most once per YIELD_COPY_NS per CPU: a
 * program that yields 100 K times a second under contention must not fill
 * the ring with stack copies.  100 per second per CPU is twice the
 * sampler's rate, and a spinning thread's hang gets enough of them. */
#define YIELD_COPY_NS 10000000ull

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpustate SEC(".maps");

#define SCRATCH_SZ 8192
struct scratch {
	__u8 buf[SCRATCH_SZ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Young processes the collector was already woken for (see young_wake()). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);    /* tgid */
	__type(value, __u64);  /* its leader's start_time: a reused tgid is a new process */
} woken SEC(".maps");

/* `argus watch`'s watches (struct ae_hw_key -> ae_hw_val), written by
 * collector/hw_watch.c. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AE_HW_MAX_WATCHES);
	__type(key, struct ae_hw_key);
	__type(value, struct ae_hw_val);
} hw_watches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);    /* struct hrtimer * */
	__type(value, __u32);  /* owner tid */
} timers SEC(".maps");

/* ---- context: hard/soft irq from the per-CPU preempt count ------------- */
/*
 * x86 keeps the preempt count in the per-CPU variable __preempt_count, not
 * in thread_info, so in_interrupt() cannot be read from the task.
 *
 * Quirk: the obvious way, `extern const int __preempt_count __ksym` with
 * bpf_this_cpu_ptr(), is in this kernel's BTF but does NOT load: the
 * verifier resolves typed ksyms through kallsyms, and this kernel is built
 * without CONFIG_KALLSYMS_ALL, so kallsyms has no data symbols ("ldimm64
 * failed to find the address for kernel symbol '__preempt_count'").
 *
 * What we do instead: per-CPU variables sit at fixed distances from each
 * other inside one CPU's copy of .data..percpu, and the BTF DATASEC gives
 * their offsets.  The loader puts off(__preempt_count) - off(runqueues)
 * into pc_from_rq.  Once per CPU we find this CPU's struct rq from the
 * current task (current->se.cfs_rq->rq), check rq->cpu is this CPU, and
 * cache &__preempt_count = rq + pc_from_rq in cpustate.  Each read is then
 * one direct load (typed as struct refcount_struct, whose first member is
 * an int, only because bpf_rdonly_cast needs a struct type).
 *
 * Bit 31 is PREEMPT_NEED_RESCHED, stored inverted on x86: masked out.
 * If pc_from_rq is 0 (BTF without those variables) we fall back to our own
 * irq/softirq/hrtimer bookkeeping, which is coarser: an interrupt that does
 * not go through irq_handler_entry (APIC timer outside an hrtimer expiry,
 * IPIs, irq_work) then looks like TASK context.
 *
 * Programs that can only run in task context (syscalls, sched_switch, exec,
 * fork, exit) do not read it: they pass AE_CTX_TASK.
 */
static __always_inline struct cpu_state *cpu_state(void)
{
	__u32 zero = 0;
	struct cpu_state *cs = bpf_map_lookup_elem(&cpustate, &zero);

	if (cs && !cs->inited) {
		cs->irq = AE_VEC_NONE;
		cs->softirq = AE_VEC_NONE;
		cs->inited = 1;
	}
	return cs;
}

static __attribute__((noinline)) __u64 find_preempt_count(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct cfs_rq *cfs = t->se.cfs_rq;
	struct rq *rq;

	if (!cfs)
		return 0;
	if (bpf_core_field_exists(cfs->rq))  /* CONFIG_FAIR_GROUP_SCHED */
		rq = cfs->rq;
	else  /* the root cfs_rq is embedded in struct rq */
		rq = KPTR(rq, (void *)cfs - bpf_core_field_offset(struct rq, cfs));
	if (!rq || rq->cpu != (int)bpf_get_smp_processor_id())
		return 0;
	return (__u64)rq + pc_from_rq;
}

static __always_inline __u16 cur_ctx(void)
{
	struct cpu_state *cs = cpu_state();
	__u32 c;

	if (!cs)
		return AE_CTX_TASK;
	if (pc_from_rq && !cs->pc_addr)
		cs->pc_addr = find_preempt_count();
	if (cs->pc_addr) {
		c = KPTR(refcount_struct, cs->pc_addr)->refs.counter & 0x7fffffffu;
		if (c & NMI_MASK)
			return AE_CTX_NMI;
		if (c & HARDIRQ_MASK)
			return AE_CTX_HARDIRQ;
		if (c & SOFTIRQ_OFFSET)
			return AE_CTX_SOFTIRQ;
		return AE_CTX_TASK;
	}
	/* fallback: our own bookkeeping */
	if (cs->irq != AE_VEC_NONE || cs->hrt_hard || cs->apic)
		return AE_CTX_HARDIRQ;
	if (cs->softirq != AE_VEC_NONE || cs->hrt_soft)
		return AE_CTX_SOFTIRQ;
	return AE_CTX_TASK;
}

/* ---- emitting ----------------------------------------------------------- */
static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		*n += 1;  /* per-CPU slot: no atomics needed */
}

/*
 * Wake the drainer only when the backlog passes the watermark, and then at
 * most once per millisecond per CPU.  A forced wake-up queues an irq_work,
 * a self-IPI: in this VM a few microseconds, ~20x the record itself.  Once
 * the backlog is past the watermark every record would force one again
 * (the irq_work runs and re-arms at once), so a drainer that fell behind
 * made every traced syscall 15x slower (measured: write() 0.3 -> 5 us),
 * and fell further behind.  The backlog itself is checked on every 16th
 * record of a CPU only: the query is a helper call.
 */
#define WAKE_CHECK_EVERY 16
#define WAKE_MIN_GAP_NS 1000000
/* The backlog test itself; a batch's flush runs it every time (one flush
 * per ~100-250 records), a single record every 16th. */
static __always_inline __u64 backlog_wake(struct cpu_state *cs)
{
	__u64 now;

	/* a CPU that spilled found rb full: past the watermark too */
	if (!cs || (!cs->spill && bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) <= wake_bytes))
		return BPF_RB_NO_WAKEUP;
	now = bpf_ktime_get_ns();
	if (now - cs->last_wake < WAKE_MIN_GAP_NS)
		return BPF_RB_NO_WAKEUP;
	cs->last_wake = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline __u64 wake_flag(void)
{
	struct cpu_state *cs = cpu_state();

	if (!cs || (++cs->nrec & (WAKE_CHECK_EVERY - 1)))
		return BPF_RB_NO_WAKEUP;
	return backlog_wake(cs);
}

/*
 * The two rings.  Writing the ring's memory was the biggest cost left
 * per record (docs/benchmarks.md, session 23: a 16 MiB ring cost 25% less
 * BPF time per event than 64 MiB on the pinned pipe), but a small ring
 * alone lost records in floods that 64 MiB absorbs.  So records go to a
 * small ring, rb, whose lines stay warm, and only when it is full to a
 * big one, rb_spill.  A CPU that spilled keeps writing to rb_spill until
 * the drainer has emptied it (all of it: the query is the whole ring's),
 * and the drainer reads rb first, then rb_spill,
 * so each CPU's records still reach it in the order they were written
 * (its queues sort a few out-of-order records cheaply, not a ring's
 * worth).  In the common case this costs nothing: one test of a per-CPU
 * flag.
 */
static __always_inline bool spilling(struct cpu_state *cs)
{
	if (!cs || !cs->spill)
		return false;
	if (bpf_ringbuf_query(&rb_spill, BPF_RB_AVAIL_DATA))
		return true;
	cs->spill = 0;   /* drained: back to rb, behind all of it */
	/* unless an interrupt spilled between the query and the store (its
	 * flag would be lost): look again (rare: once per drained spill) */
	if (bpf_ringbuf_query(&rb_spill, BPF_RB_AVAIL_DATA)) {
		cs->spill = 1;
		return true;
	}
	return false;
}

static __always_inline long ring_output(void *data, __u64 size, __u64 flags)
{
	struct cpu_state *cs = cpu_state();

	if (!spilling(cs) && !bpf_ringbuf_output(&rb, data, size, flags))
		return 0;
	if (cs)
		cs->spill = 1;
	return bpf_ringbuf_output(&rb_spill, data, size, flags);
}

/* size: a constant once inlined (the verifier wants one) */
static __always_inline void *ring_reserve(__u64 size)
{
	struct cpu_state *cs = cpu_state();
	void *r;

	if (!spilling(cs)) {
		r = bpf_ringbuf_reserve(&rb, size, 0);
		if (r)
			return r;
	}
	if (cs)
		cs->spill = 1;
	return bpf_ringbuf_reserve(&rb_spill, size, 0);
}

/* pt is current's bpf_get_current_pid_tgid() (tgid << 32 | tid): the hot
 * programs already have it, or have current's task_struct, and pass it in
 * rather than pay for the helper call again. */
static __always_inline void fill_hdr(struct ae_hdr *h, __u16 type, __u16 size, __u16 ctxk,
				     __u64 pt)
{
	h->ts = bpf_ktime_get_ns();
	h->tid = (__u32)pt;
	h->pid = pt >> 32;
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ctx = ctxk;
}

/*
 * ---- batches ----
 *
 * Task-context records do not go to the ring one by one: each CPU appends
 * them to its batch (tbatch, a per-CPU map value) and moves the batch into
 * the ring as one AE_BATCH record.  A ring reservation and commit cost
 * 30-60 ns per record on this machine (docs/benchmarks.md, session 18);
 * a batch pays them once per ~100-250 records, plus one copy.
 *
 * Nesting: programs in task context do not nest on one CPU (raw
 * tracepoints and the syscall tracepoints run them with preemption
 * disabled, sched_switch with irqs off), so only they append.  Records of
 * interrupts (cur_ctx() != AE_CTX_TASK) go to the ring directly, as
 * before.  `busy` covers what the analysis might miss (a kernel that runs
 * a syscall tracepoint's program preemptibly; cur_ctx()'s fallback taking
 * an irq for task context): a program that finds the batch busy writes
 * to the ring directly, and the flush program skips a busy batch.
 *
 * When a batch moves into the ring:
 *   - when the next record does not fit;
 *   - when its first record is older than BATCH_AGE_NS, checked at each
 *     append;
 *   - when the CPU switches to its idle task, so an idle CPU holds nothing;
 *   - at its CPU's timer tick, when older than BATCH_AGE_NS;
 *   - when a young process's first stack asks to wake the collector;
 *   - from user space (on_batch_flush run on that CPU through
 *     BPF_PROG_TEST_RUN): for a CPU busy in user code, which appends
 *     nothing, and before a save or the end.
 *
 * Ordering (the collector's watermark): batch_first[cpu] is the timestamp
 * of the oldest record in that CPU's batch, 0 when empty, in an mmapped
 * array the collector reads without a syscall.  It is published with a
 * locked add *before* the first record takes its own timestamp (which is
 * then later), so a collector that reads 0 after reading the clock knows
 * every record still to come from that batch is newer than its clock
 * read.  It is cleared only after the batch is in the ring.
 */
#define BATCH_CAP 16384            /* record bytes a batch holds */
#define BATCH_AGE_NS 2000000ull    /* a tenth of the collector's holdback */
#define BATCH_MAX_CPUS 1024

struct tbatch {
	struct ae_batch hdr;       /* what goes into the ring: hdr + data[0, len) */
	__u8 data[BATCH_CAP];
	__u64 first_ts;            /* this batch's batch_first[] value */
	__u32 busy;                /* a program is appending */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tbatch);
} batch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BATCH_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u64);
} batch_first SEC(".maps");

static __always_inline struct tbatch *tbatch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&batch, &zero);
}

static __always_inline __u64 *first_slot(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&batch_first, &cpu);
}

/* Orders the stores around `busy` (clang moved `busy = 0` above the
 * count and length stores of the record it releases). */
#define compiler_barrier() asm volatile("" ::: "memory")

/* The batch into the ring (flags: its wake-up), then empty.  Records that
 * do not fit are counted lost, all of them.  The caller holds `busy`: the
 * copy into the ring runs with irqs on and takes microseconds (on the
 * order of 10-30 µs for ~12 KiB of cold ring here, docs/benchmarks.md
 * session 23), and a tick that flushed the same batch
 * meanwhile would send it twice, or reset it under the task. */
static __always_inline void batch_flush(struct tbatch *b, __u64 flags)
{
	__u64 len = b->hdr.len;  /* 64-bit: a 32-bit one is bounded on a
				  * zero-extended copy the verifier does not tie to it */
	__u32 zero = 0;
	__u64 *first, *n;

	if (!b->hdr.count)
		return;
	/* never true; bounds it for the verifier.  After the barrier, so
	 * that clang, which can prove it redundant where this is inlined
	 * after an append, keeps it. */
	barrier_var(len);
	if (len > BATCH_CAP)
		len = BATCH_CAP;
	b->hdr.h.ts = b->first_ts;
	b->hdr.h.tid = 0;
	b->hdr.h.pid = 0;
	b->hdr.h.type = AE_BATCH;
	b->hdr.h.size = sizeof(b->hdr) + len;
	b->hdr.h.cpu = bpf_get_smp_processor_id();
	b->hdr.h.ctx = AE_CTX_TASK;
	if (ring_output(b, sizeof(b->hdr) + len, flags)) {
		n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			*n += b->hdr.count;
	}
	b->hdr.count = 0;
	b->hdr.len = 0;
	b->first_ts = 0;
	first = first_slot();
	if (first)
		*first = 0;  /* after the output: a reader seeing 0 finds it in the ring */
}

/* The batch's wake-up flag: the backlog test, at every flush. */
static __always_inline __u64 batch_wake(void)
{
	return backlog_wake(cpu_state());
}

/*
 * Open this CPU's batch for one record of at most `room` bytes (a
 * constant): flushed first if the record might not fit, its first
 * timestamp published if it is empty, marked busy.  NULL when it is busy
 * (the caller writes to the ring instead).  The record goes at
 * b->data[b->hdr.len], which is then <= BATCH_CAP - room.
 */
static __always_inline struct tbatch *batch_open(__u32 room)
{
	struct tbatch *b = tbatch();
	__u64 *first, t0;

	if (!b || b->busy)
		return 0;
	b->busy = 1;
	compiler_barrier();
	if (b->hdr.len > BATCH_CAP - room)
		batch_flush(b, batch_wake());
	if (!b->hdr.count) {
		t0 = bpf_ktime_get_ns();
		b->first_ts = t0;
		first = first_slot();
		/* a locked add (0 + t0): visible before the record's own
		 * bpf_ktime_get_ns(), whose clock read is ordered after it */
		if (first)
			__sync_fetch_and_add(first, t0 - *first);
	}
	return b;
}

/* The record at b->data[len] is complete: size bytes.  The batch moves
 * into the ring if it is old, or if force (BPF_RB_FORCE_WAKEUP) asks,
 * before `busy` is released. */
static __always_inline void batch_commit(struct tbatch *b, __u32 size, __u64 ts, __u64 force)
{
	b->hdr.len += (size + 7) & ~7u;
	b->hdr.count++;
	if (force == BPF_RB_FORCE_WAKEUP)
		batch_flush(b, force);
	else if (ts - b->first_ts > BATCH_AGE_NS)
		batch_flush(b, batch_wake());
	compiler_barrier();
	b->busy = 0;
}

/* Flush from outside an append (the idle switch, the tick, the
 * collector): only a batch nobody is appending to. */
static __always_inline bool batch_flush_idle(struct tbatch *b, __u64 flags)
{
	if (b->busy)
		return false;
	b->busy = 1;
	compiler_barrier();
	batch_flush(b, flags);
	compiler_barrier();
	b->busy = 0;
	return true;
}

/* Where a record of `room` bytes goes in an open batch. */
static __always_inline void *batch_slot(struct tbatch *b, __u32 room)
{
	__u32 len = b->hdr.len;

	if (len > BATCH_CAP - room)  /* never true after batch_open(room) */
		return 0;
	/* else clang adds len to the pointer before the test, and the
	 * verifier sees an unbounded offset */
	barrier_var(len);
	return b->data + len;
}

/* Reserve a fixed-size record and fill its header: in this CPU's batch
 * (*bp set) for task context, else in the ring (*bp NULL).  NULL (and
 * counted as lost) when the ring is full. */
static __always_inline void *reserve(struct tbatch **bp, __u16 type, __u16 size,
				     __u16 ctxk, __u64 pt)
{
	struct tbatch *b = 0;
	struct ae_hdr *h;

	if (ctxk == AE_CTX_TASK)
		b = batch_open(size);
	*bp = b;
	if (b) {
		h = batch_slot(b, size);
		if (!h) {
			b->busy = 0;
			*bp = 0;
			return 0;
		}
	} else {
		h = ring_reserve(size);
		if (!h) {
			count_lost();
			return 0;
		}
	}
	fill_hdr(h, type, size, ctxk, pt);
	return h;
}

#define RESERVE(bp, type_, T, ctxk) \
	((T *)reserve(bp, type_, sizeof(T), ctxk, bpf_get_current_pid_tgid()))
/* ... with current's pid_tgid already at hand */
#define RESERVE_PT(bp, type_, T, ctxk, pt) ((T *)reserve(bp, type_, sizeof(T), ctxk, pt))

/* current's pid_tgid from its task_struct: two loads instead of a helper
 * call (on_sys_exit went from six calls to four and 4-19 ns/run faster,
 * docs/benchmarks.md session 18) */
static __always_inline __u64 task_pid_tgid(struct task_struct *t)
{
	return (__u64)(__u32)t->tgid << 32 | (__u32)t->pid;
}

/* b: what reserve() set */
static __always_inline void submit(struct tbatch *b, void *rec)
{
	if (b)
		batch_commit(b, ((struct ae_hdr *)rec)->size, ((struct ae_hdr *)rec)->ts, 0);
	else
		bpf_ringbuf_submit(rec, wake_flag());
}

static __always_inline void output_flags(void *buf, __u64 size, __u64 flags)
{
	if (size > SCRATCH_SZ)  /* never true; bounds it for the verifier */
		return;
	if (ring_output(buf, size, flags))
		count_lost();
}

static __always_inline void output(void *buf, __u64 size)
{
	output_flags(buf, size, wake_flag());
}

/* A variable-size record (sched_switch's, with its stack) built at buf:
 * in the batch b (committed), or, b NULL, in scratch (into the ring).
 * FORCE_WAKEUP in flags moves the batch into the ring now, with the
 * wake-up. */
static __always_inline void emit_built(struct tbatch *b, void *buf, __u32 size, __u64 flags)
{
	if (!b) {
		output_flags(buf, size, flags ? flags : wake_flag());
		return;
	}
	batch_commit(b, size, ((struct ae_hdr *)buf)->ts, flags);
}

/* Run by the collector on one CPU (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU, an IPI): that CPU's batch into the ring.  Returns
 * 1 when the batch was busy (the collector tries again), else 0. */
SEC("raw_tp")
int on_batch_flush(void *ctx)
{
	struct tbatch *b = tbatch();

	if (!b)
		return 0;
	return batch_flush_idle(b, BPF_RB_NO_WAKEUP) ? 0 : 1;
}

/*
 * The collector symbolizes a stack with the maps it reads from
 * /proc/PID/maps when it drains the stack, up to 50 ms later (it polls,
 * records do not wake it).  A process shorter than that is gone by then:
 * every stack of a `sleep 0.01` was [unknown].  So the first stack of a
 * process younger than YOUNG_NS wakes the collector at once, while the
 * process is blocked and its maps are still there; once per process
 * (the woken map), so a build's compilers cost one wake-up each, and only
 * processes that young pay the lookup.  Returns BPF_RB_FORCE_WAKEUP, or 0
 * (the usual flags).
 */
#define YOUNG_NS (100ull * 1000 * 1000)
static __always_inline __u64 young_wake(__u64 now, struct task_struct *t)
{
	__u64 start = t->group_leader->start_time, *seen;
	__u32 tgid = t->tgid;

	if (now - start >= YOUNG_NS)
		return 0;
	seen = bpf_map_lookup_elem(&woken, &tgid);
	if (seen && *seen == start)
		return 0;
	bpf_map_update_elem(&woken, &tgid, &start, BPF_ANY);
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline bool user_task(struct task_struct *t)
{
	return !(t->flags & (PF_KTHREAD | PF_USER_WORKER));
}

/* comm is 16 bytes: two loads instead of a helper call */
static __always_inline void copy_comm(char *dst, struct task_struct *t)
{
	((__u64 *)dst)[0] = *(__u64 *)&t->comm[0];
	((__u64 *)dst)[1] = *(__u64 *)&t->comm[8];
}

static __always_inline void zero_obj(struct ae_obj *o)
{
	o->kind = AE_OBJ_NONE;
	o->pad = 0;
	o->obj = 0;
	o->peer = 0;
}

/* ---- fd -> kernel object ----------------------------------------------- */
/*
 * Identify what fd `fd` of the current task refers to, so that the two
 * ends of one channel match across threads and processes:
 *   pipe/FIFO  -> obj = inode (shared by both ends)
 *   AF_UNIX    -> obj = own socket inode, peer = peer socket inode
 *   TCP/UDP    -> obj = local ip<<16|port, peer = remote ip<<16|port
 *                 (ip in host order; IPv6 uses the low 32 address bits, so
 *                 ::1 and v4-mapped addresses stay readable)
 *   eventfd, timerfd, epoll (anon inodes, one inode shared by all of them)
 *              -> obj = struct file address
 *   other      -> obj = s_dev<<32 ^ i_ino
 * current->files->fdt is RCU-protected; raw_tp programs run under
 * rcu_read_lock, and every load is fault-safe, so a racing close() gives at
 * worst a stale or empty answer, never a crash.  task is current
 * (bpf_get_current_task_btf(), which the caller already has).
 */
static __always_inline void resolve_fd(__s64 fd, struct ae_obj *o, struct task_struct *task)
{
	struct fdtable *fdt = task->files->fdt;  /* NULL-safe: reads 0 */
	struct file *f;
	struct inode *ino;
	__u64 fp = 0;
	__u32 mode;

	zero_obj(o);
	if (fd < 0 || (__u64)fd >= fdt->max_fds)
		return;
	/* fdt->fd is struct file **, and a pointer to pointers has no BTF
	 * struct type of its own.  struct list_head's first member is a
	 * pointer at offset 0, so retyping the slot as one turns this hop into
	 * a direct fault-safe load too (a helper call costs ~50 ns here). */
	fp = (__u64)KPTR(list_head, (__u64)fdt->fd + fd * 8)->next;
	if (!fp)
		return;
	f = KPTR(file, fp);
	ino = f->f_inode;
	mode = ino->i_mode & S_IFMT;

	if (mode == S_IFIFO) {
		o->kind = AE_OBJ_PIPE;
		o->obj = ino->i_ino;
		return;
	}
	if (mode == S_IFSOCK) {
		struct socket *sock = KPTR(socket, f->private_data);
		struct sock *sk = sock->sk;
		__u16 family = sk->__sk_common.skc_family;

		if (family == AF_UNIX) {
			struct sock *psk = KPTR(unix_sock, sk)->peer;

			o->kind = AE_OBJ_UNIX;
			o->obj = ino->i_ino;
			if (psk) {
				/* SOCK_INODE(): struct socket_alloc {socket; vfs_inode} */
				struct socket *ps = psk->sk_socket;

				if (ps)
					o->peer = KPTR(socket_alloc, (void *)ps -
						       bpf_core_field_offset(struct socket_alloc, socket))
							->vfs_inode.i_ino;
			}
			return;
		}
		if (family == AF_INET || family == AF_INET6) {
			__u16 proto = sk->sk_protocol;
			__u32 la, ra;

			if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
				goto other_sock;
			if (family == AF_INET) {
				la = sk->__sk_common.skc_rcv_saddr;
				ra = sk->__sk_common.skc_daddr;
			} else {
				la = sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[3];
				ra = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[3];
			}
			o->kind = proto == IPPROTO_TCP ? AE_OBJ_TCP : AE_OBJ_UDP;
			o->obj = ((__u64)bpf_ntohl(la) << 16) | sk->__sk_common.skc_num;
			o->peer = ((__u64)bpf_ntohl(ra) << 16) |
				  bpf_ntohs(sk->__sk_common.skc_dport);
			return;
		}
other_sock:
		o->kind = AE_OBJ_SOCK;
		o->obj = ino->i_ino;
		return;
	}
	if (ino->i_sb->s_magic == ANON_INODE_FS_MAGIC) {
		__u64 w = 0;

		/* anon inodes share one inode: the file is the identity.  Compare
		 * the first 8 bytes of the dentry name as one little-endian word. */
		bpf_probe_read_kernel(&w, sizeof(w), f->f_path.dentry->d_name.name);
		o->obj = fp;
		if (w == 0x6466746e6576655bull)        /* "[eventfd" */
			o->kind = AE_OBJ_EVENTFD;
		else if (w == 0x646672656d69745bull)   /* "[timerfd" */
			o->kind = AE_OBJ_TIMERFD;
		else if (w == 0x6f70746e6576655bull)   /* "[eventpo"ll */
			o->kind = AE_OBJ_EPOLL;
		else
			o->kind = AE_OBJ_OTHER;
		return;
	}
	o->kind = AE_OBJ_FILE;
	o->obj = ((__u64)ino->i_sb->s_dev << 32) ^ ino->i_ino;
}

/* A poll()/ppoll() on one fd waits on that fd's object: record it as a
 * read's would be (dbus-send's reply wait, any client blocked on its one
 * connection), so the graph and the live holders know whose end it is.
 * With more fds no single object is the wait's.  The pollfd array was
 * just copied in by do_sys_poll(), so its page is resident: the read
 * does not fault in this atomic context. */
static __always_inline void poll_one_obj(struct pt_regs *r, struct ae_obj *o,
					 struct task_struct *t)
{
	int fd = -1;

	if (r->si != 1 || bpf_probe_read_user(&fd, sizeof(fd), (void *)r->di))
		return;
	resolve_fd(fd, o, t);
}

/* ---- user registers and the user-stack tail ---------------------------- */
/*
 * The user registers of the current task are the pt_regs saved at the top
 * of its kernel stack on entry.  bpf_task_pt_regs() is allowed for
 * raw_tracepoint and perf_event programs on this kernel (verified) and
 * wants a BTF task pointer: bpf_get_current_task_btf().  That is enough:
 * in sched_switch prev is current, and the sampler looks at current.
 */
static __always_inline struct pt_regs *user_regs(struct task_struct *t)
{
	return (struct pt_regs *)bpf_task_pt_regs(t);
}

/*
 * The frame-pointer walk of the user stack: ips[0] = ip, then the return
 * address of each frame {next_bp, ret} starting at bp.  This is what
 * bpf_get_stack(BPF_F_USER_STACK) does (perf_callchain_user), but that
 * helper goes through the perf callchain machinery and measured ~1.2 us per
 * call in this VM.  Frames must move up the stack (bp strictly increasing,
 * 8-aligned) so a garbage bp in code built without frame pointers ends the
 * walk instead of looping.
 *
 * The stack above bp is read once, FP_WINDOW bytes into win (the end of
 * this CPU's scratch buffer), and frames inside it are taken from there: a
 * bpf_probe_read_user() per frame (~40 ns each) was ~220 ns of on_switch's
 * ~600 on a pipe ping-pong.  Frames beyond the window are read one by one.
 * If the window runs past the stack's mapping the read fails, so the rest
 * of bp's page is read instead.
 */
#define FP_WINDOW 1024
#define FP_WIN_OFF (SCRATCH_SZ - FP_WINDOW)
/* The largest switch record: its body, the stack tail, the longest copy.
 * A batch is flushed before a switch when it has less room than this. */
#define SWITCH_ROOM (sizeof(struct ae_switch) + sizeof(struct ae_ustack) + \
		     AE_MAX_USTACK * 8 + AE_MAX_STACK_COPY)

/* Where a frame pointer can be: on the stack, above sp.  A bp outside
 * (code built without frame pointers keeps other data in rbp) gets no
 * window read: that would be one or two failing 1 KiB reads per switch. */
#define FP_MAX_ABOVE_SP (1u << 20)

static __always_inline __u32 walk_user_fp(__u64 *ips, __u64 ip, __u64 sp, __u64 bp, __u8 *win)
{
	struct { __u64 next, ret; } fr;
	__u64 base = bp, off;
	__u32 i, nr = 0, len = 0;

	if (!ip)
		return 0;
	ips[nr++] = ip;
	if (bp && !(bp & 7) && bp >= sp && bp - sp < FP_MAX_ABOVE_SP) {
		len = FP_WINDOW;
		if (bpf_probe_read_user(win, FP_WINDOW, (void *)base)) {
			len = 4096 - (base & 4095);
			if (len > FP_WINDOW)
				len = FP_WINDOW;
			if (bpf_probe_read_user(win, len, (void *)base))
				len = 0;
		}
	}
#pragma clang loop unroll(disable)
	for (i = 1; i < AE_MAX_USTACK; i++) {
		if (!bp || (bp & 7))
			break;
		off = bp - base;
		if (bp >= base && off <= FP_WINDOW - sizeof(fr) && off + sizeof(fr) <= len) {
			fr.next = *(__u64 *)(win + off);
			fr.ret = *(__u64 *)(win + off + 8);
		} else if (bpf_probe_read_user(&fr, sizeof(fr), (void *)bp)) {
			break;
		}
		if (!fr.ret)
			break;
		ips[nr & (AE_MAX_USTACK - 1)] = fr.ret;
		nr++;
		if (fr.next <= bp)
			break;
		bp = fr.next;
	}
	return nr;
}

/* The tail a record with a user stack ends with, at its longest. */
struct ustack_tail {
	struct ae_ustack us;
	__u64 ips[AE_MAX_USTACK];
	__u8 copy[AE_MAX_STACK_COPY];
};

struct fp_window {
	__u8 b[FP_WINDOW];
};

/*
 * Fill t->us (its ip, sp and bp set by the caller), t->ips[] and the stack
 * copy after them, and return the tail's bytes.  ips come from the
 * frame-pointer walk above; the raw copy (for offline DWARF unwinding)
 * starts at sp.  If sp+len runs past the end of the stack mapping the
 * whole read fails, so we retry with the rest of sp's own page, which is
 * mapped.  Reads are non-faulting: a swapped-out stack page gives
 * copy_len 0, not a sleep.
 *
 * A global function, not inlined: the verifier checks it once per
 * program, with its arguments unknown (hence the NULL test and the
 * clamps), instead of once for every path that reaches it.  Inlined,
 * on_switch's paths times the walk's loop took the verifier 3.0 s and
 * 542,400 of its 1,000,000 instructions at every start of the collector.
 */
__noinline int fill_ustack(struct ustack_tail *t, struct fp_window *w, __u64 copy)
{
	__u64 sp, len;  /* len 64-bit: a __u32 argument's upper half is unknown
			   to the verifier, and clang clamps only the lower */
	__u32 nr;
	__u8 *dst;

	if (!t || !w)
		return 0;
	sp = t->us.sp;
	nr = walk_user_fp(t->ips, t->us.ip, sp, t->us.bp, w->b);
	if (nr > AE_MAX_USTACK)
		nr = AE_MAX_USTACK;
	t->us.nr_ips = nr;
	t->us.pad = 0;
	dst = (__u8 *)t->ips + nr * sizeof(__u64);
	len = copy;
	if (len > AE_MAX_STACK_COPY)
		len = AE_MAX_STACK_COPY;
	/* else clang passes the unclamped copy to the helper (the verifier
	 * sees an unbounded size) */
	barrier_var(len);
	if (len && sp) {
		if (bpf_probe_read_user(dst, len, (void *)sp)) {
			__u64 rest = 4096 - (sp & 4095);

			if (rest < len)
				len = rest;
			if (len > AE_MAX_STACK_COPY)
				len = AE_MAX_STACK_COPY;
			barrier_var(len);
			if (bpf_probe_read_user(dst, len, (void *)sp))
				len = 0;
		}
	} else {
		len = 0;
	}
	t->us.copy_len = len;
	return sizeof(t->us) + nr * sizeof(__u64) + len;
}

/* Append the user stack (struct ae_ustack, ips[], the copy) at buf+off,
 * which has room for a whole struct ustack_tail, and return the record's
 * new size.  win: FP_WINDOW bytes of scratch for the walk. */
static __always_inline __u32 add_ustack(__u8 *buf, __u32 off, __u8 *win,
					 __u64 ip, __u64 sp, __u64 bp, __u32 copy)
{
	struct ae_ustack *us = (void *)(buf + off);

	us->ip = ip;
	us->sp = sp;
	us->bp = bp;
	return off + fill_ustack((struct ustack_tail *)us, (struct fp_window *)win, copy);
}

static __always_inline __u8 *scratch_buf(__u32 slot)
{
	return bpf_map_lookup_elem(&scratch, &slot);
}

/* ---- syscall helpers ---------------------------------------------------- */
/*
 * nr's word: its classes and this run's AE_SYS_TRACED / AE_SYS_ENTRY; 0 out
 * of range (-1: not in a syscall).  The classes come from the one table,
 * syscalls/syscall_class.h, written here by the loader with the run's
 * bitmaps: a sys_exit that is not traced (every syscall of the system
 * passes through it) costs a bound check and one load, and a traced one
 * needs no second lookup for what it is.
 * Entries are recorded for a subset only: a read or a write's exit carries
 * its number, fd, object and result, so its entry would be a second record
 * with nothing the graph needs (the loader documents the default split).
 */
static __always_inline __u32 sys_word(__u64 nr)
{
	if (nr >= AE_SYSCALL_WORDS * 64)
		return 0;
	return sys_class[nr];
}

/* fcntl cmds that take or drop a lock (not F_GETLK: a query holds nothing). */
static __always_inline bool lock_cmd(__u64 cmd)
{
	return cmd == AE_F_SETLK || cmd == AE_F_SETLKW ||
	       cmd == AE_F_OFD_SETLK || cmd == AE_F_OFD_SETLKW;
}

/* A user timespec (or timeval when usec) as ns; NULL = wait forever. */
static __always_inline __u64 user_timeout_ns(__u64 uptr, bool usec)
{
	struct { __s64 sec, frac; } ts;

	if (!uptr)
		return ~0ull;
	if (bpf_probe_read_user(&ts, sizeof(ts), (void *)uptr))
		return 0;
	return ts.sec * 1000000000ull + ts.frac * (usec ? 1000 : 1);
}

/* The timeout argument of a call of class cls (ARGUS_SC_TIMEOUT_ARG) from
 * the user registers (x86_64 syscall ABI: di si dx r10 r8 r9).  The table
 * puts timeouts in arguments 0, 2 and 4 only (test_syscall_class checks
 * it), so two compares instead of a switch over six. */
static __always_inline __u64 timeout_arg(struct pt_regs *r, __u32 cls)
{
	__u32 i = ARGUS_SC_TIMEOUT_ARG(cls);

	return i == 0 ? r->di : i == 2 ? r->dx : r->r8;
}

/* The timeout of a call of class cls (ARGUS_SC_TIMEOUT: its argument and
 * unit are in the class entry) as ns; ~0 = wait forever. */
static __always_inline __u64 timeout_ns(struct pt_regs *r, __u32 cls)
{
	__u64 a = timeout_arg(r, cls);

	if (ARGUS_SC_TIMEOUT_UNIT(cls) == ARGUS_TMO_MS)  /* poll: int ms, < 0 = none */
		return (int)a < 0 ? ~0ull : (__u64)(int)a * 1000000ull;
	return user_timeout_ns(a, ARGUS_SC_TIMEOUT_UNIT(cls) == ARGUS_TMO_TIMEVAL);
}

/* ---- scheduler ---------------------------------------------------------- */
static __always_inline void fill_next(struct ae_switch *e, struct task_struct *next,
				      __u64 state)
{
	e->next_tid = next->pid;
	e->next_pid = next->tgid;
	e->prev_state = state;
	copy_comm(e->next_comm, next);
}

/*
 * sched_switch(preempt, prev, next, prev_state).  prev is current, and
 * this always runs in task context (schedule() is never called from irq).
 * Quirk: prev_state is prev->__state read before the switch; when the task
 * was preempted it may still hold a sleeping state it had set on its way to
 * sleep (set_current_state() then preempted before schedule()).  The
 * kernel's own trace output prints such switches as runnable (R+), so do
 * we: preempt => state 0.  A task with a pending signal is not dequeued and
 * the kernel already passes TASK_RUNNING for it.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev_raw,
	     struct task_struct *next_raw, unsigned int prev_state)
{
	struct task_struct *prev = KPTR(task_struct, prev_raw);
	struct task_struct *next = KPTR(task_struct, next_raw);
	__u64 state = preempt ? 0 : prev_state;
	__u64 pt = task_pid_tgid(prev);  /* prev is current */
	struct task_struct *t;
	struct tbatch *b;
	struct ae_switch *e;
	struct pt_regs *r;
	__s64 nr = -1;
	__u64 arg = 0, ax, orig_ax;
	__u32 cls = 0;
	__u32 size, copy;
	__u8 *buf, *win;
	/* Past this test, state 0 is a voluntary switch of a runnable task:
	 * sched_yield() when another task is runnable (or a wait a pending
	 * signal cut short).  A thread that spins on yields while other
	 * programs run is on a CPU only for its syscalls, so the sampler never
	 * catches it: the stack of its yields is the only one its hang gets
	 * (graph: the yield switch's gevent carries it; diag_diagnose.c
	 * hot_stack()). */
	if (preempt || !user_task(prev)) {
		/* preempted, or a kernel thread: no syscall, no stack */
		e = RESERVE_PT(&b, AE_SWITCH, struct ae_switch, AE_CTX_TASK, pt);
		if (!e)
			return 0;
		fill_next(e, next, state);
		e->sys_nr = -1;
		e->pad = 0;
		e->sys_arg = 0;
		zero_obj(&e->obj);
		submit(b, e);
		if (b && !next->pid)
			batch_flush_idle(b, batch_wake());  /* going idle: hold nothing back */
		return 0;
	}

	/* A user task blocks: which syscall, on what, from where.  Built in
	 * the batch, opened first (its first timestamp is published before
	 * ours); in scratch when the batch is busy.  The stack walk's window
	 * is the end of scratch either way. */
	win = scratch_buf(0);
	if (!win)
		return 0;
	b = batch_open(SWITCH_ROOM);
	buf = b ? batch_slot(b, SWITCH_ROOM) : win;
	if (!buf) {
		b->busy = 0;
		return 0;
	}
	win += FP_WIN_OFF;
	e = (void *)buf;
	fill_hdr(&e->h, AE_SWITCH, 0, AE_CTX_TASK, pt);
	fill_next(e, next, state);
	e->pad = 0;
	zero_obj(&e->obj);
	/* prev as a trusted pointer, for bpf_task_pt_regs() and the fd table;
	 * fetched once for this path's three users */
	t = bpf_get_current_task_btf();
	r = user_regs(t);
	/*
	 * In a syscall orig_ax is its number and ax still holds the -ENOSYS the
	 * entry code pushed (the return value is stored only on the way out).
	 * Exceptions store their error code in orig_ax (a blocking page fault
	 * would otherwise look like syscall 4 or 6), interrupts store ~vector:
	 * requiring ax == -ENOSYS tells them apart.  (32-bit compat syscalls
	 * would be numbered differently; nobody runs them here.)
	 */
	ax = r->ax;
	orig_ax = r->orig_ax;
	if (ax == (__u64)-ENOSYS && orig_ax < AE_SYSCALL_WORDS * 64) {
		nr = orig_ax;
		cls = sys_class[nr];    /* in bounds: checked just above */
	}
	/* The key argument by the syscall's class (syscalls/syscall_class.h),
	 * the most frequent blocking waits first (reads, epoll, locks). */
	if (cls & (ARGUS_SC_FD_ARG0 | ARGUS_SC_FILE_LOCK)) {
		/* an fd call, or a blocking lock wait (flock without LOCK_NB,
		 * F_SETLKW, F_OFD_SETLKW): the fd and its file */
		arg = (int)r->di;
		resolve_fd((int)r->di, &e->obj, t);
	} else if (nr == ARGUS_NR_futex) {
		arg = r->di;  /* one-off: a futex wait's key is its uaddr */
	} else if (cls & ARGUS_SC_TIMEOUT) {
		/* a sleep or a poll-family wait (not epoll): its timeout, ns
		 * (clock_nanosleep's is absolute when flags has TIMER_ABSTIME) */
		arg = timeout_ns(r, cls);
		if (cls & ARGUS_SC_POLLFD)
			poll_one_obj(r, &e->obj, t);
	}
	if (!state && !(cls & ARGUS_SC_YIELD)) {
		nr = -1;        /* not a yield: recorded as a preemption is */
		arg = 0;
		zero_obj(&e->obj);
	}
	e->sys_nr = nr;
	e->sys_arg = arg;

	/* no stack for ourselves, nor for a task's final switch (TASK_DEAD):
	 * its mm is gone and its user stack with it; nor for a runnable
	 * switch that is not a yield */
	if (e->h.pid == self_tgid || (state & TASK_DEAD) || (nr == -1 && !state)) {
		e->h.size = sizeof(*e);
		emit_built(b, buf, sizeof(*e), 0);
		goto out;
	}
	copy = block_copy;
	if (!state) {           /* a yield (the others returned above) */
		__u32 zero = 0;
		struct cpu_state *cs = bpf_map_lookup_elem(&cpustate, &zero);

		/* over the rate, no stack at all: a frame-pointer walk
		 * alone often stops in the wrapper, and its one frame would
		 * outnumber the whole stacks in diag's hot_stack() */
		if (!cs || e->h.ts - cs->last_yield_copy < YIELD_COPY_NS) {
			e->h.size = sizeof(*e);
			emit_built(b, buf, sizeof(*e), 0);
			goto out;
		}
		cs->last_yield_copy = e->h.ts;
		copy = sample_copy;
	}
	size = add_ustack(buf, sizeof(*e), win, r->ip, r->sp, r->bp, copy);
	e->h.size = size;
	emit_built(b, buf, size, young_wake(e->h.ts, t));
out:
	if (b && !next->pid)
		batch_flush_idle(b, batch_wake());  /* going idle: hold nothing back */
	return 0;
}

/* Wake-up vector: which interrupt/softirq/hrtimer the current CPU serves.
 * AE_VEC_NONE in softirq context means the softirq loop's own housekeeping
 * (e.g. waking ksoftirqd after the last vector). */
static __always_inline void wake_vector(__u16 ctxk, __u32 *vec, __u64 *hrt)
{
	struct cpu_state *cs = cpu_state();

	*vec = AE_VEC_NONE;
	*hrt = 0;
	if (!cs)
		return;
	if (ctxk == AE_CTX_HARDIRQ) {
		if (cs->hrt_hard) {
			*vec = AE_VEC_HRTIMER;
			*hrt = cs->hrt_hard;
		} else if (cs->irq != AE_VEC_NONE) {
			*vec = cs->irq;
		} else if (cs->apic) {
			*vec = cs->apic;
		}
	} else if (ctxk == AE_CTX_SOFTIRQ) {
		if (cs->hrt_soft) {
			*vec = AE_VEC_HRTIMER;
			*hrt = cs->hrt_soft;
		} else {
			*vec = cs->softirq;
		}
	}
}

/*
 * sched_waking(p), not sched_wakeup: waking fires in try_to_wake_up() on the
 * waker's CPU, in the waker's context, so current *is* the waker (or the
 * interrupt that woke).  sched_wakeup fires later, possibly on the target's
 * CPU from the wake-list IPI, where current is an unrelated task.
 */
SEC("raw_tp/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p_raw)
{
	struct task_struct *p = KPTR(task_struct, p_raw);
	struct tbatch *b;
	struct ae_waking *e = RESERVE(&b, AE_WAKING, struct ae_waking, cur_ctx());

	if (!e)
		return 0;
	e->target_tid = p->pid;
	e->target_pid = p->tgid;
	/* the CPU p last ran on; the target CPU is chosen after this point */
	e->target_cpu = p->thread_info.cpu;
	wake_vector(e->h.ctx, &e->vector, &e->hrtimer);
	submit(b, e);
	return 0;
}

static __always_inline int emit_task(__u16 type, struct task_struct *t_raw, __u16 ctxk)
{
	struct task_struct *t = KPTR(task_struct, t_raw);
	struct tbatch *b;
	struct ae_task *e = RESERVE(&b, type, struct ae_task, ctxk);

	if (!e)
		return 0;
	e->child_tid = t->pid;
	e->child_pid = t->tgid;
	e->clone_flags = 0;  /* not passed to these tracepoints */
	copy_comm(e->comm, t);
	submit(b, e);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	return emit_task(AE_WAKEUP_NEW, p, AE_CTX_TASK);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	return emit_task(AE_FORK, child, AE_CTX_TASK);
}

/* sched_process_free runs from the RCU callback (often softirq): h is
 * whoever happened to run it. */
SEC("raw_tp/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	return emit_task(AE_FREE, p, cur_ctx());
}

/* sched_process_exec(p, old_pid, bprm): p is current, comm already new. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct tbatch *b;
	struct ae_exec *e = RESERVE(&b, AE_EXEC, struct ae_exec, AE_CTX_TASK);

	if (!e)
		return 0;
	e->old_tid = old_pid;
	e->pad = 0;
	copy_comm(e->comm, bpf_get_current_task_btf());
	if (bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
				      KPTR(linux_binprm, bprm)->filename) < 0)
		e->filename[0] = 0;
	submit(b, e);
	return 0;
}

/* 6.18: sched_process_exit(struct task_struct *p, bool group_dead); the exit
 * code is not an argument, it is already in p->exit_code. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	struct tbatch *b;
	struct ae_exit *e = RESERVE(&b, AE_EXIT, struct ae_exit, AE_CTX_TASK);

	if (!e)
		return 0;
	e->exit_code = KPTR(task_struct, p)->exit_code;
	e->group_dead = group_dead;
	submit(b, e);
	return 0;
}

/* 6.18: task_rename(struct task_struct *task, const char *comm), called
 * before the copy, with the new name.  task is current for prctl(PR_SET_NAME)
 * but may be another thread when writing /proc/PID/task/TID/comm, so h names
 * the renamed task, not current. */
SEC("raw_tp/task_rename")
int BPF_PROG(on_rename, struct task_struct *task_raw, const char *comm)
{
	struct task_struct *task = KPTR(task_struct, task_raw);
	struct tbatch *b;
	struct ae_rename *e = RESERVE(&b, AE_RENAME, struct ae_rename, AE_CTX_TASK);

	if (!e)
		return 0;
	e->h.tid = task->pid;
	e->h.pid = task->tgid;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	if (bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm) < 0)
		e->comm[0] = 0;
	submit(b, e);
	return 0;
}

/* ---- syscalls ----------------------------------------------------------- */
/*
 * The lock request of fcntl(fd, lock cmd, struct flock *): its type and
 * range are in user memory, and only the entry reads them (the exit wants
 * the attempt's time and result; F_SETLKW may have slept for seconds).
 * x86_64 struct flock: short l_type, l_whence; off_t l_start, l_len; pid_t
 * l_pid.  Stored in args[3..5] (argus_events.h, AE_LOCK_TAG); a failed
 * read leaves them 0, i.e. untagged: "type unknown".
 */
static __always_inline void fcntl_lock(struct ae_sys_enter *e, __u64 uptr)
{
	struct { __s16 type, whence; __u32 pad; __s64 start, len; } fl;

	e->args[3] = e->args[4] = e->args[5] = 0;
	if (bpf_probe_read_user(&fl, sizeof(fl), (void *)uptr))
		return;
	e->args[3] = AE_LOCK_TAG | (__u64)(__u16)fl.whence << 16 | (__u16)fl.type;
	e->args[4] = fl.start;
	e->args[5] = fl.len;
}

static __always_inline int emit_enter(long id, struct pt_regs *r)
{
	struct ae_sys_enter *e;
	struct tbatch *b;

	if ((bpf_get_current_pid_tgid() >> 32) == self_tgid)
		return 0;
	e = RESERVE(&b, AE_SYS_ENTER, struct ae_sys_enter, AE_CTX_TASK);
	if (!e)
		return 0;
	e->nr = id;
	e->args[0] = r->di;  /* x86_64 syscall ABI: di si dx r10 r8 r9 */
	e->args[1] = r->si;
	e->args[2] = r->dx;
	e->args[3] = r->r10;
	e->args[4] = r->r8;
	e->args[5] = r->r9;
	if (id == ARGUS_NR_fcntl && lock_cmd(r->si))
		fcntl_lock(e, r->dx);
	submit(b, e);
	return 0;
}

/* raw sys_enter(regs, id) fires for every syscall on the system: the
 * AE_SYS_ENTRY test comes first so untraced calls cost a few instructions.
 * The entry set is a subset of the exit one (sys_word()).  Used only with
 * --all-entries or when the per-call tracepoints below cannot attach. */
SEC("raw_tp/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs_raw, long id)
{
	if (!(sys_word(id) & AE_SYS_ENTRY))
		return 0;
	return emit_enter(id, KPTR(pt_regs, regs_raw));
}

/*
 * The same record from the per-call tracepoints syscalls:sys_enter_NAME,
 * attached by the loader to each call of the entry set (AE_SYS_ENTRY) only.  A raw
 * sys_enter program runs for every syscall of every task, and by default
 * the entries are wanted for a few calls (futex, the poll family, ...)
 * while the hot ones (read, write, send*, recv*) are exit-only: through
 * the per-call tracepoints the others cost the kernel a bit test instead
 * of a BPF dispatch (~45 ns a call here).  The trade, measured (docs/
 * collector.md, "Where entries come from"): a call of the entry set costs
 * ~233 ns more this way, and the stop waits ~0.7 s for these links to
 * close.  Only the call number is read from the context (its
 * size depends on the call's argument count, and the kernel refuses a
 * program that reads past it); the arguments come from the user
 * registers, which on entry hold them unchanged.
 */
struct sys_enter_tp_ctx {
	__u64 common;    /* struct trace_entry */
	__s32 nr;        /* __syscall_nr */
};

SEC("tracepoint")
int on_sys_enter_tp(struct sys_enter_tp_ctx *ctx)
{
	return emit_enter(ctx->nr, user_regs(bpf_get_current_task_btf()));
}

/*
 * sys_exit(regs, ret).  The object is resolved at exit so that accept and
 * connect see the connected peer.  Which fd: arg0 for fd calls; the
 * returned fd for accept/accept4/eventfd2/timerfd_create (the new object);
 * fds[0] for pipe2 and socketpair (read back from user memory: a pipe's
 * inode, or the first socket with the second as its peer).
 */
SEC("raw_tp/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs_raw, long ret)
{
	struct pt_regs *r = KPTR(pt_regs, regs_raw);
	__s64 nr = r->orig_ax;
	struct task_struct *t;
	struct ae_sys_exit *e;
	struct tbatch *b;
	__s64 fd = -1;
	__u32 cls;
	__u64 pt;

	cls = sys_word(nr);
	if (!(cls & AE_SYS_TRACED))
		return 0;
	/* one helper call for current, which gives its ids and its fd table */
	t = bpf_get_current_task_btf();
	pt = task_pid_tgid(t);
	if ((pt >> 32) == self_tgid)
		return 0;
	e = RESERVE_PT(&b, AE_SYS_EXIT, struct ae_sys_exit, AE_CTX_TASK, pt);
	if (!e)
		return 0;
	e->nr = nr;
	e->ret = ret;
	e->arg0 = r->di;
	if (cls & ARGUS_SC_NEW_FD) {
		fd = ret;
	} else if (cls & ARGUS_SC_FD_ARG0) {
		fd = (int)e->arg0;
	} else if (cls & ARGUS_SC_FILE_LOCK) {
		/* fcntl: only lock cmds; F_GETFL/F_SETFD... are frequent */
		if (nr != ARGUS_NR_fcntl || lock_cmd(r->si))
			fd = (int)e->arg0;
	} else if ((cls & ARGUS_SC_FD_PAIR) && ret == 0) {
		/* int fds[2]: pipe2's arg0, socketpair's arg3 */
		__u64 uptr = nr == ARGUS_NR_pipe2 ? r->di : r->r10;
		int fds[2];

		if (!bpf_probe_read_user(fds, sizeof(fds), (void *)uptr))
			fd = fds[0];
	}
	resolve_fd(fd, &e->obj, t);
	submit(b, e);
	return 0;
}

/* ---- hrtimers ----------------------------------------------------------- */
static __always_inline bool from_user_task(void)
{
	__u64 pt = bpf_get_current_pid_tgid();

	return (__u32)pt != 0 && (pt >> 32) != self_tgid &&
	       user_task(bpf_get_current_task_btf());
}

static __always_inline struct ae_hrtimer *hrt_rec(struct tbatch **bp, __u16 type,
						   __u64 timer, __u64 fn, __u16 ctxk)
{
	struct ae_hrtimer *e = RESERVE(bp, type, struct ae_hrtimer, ctxk);

	if (!e)
		return 0;
	e->timer = timer;
	e->function = fn;
	e->expires = 0;
	e->mode = 0;
	e->owner_tid = 0;
	return e;
}

/*
 * hrtimer_start(timer, mode, was_armed) in 6.18.  Only timers armed by a
 * user task in task context are recorded: the tick, the scheduler and
 * everything armed from interrupts would drown the rest.
 */
SEC("raw_tp/hrtimer_start")
int BPF_PROG(on_hrt_start, struct hrtimer *t_raw, enum hrtimer_mode mode)
{
	struct hrtimer *t = KPTR(hrtimer, t_raw);
	__u64 timer = (__u64)t_raw, fn;
	struct ae_hrtimer *e;
	struct tbatch *b;
	__u32 tid;
	int i;

	if (cur_ctx() != AE_CTX_TASK || !from_user_task())
		return 0;
	fn = (__u64)t->function;
	for (i = 0; i < HRT_SKIP_MAX; i++)
		if (hrt_skip_fn[i] == fn)
			return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&timers, &timer, &tid, BPF_ANY);
	e = hrt_rec(&b, AE_HRT_START, timer, fn, AE_CTX_TASK);
	if (!e)
		return 0;
	e->expires = t->node.expires;
	e->mode = mode;
	e->owner_tid = tid;
	submit(b, e);
	return 0;
}

/* Expiry: remember the timer for sched_waking (hard vs soft slot), and
 * record it when a user task armed it. */
SEC("raw_tp/hrtimer_expire_entry")
int BPF_PROG(on_hrt_expire, struct hrtimer *t_raw, ktime_t *now)
{
	struct cpu_state *cs = cpu_state();
	__u64 timer = (__u64)t_raw;
	__u16 c = cur_ctx();
	struct ae_hrtimer *e;
	struct tbatch *b;
	__u32 *owner;

	/* expiry is never in task context: hard timers in hardirq, soft ones
	 * in softirq; without the preempt count (fallback) assume hard */
	if (c == AE_CTX_TASK)
		c = AE_CTX_HARDIRQ;
	if (cs) {
		if (c == AE_CTX_SOFTIRQ)
			cs->hrt_soft = timer;
		else
			cs->hrt_hard = timer;
	}
	owner = bpf_map_lookup_elem(&timers, &timer);
	if (!owner)
		return 0;
	e = hrt_rec(&b, AE_HRT_EXPIRE, timer, (__u64)KPTR(hrtimer, t_raw)->function, c);
	if (e) {
		e->owner_tid = *owner;
		submit(b, e);
	}
	bpf_map_delete_elem(&timers, &timer);
	return 0;
}

SEC("raw_tp/hrtimer_expire_exit")
int BPF_PROG(on_hrt_expire_exit, struct hrtimer *t)
{
	struct cpu_state *cs = cpu_state();

	if (cs) {
		if (cs->hrt_hard == (__u64)t)
			cs->hrt_hard = 0;
		else if (cs->hrt_soft == (__u64)t)
			cs->hrt_soft = 0;
	}
	return 0;
}

/*
 * Quirk: the hrtimer_cancel tracepoint is really "deactivate".  It also
 * fires from __run_hrtimer() right before every expiry (and on re-arm).
 * The expiry case runs in hard/soft irq context while a user-armed timer is
 * cancelled from task context, so only task-context cancels count.
 */
SEC("raw_tp/hrtimer_cancel")
int BPF_PROG(on_hrt_cancel, struct hrtimer *t_raw)
{
	__u64 timer = (__u64)t_raw;
	struct ae_hrtimer *e;
	struct tbatch *b;
	__u32 *owner;

	if (cur_ctx() != AE_CTX_TASK)
		return 0;
	owner = bpf_map_lookup_elem(&timers, &timer);
	if (!owner)
		return 0;
	e = hrt_rec(&b, AE_HRT_CANCEL, timer, (__u64)KPTR(hrtimer, t_raw)->function,
		    AE_CTX_TASK);
	if (e) {
		e->owner_tid = *owner;
		submit(b, e);
	}
	bpf_map_delete_elem(&timers, &timer);
	return 0;
}

/* ---- interrupts and kernel work ---------------------------------------- */
static __always_inline void irq_rec(__u16 type, __u32 vec, __s32 ret, __u16 ctxk)
{
	struct tbatch *b;
	struct ae_irq *e = RESERVE(&b, type, struct ae_irq, ctxk);

	if (!e)
		return;
	e->vector = vec;
	e->ret = ret;
	submit(b, e);
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->irq = irq;
	if (!no_irq)
		irq_rec(AE_IRQ_ENTRY, irq, 0, AE_CTX_HARDIRQ);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->irq = AE_VEC_NONE;
	if (!no_irq)
		irq_rec(AE_IRQ_EXIT, irq, ret, AE_CTX_HARDIRQ);
	return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->softirq = vec;
	if (!no_irq)
		irq_rec(AE_SOFTIRQ_ENTRY, vec, 0, AE_CTX_SOFTIRQ);
	return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->softirq = AE_VEC_NONE;
	if (!no_irq)
		irq_rec(AE_SOFTIRQ_EXIT, vec, 0, AE_CTX_SOFTIRQ);
	return 0;
}

/*
 * x86 APIC system interrupts (IPIs, irq_work, the local timer) bypass
 * irq_handler_entry; their own tracepoints say which one is running, so a
 * wake-up from inside one names its vector instead of none.  The entry and
 * exit tracepoints of each pass the vector number.
 */
static __always_inline int apic_enter(int vector)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->apic = AE_VEC_APIC | ((__u32)vector & 0xff);
	return 0;
}

static __always_inline int apic_leave(void)
{
	struct cpu_state *cs = cpu_state();

	if (cs)
		cs->apic = 0;
	return 0;
}

#define APIC_VECTOR_PROGS(name)						\
SEC("raw_tp/" #name "_entry")						\
int BPF_PROG(on_##name##_entry, int vector) { return apic_enter(vector); } \
SEC("raw_tp/" #name "_exit")						\
int BPF_PROG(on_##name##_exit, int vector) { return apic_leave(); }

/* The local timer also bounds a batch's age where no append checks it:
 * a CPU that runs user code appends nothing, and its tick (every 4 ms
 * while it is busy) moves a batch older than BATCH_AGE_NS into the ring
 * unless its task was interrupted in the middle of an append.  So no
 * batch gets much older than BATCH_AGE_NS + a tick, which the
 * collector's emit grace relies on (collector.c, EMIT_GRACE_NS). */
SEC("raw_tp/local_timer_entry")
int BPF_PROG(on_local_timer_entry, int vector)
{
	struct tbatch *b = tbatch();

	if (b && b->hdr.count && bpf_ktime_get_ns() - b->first_ts > BATCH_AGE_NS)
		batch_flush_idle(b, BPF_RB_NO_WAKEUP);
	return apic_enter(vector);
}
SEC("raw_tp/local_timer_exit")
int BPF_PROG(on_local_timer_exit, int vector) { return apic_leave(); }
APIC_VECTOR_PROGS(reschedule)
APIC_VECTOR_PROGS(call_function)
APIC_VECTOR_PROGS(call_function_single)
APIC_VECTOR_PROGS(irq_work)

/* Work items run in kworker threads: task context. */
SEC("raw_tp/workqueue_execute_start")
int BPF_PROG(on_wq_start, struct work_struct *work)
{
	struct ae_wq *e;
	struct tbatch *b;

	if (no_irq)
		return 0;
	e = RESERVE(&b, AE_WQ_START, struct ae_wq, AE_CTX_TASK);
	if (!e)
		return 0;
	e->work = (__u64)work;
	e->function = (__u64)KPTR(work_struct, work)->func;
	submit(b, e);
	return 0;
}

SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(on_wq_end, struct work_struct *work, work_func_t function)
{
	struct ae_wq *e;
	struct tbatch *b;

	if (no_irq)
		return 0;
	e = RESERVE(&b, AE_WQ_END, struct ae_wq, AE_CTX_TASK);
	if (!e)
		return 0;
	e->work = (__u64)work;
	e->function = (__u64)function;
	submit(b, e);
	return 0;
}

/* ---- CPU sampler -------------------------------------------------------- */
/*
 * Attached by user space to a PERF_COUNT_SW_CPU_CLOCK event per CPU; runs
 * from the perf hrtimer (hardirq).  Only user tasks: idle and kernel threads
 * have no user stack.  ctx->regs are the interrupted registers: user ones
 * if the tick hit user mode (cs & 3), else kernel ones, and then the user
 * registers are the task's saved entry frame.
 */
#define CTX_REG(ctx, reg) ({						\
	__u64 v_;								\
	asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(v_) : "r"(ctx),		\
		     "i"(__builtin_offsetof(struct bpf_perf_event_data, regs) +	\
			 __builtin_offsetof(struct pt_regs, reg)));		\
	v_;								\
})

/* The user registers at a perf event (the sampler, a watchpoint hit):
 * ctx's own when the CPU was in user mode, else the task's entry frame.
 * The verifier wants perf_event ctx loads as single 8-byte loads at a
 * constant offset from the unmodified ctx register; clang likes to fold
 * the offsets into a derived pointer, so CTX_REG spells them in asm.  cs
 * is loaded as its whole 8-byte slot (a u16 in a union since FRED, an
 * unsigned long before). */
static __always_inline void ctx_user_regs(struct bpf_perf_event_data *ctx, __u64 *ip,
					  __u64 *sp, __u64 *bp)
{
	if (CTX_REG(ctx, cs) & 3) {
		*ip = CTX_REG(ctx, ip);
		*sp = CTX_REG(ctx, sp);
		*bp = CTX_REG(ctx, bp);
	} else {
		struct pt_regs *r = user_regs(bpf_get_current_task_btf());

		*ip = r->ip;
		*sp = r->sp;
		*bp = r->bp;
	}
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct ae_sample *e;
	__u64 ip, sp, bp;
	__u32 size;
	__u8 *buf;

	if ((__u32)pt == 0 || (pt >> 32) == self_tgid)
		return 0;
	if (!user_task(bpf_get_current_task_btf()))
		return 0;
	buf = scratch_buf(1);
	if (!buf)
		return 0;
	ctx_user_regs(ctx, &ip, &sp, &bp);
	e = (void *)buf;
	fill_hdr(&e->h, AE_SAMPLE, 0, cur_ctx(), pt);
	size = add_ustack(buf, sizeof(*e), buf + FP_WIN_OFF, ip, sp, bp, sample_copy);
	e->h.size = size;
	output(buf, size);
	return 0;
}

/* ---- hardware watchpoints ---------------------------------------------- */
/*
 * Attached by collector/hw_watch.c to PERF_TYPE_BREAKPOINT (HW_BREAKPOINT_W)
 * events, one per thread of a watched process.  Runs from the debug trap
 * (#DB) that follows the write: the write is done, so the watched bytes
 * hold the new value.  ctx->regs are user registers when the writer was
 * in user mode; when the kernel wrote to the user address (a syscall
 * filling a buffer) they are kernel ones and the user registers are the
 * task's entry frame, as for the sampler.
 *
 * Verified on this machine's kernel (6.18): a perf_event program runs on
 * breakpoint events, and the inherited copies of the event in threads
 * cloned later run it too.  Quirk: the link's bpf_cookie cannot carry the
 * watch: once the watched thread clones, bpf_get_attach_cookie() on its
 * own (parent) event reads 0 while the child's copy keeps the value.  So
 * the watch is looked up by (tgid, breakpoint address) in hw_watches,
 * which also drops hits in a forked child process that inherited the
 * event (its tgid is not the watched one).
 */
SEC("perf_event")
int on_watch(struct bpf_perf_event_data *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct ae_hw_key key = {};
	struct ae_hw_val *wv;
	struct ae_hwwatch *e;
	__u64 ip, sp, bp, addr, v = 0;
	__u32 size, len;
	__u8 *buf;

	/* data->addr of a breakpoint sample is the breakpoint's address
	 * (perf_bp_event() inits the sample with bp_addr); a ctx load, spelt
	 * in asm for the same reason as CTX_REG */
	asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(addr) : "r"(ctx),
		     "i"(__builtin_offsetof(struct bpf_perf_event_data, addr)));
	key.pid = pt >> 32;
	key.addr = addr;
	wv = bpf_map_lookup_elem(&hw_watches, &key);
	if (!wv)
		return 0;
	len = wv->len;
	buf = scratch_buf(2);
	if (!buf)
		return 0;
	ctx_user_regs(ctx, &ip, &sp, &bp);
	e = (void *)buf;
	fill_hdr(&e->h, AE_HWWATCH, 0, AE_CTX_TASK, pt);
	e->addr = addr;
	e->ip = ip;
	e->len = len;
	e->watch_id = wv->watch_id;
	e->reader = wv->reader;
	if (len > 8)
		len = 8;
	if (len == 0)
		len = 1;
	e->value_ok = !bpf_probe_read_user(&v, len, (void *)addr);
	e->value = e->value_ok ? v : 0;
	size = add_ustack(buf, sizeof(*e), buf + FP_WIN_OFF, ip, sp, bp, sample_copy);
	e->h.size = size;
	output(buf, size);
	return 0;
}
