/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.c - replay a user-stack unwind with libdwfl over a stack copy.
 *
 * One cache slot (struct uw_slot) = one Dwfl session for one maps layout:
 *   - every executable file is reported once, as a lazy module
 *     (dwfl_report_module) at its load bias, bias = start - vaddr(pgoff),
 *     where vaddr(pgoff) is the ELF address of the file offset mapped at
 *     start (PT_LOAD arithmetic in argus_elf__offset_to_vaddr()); its
 *     ELF comes from the file cache (struct uw_file) when libdwfl asks;
 *   - "[vdso]" is a memfd copy of our own vDSO, cached the same way;
 *   - dwfl_attach_state() installs uw_callbacks with dwfl_arg = &slot->s,
 *     the sample being unwound.  The slot's Dwfl outlives one sample, so
 *     s is rewritten before each dwfl_getthread_frames().
 *
 * The slot key is a copy of (start, end, pgoff, dev, inode, flags) of
 * every mapping: a new mmap, an exec or a replaced file gives a new key.
 * Slots are evicted least recently used.  Results are memoized
 * (unwind_memo.h), keyed by the slot's unique id.
 *
 * x86_64 DWARF register numbers: 6 = rbp, 7 = rsp, 16 = rip.
 */
#include "unwind.h"
#include "elf_guard.h"
#include "unwind_memo.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define UW_SLOTS ARGUS_UNWIND_SLOTS
#define UW_FILES 256
#define DWARF_RBP 6
#define DWARF_RSP 7
/* An unwind that takes longer is cut where it is and counted
 * (ARGUS_GUARD_UNWIND_CUT): the first unwind through a big library reads
 * its .eh_frame (bounded by elf_guard.h), a few ms; past this, something
 * is wrong and the collector has a ring to drain. */
#define UW_SPLIT_NEAR 8
#define UW_TIME_BUDGET_NS (50ull * 1000 * 1000)

/* The sample being unwound: what the callbacks see. */
struct uw_sample {
	uint64_t ip, sp, bp;
	const uint8_t *copy;    /* copy_len bytes of stack from address sp */
	size_t copy_len;
	pid_t tid;
	struct uw_read_log *log; /* the words served, for the memo */
};

/* A file cached across processes, by (dev, inode): its Elf handle and
 * what libdwfl has read of it (.eh_frame, headers) are opened once, not
 * once per process.  Short-lived processes (a compiler's cc1 and as, run
 * a hundred times by a build) made a new Dwfl each, and opening, mapping
 * and unmapping their files was most of the collector's CPU. */
struct uw_file {
	bool used;              /* false = empty entry */
	bool vdso;              /* "[vdso]": our memfd copy, dev/inode 0 */
	bool exec;              /* ET_EXEC: bias 0 */
	bool no_debuginfo;      /* do not look for a separate debug file */
	uint64_t dev, inode;
	Elf *elf;               /* NULL: not usable (cached "no") */
	int fd;                 /* owned; libelf reads sections through it */
	uint64_t vaddr0;        /* first PT_LOAD's p_vaddr & -p_align */
	uint64_t gen;           /* bumped when the entry is reused */
	uint32_t pins;          /* modules of cached sessions reporting it */
	uint64_t last_use;
	uint64_t session;       /* id of the last session reporting it */
};

/* One reported module: the Elf reference waiting for uw_find_elf, and the
 * file entry (valid while file->gen == file_gen) for uw_find_debuginfo. */
struct uw_mod {
	Elf *elf;
	bool no_debuginfo;      /* the unwinder's opts.no_debuginfo */
	struct uw_file *file;
	uint64_t file_gen;
};

struct uw_slot {
	Dwfl *dwfl;             /* NULL = empty slot */
	uint64_t id;            /* unique per session built (the memo's key) */
	struct uw_mod *mods;    /* module userdata, up to nkeys of them */
	size_t nmods;
	bool attached;          /* dwfl_attach_state() succeeded */
	struct argus_map_key *keys;    /* nkeys entries, the maps this was built for */
	size_t nkeys;
	uint64_t last_use;      /* u->clock at last use, for LRU */
	struct uw_sample s;
};

struct argus_unwinder {
	struct uw_slot slot[UW_SLOTS];
	struct uw_file file[UW_FILES];
	uint64_t clock;
	struct argus_unwinder_stats st;
	struct uw_memo *memo;   /* NULL: unwind every time */
	struct uw_read_log log;
	bool log_valid;         /* log holds the last unwind's words */
	struct argus_unwinder_opts opts;
};

