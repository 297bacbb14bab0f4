/* cmd_dump.c - `argus dump FILE`: every event as one readable line, in
 * timestamp order, like `perf script`; with --stacks, symbolized user
 * stacks under the events that carry one.  Lost events and chunks lost to
 * ring wrap or a crash are always reported at the end, never hidden. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_events.h"
#include "cli.h"
#include "symbolize.h"
#include "syscall_names.h"
#include "trace_format.h"

static const char *type_name(unsigned t)
{
	const char *n = t <= UINT16_MAX ? argus_event_type_str((uint16_t)t) : NULL;
	return n ? n : "unknown";
}

static const char *ctx_name(unsigned c)
{
	static const char *const n[] = { "task", "softirq", "hardirq", "nmi" };
	return c < 4 ? n[c] : "?";
}

static void print_obj(uint64_t kind, uint64_t obj, uint64_t peer)
{
	if (!kind)
		return;
	if (kind == AE_OBJ_TCP || kind == AE_OBJ_UDP)
		/* the BPF side packs the address in host order (ntohl) above
		 * the port: the first octet is the highest byte */
		printf(" obj=%s:%u.%u.%u.%u:%u->%u.%u.%u.%u:%u", argus_obj_kind_str(kind),
		       (unsigned)(obj >> 40) & 255, (unsigned)(obj >> 32) & 255,
		       (unsigned)(obj >> 24) & 255, (unsigned)(obj >> 16) & 255,
		       (unsigned)(obj & 0xffff),
		       (unsigned)(peer >> 40) & 255, (unsigned)(peer >> 32) & 255,
		       (unsigned)(peer >> 24) & 255, (unsigned)(peer >> 16) & 255,
		       (unsigned)(peer & 0xffff));
	else if (peer)
		printf(" obj=%s:%#" PRIx64 "->%#" PRIx64, argus_obj_kind_str(kind), obj, peer);
	else
		printf(" obj=%s:%#" PRIx64, argus_obj_kind_str(kind), obj);
}

static const char *comm_of(const struct argus_trace *t, uint32_t tid)
{
	const struct argus_task *k = tid ? argus_trace__task(t, tid) : NULL;
	const char *s = k ? argus_trace__string(t, k->comm) : NULL;
	/* a comm is the traced program's choice: escaped, so that neither
	 * an ESC nor a newline in it acts on root's terminal or forges a line */
	return s ? msg_tstr(s) : (tid ? "?" : "swapper");
}

static void print_sys(long nr)
{
	const char *n = argus_syscall_name(nr);
	if (n)
		printf(" %s", n);
	else
		printf(" sys_%ld", nr);
}

/* The lock request of a flock/fcntl entry (the raw args of fcntl's lock
 * cmds hold the tagged struct flock copy, argus_events.h):
 * " lock=KIND:OP:wait|try range=START+LEN|START+eof"; OP "?" when the
 * struct flock could not be read. */
static void print_lock(int64_t nr, const uint64_t *args)
{
	struct argus_lock_req r;
	const char *op;

	if (argus_lock__decode(nr, args, &r))
		return;
	op = argus_lock_op_str(r.op);
	printf(" lock=%s:%s:%s", argus_lock_kind_str(r.kind), op ? op : "?",
	       r.wait ? "wait" : "try");
	if (r.kind == ARGUS_LOCK_FLOCK)
		return;
	if (r.len == ARGUS_LOCK_EOF)
		printf(" range=%#" PRIx64 "+eof", r.start);
	else
		printf(" range=%#" PRIx64 "+%" PRIu64, r.start, r.len);
}

/* An interposer record of a rwlock, semaphore or condvar (AE_MUTEX_*
 * with a kind; docs/trace-format.md). */
