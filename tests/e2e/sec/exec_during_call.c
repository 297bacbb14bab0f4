/* exec_during_call.c - a process prepared for root's `argus inject`, that
 * execs a setuid program while argus's remote call runs in it (issue 25,
 * F2; tests/e2e/sec_inject_exec.sh).  Run as nobody:
 *
 *   exec_during_call thread SUID   the main thread parks in pause() from
 *       code at 0x41410000 (rbx, r12 = 0x4242..., 0x4343...: registers an
 *       attacker chose); a second thread sits in dl_iterate_phdr, holding
 *       the loader's write lock, until the interposer shows in its maps
 *       (root's dlopen, on the main thread, mapped it and now waits for
 *       that lock), then execs SUID ("SUID 12"): the exec kills the main
 *       thread in the middle of the call.  argus must notice and write
 *       nothing back: a restore of the saved registers sends the setuid
 *       program (root: the tracer is root) to 0x41410005.
 *   exec_during_call fakelibc DIR  DIR/libc.so.6 (fakelibc_exec.c: its
 *       "dlopen" execs the setuid program) mapped at 0x10000000, below the
 *       real libc, the main thread parked as above: argus must not call a
 *       "dlopen" from a user's file.
 *   exec_during_call sleepexec SUID  sleeps 2 s, then execs SUID ("SUID 3")
 *       with a raw syscall (a few instructions after the sleep): root's
 *       `argus step` over it must stop at the exec, not step (and show)
 *       the setuid program.
 *
 * Either way the parked process is a child: we print "PID n", wait for it
 * and print "EXIT n" or "SIGNAL n" (a crash at the attacker's address is
 * SIGNAL 11). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *suid;

static int maps_has(const char *what)
{
	char buf[65536];
	int fd = open("/proc/self/maps", O_RDONLY), hit = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	while (n > 0 && !hit) {
		buf[n] = 0;
		hit = strstr(buf, what) != NULL;
		n = read(fd, buf, sizeof(buf) - 1);
	}
	close(fd);
	return hit;
}

/* in dl_iterate_phdr: the loader's write lock is ours */
static int held(struct dl_phdr_info *i, size_t sz, void *arg)
{
	static int once;
	char *av[] = { (char *)suid, "12", NULL }, *ev[] = { NULL };

	(void)i, (void)sz, (void)arg;
	if (once++)
		return 1;
	for (int k = 0; k < 6000; k++) {        /* 60 s at most */
		if (maps_has("libargus-interpose")) {
			usleep(100000);   /* dlopen is now waiting for the lock */
			execve(suid, av, ev);
			_exit(90);
		}
		usleep(10000);
	}
	_exit(91);
}

static void *execer(void *a)
{
	(void)a;
	dl_iterate_phdr(held, NULL);
	return NULL;
}

static void park(void)
{
	/* mov eax, 34 (pause); syscall; jmp back */
	static const unsigned char code[] = { 0xb8, 0x22, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7 };
	unsigned char *p = mmap((void *)0x41410000, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		_exit(92);
	memcpy(p, code, sizeof(code));
	__asm__ volatile("mov $0x4242424242424242, %%rbx\n\tmov $0x4343434343434343, %%r12\n\tjmp *%0"
			 :: "r"(p) : "rbx", "r12");
}

int main(int argc, char **argv)
{
	pid_t c;
	int st;

	if (argc < 3 || (strcmp(argv[1], "thread") && strcmp(argv[1], "fakelibc") &&
			 strcmp(argv[1], "sleepexec"))) {
		fprintf(stderr, "usage: exec_during_call thread SUID | fakelibc DIR | sleepexec SUID\n");
		return 2;
	}
	c = fork();
	if (c < 0)
		return 1;
	if (!c) {
		if (!strcmp(argv[1], "sleepexec")) {
			const char *av[] = { argv[2], "3", NULL }, *ev[] = { NULL };
			long r;

			sleep(2);
			__asm__ volatile("syscall" : "=a"(r) : "0"(59L), "D"(argv[2]), "S"(av), "d"(ev)
					 : "rcx", "r11", "memory");
			_exit(95);
		}
		if (!strcmp(argv[1], "thread")) {
			pthread_t t;

			suid = argv[2];
			if (pthread_create(&t, NULL, execer, NULL))
				_exit(93);
		} else {
			char lib[512];
			int lf;

			snprintf(lib, sizeof(lib), "%s/libc.so.6", argv[2]);
			lf = open(lib, O_RDONLY);
			if (lf < 0 || mmap((void *)0x10000000, 16384, PROT_READ | PROT_EXEC,
					   MAP_PRIVATE | MAP_FIXED_NOREPLACE, lf, 0) == MAP_FAILED)
				_exit(94);
		}
		park();
	}
	printf("PID %d\n", (int)c);
	fflush(stdout);
	if (waitpid(c, &st, 0) != c)
		return 1;
	if (WIFSIGNALED(st))
		printf("SIGNAL %d\n", WTERMSIG(st));
	else
		printf("EXIT %d\n", WEXITSTATUS(st));
	return 0;
}
