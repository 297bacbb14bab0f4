/* test_tracegen.c - the synthetic trace generator (tests/gen): every
 * helper's records come back from the reader field by field with their
 * tasks resolvable; bad input is refused; and argus-gen (path in argv[1])
 * writes exactly N events that are consistent: a task runs on one CPU at a
 * time, every waking's target is switched in later, syscalls pair up, a
 * pipe never gives more bytes than were written to it, and the mix is the
 * documented one; with --ui-hang, its ground truth is what the trace shows.
 * Files live in a private temp dir removed at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "run_gen.h"
#include "tracegen.h"

static char dir[64];
static const char *gen_path;

static const char *tpath(const char *name)
{
	static char p[8][384];  /* dir + any d_name */
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlink(tpath(e->d_name));
	if (d)
		closedir(d);
	rmdir(dir);
}

static struct argus_trace *open_trace(const char *path)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(path, &err);

	if (!t)
		fprintf(stderr, "  open %s: %s\n", path, err.msg);
	CHECK(t != NULL);
	return t;
}

/* ---------------------------------------------------------------------
 * Every helper, field by field.
 */
struct want {
	struct argus_event ev;          /* stack/str/str2 unused */
	const char *str, *str2;
	const uint64_t *ips;
	uint32_t nips;
	bool has_stack;
};

static struct want W[64];
static size_t NW;

static void want(uint64_t ts, uint16_t cpu, uint8_t ctx, uint16_t type,
		 uint32_t tid, uint32_t pid, const uint64_t f[ARGUS_NFIELDS],
		 const char *str, const char *str2, const uint64_t *ips,
		 uint32_t nips, bool has_stack)
{
	struct want *w = &W[NW++];

	memset(w, 0, sizeof(*w));
	w->ev.ts = ts;
	w->ev.cpu = cpu;
	w->ev.ctx = ctx;
	w->ev.type = type;
	w->ev.tid = tid;
	w->ev.pid = pid;
	memcpy(w->ev.f, f, sizeof(w->ev.f));
	w->str = str;
	w->str2 = str2;
	w->ips = ips;
	w->nips = nips;
	w->has_stack = has_stack;
}

#define F(...) ((const uint64_t[ARGUS_NFIELDS]){ __VA_ARGS__ })
#define U64(x) ((uint64_t)(int64_t)(x))

static bool same(const struct argus_trace *t, const struct argus_event *ev,
		 const struct want *w, size_t i)
{
	const char *s;
	const uint64_t *ips;
	uint32_t nr;
	bool ok = true;

#define FAIL(...) do { fprintf(stderr, "  event %zu (type %u): ", i, w->ev.type); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); ok = false; } while (0)
	if (ev->ts != w->ev.ts || ev->cpu != w->ev.cpu || ev->ctx != w->ev.ctx ||
	    ev->type != w->ev.type || ev->tid != w->ev.tid || ev->pid != w->ev.pid)
		FAIL("header ts %llu cpu %u ctx %u type %u tid %u pid %u",
		     (unsigned long long)ev->ts, ev->cpu, ev->ctx, ev->type, ev->tid, ev->pid);
	for (int k = 0; k < ARGUS_NFIELDS; k++)
		if (ev->f[k] != w->ev.f[k])
			FAIL("f[%d] = %#llx, want %#llx", k, (unsigned long long)ev->f[k],
			     (unsigned long long)w->ev.f[k]);
	s = argus_trace__string(t, ev->str);
	if (!w->str != !ev->str || (w->str && (!s || strcmp(s, w->str))))
		FAIL("str '%s', want '%s'", s ? s : "(none)", w->str ? w->str : "(none)");
	s = argus_trace__string(t, ev->str2);
	if (!w->str2 != !ev->str2 || (w->str2 && (!s || strcmp(s, w->str2))))
		FAIL("str2 '%s', want '%s'", s ? s : "(none)", w->str2 ? w->str2 : "(none)");
	if (w->has_stack != !!ev->stack)
		FAIL("stack id %u", ev->stack);
	else if (w->has_stack &&
		 (argus_trace__stack(t, ev->stack, &ips, &nr) || nr != w->nips ||
		  (nr && memcmp(ips, w->ips, nr * sizeof(*ips)))))
		FAIL("stack content differs");
#undef FAIL
	return ok;
}

