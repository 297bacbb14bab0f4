/* cmd_save.c - `argus save [--last DURATION] -o FILE [--force]`: ask the
 * collector to write out what it holds, then copy the ring's chunks (not
 * re-encoded) into a snapshot file that stays private to root: created
 * 0600, O_EXCL|O_NOFOLLOW, never into a file or link a user put at FILE
 * (safe_file.h).
 *
 * The copy of a full 2 GiB ring lasts seconds; on a terminal a watcher
 * thread shows how far it got (progress.h): argus_trace__save_to() takes
 * no progress callback, but the snapshot only ever grows by appended
 * chunks, so its size against the chunks to copy is the progress. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

struct save_watch {
	const char *ring, *out;
	uint64_t from_ts;        /* as given to argus_trace__save_to */
	atomic_bool stop;
	pthread_t th;
	struct cli_progress p;
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
			cli_progress_cb(&w->p, (uint64_t)st.st_size >> 20, total >> 20);
		usleep(100000);
	}
	return NULL;
}

int cli_ring_flush(const char *cmd, char *ring, size_t len, uint64_t *now)
{
	char resp[8192], fmt[32];
	const char *p;

	ring[0] = 0;
	*now = 0;
	if (cli_request(cmd, "flush", resp, sizeof(resp)))
		return 1;
	snprintf(fmt, sizeof(fmt), "%%%zu[^\n]", len - 1);
	if ((p = strstr(resp, "ring=")))
		sscanf(p + 5, fmt, ring);
	if ((p = strstr(resp, "now=")))
		*now = strtoull(p + 4, NULL, 10);
	if (!ring[0])
		return cli_error(cmd, "the collector did not say where its ring is");
	return 0;
}

int cli_ring_save(const char *cmd, const char *out, unsigned out_flags, uint64_t last,
		  uint64_t *from_ts, bool progress)
{
	char ring[4096] = "";
	struct argus_trace_stats *src;
	struct argus_error err = { 0 };
	uint64_t now = 0;
	bool watching;
	int rc;

	if (cli_ring_flush(cmd, ring, sizeof(ring), &now))
		return 1;
	if (!*from_ts && last && now > last)
		*from_ts = now - last;
	/* the stats hold every cpu's: off the stack (the lldb plugin's
	 * threads) */
	if (!(src = calloc(1, sizeof(*src))))
		return cli_error(cmd, "out of memory");
	struct save_watch w = { .ring = ring, .out = out, .from_ts = *from_ts };

	cli_progress_begin(&w.p, "saving", "MiB");
	watching = progress && w.p.tty && !pthread_create(&w.th, NULL, watch_save, &w);
	rc = argus_trace__save_to(ring, out, out_flags, w.from_ts, src, &err);
	if (watching) {
		atomic_store(&w.stop, true);
		pthread_join(w.th, NULL);
		cli_progress_end(&w.p);
	}
	if (rc) {
		free(src);
		return cli_out_error(cmd, &err);
	}
	if (src->chunks_corrupt)
		fprintf(cli_err(), "argus %s: warning: skipped %llu corrupt chunk(s) of the ring %s,"
			" first at offset 0x%llx (%s); the rest is saved\n", cmd,
			(unsigned long long)src->chunks_corrupt, ring,
			(unsigned long long)src->corrupt_offset, src->corrupt_why);
	free(src);
	return 0;
}

int cmd_save(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t last = 0, from_ts = 0;
	struct argus_error err = { 0 };
	unsigned out_flags = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			out_flags |= ARGUS_OUT_FORCE;
		else if (!strcmp(argv[i], "--last") && i + 1 < argc) {
			if (argus_parse_duration(argv[++i], &last) || !last)
				return cli_usage_error("save", "bad --last '%s': use e.g. 30s, 5m, 1500ms", argv[i]);
		} else
			return cli_usage_error("save", "unexpected argument '%s'", argv[i]);
	}
	if (!out)
		return cli_usage_error("save", "needs -o FILE");
	/* before asking the collector for anything: a refused -o costs nothing */
	if (argus_out__check(out, out_flags, &err))
		return cli_out_error("save", &err);
	if (cli_ring_save("save", out, out_flags, last, &from_ts, true))
		return 1;

	struct argus_trace *t = argus_trace__open(out, &err);
	if (!t)
		return cli_error("save", "saved, but cannot read it back: %s", err.msg);
	const struct argus_trace_stats *st = argus_trace__stats(t);
	printf("argus: saved %llu chunks spanning %.1f s to %s\n",
	       (unsigned long long)st->chunks,
	       st->max_ts > st->min_ts ? (st->max_ts - st->min_ts) / 1e9 : 0.0, out);
	argus_trace__close(t);
	return 0;
}
