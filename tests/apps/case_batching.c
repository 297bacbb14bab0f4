/* case_batching.c - case study 5 (BRIEF §7, the paper's WindowServer /
 * fontd hang): one server thread serves several clients per loop turn.
 *
 * Processes (fork, no exec; one thread each):
 *   "editor"        the UI.  Main thread: event loop in poll() on the input
 *                   pipe and its notification socket; per input, a
 *                   synchronous glyph request to fontd.
 *   "fontd"         the batching server, ONE thread.
 *   "client1"       another app: a glyph request every ~25 ms; sends the
 *                   one slow request (a font rebuild) when told to.
 *   "client2"       another app: a glyph request every ~25 ms.
 *   "input_feeder"  writes one input byte every 150 ms ('k' normal, 'H' the
 *                   input that hangs: 7 of 9; input 8 comes 2.9 s later,
 *                   after the hang).  50 ms before 'H' it tells
 *                   client1 (trigger pipe) to send its slow request, so
 *                   that fontd is busy with it when the editor asks.
 * IPC: one unix SOCK_STREAM socketpair per client (fontd connection table:
 *      0 client1, 1 client2, 2 editor); one SOCK_DGRAM socket per client
 *      bound to an abstract address for fontd's notifications; a quit pipe
 *      from the editor to client1/2.
 *
 * fontd's loop (serve_turn), the exact syscall pattern:
 *   epoll_wait(all connections) -> for every ready connection, in table
 *   order: recvmsg(MSG_WAITALL) request, compute, sendmsg reply, and on to
 *   the next connection's recvmsg with no blocking call in between (so a
 *   turn with two ready clients does sendmsg(A) then recvmsg(B) back to
 *   back).  After a turn that rebuilt the font cache, ONE sendmmsg() on an
 *   unbound SOCK_DGRAM socket sends a "cache changed" datagram to all three
 *   clients (one mmsghdr per client address).
 *   Normal input: fontd answers the editor within its turn (~100 us).
 *   Hang input: fontd is in render_font_slow() (RENDER_SLOW_MS = 2600 ms
 *   of CPU) for client1's request; the editor's request waits in its
 *   socket and the editor is blocked in read() until the next turn, which
 *   serves client2 and the editor back to back (and the sendmmsg comes
 *   just before it).
 *
 * usage: case_batching   (no arguments; about 4.1 s)
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM  EDITOR_PID EDITOR_TID EDITOR_COMM
 *   SERVER_PID SERVER_TID SERVER_COMM                         (fontd)
 *   CLIENT1_PID CLIENT1_TID CLIENT1_COMM CLIENT2_PID CLIENT2_TID CLIENT2_COMM
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   CLIENT_PIDS=client1,client2,editor    (fontd's connection table order)
 *   SLOW_CLIENT_PID                       (client1, whose request was slow)
 *   HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS NORMAL_BEFORE_HANG
 *   NORMAL_MAX_NS
 *   EXPECT_KIND=blocked
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=fontd CULPRIT_KIND=busy
 *   CHAIN=server_tid  HOT_FUNCTION=render_font_slow  HOT_FUNCTION_ADDR
 *   SERVER_TURNS SERVER_BATCHED_TURNS (turns with >= 2 requests)
 *   SERVER_BACK_TO_BACK (sendmsg directly followed by recvmsg)
 *   SERVER_SENDMMSG_MSGS=3 (per sendmmsg)  SERVER_REQUESTS
 *   EDITOR_NOTIFICATIONS (datagrams the editor got: 1)
 */
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/un.h>

#include "case_common.h"

#define KEYS "kkkkkkHkk"
#define NCONN 3 /* 0 client1, 1 client2, 2 editor */
#define EDITOR 2
#define RENDER_SLOW_MS 2600
#define CLIENT_EVERY_MS 25
#define SLOW 1

static int conns[NCONN][2]; /* [0] the client's end, [1] fontd's */
static int notif[NCONN];    /* each client's bound SOCK_DGRAM socket */
static struct sockaddr_un notif_addr[NCONN];
static socklen_t notif_len[NCONN];
static int quit_pipe[2], trigger[2];

/* --- fontd --------------------------------------------------------------- */

static volatile unsigned long glyph_sink;

