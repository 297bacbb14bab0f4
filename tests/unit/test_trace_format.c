/* test_trace_format.c - the trace format as a specification: what goes in
 * through the chunk builder and the ring comes back out of the reader, in
 * time order, across wraps, crashes and corruption.  Each TEST is one
 * behaviour.  Files live in a private temp dir removed at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "argus_events.h"
#include "check.h"
#include "trace_format.h"
#include "varint.h"

static char dir[64];

static const char *tpath(const char *name)
{
	static char p[8][128];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t align_up(uint64_t v)
{
	return (v + ARGUS_BLOCK_SIZE - 1) / ARGUS_BLOCK_SIZE * ARGUS_BLOCK_SIZE;
}

/* ---------------------------------------------------------------------
 * The documented per-type schema (docs/trace-format.md), restated.
 */
#define R_STK 1
#define R_STR 2
#define R_STR2 4
struct tspec {
	uint16_t type;
	unsigned nfields;
	unsigned smask;
	unsigned refs;
};
static const struct tspec types[] = {
	{ AE_SWITCH, 8, 0xc, R_STK | R_STR }, { AE_WAKING, 5, 0, 0 },
	{ AE_WAKEUP_NEW, 3, 0, R_STR }, { AE_FORK, 3, 0, R_STR },
	{ AE_EXEC, 1, 0, R_STR | R_STR2 }, { AE_EXIT, 2, 1, 0 },
	{ AE_FREE, 3, 0, R_STR }, { AE_RENAME, 0, 0, R_STR },
	{ AE_SYS_ENTER, 7, 1, 0 }, { AE_SYS_EXIT, 6, 3, 0 },
	{ AE_HRT_START, 5, 4, 0 }, { AE_HRT_EXPIRE, 5, 4, 0 },
	{ AE_HRT_CANCEL, 5, 4, 0 }, { AE_IRQ_ENTRY, 2, 2, 0 },
	{ AE_IRQ_EXIT, 2, 2, 0 }, { AE_SOFTIRQ_ENTRY, 2, 2, 0 },
	{ AE_SOFTIRQ_EXIT, 2, 2, 0 }, { AE_WQ_START, 2, 0, 0 },
	{ AE_WQ_END, 2, 0, 0 }, { AE_SAMPLE, 0, 0, R_STK },
	{ AE_MARK, 2, 0, R_STR }, { AE_LOST, 1, 0, 0 },
	{ AE_HWWATCH, 7, 0, R_STK },          /* 7th: the named reader */
	{ 27, 8, 0, R_STK | R_STR | R_STR2 }, /* unknown (keep 27 unused): generic schema */
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* An event as the test expects it back: ids replaced by content. */
struct exp {
	struct argus_event ev;  /* stack/str/str2 zeroed */
	uint32_t chunk;
	const char *str, *str2;
	int stack;              /* index into stacks[], -1 = none */
};

static const char *strs[] = { "bash", "nginx: worker", "/usr/bin/python3",
			      "", "kworker/3:1", "a\nmark with spaces", "postgres" };
#define NSTRS (sizeof(strs) / sizeof(strs[0]))
static uint64_t stacks[6][5] = {
	{ 0x55d0c0a01234, 0x55d0c0a05678, 0x7f1234567000, 0x7f1234500000, 1 },
	{ 0x7fffffffe000, 0, 0xffffffffffffffffull, 0x1000, 0x7f00000000 },
	{ 1, 2, 3, 4, 5 },
	{ 0x401000, 0x401010, 0x401020, 0x401030, 0x401040 },
	{ 0xffffffff81000000ull, 0x7f0000000000, 0x10, 0x7f0000000010, 0 },
	{ 0 },
};
static const uint32_t stack_nr[6] = { 5, 5, 3, 5, 4, 0 };

static uint64_t rnd_field(bool is_signed)
{
	uint64_t v = rnd() >> (rnd() % 64);

	if (is_signed && (rnd() & 1))
		return (uint64_t)-(int64_t)(rnd() % 100000);
	return v;
}

/* Fill a builder with `n` events of every type over `ncpu` CPUs, starting
 * at ts0; append what it should read back to exp[]. */
static void fill_chunk(struct argus_chunk_builder *b, uint32_t chunk,
		       uint64_t ts0, unsigned ncpu, unsigned n,
		       struct exp *exp, size_t *nexp)
{
	uint32_t sid[NSTRS], kid[6];
	uint64_t ts[16];

	for (unsigned i = 0; i < NSTRS; i++)
		sid[i] = argus_chunk_builder__string(b, strs[i], strlen(strs[i]));
	for (unsigned i = 0; i < 6; i++)
		kid[i] = argus_chunk_builder__stack(b, stacks[i], stack_nr[i]);
	for (unsigned c = 0; c < ncpu; c++)
		ts[c] = ts0 + c;
	for (unsigned i = 0; i < n; i++) {
		const struct tspec *ts_ = &types[i % NTYPES];
		struct exp *e = &exp[(*nexp)++];
		struct argus_event ev = { 0 };
		unsigned c = (unsigned)(rnd() % ncpu);
		int si = (int)(rnd() % NSTRS), si2 = (int)(rnd() % NSTRS);
		int ki = (int)(rnd() % 6);

		ts[c] += rnd() % 3 ? rnd() % 50000 : 0;  /* equal ts happen */
		ev.ts = ts[c];
		ev.tid = (uint32_t)(rnd() % 5 ? rnd() % 40000 : rnd());
		ev.pid = rnd() % 3 ? ev.tid : (uint32_t)rnd();
		ev.type = ts_->type;
		ev.cpu = (uint16_t)(c * 3);  /* sparse cpu ids */
		ev.ctx = (uint8_t)(rnd() % 4);
		for (unsigned f = 0; f < ts_->nfields; f++)
			ev.f[f] = rnd_field(ts_->smask & (1u << f));
		e->ev = ev;
		e->chunk = chunk;
		e->stack = -1;
		e->str = e->str2 = NULL;
		if ((ts_->refs & R_STK) && rnd() % 4) {
			ev.stack = kid[ki];
			e->stack = ki;
		}
		if ((ts_->refs & R_STR) && rnd() % 4) {
			ev.str = sid[si];
			e->str = strs[si];
		}
		if ((ts_->refs & R_STR2) && rnd() % 4) {
			ev.str2 = sid[si2];
			e->str2 = strs[si2];
		}
		CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	}
}

static int cmp_exp(const void *a, const void *b)
{
	const struct exp *x = a, *y = b;

	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	if (x->ev.ts != y->ev.ts)
		return x->ev.ts < y->ev.ts ? -1 : 1;
	if (x->ev.cpu != y->ev.cpu)
		return x->ev.cpu < y->ev.cpu ? -1 : 1;
	return x < y ? -1 : x > y;  /* stable: stream order */
}

static void sort_exp(struct exp *e, size_t n)
{
	/* insertion sort keyed on the original index keeps it stable */
	struct exp *tmp = malloc(n * sizeof(*tmp));
	size_t *idx = malloc(n * sizeof(*idx));

	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	for (size_t i = 1; i < n; i++) {
		size_t k = idx[i], j = i;

		while (j > 0 && cmp_exp(&e[idx[j - 1]], &e[k]) > 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = k;
	}
	for (size_t i = 0; i < n; i++)
		tmp[i] = e[idx[i]];
	memcpy(e, tmp, n * sizeof(*e));
	free(tmp);
	free(idx);
}

static bool same_event(const struct argus_trace *t, const struct argus_event *ev,
		       const struct exp *x)
{
	const uint64_t *ips;
	uint32_t nr;
	const char *s;

	if (ev->ts != x->ev.ts || ev->tid != x->ev.tid || ev->pid != x->ev.pid ||
	    ev->type != x->ev.type || ev->cpu != x->ev.cpu || ev->ctx != x->ev.ctx ||
	    memcmp(ev->f, x->ev.f, sizeof(ev->f)))
		return false;
	if (!x->str != !ev->str || !x->str2 != !ev->str2 ||
	    (x->stack < 0) != !ev->stack)
		return false;
	if (x->str && (!(s = argus_trace__string(t, ev->str)) || strcmp(s, x->str)))
		return false;
	if (x->str2 && (!(s = argus_trace__string(t, ev->str2)) || strcmp(s, x->str2)))
		return false;
	if (x->stack >= 0) {
		if (argus_trace__stack(t, ev->stack, &ips, &nr) ||
		    nr != stack_nr[x->stack] ||
		    (nr && memcmp(ips, stacks[x->stack], nr * 8)))
			return false;
	}
	return true;
}

/* Read every event of t and compare with exp[0..n). */
static void check_events(struct argus_trace *t, const struct exp *exp, size_t n)
{
	struct argus_error err = { 0 };
	struct argus_event ev;
	size_t i = 0, bad = 0;
	int rc;

	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		if (i < n && !same_event(t, &ev, &exp[i]) && !bad++)
			fprintf(stderr, "  event %zu differs (type %u ts %llu)\n", i,
				ev.type, (unsigned long long)ev.ts);
		i++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(i, n);
	CHECK_EQ(bad, 0);
}

static void *finish(struct argus_chunk_builder *b, uint64_t seq, int level,
		    size_t *len)
{
	void *buf = NULL;

	CHECK_EQ(argus_chunk_builder__finish(b, seq, level, &buf, len), 0);
	return buf;
}

static struct argus_ring *create(const char *path, uint64_t data_size)
{
	struct argus_ring_opts o = { .sz = sizeof(o), .data_size = data_size,
				     .ncpus = 12 };
	struct argus_error err = { 0 };
	struct argus_ring *r = argus_ring__create(path, &o, &err);

	if (!r)
		fprintf(stderr, "  create: %s\n", err.msg);
	CHECK(r != NULL);
	return r;
}

/* ---------------------------------------------------------------------
 * Round trips.
 */
static void round_trip(int level, enum argus_codec codec)
{
	const char *path = tpath(!level ? "rt-raw.argus" :
				 codec == ARGUS_CODEC_ZSTD ? "rt-zstd.argus" : "rt-zlib.argus");
	uint16_t want_flag = !level ? 0 : codec == ARGUS_CODEC_ZSTD ? ARGUS_CHUNK_ZSTD :
			     ARGUS_CHUNK_ZLIB;
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	struct exp *exp = calloc(4000, sizeof(*exp));
	uint64_t lost[12] = { 0 }, events[12] = { 0 };
	struct argus_error err = { 0 };
	size_t nexp = 0, len;

	CHECK_EQ(argus_chunk_builder__set_codec(b, codec), 0);
	for (uint32_t k = 0; k < 3; k++) {
		uint32_t comm, path_id;
		struct argus_task task;
		struct argus_map m = { 0 };

		fill_chunk(b, k, 1000000000ull * (k + 1), 4, 1000, exp, &nexp);
		/* tid 77's comm changes in every chunk: the latest wins */
		comm = argus_chunk_builder__string(b, k == 2 ? "late-comm" : "early",
						   k == 2 ? 9 : 5);
		task = (struct argus_task){ 77, 70, 1, comm };
		CHECK_EQ(argus_chunk_builder__task(b, &task), 0);
		path_id = argus_chunk_builder__string(b, "/usr/lib/libc.so.6", 18);
		m.pid = 70;
		m.path = path_id;
		m.ts = 1000000000ull * (k + 1);
		m.start = 0x7f0000000000 + k * 0x1000;
		m.end = m.start + 0x200000;
		m.pgoff = 0x28000;
		m.build_id_len = 20;
		memset(m.build_id, 0xa0 + k, 20);
		CHECK_EQ(argus_chunk_builder__map(b, &m), 0);
		for (uint16_t c = 0; c < 12; c += 3) {
			CHECK_EQ(argus_chunk_builder__lost(b, c, c + k), 0);
			lost[c] += c + k;
		}
		CHECK_EQ(argus_chunk_builder__nevents(b), 1000);
		CHECK(argus_chunk_builder__raw_bytes(b) > 1000);
		void *chunk = finish(b, k + 1, level, &len);
		struct argus_chunk_header h;

		memcpy(&h, chunk, sizeof(h));
		CHECK_EQ(h.flags, want_flag);   /* the codec asked for */
		CHECK_EQ(argus_ring__append(r, chunk, len), 0);
		free(chunk);
		CHECK_EQ(argus_chunk_builder__nevents(b), 0);
	}
	CHECK_EQ(argus_ring__sync(r), 0);
	argus_ring__close(r);
	for (size_t i = 0; i < nexp; i++)
		events[exp[i].ev.cpu]++;
	sort_exp(exp, nexp);

	struct argus_trace *t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "  %s\n", err.msg);
		goto out;
	}
	const struct argus_trace_stats *st = argus_trace__stats(t);
	CHECK_EQ(st->chunks, 3);
	CHECK_EQ(st->chunks_overwritten + st->chunks_incomplete, 0);
	CHECK_EQ(st->ncpus, 12);
	CHECK_EQ(st->min_ts, exp[0].ev.ts);
	CHECK_EQ(st->max_ts, exp[nexp - 1].ev.ts);
	for (int c = 0; c < 12; c++) {
		CHECK_EQ(st->cpu[c].lost, lost[c]);
		CHECK_EQ(st->cpu[c].events, events[c]);
	}
	check_events(t, exp, nexp);
	CHECK_EQ(st->events, nexp);
	CHECK_EQ(st->out_of_order, 0);

	const struct argus_task *k = argus_trace__task(t, 77);
	CHECK(k && k->pid == 70 && k->ppid == 1);
	CHECK(k && !strcmp(argus_trace__string(t, k->comm), "late-comm"));
	CHECK(argus_trace__task(t, 78) == NULL);
	/* three captures of pid 70's libc, each 4 KiB further */
	const struct argus_map *m = argus_trace__map(t, 70, 0x7f0000001800, 2500000000ull);
	CHECK(m && m->start == 0x7f0000001000 && m->build_id[0] == 0xa1);
	CHECK(m && !strcmp(argus_trace__string(t, m->path), "/usr/lib/libc.so.6"));
	m = argus_trace__map(t, 70, 0x7f0000002800, 100);  /* before all: earliest after */
	CHECK(m && m->ts == 1000000000ull);
	m = argus_trace__map(t, 70, 0x7f0000000800, 9000000000ull);
	CHECK(m && m->start == 0x7f0000000000);
	CHECK(argus_trace__map(t, 71, 0x7f0000001800, 0) == NULL);
	CHECK(argus_trace__map(t, 70, 0x1000, 0) == NULL);
	CHECK(argus_trace__string(t, 0) == NULL);
	CHECK(argus_trace__string(t, 100000) == NULL);
	argus_trace__close(t);
out:
	argus_chunk_builder__free(b);
	free(exp);
}

