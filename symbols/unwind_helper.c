/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_helper.c - the unwind helper process (see unwind_helper.h): the
 * sandbox it puts itself in, and its request loop over the messages of
 * unwind_wire.h.
 *
 * State: one argus_unwinder (unwind.h, no memo: the client has it) whose
 * files come only from the fds argusd sent, and up to HL_LAYOUTS maps
 * layouts by the client's id, each with its maps (as sent) and the fds
 * received for it that the unwinder has not taken yet.  The helper trusts
 * nothing it reads either: a malformed message ends it (argusd then
 * restarts it), it never answers with more than was asked.
 */
#include "unwind_helper.h"

#include "elf_guard.h"
#include "symbolize.h"
#include "unwind.h"
#include "unwind_memo.h"
#include "unwind_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libelf.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HL_SOCK 3               /* the socket's fd in the helper */

/*
 * Under ASan (the sanitizer build, the fuzz build), the runtime has
 * reserved terabytes of shadow address space before we run: RLIMIT_AS
 * would fail every later mmap.  So it is not set there, and the helper
 * keeps stderr (fd 2) and may write to it, so that a sanitizer report
 * from inside the helper reaches argusd's log or the test's output.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HL_SANITIZED 1
#endif
#endif
#ifndef HL_SANITIZED
#define HL_SANITIZED 0
#endif
#define HL_LAYOUTS ARGUS_UNWIND_SLOTS /* as many as the unwinder's sessions */
/* files asked for per layout: the unwinder caches 256 (unwind.c's
 * UW_FILES), a session cannot use more; so at most that many fds wait in
 * a layout, and RLIMIT_NOFILE covers cache + one layout + one message */
#define HL_NEED_MAX 256
/* the largest answer: NEED_FILES for every mapping of a process */
#define HL_OBUF (64 + ARGUS_PROC_MAPS_MAX * sizeof(uint32_t))

struct hl_layout {
	uint64_t id;            /* 0 = empty */
	uint32_t pid;
	struct argus_proc_map *maps;
	size_t nmaps;
	int *fds;               /* per map: received, not taken yet, or -1 */
	uint64_t last_use;
};

struct helper {
	struct argus_unwinder *u;
	struct argus_symbolizer *sym; /* the CLI's lookups (UWP_SYM_*), lazily */
	struct hl_layout lay[HL_LAYOUTS];
	struct hl_layout *cur;  /* the layout being prepared or unwound */
	uint64_t clock;
	uint8_t *ibuf;          /* one message, header and payload */
	uint8_t *buf;           /* its payload, in ibuf */
	uint8_t *obuf;          /* one answer */
	int rfds[UWP_FDS_MAX];  /* fds received with the last header */
	int nrfds;
	uint64_t trim_ns;       /* CLOCK_MONOTONIC of the last malloc_trim() */
};

/* ---- the sandbox ---------------------------------------------------- */

/*
 * Hand-written classic BPF (libseccomp is not installed here, and the
 * list is short).  x86_64 only: another arch or the x32 ABI is killed.
 * I/O is allowed on the socket only (fd 3): a helper taken over by a
 * hostile file can talk to argusd, which checks what it says, and to
 * nothing else; it cannot open, connect, fork or exec, nor map code.
 */
#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* if nr == NR: allow (jump over the next instruction, the kill of nr's
 * failed argument check) */
#define SYS_ANY(NR) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (NR), 0, 1), ALLOW
/* if nr == NR: allow when args[0] == HL_SOCK, else kill */
#define SYS_SOCK(NR) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (NR), 0, 4), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HL_SOCK, 0, 1), \
	ALLOW, \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
/* if nr == NR: allow when (args[A] & BIT) == WANT, else kill */
#define SYS_BIT(NR, A, BIT, WANT) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (NR), 0, 5), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(A)), \
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, (BIT)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (WANT), 0, 1), \
	ALLOW, \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* if nr == NR: allow when args[A] is V1 or V2, else kill */
#define SYS_ARG2(NR, A, V1, V2) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (NR), 0, 5), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(A)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (V1), 1, 0), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (V2), 0, 1), \
	ALLOW, \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* if nr == NR: fail with EACCES */
