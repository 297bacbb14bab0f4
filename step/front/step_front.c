/* step_front.c - helpers of the step commands (step_front.h). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_graph.h"
#include "msg.h"
#include "step_front.h"

volatile int step_front_interrupted;

static void on_signal(int sig)
{
	step_front_interrupted = sig;
}

void step_front_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

struct argus_stepper *step_front_open(const char *cmd, uint32_t pid, uint32_t tid,
				    uint32_t syscall_timeout_ms)
{
	struct argus_step_opts o = { .sz = sizeof(o), .syscall_timeout_ms = syscall_timeout_ms };
	struct argus_stepper *s = argus_step__open_pid(pid, tid, &o);

	if (s)
		return s;
	switch (errno) {
	case ESRCH:
		if (tid && tid != pid)
			msg_error(cmd, "no thread %u in process %u (is the process running? see ls /proc/%u/task)",
				  tid, pid, pid);
		else
			msg_error(cmd, "no process %u (it exited, or the pid is wrong)", pid);
		break;
	case EPERM:
		msg_error(cmd, "not allowed to trace %u: run as root (or as its user with"
			  " kernel.yama.ptrace_scope=0)", tid ? tid : pid);
		break;
	case EBUSY:
		msg_error(cmd, "thread %u is already traced by another debugger (lldb, gdb, strace):"
			  " detach it first, or use the argus commands inside lldb", tid ? tid : pid);
		break;
	default:
		msg_error(cmd, "cannot attach to thread %u of %u: %s", tid ? tid : pid, pid,
			  strerror(errno));
		break;
	}
	return NULL;
}

const char *step_front_where(const struct argus_step_rec *r, const struct argus_step_insn *in,
			   char *buf, size_t len)
{
	const char *name = argus_step_rec__string(r, in->sym);

	if (name)
		snprintf(buf, len, "%s+0x%" PRIx64, msg_tstr(name), in->sym_off);
	else
		snprintf(buf, len, "0x%" PRIx64, in->addr);
	return buf;
}

void step_front_print_insn(const struct argus_step_rec *r, size_t i)
{
	const struct argus_step_insn *in = argus_step_rec__insn(r, i);
	char where[300];

	printf("%6zu  0x%012" PRIx64 "  %-32s %-40s", i, in->addr, step_front_where(r, in, where, sizeof(where)),
	       in->text);
	for (unsigned k = 0; k < in->nregs; k++)
		printf(" %s=0x%" PRIx64, argus_step_reg__name(in->reg[k]), in->val[k]);
	for (unsigned k = 0; k < in->nmem; k++) {
		const struct argus_step_mem *m = &in->mem[k];

		if (m->access & ARGUS_STEP_MEM_READ && m->valid & ARGUS_STEP_MEM_HAVE_BEFORE)
			printf(" [0x%" PRIx64 "]:%u->0x%" PRIx64, m->addr, m->size, m->before);
		if (m->access & ARGUS_STEP_MEM_WRITE && m->valid & ARGUS_STEP_MEM_HAVE_AFTER)
			printf(" [0x%" PRIx64 "]:%u<-0x%" PRIx64, m->addr, m->size, m->after);
		if (!(m->valid & (m->access & ARGUS_STEP_MEM_READ ? ARGUS_STEP_MEM_HAVE_BEFORE :
								    ARGUS_STEP_MEM_HAVE_AFTER)))
			printf(" [0x%" PRIx64 "]:%u%s?", m->addr, m->size,
			       m->access & ARGUS_STEP_MEM_READ ? "->" : "<-");
	}
	if (in->flags & ARGUS_STEP_F_RESTART)
		printf(" (restarted syscall)");
	else if (in->flags & ARGUS_STEP_F_SYSCALL)
		printf(" (syscall)");
	if (in->flags & ARGUS_STEP_F_SIGNAL)
		printf(" (signal %u delivered)", in->sig);
	if (in->flags & ARGUS_STEP_F_OVER)
		printf(" (ran on to the callee's return: vDSO)");
	putchar('\n');
}

void step_front_json_insn(const struct argus_step_rec *r, size_t i)
{
	const struct argus_step_insn *in = argus_step_rec__insn(r, i);
	const char *name = argus_step_rec__string(r, in->sym);

	printf("{\"index\":%zu,\"addr\":%" PRIu64 ",\"bytes\":\"", i, in->addr);
	for (unsigned k = 0; k < in->len; k++)
		printf("%02x", in->bytes[k]);
	printf("\",\"text\":");
	argus_json_write_str(stdout, in->text);
	printf(",\"symbol\":");
	if (name)
		argus_json_write_str(stdout, name);
	else
		printf("null");
	printf(",\"symbol_offset\":%" PRIu64 ",\"regs\":{", in->sym_off);
	for (unsigned k = 0; k < in->nregs; k++)
		printf("%s\"%s\":%" PRIu64, k ? "," : "", argus_step_reg__name(in->reg[k]), in->val[k]);
	printf("},\"mem\":[");
	for (unsigned k = 0; k < in->nmem; k++) {
		const struct argus_step_mem *m = &in->mem[k];

		printf("%s{\"addr\":%" PRIu64 ",\"size\":%u,\"read\":%s,\"write\":%s", k ? "," : "",
		       m->addr, m->size, m->access & ARGUS_STEP_MEM_READ ? "true" : "false",
		       m->access & ARGUS_STEP_MEM_WRITE ? "true" : "false");
		if (m->valid & ARGUS_STEP_MEM_HAVE_BEFORE)
			printf(",\"before\":%" PRIu64, m->before);
		if (m->valid & ARGUS_STEP_MEM_HAVE_AFTER)
			printf(",\"after\":%" PRIu64, m->after);
		printf("}");
	}
	printf("],\"syscall\":%s,\"restarted\":%s", in->flags & ARGUS_STEP_F_SYSCALL ? "true" : "false",
	       in->flags & ARGUS_STEP_F_RESTART ? "true" : "false");
	if (in->flags & ARGUS_STEP_F_SIGNAL)
		printf(",\"signal\":%u", in->sig);
	if (in->flags & ARGUS_STEP_F_OVER)
		printf(",\"over\":true");
	printf("}");
}

void step_front_json_input(const struct argus_step_input *in)
{
	if (in->is_mem)
		printf("{\"kind\":\"mem\",\"addr\":%" PRIu64 ",\"size\":%u,\"value\":%" PRIu64
		       ",\"insn_index\":%zu,\"self_written\":%s}", in->addr, in->size, in->value, in->at,
		       in->self_written ? "true" : "false");
	else
		printf("{\"kind\":\"reg\",\"reg\":\"%s\",\"value\":%" PRIu64 ",\"insn_index\":%zu}",
		       argus_step_reg__name(in->reg), in->value, in->at);
}

void step_front_json_loop(const struct argus_step_loop *l)
{
	printf("{\"head\":%" PRIu64 ",\"latch\":%" PRIu64 ",\"body_lo\":%" PRIu64 ",\"body_hi\":%" PRIu64
	       ",\"iterations\":%u,\"insns_per_iteration\":%u}", l->head, l->latch, l->body_lo,
	       l->body_hi, l->iterations, l->body_insns);
}
