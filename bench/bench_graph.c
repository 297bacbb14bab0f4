/* bench_graph.c - graph build speed and memory against the bare trace
 * reader on the same file, in the same run (this VM is shared and noisy:
 * only same-run ratios mean anything).
 *
 *   bench_graph TRACE [REPS] [--ui PID]
 *   bench_graph TRACE --digest
 *
 * For each of REPS rounds, with the reader's inflate-ahead thread off: one
 * read-only pass (argus_trace__next over all events, the floor any
 * consumer of the format pays), then one argus_graph__build, then
 * machine-wide hang finding on that graph (as `argus hangs FILE` with no
 * --pid); then the build again with that thread on (the default), in wall
 * time and the whole process's CPU time.  Prints the medians, events/s on
 * one core (CPU time of this thread, not wall time), the build/read ratio,
 * the wall time of both builds and their ratio per round, the graph's own
 * memory per event (argus_graph_stats.mem_bytes) and the process's peak
 * RSS, and the speed-up over the paper's 30 K events/s.
 *
 * Then the full diagnosis on the last round's graph, timed in CPU time of
 * this thread like the rest:
 *   - without --ui: for every process with a main thread,
 *     argus_diag__hangs (threshold 2 ms, so a synthetic trace has some),
 *     and argus_diag__diagnose on the longest hang found: the time of hang
 *     finding (all processes) and of the diagnosis proper;
 *   - with --ui PID: the UI process PID only, as `argus diagnose --pid PID`
 *     does: argus_diag__hangs with the default 2 s threshold, then
 *     argus_diag__diagnose on the longest hang.  Prints both times and the
 *     answer (the UI thread's kind, the culprit, the chain of tids and
 *     comms, the inspected nodes), to compare with the ground truth of
 *     `argus-gen --ui-hang` (tests/gen/argus_gen.c): CHAIN=W,D,V is
 *     query_worker, dbserver, db_vacuum.
 *
 * --digest builds the graph once and prints a hash of everything the API
 * exposes (segments, edges, threads, objects, both adjacencies, the
 * per-thread segment lists, each segment's and each thread's events) and
 * of the stats that do not depend on timing, field by field: two builds
 * print the same lines iff they made the same graph, whatever its storage
 * layout.  Segment, edge, thread and object ids are hashed (they are the
 * API's handles); event ids are not (storage order), events are hashed by
 * value.  A speed change to the builder must not change the lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "argus_graph.h"


static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wall time, and the whole process's CPU time (the reader's inflate-ahead
 * thread included): for the build with that thread on. */
static double wall_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double proc_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* This thread's system (kernel) CPU time: on this VM most of it is
 * zeroing the fresh pages of the graph's arrays, and it varies with the
 * host far more than user time does, so it is printed apart. */
static double sys_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const char *comm_of(const struct argus_graph *g, uint32_t tid)
{
	uint32_t i = argus_graph__thread_by_tid(g, tid);
	const struct argus_thread *t = i != ARGUS_NONE ? argus_graph__thread(g, i) : NULL;
	const char *s = t ? argus_trace__string(argus_graph__trace(g), t->comm) : NULL;

	return s ? s : "?";
}

/* --ui PID: the hangs of one UI process (default threshold) and the
 * diagnosis of the longest. */
