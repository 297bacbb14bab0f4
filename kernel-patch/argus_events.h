/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * argus_events.h - the raw records the BPF programs hand to user space.
 *
 * This is the one header shared by kernel-patch/ (the .bpf.c files),
 * collector/ and the interposer.  It holds only fixed-width types and
 * no pointers, so the same bytes mean the same thing on both sides.
 *
 * Every record starts with struct ae_hdr.  `size` is the whole record in
 * bytes, header included, so a reader can skip a type it does not know.
 * Records with a user stack carry a struct ae_ustack tail whose ips[] and
 * stack copy are variable-length; `size` covers them.
 *
 * Units and invariants:
 *   - ts is CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns()).
 *   - tid is the kernel's task pid, pid is its tgid.  tid 0 is the idle task.
 *   - h.tid/h.pid is the *current* task when the event fired, i.e. the waker
 *     for AE_WAKING, the task switching out for AE_SWITCH, the arming task
 *     for AE_HRT_START.  The subject of the event (woken task, next task) is
 *     in the body.
 *   - h.ctx says in which context the program ran (AE_CTX_*), read from the
 *     per-CPU preempt count (x86 has no thread_info.preempt_count; the
 *     __preempt_count ksym cannot be used without CONFIG_KALLSYMS_ALL, so
 *     argus.bpf.c locates it from this CPU's struct rq plus the BTF
 *     per-CPU offsets).  Programs that only run in task context (syscalls,
 *     sched_switch, exec/fork/exit) set AE_CTX_TASK without reading it.
 *   - kernel-pointer fields (hrtimer, file, work, function) are identities
 *     only; never dereference them in user space.
 */
#ifndef ARGUS_EVENTS_H
#define ARGUS_EVENTS_H

#ifdef __BPF__
/* vmlinux.h supplies __u8..__u64 */
#else
#include <linux/types.h>
#endif

#define AE_COMM_LEN 16
#define AE_MAX_USTACK 32        /* frames kept from bpf_get_stack(USER) */
#define AE_MAX_STACK_COPY 4096  /* upper bound of the raw user-stack copy */
#define AE_PATH_LEN 128         /* exec filename, truncated */

enum ae_type {
	AE_NONE = 0,
	/* scheduler */
	AE_SWITCH = 1,      /* h = prev (current); body: next, blocking syscall */
	AE_WAKING = 2,      /* h = waker (current, maybe idle/irq); body: target */
	AE_WAKEUP_NEW = 3,  /* h = parent; body: new child task */
	AE_FORK = 4,        /* sched_process_fork: h = parent; body: child */
	AE_EXEC = 5,        /* sched_process_exec: h = task after exec */
	AE_EXIT = 6,        /* sched_process_exit: h = exiting task */
	AE_FREE = 7,        /* sched_process_free: body: freed tid */
	AE_RENAME = 8,      /* task_rename: h = renamed task (usually current) */
	/* syscalls (filtered in the kernel to the documented set) */
	AE_SYS_ENTER = 9,
	AE_SYS_EXIT = 10,
	/* timers */
	AE_HRT_START = 11,  /* h = arming task (user tasks, task context only) */
	AE_HRT_EXPIRE = 12, /* h = whoever was interrupted (often idle) */
	AE_HRT_CANCEL = 13,
	/* interrupts and kernel work */
	AE_IRQ_ENTRY = 14,
	AE_IRQ_EXIT = 15,
	AE_SOFTIRQ_ENTRY = 16,
	AE_SOFTIRQ_EXIT = 17,
	AE_WQ_START = 18,
	AE_WQ_END = 19,
	/* stacks */
	AE_SAMPLE = 20,     /* CPU sampler (perf_event program) + ae_ustack */
	/* data flags */
	AE_HWWATCH = 21,    /* a write hit a hardware watchpoint (`argus
	                       watch`; perf_event program) + ae_ustack */
	/* work items, from the interposer (AIP_WORK_*; never from BPF) */
	AE_WORK_ENQUEUE = 22,   /* an item handed to a queue or main loop */
	AE_WORK_BEGIN = 23,     /* the item starts running on this thread */
	AE_WORK_END = 24,       /* ... and ends */
	AE_WORK_BOUNDARY = 25,  /* argus_work_boundary(): a cut, no item */
	/* 26, 27: never assigned; tests use 27 as the type a reader does not
	 * know (test_trace_format, test_tracegen, fuzz_trace_seeds) */
	AE_LIVE_HIT = 28,   /* a function entry under `argus instrument --via
	                       uprobe` ran (interposer/live/live_uprobe.bpf.c) */
	/* records produced in user space, never by BPF */
	AE_MARK = 32,       /* `argus mark TEXT` */
	AE_LOST = 33,       /* lost-record counter for a CPU */
	/* from the interposer (interposer/, docs/interposer.md): written by
	 * the traced process into its shared ring, validated by argusd */
	AE_MUTEX_WAIT = 34,     /* a pthread mutex was busy: the thread waits */
	AE_MUTEX_ACQUIRED = 35, /* that wait ended (acquired, or an error) */
	AE_MUTEX_WAKE = 36,     /* an unlock that had waiters */
	/* (the same three carry rwlocks, semaphores and condition variables:
	 * field 2 is the kind, enum ae_sync_kind, 0 = mutex in older traces) */
	AE_TYPE_MAX = 40,
};

