/* diag_front.c - see diag_front.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_event_format.h"
#include "argus_events.h"
#include "msg.h"
#include "diag_front.h"
#include "diag_run.h"
#include "mark_who.h"
#include "symbolize.h"
#include "until_end.h"

void diag_front_resolve_live(const struct graph_open_ctx *c, struct diag_front_opts *o)
{
	if (!o->live_flag)
		o->live = argus_trace__of_running_system(c->t, DIAG_LIVE_MAX_AGE_NS);
}

struct argus_hang_opts diag_front_hang_opts(const struct diag_front_opts *o, unsigned scope)
{
	struct argus_hang_opts ho = { .sz = sizeof(ho), .pid = o->pid, .tid = o->tid,
				      .threshold_ns = o->threshold_ns, .scope = (uint8_t)scope,
				      .idle_rule = o->idle_rule, .deliberate = o->all };
	return ho;
}

int diag_front_hangs(struct graph_open_ctx *c, const char *cmd, struct diag_front_opts *o,
		   unsigned scope, struct argus_hang **h, uint32_t *n)
{
	struct argus_hang_opts ho = diag_front_hang_opts(o, scope);
	int rc;

	if (o->live_rule)
		return hangs_replay(c, cmd, o, scope, h, n);
	rc = argus_diag__hangs(c->g, &ho, h, n);

	/* a snapshot of this running system, of a process alive now but not
	 * in it: it slept through all of it (lldb attached to a hang older
	 * than the snapshot, and the user looked around for a while) */
	if (rc == -ENOENT && o->live && !o->tid && diag_front_pid_alive(o->pid)) {
		msg_error(cmd, "%s: process %u is alive but did nothing in the trace: it slept"
			  " through all of it, so its wait is older than the trace, which cannot"
			  " tell whether it is a hang and whose; a longer trace may (argus save"
			  " --last 10m, if the collector's ring holds that much)", o->g.path, o->pid);
		return DIAG_RUN_BEFORE_TRACE;
	}
	if (rc == -ENOENT && scope == ARGUS_HANGS_PROCESS)
		return msg_error(cmd, "%s: no process %u in the trace (see argus dump --stats,"
				 " argus graph --pid)", o->g.path, o->pid);
	if (rc == -ENOENT)
		return msg_error(cmd, "%s: no thread %u of process %u in the trace (see argus dump --stats,"
				 " argus graph --pid)", o->g.path, o->tid ? o->tid : o->pid, o->pid);
	if (rc)
		return msg_error(cmd, "%s: %s", o->g.path, strerror(-rc));
	return 0;
}

static const struct argus_thread *thread_of(struct graph_open_ctx *c, uint32_t tid)
{
	return argus_graph__thread(c->g, argus_graph__thread_by_tid(c->g, tid));
}

const char *diag_front_comm(struct graph_open_ctx *c, uint32_t tid)
{
	return graph_open_comm(c->g, thread_of(c, tid));
}

const char *diag_front_process(struct graph_open_ctx *c, uint32_t tid)
{
	return graph_open_process(c->g, thread_of(c, tid));
}

const char *diag_front_comm_raw(struct graph_open_ctx *c, uint32_t tid)
{
	return graph_open_comm_raw(c->g, thread_of(c, tid));
}

const char *diag_front_process_raw(struct graph_open_ctx *c, uint32_t tid)
{
	return graph_open_process_raw(c->g, thread_of(c, tid));
}

static double rel_s(struct graph_open_ctx *c, uint64_t ts)
{
	uint64_t t0 = argus_graph__stats(c->g)->min_ts;

	return ts >= t0 ? (double)(ts - t0) / 1e9 : 0.0;
}

void diag_front_fprint_thread_line(FILE *f, struct graph_open_ctx *c, uint32_t tid)
{
	const struct argus_thread *t = thread_of(c, tid);

	fprintf(f, "%s %u/%u (process %s)", diag_front_comm(c, tid), t ? t->pid : 0, tid,
		diag_front_process(c, tid));
}

void diag_front_print_thread_line(struct graph_open_ctx *c, uint32_t tid)
{
	diag_front_fprint_thread_line(stdout, c, tid);
}

