/* diag_front.h - what `argus hangs` and `argus diagnose` share: their
 * flags (diag_opts.c), choosing the hang, and printing hangs, threads and stacks as text
 * or JSON (docs/diagnosis.md has the JSON schema). */
#ifndef ARGUS_DIAG_FRONT_H
#define ARGUS_DIAG_FRONT_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "argus_diag.h"
#include "graph_open.h"

#define DIAG_MAX_PICKS 32

struct until_end;

struct diag_front_opts {
	struct graph_open_opts g;
	uint32_t pid, tid;
	uint64_t threshold_ns;
	bool json, dot;
	bool have_at;
	uint64_t at_ns;          /* absolute CLOCK_MONOTONIC ns once resolved */
	bool at_rel;             /* --at was seconds from the trace start */
	const char *mark;
	uint32_t depth;
	int picks[DIAG_MAX_PICKS];
	uint32_t npicks;
	bool live;               /* the trace is of this running system, just taken:
	                            --live, or found so (diag_front_resolve_live) */
	int8_t live_flag;        /* 1 --live, -1 --no-live, 0 neither: decide */
	bool no_holder_rules;    /* --no-holder-rules: live, no schema holder
	                            command runs (holder_cmd.h) */
	bool all;                /* hangs: deliberate waits too (wait4, sleep) */
	bool live_rule;          /* hangs --live-rule: argusd's live watch replayed
	                            over the trace (hangs_replay.c) */
	uint8_t idle_rule;       /* --idle-wait: enum argus_idle_rule */
	const char *cmd;         /* the command errors name (diag_run: NULL
	                            is "diagnose"; `argus report` sets it) */
	uint64_t until_end_ns;   /* diagnose --until-end[=S]: how long to wait
	                            for the ongoing hang to end; 0 not asked
	                            (FILE may then be left out: until_end.h) */
	const char *out;         /* report: -o FILE */
	unsigned out_flags;      /* report: --force is ARGUS_OUT_FORCE */
	const struct until_end *until_end; /* set by until_end_annotate: what
	                            the wait saw, for the report (NULL none) */
	argus_live_fn live_fn;   /* with live: who answers the diagnosis's
	                            live questions; NULL diag_front_live (/proc).
	                            Set by callers, not by a flag (tests) */
	void *live_ctx;
};

/* argus_holders_fn over /proc/PID/fd of the running system: the
 * processes that hold a unix socket ("socket:[INODE]") or a pipe
 * ("pipe:[INODE]") open now; AE_OBJ_FILE: a file lock's holders
 * (diag_front_proc_lock_holders).  For `diagnose --live` (proc_holders.c). */
uint32_t diag_front_proc_holders(void *ctx, unsigned obj_kind, uint64_t obj, uint32_t *pids,
			       uint32_t max);
/* argus_live_fn over /proc of the running system: every live source
 * (docs/diagnosis.md "Live holders"), each answer naming its source
 * (proc_holders.c).  ctx unused. */
int diag_front_live(void *ctx, const struct argus_live_query *q, struct argus_live_answer *a);
/* The processes with an open fd whose link reads exactly `want`
 * ("socket:[123]", "pipe:[45]"), up to max; how many. */
uint32_t diag_front_fd_holders(const char *want, uint32_t *pids, uint32_t max);
/* The lowest fd of process pid whose link reads exactly `want` (a scan
 * of /proc/PID/fd); -1 none (or pid gone, not ours to read). */
int diag_front_fd_of(uint32_t pid, const char *want);
/* The /proc/PID/fd link text of a pipe or socket inode: "pipe:[INODE]"
 * for AE_OBJ_PIPE, "socket:[INODE]" for any other kind (unix, TCP, UDP
 * sockets); into buf (DIAG_FD_LINK_LEN bytes is enough), returned. */
#define DIAG_FD_LINK_LEN 48
const char *diag_front_fd_link(unsigned obj_kind, uint64_t inode, char *buf, size_t len);

