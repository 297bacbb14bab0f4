/* until_end.c - see until_end.h. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "ctl_client.h"
#include "msg.h"
#include "collector.h"
#include "diag_run.h"
#include "progress.h"
#include "syscall_class.h"
#include "trace_format.h"
#include "until_end.h"
#include "wake_watch.h"

#define TICK_NS 20000000ull             /* the loop's period */
#define CONFIRM_MIN_NS 250000000ull     /* snapshots to confirm an end: at most 4/s */
#define CONFIRM_AFTER_CHANGE_NS 2000000000ull /* keep confirming that long after a change */
#define CONFIRM_EVERY_NS 10000000000ull /* and every 10 s anyway (a wait that
                                           returned and was entered again with
                                           the same arguments in between two
                                           looks at /proc) */
#define SETTLE_NS 50000000ull           /* after a stopped waiter's event: the
                                           waker's events reach the ring */
#define FIRST_LAST_NS (120ull * 1000000000ull)  /* the first snapshot: 2 min */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* ---- the host's tick, and Ctrl-C ------------------------------------- */

static until_end_tick_fn host_tick;
static void *host_tick_ctx;

void until_end_set_tick(until_end_tick_fn fn, void *ctx)
{
	host_tick = fn;
	host_tick_ctx = ctx;
}

static volatile sig_atomic_t interrupted;
static struct sigaction old_int;

/* Ctrl-C stops the wait, and only that: the signal is not handed on to
 * the host's handler (lldb's would mark the running command interrupted,
 * and lldb then drops the command's output: "... Interrupted."; Python's
 * would raise KeyboardInterrupt after the command). */
static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void catch_sigint(void)
{
	struct sigaction sa = { 0 };

	interrupted = 0;
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
}

static void release_sigint(void)
{
	sigaction(SIGINT, &old_int, NULL);
}

/* ---- parsing, the temp dir, snapshots ---------------------------------- */

int until_end_parse(const char *cmd, const char *arg, uint64_t *ns)
{
	const char *v;
	char *end;
	double s;

	if (strncmp(arg, "--until-end", 11) || (arg[11] && arg[11] != '='))
		return 0;
	if (!arg[11]) {
		*ns = (uint64_t)UNTIL_END_DEFAULT_S * 1000000000ull;
		return 1;
	}
	v = arg + 12;
	errno = 0;
	s = strtod(v, &end);
	if (!*v || *end || errno || !(s > 0) || s > UNTIL_END_MAX_S) {
		msg_usage_error(cmd, "--until-end=%s: not a number of seconds (above 0, at most %d;"
				" --until-end alone waits %d s)", v, UNTIL_END_MAX_S, UNTIL_END_DEFAULT_S);
		return -1;
	}
	*ns = (uint64_t)(s * 1e9);
	return 1;
}

int until_end_begin(const char *cmd, struct until_end *ue, uint64_t timeout_ns)
{
	const char *tmp = getenv("TMPDIR");

	memset(ue, 0, sizeof(*ue));
	ue->timeout_ns = timeout_ns;
	ue->wait.wait_nr = -1;
	snprintf(ue->dir, sizeof(ue->dir), "%s/argus-until-end.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(ue->dir)) {       /* 0700 */
		int e = errno;

		snprintf(ue->first, sizeof(ue->first), "%s", ue->dir);
		ue->dir[0] = 0;
		return msg_error(cmd, "cannot make a private temp dir like %s: %s", ue->first, strerror(e));
	}
	snprintf(ue->first, sizeof(ue->first), "%s/first.argus", ue->dir);
	snprintf(ue->check, sizeof(ue->check), "%s/check.argus", ue->dir);
	snprintf(ue->final, sizeof(ue->final), "%s/final.argus", ue->dir);
	return 0;
}

void until_end_cleanup(struct until_end *ue)
{
	if (ue->have_kept)
		graph_open_close(&ue->kept);
	ue->have_kept = false;
	if (!ue->dir[0])
		return;
	unlink(ue->first);
	unlink(ue->check);
	unlink(ue->final);
	rmdir(ue->dir);
	ue->dir[0] = 0;
}

