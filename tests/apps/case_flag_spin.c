/* case_flag_spin.c - case study 3 (BRIEF §7, the paper's System Preferences
 * hang): the UI main thread spins on a data flag with sched_yield().
 *
 * Processes and threads (fork, no exec):
 *   "sysprefs"          the UI.  Main thread: event loop in poll() on the
 *                       input pipe.
 *     "display_client"  a sysprefs thread: blocks in read() on the display
 *                       socket and sets the flag when a reply comes.
 *   "display_server"    one thread: answers display requests.
 *   "input_feeder"      writes one click byte every 150 ms ('k' normal,
 *                       'H' = the click that hangs: input 7 of 9;
 *                       input 8 comes 2.8 s later, after the hang).
 * IPC: disp = unix stream socketpair.  The sysprefs main thread sends the
 * requests on it, the display_client thread reads the replies from it.
 * The flag: `display_done`, an atomic int in sysprefs' memory (FLAG_ADDR);
 * written by display_client (store-release), read by the main thread.
 *
 * Per click the main thread (apply_display_settings) clears the flag, sends
 * a request to display_server and spins in wait_for_display_flag():
 *     while (!done && !timed_out) sched_yield();
 * with a SPIN_TIMEOUT_MS = 2500 ms timeout (clock_gettime, vDSO).
 *   Normal click: display_server replies at once, display_client sets the
 *   flag, the spin ends after a few yields.
 *   Hang click: display_server reads the request and drops it (the reply
 *   that "sometimes never comes"); it goes back to blocking in read() for
 *   the next request.  The main thread yields for the full 2.5 s, then
 *   gives up.  display_client stays blocked in read() meanwhile.
 * Note: the spin makes one sched_yield() syscall per turn, so the hang is
 * a dense stream of syscalls (SPINS_IN_HANG says how many).
 *
 * usage: case_flag_spin [SPIN_TIMEOUT_MS]   (default 2500: about 4.0 s)
 *   A longer hang (the spin's timeout; input 8 comes 300 ms after it) for
 *   the tests that attach lldb and step through it: on a loaded machine
 *   lldb's attach alone can take seconds, and a test must still land
 *   inside the hang with room for its commands.
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM                             (sysprefs main)
 *   WORKER_PID WORKER_TID WORKER_COMM                 (display_client)
 *   DISPLAY_SERVER_PID DISPLAY_SERVER_TID DISPLAY_SERVER_COMM
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS NORMAL_BEFORE_HANG
 *   NORMAL_MAX_NS
 *   EXPECT_KIND=yield
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=display_server CULPRIT_KIND=blocked
 *   CHAIN=display_server_tid
 *   FLAG_ADDR (hex) FLAG_SIZE=4 FLAG_WRITER_TID (= WORKER_TID)
 *   SPIN_FUNCTION=wait_for_display_flag SPIN_FUNCTION_ADDR (hex)
 *   SPIN_TIMEOUT_MS=2500 SPINS_IN_HANG
 */
#include <sched.h>
#include <stdatomic.h>

#include "case_common.h"

#define KEYS "kkkkkkHkk"
#define SPIN_TIMEOUT_MS 2500   /* the default */

static int disp[2]; /* [0] sysprefs, [1] display_server */
static atomic_int display_done;
static pid_t worker_tid;
static int spin_timeout_ms = SPIN_TIMEOUT_MS;

/* --- display_server process -------------------------------------------- */

static int display_server_main(void *arg)
{
	struct case_msg m;

	(void)arg;
	keep_fds(disp[1]);
	gt_self("DISPLAY_SERVER");
	while (recv_msg(disp[1], &m))
		if (m.key != 'H') /* the hang request is dropped: no reply */
			send_msg(disp[1], m.seq, m.key, 60);
	return 0;
}

/* --- sysprefs: display_client thread ----------------------------------- */

static void *display_client(void *arg)
{
	struct case_msg m;

	(void)arg;
	name_thread("display_client");
	worker_tid = my_tid();
	gt_self("WORKER");
	while (recv_msg(disp[0], &m))
		atomic_store_explicit(&display_done, 1, memory_order_release);
	return NULL;
}

/* --- sysprefs: main thread --------------------------------------------- */

/* The data-flag spin.  Returns the number of yields; *timed_out is set if
 * the flag never came. */
CASE_FN long wait_for_display_flag(int *timed_out)
{
	unsigned long long end = now_ns() + (unsigned long long)spin_timeout_ms * 1000000ull;
	long spins = 0;

	*timed_out = 0;
	while (!atomic_load_explicit(&display_done, memory_order_acquire) && !*timed_out) {
		sched_yield();
		spins++;
		*timed_out = now_ns() >= end;
	}
	return spins;
}

CASE_FN long apply_display_settings(int seq, int key, int *timed_out)
{
	atomic_store_explicit(&display_done, 0, memory_order_relaxed);
	send_msg(disp[0], seq, key, 0);
	return wait_for_display_flag(timed_out);
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', 0);
	struct ui_stats st = {0};
	int rc = 0, timed_out, bad_timeouts = 0, hang_timed_out = 0;
	long spins, hang_spins = 0;
	pid_t server, feeder;
	pthread_t worker;
	char c;

	if (argc > 2 || (argc == 2 && ((spin_timeout_ms = atoi(argv[1])) < 500 || spin_timeout_ms > 20000))) {
		fprintf(stderr, "usage: case_flag_spin [SPIN_TIMEOUT_MS]   (500..20000, default %d)\n",
			SPIN_TIMEOUT_MS);
		return 2;
	}
	f.after_hang_ms = spin_timeout_ms + 300;
	become("sysprefs");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, disp))
		die_sys("socketpair");
	server = spawn("display_server", display_server_main, NULL);
	feeder = spawn_feeder(&f);
	close(disp[1]);
	close(f.wfd);
	gt_self("UI");
	if (pthread_create(&worker, NULL, display_client, NULL))
		die("pthread_create failed");

	for (int seq = 0;;) {
		if (!(c = wait_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		spins = apply_display_settings(seq++, c, &timed_out);
		stats_add(&st, c == 'H', t0, now_ns());
		if (c == 'H') {
			hang_spins = spins;
			hang_timed_out = timed_out;
		} else {
			bad_timeouts += timed_out;
		}
	}

	shutdown(disp[0], SHUT_WR); /* display_server sees EOF, exits, closes */
	pthread_join(worker, NULL); /* display_client sees EOF */
	rc |= reap(server, "display_server");
	rc |= reap(feeder, "input_feeder");

	gt("EXPECT_KIND=yield");
	gt("CULPRIT_PID=%d", server);
	gt("CULPRIT_TID=%d", server);
	gt("CULPRIT_COMM=display_server");
	gt("CULPRIT_KIND=blocked");
	gt("CHAIN=%d", server);
	gt("FLAG_ADDR=%p", (void *)&display_done);
	gt("FLAG_SIZE=%zu", sizeof display_done);
	gt("FLAG_WRITER_TID=%d", worker_tid);
	gt("SPIN_FUNCTION=wait_for_display_flag");
	gt("SPIN_FUNCTION_ADDR=%p", (void *)wait_for_display_flag);
	gt("SPIN_TIMEOUT_MS=%d", spin_timeout_ms);
	gt("SPINS_IN_HANG=%ld", hang_spins);
	rc |= stats_report(&st, CASE_HANG_MIN_NS);
	if (!hang_timed_out || bad_timeouts) {
		fprintf(stderr, "spin timeouts: hang %d (want 1), normal %d (want 0)\n",
			hang_timed_out, bad_timeouts);
		rc = 1;
	}
	return rc;
}
