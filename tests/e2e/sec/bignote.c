/* bignote FILE NOTESZ TRUNC: an ELF whose PT_NOTE claims NOTESZ bytes (a
 * sparse hole of zeros), run from its mapping: a child maps its first
 * page executable and blocks inside it for 2 s, then spins 1 s in the
 * executable (so samples are unwound with FILE in the maps).  With TRUNC
 * 1 the file is truncated to one page 20 ms after someone (the collector)
 * opens it: under an mmap of it, that was a SIGBUS.  Prints "OPENED" and
 * how long after the fork when it saw the open (within 3 s), else
 * "NOT-OPENED". */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* nanosleep stub placed at 0x800 in page 0 */
static const unsigned char code[] = { 0xb8, 0x23, 0, 0, 0, 0x0f, 0x05, 0xc3 };

int main(int argc, char **argv)
{
	unsigned char page[4096] = { 0 };
	Elf64_Ehdr *eh = (void *)page;
	Elf64_Phdr *ph = (void *)(page + 64);
	unsigned long long notesz;
	struct pollfd pfd;
	char ev[4096];
	struct timespec f0, f1;
	int fd, in, opened = 0;
	pid_t c;

	if (argc < 4)
		return 2;
	notesz = strtoull(argv[2], NULL, 0);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = 64;
	eh->e_ehsize = 64;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 1;
	ph->p_type = PT_NOTE;
	ph->p_offset = 4096;
	ph->p_filesz = notesz;
	ph->p_memsz = notesz;
	ph->p_align = 4;
	memcpy(page + 0x800, code, sizeof(code));
	fd = open(argv[1], O_RDWR | O_CREAT | O_EXCL, 0755);
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page) ||
	    ftruncate(fd, 4096 + notesz))
		return 3;
	in = inotify_init1(0);
	inotify_add_watch(in, argv[1], IN_OPEN);
	c = fork();
	if (!c) {
		char *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		long (*sl)(struct timespec *, struct timespec *) = (void *)(p + 0x800);
		struct timespec ts = { 2, 0 }, t0, t1;

		sl(&ts, NULL);                 /* blocks with ip inside FILE */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while (t1.tv_sec - t0.tv_sec < 1);
		_exit(0);
	}
	pfd.fd = in;
	pfd.events = POLLIN;
	clock_gettime(CLOCK_MONOTONIC, &f0);
	if (poll(&pfd, 1, 3000) == 1 && read(in, ev, sizeof(ev)) > 0) {
		opened = 1;
		clock_gettime(CLOCK_MONOTONIC, &f1);
		usleep(20000);
		if (atoi(argv[3]) && ftruncate(fd, 4096))
			return 4;
	}
	if (opened)
		printf("OPENED %ld ms after the fork\n",
		       (f1.tv_sec - f0.tv_sec) * 1000 + (f1.tv_nsec - f0.tv_nsec) / 1000000);
	else
		printf("NOT-OPENED\n");
	fflush(stdout);
	waitpid(c, NULL, 0);
	return 0;
}
