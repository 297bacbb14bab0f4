/* case_lost_conn.c - case study 6 (BRIEF §7, the paper's Sequel Pro hang):
 * the UI main thread waits on a worker that waits on a TCP peer on loopback
 * that stopped answering.
 *
 * Processes and threads (fork, no exec):
 *   "sqlclient"       the UI.  Main thread: event loop in poll() on the
 *                     input pipe; per input, a query handed to the worker.
 *     "query_worker"  a sqlclient thread: sends each query over TCP and
 *                     blocks in recv() for the result.
 *   "dbserver"        main thread: accept()s the one connection, sends a
 *                     greeting (with db_vacuum's tid, as a MySQL handshake
 *                     carries a connection id) and serves queries; every
 *                     query takes the table lock (a pthread mutex) briefly.
 *     "db_vacuum"     a dbserver thread that vacuums the table: holds the
 *                     table lock for VACUUM_MS = 2800 ms (in nanosleep).
 *   "input_feeder"    writes one input byte every 150 ms: 'k' a query,
 *                     'D' a DELETE (input 6, normal: it schedules a
 *                     vacuum), 'H' the query that hangs (input 7 of 9;
 *                     input 8 comes 2.9 s later, after the hang).
 * IPC: TCP on 127.0.0.1 (the port is picked by binding to port 0 before
 *      the fork: TCP_PORT), TCP_NODELAY; sqlclient main <-> query_worker:
 *      a mutex and two condition variables.
 *
 * Per input the sqlclient main thread posts the query and waits for the
 * worker in wait_for_result(): pthread_cond_timedwait with a long timeout
 * (10 s, never reached).  query_worker (query_roundtrip) send()s the query
 * and blocks in recv(MSG_WAITALL).  dbserver (run_query) locks the table
 * lock, computes the result, unlocks, send()s the result.
 *   Normal input: the result comes back in ~100 us.  The 'D' query also
 *   wakes db_vacuum and waits (a few us) until it holds the table lock
 *   before replying: the vacuum is then under way for 2.8 s.
 *   Hang input (150 ms later): dbserver's thread blocks in futex() on the
 *   table lock until db_vacuum releases it, ~2.65 s later; only then does
 *   it answer.  Meanwhile query_worker is blocked in recv() on the TCP
 *   socket and the UI main thread in futex() (the condition variable).
 *
 * usage: case_lost_conn   (no arguments; about 4.1 s)
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM                          (sqlclient main)
 *   WORKER_PID WORKER_TID WORKER_COMM              (query_worker)
 *   DB_PID DB_TID DB_COMM                          (dbserver main)
 *   DB_VACUUM_PID DB_VACUUM_TID DB_VACUUM_COMM
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   HANG_START_NS HANG_END_NS HANG_MS NORMAL_ITERATIONS NORMAL_BEFORE_HANG
 *   NORMAL_MAX_NS
 *   EXPECT_KIND=blocked
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM=query_worker CULPRIT_KIND=blocked
 *   CHAIN=worker_tid,db_tid,db_vacuum_tid
 *   DB_KIND=blocked (futex on the table lock) DB_VACUUM_KIND=blocked
 *   TCP_PORT TABLE_LOCK_ADDR (hex, in dbserver) VACUUM_MS=2800
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "case_common.h"

#define KEYS "kkkkkDHkk"
#define VACUUM_MS 2800
#define RESULT_WAIT_MS 10000

static int listen_fd, conn = -1;

/* --- dbserver process --------------------------------------------------- */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t vmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vcv = PTHREAD_COND_INITIALIZER;
static int vacuum_wanted, vacuum_holding, db_quit;
static pid_t vacuum_tid;

CASE_FN void vacuum_table(void)
{
	pthread_mutex_lock(&table_lock);
	pthread_mutex_lock(&vmu);
	vacuum_holding = 1;
	pthread_cond_broadcast(&vcv);
	pthread_mutex_unlock(&vmu);
	sleep_ms(VACUUM_MS); /* rewriting the table's pages */
	pthread_mutex_unlock(&table_lock);
}

static void *db_vacuum(void *arg)
{
	(void)arg;
	name_thread("db_vacuum");
	gt_self("DB_VACUUM");
	pthread_mutex_lock(&vmu);
	vacuum_tid = my_tid();
	pthread_cond_broadcast(&vcv);
	for (;;) {
		while (!vacuum_wanted && !db_quit)
			pthread_cond_wait(&vcv, &vmu);
		if (db_quit)
			break;
		vacuum_wanted = 0;
		pthread_mutex_unlock(&vmu);
		vacuum_table();
		pthread_mutex_lock(&vmu);
	}
	pthread_mutex_unlock(&vmu);
	return NULL;
}

