/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_reader.c - open a trace file and return its events in time order.
 *
 * Open (argus_trace__open / __open_mem) does, over the mapped bytes:
 *   1. check the file header (magic, version, crc, sizes);
 *   2. scan every block boundary of the data area for a chunk header
 *      (magic + header crc): the candidates (skipping the holes of a
 *      sparse ring);
 *   3. classify each candidate (docs/trace-format.md, "Ring wrap and
 *      crashes"): GOOD, OVERWRITTEN (a newer chunk covers part of it, or
 *      it is older than the newest and runs off the ring), INCOMPLETE (the
 *      newest chunk of a ring, cut by a crash), or a hard error naming its
 *      offset and seq;
 *   4. for each GOOD chunk, check the payload crc and inflate just enough
 *      of it to read its CPUS section: per-CPU totals are known at open.
 * Events are decoded lazily: __next() inflates one chunk at a time into
 * `raw`, validates every section of it, then decodes every event of its
 * per-CPU streams, merged on (ts, cpu), once and straight into `evbuf`,
 * before returning the first one (so a chunk is returned whole or not at
 * all).  __next() copies events out of evbuf; __next_batch() hands out
 * the rest of the chunk in place.  Chunks go in seq order; an event older
 * than the one returned before it (chunks may overlap in time) is still
 * returned and counted in stats.out_of_order.
 *
 * Inflating is the largest single cost of reading: with libdeflate
 * (ARGUS_HAVE_LIBDEFLATE) the same zlib streams inflate about twice as
 * fast as with zlib's inflate(), which stays as the fallback.
 *
 * Global tables, filled as chunks are decoded and kept across __rewind():
 *   strings  id -> NUL-terminated bytes, deduplicated by content
 *   stacks   id -> ips, deduplicated by content
 *   tasks    tid -> the entry from the highest-seq chunk that had it
 *   maps     every distinct mapping, chained per pid
 * Their storage is an arena that never moves, so pointers handed out stay
 * valid until __close().
 *
 * Every length and count read from the file is checked against the bytes
 * that remain before it is used; nothing is allocated from a length field
 * except the inflate buffer, which is bounded by ARGUS_MAX_RAW_LEN and by
 * what deflate can expand payload_len into.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_internal.h"

#ifdef ARGUS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

/* ---------------------------------------------------------------------
 * Arena: bump allocation in blocks that never move.
 */
struct ablk {
	struct ablk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct ablk *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	struct ablk *b = a->head;
	size_t need = (n + 15) & ~(size_t)15;

	if (n > SIZE_MAX / 2)
		return NULL;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > 65536 ? need : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		/* a big one-off goes behind the current block so that the
		 * current block's free space is not wasted */
		if (need > 65536 && a->head) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	b->used += need;
	return (char *)b->data + b->used - need;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct ablk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}

/* Grow *arr (of elem-sized items, capacity *cap) to hold n items. */
static int grow(void *arr, uint32_t *cap, uint64_t n, size_t elem)
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
	uint8_t *raw;
	size_t raw_cap;
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
#ifdef ARGUS_HAVE_LIBDEFLATE
	struct libdeflate_decompressor *inflater;
#endif
	uint64_t last_ts;
	bool have_last;
	char why[160];                  /* reason of the last decode failure */

	/* global tables */
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

	struct argus_cpu_stats probe[256]; /* scratch for probe_cpus() */
	struct argus_trace_stats stats;
};

/* ---------------------------------------------------------------------
 * Parsing helpers over a span.
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

static int get_bytes(struct span *s, uint64_t n, const uint8_t **out)
{
	if (n > (uint64_t)(s->end - s->p))
		return -EBADMSG;
	*out = s->p;
	s->p += n;
	return 0;
}

/* A count of items that each take at least `min` bytes: bounded by what
 * remains, so no table sized from it can outgrow the input. */
static int get_count(struct span *s, uint64_t *n, unsigned min)
{
	if (get(s, n))
		return -EBADMSG;
	return *n > (uint64_t)(s->end - s->p) / min ? -EBADMSG : 0;
}

