/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gvec.h - a growable array of fixed-size elements, libargus's one
 * container: the graph's storage (graph_internal.h) and the diagnosis's
 * own lists (diag_*.c) both grow with it.  No graph in here.
 *
 * Invariants: p may be NULL while cap == 0; n <= cap; elements [0, pop)
 * are known faulted in (big arrays are prefaulted a step at a time with
 * one madvise instead of a page fault per 4 KiB); ids are uint32_t, so
 * a vector never reaches ARGUS_NONE elements.
 */
#ifndef ARGUS_GVEC_H
#define ARGUS_GVEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "argus_graph.h"        /* ARGUS_NONE */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14 */
#endif

/* Growable array of fixed-size elements; p may be NULL while cap == 0. */
struct gvec {
	void *p;
	uint32_t n, cap;
	uint32_t pop;           /* elements [0, pop) are known faulted in */
};

#define GVEC_POP_STEP (2u << 20)        /* bytes prefaulted at a time */

/* The next GVEC_POP_STEP bytes of the array (within its capacity) faulted
 * in with one madvise, not a page fault per 4 KiB as pushes reach them. */
static __attribute__((noinline, unused)) void gvec_prefault(struct gvec *v, size_t esz)
{
	const uintptr_t pg = 4096;
	uintptr_t base = (uintptr_t)v->p;
	uint64_t from = (uint64_t)v->pop * esz, to = from + GVEC_POP_STEP;
	uintptr_t a, e;

	if (to > (uint64_t)v->cap * esz)
		to = (uint64_t)v->cap * esz;
	a = (base + from) & ~(pg - 1);
	e = (base + to) & ~(pg - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
	v->pop = (uint32_t)(to / esz);
}

/* Room for k more elements; returns the first one's address (all k
 * zeroed) or NULL. */
static inline void *gvec_push_n(struct gvec *v, size_t esz, uint32_t k)
{
	void *p;

	if (k > v->cap - v->n) {
		uint64_t cap = v->cap ? (uint64_t)v->cap * 2 : 256;

		while (cap < (uint64_t)v->n + k)
			cap *= 2;
		if (cap >= ARGUS_NONE)
			cap = ARGUS_NONE - 1;
		if (cap < (uint64_t)v->n + k)
			return NULL;
		p = realloc(v->p, cap * esz);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = (uint32_t)cap;
		if ((uint64_t)cap * esz < GVEC_POP_STEP)
			v->pop = v->cap;        /* small: leave it to faults */
	}
	while (v->n + k > v->pop)
		gvec_prefault(v, esz);
	p = (char *)v->p + (size_t)v->n * esz;
	v->n += k;
	return memset(p, 0, (size_t)k * esz);
}

/* Room for one more element; returns its address (zeroed) or NULL. */
static inline void *gvec_push(struct gvec *v, size_t esz)
{
	return gvec_push_n(v, esz, 1);
}

/* Capacity down to the length (best effort: keeps the old block on
 * failure). */
static inline void gvec_shrink(struct gvec *v, size_t esz)
{
	void *p;

	if (v->cap == v->n || !v->n)
		return;
	p = realloc(v->p, (size_t)v->n * esz);
	if (p) {
		v->p = p;
		v->cap = v->n;
		if (v->pop > v->cap)
			v->pop = v->cap;
	}
}

static inline void gvec_free(struct gvec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = v->pop = 0;
}

#define GV(v, type) ((type *)(v).p)

#endif /* ARGUS_GVEC_H */
