/* test_live_holders - the live holder sources (docs/diagnosis.md "Live
 * holders"): what the CLI reads from /proc, and what the diagnosis does
 * with the answers.
 *
 *   1. the CLI's readers (cli/proc_tcp.c, proc_task.c, proc_locks.c,
 *      proc_holders.c): /proc/net/tcp and tcp6 text fixtures given to the
 *      parser (x86: the tables print addresses as native u32s), a real
 *      loopback connection between this process and a child (the
 *      listener before accept(), the accepted socket after), real
 *      children for wait4's pid argument, a child stopped by SIGSTOP and
 *      one in our own ptrace stop, a PI futex held by one thread with
 *      another waiting, and diag_front_live's dispatch;
 *   2. the diagnosis with a mock argus_live_fn on small synthetic traces
 *      (tests/gen): a shell blocked in wait4 names its child (rule child,
 *      source children), one the trace never saw, the child stopped by a
 *      signal or held by another tracer; a client blocked in recvfrom on
 *      a loopback TCP connection names the server (source tcp-peer) and
 *      goes on to the server's own wait; a futex owner named from a PI
 *      word; the older holders callback behind a live one that does not
 *      answer;
 *   3. the report: `"live":{"source":...}` in diagnose --json and the
 *      "(live: ...)" note of the text, through diag_run on the wait4
 *      trace, and diag_front_fjson_live's shapes.
 * Every child is killed and reaped by pid.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "diag_front.h"
#include "diag_run.h"
#include "graph_open.h"
#include "trace_format.h"
#include "tracegen.h"
/* scenario.h's helpers this file does not need (seg, leave, wake...) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "scenario.h"
#pragma GCC diagnostic pop

/* linux/futex.h's, which scenario.h's own FUTEX_*_OP names clash with */
#define FUTEX_LOCK_PI_PRIVATE (6 | 128)
#define FUTEX_UNLOCK_PI_PRIVATE (7 | 128)
#define FUTEX_WAITERS 0x80000000u

