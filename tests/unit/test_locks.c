/* test_locks - file locks read back from the graph (graphlib/diag_locks.c):
 * the lock request decoded from a flock/fcntl sys_enter, a thread's lock
 * attempts (argus_diag__lock_ops), and who held a lock at some time
 * (argus_diag__lock_holder, argus_diag__lock_blocker), each on a small
 * synthetic trace written as the BPF side records these calls: an entry
 * with the request (fcntl: l_type/l_whence/l_start/l_len in args[3..5]
 * under AE_LOCK_TAG) and an exit with the result and the file object. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "check.h"
#include "trace_format.h"
#include "tracegen.h"

#include "scenario.h"

/* flock(2) ops, fcntl lock types (uapi) */
#define SH 1
#define EX 2
#define NB 4
#define UN 8
#define RD 0
#define WR 1
#define UNL 2

/* the processes of the scenarios: one thread each */
#define HOLDER 100
#define WAITER 200
#define OTHER 300
/* a file object as resolve_fd makes it: s_dev (254:0 = 0xfe00000) << 32 ^ ino */
#define FILE_A ((0xfe00000ull << 32) ^ 0x1234)
#define FILE_B ((0xfe00000ull << 32) ^ 0x9999)

/* SQLite's lock bytes (os_unix.c): PENDING, RESERVED, then the SHARED range */
#define PENDING 0x40000000ull
#define RESERVED (PENDING + 1)
#define SHARED_FIRST (PENDING + 2)
#define SHARED_SIZE 510

static void begin(void)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_locks", &o);
	npids = 0;
	pids[npids++] = (typeof(pids[0])){ HOLDER, HOLDER };
	pids[npids++] = (typeof(pids[0])){ WAITER, WAITER };
	pids[npids++] = (typeof(pids[0])){ OTHER, OTHER };
	tg_ok(argus_tracegen__task(tg, HOLDER, HOLDER, 1, "holder"), "task", T0);
	tg_ok(argus_tracegen__task(tg, WAITER, WAITER, 1, "waiter"), "task", T0);
	tg_ok(argus_tracegen__task(tg, OTHER, OTHER, 1, "other"), "task", T0);
	run(AT(0), 0, HOLDER);
	run(AT(1), 1, WAITER);
	run(AT(2), 2, OTHER);
}

/* flock(fd 3, op) by tid on cpu: entry at us, exit at us + 1 with ret. */
static void do_flock(uint64_t us, uint16_t cpu, uint32_t tid, uint64_t op, int64_t ret,
		     uint64_t file)
{
	enter(AT(us), cpu, tid, SYS_flock, 3, op);
	leave(AT(us + 1), cpu, tid, SYS_flock, ret, 3, AE_OBJ_FILE, file, 0);
}

/* The fcntl entry record of a lock cmd, as fcntl_lock() in argus.bpf.c
 * fills it. */
static void fcntl_enter(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t cmd, int type,
			int whence, int64_t start, int64_t len)
{
	uint64_t args[6] = { 3, cmd, 0x7ffd0000f000ull,
			     AE_LOCK_TAG | (uint64_t)(uint16_t)whence << 16 | (uint16_t)type,
			     (uint64_t)start, (uint64_t)len };

	tg_ok(argus_tracegen__sys_enter(tg, ts, cpu, tid, pid_of(tid), SYS_fcntl, args),
	      "sys_enter", ts);
}

/* fcntl(fd 3, cmd, {type, SEEK_SET, start, len}) at us, exit at us + 1. */
static void do_fcntl(uint64_t us, uint16_t cpu, uint32_t tid, uint64_t cmd, int type,
		     int64_t start, int64_t len, int64_t ret, uint64_t file)
{
	fcntl_enter(AT(us), cpu, tid, cmd, type, 0, start, len);
	leave(AT(us + 1), cpu, tid, SYS_fcntl, ret, 3, AE_OBJ_FILE, file, 0);
}

