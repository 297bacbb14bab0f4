/* hang_watch.c - see hang_watch.h for the live rule.
 *
 * Data: watched threads live in an open-addressing table keyed by tid
 * (linear probing, deleted by backward shift, so no tombstones), sized to
 * stay at most half full.  In front of it a 64 Ki-bit filter has the bit
 * (tid & 0xffff) set for every watched tid: most records name no watched
 * thread and cost one bit test.  A bit is cleared only when the table is
 * rebuilt, so a stale bit costs a lookup, never a miss.
 *
 * Per thread: its state (running / blocked in a wait, and which wait),
 * when it last came back, whether it wrote to a pipe or socket since its
 * segment began, and its hang if one is open (reported as BEGAN, not yet
 * ended).  Ended hangs wait in a queue until check() reports them, so a
 * thread that exits mid-hang can be forgotten at once.
 */
#include "hang_watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "argus_events.h"
#include "hang_rule.h"

#define FILTER_BITS 65536u
/* prev_state bit of a task in a ptrace stop (a debugger); 0x4 is a job
 * control stop (SIGSTOP) */
#define STATE_TRACED 0x8
/* sleeps and yields since it came back before a hang reads as a yield loop */
#define YIELD_LOOP_MIN 4

enum tstate { T_RUNNING = 0, T_BLOCKED = 1 };

struct wthread {
	uint32_t tid;          /* 0 = empty slot */
	uint32_t pid;
	uint32_t uid;          /* real uid when found or named */
	char comm[16];
	unsigned why;          /* ARGUS_WATCH_* */
	uint8_t state;         /* enum tstate */
	uint8_t round;         /* HANG_TRY_* since the last sleep (hang_rule.h) */
	uint8_t idle_rounds;   /* sleeps after a round that worked (to 2) */
	bool loop;             /* has had an idle wait: a loop thread */
	bool polls;            /* has made a poll-family call */
	bool poll_loop;        /* has had a poll-family idle wait: an event loop */
	bool bye;              /* has entered exit_group/exit */
	bool restarted;        /* its last syscall exit was -ERESTART*: the
	                          next syscall says whether the call goes on */
	int32_t restart_nr;    /* that call, */
	uint64_t restart_ts;   /* and that exit */
	bool poll_many;        /* its last poll/ppoll entry watched 2+ fds */
	bool wait_idle;        /* blocked: an idle wait, a debugger's stop or a
	                          wait for a child (at rest) */
	bool wait_sleep;       /* blocked: nanosleep/clock_nanosleep */
	bool wait_request;     /* blocked: a poll-family wait with a request out */
	bool call_away;        /* the call under way blocked in a wait that is
	                          not idle: its return is no visit of the loop */
	bool out;              /* an output on a connection since the last idle wait */
	bool req_pending;      /* a request wait not yet told a reply wait (the
	                          first connection op after it reads the
	                          connection written last) or an idle one */
	bool in_hang;          /* hang reported (BEGAN), not ended */
	bool polled;           /* the call under way blocked in a poll-family wait */
	bool poll_to;          /* its last blocking poll-family wait timed out */
	bool chain_out;        /* a request was outstanding when the chain of
	                          poll retries began (hang_rule_poll_continues) */
	bool chain_req;        /* in a chain of poll retries judged a reply wait */
	uint8_t poll_tries;    /* HANG_TRY_* since that poll returned */
	uint64_t chain_start;  /* when the chain's first poll was entered */
	/* what the stretch since back_ts did, as the offline model sums it
	 * up for a hang's kind (diag_hangs.c, activity): */
	uint64_t st_asleep;    /* ns in waits that ended */
	uint64_t st_longest;   /* the longest of them, ns */
	int32_t st_longest_nr; /* and its syscall */
	uint32_t st_short;     /* waits under 2 ms, and yields */
	uint32_t st_timed;     /* sleeps of 2 ms or more */
	uint32_t st_sleeps;    /* sleeps */
	uint64_t blocked_at;   /* blocked: when this very wait began */
	uint32_t out_kind;     /* the connection written last */
	uint64_t out_key;
	int32_t wait_nr;       /* blocked: the syscall, -1 = none */
	uint32_t nshort;       /* sleeps and yields since it came back */
	uint64_t wait_start;   /* blocked: ts of the blocking switch-out (of
	                          the first try, for a timed wait retried) */
	uint64_t wait_arg;     /* blocked: its key arg (a futex's address) */
	uint64_t timed_arg;    /* the futex whose timed wait just timed out, */
	uint64_t timed_from;   /* and when that wait's first try began (0 none) */
	uint64_t back_ts;      /* when it last came back */
	uint64_t named_ts;     /* the newest naming record applied (fork, exec,
	                          rename): one older than it is stale, see named() */
	struct argus_live_hang hang; /* valid while in_hang */
};