#define SYS_EACCES(NR) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (NR), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES)

static int install_seccomp(void)
{
	static struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000 /* __X32_SYSCALL_BIT */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		SYS_SOCK(__NR_read), LOAD_NR,
#if HL_SANITIZED
		/* write on fd 2 as well (a sanitizer's report) */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HL_SOCK, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		ALLOW,
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LOAD_NR,
#else
		SYS_SOCK(__NR_write), LOAD_NR,
#endif
		SYS_SOCK(__NR_recvmsg), LOAD_NR,
		SYS_SOCK(__NR_sendmsg), LOAD_NR,
		SYS_ANY(__NR_pread64),
		SYS_ANY(__NR_lseek),
		SYS_ANY(__NR_close),
		SYS_ANY(__NR_fstat),
		/* glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH) */
		SYS_BIT(__NR_newfstatat, 3, AT_EMPTY_PATH, AT_EMPTY_PATH), LOAD_NR,
		/* libelf's elf_begin() checks the fd it is given */
		SYS_ARG2(__NR_fcntl, 1, F_GETFD, F_GETFL), LOAD_NR,
		SYS_BIT(__NR_mmap, 2, PROT_EXEC, 0), LOAD_NR,
		SYS_BIT(__NR_mprotect, 2, PROT_EXEC, 0), LOAD_NR,
		SYS_ANY(__NR_munmap),
		SYS_ANY(__NR_mremap),
		SYS_ANY(__NR_brk),
		SYS_ANY(__NR_madvise),
		SYS_ANY(__NR_clock_gettime),
		/* the sanitizers' allocator seeds itself with it (harmless: no
		 * fd, nothing of anyone's) */
		SYS_ANY(__NR_getrandom),
		/* glibc's qsort() sizes its buffer by the machine's memory
		 * (libdw sorts line tables with it) */
		SYS_ANY(__NR_sysinfo),
#if HL_SANITIZED
		/* ASan takes its alternate signal stack down at exit */
		SYS_ANY(__NR_sigaltstack),
#endif
		/* libdw looks for a .dwz file by path on its own, and libdwfl
		 * asks /proc/self/fd for a file's name: those calls fail
		 * (EACCES) instead of killing the helper */
		SYS_EACCES(__NR_openat),
		SYS_EACCES(__NR_open),
		SYS_EACCES(__NR_readlink),
		SYS_EACCES(__NR_readlinkat),
		SYS_ANY(__NR_exit_group),
		SYS_ANY(__NR_exit),
		SYS_ANY(__NR_rt_sigreturn),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
}

static void set_limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };

	setrlimit(res, &rl);
}

/* Everything that can fail here ends the helper: argusd sees it go and
 * counts a restart; it never runs unwinds with more than it should. */
static void sandbox(uid_t uid, gid_t gid)
{
	struct rlimit cpu = { ARGUS_UNWIND_HELPER_CPU_S, ARGUS_UNWIND_HELPER_CPU_S + 1 };

	prctl(PR_SET_NAME, "argus-unwind");
	/* not root (a test, a CLI run by a user): no one to drop */
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	     setresuid(uid, uid, uid)))
		_exit(120);
	/* after the uid change, which clears it: argusd gone, helper gone */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(121);
	if (!HL_SANITIZED)
		set_limit(RLIMIT_AS, ARGUS_UNWIND_HELPER_AS_MAX);
	setrlimit(RLIMIT_CPU, &cpu);
	set_limit(RLIMIT_FSIZE, 0);
	set_limit(RLIMIT_NPROC, 0);
	set_limit(RLIMIT_CORE, 0);
	/* 256 cached files + 256 waiting in a layout + one FILES message; or
	 * (the CLI's helper) UWP_SYM_FILES_MAX files with their debug files */
	set_limit(RLIMIT_NOFILE, 2 * UWP_SYM_FILES_MAX + 64);
	if (install_seccomp())
		_exit(122);
}

/* ---- I/O on the socket ---------------------------------------------- */

