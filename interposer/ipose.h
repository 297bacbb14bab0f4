/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ipose.h - what the interposer's files share: the ring and its writer
 * (ring.c).  Internal to libargus-interpose.so; the record layout is in
 * kernel-patch/argus_events.h (struct aip_rec), documented in
 * docs/interposer.md.
 */
#ifndef ARGUS_IPOSE_H
#define ARGUS_IPOSE_H

#include <stdint.h>

#include "argus_events.h"

#define EXPORT __attribute__((visibility("default")))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The mapped ring, NULL while recording is off (no collector, or
 * ARGUS_INTERPOSE_OFF): wrappers test it first and call straight through. */
#define HIDDEN __attribute__((visibility("hidden")))

/* hidden: the wrappers load it PC-relative, not through the GOT */
extern HIDDEN struct aip_ring_hdr *aip_ring;

/* Write one record: now (CLOCK_MONOTONIC), the calling thread, and the
 * type's fields (enum aip_type says what addr/other/arg mean).  No-op
 * while recording is off. */
HIDDEN void aip_put(uint16_t type, const void *addr, uint32_t other, uint64_t arg);

/* One work-item record (work.c): type AIP_WORK_ENQUEUE/BEGIN/END, the
 * item (NULL: nothing recorded), enum aip_work_kind, the callback (NULL
 * unknown).  No-op while recording is off. */
HIDDEN void aip_work(uint16_t type, const void *item, uint32_t kind, const void *fn);

#endif /* ARGUS_IPOSE_H */
