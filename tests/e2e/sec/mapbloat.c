/* mapbloat FILE N SECONDS: N separate executable mappings of FILE (whose
 * first bytes are a nanosleep stub; give it a path of ~4000 characters:
 * each mapping is a maps line with it), then block from inside the first
 * for SECONDS, so the collector reads these maps (the ip is in no mapping
 * it knew).  Prints "MAPPED n". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t pg = 4096;
	int fd, n, i;
	char *base;
	void *first = NULL;

	if (argc < 4)
		return 2;
	fd = open(argv[1], O_RDONLY);
	n = atoi(argv[2]);
	/* every other page: separate vmas, each its own maps line */
	base = mmap(NULL, (size_t)n * 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || base == MAP_FAILED)
		return 3;
	for (i = 0; i < n; i++) {
		void *p = mmap(base + (size_t)i * 2 * pg, pg, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_FIXED, fd, 0);

		if (p == MAP_FAILED)
			break;
		if (!first)
			first = p;
		munmap(base + (size_t)i * 2 * pg + pg, pg);
	}
	printf("MAPPED %d\n", i);
	fflush(stdout);
	long (*sl)(struct timespec *, struct timespec *) = first;
	for (int k = 0; k < atoi(argv[3]) * 5; k++) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		sl(&ts, NULL);
	}
	return 0;
}
