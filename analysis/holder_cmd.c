/* holder_cmd.c - see holder_cmd.h.
 *
 * Between fork() and execve() the child calls only async-signal-safe
 * functions and raw system calls (the lldb plugin runs this inside lldb,
 * a process with many threads): everything it needs -- the program's
 * path, argv, the environment, the credentials -- is prepared before the
 * fork.  The credentials are changed with the raw setgroups, setresgid
 * and setresuid system calls (the child has one thread; glibc's wrappers
 * would try to signal the parent's other threads).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argus_holder_rule.h"
#include "ctl_client.h"
#include "msg.h"
#include "collector.h"
#include "diag_front.h"
#include "holder_cmd.h"

const char holder_cmd_builtin_schema[] =
	"# PostgreSQL: a backend waiting for a heavyweight lock (a row, a table,\n"
	"# another transaction) sleeps in ProcSleep, inside the lock manager;\n"
	"# pg_blocking_pids() names the backends holding what it waits for.\n"
	"holder ProcSleep,XactLockTableWait process=postgres run argus-pg-holders %p\n";

/* A (thread, stack) asked before, and what it was answered. */
struct holder_seen {
	uint32_t tid, stack, n;
	uint32_t pids[ARGUS_HOLDER_MAX_PIDS];
};
#define HOLDER_MAX_SEEN 64

struct holder_cmd {
	struct graph_open_ctx *c;
	struct argus_schema *builtin;
	const char *user_path;          /* the user's --schema, for messages */
	struct holder_call calls[HOLDER_CMD_MAX_CALLS];
	uint32_t ncalls;
	struct holder_seen seen[HOLDER_MAX_SEEN];
	uint32_t nseen;
};

static uint64_t now_ms(void)
{
	return argus_now_ns() / 1000000;
}

/* ---- credentials ------------------------------------------------------- */

int holder_cmd_cred_of_pid(uint32_t pid, struct holder_cred *cr, char *why, size_t len)
{
	char path[64], line[1024];
	bool have_uid = false, have_gid = false;
	FILE *f;

	memset(cr, 0, sizeof(*cr));
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		snprintf(why, len, "cannot read %s: %s", path, strerror(e));
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4)) {
			have_uid = sscanf(line + 4, "%" SCNu32, &cr->uid) == 1;
		} else if (!strncmp(line, "Gid:", 4)) {
			have_gid = sscanf(line + 4, "%" SCNu32, &cr->gid) == 1;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g;

				while (*p == ' ' || *p == '\t')
					p++;
				if (*p < '0' || *p > '9')
					break;
				g = strtoul(p, &end, 10);
				p = end;
				if (cr->ngroups < HOLDER_CMD_MAX_GROUPS)
					cr->groups[cr->ngroups++] = (uint32_t)g;
			}
		}
	}
	fclose(f);
	if (!have_uid || !have_gid) {
		snprintf(why, len, "no Uid:/Gid: line in %s", path);
		return -EINVAL;
	}
	if (!cr->uid) {
		snprintf(why, len, "the waiting process runs as root, and a holder command never "
			 "does (give the rule `as USER`)");
		return -EPERM;
	}
	return 0;
}

int holder_cmd_cred_of_user(const char *user, struct holder_cred *cr, char *why, size_t len)
{
	gid_t groups[HOLDER_CMD_MAX_GROUPS];
	int ng = HOLDER_CMD_MAX_GROUPS;
	struct passwd *pw;

	memset(cr, 0, sizeof(*cr));
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		snprintf(why, len, "no user '%s' (as USER)", user);
		return errno ? -errno : -ENOENT;
	}
	if (!pw->pw_uid) {
		snprintf(why, len, "user '%s' is uid 0: a holder command never runs as root", user);
		return -EPERM;
	}
	cr->uid = pw->pw_uid;
	cr->gid = pw->pw_gid;
	if (getgrouplist(user, pw->pw_gid, groups, &ng) < 0)
		ng = HOLDER_CMD_MAX_GROUPS;     /* more: the first ones */
	for (int i = 0; i < ng && i < HOLDER_CMD_MAX_GROUPS; i++)
		cr->groups[cr->ngroups++] = groups[i];
	return 0;
}

