/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schema_parse.c - read a user schema (docs/schema.md) into the rules of
 * schema.h.
 *
 * The format is line-based; each line is split into words at spaces and
 * tabs, and a word starting with '#' comments out the rest of the line:
 *
 *   argus-schema 1                               (optional, first line)
 *   boundary before|after EVENT [FILTER...]
 *   edge TYPE EVENT ATTR [FILTER...] -> EVENT ATTR [FILTER...] [many]
 *   filter waker|target|kernel GLOB-FILTER...
 *   holder FUNC[,FUNC...] [OPTION...] run COMMAND [ARG...]  (schema_holder.c)
 *
 *   EVENT   syscall:NAME | sys_enter:NAME | sys_exit:NAME | switch:NAME
 *           | mark:WORD | TYPE-NAME     (NAME, WORD may be '*': any)
 *   FILTER  process=GLOB | thread=GLOB | pid=N
 *
 * The parser stops at the first bad line: argus_schema__parse() returns
 * NULL with err->msg = "NAME:LINE: what is wrong, quoting the bad word",
 * err->offset = LINE and err->code = -EINVAL (-ENOMEM when out of memory).
 * Nothing is half-built: a schema is returned whole or not at all.
 *
 * Invariants on what is produced (schema.h): every rule has a valid event
 * spec; globs are 1..15 characters; an edge's attributes are defined for
 * its events (schema_attr_valid) and a VALUE only pairs with a VALUE; a
 * filter rule has at least one glob; at most SCHEMA_MAX_RULES rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_events.h"
#include "schema.h"
#include "schema_holder.h"
#include "syscall_names.h"

#define MAX_WORDS 32            /* a full edge line has 14 */
#define PID_MAX 4194304u        /* the kernel's PID_MAX_LIMIT */

/* Quoting a word in a message: at most QW_MAX bytes of it, then "...". */
#define QW_MAX 48
#define QW "'%.*s%s'"
#define QWA(w) qw_len(w), (w), strlen(w) > QW_MAX ? "..." : ""

static int qw_len(const char *w)
{
	size_t n = strlen(w);

	return n > QW_MAX ? QW_MAX : (int)n;
}

struct parser {
	const char *name;       /* for messages: the path or the caller's */
	uint32_t line;          /* 1-based, of the line being parsed */
	int seen_rule;          /* a rule or the version line came before */
	struct argus_error *err;
	struct argus_schema *s;
	uint32_t bcap, ecap, fcap; /* allocated entries of the three arrays */
};

static void set_error(struct argus_error *err, int code, uint64_t offset,
		      const char *name, const char *what)
{
	const char *dots = "";
	char at[24] = "";
	size_t n = strlen(name);

	if (!err)
		return;
	err->code = code;
	err->offset = offset;
	/* Keep the end of a long name: the message after it matters more. */
	if (n > 96) {
		name += n - 93;
		dots = "...";
	}
	if (offset)
		snprintf(at, sizeof(at), ":%llu", (unsigned long long)offset);
	snprintf(err->msg, sizeof(err->msg), "%s%s%s: %s", dots, name, at,
		 what);
}

/* Fail the current line with a formatted reason; returns -EINVAL. */
__attribute__((format(printf, 2, 3)))
static int fail(struct parser *p, const char *fmt, ...)
{
	char what[224];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	set_error(p->err, -EINVAL, p->line, p->name, what);
	return -EINVAL;
}

static int fail_nomem(struct parser *p)
{
	set_error(p->err, -ENOMEM, p->line, p->name, "out of memory");
	return -ENOMEM;
}

/* ---------------------------------------------------------------------
 * Words of a rule.
 */

/* EVENT: fill *spec from one word. */
static int parse_event(struct parser *p, const char *w,
		       struct schema_event_spec *spec)
{
	const char *colon = strchr(w, ':'), *eq = strchr(w, '=');
	const char *arg = colon ? colon + 1 : NULL;
	char kind[32];
	size_t klen = colon ? (size_t)(colon - w) : strlen(w);
	uint16_t type = 0;
	long nr;

