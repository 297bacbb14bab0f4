/* test_event_format.c - the one event formatter (graphlib/event_format.c,
 * argus_event_format.h) as a specification: one spelling of syscalls,
 * objects and types in the text line, the JSON object and the field
 * helpers; every type's JSON is one valid object on one line; untrusted
 * strings are exact in JSON and escaped in the text.  Events are built by
 * hand (no trace: strings and comms come from the formatter's options, as
 * argus-rawdump gives them).  Each TEST is one behaviour. */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_event_format.h"
#include "argus_events.h"
#include "check.h"
#include "trace_format.h"

/* ---- a strict JSON checker (RFC 8259 values, no extensions) ---- */

static const char *jv(const char *p);

static const char *jws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *jstr(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;    /* a raw control byte */
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *jv(const char *p)
{
	p = jws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = jws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				if (!(p = jstr(jws(p))))
					return NULL;
				p = jws(p);
				if (*p++ != ':')
					return NULL;
			}
			if (!(p = jv(p)))
				return NULL;
			p = jws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return jstr(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

/* one JSON object, then exactly one newline, nothing else */
static bool one_json_line(const char *s)
{
	const char *end = *jws(s) == '{' ? jv(s) : NULL;

	return end && !strcmp(end, "\n");
}

/* ---- formatting into a string ---- */

static const char *comm_of(void *arg, uint32_t tid)
{
	(void)arg;
	return tid == 42 ? "writer" : tid == 43 ? "bad\x1b]0;x\x07name" : NULL;
}

static char out[8192];

static const char *fmt(const struct argus_event *e, bool json)
{
	struct argus_event_fmt o = { .str = "a\x1b" "b\xc3\xa9", .str2 = "/bin/x",
				     .comm = comm_of };
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (!f)
		return "";
	if (json)
		argus_event__write_json(f, &o, e);
	else
		argus_event__write_text(f, &o, e);
	fclose(f);
	return out;
}

static struct argus_event ev(uint16_t type)
{
	struct argus_event e = { .ts = 5123456789ull, .tid = 42, .pid = 41, .type = type, .cpu = 1 };

	return e;
}

static bool has(const char *s, const char *sub)
{
	if (strstr(s, sub))
		return true;
	fprintf(stderr, "    missing %s in: %s", sub, s);
	return false;
}

/* ---- the behaviours ---- */

static void TEST_the_json_checker_rejects_what_it_must(void)
{
	CHECK(one_json_line("{\"a\":[1,-2,\"x\\u001b\"],\"b\":null}\n"));
	CHECK(!one_json_line("{\"a\":1}"));            /* no newline */
	CHECK(!one_json_line("{\"a\":1}\n{}\n"));      /* two objects */
	CHECK(!one_json_line("{\"a\":\"\x1b\"}\n"));   /* a raw control byte */
	CHECK(!one_json_line("{\"a\":1,}\n"));
	CHECK(!one_json_line("{a:1}\n"));
}

static void TEST_unknown_syscall_is_sys_N_everywhere(void)
{
	struct argus_event e = ev(AE_SYS_EXIT);
	char b[32];

	e.f[ARGUS_F_SX_NR] = 999;
	e.f[ARGUS_F_SX_RET] = (uint64_t)-11;
	CHECK(has(fmt(&e, false), " sys_999 = -11 arg0=0"));
	CHECK(has(fmt(&e, true), "\"sys\":\"sys_999\",\"nr\":999,\"ret\":-11"));
	CHECK(!strcmp(argus_event_fmt_sys(999, b, sizeof(b)), "sys_999"));
	CHECK(!strcmp(argus_event_fmt_sys(0, b, sizeof(b)), "read"));
	CHECK(!strcmp(argus_event_fmt_sys(-1, b, sizeof(b)), "-"));
}

static void TEST_tcp_object_is_ip_port_in_text_json_and_helper(void)
{
	/* host-order address above the port: 10.0.0.1:80 -> 10.0.0.2:5000 */
	uint64_t a = (0x0a000001ull << 16) | 80, p = (0x0a000002ull << 16) | 5000;
	struct argus_event e = ev(AE_SYS_EXIT);
	char b[96];

	e.f[ARGUS_F_SX_OBJ_KIND] = AE_OBJ_TCP;
	e.f[ARGUS_F_SX_OBJ] = a;
	e.f[ARGUS_F_SX_PEER] = p;
	CHECK(!strcmp(argus_event_fmt_obj(AE_OBJ_TCP, a, p, b, sizeof(b)),
		      "tcp:10.0.0.1:80->10.0.0.2:5000"));
	CHECK(has(fmt(&e, false), " obj=tcp:10.0.0.1:80->10.0.0.2:5000"));
	CHECK(has(fmt(&e, true), "\"text\":\"tcp:10.0.0.1:80->10.0.0.2:5000\""));
	CHECK(!strcmp(argus_event_fmt_obj(AE_OBJ_UNIX, 0x1a2b, 0x1a2c, b, sizeof(b)),
		      "unix:0x1a2b->0x1a2c"));
	CHECK(!strcmp(argus_event_fmt_obj(AE_OBJ_PIPE, 0x1a2b, 0, b, sizeof(b)), "pipe:0x1a2b"));
	CHECK(!strcmp(argus_event_fmt_obj(0, 1, 2, b, sizeof(b)), ""));
}

static void TEST_every_type_is_one_valid_json_line_and_one_text_line(void)
{
	for (unsigned t = 0; t < AE_TYPE_MAX + 2; t++) {
		struct argus_event e = ev((uint16_t)t);
		char want[64];
		const char *s;

		for (int i = 0; i < ARGUS_NFIELDS; i++)
			e.f[i] = 0x1000u * (i + 1);     /* every slot set */
		e.f[ARGUS_F_SE_NR] = 202;           /* sys_* and switch: a real nr */
		e.ctx = t % 4;
		s = fmt(&e, true);
		if (!one_json_line(s)) {
			fprintf(stderr, "    type %u: not one JSON object line: %s", t, s);
			CHECK(!"valid JSON");
		}
		snprintf(want, sizeof(want), "\"type\":\"%s\",\"type_nr\":%u",
			 argus_event_fmt_type(t), t);
		CHECK(has(s, want));
		s = fmt(&e, false);
		CHECK(strchr(s, '\n') == s + strlen(s) - 1);
		snprintf(want, sizeof(want), ": %-14s", argus_event_fmt_type(t));
		CHECK(has(s, want));
	}
	CHECK(!strcmp(argus_event_fmt_type(27), "unknown"));
	CHECK(!strcmp(argus_event_fmt_type(AE_SWITCH), "switch"));
}

static void TEST_unknown_type_keeps_its_raw_fields_in_json(void)
{
	struct argus_event e = ev(27);

	e.f[0] = 7;
	CHECK(has(fmt(&e, false), ": unknown       \n"));
	CHECK(has(fmt(&e, true), "\"type\":\"unknown\",\"type_nr\":27"));
	CHECK(has(fmt(&e, true), "\"fields\":[7,0,0,0,0,0,0,0]"));
}

static void TEST_untrusted_strings_exact_in_json_escaped_in_text(void)
{
	struct argus_event e = ev(AE_FORK);
	const char *s;

	e.tid = 43;
	e.f[ARGUS_F_TK_CHILD_TID] = 44;
	s = fmt(&e, true);
	CHECK(has(s, "\"comm\":\"bad\\u001b]0;x\\u0007name\""));
	CHECK(has(s, "\"child_comm\":\"a\\u001bb\xc3\xa9\""));
	s = fmt(&e, false);
	CHECK(has(s, "bad\\x1b]0;x\\x07name"));
	CHECK(has(s, " comm=a\\x1bb\xc3\xa9"));
	CHECK(!strchr(s, '\x1b') && !strchr(s, '\x07'));
}

static void TEST_switch_names_next_and_the_blocking_call(void)
{
	struct argus_event e = ev(AE_SWITCH);
	const char *s;

	e.f[ARGUS_F_SW_NEXT_TID] = 42;
	e.f[ARGUS_F_SW_NEXT_PID] = 41;
	e.f[ARGUS_F_SW_PREV_STATE] = 1;
	e.f[ARGUS_F_SW_SYS_NR] = 202;
	e.f[ARGUS_F_SW_SYS_ARG] = 0x55aa;
	s = fmt(&e, false);
	CHECK(has(s, " prev_state=0x1 next=writer:42/41 blocked_in futex(0x55aa)"));
	s = fmt(&e, true);
	CHECK(has(s, "\"next_comm\":\"writer\",\"next_tid\":42,\"next_pid\":41"));
	CHECK(has(s, "\"blocked_in\":\"futex\",\"blocked_nr\":202,\"blocked_arg\":21930"));
	/* preempted (prev_state 0): no blocking call in either */
	e.f[ARGUS_F_SW_PREV_STATE] = 0;
	CHECK(!strstr(fmt(&e, false), "blocked_in"));
	CHECK(!strstr(fmt(&e, true), "blocked_in"));
	/* a tid with no known comm */
	e.f[ARGUS_F_SW_NEXT_TID] = 7;
	CHECK(has(fmt(&e, false), " next=?:7/41"));
	CHECK(has(fmt(&e, true), "\"next_comm\":null"));
}

static void TEST_text_header_and_context(void)
{
	struct argus_event e = ev(AE_SAMPLE);

	e.ctx = AE_CTX_HARDIRQ;
	CHECK(!strcmp(fmt(&e, false),
		      "          writer      42/41      [001]     5.123456789: sample         ctx=hardirq\n"));
	CHECK(!strcmp(fmt(&e, true),
		      "{\"ts\":5123456789,\"comm\":\"writer\",\"tid\":42,\"pid\":41,\"cpu\":1,"
		      "\"type\":\"sample\",\"type_nr\":20,\"ctx\":\"hardirq\"}\n"));
	CHECK(!strcmp(argus_event_fmt_ctx(AE_CTX_TASK), "task"));
	CHECK(!strcmp(argus_event_fmt_ctx(9), "?"));
}

int main(void)
{
	RUN(TEST_the_json_checker_rejects_what_it_must);
	RUN(TEST_unknown_syscall_is_sys_N_everywhere);
	RUN(TEST_tcp_object_is_ip_port_in_text_json_and_helper);
	RUN(TEST_every_type_is_one_valid_json_line_and_one_text_line);
	RUN(TEST_unknown_type_keeps_its_raw_fields_in_json);
	RUN(TEST_untrusted_strings_exact_in_json_escaped_in_text);
	RUN(TEST_switch_names_next_and_the_blocking_call);
	RUN(TEST_text_header_and_context);
	return check_report();
}