/*
 * AE_BATCH: not an event but a container, only ever in the BPF ring.  A
 * CPU's task-context records are appended to a per-CPU batch and moved into
 * the ring together (kernel-patch/argus.bpf.c, "batches"); the loader
 * (collector/bpf_probe.c) unpacks it, so no consumer of records sees it.
 * Body: struct ae_batch, then `count` records back to back, each starting
 * at a multiple of 8 bytes from the body's start (h.size of each is exact).
 */
#define AE_BATCH 0x7ffe

/* In which context the program ran: from the per-CPU preempt count. */
enum ae_ctx {
	AE_CTX_TASK = 0,
	AE_CTX_SOFTIRQ = 1,
	AE_CTX_HARDIRQ = 2,
	AE_CTX_NMI = 3,
};

/* What an AE_MUTEX_* record is about (its field 2; 0 in traces written
 * before rwlocks, semaphores and condition variables were recorded). */
enum ae_sync_kind {
	AE_SYNC_MUTEX = 0,
	AE_SYNC_RDLOCK = 1,  /* a pthread rwlock, as a reader */
	AE_SYNC_WRLOCK = 2,  /* a pthread rwlock, as a writer */
	AE_SYNC_SEM = 3,     /* sem_wait / sem_post */
	AE_SYNC_COND = 4,    /* pthread_cond_wait / signal / broadcast */
	AE_SYNC_KIND_MAX,
};

/* Kind of kernel object an fd refers to (ae_obj.kind). */
enum ae_obj_kind {
	AE_OBJ_NONE = 0,
	AE_OBJ_PIPE = 1,     /* pipe or FIFO: obj = inode, both ends share it */
	AE_OBJ_UNIX = 2,     /* AF_UNIX socket: obj = own inode, peer = peer's */
	AE_OBJ_TCP = 3,      /* obj = local ip:port, peer = remote ip:port */
	AE_OBJ_UDP = 4,      /* as TCP */
	AE_OBJ_EVENTFD = 5,  /* anon inode is shared: obj = struct file address */
	AE_OBJ_TIMERFD = 6,  /* as eventfd */
	AE_OBJ_EPOLL = 7,    /* as eventfd */
	AE_OBJ_FILE = 8,     /* regular file / other inode: obj = dev<<32^ino */
	AE_OBJ_SOCK = 9,     /* other socket family: obj = own inode */
	AE_OBJ_OTHER = 10,
	AE_OBJ_FLAG = 11,    /* never from BPF: the graph's name for a watched
	                        address (AE_HWWATCH): obj = address, peer = pid */
	AE_OBJ_MUTEX = 12,   /* never from BPF: a pthread mutex named by the
	                        interposer: obj = address, peer = pid */
	AE_OBJ_SEM = 13,     /* never from BPF: a sem_t (interposer), as MUTEX
	                        (rwlocks are AE_OBJ_MUTEX: a lock with holders) */
	AE_OBJ_COND = 14,    /* never from BPF: a pthread_cond_t, as MUTEX */
	AE_OBJ_WORK = 15,    /* never from BPF: a work item named by the
	                        interposer (AE_WORK_*): obj = address, peer = pid */
};