static void close_rfds(struct helper *h)
{
	for (int i = 0; i < h->nrfds; i++)
		if (h->rfds[i] >= 0)
			close(h->rfds[i]);
	h->nrfds = 0;
}

/* One recvmsg() of up to len bytes at p, *got advanced; fds that come
 * along are kept in h->rfds. */
static int recv_some(struct helper *h, uint8_t *p, size_t len, size_t *got)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * UWP_FDS_MAX)];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { p, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cb.buf,
			     .msg_controllen = sizeof(cb.buf) };
	ssize_t r;

	if (!len)
		return -EPROTO;
	r = recvmsg(HL_SOCK, &mh, MSG_CMSG_CLOEXEC);
	if (r <= 0 || (mh.msg_flags & MSG_CTRUNC))
		return -EPIPE;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (h->nrfds < UWP_FDS_MAX)
				h->rfds[h->nrfds++] = fd;
			else
				close(fd);
		}
	}
	*got += (size_t)r;
	return 0;
}

/*
 * One message: its header into *hd, its payload at h->buf.  argusd sends
 * the next message only after this one's answer, so the socket holds at
 * most this message: it is read in as few recvmsg() calls as it came in
 * (usually one), into h->ibuf, and a byte more ends the helper.
 */
static int recv_msg(struct helper *h, struct uwp_hdr *hd)
{
	size_t have = 0, need = sizeof(*hd);

	while (have < need) {
		size_t got = have;

		if (recv_some(h, h->ibuf + have, sizeof(*hd) + UWP_MSG_MAX - have, &got))
			return -EPIPE;
		have = got;
		if (need == sizeof(*hd) && have >= sizeof(*hd)) {
			memcpy(hd, h->ibuf, sizeof(*hd));
			if (hd->len > UWP_MSG_MAX)
				return -EPROTO;
			need = sizeof(*hd) + hd->len;
		}
	}
	if (have != need)
		return -EPROTO;
	h->buf = h->ibuf + sizeof(*hd);
	return 0;
}

static void send_all(const void *p, size_t len)
{
	while (len) {
		ssize_t w = write(HL_SOCK, p, len);

		if (w <= 0)
			_exit(0);       /* argusd went away */
		p = (const char *)p + w;
		len -= (size_t)w;
	}
}

/* One answer: header, counters, then the body. */
static void answer(struct helper *h, uint32_t type, const void *body, size_t len)
{
	struct uwp_counters k = {
		argus_guard__get(ARGUS_GUARD_OVER_BUDGET),
		argus_guard__get(ARGUS_GUARD_UNWIND_CUT),
	};
	struct uwp_hdr hd = { type, (uint32_t)(sizeof(k) + len) };

	if (len > HL_OBUF - sizeof(hd) - sizeof(k))
		_exit(126);
	memcpy(h->obuf, &hd, sizeof(hd));
	memcpy(h->obuf + sizeof(hd), &k, sizeof(k));
	if (len)
		memcpy(h->obuf + sizeof(hd) + sizeof(k), body, len);
	send_all(h->obuf, sizeof(hd) + sizeof(k) + len);
}

/* ---- layouts -------------------------------------------------------- */

