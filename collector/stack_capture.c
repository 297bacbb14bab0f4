/* stack_capture.c - see stack_capture.h.
 *
 * Per-process state lives in a small open-addressed table keyed by pid:
 * the executable mappings (proc_maps.h) as last read, and when.  Entries
 * are dropped on exec/exit (forget) or when the table is full (the whole
 * table is cleared: maps are cheap to read again, and correctness does not
 * depend on the cache).
 *
 * The raw tail comes from BPF but its sizes are still checked against the
 * record: a short or inconsistent tail yields no stack, never a bad read.
 *
 * Memory: each process's maps are capped by proc_maps.h, and all the maps
 * held here (live and retired) by MAPS_BYTES_MAX: past it the oldest
 * retired maps go first, then a new read is not kept (its stacks stay
 * unsymbolized) and counted as dropped.  A process whose maps hit the caps
 * is re-read at most every REREAD_CAPPED_NS: reading a 4 MiB maps file ten
 * times a second per process was most of a flood's CPU.
 *
 * When a stack's ip is outside the maps held (a miss), they are read
 * again, at most every REREAD_NS; but a process that maps code and runs it
 * at once (dlopen, then a call that blocks) must not wait out the gap: a
 * child sampled in fork() and blocked 10 ms later in code it had just
 * mmap()ed was never read with that mapping, and all its later stacks hit
 * the old maps.  So within the gap a miss still reads, up to MISS_BURST
 * times per REREAD_NS, as long as the last read found the ip it was made
 * for.  Code outside every file mapping (a JIT's, which maps do not list)
 * misses for ever: after a read that did not find its ip, the gap holds
 * again.  Per process that bounds reads at (1 + MISS_BURST) per REREAD_NS.
 */
#include "stack_capture.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elf_guard.h"
#include "proc_maps.h"
#include "unwind.h"
#include "unwind_helper.h"

#define PROC_SLOTS 1024           /* power of two */
#define REREAD_NS (100ull * 1000 * 1000)
#define REREAD_CAPPED_NS (2000ull * 1000 * 1000)
#define MISS_BURST 4              /* reads inside the gap, per REREAD_NS */
#define MAPS_BYTES_MAX (64ull << 20)

struct proc_entry {
	uint32_t pid;                 /* 0 = empty */
	uint64_t read_ts;             /* trace time of the last read (or the
	                                 parent's, for an inherited copy) */
	uint64_t map_ts;              /* the date the maps get in the trace:
	                                 read_ts, or the fork for a copy */
	struct argus_proc_map *maps;
	size_t nmaps;
	uint32_t parent;              /* forked from it, maps not taken yet */
	uint64_t fork_ts;
	bool copied;                  /* maps are the parent's copy: the first
	                                 miss re-reads without the throttle */
	bool capped;                  /* the last read hit the caps */
	bool unresolved;              /* the last read did not hold the ip
	                                 it was made for (JIT code) */
	uint8_t burst;                /* reads inside the gap since burst_ts */
	uint64_t burst_ts;
};

/* Maps of a process that exited or exec'd, kept for the chunks still to
 * be cut: its last events may not have reached a chunk yet, and without
 * its maps their stacks could not be symbolized (a process that lived
 * less than a chunk had none at all). */
struct retired {
	uint32_t pid;
	uint32_t age;                 /* chunk cuts since it was retired */
	uint64_t read_ts;
	struct argus_proc_map *maps;
	size_t nmaps;
};

#define RETIRED_MAX 4096          /* beyond: the oldest go first */
#define RETIRED_CUTS 2            /* kept for this many chunk cuts */

struct stack_capture {
	bool unwind;
	/* one of the two: the helper's client (the default), or, with
	 * ARGUS_UNWIND_INPROCESS=1 in the environment (to measure what the
	 * helper costs), libdwfl in this very process as before */
	struct argus_unwind_client *client;
	struct argus_unwinder *unwinder;
	struct proc_entry slots[PROC_SLOTS];
	uint32_t used;
	uint64_t unwound;
	struct retired *ret;          /* oldest first */
	size_t nret, ret_cap;
	uint64_t bytes;               /* of every maps array held, with paths */
	uint64_t freed;               /* bytes of maps (and big read buffers)
	                                 freed since the last malloc_trim() */
	uint64_t trim_ns;             /* CLOCK_MONOTONIC of the last trim */
	uint64_t trims;
};