static bool has(const uint32_t *pids, uint32_t n, uint32_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* a packed TCP end as the trace keeps it: ip (host order) << 16 | port */
static uint64_t end_of(uint32_t ip, unsigned port)
{
	return (uint64_t)ip << 16 | port;
}

#define LO 0x7f000001u          /* 127.0.0.1 */

/* ---- 1. the CLI's readers -------------------------------------------- */

static const char TCP4[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	/* a server on 127.0.0.1:8080, its accepted connection from :40000, the client's end */
	"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0\n"
	"   1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1\n"
	"   2: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 3333 1 0000000000000000 20 4 30 10 -1\n"
	/* 8081 on the wildcard; a connection to it not accepted yet (inode 0) */
	"   3: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0\n"
	"   4: 0100007F:1F91 0100007F:9C41 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1\n"
	/* an external address with our ports: not loopback, never the peer */
	"   5: 0500000A:1F93 0100007F:9C43 01 00000000:00000000 00:00000000 00000000     0        0 7777 1 0000000000000000 20 4 30 10 -1\n";

static const char TCP6[] =
	"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	/* ::1 port 8082 <- ::1 port 40002 */
	"   0: 00000000000000000000000001000000:1F92 00000000000000000000000001000000:9C42 01 00000000:00000000 00:00000000 00000000  1000        0 5555 1 0000000000000000 20 4 30 10 -1\n"
	/* ::ffff:127.0.0.1 port 8083 <- 127.0.0.1 port 40003 (a v4 client) */
	"   1: 0000000000000000FFFF00000100007F:1F93 0000000000000000FFFF00000100007F:9C43 01 00000000:00000000 00:00000000 00000000  1000        0 6666 1 0000000000000000 20 4 30 10 -1\n"
	/* 2001:db8::1 port 8084: its last word is ::1's, but not loopback */
	"   2: B80D0120000000000000000001000000:1F94 00000000000000000000000001000000:9C44 01 00000000:00000000 00:00000000 00000000  1000        0 8888 1 0000000000000000 20 4 30 10 -1\n";

static int find_in(const char *text, uint64_t local, uint64_t remote, struct diag_tcp_end *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	if (!f)
		return -errno;
	rc = diag_front_tcp_find(f, local, remote, e);
	fclose(f);
	return rc;
}

static void TEST_tcp_tables_name_the_other_end_then_the_listener(void)
{
	struct diag_tcp_end e;

	CHECK(diag_front_tcp_loopback(end_of(LO, 1)));
	CHECK(diag_front_tcp_loopback(end_of(0x7f0000fe, 1)));   /* 127.0.0.254 */
	CHECK(diag_front_tcp_loopback(end_of(1, 1)));            /* ::1's last word */
	CHECK(!diag_front_tcp_loopback(end_of(0x0a000005, 1)));  /* 10.0.0.5 */
	/* the client 127.0.0.1:40000 -> :8080 waits: the accepted socket */
	memset(&e, 0, sizeof(e));
	CHECK_EQ(find_in(TCP4, end_of(LO, 40000), end_of(LO, 8080), &e), 0);
	CHECK_EQ(e.inode, 2222);
	CHECK_EQ(e.listener, 0);
	/* the server's accepted socket waits: the client's end */
	CHECK_EQ(find_in(TCP4, end_of(LO, 8080), end_of(LO, 40000), &e), 0);
	CHECK_EQ(e.inode, 3333);
	/* not accepted yet (inode 0): the wildcard listener on 8081 */
	CHECK_EQ(find_in(TCP4, end_of(LO, 40001), end_of(LO, 8081), &e), 0);
	CHECK_EQ(e.inode, 4444);
	CHECK_EQ(e.listener, 1);
	/* the external address's line is never the other end */
	CHECK_EQ(find_in(TCP4, end_of(LO, 40003), end_of(0x0a000005, 8083), &e), -ENOENT);
	CHECK_EQ(find_in(TCP4, end_of(LO, 40009), end_of(LO, 8089), &e), -ENOENT);
	/* tcp6: ::1, and a v4-mapped server end */
	CHECK_EQ(find_in(TCP6, end_of(1, 40002), end_of(1, 8082), &e), 0);
	CHECK_EQ(e.inode, 5555);
	CHECK_EQ(e.listener, 0);
	CHECK_EQ(find_in(TCP6, end_of(LO, 40003), end_of(LO, 8083), &e), 0);
	CHECK_EQ(e.inode, 6666);
	/* 2001:db8::1 shares ::1's last 32 bits: not taken for it */
	CHECK_EQ(find_in(TCP6, end_of(1, 40004), end_of(1, 8084), &e), -ENOENT);
	/* garbage and an empty table */
	CHECK_EQ(find_in("not a table\n1: zz:zz\n", end_of(LO, 1), end_of(LO, 2), &e), -ENOENT);
	CHECK_EQ(diag_front_tcp_find(NULL, 1, 2, &e), -EINVAL);
}

static void TEST_real_loopback_connection_listener_then_accepted_socket(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(LO) };
	socklen_t al = sizeof(a);
	uint32_t pids[16], n;
	uint16_t cport = 0;
	int ls, as, ready[2];
	unsigned sport;
	bool listener;
	pid_t child;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(ls >= 0);
	CHECK_EQ(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(ls, 4), 0);
	CHECK_EQ(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	sport = ntohs(a.sin_port);
	CHECK_EQ(pipe(ready), 0);
	child = fork();
	if (child == 0) {       /* connects, says its port, waits */
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);
		int s = socket(AF_INET, SOCK_STREAM, 0);

		close(ls);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(s, (struct sockaddr *)&me, &ml))
			_exit(1);
		cport = ntohs(me.sin_port);
		if (write(ready[1], &cport, sizeof(cport)) != sizeof(cport))
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	if (child <= 0)
		return;
	close(ready[1]);
	CHECK_EQ(read(ready[0], &cport, sizeof(cport)), (long)sizeof(cport));
	/* not accepted: the listening socket, which this process holds */
	n = diag_front_tcp_peer_holders(end_of(LO, cport), end_of(LO, sport), pids, 16, &listener);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, (uint32_t)getpid()));
	CHECK_EQ(listener, 1);
	as = accept(ls, NULL, NULL);
	CHECK(as >= 0);
	n = diag_front_tcp_peer_holders(end_of(LO, cport), end_of(LO, sport), pids, 16, &listener);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, (uint32_t)getpid()));
	CHECK_EQ(listener, 0);
	/* the other way round: the server's socket waits for the client */
	n = diag_front_tcp_peer_holders(end_of(LO, sport), end_of(LO, cport), pids, 16, &listener);
	CHECK_EQ(n, 1);
	CHECK(has(pids, n, (uint32_t)child));
	CHECK_EQ(listener, 0);
	/* the same through the live callback, as the diagnosis asks it */
	{
		struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_HOLDERS,
					      .obj_kind = AE_OBJ_TCP, .obj = end_of(LO, sport),
					      .peer = end_of(LO, cport) };
		struct argus_live_answer ans = { .sz = sizeof(ans) };

		CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
		CHECK_EQ(ans.source, ARGUS_LIVE_TCP_PEER);
		CHECK_EQ(ans.n, 1);
		CHECK_EQ(ans.pids[0], child);
	}
	/* not loopback: not looked up */
	CHECK_EQ(diag_front_tcp_peer_holders(end_of(0x0a000001, cport), end_of(LO, sport), pids, 16,
					   &listener), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(as);
	close(ls);
	close(ready[0]);
}

static uint32_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint32_t)st.st_ino;
}

/* A unix connection the server has not accepted: the listener in whose
 * queue it waits is found by the client's inode (sock_diag), for an
 * abstract name as for a path; once accepted, no listener has it.  The
 * live callback answers a wait with peer 0 (what the trace records for
 * an embryo) by the listener's holder, source unix-listener. */
static void TEST_real_unaccepted_unix_connection_names_its_listener(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int ls, c, as;
	uint32_t lst = 0;

	/* abstract: "\0argus-test-<pid>" */
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "argus-test-%d", (int)getpid());
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(ls >= 0 && c >= 0);
	CHECK_EQ(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(ls, 4), 0);
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(diag_front_unix_listener(ino_of(c), &lst), 0);
	CHECK_EQ(lst, ino_of(ls));
	/* the listener itself, and a socket nobody connected, are in no queue */
	CHECK_EQ(diag_front_unix_listener(ino_of(ls), &lst), -ENOENT);
	CHECK_EQ(diag_front_unix_listener(0, &lst), -EINVAL);
	{
		struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_HOLDERS,
					      .obj_kind = AE_OBJ_UNIX, .obj = ino_of(c), .peer = 0 };
		struct argus_live_answer ans = { .sz = sizeof(ans) };

		CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
		CHECK_EQ(ans.source, ARGUS_LIVE_UNIX_LISTENER);
		CHECK_EQ(ans.n, 1);
		CHECK_EQ(ans.pids[0], (uint32_t)getpid());
	}
	as = accept(ls, NULL, NULL);
	CHECK(as >= 0);
	CHECK_EQ(diag_front_unix_listener(ino_of(c), &lst), -ENOENT);
	{
		/* accepted: the peer's holder, as before */
		struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_HOLDERS,
					      .obj_kind = AE_OBJ_UNIX, .obj = ino_of(c),
					      .peer = ino_of(as) };
		struct argus_live_answer ans = { .sz = sizeof(ans) };

		CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
		CHECK_EQ(ans.source, ARGUS_LIVE_FD_PEER);
		CHECK_EQ(ans.n, 1);
	}
	close(as);
	close(c);
	close(ls);
}