/*
 * Identity of the kernel object behind an fd.  A send on one end matches
 * the receive on the other when send.obj == recv.peer and
 * send.peer == recv.obj (sockets), or when obj is equal (pipes, eventfd).
 * For TCP/UDP the endpoints are packed as (ipv4 << 16 | port).
 */
struct ae_obj {
	__u32 kind;  /* enum ae_obj_kind */
	__u32 pad;
	__u64 obj;
	__u64 peer;
};

struct ae_hdr {
	__u64 ts;    /* CLOCK_MONOTONIC ns */
	__u32 tid;   /* current task */
	__u32 pid;   /* its tgid */
	__u16 type;  /* enum ae_type */
	__u16 size;  /* whole record, bytes */
	__u16 cpu;
	__u16 ctx;   /* enum ae_ctx */
};

struct ae_batch {
	struct ae_hdr h;  /* type AE_BATCH; ts = its first record's; tid, pid 0 */
	__u32 count;      /* records that follow */
	__u32 len;        /* their bytes, 8-byte padding included */
};

/*
 * User-stack tail: frame-pointer ips from bpf_get_stack(BPF_F_USER_STACK),
 * plus the user registers and a bounded copy of the top of the user stack
 * for offline DWARF unwinding with libdw (like perf --call-graph dwarf).
 * Layout in the record: this struct, then ips[nr_ips], then copy_len bytes.
 */
struct ae_ustack {
	__u16 nr_ips;    /* <= AE_MAX_USTACK */
	__u16 copy_len;  /* bytes of stack copy that follow ips[] */
	__u32 pad;
	__u64 ip, sp, bp; /* user registers at the event (0 if unknown) */
	/* __u64 ips[nr_ips]; __u8 copy[copy_len]; */
};

struct ae_switch {
	struct ae_hdr h;    /* h.tid = prev task */
	__u32 next_tid;
	__u32 next_pid;
	__s64 prev_state;   /* task state bits; 0 = preempted (still runnable) */
	__s32 sys_nr;       /* syscall prev blocks in; -1 if not in a syscall
	                       (or preempted, or a kernel thread) */
	__u32 pad;
	__u64 sys_arg;      /* key arg: futex uaddr, fd, or timeout ns
	                       (~0 = no timeout; clock_nanosleep with
	                       TIMER_ABSTIME gives the absolute time) */
	struct ae_obj obj;  /* object behind the fd, when sys_arg is an fd */
	char next_comm[AE_COMM_LEN];
	/* a struct ae_ustack tail follows when a user task blocks (not for the
	   collector itself nor for a task's final TASK_DEAD switch) */
};

struct ae_waking {
	struct ae_hdr h;    /* h.tid = waker (current; 0 = idle) */
	__u32 target_tid;
	__u32 target_pid;
	__u32 target_cpu;   /* CPU the target last ran on (before placement) */
	__u32 vector;       /* irq number or softirq vector when ctx != TASK,
	                       AE_VEC_HRTIMER inside an hrtimer expiry,
	                       AE_VEC_APIC | x86 vector inside an APIC system
	                       interrupt (IPIs, irq_work, the local timer);
	                       AE_VEC_NONE in task context, and in irq context
	                       outside any handler we track (the softirq
	                       loop's own ksoftirqd wake-up) */
	__u64 hrtimer;      /* hrtimer being expired on this CPU, else 0 */
};
#define AE_VEC_NONE 0xffffffffu
#define AE_VEC_HRTIMER 0xfffffffeu
/* x86 system vectors, from the irq_vectors tracepoints (they do not go
 * through irq_handler_entry): AE_VEC_APIC | vector, vector < 0x100. */
