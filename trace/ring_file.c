/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ring_file.c - write finished chunks into a trace file.
 *
 * Two kinds of file share one layout (docs/trace-format.md):
 *
 *   ring      header.data_size > 0, ARGUS_FILE_RING.  The file is
 *             preallocated to header + data_size; chunks go at `off` and
 *             wrap to the first block when the next one would not fit
 *             before `end`, overwriting the oldest.
 *   snapshot  data_size == 0, ARGUS_FILE_SNAPSHOT.  Append-only.
 *
 * Every chunk starts on an ARGUS_BLOCK_SIZE boundary.  One append writes,
 * in this order:
 *   1. 64 zero bytes at the target offset: whatever chunk header was there
 *      is gone before any of its payload is touched;
 *   2. the payload, at offset + 64;
 *   3. the chunk header.
 * So a kill -9 at any instant leaves either the new chunk complete or no
 * header at all where it was going; older chunks whose bytes the payload
 * covered lose their headers on the way.  The reader handles the rest
 * (docs/trace-format.md, "Ring wrap and crashes").
 *
 * Disk full: creation shrinks the ring to what fallocate can reserve (or
 * falls back to a sparse file); a write that still hits ENOSPC moves the
 * ring's end down to the chunk's offset and wraps, so the ring shrinks to
 * what the disk holds instead of failing.  A snapshot that hits ENOSPC is
 * truncated back to its last complete chunk and the error returned.
 *
 * Invariants: start <= off <= end; off is block-aligned; chunks written in
 * this session lie in [start, end) (ring) or [start, EOF) (snapshot).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "safe_file.h"
#include "trace_internal.h"

struct argus_ring {
	int fd;
	bool ring;              /* false: append-only snapshot */
	uint64_t start;         /* first chunk offset (ARGUS_FILE_HEADER_SIZE) */
	uint64_t end;           /* ring: end of the usable area (shrinks on
	                           ENOSPC); snapshot: end of the last chunk */
	uint64_t off;           /* ring: where the next chunk goes */
	uint64_t high;          /* furthest chunk end written */
	uint64_t bytes_written; /* chunk bytes appended, all time */
	uint64_t wraps;
};

#define OPT(o, field, def) \
	((o) && (o)->sz >= offsetof(struct argus_ring_opts, field) + \
	 sizeof((o)->field) ? (o)->field : (def))

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Reserve the ring's blocks; may lower *data_size.  0 or -errno. */
static int reserve(int fd, uint64_t *data_size)
{
	uint64_t size = *data_size;
	int rc = posix_fallocate(fd, ARGUS_FILE_HEADER_SIZE, (off_t)size);

	if (rc == ENOSPC) {
		struct statfs sf;

		/* give back what the failed attempt took, then ask for what is
		 * free, less a margin for everyone else on the filesystem */
		if (ftruncate(fd, ARGUS_FILE_HEADER_SIZE))
			return -errno;
		if (!fstatfs(fd, &sf)) {
			uint64_t avail = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;

			avail -= avail / 16;
			avail = avail / ARGUS_BLOCK_SIZE * ARGUS_BLOCK_SIZE;
			if (avail < size && avail >= 2 * ARGUS_BLOCK_SIZE) {
				size = avail;
				rc = posix_fallocate(fd, ARGUS_FILE_HEADER_SIZE,
						     (off_t)size);
				if (!rc) {
					*data_size = size;
					return 0;
				}
				if (ftruncate(fd, ARGUS_FILE_HEADER_SIZE))
					return -errno;
			}
		}
		rc = EOPNOTSUPP; /* go sparse; appends handle ENOSPC */
	}
	if (rc == EOPNOTSUPP || rc == EINVAL) {
		if (ftruncate(fd, (off_t)(ARGUS_FILE_HEADER_SIZE + size)))
			return -errno;
		return 0;
	}
	return -rc;
}

