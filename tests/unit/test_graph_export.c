/* test_graph_export.c - the graph exports (graphlib/graph_export.c,
 * docs/graph.md "Exports") as a specification, on one small synthetic
 * trace written with tests/gen/tracegen.h:
 *
 *   R (tid 200, "reader")     runs, blocks in read(3) on pipe 0x1234
 *   W (tid 100, an untrusted  runs, write()s 4 bytes on the pipe, wakes R,
 *      comm: quote, backslash, then blocks in nanosleep(5 ms)
 *      control and non-UTF-8
 *      bytes)
 *   R                         wakes, reads the 4 bytes, blocks in read again,
 *                             and is switched in once more at the very end
 *                             (a zero-length segment)
 *   K (tid 50, "kworker/0:1") a kernel thread that runs and waits
 *
 * Every output is parsed by a strict JSON checker (the JSON ones) or
 * checked for balance (DOT), then its values are looked up.  Each TEST is
 * one behaviour. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "tracegen.h"
#include "trace_format.h"

#define T0 1000000000000ull     /* the trace's first event */
#define MS 1000000ull
#define US 1000ull
#define W_TID 100
#define R_TID 200
#define K_TID 50
#define PIPE_INO 0x1234
/* 13 bytes: w e " i r d \ n a ^A 0xff é (valid 2-byte UTF-8) */
#define W_COMM "we\"ird\\na\x01\xff\xc3\xa9"

static char trace_path[64];
static struct argus_trace *trace;
static struct argus_graph *graph;

/* ---- the scenario ------------------------------------------------------ */

static int write_trace(const char *path)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };
	struct argus_error err = { 0 };
	struct argus_tracegen *g = argus_tracegen__open(path, &o, &err);
	uint64_t rd[6] = { 3 }, wr[6] = { 4 }, ns[6] = { 0 };

	if (!g) {
		fprintf(stderr, "tracegen: %s\n", err.msg);
		return -1;
	}
	argus_tracegen__task(g, W_TID, W_TID, 1, W_COMM);
	argus_tracegen__task(g, R_TID, R_TID, 1, "reader");
	argus_tracegen__task(g, K_TID, K_TID, 2, "kworker/0:1");
	/* R: first segment, ends blocked in read on the pipe */
	argus_tracegen__run(g, T0, 1, R_TID, R_TID);
	argus_tracegen__sys_enter(g, T0 + 1 * MS, 1, R_TID, R_TID, SYS_read, rd);
	argus_tracegen__block(g, T0 + 2 * MS, 1, R_TID, R_TID, SYS_read, 3,
			      AE_OBJ_PIPE, PIPE_INO, 0);
	/* W: writes 4 bytes, wakes R */
	argus_tracegen__run(g, T0 + 2500 * US, 0, W_TID, W_TID);
	argus_tracegen__sys_enter(g, T0 + 3 * MS, 0, W_TID, W_TID, SYS_write, wr);
	argus_tracegen__wake(g, T0 + 3500 * US, 0, W_TID, W_TID, R_TID, R_TID);
	argus_tracegen__sys_exit(g, T0 + 4 * MS, 0, W_TID, W_TID, SYS_write, 4, 4,
				 AE_OBJ_PIPE, PIPE_INO, 0);
	/* R: second segment reads them */
	argus_tracegen__run(g, T0 + 5 * MS, 1, R_TID, R_TID);
	argus_tracegen__sys_exit(g, T0 + 6 * MS, 1, R_TID, R_TID, SYS_read, 4, 3,
				 AE_OBJ_PIPE, PIPE_INO, 0);
	argus_tracegen__sys_enter(g, T0 + 6500 * US, 1, R_TID, R_TID, SYS_read, rd);
	argus_tracegen__block(g, T0 + 7 * MS, 1, R_TID, R_TID, SYS_read, 3,
			      AE_OBJ_PIPE, PIPE_INO, 0);
	/* W sleeps 5 ms */
	ns[0] = 5 * MS;
	argus_tracegen__sys_enter(g, T0 + 7500 * US, 0, W_TID, W_TID, SYS_nanosleep, ns);
	argus_tracegen__block(g, T0 + 8 * MS, 0, W_TID, W_TID, SYS_nanosleep, 5 * MS,
			      AE_OBJ_NONE, 0, 0);
	/* K: a kernel thread's segment */
	argus_tracegen__run(g, T0 + 9 * MS, 2, K_TID, K_TID);
	argus_tracegen__sw(g, T0 + 9500 * US, 2, K_TID, K_TID, ARGUS_TG_IDLE, -1, 0,
			   AE_OBJ_NONE, 0, 0, 0, 0);
	/* R: switched in as the trace ends: a zero-length segment */
	argus_tracegen__run(g, T0 + 10 * MS, 1, R_TID, R_TID);
	return argus_tracegen__close(g);
}

