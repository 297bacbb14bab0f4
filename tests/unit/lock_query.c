/* lock_query - a test helper (not a test): the lock attempts of every
 * thread of a process in a recorded trace, each with who held the lock
 * then, as graphlib answers (argus_diag__lock_ops, argus_diag__lock_blocker,
 * argus_diag__lock_holder).  tests/e2e/lock_records.sh compares the
 * answer with /proc/locks read while the lock was held.
 *
 *   lock_query TRACE PID
 *
 * One line per attempt, time order per thread:
 *   attempt tid=T pid=P ts=NS kind=K op=O wait=0|1 ret=R file=0xF
 *           start=S len=L blocker=PID|none holder=PID|none
 * (on one line).  blocker: argus_diag__lock_blocker (the attempt's
 * family and range); holder: argus_diag__lock_holder (the whole file, any
 * family).  Exit 0, or 1 after one error line on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_graph.h"
#include "trace_format.h"

static void who(const char *name, int rc, const struct argus_lock_op *h)
{
	if (rc)
		printf(" %s=none", name);
	else
		printf(" %s=%u", name, h->pid);
}

int main(int argc, char **argv)
{
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_graph *g;
	unsigned long pid;
	char *end;

	if (argc != 3 || !(pid = strtoul(argv[2], &end, 10)) || *end) {
		fprintf(stderr, "usage: lock_query TRACE PID\n");
		return 1;
	}
	t = argus_trace__open(argv[1], &err);
	if (!t) {
		fprintf(stderr, "lock_query: %s\n", err.msg);
		return 1;
	}
	g = argus_graph__build(t, NULL, &err);
	if (!g) {
		fprintf(stderr, "lock_query: %s: %s\n", argv[1], err.msg);
		argus_trace__close(t);
		return 1;
	}
	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *th = argus_graph__thread(g, i);
		struct argus_lock_op *o = NULL, h;
		uint32_t n = 0;
		int rc;

		if (th->pid != pid)
			continue;
		rc = argus_diag__lock_ops(g, th->tid, 0, UINT64_MAX, &o, &n);
		if (rc) {
			fprintf(stderr, "lock_query: lock ops of tid %u: %s\n", th->tid, strerror(-rc));
			argus_graph__free(g);
			argus_trace__close(t);
			return 1;
		}
		for (uint32_t k = 0; k < n; k++) {
			const struct argus_lock_op *a = &o[k];
			const char *op = argus_lock_op_str(a->op);

			printf("attempt tid=%u pid=%u ts=%" PRIu64 " kind=%s op=%s wait=%u ret=%" PRId64
			       " file=%#" PRIx64 " start=%" PRIu64 " len=%" PRIu64,
			       a->tid, a->pid, a->ts, argus_lock_kind_str(a->kind), op ? op : "?",
			       a->wait, a->ret, a->file, a->start, a->len);
			if (a->file) {
				who("blocker", argus_diag__lock_blocker(g, a, &h), &h);
				who("holder", argus_diag__lock_holder(g, a->file, a->ts, a->pid,
								      a->op, &h), &h);
			} else {
				printf(" blocker=none holder=none");
			}
			putchar('\n');
		}
		free(o);
	}
	argus_graph__free(g);
	argus_trace__close(t);
	return 0;
}
