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

int cmd_watch(int argc, char **argv)
{
	uint64_t pid = 0, addr = 0, len = 4, id = 0, reader = 0;
	bool have_pid = false, have_addr = false, list = false, remove = false, all = false;
	const char *rid = NULL;
	char req[256], resp[16384];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--pid") && i + 1 < argc) {
			if (parse_num(argv[++i], &pid) || !pid || pid > INT32_MAX)
				return msg_usage_error("watch", "bad --pid '%s'", argv[i]);
			have_pid = true;
		} else if (!strcmp(a, "--addr") && i + 1 < argc) {
			if (parse_num(argv[++i], &addr) || !addr)
				return msg_usage_error("watch", "bad --addr '%s': use hex (0x...) or decimal",
						       argv[i]);
			have_addr = true;
		} else if (!strcmp(a, "--len") && i + 1 < argc) {
			if (parse_num(argv[++i], &len) ||
			    (len != 1 && len != 2 && len != 4 && len != 8))
				return msg_usage_error("watch", "bad --len '%s': must be 1, 2, 4 or 8 bytes",
						       argv[i]);
		} else if (!strcmp(a, "--reader") && i + 1 < argc) {
			if (parse_num(argv[++i], &reader) || !reader || reader > INT32_MAX)
				return msg_usage_error("watch", "bad --reader '%s': give a thread id",
						       argv[i]);
		} else if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--remove")) {
			remove = true;
			if (i + 1 < argc && argv[i + 1][0] != '-')
				rid = argv[++i];
		} else if (!strcmp(a, "--all")) {
			all = true;
		} else {
			return msg_usage_error("watch", "unexpected argument '%s'", a);
		}
	}
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
			snprintf(req, sizeof(req), "watch remove-pid %" PRIu64, pid);
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

