/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_scan.c - what open learns from the mapped bytes, before any event
 * is decoded:
 *   1. the file header: magic, version, crc, sizes;
 *   2. every block boundary of the data area holding a chunk header (magic
 *      + header crc): the candidates, skipping the holes of a sparse ring;
 *   3. the state of each candidate (reader_classify.c);
 *   4. for each GOOD chunk, its payload crc (checked by the
 *      classification) and its CPUS section, inflated just that far: the
 *      per-CPU totals of argus_trace_stats are known at open.
 * The GOOD chunks end up in t->chunks, in seq order.
 */
#include <inttypes.h>
#include <unistd.h>

#include "reader_internal.h"

/* ---------------------------------------------------------------------
 * The file header.
 */
int reader_check_header(struct argus_trace *t, struct argus_error *err)
{
	struct argus_file_header *h = &t->fh;
	const char *path = t->path;
	uint64_t area;

	if (t->len == 0)
		return argus_error__set(err, path, -EBADMSG, 0,
					"empty file (0 bytes), not an Argus trace");
	if (t->len < sizeof(h->magic) ||
	    memcmp(t->base, ARGUS_FILE_MAGIC, sizeof(h->magic)))
		return argus_error__set(err, path, -EBADMSG, 0,
					"not an Argus trace (bad magic at offset 0)");
	if (t->len < offsetof(struct argus_file_header, header_size))
		return argus_error__set(err, path, -EBADMSG, 8,
					"truncated header: file is %zu bytes, the header needs %u",
					t->len, ARGUS_FILE_HEADER_SIZE);
	memcpy(&h->version, t->base + 8, sizeof(h->version));
	if (h->version < ARGUS_FORMAT_VERSION_MIN || h->version > ARGUS_FORMAT_VERSION)
		return argus_error__set(err, path, -EPROTONOSUPPORT, 8,
					"trace format version %u at offset 8, this build reads versions %u to %u",
					h->version, ARGUS_FORMAT_VERSION_MIN, ARGUS_FORMAT_VERSION);
	if (t->len < ARGUS_FILE_HEADER_SIZE)
		return argus_error__set(err, path, -EBADMSG, t->len,
					"truncated header: file is %zu bytes, the header needs %u",
					t->len, ARGUS_FILE_HEADER_SIZE);
	memcpy(h, t->base, sizeof(*h));
	h->hostname[sizeof(h->hostname) - 1] = 0;
	h->kernel[sizeof(h->kernel) - 1] = 0;
	if (!argus_crc_ok(h->header_crc, t->base,
			  offsetof(struct argus_file_header, header_crc)))
		return argus_error__set(err, path, -EBADMSG, 52,
					"file header checksum mismatch at offset 52");
	if (h->header_size != ARGUS_FILE_HEADER_SIZE)
		return argus_error__set(err, path, -EBADMSG, 12,
					"header size %u at offset 12, expected %u",
					h->header_size, ARGUS_FILE_HEADER_SIZE);
	if (h->block_size != ARGUS_BLOCK_SIZE)
		return argus_error__set(err, path, -EBADMSG, 24,
					"block size %u at offset 24, expected %u",
					h->block_size, ARGUS_BLOCK_SIZE);
	t->ring = h->flags & ARGUS_FILE_RING;
	area = h->data_size;
	if (t->ring && (!area || area % ARGUS_BLOCK_SIZE ||
			area > UINT64_MAX - ARGUS_FILE_HEADER_SIZE))
		return argus_error__set(err, path, -EBADMSG, 16,
					"ring data size %" PRIu64 " at offset 16 is not a positive multiple of %u",
					area, ARGUS_BLOCK_SIZE);
	return 0;
}

/* ---------------------------------------------------------------------
 * The chunks.
 */

/* Inflate the chunk's first sections up to CPUS; 0 and t->probe filled
 * (cpu < 256), or -EBADMSG with the reason in t->why. */