CASE_FN void render_font_slow(void)
{
	unsigned long long end = now_ns() + RENDER_SLOW_MS * 1000000ull;
	unsigned long h = 1;

	do {
		for (int i = 0; i < 100000; i++)
			h = h * 1103515245u + 12345u + (h >> 11);
	} while (now_ns() < end);
	glyph_sink = h;
}

CASE_FN int render_glyphs(int seq)
{
	unsigned long h = (unsigned long)seq;

	for (int i = 0; i < 2000; i++)
		h = h * 31 + (unsigned long)i;
	glyph_sink = h;
	return (int)(h & 0xffff);
}

/* One sendmmsg: a "cache changed" datagram to every client's address. */
CASE_FN int notify_clients(int fd, int seq)
{
	struct case_msg note = {seq, 'N', 0};
	struct iovec iov = {&note, sizeof note};
	struct mmsghdr mm[NCONN];

	memset(mm, 0, sizeof mm);
	for (int i = 0; i < NCONN; i++) {
		mm[i].msg_hdr.msg_name = &notif_addr[i];
		mm[i].msg_hdr.msg_namelen = notif_len[i];
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	if (sendmmsg(fd, mm, NCONN, 0) != NCONN)
		die_sys("sendmmsg");
	return NCONN;
}

struct server {
	int ep, notify_fd, live;
	int turns, batched, back_to_back, requests;
};

/* One loop turn: serve every ready connection, in table order. */
CASE_FN int serve_turn(struct server *s, const struct epoll_event *ev, int n)
{
	int ready[NCONN] = {0}, served = 0, rebuilt = -1, last_was_send = 0;

	for (int i = 0; i < n; i++)
		ready[ev[i].data.u32] = 1;
	for (int i = 0; i < NCONN; i++) {
		struct case_msg m;
		struct iovec iov = {&m, sizeof m};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		if (!ready[i])
			continue;
		ssize_t r = recvmsg(conns[i][1], &mh, MSG_WAITALL);
		if (r < 0)
			die_sys("recvmsg");
		if (r == 0) { /* the client is gone */
			epoll_ctl(s->ep, EPOLL_CTL_DEL, conns[i][1], NULL);
			close(conns[i][1]);
			s->live--;
			last_was_send = 0;
			continue;
		}
		s->back_to_back += last_was_send;
		if (r != (ssize_t)sizeof m)
			die("short request");
		if (m.value == SLOW) {
			render_font_slow();
			rebuilt = m.seq;
		} else {
			m.value = render_glyphs(m.seq);
		}
		if (sendmsg(conns[i][1], &mh, MSG_NOSIGNAL) != (ssize_t)sizeof m)
			die_sys("sendmsg");
		last_was_send = 1;
		served++;
	}
	s->turns++;
	s->requests += served;
	s->batched += served >= 2;
	if (rebuilt >= 0)
		notify_clients(s->notify_fd, rebuilt);
	return served;
}

static int fontd_main(void *arg)
{
	struct server s = {.live = NCONN};
	struct epoll_event ev[NCONN];

	(void)arg;
	if ((s.ep = epoll_create1(0)) < 0 || (s.notify_fd = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0)
		die_sys("epoll_create1/socket");
	keep_fds(conns[0][1], conns[1][1], conns[2][1], s.ep, s.notify_fd);
	gt_self("SERVER");
	for (uint32_t i = 0; i < NCONN; i++) {
		struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
		if (epoll_ctl(s.ep, EPOLL_CTL_ADD, conns[i][1], &e))
			die_sys("epoll_ctl");
	}
	while (s.live > 0) {
		int n = epoll_wait(s.ep, ev, NCONN, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_sys("epoll_wait");
		serve_turn(&s, ev, n);
	}
	gt("SERVER_TURNS=%d", s.turns);
	gt("SERVER_REQUESTS=%d", s.requests);
	gt("SERVER_BATCHED_TURNS=%d", s.batched);
	gt("SERVER_BACK_TO_BACK=%d", s.back_to_back);
	gt("SERVER_SENDMMSG_MSGS=%d", NCONN);
	if (!s.back_to_back)
		die("no turn had a sendmsg and a recvmsg back to back");
	return 0;
}

/* --- client1 / client2 and the editor ------------------------------------ */

/* A synchronous request to fontd: write, then block in read(). */
CASE_FN int fontd_request(int idx, int seq, int kind)
{
	struct case_msg r;

	send_msg(conns[idx][0], seq, 'g', kind);
	if (!recv_msg(conns[idx][0], &r) || r.seq != seq)
		die("no reply from fontd");
	return r.value;
}

static void drain_notifications(int fd, int *count)
{
	struct case_msg note;

	while (recv(fd, &note, sizeof note, MSG_DONTWAIT) > 0)
		(*count)++;
}

static int client_main(void *arg)
{
	int idx = (int)(intptr_t)arg, trig = idx == 0 ? trigger[0] : -1, notes = 0;
	char key[32];

	keep_fds(conns[idx][0], notif[idx], quit_pipe[0], trig);
	snprintf(key, sizeof key, "CLIENT%d", idx + 1);
	gt_self(key);
	for (int seq = 0;;) {
		struct pollfd p[3] = {{quit_pipe[0], POLLIN, 0}, {notif[idx], POLLIN, 0}, {trig, POLLIN, 0}};
		int n = poll(p, 3, CLIENT_EVERY_MS), slow = 0;
		char c;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_sys("poll");
		if (p[0].revents)
			break;
		if (p[1].revents)
			drain_notifications(notif[idx], &notes);
		if (p[2].revents && !(slow = read(trig, &c, 1) == 1)) {
			close(trig); /* the feeder is done */
			trig = -1;
		}
		if (n == 0 || slow)
			fontd_request(idx, seq++, slow ? SLOW : 0);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', 2900);
	struct ui_stats st = {0};
	pid_t fontd, client[2], feeder;
	int rc = 0, notes = 0;
	char c;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: case_batching\n");
		return 2;
	}
	become("editor");
	for (int i = 0; i < NCONN; i++) {
		struct sockaddr_un *a = &notif_addr[i];
		a->sun_family = AF_UNIX;
		/* abstract address: a leading NUL, no file */
		int len = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "argus-case-fontd-%d-%d",
				   getpid(), i);
		notif_len[i] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, conns[i]) ||
		    (notif[i] = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 ||
		    bind(notif[i], (struct sockaddr *)a, notif_len[i]))
			die_sys("client sockets");
	}
	if (pipe(quit_pipe) || pipe(trigger))
		die_sys("pipe");
	fontd = spawn("fontd", fontd_main, NULL);
	client[0] = spawn("client1", client_main, (void *)(intptr_t)0);
	client[1] = spawn("client2", client_main, (void *)(intptr_t)1);
	f.hook_fd = trigger[1];
	f.hook_lead_ms = 50;
	feeder = spawn_feeder(&f);
	keep_fds(conns[EDITOR][0], notif[EDITOR], quit_pipe[1], f.rfd);
	gt_self("UI");
	gt_self("EDITOR");
	gt("CLIENT_PIDS=%d,%d,%d", client[0], client[1], getpid());
	gt("SLOW_CLIENT_PID=%d", client[0]);

	for (int seq = 0;;) {
		struct pollfd p[2] = {{f.rfd, POLLIN, 0}, {notif[EDITOR], POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_sys("poll");
		}
		if (p[1].revents)
			drain_notifications(notif[EDITOR], &notes);
		if (!p[0].revents)
			continue;
		if (!(c = read_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		fontd_request(EDITOR, seq++, 0);
		stats_add(&st, c == 'H', t0, now_ns());
	}

	close(quit_pipe[1]);      /* client1 and client2 quit */
	close(conns[EDITOR][0]); /* fontd quits once every client is gone */
	rc |= reap(client[0], "client1");
	rc |= reap(client[1], "client2");
	rc |= reap(fontd, "fontd");
	rc |= reap(feeder, "input_feeder");

	gt("EXPECT_KIND=blocked");
	gt("CULPRIT_PID=%d", fontd);
	gt("CULPRIT_TID=%d", fontd);
	gt("CULPRIT_COMM=fontd");
	gt("CULPRIT_KIND=busy");
	gt("CHAIN=%d", fontd);
	gt("HOT_FUNCTION=render_font_slow");
	gt("HOT_FUNCTION_ADDR=%p", (void *)render_font_slow);
	gt("EDITOR_NOTIFICATIONS=%d", notes);
	rc |= stats_report(&st, CASE_HANG_MIN_NS);
	return rc;
}
