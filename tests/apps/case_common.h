/* case_common.h - helpers shared by the case-study apps (tests/apps/case_*.c,
 * described in docs/case-studies.md).
 *
 * Every case app is one "UI" process whose main thread runs an event loop in
 * poll() on a pipe fed by an "input_feeder" process (one byte per input, one
 * input every CASE_INTERVAL_MS), plus the processes and threads of the case.
 * Processes are fork()ed (no exec) and named with PR_SET_NAME; threads are
 * named with pthread_setname_np.  Nothing here busy-waits: every wait is a
 * kernel wait (poll, read, futex, nanosleep), so the tracer sees it.
 *
 * Ground truth goes to stdout as KEY=VALUE lines, each written with a single
 * write(2) by the process that knows the value (gt(), gt_self()); stdio's
 * stdout buffer is never used, so nothing is duplicated by fork().
 * Errors go to stderr as "comm[tid]: message" and exit the process with 1.
 */
#ifndef ARGUS_CASE_COMMON_H
#define ARGUS_CASE_COMMON_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Functions that must show up as frames in stacks: not inlined, not cloned
 * or IPA-optimized, and no tail calls into them (as in busy.c). */
#if defined(__clang__)
#define CASE_FN __attribute__((noinline, disable_tail_calls))
#else
#define CASE_FN __attribute__((noinline, noipa))
#endif

#define CASE_INTERVAL_MS 150            /* between two inputs of the feeder */
#define CASE_WATCHDOG_S 30              /* SIGALRM ends a process stuck past this */
#define CASE_NORMAL_MAX_NS 500000000ull /* a normal input must be handled faster */
#define CASE_HANG_MIN_NS 2200000000ull  /* a hang must last at least this */

static inline unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static inline pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The calling thread's comm (at most 15 characters). */
static inline const char *my_comm(char buf[16])
{
	memset(buf, 0, 16);
	if (prctl(PR_GET_NAME, buf))
		strcpy(buf, "?");
	return buf;
}

__attribute__((noreturn, format(printf, 1, 2))) static inline void die(const char *fmt, ...)
{
	char comm[16], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s[%d]: %s\n", my_comm(comm), my_tid(), msg);
	_exit(1);
}

__attribute__((noreturn)) static inline void die_sys(const char *what)
{
	die("%s: %s", what, strerror(errno));
}

/* One ground-truth line "KEY=VALUE\n", written atomically. */
__attribute__((format(printf, 1, 2))) static inline void gt(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof buf - 1)
		die("ground-truth line too long");
	buf[n++] = '\n';
	if (write(1, buf, (size_t)n) != n)
		die_sys("write stdout");
}

/* PREFIX_PID, PREFIX_TID and PREFIX_COMM of the calling thread. */
static inline void gt_self(const char *prefix)
{
	char comm[16];

	gt("%s_PID=%d", prefix, getpid());
	gt("%s_TID=%d", prefix, my_tid());
	gt("%s_COMM=%s", prefix, my_comm(comm));
}

/* Name the calling process (its main thread) and arm the watchdog. */
static inline void become(const char *name)
{
	if (prctl(PR_SET_NAME, name))
		die_sys("prctl(PR_SET_NAME)");
	alarm(CASE_WATCHDOG_S);
}

static inline void name_thread(const char *name)
{
	int err = pthread_setname_np(pthread_self(), name);
	if (err)
		die("pthread_setname_np: %s", strerror(err));
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Absolute CLOCK_MONOTONIC deadline ms from now (pthread_cond_timedwait). */
static inline struct timespec deadline_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* A condition variable that times out on CLOCK_MONOTONIC. */
static inline void cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;

	if (pthread_condattr_init(&a) || pthread_condattr_setclock(&a, CLOCK_MONOTONIC) ||
	    pthread_cond_init(c, &a))
		die("pthread_cond_init failed");
	pthread_condattr_destroy(&a);
}

/* Close every descriptor >= 3 except the listed ones (negative entries are
 * ignored), so that a peer sees EOF as soon as its one owner closes. */
