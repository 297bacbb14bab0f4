/* hang_keep.c - see hang_keep.h.
 *
 * Pending saves: one entry per live hang reported BEGAN, with the time its
 * save is due (the hang's end + TAIL_NS, or start + threshold + grace).
 * When one is due and no save is running, __run() creates the snapshot
 * file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600, in a directory checked to be
 * ours) and forks.  The child, at nice 19:
 *   1. copies the ring into it with argus_trace__save(), the writer of
 *      `argus save`, through /proc/self/fd/N: the file it writes is the
 *      very inode opened with O_EXCL, whatever happens to the name;
 *   2. diagnoses it through the analysis session argusd hands in
 *      (opts.analyze: the words of `argus diagnose SNAP --pid P [--tid T]
 *      --json`, and when that finds nothing, again with --at inside the
 *      hang), in a grandchild with a time limit, its output in a private
 *      temporary file -- no argus binary is run;
 *   3. when diagnosed, the session's report on it too: NAME.html, the
 *      same diagnosis as a self-contained page;
 *   3a. if the waiter of a blocked hang still going when reported has run
 *      since (its context switches, waiter_moved()), before or after
 *      that diagnosis, what the diagnosis asked /proc may be of after the
 *      hang: the ring is cut again, up to then, into NAME.argus.tmp
 *      renamed over NAME.argus, and 2-3 are done once more on it;
 *   4. writes NAME.json.tmp and renames it to NAME.json;
 *   5. exits 0, or 1 with one line on its status pipe (and no snapshot).
 * The parent reaps it by pid between drains, logs the line and prunes.
 *
 * Invariant: at most one child at a time; a failed save leaves no files.
 *
 * Per uid (hang_keep.h): the pending list holds at most
 * ARGUS_HANG_PEND_PER_UID entries of a uid; __run() starts the due save
 * of another uid than the last one's when there is one; prune() reads
 * each snapshot's uid from the head of its .json, where write_meta()
 * puts it ahead of anything a process controls (its comm).
 */
#include "hang_keep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector.h"
#include "syscall_names.h"
#include "trace_format.h"

/* after a hang ends, keep this much more: the wake-up that ended it and
 * what the thread did next */
#define TAIL_NS (500ull * 1000 * 1000)
/* the child's exit status when the full model rejects the live report */
#define CHILD_REJECTED 3
/* a diagnosis that takes longer than this is abandoned (the snapshot stays) */
#define DIAGNOSE_TIMEOUT_S 300
/* the waiter's context switches are not known (waiter_moved()) */
#define NO_SWITCHES UINT64_MAX
/* how long a cut taken again waits for the collector's ring to hold what
 * has happened up to now: the collector closes a chunk every second (its
 * chunk_ms) while anything runs */
#define RECUT_WAIT_MS 3000
/*
 * Under ASan (the sanitizer and fuzz builds) the runtime has reserved
 * terabytes of shadow address space: RLIMIT_AS would fail every mmap, so
 * the diagnosis's limit is not set there (as unwind_helper.c does).
 */
#if defined(__SANITIZE_ADDRESS__)
#define KEEP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEEP_SANITIZED 1
#endif
#endif
#ifndef KEEP_SANITIZED
#define KEEP_SANITIZED 0
#endif

struct pend {
	struct argus_live_hang h;
	uint64_t due_ns;
	/* the waiter's context switches when the hang was reported, a
	 * blocked one still going; NO_SWITCHES otherwise (waiter_moved()) */
	uint64_t switches;
};

struct argus_hang_keeper {
	struct argus_hang_keeper_opts o;
	char *dir;
	int dirfd;
	struct pend *pend;
	size_t npend, cappend;
	/* the running save */
	pid_t child;
	uint32_t last_uid;      /* the uid of the save started last */
	int status_fd;          /* its status pipe */
	char name[200];         /* its base name, no extension */
	struct argus_live_hang child_hang;
	uint64_t child_switches;
	struct argus_hang_keeper_status st;
};

static void say(const struct argus_hang_keeper *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct argus_hang_keeper *k, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!k->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	k->o.log(k->o.log_ctx, line);
}

static uint64_t mono_to_real(uint64_t mono)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	int64_t now_m = (int64_t)m.tv_sec * 1000000000 + m.tv_nsec;
	int64_t now_r = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec;
	return (uint64_t)(now_r - (now_m - (int64_t)mono));
}

static const char *kind_str(enum argus_live_kind k)
{
	switch (k) {
	case ARGUS_LIVE_BLOCKED: return "blocked";
	case ARGUS_LIVE_YIELD: return "yield";
	case ARGUS_LIVE_BUSY: return "busy";
	}
	return "?";
}

/* ---- the directory ---- */

/* mkdir -p with 0700 for what it creates; then the last component must be
 * a directory (not a symlink) owned by us, and is made 0700. */
