/* case_circular.c - case study 1 (BRIEF §7, the paper's Chromium IME hang):
 * a circular wait across two processes, broken only by a timed wait.
 *
 * Processes and threads (fork, no exec):
 *   "browser"       the UI.  Main thread: event loop in poll() on the input
 *                   pipe and on the renderer's call socket.
 *     "ime_worker"  a browser thread that does the IME work for a keystroke.
 *   "renderer"      one thread; answers the ime_worker.
 *   "input_feeder"  writes one keystroke byte every 150 ms ('k' normal,
 *                   'H' = the keystroke that hangs: input 7 of 9;
 *                   input 8 comes 3.3 s later, after the hang).
 * IPC: ipc = unix stream socketpair ime_worker <-> renderer;
 *      call = unix stream socketpair renderer -> browser main thread;
 *      browser main <-> ime_worker: a mutex and two condition variables.
 *
 * Per keystroke the browser main thread posts the key to ime_worker and
 * waits for it in wait_for_ime() with pthread_cond_timedwait (a futex wait,
 * CLOCK_MONOTONIC, TIMEOUT_MS = 1500 ms).  ime_worker (ime_roundtrip) sends
 * a request to the renderer and blocks in read() for the reply.
 *   Normal keystroke: the renderer replies at once; ime_worker signals the
 *   condition; the browser main thread is back in poll() within ~100 us.
 *   Hang keystroke: before replying, the renderer makes a synchronous call
 *   to the browser main thread over "call" (renderer_call_browser) and
 *   blocks in read() for the answer.  The browser main thread is in its
 *   timed wait and does not poll "call": browser main -> ime_worker ->
 *   renderer -> browser main is a cycle.  The first 1.5 s wait times out;
 *   the browser retries the wait once (another 1.5 s timeout); after the
 *   second timeout it pumps its pending IPC (service_renderer_calls, a
 *   non-blocking recv), which answers the renderer: the cycle is broken by
 *   the timeout.  The renderer replies to ime_worker, which signals the
 *   browser main thread in its third wait.  The UI thread is away from
 *   poll() for ~3.0 s, two full timed waits.
 *
 * usage: case_circular   (no arguments; about 4.5 s)
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM  = BROWSER_PID BROWSER_MAIN_TID
 *   WORKER_PID WORKER_TID WORKER_COMM     (ime_worker)
 *   RENDERER_PID RENDERER_TID RENDERER_COMM RENDERER_MAIN_TID
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS NORMAL_BEFORE_HANG
 *   NORMAL_MAX_NS
 *   EXPECT_KIND=blocked
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=ime_worker CULPRIT_KIND=blocked
 *   CHAIN=worker_tid,renderer_main_tid,browser_main_tid
 *   CYCLE=browser_main_tid,worker_tid,renderer_main_tid
 *   TIMEOUT_MS=1500 TIMEOUTS_IN_HANG=2
 *   DONE_COND_ADDR (hex: the condition the browser main thread waits on)
 */
#include "case_common.h"

#define KEYS "kkkkkkHkk"
#define TIMEOUT_MS 1500

static int ipc[2];  /* [0] browser (ime_worker), [1] renderer */
static int call[2]; /* [0] browser main thread, [1] renderer */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv; /* CLOCK_MONOTONIC */
static int job_seq = -1, job_key, done_seq = -1, quit;
static pid_t worker_tid;

/* --- renderer process -------------------------------------------------- */

/* The synchronous call back into the browser (the edge that closes the
 * cycle): blocks until the browser main thread answers. */
CASE_FN int renderer_call_browser(int seq)
{
	struct case_msg a;

	send_msg(call[1], seq, 'Q', 0);
	if (!recv_msg(call[1], &a) || a.seq != seq)
		die("no answer from the browser");
	return a.value;
}

CASE_FN int renderer_handle_ime(const struct case_msg *m)
{
	int v = m->key * 2;

	if (m->key == 'H')
		v += renderer_call_browser(m->seq);
	send_msg(ipc[1], m->seq, m->key, v);
	return v;
}

static int renderer_main(void *arg)
{
	struct case_msg m;

	(void)arg;
	keep_fds(ipc[1], call[1]);
	gt_self("RENDERER");
	gt("RENDERER_MAIN_TID=%d", my_tid());
	while (recv_msg(ipc[1], &m))
		renderer_handle_ime(&m);
	return 0;
}

/* --- browser: ime_worker thread ---------------------------------------- */

/* One request to the renderer; blocks in read() for its reply. */
CASE_FN int ime_roundtrip(int seq, int key)
{
	struct case_msg r;

	send_msg(ipc[0], seq, key, 0);
	if (!recv_msg(ipc[0], &r) || r.seq != seq)
		die("bad or no reply from the renderer");
	return r.value;
}

