/* test_schema.c - the user schema (docs/schema.md) as a specification: what
 * each rule line parses into, how every kind of bad line is reported (the
 * line number and the bad word), and how rules match hand-built events.
 * The docs' examples are copied here and must equal the docs' blocks.
 * Each TEST is one behaviour. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "schema.h"
#include "syscall_names.h"
#include "trace_format.h"

#ifndef ARGUS_SCHEMA_DOC
#error "ARGUS_SCHEMA_DOC must name docs/schema.md"
#endif

#define NAME "t.schema"

static struct argus_schema *parse(const char *text)
{
	struct argus_error err;
	struct argus_schema *s;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(text, strlen(text), NAME, &err);
	if (!s)
		fprintf(stderr, "  unexpected error: %s\n", err.msg);
	return s;
}

/* 1 when `text` fails at `line` with a message "t.schema:LINE: ..." that
 * contains every one of the NULL-terminated needles. */
static int fails_at_n(const char *text, size_t len, unsigned line, ...)
{
	struct argus_error err;
	struct argus_schema *s;
	char prefix[64];
	const char *needle;
	int ok = 1;
	va_list ap;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(text, len, NAME, &err);
	if (s) {
		fprintf(stderr, "  parsed, but should fail at line %u\n", line);
		argus_schema__free(s);
		return 0;
	}
	snprintf(prefix, sizeof(prefix), NAME ":%u: ", line);
	ok &= err.code == -EINVAL && err.offset == line &&
	      !strncmp(err.msg, prefix, strlen(prefix)) &&
	      memchr(err.msg, 0, sizeof(err.msg)) && !strchr(err.msg, '\n');
	va_start(ap, line);
	while ((needle = va_arg(ap, const char *)))
		ok &= strstr(err.msg, needle) != NULL;
	va_end(ap);
	if (!ok)
		fprintf(stderr, "  got code %d offset %llu: %s\n", err.code,
			(unsigned long long)err.offset, err.msg);
	return ok;
}
#define FAILS_AT(text, line, ...) \
	CHECK(fails_at_n((text), strlen(text), (line), __VA_ARGS__, (const char *)NULL))

/* The exact message for `text`, or "" when it parses. */
static const char *message_of(const char *text)
{
	static struct argus_error err;
	struct argus_schema *s;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(text, strlen(text), "app.schema", &err);
	argus_schema__free(s);
	return s ? "" : err.msg;
}

/* ---------------------------------------------------------------------
 * Parsing each rule kind.
 */
