/* test_holder_rule.c - the schema's `holder` rules (docs/schema.md,
 * "Holders only the application knows"; graphlib/argus_holder_rule.h)
 * as a specification:
 *   - the `holder` line: what it parses into, and every kind of bad line
 *     reported with its line and the bad word;
 *   - the two pure helpers a host runs the command with: %p/%t expansion
 *     and the strict reading of the command's output;
 *   - the diagnosis (argus_diag_opts.wait_holders, rule holder-rule) on a
 *     small synthetic trace shaped like PostgreSQL's row-lock wait: psql
 *     hands a query to its backend B, B sleeps in epoll_wait under
 *     ProcSleep and nobody wakes it; a mock host answers "A".
 * Running the commands (no root, timeout, output) is test_holder_cmd.c's. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "argus_holder_rule.h"
#include "check.h"
#include "trace_format.h"
#include "tracegen.h"

#define NAME "t.schema"

static struct argus_schema *parse(const char *text)
{
	struct argus_error err;
	struct argus_schema *s;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(text, strlen(text), NAME, &err);
	if (!s)
		fprintf(stderr, "  unexpected error: %s\n", err.msg);
	return s;
}

/* `text` fails at `line` with "t.schema:LINE: " and every needle. */
static int fails_with(const char *text, unsigned line, const char *n1, const char *n2)
{
	struct argus_error err;
	struct argus_schema *s;
	char prefix[64];
	int ok;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(text, strlen(text), NAME, &err);
	if (s) {
		fprintf(stderr, "  parsed, but should fail: %s", text);
		argus_schema__free(s);
		return 0;
	}
	snprintf(prefix, sizeof(prefix), NAME ":%u: ", line);
	ok = err.code == -EINVAL && err.offset == line && !strncmp(err.msg, prefix, strlen(prefix)) &&
	     !strchr(err.msg, '\n') && (!n1 || strstr(err.msg, n1)) && (!n2 || strstr(err.msg, n2));
	if (!ok)
		fprintf(stderr, "  got code %d offset %llu: %s\n", err.code,
			(unsigned long long)err.offset, err.msg);
	return ok;
}
#define FAILS(text, line, n1, n2) CHECK(fails_with((text), (line), (n1), (n2)))

/* ---- the line ------------------------------------------------------------ */

static void full_line_fills_every_field(void)
{
	struct argus_schema *s = parse(
		"# PostgreSQL\n"
		"boundary after syscall:epoll_wait process=batchd\n"
		"holder ProcSleep,XactLockTableWait process=postgres as postgres timeout 500 "
		"run /usr/bin/psql -X -c pg_blocking_pids(%p) %t %% # a comment\n");
	const struct argus_holder_rule *r;
	uint32_t b, e, f;

	CHECK(s);
	if (!s)
		return;
	argus_schema__counts(s, &b, &e, &f);
	CHECK_EQ(b, 1);         /* the graph's rules are unchanged */
	CHECK_EQ(e + f, 0);
	CHECK_EQ(argus_schema__nholders(s), 1);
	r = argus_schema__holder(s, 0);
	CHECK(r != NULL);
	CHECK(argus_schema__holder(s, 1) == NULL);
	if (!r)
		goto out;
	CHECK_EQ(r->line, 3);
	CHECK_EQ(r->nfuncs, 2);
	CHECK(!strcmp(r->funcs[0], "ProcSleep"));
	CHECK(!strcmp(r->funcs[1], "XactLockTableWait"));
	CHECK(!strcmp(r->process, "postgres"));
	CHECK(!strcmp(r->user, "postgres"));
	CHECK_EQ(r->timeout_ms, 500);
	CHECK_EQ(r->argc, 6);   /* the comment is no argument */
	CHECK(!strcmp(r->argv[0], "/usr/bin/psql"));
	CHECK(!strcmp(r->argv[1], "-X"));
	CHECK(!strcmp(r->argv[3], "pg_blocking_pids(%p)"));
	CHECK(!strcmp(r->argv[4], "%t"));
	CHECK(!strcmp(r->argv[5], "%%"));
	CHECK(r->argv[6] == NULL);
out:
	argus_schema__free(s);
}

