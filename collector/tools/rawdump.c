// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * argus-rawdump [--no-irq] [--no-sampler] [--copy BYTES] [--hz N] [--ring MB]
 *               [--quiet] [seconds]
 *
 * Debug aid for kernel-patch/: opens the BPF probe, drains raw records for
 * N seconds (default 2), prints each record as one text line, then the
 * per-CPU lost counts.  No trace file, no symbolization.  --quiet prints
 * only a count per record type (to measure drain throughput and loss).
 *
 * Each record is turned into the trace event the collector would make of
 * it and printed by the one event formatter (graphlib/argus_event_format.h),
 * as `argus dump` prints it: the same names, syscalls and objects.  Under
 * it, on tab-led lines, what only the raw record has: the user-stack tail
 * (registers, copy size, frame-pointer ips), an exit's group_dead, an
 * irq_exit's handler return.  A comm is known once a record named it (no task table).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "argus_event_format.h"
#include "argus_events.h"
#include "bpf_probe.h"

static volatile sig_atomic_t stop;
static unsigned long long nrec, nbad, per_type[AE_TYPE_MAX];
static bool quiet;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

/* The comm of each tid seen in a record (switch's next, a task record,
 * exec, rename), so that lines name their tasks: a small table indexed by
 * tid, where a tid that collides replaces the older one. */
#define COMMS 4096
static struct { uint32_t tid; char comm[AE_COMM_LEN + 1]; } comms[COMMS];

static void note_comm(uint32_t tid, const char *comm)
{
	if (!tid)
		return;
	comms[tid % COMMS].tid = tid;
	snprintf(comms[tid % COMMS].comm, sizeof(comms[0].comm), "%.*s", AE_COMM_LEN, comm);
}

static const char *comm_of(void *arg, uint32_t tid)
{
	(void)arg;
	return comms[tid % COMMS].tid == tid ? comms[tid % COMMS].comm : NULL;
}

/* The ustack tail at p (size left: rem) on a line of its own under the
 * event, as `argus dump --stacks` puts frames under theirs; -1 when it
 * does not fit the record. */
static int print_ustack(const void *p, size_t rem)
{
	const struct ae_ustack *u = p;
	const uint64_t *ips = (const void *)(u + 1);
	unsigned i;

	if (rem < sizeof(*u) || rem != sizeof(*u) + u->nr_ips * 8ul + u->copy_len)
		return -1;
	printf("\tuip=%#llx usp=%#llx ubp=%#llx copy=%u ips=", (unsigned long long)u->ip,
	       (unsigned long long)u->sp, (unsigned long long)u->bp, u->copy_len);
	for (i = 0; i < u->nr_ips; i++)
		printf("%s%#llx", i ? "," : "", (unsigned long long)ips[i]);
	if (!u->nr_ips)
		printf("-");
	putchar('\n');
	return 0;
}

/* The record as the trace event the collector would make of it
 * (collector.c, take_record), its strings in str/str2 (NUL-terminated
 * copies); the size of the fixed part, or 0 when the record is too short
 * or of a type this tool does not decode. */
