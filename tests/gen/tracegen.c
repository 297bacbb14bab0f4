/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tracegen.c - synthetic trace writer (see tracegen.h for the contract).
 *
 * State besides the builder and the ring:
 *   tasks    tid -> (pid, ppid, comm, last CPU switched in on, the chunk
 *            generation that last referenced it, its comm's string id in
 *            that chunk); open addressing with linear probing, never shrinks
 *   timers   armed hrtimer -> (function, owner_tid), for __timer_wake;
 *            linear probing with backward-shift deletion
 *   gen      the current chunk's generation: a task whose gen equals it is
 *            written into the chunk's task table when the chunk is cut
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen.h"

#define TG_MAX_CPUS 256
#define TG_DEF_CPUS 4
#define TG_DEF_CHUNK_EVENTS 200000
#define TG_DEF_CHUNK_BYTES (4u << 20)
#define TG_BYTES_CHECK 64       /* look at raw_bytes every this many events */

struct tg_task {
	uint32_t tid, pid, ppid;
	uint32_t gen;           /* chunk generation that referenced it */
	uint32_t sid, sid_gen;  /* comm's local string id, valid in sid_gen */
	int32_t last_cpu;       /* -1 = never switched in */
	char comm[AE_COMM_LEN];
};

struct tg_timer {
	uint64_t timer;         /* 0 = empty slot */
	uint64_t function;
	uint32_t owner_tid;
};

struct argus_tracegen {
	struct argus_chunk_builder *b;
	struct argus_ring *ring;
	uint32_t ncpus, chunk_events, chunk_bytes;
	int zlevel;
	int err;                /* sticky write/alloc error */
	uint64_t seq;           /* of the next chunk, from 1 */
	uint32_t gen;
	bool lost_pending;
	uint32_t since_check;
	struct argus_tracegen_stats st;

	struct tg_task *task;   /* [ntask] */
	uint32_t ntask, task_cap;
	uint32_t *tidx;         /* [tidx_cap] task index + 1, 0 = empty */
	uint32_t tidx_cap;

	struct tg_timer *tm;    /* [tm_cap] */
	uint32_t ntm, tm_cap;

	uint32_t swapper_sid[TG_MAX_CPUS];
	uint32_t swapper_gen[TG_MAX_CPUS];
};

static uint32_t hash32(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (uint32_t)v;
}

static void set_err(struct argus_error *err, int code, const char *path,
		    const char *what)
{
	if (!err)
		return;
	err->code = code;
	err->offset = 0;
	snprintf(err->msg, sizeof(err->msg), "%s: %s", path ? path : "(null)", what);
}

/* ---------------------------------------------------------------------
 * Task table.
 */
static struct tg_task *task_find(const struct argus_tracegen *g, uint32_t tid)
{
	uint32_t mask = g->tidx_cap - 1, i;

	if (!g->tidx_cap)
		return NULL;
	for (i = hash32(tid) & mask; g->tidx[i]; i = (i + 1) & mask)
		if (g->task[g->tidx[i] - 1].tid == tid)
			return &g->task[g->tidx[i] - 1];
	return NULL;
}

static int tidx_grow(struct argus_tracegen *g)
{
	uint32_t cap = g->tidx_cap ? g->tidx_cap * 2 : 256, mask = cap - 1;
	uint32_t *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (uint32_t k = 0; k < g->ntask; k++) {
		uint32_t i = hash32(g->task[k].tid) & mask;

		while (n[i])
			i = (i + 1) & mask;
		n[i] = k + 1;
	}
	free(g->tidx);
	g->tidx = n;
	g->tidx_cap = cap;
	return 0;
}

static void copy_comm(char dst[AE_COMM_LEN], const char *s)
{
	size_t n = s ? strnlen(s, AE_COMM_LEN - 1) : 0;

	memcpy(dst, s ? s : "", n);
	dst[n] = 0;
}