static void defaults_and_options_in_any_order(void)
{
	struct argus_schema *s = parse(
		"holder f run argus-pg-holders %p\n"
		"holder g,h timeout 60000 process=pg* run cmd\n"
		"holder i as app_user-1 run cmd\n");
	const struct argus_holder_rule *r;

	CHECK(s);
	if (!s)
		return;
	CHECK_EQ(argus_schema__nholders(s), 3);
	r = argus_schema__holder(s, 0);
	CHECK_EQ(r->timeout_ms, ARGUS_HOLDER_TIMEOUT_MS);
	CHECK_EQ(r->timeout_ms, 2000);
	CHECK(!strcmp(r->user, ""));
	CHECK(!strcmp(r->process, ""));
	CHECK_EQ(r->argc, 2);
	CHECK(!strcmp(r->argv[0], "argus-pg-holders"));
	r = argus_schema__holder(s, 1);
	CHECK_EQ(r->timeout_ms, 60000);
	CHECK(!strcmp(r->process, "pg*"));
	CHECK_EQ(r->line, 2);
	r = argus_schema__holder(s, 2);
	CHECK(!strcmp(r->user, "app_user-1"));
	argus_schema__free(s);
	CHECK_EQ(argus_schema__nholders(NULL), 0);
	CHECK(argus_schema__holder(NULL, 0) == NULL);
}

/* "run" ends the options: a later "run", "as" or "timeout" is an argument. */
static void everything_after_run_is_the_command(void)
{
	struct argus_schema *s = parse("holder f run /bin/echo run as root timeout 0 %p\n");
	const struct argus_holder_rule *r;

	CHECK(s);
	if (!s)
		return;
	r = argus_schema__holder(s, 0);
	CHECK_EQ(r->argc, 7);
	CHECK(!strcmp(r->argv[2], "as"));
	CHECK(!strcmp(r->argv[3], "root"));
	argus_schema__free(s);
}

static void limits_are_accepted_at_their_ends(void)
{
	char line[1024], func[ARGUS_HOLDER_FUNC_LEN];
	struct argus_schema *s;
	size_t n;

	/* 16 functions, a 127-byte one, a 32-byte user name, 24 words */
	n = (size_t)snprintf(line, sizeof(line), "holder ");
	for (int i = 0; i < 15; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "f%d,", i);
	memset(func, 'x', sizeof(func) - 1);
	func[sizeof(func) - 1] = 0;
	n += (size_t)snprintf(line + n, sizeof(line) - n, "%s as %s run c", func,
			      "u234567890123456789012345678901x");
	for (int i = 1; i < ARGUS_HOLDER_MAX_ARGS; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " a");
	snprintf(line + n, sizeof(line) - n, "\n");
	s = parse(line);
	CHECK(s);
	if (s) {
		CHECK_EQ(argus_schema__holder(s, 0)->nfuncs, 16);
		CHECK_EQ(argus_schema__holder(s, 0)->argc, 24);
	}
	argus_schema__free(s);
}

