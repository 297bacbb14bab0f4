/* cmd_show.c - `argus show FILE ID`: one segment in full, the building
 * block a diagnosis report points at.
 *
 * Prints the thread and process, the times (seconds from the trace start
 * and absolute CLOCK_MONOTONIC ns), on-CPU time, how the segment began
 * (and the in-edge that woke it) and ended, the wait that ended it
 * (syscall, its key argument, object, duration, timeout), how that wait
 * ended (the next segment of the thread and who woke it), its events one
 * per line (at most SHOW_MAX_EVENTS), the symbolized user stack of the
 * wait, and every in- and out-edge.  --json writes the same as one object.
 * Event types, syscalls, objects and contexts are spelled by the one event
 * formatter (argus_event_format.h), as `argus dump` spells them.
 *
 * The key argument of a wait (argus_segment.wait_arg) means what the BPF
 * side recorded for that syscall: the futex word's address for futex, the
 * timeout for the sleep and poll family, the fd for fd calls.  A futex
 * wait's own timeout is not traced: it shows as unknown, and "resumed"
 * says whether the thread's own timer ended the wait. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_event_format.h"
#include "argus_events.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"
#include "syscall_class.h"

#define SHOW_MAX_EVENTS 200

/* The meaning of wait_arg for the syscall a segment waited in. */
enum wait_arg_kind { ARG_NONE, ARG_UADDR, ARG_TIMEOUT, ARG_FD };

static enum wait_arg_kind wait_arg_kind(const struct argus_segment *s)
{
	uint32_t cls = argus_sys_class(s->wait_nr);

	if (s->end_reason != ARGUS_END_WAIT || s->wait_nr < 0)
		return ARG_NONE;
	if (cls & ARGUS_SC_FUTEX)
		return ARG_UADDR;
	if (cls & ARGUS_SC_TIMEOUT)
		return ARG_TIMEOUT;
	return s->wait_obj ? ARG_FD : ARG_NONE;
}

/* Waits that may have a timeout the trace does not record. */
static bool timeout_untraced(const struct argus_segment *s)
{
	return argus_sys_is(s->wait_nr, ARGUS_SC_TIMEOUT_UNTRACED);
}

/* One event as text, without its time: "sys_exit   read = 12 (unix ...)".
 * last: the segment's last event (a switch there is the one that ended it;
 * any other switch inside a segment is a preemption). */
