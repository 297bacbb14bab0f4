/* argus_event_format.h - the one formatter of a decoded trace event
 * (struct argus_event, trace_format.h): one text line or one JSON object.
 *
 * `argus dump`, `argus dump --json`, `argus show` (through the field
 * helpers below) and argus-rawdump all print events through this file, so
 * a syscall, an object or an event type is spelled the same everywhere:
 *   - an event type by argus_event_type_str() (the trace's one table of
 *     type names), "unknown" when this build does not know it;
 *   - a syscall by its name, "sys_N" when the name table lacks N, "-" for
 *     no syscall (N < 0);
 *   - an object as KIND:OBJ->PEER in hex, tcp/udp as KIND:IP:PORT->IP:PORT.
 *
 * Which fields a type has, under which text and JSON names, is one table
 * in event_format.c that both outputs walk; docs/trace-format.md ("dump
 * --json") documents every JSON field.
 *
 * Untrusted strings (comms, paths, marks) are escaped for a terminal in
 * the text (argus_text_escape) and kept exact in JSON
 * (argus_json_write_str). */
#ifndef ARGUS_EVENT_FORMAT_H
#define ARGUS_EVENT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

struct argus_event_fmt {
	/* comms (of tids) and the event's strings (str, str2 ids); NULL when
	 * there is no trace (argus-rawdump): then str/str2 below */
	const struct argus_trace *trace;
	const char *str, *str2;   /* the event's strings without a trace */
	/* without a trace: the comm of tid, NULL unknown (NULL: none known) */
	const char *(*comm)(void *arg, uint32_t tid);
	/* ip of process pid at time ts, symbolized into buf ("fn+0x12
	 * (/lib/x.so)"): 0 when found.  NULL: never symbolize. */
	int (*symbolize)(void *arg, uint32_t pid, uint64_t ts, uint64_t ip,
			 char *buf, size_t len);
	void *arg;                /* for symbolize and comm */
	bool stacks;              /* also the event's user stack: text, one
	                             tab-led line per frame under the event;
	                             JSON, a "stack" array */
};

/* One event as one text line (newline included; with stacks, its frames
 * follow), or as one JSON object on one line.  Return 0, or -EIO when
 * writing to f failed. */
int argus_event__write_text(FILE *f, const struct argus_event_fmt *o,
			    const struct argus_event *e);
int argus_event__write_json(FILE *f, const struct argus_event_fmt *o,
			    const struct argus_event *e);

/* ---- field helpers, for outputs that hold events in another shape (the
 * graph's events in `argus show`) ---- */

/* The type's name, "unknown" if this build does not know it. */
const char *argus_event_fmt_type(unsigned type);
/* "task" "softirq" "hardirq" "nmi", "?" out of range. */
const char *argus_event_fmt_ctx(unsigned ctx);
/* The syscall's name, or "sys_N" written into buf, or "-" when nr < 0. */
const char *argus_event_fmt_sys(long nr, char *buf, size_t len);
/* An object: "pipe:0x1a2b", "unix:0x1a2b->0x1a2c",
 * "tcp:10.0.0.1:80->10.0.0.2:5000"; "" for kind 0 (none). */
const char *argus_event_fmt_obj(uint64_t kind, uint64_t obj, uint64_t peer,
				char *buf, size_t len);
/* The same object as JSON: {"kind":"tcp","obj":N,"peer":N,"text":"..."}
 * (the text as argus_event_fmt_obj spells it); null for kind 0. */
void argus_event_fmt_json_obj(FILE *f, uint64_t kind, uint64_t obj, uint64_t peer);

#endif
