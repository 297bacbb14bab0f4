/* test_stack_capture - the collector's per-process maps cache
 * (collector/stack_capture.h): a forked child takes its parent's mappings,
 * so the stacks of a child that is gone before the collector could read
 * /proc/CHILD/maps can still be symbolized, and a server forking a worker
 * per request does not pay a maps read per worker.  Real /proc, a real
 * child process; no BPF (the stack tails are built here). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "stack_capture.h"

struct count {
	uint64_t ip;
	int maps, hits;
	uint64_t min_ts;        /* the oldest date of a mapping listed */
};

static void count_map(void *ctx, uint32_t pid, uint64_t ts, uint64_t start, uint64_t end,
		      uint64_t pgoff, const char *path, const uint8_t *build_id,
		      size_t build_id_len)
{
	struct count *c = ctx;

	(void)pid; (void)pgoff; (void)path; (void)build_id; (void)build_id_len;
	if (!c->maps || ts < c->min_ts)
		c->min_ts = ts;
	c->maps++;
	c->hits += c->ip >= start && c->ip < end;
}

static struct count maps_of(struct stack_capture *sc, uint32_t pid, uint64_t ip)
{
	struct count c = { .ip = ip };

	stack_capture__maps(sc, pid, count_map, &c);
	return c;
}

/* A one-frame stack tail at ip, as the BPF side appends it, dated ts. */
static int resolve_at_ts(struct stack_capture *sc, uint32_t pid, uint64_t ip, uint64_t ts)
{
	struct { struct ae_ustack us; uint64_t ips[1]; } t;
	uint64_t out[4];

	memset(&t, 0, sizeof(t));
	t.us.nr_ips = 1;
	t.us.ip = ip;
	t.ips[0] = ip;
	return stack_capture__resolve(sc, pid, ts, &t.us, sizeof(t), out, 4);
}

static int resolve_at(struct stack_capture *sc, uint32_t pid, uint64_t ip)
{
	return resolve_at_ts(sc, pid, ip, 1000);
}

static pid_t gone_child(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

/* A stack_capture that has read our own maps (a stack at ts 1000), and,
 * when child is given, a child that has exited; NULL (after a failed
 * CHECK) if either could not be had. */
static struct stack_capture *with_own_maps(uint64_t ip, pid_t *child, struct count *own)
{
	struct stack_capture *sc = stack_capture__new(false);

	CHECK(sc != NULL);
	if (child) {
		*child = gone_child();
		CHECK(*child > 0);
	}
	if (!sc || (child && *child <= 0)) {
		stack_capture__free(sc);
		return NULL;
	}
	CHECK_EQ(resolve_at(sc, (uint32_t)getpid(), ip), 1);
	*own = maps_of(sc, (uint32_t)getpid(), ip);
	CHECK(own->maps > 0);
	CHECK_EQ(own->hits, 1);   /* our own text holds ip */
	return sc;
}

static void test_a_forked_child_inherits_the_parents_maps(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	pid_t child;
	struct count pc, cc;
	struct stack_capture *sc = with_own_maps(ip, &child, &pc);

	if (!sc)
		return;

	/* without the fork seen: the child is gone, its maps unreadable */
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);
	cc = maps_of(sc, (uint32_t)child, ip);
	CHECK_EQ(cc.maps, 0);

	/* with it: the parent's, taken at the child's first stack, a copy
	 * that outlives the parent's entry */
	stack_capture__inherit(sc, (uint32_t)getpid(), (uint32_t)child, 2000);
	CHECK_EQ(maps_of(sc, (uint32_t)child, ip).maps, 0);    /* not yet */
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);
	stack_capture__forget(sc, (uint32_t)getpid());
	cc = maps_of(sc, (uint32_t)child, ip);
	CHECK_EQ(cc.maps, pc.maps);
	CHECK_EQ(cc.hits, 1);

	/* nothing known of the parent any more: nothing to inherit */
	stack_capture__forget(sc, (uint32_t)child);
	stack_capture__chunk_cut(sc);
	stack_capture__chunk_cut(sc);
	stack_capture__inherit(sc, (uint32_t)getpid(), (uint32_t)child, 2000);
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);
	CHECK_EQ(maps_of(sc, (uint32_t)child, ip).maps, 0);
	stack_capture__free(sc);
}

/* Maps the parent read after the fork may be another layout (dlopen,
 * exec) or another process that reused its pid: the child takes no copy
 * of them.  Here the parent's maps are read at ts 1000 and the fork is
 * dated 500; the child is gone, so it ends with no maps at all. */
