/* codec_speed.c - the chunk codecs on a real trace's payloads, in the
 * same run: zstd (what the collector writes since format version 2)
 * against libdeflate's zlib (what it wrote before), each at level 1, the
 * collector's.  Every chunk of TRACE is inflated once through the trace
 * library's own inflate (argus_trace__chunk gives the stored bytes; the
 * payload is inflated here by its flag), then, after one unprinted round,
 * each round compresses and inflates every payload with both codecs,
 * alternating which goes first.
 *
 *   codec_speed TRACE [ROUNDS (5)]
 *
 * Prints per round and codec: bytes/event written, compress and inflate
 * CPU ns/event (this thread's CPU time), and zstd / zlib ratios; and
 * checks that both round-trip every payload exactly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libdeflate.h>
#include <zstd.h>

#include "trace_format.h"

struct payload {
	uint8_t *raw;
	size_t len;
};

struct result {
	double bytes, comp_s, infl_s;
	bool ok;
};

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The chunk's payload inflated by the codec its flag names; NULL if it
 * does not inflate to raw_len. */
static uint8_t *inflate_chunk(const uint8_t *data, size_t *len)
{
	struct argus_chunk_header h;
	const uint8_t *pl = data + ARGUS_CHUNK_HEADER_SIZE;
	uint8_t *raw;
	size_t got = 0;

	memcpy(&h, data, sizeof(h));
	raw = malloc(h.raw_len ? h.raw_len : 1);
	if (!raw)
		return NULL;
	if (h.flags & ARGUS_CHUNK_ZSTD) {
		got = ZSTD_decompress(raw, h.raw_len, pl, h.payload_len);
		if (ZSTD_isError(got))
			got = SIZE_MAX;
	} else if (h.flags & ARGUS_CHUNK_ZLIB) {
		struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();

		if (!d || libdeflate_zlib_decompress(d, pl, h.payload_len, raw, h.raw_len,
						     &got) != LIBDEFLATE_SUCCESS)
			got = SIZE_MAX;
		libdeflate_free_decompressor(d);
	} else {
		memcpy(raw, pl, h.raw_len);
		got = h.raw_len;
	}
	if (got != h.raw_len) {
		free(raw);
		return NULL;
	}
	*len = h.raw_len;
	return raw;
}

static struct result run_zlib(const struct payload *p, size_t n, uint8_t *out,
			      size_t cap, uint8_t *back)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	struct result r = { .ok = c && d };

	for (size_t i = 0; i < n && r.ok; i++) {
		double t0 = cpu_s(), t1, t2;
		size_t z = libdeflate_zlib_compress(c, p[i].raw, p[i].len, out, cap), got = 0;

		t1 = cpu_s();
		r.ok = z && libdeflate_zlib_decompress(d, out, z, back, p[i].len, &got) ==
			    LIBDEFLATE_SUCCESS;
		t2 = cpu_s();
		r.ok = r.ok && got == p[i].len && !memcmp(back, p[i].raw, got);
		r.bytes += (double)z;
		r.comp_s += t1 - t0;
		r.infl_s += t2 - t1;
	}
	libdeflate_free_compressor(c);
	libdeflate_free_decompressor(d);
	return r;
}

/* The collector's settings: level 1, the content size in the frame
 * (trace/chunk_builder.c). */
static struct result run_zstd(const struct payload *p, size_t n, uint8_t *out,
			      size_t cap, uint8_t *back)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_DCtx *d = ZSTD_createDCtx();
	struct result r = { .ok = c && d };

	if (r.ok) {
		ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
	}
	for (size_t i = 0; i < n && r.ok; i++) {
		double t0 = cpu_s(), t1, t2;
		size_t z = ZSTD_compress2(c, out, cap, p[i].raw, p[i].len), got;

		t1 = cpu_s();
		r.ok = !ZSTD_isError(z);
		got = r.ok ? ZSTD_decompressDCtx(d, back, p[i].len, out, z) : 0;
		t2 = cpu_s();
		r.ok = r.ok && got == p[i].len && !memcmp(back, p[i].raw, got);
		r.bytes += (double)z;
		r.comp_s += t1 - t0;
		r.infl_s += t2 - t1;
	}
	ZSTD_freeCCtx(c);
	ZSTD_freeDCtx(d);
	return r;
}

int main(int argc, char **argv)
{
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct payload *p;
	size_t n = 0, maxlen = 0, cap;
	uint64_t events = 0;
	double raw_bytes = 0;
	uint8_t *out, *back;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, bad = 0;

	if (argc < 2 || rounds < 1) {
		fprintf(stderr, "usage: codec_speed TRACE [ROUNDS]\n");
		return 2;
	}
	t = argus_trace__open(argv[1], &err);
	if (!t) {
		fprintf(stderr, "codec_speed: %s\n", err.msg);
		return 1;
	}
	p = calloc(argus_trace__nchunks(t) + 1, sizeof(*p));
	for (size_t i = 0; p && i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;

		if (argus_trace__chunk(t, i, &ci))
			continue;
		p[n].raw = inflate_chunk(ci.data, &p[n].len);
		if (!p[n].raw) {
			fprintf(stderr, "codec_speed: chunk seq %llu does not inflate\n",
				(unsigned long long)ci.seq);
			return 1;
		}
		events += ci.nevents;
		raw_bytes += (double)p[n].len;
		if (p[n].len > maxlen)
			maxlen = p[n].len;
		n++;
	}
	argus_trace__close(t);
	cap = ZSTD_compressBound(maxlen) + (maxlen >> 4) + 4096;   /* >= either bound */
	out = malloc(cap);
	back = malloc(maxlen + 1);
	if (!p || !n || !events || !out || !back) {
		fprintf(stderr, "codec_speed: no events in %s, or out of memory\n", argv[1]);
		return 1;
	}
	/* one round unprinted first: else round 1's first codec paid for
	 * faulting in the buffers and the libraries' state (1.6x its later
	 * rounds) */
	run_zlib(p, n, out, cap, back);
	run_zstd(p, n, out, cap, back);
	printf("%s: %zu chunks, %llu events, raw %.2f bytes/event\n", argv[1], n,
	       (unsigned long long)events, raw_bytes / (double)events);
	printf("| round | zlib-1 B/ev | zstd-1 B/ev | zlib compress ns/ev | zstd | zstd / zlib | zlib inflate ns/ev | zstd | zstd / zlib |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int r = 0; r < rounds; r++) {
		struct result zl, zs;
		double ev = (double)events;

		if (r % 2) {
			zs = run_zstd(p, n, out, cap, back);
			zl = run_zlib(p, n, out, cap, back);
		} else {
			zl = run_zlib(p, n, out, cap, back);
			zs = run_zstd(p, n, out, cap, back);
		}
		if (!zl.ok || !zs.ok) {
			fprintf(stderr, "codec_speed: round %d: %s did not round-trip\n", r + 1,
				!zl.ok ? "zlib" : "zstd");
			bad = 1;
			break;
		}
		printf("| %d | %.3f | %.3f | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx |\n", r + 1,
		       zl.bytes / ev, zs.bytes / ev, zl.comp_s * 1e9 / ev, zs.comp_s * 1e9 / ev,
		       zs.comp_s / zl.comp_s, zl.infl_s * 1e9 / ev, zs.infl_s * 1e9 / ev,
		       zs.infl_s / zl.infl_s);
	}
	for (size_t i = 0; i < n; i++)
		free(p[i].raw);
	free(p);
	free(out);
	free(back);
	return bad;
}
