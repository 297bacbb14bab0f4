/* test_reader_prefetch.c - the reader's inflate-ahead thread
 * (trace/reader_prefetch.c): with it on, a trace of many large chunks
 * reads back exactly the events it reads with it off, the thread really
 * inflated the chunks it should have, a rewind in the middle drops its
 * work, and a chunk whose payload does not inflate is reported with the
 * same words, at the same place, whichever thread inflated it.
 *
 * The traces come from argus-gen (its path in argv[1]) with chunks of
 * 20 000 events, about 0.6 MiB inflated: above the 256 KiB under which
 * the reader does not start a thread.  Files live in a private temp dir
 * removed at the end. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "run_gen.h"
#include "trace_format.h"
#include "trace_internal.h"     /* argus_crc32, argus_chunk_header_seal */

#define BIG_RAW (256u << 10)    /* reader_prefetch.c's PREFETCH_MIN_RAW */

static char dir[64];
static char path[128], bad_path[128];
static bool two_cpus;

/* What one pass over a trace returned: how many events, a hash of every
 * byte of each (ids included: the same order interns the same ids), the
 * errors seen on the way, and the reader's count of prefetched chunks. */
struct pass {
	uint64_t n, hash, inflated_ahead;
	int nerr;
	char err[2][256];
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void add(struct pass *ps, const struct argus_trace *t, const struct argus_event *ev)
{
	const char *s = ev->str ? argus_trace__string(t, ev->str) : NULL;

	ps->hash = fnv(ps->hash, ev, sizeof(*ev));
	if (s)
		ps->hash = fnv(ps->hash, s, strlen(s));
	ps->n++;
}

/* Read the whole trace, a batch at a time (batch) or event by event,
 * going on past errors as the API allows; at most `stop` events when
 * stop is not 0 (then the pass ends there, without closing). */
static void read_all(struct argus_trace *t, bool batch, struct pass *ps)
{
	struct argus_error err = { 0 };
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->hash = 0xcbf29ce484222325ull;
	for (;;) {
		if (batch) {
			const struct argus_event *evs;

			rc = argus_trace__next_batch(t, &evs, &err);
			for (int i = 0; i < rc; i++)
				add(ps, t, &evs[i]);
		} else {
			struct argus_event ev;

			rc = argus_trace__next(t, &ev, &err);
			if (rc > 0)
				add(ps, t, &ev);
		}
		if (rc == 0)
			break;
		if (rc < 0) {
			if (ps->nerr < 2)
				snprintf(ps->err[ps->nerr], sizeof(ps->err[0]), "%s", err.msg);
			if (++ps->nerr > 4)     /* the API goes on with the next chunk */
				break;
		}
	}
	ps->inflated_ahead = argus_trace__stats(t)->inflated_ahead;
}

/* Chunks of t with more than BIG_RAW bytes inflated, and whether the
 * first is one: every big chunk but the first is inflated ahead. */
static unsigned big_chunks(const struct argus_trace *t, bool *first_big)
{
	unsigned n = 0;

	for (size_t i = 0; i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;
		struct argus_chunk_header h;

		if (argus_trace__chunk(t, i, &ci))
			continue;
		memcpy(&h, ci.data, sizeof(h));
		if ((h.flags & ARGUS_CHUNK_COMPRESSED) && h.raw_len >= BIG_RAW) {
			n++;
			if (i == 0)
				*first_big = true;
		}
	}
	return n;
}

static struct argus_trace *open_trace(const char *p)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(p, &err);

	if (!t)
		fprintf(stderr, "  open %s: %s\n", p, err.msg);
	CHECK(t != NULL);
	return t;
}

static void test_prefetch_returns_the_same_events(void)
{
	struct argus_trace *t = open_trace(path);
	struct pass on, off, on_next;
	bool first_big = false;
	unsigned big;

	if (!t)
		return;
	big = big_chunks(t, &first_big);
	/* the test means nothing unless most chunks are worth a thread */
	CHECK(big >= 10);
	read_all(t, true, &on);
	argus_trace__rewind(t);
	read_all(t, false, &on_next);
	argus_trace__rewind(t);
	argus_trace__prefetch(t, false);
	read_all(t, true, &off);
	CHECK_EQ(on.nerr, 0);
	CHECK_EQ(off.nerr, 0);
	CHECK_EQ(on.n, 400000);
	CHECK_EQ(off.n, on.n);
	CHECK(off.hash == on.hash);
	CHECK_EQ(on_next.n, on.n);
	CHECK(on_next.hash == on.hash);
	CHECK_EQ(off.inflated_ahead, 0);
	if (two_cpus) {
		CHECK_EQ(on.inflated_ahead, big - first_big);
		CHECK_EQ(on_next.inflated_ahead, big - first_big);
	} else {
		fprintf(stderr, "  one CPU: the reader runs no thread (checked: none ran)\n");
		CHECK_EQ(on.inflated_ahead, 0);
	}
	argus_trace__close(t);
}

