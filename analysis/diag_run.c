/* diag_run.c - the diagnosis of one hang, as every front end runs it
 * (diag_run.h): hang -> class -> similar normal node -> backward slice ->
 * culprit -> the culprit's culprit, as a readable report, --json
 * (docs/diagnosis.md) or --dot.
 *
 * Which hang: libargus's one rule (argus_diag__choose_hang): --at TIME,
 * --mark TEXT, the ongoing one, else the longest.  Where the slice has to
 * choose between two or more inter-thread edges, it asks on a TTY (the
 * CLI, DIAG_RUN_TTY), takes the next --pick answer otherwise, or applies
 * the default (the edge that woke the segment) and says which
 * alternatives were not taken.
 *
 * It prints to a FILE: the session (session.c) hands it a memory stream;
 * argus_session.h is how front ends reach it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_event_format.h"
#include "diag_front.h"
#include "diag_run.h"
#include "graph_open.h"
#include "holder_cmd.h"
#include "msg.h"
#include "symbolize.h"
#include "until_end.h"

struct pick_ctx {
	struct graph_open_ctx *c;
	struct diag_front_opts *o;
	uint32_t next;          /* next --pick answer */
	bool tty;
	struct diag_run *run;   /* choices[]: the alternatives not taken */
};

static int pick(void *vctx, const struct argus_graph *g, uint32_t seg,
		const uint32_t *ids, uint32_t n)
{
	struct pick_ctx *p = vctx;
	int k = -1;

	if (p->next < p->o->npicks) {
		k = p->o->picks[p->next++] - 1;
		return k < (int)n ? k : 0;
	}
	if (p->tty) {
		char line[32];

		fprintf(stderr, "segment #%u was woken from %u threads; follow which?\n", seg, n);
		for (uint32_t i = 0; i < n; i++) {
			const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);
			const struct argus_segment *s = argus_graph__segment(g, e->src);
			const struct argus_thread *t = argus_graph__thread(g, s->thread);

			fprintf(stderr, "  %u) %s from #%u %s %u/%u%s\n", i + 1,
				argus_edge_type_str(e->type), e->src, graph_open_comm(g, t), t->pid,
				t->tid, (e->flags & ARGUS_EDGE_F_WOKE) ? " (woke it)" : "");
		}
		fprintf(stderr, "choice [1]: ");
		if (fgets(line, sizeof(line), stdin) && atoi(line) >= 1 && atoi(line) <= (int)n)
			return atoi(line) - 1;
		return 0;
	}
	/* default (the library's): the edge that woke it, else the latest;
	 * note the others (once per segment: deeper levels may walk the same
	 * one again) */
	struct diag_run *r = p->run;
	bool seen = false;

	for (uint32_t i = 0; i < r->nchoices; i++)
		seen |= r->choices[i].seg == seg;
	k = argus_diag__default_pick(g, ids, n);
	for (uint32_t i = 0; i < n && r->nchoices < DIAG_RUN_MAX_CHOICES; i++) {
		const struct argus_edge *e = argus_graph__edge(g, ids[i], ARGUS_EDGE_BUF);
		const struct argus_thread *t =
			argus_graph__thread(g, argus_graph__segment(g, e->src)->thread);
		struct diag_choice *ch = &r->choices[r->nchoices];

		if ((int)i == k || seen)
			continue;
		*ch = (struct diag_choice){ .seg = seg, .edge = ids[i], .pick = i + 1,
					    .pid = t->pid, .tid = t->tid };
		snprintf(ch->text, sizeof(ch->text), "  at #%u not taken: %s from #%u %s %u/%u (--pick %u)",
			 seg, argus_edge_type_str(e->type), e->src, graph_open_comm(g, t), t->pid,
			 t->tid, i + 1);
		r->nchoices++;
	}
	return k;
}

/* A culprit named as the live holder of the other end (argus_culprit.holder);
 * the live note says from where. */
#define HOLDER_NOTE "; its process holds the other end of the previous thread's wait"
/* ... named as the thread handed work just before the wait (argus_culprit.asked) */
#define ASKED_NOTE "; handed work by the previous thread just before its wait (no normal run to compare)"
/* rules child and tracer (live) */
#define CHILD_NOTE "; a child the previous thread waits for (wait4/waitid), still running"
#define TRACER_NOTE "; it ptrace-traces the previous thread and holds it stopped"
/* rule holder-rule (live: holder_cmd.c) */
#define HOLDER_RULE_NOTE "; the application names it as holding what the previous thread waits for"

static const char *rule_note(const struct argus_culprit *k)
{
	return k->holder ? HOLDER_NOTE : k->asked ? ASKED_NOTE :
	       k->rule == ARGUS_RULE_CHILD ? CHILD_NOTE : k->rule == ARGUS_RULE_TRACER ? TRACER_NOTE :
	       k->rule == ARGUS_RULE_HOLDER_RULE ? HOLDER_RULE_NOTE : "";
}

/* What the live system said of entry k, for its line: " (live: WHERE)"
 * for the source that named it, then its stop; "" for the trace's. */
