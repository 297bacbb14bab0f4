/* collector.c - raw BPF records in, ordered chunks out.  See collector.h.
 *
 * Data flow:
 *   ring buffer --drain--> on_record() --> pending[] (argus_event + owned
 *   stack/strings in an arena) --emit_ready()--> chunk builder --cut_chunk()
 *   --> trace file.
 *
 * Ordering invariant: records of different CPUs interleave in the ring,
 * and on one CPU a program can be interrupted between taking its timestamp
 * and reserving ring space (an irq or the sampler records in between), so
 * the drain order is only roughly time order.  Each CPU therefore has its
 * own pending queue, kept sorted by ts on insertion (almost always an
 * append; a nested record moves back a few places).  Events are held back
 * HOLDBACK_NS after they are drained, or until their queue holds WINDOW
 * newer ones; at each emit every queue's prefix older than the watermark
 * (now - HOLDBACK_NS, or the newest event any CPU already emitted, if
 * later) goes to that CPU's stream in the chunk, which then never goes
 * backwards, and chunks do not overlap in time.  An event that still arrives behind its
 * stream is counted as "late" and written at the stream's last timestamp,
 * never dropped silently.
 *
 * Batches: each CPU's task-context records reach the ring in batches
 * (kernel-patch/argus.bpf.c), so the ring no longer holds everything
 * older than what it returned: a CPU's batch may still hold records older
 * than another CPU's drained ones.  The probe's horizon is the time
 * before which every record is in the ring or drained (the oldest record
 * still in a batch, or the clock).  The watermark is capped by it, and so
 * is a full queue's early emit, but for two escapes that keep a collector
 * that fell behind from holding its whole backlog: an event a holdback
 * older than the newest task-context record drained (EMIT_GRACE_NS: each
 * ring is in flush order and batches flush within 2 ms and a tick; while
 * the spill ring holds records, counted from the older of the two rings'
 * fronts), and a
 * queue of WINDOW_MAX events.  The horizon never goes backwards, so
 * without those escapes every stream stays behind it and the catch-up
 * below never passes it.  At each chunk cut every stream is closed up to
 * the watermark: an event older than it that still arrives is late, never
 * below the chunk already written.  Batches older than BATCH_STALE_NS (a
 * CPU busy in user code appends nothing, so nothing flushes it) are
 * flushed from here at each run.
 *
 * Why per-CPU queues and no sort: this is the collector's hot path, run
 * for every record (up to millions a second on 2 CPUs); a qsort of all
 * pending events per emit cost more than everything else together.
 *
 * Strings and stacks of a pending event are owned copies in its queue's
 * arena: chunk-local ids only exist once the event lands in the chunk it
 * is written to.  A queue's arena is compacted together with the queue.
 */
#include "collector.h"

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "elf_guard.h"
#include "stack_capture.h"
#include "task_table.h"
#include "trace_format.h"
#include "trace_internal.h"

#define HOLDBACK_NS (20ull * 1000 * 1000)
/* Events a CPU's queue holds before its oldest are emitted regardless of
 * HOLDBACK_NS.  On one CPU, records come out of the ring out of ts order
 * only when a program was interrupted between taking its timestamp and
 * reserving (an irq's records, a sample): a few records deep.  512 events
 * of 128 bytes stay in the cache; 20 ms of a flood (40 K events) did not. */
#define WINDOW 512
/* ... and the most it holds while the horizon (below) holds its events
 * back.  The horizon trails the drain by what the ring held when it was
 * taken: when the collector falls behind (a flood on every CPU), waiting
 * for it kept the whole backlog in the queues, out of the cache, and the
 * collector fell further behind (messaging -g 20: 1.8 M lost where the
 * build before batches lost 0-0.1 M).  EMIT_GRACE_NS below lets them out
 * by time; this bounds the memory whatever happens. */
#define WINDOW_MAX 65536
/* A queue's oldest also go out, past the horizon, once they are this much
 * older than the newest task-context record drained (ring_front): batches
 * reach a ring in flush order and none is older than 2 ms + a timer
 * tick when it flushes (argus.bpf.c: BATCH_AGE_NS, on_local_timer_entry),
 * so what is still in a ring is at most that much older than what came
 * before it in that ring.  The spill ring's records can be far older than
 * the first ring's, so while it holds any, ring_front is the older of the
 * two rings' fronts (horizon_after()).  The holdback is the margin. */
#define EMIT_GRACE_NS HOLDBACK_NS
#define MAX_CPUS 256
#define MAX_FRAMES 64
#define DRAIN_BUDGET 65536 /* records per run_once */
/* A batch this old is flushed by the collector (an IPI to its CPU); half
 * the holdback, so the watermark rarely waits for one. */
#define BATCH_STALE_NS (HOLDBACK_NS / 2)
/* records between two horizon checks inside a drain: a clock read and a
 * look at the mmapped batch timestamps, ~0.1 ns a record */
#define HORIZON_EVERY 1024

struct pending {
	struct argus_event ev;  /* stack/str/str2 unset until emitted */
	uint32_t ips_off, nips; /* stack ips in the arena (uint64_t units) */
	uint32_t str_off, str_len;
	uint32_t str2_off, str2_len;
};

struct arena {
	uint8_t *buf;
	size_t len, cap;
};

/* Pending events of one CPU, in two runs each ordered by ev.ts:
 * q[head, len) the records as they came, each at or after the one before
 * it, and lq[lhead, llen) the late ones, older than q's newest when they
 * came: the interposer's user events (drained from their rings tens of ms
 * after their CPU's newer records) and BPF records that come behind their
 * CPU's.  Inserted into q, each moved q's newer part up: since the
 * batches a queue waits for the horizon and holds thousands of events (up
 * to WINDOW_MAX of 128 bytes), and under ASan, whose memmove is a plain
 * loop, that kept argusd from answering for seconds.  The two runs are
 * merged as they are emitted (oldest()).  Their owned data lives in
 * arena. */
struct cpu_queue {
	struct pending *q;
	size_t head, len, cap;
	struct pending *lq;
	size_t lhead, llen, lcap;
	struct arena arena;
};

struct argus_collector {
	struct argus_collector_opts opts;
	uint32_t side_tick;     /* BPF records since the last side_peek */
	struct argus_probe *probe;
	struct argus_chunk_builder *builder;
	struct argus_ring *ring;
	struct stack_capture *stacks;
	struct task_table tasks;
	char *path;

	struct cpu_queue cq[MAX_CPUS];
	struct cpu_queue *cur;        /* queue of the event being built */
	size_t npend;                 /* events waiting in all queues */

	uint32_t ncpus;
	uint64_t last_ts[MAX_CPUS];   /* per-CPU stream position */
	uint64_t lost_seen[MAX_CPUS]; /* kernel counters already accounted */
	uint64_t lost_now[MAX_CPUS];