static void test_round_trip_every_type_compressed(void)
{
	round_trip(6, ARGUS_CODEC_ZLIB);
}

static void test_round_trip_every_type_zstd(void)
{
	round_trip(1, ARGUS_CODEC_ZSTD);
	round_trip(-1, ARGUS_CODEC_ZSTD);
}

static void test_round_trip_every_type_uncompressed(void)
{
	round_trip(0, ARGUS_CODEC_ZSTD);
}

/* One chunk of n events from fill_chunk with the given codec and level,
 * as a file in memory (header + chunk): *len bytes, malloc'd; its
 * chunk header in *h. */
static uint8_t *one_chunk_file(const char *name, enum argus_codec codec, int level,
			       unsigned n, struct argus_chunk_header *h, size_t *len)
{
	const char *path = tpath(name);
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	struct exp *exp = calloc(n, sizeof(*exp));
	size_t nexp = 0, clen;
	uint8_t *m = NULL;
	void *chunk;
	FILE *f;
	long sz;

	CHECK_EQ(argus_chunk_builder__set_codec(b, codec), 0);
	fill_chunk(b, 0, 1000, 3, n, exp, &nexp);
	chunk = finish(b, 1, level, &clen);
	memcpy(h, chunk, sizeof(*h));
	argus_ring__append(r, chunk, clen);
	argus_ring__close(r);
	free(chunk);
	free(exp);
	argus_chunk_builder__free(b);
	f = fopen(path, "rb");
	if (f && !fseek(f, 0, SEEK_END) && (sz = ftell(f)) > 0) {
		rewind(f);
		m = malloc((size_t)sz);
		if (m && fread(m, 1, (size_t)sz, f) != (size_t)sz) {
			free(m);
			m = NULL;
		}
		*len = (size_t)sz;
	}
	if (f)
		fclose(f);
	CHECK(m != NULL);
	return m;
}

/* Put h back over the file's chunk header with its crcs made right. */
static void reseal(uint8_t *m, struct argus_chunk_header *h)
{
	h->payload_crc = (uint32_t)crc32(0, m + ARGUS_FILE_HEADER_SIZE + 64, h->payload_len);
	h->header_crc = (uint32_t)crc32(0, (const Bytef *)h, 60);
	memcpy(m + ARGUS_FILE_HEADER_SIZE, h, 64);
}

/* Read m to its end: the first error's message in why ("" if none). */
static int read_mem(const uint8_t *m, size_t len, char *why, size_t whylen)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open_mem(m, len, &err);
	struct argus_event ev;
	int rc = 0, n = 0;

	why[0] = 0;
	if (!t) {
		snprintf(why, whylen, "%s", err.msg);
		return -1;
	}
	while ((rc = argus_trace__next(t, &ev, &err)) > 0)
		n++;
	if (rc < 0)
		snprintf(why, whylen, "%s", err.msg);
	argus_trace__close(t);
	return rc < 0 ? rc : n;
}

/* A zstd frame damaged under good crcs (only a forger or the fuzzer
 * makes one: payload_crc is checked first) is refused with one error:
 * cut short, by the streaming read at open or the inflate; changed
 * inside, by the inflate or by the decoder of what it inflated to. */