static int why(struct argus_trace *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int why(struct argus_trace *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* ---------------------------------------------------------------------
 * Streaming inflate, for reading the first sections of a chunk at open
 * without inflating all of it.
 */
struct zsrc {
	z_stream z;
	bool zlib, inited;
	const uint8_t *p, *end;         /* produced, not yet consumed */
	uint64_t produced, limit;       /* limit = raw_len */
	uint64_t consumed;
	uint8_t buf[4096];
};

static int zsrc_init(struct zsrc *s, const uint8_t *in, uint32_t in_len,
		     bool zlib, uint32_t raw_len)
{
	memset(&s->z, 0, sizeof(s->z));
	s->zlib = zlib;
	s->inited = false;
	s->produced = s->consumed = 0;
	s->limit = raw_len;
	if (!zlib) {
		s->p = in;
		s->end = in + in_len;
		s->produced = in_len;
		return 0;
	}
	s->p = s->end = s->buf;
	s->z.next_in = (Bytef *)in;
	s->z.avail_in = in_len;
	if (inflateInit(&s->z) != Z_OK)
		return -ENOMEM;
	s->inited = true;
	return 0;
}

static void zsrc_fini(struct zsrc *s)
{
	if (s->inited)
		inflateEnd(&s->z);
	s->inited = false;
}

static bool zsrc_eof(struct zsrc *s)
{
	return s->p == s->end && s->produced == s->limit;
}

static int zsrc_fill(struct zsrc *s)
{
	uint64_t room;
	int rc;

	if (s->p < s->end)
		return 0;
	if (!s->zlib || s->produced >= s->limit)
		return -EBADMSG;
	room = s->limit - s->produced;
	s->z.next_out = s->buf;
	s->z.avail_out = (uInt)(room < sizeof(s->buf) ? room : sizeof(s->buf));
	rc = inflate(&s->z, Z_NO_FLUSH);
	if (rc != Z_OK && rc != Z_STREAM_END)
		return -EBADMSG;
	s->p = s->buf;
	s->end = s->z.next_out;
	s->produced += (uint64_t)(s->end - s->p);
	return s->p < s->end ? 0 : -EBADMSG;
}

static int zsrc_byte(struct zsrc *s, uint8_t *b)
{
	if (zsrc_fill(s))
		return -EBADMSG;
	*b = *s->p++;
	s->consumed++;
	return 0;
}

static int zsrc_varint(struct zsrc *s, uint64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	uint8_t b;

	for (;;) {
		if (shift > 63 || zsrc_byte(s, &b) || (shift == 63 && b > 1))
			return -EBADMSG;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*v = r;
	return 0;
}

static int zsrc_skip(struct zsrc *s, uint64_t n)
{
	while (n) {
		size_t k;

		if (zsrc_fill(s))
			return -EBADMSG;
		k = (size_t)(s->end - s->p);
		if (k > n)
			k = (size_t)n;
		s->p += k;
		s->consumed += k;
		n -= k;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Open: file header.
 */
static int check_file_header(struct argus_trace *t, struct argus_error *err)
{
	struct argus_file_header *h = &t->fh;
	const char *path = t->path;
	uint64_t area;

	if (t->len == 0)
		return argus_error__set(err, path, -EBADMSG, 0,
					"empty file (0 bytes), not an Argus trace");
	if (t->len < sizeof(h->magic) ||
	    memcmp(t->base, ARGUS_FILE_MAGIC, sizeof(h->magic)))
		return argus_error__set(err, path, -EBADMSG, 0,
					"not an Argus trace (bad magic at offset 0)");
	if (t->len < offsetof(struct argus_file_header, header_size))
		return argus_error__set(err, path, -EBADMSG, 8,
					"truncated header: file is %zu bytes, the header needs %u",
					t->len, ARGUS_FILE_HEADER_SIZE);
	memcpy(&h->version, t->base + 8, sizeof(h->version));
	if (h->version != ARGUS_FORMAT_VERSION)
		return argus_error__set(err, path, -EPROTONOSUPPORT, 8,
					"trace format version %u at offset 8, this build reads version %u",
					h->version, ARGUS_FORMAT_VERSION);
	if (t->len < ARGUS_FILE_HEADER_SIZE)
		return argus_error__set(err, path, -EBADMSG, t->len,
					"truncated header: file is %zu bytes, the header needs %u",
					t->len, ARGUS_FILE_HEADER_SIZE);
	memcpy(h, t->base, sizeof(*h));
	h->hostname[sizeof(h->hostname) - 1] = 0;
	h->kernel[sizeof(h->kernel) - 1] = 0;
	if (!argus_crc_ok(h->header_crc, t->base,
			  offsetof(struct argus_file_header, header_crc)))
		return argus_error__set(err, path, -EBADMSG, 52,
					"file header checksum mismatch at offset 52");
	if (h->header_size != ARGUS_FILE_HEADER_SIZE)
		return argus_error__set(err, path, -EBADMSG, 12,
					"header size %u at offset 12, expected %u",
					h->header_size, ARGUS_FILE_HEADER_SIZE);
	if (h->block_size != ARGUS_BLOCK_SIZE)
		return argus_error__set(err, path, -EBADMSG, 24,
					"block size %u at offset 24, expected %u",
					h->block_size, ARGUS_BLOCK_SIZE);
	t->ring = h->flags & ARGUS_FILE_RING;
	area = h->data_size;
	if (t->ring && (!area || area % ARGUS_BLOCK_SIZE ||
			area > UINT64_MAX - ARGUS_FILE_HEADER_SIZE))
		return argus_error__set(err, path, -EBADMSG, 16,
					"ring data size %" PRIu64 " at offset 16 is not a positive multiple of %u",
					area, ARGUS_BLOCK_SIZE);
	return 0;
}

/* ---------------------------------------------------------------------
 * Open: per-chunk checks.
 */

/* Inflate the chunk's first sections up to CPUS; 0 and t->probe filled
 * (cpu < 256), or -EBADMSG with the reason in t->why. */
static int probe_cpus(struct argus_trace *t, const struct chunk *c,
		      uint32_t *maxcpu, bool *found)
{
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	struct zsrc *s;
	uint64_t tag, len, n, v[5], prev = 0;
	int rc = -EBADMSG;

	*found = false;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (zsrc_init(s, payload, c->h.payload_len, c->h.flags & ARGUS_CHUNK_ZLIB,
		      c->h.raw_len)) {
		free(s);
		return -ENOMEM;
	}
	memset(t->probe, 0, sizeof(t->probe));
	while (!zsrc_eof(s)) {
		if (zsrc_varint(s, &tag) || zsrc_varint(s, &len) ||
		    len > c->h.raw_len) {
			why(t, "bad section header");
			goto out;
		}
		if (tag != ARGUS_SEC_CPUS) {
			if (zsrc_skip(s, len)) {
				why(t, "section %" PRIu64 " runs past the payload", tag);
				goto out;
			}
			continue;
		}
		uint64_t start = s->consumed;

		if (zsrc_varint(s, &n) || n > len / 5) {
			why(t, "bad CPUS section");
			goto out;
		}
		for (uint64_t i = 0; i < n; i++) {
			for (int k = 0; k < 5; k++)
				if (zsrc_varint(s, &v[k])) {
					why(t, "CPUS section runs past the payload");
					goto out;
				}
			if (v[0] > UINT16_MAX || (i && v[0] <= prev) ||
			    (v[4] && v[1] > v[2]) || v[4] > c->h.nevents) {
				why(t, "bad CPUS entry %" PRIu64, i);
				goto out;
			}
			prev = v[0];
			if (v[0] + 1 > *maxcpu)
				*maxcpu = (uint32_t)v[0] + 1;
			if (v[0] < 256) {
				struct argus_cpu_stats *p = &t->probe[v[0]];

				p->min_ts = v[1];
				p->max_ts = v[2];
				p->lost = v[3];
				p->events = v[4];
			}
		}
		if (s->consumed - start != len) {
			why(t, "CPUS section length mismatch");
			goto out;
		}
		*found = true;
		break;
	}
	rc = 0;
out:
	zsrc_fini(s);
	free(s);
	return rc;
}

/* What is wrong with a candidate, or NULL; fills t->why.  *past_end is
 * set when the chunk runs past the data area (truncated). */
static const char *chunk_problem(struct argus_trace *t, struct chunk *c,
				 uint64_t area_end, bool *past_end)
{
	const struct argus_chunk_header *h = &c->h;
	uint64_t end = c->off + ARGUS_CHUNK_HEADER_SIZE + h->payload_len;
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;

	*past_end = false;
	if (h->version != ARGUS_FORMAT_VERSION) {
		why(t, "chunk format version %u, this build reads version %u",
		    h->version, ARGUS_FORMAT_VERSION);
		return t->why;
	}
	if (end > area_end) {
		*past_end = true;
		why(t, "needs %" PRIu64 " bytes, file has %" PRIu64, end,
		    (uint64_t)t->len);
		return t->why;
	}
	if (!argus_crc_ok(h->payload_crc, payload, h->payload_len))
		return "payload checksum mismatch";
	if (h->flags & ~ARGUS_CHUNK_ZLIB) {
		why(t, "unknown chunk flags 0x%x", h->flags);
		return t->why;
	}
	if (h->raw_len > ARGUS_MAX_RAW_LEN ||
	    (h->flags & ARGUS_CHUNK_ZLIB ?
	     (uint64_t)h->raw_len > (uint64_t)h->payload_len * ARGUS_MAX_ZLIB_RATIO + 64 :
	     h->raw_len != h->payload_len)) {
		why(t, "implausible inflated size %u for %u payload bytes",
		    h->raw_len, h->payload_len);
		return t->why;
	}
	if (h->nevents && h->min_ts > h->max_ts)
		return "min_ts > max_ts";
	return NULL;
}

static int add_chunk(struct argus_trace *t, const struct chunk *c)
{
	if (grow(&t->chunks, &t->chunks_cap, (uint64_t)t->nchunks + 1,
		 sizeof(*t->chunks)))
		return -ENOMEM;
	t->chunks[t->nchunks++] = *c;
	return 0;
}

/*
 * Has the chunk's header changed since the scan?  argusd may be writing the
 * ring we read: it zeroes a header before it touches any payload byte
 * behind it, so a payload that changed under us comes with a header that
 * changed too, and the chunk was overwritten, not corrupted.
 */
static bool chunk_changed(const struct argus_trace *t, const struct chunk *c)
{
	struct argus_chunk_header now;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(&now, t->base + c->off, sizeof(now));
	return memcmp(&now, &c->h, sizeof(now)) != 0;
}

static int cmp_seq_desc(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	if (x->h.seq != y->h.seq)
		return x->h.seq < y->h.seq ? 1 : -1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_seq(const void *a, const void *b)
{
	return -cmp_seq_desc(a, b);
}

static int corrupt(struct argus_trace *t, struct argus_error *err,
		   const struct chunk *c, const char *what)
{
	return argus_error__set(err, t->path, -EBADMSG, c->off,
				"corrupt chunk seq %" PRIu64 " at offset 0x%" PRIx64 ": %s",
				c->h.seq, c->off, what);
}

/* A ring chunk skipped as corrupt: counted, and the first one remembered
 * so that the tools can say where (argus_trace_stats.chunks_corrupt). */
static void skip_corrupt(struct argus_trace *t, struct chunk *c,
			 const char *what)
{
	c->state = CH_CORRUPT;
	if (!t->stats.chunks_corrupt++) {
		t->stats.corrupt_offset = c->off;
		snprintf(t->stats.corrupt_why, sizeof(t->stats.corrupt_why),
			 "chunk seq %" PRIu64 ": %s", c->h.seq, what);
	}
}

static int truncated(struct argus_trace *t, struct argus_error *err,
		     const struct chunk *c)
{
	return argus_error__set(err, t->path, -EBADMSG, c->off,
				"truncated at offset 0x%" PRIx64 ": chunk seq %" PRIu64
				" needs %" PRIu64 " bytes, file has %zu",
				c->off, c->h.seq,
				c->off + ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len,
				t->len);
}

/* Snapshot: chunks back to back from the first block, nothing else. */
static int classify_snapshot(struct argus_trace *t, struct chunk *cand,
			     size_t n, struct argus_error *err)
{
	uint64_t expect = ARGUS_FILE_HEADER_SIZE;
	size_t i = 0, k = 0;
	bool past;

	while (expect < t->len) {
		const char *bad;

		while (i < n && cand[i].off < expect)
			i++;
		if (i == n || cand[i].off != expect) {
			size_t z = (size_t)expect;

			/* zero padding at the end is harmless */
			while (z < t->len && !t->base[z])
				z++;
			if (z == t->len)
				break;
			if (t->len - expect < ARGUS_CHUNK_HEADER_SIZE)
				return argus_error__set(err, t->path, -EBADMSG, expect,
							"truncated at offset 0x%" PRIx64 ": %zu bytes after chunk %zu, a chunk header needs %u",
							expect, (size_t)(t->len - expect), k,
							ARGUS_CHUNK_HEADER_SIZE);
			return argus_error__set(err, t->path, -EBADMSG, expect,
						"corrupt at offset 0x%" PRIx64 ": no valid chunk header where chunk %zu should start",
						expect, k + 1);
		}
		bad = chunk_problem(t, &cand[i], t->len, &past);
		if (bad && past)
			return truncated(t, err, &cand[i]);
		if (bad)
			return corrupt(t, err, &cand[i], bad);
		cand[i].state = CH_GOOD;
		expect = argus_align_up(cand[i].off + ARGUS_CHUNK_HEADER_SIZE +
					cand[i].h.payload_len, ARGUS_BLOCK_SIZE);
		k++;
		i++;
	}
	return 0;
}

/*
 * Ring: newest first.  A chunk covering a block that a newer chunk already
 * covers was (partly) overwritten.  A problem in the newest chunk means a
 * crash cut it; in an older chunk that runs off the end, or changed while
 * we looked, it was overwritten; anywhere else the chunk is skipped and
 * counted as corrupt (power loss), so that one torn chunk does not cost
 * the whole ring.
 */
static int classify_ring(struct argus_trace *t, struct chunk *cand, size_t n,
			 uint64_t area_end, struct argus_error *err)
{
	uint64_t nblocks = area_end / ARGUS_BLOCK_SIZE + 1;
	uint64_t *used = calloc((size_t)(nblocks + 63) / 64, sizeof(uint64_t));

	if (!used)
		return argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
	if (n > 1)
		qsort(cand, n, sizeof(*cand), cmp_seq_desc);
	for (size_t i = 0; i < n; i++) {
		struct chunk *c = &cand[i];
		uint64_t end = c->off + ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len;
		uint64_t b0 = c->off / ARGUS_BLOCK_SIZE, b1, b;
		const char *bad;
		bool past;

		if (end > area_end)
			end = area_end;
		b1 = argus_align_up(end, ARGUS_BLOCK_SIZE) / ARGUS_BLOCK_SIZE;
		for (b = b0; b < b1; b++) {
			if (!(b % 64) && b + 64 <= b1 && !used[b / 64]) {
				b += 63;
				continue;
			}
			if (used[b / 64] & (1ull << (b % 64)))
				break;
		}
		if (b < b1) {
			c->state = CH_OVERWRITTEN;
			continue;
		}
		for (b = b0; b < b1; b++)
			used[b / 64] |= 1ull << (b % 64);
		bad = chunk_problem(t, c, area_end, &past);
		if (!bad)
			c->state = CH_GOOD;
		else if (i == 0)
			c->state = CH_INCOMPLETE;
		else if (past || chunk_changed(t, c))
			c->state = CH_OVERWRITTEN;
		else
			skip_corrupt(t, c, bad);
	}
	free(used);
	return 0;
}

/*
 * The first block boundary at or after off whose bytes are data, and in
 * *data_end where that data stops.  A ring left sparse (no fallocate) has
 * holes where nothing was written yet, and on a full tmpfs even reading a
 * hole through a mapping faults (SIGBUS): skip them.
 */
static uint64_t next_data(const struct argus_trace *t, uint64_t off,
			  uint64_t area_end, uint64_t *data_end)
{
	off_t d, h;

	*data_end = area_end;
	if (t->fd < 0)
		return off;
	d = lseek(t->fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? area_end : off;
	h = lseek(t->fd, d, SEEK_HOLE);
	if (h >= 0 && (uint64_t)h < area_end)
		*data_end = (uint64_t)h;
	return argus_align_up((uint64_t)d, ARGUS_BLOCK_SIZE);
}

static int scan(struct argus_trace *t, struct argus_error *err)
{
	uint64_t area_end = t->len, overwritten = 0, incomplete = 0;
	struct chunk *cand = NULL;
	uint32_t ncand = 0, cap = 0, maxcpu = 0;
	uint64_t data_end = 0;
	int rc = 0;

	if (t->ring && ARGUS_FILE_HEADER_SIZE + t->fh.data_size < area_end)
		area_end = ARGUS_FILE_HEADER_SIZE + t->fh.data_size;
	for (uint64_t off = ARGUS_FILE_HEADER_SIZE;
	     off + ARGUS_CHUNK_HEADER_SIZE <= area_end; off += ARGUS_BLOCK_SIZE) {
		struct chunk c = { .off = off };

		if (off + ARGUS_CHUNK_HEADER_SIZE > data_end) {
			c.off = off = next_data(t, off, area_end, &data_end);
			if (off + ARGUS_CHUNK_HEADER_SIZE > data_end)
				continue;  /* past the end, or a sliver of data */
		}
		memcpy(&c.h, t->base + off, sizeof(c.h));
		if (!argus_chunk_header_ok(&c.h))
			continue;
		if (grow(&cand, &cap, (uint64_t)ncand + 1, sizeof(*cand))) {
			rc = argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
			goto out;
		}
		c.state = CH_BAD;
		cand[ncand++] = c;
		if (c.h.seq > t->max_seq)
			t->max_seq = c.h.seq;
	}
	rc = t->ring ? classify_ring(t, cand, ncand, area_end, err) :
		       classify_snapshot(t, cand, ncand, err);
	if (rc)
		goto out;

	/* read each good chunk's CPUS section */
	if (ncand > 1)
		qsort(cand, ncand, sizeof(*cand), cmp_seq);
	for (uint32_t i = 0; i < ncand; i++) {
		struct chunk *c = &cand[i];
		bool found;

		if (c->state == CH_GOOD) {
			uint32_t mc = maxcpu;

			rc = probe_cpus(t, c, &mc, &found);
			if (rc == -ENOMEM) {
				argus_error__set(err, t->path, rc, 0, "out of memory");
				goto out;
			}
			if (rc) {
				/* tolerated in the newest chunk of a ring only */
				if (t->ring && c->h.seq == t->max_seq)
					c->state = CH_INCOMPLETE;
				else if (t->ring && chunk_changed(t, c))
					c->state = CH_OVERWRITTEN;
				else if (t->ring)
					skip_corrupt(t, c, t->why);
				else {
					rc = corrupt(t, err, c, t->why);
					goto out;
				}
				rc = 0;
			} else {
				maxcpu = mc;
				for (int k = 0; found && k < 256; k++) {
					struct argus_cpu_stats *p = &t->probe[k];
					struct argus_cpu_stats *s = &t->stats.cpu[k];

					if (p->events) {
						if (!s->events || p->min_ts < s->min_ts)
							s->min_ts = p->min_ts;
						if (!s->events || p->max_ts > s->max_ts)
							s->max_ts = p->max_ts;
					}
					s->events += p->events;
					s->lost += p->lost;
				}
			}
		}
		if (c->state == CH_OVERWRITTEN)
			overwritten++;
		else if (c->state == CH_INCOMPLETE)
			incomplete++;
		else if (c->state == CH_GOOD && add_chunk(t, c)) {
			rc = argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}

	t->stats.chunks = t->nchunks;
	t->stats.chunks_incomplete = incomplete;
	/* Writers number a file's chunks 1, 2, 3...: in a ring, every number
	 * below the newest that is not here was overwritten. */
	if (t->ring && t->max_seq > t->nchunks + incomplete + t->stats.chunks_corrupt &&
	    t->max_seq - t->nchunks - incomplete - t->stats.chunks_corrupt > overwritten)
		overwritten = t->max_seq - t->nchunks - incomplete - t->stats.chunks_corrupt;
	t->stats.chunks_overwritten = overwritten;
	for (uint32_t i = 0; i < t->nchunks; i++) {
		const struct argus_chunk_header *h = &t->chunks[i].h;
		bool first = !t->stats.max_ts && !t->stats.min_ts;

		if (!h->nevents)
			continue;
		if (first || h->min_ts < t->stats.min_ts)
			t->stats.min_ts = h->min_ts;
		if (first || h->max_ts > t->stats.max_ts)
			t->stats.max_ts = h->max_ts;
	}
	t->stats.ncpus = t->fh.ncpus > maxcpu ? t->fh.ncpus : maxcpu;
out:
	free(cand);
	return rc;
}

static struct argus_trace *open_common(struct argus_trace *t,
				       struct argus_error *err)
{
	int rc = check_file_header(t, err);

	if (!rc)
		rc = scan(t, err);
	if (rc) {
		argus_trace__close(t);
		errno = -rc;
		return NULL;
	}
	return t;
}

struct argus_trace *argus_trace__open_mem(const void *buf, size_t len,
					  struct argus_error *err)
{
	struct argus_trace *t;

	if (!buf && len) {
		argus_error__set(err, NULL, -EINVAL, 0, "no buffer");
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		argus_error__set(err, NULL, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->base = buf;
	t->len = len;
	t->fd = -1;
	return open_common(t, err);
}

struct argus_trace *argus_trace__open(const char *path,
				      struct argus_error *err)
{
	struct argus_trace *t;
	struct stat st;
	int fd, rc;

	if (!path) {
		argus_error__set(err, NULL, -EINVAL, 0, "no path");
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		argus_error__set(err, path, rc, 0, "cannot open: %s", strerror(-rc));
		errno = -rc;
		return NULL;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		argus_error__set(err, path, rc, 0, "cannot stat: %s", strerror(-rc));
		close(fd);
		errno = -rc;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		argus_error__set(err, path, -EINVAL, 0, "not a regular file");
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		close(fd);
		argus_error__set(err, path, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->len = (size_t)st.st_size;
	if (t->len) {
		void *m = mmap(NULL, t->len, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED) {
			rc = -errno;
			argus_error__set(err, path, rc, 0, "cannot map %zu bytes: %s",
					 t->len, strerror(-rc));
			close(fd);
			free(t->path);
			free(t);
			errno = -rc;
			return NULL;
		}
		t->base = m;
		t->mapped = true;
	}
	t->fd = fd;
	t = open_common(t, err);
	if (t)
		t->fd = -1;
	close(fd);
	return t;
}

/* ---------------------------------------------------------------------
 * Global tables.
 */
struct bytes_key {
	const uint8_t *p;
	uint64_t n;
};

static bool gstr_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;
	const struct bytes_key *k = key;

	return t->str_len[id - 1] == k->n && !memcmp(t->str[id - 1], k->p, k->n);
}

static int intern_string(struct argus_trace *t, const uint8_t *p, uint64_t n,
			 uint32_t *id)
{
	struct bytes_key k = { p, n };
	uint32_t h = argus_hash_bytes(p, (size_t)n);
	char *s;

	*id = argus_hidx_find(&t->str_idx, h, gstr_eq, t, &k);
	if (*id)
		return 0;
	if (t->nstr >= UINT32_MAX - 1 ||
	    grow(&t->str, &t->str_cap, (uint64_t)t->nstr + 1, sizeof(*t->str)) ||
	    grow(&t->str_len, &t->str_len_cap, (uint64_t)t->nstr + 1,
		 sizeof(*t->str_len)))
		return -ENOMEM;
	s = arena_alloc(&t->arena, (size_t)n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, p, (size_t)n);
	s[n] = 0;
	if (argus_hidx_insert(&t->str_idx, h, t->nstr + 1))
		return -ENOMEM;
	t->str[t->nstr] = s;
	t->str_len[t->nstr] = (uint32_t)n;
	*id = ++t->nstr;
	return 0;
}

struct ips_key {
	const uint64_t *ips;
	uint32_t nr;
};

static bool gstk_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;
	const struct ips_key *k = key;
	const struct gstack *g = &t->stk[id - 1];

	return g->nr == k->nr &&
	       (!k->nr || !memcmp(g->ips, k->ips, k->nr * sizeof(uint64_t)));
}

static int intern_stack(struct argus_trace *t, const uint64_t *ips,
			uint32_t nr, uint32_t *id)
{
	struct ips_key k = { ips, nr };
	uint32_t h = argus_hash_u64s(ips, nr);
	uint64_t *keep = NULL;

	*id = argus_hidx_find(&t->stk_idx, h, gstk_eq, t, &k);
	if (*id)
		return 0;
	if (nr && !(keep = arena_alloc(&t->arena, (size_t)nr * sizeof(*keep))))
		return -ENOMEM;
	if (t->nstk >= UINT32_MAX - 1 ||
	    grow(&t->stk, &t->stk_cap, (uint64_t)t->nstk + 1, sizeof(*t->stk)) ||
	    argus_hidx_insert(&t->stk_idx, h, t->nstk + 1))
		return -ENOMEM;
	if (nr)
		memcpy(keep, ips, (size_t)nr * sizeof(*keep));
	t->stk[t->nstk].ips = keep;
	t->stk[t->nstk].nr = nr;
	*id = ++t->nstk;
	return 0;
}

static bool gtask_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return t->task[id - 1]->t.tid == *(const uint32_t *)key;
}

static int merge_task(struct argus_trace *t, const struct argus_task *k,
		      uint64_t seq)
{
	uint32_t h = (uint32_t)argus_mix64(k->tid);
	uint32_t id = argus_hidx_find(&t->task_idx, h, gtask_eq, t, &k->tid);
	struct gtask *g;

	if (id) {
		g = t->task[id - 1];
		if (g->seq <= seq) {
			g->t = *k;
			g->seq = seq;
		}
		return 0;
	}
	if (t->ntask >= UINT32_MAX - 1 ||
	    grow(&t->task, &t->task_cap, (uint64_t)t->ntask + 1, sizeof(*t->task)))
		return -ENOMEM;
	g = arena_alloc(&t->arena, sizeof(*g));
	if (!g || argus_hidx_insert(&t->task_idx, h, t->ntask + 1))
		return -ENOMEM;
	g->t = *k;
	g->seq = seq;
	t->task[t->ntask++] = g;
	return 0;
}

static bool gmap_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return !memcmp(t->map[id - 1], key, sizeof(struct argus_map));
}

static bool pidh_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return t->pidh[id - 1].pid == *(const uint32_t *)key;
}

static int merge_map(struct argus_trace *t, const struct argus_map *m)
{
	uint32_t h = argus_hash_bytes(m, sizeof(*m)), ph, pid_id;
	struct argus_map *g;

	if (argus_hidx_find(&t->map_idx, h, gmap_eq, t, m))
		return 0;
	if (t->nmap >= UINT32_MAX - 1 ||
	    grow(&t->map, &t->map_cap, (uint64_t)t->nmap + 1, sizeof(*t->map)) ||
	    grow(&t->map_next, &t->map_next_cap, (uint64_t)t->nmap + 1,
		 sizeof(*t->map_next)))
		return -ENOMEM;
	ph = (uint32_t)argus_mix64(m->pid);
	pid_id = argus_hidx_find(&t->pidh_idx, ph, pidh_eq, t, &m->pid);
	if (!pid_id) {
		if (grow(&t->pidh, &t->pidh_cap, (uint64_t)t->npidh + 1,
			 sizeof(*t->pidh)) ||
		    argus_hidx_insert(&t->pidh_idx, ph, t->npidh + 1))
			return -ENOMEM;
		t->pidh[t->npidh].pid = m->pid;
		t->pidh[t->npidh].head = 0;
		pid_id = ++t->npidh;
	}
	g = arena_alloc(&t->arena, sizeof(*g));
	if (!g || argus_hidx_insert(&t->map_idx, h, t->nmap + 1))
		return -ENOMEM;
	*g = *m;
	t->map[t->nmap] = g;
	t->map_next[t->nmap] = t->pidh[pid_id - 1].head;
	t->pidh[pid_id - 1].head = ++t->nmap;
	return 0;
}

/* ---------------------------------------------------------------------
 * Chunk decoding.
 */
struct sections {
	struct span schema, strings, stacks, tasks, maps, cpus;
	bool has_schema, has_strings, has_stacks, has_tasks, has_maps, has_cpus;
};

static const struct schema_ent *schema_find(const struct argus_trace *t,
					    uint64_t type)
{
	if (type < 256)
		return t->sch_small[type] ? &t->sch[t->sch_small[type] - 1] : NULL;
	for (uint32_t i = 0; i < t->nsch; i++)
		if (t->sch[i].type == type)
			return &t->sch[i];
	return NULL;
}

static int parse_schema(struct argus_trace *t, struct span s)
{
	uint64_t n, v;
	const uint8_t *name;

	t->nsch = 0;
	memset(t->sch_small, 0, sizeof(t->sch_small));
	if (get_count(&s, &n, 4))
		return why(t, "bad SCHEMA count");
	if (grow(&t->sch, &t->sch_cap, n, sizeof(*t->sch)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct schema_ent e = { 0 };
		uint64_t type, nf, refs, nlen;

		if (get_max(&s, &type, UINT16_MAX) || schema_find(t, type) ||
		    get_max(&s, &nf, ARGUS_SCHEMA_MAX_FIELDS))
			return why(t, "bad SCHEMA entry %" PRIu64, i);
		e.type = (uint16_t)type;
		e.nfields = (uint8_t)nf;
		for (uint64_t f = 0; f < nf; f++) {
			if (get_max(&s, &v, ARGUS_ENC_S))
				return why(t, "bad field encoding in SCHEMA entry for type %" PRIu64, type);
			if (v == ARGUS_ENC_S)
				e.smask |= 1ull << f;
		}
		if (get(&s, &refs) || get(&s, &nlen) || get_bytes(&s, nlen, &name))
			return why(t, "bad SCHEMA entry for type %" PRIu64, type);
		/* unknown ref flags would mean unknown trailing varints */
		if (refs & ~(uint64_t)(ARGUS_SCHEMA_STACK | ARGUS_SCHEMA_STR |
				       ARGUS_SCHEMA_STR2))
			return why(t, "unknown SCHEMA flags 0x%" PRIx64 " for type %" PRIu64,
				   refs, type);
		e.refs = (uint8_t)refs;
		t->sch[t->nsch++] = e;
		if (type < 256)
			t->sch_small[type] = (uint16_t)t->nsch;
	}
	return 0;
}

/* STRINGS: count, then (len, bytes).  intern: fill lstr[]. */
static int parse_strings(struct argus_trace *t, struct span s, bool intern)
{
	uint64_t n, len;
	const uint8_t *p;
	int rc;

	if (get_count(&s, &n, 1))
		return why(t, "bad STRINGS count");
	if (intern && grow(&t->lstr, &t->lstr_cap, n, sizeof(*t->lstr)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		if (get_max(&s, &len, UINT32_MAX - 1) || get_bytes(&s, len, &p))
			return why(t, "STRINGS entry %" PRIu64 " runs past its section", i);
		if (intern && (rc = intern_string(t, p, len, &t->lstr[i])))
			return rc;
	}
	t->nlstr = (uint32_t)n;
	return 0;
}

/* STACKS: count, then (nr, zigzag ip deltas). */
static int parse_stacks(struct argus_trace *t, struct span s, bool intern)
{
	uint64_t n, nr, v;

	if (get_count(&s, &n, 1))
		return why(t, "bad STACKS count");
	if (intern && grow(&t->lstk, &t->lstk_cap, n, sizeof(*t->lstk)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t prev = 0;
		int rc;

		/* nr <= bytes left, so the scratch is bounded by the chunk */
		if (get_count(&s, &nr, 1) || nr > UINT32_MAX)
			return why(t, "bad STACKS entry %" PRIu64, i);
		if (intern && grow(&t->ips, &t->ips_cap, nr, sizeof(*t->ips)))
			return -ENOMEM;
		for (uint64_t k = 0; k < nr; k++) {
			if (get(&s, &v))
				return why(t, "STACKS entry %" PRIu64 " runs past its section", i);
			prev += (uint64_t)zigzag_dec(v);
			if (intern)
				t->ips[k] = prev;
		}
		if (intern && (rc = intern_stack(t, t->ips, (uint32_t)nr, &t->lstk[i])))
			return rc;
	}
	t->nlstk = (uint32_t)n;
	return 0;
}

static uint32_t gid(const uint32_t *map, uint64_t local)
{
	return local ? map[local - 1] : 0;
}

/* TASKS: count, then (tid, pid, ppid, comm). */
static int parse_tasks(struct argus_trace *t, struct span s, uint64_t seq,
		       bool merge)
{
	uint64_t n, v[4];

	if (get_count(&s, &n, 4))
		return why(t, "bad TASKS count");
	for (uint64_t i = 0; i < n; i++) {
		struct argus_task k;
		int rc;

		if (get_max(&s, &v[0], UINT32_MAX) || get_max(&s, &v[1], UINT32_MAX) ||
		    get_max(&s, &v[2], UINT32_MAX) || get_max(&s, &v[3], t->nlstr))
			return why(t, "bad TASKS entry %" PRIu64, i);
		if (!merge)
			continue;
		k.tid = (uint32_t)v[0];
		k.pid = (uint32_t)v[1];
		k.ppid = (uint32_t)v[2];
		k.comm = gid(t->lstr, v[3]);
		if ((rc = merge_task(t, &k, seq)))
			return rc;
	}
	return 0;
}

/* MAPS: count, then (pid, path, ts, start, len, pgoff, idlen, id). */
static int parse_maps(struct argus_trace *t, struct span s, bool merge)
{
	uint64_t n, v[7];
	const uint8_t *id;

	if (get_count(&s, &n, 7))
		return why(t, "bad MAPS count");
	for (uint64_t i = 0; i < n; i++) {
		struct argus_map m;
		int rc;

		if (get_max(&s, &v[0], UINT32_MAX) || get_max(&s, &v[1], t->nlstr) ||
		    get(&s, &v[2]) || get(&s, &v[3]) || get(&s, &v[4]) ||
		    v[4] > UINT64_MAX - v[3] || get(&s, &v[5]) ||
		    get_max(&s, &v[6], ARGUS_BUILD_ID_MAX) || get_bytes(&s, v[6], &id))
			return why(t, "bad MAPS entry %" PRIu64, i);
		if (!merge)
			continue;
		memset(&m, 0, sizeof(m));
		m.pid = (uint32_t)v[0];
		m.path = gid(t->lstr, v[1]);
		m.ts = v[2];
		m.start = v[3];
		m.end = v[3] + v[4];
		m.pgoff = v[5];
		m.build_id_len = (uint8_t)v[6];
		memcpy(m.build_id, id, (size_t)v[6]);
		if ((rc = merge_map(t, &m)))
			return rc;
	}
	return 0;
}

/* CPUS: count, then (cpu, min_ts, max_ts, lost, nevents), cpu increasing. */
static int parse_cpus(struct argus_trace *t, struct span s,
		      const struct argus_chunk_header *h)
{
	uint64_t n, v[5];

	t->ncpus = 0;
	if (get_count(&s, &n, 5))
		return why(t, "bad CPUS count");
	if (grow(&t->cpus, &t->cpus_cap, n, sizeof(*t->cpus)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct cpu_ent *e = &t->cpus[i];

		for (int k = 0; k < 5; k++)
			if (get(&s, &v[k]))
				return why(t, "CPUS section too short");
		if (v[0] > UINT16_MAX || (i && v[0] <= t->cpus[i - 1].cpu) ||
		    v[4] > h->nevents ||
		    (v[4] && (v[1] > v[2] || v[1] < h->min_ts || v[2] > h->max_ts)))
			return why(t, "bad CPUS entry %" PRIu64, i);
		e->cpu = (uint16_t)v[0];
		e->seen = false;
		e->min_ts = v[1];
		e->max_ts = v[2];
		e->lost = v[3];
		e->nevents = v[4];
		t->ncpus = (uint32_t)i + 1;
	}
	if (s.p != s.end)
		return why(t, "CPUS section length mismatch");
	return 0;
}

static struct cpu_ent *cpu_find(struct argus_trace *t, uint64_t cpu)
{
	uint32_t lo = 0, hi = t->ncpus;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->cpus[mid].cpu == cpu)
			return &t->cpus[mid];
		if (t->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Decode the rest of the cursor's next event into *ev: p is past its
 * type and ts delta, ts its timestamp.  Its string and stack ids are
 * turned into the trace's global ones (the chunk's tables are interned
 * before its events are decoded). */
static inline __attribute__((always_inline)) int
decode_rest(struct argus_trace *t, struct cursor *cu, struct argus_event *ev,
	    const uint8_t *p, uint64_t type, uint64_t ts)
{
	const uint8_t *end = cu->s.end;
	const struct schema_ent *e;
	uint64_t tid, pidz, ctx, v, smask;
	unsigned nf, refs;
	struct varint_res r;
	int64_t pid;

/* next varint into `var`, or goto `fail` */
#define NEXT(var, fail) do {					\
		r = varint_next(p, end);			\
		if (!r.p)					\
			goto fail;				\
		p = r.p;					\
		(var) = r.v;					\
	} while (0)

	/* Cleared field by field below: a memset of the whole event per
	 * event was a tenth of the graph build's time. */
	ev->stack = ev->str = ev->str2 = 0;
	memset(ev->pad, 0, sizeof(ev->pad));
	for (unsigned i = 0; i < ARGUS_NFIELDS; i++)   /* constant size: */
		ev->f[i] = 0;                          /* vector stores */
	e = schema_find(t, type);
	if (!e)
		return why(t, "cpu %u: event type %" PRIu64 " is not in the chunk's schema",
			   cu->cpu, type);
	NEXT(tid, header);
	NEXT(pidz, header);
	NEXT(ctx, header);
	if (tid > UINT32_MAX || ctx > UINT8_MAX)
		goto header;
	if (__builtin_add_overflow((int64_t)tid, zigzag_dec(pidz), &pid) ||
	    pid < 0 || pid > (int64_t)UINT32_MAX)
		return why(t, "cpu %u: bad pid", cu->cpu);
	/* schema in locals: the stores into ev->f[] may alias *e as far as
	 * the compiler knows, and it reloaded e each field */
	smask = e->smask;
	nf = e->nfields;
	refs = e->refs;
	for (unsigned i = 0; i < nf && i < ARGUS_NFIELDS; i++) {
		NEXT(v, past);
		if (smask & (1ull << i))
			v = (uint64_t)zigzag_dec(v);
		ev->f[i] = v;
	}
	for (unsigned i = ARGUS_NFIELDS; i < nf; i++)  /* a newer writer's */
		NEXT(v, past);
	if (refs) {
		if (refs & ARGUS_SCHEMA_STACK) {
			NEXT(v, bad_stack);
			if (v > t->nlstk)
				goto bad_stack;
			ev->stack = gid(t->lstk, v);
		}
		if (refs & ARGUS_SCHEMA_STR) {
			NEXT(v, bad_str);
			if (v > t->nlstr)
				goto bad_str;
			ev->str = gid(t->lstr, v);
		}
		if (refs & ARGUS_SCHEMA_STR2) {
			NEXT(v, bad_str);
			if (v > t->nlstr)
				goto bad_str;
			ev->str2 = gid(t->lstr, v);
		}
	}
#undef NEXT
	ev->ts = ts;
	ev->tid = (uint32_t)tid;
	ev->pid = (uint32_t)pid;
	ev->type = (uint16_t)type;
	ev->cpu = cu->cpu;
	ev->ctx = (uint8_t)ctx;
	if (ev->ts > cu->max_ts)
		return why(t, "cpu %u: event after the CPUS max_ts", cu->cpu);
	cu->ts = ev->ts;
	cu->s.p = p;    /* end is unchanged; a 16-byte copy back stalled
			   on store forwarding (a tenth of decode time) */
	cu->left--;
	return 0;
header:
	return why(t, "cpu %u: bad event header", cu->cpu);
past:
	return why(t, "cpu %u: event runs past its stream", cu->cpu);
bad_stack:
	return why(t, "cpu %u: bad stack id", cu->cpu);
bad_str:
	return why(t, "cpu %u: bad string id", cu->cpu);
}

/* Decode the cursor's next event from its start: only to say why it is
 * corrupt when peek_ts() fails (the hot path is decode_next()). */
static __attribute__((noinline)) int
decode_event(struct argus_trace *t, struct cursor *cu, struct argus_event *ev)
{
	struct varint_res r;
	uint64_t type;

	if (cu->s.p >= cu->s.end)
		return why(t, "cpu %u stream ends early", cu->cpu);
	r = varint_next(cu->s.p, cu->s.end);
	if (!r.p)
		return why(t, "cpu %u stream ends early", cu->cpu);
	type = r.v;
	if (!schema_find(t, type))
		return why(t, "cpu %u: event type %" PRIu64 " is not in the chunk's schema",
			   cu->cpu, type);
	r = varint_next(r.p, cu->s.end);
	if (!r.p || r.v > UINT64_MAX - cu->ts)
		return why(t, "cpu %u: bad event header", cu->cpu);
	return decode_rest(t, cu, ev, r.p, type, cu->ts + r.v);
}

/* Decode the cursor's next event, whose type and ts peek_ts() has read. */
static inline __attribute__((always_inline)) int
decode_next(struct argus_trace *t, struct cursor *cu, struct argus_event *ev)
{
	return decode_rest(t, cu, ev, cu->next_p, cu->next_type, cu->next_ts);
}

/* The type and ts of the cursor's next event, without consuming it
 * (decode_next() goes on from there: the two are decoded once): 0, or
 * -EBADMSG when its header does not parse (decode_event says why). */
static inline int peek_ts(struct cursor *cu)
{
	struct varint_res r = varint_next(cu->s.p, cu->s.end);

	if (!r.p)
		return -EBADMSG;
	cu->next_type = r.v;
	r = varint_next(r.p, cu->s.end);        /* dts */
	if (!r.p || r.v > UINT64_MAX - cu->ts)
		return -EBADMSG;
	cu->next_ts = cu->ts + r.v;
	cu->next_p = r.p;
	return 0;
}

/* A stream all decoded: it must end exactly at its CPUS max_ts and at the
 * end of its section. */
static int cursor_done(struct argus_trace *t, const struct cursor *cu,
		       bool empty)
{
	if (!empty && cu->ts != cu->max_ts)
		return why(t, "cpu %u: last event is not at the CPUS max_ts", cu->cpu);
	if (cu->s.p != cu->s.end)
		return why(t, "cpu %u: stream has trailing bytes", cu->cpu);
	return 0;
}

static inline bool cur_less(const struct cursor *x, const struct cursor *y)
{
	return x->next_ts != y->next_ts ? x->next_ts < y->next_ts : x->cpu < y->cpu;
}

static void heap_down(struct argus_trace *t, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, tmp;

		if (l < n && cur_less(&t->cur[t->heap[l]], &t->cur[t->heap[m]]))
			m = l;
		if (r < n && cur_less(&t->cur[t->heap[r]], &t->cur[t->heap[m]]))
			m = r;
		if (m == i)
			return;
		tmp = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = tmp;
		i = m;
	}
}

/*
 * Decode every event of every stream, merged on (ts, cpu), into evbuf.
 * A min-heap of cursors keyed on the ts of their next event (peeked, not
 * decoded); the cursor on top decodes straight into its place in evbuf
 * for as long as it stays ahead of the runner-up, so the heap is touched
 * once per run of events of one CPU, not once per event.
 */
static int decode_merged(struct argus_trace *t)
{
	struct argus_event *out = t->evbuf;
	uint32_t n = 0;
	int rc;

	for (uint32_t i = 0; i < t->ncur; i++) {
		struct cursor *cu = &t->cur[i];

		if (!cu->left) {
			if ((rc = cursor_done(t, cu, true)))
				return rc;
			continue;
		}
		if (peek_ts(cu))
			return decode_event(t, cu, out);  /* says why */
		t->heap[n++] = i;
	}
	for (uint32_t i = n / 2; i-- > 0;)
		heap_down(t, i, n);
	while (n) {
		struct cursor *cu = &t->cur[t->heap[0]];
		const struct cursor *next = NULL;

		if (n > 1)
			next = &t->cur[t->heap[1]];
		if (n > 2 && cur_less(&t->cur[t->heap[2]], next))
			next = &t->cur[t->heap[2]];
		for (;;) {
			if ((rc = decode_next(t, cu, out++)))
				return rc;
			if (!cu->left)
				break;
			if (peek_ts(cu))
				return decode_event(t, cu, out);
			if (next && !cur_less(cu, next))
				break;
		}
		if (!cu->left) {
			if ((rc = cursor_done(t, cu, false)))
				return rc;
			t->heap[0] = t->heap[--n];
		}
		heap_down(t, 0, n);
	}
	t->nev = (uint32_t)(out - t->evbuf);
	return 0;
}

static int inflate_chunk(struct argus_trace *t, const struct chunk *c)
{
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	uint32_t raw_len = c->h.raw_len;

	if (raw_len > t->raw_cap || !t->raw) {
		uint8_t *p = realloc(t->raw, raw_len ? raw_len : 1);

		if (!p)
			return -ENOMEM;
		t->raw = p;
		t->raw_cap = raw_len;
	}
	if (!(c->h.flags & ARGUS_CHUNK_ZLIB)) {
		if (raw_len)
			memcpy(t->raw, payload, raw_len);
		return 0;
	}
#ifdef ARGUS_HAVE_LIBDEFLATE
	/* libdeflate: the same zlib stream, inflated about twice as fast as
	 * zlib's inflate() on these payloads (the graph build's largest
	 * single cost).  Whole input consumed, exactly raw_len out, adler32
	 * checked: the same acceptance as the zlib path below. */
	{
		size_t in_used = 0, out_len = 0;
		enum libdeflate_result r;

		if (!t->inflater && !(t->inflater = libdeflate_alloc_decompressor()))
			return -ENOMEM;
		r = libdeflate_zlib_decompress_ex(t->inflater, payload, c->h.payload_len,
						  t->raw, raw_len, &in_used, &out_len);
		if (r != LIBDEFLATE_SUCCESS || out_len != raw_len ||
		    in_used != c->h.payload_len)
			return why(t, "payload does not inflate to %u bytes", raw_len);
		return 0;
	}
#else
	{
		z_stream z;
		int rc;

		memset(&z, 0, sizeof(z));
		if (inflateInit(&z) != Z_OK)
			return -ENOMEM;
		z.next_in = (Bytef *)payload;
		z.avail_in = c->h.payload_len;
		z.next_out = t->raw;
		z.avail_out = raw_len;
		rc = inflate(&z, Z_FINISH);
		if (rc != Z_STREAM_END || z.avail_out || z.avail_in) {
			inflateEnd(&z);
			if (rc == Z_MEM_ERROR)
				return -ENOMEM;
			return why(t, "payload does not inflate to %u bytes", raw_len);
		}
		inflateEnd(&z);
		return 0;
	}
#endif
}

/*
 * Inflate and validate chunk c, intern its strings/stacks, merge its
 * tasks/maps, decode its events into evbuf.  0 = ready, 1 = skip it (it
 * changed under us: overwritten while we read a live ring), -EBADMSG =
 * corrupt (reason in t->why), other < 0 = system error.
 */
static int load_chunk(struct argus_trace *t, struct chunk *c)
{
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	struct argus_chunk_header h;
	struct sections sec = { 0 };
	struct span s;
	uint64_t total = 0, nstreams = 0;
	int rc;

	t->nev = t->pos = 0;
	/* A live ring may have moved on since open: header and payload crc
	 * again.  A snapshot is written once, and open checked every
	 * payload's crc already. */
	memcpy(&h, t->base + c->off, sizeof(h));
	if (memcmp(&h, &c->h, sizeof(h)) ||
	    (t->ring && !argus_crc_ok(h.payload_crc, payload, h.payload_len)))
		return 1;
	rc = inflate_chunk(t, c);
	if (rc)
		return rc;

	/* sections */
	s.p = t->raw;
	s.end = t->raw + h.raw_len;
	t->ncur = 0;
	while (s.p < s.end) {
		uint64_t tag, len;
		struct span body;
		struct span *dst = NULL;
		bool *has = NULL;

		if (get(&s, &tag) || get(&s, &len) || get_bytes(&s, len, &body.p))
			return why(t, "bad section header at payload byte %zu",
				   (size_t)(s.p - t->raw));
		body.end = body.p + len;
		switch (tag) {
		case ARGUS_SEC_SCHEMA: dst = &sec.schema; has = &sec.has_schema; break;
		case ARGUS_SEC_STRINGS: dst = &sec.strings; has = &sec.has_strings; break;
		case ARGUS_SEC_STACKS: dst = &sec.stacks; has = &sec.has_stacks; break;
		case ARGUS_SEC_TASKS: dst = &sec.tasks; has = &sec.has_tasks; break;
		case ARGUS_SEC_MAPS: dst = &sec.maps; has = &sec.has_maps; break;
		case ARGUS_SEC_CPUS: dst = &sec.cpus; has = &sec.has_cpus; break;
		case ARGUS_SEC_STREAM:
			if (grow(&t->cur, &t->cur_cap, (uint64_t)t->ncur + 1,
				 sizeof(*t->cur)))
				return -ENOMEM;
			t->cur[t->ncur].s = body;
			t->ncur++;
			break;
		default:
			break;  /* a newer writer's section: skip it */
		}
		if (has) {
			if (*has)
				return why(t, "section %" PRIu64 " appears twice", tag);
			*has = true;
			*dst = body;
		}
	}

	/* validate every section before anything goes into the global tables */
	t->nsch = 0;
	memset(t->sch_small, 0, sizeof(t->sch_small));
	t->nlstr = t->nlstk = 0;
	t->ncpus = 0;
	if ((sec.has_schema && (rc = parse_schema(t, sec.schema))) ||
	    (sec.has_strings && (rc = parse_strings(t, sec.strings, false))) ||
	    (sec.has_stacks && (rc = parse_stacks(t, sec.stacks, false))) ||
	    (sec.has_tasks && (rc = parse_tasks(t, sec.tasks, h.seq, false))) ||
	    (sec.has_maps && (rc = parse_maps(t, sec.maps, false))) ||
	    (sec.has_cpus && (rc = parse_cpus(t, sec.cpus, &h))))
		return rc;
	for (uint32_t i = 0; i < t->ncur; i++) {
		struct cursor *cu = &t->cur[i];
		struct cpu_ent *e;
		uint64_t cpu, n;

		if (get(&cu->s, &cpu) || get(&cu->s, &n))
			return why(t, "bad STREAM header");
		e = cpu_find(t, cpu);
		if (!e || e->seen || e->nevents != n)
			return why(t, "STREAM of cpu %" PRIu64 " does not match the CPUS section",
				   cpu);
		e->seen = true;
		cu->cpu = (uint16_t)cpu;
		cu->ts = e->min_ts;
		cu->max_ts = e->max_ts;
		cu->left = n;
		/* an event takes at least 5 bytes: bound n before sizing */
		if (n > (uint64_t)(cu->s.end - cu->s.p) / 5)
			return why(t, "cpu %u: %" PRIu64 " events cannot fit in the stream",
				   cu->cpu, n);
		total += n;
		nstreams++;
	}
	for (uint32_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].nevents && !t->cpus[i].seen)
			return why(t, "cpu %u has events but no STREAM", t->cpus[i].cpu);
	if (total != h.nevents || nstreams != h.nstreams)
		return why(t, "%" PRIu64 " events in %" PRIu64 " streams, header says %u in %u",
			   total, nstreams, h.nevents, h.nstreams);
	if (grow(&t->evbuf, &t->evbuf_cap, total, sizeof(*t->evbuf)) ||
	    grow(&t->heap, &t->heap_cap, t->ncur, sizeof(*t->heap)))
		return -ENOMEM;

	/* Strings and stacks go into the global tables before the events
	 * are decoded, so that each event gets its global ids as it is
	 * decoded (a separate pass over the chunk's events was 3% of the
	 * graph build).  If an event then turns out corrupt, the strings
	 * stay interned but no id of them is ever handed out: lookups are
	 * only defined for ids returned by __next(). */
	if ((sec.has_strings && (rc = parse_strings(t, sec.strings, true))) ||
	    (sec.has_stacks && (rc = parse_stacks(t, sec.stacks, true))) ||
	    (rc = decode_merged(t)))
		goto fail;
	/* tasks and maps only from a chunk whose events are all good */
	if (!c->merged) {
		if ((sec.has_tasks && (rc = parse_tasks(t, sec.tasks, h.seq, true))) ||
		    (sec.has_maps && (rc = parse_maps(t, sec.maps, true))))
			goto fail;
		c->merged = true;
	}
	return 0;
fail:
	t->nev = 0;
	return rc;
}

/* ---------------------------------------------------------------------
 * Iteration.
 */

/* Make sure evbuf has events to hand out: 1 = yes, 0 = end of trace,
 * < 0 = error (in *err). */
static int fill(struct argus_trace *t, struct argus_error *err)
{
	while (t->pos >= t->nev) {
		struct chunk *c;
		int rc;

		t->nev = t->pos = 0;
		if (t->next_chunk >= t->nchunks)
			return 0;
		c = &t->chunks[t->next_chunk++];
		if (c->state != CH_GOOD)
			continue;
		rc = load_chunk(t, c);
		if (rc == 0)
			continue;
		if (rc == 1 || (rc == -EBADMSG && t->ring && chunk_changed(t, c))) {
			/* overwritten since open: a live ring moved on */
			c->state = CH_OVERWRITTEN;
			t->stats.chunks--;
			t->stats.chunks_overwritten++;
			continue;
		}
		if (rc == -EBADMSG && t->ring && c->h.seq == t->max_seq) {
			c->state = CH_INCOMPLETE;
			t->stats.chunks--;
			t->stats.chunks_incomplete++;
			continue;
		}
		if (rc == -EBADMSG && t->ring) {
			skip_corrupt(t, c, t->why);
			t->stats.chunks--;
			continue;
		}
		if (rc == -EBADMSG)
			return corrupt(t, err, c, t->why);
		return argus_error__set(err, t->path, rc, c->off,
					"chunk seq %" PRIu64 " at offset 0x%" PRIx64 ": %s",
					c->h.seq, c->off, strerror(-rc));
	}
	return 1;
}

int argus_trace__next(struct argus_trace *t, struct argus_event *ev,
		      struct argus_error *err)
{
	int rc;

	if (!t || !ev)
		return argus_error__set(err, NULL, -EINVAL, 0, "bad arguments");
	if (t->pos >= t->nev && (rc = fill(t, err)) <= 0)
		return rc;
	*ev = t->evbuf[t->pos++];
	if (t->have_last && ev->ts < t->last_ts)
		t->stats.out_of_order++;
	t->last_ts = ev->ts;
	t->have_last = true;
	t->stats.events++;
	return 1;
}

int argus_trace__next_batch(struct argus_trace *t,
			    const struct argus_event **evs,
			    struct argus_error *err)
{
	uint32_t n;
	int rc;

	if (!t || !evs)
		return argus_error__set(err, NULL, -EINVAL, 0, "bad arguments");
	if (t->pos >= t->nev && (rc = fill(t, err)) <= 0)
		return rc;
	n = t->nev - t->pos;
	*evs = t->evbuf + t->pos;
	/* a chunk's merged events never go back in time: only its first
	 * can be older than the event returned before it */
	if (t->have_last && (*evs)[0].ts < t->last_ts)
		t->stats.out_of_order++;
	t->last_ts = t->evbuf[t->nev - 1].ts;
	t->have_last = true;
	t->stats.events += n;
	t->pos = t->nev;
	return (int)n;
}

int argus_trace__rewind(struct argus_trace *t)
{
	if (!t)
		return -EINVAL;
	t->next_chunk = 0;
	t->nev = t->pos = 0;
	t->have_last = false;
	t->last_ts = 0;
	t->stats.events = 0;
	t->stats.out_of_order = 0;
	return 0;
}

/* ---------------------------------------------------------------------
 * Lookups.
 */
const char *argus_trace__string(const struct argus_trace *t, uint32_t id)
{
	if (!t || !id || id > t->nstr)
		return NULL;
	return t->str[id - 1];
}

int argus_trace__stack(const struct argus_trace *t, uint32_t id,
		       const uint64_t **ips, uint32_t *nr)
{
	if (!t || !ips || !nr)
		return -EINVAL;
	if (!id || id > t->nstk)
		return -ENOENT;
	*ips = t->stk[id - 1].ips;
	*nr = t->stk[id - 1].nr;
	return 0;
}

const struct argus_task *argus_trace__task(const struct argus_trace *t,
					   uint32_t tid)
{
	uint32_t id;

	if (!t)
		return NULL;
	id = argus_hidx_find(&t->task_idx, (uint32_t)argus_mix64(tid), gtask_eq,
			     t, &tid);
	return id ? &t->task[id - 1]->t : NULL;
}

const struct argus_map *argus_trace__map(const struct argus_trace *t,
					 uint32_t pid, uint64_t ip,
					 uint64_t ts)
{
	const struct argus_map *before = NULL, *after = NULL;
	uint32_t id;

	if (!t)
		return NULL;
	id = argus_hidx_find(&t->pidh_idx, (uint32_t)argus_mix64(pid), pidh_eq,
			     t, &pid);
	for (id = id ? t->pidh[id - 1].head : 0; id; id = t->map_next[id - 1]) {
		const struct argus_map *m = t->map[id - 1];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->ts <= ts) {
			if (!before || m->ts > before->ts)
				before = m;
		} else if (!after || m->ts < after->ts) {
			after = m;
		}
	}
	return before ? before : after;
}

const struct argus_trace_stats *argus_trace__stats(const struct argus_trace *t)
{
	return t ? &t->stats : NULL;
}

const struct argus_file_header *argus_trace__header(const struct argus_trace *t)
{
	return t ? &t->fh : NULL;
}

size_t argus_trace__nchunks(const struct argus_trace *t)
{
	return t ? t->nchunks : 0;
}

int argus_trace__chunk(const struct argus_trace *t, size_t i,
		       struct argus_chunk_info *info)
{
	const struct chunk *c;

	if (!t || !info)
		return -EINVAL;
	if (i >= t->nchunks)
		return -ENOENT;
	c = &t->chunks[i];
	info->offset = c->off;
	info->seq = c->h.seq;
	info->min_ts = c->h.min_ts;
	info->max_ts = c->h.max_ts;
	info->nevents = c->h.nevents;
	info->size = ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len;
	info->data = t->base + c->off;
	return 0;
}

int argus_trace__chunk_check(struct argus_trace *t, size_t i)
{
	struct chunk *c;
	int rc;

	if (!t)
		return -EINVAL;
	if (i >= t->nchunks)
		return -ENOENT;
	c = &t->chunks[i];
	if (c->state != CH_GOOD)
		return 1;
	/* load_chunk decodes into evbuf: what an iteration was handing out
	 * is gone (hence "not during an iteration") */
	rc = load_chunk(t, c);
	t->nev = t->pos = 0;
	if (rc == 1 || (rc == -EBADMSG && t->ring && chunk_changed(t, c)))
		return 1;
	if (rc == -EBADMSG) {
		skip_corrupt(t, c, t->why);
		t->stats.chunks--;
	}
	return rc;
}

void argus_trace__close(struct argus_trace *t)
{
	if (!t)
		return;
	if (t->mapped)
		munmap((void *)t->base, t->len);
	free(t->path);
	free(t->chunks);
	free(t->raw);
	free(t->sch);
	free(t->cpus);
	free(t->lstr);
	free(t->lstk);
	free(t->ips);
	free(t->cur);
	free(t->evbuf);
	free(t->heap);
#ifdef ARGUS_HAVE_LIBDEFLATE
	libdeflate_free_decompressor(t->inflater);
#endif
	arena_free(&t->arena);
	free(t->str);
	free(t->str_len);
	argus_hidx_free(&t->str_idx);
	free(t->stk);
	argus_hidx_free(&t->stk_idx);
	free(t->task);
	argus_hidx_free(&t->task_idx);
	free(t->map);
	free(t->map_next);
	argus_hidx_free(&t->map_idx);
	free(t->pidh);
	argus_hidx_free(&t->pidh_idx);
	free(t);
}
