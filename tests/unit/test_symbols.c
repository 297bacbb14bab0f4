/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_symbols.c - /proc maps + build-ids, DWARF unwinding over a stack
 * copy, offline symbolization (symbols/proc_maps.h, unwind.h, symbolize.h).
 *
 * The fixture is busy_nofp, a frame-pointer-less call chain that captures
 * its own rip/rsp/rbp and stack copy the way the BPF probe does, writes
 * them to us and waits on stdin while we read its /proc/PID/maps.  The
 * unwind tests then prove the stack is recovered from CFI + the copy, and
 * that a frame-pointer walk (what bpf_get_stack does) cannot recover it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* REG_RSP */
#endif
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <ucontext.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "many_maps.h"
#include "proc_status.h"
#include "proc_maps.h"
#include "symbolize.h"
#include "trace_format.h"
#include "unwind.h"

#ifndef BUSY_NOFP_PATH
#error "BUSY_NOFP_PATH must name the busy_nofp fixture binary"
#endif

#define COPY_MAX 4096
#define MAX_FRAMES 32

/* Must match busy_nofp.c. */
struct busy_rec {
	uint64_t ip, sp, bp, len;
	uint32_t line[4];
};

static const char *const chain[4] = {
	"busy_leaf", "busy_middle", "busy_outer", "main",
};

static struct {
	int started, ok;
	pid_t pid;
	int to_child;           /* child's stdin; closing it ends the child */
	struct busy_rec rec;
	uint8_t copy[COPY_MAX];
	struct argus_proc_map *maps;
	size_t nmaps;
} fx;

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