static const char *live_note(const struct argus_culprit *k, char *buf, size_t len)
{
	const char *where = diag_front_live_where(k->live_source);
	size_t n = 0;

	buf[0] = 0;
	if (where)
		n += (size_t)snprintf(buf, len, " (live: %s)", where);
	if (n < len && k->live_stop == ARGUS_LIVE_STOP_SIGNAL)
		n += (size_t)snprintf(buf + n, len - n, "; stopped by a signal now (SIGSTOP, SIGTSTP;"
				      " live: /proc/PID/stat): it answers nobody until continued"
				      " (kill -CONT %u)", k->pid);
	else if (n < len && k->live_stop == ARGUS_LIVE_STOP_PTRACE && k->live_tracer)
		n += (size_t)snprintf(buf + n, len - n, "; in a ptrace stop now, held by pid %u (live:"
				      " /proc/PID/status TracerPid)", k->live_tracer);
	else if (n < len && k->live_stop == ARGUS_LIVE_STOP_PTRACE)
		n += (size_t)snprintf(buf + n, len - n, "; in a ptrace stop now (live: /proc/PID/stat)");
	return buf;
}

/* A thread known only live (argus_culprit.live_only): its command from
 * the trace's task table when it has one, else "?". */
static const char *live_only_comm(struct graph_open_ctx *c, uint32_t tid)
{
	const struct argus_task *tk = argus_trace__task(c->t, tid);
	const char *s = tk ? argus_trace__string(c->t, tk->comm) : NULL;

	return s ? s : "?";
}

/* A syscall as the dump spells it (argus_event_format.h): "sys_N" for a
 * number without a name, built in a compound literal that lives until the
 * end of the caller's block (no static buffer: argusd's hang keeper runs
 * diagnoses in its own threads). */
#define SYS_NAME(nr) argus_event_fmt_sys((nr), (char[24]){ 0 }, 24)


/* A work item's callback by name (the trace's mappings of pid), else its
 * address, else "?" (the symbolizer lives until exit: one CLI run). */
static const char *work_fn(struct graph_open_ctx *c, uint32_t pid, uint64_t fn, char *buf,
			   size_t len)
{
	static struct argus_symbolizer *sym;
	struct argus_sym s;

	if (!fn)
		return "?";
	if (!sym)
		sym = argus_symbolizer__new();
	if (sym && !argus_symbolize_trace_ip(sym, c->t, pid, argus_graph__stats(c->g)->max_ts,
					     fn, &s) && s.func[0])
		snprintf(buf, len, "%s", s.func);
	else
		snprintf(buf, len, "%#" PRIx64, fn);
	return buf;
}

static bool work_rule(const struct argus_culprit *k)
{
	return k->rule == ARGUS_RULE_WORK_ITEM || k->rule == ARGUS_RULE_QUEUED_BEHIND;
}

/* "item 0x.. (pool, callback F) waited N ms behind item 0x.. (callback G),
 * which ran for M ms on worker T" */
static void work_sentence(struct graph_open_ctx *c, const struct argus_culprit *k, char *buf,
			  size_t len)
{
	char f1[256], f2[256];

	if (k->rule == ARGUS_RULE_QUEUED_BEHIND)
		snprintf(buf, len, "item %#" PRIx64 " (%s, callback %s) waited %.0f ms behind item %#"
			 PRIx64 " (callback %s), which ran for %.0f ms%s on worker %s (%u)", k->item,
			 argus_work_kind_str(k->item_kind), work_fn(c, k->pid, k->item_fn, f1, sizeof(f1)),
			 (double)k->item_queued_ns / 1e6, k->ahead,
			 work_fn(c, k->pid, k->ahead_fn, f2, sizeof(f2)), (double)k->ahead_ns / 1e6,
			 k->ahead_done ? "" : " (still at the end of the window)",
			 diag_front_comm(c, k->ahead_tid), k->ahead_tid);
	else
		snprintf(buf, len, "item %#" PRIx64 " (%s, callback %s) ran on worker %s (%u)", k->item,
			 argus_work_kind_str(k->item_kind), work_fn(c, k->pid, k->item_fn, f1, sizeof(f1)),
			 diag_front_comm(c, k->tid), k->tid);
}

static void print_culprit(FILE *f, struct graph_open_ctx *c, const struct argus_culprit *k,
			  const struct diag_run_stack *st, const char *label,
			  const struct holder_cmd *hc)
{
	char ln[512];

	fprintf(f, "%-10s", label);
	if (k->live_only) {
		fprintf(f, "%s %u/%u, not in the trace (the live system knows it)%s%s [rule: %s]\n",
		        msg_tstr(live_only_comm(c, k->tid)), k->pid, k->tid, rule_note(k),
		        live_note(k, ln, sizeof(ln)), argus_culprit_rule_str(k->rule));
		holder_cmd_print_culprit(f, hc, k);
		return;
	}
	diag_front_fprint_thread_line(f, c, k->tid);
	if (k->cycle) {
		fprintf(f, ": already in the chain (a cycle)%s%s\n", rule_note(k),
		        live_note(k, ln, sizeof(ln)));
		holder_cmd_print_culprit(f, hc, k);
		return;
	}
	if (k->stopped_ns)
		fprintf(f, ", stopped by a signal for %.1f ms of the %.1f ms window, then %s",
		        (double)k->stopped_ns / 1e6, (double)(k->to - k->from) / 1e6,
		        argus_hang_kind_str(k->kind));
	else
		fprintf(f, ", %s", argus_hang_kind_str(k->kind));
	if (k->kind == ARGUS_KIND_BLOCKED && k->wait_nr >= 0)
		fprintf(f, " in %s for %.1f ms of the %.1f ms window", SYS_NAME(k->wait_nr),
		        (double)k->wait_ns / 1e6, (double)(k->to - k->from) / 1e6);
	if (k->seg == ARGUS_NONE)
		fprintf(f, " (no segment in the window)");
	else
		fprintf(f, " (segment #%u", k->seg);
	if (k->normal_seg != ARGUS_NONE && !k->asked)
		fprintf(f, "%s%s woke the next thread in #%u", k->seg == ARGUS_NONE ? " (" : "; ",
		        k->late ? "finally, late," : "normally", k->normal_seg);
	fprintf(f, "%s%s%s [rule: %s]\n", k->seg != ARGUS_NONE || (k->normal_seg != ARGUS_NONE && !k->asked) ? ")" : "",
	        rule_note(k), live_note(k, ln, sizeof(ln)), argus_culprit_rule_str(k->rule));
	if (work_rule(k)) {
		char w[1024];

		work_sentence(c, k, w, sizeof(w));
		fprintf(f, "          %s\n", w);
	}
	holder_cmd_print_culprit(f, hc, k);
	for (uint32_t i = 0; i < st->n; i++)
		fprintf(f, "            %s\n", st->f[i].text);
}