static void layout_clear(struct hl_layout *l)
{
	for (size_t i = 0; l->fds && i < l->nmaps; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	free(l->fds);
	argus_proc_maps__free(l->maps, l->nmaps);
	memset(l, 0, sizeof(*l));
}

static struct hl_layout *layout_find(struct helper *h, uint64_t id)
{
	for (int i = 0; i < HL_LAYOUTS; i++)
		if (h->lay[i].id == id && id) {
			h->lay[i].last_use = ++h->clock;
			return &h->lay[i];
		}
	return NULL;
}

/* The unwinder's open_file: the fd argusd sent for this mapping. */
static int open_sent(void *ctx, uint32_t pid, const struct argus_proc_map *m)
{
	struct helper *h = ctx;
	struct hl_layout *l = h->cur;
	size_t i;
	int fd;

	(void)pid;
	if (!l || m < l->maps || m >= l->maps + l->nmaps)
		return -ENOENT;
	i = (size_t)(m - l->maps);
	/* a file mapped several times was sent once, for its first mapping */
	for (size_t j = 0; j < l->nmaps && l->fds[i] < 0; j++)
		if (l->fds[j] >= 0 && l->maps[j].dev == m->dev &&
		    l->maps[j].inode == m->inode &&
		    !(l->maps[j].flags & ARGUS_PROC_MAP_VDSO) == !(m->flags & ARGUS_PROC_MAP_VDSO))
			i = j;
	fd = l->fds[i];
	l->fds[i] = -1;
	return fd >= 0 ? fd : -ENOENT;
}

/* LAYOUT: uwp_layout, uwp_map[n], then the n paths, each NUL-ended. */
static int on_layout(struct helper *h, const uint8_t *p, size_t len)
{
	struct uwp_layout hd;
	struct hl_layout *l = NULL;
	const struct uwp_map *wm;
	const char *path;
	size_t paths_len, off = 0;
	uint32_t *need;
	size_t nneed;

	if (len < sizeof(hd))
		return -EPROTO;
	memcpy(&hd, p, sizeof(hd));
	if (!hd.layout || hd.nmaps > ARGUS_PROC_MAPS_MAX ||
	    len - sizeof(hd) < (size_t)hd.nmaps * sizeof(*wm))
		return -EPROTO;
	wm = (const struct uwp_map *)(p + sizeof(hd));
	path = (const char *)(wm + hd.nmaps);
	paths_len = len - sizeof(hd) - hd.nmaps * sizeof(*wm);

	if (!(l = layout_find(h, hd.layout))) {
		l = &h->lay[0];
		for (int i = 1; i < HL_LAYOUTS; i++)
			if (!h->lay[i].id || (l->id && h->lay[i].last_use < l->last_use))
				l = &h->lay[i];
	}
	layout_clear(l);
	l->maps = calloc(hd.nmaps ? hd.nmaps : 1, sizeof(*l->maps));
	l->fds = malloc((hd.nmaps ? hd.nmaps : 1) * sizeof(int));
	if (!l->maps || !l->fds)
		return -ENOMEM;
	for (uint32_t i = 0; i < hd.nmaps; i++) {
		struct uwp_map m;

		memcpy(&m, &wm[i], sizeof(m));
		if (off >= paths_len || m.path_len >= paths_len - off ||
		    path[off + m.path_len] != '\0' ||
		    (i && m.start < l->maps[i - 1].start) || m.end <= m.start) {
			l->nmaps = i;
			layout_clear(l);
			return -EPROTO;
		}
		l->maps[i] = (struct argus_proc_map){
			.start = m.start, .end = m.end, .pgoff = m.pgoff,
			.dev = m.dev, .inode = m.inode, .flags = m.flags,
			.path = strdup(path + off),
		};
		l->fds[i] = -1;
		l->nmaps = i + 1;
		if (!l->maps[i].path) {
			layout_clear(l);
			return -ENOMEM;
		}
		off += m.path_len + 1;
	}
	l->id = hd.layout;
	l->pid = hd.pid;
	l->last_use = ++h->clock;
	h->cur = l;
	need = malloc((l->nmaps ? l->nmaps : 1) * sizeof(*need));
	if (!need)
		return -ENOMEM;
	nneed = argus_unwinder__missing(h->u, l->maps, l->nmaps, need, HL_NEED_MAX);
	answer(h, UWP_NEED_FILES, need, nneed * sizeof(*need));
	free(need);
	return 0;
}

/* FILES: uwp_files, idx[n], with exactly n fds. */
static int on_files(struct helper *h, const uint8_t *p, size_t len)
{
	struct hl_layout *l = h->cur;
	struct uwp_files hd;

	if (!l || len < sizeof(hd))
		return -EPROTO;
	memcpy(&hd, p, sizeof(hd));
	if (hd.n > UWP_FDS_MAX || len != sizeof(hd) + hd.n * sizeof(uint32_t) ||
	    hd.n != (uint32_t)h->nrfds)
		return -EPROTO;
	for (uint32_t i = 0; i < hd.n; i++) {
		uint32_t idx;

		memcpy(&idx, p + sizeof(hd) + i * sizeof(idx), sizeof(idx));
		if (idx >= l->nmaps)
			return -EPROTO;
		if (l->fds[idx] >= 0)
			close(l->fds[idx]);
		l->fds[idx] = h->rfds[i];
		h->rfds[i] = -1;
	}
	h->nrfds = 0;
	if (!hd.last) {
		answer(h, UWP_MORE, NULL, 0);
		return 0;
	}
	argus_unwinder__prepare(h->u, l->pid, l->maps, l->nmaps);
	/* what the unwinder did not take (not an x86_64 ELF, over the
	 * limits) is closed now */
	for (size_t i = 0; i < l->nmaps; i++)
		if (l->fds[i] >= 0) {
			close(l->fds[i]);
			l->fds[i] = -1;
		}
	answer(h, UWP_LAYOUT_OK, NULL, 0);
	return 0;
}

/* As stack_capture.c does in argusd: the layouts of processes with huge
 * maps come and go, and glibc keeps the holes they leave resident; give
 * the free pages back every HL_TRIM_NS at most (at a chunk cut). */
#define HL_TRIM_NS (10ull * 1000 * 1000 * 1000)

static void trim_heap(struct helper *h)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - h->trim_ns < HL_TRIM_NS)
		return;
	h->trim_ns = now;
	malloc_trim(0);
}