static void print_sync(uint16_t type, const uint64_t *f)
{
	static const char *const obj[AE_SYNC_KIND_MAX] = {
		[AE_SYNC_RDLOCK] = "rwlock", [AE_SYNC_WRLOCK] = "rwlock",
		[AE_SYNC_SEM] = "sem", [AE_SYNC_COND] = "cond",
	};
	uint64_t kind = f[ARGUS_F_MX_KIND];

	if (kind >= AE_SYNC_KIND_MAX) {
		printf(" kind=%" PRIu64 " addr=%#" PRIx64, kind, f[ARGUS_F_MX_ADDR]);
		return;
	}
	printf(" %s=%#" PRIx64, obj[kind], f[ARGUS_F_MX_ADDR]);
	if (kind == AE_SYNC_RDLOCK || kind == AE_SYNC_WRLOCK)
		printf(" mode=%s", kind == AE_SYNC_RDLOCK ? "read" : "write");
	if (kind == AE_SYNC_COND && type != AE_MUTEX_WAKE)
		printf(" mutex=%#" PRIx64, f[ARGUS_F_MX_ARG]);
	if (type == AE_MUTEX_WAIT && kind != AE_SYNC_SEM && kind != AE_SYNC_COND)
		printf(" holder=%" PRIu64 " readers=%" PRIu64, f[ARGUS_F_MX_OTHER],
		       f[ARGUS_F_MX_ARG]);
	else if (type == AE_MUTEX_ACQUIRED)
		printf(" err=%" PRIu64, f[ARGUS_F_MX_OTHER]);
	else if (type == AE_MUTEX_WAKE && (kind == AE_SYNC_SEM || kind == AE_SYNC_COND))
		printf(" waiters=%" PRIu64 "%s", f[ARGUS_F_MX_OTHER],
		       kind == AE_SYNC_COND && f[ARGUS_F_MX_ARG] ? " broadcast" : "");
}

/* A work item's callback, symbolized from the process's mappings in the
 * trace (the symbolizer lives until exit: one CLI run). */
static void print_work_fn(const struct argus_trace *t, const struct argus_event *e, uint64_t fn)
{
	static struct argus_symbolizer *sym;
	struct argus_sym s;
	char buf[512];

	if (!fn) {
		printf(" fn=?");
		return;
	}
	if (!sym)
		sym = argus_symbolizer__new();
	if (sym && !argus_symbolize_trace_ip(sym, t, e->pid, e->ts, fn, &s)) {
		argus_sym__format(&s, fn, buf, sizeof(buf));
		printf(" fn=%#" PRIx64 " %s", fn, msg_tstr(buf));
	} else {
		printf(" fn=%#" PRIx64, fn);
	}
}