/* Collects frames from dwfl_getthread_frames(). */
struct uw_out {
	uint64_t *ips;
	int n, max;
	uint64_t last_sp;
	bool first;
	uint64_t rbp[UW_MEMO_FRAMES];   /* each caller frame's rbp, if known */
	int nrbp;
	uint64_t rsp[UW_MEMO_FRAMES];   /* each caller frame's rsp, if known */
	int nrsp;
	uint64_t deadline_ns;           /* CLOCK_MONOTONIC; 0 = none */
	bool cut;                       /* stopped by the deadline */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw_sample *s = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;       /* one thread only */
	*thread_argp = s;
	return s->tid;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg,
			  void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Serve a stack word only when all 8 bytes lie inside the copy. */
static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			   void *arg)
{
	struct uw_sample *s = arg;
	uint64_t off;

	(void)dwfl;
	if (!s->copy || addr < s->sp)
		return false;
	off = addr - s->sp;
	if (off > s->copy_len || s->copy_len - off < sizeof(*result))
		return false;
	memcpy(result, s->copy + off, sizeof(*result));
	if (s->log) {
		if (s->log->n < UW_MEMO_READS) {
			s->log->off[s->log->n] = (uint32_t)off;
			s->log->val[s->log->n++] = *result;
		} else {
			s->log->overflow = true;
		}
	}
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw_sample *s = arg;
	Dwarf_Word sp = s->sp, bp = s->bp;

	/* Unknown (0) registers stay undefined rather than "known zero". */
	if (!dwfl_thread_state_registers(thread, DWARF_RSP, 1, &sp))
		return false;
	if (bp && !dwfl_thread_state_registers(thread, DWARF_RBP, 1, &bp))
		return false;
	dwfl_thread_state_register_pc(thread, s->ip);
	return true;
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static void file_clear(struct uw_file *f)
{
	uint64_t gen = f->gen + 1;

	if (f->elf) {
		/* Modules still holding this Elf must not read through an fd
		 * number that may be reused: FDDONE makes libelf fail instead. */
		elf_cntl(f->elf, ELF_C_FDDONE);
		elf_end(f->elf);
	}
	if (f->fd >= 0 && f->used)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->gen = gen;
}

/* The cached file of (dev, inode), opened through pid's mapping m if not
 * cached yet; NULL if it cannot be opened or is no x86_64 ELF.  Only the
 * second answer is cached, so a bad file is not reparsed for every
 * process.  A failure to open is not: it says more about the process than
 * the file (it exited, so /proc/PID/map_files and /proc/PID/root are gone;
 * its path is another file in our mount namespace), and remembering it
 * would leave a library as shared as libc without CFI for every later
 * process until evicted (proc_maps.c does not cache it either). */
static struct uw_file *get_file(struct argus_unwinder *u, uint32_t pid,
				const struct argus_proc_map *m, uint64_t building)
{
	bool vdso = m->flags & ARGUS_PROC_MAP_VDSO;
	struct uw_file *f, *victim = NULL;
	GElf_Ehdr eh;
	size_t phnum;
	int fd;

	u->clock++;
	for (int i = 0; i < UW_FILES; i++) {
		f = &u->file[i];
		if (f->used && f->vdso == vdso && f->dev == m->dev &&
		    f->inode == m->inode) {
			f->last_use = u->clock;
			return f->elf ? f : NULL;
		}
		/* never one the session being built reports: its module would
		 * be dead before its first unwind */
		if (f->used && f->session == building)
			continue;
		/* the least recently used, preferring files no cached session
		 * reports (evicting those would cut its unwinds short) */
		if (!victim || (!f->used && victim->used) ||
		    (victim->used &&
		     (f->pins < victim->pins ||
		      (f->pins == victim->pins && f->last_use < victim->last_use))))
			victim = f;
	}
	/* a process with more files than the cache: the rest go unreported */
	if (!victim)
		return NULL;
	/* open before evicting: a process that has exited cannot be opened
	 * through, and a good cached file must not go for nothing (try again
	 * for the next process) */
	fd = u->opts.open_file ? u->opts.open_file(u->opts.open_ctx, pid, m)
			       : argus_proc_map__open(pid, m);
	if (fd < 0)
		return NULL;
	/* checked before eviction too: a file over the limits is no reason to
	 * lose a good one */
	if (argus_elf_guard__check(fd, &(struct argus_elf_limits){
					   ARGUS_ELF_UNWIND_SECTION_MAX })) {
		close(fd);
		return NULL;
	}
	file_clear(victim);
	f = victim;
	f->used = true;
	f->vdso = vdso;
	f->dev = m->dev;
	f->inode = m->inode;
	f->fd = -1;
	f->last_use = u->clock;
	/* ELF_C_READ, not an mmap: section data is pread() on demand and kept
	 * in memory, so a library rewritten in place while cached can make an
	 * unwind fail but can never SIGBUS the collector. */
	u->st.files_opened++;
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f->elf || !gelf_getehdr(f->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) ||
	    elf_getphdrnum(f->elf, &phnum)) {
		if (f->elf)
			elf_end(f->elf);
		f->elf = NULL;
		close(fd);
		return NULL;
	}
	f->fd = fd;
	f->exec = eh.e_type == ET_EXEC;
	f->vaddr0 = 0;
	for (size_t i = 0, load = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, i, &ph))
			continue;
		/* libdwfl's own base: the first PT_LOAD's vaddr, aligned down */
		if (ph.p_type == PT_LOAD && !load++)
			f->vaddr0 = ph.p_vaddr & -ph.p_align; /* as libdwfl: p_align 0 gives 0 */
		/* With .eh_frame (and its index) the file has CFI for all its
		 * code, as the x86_64 ABI asks, so a separate .debug_frame
		 * could not unwind further: when .eh_frame fails it is because
		 * the stack copy ran out.  Not searching for one matters: with
		 * libc6-dbg installed, libdwfl inflated libc's whole compressed
		 * DWARF once per process, a third of the collector's CPU. */
		if (ph.p_type == PT_GNU_EH_FRAME)
			f->no_debuginfo = true;
	}
	return f;
}