/* Start busy_nofp once; fx.ok says whether its sample and maps are in. */
static int fixture(void)
{
	int in[2], out[2];

	if (fx.started)
		return fx.ok;
	fx.started = 1;
	if (pipe(in) || pipe(out))
		return 0;
	fx.pid = fork();
	if (fx.pid < 0)
		return 0;
	if (fx.pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(BUSY_NOFP_PATH, "busy_nofp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx.to_child = in[1];
	if (read_full(out[0], &fx.rec, sizeof(fx.rec)) ||
	    fx.rec.len > COPY_MAX ||
	    read_full(out[0], fx.copy, fx.rec.len)) {
		fprintf(stderr, "busy_nofp sent no sample\n");
		close(out[0]);
		return 0;
	}
	close(out[0]);
	/* The child is blocked on stdin: its maps are stable. */
	if (argus_proc_maps__read(fx.pid, &fx.maps, &fx.nmaps))
		return 0;
	fx.ok = 1;
	return 1;
}

static void fixture_end(void)
{
	int status;

	if (fx.pid > 0) {
		close(fx.to_child);
		waitpid(fx.pid, &status, 0);
	}
	argus_proc_maps__free(fx.maps, fx.nmaps);
}

/* Symbolize frame i of ips as a reader would: callers at ip - 1. */
static int sym_frame(struct argus_symbolizer *s,
		     const struct argus_proc_map *maps, size_t nmaps,
		     const uint64_t *ips, int i, struct argus_sym *out)
{
	const struct argus_proc_map *m = argus_proc_maps__find(maps, nmaps,
							       ips[i]);

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOENT;
	return argus_symbolizer__lookup(s, m->path, m->start, m->pgoff,
					ips[i] - (i > 0), out);
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* ---------------------------------------------------------------- */

static void test_proc_maps_self_lists_libc_with_build_id(void)
{
	struct argus_proc_map *maps;
	size_t n, i;
	int libc = 0, vdso = 0, sorted = 1;

	CHECK_EQ(argus_proc_maps__read(getpid(), &maps, &n), 0);
	for (i = 0; i < n; i++) {
		const struct argus_proc_map *m = &maps[i];

		CHECK(m->path[0] == '/' || (m->flags & ARGUS_PROC_MAP_VDSO));
		if (i && maps[i - 1].start >= m->start)
			sorted = 0;
		if (!strncmp(base(m->path), "libc.so", 7)) {
			libc++;
			CHECK_EQ(m->build_id_len, 20);
			CHECK(m->inode != 0);
		}
		if (m->flags & ARGUS_PROC_MAP_VDSO) {
			vdso++;
			CHECK(!strcmp(m->path, "[vdso]"));
		}
	}
	CHECK(sorted);
	CHECK_EQ(libc, 1);      /* only the r-xp mapping */
	CHECK_EQ(vdso, 1);
	CHECK(argus_proc_maps__find(maps, n,
				    (uint64_t)(uintptr_t)&fixture) != NULL);
	argus_proc_maps__free(maps, n);
	argus_proc_maps__free(NULL, 0);
}

static void test_proc_maps_rereading_hits_the_build_id_cache(void)
{
	struct argus_proc_map *a, *b;
	size_t na, nb;

	CHECK_EQ(argus_proc_maps__read(getpid(), &a, &na), 0);
	CHECK_EQ(argus_proc_maps__read(getpid(), &b, &nb), 0);
	CHECK_EQ(na, nb);
	for (size_t i = 0; i < na && i < nb; i++) {
		CHECK_EQ(a[i].build_id_len, b[i].build_id_len);
		CHECK(!memcmp(a[i].build_id, b[i].build_id,
			      a[i].build_id_len));
	}
	argus_proc_maps__free(a, na);
	argus_proc_maps__free(b, nb);
}

static void test_proc_maps_parse_skips_malformed_lines(void)
{
	static char longline[ARGUS_PROC_MAPS_LINE_MAX + 100];
	char text[ARGUS_PROC_MAPS_LINE_MAX + 2048];
	struct argus_proc_map *maps;
	size_t n;

	memset(longline, 'a', sizeof(longline) - 1);
	memcpy(longline, "1000-2000 r-xp 0 08:01 5 /", 26);
	snprintf(text, sizeof(text),
		 "%s\n"
		 "7f0000001000-7f0000002000 r-xp 00001000 fe:00 42     /lib/x y.so\n"
		 "garbage\n"
		 "\n"
		 "1000-2000 r-xp 00000000 08:01\n"           /* no inode */
		 "2000-1000 r-xp 00000000 08:01 7 /bad\n"     /* end < start */
		 "11112222333344445-2 r-xp 0 08:01 7 /x\n"    /* 17 digits */
		 "3000-4000 rwxq 0 08:01 7 /bad/perm\n"
		 "3000-4000 r--p 0 08:01 7 /not/exec\n"
		 "5000-6000 r-xp 0 00:00 0 \n"                /* anonymous */
		 "7000-8000 r-xp 0 00:00 0 [vdso]\n"
		 "9000-a000 r-xp 00002000 08:01 99 /gone.so (deleted)\n"
		 "b000-c000 r-xp 0 08:01 18446744073709551616 /ovf\n"
		 "d000-e000 r-xp 0 08:01 7 /last/no/newline",
		 longline);

	CHECK_EQ(argus_proc_maps__parse(0, text, strlen(text), &maps, &n), 0);
	CHECK_EQ(n, 4);
	if (n == 4) {
		CHECK_EQ(maps[0].start, 0x7000);
		CHECK_EQ(maps[0].flags, ARGUS_PROC_MAP_VDSO);
		CHECK_EQ(maps[1].start, 0x9000);
		CHECK_EQ(maps[1].pgoff, 0x2000);
		CHECK_EQ(maps[1].inode, 99);
		CHECK_EQ(maps[1].flags, ARGUS_PROC_MAP_DELETED);
		CHECK(!strcmp(maps[1].path, "/gone.so"));
		CHECK(!strcmp(maps[2].path, "/last/no/newline"));
		CHECK_EQ(maps[3].start, 0x7f0000001000ull);
		CHECK_EQ(maps[3].pgoff, 0x1000);
		CHECK_EQ(maps[3].inode, 42);
		CHECK(!strcmp(maps[3].path, "/lib/x y.so"));
		CHECK_EQ(maps[3].build_id_len, 0);  /* no such file */
	}
	argus_proc_maps__free(maps, n);

	/* NUL bytes inside a line do not get through as paths. */
	{
		static const char nul[] = "1000-2000 r-xp 0 08:01 7 /a\0b\n";

		CHECK_EQ(argus_proc_maps__parse(0, nul, sizeof(nul) - 1, &maps,
						&n), 0);
	}
	CHECK_EQ(n, 0);
	argus_proc_maps__free(maps, n);
	CHECK_EQ(argus_proc_maps__parse(0, NULL, 0, &maps, &n), 0);
	CHECK_EQ(n, 0);
}

static void test_unwind_recovers_nofp_chain_with_source_lines(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new();
	struct argus_sym sym;
	uint64_t ips[MAX_FRAMES];
	char line[600];
	int n, i;

	CHECK(fixture());
	CHECK(s != NULL);
	if (!fx.ok || !s)
		goto out;
	n = argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, fx.rec.sp,
			 fx.rec.bp, fx.copy, fx.rec.len, ips, MAX_FRAMES);
	CHECK(n >= 4);
	for (i = 0; i < n; i++) {
		int r = sym_frame(s, fx.maps, fx.nmaps, ips, i, &sym);

		argus_sym__format(&sym, ips[i], line, sizeof(line));
		fprintf(stderr, "  #%d %#llx %s\n", i,
			(unsigned long long)ips[i], line);
		if (i >= 4)
			continue;
		CHECK_EQ(r, 0);
		CHECK(!strcmp(sym.func, chain[i]));
		CHECK(!strcmp(base(sym.file), "busy_nofp.c"));
		CHECK_EQ(sym.line, fx.rec.line[i]);
		CHECK(!strcmp(sym.module, "busy_nofp"));
	}
out:
	argus_symbolizer__free(s);
}

/*
 * What bpf_get_stack(BPF_F_USER_STACK) does: follow saved rbp, reading
 * [rbp] = caller's rbp and [rbp + 8] = return address (here from the same
 * stack copy, so the comparison is fair).
 */
static int fp_walk(uint64_t bp, uint64_t sp, const uint8_t *copy,
		   size_t len, uint64_t *ips, int max)
{
	int n = 0;

	while (n < max && bp >= sp && bp - sp <= len && len - (bp - sp) >= 16) {
		uint64_t next, ret;

		memcpy(&next, copy + (bp - sp), 8);
		memcpy(&ret, copy + (bp - sp) + 8, 8);
		ips[n++] = ret;
		if (next <= bp)
			break;
		bp = next;
	}
	return n;
}

static void test_frame_pointer_walk_cannot_recover_nofp_chain(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new();
	struct argus_sym sym;
	uint64_t ips[MAX_FRAMES + 1];
	int n, i, found = 0;

	CHECK(fixture());
	if (!fx.ok || !s)
		goto out;
	ips[0] = fx.rec.ip;
	n = 1 + fp_walk(fx.rec.bp, fx.rec.sp, fx.copy, fx.rec.len, ips + 1,
			MAX_FRAMES);
	fprintf(stderr, "  rbp=%#llx rsp=%#llx: frame-pointer walk gives %d "
		"frame(s)\n", (unsigned long long)fx.rec.bp,
		(unsigned long long)fx.rec.sp, n);
	for (i = 1; i < n; i++)
		if (!sym_frame(s, fx.maps, fx.nmaps, ips, i, &sym))
			for (int k = 1; k < 4; k++)
				found += !strcmp(sym.func, chain[k]);
	CHECK_EQ(found, 0);

	/* And the unwinder without the stack copy: ip alone. */
	n = argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, fx.rec.sp,
			 fx.rec.bp, NULL, 0, ips, MAX_FRAMES);
	CHECK_EQ(n, 1);
out:
	argus_symbolizer__free(s);
}

/* The fixture's sample unwound by u over maps (fx.maps by default). */
static int unwind_fx(struct argus_unwinder *u, const struct argus_proc_map *maps,
		     size_t nmaps, uint64_t *ips)
{
	return argus_unwinder__unwind(u, fx.pid, maps, nmaps, fx.rec.ip,
				      fx.rec.sp, fx.rec.bp, fx.copy, fx.rec.len,
				      ips, MAX_FRAMES);
}

/* A new unwinder with the fixture's sample unwound once into ips (*n
 * frames, at least 4 checked); NULL if the fixture or the unwinder could
 * not be had (already a failed CHECK). */
static struct argus_unwinder *unwinder_with_fx(uint64_t *ips, int *n)
{
	struct argus_unwinder *u;

	CHECK(fixture());
	if (!fx.ok)
		return NULL;
	u = argus_unwinder__new();
	CHECK(u != NULL);
	if (!u)
		return NULL;
	*n = unwind_fx(u, fx.maps, fx.nmaps, ips);
	CHECK(*n >= 4);
	return u;
}

/* The session cache (same maps: same Dwfl) and the file cache (another
 * process running the same files: here the fixture's maps plus one more
 * mapping, so a new layout and a new session) give the same stack, and
 * the second process opens no file again. */
static void test_unwinder_caches_give_the_same_stack(void)
{
	struct argus_unwinder *u;
	struct argus_unwinder_stats st1, st2;
	struct argus_proc_map *m2 = NULL;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	int na, nb;

	u = unwinder_with_fx(a, &na);
	if (!u)
		goto out;
	/* the same sample again is the memo's answer, not the session's */
	nb = unwind_fx(u, fx.maps, fx.nmaps, b);
	CHECK(na >= 4);
	CHECK_EQ(na, nb);
	CHECK(na == nb && !memcmp(a, b, na * sizeof(a[0])));
	argus_unwinder__stats(u, &st1);
	CHECK_EQ(st1.unwinds, 1);
	CHECK_EQ(st1.memo_hits, 1);
	/* another max is another memo key: libdwfl runs again, on the cached
	 * session (no new session, no file opened), and max bounds it */
	CHECK_EQ(argus_unwinder__unwind(u, fx.pid, fx.maps, fx.nmaps,
					fx.rec.ip, fx.rec.sp, fx.rec.bp,
					fx.copy, fx.rec.len, b, 2), 2);
	CHECK(b[0] == a[0] && b[1] == a[1]);
	argus_unwinder__stats(u, &st2);
	CHECK_EQ(st2.unwinds, 2);
	CHECK_EQ(st2.sessions, 1);
	CHECK_EQ(st2.files_opened, st1.files_opened);
	CHECK(st1.files_opened >= 1);

	m2 = calloc(fx.nmaps + 1, sizeof(*m2));
	CHECK(m2 != NULL);
	if (!m2)
		goto out;
	memcpy(m2, fx.maps, fx.nmaps * sizeof(*m2));
	/* an unopenable file high above every real mapping */
	m2[fx.nmaps] = (struct argus_proc_map){ .start = 0x7ffff0000000ull,
		.end = 0x7ffff0001000ull, .dev = 1, .inode = 1,
		.path = "/nonexistent/argus-test.so" };
	nb = unwind_fx(u, m2, fx.nmaps + 1, b);
	argus_unwinder__stats(u, &st2);
	CHECK_EQ(st2.sessions, 2);
	CHECK_EQ(st2.files_opened, st1.files_opened);
	CHECK(na == nb && !memcmp(a, b, na * sizeof(a[0])));
out:
	free(m2);       /* the paths belong to fx.maps */
	argus_unwinder__free(u);
	argus_unwinder__free(NULL);
}

/* A file that could not be opened for one process (it had exited: no
 * /proc/PID/map_files, no /proc/PID/root) is opened again for the next
 * process running it; the failure is not remembered across sessions.
 * Here pid 0 opens the paths as they are: first a layout whose paths lead
 * nowhere (the same dev/inode), then the real paths plus one more mapping
 * (a new layout, so a new session). */
static void test_unwinder_retries_a_file_it_could_not_open(void)
{
	struct argus_unwinder *u;
	struct argus_proc_map *gone = NULL, *m2 = NULL;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	int na, nb;

	u = unwinder_with_fx(a, &na);
	if (!u)
		goto out;
	argus_unwinder__free(u);
	u = argus_unwinder__new();
	gone = calloc(fx.nmaps, sizeof(*gone));
	m2 = calloc(fx.nmaps + 1, sizeof(*m2));
	CHECK(u && gone && m2);
	if (!u || !gone || !m2)
		goto out;
	memcpy(gone, fx.maps, fx.nmaps * sizeof(*gone));
	for (size_t i = 0; i < fx.nmaps; i++)
		if (!(gone[i].flags & ARGUS_PROC_MAP_VDSO))
			gone[i].path = "/nonexistent/argus-process-gone";
	nb = argus_unwinder__unwind(u, 0, gone, fx.nmaps, fx.rec.ip,
				    fx.rec.sp, fx.rec.bp, fx.copy, fx.rec.len,
				    b, MAX_FRAMES);
	CHECK(nb >= 1 && nb < na);

	memcpy(m2, fx.maps, fx.nmaps * sizeof(*m2));
	m2[fx.nmaps] = (struct argus_proc_map){ .start = 0x7ffff0000000ull,
		.end = 0x7ffff0001000ull, .dev = 1, .inode = 1,
		.path = "/nonexistent/argus-test.so" };
	nb = argus_unwinder__unwind(u, 0, m2, fx.nmaps + 1, fx.rec.ip,
				    fx.rec.sp, fx.rec.bp, fx.copy, fx.rec.len,
				    b, MAX_FRAMES);
	CHECK_EQ(nb, na);
	CHECK(na == nb && !memcmp(a, b, na * sizeof(a[0])));
out:
	free(gone);     /* the paths belong to fx.maps or are literals */
	free(m2);
	argus_unwinder__free(u);
}

/* Does this process hold an fd to path, and is it a deleted file? */
static bool holds_deleted(const char *path)
{
	char want[600], link[700], target[700];
	bool found = false;

	snprintf(want, sizeof(want), "%s (deleted)", path);
	for (int fd = 0; fd < 1024 && !found; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found = !strcmp(target, want);
		}
	}
	return found;
}

