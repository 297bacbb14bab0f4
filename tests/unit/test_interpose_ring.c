/* test_interpose_ring.c - argusd's reader of the interposer's ring
 * (collector/interpose_ring.c) on hand-made bytes: one record per reject
 * reason, the ring's lap / unpublished-slot / head-backwards handling,
 * and the per-drain bound; and the registry's socket: a client accepted
 * before it sent its registration is still registered, one that never
 * sends is refused after a few rounds; a ring whose process execed has
 * every later record refused (after_exec); a uid other than root's is held
 * to ARGUS_IP_UID_RATE records a second, the rest dropped and counted. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "interpose_ring.h"

#define PID 100
#define NOW 50000000000ull

static uint8_t ring[AIP_RING_BYTES] __attribute__((aligned(64)));

static int tid_ok(void *ctx, uint32_t tid)
{
	(void)ctx;
	return tid == 100 || tid == 101;        /* the process's threads */
}

static const struct argus_ip_check K = { .now_ns = NOW, .pid = PID, .ncpus = 2,
					 .tid_ok = tid_ok };

static struct aip_rec rec(uint16_t type, uint32_t tid, uint32_t other)
{
	struct aip_rec r = { 0 };

	r.ts = NOW - 1000;
	r.addr = 0x7000;
	r.tid = tid;
	r.other = other;
	r.type = type;
	r.size = sizeof(r);
	return r;
}

static int parse(struct aip_rec r)
{
	struct argus_event ev;

	return argus_ip__parse(&r, sizeof(r), &K, &ev);
}

static void test_parse(void)
{
	struct aip_rec r = rec(AIP_MUTEX_WAIT, 100, 101);
	struct argus_event ev;

	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_MUTEX_WAIT);
	CHECK_EQ(ev.pid, PID);
	CHECK_EQ(ev.tid, 100);
	CHECK_EQ(ev.f[ARGUS_F_MX_ADDR], 0x7000);
	CHECK_EQ(ev.f[ARGUS_F_MX_OTHER], 101);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r) - 1, &K, &ev), ARGUS_IP_BAD_SIZE);
	CHECK_EQ(parse(rec(AIP_MUTEX_ACQUIRED, 101, 0)), ARGUS_IP_OK);
	CHECK_EQ(parse(rec(AIP_MUTEX_WAKE, 101, 0)), ARGUS_IP_OK);

	r = rec(AIP_MUTEX_WAKE, 100, 0); r.size = 32;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_SIZE);
	CHECK_EQ(parse(rec(0, 100, 0)), ARGUS_IP_BAD_TYPE);
	CHECK_EQ(parse(rec(AIP_TYPE_MAX, 100, 0)), ARGUS_IP_BAD_TYPE);
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.reserved[15] = 1;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_FIELD);
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.cpu = 2;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec(AIP_MUTEX_WAKE, 100, 7)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec(AIP_MUTEX_ACQUIRED, 100, 5000)), ARGUS_IP_BAD_FIELD);
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.ts = NOW + ARGUS_IP_MAX_AHEAD_NS + 1;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_TIME);
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.ts = NOW - ARGUS_IP_MAX_AGE_NS - 1;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_TIME);
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.ts = UINT64_MAX;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_TIME);
	CHECK_EQ(parse(rec(AIP_MUTEX_WAKE, 1, 0)), ARGUS_IP_BAD_TID);
	CHECK_EQ(parse(rec(AIP_MUTEX_WAKE, 0, 0)), ARGUS_IP_BAD_TID);
	CHECK_EQ(parse(rec(AIP_MUTEX_WAIT, 100, 1)), ARGUS_IP_BAD_HOLDER);
	CHECK(argus_ip_reject_str(ARGUS_IP_BAD_HOLDER) &&
	      !strcmp(argus_ip_reject_str(ARGUS_IP_BAD_HOLDER), "bad_holder"));
}