static void event_str(struct graph_open_ctx *c, const struct argus_gevent *ev, bool last,
		      char *buf, size_t len)
{
	const struct argus_object *ob = NULL;
	char sb[24], tb[128];
	size_t n;

	n = (size_t)snprintf(buf, len, "%-13s", argus_event_fmt_type(ev->type));
	switch (ev->type) {
	case AE_SYS_ENTER:
		n += (size_t)snprintf(buf + n, len - n, " %s(%#" PRIx64 ", ...)",
				      diag_front_sys(ev->nr, sb, sizeof(sb)), (uint64_t)ev->val);
		break;
	case AE_SYS_EXIT: {
		const char *e = ev->val < 0 && ev->val > -4096 ? strerrorname_np((int)-ev->val) : NULL;

		n += (size_t)snprintf(buf + n, len - n, " %s = %" PRId64 "%s%s%s",
				      diag_front_sys(ev->nr, sb, sizeof(sb)), ev->val,
				      e ? " (" : "", e ? e : "", e ? ")" : "");
		ob = argus_graph__object(c->g, ev->obj);
		break;
	}
	case AE_SWITCH:
		if (ev->nr >= 0)
			n += (size_t)snprintf(buf + n, len - n, " out, blocked in %s",
					      diag_front_sys(ev->nr, sb, sizeof(sb)));
		else
			n += (size_t)snprintf(buf + n, len - n, " out%s",
					      last ? "" : " (preempted)");
		ob = argus_graph__object(c->g, ev->obj);
		break;
	case AE_WAKING:
		if (ev->nr == -2)
			n += (size_t)snprintf(buf + n, len - n, " (timer expiry)");
		else if (ev->nr <= -0x100)
			n += (size_t)snprintf(buf + n, len - n, " (APIC %s)",
					      diag_front_apic_name(-ev->nr - 0x100));
		else if (ev->nr >= 0)
			n += (size_t)snprintf(buf + n, len - n, " (vector %d)", ev->nr);
		n += (size_t)snprintf(buf + n, len - n, " target %s/%" PRId64,
				      diag_front_comm(c, (uint32_t)ev->val), ev->val);
		break;
	case AE_FORK:
	case AE_WAKEUP_NEW:
		n += (size_t)snprintf(buf + n, len - n, " child %" PRId64, ev->val);
		break;
	case AE_HWWATCH: {      /* a watched flag's write (argus watch) */
		const struct argus_object *f = argus_graph__object(c->g, ev->obj);

		n += (size_t)snprintf(buf + n, len - n, " flag %#" PRIx64 " = %#" PRIx64,
				      f ? f->obj : 0, (uint64_t)ev->val);
		break;
	}
	case AE_EXIT:
		n += (size_t)snprintf(buf + n, len - n, " code %" PRId64, ev->val);
		break;
	case AE_HRT_START:
	case AE_HRT_EXPIRE:
	case AE_HRT_CANCEL:
		n += (size_t)snprintf(buf + n, len - n, " timer %#" PRIx64, (uint64_t)ev->val);
		break;
	case AE_IRQ_ENTRY:
	case AE_IRQ_EXIT:
	case AE_SOFTIRQ_ENTRY:
	case AE_SOFTIRQ_EXIT:
		n += (size_t)snprintf(buf + n, len - n, " vector %d", ev->nr);
		break;
	case AE_SAMPLE:
		n += (size_t)snprintf(buf + n, len - n, " stack %u", ev->stack);
		break;
	case AE_WORK_ENQUEUE:   /* the interposer's work items: the object is the item */
	case AE_WORK_BEGIN:
	case AE_WORK_END:
		n += (size_t)snprintf(buf + n, len - n, " %s fn %#" PRIx64,
				      argus_work_kind_str((unsigned)ev->nr), (uint64_t)ev->val);
		ob = argus_graph__object(c->g, ev->obj);
		break;
	case AE_WORK_BOUNDARY:
		n += (size_t)snprintf(buf + n, len - n, " tag %#" PRIx64, (uint64_t)ev->val);
		break;
	case AE_MARK: {
		const char *m = argus_trace__string(c->t, ev->str);

		snprintf(tb, sizeof(tb), "%s", msg_tstr(m));
		n += (size_t)snprintf(buf + n, len - n, " \"%s\"", tb);
		break;
	}
	}
	if (ob && ob->kind && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "  [%s]",
				      argus_event_fmt_obj(ob->kind, ob->obj, ob->peer, tb, sizeof(tb)));
	}
	if (ev->ctx != AE_CTX_TASK && n < len)
		snprintf(buf + n, len - n, "  ctx=%s", argus_event_fmt_ctx(ev->ctx));
}

/* The segment's own woken-by edge: how its previous wait ended. */
static void began_str(struct graph_open_ctx *c, uint32_t id, const struct argus_segment *s,
		      char *buf, size_t len)
{
	uint32_t prev = argus_graph__seg_prev(c->g, id);
	struct diag_resume r;
	char eb[256];

	if (s->woken_by == ARGUS_WOKEN_EDGE && prev != ARGUS_NONE) {
		diag_front_resume(c, prev, &r);
		if (r.edge != ARGUS_NONE) {
			diag_front_edge_str(c, r.edge, true, eb, sizeof(eb));
			snprintf(buf, len, "%s, woken by %s", argus_seg_start_str(s->start_reason), eb);
			return;
		}
	}
	snprintf(buf, len, "%s%s%s", argus_seg_start_str(s->start_reason),
		 s->woken_by ? ", woken by " : "", s->woken_by ? argus_woken_by_str(s->woken_by) : "");
}

