/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interpose_ring.c - see interpose_ring.h (threat model) and
 * docs/interposer.md.
 *
 * Reading a ring (the writer is untrusted and concurrent):
 *   - r->tail is argusd's own cursor, never stored in the shared pages;
 *   - head is read once per drain; a head behind tail (it can only grow)
 *     resynchronises on it and counts one invalid record; more than a
 *     ring's worth ahead means the writer lapped us: the overwritten
 *     slots are counted lost;
 *   - slot tail % N must have seq == tail + 1.  Less: not published yet
 *     (a writer between its reservation and its commit): wait, but not
 *     forever (a writer killed there leaves the slot unpublished), and
 *     not at all once the process is dead.  More: already overwritten,
 *     lost;
 *   - the slot is copied, then seq is read again: a change means the
 *     copy may be torn, and it is dropped.
 */
#include "interpose_ring.h"
#include "interpose_sync.h"
#include "proc_creds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct aip_rec) == 64, "aip_rec is one cache line");
_Static_assert(offsetof(struct aip_ring_hdr, head) == 64, "head on its own line");
_Static_assert(AIP_HDR_BYTES + AIP_NSLOTS * sizeof(struct aip_rec) == AIP_RING_BYTES,
	       "ring size");

#define TID_CACHE 64
#define IDENT_CREDS 160         /* the Uid: and Gid: lines of a status */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5 */
#endif
/* drains (about 50 ms each) an unpublished slot is waited for */
#define STUCK_DRAINS 20
/* registrations taken per accept call: a flood of connections cannot
 * hold argusd's loop */
#define ACCEPT_MAX 16

const char *argus_ip_reject_str(unsigned reason)
{
	static const char *const n[] = {
		[ARGUS_IP_OK] = "ok", [ARGUS_IP_BAD_SIZE] = "bad_size",
		[ARGUS_IP_BAD_TYPE] = "bad_type", [ARGUS_IP_BAD_FIELD] = "bad_field",
		[ARGUS_IP_BAD_TIME] = "bad_time", [ARGUS_IP_BAD_TID] = "bad_tid",
		[ARGUS_IP_BAD_HOLDER] = "bad_holder", [ARGUS_IP_TORN] = "torn",
		[ARGUS_IP_AFTER_EXEC] = "after_exec",
	};
	return reason < ARGUS_IP_REJECT_MAX ? n[reason] : NULL;
}

int argus_ip__parse(const void *slot, size_t len, const struct argus_ip_check *k,
		    struct argus_event *ev)
{
	static const uint16_t ae_of[AIP_TYPE_MAX] = {
		[AIP_MUTEX_WAIT] = AE_MUTEX_WAIT,
		[AIP_MUTEX_ACQUIRED] = AE_MUTEX_ACQUIRED,
		[AIP_MUTEX_WAKE] = AE_MUTEX_WAKE,
		[AIP_RW_RDWAIT] = AE_MUTEX_WAIT, [AIP_RW_WRWAIT] = AE_MUTEX_WAIT,
		[AIP_RW_RDACQUIRED] = AE_MUTEX_ACQUIRED,
		[AIP_RW_WRACQUIRED] = AE_MUTEX_ACQUIRED,
		[AIP_RW_RDUNLOCK] = AE_MUTEX_WAKE, [AIP_RW_WRUNLOCK] = AE_MUTEX_WAKE,
		[AIP_SEM_WAIT] = AE_MUTEX_WAIT, [AIP_SEM_ACQUIRED] = AE_MUTEX_ACQUIRED,
		[AIP_SEM_POST] = AE_MUTEX_WAKE,
		[AIP_COND_WAIT] = AE_MUTEX_WAIT, [AIP_COND_RETURN] = AE_MUTEX_ACQUIRED,
		[AIP_COND_SIGNAL] = AE_MUTEX_WAKE,
		[AIP_WORK_ENQUEUE] = AE_WORK_ENQUEUE,
		[AIP_WORK_BEGIN] = AE_WORK_BEGIN,
		[AIP_WORK_END] = AE_WORK_END,
		[AIP_WORK_BOUNDARY] = AE_WORK_BOUNDARY,
	};
	struct aip_rec r;
	struct argus_event e;