/* Work items (AIP_WORK_*): item, kind, callback; a boundary has a tag only. */
static void test_parse_work(void)
{
	struct aip_rec r = rec(AIP_WORK_BEGIN, 101, AIP_WORK_POOL);
	struct argus_event ev;

	r.arg = 0x401230;
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_WORK_BEGIN);
	CHECK_EQ(ev.pid, PID);
	CHECK_EQ(ev.tid, 101);
	CHECK_EQ(ev.f[ARGUS_F_WI_ITEM], 0x7000);
	CHECK_EQ(ev.f[ARGUS_F_WI_FN], 0x401230);
	CHECK_EQ(ev.f[ARGUS_F_WI_KIND], AIP_WORK_POOL);
	r.type = AIP_WORK_ENQUEUE;
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_WORK_ENQUEUE);
	r.type = AIP_WORK_END;
	r.arg = 0;              /* callback unknown */
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_WORK_END);
	CHECK_EQ(ev.f[ARGUS_F_WI_FN], 0);
	/* an unknown maker, an item 0 */
	CHECK_EQ(parse(rec(AIP_WORK_BEGIN, 100, AIP_WORK_KIND_MAX)), ARGUS_IP_BAD_FIELD);
	r = rec(AIP_WORK_ENQUEUE, 100, AIP_WORK_TASK); r.addr = 0;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_FIELD);
	/* a boundary: the tag, nothing else */
	r = rec(AIP_WORK_BOUNDARY, 100, AIP_WORK_API);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_WORK_BOUNDARY);
	CHECK_EQ(ev.f[ARGUS_F_WI_ITEM], 0x7000);
	CHECK_EQ(ev.f[ARGUS_F_WI_FN] | ev.f[ARGUS_F_WI_KIND], 0);
	r.arg = 5;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec(AIP_WORK_BOUNDARY, 100, AIP_WORK_POOL)), ARGUS_IP_BAD_FIELD);
	/* a number of the work records' range (16..23) that names no record */
	CHECK_EQ(parse(rec(23, 100, 0)), ARGUS_IP_BAD_TYPE);
	/* the mutex records still take no third field */
	r = rec(AIP_MUTEX_WAKE, 100, 0); r.arg = 1;
	CHECK_EQ(parse(r), ARGUS_IP_BAD_FIELD);
}

static struct aip_rec *slot(uint64_t i)
{
	return (struct aip_rec *)(ring + AIP_HDR_BYTES) + i % AIP_NSLOTS;
}

static void set_head(uint64_t h)
{
	((struct aip_ring_hdr *)ring)->head = h;
}

static void publish(uint64_t i, struct aip_rec r)
{
	r.seq = i + 1;
	*slot(i) = r;
}

static int count_emit(void *ctx, const struct argus_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return 0;
}

/* rwlock, semaphore and condvar records: stored as AE_MUTEX_* with their
 * kind and third field; each field rule rejects what it must. */
static struct aip_rec rec_arg(uint16_t type, uint32_t tid, uint32_t other, uint64_t arg)
{
	struct aip_rec r = rec(type, tid, other);

	r.arg = arg;
	return r;
}

