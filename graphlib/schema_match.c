/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schema_match.c - apply parsed user-schema rules (schema.h) to raw trace
 * events: does an event match a rule's event spec, what is the value of an
 * edge rule's attribute, does a thread match a filter line.
 *
 * These run once per event and rule during the graph build, so they do no
 * allocation and read only the event, its names and its mark text.
 *
 * Names: `process` is the process's name and `thread` the thread's own
 * name, both kernel comms (at most 15 characters).  A NULL name is
 * unknown: it matches only a spec that does not constrain it.
 *
 * A mark's text is "WORD VALUE...": its first whitespace-separated word
 * names it (mark:WORD), the rest, trimmed, is its value.  VALUE attributes
 * are compared as a 64-bit FNV-1a hash of that rest; two marks with no
 * rest both have the value of the empty string.
 */
#include <fnmatch.h>
#include <string.h>

#include "argus_events.h"
#include "schema.h"

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

/* Bounds of the first word of s: [*w, *w + *wlen). */
static void first_word(const char *s, const char **w, size_t *wlen)
{
	while (*s && is_space(*s))
		s++;
	*w = s;
	while (*s && !is_space(*s))
		s++;
	*wlen = (size_t)(s - *w);
}

static int glob_match(const char *glob, const char *name)
{
	if (!glob[0])
		return 1;
	return name && fnmatch(glob, name, 0) == 0;
}

/* The syscall an event is about, for the types that have one. */
static int64_t event_sys_nr(const struct argus_event *ev)
{
	switch (ev->type) {
	case AE_SYS_ENTER:
		return (int64_t)ev->f[ARGUS_F_SE_NR];
	case AE_SYS_EXIT:
		return (int64_t)ev->f[ARGUS_F_SX_NR];
	case AE_SWITCH:
		return (int64_t)ev->f[ARGUS_F_SW_SYS_NR]; /* -1: not in one */
	default:
		return -1;
	}
}

int schema_match_event(const struct schema_event_spec *spec,
		       const struct argus_event *ev, const char *process,
		       const char *thread, const char *mark_text)
{
	if (!spec->type || spec->type != ev->type)
		return 0;
	if (spec->sys_nr >= 0 && event_sys_nr(ev) != spec->sys_nr)
		return 0;
	if (spec->type == AE_MARK && spec->word[0]) {
		const char *w;
		size_t n;

		if (!mark_text)
			return 0;
		first_word(mark_text, &w, &n);
		if (n != strlen(spec->word) || memcmp(w, spec->word, n))
			return 0;
	}
	if (spec->pid && ev->pid != spec->pid)
		return 0;
	return glob_match(spec->process, process) &&
	       glob_match(spec->thread, thread);
}

int schema_filter_match(const struct schema_filter *f, const char *process,
			const char *thread)
{
	return glob_match(f->process, process) &&
	       glob_match(f->thread, thread);
}

uint64_t schema_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a 64 offset basis */

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ull;          /* FNV-1a 64 prime */
	}
	return h;
}

/* The hash of a mark's value: its text after the first word, trimmed. */
static uint64_t mark_value(const char *text)
{
	const char *w, *end;
	size_t n;

	if (!text)
		return schema_hash("", 0);
	first_word(text, &w, &n);
	w += n;
	while (*w && is_space(*w))
		w++;
	end = w + strlen(w);
	while (end > w && is_space(end[-1]))
		end--;
	return schema_hash(w, (size_t)(end - w));
}

static const char *const attr_names[] = {
	[SCHEMA_ATTR_ARG0] = "arg0", [SCHEMA_ATTR_ARG1] = "arg1",
	[SCHEMA_ATTR_ARG2] = "arg2", [SCHEMA_ATTR_ARG3] = "arg3",
	[SCHEMA_ATTR_ARG4] = "arg4", [SCHEMA_ATTR_ARG5] = "arg5",
	[SCHEMA_ATTR_RET] = "ret", [SCHEMA_ATTR_OBJ] = "obj",
	[SCHEMA_ATTR_PEER] = "peer", [SCHEMA_ATTR_VALUE] = "value",
	[SCHEMA_ATTR_PID] = "pid", [SCHEMA_ATTR_TID] = "tid",
};

const char *schema_attr_str(unsigned attr)
{
	return attr < sizeof(attr_names) / sizeof(attr_names[0]) ?
	       attr_names[attr] : NULL;
}

/*
 * Which attributes each event type has (docs/schema.md, "Attributes"):
 *   sys_enter  arg0..arg5
 *   sys_exit   arg0 (the fd or first argument), ret, obj, peer
 *   switch     arg0 (the wait's key argument), obj, peer
 *   mark       value
 * and every type has pid and tid.
 */
int schema_attr_valid(unsigned attr, uint16_t type)
{
	if (attr == SCHEMA_ATTR_PID || attr == SCHEMA_ATTR_TID)
		return 1;
	switch (type) {
	case AE_SYS_ENTER:
		return attr >= SCHEMA_ATTR_ARG0 && attr <= SCHEMA_ATTR_ARG5;
	case AE_SYS_EXIT:
		return attr == SCHEMA_ATTR_ARG0 || attr == SCHEMA_ATTR_RET ||
		       attr == SCHEMA_ATTR_OBJ || attr == SCHEMA_ATTR_PEER;
	case AE_SWITCH:
		return attr == SCHEMA_ATTR_ARG0 || attr == SCHEMA_ATTR_OBJ ||
		       attr == SCHEMA_ATTR_PEER;
	case AE_MARK:
		return attr == SCHEMA_ATTR_VALUE;
	default:
		return 0;
	}
}

uint64_t schema_attr(unsigned attr, const struct argus_event *ev,
		     const char *mark_text)
{
	if (!schema_attr_valid(attr, ev->type))
		return 0;
	switch (attr) {
	case SCHEMA_ATTR_PID:
		return ev->pid;
	case SCHEMA_ATTR_TID:
		return ev->tid;
	case SCHEMA_ATTR_VALUE:
		return mark_value(mark_text);
	case SCHEMA_ATTR_RET:
		return ev->f[ARGUS_F_SX_RET];
	default:
		break;
	}
	if (ev->type == AE_SYS_ENTER)
		return ev->f[ARGUS_F_SE_ARG0 + (attr - SCHEMA_ATTR_ARG0)];
	if (ev->type == AE_SYS_EXIT)
		return attr == SCHEMA_ATTR_ARG0 ? ev->f[ARGUS_F_SX_ARG0] :
		       attr == SCHEMA_ATTR_OBJ ? ev->f[ARGUS_F_SX_OBJ] :
		       ev->f[ARGUS_F_SX_PEER];
	/* AE_SWITCH */
	return attr == SCHEMA_ATTR_ARG0 ? ev->f[ARGUS_F_SW_SYS_ARG] :
	       attr == SCHEMA_ATTR_OBJ ? ev->f[ARGUS_F_SW_OBJ] :
	       ev->f[ARGUS_F_SW_PEER];
}
