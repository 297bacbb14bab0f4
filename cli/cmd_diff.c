/* cmd_diff.c - `argus diff FILE ID_NORMAL ID_HANG`: two segments side by
 * side, typically a normal run of a wait and the same wait in the hang
 * (argus diagnose prints both ids; argus similar lists the candidates).
 *
 * Compared: duration, on-CPU time, the wait that ended each (syscall,
 * duration), how each began (reason, and the in-edge that woke it),
 * event counts by type, the distinct syscalls only one of them made, the
 * return values that differ for the syscalls both made (read returned 12
 * in one, -11 EAGAIN in the other), and, the point of a diff, who woke
 * each one's successor: "normally woken by ime_worker via futex; in the
 * hang, woken by its own timer".
 *
 * Return values are compared as sets of distinct values per syscall (at
 * most DIFF_MAX_RETS each, then "..."), so a loop that read three times
 * matches one that read once with the same result. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "cli.h"
#include "diag_front.h"
#include "graph_open.h"

#define DIFF_MAX_SYS 128   /* distinct syscalls kept per segment */
#define DIFF_MAX_RETS 4    /* distinct return values kept per syscall */

struct sys_rets {
	int16_t nr;
	uint8_t nrets;
	bool more;               /* more distinct values than DIFF_MAX_RETS */
	int64_t rets[DIFF_MAX_RETS]; /* sorted */
};

/* What one segment did, summed up. */
struct side {
	uint32_t seg;
	const struct argus_segment *s;
	const struct argus_thread *t;
	uint32_t counts[AE_TYPE_MAX];
	struct sys_rets sys[DIFF_MAX_SYS]; /* sorted by nr */
	uint32_t nsys;
	bool sys_more;           /* more than DIFF_MAX_SYS distinct syscalls */
	struct diag_resume began;  /* how its previous wait ended (r.next = seg) */
	bool have_began;
	struct diag_resume resumed; /* how its own wait ended */
};

static struct sys_rets *sys_slot(struct side *d, int16_t nr)
{
	uint32_t i = 0;

	while (i < d->nsys && d->sys[i].nr < nr)
		i++;
	if (i < d->nsys && d->sys[i].nr == nr)
		return &d->sys[i];
	if (d->nsys == DIFF_MAX_SYS) {
		d->sys_more = true;
		return NULL;
	}
	memmove(&d->sys[i + 1], &d->sys[i], (d->nsys - i) * sizeof(d->sys[0]));
	memset(&d->sys[i], 0, sizeof(d->sys[i]));
	d->sys[i].nr = nr;
	d->nsys++;
	return &d->sys[i];
}

static void add_ret(struct sys_rets *r, int64_t v)
{
	uint8_t i = 0;

	while (i < r->nrets && r->rets[i] < v)
		i++;
	if (i < r->nrets && r->rets[i] == v)
		return;
	if (r->nrets == DIFF_MAX_RETS) {
		r->more = true;
		return;
	}
	memmove(&r->rets[i + 1], &r->rets[i], (size_t)(r->nrets - i) * sizeof(r->rets[0]));
	r->rets[i] = v;
	r->nrets++;
}

static void summarize(struct graph_open_ctx *c, uint32_t seg, struct side *d)
{
	uint32_t prev = argus_graph__seg_prev(c->g, seg);

	memset(d, 0, sizeof(*d));
	d->seg = seg;
	d->s = argus_graph__segment(c->g, seg);
	d->t = argus_graph__thread(c->g, d->s->thread);
	for (uint32_t e = d->s->first_event; e != ARGUS_NONE;
	     e = argus_graph__seg_next_event(c->g, seg, e)) {
		const struct argus_gevent *ev = argus_graph__event(c->g, e, ARGUS_GEVENT_BUF);
		struct sys_rets *r;

		if (ev->type < AE_TYPE_MAX)
			d->counts[ev->type]++;
		if (ev->type != AE_SYS_ENTER && ev->type != AE_SYS_EXIT)
			continue;
		if (ev->nr < 0 || !(r = sys_slot(d, ev->nr)))
			continue;
		if (ev->type == AE_SYS_EXIT)
			add_ret(r, ev->val);
	}
	if (d->s->start_reason == ARGUS_START_WAKE && prev != ARGUS_NONE) {
		diag_front_resume(c, prev, &d->began);
		d->have_began = true;
	}
	diag_front_resume(c, seg, &d->resumed);
}