static inline void keep_fds_array(const int *fds, int n)
{
	int keep[16], k = 0;
	unsigned int next = 3;

	for (int i = 0; i < n && k < 16; i++)
		if (fds[i] >= 3)
			keep[k++] = fds[i];
	for (int i = 1; i < k; i++) /* insertion sort */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i <= k; i++) {
		unsigned int end = i < k ? (unsigned int)keep[i] : ~0u;
		if (end > next && close_range(next, end - 1, 0))
			die_sys("close_range");
		if (i < k)
			next = (unsigned int)keep[i] + 1;
	}
}
#define keep_fds(...) \
	keep_fds_array((const int[]){__VA_ARGS__}, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)))

/* fork() a child process named NAME that runs fn(arg) and exits with its
 * return value.  The child dies with its parent (PR_SET_PDEATHSIG) and by
 * the watchdog alarm.  Returns the child's pid in the parent. */
static inline pid_t spawn(const char *name, int (*fn)(void *), void *arg)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die_sys("fork");
	if (pid)
		return pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		die_sys("prctl(PR_SET_PDEATHSIG)");
	if (getppid() != parent)
		_exit(1);
	become(name);
	_exit(fn(arg));
}

/* Wait for a child; 0 if it exited 0, else a message and 1. */
static inline int reap(pid_t pid, const char *name)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die_sys("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		fprintf(stderr, "child %s (%d) killed by signal %d\n", name, pid, WTERMSIG(st));
	else
		fprintf(stderr, "child %s (%d) exited with %d\n", name, pid, WEXITSTATUS(st));
	return 1;
}

static inline void xwrite(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die_sys("write");
		p += w;
		n -= (size_t)w;
	}
}

/* Read exactly n bytes: 1, or 0 at a clean EOF before the first byte. */
static inline int xread(int fd, void *buf, size_t n)
{
	char *p = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die_sys("read");
		if (r == 0) {
			if (got)
				die("read: EOF inside a message");
			return 0;
		}
		got += (size_t)r;
	}
	return 1;
}

/* The fixed-size message every case uses for its requests and replies. */
struct case_msg {
	int32_t seq;   /* index of the input this message is about */
	int32_t key;   /* the input byte ('H' marks the hang input) */
	int32_t value; /* request- or reply-specific */
};

static inline void send_msg(int fd, int seq, int key, int value)
{
	struct case_msg m = {seq, key, value};
	xwrite(fd, &m, sizeof m);
}

static inline int recv_msg(int fd, struct case_msg *m)
{
	return xread(fd, m, sizeof *m);
}

/* The input feeder: a process that writes one byte of keys per input into
 * wfd, then closes it (the UI sees EOF and shuts down).  Inputs come
 * CASE_INTERVAL_MS apart, except the one after hang_key, which comes
 * after_hang_ms later (the expected hang plus a margin, so that the inputs
 * after the hang find the UI back in poll() and are handled one by one).
 * If hook_fd >= 0, a byte is written to it hook_lead_ms before hang_key is
 * delivered (to line another process up with the hang input). */
struct feeder {
	const char *keys;
	char hang_key;
	int after_hang_ms;
	int hook_fd, hook_lead_ms;
	int idle_ms;  /* before the first input: the UI idle in poll() */
	int rfd, wfd; /* the input pipe, made by spawn_feeder */
};
#define FEEDER(k, hk, after_ms) {.keys = (k), .hang_key = (hk), .after_hang_ms = (after_ms), .hook_fd = -1}

