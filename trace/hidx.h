/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hidx.h - hashing and an open-addressing hash index, shared by the trace
 * reader/writer (trace/) and the graph builder (graphlib/).
 *
 *   struct argus_hidx  maps a 32-bit hash to a 1-based id; equality is
 *                      decided by a callback, so the keys live wherever the
 *                      caller keeps them (no copy, no per-entry allocation).
 *                      Load factor <= 1/2; ids are never removed.
 *
 * Everything is static inline so the equality callback is inlined at each
 * call site.
 */
#ifndef ARGUS_HIDX_H
#define ARGUS_HIDX_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Hashing.
 */
static inline uint64_t argus_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline uint32_t argus_hash_bytes(const void *d, size_t n)
{
	const uint8_t *p = d;
	uint64_t h = 0xcbf29ce484222325ull ^ n;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return (uint32_t)argus_mix64(h);
}

static inline uint32_t argus_hash_u64s(const uint64_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++)
		h = argus_mix64(h ^ v[i]) + i;
	return (uint32_t)argus_mix64(h);
}

/* ---------------------------------------------------------------------
 * Hash index: hash -> 1-based id.  Load factor <= 1/2.
 */
struct argus_hslot {
	uint32_t hash;
	uint32_t id;    /* 0 = empty */
};

struct argus_hidx {
	struct argus_hslot *slot;
	uint32_t cap;   /* power of two, 0 before the first insert */
	uint32_t n;
};

/* Does id `id` hold `key`? */
typedef bool (*argus_hidx_eq_fn)(const void *ctx, uint32_t id,
				 const void *key);

static inline uint32_t argus_hidx_find(const struct argus_hidx *h,
				       uint32_t hash, argus_hidx_eq_fn eq,
				       const void *ctx, const void *key)
{
	uint32_t i;

	if (!h->cap)
		return 0;
	for (i = hash & (h->cap - 1); h->slot[i].id; i = (i + 1) & (h->cap - 1))
		if (h->slot[i].hash == hash && eq(ctx, h->slot[i].id, key))
			return h->slot[i].id;
	return 0;
}

/* Add id under hash; the caller checked it is not there yet. */
static inline int argus_hidx_insert(struct argus_hidx *h, uint32_t hash,
				    uint32_t id)
{
	uint32_t i;

	if ((uint64_t)(h->n + 1) * 2 > h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct argus_hslot *s;

		if (!cap || cap > (1u << 31))
			return -ENOMEM;
		s = calloc(cap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		for (uint32_t j = 0; j < h->cap; j++) {
			if (!h->slot[j].id)
				continue;
			for (i = h->slot[j].hash & (cap - 1); s[i].id;
			     i = (i + 1) & (cap - 1))
				;
			s[i] = h->slot[j];
		}
		free(h->slot);
		h->slot = s;
		h->cap = cap;
	}
	for (i = hash & (h->cap - 1); h->slot[i].id; i = (i + 1) & (h->cap - 1))
		;
	h->slot[i].hash = hash;
	h->slot[i].id = id;
	h->n++;
	return 0;
}

/* Point the entry holding `key` at new_id instead (a key now names a
 * newer object, e.g. a reused thread id).  0, or -ENOENT if absent. */
static inline int argus_hidx_set(struct argus_hidx *h, uint32_t hash,
				 argus_hidx_eq_fn eq, const void *ctx,
				 const void *key, uint32_t new_id)
{
	uint32_t i;

	if (!h->cap)
		return -ENOENT;
	for (i = hash & (h->cap - 1); h->slot[i].id; i = (i + 1) & (h->cap - 1))
		if (h->slot[i].hash == hash && eq(ctx, h->slot[i].id, key)) {
			h->slot[i].id = new_id;
			return 0;
		}
	return -ENOENT;
}

static inline void argus_hidx_clear(struct argus_hidx *h)
{
	if (h->cap)
		memset(h->slot, 0, h->cap * sizeof(*h->slot));
	h->n = 0;
}

static inline void argus_hidx_free(struct argus_hidx *h)
{
	free(h->slot);
	h->slot = NULL;
	h->cap = h->n = 0;
}

#endif /* ARGUS_HIDX_H */