static void print_event(const struct argus_trace *t, const struct argus_event *e)
{
	const uint64_t *f = e->f;

	printf("%16s %7u/%-7u [%03u] %5" PRIu64 ".%09" PRIu64 ": %-14s", comm_of(t, e->tid),
	       e->tid, e->pid, e->cpu, e->ts / 1000000000, e->ts % 1000000000, type_name(e->type));
	if (e->ctx)
		printf(" ctx=%s", ctx_name(e->ctx));
	switch (e->type) {
	case AE_SWITCH:
		printf(" prev_state=%#" PRIx64 " next=%s:%" PRIu64 "/%" PRIu64,
		       f[ARGUS_F_SW_PREV_STATE], comm_of(t, (uint32_t)f[ARGUS_F_SW_NEXT_TID]),
		       f[ARGUS_F_SW_NEXT_TID], f[ARGUS_F_SW_NEXT_PID]);
		if ((int64_t)f[ARGUS_F_SW_SYS_NR] >= 0 && f[ARGUS_F_SW_PREV_STATE]) {
			printf(" blocked_in");
			print_sys((long)f[ARGUS_F_SW_SYS_NR]);
			printf("(%#" PRIx64 ")", f[ARGUS_F_SW_SYS_ARG]);
		}
		print_obj(f[ARGUS_F_SW_OBJ_KIND], f[ARGUS_F_SW_OBJ], f[ARGUS_F_SW_PEER]);
		break;
	case AE_WAKING:
		printf(" target=%s:%" PRIu64 "/%" PRIu64 " target_cpu=%" PRIu64,
		       comm_of(t, (uint32_t)f[ARGUS_F_WK_TARGET_TID]), f[ARGUS_F_WK_TARGET_TID],
		       f[ARGUS_F_WK_TARGET_PID], f[ARGUS_F_WK_TARGET_CPU]);
		if (f[ARGUS_F_WK_VECTOR] == AE_VEC_HRTIMER)
			printf(" vec=hrtimer");
		else if (f[ARGUS_F_WK_VECTOR] != AE_VEC_NONE &&
			 (f[ARGUS_F_WK_VECTOR] & ~0xffull) == AE_VEC_APIC)
			printf(" vec=apic:%#" PRIx64, f[ARGUS_F_WK_VECTOR] & 0xff);
		else if (f[ARGUS_F_WK_VECTOR] != AE_VEC_NONE)
			printf(" vec=%" PRIu64, f[ARGUS_F_WK_VECTOR]);
		if (f[ARGUS_F_WK_HRTIMER])
			printf(" timer=%#" PRIx64, f[ARGUS_F_WK_HRTIMER]);
		break;
	case AE_WAKEUP_NEW:
	case AE_FORK:
	case AE_FREE:
		printf(" child=%" PRIu64 "/%" PRIu64 " comm=%s", f[ARGUS_F_TK_CHILD_TID],
		       f[ARGUS_F_TK_CHILD_PID], msg_tstr(e->str ? argus_trace__string(t, e->str) : ""));
		break;
	case AE_EXEC:
		printf(" old_tid=%" PRIu64 " comm=%s file=%s", f[ARGUS_F_EX_OLD_TID],
		       msg_tstr(e->str ? argus_trace__string(t, e->str) : ""),
		       msg_tstr(e->str2 ? argus_trace__string(t, e->str2) : ""));
		break;
	case AE_EXIT:
		printf(" code=%" PRId64, (int64_t)f[ARGUS_F_EXIT_CODE]);
		break;
	case AE_RENAME:
		printf(" \"%s\"", msg_tstr(e->str ? argus_trace__string(t, e->str) : ""));
		break;
	case AE_MARK:
		/* who marked: pid/tid are the sender's; the uid is absent in
		 * traces of older collectors ("uid=?", not root) */
		printf(" \"%s\"", msg_tstr(e->str ? argus_trace__string(t, e->str) : ""));
		if (f[ARGUS_F_MARK_HAS_UID])
			printf(" uid=%" PRIu64, f[ARGUS_F_MARK_UID]);
		else
			printf(" uid=?");
		break;
	case AE_SYS_ENTER:
		print_sys((long)f[ARGUS_F_SE_NR]);
		printf("(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ")",
		       f[1], f[2], f[3], f[4]);
		print_lock((int64_t)f[ARGUS_F_SE_NR], &f[ARGUS_F_SE_ARG0]);
		break;
	case AE_SYS_EXIT:
		print_sys((long)f[ARGUS_F_SX_NR]);
		printf(" = %" PRId64 " arg0=%" PRIu64, (int64_t)f[ARGUS_F_SX_RET], f[ARGUS_F_SX_ARG0]);
		print_obj(f[ARGUS_F_SX_OBJ_KIND], f[ARGUS_F_SX_OBJ], f[ARGUS_F_SX_PEER]);
		break;
	case AE_HRT_START:
	case AE_HRT_EXPIRE:
	case AE_HRT_CANCEL:
		printf(" timer=%#" PRIx64 " fn=%#" PRIx64 " owner=%" PRIu64, f[ARGUS_F_HT_TIMER],
		       f[ARGUS_F_HT_FUNCTION], f[ARGUS_F_HT_OWNER_TID]);
		if (e->type == AE_HRT_START)
			printf(" expires=%" PRIu64 " mode=%" PRIu64, f[ARGUS_F_HT_EXPIRES], f[ARGUS_F_HT_MODE]);
		break;
	case AE_IRQ_ENTRY:
	case AE_IRQ_EXIT:
	case AE_SOFTIRQ_ENTRY:
	case AE_SOFTIRQ_EXIT:
		printf(" vec=%" PRIu64, f[ARGUS_F_IRQ_VECTOR]);
		break;
	case AE_WQ_START:
	case AE_WQ_END:
		printf(" work=%#" PRIx64 " fn=%#" PRIx64, f[ARGUS_F_WQ_WORK], f[ARGUS_F_WQ_FUNCTION]);
		break;
	case AE_LOST:
		printf(" count=%" PRIu64, f[ARGUS_F_LOST_COUNT]);
		break;
	case AE_MUTEX_WAIT:
		if (f[ARGUS_F_MX_KIND] != AE_SYNC_MUTEX) {
			print_sync(e->type, f);
			break;
		}
		printf(" mutex=%#" PRIx64 " holder=%" PRIu64, f[ARGUS_F_MX_ADDR], f[ARGUS_F_MX_OTHER]);
		break;
	case AE_MUTEX_ACQUIRED:
		if (f[ARGUS_F_MX_KIND] != AE_SYNC_MUTEX) {
			print_sync(e->type, f);
			break;
		}
		printf(" mutex=%#" PRIx64 " err=%" PRIu64, f[ARGUS_F_MX_ADDR], f[ARGUS_F_MX_OTHER]);
		break;
	case AE_MUTEX_WAKE:
		if (f[ARGUS_F_MX_KIND] != AE_SYNC_MUTEX) {
			print_sync(e->type, f);
			break;
		}
		printf(" mutex=%#" PRIx64, f[ARGUS_F_MX_ADDR]);
		break;
	case AE_WORK_ENQUEUE:
	case AE_WORK_BEGIN:
	case AE_WORK_END:
		printf(" item=%#" PRIx64 " kind=%s", f[ARGUS_F_WI_ITEM],
		       argus_work_kind_str((unsigned)f[ARGUS_F_WI_KIND]));
		print_work_fn(t, e, f[ARGUS_F_WI_FN]);
		break;
	case AE_WORK_BOUNDARY:
		printf(" tag=%#" PRIx64, f[ARGUS_F_WI_ITEM]);
		break;
	case AE_LIVE_HIT: {
		static const char *const kinds[] = { "?", "boundary", "enqueue", "begin", "end" };

		printf(" fn=%#" PRIx64 " item=%#" PRIx64 " as=%s", f[ARGUS_F_LIVE_FUNC],
		       f[ARGUS_F_LIVE_ITEM], kinds[f[ARGUS_F_LIVE_KIND] < 5 ? f[ARGUS_F_LIVE_KIND] : 0]);
		break;
	}
	case AE_HWWATCH:
		printf(" addr=%#" PRIx64 " len=%" PRIu64 " value=", f[ARGUS_F_HW_ADDR],
		       f[ARGUS_F_HW_LEN]);
		if (f[ARGUS_F_HW_VALUE_OK])
			printf("%#" PRIx64, f[ARGUS_F_HW_VALUE]);
		else
			printf("?");
		printf(" ip=%#" PRIx64 " watch=%" PRIu64, f[ARGUS_F_HW_IP], f[ARGUS_F_HW_ID]);
		if (f[ARGUS_F_HW_READER])
			printf(" reader=%" PRIu64, f[ARGUS_F_HW_READER]);
		break;
	}
	putchar('\n');
}