static int on_unwind(struct helper *h, const uint8_t *p, size_t len)
{
	struct {
		struct uwp_frames f;
		uint64_t ips[UWP_FRAMES_MAX];
		struct uwp_read r[UWP_READS_MAX];
	} out;
	const struct uw_read_log *log;
	struct uwp_unwind q;
	struct hl_layout *l;
	uint32_t need[HL_NEED_MAX];
	size_t nneed, body;
	int n;

	if (len < sizeof(q))
		return -EPROTO;
	memcpy(&q, p, sizeof(q));
	if (q.copy_len > UWP_COPY_MAX || len != sizeof(q) + q.copy_len ||
	    q.max < 1 || q.max > UWP_FRAMES_MAX)
		return -EPROTO;
	if (q.flags & UWP_F_CUT) {
		argus_unwinder__drop_deleted(h->u);
		trim_heap(h);
	}
	if (!(l = layout_find(h, q.layout))) {
		answer(h, UWP_NEED_LAYOUT, NULL, 0);
		return 0;
	}
	h->cur = l;
	/* the unwinder let the session go and some of its files since */
	nneed = argus_unwinder__missing(h->u, l->maps, l->nmaps, need, HL_NEED_MAX);
	if (nneed) {
		answer(h, UWP_NEED_FILES, need, nneed * sizeof(*need));
		return 0;
	}
	n = argus_unwinder__unwind(h->u, l->pid, l->maps, l->nmaps, q.ip, q.sp,
				   q.bp, p + sizeof(q), q.copy_len, out.ips,
				   (int)q.max);
	if (n < 1) {
		out.ips[0] = q.ip;
		n = 1;
	}
	memset(&out.f, 0, sizeof(out.f));
	out.f.n = (uint32_t)n;
	if (argus_unwinder__last_reads(h->u, &log) && log->n <= UWP_READS_MAX) {
		out.f.memo = 1;
		out.f.nreads = log->n;
	}
	/* the reads go right after the n ips */
	body = sizeof(out.f) + (size_t)n * sizeof(uint64_t);
	for (uint32_t i = 0; i < out.f.nreads; i++) {
		struct uwp_read r = { log->off[i], 0, log->val[i] };

		memcpy((uint8_t *)&out + body + i * sizeof(r), &r, sizeof(r));
	}
	body += out.f.nreads * sizeof(struct uwp_read);
	answer(h, UWP_FRAMES, &out, body);
	return 0;
}

/* ---- the symbolizer's requests (symbolize.c in sandbox mode) ---------- */