	if (len < sizeof(r))
		return ARGUS_IP_BAD_SIZE;
	memcpy(&r, slot, sizeof(r));
	if (r.size != sizeof(r))
		return ARGUS_IP_BAD_SIZE;
	if (r.type == 0 || r.type >= AIP_TYPE_MAX || !ae_of[r.type])
		return ARGUS_IP_BAD_TYPE;
	if (r.flags || !r.addr || (k->ncpus && r.cpu >= k->ncpus))
		return ARGUS_IP_BAD_FIELD;
	for (size_t i = 0; i < sizeof(r.reserved); i++)
		if (r.reserved[i])
			return ARGUS_IP_BAD_FIELD;
	switch (r.type) {
	case AIP_WORK_ENQUEUE:  /* kind; arg = the callback, any address */
	case AIP_WORK_BEGIN:
	case AIP_WORK_END:
		if (r.other >= AIP_WORK_KIND_MAX)
			return ARGUS_IP_BAD_FIELD;
		break;
	case AIP_WORK_BOUNDARY:
		if (r.other != AIP_WORK_API || r.arg)
			return ARGUS_IP_BAD_FIELD;
		break;
	default:
		if (argus_ip__is_sync(r.type)) {
			/* rwlock, semaphore, condvar: their own field rules */
			if (!argus_ip__sync_fields_ok(&r))
				return ARGUS_IP_BAD_FIELD;
			break;
		}
		/* a mutex record: no third field; WAKE has no second one,
		 * ACQUIRED's is an errno */
		if (r.arg || (r.type == AIP_MUTEX_WAKE && r.other) ||
		    (r.type == AIP_MUTEX_ACQUIRED && r.other >= 4096))
			return ARGUS_IP_BAD_FIELD;
	}
	if (r.ts > k->now_ns + ARGUS_IP_MAX_AHEAD_NS ||
	    r.ts + ARGUS_IP_MAX_AGE_NS < k->now_ns || r.ts + ARGUS_IP_MAX_AGE_NS < r.ts)
		return ARGUS_IP_BAD_TIME;
	if (!r.tid || !k->tid_ok(k->ctx, r.tid))
		return ARGUS_IP_BAD_TID;
	if ((r.type == AIP_MUTEX_WAIT || argus_ip__sync_has_holder(r.type)) &&
	    r.other && r.other != r.tid &&
	    !k->tid_ok(k->ctx, r.other))
		return ARGUS_IP_BAD_HOLDER;
	memset(&e, 0, sizeof(e));
	e.ts = r.ts;
	e.tid = r.tid;
	e.pid = k->pid;
	e.type = ae_of[r.type];
	e.cpu = r.cpu;
	e.ctx = AE_CTX_TASK;
	switch (r.type) {
	case AIP_WORK_ENQUEUE:
	case AIP_WORK_BEGIN:
	case AIP_WORK_END:
		e.f[ARGUS_F_WI_ITEM] = r.addr;
		e.f[ARGUS_F_WI_FN] = r.arg;
		e.f[ARGUS_F_WI_KIND] = r.other;
		break;
	case AIP_WORK_BOUNDARY:
		e.f[ARGUS_F_WI_ITEM] = r.addr;
		break;
	default:
		e.f[ARGUS_F_MX_ADDR] = r.addr;
		e.f[ARGUS_F_MX_OTHER] = r.type == AIP_MUTEX_WAKE ? 0 : r.other;
		if (argus_ip__is_sync(r.type)) {
			e.f[ARGUS_F_MX_KIND] = argus_ip__sync_kind(r.type);
			e.f[ARGUS_F_MX_ARG] = r.arg;
		}
	}
	*ev = e;
	return ARGUS_IP_OK;
}

/* ---- the registry ---- */

