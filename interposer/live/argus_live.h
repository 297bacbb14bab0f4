/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * argus_live.h - reach into a running process: `argus inject` (dlopen the
 * interposer in it) and `argus instrument` (Detours-style entry patches).
 * docs/interposer.md, "Live: inject and instrument", is the prose version.
 *
 * Three layers, each usable alone:
 *   - live_proc.c   a process under ptrace: every thread seized, stopped
 *                   and resumed as a group, memory through /proc/PID/mem,
 *                   and a function call run on one stopped thread
 *                   (argus_live__call) that leaves the thread exactly as it
 *                   found it, an interrupted syscall included;
 *   - live_elf.c    /proc/PID/maps and ELF symbols (libelf): a symbol's
 *                   address in the target;
 *   - live_patch.c  the relocator and the trampoline writer: pure functions
 *                   over byte buffers (no process), then apply/remove/list
 *                   on a live process.
 *
 * Library rules (STYLE.md): int functions return 0 or -errno; where a
 * reason helps, a caller's `why` buffer gets one line of text; nothing is
 * printed.  Addresses are the target's (uint64_t), tids the kernel's.
 */
#ifndef ARGUS_LIVE_H
#define ARGUS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARGUS_LIVE_WHY 1024	/* size of a `why` buffer */

/* ---- live_proc.c: a process under ptrace ---- */

struct argus_live;

/* PTRACE_SEIZE every thread of pid (no stop yet: the process runs on),
 * with PTRACE_O_TRACEEXEC, and note its image and credentials
 * (argus_live__ident).  -ESRCH dead, -EPERM not allowed or already traced
 * (why says by whom).
 *
 * Exec rule (live_proc.c, top): once the process has execed or changed
 * its credentials, nothing is written into it any more: no memory
 * (argus_live__write), no register restore (argus_live__call); those
 * return -ENOEXEC with why ("the target (process P) execed NAME during
 * the call; nothing was restored") and close detaches without restoring. */
int argus_live__open(pid_t pid, struct argus_live **out, char *why);

/* What a process is: its executable's inode and its credentials. */
struct argus_live_ident {
	uint64_t exe_dev, exe_ino;	/* stat of /proc/PID/exe */
	char creds[192];	/* the Uid: and Gid: lines of /proc/PID/status */
};
/* Read pid's; 0 or -errno (-ESRCH gone). */
int argus_live__ident(pid_t pid, struct argus_live_ident *id);
/* Still the image and credentials of open time (and before non-NULL: the
 * same as before, read before open, e.g. when the symbols were looked up)?
 * 0, or -ENOEXEC with why (and the exec rule applies from then on). */
int argus_live__check(struct argus_live *l, const struct argus_live_ident *before, char *why);
/* Is the code at addr in pid from a file only root can have written (a
 * regular file owned by root, not writable by group or others, read
 * through /proc/PID/map_files: the inode mapped)?  0, or -EPERM with why
 * (a user's own "libc.so.6" mapped before the real one: its dlopen would
 * run as the call root asked for). */
int argus_live__trusted_code(pid_t pid, uint64_t addr, char *why);
/* Resume what is stopped and detach every thread; accepts NULL. */
void argus_live__close(struct argus_live *l);
/* Stop one thread (PTRACE_INTERRUPT, wait for the stop). */
int argus_live__stop(struct argus_live *l, pid_t tid);
/* Stop one thread, the main one if it can, and say which. */
int argus_live__stop_one(struct argus_live *l, pid_t *tid);
/* Stop every thread, including ones created meanwhile. */
int argus_live__stop_all(struct argus_live *l);
/* Resume every stopped thread (a signal that arrived during our stop is
 * handed back to it). */
int argus_live__resume_all(struct argus_live *l);
/* The threads (after stop_all: all of them, stopped); *pc gets each one's
 * rip and *sp its rsp, n the count.  Arrays of at most cap. */
int argus_live__pcs(struct argus_live *l, pid_t *tids, uint64_t *pc, uint64_t *sp,
		    size_t cap, size_t *n);