static void print_frame(void *ctx, const char *f)
{
	(void)ctx;
	printf("    %s\n", f);
}

static void json_frame(void *ctx, const char *f)
{
	bool *first = ctx;

	printf("%s", *first ? "" : ",");
	*first = false;
	diag_front_json_str(f);
}

static void print_text(struct graph_open_ctx *c, uint32_t id)
{
	const struct argus_segment *s = argus_graph__segment(c->g, id);
	const struct argus_thread *t = argus_graph__thread(c->g, s->thread);
	const uint32_t *ids;
	struct diag_resume r;
	char buf[512], sb[24];
	uint32_t n = 0;

	printf("segment #%u: %s %u/%u (process %s)%s\n", id, graph_open_comm(c->g, t), t->pid,
	       t->tid, graph_open_process(c->g, t), t->kernel ? " [kernel thread]" : "");
	printf("  time      %.6f .. %.6f s from the trace start (%.3f ms)\n",
	       diag_front_rel_s(c, s->start), diag_front_rel_s(c, s->end),
	       (double)(s->end - s->start) / 1e6);
	printf("            %" PRIu64 " .. %" PRIu64 " ns CLOCK_MONOTONIC\n", s->start, s->end);
	printf("  on CPU    %.3f ms, %u events, %u CPU samples\n", (double)s->oncpu / 1e6,
	       s->nevents, s->nsamples);
	began_str(c, id, s, buf, sizeof(buf));
	printf("  began     %s\n", buf);
	printf("  ended     %s", argus_seg_end_str(s->end_reason));
	if (s->end_reason == ARGUS_END_WAIT) {
		printf(" in %s", s->wait_nr >= 0 ? diag_front_sys(s->wait_nr, sb, sizeof(sb))
						 : "(not in a syscall)");
		switch (wait_arg_kind(s)) {
		case ARG_UADDR:
			printf(" on futex word %#" PRIx64, s->wait_arg);
			break;
		case ARG_FD:
			printf(" on fd %" PRIu64, s->wait_arg);
			break;
		default:
			break;
		}
		if (s->wait_obj) {
			const struct argus_object *wo = argus_graph__object(c->g, s->wait_obj);

			printf(", %s", argus_event_fmt_obj(wo->kind, wo->obj, wo->peer, buf,
							   sizeof(buf)));
		}
		printf("\n  wait      ");
		if (s->wait_ns)
			printf("%.3f ms", (double)s->wait_ns / 1e6);
		else
			printf("duration unknown");
		if (wait_arg_kind(s) == ARG_TIMEOUT)
			printf(s->wait_arg == UINT64_MAX ? ", no timeout" : ", timeout %.3f ms",
			       (double)s->wait_arg / 1e6);
		else if (timeout_untraced(s))
			printf(", timeout not traced for %s", diag_front_sys(s->wait_nr, sb, sizeof(sb)));
	}
	printf("\n");
	diag_front_resume(c, id, &r);
	diag_front_resume_str(c, id, &r, buf, sizeof(buf));
	printf("  resumed   %s\n", buf);
	if (s->flags & ARGUS_SEG_F_MULTI)
		printf("  note      serves several processes (batching not split)\n");

	printf("events (%u):\n", s->nevents);
	for (uint32_t e = s->first_event; e != ARGUS_NONE;
	     e = argus_graph__seg_next_event(c->g, id, e)) {
		const struct argus_gevent *ev = argus_graph__event(c->g, e, ARGUS_GEVENT_BUF);

		if (n++ == SHOW_MAX_EVENTS) {
			printf("  ... %u more\n", s->nevents - SHOW_MAX_EVENTS);
			break;
		}
		event_str(c, ev, argus_graph__seg_next_event(c->g, id, e) == ARGUS_NONE, buf,
			  sizeof(buf));
		printf("  %.6f %+11.3f us  %s\n", diag_front_rel_s(c, ev->ts),
		       (double)(ev->ts - s->start) / 1e3, buf);
	}
	if (s->wait_stack) {
		printf("wait stack:\n");
		diag_front_stack(c, t->pid, s->end, s->wait_stack, print_frame, NULL);
	}
	n = argus_graph__in_edges(c->g, id, &ids);
	printf("in-edges (%u):\n", n);
	for (uint32_t i = 0; i < n; i++) {
		diag_front_edge_str(c, ids[i], true, buf, sizeof(buf));
		printf("  <- %s\n", buf);
	}
	n = argus_graph__out_edges(c->g, id, &ids);
	printf("out-edges (%u):\n", n);
	for (uint32_t i = 0; i < n; i++) {
		diag_front_edge_str(c, ids[i], false, buf, sizeof(buf));
		printf("  -> %s\n", buf);
	}
}

