/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_patch.c - Detours-style entry patches: the relocator and the
 * trampoline writer (pure functions over byte buffers, after frida-gum's
 * split), then patch/unpatch/list on a live process (live_proc.c).
 *
 * The entry of the function becomes `jmp rel32` to a trampoline mapped
 * within +-2 GiB of it (int3 fills the rest of the replaced
 * instructions).  Two pages:
 *
 *   0    (rw-) struct argus_live_tramp_hdr: magic, the function, the hit
 *        counter, the hook, the original bytes, a name (--remove and --list
 *        read it back from here: there is no state file to lose or forge)
 *   4096 (r-x) lock inc qword [hits]
 *        push rdi rsi rdx rcx r8 r9 rax r10 r11; sub rsp,128; xmm0-7 saved
 *        mov rax, hook; call rax            (rdi, the first argument, is
 *                                            the work item)
 *        xmm0-7, the pushes restored
 *        the displaced instructions, relocated
 *        jmp [rip+0]; .quad func+len        (back to the rest)
 *
 * Stack alignment: the function is entered by a call (or a tail jump), so
 * rsp % 16 == 8 at the trampoline; nine pushes and 128 bytes make it 0
 * before `call rax`, as the ABI wants.
 *
 * Relocation (capstone, one instruction at a time): position-independent
 * instructions are copied; a RIP-relative operand gets its disp32
 * recomputed for the new address (refused when out of +-2 GiB); `jmp`,
 * `jcc` and `call` with a relative target become absolute jumps through
 * a 64-bit literal (jcc: the inverted condition hops over one);
 * loop/jrcxz (rel8 only, no long form) are refused.
 *
 * What is refused, and why (argus_live__plan):
 *   - a function that ends (ret, jmp, ud2, int3, hlt) before 5 bytes, or
 *     whose symbol size is below the bytes needed: the patch would
 *     overwrite the next function;
 *   - a jump or call anywhere in the body (linear sweep over the symbol's
 *     size) whose target lies inside the replaced bytes after their first:
 *     it would land in the middle of our jmp.  A jump from outside the
 *     symbol (another function, a computed jump) is not seen: documented.
 *
 * Safety against threads running those bytes: every thread is stopped
 * (argus_live__stop_all) while bytes change, and none may have its pc
 * strictly inside the replaced range (the first byte is fine: a thread
 * there will run our jmp), nor, when a displaced call returns inside
 * them, a return address there on its stack.  On removal, no pc may be in the trampoline
 * page and no thread's stack (16 KiB from rsp) may hold a return address
 * into it (a thread inside the hook, or inside a call relocated there).
 * A busy range is retried for ~1 s, then refused (-EBUSY).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "argus_live.h"

#define WHY(...) do { if (why) snprintf(why, ARGUS_LIVE_WHY, __VA_ARGS__); } while (0)
#define PAGE 4096ull
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

const char *argus_live__kind_name(enum argus_live_kind k)
{
	switch (k) {
	case ARGUS_LIVE_BOUNDARY: return "boundary";
	case ARGUS_LIVE_ENQUEUE: return "enqueue";
	case ARGUS_LIVE_BEGIN: return "begin";
	case ARGUS_LIVE_END: return "end";
	case ARGUS_LIVE_COUNT: return "count";
	}
	return "?";
}

const char *argus_live__kind_hook(enum argus_live_kind k)
{
	switch (k) {
	case ARGUS_LIVE_BOUNDARY: return "argus_work_boundary";
	case ARGUS_LIVE_ENQUEUE: return "argus_work_enqueue";
	case ARGUS_LIVE_BEGIN: return "argus_work_begin";
	case ARGUS_LIVE_END: return "argus_work_end";
	default: return NULL;
	}
}

static int cs_start(csh *h)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -ENOSYS;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* The relative target of a jump/call, if the instruction has one. */
static bool rel_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;

	if (!in_group(in, CS_GRP_JUMP) && !in_group(in, CS_GRP_CALL))
		return false;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static bool rip_relative(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return true;
	return false;
}