/* A blocked culprit's wait stack of 2 frames or fewer, in a trace whose
 * collector ran without --wait-stacks: its frame-pointer walk most likely
 * stopped in a library built without frame pointers (Debian's libc). */
static bool shallow_waits(struct graph_open_ctx *c, const struct argus_diagnosis *d)
{
	if (argus_trace__header(c->t)->flags & ARGUS_FILE_WAIT_STACKS)
		return false;
	for (uint32_t i = 0; i < d->nchain; i++) {
		const struct argus_culprit *k = &d->chain[i];
		const uint64_t *ips;
		uint32_t nr;

		if (k->kind == ARGUS_KIND_BLOCKED && !k->cycle && k->stack &&
		    !argus_trace__stack(c->t, k->stack, &ips, &nr) && nr <= 2)
			return true;
	}
	return false;
}

static void json_culprit(FILE *f, struct graph_open_ctx *c, const struct argus_culprit *k,
			 const struct diag_run_stack *st, const struct holder_cmd *hc)
{
	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"comm\":", k->pid, k->tid);
	diag_front_fjson_str(f, k->live_only ? live_only_comm(c, k->tid) : diag_front_comm_raw(c, k->tid));
	fprintf(f, ",\"process\":");
	diag_front_fjson_str(f, k->live_only ? live_only_comm(c, k->tid) : diag_front_process_raw(c, k->tid));
	fprintf(f, ",\"rule\":\"%s\"", argus_culprit_rule_str(k->rule));
	fprintf(f, ",\"kind\":\"%s\",\"segment\":%u,\"normal_segment\":%d,\"late\":%s,\"cycle\":%s,\"holder\":%s,\"asked\":%s,"
	        "\"window_ns\":[%" PRIu64 ",%" PRIu64 "]",
	        argus_hang_kind_str(k->kind), k->seg,
	        k->normal_seg == ARGUS_NONE ? -1 : (int)k->normal_seg, k->late ? "true" : "false",
	        k->cycle ? "true" : "false", k->holder ? "true" : "false", k->asked ? "true" : "false",
	        k->from, k->to);
	if (k->stopped_ns)
		fprintf(f, ",\"stopped_ns\":%" PRIu64, k->stopped_ns);
	fprintf(f, ",\"live\":");
	diag_front_fjson_live(f, k);
	holder_cmd_json_culprit(f, hc, k);
	if (k->kind == ARGUS_KIND_BLOCKED && k->wait_nr >= 0)
		fprintf(f, ",\"wait\":{\"syscall\":\"%s\",\"ns\":%" PRIu64 "}", SYS_NAME(k->wait_nr),
		        k->wait_ns);
	if (work_rule(k)) {
		char fb[256];

		fprintf(f, ",\"work\":{\"item\":%" PRIu64 ",\"kind\":\"%s\",\"callback\":", k->item,
		        argus_work_kind_str(k->item_kind));
		diag_front_fjson_str(f, work_fn(c, k->pid, k->item_fn, fb, sizeof(fb)));
		fprintf(f, ",\"callback_addr\":%" PRIu64 ",\"queued_ns\":%" PRIu64 ",\"ahead\":",
		        k->item_fn, k->item_queued_ns);
		if (k->rule == ARGUS_RULE_QUEUED_BEHIND) {
			fprintf(f, "{\"item\":%" PRIu64 ",\"kind\":\"%s\",\"callback\":", k->ahead,
			        argus_work_kind_str(k->ahead_kind));
			diag_front_fjson_str(f, work_fn(c, k->pid, k->ahead_fn, fb, sizeof(fb)));
			fprintf(f, ",\"callback_addr\":%" PRIu64 ",\"tid\":%u,\"ran_ns\":%" PRIu64
			        ",\"done\":%s}", k->ahead_fn, k->ahead_tid, k->ahead_ns,
			        k->ahead_done ? "true" : "false");
		} else {
			fprintf(f, "null");
		}
		fprintf(f, "}");
	}
	fprintf(f, ",\"stack\":[");
	for (uint32_t i = 0; i < st->n; i++) {
		fprintf(f, "%s", i ? "," : "");
		diag_front_fjson_str(f, st->f[i].text);
	}
	fprintf(f, "]}");
}

