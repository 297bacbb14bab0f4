/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind_client.c - argusd's side of the unwind helper (unwind_helper.h).
 *
 * State: the helper's pid and socket (non-blocking: every wait is a
 * poll() with the request's deadline), the client's layouts (CL_LAYOUTS
 * maps layouts, each an id and a copy of the (start, end, pgoff, dev,
 * inode, flags) of its mappings, as unwind.c's slots), and the memo
 * (unwind_memo.h) keyed by those ids, so a repeated stack is answered
 * here, with no round trip.
 *
 * Invariant: the stream is in sync between requests.  Any error in the
 * middle of one (deadline, short read, a malformed answer) kills the
 * helper rather than trying to resynchronize.
 */
#include "unwind_helper.h"

#include "elf_guard.h"
#include "unwind.h"
#include "unwind_memo.h"
#include "unwind_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CL_LAYOUTS ARGUS_UNWIND_SLOTS /* the helper's, and the memo's sessions */
#define CL_BACKOFF_MIN_NS (100ull * 1000 * 1000)
#define CL_BACKOFF_MAX_NS (10000ull * 1000 * 1000)
#define CL_ANSWER_MAX (64u << 10)   /* the helper's largest: NEED_FILES */
#define CL_ZOMBIES 16
#define CL_POISON_NS (30000ull * 1000 * 1000)

struct cl_layout {
	uint64_t id;            /* 0 = empty */
	struct argus_map_key *keys;
	size_t nkeys;
	uint64_t last_use;
	uint64_t poisoned_until; /* CLOCK_MONOTONIC ns: a request of this
				    layout killed a helper; not sent again
				    before then */
};

struct argus_unwind_client {
	pid_t pid;              /* the helper, 0 = none */
	int cpu;                /* the CPU the helper is pinned to, -1 none */
	int sock;               /* -1 = none */
	uid_t uid;
	gid_t gid;
	uint64_t next_spawn_ns; /* backoff: no helper before this */
	uint32_t fails_in_row;
	bool no_backoff;        /* a CLI's helper: start again at once */
	struct uwp_counters seen; /* the helper's counters last added */
	bool cut;               /* tell the helper at the next request */
	struct cl_layout lay[CL_LAYOUTS];
	uint64_t clock, next_id;
	struct uw_memo *memo;
	uint8_t *rbuf;          /* one answer */
	uint8_t *sbuf;          /* one LAYOUT */
	pid_t zombies[CL_ZOMBIES]; /* killed, not reaped yet */
	double dead_cpu_s;      /* CPU of the helpers reaped so far */
	pid_t gone[4];          /* the last helpers dropped: records of theirs
				   may still be on their way to the drain */
	struct argus_unwind_client_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* waitpid() that adds the helper's CPU time to dead_cpu_s */
static pid_t reap(struct argus_unwind_client *c, pid_t pid, int flags)
{
	struct rusage ru;
	pid_t r = wait4(pid, NULL, flags, &ru);

	if (r == pid)
		c->dead_cpu_s += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	return r;
}

static void reap_zombies(struct argus_unwind_client *c)
{
	for (int i = 0; i < CL_ZOMBIES; i++)
		if (c->zombies[i] > 0 && reap(c, c->zombies[i], WNOHANG) != 0)
			c->zombies[i] = 0;
}

/* Kill the helper (if any) and leave it to be reaped: it may be stuck in
 * the kernel (a read of a hung file), and waiting for it must not stop
 * the drain. */
static void drop_helper(struct argus_unwind_client *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		if (reap(c, c->pid, WNOHANG) == 0) {
			int i = 0;

			while (i < CL_ZOMBIES && c->zombies[i] > 0)
				i++;
			if (i == CL_ZOMBIES) {  /* reap the oldest, whatever it costs */
				reap(c, c->zombies[0], 0);
				i = 0;
			}
			c->zombies[i] = c->pid;
		}
	}
	if (c->pid > 0) {
		memmove(c->gone + 1, c->gone, sizeof(c->gone) - sizeof(c->gone[0]));
		c->gone[0] = c->pid;
	}
	c->pid = 0;
	memset(&c->seen, 0, sizeof(c->seen));
}

/* The helper failed: kill it, count it, back off before the next one. */
static void helper_failed(struct argus_unwind_client *c, int err)
{
	uint64_t back = CL_BACKOFF_MIN_NS << (c->fails_in_row < 7 ? c->fails_in_row : 7);

	drop_helper(c);
	c->st.restarts++;
	if (err == -ETIMEDOUT)
		c->st.timeouts++;
	c->fails_in_row++;
	c->next_spawn_ns = c->no_backoff ? 0 :
			   mono_ns() + (back < CL_BACKOFF_MAX_NS ? back : CL_BACKOFF_MAX_NS);
}

void argus_unwind_client__no_backoff(struct argus_unwind_client *c)
{
	if (c)
		c->no_backoff = true;
}

static int spawn(struct argus_unwind_client *c)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		char env[64];
		char *const argv[] = { (char *)"argus-unwind", NULL };
		char *const envp[] = { env, NULL };

		close(sv[0]);
		/* A fresh image of our own binary (unwind_helper.c's
		 * constructor takes over before main): the helper gets its own
		 * address layout, and no copy of argusd's heap (held events,
		 * names, paths) for a hostile file to find.  The socket is fd 3
		 * there.  If the exec fails, the forked image serves. */
		/* (dup2 onto itself keeps SOCK_CLOEXEC: cleared explicitly) */
		if (dup2(sv[1], 3) == 3 && !fcntl(3, F_SETFD, 0)) {
			snprintf(env, sizeof(env), "ARGUS_UNWIND_HELPER=%u,%u",
				 (unsigned)c->uid, (unsigned)c->gid);
			execve("/proc/self/exe", argv, envp);
		}
		argus_unwind_helper__main(sv[1], c->uid, c->gid);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	c->sock = sv[0];
	c->pid = pid;
	c->cpu = -1;
	return 0;
}