/* Two mappings of one load of one file (split text: same file, same
 * load address). */
static bool same_load(const struct argus_proc_map *a, const struct argus_proc_map *b)
{
	return a->inode == b->inode && a->dev == b->dev &&
	       a->start - a->pgoff == b->start - b->pgoff && !strcmp(a->path, b->path);
}

/*
 * Report each file once, as a lazy module (dwfl_report_module): libdwfl
 * asks uw_find_elf for the ELF only when an unwind reaches that module.
 * libdwfl's load bias of such a module is low - vaddr0 (vaddr0: the first
 * PT_LOAD's aligned vaddr), so low = bias + vaddr0 gives it our bias,
 * bias = start - vaddr(pgoff) of the executable mapping.
 */
static void report_maps(struct argus_unwinder *u, struct uw_slot *sl,
			uint32_t pid, const struct argus_proc_map *maps,
			size_t nmaps)
{
	for (size_t i = 0; i < nmaps; i++) {
		const struct argus_proc_map *m = &maps[i];
		struct uw_file *f;
		struct uw_mod *um;
		Dwfl_Module *mod;
		const char *name;
		uint64_t vaddr, bias, high = m->end;
		void **ud;
		bool dup = false;

		/* A file mapped executable twice (split text) is one module,
		 * spanning both.  Its mappings are neighbours in address
		 * order, so only UW_SPLIT_NEAR of them are compared: all
		 * pairs made 16,000 mappings of one file 256 M comparisons. */
		for (size_t j = i > UW_SPLIT_NEAR ? i - UW_SPLIT_NEAR : 0; j < i && !dup; j++)
			dup = same_load(&maps[j], m);
		if (dup)
			continue;
		for (size_t j = i + 1; j < nmaps && j <= i + UW_SPLIT_NEAR; j++)
			if (same_load(&maps[j], m))
				high = maps[j].end;
		f = get_file(u, pid, m, sl->id);
		if (!f || argus_elf__offset_to_vaddr((struct Elf *)f->elf,
						     m->pgoff, &vaddr))
			continue;
		bias = f->exec ? 0 : m->start - vaddr;
		if (bias + f->vaddr0 >= high)
			continue;
		name = strrchr(m->path, '/');
		name = name ? name + 1 : m->path;
		mod = dwfl_report_module(sl->dwfl, name, bias + f->vaddr0, high);
		if (!mod)
			continue;
		f->session = sl->id;
		um = &sl->mods[sl->nmods++];
		/* our own reference (Elf handles are refcounted): the file may
		 * leave the cache before libdwfl asks for it */
		um->elf = elf_begin(-1, ELF_C_READ, f->elf);
		um->file = f;
		um->file_gen = f->gen;
		um->no_debuginfo = u->opts.no_debuginfo;
		f->pins++;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = um;
	}
}

