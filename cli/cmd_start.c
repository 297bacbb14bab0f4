/* cmd_start.c - `argus start`: launch argusd in the background and wait
 * until it reports that its BPF programs are attached (or why not). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "control.h"
#include "units.h"

int cmd_start(int argc, char **argv)
{
	char self[4096], argusd[4200], resp[4096], msg[600] = "";
	char *args[16];
	int n = 0, pfd[2];
	pid_t pid;

	cli_self_dir(self, sizeof(self));
	snprintf(argusd, sizeof(argusd), "%s/argusd", self);
	args[n++] = argusd;
	for (int i = 1; i < argc; i++) {
		uint64_t size;
		/* args holds argusd, 3 flags with a value, 4 bare flags,
		 * --ready-fd FD and NULL (14 of 16): a flag given more than
		 * once is refused before anything is written past args[] */
		if (n > 12)
			return cli_usage_error("start", "too many arguments ('%s'): give each flag once",
					       argv[i]);
		if (!strcmp(argv[i], "--no-irq") || !strcmp(argv[i], "--all-entries") ||
		    !strcmp(argv[i], "--no-unwind") || !strcmp(argv[i], "--wait-stacks")) {
			args[n++] = argv[i];
			continue;
		}
		if ((strcmp(argv[i], "--size") && strcmp(argv[i], "--dir") &&
		     strcmp(argv[i], "--sample-hz")) || i + 1 >= argc || n > 10)
			return cli_usage_error("start", "unexpected argument '%s'", argv[i]);
		if (!strcmp(argv[i], "--size") && (argus_parse_size(argv[i + 1], &size) || size < (1u << 20)))
			return cli_usage_error("start", "bad --size '%s': use e.g. 512M or 2G (at least 1M)", argv[i + 1]);
		args[n++] = argv[i];
		args[n++] = argv[++i];
	}
	if (geteuid() != 0)
		return cli_error("start", "need root to load BPF programs: run `sudo argus start`");
	{
		char sock[256];
		argus_control_path(sock, sizeof(sock));
		if (argus_control__request(sock, "status", resp, sizeof(resp), 2000) == 0) {
			char *p = strstr(resp, "pid=");
			return cli_error("start", "the collector is already running (pid %d)", p ? atoi(p + 4) : 0);
		}
	}
	if (access(argusd, X_OK))
		return cli_error("start", "cannot find argusd next to argus (%s): rebuild or reinstall", argusd);
	if (pipe2(pfd, O_CLOEXEC))
		return cli_error("start", "pipe: %s", strerror(errno));
	args[n++] = "--ready-fd";
	args[n++] = "3";
	args[n] = NULL;

	pid = fork();
	if (pid < 0)
		return cli_error("start", "fork: %s", strerror(errno));
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
		execv(argusd, args);
		_exit(127);
	}
	close(pfd[1]);
	waitpid(pid, NULL, 0);

	struct pollfd p = { .fd = pfd[0], .events = POLLIN };
	ssize_t r = 0;
	if (poll(&p, 1, 60000) > 0)
		r = read(pfd[0], msg, sizeof(msg) - 1);
	close(pfd[0]);
	msg[r > 0 ? r : 0] = 0;
	if (strncmp(msg, "ready", 5)) {
		msg[strcspn(msg, "\n")] = 0;
		return cli_error("start", "%s", msg[0] ? msg : "argusd exited without a word (see `argusd` in the foreground)");
	}
	if (cli_request("start", "status", resp, sizeof(resp)))
		return 1;
	char *rp = strstr(resp, "ring="), *pp = strstr(resp, "pid=");
	if (rp)
		rp[strcspn(rp, "\n")] = 0;
	printf("argus: collector started (pid %d), ring %s\n", pp ? atoi(pp + 4) : 0, rp ? rp + 5 : "?");
	return 0;
}

int cmd_stop(int argc, char **argv)
{
	char sock[256], resp[256];

	(void)argv;
	if (argc > 1)
		return cli_usage_error("stop", "takes no arguments");
	if (cli_request("stop", "stop", resp, sizeof(resp)))
		return 1;
	argus_control_path(sock, sizeof(sock));
	/* the daemon flushes its last chunk, then removes the socket */
	for (int i = 0; i < 200 && access(sock, F_OK) == 0; i++)
		usleep(50000);
	if (access(sock, F_OK) == 0)
		return cli_error("stop", "the collector did not exit within 10 s");
	printf("argus: collector stopped\n");
	return 0;
}

int cmd_mark(int argc, char **argv)
{
	char req[ARGUS_CONTROL_MAX], resp[256];
	size_t n;

	if (argc < 2)
		return cli_usage_error("mark", "needs the annotation text");
	n = (size_t)snprintf(req, sizeof(req), "mark");
	for (int i = 1; i < argc && n < sizeof(req); i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, " %s", argv[i]);
	if (n >= sizeof(req))
		return cli_usage_error("mark", "text too long (at most %d bytes)", ARGUS_CONTROL_MAX - 8);
	for (char *p = req; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return cli_request("mark", req, resp, sizeof(resp));
}