struct ip_ring {
	uint32_t pid, uid;
	int pidfd;              /* -1: pidfd_open unsupported; dead by /proc */
	int procfd;             /* /proc/PID of the registered process */
	int taskfd;             /* /proc/PID/task of the registered process */
	uint64_t exe_dev, exe_ino; /* its image at registration */
	char creds[IDENT_CREDS]; /* its Uid:/Gid: lines at registration */
	uint64_t checked_ns;    /* when the identity was last checked */
	bool foreign;           /* no longer that image or those ids: every
	                           record is refused (AFTER_EXEC) */
	const uint8_t *map;     /* AIP_RING_BYTES, read-only */
	uint64_t tail;          /* argusd's cursor (never shared) */
	uint32_t stuck;         /* drains the slot at tail was unpublished */
	uint32_t tids[TID_CACHE]; /* threads of pid seen valid */
	uint32_t ntids, tid_next;
};

struct argus_ip_registry {
	int lfd;
	char *path;
	uint32_t ncpus;
	struct ip_ring *rings[ARGUS_IP_MAX_PROCS];
	uint32_t nrings;
	/* the records each non-root uid may still add (a token bucket of
	 * ARGUS_IP_UID_RATE per second, as deep), by uid; an entry of a
	 * uid with no ring left is reused */
	struct ip_budget {
		uint32_t uid;
		uint32_t tokens;        /* records */
		uint64_t last_ns;       /* when tokens was refilled */
	} budgets[ARGUS_IP_MAX_PROCS];
	uint32_t nbudgets;
	/* connections accepted before their message came (see
	 * argus_ip_registry__accept) and the accept rounds they have waited */
	int pend_fd[ACCEPT_MAX];
	uint32_t pend_age[ACCEPT_MAX];
	uint32_t npend;
	struct argus_ip_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void ring_free(struct ip_ring *g)
{
	if (!g)
		return;
	if (g->map)
		munmap((void *)g->map, AIP_RING_BYTES);
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (g->procfd >= 0)
		close(g->procfd);
	if (g->taskfd >= 0)
		close(g->taskfd);
	free(g);
}

/* The inode of dirfd's exe and the Uid: and Gid: lines of its status
 * (real, effective, saved, fs), joined; *euid and *egid the effective
 * ones.  0 or -errno. */
static int ident_at(int dirfd, uint64_t *dev, uint64_t *ino, char *creds, size_t len,
		    uint32_t *euid, uint32_t *egid)
{
	struct stat st;

	if (fstatat(dirfd, "exe", &st, 0))
		return -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return argus_proc_creds(dirfd, creds, len, euid, egid);
}

/*
 * The image and credentials of the ring's process (ident_at): through
 * /proc/PID, or when its main thread has exited (a zombie leader has no
 * exe) through its first live thread.  An fstatat and a 1 KiB read of
 * /proc: about 10 us, done at most every ARGUS_IP_IDENT_NS per ring.
 */
static int read_ident(const struct ip_ring *g, uint64_t *dev, uint64_t *ino, char *creds,
		      size_t len, uint32_t *euid, uint32_t *egid)
{
	int err = ident_at(g->procfd, dev, ino, creds, len, euid, egid), fd;
	struct dirent *d;
	DIR *dir;

	if (err != -ENOENT || (fd = dup(g->taskfd)) < 0)
		return err;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return err;
	}
	rewinddir(dir);
	while ((d = readdir(dir))) {
		int tfd;

		if (d->d_name[0] == '.')
			continue;
		tfd = openat(g->taskfd, d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tfd < 0)
			continue;
		err = ident_at(tfd, dev, ino, creds, len, euid, egid);
		close(tfd);
		if (!err)
			break;
	}
	closedir(dir);
	return err;
}

/* Still the image and credentials that registered (checked at most every
 * ARGUS_IP_IDENT_NS)?  Once not, never again. */
static bool ring_same(struct ip_ring *g, uint64_t now)
{
	char creds[IDENT_CREDS];
	uint64_t dev, ino;
	uint32_t eu, eg;

	if (g->foreign)
		return false;
	if (now - g->checked_ns < ARGUS_IP_IDENT_NS)
		return true;
	g->checked_ns = now;
	/* a process that exited reads as gone here: its ring is read one
	 * last time and dropped by the drain, as before */
	if (read_ident(g, &dev, &ino, creds, sizeof(creds), &eu, &eg))
		return true;
	if (dev != g->exe_dev || ino != g->exe_ino || strcmp(creds, g->creds))
		g->foreign = true;
	return !g->foreign;
}