/* Parses the words of cmd: "hangs", "report", else diagnose's, argv[0]
 * the command (diag_opts.c; argv is not changed).  0, or ARGUS_OPT_HELP
 * after the help (on stdout) or ARGUS_OPT_ERROR after a usage error
 * (parse_opts.h: argus_opts_exit() is the exit code). */
int diag_front_parse(const char *cmd, int argc, char **argv, struct diag_front_opts *o);
/* hangs --live-rule (hangs_replay.c): the live watch's hangs over c's
 * trace, as diag_front_hangs lists them.  0 or an exit code (printed). */
int hangs_replay(struct graph_open_ctx *c, const char *cmd, const struct diag_front_opts *o,
		 unsigned scope, struct argus_hang **out, uint32_t *nout);
/* The hangs of o->pid/o->tid (scope: enum argus_hang_scope), or with
 * o->live_rule the live watch's (hangs_replay); prints an error and
 * returns non-zero if the process or thread is not in the trace. */
int diag_front_hangs(struct graph_open_ctx *c, const char *cmd, struct diag_front_opts *o,
		   unsigned scope, struct argus_hang **h, uint32_t *n);
/* How old a trace of this system may be for its open waits to be asked
 * of /proc without --live: past this, a wait open at its end may have
 * ended and its pids been reused (docs/diagnosis.md, "Live holders"). */
#define DIAG_LIVE_MAX_AGE_NS (120ull * 1000000000ull)
/* After graph_open_trace: with neither --live nor --no-live, o->live is
 * whether the trace was saved from this running system, at most
 * DIAG_LIVE_MAX_AGE_NS ago (argus_trace__of_running_system). */
void diag_front_resolve_live(const struct graph_open_ctx *c, struct diag_front_opts *o);
/* The hang_opts the flags say (threshold, --idle-wait, --all). */
struct argus_hang_opts diag_front_hang_opts(const struct diag_front_opts *o, unsigned scope);

void diag_front_print_thread_line(struct graph_open_ctx *c, uint32_t tid);
void diag_front_fprint_thread_line(FILE *f, struct graph_open_ctx *c, uint32_t tid);
void diag_front_print_hang(FILE *f, struct graph_open_ctx *c, const struct argus_hang *h,
			   uint32_t i, bool who);
/* What `argus hangs` prints for hangs h[0..n) found at scope (enum
 * argus_hang_scope) with o's flags: the list as text, or {"hangs":[...]}
 * with --json. */
void diag_front_print_hangs(FILE *f, struct graph_open_ctx *c, const struct diag_front_opts *o,
			    unsigned scope, const struct argus_hang *h, uint32_t n);
void diag_front_json_hang(struct graph_open_ctx *c, const struct argus_hang *h, unsigned kind);
void diag_front_fjson_hang(FILE *f, struct graph_open_ctx *c, const struct argus_hang *h,
			 unsigned kind);
/* JSON string (escaped, quoted) to stdout, or to f. */
void diag_front_json_str(const char *s);
void diag_front_fjson_str(FILE *f, const char *s);
/* A symbolizer that knows a process better than the trace does (the lldb
 * plugin: the attached process, through lldb's target and its debug
 * info).  fn gets the lookup address (a return address already moved back
 * into its call) and fills buf with one frame as argus_sym__format prints
 * it ("func+0x1a (file.c:42) [module]") and func with the function's name
 * alone (as the frame names it: "" if none), returning 0; non-zero leaves
 * the frame to the trace's symbolizer.  NULL fn: the trace's for
 * everything. */
typedef int (*diag_sym_fn)(void *ctx, uint32_t pid, uint64_t ip, char *buf, size_t len,
			   char *func, size_t func_len);
void diag_front_set_symbolizer(diag_sym_fn fn, void *ctx);

/* Symbolized frames of a trace stack, one per call: "func+off (file:line)",
 * escaped for a terminal (msg_tstr). */
typedef void (*diag_frame_fn)(void *ctx, const char *frame);
void diag_front_stack(struct graph_open_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
		    diag_frame_fn fn, void *ctx);
