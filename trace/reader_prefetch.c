/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_prefetch.c - the next chunk's payload inflated on a second
 * thread while the current one is decoded.
 *
 * Inflating is a quarter of the graph build's CPU and the only step of
 * reading a chunk that needs nothing of the reader's tables: one thread
 * inflates chunk n + 1 into its own buffer while the caller decodes chunk
 * n, interns its strings and builds on its events.  Everything else
 * (sections, tables, the merge) stays on the caller's thread, so the
 * tables the caller reads are never written concurrently.
 *
 * Invariants:
 *   - at most one worker, joined before anything else reads pf.buf, pf.rc
 *     or pf.why (the join is the only synchronisation needed);
 *   - the worker reads the mapped payload and writes pf.buf and pf.why:
 *     nothing the caller's thread touches while it runs;
 *   - a chunk is taken only by the load it was started for: any other
 *     load, a rewind or a close joins the worker and drops its work, and
 *     the payload is inflated again on the caller's thread.
 * A live ring may overwrite the chunk while it is inflated ahead: the
 * load checks the header and, in a ring, the payload crc after it has
 * taken the payload (reader_chunk.c), so a chunk overwritten before or
 * during its inflate is skipped as it always was.
 *
 * The worker blocks every signal: SIGINT and SIGCHLD stay with the
 * caller's thread.  On one CPU, or for a chunk too small to pay for a
 * thread, nothing is started and the load inflates as before.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>

#include "reader_internal.h"

/* Below this many inflated bytes a chunk is inflated in place: a thread's
 * start and join (tens of µs) would cost about what it saves. */
#define PREFETCH_MIN_RAW (256u << 10)

/* This process may run on one CPU only (a machine of one, or taskset):
 * a second thread would then only take turns with the first. */
static bool one_cpu(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < 2;
}

static void *prefetch_main(void *arg)
{
	struct prefetch *pf = arg;

	pf->rc = reader_inflate(&pf->buf, pf->payload, &pf->c->h, pf->why,
				sizeof(pf->why));
	return NULL;
}

void reader_prefetch_start(struct argus_trace *t, const struct chunk *c)
{
	struct prefetch *pf = &t->pf;
	sigset_t all, old;
	int rc;

	if (pf->off || pf->running || !c || !(c->h.flags & ARGUS_CHUNK_COMPRESSED) ||
	    c->h.raw_len < PREFETCH_MIN_RAW)
		return;
	if (one_cpu()) {
		pf->off = true;
		return;
	}
	pf->c = c;
	pf->payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	pf->rc = 0;
	pf->why[0] = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&pf->th, NULL, prefetch_main, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pf->running = rc == 0;  /* no thread: the load inflates it itself */
}

bool reader_prefetch_take(struct argus_trace *t, const struct chunk *c, int *rc)
{
	struct prefetch *pf = &t->pf;
	struct inflate_buf tmp;

	if (!pf->running)
		return false;
	pthread_join(pf->th, NULL);
	pf->running = false;
	if (pf->c != c)
		return false;
	tmp = t->in;
	t->in = pf->buf;
	pf->buf = tmp;
	*rc = pf->rc;
	t->stats.inflated_ahead++;
	if (pf->rc == -EBADMSG)
		snprintf(t->why, sizeof(t->why), "%s", pf->why);
	return true;
}

void reader_prefetch_stop(struct argus_trace *t)
{
	if (t->pf.running) {
		pthread_join(t->pf.th, NULL);
		t->pf.running = false;
	}
}

void argus_trace__prefetch(struct argus_trace *t, bool on)
{
	if (!t)
		return;
	reader_prefetch_stop(t);
	t->pf.off = !on;
}
