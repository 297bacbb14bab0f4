/* cmd_start.c - `argus start`: launch argusd in the background and wait
 * until it reports that its BPF programs are attached (or why not). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argusd_opts.h"
#include "cli.h"
#include "control.h"
#include "mark_socket.h"

/* The line on who may mark, from the daemon's status lines ("" none). */
static void mark_group_line(const char *resp, char *line, size_t len)
{
	const char *g = strstr(resp, "\nmark_group="), *miss = strstr(resp, "\nmark_group_missing=");
	const char *ms = strstr(resp, "\nmark_socket=");

	line[0] = 0;
	if (!g)
		return;
	g += 12;
	if (miss) {
		int n = (int)strcspn(miss + 20, "\n");
		snprintf(line, len, "argus: no group '%.*s': marks are root-only (groupadd %.*s and"
			 " restart, or --mark-group none)\n", n, miss + 20, n, miss + 20);
	} else if (strncmp(g, "none\n", 5) && ms) {
		snprintf(line, len, "argus: members of group %.*s may send `argus mark` (%.*s)\n",
			 (int)strcspn(g, "\n"), g, (int)strcspn(ms + 13, "\n"), ms + 13);
	}
}

int cmd_start(int argc, char **argv)
{
	char self[4096], argusd[4200], resp[4096], msg[600] = "", mark_line[600];
	struct argusd_config cfg;
	char **args;
	int n = 0, pfd[2], rc;
	bool help;
	pid_t pid;

	ctl_bin_dir(self, sizeof(self));
	snprintf(argusd, sizeof(argusd), "%s/argusd", self);
	/* argusd, the words as given (the parse below reorders none of a line
	 * it accepts, but checks a copy anyway), --ready-fd 3 and NULL */
	args = calloc((size_t)argc + 4, sizeof(*args));
	if (!args || argusd_config_init(&cfg, argc)) {
		free(args);
		return msg_error("start", "out of memory");
	}
	args[n++] = argusd;
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	/* argusd's own table: what it would refuse is refused here, in the
	 * user's terminal, before anything starts */
	rc = argusd_config_parse(&cfg, true, argc, argv, &help);
	argusd_config_free(&cfg);
	if (rc || help) {
		free(args);
		return rc;
	}
	if (geteuid() != 0) {
		free(args);
		return msg_error("start", "need root to load BPF programs: run `argus start` as root");
	}
	{
		char sock[256];
		argus_control_path(sock, sizeof(sock));
		if (argus_control__request(sock, "status", resp, sizeof(resp), 2000) == 0) {
			char *p = strstr(resp, "pid="), *u = strstr(resp, "\nservice=");
			free(args);
			if (u) {
				u += 9;
				u[strcspn(u, "\n")] = 0;
				return msg_error("start", "the collector is already running (pid %d), started by"
						 " %s: systemctl restart %s to change its options"
						 " (/etc/default/argus)", p ? atoi(p + 4) : 0, u, u);
			}
			return msg_error("start", "the collector is already running (pid %d)", p ? atoi(p + 4) : 0);
		}
	}
	if (access(argusd, X_OK)) {
		free(args);
		return msg_error("start", "cannot find argusd next to argus (%s): rebuild or reinstall", argusd);
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		free(args);
		return msg_error("start", "pipe: %s", strerror(errno));
	}
	args[n++] = "--ready-fd";
	args[n++] = "3";
	args[n] = NULL;

	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		free(args);
		return msg_error("start", "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* double fork so argusd is not our child and survives us */
		if (fork() != 0)
			_exit(0);
		setsid();
		/* and fork once more: argusd is then no session leader, and a
		 * process that is not one never acquires a controlling terminal,
		 * whatever tty it opens (O_NOCTTY is the other half) */
		if (fork() != 0)
			_exit(0);
		/* argusd's own complaints go to a root-only log beside its socket */
		char logpath[300];
		snprintf(logpath, sizeof(logpath), "%s/argusd.log", argus_run_dir());
		mkdir(argus_run_dir(), 0700);
		int devnull = open("/dev/null", O_RDWR);
		int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(logfd >= 0 ? logfd : devnull, 2);
		dup2(pfd[1], 3); /* dup2 clears FD_CLOEXEC on the copy */
		/* started by us, not by a unit: an `argus start` run from a
		 * systemd service must not make argusd say it is that unit's,
		 * nor tell systemd it is ready (argusd.c, notify_systemd) */
		unsetenv("INVOCATION_ID");
		unsetenv("NOTIFY_SOCKET");
		execv(argusd, args);
		_exit(127);
	}
	close(pfd[1]);
	free(args);
	waitpid(pid, NULL, 0);

	struct pollfd p = { .fd = pfd[0], .events = POLLIN };
	ssize_t r = 0;
	if (poll(&p, 1, 60000) > 0)
		r = read(pfd[0], msg, sizeof(msg) - 1);
	close(pfd[0]);
	msg[r > 0 ? r : 0] = 0;
	if (strncmp(msg, "ready", 5)) {
		msg[strcspn(msg, "\n")] = 0;
		return msg_error("start", "%s", msg[0] ? msg : "argusd exited without a word (see `argusd` in the foreground)");
	}
	if (ctl_request("start", "status", resp, sizeof(resp)))
		return 1;
	mark_group_line(resp, mark_line, sizeof(mark_line));
	char *rp = strstr(resp, "ring="), *pp = strstr(resp, "pid=");
	char *hd = strstr(resp, "hang_dir="), *wn = strstr(resp, "watching=");
	bool interactive = strstr(resp, "watch_interactive=1") != NULL;
	if (hd)
		hd[strcspn(hd, "\n")] = 0;
	if (rp)
		rp[strcspn(rp, "\n")] = 0;
	printf("argus: collector started (pid %d), ring %s\n", pp ? atoi(pp + 4) : 0, rp ? rp + 5 : "?");
	if (hd && wn) {
		printf("argus: watching %d thread%s for hangs%s; snapshots go to %s\n", atoi(wn + 9),
		       atoi(wn + 9) == 1 ? "" : "s",
		       interactive ? " (and display servers' clients)" : "",
		       hd + 9);
	}
	fputs(mark_line, stdout);
	return 0;
}

