/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_elf.c - where a symbol is in a running process: /proc/PID/maps for
 * the file and its load bias, libelf for the symbol.
 *
 * The file is read through /proc/PID/map_files/START-END when it can be
 * (root only): that is the very inode the process mapped, even if the path
 * was replaced or deleted since; else through the path in maps.
 *
 * Symbols: .symtab when the file has one, else .dynsym (a stripped binary
 * keeps only its exported symbols there).  In .dynsym a name can have
 * several versions (glibc: dlopen@@GLIBC_2.34 and dlopen@GLIBC_2.2.5); the
 * default one (no VERSYM_HIDDEN bit) wins, as the dynamic linker's would.
 *
 * Load bias: the mapping at file offset 0 starts at bias + the first
 * PT_LOAD's page-aligned p_vaddr (0 for PIE and shared objects, the link
 * address for a non-PIE executable, whose bias is then 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>

#include "live_internal.h"
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_live.h"

#define WHY(...) do { if (why) snprintf(why, ARGUS_LIVE_WHY, __VA_ARGS__); } while (0)

int argus_live__maps(pid_t pid, struct argus_live_map **maps, size_t *n)
{
	char p[64], line[1024];
	struct argus_live_map *m = NULL;
	size_t cap = 0;
	FILE *f;

	*maps = NULL;
	*n = 0;
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		struct argus_live_map e = { 0 };
		unsigned long long s, en, off;
		int pos = 0;
		char *path;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &s, &en, e.perms, &off, &pos) < 4 ||
		    !pos)
			continue;
		e.start = s;
		e.end = en;
		e.off = off;
		path = line + pos;
		path += strspn(path, " ");
		path[strcspn(path, "\n")] = 0;
		snprintf(e.path, sizeof(e.path), "%s", path);
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct argus_live_map *nm = realloc(m, nc * sizeof(*nm));

			if (!nm) {
				free(m);
				fclose(f);
				return -ENOMEM;
			}
			m = nm;
			cap = nc;
		}
		m[(*n)++] = e;
	}
	fclose(f);
	*maps = m;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool lib_matches(const char *path, const char *lib)
{
	const char *b = base_name(path);
	size_t k = strlen(lib);

	if (path[0] != '/')
		return false;
	if (lib[0] == '/')
		return !strcmp(path, lib);
	if (!strcmp(b, lib))
		return true;
	return !strncmp(b, lib, k) && (b[k] == '.' || b[k] == '-');
}

/* Open the ELF file behind a mapping. */
int live_open_mapped(pid_t pid, const struct argus_live_map *m)
{
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
	return fd;
}

/* The first PT_LOAD's page-aligned p_vaddr, or -1. */
static int64_t first_load(Elf *e)
{
	size_t np;

	if (elf_getphdrnum(e, &np))
		return -1;
	for (size_t i = 0; i < np; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			return (int64_t)(ph.p_vaddr & ~0xfffull);
	}
	return -1;
}

/* The mapping of path at offset 0 and its bias. */
int live_bias_of(pid_t pid, const struct argus_live_map *maps, size_t n, const char *path,
		 uint64_t *bias)
{
	for (size_t i = 0; i < n; i++) {
		int fd;
		Elf *e;
		int64_t v;

		if (strcmp(maps[i].path, path) || maps[i].off)
			continue;
		fd = live_open_mapped(pid, &maps[i]);
		if (fd < 0)
			return -errno;
		elf_version(EV_CURRENT);	/* libelf refuses to work before it */
		e = elf_begin(fd, ELF_C_READ, NULL);
		v = e ? first_load(e) : -1;
		if (e)
			elf_end(e);
		close(fd);
		if (v < 0)
			return -ENOEXEC;
		*bias = maps[i].start - (uint64_t)v;
		return 0;
	}
	return -ENOENT;
}

int argus_live__find_file(pid_t pid, const struct argus_live_map *maps, size_t n, const char *lib,
			  char *path, size_t pathlen, uint64_t *bias)
{
	char exe[PATH_MAX], p[64];
	const char *want = NULL;

	if (!lib || !lib[0]) {
		ssize_t k;

		snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
		k = readlink(p, exe, sizeof(exe) - 1);
		if (k < 0)
			return errno == ENOENT ? -ESRCH : -errno;
		exe[k] = 0;
		want = exe;
	}
	for (size_t i = 0; i < n; i++) {
		if (want ? strcmp(maps[i].path, want) : !lib_matches(maps[i].path, lib))
			continue;
		snprintf(path, pathlen, "%s", maps[i].path);
		return live_bias_of(pid, maps, n, maps[i].path, bias);
	}
	return -ENOENT;
}

/* Look a name up (sym != NULL) or find the symbol around vaddr (sym
 * NULL) in one symbol table.  1 found, 0 not. */
static int scan_table(Elf *e, Elf_Scn *scn, Elf_Scn *versym, const char *sym, uint64_t vaddr,
		      uint64_t *value, uint64_t *size, char *name, size_t namelen)
{
	GElf_Shdr sh;
	Elf_Data *d, *vd = NULL;
	size_t cnt;
	int found = 0;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d)
		return 0;
	if (versym)
		vd = elf_getdata(versym, NULL);
	cnt = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < cnt; i++) {
		GElf_Sym s;
		const char *nm;

		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC &&
		    GELF_ST_TYPE(s.st_info) != STT_NOTYPE)
			continue;
		nm = elf_strptr(e, sh.sh_link, s.st_name);
		if (!nm)
			continue;
		if (sym) {
			GElf_Versym v;

			if (strcmp(nm, sym))
				continue;
			/* a hidden (non-default) version loses to the default */
			if (vd && gelf_getversym(vd, (int)i, &v) && (v & 0x8000) && found)
				continue;
			*value = s.st_value;
			*size = s.st_size;
			found = 1;
			if (!(vd && gelf_getversym(vd, (int)i, &v) && (v & 0x8000)))
				return 1;
		} else if (vaddr >= s.st_value && vaddr < s.st_value + s.st_size) {
			*value = s.st_value;
			*size = s.st_size;
			snprintf(name, namelen, "%s", nm);
			return 1;
		}
	}
	return found;
}

