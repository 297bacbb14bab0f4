// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpf_probe.c - the BPF programs of kernel-patch/argus.bpf.c seen from user
 * space: check the machine, configure, load, attach, and drain raw records.
 *
 * Shape: argus_probe__open() = check -> open skeleton -> set .rodata ->
 * load -> attach tracepoints -> open the per-CPU sampler -> ring buffer.
 * Every failure jumps to one cleanup path (argus_probe__close, which calls
 * argus_bpf__destroy) and leaves ONE line in errbuf: what failed and how to
 * fix it.  libbpf never prints on its own: its messages are captured and
 * the most telling one (or the verifier's complaint) goes into that line;
 * ARGUS_BPF_DEBUG=1 in the environment prints everything to stderr.
 *
 * Data structures:
 *   struct argus_probe  - the skeleton, the libbpf ring_buffer reader, one
 *                         perf_event fd + link per CPU for the sampler, and
 *                         the callback of the current drain.
 * Invariants:
 *   - records handed to the callback are whole struct ae_* records, in the
 *     ring's order (per-CPU order; CPUs interleave by commit time); every
 *     drain reads rb, then rb_spill, the ring a CPU writes to while rb is
 *     full until it is drained (argus.bpf.c "the two rings"), so a CPU's
 *     records keep their order across the two.  An
 *     AE_BATCH (a CPU's task-context records, kernel-patch/argus.bpf.c,
 *     "batches") is unpacked here: the callback sees its records, in order,
 *     never the container.
 *   - batch_first[cpu] (mmapped) is the oldest timestamp still in that
 *     CPU's batch, 0 when empty: argus_probe__horizon() turns it into the
 *     time before which every record is in the ring.
 *   - per-CPU vectors (lost) are sized by the number of *possible* CPUs,
 *     which is how the kernel sizes PERCPU_ARRAY values.
 *
 * Kernel quirks handled here:
 *   - tracefs is not mounted at boot on this machine.  Raw tracepoints and
 *     perf events do not need it, but uprobes and the rest of argus do, so
 *     we mount it when missing.
 *   - RLIMIT_MEMLOCK is not raised: since 5.11 BPF memory is memcg-charged
 *     (and here the limit cannot be raised anyway); libbpf 1.x knows.
 *   - perf_event_open on an offline CPU fails with ENODEV: skip that CPU.
 */
#include "bpf_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "argus_events.h"
#include "argus.skel.h"
#include "batch_unpack.h"
#include "syscall_class.h"
#include "syscall_names.h"

#define TRACEFS_DIR "/sys/kernel/tracing"
#define TRACEFS_MAGIC 0x74726163
/* length of hrt_skip_fn[] in argus.bpf.c (checked in configure()) */
#define HRT_SKIP_MAX 12

struct argus_probe {
	struct argus_bpf *skel;
	struct ring_buffer *rb;
	int ncpus;                    /* possible CPUs */
	struct bpf_link **sample_links; /* [ncpus], NULL where no sampler */
	struct bpf_link **enter_links; /* syscalls:sys_enter_NAME, one per call */
	int nenter_links;
	argus_probe_cb cb;            /* callback of the drain in progress */
	void *cb_ctx;
	const volatile uint64_t *batch_first; /* [nfirst], mmapped; see the top */
	size_t batch_first_len;       /* bytes mapped */
	int nfirst;                   /* CPUs it covers: min(ncpus, its entries) */
	struct ring_pos {             /* a ring's position pages, read-only */
		void *pages;
		const unsigned long *consumer, *producer;
	} pos[2];                     /* rb, rb_spill */
	uint64_t spilled;             /* records drained from rb_spill */
	int draining;                 /* ring whose records the callback sees */
};

/* ---- libbpf messages -> one line -------------------------------------- */
/* Thread-local so that two threads opening probes do not mix messages. */
static __thread char lb_first[256];    /* first warning libbpf printed */
static __thread char lb_verifier[256]; /* the verifier's complaint, if any */

static void one_line(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++) {
		char c = *src == '\n' || *src == '\t' ? ' ' : *src;

		if (c == ' ' && (i == 0 || dst[i - 1] == ' '))
			continue;
		dst[i++] = c;
	}
	while (i > 0 && dst[i - 1] == ' ')
		i--;
	dst[i] = 0;
}

/* The verifier log is one message "-- BEGIN PROG LOAD LOG --\n...\n-- END";
 * its reason is the last line before the statistics lines. */