/* A helper to talk to now, or -EAGAIN.  A helper that died while idle
 * (killed by its user, or by RLIMIT_CPU) is noticed here, counted, and
 * replaced at once if the backoff allows. */
static int ensure_helper(struct argus_unwind_client *c)
{
	reap_zombies(c);
	if (c->sock >= 0) {
		struct pollfd p = { c->sock, POLLIN, 0 };

		/* an idle helper has nothing to say: input or a hangup means
		 * it died (or talks out of turn) */
		if (poll(&p, 1, 0) == 0)
			return 0;
		helper_failed(c, -EPIPE);
	}
	if (mono_ns() < c->next_spawn_ns)
		return -EAGAIN;
	if (spawn(c)) {         /* no fork now: try again in a second */
		c->next_spawn_ns = mono_ns() + 1000000000ull;
		return -EAGAIN;
	}
	return 0;
}

static int wait_fd(int fd, short ev, uint64_t deadline)
{
	struct pollfd p = { fd, ev, 0 };
	uint64_t now = mono_ns();
	int r;

	if (now >= deadline)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if ((p.revents & (POLLERR | POLLNVAL)) ||
	    ((p.revents & POLLHUP) && !(p.revents & POLLIN)))
		return -EPIPE;
	return 0;
}

/*
 * Keep the helper on the CPU we run on.  It only runs while we wait for
 * it, so that CPU is free then; and waking a process on the other, idle,
 * vCPU is an IPI and an idle exit: on this VM a round trip cost 45 us of
 * CPU across CPUs and 14 us on one (bench/bench_unwind.c).  Re-pinned
 * only when we have moved (sched_getcpu() is a vDSO call).
 */
static void follow_cpu(struct argus_unwind_client *c)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0 || cpu == c->cpu || cpu >= CPU_SETSIZE)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (!sched_setaffinity(c->pid, sizeof(set), &set))
		c->cpu = cpu;
}

