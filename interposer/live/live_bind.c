/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_bind.c - after `argus inject`'s late dlopen, point the process's
 * calls of the lock functions at the interposer's wrappers, as the loader
 * does for a preloaded library.
 *
 * Why: a dlopen'd library comes last in the lookup order, and the calls a
 * process has already bound (its GOT slots: resolved PLT entries, or
 * GLOB_DAT for -fno-plt code) keep pointing at glibc.  So after inject
 * alone a process's pthread_mutex_lock is still glibc's and nothing is
 * recorded.  Rewriting those slots is what LD_PRELOAD would have given.
 *
 * Which slots: every R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT relocation,
 * in every mapped ELF file but the interposer, the dynamic loader and
 * libc itself, whose symbol is a function the interposer defines among the
 * lock families (pthread_mutex_*, pthread_rwlock_*, pthread_cond_*,
 * sem_*).  The version must match as the loader matches it: a wrapper
 * defined with a version (pthread_cond_*@@GLIBC_2.3.2) takes only
 * references of that version, so a binary of the old condvar ABI
 * (@GLIBC_2.2.5) keeps glibc's compat code; an unversioned wrapper takes
 * every reference of its name.  GLib's wrappers are left alone: their
 * state begins when an object is created (a pool's wrapped function, a
 * source's wrapped dispatch), which for a running process was before.
 *
 * The slot is written with every thread stopped (the caller's
 * argus_live__stop_all), through /proc/PID/mem, which writes RELRO pages
 * too.  A thread already inside glibc's lock call finishes there: its
 * wait was not recorded, the next one is.  A lazy slot not resolved yet
 * is written all the same: the loader's resolver is then never asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_internal.h"

#define MAX_EXPORTS 128

struct export {
	char name[64];
	char ver[32];           /* "" unversioned */
	uint64_t addr;          /* in the target */
	bool used;
};

static bool lock_family(const char *n)
{
	return !strncmp(n, "pthread_mutex_", 14) || !strncmp(n, "pthread_rwlock_", 15) ||
	       !strncmp(n, "pthread_cond_", 13) || !strncmp(n, "sem_", 4);
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Files whose references stay glibc's: the loader, libc (its few PLT
 * calls of its own functions), and the interposer. */
static bool skip_file(const char *path, const char *ipose)
{
	const char *b = base(path);

	return !strcmp(path, ipose) || !strncmp(b, "ld-linux", 8) || !strncmp(b, "libc.so", 7) ||
	       !strncmp(b, "libc-", 5);
}

/* The section of a type (the first one), NULL if none. */
static Elf_Scn *scn_of(Elf *e, Elf64_Word type, GElf_Shdr *sh)
{
	for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s))
		if (gelf_getshdr(s, sh) && sh->sh_type == type)
			return s;
	return NULL;
}

/* Version index -> name, from .gnu.version_d (def) or .gnu.version_r
 * (need); names[i] NULL when unknown. */
static void version_names(Elf *e, const char **names, size_t cap)
{
	GElf_Shdr sh;
	Elf_Scn *s;
	Elf_Data *d;

	memset(names, 0, cap * sizeof(*names));
	if ((s = scn_of(e, SHT_GNU_verdef, &sh)) && (d = elf_getdata(s, NULL))) {
		size_t off = 0;
		GElf_Verdef vd;
		GElf_Verdaux va;

		for (size_t k = 0; k < sh.sh_info && gelf_getverdef(d, (int)off, &vd); k++) {
			if (vd.vd_ndx < cap && gelf_getverdaux(d, (int)(off + vd.vd_aux), &va))
				names[vd.vd_ndx] = elf_strptr(e, sh.sh_link, va.vda_name);
			if (!vd.vd_next)
				break;
			off += vd.vd_next;
		}
	}
	if ((s = scn_of(e, SHT_GNU_verneed, &sh)) && (d = elf_getdata(s, NULL))) {
		size_t off = 0;
		GElf_Verneed vn;
		GElf_Vernaux va;

		for (size_t k = 0; k < sh.sh_info && gelf_getverneed(d, (int)off, &vn); k++) {
			size_t aoff = off + vn.vn_aux;

			for (size_t j = 0; j < vn.vn_cnt && gelf_getvernaux(d, (int)aoff, &va); j++) {
				if (va.vna_other < cap)
					names[va.vna_other] = elf_strptr(e, sh.sh_link, va.vna_name);
				if (!va.vna_next)
					break;
				aoff += va.vna_next;
			}
			if (!vn.vn_next)
				break;
			off += vn.vn_next;
		}
	}
}

/* The version name of dynamic symbol i ("" none or the base), and whether
 * it is the default (@@) one. */
static const char *sym_version(Elf_Data *versym, const char **names, size_t cap, size_t i)
{
	GElf_Versym v;

	if (!versym || !gelf_getversym(versym, (int)i, &v))
		return "";
	v &= 0x7fff;
	return v > 1 && v < cap && names[v] ? names[v] : "";
}

/* The lock-family functions the interposer defines, at their addresses in
 * the target. */