static void errors_name_the_line_and_the_word(void)
{
	FAILS("holder\n", 1, "holder: missing the function", NULL);
	FAILS("holder run x\n", 1, "missing the function", NULL);
	FAILS("\nholder f\n", 2, "missing 'run COMMAND'", NULL);
	FAILS("holder f as postgres\n", 1, "missing 'run COMMAND'", NULL);
	FAILS("holder f run\n", 1, "missing the command after 'run'", NULL);
	FAILS("holder f run # a comment\n", 1, "missing the command after 'run'", NULL);
	FAILS("holder process=pg run x\n", 1, "expected FUNC", "'process=pg'");
	FAILS("holder f as root run x\n", 1, "never runs as root", NULL);
	FAILS("holder f as run x\n", 1, "missing the user name after 'as'", NULL);
	FAILS("holder f as a b run x\n", 1, "unexpected 'b' before 'run'", NULL);
	FAILS("holder f as 1abc run x\n", 1, "bad user name '1abc'", NULL);
	FAILS("holder f as a/b run x\n", 1, "bad user name 'a/b'", NULL);
	FAILS("holder f as u2345678901234567890123456789012x run x\n", 1, "bad user name", NULL);
	FAILS("holder f as a as b run x\n", 1, "'as' given twice", NULL);
	FAILS("holder f timeout 0 run x\n", 1, "bad timeout '0'", "1 to 60000");
	FAILS("holder f timeout 60001 run x\n", 1, "bad timeout '60001'", NULL);
	FAILS("holder f timeout 99999999999999999999 run x\n", 1, "bad timeout", NULL);
	FAILS("holder f timeout 2s run x\n", 1, "bad timeout '2s'", NULL);
	FAILS("holder f timeout run x\n", 1, "missing milliseconds after 'timeout'", NULL);
	FAILS("holder f timeout 5 timeout 6 run x\n", 1, "'timeout' given twice", NULL);
	FAILS("holder f process= run x\n", 1, "empty glob", NULL);
	FAILS("holder f process=a process=b run x\n", 1, "process= given twice", NULL);
	FAILS("holder f process=0123456789abcdef run x\n", 1, "longer than 15", NULL);
	FAILS("holder f thread=x run x\n", 1, "unexpected 'thread=x' before 'run'", NULL);
	FAILS("holder f,,g run x\n", 1, "empty function name in 'f,,g'", NULL);
	FAILS("holder f, run x\n", 1, "empty function name", NULL);
	FAILS("holder ,f run x\n", 1, "empty function name", NULL);
	FAILS("holder a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q run x\n", 1, "more than 16 functions", NULL);
	FAILS("holder f run bin/psql\n", 1, "absolute path or a bare name", "'bin/psql'");
	FAILS("holder f run ./x\n", 1, "absolute path or a bare name", NULL);
	FAILS("holder f run /\n", 1, "is a directory", NULL);
	FAILS("holder f run x%p\n", 1, "cannot hold '%'", NULL);
	FAILS("holder f run x %d\n", 1, "unknown '%d' in '%d'", "%p, %t or %%");
	FAILS("holder f run x a%\n", 1, "unknown '%' in 'a%'", NULL);
	FAILS("holder f run x %P\n", 1, "unknown '%P'", NULL);
	FAILS("holder f run c 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25\n", 1,
	      "more than 24 words", NULL);
	/* the first error stops the parse: nothing of the file is used */
	FAILS("holder f run x\nholder g run\n", 2, "missing the command", NULL);
}

static void a_long_function_name_is_cut_in_the_message(void)
{
	char line[512], func[ARGUS_HOLDER_FUNC_LEN + 1];

	memset(func, 'y', sizeof(func) - 1);
	func[sizeof(func) - 1] = 0;     /* 128 bytes: one too many */
	snprintf(line, sizeof(line), "holder %s run x\n", func);
	FAILS(line, 1, "function name longer than 127 bytes", "...'");
}

static void too_many_holder_rules(void)
{
	size_t cap = (ARGUS_HOLDER_MAX_RULES + 1) * 24, n = 0;
	char *text = malloc(cap);

	if (!text)
		return;
	for (int i = 0; i <= ARGUS_HOLDER_MAX_RULES; i++)
		n += (size_t)snprintf(text + n, cap - n, "holder f run x\n");
	FAILS(text, ARGUS_HOLDER_MAX_RULES + 1, "too many holder rules", NULL);
	free(text);
}

/* ---- expansion and the output --------------------------------------------- */

static void expand_substitutes_pid_tid_and_percent(void)
{
	char out[32];

	CHECK_EQ(argus_holder__expand("%p", 1234, 1240, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "1234"));
	CHECK_EQ(argus_holder__expand("pid=%p,tid=%t", 1234, 1240, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "pid=1234,tid=1240"));
	CHECK_EQ(argus_holder__expand("100%%p", 1, 2, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "100%p"));
	CHECK_EQ(argus_holder__expand("", 1, 2, out, sizeof(out)), 0);
	CHECK(!strcmp(out, ""));
	CHECK_EQ(argus_holder__expand("%x", 1, 2, out, sizeof(out)), -EINVAL);
	CHECK_EQ(argus_holder__expand("a%", 1, 2, out, sizeof(out)), -EINVAL);
	CHECK_EQ(argus_holder__expand("%p", 4194304, 2, out, 7), -ENAMETOOLONG);
	CHECK_EQ(argus_holder__expand("%p", 4194304, 2, out, 8), 0);
	CHECK(!strcmp(out, "4194304"));
}

