/* event_format.c - one decoded event as a text line or a JSON object
 * (argus_event_format.h).
 *
 * The core idea: fields[] below says, per event type, which of the
 * event's f[] slots are shown, under which name and how (a field kind).
 * The text line and the JSON object are the same walk over that table;
 * only the leaf writers (put_*) differ between the two.  A field kind that
 * needs more than one slot (a task's tid and pid, an object's kind, obj and
 * peer) names its first slot and reads the next ones in the order of
 * trace_format.h's ARGUS_F_* enums.
 *
 * The text line (the `argus dump` line, unchanged since it is parsed by
 * people and old scripts):
 *   COMM(right-aligned, 16) TID/PID(7/-7) [CPU(03)] S.NNNNNNNNN: TYPE(-14)
 * then " ctx=..." unless the context is task, then " key=value" per field
 * (a few fields are spelled without a key: a syscall call, a quoted mark).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "argus_diag.h"
#include "argus_event_format.h"
#include "argus_events.h"
#include "argus_graph.h"
#include "syscall_names.h"

/* How a field is shown.  Text: " tkey=VALUE"; JSON: "jkey":VALUE. */
enum field_kind {
	FK_END = 0,
	FK_DEC,         /* unsigned decimal */
	FK_INT,         /* signed decimal */
	FK_HEX,         /* text %#x, JSON a number */
	FK_HEX_NZ,      /* FK_HEX, left out when 0 */
	FK_DEC_NZ,      /* FK_DEC, left out when 0 */
	FK_TASK,        /* slot tid, slot+1 pid: text COMM:TID/PID; JSON
	                   jkey_comm, jkey_tid, jkey_pid */
	FK_TIDPID,      /* slot tid, slot+1 pid: text TID/PID; JSON jkey_tid,
	                   jkey_pid */
	FK_STR,         /* the event's str (e->str) */
	FK_STR2,        /* the event's str2 */
	FK_QUOTED,      /* str, text ` "TEXT"` without a key */
	FK_BLOCKED,     /* switch: " blocked_in SYS(ARG)" when prev blocked in
	                   a syscall: slot nr, slot+1 its arg */
	FK_OBJ,         /* slot kind, slot+1 obj, slot+2 peer */
	FK_VEC,         /* waking: the wakeup's vector */
	FK_CALL,        /* sys_enter: " SYS(A0, A1, A2, A3)"; slot nr */
	FK_LOCK,        /* sys_enter: a flock/fcntl lock request */
	FK_RET,         /* sys_exit: " SYS = RET"; slot nr, slot+1 ret */
	FK_UID,         /* mark: slot uid, slot+1 has_uid: "uid=?" unknown */
	FK_SYNC,        /* mutex_*: the interposer's lock, by its kind */
	FK_WORK_KIND,   /* enum aip_work_kind as a name */
	FK_WORK_FN,     /* a work item's callback, symbolized */
	FK_LIVE_KIND,   /* live_hit: what the instrumented function is */
	FK_HW_VALUE,    /* hwwatch: slot value, "?" unless VALUE_OK */
};

struct field {
	const char *tkey;       /* text name */
	const char *jkey;       /* JSON name (unique in the object) */
	uint8_t slot;           /* first f[] slot */
	uint8_t kind;           /* enum field_kind */
};

#define MAXF 8
#define F(t, j, s, k) { t, j, s, k }

/* The one table of the fields each event type shows. */

/* field groups several types share (an hrtimer's identity, a work item,
 * a kernel work item) */
#define F_HRTIMER                                                   \
	F("timer", "timer", ARGUS_F_HT_TIMER, FK_HEX),              \
	F("fn", "fn", ARGUS_F_HT_FUNCTION, FK_HEX),                 \
	F("owner", "owner", ARGUS_F_HT_OWNER_TID, FK_DEC)
#define F_WORK_ITEM                                                 \
	F("item", "item", ARGUS_F_WI_ITEM, FK_HEX),                 \
	F("kind", "kind", ARGUS_F_WI_KIND, FK_WORK_KIND),           \
	F("fn", "fn", ARGUS_F_WI_FN, FK_WORK_FN)
