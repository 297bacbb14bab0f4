/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schema.h - the parsed user schema (docs/schema.md), internal to
 * graphlib.  schema_parse.c turns the text into these rules; the graph
 * builder (graph_build.c) applies them to raw trace events during its one
 * pass, through schema_match_event() and schema_attr().
 *
 * Invariants: every rule has a valid event spec (type != 0); glob strings
 * are NUL-terminated and at most 15 characters (a comm); a rule's fields
 * not named in its line are "any".
 */
#ifndef ARGUS_SCHEMA_H
#define ARGUS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "argus_graph.h"

#define SCHEMA_GLOB_LEN 16      /* comm-sized glob, with the NUL */
#define SCHEMA_WORD_LEN 64      /* mark word */
#define SCHEMA_VERSION 1        /* the `argus-schema N` this build reads */
#define SCHEMA_MAX_RULES 10000  /* boundaries + edges + filters */
#define SCHEMA_MAX_LINE 4096    /* bytes per line, without its line end */
#define SCHEMA_MAX_FILE (16u << 20) /* bytes argus_schema__load reads */

/* Which events a rule line names ("syscall:read process=db"). */
struct schema_event_spec {
	uint16_t type;          /* enum ae_type; `syscall:` = AE_SYS_EXIT */
	int32_t sys_nr;         /* for AE_SYS_ENTER/EXIT/SWITCH: -1 = any */
	char word[SCHEMA_WORD_LEN]; /* AE_MARK: first word of the text, ""=any */
	char process[SCHEMA_GLOB_LEN]; /* fnmatch glob on the process name */
	char thread[SCHEMA_GLOB_LEN];  /* fnmatch glob on the thread name */
	uint32_t pid;           /* 0 = any */
};

/* Attribute an edge rule matches on. */
enum schema_attr {
	SCHEMA_ATTR_ARG0 = 1,   /* sys_enter args 0..5, sys_exit arg0 */
	SCHEMA_ATTR_ARG1, SCHEMA_ATTR_ARG2, SCHEMA_ATTR_ARG3,
	SCHEMA_ATTR_ARG4, SCHEMA_ATTR_ARG5,
	SCHEMA_ATTR_RET,        /* sys_exit return value */
	SCHEMA_ATTR_OBJ,        /* object identity of the fd (sys_exit) */
	SCHEMA_ATTR_PEER,       /* peer identity of the fd (sys_exit) */
	SCHEMA_ATTR_VALUE,      /* mark: the text after the first word */
	SCHEMA_ATTR_PID,
	SCHEMA_ATTR_TID,
};

enum schema_where { SCHEMA_BEFORE = 1, SCHEMA_AFTER };

struct schema_boundary {
	uint8_t where;          /* enum schema_where: cut before/after event */
	struct schema_event_spec ev;
	uint32_t line;          /* line number in the schema file */
};

struct schema_edge {
	uint8_t type;           /* enum argus_edge_type: CUSTOM, WORKITEM,
	                           DATAFLAG, MESSAGE */
	uint8_t src_attr, dst_attr; /* enum schema_attr */
	uint8_t many;           /* 1: a source links every later match;
	                           0: each source is consumed once (FIFO) */
	struct schema_event_spec src, dst;
	uint32_t line;
};

enum schema_filter_kind {
	SCHEMA_FILTER_WAKER = 1, /* wake-ups done by threads matching glob */
	SCHEMA_FILTER_TARGET,    /* wake-ups of threads matching glob */
	SCHEMA_FILTER_KERNEL,    /* treat matching threads as housekeeping */
};

struct schema_filter {
	uint8_t kind;           /* enum schema_filter_kind */
	char process[SCHEMA_GLOB_LEN];
	char thread[SCHEMA_GLOB_LEN];
	uint32_t line;
};

struct argus_schema {
	struct schema_boundary *boundaries;
	uint32_t nboundaries;
	struct schema_edge *edges;
	uint32_t nedges;
	struct schema_filter *filters;
	uint32_t nfilters;
	/* `holder` rules (schema_holder.c, argus_holder_rule.h): not used by
	 * the graph; the diagnosis's host runs them */
	struct argus_holder_rule *holders;
	uint32_t nholders;
};

struct argus_event;

/* 1 when `ev` (done by a thread named `thread` in a process named
 * `process`) matches `spec`; `mark_text` is ev's string for AE_MARK. */
int schema_match_event(const struct schema_event_spec *spec,
		       const struct argus_event *ev, const char *process,
		       const char *thread, const char *mark_text);
/* The value of attribute `attr` of `ev`, hashed to 64 bits for VALUE. */
uint64_t schema_attr(unsigned attr, const struct argus_event *ev,
		     const char *mark_text);
/* 1 when a thread/process pair matches a filter's globs. */
int schema_filter_match(const struct schema_filter *f, const char *process,
			const char *thread);
/* 1 when attribute `attr` is defined for events of type `type` (enum
 * ae_type): the parser rejects the other pairs, and schema_attr() gives 0
 * for them. */
int schema_attr_valid(unsigned attr, uint16_t type);
/* Name of an attribute as written in the schema ("arg0", "ret"...), NULL
 * when out of range. */
const char *schema_attr_str(unsigned attr);
/* The 64-bit FNV-1a hash of len bytes: what SCHEMA_ATTR_VALUE compares. */
uint64_t schema_hash(const char *s, size_t len);

#endif /* ARGUS_SCHEMA_H */