/* libdwfl wants module mod's ELF: hand over the reference report_maps
 * took (libdwfl elf_end()s it at dwfl_end). */
static int uw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct uw_mod *um = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	if (um) {
		*elfp = um->elf;
		um->elf = NULL;
	}
	return -1;
}

/* .debug_frame is looked for only when .eh_frame could not unwind a frame
 * (often: the stack copy ran out), and only for files without .eh_frame
 * (get_file).  The search is several open()s of /usr/lib/debug paths, so
 * its "none" is remembered per cached file. */
static int uw_find_debuginfo(Dwfl_Module *mod, void **userdata,
			     const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct uw_mod *um = *userdata;
	struct uw_file *f = um && um->file->gen == um->file_gen ? um->file : NULL;
	int fd;

	if ((f && f->no_debuginfo) || (um && um->no_debuginfo))
		return -1;
	/* only root's /usr/lib/debug, by build-id: .gnu_debuglink names
	 * come from the user's file (elf_guard.h) */
	fd = argus_find_debuginfo(mod, userdata, modname, base, file_name,
				  debuglink_file, debuglink_crc,
				  debuginfo_file_name);
	if (fd < 0 && f)
		f->no_debuginfo = true;
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = uw_find_elf,
	.find_debuginfo = uw_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* dwfl_getmodules callback: drop references libdwfl never asked for. */
static int drop_unused(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	struct uw_mod *um = *userdata;

	(void)mod;
	(void)name;
	(void)start;
	(void)arg;
	if (um && um->elf) {
		elf_end(um->elf);
		um->elf = NULL;
	}
	return DWARF_CB_OK;
}

static void slot_clear(struct uw_slot *sl)
{
	for (size_t i = 0; i < sl->nmods; i++)
		if (sl->mods[i].file->gen == sl->mods[i].file_gen &&
		    sl->mods[i].file->pins)
			sl->mods[i].file->pins--;
	if (sl->dwfl) {
		dwfl_getmodules(sl->dwfl, drop_unused, NULL, 0);
		dwfl_end(sl->dwfl);
	}
	free(sl->keys);
	free(sl->mods);
	memset(sl, 0, sizeof(*sl));
}

/* Slot sl was built for this maps layout. */
static bool slot_fits(const struct uw_slot *sl, const struct argus_proc_map *maps,
		      size_t nmaps)
{
	return sl->dwfl && argus_map_keys__match(sl->keys, sl->nkeys, maps, nmaps);
}

/* The slot for this maps layout, built if needed; NULL on ENOMEM. */
static struct uw_slot *get_slot(struct argus_unwinder *u, uint32_t pid,
				const struct argus_proc_map *maps,
				size_t nmaps)
{
	struct uw_slot *sl, *victim = &u->slot[0];
	struct argus_map_key *keys;

	u->clock++;
	for (int i = 0; i < UW_SLOTS; i++) {
		sl = &u->slot[i];
		if (slot_fits(sl, maps, nmaps)) {
			sl->last_use = u->clock;
			return sl;
		}
		if (!sl->dwfl || (victim->dwfl &&
				  sl->last_use < victim->last_use))
			victim = sl;
	}
	keys = argus_map_keys__new(maps, nmaps);
	if (!keys)
		return NULL;

	slot_clear(victim);
	sl = victim;
	sl->mods = calloc(nmaps ? nmaps : 1, sizeof(*sl->mods));
	sl->dwfl = sl->mods ? dwfl_begin(&dwfl_cbs) : NULL;
	if (!sl->dwfl) {
		free(sl->mods);
		sl->mods = NULL;
		free(keys);
		return NULL;
	}
	sl->keys = keys;
	sl->nkeys = nmaps;
	sl->last_use = u->clock;
	sl->id = ++u->st.sessions;
	dwfl_report_begin(sl->dwfl);
	report_maps(u, sl, pid, maps, nmaps);
	dwfl_report_end(sl->dwfl, NULL, NULL);
	/* Fails when no x86_64 module could be reported: ip-only stacks. */
	sl->attached = dwfl_attach_state(sl->dwfl, NULL, pid ? pid : 1,
					 &uw_callbacks, &sl->s);
	return sl;
}

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	struct uw_out *o = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp, bp;
	bool act;

	if (o->first) {         /* ip itself, already in ips[0] */
		o->first = false;
		return DWARF_CB_OK;
	}
	if (o->deadline_ns && mono_ns() > o->deadline_ns) {
		o->cut = true;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_frame_pc(f, &pc, &act) || pc == 0)
		return DWARF_CB_ABORT;
	/* Each caller's frame must sit above its callee's. */
	if (dwfl_frame_reg(f, DWARF_RSP, &sp) == 0) {
		if (sp <= o->last_sp)
			return DWARF_CB_ABORT;
		o->last_sp = sp;
		if (o->nrsp < UW_MEMO_FRAMES)
			o->rsp[o->nrsp++] = sp;
	}
	if (o->nrbp < UW_MEMO_FRAMES && dwfl_frame_reg(f, DWARF_RBP, &bp) == 0)
		o->rbp[o->nrbp++] = bp;
	o->ips[o->n++] = pc;
	return o->n < o->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Keep in the read log only the words the frames depend on: return
 * addresses (they became pcs), saved frame pointers (they became a
 * caller's rbp), saved stack pointers (they became a caller's rsp) and
 * zeros (a zero return address ends the walk).  With the same ip/sp/bp,
 * session and copy length, and the same values at those offsets, every
 * frame's CFA and return address come out the same, so the frames do.
 * A caller's rsp is read from the stack where a CFA is itself a stored
 * word: a signal frame (glibc's __restore_rt takes it from the
 * ucontext) and GCC's DRAP realignment (DW_OP_deref of the saved r10).
 * Other saved registers (rbx, r12...) only matter to a CFA rule based on
 * them, rare hand-written code (ld.so's _dl_runtime_resolve uses rbx);
 * there the memo could answer for a stack that would unwind differently.
 * That is the price of hitting on loops whose saved counters change
 * every time.
 */
static void keep_control_words(struct uw_read_log *log, const struct uw_out *o)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < log->n; i++) {
		uint64_t v = log->val[i];
		bool keep = v == 0;

		for (int j = 1; !keep && j < o->n; j++)
			keep = o->ips[j] == v;
		for (int j = 0; !keep && j < o->nrbp; j++)
			keep = o->rbp[j] == v;
		for (int j = 0; !keep && j < o->nrsp; j++)
			keep = o->rsp[j] == v;
		if (keep) {
			log->off[k] = log->off[i];
			log->val[k++] = v;
		}
	}
	log->n = k;
}

