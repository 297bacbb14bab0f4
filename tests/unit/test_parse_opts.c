/* test_parse_opts.c - the option parser every front end shares
 * (analysis/parse_opts.h): each value type and its range, --opt=value and
 * --opt value, short options, `--`, positionals compacted in order, one
 * clear line for an unknown option, a missing or malformed value, the
 * help generated from the table, and the session's words (diagnose,
 * hangs, report: diag_opts.c) parsed by it.  Errors go to a memory stream
 * (msg_set_err), the help to a temp file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "diag_front.h"
#include "msg.h"
#include "parse_opts.h"
#include "safe_file.h"

static char *errbuf;
static size_t errlen;
static FILE *errf;

/* The last capture, closed and freed (the stream too: LeakSanitizer). */
static void err_end(void)
{
	msg_set_err(NULL);
	if (errf)
		fclose(errf);
	errf = NULL;
	free(errbuf);
	errbuf = NULL;
}

static void err_begin(void)
{
	err_end();
	errf = open_memstream(&errbuf, &errlen);
	msg_set_err(errf);
}

/* The first line printed since err_begin, without its newline. */
static const char *err_line(void)
{
	static char line[512];

	fflush(errf);
	snprintf(line, sizeof(line), "%s", errbuf ? errbuf : "");
	line[strcspn(line, "\n")] = 0;
	return line;
}

struct vals {
	bool json;
	int live;
	uint32_t pid, depth;
	uint64_t addr, last, size;
	const char *out;
	const char *cb_arg;
	int cb_calls;
};

static int cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	struct vals *v = opt->value;

	if (arg && !strcmp(arg, "bad"))
		return msg_usage_error(cmd, "--cb: 'bad' is bad");
	v->cb_arg = arg;
	v->cb_calls++;
	return 0;
}

static const struct argus_usage usage = {
	.cmd = "test",
	.synopsis = "argus test FILE [--pid PID] [-o OUT]\n",
	.about = "  A command for the parser's tests.\n",
};

/* Parses the words (argv[0] "test") into v; the parse's answer. */
static int parse(struct vals *v, unsigned flags, int argc, char **argv)
{
	const struct argus_opt shared[] = {
		OPT_BOOL(0, "json", &v->json, "JSON"),
		OPT_END(),
	};
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &v->pid, "PID", "the process", 1, 0),
		OPT_U32(0, "depth", &v->depth, "N", "how deep\nsecond line", 1, 8),
		OPT_U64(0, "addr", &v->addr, "ADDR", "an address", 0, 0),
		OPT_DURATION(0, "last", &v->last, "DURATION", "the last DURATION", 1, 0),
		OPT_SIZE(0, "size", &v->size, "SIZE", "a size, the first sentence of a long help\n"
			 "text.\nIts second sentence goes on past the width\nROW   kept as written",
			 1u << 20, 0),
		OPT_STRING('o', "out", &v->out, "OUT", "the output"),
		OPT_SET_INT(0, "live", &v->live, 1, "live"),
		OPT_SET_INT(0, "no-live", &v->live, -1, "not live"),
		OPT_CALLBACK_F(0, "cb", v, "X", "a callback", ARGUS_OPT_ONCE, cb),
		OPT_CALLBACK_F(0, "until-end", v, "S", "optional value", ARGUS_OPT_OPTARG, cb),
		OPT_CALLBACK_F(0, "secret", v, NULL, "hidden", ARGUS_OPT_HIDDEN | ARGUS_OPT_NOARG, cb),
		OPT_INCLUDE(shared),
		OPT_END(),
	};

	memset(v, 0, sizeof(*v));
	err_begin();
	return argus_opts_parse(&usage, opts, argc, argv, flags);
}

#define WORDS(...) char *w[] = { "test", __VA_ARGS__, NULL }; int nw = (int)(sizeof(w) / sizeof(*w)) - 1

static void types_and_both_value_forms(void)
{
	struct vals v;
	WORDS("--pid", "42", "--depth=3", "--addr", "0x10", "--last=1500ms", "--size", "2M",
	      "-o", "x.html", "--json", "--no-live");

	CHECK_EQ(parse(&v, 0, nw, w), 0);
	CHECK_EQ(v.pid, 42);
	CHECK_EQ(v.depth, 3);
	CHECK_EQ(v.addr, 16);
	CHECK_EQ(v.last, 1500000000ull);
	CHECK_EQ(v.size, 2u << 20);
	CHECK(v.out && !strcmp(v.out, "x.html"));
	CHECK(v.json);      /* from the included table */
	CHECK_EQ(v.live, -1);
}

static void short_option_value_forms(void)
{
	struct vals v;
	WORDS("-oa.html");
	char *w2[] = { "test", "-o=b.html", NULL };

	CHECK_EQ(parse(&v, 0, nw, w), 0);
	CHECK(v.out && !strcmp(v.out, "a.html"));
	CHECK_EQ(parse(&v, 0, 2, w2), 0);
	CHECK(v.out && !strcmp(v.out, "b.html"));
}