	uint32_t chunk_gen;           /* increments per chunk cut; starts at 1 */
	uint32_t *chunk_tids;         /* threads the open chunk mentions */
	size_t nchunk_tids, capchunk_tids;
	uint32_t exited;              /* task entries marked exited, not pruned */
	bool backlog;                 /* the last drain stopped at its budget */
	int emit_err;                 /* first error of an emit during a drain */
	uint64_t seq;
	uint64_t chunk_start_ns;      /* when the open chunk got its first event */
	uint32_t *chunk_pids;         /* pids with stacks in the open chunk */
	size_t nchunk_pids, capchunk_pids;

	uint32_t budget;              /* records left in this drain */
	uint64_t horizon;             /* nothing at or past it is emitted; see the top */
	uint32_t horizon_tick;        /* records drained, for HORIZON_EVERY */
	uint64_t ring_front;          /* what EMIT_GRACE_NS counts from: front[0], or
	                                 the older of the two while the spill
	                                 ring holds records (spill_pending) */
	uint64_t front[2];            /* newest ts of a task-context record drained
	                                 from each BPF ring (rb, rb_spill) */
	bool spill_pending;           /* at the last horizon step */
	struct argus_horizon next_h;  /* becomes horizon once the drain passes its pos */
	bool have_next_h;
	struct argus_collector_status st;
	/* chunk sizes and min ts, oldest first, for the ring span estimate */
	struct { uint64_t bytes, min_ts; } *hist;
	size_t nhist, caphist, hist_head;
	uint64_t hist_bytes;
	double cpu_at_start;          /* CPU seconds spent before start_ns */
};

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int argus_collector_setup_process(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	return setpriority(PRIO_PROCESS, 0, ARGUS_COLLECTOR_NICE) ? -errno : 0;
}

uint64_t argus_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static int arena_put(struct arena *a, const void *data, size_t len, uint32_t *off)
{
	size_t at = (a->len + 7) & ~(size_t)7;

	if (at + len > UINT32_MAX)
		return -E2BIG;
	if (grow((void **)&a->buf, &a->cap, at + len, 1))
		return -ENOMEM;
	memcpy(a->buf + at, data, len);
	*off = (uint32_t)at;
	a->len = at + len;
	return 0;
}

/* ---- turning raw records into pending events ---- */

static size_t bounded_strlen(const char *s, size_t max)
{
	const char *z = memchr(s, 0, max);
	return z ? (size_t)(z - s) : max;
}

static int emit_one(struct argus_collector *c, const struct cpu_queue *q,
		    const struct pending *p);
static void compact_queue(struct cpu_queue *q);

static size_t waiting(const struct cpu_queue *q)
{
	return q->len - q->head + q->llen - q->lhead;
}

/* The oldest waiting event of q, NULL if none.  On equal times the one of
 * the first run: a late record goes after the events of its time, as it
 * would have at its place in one run. */
static struct pending *oldest(struct cpu_queue *q)
{
	struct pending *a = q->head < q->len ? &q->q[q->head] : NULL;
	struct pending *b = q->lhead < q->llen ? &q->lq[q->lhead] : NULL;

	if (!a || !b)
		return a ? a : b;
	return b->ev.ts < a->ev.ts ? b : a;
}

/* p, which oldest(q) returned, is emitted */
static void pop_oldest(struct cpu_queue *q, const struct pending *p)
{
	if (q->head < q->len && p == &q->q[q->head])
		q->head++;
	else
		q->lhead++;
}

/* Compaction once the emitted part of the two runs is as large as what
 * waits: each event moves about once, so this stays linear. */
static bool compact_due(const struct cpu_queue *q)
{
	size_t gone = q->head + q->lhead;

	return gone && gone >= waiting(q);
}

/* Where a late event of time ts goes in the late run: after every event
 * at or before ts.  Late records of one source come in order, so nearly
 * always at the end; one far behind is found by bisection. */