/* ---- output capture ---------------------------------------------------- */

/* What a writer printed, NUL-terminated (malloc'd), and its return code. */
struct output {
	char *text;
	size_t len;
	int rc;
};

enum which { DOT, JSON, PERFETTO };

static struct output run(enum which w, const uint32_t *segs, uint32_t n,
			 const struct argus_export_opts *eo)
{
	struct output o = { 0 };
	FILE *f = open_memstream(&o.text, &o.len);

	if (!f) {
		o.rc = -ENOMEM;
		return o;
	}
	o.rc = w == DOT && eo ? argus_graph__write_dot_window(graph, eo, f) :
	       w == DOT ? argus_graph__write_dot(graph, segs, n, f) :
	       w == JSON ? argus_graph__write_json(graph, segs, n, f) :
	       argus_graph__write_perfetto(graph, eo, f);
	fclose(f);
	return o;
}

/* Every segment id of the graph. */
static uint32_t all_segments(uint32_t *v, uint32_t max)
{
	uint32_t n = argus_graph__nsegments(graph);

	for (uint32_t i = 0; i < n && i < max; i++)
		v[i] = i;
	return n < max ? n : max;
}

/* The segments of thread tid, time-ordered. */
static uint32_t segments_of(uint32_t tid, const uint32_t **v)
{
	uint32_t t = argus_graph__thread_by_tid(graph, tid);

	return t == ARGUS_NONE ? 0 : argus_graph__thread_segments(graph, t, v);
}

/* ---- a strict JSON checker (RFC 8259) ----------------------------------- */

static const char *jvalue(const char *p, int depth);

static const char *jws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *jstring(const char *p)
{
	const unsigned char *s = (const unsigned char *)p;

	if (*s++ != '"')
		return NULL;
	while (*s != '"') {
		if (*s < 0x20)
			return NULL;            /* raw control byte (or the end) */
		if (*s == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
						return NULL;
				s += 5;
			} else if (*s && strchr("\"\\/bfnrt", *s)) {
				s++;
			} else {
				return NULL;
			}
		} else if (*s < 0x80) {
			s++;
		} else {                        /* raw UTF-8 must be well formed */
			int n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 ? 2 : 0;

			if (!n || *s > 0xf4)
				return NULL;
			for (int i = 1; i < n; i++)
				if ((s[i] & 0xc0) != 0x80)
					return NULL;
			s += n;
		}
	}
	return (const char *)s + 1;
}

static const char *jnumber(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p;
}

static const char *jcontainer(const char *p, int depth, char close)
{
	bool obj = close == '}';

	p = jws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (!(p = jstring(p)))
				return NULL;
			p = jws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = jvalue(p, depth + 1)))
			return NULL;
		p = jws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = jws(p);
	}
}

