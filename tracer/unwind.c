/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.c - replay a user-stack unwind with libdwfl over a stack copy.
 *
 * One cache slot (struct uw_slot) = one Dwfl session for one maps layout:
 *   - every executable file mapping is reported with dwfl_report_elf() at
 *     its load bias, bias = start - vaddr(pgoff), where vaddr(pgoff) is
 *     the ELF address of the file offset mapped at start (PT_LOAD
 *     arithmetic in argus_elf__offset_to_vaddr());
 *   - "[vdso]" is reported from a memfd copy of our own vDSO;
 *   - dwfl_attach_state() installs uw_callbacks with dwfl_arg = &slot->s,
 *     the sample being unwound.  The slot's Dwfl outlives one sample, so
 *     s is rewritten before each dwfl_getthread_frames().
 *
 * The slot key is a copy of (start, end, pgoff, dev, inode, flags,
 * hash(path)) of every mapping: a new mmap, an exec or a replaced file
 * gives a new key.  Slots are evicted least recently used.
 *
 * x86_64 DWARF register numbers: 6 = rbp, 7 = rsp, 16 = rip.
 */
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UW_SLOTS 8
#define DWARF_RBP 6
#define DWARF_RSP 7

/* The sample being unwound: what the callbacks see. */
struct uw_sample {
	uint64_t ip, sp, bp;
	const uint8_t *copy;    /* copy_len bytes of stack from address sp */
	size_t copy_len;
	pid_t tid;
};

struct uw_key {
	uint64_t start, end, pgoff, dev, inode;
	uint64_t flags;
	uint64_t path_hash;
};

struct uw_slot {
	Dwfl *dwfl;             /* NULL = empty slot */
	bool attached;          /* dwfl_attach_state() succeeded */
	struct uw_key *keys;    /* nkeys entries, the maps this was built for */
	size_t nkeys;
	uint64_t last_use;      /* u->clock at last use, for LRU */
	struct uw_sample s;
};

struct argus_unwinder {
	struct uw_slot slot[UW_SLOTS];
	uint64_t clock;
};

/* Collects frames from dwfl_getthread_frames(). */
struct uw_out {
	uint64_t *ips;
	int n, max;
	uint64_t last_sp;
	bool first;
};

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
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

/* Load bias of mapping m of the ELF on fd; false if unusable. */
static bool map_bias(int fd, const struct argus_proc_map *m, uint64_t *bias)
{
	GElf_Ehdr eh;
	uint64_t vaddr;
	bool ok = false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (!elf)
		return false;
	if (gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_machine == EM_X86_64 &&
	    (eh.e_type == ET_DYN || eh.e_type == ET_EXEC) &&
	    !argus_elf__offset_to_vaddr((struct Elf *)elf, m->pgoff, &vaddr)) {
		*bias = eh.e_type == ET_EXEC ? 0 : m->start - vaddr;
		ok = true;
	}
	elf_end(elf);
	return ok;
}

static void report_maps(Dwfl *dwfl, uint32_t pid,
			const struct argus_proc_map *maps, size_t nmaps)
{
	for (size_t i = 0; i < nmaps; i++) {
		const struct argus_proc_map *m = &maps[i];
		const char *name;
		uint64_t bias = 0;
		bool dup = false;
		int fd;

		/* A file mapped executable twice (split text) is one module. */
		for (size_t j = 0; j < i && !dup; j++)
			dup = maps[j].inode == m->inode && maps[j].dev == m->dev &&
			      maps[j].start - maps[j].pgoff ==
				      m->start - m->pgoff &&
			      !strcmp(maps[j].path, m->path);
		if (dup)
			continue;
		fd = argus_proc_map__open(pid, m);
		if (fd < 0)
			continue;
		if (!map_bias(fd, m, &bias)) {
			close(fd);
			continue;
		}
		name = strrchr(m->path, '/');
		name = name ? name + 1 : m->path;
		/* add_p_vaddr=true: for ET_DYN, base is the load bias. */
		if (!dwfl_report_elf(dwfl, name, m->path, fd, bias, true))
			close(fd);      /* not consumed on failure */
	}
}

