/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_merge.c - a chunk's events, decoded once and in (ts, cpu) order:
 * the per-CPU STREAM sections, merged straight into t->evbuf with the
 * trace's global string and stack ids.  The reader's hot loop.
 *
 * A min-heap of cursors, one per stream, keyed on the ts of its next event
 * (its type and ts delta peeked; the decode goes on from there rather than
 * reading them again).  The cursor on top decodes straight into its place
 * in evbuf for as long as it stays ahead of the runner-up, so the heap is
 * touched once per run of events of one CPU, not once per event.
 *
 * Every varint comes through varint_next() (varint.h): in registers, the
 * short ones inline.  decode_rest() and its helpers are always_inline into
 * the loop, which is why they live in this one file.
 */
#include <inttypes.h>

#include "reader_internal.h"

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
	ev->stack = ev->str = ev->str2 = ev->pad2 = 0;
	memset(ev->pad, 0, sizeof(ev->pad));
	for (unsigned i = 0; i < ARGUS_NFIELDS; i++)   /* constant size: */
		ev->f[i] = 0;                          /* vector stores */
	e = schema_find(t, type);
	if (!e)
		return reader_why(t, "cpu %u: event type %" PRIu64 " is not in the chunk's schema",
				  cu->cpu, type);
	NEXT(tid, header);
	NEXT(pidz, header);
	NEXT(ctx, header);
	if (tid > UINT32_MAX || ctx > UINT8_MAX)
		goto header;
	if (__builtin_add_overflow((int64_t)tid, zigzag_dec(pidz), &pid) ||
	    pid < 0 || pid > (int64_t)UINT32_MAX)
		return reader_why(t, "cpu %u: bad pid", cu->cpu);
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
		return reader_why(t, "cpu %u: event after the CPUS max_ts", cu->cpu);
	cu->ts = ev->ts;
	cu->s.p = p;    /* end is unchanged; a 16-byte copy back stalled
			   on store forwarding (a tenth of decode time) */
	cu->left--;
	return 0;
header:
	return reader_why(t, "cpu %u: bad event header", cu->cpu);
past:
	return reader_why(t, "cpu %u: event runs past its stream", cu->cpu);
bad_stack:
	return reader_why(t, "cpu %u: bad stack id", cu->cpu);
bad_str:
	return reader_why(t, "cpu %u: bad string id", cu->cpu);
}

/* Decode the cursor's next event from its start: only to say why it is
 * corrupt when peek_ts() fails (the hot path is decode_next()). */
static __attribute__((noinline)) int
decode_event(struct argus_trace *t, struct cursor *cu, struct argus_event *ev)
{
	struct varint_res r;
	uint64_t type;

	if (cu->s.p >= cu->s.end)
		return reader_why(t, "cpu %u stream ends early", cu->cpu);
	r = varint_next(cu->s.p, cu->s.end);
	if (!r.p)
		return reader_why(t, "cpu %u stream ends early", cu->cpu);
	type = r.v;
	if (!schema_find(t, type))
		return reader_why(t, "cpu %u: event type %" PRIu64 " is not in the chunk's schema",
				  cu->cpu, type);
	r = varint_next(r.p, cu->s.end);
	if (!r.p || r.v > UINT64_MAX - cu->ts)
		return reader_why(t, "cpu %u: bad event header", cu->cpu);
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
		return reader_why(t, "cpu %u: last event is not at the CPUS max_ts", cu->cpu);
	if (cu->s.p != cu->s.end)
		return reader_why(t, "cpu %u: stream has trailing bytes", cu->cpu);
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
 * Decode every event of every stream, merged on (ts, cpu), into evbuf
 * (the heap is described at the top of the file).
 */
int reader_decode_merged(struct argus_trace *t)
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
