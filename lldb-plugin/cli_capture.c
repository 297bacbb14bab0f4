/* cli_capture.c - runs the argus CLI inside lldb with its output captured
 * (see cli_capture.h).
 *
 * Why fds and not FILE pointers: the CLI and the libraries under it write
 * through stdout/stderr, but some paths may write to the fds directly; a
 * dup2() of fds 1 and 2 onto two unlinked temp files catches everything.
 * stdio is flushed before (lldb's pending output goes to the terminal) and
 * after (the CLI's buffered output goes to the files).  The CLI never
 * forks a child that would inherit the redirection in the commands the
 * plugin offers (start, which spawns argusd, is not one of them). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_capture.h"
#include "diag_cli.h"
#include "until_end.h"

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

int argus_capture_cli(int argc, char **argv)
{
	return argus_cli_main(argc, argv);
}

int argus_capture_check_diag_args(int argc, char **argv)
{
	struct diag_cli_opts o;

	if (argc < 1)
		return 2;
	return diag_cli_parse(argv[0], argc, argv, &o, !strcmp(argv[0], "diagnose")) ? 2 : 0;
}

void argus_capture_set_bin_dir(const char *dir)
{
	cli_set_bin_dir(dir);
}

void argus_capture_set_until_end_tick(argus_until_end_tick_fn fn, void *ctx)
{
	until_end_set_tick(fn, ctx);
}

void argus_capture_set_symbolizer(argus_sym_fn fn, void *ctx)
{
	diag_cli_set_symbolizer(fn, ctx);
}
