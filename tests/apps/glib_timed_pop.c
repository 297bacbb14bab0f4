/* glib_timed_pop.c - e2e app (tests/e2e/real_glib_timed_pop.sh, issue 26):
 * a GLib main loop whose callback waits for a GThreadPool job the way real
 * apps do, by polling its result queue with a timeout:
 *
 *   while (!(r = g_async_queue_timeout_pop(results, 50000)))
 *           retries++;
 *
 * i.e. timed futex waits of 50 ms, one after the other, that end by their
 * own timeout until the job's result comes.
 *
 *   main    g_main_loop_run(); a g_timeout_add tick every 100 ms.  The
 *           first ROUNDS ticks are normal rounds: each pushes a quick job
 *           (about 2 ms of work) and polls for its result the same way,
 *           which comes within the first 50 ms.  The tick after them, and
 *           not before the 5th (500 ms in), pushes the slow job and polls
 *           for its result (the hang); once the result is there it
 *           returns to the loop, which quits 300 ms later (one more idle
 *           round: a hang is an absence from the loop that ends with a
 *           return to it), and the app exits 0
 *   worker  the pool's only thread (GLib names it "pool"); the slow job
 *           is the culprit.  It does HOLD of work, as MODE says:
 *             sleep       g_usleep(HOLD_MS)           (a timer)
 *             busy        computes until HOLD_MS have passed
 *             fifo:PATH   read() of one byte from the FIFO PATH (opened
 *                         O_RDWR by main before the loop, so the open
 *                         never blocks); whoever writes to it after
 *                         HOLD_MS ends the job (HOLD_MS is then only
 *                         printed)
 *           then pushes the result.
 *
 * usage: glib_timed_pop HOLD_MS [sleep|busy|fifo:PATH [ROUNDS]]
 *        (defaults: sleep, 0 normal rounds: the slow job is the first)
 *
 * Ground truth on stdout, KEY=VALUE, each line flushed when it is known:
 *   PID MAIN_TID COMM MODE HOLD_MS ROUNDS   at start
 *   NORMAL_ROUNDS                           main, before the slow job
 *   WORKER_TID                              the worker, from the slow job
 *   JOB_START_NS                            the worker, as it starts
 *   IN_WAIT_NS                              main, just before its first
 *                                           g_async_queue_timeout_pop
 *   JOB_END_NS                              the worker, before its push
 *   GOT_NS RETRIES                          main, once it has the result
 *   EXIT=0                                  main, after the loop
 * (times: CLOCK_MONOTONIC ns, the trace's clock)
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_SLEEP, MODE_BUSY, MODE_FIFO };

static enum mode mode = MODE_SLEEP;
static const char *mode_name = "sleep";
static long hold_ms;
static int fifo_fd = -1;
static GAsyncQueue *results;
static GThreadPool *pool;
static GMainLoop *loop;
static int job_token = 1, quick_token = 2;
static long rounds_wanted, rounds_done;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* one KEY=VALUE line, on stdout at once (the harness reads it live) */
static void say(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* the pool's function: the job, the culprit */
static void run_job(gpointer data, gpointer user_data)
{
	int64_t t0 = mono_ns();

	(void)user_data;
	if (data == &quick_token) {
		/* a normal round's job: about 2 ms of work */
		volatile uint64_t x = 0;

		while (mono_ns() - t0 < 2000000)
			for (int i = 0; i < 10000; i++)
				x += (uint64_t)i;
		(void)x; /* (read once: clang's -Wunused-but-set-variable) */
		g_async_queue_push(results, data);
		return;
	}
	say("WORKER_TID=%d", (int)my_tid());
	say("JOB_START_NS=%lld", (long long)t0);
	switch (mode) {
	case MODE_SLEEP:
		g_usleep((gulong)hold_ms * 1000);
		break;
	case MODE_BUSY: {
		volatile uint64_t x = 0;

		while (mono_ns() - t0 < (int64_t)hold_ms * 1000000)
			for (int i = 0; i < 100000; i++)
				x += (uint64_t)i;
		(void)x;
		break;
	}
	case MODE_FIFO: {
		char c;
		ssize_t n;

		while ((n = read(fifo_fd, &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1)
			fprintf(stderr, "glib_timed_pop: read of the FIFO: %s\n",
				n < 0 ? strerror(errno) : "end of file");
		break;
	}
	}
	say("JOB_END_NS=%lld", (long long)mono_ns());
	g_async_queue_push(results, data);
}

static gboolean quit_loop(gpointer unused)
{
	(void)unused;
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

static void push_job(int *token)
{
	GError *err = NULL;

	if (!g_thread_pool_push(pool, token, &err)) {
		fprintf(stderr, "glib_timed_pop: g_thread_pool_push: %s\n", err->message);
		exit(1);
	}
}

/* One job's result, polled for 50 ms at a time (the way real apps wait
 * inside a main loop's callback); *retries: the pops that timed out. */
static gpointer wait_result(long *retries)
{
	gpointer r;

	*retries = 0;
	while (!(r = g_async_queue_timeout_pop(results, 50000))) {
		/* retry */
		(*retries)++;
	}
	return r;
}

/* Every 100 ms: a normal round, or (the 5th tick at the earliest) the
 * hang: the slow job, its result polled for. */
static gboolean tick(gpointer unused)
{
	static int ticks;
	long retries;
	gpointer r;

	(void)unused;
	ticks++;
	if (rounds_done < rounds_wanted) {
		push_job(&quick_token);
		if (wait_result(&retries) != &quick_token) {
			fprintf(stderr, "glib_timed_pop: a result that is not the quick job's\n");
			exit(1);
		}
		rounds_done++;
		return G_SOURCE_CONTINUE;
	}
	if (ticks < 5)
		return G_SOURCE_CONTINUE;
	say("NORMAL_ROUNDS=%ld", rounds_done);
	push_job(&job_token);
	say("IN_WAIT_NS=%lld", (long long)mono_ns());
	r = wait_result(&retries);
	say("GOT_NS=%lld", (long long)mono_ns());
	say("RETRIES=%ld", retries);
	if (r != &job_token) {
		fprintf(stderr, "glib_timed_pop: a result that is not the job's\n");
		exit(1);
	}
	g_timeout_add(300, quit_loop, NULL);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char comm[17] = "";

	hold_ms = argc > 1 ? atol(argv[1]) : 0;
	rounds_wanted = argc > 3 ? atol(argv[3]) : 0;
	if (argc < 2 || argc > 4 || hold_ms <= 0 || rounds_wanted < 0) {
		fprintf(stderr, "usage: glib_timed_pop HOLD_MS [sleep|busy|fifo:PATH [ROUNDS]]\n");
		return 2;
	}
	if (argc > 2) {
		mode_name = argv[2];
		if (!strcmp(argv[2], "sleep")) {
			mode = MODE_SLEEP;
		} else if (!strcmp(argv[2], "busy")) {
			mode = MODE_BUSY;
		} else if (!strncmp(argv[2], "fifo:", 5) && argv[2][5]) {
			mode = MODE_FIFO;
			mode_name = "fifo";
			/* O_RDWR: the open of a FIFO does not wait for a writer */
			fifo_fd = open(argv[2] + 5, O_RDWR | O_CLOEXEC);
			if (fifo_fd < 0) {
				fprintf(stderr, "glib_timed_pop: %s: %s\n", argv[2] + 5, strerror(errno));
				return 1;
			}
		} else {
			fprintf(stderr, "glib_timed_pop: unknown mode %s\n", argv[2]);
			return 2;
		}
	}
	prctl(PR_GET_NAME, comm);
	say("PID=%d", (int)getpid());
	say("MAIN_TID=%d", (int)my_tid());
	say("COMM=%s", comm);
	say("MODE=%s", mode_name);
	say("HOLD_MS=%ld", hold_ms);
	say("ROUNDS=%ld", rounds_wanted);

	results = g_async_queue_new();
	pool = g_thread_pool_new(run_job, NULL, 1, FALSE, NULL);
	if (!pool) {
		fprintf(stderr, "glib_timed_pop: g_thread_pool_new failed\n");
		return 1;
	}
	loop = g_main_loop_new(NULL, FALSE);
	g_timeout_add(100, tick, NULL);
	g_main_loop_run(loop);
	g_thread_pool_free(pool, FALSE, TRUE);
	g_main_loop_unref(loop);
	g_async_queue_unref(results);
	if (fifo_fd >= 0)
		close(fifo_fd);
	say("EXIT=0");
	return 0;
}
