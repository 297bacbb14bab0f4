/* mark_who.c - see mark_who.h. */
#include "mark_who.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "argus_events.h"
#include "trace_format.h"

/* The events of chunk info, read as a one-chunk snapshot in memory: the
 * trace's own header (made a snapshot's: no ring area) and the chunk's
 * bytes, which the reader checks as it would in the file. */
static int search_chunk(const struct argus_file_header *fh, const struct argus_chunk_info *info,
			const char *text, uint64_t from, uint64_t to, struct cli_mark_who *who,
			uint64_t *best_ts)
{
	size_t len = ARGUS_FILE_HEADER_SIZE + info->size;
	struct argus_file_header h = *fh;
	struct argus_error err = { 0 };
	struct argus_trace *one;
	struct argus_event ev;
	uint8_t *buf;
	int found = -ENOENT;

	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	h.flags = (h.flags & ~(uint32_t)ARGUS_FILE_RING) | ARGUS_FILE_SNAPSHOT;
	h.data_size = 0;
	h.header_crc = (uint32_t)crc32_z(0, (const Bytef *)&h,
					 offsetof(struct argus_file_header, header_crc));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + ARGUS_FILE_HEADER_SIZE, info->data, info->size);
	one = argus_trace__open_mem(buf, len, &err);
	if (!one) {
		free(buf);
		return -EBADMSG;
	}
	while (argus_trace__next(one, &ev, &err) > 0) {
		const char *s;

		if (ev.type != AE_MARK || ev.ts < from || ev.ts > to || ev.ts >= *best_ts)
			continue;
		s = ev.str ? argus_trace__string(one, ev.str) : "";
		if (text && text[0] && strcmp(s ? s : "", text))
			continue;
		*best_ts = ev.ts;
		who->pid = ev.pid;
		who->tid = ev.tid;
		who->uid = (uint32_t)ev.f[ARGUS_F_MARK_UID];
		who->has_uid = ev.f[ARGUS_F_MARK_HAS_UID] != 0;
		found = 0;
	}
	argus_trace__close(one);
	free(buf);
	return found;
}

int cli_mark_who(struct argus_trace *t, const char *text, uint64_t from, uint64_t to,
		 struct cli_mark_who *who)
{
	const struct argus_file_header *fh;
	uint64_t best = UINT64_MAX;
	size_t n;
	int rc = -ENOENT;

	if (!t || !who)
		return -EINVAL;
	fh = argus_trace__header(t);
	if (!fh)
		return -EINVAL;
	n = argus_trace__nchunks(t);
	for (size_t i = 0; i < n; i++) {
		struct argus_chunk_info info;

		if (argus_trace__chunk(t, i, &info) || info.max_ts < from || info.min_ts > to ||
		    !info.data)
			continue;
		if (!search_chunk(fh, &info, text, from, to, who, &best))
			rc = 0;
	}
	return rc;
}
