/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_sym.c - names for the addresses a stepped thread touches: code
 * (function + offset, through symbols/symbolize.c) and data (a global's
 * symbol from the ELF symbol table, else the mapping: "[heap]+0x2a0",
 * "[stack]+0x1f8c", "[anon]+0x10").
 *
 * All of /proc/PID/maps is read (proc_maps.c keeps only executable
 * mappings), and read again once when an address is in none of them (the
 * process mapped something since).  The process may be another user's,
 * and hostile (docs/collector.md, "Threat model"): maps are read
 * whole-line (getline; a line longer than MAPS_LINE_MAX is dropped whole,
 * never read as two), a file is opened only through its mapping
 * (argus_open_mapping(): /proc/PID/map_files, a regular file with the maps
 * line's dev and inode, never its path resolved again), and libelf sees
 * it only after argus_elf_guard__check().  A file's load bias is its pgoff-0
 * mapping's start minus its first PT_LOAD's page-aligned vaddr; an address
 * in [bias + low, bias + high) of its PT_LOADs belongs to it even when it
 * sits in the anonymous mapping the kernel adds after the file for the end
 * of .bss.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf_guard.h"
#include "safe_file.h"
#include "step_internal.h"
#include "symbolize.h"

#define SYMS_MAX_MAPS 8192
#define MAPS_LINE_MAX 8192
#define SYMS_MAX_FILES 64

struct smap {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;          /* as maps shows them; 0 anonymous */
	char *path;                 /* "" for anonymous */
};

struct sfile {
	char *path;
	bool tried, ok;
	uint64_t bias, low, high;   /* [bias+low, bias+high) */
	Elf *elf;
	int fd;
};

struct step_syms {
	uint32_t pid;
	struct smap *maps;
	size_t n;
	struct sfile files[SYMS_MAX_FILES];
	size_t nfiles;
	struct argus_symbolizer *sym;
	int map_files;              /* /proc/PID/map_files: 1 readable (root),
				       -1 not ours (EPERM), 0 not tried */
};

static void maps_free(struct step_syms *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		free(ss->maps[i].path);
	free(ss->maps);
	ss->maps = NULL;
	ss->n = 0;
}

static int maps_read(struct step_syms *ss)
{
	char path[64], *line = NULL;
	size_t cap = 0, lcap = 0;
	ssize_t len;
	FILE *f;

	maps_free(ss);
	snprintf(path, sizeof(path), "/proc/%u/maps", ss->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ss->n < SYMS_MAX_MAPS && (len = getline(&line, &lcap, f)) > 0) {
		uint64_t s, e, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		char *p;

		if (len >= MAPS_LINE_MAX)  /* never written by the kernel: skip it whole */
			continue;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &s,
			   &e, perms, &off, &maj, &min, &ino, &pos) < 7 || !pos)
			continue;
		p = line + pos;
		p[strcspn(p, "\n")] = 0;
		if (ss->n == cap) {
			struct smap *nm;

			cap = cap ? cap * 2 : 64;
			nm = realloc(ss->maps, cap * sizeof(*nm));
			if (!nm)
				break;
			ss->maps = nm;
		}
		ss->maps[ss->n].start = s;
		ss->maps[ss->n].end = e;
		ss->maps[ss->n].pgoff = off;
		ss->maps[ss->n].dev = makedev(maj, min);
		ss->maps[ss->n].ino = ino;
		ss->maps[ss->n].path = strdup(p);
		if (!ss->maps[ss->n].path)
			break;
		ss->n++;
	}
	free(line);
	fclose(f);
	return 0;
}

struct step_syms *step_syms__new(uint32_t pid)
{
	struct step_syms *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->pid = pid;
	ss->sym = argus_symbolizer__new();
	elf_version(EV_CURRENT);
	maps_read(ss);
	return ss;
}

void step_syms__free(struct step_syms *ss)
{
	if (!ss)
		return;
	maps_free(ss);
	for (size_t i = 0; i < ss->nfiles; i++) {
		if (ss->files[i].elf)
			elf_end(ss->files[i].elf);
		if (ss->files[i].fd >= 0)
			close(ss->files[i].fd);
		free(ss->files[i].path);
	}
	argus_symbolizer__free(ss->sym);
	free(ss);
}

static const struct smap *find_map(struct step_syms *ss, uint64_t addr)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ss->n; i++)
			if (addr >= ss->maps[i].start && addr < ss->maps[i].end)
				return &ss->maps[i];
		if (pass == 0 && maps_read(ss))
			break;
	}
	return NULL;
}

/* Open a mapped file's ELF (through its offset-0 mapping) and find its
 * load bias. */
static void file_open(struct step_syms *ss, struct sfile *f)
{
	static const struct argus_elf_limits lim = { ARGUS_ELF_SYM_SECTION_MAX };
	const struct smap *head = NULL;
	size_t phnum;
	bool any = false;

	f->tried = true;
	f->fd = -1;
	for (size_t i = 0; i < ss->n && !head; i++)
		if (!strcmp(ss->maps[i].path, f->path) && ss->maps[i].pgoff == 0)
			head = &ss->maps[i];
	if (!head)
		return;
	f->fd = argus_open_mapping((int)ss->pid, head->start, head->end, head->dev, head->ino,
				   head->path, NULL);
	if (f->fd < 0) {
		f->fd = -1;
		return;
	}
	if (argus_elf_guard__check(f->fd, &lim))
		return;
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || elf_getphdrnum(f->elf, &phnum))
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!any)
			f->low = ph.p_vaddr & ~(ph.p_align ? ph.p_align - 1 : 0);
		if (ph.p_vaddr + ph.p_memsz > f->high)
			f->high = ph.p_vaddr + ph.p_memsz;
		any = true;
	}
	if (!any)
		return;
	f->bias = head->start - f->low;
	f->ok = true;
}

