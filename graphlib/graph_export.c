/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_export.c - the graph written out for other tools (docs/graph.md,
 * "Exports"):
 *
 *   argus_graph__write_dot       a subgraph as Graphviz DOT
 *   argus_graph__write_json      the same subgraph as one JSON object
 *   argus_graph__write_perfetto  the whole graph as Chrome trace-event
 *                                JSON (Perfetto, chrome://tracing)
 *
 * Everything is streamed to the caller's FILE as it is walked; nothing is
 * built in memory beyond one byte per segment (the subgraph's membership)
 * or one entry per thread (the Perfetto process table).  Write errors are
 * sticky in struct out and come back as -EIO once the walk stops.
 *
 * Strings in the trace (comm, process names) were chosen by the traced
 * programs: they are untrusted and may hold quotes, backslashes, control
 * bytes and bytes that are not UTF-8.  Every one goes through an escaper:
 * json_str() (valid UTF-8 passes, the rest becomes \u00XX) or dot_str()
 * (the rest becomes a visible \xNN).
 *
 * Times: the graph is in CLOCK_MONOTONIC ns.  The JSON subgraph keeps
 * them as they are (join them with the trace); DOT labels and the Perfetto
 * timeline count from the trace's first event (stats.min_ts).  Perfetto
 * wants µs: printed from integer ns as "%llu.%03llu", never via a double.
 *
 * Perfetto quirks handled here (see slice_of() and flow_ts()):
 *   - a flow event binds to the slice open on its thread at its ts, so
 *     each flow end is moved inside its segment's slice, a small margin
 *     away from both edges (Perfetto turns "ts" into ns as
 *     (int64_t)(double * 1000), which can lose 1 ns);
 *   - a segment of zero length gets MIN_SLICE_NS so that a flow can bind;
 *   - for the same reason two slices of a thread never touch: a slice
 *     ends TOUCH_GAP_NS before the next one begins (they would otherwise
 *     look nested after that rounding).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "argus_event_format.h"
#include "graph_internal.h"
#include "syscall_class.h"

#define PROGRESS_EVERY (1u << 20)
#define MIN_SLICE_NS 1000ull    /* zero-length segments: 1 µs */
#define FLOW_MARGIN_NS 100ull   /* flow ends this far inside their slice */
#define TOUCH_GAP_NS 2ull       /* between consecutive slices of a thread */

/* ---- output ------------------------------------------------------------ */

struct out {
	FILE *f;
	int err;                /* a write failed (sticky) */
};

static void outf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(o->f, fmt, ap) < 0)
		o->err = 1;
	va_end(ap);
}

static void outc(struct out *o, int c)
{
	if (!o->err && putc(c, o->f) == EOF)
		o->err = 1;
}

static void outn(struct out *o, const void *p, size_t n)
{
	if (!o->err && fwrite(p, 1, n, o->f) != n)
		o->err = 1;
}

static bool out_failed(struct out *o)
{
	if (!o->err && ferror(o->f))
		o->err = 1;
	return o->err;
}

/* Flush and turn any write error into -EIO. */
static int out_finish(struct out *o)
{
	if (!o->err && fflush(o->f))
		o->err = 1;
	return out_failed(o) ? -EIO : 0;
}

/*
 * Length of the well-formed UTF-8 sequence at s (1..4), 0 when s does not
 * start one (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF).
 * s is NUL-terminated; a NUL is never a continuation byte, so no read goes
 * past it.
 */
static int utf8_seq(const unsigned char *s)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
		return 0;
	if (c < 0xf0)
		return 3;
	return (s[3] & 0xc0) == 0x80 ? 4 : 0;
}