static size_t to_event(const void *rec, size_t size, struct argus_event *ev,
		       char str[AE_PATH_LEN + 1], char str2[AE_PATH_LEN + 1])
{
	const struct ae_hdr *h = rec;

#define NEED(T) do { if (size < sizeof(T)) return 0; } while (0)
	memset(ev, 0, sizeof(*ev));
	str[0] = str2[0] = 0;
	ev->ts = h->ts;
	ev->tid = h->tid;
	ev->pid = h->pid;
	ev->type = h->type;
	ev->cpu = h->cpu;
	ev->ctx = (uint8_t)h->ctx;
	switch (h->type) {
	case AE_SWITCH: {
		const struct ae_switch *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_SW_NEXT_TID] = r->next_tid;
		ev->f[ARGUS_F_SW_NEXT_PID] = r->next_pid;
		ev->f[ARGUS_F_SW_PREV_STATE] = (uint64_t)r->prev_state;
		ev->f[ARGUS_F_SW_SYS_NR] = (uint64_t)(int64_t)r->sys_nr;
		ev->f[ARGUS_F_SW_SYS_ARG] = r->sys_arg;
		ev->f[ARGUS_F_SW_OBJ_KIND] = r->obj.kind;
		ev->f[ARGUS_F_SW_OBJ] = r->obj.obj;
		ev->f[ARGUS_F_SW_PEER] = r->obj.peer;
		note_comm(r->next_tid, r->next_comm);
		return sizeof(*r);
	}
	case AE_WAKING: {
		const struct ae_waking *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_WK_TARGET_TID] = r->target_tid;
		ev->f[ARGUS_F_WK_TARGET_PID] = r->target_pid;
		ev->f[ARGUS_F_WK_TARGET_CPU] = r->target_cpu;
		ev->f[ARGUS_F_WK_VECTOR] = r->vector;
		ev->f[ARGUS_F_WK_HRTIMER] = r->hrtimer;
		return sizeof(*r);
	}
	case AE_WAKEUP_NEW: case AE_FORK: case AE_FREE: {
		const struct ae_task *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_TK_CHILD_TID] = r->child_tid;
		ev->f[ARGUS_F_TK_CHILD_PID] = r->child_pid;
		ev->f[ARGUS_F_TK_CLONE_FLAGS] = r->clone_flags;
		snprintf(str, AE_PATH_LEN + 1, "%.*s", AE_COMM_LEN, r->comm);
		if (h->type != AE_FREE)
			note_comm(r->child_tid, r->comm);
		return sizeof(*r);
	}
	case AE_EXEC: {
		const struct ae_exec *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_EX_OLD_TID] = r->old_tid;
		snprintf(str, AE_PATH_LEN + 1, "%.*s", AE_COMM_LEN, r->comm);
		snprintf(str2, AE_PATH_LEN + 1, "%.*s", AE_PATH_LEN, r->filename);
		note_comm(h->tid, r->comm);
		return sizeof(*r);
	}
	case AE_EXIT: {
		const struct ae_exit *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_EXIT_CODE] = (uint64_t)(int64_t)r->exit_code;
		ev->f[ARGUS_F_EXIT_GROUP_DEAD] = r->group_dead;
		return sizeof(*r);
	}
	case AE_RENAME: {
		const struct ae_rename *r = rec;

		NEED(*r);
		snprintf(str, AE_PATH_LEN + 1, "%.*s", AE_COMM_LEN, r->comm);
		note_comm(h->tid, r->comm);
		return sizeof(*r);
	}
	case AE_SYS_ENTER: {
		const struct ae_sys_enter *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_SE_NR] = (uint64_t)r->nr;
		for (int i = 0; i < 6; i++)
			ev->f[ARGUS_F_SE_ARG0 + i] = r->args[i];
		return sizeof(*r);
	}
	case AE_SYS_EXIT: {
		const struct ae_sys_exit *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_SX_NR] = (uint64_t)r->nr;
		ev->f[ARGUS_F_SX_RET] = (uint64_t)r->ret;
		ev->f[ARGUS_F_SX_ARG0] = r->arg0;
		ev->f[ARGUS_F_SX_OBJ_KIND] = r->obj.kind;
		ev->f[ARGUS_F_SX_OBJ] = r->obj.obj;
		ev->f[ARGUS_F_SX_PEER] = r->obj.peer;
		return sizeof(*r);
	}
	case AE_HRT_START: case AE_HRT_EXPIRE: case AE_HRT_CANCEL: {
		const struct ae_hrtimer *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_HT_TIMER] = r->timer;
		ev->f[ARGUS_F_HT_FUNCTION] = r->function;
		ev->f[ARGUS_F_HT_EXPIRES] = (uint64_t)r->expires;
		ev->f[ARGUS_F_HT_MODE] = r->mode;
		ev->f[ARGUS_F_HT_OWNER_TID] = r->owner_tid;
		return sizeof(*r);
	}
	case AE_IRQ_ENTRY: case AE_IRQ_EXIT: case AE_SOFTIRQ_ENTRY: case AE_SOFTIRQ_EXIT: {
		const struct ae_irq *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_IRQ_VECTOR] = r->vector;
		ev->f[ARGUS_F_IRQ_RET] = (uint64_t)(int64_t)r->ret;
		return sizeof(*r);
	}
	case AE_WQ_START: case AE_WQ_END: {
		const struct ae_wq *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_WQ_WORK] = r->work;
		ev->f[ARGUS_F_WQ_FUNCTION] = r->function;
		return sizeof(*r);
	}
	case AE_SAMPLE: {
		const struct ae_sample *r = rec;

		NEED(*r);
		return sizeof(*r);
	}
	case AE_HWWATCH: {
		const struct ae_hwwatch *r = rec;

		NEED(*r);
		ev->f[ARGUS_F_HW_ADDR] = r->addr;
		ev->f[ARGUS_F_HW_VALUE] = r->value;
		ev->f[ARGUS_F_HW_LEN] = r->len;
		ev->f[ARGUS_F_HW_ID] = r->watch_id;
		ev->f[ARGUS_F_HW_IP] = r->ip;
		ev->f[ARGUS_F_HW_VALUE_OK] = r->value_ok;
		ev->f[ARGUS_F_HW_READER] = r->reader;
		return sizeof(*r);
	}
	}
	return 0;
