/* interpose_put.c - the cost of one recorded event of the interposer
 * (aip_put: clock_gettime, an atomic add, sched_getcpu and one 64-byte
 * slot written seqlock-style into the registered ring), against one
 * uprobe hit on a function of this program, in the same run
 * (bench/interpose_sync.sh; issue 14: at most 50 ns per event).
 *
 * The interposer's ring.c is linked in (not preloaded): its constructor
 * registers a ring with the collector in $ARGUS_RUN_DIR exactly as in a
 * traced app, and aip_put (hidden in the .so) can be called directly.
 *
 * usage: interpose_put [N (2000000)] [REPEATS (5)]
 * Prints:
 *   ring=on|off                 (registered with argusd?)
 *   put <best> ns/event
 *   call <best> ns/call         (the probed function, no probe)
 *   uprobe <best> ns/call hits=H (the same with a uprobe on it, via
 *                                perf_event_open on the uprobe PMU; H is
 *                                the probe's own hit count)
 *   uprobe_error=<why>          instead, when the probe cannot be made
 * One uprobe hit = uprobe - call.
 */

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipose.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile uint64_t sink;

/* the probed function: not inlined, does next to nothing */
__attribute__((noinline, used)) void argus_bench_probed(uint64_t x)
{
	sink += x;
	__asm__ volatile("" ::: "memory");
}

static double best_calls(long n, int reps)
{
	double best = 0;

	for (int r = 0; r < reps; r++) {
		double t0 = now_ns(), ns;

		for (long i = 0; i < n; i++)
			argus_bench_probed((uint64_t)i);
		ns = (now_ns() - t0) / (double)n;
		if (!r || ns < best)
			best = ns;
	}
	return best;
}

/* file offset of fn in its mapping (what a uprobe is placed by) */
static int file_offset(const void *fn, char *path, size_t pathlen, uint64_t *off)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[1024];
	uint64_t a = (uint64_t)(uintptr_t)fn;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		char perm[8], p[768] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %767s", &lo, &hi, perm, &pgoff, p) < 4)
			continue;
		if (a >= lo && a < hi && p[0] == '/') {
			snprintf(path, pathlen, "%s", p);
			*off = a - lo + pgoff;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

static int uprobe_open(const char *path, uint64_t off, const char **why)
{
	struct perf_event_attr at;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type, fd;

	if (!f) {
		*why = "no /sys/bus/event_source/devices/uprobe/type (kernel without CONFIG_UPROBE_EVENTS?)";
		return -1;
	}
	if (fscanf(f, "%d", &type) != 1) {
		fclose(f);
		*why = "unreadable uprobe PMU type";
		return -1;
	}
	fclose(f);
	memset(&at, 0, sizeof(at));
	at.size = sizeof(at);
	at.type = (uint32_t)type;
	at.config1 = (uint64_t)(uintptr_t)path;  /* uprobe_path */
	at.config2 = off;                         /* probe_offset */
	at.sample_period = 1;
	at.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &at, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		*why = strerror(errno);
	return fd;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	static int obj;
	double best = 0, call, up;
	char path[768];
	uint64_t off = 0, hits = 0;
	const char *why = NULL;
	int fd;

	if (n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: interpose_put [N] [REPEATS]\n");
		return 2;
	}
	printf("ring=%s\n", aip_ring ? "on" : "off");
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns(), ns;

		for (long i = 0; i < n; i++)
			aip_put(AIP_MUTEX_WAKE, &obj, 0, 0);
		ns = (now_ns() - t0) / (double)n;
		if (!r || ns < best)
			best = ns;
	}
	printf("put %.2f ns/event\n", best);
	call = best_calls(n, reps);
	printf("call %.2f ns/call\n", call);
	if (file_offset((const void *)argus_bench_probed, path, sizeof(path), &off)) {
		printf("uprobe_error=cannot find this program's mapping\n");
		return 0;
	}
	fd = uprobe_open(path, off, &why);
	if (fd < 0) {
		printf("uprobe_error=perf_event_open(uprobe %s+%#lx): %s\n", path,
		       (unsigned long)off, why);
		return 0;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	up = best_calls(n, reps);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
		hits = 0;
	close(fd);
	printf("uprobe %.2f ns/call hits=%llu\n", up, (unsigned long long)hits);
	return 0;
}