struct argus_ring *argus_ring__create_from(const char *path,
					   const struct argus_ring_opts *opts,
					   const struct argus_file_header *tmpl,
					   struct argus_error *err)
{
	uint64_t data_size = OPT(opts, data_size, 0);
	int mode = OPT(opts, fd_mode, 0) ? OPT(opts, fd_mode, 0) : 0600;
	uint8_t block[ARGUS_FILE_HEADER_SIZE] = { 0 };
	struct argus_file_header h = { 0 };
	struct argus_ring *r = NULL;
	struct utsname u;
	int fd, rc;

	if (!path || (opts && opts->sz < sizeof(size_t))) {
		argus_error__set(err, path, -EINVAL, 0, "bad arguments");
		errno = EINVAL;
		return NULL;
	}
	data_size = data_size / ARGUS_BLOCK_SIZE * ARGUS_BLOCK_SIZE;
	if (OPT(opts, data_size, 0) && !data_size) {
		argus_error__set(err, path, -EINVAL, 0,
				 "ring size %llu is below one %u-byte block",
				 (unsigned long long)OPT(opts, data_size, 0),
				 ARGUS_BLOCK_SIZE);
		errno = EINVAL;
		return NULL;
	}

	/* Created O_EXCL|O_NOFOLLOW, 0600, or an existing file of ours
	 * truncated; never a file or link someone else put there
	 * (safe_file.h): traces hold every process's command lines. */
	fd = argus_out__open(path, OPT(opts, out_flags, 0), err);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (mode != 0600 && fchmod(fd, (mode_t)(mode & 0600))) {
		rc = -errno;
		argus_error__set(err, path, rc, 0, "cannot chmod: %s", strerror(-rc));
		goto fail;
	}
	if (data_size) {
		rc = reserve(fd, &data_size);
		if (rc) {
			argus_error__set(err, path, rc, ARGUS_FILE_HEADER_SIZE,
					 "cannot reserve %llu bytes for the ring: %s",
					 (unsigned long long)data_size,
					 strerror(-rc));
			goto fail;
		}
	}

	memcpy(h.magic, ARGUS_FILE_MAGIC, sizeof(h.magic));
	h.version = ARGUS_FORMAT_VERSION;
	h.header_size = ARGUS_FILE_HEADER_SIZE;
	h.data_size = data_size;
	h.block_size = ARGUS_BLOCK_SIZE;
	h.flags = data_size ? ARGUS_FILE_RING : ARGUS_FILE_SNAPSHOT;
	h.flags |= OPT(opts, flags, 0) & ~(ARGUS_FILE_RING | ARGUS_FILE_SNAPSHOT);
	if (tmpl) {
		/* a saved copy says what its source's collector recorded */
		h.flags |= tmpl->flags & ~(ARGUS_FILE_RING | ARGUS_FILE_SNAPSHOT);
		h.created_mono_ns = tmpl->created_mono_ns;
		h.created_real_ns = tmpl->created_real_ns;
		h.ncpus = tmpl->ncpus;
		memcpy(h.hostname, tmpl->hostname, sizeof(h.hostname));
		memcpy(h.kernel, tmpl->kernel, sizeof(h.kernel));
		h.hostname[sizeof(h.hostname) - 1] = 0;
		h.kernel[sizeof(h.kernel) - 1] = 0;
	} else {
		h.created_mono_ns = now_ns(CLOCK_MONOTONIC);
		h.created_real_ns = now_ns(CLOCK_REALTIME);
		h.ncpus = OPT(opts, ncpus, 0);
		if (!uname(&u)) {
			/* NUL-terminated, truncated to fit */
			memcpy(h.hostname, u.nodename, strnlen(u.nodename,
							sizeof(h.hostname) - 1));
			memcpy(h.kernel, u.release, strnlen(u.release,
							sizeof(h.kernel) - 1));
		}
	}
	argus_file_header_seal(&h);
	memcpy(block, &h, sizeof(h));
	rc = pwrite_all(fd, block, sizeof(block), 0);
	if (rc) {
		argus_error__set(err, path, rc, 0, "cannot write the header: %s",
				 strerror(-rc));
		goto fail;
	}