/* The process of tid (one thread) exits at us. */
static void die(uint64_t us, uint16_t cpu, uint32_t tid)
{
	tg_ok(argus_tracegen__exit(tg, AT(us), cpu, tid, pid_of(tid), 0, 1), "exit", AT(us));
	tg_ok(argus_tracegen__sw(tg, AT(us) + 10, cpu, tid, pid_of(tid), ARGUS_TG_DEAD, -1, 0,
				 AE_OBJ_NONE, 0, 0, 0, 0), "dead", AT(us) + 10);
}

/* The holder's pid at us (0: none), for a request of type op. */
static uint32_t holder_at(uint64_t file, uint64_t us, uint32_t not_pid, uint8_t op)
{
	struct argus_lock_op h;

	return argus_diag__lock_holder(graph, file, AT(us), not_pid, op, &h) ? 0 : h.pid;
}

/* ---- decoding the request ------------------------------------------------ */

static void TEST_flock_op_decodes_to_kind_op_and_wait(void)
{
	uint64_t a[6] = { 3, EX | NB };
	struct argus_lock_req r;

	CHECK_EQ(argus_lock__decode(SYS_flock, a, &r), 0);
	CHECK_EQ(r.kind, ARGUS_LOCK_FLOCK);
	CHECK_EQ(r.op, ARGUS_LOCK_EXCL);
	CHECK_EQ(r.wait, 0);
	a[1] = SH;
	CHECK_EQ(argus_lock__decode(SYS_flock, a, &r), 0);
	CHECK_EQ(r.op, ARGUS_LOCK_SHARED);
	CHECK_EQ(r.wait, 1);
	a[1] = UN;
	CHECK_EQ(argus_lock__decode(SYS_flock, a, &r), 0);
	CHECK_EQ(r.op, ARGUS_LOCK_UNLOCK);
	CHECK_EQ(r.wait, 0);
}

static void TEST_fcntl_lock_cmds_decode_their_struct_flock_and_others_are_no_lock(void)
{
	uint64_t a[6] = { 3, AE_F_SETLKW, 0x7ffd0000f000ull, AE_LOCK_TAG | WR,
			  (uint64_t)PENDING, 1 };
	struct argus_lock_req r;

	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), 0);
	CHECK_EQ(r.kind, ARGUS_LOCK_POSIX);
	CHECK_EQ(r.op, ARGUS_LOCK_EXCL);
	CHECK_EQ(r.wait, 1);
	CHECK_EQ(r.start, PENDING);
	CHECK_EQ(r.len, 1);

	a[1] = AE_F_OFD_SETLK;
	a[3] = AE_LOCK_TAG | RD;
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), 0);
	CHECK_EQ(r.kind, ARGUS_LOCK_OFD);
	CHECK_EQ(r.op, ARGUS_LOCK_SHARED);
	CHECK_EQ(r.wait, 0);

	/* l_len < 0 locks [start + len, start) */
	a[3] = AE_LOCK_TAG | WR;
	a[4] = 100;
	a[5] = (uint64_t)-10;
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), 0);
	CHECK_EQ(r.start, 90);
	CHECK_EQ(r.len, 10);

	/* SEEK_CUR: the position is unknown, so the whole file */
	a[3] = AE_LOCK_TAG | 1ull << 16 | WR;
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), 0);
	CHECK_EQ(r.start, 0);
	CHECK_EQ(r.len, ARGUS_LOCK_EOF);

	/* the struct could not be read (no tag): a lock attempt, type unknown */
	a[3] = 0;
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), 0);
	CHECK_EQ(r.kind, ARGUS_LOCK_OFD);
	CHECK_EQ(r.op, 0);

	a[1] = 3;               /* F_GETFL */
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), -ENOENT);
	a[1] = 5;               /* F_GETLK: a query holds nothing */
	CHECK_EQ(argus_lock__decode(SYS_fcntl, a, &r), -ENOENT);
	CHECK_EQ(argus_lock__decode(SYS_read, a, &r), -ENOENT);
}

