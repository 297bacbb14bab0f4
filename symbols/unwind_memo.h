/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_memo.h - remembered DWARF unwinds, reused only when provably the
 * same.
 *
 * libdwfl's unwind of a stack copy is a deterministic function of the
 * initial registers (ip, sp, bp), the modules (one Dwfl session = one maps
 * layout), how much stack was copied, and the stack words it reads.  So a
 * memo entry keeps its key (session, ip, sp, bp, copy length, max frames),
 * the (offset, value) pairs of the words the frames depend on (unwind.c's
 * keep_control_words: return addresses, saved frame and stack pointers,
 * zeros), and the frames it produced.  A later sample with the same key
 * whose copy holds the same values at those offsets unwinds to the same
 * frames: they are returned without running the unwinder.  A different
 * return address, frame pointer or saved stack pointer misses and
 * unwinds anew.
 *
 * Threads that block at the same place over and over (an event loop's
 * poll, a worker's futex) hit; an unwind that read more than
 * UW_MEMO_READS words is not remembered.  Two-way set-associative (a
 * store replaces the way used less recently).  Not thread-safe (the
 * unwinder's lock covers it).
 */
#ifndef ARGUS_UNWIND_MEMO_H
#define ARGUS_UNWIND_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UW_MEMO_READS 128
#define UW_MEMO_FRAMES 64

struct uw_memo_key {
	uint64_t session;       /* the Dwfl session's unique id */
	uint64_t ip, sp, bp;
	uint32_t copy_len;
	uint32_t max;           /* frames asked for */
};

/* The stack words one unwind read, in order. */
struct uw_read_log {
	uint32_t n;
	bool overflow;          /* more than UW_MEMO_READS: not memoizable */
	uint32_t off[UW_MEMO_READS];
	uint64_t val[UW_MEMO_READS];
};

struct uw_memo;

struct uw_memo *uw_memo_new(void);
void uw_memo_free(struct uw_memo *m);
/* The frames remembered for key if copy matches every word they read:
 * their count (>= 1), copied to ips; 0 on a miss. */
int uw_memo_find(struct uw_memo *m, const struct uw_memo_key *key,
		 const uint8_t *copy, uint64_t *ips);
/* Remember an unwind (ignored when log overflowed or n is out of range). */
void uw_memo_store(struct uw_memo *m, const struct uw_memo_key *key,
		   const struct uw_read_log *log, const uint64_t *ips, int n);

#endif /* ARGUS_UNWIND_MEMO_H */