struct argus_hang_watch {
	uint64_t threshold_ns;
	struct wthread *slots;
	uint32_t cap;          /* power of 2 */
	uint32_t used;
	uint8_t filter[FILTER_BITS / 8];
	char (*comms)[16];     /* --watch COMM names, truncated to 15 */
	size_t ncomms;
	bool (*comm_ok)(void *ctx, uint32_t pid, uint32_t *uid); /* NULL: anyone */
	void *comm_ok_ctx;
	struct argus_live_hang *ended; /* ended, not yet reported */
	size_t nended, capended;
	uint64_t next_id;
	uint64_t seen;
};

/* ---- the table ---- */

static inline uint32_t hash_tid(uint32_t tid)
{
	return tid * 2654435761u;
}

static inline bool filter_has(const struct argus_hang_watch *w, uint32_t tid)
{
	uint32_t b = tid & (FILTER_BITS - 1);
	return w->filter[b >> 3] & (1u << (b & 7));
}

static struct wthread *find(const struct argus_hang_watch *w, uint32_t tid)
{
	uint32_t mask = w->cap - 1;

	if (!tid)
		return NULL;
	for (uint32_t i = hash_tid(tid) & mask;; i = (i + 1) & mask) {
		if (w->slots[i].tid == tid)
			return &w->slots[i];
		if (!w->slots[i].tid)
			return NULL;
	}
}

static inline struct wthread *lookup(const struct argus_hang_watch *w, uint32_t tid)
{
	return filter_has(w, tid) ? find(w, tid) : NULL;
}

static int grow_table(struct argus_hang_watch *w)
{
	uint32_t ncap = w->cap * 2, mask = ncap - 1;
	struct wthread *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	memset(w->filter, 0, sizeof(w->filter));
	for (uint32_t i = 0; i < w->cap; i++) {
		struct wthread *t = &w->slots[i];
		uint32_t j;

		if (!t->tid)
			continue;
		for (j = hash_tid(t->tid) & mask; ns[j].tid; j = (j + 1) & mask)
			;
		ns[j] = *t;
		w->filter[(t->tid & (FILTER_BITS - 1)) >> 3] |= 1u << (t->tid & 7);
	}
	free(w->slots);
	w->slots = ns;
	w->cap = ncap;
	return 0;
}

static struct wthread *insert(struct argus_hang_watch *w, uint32_t tid)
{
	struct wthread *t = find(w, tid);
	uint32_t mask, i;

	if (t)
		return t;
	if ((w->used + 1) * 2 > w->cap && grow_table(w))
		return NULL;
	mask = w->cap - 1;
	for (i = hash_tid(tid) & mask; w->slots[i].tid; i = (i + 1) & mask)
		;
	t = &w->slots[i];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->wait_nr = -1;
	t->st_longest_nr = -1;
	w->used++;
	w->filter[(tid & (FILTER_BITS - 1)) >> 3] |= 1u << (tid & 7);
	return t;
}

/* Backward-shift deletion: entries after the hole that hash at or before
 * it move up, so lookups never need tombstones. */
static void erase(struct argus_hang_watch *w, struct wthread *t)
{
	uint32_t mask = w->cap - 1, i = (uint32_t)(t - w->slots), j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!w->slots[j].tid)
			break;
		uint32_t home = hash_tid(w->slots[j].tid) & mask;
		/* may slots[j] move to i?  yes unless home lies in (i, j] */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			w->slots[i] = w->slots[j];
			i = j;
		}
	}
	memset(&w->slots[i], 0, sizeof(w->slots[i]));
	w->used--;
}

/* (the syscall classes are the hang model's: hang_rule.h) */

/* ---- the rule ---- */

/* Is t in a wait now, or between two tries of a timed wait it retries
 * (hang_rule.h: one wait)?  When it began: *since. */
static bool in_wait(const struct wthread *t, uint64_t *since)
{
	if (t->state == T_BLOCKED) {
		*since = t->wait_start;
		return true;
	}
	*since = t->chain_req ? t->chain_start : t->timed_from;
	return *since != 0;
}

static enum argus_live_kind live_kind(const struct wthread *t, uint64_t now)
{
	uint64_t since;

	if (in_wait(t, &since) && now - since >= (now - t->back_ts) / 2)
		return ARGUS_LIVE_BLOCKED;
	if (t->nshort >= YIELD_LOOP_MIN)
		return ARGUS_LIVE_YIELD;
	return ARGUS_LIVE_BUSY;
}