/* Send header + body (+ fds on the first byte) before the deadline. */
static int send_msg(struct argus_unwind_client *c, uint32_t type,
		    const void *a, size_t alen, const void *b, size_t blen,
		    const int *fds, size_t nfds, uint64_t deadline)
{
	struct uwp_hdr hd = { type, (uint32_t)(alen + blen) };
	struct iovec iov[3] = { { &hd, sizeof(hd) }, { (void *)a, alen }, { (void *)b, blen } };
	union {
		char buf[CMSG_SPACE(sizeof(int) * UWP_FDS_MAX)];
		struct cmsghdr align;
	} cb;
	size_t left = sizeof(hd) + alen + blen;
	int vi = 0, err;

	while (left) {
		struct msghdr mh = { .msg_iov = iov + vi, .msg_iovlen = 3 - vi };
		ssize_t w;

		if (nfds) {
			struct cmsghdr *cm;

			mh.msg_control = cb.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
		}
		w = sendmsg(c->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -EPIPE;
			if ((err = wait_fd(c->sock, POLLOUT, deadline)))
				return err;
			continue;
		}
		nfds = 0;       /* they went with the first byte */
		left -= (size_t)w;
		while (w > 0 && vi < 3) {
			if ((size_t)w >= iov[vi].iov_len) {
				w -= (ssize_t)iov[vi].iov_len;
				iov[vi].iov_len = 0;
				vi++;
			} else {
				iov[vi].iov_base = (char *)iov[vi].iov_base + w;
				iov[vi].iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return 0;
}

/*
 * One answer into c->rbuf (its body moved to the start); its type and
 * body length, after the counters, which are added to argusd's own here.
 * The helper answers each message once and says nothing unasked, so what
 * the socket holds is at most this one answer: it is read with as few
 * recv() calls as it arrives in, and a byte more is a protocol error.
 * The answer is not there right after a request: poll() first.
 */
static int recv_answer(struct argus_unwind_client *c, uint32_t *type,
		       size_t *len, uint64_t deadline)
{
	struct uwp_counters k;
	struct uwp_hdr hd;
	size_t have = 0, need = sizeof(hd);
	int err;

	while (have < need) {
		ssize_t r;

		if ((err = wait_fd(c->sock, POLLIN, deadline)))
			return err;
		r = recv(c->sock, c->rbuf + have, CL_ANSWER_MAX - have, MSG_DONTWAIT);
		if (r == 0)
			return -EPIPE;
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -EPIPE;
			continue;
		}
		have += (size_t)r;
		if (need == sizeof(hd) && have >= sizeof(hd)) {
			memcpy(&hd, c->rbuf, sizeof(hd));
			if (hd.len < sizeof(k) || hd.len > CL_ANSWER_MAX - sizeof(hd))
				return -EPROTO;
			need = sizeof(hd) + hd.len;
		}
	}
	if (have != need)
		return -EPROTO;
	memcpy(&k, c->rbuf + sizeof(hd), sizeof(k));
	/* untrusted too: only growth, and not absurd growth, is counted */
	if (k.over_budget > c->seen.over_budget && k.over_budget - c->seen.over_budget < (1u << 20))
		argus_guard__count(ARGUS_GUARD_OVER_BUDGET, k.over_budget - c->seen.over_budget);
	if (k.unwind_cut > c->seen.unwind_cut && k.unwind_cut - c->seen.unwind_cut < (1u << 20))
		argus_guard__count(ARGUS_GUARD_UNWIND_CUT, k.unwind_cut - c->seen.unwind_cut);
	c->seen = k;
	*type = hd.type;
	*len = hd.len - sizeof(k);
	memmove(c->rbuf, c->rbuf + sizeof(hd) + sizeof(k), *len);
	return 0;
}

/* ---- layouts -------------------------------------------------------- */

static bool layout_fits(const struct cl_layout *l, const struct argus_proc_map *maps,
			size_t nmaps)
{
	return l->id && argus_map_keys__match(l->keys, l->nkeys, maps, nmaps);
}

/* The client's layout for these maps; *fresh when it was just made (so
 * the helper cannot have it).  NULL on ENOMEM. */
static struct cl_layout *get_layout(struct argus_unwind_client *c,
				    const struct argus_proc_map *maps,
				    size_t nmaps, bool *fresh)
{
	struct cl_layout *v = &c->lay[0];
	struct argus_map_key *keys;

	c->clock++;
	*fresh = false;
	for (int i = 0; i < CL_LAYOUTS; i++) {
		struct cl_layout *l = &c->lay[i];

		if (layout_fits(l, maps, nmaps)) {
			l->last_use = c->clock;
			return l;
		}
		if (!l->id || (v->id && l->last_use < v->last_use))
			v = l;
	}
	keys = argus_map_keys__new(maps, nmaps);
	if (!keys)
		return NULL;
	free(v->keys);
	*v = (struct cl_layout){ ++c->next_id, keys, nmaps, c->clock, 0 };
	*fresh = true;
	return v;
}

static int send_layout(struct argus_unwind_client *c, const struct cl_layout *l,
		       uint32_t pid, const struct argus_proc_map *maps,
		       size_t nmaps, uint64_t deadline)
{
	struct uwp_layout hd = { l->id, pid, (uint32_t)nmaps };
	size_t off = 0;

	if (nmaps > ARGUS_PROC_MAPS_MAX)
		return -E2BIG;
	for (size_t i = 0; i < nmaps; i++) {
		size_t pl = strlen(maps[i].path);
		struct uwp_map wm = { maps[i].start, maps[i].end, maps[i].pgoff,
				      maps[i].dev, maps[i].inode, maps[i].flags,
				      (uint32_t)pl };

		if (off + sizeof(wm) > UWP_MSG_MAX - sizeof(hd))
			return -E2BIG;
		memcpy(c->sbuf + off, &wm, sizeof(wm));
		off += sizeof(wm);
	}
	for (size_t i = 0; i < nmaps; i++) {
		size_t pl = strlen(maps[i].path) + 1;

		if (off + pl > UWP_MSG_MAX - sizeof(hd))
			return -E2BIG;
		memcpy(c->sbuf + off, maps[i].path, pl);
		off += pl;
	}
	return send_msg(c, UWP_LAYOUT, &hd, sizeof(hd), c->sbuf, off, NULL, 0,
			deadline);
}

/* Answer a NEED_FILES (body in c->rbuf): open each file as argusd always
 * has (argus_proc_map__open: checked, never blocking) and pass the fds;
 * a file that cannot be opened is left out, as the in-process unwinder
 * left it unreported. */
static int send_files(struct argus_unwind_client *c, uint32_t pid,
		      const struct argus_proc_map *maps, size_t nmaps,
		      size_t len, uint64_t deadline)
{
	size_t n = len / sizeof(uint32_t), i = 0;
	uint32_t *want;
	int err = 0;

	if (len % sizeof(uint32_t) || n > nmaps)
		return -EPROTO;
	want = malloc((n ? n : 1) * sizeof(*want));
	if (!want)
		return -ENOMEM;
	memcpy(want, c->rbuf, n * sizeof(*want));   /* rbuf is reused below */
	do {
		struct { struct uwp_files f; uint32_t idx[UWP_FDS_MAX]; } m = { 0 };
		int fds[UWP_FDS_MAX];

		for (; i < n && m.f.n < UWP_FDS_MAX; i++) {
			int fd;

			if (want[i] >= nmaps) {
				err = -EPROTO;
				break;
			}
			fd = argus_proc_map__open(pid, &maps[want[i]]);
			if (fd < 0)
				continue;
			fds[m.f.n] = fd;
			m.idx[m.f.n++] = want[i];
		}
		m.f.last = i >= n;
		if (!err)
			err = send_msg(c, UWP_FILES, &m, sizeof(m.f) + m.f.n * sizeof(uint32_t),
				       NULL, 0, fds, m.f.n, deadline);
		c->st.fds_sent += m.f.n;
		for (uint32_t k = 0; k < m.f.n; k++)
			close(fds[k]);
		/* one message in flight at a time: the helper acknowledges a
		 * batch that is not the last (so its reads never span two) */
		if (!err && !m.f.last) {
			uint32_t type;
			size_t alen;

			err = recv_answer(c, &type, &alen, deadline);
			if (!err && (type != UWP_MORE || alen))
				err = -EPROTO;
		}
	} while (!err && i < n);
	free(want);
	return err;
}

/* The FRAMES answer in c->rbuf (len bytes), checked, into ips; the words
 * it read go to the memo after they are checked against the copy. */
static int take_frames(struct argus_unwind_client *c, const struct uw_memo_key *key,
		       const uint8_t *copy, size_t copy_len, size_t len,
		       uint64_t *ips, int max)
{
	struct uwp_frames f;
	struct uw_read_log *log;
	const uint8_t *p = c->rbuf;

	if (len < sizeof(f))
		return -EPROTO;
	memcpy(&f, p, sizeof(f));
	if (f.n < 1 || f.n > (uint32_t)max || f.nreads > UWP_READS_MAX ||
	    len != sizeof(f) + f.n * sizeof(uint64_t) + f.nreads * sizeof(struct uwp_read))
		return -EPROTO;
	memcpy(ips, p + sizeof(f), f.n * sizeof(uint64_t));
	ips[0] = key->ip;
	if (!f.memo || !copy)
		return (int)f.n;
	log = calloc(1, sizeof(*log));
	if (!log)
		return (int)f.n;
	p += sizeof(f) + f.n * sizeof(uint64_t);
	for (uint32_t i = 0; i < f.nreads; i++) {
		struct uwp_read r;

		memcpy(&r, p + i * sizeof(r), sizeof(r));
		/* a word the helper says it read must be in the copy, with
		 * that value: otherwise the memo could answer wrongly for
		 * stacks to come */
		if (r.off > copy_len || copy_len - r.off < 8 ||
		    memcmp(copy + r.off, &r.val, 8)) {
			free(log);
			return (int)f.n;
		}
		log->off[log->n] = r.off;
		log->val[log->n++] = r.val;
	}
	uw_memo_store(c->memo, key, log, ips, (int)f.n);
	free(log);
	return (int)f.n;
}

/* The drain waits for the helper's answer: how long, in all and at most,
 * is the helper's cost to the collector that its CPU time does not show
 * (a helper that is runnable but not running, or slow to page in). */
static void count_wait(struct argus_unwind_client *c, uint64_t t0)
{
	uint64_t d = mono_ns() - t0;

	c->st.wait_ns += d;
	if (d > c->st.wait_max_ns)
		c->st.wait_max_ns = d;
}

int argus_unwind_client__unwind(struct argus_unwind_client *c, uint32_t pid,
				const struct argus_proc_map *maps, size_t nmaps,
				uint64_t ip, uint64_t sp, uint64_t bp,
				const uint8_t *copy, size_t copy_len,
				uint64_t *ips, int max)
{
	struct uwp_unwind q;
	struct uw_memo_key key;
	struct cl_layout *l;
	uint64_t deadline, t0;
	bool fresh;
	int err = 0, n;

	if (!c || !ips || max < 1 || (nmaps && !maps) || (copy_len && !copy))
		return -EINVAL;
	ips[0] = ip;
	if (max == 1 || !sp || !copy || copy_len > UWP_COPY_MAX)
		return 1;
	if (max > UWP_FRAMES_MAX)
		max = UWP_FRAMES_MAX;
	if (!(l = get_layout(c, maps, nmaps, &fresh)))
		return -ENOMEM;
	if (l->poisoned_until && mono_ns() < l->poisoned_until)
		return -EAGAIN;
	key = (struct uw_memo_key){ l->id, ip, sp, bp, (uint32_t)copy_len, (uint32_t)max };
	if ((n = uw_memo_find(c->memo, &key, copy, ips))) {
		c->st.memo_hits++;
		return n;
	}
	if (ensure_helper(c))
		return -EAGAIN;
	follow_cpu(c);
	t0 = mono_ns();
	deadline = t0 + ARGUS_UNWIND_HELPER_TIMEOUT_MS * 1000000ull;
	q = (struct uwp_unwind){ l->id, ip, sp, bp, pid, (uint32_t)max,
				 (uint32_t)copy_len, c->cut ? UWP_F_CUT : 0 };
	/* a layout it cannot have: say it first, and skip a round trip */
	if (fresh)
		err = send_layout(c, l, pid, maps, nmaps, deadline);
	if (!err && !fresh)
		err = send_msg(c, UWP_UNWIND, &q, sizeof(q), copy, copy_len,
			       NULL, 0, deadline);
	/* at most: NEED_LAYOUT, NEED_FILES, LAYOUT_OK, FRAMES */
	for (int round = 0; !err && round < 4; round++) {
		uint32_t type;
		size_t len;

		if ((err = recv_answer(c, &type, &len, deadline)))
			break;
		switch (type) {
		case UWP_FRAMES:
			n = take_frames(c, &key, copy, copy_len, len, ips, max);
			if (n < 0) {
				err = n;
				break;
			}
			c->cut = false;
			c->fails_in_row = 0;
			c->st.unwinds++;
			count_wait(c, t0);
			return n;
		case UWP_NEED_LAYOUT:
			err = len ? -EPROTO
				  : send_layout(c, l, pid, maps, nmaps, deadline);
			break;
		case UWP_NEED_FILES:
			err = send_files(c, pid, maps, nmaps, len, deadline);
			break;
		case UWP_LAYOUT_OK:
			err = len ? -EPROTO
				  : send_msg(c, UWP_UNWIND, &q, sizeof(q), copy,
					     copy_len, NULL, 0, deadline);
			break;
		default:
			err = -EPROTO;
		}
	}
	if (!err)
		err = -EPROTO;  /* went round without frames */
	/* the helper failed on this layout: it is not sent again for a while
	 * (a file that crashes libdw would crash every helper), and its
	 * stacks keep their frame-pointer frames.  Not for ever: the helper
	 * may have died of something else (its user killed it). */
	l->poisoned_until = mono_ns() + CL_POISON_NS;
	helper_failed(c, err);
	count_wait(c, t0);
	return err;
}

int argus_unwind_client__call(struct argus_unwind_client *c, uint32_t type,
			      const void *body, size_t len, const int *fds,
			      size_t nfds, uint32_t want, void *ans,
			      size_t ans_len, unsigned timeout_ms)
{
	uint64_t deadline;
	uint32_t got;
	size_t glen;
	int err;

	if (!c || (len && !body) || (nfds && !fds) || nfds > UWP_FDS_MAX ||
	    len > UWP_MSG_MAX || ans_len > CL_ANSWER_MAX - 64)
		return -EINVAL;
	if (ensure_helper(c))
		return -EAGAIN;
	deadline = mono_ns() + timeout_ms * 1000000ull;
	err = send_msg(c, type, body, len, NULL, 0, fds, nfds, deadline);
	if (!err)
		err = recv_answer(c, &got, &glen, deadline);
	if (!err && (got != want || glen != ans_len))
		err = -EPROTO;
	if (err) {
		helper_failed(c, err);
		return err;
	}
	memcpy(ans, c->rbuf, ans_len);
	c->fails_in_row = 0;
	return 0;
}

void argus_unwind_client__chunk_cut(struct argus_unwind_client *c)
{
	if (!c)
		return;
	c->cut = true;
	reap_zombies(c);
}

void argus_unwind_client__stats(const struct argus_unwind_client *c,
				struct argus_unwind_client_stats *st)
{
	if (!st)
		return;
	*st = c ? c->st : (struct argus_unwind_client_stats){ 0 };
	if (c)
		st->pid = c->pid;
}

uint32_t argus_unwind_client__pid(const struct argus_unwind_client *c)
{
	return c && c->pid > 0 ? (uint32_t)c->pid : 0;
}

bool argus_unwind_client__is_helper(const struct argus_unwind_client *c,
				    uint32_t pid)
{
	if (!c || !pid)
		return false;
	if ((pid_t)pid == c->pid)
		return true;
	for (size_t i = 0; i < sizeof(c->gone) / sizeof(c->gone[0]); i++)
		if ((pid_t)pid == c->gone[i])
			return true;
	return false;
}

double argus_unwind_client__cpu_seconds(const struct argus_unwind_client *c)
{
	char path[64], buf[512], *p;
	unsigned long long ut = 0, st = 0;
	double s;
	ssize_t n;
	int fd;

	if (!c)
		return 0;
	s = c->dead_cpu_s;
	if (c->pid <= 0)
		return s;
	/* the live one's utime and stime: fields 14 and 15, after the comm */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)c->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return s;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return s;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			&ut, &st) == 2)
		s += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	return s;
}

