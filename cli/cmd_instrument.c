/* cmd_instrument.c - `argus instrument`: Detours-style entry patches in a
 * running process (interposer/live/live_patch.c; docs/interposer.md
 * "Live: inject and instrument").
 *
 * The hook a kind calls (argus_work_enqueue/begin/end/boundary) is looked
 * up in the libargus-interpose.so the process has mapped (injected first
 * when it has none), so the trampoline calls the very code its ring is
 * registered from.  --count-only patches with the trampoline's hit
 * counter alone: a process without the interposer, or an interposer
 * built before argus_work_*.
 *
 * --at-return KIND also hooks the function's return (interposer/
 * live_ret.c: the return address is swapped for a stub in the trampoline
 * page), calling KIND's argus_work_* with the item the entry had.
 *
 * --schema FILE: the `instrument FUNC as KIND [at-return KIND]` lines of
 * a schema file (docs/schema.md); every other line is the graph's and
 * skipped here.
 * All are resolved before the first patch, so a typo changes nothing. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_live.h"
#include "cli.h"
#include "control.h"
#include "live_cli.h"

#define CMD "instrument"
#define MAX_SCHEMA_FUNCS 64

struct func_req {
	char spec[256];		/* as given: [LIB:]SYMBOL, 0xADDR, LIB+0xOFF */
	enum argus_live_kind kind;
	enum argus_live_kind ret_kind;	/* --at-return KIND, 0 none */
	int line;		/* in the schema file, 0 from --func */
};

static int parse_kind(const char *v, enum argus_live_kind *k)
{
	static const struct { const char *n; enum argus_live_kind k; } t[] = {
		{ "boundary", ARGUS_LIVE_BOUNDARY }, { "enqueue", ARGUS_LIVE_ENQUEUE },
		{ "begin", ARGUS_LIVE_BEGIN }, { "dequeue", ARGUS_LIVE_BEGIN },
		{ "end", ARGUS_LIVE_END },
	};

	for (size_t i = 0; v && i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(v, t[i].n)) {
			*k = t[i].k;
			return 0;
		}
	return -EINVAL;
}

/* FUNC to an address (and its size, name, file). */
static int resolve(pid_t pid, const char *spec, struct argus_live_sym *s, char *why)
{
	char lib[256];
	const char *colon = strchr(spec, ':');

	if (!strncmp(spec, "0x", 2) || strchr(spec, '+'))
		return argus_live__addr(pid, spec, s, why);
	/* LIB:SYMBOL; a C++ name's "::" is not a LIB separator */
	if (colon && colon[1] != ':' && colon != spec) {
		snprintf(lib, sizeof(lib), "%.*s", (int)(colon - spec), spec);
		return argus_live__sym(pid, lib, colon + 1, s, why);
	}
	return argus_live__sym(pid, NULL, spec, s, why);
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* "libz.so.1:crc32" for the header and the messages. */
static void display_name(const struct argus_live_sym *s, char *out, size_t len)
{
	if (s->name[0])
		snprintf(out, len, "%.100s:%.120s", base(s->file), s->name);
	else
		snprintf(out, len, "%.100s+%#llx", base(s->file), (unsigned long long)(s->addr - s->bias));
}

/* Read the instrument lines of a schema file. */
static int read_schema(const char *path, struct func_req *r, size_t *n)
{
	char line[4200];
	int ln = 0;
	FILE *f = fopen(path, "re");

	*n = 0;
	if (!f)
		return msg_error(CMD, "%s: %s", msg_tstr(path), strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *w[7], *save = NULL, *tok;
		int k = 0;

		ln++;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && k < 7;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (tok[0] == '#')
				break;
			w[k++] = tok;
		}
		if (!k || strcmp(w[0], "instrument"))
			continue;
		r[*n].ret_kind = 0;
		if ((k != 4 && k != 6) || strcmp(w[2], "as") || parse_kind(w[3], &r[*n].kind) ||
		    (k == 6 && (strcmp(w[4], "at-return") || parse_kind(w[5], &r[*n].ret_kind))) ||
		    strlen(w[1]) >= sizeof(r[*n].spec)) {
			fclose(f);
			return msg_error(CMD, "%s:%d: expected `instrument [LIB:]SYMBOL as KIND"
					 " [at-return KIND]`, KIND boundary|enqueue|dequeue|begin|end",
					 msg_tstr(path), ln);
		}
		if (*n == MAX_SCHEMA_FUNCS) {
			fclose(f);
			return msg_error(CMD, "%s:%d: more than %d instrument lines", msg_tstr(path), ln,
					 MAX_SCHEMA_FUNCS);
		}
		snprintf(r[*n].spec, sizeof(r[*n].spec), "%s", w[1]);
		r[*n].line = ln;
		(*n)++;
	}
	fclose(f);
	if (!*n)
		return msg_error(CMD, "%s has no `instrument` line", msg_tstr(path));
	return 0;
}