static const struct sys_rets *find_sys(const struct side *d, int16_t nr)
{
	for (uint32_t i = 0; i < d->nsys; i++)
		if (d->sys[i].nr == nr)
			return &d->sys[i];
	return NULL;
}

static bool rets_differ(const struct sys_rets *a, const struct sys_rets *b)
{
	if (!a->nrets || !b->nrets)
		return false;   /* one never returned inside its segment */
	if (a->nrets != b->nrets || a->more != b->more)
		return true;
	return memcmp(a->rets, b->rets, a->nrets * sizeof(a->rets[0])) != 0;
}

static void rets_str(const struct sys_rets *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint8_t i = 0; i < r->nrets && n < len; i++) {
		const char *e = r->rets[i] < 0 && r->rets[i] > -4096 ?
			strerrorname_np((int)-r->rets[i]) : NULL;

		n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64 "%s%s%s", i ? ", " : "",
				      r->rets[i], e ? " (" : "", e ? e : "", e ? ")" : "");
	}
	if (r->more && n < len)
		snprintf(buf + n, len - n, ", ...");
}

/* "ime_worker (7298) via futex after 0.011 ms", "its own timer after
 * 1500.163 ms", "hardirq (an attribution, no edge)", "nobody: ..." */
static void woken_phrase(struct graph_open_ctx *c, const struct side *d, char *buf, size_t len)
{
	const struct diag_resume *r = &d->resumed;
	const struct argus_segment *nx = r->next != ARGUS_NONE ?
		argus_graph__segment(c->g, r->next) : NULL;
	double ms = nx ? (double)(nx->start - d->s->end) / 1e6 : 0;

	if (!nx || nx->start_reason != ARGUS_START_WAKE) {
		diag_front_resume_str(c, d->seg, r, buf, len);
	} else if (r->own_timer) {
		snprintf(buf, len, "woken by its own timer after %.3f ms", ms);
	} else if (r->edge != ARGUS_NONE) {
		const struct argus_edge *e = argus_graph__edge(c->g, r->edge, ARGUS_EDGE_BUF);
		const struct argus_thread *t =
			argus_graph__thread(c->g, argus_graph__segment(c->g, e->src)->thread);

		snprintf(buf, len, "woken by %s (%u%s%s) via %s after %.3f ms",
			 graph_open_comm(c->g, t), t->tid, t->pid != d->t->pid ? ", process " : "",
			 t->pid != d->t->pid ? graph_open_process(c->g, t) : "",
			 argus_edge_type_str(e->type), ms);
	} else {
		snprintf(buf, len, "woken by %s (an attribution, no edge) after %.3f ms",
			 argus_woken_by_str(nx->woken_by), ms);
	}
}

static bool same_waker(struct graph_open_ctx *c, const struct side *a, const struct side *b)
{
	const struct argus_edge *x, *y;

	if (a->resumed.edge == ARGUS_NONE || b->resumed.edge == ARGUS_NONE)
		return false;
	if (a->resumed.own_timer || b->resumed.own_timer)
		return a->resumed.own_timer && b->resumed.own_timer;
	x = argus_graph__edge(c->g, a->resumed.edge, ARGUS_EDGE_BUF);
	y = argus_graph__edge(c->g, b->resumed.edge, ARGUS_EDGE_BUF);
	return x->type == y->type && argus_graph__segment(c->g, x->src)->thread ==
				     argus_graph__segment(c->g, y->src)->thread;
}

