/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chunk_builder.c - encode events into one self-describing chunk.
 *
 * The builder keeps every section's body growing as input arrives, so
 * __finish() only concatenates, deflates and checksums:
 *
 *   strings   STRINGS body: (len, bytes) per string, local ids 1..n;
 *             string_idx finds an existing id by content
 *   stacks    STACKS body: (nr, zigzag ip deltas) per stack, local ids
 *             1..n; stack_idx finds an existing id by ips
 *   tasks     TASKS body: (tid, pid, ppid, comm) per entry
 *   maps      MAPS body: (pid, path, ts, start, len, pgoff, build-id)
 *   cpu[c]    the STREAM body of CPU c plus its CPUS-section totals
 *
 * The inflated payload written by __finish() is, in this order:
 *   CPUS, SCHEMA, STRINGS, STACKS, TASKS, MAPS, then one STREAM per CPU
 * (CPUS first so that a reader can total a chunk's per-CPU counts by
 * inflating only its first bytes).  Each section is `varint tag, varint
 * len, body`; each body starts with a varint count.  See
 * docs/trace-format.md for the byte-level layout.
 *
 * Invariants:
 *   - within a CPU, events arrive with non-decreasing ts (else -EINVAL);
 *   - an event stores exactly its type's schema: fields past the schema's
 *     nfields, and stack/str/str2 ids the schema does not carry, must be 0
 *     (else -EINVAL), so encoding is lossless;
 *   - local ids given to __event/__task/__map were returned by this
 *     builder since the last __finish/__reset (else -EINVAL);
 *   - on error nothing is half-added: the builder is as before the call.
 */
#include <stdio.h>
#include <string.h>
#ifdef ARGUS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#include <zstd.h>
#include <zstd_errors.h>

#include "argus_events.h"
#include "trace_internal.h"

/* ---------------------------------------------------------------------
 * The built-in schema: what each event type stores.
 */
struct type_schema {
	const char *name;
	uint8_t nfields;
	uint8_t signed_mask;    /* bit i: field i is ARGUS_ENC_S */
	uint8_t refs;           /* ARGUS_SCHEMA_STACK | _STR | _STR2 */
};

#define S(i) (1u << (i))
static const struct type_schema builtin_schema[AE_TYPE_MAX] = {
	/* next tid/pid, prev_state, sys_nr, sys_arg, obj kind/obj/peer */
	[AE_SWITCH] = { "switch", 8, S(2) | S(3),
			ARGUS_SCHEMA_STACK | ARGUS_SCHEMA_STR },
	/* target tid/pid/cpu, vector, hrtimer */
	[AE_WAKING] = { "waking", 5, 0, 0 },
	/* child tid/pid, clone flags; str = comm */
	[AE_WAKEUP_NEW] = { "wakeup_new", 3, 0, ARGUS_SCHEMA_STR },
	[AE_FORK] = { "fork", 3, 0, ARGUS_SCHEMA_STR },
	[AE_FREE] = { "free", 3, 0, ARGUS_SCHEMA_STR },
	/* old tid; str = comm, str2 = filename */
	[AE_EXEC] = { "exec", 1, 0, ARGUS_SCHEMA_STR | ARGUS_SCHEMA_STR2 },
	/* exit code, group_dead */
	[AE_EXIT] = { "exit", 2, S(0), 0 },
	[AE_RENAME] = { "rename", 0, 0, ARGUS_SCHEMA_STR },
	/* nr, args 0..5 */
	[AE_SYS_ENTER] = { "sys_enter", 7, S(0), 0 },
	/* nr, ret, arg0, obj kind/obj/peer */
	[AE_SYS_EXIT] = { "sys_exit", 6, S(0) | S(1), 0 },
	/* timer, function, expires, mode, owner tid */
	[AE_HRT_START] = { "hrtimer_start", 5, S(2), 0 },
	[AE_HRT_EXPIRE] = { "hrtimer_expire", 5, S(2), 0 },
	[AE_HRT_CANCEL] = { "hrtimer_cancel", 5, S(2), 0 },
	/* vector, ret */
	[AE_IRQ_ENTRY] = { "irq_entry", 2, S(1), 0 },
	[AE_IRQ_EXIT] = { "irq_exit", 2, S(1), 0 },
	[AE_SOFTIRQ_ENTRY] = { "softirq_entry", 2, S(1), 0 },
	[AE_SOFTIRQ_EXIT] = { "softirq_exit", 2, S(1), 0 },
	/* work, function */
	[AE_WQ_START] = { "wq_start", 2, 0, 0 },
	[AE_WQ_END] = { "wq_end", 2, 0, 0 },
	[AE_SAMPLE] = { "sample", 0, 0, ARGUS_SCHEMA_STACK },
	/* addr, value, len, watch id, ip, value_ok, reader (appended: chunks
	 * of older writers have 6 and read it as 0) */
	[AE_HWWATCH] = { "hwwatch", 7, 0, ARGUS_SCHEMA_STACK },
	/* uid, has_uid (appended: marks of older writers have no fields and
	 * read as has_uid 0) */
	[AE_MARK] = { "mark", 2, 0, ARGUS_SCHEMA_STR },
	/* count */
	[AE_LOST] = { "lost", 1, 0, 0 },
	/* argus instrument --via uprobe: function, item, kind */
	[AE_LIVE_HIT] = { "live_hit", 3, 0, 0 },
	/* the interposer's: address, holder tid / errno / waiters, kind, arg
	 * (kind and arg appended: chunks of older writers have 2 and 1
	 * fields and read as kind 0, a mutex) */
	[AE_MUTEX_WAIT] = { "mutex_wait", 4, 0, 0 },
	[AE_MUTEX_ACQUIRED] = { "mutex_acquired", 4, 0, 0 },
	[AE_MUTEX_WAKE] = { "mutex_wake", 4, 0, 0 },
	/* the interposer's work items: item, callback, kind; boundary: tag */
	[AE_WORK_ENQUEUE] = { "work_enqueue", 3, 0, 0 },
	[AE_WORK_BEGIN] = { "work_begin", 3, 0, 0 },
	[AE_WORK_END] = { "work_end", 3, 0, 0 },
	[AE_WORK_BOUNDARY] = { "work_boundary", 1, 0, 0 },
};
#undef S

