/* test_syscall_class.c - the syscall table (syscalls/syscall_class.h)
 * against ground truth it does not share:
 *   - its names and numbers against the name table generated from the
 *     installed UAPI header (syscall_names.h) and libc's SYS_* numbers;
 *   - the arguments it says a call's timeout, fd or pollfd array is in
 *     against the kernel's own syscall tracepoint formats (tracefs; the
 *     check is skipped, and says so, when tracefs cannot be read);
 *   - the invariants between classes the code relies on (an epoll wait
 *     is a poll-family wait, an exit-only call is traced, ...);
 *   - argusd's default bitmaps and hang_rule.h's predicates, built from
 *     it, against the classes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_events.h"
#include "bpf_probe.h"
#include "check.h"
#include "hang_rule.h"
#include "syscall_class.h"
#include "syscall_names.h"

struct row {
	const char *name;
	long nr;
	uint32_t cls;
	long libc_nr;           /* SYS_<name> from <sys/syscall.h> */
};

static const struct row rows[] = {
#define ROW(name, nr, cls) { #name, nr, cls, SYS_##name },
	ARGUS_SYSCALL_CLASSES(ROW)
#undef ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Every member of class `sub` is also in one of the classes of `super`. */
static bool subset(uint32_t sub, uint32_t super)
{
	for (size_t i = 0; i < NROWS; i++)
		if ((rows[i].cls & sub) && !(rows[i].cls & super)) {
			fprintf(stderr, "  %s breaks %#x => %#x\n", rows[i].name, sub, super);
			return false;
		}
	return true;
}

static bool disjoint(uint32_t a, uint32_t b)
{
	for (size_t i = 0; i < NROWS; i++)
		if ((rows[i].cls & a) && (rows[i].cls & b)) {
			fprintf(stderr, "  %s is in both %#x and %#x\n", rows[i].name, a, b);
			return false;
		}
	return true;
}

static void names_match_uapi(void)
{
	for (size_t i = 0; i < NROWS; i++) {
		const char *n = argus_syscall_name(rows[i].nr);

		if (!n || strcmp(n, rows[i].name))
			fprintf(stderr, "  %s: the UAPI header calls %ld %s\n", rows[i].name, rows[i].nr,
				n ? n : "(nothing)");
		CHECK(n && !strcmp(n, rows[i].name));
		CHECK_EQ(argus_syscall_nr(rows[i].name), rows[i].nr);
		CHECK_EQ(rows[i].libc_nr, rows[i].nr);
		CHECK_EQ(argus_syscall_class_by_name(rows[i].name), rows[i].cls);
	}
	CHECK_EQ(ARGUS_NR_futex, SYS_futex);
	CHECK_EQ(ARGUS_NR_epoll_pwait2, 441);
}

static void lookup_is_the_table(void)
{
	uint32_t members = 0;

	for (size_t i = 0; i < NROWS; i++) {
		CHECK_EQ(argus_sys_class(rows[i].nr), rows[i].cls);
		CHECK(rows[i].cls != 0);                /* a row means something */
		CHECK((rows[i].cls & (AE_SYS_TRACED | AE_SYS_ENTRY)) == 0);   /* the loader's */
		CHECK(rows[i].nr >= 0 && rows[i].nr < ARGUS_SYS_CLASS_NRS);
	}
	for (long nr = 0; nr < ARGUS_SYS_CLASS_NRS; nr++)
		members += argus_sys_class(nr) != 0;
	CHECK_EQ(members, NROWS);                       /* no number twice */
	CHECK_EQ(argus_sys_class(-1), 0);              /* not in a syscall */
	CHECK_EQ(argus_sys_class(ARGUS_SYS_CLASS_NRS), 0);
	CHECK_EQ(argus_sys_class(0x7fffffffL), 0);
	CHECK_EQ(argus_sys_class(SYS_getpid), 0);
	CHECK_EQ(argus_syscall_class_by_name("no_such_call"), 0);
}

static void classes_nest(void)
{
	const uint32_t model = ARGUS_SC_POLL | ARGUS_SC_SLEEP | ARGUS_SC_YIELD |
			       ARGUS_SC_CHILD_WAIT | ARGUS_SC_FUTEX | ARGUS_SC_FILE_LOCK |
			       ARGUS_SC_SEND | ARGUS_SC_RECV | ARGUS_SC_CONNECT | ARGUS_SC_ACCEPT |
			       ARGUS_SC_NEW_FD | ARGUS_SC_FD_PAIR | ARGUS_SC_SIGNAL | ARGUS_SC_EXIT |
			       ARGUS_SC_FD_ARG0 | ARGUS_SC_TIMEOUT | ARGUS_SC_EXIT_ONLY;

	CHECK(subset(ARGUS_SC_EPOLL, ARGUS_SC_POLL));
	CHECK(subset(ARGUS_SC_POLLFD, ARGUS_SC_POLL));
	/* every poll-family wait and sleep takes a timeout, recorded or not */
	CHECK(subset(ARGUS_SC_POLL | ARGUS_SC_SLEEP, ARGUS_SC_TIMEOUT | ARGUS_SC_TIMEOUT_UNTRACED));
	CHECK(disjoint(ARGUS_SC_TIMEOUT, ARGUS_SC_TIMEOUT_UNTRACED));
	/* the BPF side records a timeout only for sleeps and non-epoll polls */
	CHECK(subset(ARGUS_SC_TIMEOUT, ARGUS_SC_SLEEP | ARGUS_SC_POLL));
	CHECK(disjoint(ARGUS_SC_TIMEOUT, ARGUS_SC_EPOLL));
	/* an epoll wait's key is its epoll fd; other polls' the timeout */
	CHECK(subset(ARGUS_SC_EPOLL, ARGUS_SC_FD_ARG0));
	CHECK(disjoint(ARGUS_SC_TIMEOUT, ARGUS_SC_FD_ARG0));
	CHECK(disjoint(ARGUS_SC_SEND, ARGUS_SC_RECV));
	CHECK(subset(ARGUS_SC_SEND | ARGUS_SC_RECV | ARGUS_SC_CONNECT | ARGUS_SC_ACCEPT,
		     ARGUS_SC_FD_ARG0));
	CHECK(subset(ARGUS_SC_MSG_COUNT, ARGUS_SC_SEND | ARGUS_SC_RECV));
	CHECK(subset(ARGUS_SC_ACCEPT, ARGUS_SC_NEW_FD));
	CHECK(disjoint(ARGUS_SC_NEW_FD, ARGUS_SC_FD_PAIR));
	CHECK(disjoint(ARGUS_SC_FILE_LOCK, ARGUS_SC_FD_ARG0));   /* fcntl: lock cmds only */
	/* what the graph and the model read is traced... */
	CHECK(subset(model, ARGUS_SC_TRACED));
	/* ...and so are the entries they read: the poll's nfds, the lock
	 * request, the waker's futex/kill/exit, the sleep, the connect */
	CHECK(disjoint(ARGUS_SC_EXIT_ONLY, ARGUS_SC_POLL | ARGUS_SC_SLEEP | ARGUS_SC_FUTEX |
		       ARGUS_SC_FILE_LOCK | ARGUS_SC_CONNECT | ARGUS_SC_SIGNAL | ARGUS_SC_EXIT |
		       ARGUS_SC_CHILD_WAIT));
	for (size_t i = 0; i < NROWS; i++)
		if (rows[i].cls & ARGUS_SC_TIMEOUT) {
			/* argus.bpf.c timeout_arg() reads arguments 0, 2, 4 only */
			CHECK(ARGUS_SC_TIMEOUT_ARG(rows[i].cls) % 2 == 0 &&
			      ARGUS_SC_TIMEOUT_ARG(rows[i].cls) <= 4);
			CHECK(ARGUS_SC_TIMEOUT_UNIT(rows[i].cls) <= ARGUS_TMO_MS);
		}
}

/* Argument i of syscall name as its tracepoint declares it ("struct
 * __kernel_timespec * tsp"); false when tracefs cannot be read. */
static bool tp_arg(const char *name, unsigned i, char *out, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], line[512];
	FILE *f = NULL;
	int arg = -1;           /* -1 until __syscall_nr's line */

	for (size_t r = 0; !f && r < sizeof(roots) / sizeof(roots[0]); r++) {
		snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s/format", roots[r], name);
		f = fopen(path, "r");
	}
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *field = strstr(line, "field:"), *end;

		if (!field)
			continue;
		if (arg < 0) {
			if (strstr(field, "__syscall_nr"))
				arg = 0;
			continue;
		}
		if ((unsigned)arg++ != i)
			continue;
		field += strlen("field:");
		end = strchr(field, ';');
		snprintf(out, len, "%.*s", end ? (int)(end - field) : (int)strlen(field), field);
		fclose(f);
		return true;
	}
	fclose(f);
	return false;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* The arguments the table (and the BPF side through it) reads, against
 * the kernel's declarations. */