int until_end_snapshot(const char *cmd, struct until_end *ue, const char *out)
{
	int rc = ctl_ring_save(cmd, out, 0, FIRST_LAST_NS, &ue->from_ts, false);

	/* the whole ring (it began less than FIRST_LAST_NS after boot):
	 * from 1, and every later snapshot from there too */
	if (!rc && !ue->from_ts)
		ue->from_ts = 1;
	return rc;
}

/* ---- what the thread is in: the first snapshot ------------------------- */

/* The wait thread tid is in at the end of the trace: its last segment, or
 * the one before the debugger's stop(s) that end it (graph_debugger.c),
 * and where that wait began (an attach breaks a wait that the kernel then
 * restarts: the same call, blocked again).  ARGUS_NONE when the thread
 * is not in a wait (running, or stopped while it ran). */
/* A lock retry loop asleep between two tries (apt on the dpkg lock,
 * SQLite's busy handler): what ends the hang is the lock's release (the
 * next try succeeds), not the sleep's timer, which only brings the next
 * refusal.  When the last lock request the thread made since `from` was
 * refused, watch that lock instead of the sleep. */
static void retry_lock(const struct argus_graph *g, struct until_end *ue, uint64_t from)
{
	struct argus_lock_op *ops = NULL;
	uint32_t n = 0;

	if (argus_diag__lock_ops(g, ue->wait.tid, from, ue->wait.wait_start, &ops, &n))
		return;
	for (uint32_t i = n; i-- > 0;) {
		if (!ops[i].file || ops[i].op == ARGUS_LOCK_UNLOCK)
			continue;
		if (ops[i].ret < 0) {
			/* one-off: the lock's kind names the call that asked for it */
			ue->wait.wait_nr = ops[i].kind == ARGUS_LOCK_FLOCK ? SYS_flock : SYS_fcntl;
			ue->wait.obj_kind = AE_OBJ_FILE;
			ue->wait.obj = ops[i].file;
			ue->wait.peer = 0;
		}
		break;
	}
	free(ops);
}

static uint32_t current_wait(const struct argus_graph *g, uint32_t tid, uint64_t *began)
{
	uint32_t thr = argus_graph__thread_by_tid(g, tid), s, p;
	const struct argus_thread *t = argus_graph__thread(g, thr);
	const struct argus_segment *sg;
	const uint32_t *ids;

	if (!t || !argus_graph__thread_segments(g, thr, &ids) || !t->nseg)
		return ARGUS_NONE;
	s = ids[t->nseg - 1];
	while (s != ARGUS_NONE && (argus_graph__segment(g, s)->flags & ARGUS_SEG_F_STOPPED))
		s = argus_graph__seg_prev(g, s);
	if (s == ARGUS_NONE)
		return ARGUS_NONE;
	sg = argus_graph__segment(g, s);
	if (sg->end_reason != ARGUS_END_WAIT || sg->wait_nr < 0)
		return ARGUS_NONE;
	*began = sg->end;
	/* back through stop(s) to the call's first wait */
	for (p = argus_graph__seg_prev(g, s); p != ARGUS_NONE;) {
		const struct argus_segment *ps = argus_graph__segment(g, p);

		if (!(ps->flags & ARGUS_SEG_F_STOPPED))
			break;
		while (p != ARGUS_NONE && (argus_graph__segment(g, p)->flags & ARGUS_SEG_F_STOPPED))
			p = argus_graph__seg_prev(g, p);
		if (p == ARGUS_NONE)
			break;
		ps = argus_graph__segment(g, p);
		if (ps->end_reason != ARGUS_END_WAIT || ps->wait_nr != sg->wait_nr)
			break;
		*began = ps->end;
		p = argus_graph__seg_prev(g, p);
	}
	return s;
}

/* ---- the live thread --------------------------------------------------- */

/* The thread's state letter (/proc/PID/task/TID/stat), 0 when gone. */
static char thread_state(uint32_t pid, uint32_t tid)
{
	char st;

	return diag_front_task_state(pid, tid, &st) ? 0 : st;
}

