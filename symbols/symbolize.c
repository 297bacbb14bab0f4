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
#include "unwind_helper.h"
#include "unwind_wire.h"

#define SYM_BUCKETS 1024
#define SYM_CACHE_BITS 12
#define SYM_CACHE (1u << SYM_CACHE_BITS) /* answers kept, direct-mapped */
/* sandbox mode: a request's deadline.  Generous (the first line lookup in
 * a large debug file reads its line tables), it only bounds a helper that
 * hangs or was stopped. */
#define SYM_HELPER_TIMEOUT_MS 10000
/* sandbox mode: after this many files the helper failed on (crashed,
 * timed out, answered nonsense), a run stops asking it: a trace naming
 * many hostile files costs at most this many deadlines */
#define SYM_HELPER_FAILS_MAX 3

struct sym_mod {
	struct sym_mod *next;   /* hash chain */
	char *path;             /* NULL in the helper: files come by id */
	uint32_t id;            /* sandbox mode and helper: the file's id */
	bool sent;              /* sandbox mode: the helper has it */
	bool dead;              /* sandbox mode: unusable, or failed the helper */
	Dwfl *dwfl;             /* NULL = file unusable (negative entry) */
	Dwfl_Module *mod;       /* the only module of dwfl */
	Elf *elf;               /* owned by dwfl */
	Elf *pending;           /* ours until sym_find_elf hands it over */
	int fd;                 /* libelf reads through it (ELF_C_READ); -1 */
	int dbg_fd;             /* helper: the debug file for libdwfl when it
				   asks; sandbox mode: kept to send again */
	uint64_t bias;          /* module address = ELF vaddr + bias */
	uint8_t bid_len;        /* 0 = no build-id note */
	uint8_t bid[ARGUS_BUILD_ID_MAX];
};

struct sym_cached {
	struct sym_mod *m;      /* NULL = empty */
	uint64_t off;
	struct uwp_sym_result r;
};

struct argus_symbolizer {
	struct sym_mod *bucket[SYM_BUCKETS];
	/* the helper's side: files by id, opened from fds only */
	bool by_fd;
	struct sym_mod *ids[UWP_SYM_FILES_MAX];
	/* sandbox mode: libelf/libdw run in the helper */
	struct argus_unwind_client *helper;
	uint32_t next_id;
	struct sym_cached *cache;
	struct argus_symbolizer_stats st;
};

static bool sandbox_default;

void argus_symbolizer__set_sandbox(bool on)
{
	sandbox_default = on;
}

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
	struct sym_mod *m = *userdata;

	/* the helper opens nothing: the debug file came with the ELF */
	if (m && !m->path) {
		int fd = m->dbg_fd;

		m->dbg_fd = -1;
		return fd >= 0 ? fd : -1;
	}
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

struct argus_symbolizer *argus_symbolizer__new_in(bool sandboxed)
{
	struct argus_symbolizer *s = calloc(1, sizeof(*s));
	int e;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	if (sandboxed && !(s->helper = argus_unwind_client__new()))
		goto fail;
	argus_unwind_client__no_backoff(s->helper);
	return s;
fail:
	e = errno;
	argus_symbolizer__free(s);
	errno = e;
	return NULL;
}

struct argus_symbolizer *argus_symbolizer__new(void)
{
	return argus_symbolizer__new_in(sandbox_default);
}

static void sym_mod_close_fds(struct sym_mod *m)
{
	if (m->fd >= 0)
		close(m->fd);
	if (m->dbg_fd >= 0)
		close(m->dbg_fd);
	m->fd = m->dbg_fd = -1;
}

static void sym_mod_free(struct sym_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->pending)
		elf_end(m->pending);
	sym_mod_close_fds(m);
	free(m->path);
	free(m);
}

void argus_symbolizer__free(struct argus_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < SYM_BUCKETS; i++) {
		struct sym_mod *m = s->bucket[i], *next;

		for (; m; m = next) {
			next = m->next;
			sym_mod_free(m);
		}
	}
	for (size_t i = 0; i < UWP_SYM_FILES_MAX; i++)
		if (s->ids[i])
			sym_mod_free(s->ids[i]);
	argus_unwind_client__free(s->helper);
	free(s->cache);
	free(s);
}

