/* test_step_host.c - what the step engine gives and takes from a host's
 * backend (the lldb plugin's, lldb-plugin/step_backend.cpp), on a
 * scripted backend: no process, the "thread" is a list of register states
 * over 16 bytes of code.
 *
 *   0x1000  b8 01 00 00 00   mov eax, 1
 *   0x1005  e8 f6 0f 00 00   call 0x2000     (run to its return: over)
 *   0x100a  eb f4            jmp 0x1000      (scripted as over too: a jump
 *                                             into a function run to its
 *                                             return)
 *
 * Checked: the registers the engine says each instruction writes
 * (argus_step_stop.writes, which the lldb backend re-reads alone); an
 * `over` step is recorded with ARGUS_STEP_F_OVER, its call is no call and
 * its jump a return for call depth, also after a save and load; the
 * recording's tid comes from opts.tid, and an opts struct from before that
 * field leaves it the pid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_step.h"
#include "check.h"

static const uint8_t code[16] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0xe8, 0xf6, 0x0f,
				  0x00, 0x00, 0xeb, 0xf4 };

struct script {
	struct argus_step_regs regs;
	int at;                       /* steps taken */
	uint32_t writes[8];           /* argus_step_stop.writes of each step */
	bool syscall[8];
};

static int sc_regs(void *ctx, struct argus_step_regs *out)
{
	*out = ((struct script *)ctx)->regs;
	return 0;
}

static long sc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < 0x1000 || addr >= 0x1000 + sizeof(code))
		return -EFAULT;
	if (len > 0x1000 + sizeof(code) - addr)
		len = 0x1000 + sizeof(code) - addr;
	memcpy(buf, code + (addr - 0x1000), len);
	return (long)len;
}

static int sc_step(void *ctx, struct argus_step_stop *stop)
{
	struct script *s = ctx;
	uint64_t *r = s->regs.r;

	if (s->at < 8) {
		s->writes[s->at] = stop->writes;
		s->syscall[s->at] = stop->syscall;
	}
	switch (r[ARGUS_REG_RIP]) {
	case 0x1000:
		r[ARGUS_REG_RAX] = 1;
		r[ARGUS_REG_RIP] = 0x1005;
		break;
	case 0x1005:              /* the callee returned 7 */
		r[ARGUS_REG_RAX] = 7;
		r[ARGUS_REG_RIP] = 0x100a;
		stop->over = true;
		break;
	default:
		r[ARGUS_REG_RIP] = 0x1000;
		stop->over = true;
		break;
	}
	s->at++;
	return 0;
}

static struct argus_stepper *open_script(struct script *s, const struct argus_step_opts *o)
{
	struct argus_step_backend b = { .sz = sizeof(b), .ctx = s, .get_regs = sc_regs,
					.read_mem = sc_read, .step = sc_step };

	memset(s, 0, sizeof(*s));
	s->regs.r[ARGUS_REG_RIP] = 0x1000;
	s->regs.r[ARGUS_REG_RSP] = 0x7000;
	s->regs.r[ARGUS_REG_ORIG_RAX] = (uint64_t)-1;
	return argus_step__open_backend(&b, 0, o);
}

static void test_writes_say_which_registers_to_read(void)
{
	struct argus_step_opts o = { .sz = sizeof(o), .no_symbols = true };
	struct script s;
	struct argus_stepper *st = open_script(&s, &o);

	CHECK(st != NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(argus_step__next(st, NULL, NULL), 0);
	/* known sets have the rip bit; mov eax writes rax only */
	CHECK_EQ(s.writes[0], (1u << ARGUS_REG_RIP) | (1u << ARGUS_REG_RAX));
	/* a call writes rsp (the push) */
	CHECK(s.writes[1] & (1u << ARGUS_REG_RIP));
	CHECK(s.writes[1] & (1u << ARGUS_REG_RSP));
	CHECK(!(s.writes[1] & (1u << ARGUS_REG_RAX)));
	/* a jmp writes no register but rip: known, and empty */
	CHECK_EQ(s.writes[2], 1u << ARGUS_REG_RIP);
	CHECK(!s.syscall[0] && !s.syscall[1] && !s.syscall[2]);
	argus_step__close(st);
}

static void check_over(const struct argus_step_rec *r)
{
	const struct argus_step_insn *mov = argus_step_rec__insn(r, 0);
	const struct argus_step_insn *call = argus_step_rec__insn(r, 1);
	const struct argus_step_insn *jmp = argus_step_rec__insn(r, 2);

	CHECK(!(mov->flags & ARGUS_STEP_F_OVER));
	CHECK(call->flags & ARGUS_STEP_F_OVER);
	CHECK(!(call->kind & ARGUS_STEP_K_CALL));     /* call + its return: no depth */
	CHECK(!(call->kind & ARGUS_STEP_K_RET));
	CHECK(jmp->flags & ARGUS_STEP_F_OVER);
	CHECK(jmp->kind & ARGUS_STEP_K_RET);          /* jumped in, came back out */
	CHECK(!(jmp->kind & ARGUS_STEP_K_JMP));
	CHECK(!strncmp(call->text, "call", 4));
	/* the callee's result is the call's change */
	CHECK_EQ(call->nregs, 1);
	CHECK_EQ(call->reg[0], ARGUS_REG_RAX);
	CHECK_EQ(call->val[0], 7);
}

static void test_over_is_recorded_and_read_back(void)
{
	struct argus_step_opts o = { .sz = sizeof(o), .no_symbols = true, .tid = 4242 };
	struct argus_step_err err;
	struct script s;
	struct argus_stepper *st = open_script(&s, &o);
	struct argus_step_rec *rec, *back;
	char path[] = "/tmp/test_step_host.XXXXXX";
	int fd = mkstemp(path);

	CHECK(st != NULL && fd >= 0);
	close(fd);
	rec = argus_step__new_rec(st);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(argus_step__next(st, rec, NULL), 0);
	CHECK_EQ(argus_step_rec__count(rec), 3);
	CHECK_EQ(argus_step_rec__tid(rec), 4242);
	check_over(rec);
	CHECK_EQ(argus_step_rec__save(rec, path, &err), 0);
	back = argus_step_rec__load(path, &err);
	CHECK(back != NULL);
	if (back) {
		CHECK_EQ(argus_step_rec__count(back), 3);
		check_over(back);
	}
	unlink(path);
	argus_step_rec__free(back);
	argus_step_rec__free(rec);
	argus_step__close(st);
}

static void test_old_opts_leave_tid_the_pid(void)
{
	/* a caller built against the opts before .tid: its sz ends there */
	struct argus_step_opts o = { .sz = offsetof(struct argus_step_opts, tid), .no_symbols = true,
				     .tid = 4242 };
	struct argus_step_backend b = { .sz = sizeof(b), .get_regs = sc_regs, .read_mem = sc_read,
					.step = sc_step };
	struct script s;
	struct argus_stepper *st;
	struct argus_step_rec *rec;

	memset(&s, 0, sizeof(s));
	s.regs.r[ARGUS_REG_RIP] = 0x1000;
	b.ctx = &s;
	st = argus_step__open_backend(&b, 77, &o);
	CHECK(st != NULL);
	rec = argus_step__new_rec(st);
	CHECK_EQ(argus_step_rec__pid(rec), 77);
	CHECK_EQ(argus_step_rec__tid(rec), 77);
	argus_step_rec__free(rec);
	argus_step__close(st);
}

int main(void)
{
	RUN(test_writes_say_which_registers_to_read);
	RUN(test_over_is_recorded_and_read_back);
	RUN(test_old_opts_leave_tid_the_pid);
	return check_report();
}
