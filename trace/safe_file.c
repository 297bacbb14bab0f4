/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * safe_file.c - see safe_file.h.
 *
 * Why each flag:
 *   O_NOFOLLOW  a symlink planted at an output path would make root write
 *               (truncate, chmod) whatever it points to;
 *   O_EXCL      a file a user created beforehand keeps its owner, who then
 *               reads root's trace through it (or through an fd opened
 *               while it was still readable);
 *   O_NONBLOCK  opening a FIFO for reading blocks until a writer comes:
 *               the collector stopped answering for good;
 *   O_NOCTTY    a session leader without a terminal that opens a tty makes
 *               it its controlling terminal, and the tty's owner can then
 *               hang it up (SIGHUP kills the collector).
 */

#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_format.h"
#include "trace_internal.h"

/* Could argus have made this file?  Ours, one link, nobody else may read
 * or write it (so nobody else holds it open from when they could). */
static bool ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	       st->st_nlink == 1 && !(st->st_mode & 077);
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "a file";
}

static int refuse(const char *path, const struct stat *st, struct argus_error *err)
{
	if (S_ISDIR(st->st_mode))
		return argus_error__set(err, path, -EISDIR, 0,
					"is a directory; give a file name");
	if (S_ISREG(st->st_mode))
		return argus_error__set(err, path, -EEXIST, 0,
					"exists and argus did not create it (owner uid %u, mode %04o, %u link%s):"
					" remove it",
					(unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
					(unsigned)st->st_nlink, st->st_nlink == 1 ? "" : "s");
	return argus_error__set(err, path, -EEXIST, 0,
				"exists and is %s: remove it", kind_of(st->st_mode));
}

int argus_out__check(const char *path, unsigned flags, struct argus_error *err)
{
	struct stat st;

	if (!path || !*path)
		return argus_error__set(err, path, -EINVAL, 0, "no file name");
	if (lstat(path, &st))
		return errno == ENOENT ? 0 :
		       argus_error__set(err, path, -errno, 0, "cannot check: %s", strerror(errno));
	if (S_ISDIR(st.st_mode) || (!ours(&st) && !(flags & ARGUS_OUT_FORCE)))
		return refuse(path, &st, err);
	return 0;
}

int argus_out__open(const char *path, unsigned flags, struct argus_error *err)
{
	const int oflags = O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
	struct stat st;
	int fd, rc;

	if (!path || !*path)
		return argus_error__set(err, path, -EINVAL, 0, "no file name");
	for (int tries = 0; tries < 3; tries++) {
		fd = open(path, oflags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			goto created;
		if (errno != EEXIST)
			return argus_error__set(err, path, -errno, 0, "cannot create: %s",
						strerror(errno));
		/* Something is there.  O_NONBLOCK: a FIFO must not block us;
		 * O_NOFOLLOW: a symlink fails with ELOOP and is looked at with
		 * lstat instead. */
		fd = open(path, oflags | O_NONBLOCK);
		if (fd >= 0) {
			if (fstat(fd, &st)) {
				rc = -errno;
				close(fd);
				return argus_error__set(err, path, rc, 0, "cannot stat: %s",
							strerror(-rc));
			}
			if (ours(&st)) {
				/* the fd is checked, not the name: what we truncate
				 * is what we looked at */
				if (ftruncate(fd, 0)) {
					rc = -errno;
					close(fd);
					return argus_error__set(err, path, rc, 0,
								"cannot truncate: %s", strerror(-rc));
				}
				goto opened;
			}
			close(fd);
		} else if (lstat(path, &st)) {
			if (errno == ENOENT)
				continue;       /* gone meanwhile: create again */
			return argus_error__set(err, path, -errno, 0, "cannot check: %s",
						strerror(errno));
		}
		if (S_ISDIR(st.st_mode) || !(flags & ARGUS_OUT_FORCE))
			return refuse(path, &st, err);
		/* --force: the name goes (a link is unlinked, not followed),
		 * and O_EXCL above makes a new file of ours or fails again if
		 * someone raced a new one in */
		if (unlink(path) && errno != ENOENT)
			return argus_error__set(err, path, -errno, 0, "cannot replace: %s",
						strerror(errno));
	}
	return argus_error__set(err, path, -EEXIST, 0,
				"keeps being recreated while argus replaces it; giving up");
created:
	/* Our umask may have taken bits away, never added any; but a
	 * directory's default ACL may have: state the mode exactly. */
	if (fchmod(fd, 0600)) {
		rc = -errno;
		close(fd);
		unlink(path);
		return argus_error__set(err, path, rc, 0, "cannot chmod: %s", strerror(-rc));
	}
opened:
	return fd;
}

/* One directory on the way: root's, and only root may change its entries
 * (or sticky: others cannot move what is not theirs). */
static int check_dir(const char *path, bool last, struct argus_error *err)
{
	struct stat st;

	if (lstat(path, &st))
		return argus_error__set(err, path, -errno, 0, "cannot check: %s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return argus_error__set(err, path, -ENOTDIR, 0, "is not a directory");
	if (st.st_uid != 0)
		return argus_error__set(err, path, -EPERM, 0,
					"is owned by uid %u, not root: the collector keeps root's trace"
					" only in directories that only root can change (chown root %s)",
					(unsigned)st.st_uid, path);
	if ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))
		return argus_error__set(err, path, -EPERM, 0,
					"is writable by group or others (mode %04o): the collector keeps"
					" root's trace only in directories that only root can change"
					" (chmod go-w %s)",
					(unsigned)(st.st_mode & 07777), path);
	return 0;
}

int argus_dir__check_private(const char *dir, char *real, size_t real_len,
			     struct argus_error *err)
{
	char buf[PATH_MAX];
	int rc;

	if (!dir || !real || !real_len)
		return argus_error__set(err, dir, -EINVAL, 0, "bad arguments");
	if (!realpath(dir, buf))
		return argus_error__set(err, dir, -errno, 0, "cannot resolve: %s", strerror(errno));
	if (strlen(buf) >= real_len)
		return argus_error__set(err, dir, -ENAMETOOLONG, 0, "path too long");
	strcpy(real, buf);
	/* from the directory itself up to "/" */
	for (bool last = true;; last = false) {
		char *slash;

		rc = check_dir(buf[0] ? buf : "/", last, err);
		if (rc || !buf[0])
			return rc;
		slash = strrchr(buf, '/');
		if (!slash)
			return 0;
		*slash = 0;
	}
}

/* Does st pass: a regular file, and the one wanted? */
static int untrusted_ok(const struct stat *st, const struct stat *want)
{
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if (want && (st->st_dev != want->st_dev || st->st_ino != want->st_ino))
		return -ESTALE;
	return 0;
}

int argus_open_untrusted(int dirfd, const char *path, const struct stat *want,
			 struct stat *out)
{
	struct stat st, st2;
	char self[64];
	int pfd, fd, rc;

	if (!path)
		return -EINVAL;
	/* First an O_PATH handle: opening a device can act (a tape rewinds,
	 * a watchdog arms) and a FIFO or tty must not be opened at all, so
	 * the file is looked at before it is opened for reading.  Then the
	 * very inode looked at is opened, through /proc/self/fd (no second
	 * path walk that could be raced). */
	pfd = openat(dirfd, path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st)) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	if ((rc = untrusted_ok(&st, want))) {
		close(pfd);
		return rc;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	close(pfd);
	if (fd < 0)
		return rc;
	if (fstat(fd, &st2)) {
		rc = -errno;
		goto fail;
	}
	if ((rc = untrusted_ok(&st2, &st)))
		goto fail;
	/* a regular file's reads never block; clear it so that libelf and
	 * libdw see a plain fd */
	if (fcntl(fd, F_SETFL, 0)) {
		rc = -errno;
		goto fail;
	}
	if (out)
		*out = st;
	return fd;
fail:
	close(fd);
	return rc;
}

int argus_open_mapping(int pid, uint64_t start, uint64_t end, uint64_t dev, uint64_t ino,
		       const char *path, struct stat *st)
{
	struct stat want = { 0 };
	char p[PATH_MAX + 64];
	int fd;

	if (!path || path[0] != '/' || !ino)
		return -ENOENT;
	want.st_dev = (dev_t)dev;
	want.st_ino = (ino_t)ino;
	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = argus_open_untrusted(AT_FDCWD, p, &want, st);
	if (fd != -EPERM && fd != -EACCES)
		return fd;
	if ((size_t)snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path) >= sizeof(p))
		return -ENAMETOOLONG;
	return argus_open_untrusted(AT_FDCWD, p, &want, st);
}