static void boundary_line_fills_every_field(void)
{
	struct argus_schema *s = parse(
		"boundary before syscall:read process=db* thread=worker-? pid=42\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->nboundaries, 1);
	CHECK_EQ(s->nedges, 0);
	CHECK_EQ(s->nfilters, 0);
	CHECK_EQ(s->boundaries[0].where, SCHEMA_BEFORE);
	CHECK_EQ(s->boundaries[0].line, 1);
	CHECK_EQ(s->boundaries[0].ev.type, AE_SYS_EXIT);
	CHECK_EQ(s->boundaries[0].ev.sys_nr, argus_syscall_nr("read"));
	CHECK(s->boundaries[0].ev.sys_nr >= 0);
	CHECK(!strcmp(s->boundaries[0].ev.word, ""));
	CHECK(!strcmp(s->boundaries[0].ev.process, "db*"));
	CHECK(!strcmp(s->boundaries[0].ev.thread, "worker-?"));
	CHECK_EQ(s->boundaries[0].ev.pid, 42);
	argus_schema__free(s);
}

static void boundary_fields_not_named_are_any(void)
{
	struct argus_schema *s = parse("boundary after mark:loop-end\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->boundaries[0].where, SCHEMA_AFTER);
	CHECK_EQ(s->boundaries[0].ev.type, AE_MARK);
	CHECK(!strcmp(s->boundaries[0].ev.word, "loop-end"));
	CHECK_EQ(s->boundaries[0].ev.sys_nr, -1);
	CHECK(!strcmp(s->boundaries[0].ev.process, ""));
	CHECK(!strcmp(s->boundaries[0].ev.thread, ""));
	CHECK_EQ(s->boundaries[0].ev.pid, 0);
	argus_schema__free(s);
}

static void filters_come_in_any_order(void)
{
	struct argus_schema *s = parse(
		"boundary after sys_enter:write pid=7 thread=t process=p\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->boundaries[0].ev.pid, 7);
	CHECK(!strcmp(s->boundaries[0].ev.thread, "t"));
	CHECK(!strcmp(s->boundaries[0].ev.process, "p"));
	argus_schema__free(s);
}

static void event_words_map_to_type_syscall_and_word(void)
{
	static const struct {
		const char *word;
		uint16_t type;
		const char *sys;        /* NULL: any */
		const char *mark;
	} cases[] = {
		{ "syscall:read", AE_SYS_EXIT, "read", "" },
		{ "sys_exit:write", AE_SYS_EXIT, "write", "" },
		{ "sys_enter:futex", AE_SYS_ENTER, "futex", "" },
		{ "sys_enter:*", AE_SYS_ENTER, NULL, "" },
		{ "syscall:*", AE_SYS_EXIT, NULL, "" },
		{ "syscall", AE_SYS_EXIT, NULL, "" },
		{ "sys_exit", AE_SYS_EXIT, NULL, "" },
		{ "switch:futex", AE_SWITCH, "futex", "" },
		{ "switch:epoll_wait", AE_SWITCH, "epoll_wait", "" },
		{ "switch", AE_SWITCH, NULL, "" },
		{ "mark", AE_MARK, NULL, "" },
		{ "mark:*", AE_MARK, NULL, "" },
		{ "mark:post", AE_MARK, NULL, "post" },
		{ "mark:a:b", AE_MARK, NULL, "a:b" },
		{ "mark:req=5", AE_MARK, NULL, "req=5" },
		{ "waking", AE_WAKING, NULL, "" },
		{ "hrtimer_start", AE_HRT_START, NULL, "" },
		{ "fork", AE_FORK, NULL, "" },
		{ "wq_start", AE_WQ_START, NULL, "" },
		{ "sample", AE_SAMPLE, NULL, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[128];
		struct argus_schema *s;

		snprintf(line, sizeof(line), "boundary before %s\n",
			 cases[i].word);
		s = parse(line);
		CHECK(s);
		if (!s) {
			fprintf(stderr, "  for %s\n", cases[i].word);
			continue;
		}
		CHECK_EQ(s->boundaries[0].ev.type, cases[i].type);
		CHECK_EQ(s->boundaries[0].ev.sys_nr,
			 cases[i].sys ? argus_syscall_nr(cases[i].sys) : -1);
		CHECK(!strcmp(s->boundaries[0].ev.word, cases[i].mark));
		argus_schema__free(s);
	}
}

/* Every name the trace format gives a type is an event, except "lost". */
static void every_event_type_name_is_an_event(void)
{
	for (uint16_t t = 1; t < AE_TYPE_MAX; t++) {
		const char *name = argus_event_type_str(t);
		char line[128];
		struct argus_schema *s;

		if (!name || t == AE_LOST)
			continue;
		snprintf(line, sizeof(line), "boundary before %s", name);
		s = parse(line);
		CHECK(s);
		if (s)
			CHECK_EQ(s->boundaries[0].ev.type, t);
		argus_schema__free(s);
	}
}

static void edge_line_fills_every_field(void)
{
	struct argus_schema *s = parse(
		"\n"
		"edge workitem sys_enter:write arg2 process=a -> "
		"syscall:read ret thread=b pid=7\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->nedges, 1);
	CHECK_EQ(s->edges[0].line, 2);
	CHECK_EQ(s->edges[0].type, ARGUS_EDGE_WORKITEM);
	CHECK_EQ(s->edges[0].many, 0);
	CHECK_EQ(s->edges[0].src_attr, SCHEMA_ATTR_ARG2);
	CHECK_EQ(s->edges[0].dst_attr, SCHEMA_ATTR_RET);
	CHECK_EQ(s->edges[0].src.type, AE_SYS_ENTER);
	CHECK_EQ(s->edges[0].src.sys_nr, argus_syscall_nr("write"));
	CHECK(!strcmp(s->edges[0].src.process, "a"));
	CHECK(!strcmp(s->edges[0].src.thread, ""));
	CHECK_EQ(s->edges[0].src.pid, 0);
	CHECK_EQ(s->edges[0].dst.type, AE_SYS_EXIT);
	CHECK_EQ(s->edges[0].dst.sys_nr, argus_syscall_nr("read"));
	CHECK(!strcmp(s->edges[0].dst.process, ""));
	CHECK(!strcmp(s->edges[0].dst.thread, "b"));
	CHECK_EQ(s->edges[0].dst.pid, 7);
	argus_schema__free(s);
}

static void edge_types_and_many(void)
{
	struct argus_schema *s = parse(
		"edge custom mark:a value -> mark:b value\n"
		"edge workitem mark:a value -> mark:b value many\n"
		"edge dataflag syscall:write obj -> syscall:read obj\n"
		"edge message syscall:sendto peer -> syscall:recvfrom obj many\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->nedges, 4);
	CHECK_EQ(s->edges[0].type, ARGUS_EDGE_CUSTOM);
	CHECK_EQ(s->edges[1].type, ARGUS_EDGE_WORKITEM);
	CHECK_EQ(s->edges[2].type, ARGUS_EDGE_DATAFLAG);
	CHECK_EQ(s->edges[3].type, ARGUS_EDGE_MESSAGE);
	CHECK_EQ(s->edges[0].many, 0);
	CHECK_EQ(s->edges[1].many, 1);
	CHECK_EQ(s->edges[2].many, 0);
	CHECK_EQ(s->edges[3].many, 1);
	CHECK_EQ(s->edges[0].src_attr, SCHEMA_ATTR_VALUE);
	CHECK_EQ(s->edges[3].src_attr, SCHEMA_ATTR_PEER);
	CHECK_EQ(s->edges[3].dst_attr, SCHEMA_ATTR_OBJ);
	CHECK(!strcmp(s->edges[1].dst.word, "b"));
	argus_schema__free(s);
}

/* The attribute table of docs/schema.md, restated: which ATTR each event
 * has.  Every other pair is an error that names the attribute. */
static void attributes_allowed_per_event(void)
{
	static const char *const attrs[] = {
		"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "ret", "obj",
		"peer", "value", "pid", "tid",
	};
	static const struct {
		const char *ev;
		const char *allowed;    /* " a b c " */
	} evs[] = {
		{ "sys_enter:write", " arg0 arg1 arg2 arg3 arg4 arg5 pid tid " },
		{ "syscall:read", " arg0 ret obj peer pid tid " },
		{ "sys_exit:*", " arg0 ret obj peer pid tid " },
		{ "switch:futex", " arg0 obj peer pid tid " },
		{ "mark:x", " value pid tid " },
		{ "waking", " pid tid " },
		{ "hrtimer_start", " pid tid " },
	};

	for (size_t e = 0; e < sizeof(evs) / sizeof(evs[0]); e++)
		for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			char text[160], word[16];
			struct argus_error err;
			struct argus_schema *s;
			int want;

			snprintf(word, sizeof(word), " %s ", attrs[a]);
			want = strstr(evs[e].allowed, word) != NULL;
			snprintf(text, sizeof(text), "edge custom %s %s -> %s %s",
				 evs[e].ev, attrs[a], evs[e].ev, attrs[a]);
			s = argus_schema__parse(text, strlen(text), NAME, &err);
			CHECK_EQ(s != NULL, want);
			if (want && s)
				CHECK_EQ(s->edges[0].src_attr, a + SCHEMA_ATTR_ARG0);
			if (!s) {
				char q[24];

				snprintf(q, sizeof(q), "'%s'", attrs[a]);
				CHECK(strstr(err.msg, q));
			}
			if ((s != NULL) != want)
				fprintf(stderr, "  %s\n", text);
			argus_schema__free(s);
		}
}

static void filter_lines_fill_every_field(void)
{
	struct argus_schema *s = parse(
		"filter waker thread=watchdog\n"
		"filter target process=node_exporter\n"
		"filter kernel process=irq* thread=irqbalance\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->nfilters, 3);
	CHECK_EQ(s->filters[0].kind, SCHEMA_FILTER_WAKER);
	CHECK(!strcmp(s->filters[0].process, ""));
	CHECK(!strcmp(s->filters[0].thread, "watchdog"));
	CHECK_EQ(s->filters[0].line, 1);
	CHECK_EQ(s->filters[1].kind, SCHEMA_FILTER_TARGET);
	CHECK(!strcmp(s->filters[1].process, "node_exporter"));
	CHECK_EQ(s->filters[2].kind, SCHEMA_FILTER_KERNEL);
	CHECK(!strcmp(s->filters[2].process, "irq*"));
	CHECK(!strcmp(s->filters[2].thread, "irqbalance"));
	CHECK_EQ(s->filters[2].line, 3);
	argus_schema__free(s);
}

static void version_line_is_optional_and_first(void)
{
	struct argus_schema *s;

	s = parse("# header comment\n\nargus-schema 1   # the version\n"
		  "filter waker thread=w\n");
	CHECK(s);
	argus_schema__free(s);
	s = parse("argus-schema 1\n");
	CHECK(s);
	argus_schema__free(s);
	s = parse("filter waker thread=w\n");
	CHECK(s);
	argus_schema__free(s);
}

static void comments_blank_lines_and_tabs(void)
{
	struct argus_schema *s = parse(
		"# a comment\n"
		"\n"
		"   \t  \n"
		"  # an indented comment\n"
		"\tboundary\tbefore  syscall:read\tprocess=a#b # trailing comment\n"
		"filter waker thread=w#\n"
		"filter waker thread=w #x y z\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->nboundaries, 1);
	CHECK_EQ(s->boundaries[0].line, 5);
	CHECK(!strcmp(s->boundaries[0].ev.process, "a#b"));
	CHECK_EQ(s->nfilters, 2);
	CHECK(!strcmp(s->filters[0].thread, "w#"));
	CHECK(!strcmp(s->filters[1].thread, "w"));
	CHECK_EQ(s->filters[1].line, 7);
	argus_schema__free(s);
}

static void crlf_line_ends_are_accepted(void)
{
	struct argus_schema *s = parse(
		"argus-schema 1\r\n"
		"# comment\r\n"
		"\r\n"
		"boundary after syscall:read process=db\r\n"
		"filter waker thread=w\r\n");

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(s->boundaries[0].line, 4);
	CHECK(!strcmp(s->boundaries[0].ev.process, "db"));
	CHECK(!strcmp(s->filters[0].thread, "w"));
	argus_schema__free(s);
	FAILS_AT("# x\r\n\r\nbogus\r\n", 3, "'bogus'");
}

static void last_line_needs_no_line_end(void)
{
	struct argus_schema *s = parse("filter waker thread=a\nfilter waker thread=b");

	CHECK(s);
	if (s)
		CHECK(!strcmp(s->filters[1].thread, "b"));
	argus_schema__free(s);
	s = parse("filter waker thread=a\r");
	CHECK(s);
	if (s)
		CHECK(!strcmp(s->filters[0].thread, "a"));
	argus_schema__free(s);
}

static void utf8_bom_is_skipped(void)
{
	struct argus_schema *s = parse("\xef\xbb\xbf" "argus-schema 1\n");

	CHECK(s);
	argus_schema__free(s);
}

static void empty_schema_is_valid_with_zero_rules(void)
{
	static const char *const texts[] = {
		"", "\n", "# only a comment\n", "\n\n   \n\t\n", "argus-schema 1\n",
	};
	struct argus_error err;
	struct argus_schema *s;
	uint32_t b = 9, e = 9, f = 9;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		s = parse(texts[i]);
		CHECK(s);
		argus_schema__counts(s, &b, &e, &f);
		CHECK_EQ(b + e + f, 0);
		argus_schema__free(s);
	}
	s = argus_schema__parse(NULL, 0, NAME, &err);
	CHECK(s);
	argus_schema__free(s);
}

static void counts_and_free_accept_null(void)
{
	struct argus_schema *s = parse(
		"boundary before mark:a\nboundary after mark:b\n"
		"edge custom mark:a value -> mark:b value\n"
		"filter waker thread=w\nfilter target thread=w\nfilter kernel thread=w\n");
	uint32_t b, e, f;

	CHECK(s);
	argus_schema__counts(s, &b, &e, &f);
	CHECK_EQ(b, 2);
	CHECK_EQ(e, 1);
	CHECK_EQ(f, 3);
	argus_schema__counts(s, NULL, NULL, NULL);
	argus_schema__counts(NULL, &b, &e, &f);
	CHECK_EQ(b + e + f, 0);
	argus_schema__free(s);
	argus_schema__free(NULL);
}

static void glob_of_15_characters_is_accepted(void)
{
	struct argus_schema *s = parse("filter waker process=abcdefghijklmno\n");

	CHECK(s);
	if (s)
		CHECK(!strcmp(s->filters[0].process, "abcdefghijklmno"));
	argus_schema__free(s);
}

static void pid_range_ends_are_accepted(void)
{
	struct argus_schema *s = parse("boundary before switch pid=1\n"
				       "boundary before switch pid=4194304\n");

	CHECK(s);
	if (s) {
		CHECK_EQ(s->boundaries[0].ev.pid, 1);
		CHECK_EQ(s->boundaries[1].ev.pid, 4194304);
	}
	argus_schema__free(s);
}

/* ---------------------------------------------------------------------
 * Errors: NULL, -EINVAL, "t.schema:LINE: ..." naming the bad word.
 */
static void error_unknown_keyword(void)
{
	FAILS_AT("boundary before syscall:read\nboundry after syscall:read\n",
		 2, "unknown keyword", "'boundry'");
	FAILS_AT("Boundary before syscall:read\n", 1, "'Boundary'");
	CHECK(!strcmp(message_of("x"), "app.schema:1: unknown keyword 'x' "
		      "(expected boundary, edge, filter, holder, instrument or argus-schema)"));
}

/* `instrument FUNC as KIND` is argus instrument's (docs/schema.md, "Live
 * instrumentation"): the graph parser accepts it, adds no rule, and still
 * rejects a malformed one. */
static void instrument_lines_are_checked_and_add_no_rule(void)
{
	struct argus_schema *s = parse("instrument libz:crc32 as begin\n"
				       "boundary before syscall:read\n"
				       "instrument worker_run as dequeue\n"
				       "instrument handle_request as begin at-return end\n");

	CHECK(s);
	if (s) {
		CHECK_EQ(s->nboundaries, 1);
		CHECK_EQ(s->nedges, 0);
		CHECK_EQ(s->nfilters, 0);
		argus_schema__free(s);
	}
	FAILS_AT("instrument libz:crc32 begin\n", 1, "instrument: expected");
	FAILS_AT("\ninstrument f as start\n", 2, "unknown kind", "'start'");
	FAILS_AT("instrument f as begin at-return finish\n", 1, "unknown kind", "'finish'");
	FAILS_AT("instrument f as begin on-return end\n", 1, "instrument: expected");
	FAILS_AT("instrument f as begin at-return\n", 1, "instrument: expected");
}

static void error_unknown_syscall(void)
{
	FAILS_AT("# x\n\nedge custom syscall:sendmsgg obj -> syscall:read obj\n",
		 3, "unknown syscall 'sendmsgg' in 'syscall:sendmsgg'");
	FAILS_AT("boundary before sys_enter:nosuch\n", 1, "'nosuch'");
	FAILS_AT("boundary before switch:nosuch\n", 1, "'nosuch'");
}

static void error_unknown_event(void)
{
	FAILS_AT("boundary before swtch\n", 1, "unknown event", "'swtch'");
	FAILS_AT("boundary before frob:read\n", 1, "unknown event", "'frob:read'");
	FAILS_AT("boundary before lost\n", 1, "'lost'");
	FAILS_AT("boundary before waking:futex\n", 1, "'waking'",
		 "'waking:futex'");
}

static void error_empty_or_long_qualifier(void)
{
	char text[128];

	FAILS_AT("boundary before syscall:\n", 1, "'syscall:'");
	FAILS_AT("boundary before mark:\n", 1, "'mark:'");
	snprintf(text, sizeof(text), "boundary before mark:%064d\n", 0);
	FAILS_AT(text, 1, "longer than 63");
}

static void error_missing_arrow(void)
{
	FAILS_AT("\nedge custom syscall:write obj syscall:read obj\n", 2,
		 "missing '->'");
	FAILS_AT("edge custom syscall:write obj-> syscall:read obj\n", 1,
		 "'obj->'");
	FAILS_AT("edge custom syscall:write obj ->syscall:read obj\n", 1,
		 "'->syscall:read'");
}

static void error_edge_parts_missing(void)
{
	FAILS_AT("edge\n", 1, "missing type");
	FAILS_AT("edge custom\n", 1, "missing '->'");
	FAILS_AT("edge custom -> syscall:read obj\n", 1, "missing source");
	FAILS_AT("edge custom syscall:write -> syscall:read obj\n", 1,
		 "missing attribute after 'syscall:write'");
	FAILS_AT("edge custom syscall:write obj ->\n", 1,
		 "missing destination");
	FAILS_AT("edge custom syscall:write obj -> syscall:read\n", 1,
		 "missing attribute after 'syscall:read'");
	FAILS_AT("edge custom syscall:write process=a -> syscall:read obj\n",
		 1, "missing attribute");
}

static void error_unknown_edge_type(void)
{
	FAILS_AT("edge wakeup mark:a value -> mark:b value\n", 1,
		 "unknown edge type", "'wakeup'");
}

static void error_unknown_attribute(void)
{
	FAILS_AT("edge custom syscall:write fd -> syscall:read obj\n", 1,
		 "unknown attribute", "'fd'");
	FAILS_AT("edge custom syscall:write obj -> syscall:read arg6\n", 1,
		 "'arg6'");
}

static void error_attribute_not_for_event(void)
{
	FAILS_AT("\n\nedge custom sys_enter:write ret -> syscall:read ret\n", 3,
		 "'ret'", "'sys_enter:write'");
	FAILS_AT("edge custom syscall:write arg1 -> syscall:read obj\n", 1,
		 "'arg1'", "'syscall:write'");
	FAILS_AT("edge custom syscall:write obj -> syscall:read value\n", 1,
		 "'value'", "'syscall:read'");
	FAILS_AT("edge custom sys_enter:write obj -> syscall:read obj\n", 1,
		 "'obj'");
	FAILS_AT("edge custom sys_enter:write peer -> syscall:read obj\n", 1,
		 "'peer'");
	FAILS_AT("edge custom mark:a ret -> mark:b value\n", 1, "'ret'");
}

static void error_value_pairs_only_with_value(void)
{
	FAILS_AT("edge custom mark:a value -> mark:b tid\n", 1, "'value'",
		 "'tid'");
	FAILS_AT("edge custom syscall:read ret -> mark:b value\n", 1,
		 "'value'", "'ret'");
}

static void error_many_misplaced(void)
{
	FAILS_AT("edge custom mark:a value many -> mark:b value\n", 1,
		 "'many' goes at the end");
	FAILS_AT("edge custom mark:a value -> mark:b value many many\n", 1,
		 "unexpected 'many'");
}

static void error_trailing_words(void)
{
	FAILS_AT("boundary before syscall:read junk\n", 1, "unexpected 'junk'");
	FAILS_AT("boundary before syscall:read process=a junk\n", 1,
		 "'junk'");
	FAILS_AT("edge custom mark:a value -> mark:b value many junk\n", 1,
		 "'junk'");
	FAILS_AT("edge custom mark:a value -> mark:b value junk\n", 1,
		 "'junk'");
	FAILS_AT("edge custom mark:a value junk -> mark:b value\n", 1,
		 "'junk'");
	FAILS_AT("edge custom mark:a value -> mark:b value -> mark:c value\n",
		 1, "unexpected '->'");
	FAILS_AT("filter waker thread=w junk\n", 1, "'junk'");
	FAILS_AT("argus-schema 1 junk\n", 1, "'junk'");
}

static void error_boundary_parts(void)
{
	FAILS_AT("boundary\n", 1, "'before' or 'after'");
	FAILS_AT("boundary during syscall:read\n", 1, "'during'");
	FAILS_AT("boundary after\n", 1, "missing event");
	FAILS_AT("boundary after thread=x\n", 1, "expected an event",
		 "'thread=x'");
}

static void error_glob_length(void)
{
	FAILS_AT("\nboundary before syscall:read process=abcdefghijklmnop\n",
		 2, "'abcdefghijklmnop'", "longer than 15");
	FAILS_AT("filter waker thread=my-database-server\n", 1,
		 "'my-database-server'", "longer than 15");
	FAILS_AT("boundary before syscall:read thread=\n", 1, "empty glob",
		 "'thread='");
}

static void error_bad_pid(void)
{
	static const char *const bad[] = {
		"pid=x12", "pid=12x", "pid=0", "pid=-1", "pid=+5", "pid=",
		"pid=4194305", "pid=99999999999999999999999", "pid=0x10",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128], q[64];

		snprintf(text, sizeof(text), "\n\nboundary before switch %s\n",
			 bad[i]);
		snprintf(q, sizeof(q), "'%s'", bad[i]);
		FAILS_AT(text, 3, "bad pid", q);
	}
}

static void error_repeated_or_unknown_filter(void)
{
	FAILS_AT("boundary before switch process=a process=b\n", 1,
		 "process= given twice", "'process=b'");
	FAILS_AT("boundary before switch pid=1 pid=2\n", 1, "'pid=2'");
	FAILS_AT("boundary before switch proc=a\n", 1, "unknown filter",
		 "'proc=a'");
	FAILS_AT("edge custom mark:a value -> mark:b value tid=3\n", 1,
		 "'tid=3'");
}

static void error_filter_line(void)
{
	FAILS_AT("filter\n", 1, "missing kind");
	FAILS_AT("filter wakers thread=w\n", 1, "unknown filter kind",
		 "'wakers'");
	FAILS_AT("filter waker\n", 1, "needs process=GLOB or thread=GLOB");
	FAILS_AT("filter kernel pid=5\n", 1, "'pid=5'");
}

static void error_bad_version(void)
{
	FAILS_AT("# c\nargus-schema 2\n", 2, "unsupported schema version '2'");
	FAILS_AT("argus-schema\n", 1, "missing version");
	FAILS_AT("argus-schema 1.0\n", 1, "'1.0'");
	FAILS_AT("filter waker thread=w\nargus-schema 1\n", 2,
		 "'argus-schema' must come before");
	FAILS_AT("argus-schema 1\nargus-schema 1\n", 2, "must come before");
}

static void error_line_longer_than_4096_bytes(void)
{
	size_t n = 4096;
	char *text = malloc(2 * n + 16);
	struct argus_schema *s;

	/* Exactly 4096 bytes (plus CRLF) is fine... */
	text[0] = '#';
	memset(text + 1, 'x', n - 1);
	strcpy(text + n, "\r\n");
	s = parse(text);
	CHECK(s);
	argus_schema__free(s);
	/* ...one more byte is not, whatever the line holds. */
	strcpy(text, "filter waker thread=w\n#");
	memset(text + 23, 'x', n);
	text[23 + n] = 0;
	FAILS_AT(text, 2, "longer than 4096 bytes");
	free(text);
}

static void error_nul_byte(void)
{
	static const char text[] = "filter waker thread=w\nfilter waker\0 thread=w\n";

	CHECK(fails_at_n(text, sizeof(text) - 1, 2, "NUL byte", "column 13",
			 (const char *)NULL));
	/* Also in a comment: the file is not text. */
	CHECK(fails_at_n("# a\0b\n", 6, 1, "NUL", (const char *)NULL));
}

static void error_control_character(void)
{
	FAILS_AT("filter waker\vthread=w\n", 1, "control character 0x0b");
	FAILS_AT("filter waker thread=w\rfilter waker thread=v\n", 1, "0x0d");
}

static void error_too_many_rules(void)
{
	static const char rule[] = "filter waker thread=w\n";
	size_t rl = sizeof(rule) - 1;
	char *text = malloc((SCHEMA_MAX_RULES + 1) * rl + 1);
	struct argus_error err;
	struct argus_schema *s;

	for (size_t i = 0; i <= SCHEMA_MAX_RULES; i++)
		memcpy(text + i * rl, rule, rl);
	s = argus_schema__parse(text, SCHEMA_MAX_RULES * rl, NAME, &err);
	CHECK(s);
	if (s)
		CHECK_EQ(s->nfilters, SCHEMA_MAX_RULES);
	argus_schema__free(s);
	CHECK(fails_at_n(text, (SCHEMA_MAX_RULES + 1) * rl, SCHEMA_MAX_RULES + 1,
			 "too many rules (at most 10000)", (const char *)NULL));
	free(text);
}

static void error_too_many_words(void)
{
	char text[512] = "boundary before switch";

	for (int i = 0; i < 40; i++)
		strcat(text, " x");
	FAILS_AT(text, 1, "more than 32 words");
}

static void error_long_word_is_cut_in_the_message(void)
{
	char text[600] = "boundary before ";
	struct argus_error err;

	memset(text + 16, 'q', 400);
	text[416] = 0;
	CHECK(!argus_schema__parse(text, strlen(text), NAME, &err));
	CHECK(strstr(err.msg, "qqq...'"));
	CHECK(strlen(err.msg) < sizeof(err.msg) - 1);
}

static void error_names_the_caller_name_or_a_default(void)
{
	struct argus_error err;

	CHECK(!argus_schema__parse("bogus", 5, NULL, &err));
	CHECK(!strncmp(err.msg, "<schema>:1: ", 12));
	CHECK(!argus_schema__parse("\nbogus", 6, "/etc/argus/x.schema", &err));
	CHECK(!strncmp(err.msg, "/etc/argus/x.schema:2: ", 23));
	/* A NULL err is allowed. */
	CHECK(!argus_schema__parse("bogus", 5, NULL, NULL));
	CHECK_EQ(errno, EINVAL);
}

/* The messages docs/schema.md shows under "Errors", exactly. */
static void error_messages_shown_in_the_docs(void)
{
	CHECK(!strcmp(message_of("\n\n\n\n\n\nboundary after syscall:sendmsgg\n"),
		      "app.schema:7: unknown syscall 'sendmsgg' in 'syscall:sendmsgg'"));
	CHECK(!strcmp(message_of("\n\n\n\n\n\n\n\nedge custom sys_enter:write ret -> syscall:read ret\n"),
		      "app.schema:9: attribute 'ret' does not apply to 'sys_enter:write' "
		      "(sys_enter events have: arg0..arg5, pid, tid)"));
	CHECK(!strcmp(message_of("\n\n\n\n\n\n\n\n\n\n\nedge custom syscall:write obj syscall:read obj\n"),
		      "app.schema:12: edge: missing '->' between the source and the destination"));
	CHECK(!strcmp(message_of("\n\n\n\n\n\n\n\n\n\n\n\n\nfilter waker process=my-database-server\n"),
		      "app.schema:14: glob 'my-database-server' is longer than 15 characters "
		      "(a process name has at most 15)"));
	CHECK(!strcmp(message_of("\n\n\n\n\n\n\n\n\n\n\n\n\n\nboundary before switch pid=12x\n"),
		      "app.schema:15: bad pid in 'pid=12x' (expected a decimal number from 1 to 4194304)"));
	CHECK(!strcmp(message_of("argus-schema 2\n"),
		      "app.schema:1: unsupported schema version '2' (this Argus reads version 1)"));
}

/* ---------------------------------------------------------------------
 * Loading files.
 */
static char dir[64];

static void load_reads_a_file(void)
{
	char path[128];
	FILE *f;
	struct argus_error err;
	struct argus_schema *s;

	snprintf(path, sizeof(path), "%s/ok.schema", dir);
	f = fopen(path, "w");
	fputs("argus-schema 1\nboundary after syscall:epoll_wait process=batchd\n", f);
	fclose(f);
	s = argus_schema__load(path, &err);
	CHECK(s);
	if (s)
		CHECK_EQ(s->nboundaries, 1);
	argus_schema__free(s);
}

static void load_error_names_the_path_and_the_line(void)
{
	char path[128], want[160];
	FILE *f;
	struct argus_error err;

	snprintf(path, sizeof(path), "%s/bad.schema", dir);
	f = fopen(path, "w");
	fputs("# ok\nboundary after syscall:epoll_wiat\n", f);
	fclose(f);
	CHECK(!argus_schema__load(path, &err));
	snprintf(want, sizeof(want), "%s:2: unknown syscall 'epoll_wiat'", path);
	CHECK(!strncmp(err.msg, want, strlen(want)));
	CHECK_EQ(err.offset, 2);
	CHECK_EQ(err.code, -EINVAL);
}

static void load_unreadable_file_reports_errno_and_path(void)
{
	char path[128], want[256];
	struct argus_error err;

	snprintf(path, sizeof(path), "%s/missing.schema", dir);
	errno = 0;
	CHECK(!argus_schema__load(path, &err));
	CHECK_EQ(errno, ENOENT);
	CHECK_EQ(err.code, -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot read the schema: %s", path,
		 strerror(ENOENT));
	CHECK(!strcmp(err.msg, want));

	CHECK(!argus_schema__load(dir, &err));
	CHECK_EQ(err.code, -EISDIR);
	CHECK(strstr(err.msg, dir) && strstr(err.msg, strerror(EISDIR)));
}

/* ---------------------------------------------------------------------
 * Matching events.
 */
static struct schema_event_spec spec_of(const char *word, const char *filters)
{
	struct schema_event_spec sp;
	struct argus_schema *s;
	char text[256];

	memset(&sp, 0, sizeof(sp));
	snprintf(text, sizeof(text), "boundary before %s %s\n", word, filters);
	s = parse(text);
	CHECK(s);
	if (s)
		sp = s->boundaries[0].ev;
	argus_schema__free(s);
	return sp;
}

static struct argus_event event(uint16_t type, uint32_t pid, uint32_t tid)
{
	struct argus_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.pid = pid;
	ev.tid = tid;
	ev.ts = 1000;
	return ev;
}

static void match_needs_the_same_type(void)
{
	struct schema_event_spec sp = spec_of("waking", "");
	struct argus_event ev = event(AE_WAKING, 1, 1);

	CHECK(schema_match_event(&sp, &ev, "p", "t", NULL));
	ev.type = AE_SWITCH;
	CHECK(!schema_match_event(&sp, &ev, "p", "t", NULL));
}

static void match_syscall_number_per_event_type(void)
{
	long rd = argus_syscall_nr("read"), wr = argus_syscall_nr("write");
	struct schema_event_spec ex = spec_of("syscall:read", "");
	struct schema_event_spec en = spec_of("sys_enter:read", "");
	struct schema_event_spec sw = spec_of("switch:read", "");
	struct schema_event_spec any = spec_of("syscall:*", "");
	struct argus_event e;

	e = event(AE_SYS_EXIT, 1, 1);
	e.f[ARGUS_F_SX_NR] = (uint64_t)rd;
	CHECK(schema_match_event(&ex, &e, NULL, NULL, NULL));
	CHECK(schema_match_event(&any, &e, NULL, NULL, NULL));
	CHECK(!schema_match_event(&en, &e, NULL, NULL, NULL));
	e.f[ARGUS_F_SX_NR] = (uint64_t)wr;
	CHECK(!schema_match_event(&ex, &e, NULL, NULL, NULL));
	CHECK(schema_match_event(&any, &e, NULL, NULL, NULL));

	e = event(AE_SYS_ENTER, 1, 1);
	e.f[ARGUS_F_SE_NR] = (uint64_t)rd;
	CHECK(schema_match_event(&en, &e, NULL, NULL, NULL));
	e.f[ARGUS_F_SE_NR] = (uint64_t)wr;
	CHECK(!schema_match_event(&en, &e, NULL, NULL, NULL));

	e = event(AE_SWITCH, 1, 1);
	e.f[ARGUS_F_SW_SYS_NR] = (uint64_t)rd;
	CHECK(schema_match_event(&sw, &e, NULL, NULL, NULL));
	e.f[ARGUS_F_SW_SYS_NR] = (uint64_t)wr;
	CHECK(!schema_match_event(&sw, &e, NULL, NULL, NULL));
}

/* A switch-out outside any syscall stores -1 sign-extended: it matches
 * `switch` but no `switch:NAME`. */
static void match_switch_outside_a_syscall(void)
{
	struct schema_event_spec sw = spec_of("switch:read", "");
	struct schema_event_spec any = spec_of("switch", "");
	struct argus_event e = event(AE_SWITCH, 1, 1);

	e.f[ARGUS_F_SW_SYS_NR] = (uint64_t)(int64_t)-1;
	CHECK(!schema_match_event(&sw, &e, NULL, NULL, NULL));
	CHECK(schema_match_event(&any, &e, NULL, NULL, NULL));
	e.f[ARGUS_F_SW_SYS_NR] = 0;     /* syscall 0 is read on x86-64 */
	CHECK_EQ(schema_match_event(&sw, &e, NULL, NULL, NULL),
		 argus_syscall_nr("read") == 0);
}

static void match_mark_first_word(void)
{
	struct schema_event_spec post = spec_of("mark:post", "");
	struct schema_event_spec any = spec_of("mark:*", "");
	struct argus_event e = event(AE_MARK, 0, 0);

	CHECK(schema_match_event(&post, &e, NULL, NULL, "post 42"));
	CHECK(schema_match_event(&post, &e, NULL, NULL, "post"));
	CHECK(schema_match_event(&post, &e, NULL, NULL, "  post\t42 x"));
	CHECK(!schema_match_event(&post, &e, NULL, NULL, "poster 42"));
	CHECK(!schema_match_event(&post, &e, NULL, NULL, "pos 42"));
	CHECK(!schema_match_event(&post, &e, NULL, NULL, "42 post"));
	CHECK(!schema_match_event(&post, &e, NULL, NULL, ""));
	CHECK(!schema_match_event(&post, &e, NULL, NULL, NULL));
	CHECK(schema_match_event(&any, &e, NULL, NULL, "anything"));
	CHECK(schema_match_event(&any, &e, NULL, NULL, NULL));
}

static void match_process_and_thread_globs(void)
{
	struct schema_event_spec sp = spec_of("switch", "process=db* thread=kworker/*");
	struct schema_event_spec none = spec_of("switch", "");
	struct argus_event e = event(AE_SWITCH, 5, 6);

	CHECK(schema_match_event(&sp, &e, "dbserver", "kworker/0:1", NULL));
	CHECK(schema_match_event(&sp, &e, "db", "kworker/", NULL));
	CHECK(!schema_match_event(&sp, &e, "web", "kworker/0:1", NULL));
	CHECK(!schema_match_event(&sp, &e, "dbserver", "worker", NULL));
	/* Unknown names match only rules that do not name them. */
	CHECK(!schema_match_event(&sp, &e, NULL, "kworker/0:1", NULL));
	CHECK(!schema_match_event(&sp, &e, "dbserver", NULL, NULL));
	CHECK(schema_match_event(&none, &e, NULL, NULL, NULL));
}

static void match_pid(void)
{
	struct schema_event_spec sp = spec_of("syscall", "pid=42");
	struct argus_event e = event(AE_SYS_EXIT, 42, 43);

	CHECK(schema_match_event(&sp, &e, NULL, NULL, NULL));
	e.pid = 43;
	e.tid = 42;             /* pid= is the process id, not the thread's */
	CHECK(!schema_match_event(&sp, &e, NULL, NULL, NULL));
}

/* ---------------------------------------------------------------------
 * Attributes.
 */
static void attr_sys_enter_arguments(void)
{
	struct argus_event e = event(AE_SYS_ENTER, 1, 2);

	for (int i = 0; i < 6; i++)
		e.f[ARGUS_F_SE_ARG0 + i] = 100 + (uint64_t)i;
	for (unsigned a = SCHEMA_ATTR_ARG0; a <= SCHEMA_ATTR_ARG5; a++)
		CHECK_EQ(schema_attr(a, &e, NULL), 100 + (a - SCHEMA_ATTR_ARG0));
	CHECK_EQ(schema_attr(SCHEMA_ATTR_RET, &e, NULL), 0);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_OBJ, &e, NULL), 0);
}

static void attr_sys_exit_fields(void)
{
	struct argus_event e = event(AE_SYS_EXIT, 1, 2);

	e.f[ARGUS_F_SX_NR] = 0;
	e.f[ARGUS_F_SX_RET] = (uint64_t)(int64_t)-11;
	e.f[ARGUS_F_SX_ARG0] = 7;
	e.f[ARGUS_F_SX_OBJ_KIND] = AE_OBJ_UNIX;
	e.f[ARGUS_F_SX_OBJ] = 0x1111;
	e.f[ARGUS_F_SX_PEER] = 0x2222;
	CHECK_EQ(schema_attr(SCHEMA_ATTR_ARG0, &e, NULL), 7);
	CHECK(schema_attr(SCHEMA_ATTR_RET, &e, NULL) == (uint64_t)(int64_t)-11);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_OBJ, &e, NULL), 0x1111);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_PEER, &e, NULL), 0x2222);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_ARG1, &e, NULL), 0);
}