static void test_every_helper_round_trips(void)
{
	static const uint64_t ips3[] = { 0x7f0000011a01b, 0x555555555123, 0x7f0000029d90 };
	static const uint64_t ips5[] = { 0x555555556007, 0x555555557005, 0x555555558005,
					 0x555555559005, 0x7f0000029d90 };
	static const uint64_t raw_ips[] = { 1, 2 };
	const char *path = tpath("helpers.argus");
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4, .chunk_events = 8 };
	struct argus_error err = { 0 };
	struct argus_tracegen *g = argus_tracegen__open(path, &o, &err);
	const uint64_t timer = 0xffffc90000193d10ull, fn = 0xffffffff811a2b30ull;
	const uint64_t rd[6] = { 4, 0x7ffd1000, 4096, 0, 0, 0 };
	const uint64_t wr[6] = { 5, 0x7ffd2000, 100, 0, 0, 0 };
	struct argus_event raw;
	const struct argus_tracegen_stats *gs;

	NW = 0;
	CHECK(g != NULL);
	if (!g) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_EQ(argus_tracegen__task(g, 100, 100, 1, "server"), 0);
	CHECK_EQ(argus_tracegen__task(g, 101, 100, 1, "server-w1"), 0);
	CHECK_EQ(argus_tracegen__task(g, 200, 200, 1, "client"), 0);
	CHECK_EQ(argus_tracegen__task(g, 31, 31, 2, "ksoftirqd/2"), 0);
	/* a comm longer than the kernel keeps is cut to 15 bytes */
	CHECK_EQ(argus_tracegen__task(g, 300, 300, 1, "a-very-long-command-name"), 0);

	CHECK_EQ(argus_tracegen__run(g, 1000, 0, 100, 100), 0);
	want(1000, 0, AE_CTX_TASK, AE_SWITCH, 0, 0, F(100, 100, 0, U64(-1), 0, 0, 0, 0),
	     "server", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sys_enter(g, 1100, 0, 100, 100, SYS_read, rd), 0);
	want(1100, 0, AE_CTX_TASK, AE_SYS_ENTER, 100, 100,
	     F(SYS_read, 4, 0x7ffd1000, 4096, 0, 0, 0, 0), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__block(g, 1200, 0, 100, 100, SYS_read, 4, AE_OBJ_PIPE,
				       60001, 0), 0);
	want(1200, 0, AE_CTX_TASK, AE_SWITCH, 100, 100,
	     F(0, 0, 1, SYS_read, 4, AE_OBJ_PIPE, 60001, 0), "swapper/0", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__run(g, 1300, 1, 200, 200), 0);
	want(1300, 1, AE_CTX_TASK, AE_SWITCH, 0, 0, F(200, 200, 0, U64(-1), 0, 0, 0, 0),
	     "client", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sys_enter(g, 1400, 1, 200, 200, SYS_write, wr), 0);
	want(1400, 1, AE_CTX_TASK, AE_SYS_ENTER, 200, 200,
	     F(SYS_write, 5, 0x7ffd2000, 100, 0, 0, 0, 0), NULL, NULL, NULL, 0, false);
	/* target_cpu: where 100 last ran (cpu 0), not the waker's cpu */
	CHECK_EQ(argus_tracegen__wake(g, 1500, 1, 200, 200, 100, 100), 0);
	want(1500, 1, AE_CTX_TASK, AE_WAKING, 200, 200, F(100, 100, 0, AE_VEC_NONE, 0),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sys_exit(g, 1600, 1, 200, 200, SYS_write, 100, 5,
					  AE_OBJ_PIPE, 60001, 0), 0);
	want(1600, 1, AE_CTX_TASK, AE_SYS_EXIT, 200, 200,
	     F(SYS_write, 100, 5, AE_OBJ_PIPE, 60001, 0), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__run(g, 1700, 0, 100, 100), 0);
	want(1700, 0, AE_CTX_TASK, AE_SWITCH, 0, 0, F(100, 100, 0, U64(-1), 0, 0, 0, 0),
	     "server", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sys_exit(g, 1800, 0, 100, 100, SYS_read, -EINTR, 4,
					  AE_OBJ_PIPE, 60001, 0), 0);
	want(1800, 0, AE_CTX_TASK, AE_SYS_EXIT, 100, 100,
	     F(SYS_read, U64(-EINTR), 4, AE_OBJ_PIPE, 60001, 0), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__hrt_start(g, 1900, 1, AE_CTX_TASK, 200, 200, timer, fn,
					   4999, 1, 200), 0);
	want(1900, 1, AE_CTX_TASK, AE_HRT_START, 200, 200, F(timer, fn, 4999, 1, 200),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sw_stack(g, 2000, 1, 200, 200, ARGUS_TG_INTERRUPTIBLE,
					  SYS_nanosleep, 3000, AE_OBJ_NONE, 0, 0, 0, 0,
					  ips3, 3), 0);
	want(2000, 1, AE_CTX_TASK, AE_SWITCH, 200, 200,
	     F(0, 0, 1, SYS_nanosleep, 3000, 0, 0, 0), "swapper/1", NULL, ips3, 3, true);
	/* expiry on the idle CPU: expire + hard-irq waking, same ts */
	CHECK_EQ(argus_tracegen__timer_wake(g, 5000, 1, 0, 0, timer, 200, 200), 0);
	want(5000, 1, AE_CTX_HARDIRQ, AE_HRT_EXPIRE, 0, 0, F(timer, fn, 0, 0, 200),
	     NULL, NULL, NULL, 0, false);
	want(5000, 1, AE_CTX_HARDIRQ, AE_WAKING, 0, 0,
	     F(200, 200, 1, AE_VEC_HRTIMER, timer), NULL, NULL, NULL, 0, false);
	/* the timer is no longer armed */
	CHECK_EQ(argus_tracegen__timer_wake(g, 5001, 1, 0, 0, timer, 200, 200), -ENOENT);
	CHECK_EQ(argus_tracegen__irq_entry(g, 5100, 2, 0, 0, 24), 0);
	want(5100, 2, AE_CTX_HARDIRQ, AE_IRQ_ENTRY, 0, 0, F(24, 0), NULL, NULL, NULL, 0, false);
	/* a task never switched in: target_cpu is the waking's own cpu */
	CHECK_EQ(argus_tracegen__waking(g, 5150, 2, AE_CTX_HARDIRQ, 0, 0, 31, 31, 24, 0), 0);
	want(5150, 2, AE_CTX_HARDIRQ, AE_WAKING, 0, 0, F(31, 31, 2, 24, 0),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__irq_exit(g, 5200, 2, 0, 0, 24, 1), 0);
	want(5200, 2, AE_CTX_HARDIRQ, AE_IRQ_EXIT, 0, 0, F(24, 1), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__softirq_entry(g, 5300, 0, 100, 100, 3), 0);
	want(5300, 0, AE_CTX_SOFTIRQ, AE_SOFTIRQ_ENTRY, 100, 100, F(3, 0), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__softirq_exit(g, 5400, 0, 100, 100, 3), 0);
	want(5400, 0, AE_CTX_SOFTIRQ, AE_SOFTIRQ_EXIT, 100, 100, F(3, 0), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__wq_start(g, 5500, 2, 31, 31, 0xffff888100a00040ull, 0xffffffff8152c3d0ull), 0);
	want(5500, 2, AE_CTX_TASK, AE_WQ_START, 31, 31, F(0xffff888100a00040ull, 0xffffffff8152c3d0ull),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__wq_end(g, 5600, 2, 31, 31, 0xffff888100a00040ull, 0xffffffff8152c3d0ull), 0);
	want(5600, 2, AE_CTX_TASK, AE_WQ_END, 31, 31, F(0xffff888100a00040ull, 0xffffffff8152c3d0ull),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__fork(g, 5700, 0, 100, 100, 102, 102, "server"), 0);
	want(5700, 0, AE_CTX_TASK, AE_FORK, 100, 100, F(102, 102, 0), "server", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__wakeup_new(g, 5800, 0, 100, 100, 102, 102, "server"), 0);
	want(5800, 0, AE_CTX_TASK, AE_WAKEUP_NEW, 100, 100, F(102, 102, 0), "server", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__exec(g, 5900, 1, 102, 102, 102, "gzip", "/usr/bin/gzip"), 0);
	want(5900, 1, AE_CTX_TASK, AE_EXEC, 102, 102, F(102), "gzip", "/usr/bin/gzip", NULL, 0, false);
	/* a new thread: its parent is its process's parent */
	CHECK_EQ(argus_tracegen__fork(g, 5950, 0, 100, 100, 103, 100, "server"), 0);
	want(5950, 0, AE_CTX_TASK, AE_FORK, 100, 100, F(103, 100, 0), "server", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sample(g, 6000, 0, 100, 100, ips5, 5), 0);
	want(6000, 0, AE_CTX_HARDIRQ, AE_SAMPLE, 100, 100, F(0), NULL, NULL, ips5, 5, true);
	CHECK_EQ(argus_tracegen__mark(g, 6100, 3, 0, 0, "phase 2\nbegins"), 0);
	want(6100, 3, AE_CTX_TASK, AE_MARK, 0, 0, F(0), "phase 2\nbegins", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__rename(g, 6200, 1, 102, 102, "gzip-9"), 0);
	want(6200, 1, AE_CTX_TASK, AE_RENAME, 102, 102, F(0), "gzip-9", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__exit(g, 6300, 1, 102, 102, 256, 1), 0);
	want(6300, 1, AE_CTX_TASK, AE_EXIT, 102, 102, F(256, 1), NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__sw(g, 6400, 1, 102, 102, ARGUS_TG_DEAD, SYS_exit_group, 0,
				    AE_OBJ_NONE, 0, 0, 0, 0), 0);
	want(6400, 1, AE_CTX_TASK, AE_SWITCH, 102, 102,
	     F(0, 0, 0x80, SYS_exit_group, 0, 0, 0, 0), "swapper/1", NULL, NULL, 0, false);
	/* free: the comm comes from the task table */
	CHECK_EQ(argus_tracegen__free(g, 6500, 3, AE_CTX_SOFTIRQ, 0, 0, 102, 102), 0);
	want(6500, 3, AE_CTX_SOFTIRQ, AE_FREE, 0, 0, F(102, 102, 0), "gzip-9", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__hrt_start(g, 6600, 0, AE_CTX_TASK, 100, 100, timer + 0x90,
					   fn, 9000, 0, 100), 0);
	want(6600, 0, AE_CTX_TASK, AE_HRT_START, 100, 100, F(timer + 0x90, fn, 9000, 0, 100),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__hrt_cancel(g, 6700, 0, AE_CTX_TASK, 100, 100, timer + 0x90,
					    fn, 0, 0, 100), 0);
	want(6700, 0, AE_CTX_TASK, AE_HRT_CANCEL, 100, 100, F(timer + 0x90, fn, 0, 0, 100),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__hrt_expire(g, 6800, 3, AE_CTX_SOFTIRQ, 0, 0, 77, 88, -5,
					    2, 300), 0);
	want(6800, 3, AE_CTX_SOFTIRQ, AE_HRT_EXPIRE, 0, 0, F(77, 88, U64(-5), 2, 300),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__preempt(g, 6900, 0, 100, 100, 101, 100), 0);
	want(6900, 0, AE_CTX_TASK, AE_SWITCH, 100, 100, F(101, 100, 0, U64(-1), 0, 0, 0, 0),
	     "server-w1", NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__lost(g, 2, 7), 0);
	/* a task never declared: no comm, and not in the task table */
	CHECK_EQ(argus_tracegen__sw(g, 7000, 2, 0, 0, 0, -1, 0, 0, 0, 0, 999, 999), 0);
	want(7000, 2, AE_CTX_TASK, AE_SWITCH, 0, 0, F(999, 999, 0, U64(-1), 0, 0, 0, 0),
	     NULL, NULL, NULL, 0, false);
	CHECK_EQ(argus_tracegen__run(g, 7100, 3, 300, 300), 0);
	want(7100, 3, AE_CTX_TASK, AE_SWITCH, 0, 0, F(300, 300, 0, U64(-1), 0, 0, 0, 0),
	     "a-very-long-com", NULL, NULL, 0, false);
	/* the escape hatch: an event type this build does not know */
	memset(&raw, 0, sizeof(raw));
	raw.ts = 7200;
	raw.cpu = 3;
	raw.ctx = AE_CTX_NMI;
	raw.type = 27;       /* unused: the work items own 22..27 and use 22..25 */
	raw.tid = 300;
	raw.pid = 300;
	for (int k = 0; k < ARGUS_NFIELDS; k++)
		raw.f[k] = 0x1111111111111111ull * (uint64_t)(k + 1);
	raw.str = 12345;  /* ignored: ids come from the content */
	CHECK_EQ(argus_tracegen__event(g, &raw, "s1", "s2", raw_ips, 2), 0);
	want(7200, 3, AE_CTX_NMI, 27, 300, 300, raw.f, "s1", "s2", raw_ips, 2, true);
	/* a sample without a stack */
	CHECK_EQ(argus_tracegen__sample(g, 7300, 3, 300, 300, NULL, 0), 0);
	want(7300, 3, AE_CTX_HARDIRQ, AE_SAMPLE, 300, 300, F(0), NULL, NULL, NULL, 0, false);

	gs = argus_tracegen__stats(g);
	CHECK_EQ(gs->events, NW);
	CHECK_EQ(gs->type[AE_SWITCH], 9);
	CHECK_EQ(gs->type[AE_WAKING], 3);
	CHECK_EQ(gs->last_ts, 7300);
	CHECK_EQ(argus_tracegen__close(g), 0);

	struct argus_trace *t = open_trace(path);
	struct argus_event ev;
	size_t i = 0, bad = 0;
	int rc;

	if (!t)
		return;
	CHECK_EQ(argus_trace__stats(t)->chunks, (NW + 7) / 8);
	CHECK_EQ(argus_trace__stats(t)->ncpus, 4);
	CHECK_EQ(argus_trace__stats(t)->cpu[2].lost, 7);
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		const struct argus_task *k;

		if (i < NW && !same(t, &ev, &W[i], i))
			bad++;
		/* every declared task an event names resolves once its
		 * chunk has been read */
		if (ev.tid && ev.tid != 999) {
			k = argus_trace__task(t, ev.tid);
			CHECK(k && k->pid == ev.pid);
		}
		if (ev.type == AE_SWITCH && ev.f[0] && ev.f[0] != 999)
			CHECK(argus_trace__task(t, (uint32_t)ev.f[0]) != NULL);
		if (ev.type == AE_WAKING)
			CHECK(argus_trace__task(t, (uint32_t)ev.f[0]) != NULL);
		i++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(i, NW);
	CHECK_EQ(bad, 0);
	CHECK_EQ(argus_trace__stats(t)->out_of_order, 0);

	const struct argus_task *k = argus_trace__task(t, 100);
	CHECK(k && k->pid == 100 && k->ppid == 1 &&
	      !strcmp(argus_trace__string(t, k->comm), "server"));
	k = argus_trace__task(t, 102);   /* renamed, then exited and freed */
	CHECK(k && k->pid == 102 && k->ppid == 100 &&
	      !strcmp(argus_trace__string(t, k->comm), "gzip-9"));
	k = argus_trace__task(t, 103);   /* a thread of 100 */
	CHECK(k && k->pid == 100 && k->ppid == 1);
	k = argus_trace__task(t, 31);
	CHECK(k && k->ppid == 2 && !strcmp(argus_trace__string(t, k->comm), "ksoftirqd/2"));
	k = argus_trace__task(t, 300);
	CHECK(k && !strcmp(argus_trace__string(t, k->comm), "a-very-long-com"));
	CHECK(argus_trace__task(t, 999) == NULL);
	CHECK(argus_trace__task(t, 0) == NULL);
	argus_trace__close(t);
}