#define F_WORKQUEUE                                                 \
	F("work", "work", ARGUS_F_WQ_WORK, FK_HEX),                 \
	F("fn", "fn", ARGUS_F_WQ_FUNCTION, FK_HEX)

static const struct field fields[AE_TYPE_MAX][MAXF] = {
	[AE_SWITCH] = {
		F("prev_state", "prev_state", ARGUS_F_SW_PREV_STATE, FK_HEX),
		F("next", "next", ARGUS_F_SW_NEXT_TID, FK_TASK),
		F("blocked_in", "blocked", ARGUS_F_SW_SYS_NR, FK_BLOCKED),
		F("obj", "obj", ARGUS_F_SW_OBJ_KIND, FK_OBJ),
	},
	[AE_WAKING] = {
		F("target", "target", ARGUS_F_WK_TARGET_TID, FK_TASK),
		F("target_cpu", "target_cpu", ARGUS_F_WK_TARGET_CPU, FK_DEC),
		F("vec", "vec", ARGUS_F_WK_VECTOR, FK_VEC),
		F("timer", "timer", ARGUS_F_WK_HRTIMER, FK_HEX_NZ),
	},
	[AE_WAKEUP_NEW] = {
		F("child", "child", ARGUS_F_TK_CHILD_TID, FK_TIDPID),
		F("comm", "child_comm", 0, FK_STR),
	},
	[AE_FORK] = {
		F("child", "child", ARGUS_F_TK_CHILD_TID, FK_TIDPID),
		F("comm", "child_comm", 0, FK_STR),
	},
	[AE_FREE] = {
		F("child", "child", ARGUS_F_TK_CHILD_TID, FK_TIDPID),
		F("comm", "child_comm", 0, FK_STR),
	},
	[AE_EXEC] = {
		F("old_tid", "old_tid", ARGUS_F_EX_OLD_TID, FK_DEC),
		F("comm", "new_comm", 0, FK_STR),
		F("file", "file", 0, FK_STR2),
	},
	[AE_EXIT] = { F("code", "code", ARGUS_F_EXIT_CODE, FK_INT) },
	[AE_RENAME] = { F("", "new_comm", 0, FK_QUOTED) },
	[AE_MARK] = {
		F("", "mark", 0, FK_QUOTED),
		F("uid", "uid", ARGUS_F_MARK_UID, FK_UID),
	},
	[AE_SYS_ENTER] = {
		F("", "sys", ARGUS_F_SE_NR, FK_CALL),
		F("lock", "lock", ARGUS_F_SE_NR, FK_LOCK),
	},
	[AE_SYS_EXIT] = {
		F("", "sys", ARGUS_F_SX_NR, FK_RET),
		F("arg0", "arg0", ARGUS_F_SX_ARG0, FK_DEC),
		F("obj", "obj", ARGUS_F_SX_OBJ_KIND, FK_OBJ),
	},
	[AE_HRT_START] = {
		F_HRTIMER,
		F("expires", "expires", ARGUS_F_HT_EXPIRES, FK_DEC),
		F("mode", "mode", ARGUS_F_HT_MODE, FK_DEC),
	},
	[AE_HRT_EXPIRE] = {
		F_HRTIMER,
	},
	[AE_HRT_CANCEL] = {
		F_HRTIMER,
	},
	[AE_IRQ_ENTRY] = { F("vec", "vec", ARGUS_F_IRQ_VECTOR, FK_DEC) },
	[AE_IRQ_EXIT] = { F("vec", "vec", ARGUS_F_IRQ_VECTOR, FK_DEC) },
	[AE_SOFTIRQ_ENTRY] = { F("vec", "vec", ARGUS_F_IRQ_VECTOR, FK_DEC) },
	[AE_SOFTIRQ_EXIT] = { F("vec", "vec", ARGUS_F_IRQ_VECTOR, FK_DEC) },
	[AE_WQ_START] = {
		F_WORKQUEUE,
	},
	[AE_WQ_END] = {
		F_WORKQUEUE,
	},
	[AE_LOST] = { F("count", "count", ARGUS_F_LOST_COUNT, FK_DEC) },
	[AE_MUTEX_WAIT] = { F("", "", 0, FK_SYNC) },
	[AE_MUTEX_ACQUIRED] = { F("", "", 0, FK_SYNC) },
	[AE_MUTEX_WAKE] = { F("", "", 0, FK_SYNC) },
	[AE_WORK_ENQUEUE] = {
		F_WORK_ITEM,
	},
	[AE_WORK_BEGIN] = {
		F_WORK_ITEM,
	},
	[AE_WORK_END] = {
		F_WORK_ITEM,
	},
	[AE_WORK_BOUNDARY] = { F("tag", "tag", ARGUS_F_WI_ITEM, FK_HEX) },
	[AE_LIVE_HIT] = {
		F("fn", "fn", ARGUS_F_LIVE_FUNC, FK_HEX),
		F("item", "item", ARGUS_F_LIVE_ITEM, FK_HEX),
		F("as", "as", ARGUS_F_LIVE_KIND, FK_LIVE_KIND),
	},
	[AE_HWWATCH] = {
		F("addr", "addr", ARGUS_F_HW_ADDR, FK_HEX),
		F("len", "len", ARGUS_F_HW_LEN, FK_DEC),
		F("value", "value", ARGUS_F_HW_VALUE, FK_HW_VALUE),
		F("ip", "ip", ARGUS_F_HW_IP, FK_HEX),
		F("watch", "watch", ARGUS_F_HW_ID, FK_DEC),
		F("reader", "reader", ARGUS_F_HW_READER, FK_DEC_NZ),
	},
};

