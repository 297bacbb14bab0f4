/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rwlock.c - pthread rwlock contention (docs/interposer.md "rwlocks").
 *
 * Like mutex.c, never the uncontended path: rdlock/wrlock first try the
 * real tryrdlock/trywrlock, and only EBUSY goes the slow way (wait record,
 * the real lock, acquired record).  A wait names the writer that holds
 * the lock when there is one: glibc keeps its tid in __data.__cur_writer
 * (0 while readers hold it: they are many and unnamed; the record carries
 * how many readers were registered instead).
 *
 * "Had waiters" at unlock, glibc 2.36 (nptl/pthread_rwlock_common.c).
 * __readers = readers << 3 | RWAITING 4 | WRLOCKED 2 | WRPHASE 1; waiters
 * sleep on three futex words, each with FUTEX_USED (2) set by a sleeper:
 *   - readers in a write phase: they registered in __readers first, then
 *     sleep on __wrphase_futex (value 1|FUTEX_USED);
 *   - a writer waiting for the last reader: __wrphase_futex (FUTEX_USED);
 *   - a writer waiting for another writer: __writers_futex (1|FUTEX_USED);
 *   - readers of a PREFER_WRITER_NONRECURSIVE lock: __readers, RWAITING.
 * So a write unlock had waiters when __writers_futex has FUTEX_USED or
 * readers are registered (readers > 0 during a write phase are waiters),
 * and a read unlock had waiters when it is the last reader and either a
 * writer waits for the hand-over (WRLOCKED and __wrphase_futex has
 * FUTEX_USED) or RWAITING is set.  Not exact: FUTEX_USED is shared by all
 * writers that ever slept on __writers_futex until the futex is reset, so
 * a write unlock after a contended one can be recorded with nobody left
 * (glibc pays its futex wake too); registered readers that are still
 * spinning towards their futex wait count as waiters; and the lock word
 * is read just before the real unlock, so a waiter that arrives between
 * that read and the unlock is missed (it finds the lock free anyway).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipose.h"

#define RW_WRPHASE 1u
#define RW_WRLOCKED 2u
#define RW_RWAITING 4u
#define RW_READER_SHIFT 3
#define RW_FUTEX_USED 2u

typedef int (*rw_fn)(pthread_rwlock_t *);
typedef int (*rw_timed_fn)(pthread_rwlock_t *, const struct timespec *);

static rw_fn real_rdlock, real_wrlock, real_tryrdlock, real_trywrlock, real_unlock;
static rw_timed_fn real_timedrdlock, real_timedwrlock;

static void resolve(void)
{
	real_rdlock = (rw_fn)dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	real_wrlock = (rw_fn)dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	real_tryrdlock = (rw_fn)dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
	real_trywrlock = (rw_fn)dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
	real_timedrdlock = (rw_timed_fn)dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
	real_timedwrlock = (rw_timed_fn)dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
	real_unlock = (rw_fn)dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
}

__attribute__((constructor)) static void rwlock_init(void)
{
	resolve();
}

static inline unsigned ld(const unsigned *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The busy path: record the wait (writer holder, readers registered),
 * wait, record its end. */
static int slow_lock(pthread_rwlock_t *l, int wr, const struct timespec *abstime)
{
	int writer = __atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED), r;
	unsigned readers = ld(&l->__data.__readers) >> RW_READER_SHIFT;

	aip_put(wr ? AIP_RW_WRWAIT : AIP_RW_RDWAIT, l, writer > 0 ? (uint32_t)writer : 0,
		readers);
	if (wr)
		r = abstime ? real_timedwrlock(l, abstime) : real_wrlock(l);
	else
		r = abstime ? real_timedrdlock(l, abstime) : real_rdlock(l);
	aip_put(wr ? AIP_RW_WRACQUIRED : AIP_RW_RDACQUIRED, l, (uint32_t)r, 0);
	return r;
}

static inline int lock(pthread_rwlock_t *l, int wr, const struct timespec *abstime)
{
	int r;

	if (UNLIKELY(!real_unlock))
		resolve();
	if (!aip_ring) {
		if (wr)
			return abstime ? real_timedwrlock(l, abstime) : real_wrlock(l);
		return abstime ? real_timedrdlock(l, abstime) : real_rdlock(l);
	}
	r = wr ? real_trywrlock(l) : real_tryrdlock(l);
	if (r != EBUSY)
		return r;
	return slow_lock(l, wr, abstime);
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return lock(l, 0, NULL);
}

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return lock(l, 1, NULL);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	return lock(l, 0, abstime);
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	return lock(l, 1, abstime);
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	unsigned r, type = 0;
	int rc;

	if (UNLIKELY(!real_unlock))
		resolve();
	if (!aip_ring)
		return real_unlock(l);
	r = ld(&l->__data.__readers);
	if (r & RW_WRPHASE) {
		/* a write phase: only its writer can be unlocking (readers
		 * registered now are waiters, not holders) */
		if ((ld(&l->__data.__writers_futex) & RW_FUTEX_USED) || (r >> RW_READER_SHIFT))
			type = AIP_RW_WRUNLOCK;
	} else if ((r >> RW_READER_SHIFT) == 1 &&
		   (((r & RW_WRLOCKED) && (ld(&l->__data.__wrphase_futex) & RW_FUTEX_USED)) ||
		    (r & RW_RWAITING))) {
		type = AIP_RW_RDUNLOCK;
	}
	rc = real_unlock(l);
	if (UNLIKELY(type) && !rc)
		aip_put((uint16_t)type, l, 0, 0);
	return rc;
}