static void arguments_match_kernel(void)
{
	char a[128];
	int seen = 0;

	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		if (!(r->cls & (ARGUS_SC_TIMEOUT | ARGUS_SC_FD_ARG0 | ARGUS_SC_FILE_LOCK |
				ARGUS_SC_POLLFD | ARGUS_SC_FUTEX)))
			continue;
		if (!tp_arg(r->name, 0, a, sizeof(a)))
			continue;
		seen++;
		if (r->cls & ARGUS_SC_TIMEOUT) {
			unsigned unit = ARGUS_SC_TIMEOUT_UNIT(r->cls);

			CHECK(tp_arg(r->name, ARGUS_SC_TIMEOUT_ARG(r->cls), a, sizeof(a)));
			if (unit == ARGUS_TMO_MS)
				CHECK(!strncmp(a, "int ", 4) && strstr(a, "timeout"));
			else if (unit == ARGUS_TMO_TIMEVAL)
				CHECK(strstr(a, "timeval *") != NULL);
			else            /* the timeout, not nanosleep's remainder */
				CHECK(strstr(a, "timespec *") && !strstr(a, "rmtp"));
		}
		CHECK(tp_arg(r->name, 0, a, sizeof(a)));
		if (r->cls & (ARGUS_SC_FD_ARG0 | ARGUS_SC_FILE_LOCK)) {
			if (!ends_with(a, "fd"))
				fprintf(stderr, "  %s: arg 0 is %s, not an fd\n", r->name, a);
			CHECK(ends_with(a, "fd"));      /* fd, epfd, ufd */
		}
		if (r->cls & ARGUS_SC_FUTEX)
			CHECK(ends_with(a, "uaddr"));
		if (r->cls & ARGUS_SC_POLLFD) {
			CHECK(strstr(a, "struct pollfd *") != NULL);
			CHECK(tp_arg(r->name, 1, a, sizeof(a)) && ends_with(a, "nfds"));
		}
	}
	/* the BPF side's one-off: pipe2's fds array is arg0, socketpair's arg3 */
	if (tp_arg("pipe2", 0, a, sizeof(a)))
		CHECK(!strncmp(a, "int *", 5));
	if (tp_arg("socketpair", 3, a, sizeof(a)))
		CHECK(!strncmp(a, "int *", 5));
	if (!seen)
		fprintf(stderr, "  (tracefs syscall formats unreadable: argument checks skipped)\n");
}

