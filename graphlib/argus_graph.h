/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_graph.h - libargus: the event graph built from an Argus trace.
 * docs/graph.md is the prose version of this header; keep them in step.
 *
 * Vertices are execution *segments* of one thread.  A thread's life is cut
 * into segments at blocking waits: a switch-out in a sleeping state ends a
 * segment, the switch-in after the wake-up begins the next.  Preemption is
 * not a boundary.  Thread start/exit and the first/last traced event of a
 * thread are boundaries too, and so are the user schema's boundaries and
 * the batching split (a server-loop segment that serves two processes is
 * cut between them).
 *
 * Edges are typed (enum argus_edge_type).  Strong edges join two threads
 * (wake-up, message, futex, timer, fork, exit, signal, work item, data
 * flag, custom); the weak INTRA edge joins consecutive segments of one
 * thread and is followed only when no strong edge exists.  Wake-ups done
 * by interrupt handlers (other than timer expiries) or by kernel
 * housekeeping threads are *not* edges: the woken segment records the
 * attribution (argus_segment.woken_by) and the graph's stats count each
 * decision.  A timer expiry's wake-up becomes a TIMER edge from the segment
 * that armed the timer.
 *
 * Storage: arrays, not a pointer web.  Segments, edges, events and threads
 * are arrays indexed by uint32_t ids; adjacency is CSR (one offsets array
 * per direction); each thread's segments are a contiguous, time-ordered
 * slice of one index array, so "the segment of thread T at time t" is a
 * binary search.  Events are kept in a compact form (struct argus_gevent),
 * stored by thread: a thread's events are a time-ordered chain
 * (argus_graph__thread_next_event), a segment's a run of its thread's
 * chain (argus_graph__seg_next_event); the full record stays in the trace.
 *
 * Units: timestamps are CLOCK_MONOTONIC ns, like the trace.  tid is the
 * kernel task id, pid the thread group id.
 *
 * Conventions (libbpf style): int functions return 0 or -errno;
 * constructors return NULL and fill *err; free functions accept NULL;
 * the library never prints.
 */
#ifndef ARGUS_GRAPH_H
#define ARGUS_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

#define ARGUS_NONE 0xffffffffu  /* "no id" for every uint32_t id below */

enum argus_edge_type {
	ARGUS_EDGE_WAKEUP = 1,  /* task-context wake-up, no better reason */
	ARGUS_EDGE_MESSAGE,     /* send -> receive on a pipe/unix/TCP object */
	ARGUS_EDGE_FUTEX,       /* FUTEX_WAKE -> the woken FUTEX_WAIT */
	ARGUS_EDGE_TIMER,       /* hrtimer arm -> the segment its expiry woke */
	ARGUS_EDGE_FORK,        /* fork/clone -> the child's first segment */
	ARGUS_EDGE_EXIT,        /* exit -> the parent's wait4/waitid return */
	ARGUS_EDGE_SIGNAL,      /* kill/tgkill -> the signalled thread */
	ARGUS_EDGE_INTRA,       /* weak: previous -> next segment, one thread */
	ARGUS_EDGE_WORKITEM,    /* interposed work item: enqueue -> dequeue */
	ARGUS_EDGE_DATAFLAG,    /* watched flag: write -> read */
	ARGUS_EDGE_CUSTOM,      /* user schema: event A -> event B, same attr */
	ARGUS_EDGE_HOLDER,      /* interposed mutex: the unlock that had
	                           waiters -> the waiter's acquisition
	                           (obj = the mutex's address); the same for
	                           an rwlock's unlock, a sem_post -> the
	                           sem_wait's return, a condvar signal ->
	                           the cond_wait's return (obj = that
	                           object's address; docs/graph.md) */
	ARGUS_EDGE_TYPE_MAX,
};

/* argus_edge.flags */
#define ARGUS_EDGE_F_WOKE  0x1  /* the source also woke the destination */
#define ARGUS_EDGE_F_SPLIT 0x2  /* an end was re-pointed by a batching split */

struct argus_edge {
	uint32_t src, dst;      /* segment ids */
	uint8_t type;           /* enum argus_edge_type */
	uint8_t flags;          /* ARGUS_EDGE_F_* */
	uint16_t obj_kind;      /* enum ae_obj_kind of obj, or 0 */
	uint32_t bytes;         /* MESSAGE: bytes matched (saturates at
	                           UINT32_MAX; stats.bytes has the total);
	                           else 0 */
	uint64_t src_ts;        /* when the source acted (send, wake, arm) */
	uint64_t dst_ts;        /* when the destination saw it (receive,
	                           switch-in after the wake-up) */
	uint64_t obj;           /* object: inode / futex address / timer id */
};