pid_t argus_live__pid(const struct argus_live *l);

int argus_live__read(struct argus_live *l, uint64_t addr, void *buf, size_t len);
/* Writes through /proc/PID/mem: also into read-only text (the kernel
 * breaks copy-on-write for a tracer), never into the file behind it.
 * -ENOEXEC after an exec or a credential change (the exec rule). */
int argus_live__write(struct argus_live *l, uint64_t addr, const void *buf, size_t len);

struct argus_live_call {
	uint64_t fn;		/* the function to run in the target */
	uint64_t args[6];	/* rdi, rsi, rdx, rcx, r8, r9 */
	const void *data;	/* copied onto the thread's stack below its red zone */
	size_t data_len;	/* at most 4096 */
	int data_arg;		/* args[data_arg] = the copy's address; -1 none */
	uint32_t timeout_ms;	/* 0: 5000 */
};
/* Run c->fn(args) on the stopped thread tid and return its rax in *ret.
 * The thread is left stopped with every register (general, FP/AVX state)
 * as before; a syscall it was interrupted in restarts when it resumes.
 * -ETIMEDOUT: the call did not return in time (registers restored anyway,
 * the call abandoned: a lock it took may stay taken); -EFAULT: it crashed
 * (why says where); -ENOEXEC: the process execed or changed credentials
 * during the call: nothing was restored (the exec rule). */
int argus_live__call(struct argus_live *l, pid_t tid, const struct argus_live_call *c,
		     uint64_t *ret, char *why);

/* ---- live_elf.c: maps and symbols ---- */

struct argus_live_map {
	uint64_t start, end, off;
	uint64_t dev, ino;	/* makedev(major, minor) and inode as maps shows
				 * them; 0 anonymous */
	char perms[5];
	char path[512];		/* "" anonymous; "[long path]" when the path
				 * does not fit (never matched, never opened) */
};

/* /proc/PID/maps into a malloc'd array.  Read whole-line (a path another
 * user chose cannot end in what parses as a line of its own), at most
 * ARGUS_LIVE_MAPS_MAX lines of at most ARGUS_LIVE_MAPS_LINE bytes each
 * (longer lines, which the kernel never writes, are dropped whole). */
#define ARGUS_LIVE_MAPS_MAX (1u << 18)
#define ARGUS_LIVE_MAPS_LINE 8192
int argus_live__maps(pid_t pid, struct argus_live_map **maps, size_t *n);

struct argus_live_sym {
	uint64_t addr;		/* in the target */
	uint64_t size;		/* 0 unknown */
	uint64_t bias;		/* load bias of its file */
	char file[512];		/* the mapped file it is in */
	char name[128];		/* the symbol ("" none) */
	bool dynsym_only;	/* the file has no .symtab (stripped) */
	uint64_t dev, ino;	/* the file the symbol was read from (fstat of
				 * the fd opened through its mapping; 0 none
				 * read): --via uprobe probes only this file */
};

/* Which mapped file `lib` names: an absolute path, a basename, or a prefix
 * of one ending at '.' or '-' ("libz" matches libz.so.1); NULL or "" the
 * main executable.  -ENOENT not mapped. */
int argus_live__find_file(pid_t pid, const struct argus_live_map *maps, size_t n,
			  const char *lib, char *path, size_t pathlen, uint64_t *bias);
/* SYMBOL in lib (see find_file): .symtab, else .dynsym (default version).
 * The file is opened through its mapping (/proc/PID/map_files, checked:
 * a regular file with the maps line's (dev, inode)) and must pass
 * argus_elf_guard__check() (symbols/elf_guard.h) before libelf reads it:
 * -EFBIG over the limits, -ENOEXEC no x86-64 ELF.  -ENOENT with why. */
int argus_live__sym(pid_t pid, const char *lib, const char *symbol, struct argus_live_sym *s,
		    char *why);
/* An address: "0xADDR" (absolute) or "LIB+0xOFF" (OFF a virtual address as
 * readelf shows it); fills the enclosing symbol's name and size when there
 * is one. */