static void grab_verifier_reason(const char *msg)
{
	const char *b = strstr(msg, "-- BEGIN PROG LOAD LOG --");
	const char *end, *p, *best = NULL;
	size_t blen = 0;

	if (!b)
		return;
	b = strchr(b, '\n');
	end = strstr(msg, "-- END PROG LOAD LOG --");
	if (!b || !end)
		return;
	for (p = b + 1; p < end;) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n && strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11) && strncmp(p, "mark_precise", 12)) {
			best = p;
			blen = n;
		}
		p += n + 1;
	}
	if (best) {
		char tmp[256];

		if (blen >= sizeof(tmp))
			blen = sizeof(tmp) - 1;
		memcpy(tmp, best, blen);
		tmp[blen] = 0;
		one_line(lb_verifier, sizeof(lb_verifier), tmp);
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int debug = -1;
	char msg[8192];
	va_list cp;

	if (debug < 0)
		debug = getenv("ARGUS_BPF_DEBUG") && *getenv("ARGUS_BPF_DEBUG") != '0';
	va_copy(cp, ap);
	if (debug)
		vfprintf(stderr, fmt, cp);
	va_end(cp);
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	grab_verifier_reason(msg);
	if (!lb_first[0] && !strstr(msg, "-- BEGIN PROG LOAD LOG --")) {
		const char *m = strncmp(msg, "libbpf: ", 8) ? msg : msg + 8;

		one_line(lb_first, sizeof(lb_first), m);
	}
	return 0;
}