static void test_bad_input_is_refused_and_not_sticky(void)
{
	const char *path = tpath("bad.argus");
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 2 };
	struct argus_error err = { 0 };
	struct argus_tracegen *g;
	struct argus_event ev;
	int rc;

	o.zlevel = 10;
	CHECK(argus_tracegen__open(path, &o, &err) == NULL);
	CHECK_EQ(err.code, -EINVAL);
	o.zlevel = 0;
	o.ncpus = 257;
	CHECK(argus_tracegen__open(path, &o, &err) == NULL);
	o.ncpus = 2;
	CHECK(argus_tracegen__open(tpath("no/such/dir.argus"), &o, &err) == NULL);
	CHECK(err.msg[0] != 0);
	CHECK_EQ(argus_tracegen__close(NULL), 0);

	g = argus_tracegen__open(path, &o, &err);
	CHECK(g != NULL);
	if (!g)
		return;
	CHECK_EQ(argus_tracegen__task(g, 10, 10, 1, "t"), 0);
	CHECK_EQ(argus_tracegen__run(g, 100, 0, 10, 10), 0);
	/* older than the last event, on any CPU */
	CHECK_EQ(argus_tracegen__mark(g, 99, 1, 0, 0, "late"), -EINVAL);
	CHECK_EQ(argus_tracegen__run(g, 99, 0, 10, 10), -EINVAL);
	CHECK_EQ(argus_tracegen__timer_wake(g, 99, 0, 0, 0, 1, 10, 10), -EINVAL);
	/* a CPU past ncpus, a bad ctx */
	CHECK_EQ(argus_tracegen__mark(g, 200, 2, 0, 0, "cpu"), -EINVAL);
	CHECK_EQ(argus_tracegen__lost(g, 2, 1), -EINVAL);
	CHECK_EQ(argus_tracegen__waking(g, 200, 0, 4, 0, 0, 10, 10, AE_VEC_NONE, 0), -EINVAL);
	/* what the format cannot store */
	memset(&ev, 0, sizeof(ev));
	ev.ts = 200;
	ev.type = AE_NONE;
	CHECK_EQ(argus_tracegen__event(g, &ev, NULL, NULL, NULL, 0), -EINVAL);
	ev.type = AE_MARK;
	ev.f[2] = 1;  /* a mark has two fields (uid, has_uid) */
	CHECK_EQ(argus_tracegen__event(g, &ev, "x", NULL, NULL, 0), -EINVAL);
	ev.type = AE_TYPE_MAX;
	ev.f[2] = 0;
	CHECK_EQ(argus_tracegen__event(g, &ev, NULL, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(argus_tracegen__timer_wake(g, 200, 0, 0, 0, 0xdead, 10, 10), -ENOENT);
	/* none of that stuck: equal ts on another CPU is fine */
	CHECK_EQ(argus_tracegen__mark(g, 100, 1, 0, 0, "same ts"), 0);
	CHECK_EQ(argus_tracegen__stats(g)->events, 2);
	CHECK_EQ(argus_tracegen__close(g), 0);

	struct argus_trace *t = open_trace(path);
	size_t n = 0;

	while (t && (rc = argus_trace__next(t, &ev, &err)) > 0)
		n++;
	CHECK_EQ(n, 2);
	argus_trace__close(t);
}

static void test_chunks_are_cut_by_count_bytes_and_flush(void)
{
	const char *path = tpath("cut.argus");
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 1,
					 .chunk_events = 1000, .chunk_bytes = 8192,
					 .zlevel = -1 };
	struct argus_error err = { 0 };
	struct argus_tracegen *g = argus_tracegen__open(path, &o, &err);
	uint64_t ts = 1;
	int rc;

	CHECK(g != NULL);
	if (!g)
		return;
	/* ~17 raw bytes each: the byte limit cuts every ~500 events, the
	 * count limit alone would cut twice */
	for (int i = 0; i < 2000; i++)
		CHECK_EQ(argus_tracegen__sys_exit(g, ts++, 0, 1000 + i % 7, 1000, SYS_read,
						  4096, 3, AE_OBJ_FILE, 0x123456789ull, 0), 0);
	CHECK(argus_tracegen__stats(g)->chunks >= 3);
	CHECK_EQ(argus_tracegen__flush(g), 0);
	CHECK_EQ(argus_tracegen__flush(g), 0);  /* empty: no chunk */
	uint64_t chunks = argus_tracegen__stats(g)->chunks;
	/* lost records alone still make a chunk */
	CHECK_EQ(argus_tracegen__lost(g, 0, 5), 0);
	CHECK_EQ(argus_tracegen__close(g), 0);

	struct argus_trace *t = open_trace(path);
	struct argus_event ev;
	size_t n = 0;

	if (!t)
		return;
	CHECK_EQ(argus_trace__stats(t)->chunks, chunks + 1);
	CHECK_EQ(argus_trace__stats(t)->cpu[0].lost, 5);
	while ((rc = argus_trace__next(t, &ev, &err)) > 0)
		n++;
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, 2000);
	argus_trace__close(t);
}