static void summary(struct graph_open_ctx *c, const struct side *n, const struct side *h,
		    char *buf, size_t len)
{
	char pn[256], ph[256];

	woken_phrase(c, n, pn, sizeof(pn));
	woken_phrase(c, h, ph, sizeof(ph));
	if (same_waker(c, n, h))
		snprintf(buf, len, "both %s / %s: the same waker; the difference is in the timing "
			 "or the events above", pn, ph);
	else
		snprintf(buf, len, "normally %s; in the hang, %s", pn, ph);
}

static void began_str(struct graph_open_ctx *c, const struct side *d, char *buf, size_t len)
{
	char eb[256];

	if (d->have_began && d->began.edge != ARGUS_NONE) {
		diag_front_edge_str(c, d->began.edge, true, eb, sizeof(eb));
		snprintf(buf, len, "%s, woken by %s", argus_seg_start_str(d->s->start_reason), eb);
	} else {
		snprintf(buf, len, "%s%s%s", argus_seg_start_str(d->s->start_reason),
			 d->s->woken_by ? ", woken by " : "",
			 d->s->woken_by ? argus_woken_by_str(d->s->woken_by) : "");
	}
}

static void wait_str(const struct side *d, char *buf, size_t len)
{
	char sb[24];

	if (d->s->end_reason != ARGUS_END_WAIT)
		snprintf(buf, len, "none (%s)", argus_seg_end_str(d->s->end_reason));
	else if (d->s->wait_ns)
		snprintf(buf, len, "%s, %.3f ms", d->s->wait_nr >= 0 ?
			 diag_front_sys(d->s->wait_nr, sb, sizeof(sb)) : "(not in a syscall)",
			 (double)d->s->wait_ns / 1e6);
	else
		snprintf(buf, len, "%s, ? ms", d->s->wait_nr >= 0 ?
			 diag_front_sys(d->s->wait_nr, sb, sizeof(sb)) : "(not in a syscall)");
}

static void row(const char *label, const char *a, const char *b)
{
	printf("  %-16s %-34s %s\n", label, a, b);
}