static void seterr(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* What libbpf said, for the end of an error line. */
static const char *libbpf_why(void)
{
	static __thread char why[600];

	if (lb_verifier[0])
		snprintf(why, sizeof(why), "%s; verifier: %s", lb_first, lb_verifier);
	else
		snprintf(why, sizeof(why), "%s", lb_first[0] ? lb_first : "no detail from libbpf");
	return why;
}

/* ---- machine checks ----------------------------------------------------- */
static int check_machine(char *errbuf, size_t errlen)
{
	struct statfs sfs;

	if (geteuid() != 0) {
		seterr(errbuf, errlen,
		       "argus: need root (or CAP_BPF+CAP_PERFMON): run as root");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		seterr(errbuf, errlen,
		       "argus: /sys/kernel/btf/vmlinux is missing: this kernel has no BTF; "
		       "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	if (statfs(TRACEFS_DIR, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC)
		return 0;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) != 0) {
		seterr(errbuf, errlen,
		       "argus: tracefs is not mounted and mounting it failed (%s): "
		       "run `mount -t tracefs nodev " TRACEFS_DIR "`",
		       strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- where the preempt count lives ------------------------------------- */
/*
 * The BPF side cannot use the __preempt_count ksym (no data symbols in
 * kallsyms without CONFIG_KALLSYMS_ALL); it finds this CPU's struct rq
 * instead and adds the distance between the two per-CPU variables, which
 * the DATASEC ".data..percpu" of the kernel BTF gives.  0 = unknown, and
 * the BPF side falls back to irq/softirq bookkeeping.
 */
static long long preempt_count_from_rq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long pc = -1, rq = -1, delta = 0;
	const struct btf_var_secinfo *vs;
	const struct btf_type *t;
	int id, i;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		vs = btf_var_secinfos(t);
		for (i = 0; i < btf_vlen(t); i++, vs++) {
			const char *n = btf__name_by_offset(btf, btf__type_by_id(btf, vs->type)->name_off);

			if (!strcmp(n, "__preempt_count"))
				pc = vs->offset;
			else if (!strcmp(n, "runqueues"))
				rq = vs->offset;
		}
	}
	if (pc >= 0 && rq >= 0)
		delta = pc - rq;
	btf__free(btf);
	return delta;
}

/* ---- kernel-internal hrtimers ------------------------------------------ */
/*
 * The scheduler arms its own hrtimers from task context (the fair server's
 * dl_task_timer on nearly every wake-up of an idle CPU's first task, hrtick,
 * CFS/RT bandwidth timers, perf's multiplexing timer), so the BPF side
 * cannot tell them from user timers by context.  We skip them by callback
 * address, read from /proc/kallsyms (text symbols are there even without
 * CONFIG_KALLSYMS_ALL).  A name this kernel lacks is simply not found.
 */
static void kernel_timer_fns(uint64_t *out, int max)
{
	static const char *names[] = {
		"dl_task_timer", "inactive_task_timer", "hrtick",
		"sched_cfs_period_timer", "sched_cfs_slack_timer",
		"sched_rt_period_timer", "tick_nohz_handler", "tick_sched_timer",
		"watchdog_timer_fn", "perf_mux_hrtimer_handler",
		"perf_swevent_hrtimer",
	};
	const int nn = sizeof(names) / sizeof(names[0]);
	char line[512];
	FILE *f;
	int found = 0, i;

	memset(out, 0, max * sizeof(*out));
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (found < max && found < nn && fgets(line, sizeof(line), f)) {
		char *sp1 = strchr(line, ' '), *name, *end;

		/* "ffffffff813c5900 t dl_task_timer\n": text symbols only */
		if (!sp1 || (sp1[1] != 't' && sp1[1] != 'T') || sp1[2] != ' ')
			continue;
		name = sp1 + 3;
		end = strpbrk(name, " \t\n");
		if (end)
			*end = 0;
		for (i = 0; i < nn; i++) {
			if (!strcmp(name, names[i])) {
				out[found++] = strtoull(line, NULL, 16);
				break;
			}
		}
	}
	fclose(f);
}

/* ---- the default syscall set --------------------------------------------- */
/*
 * What the graph needs from syscalls, and nothing per-byte-hot beyond it;
 * the calls are the ARGUS_SC_TRACED members of syscalls/syscall_class.h:
 *   waits:    futex, the poll family, the sleeps, sched_yield, the child
 *             waits
 *   messages: the send and receive calls (object resolved at exit)
 *   channels: pipe2, socketpair, eventfd2, connect, accept, accept4,
 *             timerfd_create, timerfd_settime
 *   signals:  kill, tgkill, tkill
 *   lifetime: exit, exit_group
 *   locks:    flock, fcntl (entry and exit: a lock's holder must show in a
 *             saved trace, and a busy-retry loop such as SQLite's - try
 *             F_SETLK, get EAGAIN, sleep, retry - must read as attempts on
 *             one file, not as an anonymous sleep loop).  The entry has the
 *             request (flock's op; for fcntl's lock cmds the BPF side reads
 *             l_type and the range from the struct flock: argus_events.h,
 *             AE_LOCK_TAG), the exit the result and the file's object
 *             (dev<<32 ^ ino).  fcntl's other cmds (F_GETFL, F_SETFD...,
 *             frequent) cost their two records and no user read or fd
 *             lookup.
 * Not pread64/pwrite64: file I/O at offsets is not communication.
 */
/* The members of the table (syscalls/syscall_class.h) with any class of
 * mask and none of `not`, as a bitmap of AE_SYSCALL_WORDS words. */
static void class_bitmap(uint64_t bitmap[AE_SYSCALL_WORDS], uint32_t mask, uint32_t not)
{
	_Static_assert(ARGUS_SYS_CLASS_NRS == AE_SYSCALL_WORDS * 64,
		       "the class table covers the syscall bitmaps' numbers");
	memset(bitmap, 0, AE_SYSCALL_WORDS * sizeof(uint64_t));
	for (long nr = 0; nr < ARGUS_SYS_CLASS_NRS; nr++) {
		uint32_t cls = argus_sys_class(nr);

		if ((cls & mask) && !(cls & not))
			bitmap[nr / 64] |= 1ull << (nr % 64);
	}
}

void argus_probe__default_syscalls(uint64_t bitmap[8])
{
	class_bitmap(bitmap, ARGUS_SC_TRACED, 0);
}

/*
 * Entries: a sys_enter record costs as much as the exit (BPF time, ring
 * space, collector time), and for the message calls it adds nothing the
 * graph uses: the exit has nr, fd (arg0), the object and ret, and a call
 * that blocks already has its switch-out with the syscall and object.  On
 * `perf bench sched messaging` these calls are ~95% of all records.  Nor
 * for sched_yield, which takes no argument and never blocks: its exits
 * are what the yield count reads, and a flag spin makes ~700 K of them a
 * second.  The entries that stay are those the analysis reads: the
 * waker's syscall at a wake-up (futex and its uaddr, kill/tgkill, exit),
 * the entry into the event-loop wait (poll family), and every call whose
 * arguments matter (connect, timers, sleeps, the lock request of flock
 * and fcntl).  --all-entries restores the
 * rest for schemas that match sys_enter of those calls.  The exit-only
 * calls are the table's ARGUS_SC_EXIT_ONLY.
 */
/* the message calls and sched_yield: entries off unless --all-entries */
static void data_calls(uint64_t bitmap[8])
{
	class_bitmap(bitmap, ARGUS_SC_EXIT_ONLY, 0);
}

void argus_probe__default_entries(uint64_t bitmap[8])
{
	class_bitmap(bitmap, ARGUS_SC_TRACED, ARGUS_SC_EXIT_ONLY);
}

/* The BPF side's word for syscall nr (argus.bpf.c sys_class[]): its classes
 * from the one table and whether this run records its exits and entries. */
static uint32_t sys_word(long nr, bool traced, bool entry)
{
	_Static_assert(ARGUS_SC_TIMEOUT_AT(7, 3) < AE_SYS_ENTRY,
		       "the table's classes leave the run's two bits free");
	return argus_sys_class(nr) | (traced ? AE_SYS_TRACED : 0) | (entry && traced ? AE_SYS_ENTRY : 0);
}

/* Settings that become .rodata constants of the BPF programs (the verifier
 * then prunes disabled paths), and the ring's size; before load. */
static int configure(struct argus_bpf *skel, const struct argus_probe_opts *o)
{
	uint64_t rb_bytes = (uint64_t)o->ringbuf_mb << 20;
	int err;
	uint64_t defsys[AE_SYSCALL_WORDS], data[AE_SYSCALL_WORDS], skip[HRT_SKIP_MAX];
	const uint64_t *sys = o->syscalls;
	int i;

	_Static_assert(sizeof(skel->rodata->hrt_skip_fn) == sizeof(skip),
		       "HRT_SKIP_MAX differs from argus.bpf.c");

	skel->rodata->self_tgid = o->self_tgid;
	skel->rodata->sample_copy = o->sample_copy;
	skel->rodata->block_copy = o->block_copy;
	skel->rodata->no_irq = o->no_irq;
	skel->rodata->wake_bytes = rb_bytes / 4;  /* watermark: 1/4 of the ring */
	skel->rodata->pc_from_rq = preempt_count_from_rq();
	kernel_timer_fns(skip, HRT_SKIP_MAX);
	for (i = 0; i < HRT_SKIP_MAX; i++)
		skel->rodata->hrt_skip_fn[i] = skip[i];
	if (!sys) {
		argus_probe__default_syscalls(defsys);
		sys = defsys;
	}
	data_calls(data);
	for (i = 0; i < AE_SYSCALL_WORDS * 64; i++) {
		uint64_t bit = 1ull << (i % 64), entry = o->all_entries ? sys[i / 64] :
						    sys[i / 64] & ~data[i / 64];

		skel->rodata->sys_class[i] = sys_word(i, sys[i / 64] & bit, entry & bit);
	}
	err = bpf_map__set_max_entries(skel->maps.rb, (uint32_t)rb_bytes);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.rb_spill,
					       (uint32_t)((uint64_t)o->spill_mb << 20));
	return err;
}

/* ---- open --------------------------------------------------------------- */
static int map_batch_first(struct argus_probe *p);

/* One ring record to the callback; an AE_BATCH as its records. */
static int rb_sample(void *ctx, void *data, size_t size)
{
	struct argus_probe *p = ctx;

	return p->cb ? argus_batch_each(data, size, p->cb, p->cb_ctx) : 0;
}

static int spill_sample(void *ctx, void *data, size_t size)
{
	struct argus_probe *p = ctx;
	const struct ae_batch *b = data;
	int rc;

	/* records, not ring entries: a batch counts as what it holds (its
	 * header is checked again, and bounded, by the unpacking) */
	p->spilled += size >= sizeof(*b) && b->h.type == AE_BATCH ? b->count : 1;
	p->draining = 1;
	rc = rb_sample(ctx, data, size);
	p->draining = 0;
	return rc;
}

static int open_sampler(struct argus_probe *p, uint32_t hz, char *errbuf, size_t errlen)
{
	struct perf_event_attr attr;
	int cpu, attached = 0;

	p->sample_links = calloc(p->ncpus, sizeof(*p->sample_links));
	if (!p->sample_links) {
		seterr(errbuf, errlen, "argus: out of memory");
		return -ENOMEM;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = hz;
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		struct bpf_link *l;

		if (fd < 0) {
			if (errno == ENODEV)  /* offline CPU */
				continue;
			seterr(errbuf, errlen,
			       "argus: perf_event_open(cpu-clock, cpu %d) for the sampler failed: %s; "
			       "check /proc/sys/kernel/perf_event_paranoid or run without the sampler",
			       cpu, strerror(errno));
			return -errno;
		}
		l = bpf_program__attach_perf_event(p->skel->progs.on_sample, fd);
		if (!l) {
			int err = -errno;

			close(fd);
			seterr(errbuf, errlen,
			       "argus: attaching the sampler to cpu %d failed: %s",
			       cpu, libbpf_why());
			return err;
		}
		p->sample_links[cpu] = l;  /* the link owns and closes fd */
		attached++;
	}
	if (!attached) {
		seterr(errbuf, errlen, "argus: no online CPU accepted the sampler");
		return -ENODEV;
	}
	return 0;
}

/*
 * Syscall entries: through syscalls:sys_enter_NAME for each call of the
 * entry bitmap (see on_sys_enter_tp: the other calls then run no BPF on
 * entry), or through the raw sys_enter tracepoint when every traced call
 * wants its entry (--all-entries) or a per-call tracepoint is missing
 * (a kernel without CONFIG_FTRACE_SYSCALLS, a call without an event).
 *
 * Detaching a syscalls:sys_enter_* tracepoint waits for an RCU grace
 * period in the kernel (its perf event's unregister synchronizes), ~56 ms
 * here: one after the other, the ~27 links of the entry set kept every
 * `argus record` and argusd stop waiting 1.6 s.  From DETACH_THREADS
 * threads at once the waits overlap in part: the kernel still finishes
 * one close ~27 ms after the one before (a lock is held across each
 * wait), ~0.7 s in all.
 */
#define DETACH_THREADS 8

struct detach_job {
	struct bpf_link **links;
	int n, first;           /* links first, first + DETACH_THREADS, ... */
};

static void *detach_every_nth(void *arg)
{
	struct detach_job *j = arg;

	for (int i = j->first; i < j->n; i += DETACH_THREADS)
		bpf_link__destroy(j->links[i]);
	return NULL;
}

static void drop_enter_links(struct argus_probe *p)
{
	struct detach_job job[DETACH_THREADS];
	pthread_t th[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };

	for (int i = 0; i < DETACH_THREADS && i < p->nenter_links; i++) {
		job[i] = (struct detach_job){ p->enter_links, p->nenter_links, i };
		started[i] = !pthread_create(&th[i], NULL, detach_every_nth, &job[i]);
		if (!started[i])
			detach_every_nth(&job[i]);      /* no thread: here */
	}
	for (int i = 0; i < DETACH_THREADS; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(p->enter_links);
	p->enter_links = NULL;
	p->nenter_links = 0;
}

/* One link per call of the entry set (read back from the loaded
 * program's .rodata); 0, or -1 with nothing left attached. */
static int attach_per_call(struct argus_probe *p)
{
	const __u32 *want = p->skel->rodata->sys_class;

	p->enter_links = calloc(AE_SYSCALL_WORDS * 64, sizeof(*p->enter_links));
	for (int nr = 0; p->enter_links && nr < AE_SYSCALL_WORDS * 64; nr++) {
		const char *name = argus_syscall_name(nr);
		struct bpf_link *l;
		char tp[64];

		if (!(want[nr] & AE_SYS_ENTRY))
			continue;
		if (!name || snprintf(tp, sizeof(tp), "sys_enter_%s", name) >= (int)sizeof(tp) ||
		    !(l = bpf_program__attach_tracepoint(p->skel->progs.on_sys_enter_tp,
							 "syscalls", tp))) {
			drop_enter_links(p);
			return -1;
		}
		p->enter_links[p->nenter_links++] = l;
	}
	return p->enter_links ? 0 : -1;
}

static int attach_entries(struct argus_probe *p, bool all_entries)
{
	struct bpf_link *l;

	if (!all_entries && !attach_per_call(p))
		return 0;
	l = bpf_program__attach(p->skel->progs.on_sys_enter);
	if (!l)
		return -errno;
	p->skel->links.on_sys_enter = l;  /* destroyed with the skeleton */
	return 0;
}

/* The caller's options (older/newer callers: what both know), with the
 * defaults filled in and checked: 0, or -EINVAL with the reason in errbuf. */
static int probe_opts(const struct argus_probe_opts *user_opts,
		      struct argus_probe_opts *o, char *errbuf, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (user_opts) {
		size_t n = user_opts->sz && user_opts->sz < sizeof(*o) ? user_opts->sz : sizeof(*o);

		memcpy(o, user_opts, n);
	}
	if (!o->sample_hz)
		o->sample_hz = 49;
	if (!o->ringbuf_mb)
		o->ringbuf_mb = 16;
	if (!o->spill_mb)
		o->spill_mb = 64;
	if (o->ringbuf_mb & (o->ringbuf_mb - 1) || o->ringbuf_mb > 1024 ||
	    o->spill_mb & (o->spill_mb - 1) || o->spill_mb > 1024) {
		seterr(errbuf, errlen,
		       "argus: ring buffer sizes %u and %u MiB must be powers of 2 up to 1024",
		       o->ringbuf_mb, o->spill_mb);
		return -EINVAL;
	}
	if (o->sample_copy > AE_MAX_STACK_COPY || o->block_copy > AE_MAX_STACK_COPY) {
		seterr(errbuf, errlen, "argus: user-stack copy size must be at most %d bytes",
		       AE_MAX_STACK_COPY);
		return -EINVAL;
	}
	return 0;
}

/* The BPF object opened and configured by o, not loaded yet; NULL with the
 * reason in errbuf. */
static struct argus_bpf *open_configured(const struct argus_probe_opts *o,
					 char *errbuf, size_t errlen)
{
	struct argus_bpf *skel;
	int err;

	libbpf_set_print(libbpf_print);
	skel = argus_bpf__open();
	if (!skel) {
		seterr(errbuf, errlen, "argus: opening the BPF object failed: %s", libbpf_why());
		return NULL;
	}
	err = configure(skel, o);
	if (err) {
		seterr(errbuf, errlen, "argus: sizing the ring buffer failed: %s", strerror(-err));
		argus_bpf__destroy(skel);
		return NULL;
	}
	if (o->no_sampler)
		bpf_program__set_autoload(skel->progs.on_sample, false);
	return skel;
}

struct argus_probe *argus_probe__open(const struct argus_probe_opts *user_opts,
				      char *errbuf, size_t errlen)
{
	struct argus_probe_opts o;
	struct argus_probe *p = NULL;
	int err;

	if (errbuf && errlen)
		errbuf[0] = 0;
	lb_first[0] = lb_verifier[0] = 0;
	if (probe_opts(user_opts, &o, errbuf, errlen))
		return NULL;
	if (check_machine(errbuf, errlen))
		return NULL;

	libbpf_set_print(libbpf_print);
	p = calloc(1, sizeof(*p));
	if (!p) {
		seterr(errbuf, errlen, "argus: out of memory");
		return NULL;
	}
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		seterr(errbuf, errlen, "argus: cannot read the possible CPUs from /sys");
		goto fail;
	}

	/* open -> configure */
	p->skel = open_configured(&o, errbuf, errlen);
	if (!p->skel)
		goto fail;

	/* load */
	err = argus_bpf__load(p->skel);
	if (err) {
		seterr(errbuf, errlen,
		       "argus: the kernel rejected the BPF programs (%s): %s; "
		       "rerun with ARGUS_BPF_DEBUG=1 for the full verifier log",
		       strerror(-err), libbpf_why());
		goto fail;
	}

	/* attach: every raw tracepoint (the sampler is attached per CPU below,
	 * the syscall entries by attach_entries()) */
	bpf_program__set_autoattach(p->skel->progs.on_sys_enter, false);
	bpf_program__set_autoattach(p->skel->progs.on_sys_enter_tp, false);
	bpf_program__set_autoattach(p->skel->progs.on_batch_flush, false);
	err = argus_bpf__attach(p->skel);
	if (!err)
		err = attach_entries(p, o.all_entries);
	if (err) {
		seterr(errbuf, errlen,
		       "argus: attaching the raw tracepoints failed (%s): %s",
		       strerror(-err), libbpf_why());
		goto fail;
	}
	if (!o.no_sampler && open_sampler(p, o.sample_hz, errbuf, errlen))
		goto fail;

	/* rb first: a drain reads it before rb_spill (argus.bpf.c "the two
	 * rings") */
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.rb), rb_sample, p, NULL);
	err = p->rb ? ring_buffer__add(p->rb, bpf_map__fd(p->skel->maps.rb_spill),
				       spill_sample, p) : -errno;
	if (err) {
		seterr(errbuf, errlen, "argus: mapping the ring buffers failed: %s",
		       strerror(-err));
		goto fail;
	}
	if (map_batch_first(p)) {
		seterr(errbuf, errlen, "argus: mapping the batch timestamps failed: %s",
		       strerror(errno));
		goto fail;
	}
	return p;