CASE_FN int run_query(const struct case_msg *q)
{
	struct case_msg r = {q->seq, q->key, 0};

	pthread_mutex_lock(&table_lock); /* the hang: db_vacuum holds it */
	r.value = q->seq * 10 + 1;
	pthread_mutex_unlock(&table_lock);
	if (q->key == 'D') { /* schedule a vacuum; reply once it runs */
		pthread_mutex_lock(&vmu);
		vacuum_wanted = 1;
		vacuum_holding = 0;
		pthread_cond_broadcast(&vcv);
		while (!vacuum_holding)
			pthread_cond_wait(&vcv, &vmu);
		pthread_mutex_unlock(&vmu);
	}
	if (send(conn, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r)
		die_sys("send result");
	return r.value;
}

static int dbserver_main(void *arg)
{
	struct case_msg q;
	pthread_t vac;
	ssize_t n;

	(void)arg;
	keep_fds(listen_fd);
	gt_self("DB");
	gt("TABLE_LOCK_ADDR=%p", (void *)&table_lock);
	if (pthread_create(&vac, NULL, db_vacuum, NULL))
		die("pthread_create failed");
	if ((conn = accept(listen_fd, NULL, NULL)) < 0)
		die_sys("accept");
	close(listen_fd);
	pthread_mutex_lock(&vmu); /* the greeting names the server's threads */
	while (!vacuum_tid)
		pthread_cond_wait(&vcv, &vmu);
	q = (struct case_msg){-1, 'G', vacuum_tid};
	pthread_mutex_unlock(&vmu);
	if (send(conn, &q, sizeof q, MSG_NOSIGNAL) != (ssize_t)sizeof q)
		die_sys("send greeting");
	while ((n = recv(conn, &q, sizeof q, MSG_WAITALL)) == (ssize_t)sizeof q)
		run_query(&q);
	if (n)
		die_sys("recv query");
	pthread_mutex_lock(&vmu);
	db_quit = 1;
	pthread_cond_broadcast(&vcv);
	pthread_mutex_unlock(&vmu);
	pthread_join(vac, NULL);
	return 0;
}

/* --- sqlclient: query_worker thread ------------------------------------ */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv; /* CLOCK_MONOTONIC */
static int job_seq = -1, job_key, done_seq = -1, quit;
static pid_t worker_tid;

/* Send the query and block in recv() on the TCP socket for the result. */
CASE_FN int query_roundtrip(int seq, int key)
{
	struct case_msg q = {seq, key, 0}, r;

	if (send(conn, &q, sizeof q, MSG_NOSIGNAL) != (ssize_t)sizeof q)
		die_sys("send query");
	if (recv(conn, &r, sizeof r, MSG_WAITALL) != (ssize_t)sizeof r || r.seq != seq)
		die("no result from dbserver");
	return r.value;
}

static void *query_worker(void *arg)
{
	(void)arg;
	name_thread("query_worker");
	gt_self("WORKER");
	pthread_mutex_lock(&mu);
	worker_tid = my_tid();
	for (;;) {
		while (job_seq == done_seq && !quit)
			pthread_cond_wait(&job_cv, &mu);
		if (quit)
			break;
		int seq = job_seq, key = job_key;
		pthread_mutex_unlock(&mu);
		query_roundtrip(seq, key);
		pthread_mutex_lock(&mu);
		done_seq = seq;
		pthread_cond_signal(&done_cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* --- sqlclient: main thread ------------------------------------------- */

CASE_FN void wait_for_result(int seq)
{
	struct timespec dl = deadline_ms(RESULT_WAIT_MS);

	pthread_mutex_lock(&mu);
	while (done_seq != seq)
		if (pthread_cond_timedwait(&done_cv, &mu, &dl) == ETIMEDOUT)
			die("query %d: no result in %d ms", seq, RESULT_WAIT_MS);
	pthread_mutex_unlock(&mu);
}

CASE_FN void run_query_from_ui(int seq, int key)
{
	pthread_mutex_lock(&mu);
	job_seq = seq;
	job_key = key;
	pthread_cond_signal(&job_cv);
	pthread_mutex_unlock(&mu);
	wait_for_result(seq);
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'H', 2900);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t salen = sizeof sa;
	struct ui_stats st = {0};
	struct case_msg greeting;
	int rc = 0, one = 1;
	pid_t db, feeder;
	pthread_t worker;
	char c;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: case_lost_conn\n");
		return 2;
	}
	become("sqlclient");
	cond_init_monotonic(&done_cv);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((listen_fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) || listen(listen_fd, 1) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &salen))
		die_sys("listen on 127.0.0.1:0");
	gt("TCP_PORT=%d", ntohs(sa.sin_port));
	db = spawn("dbserver", dbserver_main, NULL);
	feeder = spawn_feeder(&f);
	keep_fds(f.rfd);
	if ((conn = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(conn, (struct sockaddr *)&sa, sizeof sa) ||
	    setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
		die_sys("connect to dbserver");
	if (recv(conn, &greeting, sizeof greeting, MSG_WAITALL) != (ssize_t)sizeof greeting ||
	    greeting.key != 'G')
		die("no greeting from dbserver");
	gt_self("UI");
	if (pthread_create(&worker, NULL, query_worker, NULL))
		die("pthread_create failed");

	for (int seq = 0;;) {
		if (!(c = wait_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		run_query_from_ui(seq++, c);
		stats_add(&st, c == 'H', t0, now_ns());
	}

	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_signal(&job_cv);
	pthread_mutex_unlock(&mu);
	pthread_join(worker, NULL);
	close(conn); /* dbserver sees EOF */
	rc |= reap(db, "dbserver");
	rc |= reap(feeder, "input_feeder");

	gt("EXPECT_KIND=blocked");
	gt("CULPRIT_PID=%d", getpid());
	gt("CULPRIT_TID=%d", worker_tid);
	gt("CULPRIT_COMM=query_worker");
	gt("CULPRIT_KIND=blocked");
	gt("CHAIN=%d,%d,%d", worker_tid, db, greeting.value);
	gt("DB_KIND=blocked");
	gt("DB_VACUUM_KIND=blocked");
	gt("VACUUM_MS=%d", VACUUM_MS);
	rc |= stats_report(&st, CASE_HANG_MIN_NS);
	return rc;
}
