/* forgemaps.c - (sec_forged_maps.sh) a process whose /proc/PID/maps has a
 * line longer than 1,023 bytes, whose tail reads as a maps line of its own:
 *   "10000-11000 r-xp 00000000 00:00 0 DIR/fifo/libc.so.6"
 * A reader of maps with fgets(line, 1024) sees a mapping of "libc.so.6"
 * that does not exist (no /proc/PID/map_files/10000-11000), and a reader
 * that then falls back to open(path) opens DIR/fifo/libc.so.6, a FIFO: as
 * root, without O_NONBLOCK, it blocks for ever.
 * Usage: forgemaps DIR  (DIR absolute, the user's own; prints "pid N",
 * then waits in pause()) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void mkdirs(char *p)
{
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

int main(int argc, char **argv)
{
	char fifo[512], fake[1024], filler[2048], real[4096], tmp[4096], line[8192], last[300];
	void *at = (void *)0x10000000;
	int n, blen = 100;

	if (argc != 2)
		return 2;
	snprintf(fifo, sizeof(fifo), "%s/fifo", argv[1]);
	mkdirs(fifo);
	strcat(fifo, "/libc.so.6");
	unlink(fifo);
	if (mkfifo(fifo, 0644)) {
		perror("mkfifo");
		return 1;
	}
	snprintf(fake, sizeof(fake), "10000-11000 r-xp 00000000 00:00 0 %s", fifo);
	n = snprintf(filler, sizeof(filler), "%s", argv[1]);
	for (int i = 0; i < 4; i++) {
		filler[n++] = '/';
		memset(filler + n, 'A', 200);
		n += 200;
		filler[n] = 0;
	}
	/* tune the last directory's length until the fake line starts at
	 * byte 1,023 of the real one */
	for (int iter = 0; iter < 10; iter++) {
		int fd, pos = -1;
		FILE *f;

		memset(last, 'B', (size_t)blen);
		last[blen] = 0;
		snprintf(real, sizeof(real), "%s/%s/%s", filler, last, fake);
		snprintf(tmp, sizeof(tmp), "%s", real);
		*strrchr(tmp, '/') = 0;
		mkdirs(tmp);
		fd = open(real, O_RDWR | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || ftruncate(fd, 4096)) {
			perror(real);
			return 1;
		}
		if (mmap(at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		close(fd);
		f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f))
			if (strtoul(line, NULL, 16) == (unsigned long)at) {
				char *q = strstr(line, fake);

				pos = q ? (int)(q - line) : -1;
				break;
			}
		if (f)
			fclose(f);
		if (pos == 1023) {
			printf("pid %d maps line of %zu bytes forges %s\n", getpid(), strlen(line), fifo);
			fflush(stdout);
			pause();
			return 0;
		}
		munmap(at, 4096);
		unlink(real);
		blen += 1023 - pos;
		if (pos < 0 || blen < 1 || blen > 250) {
			fprintf(stderr, "cannot tune the line (at %d)\n", pos);
			return 1;
		}
	}
	return 1;
}