fail:
	argus_probe__close(p);
	return NULL;
}

/* ---- batches ------------------------------------------------------------ */
static int map_batch_first(struct argus_probe *p)
{
	const struct bpf_map *m = p->skel->maps.batch_first;
	size_t len = (size_t)bpf_map__max_entries(m) * sizeof(uint64_t);
	long page = sysconf(_SC_PAGESIZE);
	void *v;

	/* each ring's consumer and producer positions (its first two pages),
	 * read-only beside libbpf's own mapping */
	for (int r = 0; r < 2; r++) {
		const struct bpf_map *ring = r ? p->skel->maps.rb_spill : p->skel->maps.rb;

		v = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, bpf_map__fd(ring), 0);
		if (v == MAP_FAILED)
			return -1;
		p->pos[r].pages = v;
		p->pos[r].consumer = v;
		p->pos[r].producer = (const unsigned long *)((const char *)v + page);
	}

	len = (len + page - 1) / page * page;
	v = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(m), 0);
	if (v == MAP_FAILED)
		return -1;
	p->batch_first = v;
	p->batch_first_len = len;
	p->nfirst = p->ncpus < (int)bpf_map__max_entries(m) ? p->ncpus
							     : (int)bpf_map__max_entries(m);
	return 0;
}

/* bpf_ktime_get_ns() and CLOCK_MONOTONIC read one timekeeper, but through
 * different paths (the fast NMI-safe copy, the vDSO): their readings may
 * differ by a little.  The horizon stays this far behind our clock. */
