/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.c - (path, map_start, map_pgoff, ip) -> function, file:line.
 *
 * Each distinct path gets one struct sym_mod: its own Dwfl holding one
 * module reported with dwfl_report_elf(base 0, add_p_vaddr), so module
 * addresses are the ELF's own virtual addresses (bias 0 for ET_DYN; ET_EXEC
 * is absolute anyway).  A process address is turned into one of those by
 * file offset -> PT_LOAD -> vaddr, which does not depend on where the
 * process had it loaded.  Paths that could not be opened are cached too
 * (dwfl == NULL), so a missing library costs one open() per trace.
 *
 * Modules live in a chained hash table of SYM_BUCKETS buckets, keyed by
 * path, until the symbolizer is freed.  Debug info comes from the file
 * itself or from /usr/lib/debug/.build-id (argus_find_debuginfo()).
 *
 * The paths are another user's: a file is opened with
 * argus_open_untrusted() (no FIFO, no tty, no device: the regular file or
 * nothing), checked by argus_elf_guard__check() and read by libelf with
 * ELF_C_READ, never mapped (libdwfl's own dwfl_report_elf maps it, and a
 * truncation under the mapping was a SIGBUS of root's CLI).  The module is
 * reported with dwfl_report_module at the ELF's own addresses (low = the
 * first PT_LOAD's aligned vaddr, so the bias is 0, as before) and its Elf
 * handed over in sym_find_elf.
 */
#include "symbolize.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_guard.h"
#include "proc_maps.h"
#include "safe_file.h"
#include "trace_format.h"

#define SYM_BUCKETS 1024

struct sym_mod {
	struct sym_mod *next;   /* hash chain */
	char *path;
	Dwfl *dwfl;             /* NULL = file unusable (negative entry) */
	Dwfl_Module *mod;       /* the only module of dwfl */
	Elf *elf;               /* owned by dwfl */
	Elf *pending;           /* ours until sym_find_elf hands it over */
	int fd;                 /* libelf reads through it (ELF_C_READ); -1 */
	uint64_t bias;          /* module address = ELF vaddr + bias */
	uint8_t bid_len;        /* 0 = no build-id note */
	uint8_t bid[ARGUS_BUILD_ID_MAX];
};

struct argus_symbolizer {
	struct sym_mod *bucket[SYM_BUCKETS];
};

/* libdwfl wants the module's ELF: the one sym_mod_open made. */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct sym_mod *m = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	if (m && m->pending) {
		*elfp = m->pending;
		m->pending = NULL;
	}
	return -1;
}

static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata,
			      const char *modname, Dwarf_Addr base,
			      const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return argus_find_debuginfo(mod, userdata, modname, base, file_name,
				    debuglink_file, debuglink_crc,
				    debuginfo_file_name);
}

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = sym_find_elf,
	.find_debuginfo = sym_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

struct argus_symbolizer *argus_symbolizer__new(void)
{
	struct argus_symbolizer *s = calloc(1, sizeof(*s));

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	return s;
}

void argus_symbolizer__free(struct argus_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < SYM_BUCKETS; i++) {
		struct sym_mod *m = s->bucket[i], *next;

		for (; m; m = next) {
			next = m->next;
			if (m->dwfl)
				dwfl_end(m->dwfl);
			if (m->pending)
				elf_end(m->pending);
			if (m->fd >= 0)
				close(m->fd);
			free(m->path);
			free(m);
		}
	}
	free(s);
}

/* The ELF's own address range: from the first PT_LOAD's vaddr (aligned
 * down, as libdwfl does) to the end of the last.  -1 without PT_LOAD. */
static int load_range(Elf *elf, uint64_t *low, uint64_t *high)
{
	size_t phnum;
	bool any = false;

	if (elf_getphdrnum(elf, &phnum))
		return -1;
	*low = *high = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!any)
			*low = ph.p_vaddr & -ph.p_align;
		if (ph.p_vaddr + ph.p_memsz > *high)
			*high = ph.p_vaddr + ph.p_memsz;
		any = true;
	}
	return any && *high > *low ? 0 : -1;
}

/* Open path and report it; leaves m->dwfl NULL if that fails. */
static void sym_mod_open(struct sym_mod *m)
{
	static const struct argus_elf_limits lim = { ARGUS_ELF_SYM_SECTION_MAX };
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	uint64_t low, high;
	void **ud;
	int fd, len;

	if (!strcmp(m->path, "[vdso]"))
		fd = argus_proc_maps__vdso_fd();
	else if (m->path[0] == '/')
		fd = argus_open_untrusted(AT_FDCWD, m->path, NULL, NULL);
	else
		fd = -1;
	if (fd < 0)
		return;
	if (argus_elf_guard__check(fd, &lim) ||
	    !(m->pending = elf_begin(fd, ELF_C_READ, NULL)) ||
	    load_range(m->pending, &low, &high) ||
	    !(m->dwfl = dwfl_begin(&dwfl_cbs))) {
		if (m->pending)
			elf_end(m->pending);
		m->pending = NULL;
		close(fd);
		return;
	}
	m->fd = fd;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_module(m->dwfl, base_name(m->path), low, high);
	if (m->mod) {
		dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = m;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (m->mod)
		m->elf = dwfl_module_getelf(m->mod, &bias);
	if (!m->mod || !m->elf) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
		return;
	}
	m->bias = bias;
	len = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (len > 0) {
		m->bid_len = len > ARGUS_BUILD_ID_MAX ? ARGUS_BUILD_ID_MAX : len;
		memcpy(m->bid, bits, m->bid_len);
	}
}