static uint64_t maps_bytes(const struct argus_proc_map *maps, size_t n)
{
	uint64_t b = n * sizeof(*maps);

	for (size_t i = 0; i < n; i++)
		b += strlen(maps[i].path) + 1;
	return b;
}

struct stack_capture *stack_capture__new(bool unwind)
{
	struct stack_capture *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->unwind = unwind;
	if (unwind) {
		const char *inproc = getenv("ARGUS_UNWIND_INPROCESS");

		if (inproc && !strcmp(inproc, "1"))
			sc->unwinder = argus_unwinder__new();
		else
			sc->client = argus_unwind_client__new();
		if (!sc->unwinder && !sc->client) {
			free(sc);
			return NULL;
		}
	}
	return sc;
}

static void clear_entry(struct stack_capture *sc, struct proc_entry *e)
{
	sc->bytes -= maps_bytes(e->maps, e->nmaps);
	sc->freed += maps_bytes(e->maps, e->nmaps);
	argus_proc_maps__free(e->maps, e->nmaps);
	memset(e, 0, sizeof(*e));
}

static void clear_all(struct stack_capture *sc)
{
	for (int i = 0; i < PROC_SLOTS; i++)
		if (sc->slots[i].pid)
			clear_entry(sc, &sc->slots[i]);
	sc->used = 0;
}

static void retired_drop(struct stack_capture *sc, size_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		sc->bytes -= maps_bytes(sc->ret[i].maps, sc->ret[i].nmaps);
		sc->freed += maps_bytes(sc->ret[i].maps, sc->ret[i].nmaps);
		argus_proc_maps__free(sc->ret[i].maps, sc->ret[i].nmaps);
	}
	memmove(sc->ret, sc->ret + n, (sc->nret - n) * sizeof(*sc->ret));
	sc->nret -= n;
}

/* Keep e's maps as retired (ownership moves); freed if that fails. */
static void retire(struct stack_capture *sc, struct proc_entry *e)
{
	if (!e->nmaps) {
		argus_proc_maps__free(e->maps, 0);
		return;
	}
	if (sc->nret == RETIRED_MAX)
		retired_drop(sc, 1);
	if (sc->nret == sc->ret_cap) {
		size_t cap = sc->ret_cap ? sc->ret_cap * 2 : 64;
		struct retired *r = realloc(sc->ret, cap * sizeof(*r));

		if (!r) {
			sc->bytes -= maps_bytes(e->maps, e->nmaps);
			argus_proc_maps__free(e->maps, e->nmaps);
			return;
		}
		sc->ret = r;
		sc->ret_cap = cap;
	}
	sc->ret[sc->nret++] = (struct retired){ e->pid, 0, e->map_ts, e->maps, e->nmaps };
}

/*
 * The slow RSS rise under a flood of processes with huge maps (issue 16)
 * was glibc's heap holding memory that was free: each such process's
 * maps (a read buffer grown to 4 MiB, up to 2,048 entries and 256 KiB of
 * paths) are freed at each re-read (every 2 s while it hits the caps) and
 * two chunks after its exit, between allocations that
 * live on (events held back, the chunk being built), and glibc returns
 * only the top of the heap to the kernel.  The holes stayed resident:
 * after 4 minutes of the flood, 11.5 MB of a 23.5 MB rise was free heap.
 * So when at least TRIM_FREED bytes of maps were freed, at most every
 * TRIM_NS, malloc_trim() gives the free pages back (MADV_DONTNEED on
 * every free page of every arena: 2-5 ms on a 37 MB heap with 5,000
 * holes, so under 0.05% of a CPU at most).
 */