/* ---- field helpers ---- */

const char *argus_event_fmt_type(unsigned type)
{
	const char *n = type <= UINT16_MAX ? argus_event_type_str((uint16_t)type) : NULL;

	return n ? n : "unknown";
}

const char *argus_event_fmt_ctx(unsigned ctx)
{
	static const char *const n[] = {
		[AE_CTX_TASK] = "task", [AE_CTX_SOFTIRQ] = "softirq",
		[AE_CTX_HARDIRQ] = "hardirq", [AE_CTX_NMI] = "nmi",
	};
	return ctx < sizeof(n) / sizeof(n[0]) ? n[ctx] : "?";
}

const char *argus_event_fmt_sys(long nr, char *buf, size_t len)
{
	const char *n = nr >= 0 ? argus_syscall_name(nr) : NULL;

	if (n)
		return n;
	if (nr < 0)
		return "-";
	snprintf(buf, len, "sys_%ld", nr);
	return buf;
}

/* an ip:port of tcp/udp: the BPF side packs the IPv4 address in host
 * order (ntohl) above the 16-bit port, so the first octet is bits 40..47 */
static int ip_port(char *buf, size_t len, uint64_t v)
{
	return snprintf(buf, len, "%u.%u.%u.%u:%u", (unsigned)(v >> 40) & 255,
			(unsigned)(v >> 32) & 255, (unsigned)(v >> 24) & 255,
			(unsigned)(v >> 16) & 255, (unsigned)(v & 0xffff));
}

const char *argus_event_fmt_obj(uint64_t kind, uint64_t obj, uint64_t peer, char *buf,
				size_t len)
{
	int n;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!kind)
		return buf;
	n = snprintf(buf, len, "%s:", argus_obj_kind_str(kind));
	if (n < 0 || (size_t)n >= len)
		return buf;
	if (kind == AE_OBJ_TCP || kind == AE_OBJ_UDP) {
		n += ip_port(buf + n, len - (size_t)n, obj);
		if (n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, "->");
		n += 2;
		if ((size_t)n < len)
			ip_port(buf + n, len - (size_t)n, peer);
	} else if (peer) {
		snprintf(buf + n, len - (size_t)n, "%#" PRIx64 "->%#" PRIx64, obj, peer);
	} else {
		snprintf(buf + n, len - (size_t)n, "%#" PRIx64, obj);
	}
	return buf;
}

