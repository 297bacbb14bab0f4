/* test_step.c - the step library offline (docs/step-format.md): recordings
 * built by hand from real x86-64 bytes, saved and loaded; the reader's
 * refusals; the loop, the flag and the diff on a synthetic spin; the
 * --until grammar; and the callback backend (the one the lldb plugin will
 * use) driven by this test's own ptrace of a child. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argus_step.h"
#include "check.h"

#define FLAG 0x2000
#define SLOT 0x7fec          /* rbp - 4 */

struct memop { uint64_t addr, before, after; uint8_t access; };

static void add(struct argus_step_rec *r, uint64_t addr, const char *hex, int reg, uint64_t val,
		const struct memop *m)
{
	struct argus_step_insn in;

	memset(&in, 0, sizeof(in));
	in.addr = addr;
	in.sym = argus_step_rec__intern(r, addr < 0x2000 ? "spin" : "yield");
	in.sym_off = addr & 0xfff;
	for (size_t i = 0; hex[2 * i]; i++)
		sscanf(hex + 2 * i, "%2hhx", &in.bytes[in.len++]);
	CHECK_EQ(argus_step_decode(in.bytes, in.len, in.addr, &in), 0);
	if (reg >= 0) {
		in.reg[0] = (uint8_t)reg;
		in.val[0] = val;
		in.nregs = 1;
	}
	if (m) {
		in.mem[0].addr = m->addr;
		in.mem[0].size = 4;
		in.mem[0].access = m->access;
		in.mem[0].before = m->before;
		in.mem[0].after = m->after;
		in.mem[0].valid = m->access & ARGUS_STEP_MEM_READ ? ARGUS_STEP_MEM_HAVE_BEFORE :
								    ARGUS_STEP_MEM_HAVE_AFTER;
		in.nmem = 1;
	}
	CHECK_EQ(argus_step_rec__append(r, &in), 0);
}

/*
 * 1000  mov eax, [rip+0xffa]     ; the flag at 0x2000
 * 1006  test eax, eax
 * 1008  jne 0x1020               ; exit when set
 * 100a  pause
 * 100c  mov dword [rbp-4], 1     ; the thread's own variable
 * 1013  cmp dword [rbp-4], 0
 * 1017  jne 0x1000               ; back edge
 * turns: iterations that spin; flag_last: the flag reads 1 on one more
 * turn, which exits to 1020 (nop).
 */
static void spin_turns(struct argus_step_rec *r, int turns, bool flag_last)
{
	for (int t = 0; t < turns + flag_last; t++) {
		bool set = flag_last && t == turns;

		add(r, 0x1000, "8b05fa0f0000", ARGUS_REG_RAX, set,
		    &(struct memop){ FLAG, set, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1006, "85c0", ARGUS_REG_EFLAGS, set ? 0x202 : 0x246, NULL);
		add(r, 0x1008, "7516", -1, 0, NULL);
		if (set) {
			add(r, 0x1020, "90", -1, 0, NULL);
			break;
		}
		add(r, 0x100a, "f390", -1, 0, NULL);
		add(r, 0x100c, "c745fc01000000", -1, 0, &(struct memop){ SLOT, 0, 1, ARGUS_STEP_MEM_WRITE });
		add(r, 0x1013, "837dfc00", ARGUS_REG_EFLAGS, 0x202,
		    &(struct memop){ SLOT, 1, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1017, "75e7", -1, 0, NULL);
	}
}

static struct argus_step_rec *spin(int turns, bool flag_last)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x1000, [ARGUS_REG_RBP] = 0x7ff0,
						[ARGUS_REG_RSP] = 0x7f00 } };
	struct argus_step_rec *r = argus_step_rec__new(10, 11, &start);

	spin_turns(r, turns, flag_last);
	return r;
}

static void test_decode_names_the_instruction(void)
{
	struct argus_step_insn in = {0};
	const uint8_t b[] = { 0x75, 0x16 };

	CHECK_EQ(argus_step_decode(b, sizeof(b), 0x1008, &in), 0);
	CHECK(!strcmp(in.text, "jne 0x1020"));
	CHECK(in.kind & ARGUS_STEP_K_JCC);
	CHECK_EQ(in.target, 0x1020);
}

