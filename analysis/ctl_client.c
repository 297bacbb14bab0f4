/* ctl_client.c - see ctl_client.h.
 *
 * The copy of a full 2 GiB ring lasts seconds; on a terminal a watcher
 * thread shows how far it got (progress.h): argus_trace__save_to() takes
 * no progress callback, but the snapshot only ever grows by appended
 * chunks, so its size against the chunks to copy is the progress. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "ctl_client.h"
#include "msg.h"
#include "progress.h"
#include "safe_file.h"
#include "trace_format.h"

static char bin_dir_override[4096];

void ctl_set_bin_dir(const char *dir)
{
	snprintf(bin_dir_override, sizeof(bin_dir_override), "%s", dir ? dir : "");
}

void ctl_bin_dir(char *buf, size_t len)
{
	ssize_t n;
	char *slash;

	if (bin_dir_override[0]) {      /* in a host process (lldb plugin) */
		snprintf(buf, len, "%s", bin_dir_override);
		return;
	}
	n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0) {
		snprintf(buf, len, ".");
		return;
	}
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
}

int ctl_request(const char *cmd, const char *req, char *resp, size_t len)
{
	char sock[256];
	int rc;

	argus_control_path(sock, sizeof(sock));
	rc = argus_control__request(sock, req, resp, len, 30000);
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		return msg_error(cmd, "the collector is not running (no %s): start it with `argus start` (as root)", sock);
	if (rc == -EACCES || rc == -EPERM)
		return msg_error(cmd, "permission denied on %s: the collector serves root only (run as root)", sock);
	if (rc < 0)
		return msg_error(cmd, "cannot talk to the collector at %s: %s", sock, strerror(-rc));
	if (rc > 0) {
		fprintf(stderr, "argus %s: %s\n", cmd, resp);
		return 1;
	}
	return 0;
}

struct save_watch {
	const char *ring, *out;
	uint64_t from_ts;        /* as given to argus_trace__save_to */
	atomic_bool stop;
	pthread_t th;
	struct progress p;
};

/* The watcher: sizes what is to be copied (the ring's chunks from
 * from_ts on; its own open of the ring, which only reads), then polls the
 * snapshot's size ten times a second until told to stop. */
static void *watch_save(void *arg)
{
	struct save_watch *w = arg;
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(w->ring, &err);
	uint64_t total = 0;
	struct stat st;

	for (size_t i = 0; t && i < argus_trace__nchunks(t) && !atomic_load(&w->stop); i++) {
		struct argus_chunk_info ci;

		if (!argus_trace__chunk(t, i, &ci) && ci.max_ts >= w->from_ts)
			total += ci.size;
	}
	argus_trace__close(t);
	while (!atomic_load(&w->stop)) {
		if (!stat(w->out, &st))
			progress_cb(&w->p, (uint64_t)st.st_size >> 20, total >> 20);
		usleep(100000);
	}
	return NULL;
}

int ctl_ring_flush(const char *cmd, char *ring, size_t len, uint64_t *now)
{
	char resp[8192], fmt[32];
	const char *p;

	ring[0] = 0;
	*now = 0;
	if (ctl_request(cmd, "flush", resp, sizeof(resp)))
		return 1;
	snprintf(fmt, sizeof(fmt), "%%%zu[^\n]", len - 1);
	if ((p = strstr(resp, "ring=")))
		sscanf(p + 5, fmt, ring);
	if ((p = strstr(resp, "now=")))
		*now = strtoull(p + 4, NULL, 10);
	if (!ring[0])
		return msg_error(cmd, "the collector did not say where its ring is");
	return 0;
}

int ctl_ring_save(const char *cmd, const char *out, unsigned out_flags, uint64_t last,
		  uint64_t *from_ts, bool progress)
{
	char ring[4096] = "";
	struct argus_trace_stats *src;
	struct argus_error err = { 0 };
	uint64_t now = 0;
	bool watching;
	int rc;

	if (ctl_ring_flush(cmd, ring, sizeof(ring), &now))
		return 1;
	if (!*from_ts && last && now > last)
		*from_ts = now - last;
	/* the stats hold every cpu's: off the stack (the lldb plugin's
	 * threads) */
	if (!(src = calloc(1, sizeof(*src))))
		return msg_error(cmd, "out of memory");
	struct save_watch w = { .ring = ring, .out = out, .from_ts = *from_ts };

	progress_begin(&w.p, "saving", "MiB");
	watching = progress && w.p.tty && !pthread_create(&w.th, NULL, watch_save, &w);
	rc = argus_trace__save_to(ring, out, out_flags, w.from_ts, src, &err);
	if (watching) {
		atomic_store(&w.stop, true);
		pthread_join(w.th, NULL);
		progress_end(&w.p);
	}
	if (rc) {
		free(src);
		return msg_out_error(cmd, &err);
	}
	if (src->chunks_corrupt)
		fprintf(msg_err(), "argus %s: warning: skipped %llu corrupt chunk(s) of the ring %s,"
			" first at offset 0x%llx (%s); the rest is saved\n", cmd,
			(unsigned long long)src->chunks_corrupt, ring,
			(unsigned long long)src->corrupt_offset, src->corrupt_why);
	free(src);
	return 0;
}


int ctl_watch_arm(const char *cmd, uint64_t pid, uint64_t addr, uint64_t len, uint64_t reader,
		  FILE *out, int *id)
{
	char req[256], resp[16384];

	if ((len != 1 && len != 2 && len != 4 && len != 8) || addr % len)
		return msg_error(cmd, "cannot watch 0x%" PRIx64 " (%" PRIu64 " bytes): debug registers"
				 " watch 1, 2, 4 or 8 aligned bytes", addr, len);
	snprintf(req, sizeof(req), "/proc/%" PRIu64, pid);
	if (access(req, F_OK))
		return msg_error(cmd, "no process %" PRIu64, pid);
	/* /proc/PID/task/TID exists only for the threads of PID */
	snprintf(req, sizeof(req), "/proc/%" PRIu64 "/task/%" PRIu64, pid, reader);
	if (reader && access(req, F_OK))
		return msg_error(cmd, "--reader %" PRIu64 " is not a thread of process %" PRIu64
				 " (ls /proc/%" PRIu64 "/task)", reader, pid, pid);
	if (reader)
		snprintf(req, sizeof(req), "watch add %" PRIu64 " 0x%" PRIx64 " %" PRIu64 " %" PRIu64,
			 pid, addr, len, reader);
	else
		snprintf(req, sizeof(req), "watch add %" PRIu64 " 0x%" PRIx64 " %" PRIu64, pid, addr,
			 len);
	if (ctl_request(cmd, req, resp, sizeof(resp)))
		return 1;
	const char *ip = strstr(resp, "id="), *tp = strstr(resp, "threads=");
	if (id)
		*id = ip ? atoi(ip + 3) : 0;
	fprintf(out, "argus: watch %d armed: process %" PRIu64 ", 0x%" PRIx64 " (%" PRIu64
		" bytes), %d thread%s and the threads it creates",
		ip ? atoi(ip + 3) : 0, pid, addr, len, tp ? atoi(tp + 8) : 0,
		tp && atoi(tp + 8) == 1 ? "" : "s");
	if (reader)
		fprintf(out, "; reader thread %" PRIu64, reader);
	fprintf(out, "\n");
	return 0;
}
