/* hw_watch.c - see hw_watch.h.
 *
 * Data: an array of watches, each with its per-thread (perf fd, link fd)
 * pairs.  A few watches of a few processes: linear scans are enough.
 *
 * Kernel facts this relies on (checked on this machine's 6.18 kernel,
 * tests/e2e/watch_*.sh):
 *   - perf_event_open(PERF_TYPE_BREAKPOINT, bp_type HW_BREAKPOINT_W) on a
 *     thread takes one of its debug registers (x86: 4, DR0-DR3); when none
 *     is left it fails with ENOSPC;
 *   - bp_len must be 1, 2, 4 or 8 and bp_addr aligned to it (else EINVAL);
 *   - a perf_event BPF program attached with BPF_LINK_CREATE runs on each
 *     breakpoint hit (its bpf_cookie is not usable: see on_watch);
 *   - inherit + inherit_thread copy the event, program included, into
 *     each thread the watched threads clone (not into forked processes);
 *     remove_on_exec drops it when the process execs;
 *   - closing the parent event's fd (and the link's) removes the
 *     inherited copies too;
 *   - a VM may accept the breakpoint and never fire it (this project's
 *     VM on 2026-11-30: 0 of 1000 writes): breakpoints_fire() checks once
 *     before the first arm.
 */
#include "hw_watch.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>

#include "argus_events.h"

struct tw {                     /* one thread's event */
	uint32_t tid;
	int perf_fd, link_fd;
};

struct watch {
	struct argus_hw_watch_info info;
	struct tw *t;
	uint32_t nt, capt;
};

struct argus_hw_watch {
	int prog_fd, map_fd;
	struct watch *w;            /* ordered by id */
	uint32_t n, cap;
	uint32_t next_id;
	uint64_t hits;              /* all watches, removed ones included */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct argus_hw_watch *argus_hw_watch__new(int prog_fd, int map_fd)
{
	struct argus_hw_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->prog_fd = prog_fd;
	w->map_fd = map_fd;
	w->next_id = 1;
	return w;
}

static void map_del(struct argus_hw_watch *w, const struct watch *x)
{
	struct ae_hw_key k = { .pid = x->info.pid, .addr = x->info.addr };

	bpf_map_delete_elem(w->map_fd, &k);
}

static void disarm(struct watch *x)
{
	for (uint32_t i = 0; i < x->nt; i++) {
		if (x->t[i].link_fd >= 0)
			close(x->t[i].link_fd);
		if (x->t[i].perf_fd >= 0)
			close(x->t[i].perf_fd);
	}
	free(x->t);
	x->t = NULL;
	x->nt = x->capt = 0;
}

void argus_hw_watch__free(struct argus_hw_watch *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n; i++)
		disarm(&w->w[i]);
	free(w->w);
	free(w);
}

/* One thread: open the breakpoint event and link the program to it. */
static int arm_thread(struct argus_hw_watch *w, struct watch *x, uint32_t tid,
		      char *err, size_t errlen)
{
	struct perf_event_attr a;
	struct tw *t;
	int pfd, lfd, e;

	if (x->nt == x->capt) {
		uint32_t cap = x->capt ? x->capt * 2 : 8;
		void *p = realloc(x->t, cap * sizeof(*x->t));

		if (!p) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		x->t = p;
		x->capt = cap;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = x->info.addr;
	a.bp_len = x->info.len;
	a.sample_period = 1;        /* every write runs the program */
	a.inherit = 1;              /* threads cloned later (see hw_watch.h) */
	a.inherit_thread = 1;       /* ...but not forked processes */
	a.remove_on_exec = 1;
	a.exclude_hv = 1;
	pfd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		e = -errno;
		if (e == -ESRCH)        /* the thread exited meanwhile: nothing to watch */
			return 0;
		if (e == -ENOSPC)
			snprintf(err, errlen,
				 "no debug register left on thread %u of process %u "
				 "(x86 has 4 per thread; argus watch --list shows what is armed)",
				 tid, x->info.pid);
		else
			snprintf(err, errlen, "perf_event_open(breakpoint) on thread %u: %s",
				 tid, strerror(-e));
		return e;
	}
	lfd = bpf_link_create(w->prog_fd, pfd, BPF_PERF_EVENT, NULL);
	if (lfd < 0) {
		e = -errno;     /* libbpf 1.x: errno is set, lfd is -errno */
		snprintf(err, errlen, "attaching the watch program to thread %u: %s", tid,
			 strerror(-e));
		close(pfd);
		return e;
	}
	t = &x->t[x->nt++];
	t->tid = tid;
	t->perf_fd = pfd;
	t->link_fd = lfd;
	return 0;
}