/* SYM_FILE: uwp_sym_file, the name NUL-ended, with exactly nfds fds. */
static int on_sym_file(struct helper *h, const uint8_t *p, size_t len)
{
	struct uwp_sym_file q;
	const char *name = (const char *)p + sizeof(q);
	int32_t rc;

	if (len < sizeof(q) + 1 || len - sizeof(q) > UWP_SYM_NAME_MAX)
		return -EPROTO;
	memcpy(&q, p, sizeof(q));
	if (q.id >= UWP_SYM_FILES_MAX || q.nfds < 1 || q.nfds > 2 ||
	    q.nfds != (uint32_t)h->nrfds || name[len - sizeof(q) - 1] != '\0')
		return -EPROTO;
	if (!h->sym && !(h->sym = argus_symbolizer__new_by_fd()))
		return -ENOMEM;
	rc = argus_symbolizer__add_fd(h->sym, q.id, name, h->rfds[0],
				      q.nfds == 2 ? h->rfds[1] : -1);
	h->rfds[0] = h->rfds[1] = -1;   /* taken */
	h->nrfds = 0;
	answer(h, UWP_SYM_OK, &rc, sizeof(rc));
	return 0;
}

static int on_sym_lookup(struct helper *h, const uint8_t *p, size_t len)
{
	struct uwp_sym_lookup q;
	struct uwp_sym_result r;

	if (len != sizeof(q) || h->nrfds)
		return -EPROTO;
	memcpy(&q, p, sizeof(q));
	if (!h->sym) {
		memset(&r, 0, sizeof(r));
		r.rc = -ESRCH;
	} else if (argus_symbolizer__query_id(h->sym, q.id, q.off, &r)) {
		return -EPROTO;
	}
	answer(h, UWP_SYM_RESULT, &r, sizeof(r));
	return 0;
}

void argus_unwind_helper__main(int sock, uid_t uid, gid_t gid)
{
	struct helper h = { 0 };
	struct argus_unwinder_opts uo = { .sz = sizeof(uo), .open_file = open_sent,
					  .open_ctx = &h, .no_memo = true,
					  .no_debuginfo = true };

	if (sock != HL_SOCK) {
		if (dup2(sock, HL_SOCK) < 0)
			_exit(123);
	}
	/* argusd's other descriptors (ring, BPF maps and links, the control
	 * socket, its log) are none of the helper's business */
	if (syscall(SYS_close_range, HL_SOCK + 1, ~0u, 0))
		for (int fd = HL_SOCK + 1; fd < 65536; fd++)
			close(fd);
	for (int fd = 0; fd < HL_SOCK; fd++)
		if (fd != 2 || !HL_SANITIZED)
			close(fd);
	fcntl(HL_SOCK, F_SETFD, 0);
	elf_version(EV_CURRENT);
	h.ibuf = malloc(sizeof(struct uwp_hdr) + UWP_MSG_MAX);
	h.obuf = malloc(HL_OBUF);
	h.u = argus_unwinder__new_opts(&uo);
	if (!h.ibuf || !h.obuf || !h.u)
		_exit(124);
	sandbox(uid, gid);

	for (;;) {
		struct uwp_hdr hd;
		int err = 0;

		if (recv_msg(&h, &hd))
			_exit(0);
		switch (hd.type) {
		case UWP_UNWIND: err = on_unwind(&h, h.buf, hd.len); break;
		case UWP_LAYOUT: err = on_layout(&h, h.buf, hd.len); break;
		case UWP_FILES: err = on_files(&h, h.buf, hd.len); break;
		case UWP_SYM_FILE: err = on_sym_file(&h, h.buf, hd.len); break;
		case UWP_SYM_LOOKUP: err = on_sym_lookup(&h, h.buf, hd.len); break;
		default: err = -EPROTO;
		}
		close_rfds(&h);
		if (err)
			_exit(125);
	}
}

/*
 * The helper's entry in a fresh exec of argusd's (or argus's) own binary
 * (unwind_client.c's spawn()): before main, when the environment says so,
 * with the socket at fd 3.  The environment holds nothing else.
 */
__attribute__((constructor)) static void helper_entry(void)
{
	const char *e = getenv("ARGUS_UNWIND_HELPER");
	unsigned uid, gid;

	if (!e || sscanf(e, "%u,%u", &uid, &gid) != 2)
		return;
	argus_unwind_helper__main(HL_SOCK, (uid_t)uid, (gid_t)gid);
}
