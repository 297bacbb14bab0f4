/* case_broker.c - case study 4 (BRIEF §7, the paper's Installer / authd
 * hang): a synchronous call through a broker to a helper that waits for
 * user input.
 *
 * Processes (fork, no exec; one thread each):
 *   "installer"     the UI.  Main thread: event loop in poll() on the input
 *                   pipe; per click, a synchronous request to authd.
 *   "authd"         the broker: forwards each request to auth_helper and
 *                   the answer back.
 *   "auth_helper"   asks the user: writes a prompt to input_agent and waits
 *                   for the typed answer.
 *   "input_agent"   stands for the user at the password dialog: answers
 *                   each prompt, at once or after a delay.
 *   "input_feeder"  writes one click byte every 150 ms ('k' normal,
 *                   'H' = the click that hangs: input 7 of 9;
 *                   input 8 comes 2.9 s later, after the hang).
 * IPC:  installer <-> authd      unix stream socketpair "ia"
 *       authd <-> auth_helper    unix stream socketpair "ah"
 *       auth_helper -> input_agent   pipe "prompt"
 *       input_agent -> auth_helper   pipe "answer"
 *
 * Per click: installer (request_authorization) writes a request to authd
 * and blocks in read() for the reply; authd (broker_forward) writes it to
 * auth_helper and blocks in read(); auth_helper (ask_user_for_password)
 * writes a prompt and blocks in read() on the answer pipe; input_agent
 * (user_types_password) reads the prompt and writes the answer.
 *   Normal click: input_agent answers at once; the chain unwinds in ~100 us.
 *   Hang click: input_agent "types" for AGENT_DELAY_MS = 2600 ms (blocked
 *   in clock_nanosleep) before answering; installer, authd and auth_helper
 *   are all blocked in read() meanwhile.
 *
 * usage: case_broker   (no arguments; about 4.1 s)
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM                        (installer)
 *   INSTALLER_PID INSTALLER_TID INSTALLER_COMM
 *   AUTHD_PID AUTHD_TID AUTHD_COMM
 *   AUTH_HELPER_PID AUTH_HELPER_TID AUTH_HELPER_COMM
 *   INPUT_AGENT_PID INPUT_AGENT_TID INPUT_AGENT_COMM
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS NORMAL_BEFORE_HANG
 *   NORMAL_MAX_NS
 *   EXPECT_KIND=blocked
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=authd CULPRIT_KIND=blocked
 *   CHAIN=authd_tid,auth_helper_tid,input_agent_tid
 *                             (the culprit is the first thread of the
 *                             normal wake-up path that was stuck, as in
 *                             the other cases; the chain digs to the user)
 *   WAIT_PATH=installer_tid,authd_tid,auth_helper_tid,input_agent_tid
 *                             (who waits on whom during the hang)
 *   INPUT_AGENT_KIND=blocked AGENT_DELAY_MS=2600
 */
#include "case_common.h"

#define KEYS "kkkkkkHkk"
#define AGENT_DELAY_MS 2600

static int ia[2], ah[2]; /* [0] the caller's end, [1] the callee's */
static int prompt[2], answer[2];

/* --- input_agent: the user at the password dialog ----------------------- */

CASE_FN int user_types_password(const struct case_msg *p)
{
	if (p->key == 'H')
		sleep_ms(AGENT_DELAY_MS); /* the user takes a while */
	send_msg(answer[1], p->seq, p->key, 1234);
	return 1234;
}

static int input_agent_main(void *arg)
{
	struct case_msg p;

	(void)arg;
	keep_fds(prompt[0], answer[1]);
	gt_self("INPUT_AGENT");
	while (recv_msg(prompt[0], &p))
		user_types_password(&p);
	return 0;
}

/* --- auth_helper ---------------------------------------------------------- */

/* Prompt the user and block until the answer is typed. */
CASE_FN int ask_user_for_password(int seq, int key)
{
	struct case_msg a;

	send_msg(prompt[1], seq, key, 0);
	if (!recv_msg(answer[0], &a) || a.seq != seq)
		die("no answer from input_agent");
	return a.value;
}

static int auth_helper_main(void *arg)
{
	struct case_msg m;

	(void)arg;
	keep_fds(ah[1], prompt[1], answer[0]);
	gt_self("AUTH_HELPER");
	while (recv_msg(ah[1], &m))
		send_msg(ah[1], m.seq, m.key, ask_user_for_password(m.seq, m.key) == 1234);
	return 0;
}

/* --- authd: the broker ---------------------------------------------------- */

CASE_FN int broker_forward(const struct case_msg *m)
{
	struct case_msg r;

	send_msg(ah[0], m->seq, m->key, m->value);
	if (!recv_msg(ah[0], &r) || r.seq != m->seq)
		die("no reply from auth_helper");
	send_msg(ia[1], r.seq, r.key, r.value);
	return r.value;
}

static int authd_main(void *arg)
{
	struct case_msg m;

	(void)arg;
	keep_fds(ia[1], ah[0]);
	gt_self("AUTHD");
	while (recv_msg(ia[1], &m))
		broker_forward(&m);
	return 0;
}

/* --- installer: the UI ---------------------------------------------------- */

CASE_FN int request_authorization(int seq, int key)
{
	struct case_msg r;

	send_msg(ia[0], seq, key, 0);
	if (!recv_msg(ia[0], &r) || r.seq != seq)
		die("no reply from authd");
	return r.value;
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', 2900);
	struct ui_stats st = {0};
	int rc = 0, denied = 0;
	pid_t authd, helper, agent, feeder;
	char c;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: case_broker\n");
		return 2;
	}
	become("installer");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ia) || socketpair(AF_UNIX, SOCK_STREAM, 0, ah) ||
	    pipe(prompt) || pipe(answer))
		die_sys("socketpair/pipe");
	authd = spawn("authd", authd_main, NULL);
	helper = spawn("auth_helper", auth_helper_main, NULL);
	agent = spawn("input_agent", input_agent_main, NULL);
	feeder = spawn_feeder(&f);
	keep_fds(ia[0], f.rfd);
	gt_self("UI");
	gt_self("INSTALLER");

	for (int seq = 0;;) {
		if (!(c = wait_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		denied += request_authorization(seq++, c) != 1;
		stats_add(&st, c == 'H', t0, now_ns());
	}

	close(ia[0]); /* authd, then auth_helper, then input_agent see EOF */
	rc |= reap(authd, "authd");
	rc |= reap(helper, "auth_helper");
	rc |= reap(agent, "input_agent");
	rc |= reap(feeder, "input_feeder");

	gt("EXPECT_KIND=blocked");
	gt("CULPRIT_PID=%d", authd);
	gt("CULPRIT_TID=%d", authd);
	gt("CULPRIT_COMM=authd");
	gt("CULPRIT_KIND=blocked");
	gt("CHAIN=%d,%d,%d", authd, helper, agent);
	gt("WAIT_PATH=%d,%d,%d,%d", my_tid(), authd, helper, agent);
	gt("INPUT_AGENT_KIND=blocked");
	gt("AGENT_DELAY_MS=%d", AGENT_DELAY_MS);
	rc |= stats_report(&st, CASE_HANG_MIN_NS);
	if (denied) {
		fprintf(stderr, "%d requests were denied\n", denied);
		rc = 1;
	}
	return rc;
}
