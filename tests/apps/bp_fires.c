/* bp_fires.c - do hardware breakpoints fire on this machine?  The e2e
 * tests of argus watch ask this before they rely on watchpoints, by a
 * path independent of argusd's own check (collector/hw_watch.c): a write
 * breakpoint on a variable of this process, 1000 writes, the count.
 *
 *   bp_fires      prints "fired N of 1000"; exit 0 if N > 0, 1 if none
 *                 fired, 2 if the breakpoint could not be opened
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint32_t word;

int main(void)
{
	struct perf_event_attr a;
	uint64_t n = 0;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&word;
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("bp_fires: perf_event_open(PERF_TYPE_BREAKPOINT)");
		return 2;
	}
	for (uint32_t i = 1; i <= 1000; i++)
		word = i;
	if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n)) {
		perror("bp_fires: read");
		return 2;
	}
	printf("fired %llu of 1000\n", (unsigned long long)n);
	return n > 0 ? 0 : 1;
}
