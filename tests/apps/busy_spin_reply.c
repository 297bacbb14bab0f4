/* busy_spin_reply.c - a pure busy spin on a heap flag whose writer is
 * reached through a socket from another process (issue 13 §8): two hops
 * from the spinning thread to the culprit.
 *
 * Processes and threads (fork, no exec):
 *   "mixer"             the UI.  Main thread: event loop in poll() on the
 *                       input pipe.
 *     "reply_reader"    a mixer thread: blocks in read() on the audio
 *                       socket and, for each reply, bumps job->replies.
 *   "audio_server"      one thread: answers each request; for an 'H'
 *                       request it first sleeps SERVER_DELAY_MS (the
 *                       device it asks is slow: the reply comes late).
 *   "input_feeder"      one key every 150 ms (KEYS): two 'H' inputs,
 *                       the 5th and the 12th, each followed by the next
 *                       input AFTER_HANG_MS later.
 * IPC: audio = unix stream socketpair.  The mixer main thread sends the
 * requests on it, reply_reader reads the replies from it.
 * The flag: job->replies, an int in a malloc'd struct job ([heap], not a
 * global), written only by reply_reader (atomic add, release), read only
 * by the main thread.  Nobody clears it: the main thread waits until it
 * reaches the number of requests it sent.
 *
 * Per input the main thread (apply_mix) sends a request and spins in
 * wait_for_reply():
 *     while (job->replies < sent) pause;
 * no syscall at all, no timeout, no store of its own: nothing in a
 * trace says it waits for anything (a `busy` hang).  Normal input: the
 * reply comes at once, the spin lasts microseconds.  'H' input: the
 * reply comes SERVER_DELAY_MS later, and the main thread spins all that
 * time.  The first 'H' is where a test runs `argus flag` (and arms `argus
 * watch`); the second is the hang it diagnoses, with the normal inputs in
 * between as the normal runs.  (CASE_WATCHDOG_S ends a mixer that never
 * gets its reply.)
 *
 * usage: busy_spin_reply   (no arguments; about 8.5 s)
 *
 * Ground truth on stdout, KEY=VALUE, at the end:
 *   UI_PID UI_TID UI_COMM                 (mixer main; printed first)
 *   WORKER_PID WORKER_TID WORKER_COMM     (reply_reader)
 *   SERVER_PID SERVER_TID SERVER_COMM     (audio_server)
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   FIRST_HANG_START_NS FIRST_HANG_END_NS (the first 'H')
 *   HANG_START_NS HANG_END_NS HANG_MS     (the second 'H': the one to
 *                                          diagnose; CLOCK_MONOTONIC)
 *   NORMAL_ITERATIONS NORMAL_BETWEEN_HANGS NORMAL_MAX_NS
 *   EXPECT_KIND=busy
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=audio_server CULPRIT_KIND=blocked
 *   CHAIN=audio_server_tid
 *   FLAG_ADDR (hex, in [heap]) FLAG_SIZE=4 FLAG_WRITER_TID (= WORKER_TID)
 *   HEAP_START FLAG_HEAP_OFFSET
 *   SPIN_FUNCTION=wait_for_reply SPIN_FUNCTION_ADDR
 *   SERVER_DELAY_MS
 */
#include "case_common.h"

#define KEYS "kkkkHkkkkkkHkk"
#define SERVER_DELAY_MS 3000
#define AFTER_HANG_MS 3300

struct job {
	long id;
	int replies;       /* the flag: replies received so far */
	int pad;
};

static int audio[2];   /* [0] mixer, [1] audio_server */
static struct job *job;
static pid_t worker_tid;

/* --- audio_server process ---------------------------------------------- */

static int audio_server_main(void *arg)
{
	struct case_msg m;

	(void)arg;
	keep_fds(audio[1]);
	while (recv_msg(audio[1], &m)) {
		if (m.key == 'H')
			sleep_ms(SERVER_DELAY_MS);
		send_msg(audio[1], m.seq, m.key, 1);
	}
	return 0;
}

/* --- mixer: reply_reader thread ---------------------------------------- */

