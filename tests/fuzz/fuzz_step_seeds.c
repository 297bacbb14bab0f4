/* fuzz_step_seeds.c - writes small valid step recordings into DIR, made by
 * the real writer: a spin loop (load, test, jcc back), with registers,
 * memory operands and a symbol, so mutations start from real records.
 * usage: fuzz_step_seeds SEED_DIR CORPUS_DIR */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "argus_step.h"

static int add(struct argus_step_rec *r, uint64_t addr, const char *hex, int32_t sym,
	       uint64_t off, int reg, uint64_t val, uint64_t maddr, uint8_t access)
{
	struct argus_step_insn in;

	memset(&in, 0, sizeof(in));
	in.addr = addr;
	in.sym = sym;
	in.sym_off = off;
	for (size_t i = 0; hex[2 * i]; i++)
		sscanf(hex + 2 * i, "%2hhx", &in.bytes[in.len++]);
	if (reg >= 0) {
		in.reg[0] = (uint8_t)reg;
		in.val[0] = val;
		in.nregs = 1;
	}
	if (access) {
		in.mem[0].addr = maddr;
		in.mem[0].size = 4;
		in.mem[0].access = access;
		in.mem[0].valid = ARGUS_STEP_MEM_HAVE_BEFORE;
		in.nmem = 1;
	}
	argus_step_decode(in.bytes, in.len, in.addr, &in);
	return argus_step_rec__append(r, &in);
}

int main(int argc, char **argv)
{
	struct argus_step_regs start = { .r = { [ARGUS_REG_RIP] = 0x401000, [ARGUS_REG_RSP] = 0x7ffc0000 } };
	struct argus_step_err err;
	char path[4096];
	int rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: fuzz_step_seeds SEED_DIR CORPUS_DIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	mkdir(argv[2], 0755);
	for (int variant = 0; variant < 2; variant++) {
		struct argus_step_rec *r = argus_step_rec__new(100, 101, &start);
		int32_t sym = argus_step_rec__intern(r, "wait_flag");

		for (int it = 0; it < (variant ? 4 : 1); it++) {
			/* mov eax, [rip+0x2ee6]; test eax, eax; je -0xa */
			rc |= add(r, 0x401000, "8b05e62e0000", sym, 0, ARGUS_REG_RAX, 0, 0x403eec,
				  ARGUS_STEP_MEM_READ);
			rc |= add(r, 0x401006, "85c0", sym, 6, ARGUS_REG_EFLAGS, 0x246, 0, 0);
			rc |= add(r, 0x401008, "74f6", sym, 8, -1, 0, 0, 0);
		}
		snprintf(path, sizeof(path), "%s/spin%d.stp", argv[1], variant);
		if (argus_step_rec__save(r, path, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		}
		argus_step_rec__free(r);
	}
	return rc ? 1 : 0;
}