static size_t late_at(const struct cpu_queue *q, uint64_t ts)
{
	size_t lo = q->lhead, hi = q->llen;

	for (int i = 0; i < 8 && hi > lo; i++, hi--)
		if (q->lq[hi - 1].ev.ts <= ts)
			return hi;
	while (lo < hi) {       /* the first event in [lo, hi) after ts */
		size_t mid = lo + (hi - lo) / 2;

		if (q->lq[mid].ev.ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A new pending event in its CPU's queue, at its place in ts order.  A
 * queue holds at most WINDOW events: past that its oldest go to the chunk
 * once the horizon or the grace lets them (WINDOW_MAX forces them), so the
 * queue stays small enough to live in the cache. */
static struct pending *new_pending(struct argus_collector *c, const struct ae_hdr *h)
{
	struct cpu_queue *q = &c->cq[h->cpu < MAX_CPUS ? h->cpu : MAX_CPUS - 1];
	struct pending *p, *o;
	size_t at;

	if (waiting(q) >= WINDOW) {
		while (waiting(q) >= WINDOW && (o = oldest(q)) &&
		       (o->ev.ts < c->horizon || o->ev.ts + EMIT_GRACE_NS < c->ring_front ||
			waiting(q) >= WINDOW_MAX)) {
			int e = emit_one(c, q, o);

			pop_oldest(q, o);
			if (e && !c->emit_err)
				c->emit_err = e;
			c->npend--;
		}
		/* as emit_ready(): each event moves about once, also when the
		 * horizon lets a queue grow past WINDOW */
		if (q->head + q->lhead >= WINDOW && compact_due(q))
			compact_queue(q);
	}
	if (q->head == q->len || q->q[q->len - 1].ev.ts <= h->ts) {
		if (grow((void **)&q->q, &q->cap, q->len + 1, sizeof(*q->q)))
			return NULL;
		p = &q->q[q->len++];
	} else {
		if (grow((void **)&q->lq, &q->lcap, q->llen + 1, sizeof(*q->lq)))
			return NULL;
		at = late_at(q, h->ts);
		if (at < q->llen)
			memmove(&q->lq[at + 1], &q->lq[at], (q->llen - at) * sizeof(*q->lq));
		q->llen++;
		p = &q->lq[at];
	}
	c->npend++;
	c->cur = q;
	/* Field by field, not one memset() of the 128 bytes: for that GCC
	 * emits `rep stos`, whose start-up cost was half of this function's
	 * time on a messaging flood (perf annotate); these are plain stores. */
	memset(p->ev.f, 0, sizeof(p->ev.f));
	memset(p->ev.pad, 0, sizeof(p->ev.pad));
	p->ev.stack = p->ev.str = p->ev.str2 = p->ev.pad2 = 0;
	p->ips_off = p->nips = 0;
	p->str_off = p->str_len = p->str2_off = p->str2_len = 0;
	_Static_assert(sizeof(struct pending) == sizeof(struct argus_event) + 6 * sizeof(uint32_t),
		       "a new field of struct pending must be zeroed here");
	_Static_assert(offsetof(struct argus_event, pad2) == 36 &&
		       offsetof(struct argus_event, f) == 40 &&
		       sizeof(struct argus_event) == 40 + sizeof(((struct argus_event *)0)->f),
		       "a new field of struct argus_event must be zeroed here");
	p->ev.ts = h->ts;
	p->ev.tid = h->tid;
	p->ev.pid = h->pid;
	p->ev.type = h->type;
	p->ev.cpu = h->cpu;
	p->ev.ctx = (uint8_t)h->ctx;
	return p;
}

static void set_str(struct argus_collector *c, struct pending *p, int which,
		    const char *s, size_t max)
{
	size_t len = bounded_strlen(s, max);
	uint32_t off;

	if (!len || arena_put(&c->cur->arena, s, len, &off))
		return;
	if (which == 1) {
		p->str_off = off;
		p->str_len = (uint32_t)len;
	} else {
		p->str2_off = off;
		p->str2_len = (uint32_t)len;
	}
}

/* comm: a record's name (AE_COMM_LEN bytes, maybe not terminated:
 * task_table__name() cuts it) as of ts; the newest one is kept. */
static void note_task(struct argus_collector *c, uint32_t tid, uint32_t pid,
		      const char *comm, uint64_t ts)
{
	struct task_entry *e;

	if (!tid)
		return;
	e = task_table__get_or_add(&c->tasks, tid);
	if (!e)
		return;
	if (pid)
		e->pid = pid;
	task_table__name(e, comm, ts);
}

static void attach_stack(struct argus_collector *c, struct pending *p,
			 const void *tail, size_t avail)
{
	uint64_t ips[MAX_FRAMES];
	int n;

	if (avail < sizeof(struct ae_ustack) || !p->ev.pid)
		return;
	n = stack_capture__resolve(c->stacks, p->ev.pid, p->ev.ts, tail, avail,
				   ips, MAX_FRAMES);
	if (n <= 0 || arena_put(&c->cur->arena, ips, (size_t)n * sizeof(uint64_t), &p->ips_off))
		return;
	p->nips = (uint32_t)n;
}

#define NEED(T) do { if (size < sizeof(T)) return 0; } while (0)

static int take_record(struct argus_collector *c, const void *rec, size_t size);
static void horizon_step(struct argus_collector *c);

/* Which records of the unwind helper are kept: what self_tgid keeps of
 * argusd's in the kernel.  Its syscalls, samples and timers are its own
 * work and go; the scheduler's records stay, because a switch out of the
 * helper is the switch *into* the next task and its wake-ups are the
 * tool's (the graph files them under tool-waker); and an interrupt that
 * lands while it runs is not its own either: an hrtimer expiry waking a
 * sleeper has the helper as current (h.pid) whenever it interrupted the
 * helper.  Dropping those lost the sleeper's wake-up and switch-in. */
static bool helper_record_kept(const struct ae_hdr *h)
{
	switch (h->type) {
	case AE_SWITCH:
	case AE_WAKING:
	case AE_WAKEUP_NEW:
	case AE_FORK:
	case AE_EXEC:
	case AE_EXIT:
	case AE_FREE:
	case AE_RENAME:
		return true;
	case AE_SAMPLE:         /* the sampler runs in hardirq, on the helper */
	case AE_HWWATCH:
		return false;
	default:                /* irq, softirq, hrtimer expiry: not its own */
		return h->ctx != AE_CTX_TASK;
	}
}

/*
 * libbpf's consume loops while records keep coming; stop after a budget so
 * chunks are cut on time and the control socket answers.  Quirk: libbpf
 * moves the consumer past a record *before* calling us, and a negative
 * return keeps it there, so a record we refuse is gone.  The budget is
 * therefore spent after taking the record, never by refusing one (it used
 * to be checked first: one record silently lost per budget stop, 48 of
 * 4.9 M write exits in a 1.6 M/s flood with "0 lost").  A record an
 * allocation failure cannot keep is gone too: counted in st.dropped.
 */
static int on_record(void *ctx, const void *rec, size_t size)
{
	struct argus_collector *c = ctx;
	int rc;

	if (c->opts.side_peek && !(c->side_tick++ & 255))
		c->opts.side_peek(c->opts.side_ctx, c);
	/* the horizon moves during a long drain too: else a full queue could
	 * not emit early past the one taken before it (see the top) */
	if (!(++c->horizon_tick & (HORIZON_EVERY - 1)))
		horizon_step(c);
	rc = take_record(c, rec, size);

	if (rc < 0) {
		c->st.dropped++;
		return rc;
	}
	if (c->budget && --c->budget == 0)
		return -ECANCELED;
	return 0;
}

static int take_record(struct argus_collector *c, const void *rec, size_t size)
{
	const struct ae_hdr *h = rec;
	struct pending *p;

	if (size < sizeof(*h) || h->size > size || h->type >= AE_TYPE_MAX)
		return 0; /* malformed: cannot come from our programs; skip */
	/* The unwind helper's activity is the collector's own, untraced as
	 * self_tgid is in the kernel; its pid changes when it is restarted,
	 * so it is dropped here.  Else its samples were unwound by itself,
	 * and its requests and answers filled the trace.  Its scheduler and
	 * interrupt records stay (helper_record_kept), without a stack. */
	bool helper = stack_capture__is_helper(c->stacks, h->pid);

	if (helper && !helper_record_kept(h))
		return 0;
	size = h->size;
	if (h->ctx == AE_CTX_TASK) {
		int r = c->probe ? argus_probe__draining(c->probe) : 0;

		if (h->ts > c->front[r])
			c->front[r] = h->ts;
		c->ring_front = c->spill_pending && c->front[1] < c->front[0] ? c->front[1]
									     : c->front[0];
	}
	if (c->opts.tap)
		c->opts.tap(c->opts.tap_ctx, rec, size);
	p = new_pending(c, h);
	if (!p)
		return -ENOMEM;
	c->st.by_type[h->type]++;
	c->st.events++;
	if (!c->chunk_start_ns)
		c->chunk_start_ns = argus_now_ns();

	switch (h->type) {
	case AE_SWITCH: {
		const struct ae_switch *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_SW_NEXT_TID] = r->next_tid;
		p->ev.f[ARGUS_F_SW_NEXT_PID] = r->next_pid;
		p->ev.f[ARGUS_F_SW_PREV_STATE] = (uint64_t)r->prev_state;
		p->ev.f[ARGUS_F_SW_SYS_NR] = (uint64_t)(int64_t)r->sys_nr;
		p->ev.f[ARGUS_F_SW_SYS_ARG] = r->sys_arg;
		p->ev.f[ARGUS_F_SW_OBJ_KIND] = r->obj.kind;
		p->ev.f[ARGUS_F_SW_OBJ] = r->obj.obj;
		p->ev.f[ARGUS_F_SW_PEER] = r->obj.peer;
		note_task(c, r->next_tid, r->next_pid, r->next_comm, h->ts);
		if (size > sizeof(*r) && !helper)
			attach_stack(c, p, (const uint8_t *)rec + sizeof(*r), size - sizeof(*r));
		break;
	}
	case AE_WAKING: {
		const struct ae_waking *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_WK_TARGET_TID] = r->target_tid;
		p->ev.f[ARGUS_F_WK_TARGET_PID] = r->target_pid;
		p->ev.f[ARGUS_F_WK_TARGET_CPU] = r->target_cpu;
		p->ev.f[ARGUS_F_WK_VECTOR] = r->vector;
		p->ev.f[ARGUS_F_WK_HRTIMER] = r->hrtimer;
		note_task(c, r->target_tid, r->target_pid, NULL, 0);
		break;
	}
	case AE_WAKEUP_NEW:
	case AE_FORK:
	case AE_FREE: {
		const struct ae_task *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_TK_CHILD_TID] = r->child_tid;
		p->ev.f[ARGUS_F_TK_CHILD_PID] = r->child_pid;
		p->ev.f[ARGUS_F_TK_CLONE_FLAGS] = r->clone_flags;
		set_str(c, p, 1, r->comm, AE_COMM_LEN);
		if (h->type == AE_FREE) {
			struct task_entry *e = task_table__find(&c->tasks, r->child_tid);
			if (e && !e->exited) {
				e->exited = true;
				c->exited++;
			}
		} else {
			if (h->type == AE_FORK && r->child_pid != h->pid)
				stack_capture__inherit(c->stacks, h->pid, r->child_pid,
						      h->ts);
			note_task(c, r->child_tid, r->child_pid, r->comm, h->ts);
			struct task_entry *e = task_table__find(&c->tasks, r->child_tid);
			if (e) {
				e->ppid = h->pid;
				if (e->exited) { /* a reused tid: the new thread lives */
					e->exited = false;
					c->exited--;
				}
			}
		}
		break;
	}
	case AE_EXEC: {
		const struct ae_exec *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_EX_OLD_TID] = r->old_tid;
		set_str(c, p, 1, r->comm, AE_COMM_LEN);
		set_str(c, p, 2, r->filename, AE_PATH_LEN);
		note_task(c, h->tid, h->pid, r->comm, h->ts);
		stack_capture__forget(c->stacks, h->pid);
		break;
	}
	case AE_EXIT: {
		const struct ae_exit *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_EXIT_CODE] = (uint64_t)(int64_t)r->exit_code;
		if (h->tid == h->pid)
			stack_capture__forget(c->stacks, h->pid);
		break;
	}
	case AE_RENAME: {
		const struct ae_rename *r = rec;
		NEED(*r);
		set_str(c, p, 1, r->comm, AE_COMM_LEN);
		note_task(c, h->tid, h->pid, r->comm, h->ts);
		break;
	}
	case AE_SYS_ENTER: {
		const struct ae_sys_enter *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_SE_NR] = (uint64_t)r->nr;
		for (int i = 0; i < 6; i++)
			p->ev.f[ARGUS_F_SE_ARG0 + i] = r->args[i];
		break;
	}
	case AE_SYS_EXIT: {
		const struct ae_sys_exit *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_SX_NR] = (uint64_t)r->nr;
		p->ev.f[ARGUS_F_SX_RET] = (uint64_t)r->ret;
		p->ev.f[ARGUS_F_SX_ARG0] = r->arg0;
		p->ev.f[ARGUS_F_SX_OBJ_KIND] = r->obj.kind;
		p->ev.f[ARGUS_F_SX_OBJ] = r->obj.obj;
		p->ev.f[ARGUS_F_SX_PEER] = r->obj.peer;
		break;
	}
	case AE_HRT_START:
	case AE_HRT_EXPIRE:
	case AE_HRT_CANCEL: {
		const struct ae_hrtimer *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_HT_TIMER] = r->timer;
		p->ev.f[ARGUS_F_HT_FUNCTION] = r->function;
		p->ev.f[ARGUS_F_HT_EXPIRES] = (uint64_t)r->expires;
		p->ev.f[ARGUS_F_HT_MODE] = r->mode;
		p->ev.f[ARGUS_F_HT_OWNER_TID] = r->owner_tid;
		break;
	}
	case AE_IRQ_ENTRY:
	case AE_IRQ_EXIT:
	case AE_SOFTIRQ_ENTRY:
	case AE_SOFTIRQ_EXIT: {
		const struct ae_irq *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_IRQ_VECTOR] = r->vector;
		p->ev.f[ARGUS_F_IRQ_RET] = (uint64_t)(int64_t)r->ret;
		break;
	}
	case AE_WQ_START:
	case AE_WQ_END: {
		const struct ae_wq *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_WQ_WORK] = r->work;
		p->ev.f[ARGUS_F_WQ_FUNCTION] = r->function;
		break;
	}
	case AE_SAMPLE: {
		const struct ae_sample *r = rec;
		NEED(*r);
		attach_stack(c, p, (const uint8_t *)rec + sizeof(*r), size - sizeof(*r));
		break;
	}
	case AE_LIVE_HIT: {     /* interposer/live/live_uprobe.bpf.c */
		const struct ae_live_hit *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_LIVE_FUNC] = r->func;
		p->ev.f[ARGUS_F_LIVE_ITEM] = r->item;
		p->ev.f[ARGUS_F_LIVE_KIND] = r->kind;
		break;
	}
	case AE_HWWATCH: {
		const struct ae_hwwatch *r = rec;
		NEED(*r);
		p->ev.f[ARGUS_F_HW_ADDR] = r->addr;
		p->ev.f[ARGUS_F_HW_VALUE] = r->value;
		p->ev.f[ARGUS_F_HW_LEN] = r->len;
		p->ev.f[ARGUS_F_HW_ID] = r->watch_id;
		p->ev.f[ARGUS_F_HW_IP] = r->ip;
		p->ev.f[ARGUS_F_HW_VALUE_OK] = r->value_ok;
		p->ev.f[ARGUS_F_HW_READER] = r->reader;
		attach_stack(c, p, (const uint8_t *)rec + sizeof(*r), size - sizeof(*r));
		break;
	}
	default:
		break;
	}
	if (h->tid)
		note_task(c, h->tid, h->pid, NULL, 0);
	return 0;
}