static bool ends_flow(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_JMP:
	case X86_INS_UD2: case X86_INS_INT3: case X86_INS_HLT: case X86_INS_LJMP:
		return true;
	default:
		return false;
	}
}

static bool short_only_branch(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
		return true;
	default:
		return false;
	}
}

int argus_live__plan(const uint8_t *body, size_t body_len, uint64_t func, uint64_t size,
		     struct argus_live_plan *p, char *why)
{
	const uint8_t *code = body;
	size_t left = body_len, len = 0, scan;
	uint64_t addr = func;
	cs_insn *in;
	csh h;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->func = func;
	if (cs_start(&h))
		return -ENOSYS;
	in = cs_malloc(h);
	while (len < 5) {
		if (!cs_disasm_iter(h, &code, &left, &addr, in)) {
			WHY("cannot decode the instruction at +%zu", len);
			err = -EINVAL;
			goto out;
		}
		if (short_only_branch(in)) {
			WHY("the instruction at +%zu (%s %s) is a short-only branch that cannot be relocated",
			    len, in->mnemonic, in->op_str);
			err = -EINVAL;
			goto out;
		}
		len += in->size;
		if (in->id == X86_INS_CALL && len < 5)
			p->call_inside = true;
		if (ends_flow(in) && len < 5) {
			WHY("the function is too short to patch: it ends (%s at +%zu) before 5 bytes",
			    in->mnemonic, len - in->size);
			err = -EINVAL;
			goto out;
		}
	}
	if (size && len > size) {
		WHY("the function is too short to patch: %llu bytes, the patch needs %zu",
		    (unsigned long long)size, len);
		err = -EINVAL;
		goto out;
	}
	if (len > sizeof(p->orig)) {
		WHY("the first instructions are too long (%zu bytes)", len);
		err = -EINVAL;
		goto out;
	}
	p->len = (uint8_t)len;
	memcpy(p->orig, body, len);

	/* every jump of the body: none may land inside the replaced bytes */
	scan = size && size < body_len ? size : body_len;
	code = body;
	left = scan;
	addr = func;
	while (left) {
		uint64_t t;

		if (!cs_disasm_iter(h, &code, &left, &addr, in)) {
			/* data or padding: step over one byte */
			code++;
			left--;
			addr++;
			continue;
		}
		if (rel_target(in, &t) && t > func && t < func + len) {
			WHY("a jump at +%#llx (%s %s) lands at +%#llx, inside the %zu bytes the patch replaces",
			    (unsigned long long)(in->address - func), in->mnemonic, in->op_str,
			    (unsigned long long)(t - func), len);
			err = -EINVAL;
			goto out;
		}
	}
out:
	cs_free(in, 1);
	cs_close(&h);
	return err;
}

/* ---- the writer: small typed emitters over a buffer ---- */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	uint64_t base;		/* target address of p[0] */
};

static void emit(struct wbuf *w, const void *b, size_t n)
{
	if (w->n + n <= w->cap)
		memcpy(w->p + w->n, b, n);
	w->n += n;
}

static void emit8(struct wbuf *w, uint8_t b)
{
	emit(w, &b, 1);
}

static uint64_t here(const struct wbuf *w)
{
	return w->base + w->n;
}

