/* test_hang_watch.c - argusd's live hang rule (collector/hang_watch.h), on
 * raw records built here as the BPF programs write them: one behaviour per
 * test, with the exact times the rule must report. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_events.h"
#include "check.h"
#include "hang_watch.h"

#define MS 1000000ull
#define S 1000000000ull
#define T0 (100 * S)
#define TID 4242

struct reports {
	int began, ended;
	struct argus_live_hang first, last;
};

static void on_hang(void *ctx, enum argus_hang_change what, const struct argus_live_hang *h)
{
	struct reports *r = ctx;

	if (what == ARGUS_HANG_BEGAN && !r->began++)
		r->first = *h;
	if (what == ARGUS_HANG_ENDED)
		r->ended++;
	r->last = *h;
}

static struct argus_hang_watch *watcher(uint32_t tid)
{
	struct argus_hang_watch_opts o = { .sz = sizeof(o), .threshold_ns = 2 * S };
	struct argus_hang_watch *w = argus_hang_watch__new(&o);
	struct argus_watch_thread t = { .tid = tid, .pid = tid, .comm = "app",
					.why = ARGUS_WATCH_PID, .sys_nr = -1, .since_ns = T0 };

	if (tid)
		argus_hang_watch__add_thread(w, &t);
	return w;
}

/* tid blocks in syscall nr at ts (prev_state 1: interruptible sleep),
 * with the switch's key arg (a futex's address, a sleep's timeout) */
static void block_arg(struct argus_hang_watch *w, uint32_t tid, int64_t nr, uint64_t arg,
		      uint64_t ts)
{
	struct ae_switch r = { 0 };

	r.h.ts = ts;
	r.h.tid = r.h.pid = tid;
	r.h.type = AE_SWITCH;
	r.h.size = sizeof(r);
	r.prev_state = 1;
	r.sys_nr = (int32_t)nr;
	r.sys_arg = arg;
	argus_hang_watch__record(w, &r, sizeof(r));
}

static void block(struct argus_hang_watch *w, uint32_t tid, int64_t nr, uint64_t ts)
{
	struct ae_switch r = { 0 };

	r.h.ts = ts;
	r.h.tid = r.h.pid = tid;
	r.h.type = AE_SWITCH;
	r.h.size = sizeof(r);
	r.prev_state = 1;
	r.sys_nr = (int32_t)nr;
	r.next_tid = r.next_pid = 0;
	argus_hang_watch__record(w, &r, sizeof(r));
}

/* tid runs again at ts (the idle task switches to it) */
static void wake(struct argus_hang_watch *w, uint32_t tid, uint64_t ts)
{
	struct ae_switch r = { 0 };

	r.h.ts = ts;
	r.h.type = AE_SWITCH;
	r.h.size = sizeof(r);
	r.sys_nr = -1;
	r.next_tid = r.next_pid = tid;
	argus_hang_watch__record(w, &r, sizeof(r));
}

static void sys_exit(struct argus_hang_watch *w, uint32_t tid, int64_t nr, int64_t ret,
		     uint32_t kind, uint64_t ts)
{
	struct ae_sys_exit r = { 0 };

	r.h.ts = ts;
	r.h.tid = r.h.pid = tid;
	r.h.type = AE_SYS_EXIT;
	r.h.size = sizeof(r);
	r.nr = nr;
	r.ret = ret;
	r.obj.kind = kind;
	argus_hang_watch__record(w, &r, sizeof(r));
}

/* A lone long wait (flock) of a thread with no idle wait is a hang from
 * where the wait began (the stretch before it, 10 ms, is not one),
 * reported once the threshold passed, ended when it runs again. */
static void test_long_wait_is_a_hang(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	block(w, TID, SYS_flock, T0 + 10 * MS);
	argus_hang_watch__check(w, T0 + 1990 * MS, on_hang, &r);
	CHECK_EQ(r.began, 0);
	argus_hang_watch__check(w, T0 + 2010 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.start_ns, T0 + 10 * MS);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_BLOCKED);
	CHECK_EQ(r.first.sys_nr, SYS_flock);
	CHECK(!r.first.request);
	CHECK_EQ(r.first.end_ns, 0);
	argus_hang_watch__check(w, T0 + 2500 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1); /* once per hang, not once per check */
	wake(w, TID, T0 + 3 * S);
	argus_hang_watch__check(w, T0 + 3100 * MS, on_hang, &r);
	CHECK_EQ(r.ended, 1);
	CHECK_EQ(r.last.end_ns, T0 + 3 * S);
	CHECK_EQ(r.last.id, r.first.id);
	argus_hang_watch__free(w);
}