/* The user the helper runs as: a dedicated one if the admin made it (no
 * other process of that uid can signal or ptrace it), else nobody. */
static void helper_user(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam("argus-unwind");

	if (!pw)
		pw = getpwnam("nobody");
	*uid = pw ? pw->pw_uid : 65534;
	*gid = pw ? pw->pw_gid : 65534;
	/* never root, whatever the passwd file says */
	if (*uid == 0 || *gid == 0) {
		*uid = 65534;
		*gid = 65534;
	}
}

struct argus_unwind_client *argus_unwind_client__new(void)
{
	struct argus_unwind_client *c = calloc(1, sizeof(*c));

	if (!c)
		goto nomem;
	c->sock = -1;
	c->memo = uw_memo_new();
	c->rbuf = malloc(CL_ANSWER_MAX);
	c->sbuf = malloc(UWP_MSG_MAX);
	if (!c->memo || !c->rbuf || !c->sbuf)
		goto nomem;
	helper_user(&c->uid, &c->gid);
	if (spawn(c)) {
		int e = errno;

		argus_unwind_client__free(c);
		errno = e;
		return NULL;
	}
	return c;
nomem:
	argus_unwind_client__free(c);
	errno = ENOMEM;
	return NULL;
}

void argus_unwind_client__free(struct argus_unwind_client *c)
{
	if (!c)
		return;
	/* closing the socket ends an idle helper (EOF); one that is stuck
	 * is killed */
	drop_helper(c);
	for (int i = 0; i < CL_ZOMBIES; i++)
		if (c->zombies[i] > 0)
			reap(c, c->zombies[i], 0);
	for (int i = 0; i < CL_LAYOUTS; i++)
		free(c->lay[i].keys);
	uw_memo_free(c->memo);
	free(c->rbuf);
	free(c->sbuf);
	free(c);
}