static void TEST_stat_fields_after_a_comm_with_parentheses(void)
{
	char st = 0;
	long ppid = 0, pgrp = 0;

	CHECK_EQ(diag_front_parse_stat("1234 (a) b) c) S 1 1234 1234 0 -1 4194560", &st, &ppid, &pgrp), 0);
	CHECK_EQ(st, 'S');
	CHECK_EQ(ppid, 1);
	CHECK_EQ(pgrp, 1234);
	CHECK_EQ(diag_front_parse_stat("77 (sleep) T 70 77 70", &st, NULL, NULL), 0);
	CHECK_EQ(st, 'T');
	CHECK_EQ(diag_front_parse_stat("77 sleep T 70", &st, NULL, NULL), -EINVAL);
	CHECK_EQ(diag_front_parse_stat(NULL, &st, NULL, NULL), -EINVAL);
}

static pid_t sleeper(bool own_group)
{
	pid_t c = fork();

	if (c == 0) {
		if (own_group)
			setpgid(0, 0);
		pause();
		_exit(0);
	}
	if (c > 0 && own_group)
		setpgid(c, c);  /* both sides: no race with the check */
	return c;
}

static void TEST_children_for_wait4_pid_argument(void)
{
	uint32_t pids[16], n;
	pid_t a = sleeper(false), b = sleeper(true), z = fork();

	if (z == 0)
		_exit(0);       /* a zombie: wait4 would not block on it */
	CHECK(a > 0 && b > 0 && z > 0);
	usleep(100000);         /* z has exited */
	n = diag_front_proc_children((uint32_t)getpid(), -1, pids, 16);
	CHECK_EQ(n, 2);
	CHECK(has(pids, n, (uint32_t)a));
	CHECK(has(pids, n, (uint32_t)b));
	CHECK(!has(pids, n, (uint32_t)z));
	CHECK_EQ(diag_front_proc_children((uint32_t)getpid(), ARGUS_ASK_ANY_CHILD, pids, 16), 2);
	/* wait4(b): that one */
	n = diag_front_proc_children((uint32_t)getpid(), b, pids, 16);
	CHECK_EQ(n, 1);
	CHECK_EQ(pids[0], b);
	/* wait4(0): our group's (a), wait4(-b): b's group's */
	n = diag_front_proc_children((uint32_t)getpid(), 0, pids, 16);
	CHECK_EQ(n, 1);
	CHECK_EQ(pids[0], a);
	n = diag_front_proc_children((uint32_t)getpid(), -(int64_t)b, pids, 16);
	CHECK_EQ(n, 1);
	CHECK_EQ(pids[0], b);
	/* the zombie named: nobody to wait for; max bounds the answer */
	CHECK_EQ(diag_front_proc_children((uint32_t)getpid(), z, pids, 16), 0);
	CHECK_EQ(diag_front_proc_children((uint32_t)getpid(), -1, pids, 1), 1);
	/* through the live callback */
	{
		struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_CHILDREN,
					      .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
					      .arg = a };
		struct argus_live_answer ans = { .sz = sizeof(ans) };

		CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
		CHECK_EQ(ans.source, ARGUS_LIVE_CHILDREN);
		CHECK_EQ(ans.n, 1);
		CHECK_EQ(ans.pids[0], a);
	}
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	waitpid(z, NULL, 0);
}

static void TEST_stopped_by_a_signal_and_in_our_own_ptrace_stop(void)
{
	pid_t c = sleeper(false);
	uint8_t stop = 9;
	uint32_t tracer = 9;
	int st;
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_THREAD, .pid = (uint32_t)c,
				      .tid = (uint32_t)c };
	struct argus_live_answer ans = { .sz = sizeof(ans) };

	CHECK(c > 0);
	if (c <= 0)
		return;
	usleep(50000);
	CHECK_EQ(diag_front_proc_thread_state((uint32_t)c, (uint32_t)c, &stop, &tracer), 0);
	CHECK_EQ(stop, ARGUS_LIVE_RUNNING);
	CHECK_EQ(tracer, 0);
	kill(c, SIGSTOP);
	CHECK_EQ(waitpid(c, &st, WUNTRACED), c);
	CHECK_EQ(diag_front_proc_thread_state((uint32_t)c, (uint32_t)c, &stop, &tracer), 0);
	CHECK_EQ(stop, ARGUS_LIVE_STOP_SIGNAL);
	CHECK_EQ(tracer, 0);
	kill(c, SIGCONT);
	/* in our ptrace stop: TracerPid is us, which the live callback
	 * answers as no tracer (the user's own debugger) */
	CHECK_EQ(ptrace(PTRACE_SEIZE, c, 0, 0), 0);
	CHECK_EQ(ptrace(PTRACE_INTERRUPT, c, 0, 0), 0);
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK_EQ(diag_front_proc_thread_state((uint32_t)c, (uint32_t)c, &stop, &tracer), 0);
	CHECK_EQ(stop, ARGUS_LIVE_STOP_PTRACE);
	CHECK_EQ(tracer, getpid());
	CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
	CHECK_EQ(ans.stop, ARGUS_LIVE_STOP_PTRACE);
	CHECK_EQ(ans.tracer, 0);
	CHECK(diag_front_pid_is_ours((uint32_t)getpid()));
	CHECK(diag_front_pid_is_ours((uint32_t)getppid()));
	CHECK(diag_front_pid_is_ours((uint32_t)c));
	CHECK(!diag_front_pid_is_ours(1));
	CHECK(!diag_front_pid_is_ours(0));
	ptrace(PTRACE_DETACH, c, 0, 0);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	CHECK(diag_front_proc_thread_state((uint32_t)c, (uint32_t)c, &stop, &tracer) < 0);
}