#define AE_VEC_APIC 0x10000u
#define AE_APIC_LOCAL_TIMER 0xec
#define AE_APIC_RESCHEDULE 0xfd
#define AE_APIC_CALL_FUNCTION 0xfc
#define AE_APIC_CALL_FUNCTION_SINGLE 0xfb
#define AE_APIC_IRQ_WORK 0xf6

struct ae_task {            /* AE_WAKEUP_NEW, AE_FORK, AE_FREE */
	struct ae_hdr h;
	__u32 child_tid;
	__u32 child_pid;
	__u64 clone_flags;  /* 0 when unknown */
	char comm[AE_COMM_LEN];
};

struct ae_exec {
	struct ae_hdr h;
	__u32 old_tid;      /* tid before de_thread() */
	__u32 pad;
	char comm[AE_COMM_LEN];
	char filename[AE_PATH_LEN];
};

struct ae_exit {
	struct ae_hdr h;
	__s32 exit_code;    /* task->exit_code (wait status form) */
	__u32 group_dead;   /* 1 when this was the last thread of the process */
};

struct ae_rename {
	struct ae_hdr h;
	char comm[AE_COMM_LEN];
};

struct ae_sys_enter {
	struct ae_hdr h;
	__s64 nr;
	__u64 args[6];
};

/*
 * Lock requests in AE_SYS_ENTER.  flock(fd, op) needs nothing more: its
 * args are the request.  fcntl(fd, cmd, struct flock *) with a lock cmd
 * (F_SETLK/F_SETLKW/F_OFD_SETLK/F_OFD_SETLKW) has the lock type and range
 * in user memory, so the entry program reads them and stores them in
 * args[3..5], which fcntl (a 3-argument call) leaves meaningless; args[0..2]
 * stay the registers (fd, cmd, the struct's address):
 *   args[3] = AE_LOCK_TAG | (__u16)l_whence << 16 | (__u16)l_type
 *   args[4] = l_start, args[5] = l_len   (as the caller wrote them)
 * The tag says the read worked; without it (the page was not there) the
 * request's type is unknown.  Other fcntl cmds keep the raw registers and
 * cost no user read.
 */
#define AE_LOCK_TAG 0x4c4b00000000ull  /* "LK" above bit 32 */
#define AE_LOCK_TAG_MASK 0xffffffff00000000ull
#define AE_F_SETLK 6           /* fcntl lock cmds (x86_64 and generic) */
#define AE_F_SETLKW 7
#define AE_F_OFD_SETLK 37
#define AE_F_OFD_SETLKW 38

struct ae_sys_exit {
	struct ae_hdr h;
	__s64 nr;
	__s64 ret;
	__u64 arg0;         /* the fd (or first arg) the call used */
	struct ae_obj obj;  /* for fd-based calls: the object of arg0; for
	                       accept/accept4/eventfd2/timerfd_create the object
	                       of the returned fd; for pipe2/socketpair that of
	                       fds[0]; kind NONE otherwise */
};

struct ae_hrtimer {         /* AE_HRT_START / EXPIRE / CANCEL */
	struct ae_hdr h;
	__u64 timer;        /* struct hrtimer address: the timer's identity */
	__u64 function;     /* its callback (kernel address) */
	__s64 expires;      /* absolute expiry, ns, in the timer's clock
	                       (START only; REALTIME timers are wall-clock) */
	__u32 mode;         /* hrtimer mode (START only) */
	__u32 owner_tid;    /* task that armed it (EXPIRE/CANCEL: from map) */
};

struct ae_irq {             /* AE_IRQ_*, AE_SOFTIRQ_* */
	struct ae_hdr h;
	__u32 vector;       /* irq number or softirq vector */
	__s32 ret;          /* handler return (IRQ_EXIT) */
};

struct ae_wq {              /* AE_WQ_START / AE_WQ_END */
	struct ae_hdr h;
	__u64 work;
	__u64 function;
};

struct ae_sample {
	struct ae_hdr h;
	/* struct ae_ustack tail follows */
};

