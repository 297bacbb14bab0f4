/* scenario.h - what the tests that write small synthetic traces share
 * (test_graph_patterns.c, test_diagnosis.c): the trace being written,
 * the tid -> pid table that lets scenario lines name threads only, and
 * opening a generator on a fresh temp file.  One test file includes it,
 * so everything is static to that file.  Include after check.h and
 * tracegen.h, with T0 (the trace's first ns) defined. */
#ifndef ARGUS_TEST_SCENARIO_H
#define ARGUS_TEST_SCENARIO_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char trace_path[64];
static struct argus_tracegen *tg;       /* the scenario being written */
static struct argus_trace *trace;
static struct argus_graph *graph;

/* tid -> pid of the tasks declared */
static struct { uint32_t tid, pid; } pids[32];
static unsigned npids;

static uint32_t pid_of(uint32_t tid)
{
	for (unsigned i = 0; i < npids; i++)
		if (pids[i].tid == tid)
			return pids[i].pid;
	return tid;
}

/* A tracegen call that must succeed (the scenario would be wrong). */
static void tg_ok(int rc, const char *what, uint64_t ts)
{
	check_count++;
	if (rc) {
		check_failures++;
		fprintf(stderr, "  tracegen %s at T0+%" PRIu64 " ns failed: %d\n",
			what, ts - T0, rc);
	}
}

/* A generator with options o on a new /tmp/NAME.XXXXXX; the pid table is
 * emptied.  Failing is a failed check (tg stays NULL). */
static void scenario_open(const char *name, const struct argus_tracegen_opts *o)
{
	struct argus_error err = { 0 };
	int fd;

	npids = 0;
	snprintf(trace_path, sizeof(trace_path), "/tmp/%s.XXXXXX", name);
	fd = mkstemp(trace_path);
	if (fd >= 0)
		close(fd);
	tg = fd >= 0 ? argus_tracegen__open(trace_path, o, &err) : NULL;
	if (!tg)
		fprintf(stderr, "  tracegen open %s: %s\n", trace_path, err.msg);
	CHECK(tg != NULL);
}
#endif
