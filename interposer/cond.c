/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cond.c - condition variables (docs/interposer.md "Condition variables").
 *
 *   - pthread_cond_wait/timedwait: AIP_COND_WAIT (the condvar, the mutex)
 *     before the real wait and AIP_COND_RETURN (0 or the error) after it.
 *     Every call: a condvar wait has no uncontended path, it always
 *     sleeps until a signal, a timeout or a spurious wake-up;
 *   - pthread_cond_signal/broadcast when glibc counted waiters:
 *     AIP_COND_SIGNAL with the count (arg 1 for a broadcast).  glibc 2.36
 *     (nptl/pthread_cond_signal.c): __wrefs >> 3 is the number of
 *     waiters, and signal/broadcast return at once when it is 0.  The
 *     count is read just before the real call, which reads it again:
 *     the same decision except for a waiter that arrives in between.
 *     A counted waiter may already be returning (timed out, or consumed a
 *     signal that raced ahead): the record then names a signal that
 *     woke nobody, exactly when glibc does the same work for nobody.
 *
 * Versions: glibc exports pthread_cond_*@@GLIBC_2.3.2 (the condvar of
 * NPTL, the default every program links today) and a compat
 * pthread_cond_*@GLIBC_2.2.5 for binaries of the old LinuxThreads-era
 * layout, whose pthread_cond_t holds a pointer to a new condvar allocated
 * on first use.  These wrappers are exported as @@GLIBC_2.3.2 only
 * (interposer/interpose.map), so an old binary's references skip them and
 * reach glibc's compat functions (which call the new ones inside glibc,
 * not through the PLT: they are not recorded), and the real functions are
 * looked up with dlvsym(..., "GLIBC_2.3.2"): dlsym would return whatever
 * version RTLD_NEXT's object calls default, which is not a promise.
 * pthread_cond_clockwait (GLIBC_2.30, one version) is not wrapped.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "ipose.h"

#define COND_VERSION "GLIBC_2.3.2"

typedef int (*cond_fn)(pthread_cond_t *);
typedef int (*wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

static cond_fn real_signal, real_broadcast;
static wait_fn real_wait;
static timedwait_fn real_timedwait;

static void resolve(void)
{
	real_signal = (cond_fn)dlvsym(RTLD_NEXT, "pthread_cond_signal", COND_VERSION);
	real_broadcast = (cond_fn)dlvsym(RTLD_NEXT, "pthread_cond_broadcast", COND_VERSION);
	real_wait = (wait_fn)dlvsym(RTLD_NEXT, "pthread_cond_wait", COND_VERSION);
	real_timedwait = (timedwait_fn)dlvsym(RTLD_NEXT, "pthread_cond_timedwait", COND_VERSION);
}

__attribute__((constructor)) static void cond_init(void)
{
	resolve();
}

static inline uint32_t waiters(const pthread_cond_t *c)
{
	return __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) >> 3;
}

/* signal (all 0) or broadcast (all 1) through *real, recorded when it
 * had waiters to wake and worked. */
static inline int wake_waiters(cond_fn *real, pthread_cond_t *c, uint64_t all)
{
	uint32_t n;
	int r;

	if (UNLIKELY(!*real))
		resolve();
	if (!aip_ring)
		return (*real)(c);
	n = waiters(c);
	r = (*real)(c);
	if (n && !r)
		aip_put(AIP_COND_SIGNAL, c, n, all);
	return r;
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	return wake_waiters(&real_signal, c, 0);
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	return wake_waiters(&real_broadcast, c, 1);
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	if (UNLIKELY(!real_wait))
		resolve();
	if (!aip_ring)
		return real_wait(c, m);
	aip_put(AIP_COND_WAIT, c, 0, (uint64_t)(uintptr_t)m);
	r = real_wait(c, m);
	aip_put(AIP_COND_RETURN, c, (uint32_t)r, (uint64_t)(uintptr_t)m);
	return r;
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime)
{
	int r;

	if (UNLIKELY(!real_timedwait))
		resolve();
	if (!aip_ring)
		return real_timedwait(c, m, abstime);
	aip_put(AIP_COND_WAIT, c, 0, (uint64_t)(uintptr_t)m);
	r = real_timedwait(c, m, abstime);
	aip_put(AIP_COND_RETURN, c, (uint32_t)r, (uint64_t)(uintptr_t)m);
	return r;
}