/*
 * AE_HWWATCH: one write to a watched address (collector/hw_watch.c arms a
 * PERF_TYPE_BREAKPOINT / HW_BREAKPOINT_W event per thread of the watched
 * process, with this program attached).  x86 debug traps fire *after* the
 * writing instruction, so ip is the instruction after the write and value
 * is what the write left in memory.  h is the writing task; h.ctx is
 * AE_CTX_TASK: the write is the task's own even when the trap is taken
 * while the kernel writes to user memory (copy_to_user).
 */
struct ae_hwwatch {
	struct ae_hdr h;
	__u64 addr;         /* the watched address */
	__u64 value;        /* the len bytes at addr after the write,
	                       little-endian, zero-extended */
	__u64 ip;           /* user ip after the writing instruction */
	__u32 len;          /* 1, 2, 4 or 8 */
	__u32 watch_id;     /* `argus watch --list` id */
	__u32 value_ok;     /* 0: the bytes could not be read (value 0) */
	__u32 reader;       /* the tid `argus watch --reader` named as the
	                       thread that spins on this flag, 0 none (the
	                       graph then finds readers by behaviour) */
	/* struct ae_ustack tail follows */
};
/* The watches map (argus.bpf.c): which (process, address) is watched.
 * Kept by collector/hw_watch.c; a hit whose (tgid, bp address) is not in it
 * (a forked child that inherited the event) is dropped. */
struct ae_hw_key {
	__u32 pid;          /* tgid */
	__u32 pad;          /* 0 */
	__u64 addr;
};
struct ae_hw_val {
	__u32 watch_id;
	__u32 len;
	__u32 reader;       /* named reader tid, 0 none (ae_hwwatch.reader) */
	__u32 pad;          /* 0 */
};
#define AE_HW_MAX_WATCHES 256

/*
 * The interposer's shared-memory ring (interposer/libargus-interpose.so ->
 * argusd; docs/interposer.md).  A traced process creates a sealed memfd of
 * AIP_RING_BYTES, lays it out as below and passes it to argusd over
 * <run dir>/interpose.sock.  Everything in it is written by an untrusted
 * process: argusd maps it read-only, copies a slot out before looking at
 * it, and validates every field (collector/interpose_ring.c).
 *
 *   page 0     struct aip_ring_hdr
 *   page 1..   AIP_NSLOTS slots of struct aip_rec (64 bytes each)
 *
 * Writers (any thread of the process) reserve a slot with an atomic
 * fetch-add on hdr.head; slot i of reservation r is r % AIP_NSLOTS.  A
 * slot is published seqlock-style: seq = 0 (release), the fields, then
 * seq = r + 1 (release).  The ring never blocks the process: a writer
 * that laps the reader overwrites, and argusd counts what it missed.
 */
#define AIP_MAGIC 0x31504941u           /* "AIP1" */
#define AIP_VERSION 1
#define AIP_NSLOTS 1024
#define AIP_HDR_BYTES 4096
#define AIP_RING_BYTES (AIP_HDR_BYTES + AIP_NSLOTS * 64)