	r = calloc(1, sizeof(*r));
	if (!r) {
		rc = -ENOMEM;
		argus_error__set(err, path, rc, 0, "out of memory");
		goto fail;
	}
	r->fd = fd;
	r->ring = data_size != 0;
	r->start = r->off = r->high = ARGUS_FILE_HEADER_SIZE;
	r->end = ARGUS_FILE_HEADER_SIZE + data_size;
	return r;

fail:
	unlink(path);
	close(fd);
	errno = -rc;
	return NULL;
}

struct argus_ring *argus_ring__create(const char *path,
				      const struct argus_ring_opts *opts,
				      struct argus_error *err)
{
	return argus_ring__create_from(path, opts, NULL, err);
}

/* Steps 1-3 of the header comment. */
static int write_chunk(struct argus_ring *r, uint64_t off, const uint8_t *chunk,
		       size_t len)
{
	static const uint8_t zero[ARGUS_CHUNK_HEADER_SIZE];
	int rc;

	rc = pwrite_all(r->fd, zero, sizeof(zero), off);
	if (!rc)
		rc = pwrite_all(r->fd, chunk + ARGUS_CHUNK_HEADER_SIZE,
				len - ARGUS_CHUNK_HEADER_SIZE,
				off + ARGUS_CHUNK_HEADER_SIZE);
	if (!rc)
		rc = pwrite_all(r->fd, chunk, ARGUS_CHUNK_HEADER_SIZE, off);
	return rc;
}

int argus_ring__append(struct argus_ring *r, const void *chunk, size_t len)
{
	struct argus_chunk_header h;
	uint64_t off;
	int rc;

	if (!r || !chunk || len < ARGUS_CHUNK_HEADER_SIZE)
		return -EINVAL;
	memcpy(&h, chunk, sizeof(h));
	if (h.magic != ARGUS_CHUNK_MAGIC ||
	    (uint64_t)h.payload_len + ARGUS_CHUNK_HEADER_SIZE != len)
		return -EINVAL;

	if (!r->ring) {
		off = argus_align_up(r->end, ARGUS_BLOCK_SIZE);
		rc = write_chunk(r, off, chunk, len);
		if (rc) {
			/* keep the file a valid snapshot of what came before; if
			 * even that fails the reader reports a truncated chunk */
			int trc = ftruncate(r->fd, (off_t)r->end);

			(void)trc;
			return rc;
		}
		r->end = r->high = off + len;
		r->bytes_written += len;
		return 0;
	}

	for (;;) {
		if (len > r->end - r->start)
			return r->end < r->high ? -ENOSPC : -E2BIG;
		if (r->off + len > r->end) {
			r->off = r->start;
			r->wraps++;
		}
		rc = write_chunk(r, r->off, chunk, len);
		if (rc != -ENOSPC || r->off == r->start)
			break;
		/* the disk is full here: this is where the ring ends now */
		r->end = r->off;
	}
	if (rc)
		return rc;
	if (r->off + len > r->high)
		r->high = r->off + len;
	r->off = argus_align_up(r->off + len, ARGUS_BLOCK_SIZE);
	r->bytes_written += len;
	return 0;
}

int argus_ring__sync(struct argus_ring *r)
{
	if (!r)
		return -EINVAL;
	return fsync(r->fd) ? -errno : 0;
}

uint64_t argus_ring__bytes_written(const struct argus_ring *r)
{
	return r ? r->bytes_written : 0;
}

uint64_t argus_ring__wraps(const struct argus_ring *r)
{
	return r ? r->wraps : 0;
}

uint64_t argus_ring__fill(const struct argus_ring *r)
{
	if (!r)
		return 0;
	if (r->ring && r->high > r->end)
		return r->end - r->start;
	return r->high - r->start;
}

uint64_t argus_ring__capacity(const struct argus_ring *r)
{
	if (!r)
		return 0;
	return (r->ring ? r->end : r->high) - r->start;
}

void argus_ring__close(struct argus_ring *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r);
}
