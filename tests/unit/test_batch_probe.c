/* test_batch_probe.c - the real BPF programs' batches (kernel-patch/
 * argus.bpf.c, "batches"), loaded into the running kernel: a syscall exit
 * waits in its CPU's batch, where the horizon says so, until
 * argus_probe__flush_batches() moves it into the ring, and after
 * argus_probe__stop() no batch holds anything.  Needs root (exits 77,
 * skipped, without it).  The thread is pinned so that its records go to
 * one CPU's batch; each attempt starts from an empty batch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "argus_events.h"
#include "bpf_probe.h"
#include "check.h"
#include "probe_pinned.h"

#define MARK 4321

struct look {
	uint32_t pid;
	int found;
	uint64_t ts;
};

static int find_mark(void *ctx, const void *rec, size_t size)
{
	struct look *l = ctx;
	const struct ae_sys_exit *e = rec;

	if (size >= sizeof(*e) && e->h.type == AE_SYS_EXIT && e->h.pid == l->pid &&
	    e->ret == MARK) {
		l->found++;
		l->ts = e->h.ts;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct argus_probe *p;
static int devnull, cpu;
static char buf[MARK];

static void test_an_exit_waits_in_its_batch_until_flushed(void)
{
	struct argus_horizon h = { 0 };
	struct look l = { .pid = (uint32_t)getpid() };
	uint64_t before = 0, after = 0, first;
	int tries;

	for (tries = 0; tries < 5; tries++) {
		argus_probe__flush_batches(p, UINT64_MAX);  /* an empty batch to start from */
		argus_probe__drain(p, find_mark, &l);
		l.found = 0;
		before = now_ns();
		if (write(devnull, buf, MARK) != MARK)
			break;
		after = now_ns();
		argus_probe__drain(p, find_mark, &l);
		argus_probe__horizon(p, &h);
		/* precondition: nothing flushed the batch meanwhile (a batch
		 * 2 ms old flushes itself at its next append: this thread
		 * waited that long, preempted) */
		if (!l.found && after - before < 1000000)
			break;
		fprintf(stderr, "attempt %d: the batch moved on its own (found %d, %llu ns)\n",
			tries, l.found, (unsigned long long)(after - before));
	}
	CHECK(tries < 5);
	CHECK_EQ(l.found, 0);
	/* this CPU's batch published its first timestamp, taken inside the
	 * write, and the horizon stops there (or earlier, at another CPU's) */
	first = argus_probe__batch_first(p, cpu);
	CHECK(first >= before && first <= after);
	CHECK(h.ts <= first);

	CHECK(argus_probe__flush_batches(p, UINT64_MAX) >= 1);
	argus_probe__drain(p, find_mark, &l);
	CHECK_EQ(l.found, 1);
	CHECK(l.ts >= first && l.ts <= after);
	first = argus_probe__batch_first(p, cpu);
	CHECK(first == 0 || first > after);
	/* with every batch flushed (a batch started since begins later)
	 * and the clock past the horizon's slack, it is past the write */
	usleep(1000);
	argus_probe__flush_batches(p, UINT64_MAX);
	argus_probe__horizon(p, &h);
	CHECK(h.ts > after);
}

static void test_flushing_only_old_batches_leaves_a_young_one(void)
{
	struct look l = { .pid = (uint32_t)getpid() };
	int tries;

	for (tries = 0; tries < 5; tries++) {
		argus_probe__flush_batches(p, UINT64_MAX);
		argus_probe__drain(p, find_mark, &l);
		l.found = 0;
		if (write(devnull, buf, MARK) != MARK)
			break;
		/* older than 10 s: ours is not */
		argus_probe__flush_batches(p, now_ns() - 10000000000ull);
		argus_probe__drain(p, find_mark, &l);
		if (!l.found)
			break;
	}
	CHECK(tries < 5);
	CHECK_EQ(l.found, 0);
	argus_probe__flush_batches(p, now_ns());
	argus_probe__drain(p, find_mark, &l);
	CHECK_EQ(l.found, 1);
}

static void test_stop_leaves_no_batch_behind(void)
{
	struct look l = { .pid = (uint32_t)getpid() };

	argus_probe__flush_batches(p, UINT64_MAX);
	argus_probe__drain(p, find_mark, &l);
	l.found = 0;
	CHECK_EQ(write(devnull, buf, MARK), MARK);
	CHECK_EQ(argus_probe__stop(p), 0);
	argus_probe__drain(p, find_mark, &l);
	CHECK_EQ(l.found, 1);
	/* detached: no record comes any more */
	l.found = 0;
	CHECK_EQ(write(devnull, buf, MARK), MARK);
	argus_probe__flush_batches(p, UINT64_MAX);
	argus_probe__drain(p, find_mark, &l);
	CHECK_EQ(l.found, 0);
}

int main(void)
{
	struct argus_probe_opts o = { .sz = sizeof(o) };
	int rc = probe_pinned_open(&o, &p, &cpu, &devnull);

	if (rc)
		return rc;
	RUN(test_an_exit_waits_in_its_batch_until_flushed);
	RUN(test_flushing_only_old_batches_leaves_a_young_one);
	RUN(test_stop_leaves_no_batch_behind);
	argus_probe__close(p);
	return check_report();
}