	memset(spec, 0, sizeof(*spec));
	spec->sys_nr = -1;
	if (eq && (!colon || eq < colon))       /* "mark:k=v" is an event */
		return fail(p, "expected an event, got the filter " QW, QWA(w));
	if (klen >= sizeof(kind))
		return fail(p, "unknown event " QW " (see docs/schema.md, "
			    "\"Events\")", QWA(w));
	memcpy(kind, w, klen);
	kind[klen] = 0;

	if (!strcmp(kind, "syscall") || !strcmp(kind, "sys_exit"))
		type = AE_SYS_EXIT;
	else if (!strcmp(kind, "sys_enter"))
		type = AE_SYS_ENTER;
	else if (!strcmp(kind, "switch"))
		type = AE_SWITCH;
	else if (!strcmp(kind, "mark"))
		type = AE_MARK;
	else
		for (uint16_t t = 1; t < AE_TYPE_MAX; t++) {
			const char *name = argus_event_type_str(t);

			if (name && !strcmp(name, kind)) {
				type = t;
				break;
			}
		}
	if (!type)
		return fail(p, "unknown event " QW " (see docs/schema.md, "
			    "\"Events\")", QWA(w));
	if (type == AE_LOST)
		return fail(p, "event " QW " is the collector's count of lost "
			    "records, not something a thread does", QWA(w));
	spec->type = type;
	if (!colon)
		return 0;

	if (type == AE_MARK) {
		if (!*arg)
			return fail(p, "missing word after 'mark:' in " QW
				    " (mark:WORD, or mark:* for any)", QWA(w));
		if (!strcmp(arg, "*"))
			return 0;
		if (strlen(arg) >= SCHEMA_WORD_LEN)
			return fail(p, "mark word in " QW " is longer than %d "
				    "characters", QWA(w), SCHEMA_WORD_LEN - 1);
		strcpy(spec->word, arg);
		return 0;
	}
	if (type != AE_SYS_EXIT && type != AE_SYS_ENTER && type != AE_SWITCH)
		return fail(p, "event '%s' takes no ':NAME' in " QW, kind,
			    QWA(w));
	if (!*arg)
		return fail(p, "missing syscall name after ':' in " QW
			    " (%s:NAME, or %s:* for any)", QWA(w), kind, kind);
	if (!strcmp(arg, "*"))
		return 0;
	nr = argus_syscall_nr(arg);
	if (nr < 0)
		return fail(p, "unknown syscall " QW " in " QW, QWA(arg),
			    QWA(w));
	spec->sys_nr = (int32_t)nr;
	return 0;
}

static int parse_glob(struct parser *p, const char *w, const char *v,
		      const char *what, char out[SCHEMA_GLOB_LEN])
{
	size_t n = strlen(v);

	if (!n)
		return fail(p, "empty glob in " QW, QWA(w));
	if (n >= SCHEMA_GLOB_LEN)
		return fail(p, "glob " QW " is longer than %d characters "
			    "(a %s name has at most %d)", QWA(v),
			    SCHEMA_GLOB_LEN - 1, what, SCHEMA_GLOB_LEN - 1);
	memcpy(out, v, n + 1);
	return 0;
}

static int parse_pid(struct parser *p, const char *w, const char *v,
		     uint32_t *pid)
{
	uint64_t n = 0;

	if (!*v)
		goto bad;
	for (const char *c = v; *c; c++) {
		if (*c < '0' || *c > '9')
			goto bad;
		n = n * 10 + (uint64_t)(*c - '0');
		if (n > PID_MAX)
			goto bad;
	}
	if (!n)
		goto bad;
	*pid = (uint32_t)n;
	return 0;
bad:
	return fail(p, "bad pid in " QW " (expected a decimal number from 1 "
		    "to %u)", QWA(w), PID_MAX);
}

/*
 * FILTER words (they all contain '='), from words[*i] on, into the globs
 * and pid of a rule.  `pid` is NULL on filter lines, which take globs
 * only.  Stops at the first word without '='.
 */