void diag_front_print_hang(FILE *f, struct graph_open_ctx *c, const struct argus_hang *h,
			   uint32_t i, bool who)
{
	fprintf(f, "  #%-3u %10.6f .. %10.6f s  %9.1f ms  %-7s", i, rel_s(c, h->start),
		rel_s(c, h->end), (double)(h->end - h->start) / 1e6,
		argus_hang_kind_str(h->kind));
	if (who) {
		fprintf(f, "  ");
		diag_front_fprint_thread_line(f, c, h->tid);
	}
	fprintf(f, "  segment #%u%s%s%s", h->seg,
		h->ongoing ? "  (still hung at the end of the trace)" : "",
		h->flags & ARGUS_HANG_F_UNSETTLED ? "  (its request's reply not seen yet)" : "",
		h->flags & ARGUS_HANG_F_LOOP ? "" : "  (no idle wait)");
	if (h->annotated) {
		const char *m = argus_trace__string(c->t, h->mark);
		struct cli_mark_who who;

		fprintf(f, "  mark \"%s\"", msg_tstr(m));
		/* who marked: the desktop user's marks come from the mark group */
		if (!cli_mark_who(c->t, m, h->start, h->end, &who)) {
			fprintf(f, " by pid %u", who.pid);
			if (who.has_uid)
				fprintf(f, " uid %u", who.uid);
		}
	}
	fprintf(f, "\n");
}

void diag_front_print_hangs(FILE *f, struct graph_open_ctx *c, const struct diag_front_opts *o,
			    unsigned scope, const struct argus_hang *h, uint32_t n)
{
	if (o->json) {
		fprintf(f, "{\"hangs\":[");
		for (uint32_t i = 0; i < n; i++) {
			fprintf(f, "%s", i ? "," : "");
			diag_front_fjson_hang(f, c, &h[i], h[i].kind);
		}
		fprintf(f, "]}\n");
		return;
	}
	if (scope == ARGUS_HANGS_THREAD)
		diag_front_fprint_thread_line(f, c, o->tid);
	else if (scope == ARGUS_HANGS_PROCESS)
		fprintf(f, "process %u (%s)", o->pid, diag_front_process(c, o->pid));
	else
		fprintf(f, "every process");
	fprintf(f, ": %u hang%s of %.0f ms or more%s%s\n", n, n == 1 ? "" : "s",
		(double)o->threshold_ns / 1e6, o->live_rule ? " by argusd's live rule" : ", or annotated",
		scope == ARGUS_HANGS_THREAD ? "" : ", longest first");
	for (uint32_t i = 0; i < n; i++)
		diag_front_print_hang(f, c, &h[i], i + 1, scope != ARGUS_HANGS_THREAD);
	if (scope == ARGUS_HANGS_MACHINE && !o->all && !o->live_rule)
		fprintf(f, "(waits for a child, lone sleeps and threads seen only asleep are left out:"
			" --all shows them)\n");
}

void diag_front_fjson_str(FILE *f, const char *s)
{
	argus_json_write_str(f, s ? s : "");
}

void diag_front_json_str(const char *s)
{
	diag_front_fjson_str(stdout, s);
}

void diag_front_fjson_hang(FILE *f, struct graph_open_ctx *c, const struct argus_hang *h,
			 unsigned kind)
{
	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"comm\":", h->pid, h->tid);
	diag_front_fjson_str(f, diag_front_comm_raw(c, h->tid));
	fprintf(f, ",\"process\":");
	diag_front_fjson_str(f, diag_front_process_raw(c, h->tid));
	fprintf(f, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
		",\"ongoing\":%s,\"annotated\":%s,\"segment\":%u",
		h->start, h->end, h->end - h->start, h->ongoing ? "true" : "false",
		h->annotated ? "true" : "false", h->seg);
	fprintf(f, ",\"idle_loop\":%s,\"deliberate\":%s,\"dormant\":%s,\"under_threshold\":%s",
		h->flags & ARGUS_HANG_F_LOOP ? "true" : "false",
		h->flags & ARGUS_HANG_F_DELIBERATE ? "true" : "false",
		h->flags & ARGUS_HANG_F_DORMANT ? "true" : "false",
		h->flags & ARGUS_HANG_F_UNDER ? "true" : "false");
	if (h->flags & ARGUS_HANG_F_UNSETTLED)
		fprintf(f, ",\"unsettled\":true");
	if (h->annotated) {
		const char *m = argus_trace__string(c->t, h->mark);
		struct cli_mark_who who;

		fprintf(f, ",\"mark\":");
		diag_front_fjson_str(f, m);
		if (!cli_mark_who(c->t, m, h->start, h->end, &who)) {
			fprintf(f, ",\"mark_pid\":%u,\"mark_tid\":%u", who.pid, who.tid);
			if (who.has_uid)
				fprintf(f, ",\"mark_uid\":%u", who.uid);
		}
	}
	if (kind)
		fprintf(f, ",\"kind\":\"%s\"", argus_hang_kind_str(kind));
	fprintf(f, "}");
}

