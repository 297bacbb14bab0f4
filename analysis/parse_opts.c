/* parse_opts.c - see parse_opts.h.
 *
 * One pass over argv: each word is an option (looked up through the table
 * and the tables it includes), the value of the option before it, or a
 * positional, compacted to the front of argv.  -h/--help is looked for
 * first, before `--`, so that a command given --help never runs, whatever
 * else its words say (as before the parser: `argus start --size x --help`
 * shows the help). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "parse_opts.h"
#include "units.h"

#define MAX_ONCE 64              /* ONCE options one command may have */
#define HELP_COL 24              /* where an option's help starts */
#define HELP_WIDTH (79 - HELP_COL) /* its prose's width */

struct parse {
	const struct argus_usage *u;
	const struct argus_opt *seen[MAX_ONCE];  /* ONCE options given */
	unsigned nseen;
};

/* The option of the table (or of a table it includes) named by the long
 * name name[0..len) or by the short name c (len 0). */
static const struct argus_opt *find(const struct argus_opt *o, const char *name, size_t len,
				    char c)
{
	for (; o->type != ARGUS_OPT_END; o++) {
		const struct argus_opt *in;

		if (o->type == ARGUS_OPT_INCLUDE) {
			if ((in = find(o->value, name, len, c)))
				return in;
		} else if (len ? o->long_name && strlen(o->long_name) == len &&
				 !strncmp(o->long_name, name, len)
			       : c && o->short_name == c) {
			return o;
		}
	}
	return NULL;
}

/* "--pid", or "-o" for an option with no long name, into buf */
static const char *opt_name(const struct argus_opt *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

static bool takes_value(const struct argus_opt *o)
{
	switch (o->type) {
	case ARGUS_OPT_BOOL:
	case ARGUS_OPT_SET_INT:
		return false;
	case ARGUS_OPT_CALLBACK:
		return !(o->flags & ARGUS_OPT_NOARG);
	default:
		return true;
	}
}

/* "a number", "a positive number", "a number from 1 to 8" */
static void num_want(const struct argus_opt *o, uint64_t top, char *buf, size_t len)
{
	uint64_t hi = o->max ? o->max : top;

	if (o->min <= 1 && hi == top)
		snprintf(buf, len, "a %snumber", o->min ? "positive " : "");
	else if (hi == top)
		snprintf(buf, len, "a number of at least %" PRIu64, o->min);
	else
		snprintf(buf, len, "a number from %" PRIu64 " to %" PRIu64, o->min, hi);
}

int argus_opts_u32(const char *cmd, const char *what, const char *s, uint64_t lo, uint64_t hi,
		   uint32_t *out)
{
	struct argus_opt o = { .min = lo, .max = hi };
	char want[80], *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || s[0] == '+' || v < lo ||
	    v > (hi ? hi : UINT32_MAX)) {
		num_want(&o, UINT32_MAX, want, sizeof(want));
		return msg_usage_error(cmd, "%s wants %s, got '%s'", what, want, msg_tstr(s));
	}
	*out = (uint32_t)v;
	return 0;
}

/* A duration for an error: "1500ms", "30s", "2m" */
static void ns_str(uint64_t ns, char *buf, size_t len)
{
	if (ns && ns % 60000000000u == 0)
		snprintf(buf, len, "%" PRIu64 "m", (uint64_t)(ns / 60000000000u));
	else if (ns % 1000000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "s", (uint64_t)(ns / 1000000000u));
	else if (ns % 1000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "ms", (uint64_t)(ns / 1000000u));
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
}

/* "--last wants a duration like 30s, 5m or 1500ms[ of at least 1s], got 'x'" */
static int bad_unit(const struct parse *p, const char *name, const struct argus_opt *o,
		    const char *arg)
{
	bool dur = o->type == ARGUS_OPT_DURATION;
	char lo[32], hi[32], range[96] = "";

	if (dur) {
		ns_str(o->min, lo, sizeof(lo));
		ns_str(o->max, hi, sizeof(hi));
	} else {
		argus_format_size(o->min, lo, sizeof(lo));
		argus_format_size(o->max, hi, sizeof(hi));
	}
	if (o->min == 1 && !o->max)
		snprintf(range, sizeof(range), " above 0");
	else if (o->min && o->max)
		snprintf(range, sizeof(range), " from %s to %s", lo, hi);
	else if (o->min)
		snprintf(range, sizeof(range), " of at least %s", lo);
	else if (o->max)
		snprintf(range, sizeof(range), " of at most %s", hi);
	return msg_usage_error(p->u->cmd, "%s wants a %s%s, like %s, got '%s'", name,
			       dur ? "duration" : "size", range, dur ? "30s, 5m or 1500ms" : "512M or 2G",
			       msg_tstr(arg));
}

