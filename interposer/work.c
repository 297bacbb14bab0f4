/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * work.c - the public work-item API (argus_work.h) and the one helper the
 * GLib wrappers (glib.c) share with it.
 *
 * Each call is one record (AIP_WORK_*, docs/interposer.md): the item's
 * address, who made it (enum aip_work_kind) and, where the caller has
 * one, the callback that runs it, so that `argus dump` and the diagnosis
 * can name it.  With recording off it is a load and a branch.
 */
#include <stddef.h>
#include <stdint.h>

#include "argus_work.h"
#include "ipose.h"

void aip_work(uint16_t type, const void *item, uint32_t kind, const void *fn)
{
	/* argusd rejects an item 0 (bad_field): a NULL item is not recorded */
	if (!aip_ring || !item)
		return;
	aip_put(type, item, kind, (uint64_t)(uintptr_t)fn);
}

EXPORT void argus_work_enqueue(const void *item)
{
	aip_work(AIP_WORK_ENQUEUE, item, AIP_WORK_API, NULL);
}

EXPORT void argus_work_begin(const void *item)
{
	aip_work(AIP_WORK_BEGIN, item, AIP_WORK_API, NULL);
}

EXPORT void argus_work_end(const void *item)
{
	aip_work(AIP_WORK_END, item, AIP_WORK_API, NULL);
}

EXPORT void argus_work_boundary(const void *tag)
{
	if (!aip_ring)
		return;
	/* no tag: the caller's address names the place */
	aip_put(AIP_WORK_BOUNDARY, tag ? tag : __builtin_return_address(0), AIP_WORK_API, 0);
}
