/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_analysis.c - reading a step recording: the loop a thread spins in,
 * the inputs of a branch's condition, the first divergence of two
 * recordings, and the flag a spin waits for (BRIEF §1 "Data-flag flow":
 * where control flow diverges, and the registers and memory behind it).
 *
 * Call depth: +1 after a call, -1 after a ret, from the recording's first
 * instruction.  The loop's frame is the shallowest one the thread stays in
 * to the end of the recording and turns in (find_loop); its back edge is a
 * taken branch at that depth whose target is not above it.
 * Callees (sched_yield, nanosleep, the vDSO's clock_gettime) run deeper
 * and are inside the loop without being its structure; only branches of
 * the loop's own frame are its exits.
 *
 * Inputs of a conditional branch: dynamic data flow, backwards from the
 * branch over the recorded instructions.  Start with the registers the
 * branch reads (eflags for a jcc); an instruction writing one of them
 * feeds the branch: its memory reads are inputs, and the registers it
 * reads as data (not those that only form an address) are followed in
 * turn, for at most FEED_MAX instructions within SCAN_MAX back.  Memory a
 * feeder reads that the thread itself wrote within that window is a slot
 * the value passed through, not an input: the last earlier instruction
 * that wrote it feeds the branch.  Unoptimized code (-O0, what a debug
 * build runs) passes every value through a stack slot:
 *   mov eax, [display_done]; mov [rbp-0x1c], eax; mov eax, [rbp-0x1c];
 *   test eax, eax; jne out
 *
 * The flag: of the loop's exit branches (taken the same way every time,
 * the other way leading out of the loop's address range), the one whose
 * inputs read memory this thread does not write in its loop (nor before
 * it on its own stack: self_written); memory
 * whose value never changed in the recording first (a clock changes),
 * then memory away from the stack.  A loop that reads a deadline or counter it
 * writes itself (`*timed_out = now >= end`) is ruled out that way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "step_internal.h"

#define SCAN_MAX 512
#define SEEN_MAX 256      /* distinct branches of the loop's frame judged */
#define FEED_MAX 16
#define SLOT_MAX 8        /* stack slots followed at once */
#define STACK_NEAR (8u << 20)   /* within 8 MiB of rsp: stack memory */

/* --- decoded instructions by address ---------------------------------- */

struct dtab {
	uint64_t *key;
	struct step_decoded *val;
	bool *used;
	size_t cap;
};

static int dtab_init(struct dtab *t, size_t n)
{
	t->cap = 64;
	while (t->cap < 2 * n)
		t->cap *= 2;
	if (t->cap > (1u << 20))   /* distinct addresses are far fewer */
		t->cap = 1u << 20;
	t->key = calloc(t->cap, sizeof(*t->key));
	t->val = calloc(t->cap, sizeof(*t->val));
	t->used = calloc(t->cap, sizeof(*t->used));
	return t->key && t->val && t->used ? 0 : -ENOMEM;
}

static void dtab_free(struct dtab *t)
{
	free(t->key);
	free(t->val);
	free(t->used);
}

/* The decode of in (a static empty one when the table is full). */
static const struct step_decoded *dget(struct dtab *t, const struct argus_step_insn *in)
{
	static struct step_decoded none;
	size_t h = (in->addr * 0x9e3779b97f4a7c15ull) >> 20;

	for (size_t k = 0; k < t->cap; k++) {
		size_t i = (h + k) & (t->cap - 1);

		if (t->used[i] && t->key[i] == in->addr)
			return &t->val[i];
		if (!t->used[i]) {
			t->used[i] = true;
			t->key[i] = in->addr;
			if (!in->len || step_decode_full(in->bytes, in->len, in->addr, &t->val[i]))
				memset(&t->val[i], 0, sizeof(t->val[i]));
			return &t->val[i];
		}
	}
	return &none;
}

/* --- depth and loops --------------------------------------------------- */

static long *depths(const struct argus_step_rec *r)
{
	size_t n = argus_step_rec__count(r);
	long *d = malloc((n + 1) * sizeof(*d));
	long cur = 0;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);

		d[i] = cur;
		if (in->kind & ARGUS_STEP_K_CALL)
			cur++;
		else if (in->kind & ARGUS_STEP_K_RET)
			cur--;
	}
	d[n] = cur;
	return d;
}