/* ---- a PI futex: one thread holds it, another waits in the kernel ----- */

static uint32_t pi_word;
static volatile uint32_t holder_tid;
static int pi_hold[2];

static long futex(uint32_t *w, int op)
{
	return syscall(SYS_futex, w, op, 0, NULL, NULL, 0);
}

static void *pi_holder(void *arg)
{
	char c;

	(void)arg;
	holder_tid = (uint32_t)syscall(SYS_gettid);
	if (futex(&pi_word, FUTEX_LOCK_PI_PRIVATE))
		return NULL;
	if (read(pi_hold[0], &c, 1) != 1)       /* until told to let go */
		return NULL;
	futex(&pi_word, FUTEX_UNLOCK_PI_PRIVATE);
	return NULL;
}

static void *pi_waiter(void *arg)
{
	(void)arg;
	if (!futex(&pi_word, FUTEX_LOCK_PI_PRIVATE))
		futex(&pi_word, FUTEX_UNLOCK_PI_PRIVATE);
	return NULL;
}

static void TEST_pi_futex_owner_is_the_tid_in_the_word_once_someone_waits(void)
{
	pthread_t h, w;
	uint32_t owner = 0, plain = 2;
	uint64_t uaddr = (uint64_t)(uintptr_t)&pi_word;
	struct argus_live_query q = { .sz = sizeof(q), .ask = ARGUS_ASK_LOCK_OWNER,
				      .pid = (uint32_t)getpid(), .arg = (int64_t)uaddr };
	struct argus_live_answer ans = { .sz = sizeof(ans) };

	CHECK_EQ(pipe(pi_hold), 0);
	CHECK_EQ(pthread_create(&h, NULL, pi_holder, NULL), 0);
	for (int i = 0; i < 200 && (pi_word & 0x3fffffff) == 0; i++)
		usleep(5000);
	CHECK_EQ(pi_word & 0x3fffffff, holder_tid);
	/* held, nobody waiting yet: no waiters bit, no answer */
	CHECK_EQ(diag_front_pi_owner((uint32_t)getpid(), uaddr, &owner), -ENOENT);
	CHECK_EQ(pthread_create(&w, NULL, pi_waiter, NULL), 0);
	for (int i = 0; i < 200 && !(pi_word & FUTEX_WAITERS); i++)
		usleep(5000);
	CHECK_EQ(diag_front_pi_owner((uint32_t)getpid(), uaddr, &owner), 0);
	CHECK_EQ(owner, holder_tid);
	/* the live callback: not a glibc mutex (no __owner), a PI futex */
	CHECK_EQ(diag_front_live(NULL, &q, &ans), 0);
	CHECK_EQ(ans.source, ARGUS_LIVE_PI_OWNER);
	CHECK_EQ(ans.n, 1);
	CHECK_EQ(ans.pids[0], holder_tid);
	/* a plain mutex word (2: locked, contended) is no PI futex */
	CHECK_EQ(diag_front_pi_owner((uint32_t)getpid(), (uint64_t)(uintptr_t)&plain, &owner), -ENOENT);
	CHECK_EQ(write(pi_hold[1], "x", 1), 1);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	close(pi_hold[0]);
	close(pi_hold[1]);
}

static void TEST_live_callback_refuses_short_structs_and_unknown_asks(void)
{
	struct argus_live_query q = { .sz = sizeof(q), .ask = 99 };
	struct argus_live_answer ans = { .sz = sizeof(ans) };

	CHECK_EQ(diag_front_live(NULL, &q, &ans), -EOPNOTSUPP);
	q.ask = ARGUS_ASK_HOLDERS;
	q.obj_kind = AE_OBJ_EVENTFD;
	CHECK_EQ(diag_front_live(NULL, &q, &ans), -ENOENT);
	q.sz = 8;
	CHECK_EQ(diag_front_live(NULL, &q, &ans), -EINVAL);
	q.sz = sizeof(q);
	ans.sz = 8;
	CHECK_EQ(diag_front_live(NULL, &q, &ans), -EINVAL);
}

/* ---- 2. the diagnosis with a mock live system ------------------------ */