/* Processes blocking in turn, each with a layout of its own (ASLR): up to
 * ARGUS_UNWIND_SLOTS of them keep their sessions, so a second round over
 * them builds none and every unwind is answered from the memo.  With 8
 * sessions, 24 processes in rotation rebuilt one per stack
 * (bench/unwind_procs.sh). */
static void test_unwinder_keeps_many_layouts(void)
{
	enum { N = 24 };
	struct argus_unwinder *u = NULL;
	struct argus_proc_map *other = NULL;
	struct argus_unwinder_stats st1 = { 0 }, st2;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	int na;

	_Static_assert(N <= ARGUS_UNWIND_SLOTS, "the rotation must fit in the sessions kept");
	u = unwinder_with_fx(a, &na);
	if (!u)
		return;
	other = calloc(fx.nmaps + 1, sizeof(*other));
	CHECK(other != NULL);
	if (!other)
		goto out;
	memcpy(other, fx.maps, fx.nmaps * sizeof(*other));
	for (int round = 0; round < 2; round++) {
		if (round == 1)
			argus_unwinder__stats(u, &st1);
		for (int k = 0; k < N; k++) {
			other[fx.nmaps] = (struct argus_proc_map){
				.start = 0x7ffff0000000ull + (uint64_t)k * 0x10000,
				.end = 0x7ffff0001000ull + (uint64_t)k * 0x10000,
				.dev = 1, .inode = 1, .path = "/nonexistent/argus-test.so" };
			CHECK_EQ(unwind_fx(u, other, fx.nmaps + 1, b), na);
		}
	}
	argus_unwinder__stats(u, &st2);
	CHECK_EQ(st2.sessions, st1.sessions);           /* none rebuilt */
	CHECK_EQ(st2.memo_hits - st1.memo_hits, (uint64_t)N);
	CHECK_EQ(st2.unwinds, st1.unwinds);
out:
	free(other);
	argus_unwinder__free(u);
}