static void test_sync(void)
{
	struct aip_rec r = rec_arg(AIP_RW_RDWAIT, 100, 101, 3);
	struct argus_event ev;

	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_MUTEX_WAIT);
	CHECK_EQ(ev.f[ARGUS_F_MX_KIND], AE_SYNC_RDLOCK);
	CHECK_EQ(ev.f[ARGUS_F_MX_OTHER], 101);
	CHECK_EQ(ev.f[ARGUS_F_MX_ARG], 3);
	r = rec_arg(AIP_RW_WRUNLOCK, 101, 0, 0);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_MUTEX_WAKE);
	CHECK_EQ(ev.f[ARGUS_F_MX_KIND], AE_SYNC_WRLOCK);
	r = rec_arg(AIP_SEM_POST, 101, 2, 0);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_MUTEX_WAKE);
	CHECK_EQ(ev.f[ARGUS_F_MX_KIND], AE_SYNC_SEM);
	CHECK_EQ(ev.f[ARGUS_F_MX_OTHER], 2);
	r = rec_arg(AIP_COND_WAIT, 100, 0, 0x8000);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.type, AE_MUTEX_WAIT);
	CHECK_EQ(ev.f[ARGUS_F_MX_KIND], AE_SYNC_COND);
	CHECK_EQ(ev.f[ARGUS_F_MX_ARG], 0x8000);
	r = rec_arg(AIP_COND_SIGNAL, 101, 1, 1);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.f[ARGUS_F_MX_ARG], 1);
	/* a mutex record still reads as kind 0 */
	r = rec(AIP_MUTEX_WAIT, 100, 101);
	CHECK_EQ(argus_ip__parse(&r, sizeof(r), &K, &ev), ARGUS_IP_OK);
	CHECK_EQ(ev.f[ARGUS_F_MX_KIND], AE_SYNC_MUTEX);

	CHECK_EQ(parse(rec_arg(AIP_RW_WRWAIT, 100, 0, 0)), ARGUS_IP_OK);
	CHECK_EQ(parse(rec_arg(AIP_RW_WRWAIT, 100, 100, 0)), ARGUS_IP_OK);  /* EDEADLK */
	CHECK_EQ(parse(rec_arg(AIP_RW_WRWAIT, 100, 1, 0)), ARGUS_IP_BAD_HOLDER);
	CHECK_EQ(parse(rec_arg(AIP_RW_RDWAIT, 100, 0, 1u << 29)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_RW_RDACQUIRED, 100, 4096, 0)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_RW_WRACQUIRED, 100, 0, 1)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_RW_RDUNLOCK, 100, 1, 0)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_RW_WRUNLOCK, 100, 0, 1)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_SEM_WAIT, 100, 101, 0)), ARGUS_IP_BAD_FIELD);  /* no holder */
	CHECK_EQ(parse(rec_arg(AIP_SEM_ACQUIRED, 100, 110, 0)), ARGUS_IP_OK);    /* ETIMEDOUT */
	CHECK_EQ(parse(rec_arg(AIP_SEM_POST, 100, 0, 0)), ARGUS_IP_BAD_FIELD);   /* no waiter */
	CHECK_EQ(parse(rec_arg(AIP_SEM_POST, 100, 1u << 31, 0)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_COND_WAIT, 100, 0, 0)), ARGUS_IP_BAD_FIELD);  /* no mutex */
	CHECK_EQ(parse(rec_arg(AIP_COND_WAIT, 100, 101, 0x8000)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_COND_RETURN, 100, 110, 0x8000)), ARGUS_IP_OK);
	CHECK_EQ(parse(rec_arg(AIP_COND_RETURN, 100, 5000, 0x8000)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_COND_SIGNAL, 100, 1, 2)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_COND_SIGNAL, 100, 0, 0)), ARGUS_IP_BAD_FIELD);
	CHECK_EQ(parse(rec_arg(AIP_COND_SIGNAL, 1, 1, 0)), ARGUS_IP_BAD_TID);
	CHECK_EQ(parse(rec_arg(AIP_TYPE_MAX, 100, 0, 0)), ARGUS_IP_BAD_TYPE);
}