static int pids_of(const char *s, uint32_t *p, uint32_t max)
{
	return argus_holder__parse_pids(s, strlen(s), p, max);
}

static void output_is_read_strictly(void)
{
	uint32_t p[ARGUS_HOLDER_MAX_PIDS + 1];
	char many[256];
	size_t n = 0;

	CHECK_EQ(pids_of("{1234,5678}\n", p, 16), 2);   /* pg_blocking_pids */
	CHECK_EQ(p[0], 1234);
	CHECK_EQ(p[1], 5678);
	CHECK_EQ(pids_of("", p, 16), 0);
	CHECK_EQ(pids_of("{}\n", p, 16), 0);
	CHECK_EQ(pids_of("\n", p, 16), 0);                /* psql's NULL */
	CHECK_EQ(pids_of(" 1\t2\r\n3 ", p, 16), 3);
	CHECK_EQ(p[2], 3);
	CHECK_EQ(pids_of("7,7,7", p, 16), 1);             /* repeats kept once */
	CHECK_EQ(pids_of("4194304", p, 16), 1);
	CHECK_EQ(pids_of("4194305", p, 16), -EINVAL);
	CHECK_EQ(pids_of("99999999999999999999999", p, 16), -EINVAL);
	CHECK_EQ(pids_of("0", p, 16), -EINVAL);
	CHECK_EQ(pids_of("-1", p, 16), -EINVAL);
	CHECK_EQ(pids_of("12 34x", p, 16), -EINVAL);
	CHECK_EQ(pids_of("pid 12", p, 16), -EINVAL);
	CHECK_EQ(pids_of("0x10", p, 16), -EINVAL);
	CHECK_EQ(pids_of("1;2", p, 16), -EINVAL);
	CHECK_EQ(pids_of("1\0332", p, 16), -EINVAL);
	CHECK_EQ(argus_holder__parse_pids("12\0" "3", 4, p, 16), -EINVAL);   /* a NUL */
	CHECK_EQ(argus_holder__parse_pids(NULL, 0, p, 16), 0);
	CHECK_EQ(argus_holder__parse_pids(NULL, 1, p, 16), -EINVAL);
	for (int i = 1; i <= 17; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%d,", i);
	CHECK_EQ(pids_of(many, p, 16), -E2BIG);
	CHECK_EQ(pids_of(many, p, 17), 17);
}

/* ---- the diagnosis ------------------------------------------------------- */

#include "scenario.h"

#define CLIENT 500              /* "psql": the hung one */
#define BACKEND_B 600           /* "postgres": its backend, waits for a row lock */
#define BACKEND_A 700           /* "postgres": holds it, idle in transaction */
#define BYSTANDER 900           /* "top" */
#define SK_C 0x5001ull          /* unix socket psql <-> B: psql's end */
#define SK_B 0x5002ull          /* ... B's */
#define NOT_TRACED 4242         /* a process the trace never saw */

static void task(uint32_t tid, uint32_t pid, const char *comm)
{
	if (npids < sizeof(pids) / sizeof(pids[0]))
		pids[npids++] = (typeof(pids[0])){ tid, pid };
	tg_ok(argus_tracegen__task(tg, tid, pid, 1, comm), "task", T0);
}

/* B's wait: epoll_wait <- WaitLatch <- ProcSleep (addresses only: the
 * host would symbolize them) */
static const uint64_t STACK_LOCK[] = { 0x5a0100, 0x5a0200, 0x5a0300, 0x5a0400 };
static const uint64_t STACK_IDLE[] = { 0x5a0100, 0x5a0900 };

static void block_stack(uint64_t ts, uint16_t cpu, uint32_t tid, int32_t nr, uint64_t arg,
			const uint64_t *ips, uint32_t n)
{
	tg_ok(argus_tracegen__sw_stack(tg, ts, cpu, tid, pid_of(tid), ARGUS_TG_INTERRUPTIBLE, nr, arg,
				       AE_OBJ_NONE, 0, 0, 0, 0, ips, n), "sw_stack", ts);
}

#define T_DEADLOCK 0xffff888000030000ull    /* B's deadlock_timeout timer */

/* tid arms hrtimer `timer` (task context), expiring at `expires`. */
static void arm(uint64_t ts, uint16_t cpu, uint32_t tid, uint64_t timer, uint64_t expires)
{
	tg_ok(argus_tracegen__hrt_start(tg, ts, cpu, AE_CTX_TASK, tid, pid_of(tid), timer,
					HRTIMER_WAKEUP_FN, (int64_t)expires, 1, tid), "hrt_start", ts);
}

/* The armed timer expires on idle `cpu` (hardirq) and wakes target. */
static void expire(uint64_t ts, uint16_t cpu, uint64_t timer, uint32_t target)
{
	tg_ok(argus_tracegen__timer_wake(tg, ts, cpu, 0, 0, timer, target, pid_of(target)),
	      "timer_wake", ts);
}

/*
 * A (0..5 µs) runs, then sleeps in epoll_wait (idle in transaction).
 * B (10..20 µs) blocks reading its client socket.  psql (100 µs) writes
 * the query to B and polls for the answer (150 µs) to the end.  B reads
 * it (200 µs) and, with `woken_at` 0, sleeps in epoll_wait under
 * ProcSleep (300 µs) to the end; else A wakes it at woken_at µs.  With
 * `retry`, B's own timer (deadlock_timeout) ends that first wait at 1.5 s
 * and B sleeps again under the same stack, to the end: two waits of the
 * same length, of which the chain judges the first.  top does a syscall
 * at 3 s: the end of the trace.
 */
static bool pg_scenario_retry(uint64_t woken_at, bool retry)
{
	struct argus_tracegen_opts o = { .sz = sizeof(o), .ncpus = 4 };

	scenario_open("test_holder_rule", &o);
	task(CLIENT, CLIENT, "psql");
	task(BACKEND_B, BACKEND_B, "postgres");
	task(BACKEND_A, BACKEND_A, "postgres");
	task(BYSTANDER, BYSTANDER, "top");
	run(AT(0), 0, BACKEND_A);
	enter(AT(4), 0, BACKEND_A, SYS_epoll_wait, 5, 0);
	block_stack(AT(5), 0, BACKEND_A, SYS_epoll_wait, 5, STACK_IDLE, 2);
	run(AT(10), 1, BACKEND_B);
	enter(AT(15), 1, BACKEND_B, SYS_read, 9, 0);
	block(AT(20), 1, BACKEND_B, SYS_read, 9, AE_OBJ_UNIX, SK_B, SK_C);
	run(AT(100), 2, CLIENT);
	enter(AT(110), 2, CLIENT, SYS_write, 3, 0);
	wake(AT(115), 2, CLIENT, BACKEND_B);
	leave(AT(120), 2, CLIENT, SYS_write, 40, 3, AE_OBJ_UNIX, SK_C, SK_B);
	enter(AT(140), 2, CLIENT, SYS_poll, 0x7ffd0000, 1);
	block(AT(150), 2, CLIENT, SYS_poll, 0x7ffd0000, AE_OBJ_NONE, 0, 0);
	run(AT(200), 1, BACKEND_B);
	leave(AT(210), 1, BACKEND_B, SYS_read, 40, 9, AE_OBJ_UNIX, SK_B, SK_C);
	enter(AT(290), 1, BACKEND_B, SYS_epoll_wait, 7, 0);
	if (retry)
		arm(AT(295), 1, BACKEND_B, T_DEADLOCK, AT(1500000));
	block_stack(AT(300), 1, BACKEND_B, SYS_epoll_wait, 7, STACK_LOCK, 4);
	if (retry) {
		expire(AT(1500000), 1, T_DEADLOCK, BACKEND_B);
		run(AT(1500010), 1, BACKEND_B);
		leave(AT(1500015), 1, BACKEND_B, SYS_epoll_wait, 0, 7, AE_OBJ_NONE, 0, 0);
		enter(AT(1500020), 1, BACKEND_B, SYS_epoll_wait, 7, 0);
		block_stack(AT(1500030), 1, BACKEND_B, SYS_epoll_wait, 7, STACK_LOCK, 4);
	}
	if (woken_at) {
		run(AT(woken_at - 10), 0, BACKEND_A);
		leave(AT(woken_at - 8), 0, BACKEND_A, SYS_epoll_wait, 1, 5, AE_OBJ_NONE, 0, 0);
		wake(AT(woken_at), 0, BACKEND_A, BACKEND_B);
		run(AT(woken_at + 10), 1, BACKEND_B);
		leave(AT(woken_at + 15), 1, BACKEND_B, SYS_epoll_wait, 1, 7, AE_OBJ_NONE, 0, 0);
		enter(AT(woken_at + 20), 1, BACKEND_B, SYS_futex, 0x1000, FUTEX_WAIT_OP);
		block(AT(woken_at + 30), 1, BACKEND_B, SYS_futex, 0x1000, AE_OBJ_NONE, 0, 0);
	}
	run(AT(3000000), 3, BYSTANDER);
	enter(AT(3000010), 3, BYSTANDER, SYS_getpid, 0, 0);
	return scenario_reopen() && (graph = argus_graph__build(trace, NULL, NULL)) != NULL;
}

static bool pg_scenario(uint64_t woken_at)
{
	return pg_scenario_retry(woken_at, false);
}

struct mock {
	uint32_t answer[4], n;  /* what it answers about BACKEND_B */
	uint32_t calls, calls_b;
	uint32_t pid, tid, stack; /* the first call about B */
};

static uint32_t mock_wait_holders(void *ctx, uint32_t pid, uint32_t tid, uint32_t stack,
				  uint32_t *pids, uint32_t max)
{
	struct mock *m = ctx;

	m->calls++;
	if (tid != BACKEND_B)
		return 0;
	if (!m->calls_b++) {
		m->pid = pid;
		m->tid = tid;
		m->stack = stack;
	}
	CHECK(max >= m->n);
	memcpy(pids, m->answer, m->n * sizeof(*pids));
	return m->n;
}

static bool diagnose_client(struct mock *m, struct argus_diagnosis *d)
{
	struct argus_hang_opts ho = { .sz = sizeof(ho), .pid = CLIENT };
	struct argus_diag_opts o = { .sz = sizeof(o), .wait_holders = m ? mock_wait_holders : NULL,
				     .wait_holders_ctx = m };
	struct argus_hang *h = NULL;
	uint32_t n = 0;
	bool ok;

	CHECK_EQ(argus_diag__hangs(graph, &ho, &h, &n), 0);
	CHECK_EQ(n, 1);
	ok = n == 1 && argus_diag__diagnose(graph, &h[0], &o, d) == 0;
	CHECK(ok);
	if (ok)
		CHECK_EQ(h[0].ongoing, 1);
	free(h);
	return ok;
}

/* The trace alone: psql handed the query to B, and B's wait has no waker
 * and no normal run: the chain stops at B. */
static void TEST_without_the_rules_the_chain_stops_at_the_backend(void)
{
	struct argus_diagnosis d;

	if (!pg_scenario(0) || !diagnose_client(NULL, &d))
		goto out;
	CHECK_EQ(d.nchain, 1);
	CHECK_EQ(d.chain[0].tid, BACKEND_B);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_HANDOFF);
	CHECK_EQ(d.chain[0].kind, ARGUS_KIND_BLOCKED);
out:
	scenario_end();
}

