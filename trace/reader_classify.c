/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_classify.c - what each chunk found by the scan is
 * (docs/trace-format.md, "Ring wrap and crashes"):
 *
 *   CH_GOOD         read it
 *   CH_OVERWRITTEN  a newer chunk covers part of it, or it is older than the
 *                   newest and runs off the ring, or it changed while we
 *                   looked (argusd is writing the ring we read)
 *   CH_INCOMPLETE   the newest chunk of a ring, cut by a crash
 *   CH_CORRUPT      any other bad chunk of a ring: skipped and counted, so
 *                   that one torn chunk does not cost the whole ring
 *
 * A snapshot has none of these excuses: its chunks lie back to back from
 * the first block, and any problem is a hard error naming its offset and
 * seq.  The same verdicts are given again when a chunk fails to load later
 * (trace_reader.c), hence reader_corrupt() and reader_skip_corrupt().
 */
#include <inttypes.h>
#include <stdio.h>

#include "reader_internal.h"

/* What is wrong with a candidate, or NULL; fills t->why.  *past_end is
 * set when the chunk runs past the data area (truncated). */
static const char *chunk_problem(struct argus_trace *t, struct chunk *c,
				 uint64_t area_end, bool *past_end)
{
	const struct argus_chunk_header *h = &c->h;
	uint64_t end = c->off + ARGUS_CHUNK_HEADER_SIZE + h->payload_len;
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;

	*past_end = false;
	if (h->version < ARGUS_FORMAT_VERSION_MIN || h->version > ARGUS_FORMAT_VERSION) {
		reader_why(t, "chunk format version %u, this build reads versions %u to %u",
			   h->version, ARGUS_FORMAT_VERSION_MIN, ARGUS_FORMAT_VERSION);
		return t->why;
	}
	if (end > area_end) {
		*past_end = true;
		reader_why(t, "needs %" PRIu64 " bytes, file has %" PRIu64, end,
			   (uint64_t)t->len);
		return t->why;
	}
	if (!argus_crc_ok(h->payload_crc, payload, h->payload_len))
		return "payload checksum mismatch";
	if ((h->flags & ~ARGUS_CHUNK_COMPRESSED) ||
	    (h->flags & ARGUS_CHUNK_COMPRESSED) == ARGUS_CHUNK_COMPRESSED ||
	    (h->version < 2 && (h->flags & ARGUS_CHUNK_ZSTD))) {
		reader_why(t, "unknown chunk flags 0x%x", h->flags);
		return t->why;
	}
	if (h->raw_len > ARGUS_MAX_RAW_LEN ||
	    (h->flags & ARGUS_CHUNK_COMPRESSED ?
	     !argus_raw_len_plausible(h->raw_len, h->payload_len) :
	     h->raw_len != h->payload_len)) {
		reader_why(t, "implausible inflated size %u for %u payload bytes",
			   h->raw_len, h->payload_len);
		return t->why;
	}
	if (h->nevents && h->min_ts > h->max_ts)
		return "min_ts > max_ts";
	return NULL;
}

/*
 * Has the chunk's header changed since the scan?  argusd may be writing the
 * ring we read: it zeroes a header before it touches any payload byte
 * behind it, so a payload that changed under us comes with a header that
 * changed too, and the chunk was overwritten, not corrupted.
 */
bool reader_chunk_changed(const struct argus_trace *t, const struct chunk *c)
{
	struct argus_chunk_header now;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(&now, t->base + c->off, sizeof(now));
	return memcmp(&now, &c->h, sizeof(now)) != 0;
}

int reader_cmp_seq_desc(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	if (x->h.seq != y->h.seq)
		return x->h.seq < y->h.seq ? 1 : -1;
	return x->off < y->off ? -1 : x->off > y->off;
}

int reader_corrupt(struct argus_trace *t, struct argus_error *err,
		   const struct chunk *c, const char *what)
{
	return argus_error__set(err, t->path, -EBADMSG, c->off,
				"corrupt chunk seq %" PRIu64 " at offset 0x%" PRIx64 ": %s",
				c->h.seq, c->off, what);
}

/* A ring chunk skipped as corrupt: counted, and the first one remembered
 * so that the tools can say where (argus_trace_stats.chunks_corrupt). */