static void slot_clear(struct uw_slot *sl)
{
	if (sl->dwfl)
		dwfl_end(sl->dwfl);
	free(sl->keys);
	memset(sl, 0, sizeof(*sl));
}

static struct uw_key *make_keys(const struct argus_proc_map *maps,
				size_t nmaps)
{
	struct uw_key *k = calloc(nmaps ? nmaps : 1, sizeof(*k));

	if (!k)
		return NULL;
	for (size_t i = 0; i < nmaps; i++) {
		k[i].start = maps[i].start;
		k[i].end = maps[i].end;
		k[i].pgoff = maps[i].pgoff;
		k[i].dev = maps[i].dev;
		k[i].inode = maps[i].inode;
		k[i].flags = maps[i].flags;
		k[i].path_hash = maps[i].path ? hash_str(maps[i].path) : 0;
	}
	return k;
}

/* The slot for this maps layout, built if needed; NULL on ENOMEM. */
static struct uw_slot *get_slot(struct argus_unwinder *u, uint32_t pid,
				const struct argus_proc_map *maps,
				size_t nmaps)
{
	struct uw_slot *sl, *victim = &u->slot[0];
	struct uw_key *keys = make_keys(maps, nmaps);

	if (!keys)
		return NULL;
	u->clock++;
	for (int i = 0; i < UW_SLOTS; i++) {
		sl = &u->slot[i];
		if (sl->dwfl && sl->nkeys == nmaps &&
		    !memcmp(sl->keys, keys, nmaps * sizeof(*keys))) {
			free(keys);
			sl->last_use = u->clock;
			return sl;
		}
		if (!sl->dwfl || (victim->dwfl &&
				  sl->last_use < victim->last_use))
			victim = sl;
	}

	slot_clear(victim);
	sl = victim;
	sl->dwfl = dwfl_begin(&dwfl_cbs);
	if (!sl->dwfl) {
		free(keys);
		return NULL;
	}
	sl->keys = keys;
	sl->nkeys = nmaps;
	sl->last_use = u->clock;
	dwfl_report_begin(sl->dwfl);
	report_maps(sl->dwfl, pid, maps, nmaps);
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
	Dwarf_Word sp;
	bool act;

	if (o->first) {         /* ip itself, already in ips[0] */
		o->first = false;
		return DWARF_CB_OK;
	}
	if (!dwfl_frame_pc(f, &pc, &act) || pc == 0)
		return DWARF_CB_ABORT;
	/* Each caller's frame must sit above its callee's. */
	if (dwfl_frame_reg(f, DWARF_RSP, &sp) == 0) {
		if (sp <= o->last_sp)
			return DWARF_CB_ABORT;
		o->last_sp = sp;
	}
	o->ips[o->n++] = pc;
	return o->n < o->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

struct argus_unwinder *argus_unwinder__new(void)
{
	struct argus_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		errno = ENOMEM;
	return u;
}

void argus_unwinder__free(struct argus_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UW_SLOTS; i++)
		slot_clear(&u->slot[i]);
	free(u);
}

int argus_unwinder__unwind(struct argus_unwinder *u, uint32_t pid,
			   const struct argus_proc_map *maps, size_t nmaps,
			   uint64_t ip, uint64_t sp, uint64_t bp,
			   const uint8_t *copy, size_t copy_len,
			   uint64_t *ips, int max)
{
	struct uw_out o = { ips, 1, max, sp, true };
	struct uw_slot *sl;

	if (!u || !ips || max < 1 || (nmaps && !maps))
		return -EINVAL;
	ips[0] = ip;
	if (max == 1 || !sp)
		return 1;
	sl = get_slot(u, pid, maps, nmaps);
	if (!sl)
		return -ENOMEM;
	if (!sl->attached)
		return 1;
	sl->s.ip = ip;
	sl->s.sp = sp;
	sl->s.bp = bp;
	sl->s.copy = copy;
	sl->s.copy_len = copy ? copy_len : 0;
	sl->s.tid = pid ? pid : 1;
	/* Errors only end the walk early: whatever was collected stands. */
	dwfl_getthread_frames(sl->dwfl, sl->s.tid, frame_cb, &o);
	sl->s.copy = NULL;
	return o.n;
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