/* jmp [rip+0]; .quad target: reaches anywhere, 14 bytes */
static void emit_jmp_abs(struct wbuf *w, uint64_t target)
{
	static const uint8_t j[] = { 0xff, 0x25, 0, 0, 0, 0 };

	emit(w, j, sizeof(j));
	emit(w, &target, 8);
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* One displaced instruction at its new place. */
static int relocate(struct wbuf *w, const cs_insn *in, char *why)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t t;

	if (rel_target(in, &t)) {
		if (in->id == X86_INS_JMP) {
			emit_jmp_abs(w, t);
		} else if (in->id == X86_INS_CALL) {
			/* call [rip+2]; jmp +8; .quad t: returns after it */
			static const uint8_t c[] = { 0xff, 0x15, 2, 0, 0, 0, 0xeb, 8 };

			emit(w, c, sizeof(c));
			emit(w, &t, 8);
		} else {
			/* jcc: the condition is the low nibble of 0x7X or 0x0F 0x8X */
			uint8_t cc;

			if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f)
				cc = x->opcode[0] & 0xf;
			else if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f)
				cc = x->opcode[1] & 0xf;
			else {
				WHY("cannot relocate %s %s", in->mnemonic, in->op_str);
				return -EINVAL;
			}
			emit8(w, 0x70 | (cc ^ 1));	/* the inverse hops the jump */
			emit8(w, 14);
			emit_jmp_abs(w, t);
		}
		return 0;
	}
	if (rip_relative(in)) {
		uint8_t b[16];
		int32_t d;
		int64_t nd;

		if (x->encoding.disp_size != 4 || !x->encoding.disp_offset) {
			WHY("cannot relocate %s %s (no 32-bit displacement)", in->mnemonic, in->op_str);
			return -EINVAL;
		}
		memcpy(b, in->bytes, in->size);
		memcpy(&d, b + x->encoding.disp_offset, 4);
		nd = (int64_t)d + (int64_t)(in->address - here(w));
		if (!fits32(nd)) {
			WHY("%s %s at its new place is out of RIP-relative reach", in->mnemonic,
			    in->op_str);
			return -ERANGE;
		}
		d = (int32_t)nd;
		memcpy(b + x->encoding.disp_offset, &d, 4);
		emit(w, b, in->size);
		return 0;
	}
	emit(w, in->bytes, in->size);
	return 0;
}

/* mov REG, imm64 (REX.W [+B] B8+r) */
static void emit_mov_imm64(struct wbuf *w, uint8_t rex, uint8_t op, uint64_t v)
{
	emit8(w, rex);
	emit8(w, op);
	emit(w, &v, 8);
}

/*
 * The return stub (see argus_live.h, "Return hooks"): the function
 * returns here, with rsp 16-aligned (it was entered with a call).  The
 * return registers are kept around argus_live_ret_leave(sp after the
 * return), whose result is where to go: the original return address.
 */
static void emit_ret_stub(struct wbuf *w, uint64_t leave)
{
	static const uint8_t save[] = {
		0x50, 0x52,                             /* push rax; push rdx */
		0x48, 0x83, 0xec, 0x20,                 /* sub rsp, 32 */
		0xf3, 0x0f, 0x7f, 0x04, 0x24,           /* movdqu [rsp], xmm0 */
		0xf3, 0x0f, 0x7f, 0x4c, 0x24, 0x10,     /* movdqu [rsp+16], xmm1 */
		0x48, 0x8d, 0x7c, 0x24, 0x30,           /* lea rdi, [rsp+48] */
	};
	static const uint8_t restore[] = {
		0xff, 0xd0,                             /* call rax */
		0x49, 0x89, 0xc3,                       /* mov r11, rax */
		0xf3, 0x0f, 0x6f, 0x04, 0x24,           /* movdqu xmm0, [rsp] */
		0xf3, 0x0f, 0x6f, 0x4c, 0x24, 0x10,     /* movdqu xmm1, [rsp+16] */
		0x48, 0x83, 0xc4, 0x20,                 /* add rsp, 32 */
		0x5a, 0x58,                             /* pop rdx; pop rax */
		0x41, 0xff, 0xe3,                       /* jmp r11 */
	};

	emit(w, save, sizeof(save));
	emit_mov_imm64(w, 0x48, 0xb8, leave);           /* mov rax, leave */
	emit(w, restore, sizeof(restore));
}

int argus_live__tramp(const struct argus_live_plan *p, uint64_t page, uint64_t hook,
		      enum argus_live_kind kind, const char *name, uint8_t *out, size_t page_len,
		      char *why)
{
	return argus_live__tramp_ret(p, page, hook, kind, NULL, name, out, page_len, why);
}