static void test_a_child_does_not_copy_maps_read_after_its_fork(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	pid_t child;
	struct count own;
	struct stack_capture *sc = with_own_maps(ip, &child, &own);  /* read at 1000 */

	if (!sc)
		return;
	stack_capture__inherit(sc, (uint32_t)getpid(), (uint32_t)child, 500);
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);
	CHECK_EQ(maps_of(sc, (uint32_t)child, ip).maps, 0);
	stack_capture__free(sc);
}

/* When the pid table fills up (768 of 1024 slots) it starts over, but the
 * maps it held are kept as retired like those of an exited process: the
 * stacks still waiting for a chunk keep their symbols.  Here our own maps
 * are read, then 800 forks of made-up pids fill the table. */
static void test_a_full_table_keeps_the_maps_it_had(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	struct count before;
	struct stack_capture *sc = with_own_maps(ip, NULL, &before);

	if (!sc)
		return;
	for (uint32_t i = 0; i < 800; i++)
		stack_capture__inherit(sc, 1, 0x40000000u + i, 2000);
	CHECK_EQ(maps_of(sc, (uint32_t)getpid(), ip).maps, before.maps);
	CHECK_EQ(maps_of(sc, (uint32_t)getpid(), ip).hits, 1);
	stack_capture__free(sc);
}

/* A child that execs before its first stack (fork + exec, most children)
 * takes no copy: nothing of the parent's is made, retired or listed for
 * it. */
static void test_a_child_that_execs_first_takes_no_copy(void)
{
	struct stack_capture *sc = stack_capture__new(false);
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	pid_t child = gone_child();

	CHECK(sc != NULL);
	CHECK(child > 0);
	if (!sc || child <= 0)
		return;
	CHECK_EQ(resolve_at(sc, (uint32_t)getpid(), ip), 1);
	CHECK(maps_of(sc, (uint32_t)getpid(), ip).maps > 0);
	stack_capture__inherit(sc, (uint32_t)getpid(), (uint32_t)child, 2000);
	stack_capture__forget(sc, (uint32_t)child);             /* exec */
	CHECK_EQ(maps_of(sc, (uint32_t)child, ip).maps, 0);
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);       /* a new image */
	CHECK_EQ(maps_of(sc, (uint32_t)child, ip).maps, 0);     /* gone: unread */
	stack_capture__free(sc);
}

/* The child's copy is dated from the fork, not from the parent's older
 * read: a reader takes, for an event, the newest maps of its pid dated at
 * or before it, so maps dated before the fork could lose to those of a
 * dead process that had the same pid and was read in between. */
static void test_a_forked_childs_maps_are_dated_from_the_fork(void)
{
	struct stack_capture *sc = stack_capture__new(false);
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	pid_t child = gone_child();
	struct count cc;

	CHECK(sc != NULL);
	CHECK(child > 0);
	if (!sc || child <= 0)
		return;
	CHECK_EQ(resolve_at(sc, (uint32_t)getpid(), ip), 1);   /* read at 1000 */
	CHECK_EQ(maps_of(sc, (uint32_t)getpid(), ip).min_ts, 1000);
	stack_capture__inherit(sc, (uint32_t)getpid(), (uint32_t)child, 5000);
	CHECK_EQ(resolve_at(sc, (uint32_t)child, ip), 1);
	cc = maps_of(sc, (uint32_t)child, ip);
	CHECK(cc.maps > 0);
	CHECK_EQ(cc.min_ts, 5000);
	stack_capture__free(sc);
}

/* A process that exits (or execs) keeps its maps listed for the next
 * chunk cuts: its last events may not be in a chunk yet, and a process
 * shorter than a chunk had its stacks unsymbolized before. */
static void test_an_exited_process_keeps_its_maps_for_two_cuts(void)
{
	struct stack_capture *sc = stack_capture__new(false);
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at;
	uint32_t me = (uint32_t)getpid();
	int n;

	CHECK(sc != NULL);
	if (!sc)
		return;
	CHECK_EQ(resolve_at(sc, me, ip), 1);
	n = maps_of(sc, me, ip).maps;
	CHECK(n > 0);
	stack_capture__forget(sc, me);          /* exit */
	CHECK_EQ(maps_of(sc, me, ip).maps, n);
	CHECK_EQ(maps_of(sc, me, ip).hits, 1);
	stack_capture__chunk_cut(sc);
	CHECK_EQ(maps_of(sc, me, ip).maps, n);
	stack_capture__chunk_cut(sc);
	CHECK_EQ(maps_of(sc, me, ip).maps, 0);

	/* exec: the old maps and the new ones, both listed until the cuts */
	CHECK_EQ(resolve_at(sc, me, ip), 1);
	stack_capture__forget(sc, me);
	CHECK_EQ(resolve_at(sc, me, ip), 1);    /* read again */
	CHECK_EQ(maps_of(sc, me, ip).maps, 2 * n);
	stack_capture__chunk_cut(sc);
	stack_capture__chunk_cut(sc);
	CHECK_EQ(maps_of(sc, me, ip).maps, n);
	stack_capture__free(sc);
}

