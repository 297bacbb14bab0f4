/* report_html.c - see report_html.h.
 *
 * Layout: two panels (normal run, hang window), each an SVG of rows, one
 * per thread of the diagnosis (at most ARGUS_DIAG_MAX_PATH +
 * ARGUS_DIAG_MAX_CHAIN + 2), PLOT_W pixels for the panel's window.  A
 * row's runs and waits come from its thread's segments: a segment is a
 * run from start to end; when it ended in a wait (ARGUS_END_WAIT), the
 * wait lasts until the thread's next segment starts.  Everything shorter
 * than MIN_PX pixels is folded into the run drawn around it, so a row has
 * at most about PLOT_W / MIN_PX elements whatever the thread did: the
 * page stays small for a 20 M-event trace.
 *
 * Every string from the trace (comm, process, stack frames, the JSON's
 * strings) is another user's choice: text goes through html_str(), and
 * JSON placed in a <script> has its '<', '>' and '&' written as \u003c...
 * (they occur only inside JSON strings, where that escape means the same),
 * so no name can close the script element. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_event_format.h"
#include "msg.h"
#include "report_html.h"

#define MAX_ROWS (ARGUS_DIAG_MAX_PATH + ARGUS_DIAG_MAX_CHAIN + 2)
#define LABEL_W 200           /* px: the thread names at the left */
#define PLOT_W 600            /* px: one panel's window (two fit side by side) */
#define STACK_W 250           /* px: at the right, a chain entry's top frame */
#define STACK_X (LABEL_W + PLOT_W + 30) /* where that column begins */
#define SVG_W (LABEL_W + PLOT_W + STACK_W + 10) /* the viewBox's width: the
                                   page scales it to the panel's width */
#define ROW_H 32              /* two lines: the thread, its process and role */
#define TOP 34                /* px above the first row: the axis */
#define MIN_PX 1.5            /* waits shorter than this are folded */
#define MAX_HANG_EDGES 300    /* arrows drawn in the hang panel */

struct row {
	uint32_t tid, pid, thr;   /* thr: index into the graph's threads */
	char roles[64];           /* "hang path culprit ..." */
	bool kernel;
};

struct panel {
	const char *name;         /* "normal", "hang" */
	uint64_t w0, w1;          /* window, ns */
};

struct page {
	FILE *f;
	struct graph_open_ctx *c;
	const struct argus_graph *g;
	const struct argus_diagnosis *d;
	const struct diag_run *run;   /* the chain entries' stacks */
	struct row rows[MAX_ROWS];
	uint32_t nrows;
};

static void html_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* JSON text into a <script type="application/json"> element. */
static void script_json(FILE *f, const char *id, const char *json, size_t len)
{
	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	for (size_t i = 0; i < len; i++) {
		char ch = json[i];

		if (ch == '<')
			fputs("\\u003c", f);
		else if (ch == '>')
			fputs("\\u003e", f);
		else if (ch == '&')
			fputs("\\u0026", f);
		else
			fputc(ch, f);
	}
	fputs("</script>\n", f);
}

static int row_of(const struct page *p, uint32_t tid)
{
	for (uint32_t i = 0; i < p->nrows; i++)
		if (p->rows[i].tid == tid)
			return (int)i;
	return -1;
}

static void add_row(struct page *p, uint32_t tid, const char *role)
{
	int i = row_of(p, tid);
	uint32_t thr = argus_graph__thread_by_tid(p->g, tid);

	if (thr == ARGUS_NONE)
		return;
	if (i < 0) {
		const struct argus_thread *t = argus_graph__thread(p->g, thr);

		if (p->nrows == MAX_ROWS)
			return;
		i = (int)p->nrows++;
		p->rows[i] = (struct row){ .tid = tid, .pid = t->pid, .thr = thr, .kernel = t->kernel };
	}
	if (!strstr(p->rows[i].roles, role)) {
		size_t n = strlen(p->rows[i].roles);

		snprintf(p->rows[i].roles + n, sizeof(p->rows[i].roles) - n, "%s%s", n ? " " : "",
			 role);
	}
}

static uint32_t seg_tid(const struct argus_graph *g, uint32_t seg)
{
	return argus_graph__thread(g, argus_graph__segment(g, seg)->thread)->tid;
}

static void widen(uint64_t *a, uint64_t *b, uint64_t t)
{
	if (!t)
		return;
	if (t < *a)
		*a = t;
	if (t > *b)
		*b = t;
}