int argus_live__tramp_ret(const struct argus_live_plan *p, uint64_t page, uint64_t hook,
			  enum argus_live_kind kind, const struct argus_live_ret *ret,
			  const char *name, uint8_t *out, size_t page_len, char *why)
{
	size_t stub_imm = 0;    /* where the stub's address goes in the code */
	struct argus_live_tramp_hdr *hd = (struct argus_live_tramp_hdr *)out;
	struct wbuf w = { out + ARGUS_LIVE_CODE_OFF, 0, page_len - ARGUS_LIVE_CODE_OFF,
			  page + ARGUS_LIVE_CODE_OFF };
	const uint8_t *code = p->orig;
	size_t left = p->len;
	uint64_t addr = p->func;
	cs_insn *in;
	csh h;
	int err = 0;

	if (page_len < ARGUS_LIVE_TRAMP_BYTES)
		return -EINVAL;
	memset(out, 0, ARGUS_LIVE_CODE_OFF);
	memset(out + ARGUS_LIVE_CODE_OFF, 0xcc, page_len - ARGUS_LIVE_CODE_OFF);
	memcpy(hd->magic, ARGUS_LIVE_MAGIC, 8);
	hd->func = p->func;
	hd->hook = hook;
	hd->len = p->len;
	hd->kind = (uint8_t)kind;
	memcpy(hd->orig, p->orig, p->len);
	snprintf(hd->name, sizeof(hd->name), "%s", name ? name : "");
	if (ret) {
		if (!ret->enter || !ret->leave || !ret->hook)
			return -EINVAL;
		hd->ret_hook = ret->hook;
		hd->ret_kind = (uint8_t)ret->kind;
	}

	{	/* lock inc qword [rip + hits] */
		static const uint8_t inc[] = { 0xf0, 0x48, 0xff, 0x05 };
		int32_t d = (int32_t)((int64_t)(page + offsetof(struct argus_live_tramp_hdr, hits)) -
				      (int64_t)(here(&w) + 8));

		emit(&w, inc, sizeof(inc));
		emit(&w, &d, 4);
	}
	if (hook || ret) {
		static const uint8_t push[] = { 0x57, 0x56, 0x52, 0x51, 0x41, 0x50, 0x41, 0x51,
						0x50, 0x41, 0x52, 0x41, 0x53 };
		static const uint8_t pop[] = { 0x41, 0x5b, 0x41, 0x5a, 0x58, 0x41, 0x59, 0x41,
					       0x58, 0x59, 0x5a, 0x5e, 0x5f };
		static const uint8_t sub[] = { 0x48, 0x81, 0xec, 0x80, 0, 0, 0 };
		static const uint8_t add[] = { 0x48, 0x81, 0xc4, 0x80, 0, 0, 0 };
		static const uint8_t callrax[] = { 0xff, 0xd0 };

		emit(&w, push, sizeof(push));
		emit(&w, sub, sizeof(sub));
		for (int i = 0; i < 8; i++) {	/* movdqu [rsp+16*i], xmm_i */
			uint8_t m[] = { 0xf3, 0x0f, 0x7f, (uint8_t)(0x44 | i << 3), 0x24,
					(uint8_t)(16 * i) };
			emit(&w, m, sizeof(m));
		}
		if (hook) {
			emit_mov_imm64(&w, 0x48, 0xb8, hook);	/* mov rax, hook */
			emit(&w, callrax, sizeof(callrax));
		}
		if (ret) {
			/* ret_enter(the saved rdi, &return address, stub, header,
			 * hook): 9 registers (72 bytes) and 128 of xmm below the
			 * return address */
			static const uint8_t args[] = {
				0x48, 0x8b, 0xbc, 0x24, 0xc0, 0, 0, 0,  /* mov rdi, [rsp+192] */
				0x48, 0x8d, 0xb4, 0x24, 0xc8, 0, 0, 0,  /* lea rsi, [rsp+200] */
			};

			emit(&w, args, sizeof(args));
			stub_imm = w.n + 2;
			emit_mov_imm64(&w, 0x48, 0xba, 0);		/* mov rdx, stub */
			emit_mov_imm64(&w, 0x48, 0xb9, page);		/* mov rcx, header */
			emit_mov_imm64(&w, 0x49, 0xb8, ret->hook);	/* mov r8, hook */
			emit_mov_imm64(&w, 0x48, 0xb8, ret->enter);	/* mov rax, enter */
			emit(&w, callrax, sizeof(callrax));
		}
		for (int i = 0; i < 8; i++) {	/* movdqu xmm_i, [rsp+16*i] */
			uint8_t m[] = { 0xf3, 0x0f, 0x6f, (uint8_t)(0x44 | i << 3), 0x24,
					(uint8_t)(16 * i) };
			emit(&w, m, sizeof(m));
		}
		emit(&w, add, sizeof(add));
		emit(&w, pop, sizeof(pop));
	}

	if (cs_start(&h))
		return -ENOSYS;
	in = cs_malloc(h);
	while (left && !err) {
		if (!cs_disasm_iter(h, &code, &left, &addr, in)) {
			WHY("cannot decode the displaced bytes");
			err = -EINVAL;
			break;
		}
		err = relocate(&w, in, why);
	}
	cs_free(in, 1);
	cs_close(&h);
	if (err)
		return err;
	emit_jmp_abs(&w, p->func + p->len);
	if (ret) {
		uint64_t stub = here(&w);

		emit_ret_stub(&w, ret->leave);
		if (stub_imm + 8 <= w.cap)
			memcpy(w.p + stub_imm, &stub, 8);
	}
	if (w.n > w.cap) {
		WHY("the trampoline does not fit in a page");
		return -E2BIG;
	}
	return 0;
}

