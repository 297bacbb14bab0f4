/* swap_mapped DIR MODE SECONDS: the attack on how the collector opens the
 * files a process maps (issue 16).  Maps DIR/lib.bin executable and waits
 * inside it until the collector has read our maps and learnt lib.bin;
 * unmaps it and puts at that path, by MODE:
 *   fifo  a FIFO (an open for reading blocks until a writer comes),
 *   pty   a symlink to a pty slave we own (a session leader without a
 *         terminal that opens it takes it as its controlling terminal),
 *   file  another regular file (a different inode, renamed over it);
 * then spins for SECONDS, so samples with stack copies are unwound with
 * the maps that still name lib.bin.  For pty it then closes the master:
 * a hangup to whoever has the pty as controlling terminal.
 *
 * The collector opens a file at its path only if the maps it unwinds
 * with still name it and its unwinder has not opened it before (it keeps
 * one session per layout of maps).  So for the attack to reach that open:
 * (1) the collector must read our maps while lib.bin is mapped, (2) no
 * stack with a copy (a sample's, a yield's; a blocking switch's too
 * under --wait-stacks) may be unwound with those maps before the swap (its
 * session would open lib.bin through /proc/PID/map_files, rightly, and
 * keep it), and (3) its last read of our maps before the swap must be one
 * that names lib.bin.  Sleeping inside lib.bin on our own stack made each
 * try a coin toss (CI failed on four in a row); now:
 *  - from the barrier below to the end of the swap, every syscall and
 *    every wait runs with rsp on a stack page never touched: BPF's
 *    non-faulting copy of a page that is not present fails, so a switch
 *    or a sample there carries no copy and is not unwound (2).  (The
 *    few lines of C between them run on our own stack.)  The waits are poll() called from a
 *    mapped code page (a probe's, then lib.bin's: the ip of the wait is
 *    new to the collector, which reads the maps again); mmap, munmap and
 *    the swap are raw syscalls (munmap
 *    can wait for the mmap lock a maps read holds, ext4's unlink for its
 *    journal);
 *  - the wait ends on an inotify IN_OPEN of lib.bin: the maps read opens
 *    it for its build-id (1);
 *  - a read happens when the collector takes a record, not when the
 *    record was made: a stack recorded before lib.bin was mapped (a
 *    sample in printf, one from before our exec) but taken after it has
 *    the collector read maps naming lib.bin, and unwind its copy with
 *    them.  So first a barrier: map a probe page, wait inside it until a
 *    read names it, then settle; only then map lib.bin.  The records from
 *    before are taken by then, and the ones after are on the fresh stack;
 *  - settle: later reads find a build-id cached and open nothing (the
 *    exec's record has the maps read again, a read may be a stale one),
 *    so each round maps a new probe file and waits QUIET_MS for its
 *    IN_OPEN; settled after a round with no read.  lib.bin is unmapped
 *    only once settled (3).
 * What can still spoil a try: a sample on the few instructions of C
 * between those syscalls, or a collector more than QUIET_MS behind.
 *
 * Prints "PID=n", then "LEARNT" (or "NOT-LEARNT": no maps read named the
 * barrier's probe, or then lib.bin, within 10 s), "REREADS=n" (reads
 * seen after lib.bin's), "UNSETTLED" when the probe files ran out before
 * a quiet round, and "SWAPPED MODE" on stdout. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* long wait(struct pollfd *fds, long nfds, long timeout_ms, void *sp):
 * poll(2) with rsp switched to sp for the syscall (r8 keeps the old one:
 * the kernel preserves it across syscall).
 *   mov r8,rsp; mov rsp,rcx; mov eax,7 (poll); syscall; mov rsp,r8; ret */
static const unsigned char code[] = {
	0x49, 0x89, 0xe0, 0x48, 0x89, 0xcc, 0xb8, 0x07, 0, 0, 0,
	0x0f, 0x05, 0x4c, 0x89, 0xc4, 0xc3
};

#define FRESH_STACK (64 << 10)
#define PROBES 16
#define QUIET_MS 300

