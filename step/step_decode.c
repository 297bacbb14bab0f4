/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_decode.c - x86-64 decoding for the step engine (capstone 4 with
 * detail): text, branch kind and target, memory operands with their
 * encoding, and the registers an instruction reads and writes, mapped to
 * user_regs_struct (eax, ax, al and ah are all rax).
 *
 * Capstone is opened once per process (a csh is not thread-safe; the
 * library is documented as not thread-safe either).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "step_internal.h"

static const char *const reg_names[ARGUS_STEP_NREGS] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

const char *argus_step_reg__name(int reg)
{
	return reg >= 0 && reg < ARGUS_STEP_NREGS ? reg_names[reg] : NULL;
}

int argus_step_reg__by_name(const char *name)
{
	for (int i = 0; i < ARGUS_STEP_NREGS; i++)
		if (!strcmp(reg_names[i], name))
			return i;
	return -1;
}

/* capstone register -> (full register, bit shift, width in bytes) */
struct regmap {
	int8_t full;
	uint8_t shift, width;
};

static struct regmap map_reg(unsigned r)
{
#define R(cs, full, sh, w) case X86_REG_##cs: return (struct regmap){ ARGUS_REG_##full, sh, w }
#define GPR(q, d, w_, b, full) R(q, full, 0, 8); R(d, full, 0, 4); R(w_, full, 0, 2); R(b, full, 0, 1)
	switch (r) {
	GPR(RAX, EAX, AX, AL, RAX); R(AH, RAX, 8, 1);
	GPR(RBX, EBX, BX, BL, RBX); R(BH, RBX, 8, 1);
	GPR(RCX, ECX, CX, CL, RCX); R(CH, RCX, 8, 1);
	GPR(RDX, EDX, DX, DL, RDX); R(DH, RDX, 8, 1);
	GPR(RSI, ESI, SI, SIL, RSI);
	GPR(RDI, EDI, DI, DIL, RDI);
	GPR(RBP, EBP, BP, BPL, RBP);
	GPR(RSP, ESP, SP, SPL, RSP);
	GPR(R8, R8D, R8W, R8B, R8);
	GPR(R9, R9D, R9W, R9B, R9);
	GPR(R10, R10D, R10W, R10B, R10);
	GPR(R11, R11D, R11W, R11B, R11);
	GPR(R12, R12D, R12W, R12B, R12);
	GPR(R13, R13D, R13W, R13B, R13);
	GPR(R14, R14D, R14W, R14B, R14);
	GPR(R15, R15D, R15W, R15B, R15);
	R(RIP, RIP, 0, 8); R(EIP, RIP, 0, 4); R(IP, RIP, 0, 2);
	R(EFLAGS, EFLAGS, 0, 8);
	R(CS, CS, 0, 2); R(SS, SS, 0, 2); R(DS, DS, 0, 2); R(ES, ES, 0, 2);
	R(FS, FS, 0, 2); R(GS, GS, 0, 2);
	default:
		return (struct regmap){ -1, 0, 0 };
	}
#undef GPR
#undef R
}

int step_cs_reg_full(unsigned csreg)
{
	return map_reg(csreg).full;
}

uint64_t step_cs_reg_value(const struct argus_step_regs *r, unsigned csreg, bool *ok)
{
	struct regmap m = map_reg(csreg);
	uint64_t v;

	*ok = m.full >= 0;
	if (!*ok)
		return 0;
	v = r->r[m.full] >> m.shift;
	return m.width == 8 ? v : v & ((1ull << (m.width * 8)) - 1);
}