#define SH 200          /* "sh": blocked in wait4 */
#define CHILD 201       /* "sleep": its child, asleep */
#define GDB 300         /* "gdb": a tracer of the child's */
#define CL 400          /* "client": recvfrom on a loopback TCP connection */
#define SV 401          /* "server": the other end, itself reading a pipe */
#define WR 402          /* "writer": holds the pipe's other end */
#define OWNER 403       /* a thread of the client's process holding a PI futex */
#define BYST 500        /* "top": ends the trace */
#define NOT_TRACED 777  /* a child the trace never saw */
#define PIPE_INO 9001
#define FUTEX_ADDR 0x7f0000001000ull

struct live_mock {
	unsigned asks[8];               /* how often each ask came */
	int64_t child_arg;              /* ARGUS_ASK_CHILDREN's arg */
	uint32_t child;                 /* its answer, 0 none */
	uint64_t tcp_obj, tcp_peer;     /* ARGUS_ASK_HOLDERS of AE_OBJ_TCP */
	uint32_t stopped_tid;           /* ARGUS_ASK_THREAD: this one is... */
	uint8_t stop;                   /* ...stopped so */
	uint32_t tracer;                /* ...by this tracer */
	uint32_t hang_tracer;           /* the hung thread's tracer */
	bool no_answer;                 /* -EOPNOTSUPP to every ask */
};

static int mock_live(void *ctx, const struct argus_live_query *q, struct argus_live_answer *a)
{
	struct live_mock *m = ctx;

	if (q->ask < 8)
		m->asks[q->ask]++;
	if (m->no_answer)
		return -EOPNOTSUPP;
	switch (q->ask) {
	case ARGUS_ASK_CHILDREN:
		m->child_arg = q->arg;
		if (q->pid != SH || !m->child)
			return -ENOENT;
		a->pids[a->n++] = m->child;
		a->source = ARGUS_LIVE_CHILDREN;
		return 0;
	case ARGUS_ASK_HOLDERS:
		if (q->obj_kind == AE_OBJ_TCP) {
			m->tcp_obj = q->obj;
			m->tcp_peer = q->peer;
			a->pids[a->n++] = SV;
			a->source = ARGUS_LIVE_TCP_PEER;
			return 0;
		}
		if (q->obj_kind == AE_OBJ_PIPE && q->obj == PIPE_INO) {
			a->pids[a->n++] = SV;   /* the reader's own end: skipped */
			a->pids[a->n++] = WR;
			a->source = ARGUS_LIVE_FD_PEER;
			return 0;
		}
		return -ENOENT;
	case ARGUS_ASK_LOCK_OWNER:
		if (q->pid != CL || (uint64_t)q->arg != FUTEX_ADDR)
			return -ENOENT;
		a->pids[a->n++] = OWNER;
		a->source = ARGUS_LIVE_PI_OWNER;
		return 0;
	case ARGUS_ASK_THREAD:
		if (q->tid == SH || q->tid == CL)
			a->tracer = m->hang_tracer;
		if (q->tid == m->stopped_tid) {
			a->stop = m->stop;
			a->tracer = m->tracer;
		}
		return 0;
	}
	return -EOPNOTSUPP;
}

/* The older callback, for the fallback. */
static unsigned holders_calls;

static uint32_t mock_holders(void *ctx, unsigned kind, uint64_t obj, uint32_t *pids, uint32_t max)
{
	(void)ctx;
	holders_calls++;
	if (kind != AE_OBJ_PIPE || obj != PIPE_INO || max < 2)
		return 0;
	pids[0] = SV;
	pids[1] = WR;
	return 2;
}

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_live_holders", &o);
}

static void task(uint32_t tid, uint32_t pid, uint32_t ppid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, ppid, comm), "task", T0);
}

static void end(void)
{
	scenario_end();
}

/* The trace ends at 3 s: a bystander's syscall. */
static void trace_end(void)
{
	run(AT(3000000), 3, BYST);
	enter(AT(3000010), 3, BYST, SYS_getpid, 0, 0);
}

/*
 * sh (200) forked its child sleep (201) before the trace and waits for it
 * in wait4(wpid) from 10 µs on; sleep is asleep in clock_nanosleep from
 * 50 µs; gdb (300) polls from 70 µs.  The trace ends at 3 s with both
 * still waiting: a wait4 hang of 3 s, still going.
 */