/* A fresh snapshot: is the hang (the one containing ue->at_ns) still
 * ongoing?  1 ended, 0 not, or the exit code (> 1 is not used: 1 is an
 * error too) as -rc after an error line. */
static int confirm(const char *cmd, struct diag_front_opts *o, struct until_end *ue)
{
	struct argus_error err = { 0 };
	struct argus_graph_opts go = { .sz = sizeof(go) };
	struct argus_hang_opts ho = diag_front_hang_opts(o, ARGUS_HANGS_THREAD);
	struct argus_schema *schema = NULL;
	struct argus_trace *t;
	struct argus_graph *g;
	struct argus_hang h;
	int rc;

	if ((rc = until_end_snapshot(cmd, ue, ue->check)))
		return -rc;
	ue->checks++;
	if (!(t = argus_trace__open(ue->check, &err)))
		return -msg_error(cmd, "%s: %s", ue->check, err.msg);
	if (o->g.schema_path && !(schema = argus_schema__load(o->g.schema_path, &err))) {
		argus_trace__close(t);
		return -msg_error(cmd, "%s: %s", o->g.schema_path, err.msg);
	}
	go.schema = schema;
	go.no_split = o->g.no_split;
	if (!(g = argus_graph__build(t, &go, &err))) {
		argus_schema__free(schema);
		argus_trace__close(t);
		return -msg_error(cmd, "%s: %s", ue->check, err.msg);
	}
	/* every hang from the chosen one's length: an ongoing one was taken
	 * from ARGUS_LIVE_ONGOING_NS */
	ho.tid = ue->wait.tid;
	ho.pid = ue->wait.pid;
	if (!ho.threshold_ns || ho.threshold_ns > ARGUS_LIVE_ONGOING_NS)
		ho.threshold_ns = ARGUS_LIVE_ONGOING_NS;
	rc = argus_diag__hang_at(g, ue->wait.tid, ue->at_ns, &ho, &h);
	rc = !rc && !h.ongoing;
	if (rc && !ue->have_kept) {
		/* this snapshot has the end: it is the second one, graph built */
		ue->kept = (struct graph_open_ctx){ .t = t, .schema = schema, .g = g };
		ue->have_kept = true;
		return rc;
	}
	argus_graph__free(g);
	argus_schema__free(schema);
	argus_trace__close(t);
	return rc;
}

bool until_end_take_graph(struct until_end *ue, struct graph_open_ctx *c)
{
	if (!ue->have_kept)
		return false;
	*c = ue->kept;
	memset(&ue->kept, 0, sizeof(ue->kept));
	ue->have_kept = false;
	return true;
}

struct ticker {
	struct progress p;
	char what[96];
};

static int tick(struct ticker *tk, uint64_t waited, uint64_t timeout)
{
	if (host_tick)
		return host_tick(host_tick_ctx, waited, timeout, tk->what);
	progress_cb(&tk->p, waited / 1000000000ull, timeout / 1000000000ull);
	return 0;
}

int until_end_wait(const char *cmd, struct graph_open_ctx *c, struct diag_front_opts *o,
		   struct until_end *ue)
{
	struct diag_run scratch;
	struct argus_hang chosen;
	struct wake_watch *ww = NULL;
	bool ww_tried = false, was_stopped = false;
	struct ticker tk;
	char line[256], seen[256];
	uint64_t t0, last_confirm, change_until = 0, gap = CONFIRM_MIN_NS;
	uint32_t ws;
	int rc;

	if (!ue->from_ts)
		ue->from_ts = argus_graph__stats(c->g)->min_ts;
	rc = diag_run_choose(c, o, NULL, 0, &scratch, &chosen);
	snprintf(ue->picked, sizeof(ue->picked), "%s", scratch.picked);
	diag_run_free(&scratch);
	if (rc)
		return rc;
	ue->wait.pid = chosen.pid;
	ue->wait.tid = chosen.tid;
	ue->at_ns = chosen.start + (chosen.end - chosen.start) / 2;
	ue->ongoing = chosen.ongoing;
	if (!ue->ongoing)
		return 0;
	ws = current_wait(c->g, ue->wait.tid, &ue->wait.wait_start);
	if (ws != ARGUS_NONE) {
		const struct argus_segment *s = argus_graph__segment(c->g, ws);
		const struct argus_object *ob = argus_graph__object(c->g, s->wait_obj);

		ue->wait.wait_nr = s->wait_nr;
		ue->wait.wait_arg = s->wait_arg;
		if (ob) {
			ue->wait.obj_kind = ob->kind;
			ue->wait.obj = ob->obj;
			ue->wait.peer = ob->peer;
		}
		if (argus_sys_is_sleep(s->wait_nr))
			retry_lock(c->g, ue, s->start < chosen.start ? s->start : chosen.start);
	}

