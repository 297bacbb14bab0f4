/* test_live_patch.c - the relocator and trampoline writer of
 * interposer/live/live_patch.c on byte buffers and in this very process:
 * each asm function below is planned, its trampoline built for a page
 * mapped near it, and the trampoline *run* (called as the function it
 * replaces): it must give the original's result, count the call, and
 * call the hook with the first argument.  No ptrace, no other process.
 * Refusals (too short, a jump into the patched bytes, a short-only
 * branch, out of rel32 reach) are checked on the same functions.
 * Return hooks (--at-return) run the interposer's own live_ret.c, linked
 * in: the hook at the return gets the entry's item, the return values
 * (rax, rdx, xmm0) survive, and a call left by longjmp stays on the
 * shadow stack (counted in flight) without disturbing an outer hooked
 * call's return. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "argus_live.h"
#include "check.h"

/* Each function's shape is what its test needs; .size gives the scan its
 * body. */
__asm__(".text\n"
	/* mov rax,[rip+t_data] (7 bytes, RIP-relative); add rax,rdi; ret */
	".globl t_riprel\n.type t_riprel,@function\nt_riprel:\n"
	"\tmov t_data(%rip),%rax\n\tadd %rdi,%rax\n\tret\n.size t_riprel,.-t_riprel\n"
	/* test rdi,rdi; je +: a jcc among the displaced bytes */
	".globl t_jcc\n.type t_jcc,@function\nt_jcc:\n"
	"\ttest %rdi,%rdi\n\tje 1f\n\tmov $1,%eax\n\tret\n1:\tmov $2,%eax\n\tret\n.size t_jcc,.-t_jcc\n"
	/* call t_helper (rel32, displaced); add rax,1; ret */
	".globl t_call\n.type t_call,@function\nt_call:\n"
	"\tcall t_helper\n\tadd $1,%rax\n\tret\n.size t_call,.-t_call\n"
	".globl t_helper\n.type t_helper,@function\nt_helper:\n"
	"\tmov $41,%eax\n\tret\n.size t_helper,.-t_helper\n"
	/* like libz's crc32: mov edx,edx; jmp elsewhere (a displaced jmp) */
	".globl t_tail\n.type t_tail,@function\nt_tail:\n"
	"\tmov %edx,%edx\n\t{disp32} jmp t_helper\n.size t_tail,.-t_tail\n"
	/* nop; addsd xmm0,xmm1; ret: the hook must not clobber xmm args */
	".globl t_fp\n.type t_fp,@function\nt_fp:\n"
	"\tnop\n\taddsd %xmm1,%xmm0\n\tret\n.size t_fp,.-t_fp\n"
	/* refusals */
	".globl t_short\n.type t_short,@function\nt_short:\n"
	"\txor %eax,%eax\n\tret\n.size t_short,.-t_short\n"
	".globl t_back\n.type t_back,@function\nt_back:\n"
	"\txor %eax,%eax\n1:\tinc %eax\n\tcmp %edi,%eax\n\tjl 1b\n\tret\n.size t_back,.-t_back\n"
	".globl t_loop\n.type t_loop,@function\nt_loop:\n"
	"\tloop 1f\n\tnop\n\tnop\n\tnop\n1:\tret\n.size t_loop,.-t_loop\n"
	/* mov rdi->rax, rsi->rdx; ret: a two-register return (rax:rdx) */
	".globl t_pair\n.type t_pair,@function\nt_pair:\n"
	"\tmov %rdi,%rax\n\tmov %rsi,%rdx\n\tret\n.size t_pair,.-t_pair\n"
	/* t_callback(item, cb): cb(item), its 5 displaced bytes first */
	".globl t_callback\n.type t_callback,@function\nt_callback:\n"
	"\tmov %rsi,%rax\n\tnop\n\tnop\n\tsub $8,%rsp\n\tcall *%rax\n\tadd $8,%rsp\n\tret\n"
	".size t_callback,.-t_callback\n"
	".data\n.globl t_data\nt_data:\n.quad 1000\n.text\n");

long t_riprel(long), t_jcc(long), t_call(void), t_tail(long, long, long), t_helper(void);
long t_callback(long, void (*)(long));
struct pair { long a, b; };
struct pair t_pair(long, long);
void argus_live_ret_enter(uint64_t, uint64_t *, uint64_t, uint64_t, uint64_t);
uint64_t argus_live_ret_leave(uint64_t);
double t_fp(double, double);
extern char t_short[], t_back[], t_loop[];

/* the size of an asm function: its .size, read back through the next
 * label is not possible from C; the tests give each one's bytes */