/* ---------------------------------------------------------------------
 * argus-gen: a consistency checker over a whole trace.
 */
enum { TS_UNKNOWN, TS_RUNNING, TS_RUNNABLE, TS_BLOCKED, TS_DEAD };

struct tstate {
	uint8_t state;
	bool woken;             /* waking / wakeup_new seen, not switched in yet */
	int16_t cpu;            /* running on */
	int64_t sys;            /* syscall in progress, -1 none, -2 unknown */
	uint64_t sys_arg0;
	int64_t block_nr;       /* the syscall it blocked in */
	uint64_t block_arg;
};

struct kv {
	uint64_t key;           /* 0 = empty */
	uint64_t a, b;
};

struct map {
	struct kv *s;
	size_t cap, n;
};

static struct kv *map_find(struct map *m, uint64_t key, size_t *slot)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = (key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1); m->s[i].key;
	     i = (i + 1) & (m->cap - 1))
		if (m->s[i].key == key)
			return &m->s[i];
	*slot = i;
	return NULL;
}

/* The entry for key, inserted (zeroed) if new.  Inserting may move every
 * entry: a pointer from an earlier call is only good until the next insert. */
static struct kv *map_get(struct map *m, uint64_t key)
{
	struct kv *e;
	size_t i = 0;

	if ((e = map_find(m, key, &i)))
		return e;
	if ((m->n + 1) * 2 > m->cap) {
		struct map n = { calloc(m->cap ? m->cap * 2 : 256, sizeof(struct kv)),
				 m->cap ? m->cap * 2 : 256, 0 };

		for (size_t k = 0; k < m->cap; k++) {
			size_t j = 0;

			if (!m->s[k].key)
				continue;
			map_find(&n, m->s[k].key, &j);
			n.s[j] = m->s[k];
			n.n++;
		}
		free(m->s);
		*m = n;
		map_find(m, key, &i);
	}
	m->s[i].key = key;
	m->s[i].a = m->s[i].b = 0;
	m->n++;
	return &m->s[i];
}