/* Types this build does not know still round-trip: all fields, all ids. */
static const struct type_schema generic_schema = {
	NULL, ARGUS_NFIELDS, 0,
	ARGUS_SCHEMA_STACK | ARGUS_SCHEMA_STR | ARGUS_SCHEMA_STR2
};

static const struct type_schema *schema_of(uint16_t type)
{
	if (type < AE_TYPE_MAX && builtin_schema[type].name)
		return &builtin_schema[type];
	return &generic_schema;
}

const char *argus_event_type_str(uint16_t type)
{
	return type < AE_TYPE_MAX ? builtin_schema[type].name : NULL;
}

const char *argus_obj_kind_str(uint64_t kind)
{
	static const char *const n[] = {
		[AE_OBJ_NONE] = "none", [AE_OBJ_PIPE] = "pipe",
		[AE_OBJ_UNIX] = "unix", [AE_OBJ_TCP] = "tcp", [AE_OBJ_UDP] = "udp",
		[AE_OBJ_EVENTFD] = "eventfd", [AE_OBJ_TIMERFD] = "timerfd",
		[AE_OBJ_EPOLL] = "epoll", [AE_OBJ_FILE] = "file",
		[AE_OBJ_SOCK] = "sock", [AE_OBJ_OTHER] = "other",
		[AE_OBJ_FLAG] = "flag", [AE_OBJ_MUTEX] = "mutex", [AE_OBJ_SEM] = "sem",
		[AE_OBJ_COND] = "cond", [AE_OBJ_WORK] = "work",
	};
	return kind < sizeof(n) / sizeof(n[0]) && n[kind] ? n[kind] : "?";
}

/* ---------------------------------------------------------------------
 * Builder state.
 */
struct cpu_stream {
	struct argus_buf buf;   /* STREAM events, encoded */
	uint64_t nevents;
	uint64_t min_ts;        /* ts of the first event (valid if nevents) */
	uint64_t last_ts;       /* ts of the last event (valid if nevents) */
	uint64_t lost;          /* from __lost() */
	bool active;            /* has events or lost: gets a CPUS entry */
};

struct str_ref {
	size_t off;             /* of the bytes in strings.p */
	size_t len;
};

struct stack_ref {
	size_t off;             /* of the first ip in ips[] */
	uint32_t nr;
};

struct argus_chunk_builder {
	struct argus_buf strings;
	struct str_ref *str;    /* [nstrings] */
	uint32_t nstrings, str_cap;
	struct argus_hidx str_idx;