static bool taken(const struct argus_step_rec *r, size_t i)
{
	const struct argus_step_insn *in = argus_step_rec__insn(r, i);
	const struct argus_step_insn *nx = argus_step_rec__insn(r, i + 1);

	return nx && nx->addr != in->addr + in->len;
}

/*
 * The loop the recording ends in; *first = index of its head's first run.
 *
 * Only a frame still on the stack at the end can be the loop the thread
 * spins in now, and only from the moment it stays there: sm[i], the
 * shallowest depth of instructions i..n-1, is that frame for instruction
 * i, and instruction i belongs to it when d[i] == sm[i] (its "level").
 *
 * The loop is the recording's shallowest frame's, as long as that frame
 * has one: a callee's loop (vfprintf's over its format, in a spin that
 * logs) must not pass for the spin.  But a user attaches at any moment:
 * the recording may begin in poll() waiting for the next input, return to
 * main's loop and only then enter the spin, and main's frame, the
 * shallowest, has no back edge at all (lldb attached at the end of case
 * study 3's hang stepped 10 K instructions for 30 s and found no loop).
 * Then a deeper level's loop counts once it has come round DEEP_TURNS
 * times in that frame, far more than a callee's loop makes in one call as
 * a rule.
 *
 * A level's back edge: a taken jump at its depth, within one function (a
 * tail call jumps back to another function's entry: apply_display_settings
 * ends with `jmp wait_for_display_flag`), to an address not above it.  Of
 * a level's back edges, the outermost (widest) of those that came round
 * at least twice, else the widest.  near: when not ~0, a loop around that
 * address wins, in the shallowest level that has one.
 */
#define DEEP_TURNS 16
#define LEVEL_EDGES 8   /* distinct back edges kept per level */

struct edge {
	size_t at;                  /* index of its first run */
	uint64_t span;
	uint32_t turns;
	bool near;
};

struct level {
	struct edge e[LEVEL_EDGES];
	unsigned ne;
	const struct edge *best;
};

static bool better_edge(const struct edge *a, const struct edge *b)
{
	if (a->near != b->near)
		return a->near;
	if ((a->turns >= 2) != (b->turns >= 2))
		return a->turns >= 2;
	return a->span > b->span;
}

static const struct level *pick_level(const struct level *lv, size_t nl, uint64_t near)
{
	for (size_t k = 0; near != ~0ull && k < nl; k++)
		if (lv[k].best && lv[k].best->near)
			return &lv[k];
	if (lv[0].best)
		return &lv[0];
	for (size_t k = 1; k < nl; k++)
		if (lv[k].best && lv[k].best->turns >= DEEP_TURNS)
			return &lv[k];
	return NULL;
}

static int find_loop(const struct argus_step_rec *r, const long *d, uint64_t near,
		     struct argus_step_loop *out, size_t *first)
{
	size_t n = argus_step_rec__count(r), nl, h1 = SIZE_MAX, h2 = SIZE_MAX;
	const struct level *p;
	struct level *lv;
	long *sm, gmin, gmax, mind;

