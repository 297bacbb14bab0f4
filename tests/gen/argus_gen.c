/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus-gen - write a large, realistic, internally consistent system-wide
 * trace by simulating a small machine.
 *
 *   argus-gen -o FILE --events N [--seed S] [--cpus C] [--procs P]
 *             [--threads-per-proc T] [--chunk-events K] [--zlevel L]
 *             [--zlib] [--ui-hang]
 *
 * The file holds exactly N events.  Deterministic for a given seed (and the
 * same options).  See docs/trace-format.md, "Synthetic traces (tests/gen)".
 * --ui-hang adds five tasks that play one cross-process UI hang with a
 * known culprit inside that background, and prints its ground truth on
 * stdout as KEY=VALUE lines (section "--ui-hang" below); without it the
 * output is the same as if the option did not exist.
 *
 * The machine: C CPUs, each with a run queue; P processes of T threads
 * (thread 0 an event loop, threads 1..T-1 workers), per-CPU kernel threads
 * (migration/N, ksoftirqd/N, kworker/N:1), rcu_preempt, and the idle task
 * (tid 0).  A discrete-event simulation: every CPU has a next time (its
 * running task's next step, an interrupt in progress, its tick, sampler,
 * NIC interrupt, and a min-heap of timed interrupts: hrtimer expiries and
 * disk completions); the CPU with the smallest one goes next.  Each step
 * writes one to four records at strictly increasing timestamps, so the
 * reader returns them in the order the simulation made them, and:
 *   - a task runs on one CPU between its switch-in and its switch-out;
 *   - a blocked task gets exactly one waking (from the task, timer or
 *     interrupt that wakes it) and is switched in after it;
 *   - syscalls are sys_enter/sys_exit pairs around the block;
 *   - bytes read from a pipe were written to it before; a unix socket
 *     receive matches a send with obj/peer swapped; futex waits and wakes
 *     use the same address in one process; timed waits arm an hrtimer
 *     that either expires (then the wake-up is a hard-irq waking with
 *     vector AE_VEC_HRTIMER and that timer) or is cancelled by the waiter.
 *
 * Work: event loops wait in epoll_wait/poll (a quarter of them with a
 * timeout).  On a timeout they post work items to their workers (queue +
 * one futex wake for as many waiters as items); on input they read their
 * pipe, answer unix-socket requests, or read a TCP socket (woken by the
 * NET_RX softirq).  Workers take an item (futex wait when the queue is
 * empty) and run a plan: compute, a futex mutex, a file read (a disk
 * interrupt wakes kworker/N, or the read queues work to it; kworker
 * then wakes the reader), a request/reply to another
 * process's loop over a unix socketpair, nanosleep, a write to the next
 * process's pipe (blocking when it is full), rarely fork+wait4 of a short
 * child that execs, writes and exits.
 *
 * Exactly N events: when N minus a reserve (12 events per running or
 * runnable task, 16 per CPU, 64) is reached the machine winds down: no
 * new interrupts or wake-ups; running and runnable tasks finish their
 * step and park (a futex wait nobody wakes).  When every CPU is
 * idle, the rest is filled with idle timer interrupts (and one mark if an
 * odd number is left).  If N is too small for that (below a few thousand),
 * the file is cut at exactly N and the summary says "tail cut".
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracegen.h"

#define INF UINT64_MAX
#define US 1000ull
#define MS 1000000ull

/* Knobs of the model (ns).  With the probabilities in the programs below
 * they give, by event count: ~48% syscalls, ~20% switches, ~14% wakings,
 * ~8% irq/softirq, ~5.5% hrtimer, ~2% samples, ~2.5% workqueue, fork,
 * exec, exit, free (2 CPUs, 40 x 4 threads: about 52-60% busy). */
#define T0 1000000000ull          /* first timestamp */
#define TICK (4 * MS)             /* HZ=250, only while a CPU is busy */
#define SLICE (3 * MS)
#define SAMPLE_PERIOD (281 * US)  /* the CPU sampler, ~3.6 kHz */
#define NIC_MEAN (720 * US)       /* mean gap of NIC interrupts, per CPU */
#define LOOP_TIMEOUT_MIN (2 * MS)
#define LOOP_TIMEOUT_MAX (40 * MS)
#define PIPE_CAP 65536u
#define NIC_IRQ 24
#define DISK_IRQ 40
#define VEC_TIMER_SOFTIRQ 1
#define VEC_NET_RX 3
#define VEC_RCU 9
#define HRTIMER_WAKEUP_FN 0xffffffff811a2b30ull
#define WQ_FN 0xffffffff8152c3d0ull
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define HRTIMER_MODE_ABS 0
#define HRTIMER_MODE_REL 1
#define UH_NPROC 3                /* --ui-hang's processes (stack pools) */

enum { ST_RUNNING, ST_RUNNABLE, ST_BLOCKED, ST_DEAD, ST_PARKED };
/* roles: user tasks first (R_SCEN: the --ui-hang scenario's threads),
 * then kernel threads from R_KSOFTIRQD on */
enum { R_LOOP, R_WORKER, R_CHILD, R_SCEN, R_KSOFTIRQD, R_KWORKER, R_RCU, R_MIGRATION };
enum { WT_NONE, WT_EPOLL, WT_FUTEX_Q, WT_MUTEX, WT_PIPE_W, WT_RECV, WT_SLEEP, WT_FILE,
       WT_WAIT4, WT_KTHREAD, WT_PARK,
       /* --ui-hang: poll on the input pipe, a condition variable, the
        * table lock (WT_RECV and WT_SLEEP as above) */
       WT_POLL, WT_CV, WT_LOCK };
/* blocking call sites: index of the stack in a process's pool */
enum { SITE_EPOLL, SITE_FUTEX_Q, SITE_MUTEX, SITE_WRITE, SITE_RECV, SITE_SLEEP,
       SITE_FILE, SITE_WAIT4, SITE_PARK, NSITES };
#define POOL 16

/* the steps of the tasks' programs */
enum {
	/* event loop */
	L_START, L_WAIT_DECIDE, L_WOKEN, L_HANDLE, L_PIPE_DONE, L_RECV_DONE,
	L_REPLY, L_REPLY_DONE, L_TCP_DONE, L_TCP_SEND, L_TCP_SEND_DONE,
	L_DISPATCH, L_FWAKE_DONE,
	/* worker */
	W_START, W_FWAIT_DECIDE, W_FWAIT_WOKEN, W_NEXT, W_MWAIT_DECIDE,
	W_MWAIT_WOKEN, W_UNLOCK, W_MWAKE_DONE, W_WRITE_DECIDE, W_WRITE_WOKEN,
	W_RPC_SENT, W_RPC_RECV, W_RPC_RECV_DECIDE, W_RPC_RECV_WOKEN, W_SLEEP_ARM,
	W_SLEEP_WOKEN, W_FILE_DECIDE, W_FILE_WOKEN, W_WAIT4, W_WAIT4_DECIDE,
	W_WAIT4_WOKEN,
	/* forked child */
	C_EXEC, C_WORK, C_WRITE_DONE, C_EXIT,
	/* kernel threads */
	K_RUN, K_SI_NET, K_SI_EXIT, K_WQ_WAKE, K_WQ_END, K_SLEEP,
	/* --ui-hang: sqlclient main (U), query_worker (Q), dbserver main (D),
	 * db_vacuum (V), input (I) */
	U_POLL, U_POLL_DECIDE, U_POLL_WOKEN, U_READ, U_READ_DONE, U_POST,
	U_WAKE_DONE, U_WAIT, U_WAIT_DECIDE, U_WAIT_WOKEN,
	Q_WAIT, Q_WAIT_DECIDE, Q_WAIT_WOKEN, Q_SEND, Q_SEND_DONE, Q_RECV,
	Q_RECV_DECIDE, Q_RECV_WOKEN, Q_DONE, Q_WAKE_DONE,
	D_RECV, D_RECV_DECIDE, D_RECV_WOKEN, D_LOCK, D_LOCK_DECIDE, D_LOCK_WOKEN,
	D_UNLOCK, D_REPLY, D_REPLY_DONE,
	V_NAP, V_NAP_ARM, V_NAP_WOKEN, V_VAC, V_VAC_ARM, V_VAC_WOKEN, V_UNLOCK,
	V_UNLOCK_DONE,
	I_NAP, I_NAP_ARM, I_NAP_WOKEN, I_WRITE, I_WRITE_DONE,
	/* parked for the end of the trace */
	X_PARKED,
};
/* a work item's plan */
enum { P_COMPUTE, P_MUTEX, P_WRITE, P_RPC, P_SLEEP, P_FILE, P_FORK };

struct wlist {
	int32_t head, tail;
	uint32_t n;
};

struct task {
	uint32_t tid, pid;
	uint8_t role, state, wait, pc;
	int16_t cpu;            /* running on / queued on / last ran on */
	int16_t bound;          /* per-CPU kernel thread: its CPU, else -1 */
	int32_t proc;           /* -1: kernel thread, forked child or R_SCEN */
	int32_t pool;           /* user task: its stacks, S.pool[pool * POOL..] */
	int32_t rq_next;        /* run queue link */
	int32_t wnext;          /* wait list link */
	uint64_t t_next;        /* running: time of its next step */
	uint64_t remain;        /* preempted: rest of the step's delay */
	uint64_t run_since;
	/* timed wait */
	uint64_t timer;         /* hrtimer address while armed */
	uint32_t timer_seq;
	bool timer_armed;
	/* current work item / call */
	uint8_t plan[12], nplan, iplan;
	uint32_t len;           /* bytes of the write/send in progress */
	uint32_t ready;         /* loop: sources left to handle */
	uint32_t to_post;       /* loop: items to hand to workers */
	int32_t conn;           /* worker: its connection; loop: the one served */
	int32_t child;          /* worker: the child it waits for */
	int32_t parent;         /* child: the worker that forked it */
	uint32_t iters;         /* child: writes left */
	struct wlist work;      /* kworker: tasks whose I/O completed */
	char comm[AE_COMM_LEN];
};

struct proc {
	uint32_t pid;
	int32_t loop;           /* task index of thread 0 */
	uint64_t qaddr, maddr;  /* work-queue futex, mutex */
	uint64_t epfile;        /* struct file of the epoll fd */
	bool use_poll, has_tcp;
	bool timed;             /* the loop waits with a timeout */
	uint32_t queue_len;
	struct wlist qwait;     /* workers in futex wait on qaddr */
	int32_t mutex_owner;
	struct wlist mwait;
	int32_t in_pipe;        /* read by the loop */
	int32_t out_pipe;       /* written by the workers */
	int32_t *conns;         /* server ends served by the loop */
	uint32_t nconns, conns_ready;
	uint32_t tcp_pending;
	uint64_t tcp_local, tcp_peer, file_obj;
	uint32_t next_fd;
};

struct pipe_ {
	uint64_t ino;
	uint32_t avail;
	int32_t reader_proc;
	uint32_t rfd, wfd;
	struct wlist wwait;     /* writers blocked on a full pipe */
};

struct conn {
	uint64_t cino, sino;    /* client and server socket inodes */
	int32_t client;         /* task */
	int32_t server;         /* proc */
	uint32_t cfd, sfd;
	uint32_t nreq, reqlen;  /* requests not yet received by the server */
	uint32_t reply_len;     /* reply not yet received by the client */
};

struct stk {
	uint64_t ip[8];
	uint32_t n;
};

struct op {
	uint8_t kind;
	uint32_t vec;
	int32_t task;
	uint32_t seq;
	uint32_t dt;            /* ns until the next op */
};
enum { OP_IRQ_ENTRY, OP_IRQ_EXIT, OP_SI_ENTRY, OP_SI_EXIT, OP_WAKE_K, OP_NET_RX,
       OP_RCU, OP_HRT_EXPIRE, OP_DISK_DONE };
#define MAX_OPS 12

struct hent {
	uint64_t t;
	uint64_t order;         /* tie-break: insertion order */
	int32_t task;
	uint32_t seq;           /* timer: the task's timer_seq when armed */
	uint8_t kind;           /* 0 timer, 1 disk completion */
};

struct cpu {
	uint16_t id;
	int32_t curr;           /* task index, -1 = idle */
	int32_t rq_head, rq_tail;
	uint32_t rq_n;
	uint64_t idle_switch_t; /* idle with a queued task: when it switches */
	uint64_t resched_t;     /* preemption due */
	uint64_t tick_t, sample_t, nic_t;
	struct hent *heap;
	uint32_t nheap, heap_cap;
	struct op prog[MAX_OPS];
	uint32_t nprog, iprog;
	uint64_t prog_t, prog_start;
	int32_t ksoftirqd, kworker, migration;
};

static struct sim {
	struct argus_tracegen *g;
	uint64_t target, nev, last_ts, now, order;
	bool winding, stopped, tail_cut;
	uint64_t rs;            /* rng state */
	struct task *t;
	uint32_t nt, tcap;
	struct proc *p;
	uint32_t np, tpp;
	struct pipe_ *pipe;
	struct conn *conn;
	uint32_t nconn;
	struct cpu *cpu;
	uint32_t ncpu;
	struct stk *pool;       /* (np + 1 + UH_NPROC) * POOL: one per process,
	                           then the children's, then --ui-hang's */
	uint32_t next_pid;
	int32_t rcu;
	uint64_t *frees;        /* (tid << 32 | pid) waiting for an RCU callback */
	uint32_t nfree, free_cap;
	uint32_t nforked, nuser, nkernel;
	uint32_t nactive;       /* tasks running or runnable */
	uint64_t busy_ns;
} S;

