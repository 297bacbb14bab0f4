/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diag_locks.c - file locks (flock, fcntl) read back from the graph: a
 * thread's lock attempts, and who held a lock on a file at some time.
 *
 * Where the data is: the trace records each flock()/fcntl() as a sys_enter
 * (the request; for fcntl's lock cmds the BPF side copied l_type, l_whence,
 * l_start and l_len into args[3..5], argus_events.h AE_LOCK_TAG) and a
 * sys_exit (the result, and the file's AE_OBJ_FILE object).  The graph
 * keeps the request packed in the sys_enter event's val (graph_locks.c;
 * layout at argus_lock__pack in argus_diag.h), so an attempt is a
 * sys_enter of flock/fcntl with val != 0 followed, in its thread's chain,
 * by the sys_exit of the same call.
 *
 * Who holds a lock at ts (lock_state): every successful attempt on the
 * file up to ts, of every thread, in time order, replayed over a small
 * list of held ranges:
 *   - an unlock removes its process's locks of its family over the range;
 *   - an acquisition replaces its process's own locks over the range (lock
 *     conversion), and removes other processes' conflicting locks there:
 *     the kernel granted it, so those were gone (dropped by a close() we
 *     do not trace, or by an exit);
 *   - a process's locks end with its exit (the last of its threads').
 * Families: flock locks and fcntl locks (POSIX and OFD) ignore each other
 * on Linux.  The owner is the process (see argus_diag.h for what that
 * gets wrong about flock and OFD locks).
 *
 * Cost: one walk of every thread's events per holder query (lock queries
 * come from a diagnosis, not from the build), and nothing for the build
 * but one test of the syscall number per sys_enter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "syscall_class.h"

/* the flock(2) op bits and fcntl lock types (uapi values) */
#define LK_SH 1
#define LK_EX 2
#define LK_NB 4
#define LK_UN 8
#define LK_RDLCK 0
#define LK_WRLCK 1
#define LK_UNLCK 2
#define LK_SEEK_SET 0

#define END_OF_FILE UINT64_MAX  /* exclusive end of a range "to EOF" */

const char *argus_lock_kind_str(unsigned kind)
{
	static const char *const n[] = { NULL, "flock", "posix", "ofd" };

	return kind < 4 ? n[kind] : NULL;
}

const char *argus_lock_op_str(unsigned op)
{
	static const char *const n[] = { NULL, "shared", "exclusive", "unlock" };

	return op < 4 ? n[op] : NULL;
}

int argus_lock__decode(int64_t nr, const uint64_t args[6], struct argus_lock_req *r)
{
	memset(r, 0, sizeof(*r));
	if (nr == SYS_flock) {
		uint64_t o = args[1] & ~(uint64_t)LK_NB;

		r->kind = ARGUS_LOCK_FLOCK;
		r->op = o == LK_SH ? ARGUS_LOCK_SHARED : o == LK_EX ? ARGUS_LOCK_EXCL :
			o == LK_UN ? ARGUS_LOCK_UNLOCK : 0;
		/* LOCK_UN never waits; the kernel refuses other ops (EINVAL) */
		r->wait = r->op && r->op != ARGUS_LOCK_UNLOCK && !(args[1] & LK_NB);
		return 0;
	}
	if (nr != SYS_fcntl)
		return -ENOENT;
	switch (args[1]) {
	case AE_F_SETLK:
		r->kind = ARGUS_LOCK_POSIX;
		break;
	case AE_F_SETLKW:
		r->kind = ARGUS_LOCK_POSIX;
		r->wait = 1;
		break;
	case AE_F_OFD_SETLK:
		r->kind = ARGUS_LOCK_OFD;
		break;
	case AE_F_OFD_SETLKW:
		r->kind = ARGUS_LOCK_OFD;
		r->wait = 1;
		break;
	default:
		return -ENOENT;
	}
	if ((args[3] & AE_LOCK_TAG_MASK) != AE_LOCK_TAG)
		return 0;       /* the struct flock could not be read: op 0 */
	switch ((uint16_t)args[3]) {
	case LK_RDLCK:
		r->op = ARGUS_LOCK_SHARED;
		break;
	case LK_WRLCK:
		r->op = ARGUS_LOCK_EXCL;
		break;
	case LK_UNLCK:
		r->op = ARGUS_LOCK_UNLOCK;
		r->wait = 0;
		break;
	}
	if ((uint16_t)(args[3] >> 16) == LK_SEEK_SET) {
		int64_t start = (int64_t)args[4], len = (int64_t)args[5];

		if (len < 0) {  /* l_len < 0: [start + len, start) */
			start += len;
			len = -len;
		}
		r->start = start < 0 ? 0 : (uint64_t)start;
		r->len = (uint64_t)len;
	}
	return 0;
}