/* ---- emitting pending events into the chunk ---- */

static void chunk_ref_pid(struct argus_collector *c, uint32_t pid)
{
	for (size_t i = 0; i < c->nchunk_pids; i++)
		if (c->chunk_pids[i] == pid)
			return;
	if (grow((void **)&c->chunk_pids, &c->capchunk_pids, c->nchunk_pids + 1,
		 sizeof(uint32_t)))
		return;
	c->chunk_pids[c->nchunk_pids++] = pid;
}

/* Note that the open chunk mentions tid: its snapshot will carry it.  The
 * list is kept here so a cut does not scan the whole task table. */
static void chunk_ref_tid(struct argus_collector *c, uint32_t tid)
{
	struct task_entry *e = tid ? task_table__find(&c->tasks, tid) : NULL;

	if (!e || e->chunk_gen == c->chunk_gen)
		return;
	if (grow((void **)&c->chunk_tids, &c->capchunk_tids, c->nchunk_tids + 1,
		 sizeof(uint32_t)))
		return;
	e->chunk_gen = c->chunk_gen;
	c->chunk_tids[c->nchunk_tids++] = tid;
}

static int emit_one(struct argus_collector *c, const struct cpu_queue *q,
		    const struct pending *p)
{
	struct argus_event ev = p->ev;
	uint16_t cpu = ev.cpu < MAX_CPUS ? ev.cpu : MAX_CPUS - 1;

	ev.cpu = cpu;
	if (ev.ts < c->last_ts[cpu]) {
		c->st.late++;
		ev.ts = c->last_ts[cpu];
	}
	c->last_ts[cpu] = ev.ts;
	if (p->nips) {
		ev.stack = argus_chunk_builder__stack(c->builder,
			(const uint64_t *)(q->arena.buf + p->ips_off), p->nips);
		chunk_ref_pid(c, ev.pid);
	}
	if (p->str_len)
		ev.str = argus_chunk_builder__string(c->builder,
			(const char *)q->arena.buf + p->str_off, p->str_len);
	if (p->str2_len)
		ev.str2 = argus_chunk_builder__string(c->builder,
			(const char *)q->arena.buf + p->str2_off, p->str2_len);
	chunk_ref_tid(c, ev.tid);
	if (ev.type == AE_SWITCH)
		chunk_ref_tid(c, (uint32_t)ev.f[ARGUS_F_SW_NEXT_TID]);
	else if (ev.type == AE_WAKING)
		chunk_ref_tid(c, (uint32_t)ev.f[ARGUS_F_WK_TARGET_TID]);
	else if (ev.type == AE_FORK || ev.type == AE_WAKEUP_NEW || ev.type == AE_FREE)
		chunk_ref_tid(c, (uint32_t)ev.f[ARGUS_F_TK_CHILD_TID]);
	if (ev.ts > c->st.newest_ts)
		c->st.newest_ts = ev.ts;
	return argus_chunk_builder__event(c->builder, &ev);
}