/* s as a JSON string literal, quotes included; NULL prints null. */
static void json_str(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		outf(o, "null");
		return;
	}
	outc(o, '"');
	while (*p) {
		unsigned c = *p;
		int n;

		if (c == '"' || c == '\\') {
			outc(o, '\\');
			outc(o, (int)c);
			p++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': outf(o, "\\n"); break;
			case '\r': outf(o, "\\r"); break;
			case '\t': outf(o, "\\t"); break;
			case '\b': outf(o, "\\b"); break;
			case '\f': outf(o, "\\f"); break;
			default: outf(o, "\\u%04x", c); break;
			}
			p++;
			continue;
		}
		n = utf8_seq(p);
		if (!n) {               /* not UTF-8: the byte as U+00XX */
			outf(o, "\\u%04x", c);
			p++;
			continue;
		}
		/* U+2028/2029 are valid JSON but end lines in JavaScript;
		 * U+0080..U+009F are the C1 controls (CSI is U+009B), which
		 * some terminals obey when the JSON is printed */
		if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0xa8 || p[2] == 0xa9))
			outf(o, "\\u%04x", 0x2000u | p[2]);
		else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			outf(o, "\\u%04x", (unsigned)p[1]);
		else
			outn(o, p, (size_t)n);
		p += n;
	}
	outc(o, '"');
}

/* The code point of a valid UTF-8 sequence of n bytes. */
static uint32_t utf8_cp(const unsigned char *p, int n)
{
	uint32_t cp = n == 1 ? p[0] : p[0] & (0xff >> (n + 1));

	for (int i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* Invisible characters that reorder or hide text (Unicode category Cf,
 * and the line/paragraph separators): a name holding U+202E shows
 * "exe.txt" for "txt.exe", one holding U+200B looks like another name.
 * Escaped in text, kept exact in JSON. */
static bool format_control(uint32_t cp)
{
	return cp == 0x00ad ||                          /* soft hyphen */
	       (cp >= 0x0600 && cp <= 0x0605) || cp == 0x061c || cp == 0x06dd ||
	       cp == 0x070f || cp == 0x08e2 || cp == 0x180e ||
	       (cp >= 0x200b && cp <= 0x200f) ||        /* ZW space/joiners, LRM, RLM */
	       (cp >= 0x2028 && cp <= 0x202e) ||        /* separators, LRE..RLO */
	       (cp >= 0x2060 && cp <= 0x206f) ||        /* joiner, isolates LRI..PDI */
	       cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0x1d173 && cp <= 0x1d17a) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);        /* tags */
}

/* One byte sequence of s for a terminal: printable UTF-8 as it is,
 * anything a terminal could act on, or that reorders or hides text, as a
 * visible escape (esc: 12 bytes). */
static int text_seq(const unsigned char *p, char *esc)
{
	unsigned c = *p;
	int n;

	switch (c) {
	case '\\': strcpy(esc, "\\\\"); return 1;
	case '\n': strcpy(esc, "\\n"); return 1;
	case '\r': strcpy(esc, "\\r"); return 1;
	case '\t': strcpy(esc, "\\t"); return 1;
	}
	if (c < 0x20 || c == 0x7f) {
		sprintf(esc, "\\x%02x", c);
		return 1;
	}
	n = utf8_seq(p);
	if (!n) {               /* not UTF-8: a lone 0x9b is CSI to some */
		sprintf(esc, "\\x%02x", c);
		return 1;
	}
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {   /* C1 control */
		sprintf(esc, "\\u%04x", (unsigned)p[1]);
		return 2;
	}
	if (n > 1 && format_control(utf8_cp(p, n))) {
		uint32_t cp = utf8_cp(p, n);

		if (cp > 0xffff)
			sprintf(esc, "\\U%08x", (unsigned)cp);
		else
			sprintf(esc, "\\u%04x", (unsigned)cp);
		return n;
	}
	esc[0] = 0;
	return n;
}