/* In the ELF open on fd: name -> value/size, or vaddr -> enclosing name. */
static int elf_lookup(int fd, const char *sym, uint64_t vaddr, uint64_t *value, uint64_t *size,
		      char *name, size_t namelen, bool *dynsym_only)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *versym = NULL;
	Elf *e;
	int r = -ENOENT;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
	}
	if (dynsym_only)
		*dynsym_only = !symtab;
	if (symtab && scan_table(e, symtab, NULL, sym, vaddr, value, size, name, namelen))
		r = 0;
	else if (dynsym && scan_table(e, dynsym, versym, sym, vaddr, value, size, name, namelen))
		r = 0;
	elf_end(e);
	return r;
}

int argus_live__file_sym(const char *path, const char *symbol, uint64_t *value, uint64_t *size,
			 bool *dynsym_only)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = elf_lookup(fd, symbol, 0, value, size, NULL, 0, dynsym_only);
	close(fd);
	return r;
}

/* The ELF behind path's offset-0 mapping, opened. */
static int open_path(pid_t pid, const struct argus_live_map *maps, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(maps[i].path, path) && !maps[i].off)
			return live_open_mapped(pid, &maps[i]);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int argus_live__sym(pid_t pid, const char *lib, const char *symbol, struct argus_live_sym *s,
		    char *why)
{
	struct argus_live_map *maps;
	size_t n;
	uint64_t v = 0, sz = 0;
	int fd, r;

	memset(s, 0, sizeof(*s));
	r = argus_live__maps(pid, &maps, &n);
	if (r) {
		WHY("no process %d", (int)pid);
		return r;
	}
	r = argus_live__find_file(pid, maps, n, lib, s->file, sizeof(s->file), &s->bias);
	if (r) {
		if (lib && lib[0])
			WHY("no file matching \"%s\" is mapped in process %d", lib, (int)pid);
		else
			WHY("cannot find the executable of process %d in its maps", (int)pid);
		free(maps);
		return r;
	}
	fd = open_path(pid, maps, n, s->file);
	free(maps);
	if (fd < 0) {
		r = -errno;
		WHY("cannot open %s: %s", s->file, strerror(errno));
		return r;
	}
	r = elf_lookup(fd, symbol, 0, &v, &sz, NULL, 0, &s->dynsym_only);
	close(fd);
	if (r) {
		WHY("no function \"%s\" in %s%s", symbol, s->file,
		    s->dynsym_only ? " (stripped: only its .dynsym, the exported symbols, is left;"
				     " give LIB+0xOFFSET instead)" : "");
		return r;
	}
	s->addr = s->bias + v;
	s->size = sz;
	snprintf(s->name, sizeof(s->name), "%s", symbol);
	return 0;
}

int argus_live__addr(pid_t pid, const char *spec, struct argus_live_sym *s, char *why)
{
	struct argus_live_map *maps;
	char lib[256], *end;
	const char *plus = strchr(spec, '+');
	unsigned long long off;
	size_t n;
	uint64_t v = 0, sz = 0;
	int r, fd;

	memset(s, 0, sizeof(*s));
	r = argus_live__maps(pid, &maps, &n);
	if (r) {
		WHY("no process %d", (int)pid);
		return r;
	}
	errno = 0;
	off = strtoull(plus ? plus + 1 : spec, &end, 0);
	if (errno || *end || end == (plus ? plus + 1 : spec)) {
		WHY("\"%s\" is not an address (0xADDR or LIB+0xOFFSET)", spec);
		free(maps);
		return -EINVAL;
	}
	if (plus) {
		snprintf(lib, sizeof(lib), "%.*s", (int)(plus - spec), spec);
		r = argus_live__find_file(pid, maps, n, lib, s->file, sizeof(s->file), &s->bias);
		if (r) {
			WHY("no file matching \"%s\" is mapped in process %d", lib, (int)pid);
			free(maps);
			return r;
		}
		s->addr = s->bias + off;
	} else {
		s->addr = off;
		r = -ENOENT;
		for (size_t i = 0; i < n; i++)
			if (off >= maps[i].start && off < maps[i].end && maps[i].path[0] == '/') {
				snprintf(s->file, sizeof(s->file), "%s", maps[i].path);
				r = live_bias_of(pid, maps, n, maps[i].path, &s->bias);
				break;
			}
		if (r) {
			WHY("%#llx is not in a mapped file of process %d", off, (int)pid);
			free(maps);
			return -ENOENT;
		}
	}
	/* the enclosing symbol, if any, gives the name and the body's size */
	fd = open_path(pid, maps, n, s->file);
	free(maps);
	if (fd >= 0) {
		if (!elf_lookup(fd, NULL, s->addr - s->bias, &v, &sz, s->name, sizeof(s->name),
				&s->dynsym_only) &&
		    v + s->bias == s->addr)
			s->size = sz;
		else if (s->name[0] && v + s->bias != s->addr) {
			WHY("%#llx is inside %s (at +%#llx), not at a function's entry",
			    (unsigned long long)s->addr, s->name,
			    (unsigned long long)(s->addr - s->bias - v));
			close(fd);
			return -EINVAL;
		}
		close(fd);
	}
	return 0;
}
