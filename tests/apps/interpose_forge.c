/* interpose_forge.c - e2e app (tests/e2e/interpose_forged.sh): a hostile
 * process against argusd's interposer socket.  It does not use
 * libargus-interpose.so: it speaks the protocol itself and lies.
 *
 *   1. four registrations argusd must refuse: an unsealed memfd, a
 *      sealed one of the wrong size, no fd at all, a pipe;
 *   2. one good registration, then into its ring: VALID records that
 *      are true, and FORGED ones that each break one rule (size, type,
 *      reserved fields, time, a tid or holder of another process);
 *   3. after a pause (argusd has read them), the ring's head moved
 *      backwards: one more invalid record (bad_field);
 *   4. another pause, exit.
 *
 * usage: interpose_forge OTHER_PID   (a live process that is not this
 *        one, whose pid the forged records claim)
 * Ground truth on stdout: PID VALID FORGED REFUSED and BAD_<reason>=n
 * per reject reason (interpose_ring.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../kernel-patch/argus_events.h"

static char sock_path[108];

static int send_reg(int fd_to_send, const char *text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)text, strlen(text) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, sock_path);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "interpose_forge: connect %s: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	if (fd_to_send >= 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &fd_to_send, sizeof(int));
	}
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		perror("interpose_forge: sendmsg");
		exit(1);
	}
	close(s);
	return 0;
}

static int ring_fd(size_t size, int seal)
{
	int fd = memfd_create("forge", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size) ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))) {
		perror("interpose_forge: memfd");
		exit(1);
	}
	return fd;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static struct aip_ring_hdr *hdr;
static struct aip_rec *slots;

static void put(struct aip_rec r)
{
	uint64_t i = hdr->head++;
	struct aip_rec *s = &slots[i % AIP_NSLOTS];

	r.seq = 0;
	*s = r;
	__atomic_store_n(&s->seq, i + 1, __ATOMIC_RELEASE);
}

static struct aip_rec good(uint16_t type, uint32_t other)
{
	struct aip_rec r = { 0 };

	r.ts = now_ns();
	r.addr = 0x1000;
	r.tid = (uint32_t)getpid();
	r.other = other;
	r.type = type;
	r.size = sizeof(r);
	return r;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("ARGUS_RUN_DIR");
	uint32_t other = argc > 1 ? (uint32_t)atoi(argv[1]) : 0;
	int bad[16] = { 0 };
	int valid = 0, forged = 0, p[2], fd;
	struct aip_rec r;
	void *m;
	enum { SIZE = 1, TYPE, FIELD, TIME, TID, HOLDER };

	if (!other || other == (uint32_t)getpid() || !dir) {
		fprintf(stderr, "usage: ARGUS_RUN_DIR=D interpose_forge OTHER_PID\n");
		return 2;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/interpose.sock", dir);
	/* 1. refused */
	send_reg(ring_fd(AIP_RING_BYTES, 0), "register 1");
	send_reg(ring_fd(AIP_RING_BYTES + 4096, 1), "register 1");
	send_reg(-1, "register 1");
	if (pipe(p))
		return 1;
	send_reg(p[0], "register 1");
	/* 2. the good registration */
	fd = ring_fd(AIP_RING_BYTES, 1);
	m = mmap(NULL, AIP_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	hdr = m;
	slots = (struct aip_rec *)((char *)m + AIP_HDR_BYTES);
	hdr->magic = AIP_MAGIC;
	hdr->version = AIP_VERSION;
	send_reg(fd, "register 1");
	usleep(200000);

	put(good(AIP_MUTEX_WAIT, 0)); valid++;
	put(good(AIP_MUTEX_ACQUIRED, 0)); valid++;
	put(good(AIP_MUTEX_WAKE, 0)); valid++;

	r = good(AIP_MUTEX_WAKE, 0); r.size = 63; put(r); bad[SIZE]++;
	r = good(AIP_MUTEX_WAKE, 0); r.type = 0; put(r); bad[TYPE]++;
	r = good(AIP_MUTEX_WAKE, 0); r.type = 99; put(r); bad[TYPE]++;
	r = good(AIP_MUTEX_WAKE, 0); r.flags = 1; put(r); bad[FIELD]++;
	r = good(AIP_MUTEX_WAKE, 0); r.reserved[7] = 1; put(r); bad[FIELD]++;
	r = good(AIP_MUTEX_WAKE, 0); r.addr = 0; put(r); bad[FIELD]++;
	r = good(AIP_MUTEX_WAKE, 5); put(r); bad[FIELD]++;
	r = good(AIP_MUTEX_ACQUIRED, 99999); put(r); bad[FIELD]++;
	r = good(AIP_MUTEX_WAKE, 0); r.ts += 10ull * 1000000000; put(r); bad[TIME]++;
	r = good(AIP_MUTEX_WAKE, 0); r.ts -= 60ull * 1000000000; put(r); bad[TIME]++;
	r = good(AIP_MUTEX_WAKE, 0); r.ts = UINT64_MAX - 5; put(r); bad[TIME]++;
	r = good(AIP_MUTEX_WAKE, 0); r.tid = 1; put(r); bad[TID]++;
	r = good(AIP_MUTEX_WAKE, 0); r.tid = other; put(r); bad[TID]++;
	r = good(AIP_MUTEX_WAKE, 0); r.tid = 0; put(r); bad[TID]++;
	r = good(AIP_MUTEX_WAIT, other); put(r); bad[HOLDER]++;
	r = good(AIP_MUTEX_WAIT, 1); put(r); bad[HOLDER]++;
	/* 3. head backwards, once argusd has read up to here */
	usleep(500000);
	hdr->head = 1;
	bad[FIELD]++;
	usleep(500000);
	for (int i = 1; i <= HOLDER; i++)
		forged += bad[i];
	printf("PID=%d\nVALID=%d\nFORGED=%d\nREFUSED=4\n", getpid(), valid, forged);
	printf("BAD_bad_size=%d\nBAD_bad_type=%d\nBAD_bad_field=%d\nBAD_bad_time=%d\n"
	       "BAD_bad_tid=%d\nBAD_bad_holder=%d\n",
	       bad[SIZE], bad[TYPE], bad[FIELD], bad[TIME], bad[TID], bad[HOLDER]);
	return 0;
}