static void TEST_holder_rule_names_the_process_the_application_names(void)
{
	struct mock m = { .answer = { BACKEND_A }, .n = 1 };
	struct argus_diagnosis d;
	const struct argus_culprit *k;
	const uint64_t *ips;
	uint32_t nr;

	if (!pg_scenario(0) || !diagnose_client(&m, &d))
		goto out;
	/* asked about B once, with B's wait stack; psql's wait (no stack) is
	 * not asked; A's own wait is asked (and not answered) */
	CHECK_EQ(m.calls_b, 1);
	CHECK_EQ(m.pid, BACKEND_B);
	CHECK_EQ(m.tid, BACKEND_B);
	CHECK(m.stack != 0);
	CHECK(!argus_trace__stack(trace, m.stack, &ips, &nr) && nr == 4 &&
	      !memcmp(ips, STACK_LOCK, sizeof(STACK_LOCK)));
	CHECK_EQ(m.calls, 2);
	CHECK_EQ(d.nchain, 2);
	CHECK_EQ(m.stack, S(d.chain[0].seg)->wait_stack);
	CHECK_EQ(d.chain[0].tid, BACKEND_B);
	CHECK_EQ(d.chain[0].rule, ARGUS_RULE_HANDOFF);
	k = &d.chain[1];
	CHECK_EQ(k->tid, BACKEND_A);
	CHECK_EQ(k->pid, BACKEND_A);
	CHECK_EQ(k->rule, ARGUS_RULE_HOLDER_RULE);
	CHECK_EQ(k->live_source, ARGUS_LIVE_HOLDER_RULE);
	CHECK_EQ(k->late, 1);
	CHECK_EQ(k->holder, 0);
	CHECK_EQ(k->asked, 0);
	CHECK_EQ(k->cycle, 0);
	CHECK_EQ(k->live_only, 0);
	CHECK_EQ(k->normal_seg, NONE);
	CHECK_EQ(k->kind, ARGUS_KIND_BLOCKED);
	CHECK_EQ(k->wait_nr, SYS_epoll_wait);
	CHECK_EQ(k->seg, seg(BACKEND_A, 0));
	/* judged over B's wait window: from B's block to the trace's end */
	CHECK_EQ(k->from, AT(300));
	CHECK_EQ(k->to, AT(3000010));
	CHECK(!strcmp(argus_culprit_rule_str(ARGUS_RULE_HOLDER_RULE), "holder-rule"));
	CHECK(!strcmp(argus_live_source_str(ARGUS_LIVE_HOLDER_RULE), "holder-rule"));
	CHECK_EQ(d.cycle, 0);
out:
	scenario_end();
}