/* "circular wait between A and B, broken by a 1500 ms timeout in A" */
static void verdict(struct graph_open_ctx *c, const struct argus_diagnosis *d, char *buf,
		    size_t len)
{
	size_t n = 0;

	if (d->cycle) {
		n += (size_t)snprintf(buf + n, len - n, "circular wait between %s (%u)",
				      diag_front_comm(c, d->hang.tid), d->hang.tid);
		for (uint32_t i = 0; i < d->nchain && n < len; i++)
			if (!d->chain[i].cycle)
				n += (size_t)snprintf(buf + n, len - n, ", %s (%u)",
						      diag_front_comm(c, d->chain[i].tid),
						      d->chain[i].tid);
		if (d->timeout_ns && n < len)
			snprintf(buf + n, len - n, ", broken by a %.0f ms timeout in %s (%u): "
				 "a deadlock turned into a livelock",
				 (double)d->timeout_ns / 1e6, diag_front_comm(c, d->timeout_tid),
				 d->timeout_tid);
		else if (n < len)
			snprintf(buf + n, len - n, ": a deadlock");
	} else if (d->nchain && d->chain[0].tid == d->hang.tid) {
		snprintf(buf, len, "%s (%u) itself: %s on its own thread, not waiting for anyone%s",
			 diag_front_comm(c, d->hang.tid), d->hang.tid, argus_hang_kind_str(d->kind),
			 d->kind == ARGUS_KIND_YIELD ?
			 " (a loop of yields or short sleeps: it polls a flag another thread"
			 " should set; watch that flag to find who is late)" : "");
	} else if (d->nchain && d->flag_writer) {
		const struct argus_culprit *k = &d->chain[0];

		if (k->tid == d->flag_writer)
			snprintf(buf, len, "%s (%u) in process %s was %s instead of setting the flag"
				 " 0x%" PRIx64 " %s (%u) spun on", diag_front_comm(c, k->tid), k->tid,
				 diag_front_process(c, k->tid), argus_hang_kind_str(k->kind), d->flag_addr,
				 diag_front_comm(c, d->hang.tid), d->hang.tid);
		else
			snprintf(buf, len, "%s (%u) in process %s was %s while %s (%u), which sets the flag"
				 " 0x%" PRIx64 " %s (%u) spun on, waited for it",
				 diag_front_comm(c, k->tid), k->tid, diag_front_process(c, k->tid),
				 argus_hang_kind_str(k->kind), diag_front_comm(c, d->flag_writer),
				 d->flag_writer, d->flag_addr, diag_front_comm(c, d->hang.tid), d->hang.tid);
	} else if (d->nchain && work_rule(&d->chain[0])) {
		const struct argus_culprit *k = &d->chain[0];
		char w[768];

		work_sentence(c, k, w, sizeof(w));
		snprintf(buf, len, "%s (%u) waited for a work item: %s", diag_front_comm(c, d->hang.tid),
			 d->hang.tid, w);
	} else if (d->nchain && d->chain[0].live_only) {
		const struct argus_culprit *k = &d->chain[0];

		snprintf(buf, len, "%s (%u), which the trace did not see, still runs while %s (%u)"
			 " waits for it", msg_tstr(live_only_comm(c, k->tid)), k->tid,
			 diag_front_comm(c, d->hang.tid), d->hang.tid);
	} else if (d->nchain) {
		const struct argus_culprit *k = &d->chain[0];

		snprintf(buf, len, "%s (%u) in process %s was %s while %s (%u) waited for it",
			 diag_front_comm(c, k->tid), k->tid, diag_front_process(c, k->tid),
			 k->live_stop == ARGUS_LIVE_STOP_SIGNAL ? "stopped by a signal" :
			 k->live_stop == ARGUS_LIVE_STOP_PTRACE ? "held in a ptrace stop" :
			 k->stopped_ns ? "stopped by a signal" :
			 argus_hang_kind_str(k->kind), diag_front_comm(c, d->hang.tid), d->hang.tid);
	} else {
		snprintf(buf, len, "no culprit found: no normal run of this wait to compare with,"
			 " and no other thread woke it");
	}
}