	if (n < 2)
		return -ENOENT;
	sm = malloc(n * sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	sm[n - 1] = gmax = d[n - 1];
	for (size_t i = n - 1; i-- > 0;) {
		sm[i] = d[i] < sm[i + 1] ? d[i] : sm[i + 1];
		if (d[i] > gmax)
			gmax = d[i];
	}
	gmin = sm[0];
	nl = (size_t)(gmax - gmin) + 1;
	lv = calloc(nl, sizeof(*lv));
	if (!lv) {
		free(sm);
		return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < n; i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);
		const struct argus_step_insn *nx = argus_step_rec__insn(r, i + 1);
		struct level *l = &lv[d[i] - gmin];
		struct edge *e = NULL;

		if (d[i] != sm[i] || d[i + 1] != d[i] ||
		    !(in->kind & (ARGUS_STEP_K_JCC | ARGUS_STEP_K_JMP)) || nx->addr > in->addr ||
		    (in->sym >= 0 && nx->sym >= 0 && in->sym != nx->sym))
			continue;
		for (unsigned k = 0; k < l->ne && !e; k++)
			if (argus_step_rec__insn(r, l->e[k].at)->addr == in->addr &&
			    argus_step_rec__insn(r, l->e[k].at + 1)->addr == nx->addr)
				e = &l->e[k];
		if (!e) {
			if (l->ne == LEVEL_EDGES)
				continue;
			e = &l->e[l->ne++];
			e->at = i;
			e->span = in->addr - nx->addr;
			e->near = near != ~0ull && near >= nx->addr && near <= in->addr;
		}
		e->turns++;
	}
	free(sm);
	for (size_t k = 0; k < nl; k++)
		for (unsigned j = 0; j < lv[k].ne; j++)
			if (!lv[k].best || better_edge(&lv[k].e[j], lv[k].best))
				lv[k].best = &lv[k].e[j];
	p = pick_level(lv, nl, near);
	if (!p) {
		free(lv);
		return -ENOENT;
	}
	mind = d[p->best->at];
	memset(out, 0, sizeof(*out));
	out->latch = argus_step_rec__insn(r, p->best->at)->addr;
	out->head = argus_step_rec__insn(r, p->best->at + 1)->addr;
	out->body_lo = out->head;
	out->body_hi = out->latch;
	out->depth = (uint32_t)(mind - gmin);
	free(lv);
	/* the head's runs in the loop's frame, from when the thread stays in
	 * it: the first two bound one turn */
	for (size_t i = n; i-- > 0 && d[i] >= mind;)
		if (d[i] == mind && argus_step_rec__insn(r, i)->addr == out->head) {
			out->iterations++;
			h2 = h1;
			h1 = i;
		}
	*first = h1;
	/* the frame's addresses the loop runs; instructions per turn */
	if (h1 != SIZE_MAX)
		for (size_t i = h1; i < (h2 == SIZE_MAX ? n : h2); i++) {
			const struct argus_step_insn *in = argus_step_rec__insn(r, i);

			out->body_insns++;
			if (d[i] == mind && in->addr > out->body_hi && in->addr < out->head + (1u << 16))
				out->body_hi = in->addr;
		}
	return 0;
}

int argus_step_rec__loop(const struct argus_step_rec *r, struct argus_step_loop *out)
{
	long *d;
	size_t first;
	int rc;

	if (!r || !out)
		return -EINVAL;
	d = depths(r);
	if (!d)
		return -ENOMEM;
	rc = find_loop(r, d, ~0ull, out, &first);
	free(d);
	return rc;
}

/* --- inputs of a branch ------------------------------------------------ */

static bool on_stack(const struct argus_step_rec *r, size_t at, uint64_t addr);

/*
 * Whether the thread itself writes [addr, addr+size), read at index at:
 * anywhere from index from on (the loop's first turn; 0: the whole
 * recording), or before that on its own stack (a local the loop reads,
 * such as an -O0 deadline).  Memory off the stack written only before the
 * loop stays a candidate: a spin often clears its flag before it waits
 * (`done = 0; send(request); while (!done) yield();`), and another
 * thread sets it.
 */
static bool self_written(const struct argus_step_rec *r, size_t from, size_t at, uint64_t addr,
			 uint16_t size)
{
	size_t n = argus_step_rec__count(r);

	for (size_t i = 0; i < n; i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);

		for (unsigned k = 0; k < in->nmem; k++) {
			const struct argus_step_mem *m = &in->mem[k];

			if ((m->access & ARGUS_STEP_MEM_WRITE) && m->addr < addr + size &&
			    addr < m->addr + m->size && (i >= from || on_stack(r, at, addr)))
				return true;
		}
	}
	return false;
}

/* Whether an instruction in [from, j) wrote memory overlapping addr. */
static bool written_since(const struct argus_step_rec *r, size_t j, size_t from, uint64_t addr,
			  uint16_t size)
{
	while (j-- > from) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, j);

		for (unsigned k = 0; k < in->nmem; k++)
			if ((in->mem[k].access & ARGUS_STEP_MEM_WRITE) &&
			    in->mem[k].addr < addr + size && addr < in->mem[k].addr + in->mem[k].size)
				return true;
	}
	return false;
}