/* Pads [a, b] by a tenth each side (at least 0.5 ms), inside the trace. */
static void pad(const struct argus_graph *g, uint64_t *a, uint64_t *b)
{
	const struct argus_graph_stats *st = argus_graph__stats(g);
	uint64_t m = (*b - *a) / 10;

	if (m < 500000)
		m = 500000;
	*a = *a > st->min_ts + m ? *a - m : st->min_ts;
	*b = *b + m < st->max_ts ? *b + m : st->max_ts;
	if (*b <= *a)
		*b = *a + 1;
}

/* The hang window, and the normal run's: from the normal segment's wait
 * (its end) to the UI thread's wake-up (path[0]'s start), widened to the
 * path's edges.  false when there is no normal run to draw. */
static bool windows(const struct page *p, struct panel *hang, struct panel *normal)
{
	const struct argus_diagnosis *d = p->d;
	const struct argus_graph *g = p->g;

	hang->name = "hang";
	hang->w0 = d->hang.start;
	hang->w1 = d->hang.end > d->hang.start ? d->hang.end : argus_graph__stats(g)->max_ts;
	pad(g, &hang->w0, &hang->w1);
	normal->name = "normal";
	if (d->normal_seg == ARGUS_NONE || !d->npath)
		return false;
	normal->w0 = normal->w1 = argus_graph__segment(g, d->normal_seg)->end;
	widen(&normal->w0, &normal->w1, argus_graph__segment(g, d->path[0].seg)->start);
	for (uint32_t i = 1; i < d->npath; i++) {
		const struct argus_edge *e;

		if (d->path[i].edge == ARGUS_NONE)
			continue;
		e = argus_graph__edge(g, d->path[i].edge, ARGUS_EDGE_BUF);
		widen(&normal->w0, &normal->w1, e->src_ts);
		widen(&normal->w0, &normal->w1, e->dst_ts);
	}
	pad(g, &normal->w0, &normal->w1);
	return true;
}

static double px(const struct panel *w, uint64_t t)
{
	if (t < w->w0)
		t = w->w0;
	if (t > w->w1)
		t = w->w1;
	return LABEL_W + (double)(t - w->w0) * PLOT_W / (double)(w->w1 - w->w0);
}

/* a syscall as the dump spells it (argus_event_format.h), "no syscall"
 * when the wait was not in one */
static const char *sys_of(int nr, char *buf, size_t len)
{
	return nr >= 0 ? argus_event_fmt_sys(nr, buf, len) : "no syscall";
}

static void run_rect(struct page *p, const struct panel *w, double y, uint64_t a, uint64_t b,
		     uint32_t seg0, uint32_t nseg, uint64_t oncpu, uint32_t folded)
{
	double x0 = px(w, a), x1 = px(w, b);

	fprintf(p->f, "<rect class=\"run\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\""
		" data-t0=\"%" PRIu64 "\" data-t1=\"%" PRIu64 "\" data-seg=\"%u\" data-nseg=\"%u\">"
		"<title>#%u%s: running or runnable %.3f ms (on CPU %.3f ms)", x0, y + 4,
		x1 - x0 < 0.6 ? 0.6 : x1 - x0, ROW_H - 8, a, b, seg0, nseg, seg0,
		nseg > 1 ? " and the next segments" : "", (double)(b - a) / 1e6, (double)oncpu / 1e6);
	if (folded)
		fprintf(p->f, "; %u short wait%s folded in", folded, folded == 1 ? "" : "s");
	fprintf(p->f, "</title></rect>\n");
}

static void wait_rect(struct page *p, const struct panel *w, double y, uint64_t a, uint64_t b,
		      uint32_t seg, const struct argus_segment *s)
{
	double x0 = px(w, a), x1 = px(w, b);
	char buf[32];
	const char *sys = sys_of(s->wait_nr, buf, sizeof(buf));
	const char *obj = s->wait_obj ?
		argus_obj_kind_str(argus_graph__object(p->g, s->wait_obj)->kind) : "";

	fprintf(p->f, "<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\""
		" data-t0=\"%" PRIu64 "\" data-t1=\"%" PRIu64 "\" data-seg=\"%u\" data-syscall=\"%s\""
		" data-obj=\"%s\"><title>#%u waits in %s%s%s for %.3f ms", x0, y + 9, x1 - x0,
		ROW_H - 18, a, b, seg, sys, obj, seg, sys, *obj ? " on " : "", obj,
		(double)(b - a) / 1e6);
	if (s->wait_arg != ~0ull && s->wait_arg && s->wait_obj == 0)
		fprintf(p->f, " (arg 0x%" PRIx64 ")", s->wait_arg);
	fprintf(p->f, "</title></rect>\n");
	if (x1 - x0 > 8 * (strlen(sys) + 1))
		fprintf(p->f, "<text class=\"wl\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0 + 3,
			y + ROW_H / 2.0 + 4, sys);
}

