/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schema_holder.c - the `holder` line of the user schema (docs/schema.md,
 * "Holders only the application knows"), and the two pure helpers the
 * host runs its command with: the expansion of %p/%t and the strict
 * reading of its output.
 *
 *   holder FUNC[,FUNC...] [process=GLOB] [as USER] [timeout MS] run COMMAND [ARG...]
 *
 * Everything after `run` is the command, word by word, as the schema's
 * splitter cut the line (spaces and tabs; no quoting, no shell).  The
 * options before `run` come in any order, each at most once.
 *
 * Invariants of a parsed rule (argus_holder_rule.h): 1..16 FUNCs, each
 * 1..127 bytes without ',' or '='; argv[0] an absolute path or a bare
 * name, with no '%'; every '%' of an ARG starts %p, %t or %%; a user name
 * of the portable set, not "root"; a timeout of 1..60000 ms; all strings
 * NUL-terminated and owned by rule->text.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_holder_rule.h"
#include "schema.h"
#include "schema_holder.h"

#define PID_MAX 4194304u        /* the kernel's PID_MAX_LIMIT */
#define QMAX 48                 /* bytes of a word quoted in a message */

#define USAGE "holder FUNC[,FUNC...] [process=GLOB] [as USER] [timeout MS] run COMMAND [ARG...]"

__attribute__((format(printf, 3, 4)))
static int bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* 'word' cut to QMAX bytes ("..." after), for messages. */
static const char *q(const char *w, char *buf, size_t len)
{
	size_t n = strlen(w);

	snprintf(buf, len, "'%.*s%s'", n > QMAX ? QMAX : (int)n, w, n > QMAX ? "..." : "");
	return buf;
}

/* Every '%' of an ARG starts %p, %t or %%: 0, or -EINVAL with *at the bad
 * sequence's position. */