static int list(pid_t pid)
{
	struct argus_live_tramp_hdr h[64];
	uint64_t pages[64];
	size_t n;
	int r = argus_live__list(pid, h, pages, 64, &n);

	if (r == -ESRCH || r == -ENOENT)
		return msg_error(CMD, "no process %d", (int)pid);
	if (r)
		return msg_error(CMD, "cannot read process %d: %s", (int)pid, strerror(-r));
	for (size_t i = 0; i < n; i++) {
		h[i].name[sizeof(h[i].name) - 1] = '\0';      /* the target's page */
		printf("%#llx %s as %s", (unsigned long long)h[i].func, msg_tstr(h[i].name),
		       argus_live__kind_name(h[i].kind));
		if (h[i].ret_hook)
			printf(" at-return %s (%llu in flight)",
			       argus_live__kind_name(h[i].ret_kind),
			       (unsigned long long)h[i].inflight);
		printf(" hits %llu trampoline %#llx\n", (unsigned long long)h[i].hits,
		       (unsigned long long)pages[i]);
	}
	{
		uint64_t f[64];
		int k[64];
		size_t nu = 0;

		argus_live__uprobe_list(pid, f, k, 64, &nu);
		for (size_t i = 0; i < nu; i++)
			printf("%#llx as %s via uprobe\n", (unsigned long long)f[i],
			       argus_live__kind_name((enum argus_live_kind)k[i]));
		n += nu;
	}
	if (!n)
		printf("# no argus instrument patch in process %d\n", (int)pid);
	return 0;
}

/* --via uprobe: the kernel records the entries (interposer/live/
 * live_uprobe.c) into the ring of this argus's collector. */
static int via_uprobes(pid_t pid, const struct func_req *req, const struct argus_live_sym *sym,
		       size_t n, bool remove, const char *schema)
{
	char why[ARGUS_LIVE_WHY], name[256];

	for (size_t i = 0; i < n; i++) {
		int r;

		display_name(&sym[i], name, sizeof(name));
		why[0] = 0;
		r = remove ? argus_live__uprobe_remove(pid, sym[i].addr, why)
			   : argus_live__uprobe_add(pid, &sym[i], req[i].kind, argus_run_dir(), why);
		if (r && req[i].line)
			return msg_error(CMD, "%s:%d: %s: %s", msg_tstr(schema), req[i].line,
					 msg_tstr(name), why[0] ? why : strerror(-r));
		if (r)
			return msg_error(CMD, "%s: %s", msg_tstr(name), why[0] ? why : strerror(-r));
		if (remove)
			printf("argus %s: removed the uprobe on %s at %#llx\n", CMD, msg_tstr(name),
			       (unsigned long long)sym[i].addr);
		else
			printf("argus %s: uprobe on %s at %#llx records %s (live_hit) into the collector of %s\n",
			       CMD, msg_tstr(name), (unsigned long long)sym[i].addr,
			       argus_live__kind_name(req[i].kind), msg_tstr(argus_run_dir()));
	}
	return 0;
}