static void test_save_load_round_trip(void)
{
	struct argus_step_rec *r = spin(3, false), *l;
	struct argus_step_regs a, b;
	struct argus_step_err err;
	char path[] = "/tmp/test_step.XXXXXX";
	int fd = mkstemp(path);

	close(fd);
	CHECK_EQ(argus_step_rec__save(r, path, &err), 0);
	l = argus_step_rec__load(path, &err);
	CHECK(l != NULL);
	if (!l) {
		fprintf(stderr, "load: %s\n", err.msg);
		goto out;
	}
	CHECK_EQ(argus_step_rec__count(l), argus_step_rec__count(r));
	CHECK_EQ(argus_step_rec__pid(l), 10);
	CHECK_EQ(argus_step_rec__tid(l), 11);
	for (size_t i = 0; i < argus_step_rec__count(r); i++) {
		const struct argus_step_insn *x = argus_step_rec__insn(r, i), *y = argus_step_rec__insn(l, i);

		CHECK_EQ(x->addr, y->addr);
		CHECK_EQ(x->nregs, y->nregs);
		CHECK_EQ(x->nmem, y->nmem);
		CHECK(!strcmp(x->text, y->text));
		CHECK(!strcmp(argus_step_rec__string(r, x->sym), argus_step_rec__string(l, y->sym)));
		if (x->nmem)
			CHECK_EQ(x->mem[0].addr, y->mem[0].addr);
		argus_step_rec__regs_at(r, i, &a);
		argus_step_rec__regs_at(l, i, &b);
		CHECK(!memcmp(&a, &b, sizeof(a)));
		CHECK_EQ(a.r[ARGUS_REG_RIP], x->addr);
	}
	CHECK(!strcmp(argus_step_rec__insn(l, 0)->text, "mov eax, dword ptr [rip + 0xffa]"));
	argus_step_rec__free(l);
out:
	unlink(path);
	argus_step_rec__free(r);
}