	/* wait */
	snprintf(tk.what, sizeof(tk.what), "waiting for the hang of %u/%u to end", ue->wait.pid,
		 ue->wait.tid);
	progress_begin(&tk.p, tk.what, "s");
	catch_sigint();
	t0 = last_confirm = argus_now_ns();
	/* /proc/PID/task/TID/syscall changes when the wait returns */
	diag_front_task_syscall_line(ue->wait.pid, ue->wait.tid, seen, sizeof(seen));
	for (;;) {
		uint64_t now = argus_now_ns();
		char st;

		if (tick(&tk, now - t0, ue->timeout_ns) || interrupted) {
			ue->interrupted = true;
			break;
		}
		if (now - t0 >= ue->timeout_ns)
			break;
		st = thread_state(ue->wait.pid, ue->wait.tid);
		if (!st || st == 'Z' || st == 'X') {
			ue->ended = ue->exited = true;
			snprintf(ue->event, sizeof(ue->event), "the thread exited: its wait is over");
			break;
		}
		was_stopped = st == 't' || st == 'T';
		if (was_stopped) {
			if (!ww_tried && ue->wait.wait_nr >= 0) {
				char why[sizeof(ue->watched) - 16];

				if (!(ww = wake_watch__new(&ue->wait, why, sizeof(why))))
					snprintf(ue->watched, sizeof(ue->watched), "nothing (%s)", why);
				else
					snprintf(ue->watched, sizeof(ue->watched), "%s", why);
				if (!wake_watch__lock_holders(ww, &ue->lock_holder, 1))
					ue->lock_holder = 0;
			} else if (!ww_tried) {
				snprintf(ue->watched, sizeof(ue->watched),
					 "nothing (it was stopped while it ran, not in a wait)");
			}
			ww_tried = true;
			if (ww && wake_watch__check(ww, ue->event, sizeof(ue->event)) == 1) {
				ue->ended = true;
				break;
			}
		} else {
			bool changed;

			diag_front_task_syscall_line(ue->wait.pid, ue->wait.tid, line, sizeof(line));
			changed = strcmp(line, seen) != 0;
			if (changed)
				change_until = now + CONFIRM_AFTER_CHANGE_NS;
			if (((changed || now < change_until) && now - last_confirm >= gap) ||
			    now - last_confirm >= CONFIRM_EVERY_NS) {
				uint64_t c0 = argus_now_ns();

				rc = confirm(cmd, o, ue);
				last_confirm = argus_now_ns();
				/* a busy ring makes snapshots dear: no more than
				 * a third of the time on them */
				gap = 2 * (last_confirm - c0);
				if (gap < CONFIRM_MIN_NS)
					gap = CONFIRM_MIN_NS;
				snprintf(seen, sizeof(seen), "%s", line);
				if (rc < 0) {
					rc = -rc;
					goto out;
				}
				if (rc == 1) {
					ue->ended = true;
					snprintf(ue->event, sizeof(ue->event), "the hang is over on a new snapshot");
					break;
				}
			}
		}
		sleep_ns(TICK_NS);
	}
	rc = 0;
	ue->stopped = was_stopped && !ue->exited;
	ue->seen_ns = argus_now_ns();
	ue->waited_ns = ue->seen_ns - t0;
	if (ue->ended && ue->stopped)
		sleep_ns(SETTLE_NS);
out:
	release_sigint();
	progress_end(&tk.p);
	if (host_tick)
		host_tick(host_tick_ctx, UINT64_MAX, ue->timeout_ns, tk.what);   /* done: erase */
	wake_watch__free(ww);
	return rc;
}

