/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tracecmd_shim.c - lets `trace-cmd record -e EVENT...` run on this kernel,
 * as a benchmark peer (LD_PRELOAD, bench/ only; never part of Argus).
 *
 * trace-cmd 3.1 writes /proc/sys/kernel/ftrace_enabled and the function
 * tracer's filter files (set_ftrace_filter, set_ftrace_pid, ...) even when
 * it records events only, and this kernel refuses those writes (EPERM;
 * ftrace_enabled already reads 1).  trace-cmd then exits before recording.
 * Event tracing does not depend on any of these files, so the shim points
 * the opens of exactly those paths at /dev/null, and trace-cmd goes on
 * with its real recording path: the tracefs event files, one recorder per
 * CPU splicing trace_pipe_raw into trace.dat.  Everything else is opened
 * untouched.  Each redirection is said on stderr.  A few of trace-cmd's
 * opens go through glibc-internal calls the shim cannot see (clearing
 * set_ftrace_pid); those still fail, and trace-cmd goes on regardless.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static const char *const refused[] = {
	"/proc/sys/kernel/ftrace_enabled",
	"/set_ftrace_filter", "/set_ftrace_notrace",
	"/set_ftrace_pid", "/set_ftrace_notrace_pid",
	"/set_graph_function", "/set_graph_notrace",
};

static int is_refused(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		size_t n = strlen(refused[i]);

		if (len >= n && !strcmp(path + len - n, refused[i])) {
			fprintf(stderr, "tracecmd_shim: %s -> /dev/null\n", path);
			return 1;
		}
	}
	return 0;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	if (is_refused(path))
		return real(AT_FDCWD, "/dev/null", flags & O_ACCMODE);
	return real(dirfd, path, flags, mode);
}

/* open(path) is openat(AT_FDCWD, path): one place decides */
int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (!real)
		real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
	return real(is_refused(path) ? "/dev/null" : path, mode);
}

FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));