void argus_event_fmt_json_obj(FILE *f, uint64_t kind, uint64_t obj, uint64_t peer)
{
	char b[96];

	if (!kind) {
		fputs("null", f);
		return;
	}
	fputs("{\"kind\":", f);
	argus_json_write_str(f, argus_obj_kind_str(kind));
	fprintf(f, ",\"obj\":%" PRIu64 ",\"peer\":%" PRIu64 ",\"text\":", obj, peer);
	argus_json_write_str(f, argus_event_fmt_obj(kind, obj, peer, b, sizeof(b)));
	fputc('}', f);
}

/* ---- the two outputs ---- */

struct out {
	FILE *f;
	bool json;
	const struct argus_event_fmt *o;
	const struct argus_event *e;
};

/* s escaped for a terminal into buf; cut with "..." when it does not fit */
static const char *tstr(const char *s, char *buf, size_t len)
{
	size_t n = argus_text_escape(s, buf, len);

	if (n >= len) {
		size_t l = strlen(buf);

		strcpy(buf + l - (l > 3 ? 3 : l), "...");
	}
	return buf;
}

static const char *comm_raw(const struct argus_event_fmt *o, uint32_t tid)
{
	const struct argus_task *k = o->trace && tid ? argus_trace__task(o->trace, tid) : NULL;

	if (k)
		return argus_trace__string(o->trace, k->comm);
	if (!o->trace && o->comm && tid)
		return o->comm(o->arg, tid);
	return tid ? NULL : "swapper";
}

/* the event's string (which: 1 str, 2 str2), raw; "" when none */
static const char *str_raw(const struct out *x, int which)
{
	uint32_t id = which == 1 ? x->e->str : x->e->str2;
	const char *s;

	if (!x->o->trace)
		s = which == 1 ? x->o->str : x->o->str2;
	else
		s = id ? argus_trace__string(x->o->trace, id) : NULL;
	return s ? s : "";
}

static void put_key(struct out *x, const char *key, const char *suffix)
{
	fprintf(x->f, ",\"%s%s\":", key, suffix);
}

static void put_u(struct out *x, const char *tkey, const char *jkey, uint64_t v)
{
	if (x->json) {
		put_key(x, jkey, "");
		fprintf(x->f, "%" PRIu64, v);
	} else {
		fprintf(x->f, " %s=%" PRIu64, tkey, v);
	}
}

static void put_i(struct out *x, const char *tkey, const char *jkey, int64_t v)
{
	if (x->json) {
		put_key(x, jkey, "");
		fprintf(x->f, "%" PRId64, v);
	} else {
		fprintf(x->f, " %s=%" PRId64, tkey, v);
	}
}

static void put_x(struct out *x, const char *tkey, const char *jkey, uint64_t v)
{
	if (x->json) {
		put_key(x, jkey, "");
		fprintf(x->f, "%" PRIu64, v);
	} else {
		fprintf(x->f, " %s=%#" PRIx64, tkey, v);
	}
}

/* a name-like string: text KEY=escaped, JSON the exact string */
static void put_s(struct out *x, const char *tkey, const char *jkey, const char *s)
{
	char b[16384];   /* as msg_tstr: long marks and paths whole */

	if (x->json) {
		put_key(x, jkey, "");
		argus_json_write_str(x->f, s);
	} else {
		fprintf(x->f, " %s=%s", tkey, tstr(s, b, sizeof(b)));
	}
}

static void put_task(struct out *x, const struct field *fd, bool with_comm)
{
	uint64_t tid = x->e->f[fd->slot], pid = x->e->f[fd->slot + 1];
	const char *c = with_comm ? comm_raw(x->o, (uint32_t)tid) : NULL;
	char b[512];

	if (x->json) {
		if (with_comm) {
			put_key(x, fd->jkey, "_comm");
			if (c)
				argus_json_write_str(x->f, c);
			else
				fputs("null", x->f);
		}
		put_key(x, fd->jkey, "_tid");
		fprintf(x->f, "%" PRIu64, tid);
		put_key(x, fd->jkey, "_pid");
		fprintf(x->f, "%" PRIu64, pid);
		return;
	}
	fprintf(x->f, " %s=", fd->tkey);
	if (with_comm)
		fprintf(x->f, "%s:", c ? tstr(c, b, sizeof(b)) : "?");
	fprintf(x->f, "%" PRIu64 "/%" PRIu64, tid, pid);
}