void diag_front_json_hang(struct graph_open_ctx *c, const struct argus_hang *h, unsigned kind)
{
	diag_front_fjson_hang(stdout, c, h, kind);
}

static diag_sym_fn host_sym;
static void *host_sym_ctx;

void diag_front_set_symbolizer(diag_sym_fn fn, void *ctx)
{
	host_sym = fn;
	host_sym_ctx = ctx;
}

void diag_front_stack_funcs(struct graph_open_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
			  diag_func_frame_fn fn, void *ctx)
{
	static struct argus_symbolizer *sym;
	const uint64_t *ips;
	uint32_t nr;

	if (!stack || argus_trace__stack(c->t, stack, &ips, &nr))
		return;
	if (!sym)
		sym = argus_symbolizer__new();   /* lives until exit: one CLI run */
	for (uint32_t i = 0; i < nr; i++) {
		struct argus_sym s;
		char buf[512], func[256] = "";
		uint64_t ip = i ? ips[i] - 1 : ips[i];  /* return addresses */

		if (host_sym && !host_sym(host_sym_ctx, pid, ip, buf, sizeof(buf), func, sizeof(func))) {
			buf[sizeof(buf) - 1] = 0;
			func[sizeof(func) - 1] = 0;
		} else if (!sym || argus_symbolize_trace_ip(sym, c->t, pid, ts, ip, &s) == -EINVAL) {
			snprintf(buf, sizeof(buf), "%#" PRIx64, ips[i]);
			func[0] = 0;
		} else {
			argus_sym__format(&s, ip, buf, sizeof(buf));
			snprintf(func, sizeof(func), "%s", s.func);
		}
		/* symbol, source and file names come from another user's ELF:
		 * escaped for the terminal; the bare name is for comparing */
		fn(ctx, msg_tstr(buf), func);
	}
}

struct frame_only {
	diag_frame_fn fn;
	void *ctx;
};

static void frame_only(void *ctx, const char *frame, const char *func)
{
	struct frame_only *f = ctx;

	(void)func;
	f->fn(f->ctx, frame);
}

void diag_front_stack(struct graph_open_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
		    diag_frame_fn fn, void *ctx)
{
	struct frame_only f = { fn, ctx };

	diag_front_stack_funcs(c, pid, ts, stack, frame_only, &f);
}

/* ---- the segment commands (show, similar, slice, diff) ---------------- */

int diag_front_open_segs(struct graph_open_ctx *c, const char *cmd, const struct seg_cli_opts *o)
{
	int rc = graph_open_trace(c, cmd, &o->g);
	uint32_t n;

	if (rc)
		return rc;
	n = argus_graph__nsegments(c->g);
	for (uint32_t i = 0; i < o->nids; i++) {
		if (o->ids[i] < n)
			continue;
		fprintf(stderr, "argus %s: %s: no segment #%u: the graph has %u segments (#0..#%u)%s\n",
			cmd, o->g.path, o->ids[i], n, n ? n - 1 : 0,
			o->g.schema_path || o->g.no_split ? "" :
			"; ids printed with --schema or --no-split need the same flag here");
		graph_open_close(c);
		return 2;
	}
	return 0;
}

double diag_front_rel_s(struct graph_open_ctx *c, uint64_t ts)
{
	return rel_s(c, ts);
}

const char *diag_front_sys(int nr, char *buf, size_t len)
{
	return argus_event_fmt_sys(nr, buf, len);      /* one spelling */
}

const char *diag_front_apic_name(int vector)
{
	switch (vector) {
	case AE_APIC_LOCAL_TIMER: return "local timer";
	case AE_APIC_RESCHEDULE: return "reschedule IPI";
	case AE_APIC_CALL_FUNCTION: return "call-function IPI";
	case AE_APIC_CALL_FUNCTION_SINGLE: return "call-function-single IPI";
	case AE_APIC_IRQ_WORK: return "irq_work";
	default: return "system vector";
	}
}

void diag_front_seg_str(struct graph_open_ctx *c, uint32_t seg, char *buf, size_t len)
{
	const struct argus_segment *s = argus_graph__segment(c->g, seg);
	const struct argus_thread *t = s ? argus_graph__thread(c->g, s->thread) : NULL;

	snprintf(buf, len, "#%u %s %u/%u", seg, graph_open_comm(c->g, t), t ? t->pid : 0,
		 t ? t->tid : 0);
}