static void positionals_compacted_in_order(void)
{
	struct vals v;
	WORDS("FILE", "--pid", "7", "-", "-5", "#261");

	CHECK_EQ(parse(&v, 0, nw, w), 4);
	CHECK(!strcmp(w[0], "FILE") && !strcmp(w[1], "-") && !strcmp(w[2], "-5") &&
	      !strcmp(w[3], "#261"));
	CHECK(w[4] == NULL);
	CHECK_EQ(v.pid, 7);
}

static void dashdash_ends_options(void)
{
	struct vals v;
	WORDS("--json", "--", "--pid", "x");
	char *w2[] = { "test", "-o", "f", "--", "cmd", "--help", NULL };

	CHECK_EQ(parse(&v, 0, nw, w), 2);
	CHECK(!strcmp(w[0], "--pid") && !strcmp(w[1], "x"));
	CHECK(v.json && !v.pid);
	/* kept: the command tells `-- CMD` from CMD; --help after it is CMD's */
	CHECK_EQ(parse(&v, ARGUS_OPTS_KEEP_DASHDASH, 6, w2), 3);
	CHECK(!strcmp(w2[0], "--") && !strcmp(w2[1], "cmd") && !strcmp(w2[2], "--help"));
}

static void stop_at_first_positional(void)
{
	struct vals v;
	WORDS("--json", "some", "--pid", "text");

	CHECK_EQ(parse(&v, ARGUS_OPTS_STOP_AT_NON_OPTION, nw, w), 3);
	CHECK(!strcmp(w[0], "some") && !strcmp(w[1], "--pid") && !strcmp(w[2], "text"));
	CHECK(v.json && !v.pid);
}