enum aip_type {
	AIP_MUTEX_WAIT = 1,     /* addr, other = holder tid (0 unknown); arg 0 */
	AIP_MUTEX_ACQUIRED = 2, /* addr, other = 0 or the lock's errno */
	AIP_MUTEX_WAKE = 3,     /* addr; other = 0 */
	/* rwlocks, semaphores, condition variables (docs/interposer.md);
	 * argusd stores them as AE_MUTEX_* with a kind (enum ae_sync_kind) */
	AIP_RW_RDWAIT = 4,      /* rwlock; other = writer tid (0 none), arg =
	                           readers registered (< 2^29) */
	AIP_RW_WRWAIT = 5,      /* as RDWAIT */
	AIP_RW_RDACQUIRED = 6,  /* other = 0 or the lock's errno; arg 0 */
	AIP_RW_WRACQUIRED = 7,  /* as RDACQUIRED */
	AIP_RW_RDUNLOCK = 8,    /* a read unlock that had waiters; other 0 */
	AIP_RW_WRUNLOCK = 9,    /* a write unlock that had waiters; other 0 */
	AIP_SEM_WAIT = 10,      /* sem_t; other 0 (no holder); arg 0 */
	AIP_SEM_ACQUIRED = 11,  /* other = 0 or errno; arg 0 */
	AIP_SEM_POST = 12,      /* other = waiters glibc counted (> 0) */
	AIP_COND_WAIT = 13,     /* cond; other 0; arg = the mutex (non-zero) */
	AIP_COND_RETURN = 14,   /* other = 0 or errno; arg = the mutex */
	AIP_COND_SIGNAL = 15,   /* other = waiters glibc counted (> 0), arg =
	                           0 signal, 1 broadcast */
	/* work items (interposer/work.c, glib.c): addr = the item (non-zero),
	 * other = enum aip_work_kind, arg = the callback that runs it (0
	 * unknown) */
	AIP_WORK_ENQUEUE = 16,
	AIP_WORK_BEGIN = 17,
	AIP_WORK_END = 18,
	AIP_WORK_BOUNDARY = 19, /* addr = a tag; other = AIP_WORK_API; arg 0 */
	AIP_TYPE_MAX,
};

/* Who made a work item (aip_rec.other of AIP_WORK_*). */
enum aip_work_kind {
	AIP_WORK_API = 0,       /* argus_work_*() called by the program */
	AIP_WORK_IDLE = 1,      /* g_idle_add*: item = the interposer's wrapper */
	AIP_WORK_TIMEOUT = 2,   /* g_timeout_add*: as idle */
	AIP_WORK_SOURCE = 3,    /* g_source_attach: item = the GSource */
	AIP_WORK_POOL = 4,      /* g_thread_pool_push: item = the data pointer */
	AIP_WORK_TASK = 5,      /* g_task_run_in_thread*: item = the GTask */
	AIP_WORK_KIND_MAX,
};

struct aip_ring_hdr {
	__u32 magic;            /* AIP_MAGIC */
	__u32 version;          /* AIP_VERSION */
	__u32 nslots;           /* AIP_NSLOTS (argusd uses its own constant) */
	__u32 slot_size;        /* sizeof(struct aip_rec) */
	__u8 pad[48];
	__u64 head;             /* reservations so far (own cache line) */
};

struct aip_rec {
	__u64 seq;              /* reservation number + 1 once published; 0
	                           while being written */
	__u64 ts;               /* CLOCK_MONOTONIC ns */
	__u64 addr;             /* the mutex's address (identity only) */
	__u32 tid;              /* the writing thread (gettid()) */
	__u32 other;            /* per type, see enum aip_type */
	__u16 type;             /* enum aip_type */
	__u16 size;             /* sizeof(struct aip_rec) */
	__u16 cpu;              /* sched_getcpu() at the time, a hint */
	__u16 flags;            /* 0 (reserved) */
	__u64 arg;              /* per type, see enum aip_type; 0 where unused */
	__u8 reserved[16];      /* 0 */
};

/* Settings the loader writes into .rodata before load. */
#define AE_SYSCALL_WORDS 8  /* bitmap of 512 syscall numbers */
/* The BPF side's per-syscall word (sys_class[nr], AE_SYSCALL_WORDS * 64 of
 * them): the syscall's classes from syscalls/syscall_class.h (ARGUS_SC_*,
 * which leave these two bits free) and what this run records of it. */
#define AE_SYS_TRACED (1u << 31)   /* its exits are recorded */
#define AE_SYS_ENTRY  (1u << 30)   /* its entries too */

/* AE_LIVE_HIT: h = the thread that entered the function.  Written by
 * interposer/live/live_uprobe.bpf.c into argusd's ring (the same rb map),
 * so it is merged like any BPF record. */
struct ae_live_hit {
	struct ae_hdr h;
	__u64 func;   /* the function's entry address in the process */
	__u64 item;   /* its first argument (rdi): the work item */
	__u32 kind;   /* what `--as` said: 1 boundary 2 enqueue 3 begin 4 end */
	__u32 pad;    /* 0 */
};

#endif /* ARGUS_EVENTS_H */