void diag_front_edge_str(struct graph_open_ctx *c, uint32_t edge, bool in, char *buf, size_t len)
{
	const struct argus_edge *e = argus_graph__edge(c->g, edge, ARGUS_EDGE_BUF);
	char other[128];
	size_t n;

	if (!e) {
		snprintf(buf, len, "?");
		return;
	}
	diag_front_seg_str(c, in ? e->src : e->dst, other, sizeof(other));
	n = (size_t)snprintf(buf, len, "%s %s %s at %.6f s", argus_edge_type_str(e->type),
			     in ? "from" : "to", other, rel_s(c, in ? e->src_ts : e->dst_ts));
	if (n < len && e->type == ARGUS_EDGE_MESSAGE)
		n += (size_t)snprintf(buf + n, len - n, ", %s %" PRIu32 " B",
				      argus_obj_kind_str(e->obj_kind), e->bytes);
	if (n < len && (e->flags & ARGUS_EDGE_F_WOKE))
		n += (size_t)snprintf(buf + n, len - n, " (woke it)");
	if (n < len && (e->flags & ARGUS_EDGE_F_SPLIT))
		snprintf(buf + n, len - n, " (split)");
}

void diag_front_json_seg_ref(struct graph_open_ctx *c, uint32_t seg)
{
	const struct argus_segment *s = argus_graph__segment(c->g, seg);
	const struct argus_thread *t = s ? argus_graph__thread(c->g, s->thread) : NULL;

	printf("{\"segment\":%u,\"tid\":%u,\"pid\":%u,\"comm\":", seg, t ? t->tid : 0,
	       t ? t->pid : 0);
	diag_front_json_str(graph_open_comm_raw(c->g, t));
	printf(",\"process\":");
	diag_front_json_str(graph_open_process_raw(c->g, t));
	printf("}");
}

void diag_front_json_edge(struct graph_open_ctx *c, uint32_t edge)
{
	const struct argus_edge *e = argus_graph__edge(c->g, edge, ARGUS_EDGE_BUF);

	if (!e) {
		printf("null");
		return;
	}
	printf("{\"id\":%u,\"type\":\"%s\",\"src\":", edge, argus_edge_type_str(e->type));
	diag_front_json_seg_ref(c, e->src);
	printf(",\"dst\":");
	diag_front_json_seg_ref(c, e->dst);
	printf(",\"src_ts\":%" PRIu64 ",\"dst_ts\":%" PRIu64 ",\"woke\":%s,\"split\":%s,"
	       "\"obj_kind\":", e->src_ts, e->dst_ts,
	       (e->flags & ARGUS_EDGE_F_WOKE) ? "true" : "false",
	       (e->flags & ARGUS_EDGE_F_SPLIT) ? "true" : "false");
	if (e->obj_kind)
		diag_front_json_str(argus_obj_kind_str(e->obj_kind));
	else
		printf("null");
	printf(",\"bytes\":%" PRIu32 "}", e->bytes);
}

void diag_front_resume(struct graph_open_ctx *c, uint32_t seg, struct diag_resume *r)
{
	const struct argus_segment *s = argus_graph__segment(c->g, seg);
	const uint32_t *ids;
	uint32_t n;

	r->next = argus_graph__seg_next(c->g, seg);
	r->edge = ARGUS_NONE;
	r->own_timer = false;
	r->woke = false;
	if (!s || r->next == ARGUS_NONE)
		return;
	n = argus_graph__in_edges(c->g, r->next, &ids);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(c->g, ids[i], ARGUS_EDGE_BUF);

		const struct argus_edge *b = r->edge != ARGUS_NONE ?
			argus_graph__edge(c->g, r->edge, ARGUS_EDGE_BUF) : NULL;
		bool woke = e->flags & ARGUS_EDGE_F_WOKE;

		if (!argus_edge_type_strong(e->type) || (r->woke && !woke))
			continue;
		/* a wake-up over any other edge; among several, the latest */
		if (!b || (woke && !r->woke) || e->src_ts >= b->src_ts) {
			r->edge = ids[i];
			r->woke = woke;
		}
	}
	if (r->edge != ARGUS_NONE) {
		const struct argus_edge *e = argus_graph__edge(c->g, r->edge, ARGUS_EDGE_BUF);

		r->own_timer = e->type == ARGUS_EDGE_TIMER &&
			       argus_graph__segment(c->g, e->src)->thread == s->thread;
	}
}

