/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.h - DWARF (CFI) unwinding of a user stack captured by BPF.
 *
 * BPF's own user stack (bpf_get_stack) follows frame pointers, which most
 * distro code is built without.  So each stack record also carries the
 * user registers ip/sp/bp and a copy of the top of the user stack
 * (struct ae_ustack).  This file replays the unwind offline, like
 * `perf --call-graph dwarf`: libdwfl reads the .eh_frame/.debug_frame CFI
 * of the mapped files and asks us for stack words, which we serve from the
 * copy only.  Unwinding stops at the first word outside the copy.
 *
 * Output: ips[0] is ip itself; ips[i > 0] are return addresses, so to
 * name the caller look up ips[i] - 1 (the call instruction), not ips[i].
 *
 * A struct argus_unwinder caches up to a few Dwfl sessions (parsed CFI),
 * keyed by the exact content of the maps array, so the many samples of
 * one process (or of forks with the same layout) share one; and, across
 * processes, the ELF files themselves by (dev, inode), so a new process
 * running the same binaries (a build's hundred compilers) opens nothing:
 * its session reports cached files as lazy modules.  And an unwind whose
 * registers, session and stack words read are those of an earlier one is
 * answered from unwind_memo.h (a thread blocking at the same place again).  An unwinder is not thread-safe; argus_unwind()
 * uses one shared unwinder behind a mutex.
 *
 * Only x86_64 64-bit ELF files are reported; others are skipped.
 * Conventions (libbpf style): 0 / -errno, free accepts NULL, never prints.
 */
#ifndef ARGUS_UNWIND_H
#define ARGUS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc_maps.h"

struct argus_unwinder;

/*
 * Dwfl sessions (maps layouts) an unwinder keeps, least recently used
 * out; the unwind helper keeps as many layouts, its client as many.
 * Every process has a layout of its own (ASLR), so this is how many
 * processes may block in turn before each stack costs a session rebuilt
 * (libdwfl's modules reported again, the CFI read again, the memo's
 * entries of the old session lost): at 8, a machine where more processes
 * blocked at once (a build, a test suite) spent most of the collector's
 * CPU rebuilding them (bench/unwind_procs.sh).  A session costs little
 * while idle: its modules' CFI is read lazily, the ELF files are shared.
 */
#define ARGUS_UNWIND_SLOTS 64

/* NULL with errno set on failure. */
struct argus_unwinder *argus_unwinder__new(void);

/*
 * How an unwinder gets the file behind a mapping.  The default opens it
 * itself (argus_proc_map__open(pid, m)); the unwind helper
 * (unwind_helper.h), which may not open anything, hands out the fds
 * argusd sent it.  open_file returns an fd the unwinder then owns, or
 * -errno.  no_memo: do not memoize (the helper's client memoizes, so that
 * a memo hit costs no round trip).  no_debuginfo: never look for a
 * separate debug file (the helper may not open /usr/lib/debug: its
 * files without .eh_frame unwind as far as their own CFI goes).
 */
struct argus_unwinder_opts {
	size_t sz;              /* sizeof(struct argus_unwinder_opts) */
	int (*open_file)(void *ctx, uint32_t pid, const struct argus_proc_map *m);
	void *open_ctx;
	bool no_memo;
	bool no_debuginfo;
};
struct argus_unwinder *argus_unwinder__new_opts(const struct argus_unwinder_opts *opts);
void argus_unwinder__free(struct argus_unwinder *u);

/*
 * Unwind one sample of process pid whose executable mappings are maps
 * (sorted, from argus_proc_maps__read(); pid is used only to open the
 * mapped files through /proc/PID/map_files or /proc/PID/root).
 * ip/sp/bp: user registers at the sample; copy: copy_len bytes of user
 * stack starting at address sp (copy may be NULL when copy_len is 0).
 * Writes at most max frames to ips[].
 *
 * Returns the number of frames, >= 1 (ips[0] = ip, even if ip is in no
 * mapping or nothing could be unwound), or -EINVAL (ips NULL, max < 1),
 * -ENOMEM.  Garbage registers or stack bytes give short or wrong stacks,
 * never a crash: every stack read is bounds-checked against the copy, and
 * frames must move up the stack.
 */
int argus_unwinder__unwind(struct argus_unwinder *u, uint32_t pid,
			   const struct argus_proc_map *maps, size_t nmaps,
			   uint64_t ip, uint64_t sp, uint64_t bp,
			   const uint8_t *copy, size_t copy_len,
			   uint64_t *ips, int max);

/*
 * The mappings of maps[0..nmaps) whose file the unwinder has not cached
 * (by (dev, inode), "[vdso]" apart): their indexes go to idx[] (at most
 * max), one per file.  A session for these maps would open them.
 * Returns how many; 0 when a session for this exact layout exists.
 */
size_t argus_unwinder__missing(struct argus_unwinder *u,
			       const struct argus_proc_map *maps, size_t nmaps,
			       uint32_t *idx, size_t max);

/*
 * Build (or touch) the session for these maps now, opening what it
 * lacks through opts.open_file.  0 or -ENOMEM.
 */
int argus_unwinder__prepare(struct argus_unwinder *u, uint32_t pid,
			    const struct argus_proc_map *maps, size_t nmaps);

/*
 * After an unwind that ran libdwfl: the stack words its frames depend on
 * (unwind_memo.h's read log, already reduced), so that a memo outside the
 * unwinder can remember it.  false when the last call was not memoizable
 * (answered from the memo, cut by the time budget, or it read too much).
 */
struct uw_read_log;
bool argus_unwinder__last_reads(const struct argus_unwinder *u,
				const struct uw_read_log **log);

/* What the caches saved: Dwfl sessions built (one per new maps layout)
 * and files opened (once per (dev, inode) while it stays cached). */
struct argus_unwinder_stats {
	uint64_t sessions;
	uint64_t files_opened;
	uint64_t unwinds;       /* run through libdwfl */
	uint64_t memo_hits;     /* answered by unwind_memo.h instead */
};
void argus_unwinder__stats(const struct argus_unwinder *u,
			   struct argus_unwinder_stats *st);

/* Closes the cached files that were deleted (a package upgrade replaced a
 * library) and that no cached session reports any more, so that an
 * always-on collector does not keep their disk space allocated until
 * their cache slot happens to be reused.  Returns how many it closed. */
int argus_unwinder__drop_deleted(struct argus_unwinder *u);

/* Same, with a process-wide shared unwinder; safe from any thread. */
int argus_unwind(uint32_t pid, const struct argus_proc_map *maps,
		 size_t nmaps, uint64_t ip, uint64_t sp, uint64_t bp,
		 const uint8_t *copy, size_t copy_len, uint64_t *ips, int max);

#endif /* ARGUS_UNWIND_H */
