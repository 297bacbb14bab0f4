/* cmd_inject.c - `argus inject --pid PID [--lib PATH]`: load the
 * interposer into a running process (interposer/live/, docs/interposer.md
 * "Live: inject and instrument").
 *
 * dlopen is exported by glibc 2.34+ from libc.so.6 (before that, from
 * libdl.so.2, looked at second).  Its address in the target is its
 * .dynsym value (default version) plus libc's load bias from
 * /proc/PID/maps.  The path string goes on the stopped thread's stack
 * below its red zone (argus_live__call).  Only one thread is stopped: the
 * others run on, so a loader or malloc lock that one of them holds is
 * released while dlopen waits for it (had we stopped them all, the call
 * could wait for ever).
 *
 * The file must be root-owned and writable by root only, as must its
 * directory: the target (maybe another user's, maybe root's) would run
 * code from it.  So must the file whose dlopen we call: a user can map a
 * "libc.so.6" of its own before the real one (issue 25, F2).  An exec or
 * a credential change of the target from the lookup on ends the inject
 * with nothing restored (argus_live.h, the exec rule). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_live.h"
#include "cli.h"
#include "live_cli.h"

#ifndef ARGUS_BIN_TO_LIB
#define ARGUS_BIN_TO_LIB "../lib"
#endif

#define RTLD_NOW_ 2	/* <dlfcn.h>'s RTLD_NOW, for the target's dlopen */

int live_default_lib(const char *cmd, char *out, size_t len)
{
	static const char *const rel[] = { ARGUS_BIN_TO_LIB, "../lib" };
	char dir[PATH_MAX], cand[PATH_MAX + 64], r[PATH_MAX];

	ctl_bin_dir(dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s/" LIVE_IPOSE_NAME, dir, rel[i]);
		if (realpath(cand, r) && strlen(r) < len) {
			snprintf(out, len, "%s", r);
			return 0;
		}
	}
	return msg_error(cmd, "no " LIVE_IPOSE_NAME " beside argus (looked in %s/%s): give --lib PATH",
			 dir, ARGUS_BIN_TO_LIB);
}

int live_lib_mapped(pid_t pid, const char *lib, char *found, size_t len)
{
	struct argus_live_map *m;
	const char *b = strrchr(lib, '/');
	size_t n;
	int r = argus_live__maps(pid, &m, &n);

	if (r)
		return r;
	b = b ? b + 1 : lib;
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		const char *mb = strrchr(m[i].path, '/');

		if (mb && !strcmp(mb + 1, b)) {
			if (found)
				snprintf(found, len, "%s", m[i].path);
			r = 1;
		}
	}
	free(m);
	return r;
}

/* Refuse a file (or directory) another user could have written. */
static int check_owner(const char *cmd, const char *path, bool dir)
{
	struct stat st;

	if (stat(path, &st))
		return msg_error(cmd, "%s: %s", msg_tstr(path), strerror(errno));
	if (!dir && !S_ISREG(st.st_mode))
		return msg_error(cmd, "%s is not a regular file", msg_tstr(path));
	if (st.st_uid != 0)
		return msg_error(cmd, "%s is owned by uid %u, not root: the target would run code from a"
				 " file another user controls (refused)", msg_tstr(path),
				 (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH) && !(dir && (st.st_mode & S_ISVTX)))
		return msg_error(cmd, "%s is writable by group or others (mode %o): the target would run"
				 " code from a file another user can change (refused)", msg_tstr(path),
				 (unsigned)(st.st_mode & 07777));
	return 0;
}

/* dlerror()'s text in the target after a failed dlopen. */
static void remote_dlerror(struct argus_live *l, pid_t tid, char *msg, size_t len)
{
	struct argus_live_sym s;
	struct argus_live_call c = { .data_arg = -1 };
	uint64_t ret = 0;

	snprintf(msg, len, "(no dlerror text)");
	if (argus_live__sym(argus_live__pid(l), "libc.so.6", "dlerror", &s, NULL) &&
	    argus_live__sym(argus_live__pid(l), "libdl.so.2", "dlerror", &s, NULL))
		return;
	if (argus_live__trusted_code(argus_live__pid(l), s.addr, NULL))
		return;
	c.fn = s.addr;
	if (argus_live__call(l, tid, &c, &ret, NULL) || !ret)
		return;
	memset(msg, 0, len);
	for (size_t i = 0; i + 1 < len; i += 64) {
		size_t k = len - 1 - i < 64 ? len - 1 - i : 64;

		/* a page boundary may cut a long read short: 64 at a time */
		if (argus_live__read(l, ret + i, msg + i, k) || memchr(msg + i, 0, k))
			break;
	}
	msg[len - 1] = 0;
}