size_t argus_text_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0, need = 0;
	bool cut = false;

	while (*p) {
		char esc[12];
		int n = text_seq(p, esc);
		size_t w = esc[0] ? strlen(esc) : (size_t)n;

		need += w;
		/* whole sequences only: never half an escape or a character */
		if (!cut && len && o + w < len) {
			memcpy(buf + o, esc[0] ? esc : (const char *)p, w);
			o += w;
		} else {
			cut = true;
		}
		p += n;
	}
	if (len)
		buf[o] = 0;
	return need;
}

int argus_text_write_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		char esc[12];
		int n = text_seq(p, esc);

		if (esc[0] ? fputs(esc, f) < 0 : fwrite(p, 1, (size_t)n, f) != (size_t)n)
			return -EIO;
		p += n;
	}
	return 0;
}

int argus_json_write_str(FILE *f, const char *s)
{
	struct out o = { .f = f };

	json_str(&o, s);
	return o.err ? -EIO : 0;
}

/* s inside a DOT quoted string (the quotes are the caller's).  A label is
 * an escString: "\\" shows a backslash, so bytes that are not printable
 * UTF-8 are shown as the text \xNN. */
static void dot_str(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "?");

	while (*p) {
		unsigned c = *p;
		int n = c < 0x20 || c == 0x7f ? 0 : utf8_seq(p);

		if (c == '"' || c == '\\') {
			outc(o, '\\');
			outc(o, (int)c);
			p++;
		} else if (!n) {
			outf(o, "\\\\x%02x", c);
			p++;
		} else {
			outn(o, p, (size_t)n);
			p += n;
		}
	}
}

/* ---- shared helpers ---------------------------------------------------- */

static const char *str_of(const struct argus_graph *g, uint32_t id)
{
	return id ? argus_trace__string(g->trace, id) : NULL;
}

static uint64_t rel(const struct argus_graph *g, uint64_t ts)
{
	return ts > g->st.min_ts ? ts - g->st.min_ts : 0;
}

/* The syscall a segment ended waiting in, "sys_N" for a number this
 * build does not know, NULL when it did not end in a syscall wait. */
static const char *wait_sys(const struct argus_segment *s, char *buf,
			    size_t len)
{
	if (s->end_reason != ARGUS_END_WAIT || s->wait_nr < 0)
		return NULL;
	return argus_event_fmt_sys(s->wait_nr, buf, len);
}

/* Is the wait_arg of a segment that ended in a syscall wait a timeout
 * (kernel-patch/argus.bpf.c records it so for these)? */
static bool sys_has_timeout(const struct argus_segment *s)
{
	return s->end_reason == ARGUS_END_WAIT && argus_sys_is(s->wait_nr, ARGUS_SC_TIMEOUT);
}

/* Membership of the subgraph segs[0..n): 1 = in it, 2 = already written. */
static int subgraph_set(const struct argus_graph *g, const uint32_t *segs,
			uint32_t n, FILE *out, uint8_t **set)
{
	if (!g || !out || (n && !segs))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (segs[i] >= g->seg.n)
			return -EINVAL;
	*set = calloc((size_t)g->seg.n + 1, 1);
	if (!*set)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		(*set)[segs[i]] = 1;
	return 0;
}

/* ---- DOT --------------------------------------------------------------- */

