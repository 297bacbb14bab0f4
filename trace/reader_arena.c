/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_arena.c - the arena behind the reader's global tables: bump
 * allocation in blocks that never move, so that the strings, stacks, tasks
 * and maps the reader hands out stay where they are until
 * argus_trace__close(), however much the tables grow.
 *
 * Blocks are 64 KiB; a bigger request gets a block of its own, put behind
 * the current one so that the current block's free space is not wasted.
 */
#include "reader_internal.h"

struct ablk {
	struct ablk *next;
	size_t used, cap;               /* bytes of data[] */
	max_align_t data[];
};

void *reader_arena_alloc(struct arena *a, size_t n)
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

void reader_arena_free(struct arena *a)
{
	while (a->head) {
		struct ablk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}