static bool entry_of(const uint64_t bitmap[8], long nr)
{
	return bitmap[nr / 64] >> (nr % 64) & 1;
}

/* argusd's default bitmaps are the table's TRACED and TRACED minus
 * EXIT_ONLY; hang_rule.h's predicates are the table's classes. */
static void users_follow_the_table(void)
{
	uint64_t sys[8], ent[8];

	argus_probe__default_syscalls(sys);
	argus_probe__default_entries(ent);
	for (long nr = 0; nr < ARGUS_SYS_CLASS_NRS; nr++) {
		uint32_t c = argus_sys_class(nr);
		bool traced = entry_of(sys, nr), entry = entry_of(ent, nr);

		CHECK_EQ(traced, !!(c & ARGUS_SC_TRACED));
		CHECK_EQ(entry, (c & ARGUS_SC_TRACED) && !(c & ARGUS_SC_EXIT_ONLY));
		CHECK_EQ(hang_rule_loop_nr(nr), !!(c & ARGUS_SC_POLL));
		CHECK_EQ(hang_rule_epoll_nr(nr), !!(c & ARGUS_SC_EPOLL));
		CHECK_EQ(hang_rule_sleep_nr(nr), !!(c & ARGUS_SC_SLEEP));
		CHECK_EQ(hang_rule_child_nr(nr), !!(c & ARGUS_SC_CHILD_WAIT));
	}
	/* the spot checks a reader would make */
	CHECK(entry_of(ent, SYS_futex) && !entry_of(ent, SYS_read) && !entry_of(ent, SYS_sched_yield));
	CHECK(hang_rule_out(SYS_write, 5) && hang_rule_out(SYS_connect, -EINPROGRESS) &&
	      !hang_rule_out(SYS_read, 5) && !hang_rule_out(SYS_write, 0));
	CHECK(hang_rule_in(SYS_recvfrom, 1) && !hang_rule_in(SYS_sendto, 1));
	CHECK(hang_rule_timed_out(SYS_futex, -ETIMEDOUT) && hang_rule_timed_out(SYS_ppoll, 0) &&
	      !hang_rule_timed_out(SYS_nanosleep, 0));
	CHECK(hang_rule_visit_nr(SYS_futex) && hang_rule_visit_nr(SYS_clock_nanosleep) &&
	      hang_rule_visit_nr(SYS_epoll_pwait2) && !hang_rule_visit_nr(SYS_wait4));
}

int main(void)
{
	RUN(names_match_uapi);
	RUN(lookup_is_the_table);
	RUN(classes_nest);
	RUN(arguments_match_kernel);
	RUN(users_follow_the_table);
	return check_report();
}