/* The waiter itself is never its own holder, and an empty answer is none. */
static void TEST_an_answer_naming_the_waiter_or_nobody_names_no_holder(void)
{
	struct mock self = { .answer = { BACKEND_B }, .n = 1 }, none = { .n = 0 };
	struct argus_diagnosis d;

	if (!pg_scenario(0))
		goto out;
	if (diagnose_client(&self, &d)) {
		CHECK_EQ(self.calls_b, 1);
		CHECK_EQ(d.nchain, 1);
		CHECK_EQ(d.chain[0].tid, BACKEND_B);
	}
	if (diagnose_client(&none, &d)) {
		CHECK_EQ(none.calls_b, 1);
		CHECK_EQ(d.nchain, 1);
	}
out:
	scenario_end();
}

/* Of the processes named, the first the trace has; one it never saw is
 * named only when it is all there is (known only live). */
static void TEST_first_process_in_the_trace_else_one_known_only_live(void)
{
	struct mock two = { .answer = { NOT_TRACED, BACKEND_A }, .n = 2 };
	struct mock gone = { .answer = { NOT_TRACED }, .n = 1 };
	struct argus_diagnosis d;

	if (!pg_scenario(0))
		goto out;
	if (diagnose_client(&two, &d)) {
		CHECK_EQ(d.nchain, 2);
		CHECK_EQ(d.chain[1].tid, BACKEND_A);
	}
	if (diagnose_client(&gone, &d)) {
		CHECK_EQ(d.nchain, 2);
		CHECK_EQ(d.chain[1].tid, NOT_TRACED);
		CHECK_EQ(d.chain[1].pid, NOT_TRACED);
		CHECK_EQ(d.chain[1].live_only, 1);
		CHECK_EQ(d.chain[1].kind, ARGUS_KIND_NONE);
		CHECK_EQ(d.chain[1].seg, NONE);
		CHECK_EQ(d.chain[1].rule, ARGUS_RULE_HOLDER_RULE);
		CHECK_EQ(d.chain[1].live_source, ARGUS_LIVE_HOLDER_RULE);
	}
out:
	scenario_end();
}