/* poll() with nothing written before it is the idle wait: never hung. */
static void test_idle_poll_is_not(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	block(w, TID, SYS_nanosleep, T0 + 100 * MS);
	wake(w, TID, T0 + 400 * MS);
	block(w, TID, SYS_poll, T0 + 401 * MS);
	argus_hang_watch__check(w, T0 + 60 * S, on_hang, &r);
	CHECK_EQ(r.began, 0);
	argus_hang_watch__free(w);
}

/* A write to a socket, then poll(): a request waiting for its reply. */
static void test_request_in_poll_is(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	block(w, TID, SYS_read, T0 + 100 * MS);
	wake(w, TID, T0 + 200 * MS);
	sys_exit(w, TID, SYS_write, 4, AE_OBJ_UNIX, T0 + 201 * MS);
	block(w, TID, SYS_poll, T0 + 202 * MS);
	argus_hang_watch__check(w, T0 + 2300 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.start_ns, T0 + 202 * MS); /* the reply wait's start */
	CHECK(r.first.request);
	/* the reply: poll returns, it is back */
	wake(w, TID, T0 + 3 * S);
	sys_exit(w, TID, SYS_poll, 1, AE_OBJ_NONE, T0 + 3 * S + 1000);
	argus_hang_watch__check(w, T0 + 3100 * MS, on_hang, &r);
	CHECK_EQ(r.ended, 1);
	argus_hang_watch__free(w);
}

/* A write to a regular file or a failed write is not a request. */
static void test_file_write_is_not_a_request(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	sys_exit(w, TID, SYS_write, 100, AE_OBJ_FILE, T0 + 1 * MS);
	sys_exit(w, TID, SYS_sendto, -11, AE_OBJ_UNIX, T0 + 2 * MS);
	block(w, TID, SYS_epoll_wait, T0 + 3 * MS);
	argus_hang_watch__check(w, T0 + 10 * S, on_hang, &r);
	CHECK_EQ(r.began, 0);
	argus_hang_watch__free(w);
}

/* Short sleeps and yields do not bring a thread back: a retry loop. */
static void test_sleep_loop_is_a_yield_hang(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	uint64_t t = T0;

	for (int i = 0; i < 25; i++) {
		block(w, TID, SYS_nanosleep, t + 1 * MS);
		wake(w, TID, t + 90 * MS);
		sys_exit(w, TID, SYS_sched_yield, 0, AE_OBJ_NONE, t + 91 * MS);
		t += 100 * MS;
	}
	argus_hang_watch__check(w, t, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.start_ns, T0);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_YIELD);
	argus_hang_watch__free(w);
}

/* Running (or runnable) without coming back is a busy hang; preemption is
 * not a wait. */
static void test_busy_is_a_hang(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	struct ae_switch pre = { 0 };

	pre.h.ts = T0 + 500 * MS;
	pre.h.tid = pre.h.pid = TID;
	pre.h.type = AE_SWITCH;
	pre.h.size = sizeof(pre);
	pre.prev_state = 0; /* preempted */
	pre.sys_nr = -1;
	argus_hang_watch__record(w, &pre, sizeof(pre));
	wake(w, TID, T0 + 600 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_BUSY);
	CHECK_EQ(r.first.start_ns, T0);
	argus_hang_watch__free(w);
}

