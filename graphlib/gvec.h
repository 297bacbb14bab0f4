/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gvec.h - a growable array of fixed-size elements, libargus's one
 * container: the graph's storage (graph_internal.h) and the diagnosis's
 * own lists (diag_*.c) both grow with it.  No graph in here.
 *
 * Invariants: p may be NULL while cap == 0; n <= cap <= res when res;
 * elements [0, pop) are known faulted in (big arrays are prefaulted a step
 * at a time with one madvise instead of a page fault per 4 KiB); ids are
 * uint32_t, so a vector never reaches ARGUS_NONE elements.
 *
 * Small vectors live in malloc'd memory and grow by realloc.  One that
 * grows past GVEC_MAP_MIN bytes moves once into a mapping of its own
 * (map_bytes, room for res elements) that reserves address space for the
 * most elements it can ever hold: it never moves again, and it is backed
 * by transparent huge pages.  Why: on this project's test machine (a VM
 * with shadow page tables) the first store to each fresh 4 KiB page costs
 * ~7 us, ~240x a second store, even when the kernel has populated it
 * (docs/benchmarks.md, session 24); that was a third of a 20 M-event
 * graph build.  A huge page pays the mapping once per 2 MiB (what is left
 * is the kernel clearing memory the host has not backed yet, which only
 * fewer bytes cut).  Huge pages on memory
 * that realloc moves were tried three times and lost: mremap to an
 * address not 2 MiB-aligned splits them into 4 KiB pages, each paying its
 * first store again.  The mapping is MAP_NORESERVE: address space only,
 * pages are populated as pushes reach them; where the kernel refuses it
 * (an address-space limit; vm.overcommit_memory=2 ignores MAP_NORESERVE
 * and would refuse it too) the vector stays on realloc.
 */
#ifndef ARGUS_GVEC_H
#define ARGUS_GVEC_H

#include <errno.h>
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
	uint32_t res;           /* 0: malloc'd; else the own mapping's room */
	uint64_t map_bytes;     /* the own mapping's size (p is its start) */
};

#define GVEC_POP_STEP (2u << 20)        /* bytes prefaulted at a time */
#define GVEC_HUGE (2u << 20)            /* a transparent huge page */
/* an own mapping's pages are populated this much at a time: one
 * MADV_POPULATE_WRITE per huge page cost 4-7x more than one per 8 MiB
 * here (the same 512 MiB in two paired runs: 0.78 s against 0.11 s,
 * 0.14 s against 0.03 s) */
#define GVEC_MAP_POP_STEP (8u << 20)
#define GVEC_MAP_MIN (8u << 20)         /* bytes: past this, an own mapping */

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

/* The next GVEC_POP_STEP bytes of the array (within its capacity) faulted
 * in with one madvise, not a page fault per 4 KiB as pushes reach them. */
static __attribute__((noinline, unused)) void gvec_prefault(struct gvec *v, size_t esz)
{
	const uintptr_t pg = 4096;
	uintptr_t base = (uintptr_t)v->p;
	uint64_t from = (uint64_t)v->pop * esz;
	uint64_t to = from + (v->res ? GVEC_MAP_POP_STEP : GVEC_POP_STEP);
	uintptr_t a, e;

	if (to > (uint64_t)v->cap * esz)
		to = (uint64_t)v->cap * esz;
	a = (base + from) & ~(pg - 1);
	e = (base + to) & ~(pg - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
	v->pop = (uint32_t)(to / esz);
}

/* Move v into a mapping of its own with room for the most elements a
 * vector holds (see the top), with cap elements usable.  Returns 0, or -1
 * with v unchanged (the caller goes on with realloc). */
static __attribute__((noinline, unused)) int gvec_map(struct gvec *v, size_t esz, uint64_t cap)
{
	uint64_t bytes = ((uint64_t)(ARGUS_NONE - 1) * esz + GVEC_HUGE - 1) & ~(uint64_t)(GVEC_HUGE - 1);
	char *r, *p;

	if (sizeof(void *) < 8)
		return -1;
	r = mmap(NULL, bytes + GVEC_HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return -1;
	/* huge pages need 2 MiB alignment: trim the slack at both ends */
	p = (char *)(((uintptr_t)r + GVEC_HUGE - 1) & ~(uintptr_t)(GVEC_HUGE - 1));
	if (p > r)
		munmap(r, (size_t)(p - r));
	munmap(p + bytes, (size_t)(r + GVEC_HUGE - p));
	madvise(p, bytes, MADV_HUGEPAGE);       /* best effort: THP may be off */
	v->pop = 0;
	v->res = (uint32_t)(bytes / esz < ARGUS_NONE - 1 ? bytes / esz : ARGUS_NONE - 1);
	v->map_bytes = bytes;
	v->cap = (uint32_t)cap;
	if (v->n) {
		char *old = v->p;

		v->p = p;       /* fault the copy's pages in as one madvise */
		while (v->pop < v->n)
			gvec_prefault(v, esz);
		memcpy(p, old, (size_t)v->n * esz);
		free(old);
	} else {
		free(v->p);
		v->p = p;
	}
	return 0;
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
		if (v->res && cap > v->res)
			cap = v->res;
		if (cap < (uint64_t)v->n + k)
			return NULL;
		if (v->res) {           /* in its own mapping: room, no move */
			v->cap = (uint32_t)cap;
			goto room;
		}
		if (cap * esz >= GVEC_MAP_MIN && !gvec_map(v, esz, cap))
			goto room;
		p = realloc(v->p, cap * esz);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = (uint32_t)cap;
		if ((uint64_t)cap * esz < GVEC_POP_STEP)
			v->pop = v->cap;        /* small: leave it to faults */
	}
room:
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

/* An empty vector with room for cap elements, for an array whose size is
 * known ahead: 0 or -ENOMEM.  Its pages are faulted in as pushes reach
 * them, as any vector's. */
static inline int gvec_reserve(struct gvec *v, size_t esz, uint64_t cap)
{
	if (v->p || cap >= ARGUS_NONE)
		return -EINVAL;
	if (cap * esz >= GVEC_MAP_MIN && !gvec_map(v, esz, cap))
		return 0;
	v->p = malloc(cap * esz);
	if (!v->p)
		return -ENOMEM;
	v->cap = (uint32_t)cap;
	if (cap * esz < GVEC_POP_STEP)
		v->pop = v->cap;
	return 0;
}

/* Capacity down to the length (best effort: keeps the old block on
 * failure). */
static inline void gvec_shrink(struct gvec *v, size_t esz)
{
	void *p;

	if (v->res) {   /* own mapping: give back the populated pages past n */
		uint64_t keep = ((uint64_t)v->n * esz + GVEC_HUGE - 1) & ~(uint64_t)(GVEC_HUGE - 1);
		uint64_t popb = (uint64_t)v->pop * esz;

		if (popb > keep) {
			madvise((char *)v->p + keep, popb - keep, MADV_DONTNEED);
			v->pop = (uint32_t)(keep / esz);        /* >= n */
		}
		v->cap = v->n;
		return;
	}
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
	if (v->res)
		munmap(v->p, v->map_bytes);
	else
		free(v->p);
	v->p = NULL;
	v->n = v->cap = v->pop = v->res = 0;
	v->map_bytes = 0;
}

#define GV(v, type) ((type *)(v).p)

#endif /* ARGUS_GVEC_H */