static int inputs_at(const struct argus_step_rec *r, struct dtab *t, size_t i, size_t from,
		     struct argus_step_input *out, size_t max)
{
	const struct step_decoded *bd = dget(t, argus_step_rec__insn(r, i));
	struct argus_step_input mem[ARGUS_STEP_MAX_INPUTS], reg[ARGUS_STEP_MAX_INPUTS];
	struct slot { uint64_t addr; uint16_t size; } slots[SLOT_MAX];
	size_t nm = 0, nr = 0, feeders = 0, setter = SIZE_MAX, nslots = 0;
	uint32_t need = 0;
	int n = 0;

	if (!(argus_step_rec__insn(r, i)->kind & ARGUS_STEP_K_JCC))
		return -EINVAL;
	for (unsigned k = 0; k < bd->nrd; k++)
		need |= 1u << bd->rd[k];
	for (size_t j = i; j-- > 0 && (need || nslots) && i - j <= SCAN_MAX && feeders < FEED_MAX;) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, j);
		const struct step_decoded *dd = dget(t, in);
		uint32_t w = 0, data = 0, addr = 0;
		bool wrote_slot = false;

		for (unsigned k = 0; k < dd->nwr; k++)
			w |= 1u << dd->wr[k];
		/* a write to a stack slot the branch's value passed through */
		for (unsigned k = 0; k < in->nmem; k++) {
			const struct argus_step_mem *m = &in->mem[k];

			if (!(m->access & ARGUS_STEP_MEM_WRITE))
				continue;
			for (size_t q = 0; q < nslots; q++)
				if (m->addr < slots[q].addr + slots[q].size &&
				    slots[q].addr < m->addr + m->size) {
					slots[q] = slots[--nslots];
					wrote_slot = true;
					break;
				}
		}
		if (!(w & need) && !wrote_slot)
			continue;
		feeders++;
		need &= ~w;
		if (setter == SIZE_MAX)
			setter = j;
		for (unsigned k = 0; k < dd->naddr; k++)
			addr |= 1u << dd->addr_rd[k];
		for (unsigned k = 0; k < dd->nrd; k++)
			data |= 1u << dd->rd[k];
		data &= ~addr;
		/* xor eax, eax and friends read nothing */
		if (dd->nrd == 1 && dd->nwr >= 1 && !in->nmem &&
		    (!strncmp(in->text, "xor ", 4) || !strncmp(in->text, "sub ", 4))) {
			const char *c = strchr(in->text, ',');

			if (c && !strncmp(in->text + 4, c + 2, (size_t)(c - in->text - 4)))
				data = 0;
		}
		for (unsigned k = 0; k < in->nmem && nm < ARGUS_STEP_MAX_INPUTS; k++) {
			const struct argus_step_mem *m = &in->mem[k];
			bool implicit;

			if (!(m->access & ARGUS_STEP_MEM_READ))
				continue;
			implicit = k < dd->nmemop && dd->memop[k].stack;
			/* a slot this thread stored the value in moments ago
			 * (a spill, an -O0 local, push/pop) passes it on; it is
			 * listed (self-written) unless push/pop's */
			if (implicit || written_since(r, j, i > SCAN_MAX ? i - SCAN_MAX : 0, m->addr,
						      m->size)) {
				if (nslots < SLOT_MAX) {
					slots[nslots].addr = m->addr;
					slots[nslots].size = m->size;
					nslots++;
				}
				if (implicit)
					continue;
			}
			mem[nm].is_mem = true;
			mem[nm].addr = m->addr;
			mem[nm].size = m->size;
			mem[nm].value = m->before;
			mem[nm].at = j;
			mem[nm].reg = 0;
			mem[nm].self_written = self_written(r, from, j, m->addr, m->size);
			nm++;
		}
		/* the registers the flag setter compares, with their values */
		if (j == setter) {
			struct argus_step_regs regs;

			argus_step_rec__regs_at(r, j, &regs);
			for (unsigned k = 0; k < ARGUS_STEP_NREGS && nr < ARGUS_STEP_MAX_INPUTS; k++) {
				if (!(data & (1u << k)) || k == ARGUS_REG_EFLAGS)
					continue;
				memset(&reg[nr], 0, sizeof(reg[nr]));
				reg[nr].reg = (uint8_t)k;
				reg[nr].value = regs.r[k];
				reg[nr].at = j;
				nr++;
			}
		}
		need |= data;
	}
	for (size_t k = 0; k < nm && (size_t)n < max; k++)
		out[n++] = mem[k];
	for (size_t k = 0; k < nr && (size_t)n < max; k++)
		out[n++] = reg[k];
	return n;
}