	struct argus_buf stacks;
	uint64_t *ips;          /* every interned stack's ips, back to back */
	size_t nips, ips_cap;
	struct stack_ref *stk;  /* [nstacks] */
	uint32_t nstacks, stk_cap;
	struct argus_hidx stk_idx;

	struct argus_buf tasks;
	uint64_t ntasks;
	struct argus_buf maps;
	uint64_t nmaps;

	struct cpu_stream *cpu; /* indexed by cpu id, [ncpu] */
	uint32_t ncpu;
	uint64_t nevents;
	uint64_t used_types[65536 / 64]; /* bitmap over uint16 type */

	struct argus_buf raw;   /* scratch for __finish */
	enum argus_codec codec;
	ZSTD_CCtx *zstd;        /* kept across chunks: its tables are reused */
#ifdef ARGUS_HAVE_LIBDEFLATE
	struct libdeflate_compressor *deflater;
	int deflater_level;
#endif
};

struct argus_chunk_builder *argus_chunk_builder__new(void)
{
	struct argus_chunk_builder *b = calloc(1, sizeof(*b));

	if (!b)
		errno = ENOMEM;
	return b;
}

void argus_chunk_builder__reset(struct argus_chunk_builder *b)
{
	if (!b)
		return;
	b->strings.len = 0;
	b->nstrings = 0;
	argus_hidx_clear(&b->str_idx);
	b->stacks.len = 0;
	b->nips = 0;
	b->nstacks = 0;
	argus_hidx_clear(&b->stk_idx);
	b->tasks.len = 0;
	b->ntasks = 0;
	b->maps.len = 0;
	b->nmaps = 0;
	for (uint32_t c = 0; c < b->ncpu; c++) {
		struct cpu_stream *s = &b->cpu[c];

		s->buf.len = 0;
		s->nevents = s->min_ts = s->last_ts = s->lost = 0;
		s->active = false;
	}
	b->nevents = 0;
	memset(b->used_types, 0, sizeof(b->used_types));
}

void argus_chunk_builder__free(struct argus_chunk_builder *b)
{
	if (!b)
		return;
	argus_buf_free(&b->strings);
	free(b->str);
	argus_hidx_free(&b->str_idx);
	argus_buf_free(&b->stacks);
	free(b->ips);
	free(b->stk);
	argus_hidx_free(&b->stk_idx);
	argus_buf_free(&b->tasks);
	argus_buf_free(&b->maps);
	for (uint32_t c = 0; c < b->ncpu; c++)
		argus_buf_free(&b->cpu[c].buf);
	free(b->cpu);
	argus_buf_free(&b->raw);
	ZSTD_freeCCtx(b->zstd);
#ifdef ARGUS_HAVE_LIBDEFLATE
	libdeflate_free_compressor(b->deflater);
#endif
	free(b);
}

/* ---------------------------------------------------------------------
 * Interning.
 */
/* Room for one more element in arr (n used of *cap, of size bytes each;
 * doubled when full, 256 at first): the array, *cap updated; NULL (arr
 * and *cap untouched) when out of memory, or when n is the last id (ids
 * are 1-based, 0 is none). */
static void *room_for_one(void *arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 256;
	void *p;

	if (n == UINT32_MAX - 1)
		return NULL;
	if (n < *cap)
		return arr;
	if ((p = realloc(arr, (size_t)c * size)))
		*cap = c;
	return p;
}

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_chunk_builder *b = ctx;
	const struct str_key *k = key;
	const struct str_ref *r = &b->str[id - 1];

	return r->len == k->len && !memcmp(b->strings.p + r->off, k->s, k->len);
}

uint32_t argus_chunk_builder__string(struct argus_chunk_builder *b,
				     const char *s, size_t len)
{
	struct str_key key = { s, len };
	size_t old_len;
	uint32_t h, id;

	if (!b || (!s && len) || len > ARGUS_MAX_RAW_LEN)
		return 0;
	if (!s)
		s = "";
	h = argus_hash_bytes(s, len);
	id = argus_hidx_find(&b->str_idx, h, str_eq, b, &key);
	if (id)
		return id;
	struct str_ref *room = room_for_one(b->str, b->nstrings, &b->str_cap, sizeof(*room));

	if (!room)
		return 0;
	b->str = room;
	old_len = b->strings.len;
	if (argus_buf_varint(&b->strings, len) ||
	    argus_buf_put(&b->strings, s, len)) {
		b->strings.len = old_len;
		return 0;
	}
	id = b->nstrings + 1;
	if (argus_hidx_insert(&b->str_idx, h, id)) {
		b->strings.len = old_len;
		return 0;
	}
	b->str[b->nstrings].off = b->strings.len - len;
	b->str[b->nstrings].len = len;
	b->nstrings++;
	return id;
}

