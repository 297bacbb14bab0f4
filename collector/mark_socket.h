/* mark_socket.h - the mark socket: lets the members of one group (default
 * "argus") add `argus mark TEXT` to the trace, and do nothing else.
 *
 * The control socket (control.h) stays root-only.  This second socket
 * lives in its own directory, "<run dir>-mark" (default /run/argus-mark),
 * root:GROUP 0750, and is itself root:GROUP 0660, so the kernel lets only
 * root and processes carrying GROUP connect.  On top of that every peer is
 * checked from the credentials the kernel captured at connect() time
 * (SO_PEERCRED: uid, gid, pid; SO_PEERGROUPS: supplementary groups), never
 * from /proc/PID, whose pid may have exited and been reused by then; and
 * the peer's uid must also be a member of GROUP in the group database now
 * (so a user removed from the group is refused at once, even from a
 * session that still carries it).  The one request served is
 * "mark TEXT\n" with 1..ARGUS_MARK_TEXT_MAX bytes of printable text; the
 * rest gets one "error: ..." line.  Clients are read without blocking the
 * collector: a member that connects and sends nothing costs one slot for
 * at most a second.  Members are kept apart: a uid holds at most
 * ARGUS_MARK_CONN_PER_UID connections at once, and its marks are
 * rate-limited on their own (ARGUS_MARK_RATE_BURST, then
 * ARGUS_MARK_RATE_PER_S a second), so one member cannot keep another out.
 * docs/collector.md, "Marks from the desktop".
 */
#ifndef ARGUS_MARK_SOCKET_H
#define ARGUS_MARK_SOCKET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARGUS_DEFAULT_MARK_GROUP "argus"
/* a mark is a word or a sentence typed at a hotkey, not a document */
#define ARGUS_MARK_TEXT_MAX 1024
/* supplementary groups looked at (NGROUPS_MAX is 65536; a peer with more
 * than this many is checked on its first ARGUS_MARK_MAX_GROUPS) */
#define ARGUS_MARK_MAX_GROUPS 256
/* connections of one uid open at once */
#define ARGUS_MARK_CONN_PER_UID 4
/* each uid: a burst of this many marks, then this many a second (a hotkey
 * held down, or a member's loop, must not fill the ring with marks) */
#define ARGUS_MARK_RATE_BURST 20
#define ARGUS_MARK_RATE_PER_S 10

/* Fills buf with "<run dir>-mark/mark.sock" (run dir: argus_run_dir()). */
void argus_mark_socket_path(char *buf, size_t len);

/* A peer's credentials as the kernel captured them at connect(). */
struct argus_mark_peer {
	uint32_t pid, uid, gid;
	uint32_t ngroups;
	gid_t groups[ARGUS_MARK_MAX_GROUPS];
};

/* The decision, without side effects: 0 if the peer may mark, -EPERM if
 * not.  Root may; anyone else only when its uid is a member of group in
 * the group database (uid_in_group, argus_mark_group__has_uid) AND the
 * connecting process carried group (as gid or supplementary group). */
int argus_mark_peer__check(const struct argus_mark_peer *p, gid_t group, bool uid_in_group);

/* Whether the account of uid is a member of group now: group is its
 * primary group (passwd) or lists its name (group file / NSS).  False for
 * a uid with no account. */
bool argus_mark_group__has_uid(uid_t uid, gid_t group);

/* The text of a mark: 0 if it is 1..ARGUS_MARK_TEXT_MAX bytes without
 * control bytes (< 0x20, 0x7f), -EINVAL if it is empty or holds one (it
 * could forge or hide lines where it is shown), -E2BIG if too long. */
int argus_mark_text__check(const char *text, size_t len);

struct argus_mark_server;

/* Called for each accepted mark; returns 0 or -errno. */
typedef int (*argus_mark_fn)(void *ctx, uint32_t pid, uint32_t uid, const char *text);

/* Creates the directory (root:group 0750; it must be a directory of ours,
 * not a symlink) and the listening socket (root:group 0660) at path,
 * replacing a stale socket.  NULL on failure, with the reason in err. */
struct argus_mark_server *argus_mark_server__new(const char *path, gid_t group,
						 argus_mark_fn fn, void *ctx,
						 char *err, size_t errlen);
/* Accepts and answers what is waiting, without blocking; now_ns is a
 * monotonic time (deadlines, rate limit). */
void argus_mark_server__serve(struct argus_mark_server *s, uint64_t now_ns);

struct argus_mark_server_stats {
	uint64_t marks;         /* served */
	uint64_t refused;       /* peers refused by the check */
	uint64_t bad;           /* requests refused (not a mark, bad text,
				   too long, too many, timed out, busy) */
	uint64_t busy;          /* of them: connections refused or given up
				   for room (ARGUS_MARK_CONN_PER_UID) */
	uint64_t too_many;      /* of them: marks over the uid's rate */
};
void argus_mark_server__stats(const struct argus_mark_server *s,
			      struct argus_mark_server_stats *st);
const char *argus_mark_server__path(const struct argus_mark_server *s);
/* Closes every client and the socket, removes the socket.  Accepts NULL. */
void argus_mark_server__free(struct argus_mark_server *s);
#endif