static void test_zstd_frame_damaged_under_good_crcs_is_refused(void)
{
	struct argus_chunk_header h;
	char why[512];
	size_t len = 0;
	uint8_t *m = one_chunk_file("zstd-bad.argus", ARGUS_CODEC_ZSTD, 1, 3000, &h, &len);

	if (!m)
		return;
	CHECK_EQ(h.flags, ARGUS_CHUNK_ZSTD);
	CHECK_EQ(read_mem(m, len, why, sizeof(why)), 3000);
	h.payload_len -= 16;                    /* the frame cut short */
	reseal(m, &h);
	CHECK(read_mem(m, len, why, sizeof(why)) < 0);
	/* at open (the CPUS section is read streaming) or at the inflate */
	CHECK(strstr(why, "does not inflate") || strstr(why, "bad section header"));
	fprintf(stderr, "  cut short: %s\n", why);
	h.payload_len += 16;
	for (uint32_t i = 0; i < 16; i++)       /* a run of bytes, 3/4 in */
		m[ARGUS_FILE_HEADER_SIZE + 64 + h.payload_len * 3 / 4 + i] ^= 0x5a;
	reseal(m, &h);
	CHECK(read_mem(m, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "corrupt chunk seq 1") != NULL);
	fprintf(stderr, "  changed inside: %s\n", why);
	free(m);
}

/* A zstd chunk's first block holds only its first section (CPUS), so a
 * reader's open decodes ~1 us of it per chunk instead of the whole block
 * (~100-130 us): 512 bytes of the frame already give the section's start. */
static void test_zstd_first_block_is_the_cpus_section(void)
{
	struct argus_chunk_header h;
	size_t len = 0;
	uint8_t *m = one_chunk_file("zstd-head.argus", ARGUS_CODEC_ZSTD, 1, 3000, &h, &len);
	ZSTD_DCtx *d = ZSTD_createDCtx();
	uint8_t out[64];
	const uint8_t *p = out;
	uint64_t tag = 0;

	if (!m || !d)
		goto out;
	CHECK(h.payload_len > 4096);    /* else the prefix below proves nothing */
	ZSTD_inBuffer in = { m + ARGUS_FILE_HEADER_SIZE + 64, 512, 0 };
	ZSTD_outBuffer o = { out, sizeof(out), 0 };

	CHECK(!ZSTD_isError(ZSTD_decompressStream(d, &o, &in)));
	CHECK(o.pos > 0);
	CHECK(o.pos > 0 && !varint_get(&p, out + o.pos, &tag) && tag == ARGUS_SEC_CPUS);
out:
	ZSTD_freeDCtx(d);
	free(m);
}

/* raw_len is checked against the frame's own content size before
 * anything is inflated; a chunk claiming both codecs is refused. */
static void test_zstd_chunk_header_must_agree_with_its_frame(void)
{
	struct argus_chunk_header h, orig;
	char why[512];
	size_t len = 0;
	uint8_t *m = one_chunk_file("zstd-len.argus", ARGUS_CODEC_ZSTD, 1, 3000, &h, &len);

	if (!m)
		return;
	orig = h;
	h.raw_len -= 1;
	reseal(m, &h);
	CHECK(read_mem(m, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "does not inflate") || strstr(why, "bad section"));
	fprintf(stderr, "  raw_len one short: %s\n", why);

	h = orig;
	h.flags = ARGUS_CHUNK_ZSTD | ARGUS_CHUNK_ZLIB;
	reseal(m, &h);
	CHECK(read_mem(m, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "unknown chunk flags 0x3") != NULL);

	h = orig;
	h.flags = ARGUS_CHUNK_ZLIB;     /* a zstd frame read as zlib */
	reseal(m, &h);
	CHECK(read_mem(m, len, why, sizeof(why)) < 0);
	free(m);
}

/* A payload zstd shrinks past deflate's 1032:1 is stored as zlib: the
 * reader's bound on what a chunk may claim holds for every codec. */
static void test_zstd_past_deflates_ratio_is_stored_as_zlib(void)
{
	const char *path = tpath("zstd-ratio.argus");
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	struct argus_chunk_header h;
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_event ev;
	size_t len;
	void *chunk;
	int n = 0, rc;

	CHECK_EQ(argus_chunk_builder__set_codec(b, ARGUS_CODEC_ZSTD), 0);
	for (int i = 0; i < 400000; i++) {     /* the same event: ~4 MB of one pattern */
		ev = (struct argus_event){ .ts = 1000, .tid = 5, .pid = 5,
					   .type = AE_SYS_EXIT, .cpu = 0 };
		CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	}
	chunk = finish(b, 1, 1, &len);
	memcpy(&h, chunk, sizeof(h));
	fprintf(stderr, "  %u bytes raw, %u stored, flags 0x%x\n", h.raw_len, h.payload_len,
		h.flags);
	CHECK_EQ(h.flags, ARGUS_CHUNK_ZLIB);
	CHECK((uint64_t)h.raw_len <= (uint64_t)h.payload_len * 1032 + 64);
	argus_ring__append(r, chunk, len);
	argus_ring__close(r);
	free(chunk);
	argus_chunk_builder__free(b);
	t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	while ((rc = argus_trace__next(t, &ev, &err)) > 0)
		n += ev.tid == 5;
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, 400000);
	argus_trace__close(t);
}

/* m's file and chunk headers made version 1, crcs right again. */
static void make_version_1(uint8_t *m, struct argus_chunk_header *h)
{
	struct argus_file_header fh;

	memcpy(&fh, m, sizeof(fh));
	fh.version = 1;
	fh.header_crc = (uint32_t)crc32(0, (const Bytef *)&fh, 52);
	memcpy(m, &fh, sizeof(fh));
	h->version = 1;
	reseal(m, h);
}

/* Files of version 1 (zlib or raw chunks, before zstd) read as before; a
 * version 1 chunk cannot be zstd (that needs version 2). */
static void test_version_1_files_still_read(void)
{
	struct argus_chunk_header h;
	char why[512];
	size_t len = 0;
	uint8_t *m = one_chunk_file("v1-zlib.argus", ARGUS_CODEC_ZLIB, 1, 3000, &h, &len);

	if (m) {
		CHECK_EQ(h.version, ARGUS_FORMAT_VERSION);
		CHECK_EQ(h.flags, ARGUS_CHUNK_ZLIB);
		make_version_1(m, &h);
		CHECK_EQ(read_mem(m, len, why, sizeof(why)), 3000);
		if (why[0])
			fprintf(stderr, "  v1 zlib: %s\n", why);
		free(m);
	}
	m = one_chunk_file("v1-zstd.argus", ARGUS_CODEC_ZSTD, 1, 3000, &h, &len);
	if (m) {
		make_version_1(m, &h);
		CHECK(read_mem(m, len, why, sizeof(why)) < 0);
		CHECK(strstr(why, "unknown chunk flags 0x2") != NULL);
		free(m);
	}
}

/* The codec is checked: an unknown one is refused, nothing changes. */
static void test_set_codec_rejects_an_unknown_codec(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();

	CHECK_EQ(argus_chunk_builder__set_codec(b, (enum argus_codec)7), -EINVAL);
	CHECK_EQ(argus_chunk_builder__set_codec(NULL, ARGUS_CODEC_ZSTD), -EINVAL);
	CHECK_EQ(argus_chunk_builder__set_codec(b, ARGUS_CODEC_ZSTD), 0);
	argus_chunk_builder__free(b);
}

static void test_open_mem_reads_the_same_bytes(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(tpath("mem.argus"), 0);
	struct exp exp[300];
	struct argus_error err = { 0 };
	size_t nexp = 0, len;
	void *chunk, *buf;
	FILE *f;
	long sz;

	fill_chunk(b, 0, 5000, 2, 300, exp, &nexp);
	chunk = finish(b, 1, 1, &len);
	argus_ring__append(r, chunk, len);
	free(chunk);
	argus_ring__close(r);
	sort_exp(exp, nexp);
	f = fopen(tpath("mem.argus"), "rb");
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	buf = malloc((size_t)sz);
	CHECK_EQ(fread(buf, 1, (size_t)sz, f), sz);
	fclose(f);
	struct argus_trace *t = argus_trace__open_mem(buf, (size_t)sz, &err);
	CHECK(t != NULL);
	if (t)
		check_events(t, exp, nexp);
	argus_trace__close(t);
	free(buf);
	argus_chunk_builder__free(b);
}

static void test_rewind_returns_the_same_events_and_ids(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(tpath("rewind.argus"), 0);
	struct exp exp[600];
	struct argus_error err = { 0 };
	struct argus_event ev;
	uint32_t ids[600];
	size_t nexp = 0, len, i = 0;
	void *chunk;

	for (uint32_t k = 0; k < 2; k++) {
		fill_chunk(b, k, 1000000 * (k + 1), 3, 300, exp, &nexp);
		chunk = finish(b, k + 1, 6, &len);
		argus_ring__append(r, chunk, len);
		free(chunk);
	}
	argus_ring__close(r);
	sort_exp(exp, nexp);
	struct argus_trace *t = argus_trace__open(tpath("rewind.argus"), &err);
	CHECK(t != NULL);
	if (!t)
		goto out;
	while (argus_trace__next(t, &ev, &err) > 0 && i < 600)
		ids[i++] = ev.str;
	CHECK_EQ(argus_trace__rewind(t), 0);
	CHECK_EQ(argus_trace__stats(t)->events, 0);
	i = 0;
	while (argus_trace__next(t, &ev, &err) > 0 && i < 600)
		CHECK_EQ(ev.str, ids[i++]);
	CHECK_EQ(i, nexp);
	argus_trace__rewind(t);
	check_events(t, exp, nexp);
	argus_trace__close(t);
out:
	argus_chunk_builder__free(b);
}