/* The hang of t that began when it last came back: reported from now. */
static void begin_hang(struct argus_hang_watch *w, struct wthread *t, uint64_t now)
{
	struct argus_live_hang *h = &t->hang;

	memset(h, 0, sizeof(*h));
	h->id = ++w->next_id;
	h->tid = t->tid;
	h->pid = t->pid;
	h->uid = t->uid;
	memcpy(h->comm, t->comm, sizeof(h->comm));
	h->why = t->why;
	h->kind = live_kind(t, now);
	h->sys_nr = t->state == T_BLOCKED || t->timed_from || t->chain_req ? t->wait_nr : -1;
	h->request = t->state == T_BLOCKED && t->wait_request;
	h->start_ns = t->back_ts;
	h->loop = t->loop;
	t->in_hang = true;
	w->seen++;
}


static void end_hang(struct argus_hang_watch *w, struct wthread *t, uint64_t ts,
		     bool exited)
{
	struct argus_live_hang *h;

	if (!t->in_hang)
		return;
	t->in_hang = false;
	if (w->nended == w->capended) {
		size_t ncap = w->capended ? w->capended * 2 : 8;
		void *p = realloc(w->ended, ncap * sizeof(*w->ended));
		if (!p)
			return; /* the end is not reported; the keeper's deadline saves it */
		w->ended = p;
		w->capended = ncap;
	}
	h = &w->ended[w->nended++];
	*h = t->hang;
	h->end_ns = ts > h->start_ns ? ts : h->start_ns + 1;
	h->exited = exited;
}


/* Is the stretch of t, a thread with no idle wait, up to now a deliberate
 * one: blocked (asleep more than running), its longest wait a wait for a
 * child (a shell runs every command so) or its only sleep (a command's
 * `sleep 10`)?  The offline list leaves such a stretch out (diag_hangs.c,
 * fill_hang, with the same sums: activity), so it is not reported while
 * it lasts, nor late when it ends; but it is no rest either.  A shell's
 * `until grep ...; do sleep 0.1; done`, its child waits short among many,
 * is a retry loop, reported. */
static bool deliberate_wait(const struct wthread *t, uint64_t now)
{
	uint64_t win = now > t->back_ts ? now - t->back_ts : 1, asleep = t->st_asleep;
	uint64_t longest = t->st_longest, run;
	int32_t lnr = t->st_longest_nr;
	uint32_t sleeps = t->st_sleeps;

	/* (a loop thread away from its loop in a sleep is hung: a service
	 * sleeping inside its method) */
	if (t->loop)
		return false;
	if (t->state == T_BLOCKED && now > t->blocked_at) {
		uint64_t cur = now - t->blocked_at;

		asleep += cur;
		sleeps += t->wait_sleep;
		if (cur > longest) {
			longest = cur;
			lnr = t->wait_nr;
		}
	}
	run = win > asleep ? win - asleep : 0;
	return hang_rule_deliberate(hang_rule_kind(win, asleep, run, longest, t->st_short,
						   t->st_timed), lnr, sleeps);
}

/* The wait t was blocked in since blocked_at ended at ts: into the sums. */
static void wait_ended(struct wthread *t, uint64_t ts)
{
	uint64_t d = ts > t->blocked_at ? ts - t->blocked_at : 0;

	t->st_asleep += d;
	if (d > t->st_longest) {
		t->st_longest = d;
		t->st_longest_nr = t->wait_nr;
	}
	if (d < HANG_SHORT_WAIT_NS)
		t->st_short++;
	else if (t->wait_sleep)
		t->st_timed++;
	t->st_sleeps += t->wait_sleep;
}

/* t comes back at ts, from a wait or a stretch that was not at rest.  A
 * hang that no check saw while it lasted (argusd descheduled, or busy
 * saving a snapshot, for the whole time the thread was past the
 * threshold) is reported now, late, with its true start and end: argusd's
 * own stall must not lose a hang.  Call it before t->state changes. */
static void came_back(struct argus_hang_watch *w, struct wthread *t, uint64_t ts)
{
	if (!t->in_hang && ts > t->back_ts && ts - t->back_ts >= w->threshold_ns &&
	    !(t->state == T_BLOCKED && t->wait_idle) && !deliberate_wait(t, ts)) {
		begin_hang(w, t, ts);
		t->hang.late = true;
	}
	end_hang(w, t, ts, false);
	t->back_ts = ts;
	t->nshort = 0;
	t->st_asleep = t->st_longest = 0;
	t->st_longest_nr = -1;
	t->st_short = t->st_timed = t->st_sleeps = 0;
}

/* A wait judged a request's is found to have been idle (its wake-up was
 * not the reply): the thread was at rest, so no late hang is made of it;
 * a hang already reported ends here (the keeper's diagnosis judges it). */