#define TRIM_FREED (8ull << 20)
#define TRIM_NS (10ull * 1000 * 1000 * 1000)

static void trim_heap(struct stack_capture *sc)
{
	struct timespec ts;
	uint64_t now;

	if (sc->freed < TRIM_FREED)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - sc->trim_ns < TRIM_NS)
		return;
	malloc_trim(0);
	sc->trim_ns = now;
	sc->freed = 0;
	sc->trims++;
}

void stack_capture__chunk_cut(struct stack_capture *sc)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->nret; i++)
		sc->ret[i].age++;
	while (n < sc->nret && sc->ret[n].age >= RETIRED_CUTS)
		n++;
	retired_drop(sc, n);
	trim_heap(sc);
	/* once a chunk (a second or so): a few fstat()s */
	if (sc->unwinder)
		argus_unwinder__drop_deleted(sc->unwinder);
	argus_unwind_client__chunk_cut(sc->client);
}

void stack_capture__free(struct stack_capture *sc)
{
	if (!sc)
		return;
	retired_drop(sc, sc->nret);
	free(sc->ret);
	clear_all(sc);
	argus_unwinder__free(sc->unwinder);
	argus_unwind_client__free(sc->client);
	free(sc);
}

/* The table is full: start over, but keep every process's maps as
 * retired, so stacks still waiting for a chunk keep their symbols. */
static void retire_all(struct stack_capture *sc)
{
	for (int i = 0; i < PROC_SLOTS; i++) {
		struct proc_entry *e = &sc->slots[i];

		if (!e->pid)
			continue;
		retire(sc, e);  /* takes e->maps */
		memset(e, 0, sizeof(*e));
	}
	sc->used = 0;
}

static struct proc_entry *find(struct stack_capture *sc, uint32_t pid, bool add)
{
	uint32_t i = (pid * 2654435761u) & (PROC_SLOTS - 1);

	for (uint32_t n = 0; n < PROC_SLOTS; n++, i = (i + 1) & (PROC_SLOTS - 1)) {
		if (sc->slots[i].pid == pid)
			return &sc->slots[i];
		if (!sc->slots[i].pid) {
			if (!add)
				return NULL;
			if (sc->used * 4 >= PROC_SLOTS * 3) {
				retire_all(sc);
				return find(sc, pid, add);
			}
			sc->slots[i].pid = pid;
			sc->used++;
			return &sc->slots[i];
		}
	}
	return NULL;
}

/* Room for `need` more bytes of maps: the oldest retired ones go first.
 * False if there is none even then (the caller drops what it read). */
static bool make_room(struct stack_capture *sc, uint64_t need)
{
	size_t n = 0;
	uint64_t b = sc->bytes;

	for (; b + need > MAPS_BYTES_MAX && n < sc->nret; n++)
		b -= maps_bytes(sc->ret[n].maps, sc->ret[n].nmaps);
	if (b + need > MAPS_BYTES_MAX)
		return false;
	retired_drop(sc, n);
	return true;
}

static void read_maps(struct stack_capture *sc, struct proc_entry *e, uint64_t ts)
{
	struct argus_proc_map *maps = NULL;
	size_t n = 0;
	uint64_t b;
	bool capped = false;

	if (argus_proc_maps__read_capped(e->pid, &maps, &n, &capped))
		return; /* gone: keep what we had */
	/* a capped read grew its buffer to ARGUS_PROC_MAPS_READ_MAX */
	sc->freed += capped ? ARGUS_PROC_MAPS_READ_MAX : 0;
	sc->bytes -= maps_bytes(e->maps, e->nmaps);
	sc->freed += maps_bytes(e->maps, e->nmaps);
	argus_proc_maps__free(e->maps, e->nmaps);
	e->maps = NULL;
	e->nmaps = 0;
	b = maps_bytes(maps, n);
	if (!make_room(sc, b)) {
		argus_guard__count(ARGUS_GUARD_MAPS_DROPPED, n);
		argus_proc_maps__free(maps, n);
		maps = NULL;
		n = 0;
		b = 0;
		capped = true;
	}
	sc->bytes += b;
	e->maps = maps;
	e->nmaps = n;
	e->read_ts = ts;
	e->map_ts = ts;
	e->copied = false;
	e->capped = capped;
}