/* Declare or update a task.  tid 0 is accepted and ignored. */
static int task_set(struct argus_tracegen *g, uint32_t tid, uint32_t pid,
		    uint32_t ppid, const char *comm)
{
	struct tg_task *t;

	if (!tid)
		return 0;
	t = task_find(g, tid);
	if (!t) {
		uint32_t mask, i;

		if ((uint64_t)(g->ntask + 1) * 2 > g->tidx_cap && tidx_grow(g))
			return -ENOMEM;
		if (g->ntask == g->task_cap) {
			uint32_t cap = g->task_cap ? g->task_cap * 2 : 128;
			struct tg_task *n = realloc(g->task, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			g->task = n;
			g->task_cap = cap;
		}
		t = &g->task[g->ntask];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->last_cpu = -1;
		mask = g->tidx_cap - 1;
		for (i = hash32(tid) & mask; g->tidx[i]; i = (i + 1) & mask)
			;
		g->tidx[i] = ++g->ntask;
	}
	t->pid = pid;
	t->ppid = ppid;
	copy_comm(t->comm, comm);
	t->sid_gen = 0;  /* re-intern the (maybe new) comm */
	return 0;
}

static void task_ref(struct argus_tracegen *g, uint32_t tid)
{
	struct tg_task *t = tid ? task_find(g, tid) : NULL;

	if (t)
		t->gen = g->gen;
}

static uint32_t intern(struct argus_tracegen *g, const char *s, size_t len)
{
	uint32_t id = argus_chunk_builder__string(g->b, s, len);

	if (!id && !g->err)
		g->err = -ENOMEM;
	return id;
}

static uint32_t task_comm_sid(struct argus_tracegen *g, struct tg_task *t)
{
	if (t->sid_gen != g->gen) {
		t->sid = intern(g, t->comm, strlen(t->comm));
		t->sid_gen = g->gen;
	}
	return t->sid;
}

/* ---------------------------------------------------------------------
 * Armed timers.
 */
static struct tg_timer *timer_slot(const struct argus_tracegen *g, uint64_t timer)
{
	uint32_t mask = g->tm_cap - 1, i;

	if (!g->tm_cap || !timer)
		return NULL;
	for (i = hash32(timer) & mask; g->tm[i].timer; i = (i + 1) & mask)
		if (g->tm[i].timer == timer)
			return &g->tm[i];
	return NULL;
}

static int timer_put(struct argus_tracegen *g, uint64_t timer, uint64_t fn,
		     uint32_t owner)
{
	struct tg_timer *s;
	uint32_t mask, i;

	if (!timer)
		return 0;
	s = timer_slot(g, timer);
	if (s) {
		s->function = fn;
		s->owner_tid = owner;
		return 0;
	}
	if ((uint64_t)(g->ntm + 1) * 2 > g->tm_cap) {
		uint32_t cap = g->tm_cap ? g->tm_cap * 2 : 64;
		struct tg_timer *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint32_t k = 0; k < g->tm_cap; k++) {
			if (!g->tm[k].timer)
				continue;
			for (i = hash32(g->tm[k].timer) & (cap - 1); n[i].timer;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = g->tm[k];
		}
		free(g->tm);
		g->tm = n;
		g->tm_cap = cap;
	}
	mask = g->tm_cap - 1;
	for (i = hash32(timer) & mask; g->tm[i].timer; i = (i + 1) & mask)
		;
	g->tm[i] = (struct tg_timer){ timer, fn, owner };
	g->ntm++;
	return 0;
}

static void timer_del(struct argus_tracegen *g, uint64_t timer)
{
	struct tg_timer *s = timer_slot(g, timer);
	uint32_t mask = g->tm_cap - 1, i, j;

	if (!s)
		return;
	/* backward-shift deletion keeps every probe chain intact */
	i = (uint32_t)(s - g->tm);
	j = i;
	for (;;) {
		uint32_t home;

		g->tm[i].timer = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!g->tm[j].timer)
				goto done;
			home = hash32(g->tm[j].timer) & mask;
			/* move j back to i unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		g->tm[i] = g->tm[j];
		i = j;
	}
done:
	g->ntm--;
}

/* ---------------------------------------------------------------------
 * Chunks.
 */
static int cut(struct argus_tracegen *g)
{
	void *buf = NULL;
	size_t len = 0;
	int rc;

	if (g->err)
		return g->err;
	if (!argus_chunk_builder__nevents(g->b) && !g->lost_pending)
		return 0;
	for (uint32_t k = 0; k < g->ntask; k++) {
		struct tg_task *t = &g->task[k];
		struct argus_task at;

		if (t->gen != g->gen)
			continue;
		at.tid = t->tid;
		at.pid = t->pid;
		at.ppid = t->ppid;
		at.comm = task_comm_sid(g, t);
		if (g->err)
			return g->err;
		rc = argus_chunk_builder__task(g->b, &at);
		if (rc)
			return g->err = rc;
	}
	rc = argus_chunk_builder__finish(g->b, g->seq, g->zlevel, &buf, &len);
	if (rc)
		return g->err = rc;
	rc = argus_ring__append(g->ring, buf, len);
	free(buf);
	if (rc)
		return g->err = rc;
	g->seq++;
	g->gen++;
	g->lost_pending = false;
	g->since_check = 0;
	g->st.chunks++;
	/* a snapshot's chunks start on block boundaries */
	g->st.bytes = (g->st.bytes + ARGUS_BLOCK_SIZE - 1) / ARGUS_BLOCK_SIZE *
		      ARGUS_BLOCK_SIZE + len;
	return 0;
}

struct argus_tracegen *argus_tracegen__open(const char *path,
					    const struct argus_tracegen_opts *opts,
					    struct argus_error *err)
{
	struct argus_tracegen *g;
	struct argus_ring_opts ro = { .sz = sizeof(ro) };
	struct argus_tracegen_opts o = { 0 };

	if (opts) {
		size_t n = opts->sz < sizeof(o) ? opts->sz : sizeof(o);

		memcpy(&o, opts, n);
	}
	if (!path || o.ncpus > TG_MAX_CPUS || o.zlevel < -1 || o.zlevel > 9) {
		set_err(err, -EINVAL, path, "bad tracegen options");
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		set_err(err, -ENOMEM, path, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	g->ncpus = o.ncpus ? o.ncpus : TG_DEF_CPUS;
	g->chunk_events = o.chunk_events ? o.chunk_events : TG_DEF_CHUNK_EVENTS;
	g->chunk_bytes = o.chunk_bytes ? o.chunk_bytes : TG_DEF_CHUNK_BYTES;
	g->zlevel = o.zlevel == 0 ? 1 : o.zlevel < 0 ? 0 : o.zlevel;
	g->seq = 1;
	g->gen = 1;
	g->b = argus_chunk_builder__new();
	if (!g->b || argus_chunk_builder__set_codec(g->b, o.zlib ? ARGUS_CODEC_ZLIB :
						    ARGUS_CODEC_ZSTD)) {
		argus_chunk_builder__free(g->b);
		set_err(err, -ENOMEM, path, "out of memory");
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	ro.data_size = 0;
	ro.ncpus = g->ncpus;
	g->ring = argus_ring__create(path, &ro, err);
	if (!g->ring) {
		int e = errno;

		argus_chunk_builder__free(g->b);
		free(g);
		errno = e;
		return NULL;
	}
	g->st.bytes = ARGUS_FILE_HEADER_SIZE;
	return g;
}

int argus_tracegen__flush(struct argus_tracegen *g)
{
	return g ? cut(g) : -EINVAL;
}

int argus_tracegen__close(struct argus_tracegen *g)
{
	int rc, src;

	if (!g)
		return 0;
	rc = cut(g);
	src = argus_ring__sync(g->ring);
	if (!rc)
		rc = src;
	argus_ring__close(g->ring);
	argus_chunk_builder__free(g->b);
	free(g->task);
	free(g->tidx);
	free(g->tm);
	free(g);
	return rc;
}

const struct argus_tracegen_stats *argus_tracegen__stats(const struct argus_tracegen *g)
{
	return g ? &g->st : NULL;
}

/* ---------------------------------------------------------------------
 * Adding events.
 */
static int check(const struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
		 uint8_t ctx)
{
	if (g->err)
		return g->err;
	if (ts < g->st.last_ts || cpu >= g->ncpus || ctx > AE_CTX_NMI)
		return -EINVAL;
	return 0;
}

/* ev's ids are set here from str/str2/ips; ev is otherwise final. */
static int add(struct argus_tracegen *g, struct argus_event *ev,
	       const char *str, size_t slen, const char *str2, size_t s2len,
	       const uint64_t *ips, uint32_t nips)
{
	int rc = check(g, ev->ts, ev->cpu, ev->ctx);

	if (rc)
		return rc;
	if (!ev->type || ev->type >= AE_TYPE_MAX)
		return -EINVAL;
	if (str && !ev->str)
		ev->str = intern(g, str, slen);
	if (str2)
		ev->str2 = intern(g, str2, s2len);
	if (ips) {
		ev->stack = argus_chunk_builder__stack(g->b, ips, nips);
		if (!ev->stack && !g->err)
			g->err = -ENOMEM;
	}
	if (g->err)
		return g->err;
	rc = argus_chunk_builder__event(g->b, ev);
	if (rc)
		return rc == -EINVAL ? rc : (g->err = rc);

	task_ref(g, ev->tid);
	switch (ev->type) {
	case AE_SWITCH:
		task_ref(g, (uint32_t)ev->f[ARGUS_F_SW_NEXT_TID]);
		break;
	case AE_WAKING:
		task_ref(g, (uint32_t)ev->f[ARGUS_F_WK_TARGET_TID]);
		break;
	case AE_WAKEUP_NEW: case AE_FORK: case AE_FREE:
		task_ref(g, (uint32_t)ev->f[ARGUS_F_TK_CHILD_TID]);
		break;
	case AE_HRT_START: case AE_HRT_EXPIRE: case AE_HRT_CANCEL:
		task_ref(g, (uint32_t)ev->f[ARGUS_F_HT_OWNER_TID]);
		break;
	default:
		break;
	}
	g->st.events++;
	g->st.type[ev->type]++;
	g->st.last_ts = ev->ts;
	if (argus_chunk_builder__nevents(g->b) >= g->chunk_events)
		return cut(g);
	if (++g->since_check >= TG_BYTES_CHECK) {
		g->since_check = 0;
		if (argus_chunk_builder__raw_bytes(g->b) >= g->chunk_bytes)
			return cut(g);
	}
	return 0;
}

static struct argus_event mkev(uint64_t ts, uint16_t cpu, uint8_t ctx,
			       uint16_t type, uint32_t tid, uint32_t pid)
{
	struct argus_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.cpu = cpu;
	ev.ctx = ctx;
	ev.type = type;
	ev.tid = tid;
	ev.pid = pid;
	return ev;
}

int argus_tracegen__event(struct argus_tracegen *g, const struct argus_event *ev,
			  const char *str, const char *str2,
			  const uint64_t *ips, uint32_t nips)
{
	struct argus_event e;

	if (!g || !ev)
		return -EINVAL;
	e = *ev;
	e.stack = e.str = e.str2 = 0;
	return add(g, &e, str, str ? strlen(str) : 0, str2, str2 ? strlen(str2) : 0,
		   ips, nips);
}

int argus_tracegen__task(struct argus_tracegen *g, uint32_t tid, uint32_t pid,
			 uint32_t ppid, const char *comm)
{
	int rc;

	if (!g)
		return -EINVAL;
	if (g->err)
		return g->err;
	rc = task_set(g, tid, pid, ppid, comm);
	return rc ? (g->err = rc) : 0;
}

int argus_tracegen__sw_stack(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t prev_tid, uint32_t prev_pid,
			     int64_t prev_state, int32_t sys_nr, uint64_t sys_arg,
			     uint32_t obj_kind, uint64_t obj, uint64_t peer,
			     uint32_t next_tid, uint32_t next_pid,
			     const uint64_t *ips, uint32_t nips)
{
	struct argus_event ev;
	struct tg_task *nt;
	int rc;

	if (!g)
		return -EINVAL;
	if ((rc = check(g, ts, cpu, AE_CTX_TASK)))
		return rc;
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_SWITCH, prev_tid, prev_pid);
	ev.f[ARGUS_F_SW_NEXT_TID] = next_tid;
	ev.f[ARGUS_F_SW_NEXT_PID] = next_pid;
	ev.f[ARGUS_F_SW_PREV_STATE] = (uint64_t)prev_state;
	ev.f[ARGUS_F_SW_SYS_NR] = (uint64_t)(int64_t)sys_nr;
	ev.f[ARGUS_F_SW_SYS_ARG] = sys_arg;
	ev.f[ARGUS_F_SW_OBJ_KIND] = obj_kind;
	ev.f[ARGUS_F_SW_OBJ] = obj;
	ev.f[ARGUS_F_SW_PEER] = peer;
	/* next comm: the task table's, "swapper/CPU" for the idle task */
	if (!next_tid) {
		if (g->swapper_gen[cpu] != g->gen) {
			char s[AE_COMM_LEN];
			int n = snprintf(s, sizeof(s), "swapper/%u", cpu);

			g->swapper_sid[cpu] = intern(g, s, (size_t)n);
			g->swapper_gen[cpu] = g->gen;
		}
		ev.str = g->swapper_sid[cpu];
	} else if ((nt = task_find(g, next_tid))) {
		ev.str = task_comm_sid(g, nt);
	}
	if (g->err)
		return g->err;
	rc = add(g, &ev, NULL, 0, NULL, 0, ips, nips);
	if (!rc && next_tid && (nt = task_find(g, next_tid)))
		nt->last_cpu = cpu;
	return rc;
}

int argus_tracegen__sw(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
		       uint32_t prev_tid, uint32_t prev_pid, int64_t prev_state,
		       int32_t sys_nr, uint64_t sys_arg, uint32_t obj_kind,
		       uint64_t obj, uint64_t peer, uint32_t next_tid,
		       uint32_t next_pid)
{
	return argus_tracegen__sw_stack(g, ts, cpu, prev_tid, prev_pid, prev_state,
					sys_nr, sys_arg, obj_kind, obj, peer,
					next_tid, next_pid, NULL, 0);
}

int argus_tracegen__waking(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint8_t ctx, uint32_t waker_tid, uint32_t waker_pid,
			   uint32_t target_tid, uint32_t target_pid,
			   uint32_t vector, uint64_t hrtimer)
{
	struct argus_event ev;
	struct tg_task *t;

	if (!g)
		return -EINVAL;
	t = target_tid ? task_find(g, target_tid) : NULL;
	ev = mkev(ts, cpu, ctx, AE_WAKING, waker_tid, waker_pid);
	ev.f[ARGUS_F_WK_TARGET_TID] = target_tid;
	ev.f[ARGUS_F_WK_TARGET_PID] = target_pid;
	ev.f[ARGUS_F_WK_TARGET_CPU] = t && t->last_cpu >= 0 ? (uint32_t)t->last_cpu : cpu;
	ev.f[ARGUS_F_WK_VECTOR] = vector;
	ev.f[ARGUS_F_WK_HRTIMER] = hrtimer;
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

/* AE_FORK / AE_WAKEUP_NEW / AE_FREE. */
static int task_event(struct argus_tracegen *g, uint16_t type, uint64_t ts,
		      uint16_t cpu, uint8_t ctx, uint32_t tid, uint32_t pid,
		      uint32_t child_tid, uint32_t child_pid, const char *comm)
{
	struct argus_event ev;
	char c[AE_COMM_LEN];
	int rc;

	if (!g)
		return -EINVAL;
	if ((rc = check(g, ts, cpu, ctx)))
		return rc;
	if (type != AE_FREE) {
		struct tg_task *parent = task_find(g, tid);
		uint32_t ppid = child_pid != pid ? pid :
				parent ? parent->ppid : pid;

		/* a new process's parent is the forking process; a new
		 * thread's is its process's parent */
		if ((rc = task_set(g, child_tid, child_pid, ppid, comm)))
			return g->err = rc;
		copy_comm(c, comm);
	} else {
		struct tg_task *t = task_find(g, child_tid);

		copy_comm(c, t ? t->comm : comm);
	}
	ev = mkev(ts, cpu, ctx, type, tid, pid);
	ev.f[ARGUS_F_TK_CHILD_TID] = child_tid;
	ev.f[ARGUS_F_TK_CHILD_PID] = child_pid;
	return add(g, &ev, c, strlen(c), NULL, 0, NULL, 0);
}

int argus_tracegen__wakeup_new(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint32_t parent_tid, uint32_t parent_pid,
			       uint32_t child_tid, uint32_t child_pid,
			       const char *comm)
{
	return task_event(g, AE_WAKEUP_NEW, ts, cpu, AE_CTX_TASK, parent_tid,
			  parent_pid, child_tid, child_pid, comm);
}

int argus_tracegen__fork(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t parent_tid, uint32_t parent_pid,
			 uint32_t child_tid, uint32_t child_pid, const char *comm)
{
	return task_event(g, AE_FORK, ts, cpu, AE_CTX_TASK, parent_tid,
			  parent_pid, child_tid, child_pid, comm);
}

int argus_tracegen__free(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint8_t ctx, uint32_t tid, uint32_t pid,
			 uint32_t child_tid, uint32_t child_pid)
{
	return task_event(g, AE_FREE, ts, cpu, ctx, tid, pid, child_tid,
			  child_pid, NULL);
}

int argus_tracegen__exec(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, uint32_t old_tid,
			 const char *comm, const char *filename)
{
	struct argus_event ev;
	struct tg_task *t;
	char c[AE_COMM_LEN];
	size_t flen = filename ? strnlen(filename, AE_PATH_LEN - 1) : 0;
	int rc;

	if (!g)
		return -EINVAL;
	if ((rc = check(g, ts, cpu, AE_CTX_TASK)))
		return rc;
	t = task_find(g, tid);
	if ((rc = task_set(g, tid, pid, t ? t->ppid : 0, comm)))
		return g->err = rc;
	copy_comm(c, comm);
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_EXEC, tid, pid);
	ev.f[ARGUS_F_EX_OLD_TID] = old_tid;
	return add(g, &ev, c, strlen(c), filename ? filename : "", flen, NULL, 0);
}

int argus_tracegen__rename(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, const char *comm)
{
	struct argus_event ev;
	struct tg_task *t;
	char c[AE_COMM_LEN];
	int rc;

	if (!g)
		return -EINVAL;
	if ((rc = check(g, ts, cpu, AE_CTX_TASK)))
		return rc;
	t = task_find(g, tid);
	if ((rc = task_set(g, tid, pid, t ? t->ppid : 0, comm)))
		return g->err = rc;
	copy_comm(c, comm);
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_RENAME, tid, pid);
	return add(g, &ev, c, strlen(c), NULL, 0, NULL, 0);
}

int argus_tracegen__exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, int32_t code,
			 uint32_t group_dead)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_EXIT, tid, pid);
	ev.f[ARGUS_F_EXIT_CODE] = (uint64_t)(int64_t)code;
	ev.f[ARGUS_F_EXIT_GROUP_DEAD] = group_dead;
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

int argus_tracegen__sys_enter(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint32_t tid, uint32_t pid, int64_t nr,
			      const uint64_t args[6])
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_SYS_ENTER, tid, pid);
	ev.f[ARGUS_F_SE_NR] = (uint64_t)nr;
	if (args)
		memcpy(&ev.f[ARGUS_F_SE_ARG0], args, 6 * sizeof(uint64_t));
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