struct stack_key {
	const uint64_t *ips;
	uint32_t nr;
};

static bool stack_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_chunk_builder *b = ctx;
	const struct stack_key *k = key;
	const struct stack_ref *r = &b->stk[id - 1];

	return r->nr == k->nr &&
	       (!k->nr || !memcmp(b->ips + r->off, k->ips, k->nr * sizeof(uint64_t)));
}

uint32_t argus_chunk_builder__stack(struct argus_chunk_builder *b,
				    const uint64_t *ips, uint32_t nr)
{
	struct stack_key key = { ips, nr };
	size_t old_len;
	uint64_t prev = 0;
	uint32_t h, id;
	int rc = 0;

	if (!b || (!ips && nr) || nr > ARGUS_MAX_RAW_LEN / 8)
		return 0;
	h = argus_hash_u64s(ips, nr);
	id = argus_hidx_find(&b->stk_idx, h, stack_eq, b, &key);
	if (id)
		return id;
	struct stack_ref *room = room_for_one(b->stk, b->nstacks, &b->stk_cap, sizeof(*room));

	if (!room)
		return 0;
	b->stk = room;
	if (b->nips + nr > b->ips_cap) {
		size_t cap = b->ips_cap ? b->ips_cap : 1024;
		uint64_t *n;

		while (cap < b->nips + nr)
			cap *= 2;
		n = realloc(b->ips, cap * sizeof(*n));
		if (!n)
			return 0;
		b->ips = n;
		b->ips_cap = cap;
	}
	/* ips as zigzag deltas from the previous frame: frames of one binary
	 * sit close together, so most deltas take 2-4 bytes, not 6-8 */
	old_len = b->stacks.len;
	rc = argus_buf_varint(&b->stacks, nr);
	for (uint32_t i = 0; i < nr && !rc; i++) {
		rc = argus_buf_varint(&b->stacks, zigzag_enc((int64_t)(ips[i] - prev)));
		prev = ips[i];
	}
	id = b->nstacks + 1;
	if (rc || argus_hidx_insert(&b->stk_idx, h, id)) {
		b->stacks.len = old_len;
		return 0;
	}
	if (nr)
		memcpy(b->ips + b->nips, ips, nr * sizeof(uint64_t));
	b->stk[b->nstacks].off = b->nips;
	b->stk[b->nstacks].nr = nr;
	b->nips += nr;
	b->nstacks++;
	return id;
}

/* ---------------------------------------------------------------------
 * Tasks, maps, lost counts.
 */
static int put_varints(struct argus_buf *buf, const uint64_t *v, size_t n)
{
	if (argus_buf_reserve(buf, n * VARINT_MAX_LEN))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		buf->len += varint_put(buf->p + buf->len, v[i]);
	return 0;
}

int argus_chunk_builder__task(struct argus_chunk_builder *b,
			      const struct argus_task *t)
{
	uint64_t v[4];

	if (!b || !t || t->comm > b->nstrings)
		return -EINVAL;
	v[0] = t->tid;
	v[1] = t->pid;
	v[2] = t->ppid;
	v[3] = t->comm;
	if (put_varints(&b->tasks, v, 4))
		return -ENOMEM;
	b->ntasks++;
	return 0;
}

int argus_chunk_builder__map(struct argus_chunk_builder *b,
			     const struct argus_map *m)
{
	uint64_t v[7];
	size_t old;

	if (!b || !m || m->path > b->nstrings || m->end < m->start ||
	    m->build_id_len > ARGUS_BUILD_ID_MAX)
		return -EINVAL;
	v[0] = m->pid;
	v[1] = m->path;
	v[2] = m->ts;
	v[3] = m->start;
	v[4] = m->end - m->start;
	v[5] = m->pgoff;
	v[6] = m->build_id_len;
	old = b->maps.len;
	if (put_varints(&b->maps, v, 7) ||
	    argus_buf_put(&b->maps, m->build_id, m->build_id_len)) {
		b->maps.len = old;
		return -ENOMEM;
	}
	b->nmaps++;
	return 0;
}