static void json_u64_or_null(const char *key, bool known, uint64_t v)
{
	if (known)
		printf(",\"%s\":%" PRIu64, key, v);
	else
		printf(",\"%s\":null", key);
}

static void print_json(struct graph_open_ctx *c, uint32_t id)
{
	const struct argus_segment *s = argus_graph__segment(c->g, id);
	const struct argus_thread *t = argus_graph__thread(c->g, s->thread);
	const uint32_t *ids;
	struct diag_resume r;
	char buf[512], sb[24];
	uint32_t n = 0, prev;
	bool first = true;

	printf("{\"segment\":%u,\"tid\":%u,\"pid\":%u,\"comm\":", id, t->tid, t->pid);
	diag_front_json_str(graph_open_comm_raw(c->g, t));
	printf(",\"process\":");
	diag_front_json_str(graph_open_process_raw(c->g, t));
	printf(",\"kernel\":%s,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	       ",\"start_s\":%.9f,\"end_s\":%.9f,\"duration_ns\":%" PRIu64 ",\"oncpu_ns\":%" PRIu64
	       ",\"nevents\":%u,\"nsamples\":%u,\"start_reason\":\"%s\",\"end_reason\":\"%s\","
	       "\"woken_by\":\"%s\",\"multi\":%s",
	       t->kernel ? "true" : "false", s->start, s->end, diag_front_rel_s(c, s->start),
	       diag_front_rel_s(c, s->end), s->end - s->start, s->oncpu, s->nevents, s->nsamples,
	       argus_seg_start_str(s->start_reason), argus_seg_end_str(s->end_reason),
	       argus_woken_by_str(s->woken_by), (s->flags & ARGUS_SEG_F_MULTI) ? "true" : "false");
	/* the in-edge that woke this segment (how its previous wait ended) */
	printf(",\"woken_by_edge\":");
	prev = argus_graph__seg_prev(c->g, id);
	if (s->woken_by == ARGUS_WOKEN_EDGE && prev != ARGUS_NONE) {
		diag_front_resume(c, prev, &r);
		diag_front_json_edge(c, r.edge);
	} else {
		printf("null");
	}
	printf(",\"wait\":");
	if (s->end_reason == ARGUS_END_WAIT) {
		enum wait_arg_kind k = wait_arg_kind(s);
		const struct argus_object *wo = argus_graph__object(c->g, s->wait_obj);

		printf("{\"syscall\":");
		if (s->wait_nr >= 0)
			diag_front_json_str(diag_front_sys(s->wait_nr, sb, sizeof(sb)));
		else
			printf("null");
		printf(",\"obj_kind\":");
		if (wo)
			diag_front_json_str(argus_obj_kind_str(wo->kind));
		else
			printf("null");
		printf(",\"obj\":%" PRIu64 ",\"peer\":%" PRIu64, wo ? wo->obj : 0,
		       wo ? wo->peer : 0);
		json_u64_or_null("futex_uaddr", k == ARG_UADDR, s->wait_arg);
		json_u64_or_null("fd", k == ARG_FD, s->wait_arg);
		json_u64_or_null("timeout_ns", k == ARG_TIMEOUT && s->wait_arg != UINT64_MAX,
				 s->wait_arg);
		json_u64_or_null("wait_ns", s->wait_ns != 0, s->wait_ns);
		printf("}");
	} else {
		printf("null");
	}
	printf(",\"resumed\":");
	diag_front_resume(c, id, &r);
	diag_front_json_resume(c, id, &r);

	printf(",\"events\":[");
	for (uint32_t e = s->first_event; e != ARGUS_NONE && n < SHOW_MAX_EVENTS;
	     e = argus_graph__seg_next_event(c->g, id, e), n++) {
		const struct argus_gevent *ev = argus_graph__event(c->g, e, ARGUS_GEVENT_BUF);
		const struct argus_object *ob = NULL;

		printf("%s\n{\"ts\":%" PRIu64 ",\"offset_ns\":%" PRIu64 ",\"type\":", n ? "," : "",
		       ev->ts, ev->ts - s->start);
		diag_front_json_str(argus_event_fmt_type(ev->type));
		printf(",\"ctx\":\"%s\",\"val\":%" PRId64, argus_event_fmt_ctx(ev->ctx), ev->val);
		if (ev->type == AE_SYS_ENTER || ev->type == AE_SYS_EXIT ||
		    (ev->type == AE_SWITCH && ev->nr >= 0)) {
			printf(",\"syscall\":");
			diag_front_json_str(diag_front_sys(ev->nr, sb, sizeof(sb)));
		}
		if (ev->type == AE_SYS_EXIT)
			printf(",\"ret\":%" PRId64, ev->val);
		if (ev->type == AE_SYS_EXIT || ev->type == AE_SWITCH)
			ob = argus_graph__object(c->g, ev->obj);
		if (ob && ob->kind) {
			printf(",\"obj\":");
			argus_event_fmt_json_obj(stdout, ob->kind, ob->obj, ob->peer);
		}
		event_str(c, ev, argus_graph__seg_next_event(c->g, id, e) == ARGUS_NONE, buf,
			  sizeof(buf));
		printf(",\"text\":");
		diag_front_json_str(buf);
		printf("}");
	}
	printf("],\"events_more\":%u,\"stack\":[", s->nevents > n ? s->nevents - n : 0);
	diag_front_stack(c, t->pid, s->end, s->wait_stack, json_frame, &first);
	printf("],\"in_edges\":[");
	n = argus_graph__in_edges(c->g, id, &ids);
	for (uint32_t i = 0; i < n; i++) {
		printf("%s\n", i ? "," : "");
		diag_front_json_edge(c, ids[i]);
	}
	printf("],\"out_edges\":[");
	n = argus_graph__out_edges(c->g, id, &ids);
	for (uint32_t i = 0; i < n; i++) {
		printf("%s\n", i ? "," : "");
		diag_front_json_edge(c, ids[i]);
	}
	printf("]}\n");
}

static const struct argus_usage usage = {
	.cmd = "show",
	.synopsis = "argus show FILE ID [--json] [--schema FILE] [--no-split]\n",
	.about =
	"  ID is a segment id as argus diagnose, hangs and graph print it (#261 or 261).\n"
	"  Thread and process, times (s from the trace start and CLOCK_MONOTONIC ns),\n"
	"  on-CPU time, how it began and ended, the wait that ended it and who ended\n"
	"  that wait, its events (at most 200), the wait's user stack, its edges.\n"
	"  Give --schema/--no-split as to the command that printed the id.\n",
};

int cmd_show(int argc, char **argv)
{
	static const char *const names[] = { "ID" };
	struct seg_cli_opts o;
	struct graph_open_ctx c;
	int rc;

	if ((rc = diag_front_parse_segs(&usage, NULL, argc, argv, &o, 1, names)))
		return argus_opts_exit(rc);
	if ((rc = diag_front_open_segs(&c, "show", &o)))
		return rc;
	if (o.json)
		print_json(&c, o.ids[0]);
	else
		print_text(&c, o.ids[0]);
	if (fflush(stdout) || ferror(stdout))
		rc = msg_error("show", "writing the output failed");
	graph_open_close(&c);
	return rc;
}
