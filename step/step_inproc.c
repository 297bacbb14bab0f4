/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_inproc.c - fast step recording: the thread steps itself (issue 13
 * §7).  One ptrace stop per instruction costs two context switches and,
 * in a VM, exits; here the trap flag's SIGTRAP is taken in the target by a
 * handler we put there, and ptrace is used only to set up and to tear
 * down.
 *
 * Setup, at a ptrace stop of the thread:
 *   1. inject mmap (the `syscall` bytes poked over the word at rip for
 *      that one call, then put back): an RWX page area `map`;
 *   2. write the handler, a restorer and the header into it;
 *   3. inject rt_sigaction(SIGTRAP, handler, &old);
 *   4. set TF in the thread's eflags and PTRACE_DETACH.  TF set through
 *      SETREGS survives the detach: the kernel only clears a TF it set
 *      itself for PTRACE_SINGLESTEP (TIF_FORCED_TF).
 * Then every instruction traps; the kernel delivers SIGTRAP with TF
 * cleared for the handler, the handler copies the 23 general registers of
 * the ucontext into the buffer and returns; rt_sigreturn restores TF.
 * After COUNT records the handler clears TF in the ucontext instead.
 * Teardown: attach again, step the thread out of our code if it is in it,
 * restore the old SIGTRAP action, read the records, munmap, detach.
 *
 * map layout:  0x00 handler   0x3b restorer (mov eax,15; syscall at 0x40)
 *              0x80 count u64, 0x88 max u64, 0x90 new sigaction (32 B),
 *              0xb0 old sigaction, 0x100 records (23 x u64 each, the
 *              mcontext gregs: r8..r15 rdi rsi rbp rbx rdx rax rcx rsp rip
 *              efl ...)
 *
 * What it records: registers only.  Memory operands get their addresses
 * (from the registers) but no values (valid = 0): the handler does not
 * decode.  Signal handlers of the target run with TF cleared by the
 * kernel, so they are not recorded; the target's own SIGTRAP action is
 * replaced while recording.  x86-64 only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "step_internal.h"

/* bench/../step: assembled from
 *   lea rsi,[rdx+40]; lea r8,[rip+hdr]; mov rax,[r8]; cmp rax,[r8+8]; jae 1f
 *   imul rdi,rax,184; lea rdi,[r8+rdi+128]; mov ecx,23; rep movsq
 *   inc qword [r8]; ret
 * 1: and qword [rdx+40+17*8],~0x100; ret
 * restorer: mov eax,15; syscall */
static const uint8_t code[] = {
	0x48, 0x8d, 0x72, 0x28, 0x4c, 0x8d, 0x05, 0x75, 0x00, 0x00, 0x00, 0x49,
	0x8b, 0x00, 0x49, 0x3b, 0x40, 0x08, 0x73, 0x1b, 0x48, 0x69, 0xf8, 0xb8,
	0x00, 0x00, 0x00, 0x49, 0x8d, 0xbc, 0x38, 0x80, 0x00, 0x00, 0x00, 0xb9,
	0x17, 0x00, 0x00, 0x00, 0xf3, 0x48, 0xa5, 0x49, 0xff, 0x00, 0xc3, 0x48,
	0x81, 0xa2, 0xb0, 0x00, 0x00, 0x00, 0xff, 0xfe, 0xff, 0xff, 0xc3, 0xb8,
	0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

#define OFF_HANDLER 0x00
#define OFF_RESTORER 0x3b
#define OFF_SYSCALL 0x40
#define OFF_COUNT 0x80
#define OFF_NEWSA 0x90
#define OFF_OLDSA 0xb0
#define OFF_RECS 0x100
#define NGREGS 23
#define REC_SIZE (NGREGS * 8)
#define TF 0x100ull
#define FAST_MAX (4u << 20)   /* records per session */

struct ksigaction {           /* the kernel's, for rt_sigaction */
	uint64_t handler, flags, restorer, mask;
};

/* mcontext gregs index -> enum argus_step_reg */
static const int8_t greg_map[18] = {
	ARGUS_REG_R8, ARGUS_REG_R9, ARGUS_REG_R10, ARGUS_REG_R11, ARGUS_REG_R12,
	ARGUS_REG_R13, ARGUS_REG_R14, ARGUS_REG_R15, ARGUS_REG_RDI, ARGUS_REG_RSI,
	ARGUS_REG_RBP, ARGUS_REG_RBX, ARGUS_REG_RDX, ARGUS_REG_RAX, ARGUS_REG_RCX,
	ARGUS_REG_RSP, ARGUS_REG_RIP, ARGUS_REG_EFLAGS,
};

static int attach(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return -errno;
	for (;;) {
		if (waitpid(tid, &st, __WALL) != tid)
			return -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(st)))
			return -errno;
	}
}

