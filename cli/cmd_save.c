/* cmd_save.c - `argus save [--last DURATION] -o FILE [--force]`: ask the
 * collector to write out what it holds, then copy the ring's chunks (not
 * re-encoded) into a snapshot file that stays private to root: created
 * 0600, O_EXCL|O_NOFOLLOW, never into a file or link a user put at FILE
 * (safe_file.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

int cmd_save(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t last = 0, now = 0;
	char resp[8192], ring[4096] = "";
	struct argus_trace_stats src = { 0 };
	struct argus_error err = { 0 };
	const char *p;
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
	if (cli_request("save", "flush", resp, sizeof(resp)))
		return 1;
	if ((p = strstr(resp, "ring=")))
		sscanf(p + 5, "%4095[^\n]", ring);
	if ((p = strstr(resp, "now=")))
		now = strtoull(p + 4, NULL, 10);
	if (!ring[0])
		return cli_error("save", "the collector did not say where its ring is");
	if (argus_trace__save_to(ring, out, out_flags, last && now > last ? now - last : 0,
				 &src, &err))
		return cli_out_error("save", &err);
	if (src.chunks_corrupt)
		fprintf(stderr, "argus save: warning: skipped %llu corrupt chunk(s) of the ring %s,"
			" first at offset 0x%llx (%s); the rest is saved\n",
			(unsigned long long)src.chunks_corrupt, ring,
			(unsigned long long)src.corrupt_offset, src.corrupt_why);

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