struct gen_result {
	uint64_t events;
	uint64_t type[AE_TYPE_MAX];
	uint64_t errors;        /* consistency violations */
	uint64_t pipe_bytes, unix_bytes, futex_wakes, timer_wakes;
};

/* argus-gen -o out extra..., its report on our stdout. */
static int run_gen(const char *out, const char *const *extra)
{
	return run_gen_to(gen_path, out, extra, NULL);
}

/* make ts[0..tid] exist */
static void grow_states(struct tstate **ts, size_t *nts, uint32_t tid)
{
	size_t n;

	if (tid < *nts)
		return;
	n = ((size_t)tid + 1024) * 2;
	*ts = realloc(*ts, n * sizeof(**ts));
	for (size_t i = *nts; i < n; i++)
		(*ts)[i] = (struct tstate){ TS_UNKNOWN, false, -1, -2, 0, -1, 0 };
	*nts = n;
}

#define BAD(...) do { if (r->errors++ < 10) { fprintf(stderr, "  event %llu ts %llu: ", \
	(unsigned long long)r->events, (unsigned long long)ev.ts); fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); } } while (0)

static void check_gen_trace(const char *path, struct gen_result *r)
{
	struct argus_trace *t = open_trace(path);
	struct argus_error err = { 0 };
	struct argus_event ev;
	struct tstate *ts = NULL;
	size_t nts = 0;
	int32_t cur[256];
	uint64_t last_expire[256][2];
	int irq_open[256], si_open[256];
	struct map pipes = { 0 }, socks = { 0 }, timers = { 0 };
	uint64_t prev_ts = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!t)
		return;
	for (int c = 0; c < 256; c++) {
		cur[c] = -1;
		irq_open[c] = si_open[c] = -1;
		last_expire[c][0] = last_expire[c][1] = 0;
	}
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		uint32_t tid = ev.tid;
		uint16_t c = ev.cpu;
		struct tstate *s;
		const struct argus_task *k;

		r->events++;
		if (ev.type < AE_TYPE_MAX)
			r->type[ev.type]++;
		if (ev.ts < prev_ts)
			BAD("time goes back");
		prev_ts = ev.ts;
		if (tid && (!(k = argus_trace__task(t, tid)) || k->pid != ev.pid))
			BAD("tid %u does not resolve to pid %u", tid, ev.pid);
		/* every record's current task is the one running on its CPU */
		if (cur[c] >= 0 && (uint32_t)cur[c] != tid)
			BAD("cpu %u runs %d, record says tid %u (type %u)", c, cur[c], tid, ev.type);
		grow_states(&ts, &nts, tid);
		if (ev.type == AE_SWITCH || ev.type == AE_WAKING || ev.type == AE_FORK ||
		    ev.type == AE_WAKEUP_NEW)
			grow_states(&ts, &nts, (uint32_t)ev.f[0]);
		s = &ts[tid];
		switch (ev.type) {
		case AE_SWITCH: {
			uint32_t nt = (uint32_t)ev.f[ARGUS_F_SW_NEXT_TID];
			int64_t st = (int64_t)ev.f[ARGUS_F_SW_PREV_STATE];
			int64_t nr = (int64_t)ev.f[ARGUS_F_SW_SYS_NR];
			struct tstate *n;

			if (tid) {
				if (s->state != TS_UNKNOWN && (s->state != TS_RUNNING || s->cpu != c))
					BAD("tid %u switched out of cpu %u but not running there", tid, c);
				s->cpu = -1;
				s->state = st & ARGUS_TG_DEAD ? TS_DEAD : st ? TS_BLOCKED : TS_RUNNABLE;
				s->block_nr = nr;
				s->block_arg = ev.f[ARGUS_F_SW_SYS_ARG];
				if (st && nr >= 0 && s->sys != -2 && s->sys != nr)
					BAD("tid %u blocks in syscall %lld but entered %lld", tid,
					    (long long)nr, (long long)s->sys);
				if (st && !(st & ARGUS_TG_DEAD) && nr >= 0 && s->sys == -2)
					BAD("tid %u blocks in syscall %lld it never entered", tid,
					    (long long)nr);
			}
			n = &ts[nt];
			if (nt) {
				if (!argus_trace__task(t, nt))
					BAD("next tid %u does not resolve", nt);
				if (n->state == TS_RUNNING)
					BAD("tid %u switched in on cpu %u while running on %d", nt, c, n->cpu);
				if (n->state == TS_DEAD)
					BAD("dead tid %u switched in", nt);
				if (n->state == TS_BLOCKED && !n->woken)
					BAD("blocked tid %u switched in without a waking", nt);
				n->state = TS_RUNNING;
				n->cpu = (int16_t)c;
				n->woken = false;
			}
			cur[c] = (int32_t)nt;
			break;
		}
		case AE_WAKING: {
			uint32_t tg = (uint32_t)ev.f[ARGUS_F_WK_TARGET_TID];
			struct tstate *x;

			x = &ts[tg];
			if (!tg || !argus_trace__task(t, tg))
				BAD("waking of tid %u that does not resolve", tg);
			if (x->woken)
				BAD("second waking of tid %u before it ran", tg);
			if (x->state != TS_BLOCKED && x->state != TS_UNKNOWN)
				BAD("waking of tid %u in state %u", tg, x->state);
			if (ev.ctx == AE_CTX_TASK && x->block_nr == SYS_futex &&
			    (ev.pid != ev.f[ARGUS_F_WK_TARGET_PID] || s->sys != SYS_futex ||
			     s->sys_arg0 != x->block_arg))
				BAD("futex waiter %u woken by %u outside a futex wake on its address",
				    tg, tid);
			if (ev.ctx == AE_CTX_TASK && x->block_nr == SYS_futex)
				r->futex_wakes++;
			if (ev.f[ARGUS_F_WK_VECTOR] == AE_VEC_HRTIMER) {
				if (ev.ctx != AE_CTX_HARDIRQ || !ev.f[ARGUS_F_WK_HRTIMER] ||
				    last_expire[c][0] != ev.f[ARGUS_F_WK_HRTIMER] ||
				    last_expire[c][1] != tg)
					BAD("timer waking of %u does not follow the expiry of its timer", tg);
				r->timer_wakes++;
			}
			x->woken = true;
			x->state = TS_RUNNABLE;
			break;
		}
		case AE_WAKEUP_NEW: case AE_FORK: {
			uint32_t ch = (uint32_t)ev.f[ARGUS_F_TK_CHILD_TID];

			if (!argus_trace__task(t, ch))
				BAD("child %u does not resolve", ch);
			if (ev.type == AE_WAKEUP_NEW) {
				ts[ch].woken = true;
				ts[ch].state = TS_RUNNABLE;
				ts[ch].sys = -1;
			}
			break;
		}
		case AE_SYS_ENTER:
			if (s->sys >= 0)
				BAD("tid %u enters %lld inside %lld", tid, (long long)ev.f[0],
				    (long long)s->sys);
			s->sys = (int64_t)ev.f[ARGUS_F_SE_NR];
			s->sys_arg0 = ev.f[ARGUS_F_SE_ARG0];
			break;
		case AE_SYS_EXIT: {
			int64_t nr = (int64_t)ev.f[ARGUS_F_SX_NR];
			int64_t ret = (int64_t)ev.f[ARGUS_F_SX_RET];
			uint64_t obj = ev.f[ARGUS_F_SX_OBJ], peer = ev.f[ARGUS_F_SX_PEER];

			if (s->sys != nr)
				BAD("tid %u exits %lld without entering it (in %lld)", tid,
				    (long long)nr, (long long)s->sys);
			s->sys = -1;
			if (ev.f[ARGUS_F_SX_OBJ_KIND] == AE_OBJ_PIPE && ret > 0) {
				struct kv *p = map_get(&pipes, obj);

				if (nr == SYS_write)
					p->a += (uint64_t)ret;
				else if (nr == SYS_read)
					p->b += (uint64_t)ret;
				if (p->b > p->a)
					BAD("pipe %llu: %llu bytes read, %llu written", (unsigned long long)obj,
					    (unsigned long long)p->b, (unsigned long long)p->a);
				if (nr == SYS_read)
					r->pipe_bytes += (uint64_t)ret;
			}
			if (ev.f[ARGUS_F_SX_OBJ_KIND] == AE_OBJ_UNIX && ret > 0) {
				if (nr == SYS_sendmsg) {
					map_get(&socks, obj << 32 | peer)->a += (uint64_t)ret;
				} else if (nr == SYS_recvmsg || nr == SYS_recvfrom) {
					/* received on (obj, peer) = sent on (peer, obj) */
					struct kv *tx, *rx;

					map_get(&socks, peer << 32 | obj);
					rx = map_get(&socks, obj << 32 | peer);
					tx = map_get(&socks, peer << 32 | obj);  /* no insert */
					rx->b += (uint64_t)ret;
					if (rx->b > tx->a)
						BAD("unix %llu<-%llu: %llu bytes received, %llu sent",
						    (unsigned long long)obj, (unsigned long long)peer,
						    (unsigned long long)rx->b, (unsigned long long)tx->a);
					r->unix_bytes += (uint64_t)ret;
				}
			}
			break;
		}
		case AE_EXIT:
			if (s->sys != SYS_exit_group && s->sys != SYS_exit)
				BAD("tid %u exits outside exit/exit_group", tid);
			break;
		case AE_HRT_START: {
			struct kv *x = map_get(&timers, ev.f[ARGUS_F_HT_TIMER]);

			if (ev.ctx != AE_CTX_TASK || ev.f[ARGUS_F_HT_OWNER_TID] != tid)
				BAD("hrtimer started outside its owner's task context");
			if (x->a)
				BAD("hrtimer %#llx started twice", (unsigned long long)x->key);
			x->a = ev.f[ARGUS_F_HT_OWNER_TID];
			break;
		}
		case AE_HRT_EXPIRE: case AE_HRT_CANCEL: {
			struct kv *x = map_get(&timers, ev.f[ARGUS_F_HT_TIMER]);

			if (!x->a || x->a != ev.f[ARGUS_F_HT_OWNER_TID])
				BAD("hrtimer %#llx expires/cancels unarmed", (unsigned long long)x->key);
			x->a = 0;
			if (ev.type == AE_HRT_EXPIRE) {
				last_expire[c][0] = ev.f[ARGUS_F_HT_TIMER];
				last_expire[c][1] = ev.f[ARGUS_F_HT_OWNER_TID];
			} else if (ev.ctx != AE_CTX_TASK) {
				BAD("hrtimer cancel outside task context");
			}
			break;
		}
		case AE_IRQ_ENTRY: case AE_SOFTIRQ_ENTRY: {
			int *o = ev.type == AE_IRQ_ENTRY ? &irq_open[c] : &si_open[c];

			if (*o >= 0)
				BAD("nested irq/softirq entry on cpu %u", c);
			*o = (int)ev.f[ARGUS_F_IRQ_VECTOR];
			break;
		}
		case AE_IRQ_EXIT: case AE_SOFTIRQ_EXIT: {
			int *o = ev.type == AE_IRQ_EXIT ? &irq_open[c] : &si_open[c];

			if (*o != (int)ev.f[ARGUS_F_IRQ_VECTOR])
				BAD("irq/softirq exit %llu does not match entry %d on cpu %u",
				    (unsigned long long)ev.f[0], *o, c);
			*o = -1;
			break;
		}
		default:
			break;
		}
	}
	if (rc < 0)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_EQ(rc, 0);
	CHECK_EQ(argus_trace__stats(t)->out_of_order, 0);
	/* the end: nobody is left woken but never run */
	for (size_t i = 0; i < nts; i++)
		if (ts[i].woken && r->errors++ < 10)
			fprintf(stderr, "  tid %zu woken but never switched in\n", i);
	free(ts);
	free(pipes.s);
	free(socks.s);
	free(timers.s);
	argus_trace__close(t);
}