static void test_out_of_order_across_chunks_is_counted_not_dropped(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(tpath("ooo.argus"), 0);
	struct argus_event ev = { .type = AE_LOST, .tid = 1, .pid = 1 };
	struct argus_error err = { 0 };
	uint64_t seen[4], n = 0;
	size_t len;
	void *chunk;

	ev.ts = 100;
	argus_chunk_builder__event(b, &ev);
	ev.ts = 300;
	argus_chunk_builder__event(b, &ev);
	chunk = finish(b, 1, 6, &len);
	argus_ring__append(r, chunk, len);
	free(chunk);
	ev.ts = 200;  /* held back too long: older than chunk 1's last */
	argus_chunk_builder__event(b, &ev);
	ev.ts = 400;
	argus_chunk_builder__event(b, &ev);
	chunk = finish(b, 2, 6, &len);
	argus_ring__append(r, chunk, len);
	free(chunk);
	argus_ring__close(r);

	struct argus_trace *t = argus_trace__open(tpath("ooo.argus"), &err);
	CHECK(t != NULL);
	while (t && n < 4 && argus_trace__next(t, &ev, &err) > 0)
		seen[n++] = ev.ts;
	CHECK_EQ(n, 4);
	CHECK(seen[0] == 100 && seen[1] == 300 && seen[2] == 200 && seen[3] == 400);
	CHECK_EQ(t ? argus_trace__stats(t)->out_of_order : 99, 1);
	argus_trace__close(t);
	argus_chunk_builder__free(b);
}

/* next_batch hands out the same events as next, in the same order and
 * with the same ids and stats, whole chunks at a time and in place; the
 * two can be mixed, and rewind starts both over. */
static void test_next_batch_returns_what_next_returns(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(tpath("batch.argus"), 0);
	struct exp exp[900];
	struct argus_error err = { 0 };
	struct argus_event ev, all[900];
	const struct argus_event *evs;
	size_t nexp = 0, len, n = 0, m = 0;
	uint64_t ooo;
	void *chunk;
	int rc, batches = 0;

	for (uint32_t k = 0; k < 3; k++) {
		/* chunk 2 starts before chunk 1 ends: out of order once */
		fill_chunk(b, k, 1000000 * (k + 1) - (k == 2 ? 900000 : 0), 3, 300,
			   exp, &nexp);
		chunk = finish(b, k + 1, 6, &len);
		argus_ring__append(r, chunk, len);
		free(chunk);
	}
	argus_ring__close(r);
	struct argus_trace *t = argus_trace__open(tpath("batch.argus"), &err);
	CHECK(t != NULL);
	if (!t)
		goto out;
	while (n < 900 && argus_trace__next(t, &all[n], &err) > 0)
		n++;
	CHECK_EQ(n, nexp);
	ooo = argus_trace__stats(t)->out_of_order;
	CHECK(ooo > 0);
	argus_trace__rewind(t);
	while ((rc = argus_trace__next_batch(t, &evs, &err)) > 0) {
		batches++;
		for (int i = 0; i < rc && m < n; i++, m++)
			CHECK(!memcmp(&evs[i], &all[m], sizeof(ev)));
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(m, n);
	CHECK_EQ(batches, 3);
	CHECK_EQ(argus_trace__stats(t)->events, n);
	CHECK_EQ(argus_trace__stats(t)->out_of_order, ooo);
	/* mixed: one event by copy, then the rest of its chunk in place */
	argus_trace__rewind(t);
	CHECK_EQ(argus_trace__next(t, &ev, &err), 1);
	CHECK(!memcmp(&ev, &all[0], sizeof(ev)));
	rc = argus_trace__next_batch(t, &evs, &err);
	CHECK(rc > 0);
	if (rc > 0)
		CHECK(!memcmp(&evs[0], &all[1], sizeof(ev)));
	CHECK_EQ(argus_trace__next_batch(NULL, &evs, &err), -EINVAL);
	CHECK_EQ(argus_trace__next_batch(t, NULL, &err), -EINVAL);
	argus_trace__close(t);
out:
	argus_chunk_builder__free(b);
}

static void test_builder_rejects_what_it_cannot_store(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_event ev = { .type = AE_WAKING, .ts = 10, .cpu = 1 };
	void *out;
	size_t len;

	CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	ev.ts = 9;  /* backwards on cpu 1 */
	CHECK_EQ(argus_chunk_builder__event(b, &ev), -EINVAL);
	ev.cpu = 2;  /* fine on another cpu */
	CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	ev.ts = 20;
	ev.f[5] = 1;  /* AE_WAKING has 5 fields */
	CHECK_EQ(argus_chunk_builder__event(b, &ev), -EINVAL);
	ev.f[5] = 0;
	ev.str = 1;  /* no string in AE_WAKING */
	CHECK_EQ(argus_chunk_builder__event(b, &ev), -EINVAL);
	ev.type = AE_MARK;
	CHECK_EQ(argus_chunk_builder__event(b, &ev), -EINVAL);  /* id 1 not interned */
	CHECK_EQ(argus_chunk_builder__string(b, "x", 1), 1);
	CHECK_EQ(argus_chunk_builder__string(b, "x", 1), 1);
	CHECK_EQ(argus_chunk_builder__string(b, "y", 1), 2);
	CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	ev.type = AE_NONE;
	CHECK_EQ(argus_chunk_builder__event(b, &ev), -EINVAL);
	struct argus_task task = { 1, 1, 0, 3 };
	CHECK_EQ(argus_chunk_builder__task(b, &task), -EINVAL);
	struct argus_map m = { .path = 1, .start = 10, .end = 5 };
	CHECK_EQ(argus_chunk_builder__map(b, &m), -EINVAL);
	CHECK_EQ(argus_chunk_builder__nevents(b), 3);
	CHECK_EQ(argus_chunk_builder__finish(b, 1, 10, &out, &len), -EINVAL);
	argus_chunk_builder__reset(b);
	CHECK_EQ(argus_chunk_builder__nevents(b), 0);
	CHECK_EQ(argus_chunk_builder__string(b, "y", 1), 1);
	CHECK(argus_event_type_str(AE_SWITCH) && !strcmp(argus_event_type_str(AE_SWITCH), "switch"));
	CHECK(argus_event_type_str(27) == NULL);
	argus_chunk_builder__free(b);
	argus_chunk_builder__free(NULL);
}

static void test_varint_edges(void)
{
	uint64_t vals[] = { 0, 1, 127, 128, 300, UINT32_MAX, (uint64_t)1 << 63,
			    UINT64_MAX };
	uint8_t buf[16];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		const uint8_t *p = buf;
		uint64_t v = ~vals[i];
		size_t n = varint_put(buf, vals[i]);

		CHECK_EQ(n, varint_len(vals[i]));
		CHECK_EQ(varint_get(&p, buf + n, &v), 0);
		CHECK(v == vals[i] && p == buf + n);
		p = buf;
		CHECK_EQ(varint_get(&p, buf + n - 1, &v), -EBADMSG);  /* cut short */
		CHECK(p == buf);
		CHECK(zigzag_dec(zigzag_enc((int64_t)vals[i])) == (int64_t)vals[i]);
	}
	memset(buf, 0xff, sizeof(buf));
	const uint8_t *p = buf;
	uint64_t v;
	CHECK_EQ(varint_get(&p, buf + 16, &v), -EBADMSG);  /* > 64 bits */
	CHECK_EQ(zigzag_enc(-1), 1);
	CHECK_EQ(zigzag_enc(1), 2);
}

/* The reader's hot-loop decoder accepts and rejects exactly what
 * varint_get() does: every length, canonical or not, cut anywhere, near
 * the end of the buffer or far from it, and the 10th-byte overflow. */
static void test_varint_next_agrees_with_varint_get(void)
{
	uint8_t buf[32];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned bad = 0;

	for (unsigned iter = 0; iter < 200000; iter++) {
		unsigned len = 1 + iter % 11, room;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		for (unsigned k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)(seed >> (8 * (k % 8))) ^ (uint8_t)(k * 37);
		/* continuation bits on the first len - 1 bytes, off on the last;
		 * sometimes a random 10th byte (overflow) or no end at all */
		for (unsigned k = 0; k < len; k++)
			buf[k] = k + 1 < len ? buf[k] | 0x80 : buf[k] & 0x7f;
		if (iter % 7 == 0)
			buf[len - 1] |= 0x80;
		room = (unsigned)(seed >> 40) % 16;  /* bytes before the end */
		{
			const uint8_t *p = buf, *end = buf + room;
			uint64_t v = 0;
			int rc = varint_get(&p, end, &v);
			struct varint_res r = varint_next(buf, end);

			CHECK_EQ(rc == 0, r.p != NULL);
			if (!rc && r.p) {
				CHECK(r.p == p);
				CHECK(r.v == v);
			}
			bad += rc != 0;
		}
	}
	CHECK(bad > 0);
}

/* ---------------------------------------------------------------------
 * The ring.
 */

/* Where argus_ring__append puts each chunk, and which survive. */
struct sim {
	uint64_t end, off;
	uint64_t at[256], len[256];
	int n;
};