static void TEST_pack_round_trips_and_widens_what_does_not_fit(void)
{
	struct argus_lock_req r = { .kind = ARGUS_LOCK_POSIX, .op = ARGUS_LOCK_EXCL,
				    .wait = 1, .start = SHARED_FIRST, .len = SHARED_SIZE }, b;

	CHECK_EQ(argus_lock__unpack(argus_lock__pack(&r), &b), 0);
	CHECK_EQ(b.kind, r.kind);
	CHECK_EQ(b.op, r.op);
	CHECK_EQ(b.wait, 1);
	CHECK_EQ(b.start, SHARED_FIRST);
	CHECK_EQ(b.len, SHARED_SIZE);

	r.start = 1ull << 40;   /* beyond 32 bits: from 2^32-1 to EOF */
	r.len = 5;
	CHECK_EQ(argus_lock__unpack(argus_lock__pack(&r), &b), 0);
	CHECK(b.start <= r.start);
	CHECK_EQ(b.len, ARGUS_LOCK_EOF);
	r.start = 7;
	r.len = 1ull << 30;     /* beyond 24 bits: to EOF */
	CHECK_EQ(argus_lock__unpack(argus_lock__pack(&r), &b), 0);
	CHECK_EQ(b.start, 7);
	CHECK_EQ(b.len, ARGUS_LOCK_EOF);
	CHECK_EQ(argus_lock__unpack(0, &b), -ENOENT);
}

/* ---- flock --------------------------------------------------------------- */

/* The holder takes LOCK_EX at 100 us; the waiter tries LOCK_EX|LOCK_NB
 * three times (refused) with sleeps between, the holder unlocks at 1000 us,
 * the waiter's fourth try succeeds. */
static void flock_retry_scenario(void)
{
	begin();
	do_flock(100, 0, HOLDER, EX, 0, FILE_A);
	for (int i = 0; i < 3; i++) {
		do_flock(200 + 200 * i, 1, WAITER, EX | NB, -EWOULDBLOCK, FILE_A);
		block(AT(202 + 200 * i), 1, WAITER, SYS_clock_nanosleep, 100000, 0, 0, 0);
		run(AT(300 + 200 * i), 1, WAITER);
	}
	do_flock(1000, 0, HOLDER, UN, 0, FILE_A);
	do_flock(1100, 1, WAITER, EX | NB, 0, FILE_A);
}

static void TEST_lock_ops_lists_a_retry_loops_refused_tries_then_its_success(void)
{
	struct argus_lock_op *o = NULL;
	uint32_t n = 0;

	flock_retry_scenario();
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(0), AT(2000), &o, &n), 0);
	CHECK_EQ(n, 4);
	for (uint32_t i = 0; i < n && i < 4; i++) {
		CHECK_EQ(o[i].tid, WAITER);
		CHECK_EQ(o[i].pid, WAITER);
		CHECK_EQ(o[i].file, FILE_A);
		CHECK_EQ(o[i].kind, ARGUS_LOCK_FLOCK);
		CHECK_EQ(o[i].op, ARGUS_LOCK_EXCL);
		CHECK_EQ(o[i].wait, 0);
		CHECK_EQ(o[i].ret, i < 3 ? -EWOULDBLOCK : 0);
		CHECK_EQ(o[i].ts, AT(201 + 200 * i + (i == 3 ? 300 : 0)));
	}
	free(o);
	/* a window with only the second try */
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(350), AT(450), &o, &n), 0);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(o[0].ts, AT(401));
	free(o);
	CHECK_EQ(argus_diag__lock_ops(graph, 4242, AT(0), AT(2000), &o, &n), -ENOENT);
out:
	scenario_end();
}

