/* fuzz_trace_reader.c - libFuzzer target: any bytes, opened as a trace.
 *
 * The reader must never crash, read out of bounds, hang or allocate without
 * bound, whatever the input.  Built against a copy of the trace library
 * compiled with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which waves the
 * crc checks through so mutations reach the decoder behind them.  Besides
 * the sanitizers, the target checks the API's promises and traps when one
 * is broken: error messages are NUL-terminated, and every id __next()
 * returns resolves. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace_format.h"

#define EXPECT(c) do { if (!(c)) __builtin_trap(); } while (0)

static volatile size_t sink;

static void touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;

	if (n)
		sink += b[0] + b[n - 1];
}

static void walk(struct argus_trace *t)
{
	struct argus_error err;
	struct argus_event ev;
	unsigned n = 0;
	int rc;

	while (n++ < (1u << 20) && (rc = argus_trace__next(t, &ev, &err)) != 0) {
		const uint64_t *ips;
		const char *s;
		uint32_t nr;

		if (rc < 0) {
			EXPECT(memchr(err.msg, 0, sizeof(err.msg)));
			continue;  /* the reader moves past a bad chunk */
		}
		if (ev.str) {
			EXPECT((s = argus_trace__string(t, ev.str)));
			sink += strlen(s);
		}
		if (ev.str2) {
			EXPECT((s = argus_trace__string(t, ev.str2)));
			sink += strlen(s);
		}
		if (ev.stack) {
			EXPECT(!argus_trace__stack(t, ev.stack, &ips, &nr));
			touch(ips, nr * sizeof(*ips));
			for (uint32_t i = 0; i < nr && i < 4; i++)
				sink += argus_trace__map(t, ev.pid, ips[i], ev.ts) != NULL;
		}
		const struct argus_task *k = argus_trace__task(t, ev.tid);
		if (k && k->comm)
			EXPECT(argus_trace__string(t, k->comm));
		const struct argus_map *m = argus_trace__map(t, ev.pid, ev.f[0], ev.ts);
		if (m && m->path)
			EXPECT(argus_trace__string(t, m->path));
	}
}

/* The same walk a batch at a time (what the graph build does): the same
 * number of events as __next() gave, each id resolving. */
static uint64_t walk_batches(struct argus_trace *t)
{
	const struct argus_event *evs;
	struct argus_error err;
	uint64_t total = 0;
	unsigned calls = 0;
	int rc;

	while (calls++ < (1u << 20) && (rc = argus_trace__next_batch(t, &evs, &err)) != 0) {
		if (rc < 0) {
			EXPECT(memchr(err.msg, 0, sizeof(err.msg)));
			continue;
		}
		for (int i = 0; i < rc; i++) {
			if (evs[i].str)
				EXPECT(argus_trace__string(t, evs[i].str));
			if (evs[i].str2)
				EXPECT(argus_trace__string(t, evs[i].str2));
			EXPECT(i == 0 || evs[i].ts >= evs[i - 1].ts);
		}
		total += (uint64_t)rc;
	}
	return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argus_error err;
	struct argus_trace *t = argus_trace__open_mem(data, size, &err);

	if (!t) {
		EXPECT(err.code < 0);
		EXPECT(memchr(err.msg, 0, sizeof(err.msg)));
		return 0;
	}
	const struct argus_trace_stats *st = argus_trace__stats(t);
	const struct argus_file_header *h = argus_trace__header(t);
	sink += st->chunks + strlen(h->hostname) + strlen(h->kernel);
	for (size_t i = 0; i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;

		EXPECT(!argus_trace__chunk(t, i, &ci));
		EXPECT((const uint8_t *)ci.data >= data &&
		       ci.offset + ci.size <= size);
		touch(ci.data, ci.size);
	}
	walk(t);
	EXPECT(!argus_trace__rewind(t));
	walk(t);
	{
		uint64_t n = argus_trace__stats(t)->events;

		EXPECT(!argus_trace__rewind(t));
		EXPECT(walk_batches(t) == n);
	}
	argus_trace__close(t);
	return 0;
}