/* Every single flipped byte, every truncation: refused with one line. */
static void test_reader_refuses_every_damage(void)
{
	struct argus_step_rec *r = spin(2, false);
	struct argus_step_err err;
	char path[] = "/tmp/test_step.XXXXXX";
	int fd = mkstemp(path), bad = 0;
	uint8_t *buf;
	long len;
	FILE *f;

	close(fd);
	argus_step_rec__save(r, path, &err);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	CHECK_EQ(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (long i = 0; i < len; i++) {
		struct argus_step_rec *l;

		buf[i] ^= 0x40;
		l = argus_step_rec__parse(buf, (size_t)len, &err);
		buf[i] ^= 0x40;
		if (l || !err.msg[0] || strchr(err.msg, '\n'))
			bad++;
		argus_step_rec__free(l);
	}
	CHECK_EQ(bad, 0);
	for (long n = 0; n < len; n++) {
		struct argus_step_rec *l = argus_step_rec__parse(buf, (size_t)n, &err);

		if (l || !strstr(err.msg, "truncated"))
			bad++;
		argus_step_rec__free(l);
	}
	CHECK_EQ(bad, 0);
	buf[8] = 2;
	CHECK(argus_step_rec__parse(buf, (size_t)len, &err) == NULL);
	CHECK(strstr(err.msg, "version 2 at offset 8") != NULL);
	CHECK_EQ(errno, ENOTSUP);
	free(buf);
	unlink(path);
	argus_step_rec__free(r);
}

static void test_loop_of_a_spin(void)
{
	struct argus_step_rec *r = spin(4, false);
	struct argus_step_loop l;

	CHECK_EQ(argus_step_rec__loop(r, &l), 0);
	CHECK_EQ(l.head, 0x1000);
	CHECK_EQ(l.latch, 0x1017);
	CHECK_EQ(l.iterations, 4);
	CHECK_EQ(l.body_insns, 7);
	argus_step_rec__free(r);
}

/* The flag: the exit whose memory the thread does not write (0x2000),
 * not the back edge's test of its own stack slot. */
static void test_flag_is_memory_not_written_by_the_thread(void)
{
	struct argus_step_rec *r = spin(4, false);
	struct argus_step_input in[ARGUS_STEP_MAX_INPUTS];
	struct argus_step_flag f;
	int n;

	CHECK_EQ(argus_step_rec__find_flag(r, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	CHECK_EQ(f.size, 4);
	CHECK_EQ(f.value, 0);
	CHECK_EQ(f.insn_addr, 0x1000);
	CHECK_EQ(f.branch_addr, 0x1008);
	/* the back edge reads the slot the thread writes */
	n = argus_step_rec__branch_inputs(r, 6, in, ARGUS_STEP_MAX_INPUTS);
	CHECK(n >= 1);
	CHECK(in[0].is_mem && in[0].addr == SLOT && in[0].self_written);
	CHECK_EQ(argus_step_rec__branch_inputs(r, 0, in, ARGUS_STEP_MAX_INPUTS), -EINVAL);
	argus_step_rec__free(r);
}

/*
 * What -O0 code (a debug build) makes of the same spin: the flag's value
 * passes through a stack slot before the test.
 * 1000  mov eax, [rip+0xffa]     ; the flag at 0x2000
 * 1006  mov [rbp-0x1c], eax      ; spilled to a local
 * 1009  mov eax, [rbp-0x1c]      ; and read back
 * 100c  test eax, eax
 * 100e  jne 0x1020               ; exit when set
 * 1010  pause
 * 1012  jmp 0x1000
 */
static void test_flag_through_a_stack_slot(void)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x1000, [ARGUS_REG_RBP] = 0x7ff0,
						[ARGUS_REG_RSP] = 0x7f00 } };
	struct argus_step_rec *r = argus_step_rec__new(10, 11, &start);
	struct argus_step_input in[ARGUS_STEP_MAX_INPUTS];
	struct argus_step_flag f;
	bool slot_listed = false;
	int n;

	for (int t = 0; t < 4; t++) {
		add(r, 0x1000, "8b05fa0f0000", ARGUS_REG_RAX, 0,
		    &(struct memop){ FLAG, 0, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1006, "8945e4", -1, 0, &(struct memop){ 0x7fd4, 0, 0, ARGUS_STEP_MEM_WRITE });
		add(r, 0x1009, "8b45e4", ARGUS_REG_RAX, 0,
		    &(struct memop){ 0x7fd4, 0, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x100c, "85c0", ARGUS_REG_EFLAGS, 0x246, NULL);
		add(r, 0x100e, "7510", -1, 0, NULL);
		add(r, 0x1010, "f390", -1, 0, NULL);
		add(r, 0x1012, "ebec", -1, 0, NULL);
	}
	CHECK_EQ(argus_step_rec__find_flag(r, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	CHECK_EQ(f.insn_addr, 0x1000);
	CHECK_EQ(f.branch_addr, 0x100e);
	/* the slot is listed as what it is: memory the thread wrote */
	n = argus_step_rec__branch_inputs(r, 4 * 7 - 3, in, ARGUS_STEP_MAX_INPUTS);
	CHECK(n >= 2);
	for (int k = 0; k < n; k++)
		if (in[k].is_mem && in[k].addr == 0x7fd4)
			slot_listed = in[k].self_written;
	CHECK(slot_listed);
	argus_step_rec__free(r);
}

/* Four turns of the loop with two exits below (0x1000..0x1016): the
 * first tests the memory at 0x3000, which reads 1000, 1000 + step, ...
 * on successive turns; the second the flag (0). */
static void two_exits(struct argus_step_rec *r, int step)
{
	for (int t = 0; t < 4; t++) {
		uint64_t v = 1000 + (uint64_t)(step * t);

		add(r, 0x1000, "8b05fa1f0000", ARGUS_REG_RAX, v,
		    &(struct memop){ 0x3000, v, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1006, "85c0", ARGUS_REG_EFLAGS, 0x202, NULL);
		add(r, 0x1008, "7416", -1, 0, NULL);
		add(r, 0x100a, "8b05f00f0000", ARGUS_REG_RAX, 0,
		    &(struct memop){ FLAG, 0, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1010, "85c0", ARGUS_REG_EFLAGS, 0x246, NULL);
		add(r, 0x1012, "750c", -1, 0, NULL);
		add(r, 0x1014, "f390", -1, 0, NULL);
		add(r, 0x1016, "ebe8", -1, 0, NULL);
	}
}

/*
 * Two exits off the stack: a clock the loop times itself with (0x3000,
 * a new value every turn, like the vDSO's data page) comes first; the flag
 * (0x2000, the same value every turn) second.  The flag is the one.
 * 1000  mov eax, [rip+0x1ffa]    ; the clock at 0x3000
 * 1006  test eax, eax
 * 1008  je 0x1020
 * 100a  mov eax, [rip+0xff0]     ; the flag at 0x2000
 * 1010  test eax, eax
 * 1012  jne 0x1020
 * 1014  pause
 * 1016  jmp 0x1000
 */
static void test_flag_is_not_a_changing_clock(void)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x1000, [ARGUS_REG_RSP] = 0x7f00 } };
	struct argus_step_rec *r = argus_step_rec__new(10, 11, &start);
	struct argus_step_flag f;

	two_exits(r, 1);
	CHECK_EQ(argus_step_rec__find_flag(r, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	CHECK_EQ(f.branch_addr, 0x1012);
	argus_step_rec__free(r);
}

/*
 * Attached between two waits (case study 3 in lldb, CI): the recording
 * begins inside poll() waiting for the next input, returns to the outer
 * loop, which clears the flag and calls the spin.  The outer frame is the
 * recording's shallowest and has no back edge; the spin's loop is the
 * loop once it has come round DEEP_TURNS (16) times, and its flag is the
 * one the outer frame clears (a write before the loop, off the stack, is
 * not the loop's own).
 * 5000  ret                      ; poll() returning
 * 4000  mov dword [rip-0x200a], 0 ; done = 0 (the flag at 0x2000)
 * 400a  call 0x1000              ; the spin (spin_turns), then 1020 nop
 * 1021  ret
 * 400f  jmp 0x4000               ; the outer loop's back edge
 */
static struct argus_step_rec *outer_then_spin(int rounds, int last_turns)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x5000, [ARGUS_REG_RBP] = 0x7ffff0f0,
						[ARGUS_REG_RSP] = 0x7ffff000 } };
	struct argus_step_rec *r = argus_step_rec__new(10, 11, &start);

	add(r, 0x5000, "c3", -1, 0, NULL);
	for (int round = 0; round < rounds; round++) {
		bool last = round == rounds - 1;

		add(r, 0x4000, "c705f6dfffff00000000", -1, 0,
		    &(struct memop){ FLAG, 1, 0, ARGUS_STEP_MEM_WRITE });
		add(r, 0x400a, "e8f1cfffff", -1, 0, NULL);
		spin_turns(r, last ? last_turns : 1, !last);
		if (!last) {
			add(r, 0x1021, "c3", -1, 0, NULL);
			add(r, 0x400f, "ebef", -1, 0, NULL);
		}
	}
	return r;
}

static void test_loop_entered_after_the_attach(void)
{
	struct argus_step_rec *r = outer_then_spin(1, 20);
	struct argus_step_loop l;
	struct argus_step_flag f;

	CHECK_EQ(argus_step_rec__loop(r, &l), 0);
	CHECK_EQ(l.head, 0x1000);
	CHECK_EQ(l.latch, 0x1017);
	CHECK_EQ(l.iterations, 20);
	CHECK_EQ(l.depth, 1);        /* one call below the outer frame */
	CHECK_EQ(argus_step_rec__find_flag(r, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	CHECK_EQ(f.branch_addr, 0x1008);
	argus_step_rec__free(r);

	/* four turns of a callee's loop are no spin yet */
	r = outer_then_spin(1, 4);
	CHECK_EQ(argus_step_rec__loop(r, &l), -ENOENT);
	argus_step_rec__free(r);

	/* the shallowest frame's loop comes first, once it has turned: a
	 * loop in a callee it calls every turn (here the spin, 20 turns) is
	 * not the loop */
	r = outer_then_spin(3, 20);
	CHECK_EQ(argus_step_rec__loop(r, &l), 0);
	CHECK_EQ(l.head, 0x4000);
	CHECK_EQ(l.depth, 0);
	argus_step_rec__free(r);
}

/*
 * A limit the thread stored before its loop, off the stack and the same
 * every turn like the flag, is tested first; the flag, which the thread
 * never writes, is still the one.
 * 4000  mov dword [rip-0x100a], 1000 ; the limit at 0x3000
 * 400a  jmp 0x1000               ; into the loop (another function)
 * 1000  mov eax, [rip+0x1ffa]    ; the limit
 * 1006  test eax, eax
 * 1008  je 0x1020
 * 100a  mov eax, [rip+0xff0]     ; the flag at 0x2000
 * 1010  test eax, eax
 * 1012  jne 0x1020
 * 1014  pause
 * 1016  jmp 0x1000
 */
static void test_flag_is_not_a_limit_set_before_the_loop(void)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x4000, [ARGUS_REG_RSP] = 0x7ffff000 } };
	struct argus_step_rec *r = argus_step_rec__new(10, 11, &start);
	struct argus_step_flag f;

	add(r, 0x4000, "c705f6efffffe8030000", -1, 0,
	    &(struct memop){ 0x3000, 0, 1000, ARGUS_STEP_MEM_WRITE });
	add(r, 0x400a, "e9f1cfffff", -1, 0, NULL);
	two_exits(r, 0);
	CHECK_EQ(argus_step_rec__find_flag(r, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	CHECK_EQ(f.branch_addr, 0x1012);
	argus_step_rec__free(r);
}

static void test_no_loop_no_flag(void)
{
	struct argus_step_regs start = {0};
	struct argus_step_rec *r = argus_step_rec__new(1, 1, &start);
	struct argus_step_flag f;

	add(r, 0x1000, "8b05fa0f0000", ARGUS_REG_RAX, 0, &(struct memop){ FLAG, 0, 0, ARGUS_STEP_MEM_READ });
	add(r, 0x1006, "85c0", ARGUS_REG_EFLAGS, 0x246, NULL);
	add(r, 0x1008, "7516", -1, 0, NULL);
	add(r, 0x100a, "f390", -1, 0, NULL);
	CHECK_EQ(argus_step_rec__find_flag(r, &f), -ENOENT);
	argus_step_rec__free(r);

	/* a loop that only tests its own variable: no flag */
	r = argus_step_rec__new(1, 1, &start);
	for (int t = 0; t < 3; t++) {
		add(r, 0x100c, "c745fc01000000", -1, 0, &(struct memop){ SLOT, 0, 1, ARGUS_STEP_MEM_WRITE });
		add(r, 0x1013, "837dfc00", ARGUS_REG_EFLAGS, 0x202, &(struct memop){ SLOT, 1, 0, ARGUS_STEP_MEM_READ });
		add(r, 0x1017, "75f3", -1, 0, NULL);
	}
	CHECK_EQ(argus_step_rec__find_flag(r, &f), -ENODATA);
	argus_step_rec__free(r);
}

/* Normal: the flag comes on the third turn; hang: never. */
static void test_diff_finds_the_exit_branch(void)
{
	struct argus_step_rec *a = spin(2, true), *b = spin(5, false);
	struct argus_step_diff d;
	struct argus_step_flag f;

	CHECK_EQ(argus_step_rec__diff(a, b, &d), 0);
	CHECK(d.aligned && d.diverged);
	CHECK_EQ(argus_step_rec__insn(a, d.a_at)->addr, 0x1008);
	CHECK_EQ(argus_step_rec__insn(b, d.b_at)->addr, 0x1008);
	CHECK_EQ(d.a_next, 0x1020);
	CHECK_EQ(d.b_next, 0x100a);
	CHECK(d.na >= 1 && d.a_in[0].is_mem && d.a_in[0].addr == FLAG && d.a_in[0].value == 1);
	CHECK(d.nb >= 1 && d.b_in[0].is_mem && d.b_in[0].addr == FLAG && d.b_in[0].value == 0);
	CHECK(d.have_loop && d.loop.head == 0x1000);
	CHECK_EQ(argus_step_diff__flag(b, &d, &f), 0);
	CHECK_EQ(f.addr, FLAG);
	/* a recording against itself: no divergence */
	CHECK_EQ(argus_step_rec__diff(b, b, &d), 0);
	CHECK(d.aligned && !d.diverged);
	argus_step_rec__free(a);
	argus_step_rec__free(b);
}

static void test_until_grammar(void)
{
	static const char *good[] = { "rip == 0x401136", "rax != 0", "mem32(0x404028) != 0",
				      "mem8( 4096 )>=1", "left wait_for_display_flag", "eflags <= 5" };
	static const char *bad[] = { "", "rip", "rip ==", "rip == x", "mem12(0) == 1", "mem32(0 == 1",
				     "foo == 1", "left", "left a b", "rip == 1 2", "rip == -1" };
	char err[200];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct argus_step_cond *c = argus_step_cond__parse(good[i], err, sizeof(err));

		CHECK(c != NULL);
		if (!c)
			fprintf(stderr, "'%s': %s\n", good[i], err);
		argus_step_cond__free(c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK(argus_step_cond__parse(bad[i], err, sizeof(err)) == NULL);
		CHECK(err[0] != 0);
	}
}

/* --- the callback backend, over this test's own ptrace of a child ------ */

static volatile unsigned long child_sink;

__attribute__((noinline)) static void child_spin(void)
{
	for (;;)
		child_sink++;
}

static int cb_regs(void *ctx, struct argus_step_regs *out)
{
	return ptrace(PTRACE_GETREGS, *(pid_t *)ctx, NULL, out) ? -errno : 0;
}

static long cb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(*(pid_t *)ctx, &l, 1, &r, 1, 0);

	return n < 0 ? -errno : n;
}

static int steps;

static int cb_step(void *ctx, struct argus_step_stop *stop)
{
	int st;

	steps++;
	stop->sig = 0;
	if (ptrace(PTRACE_SINGLESTEP, *(pid_t *)ctx, NULL, NULL) || waitpid(*(pid_t *)ctx, &st, __WALL) < 0)
		return -errno;
	return 0;
}

/* fork() for seize_child: the child writes a byte to ready[1] once it is
 * past fork and about to enter its loop */
static int ready[2] = { -1, -1 };

static pid_t fork_ready(void)
{
	if (ready[0] < 0 && pipe(ready))
		return -1;
	return fork();
}

static void child_ready(void)
{
	if (write(ready[1], "r", 1) != 1)
		_exit(1);
}

/* The child pid, in its loop, then settle_us later seized and stopped by
 * this test (the callback backends step it with ptrace); false, after a
 * failed check and the child killed, when that cannot be done.  Its
 * readiness byte first: a fixed sleep alone, on a loaded machine, could
 * stop the child still inside fork()'s return, and the steps meant for
 * its loop would be libc's. */
static bool seize_child(pid_t pid, unsigned settle_us)
{
	char c;
	int st;

	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		CHECK(!"the child is ready");
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return false;
	}
	usleep(settle_us);
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) ||
	    waitpid(pid, &st, __WALL) != pid) {
		CHECK(!"ptrace the child");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return false;
	}
	return true;
}