int argus_tracegen__sys_exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, int64_t nr, int64_t ret,
			     uint64_t arg0, uint32_t obj_kind, uint64_t obj,
			     uint64_t peer)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_SYS_EXIT, tid, pid);
	ev.f[ARGUS_F_SX_NR] = (uint64_t)nr;
	ev.f[ARGUS_F_SX_RET] = (uint64_t)ret;
	ev.f[ARGUS_F_SX_ARG0] = arg0;
	ev.f[ARGUS_F_SX_OBJ_KIND] = obj_kind;
	ev.f[ARGUS_F_SX_OBJ] = obj;
	ev.f[ARGUS_F_SX_PEER] = peer;
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

static int hrt(struct argus_tracegen *g, uint16_t type, uint64_t ts, uint16_t cpu,
	       uint8_t ctx, uint32_t tid, uint32_t pid, uint64_t timer,
	       uint64_t function, int64_t expires, uint32_t mode,
	       uint32_t owner_tid)
{
	struct argus_event ev;
	int rc;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, ctx, type, tid, pid);
	ev.f[ARGUS_F_HT_TIMER] = timer;
	ev.f[ARGUS_F_HT_FUNCTION] = function;
	ev.f[ARGUS_F_HT_EXPIRES] = (uint64_t)expires;
	ev.f[ARGUS_F_HT_MODE] = mode;
	ev.f[ARGUS_F_HT_OWNER_TID] = owner_tid;
	rc = add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
	if (rc)
		return rc;
	if (type == AE_HRT_START) {
		if ((rc = timer_put(g, timer, function, owner_tid)))
			return g->err = rc;
	} else {
		timer_del(g, timer);
	}
	return 0;
}

