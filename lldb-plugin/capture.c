/* capture.c - output captured for lldb: of code run in process (the step
 * front end), or of the argus binary run as a child (see capture.h).
 *
 * In process: the step front end writes through stdout/stderr, and some
 * paths may write to the fds directly; a dup2() of fds 1 and 2 onto two
 * unlinked temp files catches everything.  stdio is flushed before
 * (lldb's pending output goes to the terminal) and after (the code's
 * buffered output goes to the files).  That code forks no child that
 * would inherit the redirection.
 *
 * A child: its stdout and stderr are two pipes, read together with
 * poll(); stdin is /dev/null (lldb's terminal stays lldb's). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

#define CAPTURE_MAX (16u << 20)  /* bytes kept per stream; the rest is cut */

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* The whole of the temp file behind fd, from its start, NUL-terminated. */
static char *slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return NULL;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		buf[0] = 0;
		return buf;
	}
	for (;;) {
		if (cap - len < 2) {
			char *nb;

			if (cap >= CAPTURE_MAX)
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	return buf;
}

int argus_capture__run(argus_capture_fn fn, int argc, char **argv, struct argus_capture *cap)
{
	FILE *fo, *fe;
	int save_out, save_err, rc = 0;

	memset(cap, 0, sizeof(*cap));
	pthread_mutex_lock(&capture_lock);
	fo = tmpfile();
	fe = tmpfile();
	if (!fo || !fe) {
		rc = -errno;
		goto out_files;
	}
	fflush(stdout);
	fflush(stderr);
	save_out = dup(1);
	save_err = dup(2);
	if (save_out < 0 || save_err < 0 || dup2(fileno(fo), 1) < 0) {
		rc = -errno;
		goto out_fds;
	}
	if (dup2(fileno(fe), 2) < 0) {
		rc = -errno;
		dup2(save_out, 1);
		goto out_fds;
	}
	clearerr(stdout);
	clearerr(stderr);
	cap->rc = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(save_out, 1);
	dup2(save_err, 2);
	clearerr(stdout);
	clearerr(stderr);
	cap->out = slurp(fileno(fo));
	cap->err = slurp(fileno(fe));
	if (!cap->out || !cap->err) {
		argus_capture__free(cap);
		rc = -ENOMEM;
	}
out_fds:
	if (save_out >= 0)
		close(save_out);
	if (save_err >= 0)
		close(save_err);
out_files:
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	pthread_mutex_unlock(&capture_lock);
	return rc;
}

void argus_capture__free(struct argus_capture *cap)
{
	if (!cap)
		return;
	free(cap->out);
	free(cap->err);
	cap->out = cap->err = NULL;
}

int argus_capture__spawn(const char *path, char **argv, struct argus_capture *cap)
{
	posix_spawn_file_actions_t fa;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, rc, st;
	pid_t pid;

	memset(cap, 0, sizeof(*cap));
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		rc = -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	rc = -posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	if (rc)
		goto out;
	/* both pipes at once: a child that fills one while we block on the
	 * other would never end */
	{
		struct pollfd p[2] = { { .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN } };
		char *buf[2] = { NULL, NULL };
		size_t len[2] = { 0, 0 };
		FILE *f[2] = { open_memstream(&buf[0], &len[0]), open_memstream(&buf[1], &len[1]) };
		int open_fds = 2;

		while (open_fds && f[0] && f[1]) {
			if (poll(p, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			for (int i = 0; i < 2; i++) {
				char chunk[8192];
				ssize_t n;

				if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				n = read(p[i].fd, chunk, sizeof(chunk));
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					p[i].fd = -1;
					open_fds--;
				} else if (len[i] < CAPTURE_MAX) {
					fwrite(chunk, 1, (size_t)n, f[i]);
				}
			}
		}
		for (int i = 0; i < 2; i++)
			if (f[i])
				fclose(f[i]);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		cap->out = buf[0] ? buf[0] : strdup("");
		cap->err = buf[1] ? buf[1] : strdup("");
		cap->rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		if (!cap->out || !cap->err) {
			argus_capture__free(cap);
			rc = -ENOMEM;
		}
	}
out:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	return rc;
}