/*
 * Do breakpoints fire on this machine?  A VM whose hypervisor does not
 * pass the debug registers through accepts perf_event_open(BREAKPOINT)
 * and never counts a hit (seen on this project's VM on 2026-11-30: 0 of
 * 7 writes, where BRIEF §5 had 1000 of 1000): every watch would be armed
 * and record nothing.  Checked once, on a variable of argusd's own
 * thread: 1 fire, 0 not, -errno if it cannot tell (then the arm goes on
 * and its own error, if any, says why).
 */
static volatile uint32_t probe_word;

static int breakpoints_fire(void)
{
	static int known = -1;
	struct perf_event_attr a;
	uint64_t count = 0;
	int fd;

	if (known >= 0)
		return known;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&probe_word;
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (uint32_t i = 1; i <= 3; i++)
		probe_word = i;
	if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count)) {
		close(fd);
		return -EIO;
	}
	close(fd);
	known = count > 0;
	return known;
}

/* The Tgid of task `tid` (/proc/TID/status), or -errno. */
static int tgid_of(uint32_t tid)
{
	char path[64], line[256];
	FILE *f;
	int tgid = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

int argus_hw_watch__add(struct argus_hw_watch *w, uint32_t pid, uint64_t addr,
			uint32_t len, uint32_t reader, uint32_t *id, char *err, size_t errlen)
{
	struct watch x;
	char path[64];
	struct dirent *de;
	DIR *d;
	int e = 0;

	if (len != 1 && len != 2 && len != 4 && len != 8) {
		snprintf(err, errlen, "watch length %u: must be 1, 2, 4 or 8 bytes", len);
		return -EINVAL;
	}
	if (!addr || addr % len) {
		snprintf(err, errlen,
			 "address 0x%" PRIx64 " is not aligned to the %u-byte length "
			 "(debug registers watch aligned ranges only)", addr, len);
		return -EINVAL;
	}
	if (!pid) {
		snprintf(err, errlen, "no process 0");
		return -ESRCH;
	}
	/* the BPF map is keyed by (tgid, address): one watch per address */
	for (uint32_t i = 0; i < w->n; i++)
		if (w->w[i].info.pid == pid && w->w[i].info.addr == addr) {
			snprintf(err, errlen, "process %u address 0x%" PRIx64 " is already watched (id %u)",
				 pid, addr, w->w[i].info.id);
			return -EEXIST;
		}
	if ((e = tgid_of(pid)) != (int)pid) {
		if (e > 0)
			snprintf(err, errlen, "%u is a thread of process %d: watch the process (--pid %d)",
				 pid, e, e);
		else
			snprintf(err, errlen, "no process %u", pid);
		return e > 0 ? -EINVAL : -ESRCH;
	}
	/* The reader comes from root's CLI, but it is stamped into every
	 * write's record and the graph trusts it: a tid of another process
	 * would draw edges into a stranger's thread. */
	if (reader && (e = tgid_of(reader)) != (int)pid) {
		if (e > 0)
			snprintf(err, errlen, "reader %u is a thread of process %d, not of %u", reader,
				 e, pid);
		else
			snprintf(err, errlen, "reader %u: no such thread in process %u", reader, pid);
		return -EINVAL;
	}
	/* after the input's checks: a bad request is told what is wrong
	 * with it on any machine */
	if (breakpoints_fire() == 0) {
		snprintf(err, errlen,
			 "hardware watchpoints do not fire on this machine: a breakpoint on a "
			 "variable of argusd's own counted none of 3 writes (a virtual machine "
			 "whose hypervisor does not pass the debug registers through?), so a "
			 "watch would record nothing: argus flag still finds the flag, but its "
			 "writer cannot be followed here");
		return -EOPNOTSUPP;
	}
	e = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "no process %u", pid);
		return -ESRCH;
	}
	memset(&x, 0, sizeof(x));
	x.info.id = w->next_id;
	x.info.pid = pid;
	x.info.addr = addr;
	x.info.len = len;
	x.info.reader = reader;
	x.info.armed_ns = mono_ns();
	/* in the map before the first event exists: no hit can be missed */
	{
		struct ae_hw_key k = { .pid = pid, .addr = addr };
		struct ae_hw_val v = { .watch_id = x.info.id, .len = len, .reader = reader };

		if (bpf_map_update_elem(w->map_fd, &k, &v, BPF_NOEXIST)) {
			e = -errno;
			closedir(d);
			snprintf(err, errlen, "%s",
				 e == -E2BIG ? "too many watches (argus watch --remove some)"
					     : "cannot add the watch to the BPF map");
			return e;
		}
	}
	/* A thread cloned while we walk the directory inherits the event of
	 * the thread that cloned it once that one is armed; one cloned by a
	 * thread not yet armed shows up later in the walk (readdir sees
	 * entries added behind its position). */
	while ((de = readdir(d)) && !e) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid)
			continue;
		e = arm_thread(w, &x, (uint32_t)tid, err, errlen);
	}
	closedir(d);
	if (!e && !x.nt) {
		snprintf(err, errlen, "no process %u (it exited)", pid);
		e = -ESRCH;
	}
	if (e) {
		disarm(&x);
		map_del(w, &x);
		return e;
	}
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 8;
		void *p = realloc(w->w, cap * sizeof(*w->w));

		if (!p) {
			disarm(&x);
			map_del(w, &x);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		w->w = p;
		w->cap = cap;
	}
	x.info.threads = x.nt;
	w->w[w->n++] = x;
	w->next_id++;
	*id = x.info.id;
	return 0;
}

