/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_internal.h - helpers shared by the trace-format library's own files
 * (chunk_builder.c, ring_file.c, trace_save.c and the reader: trace_reader.c
 * and reader_*.c, whose own shared header is reader_internal.h).  Not part of
 * the public API; nothing outside trace/ should include it.
 *
 *   struct argus_buf   growable byte buffer; p may be NULL while cap == 0
 *   struct argus_hidx  hash index (hidx.h, shared with graphlib/)
 *   header helpers     crc/seal/check of the on-disk headers
 *
 * The on-disk headers are little-endian and are copied with memcpy: this
 * library only builds on little-endian hosts (checked below).
 */
#ifndef ARGUS_TRACE_INTERNAL_H
#define ARGUS_TRACE_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace_format.h"
#include "varint.h"
#include "hidx.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Argus trace format is little-endian; this host is not"
#endif

_Static_assert(sizeof(struct argus_file_header) == 184, "file header layout");
_Static_assert(offsetof(struct argus_file_header, header_crc) == 52,
	       "file header crc covers [0, 52)");
_Static_assert(sizeof(struct argus_chunk_header) == ARGUS_CHUNK_HEADER_SIZE,
	       "chunk header layout");
_Static_assert(offsetof(struct argus_chunk_header, header_crc) == 60,
	       "chunk header crc covers [0, 60)");

/* Largest inflated chunk payload a reader accepts (and a builder makes). */
#define ARGUS_MAX_RAW_LEN (256u << 20)
/* deflate cannot expand better than ~1032:1; a bigger claimed raw_len is a
 * lie and would only make the reader allocate for nothing.  zstd can (its
 * RLE blocks), so the format holds zstd chunks to the same bound: a writer
 * stores a chunk that zstd shrinks further as zlib (chunk_builder.c). */
#define ARGUS_MAX_ZLIB_RATIO 1032u
/* A compressed payload that claims raw_len from payload_len is plausible. */
static inline bool argus_raw_len_plausible(uint32_t raw_len, uint32_t payload_len)
{
	return (uint64_t)raw_len <= (uint64_t)payload_len * ARGUS_MAX_ZLIB_RATIO + 64;
}

/* Per-type schema flags (SCHEMA section, `flags` varint). */
#define ARGUS_SCHEMA_STACK 0x1
#define ARGUS_SCHEMA_STR 0x2
#define ARGUS_SCHEMA_STR2 0x4
/* Per-field encodings (SCHEMA section). */
#define ARGUS_ENC_U 0   /* unsigned varint */
#define ARGUS_ENC_S 1   /* zigzag varint of the sign-extended value */
/* A reader decodes (and drops) fields past ARGUS_NFIELDS up to this many. */
#define ARGUS_SCHEMA_MAX_FIELDS 64

static inline uint64_t argus_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* ---------------------------------------------------------------------
 * crc32: zlib's CRC-32, computed by libdeflate where the library was built
 * with it (the same value, 2.2-2.5x as fast here with carry-less multiply:
 * bench/crc_speed; a snapshot's open checks every payload's).  Files
 * outside the library that include this header get zlib's.  Fuzz builds
 * skip the comparison so that the fuzzer can reach the decoder behind the
 * checksums.
 */
#ifdef ARGUS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

static inline uint32_t argus_crc32(const void *p, size_t n)
{
#ifdef ARGUS_HAVE_LIBDEFLATE
	return libdeflate_crc32(0, p, n);
#else
	return (uint32_t)crc32_z(0, (const Bytef *)p, n);
#endif
}

static inline bool argus_crc_ok(uint32_t stored, const void *p, size_t n)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	(void)stored; (void)p; (void)n;
	return true;
#else
	return argus_crc32(p, n) == stored;
#endif
}

static inline void argus_chunk_header_seal(struct argus_chunk_header *h)
{
	h->header_crc = argus_crc32(h, offsetof(struct argus_chunk_header,
						header_crc));
}

/* Magic and header crc: "this block holds a chunk header". */
static inline bool argus_chunk_header_ok(const struct argus_chunk_header *h)
{
	return h->magic == ARGUS_CHUNK_MAGIC &&
	       argus_crc_ok(h->header_crc, h,
			    offsetof(struct argus_chunk_header, header_crc));
}

static inline void argus_file_header_seal(struct argus_file_header *h)
{
	h->header_crc = argus_crc32(h, offsetof(struct argus_file_header,
						header_crc));
}

/* ---------------------------------------------------------------------
 * Growable byte buffer.
 */
struct argus_buf {
	uint8_t *p;     /* NULL until the first reserve */
	size_t len;     /* bytes in use */
	size_t cap;     /* bytes allocated */
};

static inline int argus_buf_reserve(struct argus_buf *b, size_t more)
{
	size_t need, cap;
	uint8_t *p;

	if (more > SIZE_MAX - b->len)
		return -ENOMEM;
	need = b->len + more;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static inline int argus_buf_put(struct argus_buf *b, const void *d, size_t n)
{
	if (argus_buf_reserve(b, n))
		return -ENOMEM;
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

static inline int argus_buf_varint(struct argus_buf *b, uint64_t v)
{
	if (argus_buf_reserve(b, VARINT_MAX_LEN))
		return -ENOMEM;
	b->len += varint_put(b->p + b->len, v);
	return 0;
}

static inline void argus_buf_free(struct argus_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---------------------------------------------------------------------
 * Entry points shared inside the library.
 */

/* argus_ring__create(), but the new file's header copies created_*_ns,
 * ncpus, hostname and kernel from `tmpl` (argus save keeps the source's
 * clock pair so that timestamps still convert to wall time). */
struct argus_ring *argus_ring__create_from(const char *path,
					   const struct argus_ring_opts *opts,
					   const struct argus_file_header *tmpl,
					   struct argus_error *err);
/* Usable bytes of a ring now: its size less what ENOSPC took away (the
 * ring shrinks to what the disk holds).  Snapshot files: bytes written. */
uint64_t argus_ring__capacity(const struct argus_ring *r);

/* Fill *err (which may be NULL): code, offset and a message prefixed with
 * "path: " when path is not NULL.  Returns code. */
int argus_error__set(struct argus_error *err, const char *path, int code,
		     uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif /* ARGUS_TRACE_INTERNAL_H */