#define HORIZON_SLACK_NS 100000ull

void argus_probe__horizon(const struct argus_probe *p, struct argus_horizon *out)
{
	struct timespec ts;
	uint64_t h;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* The clock read must happen before the loads below: RDTSC is not
	 * ordered with later loads without a fence.  A 0 read after it means
	 * the batch's locked publish came later, hence its records too. */
	__asm__ volatile("lfence" ::: "memory");
	h = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - HORIZON_SLACK_NS;
	for (int cpu = 0; cpu < p->nfirst; cpu++) {
		uint64_t f = p->batch_first[cpu];

		if (f && f < h)
			h = f;
	}
	/* Read last: a flushed batch cleared its slot after its output
	 * advanced the producer, and a record reserved directly took its
	 * timestamp after reserving, so everything before h is below pos,
	 * in whichever ring it went to. */
	out->ts = h;
	for (int r = 0; r < 2; r++)
		out->pos[r] = __atomic_load_n(p->pos[r].producer, __ATOMIC_ACQUIRE);
}

bool argus_probe__drained(const struct argus_probe *p, const struct argus_horizon *h)
{
	for (int r = 0; r < 2; r++)
		if (__atomic_load_n(p->pos[r].consumer, __ATOMIC_ACQUIRE) < h->pos[r])
			return false;
	return true;
}

