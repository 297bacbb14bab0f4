/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graph_locks.c - what the graph keeps of a file lock request: the
 * sys_enter event of flock/fcntl holds it packed in its val (graph_build.c
 * calls glock_enter_val(); the layout is argus_lock__pack's, argus_diag.h),
 * where the diagnosis reads it back (diag_locks.c).  Only the packing is
 * here: decoding the call and the layout are the lock API's.
 */
#include "argus_diag.h"
#include "graph_internal.h"

uint64_t glock_enter_val(int64_t nr, const uint64_t *args)
{
	struct argus_lock_req r;

	return argus_lock__decode(nr, args, &r) ? 0 : argus_lock__pack(&r);
}