/* A library deleted while cached (a package upgrade) is closed by
 * argus_unwinder__drop_deleted() once no cached session reports it, and
 * not before.  Here the file holding the sample's ip is a private copy
 * (its own dev/inode; pid 0 opens it by path), unwound once, then deleted;
 * the session reporting it is pushed out by ARGUS_UNWIND_SLOTS + 1 other
 * layouts. */
static void test_unwinder_closes_deleted_files(void)
{
	struct argus_unwinder *u = NULL;
	struct argus_proc_map *m = NULL, *other = NULL;
	char tmp[] = "/tmp/argus-test-deleted-XXXXXX";
	const struct argus_proc_map *hit;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	struct stat st;
	int na, nb, fd = -1;
	char cmd[700];

	u = unwinder_with_fx(a, &na);
	if (!u)
		goto out;
	hit = argus_proc_maps__find(fx.maps, fx.nmaps, fx.rec.ip);
	CHECK(hit != NULL && !(hit->flags & ARGUS_PROC_MAP_VDSO));
	if (!hit || (fd = mkstemp(tmp)) < 0)
		goto out;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", hit->path, tmp);
	CHECK_EQ(system(cmd), 0);
	CHECK_EQ(stat(tmp, &st), 0);
	m = calloc(fx.nmaps, sizeof(*m));
	other = calloc(fx.nmaps + 1, sizeof(*other));
	CHECK(m && other);
	if (!m || !other)
		goto out;
	memcpy(m, fx.maps, fx.nmaps * sizeof(*m));
	for (size_t i = 0; i < fx.nmaps; i++)
		if (m[i].dev == hit->dev && m[i].inode == hit->inode) {
			m[i].path = tmp;
			m[i].dev = st.st_dev;
			m[i].inode = st.st_ino;
		}
	nb = argus_unwinder__unwind(u, 0, m, fx.nmaps, fx.rec.ip, fx.rec.sp,
				    fx.rec.bp, fx.copy, fx.rec.len, b, MAX_FRAMES);
	CHECK_EQ(nb, na);  /* the copy unwinds like the original */
	CHECK_EQ(unlink(tmp), 0);
	CHECK(holds_deleted(tmp));
	CHECK_EQ(argus_unwinder__drop_deleted(u), 0);  /* its session reports it */
	CHECK(holds_deleted(tmp));

	/* a session more than the unwinder keeps: the original files plus
	 * one mapping each */
	memcpy(other, fx.maps, fx.nmaps * sizeof(*other));
	for (int k = 0; k < ARGUS_UNWIND_SLOTS + 1; k++) {
		other[fx.nmaps] = (struct argus_proc_map){
			.start = 0x7ffff0000000ull + (uint64_t)k * 0x10000,
			.end = 0x7ffff0001000ull + (uint64_t)k * 0x10000,
			.dev = 1, .inode = 1, .path = "/nonexistent/argus-test.so" };
		CHECK_EQ(unwind_fx(u, other, fx.nmaps + 1, b), na);
	}
	CHECK_EQ(argus_unwinder__drop_deleted(u), 1);
	CHECK(!holds_deleted(tmp));
	/* the files still on disk stay cached: the next layout opens none */
	{
		struct argus_unwinder_stats st1, st2;

		argus_unwinder__stats(u, &st1);
		other[fx.nmaps].start = 0x7fffe0000000ull;
		other[fx.nmaps].end = 0x7fffe0001000ull;
		CHECK_EQ(unwind_fx(u, other, fx.nmaps + 1, b), na);
		argus_unwinder__stats(u, &st2);
		CHECK_EQ(st2.files_opened, st1.files_opened);
	}
out:
	unlink(tmp);
	free(m);
	free(other);
	argus_unwinder__free(u);
}

/* A process mapping more files than the unwinder caches (256): building
 * its session must not evict the files it reported first, or their
 * modules are dead before the first unwind.  Here the fixture's maps,
 * then 300 copies of its binary mapped low (pid 0 opens them by path). */