static struct sfile *file_get(struct step_syms *ss, const char *path)
{
	struct sfile *f;

	for (size_t i = 0; i < ss->nfiles; i++)
		if (!strcmp(ss->files[i].path, path))
			return &ss->files[i];
	if (ss->nfiles == SYMS_MAX_FILES)
		return NULL;
	f = &ss->files[ss->nfiles];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return NULL;
	ss->nfiles++;
	file_open(ss, f);
	return f;
}

/* The symbol of the ELF's symtab (else dynsym) containing vaddr. */
static bool elf_sym(struct sfile *f, uint64_t vaddr, bool code, char *name, size_t len,
		    uint64_t *off)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	uint64_t best = 0;

	for (int want = SHT_SYMTAB; want >= SHT_SYMTAB && !found; want = want == SHT_SYMTAB ? SHT_DYNSYM : -1) {
		scn = NULL;
		while ((scn = elf_nextscn(f->elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (GElf_Word)want || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d)
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *nm;
				int t;

				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
					continue;
				t = GELF_ST_TYPE(s.st_info);
				if (t == STT_SECTION || t == STT_FILE)
					continue;
				if (code != (t == STT_FUNC || t == STT_GNU_IFUNC) && t != STT_NOTYPE)
					continue;
				if (vaddr < s.st_value ||
				    (s.st_size ? vaddr >= s.st_value + s.st_size : vaddr != s.st_value))
					continue;
				if (found && s.st_value <= best)
					continue;
				nm = elf_strptr(f->elf, sh.sh_link, s.st_name);
				if (!nm || !*nm)
					continue;
				snprintf(name, len, "%.*s", (int)strcspn(nm, "@"), nm);
				*off = vaddr - s.st_value;
				best = s.st_value;
				found = true;
			}
		}
	}
	return found;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int step_syms__lookup(struct step_syms *ss, uint64_t addr, bool code, char *name,
		      size_t len, uint64_t *off, bool *is_symbol)
{
	const struct smap *m;

	if (!ss || !name || !len)
		return -EINVAL;
	*is_symbol = false;
	*off = 0;
	name[0] = 0;
	m = find_map(ss, addr);
	if (code && m && (m->path[0] == '/' || !strcmp(m->path, "[vdso]"))) {
		struct argus_sym s;
		char mf[96];
		const char *file = m->path;

		/* the symbolizer opens what it is given by name: give it the
		 * mapping's magic link, the very file mapped, not the path
		 * text the process controls.  Without CAP_SYS_ADMIN (a user
		 * stepping a process of its own) map_files is not ours, and
		 * the path (opened as safe_file.h says) is all there is. */
		if (m->path[0] == '/' && ss->map_files >= 0) {
			snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, ss->pid,
				 m->start, m->end);
			if (!ss->map_files) {
				int fd = argus_open_untrusted(AT_FDCWD, mf, NULL, NULL);

				ss->map_files = fd == -EPERM || fd == -EACCES ? -1 : fd >= 0 ? 1 : 0;
				if (fd >= 0)
					close(fd);
			}
			if (ss->map_files >= 0)
				file = mf;
		}
		if (!argus_symbolizer__lookup(ss->sym, file, m->start, m->pgoff, addr, &s) &&
		    s.func[0]) {
			snprintf(name, len, "%s", s.func);
			*off = s.func_off;
			*is_symbol = true;
			return 0;
		}
	}
	/* data (or code without a function symbol): every mapped ELF whose
	 * address range covers addr, .bss tails included */
	for (size_t i = 0; i < ss->n; i++) {
		struct sfile *f;

		if (ss->maps[i].path[0] != '/' || ss->maps[i].pgoff != 0)
			continue;
		f = file_get(ss, ss->maps[i].path);
		if (!f || !f->ok || addr < f->bias + f->low || addr >= f->bias + f->high)
			continue;
		if (elf_sym(f, addr - f->bias, code, name, len, off)) {
			*is_symbol = true;
			return 0;
		}
		snprintf(name, len, "%s", base_name(f->path));
		*off = addr - f->bias;
		return 0;
	}
	if (!m)
		return -ENOENT;
	snprintf(name, len, "%s", m->path[0] == '/' ? base_name(m->path) :
				  m->path[0] ? m->path : "[anon]");
	*off = addr - m->start;
	return 0;
}

int step_syms__mapping(struct step_syms *ss, uint64_t addr, char *name, size_t len,
		       uint64_t *off)
{
	const struct smap *m;

	if (!ss || !name || !len)
		return -EINVAL;
	m = find_map(ss, addr);
	if (!m)
		return -ENOENT;
	snprintf(name, len, "%s", m->path[0] == '/' ? base_name(m->path) :
				  m->path[0] ? m->path : "[anon]");
	*off = addr - m->start;
	return 0;
}