int argus_step_rec__branch_inputs(const struct argus_step_rec *r, size_t i,
				  struct argus_step_input *out, size_t max)
{
	struct dtab t;
	int rc;

	if (!r || !out || i >= argus_step_rec__count(r))
		return -EINVAL;
	rc = dtab_init(&t, 1024);
	if (!rc)
		rc = inputs_at(r, &t, i, 0, out, max);
	dtab_free(&t);
	return rc;
}

/* --- the flag ---------------------------------------------------------- */

static bool on_stack(const struct argus_step_rec *r, size_t at, uint64_t addr)
{
	struct argus_step_regs regs;
	uint64_t sp;

	argus_step_rec__regs_at(r, at, &regs);
	sp = regs.r[ARGUS_REG_RSP];
	return addr + STACK_NEAR > sp && addr < sp + STACK_NEAR;
}

/* Whether every read of [addr, addr+size) in the recording saw the same
 * value.  A flag being waited for has not changed yet; a clock the loop
 * times itself with (the vDSO's data page behind clock_gettime) has. */
static bool reads_constant(const struct argus_step_rec *r, uint64_t addr, uint16_t size)
{
	size_t n = argus_step_rec__count(r);
	bool seen = false;
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);

		for (unsigned k = 0; k < in->nmem; k++) {
			const struct argus_step_mem *m = &in->mem[k];

			if (!(m->access & ARGUS_STEP_MEM_READ) || m->addr != addr || m->size != size ||
			    !(m->valid & ARGUS_STEP_MEM_HAVE_BEFORE))
				continue;
			if (seen && m->before != v)
				return false;
			seen = true;
			v = m->before;
		}
	}
	return true;
}

/* Best memory input of ins[0..n) of the branch at index branch: not
 * written by the thread in its loop; one whose value stayed the same
 * first, then one off the stack, then one the thread never wrote at all,
 * then one read by the branch's own frame (not by a callee such as the
 * vDSO's clock_gettime).  -1 if none. */
static int pick_input(const struct argus_step_rec *r, const long *d, size_t branch,
		      const struct argus_step_input *ins, int n, int *score)
{
	int best = -1, bs = 0;

	for (int k = 0; k < n; k++) {
		int s;

		if (!ins[k].is_mem || ins[k].self_written)
			continue;
		s = 1;
		if (reads_constant(r, ins[k].addr, ins[k].size))
			s += 8;
		if (!on_stack(r, ins[k].at, ins[k].addr))
			s += 4;
		/* never written by the thread, not even before the loop: a
		 * deadline or limit it stored before it starts waiting
		 * (`s->deadline = now + t; while (!s->done && ...)`) is only
		 * a fallback to that */
		if (!self_written(r, 0, ins[k].at, ins[k].addr, ins[k].size))
			s += 2;
		if (d[ins[k].at] == d[branch])
			s += 1;
		if (s > bs) {
			bs = s;
			best = k;
		}
	}
	*score = bs;
	return best;
}

static void fill_flag(const struct argus_step_rec *r, const struct argus_step_input *in,
		      size_t branch, struct argus_step_flag *out)
{
	out->addr = in->addr;
	out->size = in->size;
	out->value = in->value;
	out->insn_index = in->at;
	out->insn_addr = argus_step_rec__insn(r, in->at)->addr;
	out->branch_index = branch;
	out->branch_addr = argus_step_rec__insn(r, branch)->addr;
}