static void sim_place(struct sim *s, uint64_t len)
{
	if (s->off + len > s->end)
		s->off = ARGUS_FILE_HEADER_SIZE;
	s->at[s->n] = s->off;
	s->len[s->n++] = len;
	s->off = align_up(s->off + len);
}

static bool sim_survives(const struct sim *s, int i)
{
	uint64_t a0 = s->at[i] / ARGUS_BLOCK_SIZE,
		 a1 = align_up(s->at[i] + s->len[i]) / ARGUS_BLOCK_SIZE;

	for (int j = i + 1; j < s->n; j++) {
		uint64_t b0 = s->at[j] / ARGUS_BLOCK_SIZE,
			 b1 = align_up(s->at[j] + s->len[j]) / ARGUS_BLOCK_SIZE;

		if (a0 < b1 && b0 < a1)
			return false;
	}
	return true;
}

/* A chunk of AE_WAKING events tagged (seq, i), about `events` of them. */
static void *tagged_chunk(struct argus_chunk_builder *b, uint64_t seq,
			  unsigned events, size_t *len)
{
	for (unsigned i = 0; i < events; i++) {
		struct argus_event ev = { .type = AE_WAKING, .tid = 5, .pid = 5 };

		ev.ts = seq * 1000000 + i;
		ev.cpu = (uint16_t)(i % 3);
		ev.f[0] = seq;
		ev.f[1] = i;
		ev.f[4] = rnd();  /* incompressible-ish, to control the size */
		CHECK_EQ(argus_chunk_builder__event(b, &ev), 0);
	}
	return finish(b, seq, 0, len);
}

/* The reader returns exactly the chunks sim says survive, whole, in seq
 * order; everything else is counted as overwritten. */
static void check_ring(const char *path, const struct sim *s, const unsigned *nev,
		       int skip_last, uint64_t incomplete)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(path, &err);
	struct argus_event ev;
	uint64_t want_seq = 0, want_i = 0, survivors = 0, n = 0;
	int i = 0, rc;

	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	for (int k = 0; k < s->n - skip_last; k++)
		survivors += sim_survives(s, k);
	CHECK_EQ(argus_trace__stats(t)->chunks, survivors);
	CHECK_EQ(argus_trace__stats(t)->chunks_incomplete, incomplete);
	CHECK_EQ(argus_trace__stats(t)->chunks_overwritten,
		 s->n - skip_last - survivors);
	for (i = 0; i < s->n - skip_last && !sim_survives(s, i); i++)
		;
	want_seq = (uint64_t)i + 1;
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		if (ev.f[0] != want_seq || ev.f[1] != want_i) {
			CHECK_EQ(ev.f[0], want_seq);
			CHECK_EQ(ev.f[1], want_i);
			break;
		}
		n++;
		if (++want_i == nev[want_seq - 1]) {
			want_i = 0;
			do
				i++;
			while (i < s->n - skip_last && !sim_survives(s, i));
			want_seq = (uint64_t)i + 1;
		}
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(want_seq, (uint64_t)(s->n - skip_last) + 1);
	argus_trace__close(t);
}

/* Write `count` chunks of varying size into a 64 KiB ring. */
static void write_ring(const char *path, struct sim *s, unsigned *nev, int count)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 16 * ARGUS_BLOCK_SIZE);

	memset(s, 0, sizeof(*s));
	s->end = ARGUS_FILE_HEADER_SIZE + 16 * ARGUS_BLOCK_SIZE;
	s->off = ARGUS_FILE_HEADER_SIZE;
	for (int k = 0; k < count; k++) {
		size_t len;
		void *chunk;

		nev[k] = 150 + (unsigned)(rnd() % 700);
		chunk = tagged_chunk(b, (uint64_t)k + 1, nev[k], &len);
		sim_place(s, len);
		CHECK_EQ(argus_ring__append(r, chunk, len), 0);
		free(chunk);
	}
	if (count > 20) {
		CHECK(argus_ring__wraps(r) > 0);
		CHECK(argus_ring__fill(r) <= 16 * ARGUS_BLOCK_SIZE);
		CHECK(argus_ring__fill(r) > 8 * ARGUS_BLOCK_SIZE);
	}
	argus_ring__close(r);
	argus_chunk_builder__free(b);
}

static void test_ring_wrap_keeps_the_newest_chunks_in_order(void)
{
	struct sim s;
	unsigned nev[256];

	write_ring(tpath("wrap.argus"), &s, nev, 60);
	check_ring(tpath("wrap.argus"), &s, nev, 0, 0);
	struct stat st;
	CHECK_EQ(stat(tpath("wrap.argus"), &st), 0);
	CHECK_EQ(st.st_size, ARGUS_FILE_HEADER_SIZE + 16 * ARGUS_BLOCK_SIZE);
	CHECK_EQ(st.st_mode & 0777, 0600);
}

static void test_ring_rejects_a_chunk_bigger_than_the_ring(void)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(tpath("small.argus"), 2 * ARGUS_BLOCK_SIZE);
	size_t len;
	void *chunk = tagged_chunk(b, 1, 1000, &len);

	CHECK(len > 2 * ARGUS_BLOCK_SIZE);
	CHECK_EQ(argus_ring__append(r, chunk, len), -E2BIG);
	CHECK_EQ(argus_ring__append(r, chunk, 10), -EINVAL);
	free(chunk);
	argus_ring__close(r);
	argus_chunk_builder__free(b);
}

/* kill -9 between writing a payload and its header. */
static void crash_without_header(int count)
{
	const char *path = tpath("crash1.argus");
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct sim s;
	unsigned nev[256];
	size_t len;
	void *chunk;
	int fd;

	write_ring(path, &s, nev, count);
	nev[count] = 600;
	chunk = tagged_chunk(b, (uint64_t)count + 1, nev[count], &len);
	sim_place(&s, len);
	fd = open(path, O_WRONLY);
	static const uint8_t zero[64];
	CHECK_EQ(pwrite(fd, zero, 64, (off_t)s.at[count]), 64);
	CHECK_EQ(pwrite(fd, (uint8_t *)chunk + 64, len - 64, (off_t)s.at[count] + 64),
		 (ssize_t)(len - 64));
	close(fd);
	free(chunk);
	/* the in-flight chunk is simply absent; what it covered is gone */
	check_ring(path, &s, nev, 1, 0);
	argus_chunk_builder__free(b);
}

static void test_crash_before_the_header_loses_only_that_chunk(void)
{
	crash_without_header(2);   /* no wrap yet */
	crash_without_header(40);  /* wrapped */
}

/* Power loss: the header reached the disk, half the payload did not. */
static void test_crash_with_a_torn_payload_counts_one_incomplete_chunk(void)
{
	const char *path = tpath("crash2.argus");
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct sim s;
	unsigned nev[256];
	size_t len;
	void *chunk;
	int fd;

	write_ring(path, &s, nev, 33);
	nev[33] = 700;
	chunk = tagged_chunk(b, 34, nev[33], &len);
	sim_place(&s, len);
	fd = open(path, O_WRONLY);
	CHECK_EQ(pwrite(fd, chunk, len / 2, (off_t)s.at[33]), (ssize_t)(len / 2));
	close(fd);
	free(chunk);
	check_ring(path, &s, nev, 1, 1);
	argus_chunk_builder__free(b);
}

static void test_ring_truncated_mid_chunk_loses_only_that_chunk(void)
{
	const char *path = tpath("trunc-ring.argus");
	struct sim s;
	unsigned nev[256];

	write_ring(path, &s, nev, 3);  /* no wrap: chunk 3 is last in the file */
	CHECK(s.at[2] > s.at[1]);
	CHECK_EQ(truncate(path, (off_t)(s.at[2] + s.len[2] / 2)), 0);
	check_ring(path, &s, nev, 1, 1);
}

static void flip(const char *path, uint64_t off);

/* Power loss can tear a chunk that is not the newest (the disk wrote the
 * writes out of order): that chunk is skipped and counted, with where and
 * why, and every other chunk reads back whole; argus save keeps them all. */
static void test_corrupt_middle_chunk_of_a_ring_is_skipped_and_counted(void)
{
	const char *path = tpath("ring-corrupt.argus");
	const char *dst = tpath("ring-corrupt-saved.argus");
	struct argus_trace_stats src = { 0 };
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_event ev;
	struct sim s;
	unsigned nev[256];
	uint64_t seen[4] = { 0 };
	char want[128];
	int rc;

	write_ring(path, &s, nev, 3);  /* no wrap */
	CHECK(s.at[2] > s.at[1]);
	flip(path, s.at[1] + 500);
	t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_EQ(argus_trace__stats(t)->chunks, 2);
	CHECK_EQ(argus_trace__stats(t)->chunks_corrupt, 1);
	CHECK_EQ(argus_trace__stats(t)->chunks_overwritten, 0);
	CHECK_EQ(argus_trace__stats(t)->chunks_incomplete, 0);
	CHECK_EQ(argus_trace__stats(t)->corrupt_offset, s.at[1]);
	snprintf(want, sizeof(want), "chunk seq 2: payload checksum mismatch");
	CHECK(!strcmp(argus_trace__stats(t)->corrupt_why, want));
	while ((rc = argus_trace__next(t, &ev, &err)) > 0)
		if (ev.f[0] >= 1 && ev.f[0] <= 3)
			seen[ev.f[0]]++;
	CHECK_EQ(rc, 0);
	CHECK_EQ(seen[1], nev[0]);
	CHECK_EQ(seen[2], 0);
	CHECK_EQ(seen[3], nev[2]);
	argus_trace__close(t);

	CHECK_EQ(argus_trace__save(path, dst, 0, &src, &err), 0);
	CHECK_EQ(src.chunks_corrupt, 1);
	CHECK_EQ(src.corrupt_offset, s.at[1]);
	t = argus_trace__open(dst, &err);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ(argus_trace__stats(t)->chunks, 2);
		CHECK_EQ(argus_trace__stats(t)->chunks_corrupt, 0);
		argus_trace__close(t);
	}
}