static void *ime_worker(void *arg)
{
	(void)arg;
	name_thread("ime_worker");
	pthread_mutex_lock(&mu);
	worker_tid = my_tid();
	pthread_mutex_unlock(&mu);
	gt_self("WORKER");
	pthread_mutex_lock(&mu);
	for (;;) {
		while (job_seq == done_seq && !quit)
			pthread_cond_wait(&job_cv, &mu);
		if (quit)
			break;
		int seq = job_seq, key = job_key;
		pthread_mutex_unlock(&mu);
		ime_roundtrip(seq, key);
		pthread_mutex_lock(&mu);
		done_seq = seq;
		pthread_cond_signal(&done_cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* --- browser: main thread ---------------------------------------------- */

/* Answer the renderer's pending synchronous calls, without blocking. */
CASE_FN int service_renderer_calls(void)
{
	struct case_msg m;
	int n = 0;

	for (;;) {
		ssize_t r = recv(call[0], &m, sizeof m, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return n;
		if (r < 0)
			die_sys("recv call");
		if (r == 0)
			return n;
		if (r != (ssize_t)sizeof m && !xread(call[0], (char *)&m + r, sizeof m - (size_t)r))
			die("EOF inside a call");
		send_msg(call[0], m.seq, m.key, 1);
		n++;
	}
}

/* The 1.5 s timed wait for ime_worker, retried once; after the second
 * timeout, pump pending IPC and wait again.  Returns the timeouts. */
CASE_FN int wait_for_ime(int seq)
{
	int timeouts = 0;

	pthread_mutex_lock(&mu);
	while (done_seq != seq) {
		struct timespec dl = deadline_ms(TIMEOUT_MS);
		int err = 0;
		while (done_seq != seq && err != ETIMEDOUT)
			err = pthread_cond_timedwait(&done_cv, &mu, &dl);
		if (done_seq == seq)
			break;
		if (++timeouts >= 2) {
			if (timeouts > 4)
				die("ime_worker never answered");
			pthread_mutex_unlock(&mu);
			service_renderer_calls();
			pthread_mutex_lock(&mu);
		}
	}
	pthread_mutex_unlock(&mu);
	return timeouts;
}

CASE_FN int handle_keystroke(int seq, int key)
{
	pthread_mutex_lock(&mu);
	job_seq = seq;
	job_key = key;
	pthread_cond_signal(&job_cv);
	pthread_mutex_unlock(&mu);
	return wait_for_ime(seq);
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', 3300);
	struct ui_stats st = {0};
	int rc = 0, hang_timeouts = -1, other_timeouts = 0;
	pid_t renderer, feeder;
	pthread_t worker;
	char c;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: case_circular\n");
		return 2;
	}
	become("browser");
	cond_init_monotonic(&done_cv);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ipc) || socketpair(AF_UNIX, SOCK_STREAM, 0, call))
		die_sys("socketpair");
	renderer = spawn("renderer", renderer_main, NULL);
	feeder = spawn_feeder(&f);
	close(ipc[1]);
	close(call[1]);
	close(f.wfd);
	gt_self("UI");
	gt("BROWSER_PID=%d", getpid());
	gt("BROWSER_MAIN_TID=%d", my_tid());
	if (pthread_create(&worker, NULL, ime_worker, NULL))
		die("pthread_create failed");

	for (int seq = 0;;) {
		struct pollfd pfd[2] = {{f.rfd, POLLIN, 0}, {call[0], POLLIN, 0}};
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_sys("poll");
		}
		if (pfd[1].revents & POLLIN)
			service_renderer_calls();
		if (!pfd[0].revents)
			continue;
		if (!(c = read_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		int t = handle_keystroke(seq++, c);
		stats_add(&st, c == 'H', t0, now_ns());
		if (c == 'H')
			hang_timeouts = t;
		else
			other_timeouts += t;
	}

	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_signal(&job_cv);
	pthread_mutex_unlock(&mu);
	pthread_join(worker, NULL);
	close(ipc[0]); /* the renderer sees EOF and exits */
	rc |= reap(renderer, "renderer");
	rc |= reap(feeder, "input_feeder");

	pid_t me = my_tid();
	gt("EXPECT_KIND=blocked");
	gt("CULPRIT_PID=%d", getpid());
	gt("CULPRIT_TID=%d", worker_tid);
	gt("CULPRIT_COMM=ime_worker");
	gt("CULPRIT_KIND=blocked");
	gt("CHAIN=%d,%d,%d", worker_tid, renderer, me);
	gt("CYCLE=%d,%d,%d", me, worker_tid, renderer);
	gt("TIMEOUT_MS=%d", TIMEOUT_MS);
	gt("TIMEOUTS_IN_HANG=%d", hang_timeouts);
	gt("DONE_COND_ADDR=%p", (void *)&done_cv);
	rc |= stats_report(&st, 2900000000ull);
	if (hang_timeouts != 2 || other_timeouts) {
		fprintf(stderr, "timeouts: %d in the hang (want 2), %d elsewhere (want 0)\n",
			hang_timeouts, other_timeouts);
		rc = 1;
	}
	return rc;
}