static int make_dir(const char *dir, char *err, size_t errlen)
{
	char buf[4096];
	struct stat st;
	size_t n = strlen(dir);

	if (!n || n >= sizeof(buf)) {
		snprintf(err, errlen, "bad hang directory '%s'", dir);
		return -EINVAL;
	}
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0700) && errno != EEXIST) {
			int e = -errno;
			snprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
			return e;
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		int e = -errno;
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return e;
	}
	if (lstat(dir, &st)) {
		int e = -errno;
		snprintf(err, errlen, "cannot stat %s: %s", dir, strerror(errno));
		return e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory (a symlink?): refusing to keep hang snapshots there", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to uid %u, not %u: refusing to keep hang snapshots there",
			 dir, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	/* snapshots hold every process's activity: root's eyes only */
	if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700)) {
		int e = -errno;
		snprintf(err, errlen, "cannot make %s private (chmod 0700): %s", dir, strerror(errno));
		return e;
	}
	return 0;
}

/* The "uid" of a snapshot's .json: write_meta() puts it right after
 * "pid" and "tid", before the comm (which any process sets), so the head
 * of the file is enough and cannot be forged. */
static uint32_t json_uid(int dfd, const char *json)
{
	char head[256], *p;
	ssize_t n;
	int fd = openat(dfd, json, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return ARGUS_HANG_UID_UNKNOWN;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	head[n > 0 ? n : 0] = 0;
	/* only the fixed fields ahead of "comm" */
	if ((p = strstr(head, ",\"comm\":")))
		*p = 0;
	p = strstr(head, ",\"uid\":");
	if (!p || p[7] < '0' || p[7] > '9')
		return ARGUS_HANG_UID_UNKNOWN;
	unsigned long long u = strtoull(p + 7, NULL, 10);
	return u < ARGUS_HANG_UID_UNKNOWN ? (uint32_t)u : ARGUS_HANG_UID_UNKNOWN;
}

static int by_age(const void *a, const void *b)
{
	const struct argus_hang_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
	return -strcmp(x->name, y->name);
}

int argus_hang_dir__list(const char *dir, struct argus_hang_file **files, size_t *n)
{
	struct argus_hang_file *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int dfd;

	*files = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char json[300];
		struct stat st, js;

		if (len < 7 || len >= sizeof(v->name) - 8 || strcmp(de->d_name + len - 6, ".argus"))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (cnt == cap) {
			void *p = realloc(v, (cap = cap ? cap * 2 : 32) * sizeof(*v));
			if (!p) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = p;
		}
		memset(&v[cnt], 0, sizeof(v[cnt]));
		memcpy(v[cnt].name, de->d_name, len + 1);
		v[cnt].bytes = (uint64_t)st.st_size;
		v[cnt].mtime = st.st_mtim;
		snprintf(json, sizeof(json), "%.*s.json", (int)(len - 6), de->d_name);
		v[cnt].uid = ARGUS_HANG_UID_UNKNOWN;
		if (!fstatat(dfd, json, &js, AT_SYMLINK_NOFOLLOW) && S_ISREG(js.st_mode)) {
			v[cnt].has_json = true;
			v[cnt].bytes += (uint64_t)js.st_size;
			v[cnt].uid = json_uid(dfd, json);
		}
		/* its report counts toward the space bound too */
		snprintf(json, sizeof(json), "%.*s.html", (int)(len - 6), de->d_name);
		if (!fstatat(dfd, json, &js, AT_SYMLINK_NOFOLLOW) && S_ISREG(js.st_mode))
			v[cnt].bytes += (uint64_t)js.st_size;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_age);
	*files = v;
	*n = cnt;
	return 0;
}

static void remove_set(int dirfd, const char *base)
{
	static const char *const ext[] = { ".argus", ".json", ".html", ".json.tmp", ".diag.tmp",
					   ".err.tmp", ".argus.tmp" };
	char path[300];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", base, ext[i]);
		unlinkat(dirfd, path, 0);
	}
}

/* A uid's share of the directory, while pruning. */
struct uid_use {
	uint32_t uid;
	uint32_t n;             /* its snapshots left */
	uint64_t bytes;         /* and their bytes */
};

static struct uid_use *use_of(struct uid_use *u, size_t *nu, uint32_t uid)
{
	for (size_t i = 0; i < *nu; i++)
		if (u[i].uid == uid)
			return &u[i];
	u[*nu] = (struct uid_use){ .uid = uid };
	return &u[(*nu)++];
}

static void remove_file(struct argus_hang_keeper *k, struct argus_hang_file *old,
			const char *why)
{
	char base[256];

	snprintf(base, sizeof(base), "%.*s", (int)(strlen(old->name) - 6), old->name);
	remove_set(k->dirfd, base);
	say(k, "removed hang snapshot %s/%s (%s)", k->dir, old->name, why);
	old->name[0] = 0; /* gone */
	k->st.removed++;
}

/* Per uid, oldest first, down to keep snapshots; then, while the whole
 * directory is over max_bytes, the oldest of the uid that holds the most
 * bytes.  Each uid's newest stays: one user's hangs never remove
 * another's while that one holds less. */
