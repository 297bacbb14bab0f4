/* test_gvec.c - graphlib/gvec.h, the graph's one container: a small vector
 * stays on malloc; one that grows past GVEC_MAP_MIN moves once into a
 * 2 MiB-aligned mapping of its own advised for huge pages and never moves
 * again; shrink gives the populated tail back; a refused mapping (an
 * address-space limit, as vm.overcommit_memory=2 would) leaves the vector
 * on realloc with nothing lost; pushes always hand out zeroed elements. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gvec.h"

#define BIG_N ((3 * GVEC_MAP_MIN) / sizeof(uint64_t))  /* 24 MiB of uint64_t */

/* Push n uint64_t one at a time, each i at index i, checking each new
 * slot is zeroed.  Returns the address the vector had when it took its
 * own mapping (NULL if it never did) and sets *moved_after if the array
 * moved after that. */
static void *push_seq(struct gvec *v, uint64_t from, uint64_t n, bool *moved_after,
		      bool *dirty_slot)
{
	void *mapped_at = v->res ? v->p : NULL;

	for (uint64_t i = from; i < from + n; i++) {
		uint64_t *e = gvec_push(v, sizeof(uint64_t));

		if (!e)
			return NULL;
		if (*e)
			*dirty_slot = true;
		*e = i;
		if (v->res && !mapped_at)
			mapped_at = v->p;
		if (mapped_at && v->p != mapped_at)
			*moved_after = true;
	}
	return mapped_at;
}

static bool values_intact(const struct gvec *v, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (GV(*v, uint64_t)[i] != i)
			return false;
	return true;
}

/* The VmFlags line of the mapping that holds addr, from /proc/self/smaps
 * (a mapping's header line is "LO-HI perms ...", its last line VmFlags). */
static bool vma_flags(const void *addr, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, len, "%s", line + 8);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* This process's address space now, in bytes (VmSize), 0 if unknown. */
static uint64_t vm_size(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static void test_small_vector_stays_on_malloc(void)
{
	struct gvec v = { 0 };
	bool moved = false, dirty = false;

	push_seq(&v, 0, 1000, &moved, &dirty);
	CHECK_EQ(v.n, 1000);
	CHECK_EQ(v.res, 0);
	CHECK(!dirty);
	CHECK(values_intact(&v, 1000));
	gvec_free(&v);
	CHECK(v.p == NULL && v.n == 0 && v.cap == 0);
}

static void test_big_vector_moves_once_into_its_own_mapping(void)
{
	struct gvec v = { 0 };
	bool moved = false, dirty = false;
	char flags[512] = "";
	void *at = push_seq(&v, 0, BIG_N, &moved, &dirty);

	CHECK(at != NULL);                      /* it took a mapping */
	CHECK(v.res > 0);
	CHECK(!moved);                          /* ...and never moved after */
	CHECK(!dirty);                          /* every push came zeroed */
	CHECK_EQ(v.n, BIG_N);
	CHECK(values_intact(&v, BIG_N));        /* the copy into it lost nothing */
	CHECK_EQ((uintptr_t)v.p & (GVEC_HUGE - 1), 0);
	/* advised for huge pages: "hg" in the mapping's VmFlags (whether the
	 * kernel found huge pages to back it is its business) */
	CHECK(vma_flags(v.p, flags, sizeof(flags)));
	CHECK(strstr(flags, " hg") != NULL);
	CHECK(strstr(flags, " nr") != NULL);   /* MAP_NORESERVE: address space only */
	gvec_free(&v);
	CHECK(v.p == NULL && v.res == 0 && v.map_bytes == 0);
}

/* shrink sets cap to n and unmaps the populated pages past the 2 MiB
 * page that holds the last element; pushes after it stay in place. */
static void test_shrink_gives_back_the_tail_and_pushes_go_on(void)
{
	struct gvec v = { 0 };
	bool moved = false, dirty = false;
	unsigned char res[1];
	uint64_t n = BIG_N;
	void *at;

	at = push_seq(&v, 0, n, &moved, &dirty);
	CHECK(at != NULL);
	/* drop to a third: the populated pages well past it must go */
	v.n = (uint32_t)(n / 3);
	gvec_shrink(&v, sizeof(uint64_t));
	CHECK_EQ(v.cap, v.n);
	CHECK(v.p == at);
	{
		uint64_t keep = ((uint64_t)v.n * 8 + GVEC_HUGE - 1) & ~(uint64_t)(GVEC_HUGE - 1);
		char *past = (char *)v.p + keep + GVEC_HUGE;

		CHECK(mincore(past, 4096, res) == 0);
		CHECK((res[0] & 1) == 0);       /* not resident any more */
	}
	push_seq(&v, n / 3, n - n / 3, &moved, &dirty);
	CHECK(v.p == at);
	CHECK(!moved);
	CHECK(!dirty);                          /* the given-back pages read zero */
	CHECK(values_intact(&v, n));
	gvec_free(&v);
}

static void test_reserve_takes_the_mapping_up_front(void)
{
	struct gvec v = { 0 };
	bool moved = false, dirty = false;

	CHECK_EQ(gvec_reserve(&v, sizeof(uint64_t), BIG_N), 0);
	CHECK(v.res > 0);
	CHECK_EQ(v.cap, BIG_N);
	CHECK_EQ(v.n, 0);
	void *at = v.p;
	push_seq(&v, 0, BIG_N, &moved, &dirty);
	CHECK(v.p == at);
	CHECK(!dirty);
	CHECK(values_intact(&v, BIG_N));
	CHECK_EQ(gvec_reserve(&v, sizeof(uint64_t), 10), -EINVAL);     /* not empty */
	gvec_free(&v);
	CHECK_EQ(gvec_reserve(&v, sizeof(uint64_t), 100), 0);          /* small: malloc */
	CHECK_EQ(v.res, 0);
	CHECK_EQ(v.cap, 100);
	gvec_free(&v);
}

/* Under an address-space limit the reservation (~32 GiB for 8-byte
 * elements) is refused: the vector must go on growing by realloc, every
 * value kept.  In a child, since the limit is the whole process's. */
static void test_refused_mapping_falls_back_to_realloc(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		/* 1 GiB more than now: room for realloc's 48 MiB, none for
		 * the reservation (under ASan VmSize is terabytes of shadow) */
		uint64_t lim = vm_size() + (1ull << 30);
		struct rlimit rl = { lim, lim };
		struct gvec v = { 0 };
		bool moved = false, dirty = false;
		int bad = 0;

		if (lim == 1ull << 30 || setrlimit(RLIMIT_AS, &rl))
			_exit(3);
		push_seq(&v, 0, BIG_N, &moved, &dirty);
		bad |= v.n != BIG_N;
		bad |= v.res != 0;              /* stayed on malloc */
		bad |= dirty;
		bad |= !values_intact(&v, BIG_N);
		gvec_shrink(&v, sizeof(uint64_t));
		bad |= v.cap != v.n;
		gvec_free(&v);
		_exit(bad ? 1 : 0);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	RUN(test_small_vector_stays_on_malloc);
	RUN(test_big_vector_moves_once_into_its_own_mapping);
	RUN(test_shrink_gives_back_the_tail_and_pushes_go_on);
	RUN(test_reserve_takes_the_mapping_up_front);
	RUN(test_refused_mapping_falls_back_to_realloc);
	return check_report();
}