/* One thread's runs and waits over the panel's window. */
static void draw_row(struct page *p, const struct panel *w, const struct row *r, double y)
{
	const struct argus_graph *g = p->g;
	uint32_t s = argus_graph__segment_at(g, r->tid, w->w0);
	uint64_t ra = 0, rb = 0, oncpu = 0;   /* the run being gathered */
	uint32_t rseg = ARGUS_NONE, rn = 0, folded = 0;
	const uint32_t *ids;

	if (s == ARGUS_NONE) {
		if (!argus_graph__thread_segments(g, r->thr, &ids))
			return;
		s = ids[0];
	}
	for (; s != ARGUS_NONE; s = argus_graph__seg_next(g, s)) {
		const struct argus_segment *sg = argus_graph__segment(g, s);
		uint32_t next = argus_graph__seg_next(g, s);
		uint64_t a = sg->start > w->w0 ? sg->start : w->w0;
		uint64_t b = sg->end < w->w1 ? sg->end : w->w1;
		uint64_t we;

		if (sg->start > w->w1)
			break;
		if (sg->end >= w->w0) {
			if (rseg == ARGUS_NONE) {
				rseg = s;
				ra = a;
			}
			rb = b;
			rn++;
			oncpu += sg->oncpu;
		}
		if (sg->end_reason != ARGUS_END_WAIT)
			continue;
		we = next != ARGUS_NONE ? argus_graph__segment(g, next)->start : w->w1;
		if (we < w->w0 || sg->end > w->w1)
			continue;
		if (px(w, we) - px(w, sg->end) < MIN_PX) {
			folded += rseg != ARGUS_NONE;
			continue;
		}
		if (rseg != ARGUS_NONE)
			run_rect(p, w, y, ra, rb, rseg, rn, oncpu, folded);
		rseg = ARGUS_NONE;
		rn = folded = 0;
		oncpu = 0;
		wait_rect(p, w, y, sg->end > w->w0 ? sg->end : w->w0, we < w->w1 ? we : w->w1, s, sg);
	}
	if (rseg != ARGUS_NONE)
		run_rect(p, w, y, ra, rb, rseg, rn, oncpu, folded);
}

static double row_y(int i)
{
	return TOP + (double)i * ROW_H;
}

static void arrow(struct page *p, const struct panel *w, uint32_t id, int step)
{
	const struct argus_edge *e = argus_graph__edge(p->g, id, ARGUS_EDGE_BUF);
	uint32_t st = seg_tid(p->g, e->src), dt = seg_tid(p->g, e->dst);
	int rs = row_of(p, st), rd = row_of(p, dt);
	const char *type = argus_edge_type_str(e->type);
	double x0, x1, y0, y1;

	if (rs < 0 || rd < 0)
		return;
	x0 = px(w, e->src_ts);
	x1 = px(w, e->dst_ts);
	y0 = row_y(rs) + ROW_H / 2.0;
	y1 = row_y(rd) + ROW_H / 2.0;
	if (rs == rd) {         /* a weak edge: the thread went on by itself */
		y0 -= 7;
		y1 -= 7;
	}
	fprintf(p->f, "<line class=\"edge e-%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
		" marker-end=\"url(#ah-%s)\" data-edge-id=\"%u\" data-edge-type=\"%s\""
		" data-edge-src-tid=\"%u\" data-edge-dst-tid=\"%u\" data-edge-src-seg=\"%u\""
		" data-edge-dst-seg=\"%u\" data-t0=\"%" PRIu64 "\" data-t1=\"%" PRIu64 "\" data-panel=\"%s\"",
		type, x0, y0, x1, y1, type, id, type, st, dt, e->src, e->dst, e->src_ts, e->dst_ts,
		w->name);
	if (step >= 0)
		fprintf(p->f, " data-path-step=\"%d\"", step);
	fprintf(p->f, "><title>%s: #%u %u -> #%u %u, %.3f ms after", type, e->src, st, e->dst, dt,
		e->dst_ts >= e->src_ts ? (double)(e->dst_ts - e->src_ts) / 1e6 : 0.0);
	if (e->flags & ARGUS_EDGE_F_WOKE)
		fprintf(p->f, " (woke it)");
	if (e->obj_kind)
		fprintf(p->f, " on %s", argus_obj_kind_str(e->obj_kind));
	fprintf(p->f, "</title></line>\n");
}

