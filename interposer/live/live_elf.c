/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_elf.c - where a symbol is in a running process: /proc/PID/maps for
 * the file and its load bias, libelf for the symbol.
 *
 * The process is another user's, and hostile (docs/collector.md, "Threat
 * model"): every path its maps show is a name it controls, and a line of
 * its maps is whatever its path makes it.  So:
 *   - maps are read whole-line (getline), bounded (ARGUS_LIVE_MAPS_MAX
 *     lines of ARGUS_LIVE_MAPS_LINE bytes): a path of 1,100 bytes is one
 *     line, not a line and a forged one;
 *   - a file is opened only through its mapping, /proc/PID/map_files/
 *     START-END, checked (live_open_mapped): the very inode the process
 *     mapped, even deleted or renamed since, a regular file with the maps
 *     line's (dev, inode), never a FIFO or a device, never the path text
 *     resolved again as a name;
 *   - libelf sees it only after argus_elf_guard__check() (the symbolizer's
 *     limits): a sparse 1 GiB .symtab is refused from its headers, not read.
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
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "argus_live.h"
#include "elf_guard.h"
#include "live_internal.h"
#include "safe_file.h"

#define WHY(...) do { if (why) snprintf(why, ARGUS_LIVE_WHY, __VA_ARGS__); } while (0)

/* One whole maps line into e: 0, or -1 when it is not a maps line. */
static int parse_maps_line(char *line, struct argus_live_map *e)
{
	unsigned long long s, en, off, ino;
	unsigned maj, min;
	int pos = 0;
	char *path;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu%n", &s, &en, e->perms, &off, &maj, &min,
		   &ino, &pos) < 7 || !pos || (line[pos] && line[pos] != ' '))
		return -1;
	e->start = s;
	e->end = en;
	e->off = off;
	e->dev = makedev(maj, min);
	e->ino = ino;
	path = line + pos;
	path += strspn(path, " ");
	if (strlen(path) >= sizeof(e->path))
		snprintf(e->path, sizeof(e->path), "[long path]");
	else
		snprintf(e->path, sizeof(e->path), "%s", path);
	return 0;
}

int argus_live__maps(pid_t pid, struct argus_live_map **maps, size_t *n)
{
	char p[64], *line = NULL;
	struct argus_live_map *m = NULL;
	size_t cap = 0, lcap = 0;
	ssize_t len;
	FILE *f;

	*maps = NULL;
	*n = 0;
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (*n < ARGUS_LIVE_MAPS_MAX && (len = getline(&line, &lcap, f)) > 0) {
		struct argus_live_map e;

		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (len >= ARGUS_LIVE_MAPS_LINE || parse_maps_line(line, &e))
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct argus_live_map *nm = realloc(m, nc * sizeof(*nm));

			if (!nm) {
				free(m);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			m = nm;
			cap = nc;
		}
		m[(*n)++] = e;
	}
	free(line);
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

int live_open_mapped(pid_t pid, const struct argus_live_map *m, struct stat *st)
{
	return argus_open_mapping((int)pid, m->start, m->end, m->dev, m->ino, m->path, st);
}

Elf *live_elf_begin(int fd, int *err)
{
	static const struct argus_elf_limits lim = { ARGUS_ELF_SYM_SECTION_MAX };
	Elf *e;
	int r = argus_elf_guard__check(fd, &lim);

	if (r) {
		*err = r == -EFBIG || r == -ENOMEM ? r : -ENOEXEC;
		return NULL;
	}
	elf_version(EV_CURRENT);	/* libelf refuses to work before it */
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		*err = -ENOEXEC;
		return NULL;
	}
	return e;
}

const struct argus_live_map *live_file_head(const struct argus_live_map *maps, size_t n,
					    const struct argus_live_map *m)
{
	for (size_t i = 0; i < n; i++)
		if (!maps[i].off && maps[i].ino == m->ino && maps[i].dev == m->dev &&
		    maps[i].path[0] == '/' && !strcmp(maps[i].path, m->path))
			return &maps[i];
	return NULL;
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

int live_bias_of(pid_t pid, const struct argus_live_map *maps, size_t n,
		 const struct argus_live_map *m, uint64_t *bias)
{
	const struct argus_live_map *h = live_file_head(maps, n, m);
	int fd, err = 0;
	Elf *e;
	int64_t v;

	if (!h)
		return -ENOENT;
	fd = live_open_mapped(pid, h, NULL);
	if (fd < 0)
		return fd;
	e = live_elf_begin(fd, &err);
	v = e ? first_load(e) : -1;
	if (e)
		elf_end(e);
	close(fd);
	if (err)
		return err;
	if (v < 0)
		return -ENOEXEC;
	*bias = h->start - (uint64_t)v;
	return 0;
}

/* The first mapping that lib names (see argus_live__find_file), or -errno. */
static long find_map(pid_t pid, const struct argus_live_map *maps, size_t n, const char *lib)
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
	for (size_t i = 0; i < n; i++)
		if (maps[i].path[0] == '/' &&
		    (want ? !strcmp(maps[i].path, want) : lib_matches(maps[i].path, lib)))
			return (long)i;
	return -ENOENT;
}

