/* batch_unpack.c - see batch_unpack.h.  Layout (argus_events.h): struct
 * ae_batch, then `count` records, each at a multiple of 8 bytes from the
 * end of struct ae_batch, each h.size exact. */
#include "batch_unpack.h"

#include <stdint.h>

#include "argus_events.h"

int argus_batch_each(const void *rec, size_t size, argus_batch_cb cb, void *ctx)
{
	const struct ae_batch *b = rec;
	const uint8_t *at, *end;
	size_t body;
	int rc = 0;

	if (size < sizeof(*b) || b->h.type != AE_BATCH)
		return cb(ctx, rec, size);
	body = size - sizeof(*b);
	at = (const uint8_t *)(b + 1);
	end = at + (b->len < body ? b->len : body);
	for (uint32_t i = 0; i < b->count; i++) {
		const struct ae_hdr *h = (const void *)at;
		size_t left = (size_t)(end - at), step;
		int e;

		if (left < sizeof(*h) || h->size < sizeof(*h) || h->size > left)
			break;
		e = cb(ctx, at, h->size);
		if (e < 0 && !rc)
			rc = e;
		step = ((size_t)h->size + 7) & ~(size_t)7;
		if (step >= left)
			break;
		at += step;
	}
	return rc;
}
