/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_cond.c - the `--until` conditions of `argus step` (grammar in
 * argus_step.h and docs/step-format.md):
 *   REG OP VALUE | memN(ADDR) OP VALUE | left FUNC
 * evaluated after each step, on the registers before the next instruction.
 *
 * "left FUNC" keeps a call depth (+1 per call, -1 per ret of the stepped
 * instructions): it arms when the thread is in FUNC, remembering that
 * depth, and holds once the thread is outside FUNC at that depth or a
 * shallower one, so calls made from FUNC do not count as leaving it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_internal.h"

enum cond_kind { C_REG, C_MEM, C_LEFT };
enum cond_op { OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };

struct argus_step_cond {
	enum cond_kind kind;
	enum cond_op op;
	int reg;                 /* C_REG */
	uint64_t addr;           /* C_MEM */
	unsigned size;           /* C_MEM, bytes */
	uint64_t value;
	char func[128];          /* C_LEFT */
	long depth;              /* C_LEFT: calls - rets so far */
	bool armed;
	long armed_depth;
};

static const char *skip(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool parse_num(const char **pp, uint64_t *out)
{
	char *end;

	errno = 0;
	if (**pp == '-')
		return false;
	*out = strtoull(*pp, &end, 0);
	if (errno || end == *pp)
		return false;
	*pp = end;
	return true;
}

static struct argus_step_cond *bad(struct argus_step_cond *c, char *err, size_t errlen,
				   const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	free(c);
	errno = EINVAL;
	return NULL;
}

struct argus_step_cond *argus_step_cond__parse(const char *text, char *err, size_t errlen)
{
	struct argus_step_cond *c;
	const char *p;
	static const struct { const char *s; enum cond_op op; } ops[] = {
		{ "==", OP_EQ }, { "!=", OP_NE }, { "<=", OP_LE }, { ">=", OP_GE },
		{ "<", OP_LT }, { ">", OP_GT },
	};
	size_t i;

	if (!text)
		return bad(NULL, err, errlen, "no condition");
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	p = skip(text);
	if (!strncmp(p, "left", 4) && (p[4] == ' ' || p[4] == '\t')) {
		size_t n;

		p = skip(p + 4);
		n = strcspn(p, " \t");
		if (!n || n >= sizeof(c->func) || *skip(p + n))
			return bad(c, err, errlen, "'left FUNC' takes one function name");
		memcpy(c->func, p, n);
		c->kind = C_LEFT;
		return c;
	}
	if (!strncmp(p, "mem", 3)) {
		uint64_t bits;

		p += 3;
		if (!parse_num(&p, &bits) || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
			return bad(c, err, errlen, "memN(ADDR): N is 8, 16, 32 or 64");
		p = skip(p);
		if (*p++ != '(')
			return bad(c, err, errlen, "memN(ADDR): '(' expected after memN");
		p = skip(p);
		if (!parse_num(&p, &c->addr))
			return bad(c, err, errlen, "memN(ADDR): ADDR is a number (0x...)");
		p = skip(p);
		if (*p++ != ')')
			return bad(c, err, errlen, "memN(ADDR): ')' expected after ADDR");
		c->kind = C_MEM;
		c->size = (unsigned)bits / 8;
	} else {
		char name[16];
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz_0123456789");

		if (!n || n >= sizeof(name))
			return bad(c, err, errlen,
				   "expected REG OP VALUE, memN(ADDR) OP VALUE or left FUNC");
		memcpy(name, p, n);
		name[n] = 0;
		c->reg = argus_step_reg__by_name(name);
		if (c->reg < 0)
			return bad(c, err, errlen, "unknown register (rax..r15, rip, rsp, eflags, orig_rax, fs_base...)");
		c->kind = C_REG;
		p += n;
	}
	p = skip(p);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p, ops[i].s, strlen(ops[i].s)))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return bad(c, err, errlen, "expected an operator: == != < > <= >=");
	c->op = ops[i].op;
	p = skip(p + strlen(ops[i].s));
	if (!parse_num(&p, &c->value))
		return bad(c, err, errlen, "expected a number after the operator (unsigned, 0x...)");
	if (*skip(p))
		return bad(c, err, errlen, "unexpected text after the value");
	return c;
}

void argus_step_cond__free(struct argus_step_cond *c)
{
	free(c);
}

static bool compare(enum cond_op op, uint64_t a, uint64_t b)
{
	switch (op) {
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	case OP_LT: return a < b;
	case OP_GT: return a > b;
	case OP_LE: return a <= b;
	case OP_GE: return a >= b;
	}
	return false;
}

int argus_step_cond__eval(struct argus_step_cond *c, struct argus_stepper *s,
			  const struct argus_step_insn *last)
{
	struct argus_step_regs regs;
	uint64_t v = 0;
	const char *fn;
	int rc;

	if (!c || !s)
		return -EINVAL;
	argus_step__regs(s, &regs);
	switch (c->kind) {
	case C_REG:
		return compare(c->op, regs.r[c->reg], c->value);
	case C_MEM:
		rc = argus_step__read(s, c->addr, &v, c->size);
		if (rc)
			return rc;
		return compare(c->op, v, c->value);
	case C_LEFT:
		if (last) {
			if (last->kind & ARGUS_STEP_K_CALL)
				c->depth++;
			else if (last->kind & ARGUS_STEP_K_RET)
				c->depth--;
		}
		fn = step_engine__func(s, regs.r[ARGUS_REG_RIP]);
		if (fn && !strcmp(fn, c->func)) {
			if (!c->armed || c->depth < c->armed_depth)
				c->armed_depth = c->depth;
			c->armed = true;
			return 0;
		}
		return c->armed && c->depth <= c->armed_depth;
	}
	return -EINVAL;
}