/* Why a segment began (argus_segment.start_reason). */
enum argus_seg_start {
	ARGUS_START_TRACE = 1,  /* first traced event of the thread */
	ARGUS_START_THREAD,     /* the thread was created inside the trace */
	ARGUS_START_WAKE,       /* switch-in after a blocking wait */
	ARGUS_START_SPLIT,      /* batching split */
	ARGUS_START_SCHEMA,     /* user schema boundary */
	ARGUS_START_WORK = 8,   /* a work item began, or the previous ended
	                           (the interposer's work_begin/end/boundary) */
};

/* Why a segment ended (argus_segment.end_reason). */
enum argus_seg_end {
	ARGUS_END_TRACE = 1,    /* last traced event of the thread */
	ARGUS_END_EXIT,         /* the thread exited */
	ARGUS_END_WAIT,         /* switch-out in a sleeping state */
	ARGUS_END_SPLIT,
	ARGUS_END_SCHEMA,
	ARGUS_END_WORK = 8,     /* cut at a work item's begin or after its end */
};

/* Who woke a segment that began after a wait (argus_segment.woken_by). */
enum argus_woken_by {
	ARGUS_WOKEN_NA = 0,     /* did not begin after a wait */
	ARGUS_WOKEN_EDGE,       /* a strong in-edge says who */
	ARGUS_WOKEN_HARDIRQ,    /* interrupt handler, not a timer expiry */
	ARGUS_WOKEN_SOFTIRQ,
	ARGUS_WOKEN_NMI,
	ARGUS_WOKEN_KERNEL,     /* kernel housekeeping thread (or idle) */
	ARGUS_WOKEN_FILTERED,   /* a user schema filter */
	ARGUS_WOKEN_UNKNOWN,    /* no wake-up seen (lost, or before the trace) */
	ARGUS_WOKEN_DEBUGGER,   /* a debugger's (ptrace) interrupt or resume,
	                           or a wake-up by a debugger or by Argus itself
	                           (lldb, gdb, strace, argusd, ...): never the
	                           program's own causality */
};

/* Why a wake-up was not turned into an edge (argus_graph_stats.filtered). */
enum argus_filter_reason {
	ARGUS_FILT_HARDIRQ = 0, /* P1: woken from a hard-irq handler */
	ARGUS_FILT_SOFTIRQ,     /* P1: from a softirq */
	ARGUS_FILT_NMI,
	ARGUS_FILT_IRQ_THREAD,  /* a threaded irq handler (irq/N-name) */
	ARGUS_FILT_KERNEL_WAKER,  /* P2: kworker, ksoftirqd, rcu, migration,
	                             idle, ... woke a thread */
	ARGUS_FILT_KERNEL_TARGET, /* P2: a thread woke a housekeeping thread */
	ARGUS_FILT_SCHEMA,      /* a user schema filter line */
	ARGUS_FILT_RUNNING,     /* target was not waiting (wake-up race) */
	ARGUS_FILT_DEBUGGER,    /* a ptrace stop's interrupt (the wake-up that
	                           made a waiting thread stop for its tracer)
	                           or its resume (graph_debugger.c) */
	ARGUS_FILT_TOOL,        /* woken by a debugger or by Argus's own
	                           processes, or a child of one (lldb,
	                           lldb-server, gdb, strace, argusd, argus,
	                           argus-unwind): the tool, not the program */
	ARGUS_FILT_MAX,
};

/* argus_segment.flags */
#define ARGUS_SEG_F_KERNEL 0x1  /* segment of a kernel thread */
#define ARGUS_SEG_F_MULTI  0x2  /* served >= 2 processes and was not split */
#define ARGUS_SEG_F_STOPPED 0x4 /* ended stopped (SIGSTOP, or a debugger's
                                   ptrace stop), not in a wait of its own */
#define ARGUS_SEG_F_TRACED 0x8  /* ...and the stop was a ptrace stop
                                   (__TASK_TRACED): a debugger's */

/* A vertex: one execution segment of one thread.  72 bytes: the graph
 * holds one per segment, millions of them. */
