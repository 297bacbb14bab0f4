/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_chunk.c - one chunk loaded for iteration (docs/trace-format.md,
 * "Reading"):
 *   1. the payload inflated (or taken from the prefetch thread, which
 *      then starts on the next), then its header and, in a ring, payload
 *      crc checked again (a live ring may have moved on since open);
 *   2. the payload split into sections, and every section validated;
 *   3. its strings and stacks interned, then its events decoded, merged on
 *      (ts, cpu), into t->evbuf (reader_merge.c);
 *   4. only then its tasks and maps merged into the global tables.
 * A chunk is returned whole or not at all: one whose events fail to decode
 * hands out none of them and merges no task or map.
 */
#include <inttypes.h>

#include "reader_internal.h"

/* Where each section of the chunk is; STREAMs go to t->cur[] instead. */
struct sections {
	struct span schema, strings, stacks, tasks, maps, cpus;
	bool has_schema, has_strings, has_stacks, has_tasks, has_maps, has_cpus;
};

/*
 * Inflate and validate chunk c, intern its strings/stacks, merge its
 * tasks/maps, decode its events into evbuf.  0 = ready, 1 = skip it (it
 * changed under us: overwritten while we read a live ring), -EBADMSG =
 * corrupt (reason in t->why), other < 0 = system error.
 */
int reader_load_chunk(struct argus_trace *t, struct chunk *c,
		      const struct chunk *next)
{
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	struct argus_chunk_header h;
	struct sections sec = { 0 };
	struct span s;
	uint64_t total = 0, nstreams = 0;
	int rc;

	t->nev = t->pos = 0;
	rc = reader_inflate_chunk(t, c);
	if (rc)
		return rc;      /* -EBADMSG: the caller asks whether it changed */
	/* A live ring may have moved on since open: header and payload crc
	 * again, after the inflate (which the prefetch thread may have done
	 * a while ago), so a chunk overwritten before or during it is
	 * skipped.  A snapshot is written once, and open checked every
	 * payload's crc already. */
	memcpy(&h, t->base + c->off, sizeof(h));
	if (memcmp(&h, &c->h, sizeof(h)) ||
	    (t->ring && !argus_crc_ok(h.payload_crc, payload, h.payload_len)))
		return 1;
	reader_prefetch_start(t, next);

	/* sections */
	s.p = t->in.raw;
	s.end = t->in.raw + h.raw_len;
	t->ncur = 0;
	while (s.p < s.end) {
		uint64_t tag, len;
		struct span body;
		struct span *dst = NULL;
		bool *has = NULL;

		if (get(&s, &tag) || get(&s, &len) || get_bytes(&s, len, &body.p))
			return reader_why(t, "bad section header at payload byte %zu",
					  (size_t)(s.p - t->in.raw));
		body.end = body.p + len;
		switch (tag) {
		case ARGUS_SEC_SCHEMA: dst = &sec.schema; has = &sec.has_schema; break;
		case ARGUS_SEC_STRINGS: dst = &sec.strings; has = &sec.has_strings; break;
		case ARGUS_SEC_STACKS: dst = &sec.stacks; has = &sec.has_stacks; break;
		case ARGUS_SEC_TASKS: dst = &sec.tasks; has = &sec.has_tasks; break;
		case ARGUS_SEC_MAPS: dst = &sec.maps; has = &sec.has_maps; break;
		case ARGUS_SEC_CPUS: dst = &sec.cpus; has = &sec.has_cpus; break;
		case ARGUS_SEC_STREAM:
			if (reader_grow(&t->cur, &t->cur_cap, (uint64_t)t->ncur + 1,
					sizeof(*t->cur)))
				return -ENOMEM;
			t->cur[t->ncur].s = body;
			t->ncur++;
			break;
		default:
			break;  /* a newer writer's section: skip it */
		}
		if (has) {
			if (*has)
				return reader_why(t, "section %" PRIu64 " appears twice", tag);
			*has = true;
			*dst = body;
		}
	}

	/* validate every section before anything goes into the global tables */
	t->nsch = 0;
	memset(t->sch_small, 0, sizeof(t->sch_small));
	t->nlstr = t->nlstk = 0;
	t->ncpus = 0;
	if ((sec.has_schema && (rc = reader_parse_schema(t, sec.schema))) ||
	    (sec.has_strings && (rc = reader_parse_strings(t, sec.strings, false))) ||
	    (sec.has_stacks && (rc = reader_parse_stacks(t, sec.stacks, false))) ||
	    (sec.has_tasks && (rc = reader_parse_tasks(t, sec.tasks, h.seq, false))) ||
	    (sec.has_maps && (rc = reader_parse_maps(t, sec.maps, false))) ||
	    (sec.has_cpus && (rc = reader_parse_cpus(t, sec.cpus, &h))))
		return rc;
	for (uint32_t i = 0; i < t->ncur; i++) {
		struct cursor *cu = &t->cur[i];
		struct cpu_ent *e;
		uint64_t cpu, n;

		if (get(&cu->s, &cpu) || get(&cu->s, &n))
			return reader_why(t, "bad STREAM header");
		e = reader_cpu_find(t, cpu);
		if (!e || e->seen || e->nevents != n)
			return reader_why(t, "STREAM of cpu %" PRIu64 " does not match the CPUS section",
					  cpu);
		e->seen = true;
		cu->cpu = (uint16_t)cpu;
		cu->ts = e->min_ts;
		cu->max_ts = e->max_ts;
		cu->left = n;
		/* an event takes at least 5 bytes: bound n before sizing */
		if (n > (uint64_t)(cu->s.end - cu->s.p) / 5)
			return reader_why(t, "cpu %u: %" PRIu64 " events cannot fit in the stream",
					  cu->cpu, n);
		total += n;
		nstreams++;
	}
	for (uint32_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].nevents && !t->cpus[i].seen)
			return reader_why(t, "cpu %u has events but no STREAM", t->cpus[i].cpu);
	if (total != h.nevents || nstreams != h.nstreams)
		return reader_why(t, "%" PRIu64 " events in %" PRIu64 " streams, header says %u in %u",
				  total, nstreams, h.nevents, h.nstreams);
	if (reader_grow(&t->evbuf, &t->evbuf_cap, total, sizeof(*t->evbuf)) ||
	    reader_grow(&t->heap, &t->heap_cap, t->ncur, sizeof(*t->heap)))
		return -ENOMEM;

	/* Strings and stacks go into the global tables before the events
	 * are decoded, so that each event gets its global ids as it is
	 * decoded (a separate pass over the chunk's events was 3% of the
	 * graph build).  If an event then turns out corrupt, the strings
	 * stay interned but no id of them is ever handed out: lookups are
	 * only defined for ids returned by __next(). */
	if ((sec.has_strings && (rc = reader_parse_strings(t, sec.strings, true))) ||
	    (sec.has_stacks && (rc = reader_parse_stacks(t, sec.stacks, true))) ||
	    (rc = reader_decode_merged(t)))
		goto fail;
	/* tasks and maps only from a chunk whose events are all good */
	if (!c->merged) {
		if ((sec.has_tasks && (rc = reader_parse_tasks(t, sec.tasks, h.seq, true))) ||
		    (sec.has_maps && (rc = reader_parse_maps(t, sec.maps, true))))
			goto fail;
		c->merged = true;
	}
	return 0;
fail:
	t->nev = 0;
	return rc;
}
