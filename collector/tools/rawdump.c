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
 * Line format: TS_NS cCPU CTX TID/PID TYPE key=value...
 *   CTX is T (task), S (softirq), H (hardirq), N (NMI).
 *   obj=KIND:OBJ/PEER (hex) for fd objects; tcp/udp print ip:port.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "argus_events.h"
#include "bpf_probe.h"
#include "syscall_names.h"

static volatile sig_atomic_t stop;
static unsigned long long nrec, nbad, per_type[AE_TYPE_MAX];
static bool quiet;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

/* "-" when not in a syscall, "?" for a number this build does not know */
static const char *sys_name(long nr)
{
	const char *n = argus_syscall_name(nr);

	return nr == -1 ? "-" : n ? n : "?";
}

static const char *type_name(unsigned t)
{
	static const char *n[] = {
		[AE_SWITCH] = "SWITCH", [AE_WAKING] = "WAKING",
		[AE_WAKEUP_NEW] = "WAKEUP_NEW", [AE_FORK] = "FORK",
		[AE_EXEC] = "EXEC", [AE_EXIT] = "EXIT", [AE_FREE] = "FREE",
		[AE_RENAME] = "RENAME", [AE_SYS_ENTER] = "SYS_ENTER",
		[AE_SYS_EXIT] = "SYS_EXIT", [AE_HRT_START] = "HRT_START",
		[AE_HRT_EXPIRE] = "HRT_EXPIRE", [AE_HRT_CANCEL] = "HRT_CANCEL",
		[AE_IRQ_ENTRY] = "IRQ_ENTRY", [AE_IRQ_EXIT] = "IRQ_EXIT",
		[AE_SOFTIRQ_ENTRY] = "SOFTIRQ_ENTRY",
		[AE_SOFTIRQ_EXIT] = "SOFTIRQ_EXIT", [AE_WQ_START] = "WQ_START",
		[AE_WQ_END] = "WQ_END", [AE_SAMPLE] = "SAMPLE",
		[AE_HWWATCH] = "HWWATCH",
	};
	return t < sizeof(n) / sizeof(n[0]) && n[t] ? n[t] : "UNKNOWN";
}

static void print_obj(const struct ae_obj *o)
{
	static const char *k[] = { "none", "pipe", "unix", "tcp", "udp", "eventfd",
				   "timerfd", "epoll", "file", "sock", "other" };
	const char *kn = o->kind < sizeof(k) / sizeof(k[0]) ? k[o->kind] : "?";

	if (o->kind == AE_OBJ_NONE)
		return;
	if (o->kind == AE_OBJ_TCP || o->kind == AE_OBJ_UDP) {
		unsigned long long a = o->obj >> 16, b = o->peer >> 16;

		printf(" obj=%s:%llu.%llu.%llu.%llu:%llu/%llu.%llu.%llu.%llu:%llu", kn,
		       a >> 24 & 255, a >> 16 & 255, a >> 8 & 255, a & 255,
		       (unsigned long long)(o->obj & 0xffff),
		       b >> 24 & 255, b >> 16 & 255, b >> 8 & 255, b & 255,
		       (unsigned long long)(o->peer & 0xffff));
		return;
	}
	printf(" obj=%s:%llx/%llx", kn, (unsigned long long)o->obj,
	       (unsigned long long)o->peer);
}

/* Prints the ustack tail at p (size left: rem); returns 0 when it fits. */
static int print_ustack(const void *p, size_t rem)
{
	const struct ae_ustack *u = p;
	const uint64_t *ips = (const void *)(u + 1);
	unsigned i;

	if (rem < sizeof(*u) || rem != sizeof(*u) + u->nr_ips * 8ul + u->copy_len)
		return -1;
	printf(" uip=%llx usp=%llx ubp=%llx copy=%u ips=", (unsigned long long)u->ip,
	       (unsigned long long)u->sp, (unsigned long long)u->bp, u->copy_len);
	for (i = 0; i < u->nr_ips; i++)
		printf("%s%llx", i ? "," : "", (unsigned long long)ips[i]);
	if (!u->nr_ips)
		printf("-");
	return 0;
}

#define NEED(T) do { if (size < sizeof(T)) goto bad; } while (0)