static void was_idle(struct argus_hang_watch *w, struct wthread *t, uint64_t ts)
{
	t->req_pending = false;
	t->out = false;
	t->loop = true;
	end_hang(w, t, ts, false);
	t->back_ts = ts;
	t->nshort = 0;
}

/* Is the wait t blocks in now (syscall nr, key arg) an idle wait?  The
 * model's (hang_rule.h); a 1-fd poll after an output is a request until
 * the next connection op says otherwise. */
static bool idle_wait(const struct wthread *t, int32_t nr)
{
	if (hang_rule_epoll_nr(nr))
		return true;
	if (argus_sys_is_pollfd(nr) && t->poll_many)
		return true;
	if (hang_rule_loop_nr(nr))
		return !t->out;
	if (hang_rule_sleep_nr(nr))
		return hang_rule_round_idle(t->round) && t->idle_rounds + 1 >= HANG_IDLE_ROUNDS;
	return false;
}

/* t blocks in a poll-family wait at ts: does it continue a chain of poll
 * retries (hang_rule_poll_continues), and is the chain then a reply wait
 * (a request was outstanding when it began)?  Then the thread has been
 * away since the chain began: the visits of the loop it seemed to make
 * between the polls are taken back (no hang was reported meanwhile: it
 * was at rest or visiting). */
static void poll_chain(struct wthread *t, uint64_t ts)
{
	/* SYS_poll: t blocks in a poll-family call (the caller checked) */
	if (!hang_rule_poll_continues(t->poll_to, SYS_poll, t->poll_tries)) {
		t->chain_start = ts;
		t->chain_out = t->out;
		t->chain_req = false;
	} else if (t->chain_out && !t->chain_req) {
		t->chain_req = true;
		if (!t->in_hang && t->back_ts > t->chain_start)
			t->back_ts = t->chain_start;
	}
	t->poll_to = false;
	t->polled = true;
}

static void switch_out(struct argus_hang_watch *w, struct wthread *t,
		       const struct ae_switch *r)
{
	bool stopped, idle;

	if (!r->prev_state)
		return; /* preempted: still running */
	/* in a debugger's stop: at rest, but no idle wait of the thread's
	 * own.  A SIGSTOP (job control) is no rest: the thread is frozen,
	 * away as the offline model counts it */
	stopped = r->prev_state & STATE_TRACED;
	if (hang_rule_loop_nr(r->sys_nr) && !stopped)
		poll_chain(t, r->h.ts);
	else
		t->poll_to = false;
	idle = !stopped && !t->chain_req && idle_wait(t, r->sys_nr);
	if (idle || stopped)
		came_back(w, t, r->h.ts); /* at rest from here */
	if (idle) {
		t->loop = true;
		if (hang_rule_loop_nr(r->sys_nr)) {
			t->out = false;
			t->poll_loop = true;
		}
	} else if (!stopped) {
		t->call_away = true;
	}
	t->state = T_BLOCKED;
	t->blocked_at = r->h.ts;
	/* a timed wait entered again on the same futex after it timed out:
	 * one wait, from its first try (hang_rule.h) */
	t->wait_start = t->chain_req ? t->chain_start :
			t->timed_from && r->sys_nr == SYS_futex && r->sys_arg == t->timed_arg ?
			t->timed_from : r->h.ts;
	t->timed_from = 0;
	t->wait_arg = r->sys_arg;
	t->wait_nr = r->sys_nr;
	t->wait_sleep = hang_rule_sleep_nr(r->sys_nr);
	t->wait_request = hang_rule_loop_nr(r->sys_nr) && !idle && !stopped;
	t->wait_idle = idle || stopped;
	if (t->wait_request)
		t->req_pending = true;
	if (t->wait_sleep) {
		t->nshort++;
		if (hang_rule_round_idle(t->round) && t->idle_rounds < HANG_IDLE_ROUNDS)
			t->idle_rounds++;
		t->round = 0; /* the next round starts */
	}
}

/* Is t, a thread with no idle wait, in one wait (not a sleep) that lasted
 * the threshold by ts?  Such a wait is a hang of its own: the stretch
 * before it ends where it began, and a new one starts when it ends. */
static bool long_wait(const struct argus_hang_watch *w, const struct wthread *t, uint64_t ts)
{
	return !t->loop && t->state == T_BLOCKED && !t->wait_sleep && !t->wait_idle &&
	       ts >= t->wait_start + w->threshold_ns;
}

/* The stretch before t's long wait ends where the wait began (reported
 * late if it was a hang no check saw). */
static void cut_at_wait(struct argus_hang_watch *w, struct wthread *t)
{
	if (t->back_ts < t->wait_start)
		came_back(w, t, t->wait_start);
}

