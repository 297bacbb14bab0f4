/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_internal.h - what the trace reader's files share: struct
 * argus_trace, the chunk list, the per-chunk scratch, and the helpers that
 * parse a span of payload bytes.  Only the reader's own files include it;
 * what the whole library shares (writer too) is in trace_internal.h.
 *
 * The reader, by job (docs/trace-format.md, "Reading"):
 *   trace_reader.c     the public API: open, iterate, rewind, chunks, close
 *   reader_scan.c      open: file header, the chunk scan, per-CPU totals
 *   reader_classify.c  open: GOOD / OVERWRITTEN / INCOMPLETE / corrupt
 *   reader_inflate.c   a chunk's payload inflated: whole, or streamed
 *   reader_prefetch.c  the next chunk's payload inflated on a second
 *                      thread while this one is decoded
 *   reader_chunk.c     one chunk loaded: sections validated, then decoded
 *   reader_sections.c  the parser of each section (SCHEMA, STRINGS, ...)
 *   reader_merge.c     a chunk's per-CPU streams decoded in (ts, cpu) order
 *   reader_tables.c    the global tables (strings, stacks, tasks, maps)
 *                      and their lookups
 *   reader_arena.c     the arena behind those tables
 * Every varint goes through varint.h, which the writer encodes with.
 *
 * Invariant of every parser here: a length or count read from the file is
 * checked against the bytes that remain before it is used; nothing is
 * allocated from a length field except the inflate buffer, which is
 * bounded by ARGUS_MAX_RAW_LEN and by what deflate can expand payload_len
 * into (argus_raw_len_plausible: zstd chunks are held to deflate's bound).
 */
#ifndef ARGUS_READER_INTERNAL_H
#define ARGUS_READER_INTERNAL_H

#include "trace_internal.h"

#include <pthread.h>

struct libdeflate_decompressor;
struct ZSTD_DCtx_s;

/* A chunk's payload inflated (reader_inflate.c): the buffer and the
 * decompressors' state (each NULL until first used; libdeflate's always
 * NULL without libdeflate). */
struct inflate_buf {
	uint8_t *raw;
	size_t cap;
	struct libdeflate_decompressor *inflater;
	struct ZSTD_DCtx_s *zstd;
};

/* The next chunk's payload, inflated on a second thread while this one is
 * decoded (reader_prefetch.c).  Only the worker touches buf, c and rc
 * between its start and pthread_join(); the join orders the rest. */
struct prefetch {
	pthread_t th;
	bool running;                   /* th started, not joined */
	bool off;                       /* argus_trace__prefetch(t, false) */
	const struct chunk *c;          /* the chunk th inflates */
	const uint8_t *payload;
	struct inflate_buf buf;
	int rc;                         /* reader_inflate()'s */
	char why[160];
};

/* ---------------------------------------------------------------------
 * Arena (reader_arena.c): bump allocation in blocks that never move, so
 * pointers into it stay valid until argus_trace__close().
 */
struct ablk;

struct arena {
	struct ablk *head;              /* block being filled, NULL = none */
};

/* n bytes, 16-aligned; NULL when out of memory. */
void *reader_arena_alloc(struct arena *a, size_t n);
void reader_arena_free(struct arena *a);

/* Grow *arr (of elem-sized items, capacity *cap) to hold n items.  Inline:
 * it sits on every table insert. */
static inline int reader_grow(void *arr, uint32_t *cap, uint64_t n,
			      size_t elem)
{
	void **p = arr;
	uint64_t c = *cap ? *cap : 16;
	void *q;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	if (c > UINT32_MAX || c > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = (uint32_t)c;
	return 0;
}

/* ---------------------------------------------------------------------
 * Data structures.
 */
enum chunk_state { CH_GOOD, CH_OVERWRITTEN, CH_INCOMPLETE, CH_CORRUPT, CH_BAD };

struct chunk {
	uint64_t off;                   /* file offset of the header */
	struct argus_chunk_header h;
	uint8_t state;                  /* enum chunk_state */
	bool merged;                    /* tasks/maps already in the tables */
};

struct schema_ent {
	uint16_t type;
	uint8_t refs;                   /* ARGUS_SCHEMA_* */
	uint8_t nfields;                /* <= ARGUS_SCHEMA_MAX_FIELDS */
	uint64_t smask;                 /* bit i: field i is zigzag */
};

struct cpu_ent {                        /* a CPUS-section entry */
	uint16_t cpu;
	bool seen;                      /* its STREAM was found */
	uint64_t min_ts, max_ts, lost, nevents;
};

struct span {                           /* bytes still to parse */
	const uint8_t *p, *end;
};

struct cursor {                         /* one CPU stream being merged */
	struct span s;                  /* what is left to decode */
	uint64_t left;                  /* events not yet decoded */
	uint64_t ts;                    /* of the last decoded event */
	uint64_t next_ts;               /* of the next one (peeked), if left */
	uint64_t next_type;             /* its type (peeked) */
	const uint8_t *next_p;          /* past its type and ts delta (peeked) */
	uint64_t max_ts;                /* the CPUS max_ts of its cpu */
	uint16_t cpu;
};

struct gstack {
	const uint64_t *ips;
	uint32_t nr;
};

struct gtask {
	struct argus_task t;
	uint64_t seq;                   /* chunk it came from */
};

struct pidhead {
	uint32_t pid;
	uint32_t head;                  /* map id of the newest, 0 = none */
};

struct argus_trace {
	char *path;                     /* NULL when opened from memory */
	const uint8_t *base;
	size_t len;
	bool mapped;
	int fd;                         /* during open only, else -1 */
	struct argus_file_header fh;
	bool ring;

	struct chunk *chunks;           /* GOOD ones, in seq order */
	uint32_t nchunks, chunks_cap;
	uint64_t max_seq;               /* of every candidate */

	/* the chunk being iterated */
	uint32_t next_chunk;            /* index of the next one to load */
	struct inflate_buf in;          /* its payload, inflated */
	struct prefetch pf;             /* the next one's, ahead */
	struct schema_ent *sch;
	uint32_t nsch, sch_cap;
	uint16_t sch_small[256];        /* type -> index + 1, for type < 256 */
	struct cpu_ent *cpus;
	uint32_t ncpus, cpus_cap;
	uint32_t *lstr, nlstr, lstr_cap; /* local string id - 1 -> global */
	uint32_t *lstk, nlstk, lstk_cap;
	uint64_t *ips;                  /* scratch for one stack */
	uint32_t ips_cap;
	struct cursor *cur;
	uint32_t ncur, cur_cap;
	/* The chunk's events, already merged into (ts, cpu) order and with
	 * global string and stack ids: validation decodes every event once,
	 * straight into place, and iteration hands them out from here
	 * (__next copies one, __next_batch points at the rest). */
	struct argus_event *evbuf;
	uint32_t evbuf_cap;
	uint32_t nev, pos;              /* events in evbuf, next to hand out */
	uint32_t *heap, heap_cap;       /* cursor indexes, min-heap (scratch) */
	uint64_t last_ts;
	bool have_last;
	char why[160];                  /* reason of the last decode failure */

	/* global tables (reader_tables.c) */
	struct arena arena;
	char **str;
	uint32_t *str_len;
	uint32_t nstr, str_cap, str_len_cap;
	struct argus_hidx str_idx;
	struct gstack *stk;
	uint32_t nstk, stk_cap;
	struct argus_hidx stk_idx;
	struct gtask **task;
	uint32_t ntask, task_cap;
	struct argus_hidx task_idx;
	struct argus_map **map;
	uint32_t *map_next;
	uint32_t nmap, map_cap, map_next_cap;
	struct argus_hidx map_idx;
	struct pidhead *pidh;
	uint32_t npidh, pidh_cap;
	struct argus_hidx pidh_idx;

	struct argus_cpu_stats probe[256]; /* scratch for reader_probe_cpus() */
	struct argus_trace_stats stats;
};

/* ---------------------------------------------------------------------
 * Parsing helpers over a span: every varint through varint.h.
 */
static inline __attribute__((always_inline)) int get(struct span *s, uint64_t *v)
{
	return varint_get(&s->p, s->end, v);
}

static inline __attribute__((always_inline)) int get_max(struct span *s, uint64_t *v,
						   uint64_t max)
{
	return varint_get(&s->p, s->end, v) || *v > max ? -EBADMSG : 0;
}

static inline int get_bytes(struct span *s, uint64_t n, const uint8_t **out)
{
	if (n > (uint64_t)(s->end - s->p))
		return -EBADMSG;
	*out = s->p;
	s->p += n;
	return 0;
}

/* A count of items that each take at least `min` bytes: bounded by what
 * remains, so no table sized from it can outgrow the input. */
static inline int get_count(struct span *s, uint64_t *n, unsigned min)
{
	if (get(s, n))
		return -EBADMSG;
	return *n > (uint64_t)(s->end - s->p) / min ? -EBADMSG : 0;
}

/* Write the reason of a decode failure into t->why; returns -EBADMSG.
 * (trace_reader.c) */
int reader_why(struct argus_trace *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Local (chunk) id -> global id through a chunk's map; 0 stays 0. */
static inline uint32_t gid(const uint32_t *map, uint64_t local)
{
	return local ? map[local - 1] : 0;
}

/* The chunk's schema entry of `type`, or NULL.  Inline: once per event. */
static inline const struct schema_ent *schema_find(const struct argus_trace *t,
						   uint64_t type)
{
	if (type < 256)
		return t->sch_small[type] ? &t->sch[t->sch_small[type] - 1] : NULL;
	for (uint32_t i = 0; i < t->nsch; i++)
		if (t->sch[i].type == type)
			return &t->sch[i];
	return NULL;
}

/* ---------------------------------------------------------------------
 * Entry points between the reader's files.
 */

/* reader_scan.c: check the file header into t->fh, then find, classify
 * and list the GOOD chunks with their per-CPU totals in t->stats. */
int reader_check_header(struct argus_trace *t, struct argus_error *err);
int reader_scan(struct argus_trace *t, struct argus_error *err);

/* reader_classify.c */
/* Set the state of each of the n candidates, given in offset order (a
 * ring's are left sorted newest first).  Snapshot: any bad chunk is an
 * error in *err. */
int reader_classify_snapshot(struct argus_trace *t, struct chunk *cand,
			     size_t n, struct argus_error *err);
int reader_classify_ring(struct argus_trace *t, struct chunk *cand, size_t n,
			 uint64_t area_end, struct argus_error *err);
/* The header of a chunk changed since the scan: a live ring moved on. */
bool reader_chunk_changed(const struct argus_trace *t, const struct chunk *c);
/* qsort order: seq decreasing, then offset increasing. */
int reader_cmp_seq_desc(const void *a, const void *b);
/* Fill *err: "corrupt chunk seq S at offset O: what"; returns -EBADMSG. */
int reader_corrupt(struct argus_trace *t, struct argus_error *err,
		   const struct chunk *c, const char *what);
/* Mark a ring chunk CH_CORRUPT and count it in t->stats. */
void reader_skip_corrupt(struct argus_trace *t, struct chunk *c,
			 const char *what);

/* reader_inflate.c */
/* A streaming inflater over a chunk's payload, for the first sections of
 * a chunk at open without inflating all of it.  A zstd frame is streamed
 * with ib's decompression context (made if ib has none yet), so ib must
 * not be inflated into while the zsrc lives. */
struct zsrc;
struct zsrc *reader_zsrc_new(const uint8_t *in, uint32_t in_len, uint16_t flags,
			     uint32_t raw_len, struct inflate_buf *ib);
void reader_zsrc_free(struct zsrc *s);
bool reader_zsrc_eof(const struct zsrc *s);
int reader_zsrc_varint(struct zsrc *s, uint64_t *v);
int reader_zsrc_skip(struct zsrc *s, uint64_t n);
uint64_t reader_zsrc_consumed(const struct zsrc *s);
/* The whole payload of a chunk with header h into b->raw (raw_len
 * bytes): 0, -ENOMEM, or -EBADMSG with the reason in why.  Touches
 * nothing but b and why: the prefetch thread calls it too. */
int reader_inflate(struct inflate_buf *b, const uint8_t *payload,
		   const struct argus_chunk_header *h, char *why, size_t whylen);
/* The whole payload of c into t->in.raw: the prefetched one if the
 * thread inflated c, else inflated now.  Returns as reader_inflate(),
 * with the reason in t->why. */
int reader_inflate_chunk(struct argus_trace *t, const struct chunk *c);
void reader_inflate_buf_free(struct inflate_buf *b);

/* reader_prefetch.c */
/* Start inflating chunk c on the second thread (nothing if one is still
 * running, if c is too small to be worth a thread, or prefetch is off). */
void reader_prefetch_start(struct argus_trace *t, const struct chunk *c);
/* Wait for the thread.  If it inflated c: its buffer becomes t->in (the
 * old one goes to the thread's next run), *rc is its result (the reason
 * in t->why) and true is returned.  Else its work is dropped: false. */
bool reader_prefetch_take(struct argus_trace *t, const struct chunk *c, int *rc);
/* Wait for the thread and drop its work (rewind, close). */
void reader_prefetch_stop(struct argus_trace *t);

/* reader_chunk.c: inflate and validate chunk c, intern its strings and
 * stacks, merge its tasks and maps, decode its events into evbuf; once
 * c's payload is inflated, chunk next (if not NULL) starts inflating on
 * the prefetch thread.  0 = ready, 1 = skip it (it changed under us), -EBADMSG = corrupt (reason in
 * t->why), other < 0 = system error. */
int reader_load_chunk(struct argus_trace *t, struct chunk *c,
		      const struct chunk *next);

/* reader_sections.c: each validates its section; with intern/merge set,
 * it also fills the chunk's id maps or the global tables. */
int reader_parse_schema(struct argus_trace *t, struct span s);
int reader_parse_strings(struct argus_trace *t, struct span s, bool intern);
int reader_parse_stacks(struct argus_trace *t, struct span s, bool intern);
int reader_parse_tasks(struct argus_trace *t, struct span s, uint64_t seq,
		       bool merge);
int reader_parse_maps(struct argus_trace *t, struct span s, bool merge);
int reader_parse_cpus(struct argus_trace *t, struct span s,
		      const struct argus_chunk_header *h);
struct cpu_ent *reader_cpu_find(struct argus_trace *t, uint64_t cpu);

/* reader_merge.c: decode every event of t->cur[] into t->evbuf, merged on
 * (ts, cpu); t->nev set.  -EBADMSG with the reason in t->why. */
int reader_decode_merged(struct argus_trace *t);

/* reader_tables.c: 0 or -ENOMEM.  Interning sets *id to the global id
 * (1-based) of the content, adding it if it is new. */
int reader_intern_string(struct argus_trace *t, const uint8_t *p, uint64_t n,
			 uint32_t *id);
int reader_intern_stack(struct argus_trace *t, const uint64_t *ips,
			uint32_t nr, uint32_t *id);
/* Keep the entry from the highest seq for each tid. */
int reader_merge_task(struct argus_trace *t, const struct argus_task *k,
		      uint64_t seq);
int reader_merge_map(struct argus_trace *t, const struct argus_map *m);
void reader_tables_free(struct argus_trace *t);

#endif /* ARGUS_READER_INTERNAL_H */