struct argus_unwinder *argus_unwinder__new_opts(const struct argus_unwinder_opts *opts)
{
	struct argus_unwinder *u = calloc(1, sizeof(*u));

	if (u && opts)
		memcpy(&u->opts, opts, opts->sz < sizeof(u->opts) ? opts->sz
								   : sizeof(u->opts));
	if (u)
		u->opts.sz = sizeof(u->opts);
	if (u && !u->opts.no_memo && !(u->memo = uw_memo_new())) {
		free(u);
		u = NULL;
	}
	if (!u)
		errno = ENOMEM;
	return u;
}

struct argus_unwinder *argus_unwinder__new(void)
{
	return argus_unwinder__new_opts(NULL);
}

size_t argus_unwinder__missing(struct argus_unwinder *u,
			       const struct argus_proc_map *maps, size_t nmaps,
			       uint32_t *idx, size_t max)
{
	size_t n = 0;

	for (int i = 0; u && i < UW_SLOTS; i++)
		if (slot_fits(&u->slot[i], maps, nmaps))
			return 0;
	for (size_t i = 0; u && i < nmaps && n < max; i++) {
		const struct argus_proc_map *m = &maps[i];
		bool vdso = m->flags & ARGUS_PROC_MAP_VDSO, have = false;

		for (int j = 0; j < UW_FILES && !have; j++) {
			const struct uw_file *f = &u->file[j];

			have = f->used && f->vdso == vdso && f->dev == m->dev &&
			       f->inode == m->inode;
		}
		/* one file mapped several times is asked for once */
		for (size_t k = 0; k < n && !have; k++)
			have = maps[idx[k]].dev == m->dev &&
			       maps[idx[k]].inode == m->inode &&
			       !(maps[idx[k]].flags & ARGUS_PROC_MAP_VDSO) == !vdso;
		if (!have)
			idx[n++] = (uint32_t)i;
	}
	return n;
}