static int read_exports(int fd, uint64_t bias, struct export *ex, size_t *nex)
{
	const char *names[64];
	GElf_Shdr sh, vsh;
	Elf_Scn *dyn, *vs;
	Elf_Data *d, *vd = NULL;
	Elf *e;

	int err = 0;

	*nex = 0;
	e = live_elf_begin(fd, &err);
	if (!e)
		return err;
	dyn = scn_of(e, SHT_DYNSYM, &sh);
	if (!dyn || !(d = elf_getdata(dyn, NULL)) || !sh.sh_entsize) {
		elf_end(e);
		return -ENOEXEC;
	}
	if ((vs = scn_of(e, SHT_GNU_versym, &vsh)))
		vd = elf_getdata(vs, NULL);
	version_names(e, names, 64);
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && *nex < MAX_EXPORTS; i++) {
		GElf_Sym s;
		const char *n;

		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || GELF_ST_BIND(s.st_info) != STB_GLOBAL)
			continue;
		n = elf_strptr(e, sh.sh_link, s.st_name);
		if (!n || !lock_family(n) || strlen(n) >= sizeof(ex->name))
			continue;
		snprintf(ex[*nex].name, sizeof(ex->name), "%s", n);
		snprintf(ex[*nex].ver, sizeof(ex->ver), "%s", sym_version(vd, names, 64, i));
		ex[*nex].addr = bias + s.st_value;
		ex[*nex].used = false;
		(*nex)++;
	}
	elf_end(e);
	return 0;
}

static struct export *find_export(struct export *ex, size_t nex, const char *name, const char *ver)
{
	for (size_t i = 0; i < nex; i++)
		if (!strcmp(ex[i].name, name) && (!ex[i].ver[0] || !strcmp(ex[i].ver, ver)))
			return &ex[i];
	return NULL;
}

/* Rewrite one file's slots.  Returns how many were rewritten, or -errno. */
static int bind_file(struct argus_live *l, int fd, uint64_t bias, struct export *ex, size_t nex)
{
	const char *names[64];
	GElf_Shdr sh, dsh, vsh;
	Elf_Scn *dyn, *vs;
	Elf_Data *dd, *vd = NULL;
	Elf *e;
	int n = 0, rc = 0;

	e = live_elf_begin(fd, &rc);
	if (!e)
		return 0;       /* not an ELF file (or over the guard's limits):
				   nothing bound there */
	dyn = scn_of(e, SHT_DYNSYM, &dsh);
	if (!dyn || !(dd = elf_getdata(dyn, NULL))) {
		elf_end(e);
		return 0;
	}
	if ((vs = scn_of(e, SHT_GNU_versym, &vsh)))
		vd = elf_getdata(vs, NULL);
	version_names(e, names, 64);
	for (Elf_Scn *s = elf_nextscn(e, NULL); s && !rc; s = elf_nextscn(e, s)) {
		Elf_Data *d;

		if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    sh.sh_link != elf_ndxscn(dyn) || !(d = elf_getdata(s, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			struct export *x;
			const char *name;
			uint64_t slot, cur;
			size_t si;

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
			    GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT)
				continue;
			si = GELF_R_SYM(r.r_info);
			if (!gelf_getsym(dd, (int)si, &sym) || sym.st_shndx != SHN_UNDEF ||
			    !(name = elf_strptr(e, dsh.sh_link, sym.st_name)) || !lock_family(name))
				continue;
			x = find_export(ex, nex, name, sym_version(vd, names, 64, si));
			if (!x)
				continue;
			slot = bias + r.r_offset;
			if (argus_live__read(l, slot, &cur, sizeof(cur)))
				continue;       /* not mapped (yet): nothing calls through it */
			if (cur == x->addr)
				continue;
			if ((rc = argus_live__write(l, slot, &x->addr, sizeof(x->addr))))
				break;
			x->used = true;
			n++;
		}
	}
	elf_end(e);
	return rc ? rc : n;
}

int argus_live__bind(struct argus_live *l, const char *ipose, struct argus_live_bind *st, char *why)
{
	pid_t pid = argus_live__pid(l);
	struct export ex[MAX_EXPORTS];
	struct argus_live_map *maps = NULL;
	const struct argus_live_map *im = NULL;
	size_t n = 0, nex = 0;
	uint64_t bias;
	int fd, r;

	memset(st, 0, sizeof(*st));
	if (why)
		why[0] = 0;
	if ((r = argus_live__maps(pid, &maps, &n)))
		return r;
	for (size_t i = 0; i < n && !im; i++)
		if (!maps[i].off && !strcmp(maps[i].path, ipose))
			im = &maps[i];
	if (!im || (r = live_bias_of(pid, maps, n, im, &bias))) {
		r = im ? r : -ENOENT;
		if (why)
			snprintf(why, ARGUS_LIVE_WHY, "%s is not mapped in process %d", ipose, (int)pid);
		goto out;
	}
	/* the interposer is root's file, but what we read is what the
	 * process mapped under its name: through the mapping, like any file */
	fd = live_open_mapped(pid, im, NULL);
	if (fd < 0 || (r = read_exports(fd, bias, ex, &nex)) || !nex) {
		r = fd < 0 ? fd : r ? r : -ENOENT;
		if (why)
			snprintf(why, ARGUS_LIVE_WHY, "%s: no lock functions to bind (%s)", ipose,
				 strerror(-r));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		int k;

		/* each file once: its mapping at offset 0 */
		if (maps[i].path[0] != '/' || maps[i].off || skip_file(maps[i].path, ipose))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = maps[j].ino == maps[i].ino && maps[j].dev == maps[i].dev &&
			       !strcmp(maps[j].path, maps[i].path) && !maps[j].off;
		if (seen || live_bias_of(pid, maps, n, &maps[i], &bias))
			continue;
		fd = live_open_mapped(pid, &maps[i], NULL);
		if (fd < 0)
			continue;
		k = bind_file(l, fd, bias, ex, nex);
		close(fd);
		if (k < 0) {
			r = k;
			if (why)
				snprintf(why, ARGUS_LIVE_WHY, "writing a GOT slot of %s: %s", maps[i].path,
					 strerror(-k));
			goto out;
		}
		if (k) {
			st->files++;
			st->slots += (unsigned)k;
		}
	}
	for (size_t i = 0; i < nex; i++)
		st->functions += ex[i].used;
	r = 0;
out:
	free(maps);
	return r;
}