static void test_drain(void)
{
	struct argus_ip_stats st = { 0 };
	uint64_t tail = 0;
	uint32_t stuck = 0;
	int n = 0;

	memset(ring, 0, sizeof(ring));
	/* 3 published, then one reserved but unpublished */
	for (uint64_t i = 0; i < 3; i++)
		publish(i, rec(AIP_MUTEX_WAKE, 100, 0));
	set_head(4);
	CHECK_EQ(argus_ip__drain_buffer(ring, &tail, &stuck, false, &K, count_emit, &n, &st), 0);
	CHECK_EQ(n, 3);
	CHECK_EQ(tail, 3);
	CHECK_EQ(st.records, 3);
	CHECK_EQ(st.lost, 0);
	/* the unpublished slot is waited for while the writer lives... */
	argus_ip__drain_buffer(ring, &tail, &stuck, false, &K, count_emit, &n, &st);
	CHECK_EQ(tail, 3);
	/* ...and given up once it is dead */
	argus_ip__drain_buffer(ring, &tail, &stuck, true, &K, count_emit, &n, &st);
	CHECK_EQ(tail, 4);
	CHECK_EQ(st.lost, 1);

	/* a writer that lapped the reader: the overwritten slots are lost */
	memset(&st, 0, sizeof(st));
	n = 0;
	for (uint64_t i = 4; i < 4 + AIP_NSLOTS + 10; i++)
		publish(i, rec(AIP_MUTEX_WAKE, 101, 0));
	set_head(4 + AIP_NSLOTS + 10);
	argus_ip__drain_buffer(ring, &tail, &stuck, false, &K, count_emit, &n, &st);
	CHECK_EQ(st.lost, 10);
	CHECK_EQ(n, AIP_NSLOTS);
	CHECK_EQ(tail, 4 + AIP_NSLOTS + 10);

	/* head going backwards: one invalid, the cursor follows it */
	memset(&st, 0, sizeof(st));
	set_head(2);
	argus_ip__drain_buffer(ring, &tail, &stuck, false, &K, count_emit, &n, &st);
	CHECK_EQ(st.invalid, 1);
	CHECK_EQ(st.by_reason[ARGUS_IP_BAD_FIELD], 1);
	CHECK_EQ(tail, 2);

	/* a forged huge head: a ring's worth at most is read, bounded */
	memset(&st, 0, sizeof(st));
	tail = 0;
	set_head(UINT64_MAX - 1);
	argus_ip__drain_buffer(ring, &tail, &stuck, true, &K, count_emit, &n, &st);
	CHECK_EQ(st.by_reason[ARGUS_IP_BAD_FIELD], 1);
	CHECK(st.records + st.invalid + st.lost <= AIP_NSLOTS + 1);
	CHECK(tail == UINT64_MAX - 1);
	/* a garbage slot with the right seq is parsed and rejected */
	memset(ring, 0, sizeof(ring));
	memset(&st, 0, sizeof(st));
	tail = 0;
	memset(slot(0), 0xff, sizeof(struct aip_rec));
	slot(0)->seq = 1;
	set_head(1);
	argus_ip__drain_buffer(ring, &tail, &stuck, false, &K, count_emit, &n, &st);
	CHECK_EQ(st.invalid, 1);
	CHECK_EQ(st.records, 0);
}

/* "register 1" with mfd. */
static int send_ring(int sfd, int mfd)
{
	char msg[] = "register 1";
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { msg, sizeof(msg) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };

	memset(&cm, 0, sizeof(cm));
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.h), &mfd, sizeof(int));
	return sendmsg(sfd, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -1;
}

/* A real registration: a sealed memfd of the ring's size, "register 1";
 * its writable mapping in *map when map is not NULL. */
static int send_registration_mapped(int sfd, void **map)
{
	int mfd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING), rc;

	if (mfd < 0 || ftruncate(mfd, AIP_RING_BYTES) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	if (map && (*map = mmap(NULL, AIP_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd,
				0)) == MAP_FAILED)
		return -1;
	rc = send_ring(sfd, mfd);
	close(mfd);
	return rc;
}

