/* page_touch.c - what a fresh page of memory costs on this machine, for
 * the graph build, which writes ~1 GiB of fresh arrays for a 20 M-event
 * trace (docs/benchmarks.md, session 24).
 *
 *   page_touch [MIB]      (default 512)
 *
 * Prints, per 4 KiB page, in ns: the kernel populating it
 * (madvise(MADV_POPULATE_WRITE), what gvec.h and gbig_malloc() do), the
 * program's first store to a populated page, a second store (the peer:
 * a mapped, warm TLB-missing page), and a first store that faults the
 * page in, on a second mapping.  Then the same first store on a mapping
 * advised MADV_HUGEPAGE (THP is "madvise" here).  Ratios to the second
 * store are what carry over between runs; the machine is shared. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *map(size_t sz)
{
	char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("page_touch: mmap");
		exit(1);
	}
	return p;
}

/* one store per page; ns per page */
static double touch(volatile char *p, size_t sz, char v)
{
	double t0 = now();

	for (size_t i = 0; i < sz; i += 4096)
		p[i] = v;
	return (now() - t0) / (double)(sz / 4096) * 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 512;
	size_t sz = mib << 20, huge = 2u << 20;
	double t0, pop, first, second, fault, thp;
	char *p, *q, *h;

	if (!mib || mib > 16384) {
		fprintf(stderr, "usage: page_touch [MIB]  (1-16384, default 512)\n");
		return 2;
	}
	p = map(sz);
	t0 = now();
	if (madvise(p, sz, MADV_POPULATE_WRITE))
		perror("page_touch: MADV_POPULATE_WRITE");
	pop = (now() - t0) / (double)(sz / 4096) * 1e9;
	first = touch(p, sz, 1);
	second = touch(p, sz, 2);
	q = map(sz);
	fault = touch(q, sz, 1);
	h = map(sz + huge);
	h = (char *)(((uintptr_t)h + huge - 1) & ~(uintptr_t)(huge - 1));
	if (madvise(h, sz, MADV_HUGEPAGE))
		perror("page_touch: MADV_HUGEPAGE");
	thp = touch(h, sz, 1);
	printf("%zu MiB, ns per 4 KiB page: populate %.0f, first store after it %.0f, "
	       "second store %.0f, first store faulting %.0f, first store THP %.0f\n",
	       mib, pop, first, second, fault, thp);
	printf("over the second store: populate + first %.1fx, faulting %.1fx, THP %.1fx\n",
	       (pop + first) / second, fault / second, thp / second);
	return 0;
}