/* After it recovered, the next hang of the same thread is a new one. */
static void test_new_hang_after_recovery(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	block(w, TID, SYS_futex, T0 + 1 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	wake(w, TID, T0 + 3 * S);
	block(w, TID, SYS_futex, T0 + 3 * S + 1 * MS);
	argus_hang_watch__check(w, T0 + 4 * S, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.ended, 1);
	argus_hang_watch__check(w, T0 + 5100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 2);
	CHECK(r.last.id != r.first.id);
	CHECK_EQ(r.last.start_ns, T0 + 3 * S + 1 * MS);
	argus_hang_watch__free(w);
}

/* --watch COMM: a process is watched from its exec under that name (its
 * main thread only); its exit ends its hang. */
static void test_watch_by_name(void)
{
	struct argus_hang_watch *w = watcher(0);
	struct reports r = { 0 };
	struct ae_exec ex = { 0 };
	struct ae_exit xt = { 0 };

	argus_hang_watch__add_comm(w, "flock");
	ex.h.ts = T0;
	ex.h.tid = ex.h.pid = 77;
	ex.h.type = AE_EXEC;
	ex.h.size = sizeof(ex);
	strcpy(ex.comm, "flock");
	argus_hang_watch__record(w, &ex, sizeof(ex));
	ex.h.tid = ex.h.pid = 78;
	strcpy(ex.comm, "true");
	argus_hang_watch__record(w, &ex, sizeof(ex));
	CHECK(argus_hang_watch__watching(w, 77));
	CHECK(!argus_hang_watch__watching(w, 78));
	block(w, 77, SYS_flock, T0 + 1 * MS);
	block(w, 78, SYS_flock, T0 + 1 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.tid, 77);
	CHECK_EQ(r.first.why, ARGUS_WATCH_COMM);
	CHECK(!strcmp(r.first.comm, "flock"));
	xt.h.ts = T0 + 2500 * MS;
	xt.h.tid = xt.h.pid = 77;
	xt.h.type = AE_EXIT;
	xt.h.size = sizeof(xt);
	argus_hang_watch__record(w, &xt, sizeof(xt));
	argus_hang_watch__check(w, T0 + 2600 * MS, on_hang, &r);
	CHECK_EQ(r.ended, 1);
	CHECK(r.last.exited);
	CHECK(!argus_hang_watch__watching(w, 77));
	argus_hang_watch__free(w);
}

/* Process tid (its main thread) takes the name comm at ts: an AE_EXEC or
 * an AE_RENAME record. */
static void name_rec(struct argus_hang_watch *w, uint16_t type, uint32_t tid,
		     const char *comm, uint64_t ts)
{
	struct ae_exec ex = { 0 };
	struct ae_rename rn = { 0 };
	struct ae_hdr *h = type == AE_EXEC ? &ex.h : &rn.h;

	h->ts = ts;
	h->tid = h->pid = tid;
	h->type = type;
	h->size = type == AE_EXEC ? sizeof(ex) : sizeof(rn);
	strncpy(type == AE_EXEC ? ex.comm : rn.comm, comm, AE_COMM_LEN - 1);
	argus_hang_watch__record(w, h, h->size);
}

/* Records come in drain order: the parent's fork record (the child under
 * the parent's name) can be drained after the child's exec, when the
 * child exec'd and blocked on the other CPU, whose batch went into the
 * ring first.  The stale name must not un-watch the process (it did:
 * e2e_real_flock's keeper phase once missed the flock that hung).  A
 * rename that is newer still counts. */
static void test_watch_by_name_survives_a_late_fork_record(void)
{
	struct argus_hang_watch *w = watcher(0);
	struct reports r = { 0 };
	struct ae_task fk = { 0 };

	argus_hang_watch__add_comm(w, "flock");
	name_rec(w, AE_EXEC, 77, "flock", T0 + 5 * MS);
	fk.h.ts = T0;                   /* older: the fork that made 77 */
	fk.h.tid = fk.h.pid = 50;
	fk.h.type = AE_FORK;
	fk.h.size = sizeof(fk);
	fk.child_tid = fk.child_pid = 77;
	strcpy(fk.comm, "bash");
	argus_hang_watch__record(w, &fk, sizeof(fk));
	CHECK(argus_hang_watch__watching(w, 77));
	block(w, 77, SYS_flock, T0 + 10 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.tid, 77);
	CHECK_EQ(r.first.start_ns, T0 + 10 * MS);
	/* a newer name still applies: renamed away, it is no longer watched */
	name_rec(w, AE_RENAME, 77, "other", T0 + 2200 * MS);
	CHECK(!argus_hang_watch__watching(w, 77));
	argus_hang_watch__free(w);
}

/* Many watched threads coming and going: the table finds every one of
 * them and none that left (growth and backward-shift deletion). */
static void test_table_churn(void)
{
	struct argus_hang_watch *w = watcher(0);
	bool ok = true;

	for (uint32_t tid = 1; tid <= 3000; tid++) {
		struct argus_watch_thread t = { .tid = tid * 7, .pid = tid * 7, .why = ARGUS_WATCH_PID,
						.sys_nr = -1, .since_ns = T0 };
		argus_hang_watch__add_thread(w, &t);
	}
	for (uint32_t tid = 1; tid <= 3000; tid += 2) {
		struct ae_exit xt = { 0 };
		xt.h.tid = xt.h.pid = tid * 7;
		xt.h.type = AE_EXIT;
		xt.h.size = sizeof(xt);
		argus_hang_watch__record(w, &xt, sizeof(xt));
	}
	for (uint32_t tid = 1; tid <= 3000; tid++)
		if (argus_hang_watch__watching(w, tid * 7) != !(tid & 1))
			ok = false;
	CHECK(ok);
	CHECK_EQ(argus_hang_watch__count(w), 1500);
	argus_hang_watch__free(w);
}

/* No check ran while a request waited 3 s in poll (argusd busy saving a
 * snapshot): the hang is reported late, at the next check, BEGAN with its
 * true start right before ENDED with its true end. */
static void test_hang_missed_by_checks_is_reported_late(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	int n;

	block(w, TID, SYS_read, T0 + 100 * MS);
	wake(w, TID, T0 + 200 * MS);
	sys_exit(w, TID, SYS_sendto, 4, AE_OBJ_UNIX, T0 + 201 * MS);
	block(w, TID, SYS_poll, T0 + 202 * MS);
	argus_hang_watch__check(w, T0 + 1 * S, on_hang, &r); /* under the threshold */
	CHECK_EQ(r.began, 0);
	wake(w, TID, T0 + 3200 * MS);
	sys_exit(w, TID, SYS_poll, 1, AE_OBJ_NONE, T0 + 3200 * MS + 1000);
	n = argus_hang_watch__check(w, T0 + 4 * S, on_hang, &r);
	CHECK_EQ(n, 2);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.ended, 1);
	CHECK(r.first.late);
	CHECK_EQ(r.first.start_ns, T0 + 202 * MS);
	CHECK_EQ(r.first.end_ns, 0);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_BLOCKED);
	CHECK(r.first.request);
	CHECK_EQ(r.last.id, r.first.id);
	CHECK_EQ(r.last.end_ns, T0 + 3200 * MS);
	CHECK_EQ(argus_hang_watch__seen(w), 1);
	argus_hang_watch__free(w);
}