int argus_live__entry(const struct argus_live_plan *p, uint64_t page, uint8_t *out, char *why)
{
	int64_t rel = (int64_t)(page + ARGUS_LIVE_CODE_OFF) - (int64_t)(p->func + 5);
	int32_t r32;

	if (!fits32(rel)) {
		WHY("the trampoline at %#llx is out of jmp rel32 reach", (unsigned long long)page);
		return -ERANGE;
	}
	r32 = (int32_t)rel;
	memset(out, 0xcc, p->len);
	out[0] = 0xe9;
	memcpy(out + 1, &r32, 4);
	return 0;
}

/* ---- on a live process ---- */

#define MAX_THREADS 4096

/* A free page-aligned address within reach of func: the gap between two
 * mappings closest to it, not below 64 KiB (mmap_min_addr). */
static uint64_t free_near(const struct argus_live_map *m, size_t n, uint64_t func)
{
	const uint64_t reach = (1ull << 31) - 2 * PAGE;
	uint64_t best = 0, bestd = ~0ull;

	for (size_t i = 0; i + 1 <= n; i++) {
		uint64_t lo = m[i].end, hi = i + 1 < n ? m[i + 1].start : 0x7ffffffff000ull;
		uint64_t c;

		if (hi < lo + 2 * PAGE)
			continue;
		/* the two pages in [lo, hi - 2 PAGE] closest to func */
		c = func < lo ? lo : func > hi - 2 * PAGE ? hi - 2 * PAGE : func & ~(PAGE - 1);
		if (c < 0x10000)
			continue;
		uint64_t d = c > func ? c - func : func - c;

		if (d < reach && d < bestd) {
			best = c;
			bestd = d;
		}
	}
	return best;
}

/* A stopped thread to run calls on: the main one if it can. */
static pid_t call_thread(const pid_t *tids, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == pid)
			return pid;
	return n ? tids[0] : -1;
}

/* fn in the process's libc.so.6, from a file only root can have written
 * (a user may map a "libc.so.6" of its own first: argus_live.h). */
static int libc_fn(pid_t pid, const char *fn, uint64_t *addr)
{
	struct argus_live_sym s;

	if (argus_live__sym(pid, "libc.so.6", fn, &s, NULL) ||
	    argus_live__trusted_code(pid, s.addr, NULL))
		return -ENOENT;
	*addr = s.addr;
	return 0;
}