static int bench_diagnose_ui(const struct argus_graph *g, uint32_t pid)
{
	struct argus_hang_opts o = { .sz = sizeof(o), .pid = pid };
	struct argus_diagnosis *d = calloc(1, sizeof(*d));
	struct argus_hang *h = NULL, *best = NULL;
	double t0, t1, t2;
	uint32_t n = 0;
	int rc;

	if (!d)
		return -1;
	t0 = cpu_s();
	rc = argus_diag__hangs(g, &o, &h, &n);
	t1 = cpu_s();
	if (rc) {
		fprintf(stderr, "bench_graph: hangs of pid %u: %s\n", pid, strerror(-rc));
		free(d);
		return -1;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!best || h[k].end - h[k].start > best->end - best->start)
			best = &h[k];
	printf("hang finding      %.3f ms CPU (pid %u, %u hangs >= 2 s)\n", (t1 - t0) * 1e3,
	       pid, n);
	if (!best) {
		free(h);
		free(d);
		return 0;
	}
	rc = argus_diag__diagnose(g, best, NULL, d);
	t2 = cpu_s();
	if (rc) {
		fprintf(stderr, "bench_graph: diagnosis: %s\n", strerror(-rc));
		free(h);
		free(d);
		return -1;
	}
	printf("diagnosis         %.3f ms CPU (hang of %.1f ms at %.3f s, UI thread %s)\n",
	       (t2 - t1) * 1e3, (double)(best->end - best->start) / 1e6,
	       (double)(best->start - argus_graph__stats(g)->min_ts) / 1e9,
	       argus_hang_kind_str(d->kind));
	if (d->nchain)
		printf("culprit           %u %s (%s)\n", d->chain[0].tid,
		       comm_of(g, d->chain[0].tid), argus_hang_kind_str(d->chain[0].kind));
	printf("chain            ");
	for (uint32_t k = 0; k < d->nchain; k++)
		printf("%s %u %s (%s%s)", k ? " ->" : "", d->chain[k].tid,
		       comm_of(g, d->chain[k].tid), argus_hang_kind_str(d->chain[k].kind),
		       d->chain[k].cycle ? ", cycle" : "");
	printf("%s\n", d->nchain ? "" : " (none)");
	printf("inspected         %u nodes of %" PRIu64 "\n", d->inspected,
	       argus_graph__stats(g)->vertices);
	printf("hangs + diagnosis %.3f ms CPU\n", (t2 - t0) * 1e3);
	free(h);
	free(d);
	return 0;
}

static void bench_diagnose(const struct argus_graph *g)
{
	struct argus_hang best = { 0 }, *h;
	struct argus_diagnosis *d = calloc(1, sizeof(*d));
	uint32_t n, nhangs = 0, nproc = 0;
	double t0 = cpu_s(), t1, t2;

	for (uint32_t i = 0; i < argus_graph__nthreads(g); i++) {
		const struct argus_thread *t = argus_graph__thread(g, i);
		struct argus_hang_opts o = { .sz = sizeof(o), .pid = t->pid,
					     .threshold_ns = 2000000 };

		if (t->tid != t->pid || t->kernel)
			continue;
		nproc++;
		if (argus_diag__hangs(g, &o, &h, &n))
			continue;
		for (uint32_t k = 0; k < n; k++)
			if (h[k].end - h[k].start > best.end - best.start)
				best = h[k];
		nhangs += n;
		free(h);
	}
	t1 = cpu_s();
	if (d && best.pid)
		argus_diag__diagnose(g, &best, NULL, d);
	t2 = cpu_s();
	printf("hang finding      %.3f s CPU over %u processes, %u hangs >= 2 ms\n",
	       t1 - t0, nproc, nhangs);
	if (d && best.pid)
		printf("diagnosis         %.3f s CPU (longest hang: pid %u, %.1f ms, %s, "
		       "chain %u, inspected %u)\n", t2 - t1, best.pid,
		       (double)(best.end - best.start) / 1e6, argus_hang_kind_str(d->kind),
		       d->nchain, d->inspected);
	printf("hangs + diagnosis %.3f s CPU\n", t2 - t0);
	free(d);
}

/* FNV-1a over bytes, then a final mix: not cryptographic, but any change
 * to any byte of any record changes it. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t fnv64(uint64_t h, uint64_t v)
{
	return fnv(h, &v, sizeof(v));
}

/* An event by value: what it says, not where it is stored. */
static uint64_t ev_hash(uint64_t h, const struct argus_gevent *e)
{
	h = fnv64(h, e->ts);
	h = fnv64(h, (uint64_t)e->val);
	h = fnv64(h, e->obj);
	h = fnv64(h, (uint64_t)(uint16_t)e->nr);
	h = fnv64(h, e->type);
	return fnv64(h, e->ctx);
}