/* The lowest arena offset a waiting event of run r[0, n) owns, or base. */
static uint32_t arena_low(const struct pending *r, size_t n, uint32_t base)
{
	for (size_t i = 0; i < n; i++) {
		const struct pending *p = &r[i];

		if (p->nips && p->ips_off < base)
			base = p->ips_off;
		if (p->str_len && p->str_off < base)
			base = p->str_off;
		if (p->str2_len && p->str2_off < base)
			base = p->str2_off;
	}
	return base;
}

static void arena_rebase(struct pending *r, size_t n, uint32_t base)
{
	for (size_t i = 0; i < n; i++) {
		struct pending *p = &r[i];

		if (p->nips)
			p->ips_off -= base;
		if (p->str_len)
			p->str_off -= base;
		if (p->str2_len)
			p->str2_off -= base;
	}
}

/* Move the emitted events of both runs out: shift what waits down, and
 * the arena data it owns with it.  Each event moves about once (see
 * compact_due()), so this stays linear. */
static void compact_queue(struct cpu_queue *q)
{
	size_t n = q->len - q->head, ln = q->llen - q->lhead;
	uint32_t base;

	memmove(q->q, q->q + q->head, n * sizeof(*q->q));
	q->head = 0;
	q->len = n;
	if (ln)
		memmove(q->lq, q->lq + q->lhead, ln * sizeof(*q->lq));
	q->lhead = 0;
	q->llen = ln;
	base = arena_low(q->lq, ln, arena_low(q->q, n, UINT32_MAX));
	if (base == UINT32_MAX) {
		q->arena.len = 0;
		return;
	}
	base &= ~7u; /* keep the 8-byte alignment of stack ips */
	if (!base)
		return;
	memmove(q->arena.buf, q->arena.buf + base, q->arena.len - base);
	q->arena.len -= base;
	arena_rebase(q->q, n, base);
	arena_rebase(q->lq, ln, base);
}

/* Move pending events with ts < watermark into the chunk, keep the rest. */
static int emit_ready(struct argus_collector *c, uint64_t watermark)
{
	int err = c->emit_err;

	c->emit_err = 0;
	if (!c->npend)
		return err;
	for (uint32_t cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct cpu_queue *q = &c->cq[cpu];
		struct pending *o;

		while ((o = oldest(q)) && o->ev.ts < watermark) {
			int e = emit_one(c, q, o);

			pop_oldest(q, o);
			c->npend--;
			if (e && !err)
				err = e;
		}
		if (!waiting(q)) {
			q->head = q->len = q->lhead = q->llen = 0;
			q->arena.len = 0;
		} else if (compact_due(q)) {
			compact_queue(q);
		}
	}
	return err;
}

/* ---- cutting chunks ---- */

static void add_map(void *ctx, uint32_t pid, uint64_t ts, uint64_t start,
		    uint64_t end, uint64_t pgoff, const char *path,
		    const uint8_t *build_id, size_t build_id_len)
{
	struct argus_collector *c = ctx;
	struct argus_map m = { 0 };

	m.pid = pid;
	m.ts = ts;
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	m.path = argus_chunk_builder__string(c->builder, path, strlen(path));
	if (build_id_len > ARGUS_BUILD_ID_MAX)
		build_id_len = ARGUS_BUILD_ID_MAX;
	m.build_id_len = (uint8_t)build_id_len;
	memcpy(m.build_id, build_id, build_id_len);
	argus_chunk_builder__map(c->builder, &m);
}