void argus_symbolizer__stats(const struct argus_symbolizer *s,
			     struct argus_symbolizer_stats *st)
{
	struct argus_unwind_client_stats cs;

	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	*st = s->st;
	st->sandboxed = s->helper != NULL;
	if (s->helper) {
		argus_unwind_client__stats(s->helper, &cs);
		st->helper_pid = (uint32_t)cs.pid;
		st->helper_restarts = cs.restarts;
	}
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

/* The file at path, opened as a user's file is (safe_file.h), or -1. */
static int sym_open_path(const char *path)
{
	if (!strcmp(path, "[vdso]"))
		return argus_proc_maps__vdso_fd();
	if (path[0] == '/')
		return argus_open_untrusted(AT_FDCWD, path, NULL, NULL);
	return -1;
}

/* Report the ELF in fd (taken) as module name; leaves m->dwfl NULL if
 * that fails.  This is the part that parses: in the helper in sandbox
 * mode, in this process otherwise. */
static void sym_mod_load(struct sym_mod *m, int fd, const char *name)
{
	static const struct argus_elf_limits lim = { ARGUS_ELF_SYM_SECTION_MAX };
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	uint64_t low, high;
	void **ud;
	int len;

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
	m->mod = dwfl_report_module(m->dwfl, name, low, high);
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

static struct sym_mod *sym_mod_new(void)
{
	struct sym_mod *m = calloc(1, sizeof(*m));

	if (m)
		m->fd = m->dbg_fd = -1;
	return m;
}

/*
 * Sandbox mode: open the file here (root may open it, safe_file.h's way),
 * read its build-id with bounded preads (no parser), find its separate
 * debug info by that build-id, and keep the fds to hand to the helper.
 * Nothing here parses more than the ELF and note headers.
 */
static void sym_mod_prepare_remote(struct argus_symbolizer *s, struct sym_mod *m)
{
	int n;

	m->dead = true;
	if (s->next_id >= UWP_SYM_FILES_MAX) {
		s->st.files_refused++;
		return;
	}
	if ((m->fd = sym_open_path(m->path)) < 0)
		return;
	n = argus_elf__build_id(m->fd, m->bid, sizeof(m->bid));
	if (n > 0)
		m->bid_len = (uint8_t)n;
	if (n >= 2)
		m->dbg_fd = argus_debuginfo_open(m->bid, (size_t)n, NULL);
	m->id = s->next_id++;
	m->dead = false;
}

static struct sym_mod *sym_mod_get(struct argus_symbolizer *s,
				   const char *path)
{
	struct sym_mod **head = &s->bucket[hash_str(path) % SYM_BUCKETS], *m;

	for (m = *head; m; m = m->next)
		if (!strcmp(m->path, path))
			return m;
	m = sym_mod_new();
	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	if (s->helper)
		sym_mod_prepare_remote(s, m);
	else
		sym_mod_load(m, sym_open_path(path), base_name(path));
	m->next = *head;
	*head = m;
	return m;
}

/* The parsing half of a lookup, on a loaded module: what the helper runs.
 * r->module_off is off when the offset is outside the file's segments. */
static void sym_mod_query(const struct sym_mod *m, uint64_t off,
			  struct uwp_sym_result *r)
{
	uint64_t vaddr, addr;
	GElf_Off sym_off;
	GElf_Sym sym;
	const char *name, *src;
	Dwfl_Line *line;
	int lineno = 0;

	memset(r, 0, sizeof(*r));
	r->rc = -ENOENT;
	r->module_off = off;
	if (!m->dwfl ||
	    argus_elf__offset_to_vaddr((struct Elf *)m->elf, off, &vaddr))
		return;
	r->module_off = vaddr;
	addr = vaddr + m->bias;

	name = dwfl_module_addrinfo(m->mod, addr, &sym_off, &sym, NULL, NULL,
				    NULL);
	if (name) {
		/* "__libc_start_main@@GLIBC_2.34": drop the symbol version. */
		snprintf(r->func, sizeof(r->func), "%.*s",
			 (int)strcspn(name, "@"), name);
		r->func_off = sym_off;
	}
	line = dwfl_module_getsrc(m->mod, addr);
	if (line) {
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (src && lineno > 0) {
			copy_str(r->file, sizeof(r->file), src);
			r->line = (uint32_t)lineno;
		}
	}
	if (r->func[0] || r->line)
		r->rc = 0;
}

/* Sandbox mode: hand m's fds to the helper.  0, or -errno (m is dead). */
static int sym_mod_send(struct argus_symbolizer *s, struct sym_mod *m)
{
	struct {
		struct uwp_sym_file f;
		char name[UWP_SYM_NAME_MAX];
	} q;
	int fds[2] = { m->fd, m->dbg_fd };
	int32_t ok;
	int err;

	memset(&q, 0, sizeof(q));
	q.f.id = m->id;
	q.f.nfds = m->dbg_fd >= 0 ? 2 : 1;
	copy_str(q.name, sizeof(q.name), base_name(m->path));
	err = argus_unwind_client__call(s->helper, UWP_SYM_FILE, &q,
					sizeof(q.f) + strlen(q.name) + 1, fds,
					q.f.nfds, UWP_SYM_OK, &ok, sizeof(ok),
					SYM_HELPER_TIMEOUT_MS);
	if (!err && ok)
		err = -ENOEXEC; /* not an ELF the helper will read */
	m->sent = !err;
	return err;
}

/* Sandbox mode: m answers module+offset from now on. */
static void sym_mod_dead(struct sym_mod *m)
{
	m->dead = true;
	sym_mod_close_fds(m);
}

/* Sandbox mode: r from the helper.  0, or -errno with m dead when the
 * helper failed on it (a file that crashes or hangs libdw would do it
 * again: its addresses keep module+offset from now on). */
static int sym_mod_ask(struct argus_symbolizer *s, struct sym_mod *m,
		       uint64_t off, struct uwp_sym_result *r)
{
	struct uwp_sym_lookup q = { m->id, 0, off };
	int err = 0;

	for (int round = 0; round < 2; round++) {
		if (!m->sent && (err = sym_mod_send(s, m)))
			break;
		err = argus_unwind_client__call(s->helper, UWP_SYM_LOOKUP, &q,
						sizeof(q), NULL, 0,
						UWP_SYM_RESULT, r, sizeof(*r),
						SYM_HELPER_TIMEOUT_MS);
		/* a helper started since does not know the file: send it again */
		if (!err && r->rc == -ESRCH) {
			m->sent = false;
			err = -EPROTO;
			continue;
		}
		break;
	}
	/* untrusted: a known rc, strings that end inside their arrays */
	if (!err && r->rc != 0 && r->rc != -ENOENT)
		err = -EPROTO;
	if (err == -EAGAIN)     /* no helper could be started now: not the file's fault */
		return err;
	if (err == -ENOEXEC) {  /* the helper will not read it: no symbols in it */
		sym_mod_dead(m);
		return err;
	}
	if (err) {
		/* the helper died, hung or lied on this file: a hostile file
		 * would do it again */
		sym_mod_dead(m);
		s->st.files_failed++;
		if (s->st.files_failed >= SYM_HELPER_FAILS_MAX)
			s->st.gave_up = true;
		return err;
	}
	r->func[sizeof(r->func) - 1] = '\0';
	r->file[sizeof(r->file) - 1] = '\0';
	s->st.remote_lookups++;
	return 0;
}

/* The answers kept, by (file, offset), in both modes: a dump asks for the
 * same few return addresses over and over, and each answer is a symbol
 * and line-table search (and, in sandbox mode, a round trip). */
static struct sym_cached *sym_cache_slot(struct argus_symbolizer *s,
					 const struct sym_mod *m, uint64_t off)
{
	/* Fibonacci hashing: addresses a page apart must not collide */
	uint64_t h = ((uint64_t)(uintptr_t)m ^ off) * 0x9e3779b97f4a7c15ull;

	if (!s->cache && !(s->cache = calloc(SYM_CACHE, sizeof(*s->cache))))
		return NULL;
	return &s->cache[h >> (64 - SYM_CACHE_BITS)];
}

static int sym_lookup(struct argus_symbolizer *s, const char *path,
		      uint64_t map_start, uint64_t map_pgoff, uint64_t ip,
		      const uint8_t *want_bid, size_t want_len,
		      struct argus_sym *out)
{
	struct uwp_sym_result r;
	struct sym_cached *c;
	struct sym_mod *m;
	uint64_t off;

	if (!s || !path || !out || s->by_fd)
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
	if (s->helper ? m->dead || s->st.gave_up : !m->dwfl)
		return -ENOENT;
	if (want_len && m->bid_len &&
	    (m->bid_len != want_len || memcmp(m->bid, want_bid, want_len)))
		return -ESTALE;
	c = sym_cache_slot(s, m, off);
	if (c && c->m == m && c->off == off) {
		s->st.cache_hits++;
		r = c->r;
	} else if (s->helper && sym_mod_ask(s, m, off, &r)) {
		return -ENOENT;
	} else {
		if (!s->helper)
			sym_mod_query(m, off, &r);
		if (c)
			*c = (struct sym_cached){ m, off, r };
	}
	out->module_off = r.module_off;
	copy_str(out->func, sizeof(out->func), r.func);
	out->func_off = r.func_off;
	copy_str(out->file, sizeof(out->file), r.file);
	out->line = r.line;
	return out->func[0] || out->line ? 0 : -ENOENT;
}

/* ---- the helper's side (unwind_helper.c) ----------------------------- */

struct argus_symbolizer *argus_symbolizer__new_by_fd(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new_in(false);

	if (s)
		s->by_fd = true;
	return s;
}

int argus_symbolizer__add_fd(struct argus_symbolizer *s, uint32_t id,
			     const char *name, int fd, int dbg_fd)
{
	struct sym_mod *m;

	bool bad = !s || !s->by_fd || id >= UWP_SYM_FILES_MAX || !name || fd < 0;

	if (bad || !(m = sym_mod_new())) {
		if (fd >= 0)
			close(fd);
		if (dbg_fd >= 0)
			close(dbg_fd);
		return bad ? -EINVAL : -ENOMEM;
	}
	if (s->ids[id])
		sym_mod_free(s->ids[id]);
	s->ids[id] = m;
	m->id = id;
	m->dbg_fd = dbg_fd;     /* libdwfl asks for it (sym_find_debuginfo) */
	sym_mod_load(m, fd, name);
	if (!m->dwfl)
		return -ENOENT;
	return 0;
}

int argus_symbolizer__query_id(struct argus_symbolizer *s, uint32_t id,
			       uint64_t off, struct uwp_sym_result *r)
{
	if (!s || !s->by_fd || !r)
		return -EINVAL;
	if (id >= UWP_SYM_FILES_MAX || !s->ids[id]) {
		memset(r, 0, sizeof(*r));
		r->rc = -ESRCH;
		return 0;
	}
	sym_mod_query(s->ids[id], off, r);
	return 0;
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