static void test_callback_backend_steps_a_child(void)
{
	pid_t pid = fork_ready();
	struct argus_step_backend b = { .sz = sizeof(b), .ctx = &pid, .get_regs = cb_regs,
					.read_mem = cb_read, .step = cb_step };
	struct argus_stepper *s;
	struct argus_step_rec *rec;
	bool named = false;

	if (pid == 0) {
		child_ready();
		child_spin();
	}
	if (!seize_child(pid, 20000))
		return;
	s = argus_step__open_backend(&b, (uint32_t)pid, NULL);
	CHECK(s != NULL);
	rec = argus_step__new_rec(s);
	for (int i = 0; i < 50; i++)
		CHECK_EQ(argus_step__next(s, rec, NULL), 0);
	CHECK_EQ(steps, 50);
	CHECK_EQ(argus_step_rec__count(rec), 50);
	for (size_t i = 0; i < argus_step_rec__count(rec); i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(rec, i);
		const char *name = argus_step_rec__string(rec, in->sym);

		named |= name && !strcmp(name, "child_spin");
		CHECK(in->len > 0);
		if (in->nmem && (in->mem[0].access & ARGUS_STEP_MEM_WRITE))
			CHECK_EQ(in->mem[0].addr, (uint64_t)(uintptr_t)&child_sink);
	}
	CHECK(named);
	argus_step__close(s);
	argus_step_rec__free(rec);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(argus_step__open_backend(&(struct argus_step_backend){ .sz = 1 }, 0, NULL) == NULL);
	CHECK_EQ(errno, EINVAL);
}