static void hist_push(struct argus_collector *c, uint64_t bytes, uint64_t min_ts)
{
	if (grow((void **)&c->hist, &c->caphist, c->nhist + 1, sizeof(*c->hist)))
		return;
	c->hist[c->nhist].bytes = bytes;
	c->hist[c->nhist].min_ts = min_ts;
	c->nhist++;
	c->hist_bytes += bytes;
	/* a ring keeps roughly its usable size worth of the newest chunks
	 * (less than its size once a full disk shrank it) */
	uint64_t cap = c->opts.ring_size ? argus_ring__capacity(c->ring) : 0;
	while (cap && c->hist_bytes > cap && c->hist_head < c->nhist) {
		c->hist_bytes -= c->hist[c->hist_head].bytes;
		c->hist_head++;
	}
	if (c->hist_head > 4096) {
		memmove(c->hist, c->hist + c->hist_head,
			(c->nhist - c->hist_head) * sizeof(*c->hist));
		c->nhist -= c->hist_head;
		c->hist_head = 0;
	}
}

static int cut_chunk(struct argus_collector *c)
{
	void *buf = NULL;
	size_t len = 0;
	int err;

	/* lost-record deltas since the last chunk */
	for (uint32_t cpu = 0; cpu < c->ncpus && cpu < MAX_CPUS; cpu++) {
		uint64_t d = c->lost_now[cpu] - c->lost_seen[cpu];
		if (d) {
			argus_chunk_builder__lost(c->builder, (uint16_t)cpu, d);
			c->lost_seen[cpu] = c->lost_now[cpu];
		}
	}
	if (!argus_chunk_builder__nevents(c->builder))
		return 0;
	/* the task snapshot: every thread this chunk mentions */
	for (size_t i = 0; i < c->nchunk_tids; i++) {
		struct task_entry *e = task_table__find(&c->tasks, c->chunk_tids[i]);
		struct argus_task t;

		if (!e)
			continue;
		t.tid = e->tid;
		t.pid = e->pid;
		t.ppid = e->ppid;
		t.comm = argus_chunk_builder__string(c->builder, e->comm, strlen(e->comm));
		argus_chunk_builder__task(c->builder, &t);
	}
	c->nchunk_tids = 0;
	for (size_t i = 0; i < c->nchunk_pids; i++)
		stack_capture__maps(c->stacks, c->chunk_pids[i], add_map, c);
	c->nchunk_pids = 0;
	stack_capture__chunk_cut(c->stacks);

	err = argus_chunk_builder__finish(c->builder, c->seq, c->opts.zlevel, &buf, &len);
	if (err)
		return err;
	const struct argus_chunk_header *hdr = buf;
	uint64_t min_ts = hdr->min_ts;
	err = argus_ring__append(c->ring, buf, len);
	free(buf);
	if (err)
		return err;
	c->seq++;
	c->st.chunks++;
	c->st.bytes += len;
	hist_push(c, len, min_ts);
	c->chunk_gen++;
	c->chunk_start_ns = 0;
	/* dropping exited threads rehashes the whole table: only once enough
	 * of them piled up (a reused tid is re-added by its next record) */
	if (c->exited > 1024 || c->exited * 4 > c->tasks.used) {
		task_table__prune(&c->tasks);
		c->exited = 0;
	}
	return 0;
}

static void refresh_lost(struct argus_collector *c)
{
	uint64_t lost[MAX_CPUS] = { 0 };
	int n;

	if (!c->probe)
		return; /* detached: the last counts stand */
	n = argus_probe__lost(c->probe, lost, MAX_CPUS);

	for (int i = 0; i < n && i < MAX_CPUS; i++)
		c->lost_now[i] = lost[i];
}

static int process(struct argus_collector *c, uint64_t watermark, bool force_cut)
{
	bool due;
	int err;

	/* A busy CPU's queue emits early (WINDOW); the others must catch up
	 * to it, or the next chunk would hold events older than this one's,
	 * and the reader's merge would return them out of order.  That is
	 * safe: each ring is consumed in reservation order, so what is still
	 * in it was reserved after everything emitted, and its timestamps are
	 * later but for the few records of an interrupted program.  Batched
	 * records, and those waiting in the other ring, are held by the
	 * horizon and the grace's front (the top), which no stream passed. */
	if (watermark > c->horizon)
		watermark = c->horizon;
	for (uint32_t cpu = 0; cpu < c->ncpus && cpu < MAX_CPUS; cpu++)
		if (c->last_ts[cpu] >= watermark)
			watermark = c->last_ts[cpu] + 1;
	err = emit_ready(c, watermark);

	refresh_lost(c);
	due = force_cut ||
	      argus_chunk_builder__raw_bytes(c->builder) >= c->opts.chunk_bytes ||
	      (c->chunk_start_ns &&
	       argus_now_ns() - c->chunk_start_ns >= c->opts.chunk_ms * 1000000ull);
	if (due) {
		int e = cut_chunk(c);
		if (!err)
			err = e;
		/* Every stream is closed up to the watermark: an event older
		 * than it that still arrives (one the horizon or the ring's
		 * order should have kept out, see the top) is counted late and
		 * written at its stream's position, never below what this
		 * chunk already holds, so chunks stay apart in time. */
		for (uint32_t cpu = 0; cpu < c->ncpus && cpu < MAX_CPUS; cpu++)
			if (watermark != UINT64_MAX && c->last_ts[cpu] < watermark - 1)
				c->last_ts[cpu] = watermark - 1;
	}
	return err;
}

/* ---- public API ---- */