static void TEST_holder_of_a_flock_is_the_exclusive_acquirer_until_its_unlock(void)
{
	struct argus_lock_op h;

	flock_retry_scenario();
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(argus_diag__lock_holder(graph, FILE_A, AT(401), WAITER, ARGUS_LOCK_EXCL, &h), 0);
	CHECK_EQ(h.pid, HOLDER);
	CHECK_EQ(h.tid, HOLDER);
	CHECK_EQ(h.ts, AT(101));
	CHECK_EQ(h.op, ARGUS_LOCK_EXCL);
	CHECK_EQ(h.kind, ARGUS_LOCK_FLOCK);
	CHECK_EQ(h.ret, 0);
	CHECK_EQ(holder_at(FILE_A, 50, WAITER, ARGUS_LOCK_EXCL), 0);   /* before it */
	CHECK_EQ(holder_at(FILE_A, 1050, WAITER, ARGUS_LOCK_EXCL), 0); /* unlocked */
	/* then the waiter holds it, as seen from the old holder */
	CHECK_EQ(holder_at(FILE_A, 1200, HOLDER, ARGUS_LOCK_SHARED), WAITER);
	/* nobody else holds it: the holder itself is excluded */
	CHECK_EQ(holder_at(FILE_A, 401, HOLDER, ARGUS_LOCK_EXCL), 0);
	/* another file */
	CHECK_EQ(holder_at(FILE_B, 401, WAITER, ARGUS_LOCK_EXCL), 0);
out:
	scenario_end();
}

static void TEST_holder_exit_ends_its_lock(void)
{
	begin();
	do_flock(100, 0, HOLDER, EX, 0, FILE_A);
	die(500, 0, HOLDER);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(holder_at(FILE_A, 400, WAITER, ARGUS_LOCK_EXCL), HOLDER);
	CHECK_EQ(holder_at(FILE_A, 600, WAITER, ARGUS_LOCK_EXCL), 0);
out:
	scenario_end();
}

/* A lock dropped without a traced unlock (close() is not traced): another
 * process's conflicting acquisition says it was gone. */
static void TEST_conflicting_acquisition_by_another_ends_the_previous_holding(void)
{
	begin();
	do_flock(100, 0, HOLDER, EX, 0, FILE_A);
	do_flock(300, 2, OTHER, EX, 0, FILE_A);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(holder_at(FILE_A, 200, WAITER, ARGUS_LOCK_EXCL), HOLDER);
	CHECK_EQ(holder_at(FILE_A, 400, WAITER, ARGUS_LOCK_EXCL), OTHER);
	/* and HOLDER no longer holds it: from OTHER's side nobody does */
	CHECK_EQ(holder_at(FILE_A, 400, OTHER, ARGUS_LOCK_EXCL), 0);
out:
	scenario_end();
}

static void TEST_shared_holders_block_exclusive_requests_only(void)
{
	begin();
	do_flock(100, 0, HOLDER, SH, 0, FILE_A);
	do_flock(200, 2, OTHER, SH, 0, FILE_A);  /* both hold it shared */
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(holder_at(FILE_A, 300, WAITER, ARGUS_LOCK_SHARED), 0);
	/* the last shared acquisition is named */
	CHECK_EQ(holder_at(FILE_A, 300, WAITER, ARGUS_LOCK_EXCL), OTHER);
	CHECK_EQ(holder_at(FILE_A, 300, OTHER, ARGUS_LOCK_EXCL), HOLDER);
out:
	scenario_end();
}

/* A blocking flock still waiting at the end of the trace: the attempt is
 * reported open, on the file its switch-out named, and its blocker is the
 * holder. */
static void TEST_attempt_still_waiting_at_the_end_is_reported_with_its_blocker(void)
{
	struct argus_lock_op *o = NULL, h;
	uint32_t n = 0;

	begin();
	do_flock(100, 0, HOLDER, EX, 0, FILE_A);
	enter(AT(200), 1, WAITER, SYS_flock, 3, EX);
	block(AT(201), 1, WAITER, SYS_flock, 3, AE_OBJ_FILE, FILE_A, 0);
	enter(AT(5000), 2, OTHER, SYS_getpid, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(0), AT(6000), &o, &n), 0);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(o[0].ret, -EINPROGRESS);
		CHECK_EQ(o[0].ts, AT(200));
		CHECK_EQ(o[0].wait, 1);
		CHECK_EQ(o[0].file, FILE_A);
		CHECK_EQ(argus_diag__lock_blocker(graph, &o[0], &h), 0);
		CHECK_EQ(h.pid, HOLDER);
	}
	free(o);
