/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf_guard.h - what root's processes may spend on an ELF file another
 * user controls, and the counters of what they refused.
 *
 * argusd unwinds and reads build-ids of every process's mapped files, and
 * root's CLI symbolizes them; any user can put any bytes there.  libelf
 * with ELF_C_READ never maps the file (a truncation under an mmap was a
 * SIGBUS), but it still reads whole sections and notes into memory on
 * demand: a sparse file whose PT_NOTE claims 512 MiB cost seconds and
 * 512 MiB.  So before libelf sees a file, argus_elf_guard__check() reads
 * its headers with bounded preads and refuses a file whose segments or
 * sections lie past its end, or whose notes or sections exceed the
 * limits.  What libelf and libdw may then read is bounded by those limits.
 *
 * Build-ids are read by argus_elf__build_id() with preads alone (at most
 * ARGUS_ELF_NOTE_MAX bytes of notes), never through libelf.
 *
 * Counters are process-wide and atomic; argusd shows them in `argus
 * status` (skipped files, cut unwinds, dropped maps).
 */
#ifndef ARGUS_ELF_GUARD_H
#define ARGUS_ELF_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define ARGUS_ELF_PHNUM_MAX 256          /* program headers */
#define ARGUS_ELF_SHNUM_MAX 16384        /* section headers (1 MiB) */
#define ARGUS_ELF_NOTE_MAX (64u << 10)   /* bytes of notes read for a build-id */
#define ARGUS_ELF_NOTE_SEG_MAX (1u << 20) /* a PT_NOTE / SHT_NOTE larger: refused */

struct argus_elf_limits {
	uint64_t section_max;   /* largest section libelf may be asked to read */
};
/* The unwinder reads .eh_frame(_hdr) and .debug_frame only. */
#define ARGUS_ELF_UNWIND_SECTION_MAX (64ull << 20)
/* The symbolizer reads symbol tables and the file's own DWARF. */
#define ARGUS_ELF_SYM_SECTION_MAX (512ull << 20)

/*
 * fd: a regular file (argus_open_untrusted()).  0 when it is a 64-bit
 * x86_64 ELF (ET_EXEC or ET_DYN) whose headers are in bounds and within
 * lim; -ENOEXEC when it is not such an ELF or its headers point past its
 * end (truncated, or lying); -EFBIG when a note, a section or a header
 * table exceeds the limits (counted as ARGUS_GUARD_OVER_BUDGET).
 */
int argus_elf_guard__check(int fd, const struct argus_elf_limits *lim);

/*
 * The GNU build-id of the ELF in fd, from its PT_NOTE segments, with
 * bounded preads (no libelf, no mmap): its length (copied, truncated to
 * max), 0 when it has none or is no ELF, -EFBIG when its notes exceed
 * ARGUS_ELF_NOTE_MAX (counted).
 */
int argus_elf__build_id(int fd, uint8_t *id, size_t max);

/*
 * The separate debug file of the ELF whose build-id is bid[n] (2..40
 * bytes): /usr/lib/debug/.build-id/NN/REST.debug, opened with
 * argus_open_untrusted() and checked by argus_elf_guard__check().  The fd
 * or -errno; *name (if name) gets a malloc'd copy of the path.
 */
int argus_debuginfo_open(const uint8_t *bid, size_t n, char **name);

/*
 * A libdwfl find_debuginfo callback that looks only where root put debug
 * files: /usr/lib/debug/.build-id/NN/REST.debug, by the module's build-id
 * (hex, so no path can be smuggled in), opened with argus_open_untrusted()
 * and checked by argus_elf_guard__check().  libdwfl's standard one also
 * follows .gnu_debuglink names, which come from the file itself, and
 * opens without O_NONBLOCK/O_NOCTTY.
 */
struct Dwfl_Module;
int argus_find_debuginfo(struct Dwfl_Module *mod, void **userdata,
			 const char *modname, uint64_t base,
			 const char *file_name, const char *debuglink_file,
			 uint32_t debuglink_crc, char **debuginfo_file_name);

/* What was refused, process-wide. */
enum argus_guard_counter {
	ARGUS_GUARD_FILE_SKIPPED,   /* not a regular file, or not the file the
				       maps named (swapped since) */
	ARGUS_GUARD_OVER_BUDGET,    /* an ELF over the byte limits */
	ARGUS_GUARD_UNWIND_CUT,     /* an unwind stopped by its time budget */
	ARGUS_GUARD_MAPS_DROPPED,   /* mappings not kept: per-process or global
				       caps on maps and path bytes */
	ARGUS_GUARD_NCOUNTERS
};
void argus_guard__count(enum argus_guard_counter c, uint64_t n);
uint64_t argus_guard__get(enum argus_guard_counter c);

#endif /* ARGUS_ELF_GUARD_H */
