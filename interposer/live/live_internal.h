/* SPDX-License-Identifier: BSD-2-Clause */
/* live_internal.h - what live_elf.c lends the other files of
 * interposer/live (not part of argus_live.h's API). */
#ifndef ARGUS_LIVE_INTERNAL_H
#define ARGUS_LIVE_INTERNAL_H

#include "argus_live.h"

/* The ELF file behind a mapping: /proc/PID/map_files/..., else its path.
 * An fd or -1. */
int live_open_mapped(pid_t pid, const struct argus_live_map *m);
/* The load bias of path (its mapping at offset 0).  0, -ENOENT not
 * mapped, -ENOEXEC not an ELF with a PT_LOAD. */
int live_bias_of(pid_t pid, const struct argus_live_map *maps, size_t n, const char *path,
		 uint64_t *bias);

#endif