struct argus_segment {
	uint64_t start, end;    /* ns; end >= start */
	uint64_t oncpu;         /* ns on CPU within [start, end] */
	uint32_t thread;        /* index into the thread table */
	uint32_t first_event;   /* first event of the segment, or ARGUS_NONE */
	uint32_t nevents;
	uint32_t nsamples;      /* CPU samples that fell in the segment */
	uint8_t start_reason;   /* enum argus_seg_start */
	uint8_t end_reason;     /* enum argus_seg_end */
	uint8_t woken_by;       /* enum argus_woken_by */
	uint8_t flags;          /* ARGUS_SEG_F_* */
	/* The wait that ended the segment (end_reason == ARGUS_END_WAIT). */
	int32_t wait_nr;        /* syscall blocked in, -1 none/unknown */
	uint32_t wait_obj;      /* the object behind its fd: an id for
	                           argus_graph__object() (kind, obj, peer),
	                           0 none */
	uint32_t wait_stack;    /* trace stack id at the switch-out, 0 none */
	uint64_t wait_arg;      /* futex uaddr, fd, or timeout ns (~0: none) */
	uint64_t wait_ns;       /* switch-out to next switch-in, 0 unknown */
};

/* A thread seen in the trace. */
struct argus_thread {
	uint32_t tid, pid, ppid;
	uint32_t first_seg;     /* offset into the per-thread segment index */
	uint32_t nseg;          /* its segments, time-ordered */
	uint32_t first_event;   /* its first event, or ARGUS_NONE */
	uint32_t nevents;       /* its events (argus_graph__thread_next_event) */
	uint32_t comm;          /* trace string id of the thread's name */
	uint32_t process;       /* trace string id of its process's name */
	uint8_t kernel;         /* 1 = kernel thread (no user space) */
	uint8_t tool;           /* 1 = a debugger's or Argus's own thread, or
	                           a child process of one (never a culprit,
	                           left out of machine-wide hang lists) */
	uint8_t pad[2];
};

/* A compact event, 24 bytes as the API gives it (the graph stores it
 * packed in 16: argus_graph__event).  The full record is in the trace;
 * this keeps what the graph and the diagnosis use.  Where it belongs is where it is
 * stored: the events of a thread are reached from argus_thread.first_event
 * (argus_graph__thread_next_event), those of a segment from
 * argus_segment.first_event (argus_graph__seg_next_event).  Events of no
 * thread (the idle task's, lost-event records) are in neither.  Ids are
 * storage slots, not trace order: each thread's events fill blocks of
 * slots of their own, and a slot of type AE_NONE is an unused one (the
 * tail of a thread's last block; its other fields mean nothing). */
struct argus_gevent {
	uint64_t ts;            /* ns */
	int64_t val;            /* sys_exit: return value; sys_enter: arg0
	                           (poll, ppoll: arg1, the number of fds;
	                           flock/fcntl: the lock request packed by
	                           argus_lock__pack, 0 none: argus_diag.h);
	                           switch: wait arg; waking: target tid;
	                           fork: child tid; exit: exit code;
	                           hrtimer: timer id; mutex_wait:
	                           holder tid, mutex_acquired: errno,
	                           mutex_wake: 0 */
	union {                 /* by type: */
		uint32_t obj;   /* sys_exit, switch, mutex_*: object id
	                           (argus_graph__object), 0 none */
		uint32_t stack; /* sample: trace stack id (a blocking
	                           switch's stack is its segment's wait_stack);
	                           a switch out of sched_yield (nr a yield, no
	                           object): the yield's stack, 0 none
	                           (gview_event_stack(), graph_view.h) */
		uint32_t str;   /* mark: trace string id of the text */
	};
	int16_t nr;             /* syscall nr (sys_*, switch; -1 none), irq
	                           or softirq vector, waking: vector
	                           (-1 task context, -2 hrtimer expiry,
	                           -(0x100 + v) x86 APIC system vector v) */
	uint8_t type;           /* enum ae_type; AE_NONE: an unused slot */
	uint8_t ctx;            /* enum ae_ctx */
};

/* An interned kernel object (id 0 is "none"). */
struct argus_object {
	uint32_t kind;          /* enum ae_obj_kind */
	uint32_t pad;
	uint64_t obj, peer;
};