static int parse_filters(struct parser *p, char **words, int *i, int n,
			 char process[SCHEMA_GLOB_LEN],
			 char thread[SCHEMA_GLOB_LEN], uint32_t *pid)
{
	for (; *i < n && strchr(words[*i], '='); (*i)++) {
		const char *w = words[*i];
		const char *v = strchr(w, '=') + 1;
		size_t klen = (size_t)(v - 1 - w);
		int err;

		if (klen == 7 && !strncmp(w, "process", 7)) {
			if (process[0])
				return fail(p, "process= given twice, again in " QW,
					    QWA(w));
			err = parse_glob(p, w, v, "process", process);
		} else if (klen == 6 && !strncmp(w, "thread", 6)) {
			if (thread[0])
				return fail(p, "thread= given twice, again in " QW,
					    QWA(w));
			err = parse_glob(p, w, v, "thread", thread);
		} else if (klen == 3 && !strncmp(w, "pid", 3)) {
			if (!pid)
				return fail(p, "filter lines take process= and "
					    "thread= only, not " QW, QWA(w));
			if (*pid)
				return fail(p, "pid= given twice, again in " QW,
					    QWA(w));
			err = parse_pid(p, w, v, pid);
		} else {
			return fail(p, "unknown filter " QW " (expected %s)",
				    QWA(w), pid ? "process=GLOB, thread=GLOB "
				    "or pid=N" : "process=GLOB or thread=GLOB");
		}
		if (err)
			return err;
	}
	return 0;
}

static const char *attrs_of(uint16_t type)
{
	switch (type) {
	case AE_SYS_ENTER:
		return "arg0..arg5, pid, tid";
	case AE_SYS_EXIT:
		return "arg0, ret, obj, peer, pid, tid";
	case AE_SWITCH:
		return "arg0, obj, peer, pid, tid";
	case AE_MARK:
		return "value, pid, tid";
	default:
		return "pid, tid";
	}
}

/* ATTR of the event written as `ev` (already parsed into *spec). */
static int parse_attr(struct parser *p, char **words, int i, int n,
		      const char *ev, const struct schema_event_spec *spec,
		      uint8_t *attr)
{
	const char *w = i < n ? words[i] : NULL;

	if (!w || strchr(w, '=') || strstr(w, "->") || !strcmp(w, "many"))
		return fail(p, "missing attribute after " QW " (%s events "
			    "have: %s)", QWA(ev),
			    argus_event_type_str(spec->type),
			    attrs_of(spec->type));
	for (unsigned a = SCHEMA_ATTR_ARG0; a <= SCHEMA_ATTR_TID; a++) {
		if (strcmp(w, schema_attr_str(a)))
			continue;
		if (!schema_attr_valid(a, spec->type))
			return fail(p, "attribute " QW " does not apply to "
				    QW " (%s events have: %s)", QWA(w),
				    QWA(ev), argus_event_type_str(spec->type),
				    attrs_of(spec->type));
		*attr = (uint8_t)a;
		return 0;
	}
	return fail(p, "unknown attribute " QW " after " QW " (expected "
		    "arg0..arg5, ret, obj, peer, value, pid or tid)", QWA(w),
		    QWA(ev));
}

static int trailing(struct parser *p, char **words, int i, int n,
		    const char *rule)
{
	if (i >= n)
		return 0;
	return fail(p, "unexpected " QW " at the end of the %s line",
		    QWA(words[i]), rule);
}

/* Make room for one more entry of an array of `size`-byte entries. */
static int grow(struct parser *p, void **arr, uint32_t n, uint32_t *cap,
		size_t size)
{
	uint32_t ncap;
	void *a;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	a = realloc(*arr, (size_t)ncap * size);
	if (!a)
		return fail_nomem(p);
	*arr = a;
	*cap = ncap;
	return 0;
}

/* ---------------------------------------------------------------------
 * Rules.
 */