static void switch_in(struct argus_hang_watch *w, struct wthread *t, uint64_t ts)
{
	if (t->state != T_BLOCKED)
		return; /* back from a preemption */
	if (long_wait(w, t, ts)) {
		cut_at_wait(w, t);
		came_back(w, t, ts);
	} else if (t->wait_idle) {
		came_back(w, t, ts); /* the end of a rest */
	} else if (deliberate_wait(t, ts) && ts - t->wait_start >= w->threshold_ns) {
		/* a long lone sleep: the stretch it made is deliberate (not
		 * reported, nor late: came_back knows), a new one starts */
		came_back(w, t, ts);
	} else {
		wait_ended(t, ts); /* the stretch goes on through it */
	}
	t->state = T_RUNNING;
}

/* A connection op of t (input or output of more than 0 bytes on a pipe
 * or a socket): it settles a request wait still pending, and an output
 * makes a request outstanding. */
static void conn_op(struct argus_hang_watch *w, struct wthread *t,
		    const struct ae_sys_exit *r, bool in, uint64_t ts)
{
	if (t->req_pending) {
		bool reply = in && (t->out_kind == AE_OBJ_PIPE ? r->obj.kind == AE_OBJ_PIPE
							       : r->obj.obj == t->out_key);
		if (reply)
			t->req_pending = false;
		else
			was_idle(w, t, ts);
		t->chain_req = false;
	}
	if (!in) {
		t->out = true;
		t->out_kind = r->obj.kind;
		t->out_key = r->obj.obj;
	}
}

static void sys_exit_call(struct argus_hang_watch *w, struct wthread *t,
			  const struct ae_sys_exit *r);

/* A restart exit is settled by the next syscall of t (nr): the same call
 * again, or restart_syscall, is the kernel restarting it (the thread never
 * left it); any other call means user space saw the return (-EINTR after
 * a signal handler), so the call ended at that exit, as the offline model
 * settles it (diag_hangs.c, loop_feed). */
static void settle_restart(struct argus_hang_watch *w, struct wthread *t, int64_t nr)
{
	struct ae_sys_exit x;

	if (!t->restarted)
		return;
	t->restarted = false;
	/* one-off: restart_syscall is the kernel resuming the same call */
	if (nr == t->restart_nr || nr == SYS_restart_syscall)
		return;
	memset(&x, 0, sizeof(x));
	x.h.type = AE_SYS_EXIT;
	x.h.size = sizeof(x);
	x.h.ts = t->restart_ts;
	x.h.tid = t->tid;
	x.h.pid = t->pid;
	x.nr = t->restart_nr;
	x.ret = -EINTR;
	sys_exit_call(w, t, &x);
}

static void sys_enter(struct argus_hang_watch *w, struct wthread *t,
		      const struct ae_sys_enter *r)
{
	settle_restart(w, t, r->nr);
	if (argus_sys_is_pollfd(r->nr))
		t->poll_many = r->args[1] >= 2;   /* nfds */
	else if (argus_sys_is_exit(r->nr))
		t->bye = true;
}

static void sys_exit(struct argus_hang_watch *w, struct wthread *t,
		     const struct ae_sys_exit *r)
{
	settle_restart(w, t, r->nr);
	if (hang_rule_restart(r->ret)) {
		/* interrupted: the call goes on, unless another follows */
		t->restarted = true;
		t->restart_nr = (int32_t)r->nr;
		t->restart_ts = r->h.ts;
		return;
	}
	sys_exit_call(w, t, r);
}

/* A call of t returned (not a restart). */
static void sys_exit_call(struct argus_hang_watch *w, struct wthread *t,
			  const struct ae_sys_exit *r)
{
	int64_t nr = r->nr;
	bool away = t->call_away;

	/* one-off futex rule: a timed futex wait retried on the same word
	 * after its timeout is one wait (hang_rule.h) */
	if (nr == SYS_futex && hang_rule_timed_out(nr, r->ret) && t->wait_nr == SYS_futex) {
		t->timed_arg = t->wait_arg;
		t->timed_from = t->wait_start;
	} else if (nr != SYS_futex) {
		t->timed_from = 0; /* another call: the retried wait is over */
	}
	t->round |= (uint8_t)hang_rule_try(nr, r->ret);
	t->poll_tries |= (uint8_t)hang_rule_try(nr, r->ret);
	if (t->poll_tries & HANG_TRY_WORKED) {
		/* the chain of poll retries is over (a reply, if it was one,
		 * is told by the first connection op: req_pending) */
		t->poll_to = false;
		t->chain_req = false;
	}
	if (hang_rule_conn_kind(r->obj.kind) &&
	    (hang_rule_in(nr, r->ret) || hang_rule_out(nr, r->ret)))
		conn_op(w, t, r, hang_rule_in(nr, r->ret), r->h.ts);
	if (argus_sys_is(nr, ARGUS_SC_YIELD)) {
		t->nshort++;
		t->st_short++;
	}
	if (!hang_rule_visit_nr(nr))
		return;
	t->call_away = false;
	if (hang_rule_loop_nr(nr)) {
		t->polls = true;
		if (t->polled) {
			/* a blocking poll that found nothing may be retried */
			t->poll_to = r->ret == 0;
			t->poll_tries = 0;
			t->polled = false;
		}
		/* a visit of the loop, unless it blocked in a request's wait
		 * or lies inside a chain of poll retries that is one */
		if (t->loop && !away && !t->chain_req)
			came_back(w, t, r->h.ts);
	} else if (nr == SYS_futex && hang_rule_timed_out(nr, r->ret) && !t->polls) {
		/* a timed wait for work that timed out, in a thread with no
		 * event loop: a worker's tick, an idle wait */
		t->loop = true;
		came_back(w, t, r->h.ts);
	}
}