/* ---- after: who ended it, on the second snapshot ----------------------- */

static const char *comm_of(struct graph_open_ctx *c, uint32_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	if (argus_graph__thread_by_tid(c->g, tid) != ARGUS_NONE)
		return diag_front_comm_raw(c, tid);
	snprintf(path, sizeof(path), "/proc/%u/comm", tid);
	buf[0] = 0;
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	return buf[0] ? buf : "?";
}

static void set_by(struct graph_open_ctx *c, struct until_end *ue, uint32_t pid, uint32_t tid,
		   uint64_t ts, const char *how)
{
	char b[32];

	ue->by.pid = pid;
	ue->by.tid = tid;
	ue->by.ts = ts;
	snprintf(ue->by.how, sizeof(ue->by.how), "%s", how);
	snprintf(ue->by.comm, sizeof(ue->by.comm), "%s", comm_of(c, tid, b, sizeof(b)));
}

/* The first write to the waiter's pipe or socket after its wait began,
 * by another thread: what made it readable. */
static void by_writer(struct graph_open_ctx *c, struct until_end *ue)
{
	const struct argus_graph *g = c->g;
	uint64_t best = UINT64_MAX;
	uint32_t best_thr = ARGUS_NONE;
	int64_t bytes = 0;
	char how[96];

	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *t = argus_graph__thread(g, i);

		if (t->tid == ue->wait.tid)
			continue;
		for (uint32_t e = t->first_event; e != ARGUS_NONE; e = argus_graph__thread_next_event(g, i, e)) {
			const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);
			const struct argus_object *ob;
			bool match;

			if (ev->type != AE_SYS_EXIT || ev->ts < ue->wait.wait_start ||
			    ev->ts >= best || ev->val <= 0 || !argus_sys_is_send(ev->nr) || !(ob = argus_graph__object(g, ev->obj)))
				continue;
			switch (ue->wait.obj_kind) {
			case AE_OBJ_PIPE:
				match = ob->kind == AE_OBJ_PIPE && ob->obj == ue->wait.obj;
				break;
			case AE_OBJ_UNIX:
				match = ob->kind == AE_OBJ_UNIX &&
					((ue->wait.peer && ob->obj == ue->wait.peer) ||
					 ob->peer == ue->wait.obj);
				break;
			case AE_OBJ_TCP:
			case AE_OBJ_UDP:
				match = ob->kind == ue->wait.obj_kind && ob->obj == ue->wait.peer &&
					ob->peer == ue->wait.obj;
				break;
			default:
				match = false;
			}
			if (match) {
				best = ev->ts;
				best_thr = i;
				bytes = ev->val;
			}
		}
	}
	if (best_thr == ARGUS_NONE)
		return;
	snprintf(how, sizeof(how), "wrote %" PRId64 " B to it (the first write after the wait began)",
		 bytes);
	set_by(c, ue, argus_graph__thread(g, best_thr)->pid, argus_graph__thread(g, best_thr)->tid,
	       best, how);
}

/* The holder of the lock the waiter wants, from the trace's lock records
 * (who acquired a conflicting lock and had not released it when the wait
 * began), else the holders /proc/locks listed when the watch began. */
static void by_lock_holder(struct graph_open_ctx *c, struct until_end *ue)
{
	struct argus_lock_op *ops = NULL, h;
	uint32_t n = 0;

	if (!argus_diag__lock_ops(c->g, ue->wait.tid,
				  ue->wait.wait_start > 1000000 ? ue->wait.wait_start - 1000000 : 0,
				  argus_graph__stats(c->g)->max_ts, &ops, &n)) {
		for (uint32_t i = n; i-- > 0;) {
			if (ops[i].file != ue->wait.obj || ops[i].ret >= 0 ||
			    ops[i].op == ARGUS_LOCK_UNLOCK)
				continue;
			if (!argus_diag__lock_blocker(c->g, &ops[i], &h) && h.tid != ue->wait.tid) {
				set_by(c, ue, h.pid, h.tid, h.ts, "held the lock it waits for, taken before its wait"
				       " (the trace's lock records)");
				free(ops);
				return;
			}
			break;
		}
	}
	free(ops);
	if (ue->lock_holder)
		set_by(c, ue, ue->lock_holder, ue->lock_holder, 0,
		       "held the lock it waits for when argus began watching (/proc/locks)");
}