static void attr_switch_wait_fields(void)
{
	struct argus_event e = event(AE_SWITCH, 1, 2);

	e.f[ARGUS_F_SW_SYS_ARG] = 0xdead0;
	e.f[ARGUS_F_SW_OBJ] = 0x33;
	e.f[ARGUS_F_SW_PEER] = 0x44;
	CHECK_EQ(schema_attr(SCHEMA_ATTR_ARG0, &e, NULL), 0xdead0);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_OBJ, &e, NULL), 0x33);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_PEER, &e, NULL), 0x44);
}

static void attr_pid_and_tid_of_every_event(void)
{
	struct argus_event e = event(AE_WAKING, 10, 11);

	CHECK_EQ(schema_attr(SCHEMA_ATTR_PID, &e, NULL), 10);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_TID, &e, NULL), 11);
	CHECK_EQ(schema_attr(SCHEMA_ATTR_ARG0, &e, NULL), 0);
	e.type = AE_MARK;
	CHECK_EQ(schema_attr(SCHEMA_ATTR_TID, &e, "post 1"), 11);
}

static void attr_value_is_the_trimmed_text_after_the_word(void)
{
	struct argus_event e = event(AE_MARK, 0, 0);
	uint64_t v42 = schema_hash("42", 2), empty = schema_hash("", 0);

	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "post 42") == v42);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "callback-begin 42") == v42);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, " post \t 42 \r\n") == v42);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "post 43") != v42);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "post 4 2") ==
	      schema_hash("4 2", 3));
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "post") == empty);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, "post   ") == empty);
	CHECK(schema_attr(SCHEMA_ATTR_VALUE, &e, NULL) == empty);
	/* Only marks have a value. */
	e.type = AE_SYS_EXIT;
	CHECK_EQ(schema_attr(SCHEMA_ATTR_VALUE, &e, "post 42"), 0);
}