static void print_report(FILE *f, struct graph_open_ctx *c, const struct diag_run *r)
{
	const struct argus_diagnosis *d = r->d;
	char v[1024];

	if (r->until_end)
		until_end_fprint(f, c, r->until_end);
	fprintf(f, "hang      ");
	diag_front_fprint_thread_line(f, c, d->hang.tid);
	fprintf(f, "\n          %s for %.1f ms%s; %s",
	        d->hang.flags & ARGUS_HANG_F_LOOP ? "away from its event loop" :
	        "no idle wait; stuck", (double)(d->hang.end - d->hang.start) / 1e6,
	        d->hang.ongoing ? " (still at the end of the trace)" : "",
	        argus_hang_kind_str(d->kind));
	if (d->hang_seg != ARGUS_NONE) {
		const struct argus_segment *s = argus_graph__segment(c->g, d->hang_seg);

		if (d->kind == ARGUS_KIND_BLOCKED) {
			fprintf(f, " in segment #%u:", d->hang_seg);
			graph_open_fprint_wait(f, c->g, s);
		} else {
			fprintf(f, " (segment #%u)", d->hang_seg);
		}
	}
	if (d->kind == ARGUS_KIND_BUSY) {
		/* busy but mostly preempted: the CPU was the scarce thing */
		struct argus_activity a;
		uint64_t win = d->hang.end - d->hang.start;

		if (!argus_diag__activity(c->g, d->hang.tid, d->hang.start, d->hang.end, &a) &&
		    a.oncpu_ns * 10 < win * 8)
			fprintf(f, ", on CPU %.1f ms of it: runnable but preempted the rest (CPU contention)",
			        (double)a.oncpu_ns / 1e6);
	}
	fprintf(f, "\n          (%s; %u hang%s: argus hangs lists them)\n", r->picked[0] ? r->picked :
	        "the hang asked for", r->nhangs, r->nhangs == 1 ? "" : "s");
	if (d->flag_writer && d->flag_late)
		fprintf(f, "flag      0x%" PRIx64 ": no normal run's write is in the trace; %s (%u) wrote it"
		        " late and ended this spin (dataflag edge into segment #%u); followed from there\n",
		        d->flag_addr, diag_front_comm(c, d->flag_writer), d->flag_writer, d->normal_seg);
	else if (d->flag_writer)
		fprintf(f, "flag      0x%" PRIx64 ": in normal runs %s (%u) wrote it and released the spin"
		        " (dataflag edge, segment #%u); followed from there\n", d->flag_addr,
		        diag_front_comm(c, d->flag_writer), d->flag_writer, d->normal_seg);
	if (d->kind == ARGUS_KIND_BLOCKED || d->flag_writer) {
		if (d->flag_writer)
			;
		else if (d->normal_seg != ARGUS_NONE)
			fprintf(f, "normal    segment #%u, the best of %s%u similar segments of the same thread%s\n",
			        d->normal_seg, d->nsimilar >= 64 ? "the first " : "", d->nsimilar,
			        d->normal_relaxed ? " (none waited on this very object: matched on its kind)"
			        : "");
		else if (d->nchain && (d->chain[0].asked || d->chain[0].holder ||
				       d->chain[0].live_source))
			fprintf(f, "normal    none found (%u similar), and nobody has woken it: %s\n",
			        d->nsimilar, d->chain[0].asked ? "the thread it handed work to just before"
			        : d->chain[0].rule == ARGUS_RULE_CHILD ? "the child it waits for (live)"
			        : d->chain[0].rule == ARGUS_RULE_LOCK ? "the holder of the lock it wants (live)"
			        : d->chain[0].rule == ARGUS_RULE_MUTEX ? "the owner of the lock it waits on (live)"
			        : d->chain[0].rule == ARGUS_RULE_HOLDER_RULE ?
			          "the holder the application names (live: the schema's holder rule)"
			        : "the process holding the other end of its wait (live)");
		else
			fprintf(f, "normal    none found (%u similar); sliced from whoever woke it late\n",
			        d->nsimilar);
		fprintf(f, "path      ");
		for (uint32_t i = 0; i < d->npath; i++) {
			const struct argus_segment *s = argus_graph__segment(c->g, d->path[i].seg);
			const struct argus_thread *t = argus_graph__thread(c->g, s->thread);
			const struct argus_edge *e = d->path[i].edge != ARGUS_NONE ?
				argus_graph__edge(c->g, d->path[i].edge, ARGUS_EDGE_BUF) : NULL;

			if (i)
				fprintf(f, i % 3 ? " " : "\n         ");
			if (e)
				fprintf(f, "<-%s- ", argus_edge_type_str(e->type));
			fprintf(f, "#%u %s/%u", d->path[i].seg, graph_open_comm(c->g, t), t->tid);
		}
		fprintf(f, "\n");
		if (r->nchoices)
			fprintf(f, "choices   default taken where two or more threads woke a segment:\n");
		for (uint32_t i = 0; i < r->nchoices; i++)
			fprintf(f, "%s\n", r->choices[i].text);
	}
	for (uint32_t i = 0; i < d->nchain; i++)
		print_culprit(f, c, &d->chain[i], &r->stacks[i], i == 0 ? "culprit" : "then",
			      r->holders);
	verdict(c, d, v, sizeof(v));
	fprintf(f, "verdict   %s\n", v);
	if (d->flag_hint)
		fprintf(f, "next      it spins on a flag whose writes the trace does not have: find the flag"
		        " with\n          `argus flag --pid %u --tid %u`, watch it with `argus watch --pid %u"
		        " --addr ADDR --reader %u`,\n          then save and diagnose the next hang: its"
		        " writer is followed (docs/user-guide.md)\n", d->hang.pid, d->hang.tid, d->hang.pid,
		        d->hang.tid);
	if (shallow_waits(c, d))
		fprintf(f, "note      the waits' stacks above stop early: without --wait-stacks the collector"
		        " follows frame pointers,\n          which Debian's libraries do not keep;"
		        " `argus start --wait-stacks` (or record) shows their callers\n");
	holder_cmd_print_notes(f, r->holders);
	fprintf(f, "inspected %u nodes of %u\n", d->inspected, argus_graph__nsegments(c->g));
}