static void drop_at(struct argus_hw_watch *w, uint32_t i)
{
	disarm(&w->w[i]);
	map_del(w, &w->w[i]);
	memmove(&w->w[i], &w->w[i + 1], (w->n - i - 1) * sizeof(*w->w));
	w->n--;
}

int argus_hw_watch__remove(struct argus_hw_watch *w, uint32_t id)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->w[i].info.id == id) {
			drop_at(w, i);
			return 0;
		}
	return -ENOENT;
}

int argus_hw_watch__remove_pid(struct argus_hw_watch *w, uint32_t pid)
{
	int n = 0;

	for (uint32_t i = w->n; i-- > 0;)
		if (w->w[i].info.pid == pid) {
			drop_at(w, i);
			n++;
		}
	return n;
}

void argus_hw_watch__record(struct argus_hw_watch *w, const void *rec, size_t size)
{
	const struct ae_hdr *h = rec;

	if (!w || !w->n || size < sizeof(*h))
		return;
	switch (h->type) {
	case AE_HWWATCH: {
		const struct ae_hwwatch *r = rec;

		if (size < sizeof(*r))
			return;
		w->hits++;
		for (uint32_t i = 0; i < w->n; i++)
			if (w->w[i].info.id == r->watch_id)
				w->w[i].info.hits++;
		break;
	}
	case AE_EXIT: {
		const struct ae_exit *r = rec;

		if (size < sizeof(*r))
			return;
		/* Only the last thread's exit disarms.  A single thread's
		 * event stays open: closing it would also remove the copies
		 * the threads it cloned inherited, which still run. */
		if (r->group_dead)
			argus_hw_watch__remove_pid(w, h->pid);
		break;
	}
	case AE_EXEC:
		/* a new program: the address means nothing any more (the
		 * kernel already dropped the events: remove_on_exec) */
		argus_hw_watch__remove_pid(w, h->pid);
		break;
	default:
		break;
	}
}