static void put_obj(struct out *x, const struct field *fd)
{
	const uint64_t *f = &x->e->f[fd->slot];
	char b[96];

	if (!f[0])
		return;
	if (x->json) {
		put_key(x, fd->jkey, "");
		argus_event_fmt_json_obj(x->f, f[0], f[1], f[2]);
	} else {
		fprintf(x->f, " %s=%s", fd->tkey, argus_event_fmt_obj(f[0], f[1], f[2], b, sizeof(b)));
	}
}

/* a switch-out in a syscall: only a blocking one (prev_state != 0) */
static void put_blocked(struct out *x, const struct field *fd)
{
	const uint64_t *f = x->e->f;
	int64_t nr = (int64_t)f[fd->slot];
	char b[24];

	if (nr < 0 || !f[ARGUS_F_SW_PREV_STATE])
		return;
	if (x->json) {
		put_key(x, fd->jkey, "_in");
		argus_json_write_str(x->f, argus_event_fmt_sys(nr, b, sizeof(b)));
		put_key(x, fd->jkey, "_nr");
		fprintf(x->f, "%" PRId64, nr);
		put_key(x, fd->jkey, "_arg");
		fprintf(x->f, "%" PRIu64, f[fd->slot + 1]);
	} else {
		fprintf(x->f, " %s %s(%#" PRIx64 ")", fd->tkey, argus_event_fmt_sys(nr, b, sizeof(b)),
			f[fd->slot + 1]);
	}
}

/* AE_VEC_NONE: a wakeup from task context, no vector shown */
static void put_vec(struct out *x, const struct field *fd)
{
	uint64_t v = x->e->f[fd->slot];
	char b[32];

	if (v == AE_VEC_NONE)
		return;
	if (v == AE_VEC_HRTIMER)
		snprintf(b, sizeof(b), "hrtimer");
	else if ((v & ~0xffull) == AE_VEC_APIC)
		snprintf(b, sizeof(b), "apic:%#" PRIx64, v & 0xff);
	else
		snprintf(b, sizeof(b), "%" PRIu64, v);
	put_s(x, fd->tkey, fd->jkey, b);
}

static void put_call(struct out *x, const struct field *fd)
{
	const uint64_t *f = x->e->f;
	char b[24];
	const char *sys = argus_event_fmt_sys((long)(int64_t)f[fd->slot], b, sizeof(b));

	if (x->json) {
		put_key(x, fd->jkey, "");
		argus_json_write_str(x->f, sys);
		fprintf(x->f, ",\"nr\":%" PRId64 ",\"args\":[", (int64_t)f[fd->slot]);
		for (int i = 1; i <= 6 && fd->slot + i < ARGUS_NFIELDS; i++)
			fprintf(x->f, "%s%" PRIu64, i > 1 ? "," : "", f[fd->slot + i]);
		fputc(']', x->f);
		return;
	}
	fprintf(x->f, " %s(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ")", sys,
		f[fd->slot + 1], f[fd->slot + 2], f[fd->slot + 3], f[fd->slot + 4]);
}

/* The lock request of a flock/fcntl entry (the raw args of fcntl's lock
 * cmds hold the tagged struct flock copy, argus_events.h):
 * " lock=KIND:OP:wait|try range=START+LEN|START+eof"; OP "?" when the
 * struct flock could not be read. */