/* The first event of thread index thr, and the one after ev. */
static uint32_t thr_first(const struct argus_graph *g, uint32_t thr)
{
	return argus_graph__thread(g, thr)->first_event;
}

static uint32_t thr_next(const struct argus_graph *g, uint32_t thr, uint32_t ev)
{
	return argus_graph__thread_next_event(g, thr, ev);
}

/*
 * Hashes of the graph's content, field by field: the same lines iff the
 * same graph, whatever the storage layout.  Segments, edges, threads and
 * objects are hashed by id (ids are part of the API); events by value in
 * the order each segment and thread lists them, and all of them as a
 * sum of per-event hashes (order-free: event ids are storage).
 */
static int digest(struct argus_trace *t)
{
	struct argus_error err = { 0 };
	struct argus_graph *g = argus_graph__build(t, NULL, &err);
	uint64_t h, sum = 0;
	uint32_t n, nev = 0;

	if (!g) {
		fprintf(stderr, "bench_graph: %s\n", err.msg);
		return 1;
	}
	h = 0xcbf29ce484222325ull;
	n = argus_graph__nsegments(g);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_segment *s = argus_graph__segment(g, i);
		const struct argus_object *o;

		h = fnv64(h, s->start);
		h = fnv64(h, s->end);
		h = fnv64(h, s->oncpu);
		h = fnv64(h, s->thread);
		h = fnv64(h, s->nevents);
		h = fnv64(h, s->nsamples);
		h = fnv64(h, s->start_reason);
		h = fnv64(h, s->end_reason);
		h = fnv64(h, s->woken_by);
		h = fnv64(h, s->flags);
		h = fnv64(h, (uint64_t)(int64_t)s->wait_nr);
		h = fnv64(h, s->wait_stack);
		h = fnv64(h, s->wait_arg);
		h = fnv64(h, s->wait_ns);
		o = argus_graph__object(g, s->wait_obj);
		h = fnv64(h, o ? o->kind : 0);
		h = fnv64(h, o ? o->obj : 0);
		h = fnv64(h, o ? o->peer : 0);
		for (uint32_t e = s->first_event; e != ARGUS_NONE;
		     e = argus_graph__seg_next_event(g, i, e))
			h = ev_hash(h, argus_graph__event(g, e, ARGUS_GEVENT_BUF));
	}
	printf("segments  %10u %016" PRIx64 "\n", n, h);
	h = 0xcbf29ce484222325ull;
	n = argus_graph__nedges(g);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_edge *e = argus_graph__edge(g, i, ARGUS_EDGE_BUF);

		h = fnv64(h, e->src);
		h = fnv64(h, e->dst);
		h = fnv64(h, e->type);
		h = fnv64(h, e->flags);
		h = fnv64(h, e->obj_kind);
		h = fnv64(h, e->src_ts);
		h = fnv64(h, e->dst_ts);
		h = fnv64(h, e->obj);
		h = fnv64(h, (uint64_t)e->bytes);
	}
	printf("edges     %10u %016" PRIx64 "\n", n, h);
	n = argus_graph__nevents(g);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_gevent *e = argus_graph__event(g, i, ARGUS_GEVENT_BUF);

		if (e->type == AE_NONE)
			continue;               /* an unused slot */
		sum += ev_hash(0xcbf29ce484222325ull, e);
		nev++;
	}
	printf("events    %10u %016" PRIx64 "\n", nev, sum);
	h = 0xcbf29ce484222325ull;
	n = argus_graph__nthreads(g);
	for (uint32_t i = 0; i < n; i++) {
		const struct argus_thread *th = argus_graph__thread(g, i);
		const uint32_t *ids;
		uint32_t k = argus_graph__thread_segments(g, i, &ids), c = 0;

		h = fnv64(h, th->tid);
		h = fnv64(h, th->pid);
		h = fnv64(h, th->ppid);
		h = fnv64(h, th->first_seg);
		h = fnv64(h, th->nseg);
		h = fnv64(h, th->comm);
		h = fnv64(h, th->process);
		h = fnv64(h, th->kernel);
		h = fnv(h, ids, k * sizeof(*ids));
		for (uint32_t e = thr_first(g, i); e != ARGUS_NONE; e = thr_next(g, i, e), c++)
			h = ev_hash(h, argus_graph__event(g, e, ARGUS_GEVENT_BUF));
		h = fnv64(h, c);
	}
	printf("threads   %10u %016" PRIx64 "\n", n, h);
	h = 0xcbf29ce484222325ull;
	for (n = 1; argus_graph__object(g, n); n++) {
		const struct argus_object *o = argus_graph__object(g, n);

		h = fnv64(h, o->kind);
		h = fnv64(h, o->obj);
		h = fnv64(h, o->peer);
	}
	printf("objects   %10u %016" PRIx64 "\n", n, h);
	h = 0xcbf29ce484222325ull;
	n = argus_graph__nsegments(g);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *ids;
		uint32_t k = argus_graph__out_edges(g, i, &ids);

		h = fnv(h, &k, sizeof(k));
		h = fnv(h, ids, k * sizeof(*ids));
		k = argus_graph__in_edges(g, i, &ids);
		h = fnv(h, &k, sizeof(k));
		h = fnv(h, ids, k * sizeof(*ids));
	}
	printf("adjacency %10u %016" PRIx64 "\n", n, h);
	{
		struct argus_graph_stats st = *argus_graph__stats(g);

		st.build_ns = 0;        /* timing */
		st.mem_bytes = 0;       /* capacities, not content */
		printf("stats                %016" PRIx64 "\n",
		       fnv(0xcbf29ce484222325ull, &st, sizeof(st)));
	}
	argus_graph__free(g);
	return 0;
}