/* The writer's head of the ring mapped at map (the process writes it). */
static uint64_t ring_head(const uint8_t *map)
{
	return atomic_load_explicit((const _Atomic uint64_t *)(map +
				    offsetof(struct aip_ring_hdr, head)), memory_order_acquire);
}

/* Drop, unread, what g's process published since g's tail: how many
 * records (at most a ring's worth: the rest it overwrote itself). */
static uint64_t drop_unread(struct ip_ring *g)
{
	uint64_t head = ring_head(g->map), n;

	if (head <= g->tail)
		return 0; /* nothing new (a head moved back is the drain's to count) */
	n = head - g->tail < AIP_NSLOTS ? head - g->tail : AIP_NSLOTS;
	g->tail = head;
	g->stuck = 0;
	return n;
}

/* A ring whose process is no longer its registrant's: whatever is in it
 * is counted (AFTER_EXEC), never read. */
static void refuse_all(struct ip_ring *g, struct argus_ip_stats *st)
{
	uint64_t n = drop_unread(g);

	st->invalid += n;
	st->by_reason[ARGUS_IP_AFTER_EXEC] += n;
}

/* Is tid a thread of the ring's process?  The cache holds tids seen
 * valid; a miss asks /proc through the dirfd opened at registration
 * (once the process is gone, only cached tids pass). */
static int tid_ok(void *ctx, uint32_t tid)
{
	struct ip_ring *g = ctx;
	char name[16];
	struct stat st;

	for (uint32_t i = 0; i < g->ntids; i++)
		if (g->tids[i] == tid)
			return 1;
	snprintf(name, sizeof(name), "%u", tid);
	if (fstatat(g->taskfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return 0;
	if (g->ntids < TID_CACHE) {
		g->tids[g->ntids++] = tid;
	} else {
		g->tids[g->tid_next] = tid;
		g->tid_next = (g->tid_next + 1) % TID_CACHE;
	}
	return 1;
}

struct argus_ip_registry *argus_ip_registry__new(const char *path, uint32_t ncpus,
						 char *msg, size_t msglen)
{
	struct argus_ip_registry *r = calloc(1, sizeof(*r));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int e;

	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(msg, msglen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	r->ncpus = ncpus;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(msg, msglen, "interposer socket path too long: %s", path);
		e = ENAMETOOLONG;
		goto fail;
	}
	strcpy(sa.sun_path, path);
	r->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (r->lfd < 0) {
		e = errno;
		snprintf(msg, msglen, "socket: %s", strerror(e));
		goto fail;
	}
	unlink(path);
	if (bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(r->lfd, 64) ||
	    chmod(path, 0666)) {
		e = errno;
		snprintf(msg, msglen, "cannot listen on %s: %s", path, strerror(e));
		close(r->lfd);
		unlink(path);
		goto fail;
	}
	return r;
fail:
	free(r->path);
	free(r);
	errno = e;
	return NULL;
}

static uint32_t uid_count(const struct argus_ip_registry *r, uint32_t uid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->nrings; i++)
		n += r->rings[i]->uid == uid;
	return n;
}

/* Room for one more ring of uid?  At most ARGUS_IP_MAX_PER_UID per uid,
 * and the uids other than root together leave ARGUS_IP_ROOT_RESERVE
 * slots: four users holding 64 each cannot shut root's app out. */
static bool room_for(const struct argus_ip_registry *r, uint32_t uid)
{
	if (r->nrings >= ARGUS_IP_MAX_PROCS || uid_count(r, uid) >= ARGUS_IP_MAX_PER_UID)
		return false;
	return uid == 0 || r->nrings - uid_count(r, 0) <
			   ARGUS_IP_MAX_PROCS - ARGUS_IP_ROOT_RESERVE;
}

/* The one fd of an SCM_RIGHTS message; every other fd it carried is
 * closed (a client could send hundreds to exhaust ours). */
static int take_fd(struct msghdr *mh)
{
	int fd = -1;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = f;
			else
				close(f);
		}
	}
	return fd;
}