static void value_hash_is_fnv1a_64(void)
{
	CHECK(schema_hash("", 0) == 0xcbf29ce484222325ull);
	CHECK(schema_hash("a", 1) == 0xaf63dc4c8601ec8cull);
	CHECK(schema_hash("foobar", 6) == 0x85944171f73967e8ull);
}

static void attr_names_round_trip(void)
{
	CHECK(!strcmp(schema_attr_str(SCHEMA_ATTR_ARG0), "arg0"));
	CHECK(!strcmp(schema_attr_str(SCHEMA_ATTR_TID), "tid"));
	CHECK(!schema_attr_str(0));
	CHECK(!schema_attr_str(SCHEMA_ATTR_TID + 1));
}

static void filter_matches_globs(void)
{
	struct argus_schema *s = parse("filter waker thread=watch*\n"
				       "filter kernel process=irq* thread=irqbalance\n");

	CHECK(s);
	if (!s)
		return;
	CHECK(schema_filter_match(&s->filters[0], "anything", "watchdog"));
	CHECK(schema_filter_match(&s->filters[0], NULL, "watchdog"));
	CHECK(!schema_filter_match(&s->filters[0], "watchdog", "main"));
	CHECK(!schema_filter_match(&s->filters[0], "x", NULL));
	CHECK(schema_filter_match(&s->filters[1], "irqbalance", "irqbalance"));
	CHECK(!schema_filter_match(&s->filters[1], "irqbalance", "other"));
	CHECK(!schema_filter_match(&s->filters[1], "other", "irqbalance"));
	argus_schema__free(s);
}