/* The same, with each frame's function name alone, unescaped ("" when the
 * frame has none: an address, or module+offset), from the same lookup. */
typedef void (*diag_func_frame_fn)(void *ctx, const char *frame, const char *func);
void diag_front_stack_funcs(struct graph_open_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
			  diag_func_frame_fn fn, void *ctx);
const char *diag_front_comm(struct graph_open_ctx *c, uint32_t tid);
const char *diag_front_process(struct graph_open_ctx *c, uint32_t tid);
/* The same, unescaped, for JSON. */
const char *diag_front_comm_raw(struct graph_open_ctx *c, uint32_t tid);
const char *diag_front_process_raw(struct graph_open_ctx *c, uint32_t tid);

/* ---- The segment commands: show, similar, slice, diff -----------------
 * They take FILE and one or two segment ids (as printed by diagnose, graph
 * and hangs), --json, and the common graph flags.  Ids depend on --schema
 * and --no-split: the same flags must be given as to the command that
 * printed them. */
struct seg_cli_opts {
	struct graph_open_opts g;
	bool json;
	uint32_t ids[2];         /* the segment ids, in the order given */
	uint32_t nids;
};
/* Parses FILE, nids ids (named id_names[i] in errors), --json, the
 * common graph flags and the command's own options (extra, NULL none),
 * with its usage u (diag_opts.c).  0, ARGUS_OPT_HELP or ARGUS_OPT_ERROR
 * as diag_front_parse. */
struct argus_opt;
struct argus_usage;
int diag_front_parse_segs(const struct argus_usage *u, const struct argus_opt *extra, int argc,
			  char **argv, struct seg_cli_opts *o, uint32_t nids,
			  const char *const *id_names);
/* graph_open_trace, then checks the ids: an id out of range prints one line
 * saying how many segments the graph has and returns 2. */
int diag_front_open_segs(struct graph_open_ctx *c, const char *cmd, const struct seg_cli_opts *o);
/* A --pick list like 1,2,1 appended to picks[0..*n) (at most
 * DIAG_MAX_PICKS); 0, or 2 after a usage error. */
int diag_front_parse_picks(const char *cmd, const char *s, int *picks, uint32_t *n);

/* Seconds from the trace's first event. */
double diag_front_rel_s(struct graph_open_ctx *c, uint64_t ts);
/* A syscall's name, or "sys_N" in buf for one this build does not know,
 * "-" for none (nr < 0). */
const char *diag_front_sys(int nr, char *buf, size_t len);
/* What x86 APIC system vector `vector` is ("irq_work", "local timer"...). */
const char *diag_front_apic_name(int vector);
/* "#109 ime_worker 7295/7298" */
void diag_front_seg_str(struct graph_open_ctx *c, uint32_t seg, char *buf, size_t len);
/* An edge seen from one end: "futex from #109 ime_worker 7295/7298 at
 * 0.764943 s (woke it)" (in = true) or "... to #..." (in = false). */
void diag_front_edge_str(struct graph_open_ctx *c, uint32_t edge, bool in, char *buf, size_t len);
/* {"segment":S,"tid":T,"pid":P,"comm":...,"process":...} */
void diag_front_json_seg_ref(struct graph_open_ctx *c, uint32_t seg);
/* {"id":E,"type":...,"src":{seg ref},"dst":{seg ref},"src_ts":...,
 *  "dst_ts":...,"woke":b,"split":b,"obj_kind":...,"bytes":N} */
void diag_front_json_edge(struct graph_open_ctx *c, uint32_t edge);

/* How the wait that ended segment `seg` ended: the thread's next segment
 * and its strong in-edge flagged WOKE (the latest of several; without one,
 * the latest strong in-edge; ARGUS_NONE when the wake-up was attributed
 * instead: see that segment's woken_by). */