static void user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	snprintf(buf, len, "%s", pw && pw->pw_name ? pw->pw_name : "");
}

/* ---- the program --------------------------------------------------------- */

static int usable(const char *path, uint32_t uid, char *why, size_t wlen)
{
	struct stat st;

	if (stat(path, &st)) {
		int e = errno;

		snprintf(why, wlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
		snprintf(why, wlen, "%s is not an executable file", path);
		return -EACCES;
	}
	if ((st.st_uid != 0 && st.st_uid != uid) || (st.st_mode & 022)) {
		snprintf(why, wlen, "refusing %s: it must be owned by root or by uid %u, and "
			 "writable by neither group nor others", path, uid);
		return -EPERM;
	}
	return 0;
}

int holder_cmd_resolve(const char *cmd, uint32_t uid, char *path, size_t len, char *why,
		       size_t wlen)
{
	char self[4096];
	const char *dirs[3] = { self, "/usr/bin", "/bin" };
	int rc = -ENOENT;

	if (cmd[0] == '/') {
		if ((size_t)snprintf(path, len, "%s", cmd) >= len) {
			snprintf(why, wlen, "the command's path is too long");
			return -ENAMETOOLONG;
		}
		return usable(path, uid, why, wlen);
	}
	if (!*cmd || strchr(cmd, '/')) {
		snprintf(why, wlen, "the command '%s' is neither an absolute path nor a bare name", cmd);
		return -EINVAL;
	}
	ctl_bin_dir(self, sizeof(self));
	for (int i = 0; i < 3; i++) {
		struct stat st;

		if ((size_t)snprintf(path, len, "%s/%s", dirs[i], cmd) >= len)
			continue;
		if (stat(path, &st))
			continue;
		rc = usable(path, uid, why, wlen);
		if (!rc) {
			char real[4096];

			/* build/lib/../bin/x -> build/bin/x, for the report */
			if (realpath(path, real) && strlen(real) < len)
				strcpy(path, real);
		}
		return rc;
	}
	snprintf(why, wlen, "no program '%s' beside argus (%s), in /usr/bin or in /bin", cmd, self);
	path[0] = 0;
	return rc;
}

/* ---- running it ---------------------------------------------------------- */

/* In the child, after fork: async-signal-safe calls and raw syscalls only. */
static __attribute__((noreturn)) void child(const char *path, char *const argv[],
					    char *const envp[], int out_fd, bool change,
					    const struct holder_cred *cr, const gid_t *groups,
					    uint32_t timeout_ms)
{
	struct sigaction dfl;
	sigset_t none;
	struct rlimit cpu, core = { 0, 0 };
	int null_fd;

	setpgid(0, 0);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* both above 2 first: a host with 0-2 closed may have them there */
	out_fd = fcntl(out_fd, F_DUPFD, 3);
	null_fd = open("/dev/null", O_RDWR);
	if (null_fd >= 0)
		null_fd = fcntl(null_fd, F_DUPFD, 3);
	if (out_fd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 ||
	    dup2(null_fd, 2) < 0)
		_exit(125);
	if (syscall(SYS_close_range, 3u, ~0u, 0u))
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (chdir("/"))
		_exit(125);
	umask(077);
	cpu.rlim_cur = cpu.rlim_max = timeout_ms / 1000 + 1;
	if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_CORE, &core))
		_exit(125);
	if (change && (syscall(SYS_setgroups, (size_t)(cr->ngroups < HOLDER_CMD_MAX_GROUPS ?
						      cr->ngroups : HOLDER_CMD_MAX_GROUPS), groups) ||
		       syscall(SYS_setresgid, cr->gid, cr->gid, cr->gid) ||
		       syscall(SYS_setresuid, cr->uid, cr->uid, cr->uid)))
		_exit(126);
	if (!getuid() || !geteuid())
		_exit(126);     /* never root, whatever happened above */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		_exit(126);
	execve(path, argv, envp);
	_exit(127);
}

