/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_step.h - instruction stepping, step recordings, their diff, and
 * data-flag discovery (BRIEF §1 "Data-flag flow", issue 13).
 *
 * Objects:
 *   struct argus_stepper   one thread being single-stepped.  Its registers,
 *                          memory and the step itself come from a backend:
 *                          ptrace on a live pid (argus_step__open_pid), or
 *                          callbacks (argus_step__open_backend) for a host
 *                          that already owns the process, like lldb, where
 *                          ptrace is taken.  The engine decodes (capstone),
 *                          computes memory operands and register changes,
 *                          and symbolizes; the backend only stops and reads.
 *   struct argus_step_rec  a recording: the thread's registers at the start,
 *                          then one argus_step_insn per instruction.  Saved
 *                          and loaded in the format of docs/step-format.md.
 *
 * An instruction record keeps what the instruction did: its address and
 * bytes, the registers whose value it changed (new values; rip is left out,
 * it is the next record's address), and for each memory operand the
 * effective address, the value before and the value after.  Registers
 * before any instruction are the start registers replayed through the
 * changes (argus_step_rec__regs_at).
 *
 * Not a name clash: `struct argus_step` (argus_diag.h) is a step of a
 * backward slice; this header never defines it, the stepping object is
 * `struct argus_stepper` and its functions are argus_step__*.
 *
 * x86-64 only.  Conventions (libbpf style): 0 / -errno, constructors return
 * NULL and set errno, free accepts NULL, never prints.  Not thread-safe.
 */
#ifndef ARGUS_STEP_H
#define ARGUS_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers: the fields of struct user_regs_struct, in its order. */
enum argus_step_reg {
	ARGUS_REG_R15, ARGUS_REG_R14, ARGUS_REG_R13, ARGUS_REG_R12,
	ARGUS_REG_RBP, ARGUS_REG_RBX, ARGUS_REG_R11, ARGUS_REG_R10,
	ARGUS_REG_R9, ARGUS_REG_R8, ARGUS_REG_RAX, ARGUS_REG_RCX,
	ARGUS_REG_RDX, ARGUS_REG_RSI, ARGUS_REG_RDI, ARGUS_REG_ORIG_RAX,
	ARGUS_REG_RIP, ARGUS_REG_CS, ARGUS_REG_EFLAGS, ARGUS_REG_RSP,
	ARGUS_REG_SS, ARGUS_REG_FS_BASE, ARGUS_REG_GS_BASE, ARGUS_REG_DS,
	ARGUS_REG_ES, ARGUS_REG_FS, ARGUS_REG_GS,
	ARGUS_STEP_NREGS
};

struct argus_step_regs {
	uint64_t r[ARGUS_STEP_NREGS];   /* indexed by enum argus_step_reg */
};

/* "rax", ...; NULL outside the enum. */
const char *argus_step_reg__name(int reg);
/* The enum value of a name ("rip", "eflags"), -1 if none. */
int argus_step_reg__by_name(const char *name);

#define ARGUS_STEP_MAX_MEM 4      /* memory operands kept per instruction */
#define ARGUS_STEP_MAX_CHANGED 24 /* <= ARGUS_STEP_NREGS - 1 (rip) */
#define ARGUS_STEP_TEXT_MAX 80    /* "mov eax, dword ptr [rip + 0x2ee6]" */

/* argus_step_mem.access */
#define ARGUS_STEP_MEM_READ 0x1
#define ARGUS_STEP_MEM_WRITE 0x2
/* argus_step_mem.valid: which values could be read from the target */
#define ARGUS_STEP_MEM_HAVE_BEFORE 0x1
#define ARGUS_STEP_MEM_HAVE_AFTER 0x2

struct argus_step_mem {
	uint64_t addr;          /* effective address (segment base included) */
	uint64_t before;        /* little-endian value before the instruction,
				   first min(size, 8) bytes */
	uint64_t after;         /* same, after it */
	uint16_t size;          /* operand size, bytes (16 for an xmm load) */
	uint8_t access;         /* ARGUS_STEP_MEM_READ | _WRITE */
	uint8_t valid;          /* ARGUS_STEP_MEM_HAVE_* */
};

/* argus_step_insn.flags */
#define ARGUS_STEP_F_SYSCALL 0x1  /* a syscall instruction, stepped over */
#define ARGUS_STEP_F_RESTART 0x2  /* the syscall the thread was stopped in
				     (a sleep), restarted by the kernel */
#define ARGUS_STEP_F_SIGNAL 0x4   /* a signal (sig) came during this step
				     and was delivered to the thread */
#define ARGUS_STEP_F_NOBYTES 0x8  /* the code could not be read */
#define ARGUS_STEP_F_OVER 0x10    /* the backend ran this instruction's callee
				     to its return in one go (lldb: a call into
				     the vDSO, whose time seqlock never settles
				     when stepped slowly): the callee's own
				     instructions are not recorded, and for
				     call depth the step is not a call (a call
				     that came back) or is a return (a jump
				     into it, or a start inside it) */

/* argus_step_insn.kind: derived from the bytes (not stored in files) */
#define ARGUS_STEP_K_JCC 0x1      /* conditional branch (jcc, loop, jrcxz) */
#define ARGUS_STEP_K_JMP 0x2
#define ARGUS_STEP_K_CALL 0x4
#define ARGUS_STEP_K_RET 0x8
#define ARGUS_STEP_K_SETS_FLAGS 0x10 /* writes eflags */

struct argus_step_insn {
	uint64_t addr;          /* rip of the instruction */
	uint64_t target;        /* direct branch/call target, else 0 */
	uint64_t sym_off;       /* addr - symbol start */
	int32_t sym;            /* index of the symbol name in the recording's
				   strings (argus_step_rec__string), -1 none */
	uint16_t flags;         /* ARGUS_STEP_F_* */
	uint8_t kind;           /* ARGUS_STEP_K_* */
	uint8_t len;            /* bytes[0..len) */
	uint8_t bytes[16];
	uint8_t sig;            /* with ARGUS_STEP_F_SIGNAL */
	uint8_t nregs;          /* changed registers */
	uint8_t nmem;
	uint8_t pad;
	uint8_t reg[ARGUS_STEP_MAX_CHANGED];   /* enum argus_step_reg */
	uint64_t val[ARGUS_STEP_MAX_CHANGED];  /* its value after */
	struct argus_step_mem mem[ARGUS_STEP_MAX_MEM];
	char text[ARGUS_STEP_TEXT_MAX];        /* "mov eax, dword ptr [...]" */
};

/* ---------------------------------------------------------------------
 * The stepper
 */

/* One step, as the engine asks for it and the backend reports it. */
struct argus_step_stop {
	bool syscall;           /* in: the instruction is a syscall (ptrace
				   steps it with PTRACE_SYSCALL: no trap flag
				   left set while it blocks) */
	uint32_t writes;        /* in: the registers the instruction writes
				   as decoded (bit 1u << enum argus_step_reg),
				   with the rip bit set when the set is known;
				   0 when unknown.  A backend whose register
				   reads are costly (lldb: one remote packet
				   per register) may re-read only these (and
				   rip) after the step */
	int known_reg;          /* in: a register (enum argus_step_reg) whose
				   value after the step the engine knows
				   exactly (a data move: mov, movzx, movsx,
				   lea, pop into a general register), -1
				   none.  A backend with costly register
				   reads may take known_val instead of
				   reading it, unless a signal came */
	uint64_t known_val;     /* in: that value */
	int sig;                /* out: a signal other than the step's own
				   trap that was delivered during the step,
				   or 0 */
	bool over;              /* out: the step ran on to the return of the
				   function the instruction entered, or that
				   the thread was in (ARGUS_STEP_F_OVER) */
};

/*
 * Backend: how registers, memory and one step are had.  A host that owns
 * the process (lldb: SBThread::StepInstruction, SBFrame registers,
 * SBProcess::ReadMemory) fills this in; the ptrace backend is one too.
 * Every callback returns 0 / -errno; read_mem returns the number of bytes
 * read (short at the end of a mapping) or -errno.  step executes exactly
 * one instruction of the thread; a blocking syscall may take long.
 */
struct argus_step_backend {
	size_t sz;              /* sizeof(struct argus_step_backend) */
	void *ctx;
	int (*get_regs)(void *ctx, struct argus_step_regs *out);
	long (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*step)(void *ctx, struct argus_step_stop *stop);
	void (*close)(void *ctx); /* may be NULL */
};

struct argus_step_opts {
	size_t sz;              /* sizeof(struct argus_step_opts) */
	/* How long one syscall instruction may block before __next() gives
	 * up with -ETIMEDOUT (ptrace backend), ms; 0 = 5000. */
	uint32_t syscall_timeout_ms;
	/* Do not symbolize (faster; sym stays -1). */
	bool no_symbols;
	/* argus_step__open_backend: the id of the thread the backend steps,
	 * for the recording's tid (0 = the pid).  __open_pid ignores it. */
	uint32_t tid;
};

struct argus_stepper;
struct argus_step_rec;

/*
 * Attach to thread tid of process pid with PTRACE_SEIZE + PTRACE_INTERRUPT
 * (tid 0 = pid, the main thread).  The rest of the process keeps running.
 * errno: ESRCH (no such thread, or tid not in pid), EPERM, EBUSY (already
 * traced by someone else).
 */
struct argus_stepper *argus_step__open_pid(uint32_t pid, uint32_t tid,
					   const struct argus_step_opts *opts);
/* Over a caller's backend (the stepper calls b->close at __close).  pid
 * (may be 0) is used only to symbolize from /proc/PID/maps, and with
 * opts->tid as the recording's pid/tid. */
struct argus_stepper *argus_step__open_backend(const struct argus_step_backend *b,
					       uint32_t pid,
					       const struct argus_step_opts *opts);
/* Detach (the thread runs on as before) and free.  Accepts NULL. */
void argus_step__close(struct argus_stepper *s);

/* The registers now, before the next instruction. */
int argus_step__regs(struct argus_stepper *s, struct argus_step_regs *out);
/* Read target memory: 0 when all len bytes were read. */
int argus_step__read(struct argus_stepper *s, uint64_t addr, void *buf, size_t len);

/*
 * Execute one instruction and describe it in *out.  If rec is not NULL the
 * instruction is appended to it (and its symbol name to its strings).
 * Returns 0; -ESRCH when the thread exited or was killed; -ETIMEDOUT when
 * a syscall blocked longer than opts.syscall_timeout_ms (the thread stays
 * in it; __close still detaches cleanly); other -errno.
 */
int argus_step__next(struct argus_stepper *s, struct argus_step_rec *rec,
		     struct argus_step_insn *out);

/*
 * Fast recording (step_inproc.c): the thread steps itself, through a
 * SIGTRAP handler injected into the process, for count instructions (at
 * most 4 M) or timeout_ms (0 = 10 s); ptrace only sets up and tears down.
 * Registers only: memory operands get addresses, no values (valid = 0).
 * *out is the recording; *run_s (may be NULL) the seconds the thread ran
 * recording itself.  Returns 0, -ESRCH, -EBUSY (traced by another), -EIO
 * (the injection failed), -EINVAL.
 */
int argus_step__record_fast(uint32_t pid, uint32_t tid, size_t count, uint32_t timeout_ms,
			    struct argus_step_rec **out, double *run_s);

/* Start a recording of this stepper's thread: pid, tid, registers now. */
struct argus_step_rec *argus_step__new_rec(struct argus_stepper *s);

/* Symbol of addr in the stepped process ("main", "[heap]", a file name
 * for anonymous memory around it...): for data too.  *off = addr - the
 * symbol's (or mapping's) start.  *is_symbol says whether name is a symbol
 * (else a mapping).  Returns 0 or -ENOENT. */
int argus_step__symbolize(struct argus_stepper *s, uint64_t addr, char *name,
			  size_t len, uint64_t *off, bool *is_symbol);
/* The mapping addr is in: the file's base name, "[heap]", "[stack]",
 * "[anon]"; *off from the mapping's start.  0 or -ENOENT. */
int argus_step__mapping(struct argus_stepper *s, uint64_t addr, char *name, size_t len,
			uint64_t *off);

/* ---------------------------------------------------------------------
 * Conditions for `--until` (docs/step-format.md, "Conditions"):
 *   REG OP VALUE          rip == 0x401136, rax != 0, eflags > 5
 *   memN(ADDR) OP VALUE   N in 8, 16, 32, 64; mem32(0x404028) != 0
 *   left FUNC             the thread was in function FUNC and now is not,
 *                         at the same or a shallower call depth
 * OP is one of == != < > <= >= (unsigned); numbers are C literals (0x..).
 */
struct argus_step_cond;

/* Parse; NULL with errno EINVAL and a message in err (one line). */
struct argus_step_cond *argus_step_cond__parse(const char *text, char *err, size_t errlen);
void argus_step_cond__free(struct argus_step_cond *c);
/* After each __next(): 1 when the condition holds now (before the next
 * instruction), 0 when not, -errno when memory could not be read. */
int argus_step_cond__eval(struct argus_step_cond *c, struct argus_stepper *s,
			  const struct argus_step_insn *last);

/* ---------------------------------------------------------------------
 * Recordings
 */

struct argus_step_err {
	int code;               /* -errno style */
	uint64_t offset;        /* file offset the error is about */
	char msg[256];          /* one line: what and where */
};

struct argus_step_rec *argus_step_rec__new(uint32_t pid, uint32_t tid,
					   const struct argus_step_regs *start);
void argus_step_rec__free(struct argus_step_rec *r);

uint32_t argus_step_rec__pid(const struct argus_step_rec *r);
uint32_t argus_step_rec__tid(const struct argus_step_rec *r);
size_t argus_step_rec__count(const struct argus_step_rec *r);
const struct argus_step_insn *argus_step_rec__insn(const struct argus_step_rec *r, size_t i);
/* NULL if idx is not a string of r. */
const char *argus_step_rec__string(const struct argus_step_rec *r, int32_t idx);
/* Intern a string (a symbol name): its index, or -ENOMEM. */
int32_t argus_step_rec__intern(struct argus_step_rec *r, const char *s);
int argus_step_rec__append(struct argus_step_rec *r, const struct argus_step_insn *in);
/* Registers before instruction i (i == count: after the last one). */
int argus_step_rec__regs_at(const struct argus_step_rec *r, size_t i,
			    struct argus_step_regs *out);

/* Write to path (created or replaced, mode 0600). */
int argus_step_rec__save(const struct argus_step_rec *r, const char *path,
			 struct argus_step_err *err);
/* Read a file; NULL with errno and err filled (one line) on bad input. */
struct argus_step_rec *argus_step_rec__load(const char *path, struct argus_step_err *err);
/* Same, from memory (the fuzz target). */
struct argus_step_rec *argus_step_rec__parse(const void *buf, size_t len,
					     struct argus_step_err *err);

/* Decode bytes at addr (text, kind, target) as the recorder does; 0, or
 * -EINVAL when capstone cannot decode them. */
int argus_step_decode(const uint8_t *bytes, size_t len, uint64_t addr,
		      struct argus_step_insn *io);

/* ---------------------------------------------------------------------
 * Analysis: loops, the inputs of a branch, diff of two recordings, flag
 */

#define ARGUS_STEP_MAX_INPUTS 8

/* One input of a branch's condition. */
struct argus_step_input {
	bool is_mem;
	uint8_t reg;            /* !is_mem: enum argus_step_reg */
	uint16_t size;          /* is_mem: bytes */
	uint64_t addr;          /* is_mem: effective address */
	uint64_t value;         /* register value, or memory value read */
	size_t at;              /* index of the instruction that read it (the
				   flag-setting instruction or a load feeding
				   it) */
	bool self_written;      /* is_mem: the thread itself wrote this
				   address somewhere in the recording
				   (branch_inputs; find_flag: in the
				   loop, or before it on its stack) */
};

struct argus_step_loop {
	uint64_t head;          /* target of the back edge */
	uint64_t latch;         /* address of the back-edge branch */
	uint64_t body_lo, body_hi; /* [lo, hi] addresses of the loop's own
				   function that the loop runs (callees not
				   included) */
	uint32_t iterations;    /* times the head ran in the recording, in
				   the frame the loop belongs to */
	uint32_t depth;         /* call depth of the loop's frame, relative to
				   the recording's shallowest (0) */
	uint32_t body_insns;    /* distinct addresses run per iteration,
				   callees included */
};

/* The loop the recording ends in: the outermost loop of the shallowest
 * frame that stays on the stack to the end and turns there (twice if any
 * such frame does), counted from when the thread is in that frame for
 * good.  -ENOENT when no such frame came back to an instruction of its
 * own (not a loop). */
int argus_step_rec__loop(const struct argus_step_rec *r, struct argus_step_loop *out);

/* The inputs of the conditional branch at index i: the flags-setting
 * instruction before it and, through registers, the loads that fed it
 * (up to ARGUS_STEP_MAX_INPUTS, memory first).  Returns the number found,
 * or -EINVAL when i is not a conditional branch. */
int argus_step_rec__branch_inputs(const struct argus_step_rec *r, size_t i,
				  struct argus_step_input *out, size_t max);

struct argus_step_diff {
	bool diverged;          /* false: one is a prefix of the other */
	bool aligned;           /* an address common to both was found */
	size_t a_start, b_start; /* the aligned starts */
	size_t a_at, b_at;      /* index of the divergent instruction (the
				   last common one: the branch) in each */
	size_t common;          /* instructions in lockstep before it */
	uint64_t a_next, b_next; /* where each went next (0: recording ended) */
	int na, nb;             /* inputs on each side */
	struct argus_step_input a_in[ARGUS_STEP_MAX_INPUTS];
	struct argus_step_input b_in[ARGUS_STEP_MAX_INPUTS];
	bool have_loop;
	struct argus_step_loop loop; /* loop around the divergence (b, else a) */
};

/* Align by control flow: from the first instruction of a that b also runs
 * (b from its first run of it), walk both while they run the same
 * instructions.  "The same": same function and offset where both have a
 * symbol (two processes of one PIE binary differ in load address), else
 * same address.  Returns 0 (out->aligned false if nothing is common). */
int argus_step_rec__diff(const struct argus_step_rec *a, const struct argus_step_rec *b,
			 struct argus_step_diff *out);

struct argus_step_flag {
	uint64_t addr;
	uint16_t size;
	uint64_t value;         /* as the spinning thread last read it */
	uint64_t insn_addr;     /* the instruction that reads it */
	size_t insn_index;      /* its index in the recording */
	uint64_t branch_addr;   /* the exit branch it decides */
	size_t branch_index;
	struct argus_step_loop loop;
};

/*
 * The flag a spinning thread waits for: the loop's exit branch (taken the
 * same way on every iteration, the other way leaving the loop) whose
 * condition reads memory this thread never writes.  Returns 0, -ENOENT
 * (no loop: not spinning), -ENODATA (a loop, but no such branch/memory).
 */
int argus_step_rec__find_flag(const struct argus_step_rec *r, struct argus_step_flag *out);
/* Same from a diff (normal a vs hang b): the divergent branch's memory
 * input that this thread does not write, from b's side. */
int argus_step_diff__flag(const struct argus_step_rec *b, const struct argus_step_diff *d,
			  struct argus_step_flag *out);

#endif /* ARGUS_STEP_H */