/* Another thread of the process that called futex() on the word after the
 * wait began without sleeping on it: a FUTEX_WAKE, most likely (the
 * graph keeps a call's first argument only). */
static void by_futex_waker(struct graph_open_ctx *c, struct until_end *ue)
{
	const struct argus_graph *g = c->g;

	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *t = argus_graph__thread(g, i);

		if (t->tid == ue->wait.tid || t->pid != ue->wait.pid)
			continue;
		for (uint32_t e = t->first_event; e != ARGUS_NONE; e = argus_graph__thread_next_event(g, i, e)) {
			const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);
			uint32_t s;
			const struct argus_segment *sg;

			if (ev->type != AE_SYS_ENTER || ev->nr != SYS_futex ||
			    ev->ts < ue->wait.wait_start || (uint64_t)ev->val != ue->wait.wait_arg)
				continue;
			s = argus_graph__segment_at(g, t->tid, ev->ts);
			sg = s != ARGUS_NONE ? argus_graph__segment(g, s) : NULL;
			if (sg && sg->end_reason == ARGUS_END_WAIT && sg->wait_nr == SYS_futex &&
			    sg->wait_arg == ue->wait.wait_arg)
				continue;       /* it waits on the word too */
			if (!ue->by.tid || ev->ts < ue->by.ts)
				set_by(c, ue, t->pid, t->tid, ev->ts,
				       "called futex() on the word after the wait began, without waiting on it"
				       " (a wake, most likely)");
		}
	}
}

/* A thread that runs: the edge that woke it at the end of the wait. */
static void by_waker_edge(struct graph_open_ctx *c, struct until_end *ue)
{
	uint32_t s = argus_graph__segment_at(c->g, ue->wait.tid, ue->wait.wait_start);
	struct diag_resume r;
	char how[96];

	if (s == ARGUS_NONE)
		return;
	diag_front_resume(c, s, &r);
	if (r.edge == ARGUS_NONE)
		return;
	const struct argus_edge *e = argus_graph__edge(c->g, r.edge, ARGUS_EDGE_BUF);
	const struct argus_thread *t = argus_graph__thread(c->g, argus_graph__segment(c->g, e->src)->thread);

	if (!t || t->tid == ue->wait.tid)
		return;
	snprintf(how, sizeof(how), "woke it at the end of its wait (edge: %s)",
		 argus_edge_type_str(e->type));
	set_by(c, ue, t->pid, t->tid, e->src_ts, how);
}

void until_end_annotate(struct graph_open_ctx *c, struct diag_front_opts *o, struct until_end *ue)
{
	struct argus_hang_opts ho = diag_front_hang_opts(o, ARGUS_HANGS_THREAD);
	struct argus_hang h;

	if (ue->ongoing && ue->ended && !ue->stopped) {
		ho.tid = ue->wait.tid;
		if (!ho.threshold_ns || ho.threshold_ns > ARGUS_LIVE_ONGOING_NS)
			ho.threshold_ns = ARGUS_LIVE_ONGOING_NS;
		if (!argus_diag__hang_at(c->g, ue->wait.tid, ue->at_ns, &ho, &h) && !h.ongoing) {
			ue->end_ns = h.end;
			snprintf(ue->event, sizeof(ue->event), "%s%s",
				 h.flags & ARGUS_HANG_F_LOOP ? "the thread came back to its event loop" :
				 h.kind == ARGUS_KIND_BLOCKED ? "its wait returned" :
				 "the thread's stretch of work ended", ue->exited ? ", then it exited" : "");
		}
		if (ue->wait.wait_nr >= 0)
			by_waker_edge(c, ue);
	} else if (ue->ongoing && ue->ended && ue->stopped) {
		if (argus_sys_is_file_lock(ue->wait.wait_nr))
			by_lock_holder(c, ue);
		else if (ue->wait.wait_nr == SYS_futex)  /* one-off: its key is the word */
			by_futex_waker(c, ue);
		else if (ue->wait.obj_kind)
			by_writer(c, ue);
		ue->end_ns = ue->by.ts && ue->by.ts > ue->wait.wait_start ? ue->by.ts : ue->seen_ns;
	}
	o->tid = ue->wait.tid;
	o->have_at = true;
	o->at_ns = ue->at_ns;
	o->at_rel = false;
	o->until_end = ue;
}