/* boundary before|after EVENT [FILTER...] */
static int parse_boundary(struct parser *p, char **words, int n)
{
	struct schema_boundary b = { 0 };
	int i = 3, err;

	if (n < 2)
		return fail(p, "boundary: missing 'before' or 'after'");
	if (!strcmp(words[1], "before"))
		b.where = SCHEMA_BEFORE;
	else if (!strcmp(words[1], "after"))
		b.where = SCHEMA_AFTER;
	else
		return fail(p, "boundary: expected 'before' or 'after', got "
			    QW, QWA(words[1]));
	if (n < 3)
		return fail(p, "boundary: missing event after '%s'", words[1]);
	err = parse_event(p, words[2], &b.ev);
	if (!err)
		err = parse_filters(p, words, &i, n, b.ev.process,
				    b.ev.thread, &b.ev.pid);
	if (!err)
		err = trailing(p, words, i, n, "boundary");
	if (!err)
		err = grow(p, (void **)&p->s->boundaries, p->s->nboundaries,
			   &p->bcap, sizeof(b));
	if (err)
		return err;
	b.line = p->line;
	p->s->boundaries[p->s->nboundaries++] = b;
	return 0;
}

static const struct {
	const char *name;
	uint8_t type;
} edge_types[] = {
	{ "custom", ARGUS_EDGE_CUSTOM },
	{ "workitem", ARGUS_EDGE_WORKITEM },
	{ "dataflag", ARGUS_EDGE_DATAFLAG },
	{ "message", ARGUS_EDGE_MESSAGE },
};

/* One end of an edge: EVENT ATTR [FILTER...], from words[*i] on. */
static int parse_edge_end(struct parser *p, char **words, int *i, int n,
			  struct schema_event_spec *spec, uint8_t *attr)
{
	const char *ev = words[*i];
	int err;

	err = parse_event(p, ev, spec);
	if (!err)
		err = parse_attr(p, words, *i + 1, n, ev, spec, attr);
	if (err)
		return err;
	*i += 2;
	return parse_filters(p, words, i, n, spec->process, spec->thread,
			     &spec->pid);
}

/* edge TYPE EVENT ATTR [FILTER...] -> EVENT ATTR [FILTER...] [many] */
static int parse_edge(struct parser *p, char **words, int n)
{
	struct schema_edge e = { 0 };
	int i, arrow = -1, err;

	if (n < 2)
		return fail(p, "edge: missing type (custom, workitem, "
			    "dataflag or message)");
	for (size_t k = 0; k < sizeof(edge_types) / sizeof(edge_types[0]); k++)
		if (!strcmp(words[1], edge_types[k].name))
			e.type = edge_types[k].type;
	if (!e.type)
		return fail(p, "unknown edge type " QW " (expected custom, "
			    "workitem, dataflag or message)", QWA(words[1]));
	for (i = 2; i < n; i++) {
		if (!strcmp(words[i], "->")) {
			arrow = i;
			break;
		}
		if (strstr(words[i], "->"))
			return fail(p, "write '->' as a word of its own, with "
				    "spaces around it, in " QW, QWA(words[i]));
	}
	if (arrow < 0)
		return fail(p, "edge: missing '->' between the source and the "
			    "destination");
	if (arrow == 2)
		return fail(p, "edge: missing source event before '->'");

	i = 2;
	err = parse_edge_end(p, words, &i, n, &e.src, &e.src_attr);
	if (err)
		return err;
	if (i != arrow) {
		if (!strcmp(words[i], "many"))
			return fail(p, "'many' goes at the end of the edge "
				    "line, after the destination");
		return fail(p, "unexpected " QW " before '->' (expected "
			    "process=, thread= or pid=)", QWA(words[i]));
	}
	if (++i >= n)
		return fail(p, "edge: missing destination event after '->'");
	err = parse_edge_end(p, words, &i, n, &e.dst, &e.dst_attr);
	if (err)
		return err;
	if (i < n && !strcmp(words[i], "many")) {
		e.many = 1;
		i++;
	}
	err = trailing(p, words, i, n, "edge");
	if (err)
		return err;
	if ((e.src_attr == SCHEMA_ATTR_VALUE) != (e.dst_attr == SCHEMA_ATTR_VALUE))
		return fail(p, "'value' is a hash of a mark's text and only "
			    "matches another 'value', not '%s'",
			    schema_attr_str(e.src_attr == SCHEMA_ATTR_VALUE ?
					    e.dst_attr : e.src_attr));
	err = grow(p, (void **)&p->s->edges, p->s->nedges, &p->ecap,
		   sizeof(e));
	if (err)
		return err;
	e.line = p->line;
	p->s->edges[p->s->nedges++] = e;
	return 0;
}