static void die(const char *what, int rc)
{
	fprintf(stderr, "argus-gen: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory", ENOMEM);
	return p;
}

/* ---------------------------------------------------------------------
 * Random numbers (xorshift64*), deterministic per seed.
 */
static inline uint64_t rnd(void)
{
	S.rs ^= S.rs >> 12;
	S.rs ^= S.rs << 25;
	S.rs ^= S.rs >> 27;
	return S.rs * 2685821657736338717ull;
}

static inline uint32_t below(uint32_t n)
{
	return (uint32_t)(((rnd() >> 32) * (uint64_t)n) >> 32);
}

static inline bool chance(double p)
{
	return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0) < p;
}

static inline uint64_t range(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static uint64_t expo(double mean)
{
	double u = ((double)(rnd() >> 11) + 1.0) * (1.0 / 9007199254740993.0);

	return (uint64_t)(-log(u) * mean) + 1;
}

/* ---------------------------------------------------------------------
 * Emitting: exactly S.target events, at strictly increasing timestamps.
 */
static inline uint64_t TS(uint64_t t)
{
	if (t <= S.last_ts)
		t = S.last_ts + 1;
	S.last_ts = t;
	return t;
}

static inline bool room(void)
{
	if (S.nev >= S.target) {
		S.stopped = true;
		return false;
	}
	S.nev++;
	return true;
}

#define EMIT(call) do {							\
		if (room()) {						\
			int rc_ = (call);				\
			if (rc_)					\
				die(#call, rc_);			\
		}							\
	} while (0)

static inline struct task *T(int32_t i)
{
	return &S.t[i];
}

/* the task current on c, for interrupt records */
static inline uint32_t cur_tid(const struct cpu *c)
{
	return c->curr >= 0 ? S.t[c->curr].tid : 0;
}

static inline uint32_t cur_pid(const struct cpu *c)
{
	return c->curr >= 0 ? S.t[c->curr].pid : 0;
}

/* ---------------------------------------------------------------------
 * Lists.
 */
static void wl_push(struct wlist *l, int32_t ti)
{
	T(ti)->wnext = -1;
	if (l->n)
		T(l->tail)->wnext = ti;
	else
		l->head = ti;
	l->tail = ti;
	l->n++;
}

static int32_t wl_pop(struct wlist *l)
{
	int32_t ti;

	if (!l->n)
		return -1;
	ti = l->head;
	l->head = T(ti)->wnext;
	l->n--;
	return ti;
}

static void rq_push(struct cpu *c, int32_t ti, bool head)
{
	struct task *t = T(ti);

	t->cpu = (int16_t)c->id;
	t->rq_next = -1;
	if (!c->rq_n) {
		c->rq_head = c->rq_tail = ti;
	} else if (head) {
		t->rq_next = c->rq_head;
		c->rq_head = ti;
	} else {
		T(c->rq_tail)->rq_next = ti;
		c->rq_tail = ti;
	}
	c->rq_n++;
}

static int32_t rq_pop(struct cpu *c)
{
	int32_t ti;

	if (!c->rq_n)
		return -1;
	ti = c->rq_head;
	c->rq_head = T(ti)->rq_next;
	if (--c->rq_n == 0)
		c->rq_head = c->rq_tail = -1;
	return ti;
}

/* Remove the first task of c's queue that may run elsewhere. */
static int32_t rq_take_unbound(struct cpu *c)
{
	int32_t prev = -1;

	for (int32_t ti = c->rq_head; ti >= 0; prev = ti, ti = T(ti)->rq_next) {
		if (T(ti)->bound >= 0)
			continue;
		if (prev < 0)
			c->rq_head = T(ti)->rq_next;
		else
			T(prev)->rq_next = T(ti)->rq_next;
		if (c->rq_tail == ti)
			c->rq_tail = prev;
		if (--c->rq_n == 0)
			c->rq_head = c->rq_tail = -1;
		return ti;
	}
	return -1;
}

static inline bool cpu_free(const struct cpu *c)
{
	return c->curr < 0 && !c->rq_n;
}

static int find_free_cpu(void)
{
	for (uint32_t k = 0; k < S.ncpu; k++)
		if (cpu_free(&S.cpu[k]))
			return (int)k;
	return -1;
}

/* ---------------------------------------------------------------------
 * Per-CPU heap of timed interrupts.
 */
static bool hless(const struct hent *a, const struct hent *b)
{
	return a->t != b->t ? a->t < b->t : a->order < b->order;
}

static void heap_push(struct cpu *c, struct hent e)
{
	uint32_t i;

	if (c->nheap == c->heap_cap) {
		c->heap_cap = c->heap_cap ? c->heap_cap * 2 : 64;
		c->heap = xrealloc(c->heap, c->heap_cap * sizeof(*c->heap));
	}
	e.order = S.order++;
	i = c->nheap++;
	while (i && hless(&e, &c->heap[(i - 1) / 2])) {
		c->heap[i] = c->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->heap[i] = e;
}

static void heap_pop(struct cpu *c)
{
	struct hent e = c->heap[--c->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l >= c->nheap)
			break;
		m = l;
		if (l + 1 < c->nheap && hless(&c->heap[l + 1], &c->heap[l]))
			m = l + 1;
		if (!hless(&c->heap[m], &e))
			break;
		c->heap[i] = c->heap[m];
		i = m;
	}
	if (c->nheap)
		c->heap[i] = e;
}

/* drop cancelled timers from the top */
static uint64_t heap_top(struct cpu *c)
{
	while (c->nheap) {
		struct hent *h = &c->heap[0];
		struct task *t = T(h->task);

		if (h->kind == 1 || (t->timer_armed && t->timer_seq == h->seq))
			return h->t;
		heap_pop(c);
	}
	return INF;
}

/* ---------------------------------------------------------------------
 * Scheduling.
 */
static inline uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ksoftirqd between its softirq_entry and softirq_exit: bottom halves
 * (and so preemption) are off on that CPU, softirqs cannot start there */
static bool in_bh(const struct cpu *c)
{
	const struct task *t = c->curr >= 0 ? &S.t[c->curr] : NULL;

	return t && t->role == R_KSOFTIRQD && (t->pc == K_SI_NET || t->pc == K_SI_EXIT);
}

static uint64_t task_time(const struct cpu *c)
{
	if (c->curr >= 0)
		return in_bh(c) ? S.t[c->curr].t_next :
		       min64(S.t[c->curr].t_next, c->resched_t);
	return c->rq_n ? c->idle_switch_t : INF;
}

static uint64_t cpu_next(struct cpu *c)
{
	uint64_t t;

	if (c->nprog)
		return c->prog_t;
	t = task_time(c);
	if (S.winding)
		return t;
	t = min64(t, heap_top(c));
	t = min64(t, c->nic_t);
	t = min64(t, c->sample_t);
	if (c->curr >= 0)
		t = min64(t, c->tick_t);
	return t;
}

static void start_running(struct cpu *c, int32_t ni, uint64_t now)
{
	struct task *n = T(ni);

	n->state = ST_RUNNING;
	n->cpu = (int16_t)c->id;
	n->run_since = now;
	n->t_next = now + (n->remain ? n->remain : range(300, 900));
	n->remain = 0;
	if (c->curr < 0)
		c->tick_t = now + range(1, TICK);
	c->curr = ni;
}

/* Queue a runnable task; an idle CPU anywhere takes it first. */
static void enqueue(int32_t ti, uint64_t now, bool woken)
{
	struct task *t = T(ti);
	struct cpu *d;
	int k;

	if (t->bound >= 0)
		d = &S.cpu[t->bound];
	else if (t->cpu >= 0 && cpu_free(&S.cpu[t->cpu]))
		d = &S.cpu[t->cpu];
	else if ((k = find_free_cpu()) >= 0)
		d = &S.cpu[k];
	else
		d = &S.cpu[t->cpu >= 0 ? t->cpu : 0];
	if (d->curr < 0) {
		rq_push(d, ti, false);
		if (d->rq_n == 1)
			d->idle_switch_t = now + (woken ? range(2 * US, 9 * US) : range(1 * US, 4 * US));
		return;
	}
	/* a busy CPU: kernel threads go first and preempt; user tasks
	 * sometimes preempt the current one (wake-up preemption) */
	if (t->role >= R_KSOFTIRQD && woken) {
		rq_push(d, ti, true);
		d->resched_t = min64(d->resched_t, now + range(1 * US, 3 * US));
	} else {
		rq_push(d, ti, false);
		if (woken && chance(0.3))
			d->resched_t = min64(d->resched_t, now + range(1 * US, 4 * US));
	}
}

/* The next task for c: its queue, else pull from a busy CPU. */
static int32_t pick_next(struct cpu *c)
{
	int32_t ni = rq_pop(c);
	struct cpu *best = NULL;

	if (ni >= 0)
		return ni;
	for (uint32_t k = 0; k < S.ncpu; k++) {
		struct cpu *o = &S.cpu[k];

		if (o != c && o->curr >= 0 && o->rq_n && (!best || o->rq_n > best->rq_n))
			best = o;
	}
	return best ? rq_take_unbound(best) : -1;
}

static const uint64_t *site_stack(const struct task *t, int site, uint32_t *n)
{
	const struct stk *s = &S.pool[(uint32_t)t->pool * POOL + (uint32_t)site % POOL];

	*n = s->n;
	return s->ip;
}

/* prev leaves c in state `state` (blocking in syscall nr, or exiting). */
static void switch_out(struct cpu *c, uint64_t now, struct task *prev,
		       int64_t state, int32_t nr, uint64_t arg, uint32_t okind,
		       uint64_t obj, uint64_t peer, int site)
{
	int32_t ni = pick_next(c);
	uint32_t ntid = ni >= 0 ? T(ni)->tid : 0, npid = ni >= 0 ? T(ni)->pid : 0;
	const uint64_t *ips = NULL;
	uint32_t nips = 0;

	if (site >= 0 && prev->role < R_KSOFTIRQD && !(state & ARGUS_TG_DEAD))
		ips = site_stack(prev, site, &nips);
	EMIT(argus_tracegen__sw_stack(S.g, TS(now), c->id, prev->tid, prev->pid,
				      state, nr, arg, okind, obj, peer, ntid, npid,
				      ips, nips));
	S.busy_ns += now - prev->run_since;
	c->resched_t = INF;
	prev->remain = 0;
	if (ni >= 0) {
		start_running(c, ni, now);
	} else {
		c->curr = -1;
		c->tick_t = INF;
	}
}

/* t blocks: waits for a wake-up of kind `wait`. */
static void block(struct cpu *c, uint64_t now, struct task *t, uint8_t wait,
		  int64_t state, int32_t nr, uint64_t arg, uint32_t okind,
		  uint64_t obj, uint64_t peer, int site, uint8_t resume_pc)
{
	t->state = ST_BLOCKED;
	t->wait = wait;
	t->pc = resume_pc;
	S.nactive--;
	switch_out(c, now, t, state, nr, arg, okind, obj, peer, site);
}

/* Wake t if it is blocked: one waking record on c, then it is queued. */
static bool wake(struct cpu *c, uint64_t now, uint8_t ctx, uint32_t wtid,
		 uint32_t wpid, int32_t ti, uint32_t vec, uint64_t hrt)
{
	struct task *t = T(ti);

	if (t->state != ST_BLOCKED || S.winding)
		return false;
	EMIT(argus_tracegen__waking(S.g, TS(now), c->id, ctx, wtid, wpid, t->tid,
				    t->pid, vec, hrt));
	t->state = ST_RUNNABLE;
	t->wait = WT_NONE;
	S.nactive++;
	enqueue(ti, now, true);
	return true;
}

static inline bool wake_by(struct cpu *c, uint64_t now, struct task *waker,
			   int32_t ti)
{
	return wake(c, now, AE_CTX_TASK, waker->tid, waker->pid, ti, AE_VEC_NONE, 0);
}

/* ---------------------------------------------------------------------
 * Timers.
 */
static void arm_timer(struct cpu *c, uint64_t now, struct task *t, uint64_t timer,
		      uint64_t timeout, uint32_t mode)
{
	t->timer = timer;
	t->timer_armed = true;
	t->timer_seq++;
	EMIT(argus_tracegen__hrt_start(S.g, TS(now), c->id, AE_CTX_TASK, t->tid, t->pid,
				       timer, HRTIMER_WAKEUP_FN,
				       (int64_t)(now + timeout), mode, t->tid));
	heap_push(c, (struct hent){ .t = now + timeout, .task = (int32_t)(t - S.t),
				    .seq = t->timer_seq, .kind = 0 });
}

static void cancel_timer(struct cpu *c, uint64_t now, struct task *t)
{
	if (!t->timer_armed)
		return;
	t->timer_armed = false;
	EMIT(argus_tracegen__hrt_cancel(S.g, TS(now), c->id, AE_CTX_TASK, t->tid,
					t->pid, t->timer, HRTIMER_WAKEUP_FN, 0, 0,
					t->tid));
}

static uint64_t timer_addr(const struct task *t, unsigned which)
{
	return 0xffffc90000000000ull + ((uint64_t)t->tid << 14) + 0x3d10 - which * 0x90;
}

/* ---------------------------------------------------------------------
 * Interrupt programs.
 */
static void prog_start(struct cpu *c, uint64_t now, const struct op *ops, uint32_t n)
{
	memcpy(c->prog, ops, n * sizeof(*ops));
	c->nprog = n;
	c->iprog = 0;
	c->prog_t = now;
	c->prog_start = now;
}

static void net_rx(struct cpu *c, uint64_t now, uint8_t ctx, uint32_t h_tid,
		   uint32_t h_pid)
{
	uint32_t k, tries = 0;
	struct proc *p;

	if (S.winding)
		return;
	do {
		k = below(S.np);
	} while (!S.p[k].has_tcp && ++tries < 8);
	p = &S.p[k];
	if (!p->has_tcp)
		return;
	p->tcp_pending++;
	if (T(p->loop)->wait == WT_EPOLL)
		wake(c, now, ctx, h_tid, h_pid, p->loop, VEC_NET_RX, 0);
}

static void run_op(struct cpu *c)
{
	struct op *o = &c->prog[c->iprog];
	uint64_t now = S.now;
	uint32_t h = cur_tid(c), hp = cur_pid(c);

	switch (o->kind) {
	case OP_IRQ_ENTRY:
		EMIT(argus_tracegen__irq_entry(S.g, TS(now), c->id, h, hp, o->vec));
		break;
	case OP_IRQ_EXIT:
		EMIT(argus_tracegen__irq_exit(S.g, TS(now), c->id, h, hp, o->vec, 1));
		break;
	case OP_SI_ENTRY:
		EMIT(argus_tracegen__softirq_entry(S.g, TS(now), c->id, h, hp, o->vec));
		break;
	case OP_SI_EXIT:
		EMIT(argus_tracegen__softirq_exit(S.g, TS(now), c->id, h, hp, o->vec));
		break;
	case OP_WAKE_K:
		if (o->vec == VEC_TIMER_SOFTIRQ)
			T(o->task)->iters++;  /* kworker: one housekeeping item */
		wake(c, now, o->vec == VEC_RCU || o->vec == VEC_TIMER_SOFTIRQ ?
		     AE_CTX_SOFTIRQ : AE_CTX_HARDIRQ, h, hp, o->task, o->vec, 0);
		break;
	case OP_NET_RX:
		net_rx(c, now, AE_CTX_SOFTIRQ, h, hp);
		break;
	case OP_RCU:
		/* RCU callbacks: task structs freed after their grace period */
		for (int i = 0; i < 4 && S.nfree && !S.winding; i++) {
			uint64_t f = S.frees[--S.nfree];

			EMIT(argus_tracegen__free(S.g, TS(now), c->id, AE_CTX_SOFTIRQ, h, hp,
						  (uint32_t)(f >> 32), (uint32_t)f));
		}
		break;
	case OP_HRT_EXPIRE: {
		struct task *t = T(o->task);

		if (!t->timer_armed || t->timer_seq != o->seq)
			break;
		t->timer_armed = false;
		EMIT(argus_tracegen__hrt_expire(S.g, TS(now), c->id, AE_CTX_HARDIRQ, h, hp,
						t->timer, HRTIMER_WAKEUP_FN, 0, 0, t->tid));
		if (t->state == ST_BLOCKED && (t->wait == WT_SLEEP || t->wait == WT_EPOLL))
			wake(c, now + 150, AE_CTX_HARDIRQ, h, hp, o->task, AE_VEC_HRTIMER,
			     t->timer);
		break;
	}
	case OP_DISK_DONE: {
		struct task *kw = T(c->kworker);

		wl_push(&kw->work, o->task);
		wake(c, now, AE_CTX_HARDIRQ, h, hp, c->kworker, DISK_IRQ, 0);
		break;
	}
	}
	c->prog_t = now + o->dt;
	if (++c->iprog == c->nprog) {
		uint64_t d = c->prog_t - c->prog_start;

		c->nprog = 0;
		/* the interrupted task lost that much time */
		if (c->curr >= 0)
			T(c->curr)->t_next += d;
	}
}

static void tick(struct cpu *c, uint64_t now)
{
	struct op ops[MAX_OPS];
	uint32_t n = 0;

	ops[n++] = (struct op){ OP_IRQ_ENTRY, 0, -1, 0, (uint32_t)range(700, 2500) };
	if (chance(0.02) && c->rq_n)
		ops[n++] = (struct op){ OP_WAKE_K, 0, c->migration, 0, 400 };
	ops[n++] = (struct op){ OP_IRQ_EXIT, 0, -1, 0, 300 };
	if (in_bh(c)) {
		/* pending softirqs wait for the running ksoftirqd */
	} else if (chance(0.5)) {
		/* timer softirq: a delayed work item is due on kworker/N */
		ops[n++] = (struct op){ OP_SI_ENTRY, VEC_TIMER_SOFTIRQ, -1, 0, (uint32_t)range(300, 900) };
		ops[n++] = (struct op){ OP_WAKE_K, VEC_TIMER_SOFTIRQ, c->kworker, 0, 300 };
		ops[n++] = (struct op){ OP_SI_EXIT, VEC_TIMER_SOFTIRQ, -1, 0, 200 };
	}
	if (!in_bh(c) && (S.nfree || chance(0.3))) {
		ops[n++] = (struct op){ OP_SI_ENTRY, VEC_RCU, -1, 0, (uint32_t)range(400, 1500) };
		ops[n++] = (struct op){ OP_RCU, 0, -1, 0, 300 };
		if (chance(0.5))
			ops[n++] = (struct op){ OP_WAKE_K, VEC_RCU, S.rcu, 0, 300 };
		ops[n++] = (struct op){ OP_SI_EXIT, VEC_RCU, -1, 0, 200 };
	}
	prog_start(c, now, ops, n);
	/* time slice */
	if (c->curr >= 0 && c->rq_n && now - T(c->curr)->run_since > SLICE)
		c->resched_t = min64(c->resched_t, now + range(3 * US, 6 * US));
	c->tick_t = now + TICK;
}

static void nic(struct cpu *c, uint64_t now)
{
	struct op ops[MAX_OPS];
	uint32_t n = 0;
	uint32_t irq = NIC_IRQ + c->id % 8;

	ops[n++] = (struct op){ OP_IRQ_ENTRY, irq, -1, 0, (uint32_t)range(800, 3000) };
	if (in_bh(c)) {
		/* ksoftirqd is running NET_RX here already: it takes this too */
		ops[n++] = (struct op){ OP_IRQ_EXIT, irq, -1, 0, 200 };
	} else if (chance(0.45)) {
		/* heavy: the softirq goes to ksoftirqd */
		ops[n++] = (struct op){ OP_WAKE_K, irq, c->ksoftirqd, 0, 300 };
		ops[n++] = (struct op){ OP_IRQ_EXIT, irq, -1, 0, 200 };
	} else {
		ops[n++] = (struct op){ OP_IRQ_EXIT, irq, -1, 0, 200 };
		ops[n++] = (struct op){ OP_SI_ENTRY, VEC_NET_RX, -1, 0, (uint32_t)range(1500, 6000) };
		if (chance(0.45))
			ops[n++] = (struct op){ OP_NET_RX, 0, -1, 0, (uint32_t)range(500, 2000) };
		ops[n++] = (struct op){ OP_SI_EXIT, VEC_NET_RX, -1, 0, 200 };
	}
	prog_start(c, now, ops, n);
	c->nic_t = now + expo((double)NIC_MEAN);
}

static void timed_irq(struct cpu *c, uint64_t now)
{
	struct hent h = c->heap[0];
	struct op ops[3];

	heap_pop(c);
	if (h.kind == 0) {
		ops[0] = (struct op){ OP_HRT_EXPIRE, 0, h.task, h.seq, (uint32_t)range(600, 1500) };
		prog_start(c, now, ops, 1);
	} else {
		ops[0] = (struct op){ OP_IRQ_ENTRY, DISK_IRQ, -1, 0, (uint32_t)range(1000, 3000) };
		ops[1] = (struct op){ OP_DISK_DONE, 0, h.task, 0, 400 };
		ops[2] = (struct op){ OP_IRQ_EXIT, DISK_IRQ, -1, 0, 200 };
		prog_start(c, now, ops, 3);
	}
}

static void sample(struct cpu *c, uint64_t now)
{
	c->sample_t = now + SAMPLE_PERIOD - 2 * US + below(4 * US);
	if (c->curr >= 0 && T(c->curr)->role < R_KSOFTIRQD) {
		struct task *t = T(c->curr);
		const struct stk *s = &S.pool[(uint32_t)t->pool * POOL + NSITES +
					      below(POOL - NSITES)];

		EMIT(argus_tracegen__sample(S.g, TS(now), c->id, t->tid, t->pid, s->ip, s->n));
	}
}

/* ---------------------------------------------------------------------
 * Task programs.  Each step runs at t->t_next on its CPU, writes its
 * records and either sets the next step (cont) or blocks.
 */
static inline void cont(struct task *t, uint64_t now, uint8_t pc, uint64_t delay)
{
	t->pc = pc;
	t->t_next = now + delay;
}

static inline uint64_t syscall_ns(void)
{
	return range(300, 1200);
}

static void sys_enter(struct cpu *c, uint64_t now, struct task *t, int64_t nr,
		      uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	uint64_t args[6] = { a0, a1, a2, a3, 0, 0 };

	EMIT(argus_tracegen__sys_enter(S.g, TS(now), c->id, t->tid, t->pid, nr, args));
}

static void sys_exit(struct cpu *c, uint64_t now, struct task *t, int64_t nr,
		     int64_t ret, uint64_t a0, uint32_t okind, uint64_t obj,
		     uint64_t peer)
{
	EMIT(argus_tracegen__sys_exit(S.g, TS(now), c->id, t->tid, t->pid, nr, ret,
				      a0, okind, obj, peer));
}

static uint64_t ubuf(const struct task *t)
{
	return 0x7ffd00000000ull + ((uint64_t)t->tid << 16);
}

/* Park for the end of the trace: a futex wait nobody wakes. */
static void park(struct cpu *c, uint64_t now, struct task *t)
{
	uint64_t addr = 0x55d000900000ull + (uint64_t)t->tid * 8;

	S.nactive--;
	if (t->role >= R_KSOFTIRQD) {
		t->state = ST_PARKED;
		t->pc = K_RUN;
		switch_out(c, now, t, t->role == R_KWORKER || t->role == R_RCU ?
			   ARGUS_TG_IDLE : ARGUS_TG_INTERRUPTIBLE, -1, 0, AE_OBJ_NONE, 0, 0, -1);
		return;
	}
	sys_enter(c, now, t, SYS_futex, addr, FUTEX_WAIT_PRIVATE, 0, 0);
	t->state = ST_PARKED;
	t->wait = WT_PARK;
	t->pc = X_PARKED;
	switch_out(c, now + 400, t, ARGUS_TG_INTERRUPTIBLE, SYS_futex, addr,
		   AE_OBJ_NONE, 0, 0, SITE_PARK);
}

static uint32_t loop_ready(const struct proc *p)
{
	return (S.pipe[p->in_pipe].avail > 0) + p->conns_ready + (p->tcp_pending > 0);
}

static void step_loop(struct cpu *c, uint64_t now, struct task *t)
{
	struct proc *p = &S.p[t->proc];
	struct pipe_ *in = &S.pipe[p->in_pipe];
	int64_t nr = p->use_poll ? SYS_poll : SYS_epoll_wait;
	uint64_t a0 = p->use_poll ? ubuf(t) + 0x100 : 3;
	uint32_t okind = p->use_poll ? AE_OBJ_NONE : AE_OBJ_EPOLL;
	uint64_t obj = p->use_poll ? 0 : p->epfile;

	switch (t->pc) {
	case L_START: {
		/* timeout in ms; -1 (as the int register holds it) = none */
		uint64_t to = p->timed ? range(LOOP_TIMEOUT_MIN, LOOP_TIMEOUT_MAX) / MS :
			      0xffffffffu;

		if (S.winding)
			return park(c, now, t);
		t->len = (uint32_t)to;
		if (p->use_poll)
			sys_enter(c, now, t, nr, a0, 2 + p->nconns + p->has_tcp, to, 0);
		else
			sys_enter(c, now, t, nr, 3, ubuf(t), 64, to);
		cont(t, now, L_WAIT_DECIDE, syscall_ns());
		break;
	}
	case L_WAIT_DECIDE:
		t->ready = loop_ready(p);
		if (t->ready || S.winding) {
			sys_exit(c, now, t, nr, t->ready, a0, okind, obj, 0);
			cont(t, now, t->ready ? L_HANDLE : L_DISPATCH, range(500, 2000));
			break;
		}
		if (p->timed)
			arm_timer(c, now, t, timer_addr(t, 1), (uint64_t)t->len * MS,
				  HRTIMER_MODE_ABS);
		block(c, now + 300, t, WT_EPOLL, ARGUS_TG_INTERRUPTIBLE, (int32_t)nr,
		      !p->use_poll ? 3 : p->timed ? (uint64_t)t->len * MS : ~0ull,
		      okind, obj, 0, SITE_EPOLL, L_WOKEN);
		break;
	case L_WOKEN:
		cancel_timer(c, now, t);
		t->ready = loop_ready(p);
		sys_exit(c, now + 200, t, nr, t->ready, a0, okind, obj, 0);
		if (!t->ready)
			t->to_post += 1 + below(6);  /* timeout: periodic work */
		cont(t, now, t->ready ? L_HANDLE : L_DISPATCH, range(500, 2000));
		break;
	case L_HANDLE:
		if (S.winding)
			return park(c, now, t);
		if (!t->ready) {
			cont(t, now, L_DISPATCH, range(200, 800));
			break;
		}
		t->ready--;
		if (p->tcp_pending) {
			sys_enter(c, now, t, SYS_recvfrom, 6, ubuf(t), 4096, 0);
			cont(t, now, L_TCP_DONE, syscall_ns());
		} else if (p->conns_ready) {
			uint32_t start = t->conn < 0 ? 0 : (uint32_t)t->conn + 1;

			for (uint32_t k = 0; k < p->nconns; k++) {
				uint32_t i = (start + k) % p->nconns;

				if (S.conn[p->conns[i]].nreq) {
					t->conn = (int32_t)i;
					break;
				}
			}
			sys_enter(c, now, t, SYS_recvmsg,
				  S.conn[p->conns[t->conn]].sfd, ubuf(t) + 0x40, 0, 0);
			cont(t, now, L_RECV_DONE, syscall_ns());
		} else if (in->avail) {
			sys_enter(c, now, t, SYS_read, in->rfd, ubuf(t), 4096, 0);
			cont(t, now, L_PIPE_DONE, syscall_ns());
		} else {
			cont(t, now, L_HANDLE, range(200, 600));
		}
		break;
	case L_PIPE_DONE: {
		uint32_t n = in->avail < 4096 ? in->avail : 4096;
		int32_t w;

		in->avail -= n;
		/* a writer waiting for room gets it now */
		while ((w = in->wwait.n ? in->wwait.head : -1) >= 0 &&
		       in->avail + T(w)->len <= PIPE_CAP) {
			wl_pop(&in->wwait);
			wake_by(c, now, t, w);
			now += 200;
		}
		sys_exit(c, now, t, SYS_read, n, in->rfd, AE_OBJ_PIPE, in->ino, 0);
		t->to_post += 1 + n / 1536;  /* a message per ~1.5 KiB */
		cont(t, now, L_HANDLE, expo(8 * US));
		break;
	}
	case L_RECV_DONE: {
		struct conn *k = &S.conn[p->conns[t->conn]];
		uint32_t n = k->reqlen;

		k->nreq--;
		if (!k->nreq)
			p->conns_ready--;
		sys_exit(c, now, t, SYS_recvmsg, n, k->sfd, AE_OBJ_UNIX, k->sino, k->cino);
		cont(t, now, L_REPLY, expo(12 * US));
		break;
	}
	case L_REPLY: {
		struct conn *k = &S.conn[p->conns[t->conn]];

		t->len = 32 + below(2000);
		sys_enter(c, now, t, SYS_sendmsg, k->sfd, ubuf(t) + 0x80, 0, 0);
		cont(t, now, L_REPLY_DONE, syscall_ns());
		break;
	}
	case L_REPLY_DONE: {
		struct conn *k = &S.conn[p->conns[t->conn]];

		k->reply_len += t->len;
		if (T(k->client)->wait == WT_RECV) {
			wake_by(c, now, t, k->client);
			now += 200;
		}
		sys_exit(c, now, t, SYS_sendmsg, t->len, k->sfd, AE_OBJ_UNIX, k->sino, k->cino);
		cont(t, now, L_HANDLE, range(1 * US, 4 * US));
		break;
	}
	case L_TCP_DONE:
		p->tcp_pending--;
		t->len = 64 + below(1400);
		sys_exit(c, now, t, SYS_recvfrom, t->len, 6, AE_OBJ_TCP, p->tcp_local, p->tcp_peer);
		t->to_post++;
		cont(t, now, chance(0.3) ? L_TCP_SEND : L_HANDLE, expo(10 * US));
		break;
	case L_TCP_SEND:
		t->len = 100 + below(8000);
		sys_enter(c, now, t, SYS_sendto, 6, ubuf(t) + 0x200, t->len, 0);
		cont(t, now, L_TCP_SEND_DONE, range(2 * US, 8 * US));
		break;
	case L_TCP_SEND_DONE:
		sys_exit(c, now, t, SYS_sendto, t->len, 6, AE_OBJ_TCP, p->tcp_local, p->tcp_peer);
		cont(t, now, L_HANDLE, range(500, 3000));
		break;
	case L_DISPATCH:
		if (S.winding)
			return park(c, now, t);
		if (!t->to_post) {
			cont(t, now, L_START, range(1 * US, 5 * US));
			break;
		}
		/* post everything, then wake as many waiting workers as there
		 * are new items (one FUTEX_WAKE for all of them) */
		p->queue_len += t->to_post;
		if (p->qwait.n) {
			t->len = t->to_post;
			sys_enter(c, now, t, SYS_futex, p->qaddr, FUTEX_WAKE_PRIVATE, t->len, 0);
			cont(t, now, L_FWAKE_DONE, syscall_ns());
		} else {
			cont(t, now, L_START, range(1 * US, 5 * US));
		}
		t->to_post = 0;
		break;
	case L_FWAKE_DONE: {
		int ret = 0;

		while (t->len-- && p->qwait.n) {
			int32_t w = wl_pop(&p->qwait);

			if (wake_by(c, now, t, w)) {
				ret++;
				now += 200;
			}
		}
		sys_exit(c, now, t, SYS_futex, ret, p->qaddr, AE_OBJ_NONE, 0, 0);
		cont(t, now, L_START, range(1 * US, 5 * US));
		break;
	}
	default:
		abort();
	}
}

static void plan_item(struct task *t)
{
	uint8_t *pl = t->plan, n = 0;

	pl[n++] = P_COMPUTE;
	if (chance(0.35)) {
		pl[n++] = P_MUTEX;
	}
	if (chance(0.35))
		pl[n++] = P_FILE;
	if (chance(0.25)) {
		pl[n++] = P_RPC;
		pl[n++] = P_COMPUTE;
	}
	if (chance(0.42))
		pl[n++] = P_SLEEP;
	if (chance(0.004) && !S.winding)
		pl[n++] = P_FORK;
	if (chance(0.55))
		pl[n++] = P_WRITE;
	t->nplan = n;
	t->iplan = 0;
}

static int32_t new_task(void);

/* fork + wakeup_new of a short child process; then wait4 for it.  The
 * task array may move: work with indices. */
static void do_fork(struct cpu *c, uint64_t now, int32_t pi)
{
	int32_t ci = new_task();
	struct task *pt = T(pi), *ch = T(ci);

	ch->tid = ch->pid = S.next_pid++;
	ch->role = R_CHILD;
	ch->pool = (int32_t)S.np;
	ch->parent = pi;
	ch->cpu = (int16_t)c->id;
	ch->pc = C_EXEC;
	ch->iters = 1 + below(3);
	memcpy(ch->comm, pt->comm, sizeof(ch->comm));
	EMIT(argus_tracegen__fork(S.g, TS(now), c->id, pt->tid, pt->pid, ch->tid,
				  ch->pid, pt->comm));
	EMIT(argus_tracegen__wakeup_new(S.g, TS(now + 1500), c->id, pt->tid, pt->pid,
					ch->tid, ch->pid, pt->comm));
	ch->state = ST_RUNNABLE;
	S.nactive++;
	enqueue(ci, now + 1500, true);
	pt->child = ci;
	cont(pt, now, W_WAIT4, range(3 * US, 10 * US));
	S.nforked++;
}

static void step_worker(struct cpu *c, uint64_t now, struct task *t)
{
	struct proc *p = &S.p[t->proc];
	struct pipe_ *out = &S.pipe[p->out_pipe];
	struct conn *k = t->conn >= 0 ? &S.conn[t->conn] : NULL;
	uint32_t wfd = out->wfd;

	switch (t->pc) {
	case W_START:
		if (S.winding)
			return park(c, now, t);
		if (p->queue_len) {
			p->queue_len--;
			plan_item(t);
			cont(t, now, W_NEXT, range(200, 1000));
			break;
		}
		sys_enter(c, now, t, SYS_futex, p->qaddr, FUTEX_WAIT_PRIVATE, 0, 0);
		cont(t, now, W_FWAIT_DECIDE, syscall_ns());
		break;
	case W_FWAIT_DECIDE:
		if (p->queue_len || S.winding) {
			sys_exit(c, now, t, SYS_futex, -EAGAIN, p->qaddr, AE_OBJ_NONE, 0, 0);
			cont(t, now, W_START, range(200, 600));
			break;
		}
		wl_push(&p->qwait, (int32_t)(t - S.t));
		block(c, now, t, WT_FUTEX_Q, ARGUS_TG_INTERRUPTIBLE, SYS_futex, p->qaddr,
		      AE_OBJ_NONE, 0, 0, SITE_FUTEX_Q, W_FWAIT_WOKEN);
		break;
	case W_FWAIT_WOKEN:
		sys_exit(c, now, t, SYS_futex, 0, p->qaddr, AE_OBJ_NONE, 0, 0);
		cont(t, now, W_START, range(200, 600));
		break;
	case W_NEXT:
		if (S.winding)
			return park(c, now, t);
		if (t->iplan == t->nplan) {
			cont(t, now, W_START, range(300, 1500));
			break;
		}
		switch (t->plan[t->iplan++]) {
		case P_COMPUTE:
			cont(t, now, W_NEXT, expo(90 * US));
			break;
		case P_MUTEX:
			if (p->mutex_owner < 0) {
				p->mutex_owner = (int32_t)(t - S.t);
				cont(t, now, W_UNLOCK, expo(6 * US));
				break;
			}
			sys_enter(c, now, t, SYS_futex, p->maddr, FUTEX_WAIT_PRIVATE, 2, 0);
			cont(t, now, W_MWAIT_DECIDE, syscall_ns());
			break;
		case P_WRITE:
			t->len = 64 + below(1984);
			sys_enter(c, now, t, SYS_write, wfd, ubuf(t) + 0x1000, t->len, 0);
			cont(t, now, W_WRITE_DECIDE, syscall_ns());
			break;
		case P_RPC:
			t->len = 16 + below(500);
			sys_enter(c, now, t, SYS_sendmsg, k->cfd, ubuf(t) + 0x80, 0, 0);
			cont(t, now, W_RPC_SENT, syscall_ns());
			break;
		case P_SLEEP:
			t->len = (uint32_t)range(50 * US, 2 * MS);
			sys_enter(c, now, t, SYS_nanosleep, ubuf(t) + 0x300, 0, 0, 0);
			cont(t, now, W_SLEEP_ARM, range(300, 800));
			break;
		case P_FILE:
			sys_enter(c, now, t, SYS_read, 7, ubuf(t) + 0x2000, 4096, 0);
			cont(t, now, W_FILE_DECIDE, syscall_ns());
			break;
		case P_FORK:
			do_fork(c, now, (int32_t)(t - S.t));
			break;
		}
		break;
	case W_MWAIT_DECIDE:
		if (p->mutex_owner < 0 || S.winding) {
			p->mutex_owner = (int32_t)(t - S.t);
			sys_exit(c, now, t, SYS_futex, -EAGAIN, p->maddr, AE_OBJ_NONE, 0, 0);
			cont(t, now, W_UNLOCK, expo(6 * US));
			break;
		}
		wl_push(&p->mwait, (int32_t)(t - S.t));
		block(c, now, t, WT_MUTEX, ARGUS_TG_INTERRUPTIBLE, SYS_futex, p->maddr,
		      AE_OBJ_NONE, 0, 0, SITE_MUTEX, W_MWAIT_WOKEN);
		break;
	case W_MWAIT_WOKEN:
		/* the unlocker handed the mutex over */
		sys_exit(c, now, t, SYS_futex, 0, p->maddr, AE_OBJ_NONE, 0, 0);
		cont(t, now, W_UNLOCK, expo(6 * US));
		break;
	case W_UNLOCK:
		p->mutex_owner = -1;
		if (p->mwait.n) {
			sys_enter(c, now, t, SYS_futex, p->maddr, FUTEX_WAKE_PRIVATE, 1, 0);
			cont(t, now, W_MWAKE_DONE, syscall_ns());
		} else {
			cont(t, now, W_NEXT, range(100, 400));
		}
		break;
	case W_MWAKE_DONE: {
		int32_t w = wl_pop(&p->mwait);
		int ret = 0;

		if (w >= 0) {
			p->mutex_owner = w;
			if (wake_by(c, now, t, w)) {
				ret = 1;
				now += 200;
			}
		}
		sys_exit(c, now, t, SYS_futex, ret, p->maddr, AE_OBJ_NONE, 0, 0);
		cont(t, now, W_NEXT, range(200, 800));
		break;
	}
	case W_WRITE_DECIDE:
	case W_WRITE_WOKEN:
		if (out->avail + t->len <= PIPE_CAP) {
			struct task *r = T(S.p[out->reader_proc].loop);

			out->avail += t->len;
			if (r->wait == WT_EPOLL) {
				wake_by(c, now, t, S.p[out->reader_proc].loop);
				now += 200;
			}
			sys_exit(c, now, t, SYS_write, t->len, wfd, AE_OBJ_PIPE, out->ino, 0);
			cont(t, now, W_NEXT, range(300, 1000));
			break;
		}
		/* full: wait for the reader (still inside write()) */
		wl_push(&out->wwait, (int32_t)(t - S.t));
		block(c, now, t, WT_PIPE_W, ARGUS_TG_INTERRUPTIBLE, SYS_write, wfd,
		      AE_OBJ_PIPE, out->ino, 0, SITE_WRITE, W_WRITE_WOKEN);
		break;
	case W_RPC_SENT: {
		struct proc *sp = &S.p[k->server];

		if (!k->nreq++)
			sp->conns_ready++;
		k->reqlen = t->len;
		if (T(sp->loop)->wait == WT_EPOLL) {
			wake_by(c, now, t, sp->loop);
			now += 200;
		}
		sys_exit(c, now, t, SYS_sendmsg, t->len, k->cfd, AE_OBJ_UNIX, k->cino, k->sino);
		cont(t, now, W_RPC_RECV, range(500, 2000));
		break;
	}
	case W_RPC_RECV:
		if (S.winding)
			return park(c, now, t);
		sys_enter(c, now, t, SYS_recvmsg, k->cfd, ubuf(t) + 0xc0, 0, 0);
		cont(t, now, W_RPC_RECV_DECIDE, syscall_ns());
		break;
	case W_RPC_RECV_DECIDE:
	case W_RPC_RECV_WOKEN:
		if (k->reply_len) {
			uint32_t n = k->reply_len;

			k->reply_len = 0;
			sys_exit(c, now, t, SYS_recvmsg, n, k->cfd, AE_OBJ_UNIX, k->cino, k->sino);
			cont(t, now, W_NEXT, range(300, 1000));
			break;
		}
		block(c, now, t, WT_RECV, ARGUS_TG_INTERRUPTIBLE, SYS_recvmsg, k->cfd,
		      AE_OBJ_UNIX, k->cino, k->sino, SITE_RECV, W_RPC_RECV_WOKEN);
		break;
	case W_SLEEP_ARM:
		arm_timer(c, now, t, timer_addr(t, 0), t->len, HRTIMER_MODE_REL);
		block(c, now + 300, t, WT_SLEEP, ARGUS_TG_INTERRUPTIBLE, SYS_nanosleep,
		      t->len, AE_OBJ_NONE, 0, 0, SITE_SLEEP, W_SLEEP_WOKEN);
		break;
	case W_SLEEP_WOKEN:
		sys_exit(c, now, t, SYS_nanosleep, 0, ubuf(t) + 0x300, AE_OBJ_NONE, 0, 0);
		cont(t, now, W_NEXT, range(300, 1000));
		break;
	case W_FILE_DECIDE:
		if (chance(0.2) || S.winding) {  /* page cache hit */
			sys_exit(c, now, t, SYS_read, 4096, 7, AE_OBJ_FILE, p->file_obj, 0);
			cont(t, now, W_NEXT, range(300, 1000));
			break;
		}
		if (chance(0.5)) {
			/* the device completes with an interrupt; kworker/N
			 * finishes the request and wakes the reader */
			heap_push(c, (struct hent){ .t = now + range(60 * US, 400 * US),
						    .task = (int32_t)(t - S.t), .kind = 1 });
		} else {
			/* a stacked device (loop, dm-crypt): the read queues
			 * work for kworker/N, which wakes the reader when done */
			struct task *kw = T(c->kworker);

			wl_push(&kw->work, (int32_t)(t - S.t));
			wake_by(c, now, t, c->kworker);
			now += 300;
		}
		block(c, now, t, WT_FILE, ARGUS_TG_UNINTERRUPTIBLE, SYS_read, 7,
		      AE_OBJ_FILE, p->file_obj, 0, SITE_FILE, W_FILE_WOKEN);
		break;
	case W_FILE_WOKEN:
		sys_exit(c, now, t, SYS_read, 4096, 7, AE_OBJ_FILE, p->file_obj, 0);
		cont(t, now, W_NEXT, range(300, 1000));
		break;
	case W_WAIT4:
		sys_enter(c, now, t, SYS_wait4, T(t->child)->pid, ubuf(t) + 0x400, 0, 0);
		cont(t, now, W_WAIT4_DECIDE, syscall_ns());
		break;
	case W_WAIT4_DECIDE:
	case W_WAIT4_WOKEN: {
		struct task *ch = T(t->child);

		if (ch->state == ST_DEAD) {
			sys_exit(c, now, t, SYS_wait4, ch->pid, ch->pid, AE_OBJ_NONE, 0, 0);
			if (S.nfree == S.free_cap) {
				S.free_cap = S.free_cap ? S.free_cap * 2 : 64;
				S.frees = xrealloc(S.frees, S.free_cap * sizeof(*S.frees));
			}
			S.frees[S.nfree++] = (uint64_t)ch->tid << 32 | ch->pid;
			cont(t, now, W_NEXT, range(1 * US, 5 * US));
			break;
		}
		block(c, now, t, WT_WAIT4, ARGUS_TG_INTERRUPTIBLE, SYS_wait4, 0,
		      AE_OBJ_NONE, 0, 0, SITE_WAIT4, W_WAIT4_WOKEN);
		break;
	}
	default:
		abort();
	}
}

#define DEVNULL_OBJ ((((uint64_t)(1u << 20 | 3)) << 32) ^ 4)

static void step_child(struct cpu *c, uint64_t now, struct task *t)
{
	static const char *const progs[] = { "sh", "gzip", "date", "cat",
					      "logrotate", "git", "ps" };
	int32_t ti = (int32_t)(t - S.t);

	switch (t->pc) {
	case C_EXEC: {
		const char *cm = progs[below(sizeof(progs) / sizeof(progs[0]))];
		char path[64];

		if (S.winding)
			return park(c, now, t);
		snprintf(path, sizeof(path), "/usr/bin/%s", cm);
		snprintf(t->comm, sizeof(t->comm), "%s", cm);
		EMIT(argus_tracegen__exec(S.g, TS(now), c->id, t->tid, t->pid, t->tid,
					  cm, path));
		cont(t, now, C_WORK, expo(60 * US));
		break;
	}
	case C_WORK:
		if (S.winding)
			return park(c, now, t);
		if (!t->iters) {
			cont(t, now, C_EXIT, range(5 * US, 20 * US));
			break;
		}
		t->len = 16 + below(4000);
		sys_enter(c, now, t, SYS_write, 1, ubuf(t), t->len, 0);
		cont(t, now, C_WRITE_DONE, range(1 * US, 4 * US));
		break;
	case C_WRITE_DONE:
		t->iters--;
		sys_exit(c, now, t, SYS_write, t->len, 1, AE_OBJ_FILE, DEVNULL_OBJ, 0);
		cont(t, now, C_WORK, expo(40 * US));
		break;
	case C_EXIT: {
		struct task *pt = T(t->parent);
		int32_t code = chance(0.9) ? 0 : 1 << 8;  /* wait status form */

		sys_enter(c, now, t, SYS_exit_group, (uint64_t)(code >> 8), 0, 0, 0);
		EMIT(argus_tracegen__exit(S.g, TS(now + 300), c->id, t->tid, t->pid,
					  code, 1));
		t->state = ST_DEAD;
		S.nactive--;
		/* exit_notify wakes the parent waiting in wait4 */
		if (pt->state == ST_BLOCKED && pt->wait == WT_WAIT4 && pt->child == ti)
			wake_by(c, now + 600, t, t->parent);
		switch_out(c, now + 900, t, ARGUS_TG_DEAD, SYS_exit_group, 0,
			   AE_OBJ_NONE, 0, 0, -1);
		break;
	}
	default:
		abort();
	}
}

static void kthread_sleep(struct cpu *c, uint64_t now, struct task *t)
{
	block(c, now, t, WT_KTHREAD, t->role == R_KWORKER || t->role == R_RCU ?
	      ARGUS_TG_IDLE : ARGUS_TG_INTERRUPTIBLE, -1, 0, AE_OBJ_NONE, 0, 0, -1,
	      K_RUN);
}

static uint64_t work_addr(int32_t target)
{
	if (target < 0)
		return 0xffff88813bc2a0c8ull;  /* a per-CPU delayed work */
	return 0xffff888100a00000ull + (uint64_t)T(target)->tid * 0x40;
}

/* migration/N: push one task of this CPU's queue to the least busy CPU */
static void migrate_one(struct cpu *c, uint64_t now)
{
	struct cpu *d = NULL;
	int32_t ti;

	for (uint32_t k = 0; k < S.ncpu; k++) {
		struct cpu *o = &S.cpu[k];

		if (o != c && (!d || o->rq_n + (o->curr >= 0) < d->rq_n + (d->curr >= 0)))
			d = o;
	}
	if (!d || (ti = rq_take_unbound(c)) < 0)
		return;
	rq_push(d, ti, false);
	if (d->curr < 0 && d->rq_n == 1)
		d->idle_switch_t = now + range(2 * US, 6 * US);
}

static void step_kthread(struct cpu *c, uint64_t now, struct task *t)
{
	switch (t->pc) {
	case K_RUN:
		if (S.winding)
			return park(c, now, t);
		switch (t->role) {
		case R_KSOFTIRQD:
			EMIT(argus_tracegen__softirq_entry(S.g, TS(now), c->id, t->tid, t->pid,
							   VEC_NET_RX));
			cont(t, now, K_SI_NET, range(1 * US, 5 * US));
			break;
		case R_KWORKER:
			if (t->iters) {
				/* housekeeping (vmstat_update and the like) */
				t->iters--;
				t->conn = -1;
				EMIT(argus_tracegen__wq_start(S.g, TS(now), c->id, t->tid, t->pid,
							      work_addr(-1), WQ_FN + 0x1c0));
				cont(t, now, K_WQ_END, range(2 * US, 12 * US));
				break;
			}
			if (!t->work.n)
				return kthread_sleep(c, now, t);
			t->conn = wl_pop(&t->work);
			EMIT(argus_tracegen__wq_start(S.g, TS(now), c->id, t->tid, t->pid,
						      work_addr(t->conn), WQ_FN));
			cont(t, now, K_WQ_WAKE, range(2 * US, 40 * US));
			break;
		case R_RCU:
			cont(t, now, K_SLEEP, range(2 * US, 15 * US));
			break;
		case R_MIGRATION:
			migrate_one(c, now);
			cont(t, now, K_SLEEP, range(1 * US, 4 * US));
			break;
		default:
			abort();
		}
		break;
	case K_SI_NET:
		net_rx(c, now, AE_CTX_SOFTIRQ, t->tid, t->pid);
		cont(t, now, K_SI_EXIT, range(1 * US, 4 * US));
		break;
	case K_SI_EXIT:
		EMIT(argus_tracegen__softirq_exit(S.g, TS(now), c->id, t->tid, t->pid,
						  VEC_NET_RX));
		cont(t, now, K_SLEEP, range(300, 1000));
		break;
	case K_WQ_WAKE:
		wake_by(c, now, t, t->conn);
		cont(t, now, K_WQ_END, range(500, 2000));
		break;
	case K_WQ_END:
		EMIT(argus_tracegen__wq_end(S.g, TS(now), c->id, t->tid, t->pid,
					    work_addr(t->conn),
					    t->conn < 0 ? WQ_FN + 0x1c0 : WQ_FN));
		cont(t, now, K_RUN, range(300, 800));
		break;
	case K_SLEEP:
		kthread_sleep(c, now, t);
		break;
	default:
		abort();
	}
}

/* ---------------------------------------------------------------------
 * --ui-hang: one cross-process UI hang with a known culprit, played by
 * five more user tasks (role R_SCEN) of the same simulation, so they are
 * scheduled, preempted, interrupted and sampled like the others and obey
 * the same rules.  Modelled on tests/apps/case_lost_conn.c (case study 6).
 *
 *   input (I)          every 100-200 ms: clock_nanosleep, then write one
 *                      byte to sqlclient's input pipe (waking it in poll)
 *   sqlclient (U)      main thread, the event loop: poll on the pipe; per
 *                      input, read it, hand a job to query_worker (a
 *                      condition variable: futex wake on UH_CV_JOB), wait
 *                      for the answer (futex wait on UH_CV_DONE), back to
 *                      poll.  About 1 ms away from poll per input
 *   query_worker (W)   a sqlclient thread: waits for a job (futex on
 *                      UH_CV_JOB), sendmsg()s the query to dbserver on a
 *                      unix socket, blocks in recvfrom() for the result,
 *                      then wakes U (futex wake on UH_CV_DONE)
 *   dbserver (D)       main thread: recvfrom(), take the table lock (a
 *                      mutex: no syscall while it is free), execute,
 *                      unlock, sendmsg() the result
 *   db_vacuum (V)      a dbserver thread that naps 0.3-0.9 s in
 *                      clock_nanosleep.  Once (see uh_vacuum_due) it wakes
 *                      just before an input, takes the table lock and
 *                      holds it for UH_VACUUM (3 s) in clock_nanosleep, then
 *                      unlocks with a futex wake of D waiting on UH_LOCK
 *
 * The hang: D blocks in futex on the table lock for ~3 s, so W stays in
 * recvfrom and U in futex, away from poll: culprit W, chain W, D, V.  Every
 * choice is made when the task runs, from the shared state below: a job or
 * an answer that is ready before the futex wait makes it return EAGAIN (the
 * futex word changed), a wake-up is made only for a thread really waiting,
 * and if V cannot get the lock, or D never comes while V holds it, the hang
 * is tried again later.  main() prints the ground truth (uh_report).
 */
#define UH_VACUUM (3000 * MS)     /* db_vacuum holds the table lock */
#define UH_MIN_NORMAL 5           /* normal inputs handled before the hang */
#define UH_PIPE_INO 4100001ull    /* above the background's inode numbers */
#define UH_CINO 4100010ull        /* query_worker's socket inode */
#define UH_SINO 4100011ull        /* dbserver's end */
#define UH_WFD 4                  /* input: the pipe's write end */
#define UH_RFD 5                  /* sqlclient: its read end */
#define UH_CFD 7                  /* query_worker's socket */
#define UH_SFD 9                  /* dbserver's socket */
#define UH_CV_JOB 0x5612a0c04100ull   /* in sqlclient */
#define UH_CV_DONE 0x5612a0c04140ull  /* in sqlclient */
#define UH_LOCK 0x55f3b2e0a0c0ull     /* the table lock, in dbserver */
#define CLOCK_MONOTONIC_ID 1

/* where the one hang is */
enum { PH_NORMAL, PH_ARMED, PH_VACUUM, PH_HANG, PH_DONE };

static struct uihang {
	int32_t u, w, d, v, in;     /* task indices */
	uint8_t phase;              /* PH_*.  ARMED: V's nap ends just before
	                               an input; VACUUM: V holds the lock;
	                               HANG: D waits for it, the input in
	                               flight is the hang; DONE: U back in poll */
	bool job, answer;           /* the condition variables' predicates */
	uint32_t pipe_avail;        /* input bytes U has not read */
	uint32_t req, reply;        /* socket bytes sent, not yet received */
	int32_t lock_owner;         /* table lock: task index, -1 free */
	uint64_t in_next;           /* when the input's nap timer expires, 0 none */
	bool in_iter, hang_iter;    /* U is away from poll / for the hang */
	uint64_t poll_exit;         /* ts of U's last poll return */
	uint64_t hang_start, hang_end;      /* U: poll return .. next poll call */
	uint64_t lock_from, lock_to;        /* D: futex enter .. exit */
	uint64_t vac_from, vac_to;          /* V: clock_nanosleep enter .. exit */
	uint32_t normal, normal_before;     /* inputs handled without the hang */
} UH = { .lock_owner = -1 };

static inline bool waits(int32_t ti, uint8_t wait)
{
	return T(ti)->state == ST_BLOCKED && T(ti)->wait == wait;
}

/* Time for the vacuum: >= UH_MIN_NORMAL normal inputs done, and half the
 * events written, or fewer left than the hang needs (a short trace:
 * events per simulated ns so far x (a nap + the vacuum + 1 s), with a
 * margin). */
static bool uh_vacuum_due(uint64_t now)
{
	uint64_t reserve = 12ull * S.nactive + 16ull * S.ncpu + 64, left;
	double rate;

	if (UH.phase != PH_NORMAL || UH.normal < UH_MIN_NORMAL || now <= T0)
		return false;
	if (S.nev >= S.target / 2)
		return true;
	rate = (double)S.nev / (double)(now - T0);
	left = S.target > S.nev + reserve ? S.target - S.nev - reserve : 0;
	return (double)left < 1.5 * rate * (double)(900 * MS + UH_VACUUM + 1000 * MS);
}

/* U calls poll: an input's handling is over */
static void uh_iteration_end(void)
{
	if (!UH.in_iter)
		return;
	UH.in_iter = false;
	if (UH.hang_iter) {
		UH.hang_iter = false;
		UH.hang_end = S.last_ts;
		UH.phase = PH_DONE;
	} else {
		UH.normal++;
		if (UH.phase < PH_HANG)
			UH.normal_before++;
	}
}

static void uh_poll_return(struct cpu *c, uint64_t now, struct task *t)
{
	sys_exit(c, now, t, SYS_poll, 1, ubuf(t) + 0x100, AE_OBJ_NONE, 0, 0);
	UH.poll_exit = S.last_ts;
	UH.in_iter = true;
	cont(t, now, U_READ, range(1 * US, 4 * US));
}

static void uh_sleep(struct cpu *c, uint64_t now, struct task *t, uint8_t resume)
{
	arm_timer(c, now, t, timer_addr(t, 0), t->len, HRTIMER_MODE_REL);
	block(c, now + 300, t, WT_SLEEP, ARGUS_TG_INTERRUPTIBLE, SYS_clock_nanosleep,
	      t->len, AE_OBJ_NONE, 0, 0, SITE_SLEEP, resume);
}

static void step_uihang(struct cpu *c, uint64_t now, struct task *t)
{
	int32_t me = (int32_t)(t - S.t);
	int ret;

	switch (t->pc) {
	/* sqlclient main */
	case U_POLL:
		if (S.winding)
			return park(c, now, t);
		sys_enter(c, now, t, SYS_poll, ubuf(t) + 0x100, 1, 0xffffffffu, 0);
		uh_iteration_end();
		cont(t, now, U_POLL_DECIDE, syscall_ns());
		break;
	case U_POLL_DECIDE:
		if (UH.pipe_avail) {
			uh_poll_return(c, now, t);
			break;
		}
		block(c, now + 300, t, WT_POLL, ARGUS_TG_INTERRUPTIBLE, SYS_poll, ~0ull,
		      AE_OBJ_NONE, 0, 0, SITE_EPOLL, U_POLL_WOKEN);
		break;
	case U_POLL_WOKEN:
		uh_poll_return(c, now + 200, t);
		break;
	case U_READ:
		sys_enter(c, now, t, SYS_read, UH_RFD, ubuf(t), 4096, 0);
		cont(t, now, U_READ_DONE, syscall_ns());
		break;
	case U_READ_DONE:
		/* inputs queued during a hang come in one read, one query */
		ret = (int)UH.pipe_avail;
		UH.pipe_avail = 0;
		sys_exit(c, now, t, SYS_read, ret, UH_RFD, AE_OBJ_PIPE, UH_PIPE_INO, 0);
		cont(t, now, U_POST, range(80 * US, 200 * US));
		break;
	case U_POST:
		UH.job = true;
		if (waits(UH.w, WT_CV)) {
			sys_enter(c, now, t, SYS_futex, UH_CV_JOB, FUTEX_WAKE_PRIVATE, 1, 0);
			cont(t, now, U_WAKE_DONE, syscall_ns());
		} else {
			cont(t, now, U_WAIT, range(1 * US, 3 * US));
		}
		break;
	case U_WAKE_DONE:
		ret = wake_by(c, now, t, UH.w);
		sys_exit(c, now + 200, t, SYS_futex, ret, UH_CV_JOB, AE_OBJ_NONE, 0, 0);
		cont(t, now, U_WAIT, range(1 * US, 3 * US));
		break;
	case U_WAIT:
		if (UH.answer) {
			UH.answer = false;
			cont(t, now, U_POLL, range(150 * US, 300 * US));
			break;
		}
		sys_enter(c, now, t, SYS_futex, UH_CV_DONE, FUTEX_WAIT_PRIVATE, 0, 0);
		cont(t, now, U_WAIT_DECIDE, syscall_ns());
		break;
	case U_WAIT_DECIDE:
		if (UH.answer) {
			UH.answer = false;
			sys_exit(c, now, t, SYS_futex, -EAGAIN, UH_CV_DONE, AE_OBJ_NONE, 0, 0);
			cont(t, now, U_POLL, range(150 * US, 300 * US));
			break;
		}
		block(c, now, t, WT_CV, ARGUS_TG_INTERRUPTIBLE, SYS_futex, UH_CV_DONE,
		      AE_OBJ_NONE, 0, 0, SITE_FUTEX_Q, U_WAIT_WOKEN);
		break;
	case U_WAIT_WOKEN:
		UH.answer = false;
		sys_exit(c, now, t, SYS_futex, 0, UH_CV_DONE, AE_OBJ_NONE, 0, 0);
		cont(t, now, U_POLL, range(150 * US, 300 * US));  /* show the result */
		break;

	/* query_worker */
	case Q_WAIT:
		if (S.winding)
			return park(c, now, t);
		if (UH.job) {
			UH.job = false;
			cont(t, now, Q_SEND, range(5 * US, 20 * US));
			break;
		}
		sys_enter(c, now, t, SYS_futex, UH_CV_JOB, FUTEX_WAIT_PRIVATE, 0, 0);
		cont(t, now, Q_WAIT_DECIDE, syscall_ns());
		break;
	case Q_WAIT_DECIDE:
		if (UH.job || S.winding) {
			sys_exit(c, now, t, SYS_futex, -EAGAIN, UH_CV_JOB, AE_OBJ_NONE, 0, 0);
			cont(t, now, Q_WAIT, range(200, 600));
			break;
		}
		block(c, now, t, WT_CV, ARGUS_TG_INTERRUPTIBLE, SYS_futex, UH_CV_JOB,
		      AE_OBJ_NONE, 0, 0, SITE_FUTEX_Q, Q_WAIT_WOKEN);
		break;
	case Q_WAIT_WOKEN:
		sys_exit(c, now, t, SYS_futex, 0, UH_CV_JOB, AE_OBJ_NONE, 0, 0);
		cont(t, now, Q_WAIT, range(200, 600));
		break;
	case Q_SEND:
		t->len = 60 + below(400);
		sys_enter(c, now, t, SYS_sendmsg, UH_CFD, ubuf(t) + 0x80, 0, 0);
		cont(t, now, Q_SEND_DONE, syscall_ns());
		break;
	case Q_SEND_DONE:
		UH.req += t->len;
		if (waits(UH.d, WT_RECV) && wake_by(c, now, t, UH.d))
			now += 200;
		sys_exit(c, now, t, SYS_sendmsg, t->len, UH_CFD, AE_OBJ_UNIX, UH_CINO, UH_SINO);
		cont(t, now, Q_RECV, range(1 * US, 3 * US));
		break;
	case Q_RECV:
		if (S.winding)
			return park(c, now, t);
		sys_enter(c, now, t, SYS_recvfrom, UH_CFD, ubuf(t) + 0xc0, 65536, 0);
		cont(t, now, Q_RECV_DECIDE, syscall_ns());
		break;
	case Q_RECV_DECIDE:
	case Q_RECV_WOKEN:
		if (UH.reply) {
			ret = (int)UH.reply;
			UH.reply = 0;
			sys_exit(c, now, t, SYS_recvfrom, ret, UH_CFD, AE_OBJ_UNIX, UH_CINO, UH_SINO);
			cont(t, now, Q_DONE, range(30 * US, 100 * US));  /* parse the rows */
			break;
		}
		block(c, now, t, WT_RECV, ARGUS_TG_INTERRUPTIBLE, SYS_recvfrom, UH_CFD,
		      AE_OBJ_UNIX, UH_CINO, UH_SINO, SITE_RECV, Q_RECV_WOKEN);
		break;
	case Q_DONE:
		UH.answer = true;
		if (waits(UH.u, WT_CV)) {
			sys_enter(c, now, t, SYS_futex, UH_CV_DONE, FUTEX_WAKE_PRIVATE, 1, 0);
			cont(t, now, Q_WAKE_DONE, syscall_ns());
		} else {
			cont(t, now, Q_WAIT, range(1 * US, 3 * US));
		}
		break;
	case Q_WAKE_DONE:
		ret = wake_by(c, now, t, UH.u);
		sys_exit(c, now + 200, t, SYS_futex, ret, UH_CV_DONE, AE_OBJ_NONE, 0, 0);
		cont(t, now, Q_WAIT, range(1 * US, 3 * US));
		break;

	/* dbserver main */
	case D_RECV:
		if (S.winding)
			return park(c, now, t);
		sys_enter(c, now, t, SYS_recvfrom, UH_SFD, ubuf(t) + 0xc0, 65536, 0);
		cont(t, now, D_RECV_DECIDE, syscall_ns());
		break;
	case D_RECV_DECIDE:
	case D_RECV_WOKEN:
		if (UH.req) {
			ret = (int)UH.req;
			UH.req = 0;
			sys_exit(c, now, t, SYS_recvfrom, ret, UH_SFD, AE_OBJ_UNIX, UH_SINO, UH_CINO);
			cont(t, now, D_LOCK, range(10 * US, 40 * US));  /* parse */
			break;
		}
		block(c, now, t, WT_RECV, ARGUS_TG_INTERRUPTIBLE, SYS_recvfrom, UH_SFD,
		      AE_OBJ_UNIX, UH_SINO, UH_CINO, SITE_RECV, D_RECV_WOKEN);
		break;
	case D_LOCK:
		if (UH.lock_owner < 0) {
			UH.lock_owner = me;
			cont(t, now, D_UNLOCK, range(250 * US, 600 * US));  /* execute */
			break;
		}
		/* db_vacuum holds it: this input is the hang */
		sys_enter(c, now, t, SYS_futex, UH_LOCK, FUTEX_WAIT_PRIVATE, 2, 0);
		if (UH.phase == PH_VACUUM) {
			UH.phase = PH_HANG;
			UH.hang_iter = true;
			UH.hang_start = UH.poll_exit;
			UH.lock_from = S.last_ts;
		}
		cont(t, now, D_LOCK_DECIDE, syscall_ns());
		break;
	case D_LOCK_DECIDE:
		if (UH.lock_owner < 0) {
			UH.lock_owner = me;
			sys_exit(c, now, t, SYS_futex, -EAGAIN, UH_LOCK, AE_OBJ_NONE, 0, 0);
			cont(t, now, D_UNLOCK, range(250 * US, 600 * US));
			break;
		}
		block(c, now, t, WT_LOCK, ARGUS_TG_INTERRUPTIBLE, SYS_futex, UH_LOCK,
		      AE_OBJ_NONE, 0, 0, SITE_MUTEX, D_LOCK_WOKEN);
		break;
	case D_LOCK_WOKEN:
		/* the unlocker handed the lock over */
		sys_exit(c, now, t, SYS_futex, 0, UH_LOCK, AE_OBJ_NONE, 0, 0);
		UH.lock_to = S.last_ts;
		cont(t, now, D_UNLOCK, range(250 * US, 600 * US));
		break;
	case D_UNLOCK:
		UH.lock_owner = -1;  /* nobody else waits for it */
		cont(t, now, D_REPLY, range(5 * US, 20 * US));
		break;
	case D_REPLY:
		t->len = 200 + below(3000);
		sys_enter(c, now, t, SYS_sendmsg, UH_SFD, ubuf(t) + 0x80, 0, 0);
		cont(t, now, D_REPLY_DONE, syscall_ns());
		break;
	case D_REPLY_DONE:
		UH.reply += t->len;
		if (waits(UH.w, WT_RECV) && wake_by(c, now, t, UH.w))
			now += 200;
		sys_exit(c, now, t, SYS_sendmsg, t->len, UH_SFD, AE_OBJ_UNIX, UH_SINO, UH_CINO);
		cont(t, now, D_RECV, range(1 * US, 3 * US));
		break;

	/* db_vacuum */
	case V_NAP:
		if (S.winding)
			return park(c, now, t);
		t->len = (uint32_t)range(300 * MS, 900 * MS);
		/* the vacuum: wake just before the input's next byte, so the
		 * query it causes finds the lock taken */
		if (uh_vacuum_due(now) && waits(UH.in, WT_SLEEP) && UH.in_next > now + 2 * MS) {
			t->len = (uint32_t)(UH.in_next - now - range(300 * US, 900 * US));
			UH.phase = PH_ARMED;
		}
		sys_enter(c, now, t, SYS_clock_nanosleep, CLOCK_MONOTONIC_ID, 0,
			  ubuf(t) + 0x300, 0);
		cont(t, now, V_NAP_ARM, range(300, 800));
		break;
	case V_NAP_ARM:
		uh_sleep(c, now, t, V_NAP_WOKEN);
		break;
	case V_NAP_WOKEN:
		sys_exit(c, now, t, SYS_clock_nanosleep, 0, CLOCK_MONOTONIC_ID, AE_OBJ_NONE, 0, 0);
		if (UH.phase == PH_ARMED && UH.lock_owner < 0) {
			UH.lock_owner = me;
			UH.phase = PH_VACUUM;
			cont(t, now, V_VAC, range(5 * US, 15 * US));
			break;
		}
		if (UH.phase == PH_ARMED)
			UH.phase = PH_NORMAL;  /* D has the lock: next time */
		cont(t, now, V_NAP, range(5 * US, 30 * US));
		break;
	case V_VAC:
		t->len = (uint32_t)UH_VACUUM;
		sys_enter(c, now, t, SYS_clock_nanosleep, CLOCK_MONOTONIC_ID, 0,
			  ubuf(t) + 0x300, 0);
		UH.vac_from = S.last_ts;
		cont(t, now, V_VAC_ARM, range(300, 800));
		break;
	case V_VAC_ARM:
		uh_sleep(c, now, t, V_VAC_WOKEN);
		break;
	case V_VAC_WOKEN:
		sys_exit(c, now, t, SYS_clock_nanosleep, 0, CLOCK_MONOTONIC_ID, AE_OBJ_NONE, 0, 0);
		UH.vac_to = S.last_ts;
		cont(t, now, V_UNLOCK, range(20 * US, 80 * US));
		break;
	case V_UNLOCK:
		UH.lock_owner = -1;
		if (waits(UH.d, WT_LOCK)) {
			sys_enter(c, now, t, SYS_futex, UH_LOCK, FUTEX_WAKE_PRIVATE, 1, 0);
			cont(t, now, V_UNLOCK_DONE, syscall_ns());
			break;
		}
		if (UH.phase == PH_VACUUM)
			UH.phase = PH_NORMAL;  /* no query came: try again later */
		cont(t, now, V_NAP, range(5 * US, 30 * US));
		break;
	case V_UNLOCK_DONE:
		ret = 0;
		if (waits(UH.d, WT_LOCK)) {
			UH.lock_owner = UH.d;
			ret = wake_by(c, now, t, UH.d);
		}
		sys_exit(c, now + 200, t, SYS_futex, ret, UH_LOCK, AE_OBJ_NONE, 0, 0);
		cont(t, now, V_NAP, range(5 * US, 30 * US));
		break;

	/* input */
	case I_NAP:
		if (S.winding)
			return park(c, now, t);
		t->len = (uint32_t)range(100 * MS, 200 * MS);
		sys_enter(c, now, t, SYS_clock_nanosleep, CLOCK_MONOTONIC_ID, 0,
			  ubuf(t) + 0x300, 0);
		cont(t, now, I_NAP_ARM, range(300, 800));
		break;
	case I_NAP_ARM:
		UH.in_next = now + t->len;
		uh_sleep(c, now, t, I_NAP_WOKEN);
		break;
	case I_NAP_WOKEN:
		UH.in_next = 0;
		sys_exit(c, now, t, SYS_clock_nanosleep, 0, CLOCK_MONOTONIC_ID, AE_OBJ_NONE, 0, 0);
		cont(t, now, I_WRITE, range(10 * US, 40 * US));
		break;
	case I_WRITE:
		sys_enter(c, now, t, SYS_write, UH_WFD, ubuf(t), 1, 0);
		cont(t, now, I_WRITE_DONE, syscall_ns());
		break;
	case I_WRITE_DONE:
		UH.pipe_avail++;
		if (waits(UH.u, WT_POLL) && wake_by(c, now, t, UH.u))
			now += 200;
		sys_exit(c, now, t, SYS_write, 1, UH_WFD, AE_OBJ_PIPE, UH_PIPE_INO, 0);
		cont(t, now, I_NAP, range(2 * US, 8 * US));
		break;
	default:
		abort();
	}
}

/* ---------------------------------------------------------------------
 * The CPU loop.
 */
static void task_step(struct cpu *c)
{
	uint64_t now = S.now;
	struct task *t;

	if (c->curr < 0) {
		/* idle with a queued task: switch to it */
		int32_t ni = rq_pop(c);

		EMIT(argus_tracegen__sw(S.g, TS(now), c->id, 0, 0, ARGUS_TG_RUNNING, -1, 0,
					AE_OBJ_NONE, 0, 0, T(ni)->tid, T(ni)->pid));
		start_running(c, ni, now);
		return;
	}
	t = T(c->curr);
	if (c->resched_t <= now && !in_bh(c)) {
		c->resched_t = INF;
		if (c->rq_n) {
			int32_t ti = c->curr, ni = rq_pop(c);

			t->remain = t->t_next > now ? t->t_next - now : 1;
			EMIT(argus_tracegen__sw(S.g, TS(now), c->id, t->tid, t->pid,
						ARGUS_TG_RUNNING, -1, 0, AE_OBJ_NONE, 0, 0,
						T(ni)->tid, T(ni)->pid));
			S.busy_ns += now - t->run_since;
			t->state = ST_RUNNABLE;
			start_running(c, ni, now);
			enqueue(ti, now, false);
			return;
		}
		if (t->t_next > now)
			return;
	}
	switch (t->role) {
	case R_LOOP:
		step_loop(c, now, t);
		break;
	case R_WORKER:
		step_worker(c, now, t);
		break;
	case R_CHILD:
		step_child(c, now, t);
		break;
	case R_SCEN:
		step_uihang(c, now, t);
		break;
	default:
		step_kthread(c, now, t);
		break;
	}
}

static void dispatch(struct cpu *c)
{
	uint64_t now = S.now;

	if (c->nprog) {
		run_op(c);
		return;
	}
	if (!S.winding) {
		if (heap_top(c) <= now) {
			timed_irq(c, now);
			return;
		}
		if (c->nic_t <= now) {
			nic(c, now);
			return;
		}
		if (c->curr >= 0 && c->tick_t <= now) {
			tick(c, now);
			return;
		}
		if (c->sample_t <= now) {
			sample(c, now);
			return;
		}
	}
	if (task_time(c) <= now)
		task_step(c);
}

/* ---------------------------------------------------------------------
 * Setup.
 */
static int32_t new_task(void)
{
	struct task *t;

	if (S.nt == S.tcap) {
		S.tcap = S.tcap ? S.tcap * 2 : 256;
		S.t = xrealloc(S.t, S.tcap * sizeof(*S.t));
	}
	t = &S.t[S.nt];
	memset(t, 0, sizeof(*t));
	t->cpu = -1;
	t->bound = -1;
	t->proc = -1;
	t->rq_next = t->wnext = -1;
	t->conn = t->child = t->parent = -1;
	t->work.head = t->work.tail = -1;
	return (int32_t)S.nt++;
}

static int32_t kthread(uint32_t tid, const char *comm, uint8_t role, int bound)
{
	int32_t ti = new_task();
	struct task *t = T(ti);

	t->tid = t->pid = tid;
	t->role = role;
	t->bound = (int16_t)bound;
	t->cpu = (int16_t)(bound >= 0 ? bound : 0);
	t->state = ST_BLOCKED;
	t->wait = WT_KTHREAD;
	t->pc = K_RUN;
	snprintf(t->comm, sizeof(t->comm), "%.15s", comm);
	S.nkernel++;
	return ti;
}

static void build_stacks(struct stk *pool, uint64_t app, uint64_t libc)
{
	for (uint32_t s = 0; s < POOL; s++) {
		struct stk *k = &pool[s];
		uint32_t n = 4 + below(5), i = 0;

		/* blocking sites start in a libc syscall wrapper, compute
		 * stacks in the application */
		if (s < NSITES)
			k->ip[i++] = libc + 0x11a000 + s * 0x90 + 0x1b;
		else
			k->ip[i++] = app + 0x1000 + (below(0x40000) & ~0xfu) + 0x7;
		while (i < n - 1)
			k->ip[i++] = app + 0x1000 + (below(0x40000) & ~0xfu) + 0x5;
		k->ip[i++] = libc + 0x29d90;  /* __libc_start_call_main */
		k->n = n;
	}
}

static void setup(uint32_t ncpu, uint32_t np, uint32_t tpp)
{
	static const char *const names[] = {
		"nginx", "postgres", "redis-server", "node", "python3", "java",
		"dockerd", "sshd", "chrome", "Xorg", "pulseaudio", "systemd-journal",
		"containerd", "mysqld", "envoy", "grafana", "prometheus", "memcached",
		"haproxy", "rsyslogd",
	};
	uint32_t nnames = sizeof(names) / sizeof(names[0]);
	uint32_t pid = 2000;
	char comm[64];

	S.ncpu = ncpu;
	S.np = np;
	S.tpp = tpp;
	S.cpu = calloc(ncpu, sizeof(*S.cpu));
	S.p = calloc(np, sizeof(*S.p));
	S.pipe = calloc(np, sizeof(*S.pipe));
	S.conn = calloc((size_t)np * (tpp - 1), sizeof(*S.conn));
	S.pool = calloc((size_t)(np + 1 + UH_NPROC) * POOL, sizeof(*S.pool));
	if (!S.cpu || !S.p || !S.pipe || !S.conn || !S.pool)
		die("out of memory", ENOMEM);

	/* kernel threads */
	S.rcu = kthread(16, "rcu_preempt", R_RCU, -1);
	for (uint32_t k = 0; k < ncpu; k++) {
		struct cpu *c = &S.cpu[k];

		c->id = (uint16_t)k;
		c->curr = -1;
		c->rq_head = c->rq_tail = -1;
		c->resched_t = c->tick_t = INF;
		c->sample_t = T0 + below((uint32_t)SAMPLE_PERIOD);
		c->nic_t = T0 + expo((double)NIC_MEAN);
		snprintf(comm, sizeof(comm), "migration/%u", k);
		c->migration = kthread(20 + 6 * k, comm, R_MIGRATION, (int)k);
		snprintf(comm, sizeof(comm), "ksoftirqd/%u", k);
		c->ksoftirqd = kthread(21 + 6 * k, comm, R_KSOFTIRQD, (int)k);
		snprintf(comm, sizeof(comm), "kworker/%u:1", k);
		c->kworker = kthread(23 + 6 * k, comm, R_KWORKER, (int)k);
	}

	/* processes: pipes in a ring (proc i writes to proc i+1), one unix
	 * socketpair per worker to another process's loop */
	for (uint32_t i = 0; i < np; i++) {
		struct proc *p = &S.p[i];

		p->pid = pid;
		p->qaddr = 0x55d000000000ull + (uint64_t)i * 0x200000 + 0x4040;
		p->maddr = p->qaddr + 0x80;
		p->epfile = 0xffff888104000000ull + (uint64_t)i * 0x1000;
		p->use_poll = i % 3 == 2;
		p->has_tcp = i % 4 == 0;
		p->timed = i % 4 == 1;
		p->mutex_owner = -1;
		p->qwait.head = p->qwait.tail = p->mwait.head = p->mwait.tail = -1;
		p->in_pipe = (int32_t)i;
		p->out_pipe = (int32_t)((i + 1) % np);
		p->tcp_local = (0x0a000001ull << 16) | (8000 + i);
		p->tcp_peer = ((0x0a0000c8ull + below(50)) << 16) | (32768 + below(28000));
		p->file_obj = ((uint64_t)(259u << 20 | 2) << 32) ^ (1300000 + i);
		p->next_fd = 20;
		S.pipe[i].ino = 60000 + i * 3;
		S.pipe[i].reader_proc = (int32_t)i;
		S.pipe[i].rfd = 4;
		S.pipe[i].wfd = 5;
		S.pipe[i].wwait.head = S.pipe[i].wwait.tail = -1;
		p->conns = calloc(tpp, sizeof(*p->conns));  /* grown below */
		build_stacks(&S.pool[i * POOL], 0x555555554000ull + (uint64_t)i * 0x1000000,
			     0x7f0000000000ull + (uint64_t)i * 0x10000000);
		for (uint32_t w = 0; w < tpp; w++) {
			int32_t ti = new_task();
			struct task *t = T(ti);

			t->tid = pid + w;
			t->pid = pid;
			t->proc = (int32_t)i;
			t->pool = (int32_t)i;
			t->role = w ? R_WORKER : R_LOOP;
			t->pc = w ? W_START : L_START;
			t->state = ST_RUNNABLE;
			if (w)
				snprintf(comm, sizeof(comm), "%.9s-w%u", names[i % nnames], w);
			else
				snprintf(comm, sizeof(comm), "%s", names[i % nnames]);
			comm[AE_COMM_LEN - 1] = 0;  /* as the kernel keeps it */
			memcpy(t->comm, comm, AE_COMM_LEN);
			if (!w)
				p->loop = ti;
			S.nuser++;
		}
		pid += tpp + 1 + below(40);
	}
	build_stacks(&S.pool[np * POOL], 0x560000000000ull, 0x7f5000000000ull);
	for (uint32_t i = 0; i < np; i++) {
		for (uint32_t w = 1; w < tpp; w++) {
			uint32_t srv = (i + 1 + w) % np;
			struct conn *k = &S.conn[S.nconn];
			struct proc *sp;

			if (srv == i && np > 1)
				srv = (srv + 1) % np;
			sp = &S.p[srv];
			k->cino = 90000 + 2 * S.nconn;
			k->sino = k->cino + 1;
			k->client = S.p[i].loop + (int32_t)w;
			k->server = (int32_t)srv;
			k->cfd = 8 + (w - 1);
			k->sfd = sp->next_fd++;
			if (sp->nconns % tpp == 0 && sp->nconns)
				sp->conns = xrealloc(sp->conns, (sp->nconns + tpp) * sizeof(*sp->conns));
			sp->conns[sp->nconns++] = (int32_t)S.nconn;
			T(k->client)->conn = (int32_t)S.nconn;
			S.nconn++;
		}
	}
	S.next_pid = pid;

	/* declare every task; user threads start runnable, spread over CPUs */
	for (uint32_t ti = 0; ti < S.nt; ti++) {
		struct task *t = T((int32_t)ti);
		int rc = argus_tracegen__task(S.g, t->tid, t->pid,
					      t->role >= R_KSOFTIRQD ? 2 : 1, t->comm);

		if (rc)
			die("declaring tasks", rc);
		if (t->state == ST_RUNNABLE) {
			struct cpu *c = &S.cpu[ti % ncpu];

			rq_push(c, (int32_t)ti, false);
			if (c->rq_n == 1)
				c->idle_switch_t = T0 + range(1 * US, 5 * US);
			S.nactive++;
		}
	}
}

/* The --ui-hang tasks: three processes after the background's pids, their
 * stack pools after the children's, all runnable at the start. */
static void uh_setup(void)
{
	static const struct { const char *comm; uint32_t dpid, dtid; uint8_t pc, proc; } tk[] = {
		{ "sqlclient", 0, 0, U_POLL, 0 },
		{ "query_worker", 0, 1, Q_WAIT, 0 },
		{ "dbserver", 7, 0, D_RECV, 1 },
		{ "db_vacuum", 7, 1, V_NAP, 1 },
		{ "input", 12, 0, I_NAP, 2 },
	};
	int32_t *idx[] = { &UH.u, &UH.w, &UH.d, &UH.v, &UH.in };
	uint32_t base = S.next_pid;

	for (uint32_t k = 0; k < UH_NPROC; k++)
		build_stacks(&S.pool[(S.np + 1 + k) * POOL], 0x5612a0000000ull + k * 0x2000000ull,
			     0x7f3a00000000ull + k * 0x10000000ull);
	for (uint32_t i = 0; i < sizeof(tk) / sizeof(tk[0]); i++) {
		int32_t ti = new_task();
		struct task *t = T(ti);
		struct cpu *c = &S.cpu[i % S.ncpu];
		int rc;

		t->pid = base + tk[i].dpid;
		t->tid = t->pid + tk[i].dtid;
		t->role = R_SCEN;
		t->pool = (int32_t)(S.np + 1 + tk[i].proc);
		t->pc = tk[i].pc;
		t->state = ST_RUNNABLE;
		snprintf(t->comm, sizeof(t->comm), "%s", tk[i].comm);
		*idx[i] = ti;
		rc = argus_tracegen__task(S.g, t->tid, t->pid, 1, t->comm);
		if (rc)
			die("declaring tasks", rc);
		rq_push(c, ti, false);
		if (c->rq_n == 1)
			c->idle_switch_t = T0 + range(1 * US, 5 * US);
		S.nactive++;
		S.nuser++;
	}
	S.next_pid = base + 20;
}

/* The ground truth, KEY=VALUE on stdout. */
static void uh_report(void)
{
	const struct task *u = T(UH.u), *w = T(UH.w), *d = T(UH.d), *v = T(UH.v),
			  *in = T(UH.in);

	printf("UI_PID=%u\nUI_TID=%u\nUI_COMM=%s\n", u->pid, u->tid, u->comm);
	printf("WORKER_PID=%u\nWORKER_TID=%u\nWORKER_COMM=%s\n", w->pid, w->tid, w->comm);
	printf("DB_PID=%u\nDB_TID=%u\nDB_COMM=%s\n", d->pid, d->tid, d->comm);
	printf("VACUUM_PID=%u\nVACUUM_TID=%u\nVACUUM_COMM=%s\n", v->pid, v->tid, v->comm);
	printf("INPUT_PID=%u\nINPUT_TID=%u\nINPUT_COMM=%s\n", in->pid, in->tid, in->comm);
	printf("HANG_START_NS=%llu\nHANG_END_NS=%llu\nHANG_MS=%.1f\n",
	       (unsigned long long)UH.hang_start, (unsigned long long)UH.hang_end,
	       (double)(UH.hang_end - UH.hang_start) / 1e6);
	printf("NORMAL_ITERATIONS=%u\nNORMAL_BEFORE_HANG=%u\n", UH.normal, UH.normal_before);
	printf("EXPECT_KIND=blocked\n");
	printf("CULPRIT_PID=%u\nCULPRIT_TID=%u\nCULPRIT_COMM=%s\nCULPRIT_KIND=blocked\n",
	       w->pid, w->tid, w->comm);
	printf("CHAIN=%u,%u,%u\n", w->tid, d->tid, v->tid);
	printf("DB_KIND=blocked\nDB_LOCK_WAIT_MS=%.1f\nTABLE_LOCK_ADDR=%#llx\n",
	       (double)(UH.lock_to - UH.lock_from) / 1e6, (unsigned long long)UH_LOCK);
	printf("VACUUM_KIND=blocked\nVACUUM_MS=%llu\nVACUUM_START_NS=%llu\nVACUUM_END_NS=%llu\n",
	       (unsigned long long)(UH_VACUUM / MS), (unsigned long long)UH.vac_from,
	       (unsigned long long)UH.vac_to);
}

/* ---------------------------------------------------------------------
 * Run, fill, report.
 */
static void run(void)
{
	for (;;) {
		struct cpu *best = NULL;
		uint64_t bt = INF;

		if (S.stopped)
			return;
		if (!S.winding &&
		    S.nev + 12ull * S.nactive + 16ull * S.ncpu + 64 >= S.target)
			S.winding = true;
		for (uint32_t k = 0; k < S.ncpu; k++) {
			uint64_t t = cpu_next(&S.cpu[k]);

			if (t < bt) {
				bt = t;
				best = &S.cpu[k];
			}
		}
		if (!best)
			return;  /* wound down: every CPU idle */
		if (bt > S.now)
			S.now = bt;
		dispatch(best);
	}
}

/* Top up to exactly S.target with idle timer interrupts. */
static void fill(void)
{
	uint64_t t = S.now + TICK;
	uint32_t k = 0;

	if (S.stopped) {
		S.tail_cut = true;
		return;
	}
	if ((S.target - S.nev) % 2)
		EMIT(argus_tracegen__mark(S.g, TS(S.now + MS), 0, 0, 0,
					  "argus-gen: end of the simulated run"));
	while (S.nev < S.target) {
		uint16_t cpu = (uint16_t)(k++ % S.ncpu);

		EMIT(argus_tracegen__irq_entry(S.g, TS(t), cpu, 0, 0, 0));
		EMIT(argus_tracegen__irq_exit(S.g, TS(t + range(700, 2500)), cpu, 0, 0, 0, 1));
		t += TICK / S.ncpu;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: argus-gen -o FILE --events N [--seed S] [--cpus C] [--procs P]\n"
		"                 [--threads-per-proc T] [--chunk-events K] [--zlevel L]\n"
		"                 [--zlib] [--ui-hang]\n"
		"Write a synthetic system-wide Argus trace of exactly N events: C CPUs\n"
		"(default 2), P processes (default 40) of T threads (default 4, at least 2)\n"
		"plus kernel threads, deterministic per seed (default 1).  K: events per\n"
		"chunk (default 200000); L: compression level 1-9 (default 1), 0 = store\n"
		"raw.  Chunks are zstd frames, as the collector writes; --zlib writes zlib\n"
		"chunks, as files of builds before zstd.\n"
		"--ui-hang adds one UI hang with a known culprit (sqlclient -> query_worker\n"
		"-> dbserver -> db_vacuum) and prints its ground truth on stdout.\n");
}

static bool num(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o) };
	struct argus_error err = { 0 };
	const char *out = NULL;
	uint64_t events = 0, seed = 1, cpus = 2, procs = 40, tpp = 4, chunk = 0, zl = 1;
	const struct argus_tracegen_stats *st;
	uint64_t type[AE_TYPE_MAX], span;
	double t0 = now_s(), secs;
	struct stat sb;
	char line[2048];
	size_t len = 0;
	bool ui_hang = false;
	int rc;

	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--ui-hang")) {
			ui_hang = true;
			i--;  /* no value */
		} else if (!strcmp(a, "-o")) {
			out = v;
			ok = v != NULL;
		} else if (!strcmp(a, "--events")) {
			ok = num(v, 1, UINT64_MAX / 2, &events);
		} else if (!strcmp(a, "--seed")) {
			ok = num(v, 0, UINT64_MAX, &seed);
		} else if (!strcmp(a, "--cpus")) {
			ok = num(v, 1, 256, &cpus);
		} else if (!strcmp(a, "--procs")) {
			ok = num(v, 1, 100000, &procs);
		} else if (!strcmp(a, "--threads-per-proc")) {
			ok = num(v, 2, 1000, &tpp);
		} else if (!strcmp(a, "--chunk-events")) {
			ok = num(v, 1, 10000000, &chunk);
		} else if (!strcmp(a, "--zlevel")) {
			ok = num(v, 0, 9, &zl);
		} else if (!strcmp(a, "--zlib")) {
			o.zlib = true;
			i--;  /* no value */
		} else {
			fprintf(stderr, "argus-gen: unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "argus-gen: %s needs a valid value\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!out || !events) {
		fprintf(stderr, "argus-gen: -o FILE and --events N are required\n");
		usage(stderr);
		return 2;
	}
	if (procs * tpp > 1000000) {
		fprintf(stderr, "argus-gen: at most 1000000 threads (--procs x --threads-per-proc)\n");
		return 2;
	}

	S.target = events;
	S.rs = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	if (!S.rs)
		S.rs = 1;
	for (int i = 0; i < 8; i++)
		rnd();
	S.now = T0;
	S.last_ts = T0 - 1;
	o.ncpus = (uint32_t)cpus;
	o.chunk_events = (uint32_t)chunk;
	o.zlevel = zl ? (int)zl : -1;
	S.g = argus_tracegen__open(out, &o, &err);
	if (!S.g) {
		fprintf(stderr, "argus-gen: %s\n", err.msg);
		return 1;
	}
	setup((uint32_t)cpus, (uint32_t)procs, (uint32_t)tpp);
	if (ui_hang)
		uh_setup();
	run();
	fill();
	st = argus_tracegen__stats(S.g);
	memcpy(type, st->type, sizeof(type));
	span = S.last_ts - T0;
	rc = argus_tracegen__close(S.g);
	if (rc) {
		fprintf(stderr, "argus-gen: writing %s: %s\n", out, strerror(-rc));
		return 1;
	}
	secs = now_s() - t0;
	if (ui_hang && UH.phase != PH_DONE) {
		fprintf(stderr, "argus-gen: %llu events are too few for --ui-hang (%.1f s "
			"simulated; it needs %u normal inputs, then %llu s of hang): "
			"give more --events\n", (unsigned long long)events, (double)span / 1e9,
			UH_MIN_NORMAL, (unsigned long long)(UH_VACUUM / 1000000000ull));
		unlink(out);
		return 1;
	}
	if (stat(out, &sb))
		sb.st_size = 0;

	for (uint16_t k = 0; k < AE_TYPE_MAX; k++) {
		if (!type[k])
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %llu",
					len ? ", " : "", argus_event_type_str(k),
					(unsigned long long)type[k]);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	fprintf(stderr,
		"argus-gen: %llu events (%s); %u threads (%u user, %u kernel, %u forked); "
		"%u cpus, %.3f s simulated, %.0f%% busy; %lld bytes; %.2f s%s\n",
		(unsigned long long)S.nev, line, S.nuser + S.nkernel + S.nforked,
		S.nuser, S.nkernel, S.nforked, S.ncpu, (double)span / 1e9,
		span ? 100.0 * (double)S.busy_ns / ((double)span * S.ncpu) : 0.0,
		(long long)sb.st_size, secs,
		S.tail_cut ? "; tail cut at N (too few events to wind down)" : "");
	if (ui_hang)
		uh_report();
	return 0;
}
