/* fuzz_interpose_ring.c - libFuzzer target: argusd's reader of the
 * interposer's shared ring (collector/interpose_ring.c), over bytes a
 * hostile process could have written.
 *
 * The input is laid over a whole ring (header page + slots; the rest
 * zero); its first bytes also choose the reader's cursor, the clock and
 * which tids pass as threads of the process.  The ring is drained three
 * times, as argusd would across its loop, then once more as if the
 * process had died.  Invariants (trap on violation):
 *   - every emitted event is a mutex type, of the registered pid, with a
 *     tid (and a WAIT's holder) that tid_ok accepted, a ts within the
 *     accepted window, and a cpu below ncpus; its kind is known (mutex,
 *     rwlock, semaphore, condvar), a mutex record has no third field, a
 *     condvar wait or return carries its mutex, and only a semaphore
 *     post or a condvar signal has a second field on a WAKE;
 *   - a drain counts at most ARGUS_IP_DRAIN_MAX records read plus the
 *     ARGUS_IP_MAX_JUMP a lap can skip (a forged head cannot run the
 *     counters up);
 *   - the cursor never passes the head;
 *   - each 64-byte chunk of the input, parsed alone, gives the same
 *     verdict twice (the parser is pure).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interpose_ring.h"

#define EXPECT(c) do { if (!(c)) __builtin_trap(); } while (0)
#define PID 4242

static uint8_t ring[AIP_RING_BYTES] __attribute__((aligned(64)));
static uint64_t salt;

static int tid_ok(void *ctx, uint32_t tid)
{
	(void)ctx;
	return tid && ((tid ^ salt) % 3) != 0;
}

struct sink {
	const struct argus_ip_check *k;
	uint64_t n;
};

static int emit(void *ctx, const struct argus_event *ev)
{
	struct sink *s = ctx;

	EXPECT(ev->type == AE_MUTEX_WAIT || ev->type == AE_MUTEX_ACQUIRED ||
	       ev->type == AE_MUTEX_WAKE || ev->type == AE_WORK_ENQUEUE ||
	       ev->type == AE_WORK_BEGIN || ev->type == AE_WORK_END ||
	       ev->type == AE_WORK_BOUNDARY);
	EXPECT(ev->pid == PID && tid_ok(NULL, ev->tid));
	EXPECT(ev->ts <= s->k->now_ns + ARGUS_IP_MAX_AHEAD_NS);
	EXPECT(ev->ts + ARGUS_IP_MAX_AGE_NS >= s->k->now_ns);
	EXPECT(ev->cpu < s->k->ncpus);
	if (ev->type == AE_WORK_ENQUEUE || ev->type == AE_WORK_BEGIN || ev->type == AE_WORK_END) {
		EXPECT(ev->f[ARGUS_F_WI_ITEM] != 0);
		EXPECT(ev->f[ARGUS_F_WI_KIND] < AIP_WORK_KIND_MAX);
	} else if (ev->type == AE_WORK_BOUNDARY) {
		EXPECT(ev->f[ARGUS_F_WI_ITEM] != 0);
		EXPECT(ev->f[1] == 0 && ev->f[2] == 0);
	} else {
		/* mutex, rwlock, semaphore, condvar */
		EXPECT(ev->f[ARGUS_F_MX_ADDR] != 0);
		if (ev->type == AE_MUTEX_WAIT && ev->f[ARGUS_F_MX_OTHER] &&
		    ev->f[ARGUS_F_MX_OTHER] != ev->tid)
			EXPECT(tid_ok(NULL, (uint32_t)ev->f[ARGUS_F_MX_OTHER]));
		EXPECT(ev->f[ARGUS_F_MX_KIND] < AE_SYNC_KIND_MAX);
		if (ev->type == AE_MUTEX_WAKE && ev->f[ARGUS_F_MX_KIND] != AE_SYNC_SEM &&
		    ev->f[ARGUS_F_MX_KIND] != AE_SYNC_COND)
			EXPECT(ev->f[ARGUS_F_MX_OTHER] == 0);
		if (ev->f[ARGUS_F_MX_KIND] == AE_SYNC_COND && ev->type != AE_MUTEX_WAKE)
			EXPECT(ev->f[ARGUS_F_MX_ARG] != 0);     /* the condvar's mutex */
		if (ev->f[ARGUS_F_MX_KIND] == AE_SYNC_MUTEX)
			EXPECT(ev->f[ARGUS_F_MX_ARG] == 0);
	}
	s->n++;
	return (s->n % 97) == 0 ? -12 : 0;  /* now and then: out of memory */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argus_ip_check k = { .pid = PID, .ncpus = 4, .tid_ok = tid_ok };
	struct argus_ip_stats st = { 0 };
	struct sink s = { .k = &k };
	uint64_t tail = 0, head;
	uint32_t stuck = 0;
	struct argus_event ev;

	if (size < 16)
		return 0;
	memcpy(&k.now_ns, data, 8);
	memcpy(&tail, data + 8, 8);
	salt = k.now_ns >> 7;
	tail %= 2 * AIP_NSLOTS;
	memset(ring, 0, sizeof(ring));
	memcpy(ring, data + 16, size - 16 < sizeof(ring) ? size - 16 : sizeof(ring));
	memcpy(&head, ring + offsetof(struct aip_ring_hdr, head), 8);
	for (int i = 0; i < 4; i++) {
		uint64_t before = st.records + st.invalid + st.lost;

		argus_ip__drain_buffer(ring, &tail, &stuck, i == 3, &k, emit, &s, &st);
		EXPECT(tail <= head);
		/* a drain reads at most DRAIN_MAX slots and skips at most what
		 * a lap or the unpublished slots account for */
		EXPECT(st.records + st.invalid + st.lost - before <=
		       (uint64_t)ARGUS_IP_DRAIN_MAX + ARGUS_IP_MAX_JUMP + 1);
	}
	EXPECT(st.records == s.n - s.n / 97);
	for (size_t off = 16; off + sizeof(struct aip_rec) <= size; off += sizeof(struct aip_rec)) {
		int a = argus_ip__parse(data + off, sizeof(struct aip_rec), &k, &ev);
		int b = argus_ip__parse(data + off, sizeof(struct aip_rec), &k, &ev);

		EXPECT(a == b && a >= 0 && a < ARGUS_IP_REJECT_MAX);
	}
	EXPECT(argus_ip__parse(data, size < 63 ? size : 63, &k, &ev) == ARGUS_IP_BAD_SIZE);
	return 0;
}