int argus_tracegen__hrt_start(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint8_t ctx, uint32_t tid, uint32_t pid,
			      uint64_t timer, uint64_t function, int64_t expires,
			      uint32_t mode, uint32_t owner_tid)
{
	return hrt(g, AE_HRT_START, ts, cpu, ctx, tid, pid, timer, function,
		   expires, mode, owner_tid);
}

int argus_tracegen__hrt_expire(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint8_t ctx, uint32_t tid, uint32_t pid,
			       uint64_t timer, uint64_t function, int64_t expires,
			       uint32_t mode, uint32_t owner_tid)
{
	return hrt(g, AE_HRT_EXPIRE, ts, cpu, ctx, tid, pid, timer, function,
		   expires, mode, owner_tid);
}

int argus_tracegen__hrt_cancel(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint8_t ctx, uint32_t tid, uint32_t pid,
			       uint64_t timer, uint64_t function, int64_t expires,
			       uint32_t mode, uint32_t owner_tid)
{
	return hrt(g, AE_HRT_CANCEL, ts, cpu, ctx, tid, pid, timer, function,
		   expires, mode, owner_tid);
}

static int irq(struct argus_tracegen *g, uint16_t type, uint8_t ctx, uint64_t ts,
	       uint16_t cpu, uint32_t tid, uint32_t pid, uint32_t vector,
	       int32_t ret)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, ctx, type, tid, pid);
	ev.f[ARGUS_F_IRQ_VECTOR] = vector;
	ev.f[ARGUS_F_IRQ_RET] = (uint64_t)(int64_t)ret;
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