uint32_t argus_hw_watch__count(const struct argus_hw_watch *w)
{
	return w ? w->n : 0;
}

uint64_t argus_hw_watch__hits(const struct argus_hw_watch *w)
{
	return w ? w->hits : 0;
}

int argus_hw_watch__get(const struct argus_hw_watch *w, uint32_t i,
			struct argus_hw_watch_info *info)
{
	if (!w || i >= w->n)
		return -ENOENT;
	*info = w->w[i].info;
	return 0;
}

/* ---- the control request (argusd) ------------------------------------- */

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -EINVAL : 0;
}

int argus_hw_watch__request(struct argus_hw_watch *w, const char *args, FILE *out)
{
	char verb[16] = "", a1[32] = "", a2[32] = "", a3[32] = "", a4[32] = "", err[256];
	uint64_t pid, addr, len, id, reader = 0;
	int n = sscanf(args, "%15s %31s %31s %31s %31s", verb, a1, a2, a3, a4), e;
	uint32_t got;

	if (n >= 1 && !strcmp(verb, "add") && (n == 4 || n == 5)) {
		if (parse_u64(a1, &pid) || !pid || pid > UINT32_MAX || parse_u64(a2, &addr) ||
		    parse_u64(a3, &len) || len > UINT32_MAX ||
		    (n == 5 && (parse_u64(a4, &reader) || !reader || reader > INT32_MAX))) {
			fprintf(out, "error: watch add: bad arguments '%.64s'\n", args);
			return -EINVAL;
		}
		e = argus_hw_watch__add(w, (uint32_t)pid, addr, (uint32_t)len, (uint32_t)reader,
					&got, err, sizeof(err));
		if (e) {
			fprintf(out, "error: %s\n", err);
			return e;
		}
		for (uint32_t i = 0; i < w->n; i++)
			if (w->w[i].info.id == got)
				fprintf(out, "id=%u\nthreads=%u\n", got, w->w[i].info.threads);
		return 0;
	}
	if (n == 1 && !strcmp(verb, "list")) {
		for (uint32_t i = 0; i < w->n; i++) {
			const struct argus_hw_watch_info *x = &w->w[i].info;

			fprintf(out, "watch id=%u pid=%u addr=0x%" PRIx64 " len=%u threads=%u hits=%" PRIu64
				" armed_ns=%" PRIu64 " reader=%u\n", x->id, x->pid, x->addr, x->len,
				x->threads, x->hits, x->armed_ns, x->reader);
		}
		return 0;
	}
	if (n == 2 && !strcmp(verb, "remove")) {
		if (parse_u64(a1, &id) || id > UINT32_MAX) {
			fprintf(out, "error: watch remove: bad id '%.32s'\n", a1);
			return -EINVAL;
		}
		if (argus_hw_watch__remove(w, (uint32_t)id)) {
			fprintf(out, "error: no watch with id %" PRIu64 " (argus watch --list)\n", id);
			return -ENOENT;
		}
		fprintf(out, "removed=1\n");
		return 0;
	}
	if (n == 2 && !strcmp(verb, "remove-pid")) {
		if (parse_u64(a1, &pid) || pid > UINT32_MAX) {
			fprintf(out, "error: watch remove: bad pid '%.32s'\n", a1);
			return -EINVAL;
		}
		e = argus_hw_watch__remove_pid(w, (uint32_t)pid);
		if (!e) {
			fprintf(out, "error: no watch on process %" PRIu64 " (argus watch --list)\n",
				pid);
			return -ENOENT;
		}
		fprintf(out, "removed=%d\n", e);
		return 0;
	}
	if (n == 1 && !strcmp(verb, "remove-all")) {
		fprintf(out, "removed=%u\n", w->n);
		while (w->n)
			drop_at(w, w->n - 1);
		return 0;
	}
	fprintf(out, "error: unknown watch request '%.64s'\n", args);
	return -EINVAL;
}