/* A busy stretch of 2.5 s that ends in the idle wait between two checks
 * is a late busy hang; the idle wait after it is not one, however long. */
static void test_busy_stretch_missed_is_late_and_idle_wait_is_not(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	block(w, TID, SYS_epoll_wait, T0 + 2500 * MS);
	argus_hang_watch__check(w, T0 + 30 * S, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.ended, 1);
	CHECK(r.first.late);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_BUSY);
	CHECK_EQ(r.first.start_ns, T0);
	CHECK_EQ(r.last.end_ns, T0 + 2500 * MS);
	/* 30 s in epoll_wait, then back: at rest all along, nothing new */
	wake(w, TID, T0 + 32 * S);
	argus_hang_watch__check(w, T0 + 33 * S, on_hang, &r);
	CHECK_EQ(r.began, 1);
	argus_hang_watch__free(w);
}

/* A poll/ppoll entry watching nfds fds. */
static void poll_enter(struct argus_hang_watch *w, uint32_t tid, uint64_t nfds, uint64_t ts)
{
	struct ae_sys_enter r = { 0 };

	r.h.ts = ts;
	r.h.tid = r.h.pid = tid;
	r.h.type = AE_SYS_ENTER;
	r.h.size = sizeof(r);
	r.nr = SYS_poll;
	r.args[1] = nfds;
	argus_hang_watch__record(w, &r, sizeof(r));
}

/* dbus-send's call (real_dbus): a send, a poll answered by a first
 * message, an empty read, then the long poll for the reply with no new
 * write.  The request is outstanding until an idle wait, so the second
 * poll is the reply wait too: a hang (it was missed when "outstanding"
 * meant "written since the last wake-up"). */
