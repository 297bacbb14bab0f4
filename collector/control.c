/* control.c - see control.h. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *argus_run_dir(void)
{
	const char *d = getenv("ARGUS_RUN_DIR");
	return d && d[0] ? d : ARGUS_DEFAULT_RUN_DIR;
}

void argus_control_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/argusd.sock", argus_run_dir());
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int argus_control__listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd, e;

	if ((e = fill_addr(&sa, path))) {
		snprintf(err, errlen, "control socket path too long: %s", path);
		return e;
	}
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0700) && errno != EEXIST) {
			e = -errno;
			snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
			return e;
		}
		chmod(dir, 0700);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return e;
	}
	unlink(path); /* a stale socket from a killed daemon */
	mode_t old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		e = -errno;
		umask(old);
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return e;
	}
	umask(old);
	chmod(path, 0600);
	return fd;
}

/* Reads one line (up to '\n') with a deadline. */
static int read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
		r = read(fd, buf + n, len - 1 - n);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return (int)n;
}

static void write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static void serve_one(int cfd, argus_control_fn fn, void *ctx)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char req[ARGUS_CONTROL_MAX];
	char *ans = NULL;
	size_t anslen = 0;
	FILE *out;
	int rc;

	/* only root (or our own uid) may drive a collector that sees everything */
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		const char *m = "error: permission denied: the collector serves root only\n";
		write_all(cfd, m, strlen(m));
		return;
	}
	fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) & ~O_NONBLOCK);
	if (read_line(cfd, req, sizeof(req), 2000) <= 0)
		return;
	out = open_memstream(&ans, &anslen);
	if (!out)
		return;
	rc = fn(ctx, req, (int)cred.pid, out);
	if (rc == 0)
		fputs("ok\n", out);
	fclose(out);
	if (rc && (!anslen || strncmp(ans, "error:", 6)))
		write_all(cfd, "error: request failed\n", 22);
	write_all(cfd, ans, anslen);
	free(ans);
}

int argus_control__serve(int lfd, argus_control_fn fn, void *ctx)
{
	for (;;) {
		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		serve_one(cfd, fn, ctx);
		close(cfd);
	}
}

int argus_control__request(const char *path, const char *request,
			   char *resp, size_t len, int timeout_ms)
{
	struct sockaddr_un sa;
	size_t n = 0;
	int fd, e;

	if ((e = fill_addr(&sa, path)))
		return e;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = -errno;
		close(fd);
		return e;
	}
	write_all(fd, request, strlen(request));
	write_all(fd, "\n", 1);
	shutdown(fd, SHUT_WR);
	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, timeout_ms) <= 0) {
			close(fd);
			return -ETIMEDOUT;
		}
		r = read(fd, resp + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	resp[n] = 0;
	/* the last line decides */
	while (n && resp[n - 1] == '\n')
		resp[--n] = 0;
	char *last = strrchr(resp, '\n');
	last = last ? last + 1 : resp;
	if (!strcmp(last, "ok")) {
		*last = 0;
		return 0;
	}
	return 1;
}