static struct cpu_stream *cpu_stream(struct argus_chunk_builder *b,
				     uint16_t cpu)
{
	if (cpu >= b->ncpu) {
		uint32_t n = b->ncpu ? b->ncpu : 8;
		struct cpu_stream *s;

		while (n <= cpu)
			n *= 2;
		s = realloc(b->cpu, (size_t)n * sizeof(*s));
		if (!s)
			return NULL;
		memset(s + b->ncpu, 0, (size_t)(n - b->ncpu) * sizeof(*s));
		b->cpu = s;
		b->ncpu = n;
	}
	return &b->cpu[cpu];
}

int argus_chunk_builder__lost(struct argus_chunk_builder *b, uint16_t cpu,
			      uint64_t count)
{
	struct cpu_stream *s;

	if (!b)
		return -EINVAL;
	s = cpu_stream(b, cpu);
	if (!s)
		return -ENOMEM;
	s->lost += count;
	s->active = true;
	return 0;
}

/* ---------------------------------------------------------------------
 * Events.
 *
 * STREAM event: type, ts delta, tid, zigzag(pid - tid), ctx, the schema's
 * fields, then the stack/str/str2 ids the schema carries.
 */
int argus_chunk_builder__event(struct argus_chunk_builder *b,
			       const struct argus_event *ev)
{
	const struct type_schema *sc;
	struct cpu_stream *s;
	uint8_t *p;

	if (!b || !ev || ev->type == AE_NONE)
		return -EINVAL;
	sc = schema_of(ev->type);
	for (unsigned i = sc->nfields; i < ARGUS_NFIELDS; i++)
		if (ev->f[i])
			return -EINVAL;
	if ((ev->stack && !(sc->refs & ARGUS_SCHEMA_STACK)) ||
	    (ev->str && !(sc->refs & ARGUS_SCHEMA_STR)) ||
	    (ev->str2 && !(sc->refs & ARGUS_SCHEMA_STR2)) ||
	    ev->stack > b->nstacks || ev->str > b->nstrings ||
	    ev->str2 > b->nstrings)
		return -EINVAL;
	s = cpu_stream(b, ev->cpu);
	if (!s)
		return -ENOMEM;
	if (s->nevents && ev->ts < s->last_ts)
		return -EINVAL;
	if (argus_buf_reserve(&s->buf, (5 + ARGUS_NFIELDS + 3) * VARINT_MAX_LEN))
		return -ENOMEM;

	p = s->buf.p + s->buf.len;
	p += varint_put(p, ev->type);
	p += varint_put(p, s->nevents ? ev->ts - s->last_ts : 0);
	p += varint_put(p, ev->tid);
	p += varint_put(p, zigzag_enc((int64_t)ev->pid - (int64_t)ev->tid));
	p += varint_put(p, ev->ctx);
	for (unsigned i = 0; i < sc->nfields; i++)
		p += varint_put(p, sc->signed_mask & (1u << i) ?
				   zigzag_enc((int64_t)ev->f[i]) : ev->f[i]);
	if (sc->refs & ARGUS_SCHEMA_STACK)
		p += varint_put(p, ev->stack);
	if (sc->refs & ARGUS_SCHEMA_STR)
		p += varint_put(p, ev->str);
	if (sc->refs & ARGUS_SCHEMA_STR2)
		p += varint_put(p, ev->str2);
	s->buf.len = (size_t)(p - s->buf.p);

	if (!s->nevents)
		s->min_ts = ev->ts;
	s->last_ts = ev->ts;
	s->nevents++;
	s->active = true;
	b->nevents++;
	b->used_types[ev->type / 64] |= 1ull << (ev->type % 64);
	return 0;
}

size_t argus_chunk_builder__nevents(const struct argus_chunk_builder *b)
{
	return b ? (size_t)b->nevents : 0;
}

size_t argus_chunk_builder__raw_bytes(const struct argus_chunk_builder *b)
{
	size_t n;

	if (!b)
		return 0;
	n = b->strings.len + b->stacks.len + b->tasks.len + b->maps.len;
	for (uint32_t c = 0; c < b->ncpu; c++)
		if (b->cpu[c].active)
			n += b->cpu[c].buf.len + 6 * VARINT_MAX_LEN;
	return n;
}