static int probe_cpus(struct argus_trace *t, const struct chunk *c,
		      uint32_t *maxcpu, bool *found)
{
	const uint8_t *payload = t->base + c->off + ARGUS_CHUNK_HEADER_SIZE;
	struct zsrc *s;
	uint64_t tag, len, n, v[5], prev = 0;
	int rc = -EBADMSG;

	*found = false;
	s = reader_zsrc_new(payload, c->h.payload_len, c->h.flags,
			    c->h.raw_len, &t->in);
	if (!s)
		return -ENOMEM;
	memset(t->probe, 0, sizeof(t->probe));
	while (!reader_zsrc_eof(s)) {
		if (reader_zsrc_varint(s, &tag) || reader_zsrc_varint(s, &len) ||
		    len > c->h.raw_len) {
			reader_why(t, "bad section header");
			goto out;
		}
		if (tag != ARGUS_SEC_CPUS) {
			if (reader_zsrc_skip(s, len)) {
				reader_why(t, "section %" PRIu64 " runs past the payload", tag);
				goto out;
			}
			continue;
		}
		uint64_t start = reader_zsrc_consumed(s);

		if (reader_zsrc_varint(s, &n) || n > len / 5) {
			reader_why(t, "bad CPUS section");
			goto out;
		}
		for (uint64_t i = 0; i < n; i++) {
			for (int k = 0; k < 5; k++)
				if (reader_zsrc_varint(s, &v[k])) {
					reader_why(t, "CPUS section runs past the payload");
					goto out;
				}
			if (v[0] > UINT16_MAX || (i && v[0] <= prev) ||
			    (v[4] && v[1] > v[2]) || v[4] > c->h.nevents) {
				reader_why(t, "bad CPUS entry %" PRIu64, i);
				goto out;
			}
			prev = v[0];
			if (v[0] + 1 > *maxcpu)
				*maxcpu = (uint32_t)v[0] + 1;
			if (v[0] < 256) {
				struct argus_cpu_stats *p = &t->probe[v[0]];

				p->min_ts = v[1];
				p->max_ts = v[2];
				p->lost = v[3];
				p->events = v[4];
			}
		}
		if (reader_zsrc_consumed(s) - start != len) {
			reader_why(t, "CPUS section length mismatch");
			goto out;
		}
		*found = true;
		break;
	}
	rc = 0;
out:
	reader_zsrc_free(s);
	return rc;
}

static int add_chunk(struct argus_trace *t, const struct chunk *c)
{
	if (reader_grow(&t->chunks, &t->chunks_cap, (uint64_t)t->nchunks + 1,
			sizeof(*t->chunks)))
		return -ENOMEM;
	t->chunks[t->nchunks++] = *c;
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	return -reader_cmp_seq_desc(a, b);
}

/*
 * The first block boundary at or after off whose bytes are data, and in
 * *data_end where that data stops.  A ring left sparse (no fallocate) has
 * holes where nothing was written yet, and on a full tmpfs even reading a
 * hole through a mapping faults (SIGBUS): skip them.
 */