static void unknown_option_is_one_line(void)
{
	struct vals v;
	WORDS("--bogus");
	char *w2[] = { "test", "-x", NULL };

	CHECK_EQ(parse(&v, 0, nw, w), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus test: unknown option '--bogus'"));
	/* then the synopsis, nothing else */
	CHECK(strstr(errbuf, "\nusage: argus test FILE [--pid PID] [-o OUT]\n") != NULL);
	CHECK(!strstr(errbuf, "the process"));
	CHECK_EQ(parse(&v, 0, 2, w2), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus test: unknown option '-x'"));
}

static void missing_value(void)
{
	struct vals v;
	WORDS("FILE", "--pid");

	CHECK_EQ(parse(&v, 0, nw, w), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus test: --pid needs a value: --pid PID"));
}

static void malformed_values(void)
{
	struct vals v;
	struct { const char *word, *line; } c[] = {
		{ "--pid=x", "argus test: --pid wants a positive number, got 'x'" },
		{ "--pid=0", "argus test: --pid wants a positive number, got '0'" },
		{ "--pid=-1", "argus test: --pid wants a positive number, got '-1'" },
		{ "--pid=4294967296", "argus test: --pid wants a positive number, got '4294967296'" },
		{ "--depth=9", "argus test: --depth wants a number from 1 to 8, got '9'" },
		{ "--addr=0x", "argus test: --addr wants a number, got '0x'" },
		{ "--last=xyz", "argus test: --last wants a duration above 0, like 30s, 5m or 1500ms,"
		  " got 'xyz'" },
		{ "--size=10k", "argus test: --size wants a size of at least 1.0 MiB, like 512M or 2G,"
		  " got '10k'" },
		{ "--json=1", "argus test: --json takes no value, got '--json=1'" },
		{ "--cb=bad", "argus test: --cb: 'bad' is bad" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *w[] = { "test", (char *)c[i].word, NULL };

		CHECK_EQ(parse(&v, 0, 2, w), ARGUS_OPT_ERROR);
		if (strcmp(err_line(), c[i].line))
			fprintf(stderr, "  got: %s\n want: %s\n", err_line(), c[i].line);
		CHECK(!strcmp(err_line(), c[i].line));
	}
	/* nothing half-stored */
	CHECK_EQ(v.pid, 0);
}

static void range_bounds_accepted(void)
{
	struct vals v;
	WORDS("--depth", "8", "--pid", "4294967295");

	CHECK_EQ(parse(&v, 0, nw, w), 0);
	CHECK_EQ(v.depth, 8);
	CHECK_EQ(v.pid, UINT32_MAX);
}

static void callbacks_once_and_optional_value(void)
{
	struct vals v;
	WORDS("--cb", "a", "--cb=b");
	char *w2[] = { "test", "--until-end", "FILE", NULL };
	char *w3[] = { "test", "--until-end=5", NULL };

	CHECK_EQ(parse(&v, 0, nw, w), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus test: --cb given twice: give each flag once"));
	/* an optional value only after '=': the next word stays positional */
	CHECK_EQ(parse(&v, 0, 3, w2), 1);
	CHECK(v.cb_calls == 1 && v.cb_arg == NULL && !strcmp(w2[0], "FILE"));
	CHECK_EQ(parse(&v, 0, 2, w3), 0);
	CHECK(v.cb_arg && !strcmp(v.cb_arg, "5"));
}

static void help_first_and_generated(void)
{
	struct vals v;
	WORDS("--pid", "x", "--help");
	char path[] = "/tmp/test_parse_opts.XXXXXX";
	int fd = mkstemp(path);
	char text[8192] = "";
	FILE *f = fdopen(fd, "w+");

	/* --help wins over a bad value before it: nothing else is looked at */
	CHECK(freopen(path, "w", stdout) != NULL);
	CHECK_EQ(parse(&v, 0, nw, w), ARGUS_OPT_HELP);
	fflush(stdout);
	CHECK_EQ(argus_opts_exit(ARGUS_OPT_HELP), 0);
	CHECK_EQ(argus_opts_exit(ARGUS_OPT_ERROR), 2);
	CHECK(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	unlink(path);
	CHECK(!strncmp(text, "usage: argus test FILE [--pid PID] [-o OUT]\n"
		       "  A command for the parser's tests.\n\n", 80));
	CHECK(strstr(text, "\n  --pid PID             the process\n") != NULL);
	/* prose is joined and wrapped to 80 columns; a table row is kept */
	CHECK(strstr(text, "\n  --depth N             how deep second line\n") != NULL);
	CHECK(strstr(text, "\n  --size SIZE           a size, the first sentence of a long help text.  Its\n"
			   "                        second sentence goes on past the width\n"
			   "                        ROW   kept as written\n") != NULL);
	for (const char *l = text; *l; l += strcspn(l, "\n") + 1)
		CHECK(strcspn(l, "\n") < 80);
	CHECK(strstr(text, "\n  -o, --out OUT         the output\n") != NULL);
	CHECK(strstr(text, "\n  --until-end[=S]       optional value\n") != NULL);
	CHECK(strstr(text, "\n  --json                JSON\n") != NULL);
	CHECK(!strstr(text, "--secret"));
	CHECK(errbuf == NULL || !*errbuf);
}

/* The session's words (diag_opts.c) through the same parser: each
 * command's own flags, and the caller's words left as they were (the
 * lldb plugin keeps them; diagnose hands them on). */
static void session_words(void)
{
	struct diag_front_opts o;
	char *r[] = { "report", "t.argus", "--pid=3", "-o", "x.html", "--force", "--depth", "2", NULL };
	char *r_json[] = { "report", "t.argus", "--pid", "3", "--json", NULL };
	char *h_dot[] = { "hangs", "t.argus", "--dot", NULL };
	char *d_until[] = { "diagnose", "--pid", "3", "--until-end=2", "--no-live", NULL };
	char *d_two[] = { "diagnose", "a.argus", "b.argus", "--pid", "3", NULL };

	err_begin();
	CHECK_EQ(diag_front_parse("report", 8, r, &o), 0);
	CHECK(o.g.path && !strcmp(o.g.path, "t.argus"));
	CHECK(o.out && !strcmp(o.out, "x.html") && o.out_flags == ARGUS_OUT_FORCE);
	CHECK_EQ(o.pid, 3);
	CHECK_EQ(o.depth, 2);
	CHECK_EQ(o.threshold_ns, 2000000000ull);
	CHECK(!strcmp(r[1], "t.argus") && !strcmp(r[2], "--pid=3") && !strcmp(r[7], "2"));

	err_begin();
	CHECK_EQ(diag_front_parse("report", 5, r_json, &o), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus report: --json: the report is HTML (argus diagnose --json"
		      " prints that)"));
	err_begin();
	CHECK_EQ(diag_front_parse("hangs", 3, h_dot, &o), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus hangs: unknown option '--dot'"));

	/* no FILE with --until-end; its value only after '=' */
	err_begin();
	CHECK_EQ(diag_front_parse("diagnose", 5, d_until, &o), 0);
	CHECK_EQ(o.until_end_ns, 2000000000ull);
	CHECK(!o.g.path && !o.live && o.live_flag == -1);
	err_begin();
	CHECK_EQ(diag_front_parse("diagnose", 5, d_two, &o), ARGUS_OPT_ERROR);
	CHECK(!strcmp(err_line(), "argus diagnose: unexpected argument 'b.argus'"));
}

int main(void)
{
	RUN(types_and_both_value_forms);
	RUN(short_option_value_forms);
	RUN(positionals_compacted_in_order);
	RUN(dashdash_ends_options);
	RUN(stop_at_first_positional);
	RUN(unknown_option_is_one_line);
	RUN(missing_value);
	RUN(malformed_values);
	RUN(range_bounds_accepted);
	RUN(callbacks_once_and_optional_value);
	RUN(help_first_and_generated);
	RUN(session_words);
	err_end();
	return check_report();
}