static void dot_node(struct out *o, const struct argus_graph *g, uint32_t id)
{
	const struct argus_segment *s = &SEGS(g)[id];
	const struct argus_thread *t = &THRS(g)[s->thread];
	uint64_t st = rel(g, s->start), dur = s->end - s->start;
	char buf[32];
	const char *sys = wait_sys(s, buf, sizeof(buf));

	outf(o, "  s%" PRIu32 " [label=\"#%" PRIu32 " ", id, id);
	dot_str(o, str_of(g, t->comm));
	outf(o, " %" PRIu32 "/%" PRIu32 "\\nstart %" PRIu64 ".%06" PRIu64
	     " s  dur %" PRIu64 ".%03" PRIu64 " ms\\non-CPU %" PRIu64
	     ".%03" PRIu64 " ms\\n",
	     t->tid, t->pid, st / 1000000000, st % 1000000000 / 1000,
	     dur / 1000000, dur % 1000000 / 1000,
	     s->oncpu / 1000000, s->oncpu % 1000000 / 1000);
	if (s->end_reason == ARGUS_END_WAIT) {
		outf(o, "wait: %s", sys ? sys : "(not in a syscall)");
		if (s->wait_obj)
			outf(o, " %s", argus_obj_kind_str(OBJS(g)[s->wait_obj].kind));
		if (s->wait_ns)
			outf(o, " %" PRIu64 ".%03" PRIu64 " ms",
			     s->wait_ns / 1000000, s->wait_ns % 1000000 / 1000);
	} else {
		const char *r = argus_seg_end_str(s->end_reason);

		outf(o, "end: %s", r ? r : "?");
	}
	outf(o, "\"%s];\n", s->flags & ARGUS_SEG_F_KERNEL ? ", color=gray50" : "");
}

static void dot_edge(struct out *o, const struct argus_graph *g, uint32_t id)
{
	struct argus_edge buf;
	const struct argus_edge *e = gedge_get(g, id, &buf);
	const char *type = argus_edge_type_str(e->type);

	outf(o, "  s%" PRIu32 " -> s%" PRIu32 " [label=\"%s", e->src, e->dst,
	     type ? type : "?");
	if (e->type == ARGUS_EDGE_MESSAGE)
		outf(o, " %" PRIu32 " B", e->bytes);
	if (e->type == ARGUS_EDGE_INTRA)
		outf(o, "\", style=dashed, color=gray50];\n");
	else
		outf(o, "\", style=solid];\n");
}

int argus_graph__write_dot(const struct argus_graph *g, const uint32_t *segs,
			   uint32_t n, FILE *f)
{
	struct out o = { .f = f };
	uint8_t *set;
	int rc = subgraph_set(g, segs, n, f, &set);

	if (rc)
		return rc;
	outf(&o, "digraph argus {\n  rankdir=LR;\n"
		 "  node [shape=box, fontname=\"monospace\"];\n"
		 "  edge [fontname=\"monospace\"];\n");
	for (uint32_t i = 0; i < n; i++) {
		if (set[segs[i]] != 1)
			continue;       /* listed twice */
		set[segs[i]] = 2;
		dot_node(&o, g, segs[i]);
	}
	for (uint32_t i = 0; i < n && !out_failed(&o); i++) {
		const uint32_t *ids;
		uint32_t m;

		if (set[segs[i]] != 2)
			continue;
		set[segs[i]] = 3;
		m = argus_graph__out_edges(g, segs[i], &ids);
		for (uint32_t k = 0; k < m; k++)
			if (set[gedge_get(g, ids[k], ARGUS_EDGE_BUF)->dst])
				dot_edge(&o, g, ids[k]);
	}
	outf(&o, "}\n");
	free(set);
	return out_finish(&o);
}

/* ---- JSON subgraph ----------------------------------------------------- */