struct argus_collector *argus_collector__new(const struct argus_collector_opts *opts,
					     char *errbuf, size_t errlen)
{
	struct argus_collector *c = calloc(1, sizeof(*c));
	struct argus_ring_opts ro = { .sz = sizeof(ro) };
	struct argus_error err = { 0 };

	if (!c) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	c->opts = *opts;
	if (!c->opts.chunk_ms)
		c->opts.chunk_ms = 1000;
	if (!c->opts.chunk_bytes)
		c->opts.chunk_bytes = 4u << 20;
	if (c->opts.zlevel < 0)
		c->opts.zlevel = 1;
	/* Stack copies for DWARF unwinding: samples need depth to name the
	 * busy function's callers.  Blocking switch-outs get frame-pointer
	 * walks only by default: copying and unwinding every one of them cost
	 * 2.8x on a pinned pipe ping-pong (docs/benchmarks.md). */
	if (!c->opts.probe.sample_copy)
		c->opts.probe.sample_copy = 2048;
	c->path = strdup(opts->path);
	c->builder = argus_chunk_builder__new();
	c->stacks = stack_capture__new(!opts->no_unwind);
	/* zstd: half of libdeflate's CPU per event on the collector's chunks,
	 * and ~30% smaller (docs/benchmarks.md, session 21) */
	if (!c->path || !c->builder || !c->stacks || task_table__init(&c->tasks) ||
	    argus_chunk_builder__set_codec(c->builder, ARGUS_CODEC_ZSTD)) {
		snprintf(errbuf, errlen, "out of memory");
		goto fail;
	}
	task_table__scan_proc(&c->tasks);
	/* the first chunk names every thread alive at the start */
	c->chunk_gen = 1;
	for (uint32_t i = 0; i < c->tasks.cap; i++)
		if (c->tasks.slots[i].tid)
			chunk_ref_tid(c, c->tasks.slots[i].tid);

	c->probe = argus_probe__open(&c->opts.probe, errbuf, errlen);
	if (!c->probe)
		goto fail;
	c->ncpus = (uint32_t)argus_probe__ncpus(c->probe);

	ro.data_size = opts->ring_size;
	ro.ncpus = c->ncpus;
	ro.fd_mode = 0600;
	ro.out_flags = c->opts.out_flags;
	/* the flag says blocking switches were DWARF-unwound: not with --no-unwind */
	ro.flags = c->opts.probe.block_copy && !c->opts.no_unwind ? ARGUS_FILE_WAIT_STACKS : 0;
	c->ring = argus_ring__create(opts->path, &ro, &err);
	if (!c->ring) {
		snprintf(errbuf, errlen, "%s", err.msg);
		goto fail;
	}
	c->seq = 1; /* the reader infers overwritten chunks from gaps below the newest seq */
	/* Rates and CPU% count from here: loading and verifying the BPF
	 * programs above takes ~0.2 s of CPU, which made a fresh collector
	 * look like it used over 100% of a CPU. */
	c->st.start_ns = argus_now_ns();
	c->cpu_at_start = cpu_seconds();
	c->st.ring_size = opts->ring_size;
	c->st.ncpus = c->ncpus;
	return c;
fail:
	argus_probe__close(c->probe);
	c->probe = NULL;
	argus_collector__free(c);
	return NULL;
}

/* Before a drain: flush the batches nobody else will (a CPU in user
 * code), and take a horizon to wait for, unless one is pending. */
static int horizon_before(struct argus_collector *c, uint64_t stale_before)
{
	int e = argus_probe__flush_batches(c->probe, stale_before);

	if (e < 0)
		return e;
	if (!c->have_next_h) {
		argus_probe__horizon(c->probe, &c->next_h);
		c->have_next_h = true;
	}
	return 0;
}

/* After a drain: the pending horizon holds once the drain passed its
 * position (a drain stopped by its budget may not have). */
static void horizon_after(struct argus_collector *c)
{
	/* Each ring is in flush order, but the spill ring may hold records
	 * much older than the first ring's (a CPU stays on it until it is
	 * drained): while it holds any, the grace counts from the older
	 * front.  Read at each step: a spill ring that empties lets the
	 * grace count from the first ring's again. */
	c->spill_pending = argus_probe__spill_pending(c->probe);
	if (!c->spill_pending)
		c->ring_front = c->front[0];
	if (c->have_next_h && argus_probe__drained(c->probe, &c->next_h)) {
		/* a batch can publish a first timestamp read just before an
		 * interrupt, older than a horizon already taken; its records
		 * read the clock later, so the older horizon still holds */
		if (c->next_h.ts > c->horizon)
			c->horizon = c->next_h.ts;
		c->have_next_h = false;
	}
}

/* Inside a drain: the pending horizon may hold now; if it does, take
 * the next one at once. */
static void horizon_step(struct argus_collector *c)
{
	if (!c->probe)
		return;
	horizon_after(c);
	if (!c->have_next_h) {
		argus_probe__horizon(c->probe, &c->next_h);
		c->have_next_h = true;
	}
}

int argus_collector__run_once(struct argus_collector *c, int timeout_ms)
{
	int n;

	if (!c->probe)
		return -ENODEV;
	n = horizon_before(c, argus_now_ns() - BATCH_STALE_NS);
	if (n < 0)
		return n;
	/* Records are submitted without wake-ups, so the poll returns early
	 * only past the watermark; consume whatever is there either way.
	 * After a drain that stopped at its budget more is waiting: do not
	 * sleep on it. */
	c->budget = DRAIN_BUDGET;
	c->side_tick = 0;
	n = argus_probe__poll(c->probe, c->backlog ? 0 : timeout_ms, on_record, c);
	if (n < 0 && n != -EINTR && n != -ECANCELED)
		return n;
	if (c->budget) {
		n = argus_probe__drain(c->probe, on_record, c);
		if (n < 0 && n != -ECANCELED)
			return n;
	}
	c->backlog = !c->budget;
	horizon_after(c);
	/* The horizon taken before the poll is up to 50 ms old by now: take
	 * one now and drain what came meanwhile, so that the watermark, not
	 * the poll, decides how long events wait. */
	if (!c->backlog) {
		horizon_step(c);
		n = argus_probe__drain(c->probe, on_record, c);
		if (n < 0 && n != -ECANCELED)
			return n;
		c->backlog = !c->budget;
		horizon_after(c);
	}
	/* the watermark is taken after the side source is drained too: what
	 * it wrote before now - HOLDBACK_NS is in by then, as for BPF */
	if (c->opts.side_drain)
		c->opts.side_drain(c->opts.side_ctx, c);
	return process(c, argus_now_ns() - HOLDBACK_NS, false);
}

int argus_collector__flush(struct argus_collector *c)
{
	int n;

	c->budget = UINT32_MAX;
	c->side_tick = 0;
	if (c->probe) {
		/* every batch into the ring first, and a fresh horizon: the
		 * chunk then holds everything recorded before this call */
		c->have_next_h = false;
		n = horizon_before(c, UINT64_MAX);
		if (n < 0)
			return n;
	}
	n = c->probe ? argus_probe__drain(c->probe, on_record, c) : 0;
	if (n < 0)
		return n;
	/* a record reserved before the horizon but not yet committed stops
	 * the drain short of its position: it commits within microseconds */
	for (int tries = 0; c->probe && tries < 100; tries++) {
		horizon_after(c);
		if (!c->have_next_h)
			break;
		usleep(100);
		n = argus_probe__drain(c->probe, on_record, c);
		if (n < 0)
			return n;
	}
	if (c->opts.side_drain)
		c->opts.side_drain(c->opts.side_ctx, c);
	return process(c, UINT64_MAX, true);
}

int argus_collector__finish(struct argus_collector *c)
{
	int n = 0;

	if (!c->probe)
		return 0;
	/* detach and flush every batch, drain what the kernel holds, so
	 * the counts are final; then nothing else can come */
	c->budget = UINT32_MAX;
	c->side_tick = 0;
	n = argus_probe__stop(c->probe);
	if (n > 0)
		fprintf(stderr, "argus: %d CPU batches could not be flushed at the end; "
			"their records are counted lost\n", n);
	n = argus_probe__drain(c->probe, on_record, c);
	refresh_lost(c);
	c->st.spilled = argus_probe__spilled(c->probe);
	argus_probe__close(c->probe);
	c->probe = NULL;
	c->horizon = UINT64_MAX;
	if (c->opts.side_drain)
		c->opts.side_drain(c->opts.side_ctx, c);
	int err = process(c, UINT64_MAX, true);
	return n < 0 ? n : err;
}