void diag_front_resume_str(struct graph_open_ctx *c, uint32_t seg, const struct diag_resume *r,
			 char *buf, size_t len)
{
	const struct argus_segment *s = argus_graph__segment(c->g, seg);
	const struct argus_segment *nx = r->next != ARGUS_NONE ?
		argus_graph__segment(c->g, r->next) : NULL;
	const struct argus_edge *e = r->edge != ARGUS_NONE ?
		argus_graph__edge(c->g, r->edge, ARGUS_EDGE_BUF) : NULL;
	char who[128];

	if (!s) {
		snprintf(buf, len, "?");
	} else if (!nx) {
		snprintf(buf, len, "no next segment: %s",
			 s->end_reason == ARGUS_END_EXIT ? "the thread exited" :
			 s->end_reason == ARGUS_END_TRACE || s->end_reason == ARGUS_END_WAIT ?
			 "the trace ended first" : "the thread's last segment");
	} else if (nx->start_reason != ARGUS_START_WAKE) {
		snprintf(buf, len, "#%u follows without a wait (%s boundary)", r->next,
			 argus_seg_start_str(nx->start_reason));
	} else if (e && r->own_timer) {
		snprintf(buf, len, "#%u woken by its own timer (armed in #%u) after %.3f ms",
			 r->next, e->src, (double)(nx->start - s->end) / 1e6);
	} else if (e) {
		diag_front_seg_str(c, e->src, who, sizeof(who));
		snprintf(buf, len, "#%u woken by %s via %s after %.3f ms%s", r->next, who,
			 argus_edge_type_str(e->type), (double)(nx->start - s->end) / 1e6,
			 r->woke ? "" : " (an edge in, no wake-up seen on it)");
	} else {
		snprintf(buf, len, "#%u woken by %s (an attribution, not an edge) after %.3f ms",
			 r->next, argus_woken_by_str(nx->woken_by),
			 (double)(nx->start - s->end) / 1e6);
	}
}

void diag_front_json_resume(struct graph_open_ctx *c, uint32_t seg, const struct diag_resume *r)
{
	const struct argus_segment *nx = r->next != ARGUS_NONE ?
		argus_graph__segment(c->g, r->next) : NULL;
	char text[256];

	if (!nx) {
		printf("{\"segment\":null,\"woken_by\":null,\"own_timer\":false,\"woke\":false,"
		       "\"edge\":null,"
		       "\"by\":null,\"text\":");
	} else {
		printf("{\"segment\":%u,\"woken_by\":\"%s\",\"own_timer\":%s,\"woke\":%s,"
		       "\"edge\":", r->next, argus_woken_by_str(nx->woken_by),
		       r->own_timer ? "true" : "false", r->woke ? "true" : "false");
		diag_front_json_edge(c, r->edge);
		printf(",\"by\":");
		if (r->edge != ARGUS_NONE)
			diag_front_json_seg_ref(c, argus_graph__edge(c->g, r->edge, ARGUS_EDGE_BUF)->src);
		else
			printf("null");
		printf(",\"text\":");
	}
	diag_front_resume_str(c, seg, r, text, sizeof(text));
	diag_front_json_str(text);
	printf("}");
}

/* ---- live state in the report ----------------------------------------- */

const char *diag_front_live_where(unsigned source)
{
	switch (source) {
	case ARGUS_LIVE_LOCKS: return "/proc/locks";
	case ARGUS_LIVE_FD_PEER: return "/proc/PID/fd";
	case ARGUS_LIVE_TCP_PEER: return "/proc/net/tcp, /proc/PID/fd";
	case ARGUS_LIVE_TCP_LISTENER: return "/proc/net/tcp, /proc/PID/fd: the listening socket";
	case ARGUS_LIVE_CHILDREN: return "/proc/PID/task/TID/children";
	case ARGUS_LIVE_MUTEX_OWNER: return "/proc/PID/mem, glibc's mutex owner";
	case ARGUS_LIVE_PI_OWNER: return "/proc/PID/mem, the PI futex word";
	case ARGUS_LIVE_TRACER: return "/proc/PID/status TracerPid";
	case ARGUS_LIVE_HOLDER_RULE: return "the schema's holder rule";
	case ARGUS_LIVE_UNIX_LISTENER: return "sock_diag, /proc/PID/fd: the listening socket";
	}
	return NULL;
}

void diag_front_fjson_live(FILE *f, const struct argus_culprit *k)
{
	const char *src = argus_live_source_str(k->live_source);
	const char *stop = argus_live_stop_str(k->live_stop);

	if (!src && !stop) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"source\":");
	if (src)
		diag_front_fjson_str(f, src);
	else
		fprintf(f, "null");
	if (stop) {
		fprintf(f, ",\"stopped\":\"%s\"", stop);
		if (k->live_tracer)
			fprintf(f, ",\"tracer\":%u", k->live_tracer);
	}
	if (k->live_only)
		fprintf(f, ",\"in_trace\":false");
	fprintf(f, "}");
}