int argus_step_rec__find_flag(const struct argus_step_rec *r, struct argus_step_flag *out)
{
	size_t n, first, best_branch = SIZE_MAX;
	struct argus_step_input best_in = {0};
	struct argus_step_loop loop;
	uint64_t seen_addr[SEEN_MAX];
	size_t nseen = 0;
	int best_score = 0, rc;
	struct dtab t;
	long *d, mind;

	if (!r || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	n = argus_step_rec__count(r);
	d = depths(r);
	if (!d)
		return -ENOMEM;
	rc = find_loop(r, d, ~0ull, &loop, &first);
	if (rc || first == SIZE_MAX) {
		free(d);
		return -ENOENT;
	}
	mind = d[first];
	rc = dtab_init(&t, 4096);
	if (rc) {
		free(d);
		return rc;
	}
	/* Each branch of the loop's frame, judged on its runs after the
	 * head's first run; its last run gives the inputs. */
	for (size_t i = first; i < n; i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);
		struct argus_step_input ins[ARGUS_STEP_MAX_INPUTS];
		bool dir = false, mixed = false, seen = false;
		size_t last = i;
		uint64_t other;
		int k, score, m;

		if (d[i] != mind || !(in->kind & ARGUS_STEP_K_JCC) || i + 1 >= n ||
		    in->addr < loop.body_lo || in->addr > loop.body_hi)
			continue;
		/* first run of this branch only: the loop below sees them all */
		{
			bool earlier = false;

			for (size_t k = 0; k < nseen && !earlier; k++)
				earlier = seen_addr[k] == in->addr;
			if (earlier || nseen == SEEN_MAX)
				continue;
			seen_addr[nseen++] = in->addr;
		}
		for (size_t j = i; j + 1 < n; j++) {
			if (argus_step_rec__insn(r, j)->addr != in->addr || d[j] != mind)
				continue;
			if (seen && taken(r, j) != dir)
				mixed = true;
			dir = taken(r, j);
			seen = true;
			last = j;
		}
		if (mixed)
			continue;
		other = dir ? in->addr + in->len : in->target;
		/* an exit leads out of the loop's range */
		if (!other || (other >= loop.body_lo && other <= loop.body_hi))
			continue;
		m = inputs_at(r, &t, last, first, ins, ARGUS_STEP_MAX_INPUTS);
		k = pick_input(r, d, last, ins, m, &score);
		if (k < 0 || score <= best_score)
			continue;
		best_score = score;
		best_in = ins[k];
		best_branch = last;
	}
	dtab_free(&t);
	free(d);
	out->loop = loop;
	if (best_branch == SIZE_MAX)
		return -ENODATA;
	fill_flag(r, &best_in, best_branch, out);
	return 0;
}

/* --- diff -------------------------------------------------------------- */

/* Where an instruction is, comparable across processes: its function and
 * offset when it has a symbol (two runs of a PIE binary load it at
 * different addresses), else its address. */
static uint64_t code_key(const struct argus_step_rec *r, size_t i)
{
	const struct argus_step_insn *in = argus_step_rec__insn(r, i);
	const char *name = argus_step_rec__string(r, in->sym);
	uint64_t h = 0xcbf29ce484222325ull;

	if (!name)
		return in->addr;
	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 0x100000001b3ull;
	return (h ^ (in->sym_off * 0x9e3779b97f4a7c15ull)) | 1ull << 63;
}

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Anchor at the first instruction of a from a_from whose key b runs at or
 * after b_from, then walk both while the keys agree. */
static void align_from(const struct argus_step_rec *a, const struct argus_step_rec *b,
		       const uint64_t *bset, size_t a_from, size_t b_from,
		       struct argus_step_diff *out)
{
	size_t na = argus_step_rec__count(a), nb = argus_step_rec__count(b), i, j = nb;