static int check_percent(const char *a, size_t *at)
{
	for (size_t i = 0; a[i]; i++) {
		if (a[i] != '%')
			continue;
		if (a[i + 1] != 'p' && a[i + 1] != 't' && a[i + 1] != '%') {
			*at = i;
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

static int valid_user(const char *u)
{
	size_t n = strlen(u);

	if (!n || n >= ARGUS_HOLDER_USER_LEN || u[0] == '-' || (u[0] >= '0' && u[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = u[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.' || (c == '$' && i == n - 1)))
			return 0;
	}
	return 1;
}

int schema_holder_parse(struct argus_schema *s, char **words, int n, uint32_t line, char *why,
			size_t len)
{
	struct argus_holder_rule r;
	char qb[QMAX + 8], *t, *at;
	const char *funcs;
	int i, run = -1, have_as = 0, have_tmo = 0;
	size_t total = 0;

	memset(&r, 0, sizeof(r));
	r.line = line;
	r.timeout_ms = ARGUS_HOLDER_TIMEOUT_MS;
	if (s->nholders >= ARGUS_HOLDER_MAX_RULES)
		return bad(why, len, "too many holder rules (at most %d)", ARGUS_HOLDER_MAX_RULES);
	if (n < 2 || !strcmp(words[1], "run"))
		return bad(why, len, "holder: missing the function(s) a waiting thread's stack "
			   "must show (" USAGE ")");
	funcs = words[1];
	if (strchr(funcs, '='))
		return bad(why, len, "holder: expected FUNC[,FUNC...] first, got %s",
			   q(funcs, qb, sizeof(qb)));
	for (i = 2; i < n; i++)
		if (!strcmp(words[i], "run")) {
			run = i;
			break;
		}
	if (run < 0)
		return bad(why, len, "holder: missing 'run COMMAND' (" USAGE ")");
	if (run == n - 1)
		return bad(why, len, "holder: missing the command after 'run'");
	/* the options, between FUNCs and run */
	for (i = 2; i < run; i++) {
		const char *w = words[i];

		if (!strncmp(w, "process=", 8)) {
			size_t gl = strlen(w + 8);

			if (r.process[0])
				return bad(why, len, "holder: process= given twice, again in %s",
					   q(w, qb, sizeof(qb)));
			if (!gl)
				return bad(why, len, "holder: empty glob in %s", q(w, qb, sizeof(qb)));
			if (gl >= sizeof(r.process))
				return bad(why, len, "holder: glob %s is longer than 15 characters "
					   "(a process name has at most 15)", q(w + 8, qb, sizeof(qb)));
			memcpy(r.process, w + 8, gl + 1);
		} else if (!strcmp(w, "as")) {
			if (have_as++)
				return bad(why, len, "holder: 'as' given twice");
			if (++i >= run)
				return bad(why, len, "holder: missing the user name after 'as'");
			if (!strcmp(words[i], "root"))
				return bad(why, len, "holder: 'as root': a holder command never runs "
					   "as root");
			if (!valid_user(words[i]))
				return bad(why, len, "holder: bad user name %s after 'as' (letters, "
					   "digits, '_', '-', '.', at most %d)",
					   q(words[i], qb, sizeof(qb)), ARGUS_HOLDER_USER_LEN - 1);
			strcpy(r.user, words[i]);
		} else if (!strcmp(w, "timeout")) {
			uint64_t ms = 0;
			const char *v;

			if (have_tmo++)
				return bad(why, len, "holder: 'timeout' given twice");
			if (++i >= run)
				return bad(why, len, "holder: missing milliseconds after 'timeout'");
			v = words[i];
			for (const char *c = v; *c && ms <= ARGUS_HOLDER_MAX_TIMEOUT_MS; c++)
				ms = *c >= '0' && *c <= '9' ? ms * 10 + (uint64_t)(*c - '0')
					: ARGUS_HOLDER_MAX_TIMEOUT_MS + 1;
			if (!*v || !ms || ms > ARGUS_HOLDER_MAX_TIMEOUT_MS)
				return bad(why, len, "holder: bad timeout %s (expected milliseconds "
					   "from 1 to %d)", q(v, qb, sizeof(qb)),
					   ARGUS_HOLDER_MAX_TIMEOUT_MS);
			r.timeout_ms = (uint32_t)ms;
		} else {
			return bad(why, len, "holder: unexpected %s before 'run' (expected "
				   "process=GLOB, as USER or timeout MS)", q(w, qb, sizeof(qb)));
		}
	}
	/* the command */
	if (n - run - 1 > ARGUS_HOLDER_MAX_ARGS)
		return bad(why, len, "holder: a command of more than %d words",
			   ARGUS_HOLDER_MAX_ARGS);
	{
		const char *c0 = words[run + 1];

		if (strchr(c0, '%'))
			return bad(why, len, "holder: the command %s cannot hold '%%' (its "
				   "arguments can: %%p, %%t)", q(c0, qb, sizeof(qb)));
		if (c0[0] != '/' && strchr(c0, '/'))
			return bad(why, len, "holder: the command %s must be an absolute path or "
				   "a bare name (looked up beside argus, then in /usr/bin and /bin)",
				   q(c0, qb, sizeof(qb)));
		if (c0[0] == '/' && !c0[1])
			return bad(why, len, "holder: the command '/' is a directory");
	}
	for (i = run + 2; i < n; i++) {
		size_t pos;

		if (check_percent(words[i], &pos)) {
			char seq[3] = { '%', words[i][pos + 1], 0 };

			return bad(why, len, "holder: unknown '%s' in %s (expected %%p, %%t or %%%%)",
				   seq[1] ? seq : "%", q(words[i], qb, sizeof(qb)));
		}
	}
	/* the functions: a comma-separated list */
	{
		const char *f = funcs;

		for (;;) {
			const char *e = strchr(f, ',');
			size_t fl = e ? (size_t)(e - f) : strlen(f);

			if (!fl)
				return bad(why, len, "holder: empty function name in %s",
					   q(funcs, qb, sizeof(qb)));
			if (fl >= ARGUS_HOLDER_FUNC_LEN)
				return bad(why, len, "holder: function name longer than %d bytes in %s",
					   ARGUS_HOLDER_FUNC_LEN - 1, q(funcs, qb, sizeof(qb)));
			if (r.nfuncs == ARGUS_HOLDER_MAX_FUNCS)
				return bad(why, len, "holder: more than %d functions in %s",
					   ARGUS_HOLDER_MAX_FUNCS, q(funcs, qb, sizeof(qb)));
			r.nfuncs++;
			total += fl + 1;
			if (!e)
				break;
			f = e + 1;
		}
	}
	for (i = run + 1; i < n; i++)
		total += strlen(words[i]) + 1;

	/* all checked: build it, its strings NUL-separated in one buffer
	 * (rule->text) that the pointers point into */
	t = malloc(total);
	if (!t)
		return -ENOMEM;
	at = t;
	r.text = t;
	{
		const char *f = funcs;

		for (uint32_t k = 0; k < r.nfuncs; k++) {
			const char *e = strchr(f, ',');
			size_t fl = e ? (size_t)(e - f) : strlen(f);

			memcpy(at, f, fl);
			at[fl] = 0;
			r.funcs[k] = at;
			at += fl + 1;
			f = e ? e + 1 : f + fl;
		}
	}
	for (i = run + 1; i < n; i++) {
		size_t wl = strlen(words[i]) + 1;

		memcpy(at, words[i], wl);
		r.argv[r.argc++] = at;
		at += wl;
	}
	r.argv[r.argc] = NULL;
	{
		struct argus_holder_rule *nh = realloc(s->holders,
						       (s->nholders + 1) * sizeof(*nh));

		if (!nh) {
			free(t);
			return -ENOMEM;
		}
		s->holders = nh;
		s->holders[s->nholders++] = r;
	}
	return 0;
}

void schema_holders_free(struct argus_schema *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nholders; i++)
		free(s->holders[i].text);
	free(s->holders);
	s->holders = NULL;
	s->nholders = 0;
}

uint32_t argus_schema__nholders(const struct argus_schema *s)
{
	return s ? s->nholders : 0;
}

const struct argus_holder_rule *argus_schema__holder(const struct argus_schema *s, uint32_t i)
{
	return s && i < s->nholders ? &s->holders[i] : NULL;
}

int argus_holder__expand(const char *arg, uint32_t pid, uint32_t tid, char *out, size_t len)
{
	size_t o = 0;

	if (!arg || !out || !len)
		return -EINVAL;
	for (const char *c = arg; *c; c++) {
		char num[16];
		const char *add = num;
		size_t an;

		if (*c != '%') {
			num[0] = *c;
			num[1] = 0;
		} else if (c[1] == 'p' || c[1] == 't') {
			snprintf(num, sizeof(num), "%u", c[1] == 'p' ? pid : tid);
			c++;
		} else if (c[1] == '%') {
			add = "%";
			c++;
		} else {
			return -EINVAL;
		}
		an = strlen(add);
		if (o + an >= len)
			return -ENAMETOOLONG;
		memcpy(out + o, add, an);
		o += an;
	}
	out[o] = 0;
	return 0;
}

int argus_holder__parse_pids(const char *out, size_t len, uint32_t *pids, uint32_t max)
{
	uint32_t n = 0;
	size_t i = 0;

	if (!out && len)
		return -EINVAL;
	while (i < len) {
		char c = out[i];
		uint64_t v = 0;
		uint32_t k;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '{' ||
		    c == '}') {
			i++;
			continue;
		}
		if (c < '0' || c > '9')
			return -EINVAL;
		for (; i < len && out[i] >= '0' && out[i] <= '9'; i++) {
			v = v * 10 + (uint64_t)(out[i] - '0');
			if (v > PID_MAX)
				return -EINVAL;
		}
		if (!v)
			return -EINVAL;
		for (k = 0; k < n && pids[k] != v; k++)
			;
		if (k < n)
			continue;       /* named twice */
		if (n == max)
			return -E2BIG;
		pids[n++] = (uint32_t)v;
	}
	return (int)n;
}
