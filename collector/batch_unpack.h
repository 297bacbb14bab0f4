/* batch_unpack.h - the records of an AE_BATCH (kernel-patch/argus_events.h),
 * one by one.  Used by the loader (bpf_probe.c) on every ring record. */
#ifndef ARGUS_BATCH_UNPACK_H
#define ARGUS_BATCH_UNPACK_H
#include <stddef.h>

typedef int (*argus_batch_cb)(void *ctx, const void *rec, size_t size);

/* rec is one ring record of size bytes.  Not a batch: cb(rec) once.  A
 * batch: cb on each of its records, in order; it stops at the first record
 * whose header does not fit what is left (the batch is our own programs',
 * so that means a bug, not an attack, but the bytes are never read past
 * size).  A cb refusal (< 0) does not stop the rest: the ring has already
 * moved past the whole batch, so a record not handed over now is gone.
 * Returns the first refusal, else 0. */
int argus_batch_each(const void *rec, size_t size, argus_batch_cb cb, void *ctx);
#endif