int main(int argc, char **argv)
{
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_event ev;
	double rd[16], bd[16], bs[16], bw[16], aw[16], ac[16], wr[16], t0, s0, w0;
	uint64_t n = 0, mem = 0, nseg = 0, nedge = 0;
	const char *path = NULL;
	unsigned long ui = 0;
	int reps = 3, rc = 0, dig = 0;
	struct rusage ru;

	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (!strcmp(argv[i], "--digest")) {
			dig = 1;
		} else if (!strcmp(argv[i], "--ui")) {
			ui = i + 1 < argc ? strtoul(argv[++i], &end, 10) : 0;
			if (!ui || *end || ui > UINT32_MAX)
				reps = 0;
		} else if (!path) {
			path = argv[i];
		} else {
			reps = atoi(argv[i]);
		}
	}
	if (!path || reps < 1 || reps > 16) {
		fprintf(stderr, "usage: bench_graph TRACE [REPS 1..16] [--ui PID] | TRACE --digest\n");
		return 2;
	}
	t = argus_trace__open(path, &err);
	if (!t) {
		fprintf(stderr, "bench_graph: %s\n", err.msg);
		return 1;
	}
	if (dig) {
		rc = digest(t);
		argus_trace__close(t);
		return rc;
	}
	double hs[16], hratio[16];
	uint32_t machine_n = 0;

	for (int r = 0; r < reps; r++) {
		struct argus_graph *g;

		/* one thread: the reader inflates each chunk itself */
		argus_trace__prefetch(t, false);
		argus_trace__rewind(t);
		n = 0;
		t0 = cpu_s();
		while (argus_trace__next(t, &ev, &err) > 0)
			n++;
		rd[r] = cpu_s() - t0;
		t0 = cpu_s();
		s0 = sys_s();
		w0 = wall_s();
		g = argus_graph__build(t, NULL, &err);
		bw[r] = wall_s() - w0;
		bd[r] = cpu_s() - t0;
		bs[r] = sys_s() - s0;
		if (!g) {
			fprintf(stderr, "bench_graph: %s\n", err.msg);
			return 1;
		}
		mem = argus_graph__stats(g)->mem_bytes;
		nseg = argus_graph__stats(g)->vertices;
		nedge = argus_graph__stats(g)->edges;
		{
			/* `argus hangs FILE` with no --pid: every thread of every
			 * process (issue 12), in CPU time against the same
			 * round's build (a ratio per round, then the median) */
			struct argus_hang_opts ho = { .sz = sizeof(ho), .scope = ARGUS_HANGS_MACHINE };
			struct argus_hang *hh = NULL;
			uint32_t nh = 0;
			double h0 = cpu_s();
			int hrc = argus_diag__hangs(g, &ho, &hh, &nh);

			hs[r] = cpu_s() - h0;
			hratio[r] = hs[r] / bd[r];
			machine_n = hrc ? 0 : nh;
			free(hh);
		}
		if (r == reps - 1 && ui)
			rc = bench_diagnose_ui(g, (uint32_t)ui);
		else if (r == reps - 1)
			bench_diagnose(g);
		argus_graph__free(g);
		{
			/* the same build, the next chunk inflated ahead on the
			 * reader's second thread (the default): wall time, and
			 * CPU time of the whole process; after the first graph
			 * is freed, so that the peak RSS is one graph's */
			struct argus_graph *g2;
			double c0 = proc_s();

			argus_trace__prefetch(t, true);
			w0 = wall_s();
			g2 = argus_graph__build(t, NULL, &err);
			aw[r] = wall_s() - w0;
			ac[r] = proc_s() - c0;
			wr[r] = bw[r] / aw[r];
			if (!g2) {
				fprintf(stderr, "bench_graph: %s\n", err.msg);
				return 1;
			}
			argus_graph__free(g2);
		}
	}
	qsort(hs, reps, sizeof(double), cmp_d);
	qsort(hratio, reps, sizeof(double), cmp_d);
	qsort(rd, reps, sizeof(double), cmp_d);
	qsort(bd, reps, sizeof(double), cmp_d);
	qsort(bs, reps, sizeof(double), cmp_d);
	qsort(bw, reps, sizeof(double), cmp_d);
	qsort(aw, reps, sizeof(double), cmp_d);
	qsort(ac, reps, sizeof(double), cmp_d);
	qsort(wr, reps, sizeof(double), cmp_d);
	getrusage(RUSAGE_SELF, &ru);
	double r = rd[reps / 2], b = bd[reps / 2];
	printf("events            %" PRIu64 "\n", n);
	printf("vertices          %" PRIu64 "\n", nseg);
	printf("edges             %" PRIu64 "\n", nedge);
	printf("read only         %.3f s CPU, %.2f M events/s\n", r, (double)n / r / 1e6);
	printf("machine hangs     %.3f s CPU for every thread (%u hangs >= 2 s): %.1f%% of the"
	       " same round's build (median of %d rounds)\n", hs[reps / 2], machine_n,
	       100.0 * hratio[reps / 2], reps);
	printf("graph build       %.3f s CPU, %.2f M events/s (includes reading)\n", b,
	       (double)n / b / 1e6);
	printf("  of which kernel %.3f s (median of the builds' system time: page faults)\n",
	       bs[reps / 2]);
	printf("build / read      %.2fx\n", b / r);
	printf("graph build wall  %.3f s, %.2f M events/s, one thread\n", bw[reps / 2],
	       (double)n / bw[reps / 2] / 1e6);
	printf("build, inflating ahead  %.3f s wall, %.2f M events/s; %.3f s CPU of the process"
	       " (%.2fx the one-thread build's)\n", aw[reps / 2], (double)n / aw[reps / 2] / 1e6,
	       ac[reps / 2], ac[reps / 2] / b);
	printf("wall, one thread / inflating ahead  %.2fx (median of the rounds' ratios)\n",
	       wr[reps / 2]);
	printf("graph memory      %.1f B/event (%.1f MiB)\n", (double)mem / (double)n,
	       (double)mem / 1048576.0);
	printf("peak RSS          %.1f MiB (%.1f B/event, reader + graph)\n",
	       (double)ru.ru_maxrss / 1024.0, (double)ru.ru_maxrss * 1024.0 / (double)n);
	printf("vs paper 30K/s    %.0fx\n", (double)n / b / 30000.0);
	argus_trace__close(t);
	return rc ? 1 : 0;
}