struct argus_graph_stats {
	uint64_t events;        /* events read from the trace */
	uint64_t vertices;      /* segments */
	uint64_t edges;         /* all edges, INTRA included */
	uint64_t edges_by_type[ARGUS_EDGE_TYPE_MAX];
	uint64_t processes, threads;
	uint64_t messages;      /* matched send -> receive pairs */
	uint64_t bytes;         /* their bytes */
	uint64_t unmatched_recv; /* receives with no send seen (before trace) */
	uint64_t late_sends;    /* sends recorded after the receive they fed */
	uint64_t wakeups;       /* sched_waking events seen */
	uint64_t filtered[ARGUS_FILT_MAX];
	uint64_t timer_reattributed; /* irq-context timer wakes -> TIMER edges */
	uint64_t timer_inferred; /* untraced wakes an expired own timer explains */
	uint64_t splits;        /* segments added by the batching split */
	uint64_t schema_boundaries, schema_edges;
	uint64_t lost;          /* events the collector lost (trace stats) */
	uint64_t build_ns;      /* wall time of argus_graph__build */
	uint64_t mem_bytes;     /* bytes held by the graph's arrays */
	/* events whose value is past int32_t (kept in a side array, 8 bytes
	 * more each), and events whose time, id or number is past the packed
	 * slot's range (a side table, 40 bytes more each: a recording longer
	 * than ~78 h makes every later event one; docs/graph.md "Storage") */
	uint64_t big_values, wide_events;
	uint64_t min_ts, max_ts;
};

struct argus_schema;     /* see argus_schema__load() below */

