/* ipshare.c - one user against the interposer's capacity (issue 25, F6;
 * sec_interpose_share.sh).  Speaks the registration protocol itself (a
 * sealed memfd ring, "register 1"), like tests/apps/interpose_forge.
 *   ipshare hold RUNDIR N      N processes each register a good ring and
 *                              sleep until the parent dies; prints "sent N"
 *   ipshare flood RUNDIR N MS  N processes each register, then write valid
 *                              records (MUTEX_WAKE, varied addresses) as
 *                              fast as they can for MS ms; prints
 *                              "WROTE total" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS 1024
#define HDR 4096
#define RING_BYTES (HDR + NSLOTS * 64)

struct rec {
	uint64_t seq, ts, addr;
	uint32_t tid, other;
	uint16_t type, size, cpu, flags;
	uint64_t arg;
	uint8_t reserved[16];
};

static char sockpath[100];

static uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* a sealed ring, registered; its mapping in *map.  0 or -1 */
static int reg(void **map)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int m = memfd_create("argus-interpose", MFD_CLOEXEC | MFD_ALLOW_SEALING), s;
	char msg[] = "register 1";
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { msg, sizeof(msg) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			     .msg_controllen = sizeof(cm.b) };

	if (m < 0 || ftruncate(m, RING_BYTES) ||
	    fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	*map = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (*map == MAP_FAILED)
		return -1;
	memset(&cm, 0, sizeof(cm));
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &m, sizeof(int));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sockpath);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return -1;
	close(s);
	return 0;
}

static void put(void *map, uint64_t addr, uint32_t tid)
{
	_Atomic uint64_t *head = (_Atomic uint64_t *)((char *)map + 64);
	uint64_t r = atomic_fetch_add(head, 1);
	struct rec *s = (struct rec *)((char *)map + HDR) + (r % NSLOTS);

	atomic_store((_Atomic uint64_t *)&s->seq, 0);
	s->ts = mono();
	s->addr = addr;
	s->tid = tid;
	s->other = 0;
	s->type = 3; /* AIP_MUTEX_WAKE */
	s->size = 64;
	s->cpu = 0;
	s->flags = 0;
	s->arg = 0;
	memset(s->reserved, 0, sizeof(s->reserved));
	atomic_store((_Atomic uint64_t *)&s->seq, r + 1);
}

int main(int argc, char **argv)
{
	int n, p[2];
	long ms = 0;
	unsigned long long total = 0;

	if (argc < 4)
		return 2;
	snprintf(sockpath, sizeof(sockpath), "%s/interpose.sock", argv[2]);
	n = atoi(argv[3]);
	if (argc > 4)
		ms = atol(argv[4]);
	if (pipe(p))
		return 1;
	for (int i = 0; i < n; i++) {
		if (fork() != 0)
			continue;
		void *map;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		/* argusd may drop a connection it accepted before its
		 * message came (the send then fails): try again, as an
		 * attacker would */
		int tries = 0;
		while (reg(&map) && ++tries < 20)
			usleep(50000);
		if (tries == 20)
			_exit(1);
		if (!strcmp(argv[1], "hold")) {
			if (write(p[1], "r", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		usleep(200000); /* registered before the flood */
		uint32_t tid = (uint32_t)syscall(SYS_gettid);
		uint64_t end = mono() + (uint64_t)ms * 1000000ull, k = 0;
		while (mono() < end)
			for (int j = 0; j < 256; j++, k++)
				put(map, 0x1000 + ((k * 0x9E3779B97F4A7C15ull) >> 16), tid);
		if (write(p[1], &k, sizeof(k)) != sizeof(k))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (!strcmp(argv[1], "hold")) {
		char c;
		int got = 0;
		while (got < n && read(p[0], &c, 1) == 1)
			got++;
		printf("sent %d pid %d\n", got, (int)getpid());
		fflush(stdout);
		pause(); /* the holders live as long as we do */
		return 0;
	}
	for (uint64_t k; read(p[0], &k, sizeof(k)) == sizeof(k);)
		total += k;
	while (wait(NULL) > 0)
		;
	printf("WROTE %llu\n", total);
	return 0;
}