static void prune(struct argus_hang_keeper *k)
{
	struct argus_hang_file *f;
	struct uid_use *u;
	size_t n, nu = 0, left;
	uint64_t total = 0;
	char why[96];

	if (argus_hang_dir__list(k->dir, &f, &n))
		return;
	u = calloc(n ? n : 1, sizeof(*u));
	if (!u) {
		free(f);
		return;
	}
	left = n;
	snprintf(why, sizeof(why), "keeping %u snapshots per uid", k->o.keep);
	/* newest first: a uid's (keep+1)th and older go */
	for (size_t i = 0; i < n; i++) {
		struct uid_use *x = use_of(u, &nu, f[i].uid);

		if (x->n >= k->o.keep) {
			remove_file(k, &f[i], why);
			left--;
			continue;
		}
		x->n++;
		x->bytes += f[i].bytes;
		total += f[i].bytes;
	}
	snprintf(why, sizeof(why), "keeping %llu MiB at most, from the uid holding the most",
		 (unsigned long long)(k->o.max_bytes >> 20));
	while (total > k->o.max_bytes) {
		struct uid_use *big = NULL;

		for (size_t j = 0; j < nu; j++)
			if (u[j].n > 1 && (!big || u[j].bytes > big->bytes))
				big = &u[j];
		if (!big)
			break; /* one snapshot per uid: each uid's newest stays */
		for (size_t i = n; i-- > 0;) {
			if (!f[i].name[0] || f[i].uid != big->uid)
				continue;
			total -= f[i].bytes;
			big->bytes -= f[i].bytes;
			big->n--;
			remove_file(k, &f[i], why);
			left--;
			break;
		}
	}
	k->st.in_dir = (uint32_t)left;
	free(u);
	free(f);
}

/* ---- setup ---- */

struct argus_hang_keeper *argus_hang_keeper__new(const struct argus_hang_keeper_opts *opts,
						 char *err, size_t errlen)
{
	struct argus_hang_keeper *k = calloc(1, sizeof(*k));
	int e;

	if (!k) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	memcpy(&k->o, opts, opts->sz < sizeof(k->o) ? opts->sz : sizeof(k->o));
	k->o.sz = sizeof(k->o);
	if (!k->o.threshold_ns)
		k->o.threshold_ns = 2000000000ull;
	if (!k->o.before_ns)
		k->o.before_ns = 10000000000ull;
	if (!k->o.grace_ns)
		k->o.grace_ns = 3000000000ull;
	if (!k->o.keep)
		k->o.keep = 20;
	if (!k->o.max_bytes)
		k->o.max_bytes = 512ull << 20;
	k->dir = strdup(k->o.dir ? k->o.dir : ARGUS_DEFAULT_HANG_DIR);

	k->dirfd = -1;
	k->status_fd = -1;
	k->last_uid = ARGUS_HANG_UID_UNKNOWN;
	if (!k->dir) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto fail;
	}
	if ((e = make_dir(k->dir, err, errlen)))
		goto fail;
	k->dirfd = open(k->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (k->dirfd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", k->dir, strerror(errno));
		goto fail;
	}
	prune(k);
	return k;
fail:
	argus_hang_keeper__free(k, 0);
	errno = -e;
	return NULL;
}

const char *argus_hang_keeper__dir(const struct argus_hang_keeper *k)
{
	return k->dir;
}

void argus_hang_keeper__status(const struct argus_hang_keeper *k,
			       struct argus_hang_keeper_status *st)
{
	*st = k->st;
	st->pending = (uint32_t)k->npend;
}

/*
 * How many times thread tid of process pid has been switched out so far
 * (/proc/PID/task/TID/status: voluntary + nonvoluntary), NO_SWITCHES when
 * it is gone.  A thread blocked in one wait is not switched at all: while
 * the sum stays the same, it has not run since, so it is still in the
 * wait it was found in.
 */
static uint64_t thread_switches(uint32_t pid, uint32_t tid)
{
	char path[64], line[128];
	uint64_t sum = 0;
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	if (!(f = fopen(path, "re")))
		return NO_SWITCHES;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			sum += v;
			seen++;
		}
	}
	fclose(f);
	return seen == 2 ? sum : NO_SWITCHES;
}

/* ---- the watcher's reports ---- */

void argus_hang_keeper__on_hang(void *ctx, enum argus_hang_change what,
				const struct argus_live_hang *h)
{
	struct argus_hang_keeper *k = ctx;

	if (what == ARGUS_HANG_BEGAN) {
		const char *sys = h->sys_nr >= 0 ? argus_syscall_name(h->sys_nr) : NULL;
		uint32_t mine = 0;

		for (size_t i = 0; i < k->npend; i++)
			mine += k->pend[i].h.uid == h->uid;
		if (mine >= ARGUS_HANG_PEND_PER_UID || k->npend >= ARGUS_HANG_PEND_MAX) {
			/* any user names processes as it likes: its hangs wait in
			 * a queue of their own bounded size */
			k->st.dropped++;
			say(k, "hang of %s %u/%u (uid %u) not kept: %u of its uid's hangs wait"
			    " for their save already", h->comm, h->pid, h->tid, h->uid, mine);
			return;
		}
		if (k->npend == k->cappend) {
			size_t ncap = k->cappend ? k->cappend * 2 : 8;
			void *p = realloc(k->pend, ncap * sizeof(*k->pend));
			if (!p) {
				k->st.failed++;
				say(k, "out of memory: hang of %s %u/%u not kept", h->comm, h->pid, h->tid);
				return;
			}
			k->pend = p;
			k->cappend = ncap;
		}
		k->pend[k->npend].h = *h;
		k->pend[k->npend].due_ns = h->start_ns + k->o.threshold_ns + k->o.grace_ns;
		/* a blocked waiter, still waiting: what the diagnosis asks the
		 * running system later holds for this hang only while the
		 * waiter has not moved (waiter_moved()) */
		k->pend[k->npend].switches = h->kind == ARGUS_LIVE_BLOCKED && !h->end_ns ?
			thread_switches(h->pid, h->tid) : NO_SWITCHES;
		k->npend++;
		say(k, "hang: %s %u/%u %s%s%s%s for %.1f s (live rule%s); snapshot to follow",
		    h->comm, h->pid, h->tid, kind_str(h->kind), sys ? " in " : "", sys ? sys : "",
		    h->request ? " after a request" : "", (double)k->o.threshold_ns / 1e9,
		    h->late ? ", found when it ended" : "");
		return;
	}
	for (size_t i = 0; i < k->npend; i++) {
		struct pend *p = &k->pend[i];

		if (p->h.id != h->id)
			continue;
		p->h.end_ns = h->end_ns;
		p->h.exited = h->exited;
		if (h->end_ns + TAIL_NS < p->due_ns)
			p->due_ns = h->end_ns + TAIL_NS;
		return;
	}
	/* its save already started (an ongoing hang): the snapshot ends there */
}