/* One registration: 0 accepted, -errno refused. */
static int serve_one(struct argus_ip_registry *r, int cfd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char buf[32], path[64];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	struct ip_ring *g = NULL;
	struct stat st;
	ssize_t n;
	int mfd = -1, seals, e = -EINVAL;
	uint32_t eu = 0, eg = 0;
	socklen_t pl = sizeof(int);
	struct pollfd pp;
	void *map;

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.pid <= 0)
		return -EPERM;
	/* the client sends before we accept: its message is there or it
	 * is refused (waiting for it would let anyone stall argusd) */
	n = recvmsg(cfd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : -errno;
	mfd = take_fd(&mh);
	buf[n] = 0;
	if (mfd < 0 || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || strcmp(buf, "register 1"))
		goto out;
	/* a sealed memfd of exactly our size: nothing the client does later
	 * can shrink it under our mapping (SIGBUS) */
	seals = fcntl(mfd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(mfd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size != AIP_RING_BYTES)
		goto out;
	if (!(g = calloc(1, sizeof(*g)))) {
		e = -ENOMEM;
		goto out;
	}
	g->pidfd = g->procfd = g->taskfd = -1;
	g->pid = (uint32_t)cred.pid;
	g->uid = cred.uid;
	/* the peer itself, not whoever has its pid now: the kernel's pidfd
	 * of the connecting process (6.5+), else one by pid (a reuse between
	 * connect and here is then not seen: the window of older kernels) */
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERPIDFD, &g->pidfd, &pl) || g->pidfd < 0)
		g->pidfd = (int)syscall(SYS_pidfd_open, g->pid, 0);
	snprintf(path, sizeof(path), "/proc/%u", g->pid);
	g->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->procfd < 0) {
		e = -ESRCH;
		goto out;
	}
	/* opened while the peer is alive: /proc/PID is the peer's */
	pp = (struct pollfd){ .fd = g->pidfd, .events = POLLIN };
	if (g->pidfd >= 0 && poll(&pp, 1, 0) != 0) {
		e = -ESRCH;
		goto out;
	}
	g->taskfd = openat(g->procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->taskfd < 0) {
		e = -ESRCH;
		goto out;
	}
	/* the image and credentials the ring belongs to; the effective ids
	 * must still be the connect's (SO_PEERCRED): a setuid exec between
	 * connect and here is refused */
	if (read_ident(g, &g->exe_dev, &g->exe_ino, g->creds, sizeof(g->creds), &eu, &eg) ||
	    eu != cred.uid || eg != cred.gid) {
		e = -EPERM;
		goto out;
	}
	g->checked_ns = mono_ns();
	map = mmap(NULL, AIP_RING_BYTES, PROT_READ, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED) {
		e = -errno;
		goto out;
	}
	g->map = map;
	/* from the oldest slot still in the ring: the process may have
	 * written before we took its registration (it does not wait) */
	g->tail = ring_head(g->map);
	g->tail = g->tail > AIP_NSLOTS ? g->tail - AIP_NSLOTS : 0;
	/* one ring per process: an exec'd image registers again */
	for (uint32_t i = 0; i < r->nrings; i++) {
		if (r->rings[i]->pid != g->pid)
			continue;
		const struct ip_ring *o = r->rings[i];
		uint64_t h = ring_head(o->map);

		/* its unread records are the old image's: counted, not read
		 * here (they are read in the drain, not in a registration) */
		if (h > o->tail)
			r->st.lost += h - o->tail < AIP_NSLOTS ? h - o->tail : AIP_NSLOTS;
		ring_free(r->rings[i]);
		r->rings[i] = r->rings[--r->nrings];
		break;
	}
	if (!room_for(r, g->uid)) {
		r->st.refused_full++;
		e = -ENOSPC;
		goto out;
	}
	r->rings[r->nrings++] = g;
	g = NULL;
	e = 0;
out:
	ring_free(g);
	if (mfd >= 0)
		close(mfd);
	return e;
}

/* serve_one's outcome into the counters; 1 when the connection must wait
 * for its message (kept open), else 0 (close it). */