static void print_stack(const struct argus_trace *t, struct argus_symbolizer *sym,
			const struct argus_event *e)
{
	const uint64_t *ips;
	uint32_t nr;
	char buf[512];

	if (!e->stack || argus_trace__stack(t, e->stack, &ips, &nr))
		return;
	for (uint32_t i = 0; i < nr; i++) {
		struct argus_sym s;
		if (sym && !argus_symbolize_trace_ip(sym, t, e->pid, e->ts, ips[i], &s)) {
			argus_sym__format(&s, ips[i], buf, sizeof(buf));
			printf("\t%16" PRIx64 " %s\n", ips[i], msg_tstr(buf));
		} else {
			printf("\t%16" PRIx64 " [unknown]\n", ips[i]);
		}
	}
}

static void print_stats(const struct argus_trace *t)
{
	const struct argus_trace_stats *st = argus_trace__stats(t);
	const struct argus_file_header *fh = argus_trace__header(t);

	printf("# %s from %s (kernel %s, %u CPUs); wait stacks: %s\n",
	       fh->flags & ARGUS_FILE_RING ? "ring" : "snapshot", msg_tstr(fh->hostname), msg_tstr(fh->kernel),
	       fh->ncpus, fh->flags & ARGUS_FILE_WAIT_STACKS ? "DWARF-unwound (--wait-stacks)"
	       : "frame pointers only");
	printf("# %" PRIu64 " events in %" PRIu64 " chunks, %.3f s",
	       st->events, st->chunks,
	       st->max_ts > st->min_ts ? (st->max_ts - st->min_ts) / 1e9 : 0.0);
	if (st->chunks_overwritten || st->chunks_incomplete)
		printf(", %" PRIu64 " chunks overwritten by the ring, %" PRIu64 " cut by a crash",
		       st->chunks_overwritten, st->chunks_incomplete);
	if (st->chunks_corrupt)
		printf(", %" PRIu64 " corrupt chunks skipped (first at offset 0x%" PRIx64 ", %s)",
		       st->chunks_corrupt, st->corrupt_offset, st->corrupt_why);
	if (st->out_of_order)
		printf(", %" PRIu64 " out of order", st->out_of_order);
	printf("\n# lost events:");
	uint64_t total = 0;
	for (uint32_t c = 0; c < st->ncpus && c < 256; c++) {
		printf(" cpu%u=%" PRIu64, c, st->cpu[c].lost);
		total += st->cpu[c].lost;
	}
	printf(" total=%" PRIu64 "\n", total);
}