uint64_t argus_lock__pack(const struct argus_lock_req *r)
{
	uint64_t start = r->start, len = r->len;

	if (!r->kind)
		return 0;
	/* widen what does not fit: a start clipped down, a length to EOF */
	if (start > 0xffffffffull) {
		start = 0xffffffffull;
		len = ARGUS_LOCK_EOF;
	}
	if (len > 0xffffffull)
		len = ARGUS_LOCK_EOF;
	return (uint64_t)(r->kind & 3) | (uint64_t)(r->op & 3) << 2 |
	       (uint64_t)(r->wait & 1) << 4 | start << 8 | len << 40;
}

int argus_lock__unpack(uint64_t val, struct argus_lock_req *r)
{
	memset(r, 0, sizeof(*r));
	if (!(val & 3))
		return -ENOENT;
	r->kind = val & 3;
	r->op = (val >> 2) & 3;
	r->wait = (val >> 4) & 1;
	r->start = (val >> 8) & 0xffffffffull;
	r->len = val >> 40;
	return 0;
}

/* ---- a thread's attempts ------------------------------------------------ */
struct opvec {
	struct argus_lock_op *v;
	uint32_t n, cap;
};

static int opvec_push(struct opvec *o, const struct argus_lock_op *op)
{
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? o->cap * 2 : 16;
		struct argus_lock_op *v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = *op;
	return 0;
}

#define lock_nr argus_sys_is_file_lock

/* The attempt that began with sys_enter event `in`, without its result. */
static void op_begin(const struct argus_thread *t, const struct argus_gevent *in,
		     const struct argus_lock_req *r, struct argus_lock_op *op)
{
	memset(op, 0, sizeof(*op));
	op->tid = t->tid;
	op->pid = t->pid;
	op->ts = in->ts;
	op->kind = r->kind;
	op->op = r->op;
	op->wait = r->wait;
	op->start = r->start;
	op->len = r->len;
	op->ret = -EINPROGRESS;
}

/*
 * Every attempt of thread index thr whose exit is in [from, to], and the
 * one still open at `to`, to *o; only those on `file` unless file is 0.
 * An exit without its entry (lost, or before the trace) is no attempt: its
 * request is unknown.
 */
static int thread_ops(const struct argus_graph *g, uint32_t thr, uint64_t from, uint64_t to,
		      uint64_t file, struct opvec *o)
{
	const struct argus_thread *t = argus_graph__thread(g, thr);
	struct argus_lock_op cur;
	bool open = false;
	int rc;

	for (uint32_t e = t->first_event; e != ARGUS_NONE;
	     e = argus_graph__thread_next_event(g, thr, e)) {
		const struct argus_gevent *ev = argus_graph__event(g, e, ARGUS_GEVENT_BUF);
		struct argus_lock_req r;

		if (ev->ts > to)
			break;
		if (ev->type == AE_SYS_ENTER) {
			open = false;   /* a new call: an open one lost its exit */
			if (lock_nr(ev->nr) && !argus_lock__unpack((uint64_t)ev->val, &r)) {
				op_begin(t, ev, &r, &cur);
				open = true;
			}
		} else if (ev->type == AE_SYS_EXIT && open && ev->nr == (int16_t)(cur.kind ==
			   ARGUS_LOCK_FLOCK ? SYS_flock : SYS_fcntl)) {
			const struct argus_object *ob = argus_graph__object(g, ev->obj);

			open = false;
			cur.ts = ev->ts;
			cur.ret = ev->val;
			cur.file = ob && ob->kind == AE_OBJ_FILE ? ob->obj : 0;
			if (ev->ts >= from && (!file || cur.file == file) &&
			    (rc = opvec_push(o, &cur)))
				return rc;
		} else if (ev->type == AE_EXIT) {
			open = false;
		}
	}
	/* still waiting at `to`: its file is the one it blocked on, if the
	 * switch-out said so (a refused try never blocks) */
	if (open) {
		uint32_t s = argus_graph__segment_at(g, t->tid, cur.ts);
		const struct argus_segment *sg = argus_graph__segment(g, s);
		const struct argus_object *ob = NULL;

		/* the segment the attempt began in ended in its wait, or the
		 * next one did if a schema or split boundary came between */
		for (int k = 0; sg && k < 2 && sg->end_reason != ARGUS_END_WAIT; k++) {
			s = argus_graph__seg_next(g, s);
			sg = argus_graph__segment(g, s);
		}
		if (sg && sg->end_reason == ARGUS_END_WAIT && lock_nr((int16_t)sg->wait_nr))
			ob = argus_graph__object(g, sg->wait_obj);
		cur.file = ob && ob->kind == AE_OBJ_FILE ? ob->obj : 0;
		if (!file || cur.file == file)
			return opvec_push(o, &cur);
	}
	return 0;
}