static bool comm_watched(const struct argus_hang_watch *w, const char *comm)
{
	for (size_t i = 0; i < w->ncomms; i++)
		if (!strncmp(w->comms[i], comm, 15))
			return true;
	return false;
}

static void set_comm(char dst[16], const char *src)
{
	size_t n = strnlen(src, 15);

	memcpy(dst, src, n);
	dst[n] = 0;
}

/* A process (its main thread tid == pid) got the name comm at ts, by exec,
 * fork or rename: start or stop watching it by name.
 *
 * Records come in drain order, not time order: each CPU's batch reaches
 * the ring on its own (argus.bpf.c), so a parent's fork record (the child
 * named after the parent) can come after the child's exec, when the
 * child ran, exec'd and blocked on the other CPU, which flushed at once
 * going idle.  Applied in that order, the stale fork name un-watched the
 * process it had just started to watch: a `--watch flock` missed the
 * flock that hung (e2e_real_flock's keeper phase, once in a CI run).  A
 * naming record older than the newest one applied is ignored. */
static void named(struct argus_hang_watch *w, uint32_t tid, uint32_t pid,
		  const char *comm, uint64_t ts, bool fresh)
{
	struct wthread *t = lookup(w, tid);
	bool match;

	if (!tid || tid != pid)
		return; /* only the main thread carries the process's name */
	if (t && ts < t->named_ts)
		return; /* stale: see above */
	match = w->ncomms && comm_watched(w, comm);
	if (t) {
		set_comm(t->comm, comm);
		if (fresh) {
			/* a new program (exec): its state starts over */
			uint32_t why = t->why;
			char name[16];

			end_hang(w, t, ts, false);
			memcpy(name, t->comm, sizeof(name));
			uint32_t tid0 = t->tid, pid0 = t->pid, uid0 = t->uid;
			memset(t, 0, sizeof(*t));
			t->tid = tid0;
			t->pid = pid0;
			t->uid = uid0;
			t->why = why;
			memcpy(t->comm, name, sizeof(name));
			t->wait_nr = -1;
			t->st_longest_nr = -1;
			t->back_ts = ts;
		}
		t->named_ts = ts;
		if (match)
			t->why |= ARGUS_WATCH_COMM;
		else if (t->why & ARGUS_WATCH_COMM) {
			t->why &= ~(unsigned)ARGUS_WATCH_COMM;
			if (!t->why) {
				end_hang(w, t, ts, false);
				erase(w, t);
			}
		}
		return;
	}
	if (!match)
		return;
	/* a name anyone can take: only the uids the admin named */
	uint32_t uid = 0;
	if (w->comm_ok && !w->comm_ok(w->comm_ok_ctx, pid, &uid))
		return;
	t = insert(w, tid);
	if (!t)
		return;
	t->pid = pid;
	t->uid = uid;
	set_comm(t->comm, comm);
	t->why = ARGUS_WATCH_COMM;
	t->state = T_RUNNING;
	t->back_ts = ts;
	t->named_ts = ts;
}

