/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - offline symbolization: (mapped file, address) -> function,
 * offset, source file:line.
 *
 * Input is what the trace keeps of a mapping (path, start, pgoff), so it
 * works after the process is gone, as long as the file (or its separate
 * debuginfo under /usr/lib/debug, found by build-id) is still on disk.
 * The symbolizer opens each path once and keeps its Dwfl module; a lookup
 * then costs a symbol-table and line-table search, and its answer is kept
 * in a 4,096-entry cache by (file, offset): a dump asks for the same
 * return addresses over and over.
 *
 * Addresses: ip is a virtual address of the traced process.  The file
 * offset is ip - start + pgoff, and the module address (what `addr2line
 * -e FILE` takes) is that offset moved through the ELF's PT_LOAD headers.
 * Return addresses from argus_unwind() (frames after the first) should be
 * looked up as ip - 1 so the call instruction, not the next line, is named.
 *
 * Where the files are parsed (issue 16): the paths are other users', and
 * libelf/libdw are large C parsers.  In sandbox mode the symbolizer opens
 * each file here (argus_open_untrusted(), its build-id and debug file
 * found with bounded preads) and hands the fds to the sandboxed helper
 * process of unwind_helper.h (another uid, seccomp, memory and CPU
 * limits), which parses them and answers each lookup (the cache saves
 * the round trip too).  A file on which the helper crashes or hangs
 * (deadline SYM_HELPER_TIMEOUT_MS) keeps module+offset from then on, the
 * helper being restarted for the next one; after SYM_HELPER_FAILS_MAX
 * such files the run stops asking (module+offset for every frame).  The
 * argus CLI turns the mode on for every symbolizer
 * (argus_symbolizer__set_sandbox(true));
 * libraries and the lldb plugin parse in their own process, since the
 * helper is a fresh exec of /proc/self/exe and needs the argus binary's
 * entry point.
 *
 * Conventions (libbpf style): 0 / -errno, constructors return NULL and set
 * errno, free accepts NULL, never prints.  Not thread-safe.
 */
#ifndef ARGUS_SYMBOLIZE_H
#define ARGUS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct argus_trace;

#define ARGUS_SYM_FUNC_MAX 256
#define ARGUS_SYM_FILE_MAX 512
#define ARGUS_SYM_MODULE_MAX 128

/* Strings are NUL-terminated, truncated to fit; "" means unknown. */
struct argus_sym {
	char func[ARGUS_SYM_FUNC_MAX];  /* symbol name, not demangled */
	uint64_t func_off;              /* address - symbol start, bytes */
	char file[ARGUS_SYM_FILE_MAX];  /* source file as DWARF names it */
	uint32_t line;                  /* 1-based; 0 = no line info */
	uint32_t pad;
	char module[ARGUS_SYM_MODULE_MAX]; /* basename of the mapped file */
	uint64_t module_off;            /* module address (addr2line -e) when
					   the file was read, else file offset */
};

struct argus_symbolizer;

/* In sandbox mode when argus_symbolizer__set_sandbox(true) was called. */
struct argus_symbolizer *argus_symbolizer__new(void);
/* In sandbox mode or not, whatever the default.  NULL with errno when the
 * helper cannot be started. */
struct argus_symbolizer *argus_symbolizer__new_in(bool sandboxed);
void argus_symbolizer__free(struct argus_symbolizer *s);

/* The default of argus_symbolizer__new(): false until set.  Only a
 * program built from the argus binary's objects may set it (see above). */
void argus_symbolizer__set_sandbox(bool on);

struct argus_symbolizer_stats {
	bool sandboxed;
	uint32_t helper_pid;      /* the running helper, 0 = none */
	uint64_t helper_restarts; /* helpers killed after a failure */
	uint64_t remote_lookups;  /* answered by the helper */
	uint64_t cache_hits;      /* answered from the cache */
	uint64_t files_failed;    /* files the helper failed on */
	uint64_t files_refused;   /* over UWP_SYM_FILES_MAX files */
	bool gave_up;             /* the helper failed on SYM_HELPER_FAILS_MAX
				     files: module+offset for the rest */
};
void argus_symbolizer__stats(const struct argus_symbolizer *s,
			     struct argus_symbolizer_stats *st);

/*
 * Symbolize ip of a mapping of path ("[vdso]" = this machine's vDSO)
 * mapped at map_start from file offset map_pgoff.  *out is always filled:
 * at least module and module_off.
 * Returns 0 when a function or a source line was found, -ENOENT when not
 * (file missing or unreadable, ip outside its segments, no symbol), or
 * -EINVAL.
 */
int argus_symbolizer__lookup(struct argus_symbolizer *s, const char *path,
			     uint64_t map_start, uint64_t map_pgoff,
			     uint64_t ip, struct argus_sym *out);

/*
 * Symbolize ip of process pid at time ts of trace t: the mapping comes
 * from argus_trace__map() and its path from argus_trace__string().
 * Returns as __lookup(), -ENOENT also when the trace has no mapping for ip,
 * and -ESTALE when the file on disk no longer has the build-id recorded
 * in the trace (then only module and module_off = file offset are set).
 */
int argus_symbolize_trace_ip(struct argus_symbolizer *s,
			     const struct argus_trace *t, uint32_t pid,
			     uint64_t ts, uint64_t ip, struct argus_sym *out);

/*
 * One line for a frame: "busy_leaf+0x1a (busy_nofp.c:42) [busy_nofp]"
 * (source basename; the parts that are unknown are left out), or
 * "libc.so.6+0x8a3f0" when only the module is known, or "0x7f12..." when
 * not even that.  Returns 0, -ENOSPC if truncated (buf still terminated),
 * -EINVAL.
 */
int argus_sym__format(const struct argus_sym *sym, uint64_t ip, char *buf,
		      size_t len);

/*
 * The helper's side (unwind_helper.c): a symbolizer that takes files as
 * fds by the client's id and never opens anything.  __add_fd takes both
 * fds (dbg_fd -1: none): 0, or -ENOENT when the file is not an ELF it
 * reads (the id then answers -ENOENT).  __query_id fills r (rc -ESRCH for
 * an unknown id).
 */
struct uwp_sym_result;
struct argus_symbolizer *argus_symbolizer__new_by_fd(void);
int argus_symbolizer__add_fd(struct argus_symbolizer *s, uint32_t id,
			     const char *name, int fd, int dbg_fd);
int argus_symbolizer__query_id(struct argus_symbolizer *s, uint32_t id,
			       uint64_t off, struct uwp_sym_result *r);

#endif /* ARGUS_SYMBOLIZE_H */