static void put_lock(struct out *x, const struct field *fd)
{
	struct argus_lock_req r;
	const char *op;

	if (argus_lock__decode((int64_t)x->e->f[fd->slot], &x->e->f[fd->slot + 1], &r))
		return;
	op = argus_lock_op_str(r.op);
	if (x->json) {
		put_key(x, fd->jkey, "");
		fputs("{\"kind\":", x->f);
		argus_json_write_str(x->f, argus_lock_kind_str(r.kind));
		fputs(",\"op\":", x->f);
		argus_json_write_str(x->f, op ? op : "?");
		fprintf(x->f, ",\"wait\":%s", r.wait ? "true" : "false");
		if (r.kind != ARGUS_LOCK_FLOCK) {
			fprintf(x->f, ",\"start\":%" PRIu64 ",\"len\":", r.start);
			if (r.len == ARGUS_LOCK_EOF)
				fputs("null", x->f);
			else
				fprintf(x->f, "%" PRIu64, r.len);
		}
		fputc('}', x->f);
		return;
	}
	fprintf(x->f, " %s=%s:%s:%s", fd->tkey, argus_lock_kind_str(r.kind), op ? op : "?",
		r.wait ? "wait" : "try");
	if (r.kind == ARGUS_LOCK_FLOCK)
		return;
	if (r.len == ARGUS_LOCK_EOF)
		fprintf(x->f, " range=%#" PRIx64 "+eof", r.start);
	else
		fprintf(x->f, " range=%#" PRIx64 "+%" PRIu64, r.start, r.len);
}

static void put_ret(struct out *x, const struct field *fd)
{
	const uint64_t *f = x->e->f;
	char b[24];
	const char *sys = argus_event_fmt_sys((long)(int64_t)f[fd->slot], b, sizeof(b));

	if (x->json) {
		put_key(x, fd->jkey, "");
		argus_json_write_str(x->f, sys);
		fprintf(x->f, ",\"nr\":%" PRId64 ",\"ret\":%" PRId64, (int64_t)f[fd->slot],
			(int64_t)f[fd->slot + 1]);
	} else {
		fprintf(x->f, " %s = %" PRId64, sys, (int64_t)f[fd->slot + 1]);
	}
}

/* who marked: pid/tid are the sender's; the uid is absent in traces of
 * older collectors ("uid=?" / null, not root) */
static void put_uid(struct out *x, const struct field *fd)
{
	const uint64_t *f = &x->e->f[fd->slot];

	if (f[1])
		put_u(x, fd->tkey, fd->jkey, f[0]);
	else if (x->json)
		fprintf(x->f, ",\"%s\":null", fd->jkey);
	else
		fprintf(x->f, " %s=?", fd->tkey);
}

/* An interposer record of a mutex, rwlock, semaphore or condvar (AE_MUTEX_*
 * with a kind; docs/trace-format.md). */
static void put_sync(struct out *x)
{
	static const char *const obj[AE_SYNC_KIND_MAX] = {
		[AE_SYNC_MUTEX] = "mutex", [AE_SYNC_RDLOCK] = "rwlock",
		[AE_SYNC_WRLOCK] = "rwlock", [AE_SYNC_SEM] = "sem", [AE_SYNC_COND] = "cond",
	};
	const uint64_t *f = x->e->f;
	uint16_t type = x->e->type;
	uint64_t kind = f[ARGUS_F_MX_KIND];

	if (kind >= AE_SYNC_KIND_MAX || !obj[kind]) {
		put_u(x, "kind", "sync_kind", kind);
		put_x(x, "addr", "addr", f[ARGUS_F_MX_ADDR]);
		return;
	}
	put_x(x, obj[kind], obj[kind], f[ARGUS_F_MX_ADDR]);
	if (kind == AE_SYNC_MUTEX) {
		if (type == AE_MUTEX_WAIT)
			put_u(x, "holder", "holder", f[ARGUS_F_MX_OTHER]);
		else if (type == AE_MUTEX_ACQUIRED)
			put_u(x, "err", "err", f[ARGUS_F_MX_OTHER]);
		return;
	}
	if (kind == AE_SYNC_RDLOCK || kind == AE_SYNC_WRLOCK)
		put_s(x, "mode", "mode", kind == AE_SYNC_RDLOCK ? "read" : "write");
	if (kind == AE_SYNC_COND && type != AE_MUTEX_WAKE)
		put_x(x, "mutex", "mutex", f[ARGUS_F_MX_ARG]);
	if (type == AE_MUTEX_WAIT && kind != AE_SYNC_SEM && kind != AE_SYNC_COND) {
		put_u(x, "holder", "holder", f[ARGUS_F_MX_OTHER]);
		put_u(x, "readers", "readers", f[ARGUS_F_MX_ARG]);
	} else if (type == AE_MUTEX_ACQUIRED) {
		put_u(x, "err", "err", f[ARGUS_F_MX_OTHER]);
	} else if (type == AE_MUTEX_WAKE && (kind == AE_SYNC_SEM || kind == AE_SYNC_COND)) {
		bool bc = kind == AE_SYNC_COND && f[ARGUS_F_MX_ARG];

		put_u(x, "waiters", "waiters", f[ARGUS_F_MX_OTHER]);
		if (x->json)
			fprintf(x->f, ",\"broadcast\":%s", bc ? "true" : "false");
		else if (bc)
			fputs(" broadcast", x->f);
	}
}