static void print_json(FILE *f, struct graph_open_ctx *c, const struct diag_run *r)
{
	const struct argus_diagnosis *d = r->d;
	char v[1024];

	fprintf(f, "{\"hang\":");
	diag_front_fjson_hang(f, c, &d->hang, d->kind);
	fprintf(f, ",\"hang_segment\":%d,\"normal\":", d->hang_seg == ARGUS_NONE ? -1 : (int)d->hang_seg);
	if (d->normal_seg != ARGUS_NONE)
		fprintf(f, "{\"segment\":%u,\"candidates\":%u,\"match\":\"%s\"}", d->normal_seg,
		        d->nsimilar, d->normal_relaxed ? "kind" : "object");
	else
		fprintf(f, "null");
	fprintf(f, ",\"path\":[");
	for (uint32_t i = 0; i < d->npath; i++) {
		const struct argus_segment *s = argus_graph__segment(c->g, d->path[i].seg);
		const struct argus_thread *t = argus_graph__thread(c->g, s->thread);
		const struct argus_edge *e = d->path[i].edge != ARGUS_NONE ?
			argus_graph__edge(c->g, d->path[i].edge, ARGUS_EDGE_BUF) : NULL;

		fprintf(f, "%s{\"segment\":%u,\"pid\":%u,\"tid\":%u,\"comm\":", i ? "," : "",
		        d->path[i].seg, t->pid, t->tid);
		diag_front_fjson_str(f, graph_open_comm_raw(c->g, t));
		fprintf(f, ",\"process\":");
		diag_front_fjson_str(f, graph_open_process_raw(c->g, t));
		fprintf(f, ",\"edge\":%s%s%s,\"choices\":%u}", e ? "\"" : "",
		        e ? argus_edge_type_str(e->type) : "null", e ? "\"" : "",
		        d->path[i].choices);
	}
	fprintf(f, "],\"culprit\":");
	if (d->nchain)
		json_culprit(f, c, &d->chain[0], &r->stacks[0], r->holders);
	else
		fprintf(f, "null");
	fprintf(f, ",\"chain\":[");
	for (uint32_t i = 1; i < d->nchain; i++) {
		fprintf(f, "%s", i > 1 ? "," : "");
		json_culprit(f, c, &d->chain[i], &r->stacks[i], r->holders);
	}
	verdict(c, d, v, sizeof(v));
	fprintf(f, "],\"cycle\":%s,\"timeout_ns\":%" PRIu64 ",\"verdict\":", d->cycle ? "true" : "false",
	        d->timeout_ns);
	diag_front_fjson_str(f, v);
	fprintf(f, ",\"flag\":");
	if (d->flag_writer)
		fprintf(f, "{\"addr\":%" PRIu64 ",\"writer_tid\":%u,\"writer_comm\":", d->flag_addr,
		        d->flag_writer);
	if (d->flag_writer) {
		diag_front_fjson_str(f, diag_front_comm_raw(c, d->flag_writer));
		fprintf(f, ",\"normal_segment\":%u,\"edge\":%u,\"ended_hang\":%s}", d->normal_seg,
		        d->flag_edge, d->flag_late ? "true" : "false");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"next_steps\":[");
	if (d->flag_hint)
		fprintf(f, "\"argus flag --pid %u --tid %u\",\"argus watch --pid %u --addr ADDR --reader %u\"",
		        d->hang.pid, d->hang.tid, d->hang.pid, d->hang.tid);
	fprintf(f, "]");
	holder_cmd_json_calls(f, r->holders);
	fprintf(f, ",\"inspected\":%u,\"vertices\":%u,\"picked\":", d->inspected,
	        argus_graph__nsegments(c->g));
	diag_front_fjson_str(f, r->picked);
	if (r->until_end) {
		fprintf(f, ",\"until_end\":");
		until_end_fjson(f, r->until_end);
	}
	fprintf(f, "}\n");
}

void diag_run_verdict(struct graph_open_ctx *c, const struct argus_diagnosis *d, char *buf,
		      size_t len)
{
	verdict(c, d, buf, len);
}

void diag_run_print(FILE *f, struct graph_open_ctx *c, const struct diag_run *run, bool json)
{
	if (json)
		print_json(f, c, run);
	else
		print_report(f, c, run);
}

static void print_dot(FILE *f, struct graph_open_ctx *c, const struct argus_diagnosis *d)
{
	uint32_t v[ARGUS_DIAG_MAX_PATH + ARGUS_DIAG_MAX_CHAIN * 2 + 2], n = 0;

	if (d->hang_seg != ARGUS_NONE)
		v[n++] = d->hang_seg;
	if (d->normal_seg != ARGUS_NONE)
		v[n++] = d->normal_seg;
	for (uint32_t i = 0; i < d->npath; i++)
		v[n++] = d->path[i].seg;
	for (uint32_t i = 0; i < d->nchain; i++)
		if (d->chain[i].seg != ARGUS_NONE)
			v[n++] = d->chain[i].seg;
	argus_graph__write_dot(c->g, v, n, f);
}

/* Collects a stack's frames into a diag_run_stack (strdup'd). */
static void keep_frame(void *ctx, const char *frame, const char *func)
{
	struct diag_run_stack *st = ctx;
	struct diag_frame *nf = realloc(st->f, (st->n + 1) * sizeof(*nf));

	if (!nf)
		return;
	st->f = nf;
	nf[st->n].text = strdup(frame);
	nf[st->n].func = strdup(func);
	if (!nf[st->n].text || !nf[st->n].func) {
		free(nf[st->n].text);
		free(nf[st->n].func);
		return;
	}
	st->n++;
}