bool argus_hang_keeper__due(const struct argus_hang_keeper *k, uint64_t now_ns)
{
	if (k->child > 0)
		return false;
	for (size_t i = 0; i < k->npend; i++)
		if (k->pend[i].due_ns <= now_ns)
			return true;
	return false;
}

/* ---- the child ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Reads a whole (small) file at dirfd/name into a malloc'd string. */
static char *slurp(int dirfd, const char *name, size_t max)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *buf;
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while (n < max && (r = read(fd, buf + n, max - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return buf;
}

/* One JSON object, nothing else (leading/trailing space aside)? */
static char *json_object(char *s)
{
	size_t n;

	if (!s)
		return NULL;
	s += strspn(s, " \t\r\n");
	n = strlen(s);
	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = 0;
	return n >= 2 && s[0] == '{' && s[n - 1] == '}' ? s : NULL;
}

/* The session's VERB SNAP --pid P [--tid T] [--at NS] ARG1 [ARG2]
 * (diagnose --json; report -o FILE) in a grandchild, stdout and stderr
 * into private files; returns its exit status (-1: did not run, or past
 * DIAGNOSE_TIMEOUT_S). */
static int run_session(struct argus_hang_keeper *k, const char *verb, const char *snap,
		   const char *out, const char *errf, uint64_t at_ns, const char *arg1,
		   const char *arg2)
{
	char pid[16], tid[16], at[24], thr[24];
	char *argv[16];
	int n = 0, st;
	pid_t c;

	snprintf(pid, sizeof(pid), "%u", k->child_hang.pid);
	snprintf(tid, sizeof(tid), "%u", k->child_hang.tid);
	snprintf(at, sizeof(at), "%llu", (unsigned long long)at_ns);
	argv[n++] = (char *)verb;
	argv[n++] = (char *)snap;
	argv[n++] = "--pid";
	argv[n++] = pid;
	if (k->child_hang.tid != k->child_hang.pid) {
		argv[n++] = "--tid";
		argv[n++] = tid;
	}
	if (at_ns) {
		argv[n++] = "--at";
		argv[n++] = at;
	}
	/* the hang model's threshold is the watch's */
	snprintf(thr, sizeof(thr), "%llu",
		 (unsigned long long)((k->o.threshold_ns ? k->o.threshold_ns : 2000000000ull) / 1000000));
	argv[n++] = "--threshold";
	argv[n++] = thr;
	argv[n++] = (char *)arg1;
	if (arg2)
		argv[n++] = (char *)arg2;
	argv[n] = NULL;
	unlinkat(k->dirfd, out, 0);
	unlinkat(k->dirfd, errf, 0);
	int ofd = openat(k->dirfd, out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int efd = openat(k->dirfd, errf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ofd < 0 || efd < 0) {
		if (ofd >= 0)
			close(ofd);
		if (efd >= 0)
			close(efd);
		return -1;
	}
	c = fork();
	if (c == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		close_range(3, ~0u, 0);
		/* the graph costs ~140 B per event: a snapshot of a user's
		 * flood must not take the machine's memory; past the limit
		 * the session fails (out of memory) and the snapshot is kept
		 * without a diagnosis */
		if (!KEEP_SANITIZED) {
			struct rlimit as = { (rlim_t)ARGUS_HANG_DIAG_AS_MB << 20,
					     (rlim_t)ARGUS_HANG_DIAG_AS_MB << 20 };
			setrlimit(RLIMIT_AS, &as);
		}
		fflush(NULL);
		st = k->o.analyze(k->o.analyze_ctx, n, argv);
		fflush(NULL);
		_exit(st);
	}
	close(ofd);
	close(efd);
	if (c < 0)
		return -1;
	for (int waited = 0;; waited++) {
		pid_t r = waitpid(c, &st, WNOHANG);
		if (r == c)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (waited >= DIAGNOSE_TIMEOUT_S * 10) {
			kill(c, SIGKILL);
			waitpid(c, &st, 0);
			return -1;
		}
		usleep(100000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void first_line(char *s, size_t max)
{
	if (!s)
		return;
	s[strcspn(s, "\n")] = 0;
	if (strlen(s) > max)
		s[max] = 0;
}

/* "argus diagnose: SNAP: no hang of ..." -> "no hang of ...": the file
 * and the command are known from where the message is stored */
static void strip_prefix(char *msg, const char *snap)
{
	static const char cmd[] = "argus diagnose: ";
	char *p = msg;
	size_t n = strlen(snap);

	if (!msg)
		return;
	if (!strncmp(p, cmd, sizeof(cmd) - 1))
		p += sizeof(cmd) - 1;
	if (!strncmp(p, snap, n) && p[n] == ':' && p[n + 1] == ' ')
		p += n + 2;
	memmove(msg, p, strlen(p) + 1);
}

static void write_meta(struct argus_hang_keeper *k, FILE *f, const char *snap_name,
		       uint64_t from_ns, uint64_t recut_ns, const char *diag, const char *diag_err,
		       uint64_t diag_at, bool have_report)
{
	const struct argus_live_hang *h = &k->child_hang;
	const char *sys = h->sys_nr >= 0 ? argus_syscall_name(h->sys_nr) : NULL;
	uint64_t real = mono_to_real(h->start_ns);
	uint64_t dur = h->end_ns ? h->end_ns - h->start_ns : 0;
	char when[64];
	time_t t = (time_t)(real / 1000000000ull);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", &tm);
	fprintf(f, "{\"snapshot\":");
	json_str(f, snap_name);
	/* "uid" ahead of the comm: prune() reads it from the file's head */
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"uid\":%u,\"comm\":", h->pid, h->tid, h->uid);
	json_str(f, h->comm);
	fprintf(f, ",\"watched\":[%s%s%s%s%s]",
		h->why & ARGUS_WATCH_PID ? "\"pid\"" : "",
		(h->why & ARGUS_WATCH_PID) && (h->why & ~(unsigned)ARGUS_WATCH_PID) ? "," : "",
		h->why & ARGUS_WATCH_COMM ? "\"comm\"" : "",
		(h->why & ARGUS_WATCH_COMM) && (h->why & ARGUS_WATCH_INTERACTIVE) ? "," : "",
		h->why & ARGUS_WATCH_INTERACTIVE ? "\"interactive\"" : "");
	fprintf(f, ",\"live\":{\"kind\":\"%s\",\"wait\":", kind_str(h->kind));
	if (sys)
		json_str(f, sys);
	else
		fputs("null", f);
	fprintf(f, ",\"request\":%s,\"late\":%s,\"start_ns\":%llu,\"end_ns\":",
		h->request ? "true" : "false", h->late ? "true" : "false",
		(unsigned long long)h->start_ns);
	if (h->end_ns)
		fprintf(f, "%llu", (unsigned long long)h->end_ns);
	else
		fputs("null", f);
	fprintf(f, ",\"ongoing\":%s,\"exited\":%s,\"duration_ms\":",
		h->end_ns ? "false" : "true", h->exited ? "true" : "false");
	if (h->end_ns)
		fprintf(f, "%.1f", (double)dur / 1e6);
	else
		fputs("null", f);
	fprintf(f, ",\"threshold_ms\":%.0f,\"began\":\"%s\",\"began_real_ns\":%llu}",
		(double)k->o.threshold_ns / 1e6, when, (unsigned long long)real);
	fprintf(f, ",\"saved_from_ns\":%llu", (unsigned long long)from_ns);
	/* the waiter moved before the diagnosis was done: the snapshot was
	 * cut again up to then, and that is what was diagnosed */
	if (recut_ns)
		fprintf(f, ",\"recut_ns\":%llu", (unsigned long long)recut_ns);
	if (diag_at)
		fprintf(f, ",\"diagnosis_at_ns\":%llu", (unsigned long long)diag_at);
	fprintf(f, ",\"diagnosis\":%s", diag ? diag : "null");
	fprintf(f, ",\"report\":");
	if (have_report) {
		char html[300];

		snprintf(html, sizeof(html), "%s.html", k->name);
		json_str(f, html);
	} else {
		fputs("null", f);
	}
	if (diag_err) {
		fprintf(f, ",\"diagnose_error\":");
		json_str(f, diag_err);
	}
	fprintf(f, "}\n");
}

static void child_fail(int sfd, struct argus_hang_keeper *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
static void child_fail(int sfd, struct argus_hang_keeper *k, const char *fmt, ...)
{
	char line[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	remove_set(k->dirfd, k->name);
	if (write(sfd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0) {
		/* the parent reads the exit status anyway */
	}
	_exit(1);
}

/* Does the full model's list of the thread's hangs (`argus hangs SNAP
 * --pid P [--tid T] --json`, our own session's JSON: objects that open
 * with "pid", "tid", then give "start_ns" and "end_ns") hold one that
 * overlaps the live report [from, to]? */
static bool model_agrees(const char *json, uint32_t tid, uint64_t from, uint64_t to)
{
	const char *p = json;

	while (p && (p = strstr(p, "\"tid\":"))) {
		unsigned long long t = 0, a = 0, b = 0;
		const char *sp = strstr(p, "\"start_ns\":"), *ep = strstr(p, "\"end_ns\":");

		if (!sp || !ep || sscanf(p, "\"tid\":%llu", &t) != 1 ||
		    sscanf(sp, "\"start_ns\":%llu", &a) != 1 || sscanf(ep, "\"end_ns\":%llu", &b) != 1)
			return false;
		if (t == tid && a < to && b > from)
			return true;
		p = ep;
	}
	return false;
}

/* The full model's verdict on the live report, over the snapshot: 1 it
 * finds the hang, 0 it finds none, -1 it could not say (kept then). */
static int model_verdict(struct argus_hang_keeper *k, const char *full, const char *out,
			 const char *errf)
{
	const struct argus_live_hang *h = &k->child_hang;
	uint64_t to = h->end_ns ? h->end_ns : UINT64_MAX;
	char *json;
	int rc, v;

	rc = run_session(k, "hangs", full, out, errf, 0, "--json", NULL);
	json = slurp(k->dirfd, out, 16u << 20);
	v = rc != 0 || !json_object(json) ? -1 : model_agrees(json, h->tid, h->start_ns, to);
	free(json);
	unlinkat(k->dirfd, out, 0);
	unlinkat(k->dirfd, errf, 0);
	return v;
}

/* What the child makes of one cut of the ring: the diagnosis JSON (diag
 * points into raw), or the error; the --at it took; whether the page
 * NAME.html was drawn. */
struct cut_diag {
	char *raw, *diag, *err;
	uint64_t at;
	bool report;
};

static void cut_diag_free(struct cut_diag *cd)
{
	free(cd->raw);
	free(cd->err);
	*cd = (struct cut_diag){ 0 };
}

/* Diagnoses the snapshot at full (and, when the full model finds no hang
 * of its own there, again at the middle of the live one), then draws its
 * page when diagnosed. */
static void diagnose_cut(struct argus_hang_keeper *k, const char *full, const char *out,
			 const char *errf, struct cut_diag *cd)
{
	int rc = run_session(k, "diagnose", full, out, errf, 0, "--json", NULL);

	*cd = (struct cut_diag){ 0 };
	cd->raw = slurp(k->dirfd, out, 16u << 20);
	cd->diag = rc == 0 ? json_object(cd->raw) : NULL;
	if (!cd->diag) {
		/* the full model found no hang of its own there: ask for
		 * whatever the thread did in the middle of the live one */
		const struct argus_live_hang *h = &k->child_hang;
		uint64_t end = h->end_ns ? h->end_ns : h->start_ns + k->o.threshold_ns;

		cd->err = slurp(k->dirfd, errf, 4096);
		first_line(cd->err, 300);
		strip_prefix(cd->err, full);
		if (!cd->err || !cd->err[0]) {
			free(cd->err);
			cd->err = strdup(rc < 0 ? "the diagnosis did not run" :
					 "the diagnosis printed no JSON");
		}
		cd->at = h->start_ns + (end - h->start_ns) / 2;
		free(cd->raw);
		rc = run_session(k, "diagnose", full, out, errf, cd->at, "--json", NULL);
		cd->raw = slurp(k->dirfd, out, 16u << 20);
		cd->diag = rc == 0 ? json_object(cd->raw) : NULL;
		if (!cd->diag)
			cd->at = 0;
	}
	/* the same diagnosis as a page (argus report), beside it; the
	 * report creates NAME.html itself, 0600, refusing anything
	 * already there */
	if (cd->diag) {
		char html[300], hpath[4400];

		snprintf(html, sizeof(html), "%s.html", k->name);
		snprintf(hpath, sizeof(hpath), "%s/%s", k->dir, html);
		unlinkat(k->dirfd, html, 0);
		if (run_session(k, "report", full, out, errf, cd->at, "-o", hpath) == 0)
			cd->report = true;
		else
			unlinkat(k->dirfd, html, 0);
	}
	unlinkat(k->dirfd, out, 0);
	unlinkat(k->dirfd, errf, 0);
}

/*
 * Has the waiter of a blocked hang, still going when it was reported, run
 * since?  The diagnosis of a snapshot of this running system asks the
 * system too (/proc: who holds the other end of the socket, the schema's
 * holder rule): those answers describe the hang only while it goes on.
 * One that ended before they were taken (argusd was busy with another
 * save, the machine was loaded) would describe whatever came after it --
 * PostgreSQL's lock already granted, the client gone -- and the stored
 * diagnosis would lose its chain.
 */
static bool waiter_moved(const struct argus_hang_keeper *k)
{
	if (k->child_switches == NO_SWITCHES || k->child_hang.end_ns)
		return false;
	return thread_switches(k->child_hang.pid, k->child_hang.tid) != k->child_switches;
}

/* The last moment the ring at path holds (its newest chunk's max_ts), 0 if
 * it cannot be read. */
static uint64_t ring_reaches(const char *path)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(path, &err);
	uint64_t max = 0;

	if (!t)
		return 0;
	for (size_t i = 0; i < argus_trace__nchunks(t); i++) {
		struct argus_chunk_info ci;

		if (!argus_trace__chunk(t, i, &ci) && ci.max_ts > max)
			max = ci.max_ts;
	}
	argus_trace__close(t);
	return max;
}

/*
 * Cuts the ring again into the snapshot, now that the waiter moved: once
 * the ring holds what happened up to now (at most RECUT_WAIT_MS), the
 * chunks from from_ns go to NAME.argus.tmp, which then replaces
 * NAME.argus whole.  Returns the moment cut at, 0 when it could not be
 * done (the first cut stays).
 */
static uint64_t recut(struct argus_hang_keeper *k, const char *ring, uint64_t from_ns,
		      const char *full)
{
	struct argus_error err = { 0 };
	char tmp[256], tpath[4400];
	uint64_t now = argus_now_ns();

	for (int ms = 0; ms < RECUT_WAIT_MS && ring_reaches(ring) < now; ms += 50)
		usleep(50000);
	snprintf(tmp, sizeof(tmp), "%s.argus.tmp", k->name);
	snprintf(tpath, sizeof(tpath), "%s/%s", k->dir, tmp);
	unlinkat(k->dirfd, tmp, 0);
	if (argus_trace__save(ring, tpath, from_ns, NULL, &err) ||
	    renameat(k->dirfd, tmp, k->dirfd, strrchr(full, '/') + 1)) {
		unlinkat(k->dirfd, tmp, 0);
		return 0;
	}
	return now;
}

static void child_main(struct argus_hang_keeper *k, int snapfd, int sfd,
		       const char *ring, uint64_t from_ns)
{
	char snap_name[256], full[4400], tmp[256], out[256], errf[256], json[256];
	struct argus_error err = { 0 };
	struct cut_diag cd = { 0 };
	uint64_t recut_ns = 0;
	int rc;

	if (setpriority(PRIO_PROCESS, 0, 19)) {
		/* only nicer; cannot fail for root */
	}
	snprintf(snap_name, sizeof(snap_name), "%s.argus", k->name);
	snprintf(full, sizeof(full), "%s/%s", k->dir, snap_name);
	/* By its path, not /proc/self/fd/N: the saver refuses to write
	 * through a symlink (safe_file.h), and the file the parent created
	 * O_EXCL (root's, 0600, one link, in root's 0700 directory) is one it
	 * reuses.  snapfd only held the name until now. */
	rc = argus_trace__save(ring, full, from_ns, NULL, &err);
	close(snapfd);
	if (rc)
		child_fail(sfd, k, "cannot save %s: %s", full, err.msg);

	snprintf(out, sizeof(out), "%s.diag.tmp", k->name);
	snprintf(errf, sizeof(errf), "%s.err.tmp", k->name);
	/* A report the full model rejects (a request wait that was idle, a
	 * loop the live side had not seen come round yet) is dropped. */
	if (k->o.analyze && model_verdict(k, full, out, errf) == 0) {
		remove_set(k->dirfd, k->name);
		dprintf(sfd, "the full model finds no hang of it in the snapshot");
		_exit(CHILD_REJECTED);
	}
	if (k->o.analyze) {
		/* The waiter ran before the diagnosis was done: what it asks
		 * the running system may be of after the hang.  The ring holds
		 * the hang's end by now: cut it again and diagnose that, the
		 * whole hang, as a recording would be (waiter_moved()).  Asked
		 * before the diagnosis (the save waited behind another one)
		 * and after it (the hang ended while it ran). */
		if (waiter_moved(k))
			recut_ns = recut(k, ring, from_ns, full);
		diagnose_cut(k, full, out, errf, &cd);
		if (!recut_ns && waiter_moved(k) && (recut_ns = recut(k, ring, from_ns, full))) {
			cut_diag_free(&cd);
			diagnose_cut(k, full, out, errf, &cd);
		}
	} else {
		cd.err = strdup("argusd keeps snapshots without a diagnosis");
	}

	snprintf(tmp, sizeof(tmp), "%s.json.tmp", k->name);
	snprintf(json, sizeof(json), "%s.json", k->name);
	int jfd = openat(k->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = jfd >= 0 ? fdopen(jfd, "w") : NULL;
	if (!f)
		child_fail(sfd, k, "cannot write %s/%s: %s", k->dir, tmp, strerror(errno));
	write_meta(k, f, snap_name, from_ns, recut_ns, cd.diag, cd.diag ? NULL : cd.err, cd.at,
		   cd.report);
	if (fflush(f) || fsync(fileno(f)) || fclose(f))
		child_fail(sfd, k, "cannot write %s/%s: %s", k->dir, tmp, strerror(errno));
	if (renameat(k->dirfd, tmp, k->dirfd, json))
		child_fail(sfd, k, "cannot rename %s/%s: %s", k->dir, tmp, strerror(errno));
	dprintf(sfd, "%s%s%s%s%s", recut_ns ? "cut again, the waiter having run before its diagnosis was done; " : "",
		cd.diag ? "diagnosed" : "not diagnosed: ",
		cd.diag ? "" : (cd.err ? cd.err : "?"), cd.at ? " (at the hang's middle)" : "",
		cd.report ? "; report " : "");
	if (cd.report)
		dprintf(sfd, "%s.html", k->name);
	_exit(0);
}

/* ---- starting and reaping saves ---- */

static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++) {
		char c = *src;
		dst[i++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
			   c == '-' ? c : '_';
	}
	if (!i)
		dst[i++] = '_';
	dst[i] = 0;
}

static int start_save(struct argus_hang_keeper *k, size_t idx, const char *ring)
{
	struct pend p = k->pend[idx];
	char comm[32], stamp[32], file[256];
	uint64_t from = p.h.start_ns > k->o.before_ns ? p.h.start_ns - k->o.before_ns : 0;
	time_t t = (time_t)(mono_to_real(p.h.start_ns) / 1000000000ull);
	struct tm tm;
	int fd = -1, sp[2];
	pid_t c;

	memmove(&k->pend[idx], &k->pend[idx + 1], (k->npend - idx - 1) * sizeof(*k->pend));
	k->npend--;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	sanitize(comm, sizeof(comm), p.h.comm);
	for (int n = 1; n < 100 && fd < 0; n++) {
		if (n == 1)
			snprintf(k->name, sizeof(k->name), "%s-%s-%u", stamp, comm, p.h.pid);
		else
			snprintf(k->name, sizeof(k->name), "%s-%s-%u-%d", stamp, comm, p.h.pid, n);
		snprintf(file, sizeof(file), "%s.argus", k->name);
		fd = openat(k->dirfd, file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = -errno;
		k->st.failed++;
		say(k, "cannot create a hang snapshot in %s: %s", k->dir, strerror(errno));
		return e;
	}
	if (pipe2(sp, O_CLOEXEC)) {
		int e = -errno;
		close(fd);
		unlinkat(k->dirfd, file, 0);
		k->st.failed++;
		return e;
	}
	k->child_hang = p.h;
	k->child_switches = p.switches;
	k->last_uid = p.h.uid;
	c = fork();
	if (c == 0) {
		/* keep the snapshot, the status pipe and the directory, in
		 * that order at the top, so close_range() spares them */
		int fds[3] = { k->dirfd, sp[1], fd };
		int base = 1000;
		for (int i = 0; i < 3; i++)
			if (dup3(fds[i], base + i, 0) < 0)
				_exit(1);
		k->dirfd = base;
		/* nothing of argusd's but the files we write: in particular
		 * not the BPF links, which would keep the programs attached
		 * if argusd stopped while we run */
		close_range(3, base - 1, 0);
		close_range(base + 3, ~0u, 0);
		/* our own group, so that stopping argusd can end the
		 * diagnosis we started too */
		setpgid(0, 0);
		child_main(k, base + 2, base + 1, ring, from);
		_exit(1);
	}
	close(fd);
	close(sp[1]);
	if (c < 0) {
		int e = -errno;
		close(sp[0]);
		unlinkat(k->dirfd, file, 0);
		k->st.failed++;
		say(k, "cannot fork to save a hang snapshot: %s", strerror(-e));
		return e;
	}
	setpgid(c, c); /* as the child does: whichever runs first */
	k->child = c;
	k->status_fd = sp[0];
	return 0;
}

static void reap(struct argus_hang_keeper *k, bool block)
{
	char msg[700];
	ssize_t n;
	int st;
	pid_t r;

	if (k->child <= 0)
		return;
	do
		r = waitpid(k->child, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return;
	n = read(k->status_fd, msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = 0;
	close(k->status_fd);
	k->status_fd = -1;
	k->child = 0;
	{
		const struct argus_live_hang *h = &k->child_hang;
		if (r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == CHILD_REJECTED) {
			k->st.rejected++;
			say(k, "dropped the hang snapshot of %s %u/%u %s: %s", h->comm, h->pid,
			    h->tid, kind_str(h->kind), msg);
		} else if (r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			k->st.kept++;
			say(k, "kept %s/%s.argus: %s %u/%u %s %s%.1f s; %s", k->dir, k->name,
			    h->comm, h->pid, h->tid, kind_str(h->kind),
			    h->end_ns ? "" : "ongoing, ",
			    (double)((h->end_ns ? h->end_ns : h->start_ns + k->o.threshold_ns + k->o.grace_ns) -
				     h->start_ns) / 1e9, msg);
		} else {
			remove_set(k->dirfd, k->name);
			k->st.failed++;
			say(k, "hang snapshot of %s %u/%u not kept: %s", h->comm, h->pid, h->tid,
			    msg[0] ? msg : "the saving process died");
		}
	}
	prune(k);
}

int argus_hang_keeper__run(struct argus_hang_keeper *k, uint64_t now_ns,
			   const char *ring_path)
{
	size_t first = SIZE_MAX;

	reap(k, false);
	if (k->child > 0)
		return 0;
	/* another uid's due save before the last one's uid's: one user's
	 * queue does not hold another's saves back */
	for (size_t i = 0; i < k->npend; i++) {
		if (k->pend[i].due_ns > now_ns)
			continue;
		if (k->pend[i].h.uid != k->last_uid)
			return start_save(k, i, ring_path);
		if (first == SIZE_MAX)
			first = i;
	}
	return first != SIZE_MAX ? start_save(k, first, ring_path) : 0;
}

void argus_hang_keeper__free(struct argus_hang_keeper *k, int wait_ms)
{
	if (!k)
		return;
	for (int waited = 0; k->child > 0 && waited < wait_ms; waited += 50) {
		reap(k, false);
		if (k->child > 0)
			usleep(50000);
	}
	if (k->child > 0) {
		kill(-k->child, SIGKILL); /* its group: the diagnosis too */
		kill(k->child, SIGKILL);
		reap(k, true);
	}
	if (k->dirfd >= 0)
		close(k->dirfd);
	free(k->pend);
	free(k->dir);
	free(k);
}