enum { SZ_RIPREL = 11, SZ_JCC = 17, SZ_CALL = 10, SZ_TAIL = 7, SZ_FP = 6, SZ_PAIR = 7,
       SZ_CALLBACK = 16 };

static const void *hook_item;
static int hook_calls;

static void hook(const void *item)
{
	volatile double clobber = 3.25;

	hook_item = item;
	hook_calls++;
	/* uses xmm registers, as a real hook (clock_gettime, memset) may */
	clobber = clobber * clobber + (double)hook_calls;
	(void)clobber;
}

/* A trampoline for fn, mapped within reach and made runnable; its code
 * address in *code.  0, or -errno from the writer. */
static void ret_hook(const void *item);

static int build_ret(void *fn, uint64_t size, uint64_t hookaddr, bool at_return, void **code,
		     uint8_t **page_out, char *why);

static int build(void *fn, uint64_t size, uint64_t hookaddr, void **code, uint8_t **page_out,
		 char *why)
{
	return build_ret(fn, size, hookaddr, false, code, page_out, why);
}

static int build_ret(void *fn, uint64_t size, uint64_t hookaddr, bool at_return, void **code,
		     uint8_t **page_out, char *why)
{
	struct argus_live_ret r = { (uint64_t)(uintptr_t)argus_live_ret_enter,
				    (uint64_t)(uintptr_t)argus_live_ret_leave,
				    (uint64_t)(uintptr_t)ret_hook, ARGUS_LIVE_END };
	struct argus_live_plan p;
	static uint8_t buf[ARGUS_LIVE_TRAMP_BYTES];
	uint8_t *page = MAP_FAILED;
	int err = argus_live__plan(fn, size, (uint64_t)(uintptr_t)fn, size, &p, why);

	if (err)
		return err;
	/* a free page pair within +-2 GiB: try hints around the function */
	for (int64_t d = 1 << 24; d < (1ll << 30) && page == MAP_FAILED; d += 1 << 24)
		for (int s = 1; s >= -1 && page == MAP_FAILED; s -= 2) {
			uintptr_t hint = (((uintptr_t)fn + (uintptr_t)(s * d))) & ~4095ul;

			page = mmap((void *)hint, sizeof(buf), PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		}
	if (page == MAP_FAILED)
		return -ENOMEM;
	err = argus_live__tramp_ret(&p, (uint64_t)(uintptr_t)page, hookaddr,
				    hookaddr ? ARGUS_LIVE_BEGIN : ARGUS_LIVE_COUNT,
				    at_return ? &r : NULL, "t", buf, sizeof(buf), why);
	if (err) {
		munmap(page, sizeof(buf));
		return err;
	}
	memcpy(page, buf, sizeof(buf));
	mprotect(page + ARGUS_LIVE_CODE_OFF, 4096, PROT_READ | PROT_EXEC);
	*code = page + ARGUS_LIVE_CODE_OFF;
	*page_out = page;
	return 0;
}

static uint64_t hits(const uint8_t *page)
{
	return ((const struct argus_live_tramp_hdr *)page)->hits;
}

static void drop(uint8_t *page)
{
	munmap(page, ARGUS_LIVE_TRAMP_BYTES);
}

static void riprel_operand_is_fixed_up(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;

	CHECK_EQ(build(t_riprel, SZ_RIPREL, 0, &code, &page, why), 0);
	if (!page || why[0])
		return;
	CHECK_EQ(((long (*)(long))code)(5), 1005);
	CHECK_EQ(((long (*)(long))code)(-1000), 0);
	CHECK_EQ(hits(page), 2);
	drop(page);
}

static void jcc_is_inverted_over_an_absolute_jump(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;

	CHECK_EQ(build(t_jcc, SZ_JCC, 0, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK_EQ(((long (*)(long))code)(0), 2);	/* taken */
	CHECK_EQ(((long (*)(long))code)(7), 1);	/* not taken */
	CHECK_EQ(hits(page), 2);
	drop(page);
}

static void displaced_call_returns_into_the_trampoline(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;

	CHECK_EQ(build(t_call, SZ_CALL, 0, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK_EQ(((long (*)(void))code)(), 42);
	drop(page);
}

static void displaced_tail_jump_reaches_its_target(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;

	CHECK_EQ(build(t_tail, SZ_TAIL, 0, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK_EQ(((long (*)(long, long, long))code)(1, 2, 3), 41);
	CHECK_EQ(hits(page), 1);
	drop(page);
}

static void hook_gets_the_first_argument_and_keeps_xmm_args(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;
	long v = 7;

	hook_calls = 0;
	CHECK_EQ(build(t_riprel, SZ_RIPREL, (uint64_t)(uintptr_t)hook, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK_EQ(((long (*)(const long *))code)(&v), 1000 + (long)(uintptr_t)&v);
	CHECK(hook_item == &v);
	CHECK_EQ(hook_calls, 1);
	drop(page);

	CHECK_EQ(build(t_fp, SZ_FP, (uint64_t)(uintptr_t)hook, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK(((double (*)(double, double))code)(1.5, 2.25) == 3.75);
	CHECK_EQ(hook_calls, 2);
	drop(page);
}

static void entry_is_a_jmp_to_the_code_page_padded_with_int3(void)
{
	struct argus_live_plan p;
	uint8_t e[32];
	char why[ARGUS_LIVE_WHY] = "";
	uint64_t f = 0x400000, page = 0x500000;
	int32_t rel;

	CHECK_EQ(argus_live__plan((const uint8_t *)t_riprel, SZ_RIPREL, f, SZ_RIPREL, &p, why), 0);
	CHECK_EQ(p.len, 7);
	CHECK_EQ(argus_live__entry(&p, page, e, why), 0);
	CHECK_EQ(e[0], 0xe9);
	memcpy(&rel, e + 1, 4);
	CHECK_EQ(f + 5 + rel, page + ARGUS_LIVE_CODE_OFF);
	CHECK_EQ(e[5], 0xcc);
	CHECK_EQ(e[6], 0xcc);
	CHECK(!memcmp(p.orig, (const void *)t_riprel, 7));
}

/* call *%rax at +0 returns to +2, inside the 6 bytes displaced: the
 * patcher must then check the threads' stacks for that return address */
static void a_call_returning_inside_the_patch_is_flagged(void)
{
	static const uint8_t icall[] = { 0xff, 0xd0, 0x48, 0x83, 0xc0, 0x01, 0xc3 };
	struct argus_live_plan p;
	char why[ARGUS_LIVE_WHY] = "";

	CHECK_EQ(argus_live__plan(icall, sizeof(icall), 0x1000, sizeof(icall), &p, why), 0);
	CHECK_EQ(p.len, 6);
	CHECK(p.call_inside);
	CHECK_EQ(argus_live__plan((const uint8_t *)t_call, SZ_CALL, 0x1000, SZ_CALL, &p, why), 0);
	CHECK(!p.call_inside);
}

static void refuses_what_it_cannot_patch(void)
{
	struct argus_live_plan p;
	static uint8_t buf[ARGUS_LIVE_TRAMP_BYTES];
	char why[ARGUS_LIVE_WHY] = "";

	CHECK_EQ(argus_live__plan((const uint8_t *)t_short, 3, 0x1000, 3, &p, why), -EINVAL);
	CHECK(strstr(why, "too short"));
	CHECK_EQ(argus_live__plan((const uint8_t *)t_back, 9, 0x1000, 9, &p, why), -EINVAL);
	CHECK(strstr(why, "lands at +0x2, inside the 6 bytes"));
	CHECK_EQ(argus_live__plan((const uint8_t *)t_loop, 6, 0x1000, 6, &p, why), -EINVAL);
	CHECK(strstr(why, "short-only branch"));
	/* a symbol of 4 bytes cannot give 5 even when its bytes decode on */
	CHECK_EQ(argus_live__plan((const uint8_t *)t_riprel, SZ_RIPREL, 0x1000, 4, &p, why), -EINVAL);
	CHECK(strstr(why, "too short"));
	/* RIP-relative target 3 GiB from the page: out of disp32 reach */
	CHECK_EQ(argus_live__plan((const uint8_t *)t_riprel, SZ_RIPREL, 0x10000000, SZ_RIPREL, &p,
				  why), 0);
	CHECK_EQ(argus_live__tramp(&p, 0x10000000 + (3ull << 30), 0, ARGUS_LIVE_COUNT, "t", buf,
				   sizeof(buf), why), -ERANGE);
	CHECK_EQ(argus_live__entry(&p, 0x10000000 + (3ull << 30), buf, why), -ERANGE);
}

/* ---- return hooks ---- */

static const void *ret_items[8];
static int ret_calls;

static void ret_hook(const void *item)
{
	volatile double clobber = 1.5;

	if (ret_calls < 8)
		ret_items[ret_calls] = item;
	ret_calls++;
	clobber = clobber * clobber;    /* xmm0 is the caller's return value */
	(void)clobber;
}

static uint64_t inflight(const uint8_t *page)
{
	return ((const struct argus_live_tramp_hdr *)page)->inflight;
}

static void return_hook_gets_the_entry_item_and_keeps_return_values(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *code;
	uint8_t *page;
	long v = 7;

	hook_calls = ret_calls = 0;
	CHECK_EQ(build_ret(t_riprel, SZ_RIPREL, (uint64_t)(uintptr_t)hook, true, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK_EQ(((long (*)(const long *))code)(&v), 1000 + (long)(uintptr_t)&v);
	CHECK_EQ(hook_calls, 1);
	CHECK(hook_item == &v);
	CHECK_EQ(ret_calls, 1);
	CHECK(ret_items[0] == &v);
	CHECK_EQ(inflight(page), 0);
	CHECK_EQ(((const struct argus_live_tramp_hdr *)page)->ret_kind, ARGUS_LIVE_END);
	drop(page);

	/* xmm0 (a double) and rax:rdx (a two-word struct) come back intact */
	CHECK_EQ(build_ret(t_fp, SZ_FP, (uint64_t)(uintptr_t)hook, true, &code, &page, why), 0);
	if (why[0])
		return;
	CHECK(((double (*)(double, double))code)(1.5, 2.25) == 3.75);
	CHECK_EQ(ret_calls, 2);
	drop(page);
	CHECK_EQ(build_ret(t_pair, SZ_PAIR, 0, true, &code, &page, why), 0);
	if (why[0])
		return;
	struct pair r = ((struct pair (*)(long, long))code)(0x1234, -77);
	CHECK_EQ(r.a, 0x1234);
	CHECK_EQ(r.b, -77);
	CHECK_EQ(ret_calls, 3);
	CHECK(ret_items[2] == (const void *)0x1234);
	CHECK_EQ(inflight(page), 0);
	drop(page);
}

static jmp_buf esc_env;
static void *esc_code;
static uint8_t *esc_page;

static void escape(long item)
{
	(void)item;
	longjmp(esc_env, 1);
}

/* called by the outer hooked call: a hooked call that never returns */
static void middle(long item)
{
	(void)item;
	if (!setjmp(esc_env))
		((long (*)(long, void (*)(long)))esc_code)(0xb0b, escape);
	/* left by longjmp: not ended yet, still counted in flight */
	CHECK_EQ(ret_calls, 0);
	CHECK_EQ(inflight(esc_page), 1);
}

static void noop(long item)
{
	(void)item;
}

static void a_call_left_by_longjmp_stays_and_an_outer_one_still_returns(void)
{
	char why[ARGUS_LIVE_WHY] = "";
	void *outer;
	uint8_t *outer_page;

	ret_calls = 0;
	CHECK_EQ(build_ret(t_callback, SZ_CALLBACK, 0, true, &outer, &outer_page, why), 0);
	CHECK_EQ(build_ret(t_callback, SZ_CALLBACK, 0, true, &esc_code, &esc_page, why), 0);
	if (why[0])
		return;
	((long (*)(long, void (*)(long)))outer)(0xa0a, middle);
	/* the outer call came back to us, through the frame above the left
	 * one; the left one is not ended (it may be a live call on another
	 * stack, as with swapcontext: dropping it would lose its return) */
	CHECK_EQ(ret_calls, 1);
	CHECK(ret_items[0] == (const void *)0xa0a);
	CHECK_EQ(inflight(outer_page), 0);
	CHECK_EQ(inflight(esc_page), 1);
	/* and hooked calls go on working above it */
	((long (*)(long, void (*)(long)))outer)(0xc0c, noop);
	CHECK_EQ(ret_calls, 2);
	CHECK(ret_items[1] == (const void *)0xc0c);
	CHECK_EQ(inflight(outer_page), 0);
	drop(outer_page);
	drop(esc_page);         /* nothing will return through it */
}

int main(void)
{
	RUN(riprel_operand_is_fixed_up);
	RUN(jcc_is_inverted_over_an_absolute_jump);
	RUN(displaced_call_returns_into_the_trampoline);
	RUN(displaced_tail_jump_reaches_its_target);
	RUN(hook_gets_the_first_argument_and_keeps_xmm_args);
	RUN(entry_is_a_jmp_to_the_code_page_padded_with_int3);
	RUN(a_call_returning_inside_the_patch_is_flagged);
	RUN(refuses_what_it_cannot_patch);
	RUN(return_hook_gets_the_entry_item_and_keeps_return_values);
	RUN(a_call_left_by_longjmp_stays_and_an_outer_one_still_returns);
	return check_report();
}
