/* SPDX-License-Identifier: BSD-2-Clause */
/* unwind_memo.c - see unwind_memo.h. */
#include "unwind_memo.h"

#include <stdlib.h>
#include <string.h>

#define UW_MEMO_SLOTS 1024      /* power of two */
/*
 * Two ways per set.  Direct-mapped, two stacks with one key but other
 * words thrashed their slot for ever: a forked ping-pong (perf bench sched
 * pipe) has parent and child blocked at the same ip and sp, on the same
 * maps layout, returning to two different call sites; each replaced the
 * other's entry and 60-95% of the waits missed, at random between runs
 * (whether the two shared a layout depended on when the child's maps were
 * read).  A set keeps both; a store replaces the way not used last.
 */
#define UW_MEMO_WAYS 2

struct uw_memo_entry {
	struct uw_memo_key key;
	bool used;
	uint16_t nips;
	struct uw_read_log log;
	uint64_t ips[UW_MEMO_FRAMES];
};

struct uw_memo {
	struct uw_memo_entry e[UW_MEMO_SLOTS];
	uint8_t mru[UW_MEMO_SLOTS / UW_MEMO_WAYS];   /* way used last, per set */
};

struct uw_memo *uw_memo_new(void)
{
	return calloc(1, sizeof(struct uw_memo));
}

void uw_memo_free(struct uw_memo *m)
{
	free(m);
}

/* The first way of k's set. */
static size_t set_of(const struct uw_memo_key *k)
{
	uint64_t h = k->session * 0x9e3779b97f4a7c15ull;

	h ^= (k->ip + (h << 6) + (h >> 2)) * 0xff51afd7ed558ccdull;
	h ^= (k->sp + (h << 6) + (h >> 2)) * 0xc4ceb9fe1a85ec53ull;
	h ^= k->bp + k->copy_len + ((uint64_t)k->max << 32);
	return (h ^ (h >> 29)) & (UW_MEMO_SLOTS / UW_MEMO_WAYS - 1);
}

static bool same_key(const struct uw_memo_key *a, const struct uw_memo_key *b)
{
	return a->session == b->session && a->ip == b->ip && a->sp == b->sp &&
	       a->bp == b->bp && a->copy_len == b->copy_len && a->max == b->max;
}

static bool words_match(const struct uw_memo_entry *e, const uint8_t *copy)
{
	/* the log's offsets were inside a copy of this very length */
	for (uint32_t i = 0; i < e->log.n; i++)
		if (!copy || memcmp(copy + e->log.off[i], &e->log.val[i], 8))
			return false;
	return true;
}

int uw_memo_find(struct uw_memo *m, const struct uw_memo_key *key,
		 const uint8_t *copy, uint64_t *ips)
{
	size_t set;

	if (!m)
		return 0;
	set = set_of(key);
	for (int w = 0; w < UW_MEMO_WAYS; w++) {
		const struct uw_memo_entry *e = &m->e[set * UW_MEMO_WAYS + w];

		if (!e->used || !same_key(&e->key, key) || !words_match(e, copy))
			continue;
		m->mru[set] = (uint8_t)w;
		memcpy(ips, e->ips, e->nips * sizeof(*ips));
		return e->nips;
	}
	return 0;
}

void uw_memo_store(struct uw_memo *m, const struct uw_memo_key *key,
		   const struct uw_read_log *log, const uint64_t *ips, int n)
{
	struct uw_memo_entry *e = NULL;
	size_t set;
	int w;

	if (!m || log->overflow || n < 1 || n > UW_MEMO_FRAMES)
		return;
	set = set_of(key);
	/* an empty way, else the one not used last */
	for (w = 0; w < UW_MEMO_WAYS && !e; w++)
		if (!m->e[set * UW_MEMO_WAYS + w].used)
			e = &m->e[set * UW_MEMO_WAYS + w];
	if (!e) {
		w = (m->mru[set] + 1) % UW_MEMO_WAYS;
		e = &m->e[set * UW_MEMO_WAYS + w];
	} else {
		w = (int)(e - &m->e[set * UW_MEMO_WAYS]);
	}
	m->mru[set] = (uint8_t)w;
	e->key = *key;
	e->used = true;
	e->nips = (uint16_t)n;
	e->log.n = log->n;
	e->log.overflow = false;
	memcpy(e->log.off, log->off, log->n * sizeof(log->off[0]));
	memcpy(e->log.val, log->val, log->n * sizeof(log->val[0]));
	memcpy(e->ips, ips, (size_t)n * sizeof(*ips));
}