/* ---------------------------------------------------------------------
 * docs/schema.md's examples: copies of its ```schema blocks, in order.
 */
static const char *const doc_examples[] = {
	"argus-schema 1\n"
	"# batchd: one epoll loop serves every client.\n"
	"# Each return from epoll_wait starts an iteration of the loop...\n"
	"boundary after syscall:epoll_wait process=batchd\n"
	"# ...and each request it reads starts that request's work, so a reply\n"
	"# sent after it belongs to that request alone.\n"
	"boundary before syscall:recvfrom process=batchd thread=batchd\n",

	"argus-schema 1\n"
	"# The UI thread's runloop: one segment per callback.\n"
	"boundary before mark:callback-begin process=editor thread=editor\n"
	"boundary after  mark:callback-end   process=editor thread=editor\n"
	"\n"
	"# The work queue: \"post ID\" (any thread) -> \"callback-begin ID\" (the loop).\n"
	"edge workitem mark:post value -> mark:callback-begin value process=editor\n",

	"# A spool: the producer writes each job to a file the consumer reads\n"
	"# later.  Regular files are not messages in the built-in schema, but both\n"
	"# calls carry the file's identity (obj).\n"
	"edge message syscall:write obj process=producer -> syscall:read obj process=consumer\n"
	"\n"
	"# A queue the consumer polls (it never sleeps, so no wake-up links it to\n"
	"# the producer): both sides write a mark with the item's id.\n"
	"edge workitem mark:enqueue value -> mark:dequeue value\n"
	"\n"
	"# One published configuration unblocks every later reader of it.\n"
	"edge custom mark:config-published value -> mark:config-read value many\n",

	"# A watchdog thread wakes every worker once a second to check on it.\n"
	"filter waker thread=watchdog\n"
	"# Wake-ups of the metrics exporter never explain anything we wait for.\n"
	"filter target process=node_exporter\n"
	"# irqbalance behaves like kernel housekeeping: ignore its wake-ups both ways.\n"
	"filter kernel process=irqbalance\n",

	"# Our PostgreSQL server: psql on its socket as the dba role, no helper.\n"
	"# The SQL has no space: an argument cannot hold one.\n"
	"holder ProcSleep,XactLockTableWait process=postgres as dba timeout 3000 run "
	"/usr/lib/postgresql/15/bin/psql -X -A -t -q -w -h /run/postgresql -d postgres -c "
	"SELECT(pg_blocking_pids(%p))\n"
	"\n"
	"# A job server whose workers wait in wait_for_job(): its admin tool\n"
	"# names the process that holds the job, as a service user.\n"
	"holder wait_for_job,job_lock_acquire process=jobd as jobd-admin timeout 1000 run "
	"/usr/local/bin/jobctl who-holds %p %t\n",
};
#define NDOC (sizeof(doc_examples) / sizeof(doc_examples[0]))