static int count_served(struct argus_ip_registry *r, int rc)
{
	if (rc == -EAGAIN)
		return 1;
	if (rc)
		r->st.refused++;
	else
		r->st.registered++;
	return 0;
}

/*
 * The client connects, then sends.  A connection accepted between the two
 * has no message yet: it waits here, without blocking argusd, for up to
 * PEND_ROUNDS accept rounds (one per loop, ~50 ms each), then is refused.
 * At most ACCEPT_MAX wait at once; one more is refused at once, so a
 * client that connects and never sends costs a slot for a few rounds, not
 * argusd's time.  (Refusing at once lost a real registration now and then:
 * an injected library's constructor was accepted mid-way.)
 */
#define PEND_ROUNDS 8

void argus_ip_registry__accept(struct argus_ip_registry *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->npend;) {
		int rc = serve_one(r, r->pend_fd[i]);

		if (rc == -EAGAIN && ++r->pend_age[i] < PEND_ROUNDS) {
			i++;
			continue;
		}
		if (rc == -EAGAIN)
			rc = -ETIMEDOUT;
		count_served(r, rc);
		close(r->pend_fd[i]);
		r->npend--;
		r->pend_fd[i] = r->pend_fd[r->npend];
		r->pend_age[i] = r->pend_age[r->npend];
	}
	for (int i = 0; i < ACCEPT_MAX; i++) {
		int cfd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (cfd < 0)
			return;
		if (count_served(r, serve_one(r, cfd))) {
			if (r->npend < ACCEPT_MAX) {
				r->pend_fd[r->npend] = cfd;
				r->pend_age[r->npend++] = 0;
				continue;
			}
			r->st.refused++;
		}
		close(cfd);
	}
}

static bool ring_dead(const struct ip_ring *g)
{
	struct pollfd p = { .fd = g->pidfd, .events = POLLIN };
	struct stat st;

	if (g->pidfd >= 0)
		return poll(&p, 1, 0) > 0;
	/* no pidfd (kernel < 5.3): the task dir of a reaped process is gone */
	return fstatat(g->taskfd, ".", &st, 0) != 0;
}

/* argus_ip__drain_buffer, reading at most max slots; *ndone gets how
 * many it read (the uid's budget is charged for them). */
static int drain_upto(const void *ring, uint64_t *tail, uint32_t *stuck, bool dead,
		      const struct argus_ip_check *k,
		      int (*emit)(void *ctx, const struct argus_event *ev), void *ctx,
		      struct argus_ip_stats *st, uint32_t max, uint32_t *ndone)
{
	const uint8_t *map = ring;
	const _Atomic uint64_t *headp =
		(const _Atomic uint64_t *)(map + offsetof(struct aip_ring_hdr, head));
	const uint8_t *slots = map + AIP_HDR_BYTES;
	uint64_t head = atomic_load_explicit(headp, memory_order_acquire);
	uint32_t done = 0;
	int rc = 0;

	if (head < *tail) {             /* head only grows: forged */
		st->invalid++;
		st->by_reason[ARGUS_IP_BAD_FIELD]++;
		*tail = head;
		return 0;
	}
	if (head - *tail > ARGUS_IP_MAX_JUMP) {
		/* no process writes 4 G records in one drain period: a forged
		 * head, counted once (as lost it would wreck the counter) */
		st->invalid++;
		st->by_reason[ARGUS_IP_BAD_FIELD]++;
		*tail = head - AIP_NSLOTS;
	} else if (head - *tail > AIP_NSLOTS) {
		uint64_t skip = head - *tail - AIP_NSLOTS;

		st->lost += skip;
		*tail += skip;
	}
	while (*tail < head && done < max) {
		const uint8_t *s = slots + (*tail % AIP_NSLOTS) * sizeof(struct aip_rec);
		const _Atomic uint64_t *seqp = (const _Atomic uint64_t *)s;
		uint8_t copy[sizeof(struct aip_rec)];
		uint64_t s1, s2;
		struct argus_event ev;
		int why;

		s1 = atomic_load_explicit(seqp, memory_order_acquire);
		if (s1 != *tail + 1) {
			if (s1 > *tail + 1) {   /* overwritten by a lap */
				st->lost++;
				++*tail;
				*stuck = 0;
				continue;
			}
			/* not published yet: a writer mid-record, or one that
			 * died (or lies) there */
			if (!dead && ++*stuck < STUCK_DRAINS)
				break;
			st->lost++;
			++*tail;
			*stuck = 0;
			continue;
		}
		memcpy(copy, s, sizeof(copy));
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(seqp, memory_order_relaxed);
		++*tail;
		*stuck = 0;
		done++;
		why = s2 != s1 ? ARGUS_IP_TORN : argus_ip__parse(copy, sizeof(copy), k, &ev);
		if (why != ARGUS_IP_OK) {
			st->invalid++;
			st->by_reason[why]++;
			continue;
		}
		/* a record the trace cannot take (emit failed: out of
		 * memory) is lost, and so is the rest of this drain's */
		if (rc || !emit || (rc = emit(ctx, &ev)) < 0)
			st->lost++;
		else
			st->records++;
	}
	*ndone = done;
	return rc;
}

