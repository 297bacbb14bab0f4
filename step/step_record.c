/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_record.c - step recordings in memory, and their file format
 * (step_format.h, docs/step-format.md).
 *
 * In memory: an array of struct argus_step_insn, a string table (symbol
 * names, interned), the start registers, and a register checkpoint every
 * STEP_RC_EVERY instructions so that regs_at() replays at most that many
 * records.
 *
 * The reader treats the file as untrusted: every length is checked against
 * what is left, every index against its table, both checksums are checked
 * (before anything is parsed), and the first problem ends the load with
 * one line naming the file offset.  Text, kind and branch target are not
 * stored; they are decoded again from the bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "step_format.h"
#include "step_internal.h"

struct argus_step_rec {
	uint32_t pid, tid;
	struct argus_step_regs start;
	struct argus_step_insn *insn;
	size_t n, cap;
	char **str;              /* owned */
	uint32_t nstr, strcap;
	struct argus_step_regs *ckpt; /* ckpt[k]: regs before insn k*EVERY */
	size_t nckpt, ckptcap;
	struct argus_step_regs cur;   /* registers after the last insn */
};

struct argus_step_rec *argus_step_rec__new(uint32_t pid, uint32_t tid,
					   const struct argus_step_regs *start)
{
	struct argus_step_rec *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->pid = pid;
	r->tid = tid;
	if (start)
		r->start = *start;
	r->cur = r->start;
	return r;
}

void argus_step_rec__free(struct argus_step_rec *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nstr; i++)
		free(r->str[i]);
	free(r->str);
	free(r->insn);
	free(r->ckpt);
	free(r);
}

uint32_t argus_step_rec__pid(const struct argus_step_rec *r) { return r->pid; }
uint32_t argus_step_rec__tid(const struct argus_step_rec *r) { return r->tid; }
size_t argus_step_rec__count(const struct argus_step_rec *r) { return r->n; }

const struct argus_step_insn *argus_step_rec__insn(const struct argus_step_rec *r, size_t i)
{
	return r && i < r->n ? &r->insn[i] : NULL;
}

const char *argus_step_rec__string(const struct argus_step_rec *r, int32_t idx)
{
	return r && idx >= 0 && (uint32_t)idx < r->nstr ? r->str[idx] : NULL;
}

int32_t argus_step_rec__intern(struct argus_step_rec *r, const char *s)
{
	char **ns;

	if (!r || !s || strlen(s) > STEP_STRING_MAX)
		return -EINVAL;
	/* Symbols per recording are few (the loop's functions), and the
	 * engine caches the index per address: a linear search will do. */
	for (uint32_t i = r->nstr; i-- > 0;)
		if (!strcmp(r->str[i], s))
			return (int32_t)i;
	if (r->nstr == r->strcap) {
		uint32_t cap = r->strcap ? r->strcap * 2 : 16;

		ns = realloc(r->str, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		r->str = ns;
		r->strcap = cap;
	}
	if (!(r->str[r->nstr] = strdup(s)))
		return -ENOMEM;
	return (int32_t)r->nstr++;
}

static void apply(struct argus_step_regs *regs, const struct argus_step_insn *in, uint64_t next_rip)
{
	for (unsigned k = 0; k < in->nregs; k++)
		regs->r[in->reg[k]] = in->val[k];
	regs->r[ARGUS_REG_RIP] = next_rip;
}

int argus_step_rec__append(struct argus_step_rec *r, const struct argus_step_insn *in)
{
	if (!r || !in || in->nregs > ARGUS_STEP_MAX_CHANGED || in->nmem > ARGUS_STEP_MAX_MEM)
		return -EINVAL;
	for (unsigned k = 0; k < in->nregs; k++)
		if (in->reg[k] >= ARGUS_STEP_NREGS || in->reg[k] == ARGUS_REG_RIP)
			return -EINVAL;
	if (in->sym < -1 || (in->sym >= 0 && (uint32_t)in->sym >= r->nstr))
		return -EINVAL;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct argus_step_insn *ni = realloc(r->insn, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		r->insn = ni;
		r->cap = cap;
	}
	if (r->n % STEP_RC_EVERY == 0) {
		if (r->nckpt == r->ckptcap) {
			size_t cap = r->ckptcap ? r->ckptcap * 2 : 16;
			struct argus_step_regs *nc = realloc(r->ckpt, cap * sizeof(*nc));

			if (!nc)
				return -ENOMEM;
			r->ckpt = nc;
			r->ckptcap = cap;
		}
		r->cur.r[ARGUS_REG_RIP] = in->addr;
		r->ckpt[r->nckpt++] = r->cur;
	}
	r->insn[r->n++] = *in;
	/* the next rip is only known from the next record; until then the
	 * fall-through address stands in */
	apply(&r->cur, in, in->addr + in->len);
	return 0;
}

int argus_step_rec__regs_at(const struct argus_step_rec *r, size_t i,
			    struct argus_step_regs *out)
{
	size_t k, j;

	if (!r || !out || i > r->n)
		return -EINVAL;
	if (r->n == 0) {
		*out = r->start;
		return 0;
	}
	k = (i < r->n ? i : r->n - 1) / STEP_RC_EVERY;
	*out = r->ckpt[k];
	for (j = k * STEP_RC_EVERY; j < i; j++)
		apply(out, &r->insn[j], j + 1 < r->n ? r->insn[j + 1].addr :
					     r->insn[j].addr + r->insn[j].len);
	return 0;
}

/* --- writing ---------------------------------------------------------- */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	int err;
};