/* A work item's callback, symbolized from the process's mappings:
 * text " fn=0xADDR SYMBOL" (" fn=?" unknown), JSON "fn" and "fn_sym". */
static void put_work_fn(struct out *x, const struct field *fd)
{
	uint64_t fn = x->e->f[fd->slot];
	char sym[512], b[4096];  /* escaping can quadruple a symbol */
	bool found = fn && x->o->symbolize &&
		     !x->o->symbolize(x->o->arg, x->e->pid, x->e->ts, fn, sym, sizeof(sym));

	if (x->json) {
		put_key(x, fd->jkey, "");
		if (fn)
			fprintf(x->f, "%" PRIu64, fn);
		else
			fputs("null", x->f);
		put_key(x, fd->jkey, "_sym");
		if (found)
			argus_json_write_str(x->f, sym);
		else
			fputs("null", x->f);
		return;
	}
	if (!fn)
		fprintf(x->f, " %s=?", fd->tkey);
	else if (found)
		fprintf(x->f, " %s=%#" PRIx64 " %s", fd->tkey, fn, tstr(sym, b, sizeof(b)));
	else
		fprintf(x->f, " %s=%#" PRIx64, fd->tkey, fn);
}

static void put_field(struct out *x, const struct field *fd)
{
	static const char *const live[] = { "?", "boundary", "enqueue", "begin", "end" };
	const uint64_t v = x->e->f[fd->slot];

	switch (fd->kind) {
	case FK_DEC: put_u(x, fd->tkey, fd->jkey, v); break;
	case FK_INT: put_i(x, fd->tkey, fd->jkey, (int64_t)v); break;
	case FK_HEX: put_x(x, fd->tkey, fd->jkey, v); break;
	case FK_HEX_NZ: if (v) put_x(x, fd->tkey, fd->jkey, v); break;
	case FK_DEC_NZ: if (v) put_u(x, fd->tkey, fd->jkey, v); break;
	case FK_TASK: put_task(x, fd, true); break;
	case FK_TIDPID: put_task(x, fd, false); break;
	case FK_STR: put_s(x, fd->tkey, fd->jkey, str_raw(x, 1)); break;
	case FK_STR2: put_s(x, fd->tkey, fd->jkey, str_raw(x, 2)); break;
	case FK_QUOTED:
		if (x->json) {
			put_s(x, fd->tkey, fd->jkey, str_raw(x, 1));
		} else {
			char b[16384];   /* as msg_tstr: long marks and paths whole */

			fprintf(x->f, " \"%s\"", tstr(str_raw(x, 1), b, sizeof(b)));
		}
		break;
	case FK_BLOCKED: put_blocked(x, fd); break;
	case FK_OBJ: put_obj(x, fd); break;
	case FK_VEC: put_vec(x, fd); break;
	case FK_CALL: put_call(x, fd); break;
	case FK_LOCK: put_lock(x, fd); break;
	case FK_RET: put_ret(x, fd); break;
	case FK_UID: put_uid(x, fd); break;
	case FK_SYNC: put_sync(x); break;
	case FK_WORK_KIND: put_s(x, fd->tkey, fd->jkey, argus_work_kind_str((unsigned)v)); break;
	case FK_WORK_FN: put_work_fn(x, fd); break;
	case FK_LIVE_KIND: put_s(x, fd->tkey, fd->jkey, live[v < 5 ? v : 0]); break;
	case FK_HW_VALUE:
		if (x->e->f[ARGUS_F_HW_VALUE_OK])
			put_x(x, fd->tkey, fd->jkey, v);
		else if (x->json)
			fprintf(x->f, ",\"%s\":null", fd->jkey);
		else
			fprintf(x->f, " %s=?", fd->tkey);
		break;
	}
}