static inline int feeder_main(void *arg)
{
	struct feeder *f = arg;

	keep_fds(f->wfd, f->hook_fd);
	gt_self("INPUT_FEEDER");
	sleep_ms(f->idle_ms);
	for (const char *k = f->keys; *k; k++) {
		long wait = k > f->keys && k[-1] == f->hang_key ? f->after_hang_ms : CASE_INTERVAL_MS;
		if (f->hook_fd >= 0 && *k == f->hang_key) {
			sleep_ms(wait - f->hook_lead_ms);
			xwrite(f->hook_fd, k, 1);
			sleep_ms(f->hook_lead_ms);
		} else {
			sleep_ms(wait);
		}
		xwrite(f->wfd, k, 1);
	}
	/* CASE_LINGER_MS: stay a while before the EOF that ends the app, so
	 * that it idles in its loop after the hang like a real app (a
	 * debugger session that outlives the hang: tests/e2e/lldb_live.sh) */
	const char *linger = getenv("CASE_LINGER_MS");
	if (linger && atoi(linger) > 0)
		sleep_ms(atoi(linger));
	return 0;
}

/* Make the input pipe (f->rfd, f->wfd) and fork the feeder.  The caller
 * closes f->wfd (and the hook fd) once every child is forked. */
static inline pid_t spawn_feeder(struct feeder *f)
{
	int p[2];

	if (pipe(p))
		die_sys("pipe");
	f->rfd = p[0];
	f->wfd = p[1];
	return spawn("input_feeder", feeder_main, f);
}

/* Next input byte from the input pipe (the caller polled it), 0 at EOF. */
static inline char read_input(int fd)
{
	char c;
	return xread(fd, &c, 1) ? c : 0;
}

/* The UI's event loop wait on the input pipe alone: poll() until it is
 * readable (EINTR retried), then its next byte; 0 at EOF. */
static inline char wait_input(int fd)
{
	struct pollfd pfd = {fd, POLLIN, 0};

	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			die_sys("poll");
	return read_input(fd);
}

/* Timing of the inputs the UI main thread handled. */
struct ui_stats {
	int normal, normal_before, hangs;
	unsigned long long normal_max_ns, hang_start_ns, hang_end_ns;
};

static inline void stats_add(struct ui_stats *s, int hang, unsigned long long t0,
			     unsigned long long t1)
{
	if (hang) {
		s->hangs++;
		s->hang_start_ns = t0;
		s->hang_end_ns = t1;
		return;
	}
	s->normal++;
	if (!s->hangs)
		s->normal_before++;
	if (t1 - t0 > s->normal_max_ns)
		s->normal_max_ns = t1 - t0;
}

/* Print HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS
 * NORMAL_BEFORE_HANG NORMAL_MAX_NS and check them: one hang of at least
 * min_hang_ns, at least 5 fast normal inputs before it.  0 if all is well. */
static inline int stats_report(const struct ui_stats *s, unsigned long long min_hang_ns)
{
	unsigned long long hang = s->hang_end_ns - s->hang_start_ns;

	gt("HANG_START_NS=%llu", s->hang_start_ns);
	gt("HANG_END_NS=%llu", s->hang_end_ns);
	gt("HANG_MS=%llu", hang / 1000000ull);
	gt("NORMAL_ITERATIONS=%d", s->normal);
	gt("NORMAL_BEFORE_HANG=%d", s->normal_before);
	gt("NORMAL_MAX_NS=%llu", s->normal_max_ns);
	if (s->hangs != 1 || hang < min_hang_ns) {
		fprintf(stderr, "the hang did not happen: %d hang inputs, %llu ms (need >= %llu)\n",
			s->hangs, hang / 1000000ull, min_hang_ns / 1000000ull);
		return 1;
	}
	if (s->normal_before < 5 || s->normal_max_ns >= CASE_NORMAL_MAX_NS) {
		fprintf(stderr, "normal inputs: %d before the hang, slowest %llu ms\n",
			s->normal_before, s->normal_max_ns / 1000000ull);
		return 1;
	}
	return 0;
}

/* The start of this process's [heap] mapping (0 when it has none): the
 * spin apps check that a flag they allocated early (main arena, before
 * any thread) lies in it, where the e2e scripts expect argus flag to
 * place it. */
static inline unsigned long heap_start(void)
{
	char line[512];
	unsigned long s = 0, e;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		die_sys("/proc/self/maps");
	while (fgets(line, sizeof line, f))
		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &s, &e) == 2)
			break;
	fclose(f);
	return s;
}

#endif