/* syscall nr(a1..a6) with rsp on sp (a stack never touched) */
static long sys_on(void *sp, long nr, long a1, long a2, long a3, long a4,
		   long a5, long a6)
{
	register long r10 asm("r10") = a4;
	register long r8 asm("r8") = a5;
	register long r9 asm("r9") = a6;
	long ret;

	asm volatile("mov %%rsp, %%r12\n\t"
		     "mov %[sp], %%rsp\n\t"
		     "syscall\n\t"
		     "mov %%r12, %%rsp"
		     : "=a"(ret)
		     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
		       "r"(r9), [sp] "r"(sp)
		     : "rcx", "r11", "r12", "memory");
	return ret;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* path made with one page of page[], opened, and watched for opens */
static int make_watched(const char *path, const unsigned char *page,
			int *fd, struct pollfd *pfd)
{
	unlink(path);
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	pfd->fd = inotify_init1(IN_CLOEXEC);
	pfd->events = POLLIN;
	if (*fd < 0 || write(*fd, page, 4096) != 4096 || pfd->fd < 0 ||
	    inotify_add_watch(pfd->fd, path, IN_OPEN) < 0)
		return -1;
	return 0;
}

static char *sp;                /* the fresh stack's top */
static int probe_fd[PROBES];
static struct pollfd probe_pfd[PROBES];
static int probes_used;

typedef long (*wait_fn)(struct pollfd *, long, long, void *);

static long map_code(int fd)
{
	long p = sys_on(sp, SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC,
			MAP_PRIVATE, fd, 0);

	if (p < 0 && p > -4096)
		exit(5);
	return p;
}

static bool unsettled;           /* the probes ran out before a quiet round */

/* Rounds until one passes QUIET_MS with no maps read (a new probe each,
 * waiting with wait, whose code is mapped); how many reads were seen. */
static int settle(wait_fn wait)
{
	int reads = 0;

	for (;;) {
		if (probes_used == PROBES) {
			unsettled = true;
			break;
		}
		int i = probes_used++;

		map_code(probe_fd[i]);
		if (wait(&probe_pfd[i], 1, QUIET_MS, sp) != 1)
			break;
		reads++;
	}
	return reads;
}

int main(int argc, char **argv)
{
	char lib[512], tmp[600], probe[600];
	unsigned char page[4096] = { 0 };
	struct pollfd lib_pfd;
	int master = -1, fd, lib_fd, rounds;

	if (argc < 4)
		return 2;
	snprintf(lib, sizeof(lib), "%s/lib.bin", argv[1]);
	if (!strcmp(argv[2], "pty")) {
		master = posix_openpt(O_RDWR | O_NOCTTY);
		if (master < 0 || grantpt(master) || unlockpt(master))
			return 3;
	}
	/* Everything that can block on our own stack, first: the files, the
	 * watches, what the swap puts at the path.  For file that is made
	 * while lib.bin exists, so not on its inode (ext4 hands a freed inode
	 * number out again at once). */
	memcpy(page, code, sizeof(code));
	if (make_watched(lib, page, &lib_fd, &lib_pfd))
		return 4;
	for (int i = 0; i < PROBES; i++) {
		snprintf(probe, sizeof(probe), "%s/probe%d.bin", argv[1], i);
		if (make_watched(probe, page, &probe_fd[i], &probe_pfd[i]))
			return 4;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", lib);
	if (!strcmp(argv[2], "file")) {
		fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
			return 7;
		close(fd);
	} else if (master >= 0) {
		const char *pts = ptsname(master);

		if (!pts)
			return 6;
		snprintf(tmp, sizeof(tmp), "%s", pts);
	}
	/* never touched: no page behind it while we run on it */
	char *stack = mmap(NULL, FRESH_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return 8;
	sp = stack + FRESH_STACK - 64;

	printf("PID=%d\n", getpid());
	fflush(stdout);
	/* from here to the swap: on sp only.  The barrier: */
	wait_fn in_probe = (wait_fn)map_code(probe_fd[probes_used]);
	long ok = in_probe(&probe_pfd[probes_used++], 1, 10000, sp) == 1;
	if (ok)
		settle(in_probe);
	/* lib.bin, learnt: */
	long p = map_code(lib_fd);
	wait_fn in_lib = (wait_fn)p;
	long learnt = ok && in_lib(&lib_pfd, 1, 10000, sp) == 1;
	rounds = learnt ? settle(in_lib) : 0;
	long e = sys_on(sp, SYS_munmap, p, 4096, 0, 0, 0, 0);
	if (!e && !strcmp(argv[2], "file"))
		e = sys_on(sp, SYS_rename, (long)tmp, (long)lib, 0, 0, 0, 0);
	else if (!e)
		e = sys_on(sp, SYS_unlink, (long)lib, 0, 0, 0, 0, 0);
	if (!e && !strcmp(argv[2], "fifo"))
		e = sys_on(sp, SYS_mknod, (long)lib, S_IFIFO | 0666, 0, 0, 0, 0);
	else if (!e && !strcmp(argv[2], "pty"))
		e = sys_on(sp, SYS_symlink, (long)tmp, (long)lib, 0, 0, 0, 0);
	if (e)
		return 9;
	printf("%s\nREREADS=%d\n%sSWAPPED %s\n", learnt ? "LEARNT" : "NOT-LEARNT",
	       rounds, unsettled ? "UNSETTLED\n" : "", argv[2]);
	fflush(stdout);
	double t0 = now();
	volatile unsigned long x = 0;
	while (now() - t0 < atof(argv[3]))
		x++;
	if (master >= 0)
		close(master);  /* the hangup */
	return 0;
}