static void put_fields(struct out *x)
{
	const struct field *fd;

	if (x->e->type >= AE_TYPE_MAX)
		return;
	for (fd = fields[x->e->type]; fd < fields[x->e->type] + MAXF && fd->kind; fd++)
		put_field(x, fd);
}

/* The event's user stack, each frame symbolized when the caller can. */
static void put_stack(struct out *x)
{
	const struct argus_event *e = x->e;
	const uint64_t *ips = NULL;
	uint32_t nr = 0;
	char sym[512], b[4096];  /* escaping can quadruple a symbol */

	if (e->stack && x->o->trace && argus_trace__stack(x->o->trace, e->stack, &ips, &nr))
		nr = 0;
	if (x->json)
		fputs(",\"stack\":[", x->f);
	for (uint32_t i = 0; i < nr; i++) {
		bool found = x->o->symbolize &&
			     !x->o->symbolize(x->o->arg, e->pid, e->ts, ips[i], sym, sizeof(sym));

		if (x->json) {
			fprintf(x->f, "%s{\"ip\":%" PRIu64 ",\"sym\":", i ? "," : "", ips[i]);
			if (found)
				argus_json_write_str(x->f, sym);
			else
				fputs("null", x->f);
			fputc('}', x->f);
		} else {
			fprintf(x->f, "\t%16" PRIx64 " %s\n", ips[i],
				found ? tstr(sym, b, sizeof(b)) : "[unknown]");
		}
	}
	if (x->json)
		fputc(']', x->f);
}

int argus_event__write_text(FILE *f, const struct argus_event_fmt *o, const struct argus_event *e)
{
	struct out x = { .f = f, .json = false, .o = o, .e = e };
	const char *c = comm_raw(o, e->tid);
	char b[512];

	fprintf(f, "%16s %7u/%-7u [%03u] %5" PRIu64 ".%09" PRIu64 ": %-14s",
		c ? tstr(c, b, sizeof(b)) : "?", e->tid, e->pid, e->cpu, e->ts / 1000000000,
		e->ts % 1000000000, argus_event_fmt_type(e->type));
	if (e->ctx)
		fprintf(f, " ctx=%s", argus_event_fmt_ctx(e->ctx));
	put_fields(&x);
	fputc('\n', f);
	if (o->stacks)
		put_stack(&x);
	return ferror(f) ? -EIO : 0;
}

int argus_event__write_json(FILE *f, const struct argus_event_fmt *o, const struct argus_event *e)
{
	struct out x = { .f = f, .json = true, .o = o, .e = e };
	const char *c = comm_raw(o, e->tid);

	fprintf(f, "{\"ts\":%" PRIu64 ",\"comm\":", e->ts);
	if (c)
		argus_json_write_str(f, c);
	else
		fputs("null", f);
	fprintf(f, ",\"tid\":%u,\"pid\":%u,\"cpu\":%u,\"type\":", e->tid, e->pid, e->cpu);
	argus_json_write_str(f, argus_event_fmt_type(e->type));
	fprintf(f, ",\"type_nr\":%u,\"ctx\":", e->type);
	argus_json_write_str(f, argus_event_fmt_ctx(e->ctx));
	put_fields(&x);
	if (!argus_event_type_str(e->type)) {
		/* a type this build does not know: its raw fields */
		fputs(",\"fields\":[", f);
		for (int i = 0; i < ARGUS_NFIELDS; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "", e->f[i]);
		fputc(']', f);
	}
	if (o->stacks && e->stack)     /* no "stack" key: the event has none */
		put_stack(&x);
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