/* why for a write that failed: after an exec (or a credential change)
 * the exec rule's own line. */
static void write_why(struct argus_live *l, int err, const char *what, char *why)
{
	if (err != -ENOEXEC || argus_live__check(l, NULL, why) != -ENOEXEC)
		WHY("cannot write %s: %s", what, strerror(-err));
}

static int remote_munmap(struct argus_live *l, pid_t tid, uint64_t page)
{
	struct argus_live_call c = { .data_arg = -1 };
	uint64_t ret;

	if (libc_fn(argus_live__pid(l), "munmap", &c.fn))
		return -ENOENT;
	c.args[0] = page;
	c.args[1] = ARGUS_LIVE_TRAMP_BYTES;
	return argus_live__call(l, tid, &c, &ret, NULL);
}

/* Every thread stopped; *busy gets a thread whose pc is in [lo, hi), or
 * whose stack holds a return address into [slo, shi) (0, 0: not checked). */
static int busy_thread(struct argus_live *l, uint64_t lo, uint64_t hi, uint64_t slo, uint64_t shi,
		       pid_t *busy, uint64_t *bpc, pid_t *first, size_t *nth)
{
	static pid_t tids[MAX_THREADS];
	static uint64_t pc[MAX_THREADS], sp[MAX_THREADS];
	size_t n;
	int err = argus_live__pcs(l, tids, pc, sp, MAX_THREADS, &n);

	*busy = 0;
	if (err)
		return err;
	*first = call_thread(tids, n, argus_live__pid(l));
	*nth = n;
	for (size_t i = 0; i < n && !*busy; i++) {
		if (pc[i] > lo && pc[i] < hi) {
			*busy = tids[i];
			*bpc = pc[i];
		}
		if (slo && pc[i] >= slo && pc[i] < shi) {
			*busy = tids[i];
			*bpc = pc[i];
		}
		if (slo && !*busy) {
			static uint64_t st[2048];

			for (size_t k = 0; k < 2048; k += 256) {
				/* a page at a time: the stack's top may be nearer */
				if (argus_live__read(l, sp[i] + k * 8, st + k, 256 * 8))
					break;
				for (size_t j = k; j < k + 256; j++)
					if (st[j] >= slo && st[j] < shi) {
						*busy = tids[i];
						*bpc = st[j];
					}
			}
		}
	}
	return 0;
}

/*
 * Stop everything; retry for ~1 s while a thread is busy in the range, or
 * (inflight, for a removal: the address of a trampoline header's inflight
 * counter, 0 none) while hooked calls are in flight: their return
 * addresses point into the code page, maybe deeper in a stack than
 * busy_thread() looks.
 */
static int stop_quiet(struct argus_live *l, uint64_t lo, uint64_t hi, uint64_t slo, uint64_t shi,
		      uint64_t inflight, const char *what, pid_t *first, char *why)
{
	pid_t busy = 0;
	uint64_t bpc = 0, calls = 0;
	size_t nth = 0;

	for (int tries = 0; tries < 50; tries++) {
		int err = argus_live__stop_all(l);

		if (!err)
			err = busy_thread(l, lo, hi, slo, shi, &busy, &bpc, first, &nth);
		if (!err && !busy && inflight &&
		    (err = argus_live__read(l, inflight, &calls, sizeof(calls))) == 0 && calls)
			busy = -1;
		if (err) {
			WHY("cannot stop the threads of process %d: %s", (int)argus_live__pid(l),
			    strerror(-err));
			return err;
		}
		if (!nth) {
			WHY("process %d has no thread left", (int)argus_live__pid(l));
			return -ESRCH;
		}
		if (!busy)
			return 0;
		argus_live__resume_all(l);
		usleep(20000);
	}
	if (busy < 0)
		WHY("%llu hooked call(s) are still running (their return goes through %s) "
		    "after 1 s: try again when they have returned", (unsigned long long)calls, what);
	else if (slo && bpc >= slo && bpc < shi)
		WHY("thread %d is still inside %s (pc or return address %#llx): try again later",
		    (int)busy, what, (unsigned long long)bpc);
	else
		WHY("thread %d is executing the bytes to patch (pc %#llx = entry+%llu) for 1 s: try again later",
		    (int)busy, (unsigned long long)bpc, (unsigned long long)(bpc - lo));
	return -EBUSY;
}