/* Stores arg (NULL: none given) as o says.  0 or 2 (printed). */
static int set_value(struct parse *p, const struct argus_opt *o, const char *arg)
{
	const char *cmd = p->u->cmd;
	char name[64], want[80], *end;
	unsigned long long v;
	uint64_t u;

	opt_name(o, name, sizeof(name));
	switch (o->type) {
	case ARGUS_OPT_BOOL:
		*(bool *)o->value = true;
		return 0;
	case ARGUS_OPT_SET_INT:
		*(int *)o->value = (int)o->defval;
		return 0;
	case ARGUS_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case ARGUS_OPT_CALLBACK:
		return o->cb(cmd, o, arg) ? 2 : 0;
	case ARGUS_OPT_U32:
	case ARGUS_OPT_U32_LIST:
	case ARGUS_OPT_U64: {
		uint64_t top = o->type == ARGUS_OPT_U64 ? UINT64_MAX : UINT32_MAX;
		bool hex = o->type == ARGUS_OPT_U64 && !strncmp(arg, "0x", 2);

		errno = 0;
		v = strtoull(hex ? arg + 2 : arg, &end, hex ? 16 : 10);
		if (!*arg || *end || errno || end == arg + 2 * hex || arg[0] == '-' ||
		    arg[0] == '+' || v > top || v < o->min || (o->max && v > o->max)) {
			num_want(o, top, want, sizeof(want));
			return msg_usage_error(cmd, "%s wants %s, got '%s'", name, want, msg_tstr(arg));
		}
		if (o->type == ARGUS_OPT_U32_LIST) {
			struct argus_opt_list *l = o->value;

			if (l->n == l->max)
				return msg_usage_error(cmd, "%s: at most %u of them", name, l->max);
			l->v[l->n++] = (uint32_t)v;
		} else if (o->type == ARGUS_OPT_U32) {
			*(uint32_t *)o->value = (uint32_t)v;
		} else {
			*(uint64_t *)o->value = v;
		}
		return 0;
	}
	case ARGUS_OPT_DURATION:
	case ARGUS_OPT_SIZE:
		if ((o->type == ARGUS_OPT_DURATION ? argus_parse_duration(arg, &u)
						   : argus_parse_size(arg, &u)) ||
		    u < o->min || (o->max && u > o->max))
			return bad_unit(p, name, o, arg);
		*(uint64_t *)o->value = u;
		return 0;
	default:
		return 0;
	}
}

/* Handles the option word argv[*i] (its value inline after '=' or, short,
 * after the letter, else the next word).  0 or 2 (printed). */
static int one(struct parse *p, const struct argus_opt *opts, int argc, char **argv, int *i)
{
	const char *w = argv[*i], *inl = NULL;
	const struct argus_opt *o;
	char name[64];

	if (w[1] == '-') {
		size_t len = strcspn(w + 2, "=");

		if (w[2 + len] == '=')
			inl = w + 3 + len;
		o = find(opts, w + 2, len, 0);
	} else {
		o = find(opts, NULL, 0, w[1]);
		if (o && w[2])
			inl = w + 2 + (w[2] == '=');
	}
	if (!o)
		return msg_usage_error(p->u->cmd, "unknown option '%s'", msg_tstr(w));
	opt_name(o, name, sizeof(name));
	if (o->flags & ARGUS_OPT_ONCE) {
		for (unsigned k = 0; k < p->nseen; k++)
			if (p->seen[k] == o)
				return msg_usage_error(p->u->cmd, "%s given twice: give each flag once",
						       name);
		if (p->nseen < MAX_ONCE)
			p->seen[p->nseen++] = o;
	}
	if (!takes_value(o)) {
		if (inl)
			return msg_usage_error(p->u->cmd, "%s takes no value, got '%s'", name,
					       msg_tstr(w));
		return set_value(p, o, NULL);
	}
	if (!inl && !(o->flags & ARGUS_OPT_OPTARG)) {
		if (*i + 1 >= argc)
			return msg_usage_error(p->u->cmd, "%s needs a value: %s %s", name, name,
					       o->argh ? o->argh : "VALUE");
		inl = argv[++*i];
	}
	return set_value(p, o, inl);
}

/* A word the parser leaves to the command: not an option. */
static bool positional(const char *w)
{
	return w[0] != '-' || !w[1] || (w[1] >= '0' && w[1] <= '9');
}