int argus_unwinder__prepare(struct argus_unwinder *u, uint32_t pid,
			    const struct argus_proc_map *maps, size_t nmaps)
{
	if (!u || (nmaps && !maps))
		return -EINVAL;
	return get_slot(u, pid, maps, nmaps) ? 0 : -ENOMEM;
}

bool argus_unwinder__last_reads(const struct argus_unwinder *u,
				const struct uw_read_log **log)
{
	if (!u || !u->log_valid)
		return false;
	*log = &u->log;
	return true;
}

void argus_unwinder__free(struct argus_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UW_SLOTS; i++)
		slot_clear(&u->slot[i]);
	for (int i = 0; i < UW_FILES; i++)
		file_clear(&u->file[i]);
	uw_memo_free(u->memo);
	free(u);
}

int argus_unwinder__unwind(struct argus_unwinder *u, uint32_t pid,
			   const struct argus_proc_map *maps, size_t nmaps,
			   uint64_t ip, uint64_t sp, uint64_t bp,
			   const uint8_t *copy, size_t copy_len,
			   uint64_t *ips, int max)
{
	struct uw_out o = { .ips = ips, .n = 1, .max = max, .last_sp = sp, .first = true };
	struct uw_memo_key key;
	struct uw_slot *sl;
	int n;

	if (!u || !ips || max < 1 || (nmaps && !maps))
		return -EINVAL;
	u->log_valid = false;
	ips[0] = ip;
	if (max == 1 || !sp)
		return 1;
	sl = get_slot(u, pid, maps, nmaps);
	if (!sl)
		return -ENOMEM;
	if (!sl->attached)
		return 1;
	key = (struct uw_memo_key){ sl->id, ip, sp, bp,
				    copy ? (uint32_t)copy_len : 0, (uint32_t)max };
	if (copy_len <= UINT32_MAX && u->memo &&
	    (n = uw_memo_find(u->memo, &key, copy, ips))) {
		u->st.memo_hits++;
		return n;
	}
	sl->s.ip = ip;
	sl->s.sp = sp;
	sl->s.bp = bp;
	sl->s.copy = copy;
	sl->s.copy_len = copy ? copy_len : 0;
	sl->s.tid = pid ? pid : 1;
	u->log.n = 0;
	u->log.overflow = false;
	sl->s.log = &u->log;
	/* Errors only end the walk early: whatever was collected stands. */
	o.deadline_ns = mono_ns() + UW_TIME_BUDGET_NS;
	dwfl_getthread_frames(sl->dwfl, sl->s.tid, frame_cb, &o);
	if (o.cut)
		argus_guard__count(ARGUS_GUARD_UNWIND_CUT, 1);
	sl->s.copy = NULL;
	sl->s.log = NULL;
	u->st.unwinds++;
	if (copy_len <= UINT32_MAX && !u->log.overflow && !o.cut) {
		keep_control_words(&u->log, &o);
		u->log_valid = true;
		if (u->memo)
			uw_memo_store(u->memo, &key, &u->log, ips, o.n);
	}
	return o.n;
}

void argus_unwinder__stats(const struct argus_unwinder *u,
			   struct argus_unwinder_stats *st)
{
	if (st)
		*st = u ? u->st : (struct argus_unwinder_stats){ 0 };
}

int argus_unwinder__drop_deleted(struct argus_unwinder *u)
{
	struct stat st;
	int n = 0;

	for (int i = 0; u && i < UW_FILES; i++) {
		struct uw_file *f = &u->file[i];

		/* pinned: a cached session reports it, and the processes of that
		 * layout may still map it (then they hold the space anyway) */
		if (!f->used || f->vdso || f->fd < 0 || f->pins ||
		    fstat(f->fd, &st) || st.st_nlink)
			continue;
		file_clear(f);
		n++;
	}
	return n;
}

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct argus_unwinder *shared;

int argus_unwind(uint32_t pid, const struct argus_proc_map *maps,
		 size_t nmaps, uint64_t ip, uint64_t sp, uint64_t bp,
		 const uint8_t *copy, size_t copy_len, uint64_t *ips, int max)
{
	int ret;

	pthread_mutex_lock(&shared_lock);
	if (!shared)
		shared = argus_unwinder__new();
	ret = shared ? argus_unwinder__unwind(shared, pid, maps, nmaps, ip,
					      sp, bp, copy, copy_len, ips,
					      max)
		     : -ENOMEM;
	pthread_mutex_unlock(&shared_lock);
	return ret;
}
