/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_tables.c - the trace's global tables, filled as chunks are
 * decoded and kept across argus_trace__rewind(), and their public lookups:
 *
 *   strings  id -> NUL-terminated bytes, deduplicated by content
 *   stacks   id -> ips, deduplicated by content
 *   tasks    tid -> the entry from the highest-seq chunk that had it
 *   maps     every distinct mapping, chained per pid (newest first)
 *
 * Ids are 1-based (0 = none).  What an id points to lives in the arena
 * (reader_arena.c), which never moves: pointers handed out stay valid
 * until argus_trace__close().
 */
#include "reader_internal.h"

struct bytes_key {
	const uint8_t *p;
	uint64_t n;
};

static bool gstr_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;
	const struct bytes_key *k = key;

	return t->str_len[id - 1] == k->n && !memcmp(t->str[id - 1], k->p, k->n);
}

int reader_intern_string(struct argus_trace *t, const uint8_t *p, uint64_t n,
			 uint32_t *id)
{
	struct bytes_key k = { p, n };
	uint32_t h = argus_hash_bytes(p, (size_t)n);
	char *s;

	*id = argus_hidx_find(&t->str_idx, h, gstr_eq, t, &k);
	if (*id)
		return 0;
	if (t->nstr >= UINT32_MAX - 1 ||
	    reader_grow(&t->str, &t->str_cap, (uint64_t)t->nstr + 1, sizeof(*t->str)) ||
	    reader_grow(&t->str_len, &t->str_len_cap, (uint64_t)t->nstr + 1,
			sizeof(*t->str_len)))
		return -ENOMEM;
	s = reader_arena_alloc(&t->arena, (size_t)n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, p, (size_t)n);
	s[n] = 0;
	if (argus_hidx_insert(&t->str_idx, h, t->nstr + 1))
		return -ENOMEM;
	t->str[t->nstr] = s;
	t->str_len[t->nstr] = (uint32_t)n;
	*id = ++t->nstr;
	return 0;
}

struct ips_key {
	const uint64_t *ips;
	uint32_t nr;
};

static bool gstk_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;
	const struct ips_key *k = key;
	const struct gstack *g = &t->stk[id - 1];

	return g->nr == k->nr &&
	       (!k->nr || !memcmp(g->ips, k->ips, k->nr * sizeof(uint64_t)));
}

int reader_intern_stack(struct argus_trace *t, const uint64_t *ips,
			uint32_t nr, uint32_t *id)
{
	struct ips_key k = { ips, nr };
	uint32_t h = argus_hash_u64s(ips, nr);
	uint64_t *keep = NULL;

	*id = argus_hidx_find(&t->stk_idx, h, gstk_eq, t, &k);
	if (*id)
		return 0;
	if (nr && !(keep = reader_arena_alloc(&t->arena, (size_t)nr * sizeof(*keep))))
		return -ENOMEM;
	if (t->nstk >= UINT32_MAX - 1 ||
	    reader_grow(&t->stk, &t->stk_cap, (uint64_t)t->nstk + 1, sizeof(*t->stk)) ||
	    argus_hidx_insert(&t->stk_idx, h, t->nstk + 1))
		return -ENOMEM;
	if (nr)
		memcpy(keep, ips, (size_t)nr * sizeof(*keep));
	t->stk[t->nstk].ips = keep;
	t->stk[t->nstk].nr = nr;
	*id = ++t->nstk;
	return 0;
}

static bool gtask_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return t->task[id - 1]->t.tid == *(const uint32_t *)key;
}

int reader_merge_task(struct argus_trace *t, const struct argus_task *k,
		      uint64_t seq)
{
	uint32_t h = (uint32_t)argus_mix64(k->tid);
	uint32_t id = argus_hidx_find(&t->task_idx, h, gtask_eq, t, &k->tid);
	struct gtask *g;

	if (id) {
		g = t->task[id - 1];
		if (g->seq <= seq) {
			g->t = *k;
			g->seq = seq;
		}
		return 0;
	}
	if (t->ntask >= UINT32_MAX - 1 ||
	    reader_grow(&t->task, &t->task_cap, (uint64_t)t->ntask + 1, sizeof(*t->task)))
		return -ENOMEM;
	g = reader_arena_alloc(&t->arena, sizeof(*g));
	if (!g || argus_hidx_insert(&t->task_idx, h, t->ntask + 1))
		return -ENOMEM;
	g->t = *k;
	g->seq = seq;
	t->task[t->ntask++] = g;
	return 0;
}