static void print_text(struct graph_open_ctx *c, const struct side *n, const struct side *h)
{
	const struct side *v[2] = { n, h };
	char a[512], b[512], sb[24];
	bool any;

	snprintf(a, sizeof(a), "normal #%u", n->seg);
	snprintf(b, sizeof(b), "hang #%u", h->seg);
	printf("diff of two segments%s\n", n->t == h->t ? " of one thread" :
	       " (of different threads: usually a diff compares one thread's runs)");
	row("", a, b);
	snprintf(a, sizeof(a), "%s %u/%u", graph_open_comm(c->g, n->t), n->t->pid, n->t->tid);
	snprintf(b, sizeof(b), "%s %u/%u", graph_open_comm(c->g, h->t), h->t->pid, h->t->tid);
	row("thread", a, b);
	snprintf(a, sizeof(a), "%.6f s", diag_front_rel_s(c, n->s->start));
	snprintf(b, sizeof(b), "%.6f s", diag_front_rel_s(c, h->s->start));
	row("start", a, b);
	snprintf(a, sizeof(a), "%.3f ms", (double)(n->s->end - n->s->start) / 1e6);
	snprintf(b, sizeof(b), "%.3f ms", (double)(h->s->end - h->s->start) / 1e6);
	row("duration", a, b);
	snprintf(a, sizeof(a), "%.3f ms", (double)n->s->oncpu / 1e6);
	snprintf(b, sizeof(b), "%.3f ms", (double)h->s->oncpu / 1e6);
	row("on CPU", a, b);
	wait_str(n, a, sizeof(a));
	wait_str(h, b, sizeof(b));
	row("wait", a, b);
	snprintf(a, sizeof(a), "%s, woken by %s", argus_seg_start_str(n->s->start_reason),
		 argus_woken_by_str(n->s->woken_by));
	snprintf(b, sizeof(b), "%s, woken by %s", argus_seg_start_str(h->s->start_reason),
		 argus_woken_by_str(h->s->woken_by));
	row("began", a, b);
	snprintf(a, sizeof(a), "%u", n->s->nevents);
	snprintf(b, sizeof(b), "%u", h->s->nevents);
	row("events", a, b);
	for (unsigned t = 0; t < AE_TYPE_MAX; t++) {
		const char *name = argus_event_type_str((uint16_t)t);

		if (!n->counts[t] && !h->counts[t])
			continue;
		snprintf(a, sizeof(a), "%u", n->counts[t]);
		snprintf(b, sizeof(b), "%u", h->counts[t]);
		snprintf(sb, sizeof(sb), "  %s", name ? name : "?");
		row(sb, a, b);
	}
	printf("how each began:\n");
	for (int i = 0; i < 2; i++) {
		began_str(c, v[i], a, sizeof(a));
		printf("  %-7s %s\n", i ? "hang" : "normal", a);
	}
	for (int i = 0; i < 2; i++) {
		const struct side *x = v[i], *y = v[1 - i];
		size_t len = 0;

		a[0] = 0;
		for (uint32_t k = 0; k < x->nsys && len < sizeof(a) - 32; k++)
			if (!find_sys(y, x->sys[k].nr))
				len += (size_t)snprintf(a + len, sizeof(a) - len, "%s%s", len ? " " : "",
							diag_front_sys(x->sys[k].nr, sb, sizeof(sb)));
		printf("syscalls only in %-7s %s%s\n", i ? "hang:" : "normal:", len ? a : "(none)",
		       x->sys_more ? " (and more: too many to list)" : "");
	}
	any = false;
	for (uint32_t k = 0; k < n->nsys; k++) {
		const struct sys_rets *y = find_sys(h, n->sys[k].nr);

		if (!y || !rets_differ(&n->sys[k], y))
			continue;
		if (!any)
			printf("return values that differ (normal vs hang):\n");
		any = true;
		rets_str(&n->sys[k], a, sizeof(a));
		rets_str(y, b, sizeof(b));
		printf("  %-16s %s  vs  %s\n", diag_front_sys(n->sys[k].nr, sb, sizeof(sb)), a, b);
	}
	if (!any)
		printf("return values that differ: none among the syscalls both made\n");
	printf("how each wait ended (who woke the next segment):\n");
	for (int i = 0; i < 2; i++) {
		diag_front_resume_str(c, v[i]->seg, &v[i]->resumed, a, sizeof(a));
		printf("  %-7s %s\n", i ? "hang" : "normal", a);
	}
	summary(c, n, h, a, sizeof(a));
	printf("=> %s\n", a);
}

static void json_side(struct graph_open_ctx *c, const struct side *d)
{
	char sb[24];

	printf("{\"segment\":%u,\"tid\":%u,\"pid\":%u,\"comm\":", d->seg, d->t->tid, d->t->pid);
	diag_front_json_str(graph_open_comm_raw(c->g, d->t));
	printf(",\"process\":");
	diag_front_json_str(graph_open_process_raw(c->g, d->t));
	printf(",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"oncpu_ns\":%" PRIu64
	       ",\"nevents\":%u,\"start_reason\":\"%s\",\"woken_by\":\"%s\",\"woken_by_edge\":",
	       d->s->start, d->s->end - d->s->start, d->s->oncpu, d->s->nevents,
	       argus_seg_start_str(d->s->start_reason), argus_woken_by_str(d->s->woken_by));
	if (d->have_began)
		diag_front_json_edge(c, d->began.edge);
	else
		printf("null");
	printf(",\"end_reason\":\"%s\",\"wait\":", argus_seg_end_str(d->s->end_reason));
	if (d->s->end_reason == ARGUS_END_WAIT) {
		printf("{\"syscall\":");
		if (d->s->wait_nr >= 0)
			diag_front_json_str(diag_front_sys(d->s->wait_nr, sb, sizeof(sb)));
		else
			printf("null");
		printf(",\"wait_ns\":");
		if (d->s->wait_ns)
			printf("%" PRIu64 "}", d->s->wait_ns);
		else
			printf("null}");
	} else {
		printf("null");
	}
	printf(",\"resumed\":");
	diag_front_json_resume(c, d->seg, &d->resumed);
	printf("}");
}

