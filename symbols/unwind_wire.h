/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_wire.h - the messages between argusd and its unwind helper
 * (unwind_helper.h), over a SOCK_STREAM unix socketpair.
 *
 * Every message is a struct uwp_hdr followed by hdr.len payload bytes,
 * host byte order (both ends are one binary on one machine).  Every
 * message gets exactly one answer before the next is sent, so a reader
 * never finds two messages in the socket (the FILES batches before the
 * last are answered UWP_MORE).  A FILES
 * message carries its fds as SCM_RIGHTS on its first byte, and is sent
 * with at most UWP_FDS_MAX fds so that its whole header fits one skb.
 *
 *   client -> helper                        helper -> client
 *   UWP_UNWIND  uwp_unwind + copy           UWP_FRAMES  uwp_frames + ips[n]
 *                                                        + uwp_read[nreads]
 *                                           UWP_NEED_LAYOUT  (empty)
 *   UWP_LAYOUT  uwp_layout + uwp_map[n]     UWP_NEED_FILES  uint32 idx[n]
 *               + paths (NUL-terminated)
 *   UWP_FILES   uwp_files + uint32 idx[n]   UWP_LAYOUT_OK  (after the last)
 *               + n fds                     UWP_MORE (before the last)
 *
 * and the symbolizer's (root's CLI, symbolize.c in sandbox mode):
 *
 *   UWP_SYM_FILE  uwp_sym_file + name + fds UWP_SYM_OK  int32 rc
 *   UWP_SYM_LOOKUP  uwp_sym_lookup          UWP_SYM_RESULT  uwp_sym_result
 *
 * Each answer starts with struct uwp_counters: the helper's guard
 * counters (elf_guard.h) since it started, which argusd adds to its own.
 */
#ifndef ARGUS_UNWIND_WIRE_H
#define ARGUS_UNWIND_WIRE_H

#include <stdint.h>

enum uwp_type {
	UWP_UNWIND = 1,
	UWP_LAYOUT,
	UWP_FILES,
	UWP_SYM_FILE,
	UWP_SYM_LOOKUP,
	UWP_FRAMES = 0x101,
	UWP_NEED_LAYOUT,
	UWP_NEED_FILES,
	UWP_LAYOUT_OK,
	UWP_MORE,               /* a FILES batch that was not the last: send on */
	UWP_SYM_OK,
	UWP_SYM_RESULT,
};

#define UWP_MSG_MAX (2u << 20)      /* a LAYOUT: <= 2048 maps + 256 KiB paths */
#define UWP_FDS_MAX 64              /* fds in one FILES message */
#define UWP_FRAMES_MAX 64
#define UWP_READS_MAX 128           /* = UW_MEMO_READS */
#define UWP_COPY_MAX (16u << 10)

struct uwp_hdr {
	uint32_t type;
	uint32_t len;
};

struct uwp_counters {
	uint64_t over_budget;       /* ARGUS_GUARD_OVER_BUDGET */
	uint64_t unwind_cut;        /* ARGUS_GUARD_UNWIND_CUT */
};

struct uwp_unwind {
	uint64_t layout;            /* the client's id of this maps layout */
	uint64_t ip, sp, bp;
	uint32_t pid;
	uint32_t max;               /* frames wanted, <= UWP_FRAMES_MAX */
	uint32_t copy_len;          /* bytes of stack copy that follow */
	uint32_t flags;             /* UWP_F_* */
};

/* a chunk was cut since the last request: close cached files that were
 * deleted (argus_unwinder__drop_deleted()) */
#define UWP_F_CUT 0x1

struct uwp_layout {
	uint64_t layout;
	uint32_t pid;
	uint32_t nmaps;             /* <= ARGUS_PROC_MAPS_MAX */
};

struct uwp_map {
	uint64_t start, end, pgoff, dev, inode;
	uint32_t flags;
	uint32_t path_len;          /* bytes of its path, NUL excluded */
};

struct uwp_files {
	uint32_t last;              /* the helper builds the session now */
	uint32_t n;                 /* <= UWP_FDS_MAX */
};

struct uwp_frames {
	uint32_t n;                 /* 1..UWP_FRAMES_MAX ips follow */
	uint32_t nreads;            /* uwp_read entries after them; 0 and
				       !memo: not memoizable */
	uint32_t memo;              /* the reads are valid for the memo */
	uint32_t pad;
};

struct uwp_read {
	uint32_t off;               /* in the stack copy */
	uint32_t pad;
	uint64_t val;
};

/*
 * SYM_FILE: the file the client calls id, as 1 fd (the ELF) or 2 (the ELF
 * and its separate debug info), then its module name (NUL-ended, at most
 * UWP_SYM_NAME_MAX bytes with the NUL).  The helper answers SYM_OK with 0
 * or -ENOENT (not an ELF it will read).  Ids are the client's; a helper
 * that does not know one (a restarted helper) answers SYM_RESULT with
 * rc -ESRCH, and the client sends the file again.
 */
#define UWP_SYM_NAME_MAX 128
#define UWP_SYM_FILES_MAX 512       /* files one helper holds open */

struct uwp_sym_file {
	uint32_t id;                /* < UWP_SYM_FILES_MAX */
	uint32_t nfds;              /* 1 or 2 */
};

struct uwp_sym_lookup {
	uint32_t id;
	uint32_t pad;
	uint64_t off;               /* file offset of the address */
};

/* func and file NUL-terminated within their arrays (the client checks) */
struct uwp_sym_result {
	int32_t rc;                 /* 0, -ENOENT, -ESRCH (unknown id) */
	uint32_t line;
	uint64_t func_off;
	uint64_t module_off;        /* ELF vaddr, or the offset when unmapped */
	char func[256];             /* = ARGUS_SYM_FUNC_MAX */
	char file[512];             /* = ARGUS_SYM_FILE_MAX */
};

#endif /* ARGUS_UNWIND_WIRE_H */