int argus_tracegen__irq_entry(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			      uint32_t tid, uint32_t pid, uint32_t vector)
{
	return irq(g, AE_IRQ_ENTRY, AE_CTX_HARDIRQ, ts, cpu, tid, pid, vector, 0);
}

int argus_tracegen__irq_exit(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, uint32_t vector,
			     int32_t ret)
{
	return irq(g, AE_IRQ_EXIT, AE_CTX_HARDIRQ, ts, cpu, tid, pid, vector, ret);
}

int argus_tracegen__softirq_entry(struct argus_tracegen *g, uint64_t ts,
				  uint16_t cpu, uint32_t tid, uint32_t pid,
				  uint32_t vector)
{
	return irq(g, AE_SOFTIRQ_ENTRY, AE_CTX_SOFTIRQ, ts, cpu, tid, pid, vector, 0);
}

int argus_tracegen__softirq_exit(struct argus_tracegen *g, uint64_t ts,
				 uint16_t cpu, uint32_t tid, uint32_t pid,
				 uint32_t vector)
{
	return irq(g, AE_SOFTIRQ_EXIT, AE_CTX_SOFTIRQ, ts, cpu, tid, pid, vector, 0);
}

static int wq(struct argus_tracegen *g, uint16_t type, uint64_t ts, uint16_t cpu,
	      uint32_t tid, uint32_t pid, uint64_t work, uint64_t function)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_TASK, type, tid, pid);
	ev.f[ARGUS_F_WQ_WORK] = work;
	ev.f[ARGUS_F_WQ_FUNCTION] = function;
	return add(g, &ev, NULL, 0, NULL, 0, NULL, 0);
}

