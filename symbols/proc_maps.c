/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proc_maps.c - executable mappings of a process and their build-ids.
 *
 * Parsing: /proc/PID/maps is slurped (at most ARGUS_PROC_MAPS_READ_MAX
 * bytes) and cut at '\n'; each line must read
 *     START-END PERMS PGOFF MAJOR:MINOR INODE [PATH]
 * with hex numbers of at most 16 digits; anything else is skipped.  The
 * kernel pads the columns with spaces and the path may itself contain
 * spaces, so the path is "the rest of the line after the inode".
 *
 * Build-ids: bid_cache[] is a direct-mapped table keyed by (dev, inode),
 * BID_SLOTS entries, guarded by bid_lock.  A slot holds a positive result
 * or "the file opened but has no build-id note"; failures to open are not
 * cached (the process may simply have exited).  A file replaced in place
 * with the same inode keeps its old build-id until evicted; package
 * managers write new inodes, so this is accepted.
 *
 * The vDSO has no file: its image is read from our own address space
 * (getauxval(AT_SYSINFO_EHDR)) once, and another process's "[vdso]" is
 * assumed to be the same image when its size matches (same kernel).
 */
#include "proc_maps.h"
#include "elf_guard.h"
#include "safe_file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define BID_SLOTS 512
#define DELETED_SUFFIX " (deleted)"

struct bid_slot {
	uint64_t dev, inode;
	uint8_t used;           /* 1 = holds a result for (dev, inode) */
	uint8_t len;            /* 0 = file has no build-id */
	uint8_t id[ARGUS_PROC_MAP_BUILD_ID_MAX];
};

static struct bid_slot bid_cache[BID_SLOTS];
static pthread_mutex_t bid_lock = PTHREAD_MUTEX_INITIALIZER;

/* Our own vDSO, filled once by vdso_init(). */
static struct {
	pthread_once_t once;
	const void *image;      /* NULL = no vDSO */
	size_t size;            /* bytes of ELF image */
	size_t map_size;        /* size rounded up to pages */
	uint8_t bid_len;
	uint8_t bid[ARGUS_PROC_MAP_BUILD_ID_MAX];
	int memfd;              /* -1 until first __vdso_fd() */
	pthread_mutex_t lock;   /* guards memfd creation */
} vdso = { PTHREAD_ONCE_INIT, NULL, 0, 0, 0, {0}, -1,
	   PTHREAD_MUTEX_INITIALIZER };

static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static uint8_t elf_build_id(Elf *elf, uint8_t *id)
{
	const void *p;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &p);

	if (len <= 0)
		return 0;
	if (len > ARGUS_PROC_MAP_BUILD_ID_MAX)
		len = ARGUS_PROC_MAP_BUILD_ID_MAX;
	memcpy(id, p, len);
	return (uint8_t)len;
}

static void vdso_init(void)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	size_t size, page = sysconf(_SC_PAGESIZE);
	Elf *elf;

	pthread_once(&elf_once, elf_init);
	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	/* The kernel's vdso image carries its section headers last. */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20))
		return;
	vdso.image = base;
	vdso.size = size;
	vdso.map_size = (size + page - 1) / page * page;
	elf = elf_memory((char *)base, size);
	if (elf) {
		vdso.bid_len = elf_build_id(elf, vdso.bid);
		elf_end(elf);
	}
}