/* filter waker|target|kernel GLOB-FILTER... */
static int parse_filter(struct parser *p, char **words, int n)
{
	struct schema_filter f = { 0 };
	int i = 2, err;

	if (n < 2)
		return fail(p, "filter: missing kind (waker, target or kernel)");
	if (!strcmp(words[1], "waker"))
		f.kind = SCHEMA_FILTER_WAKER;
	else if (!strcmp(words[1], "target"))
		f.kind = SCHEMA_FILTER_TARGET;
	else if (!strcmp(words[1], "kernel"))
		f.kind = SCHEMA_FILTER_KERNEL;
	else
		return fail(p, "unknown filter kind " QW " (expected waker, "
			    "target or kernel)", QWA(words[1]));
	err = parse_filters(p, words, &i, n, f.process, f.thread, NULL);
	if (!err)
		err = trailing(p, words, i, n, "filter");
	if (err)
		return err;
	if (!f.process[0] && !f.thread[0])
		return fail(p, "filter %s: needs process=GLOB or thread=GLOB "
			    "(it would apply to every thread)", words[1]);
	err = grow(p, (void **)&p->s->filters, p->s->nfilters, &p->fcap,
		   sizeof(f));
	if (err)
		return err;
	f.line = p->line;
	p->s->filters[p->s->nfilters++] = f;
	return 0;
}

/* argus-schema N */
static int parse_version(struct parser *p, char **words, int n)
{
	if (p->seen_rule)
		return fail(p, "'argus-schema' must come before every rule, "
			    "on the first line that is not blank or a comment");
	if (n < 2)
		return fail(p, "missing version number after 'argus-schema'");
	if (strcmp(words[1], "1"))
		return fail(p, "unsupported schema version " QW " (this Argus "
			    "reads version %d)", QWA(words[1]), SCHEMA_VERSION);
	return trailing(p, words, 2, n, "argus-schema");
}

/* Split `line` in place into words; a word starting with '#' ends it. */
static int split(struct parser *p, char *line, char **words)
{
	int n = 0;

	for (char *c = line;;) {
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c || *c == '#')
			return n;
		if (n == MAX_WORDS)
			return fail(p, "more than %d words on one line",
				    MAX_WORDS);
		words[n++] = c;
		while (*c && *c != ' ' && *c != '\t')
			c++;
		if (*c)
			*c++ = 0;
	}
}

static int parse_line(struct parser *p, char *line)
{
	char *words[MAX_WORDS];
	struct argus_schema *s = p->s;
	int n = split(p, line, words);
	int err;

	if (n <= 0)
		return n;
	if (!strcmp(words[0], "argus-schema")) {
		err = parse_version(p, words, n);
	} else if (!strcmp(words[0], "boundary") || !strcmp(words[0], "edge") ||
		   !strcmp(words[0], "filter")) {
		if (s->nboundaries + s->nedges + s->nfilters >= SCHEMA_MAX_RULES)
			return fail(p, "too many rules (at most %d)",
				    SCHEMA_MAX_RULES);
		err = words[0][0] == 'b' ? parse_boundary(p, words, n) :
		      words[0][0] == 'e' ? parse_edge(p, words, n) :
		      parse_filter(p, words, n);
	} else if (!strcmp(words[0], "instrument")) {
		/* `instrument FUNC as KIND [at-return KIND]`: for `argus
		 * instrument --schema`
		 * (cli/cmd_instrument.c), which patches a live process; the
		 * graph takes nothing from it, but a malformed one is still
		 * an error here, so a typo is caught by whichever reads first */
		static const char *const kinds[] = { "boundary", "enqueue", "dequeue",
						     "begin", "end" };
		if ((n != 4 && n != 6) || strcmp(words[2], "as") ||
		    (n == 6 && strcmp(words[4], "at-return")))
			return fail(p, "instrument: expected `instrument [LIB:]SYMBOL "
				    "as KIND [at-return KIND]`");
		for (int w = 3; w < n; w += 2) {
			int ok = 0;

			for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
				ok |= !strcmp(words[w], kinds[k]);
			if (!ok)
				return fail(p, "instrument: unknown kind " QW " (expected "
					    "boundary, enqueue, dequeue, begin or end)",
					    QWA(words[w]));
		}
		err = 0;
	} else if (!strcmp(words[0], "holder")) {
		/* the diagnosis's, not the graph's: schema_holder.c */
		char why[200];

		err = schema_holder_parse(s, words, n, p->line, why, sizeof(why));
		if (err == -ENOMEM)
			return fail_nomem(p);
		if (err)
			return fail(p, "%s", why);
	} else {
		return fail(p, "unknown keyword " QW " (expected boundary, edge, "
			    "filter, holder, instrument or argus-schema)", QWA(words[0]));
	}
	p->seen_rule = 1;
	return err;
}