/* Whether our child pid is still ours to signal: running, or a zombie
 * not reaped yet (which keeps its pid and group id from being reused).
 * False when someone else reaped it (a host's SIGCHLD handler). */
static bool ours(pid_t pid)
{
	siginfo_t si;
	int r;

	memset(&si, 0, sizeof(si));
	while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT)) < 0 &&
	       errno == EINTR)
		;
	return r == 0;
}

/* The child pid has exited or was killed: kill what is left of its
 * process group while the zombie still holds the group's id, then reap
 * it.  *st: its status; false when someone else reaped it. */
static bool finish_child(pid_t pid, int *st)
{
	siginfo_t si;
	pid_t r;
	int w;

	memset(&si, 0, sizeof(si));
	/* WNOWAIT: the zombie keeps pid (and the group id) reserved */
	while ((w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return false;
	kill(-pid, SIGKILL);
	while ((r = waitpid(pid, st, 0)) < 0 && errno == EINTR)
		;
	return r == pid;
}

int holder_cmd_exec(const char *path, char *const argv[], const struct holder_cred *cr,
		    uint32_t timeout_ms, char *out, size_t cap, size_t *n, uint64_t *ms, char *why,
		    size_t wlen)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
	gid_t groups[HOLDER_CMD_MAX_GROUPS];
	uint64_t t0 = now_ms(), deadline = t0 + timeout_ms;
	bool change, eof = false, over = false, late = false, reaped;
	int fds[2], st = 0;
	char extra;
	pid_t pid;

	*n = 0;
	*ms = 0;
	if (!cr->uid) {
		snprintf(why, wlen, "refusing to run a holder command as root");
		return -EPERM;
	}
	change = geteuid() == 0;
	if (!change && (getuid() != cr->uid || geteuid() != cr->uid)) {
		snprintf(why, wlen, "argus runs as uid %u, not as root: it cannot run the command as "
			 "uid %u", (unsigned)geteuid(), cr->uid);
		return -EPERM;
	}
	for (uint32_t i = 0; i < cr->ngroups && i < HOLDER_CMD_MAX_GROUPS; i++)
		groups[i] = cr->groups[i];
	if (pipe2(fds, O_CLOEXEC)) {
		int e = errno;

		snprintf(why, wlen, "pipe: %s", strerror(e));
		return -e;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		snprintf(why, wlen, "fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0)
		child(path, argv, envp, fds[1], change, cr, groups, timeout_ms);
	close(fds[1]);
	setpgid(pid, pid);      /* whichever of the two runs first */
	while (!eof && !over) {
		uint64_t now = now_ms();
		struct pollfd pf = { .fd = fds[0], .events = POLLIN };
		ssize_t r;
		int pr;

		if (now >= deadline) {
			late = true;
			break;
		}
		pr = poll(&pf, 1, (int)(deadline - now));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			late = pr == 0;
			break;
		}
		/* once out is full, one byte more is too much */
		r = *n < cap ? read(fds[0], out + *n, cap - *n) : read(fds[0], &extra, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0)
			eof = true;
		else if (*n == cap)
			over = true;
		else
			*n += (size_t)r;
	}
	close(fds[0]);
	/* wait for the exit until the deadline; then it is killed */
	while (eof && !late) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			break;  /* ECHILD: reaped elsewhere; finish_child says */
		}
		if (si.si_pid == pid)
			break;
		if (now_ms() >= deadline) {
			late = true;
			break;
		}
		usleep(2000);
	}
	if ((late || over || !eof) && ours(pid)) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	reaped = finish_child(pid, &st);
	*ms = now_ms() - t0;
	if (late) {
		snprintf(why, wlen, "timed out after %u ms (killed)", timeout_ms);
		return -ETIMEDOUT;
	}
	if (over) {
		snprintf(why, wlen, "printed more than %zu bytes (killed)", cap);
		return -E2BIG;
	}
	if (!eof) {
		snprintf(why, wlen, "its output could not be read");
		return -EIO;
	}
	if (!reaped) {          /* its exit status is unknown: not a 0 */
		snprintf(why, wlen, "its exit status is unknown (reaped elsewhere)");
		return -ECHILD;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		int code = WEXITSTATUS(st);

		snprintf(why, wlen, "exited %d%s", code,
			 code == 127 ? " (could not be executed)" :
			 code == 126 ? " (could not drop to the user)" :
			 code == 125 ? " (could not be set up)" : "");
		return -ECHILD;
	}
	if (WIFSIGNALED(st)) {
		snprintf(why, wlen, "killed by signal %d", WTERMSIG(st));
		return -ECHILD;
	}
	return 0;
}