void diag_run_free(struct diag_run *run)
{
	if (!run)
		return;
	for (uint32_t i = 0; i < ARGUS_DIAG_MAX_CHAIN; i++) {
		for (uint32_t j = 0; j < run->stacks[i].n; j++) {
			free(run->stacks[i].f[j].text);
			free(run->stacks[i].f[j].func);
		}
		free(run->stacks[i].f);
	}
	free(run->d);
	holder_cmd_free(run->holders);
	memset(run, 0, sizeof(*run));
}

/* The hangs diag_run chooses from: the thread's (or, with none, the
 * process's), listed at the threshold, or -- on a trace of the running
 * system -- down to ARGUS_LIVE_ONGOING_NS, so that a hang a user attached
 * to 1 s in is there to be chosen (argus_diag__choose_hang takes only the
 * ongoing one of those under the threshold). */
static int list_hangs(struct graph_open_ctx *c, const char *cmd, struct diag_front_opts *o,
		      unsigned scope, struct argus_hang **h, uint32_t *n)
{
	uint64_t th = o->threshold_ns;
	int rc;

	if (o->live && !o->have_at && !o->mark && th > ARGUS_LIVE_ONGOING_NS)
		o->threshold_ns = ARGUS_LIVE_ONGOING_NS;
	rc = diag_front_hangs(c, cmd, o, scope, h, n);
	o->threshold_ns = th;
	return rc;
}

/* Thread tid slept from before the trace began until a wake-up at least
 * thr_ns into it: its first segment began with that wake-up.  Whether that
 * wait was a hang, and whose, is in what came before the trace.  Most often
 * the wake-up is the user's debugger: lldb attached to a hang older than
 * the snapshot it took (docs/lldb.md); that one counts however soon.  *asleep_ns: how long it slept in
 * the trace; *woken_by: enum argus_woken_by. */
static bool asleep_before_trace(const struct argus_graph *g, uint32_t tid, uint64_t thr_ns,
				uint64_t *asleep_ns, unsigned *woken_by)
{
	uint32_t thr = argus_graph__thread_by_tid(g, tid);
	uint64_t min_ts = argus_graph__stats(g)->min_ts;
	const struct argus_segment *s;
	const uint32_t *v;

	if (thr == ARGUS_NONE || !argus_graph__thread_segments(g, thr, &v))
		return false;
	s = argus_graph__segment(g, v[0]);
	/* a debugger's wake-up cut the wait short, whatever its age: the
	 * debugger's stop that follows is no end of a hang */
	if (s->start_reason != ARGUS_START_WAKE ||
	    (s->woken_by != ARGUS_WOKEN_DEBUGGER && s->start < min_ts + thr_ns))
		return false;
	*asleep_ns = s->start - min_ts;
	*woken_by = s->woken_by;
	return true;
}

int diag_run_choose(struct graph_open_ctx *c, struct diag_front_opts *o, const struct argus_hang *pre,
		    uint32_t npre, struct diag_run *run, struct argus_hang *chosen)
{
	struct argus_hang *h = NULL;
	struct argus_hang_ask ask = { .sz = sizeof(ask) };
	uint32_t n = 0, best = 0;
	unsigned why = 0;
	int rc = 0;
	const char *cmd = o->cmd ? o->cmd : "diagnose";   /* whose errors */

	memset(run, 0, sizeof(*run));
	run->until_end = o->until_end;
	if (pre) {
		if (npre && !(h = malloc(npre * sizeof(*h))))
			return msg_error(cmd, "out of memory");
		if (npre)
			memcpy(h, pre, npre * sizeof(*h));
		n = npre;
	} else if ((rc = list_hangs(c, cmd, o, ARGUS_HANGS_THREAD, &h, &n))) {
		return rc;
	}
	if (o->at_rel) {
		o->at_ns += argus_graph__stats(c->g)->min_ts;
		o->at_rel = false;
	}
	/* which hang: one rule for every front end (argus_diag__choose_hang) */
	ask.have_at = o->have_at;
	ask.at_ns = o->at_ns;
	ask.mark = o->mark;
	ask.min_ns = o->threshold_ns;
	ask.ongoing_min_ns = o->live ? ARGUS_LIVE_ONGOING_NS : o->threshold_ns;
	rc = argus_diag__choose_hang(c->g, h, n, &ask, &best, &why);
	if (rc == -ENOENT && o->have_at) {
		/* --at always answers: whatever the thread was doing then */
		struct argus_hang_opts ho = diag_front_hang_opts(o, ARGUS_HANGS_THREAD);

		free(h);
		if (!(h = malloc(sizeof(*h)))) {
			rc = msg_error(cmd, "out of memory");
			goto out;
		}
		if (argus_diag__hang_at(c->g, o->tid ? o->tid : o->pid, o->at_ns, &ho, h)) {
			rc = msg_error(cmd, "%s: thread %u did not exist at that time; see argus hangs",
				       o->g.path, o->tid ? o->tid : o->pid);
			goto out;
		}
		n = 1;
		best = 0;
		rc = 0;
		snprintf(run->picked, sizeof(run->picked), "what the thread did at the time asked (--at)%s",
			 h->flags & ARGUS_HANG_F_UNDER ? ", shorter than the threshold: not a hang" : "");
	} else if (rc == -ENOENT && !o->tid && !o->mark) {
		/* no hang of the main thread: the process's other threads */
		free(h);
		h = NULL;
		if ((rc = list_hangs(c, cmd, o, ARGUS_HANGS_PROCESS, &h, &n)))
			goto out;
		rc = argus_diag__choose_hang(c->g, h, n, &ask, &best, &why);
		if (!rc)
			snprintf(run->picked, sizeof(run->picked), "the %s hang of thread %u (the main"
				 " thread has none)", argus_hang_why_str(why), h[best].tid);
	} else if (!rc && why != ARGUS_CHOSE_AT && why != ARGUS_CHOSE_MARK) {
		snprintf(run->picked, sizeof(run->picked), "the %s hang of the %s",
			 argus_hang_why_str(why), o->tid ? "thread" : "main thread");
	}
	uint64_t asleep_ns;
	unsigned woken_by;

	if (rc == -ENOENT && !o->mark && !o->have_at &&
	    asleep_before_trace(c->g, o->tid ? o->tid : o->pid, o->threshold_ns, &asleep_ns,
				&woken_by)) {
		msg_error(cmd, "%s: thread %u slept from before the trace began until %s woke it,"
			  " %.1f s into the trace: its wait is older than the trace, which cannot tell"
			  " whether it is a hang and whose; a longer trace may (argus save --last 10m,"
			  " if the collector's ring holds that much)", o->g.path,
			  o->tid ? o->tid : o->pid,
			  woken_by == ARGUS_WOKEN_DEBUGGER ? "a debugger" : "a wake-up",
			  (double)asleep_ns / 1e9);
		rc = DIAG_RUN_BEFORE_TRACE;
		goto out;
	}
	if (rc) {
		rc = msg_error(cmd, "%s: no hang of %s %u%s (threshold %.0f ms); see argus hangs",
			       o->g.path, o->tid ? "thread" : "process", o->tid ? o->tid : o->pid,
			       o->mark ? " with that mark" : "",
			       (double)o->threshold_ns / 1e6);
		goto out;
	}
	*chosen = h[best];
	run->nhangs = n;
	/* --until-end: the hang taken at the first snapshot, found again
	 * by its middle (--at) in the second */
	if (o->until_end && o->until_end->picked[0])
		snprintf(run->picked, sizeof(run->picked), "%.120s%s", o->until_end->picked,
			 o->until_end->ongoing ? ", waited for (--until-end)" : "");
out:
	free(h);
	return rc;
}