int argus_ip__drain_buffer(const void *ring, uint64_t *tail, uint32_t *stuck, bool dead,
			   const struct argus_ip_check *k,
			   int (*emit)(void *ctx, const struct argus_event *ev), void *ctx,
			   struct argus_ip_stats *st)
{
	uint32_t done;

	return drain_upto(ring, tail, stuck, dead, k, emit, ctx, st, ARGUS_IP_DRAIN_MAX, &done);
}

/* ---- the per-uid budget ---- */

/* uid's bucket, refilled up to now; NULL for root (not bounded). */
static struct ip_budget *budget_of(struct argus_ip_registry *r, uint32_t uid, uint64_t now)
{
	struct ip_budget *b = NULL;

	if (uid == 0)
		return NULL;
	for (uint32_t i = 0; i < r->nbudgets && !b; i++)
		if (r->budgets[i].uid == uid)
			b = &r->budgets[i];
	if (!b) {
		/* a new uid: a free entry, else the one refilled longest ago
		 * (a uid with no ring left: live rings' are used every drain) */
		if (r->nbudgets < ARGUS_IP_MAX_PROCS) {
			b = &r->budgets[r->nbudgets++];
		} else {
			b = &r->budgets[0];
			for (uint32_t i = 1; i < r->nbudgets; i++)
				if (r->budgets[i].last_ns < b->last_ns)
					b = &r->budgets[i];
		}
		*b = (struct ip_budget){ .uid = uid, .tokens = ARGUS_IP_UID_RATE, .last_ns = now };
		return b;
	}
	if (now > b->last_ns) {
		uint64_t add = (now - b->last_ns) * ARGUS_IP_UID_RATE / 1000000000ull;

		if (add) {
			/* whole records only: the rest of the time carries over */
			b->tokens = b->tokens + add > ARGUS_IP_UID_RATE ? ARGUS_IP_UID_RATE
					: (uint32_t)(b->tokens + add);
			b->last_ns = add >= ARGUS_IP_UID_RATE ? now
				     : b->last_ns + add * 1000000000ull / ARGUS_IP_UID_RATE;
		}
	}
	return b;
}

/* A ring whose uid has spent its budget: what it published is dropped
 * unread and counted, at no cost per record. */
static void skip_ring(struct argus_ip_registry *r, struct ip_ring *g)
{
	r->st.over_budget += drop_unread(g);
}

/* A budgeted ring lapped since its last read: a ring's worth (1,024
 * slots) per drain is about the budget itself, so what the writer
 * overwrote is over its budget, not lost by argusd (the lost count stays
 * a health figure a user cannot inflate). */
static void drop_lapped(struct argus_ip_registry *r, struct ip_ring *g)
{
	uint64_t head = ring_head(g->map);

	if (head > g->tail + AIP_NSLOTS && head - g->tail <= ARGUS_IP_MAX_JUMP) {
		r->st.over_budget += head - g->tail - AIP_NSLOTS;
		g->tail = head - AIP_NSLOTS;
	}
}

/* May ring g be read at now?  Not when its process is no longer the
 * image and ids that registered it (every record refused, counted).  Else
 * *max: how many records it may give now (its uid's budget, *b; NULL for
 * root, who has none), 0 when the budget is spent. */