static double pct(const struct gen_result *r, uint64_t n)
{
	return 100.0 * (double)n / (double)r->events;
}

static void test_argus_gen_is_exact_consistent_and_mixed(void)
{
	static const char *const args[] = { "--events", "200000", "--seed", "3", NULL };
	const char *path = tpath("gen200k.argus");
	struct gen_result r;
	double sys, sw, wk, irq, hrt, smp;

	CHECK_EQ(run_gen(path, args), 0);
	check_gen_trace(path, &r);
	CHECK_EQ(r.events, 200000);
	CHECK_EQ(r.errors, 0);
	sys = pct(&r, r.type[AE_SYS_ENTER] + r.type[AE_SYS_EXIT]);
	sw = pct(&r, r.type[AE_SWITCH]);
	wk = pct(&r, r.type[AE_WAKING]);
	irq = pct(&r, r.type[AE_IRQ_ENTRY] + r.type[AE_IRQ_EXIT] +
		  r.type[AE_SOFTIRQ_ENTRY] + r.type[AE_SOFTIRQ_EXIT]);
	hrt = pct(&r, r.type[AE_HRT_START] + r.type[AE_HRT_EXPIRE] + r.type[AE_HRT_CANCEL]);
	smp = pct(&r, r.type[AE_SAMPLE]);
	fprintf(stderr, "  mix: syscalls %.1f%% switch %.1f%% waking %.1f%% irq %.1f%% "
		"hrtimer %.1f%% sample %.1f%%; %llu futex and %llu timer wakes, "
		"%llu pipe and %llu unix bytes\n", sys, sw, wk, irq, hrt, smp,
		(unsigned long long)r.futex_wakes, (unsigned long long)r.timer_wakes,
		(unsigned long long)r.pipe_bytes, (unsigned long long)r.unix_bytes);
	/* the documented mix (~45/20/15/8/5/2), with room for the model */
	CHECK(sys > 38 && sys < 55);
	CHECK(sw > 15 && sw < 26);
	CHECK(wk > 10 && wk < 20);
	CHECK(irq > 5 && irq < 12);
	CHECK(hrt > 3 && hrt < 8);
	CHECK(smp > 1 && smp < 3.5);
	CHECK(r.type[AE_SYS_ENTER] >= r.type[AE_SYS_EXIT]);
	CHECK(r.type[AE_HRT_EXPIRE] > 0 && r.type[AE_HRT_CANCEL] > 0);
	CHECK(r.type[AE_FORK] > 0 && r.type[AE_FORK] == r.type[AE_WAKEUP_NEW]);
	CHECK(r.type[AE_EXEC] > 0 && r.type[AE_EXIT] > 0 && r.type[AE_FREE] > 0);
	CHECK(r.futex_wakes > 1000 && r.timer_wakes > 1000);
	CHECK(r.pipe_bytes > 0 && r.unix_bytes > 0);
}

