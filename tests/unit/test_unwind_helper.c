/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_unwind_helper.c - DWARF unwinding through the sandboxed helper
 * process (symbols/unwind_helper.h): same frames as in-process, memo hits
 * without a round trip, the sandbox really applied, and a helper that
 * dies or hangs is killed, counted and replaced without blocking.
 *
 * The sample is busy_nofp's (as in test_symbols.c): a frame-pointer-less
 * call chain that sends its registers and stack copy, then waits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "many_maps.h"
#include "proc_status.h"
#include "proc_maps.h"
#include "unwind.h"
#include "unwind_helper.h"

#define COPY_MAX 4096
#define RUN_C(test) do { int _f = check_failures; test(c); \
	fprintf(stderr, "%s %s\n", check_failures == _f ? "ok  " : "FAIL", #test); } while (0)
#define MAX_FRAMES 32

struct busy_rec {               /* must match busy_nofp.c */
	uint64_t ip, sp, bp, len;
	uint32_t line[4];
};

static struct {
	pid_t pid;
	int to_child;
	struct busy_rec rec;
	uint8_t copy[COPY_MAX];
	struct argus_proc_map *maps;
	size_t nmaps;
	uint64_t want[MAX_FRAMES];  /* the in-process unwinder's answer */
	int nwant;
} fx;

static int read_full(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int fixture(void)
{
	struct argus_unwinder *u;
	int in[2], out[2];

	if (pipe(in) || pipe(out) || (fx.pid = fork()) < 0)
		return 0;
	if (fx.pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(BUSY_NOFP_PATH, "busy_nofp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx.to_child = in[1];
	if (read_full(out[0], &fx.rec, sizeof(fx.rec)) || fx.rec.len > COPY_MAX ||
	    read_full(out[0], fx.copy, fx.rec.len))
		return 0;
	close(out[0]);
	if (argus_proc_maps__read((uint32_t)fx.pid, &fx.maps, &fx.nmaps))
		return 0;
	u = argus_unwinder__new();
	if (!u)
		return 0;
	fx.nwant = argus_unwinder__unwind(u, (uint32_t)fx.pid, fx.maps, fx.nmaps,
					  fx.rec.ip, fx.rec.sp, fx.rec.bp, fx.copy,
					  fx.rec.len, fx.want, MAX_FRAMES);
	argus_unwinder__free(u);
	return fx.nwant >= 4;
}

static int unwind(struct argus_unwind_client *c, uint64_t *ips, int max)
{
	return argus_unwind_client__unwind(c, (uint32_t)fx.pid, fx.maps, fx.nmaps,
					   fx.rec.ip, fx.rec.sp, fx.rec.bp, fx.copy,
					   fx.rec.len, ips, max);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_helper_gives_the_in_process_stack(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st;
	uint64_t ips[MAX_FRAMES];
	int n = unwind(c, ips, MAX_FRAMES);

	CHECK_EQ(n, fx.nwant);
	for (int i = 0; i < n && i < fx.nwant; i++)
		CHECK_EQ(ips[i], fx.want[i]);
	argus_unwind_client__stats(c, &st);
	CHECK_EQ(st.unwinds, 1);
	CHECK(st.fds_sent >= 2);        /* busy_nofp, libc, ld.so, vdso */
	CHECK_EQ(st.restarts, 0);
	/* the one round trip is the drain's whole wait */
	CHECK(st.wait_ns > 0);
	CHECK_EQ(st.wait_max_ns, st.wait_ns);
}

static void test_repeated_stack_is_answered_by_the_memo(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st0, st;
	uint64_t ips[MAX_FRAMES];
	int n;

	argus_unwind_client__stats(c, &st0);
	n = unwind(c, ips, MAX_FRAMES);
	argus_unwind_client__stats(c, &st);
	CHECK_EQ(n, fx.nwant);
	CHECK(n == fx.nwant && ips[n - 1] == fx.want[fx.nwant - 1]);
	CHECK_EQ(st.memo_hits, st0.memo_hits + 1);
	CHECK_EQ(st.unwinds, st0.unwinds);
	CHECK_EQ(st.wait_ns, st0.wait_ns);      /* no round trip */
}

static void test_helper_is_unprivileged_and_filtered(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st;
	char path[64], cmd[64] = "";
	FILE *f;

	argus_unwind_client__stats(c, &st);
	CHECK(st.pid > 0);
	if (geteuid() == 0) {
		CHECK_EQ(status_field(st.pid, "Uid"), 65534);
		CHECK_EQ(status_field(st.pid, "Gid"), 65534);
	}
	CHECK_EQ(status_field(st.pid, "NoNewPrivs"), 1);
	CHECK_EQ(status_field(st.pid, "Seccomp"), 2);   /* filter mode */
	/* a fresh exec (argv[0] "argus-unwind"), not a copy of our heap */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)st.pid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(cmd, sizeof(cmd), f) != NULL);
		CHECK(!strcmp(cmd, "argus-unwind"));
		fclose(f);
	}
}

/* A process with more files than one FILES message carries (64): 150
 * copies of busy_nofp mapped below the fixture's own maps (fewer than the
 * unwinder's 256 cached files: past that, in-process or not, the files
 * mapped highest, libc's among them, go unreported).  The batches are
 * acknowledged one by one, and the unwind is the fixture's. */
#define MANY_FILES 150
static void test_layout_with_more_files_than_one_message(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st0, st;
	const struct argus_proc_map *self = NULL;
	struct argus_proc_map *m;
	char dir[] = "/tmp/argus-test-helper-XXXXXX", (*paths)[64];
	uint64_t ips[MAX_FRAMES];
	int made = 0, n;

	for (size_t i = 0; i < fx.nmaps; i++)
		if (!strcmp(fx.maps[i].path, BUSY_NOFP_PATH))
			self = &fx.maps[i];
	m = calloc(fx.nmaps + MANY_FILES, sizeof(*m));
	paths = calloc(MANY_FILES, sizeof(*paths));
	CHECK(self && m && paths);
	if (!self || !m || !paths || !mkdtemp(dir))
		goto out;
	made = many_maps_copy(self, dir, MANY_FILES, m, paths);
	CHECK_EQ(made, MANY_FILES);
	memcpy(m + made, fx.maps, fx.nmaps * sizeof(*m));
	argus_unwind_client__stats(c, &st0);
	n = argus_unwind_client__unwind(c, (uint32_t)fx.pid, m, fx.nmaps + made,
					fx.rec.ip, fx.rec.sp, fx.rec.bp, fx.copy,
					fx.rec.len, ips, MAX_FRAMES);
	argus_unwind_client__stats(c, &st);
	CHECK_EQ(n, fx.nwant);
	CHECK(n == fx.nwant && !memcmp(ips, fx.want, n * sizeof(ips[0])));
	CHECK_EQ(st.restarts, 0);
	CHECK(st.fds_sent - st0.fds_sent > 128);  /* three batches */
	rmdir(dir);
out:
	for (int i = 0; paths && i < made; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(paths);
	free(m);
}

/* A chunk cut rides on the next request: the helper closes deleted
 * files and trims its heap (madvise, brk), all inside its filter. */
static void test_chunk_cut_runs_inside_the_sandbox(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st;
	uint64_t ips[MAX_FRAMES];

	argus_unwind_client__chunk_cut(c);
	CHECK_EQ(unwind(c, ips, MAX_FRAMES - 4), fx.nwant);
	argus_unwind_client__stats(c, &st);
	CHECK_EQ(st.restarts, 0);
	CHECK(st.pid > 0);
}

/* Killed while idle: noticed at the next request, counted, replaced
 * after the backoff; the stacks come back. */
static void test_killed_helper_is_restarted(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st;
	uint64_t ips[MAX_FRAMES];
	int n = 0;

	argus_unwind_client__stats(c, &st);
	CHECK(st.pid > 0);
	if (st.pid <= 0)        /* kill(0) would hit our process group */
		return;
	CHECK_EQ(kill(st.pid, SIGSEGV), 0);
	usleep(50 * 1000);
	/* another frame count: not the memo's entry */
	CHECK_EQ(unwind(c, ips, MAX_FRAMES - 1), -EAGAIN);
	argus_unwind_client__stats(c, &st);
	CHECK_EQ(st.restarts, 1);
	CHECK_EQ(st.pid, 0);
	for (int i = 0; i < 30 && n != fx.nwant; i++) {
		usleep(20 * 1000);
		n = unwind(c, ips, MAX_FRAMES - 1);
	}
	CHECK_EQ(n, fx.nwant);
	argus_unwind_client__stats(c, &st);
	CHECK(st.pid > 0);
	CHECK_EQ(st.restarts, 1);
}

/* Stopped (a hang): the request gives up at its deadline, the helper is
 * killed and counted. */
static void test_hung_helper_times_out_and_is_killed(struct argus_unwind_client *c)
{
	struct argus_unwind_client_stats st;
	uint64_t ips[MAX_FRAMES], t0, wait0;
	pid_t hung;
	int n;

	argus_unwind_client__stats(c, &st);
	hung = st.pid;
	wait0 = st.wait_ns;
	CHECK(hung > 0);
	if (hung <= 0)
		return;
	CHECK_EQ(kill(hung, SIGSTOP), 0);
	t0 = now_ms();
	n = unwind(c, ips, MAX_FRAMES - 2);
	CHECK_EQ(n, -ETIMEDOUT);
	CHECK(now_ms() - t0 < ARGUS_UNWIND_HELPER_TIMEOUT_MS + 150);
	argus_unwind_client__stats(c, &st);
	/* the drain waited the whole deadline, and the wait says so */
	CHECK(st.wait_ns - wait0 >= ARGUS_UNWIND_HELPER_TIMEOUT_MS * 1000000ull);
	CHECK(st.wait_max_ns >= ARGUS_UNWIND_HELPER_TIMEOUT_MS * 1000000ull);
	CHECK_EQ(st.restarts, 2);
	CHECK_EQ(st.timeouts, 1);
	CHECK_EQ(st.pid, 0);
	/* SIGKILL ends a stopped process too */
	usleep(50 * 1000);
	CHECK(kill(hung, 0) != 0 || status_field(hung, "Pid") < 0 ||
	      waitpid(hung, NULL, WNOHANG) == hung || errno == ECHILD);
	/* the layout that hung is not sent again for a while */
	usleep(250 * 1000);
	CHECK_EQ(unwind(c, ips, MAX_FRAMES - 3), -EAGAIN);
}

int main(void)
{
	struct argus_unwind_client *c;

	if (!fixture()) {
		fprintf(stderr, "busy_nofp fixture failed\n");
		return 1;
	}
	c = argus_unwind_client__new();
	CHECK(c != NULL);
	if (c) {
		RUN_C(test_helper_gives_the_in_process_stack);
		RUN_C(test_repeated_stack_is_answered_by_the_memo);
		RUN_C(test_helper_is_unprivileged_and_filtered);
		RUN_C(test_layout_with_more_files_than_one_message);
		RUN_C(test_chunk_cut_runs_inside_the_sandbox);
		RUN_C(test_killed_helper_is_restarted);
		RUN_C(test_hung_helper_times_out_and_is_killed);
	}
	argus_unwind_client__free(c);
	close(fx.to_child);
	waitpid(fx.pid, NULL, 0);
	argus_proc_maps__free(fx.maps, fx.nmaps);
	return check_report();
}