int argus_proc_maps__vdso_fd(void)
{
	int fd, err = 0;

	pthread_once(&vdso.once, vdso_init);
	if (!vdso.image)
		return -ENOENT;
	pthread_mutex_lock(&vdso.lock);
	if (vdso.memfd < 0) {
		fd = memfd_create("argus-vdso", MFD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
		} else if (pwrite(fd, vdso.image, vdso.size, 0) !=
			   (ssize_t)vdso.size) {
			err = -EIO;
			close(fd);
		} else {
			vdso.memfd = fd;
		}
	}
	pthread_mutex_unlock(&vdso.lock);
	if (err)
		return err;
	fd = fcntl(vdso.memfd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

static struct bid_slot *bid_slot(uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode ^ (dev << 17) ^ (dev >> 7)) * 0x9e3779b97f4a7c15ull;

	return &bid_cache[(h >> 32) % BID_SLOTS];
}

/* A path that names something else than the mapping said (a FIFO, a
 * tty, another file put there since): skipped, and counted. */
static int counted(int fd)
{
	if (fd == -EINVAL || fd == -ESTALE)
		argus_guard__count(ARGUS_GUARD_FILE_SKIPPED, 1);
	return fd;
}

int argus_proc_map__open(uint32_t pid, const struct argus_proc_map *m)
{
	char buf[PATH_MAX + 64];
	struct stat want = { 0 };
	int fd;

	if (!m || !m->path)
		return -EINVAL;
	if (m->flags & ARGUS_PROC_MAP_VDSO)
		return argus_proc_maps__vdso_fd();
	/* Every file here is another user's: opened without blocking and
	 * without taking a terminal, and only if it is the regular file the
	 * maps named (safe_file.h).  A process can unmap a file, put a FIFO
	 * or a link to its pty at the path, and wait for us to open it. */
	want.st_dev = (dev_t)m->dev;
	want.st_ino = (ino_t)m->inode;
	if (!pid)
		return counted(argus_open_untrusted(AT_FDCWD, m->path, NULL, NULL));
	/* the exact file of the mapping, even deleted, while it is mapped */
	snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = argus_open_untrusted(AT_FDCWD, buf, &want, NULL);
	if (fd >= 0)
		return fd;
	if (m->flags & ARGUS_PROC_MAP_DELETED)
		return -ENOENT;
	/* unmapped since: the path in its mount namespace, then in ours,
	 * each only if it is still the same (dev, inode) */
	if ((size_t)snprintf(buf, sizeof(buf), "/proc/%u/root%s", pid,
			     m->path) < sizeof(buf)) {
		fd = argus_open_untrusted(AT_FDCWD, buf, &want, NULL);
		if (fd >= 0 || fd == -EINVAL || fd == -ESTALE)
			return counted(fd);
	}
	return counted(argus_open_untrusted(AT_FDCWD, m->path, &want, NULL));
}

static void fill_build_id(uint32_t pid, struct argus_proc_map *m)
{
	struct bid_slot *s;
	int fd, len;

	if (m->flags & ARGUS_PROC_MAP_VDSO) {
		pthread_once(&vdso.once, vdso_init);
		if (vdso.image && m->end - m->start == vdso.map_size) {
			m->build_id_len = vdso.bid_len;
			memcpy(m->build_id, vdso.bid, vdso.bid_len);
		}
		return;
	}

	pthread_mutex_lock(&bid_lock);
	s = bid_slot(m->dev, m->inode);
	if (s->used && s->dev == m->dev && s->inode == m->inode) {
		m->build_id_len = s->len;
		memcpy(m->build_id, s->id, s->len);
		pthread_mutex_unlock(&bid_lock);
		return;
	}
	pthread_mutex_unlock(&bid_lock);

	/* Open and read outside the lock: this is the slow part.  Bounded
	 * preads of the notes only (elf_guard.h): never a mapping of another
	 * user's file (truncated under it, it was a SIGBUS), never a note
	 * read whole because its header says 512 MiB. */
	fd = argus_proc_map__open(pid, m);
	if (fd < 0)
		return;
	len = argus_elf__build_id(fd, m->build_id, sizeof(m->build_id));
	close(fd);
	if (len == -ENOMEM)
		return;
	m->build_id_len = len > 0 ? (uint8_t)len : 0;

	pthread_mutex_lock(&bid_lock);
	s = bid_slot(m->dev, m->inode);
	s->used = 1;
	s->dev = m->dev;
	s->inode = m->inode;
	s->len = m->build_id_len;
	memcpy(s->id, m->build_id, m->build_id_len);
	pthread_mutex_unlock(&bid_lock);
}

/* Parse at most 16 hex digits at *p (< end); advance *p. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (; s < end && n < 17; s++, n++) {
		int c = *s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		x = x << 4 | d;
	}
	if (n == 0 || n > 16)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (; s < end && *s >= '0' && *s <= '9'; s++, n++) {
		if (n >= 20 || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (*s - '0');
	}
	if (n == 0)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/*
 * One maps line [s, end) -> m (path not yet copied: *path and *plen point into
 * the line).  Returns 1 if it is an executable file or vdso mapping, 0 if
 * it is well-formed but not wanted, -1 if malformed.
 */
static int parse_line(const char *s, const char *end,
		      struct argus_proc_map *m, const char **path,
		      size_t *plen)
{
	uint64_t major, minor;
	char perms[4];

	memset(m, 0, sizeof(*m));
	if (parse_hex(&s, end, &m->start) || expect(&s, end, '-') ||
	    parse_hex(&s, end, &m->end) || expect(&s, end, ' '))
		return -1;
	if (end - s < 5 || s[4] != ' ')
		return -1;
	memcpy(perms, s, 4);
	s += 5;
	if ((perms[0] != 'r' && perms[0] != '-') ||
	    (perms[1] != 'w' && perms[1] != '-') ||
	    (perms[2] != 'x' && perms[2] != '-') ||
	    (perms[3] != 'p' && perms[3] != 's'))
		return -1;
	if (parse_hex(&s, end, &m->pgoff) || expect(&s, end, ' ') ||
	    parse_hex(&s, end, &major) || expect(&s, end, ':') ||
	    parse_hex(&s, end, &minor) || expect(&s, end, ' ') ||
	    parse_dec(&s, end, &m->inode))
		return -1;
	if (s < end && *s != ' ')
		return -1;
	if (m->end <= m->start || major > 0xfff || minor > 0xfffff)
		return -1;
	m->dev = makedev((unsigned)major, (unsigned)minor);
	skip_spaces(&s, end);
	*path = s;
	*plen = end - s;

	if (perms[2] != 'x')
		return 0;
	if (*plen == 6 && !memcmp(s, "[vdso]", 6)) {
		m->flags |= ARGUS_PROC_MAP_VDSO;
		return 1;
	}
	if (*plen == 0 || s[0] != '/' || *plen >= PATH_MAX)
		return 0;
	if (*plen > sizeof(DELETED_SUFFIX) - 1 &&
	    !memcmp(s + *plen - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		    sizeof(DELETED_SUFFIX) - 1)) {
		m->flags |= ARGUS_PROC_MAP_DELETED;
		*plen -= sizeof(DELETED_SUFFIX) - 1;
	}
	if (memchr(s, '\0', *plen))
		return -1;
	return 1;
}

static int cmp_start(const void *a, const void *b)
{
	const struct argus_proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void argus_proc_maps__free(struct argus_proc_map *maps, size_t n)
{
	if (!maps)
		return;
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

int argus_proc_maps__dup(const struct argus_proc_map *maps, size_t n,
			 struct argus_proc_map **out)
{
	struct argus_proc_map *c;

	*out = NULL;
	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memcpy(c, maps, n * sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		c[i].path = strdup(maps[i].path);
		if (!c[i].path) {
			argus_proc_maps__free(c, i);
			return -ENOMEM;
		}
	}
	*out = c;
	return 0;
}

static int parse(uint32_t pid, const char *text, size_t len,
		 struct argus_proc_map **out, size_t *n, bool *capped)
{
	struct argus_proc_map *maps = NULL, *tmp;
	size_t nr = 0, cap = 0, path_bytes = 0, dropped = 0;
	const char *p = text, *end = text + len;

	if (!out || !n || (!text && len))
		return -EINVAL;
	*out = NULL;
	*n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *le = nl ? nl : end, *path;
		struct argus_proc_map m;
		size_t plen;

		if (le - p > ARGUS_PROC_MAPS_LINE_MAX ||
		    parse_line(p, le, &m, &path, &plen) != 1)
			goto next;
		if (nr >= ARGUS_PROC_MAPS_MAX ||
		    path_bytes + plen + 1 > ARGUS_PROC_MAPS_PATH_BYTES) {
			dropped++;
			goto next;
		}
		path_bytes += plen + 1;
		if (nr == cap) {
			cap = cap ? cap * 2 : 32;
			tmp = realloc(maps, cap * sizeof(*maps));
			if (!tmp)
				goto nomem;
			maps = tmp;
		}
		m.path = strndup(path, plen);
		if (!m.path)
			goto nomem;
		maps[nr++] = m;
next:
		p = le + 1;
	}

	if (nr > 1)
		qsort(maps, nr, sizeof(*maps), cmp_start);
	for (size_t i = 0; i < nr; i++)
		fill_build_id(pid, &maps[i]);
	if (dropped)
		argus_guard__count(ARGUS_GUARD_MAPS_DROPPED, dropped);
	if (capped)
		*capped = *capped || dropped;
	*out = maps;
	*n = nr;
	return 0;

nomem:
	argus_proc_maps__free(maps, nr);
	return -ENOMEM;
}

int argus_proc_maps__parse(uint32_t pid, const char *text, size_t len,
			   struct argus_proc_map **out, size_t *n)
{
	return parse(pid, text, len, out, n, NULL);
}

int argus_proc_maps__read(uint32_t pid, struct argus_proc_map **out,
			  size_t *n)
{
	return argus_proc_maps__read_capped(pid, out, n, NULL);
}

int argus_proc_maps__read_capped(uint32_t pid, struct argus_proc_map **out,
				 size_t *n, bool *capped)
{
	bool cut = false;
	char path[64];
	char *buf = NULL, *tmp;
	size_t len = 0, cap = 0;
	int fd, err;

	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap >= ARGUS_PROC_MAPS_READ_MAX) {
				/* Keep the whole lines that fit; how many
				 * more there were is not known: one drop */
				while (len && buf[len - 1] != '\n')
					len--;
				argus_guard__count(ARGUS_GUARD_MAPS_DROPPED, 1);
				cut = true;
				break;
			}
			cap = cap ? cap * 2 : 16384;
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			buf = tmp;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += r;
	}
	err = parse(pid, buf, len, out, n, &cut);
	if (capped)
		*capped = cut;
out:
	free(buf);
	close(fd);
	return err;
}

const struct argus_proc_map *
argus_proc_maps__find(const struct argus_proc_map *maps, size_t n,
		      uint64_t ip)
{
	size_t lo = 0, hi = n;

	if (!maps)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < maps[mid].start)
			hi = mid;
		else if (ip >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

int argus_elf__offset_to_vaddr(struct Elf *elf, uint64_t off,
			       uint64_t *vaddr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t phnum, i;
	int best = -1;

	if (!elf || !vaddr || elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		int score;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    off < (ph.p_offset & ~(page - 1)) ||
		    off >= ph.p_offset + ph.p_filesz)
			continue;
		score = ((ph.p_flags & PF_X) ? 2 : 0) + (off >= ph.p_offset);
		if (score > best) {
			best = score;
			*vaddr = off - ph.p_offset + ph.p_vaddr;
		}
	}
	return best < 0 ? -ENOENT : 0;
}

struct argus_map_key *argus_map_keys__new(const struct argus_proc_map *maps, size_t n)
{
	struct argus_map_key *k = calloc(n ? n : 1, sizeof(*k));

	if (!k)
		return NULL;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct argus_map_key){ maps[i].start, maps[i].end, maps[i].pgoff,
					       maps[i].dev, maps[i].inode, maps[i].flags };
	return k;
}