out:
	scenario_end();
}

/* F_SETLKW that sleeps until the holder unlocks: one attempt, at its exit
 * (the acquisition), and the segment before it ended in that wait. */
static void TEST_blocking_setlkw_is_one_attempt_acquired_at_its_exit(void)
{
	struct argus_lock_op *o = NULL;
	uint32_t n = 0, s;

	begin();
	do_fcntl(100, 0, HOLDER, AE_F_SETLK, WR, 0, 0, 0, FILE_A);
	fcntl_enter(AT(200), 1, WAITER, AE_F_SETLKW, WR, 0, 0, 0);
	block(AT(201), 1, WAITER, SYS_fcntl, 3, AE_OBJ_FILE, FILE_A, 0);
	do_fcntl(1000, 0, HOLDER, AE_F_SETLK, UNL, 0, 0, 0, FILE_A);
	wake(AT(1002), 0, HOLDER, WAITER);
	run(AT(1003), 1, WAITER);
	leave(AT(1004), 1, WAITER, SYS_fcntl, 0, 3, AE_OBJ_FILE, FILE_A, 0);
	if (!scenario_build(NULL))
		goto out;
	s = seg(WAITER, 0);
	CHECK_EQ(S(s)->end_reason, ARGUS_END_WAIT);
	CHECK_EQ(S(s)->wait_nr, SYS_fcntl);
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(0), AT(2000), &o, &n), 0);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(o[0].ts, AT(1004));
		CHECK_EQ(o[0].ret, 0);
		CHECK_EQ(o[0].wait, 1);
		CHECK_EQ(o[0].op, ARGUS_LOCK_EXCL);
		CHECK_EQ(o[0].file, FILE_A);
		CHECK_EQ(o[0].len, ARGUS_LOCK_EOF);
	}
	free(o);
	/* asked at 500 us, it was still waiting */
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(0), AT(500), &o, &n), 0);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(o[0].ret, -EINPROGRESS);
		CHECK_EQ(o[0].file, FILE_A);
	}
	free(o);
	CHECK_EQ(holder_at(FILE_A, 1100, HOLDER, ARGUS_LOCK_SHARED), WAITER);
out:
	scenario_end();
}

/* ---- fcntl byte ranges: SQLite ------------------------------------------ */

/* The holder runs BEGIN EXCLUSIVE as SQLite's unix VFS does it (SHARED:
 * read-lock PENDING, read-lock the SHARED range, unlock PENDING; RESERVED;
 * PENDING; EXCLUSIVE: write-lock the SHARED range); the waiter's busy
 * handler then tries to read-lock PENDING (EAGAIN) and sleeps, twice; the
 * holder's COMMIT unlocks the whole file. */
static void sqlite_scenario(void)
{
	begin();
	do_fcntl(100, 0, HOLDER, AE_F_SETLK, RD, PENDING, 1, 0, FILE_A);
	do_fcntl(110, 0, HOLDER, AE_F_SETLK, RD, SHARED_FIRST, SHARED_SIZE, 0, FILE_A);
	do_fcntl(120, 0, HOLDER, AE_F_SETLK, UNL, PENDING, 1, 0, FILE_A);
	do_fcntl(130, 0, HOLDER, AE_F_SETLK, WR, RESERVED, 1, 0, FILE_A);
	do_fcntl(140, 0, HOLDER, AE_F_SETLK, WR, PENDING, 1, 0, FILE_A);
	do_fcntl(150, 0, HOLDER, AE_F_SETLK, WR, SHARED_FIRST, SHARED_SIZE, 0, FILE_A);
	for (int i = 0; i < 2; i++) {
		do_fcntl(300 + 300 * i, 1, WAITER, AE_F_SETLK, RD, PENDING, 1, -EAGAIN, FILE_A);
		block(AT(302 + 300 * i), 1, WAITER, SYS_nanosleep, 100000, 0, 0, 0);
		run(AT(400 + 300 * i), 1, WAITER);
	}
	do_fcntl(1000, 0, HOLDER, AE_F_SETLK, UNL, 0, 0, 0, FILE_A);
	/* an F_GETFL between them is no lock attempt */
	enter(AT(1100), 1, WAITER, SYS_fcntl, 3, 3);
	leave(AT(1101), 1, WAITER, SYS_fcntl, 2, 3, AE_OBJ_NONE, 0, 0);
}