int argus_live__find_file(pid_t pid, const struct argus_live_map *maps, size_t n, const char *lib,
			  char *path, size_t pathlen, uint64_t *bias)
{
	long i = find_map(pid, maps, n, lib);

	if (i < 0)
		return (int)i;
	snprintf(path, pathlen, "%s", maps[i].path);
	return live_bias_of(pid, maps, n, &maps[i], bias);
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

	e = live_elf_begin(fd, &r);
	if (!e)
		return r;
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
	int fd = argus_open_untrusted(AT_FDCWD, path, NULL, NULL), r;

	if (fd < 0)
		return fd;
	r = elf_lookup(fd, symbol, 0, value, size, NULL, 0, dynsym_only);
	close(fd);
	return r;
}

/* The ELF of the file m maps, opened through its offset-0 mapping; its
 * identity into s.  An fd or -errno. */
static int open_file(pid_t pid, const struct argus_live_map *maps, size_t n,
		     const struct argus_live_map *m, struct argus_live_sym *s)
{
	const struct argus_live_map *h = live_file_head(maps, n, m);
	struct stat st;
	int fd;

	if (!h)
		return -ENOENT;
	fd = live_open_mapped(pid, h, &st);
	if (fd >= 0) {
		s->dev = (uint64_t)st.st_dev;
		s->ino = (uint64_t)st.st_ino;
	}
	return fd;
}

/* why for an ELF the guard or libelf refused. */
static void why_elf(char *why, const char *file, int r)
{
	if (r == -EFBIG)
		WHY("%s: refused: a section or header table is larger than argus reads from a file"
		    " another user controls (docs/collector.md, \"Threat model\")", file);
	else if (r == -ENOEXEC)
		WHY("%s is not an x86-64 ELF, or its headers point past its end", file);
	else if (r == -ESTALE || r == -EINVAL)
		WHY("%s: the file at its mapping is not the regular file the maps name (refused)",
		    file);
	else
		WHY("cannot open %s through its mapping: %s", file, strerror(-r));
}

int argus_live__sym(pid_t pid, const char *lib, const char *symbol, struct argus_live_sym *s,
		    char *why)
{
	struct argus_live_map *maps;
	size_t n;
	uint64_t v = 0, sz = 0;
	long i;
	int fd, r;

	memset(s, 0, sizeof(*s));
	r = argus_live__maps(pid, &maps, &n);
	if (r) {
		WHY("no process %d", (int)pid);
		return r;
	}
	i = find_map(pid, maps, n, lib);
	r = i < 0 ? (int)i : 0;
	if (!r) {
		snprintf(s->file, sizeof(s->file), "%s", maps[i].path);
		r = live_bias_of(pid, maps, n, &maps[i], &s->bias);
		if (r && r != -ENOENT) {
			why_elf(why, s->file, r);
			free(maps);
			return r;
		}
	}
	if (r) {
		if (lib && lib[0])
			WHY("no file matching \"%s\" is mapped in process %d", lib, (int)pid);
		else
			WHY("cannot find the executable of process %d in its maps", (int)pid);
		free(maps);
		return r;
	}
	fd = open_file(pid, maps, n, &maps[i], s);
	free(maps);
	if (fd < 0) {
		why_elf(why, s->file, fd);
		return fd;
	}
	r = elf_lookup(fd, symbol, 0, &v, &sz, NULL, 0, &s->dynsym_only);
	close(fd);
	if (r == -EFBIG || r == -ENOEXEC) {
		why_elf(why, s->file, r);
		return r;
	}
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
	const struct argus_live_map *m = NULL;
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
		long i;

		snprintf(lib, sizeof(lib), "%.*s", (int)(plus - spec), spec);
		i = find_map(pid, maps, n, lib);
		r = i < 0 ? (int)i : live_bias_of(pid, maps, n, &maps[i], &s->bias);
		if (r) {
			if (i < 0 || r == -ENOENT)
				WHY("no file matching \"%s\" is mapped in process %d", lib, (int)pid);
			else
				why_elf(why, maps[i].path, r);
			free(maps);
			return r;
		}
		m = &maps[i];
		s->addr = s->bias + off;
	} else {
		s->addr = off;
		r = -ENOENT;
		for (size_t i = 0; i < n; i++)
			if (off >= maps[i].start && off < maps[i].end && maps[i].path[0] == '/') {
				m = &maps[i];
				r = live_bias_of(pid, maps, n, m, &s->bias);
				break;
			}
		if (r) {
			WHY("%#llx is not in a mapped file of process %d", off, (int)pid);
			free(maps);
			return -ENOENT;
		}
	}
	snprintf(s->file, sizeof(s->file), "%s", m->path);
	/* the enclosing symbol, if any, gives the name and the body's size */
	fd = open_file(pid, maps, n, m, s);
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
