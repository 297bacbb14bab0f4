/* write_then_spin.c - one distinctive syscall, then user code only: the
 * thread appends nothing more to its CPU's batch (kernel-patch/argus.bpf.c),
 * so only the collector's flush moves that last record into the ring.
 *
 * usage: write_then_spin BYTES SECONDS
 * Prints PID=... and READY=1 (flushed) before the write, then writes
 * BYTES zero bytes to /dev/null (its exit's ret is BYTES, the marker),
 * then spins SECONDS on the vDSO clock (no syscall) and exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);  /* the vDSO: no syscall */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	volatile unsigned long spins = 0;
	size_t n;
	double secs, end;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: write_then_spin BYTES SECONDS\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	secs = atof(argv[2]);
	if (n == 0 || n > sizeof(buf)) {
		fprintf(stderr, "write_then_spin: BYTES must be 1..%zu\n", sizeof(buf));
		return 2;
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0) {
		perror("write_then_spin: /dev/null");
		return 1;
	}
	printf("PID=%d\nREADY=1\n", (int)getpid());
	fflush(stdout);
	if (write(fd, buf, n) != (ssize_t)n)
		return 1;
	end = now_s() + secs;
	while (now_s() < end)
		spins++;
	return 0;
}