static void put(struct wbuf *w, const void *src, size_t len)
{
	if (w->err)
		return;
	if (w->n + len > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *np;

		while (cap < w->n + len)
			cap *= 2;
		np = realloc(w->p, cap);
		if (!np) {
			w->err = -ENOMEM;
			return;
		}
		w->p = np;
		w->cap = cap;
	}
	memcpy(w->p + w->n, src, len);
	w->n += len;
}

/* x86-64 is little-endian, the format too: plain copies. */
#define PUT(w, v) do { __typeof__(v) _v = (v); put((w), &_v, sizeof(_v)); } while (0)

static void set_err(struct argus_step_err *err, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void set_err(struct argus_step_err *err, int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	err->offset = off;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

int argus_step_rec__save(const struct argus_step_rec *r, const char *path,
			 struct argus_step_err *err)
{
	struct wbuf w = {0};
	uint8_t hdr[STEP_HEADER_SIZE] = {0};
	uint64_t u64;
	uint32_t u32;
	char tmp[4096];
	int fd, rc = 0;

	if (!r || !path)
		return -EINVAL;
	for (int i = 0; i < ARGUS_STEP_NREGS; i++)
		PUT(&w, r->start.r[i]);
	for (uint32_t i = 0; i < r->nstr; i++) {
		PUT(&w, (uint16_t)strlen(r->str[i]));
		put(&w, r->str[i], strlen(r->str[i]));
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct argus_step_insn *in = &r->insn[i];

		PUT(&w, in->addr);
		PUT(&w, in->flags);
		PUT(&w, in->len);
		PUT(&w, in->nregs);
		PUT(&w, in->nmem);
		PUT(&w, in->sig);
		PUT(&w, in->sym);
		PUT(&w, in->sym_off);
		put(&w, in->bytes, in->len);
		for (unsigned k = 0; k < in->nregs; k++) {
			PUT(&w, in->reg[k]);
			PUT(&w, in->val[k]);
		}
		for (unsigned k = 0; k < in->nmem; k++) {
			const struct argus_step_mem *m = &in->mem[k];

			PUT(&w, m->addr);
			PUT(&w, m->before);
			PUT(&w, m->after);
			PUT(&w, m->size);
			PUT(&w, m->access);
			PUT(&w, m->valid);
		}
	}
	if (w.err) {
		set_err(err, w.err, 0, "%s: out of memory", path);
		free(w.p);
		return w.err;
	}
	memcpy(hdr, STEP_MAGIC, 8);
	u32 = STEP_VERSION; memcpy(hdr + 8, &u32, 4);
	u32 = STEP_HEADER_SIZE; memcpy(hdr + 12, &u32, 4);
	memcpy(hdr + 16, &r->pid, 4);
	memcpy(hdr + 20, &r->tid, 4);
	u64 = r->n; memcpy(hdr + 24, &u64, 8);
	memcpy(hdr + 32, &r->nstr, 4);
	u64 = w.n; memcpy(hdr + 40, &u64, 8);
	u32 = (uint32_t)crc32(0, w.p, (uInt)w.n); memcpy(hdr + 48, &u32, 4);
	u32 = (uint32_t)crc32(0, hdr, 60); memcpy(hdr + 60, &u32, 4);

	/* Whole or nothing: a temp file beside path, renamed over it. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = -errno;
		set_err(err, rc, 0, "%s: cannot create: %s", path, strerror(errno));
		free(w.p);
		return rc;
	}
	for (int part = 0; part < 2 && !rc; part++) {
		const uint8_t *p = part ? w.p : hdr;
		size_t left = part ? w.n : sizeof(hdr);

		while (left) {
			ssize_t k = write(fd, p, left);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				rc = k < 0 ? -errno : -EIO;
				break;
			}
			p += k;
			left -= (size_t)k;
		}
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		set_err(err, rc, 0, "%s: cannot write: %s", path, strerror(-rc));
		unlink(tmp);
	}
	free(w.p);
	return rc;
}

/* --- reading ---------------------------------------------------------- */

struct rbuf {
	const uint8_t *p;
	size_t n, off;
};

static bool get(struct rbuf *b, void *dst, size_t len)
{
	if (b->n - b->off < len)
		return false;
	memcpy(dst, b->p + b->off, len);
	b->off += len;
	return true;
}

#define GET(b, v) get((b), &(v), sizeof(v))

static struct argus_step_rec *fail(struct argus_step_rec *r, struct argus_step_err *err,
				   int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static struct argus_step_rec *fail(struct argus_step_rec *r, struct argus_step_err *err,
				   int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		err->offset = off;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	argus_step_rec__free(r);
	errno = -code;
	return NULL;
}

struct argus_step_rec *argus_step_rec__parse(const void *buf, size_t len,
					     struct argus_step_err *err)
{
	const uint8_t *h = buf;
	uint32_t version, hsize, pid, tid, nstr, flags, bcrc, hcrc;
	uint64_t ninsn, blen;
	struct argus_step_regs start;
	struct argus_step_rec *r;
	struct rbuf b;

	if (!buf || len < STEP_HEADER_SIZE)
		return fail(NULL, err, -EINVAL, len,
			    "truncated: %zu bytes, a step recording has a %u-byte header", len,
			    STEP_HEADER_SIZE);
	if (memcmp(h, STEP_MAGIC, 8))
		return fail(NULL, err, -EINVAL, 0, "not a step recording (no ARGUSSTP magic at offset 0)");
	memcpy(&version, h + 8, 4);
	memcpy(&hsize, h + 12, 4);
	if (version != STEP_VERSION)
		return fail(NULL, err, -ENOTSUP, 8,
			    "step recording version %u at offset 8, this argus reads version %u",
			    version, STEP_VERSION);
	memcpy(&hcrc, h + 60, 4);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (hcrc != (uint32_t)crc32(0, h, 60))
		return fail(NULL, err, -EBADMSG, 60, "header checksum mismatch at offset 60 (corrupt header)");
#endif
	if (hsize != STEP_HEADER_SIZE)
		return fail(NULL, err, -EINVAL, 12, "header size %u at offset 12, expected %u", hsize,
			    STEP_HEADER_SIZE);
	memcpy(&pid, h + 16, 4);
	memcpy(&tid, h + 20, 4);
	memcpy(&ninsn, h + 24, 8);
	memcpy(&nstr, h + 32, 4);
	memcpy(&flags, h + 36, 4);
	memcpy(&blen, h + 40, 8);
	memcpy(&bcrc, h + 48, 4);
	if (flags)
		return fail(NULL, err, -EINVAL, 36, "unknown header flags 0x%x at offset 36", flags);
	if (blen != len - STEP_HEADER_SIZE)
		return fail(NULL, err, -EINVAL, len,
			    "%s: the header says %llu body bytes, the file has %zu",
			    blen > len - STEP_HEADER_SIZE ? "truncated" : "trailing bytes",
			    (unsigned long long)blen, len - STEP_HEADER_SIZE);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (bcrc != (uint32_t)crc32(0, h + STEP_HEADER_SIZE, (uInt)blen))
		return fail(NULL, err, -EBADMSG, STEP_HEADER_SIZE,
			    "body checksum mismatch (bytes %u..%zu are corrupt)", STEP_HEADER_SIZE, len);
#else
	(void)bcrc;
#endif
	/* the smallest instruction record is STEP_INSN_FIXED bytes */
	if (ninsn > blen / STEP_INSN_FIXED)
		return fail(NULL, err, -EINVAL, 24, "%llu instructions at offset 24 cannot fit in %llu bytes",
			    (unsigned long long)ninsn, (unsigned long long)blen);
	if (nstr > blen / 2)
		return fail(NULL, err, -EINVAL, 32, "%u strings at offset 32 cannot fit in %llu bytes",
			    nstr, (unsigned long long)blen);

	b.p = h;
	b.n = len;
	b.off = STEP_HEADER_SIZE;
	for (int i = 0; i < ARGUS_STEP_NREGS; i++)
		if (!GET(&b, start.r[i]))
			return fail(NULL, err, -EINVAL, b.off, "truncated start registers at offset %zu", b.off);
	r = argus_step_rec__new(pid, tid, &start);
	if (!r)
		return fail(NULL, err, -ENOMEM, 0, "out of memory");
	for (uint32_t i = 0; i < nstr; i++) {
		char s[STEP_STRING_MAX + 1];
		size_t at = b.off;
		uint16_t sl;

		if (!GET(&b, sl) || sl > STEP_STRING_MAX || !get(&b, s, sl))
			return fail(r, err, -EINVAL, at, "string %u at offset %zu: bad length or truncated", i, at);
		s[sl] = 0;
		if (strlen(s) != sl)
			return fail(r, err, -EINVAL, at, "string %u at offset %zu contains a NUL byte", i, at);
		/* intern() would merge duplicates and shift the indexes */
		if (r->nstr == r->strcap) {
			uint32_t cap = r->strcap ? r->strcap * 2 : 16;
			char **ns = realloc(r->str, cap * sizeof(*ns));

			if (!ns)
				return fail(r, err, -ENOMEM, at, "out of memory");
			r->str = ns;
			r->strcap = cap;
		}
		if (!(r->str[r->nstr] = strdup(s)))
			return fail(r, err, -ENOMEM, at, "out of memory");
		r->nstr++;
	}
	for (uint64_t i = 0; i < ninsn; i++) {
		struct argus_step_insn in;
		size_t at = b.off;
		int rc;

		memset(&in, 0, sizeof(in));
		if (!GET(&b, in.addr) || !GET(&b, in.flags) || !GET(&b, in.len) ||
		    !GET(&b, in.nregs) || !GET(&b, in.nmem) || !GET(&b, in.sig) ||
		    !GET(&b, in.sym) || !GET(&b, in.sym_off))
			return fail(r, err, -EINVAL, at, "instruction %llu at offset %zu: truncated",
				    (unsigned long long)i, at);
		if (in.flags & ~STEP_FLAGS_KNOWN)
			return fail(r, err, -EINVAL, at + 8, "instruction %llu at offset %zu: unknown flags 0x%x",
				    (unsigned long long)i, at + 8, in.flags);
		if (in.len > 15 || (in.len == 0) != !!(in.flags & ARGUS_STEP_F_NOBYTES))
			return fail(r, err, -EINVAL, at + 10, "instruction %llu at offset %zu: bad length %u",
				    (unsigned long long)i, at + 10, in.len);
		if (in.nregs > ARGUS_STEP_MAX_CHANGED || in.nmem > ARGUS_STEP_MAX_MEM)
			return fail(r, err, -EINVAL, at + 11,
				    "instruction %llu at offset %zu: %u registers / %u memory operands (max %d / %d)",
				    (unsigned long long)i, at + 11, in.nregs, in.nmem,
				    ARGUS_STEP_MAX_CHANGED, ARGUS_STEP_MAX_MEM);
		if (in.sym < -1 || (in.sym >= 0 && (uint32_t)in.sym >= r->nstr))
			return fail(r, err, -EINVAL, at + 14,
				    "instruction %llu at offset %zu: symbol %d, the file has %u strings",
				    (unsigned long long)i, at + 14, in.sym, r->nstr);
		if (!get(&b, in.bytes, in.len))
			return fail(r, err, -EINVAL, b.off, "instruction %llu at offset %zu: truncated bytes",
				    (unsigned long long)i, b.off);
		for (unsigned k = 0; k < in.nregs; k++) {
			size_t ra = b.off;

			if (!GET(&b, in.reg[k]) || !GET(&b, in.val[k]))
				return fail(r, err, -EINVAL, ra, "instruction %llu at offset %zu: truncated registers",
					    (unsigned long long)i, ra);
			if (in.reg[k] >= ARGUS_STEP_NREGS || in.reg[k] == ARGUS_REG_RIP)
				return fail(r, err, -EINVAL, ra, "instruction %llu at offset %zu: bad register %u",
					    (unsigned long long)i, ra, in.reg[k]);
		}
		for (unsigned k = 0; k < in.nmem; k++) {
			struct argus_step_mem *m = &in.mem[k];
			size_t ma = b.off;

			if (!GET(&b, m->addr) || !GET(&b, m->before) || !GET(&b, m->after) ||
			    !GET(&b, m->size) || !GET(&b, m->access) || !GET(&b, m->valid))
				return fail(r, err, -EINVAL, ma, "instruction %llu at offset %zu: truncated memory operand",
					    (unsigned long long)i, ma);
			if (!m->access || (m->access & ~3u) || (m->valid & ~3u) || !m->size || m->size > 64)
				return fail(r, err, -EINVAL, ma, "instruction %llu at offset %zu: bad memory operand",
					    (unsigned long long)i, ma);
		}
		if (in.len) {
			rc = argus_step_decode(in.bytes, in.len, in.addr, &in);
			if (rc == -EINVAL)
				snprintf(in.text, sizeof(in.text), "(bad)");
			else if (in.flags & ARGUS_STEP_F_OVER)
				in.kind = step_over_kind(in.kind);
		} else {
			snprintf(in.text, sizeof(in.text), "(unreadable)");
		}
		if (argus_step_rec__append(r, &in))
			return fail(r, err, -ENOMEM, at, "out of memory");
	}
	if (b.off != len)
		return fail(r, err, -EINVAL, b.off, "%zu bytes after the last instruction at offset %zu",
			    len - b.off, b.off);
	return r;
}

static struct argus_step_rec *load(const char *path, struct argus_step_err *err)
{
	struct argus_step_rec *r;
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		return fail(NULL, err, -e, 0, "%s", strerror(e));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(NULL, err, -EINVAL, 0, "not a regular file");
	}
	if (st.st_size > (off_t)1 << 32) {
		close(fd);
		return fail(NULL, err, -EFBIG, 0, "%lld bytes, larger than any recording (4 GiB)",
			    (long long)st.st_size);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return fail(NULL, err, -ENOMEM, 0, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	r = argus_step_rec__parse(buf, got, err);
	free(buf);
	return r;
}

struct argus_step_rec *argus_step_rec__load(const char *path, struct argus_step_err *err)
{
	struct argus_step_rec *r;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	r = load(path, err);
	if (!r && err) {
		/* name the file in the one line */
		char m[sizeof(err->msg)];
		int k = snprintf(m, sizeof(m), "%s: ", path);

		if (k > 0 && (size_t)k < sizeof(m))
			snprintf(m + k, sizeof(m) - (size_t)k, "%.*s", (int)(sizeof(m) - (size_t)k - 1),
				 err->msg);
		memcpy(err->msg, m, sizeof(m));
	}
	return r;
}