static bool ring_allowance(struct argus_ip_registry *r, struct ip_ring *g, uint64_t now,
			   struct ip_budget **b, uint32_t *max)
{
	if (!ring_same(g, now)) {
		refuse_all(g, &r->st);
		return false;
	}
	*b = budget_of(r, g->uid, now);
	*max = *b && (*b)->tokens < ARGUS_IP_DRAIN_MAX ? (*b)->tokens : ARGUS_IP_DRAIN_MAX;
	return true;
}

static void drain_ring(struct argus_ip_registry *r, struct ip_ring *g, bool dead,
		       int (*emit)(void *, const struct argus_event *), void *ctx, int *rc)
{
	struct argus_ip_check k = { .now_ns = mono_ns(), .pid = g->pid, .ncpus = r->ncpus,
				    .tid_ok = tid_ok, .ctx = g };
	struct ip_budget *b;
	uint32_t max, done = 0;
	int e;

	if (!ring_allowance(r, g, k.now_ns, &b, &max))
		return;
	if (!max) {
		skip_ring(r, g);
		return;
	}
	if (b)
		drop_lapped(r, g);
	e = drain_upto(g->map, &g->tail, &g->stuck, dead, &k, *rc ? NULL : emit, ctx, &r->st,
		       max, &done);
	if (b)
		b->tokens -= done;
	/* spent now: the rest is the budget's to drop, not the next lap's */
	if (b && !b->tokens)
		skip_ring(r, g);
	if (e < 0 && !*rc)
		*rc = e;
}

int argus_ip_registry__drain(struct argus_ip_registry *r,
			     int (*emit)(void *ctx, const struct argus_event *ev),
			     void *ctx)
{
	int rc = 0;
	uint64_t before;

	if (!r)
		return 0;
	before = r->st.records;
	for (uint32_t i = 0; i < r->nrings;) {
		struct ip_ring *g = r->rings[i];
		/* dead first, then read: what it wrote before dying is there */
		bool dead = ring_dead(g);

		drain_ring(r, g, dead, emit, ctx, &rc);
		if (dead) {
			ring_free(g);
			r->rings[i] = r->rings[--r->nrings];
			continue;
		}
		i++;
	}
	return rc < 0 ? rc : (int)(r->st.records - before);
}

int argus_ip_registry__peek(struct argus_ip_registry *r,
			    int (*emit)(void *ctx, const struct argus_event *ev),
			    void *ctx)
{
	int rc = 0;
	uint64_t before;

	if (!r)
		return 0;
	before = r->st.records;
	for (uint32_t i = 0; i < r->nrings; i++) {
		struct ip_ring *g = r->rings[i];
		struct argus_ip_check k = { .now_ns = mono_ns(), .pid = g->pid, .ncpus = r->ncpus,
					    .tid_ok = tid_ok, .ctx = g };
		uint64_t t0 = g->tail;
		uint32_t stuck = 0;     /* scratch: a peek never gives up on a slot */
		struct ip_budget *b;
		uint32_t max, done = 0;
		int e;

		if (!ring_allowance(r, g, k.now_ns, &b, &max))
			continue;
		if (!max)
			continue; /* the drain drops it */
		if (b)
			drop_lapped(r, g);
		e = drain_upto(g->map, &g->tail, &stuck, false, &k, rc ? NULL : emit, ctx, &r->st,
			       max, &done);
		if (b)
			b->tokens -= done;
		if (g->tail != t0)
			g->stuck = 0;
		if (e < 0 && !rc)
			rc = e;
	}
	return rc < 0 ? rc : (int)(r->st.records - before);
}

void argus_ip_registry__stats(const struct argus_ip_registry *r, struct argus_ip_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	*st = r->st;
	st->procs = r->nrings;
}

void argus_ip_registry__free(struct argus_ip_registry *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nrings; i++)
		ring_free(r->rings[i]);
	for (uint32_t i = 0; i < r->npend; i++)
		close(r->pend_fd[i]);
	if (r->lfd >= 0) {
		close(r->lfd);
		unlink(r->path);
	}
	free(r->path);
	free(r);
}
