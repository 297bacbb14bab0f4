/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * busy_nofp.c - fixture for test_symbols: a call chain built WITHOUT frame
 * pointers (-O2 -g -fomit-frame-pointer), which captures itself the way
 * the BPF probe captures a task: rip/rsp/rbp plus a copy of the stack
 * from rsp up (at most AE_MAX_STACK_COPY bytes, never past the [stack]
 * mapping's end).
 *
 * main -> busy_outer -> busy_middle -> busy_leaf, each noinline/noipa so
 * the symbols keep their names and every call is a real call (not a tail
 * jump).  Output on stdout, native endian:
 *
 *   struct busy_rec (below) followed by rec.len bytes of stack copy
 *
 * then the process waits for EOF on stdin, so its /proc/PID/maps stays
 * readable until the test is done with it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COPY_MAX 4096   /* AE_MAX_STACK_COPY */

#if defined(__clang__)
#define FIXTURE_FN __attribute__((noinline, optnone))
#else
#define FIXTURE_FN __attribute__((noinline, noipa))
#endif

struct busy_rec {
	uint64_t ip, sp, bp, len;
	uint32_t line[4];   /* leaf capture, middle/outer/main call sites */
};

static struct busy_rec rec;
static unsigned char copy[COPY_MAX];
static uint64_t stack_end;
volatile int sink;

static uint64_t find_stack_end(void)
{
	char line[512];
	unsigned long long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			end = hi;
	fclose(f);
	return end;
}

FIXTURE_FN int busy_leaf(int x)
{
	uint64_t ip, sp, bp;

	/* rip of the next instruction, and rsp/rbp at that point. */
	__asm__ volatile("lea 0(%%rip), %0; mov %%rsp, %1; mov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp)); rec.line[0] = __LINE__;
	rec.ip = ip;
	rec.sp = sp;
	rec.bp = bp;
	rec.len = stack_end > sp && stack_end - sp < COPY_MAX ?
		  stack_end - sp : COPY_MAX;
	memcpy(copy, (const void *)(uintptr_t)sp, rec.len);
	return x + sink;
}

FIXTURE_FN int busy_middle(int x)
{
	int r;

	r = busy_leaf(x + 1); rec.line[1] = __LINE__;
	sink += r;
	return r * 3;
}

FIXTURE_FN int busy_outer(int x)
{
	int r;

	r = busy_middle(x * 2); rec.line[2] = __LINE__;
	sink += r;
	return r - 1;
}

int main(int argc, char **argv)
{
	char buf[64];
	int r;

	(void)argv;
	stack_end = find_stack_end();
	r = busy_outer(argc); rec.line[3] = __LINE__;
	sink += r;
	if (fwrite(&rec, sizeof(rec), 1, stdout) != 1 ||
	    fwrite(copy, 1, rec.len, stdout) != rec.len || fflush(stdout))
		return 1;
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
