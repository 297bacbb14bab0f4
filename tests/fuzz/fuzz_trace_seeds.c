/* fuzz_trace_seeds.c - write small valid traces as the fuzzer's seed corpus:
 * `fuzz_trace_seeds SEED_DIR [MORE_DIRS...]` creates the directories and
 * fills the first.  Seeds are generated in the build, never committed.
 * Each covers a different shape: snapshot/ring, zstd/zlib/raw, wrapped ring,
 * every event type with strings, stacks, tasks, maps and lost counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "argus_events.h"
#include "trace_format.h"

static void fill(struct argus_chunk_builder *b, uint64_t ts, int n)
{
	static const uint16_t types[] = {
		AE_SWITCH, AE_WAKING, AE_WAKEUP_NEW, AE_FORK, AE_EXEC, AE_EXIT,
		AE_FREE, AE_RENAME, AE_SYS_ENTER, AE_SYS_EXIT, AE_HRT_START,
		AE_HRT_EXPIRE, AE_HRT_CANCEL, AE_IRQ_ENTRY, AE_IRQ_EXIT,
		AE_SOFTIRQ_ENTRY, AE_SOFTIRQ_EXIT, AE_WQ_START, AE_WQ_END,
		AE_SAMPLE, AE_MARK, AE_LOST, 27 /* unknown: keep it unused */, AE_HWWATCH,
	};
	static const unsigned nfields[] = { 8, 5, 3, 3, 1, 2, 3, 0, 7, 6, 5, 5,
					    5, 2, 2, 2, 2, 2, 2, 0, 2, 1, 8, 7 };
	uint64_t ips[4] = { 0x55d0c0a01234, 0x55d0c0a05678, 0x7f1234567000, 1 };
	uint32_t comm = argus_chunk_builder__string(b, "worker", 6);
	uint32_t file = argus_chunk_builder__string(b, "/usr/bin/true", 13);
	uint32_t stk = argus_chunk_builder__stack(b, ips, 4);
	struct argus_task k = { 100, 100, 1, comm };
	struct argus_map m = { .pid = 100, .path = file, .ts = ts,
			       .start = 0x55d0c0a00000, .end = 0x55d0c0b00000,
			       .build_id_len = 4, .build_id = { 1, 2, 3, 4 } };

	argus_chunk_builder__task(b, &k);
	argus_chunk_builder__map(b, &m);
	argus_chunk_builder__lost(b, 1, 3);
	for (int i = 0; i < n; i++) {
		unsigned t = (unsigned)i % (sizeof(types) / sizeof(types[0]));
		struct argus_event ev = { .ts = ts + (uint64_t)i * 10, .tid = 100,
					  .pid = 100, .type = types[t],
					  .cpu = (uint16_t)(i % 3), .ctx = (uint8_t)(i % 4) };

		for (unsigned f = 0; f < nfields[t]; f++)
			ev.f[f] = f == 0 ? 0x55d0c0a01000 + (uint64_t)i : (uint64_t)-(int64_t)f;
		if (types[t] == AE_SWITCH || types[t] == AE_SAMPLE || types[t] == 27 ||
		    types[t] == AE_HWWATCH)
			ev.stack = stk;
		if (types[t] == AE_SWITCH || types[t] == AE_EXEC || types[t] == AE_MARK ||
		    types[t] == AE_FORK || types[t] == 27)
			ev.str = comm;
		if (types[t] == AE_EXEC || types[t] == 27)
			ev.str2 = file;
		argus_chunk_builder__event(b, &ev);
	}
}

static int write_trace(const char *dir, const char *name, uint64_t ring,
		       int chunks, int events, int level, enum argus_codec codec)
{
	struct argus_ring_opts o = { .sz = sizeof(o), .data_size = ring, .ncpus = 4 };
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_error err = { 0 };
	struct argus_ring *r;
	char path[4096];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r = argus_ring__create(path, &o, &err);
	if (!r || !b) {
		fprintf(stderr, "fuzz_trace_seeds: %s\n", err.msg);
		argus_chunk_builder__free(b);
		return 1;
	}
	argus_chunk_builder__set_codec(b, codec);
	for (int c = 0; c < chunks && !rc; c++) {
		void *buf;
		size_t len;

		fill(b, 1000000 * (uint64_t)(c + 1), events);
		rc = argus_chunk_builder__finish(b, (uint64_t)c + 1, level, &buf, &len);
		if (!rc) {
			rc = argus_ring__append(r, buf, len);
			free(buf);
		}
	}
	argus_ring__close(r);
	argus_chunk_builder__free(b);
	if (rc)
		fprintf(stderr, "fuzz_trace_seeds: %s: %s\n", path, strerror(-rc));
	return rc != 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_trace_seeds SEED_DIR [MORE_DIRS...]\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (mkdir(argv[i], 0700) && errno != EEXIST) {
			perror(argv[i]);
			return 1;
		}
	bad |= write_trace(argv[1], "snap-zlib", 0, 1, 46, 6, ARGUS_CODEC_ZLIB);
	bad |= write_trace(argv[1], "snap-zstd", 0, 2, 46, 1, ARGUS_CODEC_ZSTD);
	bad |= write_trace(argv[1], "snap-raw", 0, 2, 23, 0, ARGUS_CODEC_ZSTD);
	bad |= write_trace(argv[1], "ring-wrapped", 3 * 4096, 5, 40, 0, ARGUS_CODEC_ZSTD);
	bad |= write_trace(argv[1], "ring-zlib", 2 * 4096, 2, 60, 1, ARGUS_CODEC_ZLIB);
	bad |= write_trace(argv[1], "ring-zstd", 2 * 4096, 3, 60, 1, ARGUS_CODEC_ZSTD);
	bad |= write_trace(argv[1], "empty", 0, 0, 0, 0, ARGUS_CODEC_ZSTD);
	return bad;
}