static void *reply_reader(void *arg)
{
	struct case_msg m;

	(void)arg;
	name_thread("reply_reader");
	__atomic_store_n(&worker_tid, my_tid(), __ATOMIC_RELEASE);
	while (recv_msg(audio[0], &m))
		__atomic_fetch_add(&job->replies, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* --- mixer: main thread ------------------------------------------------ */

/* The pure busy spin: no syscall, no store, until the reply count comes
 * up to the requests sent. */
CASE_FN void wait_for_reply(const struct job *j, int sent)
{
	while (__atomic_load_n(&j->replies, __ATOMIC_ACQUIRE) < sent)
		__builtin_ia32_pause();
}

CASE_FN void apply_mix(int seq, int key)
{
	send_msg(audio[0], seq, key, 0);
	wait_for_reply(job, seq + 1);
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', AFTER_HANG_MS);
	unsigned long long hang[2][2] = { { 0 } }, normal_max = 0;
	int hangs = 0, normal = 0, between = 0, rc = 0;
	pid_t server, feeder;
	pthread_t worker;
	unsigned long hs;
	char c;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: busy_spin_reply\n");
		return 2;
	}
	become("mixer");
	job = calloc(1, sizeof(*job));   /* main arena, before any thread: [heap] */
	if (!job)
		die("out of memory");
	hs = heap_start();
	if (!hs || (unsigned long)&job->replies < hs)
		die("the job is not in [heap]");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, audio))
		die_sys("socketpair");
	server = spawn("audio_server", audio_server_main, NULL);
	feeder = spawn_feeder(&f);
	close(audio[1]);
	close(f.wfd);
	gt_self("UI");
	if (pthread_create(&worker, NULL, reply_reader, NULL))
		die("pthread_create failed");
	while (!__atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE))
		sleep_ms(1);

	for (int seq = 0;;) {
		if (!(c = wait_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns(), t1;

		apply_mix(seq++, c);
		t1 = now_ns();
		if (c == 'H') {
			if (hangs < 2) {
				hang[hangs][0] = t0;
				hang[hangs][1] = t1;
			}
			hangs++;
		} else {
			normal++;
			between += hangs == 1;
			if (t1 - t0 > normal_max)
				normal_max = t1 - t0;
		}
	}

	shutdown(audio[0], SHUT_WR);   /* audio_server sees EOF, exits, closes */
	pthread_join(worker, NULL);    /* reply_reader sees EOF */
	rc |= reap(server, "audio_server");
	rc |= reap(feeder, "input_feeder");

	gt("WORKER_PID=%d", getpid());
	gt("WORKER_TID=%d", worker_tid);
	gt("WORKER_COMM=reply_reader");
	gt("SERVER_PID=%d", server);
	gt("SERVER_TID=%d", server);
	gt("SERVER_COMM=audio_server");
	gt("FIRST_HANG_START_NS=%llu", hang[0][0]);
	gt("FIRST_HANG_END_NS=%llu", hang[0][1]);
	gt("HANG_START_NS=%llu", hang[1][0]);
	gt("HANG_END_NS=%llu", hang[1][1]);
	gt("HANG_MS=%llu", (hang[1][1] - hang[1][0]) / 1000000ull);
	gt("NORMAL_ITERATIONS=%d", normal);
	gt("NORMAL_BETWEEN_HANGS=%d", between);
	gt("NORMAL_MAX_NS=%llu", normal_max);
	gt("EXPECT_KIND=busy");
	gt("CULPRIT_PID=%d", server);
	gt("CULPRIT_TID=%d", server);
	gt("CULPRIT_COMM=audio_server");
	gt("CULPRIT_KIND=blocked");
	gt("CHAIN=%d", server);
	gt("FLAG_ADDR=%p", (void *)&job->replies);
	gt("FLAG_SIZE=%zu", sizeof job->replies);
	gt("FLAG_WRITER_TID=%d", worker_tid);
	gt("HEAP_START=0x%lx", hs);
	gt("FLAG_HEAP_OFFSET=0x%lx", (unsigned long)&job->replies - hs);
	gt("SPIN_FUNCTION=wait_for_reply");
	gt("SPIN_FUNCTION_ADDR=%p", (void *)wait_for_reply);
	gt("SERVER_DELAY_MS=%d", SERVER_DELAY_MS);
	if (hangs != 2 || hang[0][1] - hang[0][0] < CASE_HANG_MIN_NS ||
	    hang[1][1] - hang[1][0] < CASE_HANG_MIN_NS) {
		fprintf(stderr, "the hangs did not happen: %d hang inputs, %llu and %llu ms\n", hangs,
			(hang[0][1] - hang[0][0]) / 1000000ull, (hang[1][1] - hang[1][0]) / 1000000ull);
		rc = 1;
	}
	if (between < 5 || normal_max >= CASE_NORMAL_MAX_NS) {
		fprintf(stderr, "normal inputs: %d between the hangs, slowest %llu ms\n", between,
			normal_max / 1000000ull);
		rc = 1;
	}
	free(job);
	return rc;
}