uint64_t step_memop_addr(const struct step_memop *op, const struct argus_step_regs *r,
			 uint64_t insn_addr, unsigned insn_len)
{
	uint64_t a = (uint64_t)op->disp;
	bool ok;

	if (op->stack)
		return r->r[ARGUS_REG_RSP] + a;
	if (op->base == X86_REG_RIP)
		a += insn_addr + insn_len;
	else if (op->base)
		a += step_cs_reg_value(r, op->base, &ok);
	if (op->index)
		a += step_cs_reg_value(r, op->index, &ok) * (uint64_t)op->scale;
	/* fs:/gs: overrides are thread-local storage: the base is in the
	 * fs_base/gs_base registers, not in the selector */
	if (op->seg == X86_REG_FS)
		a += r->r[ARGUS_REG_FS_BASE];
	else if (op->seg == X86_REG_GS)
		a += r->r[ARGUS_REG_GS_BASE];
	return a;
}

static csh cs_handle;
static int cs_ready;     /* 0 not tried, 1 open, -1 failed */

static int cs_get(void)
{
	if (!cs_ready) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs_handle) != CS_ERR_OK) {
			cs_ready = -1;
			return -1;
		}
		cs_option(cs_handle, CS_OPT_DETAIL, CS_OPT_ON);
		cs_ready = 1;
	}
	return cs_ready > 0 ? 0 : -1;
}

static void add_reg(uint8_t *list, uint8_t *n, int full)
{
	if (full < 0 || full == ARGUS_REG_RIP)
		return;
	for (unsigned i = 0; i < *n; i++)
		if (list[i] == full)
			return;
	if (*n < STEP_MAX_REGACC)
		list[(*n)++] = (uint8_t)full;
}

static void add_stack_op(struct step_decoded *d, int64_t disp, uint8_t access)
{
	struct step_memop *m;

	if (d->nmemop >= ARGUS_STEP_MAX_MEM)
		return;
	m = &d->memop[d->nmemop++];
	memset(m, 0, sizeof(*m));
	m->stack = true;
	m->disp = disp;
	m->size = 8;
	m->access = access;
}

/* A high-byte register (ah, bh, ch, dh): not predicted (map_reg shifts). */
static bool high_byte(unsigned r)
{
	return r == X86_REG_AH || r == X86_REG_BH || r == X86_REG_CH || r == X86_REG_DH;
}

/* out->res for the data moves whose result follows from their inputs
 * (struct step_result); called once the memory operands are listed. */
static void data_move(const cs_insn *insn, struct step_decoded *out)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *d = &x->operands[0], *s = &x->operands[1];
	struct step_result *r = &out->res;
	int dst;

	switch (insn->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX: case X86_INS_MOVSXD:
	case X86_INS_LEA:
		if (x->op_count != 2)
			return;
		break;
	case X86_INS_POP:
		if (x->op_count != 1 || out->nmemop != 1 || !out->memop[0].stack)
			return;
		break;
	default:
		return;
	}
	if (d->type != X86_OP_REG || high_byte(d->reg) || x->prefix[0] /* rep, lock */)
		return;
	dst = step_cs_reg_full(d->reg);
	/* a general register other than rsp (r15..rdi in user_regs_struct
	 * order; the backends read rsp anyway) */
	if (dst < 0 || dst > ARGUS_REG_RDI ||
	    (d->size != 1 && d->size != 2 && d->size != 4 && d->size != 8))
		return;
	/* the same register must be all it writes (but rsp and rip) */
	for (unsigned k = 0; k < out->nwr; k++)
		if (out->wr[k] != dst && out->wr[k] != ARGUS_REG_RSP && out->wr[k] != ARGUS_REG_RIP)
			return;
	r->dst = (int8_t)dst;
	r->dst_size = d->size;
	r->sext = insn->id == X86_INS_MOVSX || insn->id == X86_INS_MOVSXD;
	if (insn->id == X86_INS_POP) {
		r->kind = STEP_RES_MEM;
		r->memop = 0;
		r->src_size = 8;
		if (d->size != 8)
			r->kind = STEP_RES_NONE;
		return;
	}
	r->src_size = s->size;
	if (insn->id == X86_INS_LEA) {
		if (s->type != X86_OP_MEM || s->mem.segment)
			return;
		r->kind = STEP_RES_ADDR;
		r->addr.base = (uint16_t)s->mem.base;
		r->addr.index = (uint16_t)s->mem.index;
		r->addr.scale = s->mem.scale;
		r->addr.disp = s->mem.disp;
		r->src_size = 8;
		return;
	}
	if (s->type == X86_OP_MEM) {
		if (out->nmemop != 1 || out->memop[0].stack || !(out->memop[0].access & ARGUS_STEP_MEM_READ) ||
		    (s->size != 1 && s->size != 2 && s->size != 4 && s->size != 8))
			return;
		r->kind = STEP_RES_MEM;
		r->memop = 0;
	} else if (s->type == X86_OP_REG) {
		if (step_cs_reg_full(s->reg) < 0 || s->reg == X86_REG_RIP)
			return;
		r->kind = STEP_RES_REG;
		r->src_reg = (uint16_t)s->reg;
	} else if (s->type == X86_OP_IMM) {
		r->kind = STEP_RES_IMM;
		r->imm = s->imm;
		r->src_size = 8;        /* capstone gives the value as extended */
	}
}