static void docs_examples_parse(void)
{
	static const uint32_t want[NDOC][3] = {
		{ 2, 0, 0 }, { 2, 1, 0 }, { 0, 3, 0 }, { 0, 0, 3 },
		{ 0, 0, 0 },    /* two holder rules: the diagnosis's */
	};

	for (size_t i = 0; i < NDOC; i++) {
		struct argus_schema *s = parse(doc_examples[i]);
		uint32_t b, e, f;

		CHECK(s);
		argus_schema__counts(s, &b, &e, &f);
		CHECK_EQ(b, want[i][0]);
		CHECK_EQ(e, want[i][1]);
		CHECK_EQ(f, want[i][2]);
		argus_schema__free(s);
	}
}

/* The runloop example as the graph builder will see it: the loop's marks
 * cut, and "post 7" links to "callback-begin 7" only. */
static void docs_runloop_example_matches_its_marks(void)
{
	struct argus_schema *s = parse(doc_examples[1]);
	struct argus_event m = event(AE_MARK, 300, 300);

	CHECK(s);
	if (!s)
		return;
	CHECK(schema_match_event(&s->boundaries[0].ev, &m, "editor", "editor",
				 "callback-begin 7"));
	CHECK(!schema_match_event(&s->boundaries[0].ev, &m, "editor",
				  "editor-pool", "callback-begin 7"));
	CHECK(schema_match_event(&s->boundaries[1].ev, &m, "editor", "editor",
				 "callback-end 7"));
	CHECK(schema_match_event(&s->edges[0].src, &m, "client", "worker",
				 "post 7"));
	CHECK(schema_match_event(&s->edges[0].dst, &m, "editor", "editor",
				 "callback-begin 7"));
	CHECK(schema_attr(s->edges[0].src_attr, &m, "post 7") ==
	      schema_attr(s->edges[0].dst_attr, &m, "callback-begin 7"));
	CHECK(schema_attr(s->edges[0].src_attr, &m, "post 7") !=
	      schema_attr(s->edges[0].dst_attr, &m, "callback-begin 8"));
	argus_schema__free(s);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Every ```schema block of docs/schema.md equals its copy above. */
static void docs_examples_in_step_with_the_docs(void)
{
	char *doc = read_all(ARGUS_SCHEMA_DOC);
	const char *p;
	size_t n = 0;

	CHECK(doc);
	if (!doc) {
		fprintf(stderr, "  cannot read %s\n", ARGUS_SCHEMA_DOC);
		return;
	}
	for (p = doc; (p = strstr(p, "\n```schema\n")); n++) {
		const char *start = p + 11, *end = strstr(start, "\n```\n");

		CHECK(end);
		if (!end)
			break;
		end++;                  /* the block keeps its last newline */
		CHECK(n < NDOC);
		if (n < NDOC) {
			int same = strlen(doc_examples[n]) == (size_t)(end - start) &&
				   !memcmp(doc_examples[n], start, (size_t)(end - start));
			CHECK(same);
			if (!same)
				fprintf(stderr, "  example %zu differs from the docs\n", n + 1);
		}
		p = end;
	}
	CHECK_EQ(n, NDOC);
	free(doc);
}

