/* test_batch_unpack.c - AE_BATCH records (kernel-patch/argus_events.h) are
 * handed over as their records, in order, and a malformed batch is never
 * read past its size.  The batches are built here the way argus.bpf.c's
 * batch_commit() lays them out; tests/e2e/batch_flush.sh covers the real
 * programs' batches. */
#include <stdint.h>
#include <string.h>

#include "argus_events.h"
#include "batch_unpack.h"
#include "check.h"

struct seen {
	int n;
	uint64_t ts[64];
	size_t size[64];
	int refuse_at;  /* -1: never */
};

static int take(void *ctx, const void *rec, size_t size)
{
	struct seen *s = ctx;
	const struct ae_hdr *h = rec;

	if (s->n < 64) {
		s->ts[s->n] = h->ts;
		s->size[s->n] = size;
	}
	return s->n++ == s->refuse_at ? -1 : 0;
}

/* A batch of records of the given sizes, ts 1, 2, ...; returns its size. */
static size_t build(uint8_t *buf, size_t cap, const uint16_t *sizes, int n)
{
	struct ae_batch *b = (void *)buf;
	uint32_t len = 0;

	memset(buf, 0xa5, cap);
	for (int i = 0; i < n; i++) {
		struct ae_hdr *h = (void *)(buf + sizeof(*b) + len);

		memset(h, 0, sizes[i]);
		h->ts = (uint64_t)i + 1;
		h->type = AE_SYS_EXIT;
		h->size = sizes[i];
		len += (sizes[i] + 7u) & ~7u;
	}
	memset(&b->h, 0, sizeof(b->h));
	b->h.type = AE_BATCH;
	b->h.size = (uint16_t)(sizeof(*b) + len);
	b->count = (uint32_t)n;
	b->len = len;
	return sizeof(*b) + len;
}

static void test_records_come_out_in_order_with_exact_sizes(void)
{
	static const uint16_t sizes[] = { 64, 300, 29, 24, 4100 };
	uint8_t buf[8192] __attribute__((aligned(8)));
	struct seen s = { .refuse_at = -1 };
	size_t n = build(buf, sizeof(buf), sizes, 5);

	CHECK_EQ(argus_batch_each(buf, n, take, &s), 0);
	CHECK_EQ(s.n, 5);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(s.ts[i], i + 1);
		CHECK_EQ(s.size[i], sizes[i]);
	}
}

static void test_a_plain_record_passes_through_once(void)
{
	struct ae_hdr h = { .ts = 7, .type = AE_SWITCH, .size = sizeof(h) };
	struct seen s = { .refuse_at = -1 };

	CHECK_EQ(argus_batch_each(&h, sizeof(h), take, &s), 0);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ts[0], 7);
	/* shorter than a batch header: handed over as it is, not unpacked */
	s.n = 0;
	CHECK_EQ(argus_batch_each(&h, 4, take, &s), 0);
	CHECK_EQ(s.n, 1);
}

static void test_a_refusal_does_not_lose_the_rest(void)
{
	static const uint16_t sizes[] = { 64, 64, 64, 64 };
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct seen s = { .refuse_at = 1 };
	size_t n = build(buf, sizeof(buf), sizes, 4);

	CHECK(argus_batch_each(buf, n, take, &s) < 0);
	CHECK_EQ(s.n, 4);
}

static void test_a_malformed_batch_is_not_read_past_its_size(void)
{
	static const uint16_t sizes[] = { 64, 64, 64 };
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct ae_batch *b = (void *)buf;
	struct seen s = { .refuse_at = -1 };
	size_t n;

	/* count says more than the bytes hold: the records there, no more */
	n = build(buf, sizeof(buf), sizes, 3);
	b->count = 1000;
	CHECK_EQ(argus_batch_each(buf, n, take, &s), 0);
	CHECK_EQ(s.n, 3);

	/* len says more than the record's size: bounded by the size */
	s.n = 0;
	n = build(buf, sizeof(buf), sizes, 3);
	b->len = 1u << 30;
	CHECK_EQ(argus_batch_each(buf, n - 64, take, &s), 0);
	CHECK_EQ(s.n, 2);

	/* a record whose size runs past the end stops the batch there */
	s.n = 0;
	n = build(buf, sizeof(buf), sizes, 3);
	((struct ae_hdr *)(buf + sizeof(*b) + 64))->size = 500;
	CHECK_EQ(argus_batch_each(buf, n, take, &s), 0);
	CHECK_EQ(s.n, 1);

	/* a record size below a header (0 would loop forever) stops it too */
	s.n = 0;
	n = build(buf, sizeof(buf), sizes, 3);
	((struct ae_hdr *)(buf + sizeof(*b)))->size = 0;
	CHECK_EQ(argus_batch_each(buf, n, take, &s), 0);
	CHECK_EQ(s.n, 0);
}

int main(void)
{
	RUN(test_records_come_out_in_order_with_exact_sizes);
	RUN(test_a_plain_record_passes_through_once);
	RUN(test_a_refusal_does_not_lose_the_rest);
	RUN(test_a_malformed_batch_is_not_read_past_its_size);
	return check_report();
}
