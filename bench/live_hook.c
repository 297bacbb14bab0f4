/* live_hook.c - the cost of one call of a function patched by
 * `argus instrument` against one uprobe hit on the same function, in
 * the same process and run (bench/live_hook.sh drives it; issue 14 §3).
 *
 * stdin commands, each answered with one line:
 *   run N      N calls of live_bench_fn; "RUN n=N ns=X" (ns per call)
 *   uprobe N   a uprobe on live_bench_fn (perf_event_open, the "uprobe"
 *              PMU: file + offset, counting), then N calls; "UPROBE n=N
 *              ns=X hits=H" (H the kernel's count) or "UPROBE error=..."
 *              naming the step that failed and its errno
 *   quit
 * Prints PID= and READY=1 first. */
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

/* a real call with its own entry (what gets patched): not inlined, not
 * cloned or IPA-optimized (clang, the fuzz build's compiler, has no noipa) */
#if defined(__clang__)
#define ITEM_FN __attribute__((noinline, used))
#else
#define ITEM_FN __attribute__((noinline, noipa))
#endif

ITEM_FN long live_bench_fn(const long *item)
{
	return *item * 3 + 1;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double run(long n)
{
	volatile long sink = 0;
	long item = 7;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		sink += live_bench_fn(&item);
	(void)sink;
	return (now_ns() - t0) / (double)n;
}

/* The file and offset of live_bench_fn from /proc/self/maps. */
static int where(char *path, size_t len, uint64_t *off)
{
	uint64_t a = (uint64_t)(uintptr_t)&live_bench_fn;
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "re");
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &o, &pos) < 3 || !pos)
			continue;
		if (a >= s && a < e) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, len, "%s", line + pos);
			*off = a - s + o;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

static void uprobe(long n)
{
	struct perf_event_attr pa = { .size = sizeof(pa) };
	char path[512];
	uint64_t off, hits = 0;
	FILE *tf = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1, fd;
	double ns;

	if (!tf || fscanf(tf, "%d", &type) != 1) {
		printf("UPROBE error=no /sys/bus/event_source/devices/uprobe/type (errno %d)\n", errno);
		if (tf)
			fclose(tf);
		return;
	}
	fclose(tf);
	if (where(path, sizeof(path), &off)) {
		printf("UPROBE error=live_bench_fn not in /proc/self/maps\n");
		return;
	}
	pa.type = (uint32_t)type;
	pa.config1 = (uint64_t)(uintptr_t)path;	/* uprobe_path */
	pa.config2 = off;			/* probe_offset: a file offset */
	pa.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		printf("UPROBE error=perf_event_open(uprobe %s+%#llx) errno %d (%s)\n", path,
		       (unsigned long long)off, errno, strerror(errno));
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ns = run(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
		hits = 0;
	close(fd);
	printf("UPROBE n=%ld ns=%.1f hits=%llu\n", n, ns, (unsigned long long)hits);
}

int main(void)
{
	char line[128];
	long n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("PID=%d\nREADY=1\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "run %ld", &n) == 1 && n > 0)
			printf("RUN n=%ld ns=%.2f\n", n, run(n));
		else if (sscanf(line, "uprobe %ld", &n) == 1 && n > 0)
			uprobe(n);
		else
			break;
	}
	return 0;
}