static int op_cmp(const void *a, const void *b)
{
	const struct argus_lock_op *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

int argus_diag__lock_ops(const struct argus_graph *g, uint32_t tid, uint64_t from,
			 uint64_t to, struct argus_lock_op **out, uint32_t *n)
{
	struct opvec o = { 0 };
	uint32_t thr;
	int rc;

	if (!g || !out || !n || from > to)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	thr = argus_graph__thread_by_tid(g, tid);
	if (thr == ARGUS_NONE)
		return -ENOENT;
	rc = thread_ops(g, thr, from, to, 0, &o);
	if (rc) {
		free(o.v);
		return rc;
	}
	/* a pending attempt is pushed last with its entry time; qsort's
	 * base must not be NULL even for 0 elements (UBSan checks it) */
	if (o.n)
		qsort(o.v, o.n, sizeof(*o.v), op_cmp);
	*out = o.v;
	*n = o.n;
	return 0;
}

/* ---- who holds what ----------------------------------------------------- */
struct held {
	struct argus_lock_op acq;   /* the acquisition that took it */
	uint64_t lo, hi;            /* [lo, hi) bytes; hi END_OF_FILE */
	bool flock;                 /* family: flock, or fcntl */
};

struct lstate {
	struct held *v;
	uint32_t n, cap;
	/* process exits: pid -> ts (UINT64_MAX alive), cached */
	struct { uint32_t pid; uint64_t ts; } *ex;
	uint32_t nex, capex;
};

static uint64_t range_hi(uint64_t start, uint64_t len)
{
	return len == ARGUS_LOCK_EOF || start + len < start ? END_OF_FILE : start + len;
}

static bool conflicts(uint8_t a, uint8_t b)
{
	return a == ARGUS_LOCK_EXCL || b == ARGUS_LOCK_EXCL;
}

/* When process pid exited: the end of its last thread, if every thread of
 * it that the graph has exited; UINT64_MAX otherwise. */
static uint64_t proc_exit(const struct argus_graph *g, struct lstate *st, uint32_t pid)
{
	uint64_t when = 0;
	uint32_t i;

	for (i = 0; i < st->nex; i++)
		if (st->ex[i].pid == pid)
			return st->ex[i].ts;
	for (uint32_t t = 0; t < argus_graph__nthreads(g) && when != UINT64_MAX; t++) {
		const uint32_t *ids;
		const struct argus_segment *s;
		uint32_t n;

		if (argus_graph__thread(g, t)->pid != pid)
			continue;
		n = argus_graph__thread_segments(g, t, &ids);
		s = n ? argus_graph__segment(g, ids[n - 1]) : NULL;
		if (!s || s->end_reason != ARGUS_END_EXIT)
			when = UINT64_MAX;      /* a thread still alive */
		else if (s->end > when)
			when = s->end;
	}
	if (!when)
		when = UINT64_MAX;      /* no thread of it in the graph */
	if (st->nex == st->capex) {
		uint32_t cap = st->capex ? st->capex * 2 : 16;
		void *v = realloc(st->ex, cap * sizeof(*st->ex));

		if (!v)
			return when;    /* uncached: asked again next time */
		st->ex = v;
		st->capex = cap;
	}
	st->ex[st->nex].pid = pid;
	st->ex[st->nex++].ts = when;
	return when;
}

static int held_add(struct lstate *st, const struct held *h)
{
	if (st->n == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 16;
		struct held *v = realloc(st->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	st->v[st->n++] = *h;
	return 0;
}

/* Remove [lo, hi) from held lock i, which overlaps it: it shrinks, splits
 * in two, or goes. */
static int held_cut(struct lstate *st, uint32_t i, uint64_t lo, uint64_t hi)
{
	struct held *h = &st->v[i];

	if (lo > h->lo && hi < h->hi) {         /* split: keep both ends */
		struct held right = *h;

		right.lo = hi;
		h->hi = lo;
		return held_add(st, &right);
	}
	if (lo > h->lo)
		h->hi = lo;
	else if (hi < h->hi)
		h->lo = hi;
	else
		st->v[i] = st->v[--st->n];      /* all of it: the caller
		                                   looks at slot i again */
	return 0;
}

/* Replay one successful attempt. */
static int lock_apply(struct lstate *st, const struct argus_lock_op *op)
{
	bool fl = op->kind == ARGUS_LOCK_FLOCK;
	uint64_t lo = op->start, hi = range_hi(op->start, op->len);
	uint32_t i = 0;
	int rc;

	if (fl) {
		lo = 0;
		hi = END_OF_FILE;
	}
	while (i < st->n) {
		const struct held *h = &st->v[i];
		bool whole = lo <= h->lo && hi >= h->hi;

		/* its own lock over the range (unlock, conversion), or another
		 * process's conflicting one, which the kernel must have seen
		 * go since it granted this: cut the range out of it */
		if (h->flock != fl || h->hi <= lo || h->lo >= hi ||
		    (h->acq.pid != op->pid &&
		     (op->op == ARGUS_LOCK_UNLOCK || !conflicts(h->acq.op, op->op)))) {
			i++;
			continue;
		}
		if ((rc = held_cut(st, i, lo, hi)))
			return rc;
		if (!whole)
			i++;    /* shrunk, or split with its right part appended
			           (outside the range): slot i is done; a whole
			           cut moved the last lock into slot i */
	}
	if (op->op == ARGUS_LOCK_UNLOCK)
		return 0;
	return held_add(st, &(struct held){ .acq = *op, .lo = lo, .hi = hi, .flock = fl });
}

/* Drop the locks of processes that exited at or before ts. */
static void lock_exits(const struct argus_graph *g, struct lstate *st, uint64_t ts)
{
	for (uint32_t i = 0; i < st->n;) {
		if (proc_exit(g, st, st->v[i].acq.pid) <= ts)
			st->v[i] = st->v[--st->n];
		else
			i++;
	}
}

/*
 * The locks held on `file` at ts, replayed from every thread's successful
 * attempts (see the top of the file) into *st.
 */
static int lock_state(const struct argus_graph *g, uint64_t file, uint64_t ts,
		      struct lstate *st)
{
	struct opvec o = { 0 };
	int rc = 0;

	for (uint32_t t = 0; t < argus_graph__nthreads(g) && !rc; t++)
		rc = thread_ops(g, t, 0, ts, file, &o);
	if (!rc && o.n)
		qsort(o.v, o.n, sizeof(*o.v), op_cmp);
	for (uint32_t i = 0; i < o.n && !rc; i++) {
		if (o.v[i].ret != 0 || !o.v[i].op)
			continue;   /* refused, still waiting, or unknown */
		lock_exits(g, st, o.v[i].ts);
		rc = lock_apply(st, &o.v[i]);
	}
	if (!rc)
		lock_exits(g, st, ts);
	free(o.v);
	return rc;
}

static void lstate_free(struct lstate *st)
{
	free(st->v);
	free(st->ex);
}

/* The latest acquisition among the held locks that conflict with a
 * request (op, family, [lo, hi)) of a process other than not_pid. */
static int pick_holder(const struct lstate *st, uint32_t not_pid, uint8_t op, int family,
		       uint64_t lo, uint64_t hi, struct argus_lock_op *h)
{
	const struct held *best = NULL;

	for (uint32_t i = 0; i < st->n; i++) {
		const struct held *x = &st->v[i];

		if (x->acq.pid == not_pid || x->hi <= lo || x->lo >= hi)
			continue;
		if (family >= 0 && x->flock != (family == 1))
			continue;
		if (op == ARGUS_LOCK_SHARED && x->acq.op != ARGUS_LOCK_EXCL)
			continue;
		if (!best || x->acq.ts > best->acq.ts)
			best = x;
	}
	if (!best)
		return -ENOENT;
	*h = best->acq;
	return 0;
}

int argus_diag__lock_holder(const struct argus_graph *g, uint64_t file, uint64_t ts,
			    uint32_t not_pid, uint8_t op, struct argus_lock_op *h)
{
	struct lstate st = { 0 };
	int rc;

	if (!g || !h || !file)
		return -EINVAL;
	rc = lock_state(g, file, ts, &st);
	if (!rc)
		rc = pick_holder(&st, not_pid, op, -1, 0, END_OF_FILE, h);
	lstate_free(&st);
	return rc;
}

int argus_diag__lock_blocker(const struct argus_graph *g, const struct argus_lock_op *a,
			     struct argus_lock_op *h)
{
	struct lstate st = { 0 };
	bool fl;
	int rc;

	if (!g || !a || !h || !a->file)
		return -EINVAL;
	fl = a->kind == ARGUS_LOCK_FLOCK;
	rc = lock_state(g, a->file, a->ts, &st);
	if (!rc)
		rc = pick_holder(&st, a->pid, a->op, fl ? 1 : 0, fl ? 0 : a->start,
				 fl ? END_OF_FILE : range_hi(a->start, a->len), h);
	lstate_free(&st);
	return rc;
}