struct diag_resume {
	uint32_t next;           /* the thread's next segment, ARGUS_NONE */
	uint32_t edge;           /* the strong in-edge that woke it, ARGUS_NONE */
	bool woke;               /* edge has ARGUS_EDGE_F_WOKE */
	bool own_timer;          /* a TIMER edge from the same thread */
};
void diag_front_resume(struct graph_open_ctx *c, uint32_t seg, struct diag_resume *r);
/* "woken by ime_worker 7295/7298 (#109) via futex", "woken by its own
 * timer (armed in #261)", "woken by hardirq (an attribution, no edge)",
 * "no next segment: the thread exited" ... */
void diag_front_resume_str(struct graph_open_ctx *c, uint32_t seg, const struct diag_resume *r,
			 char *buf, size_t len);
/* {"segment":N|null,"woken_by":...,"own_timer":b,"woke":b,"edge":{...}|null,
 *  "by":{seg ref}|null,"text":...} */
void diag_front_json_resume(struct graph_open_ctx *c, uint32_t seg, const struct diag_resume *r);

/* ---- live lock holders (proc_locks.c) ---------------------------------
 * The processes holding a file lock (flock, POSIX or OFD) on `file` now:
 * a trace file object (AE_OBJ_FILE, dev<<32 ^ ino as resolve_fd() makes
 * it), matched against /proc/locks; OFD locks (pid -1 there) and locks
 * whose taker has exited are found through /proc/PID/fdinfo.  Blocked
 * waiters ("->" lines) are not holders.  Up to max pids; returns how many.
 * The shape of argus_holders_fn without the kind (ctx unused). */
uint32_t diag_front_proc_lock_holders(void *ctx, uint64_t file, uint32_t *pids, uint32_t max);
/* The same from /proc/locks alone (one file read, no scan of every
 * process's fdinfo): the holders it names by a live pid; *unresolved is
 * set when a lock on file has holders only the fdinfo scan would find (an
 * OFD lock, a taker that is gone). */
uint32_t diag_front_lock_holders_quick(uint64_t file, uint32_t *pids, uint32_t max,
				     bool *unresolved);
/* Is pid a live process now: /proc/PID/status is there and names pid its
 * own Tgid (the id of a thread that leads no thread group is no process,
 * although /proc/TID exists).  A zombie is there until reaped. */
bool diag_front_pid_alive(int64_t pid);
/* Appends pid to pids[0..n) unless it is there or n == max; the new n. */
uint32_t diag_front_pid_add(uint32_t *pids, uint32_t n, uint32_t max, uint32_t pid);
/* The owner of the glibc mutex whose futex word is at uaddr in process
 * pid, read from /proc/PID/mem (__lock at offset 0, __owner at 8): 0 and
 * *owner_tid; -ENOENT when the word does not look like a held mutex of
 * that process (unlocked, a condvar, a bare futex: a heuristic, see the
 * comment in proc_locks.c); -EFAULT unmapped; -errno (-EACCES, -ENOENT
 * for a process that is gone) when /proc/PID/mem cannot be read. */
int diag_front_mutex_owner(uint32_t pid, uint64_t uaddr, uint32_t *owner_tid);
/* The owner of the PI futex at uaddr in process pid: the tid in the
 * word (FUTEX_TID_MASK) while FUTEX_WAITERS is set, a live thread of pid:
 * 0 and *owner_tid; -ENOENT when the word is no held PI futex with
 * waiters; -EFAULT, -errno as diag_front_mutex_owner. */
int diag_front_pi_owner(uint32_t pid, uint64_t uaddr, uint32_t *owner_tid);

/* ---- the other end of a loopback TCP connection (proc_tcp.c) ----------
 * Ends are packed as the trace packs them (argus_events.h AE_OBJ_TCP):
 * (IPv4 address, host order; IPv6: its last 32 bits) << 16 | port. */