int argus_opts_parse(const struct argus_usage *u, const struct argus_opt *opts, int argc,
		     char **argv, unsigned flags)
{
	struct parse p = { .u = u };
	int n = 0, i;

	msg_set_synopsis(u->cmd, u->synopsis);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			argus_opts_usage(stdout, u, opts);
			return ARGUS_OPT_HELP;
		}
	}
	for (i = 1; i < argc; i++) {
		char *w = argv[i];

		if (!strcmp(w, "--")) {
			if (!(flags & ARGUS_OPTS_KEEP_DASHDASH))
				i++;
			break;
		}
		if (positional(w)) {
			if (flags & ARGUS_OPTS_STOP_AT_NON_OPTION)
				break;
			argv[n++] = w;
			continue;
		}
		if (one(&p, opts, argc, argv, &i))
			return ARGUS_OPT_ERROR;
	}
	while (i < argc)
		argv[n++] = argv[i++];
	if (n < argc)
		argv[n] = NULL;
	return n;
}

/* ---- the help ---------------------------------------------------------- */

/* A line of help kept as it is written: a row of a table (indented, or
 * with a gap of 3 spaces or more between its columns).  Other lines are
 * prose, joined and wrapped to the help's width. */
static bool is_row(const char *line, int len)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%.*s", len, line);
	return buf[0] == ' ' || strstr(buf, "   ");
}

/* Prints text[0..len) wrapped to HELP_WIDTH columns; the first line where
 * the cursor is (at col), the others from col. */
static void wrapped(FILE *f, const char *text, size_t len, bool *first)
{
	while (len) {
		size_t n = len, sp;

		if (n > HELP_WIDTH) {
			/* the last space at or before the width; a longer word whole */
			for (sp = HELP_WIDTH; sp > 0 && text[sp] != ' '; sp--)
				;
			if (!sp)
				for (sp = HELP_WIDTH; sp < len && text[sp] != ' '; sp++)
					;
			n = sp;
			while (n && text[n - 1] == ' ')
				n--;
		}
		fprintf(f, "%*s%.*s\n", *first ? 0 : HELP_COL, "", (int)n, text);
		*first = false;
		while (n < len && text[n] == ' ')
			n++;
		text += n;
		len -= n;
	}
}

/* Prints an option's help from the column HELP_COL (the cursor is there):
 * prose wrapped, table rows as written. */
static void help_text(FILE *f, const char *help)
{
	char para[2048];
	size_t plen = 0;
	bool first = true;

	while (*help) {
		int len = (int)strcspn(help, "\n");

		if (is_row(help, len)) {
			wrapped(f, para, plen, &first);
			plen = 0;
			fprintf(f, "%*s%.*s\n", first ? 0 : HELP_COL, "", len, help);
			first = false;
		} else if (plen + (size_t)len + 3 < sizeof(para)) {
			/* a sentence's end keeps its two spaces */
			if (plen)
				plen += (size_t)snprintf(para + plen, sizeof(para) - plen, "%s",
							 para[plen - 1] == '.' ? "  " : " ");
			memcpy(para + plen, help, (size_t)len);
			plen += (size_t)len;
		}
		help += len + (help[len] == '\n');
	}
	wrapped(f, para, plen, &first);
	if (first)
		fputc('\n', f);
}

static void usage_opts(FILE *f, const struct argus_opt *o)
{
	for (; o->type != ARGUS_OPT_END; o++) {
		char left[128];
		int n = 0;

		if (o->type == ARGUS_OPT_INCLUDE) {
			usage_opts(f, o->value);
			continue;
		}
		if (o->flags & ARGUS_OPT_HIDDEN)
			continue;
		n += snprintf(left, sizeof(left), "  ");
		if (o->short_name)
			n += snprintf(left + n, sizeof(left) - (size_t)n, "-%c%s", o->short_name,
				      o->long_name ? ", " : "");
		if (o->long_name)
			n += snprintf(left + n, sizeof(left) - (size_t)n, "--%s", o->long_name);
		if (takes_value(o) && o->argh)
			snprintf(left + n, sizeof(left) - (size_t)n,
				 o->flags & ARGUS_OPT_OPTARG ? "[=%s]" : " %s", o->argh);
		n = (int)strlen(left);
		if (n > HELP_COL - 2)
			fprintf(f, "%s\n%*s", left, HELP_COL, "");
		else
			fprintf(f, "%-*s", HELP_COL, left);
		help_text(f, o->help ? o->help : "");
	}
}

void argus_opts_usage(FILE *f, const struct argus_usage *u, const struct argus_opt *opts)
{
	fprintf(f, "usage: %s", u->synopsis);
	if (u->about)
		fputs(u->about, f);
	if (opts && opts->type != ARGUS_OPT_END) {
		fputc('\n', f);
		usage_opts(f, opts);
	}
}