/* e was forked from a process whose maps are known: take a copy of them,
 * dated from the fork (a reader takes the newest maps of a pid dated at or
 * before an event; older ones could lose to a dead process's that had the
 * same pid).  Only maps the parent read before the fork are what the
 * child started with: ones read later may be of a later layout (dlopen,
 * exec) or of another process that reused the parent's pid, and then the
 * child's own are read.  A stack outside the copy re-reads at once. */
static void take_parents_maps(struct stack_capture *sc, struct proc_entry *e)
{
	struct proc_entry *p = find(sc, e->parent, false);  /* never clears */

	e->parent = 0;
	if (!p || !p->read_ts || p->read_ts > e->fork_ts || !p->nmaps ||
	    !make_room(sc, maps_bytes(p->maps, p->nmaps)) ||
	    argus_proc_maps__dup(p->maps, p->nmaps, &e->maps))
		return;
	sc->bytes += maps_bytes(e->maps, p->nmaps);
	e->nmaps = p->nmaps;
	e->read_ts = p->read_ts;
	e->map_ts = e->fork_ts > p->map_ts ? e->fork_ts : p->map_ts;
	e->copied = true;
}

/* A new image (exec) or a new process on the slot: its misses start over. */
static void forget_misses(struct proc_entry *e)
{
	e->unresolved = false;
	e->burst = 0;
	e->burst_ts = 0;
}

/* An ip outside e's maps at ts: read them again now?  (The header
 * comment says why a miss may read inside the gap, and how often.) */
static bool reread_on_miss(struct proc_entry *e, uint64_t ts)
{
	if (e->copied || ts > e->read_ts + (e->capped ? REREAD_CAPPED_NS : REREAD_NS))
		return true;
	if (e->capped || e->unresolved)
		return false;
	if (ts > e->burst_ts + REREAD_NS) {
		e->burst_ts = ts;
		e->burst = 0;
	}
	if (e->burst >= MISS_BURST)
		return false;
	e->burst++;
	return true;
}

/* The maps of pid, re-read when ip is outside all of them (dlopen, JIT). */
static struct proc_entry *maps_for(struct stack_capture *sc, uint32_t pid,
				   uint64_t ts, uint64_t ip)
{
	struct proc_entry *e = find(sc, pid, true);

	if (!e)
		return NULL;
	if (!e->read_ts && e->parent)
		take_parents_maps(sc, e);
	if (!e->read_ts ||
	    (ip && !argus_proc_maps__find(e->maps, e->nmaps, ip) && reread_on_miss(e, ts))) {
		read_maps(sc, e, ts);
		e->unresolved = ip && !argus_proc_maps__find(e->maps, e->nmaps, ip);
	}
	return e;
}

int stack_capture__resolve(struct stack_capture *sc, uint32_t pid, uint64_t ts,
			   const struct ae_ustack *us, size_t avail,
			   uint64_t *out, int max)
{
	const uint64_t *fp;
	const uint8_t *copy;
	int n = 0;

	if (avail < sizeof(*us) || us->nr_ips > AE_MAX_USTACK ||
	    us->copy_len > AE_MAX_STACK_COPY ||
	    avail < sizeof(*us) + us->nr_ips * 8ul + us->copy_len || max < 1)
		return 0;
	fp = (const uint64_t *)(us + 1);
	copy = (const uint8_t *)(fp + us->nr_ips);

	for (int i = 0; i < us->nr_ips && n < max; i++)
		if (fp[i])
			out[n++] = fp[i];
	if (!n && us->ip)
		out[n++] = us->ip;
	if (!n)
		return 0;

	struct proc_entry *e = maps_for(sc, pid, ts, us->ip ? us->ip : out[0]);
	/* Frame pointers stop early in code built without them: when a copy of
	 * the stack came along, unwind with CFI and keep the deeper answer. */
	if (sc->unwind && e && e->nmaps && us->copy_len && us->ip && us->sp) {
		uint64_t dw[64];
		/* a helper that failed leaves m < 0: the frame-pointer frames
		 * stand */
		int m = sc->client ?
			argus_unwind_client__unwind(sc->client, pid, e->maps, e->nmaps,
						    us->ip, us->sp, us->bp, copy,
						    us->copy_len, dw, max < 64 ? max : 64) :
			argus_unwinder__unwind(sc->unwinder, pid, e->maps, e->nmaps,
					       us->ip, us->sp, us->bp, copy,
					       us->copy_len, dw,
					       max < 64 ? max : 64);
		if (m > n) {
			memcpy(out, dw, (size_t)m * sizeof(uint64_t));
			n = m;
			sc->unwound++;
		}
	}
	return n;
}