struct diag_tcp_end {
	uint64_t inode;         /* the socket's inode */
	bool listener;          /* the connection is not accepted yet: the
	                           socket listening on its port */
};
/* Is the packed end on a loopback address (127.0.0.0/8, ::1)? */
bool diag_front_tcp_loopback(uint64_t end);
/* In one table read from f (/proc/net/tcp or tcp6 text): the other end of
 * the connection whose ends are local and remote (its local end remote,
 * its remote end local, both loopback), else the socket listening on
 * remote's port (bound to its address or the wildcard).  0 and *out;
 * -ENOENT none; -EINVAL. */
int diag_front_tcp_find(FILE *f, uint64_t local, uint64_t remote, struct diag_tcp_end *out);
/* The processes holding the other end now (/proc/net/tcp, then tcp6,
 * then /proc/PID/fd), up to max; 0 unless both ends are loopback.
 * *listener: they hold the listening socket, not the connection. */
uint32_t diag_front_tcp_peer_holders(uint64_t local, uint64_t remote, uint32_t *pids, uint32_t max,
				   bool *listener);

/* ---- the listener behind an unaccepted unix connection (proc_unix.c) --
 * The listening socket in whose queue the connection of the client socket
 * client_ino waits (NETLINK_SOCK_DIAG's pending-connection lists).  0 and
 * *listener_ino; -ENOENT no listener has it queued (accepted, or not a
 * connecting socket); -errno from netlink. */
int diag_front_unix_listener(uint32_t client_ino, uint32_t *listener_ino);

/* ---- children, stops and tracers (proc_task.c) ------------------------ */
/* The state, parent and process group of /proc/PID/stat text (the fields
 * after the comm's last ')'); NULL for what is not wanted.  0, -EINVAL. */
int diag_front_parse_stat(const char *buf, char *state, long *ppid, long *pgrp);
/* The live (not zombie) children of process pid that a wait4 with pid
 * argument `want` waits for: > 0 that child, -1 or ARGUS_ASK_ANY_CHILD
 * every one, 0 those in pid's process group, < -1 those in group -want.
 * Up to max; how many. */
uint32_t diag_front_proc_children(uint32_t pid, int64_t want, uint32_t *pids, uint32_t max);
/* Thread tid of process pid now: its state letter (/proc/PID/task/TID/
 * stat: R, S, D, T, t, Z...).  0, or -errno when it is gone. */
int diag_front_task_state(uint32_t pid, uint32_t tid, char *state);
/* /proc/PID/task/TID/syscall as one line into buf ("running", or the call
 * it is blocked in -- stopped by a tracer inside one, the call to be
 * restarted -- with its six arguments, sp and pc): "" and -errno when it
 * cannot be read (gone, not ours). */
int diag_front_task_syscall_line(uint32_t pid, uint32_t tid, char *buf, size_t len);
/* The same, parsed: the call's number and its six arguments.  0; -ENOENT
 * when it is in no call ("running"); -errno when it cannot be read. */
int diag_front_task_syscall(uint32_t pid, uint32_t tid, long *nr, uint64_t args[6]);
/* Thread tid of process pid now: *stop (enum argus_live_stop) and its
 * TracerPid (0 none).  0, or -errno when it is gone. */
int diag_front_proc_thread_state(uint32_t pid, uint32_t tid, uint8_t *stop, uint32_t *tracer);
/* Is pid this process, one of its ancestors or one of its descendants
 * (the debugger the caller runs in, its lldb-server)? */
bool diag_front_pid_is_ours(uint32_t pid);

/* ---- live state in the report (diag_front.c) ---------------------------- */
/* The JSON value of a chain entry's "live" key: null when the trace named
 * it and the live system said nothing of it, else {"source":S|null} with
 * "stopped":"signal"|"ptrace" (and "tracer":PID) when it is stopped, and
 * "in_trace":false for a thread only the live system knows. */
void diag_front_fjson_live(FILE *f, const struct argus_culprit *k);
/* Where a live source read, for the report: "/proc/locks",
 * "/proc/PID/fd", ...; NULL for ARGUS_LIVE_NONE. */
const char *diag_front_live_where(unsigned source);
#endif