static const struct argus_usage stop_usage = {
	.cmd = "stop",
	.synopsis = "argus stop\n",
	.about = "  Stops the collector; its ring stays on disk.\n",
};

int cmd_stop(int argc, char **argv)
{
	static const struct argus_opt none[] = { OPT_END() };
	char sock[256], resp[256];
	int n;

	if ((n = argus_opts_parse(&stop_usage, none, argc, argv, 0)) < 0)
		return argus_opts_exit(n);
	if (n)
		return msg_usage_error("stop", "takes no arguments");
	if (ctl_request("stop", "stop", resp, sizeof(resp)))
		return 1;
	argus_control_path(sock, sizeof(sock));
	/* the daemon flushes its last chunk, then removes the socket */
	for (int i = 0; i < 200 && access(sock, F_OK) == 0; i++)
		usleep(50000);
	if (access(sock, F_OK) == 0)
		return msg_error("stop", "the collector did not exit within 10 s");
	printf("argus: collector stopped\n");
	return 0;
}

/* A non-root user's mark goes through the mark socket (mark_socket.h),
 * which serves root and the mark group's members, and only marks. */
static int mark_as_user(const char *req)
{
	char sock[256], resp[256];
	int rc;

	argus_mark_socket_path(sock, sizeof(sock));
	rc = argus_control__request(sock, req, resp, sizeof(resp), 5000);
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		return msg_error("mark", "no mark socket at %s: the collector is not running, or it"
				 " takes marks from root only (see `argus start --mark-group`)", sock);
	if (rc == -EACCES || rc == -EPERM)
		return msg_error("mark", "permission denied on %s: only root and members of the"
				 " collector's mark group (default %s) may mark; an admin runs"
				 " `usermod -aG %s $USER`, then log out and in", sock,
				 ARGUS_DEFAULT_MARK_GROUP, ARGUS_DEFAULT_MARK_GROUP);
	if (rc < 0)
		return msg_error("mark", "cannot talk to the collector at %s: %s", sock, strerror(-rc));
	if (rc > 0) {
		fprintf(stderr, "argus mark: %s\n", msg_tstr(resp));
		return 1;
	}
	return 0;
}

static const struct argus_usage mark_usage = {
	.cmd = "mark",
	.synopsis = "argus mark TEXT...\n",
	.about =
	"  Adds TEXT (the words joined by spaces) to the running collector's trace\n"
	"  as a mark: `argus hangs` lists the marked interval, `argus diagnose\n"
	"  --mark TEXT` takes it.  Text that starts with '-': argus mark -- TEXT.\n",
};

int cmd_mark(int argc, char **argv)
{
	static const struct argus_opt none[] = { OPT_END() };
	char req[ARGUS_CONTROL_MAX], resp[256];
	size_t n;

	/* the words from the first one that is not an option are the text */
	if ((argc = argus_opts_parse(&mark_usage, none, argc, argv, ARGUS_OPTS_STOP_AT_NON_OPTION)) < 0)
		return argus_opts_exit(argc);
	if (argc < 1)
		return msg_usage_error("mark", "needs the annotation text");
	n = (size_t)snprintf(req, sizeof(req), "mark");
	for (int i = 0; i < argc && n < sizeof(req); i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, " %s", argv[i]);
	if (n >= sizeof(req))
		return msg_usage_error("mark", "text too long (at most %d bytes)", ARGUS_CONTROL_MAX - 8);
	for (char *p = req; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	if (geteuid() != 0) {
		if (n - 5 > ARGUS_MARK_TEXT_MAX)
			return msg_error("mark", "text too long (at most %d bytes from a"
					 " non-root user)", ARGUS_MARK_TEXT_MAX);
		return mark_as_user(req);
	}
	return ctl_request("mark", req, resp, sizeof(resp));
}
