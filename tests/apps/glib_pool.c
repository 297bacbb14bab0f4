/* glib_pool.c - e2e app (tests/e2e/interpose_glib.sh): a GLib main loop
 * (the "UI") whose handler waits for a result queued behind a slow item
 * in a GThreadPool of one worker.
 *
 *   writer  a child process: sleeps DELAY_MS, then writes one byte to a
 *           pipe
 *   worker  the pool's only thread: run_item() runs each item; the slow
 *           one reads the pipe (blocked until the writer writes), the
 *           others compute a little; each pushes its result to a
 *           GAsyncQueue
 *   main    g_main_loop_run(); a few timeouts each push one quick item
 *           and wait for its result (normal runs), then an idle callback
 *           pushes the slow item and the one it wants, and waits for that
 *           one's result: blocked in g_async_queue_pop behind the slow
 *           item for DELAY_MS; then back in the loop 300 ms, and quits
 *
 * Before the loop, one GTask runs in a thread (g_task_run_in_thread_sync):
 * GLib's own task pool runs task_fn.
 *
 * usage: glib_pool [DELAY_MS (3000)]
 * Ground truth on stdout, KEY=VALUE, after the run:
 *   PID UI_TID WORKER_TID WRITER_PID SLOW_ITEM WANTED_ITEM (hex) WAITED_MS
 *   NORMAL_ROUNDS TASK (hex) TASK_TID TASK_RESULT
 */
#include <gio/gio.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct item {
	int slow;
	int n;
};

static int pfd[2];
static GAsyncQueue *results;
static GThreadPool *pool;
static GMainLoop *loop;
static volatile pid_t worker_tid;
static struct item quick[3], slow_item = { 1, 0 }, wanted = { 0, 0 };
static int rounds;
static double waited_ms;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* the pool's function: one item */
void run_item(gpointer data, gpointer user_data)
{
	struct item *it = data;
	char c;

	(void)user_data;
	worker_tid = my_tid();
	if (it->slow) {
		if (read(pfd[0], &c, 1) != 1)
			perror("glib_pool: read");
	} else {
		volatile unsigned x = 0;

		for (int i = 0; i < 200000; i++)
			x += (unsigned)i;
		it->n = (int)(x & 1);
	}
	g_async_queue_push(results, it);
}

static gboolean quit_loop(gpointer unused)
{
	(void)unused;
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

static volatile pid_t task_tid;

/* the GTask's function, on a thread of GLib's task pool */
void task_fn(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
	(void)source;
	(void)data;
	(void)cancel;
	task_tid = my_tid();
	g_task_return_int(task, 42);
}

/* The UI's hang: the wanted item is queued behind the slow one. */
static gboolean ui_hang(gpointer unused)
{
	double t0 = mono_ms();
	gpointer r;

	(void)unused;
	g_thread_pool_push(pool, &slow_item, NULL);
	g_thread_pool_push(pool, &wanted, NULL);
	while ((r = g_async_queue_pop(results)) != &wanted)
		;
	waited_ms = mono_ms() - t0;
	/* back to the loop for a while: a hang is an absence from the loop
	 * that ends with a return to it (one that ends with the app quitting
	 * is its shutdown) */
	g_timeout_add(300, quit_loop, NULL);
	return G_SOURCE_REMOVE;
}

/* A normal round: one quick item, its result at once. */
static gboolean ui_round(gpointer unused)
{
	(void)unused;
	g_thread_pool_push(pool, &quick[rounds % 3], NULL);
	g_async_queue_pop(results);
	if (++rounds < 5)
		return G_SOURCE_CONTINUE;
	g_idle_add(ui_hang, NULL);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	long delay = argc > 1 ? atol(argv[1]) : 3000;
	pid_t writer;
	int st;

	if (delay <= 0) {
		fprintf(stderr, "usage: glib_pool [DELAY_MS]\n");
		return 2;
	}
	if (pipe(pfd)) {
		perror("glib_pool: pipe");
		return 1;
	}
	writer = fork();
	if (writer < 0) {
		perror("glib_pool: fork");
		return 1;
	}
	if (writer == 0) {
		close(pfd[0]);
		/* the slow item starts after the normal rounds (~5 x 50 ms) */
		usleep((useconds_t)(delay + 300) * 1000);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	results = g_async_queue_new();
	pool = g_thread_pool_new(run_item, NULL, 1, TRUE, NULL);
	if (!pool) {
		fprintf(stderr, "glib_pool: g_thread_pool_new failed\n");
		return 1;
	}
	GTask *task = g_task_new(NULL, NULL, NULL, NULL);
	gssize task_result;

	g_task_run_in_thread_sync(task, task_fn);
	task_result = g_task_propagate_int(task, NULL);
	loop = g_main_loop_new(NULL, FALSE);
	g_timeout_add(50, ui_round, NULL);
	g_main_loop_run(loop);
	g_thread_pool_free(pool, FALSE, TRUE);
	waitpid(writer, &st, 0);
	printf("PID=%d\nUI_TID=%d\nWORKER_TID=%d\nWRITER_PID=%d\nSLOW_ITEM=%p\nWANTED_ITEM=%p\n"
	       "WAITED_MS=%.0f\nNORMAL_ROUNDS=%d\nTASK=%p\nTASK_TID=%d\nTASK_RESULT=%d\n",
	       (int)getpid(), (int)my_tid(), (int)worker_tid, (int)writer, (void *)&slow_item,
	       (void *)&wanted, waited_ms, rounds, (void *)task, (int)task_tid, (int)task_result);
	g_object_unref(task);
	return 0;
}