void reader_skip_corrupt(struct argus_trace *t, struct chunk *c,
			 const char *what)
{
	c->state = CH_CORRUPT;
	if (!t->stats.chunks_corrupt++) {
		t->stats.corrupt_offset = c->off;
		snprintf(t->stats.corrupt_why, sizeof(t->stats.corrupt_why),
			 "chunk seq %" PRIu64 ": %s", c->h.seq, what);
	}
}

static int truncated(struct argus_trace *t, struct argus_error *err,
		     const struct chunk *c)
{
	return argus_error__set(err, t->path, -EBADMSG, c->off,
				"truncated at offset 0x%" PRIx64 ": chunk seq %" PRIu64
				" needs %" PRIu64 " bytes, file has %zu",
				c->off, c->h.seq,
				c->off + ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len,
				t->len);
}

/* Snapshot: chunks back to back from the first block, nothing else. */
int reader_classify_snapshot(struct argus_trace *t, struct chunk *cand,
			     size_t n, struct argus_error *err)
{
	uint64_t expect = ARGUS_FILE_HEADER_SIZE;
	size_t i = 0, k = 0;
	bool past;

	while (expect < t->len) {
		const char *bad;

		while (i < n && cand[i].off < expect)
			i++;
		if (i == n || cand[i].off != expect) {
			size_t z = (size_t)expect;

			/* zero padding at the end is harmless */
			while (z < t->len && !t->base[z])
				z++;
			if (z == t->len)
				break;
			if (t->len - expect < ARGUS_CHUNK_HEADER_SIZE)
				return argus_error__set(err, t->path, -EBADMSG, expect,
							"truncated at offset 0x%" PRIx64 ": %zu bytes after chunk %zu, a chunk header needs %u",
							expect, (size_t)(t->len - expect), k,
							ARGUS_CHUNK_HEADER_SIZE);
			return argus_error__set(err, t->path, -EBADMSG, expect,
						"corrupt at offset 0x%" PRIx64 ": no valid chunk header where chunk %zu should start",
						expect, k + 1);
		}
		bad = chunk_problem(t, &cand[i], t->len, &past);
		if (bad && past)
			return truncated(t, err, &cand[i]);
		if (bad)
			return reader_corrupt(t, err, &cand[i], bad);
		cand[i].state = CH_GOOD;
		expect = argus_align_up(cand[i].off + ARGUS_CHUNK_HEADER_SIZE +
					cand[i].h.payload_len, ARGUS_BLOCK_SIZE);
		k++;
		i++;
	}
	return 0;
}

/*
 * Ring: newest first.  A chunk covering a block that a newer chunk already
 * covers was (partly) overwritten.  A problem in the newest chunk means a
 * crash cut it; in an older chunk that runs off the end, or changed while
 * we looked, it was overwritten; anywhere else the chunk is skipped and
 * counted as corrupt (power loss), so that one torn chunk does not cost
 * the whole ring.
 */
int reader_classify_ring(struct argus_trace *t, struct chunk *cand, size_t n,
			 uint64_t area_end, struct argus_error *err)
{
	uint64_t nblocks = area_end / ARGUS_BLOCK_SIZE + 1;
	uint64_t *used = calloc((size_t)(nblocks + 63) / 64, sizeof(uint64_t));

	if (!used)
		return argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
	if (n > 1)
		qsort(cand, n, sizeof(*cand), reader_cmp_seq_desc);
	for (size_t i = 0; i < n; i++) {
		struct chunk *c = &cand[i];
		uint64_t end = c->off + ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len;
		uint64_t b0 = c->off / ARGUS_BLOCK_SIZE, b1, b;
		const char *bad;
		bool past;

		if (end > area_end)
			end = area_end;
		b1 = argus_align_up(end, ARGUS_BLOCK_SIZE) / ARGUS_BLOCK_SIZE;
		for (b = b0; b < b1; b++) {
			if (!(b % 64) && b + 64 <= b1 && !used[b / 64]) {
				b += 63;
				continue;
			}
			if (used[b / 64] & (1ull << (b % 64)))
				break;
		}
		if (b < b1) {
			c->state = CH_OVERWRITTEN;
			continue;
		}
		for (b = b0; b < b1; b++)
			used[b / 64] |= 1ull << (b % 64);
		bad = chunk_problem(t, c, area_end, &past);
		if (!bad)
			c->state = CH_GOOD;
		else if (i == 0)
			c->state = CH_INCOMPLETE;
		else if (past || reader_chunk_changed(t, c))
			c->state = CH_OVERWRITTEN;
		else
			reader_skip_corrupt(t, c, bad);
	}
	free(used);
	return 0;
}