static void json_node(struct out *o, const struct argus_graph *g, uint32_t id)
{
	const struct argus_segment *s = &SEGS(g)[id];
	const struct argus_thread *t = &THRS(g)[s->thread];
	char buf[32];
	const char *sys = wait_sys(s, buf, sizeof(buf)), *sep = "";

	outf(o, "{\"id\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"pid\":%" PRIu32
	     ",\"comm\":", id, t->tid, t->pid);
	json_str(o, str_of(g, t->comm));
	outf(o, ",\"process\":");
	json_str(o, str_of(g, t->process));
	outf(o, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	     ",\"oncpu_ns\":%" PRIu64 ",\"start_reason\":",
	     s->start, s->end, s->oncpu);
	json_str(o, argus_seg_start_str(s->start_reason));
	outf(o, ",\"end_reason\":");
	json_str(o, argus_seg_end_str(s->end_reason));
	outf(o, ",\"woken_by\":");
	json_str(o, argus_woken_by_str(s->woken_by));
	outf(o, ",\"wait\":");
	if (s->end_reason == ARGUS_END_WAIT) {
		outf(o, "{\"syscall\":");
		json_str(o, sys);
		const struct argus_object *wo = argus_graph__object(g, s->wait_obj);

		outf(o, ",\"obj_kind\":%u,\"obj\":%" PRIu64 ",\"timeout_ns\":",
		     wo ? (unsigned)wo->kind : 0, wo ? wo->obj : 0);
		if (sys_has_timeout(s) && s->wait_arg != UINT64_MAX)
			outf(o, "%" PRIu64, s->wait_arg);
		else
			outf(o, "null");
		if (s->wait_ns)
			outf(o, ",\"wait_ns\":%" PRIu64 "}", s->wait_ns);
		else
			outf(o, ",\"wait_ns\":null}");
	} else {
		outf(o, "null");
	}
	outf(o, ",\"nevents\":%" PRIu32 ",\"nsamples\":%" PRIu32 ",\"flags\":[",
	     s->nevents, s->nsamples);
	if (s->flags & ARGUS_SEG_F_KERNEL) {
		outf(o, "\"kernel\"");
		sep = ",";
	}
	if (s->flags & ARGUS_SEG_F_MULTI)
		outf(o, "%s\"multi\"", sep);
	outf(o, "]}");
}

static void json_edge(struct out *o, const struct argus_graph *g, uint32_t id)
{
	struct argus_edge buf;
	const struct argus_edge *e = gedge_get(g, id, &buf);

	outf(o, "{\"id\":%" PRIu32 ",\"src\":%" PRIu32 ",\"dst\":%" PRIu32
	     ",\"type\":", id, e->src, e->dst);
	json_str(o, argus_edge_type_str(e->type));
	outf(o, ",\"src_ts\":%" PRIu64 ",\"dst_ts\":%" PRIu64 ",\"bytes\":%"
	     PRIu32 ",\"woke\":%s}", e->src_ts, e->dst_ts, e->bytes,
	     e->flags & ARGUS_EDGE_F_WOKE ? "true" : "false");
}

int argus_graph__write_json(const struct argus_graph *g, const uint32_t *segs,
			    uint32_t n, FILE *f)
{
	struct out o = { .f = f };
	const char *sep = "\n";
	uint8_t *set;
	int rc = subgraph_set(g, segs, n, f, &set);

	if (rc)
		return rc;
	outf(&o, "{\"nodes\":[");
	for (uint32_t i = 0; i < n; i++) {
		if (set[segs[i]] != 1)
			continue;
		set[segs[i]] = 2;
		outf(&o, "%s", sep);
		json_node(&o, g, segs[i]);
		sep = ",\n";
	}
	outf(&o, "\n],\"edges\":[");
	sep = "\n";
	for (uint32_t i = 0; i < n && !out_failed(&o); i++) {
		const uint32_t *ids;
		uint32_t m;

		if (set[segs[i]] != 2)
			continue;
		set[segs[i]] = 3;
		m = argus_graph__out_edges(g, segs[i], &ids);
		for (uint32_t k = 0; k < m; k++) {
			if (!set[gedge_get(g, ids[k], ARGUS_EDGE_BUF)->dst])
				continue;
			outf(&o, "%s", sep);
			json_edge(&o, g, ids[k]);
			sep = ",\n";
		}
	}
	outf(&o, "\n]}\n");
	free(set);
	return out_finish(&o);
}

/* ---- Perfetto ---------------------------------------------------------- */

struct pctx {
	const struct argus_graph *g;
	const struct argus_export_opts *opts;
	struct out o;
	const char *sep;        /* before the next event */
	uint64_t done, total;   /* progress: items walked */
};

/* Count one item; every PROGRESS_EVERY, check for a write error and
 * report progress.  Non-zero stops the walk (-EIO or -ECANCELED). */