void argus_hang_watch__record(struct argus_hang_watch *w, const void *rec, size_t size)
{
	const struct ae_hdr *h = rec;
	struct wthread *t;

	if (size < sizeof(*h) || h->size > size)
		return;
	switch (h->type) {
	case AE_SWITCH: {
		const struct ae_switch *r = rec;
		if (size < sizeof(*r))
			return;
		if ((t = lookup(w, h->tid)))
			switch_out(w, t, r);
		if ((t = lookup(w, r->next_tid)))
			switch_in(w, t, h->ts);
		return;
	}
	case AE_SYS_ENTER:
		if (size >= sizeof(struct ae_sys_enter) && (t = lookup(w, h->tid)))
			sys_enter(w, t, rec);
		return;
	case AE_SYS_EXIT:
		if (size >= sizeof(struct ae_sys_exit) && (t = lookup(w, h->tid)))
			sys_exit(w, t, rec);
		return;
	case AE_EXEC: {
		const struct ae_exec *r = rec;
		char comm[AE_COMM_LEN + 1];
		if (size < sizeof(*r))
			return;
		memcpy(comm, r->comm, AE_COMM_LEN);
		comm[AE_COMM_LEN] = 0;
		named(w, h->tid, h->pid, comm, h->ts, true);
		return;
	}
	case AE_FORK: {
		const struct ae_task *r = rec;
		char comm[AE_COMM_LEN + 1];
		/* a new process (not a thread) with its parent's name */
		if (size < sizeof(*r) || !w->ncomms || r->child_tid != r->child_pid)
			return;
		memcpy(comm, r->comm, AE_COMM_LEN);
		comm[AE_COMM_LEN] = 0;
		named(w, r->child_tid, r->child_pid, comm, h->ts, true);
		return;
	}
	case AE_RENAME: {
		const struct ae_rename *r = rec;
		char comm[AE_COMM_LEN + 1];
		if (size < sizeof(*r) || (!w->ncomms && !filter_has(w, h->tid)))
			return;
		memcpy(comm, r->comm, AE_COMM_LEN);
		comm[AE_COMM_LEN] = 0;
		named(w, h->tid, h->pid, comm, h->ts, false);
		return;
	}
	case AE_EXIT:
		if ((t = lookup(w, h->tid))) {
			/* an event loop left, then exit_group by itself: the app
			 * shutting down, as the offline model judges it
			 * (diag_hangs.c, loop_end); the hang reported meanwhile
			 * ends marked so */
			if (t->in_hang && t->bye && t->poll_loop)
				t->hang.shutdown = true;
			end_hang(w, t, h->ts, true);
			erase(w, t);
		}
		return;
	case AE_FREE: {
		const struct ae_task *r = rec;
		if (size >= sizeof(*r) && (t = lookup(w, r->child_tid))) {
			end_hang(w, t, h->ts, true);
			erase(w, t);
		}
		return;
	}
	default:
		return;
	}
}

int argus_hang_watch__check(struct argus_hang_watch *w, uint64_t now_ns,
			    argus_hang_fn fn, void *ctx)
{
	int n = 0;

	for (size_t i = 0; i < w->nended; i++, n++) {
		if (w->ended[i].late) {
			/* found when it ended: its BEGAN first, as it would have been */
			struct argus_live_hang b = w->ended[i];

			b.end_ns = 0;
			b.exited = false;
			fn(ctx, ARGUS_HANG_BEGAN, &b);
			n++;
		}
		fn(ctx, ARGUS_HANG_ENDED, &w->ended[i]);
	}
	w->nended = 0;
	for (uint32_t i = 0; i < w->cap; i++) {
		struct wthread *t = &w->slots[i];

		if (!t->tid || (t->state == T_BLOCKED && t->wait_idle))
			continue;
		/* a thread with no idle wait, in one wait of the threshold or
		 * more: that wait is a hang of its own (the stretch before it
		 * ends where it began) */
		if (long_wait(w, t, now_ns))
			cut_at_wait(w, t);
		if (t->in_hang || now_ns < t->back_ts || now_ns - t->back_ts < w->threshold_ns)
			continue;
		/* a wait for a child, or one sleep since it came back: not
		 * reported while it lasts (a second sleep makes it a retry
		 * loop, reported then) */
		if (deliberate_wait(t, now_ns))
			continue;
		/* a thread with no idle wait, now in a wait (not a sleep) that
		 * began before the threshold: whether the stretch goes on (a
		 * short wait) or ends where the wait began (a long one) is not
		 * known yet; it is told within the threshold */
		if (!t->loop && t->state == T_BLOCKED && !t->wait_sleep && !t->wait_idle &&
		    now_ns < t->wait_start + w->threshold_ns &&
		    t->wait_start - t->back_ts < w->threshold_ns)
			continue;
		begin_hang(w, t, now_ns);
		fn(ctx, ARGUS_HANG_BEGAN, &t->hang);
		n++;
	}
	return n;
}

/* ---- setup ---- */

