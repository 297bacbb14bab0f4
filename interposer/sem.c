/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sem.c - POSIX semaphores (docs/interposer.md "Semaphores").
 *
 * A semaphore has no holder: what the record adds to the kernel's futex
 * edge is which sem_t a thread waited for and which post let it go, also
 * when the waiter never slept in the kernel (it found the value raised
 * while glibc spun) or when the futex wake went to another waiter.
 *
 *   - sem_wait/timedwait/clockwait: the real sem_trywait first; only
 *     EAGAIN (it would block) records AIP_SEM_WAIT, then the real wait,
 *     then AIP_SEM_ACQUIRED (0 or its errno);
 *   - sem_post when glibc counted waiters: AIP_SEM_POST with the count.
 *
 * glibc 2.36, 64-bit (nptl/sem_waitcommon.c, sem_post.c): struct new_sem
 * starts with a 64-bit `data`, the value in its low 32 bits and the
 * number of waiters (SEM_NWAITERS_SHIFT 32) in the high ones; sem_post
 * adds 1 and calls futex_wake exactly when the waiters field was
 * non-zero.  The interposer reads `data` just before the real post, so
 * it records the same decision except for a waiter that registers or
 * leaves between that load and glibc's atomic add.  A waiter registered
 * in `data` may not be asleep yet (it re-checks the value first): the
 * post is then recorded, as glibc's wake is issued, for nobody asleep.
 *
 * sem_wait etc. have two versions on x86_64 (GLIBC_2.34 default and the
 * GLIBC_2.2.5 compat alias of the same code); dlsym(RTLD_NEXT) gives the
 * default, which is the same function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "ipose.h"

#define SEM_NWAITERS_SHIFT 32

typedef int (*sem_fn)(sem_t *);
typedef int (*sem_timed_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clock_fn)(sem_t *, clockid_t, const struct timespec *);

static sem_fn real_wait, real_trywait, real_post;
static sem_timed_fn real_timedwait;
static sem_clock_fn real_clockwait;

static void resolve(void)
{
	real_wait = (sem_fn)dlsym(RTLD_NEXT, "sem_wait");
	real_trywait = (sem_fn)dlsym(RTLD_NEXT, "sem_trywait");
	real_post = (sem_fn)dlsym(RTLD_NEXT, "sem_post");
	real_timedwait = (sem_timed_fn)dlsym(RTLD_NEXT, "sem_timedwait");
	real_clockwait = (sem_clock_fn)dlsym(RTLD_NEXT, "sem_clockwait");
}

__attribute__((constructor)) static void sem_init_fns(void)
{
	resolve();
}

/* -1: trywait took the semaphore (no wait, nothing recorded); 0: trywait
 * failed for another reason (EINVAL...), left to the real call to report;
 * 1: it would block (EAGAIN), the wait is recorded.  errno is kept. */
static int would_block(sem_t *s)
{
	int e = errno;

	if (real_trywait(s) == 0)
		return -1;
	if (errno != EAGAIN) {
		errno = e;
		return 0;
	}
	errno = e;
	aip_put(AIP_SEM_WAIT, s, 0, 0);
	return 1;
}

static int done(sem_t *s, int r)
{
	aip_put(AIP_SEM_ACQUIRED, s, r ? (uint32_t)errno : 0, 0);
	return r;
}

EXPORT int sem_wait(sem_t *s)
{
	int b;

	if (UNLIKELY(!real_trywait))
		resolve();
	if (!aip_ring || !(b = would_block(s)))
		return real_wait(s);
	return b < 0 ? 0 : done(s, real_wait(s));
}

EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	int b;

	if (UNLIKELY(!real_trywait))
		resolve();
	if (!aip_ring || !(b = would_block(s)))
		return real_timedwait(s, abstime);
	return b < 0 ? 0 : done(s, real_timedwait(s, abstime));
}

EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
	int b;

	if (UNLIKELY(!real_trywait))
		resolve();
	if (!aip_ring || !(b = would_block(s)))
		return real_clockwait(s, clock, abstime);
	return b < 0 ? 0 : done(s, real_clockwait(s, clock, abstime));
}

EXPORT int sem_post(sem_t *s)
{
	uint64_t d;
	uint32_t nw;
	int r;

	if (UNLIKELY(!real_post))
		resolve();
	if (!aip_ring)
		return real_post(s);
	d = __atomic_load_n((const uint64_t *)(const void *)s, __ATOMIC_RELAXED);
	nw = (uint32_t)(d >> SEM_NWAITERS_SHIFT);
	r = real_post(s);
	if (UNLIKELY(nw) && !r)
		aip_put(AIP_SEM_POST, s, nw, 0);
	return r;
}
