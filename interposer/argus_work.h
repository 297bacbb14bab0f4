/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_work.h - tell Argus about work your program hands between threads
 * through its own queues (thread pools, event loops, actor mailboxes).
 *
 * The kernel sees a worker that is already running take the next item
 * without sleeping, so without these calls the work lands in the wrong
 * segment of the causal graph, or in none.  Each call records one event
 * into the interposer's ring (docs/interposer.md); with no collector
 * running it does nothing but a load and a branch.
 *
 * Link with -largus-interpose (or LD_PRELOAD it).  An item is any pointer
 * that identifies one piece of work from enqueue to end; it may be reused
 * for a later item once the earlier one ended.
 *
 *     argus_work_enqueue(job);          // the thread that hands it over
 *     ...
 *     argus_work_begin(job);            // the worker, as it starts it
 *     run(job);
 *     argus_work_end(job);              // ... and when it is done
 *
 * `argus instrument --as enqueue|begin|end|boundary` calls the same
 * functions from a patched function's entry, with its first argument.
 */
#ifndef ARGUS_WORK_H
#define ARGUS_WORK_H

#ifdef __cplusplus
extern "C" {
#endif

/* item was handed to a queue by the calling thread */
void argus_work_enqueue(const void *item);
/* the calling thread starts running item (cuts its segment here) */
void argus_work_begin(const void *item);
/* the calling thread finished item (cuts its segment here) */
void argus_work_end(const void *item);
/* a boundary with no item, e.g. one turn of an event loop: cuts the
 * calling thread's segment; tag names the place (any pointer) */
void argus_work_boundary(const void *tag);

#ifdef __cplusplus
}
#endif

#endif /* ARGUS_WORK_H */