static void TEST_sqlite_busy_retries_are_refused_read_locks_blocked_by_the_exclusive_holder(void)
{
	struct argus_lock_op *o = NULL, h;
	uint32_t n = 0;

	sqlite_scenario();
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(argus_diag__lock_ops(graph, WAITER, AT(0), AT(2000), &o, &n), 0);
	CHECK_EQ(n, 2);         /* the F_GETFL is not one */
	for (uint32_t i = 0; i < n && i < 2; i++) {
		CHECK_EQ(o[i].kind, ARGUS_LOCK_POSIX);
		CHECK_EQ(o[i].op, ARGUS_LOCK_SHARED);
		CHECK_EQ(o[i].ret, -EAGAIN);
		CHECK_EQ(o[i].start, PENDING);
		CHECK_EQ(o[i].len, 1);
		CHECK_EQ(argus_diag__lock_blocker(graph, &o[i], &h), 0);
		CHECK_EQ(h.pid, HOLDER);
		/* the lock that conflicts: the write lock on PENDING */
		CHECK_EQ(h.op, ARGUS_LOCK_EXCL);
		CHECK_EQ(h.start, PENDING);
		CHECK_EQ(h.ts, AT(141));
	}
	free(o);
out:
	scenario_end();
}

static void TEST_unlocking_one_byte_keeps_the_rest_of_a_processes_locks(void)
{
	struct argus_lock_op h, shared_try = {
		.pid = WAITER, .tid = WAITER, .file = FILE_A, .kind = ARGUS_LOCK_POSIX,
		.op = ARGUS_LOCK_EXCL, .start = SHARED_FIRST, .len = SHARED_SIZE,
	}, pending_try = shared_try;

	pending_try.start = PENDING;
	pending_try.len = 1;
	sqlite_scenario();
	if (!scenario_build(NULL))
		goto out;
	/* after "unlock PENDING" (121 us) the holder still has its read lock
	 * on the SHARED range: a write there conflicts, PENDING is free */
	shared_try.ts = AT(125);
	pending_try.ts = AT(125);
	CHECK_EQ(argus_diag__lock_blocker(graph, &shared_try, &h), 0);
	CHECK_EQ(h.pid, HOLDER);
	CHECK_EQ(h.op, ARGUS_LOCK_SHARED);
	CHECK_EQ(argus_diag__lock_blocker(graph, &pending_try, &h), -ENOENT);
	/* the whole-file query sees the holder then, and nobody after COMMIT */
	CHECK_EQ(holder_at(FILE_A, 125, WAITER, ARGUS_LOCK_EXCL), HOLDER);
	CHECK_EQ(holder_at(FILE_A, 1050, WAITER, ARGUS_LOCK_EXCL), 0);
out:
	scenario_end();
}

/* Linux keeps flock locks and fcntl locks apart: neither blocks the other. */
static void TEST_flock_and_fcntl_locks_do_not_block_each_other(void)
{
	struct argus_lock_op h, posix_try = {
		.pid = WAITER, .tid = WAITER, .file = FILE_A, .kind = ARGUS_LOCK_POSIX,
		.op = ARGUS_LOCK_EXCL, .ts = AT(300),
	}, flock_try = posix_try;

	flock_try.kind = ARGUS_LOCK_FLOCK;
	begin();
	do_flock(100, 0, HOLDER, EX, 0, FILE_A);
	if (!scenario_build(NULL))
		goto out;
	CHECK_EQ(argus_diag__lock_blocker(graph, &posix_try, &h), -ENOENT);
	CHECK_EQ(argus_diag__lock_blocker(graph, &flock_try, &h), 0);
	CHECK_EQ(h.pid, HOLDER);
out:
	scenario_end();
}