int argus_live__addr(pid_t pid, const char *spec, struct argus_live_sym *s, char *why);
/* A symbol's value in an ELF file on disk (for the target's libc and the
 * interposer: the caller adds the bias), opened with argus_open_untrusted()
 * and guarded as above.  0 or -ENOENT (-EFBIG, -ENOEXEC). */
int argus_live__file_sym(const char *path, const char *symbol, uint64_t *value, uint64_t *size,
			 bool *dynsym_only);

/* ---- live_bind.c: after inject, the lock calls into the wrappers ---- */

struct argus_live_bind {
	unsigned files;         /* files with a slot rewritten */
	unsigned slots;         /* GOT slots rewritten */
	unsigned functions;     /* distinct wrappers they now reach */
};
/* Point every JUMP_SLOT/GLOB_DAT slot of the process's mapped files (not
 * the interposer, the loader or libc) whose symbol is a lock-family
 * function (pthread_mutex_*, pthread_rwlock_*, pthread_cond_*, sem_*)
 * that the interposer at path ipose (mapped in the process) defines, of
 * the same version, at its definition: what LD_PRELOAD would have bound.
 * Every thread must be stopped (argus_live__stop_all).  0, or -errno with
 * why. */
int argus_live__bind(struct argus_live *l, const char *ipose, struct argus_live_bind *st, char *why);

/* ---- live_patch.c: trampolines ---- */

enum argus_live_kind {
	ARGUS_LIVE_BOUNDARY = 1,
	ARGUS_LIVE_ENQUEUE,
	ARGUS_LIVE_BEGIN,	/* also --as dequeue */
	ARGUS_LIVE_END,
	ARGUS_LIVE_COUNT,	/* no hook: the hit counter only */
};
const char *argus_live__kind_name(enum argus_live_kind k);
/* The argus_work_* function a kind calls (NULL for COUNT). */
const char *argus_live__kind_hook(enum argus_live_kind k);

/* The trampoline: two pages within +-2 GiB of the function, the header
 * (rw-: the hit counter is written by the code) and the code (r-x: no
 * page is writable and executable).  The header makes --remove and --list
 * self-contained: no state file. */
#define ARGUS_LIVE_MAGIC "ARGUSTR1"
#define ARGUS_LIVE_CODE_OFF 4096	/* the code page */
#define ARGUS_LIVE_TRAMP_BYTES 8192	/* both pages */
struct argus_live_tramp_hdr {
	char magic[8];		/* ARGUS_LIVE_MAGIC */
	uint64_t func;		/* the patched function's address */
	uint64_t hits;		/* incremented (lock inc) on every entry */
	uint64_t hook;		/* the argus_work_* called, 0 none */
	uint8_t len;		/* bytes replaced at func (>= 5) */
	uint8_t kind;		/* enum argus_live_kind */
	uint8_t pad[6];
	uint8_t orig[32];	/* the original bytes at func */
	char name[128];		/* "LIB:SYMBOL" for --list */
	uint64_t ret_hook;	/* --at-return: the argus_work_* called at the
				 * function's return, 0 none */
	uint64_t inflight;	/* calls whose return goes through the code page
				 * now (interposer/live_ret.c counts them) */
	uint8_t ret_kind;	/* enum argus_live_kind of ret_hook */
	uint8_t reserved[39];
};
_Static_assert(sizeof(struct argus_live_tramp_hdr) == 256, "hdr size");

/* Return hooks (`--at-return KIND`, interposer/live_ret.c): at the entry
 * the trampoline calls ret_enter(item, &return address, stub, header,
 * hook), which saves the return address on a per-thread shadow stack of
 * ARGUS_LIVE_RET_DEPTH frames and puts the stub's address in its place;
 * the function returns into the stub, which calls ret_leave(sp): hook(item)
 * and the saved address to jump to.  Addresses in the target. */
#define ARGUS_LIVE_RET_DEPTH 64
struct argus_live_ret {
	uint64_t enter;		/* argus_live_ret_enter */
	uint64_t leave;		/* argus_live_ret_leave */
	uint64_t hook;		/* argus_work_* of kind */
	enum argus_live_kind kind;
};