static void json_rets(const struct sys_rets *r)
{
	printf("[");
	for (uint8_t i = 0; i < r->nrets; i++)
		printf("%s%" PRId64, i ? "," : "", r->rets[i]);
	printf("]");
}

static void print_json(struct graph_open_ctx *c, const struct side *n, const struct side *h)
{
	const struct side *v[2] = { n, h };
	char sb[24], s[1024];
	bool first = true;

	printf("{\"normal\":");
	json_side(c, n);
	printf(",\n\"hang\":");
	json_side(c, h);
	printf(",\n\"same_thread\":%s,\"event_counts\":{", n->t == h->t ? "true" : "false");
	for (unsigned t = 0; t < AE_TYPE_MAX; t++) {
		const char *name = argus_event_type_str((uint16_t)t);

		if (!n->counts[t] && !h->counts[t])
			continue;
		printf("%s", first ? "" : ",");
		first = false;
		if (name) {
			diag_front_json_str(name);
		} else {
			snprintf(sb, sizeof(sb), "type_%u", t);
			diag_front_json_str(sb);
		}
		printf(":[%u,%u]", n->counts[t], h->counts[t]);
	}
	printf("}");
	for (int i = 0; i < 2; i++) {
		const struct side *x = v[i], *y = v[1 - i];

		first = true;
		printf(",\"syscalls_only_in_%s\":[", i ? "hang" : "normal");
		for (uint32_t k = 0; k < x->nsys; k++) {
			if (find_sys(y, x->sys[k].nr))
				continue;
			printf("%s", first ? "" : ",");
			first = false;
			diag_front_json_str(diag_front_sys(x->sys[k].nr, sb, sizeof(sb)));
		}
		printf("]");
	}
	printf(",\n\"returns_differ\":[");
	first = true;
	for (uint32_t k = 0; k < n->nsys; k++) {
		const struct sys_rets *y = find_sys(h, n->sys[k].nr);

		if (!y || !rets_differ(&n->sys[k], y))
			continue;
		printf("%s{\"syscall\":", first ? "" : ",");
		first = false;
		diag_front_json_str(diag_front_sys(n->sys[k].nr, sb, sizeof(sb)));
		printf(",\"normal\":");
		json_rets(&n->sys[k]);
		printf(",\"hang\":");
		json_rets(y);
		printf(",\"truncated\":%s}", n->sys[k].more || y->more ? "true" : "false");
	}
	summary(c, n, h, s, sizeof(s));
	printf("],\n\"summary\":");
	diag_front_json_str(s);
	printf("}\n");
}

static const struct argus_usage usage = {
	.cmd = "diff",
	.synopsis = "argus diff FILE ID_NORMAL ID_HANG [--json] [--schema FILE] [--no-split]\n",
	.about =
	"  Duration, on-CPU, the wait, how each began, event counts, syscalls only in\n"
	"  one of them, return values that differ, and who woke each one's next\n"
	"  segment: the line that says why the hang waited.\n",
};

int cmd_diff(int argc, char **argv)
{
	static const char *const names[] = { "ID_NORMAL", "ID_HANG" };
	struct side *d = NULL;
	struct seg_cli_opts o;
	struct graph_open_ctx c;
	int rc;

	if ((rc = diag_front_parse_segs(&usage, NULL, argc, argv, &o, 2, names)))
		return argus_opts_exit(rc);
	if ((rc = diag_front_open_segs(&c, "diff", &o)))
		return rc;
	d = calloc(2, sizeof(*d));
	if (!d) {
		rc = msg_error("diff", "out of memory");
		goto out;
	}
	summarize(&c, o.ids[0], &d[0]);
	summarize(&c, o.ids[1], &d[1]);
	if (o.json)
		print_json(&c, &d[0], &d[1]);
	else
		print_text(&c, &d[0], &d[1]);
	if (fflush(stdout) || ferror(stdout))
		rc = msg_error("diff", "writing the output failed");
out:
	free(d);
	graph_open_close(&c);
	return rc;
}