int argus_tracegen__wq_start(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			     uint32_t tid, uint32_t pid, uint64_t work,
			     uint64_t function)
{
	return wq(g, AE_WQ_START, ts, cpu, tid, pid, work, function);
}

int argus_tracegen__wq_end(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, uint64_t work,
			   uint64_t function)
{
	return wq(g, AE_WQ_END, ts, cpu, tid, pid, work, function);
}

int argus_tracegen__sample(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			   uint32_t tid, uint32_t pid, const uint64_t *ips,
			   uint32_t n)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_HARDIRQ, AE_SAMPLE, tid, pid);
	return add(g, &ev, NULL, 0, NULL, 0, ips, ips ? n : 0);
}

int argus_tracegen__mark(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t tid, uint32_t pid, const char *text)
{
	struct argus_event ev;

	if (!g)
		return -EINVAL;
	ev = mkev(ts, cpu, AE_CTX_TASK, AE_MARK, tid, pid);
	return add(g, &ev, text ? text : "", text ? strlen(text) : 0, NULL, 0,
		   NULL, 0);
}

int argus_tracegen__lost(struct argus_tracegen *g, uint16_t cpu, uint64_t count)
{
	int rc;

	if (!g || cpu >= g->ncpus)
		return -EINVAL;
	if (g->err)
		return g->err;
	rc = argus_chunk_builder__lost(g->b, cpu, count);
	if (rc)
		return g->err = rc;
	g->lost_pending = true;
	return 0;
}