static bool in_window(const struct panel *w, uint64_t t)
{
	return t >= w->w0 && t <= w->w1;
}

/* The strong edges between two rows' threads inside the hang window: the
 * wake-ups that did come (late, or the timeout's), and any in between. */
static void hang_edges(struct page *p, const struct panel *w)
{
	const struct argus_graph *g = p->g;
	uint32_t drawn = 0;

	for (uint32_t i = 0; i < p->nrows && drawn < MAX_HANG_EDGES; i++) {
		uint32_t s = argus_graph__segment_at(g, p->rows[i].tid, w->w0);
		const uint32_t *ids;

		if (s == ARGUS_NONE) {
			if (!argus_graph__thread_segments(g, p->rows[i].thr, &ids))
				continue;
			s = ids[0];
		}
		for (; s != ARGUS_NONE && drawn < MAX_HANG_EDGES; s = argus_graph__seg_next(g, s)) {
			const uint32_t *in;
			uint32_t n;

			if (argus_graph__segment(g, s)->start > w->w1)
				break;
			n = argus_graph__in_edges(g, s, &in);
			for (uint32_t k = 0; k < n && drawn < MAX_HANG_EDGES; k++) {
				const struct argus_edge *e = argus_graph__edge(g, in[k], ARGUS_EDGE_BUF);

				if (!argus_edge_type_strong(e->type) || !in_window(w, e->src_ts) ||
				    !in_window(w, e->dst_ts) || row_of(p, seg_tid(g, e->src)) < 0 ||
				    seg_tid(g, e->src) == p->rows[i].tid)
					continue;
				arrow(p, w, in[k], -1);
				drawn++;
			}
		}
	}
}

static void axis(struct page *p, const struct panel *w, double h)
{
	double span = (double)(w->w1 - w->w0) / 1e6, step = 0, dec = 1e-6;
	const double nice[] = { 1, 2, 5 };

	/* a tick every 1, 2 or 5 x 10^k ms: at most 10 of them */
	while (!step) {
		for (int k = 0; k < 3 && !step; k++)
			if (span / (nice[k] * dec) <= 10)
				step = nice[k] * dec;
		dec *= 10;
	}
	for (double t = 0; t <= span; t += step) {
		double x = LABEL_W + t * PLOT_W / span;

		/* a window of seconds is labelled in seconds */
		fprintf(p->f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tl\" x=\"%.1f\" y=\"%d\">%g %s</text>\n", x, TOP - 4, x, h, x + 2,
			TOP - 8, step >= 1000 ? t / 1000 : t, step >= 1000 ? "s" : "ms");
	}
}

/* A chain entry's stack beside its row, at the right of the plot: its top
 * frame on two lines, the function and then where it is (the whole stack
 * on hover, and under "Culprits" below). */
static void stack_beside(struct page *p, const struct row *r, double y)
{
	for (uint32_t i = 0; i < p->d->nchain; i++) {
		const struct diag_run_stack *st = &p->run->stacks[i];
		const char *top = st->n ? st->f[0].text : "(no stack in the trace)";
		const char *where = strstr(top, " (");
		char fn[256];

		if (p->d->chain[i].tid != r->tid || p->d->chain[i].cycle)
			continue;
		if (!where)
			where = strstr(top, " [");
		snprintf(fn, sizeof(fn), "%.*s", where ? (int)(where - top) : (int)strlen(top), top);
		fprintf(p->f, "<text class=\"stackcol\" x=\"%d\" y=\"%.1f\" data-chain=\"%u\">",
			STACK_X, y + 13, i);
		html_str(p->f, fn);
		if (where) {
			fprintf(p->f, "<tspan class=\"where\" x=\"%d\" dy=\"13\">", STACK_X);
			html_str(p->f, where);
			fprintf(p->f, "</tspan>");
		}
		fprintf(p->f, "<title>");
		for (uint32_t j = 0; j < st->n; j++) {
			html_str(p->f, st->f[j].text);
			fputc('\n', p->f);
		}
		fprintf(p->f, "</title></text>\n");
		return;
	}
}