static void shell_waits(int32_t wpid)
{
	begin();
	task(SH, SH, 1, "sh");
	task(CHILD, CHILD, SH, "sleep");
	task(GDB, GDB, 1, "gdb");
	task(BYST, BYST, 1, "top");
	run(AT(0), 0, SH);
	enter(AT(10), 0, SH, SYS_wait4, (uint64_t)(int64_t)wpid, 0);
	block(AT(20), 0, SH, SYS_wait4, 0, AE_OBJ_NONE, 0, 0);
	run(AT(30), 1, CHILD);
	enter(AT(40), 1, CHILD, SYS_clock_nanosleep, 0, 0);
	block(AT(50), 1, CHILD, SYS_clock_nanosleep, 9000000000ull, AE_OBJ_NONE, 0, 0);
	run(AT(60), 2, GDB);
	enter(AT(65), 2, GDB, SYS_poll, 0, 1);
	block(AT(70), 2, GDB, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	trace_end();
}

static bool diagnose_pid(uint32_t pid, const struct argus_diag_opts *o, struct argus_diagnosis *d)
{
	struct argus_hang_opts ho = { .sz = sizeof(ho), .pid = pid };
	struct argus_hang *h = NULL;
	uint32_t n = 0;
	int rc = argus_diag__hangs(graph, &ho, &h, &n);

	CHECK_EQ(rc, 0);
	CHECK_EQ(n, 1);
	if (rc || n != 1) {
		free(h);
		return false;
	}
	CHECK_EQ(h[0].ongoing, 1);
	CHECK_EQ(argus_diag__diagnose(graph, &h[0], o, d), 0);
	free(h);
	return true;
}

static void TEST_wait4_names_the_child_from_live_children(void)
{
	struct live_mock m = { .child = CHILD };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	shell_waits(-1);
	if (!scenario_build(NULL) || !diagnose_pid(SH, &o, &d))
		goto out;
	CHECK_EQ(m.asks[ARGUS_ASK_CHILDREN], 1);
	CHECK_EQ(m.child_arg, -1);              /* wait4(-1, ...): any child */
	CHECK_EQ(d.nchain, 1);                  /* sleep waits for no one */
	CHECK_EQ(d.chain[0].tid, CHILD);
	CHECK_EQ(d.chain[0].pid, CHILD);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_CHILD);
	CHECK_EQ(d.chain[0].live_source, ARGUS_LIVE_CHILDREN);
	CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_RUNNING);
	CHECK_EQ(d.chain[0].live_only, 0);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(d.chain[0].wait_nr, SYS_clock_nanosleep);
	CHECK_EQ(d.chain[0].holder, 0);
	CHECK_EQ(d.normal_seg, NONE);
	CHECK(!strcmp(argus_culprit_rule_str(ARGUS_RULE_CHILD), "child"));
	CHECK(!strcmp(argus_live_source_str(ARGUS_LIVE_CHILDREN), "children"));
	/* each entry, and the hung thread once, was asked whether it is stopped */
	CHECK_EQ(m.asks[ARGUS_ASK_THREAD], 2);
out:
	end();
}

static void TEST_wait4_for_one_pid_asks_for_that_child(void)
{
	struct live_mock m = { .child = CHILD };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	shell_waits(CHILD);
	if (!scenario_build(NULL) || !diagnose_pid(SH, &o, &d))
		goto out;
	CHECK_EQ(m.child_arg, CHILD);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, CHILD);
out:
	end();
}

/* Without the live system (a saved trace) nobody is named, as before. */
static void TEST_wait4_without_live_names_no_child(void)
{
	struct argus_diagnosis d;

	shell_waits(-1);
	if (!scenario_build(NULL) || !diagnose_pid(SH, NULL, &d))
		goto out;
	for (uint32_t i = 0; i < d.nchain; i++) {
		CHECK(d.chain[i].rule != ARGUS_RULE_CHILD);
		CHECK_EQ(d.chain[i].live_source, ARGUS_LIVE_NONE);
	}
out:
	end();
}

static void TEST_a_child_the_trace_never_saw_is_named_live_only(void)
{
	struct live_mock m = { .child = NOT_TRACED };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	shell_waits(-1);
	if (!scenario_build(NULL) || !diagnose_pid(SH, &o, &d))
		goto out;
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, NOT_TRACED);
	CHECK_EQ(d.chain[0].pid, NOT_TRACED);
	CHECK_EQ(d.chain[0].live_only, 1);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_NONE);
	CHECK_EQ(d.chain[0].seg, NONE);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_CHILD);
	CHECK_EQ(d.chain[0].live_source, ARGUS_LIVE_CHILDREN);
out:
	end();
}

static void TEST_stopped_child_is_noted_and_another_tracer_is_named(void)
{
	struct live_mock m = { .child = CHILD, .stopped_tid = CHILD,
			       .stop = ARGUS_LIVE_STOP_SIGNAL };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	shell_waits(-1);
	if (!scenario_build(NULL))
		goto out;
	/* SIGSTOP: noted, nobody more */
	if (diagnose_pid(SH, &o, &d)) {
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].tid, CHILD);
		CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_STOP_SIGNAL);
		CHECK_EQ(d.chain[0].live_tracer, 0);
	}
	/* a ptrace stop by gdb (a debugger: a tool, never blamed for what
	 * it is asked about, but here it holds the child stopped) */
	m.stop = ARGUS_LIVE_STOP_PTRACE;
	m.tracer = GDB;
	if (diagnose_pid(SH, &o, &d)) {
		CHECK_EQ(d.nchain, 2);
		CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_STOP_PTRACE);
		CHECK_EQ(d.chain[0].live_tracer, GDB);
		CHECK_EQ(d.chain[1].tid, GDB);
		CHECK_EQ(d.chain[1].rule, ARGUS_RULE_TRACER);
		CHECK_EQ(d.chain[1].live_source, ARGUS_LIVE_TRACER);
		CHECK_EQ(d.chain[1].kind, ARGUS_KIND_BLOCKED);
		CHECK(!strcmp(argus_culprit_rule_str(ARGUS_RULE_TRACER), "tracer"));
	}
	/* the same tracer holds the hung shell too: the user's debugger */
	m.hang_tracer = GDB;
	if (diagnose_pid(SH, &o, &d)) {
		CHECK_EQ(d.live_hang_tracer, GDB);
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_RUNNING);
	}
	/* a ptrace stop by the caller itself (tracer 0): no cause either */
	m.hang_tracer = 0;
	m.tracer = 0;
	if (diagnose_pid(SH, &o, &d)) {
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_RUNNING);
	}
out:
	end();
}

#define CL_END end_of(LO, 40000)
#define SV_END end_of(LO, 8080)