int diag_run(struct graph_open_ctx *c, struct diag_front_opts *o, const struct argus_hang *pre,
	     uint32_t npre, unsigned flags, FILE *out, struct diag_run *run)
{
	struct argus_hang chosen;
	struct pick_ctx pc = { 0 };
	struct argus_diag_opts dopt = { .sz = sizeof(dopt) };
	int rc;
	const char *cmd = o->cmd ? o->cmd : "diagnose";   /* whose errors */

	if ((rc = diag_run_choose(c, o, pre, npre, run, &chosen)))
		return rc;
	pc.c = c;
	pc.o = o;
	pc.tty = flags & DIAG_RUN_TTY;
	pc.run = run;
	dopt.depth = o->depth;
	dopt.pick = pick;
	dopt.pick_ctx = &pc;
	if (o->live && o->live_fn) {     /* a caller's own (a test's mock) alone */
		dopt.live = o->live_fn;
		dopt.live_ctx = o->live_ctx;
	} else if (o->live) {           /* /proc: every source, named per entry
	                                   (it answers what .holders and
	                                   .mutex_owner would) */
		dopt.live = diag_front_live;
	}
	/* the schema's holder rules: commands run as the waiter (holder_cmd.h) */
	if (o->live && !o->live_fn && !o->no_holder_rules &&
	    (run->holders = holder_cmd_new(c, o->g.schema_path))) {
		dopt.wait_holders = holder_cmd_wait_holders;
		dopt.wait_holders_ctx = run->holders;
	}
	/* --until-end with the waiter stopped by a debugger: what would have
	 * woken it, and who did it (until_end.c), is this wait's end */
	if (o->until_end && o->until_end->ongoing && o->until_end->ended &&
	    o->until_end->stopped && o->until_end->by.tid && o->until_end->by.ts &&
	    o->until_end->wait.tid == chosen.tid) {
		dopt.ended_by_tid = o->until_end->by.tid;
		dopt.ended_by_ns = o->until_end->by.ts;
	}
	run->d = calloc(1, sizeof(*run->d));
	if (!run->d)
		return msg_error(cmd, "out of memory");
	if ((rc = argus_diag__diagnose(c->g, &chosen, &dopt, run->d))) {
		rc = msg_error(cmd, "%s: diagnosis failed: %s", o->g.path, strerror(-rc));
		free(run->d);
		run->d = NULL;
		return rc;
	}
	/* each stack symbolized once: the report, the JSON and the caller's
	 * structs show the same frames */
	if (!o->dot || (flags & DIAG_RUN_STACKS))
		for (uint32_t i = 0; i < run->d->nchain; i++) {
			const struct argus_culprit *k = &run->d->chain[i];

			diag_front_stack_funcs(c, k->pid, k->to, k->stack, keep_frame, &run->stacks[i]);
		}
	if (o->json)
		print_json(out, c, run);
	else if (o->dot)
		print_dot(out, c, run->d);
	else
		print_report(out, c, run);
	return 0;
}

