/* SPDX-License-Identifier: BSD-2-Clause */
/* live_internal.h - what live_elf.c lends the other files of
 * interposer/live (not part of argus_live.h's API). */
#ifndef ARGUS_LIVE_INTERNAL_H
#define ARGUS_LIVE_INTERNAL_H

#include <libelf.h>
#include <sys/stat.h>

#include "argus_live.h"

/* The file behind a mapping, opened read-only through an fd we checked:
 * argus_open_mapping() (trace/safe_file.h): /proc/PID/map_files/START-END,
 * the very file the process mapped, even deleted or renamed since, a
 * regular file (a FIFO, a tty or a device is not even opened) with the
 * (dev, inode) of the maps line; never the path text as a name of its own.
 * If st: the opened file's fstat.  An fd or -errno (-ENOENT anonymous). */
int live_open_mapped(pid_t pid, const struct argus_live_map *m, struct stat *st);
/* libelf on fd (ELF_C_READ: read, never mapped) after
 * argus_elf_guard__check() with the symbolizer's limits: NULL with *err
 * -EFBIG (over the limits), -ENOEXEC (no x86-64 ELF, or headers past the
 * end) or -ENOMEM. */
Elf *live_elf_begin(int fd, int *err);
/* The offset-0 mapping of the file that m maps (same path, dev and
 * inode), or NULL. */
const struct argus_live_map *live_file_head(const struct argus_live_map *maps, size_t n,
					    const struct argus_live_map *m);
/* The load bias of the file that m maps (its mapping at offset 0).  0,
 * -ENOENT not mapped at offset 0, -ENOEXEC not an ELF with a PT_LOAD,
 * -EFBIG over the guard's limits. */
int live_bias_of(pid_t pid, const struct argus_live_map *maps, size_t n,
		 const struct argus_live_map *m, uint64_t *bias);

#endif