static int tick(struct pctx *c)
{
	const struct argus_export_opts *op = c->opts;

	if (++c->done % PROGRESS_EVERY)
		return 0;
	if (out_failed(&c->o))
		return -EIO;
	if (op->progress && op->progress(op->progress_ctx, c->done, c->total))
		return -ECANCELED;
	return 0;
}

static void us(struct out *o, uint64_t ns)
{
	outf(o, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void pevent(struct pctx *c)
{
	outf(&c->o, "%s", c->sep);
	c->sep = ",\n";
}

static bool skipped_by(const struct argus_export_opts *op, const struct argus_thread *t)
{
	if (t->kernel && !op->include_kernel)
		return true;
	if (!op->npids)
		return false;
	for (uint32_t i = 0; i < op->npids; i++)
		if (op->pids[i] == t->pid)
			return false;
	return true;
}

static bool thread_skipped(const struct pctx *c, const struct argus_thread *t)
{
	return skipped_by(c->opts, t);
}

/*
 * The slice drawn for segment id, in ns since min_ts: [*s, *e].  false when
 * the segment is not exported (kernel thread, outside the window).
 * next_start: start of the thread's next segment, UINT64_MAX if none.
 */
static bool slice_of(const struct pctx *c, uint32_t id, uint64_t next_start,
		     uint64_t *s, uint64_t *e)
{
	const struct argus_graph *g = c->g;
	const struct argus_segment *sg = &SEGS(g)[id];
	uint64_t from = c->opts->from_ts, to = c->opts->to_ts;
	uint64_t a = sg->start, b = sg->end, lim;

	if (thread_skipped(c, &THRS(g)[sg->thread]))
		return false;
	if ((from && b < from) || (to && a > to))
		return false;
	if (from && a < from)
		a = from;
	if (to && b > to)
		b = to;
	if (b - a < MIN_SLICE_NS)
		b = a + MIN_SLICE_NS;
	lim = next_start > TOUCH_GAP_NS ? next_start - TOUCH_GAP_NS : 0;
	if (b > lim)
		b = lim > a ? lim : a;
	*s = rel(g, a);
	*e = rel(g, b);
	return true;
}

static uint64_t next_start_of(const struct argus_graph *g, uint32_t id)
{
	uint32_t n = argus_graph__seg_next(g, id);

	return n == ARGUS_NONE ? UINT64_MAX : SEGS(g)[n].start;
}

/* ts (absolute) as ns since min_ts, inside [s, e] and away from its edges. */
static uint64_t flow_ts(const struct argus_graph *g, uint64_t ts, uint64_t s,
			uint64_t e)
{
	uint64_t m = (e - s) / 4, t = rel(g, ts);

	if (m > FLOW_MARGIN_NS)
		m = FLOW_MARGIN_NS;
	if (t < s + m)
		t = s + m;
	if (t > e - m)
		t = e - m;
	return t;
}

struct pid_ent {
	uint32_t pid, thr;
};

static int cmp_pid_ent(const void *a, const void *b)
{
	const struct pid_ent *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->thr < y->thr ? -1 : x->thr > y->thr;
}

static void meta(struct pctx *c, const char *what, uint32_t pid, uint32_t tid,
		 const char *name)
{
	pevent(c);
	outf(&c->o, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32
	     ",\"tid\":%" PRIu32 ",\"args\":{\"name\":", what, pid, tid);
	json_str(&c->o, name);
	outf(&c->o, "}}");
}

/* process_name once per pid (named after its main thread when seen),
 * thread_name per thread.  Unnamed ones are left to the viewer. */
static int write_names(struct pctx *c)
{
	const struct argus_graph *g = c->g;
	struct pid_ent *v = malloc(((size_t)g->thr.n + 1) * sizeof(*v));
	uint32_t n = 0;
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->thr.n; i++)
		if (!thread_skipped(c, &THRS(g)[i]))
			v[n++] = (struct pid_ent){ THRS(g)[i].pid, i };
	qsort(v, n, sizeof(*v), cmp_pid_ent);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i, best = v[i].thr;
		const char *name;

		for (; j < n && v[j].pid == v[i].pid; j++)
			if (THRS(g)[v[j].thr].tid == v[i].pid)
				best = v[j].thr;
		name = str_of(g, THRS(g)[best].process);
		if (name)
			meta(c, "process_name", v[i].pid, v[i].pid, name);
		i = j;
	}
	free(v);
	for (uint32_t i = 0; i < g->thr.n && !rc; i++) {
		const struct argus_thread *t = &THRS(g)[i];
		const char *name = str_of(g, t->comm);

		if (!thread_skipped(c, t) && name)
			meta(c, "thread_name", t->pid, t->tid, name);
		rc = tick(c);
	}
	return rc;
}

