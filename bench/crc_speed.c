/* crc_speed.c - the trace format's payload checksum (zlib's CRC-32), as
 * computed by zlib's crc32_z and by libdeflate_crc32, in the same run:
 * GB/s of each over the same 64 MiB, and whether they agree (they must:
 * trace/trace_internal.h's argus_crc32 picks libdeflate's when built with
 * it, and files written with either must read with the other).
 *
 *   crc_speed [ROUNDS]      prints one line per round, CPU time of this thread
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#include <libdeflate.h>

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const size_t n = 64u << 20;
	int rounds = argc > 1 ? atoi(argv[1]) : 3, bad = 0;
	unsigned char *b = malloc(n);

	if (!b || rounds < 1)
		return 2;
	for (size_t i = 0; i < n; i++)          /* not constant, not random */
		b[i] = (unsigned char)((uint32_t)i * 2654435761u >> 13);
	for (int r = 0; r < rounds; r++) {
		double t0 = cpu_s(), t1, t2;
		uint32_t z = (uint32_t)crc32_z(0, b, n);

		t1 = cpu_s();
		uint32_t l = libdeflate_crc32(0, b, n);

		t2 = cpu_s();
		bad += z != l;
		printf("round %d: zlib crc32_z %.2f GB/s, libdeflate_crc32 %.2f GB/s, %.2fx, %s\n",
		       r + 1, n / (t1 - t0) / 1e9, n / (t2 - t1) / 1e9, (t1 - t0) / (t2 - t1),
		       z == l ? "same value" : "DIFFERENT VALUES");
	}
	free(b);
	return bad ? 1 : 0;
}
