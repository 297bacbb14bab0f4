/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ring.c - the interposer's shared ring: registration with argusd and the
 * one writer every wrapper file (mutex.c, ...) calls.  docs/interposer.md
 * is the prose version.
 *
 * The writer takes no lock, allocates nothing and makes no syscall after
 * the constructor, except clock_gettime (vDSO) and sched_getcpu (vDSO).
 *
 * Registration (constructor, and again in a forked child): a memfd of
 * AIP_RING_BYTES, sealed against shrinking (argusd maps it and must not
 * take a SIGBUS), sent with SCM_RIGHTS to <run dir>/interpose.sock.  No
 * collector, no socket, any error: recording stays off and the process
 * runs as if the library were not there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipose.h"

_Static_assert(sizeof(struct aip_rec) == 64, "a slot is one cache line");
_Static_assert(sizeof(struct aip_ring_hdr) == 72, "hdr layout");
_Static_assert(AIP_HDR_BYTES + AIP_NSLOTS * sizeof(struct aip_rec) == AIP_RING_BYTES,
	       "ring size");

/* The mapped ring, NULL while recording is off.  Written only by the
 * constructor and the fork handler (single-threaded moments). */
struct aip_ring_hdr *aip_ring;
static struct aip_rec *slots;

static __thread uint32_t my_tid;

static uint32_t tid_now(void)
{
	if (UNLIKELY(!my_tid))
		my_tid = (uint32_t)syscall(SYS_gettid);
	return my_tid;
}

void aip_put(uint16_t type, const void *addr, uint32_t other, uint64_t arg)
{
	struct aip_ring_hdr *h = aip_ring;
	struct aip_rec *s;
	struct timespec ts;
	uint64_t r;
	int cpu;

	if (!h)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = atomic_fetch_add_explicit((_Atomic __u64 *)&h->head, 1, memory_order_relaxed);
	s = &slots[r % AIP_NSLOTS];
	/* seqlock publish: a reader that sees seq change under it drops
	 * the copy it made */
	atomic_store_explicit((_Atomic __u64 *)&s->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	s->ts = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	s->addr = (uint64_t)(uintptr_t)addr;
	s->tid = tid_now();
	s->other = other;
	s->arg = arg;
	s->type = type;
	s->size = sizeof(*s);
	cpu = sched_getcpu();
	s->cpu = cpu >= 0 && cpu < 65536 ? (uint16_t)cpu : 0;
	s->flags = 0;
	memset(s->reserved, 0, sizeof(s->reserved));
	atomic_store_explicit((_Atomic __u64 *)&s->seq, r + 1, memory_order_release);
}

static const char *run_dir(void)
{
	/* getenv, not secure_getenv: a setuid program has no business being
	 * preloaded (the loader ignores LD_PRELOAD paths with slashes for it)
	 * and the socket only ever gets a memfd we made */
	const char *d = getenv("ARGUS_RUN_DIR");

	return d && d[0] ? d : "/run/argus";
}

/* Make a ring and hand it to argusd; leaves recording off on any error. */
static void register_ring(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[] = "register " "1";
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { msg, sizeof(msg) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	struct aip_ring_hdr *h;
	int mfd, sfd;
	void *p;

	aip_ring = NULL;
	slots = NULL;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/interpose.sock", run_dir()) >=
	    sizeof(sa.sun_path))
		return;
	/* no collector: stop here, before making the ring */
	if (access(sa.sun_path, F_OK))
		return;
	sfd = -1;
	mfd = memfd_create("argus-interpose", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return;
	if (ftruncate(mfd, AIP_RING_BYTES) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto out;
	p = mmap(NULL, AIP_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (p == MAP_FAILED)
		goto out;
	h = p;
	h->magic = AIP_MAGIC;
	h->version = AIP_VERSION;
	h->nslots = AIP_NSLOTS;
	h->slot_size = sizeof(struct aip_rec);
	memset(&cm, 0, sizeof(cm));
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &mfd, sizeof(int));
	/* connect, then send at once: argusd may accept between the two
	 * (it then waits a few loops for the message), so keep that short.
	 * Fire and forget: argusd reads it when its loop comes round (the
	 * data waits in the socket), this process never waits for it */
	sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sfd < 0 || connect(sfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    sendmsg(sfd, &mh, MSG_NOSIGNAL) != (ssize_t)iov.iov_len) {
		munmap(p, AIP_RING_BYTES);
		goto out;
	}
	slots = (struct aip_rec *)((char *)p + AIP_HDR_BYTES);
	aip_ring = h;
out:
	close(mfd);
	if (sfd >= 0)
		close(sfd);
}

/* A forked child inherits the parent's mapping: its records would carry
 * tids argusd (rightly) rejects for the parent's ring.  It gets its own. */
static void at_fork_child(void)
{
	if (aip_ring)
		munmap(aip_ring, AIP_RING_BYTES);
	aip_ring = NULL;
	slots = NULL;
	my_tid = 0;
	register_ring();
}

__attribute__((constructor)) static void interpose_init(void)
{
	if (getenv("ARGUS_INTERPOSE_OFF"))
		return;
	register_ring();
	pthread_atfork(NULL, NULL, at_fork_child);
}
