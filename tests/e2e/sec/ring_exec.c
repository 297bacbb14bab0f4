/* ring_exec.c - a ring registered by one image, written for another (issue
 * 25, F4; tests/e2e/sec_interpose_exec.sh).  Run as nobody:
 *
 *   ring_exec RUNDIR SUID GOFILE
 *
 * registers a ring with the argusd of RUNDIR (speaking the protocol
 * itself), writes 10 true records (WORK_BEGIN, item 0x1000+i, its own
 * tid), prints "PID n" and waits for GOFILE to exist (the test has seen
 * them taken).  Then a forked child keeps the ring, and this process
 * execs SUID ("SUID 3", setuid root): the same pid, now root's.  Once
 * the exec shows (euid 0) and 300 ms more, the child writes 200 records
 * in its name (WORK_BEGIN, item 0xdead0000+i, tid = that pid) 2 ms
 * apart, prints "WROTE 200" and exits.  argusd must refuse them all. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS 1024
#define HDR 4096
#define RING_BYTES (HDR + NSLOTS * 64)
#define WORK_BEGIN 17           /* AIP_WORK_BEGIN */

struct rec {
	uint64_t seq, ts, addr;
	uint32_t tid, other;
	uint16_t type, size, cpu, flags;
	uint64_t arg;
	uint8_t reserved[16];
};

static uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void put(void *map, uint64_t addr, uint32_t tid)
{
	_Atomic uint64_t *head = (_Atomic uint64_t *)((char *)map + 64);
	uint64_t r = atomic_fetch_add(head, 1);
	struct rec *s = (struct rec *)((char *)map + HDR) + (r % NSLOTS);

	atomic_store((_Atomic uint64_t *)&s->seq, 0);
	memset((char *)s + 8, 0, sizeof(*s) - 8);
	s->ts = mono();
	s->addr = addr;
	s->tid = tid;
	s->type = WORK_BEGIN;
	s->size = 64;
	atomic_store((_Atomic uint64_t *)&s->seq, r + 1);
}

static int euid_of(pid_t p)
{
	char path[64], line[256];
	unsigned r, e;
	int euid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)p);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2)
			euid = (int)e;
	fclose(f);
	return euid;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { "register 1", 10 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			     .msg_controllen = sizeof(cm.b) };
	pid_t me = getpid();
	uint32_t *h;
	void *map;
	int m, s;

	if (argc != 4) {
		fprintf(stderr, "usage: ring_exec RUNDIR SUID GOFILE\n");
		return 2;
	}
	m = memfd_create("argus-interpose", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m < 0 || ftruncate(m, RING_BYTES) ||
	    fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return 1;
	map = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (map == MAP_FAILED)
		return 1;
	h = map;
	h[0] = 0x31504941u;
	h[1] = 1;
	h[2] = NSLOTS;
	h[3] = 64;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/interpose.sock", argv[1]);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		return 1;
	}
	memset(&cm, 0, sizeof(cm));
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &m, sizeof(int));
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		perror("sendmsg");
		return 1;
	}
	close(s);
	usleep(300000);         /* registered by now (argusd's loop: ~50 ms) */
	for (int i = 0; i < 10; i++)
		put(map, 0x1000 + i, (uint32_t)me);
	printf("PID %d\n", (int)me);
	fflush(stdout);
	for (int i = 0; access(argv[3], F_OK); i++) {
		if (i > 3000)
			return 3;
		usleep(10000);
	}
	if (fork() == 0) {
		for (int i = 0; euid_of(me) != 0; i++) {
			if (i > 500)
				_exit(4);
			usleep(10000);
		}
		usleep(300000);
		for (int i = 0; i < 200; i++) {
			put(map, 0xdead0000u + i, (uint32_t)me);
			usleep(2000);
		}
		printf("WROTE 200\n");
		fflush(stdout);
		_exit(0);
	}
	{
		char *av[] = { argv[2], "3", NULL };

		execv(argv[2], av);
	}
	perror("execv");
	return 1;
}