#define MS (1000ull * 1000)

/* Fresh code of a file, as dlopen() maps it: a page of our own executable,
 * executable, at an address nothing held before.  0 if it could not be. */
static uint64_t map_code(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	void *p;

	CHECK(fd >= 0);
	if (fd < 0)
		return 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(p != MAP_FAILED);
	return p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p + 16;
}

/* A process that maps code and runs it at once: the child bignote
 * (tests/e2e/sec_elf_budget.sh) was sampled in fork(), read, then blocked
 * 10 ms later in a page it had just mmap()ed; inside the 100 ms gap its
 * maps were not read again, and that mapping was never seen. */
static void test_code_mapped_just_after_a_read_is_read_at_its_first_stack(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at, code;
	uint32_t me = (uint32_t)getpid();
	struct count own;
	struct stack_capture *sc = with_own_maps(ip, NULL, &own);  /* read at 1000 */

	if (!sc)
		return;
	code = map_code();
	if (code) {
		CHECK_EQ(maps_of(sc, me, code).hits, 0);
		CHECK_EQ(resolve_at_ts(sc, me, code, 1000 + 10 * MS), 1);
		CHECK_EQ(maps_of(sc, me, code).hits, 1);
	}
	stack_capture__free(sc);
}

/* Inside the gap a miss reads at most 4 times per 100 ms: a process
 * mapping new code before every blocking call cannot make the collector
 * read its maps at that rate. */
static void test_reads_inside_the_gap_are_bounded(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at, code = 0;
	uint32_t me = (uint32_t)getpid();
	struct count own;
	struct stack_capture *sc = with_own_maps(ip, NULL, &own);

	if (!sc)
		return;
	for (int i = 1; i <= 5; i++) {
		if (!(code = map_code()))
			break;
		CHECK_EQ(resolve_at_ts(sc, me, code, 1000 + (uint64_t)i * MS), 1);
		CHECK_EQ(maps_of(sc, me, code).hits, i <= 4);
	}
	if (code) {             /* the gap since the last read is over */
		CHECK_EQ(resolve_at_ts(sc, me, code, 1000 + 4 * MS + 101 * MS), 1);
		CHECK_EQ(maps_of(sc, me, code).hits, 1);
	}
	stack_capture__free(sc);
}

/* Code no file mapping holds (a JIT's) misses whatever is read: after a
 * read that did not find its ip, misses wait out the gap again, or every
 * stack of a JIT would read its maps. */
static void test_after_a_read_that_missed_the_gap_holds(void)
{
	uint64_t ip = (uint64_t)(uintptr_t)&resolve_at, code;
	uint32_t me = (uint32_t)getpid();
	struct count own;
	struct stack_capture *sc = with_own_maps(ip, NULL, &own);
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(jit != MAP_FAILED);
	if (!sc || jit == MAP_FAILED) {
		stack_capture__free(sc);
		return;
	}
	CHECK_EQ(resolve_at_ts(sc, me, (uint64_t)(uintptr_t)jit + 16, 1000 + MS), 1);
	code = map_code();
	if (code) {
		CHECK_EQ(resolve_at_ts(sc, me, code, 1000 + 2 * MS), 1);
		CHECK_EQ(maps_of(sc, me, code).hits, 0);       /* the gap holds */
		CHECK_EQ(resolve_at_ts(sc, me, code, 1000 + 102 * MS), 1);
		CHECK_EQ(maps_of(sc, me, code).hits, 1);
	}
	stack_capture__free(sc);
}

int main(void)
{
	RUN(test_a_forked_child_inherits_the_parents_maps);
	RUN(test_a_child_does_not_copy_maps_read_after_its_fork);
	RUN(test_a_full_table_keeps_the_maps_it_had);
	RUN(test_a_child_that_execs_first_takes_no_copy);
	RUN(test_a_forked_childs_maps_are_dated_from_the_fork);
	RUN(test_an_exited_process_keeps_its_maps_for_two_cuts);
	RUN(test_code_mapped_just_after_a_read_is_read_at_its_first_stack);
	RUN(test_reads_inside_the_gap_are_bounded);
	RUN(test_after_a_read_that_missed_the_gap_holds);
	return check_report();
}