#undef NEED
}

/* Records that may carry a ustack tail after their fixed part. */
static bool has_ustack(unsigned type)
{
	return type == AE_SWITCH || type == AE_SAMPLE || type == AE_HWWATCH;
}

static int on_rec(void *ctx, const void *rec, size_t size)
{
	const struct ae_hdr *h = rec;
	static char str[AE_PATH_LEN + 1], str2[AE_PATH_LEN + 1];
	struct argus_event ev;
	struct argus_event_fmt fmt = { .str = str, .str2 = str2, .comm = comm_of };
	size_t fixed;

	(void)ctx;
	if (size < sizeof(*h) || h->size != size)
		goto bad;
	nrec++;
	if (quiet) {
		per_type[h->type < AE_TYPE_MAX ? h->type : 0]++;
		return 0;
	}
	fixed = to_event(rec, size, &ev, str, str2);
	if (!fixed) {
		printf("%llu c%u %u/%u type=%u MALFORMED-OR-UNKNOWN size=%zu\n",
		       (unsigned long long)h->ts, h->cpu, h->tid, h->pid, h->type, size);
		nbad++;
		return 0;
	}
	argus_event__write_text(stdout, &fmt, &ev);
	/* what the raw record has and the trace event does not */
	if (h->type == AE_EXIT)
		printf("\tgroup_dead=%llu\n", (unsigned long long)ev.f[ARGUS_F_EXIT_GROUP_DEAD]);
	else if (h->type == AE_IRQ_EXIT)       /* the handler's irqreturn_t */
		printf("\tret=%lld\n", (long long)(int64_t)ev.f[ARGUS_F_IRQ_RET]);
	if (has_ustack(h->type) && size > fixed && print_ustack((const char *)rec + fixed, size - fixed))
		goto bad;
	return 0;
bad:
	nbad++;
	printf("\tMALFORMED size=%zu\n", size);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: argus-rawdump [--no-irq] [--no-sampler] [--copy BYTES] "
			"[--hz N] [--ring MB] [--quiet] [seconds]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "no-irq", no_argument, 0, 'i' },
		{ "no-sampler", no_argument, 0, 'S' },
		{ "copy", required_argument, 0, 'c' },
		{ "hz", required_argument, 0, 'z' },
		{ "ring", required_argument, 0, 'r' },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct argus_probe_opts o = { .sz = sizeof(o) };
	struct argus_probe *p;
	char err[512];
	double secs = 2, end;
	uint64_t lost[1024];
	unsigned long long tot = 0;
	int c, n, i;

	while ((c = getopt_long(argc, argv, "iSc:z:r:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'i': o.no_irq = true; break;
		case 'S': o.no_sampler = true; break;
		case 'c': o.sample_copy = o.block_copy = strtoul(optarg, NULL, 0); break;
		case 'z': o.sample_hz = strtoul(optarg, NULL, 0); break;
		case 'r': o.ringbuf_mb = strtoul(optarg, NULL, 0); break;
		case 'q': quiet = true; break;
		default: usage();
		}
	}
	if (optind < argc) {
		char *e;

		secs = strtod(argv[optind], &e);
		if (*e || secs < 0)
			usage();
	}
	o.self_tgid = getpid();
	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	p = argus_probe__open(&o, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	end = now_s() + secs;
	while (!stop && now_s() < end) {
		n = argus_probe__poll(p, 100, on_rec, NULL);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "argus-rawdump: poll: %s\n", strerror(-n));
			break;
		}
	}
	argus_probe__drain(p, on_rec, NULL);
	if (quiet)
		for (i = 0; i < AE_TYPE_MAX; i++)
			if (per_type[i])
				printf("%-14s %llu\n", argus_event_fmt_type((unsigned)i), per_type[i]);
	n = argus_probe__lost(p, lost, 1024);
	printf("# records=%llu malformed=%llu lost:", nrec, nbad);
	for (i = 0; i < n && i < 1024; i++) {
		printf(" cpu%d=%llu", i, (unsigned long long)lost[i]);
		tot += lost[i];
	}
	printf(" total=%llu\n", tot);
	fflush(stdout);
	argus_probe__close(p);
	return 0;
}