/* ---------------------------------------------------------------------
 * Scenario conveniences.
 */
int argus_tracegen__block(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			  uint32_t tid, uint32_t pid, int32_t sys_nr,
			  uint64_t sys_arg, uint32_t obj_kind, uint64_t obj,
			  uint64_t peer)
{
	return argus_tracegen__sw(g, ts, cpu, tid, pid, ARGUS_TG_INTERRUPTIBLE,
				  sys_nr, sys_arg, obj_kind, obj, peer, 0, 0);
}

int argus_tracegen__run(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			uint32_t tid, uint32_t pid)
{
	return argus_tracegen__sw(g, ts, cpu, 0, 0, ARGUS_TG_RUNNING, -1, 0,
				  AE_OBJ_NONE, 0, 0, tid, pid);
}

int argus_tracegen__preempt(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			    uint32_t tid, uint32_t pid, uint32_t next_tid,
			    uint32_t next_pid)
{
	return argus_tracegen__sw(g, ts, cpu, tid, pid, ARGUS_TG_RUNNING, -1, 0,
				  AE_OBJ_NONE, 0, 0, next_tid, next_pid);
}

int argus_tracegen__wake(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			 uint32_t waker_tid, uint32_t waker_pid,
			 uint32_t target_tid, uint32_t target_pid)
{
	return argus_tracegen__waking(g, ts, cpu, AE_CTX_TASK, waker_tid, waker_pid,
				      target_tid, target_pid, AE_VEC_NONE, 0);
}

int argus_tracegen__timer_wake(struct argus_tracegen *g, uint64_t ts, uint16_t cpu,
			       uint32_t cur_tid, uint32_t cur_pid, uint64_t timer,
			       uint32_t target_tid, uint32_t target_pid)
{
	struct tg_timer *s;
	int rc;

	if (!g)
		return -EINVAL;
	if ((rc = check(g, ts, cpu, AE_CTX_HARDIRQ)))
		return rc;
	s = timer_slot(g, timer);
	if (!s)
		return -ENOENT;
	rc = argus_tracegen__hrt_expire(g, ts, cpu, AE_CTX_HARDIRQ, cur_tid, cur_pid,
					timer, s->function, 0, 0, s->owner_tid);
	if (rc)
		return rc;
	return argus_tracegen__waking(g, ts, cpu, AE_CTX_HARDIRQ, cur_tid, cur_pid,
				      target_tid, target_pid, AE_VEC_HRTIMER, timer);
}
