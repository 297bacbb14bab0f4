/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_sections.c - the parser of each section of a chunk's payload but
 * STREAM (reader_merge.c decodes those): SCHEMA, STRINGS, STACKS, TASKS,
 * MAPS, CPUS (docs/trace-format.md, "Sections").
 *
 * reader_load_chunk() calls each twice: once to validate (intern/merge
 * false: nothing goes into the global tables), then, once every section
 * and event is known good, to fill the chunk's local -> global id maps
 * (lstr, lstk) and merge its tasks and maps.  SCHEMA and CPUS fill the
 * per-chunk t->sch and t->cpus on their one pass.
 */
#include <inttypes.h>

#include "reader_internal.h"

int reader_parse_schema(struct argus_trace *t, struct span s)
{
	uint64_t n, v;
	const uint8_t *name;

	t->nsch = 0;
	memset(t->sch_small, 0, sizeof(t->sch_small));
	if (get_count(&s, &n, 4))
		return reader_why(t, "bad SCHEMA count");
	if (reader_grow(&t->sch, &t->sch_cap, n, sizeof(*t->sch)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct schema_ent e = { 0 };
		uint64_t type, nf, refs, nlen;

		if (get_max(&s, &type, UINT16_MAX) || schema_find(t, type) ||
		    get_max(&s, &nf, ARGUS_SCHEMA_MAX_FIELDS))
			return reader_why(t, "bad SCHEMA entry %" PRIu64, i);
		e.type = (uint16_t)type;
		e.nfields = (uint8_t)nf;
		for (uint64_t f = 0; f < nf; f++) {
			if (get_max(&s, &v, ARGUS_ENC_S))
				return reader_why(t, "bad field encoding in SCHEMA entry for type %" PRIu64, type);
			if (v == ARGUS_ENC_S)
				e.smask |= 1ull << f;
		}
		if (get(&s, &refs) || get(&s, &nlen) || get_bytes(&s, nlen, &name))
			return reader_why(t, "bad SCHEMA entry for type %" PRIu64, type);
		/* unknown ref flags would mean unknown trailing varints */
		if (refs & ~(uint64_t)(ARGUS_SCHEMA_STACK | ARGUS_SCHEMA_STR |
				       ARGUS_SCHEMA_STR2))
			return reader_why(t, "unknown SCHEMA flags 0x%" PRIx64 " for type %" PRIu64,
					  refs, type);
		e.refs = (uint8_t)refs;
		t->sch[t->nsch++] = e;
		if (type < 256)
			t->sch_small[type] = (uint16_t)t->nsch;
	}
	return 0;
}

/* STRINGS: count, then (len, bytes).  intern: fill lstr[]. */
int reader_parse_strings(struct argus_trace *t, struct span s, bool intern)
{
	uint64_t n, len;
	const uint8_t *p;
	int rc;

	if (get_count(&s, &n, 1))
		return reader_why(t, "bad STRINGS count");
	if (intern && reader_grow(&t->lstr, &t->lstr_cap, n, sizeof(*t->lstr)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		if (get_max(&s, &len, UINT32_MAX - 1) || get_bytes(&s, len, &p))
			return reader_why(t, "STRINGS entry %" PRIu64 " runs past its section", i);
		if (intern && (rc = reader_intern_string(t, p, len, &t->lstr[i])))
			return rc;
	}
	t->nlstr = (uint32_t)n;
	return 0;
}

/* STACKS: count, then (nr, zigzag ip deltas). */
int reader_parse_stacks(struct argus_trace *t, struct span s, bool intern)
{
	uint64_t n, nr, v;

	if (get_count(&s, &n, 1))
		return reader_why(t, "bad STACKS count");
	if (intern && reader_grow(&t->lstk, &t->lstk_cap, n, sizeof(*t->lstk)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t prev = 0;
		int rc;

		/* nr <= bytes left, so the scratch is bounded by the chunk */
		if (get_count(&s, &nr, 1) || nr > UINT32_MAX)
			return reader_why(t, "bad STACKS entry %" PRIu64, i);
		if (intern && reader_grow(&t->ips, &t->ips_cap, nr, sizeof(*t->ips)))
			return -ENOMEM;
		for (uint64_t k = 0; k < nr; k++) {
			if (get(&s, &v))
				return reader_why(t, "STACKS entry %" PRIu64 " runs past its section", i);
			prev += (uint64_t)zigzag_dec(v);
			if (intern)
				t->ips[k] = prev;
		}
		if (intern && (rc = reader_intern_stack(t, t->ips, (uint32_t)nr, &t->lstk[i])))
			return rc;
	}
	t->nlstk = (uint32_t)n;
	return 0;
}

/* TASKS: count, then (tid, pid, ppid, comm). */
int reader_parse_tasks(struct argus_trace *t, struct span s, uint64_t seq,
		       bool merge)
{
	uint64_t n, v[4];

	if (get_count(&s, &n, 4))
		return reader_why(t, "bad TASKS count");
	for (uint64_t i = 0; i < n; i++) {
		struct argus_task k;
		int rc;

		if (get_max(&s, &v[0], UINT32_MAX) || get_max(&s, &v[1], UINT32_MAX) ||
		    get_max(&s, &v[2], UINT32_MAX) || get_max(&s, &v[3], t->nlstr))
			return reader_why(t, "bad TASKS entry %" PRIu64, i);
		if (!merge)
			continue;
		k.tid = (uint32_t)v[0];
		k.pid = (uint32_t)v[1];
		k.ppid = (uint32_t)v[2];
		k.comm = gid(t->lstr, v[3]);
		if ((rc = reader_merge_task(t, &k, seq)))
			return rc;
	}
	return 0;
}

/* MAPS: count, then (pid, path, ts, start, len, pgoff, idlen, id). */
int reader_parse_maps(struct argus_trace *t, struct span s, bool merge)
{
	uint64_t n, v[7];
	const uint8_t *id;

	if (get_count(&s, &n, 7))
		return reader_why(t, "bad MAPS count");
	for (uint64_t i = 0; i < n; i++) {
		struct argus_map m;
		int rc;

		if (get_max(&s, &v[0], UINT32_MAX) || get_max(&s, &v[1], t->nlstr) ||
		    get(&s, &v[2]) || get(&s, &v[3]) || get(&s, &v[4]) ||
		    v[4] > UINT64_MAX - v[3] || get(&s, &v[5]) ||
		    get_max(&s, &v[6], ARGUS_BUILD_ID_MAX) || get_bytes(&s, v[6], &id))
			return reader_why(t, "bad MAPS entry %" PRIu64, i);
		if (!merge)
			continue;
		memset(&m, 0, sizeof(m));
		m.pid = (uint32_t)v[0];
		m.path = gid(t->lstr, v[1]);
		m.ts = v[2];
		m.start = v[3];
		m.end = v[3] + v[4];
		m.pgoff = v[5];
		m.build_id_len = (uint8_t)v[6];
		memcpy(m.build_id, id, (size_t)v[6]);
		if ((rc = reader_merge_map(t, &m)))
			return rc;
	}
	return 0;
}

/* CPUS: count, then (cpu, min_ts, max_ts, lost, nevents), cpu increasing. */
int reader_parse_cpus(struct argus_trace *t, struct span s,
		      const struct argus_chunk_header *h)
{
	uint64_t n, v[5];

	t->ncpus = 0;
	if (get_count(&s, &n, 5))
		return reader_why(t, "bad CPUS count");
	if (reader_grow(&t->cpus, &t->cpus_cap, n, sizeof(*t->cpus)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct cpu_ent *e = &t->cpus[i];

		for (int k = 0; k < 5; k++)
			if (get(&s, &v[k]))
				return reader_why(t, "CPUS section too short");
		if (v[0] > UINT16_MAX || (i && v[0] <= t->cpus[i - 1].cpu) ||
		    v[4] > h->nevents ||
		    (v[4] && (v[1] > v[2] || v[1] < h->min_ts || v[2] > h->max_ts)))
			return reader_why(t, "bad CPUS entry %" PRIu64, i);
		e->cpu = (uint16_t)v[0];
		e->seen = false;
		e->min_ts = v[1];
		e->max_ts = v[2];
		e->lost = v[3];
		e->nevents = v[4];
		t->ncpus = (uint32_t)i + 1;
	}
	if (s.p != s.end)
		return reader_why(t, "CPUS section length mismatch");
	return 0;
}

/* The CPUS entry of cpu (t->cpus is sorted by cpu), or NULL. */
struct cpu_ent *reader_cpu_find(struct argus_trace *t, uint64_t cpu)
{
	uint32_t lo = 0, hi = t->ncpus;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->cpus[mid].cpu == cpu)
			return &t->cpus[mid];
		if (t->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