/* A chunk whose crc is good but whose payload does not decode (a writer's
 * bug, a crafted file): argus save leaves it out and counts it, so the
 * snapshot reads back whole instead of being refused at that chunk. */
static void test_save_skips_a_chunk_with_a_good_crc_that_does_not_decode(void)
{
	const char *path = tpath("ring-undecodable.argus");
	const char *dst = tpath("ring-undecodable-saved.argus");
	struct argus_trace_stats src = { 0 };
	struct argus_error err = { 0 };
	struct argus_chunk_header h;
	struct argus_trace *t;
	struct argus_event ev;
	struct sim s;
	unsigned nev[256];
	uint64_t seen[4] = { 0 };
	uint8_t *pl;
	int fd, rc;

	write_ring(path, &s, nev, 3);
	/* chunk 2 claims one event more than its streams hold, and is
	 * resealed: the damage passes every crc */
	fd = open(path, O_RDWR);
	CHECK_EQ(pread(fd, &h, sizeof(h), (off_t)s.at[1]), (ssize_t)sizeof(h));
	pl = malloc(h.payload_len);
	CHECK_EQ(pread(fd, pl, h.payload_len, (off_t)(s.at[1] + ARGUS_CHUNK_HEADER_SIZE)),
		 (ssize_t)h.payload_len);
	CHECK_EQ(h.payload_crc, (uint32_t)crc32(0, pl, h.payload_len));
	h.nevents++;
	h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, 60);
	CHECK_EQ(pwrite(fd, &h, sizeof(h), (off_t)s.at[1]), (ssize_t)sizeof(h));
	close(fd);
	free(pl);
	t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_EQ(argus_trace__stats(t)->chunks, 3);   /* every crc is good */
	argus_trace__close(t);

	CHECK_EQ(argus_trace__save(path, dst, 0, &src, &err), 0);
	CHECK_EQ(src.chunks_corrupt, 1);
	CHECK_EQ(src.corrupt_offset, s.at[1]);
	CHECK(!strncmp(src.corrupt_why, "chunk seq 2: ", 13));
	t = argus_trace__open(dst, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_EQ(argus_trace__stats(t)->chunks, 2);
	while ((rc = argus_trace__next(t, &ev, &err)) > 0)
		if (ev.f[0] >= 1 && ev.f[0] <= 3)
			seen[ev.f[0]]++;
	CHECK_EQ(rc, 0);
	CHECK_EQ(seen[1], nev[0]);
	CHECK_EQ(seen[2], 0);
	CHECK_EQ(seen[3], nev[2]);
	argus_trace__close(t);
}

/* In a snapshot (written once, then synced) the same damage is an error
 * that says where. */