/* Slice name: the syscall the segment ended waiting in ("read"),
 * "running" when the trace ended first, else the thread's name. */
static void slice_name(struct pctx *c, const struct argus_segment *s,
		       const struct argus_thread *t)
{
	char buf[32];
	const char *name = wait_sys(s, buf, sizeof(buf));

	if (!name && s->end_reason == ARGUS_END_TRACE)
		name = "running";
	if (!name)
		name = str_of(c->g, t->comm);
	json_str(&c->o, name ? name : "?");
}

static void write_slice(struct pctx *c, uint32_t id, uint64_t s, uint64_t e)
{
	const struct argus_segment *sg = &SEGS(c->g)[id];
	const struct argus_thread *t = &THRS(c->g)[sg->thread];
	struct out *o = &c->o;
	char buf[32];

	pevent(c);
	outf(o, "{\"ph\":\"X\",\"cat\":\"segment\",\"pid\":%" PRIu32
	     ",\"tid\":%" PRIu32 ",\"ts\":", t->pid, t->tid);
	us(o, s);
	outf(o, ",\"dur\":");
	us(o, e - s);
	outf(o, ",\"name\":");
	slice_name(c, sg, t);
	outf(o, ",\"args\":{\"seg\":%" PRIu32 ",\"oncpu_us\":", id);
	us(o, sg->oncpu);
	outf(o, ",\"woken_by\":");
	json_str(o, argus_woken_by_str(sg->woken_by));
	outf(o, ",\"start\":");
	json_str(o, argus_seg_start_str(sg->start_reason));
	outf(o, ",\"end\":");
	json_str(o, argus_seg_end_str(sg->end_reason));
	if (sg->end_reason == ARGUS_END_WAIT) {
		outf(o, ",\"wait\":");
		json_str(o, wait_sys(sg, buf, sizeof(buf)));
		if (sg->wait_obj)
			outf(o, ",\"obj\":\"%s\"",
			     argus_obj_kind_str(OBJS(c->g)[sg->wait_obj].kind));
		if (sg->wait_ns) {
			outf(o, ",\"wait_us\":");
			us(o, sg->wait_ns);
		}
	}
	outf(o, "}}");
}

static int write_slices(struct pctx *c)
{
	const struct argus_graph *g = c->g;
	int rc = 0;

	for (uint32_t t = 0; t < g->thr.n && !rc; t++) {
		const uint32_t *v;
		uint32_t n = argus_graph__thread_segments(g, t, &v);

		for (uint32_t i = 0; i < n && !rc; i++) {
			uint64_t next = i + 1 < n ? SEGS(g)[v[i + 1]].start :
					UINT64_MAX, s, e;

			if (slice_of(c, v[i], next, &s, &e))
				write_slice(c, v[i], s, e);
			rc = tick(c);
		}
	}
	return rc;
}