int main(void)
{
	char cmd[96];

	snprintf(dir, sizeof(dir), "/tmp/test_schema.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}

	RUN(boundary_line_fills_every_field);
	RUN(instrument_lines_are_checked_and_add_no_rule);
	RUN(boundary_fields_not_named_are_any);
	RUN(filters_come_in_any_order);
	RUN(event_words_map_to_type_syscall_and_word);
	RUN(every_event_type_name_is_an_event);
	RUN(edge_line_fills_every_field);
	RUN(edge_types_and_many);
	RUN(attributes_allowed_per_event);
	RUN(filter_lines_fill_every_field);
	RUN(version_line_is_optional_and_first);
	RUN(comments_blank_lines_and_tabs);
	RUN(crlf_line_ends_are_accepted);
	RUN(last_line_needs_no_line_end);
	RUN(utf8_bom_is_skipped);
	RUN(empty_schema_is_valid_with_zero_rules);
	RUN(counts_and_free_accept_null);
	RUN(glob_of_15_characters_is_accepted);
	RUN(pid_range_ends_are_accepted);

	RUN(error_unknown_keyword);
	RUN(error_unknown_syscall);
	RUN(error_unknown_event);
	RUN(error_empty_or_long_qualifier);
	RUN(error_missing_arrow);
	RUN(error_edge_parts_missing);
	RUN(error_unknown_edge_type);
	RUN(error_unknown_attribute);
	RUN(error_attribute_not_for_event);
	RUN(error_value_pairs_only_with_value);
	RUN(error_many_misplaced);
	RUN(error_trailing_words);
	RUN(error_boundary_parts);
	RUN(error_glob_length);
	RUN(error_bad_pid);
	RUN(error_repeated_or_unknown_filter);
	RUN(error_filter_line);
	RUN(error_bad_version);
	RUN(error_line_longer_than_4096_bytes);
	RUN(error_nul_byte);
	RUN(error_control_character);
	RUN(error_too_many_rules);
	RUN(error_too_many_words);
	RUN(error_long_word_is_cut_in_the_message);
	RUN(error_names_the_caller_name_or_a_default);
	RUN(error_messages_shown_in_the_docs);

	RUN(load_reads_a_file);
	RUN(load_error_names_the_path_and_the_line);
	RUN(load_unreadable_file_reports_errno_and_path);

	RUN(match_needs_the_same_type);
	RUN(match_syscall_number_per_event_type);
	RUN(match_switch_outside_a_syscall);
	RUN(match_mark_first_word);
	RUN(match_process_and_thread_globs);
	RUN(match_pid);

	RUN(attr_sys_enter_arguments);
	RUN(attr_sys_exit_fields);
	RUN(attr_switch_wait_fields);
	RUN(attr_pid_and_tid_of_every_event);
	RUN(attr_value_is_the_trimmed_text_after_the_word);
	RUN(value_hash_is_fnv1a_64);
	RUN(attr_names_round_trip);
	RUN(filter_matches_globs);

	RUN(docs_examples_parse);
	RUN(docs_runloop_example_matches_its_marks);
	RUN(docs_examples_in_step_with_the_docs);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_report();
}
