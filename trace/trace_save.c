/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_save.c - copy the recent chunks of a trace (usually the collector's
 * live ring) into a new snapshot file.
 *
 * Chunks are copied byte for byte, not re-encoded: only their seq is
 * renumbered 1, 2, 3... (and the header crc resealed), so the snapshot
 * follows the numbering rule of docs/trace-format.md.  The snapshot's file
 * header keeps the source's clock pair, hostname, kernel and ncpus.
 *
 * The source may be written while we copy (the ring moves on): each chunk
 * is copied to a private buffer and its header and payload crc checked on
 * that copy; a chunk that changed since open is skipped, never half-saved.
 * A chunk is also decoded in full first (argus_trace__chunk_check): one
 * with a good crc that does not decode is skipped and counted as corrupt.
 *
 * The destination is created as safe_file.h says (O_EXCL|O_NOFOLLOW,
 * 0600; what argus did not create is replaced only with ARGUS_OUT_FORCE).
 *
 * Invariant: on any error after the destination was created, it does not
 * exist afterwards; what was there before and was refused is untouched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_internal.h"

int argus_trace__save(const char *src_path, const char *dst_path,
		      uint64_t from_ts, struct argus_trace_stats *src_stats,
		      struct argus_error *err)
{
	return argus_trace__save_to(src_path, dst_path, 0, from_ts, src_stats, err);
}

int argus_trace__save_to(const char *src_path, const char *dst_path,
			 unsigned out_flags, uint64_t from_ts,
			 struct argus_trace_stats *src_stats,
			 struct argus_error *err)
{
	struct argus_ring_opts opts = { .sz = sizeof(opts), .fd_mode = 0600,
					.out_flags = out_flags };
	struct argus_trace *t;
	struct argus_ring *r = NULL;
	struct stat a, b;
	uint8_t *copy = NULL;
	uint64_t seq = 0;
	int rc = 0;

	if (!src_path || !dst_path)
		return argus_error__set(err, NULL, -EINVAL, 0, "bad arguments");
	t = argus_trace__open(src_path, err);
	if (!t)
		return -errno;
	if (!stat(src_path, &a) && !stat(dst_path, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		rc = argus_error__set(err, dst_path, -EINVAL, 0,
				      "is the trace being saved (%s)", src_path);
		argus_trace__close(t);
		return rc;
	}
	opts.ncpus = argus_trace__header(t)->ncpus;
	r = argus_ring__create_from(dst_path, &opts, argus_trace__header(t), err);
	if (!r) {
		rc = -errno;
		argus_trace__close(t);
		return rc;
	}

	for (size_t i = 0; i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;
		struct argus_chunk_header h, orig;
		uint8_t *p;

		if (argus_trace__chunk(t, i, &ci) || ci.max_ts < from_ts)
			continue;
		memcpy(&orig, ci.data, sizeof(orig));
		p = realloc(copy, ci.size);
		if (!p) {
			rc = argus_error__set(err, dst_path, -ENOMEM, 0, "out of memory");
			goto fail;
		}
		copy = p;
		memcpy(copy, ci.data, ci.size);
		memcpy(&h, copy, sizeof(h));
		/* the source moved on since open: skip, never save half */
		if (!argus_chunk_header_ok(&h) || h.seq != ci.seq ||
		    ARGUS_CHUNK_HEADER_SIZE + (uint64_t)h.payload_len != ci.size ||
		    !argus_crc_ok(h.payload_crc, copy + ARGUS_CHUNK_HEADER_SIZE,
				  h.payload_len))
			continue;
		/* A good crc only says the bytes are the ones written: a
		 * chunk that does not decode (a writer's bug, a crafted
		 * file) stays out, or the whole snapshot would be refused. */
		if (argus_trace__chunk_check(t, i))
			continue;
		h.seq = ++seq;
		argus_chunk_header_seal(&h);
		memcpy(copy, &h, sizeof(h));
		rc = argus_ring__append(r, copy, ci.size);
		if (rc) {
			argus_error__set(err, dst_path, rc, ci.offset,
					 "cannot write chunk seq %" PRIu64 " (from offset 0x%" PRIx64
					 " of %s): %s",
					 ci.seq, ci.offset, src_path, strerror(-rc));
			goto fail;
		}
	}
	rc = argus_ring__sync(r);
	if (rc) {
		argus_error__set(err, dst_path, rc, 0, "cannot sync: %s",
				 strerror(-rc));
		goto fail;
	}
	if (src_stats)
		*src_stats = *argus_trace__stats(t);
	argus_ring__close(r);
	argus_trace__close(t);
	free(copy);
	return 0;

fail:
	argus_ring__close(r);
	unlink(dst_path);
	argus_trace__close(t);
	free(copy);
	return rc;
}