/* The hung client's own process named: the chain closes a cycle on the
 * hung thread. */
static void TEST_naming_the_hung_process_closes_a_cycle(void)
{
	struct mock m = { .answer = { CLIENT }, .n = 1 };
	struct argus_diagnosis d;

	if (!pg_scenario(0) || !diagnose_client(&m, &d))
		goto out;
	CHECK_EQ(d.nchain, 2);
	CHECK_EQ(d.chain[1].tid, CLIENT);
	CHECK_EQ(d.chain[1].cycle, 1);
	CHECK_EQ(d.chain[1].rule, ARGUS_RULE_HOLDER_RULE);
	CHECK_EQ(d.cycle, 1);
out:
	scenario_end();
}

/* A wait that ended (A woke B at 2.5 s) is the trace's to explain: the
 * rules are not asked about it, whoever woke it is named. */
static void TEST_a_wait_someone_ended_is_not_asked(void)
{
	struct mock m = { .answer = { NOT_TRACED }, .n = 1 };
	struct argus_diagnosis d;

	if (!pg_scenario(2500000) || !diagnose_client(&m, &d))
		goto out;
	CHECK_EQ(m.calls_b, 0);
	CHECK(d.nchain >= 2);
	CHECK_EQ(d.chain[0].tid, BACKEND_B);
	CHECK_EQ(d.chain[1].tid, BACKEND_A);
	CHECK(d.chain[1].rule != ARGUS_RULE_HOLDER_RULE);
	CHECK_EQ(d.chain[1].live_source, ARGUS_LIVE_NONE);
out:
	scenario_end();
}