int holder_cmd_check_output(const char *out, size_t n, uint32_t waiter_pid, uint32_t *pids,
			    uint32_t max, char *why, size_t wlen)
{
	int k = argus_holder__parse_pids(out, n, pids, max);

	if (k == -E2BIG) {
		snprintf(why, wlen, "its output names more than %u pids", max);
		return -EINVAL;
	}
	if (k < 0) {
		snprintf(why, wlen, "its output is not a list of pids");
		return -EINVAL;
	}
	for (int i = 0; i < k; i++) {
		if (pids[i] == waiter_pid) {
			snprintf(why, wlen, "its output names the waiting process itself (%u)",
				 waiter_pid);
			return -EINVAL;
		}
		/* a process: a thread's id passes /proc/ID, not its Tgid */
		if (!diag_front_pid_alive(pids[i])) {
			snprintf(why, wlen, "its output names pid %u, which does not exist as a "
				 "process", pids[i]);
			return -EINVAL;
		}
	}
	return k;
}

/* ---- the callback ---------------------------------------------------------- */

struct holder_cmd *holder_cmd_new(struct graph_open_ctx *c, const char *schema_path)
{
	struct holder_cmd *h = calloc(1, sizeof(*h));
	struct argus_error err;

	if (!h)
		return NULL;
	h->c = c;
	h->user_path = schema_path ? schema_path : "--schema";
	memset(&err, 0, sizeof(err));
	h->builtin = argus_schema__parse(holder_cmd_builtin_schema,
					 strlen(holder_cmd_builtin_schema), HOLDER_CMD_BUILTIN_NAME,
					 &err);
	return h;
}

void holder_cmd_free(struct holder_cmd *h)
{
	if (!h)
		return;
	argus_schema__free(h->builtin);
	free(h);
}

#define MAX_FRAMES 128
struct frames {
	char *func[MAX_FRAMES];
	uint32_t n;
};

static void keep_func(void *ctx, const char *frame, const char *func)
{
	struct frames *f = ctx;

	(void)frame;
	if (f->n < MAX_FRAMES && func && *func && (f->func[f->n] = strdup(func)))
		f->n++;
}

/* The first of the rule's functions on the stack (innermost first). */
static const char *on_stack(const struct argus_holder_rule *r, const struct frames *fr)
{
	for (uint32_t i = 0; i < fr->n; i++)
		for (uint32_t j = 0; j < r->nfuncs; j++)
			if (!strcmp(fr->func[i], r->funcs[j]))
				return r->funcs[j];
	return NULL;
}

/* The waiting thread is still the one the trace saw: /proc/PID/task/TID
 * exists, with the trace's name (a pid reused since is not asked about). */