/* One syscall in the thread, at the `syscall` instruction at sc. */
static long inject(pid_t tid, const struct user_regs_struct *saved, uint64_t sc, long nr,
		   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct user_regs_struct r = *saved;
	int st;

	r.rax = (uint64_t)nr;
	r.orig_rax = ~0ull;   /* no syscall restart on the way */
	r.rdi = a0; r.rsi = a1; r.rdx = a2; r.r10 = a3; r.r8 = a4; r.r9 = a5;
	r.rip = sc;
	r.eflags &= ~TF;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r))
		return -errno;
	/* A SIGTRAP the thread's own trap flag queued before we attached
	 * stops it before the syscall ran (rip still at sc): that trap is
	 * ours, so drop it (step with signal 0) and step again. */
	for (int tries = 0; tries < 8; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL))
			return -errno;
		if (waitpid(tid, &st, __WALL) != tid)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH;
		if (WSTOPSIG(st) != SIGTRAP)   /* a signal came first: give up */
			return -EINTR;
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r))
			return -errno;
		if (r.rip != sc)
			return (long)r.rax;
	}
	return -EINTR;
}

static int wr(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static void regs_from(struct argus_step_regs *dst, const uint64_t *g)
{
	for (int k = 0; k < 18; k++)
		dst->r[greg_map[k]] = g[k];
	dst->r[ARGUS_REG_EFLAGS] &= ~TF;   /* ours, not the program's */
}

struct fentry {
	uint64_t addr;
	bool used;
	struct step_decoded d;
	int32_t sym;
	uint64_t off;
};

#define FCACHE 4096

static struct fentry *fdecode(pid_t pid, struct fentry *cache, struct step_syms *syms,
			      struct argus_step_rec *rec, uint64_t a)
{
	struct fentry *e = &cache[(a ^ (a >> 12)) & (FCACHE - 1)];
	uint8_t buf[16];
	char name[256];
	bool is;

	if (e->used && e->addr == a)
		return e;
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->addr = a;
	e->sym = -1;
	if (rd(pid, a, buf, sizeof(buf)) || step_decode_full(buf, sizeof(buf), a, &e->d))
		memset(&e->d, 0, sizeof(e->d));
	e->d.proto.addr = a;
	if (!e->d.proto.len)
		e->d.proto.flags |= ARGUS_STEP_F_NOBYTES;
	if (syms && !step_syms__lookup(syms, a, true, name, sizeof(name), &e->off, &is))
		e->sym = argus_step_rec__intern(rec, name);
	return e;
}

/* One instruction from its registers before and after. only: when not 0,
 * a mask of the registers this instruction may be said to change (the
 * rest is left in *after for the next). */
static int emit(struct argus_step_rec *rec, const struct fentry *e, struct argus_step_regs *before,
		const struct argus_step_regs *after, uint64_t only)
{
	struct argus_step_insn in = e->d.proto;
	struct argus_step_regs next = *before;

	in.sym = e->sym < 0 ? -1 : e->sym;
	in.sym_off = e->off;
	if (e->d.syscall)
		in.flags |= ARGUS_STEP_F_SYSCALL;
	for (int r = 0; r < ARGUS_STEP_NREGS; r++) {
		if (r == ARGUS_REG_RIP || after->r[r] == before->r[r] || (only && !(only & (1ull << r))))
			continue;
		next.r[r] = after->r[r];
		if (in.nregs < ARGUS_STEP_MAX_CHANGED) {
			in.reg[in.nregs] = (uint8_t)r;
			in.val[in.nregs++] = after->r[r];
		}
	}
	in.nmem = e->d.nmemop;
	for (unsigned k = 0; k < in.nmem; k++) {
		memset(&in.mem[k], 0, sizeof(in.mem[k]));
		in.mem[k].addr = step_memop_addr(&e->d.memop[k], before, e->addr, in.len);
		in.mem[k].size = e->d.memop[k].size ? e->d.memop[k].size : 8;
		in.mem[k].access = e->d.memop[k].access;
	}
	next.r[ARGUS_REG_RIP] = after->r[ARGUS_REG_RIP];
	*before = next;
	return argus_step_rec__append(rec, &in);
}

/*
 * Turn the records into a recording: decode each address once.
 * A syscall returns to user space with TF set by sysret/iret, so its trap
 * comes one instruction late: the record after a syscall is after the
 * syscall and the instruction behind it.  That one is put back: the
 * syscall is given the registers a syscall changes (rax, rcx, r11), the
 * instruction behind it the rest.
 */
static int build(pid_t pid, const struct user_regs_struct *start, const uint64_t *recs,
		 size_t n, struct step_syms *syms, struct argus_step_rec *rec)
{
	const uint64_t sc_regs = 1ull << ARGUS_REG_RAX | 1ull << ARGUS_REG_RCX | 1ull << ARGUS_REG_R11;
	struct argus_step_regs before, after;
	struct fentry *cache;
	int rc = 0;

	cache = calloc(FCACHE, sizeof(*cache));
	if (!cache)
		return -ENOMEM;
	memcpy(&before, start, sizeof(before));
	before.r[ARGUS_REG_EFLAGS] &= ~TF;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t a = before.r[ARGUS_REG_RIP];
		struct fentry *e = fdecode(pid, cache, syms, rec, a);

		after = before;
		regs_from(&after, recs + i * NGREGS);
		if (e->d.syscall && e->d.proto.len && after.r[ARGUS_REG_RIP] != a + e->d.proto.len) {
			struct argus_step_regs mid = after;

			mid.r[ARGUS_REG_RIP] = a + e->d.proto.len;
			rc = emit(rec, e, &before, &mid, sc_regs);
			if (rc)
				break;
			e = fdecode(pid, cache, syms, rec, a + e->d.proto.len);
		}
		rc = emit(rec, e, &before, &after, 0);
	}
	free(cache);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int argus_step__record_fast(uint32_t upid, uint32_t utid, size_t count, uint32_t timeout_ms,
			    struct argus_step_rec **out, double *run_s)
{
	pid_t pid = (pid_t)upid, tid = (pid_t)(utid ? utid : upid);
	struct user_regs_struct saved, cur, first;
	struct ksigaction sa;
	uint64_t hdr[2], map = 0, size, got = 0, *recs = NULL;
	long word = 0, patched, r;
	struct step_syms *syms = NULL;
	struct argus_step_rec *rec = NULL;
	bool poked = false;
	double t0, deadline;
	int rc;

	if (!upid || !out || !count || count > FAST_MAX)
		return -EINVAL;
	*out = NULL;
	size = (OFF_RECS + count * REC_SIZE + 4095) & ~4095ull;
	rc = attach(tid);
	if (rc)
		return rc == -EPERM ? -EBUSY : rc;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved)) {
		rc = -errno;
		goto detach;
	}
	first = saved;
	/* the first syscall: `syscall` over the code at rip, put back after */
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, tid, (void *)saved.rip, NULL);
	if (errno) {
		rc = -errno;
		goto detach;
	}
	patched = (word & ~0xffffL) | 0x050f;
	if (ptrace(PTRACE_POKETEXT, tid, (void *)saved.rip, (void *)patched)) {
		rc = -errno;
		goto detach;
	}
	poked = true;
	r = inject(tid, &saved, saved.rip, SYS_mmap, 0, size, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, ~0ull, 0);
	ptrace(PTRACE_POKETEXT, tid, (void *)saved.rip, (void *)word);
	poked = false;
	if (r < 0 && r > -4096) {
		rc = (int)r;
		goto restore;
	}
	map = (uint64_t)r;
	hdr[0] = 0;
	hdr[1] = count;
	sa.handler = map + OFF_HANDLER;
	sa.flags = SA_SIGINFO | 0x04000000 /* SA_RESTORER */ | SA_NODEFER;
	sa.restorer = map + OFF_RESTORER;
	sa.mask = 0;
	if ((rc = wr(pid, map, code, sizeof(code))) || (rc = wr(pid, map + OFF_COUNT, hdr, sizeof(hdr))) ||
	    (rc = wr(pid, map + OFF_NEWSA, &sa, sizeof(sa))))
		goto unmap;
	r = inject(tid, &saved, map + OFF_SYSCALL, SYS_rt_sigaction, SIGTRAP, map + OFF_NEWSA,
		   map + OFF_OLDSA, 8, 0, 0);
	if (r) {
		rc = r < 0 ? (int)r : -EIO;
		goto unmap;
	}
	cur = saved;
	cur.eflags |= TF;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &cur) || ptrace(PTRACE_DETACH, tid, NULL, NULL)) {
		rc = -errno;
		goto unmap;
	}

	/* the thread records itself now */
	t0 = now_s();
	deadline = t0 + (timeout_ms ? timeout_ms : 10000) / 1000.0;
	for (;;) {
		if (rd(pid, map + OFF_COUNT, &got, sizeof(got))) {
			rc = -ESRCH;   /* the process is gone */
			return rc;
		}
		if (got >= count || now_s() > deadline)
			break;
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	if (run_s)
		*run_s = now_s() - t0;

	rc = attach(tid);
	if (rc)
		return rc;
	/* out of our handler and restorer first: the sigframe returns there */
	for (int i = 0; i < 64; i++) {
		int st;

		if (ptrace(PTRACE_GETREGS, tid, NULL, &cur)) {
			rc = -errno;
			goto detach;
		}
		if (cur.rip < map || cur.rip >= map + 0x80)
			break;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) || waitpid(tid, &st, __WALL) != tid) {
			rc = -ESRCH;
			goto detach;
		}
	}
	cur.eflags &= ~TF;
	saved = cur;           /* where the thread goes on from */
	r = inject(tid, &saved, map + OFF_SYSCALL, SYS_rt_sigaction, SIGTRAP, map + OFF_OLDSA, 0, 8, 0, 0);
	if (rd(pid, map + OFF_COUNT, &got, sizeof(got)))
		got = 0;
	if (got > count)
		got = count;
	recs = malloc(got ? got * REC_SIZE : 1);
	if (!recs || (got && rd(pid, map + OFF_RECS, recs, got * REC_SIZE)))
		rc = -ENOMEM;
	if (r && !rc)
		rc = -EIO;
unmap:
	inject(tid, &saved, map + OFF_SYSCALL, SYS_munmap, map, size, 0, 0, 0, 0);
restore:
	if (poked)
		ptrace(PTRACE_POKETEXT, tid, (void *)saved.rip, (void *)word);
	ptrace(PTRACE_SETREGS, tid, NULL, &saved);
detach:
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	if (rc || !recs) {
		free(recs);
		return rc ? rc : -EIO;
	}
	/* the recording starts where the setup found the thread */
	{
		struct argus_step_regs start;

		memcpy(&start, &first, sizeof(start));
		rec = argus_step_rec__new(upid, (uint32_t)tid, &start);
	}
	syms = step_syms__new(upid);
	rc = rec ? build(pid, &first, recs, got, syms, rec) : -ENOMEM;
	free(recs);
	step_syms__free(syms);
	if (rc) {
		argus_step_rec__free(rec);
		return rc;
	}
	*out = rec;
	return 0;
}
