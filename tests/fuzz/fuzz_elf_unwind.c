/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_elf_unwind.c - libFuzzer target: the code that runs on a file any
 * user controls, i.e. what the unwind helper (symbols/unwind_helper.h)
 * runs, and root's symbolizer.
 *
 * The input is the file's bytes.  It goes into a memfd, then through:
 *   1. argus_elf_guard__check() (both limits) and argus_elf__build_id(),
 *      argusd's own bounded parsers;
 *   2. an argus_unwinder whose open_file hands out that memfd, as the
 *      helper's does with the fds argusd sent: a session over one mapping
 *      of the file (at a fixed base, the whole file executable), and an
 *      unwind from its entry point over a stack copy taken from the
 *      input's last bytes (libelf, libdwfl's CFI lookup);
 *   3. argus_symbolizer__lookup() of the same address through
 *      /proc/self/fd/N (symbol tables, DWARF lines): the in-process
 *      symbolizer, which the lldb plugin uses;
 *   4. the helper's side of root's CLI symbolizer (symbolize.h, sandbox
 *      mode): argus_symbolizer__add_fd() with the memfd as the ELF and as
 *      its own separate debug file, then __query_id() at the same two
 *      file offsets.
 * elfutils itself is not instrumented (the distro's library): its
 * crashes and hangs are still caught (ASan's SEGV handler, -timeout),
 * but coverage only steers through our side.
 *
 * Seeds: small real ELF files built with the tree (busy_nofp, argus-gen);
 * see tests/fuzz/CMakeLists.txt.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_guard.h"
#include "proc_maps.h"
#include "symbolize.h"
#include "unwind.h"
#include "unwind_wire.h"

#define BASE 0x10000000ull
#define COPY_MAX 512

static int memfd = -1;

static int open_memfd(void *ctx, uint32_t pid, const struct argus_proc_map *m)
{
	(void)ctx;
	(void)pid;
	(void)m;
	return dup(memfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argus_unwinder_opts uo = { .sz = sizeof(uo), .open_file = open_memfd,
					  .no_memo = true, .no_debuginfo = true };
	struct argus_elf_limits lim = { ARGUS_ELF_UNWIND_SECTION_MAX };
	static uint64_t inode;
	uint8_t id[ARGUS_PROC_MAP_BUILD_ID_MAX], copy[COPY_MAX];
	struct argus_proc_map map;
	struct argus_unwinder *u;
	struct argus_symbolizer *s;
	struct argus_sym sym;
	uint64_t ips[32], entry = 0, len, copy_len;
	char path[64];

	if (size < 64 || size > (1u << 20))
		return 0;
	memfd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (memfd < 0 || write(memfd, data, size) != (ssize_t)size)
		goto out;
	argus_elf_guard__check(memfd, &lim);
	lim.section_max = ARGUS_ELF_SYM_SECTION_MAX;
	argus_elf_guard__check(memfd, &lim);
	argus_elf__build_id(memfd, id, sizeof(id));

	/* the whole file mapped executable at BASE, as one text mapping */
	len = (size + 4095) & ~4095ull;
	memcpy(&entry, data + 24, sizeof(entry));       /* e_entry */
	entry = BASE + entry % len;
	map = (struct argus_proc_map){ .start = BASE, .end = BASE + len,
				       .pgoff = 0, .dev = 1, .inode = ++inode,
				       .path = (char *)"/fuzz/elf" };
	copy_len = size < COPY_MAX ? size : COPY_MAX;
	memcpy(copy, data + size - copy_len, copy_len);
	u = argus_unwinder__new_opts(&uo);
	if (u) {
		argus_unwinder__unwind(u, 1, &map, 1, entry, 0x7ffd0000ull, 0,
				       copy, copy_len, ips, 32);
		/* and from the middle of the file, where code usually is */
		argus_unwinder__unwind(u, 1, &map, 1, BASE + len / 2, 0x7ffd0000ull,
				       0x7ffd0100ull, copy, copy_len, ips, 32);
		argus_unwinder__free(u);
	}

	s = argus_symbolizer__new();
	if (s) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
		argus_symbolizer__lookup(s, path, BASE, 0, entry, &sym);
		argus_symbolizer__lookup(s, path, BASE, 0, BASE + len / 2, &sym);
		argus_symbolizer__free(s);
	}
	s = argus_symbolizer__new_by_fd();
	if (s) {
		struct uwp_sym_result r;

		argus_symbolizer__add_fd(s, 7, "elf", dup(memfd), dup(memfd));
		argus_symbolizer__query_id(s, 7, entry - BASE, &r);
		argus_symbolizer__query_id(s, 7, len / 2, &r);
		argus_symbolizer__free(s);
	}
out:
	if (memfd >= 0)
		close(memfd);
	memfd = -1;
	return 0;
}
