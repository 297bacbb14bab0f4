/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_inflate.c - a chunk's payload, inflated.
 *
 *   reader_inflate()        the whole payload into a buffer, for decoding
 *                           (reader_inflate_chunk(): into t->in, or taken
 *                           from the prefetch thread, reader_prefetch.c).
 *                           zstd frames (what the collector writes) with
 *                           libzstd; zlib streams with libdeflate
 *                           (ARGUS_HAVE_LIBDEFLATE), about twice as fast as
 *                           zlib's inflate(), which stays as the fallback:
 *                           inflating is the largest single cost of reading.
 *   struct zsrc             a streaming inflater, for reading the first
 *                           sections of a chunk at open (its CPUS section)
 *                           without inflating all of it.
 *
 * Neither produces more than raw_len bytes; a zstd frame must say it holds
 * exactly raw_len (its content size) before anything is inflated.  The
 * zsrc's varints are decoded by varint_get(), the decoder of every other
 * payload varint.  A zsrc's zstd stream allocates at most the frame's
 * content size (checked to be raw_len first) for its window, plus an input
 * block of at most 128 KiB: libzstd takes the smaller of content size and
 * claimed window.
 */
#include <stdio.h>

#include "reader_internal.h"

#ifdef ARGUS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#include <zstd.h>
#include <zstd_errors.h>

/* ---------------------------------------------------------------------
 * Streaming inflate.
 */
struct zsrc {
	z_stream z;
	ZSTD_DStream *zs;               /* a zstd frame's (borrowed), else NULL */
	ZSTD_inBuffer zin;
	bool zlib, inited;
	const uint8_t *p, *end;         /* produced, not yet consumed */
	uint64_t produced, limit;       /* limit = raw_len */
	uint64_t consumed;
	uint8_t buf[4096];
};

/* Does the zstd frame at in[0, in_len) say it inflates to exactly raw_len?
 * Only its header is parsed. */
static bool zstd_frame_holds(const uint8_t *in, uint32_t in_len, uint32_t raw_len)
{
	unsigned long long n = ZSTD_getFrameContentSize(in, in_len);

	return n != ZSTD_CONTENTSIZE_UNKNOWN && n != ZSTD_CONTENTSIZE_ERROR &&
	       n == raw_len;
}

struct zsrc *reader_zsrc_new(const uint8_t *in, uint32_t in_len, uint16_t flags,
			     uint32_t raw_len, struct inflate_buf *ib)
{
	struct zsrc *s = malloc(sizeof(*s));

	if (!s)
		return NULL;
	memset(&s->z, 0, sizeof(s->z));
	s->zs = NULL;
	s->zlib = false;
	s->inited = false;
	s->produced = s->consumed = 0;
	s->limit = raw_len;
	if (!(flags & ARGUS_CHUNK_COMPRESSED)) {
		s->p = in;
		s->end = in + in_len;
		s->produced = in_len;
		return s;
	}
	s->p = s->end = s->buf;
	if (flags & ARGUS_CHUNK_ZSTD) {
		/* A frame claiming another size yields nothing (no zs, no
		 * zlib): the caller's first varint fails, "bad section". */
		if (!zstd_frame_holds(in, in_len, raw_len))
			return s;
		/* ib's context, reset: creating one per chunk (its tables and
		 * window) made opening 1000 zstd chunks 3x zlib's time */
		if (!ib->zstd && !(ib->zstd = ZSTD_createDCtx())) {
			free(s);
			return NULL;
		}
		ZSTD_DCtx_reset(ib->zstd, ZSTD_reset_session_only);
		s->zs = ib->zstd;
		s->zin = (ZSTD_inBuffer){ in, in_len, 0 };
		return s;
	}
	s->zlib = true;
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
	free(s);        /* s->zs is the inflate_buf's */
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
	if ((!s->zlib && !s->zs) || s->produced >= s->limit)
		return -EBADMSG;
	room = s->limit - s->produced;
	if (s->zs) {
		ZSTD_outBuffer out = { s->buf, room < sizeof(s->buf) ? room : sizeof(s->buf), 0 };

		/* Input 4 KiB at a time: given the whole payload, libzstd
		 * decodes every block it can before it returns the first
		 * bytes (the whole chunk, ~100 us each at open).  The writer
		 * ends a block after CPUS (chunk_builder.c, zstd_raw), so the
		 * first block holds only it.  A call may take input (a block
		 * header) without output. */
		for (size_t step = 4096; !out.pos;) {
			size_t before = s->zin.pos, r, end = s->zin.pos + step;
			ZSTD_inBuffer lim = { s->zin.src, end < s->zin.size ? end : s->zin.size,
					      s->zin.pos };

			r = ZSTD_decompressStream(s->zs, &out, &lim);
			s->zin.pos = lim.pos;
			if (ZSTD_isError(r))
				return -EBADMSG;
			if (!out.pos && s->zin.pos == before) {
				if (lim.size == s->zin.size)
					return -EBADMSG;        /* all input, no progress */
				step *= 2;      /* never seen: libzstd buffers input */
			}
		}
		s->p = s->buf;
		s->end = s->buf + out.pos;
		s->produced += out.pos;
		return 0;
	}
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
	if (!(h->flags & ARGUS_CHUNK_COMPRESSED)) {
		if (raw_len)
			memcpy(b->raw, payload, raw_len);
		return 0;
	}
	if (h->flags & ARGUS_CHUNK_ZSTD) {
		/* one frame, of exactly raw_len bytes, and nothing after it;
		 * its integrity is payload_crc's, checked before this (a
		 * frame damaged under a good crc inflates to bytes the
		 * decoder refuses, or to the wrong size) */
		size_t n;

		if (!zstd_frame_holds(payload, h->payload_len, raw_len) ||
		    ZSTD_findFrameCompressedSize(payload, h->payload_len) != h->payload_len)
			goto bad;
		if (!b->zstd && !(b->zstd = ZSTD_createDCtx()))
			return -ENOMEM;
		n = ZSTD_decompressDCtx(b->zstd, b->raw, raw_len, payload, h->payload_len);
		if (ZSTD_isError(n)) {
			if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
				return -ENOMEM;
			goto bad;
		}
		if (n != raw_len)
			goto bad;
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
	ZSTD_freeDCtx(b->zstd);
	b->zstd = NULL;
	free(b->raw);
	b->raw = NULL;
	b->cap = 0;
}
