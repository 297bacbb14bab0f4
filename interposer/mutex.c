/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mutex.c - pthread mutex contention (docs/interposer.md "What is
 * recorded").
 *
 * What is recorded (never the uncontended path):
 *   - pthread_mutex_lock/timedlock found the mutex busy: AIP_MUTEX_WAIT
 *     with the holder's tid (glibc keeps it in __data.__owner), then
 *     AIP_MUTEX_ACQUIRED when the real lock returns;
 *   - pthread_mutex_unlock of a mutex that had waiters: AIP_MUTEX_WAKE.
 *
 * The cost rule: an uncontended lock+unlock pair stays within a few ns of
 * bare glibc.  lock is the real trylock (the same cmpxchg as the real
 * lock's fast path) and only EBUSY goes the slow way; unlock reads the
 * lock word before the real unlock, one load of a line the thread owns.
 *
 * "Had waiters", glibc's lock word (nptl/pthread_mutex_unlock.c,
 * lowlevellock.h): for the normal, recursive, errorcheck and adaptive
 * kinds __lock is 0 free, 1 locked, 2 locked with (possible) waiters;
 * for robust and priority-inheritance mutexes it is the owner's tid with
 * FUTEX_WAITERS (bit 31) set when someone waits.  Priority-protect
 * mutexes keep the ceiling in it: not recorded.  A 2 can also be left by
 * a waiter that has since given up (timedlock timed out): the record then
 * names an unlock that woke nobody, which costs a futex wake in glibc too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "ipose.h"

/* glibc's mutex kind bits (nptl/pthreadP.h) */
#define KIND_ROBUST 16
#define KIND_PI 32
#define KIND_PP 64
#define FUTEX_WAITERS_BIT 0x80000000u

typedef int (*lock_fn)(pthread_mutex_t *);
typedef int (*timedlock_fn)(pthread_mutex_t *, const struct timespec *);

static lock_fn real_lock, real_trylock, real_unlock;
static timedlock_fn real_timedlock;

static void resolve(void)
{
	real_lock = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_trylock = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real_unlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	real_timedlock = (timedlock_fn)dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
}

__attribute__((constructor)) static void mutex_init(void)
{
	resolve();
}

/* 1 when the unlock about to happen has (or had) waiters to wake. */
static inline int had_waiters(const pthread_mutex_t *m)
{
	int kind = m->__data.__kind;
	unsigned lock = (unsigned)m->__data.__lock;

	if (kind & KIND_PP)
		return 0;
	if (kind & (KIND_ROBUST | KIND_PI))
		return (lock & FUTEX_WAITERS_BIT) != 0;
	return lock == 2;
}

/* The busy path of lock/timedlock: record the wait, wait, record its end. */
static int slow_lock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int owner = m->__data.__owner, r;

	aip_put(AIP_MUTEX_WAIT, m, owner > 0 ? (uint32_t)owner : 0, 0);
	r = abstime ? real_timedlock(m, abstime) : real_lock(m);
	aip_put(AIP_MUTEX_ACQUIRED, m, (uint32_t)r, 0);
	return r;
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	if (UNLIKELY(!real_trylock))
		resolve();
	if (!aip_ring)
		return real_lock(m);
	r = real_trylock(m);
	if (r != EBUSY)
		return r;
	return slow_lock(m, NULL);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int r;

	if (UNLIKELY(!real_trylock))
		resolve();
	if (!aip_ring)
		return real_timedlock(m, abstime);
	r = real_trylock(m);
	if (r != EBUSY)
		return r;
	return slow_lock(m, abstime);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int w, r;

	if (UNLIKELY(!real_unlock))
		resolve();
	if (!aip_ring)
		return real_unlock(m);
	w = had_waiters(m);
	r = real_unlock(m);
	if (UNLIKELY(w) && !r)
		aip_put(AIP_MUTEX_WAKE, m, 0, 0);
	return r;
}
