/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * safe_file.h - how root's processes (argusd, `argus record/save/export`,
 * the CLI's symbolizer) touch files that other users can influence.
 *
 * Two directions, one rule each:
 *
 *   writing  A file root writes a trace or an export into is created by
 *            root, O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600.  An existing file
 *            is reused only when argus could have made it: a regular file
 *            owned by us, with one link and no group/other permission
 *            bits (nobody else can hold it open, nobody else can read it
 *            afterwards).  Anything else (a symlink, a FIFO, a file a user
 *            created beforehand to read root's trace through) is refused
 *            unless ARGUS_OUT_FORCE, and then it is unlinked (never
 *            followed) and a new file created in its place.
 *
 *   reading  A file a user controls (a mapped library, a program) is opened
 *            O_RDONLY|O_NOCTTY|O_NONBLOCK|O_CLOEXEC and fstat'ed: only a
 *            regular file is accepted, and, when the caller knows it, only
 *            the (dev, inode) it expects.  So a FIFO cannot block the
 *            opener, a tty cannot become its controlling terminal, and a
 *            path swapped since it was recorded names nothing we read.
 *
 * Conventions (libbpf style): 0 / fd / -errno, never prints; errors that
 * reach a user carry one line in struct argus_error (trace_format.h).
 */
#ifndef ARGUS_SAFE_FILE_H
#define ARGUS_SAFE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct argus_error;

/* argus_out__*() flags */
#define ARGUS_OUT_FORCE 0x1     /* replace what argus did not create (never
				   through a symlink: it is unlinked) */

/*
 * Open path for writing a new output file, read-write, O_CLOEXEC, mode
 * 0600, empty: created with O_EXCL|O_NOFOLLOW, or an existing file of ours
 * (see above) truncated.  Returns the fd, or -errno with err set:
 * -EEXIST when path exists and is not ours (and no ARGUS_OUT_FORCE; the
 * message ends in "remove it", a CLI that offers --force says so), -EISDIR,
 * or what open() said.
 */
int argus_out__open(const char *path, unsigned flags, struct argus_error *err);

/*
 * For writers that fill a temp file beside path and rename() it over
 * (rename replaces a symlink, it never follows one): 0 when path is
 * missing or may be replaced under these flags, else -EEXIST / -EISDIR
 * with err set as __open() does.
 */
int argus_out__check(const char *path, unsigned flags, struct argus_error *err);

/*
 * dir must be a directory that only root can change: owned by root, not
 * group/other-writable, and so must every directory above it be (or
 * sticky, like /tmp, where others cannot rename what is not theirs).
 * Writes its canonical path (symlinks resolved, so what is checked is what
 * is used later) to real[real_len].  0 or -errno with err naming the
 * directory and what to fix.
 */
int argus_dir__check_private(const char *dir, char *real, size_t real_len,
			     struct argus_error *err);

/*
 * Open a file another user controls, read-only, without blocking and
 * without acquiring a controlling terminal.  want: if not NULL, st_dev and
 * st_ino the file must have (what /proc/PID/maps recorded), else -ESTALE.
 * -EINVAL when it is not a regular file (a FIFO, a tty, a directory).
 * dirfd/path as openat() (AT_FDCWD for a plain path).  Returns the fd
 * (O_NONBLOCK cleared: reads of a regular file never block anyway) or
 * -errno.  If st is not NULL it receives the fstat of the opened file.
 */
int argus_open_untrusted(int dirfd, const char *path, const struct stat *want,
			 struct stat *st);

/*
 * The file a process maps at [start, end), as its /proc/PID/maps line
 * gave it (dev: makedev(major, minor), ino, path), opened with
 * argus_open_untrusted() through /proc/PID/map_files/START-END: the very
 * file the process mapped (deleted or renamed since, or in another mount
 * namespace), never its path text resolved again as a name, which the
 * process controls.  Only when map_files is not ours to read (-EPERM or
 * -EACCES: it needs CAP_SYS_ADMIN) the path in the process's mount
 * namespace, /proc/PID/root/PATH, and then too only the (dev, ino) of the
 * maps line is accepted (-ESTALE otherwise).  -ENOENT for an anonymous
 * mapping (path not absolute, or ino 0).  The fd or -errno; st as above.
 */
int argus_open_mapping(int pid, uint64_t start, uint64_t end, uint64_t dev, uint64_t ino,
		       const char *path, struct stat *st);

#endif /* ARGUS_SAFE_FILE_H */
