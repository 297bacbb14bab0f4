/* cmd_status.c - `argus status`: the collector's rates, density, ring fill
 * and span, lost events and its own CPU use, from the control socket. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "units.h"

static double get(const char *resp, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\n%s=", key);
	p = strstr(resp, k);
	if (!p && !strncmp(resp, k + 1, strlen(k + 1)))
		p = resp - 1;
	return p ? strtod(p + strlen(k), NULL) : 0;
}

static const struct argus_usage usage = {
	.cmd = "status",
	.synopsis = "argus status [--raw]\n",
	.about = "  The running collector's event rates, ring fill, lost events and CPU.\n",
};

int cmd_status(int argc, char **argv)
{
	char resp[8192], ring[4096] = "?", a[32], b[32];
	const char *p;
	bool raw = false;
	const struct argus_opt opts[] = {
		OPT_BOOL(0, "raw", &raw, "the collector's own KEY=VALUE lines, for scripts"),
		OPT_END(),
	};
	int n = argus_opts_parse(&usage, opts, argc, argv, 0);

	if (n < 0)
		return argus_opts_exit(n);
	if (n)
		return msg_usage_error("status", "unexpected argument '%s'", msg_tstr(argv[0]));
	if (ctl_request("status", "status", resp, sizeof(resp)))
		return 1;
	if (raw) {
		/* the daemon's KEY=VALUE lines, for scripts and tests */
		fputs(resp, stdout);
		return 0;
	}
	if ((p = strstr(resp, "ring=")))
		sscanf(p + 5, "%4095[^\n]", ring);
	double up = get(resp, "uptime_ns") / 1e9, events = get(resp, "events");
	double bytes = get(resp, "bytes"), span = 0;
	if (get(resp, "oldest_ts") > 0)
		span = (get(resp, "newest_ts") - get(resp, "oldest_ts")) / 1e9;

	printf("collector  pid %.0f, up %.1f s, ring %s\n", get(resp, "pid"), up, ring);
	if ((p = strstr(resp, "\nservice="))) {
		/* run by systemd (packaging/argus.service), not by `argus start` */
		char unit[256];
		if (sscanf(p + 9, "%255[^\n]", unit) == 1)
			printf("service    started by %s (systemctl status %s; options in"
			       " /etc/default/argus)\n", unit, unit);
	}
	printf("events     %.0f (%.0f/s)\n", events, up > 0 ? events / up : 0);
	for (p = resp; (p = strstr(p, "type.")); p++) {
		char name[32];
		double v;
		if (sscanf(p, "type.%31[^=]=%lf", name, &v) == 2)
			printf("  %-16s %12.0f  %10.1f/s\n", name, v, up > 0 ? v / up : 0);
	}
	argus_format_size((uint64_t)bytes, a, sizeof(a));
	printf("written    %s in %.0f chunks, %.1f bytes/event\n", a,
	       get(resp, "chunks"), events > 0 ? bytes / events : 0);
	argus_format_size((uint64_t)get(resp, "ring_fill"), a, sizeof(a));
	argus_format_size((uint64_t)get(resp, "ring_size"), b, sizeof(b));
	printf("ring       %s of %s used, spans %.1f s", a, b, span);
	if (get(resp, "ring_usable") > 0 && get(resp, "ring_usable") < get(resp, "ring_size")) {
		/* a full disk shrank the ring: say how much is left */
		argus_format_size((uint64_t)get(resp, "ring_usable"), b, sizeof(b));
		printf(" (disk full: only %s usable)", b);
	}
	printf("\n");
	printf("lost       %.0f", get(resp, "lost"));
	for (int cpu = 0; cpu < 256; cpu++) {
		char k[32];
		snprintf(k, sizeof(k), "lost.cpu%d", cpu);
		if (!strstr(resp, k))
			break;
		printf("%s cpu%d %.0f", cpu ? "," : " (", cpu, get(resp, k));
	}
	printf("%s, late %.0f, spilled %.0f\n", strstr(resp, "lost.cpu0") ? ")" : "",
	       get(resp, "late"), get(resp, "spilled"));
	printf("collector  %.2f%% CPU (%.2f s), %.0f stacks DWARF-unwound, %.0f unwinds answered"
	       " by the memo\n",
	       up > 0 ? 100.0 * get(resp, "cpu_seconds") / up : 0,
	       get(resp, "cpu_seconds"), get(resp, "unwound"), get(resp, "unwind_memo_hits"));
	if (strstr(resp, "watch=on")) {
		char dir[4096] = "?";
		if ((p = strstr(resp, "hang_dir=")))
			sscanf(p + 9, "%4095[^\n]", dir);
		printf("hangs      seen %.0f, kept %.0f, removed %.0f, failed %.0f, rejected %.0f,"
		       " dropped %.0f, pending %.0f; %.0f in %s\n",
		       get(resp, "hangs_seen"), get(resp, "hangs_kept"), get(resp, "hangs_removed"),
		       get(resp, "hangs_failed"), get(resp, "hangs_rejected"), get(resp, "hangs_dropped"),
		       get(resp, "hangs_pending"), get(resp, "hangs_in_dir"), dir);
		printf("watching   %.0f thread%s, threshold %.0f ms%s\n", get(resp, "watching"),
		       get(resp, "watching") == 1 ? "" : "s", get(resp, "hang_threshold_ms"),
		       get(resp, "watch_interactive") > 0 ? ", display servers' clients too" : "");
	} else if (strstr(resp, "watch=off")) {
		printf("hangs      not watched (argus start --no-watch-interactive, no --watch)\n");
	}
	if (strstr(resp, "\nhw_watches="))
		printf("flag watch %.0f armed (argus watch --list), %.0f writes recorded\n",
		       get(resp, "hw_watches"), get(resp, "hw_watch_hits"));
	if (strstr(resp, "interpose=on"))
		printf("interposer %.0f processes registered now (%.0f in all, %.0f refused, %.0f of"
		       " them for room), %.0f records, %.0f invalid (dropped), %.0f over a user's"
		       " budget (dropped), %.0f lost\n",
		       get(resp, "interpose_procs"), get(resp, "interpose_registered"),
		       get(resp, "interpose_refused"), get(resp, "interpose_refused_full"),
		       get(resp, "interpose_records"), get(resp, "interpose_invalid"),
		       get(resp, "interpose_over_budget"), get(resp, "interpose_lost"));
	/* what other users' files and processes could not make it do */
	printf("refused    %.0f files (not a regular file, or not the one mapped), %.0f ELF files"
	       " over the size limits, %.0f unwinds cut at their time budget, %.0f mappings"
	       " over the caps\n",
	       get(resp, "files_skipped"), get(resp, "elf_over_budget"), get(resp, "unwinds_cut"),
	       get(resp, "maps_dropped"));
	/* no helper now: --no-unwind, ARGUS_UNWIND_INPROCESS=1, or waiting to
	 * restart one that failed */
	if (strstr(resp, "unwind_helper_pid=") && get(resp, "unwind_helper_pid") > 0)
		printf("unwinder   helper pid %.0f (unprivileged, sandboxed), %.0f restarts"
		       " after a crash, hang or limit",
		       get(resp, "unwind_helper_pid"), get(resp, "unwind_helper_restarts"));
	else if (strstr(resp, "unwind_helper_pid="))
		printf("unwinder   no helper running now, %.0f restarts after a crash, hang"
		       " or limit", get(resp, "unwind_helper_restarts"));
	/* the drain stops while it waits for an answer: a slow helper is
	 * lost records, and its CPU time alone does not show it */
	if (strstr(resp, "unwind_wait_ms="))
		printf("; the drain waited %.2f s for it (longest %.0f ms)",
		       get(resp, "unwind_wait_ms") / 1e3, get(resp, "unwind_wait_max_ms"));
	if (strstr(resp, "unwind_helper_pid="))
		printf("\n");
	return 0;
}