/* ---- printing ----------------------------------------------------------- */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

void until_end_fprint(FILE *f, struct graph_open_ctx *c, const struct until_end *ue)
{
	if (!ue->ongoing) {
		fprintf(f, "until-end the hang had already ended at the first snapshot: nothing to wait for;"
			" diagnosed as it is\n");
		return;
	}
	if (ue->ended && ue->stopped) {
		fprintf(f, "until-end the thread is stopped (a debugger holds it), so its wait cannot return;"
			" what would have woken it came %.1f s after argus began waiting: %s\n",
			secs(ue->waited_ns), msg_tstr(ue->event));
		fprintf(f, "          watched: %s; the report below is of the wait up to now (%.6f s)\n",
			msg_tstr(ue->watched), ue->end_ns ? diag_front_rel_s(c, ue->end_ns) : 0.0);
	} else if (ue->ended) {
		fprintf(f, "until-end the hang ended %.1f s after argus began waiting (%s", secs(ue->waited_ns),
			msg_tstr(ue->event));
		if (ue->end_ns)
			fprintf(f, "; it ended at %.6f s", diag_front_rel_s(c, ue->end_ns));
		fprintf(f, "): diagnosed with its real wake-up\n");
	} else {
		fprintf(f, "until-end %s after %.1f s and the hang is still going: diagnosed with what is known"
			" so far\n", ue->interrupted ? "interrupted (Ctrl-C)" : "the timeout passed",
			secs(ue->waited_ns));
		if (ue->stopped)
			fprintf(f, "          the thread is stopped (a debugger); watched: %s\n",
				msg_tstr(ue->watched));
	}
	if (ue->by.tid)
		fprintf(f, "          by %s %u/%u: %s\n", msg_tstr(ue->by.comm), ue->by.pid, ue->by.tid,
			msg_tstr(ue->by.how));
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s && *s)
		diag_front_fjson_str(f, s);
	else
		fprintf(f, "null");
}

void until_end_fjson(FILE *f, const struct until_end *ue)
{
	fprintf(f, "{\"timeout_ns\":%" PRIu64 ",\"ongoing\":%s,\"ended\":%s,\"interrupted\":%s,"
		"\"stopped\":%s,\"exited\":%s,\"waited_ns\":%" PRIu64 ",\"end_ns\":",
		ue->timeout_ns, ue->ongoing ? "true" : "false", ue->ongoing ? ue->ended ? "true" : "false"
		: "true", ue->interrupted ? "true" : "false", ue->stopped ? "true" : "false",
		ue->exited ? "true" : "false", ue->waited_ns);
	if (ue->end_ns)
		fprintf(f, "%" PRIu64, ue->end_ns);
	else
		fprintf(f, "null");
	fprintf(f, ",\"event\":");
	json_str_or_null(f, ue->event);
	fprintf(f, ",\"watched\":");
	json_str_or_null(f, ue->watched);
	fprintf(f, ",\"checks\":%u,\"by\":", ue->checks);
	if (ue->by.tid) {
		fprintf(f, "{\"pid\":%u,\"tid\":%u,\"comm\":", ue->by.pid, ue->by.tid);
		diag_front_fjson_str(f, ue->by.comm);
		fprintf(f, ",\"how\":");
		diag_front_fjson_str(f, ue->by.how);
		fprintf(f, ",\"ts_ns\":");
		if (ue->by.ts)
			fprintf(f, "%" PRIu64, ue->by.ts);
		else
			fprintf(f, "null");
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, "}");
}