static const struct argus_usage usage = {
	.cmd = CMD,
	.synopsis =
	"argus instrument --pid PID --func FUNC --as KIND [--at-return KIND] [--lib PATH]\n"
	"argus instrument --pid PID --func FUNC --as KIND --count-only\n"
	"argus instrument --pid PID --func FUNC --as KIND --via uprobe\n"
	"argus instrument --pid PID --func FUNC --remove\n"
	"argus instrument --pid PID --schema FILE [--remove]\n"
	"argus instrument --pid PID --list\n",
	.about =
	"  Patches the entry of a function of a running process (Detours-style:\n"
	"  a jmp to a trampoline page near it, the displaced instructions\n"
	"  relocated with capstone) so that each call first records a work-item\n"
	"  event.  The interposer is injected first when the process has not\n"
	"  loaded it.  Every thread is stopped while bytes change; none may be\n"
	"  executing the bytes replaced (retried for 1 s).  Refused: a function\n"
	"  shorter than 5 bytes, a jump inside it back into those bytes, an\n"
	"  instruction capstone cannot relocate.\n",
};

int cmd_instrument(int argc, char **argv)
{
	static struct func_req req[MAX_SCHEMA_FUNCS];
	static struct argus_live_sym sym[MAX_SCHEMA_FUNCS];
	const char *func = NULL, *as = NULL, *schema = NULL, *lib = NULL, *at_return = NULL;
	static struct argus_live_ret rets[MAX_SCHEMA_FUNCS];
	bool remove = false, count_only = false, do_list = false, via_uprobe = false;
	char why[ARGUS_LIVE_WHY], name[256], libpath[PATH_MAX];
	struct argus_live *l;
	struct argus_live_ident before;
	size_t n = 0;
	pid_t pid = 0;
	uint64_t hooks[MAX_SCHEMA_FUNCS] = { 0 };
	int r, rc = 0;

	uint32_t upid = 0;
	const char *via = NULL;
	const struct argus_opt opts[] = {
		OPT_U32(0, "pid", &upid, "PID", "the running process", 1, INT32_MAX),
		OPT_STRING(0, "func", &func, "FUNC",
			   "[LIB:]SYMBOL (LIB: a mapped file's basename or a prefix of it,\n"
			   "default the executable; .symtab, or .dynsym when stripped),\n"
			   "0xADDR, or LIB+0xOFFSET (a virtual address as readelf shows it)"),
		OPT_STRING(0, "as", &as, "KIND",
			   "each call first records a work-item event with the\n"
			   "function's first argument (rdi) as the item:\n"
			   "enqueue    argus_work_enqueue(item)\n"
			   "begin      argus_work_begin(item)   (dequeue: the same)\n"
			   "end        argus_work_end(item)\n"
			   "boundary   argus_work_boundary(item): cut the segment here"),
		OPT_STRING(0, "at-return", &at_return, "KIND",
			   "also at the function's return, with the same item\n"
			   "(--as begin --at-return end: each call is one work item):\n"
			   "the return address is swapped for a stub in the trampoline\n"
			   "page.  Not for functions C++ exceptions unwind through;\n"
			   "--remove waits until no hooked call is in flight"),
		OPT_STRING(0, "lib", &lib, "PATH",
			   "the interposer to inject first when the process has not\n"
			   "loaded it (see argus inject)"),
		OPT_BOOL(0, "count-only", &count_only,
			 "patch with the hit counter alone (no hook, no interposer needed)"),
		OPT_STRING(0, "via", &via, "patch|uprobe",
			   "uprobe: no patch: a uprobe on the entry, whose BPF program\n"
			   "writes a live_hit record (function, item, kind) into the\n"
			   "running collector's ring; costs a trap per call\n"
			   "(bench/live_hook.sh).  --remove takes it away (also --via\n"
			   "uprobe).  patch: the default"),
		OPT_BOOL(0, "remove", &remove,
			 "put the original bytes back (kept in the trampoline's\n"
			 "header page) and unmap the trampoline"),
		OPT_BOOL(0, "list", &do_list,
			 "the patches in PID: function, kinds, hits, calls in flight\n"
			 "(and its uprobes)"),
		OPT_STRING(0, "schema", &schema, "FILE",
			   "apply (or --remove) every `instrument FUNC as KIND\n"
			   "[at-return KIND]` line of a schema file (docs/schema.md)"),
		OPT_END(),
	};

	if ((r = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(r);
	if (r)
		return msg_usage_error(CMD, "unexpected argument '%s'", msg_tstr(argv[0]));
	if (via && strcmp(via, "uprobe") && strcmp(via, "patch"))
		return msg_usage_error(CMD, "--via wants patch or uprobe, got '%s'", msg_tstr(via));
	via_uprobe = via && !strcmp(via, "uprobe");
	pid = (pid_t)upid;
	if (!pid)
		return msg_usage_error(CMD, "--pid PID is required");
	if (do_list)
		return list(pid);
	if (!!func + !!schema != 1)
		return msg_usage_error(CMD, "give --func FUNC or --schema FILE (one of them)");
	if (func) {
		if (strlen(func) >= sizeof(req[0].spec))
			return msg_usage_error(CMD, "--func is too long");
		snprintf(req[0].spec, sizeof(req[0].spec), "%s", func);
		if (!remove && parse_kind(as, &req[0].kind))
			return msg_usage_error(CMD, "--as needs boundary, enqueue, dequeue, begin or end%s%s%s",
					       as ? " (got '" : "", as ? msg_tstr(as) : "", as ? "')" : "");
		req[0].ret_kind = 0;
		if (at_return && parse_kind(at_return, &req[0].ret_kind))
			return msg_usage_error(CMD, "--at-return needs boundary, enqueue, dequeue, begin or"
					       " end (got '%s')", msg_tstr(at_return));
		n = 1;
	} else if (at_return) {
		return msg_usage_error(CMD, "--at-return goes with --func (in a schema file: `instrument"
				       " FUNC as KIND at-return KIND`)");
	} else if (read_schema(schema, req, &n)) {
		return 1;
	}
	if (remove && (as || at_return))
		return msg_usage_error(CMD, "--remove takes no --as or --at-return");
	for (size_t i = 0; i < n; i++)
		if (req[i].ret_kind && (count_only || via_uprobe))
			return msg_usage_error(CMD, "--at-return needs the patch and its hooks (not with"
					       " --count-only or --via uprobe)");
	if (count_only && via_uprobe)
		return msg_usage_error(CMD, "--count-only is for patches (a uprobe always records)");
	if (count_only)
		for (size_t i = 0; i < n; i++)
			req[i].kind = ARGUS_LIVE_COUNT;

	/* what the process is when we resolve: checked again once it is
	 * seized (an exec in between moves everything; argus_live.h, the
	 * exec rule) */
	r = argus_live__ident(pid, &before);
	if (r == -ESRCH)
		return msg_error(CMD, "no process %d", (int)pid);
	if (r)
		return msg_error(CMD, "cannot read process %d: %s", (int)pid, strerror(-r));
	/* resolve everything before changing anything */
	for (size_t i = 0; i < n; i++) {
		why[0] = 0;
		r = resolve(pid, req[i].spec, &sym[i], why);
		if (r == -ESRCH)
			return msg_error(CMD, "no process %d", (int)pid);
		if (r == -EACCES || r == -EPERM)
			return msg_error(CMD, "not allowed to trace process %d: root (or CAP_SYS_PTRACE) is"
					 " needed", (int)pid);
		if (r && req[i].line)
			return msg_error(CMD, "%s:%d: %s", msg_tstr(schema), req[i].line, why);
		if (r)
			return msg_error(CMD, "%s", why[0] ? why : strerror(-r));
	}
	if (via_uprobe)
		return via_uprobes(pid, req, sym, n, remove, schema);
	if (!remove && !count_only) {
		r = live_lib_mapped(pid, LIVE_IPOSE_NAME, NULL, 0);
		if (r < 0)
			return msg_error(CMD, "no process %d", (int)pid);
		if (!r) {
			if (lib) {
				snprintf(libpath, sizeof(libpath), "%s", lib);
			} else if (live_default_lib(CMD, libpath, sizeof(libpath))) {
				return 1;
			}
			printf("argus %s: process %d has no " LIVE_IPOSE_NAME ": injecting it\n", CMD,
			       (int)pid);
			if (live_inject(CMD, pid, libpath, false))
				return 1;
		}
		for (size_t i = 0; i < n; i++) {
			struct argus_live_sym h;
			const char *hn = argus_live__kind_hook(req[i].kind);

			if (argus_live__sym(pid, LIVE_IPOSE_NAME, hn, &h, NULL))
				return msg_error(CMD, "the " LIVE_IPOSE_NAME " in process %d has no %s (built"
						 " before the work-item API?): rebuild it, or use --count-only",
						 (int)pid, hn);
			hooks[i] = h.addr;
			if (!req[i].ret_kind)
				continue;
			/* the return half lives in the interposer too (live_ret.c) */
			const char *need[3] = { "argus_live_ret_enter", "argus_live_ret_leave",
						argus_live__kind_hook(req[i].ret_kind) };
			uint64_t *at[3] = { &rets[i].enter, &rets[i].leave, &rets[i].hook };

			for (int k = 0; k < 3; k++) {
				if (argus_live__sym(pid, LIVE_IPOSE_NAME, need[k], &h, NULL))
					return msg_error(CMD, "the " LIVE_IPOSE_NAME " in process %d has no %s"
							 " (built before --at-return?): rebuild it, or"
							 " instrument without --at-return", (int)pid,
							 need[k]);
				*at[k] = h.addr;
			}
			rets[i].kind = req[i].ret_kind;
		}
	}

	r = argus_live__open(pid, &l, why);
	if (r == -EPERM)
		return msg_error(CMD, "cannot ptrace process %d: %s (root, or CAP_SYS_PTRACE, is needed)",
				 (int)pid, why);
	if (r)
		return msg_error(CMD, "%s", why);
	if (argus_live__check(l, &before, why)) {
		argus_live__close(l);
		return msg_error(CMD, "%s", msg_tstr(why));
	}
	for (size_t i = 0; i < n; i++) {
		display_name(&sym[i], name, sizeof(name));
		why[0] = 0;
		if (remove) {
			r = argus_live__unpatch(l, sym[i].addr, why);
			if (!r)
				printf("argus %s: restored %s at %#llx\n", CMD, msg_tstr(name),
				       (unsigned long long)sym[i].addr);
		} else {
			struct argus_live_patch_opts o = { .sz = sizeof(o), .kind = req[i].kind,
							   .hook = hooks[i], .name = name,
							   .ret = req[i].ret_kind ? &rets[i] : NULL };
			uint64_t page = 0;

			r = argus_live__patch(l, &sym[i], &o, &page, why);
			if (!r)
				printf("argus %s: patched %s at %#llx%s -> trampoline %#llx, %s%s%s%s%s%s\n",
				       CMD, msg_tstr(name), (unsigned long long)sym[i].addr,
				       sym[i].dynsym_only ? " (stripped file: .dynsym)" : "",
				       (unsigned long long)page,
				       req[i].kind == ARGUS_LIVE_COUNT ? "hit counter only" : "calls ",
				       req[i].kind == ARGUS_LIVE_COUNT ? "" : argus_live__kind_hook(req[i].kind),
				       req[i].kind == ARGUS_LIVE_COUNT ? "" : "(rdi)",
				       req[i].ret_kind ? ", and at its return " : "",
				       req[i].ret_kind ? argus_live__kind_hook(req[i].ret_kind) : "",
				       req[i].ret_kind ? "(the same item)" : "");
		}
		if (r) {
			rc = req[i].line ? msg_error(CMD, "%s:%d: %s: %s", msg_tstr(schema), req[i].line,
						     msg_tstr(name), why[0] ? why : strerror(-r))
					 : msg_error(CMD, "%s: %s", msg_tstr(name), why[0] ? why : strerror(-r));
			break;
		}
	}
	argus_live__close(l);
	return rc;
}