/* ---- the diagnosis of a retry loop seen early ---------------------------- */

/* apt's wait for the dpkg lock, attached to 1.5 s in: the holder holds a
 * POSIX write lock on A; the waiter's F_SETLK (when `refused`) is refused
 * at 300 us and it sleeps 1 s (clock_nanosleep), still asleep when the
 * trace ends.  Diagnoses the waiter's hang over [300 us, 1.5 s] into *d. */
static bool one_sleep_after(bool refused, struct argus_diagnosis *d)
{
	struct argus_hang hang = { .tid = WAITER, .pid = WAITER, .ongoing = 1 };

	begin();
	do_fcntl(100, 0, HOLDER, AE_F_SETLK, WR, 0, 0, 0, FILE_A);
	enter(AT(110), 0, HOLDER, SYS_nanosleep, 0x7ffc0000, 0);
	block(AT(120), 0, HOLDER, SYS_nanosleep, 8000000000ull, 0, 0, 0);
	if (refused)
		do_fcntl(300, 1, WAITER, AE_F_SETLK, WR, 0, 0, -EAGAIN, FILE_A);
	enter(AT(310), 1, WAITER, SYS_clock_nanosleep, 0, 0);
	block(AT(320), 1, WAITER, SYS_clock_nanosleep, 1000000000ull, 0, 0, 0);
	run(AT(1500000), 2, OTHER);
	if (!scenario_build(NULL))
		return false;
	hang.start = AT(300);
	hang.end = AT(1500000);
	hang.seg = argus_graph__segment_at(graph, WAITER, AT(320));
	CHECK_EQ(argus_diag__diagnose(graph, &hang, NULL, d), 0);
	return true;
}

/* One sleep is no retry loop yet (that takes three), but the refused try
 * in the run before it says what the sleep waits for: the lock's holder,
 * rule lock (was: no culprit, "a sleep waits for no one"). */
static void TEST_one_sleep_after_a_refused_lock_try_blames_the_holder(void)
{
	struct argus_diagnosis d;

	if (!one_sleep_after(true, &d))
		goto out;
	CHECK_EQ(d.kind, ARGUS_KIND_BLOCKED);
	CHECK(d.nchain >= 1);
	if (d.nchain >= 1) {
		CHECK_EQ(d.chain[0].tid, HOLDER);
		CHECK_EQ(d.chain[0].rule, ARGUS_RULE_LOCK);
	}
out:
	scenario_end();
}

/* A plain sleep, with no lock try before it, still waits for no one. */
static void TEST_one_sleep_without_a_lock_try_names_no_culprit(void)
{
	struct argus_diagnosis d;

	if (one_sleep_after(false, &d))
		CHECK_EQ(d.nchain, 0);
	scenario_end();
}

/* ---- a culprit stopped by a signal, offline ------------------------------ */

#define PIPE_Q 0x4242ull

/* xprop and a SIGSTOPped Xvfb: the server (HOLDER) stops at 50 us
 * (TASK_STOPPED); the client (WAITER) blocks reading its reply at 110;
 * OTHER (the shell that sends SIGCONT) kills at 3 s, which wakes the
 * server; it writes the reply and wakes the client.  The client's culprit
 * is the server (it woke it, late); the server did not run for most of
 * the window because it was stopped, and OTHER continued it: the next
 * entry, rule waker (was: the chain ended at a "busy" server). */
