/* hang_watch_replay.c - a recorded event handed to argusd's live hang
 * watch as the raw BPF record it was made from (hang_watch.h).
 *
 * The collector turns each raw record into a struct argus_event field by
 * field (collector.c, one case per type); this is that mapping inverted,
 * for the types the watch reads.  So `argus hangs FILE --live-rule` and the
 * tests can run the very rule argusd runs over a recording, and compare it
 * with the offline finder on the same events.
 */
#include <string.h>

#include "argus_events.h"
#include "hang_watch.h"
#include "trace_format.h"

static void hdr(struct ae_hdr *h, const struct argus_event *ev, uint16_t size)
{
	h->ts = ev->ts;
	h->tid = ev->tid;
	h->pid = ev->pid;
	h->type = ev->type;
	h->size = size;
	h->cpu = ev->cpu;
	h->ctx = ev->ctx;
}

static void comm_of(char dst[AE_COMM_LEN], const struct argus_trace *t, uint32_t id)
{
	const char *s = id ? argus_trace__string(t, id) : NULL;

	memset(dst, 0, AE_COMM_LEN);
	if (s)
		strncpy(dst, s, AE_COMM_LEN - 1);
}

void argus_hang_watch__event(struct argus_hang_watch *w, const struct argus_trace *t,
			     const struct argus_event *ev)
{
	union {
		struct ae_switch sw;
		struct ae_sys_enter se;
		struct ae_sys_exit sx;
		struct ae_exec ex;
		struct ae_task tk;
		struct ae_exit et;
		struct ae_rename rn;
	} r;

	memset(&r, 0, sizeof(r));
	switch (ev->type) {
	case AE_SWITCH:
		hdr(&r.sw.h, ev, sizeof(r.sw));
		r.sw.next_tid = (uint32_t)ev->f[ARGUS_F_SW_NEXT_TID];
		r.sw.next_pid = (uint32_t)ev->f[ARGUS_F_SW_NEXT_PID];
		r.sw.prev_state = (int64_t)ev->f[ARGUS_F_SW_PREV_STATE];
		r.sw.sys_nr = (int32_t)(int64_t)ev->f[ARGUS_F_SW_SYS_NR];
		r.sw.sys_arg = ev->f[ARGUS_F_SW_SYS_ARG];
		r.sw.obj.kind = (uint32_t)ev->f[ARGUS_F_SW_OBJ_KIND];
		r.sw.obj.obj = ev->f[ARGUS_F_SW_OBJ];
		r.sw.obj.peer = ev->f[ARGUS_F_SW_PEER];
		comm_of(r.sw.next_comm, t, ev->str);
		break;
	case AE_SYS_ENTER:
		hdr(&r.se.h, ev, sizeof(r.se));
		r.se.nr = (int64_t)ev->f[ARGUS_F_SE_NR];
		for (int i = 0; i < 6; i++)
			r.se.args[i] = ev->f[ARGUS_F_SE_ARG0 + i];
		break;
	case AE_SYS_EXIT:
		hdr(&r.sx.h, ev, sizeof(r.sx));
		r.sx.nr = (int64_t)ev->f[ARGUS_F_SX_NR];
		r.sx.ret = (int64_t)ev->f[ARGUS_F_SX_RET];
		r.sx.arg0 = ev->f[ARGUS_F_SX_ARG0];
		r.sx.obj.kind = (uint32_t)ev->f[ARGUS_F_SX_OBJ_KIND];
		r.sx.obj.obj = ev->f[ARGUS_F_SX_OBJ];
		r.sx.obj.peer = ev->f[ARGUS_F_SX_PEER];
		break;
	case AE_EXEC:
		hdr(&r.ex.h, ev, sizeof(r.ex));
		r.ex.old_tid = (uint32_t)ev->f[ARGUS_F_EX_OLD_TID];
		comm_of(r.ex.comm, t, ev->str);
		break;
	case AE_FORK:
	case AE_FREE:
	case AE_WAKEUP_NEW:
		hdr(&r.tk.h, ev, sizeof(r.tk));
		r.tk.child_tid = (uint32_t)ev->f[ARGUS_F_TK_CHILD_TID];
		r.tk.child_pid = (uint32_t)ev->f[ARGUS_F_TK_CHILD_PID];
		r.tk.clone_flags = ev->f[ARGUS_F_TK_CLONE_FLAGS];
		comm_of(r.tk.comm, t, ev->str);
		break;
	case AE_EXIT:
		hdr(&r.et.h, ev, sizeof(r.et));
		r.et.exit_code = (int32_t)(int64_t)ev->f[ARGUS_F_EXIT_CODE];
		r.et.group_dead = (uint32_t)ev->f[ARGUS_F_EXIT_GROUP_DEAD];
		break;
	case AE_RENAME:
		hdr(&r.rn.h, ev, sizeof(r.rn));
		comm_of(r.rn.comm, t, ev->str);
		break;
	default:
		return; /* the watch reads no other type */
	}
	argus_hang_watch__record(w, &r, r.sw.h.size);
}