static uint64_t next_data(const struct argus_trace *t, uint64_t off,
			  uint64_t area_end, uint64_t *data_end)
{
	off_t d, h;

	*data_end = area_end;
	if (t->fd < 0)
		return off;
	d = lseek(t->fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? area_end : off;
	h = lseek(t->fd, d, SEEK_HOLE);
	if (h >= 0 && (uint64_t)h < area_end)
		*data_end = (uint64_t)h;
	return argus_align_up((uint64_t)d, ARGUS_BLOCK_SIZE);
}

int reader_scan(struct argus_trace *t, struct argus_error *err)
{
	uint64_t area_end = t->len, overwritten = 0, incomplete = 0;
	struct chunk *cand = NULL;
	uint32_t ncand = 0, cap = 0, maxcpu = 0;
	uint64_t data_end = 0;
	int rc = 0;

	if (t->ring && ARGUS_FILE_HEADER_SIZE + t->fh.data_size < area_end)
		area_end = ARGUS_FILE_HEADER_SIZE + t->fh.data_size;
	for (uint64_t off = ARGUS_FILE_HEADER_SIZE;
	     off + ARGUS_CHUNK_HEADER_SIZE <= area_end; off += ARGUS_BLOCK_SIZE) {
		struct chunk c = { .off = off };

		if (off + ARGUS_CHUNK_HEADER_SIZE > data_end) {
			c.off = off = next_data(t, off, area_end, &data_end);
			if (off + ARGUS_CHUNK_HEADER_SIZE > data_end)
				continue;  /* past the end, or a sliver of data */
		}
		memcpy(&c.h, t->base + off, sizeof(c.h));
		if (!argus_chunk_header_ok(&c.h))
			continue;
		if (reader_grow(&cand, &cap, (uint64_t)ncand + 1, sizeof(*cand))) {
			rc = argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
			goto out;
		}
		c.state = CH_BAD;
		cand[ncand++] = c;
		if (c.h.seq > t->max_seq)
			t->max_seq = c.h.seq;
	}
	rc = t->ring ? reader_classify_ring(t, cand, ncand, area_end, err) :
		       reader_classify_snapshot(t, cand, ncand, err);
	if (rc)
		goto out;

	/* read each good chunk's CPUS section */
	if (ncand > 1)
		qsort(cand, ncand, sizeof(*cand), cmp_seq);
	for (uint32_t i = 0; i < ncand; i++) {
		struct chunk *c = &cand[i];
		bool found;

		if (c->state == CH_GOOD) {
			uint32_t mc = maxcpu;

			rc = probe_cpus(t, c, &mc, &found);
			if (rc == -ENOMEM) {
				argus_error__set(err, t->path, rc, 0, "out of memory");
				goto out;
			}
			if (rc) {
				/* tolerated in the newest chunk of a ring only */
				if (t->ring && c->h.seq == t->max_seq)
					c->state = CH_INCOMPLETE;
				else if (t->ring && reader_chunk_changed(t, c))
					c->state = CH_OVERWRITTEN;
				else if (t->ring)
					reader_skip_corrupt(t, c, t->why);
				else {
					rc = reader_corrupt(t, err, c, t->why);
					goto out;
				}
				rc = 0;
			} else {
				maxcpu = mc;
				for (int k = 0; found && k < 256; k++) {
					struct argus_cpu_stats *p = &t->probe[k];
					struct argus_cpu_stats *s = &t->stats.cpu[k];

					if (p->events) {
						if (!s->events || p->min_ts < s->min_ts)
							s->min_ts = p->min_ts;
						if (!s->events || p->max_ts > s->max_ts)
							s->max_ts = p->max_ts;
					}
					s->events += p->events;
					s->lost += p->lost;
				}
			}
		}
		if (c->state == CH_OVERWRITTEN)
			overwritten++;
		else if (c->state == CH_INCOMPLETE)
			incomplete++;
		else if (c->state == CH_GOOD && add_chunk(t, c)) {
			rc = argus_error__set(err, t->path, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}

	t->stats.chunks = t->nchunks;
	t->stats.chunks_incomplete = incomplete;
	/* Writers number a file's chunks 1, 2, 3...: in a ring, every number
	 * below the newest that is not here was overwritten. */
	if (t->ring && t->max_seq > t->nchunks + incomplete + t->stats.chunks_corrupt &&
	    t->max_seq - t->nchunks - incomplete - t->stats.chunks_corrupt > overwritten)
		overwritten = t->max_seq - t->nchunks - incomplete - t->stats.chunks_corrupt;
	t->stats.chunks_overwritten = overwritten;
	for (uint32_t i = 0; i < t->nchunks; i++) {
		const struct argus_chunk_header *h = &t->chunks[i].h;
		bool first = !t->stats.max_ts && !t->stats.min_ts;

		if (!h->nevents)
			continue;
		if (first || h->min_ts < t->stats.min_ts)
			t->stats.min_ts = h->min_ts;
		if (first || h->max_ts > t->stats.max_ts)
			t->stats.max_ts = h->max_ts;
	}
	t->stats.ncpus = t->fh.ncpus > maxcpu ? t->fh.ncpus : maxcpu;
out:
	free(cand);
	return rc;
}