struct argus_graph_opts {
	size_t sz;              /* sizeof(struct argus_graph_opts) */
	const struct argus_schema *schema; /* user schema, NULL = built-in */
	int no_split;           /* 1 = no batching split */
	/* Called now and then during the build with events read so far and
	 * the trace's total; return non-zero to cancel (-ECANCELED). */
	int (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	const uint32_t *pids;   /* only these processes (npids of them); */
	uint32_t npids;         /* npids 0 = every process */
};

struct argus_graph;

/* Build the graph of an open trace (rewound first).  The graph keeps a
 * pointer to the trace for strings and stacks: close the trace after
 * argus_graph__free(). */
struct argus_graph *argus_graph__build(struct argus_trace *t,
				       const struct argus_graph_opts *opts,
				       struct argus_error *err);
void argus_graph__free(struct argus_graph *g);
struct argus_trace *argus_graph__trace(const struct argus_graph *g);
const struct argus_graph_stats *argus_graph__stats(const struct argus_graph *g);

/* Arrays.  Pointers stay valid until the graph is changed or freed. */
uint32_t argus_graph__nsegments(const struct argus_graph *g);
const struct argus_segment *argus_graph__segment(const struct argus_graph *g,
						 uint32_t id);
uint32_t argus_graph__nedges(const struct argus_graph *g);
/* Edge `id`, NULL if out of range.  The weak INTRA edges are not stored
 * (one per pair of consecutive segments of a thread: over half of the
 * edges, and all they say follows from the thread's segments): one is
 * written to *buf, and buf returned, so its pointer is valid while *buf
 * is.  A strong edge's pointer is the graph's, valid as the others.
 * With buf NULL an INTRA id gives NULL. */
const struct argus_edge *argus_graph__edge(const struct argus_graph *g,
					   uint32_t id, struct argus_edge *buf);
/* A buffer for it that lives until the end of the enclosing block (a C99
 * compound literal): argus_graph__edge(g, id, ARGUS_EDGE_BUF)->src. */
#define ARGUS_EDGE_BUF (&(struct argus_edge){ 0 })
uint32_t argus_graph__nthreads(const struct argus_graph *g);
const struct argus_thread *argus_graph__thread(const struct argus_graph *g,
					       uint32_t idx);
/* Event slots, not events: each thread's events are stored in blocks of
 * 16, and the unused slots of a block read as type AE_NONE (skip them). */
uint32_t argus_graph__nevents(const struct argus_graph *g);
/* Event slot `id`, written to *buf (the graph keeps events packed,
 * 16 bytes each: docs/graph.md); returns buf, or NULL when out of range
 * or buf is NULL.  ARGUS_GEVENT_BUF is a buffer that lives until the end
 * of the enclosing block. */
const struct argus_gevent *argus_graph__event(const struct argus_graph *g,
					      uint32_t id, struct argus_gevent *buf);
#define ARGUS_GEVENT_BUF (&(struct argus_gevent){ 0 })
const struct argus_object *argus_graph__object(const struct argus_graph *g,
					       uint32_t id);
/* Next event of segment `seg` after event `ev` (ARGUS_NONE at the end);
 * start with ev = segment->first_event.  O(1). */
uint32_t argus_graph__seg_next_event(const struct argus_graph *g,
				     uint32_t seg, uint32_t ev);
/* Next event of thread index `thr` after event `ev` (ARGUS_NONE at the
 * end); start with ev = thread->first_event.  O(1). */
uint32_t argus_graph__thread_next_event(const struct argus_graph *g,
					uint32_t thr, uint32_t ev);

/* Adjacency (CSR): *ids points at edge ids; returns how many. */
uint32_t argus_graph__out_edges(const struct argus_graph *g, uint32_t seg,
				const uint32_t **ids);
uint32_t argus_graph__in_edges(const struct argus_graph *g, uint32_t seg,
			       const uint32_t **ids);

/* Lookups. */
uint32_t argus_graph__thread_by_tid(const struct argus_graph *g, uint32_t tid);
/* The time-ordered segment ids of thread index `thread`. */
uint32_t argus_graph__thread_segments(const struct argus_graph *g,
				      uint32_t thread, const uint32_t **ids);
/* The segment of thread `tid` running or waiting at `ts`: the last one
 * that started at or before ts.  ARGUS_NONE if none. O(log n). */
uint32_t argus_graph__segment_at(const struct argus_graph *g, uint32_t tid,
				 uint64_t ts);
/* The other segment of the same thread, ARGUS_NONE at either end. */
uint32_t argus_graph__seg_prev(const struct argus_graph *g, uint32_t seg);
uint32_t argus_graph__seg_next(const struct argus_graph *g, uint32_t seg);
/* The thread of segment `seg` (its argus_segment.thread), NULL if out of
 * range. */
const struct argus_thread *argus_graph__seg_thread(const struct argus_graph *g,
						   uint32_t seg);
/* The trace's marks: *ids points at the ids of its AE_MARK events, in
 * trace order (`argus mark`'s, of no thread, and a program's own, in its
 * thread's chain); returns how many. */
uint32_t argus_graph__marks(const struct argus_graph *g, const uint32_t **ids);

/* A debugger's stops inside a wait (docs/diagnosis.md, "A debugger's
 * stops").  Attaching wakes every blocked thread only to stop it for its
 * tracer; the call is restarted once the tracer lets it go.  For the
 * program that is one wait, through the stop(s) and the restarted call,
 * until the call returns; a call restarted at once (a signal with no
 * handler) goes on the same way.  These need the per-thread index. */
/* 1 when segment `seg` ends in an attach's interrupt: woken from its wait
 * only to stop for its tracer (__TASK_TRACED), its call not returned (its
 * first syscall exit is -ERESTART*, or none).  O(1). */
int argus_graph__seg_interrupted(const struct argus_graph *g, uint32_t seg);
/* Cheap test on the segment after a wait: 1 when that wait can go on
 * through `seg` (an attach's interrupt, or a call restarted at once).
 * Only then is argus_graph__wait_through worth its searches.  O(1). */
int argus_graph__wait_may_continue(const struct argus_graph *g, uint32_t seg);
/* Segment `seg` ends in a wait: *last = the last segment whose wait is
 * part of it (seg when no stop interrupted it), *next = the segment that
 * runs once the wait has really ended (ARGUS_NONE: still waiting, or
 * stopped, at the end of the trace).  Returns how many segments of the
 * thread's list *next is after seg (0 for a bad id: *last = seg, *next =
 * ARGUS_NONE). */
uint32_t argus_graph__wait_through(const struct argus_graph *g, uint32_t seg,
				   uint32_t *last, uint32_t *next);
/* The reverse: `seg` ends in a restarted call's wait; the segment whose
 * wait the attach interrupted (seg when none, ARGUS_NONE if out of
 * range). */
uint32_t argus_graph__wait_began(const struct argus_graph *g, uint32_t seg);

/* Add an edge from another source (interposer work items, data-flag
 * watchpoints, ...): from the segment of src_tid at src_ts to that of
 * dst_tid at dst_ts.  Returns the new edge id (>= 0) or -errno. */
int64_t argus_graph__add_edge(struct argus_graph *g, enum argus_edge_type type,
			      uint32_t src_tid, uint64_t src_ts,
			      uint32_t dst_tid, uint64_t dst_ts, uint64_t obj);

/* Names for printing; NULL when out of range. */
const char *argus_edge_type_str(unsigned type);
const char *argus_filter_reason_str(unsigned reason);
const char *argus_seg_start_str(unsigned reason);
const char *argus_seg_end_str(unsigned reason);
const char *argus_woken_by_str(unsigned w);
/* The maker of a work item that came from a uprobe (`argus instrument
 * --via uprobe`, AE_LIVE_HIT), after enum aip_work_kind's makers; never
 * in the interposer's ring. */
#define ARGUS_WORK_KIND_LIVE 6
/* A work item's maker (enum aip_work_kind: "api", "idle", "timeout",
 * "source", "pool", "task"; "live"), "?" out of range. */
const char *argus_work_kind_str(unsigned kind);
/* 1 when the edge type is strong (inter-thread). */
int argus_edge_type_strong(unsigned type);

/* ---------------------------------------------------------------------
 * Exports (graph_export.c).  They write to `out` and return 0, or -errno
 * (-EIO when writing failed).  Names and times are printed as in the CLI.
 */
/* A subgraph: the segments segs[0..n) and every edge with both ends among
 * them (a node's neighbourhood, or a path), as Graphviz DOT. */
int argus_graph__write_dot(const struct argus_graph *g, const uint32_t *segs,
			   uint32_t n, FILE *out);
/* The same subgraph as one JSON object {"nodes": [...], "edges": [...]}
 * (schema in docs/graph.md). */
int argus_graph__write_json(const struct argus_graph *g, const uint32_t *segs,
			    uint32_t n, FILE *out);

/* `s` as a JSON string literal, quotes included (NULL prints null): the
 * one escaper for untrusted names, shared by the exports and the CLI's
 * JSON.  Valid UTF-8 passes, control bytes and invalid bytes become
 * \u00XX, U+2028/U+2029 and the C1 controls U+0080..U+009F are escaped.  0, or -EIO on a write error. */
int argus_json_write_str(FILE *f, const char *s);

/* `s` for a terminal or a line-oriented text output: a comm, a path or a
 * mark is another user's choice, so nothing in it may act on the terminal
 * (ESC, CSI, BEL...) or start a line of its own.  Valid printable UTF-8
 * passes; backslash becomes \\, newline/CR/tab \n \r \t, other control
 * bytes and bytes that are not UTF-8 \xNN, C1 controls \u00NN, and the
 * invisible characters that reorder or hide text (bidi controls U+202A-E,
 * U+2066-9, U+200E/F, U+061C, zero-width and other Unicode format
 * characters (Cf), U+2028/9) \uNNNN, or \UNNNNNNNN above U+FFFF.  The
 * mapping is one-to-one, so what is shown names one string.  (JSON
 * output keeps the exact string.)
 * __escape writes into buf (len bytes, always NUL-terminated when len > 0,
 * cut only between whole sequences) and returns the length the whole
 * escape needs, without the NUL (>= len: truncated).  __write_str writes
 * it to f: 0 or -EIO.  NULL prints as "". */
size_t argus_text_escape(const char *s, char *buf, size_t len);
int argus_text_write_str(FILE *f, const char *s);

struct argus_export_opts {
	size_t sz;              /* sizeof(struct argus_export_opts) */
	uint64_t from_ts, to_ts; /* window, 0 = unbounded */
	int include_kernel;     /* 1 = also kernel threads' segments */
	int (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	const uint32_t *pids;   /* only these processes (npids of them); */
	uint32_t npids;         /* npids 0 = every process */
};
/* The whole graph as Chrome trace-event JSON, which Perfetto and
 * chrome://tracing open: processes and threads named with metadata
 * events, each segment a complete ("X") event, each strong edge a flow
 * ("s" -> "f") from the source segment to the destination. */
int argus_graph__write_perfetto(const struct argus_graph *g,
				const struct argus_export_opts *opts,
				FILE *out);
/* The segments the same options select (window, kernel threads, pids) and
 * the edges among them, as Graphviz DOT (argus_graph__write_dot).  The
 * progress callback is not used. */
int argus_graph__write_dot_window(const struct argus_graph *g,
				  const struct argus_export_opts *opts,
				  FILE *out);

/* ---------------------------------------------------------------------
 * User schema (docs/schema.md): extra boundaries, edges and filters.
 */
struct argus_schema *argus_schema__load(const char *path,
					struct argus_error *err);
/* Same, from text; `name` is used in error messages. */
struct argus_schema *argus_schema__parse(const char *text, size_t len,
					 const char *name,
					 struct argus_error *err);
void argus_schema__free(struct argus_schema *s);
/* Rules of each kind, for printing. */
void argus_schema__counts(const struct argus_schema *s, uint32_t *boundaries,
			  uint32_t *edges, uint32_t *filters);

#endif /* ARGUS_GRAPH_H */
