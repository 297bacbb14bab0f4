/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interpose_ring.h - argusd's side of the interposer (docs/interposer.md):
 * the registration socket, the registered processes' shared rings, and
 * the parser that turns one untrusted ring slot into a trace event.
 *
 * Threat model: any local user can connect to the registration socket
 * and write anything into the ring it registered, at any time, from any
 * thread, including while argusd reads it.  So:
 *   - the kernel says who registered (SO_PEERCRED pid and uid, and a
 *     pidfd of the peer: SO_PEERPIDFD); a record only ever speaks for
 *     that pid, and its tid (and a holder tid) must be a thread of it
 *     (/proc/PID/task, through a dirfd opened at registration while the
 *     pidfd said the process was alive, so a reused pid cannot pass);
 *   - a ring belongs to the image and credentials that registered it
 *     (issue 25, F4): /proc/PID/exe's inode and the Uid:/Gid: lines at
 *     registration (whose effective ids must still be the connect's),
 *     compared again at most every ARGUS_IP_IDENT_NS per ring before it
 *     is read; after an exec (or a uid/gid change) every record read from
 *     it is refused (ARGUS_IP_AFTER_EXEC) until the process exits or
 *     registers again;
 *   - the memfd must be sealed against shrinking and exactly
 *     AIP_RING_BYTES, and is mapped read-only: a hostile process cannot
 *     make argusd fault or write;
 *   - a slot is copied out before it is looked at, and dropped when its
 *     seq changed during the copy;
 *   - every field is checked (argus_ip__parse); a record that fails is
 *     dropped and counted by reason, never half-used;
 *   - memory and work are bounded: one ring per process, ARGUS_IP_MAX_PROCS
 *     rings in all, ARGUS_IP_MAX_PER_UID per uid, of which the uids other
 *     than root hold ARGUS_IP_MAX_PROCS - ARGUS_IP_ROOT_RESERVE together
 *     (so root's interposed app always registers), ARGUS_IP_DRAIN_MAX
 *     records per ring per drain, and ARGUS_IP_UID_RATE records per
 *     second per uid other than root, all its rings together (the rest
 *     is dropped unread and counted: one user can neither pin argusd nor
 *     fill the trace ring).
 *
 * Conventions as the rest of collector/: 0/-errno, NULL + errno from
 * constructors, free accepts NULL, nothing printed.
 */
#ifndef ARGUS_INTERPOSE_RING_H
#define ARGUS_INTERPOSE_RING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "argus_events.h"
#include "trace_format.h"

#define ARGUS_IP_MAX_PROCS 256
#define ARGUS_IP_MAX_PER_UID 64
#define ARGUS_IP_ROOT_RESERVE 32         /* rings only root may take */
#define ARGUS_IP_UID_RATE 20000          /* records/s per non-root uid; a
                                            second's worth may come at once */
#define ARGUS_IP_DRAIN_MAX 4096          /* records per ring per drain */
#define ARGUS_IP_MAX_AGE_NS (10ull * 1000 * 1000 * 1000)
#define ARGUS_IP_MAX_AHEAD_NS (1000ull * 1000)  /* clock skew allowed */
#define ARGUS_IP_MAX_JUMP (1ull << 32)  /* a head further ahead is forged */
/* how often a ring's process is checked to be the image and credentials
 * that registered it: records written after an exec and read within this
 * long after it are still taken (the window; docs/interposer.md) */
#define ARGUS_IP_IDENT_NS (100ull * 1000 * 1000)

/* Why a record was rejected (argus_ip__parse's positive results). */
enum argus_ip_reject {
	ARGUS_IP_OK = 0,
	ARGUS_IP_BAD_SIZE,      /* size field is not sizeof(struct aip_rec) */
	ARGUS_IP_BAD_TYPE,      /* not an enum aip_type */
	ARGUS_IP_BAD_FIELD,     /* reserved bits set, address 0, cpu out of
	                           range, a field the type does not have */
	ARGUS_IP_BAD_TIME,      /* older than MAX_AGE or in the future */
	ARGUS_IP_BAD_TID,       /* tid is not a thread of the process */
	ARGUS_IP_BAD_HOLDER,    /* holder tid is not a thread of the process */
	ARGUS_IP_TORN,          /* the slot changed while it was copied */
	ARGUS_IP_AFTER_EXEC,    /* read after the process execed or changed
	                           credentials: not its registrant's to write */
	ARGUS_IP_REJECT_MAX,
};
const char *argus_ip_reject_str(unsigned reason);

/* What a record is checked against. */
struct argus_ip_check {
	uint64_t now_ns;        /* CLOCK_MONOTONIC at the drain */
	uint32_t pid;           /* the registered process (SO_PEERCRED) */
	uint32_t ncpus;         /* cpu hints must be below it; 0 = any */
	/* 1 when tid is a thread of pid, else 0 */
	int (*tid_ok)(void *ctx, uint32_t tid);
	void *ctx;
};

/* One slot (len bytes as copied out of the ring) into *ev (type
 * AE_MUTEX_*, pid from k, f[ARGUS_F_MX_*]): ARGUS_IP_OK, or why not
 * (enum argus_ip_reject), with *ev untouched.  Pure but for k->tid_ok:
 * the fuzz target drives it. */
int argus_ip__parse(const void *slot, size_t len, const struct argus_ip_check *k,
		    struct argus_event *ev);

struct argus_ip_stats {
	uint32_t procs;         /* rings registered now */
	uint64_t registered;    /* registrations accepted since start */
	uint64_t refused;       /* registrations refused (bad fd, caps...) */
	uint64_t refused_full;  /* of them: the table, the uid's 64 or the
	                           non-root uids' share was full */
	uint64_t records;       /* records added to the trace */
	uint64_t lost;          /* overwritten before argusd read them, or
	                           never published (a writer that died) */
	uint64_t invalid;       /* rejected, all reasons */
	uint64_t over_budget;   /* dropped unread: their uid had spent its
	                           ARGUS_IP_UID_RATE (not in lost) */
	uint64_t by_reason[ARGUS_IP_REJECT_MAX];
};

/* Read one ring (AIP_RING_BYTES at ring, as mapped) from *tail, the
 * reader's own cursor, up to ARGUS_IP_DRAIN_MAX records: each valid one
 * to emit (NULL: counted lost), everything else counted in *st.  *stuck
 * counts drains the slot at *tail has been unpublished; dead: the writer
 * is gone, an unpublished slot is lost at once.  Returns 0, or the first
 * negative value of emit (the records after it are counted lost).  What
 * argus_ip_registry__drain does per ring; the fuzz target drives it over
 * arbitrary bytes. */
int argus_ip__drain_buffer(const void *ring, uint64_t *tail, uint32_t *stuck, bool dead,
			   const struct argus_ip_check *k,
			   int (*emit)(void *ctx, const struct argus_event *ev), void *ctx,
			   struct argus_ip_stats *st);

struct argus_ip_registry;

/* Listen on path (the run directory must exist), mode 0666: any process
 * may register.  NULL + errno; msg gets a line saying why. */
struct argus_ip_registry *argus_ip_registry__new(const char *path, uint32_t ncpus,
						 char *msg, size_t msglen);
/* Take the registrations waiting on the socket (never blocks). */
void argus_ip_registry__accept(struct argus_ip_registry *r);
/* Read every ring: valid records go to emit (in ring order); a ring whose
 * process has exited is read one last time and dropped.  Returns the
 * records emitted, or the first negative value emit returned. */
int argus_ip_registry__drain(struct argus_ip_registry *r,
			     int (*emit)(void *ctx, const struct argus_event *ev),
			     void *ctx);
/* Read every ring as far as it is published, now, cheaply: no liveness
 * check, and an unpublished slot is waited for (never counted lost here,
 * that is argus_ip_registry__drain's job).  For the collector's side_peek
 * while it drains the BPF ring.  Returns as argus_ip_registry__drain. */
int argus_ip_registry__peek(struct argus_ip_registry *r,
			    int (*emit)(void *ctx, const struct argus_event *ev),
			    void *ctx);
void argus_ip_registry__stats(const struct argus_ip_registry *r,
			      struct argus_ip_stats *st);
/* Closes the socket (and unlinks it) and every ring. */
void argus_ip_registry__free(struct argus_ip_registry *r);

#endif