static void panel_svg(struct page *p, const struct panel *w, const char *title)
{
	double h = TOP + p->nrows * ROW_H + 6;

	fprintf(p->f, "<section class=\"panel\" id=\"panel-%s\" data-panel=\"%s\" data-t0=\"%" PRIu64
		"\" data-t1=\"%" PRIu64 "\"><h2>%s</h2>\n", w->name, w->name, w->w0, w->w1, title);
	/* drawn in SVG_W units, scaled to the panel's width by the page */
	fprintf(p->f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %.0f\""
		" preserveAspectRatio=\"xMinYMin meet\">\n<defs>", SVG_W, h);
	/* an arrowhead per edge type, by the graph's own names (an edge of a
	 * type without one would draw headless) */
	for (unsigned t = ARGUS_EDGE_WAKEUP; t < ARGUS_EDGE_TYPE_MAX; t++) {
		const char *ty = argus_edge_type_str(t);

		if (ty)
			fprintf(p->f, "<marker id=\"ah-%s\" class=\"m-%s\" viewBox=\"0 0 10 10\""
				" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\""
				" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker>", ty, ty);
	}
	fprintf(p->f, "</defs>\n");
	axis(p, w, h);
	/* above the axis's labels, which run to the plot's right end */
	fprintf(p->f, "<text class=\"colhead\" x=\"%d\" y=\"%d\">stack: top frame</text>\n",
		STACK_X, TOP - 20);
	if (!strcmp(w->name, "hang")) {
		/* where the hang begins and ends inside the padded window */
		uint64_t e = p->d->hang.end > p->d->hang.start ? p->d->hang.end : w->w1;

		fprintf(p->f, "<rect class=\"hangspan\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.0f\""
			" data-t0=\"%" PRIu64 "\" data-t1=\"%" PRIu64 "\"/>\n", px(w, p->d->hang.start), TOP - 2,
			px(w, e) - px(w, p->d->hang.start), h - TOP, p->d->hang.start, e);
	}
	for (uint32_t i = 0; i < p->nrows; i++) {
		const struct row *r = &p->rows[i];
		double y = row_y((int)i);

		fprintf(p->f, "<g class=\"row\" data-tid=\"%u\" data-pid=\"%u\" data-role=\"%s\">\n"
			"<rect class=\"band\" x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n"
			"<text class=\"name\" x=\"4\" y=\"%.1f\">", r->tid, r->pid, r->roles, y,
			SVG_W - 10, ROW_H, y + 13);
		html_str(p->f, diag_front_comm_raw(p->c, r->tid));
		fprintf(p->f, " %u/%u</text><title>", r->pid, r->tid);
		html_str(p->f, diag_front_comm_raw(p->c, r->tid));
		fprintf(p->f, " %u/%u, process ", r->pid, r->tid);
		html_str(p->f, diag_front_process_raw(p->c, r->tid));
		fprintf(p->f, ": %s</title>\n", r->roles);
		/* under the name: its process and its role in the diagnosis */
		fprintf(p->f, "<text class=\"sub\" x=\"4\" y=\"%.1f\">", y + 26);
		html_str(p->f, diag_front_process_raw(p->c, r->tid));
		fprintf(p->f, " \u00b7 %s</text>\n", r->roles);
		stack_beside(p, r, y);
		draw_row(p, w, r, y);
		fprintf(p->f, "</g>\n");
	}
	if (!strcmp(w->name, "normal")) {
		for (uint32_t i = 1; i < p->d->npath; i++)
			if (p->d->path[i].edge != ARGUS_NONE)
				arrow(p, w, p->d->path[i].edge, (int)i);
	} else {
		hang_edges(p, w);
	}
	fprintf(p->f, "</svg></section>\n");
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#1f2328;background:#fff}"
	"h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:14px 0 4px}"
	".verdict{font-size:16px;padding:8px 12px;background:#fff4e5;border-left:4px solid #d4700a;margin:8px 0}"
	".meta{color:#57606a}"
	/* one panel a line up to 1700 px, two side by side beyond: each
	 * timeline takes its column's whole width */
	".panels{display:grid;grid-template-columns:minmax(0,1fr);gap:16px}"
	"@media (min-width:1700px){.panels{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}}"
	".panel{border:1px solid #d0d7de;border-radius:6px;padding:4px 8px;min-width:0}"
	"svg{display:block;width:100%;height:auto}.sub{font-size:10px;fill:#57606a}"
	".stackcol{font-size:11px;font-family:ui-monospace,monospace;fill:#24292f}.where{font-size:10px;fill:#57606a}.colhead{font-size:10px;fill:#57606a}.band{fill:transparent}.row:nth-child(odd) .band{fill:#f6f8fa}"
	".row[data-role~=culprit] .band{fill:#ffebe9}.row[data-role~=hang] .band{fill:#ddf4ff}"
	".row.hl .band{fill:#fff8c5}.name{font-size:12px;cursor:pointer}"
	".row[data-role~=culprit] .name{fill:#cf222e;font-weight:600}.row[data-role~=hang] .name{font-weight:600}"
	".run{fill:#2da44e}.wait{fill:#afb8c1}.wl{font-size:10px;fill:#24292f;pointer-events:none}"
	".hangspan{fill:none;stroke:#cf222e;stroke-dasharray:4 3}.tick{stroke:#d0d7de;stroke-width:1}.tl{font-size:10px;fill:#57606a}"
	".edge{stroke-width:2;fill:none}.edge:hover{stroke-width:4}"
	".e-wakeup,.e-futex{stroke:#0969da}.m-wakeup,.m-futex{fill:#0969da}"
	".e-message{stroke:#8250df}.m-message{fill:#8250df}.e-timer{stroke:#bc4c00}.m-timer{fill:#bc4c00}"
	".e-dataflag{stroke:#1a7f37}.m-dataflag{fill:#1a7f37}.e-intra{stroke:#8c959f;stroke-dasharray:3 3}"
	".m-intra{fill:#8c959f}.e-fork,.e-exit,.e-signal,.e-workitem,.e-custom{stroke:#57606a}"
	".m-fork,.m-exit,.m-signal,.m-workitem,.m-custom{fill:#57606a}"
	".e-holder{stroke:#cf222e}.m-holder{fill:#cf222e}"
	".stack{margin:6px 0;border:1px solid #d0d7de;border-radius:6px;padding:4px 8px}"
	".stack.open-hl{border-color:#cf222e}.stack pre,.text pre{margin:4px 0;font-size:12px;overflow-x:auto}"
	".legend span{margin-right:14px}.sw{display:inline-block;width:18px;height:10px;margin-right:4px;vertical-align:middle}"
	"#tip{position:fixed;pointer-events:none;background:#24292f;color:#fff;font-size:12px;padding:3px 6px;"
	"border-radius:4px;display:none;max-width:520px;white-space:pre-wrap}";

/* The page's script: tooltips from the <title>s, a click on a thread's
 * name opens its stack, hovering an arrow lights its two rows, and the
 * Perfetto JSON becomes a download.  It reads the embedded diagnosis, so
 * body[data-argus-ready] says the page's data parsed. */
static const char script[] =
	"(function(){'use strict';"
	"var d=JSON.parse(document.getElementById('argus-diagnosis').textContent);"
	"var tip=document.getElementById('tip');"
	"document.querySelectorAll('svg title').forEach(function(t){var e=t.parentNode;"
	"e.dataset.tip=t.textContent;t.remove();});"
	"document.addEventListener('mousemove',function(ev){var e=ev.target.closest('[data-tip]');"
	"if(!e){tip.style.display='none';return;}tip.textContent=e.dataset.tip;tip.style.display='block';"
	"tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';});"
	"document.querySelectorAll('.row .name').forEach(function(n){n.addEventListener('click',function(){"
	"var tid=n.parentNode.dataset.tid;var s=document.querySelector('details.stack[data-tid=\"'+tid+'\"]');"
	"if(s){s.open=true;s.classList.add('open-hl');s.scrollIntoView({block:'nearest'});}});});"
	"document.querySelectorAll('line.edge').forEach(function(l){var rows=function(on){"
	"[l.dataset.edgeSrcTid,l.dataset.edgeDstTid].forEach(function(t){l.closest('svg')"
	".querySelectorAll('.row[data-tid=\"'+t+'\"]').forEach(function(r){r.classList.toggle('hl',on);});});};"
	"l.addEventListener('mouseenter',function(){rows(true);});l.addEventListener('mouseleave',function(){rows(false);});});"
	"var p=document.getElementById('argus-perfetto'),a=document.getElementById('perfetto-link');"
	"if(p&&a){a.href=URL.createObjectURL(new Blob([p.textContent],{type:'application/json'}));}"
	"document.body.dataset.argusReady=(d&&d.hang)?'1':'0';"
	/* the width the page needed against the window's (a page wider than
	 * its window scrolls sideways; the report test reads both) */
	"document.body.dataset.viewW=String(window.innerWidth);"
	"document.body.dataset.pageW=String(document.documentElement.scrollWidth);"
	/* and how wide the hang's timeline was drawn */
	"var hs=document.querySelector('#panel-hang svg');"
	"if(hs)document.body.dataset.hangW=String(Math.round(hs.getBoundingClientRect().width));"
	"document.body.dataset.arrows=String(document.querySelectorAll('line.edge').length);"
	"})();";

int report_html_write(FILE *f, const struct report_html_in *in)
{
	struct page *p = calloc(1, sizeof(*p));
	const struct argus_diagnosis *d = in->run->d;
	struct panel hang, normal;
	struct argus_export_opts eo = { .sz = sizeof(eo) };
	uint32_t pids[MAX_ROWS];
	char v[1024], *perf = NULL;
	size_t plen = 0;
	FILE *pf;
	bool have_normal;
	int rc = 0;

	if (!p)
		return -ENOMEM;
	p->f = f;
	p->c = in->c;
	p->g = in->c->g;
	p->d = d;
	p->run = in->run;
	/* the rows: the hung thread, the path outward, the culprit and chain */
	add_row(p, d->hang.tid, "hang");
	for (uint32_t i = 0; i < d->npath; i++)
		add_row(p, seg_tid(p->g, d->path[i].seg), "path");
	if (d->flag_writer)
		add_row(p, d->flag_writer, "flag-writer");
	for (uint32_t i = 0; i < d->nchain; i++)
		add_row(p, d->chain[i].tid, i ? "chain" : "culprit");
	have_normal = windows(p, &hang, &normal);

	/* the Perfetto JSON of the rows' processes over both windows */
	for (uint32_t i = 0; i < p->nrows; i++) {
		bool seen = false;

		for (uint32_t k = 0; k < eo.npids; k++)
			seen |= pids[k] == p->rows[i].pid;
		if (!seen)
			pids[eo.npids++] = p->rows[i].pid;
		eo.include_kernel |= p->rows[i].kernel;
	}
	eo.pids = pids;
	eo.from_ts = hang.w0;
	eo.to_ts = hang.w1;
	if (have_normal) {
		widen(&eo.from_ts, &eo.to_ts, normal.w0);
		widen(&eo.from_ts, &eo.to_ts, normal.w1);
	}
	pf = open_memstream(&perf, &plen);
	if (!pf) {
		free(p);
		return -ENOMEM;
	}
	rc = argus_graph__write_perfetto(p->g, &eo, pf);
	if (fclose(pf) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(perf);
		free(p);
		return rc;
	}

	diag_run_verdict(in->c, d, v, sizeof(v));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<title>argus report: ");
	html_str(f, diag_front_comm_raw(in->c, d->hang.tid));
	fprintf(f, " %u/%u hung %.0f ms</title>\n<style>%s</style></head>\n<body>\n",
		d->hang.pid, d->hang.tid, (double)(d->hang.end - d->hang.start) / 1e6, css);
	fprintf(f, "<h1>Hang of ");
	html_str(f, diag_front_comm_raw(in->c, d->hang.tid));
	fprintf(f, " %u/%u (process ", d->hang.pid, d->hang.tid);
	html_str(f, diag_front_process_raw(in->c, d->hang.tid));
	fprintf(f, "): %s for %.1f ms%s</h1>\n<p class=\"meta\">trace ",
		argus_hang_kind_str(d->kind), (double)(d->hang.end - d->hang.start) / 1e6,
		d->hang.ongoing ? ", still at the end of the trace" : "");
	html_str(f, in->trace_path);
	fprintf(f, ", from %.3f s to %.3f s of it; %s; %u nodes inspected of %u</p>\n",
		diag_front_rel_s(in->c, d->hang.start), diag_front_rel_s(in->c, d->hang.end),
		in->run->picked[0] ? in->run->picked : "the hang asked for", d->inspected,
		argus_graph__nsegments(p->g));
	fprintf(f, "<p class=\"verdict\" id=\"verdict\">");
	html_str(f, v);
	fprintf(f, "</p>\n<p class=\"legend\"><span><i class=\"sw\" style=\"background:#2da44e\"></i>"
		"running or runnable</span><span><i class=\"sw\" style=\"background:#afb8c1\"></i>"
		"waiting (hover: the syscall and its object)</span><span style=\"color:#0969da\">"
		"&rarr; wake-up / futex</span><span style=\"color:#8250df\">&rarr; message</span>"
		"<span style=\"color:#bc4c00\">&rarr; timer</span><span style=\"color:#1a7f37\">&rarr;"
		" data flag</span><span style=\"color:#cf222e\">&rarr; mutex holder</span>"
		"<span>click a thread's name: its stack</span></p>\n"
		"<div class=\"panels\">\n");
	if (have_normal) {
		char t[256];

		snprintf(t, sizeof(t), "The similar normal run: segment #%u (best of %u), wait to"
			 " wake-up along the path", d->normal_seg, d->nsimilar);
		panel_svg(p, &normal, t);
	}
	{
		char t[256];

		snprintf(t, sizeof(t), "The hang: %.1f ms%s", (double)(d->hang.end - d->hang.start) / 1e6,
			 have_normal ? ", the wake-up that never came" : "");
		panel_svg(p, &hang, t);
	}
	fprintf(f, "</div>\n<h2>Culprits</h2>\n");
	for (uint32_t i = 0; i < d->nchain; i++) {
		const struct argus_culprit *k = &d->chain[i];
		const struct diag_run_stack *st = &in->run->stacks[i];

		fprintf(f, "<details class=\"stack\" data-tid=\"%u\" data-pid=\"%u\" data-kind=\"%s\"%s>"
			"<summary>%s: ", k->tid, k->pid, argus_hang_kind_str(k->kind),
			i == 0 ? " open" : "", i == 0 ? "culprit" : "then");
		html_str(f, diag_front_comm_raw(in->c, k->tid));
		fprintf(f, " %u/%u (process ", k->pid, k->tid);
		html_str(f, diag_front_process_raw(in->c, k->tid));
		fprintf(f, "), %s%s [rule: %s]", argus_hang_kind_str(k->kind),
			k->cycle ? ", already in the chain (a cycle)" : "", argus_culprit_rule_str(k->rule));
		/* named from live state: from where (static text), and a stop */
		if (diag_front_live_where(k->live_source))
			fprintf(f, " (live: %s)", diag_front_live_where(k->live_source));
		if (argus_live_stop_str(k->live_stop))
			fprintf(f, " (stopped now: %s)", argus_live_stop_str(k->live_stop));
		if (k->kind == ARGUS_KIND_BLOCKED && k->wait_nr >= 0) {
			char b[32];

			fprintf(f, " in %s for %.1f ms", sys_of(k->wait_nr, b, sizeof(b)),
				(double)k->wait_ns / 1e6);
		}
		fprintf(f, "</summary><pre>");
		for (uint32_t j = 0; j < st->n; j++) {
			html_str(f, st->f[j].text);
			fputc('\n', f);
		}
		if (!st->n)
			fprintf(f, "(no stack in the trace)\n");
		fprintf(f, "</pre></details>\n");
	}
	if (!d->nchain)
		fprintf(f, "<p>No culprit found.</p>\n");
	fprintf(f, "<details class=\"text\"><summary>The report as text (argus diagnose)</summary><pre>");
	html_str(f, in->text);
	fprintf(f, "</pre></details>\n<p>The same window in Perfetto's JSON (all the segments and"
		" edges of these processes): <a id=\"perfetto-link\" download=\"argus-hang.perfetto.json\""
		" href=\"#argus-perfetto\">download</a>, then open it in ui.perfetto.dev or"
		" chrome://tracing.</p>\n<div id=\"tip\"></div>\n");
	script_json(f, "argus-diagnosis", in->json, strlen(in->json));
	script_json(f, "argus-perfetto", perf, plen);
	fprintf(f, "<script>%s</script>\n</body></html>\n", script);
	free(perf);
	free(p);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}
