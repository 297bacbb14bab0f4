/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_ret.c - the return half of `argus instrument --at-return KIND`
 * (interposer/live/live_patch.c writes the trampolines that call it;
 * docs/interposer.md, "Return hooks").
 *
 * At the patched function's entry the trampoline calls
 * argus_live_ret_enter(item, slot, stub, hdr, hook): slot is where the
 * return address sits on the stack (the function has not run yet).  It
 * is saved on this thread's shadow stack and replaced by stub, a few
 * instructions in the trampoline's code page.  When the function
 * returns, it returns into stub, which keeps the return registers (rax,
 * rdx, xmm0, xmm1) and calls argus_live_ret_leave(sp), sp being the stack
 * pointer after the return: the frame whose slot is sp - 8 is found from
 * the top of the shadow stack and taken out, its hook (an argus_work_*
 * function) called with its item, and its saved return address given
 * back for stub to jump to.  Frames above it stay: they may be calls left
 * by longjmp, which never return, but they may as well be live calls on
 * another stack of the same thread (swapcontext coroutines), whose return
 * would find nothing and abort the program if they were dropped.  So a
 * call left by longjmp keeps its item open and stays counted in flight
 * (and takes one of the thread's frames) for good.
 *
 * hdr is the trampoline's header page (argus_live_tramp_hdr): its
 * inflight counter is the number of calls whose return goes through the
 * stub, and --remove waits for 0 before unmapping the page.
 *
 * A call beyond ARGUS_LIVE_RET_DEPTH nested hooked calls on one thread is
 * not hooked at its return (its return address is left alone).  Nothing
 * here allocates or locks: it runs inside whatever function was patched.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipose.h"
#include "live/argus_live.h"

struct ret_frame {
	uint64_t orig;          /* the return address the function had */
	uint64_t slot;          /* where it was on the stack */
	uint64_t item;          /* the function's first argument */
	uint64_t hdr;           /* the trampoline's header page */
	uint64_t hook;          /* void hook(const void *item) */
};

static __thread struct ret_frame ret_stack[ARGUS_LIVE_RET_DEPTH];
static __thread uint32_t ret_n;

static uint64_t *inflight(uint64_t hdr)
{
	return (uint64_t *)(uintptr_t)(hdr + offsetof(struct argus_live_tramp_hdr, inflight));
}

EXPORT void argus_live_ret_enter(uint64_t item, uint64_t *slot, uint64_t stub, uint64_t hdr,
				 uint64_t hook)
{
	if (ret_n >= ARGUS_LIVE_RET_DEPTH)
		return;         /* this call returns the usual way, unhooked */
	ret_stack[ret_n] = (struct ret_frame){ *slot, (uint64_t)(uintptr_t)slot, item, hdr, hook };
	ret_n++;
	__atomic_fetch_add(inflight(hdr), 1, __ATOMIC_RELAXED);
	*slot = stub;
}

EXPORT uint64_t argus_live_ret_leave(uint64_t sp)
{
	static const char lost[] = "argus: a hooked return has no saved return address "
				   "(argus instrument --at-return); aborting\n";
	uint64_t slot = sp - 8;
	struct ret_frame f;
	uint32_t i = ret_n;

	while (i > 0 && ret_stack[i - 1].slot != slot)
		i--;
	if (!i) {
		/* cannot happen unless the stack was corrupted: there is no
		 * address left to return to */
		if (write(2, lost, sizeof(lost) - 1) < 0)
			abort();
		abort();
	}
	f = ret_stack[--i];
	/* take it out, keep what is above it (see the top) */
	for (; i + 1 < ret_n; i++)
		ret_stack[i] = ret_stack[i + 1];
	ret_n--;
	((void (*)(const void *))(uintptr_t)f.hook)((const void *)(uintptr_t)f.item);
	__atomic_fetch_sub(inflight(f.hdr), 1, __ATOMIC_RELAXED);
	return f.orig;
}