/* A record argusd adds itself (a mark, an interposer's record): counted as
 * the drained ones are, and it opens the chunk if it is the first. */
static void count_own(struct argus_collector *c, unsigned type)
{
	c->st.by_type[type]++;
	c->st.events++;
	if (!c->chunk_start_ns)
		c->chunk_start_ns = argus_now_ns();
}

int argus_collector__mark(struct argus_collector *c, uint32_t pid, uint32_t tid,
			  uint32_t uid, const char *text)
{
	struct ae_hdr h = { 0 };
	struct pending *p;
	unsigned cpu = 0;

	h.ts = argus_now_ns();
	h.type = AE_MARK;
	h.size = sizeof(h);
	h.pid = pid;
	h.tid = tid ? tid : pid;
	if (getcpu(&cpu, NULL) == 0 && cpu < c->ncpus)
		h.cpu = (uint16_t)cpu;
	p = new_pending(c, &h);
	if (!p)
		return -ENOMEM;
	p->ev.f[ARGUS_F_MARK_UID] = uid;
	p->ev.f[ARGUS_F_MARK_HAS_UID] = 1;
	set_str(c, p, 1, text, strlen(text) < 4096 ? strlen(text) : 4096);
	count_own(c, AE_MARK);
	return 0;
}

/*
 * The stream a user-space record (the interposer's) goes to.  Its CPU is a
 * hint, and it arrives up to a loop (~50 ms) after it was written: by then
 * its CPU's stream may have gone past it -- a busy CPU's queue emits early
 * (WINDOW) and process() makes every stream catch up with it -- and it
 * would be written late, at that stream's last timestamp: inside whatever
 * the thread did next (the futex sleep its mutex_wait announced), which
 * turns the sleep into a busy segment of the graph.  A stream that has not
 * gone past it keeps its own timestamp: the hinted one if it can, else
 * the least advanced one.  Seen on a loaded machine (~80k events/s):
 * a mutex_wait re-stamped 47 ms into the wait it preceded.
 */
static uint16_t side_stream(const struct argus_collector *c, uint16_t hint, uint64_t ts)
{
	uint16_t best = hint;

	if (c->last_ts[hint] <= ts)
		return hint;
	for (uint32_t cpu = 0; cpu < c->ncpus && cpu < MAX_CPUS; cpu++)
		if (c->last_ts[cpu] < c->last_ts[best])
			best = (uint16_t)cpu;
	return best;
}

int argus_collector__user_event(struct argus_collector *c,
				const struct argus_event *ev)
{
	struct ae_hdr h = { 0 };
	struct pending *p;

	if (ev->type >= AE_TYPE_MAX)
		return -EINVAL;
	h.ts = ev->ts;
	h.tid = ev->tid;
	h.pid = ev->pid;
	h.type = ev->type;
	h.size = sizeof(h);
	h.cpu = side_stream(c, ev->cpu < c->ncpus && ev->cpu < MAX_CPUS ? ev->cpu : 0, ev->ts);
	h.ctx = ev->ctx;
	p = new_pending(c, &h);
	if (!p)
		return -ENOMEM;
	memcpy(p->ev.f, ev->f, sizeof(p->ev.f));
	note_task(c, ev->tid, ev->pid, NULL, 0);
	count_own(c, ev->type);
	return 0;
}

bool argus_collector__behind(const struct argus_collector *c)
{
	return c->backlog;
}

void argus_collector__status(struct argus_collector *c,
			     struct argus_collector_status *st)
{
	refresh_lost(c);
	if (c->probe)
		c->st.spilled = argus_probe__spilled(c->probe);
	c->st.now_ns = argus_now_ns();
	c->st.lost = 0;
	for (uint32_t i = 0; i < c->ncpus && i < MAX_CPUS; i++) {
		c->st.lost_cpu[i] = c->lost_now[i];
		c->st.lost += c->lost_now[i];
	}
	/* estimated from the file: the chunks we know of, bounded by the part
	 * of the ring written so far (which a full disk may have shrunk) */
	c->st.ring_fill = c->hist_bytes;
	if (c->ring && c->st.ring_fill > argus_ring__fill(c->ring))
		c->st.ring_fill = argus_ring__fill(c->ring);
	c->st.ring_usable = c->opts.ring_size ? argus_ring__capacity(c->ring) : 0;
	c->st.oldest_ts = c->hist_head < c->nhist ? c->hist[c->hist_head].min_ts : 0;
	c->st.unwound = stack_capture__unwound(c->stacks);
	c->st.unwind_memo_hits = stack_capture__memo_hits(c->stacks);
	/* the unwind helper's CPU is the collector's too */
	c->st.cpu_seconds = cpu_seconds() - c->cpu_at_start +
			    stack_capture__helper_cpu(c->stacks);
	c->st.files_skipped = argus_guard__get(ARGUS_GUARD_FILE_SKIPPED);
	c->st.elf_over_budget = argus_guard__get(ARGUS_GUARD_OVER_BUDGET);
	c->st.unwinds_cut = argus_guard__get(ARGUS_GUARD_UNWIND_CUT);
	c->st.maps_dropped = argus_guard__get(ARGUS_GUARD_MAPS_DROPPED);
	stack_capture__helper(c->stacks, &c->st.unwind_helper_restarts,
			      &c->st.unwind_helper_pid, &c->st.unwind_wait_ns,
			      &c->st.unwind_wait_max_ns);
	*st = c->st;
}

struct argus_probe *argus_collector__probe(struct argus_collector *c)
{
	return c->probe;
}

const char *argus_collector__path(const struct argus_collector *c)
{
	return c->path;
}

void argus_collector__free(struct argus_collector *c)
{
	if (!c)
		return;
	if (c->probe && c->ring)
		argus_collector__finish(c);
	argus_probe__close(c->probe);
	if (c->ring) {
		argus_ring__sync(c->ring);
		argus_ring__close(c->ring);
	}
	argus_chunk_builder__free(c->builder);
	stack_capture__free(c->stacks);
	task_table__free(&c->tasks);
	for (uint32_t i = 0; i < MAX_CPUS; i++) {
		free(c->cq[i].q);
		free(c->cq[i].lq);
		free(c->cq[i].arena.buf);
	}
	free(c->chunk_tids);
	free(c->chunk_pids);
	free(c->hist);
	free(c->path);
	free(c);
}