bool step_result_value(const struct step_decoded *d, const struct argus_step_regs *r,
		       const struct argus_step_insn *in, uint64_t *val)
{
	const struct step_result *res = &d->res;
	uint64_t v, old, mask;
	bool ok = true;

	switch (res->kind) {
	case STEP_RES_MEM:
		if (res->memop >= in->nmem || !(in->mem[res->memop].valid & ARGUS_STEP_MEM_HAVE_BEFORE))
			return false;
		v = in->mem[res->memop].before;
		break;
	case STEP_RES_REG:
		v = step_cs_reg_value(r, res->src_reg, &ok);
		if (!ok)
			return false;
		break;
	case STEP_RES_IMM:
		v = (uint64_t)res->imm;
		break;
	case STEP_RES_ADDR:
		v = step_memop_addr(&res->addr, r, in->addr, in->len);
		break;
	default:
		return false;
	}
	if (res->src_size < 8) {
		unsigned bits = res->src_size * 8u;

		v &= (1ull << bits) - 1;
		if (res->sext && (v >> (bits - 1)) & 1)
			v |= ~0ull << bits;
	}
	/* a 32-bit write zero-extends; 8 and 16 bits keep the rest */
	old = r->r[res->dst];
	switch (res->dst_size) {
	case 8:
		break;
	case 4:
		v &= 0xffffffffull;
		break;
	default:
		mask = (1ull << (res->dst_size * 8u)) - 1;
		v = (old & ~mask) | (v & mask);
		break;
	}
	*val = v;
	return true;
}

