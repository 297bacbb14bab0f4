/* test_ring_spill.c - the real BPF programs' two rings (kernel-patch/
 * argus.bpf.c, "the two rings"), loaded into the running kernel with a
 * first ring of 1 MiB: records written while nobody drains overflow it
 * into the spill ring, none is lost, a pinned thread's records come out
 * of the drain in the order it made them (the drain reads the first ring,
 * then the spill ring, and a CPU stays on the spill ring until it is
 * drained, also when a partial drain made room in the first), and once
 * drained the CPU writes to the first ring again.
 * Needs root (exits 77, skipped, without it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_events.h"
#include "bpf_probe.h"
#include "check.h"
#include "probe_pinned.h"

/* write()s to /dev/null of BASE + 1..NWRITES bytes: each exit's return
 * value is its rank (BASE: above what our other calls return, the bpf()
 * calls' fds and the messages' lengths).  An AE_SYS_EXIT is 40-odd bytes
 * in a batch: 60000 of them are ~2.5 MiB, more than the first ring. */
#define BASE 100000
#define NWRITES 60000

struct seen {
	uint32_t pid;
	long n, next, out_of_order;
	long stop_at;           /* > 0: stop the drain once n reaches it */
};

static int count_exits(void *ctx, const void *rec, size_t size)
{
	struct seen *s = ctx;
	const struct ae_sys_exit *e = rec;

	if (size < sizeof(*e) || e->h.type != AE_SYS_EXIT || e->h.pid != s->pid ||
	    e->nr != SYS_write || e->ret <= BASE || e->ret > BASE + NWRITES)
		return 0;
	if (e->ret - BASE != s->next)
		s->out_of_order++;
	s->next = e->ret - BASE + 1;
	s->n++;
	/* negative: libbpf stops consuming (this record counts as taken) */
	return s->stop_at && s->n >= s->stop_at ? -1 : 0;
}

static struct argus_probe *p;
static int devnull;
static char buf[BASE + NWRITES];

static uint64_t lost(void)
{
	uint64_t v[256] = { 0 }, sum = 0;
	int n = argus_probe__lost(p, v, 256);

	for (int i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

static void drain_all(struct seen *s)
{
	argus_probe__flush_batches(p, UINT64_MAX);
	while (argus_probe__drain(p, count_exits, s) > 0)
		;
}

static void test_an_undrained_flood_spills_in_order_and_loses_nothing(void)
{
	struct seen s = { .pid = (uint32_t)getpid(), .next = 1 };
	uint64_t lost0;

	drain_all(&s);
	lost0 = lost();
	s.n = 0;
	s.next = 1;
	for (long i = 1; i <= NWRITES - 100; i++)
		if (write(devnull, buf, BASE + (size_t)i) != BASE + i)
			break;
	/* a partial drain: room in the first ring, the spill ring still
	 * full of this CPU's older records; the next ones must follow those */
	argus_probe__flush_batches(p, UINT64_MAX);
	s.stop_at = 2000;
	argus_probe__drain(p, count_exits, &s);
	/* the rest of the batch that held the 2000th comes too
	 * (batch_unpack.c), then the consume stops */
	CHECK(s.n >= 2000 && s.n < 10000);
	s.stop_at = 0;
	for (long i = NWRITES - 99; i <= NWRITES; i++)
		if (write(devnull, buf, BASE + (size_t)i) != BASE + i)
			break;
	drain_all(&s);
	/* precondition: the first ring did overflow */
	CHECK(argus_probe__spilled(p) > 0);
	CHECK_EQ(lost() - lost0, 0);
	CHECK_EQ(s.n, NWRITES);
	CHECK_EQ(s.out_of_order, 0);
}

static void test_a_drained_spill_ring_sends_a_cpu_back_to_the_first(void)
{
	struct seen s = { .pid = (uint32_t)getpid(), .next = 1 };
	uint64_t spilled;

	drain_all(&s);
	spilled = argus_probe__spilled(p);
	s.n = 0;
	s.next = 1;
	/* a few KiB: fits the first ring, which the drain emptied */
	for (long i = 1; i <= 100; i++)
		CHECK_EQ(write(devnull, buf, BASE + (size_t)i), BASE + i);
	drain_all(&s);
	CHECK_EQ(s.n, 100);
	CHECK_EQ(argus_probe__spilled(p), spilled);
}

int main(void)
{
	struct argus_probe_opts o = { .sz = sizeof(o), .ringbuf_mb = 1, .spill_mb = 64 };
	int cpu, rc = probe_pinned_open(&o, &p, &cpu, &devnull);

	if (rc)
		return rc;
	RUN(test_an_undrained_flood_spills_in_order_and_loses_nothing);
	RUN(test_a_drained_spill_ring_sends_a_cpu_back_to_the_first);
	argus_probe__close(p);
	return check_report();
}