static bool same_thread(struct holder_cmd *h, uint32_t pid, uint32_t tid)
{
	const char *want = diag_front_comm_raw(h->c, tid);
	char path[96], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return !want || !strcmp(want, "?") || !strcmp(comm, want);
}

/* Runs rule r for thread tid of pid into call k. */
static void run_rule(struct holder_cmd *h, const struct argus_holder_rule *r, const char *src,
		     const char *func, uint32_t pid, uint32_t tid, struct holder_call *k)
{
	char words[ARGUS_HOLDER_MAX_ARGS][512];
	char *argv[ARGUS_HOLDER_MAX_ARGS + 1];
	char out[ARGUS_HOLDER_MAX_OUTPUT];
	struct holder_cred cr;
	size_t n = 0, wl = 0, jl = 0;
	int rc;

	memset(k, 0, sizeof(*k));
	k->pid = pid;
	k->tid = tid;
	k->state = HOLDER_SKIPPED;
	snprintf(k->rule, sizeof(k->rule), "%s:%u", src, r->line);
	snprintf(k->func, sizeof(k->func), "%s", func);
	for (uint32_t i = 0; i < r->argc; i++) {
		if (!i)
			snprintf(words[0], sizeof(words[0]), "%s", r->argv[0]);
		else if (argus_holder__expand(r->argv[i], pid, tid, words[i], sizeof(words[i]))) {
			snprintf(k->why, sizeof(k->why), "argument %u is too long once expanded", i);
			return;
		}
		argv[i] = words[i];
		k->argc++;
		if (wl + strlen(words[i]) + 1 <= sizeof(k->words)) {
			memcpy(k->words + wl, words[i], strlen(words[i]) + 1);
			wl += strlen(words[i]) + 1;
		}
		jl += (size_t)snprintf(k->argv + jl, jl < sizeof(k->argv) ? sizeof(k->argv) - jl : 0,
				       "%s%s", i ? " " : "", words[i]);
		if (jl >= sizeof(k->argv))
			jl = sizeof(k->argv) - 1;
	}
	argv[r->argc] = NULL;
	if (!same_thread(h, pid, tid)) {
		snprintf(k->why, sizeof(k->why), "thread %u of process %u is gone (or is another "
			 "thread now)", tid, pid);
		return;
	}
	rc = r->user[0] ? holder_cmd_cred_of_user(r->user, &cr, k->why, sizeof(k->why))
			: holder_cmd_cred_of_pid(pid, &cr, k->why, sizeof(k->why));
	if (rc)
		return;
	k->uid = cr.uid;
	user_name(cr.uid, k->user, sizeof(k->user));
	if (holder_cmd_resolve(r->argv[0], cr.uid, k->path, sizeof(k->path), k->why, sizeof(k->why)))
		return;
	rc = holder_cmd_exec(k->path, argv, &cr, r->timeout_ms, out, sizeof(out), &n, &k->ms, k->why,
			     sizeof(k->why));
	if (rc == -EPERM)
		return;         /* not run */
	k->state = HOLDER_FAILED;
	if (rc)
		return;
	rc = holder_cmd_check_output(out, n, pid, k->pids, ARGUS_HOLDER_MAX_PIDS, k->why,
				     sizeof(k->why));
	if (rc < 0)
		return;
	k->npids = (uint32_t)rc;
	k->state = rc ? HOLDER_ANSWERED : HOLDER_NOBODY;
	if (!rc)
		snprintf(k->why, sizeof(k->why), "it named nobody");
}

