/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_inflate.c - a chunk's payload, inflated.
 *
 *   reader_inflate()        the whole payload into a buffer, for decoding
 *                           (reader_inflate_chunk(): into t->in, or taken
 *                           from the prefetch thread, reader_prefetch.c).
 *                           With libdeflate (ARGUS_HAVE_LIBDEFLATE) the same
 *                           zlib streams inflate about twice as fast as with
 *                           zlib's inflate(), which stays as the fallback:
 *                           inflating is the largest single cost of reading.
 *   struct zsrc             a streaming inflater, for reading the first
 *                           sections of a chunk at open (its CPUS section)
 *                           without inflating all of it.
 *
 * Neither produces more than raw_len bytes.  The zsrc's varints are
 * decoded by varint_get(), the decoder of every other payload varint.
 */
#include <stdio.h>

#include "reader_internal.h"

#ifdef ARGUS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

/* ---------------------------------------------------------------------
 * Streaming inflate.
 */
struct zsrc {
	z_stream z;
	bool zlib, inited;
	const uint8_t *p, *end;         /* produced, not yet consumed */
	uint64_t produced, limit;       /* limit = raw_len */
	uint64_t consumed;
	uint8_t buf[4096];
};

struct zsrc *reader_zsrc_new(const uint8_t *in, uint32_t in_len, bool zlib,
			     uint32_t raw_len)
{
	struct zsrc *s = malloc(sizeof(*s));

	if (!s)
		return NULL;
	memset(&s->z, 0, sizeof(s->z));
	s->zlib = zlib;
	s->inited = false;
	s->produced = s->consumed = 0;
	s->limit = raw_len;
	if (!zlib) {
		s->p = in;
		s->end = in + in_len;
		s->produced = in_len;
		return s;
	}
	s->p = s->end = s->buf;
	s->z.next_in = (Bytef *)in;
	s->z.avail_in = in_len;
	if (inflateInit(&s->z) != Z_OK) {
		free(s);
		return NULL;
	}
	s->inited = true;
	return s;
}

void reader_zsrc_free(struct zsrc *s)
{
	if (!s)
		return;
	if (s->inited)
		inflateEnd(&s->z);
	free(s);
}

bool reader_zsrc_eof(const struct zsrc *s)
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

/* The varint's bytes may straddle two inflate outputs: gather them (up to
 * the first without a continuation bit, at most VARINT_MAX_LEN), then
 * varint_get() decodes, accepts and rejects them as it does in place. */
int reader_zsrc_varint(struct zsrc *s, uint64_t *v)
{
	uint8_t b[VARINT_MAX_LEN];
	const uint8_t *p = b;
	size_t n = 0;

	do {
		if (zsrc_byte(s, &b[n]))
			return -EBADMSG;
	} while (b[n++] & 0x80 && n < VARINT_MAX_LEN);
	return varint_get(&p, b + n, v);
}

int reader_zsrc_skip(struct zsrc *s, uint64_t n)
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

uint64_t reader_zsrc_consumed(const struct zsrc *s)
{
	return s->consumed;
}

/* ---------------------------------------------------------------------
 * Whole-payload inflate.
 */
int reader_inflate(struct inflate_buf *b, const uint8_t *payload,
		   const struct argus_chunk_header *h, char *why, size_t whylen)
{
	uint32_t raw_len = h->raw_len;

	if (raw_len > b->cap || !b->raw) {
		uint8_t *p = realloc(b->raw, raw_len ? raw_len : 1);

		if (!p)
			return -ENOMEM;
		b->raw = p;
		b->cap = raw_len;
	}
	if (!(h->flags & ARGUS_CHUNK_ZLIB)) {
		if (raw_len)
			memcpy(b->raw, payload, raw_len);
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

		if (!b->inflater && !(b->inflater = libdeflate_alloc_decompressor()))
			return -ENOMEM;
		r = libdeflate_zlib_decompress_ex(b->inflater, payload, h->payload_len,
						  b->raw, raw_len, &in_used, &out_len);
		if (r != LIBDEFLATE_SUCCESS || out_len != raw_len ||
		    in_used != h->payload_len)
			goto bad;
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
		z.avail_in = h->payload_len;
		z.next_out = b->raw;
		z.avail_out = raw_len;
		rc = inflate(&z, Z_FINISH);
		if (rc != Z_STREAM_END || z.avail_out || z.avail_in) {
			inflateEnd(&z);
			if (rc == Z_MEM_ERROR)
				return -ENOMEM;
			goto bad;
		}
		inflateEnd(&z);
		return 0;
	}
#endif
bad:
	snprintf(why, whylen, "payload does not inflate to %u bytes", raw_len);
	return -EBADMSG;
}

int reader_inflate_chunk(struct argus_trace *t, const struct chunk *c)
{
	int rc;

	if (reader_prefetch_take(t, c, &rc))
		return rc;
	return reader_inflate(&t->in, t->base + c->off + ARGUS_CHUNK_HEADER_SIZE,
			      &c->h, t->why, sizeof(t->why));
}

void reader_inflate_buf_free(struct inflate_buf *b)
{
#ifdef ARGUS_HAVE_LIBDEFLATE
	libdeflate_free_decompressor(b->inflater);
#endif
	b->inflater = NULL;
	free(b->raw);
	b->raw = NULL;
	b->cap = 0;
}