/* ---------------------------------------------------------------------
 * Finishing: assemble the sections, deflate, checksum.
 */
static int put_section(struct argus_buf *raw, enum argus_section tag,
		       uint64_t count, const struct argus_buf *body)
{
	size_t blen = body ? body->len : 0;

	if (argus_buf_varint(raw, tag) ||
	    argus_buf_varint(raw, varint_len(count) + blen) ||
	    argus_buf_varint(raw, count) ||
	    (blen && argus_buf_put(raw, body->p, blen)))
		return -ENOMEM;
	return 0;
}

static int put_schema(struct argus_chunk_builder *b, struct argus_buf *body,
		      uint64_t *count)
{
	char name[24];

	*count = 0;
	for (uint32_t w = 0; w < 65536 / 64; w++) {
		for (uint64_t bits = b->used_types[w]; bits; bits &= bits - 1) {
			uint16_t type = (uint16_t)(w * 64 + __builtin_ctzll(bits));
			const struct type_schema *sc = schema_of(type);
			const char *nm = sc->name;
			size_t nlen;

			if (!nm) {
				snprintf(name, sizeof(name), "type%u", type);
				nm = name;
			}
			nlen = strlen(nm);
			if (argus_buf_varint(body, type) ||
			    argus_buf_varint(body, sc->nfields))
				return -ENOMEM;
			for (unsigned i = 0; i < sc->nfields; i++)
				if (argus_buf_varint(body, sc->signed_mask & (1u << i) ?
						     ARGUS_ENC_S : ARGUS_ENC_U))
					return -ENOMEM;
			if (argus_buf_varint(body, sc->refs) ||
			    argus_buf_varint(body, nlen) ||
			    argus_buf_put(body, nm, nlen))
				return -ENOMEM;
			(*count)++;
		}
	}
	return 0;
}

/* The inflated payload into b->raw; fills the header's event fields. */
static int assemble(struct argus_chunk_builder *b, struct argus_chunk_header *h)
{
	struct argus_buf *raw = &b->raw, tmp = { 0 };
	uint64_t ncpus = 0, nstreams = 0, nschema;
	bool have_ts = false;
	int rc = -ENOMEM;

	raw->len = 0;
	for (uint32_t c = 0; c < b->ncpu; c++) {
		struct cpu_stream *s = &b->cpu[c];

		if (!s->active)
			continue;
		ncpus++;
		if (!s->nevents)
			continue;
		nstreams++;
		if (!have_ts || s->min_ts < h->min_ts)
			h->min_ts = s->min_ts;
		if (!have_ts || s->last_ts > h->max_ts)
			h->max_ts = s->last_ts;
		have_ts = true;
	}
	if (nstreams > UINT16_MAX || b->nevents > UINT32_MAX)
		return -E2BIG;
	h->nstreams = (uint16_t)nstreams;
	h->nevents = (uint32_t)b->nevents;

	/* CPUS: cpu, min_ts, max_ts, lost, nevents; increasing cpu */
	if (ncpus) {
		for (uint32_t c = 0; c < b->ncpu; c++) {
			struct cpu_stream *s = &b->cpu[c];
			uint64_t v[5] = { c, s->min_ts, s->last_ts, s->lost,
					  s->nevents };

			if (s->active && put_varints(&tmp, v, 5))
				goto out;
		}
		if (put_section(raw, ARGUS_SEC_CPUS, ncpus, &tmp))
			goto out;
	}
	tmp.len = 0;
	if (put_schema(b, &tmp, &nschema))
		goto out;
	if ((nschema && put_section(raw, ARGUS_SEC_SCHEMA, nschema, &tmp)) ||
	    (b->nstrings &&
	     put_section(raw, ARGUS_SEC_STRINGS, b->nstrings, &b->strings)) ||
	    (b->nstacks &&
	     put_section(raw, ARGUS_SEC_STACKS, b->nstacks, &b->stacks)) ||
	    (b->ntasks && put_section(raw, ARGUS_SEC_TASKS, b->ntasks, &b->tasks)) ||
	    (b->nmaps && put_section(raw, ARGUS_SEC_MAPS, b->nmaps, &b->maps)))
		goto out;
	/* STREAM: cpu, count, events */
	for (uint32_t c = 0; c < b->ncpu; c++) {
		struct cpu_stream *s = &b->cpu[c];

		if (!s->nevents)
			continue;
		if (argus_buf_varint(raw, ARGUS_SEC_STREAM) ||
		    argus_buf_varint(raw, varint_len(c) + varint_len(s->nevents) +
				     s->buf.len) ||
		    argus_buf_varint(raw, c) ||
		    argus_buf_varint(raw, s->nevents) ||
		    argus_buf_put(raw, s->buf.p, s->buf.len))
			goto out;
	}
	rc = raw->len > ARGUS_MAX_RAW_LEN ? -E2BIG : 0;
out:
	argus_buf_free(&tmp);
	return rc;
}

