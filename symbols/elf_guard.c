/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf_guard.c - see elf_guard.h.
 *
 * Everything here reads with pread into fixed or bounded buffers: the
 * 64-byte ELF header, at most ARGUS_ELF_PHNUM_MAX program headers, at most
 * ARGUS_ELF_SHNUM_MAX section headers, at most ARGUS_ELF_NOTE_MAX bytes of
 * notes.  A file shorter than its headers say fails the check, so a later
 * read by libelf of what passed stays inside the file as it was; if the
 * file shrinks afterwards, libelf's pread comes back short and the read
 * fails, nothing worse (no mapping to fault on).
 */
#include "elf_guard.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_file.h"

static _Atomic uint64_t counters[ARGUS_GUARD_NCOUNTERS];

void argus_guard__count(enum argus_guard_counter c, uint64_t n)
{
	if (c < ARGUS_GUARD_NCOUNTERS)
		atomic_fetch_add_explicit(&counters[c], n, memory_order_relaxed);
}

uint64_t argus_guard__get(enum argus_guard_counter c)
{
	return c < ARGUS_GUARD_NCOUNTERS ?
	       atomic_load_explicit(&counters[c], memory_order_relaxed) : 0;
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ENOEXEC;
		got += (size_t)r;
	}
	return 0;
}

/* [off, off + len) inside a file of size bytes, without overflow. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int read_ehdr(int fd, Elf64_Ehdr *eh, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -ENOEXEC;
	*size = (uint64_t)st.st_size;
	if (pread_full(fd, eh, sizeof(*eh), 0) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64 ||
	    (eh->e_type != ET_DYN && eh->e_type != ET_EXEC))
		return -ENOEXEC;
	return 0;
}

static int over_budget(void)
{
	argus_guard__count(ARGUS_GUARD_OVER_BUDGET, 1);
	return -EFBIG;
}

int argus_elf_guard__check(int fd, const struct argus_elf_limits *lim)
{
	uint64_t size, shnum, smax = lim ? lim->section_max : ARGUS_ELF_UNWIND_SECTION_MAX;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr *sh = NULL;
	int rc = -ENOEXEC;

	if (read_ehdr(fd, &eh, &size))
		return -ENOEXEC;
	if (eh.e_phnum > ARGUS_ELF_PHNUM_MAX)
		return over_budget();
	if (eh.e_phnum && (eh.e_phentsize != sizeof(ph) ||
			   !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(ph), size)))
		return -ENOEXEC;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread_full(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			return -ENOEXEC;
		if (ph.p_type == PT_NOTE && ph.p_filesz > ARGUS_ELF_NOTE_SEG_MAX)
			return over_budget();
		/* a segment past the end: truncated, or lying about its size */
		if ((ph.p_type == PT_LOAD || ph.p_type == PT_NOTE ||
		     ph.p_type == PT_GNU_EH_FRAME || ph.p_type == PT_DYNAMIC) &&
		    !in_file(ph.p_offset, ph.p_filesz, size))
			return -ENOEXEC;
	}
	if (!eh.e_shoff)
		return 0;
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	shnum = eh.e_shnum;
	if (!shnum) {           /* more than 0xff00: the count is in shdr 0 */
		Elf64_Shdr s0;

		if (!in_file(eh.e_shoff, sizeof(s0), size) ||
		    pread_full(fd, &s0, sizeof(s0), eh.e_shoff))
			return -ENOEXEC;
		shnum = s0.sh_size;
	}
	if (shnum > ARGUS_ELF_SHNUM_MAX)
		return over_budget();
	if (!in_file(eh.e_shoff, shnum * sizeof(*sh), size))
		return -ENOEXEC;
	sh = malloc(shnum * sizeof(*sh) + 1);
	if (!sh)
		return -ENOMEM;
	if (pread_full(fd, sh, shnum * sizeof(*sh), eh.e_shoff))
		goto out;
	for (uint64_t i = 0; i < shnum; i++) {
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_type == SHT_NULL)
			continue;
		if (!in_file(sh[i].sh_offset, sh[i].sh_size, size))
			goto out;
		if (sh[i].sh_size > smax ||
		    (sh[i].sh_type == SHT_NOTE && sh[i].sh_size > ARGUS_ELF_NOTE_SEG_MAX)) {
			rc = over_budget();
			goto out;
		}
	}
	rc = 0;
out:
	free(sh);
	return rc;
}

int argus_elf__build_id(int fd, uint8_t *id, size_t max)
{
	uint64_t size, budget = ARGUS_ELF_NOTE_MAX;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint8_t *buf;
	int len = 0;

	if (read_ehdr(fd, &eh, &size) || eh.e_phentsize != sizeof(ph) ||
	    eh.e_phnum > ARGUS_ELF_PHNUM_MAX ||
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(ph), size))
		return 0;
	buf = malloc(ARGUS_ELF_NOTE_MAX);
	if (!buf)
		return -ENOMEM;
	for (unsigned i = 0; i < eh.e_phnum && !len; i++) {
		uint64_t n;

		if (pread_full(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			break;
		if (ph.p_type != PT_NOTE || !in_file(ph.p_offset, ph.p_filesz, size))
			continue;
		if (ph.p_filesz > budget) {
			len = over_budget();
			break;
		}
		n = ph.p_filesz;
		budget -= n;
		if (pread_full(fd, buf, n, ph.p_offset))
			break;
		/* Elf64_Nhdr: namesz, descsz, type; name and desc 4-aligned */
		for (uint64_t o = 0; o + 12 <= n;) {
			uint32_t nh[3];
			uint64_t name, desc, next;

			memcpy(nh, buf + o, sizeof(nh));
			name = o + 12;
			desc = name + (((uint64_t)nh[0] + 3) & ~3ull);
			next = desc + (((uint64_t)nh[1] + 3) & ~3ull);
			if (desc > n || nh[1] > n - desc)
				break;
			if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 &&
			    !memcmp(buf + name, "GNU", 4) && nh[1]) {
				len = (int)(nh[1] < max ? nh[1] : max);
				memcpy(id, buf + desc, (size_t)len);
				break;
			}
			o = next;
		}
	}
	free(buf);
	return len;
}

int argus_debuginfo_open(const uint8_t *bid, size_t n, char **name)
{
	static const struct argus_elf_limits lim = { ARGUS_ELF_SYM_SECTION_MAX };
	char path[128];
	int rc, fd;

	if (!bid || n < 2 || n > 40)
		return -EINVAL;
	rc = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", bid[0]);
	for (size_t i = 1; i < n; i++)
		rc += snprintf(path + rc, sizeof(path) - (size_t)rc, "%02x", bid[i]);
	snprintf(path + rc, sizeof(path) - (size_t)rc, ".debug");
	/* a root-owned tree: following its own symlinks is fine, but the
	 * file at the end is still checked like any other */
	fd = argus_open_untrusted(AT_FDCWD, path, NULL, NULL);
	if (fd < 0)
		return fd;
	if (argus_elf_guard__check(fd, &lim)) {
		close(fd);
		return -ENOENT;
	}
	if (name)
		*name = strdup(path);
	return fd;
}

int argus_find_debuginfo(Dwfl_Module *mod, void **userdata,
			 const char *modname, uint64_t base,
			 const char *file_name, const char *debuglink_file,
			 uint32_t debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n < 2 || n > 40)
		return -1;
	fd = argus_debuginfo_open(bits, (size_t)n, debuginfo_file_name);
	return fd < 0 ? -1 : fd;
}