/* The trampoline page behind an entry, if the entry is our jmp. */
static int our_page(struct argus_live *l, uint64_t func, uint64_t *page,
		    struct argus_live_tramp_hdr *h)
{
	uint8_t e[5];
	int32_t rel;

	if (argus_live__read(l, func, e, 5) || e[0] != 0xe9)
		return -ENOENT;
	memcpy(&rel, e + 1, 4);
	*page = func + 5 + (int64_t)rel - ARGUS_LIVE_CODE_OFF;
	if ((*page & (PAGE - 1)) || argus_live__read(l, *page, h, sizeof(*h)) ||
	    memcmp(h->magic, ARGUS_LIVE_MAGIC, 8) || h->func != func)
		return -ENOENT;
	return 0;
}

int argus_live__patch(struct argus_live *l, const struct argus_live_sym *fn,
		      const struct argus_live_patch_opts *o, uint64_t *page_out, char *why)
{
	pid_t pid = argus_live__pid(l), first;
	struct argus_live_map *maps = NULL;
	struct argus_live_tramp_hdr old;
	struct argus_live_plan plan;
	struct argus_live_call c = { .data_arg = -1 };
	static uint8_t body[65536];
	static uint8_t tp[ARGUS_LIVE_TRAMP_BYTES];
	uint8_t entry[32];
	uint64_t want, page, mend = 0, ret, mprotect_fn = 0;
	size_t n, blen;
	int err;

	err = argus_live__maps(pid, &maps, &n);
	if (err) {
		WHY("no process %d", (int)pid);
		return err;
	}
	for (size_t i = 0; i < n; i++)
		if (fn->addr >= maps[i].start && fn->addr < maps[i].end) {
			mend = maps[i].end;
			if (!strchr(maps[i].perms, 'x')) {
				WHY("%#llx is not in executable memory", (unsigned long long)fn->addr);
				err = -EINVAL;
				goto out;
			}
		}
	if (!mend) {
		WHY("%#llx is not mapped in process %d", (unsigned long long)fn->addr, (int)pid);
		err = -EINVAL;
		goto out;
	}
	if (!our_page(l, fn->addr, &page, &old)) {
		WHY("already instrumented (as %s; --remove first)",
		    argus_live__kind_name(old.kind));
		err = -EEXIST;
		goto out;
	}
	blen = fn->size ? fn->size : 4096;
	if (blen > sizeof(body))
		blen = sizeof(body);
	if (blen > mend - fn->addr)
		blen = mend - fn->addr;
	err = argus_live__read(l, fn->addr, body, blen);
	if (err) {
		WHY("cannot read the function's bytes: %s", strerror(-err));
		goto out;
	}
	err = argus_live__plan(body, blen, fn->addr, fn->size, &plan, why);
	if (err)
		goto out;
	want = free_near(maps, n, fn->addr);
	if (!want) {
		WHY("no free page within +-2 GiB of %#llx", (unsigned long long)fn->addr);
		err = -ENOMEM;
		goto out;
	}
	if (libc_fn(pid, "mmap", &c.fn) || libc_fn(pid, "mprotect", &mprotect_fn)) {
		WHY("no root-owned libc.so.6 with mmap and mprotect in process %d", (int)pid);
		err = -ENOENT;
		goto out;
	}

	err = stop_quiet(l, fn->addr, fn->addr + plan.len, plan.call_inside ? fn->addr + 1 : 0,
			 fn->addr + plan.len, 0, "a call among the bytes to patch", &first, why);
	if (err)
		goto out;
	c.args[0] = want;
	c.args[1] = ARGUS_LIVE_TRAMP_BYTES;
	c.args[2] = PROT_READ | PROT_WRITE;
	c.args[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	c.args[4] = (uint64_t)-1;
	err = argus_live__call(l, first, &c, &ret, why);
	if (err)
		goto resume;
	if (ret != want) {
		WHY("mmap in process %d gave %#llx, not the page asked for at %#llx", (int)pid,
		    (unsigned long long)ret, (unsigned long long)want);
		if (ret < (uint64_t)-4095)
			remote_munmap(l, first, ret);
		err = -ENOMEM;
		goto resume;
	}
	page = ret;
	err = argus_live__tramp_ret(&plan, page, o->hook, o->kind,
				    o->sz > offsetof(struct argus_live_patch_opts, ret) ? o->ret : NULL,
				    o->name, tp, sizeof(tp), why);
	if (!err)
		err = argus_live__entry(&plan, page, entry, why);
	/* the page first (no thread can reach it yet), the entry last */
	if (!err && (err = argus_live__write(l, page, tp, sizeof(tp))))
		write_why(l, err, "the trampoline", why);
	if (!err) {	/* the code page: r-x from now on */
		c.fn = mprotect_fn;
		c.args[0] = page + ARGUS_LIVE_CODE_OFF;
		c.args[1] = PAGE;
		c.args[2] = PROT_READ | PROT_EXEC;
		err = argus_live__call(l, first, &c, &ret, why);
		if (!err && ret) {
			WHY("mprotect of the trampoline's code page failed in process %d", (int)pid);
			err = -EACCES;
		}
	}
	if (!err && (err = argus_live__write(l, fn->addr, entry, plan.len)))
		write_why(l, err, "the entry", why);
	if (err)
		remote_munmap(l, first, page);
	else if (page_out)
		*page_out = page;
resume:
	argus_live__resume_all(l);
out:
	free(maps);
	return err;
}

int argus_live__unpatch(struct argus_live *l, uint64_t func, char *why)
{
	struct argus_live_tramp_hdr h;
	uint64_t page;
	pid_t first;
	int err;

	if (our_page(l, func, &page, &h)) {
		WHY("%#llx is not instrumented by argus", (unsigned long long)func);
		return -ENOENT;
	}
	err = stop_quiet(l, func, func + h.len, page + ARGUS_LIVE_CODE_OFF,
			 page + ARGUS_LIVE_TRAMP_BYTES,
			 page + offsetof(struct argus_live_tramp_hdr, inflight), "the trampoline",
			 &first, why);
	if (err)
		return err;
	err = argus_live__write(l, func, h.orig, h.len);
	if (err)
		write_why(l, err, "the entry back", why);
	else if ((err = remote_munmap(l, first, page)))
		WHY("the entry is restored but the trampoline page stays mapped: %s",
		    strerror(-err));
	argus_live__resume_all(l);
	return err;
}

int argus_live__list(pid_t pid, struct argus_live_tramp_hdr *h, uint64_t *pages, size_t cap,
		     size_t *n)
{
	struct argus_live_map *maps;
	size_t nm;
	char p[64];
	int fd, err;

	*n = 0;
	err = argus_live__maps(pid, &maps, &nm);
	if (err)
		return err;
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(maps);
		return err;
	}
	/* each trampoline is an rw- header page right before an r-x code
	 * page (two pages that cannot merge with the next pair) */
	for (size_t i = 0; i < nm && *n < cap; i++) {
		uint64_t a = maps[i].start - ARGUS_LIVE_CODE_OFF;

		if (maps[i].path[0] || strcmp(maps[i].perms, "r-xp") || maps[i].end - maps[i].start != PAGE)
			continue;
		if (pread(fd, &h[*n], sizeof(*h), (off_t)a) != (ssize_t)sizeof(*h) ||
		    memcmp(h[*n].magic, ARGUS_LIVE_MAGIC, 8))
			continue;
		pages[(*n)++] = a;
	}
	close(fd);
	free(maps);
	return 0;
}