/* Check one raw line for bytes no rule may hold. */
static int check_bytes(struct parser *p, const char *l, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)l[k];

		if (!c)
			return fail(p, "NUL byte at column %zu (a schema is "
				    "text)", k + 1);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(p, "control character 0x%02x at column %zu "
				    "(only spaces and tabs separate words)",
				    c, k + 1);
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Public API.
 */

void argus_schema__free(struct argus_schema *s)
{
	if (!s)
		return;
	free(s->boundaries);
	free(s->edges);
	free(s->filters);
	schema_holders_free(s);
	free(s);
}

struct argus_schema *argus_schema__parse(const char *text, size_t len,
					 const char *name,
					 struct argus_error *err)
{
	struct parser p = { 0 };
	char line[SCHEMA_MAX_LINE + 1];
	size_t pos = 0;
	int rc = 0;

	p.name = name ? name : "<schema>";
	p.err = err;
	if (!text && len) {
		set_error(err, -EINVAL, 0, p.name, "no text");
		errno = EINVAL;
		return NULL;
	}
	p.s = calloc(1, sizeof(*p.s));
	if (!p.s) {
		rc = fail_nomem(&p);
		goto out;
	}
	/* A UTF-8 byte-order mark, as some editors write, is not a word. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		pos = 3;

	while (pos < len && !rc) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;

		pos += n + (nl != NULL);
		p.line++;
		if (n && l[n - 1] == '\r')      /* CRLF line ends */
			n--;
		if (n > SCHEMA_MAX_LINE) {
			rc = fail(&p, "line longer than %d bytes",
				  SCHEMA_MAX_LINE);
			break;
		}
		rc = check_bytes(&p, l, n);
		if (rc)
			break;
		memcpy(line, l, n);
		line[n] = 0;
		rc = parse_line(&p, line);
	}
out:
	if (rc) {
		argus_schema__free(p.s);
		errno = -rc;
		return NULL;
	}
	return p.s;
}

struct argus_schema *argus_schema__load(const char *path,
					struct argus_error *err)
{
	struct argus_schema *s = NULL;
	char what[160];
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto fail;
	}
	/* Read to the end, whatever the file is (a pipe has no size), but
	 * no further than SCHEMA_MAX_FILE. */
	for (;;) {
		ssize_t r;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *nb;

			if (ncap > SCHEMA_MAX_FILE + 1)
				ncap = SCHEMA_MAX_FILE + 1;
			if (ncap == cap) {
				rc = -EFBIG;
				goto fail;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto fail;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	close(fd);
	s = argus_schema__parse(buf, len, path, err);
	rc = s ? 0 : -errno;
	free(buf);
	errno = -rc;
	return s;
fail:
	if (rc == -EFBIG)
		snprintf(what, sizeof(what), "schema larger than %u MiB",
			 SCHEMA_MAX_FILE >> 20);
	else
		snprintf(what, sizeof(what), "cannot read the schema: %s",
			 strerror(-rc));
	set_error(err, rc, 0, path, what);
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = -rc;
	return NULL;
}

void argus_schema__counts(const struct argus_schema *s, uint32_t *boundaries,
			  uint32_t *edges, uint32_t *filters)
{
	if (boundaries)
		*boundaries = s ? s->nboundaries : 0;
	if (edges)
		*edges = s ? s->nedges : 0;
	if (filters)
		*filters = s ? s->nfilters : 0;
}
