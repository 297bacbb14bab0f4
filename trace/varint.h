/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * varint.h - the integer encoding of Argus chunk payloads.
 *
 * Unsigned LEB128: 7 bits per byte, lowest group first, the high bit set on
 * every byte but the last.  A uint64_t takes 1..10 bytes; values < 128 take
 * one.  Signed values go through zigzag first (0, -1, 1, -2 ... -> 0, 1, 2,
 * 3 ...) so that small negative numbers stay short.
 *
 * This file is the only varint code of the trace library: the writer
 * encodes with varint_put(), the reader decodes with varint_get() and
 * varint_next() (its streaming inflater too, reader_inflate.c).
 *
 * Invariants:
 *   - varint_put() writes at most VARINT_MAX_LEN bytes; the caller reserves
 *     them.
 *   - varint_get() never reads at or past `end`.  It fails (-EBADMSG) on an
 *     encoding that runs off the end, is longer than 10 bytes, or does not
 *     fit in 64 bits; on failure *pp and *v are left unchanged.
 *   - varint_next() accepts and rejects exactly what varint_get() does.
 *   - zigzag_enc()/zigzag_dec() are exact inverses over all of int64_t.
 */
#ifndef ARGUS_VARINT_H
#define ARGUS_VARINT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VARINT_MAX_LEN 10

/* Bytes varint_put() would write for v. */
static inline size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Encode v at p (room for VARINT_MAX_LEN bytes); returns bytes written. */
static inline size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Decode one varint from [*pp, end); advance *pp past it. */
static inline int varint_get(const uint8_t **pp, const uint8_t *end,
			     uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned shift = 0;

	if (p < end && *p < 0x80) {     /* fast path: most values are small */
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= VARINT_MAX_LEN) {
		/* Unrolled (protobuf-style): no bounds check per byte, since all
		 * ten bytes are there; each step subtracts the previous byte's
		 * continuation bit instead of masking it. */
		uint64_t b;

		r = *p++;                                      /* >= 0x80 */
		b = *p++; r += (b - 1) << 7;  if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 14; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 21; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 28; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 35; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 42; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 49; if (b < 0x80) goto done;
		b = *p++; r += (b - 1) << 56; if (b < 0x80) goto done;
		b = *p++;
		if (b > 1)              /* the 10th byte holds bit 63 only */
			return -EBADMSG;
		r += (b - 1) << 63;
done:
		*pp = p;
		*v = r;
		return 0;
	}
	for (;;) {
		uint8_t b;

		if (p >= end || shift > 63)
			return -EBADMSG;
		b = *p++;
		/* the 10th byte holds bit 63 only */
		if (shift == 63 && b > 1)
			return -EBADMSG;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*pp = p;
	*v = r;
	return 0;
}

/*
 * The same decoding for hot loops: the value comes back in a register
 * pair instead of through memory.  One- and two-byte values (most of an
 * event's, up to three bytes) are decoded inline; longer ones out of line,
 * and within ten bytes of the end of the buffer through varint_get().
 * p == NULL on failure.
 */
struct varint_res {
	const uint8_t *p;       /* past the varint, NULL = bad encoding */
	uint64_t v;
};

static __attribute__((noinline, unused)) struct varint_res
varint_next_slow(const uint8_t *p, const uint8_t *end)
{
	struct varint_res r = { NULL, 0 };

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (end - p >= VARINT_MAX_LEN) {
		/* Pointers, addresses, inodes: most of what comes this way.
		 * Eight bytes from one load, without a branch per byte: the
		 * first byte without its continuation bit ends the varint,
		 * then the 7-bit groups are packed pairwise; a 9th and 10th
		 * byte are added on.  Same values, lengths and rejections as
		 * varint_get(), which big-endian hosts use. */
		uint64_t x, stop, b, v;
		unsigned bits = 64;

		memcpy(&x, p, sizeof(x));
		stop = ~x & 0x8080808080808080ull;
		if (stop) {
			bits = (unsigned)__builtin_ctzll(stop) + 1;     /* 8..64 */
			if (bits < 64)
				x &= (1ull << bits) - 1;
		}
		x &= 0x7f7f7f7f7f7f7f7full;
		x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
		x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
		x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
		if (stop)
			return (struct varint_res){ p + bits / 8, x };
		/* 9 or 10 bytes (kernel addresses): the 10th holds bit 63 only */
		b = p[8];
		if (b < 0x80)
			return (struct varint_res){ p + 9, x | b << 56 };
		v = p[9];
		if (v > 1)
			return (struct varint_res){ NULL, 0 };
		return (struct varint_res){ p + 10, x | (b & 0x7f) << 56 | v << 63 };
	}
#endif
	/* near the end of the buffer, or a big-endian host: varint_get()'s
	 * decoding (unrolled too when ten bytes are there) */
	r.p = varint_get(&p, end, &r.v) ? NULL : p;
	return r;
}

static inline __attribute__((always_inline)) struct varint_res
varint_next(const uint8_t *p, const uint8_t *end)
{
	if (end - p >= 3) {
		uint64_t b0 = p[0], b1, b2;

		if (b0 < 0x80)
			return (struct varint_res){ p + 1, b0 };
		b1 = p[1];
		if (b1 < 0x80)
			return (struct varint_res){ p + 2, (b0 - 0x80) | (b1 << 7) };
		b2 = p[2];
		if (b2 < 0x80)
			return (struct varint_res){ p + 3, (b0 - 0x80) |
						    ((b1 - 0x80) << 7) | (b2 << 14) };
	}
	return varint_next_slow(p, end);
}

static inline uint64_t zigzag_enc(int64_t v)
{
	uint64_t u = (uint64_t)v;

	return (u << 1) ^ (0 - (u >> 63));
}

static inline int64_t zigzag_dec(uint64_t u)
{
	return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

#endif /* ARGUS_VARINT_H */