static int send_registration(int sfd)
{
	return send_registration_mapped(sfd, NULL);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_accept_before_send(void)
{
	char dir[] = "/tmp/argus-ipreg-XXXXXX", path[64], msg[256];
	struct argus_ip_registry *r;
	struct argus_ip_stats st;
	int late, never;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/interpose.sock", dir);
	r = argus_ip_registry__new(path, 2, msg, sizeof(msg));
	CHECK(r != NULL);
	if (!r)
		return;
	late = connect_to(path);
	never = connect_to(path);
	CHECK(late >= 0 && never >= 0);
	/* both accepted with nothing to read yet: neither refused */
	argus_ip_registry__accept(r);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(st.registered, 0);
	CHECK_EQ(st.refused, 0);
	/* the late one sends: registered at the next round */
	CHECK_EQ(send_registration(late), 0);
	argus_ip_registry__accept(r);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(st.registered, 1);
	CHECK_EQ(st.procs, 1);
	CHECK_EQ(st.refused, 0);
	/* the silent one is given up on after a few rounds, not at once */
	for (int i = 0; i < 7; i++)
		argus_ip_registry__accept(r);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(st.refused, 1);
	close(late);
	close(never);
	argus_ip_registry__free(r);
	rmdir(dir);
}

static uint64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Write a record for tid into the shared ring at index i. */
static void put_shared(uint8_t *map, uint64_t i, uint32_t tid)
{
	struct aip_rec r = rec(AIP_WORK_BEGIN, tid, AIP_WORK_POOL);

	r.ts = mono_now();
	r.seq = i + 1;
	((struct aip_rec *)(map + AIP_HDR_BYTES))[i % AIP_NSLOTS] = r;
	((struct aip_ring_hdr *)map)->head = i + 1;
}

/* Issue 25 F4: a child registers a ring this process keeps mapped, then
 * execs sleep; records written for it afterwards are refused and counted
 * (after_exec), the ones before are taken. */
static void test_exec_drops_ring(void)
{
	char dir[] = "/tmp/argus-ipreg-XXXXXX", path[64], msg[256], exe[256], p[64];
	struct argus_ip_registry *r;
	struct argus_ip_stats st;
	int mfd, go[2], n = 0;
	uint8_t *map;
	pid_t c;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/interpose.sock", dir);
	r = argus_ip_registry__new(path, 2, msg, sizeof(msg));
	mfd = memfd_create("t", MFD_ALLOW_SEALING);
	CHECK(r && mfd >= 0 && !pipe(go));
	if (!r || mfd < 0)
		return;
	CHECK(!ftruncate(mfd, AIP_RING_BYTES) &&
	      !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
	map = mmap(NULL, AIP_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	CHECK(map != MAP_FAILED);
	c = fork();
	if (c == 0) {
		int s = connect_to(path);
		char b;

		if (s < 0 || send_ring(s, mfd))
			_exit(1);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(1);
	}
	for (int i = 0; i < 200; i++) {
		argus_ip_registry__accept(r);
		argus_ip_registry__stats(r, &st);
		if (st.registered)
			break;
		usleep(5000);
	}
	CHECK_EQ(st.registered, 1);
	put_shared(map, 0, (uint32_t)c);
	argus_ip_registry__drain(r, count_emit, &n);
	CHECK_EQ(n, 1);                 /* the registering image's record */
	CHECK_EQ(write(go[1], "g", 1), 1);
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)c);
	for (int i = 0; i < 400; i++) {
		ssize_t k = readlink(p, exe, sizeof(exe) - 1);

		if (k > 0 && (exe[k] = 0, strstr(exe, "sleep")))
			break;
		usleep(5000);
	}
	usleep(ARGUS_IP_IDENT_NS / 1000 + 20000);       /* past the next check */
	for (uint64_t i = 1; i <= 3; i++)
		put_shared(map, i, (uint32_t)c);
	argus_ip_registry__drain(r, count_emit, &n);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(n, 1);
	CHECK_EQ(st.by_reason[ARGUS_IP_AFTER_EXEC], 3);
	CHECK(argus_ip_reject_str(ARGUS_IP_AFTER_EXEC) &&
	      !strcmp(argus_ip_reject_str(ARGUS_IP_AFTER_EXEC), "after_exec"));
	/* and so on, while the process lives */
	put_shared(map, 4, (uint32_t)c);
	argus_ip_registry__peek(r, count_emit, &n);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(n, 1);
	CHECK_EQ(st.by_reason[ARGUS_IP_AFTER_EXEC], 4);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	munmap(map, AIP_RING_BYTES);
	close(mfd);
	close(go[0]);
	close(go[1]);
	argus_ip_registry__free(r);
	rmdir(dir);
}

static int count_event(void *ctx, const struct argus_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

/* nobody's process registers and writes a ring's worth of valid records
 * per round, as fast as argusd drains: past its second's budget, argusd
 * takes ARGUS_IP_UID_RATE a second and drops the rest unread (counted). */
static void test_uid_budget(void)
{
	enum { ROUNDS = 80 };
	char dir[] = "/tmp/argus-ipbud-XXXXXX", path[64], msg[256];
	struct argus_ip_registry *r;
	struct argus_ip_stats st;
	int go[2], done[2];
	uint64_t got = 0, t0, t1;
	pid_t c;
	char b;

	if (geteuid() != 0) {
		printf("  (skipped: registering as another uid needs root)\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/interpose.sock", dir);
	r = argus_ip_registry__new(path, 0, msg, sizeof(msg));
	CHECK(r != NULL);
	if (!r || pipe(go) || pipe(done))
		return;
	c = fork();
	if (c == 0) {
		void *map = NULL;
		int sfd;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		sfd = connect_to(path);
		if (sfd < 0 || send_registration_mapped(sfd, &map))
			_exit(1);
		close(sfd);
		_Atomic uint64_t *head = (_Atomic uint64_t *)((char *)map +
					 offsetof(struct aip_ring_hdr, head));
		struct aip_rec *slots = (struct aip_rec *)((char *)map + AIP_HDR_BYTES);
		for (int round = 0; round < ROUNDS; round++) {
			for (int i = 0; i < AIP_NSLOTS; i++) {
				uint64_t n = atomic_fetch_add(head, 1);
				struct aip_rec x = rec(AIP_MUTEX_WAKE, (uint32_t)getpid(), 0);

				x.ts = mono_now();
				x.seq = n + 1;
				slots[n % AIP_NSLOTS] = x;
			}
			if (write(done[1], "d", 1) != 1 || read(go[0], &b, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	t0 = mono_now();
	for (int round = 0; round < ROUNDS; round++) {
		if (read(done[0], &b, 1) != 1)
			break;
		argus_ip_registry__accept(r);
		argus_ip_registry__drain(r, count_event, &got);
		if (write(go[1], "g", 1) != 1)
			break;
	}
	t1 = mono_now();
	waitpid(c, NULL, 0);
	argus_ip_registry__drain(r, count_event, &got);
	argus_ip_registry__stats(r, &st);
	CHECK_EQ(st.registered, 1);
	CHECK_EQ(st.records, got);
	/* every record taken or dropped over budget, none lost */
	CHECK_EQ(st.records + st.over_budget, ROUNDS * AIP_NSLOTS);
	CHECK_EQ(st.lost, 0);
	/* a second's burst, then the rate */
	CHECK(st.records >= ARGUS_IP_UID_RATE);
	CHECK(st.records <= ARGUS_IP_UID_RATE + (t1 - t0) * ARGUS_IP_UID_RATE / 1000000000ull + 1);
	CHECK(st.over_budget > 0);
	argus_ip_registry__free(r);
	rmdir(dir);
}

int main(void)
{
	RUN(test_parse);
	RUN(test_sync);
	RUN(test_parse_work);
	RUN(test_drain);
	RUN(test_accept_before_send);
	RUN(test_exec_drops_ring);
	RUN(test_uid_budget);
	return check_report();
}