static void test_request_outstanding_across_polls(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	sys_exit(w, TID, SYS_sendmsg, 128, AE_OBJ_UNIX, T0 + 1 * MS);
	poll_enter(w, TID, 1, T0 + 2 * MS);
	block(w, TID, SYS_poll, T0 + 2 * MS);
	wake(w, TID, T0 + 3 * MS);
	sys_exit(w, TID, SYS_poll, 1, AE_OBJ_NONE, T0 + 3 * MS);
	sys_exit(w, TID, SYS_recvmsg, 89, AE_OBJ_UNIX, T0 + 4 * MS);
	sys_exit(w, TID, SYS_recvmsg, -EAGAIN, AE_OBJ_UNIX, T0 + 5 * MS);
	poll_enter(w, TID, 1, T0 + 6 * MS);
	block(w, TID, SYS_poll, T0 + 6 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	CHECK(r.first.request);
	CHECK_EQ(r.first.start_ns, T0 + 6 * MS);
	argus_hang_watch__free(w);
}

/* A request wait whose first connection op after it is not the reply (the
 * thread writes again) was an idle wait: the thread is a loop thread
 * from then on, so a busy second later is no hang by itself (it comes
 * back at its next poll).  The hang reported while the wait lasted ended
 * when the wait did: the keeper's diagnosis judges it. */
static void test_request_not_answered_was_idle(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };

	sys_exit(w, TID, SYS_write, 32, AE_OBJ_UNIX, T0 + 1 * MS);
	block(w, TID, SYS_poll, T0 + 2 * MS);
	argus_hang_watch__check(w, T0 + 2100 * MS, on_hang, &r);
	CHECK_EQ(r.began, 1);
	wake(w, TID, T0 + 5 * S);
	sys_exit(w, TID, SYS_poll, 1, AE_OBJ_NONE, T0 + 5 * S + 1000);
	sys_exit(w, TID, SYS_write, 32, AE_OBJ_UNIX, T0 + 5 * S + 2000);
	argus_hang_watch__check(w, T0 + 5100 * MS, on_hang, &r);
	CHECK_EQ(r.ended, 1);
	CHECK_EQ(r.last.end_ns, T0 + 5 * S);
	/* loop thread now: 1.9 s busy, then a poll on 2 fds that returns at
	 * once is a visit: nothing new */
	poll_enter(w, TID, 2, T0 + 6900 * MS);
	sys_exit(w, TID, SYS_poll, 0, AE_OBJ_NONE, T0 + 6900 * MS);
	argus_hang_watch__check(w, T0 + 8 * S, on_hang, &r);
	CHECK_EQ(r.began, 1);
	argus_hang_watch__free(w);
}

/* A periodic monitor (issue 26's false positive): open, read, close and
 * a log write that all work, then a 100 ms sleep, for 10 s.  Its sleeps
 * are the rest of an idle loop: never hung. */
static void test_idle_loop_sleeps_are_rest(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	uint64_t t = T0;

	for (int i = 0; i < 100; i++) {
		sys_exit(w, TID, SYS_openat, 3, AE_OBJ_NONE, t + 1 * MS);
		sys_exit(w, TID, SYS_read, 120, AE_OBJ_FILE, t + 2 * MS);
		sys_exit(w, TID, SYS_close, 0, AE_OBJ_NONE, t + 3 * MS);
		sys_exit(w, TID, SYS_write, 6, AE_OBJ_FILE, t + 4 * MS);
		block_arg(w, TID, SYS_clock_nanosleep, 100 * MS, t + 5 * MS);
		wake(w, TID, t + 105 * MS);
		sys_exit(w, TID, SYS_clock_nanosleep, 0, AE_OBJ_NONE, t + 105 * MS);
		t += 105 * MS;
		argus_hang_watch__check(w, t, on_hang, &r);
	}
	CHECK_EQ(r.began, 0);
	argus_hang_watch__free(w);
}

/* apt's and sqlite's retry loop: a lock try refused (-EAGAIN), a message
 * written, a sleep; again and again.  A failed try makes the sleep a
 * retry's: one hang, of kind yield. */