uint64_t argus_probe__spilled(const struct argus_probe *p)
{
	return p->spilled;
}

int argus_probe__draining(const struct argus_probe *p)
{
	return p->draining;
}

bool argus_probe__spill_pending(const struct argus_probe *p)
{
	return __atomic_load_n(p->pos[1].consumer, __ATOMIC_ACQUIRE) <
	       __atomic_load_n(p->pos[1].producer, __ATOMIC_ACQUIRE);
}

/* Runs on_batch_flush on one CPU; 1 when that CPU's batch was busy. */
static int flush_cpu(struct argus_probe *p, int cpu)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (__u32)cpu);
	int err = bpf_prog_test_run_opts(bpf_program__fd(p->skel->progs.on_batch_flush), &o);

	if (err)
		return -errno;
	return o.retval == 1;
}

int argus_probe__flush_batches(struct argus_probe *p, uint64_t older_than)
{
	int flushed = 0;

	for (int cpu = 0; cpu < p->nfirst; cpu++) {
		uint64_t f = p->batch_first[cpu];
		int r = 0;

		if (!f || f >= older_than)
			continue;
		/* busy: that CPU is inside an append (a few hundred ns) */
		for (int tries = 0; tries < 3 && (r = flush_cpu(p, cpu)) == 1; tries++)
			;
		if (r == 1)
			continue;  /* still busy: the next run tries again */
		if (r < 0)
			continue;  /* offline now (ENXIO), or a kernel without test
				    * runs on a CPU: it flushes when full, old or idle */
		flushed++;
	}
	return flushed;
}

