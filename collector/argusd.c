/* argusd.c - the always-on collector daemon.
 *
 * Loads the BPF programs, drains them into a bounded file ring
 * (DIR/ring.argus, default 2 GiB) and answers the control socket
 * (control.h): status, mark TEXT, flush, stop, watch ... (hw_watch.h).
 * `argus start` runs it with
 * --ready-fd so it can report success or the exact failure; run by hand it
 * stays in the foreground.  Under systemd (packaging/argus.service,
 * Type=notify) it is started in the foreground too, and tells systemd
 * "READY=1" once its BPF programs are attached, on $NOTIFY_SOCKET, as
 * sd_notify(3) does (no libsystemd: one datagram).  `argus status` says
 * which unit started it (status line service=).
 *
 * Files: the ring is 0600 in a 0700 directory; the socket and pid file live
 * in the 0700 run directory.  Everything is root's: the trace holds every
 * process's activity.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "argus_session.h"
#include "argusd_opts.h"
#include "collector.h"
#include "control.h"
#include "display_clients.h"
#include "hang_keep.h"
#include "hang_watch.h"
#include "hw_watch.h"
#include "mark_socket.h"
#include "msg.h"
#include "interpose_ring.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

/* how often the display servers' clients are looked for (one netlink dump;
 * /proc is read only when a new connection appeared) */
#define INTERACTIVE_SCAN_NS (5ull * 1000 * 1000 * 1000)

/* The live hang watch (docs/collector.md, "Always-on hang reports"). */