int step_decode_full(const uint8_t *bytes, size_t len, uint64_t addr,
		     struct step_decoded *out)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	cs_insn *insn = NULL;
	cs_x86 *x;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->proto.addr = addr;
	out->proto.sym = -1;
	if (cs_get())
		return -ENOTSUP;
	n = cs_disasm(cs_handle, bytes, len > 16 ? 16 : len, addr, 1, &insn);
	if (n != 1) {
		cs_free(insn, n);
		return -EINVAL;
	}
	out->proto.len = (uint8_t)insn->size;
	memcpy(out->proto.bytes, insn->bytes, insn->size);
	{
		/* capstone's op_str can exceed our text: cut it, it is for
		 * people to read */
		size_t ml = strlen(insn->mnemonic), room = sizeof(out->proto.text) - 1;
		char *t = out->proto.text;

		memcpy(t, insn->mnemonic, ml < room ? ml : room);
		t[ml < room ? ml : room] = 0;
		if (insn->op_str[0] && ml + 1 < room) {
			t[ml] = ' ';
			size_t ol = strlen(insn->op_str);

			if (ol > room - ml - 1)
				ol = room - ml - 1;
			memcpy(t + ml + 1, insn->op_str, ol);
			t[ml + 1 + ol] = 0;
		}
	}
	x = &insn->detail->x86;

	for (unsigned g = 0; g < insn->detail->groups_count; g++) {
		switch (insn->detail->groups[g]) {
		case CS_GRP_JUMP:
			out->proto.kind |= insn->id == X86_INS_JMP || insn->id == X86_INS_LJMP ?
				ARGUS_STEP_K_JMP : ARGUS_STEP_K_JCC;
			break;
		case CS_GRP_CALL:
			out->proto.kind |= ARGUS_STEP_K_CALL;
			break;
		case CS_GRP_RET:
		case CS_GRP_IRET:
			out->proto.kind |= ARGUS_STEP_K_RET;
			break;
		default:
			break;
		}
	}
	if ((out->proto.kind & (ARGUS_STEP_K_JCC | ARGUS_STEP_K_JMP | ARGUS_STEP_K_CALL)) &&
	    x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		out->proto.target = (uint64_t)x->operands[0].imm;
	out->syscall = insn->id == X86_INS_SYSCALL;

	if (cs_regs_access(cs_handle, insn, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
		for (unsigned i = 0; i < nrd; i++)
			add_reg(out->rd, &out->nrd, step_cs_reg_full(rd[i]));
		for (unsigned i = 0; i < nwr; i++) {
			add_reg(out->wr, &out->nwr, step_cs_reg_full(wr[i]));
			if (step_cs_reg_full(wr[i]) == ARGUS_REG_EFLAGS)
				out->proto.kind |= ARGUS_STEP_K_SETS_FLAGS;
		}
	}

	/* lea and the multi-byte nops have memory operands that are never
	 * accessed. */
	if (insn->id != X86_INS_LEA && insn->id != X86_INS_NOP) {
		for (unsigned i = 0; i < x->op_count && out->nmemop < ARGUS_STEP_MAX_MEM; i++) {
			const cs_x86_op *op = &x->operands[i];
			struct step_memop *m;

			if (op->type != X86_OP_MEM)
				continue;
			m = &out->memop[out->nmemop++];
			m->seg = (uint16_t)op->mem.segment;
			m->base = (uint16_t)op->mem.base;
			m->index = (uint16_t)op->mem.index;
			m->scale = op->mem.scale;
			m->disp = op->mem.disp;
			m->size = op->size;
			m->access = (op->access & CS_AC_READ ? ARGUS_STEP_MEM_READ : 0) |
				    (op->access & CS_AC_WRITE ? ARGUS_STEP_MEM_WRITE : 0);
			if (!m->access)   /* capstone leaves some unset: assume a read */
				m->access = ARGUS_STEP_MEM_READ;
			add_reg(out->addr_rd, &out->naddr, step_cs_reg_full(op->mem.base));
			add_reg(out->addr_rd, &out->naddr, step_cs_reg_full(op->mem.index));
		}
	}
	/* The stack slots push/pop/call/ret touch are not operands. */
	switch (insn->id) {
	case X86_INS_PUSH:
	case X86_INS_CALL:
		add_stack_op(out, -8, ARGUS_STEP_MEM_WRITE);
		break;
	case X86_INS_POP:
	case X86_INS_RET:
		add_stack_op(out, 0, ARGUS_STEP_MEM_READ);
		break;
	default:
		break;
	}
	out->res.dst = -1;
	data_move(insn, out);
	cs_free(insn, 1);
	return 0;
}

int argus_step_decode(const uint8_t *bytes, size_t len, uint64_t addr,
		      struct argus_step_insn *io)
{
	struct step_decoded d;
	int rc;

	if (!bytes || !io)
		return -EINVAL;
	rc = step_decode_full(bytes, len, addr, &d);
	if (rc)
		return rc;
	snprintf(io->text, sizeof(io->text), "%s", d.proto.text);
	io->kind = d.proto.kind;
	io->target = d.proto.target;
	return 0;
}