/* The target's run dir, as its constructor will see it. */
static void target_run_dir(pid_t pid, char *out, size_t len)
{
	char p[64], buf[65536];
	FILE *f;
	size_t n;

	snprintf(out, len, "/run/argus");
	snprintf(p, sizeof(p), "/proc/%d/environ", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (!strncmp(buf + i, "ARGUS_RUN_DIR=", 14) && buf[i + 14])
			snprintf(out, len, "%s", buf + i + 14);
}

int live_inject(const char *cmd, pid_t pid, const char *lib, bool bind)
{
	char path[PATH_MAX], dir[PATH_MAX], found[512], why[ARGUS_LIVE_WHY] = "", err[512], rd[256];
	char bwhy[ARGUS_LIVE_WHY] = "";
	struct argus_live_bind bs = { 0 };
	int br = 0;
	struct argus_live_sym s;
	struct argus_live_call c = { .data_arg = 0 };
	struct argus_live_ident before;
	struct argus_live *l;
	uint64_t handle = 0;
	pid_t tid = pid;
	int r;

	if (kill(pid, 0) && errno == ESRCH)
		return msg_error(cmd, "no process %d", (int)pid);
	if (!realpath(lib, path))
		return msg_error(cmd, "%s: %s", msg_tstr(lib), strerror(errno));
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (check_owner(cmd, path, false) || check_owner(cmd, dir[0] ? dir : "/", true))
		return 1;
	r = live_lib_mapped(pid, path, found, sizeof(found));
	if (r == -EACCES || r == -EPERM)
		return msg_error(cmd, "not allowed to trace process %d: root (or CAP_SYS_PTRACE) is needed",
				 (int)pid);
	if (r < 0)
		return msg_error(cmd, "cannot read the maps of process %d: %s", (int)pid, strerror(-r));
	if (r)
		return msg_error(cmd, "process %d has already loaded %s (preloaded or injected)", (int)pid,
				 msg_tstr(found));
	/* what the process is when we look dlopen up: checked again once
	 * it is seized (an exec in between moves everything) */
	r = argus_live__ident(pid, &before);
	if (r)
		return msg_error(cmd, "cannot read process %d: %s", (int)pid, strerror(-r));
	if (argus_live__sym(pid, "libc.so.6", "dlopen", &s, why) &&
	    argus_live__sym(pid, "libdl.so.2", "dlopen", &s, NULL))
		return msg_error(cmd, "no dlopen in process %d: %s", (int)pid, why);
	if (argus_live__trusted_code(pid, s.addr, why))
		return msg_error(cmd, "not calling dlopen in process %d: %s", (int)pid, msg_tstr(why));

	r = argus_live__open(pid, &l, why);
	if (r == -EPERM)
		return msg_error(cmd, "cannot ptrace process %d: %s (root, or CAP_SYS_PTRACE, is needed)",
				 (int)pid, why);
	if (r)
		return msg_error(cmd, "%s", why[0] ? why : strerror(-r));
	r = argus_live__stop_one(l, &tid);
	if (r) {
		argus_live__close(l);
		return msg_error(cmd, "cannot stop a thread of process %d: %s", (int)pid, strerror(-r));
	}
	r = argus_live__check(l, &before, why);
	if (r) {
		argus_live__close(l);
		return msg_error(cmd, "%s", msg_tstr(why));
	}
	c.fn = s.addr;
	c.data = path;
	c.data_len = strlen(path) + 1;
	c.args[1] = RTLD_NOW_;
	c.timeout_ms = 10000;
	r = argus_live__call(l, tid, &c, &handle, why);
	if (!r && !handle)
		remote_dlerror(l, tid, err, sizeof(err));
	if (!r && handle && bind) {
		/* the calls already bound to glibc: to the wrappers, with
		 * every thread stopped (live_bind.c) */
		br = argus_live__stop_all(l);
		if (!br)
			br = argus_live__bind(l, path, &bs, bwhy);
		else
			snprintf(bwhy, sizeof(bwhy), "cannot stop the threads: %s", strerror(-br));
	}
	argus_live__close(l);	/* resumes: the interrupted syscall restarts */
	if (r == -ENOEXEC)
		return msg_error(cmd, "%s", msg_tstr(why));
	if (r)
		return msg_error(cmd, "calling dlopen in process %d failed: %s", (int)pid,
				 why[0] ? why : strerror(-r));
	if (!handle)
		return msg_error(cmd, "dlopen(%s) in process %d returned NULL: %s", msg_tstr(path), (int)pid,
				 msg_tstr(err));
	target_run_dir(pid, rd, sizeof(rd));
	printf("argus %s: loaded %s into process %d (handle %#llx); its ring registers with the argusd"
	       " of %s if one runs there\n", cmd, msg_tstr(path), (int)pid, (unsigned long long)handle,
	       msg_tstr(rd));
	if (!bind)
		return 0;
	if (br)
		return msg_error(cmd, "loaded, but the lock calls were not rebound: %s", msg_tstr(bwhy));
	printf("argus %s: rebound %u call slot%s of %u lock function%s in %u file%s to the wrappers\n", cmd,
	       bs.slots, bs.slots == 1 ? "" : "s", bs.functions, bs.functions == 1 ? "" : "s", bs.files,
	       bs.files == 1 ? "" : "s");
	return 0;
}

static const struct argus_usage usage = {
	.cmd = "inject",
	.synopsis = "argus inject --pid PID [--lib PATH] [--no-bind]\n",
	.about =
	"  Loads the interposer (default: the libargus-interpose.so beside this\n"
	"  argus) into the running process PID without restarting it: ptrace\n"
	"  stops one thread, calls dlopen(PATH, RTLD_NOW) on it, restores every\n"
	"  register (a syscall it was blocked in restarts), and detaches.  The\n"
	"  library's constructor then registers its ring with the argusd of\n"
	"  the process's $ARGUS_RUN_DIR (default /run/argus).\n"
	"  A late dlopen is not in the global symbol scope, so the calls the\n"
	"  process had bound keep going to glibc: inject then rewrites, with\n"
	"  every thread stopped, the GOT slots of the lock functions\n"
	"  (pthread_mutex_*, pthread_rwlock_*, pthread_cond_*, sem_*) in every\n"
	"  mapped file but libc and the loader to the wrappers, of the same\n"
	"  symbol version, as LD_PRELOAD would have bound them.  A thread\n"
	"  already waiting in glibc finishes there; later waits are recorded.\n"
	"  GLib's wrappers are not bound (their state starts when a pool or\n"
	"  source is made).\n",
};

int cmd_inject(int argc, char **argv)
{
	const char *lib = NULL;
	char def[PATH_MAX];
	bool no_bind = false;
	uint32_t pid = 0;
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &pid, "PID", "the running process", 1, INT32_MAX),
		OPT_STRING(0, "lib", &lib, "PATH",
			   "the library to load (default: the interposer beside argus);\n"
			   "owned by root and writable by nobody else"),
		OPT_BOOL(0, "no-bind", &no_bind, "load only (argus_work_* for `argus instrument`)"),
		OPT_END(),
	};
	int n = argus_opts_parse(&usage, opts, argc, argv, 0);

	if (n < 0)
		return argus_opts_exit(n);
	if (n)
		return msg_usage_error("inject", "unexpected argument '%s'", msg_tstr(argv[0]));
	if (!pid)
		return msg_usage_error("inject", "--pid PID is required");
	if (!lib) {
		if (live_default_lib("inject", def, sizeof(def)))
			return 1;
		lib = def;
	}
	return live_inject("inject", (pid_t)pid, lib, !no_bind);
}