static void test_argus_gen_other_shapes_stay_consistent(void)
{
	static const char *const a1[] = { "--events", "60001", "--seed", "7", "--cpus", "4",
					  "--procs", "7", "--threads-per-proc", "3",
					  "--chunk-events", "5000", "--zlevel", "0", NULL };
	static const char *const a2[] = { "--events", "20000", "--cpus", "1", "--procs", "1",
					  "--threads-per-proc", "2", NULL };
	static const char *const a3[] = { "--events", "3000", NULL };  /* winds down at once */
	static const char *const *const runs[] = { a1, a2, a3 };
	static const uint64_t want_n[] = { 60001, 20000, 3000 };

	for (int i = 0; i < 3; i++) {
		const char *path = tpath("shape.argus");
		struct gen_result r;

		CHECK_EQ(run_gen(path, runs[i]), 0);
		check_gen_trace(path, &r);
		CHECK_EQ(r.events, want_n[i]);
		CHECK_EQ(r.errors, 0);
		CHECK(r.type[AE_SWITCH] > 0 && r.type[AE_WAKING] > 0);
	}
}

static void test_argus_gen_is_deterministic_per_seed(void)
{
	static const char *const s5[] = { "--events", "30000", "--seed", "5", NULL };
	static const char *const s6[] = { "--events", "30000", "--seed", "6", NULL };
	struct argus_trace *a, *b, *c;
	struct argus_error err = { 0 };
	struct argus_event x, y, z;
	size_t diff_same = 0, diff_other = 0, n = 0;

	CHECK_EQ(run_gen(tpath("s5a.argus"), s5), 0);
	CHECK_EQ(run_gen(tpath("s5b.argus"), s5), 0);
	CHECK_EQ(run_gen(tpath("s6.argus"), s6), 0);
	a = open_trace(tpath("s5a.argus"));
	b = open_trace(tpath("s5b.argus"));
	c = open_trace(tpath("s6.argus"));
	while (a && b && c && argus_trace__next(a, &x, &err) > 0 &&
	       argus_trace__next(b, &y, &err) > 0 && argus_trace__next(c, &z, &err) > 0) {
		n++;
		if (x.ts != y.ts || x.type != y.type || x.tid != y.tid ||
		    memcmp(x.f, y.f, sizeof(x.f)))
			diff_same++;
		if (x.ts != z.ts || x.type != z.type || memcmp(x.f, z.f, sizeof(x.f)))
			diff_other++;
	}
	CHECK_EQ(n, 30000);
	CHECK_EQ(diff_same, 0);
	CHECK(diff_other > 0);
	argus_trace__close(a);
	argus_trace__close(b);
	argus_trace__close(c);
}

