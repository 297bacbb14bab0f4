/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_internal.h - what the step library's files share and do not
 * publish: the fully decoded instruction (capstone detail boiled down to
 * what the engine and the analysis use), register mapping, symbols.
 */
#ifndef ARGUS_STEP_INTERNAL_H
#define ARGUS_STEP_INTERNAL_H

#include "argus_step.h"

#define STEP_MAX_REGACC 20

/* A memory operand as encoded: the engine computes its address from the
 * registers before the instruction. */
struct step_memop {
	uint16_t seg, base, index;  /* capstone X86_REG_*, 0 = none */
	int32_t scale;
	int64_t disp;
	uint16_t size;              /* bytes */
	uint8_t access;             /* ARGUS_STEP_MEM_* */
	/* implicit stack slot (push/pop/call/ret): address is rsp + disp
	 * before the instruction */
	bool stack;
};

/* What a data move (mov, movzx, movsx, movsxd, lea, pop) leaves in the
 * one register it writes, from values the engine has before the step:
 * the memory operand it loads, a register, an immediate, or an address.
 * No flags, no other register (pop: rsp too, which every backend has).
 * The value is exact by the instruction's definition; a backend whose
 * register reads are costly is spared reading it (argus_step_stop.known). */
enum { STEP_RES_NONE = 0, STEP_RES_MEM, STEP_RES_REG, STEP_RES_IMM, STEP_RES_ADDR };

struct step_result {
	uint8_t kind;               /* STEP_RES_* */
	int8_t dst;                 /* enum argus_step_reg of the full register */
	uint8_t dst_size;           /* bytes written: 8; 4 (zero-extends to
	                               64); 2 or 1 (the rest is kept) */
	uint8_t src_size;           /* bytes of the source value */
	bool sext;                  /* movsx/movsxd: sign-extend the source */
	uint8_t memop;              /* STEP_RES_MEM: which memop */
	uint16_t src_reg;           /* STEP_RES_REG: capstone register */
	int64_t imm;                /* STEP_RES_IMM */
	struct step_memop addr;     /* STEP_RES_ADDR: lea's operand */
};

struct step_decoded {
	struct argus_step_insn proto;   /* addr, len, bytes, text, kind, target */
	struct step_result res;
	uint8_t nmemop;
	struct step_memop memop[ARGUS_STEP_MAX_MEM];
	/* registers read and written (explicit and implicit), as
	 * enum argus_step_reg of the full register; 0xff-free */
	uint8_t nrd, nwr;
	uint8_t rd[STEP_MAX_REGACC], wr[STEP_MAX_REGACC];
	/* registers read to compute a memory address (not data inputs) */
	uint8_t naddr;
	uint8_t addr_rd[STEP_MAX_REGACC];
	bool syscall;
};

/* Decode one instruction with capstone detail.  0 or -EINVAL. */
int step_decode_full(const uint8_t *bytes, size_t len, uint64_t addr,
		     struct step_decoded *out);

/* enum argus_step_reg holding capstone register csreg (eax -> RAX), or -1
 * for registers outside user_regs_struct (xmm, ...). */
int step_cs_reg_full(unsigned csreg);
/* The value of capstone register csreg (sub-registers extracted); ok=false
 * when it is not one we have. */
uint64_t step_cs_reg_value(const struct argus_step_regs *r, unsigned csreg, bool *ok);

/* The value res (a data move's result, step_result) leaves in its
 * register, from the registers and the instruction's memory operands
 * before the step; false when it cannot be known (a memory read failed). */
bool step_result_value(const struct step_decoded *d, const struct argus_step_regs *r,
		       const struct argus_step_insn *in, uint64_t *val);

/* Effective address of op, given the registers before the instruction and
 * its length (rip-relative operands count from the next instruction). */
uint64_t step_memop_addr(const struct step_memop *op, const struct argus_step_regs *r,
			 uint64_t insn_addr, unsigned insn_len);

/* Symbols of a live process: all of /proc/PID/maps (data too). */
struct step_syms;
struct step_syms *step_syms__new(uint32_t pid);
void step_syms__free(struct step_syms *ss);
/* code: look for a function (else any symbol).  See argus_step__symbolize. */
int step_syms__lookup(struct step_syms *ss, uint64_t addr, bool code, char *name,
		      size_t len, uint64_t *off, bool *is_symbol);

int step_syms__mapping(struct step_syms *ss, uint64_t addr, char *name, size_t len,
		       uint64_t *off);

/* The ptrace backend (step_ptrace.c). */
int step_ptrace__open(uint32_t pid, uint32_t tid, uint32_t timeout_ms,
		      struct argus_step_backend *out);

/* The function containing addr in the stepped process (cached with the
 * decoded instruction), NULL if unknown. */
const char *step_engine__func(struct argus_stepper *s, uint64_t addr);

/* The kind of an instruction recorded with ARGUS_STEP_F_OVER, for call
 * depth: a call whose callee came back is no call; anything else that ran
 * on to a return (a jump into the callee, a start inside it) returned. */
static inline uint8_t step_over_kind(uint8_t kind)
{
	return kind & ARGUS_STEP_K_CALL ? (uint8_t)(kind & ~ARGUS_STEP_K_CALL)
					: (uint8_t)((kind & ~(ARGUS_STEP_K_JMP | ARGUS_STEP_K_JCC)) |
						    ARGUS_STEP_K_RET);
}

/* Replay: registers before each instruction, kept every STEP_RC_EVERY. */
#define STEP_RC_EVERY 256

#endif /* ARGUS_STEP_INTERNAL_H */
