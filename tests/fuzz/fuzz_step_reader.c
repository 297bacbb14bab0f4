/* fuzz_step_reader.c - libFuzzer target: any bytes as a step recording
 * (docs/step-format.md).  The reader must reject bad input with an error
 * (never crash, never read out of bounds), and what it accepts must be
 * usable: every instruction, its symbol string, and the register replay.
 * Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, so the checksums
 * do not stop mutations at the door. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "argus_step.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argus_step_err err;
	struct argus_step_rec *r = argus_step_rec__parse(data, size, &err);
	struct argus_step_regs regs;
	struct argus_step_loop loop;
	struct argus_step_flag flag;
	volatile size_t sink = 0;

	if (!r) {
		/* one line, terminated */
		if (!memchr(err.msg, 0, sizeof(err.msg)) || strchr(err.msg, '\n'))
			__builtin_trap();
		return 0;
	}
	for (size_t i = 0; i < argus_step_rec__count(r); i++) {
		const struct argus_step_insn *in = argus_step_rec__insn(r, i);
		const char *s = argus_step_rec__string(r, in->sym);

		sink += s ? strlen(s) : 0;
		sink += strlen(in->text);
	}
	argus_step_rec__regs_at(r, argus_step_rec__count(r), &regs);
	argus_step_rec__regs_at(r, argus_step_rec__count(r) / 2, &regs);
	argus_step_rec__loop(r, &loop);
	argus_step_rec__find_flag(r, &flag);
	(void)sink;
	argus_step_rec__free(r);
	return 0;
}