static int on_rec(void *ctx, const void *rec, size_t size)
{
	const struct ae_hdr *h = rec;
	static const char ctxc[] = "TSHN";

	(void)ctx;
	if (size < sizeof(*h) || h->size != size)
		goto bad;
	nrec++;
	if (quiet) {
		per_type[h->type < AE_TYPE_MAX ? h->type : 0]++;
		return 0;
	}
	printf("%llu c%u %c %u/%u %s", (unsigned long long)h->ts, h->cpu,
	       h->ctx < 4 ? ctxc[h->ctx] : '?', h->tid, h->pid, type_name(h->type));
	switch (h->type) {
	case AE_SWITCH: {
		const struct ae_switch *e = rec;

		NEED(*e);
		printf(" next=%u/%u '%.16s' state=%lld sys=%d(%s) arg=%llx", e->next_tid,
		       e->next_pid, e->next_comm, (long long)e->prev_state, e->sys_nr,
		       sys_name(e->sys_nr), (unsigned long long)e->sys_arg);
		print_obj(&e->obj);
		if (size > sizeof(*e) && print_ustack(e + 1, size - sizeof(*e)))
			goto bad;
		break;
	}
	case AE_WAKING: {
		const struct ae_waking *e = rec;

		NEED(*e);
		printf(" target=%u/%u tcpu=%u", e->target_tid, e->target_pid, e->target_cpu);
		if (e->vector == AE_VEC_HRTIMER)
			printf(" vec=hrtimer hrtimer=%llx", (unsigned long long)e->hrtimer);
		else if (e->vector != AE_VEC_NONE)
			printf(" vec=%u", e->vector);
		break;
	}
	case AE_WAKEUP_NEW: case AE_FORK: case AE_FREE: {
		const struct ae_task *e = rec;

		NEED(*e);
		printf(" child=%u/%u '%.16s'", e->child_tid, e->child_pid, e->comm);
		break;
	}
	case AE_EXEC: {
		const struct ae_exec *e = rec;

		NEED(*e);
		printf(" old_tid=%u comm='%.16s' file='%.128s'", e->old_tid, e->comm, e->filename);
		break;
	}
	case AE_EXIT: {
		const struct ae_exit *e = rec;

		NEED(*e);
		printf(" code=%d group_dead=%u", e->exit_code, e->group_dead);
		break;
	}
	case AE_RENAME: {
		const struct ae_rename *e = rec;

		NEED(*e);
		printf(" comm='%.16s'", e->comm);
		break;
	}
	case AE_SYS_ENTER: {
		const struct ae_sys_enter *e = rec;

		NEED(*e);
		printf(" nr=%lld(%s) args=%llx,%llx,%llx,%llx,%llx,%llx", (long long)e->nr,
		       sys_name(e->nr), (unsigned long long)e->args[0],
		       (unsigned long long)e->args[1], (unsigned long long)e->args[2],
		       (unsigned long long)e->args[3], (unsigned long long)e->args[4],
		       (unsigned long long)e->args[5]);
		break;
	}
	case AE_SYS_EXIT: {
		const struct ae_sys_exit *e = rec;

		NEED(*e);
		printf(" nr=%lld(%s) ret=%lld arg0=%llx", (long long)e->nr, sys_name(e->nr),
		       (long long)e->ret, (unsigned long long)e->arg0);
		print_obj(&e->obj);
		break;
	}
	case AE_HRT_START: case AE_HRT_EXPIRE: case AE_HRT_CANCEL: {
		const struct ae_hrtimer *e = rec;

		NEED(*e);
		printf(" timer=%llx fn=%llx owner=%u", (unsigned long long)e->timer,
		       (unsigned long long)e->function, e->owner_tid);
		if (h->type == AE_HRT_START)
			printf(" expires=%lld mode=%u", (long long)e->expires, e->mode);
		break;
	}
	case AE_IRQ_ENTRY: case AE_IRQ_EXIT: case AE_SOFTIRQ_ENTRY: case AE_SOFTIRQ_EXIT: {
		const struct ae_irq *e = rec;

		NEED(*e);
		printf(" vec=%u ret=%d", e->vector, e->ret);
		break;
	}
	case AE_WQ_START: case AE_WQ_END: {
		const struct ae_wq *e = rec;

		NEED(*e);
		printf(" work=%llx fn=%llx", (unsigned long long)e->work,
		       (unsigned long long)e->function);
		break;
	}
	case AE_SAMPLE: {
		const struct ae_sample *e = rec;

		NEED(*e);
		if (print_ustack(e + 1, size - sizeof(*e)))
			goto bad;
		break;
	}
	case AE_HWWATCH: {
		const struct ae_hwwatch *e = rec;

		NEED(*e);
		printf(" addr=%llx value=%llx len=%u watch=%u ip=%llx reader=%u",
		       (unsigned long long)e->addr, (unsigned long long)e->value, e->len,
		       e->watch_id, (unsigned long long)e->ip, e->reader);
		if (print_ustack(e + 1, size - sizeof(*e)))
			goto bad;
		break;
	}
	default:
		printf(" size=%zu", size);
		break;
	}
	putchar('\n');
	return 0;
bad:
	nbad++;
	printf(" MALFORMED size=%zu\n", size);
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
				printf("%-14s %llu\n", type_name(i), per_type[i]);
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