/* What relocating a function's first instructions needs: its bytes. */
struct argus_live_plan {
	uint64_t func;		/* address of the entry */
	uint8_t len;		/* bytes displaced: whole instructions, >= 5 */
	uint8_t orig[32];
	bool call_inside;	/* a displaced call returns inside them (call *%rax
				 * at +0): a thread in its callee has a return
				 * address there, and its stack is checked too */
};

/* Decide how many whole instructions to displace (>= 5 bytes) from body
 * (the function's first body_len bytes, at func; size = the function's
 * size, 0 unknown), and check the rest of the body: refuses (-EINVAL, why)
 * a function that ends before 5 bytes, an instruction that cannot move,
 * and a jump anywhere in the body whose target is inside the displaced
 * bytes (other than their first byte). */
int argus_live__plan(const uint8_t *body, size_t body_len, uint64_t func, uint64_t size,
		     struct argus_live_plan *p, char *why);
/* The trampoline's bytes for plan p placed at page (page_len bytes,
 * at least ARGUS_LIVE_TRAMP_BYTES): header, counter, the hook call (hook 0: none), the
 * displaced instructions relocated for their new address, a jump back.
 * -ERANGE (why) when a RIP-relative target is out of reach from page. */
int argus_live__tramp(const struct argus_live_plan *p, uint64_t page, uint64_t hook,
		      enum argus_live_kind kind, const char *name, uint8_t *out, size_t page_len,
		      char *why);
/* The same, with a return hook too (ret NULL: none). */
int argus_live__tramp_ret(const struct argus_live_plan *p, uint64_t page, uint64_t hook,
			  enum argus_live_kind kind, const struct argus_live_ret *ret,
			  const char *name, uint8_t *out, size_t page_len, char *why);
/* The bytes written at the entry: jmp rel32 to the trampoline's code,
 * int3 up to p->len.  -ERANGE when the page is out of reach. */
int argus_live__entry(const struct argus_live_plan *p, uint64_t page, uint8_t *out, char *why);

/* On a live process (every thread is stopped while bytes change; a thread
 * whose pc is inside the replaced bytes, or in the trampoline page or with
 * a return address into it on its stack for a removal, or for a removal a
 * hooked call still in flight (the header's inflight), makes the call
 * retry for ~1 s and then fail with -EBUSY). */
struct argus_live_patch_opts {
	size_t sz;
	enum argus_live_kind kind;
	uint64_t hook;		/* argus_work_* in the target; 0 count only */
	const char *name;	/* for the header */
	const struct argus_live_ret *ret; /* a return hook too, NULL none */
};
int argus_live__patch(struct argus_live *l, const struct argus_live_sym *fn,
		      const struct argus_live_patch_opts *o, uint64_t *page, char *why);
int argus_live__unpatch(struct argus_live *l, uint64_t func, char *why);

/* The trampolines in a process (found by their magic in its r-x anonymous
 * pages): up to cap headers (with their page address). */
int argus_live__list(pid_t pid, struct argus_live_tramp_hdr *h, uint64_t *pages, size_t cap,
		     size_t *n);

/* ---- live_uprobe.c: --via uprobe ---- */

/* Record fn's entries in pid through the kernel: a uprobe on every CPU
 * linked to a BPF program writing AE_LIVE_HIT into the ring of the argusd
 * of run_dir; the links are pinned under /sys/fs/bpf/argus-live/. */
int argus_live__uprobe_add(pid_t pid, const struct argus_live_sym *fn, enum argus_live_kind kind,
			   const char *run_dir, char *why);
/* Unpin the uprobe of func in pid: -ENOENT none. */
int argus_live__uprobe_remove(pid_t pid, uint64_t func, char *why);
/* The uprobes of pid (function, kind), up to cap. */
int argus_live__uprobe_list(pid_t pid, uint64_t *funcs, int *kinds, size_t cap, size_t *n);

#endif /* ARGUS_LIVE_H */