#define MANY_FILES 300
static void test_unwinder_session_with_more_files_than_the_cache(void)
{
	struct argus_unwinder *u = argus_unwinder__new();
	struct argus_proc_map *m = NULL;
	const struct argus_proc_map *self = NULL;
	char dir[] = "/tmp/argus-test-many-XXXXXX", (*paths)[64] = NULL;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	int na, nb, made = 0;

	CHECK(fixture());
	CHECK(u != NULL);
	if (!fx.ok || !u || !mkdtemp(dir))
		goto out;
	na = unwind_fx(u, fx.maps, fx.nmaps, a);
	CHECK(na >= 4);
	argus_unwinder__free(u);
	u = argus_unwinder__new();
	for (size_t i = 0; i < fx.nmaps; i++)
		if (!strcmp(fx.maps[i].path, BUSY_NOFP_PATH))
			self = &fx.maps[i];
	m = calloc(fx.nmaps + MANY_FILES, sizeof(*m));
	paths = calloc(MANY_FILES, sizeof(*paths));
	CHECK(u && self && m && paths);
	if (!u || !self || !m || !paths)
		goto out;
	memcpy(m, fx.maps, fx.nmaps * sizeof(*m));
	made = many_maps_copy(self, dir, MANY_FILES, m + fx.nmaps, paths);
	CHECK_EQ(made, MANY_FILES);
	nb = argus_unwinder__unwind(u, 0, m, fx.nmaps + made, fx.rec.ip,
				    fx.rec.sp, fx.rec.bp, fx.copy, fx.rec.len,
				    b, MAX_FRAMES);
	CHECK_EQ(nb, na);
	CHECK(na == nb && !memcmp(a, b, na * sizeof(a[0])));
out:
	for (int i = 0; paths && i < made; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(paths);
	free(m);
	argus_unwinder__free(u);
}

/* The memo (symbols/unwind_memo.h): the same sample again is answered
 * from it; a copy whose first return address differs is not (it unwinds
 * anew, to a different frame 1); a copy that differs only in a word the
 * frames do not depend on still is. */
static void test_unwind_memo_answers_only_for_the_same_return_addresses(void)
{
	struct argus_unwinder *u = argus_unwinder__new();
	struct argus_unwinder_stats st0, st;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	uint8_t saved[COPY_MAX];
	size_t ra_off = SIZE_MAX, other_off = SIZE_MAX;
	int na, nb;

	CHECK(fixture());
	CHECK(u != NULL);
	if (!fx.ok || !u)
		goto out;
	memcpy(saved, fx.copy, sizeof(saved));
	na = unwind_fx(u, fx.maps, fx.nmaps, a);
	CHECK(na >= 4);
	argus_unwinder__stats(u, &st0);
	CHECK_EQ(st0.unwinds, 1);
	CHECK_EQ(unwind_fx(u, fx.maps, fx.nmaps, b), na);
	argus_unwinder__stats(u, &st);
	CHECK_EQ(st.memo_hits, st0.memo_hits + 1);
	CHECK_EQ(st.unwinds, st0.unwinds);
	CHECK(!memcmp(a, b, (size_t)na * sizeof(a[0])));

	/* where frame 1's return address sits, and a word that is none of
	 * the frames' return addresses, nor zero, nor a saved frame pointer */
	for (size_t off = 0; off + 8 <= fx.rec.len; off += 8) {
		uint64_t w;
		bool used = false;

		memcpy(&w, fx.copy + off, 8);
		for (int j = 1; j < na; j++)
			used |= w == a[j];
		if (w == a[1] && ra_off == SIZE_MAX)
			ra_off = off;
		/* a local: not a code address, nor a stack address (a saved
		 * frame pointer would be one) */
		if (!used && w && other_off == SIZE_MAX &&
		    !argus_proc_maps__find(fx.maps, fx.nmaps, w) &&
		    (w < fx.rec.sp - (1u << 20) || w > fx.rec.sp + (1u << 20)))
			other_off = off;
	}
	CHECK(ra_off != SIZE_MAX);
	CHECK(other_off != SIZE_MAX);
	if (other_off != SIZE_MAX) {
		fx.copy[other_off] ^= 0x5a;
		CHECK_EQ(unwind_fx(u, fx.maps, fx.nmaps, b), na);
		argus_unwinder__stats(u, &st0);
		CHECK_EQ(st0.memo_hits, st.memo_hits + 1);
		memcpy(fx.copy, saved, sizeof(saved));
	}
	if (ra_off != SIZE_MAX) {
		uint64_t w = a[2];      /* another real return address */

		memcpy(fx.copy + ra_off, &w, 8);
		argus_unwinder__stats(u, &st);
		nb = unwind_fx(u, fx.maps, fx.nmaps, b);
		argus_unwinder__stats(u, &st0);
		CHECK_EQ(st0.unwinds, st.unwinds + 1);
		CHECK_EQ(st0.memo_hits, st.memo_hits);
		CHECK(nb >= 2 && b[1] == a[2]);
		memcpy(fx.copy, saved, sizeof(saved));
	}
out:
	argus_unwinder__free(u);
}

/* A stack captured inside a signal handler, the way the probe would:
 * the unwind goes handler -> __restore_rt -> the interrupted code, and
 * the interrupted frame's CFA is the rsp saved in the ucontext, a word
 * read from the copy (glibc's CFI for __restore_rt). */
static struct {
	uint64_t ip, sp, bp, len, stack_end;
	uint64_t rsp_off;       /* offset of uc_mcontext.gregs[REG_RSP] */
	uint8_t copy[16384];
} sigfx;

#if defined(__clang__)
#define CAPTURE_FN __attribute__((noinline, optnone))
#else
#define CAPTURE_FN __attribute__((noinline, noipa))
#endif

/* A raw copy of our own stack, redzones and all: not for ASan to check
 * (and no memcpy() it would intercept). */
__attribute__((no_sanitize_address, noinline))
static void copy_own_stack(uint8_t *dst, uint64_t src, size_t n)
{
	const volatile uint8_t *s = (const volatile uint8_t *)(uintptr_t)src;

	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}

CAPTURE_FN static void sig_capture(ucontext_t *uc)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0; mov %%rsp, %1; mov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	sigfx.ip = ip;
	sigfx.sp = sp;
	sigfx.bp = bp;
	sigfx.len = sigfx.stack_end > sp && sigfx.stack_end - sp < sizeof(sigfx.copy) ?
		    sigfx.stack_end - sp : sizeof(sigfx.copy);
	copy_own_stack(sigfx.copy, sp, sigfx.len);
	sigfx.rsp_off = (uint64_t)(uintptr_t)&uc->uc_mcontext.gregs[REG_RSP] - sp;
}

static void sig_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	sig_capture(uc);
}

CAPTURE_FN static void sig_interrupted(void)
{
	raise(SIGUSR1);
}

/* The memo must not answer for a stack whose signal frame saved another
 * rsp: the frames above it come from elsewhere on the stack.  The saved
 * rsp is no return address, frame pointer or zero, but it is a frame's
 * rsp, and such words are verified too. */