uint32_t holder_cmd_wait_holders(void *ctx, uint32_t pid, uint32_t tid, uint32_t stack,
				 uint32_t *pids, uint32_t max)
{
	struct holder_cmd *h = ctx;
	const struct argus_schema *set[2];
	const char *names[2];
	struct frames fr = { .n = 0 };
	struct holder_seen *seen = NULL;
	const char *process;
	uint32_t got = 0;

	if (!h || !stack || !max)
		return 0;
	for (uint32_t i = 0; i < h->nseen; i++)
		if (h->seen[i].tid == tid && h->seen[i].stack == stack) {
			got = h->seen[i].n < max ? h->seen[i].n : max;
			memcpy(pids, h->seen[i].pids, got * sizeof(*pids));
			return got;
		}
	if (h->nseen < HOLDER_MAX_SEEN) {
		seen = &h->seen[h->nseen++];
		memset(seen, 0, sizeof(*seen));
		seen->tid = tid;
		seen->stack = stack;
	}
	/* the user's rules first: one of theirs for the same function wins */
	set[0] = h->c->schema;
	names[0] = h->user_path;
	set[1] = h->builtin;
	names[1] = HOLDER_CMD_BUILTIN_NAME;
	/* symbolize only when a rule may apply to this process */
	process = diag_front_process_raw(h->c, tid);
	for (int s = 0; s < 2 && !got; s++)
		for (uint32_t i = 0; i < argus_schema__nholders(set[s]) && !got; i++) {
			const struct argus_holder_rule *r = argus_schema__holder(set[s], i);

			got = !r->process[0] || (process && !fnmatch(r->process, process, 0));
		}
	if (!got)
		return 0;
	got = 0;
	diag_front_stack_funcs(h->c, pid, argus_graph__stats(h->c->g)->max_ts, stack, keep_func, &fr);
	for (int s = 0; s < 2 && !got; s++) {
		for (uint32_t i = 0; i < argus_schema__nholders(set[s]) && !got; i++) {
			const struct argus_holder_rule *r = argus_schema__holder(set[s], i);
			const char *func;
			struct holder_call *k;

			if (r->process[0] && (!process || fnmatch(r->process, process, 0)))
				continue;
			if (!(func = on_stack(r, &fr)))
				continue;
			if (h->ncalls == HOLDER_CMD_MAX_CALLS)
				break;  /* enough commands for one diagnosis */
			k = &h->calls[h->ncalls++];
			run_rule(h, r, names[s], func, pid, tid, k);
			if (k->state == HOLDER_ANSWERED) {
				got = k->npids < max ? k->npids : max;
				memcpy(pids, k->pids, got * sizeof(*pids));
			}
		}
	}
	for (uint32_t i = 0; i < fr.n; i++)
		free(fr.func[i]);
	if (seen) {
		seen->n = got < ARGUS_HOLDER_MAX_PIDS ? got : ARGUS_HOLDER_MAX_PIDS;
		memcpy(seen->pids, pids, seen->n * sizeof(*pids));
	}
	return got;
}

uint32_t holder_cmd_ncalls(const struct holder_cmd *h)
{
	return h ? h->ncalls : 0;
}

const struct holder_call *holder_cmd_call(const struct holder_cmd *h, uint32_t i)
{
	return h && i < h->ncalls ? &h->calls[i] : NULL;
}

const struct holder_call *holder_cmd_call_of(const struct holder_cmd *h,
					     const struct argus_culprit *k)
{
	if (!h || !k || k->rule != ARGUS_RULE_HOLDER_RULE)
		return NULL;
	for (uint32_t i = 0; i < h->ncalls; i++) {
		const struct holder_call *c = &h->calls[i];

		if (c->state != HOLDER_ANSWERED)
			continue;
		for (uint32_t j = 0; j < c->npids; j++)
			if (c->pids[j] == k->pid)
				return c;
	}
	return NULL;
}

/* ---- the report ------------------------------------------------------------ */

static const char *state_str(unsigned s)
{
	return s == HOLDER_ANSWERED ? "answered" : s == HOLDER_NOBODY ? "nobody" :
	       s == HOLDER_FAILED ? "no-answer" : s == HOLDER_SKIPPED ? "skipped" : "?";
}

static void print_pids(FILE *f, const struct holder_call *c, const char *sep)
{
	for (uint32_t i = 0; i < c->npids; i++)
		fprintf(f, "%s%u", i ? sep : "", c->pids[i]);
}