void stack_capture__forget(struct stack_capture *sc, uint32_t pid)
{
	struct proc_entry *e = find(sc, pid, false);

	if (!e)
		return;
	/* Clearing would break the probe chain; keep the slot, retire the
	 * data. */
	retire(sc, e);
	e->maps = NULL;
	e->nmaps = 0;
	e->read_ts = 0;
	e->map_ts = 0;
	e->parent = 0;
	forget_misses(e);
}

void stack_capture__inherit(struct stack_capture *sc, uint32_t parent,
			    uint32_t child, uint64_t ts)
{
	struct proc_entry *c;

	if (parent == child || !(c = find(sc, child, true)))
		return;
	/* only noted: most children exec before their first stack, and a
	 * copy per fork would be thrown away at the exec */
	retire(sc, c);
	c->maps = NULL;
	c->nmaps = 0;
	c->read_ts = c->map_ts = 0;
	c->parent = parent;
	c->fork_ts = ts;
	forget_misses(c);
}

void stack_capture__maps(struct stack_capture *sc, uint32_t pid,
			 stack_capture_map_fn fn, void *ctx)
{
	struct proc_entry *e = find(sc, pid, false);

	for (size_t r = 0; r < sc->nret; r++) {
		const struct retired *x = &sc->ret[r];

		for (size_t i = 0; x->pid == pid && i < x->nmaps; i++)
			fn(ctx, pid, x->read_ts, x->maps[i].start, x->maps[i].end,
			   x->maps[i].pgoff, x->maps[i].path, x->maps[i].build_id,
			   x->maps[i].build_id_len);
	}
	if (!e)
		return;
	for (size_t i = 0; i < e->nmaps; i++) {
		const struct argus_proc_map *m = &e->maps[i];
		fn(ctx, pid, e->map_ts, m->start, m->end, m->pgoff, m->path,
		   m->build_id, m->build_id_len);
	}
}

uint64_t stack_capture__memo_hits(const struct stack_capture *sc)
{
	struct argus_unwind_client_stats cs;
	struct argus_unwinder_stats st;

	argus_unwinder__stats(sc->unwinder, &st);
	argus_unwind_client__stats(sc->client, &cs);
	return st.memo_hits + cs.memo_hits;
}

void stack_capture__helper(const struct stack_capture *sc, uint64_t *restarts,
			   int *pid, uint64_t *wait_ns, uint64_t *wait_max_ns)
{
	struct argus_unwind_client_stats cs;

	argus_unwind_client__stats(sc->client, &cs);
	*restarts = cs.restarts;
	*pid = cs.pid;
	*wait_ns = cs.wait_ns;
	*wait_max_ns = cs.wait_max_ns;
}

uint64_t stack_capture__unwound(const struct stack_capture *sc)
{
	return sc->unwound;
}

double stack_capture__helper_cpu(const struct stack_capture *sc)
{
	return argus_unwind_client__cpu_seconds(sc->client);
}

bool stack_capture__is_helper(const struct stack_capture *sc, uint32_t pid)
{
	return argus_unwind_client__is_helper(sc->client, pid);
}