uint64_t argus_probe__batch_first(const struct argus_probe *p, int cpu)
{
	return cpu >= 0 && cpu < p->nfirst ? p->batch_first[cpu] : 0;
}

/* Records still in a batch that could not be flushed (its CPU went
 * offline): read from the map, and counted lost on their CPU, never
 * dropped silently. */
static void count_leftovers(struct argus_probe *p)
{
	size_t vsz = bpf_map__value_size(p->skel->maps.batch);
	uint8_t *v = calloc(p->ncpus, vsz);
	uint64_t *lost = calloc(p->ncpus, sizeof(*lost));
	uint32_t zero = 0;
	int fd_b = bpf_map__fd(p->skel->maps.batch), fd_l = bpf_map__fd(p->skel->maps.lost);

	if (v && lost && !bpf_map_lookup_elem(fd_b, &zero, v) &&
	    !bpf_map_lookup_elem(fd_l, &zero, lost)) {
		for (int cpu = 0; cpu < p->ncpus; cpu++)
			lost[cpu] += ((const struct ae_batch *)(v + (size_t)cpu * vsz))->count;
		bpf_map_update_elem(fd_l, &zero, lost, BPF_ANY);
	}
	free(v);
	free(lost);
}

int argus_probe__stop(struct argus_probe *p)
{
	int left = 0;

	/* no program runs after this returns but the flush program */
	drop_enter_links(p);
	if (p->sample_links) {
		for (int i = 0; i < p->ncpus; i++) {
			bpf_link__destroy(p->sample_links[i]);
			p->sample_links[i] = NULL;
		}
	}
	argus_bpf__detach(p->skel);
	/* A program that was running on another CPU during the detach may
	 * still append; it ends within microseconds.  Flush until every batch
	 * reads empty. */
	for (int round = 0; round < 20; round++) {
		int e = argus_probe__flush_batches(p, UINT64_MAX);

		if (e < 0)
			return e;
		left = 0;
		for (int cpu = 0; cpu < p->nfirst; cpu++)
			left += p->batch_first[cpu] != 0;
		if (!left)
			break;
		usleep(1000);
	}
	if (left)
		count_leftovers(p);
	return left;
}

