/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_reader.c - open a trace file and return its events in time order:
 * the public API of trace_format.h's reader (argus_trace__*), over the
 * reader's files, each with one job (reader_internal.h lists them).
 *
 * Open (argus_trace__open / __open_mem) maps the file and scans it
 * (reader_scan.c): the file header, every chunk found and classified, the
 * per-CPU totals read from each GOOD chunk's CPUS section.
 *
 * Events are decoded lazily: __next() loads one chunk at a time
 * (reader_chunk.c), which validates every section of it, then decodes
 * every event of its per-CPU streams, merged on (ts, cpu), once and
 * straight into `evbuf`, before the first one is returned (so a chunk is
 * returned whole or not at all).  Meanwhile the next chunk's payload is
 * inflated on a second thread (reader_prefetch.c).  __next() copies events out of evbuf;
 * __next_batch() hands out the rest of the chunk in place.  Chunks go in
 * seq order; an event older than the one returned before it (chunks may
 * overlap in time) is still returned and counted in stats.out_of_order.
 * A ring chunk that fails to load is classified again, as at open.
 *
 * Lookups of strings, stacks, tasks and maps are in reader_tables.c.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_internal.h"

int reader_why(struct argus_trace *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* ---------------------------------------------------------------------
 * Open.
 */
static struct argus_trace *open_common(struct argus_trace *t,
				       struct argus_error *err)
{
	int rc = reader_check_header(t, err);

	if (!rc)
		rc = reader_scan(t, err);
	if (rc) {
		argus_trace__close(t);
		errno = -rc;
		return NULL;
	}
	return t;
}

struct argus_trace *argus_trace__open_mem(const void *buf, size_t len,
					  struct argus_error *err)
{
	struct argus_trace *t;

	if (!buf && len) {
		argus_error__set(err, NULL, -EINVAL, 0, "no buffer");
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		argus_error__set(err, NULL, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->base = buf;
	t->len = len;
	t->fd = -1;
	return open_common(t, err);
}

struct argus_trace *argus_trace__open(const char *path,
				      struct argus_error *err)
{
	struct argus_trace *t;
	struct stat st;
	int fd, rc;

	if (!path) {
		argus_error__set(err, NULL, -EINVAL, 0, "no path");
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		argus_error__set(err, path, rc, 0, "cannot open: %s", strerror(-rc));
		errno = -rc;
		return NULL;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		argus_error__set(err, path, rc, 0, "cannot stat: %s", strerror(-rc));
		close(fd);
		errno = -rc;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		argus_error__set(err, path, -EINVAL, 0, "not a regular file");
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		close(fd);
		argus_error__set(err, path, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->len = (size_t)st.st_size;
	if (t->len) {
		void *m = mmap(NULL, t->len, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED) {
			rc = -errno;
			argus_error__set(err, path, rc, 0, "cannot map %zu bytes: %s",
					 t->len, strerror(-rc));
			close(fd);
			free(t->path);
			free(t);
			errno = -rc;
			return NULL;
		}
		t->base = m;
		t->mapped = true;
	}
	t->fd = fd;
	t = open_common(t, err);
	if (t)
		t->fd = -1;
	close(fd);
	return t;
}

/* ---------------------------------------------------------------------
 * Iteration.
 */

/* The chunk the iteration loads after chunk i - 1: inflated ahead. */
static const struct chunk *next_good(const struct argus_trace *t, uint32_t i)
{
	for (; i < t->nchunks; i++)
		if (t->chunks[i].state == CH_GOOD)
			return &t->chunks[i];
	return NULL;
}

/* Make sure evbuf has events to hand out: 1 = yes, 0 = end of trace,
 * < 0 = error (in *err). */
static int fill(struct argus_trace *t, struct argus_error *err)
{
	while (t->pos >= t->nev) {
		struct chunk *c;
		int rc;

		t->nev = t->pos = 0;
		if (t->next_chunk >= t->nchunks)
			return 0;
		c = &t->chunks[t->next_chunk++];
		if (c->state != CH_GOOD)
			continue;
		rc = reader_load_chunk(t, c, next_good(t, t->next_chunk));
		if (rc == 0)
			continue;
		if (rc == 1 || (rc == -EBADMSG && t->ring && reader_chunk_changed(t, c))) {
			/* overwritten since open: a live ring moved on */
			c->state = CH_OVERWRITTEN;
			t->stats.chunks--;
			t->stats.chunks_overwritten++;
			continue;
		}
		if (rc == -EBADMSG && t->ring && c->h.seq == t->max_seq) {
			c->state = CH_INCOMPLETE;
			t->stats.chunks--;
			t->stats.chunks_incomplete++;
			continue;
		}
		if (rc == -EBADMSG && t->ring) {
			reader_skip_corrupt(t, c, t->why);
			t->stats.chunks--;
			continue;
		}
		if (rc == -EBADMSG)
			return reader_corrupt(t, err, c, t->why);
		return argus_error__set(err, t->path, rc, c->off,
					"chunk seq %" PRIu64 " at offset 0x%" PRIx64 ": %s",
					c->h.seq, c->off, strerror(-rc));
	}
	return 1;
}

int argus_trace__next(struct argus_trace *t, struct argus_event *ev,
		      struct argus_error *err)
{
	int rc;

	if (!t || !ev)
		return argus_error__set(err, NULL, -EINVAL, 0, "bad arguments");
	if (t->pos >= t->nev && (rc = fill(t, err)) <= 0)
		return rc;
	*ev = t->evbuf[t->pos++];
	if (t->have_last && ev->ts < t->last_ts)
		t->stats.out_of_order++;
	t->last_ts = ev->ts;
	t->have_last = true;
	t->stats.events++;
	return 1;
}

int argus_trace__next_batch(struct argus_trace *t,
			    const struct argus_event **evs,
			    struct argus_error *err)
{
	uint32_t n;
	int rc;

	if (!t || !evs)
		return argus_error__set(err, NULL, -EINVAL, 0, "bad arguments");
	if (t->pos >= t->nev && (rc = fill(t, err)) <= 0)
		return rc;
	n = t->nev - t->pos;
	*evs = t->evbuf + t->pos;
	/* a chunk's merged events never go back in time: only its first
	 * can be older than the event returned before it */
	if (t->have_last && (*evs)[0].ts < t->last_ts)
		t->stats.out_of_order++;
	t->last_ts = t->evbuf[t->nev - 1].ts;
	t->have_last = true;
	t->stats.events += n;
	t->pos = t->nev;
	return (int)n;
}

int argus_trace__rewind(struct argus_trace *t)
{
	if (!t)
		return -EINVAL;
	reader_prefetch_stop(t);
	t->next_chunk = 0;
	t->nev = t->pos = 0;
	t->have_last = false;
	t->last_ts = 0;
	t->stats.events = 0;
	t->stats.out_of_order = 0;
	t->stats.inflated_ahead = 0;
	return 0;
}

/* ---------------------------------------------------------------------
 * The trace and its chunks.
 */
const struct argus_trace_stats *argus_trace__stats(const struct argus_trace *t)
{
	return t ? &t->stats : NULL;
}

const struct argus_file_header *argus_trace__header(const struct argus_trace *t)
{
	return t ? &t->fh : NULL;
}

size_t argus_trace__nchunks(const struct argus_trace *t)
{
	return t ? t->nchunks : 0;
}

int argus_trace__chunk(const struct argus_trace *t, size_t i,
		       struct argus_chunk_info *info)
{
	const struct chunk *c;

	if (!t || !info)
		return -EINVAL;
	if (i >= t->nchunks)
		return -ENOENT;
	c = &t->chunks[i];
	info->offset = c->off;
	info->seq = c->h.seq;
	info->min_ts = c->h.min_ts;
	info->max_ts = c->h.max_ts;
	info->nevents = c->h.nevents;
	info->size = ARGUS_CHUNK_HEADER_SIZE + c->h.payload_len;
	info->data = t->base + c->off;
	return 0;
}

int argus_trace__chunk_check(struct argus_trace *t, size_t i)
{
	struct chunk *c;
	int rc;

	if (!t)
		return -EINVAL;
	if (i >= t->nchunks)
		return -ENOENT;
	c = &t->chunks[i];
	if (c->state != CH_GOOD)
		return 1;
	/* reader_load_chunk decodes into evbuf: what an iteration was handing out
	 * is gone (hence "not during an iteration") */
	rc = reader_load_chunk(t, c, NULL);
	t->nev = t->pos = 0;
	if (rc == 1 || (rc == -EBADMSG && t->ring && reader_chunk_changed(t, c)))
		return 1;
	if (rc == -EBADMSG) {
		reader_skip_corrupt(t, c, t->why);
		t->stats.chunks--;
	}
	return rc;
}

void argus_trace__close(struct argus_trace *t)
{
	if (!t)
		return;
	reader_prefetch_stop(t);       /* it reads the mapping */
	if (t->mapped)
		munmap((void *)t->base, t->len);
	free(t->path);
	free(t->chunks);
	free(t->sch);
	free(t->cpus);
	free(t->lstr);
	free(t->lstk);
	free(t->ips);
	free(t->cur);
	free(t->evbuf);
	free(t->heap);
	reader_inflate_buf_free(&t->in);
	reader_inflate_buf_free(&t->pf.buf);
	reader_tables_free(t);
	free(t);
}
