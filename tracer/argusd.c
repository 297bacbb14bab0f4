/* argusd.c - the always-on collector daemon.
 *
 * Loads the BPF programs, drains them into a bounded file ring
 * (DIR/ring.argus, default 2 GiB) and answers the control socket
 * (control.h): status, mark TEXT, flush, stop.  `argus start` runs it with
 * --ready-fd so it can report success or the exact failure; run by hand it
 * stays in the foreground.
 *
 * Files: the ring is 0600 in a 0700 directory; the socket and pid file live
 * in the 0700 run directory.  Everything is root's: the trace holds every
 * process's activity.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "control.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: argusd [--dir DIR] [--size SIZE] [--sample-hz HZ] [--no-irq] [--all-entries]\n"
		"              [--no-unwind] [--wait-stacks] [--ready-fd FD]\n"
		"  --dir DIR       where the ring file lives (default %s)\n"
		"  --size SIZE     ring size, e.g. 512M, 2G (default 2G)\n"
		"  --sample-hz HZ  CPU sampler rate (default 49)\n"
		"  --no-irq        do not record irq/softirq/workqueue events\n"
		"  --all-entries   also record sys_enter of read/write/send/recv calls\n"
		"                  (by default only their exits, which carry fd, object, result)\n"
		"  --no-unwind     frame-pointer stacks only, no DWARF unwinding of samples\n"
		"  --wait-stacks   DWARF-unwindable stacks where threads block too (a 1 KiB\n"
		"                  stack copy per blocking switch; more collector CPU)\n"
		"  --ready-fd FD   write \"ready\" or the error to FD, then close it\n"
		"Normally started with `argus start`.\n", ARGUS_DEFAULT_RING_DIR);
}

static void print_status(struct argus_collector *c, FILE *out)
{
	struct argus_collector_status st;

	argus_collector__status(c, &st);
	fprintf(out, "pid=%d\n", getpid());
	fprintf(out, "ring=%s\n", argus_collector__path(c));
	fprintf(out, "uptime_ns=%llu\n", (unsigned long long)(st.now_ns - st.start_ns));
	fprintf(out, "events=%llu\n", (unsigned long long)st.events);
	for (int t = 0; t < AE_TYPE_MAX; t++)
		if (st.by_type[t] && argus_event_type_str((uint16_t)t))
			fprintf(out, "type.%s=%llu\n", argus_event_type_str((uint16_t)t),
				(unsigned long long)st.by_type[t]);
	fprintf(out, "lost=%llu\n", (unsigned long long)st.lost);
	for (uint32_t i = 0; i < st.ncpus && i < 256; i++)
		fprintf(out, "lost.cpu%u=%llu\n", i, (unsigned long long)st.lost_cpu[i]);
	fprintf(out, "late=%llu\n", (unsigned long long)st.late);
	fprintf(out, "chunks=%llu\n", (unsigned long long)st.chunks);
	fprintf(out, "bytes=%llu\n", (unsigned long long)st.bytes);
	fprintf(out, "ring_size=%llu\n", (unsigned long long)st.ring_size);
	fprintf(out, "ring_usable=%llu\n", (unsigned long long)st.ring_usable);
	fprintf(out, "ring_fill=%llu\n", (unsigned long long)st.ring_fill);
	fprintf(out, "oldest_ts=%llu\n", (unsigned long long)st.oldest_ts);
	fprintf(out, "newest_ts=%llu\n", (unsigned long long)st.newest_ts);
	fprintf(out, "cpu_seconds=%.3f\n", st.cpu_seconds);
	fprintf(out, "unwound=%llu\n", (unsigned long long)st.unwound);
	fprintf(out, "unwind_memo_hits=%llu\n", (unsigned long long)st.unwind_memo_hits);
	fprintf(out, "files_skipped=%llu\n", (unsigned long long)st.files_skipped);
	fprintf(out, "elf_over_budget=%llu\n", (unsigned long long)st.elf_over_budget);
	fprintf(out, "unwinds_cut=%llu\n", (unsigned long long)st.unwinds_cut);
	fprintf(out, "maps_dropped=%llu\n", (unsigned long long)st.maps_dropped);
}

static int handle(void *ctx, const char *req, int peer_pid, FILE *out)
{
	struct argus_collector *c = ctx;
	int err;

	if (!strcmp(req, "status")) {
		print_status(c, out);
		return 0;
	}
	if (!strncmp(req, "mark ", 5)) {
		err = argus_collector__mark(c, (uint32_t)peer_pid, 0, req + 5);
		if (err)
			fprintf(out, "error: mark: %s\n", strerror(-err));
		return err;
	}
	if (!strcmp(req, "flush")) {
		err = argus_collector__flush(c);
		if (err) {
			fprintf(out, "error: flush: %s\n", strerror(-err));
			return err;
		}
		fprintf(out, "ring=%s\nnow=%llu\n", argus_collector__path(c),
			(unsigned long long)argus_now_ns());
		return 0;
	}
	if (!strcmp(req, "stop")) {
		stop_requested = 1;
		return 0;
	}
	fprintf(out, "error: unknown request '%.64s'\n", req);
	return -EINVAL;
}

static void report_ready(int fd, const char *msg)
{
	if (fd < 0)
		return;
	if (write(fd, msg, strlen(msg)) < 0) {
		/* the starter went away; nothing to tell */
	}
	close(fd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "sample-hz", required_argument, NULL, 'z' },
		{ "no-irq", no_argument, NULL, 'i' },
		{ "all-entries", no_argument, NULL, 'e' },
		{ "no-unwind", no_argument, NULL, 'u' },
		{ "wait-stacks", no_argument, NULL, 'w' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct argus_collector_opts opts = { .sz = sizeof(opts), .zlevel = -1 };
	const char *dir = ARGUS_DEFAULT_RING_DIR;
	uint64_t size = 2ull << 30;
	char path[4096], sock[256], pidfile[256], err[512], line[600];
	struct argus_collector *c;
	int ready_fd = -1, lfd, opt, rc = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 's':
			if (argus_parse_size(optarg, &size) || size < (1u << 20)) {
				fprintf(stderr, "argusd: bad --size '%s': use e.g. 512M or 2G (at least 1M)\n", optarg);
				return 2;
			}
			break;
		case 'z': opts.probe.sample_hz = (uint32_t)atoi(optarg); break;
		case 'i': opts.probe.no_irq = true; break;
		case 'e': opts.probe.all_entries = true; break;
		case 'u': opts.no_unwind = true; break;
		case 'w': opts.probe.block_copy = ARGUS_WAIT_STACK_COPY; break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "argusd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (geteuid() != 0) {
		snprintf(line, sizeof(line), "argusd: need root to load BPF programs: run `sudo argus start`\n");
		fputs(line, stderr);
		report_ready(ready_fd, line);
		return 1;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(line, sizeof(line), "argusd: cannot create %s: %s\n", dir, strerror(errno));
		fputs(line, stderr);
		report_ready(ready_fd, line);
		return 1;
	}
	/* the trace is every process's: only in a directory only root can
	 * change (a user who could would swap or pre-create the ring), named
	 * by its resolved path, which is what `argus save` will read */
	{
		char real[sizeof(path) - sizeof("/ring.argus")];
		struct argus_error derr = { 0 };

		if (argus_dir__check_private(dir, real, sizeof(real), &derr)) {
			snprintf(line, sizeof(line), "argusd: --dir %s\n", derr.msg);
			fputs(line, stderr);
			report_ready(ready_fd, line);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/ring.argus", real); /* fits: real is shorter */
	}
	argus_control_path(sock, sizeof(sock));
	snprintf(pidfile, sizeof(pidfile), "%s/argusd.pid", argus_run_dir());

	lfd = argus_control__listen(sock, err, sizeof(err));
	if (lfd < 0) {
		snprintf(line, sizeof(line), "argusd: %s\n", err);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		return 1;
	}
	opts.path = path;
	opts.ring_size = size;
	opts.probe.sz = sizeof(opts.probe);
	opts.probe.self_tgid = (uint32_t)getpid();
	c = argus_collector__new(&opts, err, sizeof(err));
	if (!c) {
		snprintf(line, sizeof(line), "argusd: %s\n", err);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		unlink(sock);
		return 1;
	}
	FILE *pf = fopen(pidfile, "we");
	if (pf) {
		fprintf(pf, "%d\n", getpid());
		fclose(pf);
	}
	argus_collector_setup_process(); /* see collector.h */
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	/* A hangup is no reason to stop an always-on collector: without a
	 * terminal (started by `argus start`) only someone else's tty could
	 * send one, which O_NOCTTY on every open already rules out; with one
	 * (run by hand), closing that terminal stops it cleanly. */
	if (isatty(0) || isatty(2))
		signal(SIGHUP, on_signal);
	else
		signal(SIGHUP, SIG_IGN);
	report_ready(ready_fd, "ready\n");

	while (!stop_requested) {
		int e = argus_collector__run_once(c, 50);
		if (e == -E2BIG) {
			/* one chunk too big for the ring: it is lost, the ring is not */
			fprintf(stderr, "argusd: a chunk did not fit in the ring and was dropped\n");
			continue;
		}
		if (e && e != -EINTR) {
			fprintf(stderr, "argusd: collector: %s\n", strerror(-e));
			rc = 1;
			break;
		}
		argus_control__serve(lfd, handle, c);
	}
	argus_collector__free(c); /* final flush */
	close(lfd);
	unlink(sock);
	unlink(pidfile);
	return rc;
}