/*
 * b->raw as a zlib stream into a new buffer, after ARGUS_CHUNK_HEADER_SIZE
 * bytes left for the header.  libdeflate when built with it: the same
 * zlib format (any reader inflates it), and at level 1 about half of
 * zlib's CPU.
 */
static int deflate_raw(struct argus_chunk_builder *b, int level,
		       uint8_t **out, size_t *zlen)
{
	uint8_t *buf;
#ifdef ARGUS_HAVE_LIBDEFLATE
	size_t bound;

	if (level < 0)
		level = 6;      /* zlib's Z_DEFAULT_COMPRESSION */
	if (!b->deflater || b->deflater_level != level) {
		libdeflate_free_compressor(b->deflater);
		b->deflater = libdeflate_alloc_compressor(level);
		b->deflater_level = level;
		if (!b->deflater)
			return -ENOMEM;
	}
	bound = libdeflate_zlib_compress_bound(b->deflater, b->raw.len);
	buf = malloc(ARGUS_CHUNK_HEADER_SIZE + bound);
	if (!buf)
		return -ENOMEM;
	*zlen = libdeflate_zlib_compress(b->deflater, b->raw.p, b->raw.len,
					 buf + ARGUS_CHUNK_HEADER_SIZE, bound);
	if (!*zlen)
		*zlen = SIZE_MAX;       /* cannot happen within the bound */
#else
	uLongf z = compressBound((uLong)b->raw.len);
	int rc;

	buf = malloc(ARGUS_CHUNK_HEADER_SIZE + z);
	if (!buf)
		return -ENOMEM;
	rc = compress2(buf + ARGUS_CHUNK_HEADER_SIZE, &z, b->raw.p,
		       (uLong)b->raw.len, level);
	if (rc != Z_OK) {
		free(buf);
		return rc == Z_MEM_ERROR ? -ENOMEM : -EIO;
	}
	*zlen = z;
#endif
	*out = buf;
	return 0;
}

/*
 * b->raw as one zstd frame, its content size in the frame header (the
 * reader checks it against raw_len before inflating).  No content
 * checksum: payload_crc covers the stored bytes, and every reader checks
 * it before it inflates; the checksum cost ~12% of the inflate
 * (bench/codec_speed.c).  On the collector's chunks, level 1
 * takes about half of libdeflate level 1's CPU and writes ~30% fewer
 * bytes, and the frame inflates faster (docs/benchmarks.md, session 21).
 */
/* Bytes of b->raw up to the end of its first section (assemble() puts
 * CPUS first), or 0 if it cannot tell. */
static size_t first_section_end(const struct argus_buf *raw)
{
	const uint8_t *p = raw->p, *end = raw->p + raw->len;
	uint64_t tag, len;

	if (varint_get(&p, end, &tag) || varint_get(&p, end, &len) ||
	    len > (uint64_t)(end - p))
		return 0;
	return (size_t)(p - raw->p) + (size_t)len;
}