static void flow_end(struct pctx *c, char ph, uint32_t edge, unsigned etype,
		     uint32_t seg, uint64_t ts)
{
	const struct argus_thread *t = &THRS(c->g)[SEGS(c->g)[seg].thread];
	const char *type = argus_edge_type_str(etype);

	pevent(c);
	outf(&c->o, "{\"ph\":\"%c\",%s\"id\":%" PRIu32 ",\"pid\":%" PRIu32
	     ",\"tid\":%" PRIu32 ",\"ts\":", ph, ph == 'f' ? "\"bp\":\"e\"," : "",
	     edge, t->pid, t->tid);
	us(&c->o, ts);
	outf(&c->o, ",\"cat\":\"argus\",\"name\":\"%s\"}", type ? type : "?");
}

static int write_flows(struct pctx *c)
{
	const struct argus_graph *g = c->g;
	int rc = 0;

	/* the stored edges: the INTRA ones, not stored, are weak (no flow) */
	for (uint32_t i = 0; i < g->edge.n && !rc; i++) {
		const struct argus_edge *e = &EDGES(g)[i];
		uint32_t id = i < g->intra_base ? i : i + g->nintra;
		uint64_t ss, se, ds, de;

		rc = tick(c);
		if (!argus_edge_type_strong(e->type) ||
		    !slice_of(c, e->src, next_start_of(g, e->src), &ss, &se) ||
		    !slice_of(c, e->dst, next_start_of(g, e->dst), &ds, &de))
			continue;
		flow_end(c, 's', id, e->type, e->src, flow_ts(g, e->src_ts, ss, se));
		flow_end(c, 'f', id, e->type, e->dst, flow_ts(g, e->dst_ts, ds, de));
	}
	return rc;
}

/* opts (any older, shorter version of the struct) over the defaults into
 * *op; -EINVAL when they are not usable. */
static int export_opts(const struct argus_export_opts *opts, struct argus_export_opts *op)
{
	static const struct argus_export_opts defaults = { .sz = sizeof(defaults) };

	*op = defaults;
	if (opts) {
		if (opts->sz < offsetof(struct argus_export_opts, progress))
			return -EINVAL;
		memcpy(op, opts, opts->sz < sizeof(*op) ? opts->sz : sizeof(*op));
		op->sz = sizeof(*op);
	}
	if ((op->from_ts && op->to_ts && op->to_ts < op->from_ts) || (op->npids && !op->pids))
		return -EINVAL;
	return 0;
}

int argus_graph__write_perfetto(const struct argus_graph *g,
				const struct argus_export_opts *opts,
				FILE *f)
{
	struct argus_export_opts op;
	struct pctx c = { .g = g, .o = { .f = f }, .sep = "\n" };
	int rc;

	if (!g || !f || export_opts(opts, &op))
		return -EINVAL;
	c.opts = &op;
	c.total = (uint64_t)g->thr.n + g->seg.n + g->edge.n;
	outf(&c.o, "{\"traceEvents\":[");
	if (!(rc = write_names(&c)) && !(rc = write_slices(&c)))
		rc = write_flows(&c);
	if (rc)
		return rc == -EIO || out_failed(&c.o) ? -EIO : rc;
	outf(&c.o, "\n],\"displayTimeUnit\":\"ns\"}\n");
	return out_finish(&c.o);
}

int argus_graph__write_dot_window(const struct argus_graph *g,
				  const struct argus_export_opts *opts,
				  FILE *f)
{
	struct argus_export_opts op;
	uint32_t *ids, n = 0;
	int rc;

	if (!g || !f || export_opts(opts, &op))
		return -EINVAL;
	ids = malloc(((size_t)g->seg.n + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->seg.n; i++) {
		const struct argus_segment *sg = &SEGS(g)[i];

		if (skipped_by(&op, &THRS(g)[sg->thread]) ||
		    (op.from_ts && sg->end < op.from_ts) || (op.to_ts && sg->start > op.to_ts))
			continue;
		ids[n++] = i;
	}
	rc = argus_graph__write_dot(g, ids, n, f);
	free(ids);
	return rc;
}