struct argus_hang_watch *argus_hang_watch__new(const struct argus_hang_watch_opts *opts)
{
	struct argus_hang_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->threshold_ns = opts && opts->sz >= offsetof(struct argus_hang_watch_opts, threshold_ns) +
					       sizeof(opts->threshold_ns) && opts->threshold_ns
				  ? opts->threshold_ns : 2000000000ull;
	if (opts && opts->sz >= offsetof(struct argus_hang_watch_opts, comm_ok_ctx) +
				sizeof(opts->comm_ok_ctx)) {
		w->comm_ok = opts->comm_ok;
		w->comm_ok_ctx = opts->comm_ok_ctx;
	}
	w->cap = 64;
	w->slots = calloc(w->cap, sizeof(*w->slots));
	if (!w->slots) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

void argus_hang_watch__free(struct argus_hang_watch *w)
{
	if (!w)
		return;
	free(w->slots);
	free(w->comms);
	free(w->ended);
	free(w);
}

int argus_hang_watch__add_comm(struct argus_hang_watch *w, const char *comm)
{
	void *p;

	if (!comm || !comm[0])
		return -EINVAL;
	if (comm_watched(w, comm))
		return 0;
	p = realloc(w->comms, (w->ncomms + 1) * sizeof(*w->comms));
	if (!p)
		return -ENOMEM;
	w->comms = p;
	set_comm(w->comms[w->ncomms++], comm);
	return 0;
}

int argus_hang_watch__add_thread(struct argus_hang_watch *w,
				 const struct argus_watch_thread *in)
{
	struct wthread *t = find(w, in->tid);

	if (!in->tid || !in->why)
		return -EINVAL;
	if (t) {
		t->why |= in->why;
		return 0;
	}
	t = insert(w, in->tid);
	if (!t)
		return -ENOMEM;
	t->pid = in->pid ? in->pid : in->tid;
	t->uid = in->uid;
	set_comm(t->comm, in->comm);
	t->why = in->why;
	t->back_ts = in->since_ns;
	if (in->blocked) {
		/* found asleep: what it wrote before is unknown, so a poll-family
		 * wait counts as idle (a hang already under way inside poll is
		 * missed until the thread comes back); a wait for a child is a
		 * deliberate one (deliberate_wait), as when it is seen entering it */
		t->state = T_BLOCKED;
		t->wait_start = in->since_ns;
		t->wait_nr = in->sys_nr;
		t->wait_sleep = hang_rule_sleep_nr(in->sys_nr);
		t->wait_idle = hang_rule_loop_nr(in->sys_nr) || in->stopped;
		t->loop = hang_rule_loop_nr(in->sys_nr);
	}
	return 0;
}

bool argus_hang_watch__watching(const struct argus_hang_watch *w, uint32_t tid)
{
	return lookup(w, tid) != NULL;
}

bool argus_hang_watch__unsettled(const struct argus_hang_watch *w, uint32_t tid)
{
	const struct wthread *t = lookup(w, tid);

	return t && t->req_pending;
}

uint32_t argus_hang_watch__count(const struct argus_hang_watch *w)
{
	return w->used;
}

uint64_t argus_hang_watch__seen(const struct argus_hang_watch *w)
{
	return w->seen;
}

/* ---- /proc ---- */

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return (int)n;
}

int argus_watch_thread__from_proc(uint32_t tid, uint64_t now_ns,
				  struct argus_watch_thread *t)
{
	char path[64], buf[4096], *p;
	char state = 0;
	int e;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->sys_nr = -1;
	t->since_ns = now_ns;
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if ((e = read_small(path, buf, sizeof(buf))) < 0)
		return e == -ENOENT ? -ESRCH : e;
	if ((p = strstr(buf, "\nTgid:")))
		t->pid = (uint32_t)strtoul(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nState:")))
		state = p[7 + strspn(p + 7, " \t")];
	if ((p = strstr(buf, "\nUid:")))
		t->uid = (uint32_t)strtoul(p + 5, NULL, 10); /* real, effective, ... */
	if (!t->pid)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%u/comm", t->pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		set_comm(t->comm, buf);
	}
	if (state == 'S' || state == 'D') {
		t->blocked = true;
		/* "NR args..." in a syscall, "-1 sp pc" blocked outside one,
		 * "running" (it woke meanwhile: then it is not blocked) */
		snprintf(path, sizeof(path), "/proc/%u/syscall", tid);
		if (read_small(path, buf, sizeof(buf)) > 0) {
			if (!strncmp(buf, "running", 7))
				t->blocked = false;
			else
				t->sys_nr = (int32_t)strtol(buf, NULL, 10);
		}
	} else if (state == 't') {
		/* in a debugger's stop: at rest, like an idle wait */
		t->blocked = true;
		t->stopped = true;
	} else if (state == 'T') {
		/* stopped by a signal (SIGSTOP): frozen, not at rest */
		t->blocked = true;
	}
	return 0;
}