/*
 * client (400) blocked in recvfrom on its loopback TCP connection to the
 * server from 20 µs; the server (401) blocked reading a pipe from 40 µs,
 * whose other end the writer (402) holds, polling from 60 µs.  The
 * client's process has a second thread (403), asleep in poll.
 */
static void client_waits(bool futex_wait)
{
	begin();
	task(CL, CL, 1, "client");
	task(OWNER, CL, 1, "client");
	task(SV, SV, 1, "server");
	task(WR, WR, 1, "writer");
	task(BYST, BYST, 1, "top");
	run(AT(0), 0, CL);
	if (futex_wait) {
		enter(AT(10), 0, CL, SYS_futex, FUTEX_ADDR, FUTEX_LOCK_PI_PRIVATE);
		block(AT(20), 0, CL, SYS_futex, FUTEX_ADDR, AE_OBJ_NONE, 0, 0);
	} else {
		enter(AT(10), 0, CL, SYS_recvfrom, 5, 0);
		block(AT(20), 0, CL, SYS_recvfrom, 5, AE_OBJ_TCP, CL_END, SV_END);
	}
	run(AT(30), 1, SV);
	enter(AT(35), 1, SV, SYS_read, 7, 0);
	block(AT(40), 1, SV, SYS_read, 7, AE_OBJ_PIPE, PIPE_INO, 0);
	run(AT(50), 2, WR);
	enter(AT(55), 2, WR, SYS_poll, 0, 1);
	block(AT(60), 2, WR, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	run(AT(70), 3, OWNER);
	enter(AT(75), 3, OWNER, SYS_poll, 0, 1);
	block(AT(80), 3, OWNER, SYS_poll, ~0ull, AE_OBJ_NONE, 0, 0);
	trace_end();
}

static void TEST_loopback_tcp_peer_then_its_own_pipe_wait(void)
{
	struct live_mock m = { 0 };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	client_waits(false);
	if (!scenario_build(NULL) || !diagnose_pid(CL, &o, &d))
		goto out;
	CHECK_EQ(m.tcp_obj, CL_END);            /* asked with both ends */
	CHECK_EQ(m.tcp_peer, SV_END);
	CHECK_EQ(d.nchain, 2);
	CHECK_EQ(d.chain[0].tid, SV);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_PEER);
	CHECK_EQ(d.chain[0].holder, 1);
	CHECK_EQ(d.chain[0].live_source, ARGUS_LIVE_TCP_PEER);
	CHECK_EQ(d.chain[0].wait_nr, SYS_read);
	/* the server's own wait, live too: the pipe's other holder */
	CHECK_EQ(d.chain[1].tid, WR);
	CHECK_EQ(d.chain[1].rule, ARGUS_RULE_PEER);
	CHECK_EQ(d.chain[1].live_source, ARGUS_LIVE_FD_PEER);
	/* stopped by a signal: the stop is why, its pipe is not followed */
	m.stopped_tid = SV;
	m.stop = ARGUS_LIVE_STOP_SIGNAL;
	if (diagnose_pid(CL, &o, &d)) {
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].tid, SV);
		CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_STOP_SIGNAL);
	}
out:
	end();
}

static void TEST_older_holders_answer_what_live_does_not(void)
{
	struct live_mock m = { .no_answer = true };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m,
				     .holders = mock_holders };
	struct argus_diagnosis d;

	client_waits(false);
	holders_calls = 0;
	if (!scenario_build(NULL) || !diagnose_pid(SV, &o, &d))
		goto out;
	/* TCP cannot go through the older callback; the pipe does */
	CHECK_EQ(holders_calls, 1);
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, WR);
	CHECK_EQ(d.chain[0].live_source, ARGUS_LIVE_FD_PEER);
	CHECK_EQ(d.chain[0].live_stop, ARGUS_LIVE_RUNNING);
out:
	end();
}

static void TEST_pi_owner_names_the_thread_holding_the_futex(void)
{
	struct live_mock m = { 0 };
	struct argus_diag_opts o = { .sz = sizeof(o), .live = mock_live, .live_ctx = &m };
	struct argus_diagnosis d;

	client_waits(true);
	if (!scenario_build(NULL) || !diagnose_pid(CL, &o, &d))
		goto out;
	CHECK_EQ(m.asks[ARGUS_ASK_LOCK_OWNER], 1);
	CHECK(d.nchain >= 1);
	CHECK_EQ(d.chain[0].tid, OWNER);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_MUTEX);
	CHECK_EQ(d.chain[0].live_source, ARGUS_LIVE_PI_OWNER);
out:
	end();
}

/* ---- 3. the report ---------------------------------------------------- */

static char *json_live(const struct argus_culprit *k)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	diag_front_fjson_live(f, k);
	fclose(f);
	return buf;
}

static bool json_is(const struct argus_culprit *k, const char *want)
{
	char *got = json_live(k);
	bool ok = got && !strcmp(got, want);

	if (!ok)
		fprintf(stderr, "  live JSON: %s, want %s\n", got ? got : "(none)", want);
	free(got);
	return ok;
}

