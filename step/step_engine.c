/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_engine.c - the step engine: one instruction at a time, over a
 * backend (step_ptrace.c, or a host's callbacks).
 *
 * Per instruction:
 *   1. registers before (kept from the previous step: one GETREGS a step);
 *   2. decode at rip (step_decode.c), cached by address in a direct-mapped
 *      table together with the symbol: a loop decodes and symbolizes each
 *      of its instructions once (code that rewrites itself is not seen);
 *   3. memory operands: effective address from the registers before; the
 *      value before is read for reads, the value after for writes;
 *   4. one step; registers after; the changed ones are recorded.
 *
 * A thread stopped inside a syscall that the kernel will restart (a sleep
 * interrupted by our PTRACE_INTERRUPT: rax is -ERESTART*, orig_rax the
 * syscall) executes that syscall again first, at rip - 2, before the
 * instruction rip points to: the first step is recorded as that syscall
 * (ARGUS_STEP_F_RESTART).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_internal.h"

#define DCACHE_SIZE 4096           /* power of two */
#define SYM_NAME_MAX 128

struct dentry {
	uint64_t addr;
	bool used;
	struct step_decoded d;
	char sym[SYM_NAME_MAX];   /* "" = none */
	uint64_t sym_off;
	const struct argus_step_rec *rec; /* rec_sym is an index of this one */
	int32_t rec_sym;
};

struct argus_stepper {
	struct argus_step_backend b;
	struct argus_step_opts opts;
	uint32_t pid, tid;
	struct argus_step_regs regs;  /* before the next instruction */
	bool first;
	struct step_syms *syms;
	struct dentry *cache;
};

static struct dentry *decode_at(struct argus_stepper *s, uint64_t addr);

static struct argus_stepper *stepper_new(const struct argus_step_backend *b, uint32_t pid,
					 uint32_t tid, const struct argus_step_opts *opts)
{
	struct argus_stepper *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return NULL;
	s->b = *b;
	if (opts)
		memcpy(&s->opts, opts, opts->sz && opts->sz < sizeof(s->opts) ? opts->sz : sizeof(s->opts));
	s->pid = pid;
	s->tid = tid;
	s->first = true;
	s->cache = calloc(DCACHE_SIZE, sizeof(*s->cache));
	if (!s->cache) {
		argus_step__close(s);
		errno = ENOMEM;
		return NULL;
	}
	if (pid && !s->opts.no_symbols)
		s->syms = step_syms__new(pid);
	rc = s->b.get_regs(s->b.ctx, &s->regs);
	if (rc) {
		argus_step__close(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

struct argus_stepper *argus_step__open_pid(uint32_t pid, uint32_t tid,
					   const struct argus_step_opts *opts)
{
	struct argus_step_backend b;
	uint32_t to = opts && opts->syscall_timeout_ms ? opts->syscall_timeout_ms : 5000;
	int rc;

	rc = step_ptrace__open(pid, tid, to, &b);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return stepper_new(&b, pid, tid ? tid : pid, opts);
}

struct argus_stepper *argus_step__open_backend(const struct argus_step_backend *b,
					       uint32_t pid,
					       const struct argus_step_opts *opts)
{
	uint32_t tid = pid;

	if (!b || b->sz < sizeof(*b) || !b->get_regs || !b->read_mem || !b->step) {
		errno = EINVAL;
		return NULL;
	}
	/* opts->tid only if the caller's struct has the field */
	if (opts && opts->sz >= offsetof(struct argus_step_opts, tid) + sizeof(opts->tid) && opts->tid)
		tid = opts->tid;
	return stepper_new(b, pid, tid, opts);
}

void argus_step__close(struct argus_stepper *s)
{
	if (!s)
		return;
	if (s->b.close)
		s->b.close(s->b.ctx);
	step_syms__free(s->syms);
	free(s->cache);
	free(s);
}

int argus_step__regs(struct argus_stepper *s, struct argus_step_regs *out)
{
	if (!s || !out)
		return -EINVAL;
	*out = s->regs;
	return 0;
}

int argus_step__read(struct argus_stepper *s, uint64_t addr, void *buf, size_t len)
{
	long n;

	if (!s || !buf)
		return -EINVAL;
	n = s->b.read_mem(s->b.ctx, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

int argus_step__symbolize(struct argus_stepper *s, uint64_t addr, char *name,
			  size_t len, uint64_t *off, bool *is_symbol)
{
	if (!s || !s->syms)
		return -ENOENT;
	return step_syms__lookup(s->syms, addr, false, name, len, off, is_symbol);
}

int argus_step__mapping(struct argus_stepper *s, uint64_t addr, char *name, size_t len,
			uint64_t *off)
{
	if (!s || !s->syms)
		return -ENOENT;
	return step_syms__mapping(s->syms, addr, name, len, off);
}

const char *step_engine__func(struct argus_stepper *s, uint64_t addr)
{
	struct dentry *e = decode_at(s, addr);

	return e->sym[0] ? e->sym : NULL;
}

struct argus_step_rec *argus_step__new_rec(struct argus_stepper *s)
{
	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	return argus_step_rec__new(s->pid, s->tid, &s->regs);
}

/* Decode (and name) the instruction at addr, from the cache if we can. */
static struct dentry *decode_at(struct argus_stepper *s, uint64_t addr)
{
	struct dentry *e = &s->cache[(addr ^ (addr >> 12)) & (DCACHE_SIZE - 1)];
	uint8_t buf[16];
	long n;
	bool is_sym;

	if (e->used && e->addr == addr)
		return e;
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->used = true;
	e->rec_sym = -1;
	/* up to 16 bytes, fewer at the end of a mapping */
	n = s->b.read_mem(s->b.ctx, addr, buf, sizeof(buf));
	if (n <= 0 || step_decode_full(buf, (size_t)n, addr, &e->d)) {
		memset(&e->d, 0, sizeof(e->d));
		e->d.proto.addr = addr;
		e->d.proto.flags = ARGUS_STEP_F_NOBYTES;
		snprintf(e->d.proto.text, sizeof(e->d.proto.text), "(unreadable)");
	}
	if (s->syms)
		step_syms__lookup(s->syms, addr, true, e->sym, sizeof(e->sym), &e->sym_off, &is_sym);
	return e;
}

static uint64_t read_val(struct argus_stepper *s, uint64_t addr, uint16_t size, bool *ok)
{
	uint64_t v = 0;
	size_t n = size > 8 ? 8 : size;

	*ok = s->b.read_mem(s->b.ctx, addr, &v, n) == (long)n;
	return *ok ? v : 0;
}

int argus_step__next(struct argus_stepper *s, struct argus_step_rec *rec,
		     struct argus_step_insn *out)
{
	struct argus_step_regs after;
	struct argus_step_stop stop;
	struct argus_step_insn in;
	struct dentry *e;
	uint64_t rip;
	bool restart = false, ok;
	int rc;

	if (!s)
		return -EINVAL;
	rip = s->regs.r[ARGUS_REG_RIP];
	if (s->first) {
		int64_t ax = (int64_t)s->regs.r[ARGUS_REG_RAX];

		/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND,
		 * -ERESTART_RESTARTBLOCK: kernel-internal, never seen by
		 * user space, only by a tracer at a stop inside the call */
		restart = (int64_t)s->regs.r[ARGUS_REG_ORIG_RAX] >= 0 &&
			  (ax == -512 || ax == -513 || ax == -514 || ax == -516);
		if (restart)
			rip -= 2;
		s->first = false;
	}
	e = decode_at(s, rip);
	in = e->d.proto;
	if (restart)
		in.flags |= ARGUS_STEP_F_RESTART;
	if (e->d.syscall)
		in.flags |= ARGUS_STEP_F_SYSCALL;
	in.nmem = e->d.nmemop;
	for (unsigned k = 0; k < e->d.nmemop; k++) {
		const struct step_memop *op = &e->d.memop[k];
		struct argus_step_mem *m = &in.mem[k];

		memset(m, 0, sizeof(*m));
		m->addr = step_memop_addr(op, &s->regs, rip, in.len);
		m->size = op->size;
		m->access = op->access;
		m->before = read_val(s, m->addr, op->size, &ok);
		if (ok)
			m->valid |= ARGUS_STEP_MEM_HAVE_BEFORE;
	}

	memset(&stop, 0, sizeof(stop));
	stop.syscall = e->d.syscall;
	stop.known_reg = -1;
	if (e->d.res.kind && !restart && step_result_value(&e->d, &s->regs, &in, &stop.known_val))
		stop.known_reg = e->d.res.dst;
	/* the registers it writes, when the decoder knows them all */
	if (!(e->d.proto.flags & ARGUS_STEP_F_NOBYTES) && e->d.nwr < STEP_MAX_REGACC) {
		stop.writes = 1u << ARGUS_REG_RIP;
		for (unsigned k = 0; k < e->d.nwr; k++)
			if (e->d.wr[k] < ARGUS_STEP_NREGS)
				stop.writes |= 1u << e->d.wr[k];
	}
	rc = s->b.step(s->b.ctx, &stop);
	if (rc)
		return rc;
	rc = s->b.get_regs(s->b.ctx, &after);
	if (rc)
		return rc;
	if (stop.sig) {
		in.flags |= ARGUS_STEP_F_SIGNAL;
		in.sig = (uint8_t)stop.sig;
	}
	if (stop.over) {
		in.flags |= ARGUS_STEP_F_OVER;
		in.kind = step_over_kind(in.kind);
	}
	for (int r = 0; r < ARGUS_STEP_NREGS; r++) {
		if (r == ARGUS_REG_RIP || after.r[r] == s->regs.r[r] ||
		    in.nregs >= ARGUS_STEP_MAX_CHANGED)
			continue;
		/* orig_rax keeps the syscall number at the stop after a
		 * syscall and reads -1 one step later: kernel bookkeeping,
		 * not a change the next instruction made */
		if (r == ARGUS_REG_ORIG_RAX && !(in.flags & ARGUS_STEP_F_SYSCALL))
			continue;
		in.reg[in.nregs] = (uint8_t)r;
		in.val[in.nregs++] = after.r[r];
	}
	for (unsigned k = 0; k < in.nmem; k++) {
		struct argus_step_mem *m = &in.mem[k];

		if (!(m->access & ARGUS_STEP_MEM_WRITE))
			continue;
		m->after = read_val(s, m->addr, m->size, &ok);
		if (ok)
			m->valid |= ARGUS_STEP_MEM_HAVE_AFTER;
	}
	in.sym = -1;
	in.sym_off = e->sym_off;
	if (rec && e->sym[0]) {
		const char *have = argus_step_rec__string(rec, e->rec_sym);

		/* the cached index is of this recording, and still that name
		 * (a new recording may sit where a freed one was) */
		if (e->rec != rec || !have || strcmp(have, e->sym)) {
			e->rec = rec;
			e->rec_sym = argus_step_rec__intern(rec, e->sym);
		}
		in.sym = e->rec_sym < 0 ? -1 : e->rec_sym;
	}
	s->regs = after;
	if (rec) {
		rc = argus_step_rec__append(rec, &in);
		if (rc)
			return rc;
	}
	if (out) {
		*out = in;
		/* without a recording the name is only in the cache */
		if (!rec)
			out->sym = -1;
	}
	return 0;
}