	memset(out, 0, sizeof(*out));
	for (i = a_from; i < na; i++) {
		uint64_t x = code_key(a, i);

		if (!bsearch(&x, bset, nb, sizeof(*bset), addr_cmp))
			continue;
		for (j = b_from; j < nb && code_key(b, j) != x; j++)
			;
		if (j < nb)
			break;
	}
	if (i >= na || j >= nb)
		return;
	out->aligned = true;
	out->a_start = i;
	out->b_start = j;
	while (i < na && j < nb && code_key(a, i) == code_key(b, j)) {
		i++;
		j++;
		out->common++;
	}
	out->a_at = i - 1;
	out->b_at = j - 1;
	out->a_next = i < na ? argus_step_rec__insn(a, i)->addr : 0;
	out->b_next = j < nb ? argus_step_rec__insn(b, j)->addr : 0;
	out->diverged = i < na && j < nb;  /* else one ended first */
}

int argus_step_rec__diff(const struct argus_step_rec *a, const struct argus_step_rec *b,
			 struct argus_step_diff *out)
{
	struct argus_step_diff next;
	size_t na, nb, first;
	uint64_t *bset;
	struct dtab t;
	long *d;
	int rc;

	if (!a || !b || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	na = argus_step_rec__count(a);
	nb = argus_step_rec__count(b);
	if (!na || !nb)
		return 0;
	bset = malloc(nb * sizeof(*bset));
	if (!bset)
		return -ENOMEM;
	for (size_t j = 0; j < nb; j++)
		bset[j] = code_key(b, j);
	qsort(bset, nb, sizeof(*bset), addr_cmp);
	rc = dtab_init(&t, 1024);
	if (rc) {
		free(bset);
		return rc;
	}
	align_from(a, b, bset, 0, 0, out);
	/* A recording that starts just before the divergent branch has no
	 * history to find its inputs in: the same branch is met again one
	 * turn later (a loop), with its inputs recorded; try a few turns. */
	for (int tries = 0; out->diverged && tries < 16; tries++) {
		if (argus_step_rec__insn(a, out->a_at)->kind & ARGUS_STEP_K_JCC) {
			out->na = inputs_at(a, &t, out->a_at, 0, out->a_in, ARGUS_STEP_MAX_INPUTS);
			out->nb = inputs_at(b, &t, out->b_at, 0, out->b_in, ARGUS_STEP_MAX_INPUTS);
			if (out->na < 0)
				out->na = 0;
			if (out->nb < 0)
				out->nb = 0;
			if (out->na && out->nb)
				break;
		}
		align_from(a, b, bset, out->a_at + 1, out->b_at + 1, &next);
		if (!next.diverged || code_key(a, next.a_at) != code_key(a, out->a_at))
			break;
		*out = next;
	}
	if (out->diverged && (argus_step_rec__insn(a, out->a_at)->kind & ARGUS_STEP_K_JCC)) {
		out->na = inputs_at(a, &t, out->a_at, 0, out->a_in, ARGUS_STEP_MAX_INPUTS);
		out->nb = inputs_at(b, &t, out->b_at, 0, out->b_in, ARGUS_STEP_MAX_INPUTS);
		out->na = out->na < 0 ? 0 : out->na;
		out->nb = out->nb < 0 ? 0 : out->nb;
	}
	dtab_free(&t);
	free(bset);
	if (!out->diverged)
		return 0;
	/* the loop around the divergence: the hang's side, else normal */
	for (int side = 0; side < 2 && !out->have_loop; side++) {
		const struct argus_step_rec *r = side ? a : b;

		d = depths(r);
		if (!d)
			return -ENOMEM;
		out->have_loop = !find_loop(r, d, argus_step_rec__insn(r, side ? out->a_at : out->b_at)->addr,
					    &out->loop, &first);
		free(d);
	}
	return 0;
}

int argus_step_diff__flag(const struct argus_step_rec *b, const struct argus_step_diff *d,
			  struct argus_step_flag *out)
{
	long *depth;
	int k, score;

	if (!b || !d || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!d->diverged)
		return -ENOENT;
	depth = depths(b);
	if (!depth)
		return -ENOMEM;
	k = pick_input(b, depth, d->b_at, d->b_in, d->nb, &score);
	free(depth);
	if (k < 0)
		return -ENODATA;
	fill_flag(b, &d->b_in[k], d->b_at, out);
	out->loop = d->loop;
	return 0;
}