static bool gmap_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return !memcmp(t->map[id - 1], key, sizeof(struct argus_map));
}

static bool pidh_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct argus_trace *t = ctx;

	return t->pidh[id - 1].pid == *(const uint32_t *)key;
}

int reader_merge_map(struct argus_trace *t, const struct argus_map *m)
{
	uint32_t h = argus_hash_bytes(m, sizeof(*m)), ph, pid_id;
	struct argus_map *g;

	if (argus_hidx_find(&t->map_idx, h, gmap_eq, t, m))
		return 0;
	if (t->nmap >= UINT32_MAX - 1 ||
	    reader_grow(&t->map, &t->map_cap, (uint64_t)t->nmap + 1, sizeof(*t->map)) ||
	    reader_grow(&t->map_next, &t->map_next_cap, (uint64_t)t->nmap + 1,
			sizeof(*t->map_next)))
		return -ENOMEM;
	ph = (uint32_t)argus_mix64(m->pid);
	pid_id = argus_hidx_find(&t->pidh_idx, ph, pidh_eq, t, &m->pid);
	if (!pid_id) {
		if (reader_grow(&t->pidh, &t->pidh_cap, (uint64_t)t->npidh + 1,
				sizeof(*t->pidh)) ||
		    argus_hidx_insert(&t->pidh_idx, ph, t->npidh + 1))
			return -ENOMEM;
		t->pidh[t->npidh].pid = m->pid;
		t->pidh[t->npidh].head = 0;
		pid_id = ++t->npidh;
	}
	g = reader_arena_alloc(&t->arena, sizeof(*g));
	if (!g || argus_hidx_insert(&t->map_idx, h, t->nmap + 1))
		return -ENOMEM;
	*g = *m;
	t->map[t->nmap] = g;
	t->map_next[t->nmap] = t->pidh[pid_id - 1].head;
	t->pidh[pid_id - 1].head = ++t->nmap;
	return 0;
}

/* ---------------------------------------------------------------------
 * Lookups.
 */
const char *argus_trace__string(const struct argus_trace *t, uint32_t id)
{
	if (!t || !id || id > t->nstr)
		return NULL;
	return t->str[id - 1];
}

int argus_trace__stack(const struct argus_trace *t, uint32_t id,
		       const uint64_t **ips, uint32_t *nr)
{
	if (!t || !ips || !nr)
		return -EINVAL;
	if (!id || id > t->nstk)
		return -ENOENT;
	*ips = t->stk[id - 1].ips;
	*nr = t->stk[id - 1].nr;
	return 0;
}

const struct argus_task *argus_trace__task(const struct argus_trace *t,
					   uint32_t tid)
{
	uint32_t id;

	if (!t)
		return NULL;
	id = argus_hidx_find(&t->task_idx, (uint32_t)argus_mix64(tid), gtask_eq,
			     t, &tid);
	return id ? &t->task[id - 1]->t : NULL;
}

const struct argus_map *argus_trace__map(const struct argus_trace *t,
					 uint32_t pid, uint64_t ip,
					 uint64_t ts)
{
	const struct argus_map *before = NULL, *after = NULL;
	uint32_t id;

	if (!t)
		return NULL;
	id = argus_hidx_find(&t->pidh_idx, (uint32_t)argus_mix64(pid), pidh_eq,
			     t, &pid);
	for (id = id ? t->pidh[id - 1].head : 0; id; id = t->map_next[id - 1]) {
		const struct argus_map *m = t->map[id - 1];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->ts <= ts) {
			if (!before || m->ts > before->ts)
				before = m;
		} else if (!after || m->ts < after->ts) {
			after = m;
		}
	}
	return before ? before : after;
}

void reader_tables_free(struct argus_trace *t)
{
	reader_arena_free(&t->arena);
	free(t->str);
	free(t->str_len);
	argus_hidx_free(&t->str_idx);
	free(t->stk);
	argus_hidx_free(&t->stk_idx);
	free(t->task);
	argus_hidx_free(&t->task_idx);
	free(t->map);
	free(t->map_next);
	argus_hidx_free(&t->map_idx);
	free(t->pidh);
	argus_hidx_free(&t->pidh_idx);
}