/* --- the engine's known results (argus_step_stop.known_reg) ------------
 * A backend with costly register reads (lldb) takes the value the engine
 * says a data move (mov, movzx, movsx, lea, pop) leaves in its register
 * instead of reading it.  Here a child runs varied libc code (snprintf,
 * qsort, strcmp, strlen) and, after every step, the register ptrace reads
 * must equal the value the engine announced before it. */
static long known_checked, known_wrong;
static int known_reg = -1;
static uint64_t known_val;

static int kn_step(void *ctx, struct argus_step_stop *stop)
{
	known_reg = stop->known_reg;
	known_val = stop->known_val;
	return cb_step(ctx, stop);
}

static int kn_regs(void *ctx, struct argus_step_regs *out)
{
	int rc = cb_regs(ctx, out);

	if (!rc && known_reg >= 0) {
		known_checked++;
		if (out->r[known_reg] != known_val) {
			if (known_wrong++ < 5)
				printf("  known %s = 0x%llx, ptrace reads 0x%llx (rip now 0x%llx)\n",
				       argus_step_reg__name(known_reg), (unsigned long long)known_val,
				       (unsigned long long)out->r[known_reg],
				       (unsigned long long)out->r[ARGUS_REG_RIP]);
		}
	}
	known_reg = -1;
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static volatile short neg16[4] = { -3, -300, 5, -1 };
static volatile signed char neg8[4] = { -7, 100, -128, 1 };
static volatile int neg32[4] = { -70000, 3, -1, 9 };

__attribute__((noinline)) static void child_varied(void)
{
	static char buf[48][24];
	char *p[48];
	unsigned long n = 0;

	for (;;) {
		for (int i = 0; i < 48; i++) {
			snprintf(buf[i], sizeof(buf[i]), "%lx-%d", (n * 2654435761u) ^ (unsigned)i, i);
			p[i] = buf[i];
			n++;
		}
		qsort(p, 48, sizeof(p[0]), cmp_str);
		child_sink += (unsigned long)(short)strlen(p[3]) + (unsigned long)(signed char)p[5][1];
		/* loads that sign-extend negative values (movsx, movsxd) */
		child_sink += (unsigned long)(long)neg16[n & 3] + (unsigned long)(long)neg8[n & 3] +
			      (unsigned long)(long)neg32[n & 3];
	}
}

static void test_known_results_match_the_registers(void)
{
	pid_t pid = fork_ready();
	struct argus_step_backend b = { .sz = sizeof(b), .ctx = &pid, .get_regs = kn_regs,
					.read_mem = cb_read, .step = kn_step };
	struct argus_stepper *s;

	if (pid == 0) {
		child_ready();
		child_varied();
	}
	if (!seize_child(pid, 30000))
		return;
	s = argus_step__open_backend(&b, (uint32_t)pid, NULL);
	CHECK(s != NULL);
	for (int i = 0; s && i < 30000; i++)
		if (argus_step__next(s, NULL, NULL))
			break;
	printf("  %ld known results checked, %ld wrong\n", known_checked, known_wrong);
	CHECK(known_checked > 3000);    /* the rule covers a real share of code */
	CHECK_EQ(known_wrong, 0);
	argus_step__close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	RUN(test_decode_names_the_instruction);
	RUN(test_save_load_round_trip);
	RUN(test_reader_refuses_every_damage);
	RUN(test_loop_of_a_spin);
	RUN(test_flag_is_memory_not_written_by_the_thread);
	RUN(test_flag_through_a_stack_slot);
	RUN(test_flag_is_not_a_changing_clock);
	RUN(test_loop_entered_after_the_attach);
	RUN(test_flag_is_not_a_limit_set_before_the_loop);
	RUN(test_no_loop_no_flag);
	RUN(test_diff_finds_the_exit_branch);
	RUN(test_until_grammar);
	RUN(test_callback_backend_steps_a_child);
	RUN(test_known_results_match_the_registers);
	return check_report();
}