static const char *jvalue(const char *p, int depth)
{
	p = jws(p);
	if (depth > 64)
		return NULL;
	switch (*p) {
	case '{': return jcontainer(p, depth, '}');
	case '[': return jcontainer(p, depth, ']');
	case '"': return jstring(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return jnumber(p);
	}
}

static bool json_valid(const char *text)
{
	const char *end = text ? jvalue(text, 0) : NULL;

	if (!end)
		return false;
	return *jws(end) == 0;
}

/* ---- helpers over the outputs ------------------------------------------ */

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The line of text containing needle (static buffer), or "". */
static const char *line_with(const char *text, const char *needle)
{
	static char buf[4096];
	const char *p = strstr(text, needle), *a, *b;

	if (!p)
		return "";
	for (a = p; a > text && a[-1] != '\n'; a--)
		;
	b = strchr(p, '\n');
	if (!b)
		b = p + strlen(p);
	snprintf(buf, sizeof(buf), "%.*s", (int)(b - a), a);
	return buf;
}

/* "key":123.456 (µs, 3 decimals) in line, as ns; -1 if absent or not in
 * that form. */
static int64_t us_field(const char *line, const char *key)
{
	char k[64];
	const char *p;
	char *end;
	unsigned long long whole, frac;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	if (!p)
		return -1;
	p += strlen(k);
	whole = strtoull(p, &end, 10);
	if (end == p || *end != '.' || strspn(end + 1, "0123456789") != 3)
		return -1;
	frac = strtoull(end + 1, NULL, 10);
	return (int64_t)(whole * 1000 + frac);
}

static long long int_field(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* ---- tests ------------------------------------------------------------- */

static void TEST_the_scenario_builds_the_expected_graph(void)
{
	const uint32_t *r, *w;
	uint32_t nr = segments_of(R_TID, &r), nw = segments_of(W_TID, &w);
	struct argus_edge msg_buf;
	const struct argus_edge *msg = NULL;

	CHECK_EQ(nr, 3);
	CHECK_EQ(nw, 1);
	CHECK(segments_of(K_TID, &w) >= 1);
	for (uint32_t i = 0; i < argus_graph__nedges(graph); i++)
		if (argus_graph__edge(graph, i, ARGUS_EDGE_BUF)->type == ARGUS_EDGE_MESSAGE)
			msg = argus_graph__edge(graph, i, &msg_buf);
	CHECK(msg != NULL);
	if (msg && nr == 3) {
		CHECK_EQ(msg->dst, r[1]);
		CHECK_EQ(msg->bytes, 4);
		CHECK(msg->flags & ARGUS_EDGE_F_WOKE);
	}
}

static void TEST_json_subgraph_is_valid_json_with_every_field(void)
{
	uint32_t v[64], n = all_segments(v, 64);
	struct output o = run(JSON, v, n, NULL);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	CHECK(!strncmp(o.text, "{\"nodes\":[", 10));
	CHECK(strstr(o.text, "],\"edges\":[") != NULL);
	CHECK_EQ(count(o.text, "{\"id\":"), n + argus_graph__nedges(graph));
	for (const char *k = "tid\0pid\0comm\0process\0start_ns\0end_ns\0oncpu_ns\0"
			     "start_reason\0end_reason\0woken_by\0wait\0nevents\0"
			     "nsamples\0flags\0src\0dst\0type\0src_ts\0dst_ts\0bytes\0woke\0";
	     *k; k += strlen(k) + 1) {
		char key[32];

		snprintf(key, sizeof(key), "\"%s\":", k);
		if (!strstr(o.text, key))
			fprintf(stderr, "  missing key %s\n", key);
		CHECK(strstr(o.text, key) != NULL);
	}
	free(o.text);
}

static void TEST_json_escapes_untrusted_names(void)
{
	const uint32_t *w;
	uint32_t nw = segments_of(W_TID, &w);
	struct output o = run(JSON, w, nw, NULL);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	/* quote and backslash escaped, ^A and the stray 0xff as \u00XX, the
	 * valid UTF-8 é passed through */
	CHECK(strstr(o.text, "\"comm\":\"we\\\"ird\\\\na\\u0001\\u00ff\xc3\xa9\"") != NULL);
	CHECK(strstr(o.text, "\"process\":\"we\\\"ird\\\\na\\u0001\\u00ff\xc3\xa9\"") != NULL);
	free(o.text);
}

/* What a terminal would act on (ESC, BEL, CSI as C1 or as a lone byte)
 * or read as a new line comes out as visible text, one-to-one (the
 * backslash is escaped too), and printable UTF-8 passes. */
static void TEST_text_escape_leaves_nothing_a_terminal_acts_on(void)
{
	char buf[128];
	size_t n;

	n = argus_text_escape("a\x1b]0;PWNED\x07\x1b[2K\nsshd 1/1\\x\xc2\x9b\x9b\r\t\xc3\xa9",
			      buf, sizeof(buf));
	CHECK(!strcmp(buf, "a\\x1b]0;PWNED\\x07\\x1b[2K\\nsshd 1/1\\\\x\\u009b\\x9b\\r\\t\xc3\xa9"));
	CHECK_EQ(n, strlen(buf));
	for (const char *p = buf; *p; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	/* cut only between whole sequences, and the need is still told */
	n = argus_text_escape("ab\x1b", buf, 5);
	CHECK(!strcmp(buf, "ab"));
	CHECK_EQ(n, 6);
	CHECK_EQ(argus_text_escape(NULL, buf, sizeof(buf)), 0);
	CHECK(!strcmp(buf, ""));
}

/* A name holding a bidi override shows "exe.txt" for "txt.exe": the
 * controls that reorder or hide text are escaped, visible characters of
 * every script pass, and JSON keeps the exact string. */
static void TEST_text_escape_shows_bidi_and_format_controls(void)
{
	char buf[256];
	size_t n;

	/* U+202E RLO, U+2066 LRI, U+2069 PDI, U+200E LRM, U+200F RLM, U+061C ALM,
	 * U+200B ZWSP, U+FEFF, U+E0041 (a tag) */
	n = argus_text_escape("a\xe2\x80\xaetxt.exe|\xe2\x81\xa6x\xe2\x81\xa9|\xe2\x80\x8e\xe2\x80\x8f"
			      "\xd8\x9c|\xe2\x80\x8b\xef\xbb\xbf|\xf3\xa0\x81\x81", buf, sizeof(buf));
	CHECK(!strcmp(buf, "a\\u202etxt.exe|\\u2066x\\u2069|\\u200e\\u200f\\u061c|\\u200b\\ufeff|"
			   "\\U000e0041"));
	CHECK_EQ(n, strlen(buf));
	/* letters of other scripts, and an emoji, pass as they are */
	argus_text_escape("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xe2\x82\xac \xf0\x9f\x98\x80",
			  buf, sizeof(buf));
	CHECK(!strcmp(buf, "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xe2\x82\xac \xf0\x9f\x98\x80"));
	/* written to a stream the same way */
	{
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);

		CHECK(f != NULL);
		if (f) {
			CHECK_EQ(argus_text_write_str(f, "x\xe2\x80\xaey"), 0);
			fclose(f);
			CHECK(mem && !strcmp(mem, "x\\u202ey"));
			free(mem);
		}
	}
	/* JSON: the exact string (UTF-8 as it is) */
	{
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);

		CHECK(f != NULL);
		if (f) {
			CHECK_EQ(argus_json_write_str(f, "x\xe2\x80\xaey"), 0);
			fclose(f);
			CHECK(mem && !strcmp(mem, "\"x\xe2\x80\xaey\""));
			free(mem);
		}
	}
}

/* JSON keeps the C1 controls out of a terminal that shows it as well. */
static void TEST_json_escapes_c1_controls(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_EQ(argus_json_write_str(f, "x\xc2\x9b" "2J\xc3\xa9"), 0);
	fclose(f);
	CHECK(!strcmp(text, "\"x\\u009b2J\xc3\xa9\""));
	free(text);
}

static void TEST_json_node_records_the_wait_that_ended_it(void)
{
	const uint32_t *r, *w;
	uint32_t nr = segments_of(R_TID, &r), nw = segments_of(W_TID, &w);
	uint32_t v[2];
	struct output o;
	char want[256];

	if (nr < 3 || nw < 1) {
		CHECK(0);
		return;
	}
	v[0] = r[0];
	v[1] = w[0];
	o = run(JSON, v, 2, NULL);
	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	snprintf(want, sizeof(want), "{\"id\":%u,\"tid\":%u,\"pid\":%u,\"comm\":\"reader\","
		 "\"process\":\"reader\",\"start_ns\":%llu,\"end_ns\":%llu,", r[0], R_TID,
		 R_TID, T0, T0 + 2 * MS);
	CHECK(strstr(o.text, want) != NULL);
	CHECK(strstr(line_with(o.text, want), "\"start_reason\":\"trace-start\","
		      "\"end_reason\":\"wait\",\"woken_by\":\"-\","
		      "\"wait\":{\"syscall\":\"read\",\"obj_kind\":1,\"obj\":4660,"
		      "\"timeout_ns\":null,\"wait_ns\":3000000}") != NULL);
	/* nanosleep's argument is its timeout */
	snprintf(want, sizeof(want), "{\"id\":%u,", w[0]);
	CHECK(strstr(line_with(o.text, want), "\"wait\":{\"syscall\":\"nanosleep\","
		      "\"obj_kind\":0,\"obj\":0,\"timeout_ns\":5000000,\"wait_ns\":null}") != NULL);
	/* no edge joins these two */
	CHECK_EQ(count(o.text, "\"src\":"), 0);
	free(o.text);
}

static void TEST_json_edges_only_among_the_listed_segments(void)
{
	const uint32_t *r, *w;
	uint32_t nr = segments_of(R_TID, &r), nw = segments_of(W_TID, &w);
	uint32_t v[3];
	struct output o;
	char want[256];

	if (nr < 3 || nw < 1) {
		CHECK(0);
		return;
	}
	v[0] = w[0];
	v[1] = r[1];
	v[2] = w[0];                    /* listed twice: written once */
	o = run(JSON, v, 3, NULL);
	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	CHECK_EQ(count(o.text, "\"start_ns\":"), 2);
	CHECK_EQ(count(o.text, "\"src\":"), 1);
	snprintf(want, sizeof(want), "\"src\":%u,\"dst\":%u,\"type\":\"message\","
		 "\"src_ts\":%llu,\"dst_ts\":%llu,\"bytes\":4,\"woke\":true}",
		 w[0], r[1], T0 + 4 * MS, T0 + 6 * MS);
	CHECK(strstr(o.text, want) != NULL);
	free(o.text);
	/* R's three segments: the two weak INTRA edges and nothing else */
	o = run(JSON, r, nr, NULL);
	CHECK(json_valid(o.text));
	CHECK_EQ(count(o.text, "\"type\":\"intra\""), 2);
	CHECK_EQ(count(o.text, "\"src\":"), 2);
	free(o.text);
}

static void TEST_empty_subgraph_is_still_valid(void)
{
	struct output o = run(JSON, NULL, 0, NULL);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	free(o.text);
	o = run(DOT, NULL, 0, NULL);
	CHECK_EQ(o.rc, 0);
	CHECK(strstr(o.text, "digraph argus {") && strstr(o.text, "}\n"));
	free(o.text);
}

static void TEST_subgraph_rejects_bad_segment_ids(void)
{
	uint32_t v[2] = { 0, argus_graph__nsegments(graph) };
	struct output o = run(JSON, v, 2, NULL);

	CHECK_EQ(o.rc, -EINVAL);
	CHECK_EQ(o.len, 0);             /* nothing written */
	free(o.text);
	o = run(DOT, v, 2, NULL);
	CHECK_EQ(o.rc, -EINVAL);
	free(o.text);
}

static void TEST_dot_labels_nodes_and_styles_edges(void)
{
	const uint32_t *r, *w;
	uint32_t nr = segments_of(R_TID, &r), nw = segments_of(W_TID, &w);
	uint32_t v[4];
	struct output o;
	char want[256];
	int depth = 0;

	if (nr < 3 || nw < 1) {
		CHECK(0);
		return;
	}
	memcpy(v, r, 3 * sizeof(*v));
	v[3] = w[0];
	o = run(DOT, v, 4, NULL);
	CHECK_EQ(o.rc, 0);
	CHECK(!strncmp(o.text, "digraph argus {\n", 16));
	for (const char *p = o.text; *p; p++)       /* outside quoted labels */
		if (*p == '"')
			for (p++; *p && *p != '"'; p++)
				p += *p == '\\' && p[1];
		else
			depth += (*p == '{') - (*p == '}');
	CHECK_EQ(depth, 0);
	/* id, comm, tid/pid, start (s since the first event), duration and
	 * on-CPU (ms), the wait: syscall, object and how long it lasted */
	snprintf(want, sizeof(want), "  s%u [label=\"#%u reader 200/200\\nstart 0.000000 s"
		 "  dur 2.000 ms\\non-CPU 2.000 ms\\nwait: read pipe 3.000 ms\"];", r[0], r[0]);
	CHECK(strstr(o.text, want) != NULL);
	snprintf(want, sizeof(want), "  s%u [label=\"#%u we\\\"ird\\\\na\\\\x01\\\\xff\xc3\xa9"
		 " 100/100\\nstart 0.002500 s  dur 5.500 ms\\non-CPU 5.500 ms\\nwait: nanosleep\"];",
		 w[0], w[0]);
	CHECK(strstr(o.text, want) != NULL);
	snprintf(want, sizeof(want), "  s%u [label=\"#%u reader 200/200\\nstart 0.010000 s"
		 "  dur 0.000 ms\\non-CPU 0.000 ms\\nend: trace-end\"];", r[2], r[2]);
	CHECK(strstr(o.text, want) != NULL);
	snprintf(want, sizeof(want), "  s%u -> s%u [label=\"message 4 B\", style=solid];",
		 w[0], r[1]);
	CHECK(strstr(o.text, want) != NULL);
	snprintf(want, sizeof(want), "  s%u -> s%u [label=\"intra\", style=dashed", r[0], r[1]);
	CHECK(strstr(o.text, want) != NULL);
	CHECK_EQ(count(o.text, " -> "), 3);
	free(o.text);
}

/* One Perfetto event per line: check a flow end binds to an X slice of
 * its thread, strictly inside it. */
static bool flow_binds(const char *text, const char *flow)
{
	long long tid = int_field(flow, "tid");
	int64_t ts = us_field(flow, "ts");

	for (const char *p = text; (p = strstr(p, "{\"ph\":\"X\"")); p++) {
		const char *l = line_with(p, "{\"ph\":\"X\"");
		int64_t s = us_field(l, "ts"), d = us_field(l, "dur");

		if (int_field(l, "tid") == tid && s < ts && ts < s + d)
			return true;
	}
	return false;
}

static void TEST_perfetto_is_valid_trace_event_json(void)
{
	struct output o = run(PERFETTO, NULL, 0, NULL);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	CHECK(!strncmp(o.text, "{\"traceEvents\":[", 16));
	CHECK(strstr(o.text, "],\"displayTimeUnit\":\"ns\"}\n") != NULL);
	CHECK(strstr(o.text, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":200,\"tid\":200,"
			     "\"args\":{\"name\":\"reader\"}}") != NULL);
	CHECK(strstr(o.text, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":100,"
			     "\"args\":{\"name\":\"we\\\"ird\\\\na\\u0001\\u00ff\xc3\xa9\"}}") != NULL);
	free(o.text);
}

static void TEST_perfetto_slices_are_segments_in_microseconds(void)
{
	struct output o = run(PERFETTO, NULL, 0, NULL);
	const char *l;

	CHECK_EQ(o.rc, 0);
	/* R's 3 and W's 1; K is a kernel thread, left out by default */
	CHECK_EQ(count(o.text, "\"ph\":\"X\""), 4);
	/* named after the wait that ended them, ts relative to the first event */
	l = line_with(o.text, "\"ph\":\"X\",\"cat\":\"segment\",\"pid\":200,\"tid\":200,\"ts\":0.000,");
	CHECK(strstr(l, "\"dur\":2000.000,\"name\":\"read\"") != NULL);
	CHECK(strstr(l, "\"woken_by\":\"-\",\"start\":\"trace-start\",\"end\":\"wait\","
			"\"wait\":\"read\",\"obj\":\"pipe\",\"wait_us\":3000.000") != NULL);
	l = line_with(o.text, "\"tid\":100,\"ts\":2500.000,");
	CHECK(strstr(l, "\"dur\":5500.000,\"name\":\"nanosleep\"") != NULL);
	/* still running when the trace ended: zero length, drawn 1 µs long */
	l = line_with(o.text, "\"tid\":200,\"ts\":10000.000,");
	CHECK(strstr(l, "\"dur\":1.000,\"name\":\"running\"") != NULL);
	free(o.text);
}

static void TEST_perfetto_flows_bind_inside_their_slices(void)
{
	struct output o = run(PERFETTO, NULL, 0, NULL);
	unsigned nflow = 0;

	CHECK_EQ(o.rc, 0);
	for (const char *p = o.text; (p = strstr(p, "{\"ph\":\"s\"")); p++) {
		char s[4096], f[4096], key[64];   /* as big as line_with()'s buffer */
		long long id;

		/* line_with() returns a static buffer: copy */
		snprintf(s, sizeof(s), "%s", line_with(p, "{\"ph\":\"s\""));
		id = int_field(s, "id");
		snprintf(key, sizeof(key), "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%lld,", id);
		snprintf(f, sizeof(f), "%s", line_with(o.text, key));
		CHECK(*f);
		CHECK(strstr(s, "\"cat\":\"argus\"") && strstr(f, "\"cat\":\"argus\""));
		CHECK(flow_binds(o.text, s));
		CHECK(flow_binds(o.text, f));
		nflow++;
	}
	/* the write -> read message; R's wake at 10 ms has no edge */
	CHECK_EQ(nflow, 1);
	CHECK(strstr(line_with(o.text, "{\"ph\":\"s\""), "\"pid\":100,\"tid\":100,"
		     "\"ts\":4000.000,\"cat\":\"argus\",\"name\":\"message\"}") != NULL);
	/* dst_ts is the read's return at 6 ms, inside R's second slice */
	CHECK(strstr(line_with(o.text, "{\"ph\":\"f\""), "\"pid\":200,\"tid\":200,"
		     "\"ts\":6000.000,") != NULL);
	CHECK_EQ(count(o.text, "\"name\":\"intra\""), 0);
	free(o.text);
}

static void TEST_perfetto_window_keeps_overlapping_segments_clipped(void)
{
	struct argus_export_opts eo = { .sz = sizeof(eo), .from_ts = T0 + 4500 * US,
					.to_ts = T0 + 7500 * US };
	struct output o = run(PERFETTO, NULL, 0, &eo);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	/* W [2.5, 8] clipped to [4.5, 7.5]; R's [5, 7]; R's first and last out */
	CHECK_EQ(count(o.text, "\"ph\":\"X\""), 2);
	CHECK(strstr(o.text, "\"tid\":100,\"ts\":4500.000,\"dur\":3000.000,") != NULL);
	CHECK(strstr(o.text, "\"tid\":200,\"ts\":5000.000,\"dur\":2000.000,") != NULL);
	/* the message's send (4 ms) is moved inside W's clipped slice */
	CHECK_EQ(count(o.text, "\"ph\":\"s\""), 1);
	CHECK(us_field(line_with(o.text, "{\"ph\":\"s\""), "ts") > 4500 * 1000);
	free(o.text);
	eo.from_ts = T0 + 8500 * US;
	eo.to_ts = T0 + 8600 * US;
	o = run(PERFETTO, NULL, 0, &eo);
	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	CHECK_EQ(count(o.text, "\"ph\":\"X\""), 0);
	free(o.text);
	eo.from_ts = T0 + 2 * MS;
	eo.to_ts = T0 + MS;
	o = run(PERFETTO, NULL, 0, &eo);
	CHECK_EQ(o.rc, -EINVAL);
	free(o.text);
}

static void TEST_perfetto_kernel_threads_only_on_request(void)
{
	struct argus_export_opts eo = { .sz = sizeof(eo), .include_kernel = 1 };
	struct output o = run(PERFETTO, NULL, 0, &eo);

	CHECK_EQ(o.rc, 0);
	CHECK(json_valid(o.text));
	CHECK_EQ(count(o.text, "\"ph\":\"X\""), 5);
	CHECK(strstr(o.text, "\"name\":\"thread_name\",\"pid\":50,\"tid\":50,"
			     "\"args\":{\"name\":\"kworker/0:1\"}") != NULL);
	free(o.text);
	o = run(PERFETTO, NULL, 0, NULL);
	CHECK(strstr(o.text, "\"tid\":50") == NULL);
	free(o.text);
}

static void TEST_write_errors_are_eio(void)
{
	FILE *f = fopen("/dev/full", "w");
	uint32_t v[64], n = all_segments(v, 64);

	if (!f) {
		fprintf(stderr, "  (no /dev/full: skipped)\n");
		return;
	}
	CHECK_EQ(argus_graph__write_dot(graph, v, n, f), -EIO);
	clearerr(f);
	CHECK_EQ(argus_graph__write_json(graph, v, n, f), -EIO);
	clearerr(f);
	CHECK_EQ(argus_graph__write_perfetto(graph, NULL, f), -EIO);
	fclose(f);
}

/* export --format dot: the segments the export options select (here one
 * process, then a window) and only the edges among them. */
static void TEST_dot_window_selects_processes_and_time(void)
{
	const uint32_t *r, *w;
	uint32_t nr = segments_of(R_TID, &r), nw = segments_of(W_TID, &w);
	uint32_t only_reader = R_TID;   /* the reader is its own process */
	struct argus_export_opts eo = { .sz = sizeof(eo), .pids = &only_reader, .npids = 1 };
	struct output o;
	char want[64];

	if (nr < 3 || nw < 1) {
		CHECK(0);
		return;
	}
	o = run(DOT, NULL, 0, &eo);
	CHECK_EQ(o.rc, 0);
	CHECK(!strncmp(o.text, "digraph argus {\n", 16));
	CHECK_EQ(count(o.text, "[label=\"#"), nr);          /* every reader segment... */
	CHECK_EQ(count(o.text, " 200/200\\nstart"), nr);
	CHECK_EQ(count(o.text, " 100/100\\nstart"), 0);     /* ...and no writer one */
	snprintf(want, sizeof(want), "  s%u [", w[0]);
	CHECK(strstr(o.text, want) == NULL);
	CHECK(strstr(o.text, "message") == NULL);           /* its source is not in */
	free(o.text);

	/* a window that starts after the reader's first segment ended */
	eo.npids = 0;
	eo.pids = NULL;
	eo.from_ts = argus_graph__segment(graph, r[0])->end + 1;
	o = run(DOT, NULL, 0, &eo);
	CHECK_EQ(o.rc, 0);
	snprintf(want, sizeof(want), "  s%u [", r[0]);
	CHECK(strstr(o.text, want) == NULL);
	snprintf(want, sizeof(want), "  s%u [", r[nr - 1]);
	CHECK(strstr(o.text, want) != NULL);
	free(o.text);

	eo.npids = 1;                                        /* pids missing */
	o = run(DOT, NULL, 0, &eo);
	CHECK_EQ(o.rc, -EINVAL);
	free(o.text);
}

int main(void)
{
	struct argus_error err = { 0 };
	int fd;

	snprintf(trace_path, sizeof(trace_path), "/tmp/test_graph_export.XXXXXX");
	fd = mkstemp(trace_path);
	if (fd < 0 || close(fd) || write_trace(trace_path)) {
		fprintf(stderr, "cannot write the synthetic trace %s\n", trace_path);
		return 1;
	}
	trace = argus_trace__open(trace_path, &err);
	graph = trace ? argus_graph__build(trace, NULL, &err) : NULL;
	if (!graph) {
		fprintf(stderr, "%s\n", err.msg);
		unlink(trace_path);
		return 1;
	}
	RUN(TEST_the_scenario_builds_the_expected_graph);
	RUN(TEST_json_subgraph_is_valid_json_with_every_field);
	RUN(TEST_json_escapes_untrusted_names);
	RUN(TEST_text_escape_leaves_nothing_a_terminal_acts_on);
	RUN(TEST_text_escape_shows_bidi_and_format_controls);
	RUN(TEST_json_escapes_c1_controls);
	RUN(TEST_json_node_records_the_wait_that_ended_it);
	RUN(TEST_json_edges_only_among_the_listed_segments);
	RUN(TEST_empty_subgraph_is_still_valid);
	RUN(TEST_subgraph_rejects_bad_segment_ids);
	RUN(TEST_dot_labels_nodes_and_styles_edges);
	RUN(TEST_dot_window_selects_processes_and_time);
	RUN(TEST_perfetto_is_valid_trace_event_json);
	RUN(TEST_perfetto_slices_are_segments_in_microseconds);
	RUN(TEST_perfetto_flows_bind_inside_their_slices);
	RUN(TEST_perfetto_window_keeps_overlapping_segments_clipped);
	RUN(TEST_perfetto_kernel_threads_only_on_request);
	RUN(TEST_write_errors_are_eio);
	argus_graph__free(graph);
	argus_trace__close(trace);
	unlink(trace_path);
	return check_report();
}