static struct sym_mod *sym_mod_get(struct argus_symbolizer *s,
				   const char *path)
{
	struct sym_mod **head = &s->bucket[hash_str(path) % SYM_BUCKETS], *m;

	for (m = *head; m; m = m->next)
		if (!strcmp(m->path, path))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->fd = -1;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	sym_mod_open(m);
	m->next = *head;
	*head = m;
	return m;
}

static int sym_lookup(struct argus_symbolizer *s, const char *path,
		      uint64_t map_start, uint64_t map_pgoff, uint64_t ip,
		      const uint8_t *want_bid, size_t want_len,
		      struct argus_sym *out)
{
	uint64_t off, vaddr, addr;
	GElf_Off sym_off;
	GElf_Sym sym;
	const char *name, *src;
	Dwfl_Line *line;
	struct sym_mod *m;
	int lineno = 0;

	if (!s || !path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	copy_str(out->module, sizeof(out->module), base_name(path));
	if (ip < map_start)
		return -ENOENT;
	off = ip - map_start + map_pgoff;
	out->module_off = off;

	m = sym_mod_get(s, path);
	if (!m)
		return -ENOMEM;
	if (!m->dwfl)
		return -ENOENT;
	if (want_len && m->bid_len &&
	    (m->bid_len != want_len || memcmp(m->bid, want_bid, want_len)))
		return -ESTALE;
	if (argus_elf__offset_to_vaddr((struct Elf *)m->elf, off, &vaddr))
		return -ENOENT;
	out->module_off = vaddr;
	addr = vaddr + m->bias;

	name = dwfl_module_addrinfo(m->mod, addr, &sym_off, &sym, NULL, NULL,
				    NULL);
	if (name) {
		/* "__libc_start_main@@GLIBC_2.34": drop the symbol version. */
		snprintf(out->func, sizeof(out->func), "%.*s",
			 (int)strcspn(name, "@"), name);
		out->func_off = sym_off;
	}
	line = dwfl_module_getsrc(m->mod, addr);
	if (line) {
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (src && lineno > 0) {
			copy_str(out->file, sizeof(out->file), src);
			out->line = lineno;
		}
	}
	return out->func[0] || out->line ? 0 : -ENOENT;
}

int argus_symbolizer__lookup(struct argus_symbolizer *s, const char *path,
			     uint64_t map_start, uint64_t map_pgoff,
			     uint64_t ip, struct argus_sym *out)
{
	return sym_lookup(s, path, map_start, map_pgoff, ip, NULL, 0, out);
}

int argus_symbolize_trace_ip(struct argus_symbolizer *s,
			     const struct argus_trace *t, uint32_t pid,
			     uint64_t ts, uint64_t ip, struct argus_sym *out)
{
	const struct argus_map *m;
	const char *path;

	if (!s || !t || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	m = argus_trace__map(t, pid, ip, ts);
	if (!m)
		return -ENOENT;
	path = argus_trace__string(t, m->path);
	if (!path)
		return -ENOENT;
	return sym_lookup(s, path, m->start, m->pgoff, ip, m->build_id,
			  m->build_id_len > ARGUS_BUILD_ID_MAX ?
				  ARGUS_BUILD_ID_MAX : m->build_id_len,
			  out);
}

int argus_sym__format(const struct argus_sym *sym, uint64_t ip, char *buf,
		      size_t len)
{
	size_t n;
	int r;

	if (!sym || !buf || !len)
		return -EINVAL;
	if (sym->func[0]) {
		r = snprintf(buf, len, "%s+0x%llx", sym->func,
			     (unsigned long long)sym->func_off);
	} else if (sym->module[0]) {
		r = snprintf(buf, len, "%s+0x%llx", sym->module,
			     (unsigned long long)sym->module_off);
	} else {
		r = snprintf(buf, len, "0x%llx", (unsigned long long)ip);
	}
	n = r < 0 ? 0 : (size_t)r;
	if (n < len && sym->line)
		n += snprintf(buf + n, len - n, " (%s:%u)",
			      base_name(sym->file), sym->line);
	if (n < len && sym->func[0] && sym->module[0])
		n += snprintf(buf + n, len - n, " [%s]", sym->module);
	return n < len ? 0 : -ENOSPC;
}