/* A rewind while the thread inflates the next chunk: the work is dropped,
 * and the pass after reads the whole trace, the same as a fresh open. */
static void test_rewind_mid_trace_drops_the_work_ahead(void)
{
	struct argus_trace *t = open_trace(path), *fresh = open_trace(path);
	struct argus_error err = { 0 };
	struct argus_event ev;
	struct pass again, want;
	int got = 0;

	if (!t || !fresh)
		goto out;
	for (int i = 0; i < 150000; i++)
		got += argus_trace__next(t, &ev, &err) == 1;
	CHECK_EQ(got, 150000);
	argus_trace__rewind(t);
	read_all(t, true, &again);
	read_all(fresh, true, &want);
	CHECK_EQ(again.nerr, 0);
	CHECK_EQ(again.n, want.n);
	CHECK(again.hash == want.hash);
	/* closing in the middle, with the thread at work, must not hang or
	 * leak (ASan's leak check runs this test too) */
	argus_trace__rewind(fresh);
	got = 0;
	for (int i = 0; i < 50000; i++)
		got += argus_trace__next(fresh, &ev, &err) == 1;
	CHECK_EQ(got, 50000);
	CHECK(argus_trace__stats(fresh)->inflated_ahead > 0 || !two_cpus);
out:
	argus_trace__close(t);
	argus_trace__close(fresh);
}

/* Copy path to bad_path with chunk k's compressed payload broken (a zstd
 * frame cut short, a zlib stream changed three quarters in), its payload
 * crc and header crc made right again: only inflating it can tell.
 * Returns false if the trace has no chunk k. */
static bool break_chunk(unsigned k)
{
	struct argus_trace *t = open_trace(path);
	struct argus_chunk_info ci;
	struct argus_chunk_header h;
	struct stat st;
	uint8_t *buf;
	int fd;
	bool ok = false;

	if (!t || argus_trace__chunk(t, k, &ci))
		goto out;
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size);
	CHECK(buf && read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	memcpy(&h, buf + ci.offset, sizeof(h));
	if (h.flags & ARGUS_CHUNK_ZSTD)
		h.payload_len -= 16;    /* the frame cut short: only the inflate
					   can tell (a zstd frame has no checksum
					   of its own, payload_crc is it) */
	else
		for (uint32_t i = 0; i < 16; i++)       /* a run of bytes, not one bit */
			buf[ci.offset + ARGUS_CHUNK_HEADER_SIZE + h.payload_len * 3 / 4 + i] ^= 0x5a;
	h.payload_crc = argus_crc32(buf + ci.offset + ARGUS_CHUNK_HEADER_SIZE, h.payload_len);
	argus_chunk_header_seal(&h);
	memcpy(buf + ci.offset, &h, sizeof(h));
	fd = open(bad_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	free(buf);
	ok = true;
out:
	argus_trace__close(t);
	return ok;
}

static void test_a_bad_payload_inflated_ahead_reads_as_in_place(void)
{
	struct argus_trace *t;
	struct pass on, off;

	CHECK(break_chunk(5));
	t = open_trace(bad_path);
	if (!t)
		return;
	read_all(t, true, &on);
	argus_trace__rewind(t);
	argus_trace__prefetch(t, false);
	read_all(t, true, &off);
	argus_trace__close(t);
	CHECK_EQ(on.nerr, 1);
	CHECK_EQ(off.nerr, 1);
	CHECK(strstr(on.err[0], "payload does not inflate") != NULL);
	CHECK(!strcmp(on.err[0], off.err[0]));
	if (strcmp(on.err[0], off.err[0]))
		fprintf(stderr, "  ahead: %s\n  here:  %s\n", on.err[0], off.err[0]);
	/* one chunk of 20 000 is missing, the rest is the same */
	CHECK_EQ(on.n, 400000 - 20000);
	CHECK_EQ(off.n, on.n);
	CHECK(on.hash == off.hash);
	if (two_cpus)
		CHECK(on.inflated_ahead >= 5);
}

int main(int argc, char **argv)
{
	const char *extra[] = { "--events", "400000", "--chunk-events", "20000", NULL };
	cpu_set_t set;

	if (argc < 2) {
		fprintf(stderr, "usage: test_reader_prefetch ARGUS_GEN\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "/tmp/argus-prefetch.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/gen.argus", dir);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.argus", dir);
	two_cpus = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= 2;
	CHECK_EQ(run_gen_to(argv[1], path, extra, "/dev/null"), 0);
	RUN(test_prefetch_returns_the_same_events);
	RUN(test_rewind_mid_trace_drops_the_work_ahead);
	RUN(test_a_bad_payload_inflated_ahead_reads_as_in_place);
	unlink(path);
	unlink(bad_path);
	rmdir(dir);
	return check_report();
}
