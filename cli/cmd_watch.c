/* cmd_watch.c - `argus watch`: hardware write watchpoints on a data flag,
 * armed by the running collector (argusd's "watch" control request,
 * collector/hw_watch.c), so every write lands in its trace as a `hwwatch`
 * event and the graph can draw the `dataflag` edge writer -> spinner.
 *
 * The collector arms them, not this command: the BPF program that turns
 * a hit into a record writes into the collector's ring, and the events
 * must live as long as the collector, not as long as this process.
 * What can be checked here (the length, the alignment, a pid that names
 * no process, a reader that is not one of its threads) is checked before
 * asking, so a typo is refused even when no collector runs; argusd checks
 * again (the control socket is the real interface).
 *
 * --reader TID names the thread that spins on the flag.  A watchpoint
 * sees writes only, so without it the graph must guess the reader from
 * its syscalls (sched_yield, nanosleep), and a pure busy spin has none;
 * the user knows the thread (`argus flag --tid` stepped it), and every
 * write's record carries the name. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int print_list(const char *resp)
{
	const char *p = resp;
	int n = 0;

	while ((p = strstr(p, "watch id="))) {
		unsigned id = 0, pid = 0, len = 0, thr = 0, reader = 0;
		unsigned long long addr = 0, hits = 0;
		const char *eol = strchr(p, '\n'), *r = strstr(p, " reader=");

		if (sscanf(p, "watch id=%u pid=%u addr=%llx len=%u threads=%u hits=%llu", &id, &pid,
			   &addr, &len, &thr, &hits) == 6) {
			if (r && (!eol || r < eol))
				reader = (unsigned)strtoul(r + 8, NULL, 10);
			if (!n++)
				printf("%-4s %-8s %-18s %-3s %-7s %-8s %s\n", "id", "pid", "addr", "len",
				       "threads", "reader", "writes");
			if (reader)
				printf("%-4u %-8u 0x%-16llx %-3u %-7u %-8u %llu\n", id, pid, addr, len, thr,
				       reader, hits);
			else
				printf("%-4u %-8u 0x%-16llx %-3u %-7u %-8s %llu\n", id, pid, addr, len, thr,
				       "-", hits);
		}
		p += 9;
	}
	if (!n)
		printf("no watches armed\n");
	return 0;
}

static const struct argus_usage usage = {
	.cmd = "watch",
	.synopsis =
	"argus watch --pid PID --addr ADDR [--len N] [--reader TID]\n"
	"argus watch --list\n"
	"argus watch --remove ID | --remove --pid PID | --remove --all\n",
	.about =
	"  Arms a hardware write watchpoint (x86: 4 debug registers per thread)\n"
	"  on every thread of PID, and on the threads it creates later.  Each\n"
	"  write becomes a `hwwatch` event in the running collector's trace\n"
	"  (tid, time, ip, address, new value, user stack); the graph turns\n"
	"  them into `dataflag` edges.  Find ADDR with `argus flag --pid PID`.\n"
	"  Watches of a process are removed when it exits or execs.\n",
};

/* --addr, --len, --reader: a number into *value, checked as the
 * collector will (0 is no address, no reader) */
static int num_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	uint64_t v;

	if (!strcmp(opt->long_name, "addr")) {
		if (parse_num(arg, &v) || !v)
			return msg_usage_error(cmd, "bad --addr '%s': use hex (0x...) or decimal",
					       msg_tstr(arg));
	} else if (!strcmp(opt->long_name, "len")) {
		if (parse_num(arg, &v) || (v != 1 && v != 2 && v != 4 && v != 8))
			return msg_usage_error(cmd, "bad --len '%s': must be 1, 2, 4 or 8 bytes",
					       msg_tstr(arg));
	} else if (parse_num(arg, &v) || !v || v > INT32_MAX) {
		return msg_usage_error(cmd, "bad --reader '%s': give a thread id", msg_tstr(arg));
	}
	*(uint64_t *)opt->value = v;
	return 0;
}

int cmd_watch(int argc, char **argv)
{
	uint64_t addr = 0, len = 4, id = 0, reader = 0;
	uint32_t pid = 0;
	bool have_pid, have_addr, list = false, remove = false, all = false;
	const char *rid = NULL;
	char req[256], resp[16384];
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &pid, "PID", "the process whose threads are watched", 1, INT32_MAX),
		OPT_CALLBACK(0, "addr", &addr, "ADDR", "hex (0x...) or decimal, aligned to N", num_cb),
		OPT_CALLBACK(0, "len", &len, "N", "1, 2, 4 or 8 bytes (default 4)", num_cb),
		OPT_CALLBACK(0, "reader", &reader, "TID",
			     "the thread of PID that spins on the flag (the one\n"
			     "`argus flag --tid` stepped): every write is an edge to\n"
			     "where it leaves the spin, even a pure busy spin that\n"
			     "makes no syscall (without it the spinner is recognized\n"
			     "by its sched_yield/nanosleep calls)", num_cb),
		OPT_BOOL(0, "list", &list, "the watches armed, with their writes so far"),
		OPT_BOOL(0, "remove", &remove, "remove watch ID, PID's watches (--pid) or all (--all)"),
		OPT_BOOL(0, "all", &all, "with --remove: every watch"),
		OPT_END(),
	};
	int n = argus_opts_parse(&usage, opts, argc, argv, 0);

	if (n < 0)
		return argus_opts_exit(n);
	/* --remove ID: the one positional */
	if (n > 1 || (n == 1 && !remove))
		return msg_usage_error("watch", "unexpected argument '%s'", msg_tstr(argv[n - 1]));
	if (n == 1)
		rid = argv[0];
	have_pid = pid != 0;
	have_addr = addr != 0;      /* num_cb refuses 0 */
	if (reader && (list || remove))
		return msg_usage_error("watch", "--reader goes with --pid and --addr");
	if (list) {
		if (remove || have_pid || have_addr || all)
			return msg_usage_error("watch", "--list takes no other option");
		if (ctl_request("watch", "watch list", resp, sizeof(resp)))
			return 1;
		return print_list(resp);
	}
	if (remove) {
		if (have_addr || (!!rid + have_pid + all) != 1)
			return msg_usage_error("watch", "--remove needs one of ID, --pid PID or --all");
		if (rid) {
			if (parse_num(rid, &id) || !id || id > UINT32_MAX)
				return msg_usage_error("watch", "bad watch id '%s'", rid);
			snprintf(req, sizeof(req), "watch remove %" PRIu64, id);
		} else if (have_pid) {
			snprintf(req, sizeof(req), "watch remove-pid %" PRIu32, pid);
		} else {
			snprintf(req, sizeof(req), "watch remove-all");
		}
		if (ctl_request("watch", req, resp, sizeof(resp)))
			return 1;
		printf("argus: removed %d watch%s\n", atoi(strstr(resp, "removed=") ? strstr(resp, "removed=") + 8 : "0"),
		       strstr(resp, "removed=1\n") ? "" : "es");
		return 0;
	}
	if (all)
		return msg_usage_error("watch", "--all goes with --remove");
	if (!have_pid || !have_addr)
		return msg_usage_error("watch", "needs --pid PID and --addr ADDR (or --list, --remove)");
	if (addr % len)
		return msg_usage_error("watch",
				       "address 0x%" PRIx64 " is not aligned to --len %" PRIu64
				       " (debug registers watch aligned ranges only)", addr, len);
	return ctl_watch_arm("watch", pid, addr, len, reader, stdout, NULL);
}