static void TEST_culprit_stopped_by_a_signal_is_followed_to_who_continued_it(void)
{
	struct argus_hang hang = { .tid = WAITER, .pid = WAITER };
	struct argus_diagnosis d;

	begin();
	tg_ok(argus_tracegen__sw(tg, AT(50), 0, HOLDER, HOLDER, 0x4, -1, 0, AE_OBJ_NONE, 0, 0,
				 0, 0), "stop", AT(50));
	enter(AT(100), 1, WAITER, SYS_read, 3, 0);
	block(AT(110), 1, WAITER, SYS_read, 3, AE_OBJ_PIPE, PIPE_Q, 0);
	enter(AT(3000000), 2, OTHER, SYS_kill, HOLDER, 18);
	wake(AT(3000005), 2, OTHER, HOLDER);
	leave(AT(3000010), 2, OTHER, SYS_kill, 0, HOLDER, AE_OBJ_NONE, 0, 0);
	enter(AT(3000020), 2, OTHER, SYS_wait4, -1, 0);
	block(AT(3000030), 2, OTHER, SYS_wait4, 0, 0, 0, 0);
	run(AT(3000050), 0, HOLDER);
	enter(AT(3000060), 0, HOLDER, SYS_write, 4, 0);
	wake(AT(3000065), 0, HOLDER, WAITER);
	leave(AT(3000070), 0, HOLDER, SYS_write, 4, 4, AE_OBJ_PIPE, PIPE_Q, 0);
	block(AT(3000080), 0, HOLDER, SYS_poll, 0, 0, 0, 0);
	run(AT(3000100), 1, WAITER);
	leave(AT(3000110), 1, WAITER, SYS_read, 4, 3, AE_OBJ_PIPE, PIPE_Q, 0);
	block(AT(3000200), 1, WAITER, SYS_poll, 0, 0, 0, 0);
	if (!scenario_build(NULL))
		goto out;
	hang.start = AT(110);
	hang.end = AT(3000100);
	hang.seg = argus_graph__segment_at(graph, WAITER, AT(110));
	CHECK_EQ(argus_diag__diagnose(graph, &hang, NULL, &d), 0);
	CHECK(d.nchain >= 2);
	if (d.nchain >= 2) {
		CHECK_EQ(d.chain[0].tid, HOLDER);
		CHECK_EQ(d.chain[1].tid, OTHER);
		CHECK_EQ(d.chain[1].rule, ARGUS_RULE_WAKER);
		/* the server's entry says it sat stopped (50 us .. 3 s, of the
		 * window from 110 us), not only what it did once continued */
		CHECK(d.chain[0].stopped_ns >= AT(3000050) - AT(110) - 100000);
		CHECK(d.chain[0].stopped_ns <= AT(3000050) - AT(110));
		CHECK_EQ(d.chain[1].stopped_ns, 0);
	}
out:
	scenario_end();
}

int main(void)
{
	RUN(TEST_flock_op_decodes_to_kind_op_and_wait);
	RUN(TEST_fcntl_lock_cmds_decode_their_struct_flock_and_others_are_no_lock);
	RUN(TEST_pack_round_trips_and_widens_what_does_not_fit);
	RUN(TEST_lock_ops_lists_a_retry_loops_refused_tries_then_its_success);
	RUN(TEST_holder_of_a_flock_is_the_exclusive_acquirer_until_its_unlock);
	RUN(TEST_holder_exit_ends_its_lock);
	RUN(TEST_conflicting_acquisition_by_another_ends_the_previous_holding);
	RUN(TEST_shared_holders_block_exclusive_requests_only);
	RUN(TEST_attempt_still_waiting_at_the_end_is_reported_with_its_blocker);
	RUN(TEST_blocking_setlkw_is_one_attempt_acquired_at_its_exit);
	RUN(TEST_sqlite_busy_retries_are_refused_read_locks_blocked_by_the_exclusive_holder);
	RUN(TEST_unlocking_one_byte_keeps_the_rest_of_a_processes_locks);
	RUN(TEST_flock_and_fcntl_locks_do_not_block_each_other);
	RUN(TEST_one_sleep_after_a_refused_lock_try_blames_the_holder);
	RUN(TEST_one_sleep_without_a_lock_try_names_no_culprit);
	RUN(TEST_culprit_stopped_by_a_signal_is_followed_to_who_continued_it);
	return check_report();
}
