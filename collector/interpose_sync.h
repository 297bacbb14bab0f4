/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interpose_sync.h - the field rules of the interposer's rwlock,
 * semaphore and condvar records (AIP_RW_* .. AIP_COND_SIGNAL), used by
 * argus_ip__parse (interpose_ring.c).  They are stored as AE_MUTEX_*
 * with a kind (enum ae_sync_kind) and a third field; docs/interposer.md.
 */
#ifndef ARGUS_INTERPOSE_SYNC_H
#define ARGUS_INTERPOSE_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "argus_events.h"

/* glibc's rwlock counts readers in 29 bits (__readers >> 3) */
#define ARGUS_IP_MAX_READERS (1u << 29)
/* waiters glibc counts: a semaphore's high 32 bits, a condvar's
 * __wrefs >> 3 (29 bits) */
#define ARGUS_IP_MAX_WAITERS (1u << 31)

static inline bool argus_ip__is_sync(uint16_t type)
{
	return type >= AIP_RW_RDWAIT && type <= AIP_COND_SIGNAL;
}

/* a wait whose `other` is a holder tid (checked like a mutex's) */
static inline bool argus_ip__sync_has_holder(uint16_t type)
{
	return type == AIP_RW_RDWAIT || type == AIP_RW_WRWAIT;
}

static inline uint32_t argus_ip__sync_kind(uint16_t type)
{
	switch (type) {
	case AIP_RW_RDWAIT: case AIP_RW_RDACQUIRED: case AIP_RW_RDUNLOCK:
		return AE_SYNC_RDLOCK;
	case AIP_RW_WRWAIT: case AIP_RW_WRACQUIRED: case AIP_RW_WRUNLOCK:
		return AE_SYNC_WRLOCK;
	case AIP_SEM_WAIT: case AIP_SEM_ACQUIRED: case AIP_SEM_POST:
		return AE_SYNC_SEM;
	default:
		return AE_SYNC_COND;
	}
}

/* `other` and `arg` as enum aip_type says, nothing else */
static inline bool argus_ip__sync_fields_ok(const struct aip_rec *r)
{
	switch (r->type) {
	case AIP_RW_RDWAIT:
	case AIP_RW_WRWAIT:             /* holder checked by the caller */
		return r->arg < ARGUS_IP_MAX_READERS;
	case AIP_RW_RDACQUIRED:
	case AIP_RW_WRACQUIRED:
	case AIP_SEM_ACQUIRED:
		return r->other < 4096 && !r->arg;
	case AIP_RW_RDUNLOCK:
	case AIP_RW_WRUNLOCK:
	case AIP_SEM_WAIT:
		return !r->other && !r->arg;
	case AIP_SEM_POST:
		return r->other && r->other < ARGUS_IP_MAX_WAITERS && !r->arg;
	case AIP_COND_WAIT:
		return !r->other && r->arg;
	case AIP_COND_RETURN:
		return r->other < 4096 && r->arg;
	case AIP_COND_SIGNAL:
		return r->other && r->other < ARGUS_IP_MAX_WAITERS && r->arg <= 1;
	}
	return false;
}

#endif /* ARGUS_INTERPOSE_SYNC_H */