static const struct argus_usage usage = {
	.cmd = "dump",
	.synopsis = "argus dump FILE [--stacks] [--pid PID] [--tid TID] [--stats]\n",
	.about = "  Prints the events of a trace file, one per line.\n",
};

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	bool stacks = false, stats_only = false;
	long pid = -1, tid = -1;
	struct argus_error err = { 0 };
	struct argus_event ev;
	struct argus_symbolizer *sym = NULL;
	int rc;

	uint32_t upid = UINT32_MAX, utid = UINT32_MAX;   /* not given */
	const struct argus_opt opts[] = {
		OPT_BOOL(0, "stacks", &stacks, "print symbolized user stacks under events that have one"),
		OPT_U32(0, "pid", &upid, "PID", "only the events of process PID (and its wake-ups)", 0,
			INT32_MAX),
		OPT_U32(0, "tid", &utid, "TID", "only the events of thread TID (and its wake-ups)", 0,
			INT32_MAX),
		OPT_BOOL(0, "stats", &stats_only, "print only the per-CPU counts, lost events and time span"),
		OPT_END(),
	};

	if ((rc = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(rc);
	if (rc > 1)
		return msg_usage_error("dump", "unexpected argument '%s'", msg_tstr(argv[1]));
	path = rc ? argv[0] : NULL;
	pid = upid == UINT32_MAX ? -1 : (long)upid;
	tid = utid == UINT32_MAX ? -1 : (long)utid;
	if (!path)
		return msg_usage_error("dump", "needs a trace FILE");
	struct argus_trace *t = argus_trace__open(path, &err);
	if (!t)
		return msg_error("dump", "%s", err.msg);
	if (stacks)
		sym = argus_symbolizer__new();
	while ((rc = argus_trace__next(t, &ev, &err)) > 0) {
		if (stats_only)
			continue;
		if (pid >= 0 && ev.pid != pid && !(ev.type == AE_SWITCH && ev.f[ARGUS_F_SW_NEXT_PID] == (uint64_t)pid) &&
		    !(ev.type == AE_WAKING && ev.f[ARGUS_F_WK_TARGET_PID] == (uint64_t)pid))
			continue;
		if (tid >= 0 && ev.tid != tid && !(ev.type == AE_SWITCH && ev.f[ARGUS_F_SW_NEXT_TID] == (uint64_t)tid) &&
		    !(ev.type == AE_WAKING && ev.f[ARGUS_F_WK_TARGET_TID] == (uint64_t)tid))
			continue;
		print_event(t, &ev);
		if (stacks)
			print_stack(t, sym, &ev);
	}
	if (rc < 0) {
		fflush(stdout);
		argus_symbolizer__free(sym);
		argus_trace__close(t);
		return msg_error("dump", "%s", err.msg);
	}
	print_stats(t);
	argus_symbolizer__free(sym);
	argus_trace__close(t);
	return 0;
}