static void test_retry_loop_failed_tries_hang(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	uint64_t t = T0;

	for (int i = 0; i < 30; i++) {
		sys_exit(w, TID, SYS_fcntl, -EAGAIN, AE_OBJ_FILE, t + 1 * MS);
		sys_exit(w, TID, SYS_write, 40, AE_OBJ_FILE, t + 2 * MS);
		block_arg(w, TID, SYS_nanosleep, 100 * MS, t + 3 * MS);
		wake(w, TID, t + 103 * MS);
		sys_exit(w, TID, SYS_nanosleep, 0, AE_OBJ_NONE, t + 103 * MS);
		t += 103 * MS;
		argus_hang_watch__check(w, t, on_hang, &r);
	}
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.start_ns, T0);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_YIELD);
	argus_hang_watch__free(w);
}

/* A GLib main loop (an idle poll on 2 fds first) that waits for a pool
 * job with g_async_queue_timeout_pop(50 ms), again and again: timed futex
 * waits that time out are one wait, not visits of the loop: a hang from
 * the last visit (issue 26's missed GLib hang; Python's GIL waits are the
 * same with 5 ms). */
static void test_timed_waits_in_a_loop_thread_are_one_wait(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	uint64_t t = T0 + 1 * S;

	poll_enter(w, TID, 2, T0 + 1 * MS);
	block(w, TID, SYS_poll, T0 + 1 * MS);
	wake(w, TID, T0 + 500 * MS);
	sys_exit(w, TID, SYS_poll, 1, AE_OBJ_NONE, T0 + 500 * MS);
	for (int i = 0; i < 60; i++) {
		block_arg(w, TID, SYS_futex, 0x7000, t);
		wake(w, TID, t + 50 * MS);
		sys_exit(w, TID, SYS_futex, -ETIMEDOUT, AE_OBJ_NONE, t + 50 * MS);
		t += 51 * MS;
		argus_hang_watch__check(w, t, on_hang, &r);
	}
	CHECK_EQ(r.began, 1);
	CHECK_EQ(r.first.start_ns, T0 + 500 * MS);
	CHECK_EQ(r.first.kind, ARGUS_LIVE_BLOCKED); /* one wait, retried */
	CHECK_EQ(r.first.sys_nr, SYS_futex);
	/* the job's result: the futex wait ends woken, then the loop */
	poll_enter(w, TID, 2, t + 1 * MS);
	sys_exit(w, TID, SYS_poll, 0, AE_OBJ_NONE, t + 1 * MS);
	argus_hang_watch__check(w, t + 2 * MS, on_hang, &r);
	CHECK_EQ(r.ended, 1);
	CHECK_EQ(r.last.end_ns, t + 1 * MS);
	argus_hang_watch__free(w);
}

/* A worker with no event loop that waits for work with a timed futex
 * wait, timing out every 500 ms: its tick is an idle wait, not a hang. */
static void test_worker_tick_is_idle(void)
{
	struct argus_hang_watch *w = watcher(TID);
	struct reports r = { 0 };
	uint64_t t = T0;

	for (int i = 0; i < 20; i++) {
		block_arg(w, TID, SYS_futex, 0x7000, t + 1 * MS);
		wake(w, TID, t + 501 * MS);
		sys_exit(w, TID, SYS_futex, -ETIMEDOUT, AE_OBJ_NONE, t + 501 * MS);
		t += 502 * MS;
		argus_hang_watch__check(w, t, on_hang, &r);
	}
	CHECK_EQ(r.began, 0);
	argus_hang_watch__free(w);
}

int main(void)
{
	RUN(test_long_wait_is_a_hang);
	RUN(test_idle_poll_is_not);
	RUN(test_request_in_poll_is);
	RUN(test_file_write_is_not_a_request);
	RUN(test_sleep_loop_is_a_yield_hang);
	RUN(test_busy_is_a_hang);
	RUN(test_new_hang_after_recovery);
	RUN(test_watch_by_name);
	RUN(test_watch_by_name_survives_a_late_fork_record);
	RUN(test_table_churn);
	RUN(test_hang_missed_by_checks_is_reported_late);
	RUN(test_busy_stretch_missed_is_late_and_idle_wait_is_not);
	RUN(test_request_outstanding_across_polls);
	RUN(test_request_not_answered_was_idle);
	RUN(test_idle_loop_sleeps_are_rest);
	RUN(test_retry_loop_failed_tries_hang);
	RUN(test_timed_waits_in_a_loop_thread_are_one_wait);
	RUN(test_worker_tick_is_idle);
	return check_report();
}