static void test_unwind_memo_verifies_a_signal_frames_saved_rsp(void)
{
	struct argus_unwinder *u = argus_unwinder__new(), *fresh = NULL;
	struct sigaction sa = { .sa_sigaction = sig_handler, .sa_flags = SA_SIGINFO };
	struct argus_proc_map *maps = NULL;
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES], want[MAX_FRAMES], rsp;
	size_t nmaps = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int na, nb, nwant;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			sigfx.stack_end = hi;
	}
	if (f)
		fclose(f);
	CHECK(u != NULL);
	CHECK(sigfx.stack_end != 0);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sig_interrupted();
	signal(SIGUSR1, SIG_DFL);
	CHECK_EQ(argus_proc_maps__read(getpid(), &maps, &nmaps), 0);
	CHECK(sigfx.rsp_off + 8 <= sigfx.len);
	if (!u || !maps || sigfx.rsp_off + 8 > sigfx.len)
		goto out;

	na = argus_unwinder__unwind(u, getpid(), maps, nmaps, sigfx.ip, sigfx.sp,
				    sigfx.bp, sigfx.copy, sigfx.len, a, MAX_FRAMES);
	/* capture, handler, __restore_rt, then the interrupted code's callers */
	CHECK(na >= 5);
	memcpy(&rsp, sigfx.copy + sigfx.rsp_off, 8);
	/* the same sample, but the interrupted code's rsp one word higher */
	rsp += 8;
	memcpy(sigfx.copy + sigfx.rsp_off, &rsp, 8);
	fresh = argus_unwinder__new();
	CHECK(fresh != NULL);
	if (!fresh)
		goto out;
	nwant = argus_unwinder__unwind(fresh, getpid(), maps, nmaps, sigfx.ip,
				       sigfx.sp, sigfx.bp, sigfx.copy, sigfx.len,
				       want, MAX_FRAMES);
	/* meaningful only if that changes the stack */
	CHECK(nwant != na || memcmp(want, a, (size_t)na * sizeof(a[0])));
	nb = argus_unwinder__unwind(u, getpid(), maps, nmaps, sigfx.ip, sigfx.sp,
				    sigfx.bp, sigfx.copy, sigfx.len, b, MAX_FRAMES);
	CHECK_EQ(nb, nwant);
	CHECK(nb == nwant && !memcmp(b, want, (size_t)nb * sizeof(b[0])));
out:
	argus_proc_maps__free(maps, nmaps);
	argus_unwinder__free(fresh);
	argus_unwinder__free(u);
}

static void test_unwind_garbage_input_is_graceful(void)
{
	uint8_t junk[COPY_MAX];
	uint64_t ips[MAX_FRAMES];
	int n, round;

	CHECK(fixture());
	if (!fx.ok)
		return;
	srand(42);
	for (round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = rand();
		/* Half the rounds plant plausible stack/code pointers. */
		if (round & 1)
			for (size_t i = 0; i + 8 <= sizeof(junk); i += 64) {
				uint64_t v = (rand() & 1) ? fx.rec.sp + (rand() % 8192)
							  : fx.rec.ip + (rand() % 512);
				memcpy(junk + i, &v, 8);
			}
		n = argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip,
				 fx.rec.sp, rand(), junk, sizeof(junk), ips,
				 MAX_FRAMES);
		CHECK(n >= 1 && n <= MAX_FRAMES);
		CHECK_EQ(ips[0], fx.rec.ip);
	}
	/* An ip in no mapping still yields itself. */
	n = argus_unwind(fx.pid, fx.maps, fx.nmaps, 0xdead0000beefull,
			 fx.rec.sp, fx.rec.bp, fx.copy, fx.rec.len, ips,
			 MAX_FRAMES);
	CHECK(n >= 1);
	CHECK_EQ(ips[0], 0xdead0000beefull);
	/* No maps at all, no sp, bad arguments. */
	CHECK_EQ(argus_unwind(fx.pid, NULL, 0, fx.rec.ip, fx.rec.sp, 0,
			      fx.copy, fx.rec.len, ips, MAX_FRAMES), 1);
	CHECK_EQ(argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, 0, 0,
			      fx.copy, fx.rec.len, ips, MAX_FRAMES), 1);
	CHECK_EQ(argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, fx.rec.sp,
			      0, fx.copy, fx.rec.len, ips, 0), -EINVAL);
	CHECK_EQ(argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, fx.rec.sp,
			      0, fx.copy, fx.rec.len, NULL, 4), -EINVAL);
	/* A copy whose end would wrap the address space. */
	n = argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, UINT64_MAX - 16,
			 0, fx.copy, fx.rec.len, ips, MAX_FRAMES);
	CHECK(n >= 1);
}