static void print_who(FILE *f, const struct holder_call *c)
{
	if (c->user[0])
		fprintf(f, "%s (uid %u)", msg_tstr(c->user), c->uid);
	else
		fprintf(f, "uid %u", c->uid);
}

void holder_cmd_print_culprit(FILE *f, const struct holder_cmd *h, const struct argus_culprit *k)
{
	const struct holder_call *c = holder_cmd_call_of(h, k);

	if (!c)
		return;
	fprintf(f, "          holder rule %s: %s on the stack of %u/%u; `%s` as ",
		msg_tstr(c->rule), msg_tstr(c->func), c->pid, c->tid, msg_tstr(c->argv));
	print_who(f, c);
	fprintf(f, " answered ");
	print_pids(f, c, ", ");
	fprintf(f, " in %" PRIu64 " ms\n", c->ms);
}

void holder_cmd_print_notes(FILE *f, const struct holder_cmd *h)
{
	for (uint32_t i = 0; i < holder_cmd_ncalls(h); i++) {
		const struct holder_call *c = &h->calls[i];

		if (c->state == HOLDER_ANSWERED)
			continue;
		fprintf(f, "holder    rule %s (%s) applied to %u/%u: `%s` ", msg_tstr(c->rule),
			msg_tstr(c->func), c->pid, c->tid, msg_tstr(c->argv));
		if (c->state == HOLDER_SKIPPED) {
			fprintf(f, "not run: %s\n", msg_tstr(c->why));
			continue;
		}
		fprintf(f, "as ");
		print_who(f, c);
		fprintf(f, ": %s\n", msg_tstr(c->why));
	}
}

static void json_call(FILE *f, const struct holder_call *c)
{
	const char *w = c->words;

	fprintf(f, "{\"rule\":");
	argus_json_write_str(f, c->rule);
	fprintf(f, ",\"function\":");
	argus_json_write_str(f, c->func);
	fprintf(f, ",\"waiter\":{\"pid\":%u,\"tid\":%u},\"state\":\"%s\",\"path\":", c->pid, c->tid,
		state_str(c->state));
	if (c->path[0])
		argus_json_write_str(f, c->path);
	else
		fprintf(f, "null");
	fprintf(f, ",\"argv\":[");
	for (uint32_t i = 0; i < c->argc && w < c->words + sizeof(c->words) && *w; i++) {
		fprintf(f, "%s", i ? "," : "");
		argus_json_write_str(f, w);
		w += strlen(w) + 1;
	}
	fprintf(f, "],\"uid\":");
	if (c->state == HOLDER_SKIPPED && !c->uid)
		fprintf(f, "null");
	else
		fprintf(f, "%u", c->uid);
	fprintf(f, ",\"user\":");
	argus_json_write_str(f, c->user);
	fprintf(f, ",\"ms\":%" PRIu64 ",\"pids\":[", c->ms);
	print_pids(f, c, ",");
	fprintf(f, "],\"why\":");
	if (c->state == HOLDER_ANSWERED)
		fprintf(f, "null");
	else
		argus_json_write_str(f, c->why);
	fprintf(f, "}");
}

void holder_cmd_json_culprit(FILE *f, const struct holder_cmd *h, const struct argus_culprit *k)
{
	const struct holder_call *c = holder_cmd_call_of(h, k);

	if (!c)
		return;
	fprintf(f, ",\"holder_rule\":");
	json_call(f, c);
}

void holder_cmd_json_calls(FILE *f, const struct holder_cmd *h)
{
	fprintf(f, ",\"holder_rules\":[");
	for (uint32_t i = 0; i < holder_cmd_ncalls(h); i++) {
		fprintf(f, "%s", i ? "," : "");
		json_call(f, &h->calls[i]);
	}
	fprintf(f, "]");
}