/* PostgreSQL's deadlock check: B's own timer ended its first wait and B
 * sleeps again in ProcSleep, still at the end.  The chain judges the
 * first wait (the two are as long); the rules are asked about the one
 * still open, with its stack. */
static void TEST_a_wait_retried_after_its_own_timeout_is_asked(void)
{
	struct mock m = { .answer = { BACKEND_A }, .n = 1 };
	struct argus_diagnosis d;

	if (!pg_scenario_retry(0, true) || !diagnose_client(&m, &d))
		goto out;
	CHECK(d.nchain >= 1);
	CHECK_EQ(d.chain[0].tid, BACKEND_B);
	CHECK_EQ(d.chain[0].seg, seg(BACKEND_B, 1));   /* the first lock wait */
	CHECK_EQ(m.calls_b, 1);
	CHECK_EQ(m.stack, S(seg(BACKEND_B, 2))->wait_stack);
	CHECK(m.stack != 0);
	CHECK_EQ(d.nchain, 2);
	CHECK_EQ(d.chain[1].tid, BACKEND_A);
	CHECK_EQ(d.chain[1].rule, ARGUS_RULE_HOLDER_RULE);
out:
	scenario_end();
}

int main(void)
{
	RUN(full_line_fills_every_field);
	RUN(defaults_and_options_in_any_order);
	RUN(everything_after_run_is_the_command);
	RUN(limits_are_accepted_at_their_ends);
	RUN(errors_name_the_line_and_the_word);
	RUN(a_long_function_name_is_cut_in_the_message);
	RUN(too_many_holder_rules);
	RUN(expand_substitutes_pid_tid_and_percent);
	RUN(output_is_read_strictly);
	RUN(TEST_without_the_rules_the_chain_stops_at_the_backend);
	RUN(TEST_holder_rule_names_the_process_the_application_names);
	RUN(TEST_an_answer_naming_the_waiter_or_nobody_names_no_holder);
	RUN(TEST_first_process_in_the_trace_else_one_known_only_live);
	RUN(TEST_naming_the_hung_process_closes_a_cycle);
	RUN(TEST_a_wait_someone_ended_is_not_asked);
	RUN(TEST_a_wait_retried_after_its_own_timeout_is_asked);
	return check_report();
}
