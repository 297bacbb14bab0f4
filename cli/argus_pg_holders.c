/* argus_pg_holders.c - `argus-pg-holders PID`: which PostgreSQL backends
 * hold the lock that backend PID waits for, as pg_blocking_pids(PID)
 * prints it ("{1234,5678}").  The command of the schema's built-in holder
 * rule (cli/holder_cmd.c, docs/schema.md "Holders only the application
 * knows"); argus runs it as the backend's own uid (the server's user),
 * never as root.  By hand: `runuser -u postgres -- argus-pg-holders PID`.
 *
 * How it finds the server: a backend's working directory is the data
 * directory, whose postmaster.pid says (line 1) the postmaster's pid,
 * (4) the port and (5) the first unix socket directory.  That file is
 * the target's: everything read from it is checked -- the postmaster must
 * be the backend's parent, the port a port, the socket directory an
 * absolute path whose socket name fits a sun_path -- before psql is run
 * on it: the psql beside the server's own binary (/proc/PPID/exe: the
 * same major version), else the one in /usr/bin.  psql is run directly
 * (no shell), with -X (no psqlrc) and -w (never a password prompt), on
 * database postgres, then template1 if that one fails.
 *
 * Exit status: psql's; 2 for a bad argument or a server it cannot find
 * (one line on stderr, which argus discards). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PID_MAX 4194304u
#define SUN_PATH 108            /* sizeof(sockaddr_un.sun_path) */

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "argus-pg-holders: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	return 2;
}

/* A decimal number from 1 to max, all of s: 0 and *v, else -1. */
static int number(const char *s, unsigned long max, unsigned long *v)
{
	unsigned long n = 0;

	if (!*s)
		return -1;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		n = n * 10 + (unsigned long)(*c - '0');
		if (n > max)
			return -1;
	}
	if (!n)
		return -1;
	*v = n;
	return 0;
}

/* The parent pid of pid, from /proc/PID/stat (after the last ')'). */
static long parent_of(unsigned long pid)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	long ppid;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lu/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return ppid;
}

static int printable_path(const char *s)
{
	if (s[0] != '/')
		return 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

/* Runs psql; returns its exit status (127: could not run). */
static int psql(const char *bin, const char *sock, const char *port, const char *db,
		const char *query)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "PGAPPNAME=argus-pg-holders",
				      "PGCONNECT_TIMEOUT=2", NULL };
	char *argv[] = { (char *)bin, "-X", "-A", "-t", "-q", "-w", "-h", (char *)sock, "-p",
			 (char *)port, "-d", (char *)db, "-c", (char *)query, NULL };
	int st;
	pid_t c;

	fflush(NULL);
	c = fork();
	if (c < 0)
		return 127;
	if (c == 0) {
		execve(bin, argv, envp);
		_exit(127);
	}
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], buf[4097], exe[PATH_MAX], bin[PATH_MAX + 8], query[96], port_s[8];
	const char *line[8] = { 0 };
	unsigned long pid, pm, port;
	struct stat st;
	ssize_t n;
	int fd, nl = 0, rc;

	if (argc != 2 || number(argv[1], PID_MAX, &pid))
		return die("usage: argus-pg-holders PID (a PostgreSQL backend's pid)", NULL);
	snprintf(path, sizeof(path), "/proc/%lu/cwd/postmaster.pid", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return die(path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return die(path, "not a regular file");
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return die(path, "empty");
	buf[n] = 0;
	if (memchr(buf, 0, (size_t)n))
		return die(path, "not text");
	for (char *p = buf; nl < 8 && *p;) {
		char *e = strchr(p, '\n');

		line[nl++] = p;
		if (!e)
			break;
		*e = 0;
		p = e + 1;
	}
	if (nl < 5)
		return die(path, "fewer than 5 lines");
	if (number(line[0], PID_MAX, &pm))
		return die(path, "line 1 is not a pid");
	if (parent_of(pid) != (long)pm)
		return die("not a backend of the server whose data directory it runs in", argv[1]);
	if (number(line[3], 65535, &port))
		return die(path, "line 4 is not a port");
	if (!*line[4])
		return die(path, "the server has no unix socket (line 5 is empty)");
	if (!printable_path(line[4]) || strlen(line[4]) + sizeof("/.s.PGSQL.65535") > SUN_PATH)
		return die(path, "line 5 is not a socket directory");
	snprintf(port_s, sizeof(port_s), "%lu", port);
	snprintf(query, sizeof(query), "SELECT pg_blocking_pids(%lu)", pid);

	/* the server's own psql (/usr/lib/postgresql/15/bin/psql), else PATH's */
	bin[0] = 0;
	snprintf(path, sizeof(path), "/proc/%lu/exe", pm);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash && exe[0] == '/') {
			*slash = 0;
			snprintf(bin, sizeof(bin), "%s/psql", exe);
			if (access(bin, X_OK))
				bin[0] = 0;
		}
	}
	if (!bin[0]) {
		snprintf(bin, sizeof(bin), "/usr/bin/psql");
		if (access(bin, X_OK))
			return die("no psql beside the server's binary or in /usr/bin", NULL);
	}
	rc = psql(bin, line[4], port_s, "postgres", query);
	if (rc)
		rc = psql(bin, line[4], port_s, "template1", query);
	return rc;
}