static void test_lookup_unknown_address_is_enoent(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new();
	const struct argus_proc_map *libc = NULL;
	struct argus_proc_map *maps;
	struct argus_sym sym;
	char buf[256];
	size_t n;

	CHECK_EQ(argus_proc_maps__read(getpid(), &maps, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(base(maps[i].path), "libc.so", 7))
			libc = &maps[i];
	CHECK(libc != NULL && s != NULL);
	if (!libc || !s)
		goto out;

	/* A real libc function resolves... */
	CHECK_EQ(argus_symbolizer__lookup(s, libc->path, libc->start,
					  libc->pgoff,
					  (uint64_t)(uintptr_t)&getpid, &sym),
		 0);
	CHECK(strstr(sym.func, "getpid") != NULL);
	CHECK(!strncmp(sym.module, "libc.so", 7));

	/* ...an offset past the end of the file does not. */
	CHECK_EQ(argus_symbolizer__lookup(s, libc->path, libc->start,
					  libc->pgoff, libc->start + (1ull << 40),
					  &sym), -ENOENT);
	CHECK(!strncmp(sym.module, "libc.so", 7));
	CHECK_EQ(argus_sym__format(&sym, 0, buf, sizeof(buf)), 0);
	CHECK(!strncmp(buf, "libc.so", 7) && strstr(buf, "+0x") != NULL);

	/* A missing file: module + file offset, still -ENOENT. */
	CHECK_EQ(argus_symbolizer__lookup(s, "/nonexistent/libgone.so.1",
					  0x400000, 0x1000, 0x400123, &sym),
		 -ENOENT);
	CHECK(!strcmp(sym.module, "libgone.so.1"));
	CHECK_EQ(sym.module_off, 0x1123);
	CHECK_EQ(argus_symbolizer__lookup(s, "/nonexistent/libgone.so.1",
					  0x400000, 0x1000, 0x100, &sym),
		 -ENOENT);
	CHECK_EQ(argus_symbolizer__lookup(s, NULL, 0, 0, 0, &sym), -EINVAL);
out:
	argus_proc_maps__free(maps, n);
	argus_symbolizer__free(s);
	argus_symbolizer__free(NULL);
}

static void test_lookup_vdso_by_name(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new();
	const struct argus_proc_map *vdso = NULL;
	struct argus_proc_map *maps;
	struct argus_sym sym;
	int found = 0;
	size_t n;

	CHECK_EQ(argus_proc_maps__read(getpid(), &maps, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (maps[i].flags & ARGUS_PROC_MAP_VDSO)
			vdso = &maps[i];
	CHECK(vdso != NULL && s != NULL);
	if (!vdso || !s)
		goto out;
	CHECK(vdso->build_id_len > 0);
	/* Some address of the vDSO's text names a __vdso_ function. */
	for (uint64_t ip = vdso->start; ip < vdso->end && !found; ip += 16)
		if (!argus_symbolizer__lookup(s, "[vdso]", vdso->start, 0, ip,
					      &sym))
			found = strstr(sym.func, "vdso") != NULL;
	CHECK(found);
	CHECK(!strcmp(sym.module, "[vdso]"));
out:
	argus_proc_maps__free(maps, n);
	argus_symbolizer__free(s);
}

/*
 * Link-time fakes of the two trace reader lookups argus_symbolize_trace_ip()
 * uses, so this test does not depend on a trace file (defining them here
 * keeps the linker from pulling the real ones out of libargus_trace.a).
 */
static struct argus_map fake_map;
static const char *fake_path;
static const struct argus_trace *const fake_trace =
	(const struct argus_trace *)&fake_map;

const struct argus_map *argus_trace__map(const struct argus_trace *t,
					 uint32_t pid, uint64_t ip,
					 uint64_t ts)
{
	(void)ts;
	if (t != fake_trace || pid != fake_map.pid || ip < fake_map.start ||
	    ip >= fake_map.end)
		return NULL;
	return &fake_map;
}

const char *argus_trace__string(const struct argus_trace *t, uint32_t id)
{
	return t == fake_trace && id == 1 ? fake_path : NULL;
}

static void test_symbolize_trace_ip_checks_recorded_build_id(void)
{
	struct argus_symbolizer *s = argus_symbolizer__new();
	const struct argus_proc_map *m;
	struct argus_sym sym;

	CHECK(fixture());
	if (!fx.ok || !s)
		goto out;
	m = argus_proc_maps__find(fx.maps, fx.nmaps, fx.rec.ip);
	CHECK(m != NULL);
	if (!m)
		goto out;
	fake_map.pid = fx.pid;
	fake_map.path = 1;
	fake_map.start = m->start;
	fake_map.end = m->end;
	fake_map.pgoff = m->pgoff;
	fake_map.build_id_len = m->build_id_len;
	memcpy(fake_map.build_id, m->build_id, m->build_id_len);
	fake_path = m->path;
	CHECK_EQ(m->build_id_len, 20);

	CHECK_EQ(argus_symbolize_trace_ip(s, fake_trace, fx.pid, 0, fx.rec.ip,
					  &sym), 0);
	CHECK(!strcmp(sym.func, "busy_leaf"));
	/* No recorded mapping for the ip, or for the pid. */
	CHECK_EQ(argus_symbolize_trace_ip(s, fake_trace, fx.pid, 0, 0x10,
					  &sym), -ENOENT);
	CHECK_EQ(argus_symbolize_trace_ip(s, fake_trace, fx.pid + 1, 0,
					  fx.rec.ip, &sym), -ENOENT);
	/* The file on disk is not the one that was traced. */
	fake_map.build_id[0] ^= 0xff;
	CHECK_EQ(argus_symbolize_trace_ip(s, fake_trace, fx.pid, 0, fx.rec.ip,
					  &sym), -ESTALE);
	CHECK(sym.func[0] == '\0');
	CHECK(!strcmp(sym.module, "busy_nofp"));
	CHECK_EQ(sym.module_off, fx.rec.ip - m->start + m->pgoff);
out:
	argus_symbolizer__free(s);
}

static void test_format_frame_lines(void)
{
	struct argus_sym sym;
	char buf[128];

	memset(&sym, 0, sizeof(sym));
	strcpy(sym.func, "busy_leaf");
	sym.func_off = 0x1a;
	strcpy(sym.file, "/src/tests/unit/busy_nofp.c");
	sym.line = 42;
	strcpy(sym.module, "busy_nofp");
	CHECK_EQ(argus_sym__format(&sym, 0, buf, sizeof(buf)), 0);
	CHECK(!strcmp(buf, "busy_leaf+0x1a (busy_nofp.c:42) [busy_nofp]"));

	sym.line = 0;
	CHECK_EQ(argus_sym__format(&sym, 0, buf, sizeof(buf)), 0);
	CHECK(!strcmp(buf, "busy_leaf+0x1a [busy_nofp]"));

	memset(&sym, 0, sizeof(sym));
	strcpy(sym.module, "libc.so.6");
	sym.module_off = 0x8a3f0;
	CHECK_EQ(argus_sym__format(&sym, 0x7f0000001234ull, buf, sizeof(buf)),
		 0);
	CHECK(!strcmp(buf, "libc.so.6+0x8a3f0"));

	memset(&sym, 0, sizeof(sym));
	CHECK_EQ(argus_sym__format(&sym, 0x7f0000001234ull, buf, sizeof(buf)),
		 0);
	CHECK(!strcmp(buf, "0x7f0000001234"));

	strcpy(sym.module, "libc.so.6");
	CHECK_EQ(argus_sym__format(&sym, 0, buf, 8), -ENOSPC);
	CHECK_EQ(strlen(buf), 7);
	CHECK_EQ(argus_sym__format(&sym, 0, buf, 0), -EINVAL);
}

/* ---- sandbox mode: root's CLI parses in the helper (symbolize.h) ---- */

/* Frames of the fixture's unwound stack, then a spread of libc's text:
 * what a dump of a trace asks for. */
static size_t sandbox_probe_ips(uint64_t *ips, size_t max)
{
	size_t n = 0;
	int k;

	if (!fixture())
		return 0;
	k = argus_unwind(fx.pid, fx.maps, fx.nmaps, fx.rec.ip, fx.rec.sp,
			 fx.rec.bp, fx.copy, fx.rec.len, ips, (int)(max / 2));
	if (k > 0)
		n = (size_t)k;
	for (size_t i = 0; i < fx.nmaps && n < max; i++) {
		const struct argus_proc_map *m = &fx.maps[i];

		if (!strstr(m->path, "libc.so"))   /* maps keep executable mappings only */
			continue;
		for (uint64_t a = m->start + 0x1234; a < m->end && n < max;
		     a += (m->end - m->start) / 16)
			ips[n++] = a;
	}
	return n;
}

static void sandbox_lookup(struct argus_symbolizer *s, uint64_t ip,
			   int *rc, struct argus_sym *out)
{
	const struct argus_proc_map *m = argus_proc_maps__find(fx.maps, fx.nmaps, ip);

	memset(out, 0, sizeof(*out));
	*rc = m ? argus_symbolizer__lookup(s, m->path, m->start, m->pgoff, ip, out)
		: -ENOENT;
}

static bool sym_equal(const struct argus_sym *a, const struct argus_sym *b)
{
	return !strcmp(a->func, b->func) && a->func_off == b->func_off &&
	       !strcmp(a->file, b->file) && a->line == b->line &&
	       !strcmp(a->module, b->module) && a->module_off == b->module_off;
}

static void test_sandboxed_lookups_equal_in_process_ones(void)
{
	struct argus_symbolizer *local = argus_symbolizer__new_in(false);
	struct argus_symbolizer *box = argus_symbolizer__new_in(true);
	struct argus_symbolizer_stats st;
	uint64_t ips[48];
	size_t n = sandbox_probe_ips(ips, 48), named = 0, lines = 0;

	CHECK(local && box);
	CHECK(n >= 16);
	if (!local || !box)
		goto out;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			struct argus_sym a, b;
			int ra, rb;

			sandbox_lookup(local, ips[i], &ra, &a);
			sandbox_lookup(box, ips[i], &rb, &b);
			CHECK_EQ(ra, rb);
			CHECK(sym_equal(&a, &b));
			if (!sym_equal(&a, &b))
				fprintf(stderr, "  %#llx: %s+%#llx %s:%u vs %s+%#llx %s:%u\n",
					(unsigned long long)ips[i], a.func,
					(unsigned long long)a.func_off, a.file, a.line,
					b.func, (unsigned long long)b.func_off, b.file, b.line);
			named += pass == 0 && b.func[0];
			lines += pass == 0 && b.line;
		}
	/* the fixture's chain has names and lines (its own DWARF), libc names
	 * (and lines when libc6-dbg is installed) */
	CHECK(named >= n / 2);
	CHECK(lines >= 4);
	argus_symbolizer__stats(box, &st);
	CHECK(st.sandboxed);
	CHECK(st.remote_lookups >= 1);
	CHECK(st.cache_hits >= n / 2);      /* the second pass */
	CHECK_EQ(st.helper_restarts, 0);
	fprintf(stderr, "  %zu addresses, %zu named, %zu with lines; helper: %llu lookups, %llu from the cache\n",
		n, named, lines, (unsigned long long)st.remote_lookups,
		(unsigned long long)st.cache_hits);
out:
	argus_symbolizer__free(local);
	argus_symbolizer__free(box);
}

static void test_sandbox_helper_runs_unprivileged_under_seccomp(void)
{
	struct argus_symbolizer *box = argus_symbolizer__new_in(true);
	struct argus_symbolizer_stats st;
	struct argus_sym sym;
	uint64_t ips[4];
	int rc;

	CHECK(box != NULL);
	if (!box || sandbox_probe_ips(ips, 4) < 1)
		goto out;
	sandbox_lookup(box, ips[0], &rc, &sym);
	CHECK_EQ(rc, 0);
	argus_symbolizer__stats(box, &st);
	CHECK(st.helper_pid > 0);
	CHECK_EQ(status_field((pid_t)st.helper_pid, "Seccomp"), 2);     /* filter */
	CHECK_EQ(status_field((pid_t)st.helper_pid, "NoNewPrivs"), 1);
	/* root's CLI: the parsing runs as argus-unwind or nobody */
	if (geteuid() == 0)
		CHECK(status_field((pid_t)st.helper_pid, "Uid") > 0);
out:
	argus_symbolizer__free(box);
}

static void test_sandbox_survives_a_killed_helper(void)
{
	struct argus_symbolizer *local = argus_symbolizer__new_in(false);
	struct argus_symbolizer *box = argus_symbolizer__new_in(true);
	struct argus_symbolizer_stats st0, st1;
	struct argus_sym a, b;
	uint64_t ips[8];
	int ra, rb;

	CHECK(local && box);
	if (!local || !box || sandbox_probe_ips(ips, 8) < 2)
		goto out;
	sandbox_lookup(box, ips[0], &rb, &b);
	CHECK_EQ(rb, 0);
	argus_symbolizer__stats(box, &st0);
	CHECK(st0.helper_pid > 0);
	/* its user kills it (or a hostile file crashed it) */
	CHECK_EQ(kill((pid_t)st0.helper_pid, SIGKILL), 0);
	usleep(50 * 1000);
	/* an address of the same file, not cached: the new helper is sent the
	 * file again and answers as the in-process symbolizer does */
	sandbox_lookup(local, ips[1], &ra, &a);
	sandbox_lookup(box, ips[1], &rb, &b);
	CHECK_EQ(ra, 0);
	CHECK_EQ(rb, 0);
	CHECK(sym_equal(&a, &b));
	argus_symbolizer__stats(box, &st1);
	CHECK_EQ(st1.helper_restarts, 1);
	CHECK(st1.helper_pid > 0 && st1.helper_pid != st0.helper_pid);
	CHECK_EQ(st1.files_failed, 0);
out:
	argus_symbolizer__free(local);
	argus_symbolizer__free(box);
}

int main(void)
{
	RUN(test_proc_maps_self_lists_libc_with_build_id);
	RUN(test_proc_maps_rereading_hits_the_build_id_cache);
	RUN(test_proc_maps_parse_skips_malformed_lines);
	RUN(test_unwind_recovers_nofp_chain_with_source_lines);
	RUN(test_frame_pointer_walk_cannot_recover_nofp_chain);
	RUN(test_unwinder_caches_give_the_same_stack);
	RUN(test_unwinder_retries_a_file_it_could_not_open);
	RUN(test_unwinder_keeps_many_layouts);
	RUN(test_unwinder_closes_deleted_files);
	RUN(test_unwinder_session_with_more_files_than_the_cache);
	RUN(test_unwind_memo_answers_only_for_the_same_return_addresses);
	RUN(test_unwind_memo_verifies_a_signal_frames_saved_rsp);
	RUN(test_unwind_garbage_input_is_graceful);
	RUN(test_lookup_unknown_address_is_enoent);
	RUN(test_lookup_vdso_by_name);
	RUN(test_symbolize_trace_ip_checks_recorded_build_id);
	RUN(test_format_frame_lines);
	RUN(test_sandboxed_lookups_equal_in_process_ones);
	RUN(test_sandbox_helper_runs_unprivileged_under_seccomp);
	RUN(test_sandbox_survives_a_killed_helper);
	fixture_end();
	return check_report();
}