static void test_corrupt_middle_chunk_of_a_snapshot_is_an_error(void)
{
	const char *path = tpath("ring-corrupt2.argus");
	const char *dst = tpath("snap-corrupt.argus");
	struct argus_error err = { 0 };
	struct argus_trace *t;
	struct argus_chunk_info ci;
	struct sim s;
	unsigned nev[256];
	char want[128];

	write_ring(path, &s, nev, 3);
	CHECK_EQ(argus_trace__save(path, dst, 0, NULL, &err), 0);
	t = argus_trace__open(dst, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_EQ(argus_trace__chunk(t, 1, &ci), 0);
	argus_trace__close(t);
	flip(dst, ci.offset + 500);
	CHECK(argus_trace__open(dst, &err) == NULL);
	snprintf(want, sizeof(want), "corrupt chunk seq 2 at offset 0x%llx: payload checksum mismatch",
		 (unsigned long long)ci.offset);
	CHECK(strstr(err.msg, want) != NULL);
	CHECK(strstr(err.msg, dst) == err.msg);
	CHECK_EQ(err.offset, ci.offset);
}

/* argus save / dump of the ring argusd is writing: a chunk overwritten
 * after open is skipped and counted, not reported as corrupt. */
static void test_reading_a_live_ring_skips_chunks_overwritten_meanwhile(void)
{
	const char *path = tpath("live.argus");
	struct argus_error err = { 0 };
	struct argus_event ev;
	static const uint8_t zero[64];
	struct sim s;
	unsigned nev[256];
	uint64_t n = 0;
	int fd, rc;

	write_ring(path, &s, nev, 3);
	CHECK(s.at[2] > s.at[1]);
	struct argus_trace *t = argus_trace__open(path, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	/* the writer wraps onto chunk 1: header zeroed, payload rewritten */
	fd = open(path, O_WRONLY);
	CHECK_EQ(pwrite(fd, zero, 64, (off_t)s.at[0]), 64);
	CHECK_EQ(pwrite(fd, zero, 64, (off_t)s.at[0] + 200), 64);
	close(fd);
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		CHECK(ev.f[0] != 1);
		n++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, nev[1] + nev[2]);
	CHECK_EQ(argus_trace__stats(t)->chunks, 2);
	CHECK_EQ(argus_trace__stats(t)->chunks_overwritten, 1);
	argus_trace__close(t);
}

/* ---------------------------------------------------------------------
 * Snapshots and bad files.
 */

/* A snapshot of `n` chunks; offsets in at[]. */
static void write_snapshot(const char *path, int n, uint64_t *at, uint64_t *len_out)
{
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	uint64_t off = ARGUS_FILE_HEADER_SIZE;

	for (int k = 0; k < n; k++) {
		size_t len;
		void *chunk = tagged_chunk(b, (uint64_t)k + 1, 300, &len);

		if (at)
			at[k] = off;
		if (len_out)
			len_out[k] = len;
		off = align_up(off + len);
		CHECK_EQ(argus_ring__append(r, chunk, len), 0);
		free(chunk);
	}
	argus_ring__close(r);
	argus_chunk_builder__free(b);
}

static void flip(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t byte = 0;

	CHECK_EQ(pread(fd, &byte, 1, (off_t)off), 1);
	byte ^= 0x01;
	CHECK_EQ(pwrite(fd, &byte, 1, (off_t)off), 1);
	close(fd);
}

static void test_corrupt_snapshot_payload_names_the_offset(void)
{
	const char *path = tpath("snap-corrupt.argus");
	struct argus_error err = { 0 };
	uint64_t at[3];
	char want[128];

	write_snapshot(path, 3, at, NULL);
	flip(path, at[1] + 64 + 100);
	CHECK(argus_trace__open(path, &err) == NULL);
	snprintf(want, sizeof(want), "%s: corrupt chunk seq 2 at offset 0x%llx: payload checksum mismatch",
		 path, (unsigned long long)at[1]);
	CHECK(!strcmp(err.msg, want));
	CHECK_EQ(err.offset, at[1]);
	CHECK(err.code < 0);
}

static void test_corrupt_snapshot_chunk_header_names_the_offset(void)
{
	const char *path = tpath("snap-hdr.argus");
	struct argus_error err = { 0 };
	uint64_t at[3];
	char want[128];

	write_snapshot(path, 3, at, NULL);
	flip(path, at[2] + 20);
	CHECK(argus_trace__open(path, &err) == NULL);
	snprintf(want, sizeof(want), "corrupt at offset 0x%llx", (unsigned long long)at[2]);
	CHECK(strstr(err.msg, want) != NULL);
	CHECK_EQ(err.offset, at[2]);
}

static void test_truncated_snapshot_names_the_offset(void)
{
	const char *path = tpath("snap-trunc.argus");
	struct argus_error err = { 0 };
	uint64_t at[3], len[3];
	char want[160];

	write_snapshot(path, 3, at, len);
	CHECK_EQ(truncate(path, (off_t)(at[2] + 1000)), 0);
	CHECK(argus_trace__open(path, &err) == NULL);
	snprintf(want, sizeof(want), "%s: truncated at offset 0x%llx: chunk seq 3 needs %llu bytes, file has %llu",
		 path, (unsigned long long)at[2], (unsigned long long)(at[2] + len[2]),
		 (unsigned long long)(at[2] + 1000));
	CHECK(!strcmp(err.msg, want));
	if (strcmp(err.msg, want))
		fprintf(stderr, "  got: %s\n", err.msg);
	CHECK_EQ(err.offset, at[2]);
	/* cut inside the chunk header: still named */
	CHECK_EQ(truncate(path, (off_t)(at[2] + 10)), 0);
	CHECK(argus_trace__open(path, &err) == NULL);
	snprintf(want, sizeof(want), "truncated at offset 0x%llx", (unsigned long long)at[2]);
	CHECK(strstr(err.msg, want) != NULL);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK_EQ(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static void test_wrong_magic_is_not_a_trace(void)
{
	const char *path = tpath("magic.argus");
	struct argus_error err = { 0 };

	write_snapshot(path, 1, NULL, NULL);
	flip(path, 3);
	CHECK(argus_trace__open(path, &err) == NULL);
	CHECK(strstr(err.msg, "not an Argus trace (bad magic at offset 0)") != NULL);
	CHECK_EQ(err.offset, 0);
}

static void test_wrong_version_says_which_version(void)
{
	const char *path = tpath("version.argus");
	struct argus_error err = { 0 };
	struct argus_file_header h;
	int fd;

	write_snapshot(path, 1, NULL, NULL);
	fd = open(path, O_RDWR);
	CHECK_EQ(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	h.version = 3;
	h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, 52);
	CHECK_EQ(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	CHECK(argus_trace__open(path, &err) == NULL);
	CHECK(strstr(err.msg, "trace format version 3 at offset 8, this build reads versions 1 to 2") != NULL);
	CHECK_EQ(err.offset, 8);
}

static void test_garbage_empty_and_short_files_fail_cleanly(void)
{
	struct argus_error err = { 0 };
	static uint8_t junk[100000];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rnd();
	write_bytes(tpath("junk"), junk, sizeof(junk));
	CHECK(argus_trace__open(tpath("junk"), &err) == NULL);
	CHECK(strstr(err.msg, "bad magic") != NULL);

	write_bytes(tpath("empty"), "", 0);
	CHECK(argus_trace__open(tpath("empty"), &err) == NULL);
	CHECK(strstr(err.msg, "empty file") != NULL);

	memcpy(junk, ARGUS_FILE_MAGIC, 8);
	memcpy(junk + 8, &(uint32_t){ 1 }, 4);
	write_bytes(tpath("short"), junk, 100);
	CHECK(argus_trace__open(tpath("short"), &err) == NULL);
	CHECK(strstr(err.msg, "truncated header: file is 100 bytes") != NULL);

	CHECK(argus_trace__open(tpath("does-not-exist"), &err) == NULL);
	CHECK_EQ(err.code, -ENOENT);
	CHECK(argus_trace__open(dir, &err) == NULL);
	CHECK(argus_trace__open_mem(junk, 5, &err) == NULL);
	CHECK(argus_trace__open_mem(NULL, 0, &err) == NULL);
	argus_trace__close(NULL);
}

/* Valid checksums around a mutated raw payload: the decoder itself must
 * reject or read it, never crash (run under ASan to mean it). */
static void mutate_payloads(int level)
{
	const char *path = tpath(level ? "mut-zstd.argus" : "mut.argus");
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	struct exp exp[400];
	size_t nexp = 0, len;
	void *chunk;
	uint8_t *orig;
	long sz;
	FILE *f;

	argus_chunk_builder__set_codec(b, ARGUS_CODEC_ZSTD);
	fill_chunk(b, 0, 1000, 3, 400, exp, &nexp);
	chunk = finish(b, 1, level, &len);
	argus_ring__append(r, chunk, len);
	free(chunk);
	argus_ring__close(r);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	orig = malloc((size_t)sz);
	CHECK_EQ(fread(orig, 1, (size_t)sz, f), sz);
	fclose(f);

	uint8_t *m = malloc((size_t)sz);
	unsigned opened = 0;
	for (int it = 0; it < 3000; it++) {
		struct argus_chunk_header h;
		struct argus_error err;
		struct argus_event ev;
		uint8_t *pl = m + ARGUS_FILE_HEADER_SIZE + 64;
		int nmut = 1 + (int)(rnd() % 4), n = 0;

		memcpy(m, orig, (size_t)sz);
		memcpy(&h, m + ARGUS_FILE_HEADER_SIZE, 64);
		for (int k = 0; k < nmut; k++) {
			size_t at = (size_t)(rnd() % (it % 2 ? 200 : h.payload_len));

			pl[at] = (uint8_t)(rnd() % 3 ? rnd() : pl[at] ^ (1u << (rnd() % 8)));
		}
		h.payload_crc = (uint32_t)crc32(0, pl, h.payload_len);
		h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, 60);
		memcpy(m + ARGUS_FILE_HEADER_SIZE, &h, 64);
		struct argus_trace *t = argus_trace__open_mem(m, (size_t)sz, &err);
		if (!t)
			continue;
		opened++;
		while (n++ < 10000 && argus_trace__next(t, &ev, &err) > 0) {
			const uint64_t *ips;
			uint32_t nr;

			argus_trace__string(t, ev.str);
			argus_trace__stack(t, ev.stack, &ips, &nr);
			argus_trace__task(t, ev.tid);
		}
		argus_trace__close(t);
	}
	CHECK(opened > 0);
	free(m);
	free(orig);
	argus_chunk_builder__free(b);
}

/* Mutations of a raw payload reach the decoder; of a zstd frame, the
 * inflater (and past it, where the frame still inflates, the decoder). */
static void test_reader_survives_mutated_payloads(void)
{
	mutate_payloads(0);
	mutate_payloads(1);
}

/* ---------------------------------------------------------------------
 * Save.
 */
static void test_save_from_ts_copies_the_chunks_that_reach_it(void)
{
	const char *src = tpath("save-src.argus"), *dst = tpath("save-dst.argus");
	struct argus_error err = { 0 };
	struct argus_event ev;
	struct stat st;
	int n = 0, rc;

	write_snapshot(src, 5, NULL, NULL);  /* chunk k: ts k*1e6 .. k*1e6+299 */
	CHECK_EQ(argus_trace__save(src, dst, 3000000 + 299, NULL, &err), 0);
	struct argus_trace *a = argus_trace__open(src, &err);
	struct argus_trace *t = argus_trace__open(dst, &err);
	CHECK(t != NULL && a != NULL);
	if (!t || !a)
		return;
	CHECK_EQ(argus_trace__nchunks(t), 3);  /* chunks 3, 4, 5 */
	for (size_t i = 0; i < 3; i++) {
		struct argus_chunk_info ci;

		CHECK_EQ(argus_trace__chunk(t, i, &ci), 0);
		CHECK_EQ(ci.seq, i + 1);  /* renumbered */
		CHECK_EQ(ci.min_ts, (i + 3) * 1000000);
	}
	CHECK(argus_trace__header(t)->flags & ARGUS_FILE_SNAPSHOT);
	CHECK_EQ(argus_trace__header(t)->created_mono_ns,
		 argus_trace__header(a)->created_mono_ns);
	CHECK(!strcmp(argus_trace__header(t)->hostname, argus_trace__header(a)->hostname));
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		CHECK_EQ(ev.f[0], 3 + n / 300);
		n++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, 900);
	CHECK_EQ(stat(dst, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	argus_trace__close(t);
	argus_trace__close(a);

	/* from a wrapped ring: everything it still holds */
	struct sim s;
	unsigned nev[256];
	write_ring(tpath("save-ring.argus"), &s, nev, 50);
	CHECK_EQ(argus_trace__save(tpath("save-ring.argus"), dst, 0, NULL, &err), 0);
	a = argus_trace__open(tpath("save-ring.argus"), &err);
	t = argus_trace__open(dst, &err);
	CHECK(t && a && argus_trace__nchunks(t) == argus_trace__nchunks(a));
	CHECK(t && argus_trace__stats(t)->chunks_overwritten == 0);
	argus_trace__close(t);
	argus_trace__close(a);
}

/* The collector's --wait-stacks mark (ARGUS_FILE_WAIT_STACKS) is kept in
 * the file header, and by argus save's copy; a plain ring has none. */
static void test_wait_stacks_flag_survives_save(void)
{
	const char *src = tpath("ws-ring.argus"), *dst = tpath("ws-saved.argus");
	struct argus_ring_opts o = { .sz = sizeof(o), .data_size = 16 * ARGUS_BLOCK_SIZE,
				     .ncpus = 2, .flags = ARGUS_FILE_WAIT_STACKS };
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_error err = { 0 };
	struct argus_ring *r = argus_ring__create(src, &o, &err);
	struct argus_trace *t;
	size_t len;
	void *chunk;

	CHECK(r != NULL && b != NULL);
	if (!r || !b)
		goto out;
	chunk = tagged_chunk(b, 1, 10, &len);
	CHECK_EQ(argus_ring__append(r, chunk, len), 0);
	free(chunk);
	argus_ring__close(r);
	CHECK_EQ(argus_trace__save(src, dst, 0, NULL, &err), 0);
	t = argus_trace__open(dst, &err);
	CHECK(t != NULL);
	if (t) {
		CHECK(argus_trace__header(t)->flags & ARGUS_FILE_WAIT_STACKS);
		CHECK(argus_trace__header(t)->flags & ARGUS_FILE_SNAPSHOT);
		CHECK(!(argus_trace__header(t)->flags & ARGUS_FILE_RING));
		argus_trace__close(t);
	}
	r = create(src, 16 * ARGUS_BLOCK_SIZE);     /* no flags asked */
	argus_ring__close(r);
	t = argus_trace__open(src, &err);
	CHECK(t != NULL);
	if (t) {
		CHECK(!(argus_trace__header(t)->flags & ARGUS_FILE_WAIT_STACKS));
		argus_trace__close(t);
	}
out:
	argus_chunk_builder__free(b);
}

static void test_save_failure_leaves_no_file(void)
{
	struct argus_error err = { 0 };

	CHECK(argus_trace__save(tpath("nope.argus"), tpath("out.argus"), 0, NULL, &err) < 0);
	CHECK(access(tpath("out.argus"), F_OK) != 0);
	CHECK(strstr(err.msg, "nope.argus") != NULL);
	write_snapshot(tpath("s.argus"), 1, NULL, NULL);
	CHECK(argus_trace__save(tpath("s.argus"), tpath("no-dir/out.argus"), 0, NULL, &err) < 0);
	CHECK(argus_trace__save(tpath("s.argus"), tpath("s.argus"), 0, NULL, &err) == -EINVAL);
	struct argus_trace *t = argus_trace__open(tpath("s.argus"), &err);
	CHECK(t != NULL);  /* saving onto itself did not truncate it */
	argus_trace__close(t);
}

/* ---------------------------------------------------------------------
 * Density: a synthetic but realistic scheduler/syscall mix.
 */
static void test_density_of_a_realistic_mix(void)
{
	const char *path = tpath("density.argus");
	struct argus_chunk_builder *b = argus_chunk_builder__new();
	struct argus_ring *r = create(path, 0);
	enum { NCPU = 8, NTHR = 200, N = 400000 };
	uint32_t tid[NTHR], pid[NTHR], comm[NTHR];
	uint64_t ts[NCPU], total = 0, raw_total = 0, seq = 0;
	uint32_t cur[NCPU];
	static const int64_t sysnrs[] = { 202, 0, 1, 232, 7, 23, 45, 44, 281 };
	char name[32];
	uint64_t n = 0;

	for (int c = 0; c < NCPU; c++) {
		ts[c] = 5000000000ull + (uint64_t)c * 1000;
		cur[c] = 0;
	}
	for (int i = 0; i < NTHR; i++) {
		pid[i] = 1000 + (uint32_t)(i / 7) * 37;
		tid[i] = i % 7 ? pid[i] + (uint32_t)(i % 7) : pid[i];
	}
	while (n < N) {
		/* per chunk: interned names, stacks, tasks, like the collector */
		uint32_t stk[40];

		for (int i = 0; i < NTHR; i++) {
			snprintf(name, sizeof(name), "worker-%d", i / 7);
			comm[i] = argus_chunk_builder__string(b, name, strlen(name));
			struct argus_task k = { tid[i], pid[i], 1, comm[i] };
			argus_chunk_builder__task(b, &k);
		}
		for (int i = 0; i < 40; i++) {
			uint64_t ips[12];

			for (int f = 0; f < 12; f++)
				ips[f] = 0x55d0c0a00000ull + (uint64_t)(i * 7 + f) * 0x1234 +
					 (f > 6 ? 0x7f0000000000ull : 0);
			stk[i] = argus_chunk_builder__stack(b, ips, 8 + i % 5);
		}
		while (argus_chunk_builder__raw_bytes(b) < (1u << 20) && n < N) {
			int c = (int)(rnd() % NCPU);
			int t = (int)(rnd() % NTHR), nt = (int)(rnd() % NTHR);
			struct argus_event ev = { 0 };
			int64_t nr = sysnrs[rnd() % 9];
			uint64_t obj = 0x1c000 + rnd() % 64;

			ev.cpu = (uint16_t)c;
			ev.tid = cur[c] ? tid[cur[c] - 1] : 0;
			ev.pid = cur[c] ? pid[cur[c] - 1] : 0;
			/* a syscall pair: enter, exit */
			ts[c] += 200 + rnd() % 3000;
			ev.ts = ts[c];
			ev.type = AE_SYS_ENTER;
			ev.f[0] = (uint64_t)nr;
			ev.f[1] = 3 + rnd() % 20;
			ev.f[2] = 0x7ffd12340000ull + (rnd() % 4096) * 16;
			ev.f[3] = rnd() % 4096;
			argus_chunk_builder__event(b, &ev);
			memset(ev.f, 0, sizeof(ev.f));
			ts[c] += 500 + rnd() % 20000;
			ev.ts = ts[c];
			ev.type = AE_SYS_EXIT;
			ev.f[0] = (uint64_t)nr;
			ev.f[1] = rnd() % 4 ? rnd() % 4096 : (uint64_t)-11;
			ev.f[2] = 3 + rnd() % 20;
			ev.f[3] = AE_OBJ_PIPE;
			ev.f[4] = obj;
			argus_chunk_builder__event(b, &ev);
			memset(ev.f, 0, sizeof(ev.f));
			/* it wakes someone */
			ts[c] += 100 + rnd() % 2000;
			ev.ts = ts[c];
			ev.type = AE_WAKING;
			ev.f[0] = tid[nt];
			ev.f[1] = pid[nt];
			ev.f[2] = rnd() % NCPU;
			ev.f[3] = AE_VEC_NONE;
			argus_chunk_builder__event(b, &ev);
			memset(ev.f, 0, sizeof(ev.f));
			/* and blocks: switch to the next */
			ts[c] += 100 + rnd() % 5000;
			ev.ts = ts[c];
			ev.type = AE_SWITCH;
			ev.f[0] = tid[t];
			ev.f[1] = pid[t];
			ev.f[2] = rnd() % 3 ? 1 : 0;
			ev.f[3] = ev.f[2] ? (uint64_t)nr : (uint64_t)-1;
			ev.f[4] = ev.f[2] ? 3 + rnd() % 20 : 0;
			ev.f[5] = ev.f[2] ? AE_OBJ_PIPE : 0;
			ev.f[6] = ev.f[2] ? obj : 0;
			ev.str = comm[t];
			ev.stack = ev.f[2] ? stk[rnd() % 40] : 0;
			argus_chunk_builder__event(b, &ev);
			cur[c] = (uint32_t)t + 1;
			n += 4;
		}
		raw_total += argus_chunk_builder__raw_bytes(b);
		size_t len;
		void *chunk = finish(b, ++seq, 6, &len);
		argus_ring__append(r, chunk, len);
		total += len;
		free(chunk);
	}
	argus_ring__close(r);
	struct stat st;
	stat(path, &st);
	double per = (double)total / (double)n;
	fprintf(stderr, "  density: %llu events, %llu chunks, raw %.2f B/event, "
		"zlib-6 %.2f B/event (file %.2f B/event)\n",
		(unsigned long long)n, (unsigned long long)seq,
		(double)raw_total / (double)n, per, (double)st.st_size / (double)n);
	CHECK(per < 24);
	argus_chunk_builder__free(b);
}

static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlink(tpath(e->d_name));
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/argus-fmt-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_varint_edges);
	RUN(test_varint_next_agrees_with_varint_get);
	RUN(test_round_trip_every_type_compressed);
	RUN(test_round_trip_every_type_zstd);
	RUN(test_round_trip_every_type_uncompressed);
	RUN(test_zstd_frame_damaged_under_good_crcs_is_refused);
	RUN(test_zstd_chunk_header_must_agree_with_its_frame);
	RUN(test_zstd_first_block_is_the_cpus_section);
	RUN(test_zstd_past_deflates_ratio_is_stored_as_zlib);
	RUN(test_set_codec_rejects_an_unknown_codec);
	RUN(test_version_1_files_still_read);
	RUN(test_open_mem_reads_the_same_bytes);
	RUN(test_rewind_returns_the_same_events_and_ids);
	RUN(test_out_of_order_across_chunks_is_counted_not_dropped);
	RUN(test_next_batch_returns_what_next_returns);
	RUN(test_builder_rejects_what_it_cannot_store);
	RUN(test_ring_wrap_keeps_the_newest_chunks_in_order);
	RUN(test_ring_rejects_a_chunk_bigger_than_the_ring);
	RUN(test_crash_before_the_header_loses_only_that_chunk);
	RUN(test_crash_with_a_torn_payload_counts_one_incomplete_chunk);
	RUN(test_ring_truncated_mid_chunk_loses_only_that_chunk);
	RUN(test_corrupt_middle_chunk_of_a_ring_is_skipped_and_counted);
	RUN(test_save_skips_a_chunk_with_a_good_crc_that_does_not_decode);
	RUN(test_corrupt_middle_chunk_of_a_snapshot_is_an_error);
	RUN(test_reading_a_live_ring_skips_chunks_overwritten_meanwhile);
	RUN(test_corrupt_snapshot_payload_names_the_offset);
	RUN(test_corrupt_snapshot_chunk_header_names_the_offset);
	RUN(test_truncated_snapshot_names_the_offset);
	RUN(test_wrong_magic_is_not_a_trace);
	RUN(test_wrong_version_says_which_version);
	RUN(test_garbage_empty_and_short_files_fail_cleanly);
	RUN(test_reader_survives_mutated_payloads);
	RUN(test_save_from_ts_copies_the_chunks_that_reach_it);
	RUN(test_wait_stacks_flag_survives_save);
	RUN(test_save_failure_leaves_no_file);
	RUN(test_density_of_a_realistic_mix);
	cleanup();
	return check_report();
}
