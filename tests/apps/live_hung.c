/* live_hung.c - a process that is hung when `argus inject` and
 * `argus instrument` reach into it (tests/e2e/live_*.sh).
 *
 * Threads:
 *   - main: poll() on stdin with a 120 s timeout (restarts through
 *     restart_block when interrupted: -ERESTART_RESTARTBLOCK);
 *   - worker: a raw FUTEX_WAIT with no timeout on `gen` (-ERESTARTSYS);
 *   - parker (argument "park"): blocked in pause() from inside
 *     live_parked, pc 4 bytes into that function.
 * A syscall that comes back with EINTR (or a poll that times out) is a
 * failure: exit 3 with a line on stderr.  An injector that does not
 * restart the interrupted call exactly is caught here.
 *
 * stdin commands: "work N" - the worker runs live_item() on items 0..N-1
 * and prints DONE n=N sum=S (S = sum of i*i+1); "quit" - EXIT ok, exit 0.
 *
 * Functions for the refusals (asm, exact bytes):
 *   live_short     xor eax,eax; ret                      (3 bytes: too short)
 *   live_jumpback  a loop whose jl goes back to +2, inside the first
 *                  6 bytes a patch would replace
 *   live_parked    mov eax,edi; syscall; nop4; ret       (the parker's pc
 *                  is +4, inside the 8 bytes a patch would replace)
 * Prints PID= MAIN_TID= WORKER_TID= PARKER_TID= and READY=1.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a real call with its own entry (what gets patched): not inlined, not
 * cloned or IPA-optimized (clang, the fuzz build's compiler, has no noipa) */
#if defined(__clang__)
#define ITEM_FN __attribute__((noinline, used))
#else
#define ITEM_FN __attribute__((noinline, noipa))
#endif

__asm__(".text\n"
	".globl live_short\n.type live_short,@function\n"
	"live_short:\n\txor %eax,%eax\n\tret\n"
	".size live_short, .-live_short\n"
	".globl live_jumpback\n.type live_jumpback,@function\n"
	"live_jumpback:\n\txor %eax,%eax\n"
	"1:\tinc %eax\n\tcmp %edi,%eax\n\tjl 1b\n\tret\n"
	".size live_jumpback, .-live_jumpback\n"
	".globl live_parked\n.type live_parked,@function\n"
	"live_parked:\n\tmov %edi,%eax\n\tsyscall\n\tnopl 0(%rax)\n\tret\n"
	".size live_parked, .-live_parked\n");

int live_short(void);
int live_jumpback(int n);
long live_parked(long nr);

static _Atomic unsigned gen;	/* bumped per job; the worker futex-waits on it */
static long job_n;
static int quit;
static pid_t worker_tid, parker_tid;

/* The function `argus instrument` patches: its first argument is the item. */
ITEM_FN long live_item(const long *item)
{
	long v = *item;

	return v * v + 1;
}

static void die_eintr(const char *what)
{
	fprintf(stderr, "EINTR in %s: the interrupted syscall was not restarted\n", what);
	exit(3);
}

static void *worker(void *arg)
{
	unsigned seen = 0;

	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (;;) {
		while (atomic_load(&gen) == seen) {
			long r = syscall(SYS_futex, &gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);

			if (r < 0 && errno == EINTR)
				die_eintr("futex");
		}
		seen = atomic_load(&gen);
		if (quit)
			return NULL;
		long n = job_n, sum = 0, *items = calloc((size_t)n + 1, sizeof(long));

		for (long i = 0; i < n; i++) {
			items[i] = i;
			sum += live_item(&items[i]);
		}
		free(items);
		printf("DONE n=%ld sum=%ld\n", n, sum);
		fflush(stdout);
	}
}

static void *parker(void *arg)
{
	(void)arg;
	parker_tid = (pid_t)syscall(SYS_gettid);
	live_parked(SYS_pause);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, p;
	char line[128];

	setvbuf(stdin, NULL, _IONBF, 0);
	pthread_create(&w, NULL, worker, NULL);
	if (argc > 1 && !strcmp(argv[1], "park"))
		pthread_create(&p, NULL, parker, NULL);
	while (!worker_tid || (argc > 1 && !parker_tid))
		usleep(1000);
	printf("PID=%d\nMAIN_TID=%d\nWORKER_TID=%d\nPARKER_TID=%d\nREADY=1\n", (int)getpid(),
	       (int)getpid(), (int)worker_tid, (int)parker_tid);
	fflush(stdout);
	for (;;) {
		struct pollfd pf = { .fd = 0, .events = POLLIN };
		size_t k = 0;
		int r = poll(&pf, 1, 120000);

		if (r < 0 && errno == EINTR)
			die_eintr("poll");
		if (r == 0) {
			fprintf(stderr, "poll timed out\n");
			return 4;
		}
		if (r < 0) {
			perror("poll");
			return 5;
		}
		/* one line, a byte at a time: no stdio buffer between polls */
		while (k + 1 < sizeof(line) && read(0, line + k, 1) == 1 && line[k] != '\n')
			k++;
		line[k] = 0;
		if (!k || !strcmp(line, "quit")) {
			quit = 1;
			atomic_fetch_add(&gen, 1);
			syscall(SYS_futex, &gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			pthread_join(w, NULL);
			printf("EXIT ok\n");
			return 0;
		}
		if (sscanf(line, "work %ld", &job_n) == 1) {
			atomic_fetch_add(&gen, 1);
			syscall(SYS_futex, &gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		}
	}
}