struct watch {
	struct argus_hang_watch *w;       /* NULL: nothing watched */
	/* whose processes --watch COMM watches (anyone can take a name):
	 * the config's --watch-uid, root's only by default */
	const struct argusd_config *cfg;
	struct argus_hang_keeper *keeper;
	struct argus_display_scan *display; /* NULL: --no-watch-interactive */
	uint64_t next_scan_ns;
	uint64_t threshold_ns;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Lines may carry a comm, which any process sets: control bytes become
 * '?' so one cannot forge or hide log lines. */
static void log_line(void *ctx, const char *line)
{
	char clean[1024];
	size_t i;

	(void)ctx;
	for (i = 0; line[i] && i + 1 < sizeof(clean); i++)
		clean[i] = (unsigned char)line[i] < 0x20 || line[i] == 0x7f ? '?' : line[i];
	clean[i] = 0;
	fprintf(stderr, "argusd: %s\n", clean);
}

/* Watch the process (its main thread) or the thread named by number. */
static int watch_number(struct watch *wt, uint32_t id, char *err, size_t errlen)
{
	struct argus_watch_thread t;
	int e = argus_watch_thread__from_proc(id, argus_now_ns(), &t);

	if (e) {
		snprintf(err, errlen, "--watch %u: %s", id,
			 e == -ESRCH ? "no such process" : strerror(-e));
		return e;
	}
	t.why = ARGUS_WATCH_PID;
	return argus_hang_watch__add_thread(wt->w, &t);
}

static bool uid_watched(const struct watch *wt, uint32_t uid)
{
	return argusd_config_uid_watched(wt->cfg, uid);
}

/* The watch's comm_ok: may a process that took a watched name be watched
 * (its real uid is one of --watch-uid)?  A process gone already is not. */
static bool comm_uid_ok(void *ctx, uint32_t pid, uint32_t *uid)
{
	char path[64], buf[2048], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (!(p = strstr(buf, "\nUid:")))
		return false;
	*uid = (uint32_t)strtoul(p + 5, NULL, 10);
	return uid_watched(ctx, *uid);
}

/* Processes already running under a watched name (later ones are seen
 * at their exec, fork or rename), of the watched uids. */
static void watch_named_now(struct watch *wt, const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[64], name[32] = "";
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		FILE *f;

		if (!pid || *end || pid == (unsigned long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/comm", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		if (strncmp(name, comm, 15))
			continue;
		struct argus_watch_thread t;
		if (argus_watch_thread__from_proc((uint32_t)pid, argus_now_ns(), &t) ||
		    !uid_watched(wt, t.uid))
			continue;
		t.why = ARGUS_WATCH_COMM;
		argus_hang_watch__add_thread(wt->w, &t);
	}
	closedir(d);
}

static void watch_interactive(struct watch *wt, uint64_t now)
{
	uint32_t *pids = NULL;
	size_t n = 0;
	int e;

	if (!wt->display || now < wt->next_scan_ns)
		return;
	wt->next_scan_ns = now + INTERACTIVE_SCAN_NS;
	e = argus_display_scan__poll(wt->display, &pids, &n);
	if (e == -EOPNOTSUPP || e == -EPROTONOSUPPORT) {
		fprintf(stderr, "argusd: cannot list unix sockets (no sock_diag for AF_UNIX in this"
			" kernel): interactive processes are not watched; use --watch\n");
		argus_display_scan__free(wt->display);
		wt->display = NULL;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct argus_watch_thread t;

		if (pids[i] == (uint32_t)getpid() ||
		    argus_watch_thread__from_proc(pids[i], now, &t))
			continue;
		if (!argus_hang_watch__watching(wt->w, t.tid))
			fprintf(stderr, "argusd: watching %s %u for hangs (a display server's client)\n",
				t.comm, t.pid);
		t.why = ARGUS_WATCH_INTERACTIVE;
		argus_hang_watch__add_thread(wt->w, &t);
	}
	free(pids);
}

/* Between drains: report hangs up to t_drained (every record reserved
 * before it has been drained, unless the drain is behind), look for new
 * display clients, and start or reap the saves. */
static void watch_tick(struct watch *wt, struct argus_collector *c, uint64_t t_drained)
{
	uint64_t now;

	if (!wt->w)
		return;
	if (!argus_collector__behind(c))
		argus_hang_watch__check(wt->w, t_drained, argus_hang_keeper__on_hang, wt->keeper);
	now = argus_now_ns();
	watch_interactive(wt, now);
	if (argus_hang_keeper__due(wt->keeper, now)) {
		/* as `argus save` asks with "flush": everything drained so far
		 * into the ring, then the copy */
		int e = argus_collector__flush(c);
		if (e)
			fprintf(stderr, "argusd: flush before a hang snapshot: %s\n", strerror(-e));
	}
	argus_hang_keeper__run(wt->keeper, now, argus_collector__path(c));
}

/* `argus watch`'s hardware watchpoints (hw_watch.h); NULL until the
 * collector has loaded the program. */
static struct argus_hw_watch *hw_watches;

static void tap_record(void *ctx, const void *rec, size_t size)
{
	struct watch *wt = ctx;

	if (wt->w)
		argus_hang_watch__record(wt->w, rec, size);
	argus_hw_watch__record(hw_watches, rec, size);
}

static void print_watch_status(const struct watch *wt, FILE *out)
{
	struct argus_hang_keeper_status ks;

	if (!wt->w) {
		fprintf(out, "watch=off\n");
		return;
	}
	argus_hang_keeper__status(wt->keeper, &ks);
	fprintf(out, "watch=on\n");
	fprintf(out, "watch_interactive=%d\n", wt->display != NULL);
	fprintf(out, "watch_uids=");
	if (wt->cfg->any_uid)
		fprintf(out, "all");
	for (size_t i = 0; !wt->cfg->any_uid && i < wt->cfg->nuids; i++)
		fprintf(out, "%s%u", i ? "," : "", wt->cfg->uids[i]);
	fprintf(out, "\n");
	fprintf(out, "watching=%u\n", argus_hang_watch__count(wt->w));
	fprintf(out, "hang_threshold_ms=%llu\n", (unsigned long long)(wt->threshold_ns / 1000000));
	fprintf(out, "hang_dir=%s\n", argus_hang_keeper__dir(wt->keeper));
	fprintf(out, "hangs_seen=%llu\n", (unsigned long long)argus_hang_watch__seen(wt->w));
	fprintf(out, "hangs_kept=%llu\n", (unsigned long long)ks.kept);
	fprintf(out, "hangs_removed=%llu\n", (unsigned long long)ks.removed);
	fprintf(out, "hangs_failed=%llu\n", (unsigned long long)ks.failed);
	fprintf(out, "hangs_rejected=%llu\n", (unsigned long long)ks.rejected);
	fprintf(out, "hangs_dropped=%llu\n", (unsigned long long)ks.dropped);
	fprintf(out, "hangs_pending=%u\n", ks.pending);
	fprintf(out, "hangs_in_dir=%u\n", ks.in_dir);
}

struct daemon {
	char unit[256];                  /* the systemd unit running us ("": none) */
	struct argus_collector *c;
	struct watch *wt;
	struct argus_mark_server *marks; /* NULL: marks are root-only */
	const char *mark_group;          /* as asked for ("none": off) */
	bool mark_group_missing;         /* no such group on this system */
};

/* A mark through the mark socket (mark_socket.h has checked the peer and
 * the text). */
static int mark_from_group(void *ctx, uint32_t pid, uint32_t uid, const char *text)
{
	return argus_collector__mark(ctx, pid, 0, uid, text);
}

static void print_mark_status(const struct daemon *dm, FILE *out)
{
	struct argus_mark_server_stats ms;

	if (!dm->marks) {
		fprintf(out, "mark_group=none\n");
		if (dm->mark_group_missing)
			fprintf(out, "mark_group_missing=%s\n", dm->mark_group);
		return;
	}
	argus_mark_server__stats(dm->marks, &ms);
	fprintf(out, "mark_group=%s\n", dm->mark_group);
	fprintf(out, "mark_socket=%s\n", argus_mark_server__path(dm->marks));
	fprintf(out, "group_marks=%llu\n", (unsigned long long)ms.marks);
	fprintf(out, "group_marks_refused=%llu\n", (unsigned long long)(ms.refused + ms.bad));
	fprintf(out, "group_marks_busy=%llu\n", (unsigned long long)ms.busy);
	fprintf(out, "group_marks_too_many=%llu\n", (unsigned long long)ms.too_many);
}

/* The interposer's registrations and rings (interpose_ring.h); NULL when
 * its socket could not be made (argusd runs on without it). */
static struct argus_ip_registry *interpose;

static int interpose_emit(void *ctx, const struct argus_event *ev)
{
	return argus_collector__user_event(ctx, ev);
}

/* The collector's side_drain: new registrations, then every ring. */
static void interpose_drain(void *ctx, struct argus_collector *c)
{
	(void)ctx;
	if (!interpose)
		return;
	argus_ip_registry__accept(interpose);
	argus_ip_registry__drain(interpose, interpose_emit, c);
}

/* The collector's side_peek: the rings only, as far as they are written
 * (collector.h: keeps the records in their real order under load). */
static void interpose_peek(void *ctx, struct argus_collector *c)
{
	(void)ctx;
	if (interpose)
		argus_ip_registry__peek(interpose, interpose_emit, c);
}

static void print_interpose_status(FILE *out)
{
	struct argus_ip_stats st;

	argus_ip_registry__stats(interpose, &st);
	fprintf(out, "interpose=%s\n", interpose ? "on" : "off");
	fprintf(out, "interpose_procs=%u\n", st.procs);
	fprintf(out, "interpose_registered=%llu\n", (unsigned long long)st.registered);
	fprintf(out, "interpose_refused=%llu\n", (unsigned long long)st.refused);
	fprintf(out, "interpose_refused_full=%llu\n", (unsigned long long)st.refused_full);
	fprintf(out, "interpose_records=%llu\n", (unsigned long long)st.records);
	fprintf(out, "interpose_lost=%llu\n", (unsigned long long)st.lost);
	fprintf(out, "interpose_over_budget=%llu\n", (unsigned long long)st.over_budget);
	fprintf(out, "interpose_invalid=%llu\n", (unsigned long long)st.invalid);
	for (unsigned i = 1; i < ARGUS_IP_REJECT_MAX; i++)
		fprintf(out, "interpose_invalid.%s=%llu\n", argus_ip_reject_str(i),
			(unsigned long long)st.by_reason[i]);
}

static void print_status(struct argus_collector *c, const char *unit, FILE *out)
{
	struct argus_collector_status st;

	argus_collector__status(c, &st);
	fprintf(out, "pid=%d\n", getpid());
	/* early, where a short answer buffer (`argus start`'s) still has it */
	if (unit[0])
		fprintf(out, "service=%s\n", unit);
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
	fprintf(out, "spilled=%llu\n", (unsigned long long)st.spilled);
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
	fprintf(out, "unwind_helper_pid=%d\n", st.unwind_helper_pid);
	fprintf(out, "unwind_helper_restarts=%llu\n",
		(unsigned long long)st.unwind_helper_restarts);
	fprintf(out, "unwind_wait_ms=%.1f\n", st.unwind_wait_ns / 1e6);
	fprintf(out, "unwind_wait_max_ms=%.1f\n", st.unwind_wait_max_ns / 1e6);
}

static int handle(void *ctx, const char *req, int peer_pid, FILE *out)
{
	struct daemon *dm = ctx;
	struct argus_collector *c = dm->c;
	int err;

	if (!strcmp(req, "status")) {
		print_status(c, dm->unit, out);
		print_interpose_status(out);
		print_watch_status(dm->wt, out);
		fprintf(out, "hw_watches=%u\nhw_watch_hits=%llu\n", argus_hw_watch__count(hw_watches),
			(unsigned long long)argus_hw_watch__hits(hw_watches));
		print_mark_status(dm, out);
		return 0;
	}
	if (!strncmp(req, "watch ", 6)) {
		if (!hw_watches) {
			fprintf(out, "error: watch: out of memory\n");
			return -ENOMEM;
		}
		return argus_hw_watch__request(hw_watches, req + 6, out);
	}
	if (!strncmp(req, "mark ", 5)) {
		/* uid 0: the control socket serves only our own uid, and
		 * argusd runs as root (main() checks) */
		err = argus_collector__mark(c, (uint32_t)peer_pid, 0, 0, req + 5);
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

/* sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET (a
 * path, or "@name" in the abstract namespace).  Not under a Type=notify
 * unit (no NOTIFY_SOCKET): nothing. */
static void notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || (len = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		fprintf(stderr, "argusd: cannot tell systemd (%s): %s\n", path, strerror(errno));
	close(fd);
}

/* The systemd unit that runs us ("" none): systemd sets INVOCATION_ID in
 * every unit's environment (`argus start` clears it), and the unit is the
 * last component of our cgroup in systemd's hierarchy: the unified one
 * ("0::/system.slice/argus.service"), or on a legacy or hybrid machine
 * "N:name=systemd:/system.slice/argus.service". */
static void systemd_unit(char *unit, size_t len)
{
	char line[512];
	FILE *f;

	unit[0] = 0;
	if (!getenv("INVOCATION_ID") || !(f = fopen("/proc/self/cgroup", "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
		char *slash = path ? strrchr(path, '/') : NULL;
		size_t n;

		if (!slash || (path != ctl + 1 && strncmp(ctl + 1, "name=systemd:", 13)))
			continue;
		n = strcspn(slash + 1, "\n");
		if (n > 8 && !strncmp(slash + 1 + n - 8, ".service", 8))
			snprintf(unit, len, "%.*s", (int)n, slash + 1);
	}
	fclose(f);
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

/* The hang keeper's diagnosis of a snapshot (hang_keep.h, opts.analyze):
 * the analysis session with argus's words, its output on fds 1 and 2. */
static int keep_analyze(void *ctx, int argc, char **argv)
{
	struct argus_session *q = argus_session__new();
	int rc = argus_session__run(q, argc, argv);

	(void)ctx;
	argus_session__free(q);
	return rc;
}

/* static: what it holds (the --watch list) stays reachable on every way
 * out of main, which need not free it */
static struct argusd_config cfg;

int main(int argc, char **argv)
{
	struct argus_collector_opts opts = { .sz = sizeof(opts), .zlevel = -1 };
	struct argus_hang_keeper_opts ko = { .sz = sizeof(ko), .log = log_line };
	char path[4096], sock[256], pidfile[256], err[512], line[600];
	char hang_dir[4200], abs_hang_dir[4200];
	const char *dir, *mark_group;
	bool interactive, help;
	struct watch wt = { 0 };
	struct daemon dm = { 0 };
	struct argus_collector *c;
	int ready_fd, lfd, rc = 0;
	char *end;
	unsigned long v;

	if (argusd_config_init(&cfg, argc)) {
		fputs("argusd: out of memory\n", stderr);
		return 1;
	}
	{
		/* a bad flag's line goes to stderr and, once --ready-fd is
		 * known, to `argus start` (which parsed the same table first,
		 * so that is for argusd run by other hands) */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);

		msg_set_err(mem);
		rc = argusd_config_parse(&cfg, false, argc, argv, &help);
		msg_set_err(NULL);
		if (mem)
			fclose(mem);
		if (text)
			fputs(text, stderr);
		if (rc && text) {
			text[strcspn(text, "\n")] = 0;
			snprintf(line, sizeof(line), "%s\n", text);
			report_ready(cfg.ready_fd, line);
		}
		free(text);
		if (rc || help) {
			argusd_config_free(&cfg);
			return rc;
		}
	}
	dir = cfg.dir;
	mark_group = cfg.mark_group;
	interactive = !cfg.no_interactive;
	ready_fd = cfg.ready_fd;
	opts.probe.sample_hz = cfg.sample_hz;
	opts.probe.no_irq = cfg.no_irq;
	opts.probe.all_entries = cfg.all_entries;
	opts.no_unwind = cfg.no_unwind;
	if (cfg.wait_stacks)
		opts.probe.block_copy = ARGUS_WAIT_STACK_COPY;
	wt.cfg = &cfg;
	ko.before_ns = cfg.hang_before_ns;
	ko.grace_ns = cfg.hang_grace_ns;
	ko.keep = cfg.hang_keep;
	ko.max_bytes = cfg.hang_max_bytes;
	/* a relative hang dir is the starter's: argusd never chdirs, and
	 * `argus start` execs it in the directory the user typed it in */
	ko.dir = cfg.hang_dir;
	if (ko.dir && ko.dir[0] != '/') {
		char cwd[4096];

		if (getcwd(cwd, sizeof(cwd))) {
			snprintf(abs_hang_dir, sizeof(abs_hang_dir), "%s/%s", cwd, ko.dir);
			ko.dir = abs_hang_dir;
		}
	}
	if (geteuid() != 0) {
		snprintf(line, sizeof(line), "argusd: need root to load BPF programs: run `argus start` as root\n");
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

	/* one collector per run dir: listening would take the socket from a
	 * running one (`argus start` by hand, then the unit, or the reverse) */
	if (argus_control__request(sock, "status", err, sizeof(err), 2000) >= 0) {
		/* any answer (err may cut it short: 1) */
		char *p = strstr(err, "pid=");
		snprintf(line, sizeof(line), "argusd: a collector is already running (pid %d, %s)\n",
			 p ? atoi(p + 4) : 0, sock);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		return 1;
	}
	lfd = argus_control__listen(sock, err, sizeof(err));
	if (lfd < 0) {
		snprintf(line, sizeof(line), "argusd: %s\n", err);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		return 1;
	}
	opts.path = path;
	opts.ring_size = cfg.size;
	opts.probe.sz = sizeof(opts.probe);
	opts.probe.self_tgid = (uint32_t)getpid();
	/* the watch's tap; wt.w is set before the first drain */
	opts.tap = tap_record;
	opts.tap_ctx = &wt;
	opts.side_drain = interpose_drain;
	opts.side_peek = interpose_peek;
	c = argus_collector__new(&opts, err, sizeof(err));
	if (!c) {
		snprintf(line, sizeof(line), "argusd: %s\n", err);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		unlink(sock);
		return 1;
	}
	hw_watches = argus_hw_watch__new(argus_probe__watch_prog_fd(argus_collector__probe(c)),
					 argus_probe__watch_map_fd(argus_collector__probe(c)));
	/* the live hang watch: after the BPF programs are attached, so a
	 * process found in /proc now is seen by the records from here on */
	if (cfg.nwatch || interactive) {
		struct argus_hang_watch_opts wo = { .sz = sizeof(wo), .threshold_ns = cfg.threshold_ns,
						    .comm_ok = comm_uid_ok, .comm_ok_ctx = &wt };

		/* by name: root's processes only, unless --watch-uid */
		if (!cfg.nuids && !cfg.any_uid)
			cfg.uids[cfg.nuids++] = 0;

		wt.threshold_ns = cfg.threshold_ns;
		wt.w = argus_hang_watch__new(&wo);
		if (!wt.w) {
			snprintf(err, sizeof(err), "out of memory");
			goto watch_fail;
		}
		for (size_t i = 0; i < cfg.nwatch; i++) {
			const char *a = cfg.watch[i];
			errno = 0;
			v = strtoul(a, &end, 10);
			if (!*end && !errno && v && v <= UINT32_MAX) {
				if (watch_number(&wt, (uint32_t)v, err, sizeof(err)))
					goto watch_fail;
			} else {
				argus_hang_watch__add_comm(wt.w, a);
				watch_named_now(&wt, a);
			}
		}
		if (interactive && !(wt.display = argus_display_scan__new())) {
			snprintf(err, sizeof(err), "out of memory");
			goto watch_fail;
		}
		snprintf(hang_dir, sizeof(hang_dir), "%s/hangs", dir);
		if (!ko.dir)
			ko.dir = hang_dir;
		ko.threshold_ns = cfg.threshold_ns;
		/* each snapshot's diagnosis: the analysis session, as every
		 * front end runs it (keep_analyze.c) */
		ko.analyze = keep_analyze;
		wt.keeper = argus_hang_keeper__new(&ko, err, sizeof(err));
		if (!wt.keeper)
			goto watch_fail;
	}
	if (0) {
watch_fail:
		snprintf(line, sizeof(line), "argusd: %s\n", err);
		fputs(line, stderr);
		report_ready(ready_fd, line);
		argus_collector__free(c);
		argus_hang_watch__free(wt.w);
		argus_display_scan__free(wt.display);
		unlink(sock);
		return 1;
	}
	dm.c = c;
	dm.wt = &wt;
	dm.mark_group = mark_group;
	if (strcmp(mark_group, "none")) {
		struct group *gr = getgrnam(mark_group);
		char msock[256];

		if (!gr) {
			/* the default group need not exist: marks stay root-only,
			 * and `argus start` says so (mark_group_missing) */
			dm.mark_group_missing = true;
			fprintf(stderr, "argusd: no group '%s': marks are root-only\n", mark_group);
		} else {
			argus_mark_socket_path(msock, sizeof(msock));
			dm.marks = argus_mark_server__new(msock, gr->gr_gid, mark_from_group, c,
							  err, sizeof(err));
			if (!dm.marks) {
				snprintf(line, sizeof(line), "argusd: mark socket: %s\n", err);
				fputs(line, stderr);
				report_ready(ready_fd, line);
				argus_collector__free(c);
				argus_hang_keeper__free(wt.keeper, 0);
				argus_hang_watch__free(wt.w);
				argus_display_scan__free(wt.display);
				unlink(sock);
				return 1;
			}
		}
	}
	/* The interposer's socket is for every user (a traced app is
	 * anyone's): the run directory becomes 0711 so it can be reached by
	 * name, nothing in it can be listed, and argusd.sock stays 0600 and
	 * root-only by SO_PEERCRED (control.c). */
	{
		char ipath[300];
		struct argus_collector_status cst;

		snprintf(ipath, sizeof(ipath), "%s/interpose.sock", argus_run_dir());
		argus_collector__status(c, &cst);
		interpose = argus_ip_registry__new(ipath, cst.ncpus, err, sizeof(err));
		if (!interpose)
			fprintf(stderr, "argusd: the interposer cannot register (%s): mutex records are off\n",
				err);
		else if (chmod(argus_run_dir(), 0711))
			fprintf(stderr, "argusd: chmod 0711 %s: %s: only root's processes can register"
				" with the interposer\n", argus_run_dir(), strerror(errno));
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
	systemd_unit(dm.unit, sizeof(dm.unit));
	notify_systemd("READY=1");

	while (!stop_requested) {
		uint64_t t0 = argus_now_ns();
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
		watch_tick(&wt, c, t0);
		argus_control__serve(lfd, handle, &dm);
		argus_mark_server__serve(dm.marks, argus_now_ns());
	}
	notify_systemd("STOPPING=1");
	/* a save under way finishes (bounded); hangs not yet saved are not */
	argus_hang_keeper__free(wt.keeper, 5000); /* `argus stop` waits 10 s */
	wt.keeper = NULL;
	/* The final flush still drains the ring buffer through tap_record,
	 * so the watchers it feeds are freed after it, not before. */
	argus_collector__free(c);
	argus_ip_registry__free(interpose);
	argus_hang_watch__free(wt.w);
	argus_display_scan__free(wt.display);
	argus_hw_watch__free(hw_watches);
	argus_mark_server__free(dm.marks);
	argusd_config_free(&cfg);
	close(lfd);
	unlink(sock);
	unlink(pidfile);
	return rc;
}