static int zstd_raw(struct argus_chunk_builder *b, int level,
		    uint8_t **out, size_t *zlen)
{
	/* the bound of the whole, plus the header of the block the flush
	 * below adds */
	size_t bound = ZSTD_compressBound(b->raw.len) + 64, head = first_section_end(&b->raw);
	ZSTD_outBuffer o;
	ZSTD_inBuffer in;
	size_t left;
	uint8_t *buf;

	if (!b->zstd && !(b->zstd = ZSTD_createCCtx()))
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(b->zstd, ZSTD_c_compressionLevel,
						level < 0 ? ZSTD_CLEVEL_DEFAULT : level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(b->zstd, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(b->zstd, b->raw.len)))
		return -EINVAL;
	buf = malloc(ARGUS_CHUNK_HEADER_SIZE + bound);
	if (!buf)
		return -ENOMEM;
	o = (ZSTD_outBuffer){ buf + ARGUS_CHUNK_HEADER_SIZE, bound, 0 };
	/* The first section (CPUS) ends a block of its own: a reader's open
	 * streams only that far (reader_scan.c, probe_cpus), and zstd decodes
	 * whole blocks (up to 128 KiB). */
	in = (ZSTD_inBuffer){ b->raw.p, head, 0 };
	left = head ? ZSTD_compressStream2(b->zstd, &o, &in, ZSTD_e_flush) : 0;
	if (!ZSTD_isError(left) && !left) {
		in = (ZSTD_inBuffer){ b->raw.p, b->raw.len, head };
		left = ZSTD_compressStream2(b->zstd, &o, &in, ZSTD_e_end);
	}
	if (ZSTD_isError(left) || left) {       /* left > 0: out of room, cannot happen */
		free(buf);
		ZSTD_CCtx_reset(b->zstd, ZSTD_reset_session_and_parameters);
		return ZSTD_isError(left) &&
		       ZSTD_getErrorCode(left) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
	}
	*zlen = o.pos;
	*out = buf;
	return 0;
}

int argus_chunk_builder__set_codec(struct argus_chunk_builder *b,
				   enum argus_codec codec)
{
	if (!b || (codec != ARGUS_CODEC_ZLIB && codec != ARGUS_CODEC_ZSTD))
		return -EINVAL;
	b->codec = codec;
	return 0;
}

/* Compress b->raw with the builder's codec into *out (header room first):
 * the chunk flag in *flag, or *out NULL where it does not shrink.  A zstd
 * frame that shrinks past deflate's ratio (argus_raw_len_plausible) is
 * replaced by zlib: the format's bound on what a reader allocates. */
static int compress_raw(struct argus_chunk_builder *b, int level,
			uint8_t **out, size_t *zlen, uint16_t *flag)
{
	int rc;

	*out = NULL;
	if (b->codec == ARGUS_CODEC_ZSTD) {
		rc = zstd_raw(b, level, out, zlen);
		if (rc)
			return rc;
		if (*zlen < b->raw.len &&
		    argus_raw_len_plausible((uint32_t)b->raw.len, (uint32_t)*zlen)) {
			*flag = ARGUS_CHUNK_ZSTD;
			return 0;
		}
		free(*out);
		*out = NULL;
		if (*zlen >= b->raw.len)
			return 0;       /* incompressible: store raw */
	}
	rc = deflate_raw(b, level, out, zlen);
	if (rc)
		return rc;
	if (*zlen < b->raw.len) {
		*flag = ARGUS_CHUNK_ZLIB;
		return 0;
	}
	free(*out);             /* incompressible: store raw */
	*out = NULL;
	return 0;
}

int argus_chunk_builder__finish(struct argus_chunk_builder *b, uint64_t seq,
				int level, void **out, size_t *len)
{
	struct argus_chunk_header h = { 0 };
	uint8_t *buf = NULL;
	size_t payload_len = 0;     /* set on every path; GCC -fsanitize cannot tell */
	int rc;

	if (!b || !out || !len || level < -1 || level > 9)
		return -EINVAL;
	rc = assemble(b, &h);
	if (rc)
		return rc;

	if (level != 0) {
		uint16_t flag = 0;

		rc = compress_raw(b, level, &buf, &payload_len, &flag);
		if (rc)
			return rc;
		h.flags |= flag;
	}
	if (!buf) {
		buf = malloc(ARGUS_CHUNK_HEADER_SIZE + b->raw.len);
		if (!buf)
			return -ENOMEM;
		if (b->raw.len)
			memcpy(buf + ARGUS_CHUNK_HEADER_SIZE, b->raw.p, b->raw.len);
		payload_len = b->raw.len;
	}

	h.magic = ARGUS_CHUNK_MAGIC;
	h.version = ARGUS_FORMAT_VERSION;
	h.seq = seq;
	h.payload_len = (uint32_t)payload_len;
	h.raw_len = (uint32_t)b->raw.len;
	h.payload_crc = argus_crc32(buf + ARGUS_CHUNK_HEADER_SIZE, payload_len);
	argus_chunk_header_seal(&h);
	memcpy(buf, &h, sizeof(h));

	*out = buf;
	*len = ARGUS_CHUNK_HEADER_SIZE + payload_len;
	argus_chunk_builder__reset(b);
	return 0;
}
