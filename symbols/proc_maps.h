/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proc_maps.h - the executable mappings of a live process, from
 * /proc/PID/maps, each with the GNU build-id of the file behind it.
 *
 * The collector reads the maps of a process when it first sees one of its
 * user stacks (and again after exec/mmap churn), records them in the trace
 * (struct argus_map) and hands them to argus_unwind().  Only what a stack
 * can point into is kept: mappings with 'x' permission whose path is a file
 * ("/...") or the "[vdso]".
 *
 * Build-ids are cached process-wide by (dev, inode), so re-reading the maps
 * of many processes sharing libc opens libc once.  The cache is bounded
 * (direct-mapped, a collision evicts) and guarded by a mutex.
 *
 * /proc/PID/maps content is treated as untrusted input: a line longer than
 * ARGUS_PROC_MAPS_LINE_MAX or not in the kernel's format is skipped, and at
 * most ARGUS_PROC_MAPS_READ_MAX bytes are read.  Any process can make its
 * maps huge (16,000 executable mappings of a file with a 4,000-character
 * path made a 64 MiB maps file, and 30 such processes took argusd from
 * 457 MB to 1.46 GB): at most ARGUS_PROC_MAPS_MAX mappings and
 * ARGUS_PROC_MAPS_PATH_BYTES bytes of paths are kept per process; the rest
 * are dropped and counted (ARGUS_GUARD_MAPS_DROPPED, elf_guard.h).
 *
 * Conventions (libbpf style): 0 / -errno, free accepts NULL, never prints.
 */
#ifndef ARGUS_PROC_MAPS_H
#define ARGUS_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARGUS_PROC_MAPS_LINE_MAX 8192
#define ARGUS_PROC_MAPS_READ_MAX (4u << 20)   /* a desktop's largest: ~0.3 MiB */
#define ARGUS_PROC_MAPS_MAX 2048                /* executable mappings kept */
#define ARGUS_PROC_MAPS_PATH_BYTES (256u << 10) /* bytes of their paths */
#define ARGUS_PROC_MAP_BUILD_ID_MAX 20   /* longer ids are truncated */

/* argus_proc_map.flags */
#define ARGUS_PROC_MAP_VDSO 0x1     /* path is "[vdso]", no file behind it */
#define ARGUS_PROC_MAP_DELETED 0x2  /* the kernel said " (deleted)"; the
				       suffix is stripped from path */

struct argus_proc_map {
	uint64_t start, end;    /* virtual address range [start, end) */
	uint64_t pgoff;         /* file offset mapped at start, bytes */
	uint64_t dev;           /* makedev(major, minor) as shown in maps */
	uint64_t inode;         /* 0 for [vdso] */
	uint32_t flags;         /* ARGUS_PROC_MAP_* */
	uint8_t build_id_len;   /* 0 = none found (file unreadable, no note) */
	uint8_t build_id[ARGUS_PROC_MAP_BUILD_ID_MAX];
	char *path;             /* as in the target's mount namespace; never
				   NULL; owned by the array */
};

/*
 * Read the executable mappings of pid, in address order.  *out is a
 * malloc'd array of *n entries (possibly 0 entries and NULL) to be released
 * with argus_proc_maps__free().  Files are opened through
 * /proc/PID/map_files or /proc/PID/root when possible, so processes in
 * other mount namespaces get the right build-id.
 * Returns 0, -ENOENT/-ESRCH if the process is gone, -EACCES, -ENOMEM.
 */
int argus_proc_maps__read(uint32_t pid, struct argus_proc_map **out,
			  size_t *n);
/* Same; *capped (may be NULL) says whether the caps above cut the list. */
int argus_proc_maps__read_capped(uint32_t pid, struct argus_proc_map **out,
				 size_t *n, bool *capped);

/*
 * Same, over maps text already in memory (the fuzz target and tests use
 * this).  pid is used only to open files for build-ids; 0 opens the paths
 * as they are.
 */
int argus_proc_maps__parse(uint32_t pid, const char *text, size_t len,
			   struct argus_proc_map **out, size_t *n);

void argus_proc_maps__free(struct argus_proc_map *maps, size_t n);

/* A deep copy of maps[0..n) into *out (NULL when n is 0); 0 or -ENOMEM. */
int argus_proc_maps__dup(const struct argus_proc_map *maps, size_t n,
			 struct argus_proc_map **out);

/*
 * A maps layout as a cache key (the unwinder's sessions, the helper
 * client's layouts): what makes two layouts unwind alike -- addresses,
 * offset, the file as (dev, inode), flags -- and not the paths, so a
 * rename does not matter.  argus_map_keys__new: calloc'd, NULL on ENOMEM.
 */
struct argus_map_key {
	uint64_t start, end, pgoff, dev, inode;
	uint64_t flags;
};

struct argus_map_key *argus_map_keys__new(const struct argus_proc_map *maps, size_t n);

/* keys[0..nkeys) were made from this layout.  Field by field, with no
 * allocation: this runs for every stack unwound. */
static inline bool argus_map_keys__match(const struct argus_map_key *keys, size_t nkeys,
					 const struct argus_proc_map *maps, size_t n)
{
	if (nkeys != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct argus_map_key *k = &keys[i];
		const struct argus_proc_map *m = &maps[i];

		if (k->start != m->start || k->end != m->end || k->pgoff != m->pgoff ||
		    k->dev != m->dev || k->inode != m->inode || k->flags != m->flags)
			return false;
	}
	return true;
}

/*
 * The mapping containing ip, or NULL.  maps must be sorted by start (as
 * returned by __read()).
 */
const struct argus_proc_map *
argus_proc_maps__find(const struct argus_proc_map *maps, size_t n,
		      uint64_t ip);

/*
 * Open the file behind mapping m of pid (read-only, O_CLOEXEC): through
 * /proc/PID/map_files/START-END (the exact file, even deleted; needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else PATH inside /proc/PID/root
 * (the process's mount namespace), else PATH as we see it, accepted only
 * if it is the same (dev, inode).  pid 0 opens PATH as it is.  "[vdso]"
 * gives __vdso_fd().  Every open is argus_open_untrusted() (safe_file.h):
 * never blocking, never a controlling terminal, a regular file only.
 * Returns the fd or -errno (-ESTALE: PATH is now a different file,
 * -EINVAL: not a regular file; both counted as ARGUS_GUARD_FILE_SKIPPED).
 */
int argus_proc_map__open(uint32_t pid, const struct argus_proc_map *m);

/*
 * A new fd (caller closes) on a memfd holding this process's vDSO image.
 * The vDSO is the kernel's, so on the same kernel it is the image every
 * 64-bit process maps; the unwinder and the symbolizer use it for
 * "[vdso]" mappings.  -ENOENT if there is no vDSO.
 */
int argus_proc_maps__vdso_fd(void);

/*
 * File offset -> virtual address in the ELF's own address space (what
 * addr2line takes), through the PT_LOAD segment mapping that offset;
 * executable segments win when page-aligned ranges overlap.  Used with
 * off = ip - start + pgoff.  -ENOENT if no segment maps off.
 */
struct Elf;     /* libelf's Elf */
int argus_elf__offset_to_vaddr(struct Elf *elf, uint64_t off,
			       uint64_t *vaddr);

#endif /* ARGUS_PROC_MAPS_H */