/* A KEY=VALUE number of argus-gen's ground truth, 0 if missing. */
static uint64_t gt_num(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == '=')
			v = strtoull(line + n + 1, NULL, 0);
	if (f)
		fclose(f);
	return v;
}

/* --ui-hang: the trace stays consistent, and the ground truth is what the
 * trace shows: the UI thread's only gap of 2 s or more between a poll
 * return and the next poll call is [HANG_START_NS, HANG_END_NS], after 5
 * or more normal inputs, and in it dbserver waits 2 s or more in futex on
 * the table lock until db_vacuum wakes it. */
static void test_argus_gen_ui_hang_matches_its_ground_truth(void)
{
	static const char *const a1[] = { "--events", "250000", "--cpus", "1", "--procs", "2",
					  "--threads-per-proc", "2", "--ui-hang", NULL };
	static const char *const a2[] = { "--events", "900000", "--seed", "2", "--ui-hang", NULL };
	static const char *const *const runs[] = { a1, a2 };
	static const uint64_t want_n[] = { 250000, 900000 };

	for (int i = 0; i < 2; i++) {
		const char *path = tpath("uihang.argus"), *gt = tpath("uihang.gt");
		struct argus_error err = { 0 };
		struct argus_event ev;
		struct argus_trace *t;
		struct gen_result r;
		uint64_t ui, db, vac, lock, back = 0, gap_from = 0, gap_to = 0, lock_from = 0;
		uint32_t returns = 0, gaps = 0, lock_waits = 0;

		CHECK_EQ(run_gen_to(gen_path, path, runs[i], gt), 0);
		check_gen_trace(path, &r);
		CHECK_EQ(r.events, want_n[i]);
		CHECK_EQ(r.errors, 0);
		ui = gt_num(gt, "UI_TID");
		db = gt_num(gt, "DB_TID");
		vac = gt_num(gt, "VACUUM_TID");
		lock = gt_num(gt, "TABLE_LOCK_ADDR");
		CHECK(ui && db && vac && lock);
		CHECK(gt_num(gt, "NORMAL_BEFORE_HANG") >= 5);
		t = open_trace(path);
		while (t && argus_trace__next(t, &ev, &err) > 0) {
			int64_t nr = (int64_t)ev.f[ARGUS_F_SX_NR];  /* = ARGUS_F_SE_NR */

			if (ev.ctx != AE_CTX_TASK)
				continue;
			if (ev.tid == ui && ev.type == AE_SYS_EXIT && nr == SYS_poll) {
				back = ev.ts;
				returns++;
			} else if (ev.tid == ui && ev.type == AE_SYS_ENTER && nr == SYS_poll &&
				   back && ev.ts - back >= 2000000000ull) {
				gaps++;
				gap_from = back;
				gap_to = ev.ts;
				CHECK(returns >= 6);
			} else if (ev.type == AE_SWITCH && ev.tid == db &&
				   (int64_t)ev.f[ARGUS_F_SW_SYS_NR] == SYS_futex &&
				   ev.f[ARGUS_F_SW_SYS_ARG] == lock) {
				lock_from = ev.ts;
			} else if (ev.type == AE_WAKING && ev.f[ARGUS_F_WK_TARGET_TID] == db &&
				   lock_from) {
				CHECK_EQ(ev.tid, vac);
				CHECK(ev.ts - lock_from >= 2000000000ull);
				lock_waits++;
				lock_from = 0;
			}
		}
		CHECK_EQ(gaps, 1);
		CHECK_EQ(gap_from, gt_num(gt, "HANG_START_NS"));
		CHECK_EQ(gap_to, gt_num(gt, "HANG_END_NS"));
		CHECK_EQ(lock_waits, 1);
		argus_trace__close(t);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-argus-gen\n", argv[0]);
		return 2;
	}
	gen_path = argv[1];
	snprintf(dir, sizeof(dir), "/tmp/argus-tg-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_every_helper_round_trips);
	RUN(test_bad_input_is_refused_and_not_sticky);
	RUN(test_chunks_are_cut_by_count_bytes_and_flush);
	RUN(test_argus_gen_is_exact_consistent_and_mixed);
	RUN(test_argus_gen_other_shapes_stay_consistent);
	RUN(test_argus_gen_is_deterministic_per_seed);
	RUN(test_argus_gen_ui_hang_matches_its_ground_truth);
	cleanup();
	return check_report();
}