/* ---- drain -------------------------------------------------------------- */
int argus_probe__drain(struct argus_probe *p, argus_probe_cb cb, void *ctx)
{
	int n;

	p->cb = cb;
	p->cb_ctx = ctx;
	n = ring_buffer__consume(p->rb);
	p->cb = NULL;
	return n;
}

int argus_probe__poll(struct argus_probe *p, int timeout_ms, argus_probe_cb cb, void *ctx)
{
	struct epoll_event ev;
	int n;

	p->cb = cb;
	p->cb_ctx = ctx;
	/* Wait, then drain every ring in order: ring_buffer__poll() would
	 * drain only the rings that woke it, rb_spill before the rest of rb. */
	n = epoll_wait(ring_buffer__epoll_fd(p->rb), &ev, 1, timeout_ms);
	if (n < 0) {
		p->cb = NULL;
		return -errno;  /* -EINTR on a signal */
	}
	n = ring_buffer__consume(p->rb);
	p->cb = NULL;
	return n;
}

int argus_probe__lost(struct argus_probe *p, uint64_t *per_cpu, int ncpu)
{
	uint64_t *v;
	uint32_t zero = 0;
	int i, err;

	v = calloc(p->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.lost), &zero, v);
	if (err) {
		err = -errno;
		free(v);
		return err;
	}
	for (i = 0; i < ncpu && i < p->ncpus; i++)
		per_cpu[i] = v[i];
	free(v);
	return p->ncpus;
}

int argus_probe__ncpus(const struct argus_probe *p)
{
	return p->ncpus;
}

int argus_probe__watch_prog_fd(const struct argus_probe *p)
{
	return bpf_program__fd(p->skel->progs.on_watch);
}

int argus_probe__watch_map_fd(const struct argus_probe *p)
{
	return bpf_map__fd(p->skel->maps.hw_watches);
}

/* BPF_LOG_STATS's last lines, per program: "verification time N usec" and
 * "processed N insns (limit 1000000) ...". */
#define STATS_LOG_BYTES 4096

int argus_probe__verifier_stats(const struct argus_probe_opts *user_opts,
				argus_verifier_fn fn, void *ctx,
				char *errbuf, size_t errlen)
{
	struct argus_probe_opts o;
	struct argus_bpf *skel;
	struct bpf_program *prog;
	char *logs;
	int err, n = 0, i = 0;

	if (errbuf && errlen)
		errbuf[0] = 0;
	if (probe_opts(user_opts, &o, errbuf, errlen))
		return -EINVAL;
	skel = open_configured(&o, errbuf, errlen);
	if (!skel)
		return -EINVAL;
	bpf_object__for_each_program(prog, skel->obj)
		n++;
	logs = calloc((size_t)n, STATS_LOG_BYTES);
	if (!logs) {
		argus_bpf__destroy(skel);
		seterr(errbuf, errlen, "argus: out of memory");
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		bpf_program__set_log_level(prog, 4);    /* BPF_LOG_STATS */
		bpf_program__set_log_buf(prog, logs + (size_t)i++ * STATS_LOG_BYTES,
					 STATS_LOG_BYTES);
	}
	err = argus_bpf__load(skel);
	if (err)
		seterr(errbuf, errlen, "argus: the kernel rejected the BPF programs (%s): %s",
		       strerror(-err), libbpf_why());
	i = 0;
	bpf_object__for_each_program(prog, skel->obj) {
		const char *log = logs + (size_t)i++ * STATS_LOG_BYTES;
		const char *t = strstr(log, "verification time "),
			   *q = strstr(log, "processed ");
		unsigned long long usec = 0, insns = 0;

		if (err)
			break;
		if (!bpf_program__autoload(prog))
			continue;
		if (t)
			sscanf(t, "verification time %llu", &usec);
		if (q)
			sscanf(q, "processed %llu", &insns);
		fn(ctx, bpf_program__name(prog), insns, usec);
	}
	free(logs);
	argus_bpf__destroy(skel);
	return err;
}

void argus_probe__close(struct argus_probe *p)
{
	int i;

	if (!p)
		return;
	if (p->batch_first)
		munmap((void *)p->batch_first, p->batch_first_len);
	for (i = 0; i < 2; i++)
		if (p->pos[i].pages)
			munmap(p->pos[i].pages, 2 * sysconf(_SC_PAGESIZE));
	ring_buffer__free(p->rb);
	drop_enter_links(p);
	if (p->sample_links) {
		for (i = 0; i < p->ncpus; i++)
			bpf_link__destroy(p->sample_links[i]);
		free(p->sample_links);
	}
	argus_bpf__destroy(p->skel);
	free(p);
}