static void TEST_json_live_shapes(void)
{
	struct argus_culprit k = { 0 };

	CHECK(json_is(&k, "null"));
	k.live_source = ARGUS_LIVE_LOCKS;
	CHECK(json_is(&k, "{\"source\":\"locks\"}"));
	k.live_source = ARGUS_LIVE_TCP_LISTENER;
	CHECK(json_is(&k, "{\"source\":\"tcp-listener\"}"));
	k.live_source = ARGUS_LIVE_NONE;
	k.live_stop = ARGUS_LIVE_STOP_SIGNAL;
	CHECK(json_is(&k, "{\"source\":null,\"stopped\":\"signal\"}"));
	k.live_source = ARGUS_LIVE_FD_PEER;
	k.live_stop = ARGUS_LIVE_STOP_PTRACE;
	k.live_tracer = 77;
	CHECK(json_is(&k, "{\"source\":\"fd-peer\",\"stopped\":\"ptrace\",\"tracer\":77}"));
	memset(&k, 0, sizeof(k));
	k.live_source = ARGUS_LIVE_CHILDREN;
	k.live_only = 1;
	CHECK(json_is(&k, "{\"source\":\"children\",\"in_trace\":false}"));
	/* every source has a name and a place it reads */
	for (unsigned s = ARGUS_LIVE_LOCKS; s < ARGUS_LIVE_SOURCE_MAX; s++) {
		CHECK(argus_live_source_str(s) != NULL);
		CHECK(diag_front_live_where(s) != NULL);
	}
	CHECK(argus_live_source_str(ARGUS_LIVE_NONE) == NULL);
	CHECK(argus_live_source_str(ARGUS_LIVE_SOURCE_MAX) == NULL);
}

/* diag_run's report of the wait4 trace: with the mock as the live
 * system, or (m NULL) as a saved trace, --no-live */
static char *report_of(const char *path, bool json, struct live_mock *m)
{
	char pid[16];
	char *argv[] = { "diagnose", (char *)path, "--pid", pid, m ? "--live" : "--no-live",
			 json ? "--json" : NULL, NULL };
	struct diag_front_opts o;
	struct graph_open_ctx c;
	struct diag_run run;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	snprintf(pid, sizeof(pid), "%u", SH);
	if (diag_front_parse("diagnose", json ? 6 : 5, argv, &o))
		return NULL;
	o.live_fn = m ? mock_live : NULL;
	o.live_ctx = m;
	if (graph_open_trace(&c, "diagnose", &o.g))
		return NULL;
	if (!(f = open_memstream(&buf, &len))) {
		graph_open_close(&c);
		return NULL;
	}
	rc = diag_run(&c, &o, NULL, 0, 0, f, &run);
	fclose(f);
	diag_run_free(&run);
	graph_open_close(&c);
	CHECK_EQ(rc, 0);
	return buf;
}

static void TEST_diagnose_json_and_report_say_which_source(void)
{
	struct live_mock m = { .child = CHILD };
	char *js = NULL, *txt = NULL, *saved = NULL;

	shell_waits(-1);
	if (!scenario_reopen())
		goto out;
	js = report_of(trace_path, true, &m);
	txt = report_of(trace_path, false, &m);
	saved = report_of(trace_path, true, NULL);
	CHECK(js && txt && saved);
	if (!js || !txt || !saved)
		goto out;
	CHECK(strstr(js, "\"culprit\":{\"pid\":201,\"tid\":201,\"comm\":\"sleep\"") != NULL);
	CHECK(strstr(js, "\"rule\":\"child\"") != NULL);
	CHECK(strstr(js, "\"live\":{\"source\":\"children\"}") != NULL);
	CHECK(strstr(js, "\"chain\":[]") != NULL);
	CHECK(strstr(txt, "[rule: child]") != NULL);
	CHECK(strstr(txt, "(live: /proc/PID/task/TID/children)") != NULL);
	CHECK(strstr(txt, "the child it waits for (live)") != NULL);
	/* a saved trace: no child named, no live source anywhere */
	CHECK(strstr(saved, "\"rule\":\"child\"") == NULL);
	CHECK(strstr(saved, "\"live\":{") == NULL);
	if (!strstr(js, "\"live\":{\"source\":\"children\"}") || !strstr(txt, "[rule: child]"))
		fprintf(stderr, "  json: %s\n  report:\n%s  saved: %s\n", js, txt, saved);
out:
	free(js);
	free(txt);
	free(saved);
	end();
}

int main(void)
{
	RUN(TEST_tcp_tables_name_the_other_end_then_the_listener);
	RUN(TEST_real_loopback_connection_listener_then_accepted_socket);
	RUN(TEST_real_unaccepted_unix_connection_names_its_listener);
	RUN(TEST_stat_fields_after_a_comm_with_parentheses);
	RUN(TEST_children_for_wait4_pid_argument);
	RUN(TEST_stopped_by_a_signal_and_in_our_own_ptrace_stop);
	RUN(TEST_pi_futex_owner_is_the_tid_in_the_word_once_someone_waits);
	RUN(TEST_live_callback_refuses_short_structs_and_unknown_asks);
	RUN(TEST_wait4_names_the_child_from_live_children);
	RUN(TEST_wait4_for_one_pid_asks_for_that_child);
	RUN(TEST_wait4_without_live_names_no_child);
	RUN(TEST_a_child_the_trace_never_saw_is_named_live_only);
	RUN(TEST_stopped_child_is_noted_and_another_tracer_is_named);
	RUN(TEST_loopback_tcp_peer_then_its_own_pipe_wait);
	RUN(TEST_older_holders_answer_what_live_does_not);
	RUN(TEST_pi_owner_names_the_thread_holding_the_futex);
	RUN(TEST_json_live_shapes);
	RUN(TEST_diagnose_json_and_report_say_which_source);
	return check_report();
}
