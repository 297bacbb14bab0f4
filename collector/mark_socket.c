/* mark_socket.c - see mark_socket.h.
 *
 * Fairness between members (issue 25, F7): a member's connections and
 * marks must not shut the others out.  So a uid holds at most
 * ARGUS_MARK_CONN_PER_UID connections at once (one more is told `busy`);
 * when the table is full, a newcomer whose uid holds fewer connections
 * than the uid holding the most takes the oldest of that uid's place; and
 * each uid has its own token bucket (RATE_BURST, then RATE_PER_S).
 */
#include "mark_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux 4.13; older headers lack it */
#endif

/* "mark " + text + "\n" */
#define REQ_MAX (5 + ARGUS_MARK_TEXT_MAX + 1)
#define MAX_CLIENTS 32
#define CLIENT_TIMEOUT_NS 1000000000ull
/* a burst of RATE_BURST marks, then RATE_PER_S a second: a hotkey held
 * down (or a member's loop) must not fill the ring with marks */
#define RATE_BURST ARGUS_MARK_RATE_BURST
#define RATE_PER_S ARGUS_MARK_RATE_PER_S
/* uids with a bucket of their own; a new one takes the fullest's place */
#define RATE_UIDS 64

/* one uid's marks: a token bucket */
struct bucket {
	uint32_t uid;
	bool used;
	double tokens;
	uint64_t last;          /* ns, when tokens was refilled */
};
struct client {
	int fd;                 /* -1: free slot */
	uint64_t deadline;
	struct argus_mark_peer peer;
	size_t n;
	char buf[REQ_MAX + 1];
};

struct argus_mark_server {
	int lfd;
	gid_t group;
	argus_mark_fn fn;
	void *ctx;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct client cl[MAX_CLIENTS];
	struct bucket rate[RATE_UIDS];
	struct argus_mark_server_stats st;
};

void argus_mark_socket_path(char *buf, size_t len)
{
	const char *run = argus_run_dir();
	size_t n = strlen(run);

	while (n > 1 && run[n - 1] == '/')
		n--;
	snprintf(buf, len, "%.*s-mark/mark.sock", (int)n, run);
}

int argus_mark_peer__check(const struct argus_mark_peer *p, gid_t group, bool uid_in_group)
{
	if (!p)
		return -EPERM;
	if (p->uid == 0)
		return 0;
	if (!uid_in_group)
		return -EPERM;
	if (p->gid == group)
		return 0;
	for (uint32_t i = 0; i < p->ngroups && i < ARGUS_MARK_MAX_GROUPS; i++)
		if (p->groups[i] == group)
			return 0;
	return -EPERM;
}

bool argus_mark_group__has_uid(uid_t uid, gid_t group)
{
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	char pbuf[4096], *gbuf;
	size_t glen = 16384;
	bool yes = false;

	if (getpwuid_r(uid, &pw, pbuf, sizeof(pbuf), &pwp) || !pwp)
		return false;
	if (pw.pw_gid == group)
		return true;
	/* a large group's member list may not fit: grow the buffer */
	for (;;) {
		int e;

		gbuf = malloc(glen);
		if (!gbuf)
			return false;
		e = getgrgid_r(group, &gr, gbuf, glen, &grp);
		if (e != ERANGE || glen >= (1u << 24))
			break;
		free(gbuf);
		glen *= 4;
	}
	if (grp)
		for (char **m = gr.gr_mem; m && *m; m++)
			if (!strcmp(*m, pw.pw_name)) {
				yes = true;
				break;
			}
	free(gbuf);
	return yes;
}

int argus_mark_text__check(const char *text, size_t len)
{
	if (!text || !len)
		return -EINVAL;
	if (len > ARGUS_MARK_TEXT_MAX)
		return -E2BIG;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)text[i];
		if (ch < 0x20 || ch == 0x7f)
			return -EINVAL;
	}
	return 0;
}

/* The directory: created 0700, then made root:group 0750 through an fd
 * of the directory itself (O_NOFOLLOW), after checking it is a directory
 * that we own: a symlink or someone else's directory at that path is
 * refused, not followed or given to the group. */
static int make_dir(const char *dir, gid_t group, char *err, size_t errlen)
{
	struct stat st;
	int dfd, e = 0;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		e = -errno;
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return e;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", dir,
			 errno == ELOOP || errno == ENOTDIR ? "not a directory (a symlink?)" : strerror(errno));
		return e;
	}
	if (fstat(dfd, &st) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is not our directory (owner uid %u): remove it", dir,
			 (unsigned)st.st_uid);
		close(dfd);
		return -EPERM;
	}
	if (fchown(dfd, (uid_t)-1, group) || fchmod(dfd, 0750)) {
		e = -errno;
		snprintf(err, errlen, "cannot give %s to the mark group: %s", dir, strerror(errno));
	}
	close(dfd);
	return e;
}

struct argus_mark_server *argus_mark_server__new(const char *path, gid_t group,
						 argus_mark_fn fn, void *ctx,
						 char *err, size_t errlen)
{
	struct argus_mark_server *s;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	char *slash;
	mode_t old;

	if (!path || !fn || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "mark socket path too long: %s", path ? path : "(none)");
		return NULL;
	}
	strcpy(sa.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (make_dir(dir, group, err, errlen))
			return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		s->cl[i].fd = -1;
	s->group = group;
	s->fn = fn;
	s->ctx = ctx;
	strcpy(s->path, path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		free(s);
		return NULL;
	}
	unlink(path); /* a stale socket from a killed daemon */
	/* bound 0600, and only then opened to the group: the directory is
	 * ours alone to write, so the path cannot be swapped in between */
	old = umask(0177);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(s->lfd, 16) ||
	    lchown(path, (uid_t)-1, group) || chmod(path, 0660)) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		umask(old);
		close(s->lfd);
		unlink(path);
		free(s);
		return NULL;
	}
	umask(old);
	return s;
}

static void say(int fd, const char *msg)
{
	/* a fresh socket's buffer takes a line; a peer that does not read
	 * loses it rather than stalling the collector */
	if (send(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* nothing to do: the client is closed next */
	}
}

static void drop(struct client *c)
{
	close(c->fd);
	c->fd = -1;
}

/* The supplementary groups as they were at connect() (SO_PEERGROUPS,
 * Linux 4.13; before it only the gid counts).  A peer in more groups than
 * we keep: the first ones, and group itself if it is among the rest. */
static void peer_groups(int fd, struct argus_mark_peer *peer, gid_t group)
{
	socklen_t len = sizeof(peer->groups);
	gid_t *all;

	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, peer->groups, &len)) {
		peer->ngroups = len / sizeof(gid_t);
		return;
	}
	if (errno != ERANGE || !(all = malloc(len)))
		return;
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, all, &len)) {
		size_t n = len / sizeof(gid_t);

		memcpy(peer->groups, all, sizeof(peer->groups));
		peer->ngroups = ARGUS_MARK_MAX_GROUPS;
		for (size_t i = ARGUS_MARK_MAX_GROUPS; i < n; i++)
			if (all[i] == group)
				peer->groups[ARGUS_MARK_MAX_GROUPS - 1] = group;
	}
	free(all);
}

static uint32_t uid_conns(const struct argus_mark_server *s, uint32_t uid)
{
	uint32_t n = 0;

	for (int i = 0; i < MAX_CLIENTS; i++)
		n += s->cl[i].fd >= 0 && s->cl[i].peer.uid == uid;
	return n;
}

/* A slot for a new connection of uid, or NULL (busy): at most
 * ARGUS_MARK_CONN_PER_UID per uid; a full table gives up the oldest
 * connection of the uid holding the most, when that is more than uid
 * holds.  A member's silent connections then never keep another out. */
static struct client *client_slot(struct argus_mark_server *s, uint32_t uid)
{
	struct client *oldest = NULL;
	uint32_t mine = uid_conns(s, uid), most = 0, most_uid = 0;

	if (mine >= ARGUS_MARK_CONN_PER_UID)
		return NULL;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->cl[i].fd < 0)
			return &s->cl[i];
	for (int i = 0; i < MAX_CLIENTS; i++) {
		uint32_t n = uid_conns(s, s->cl[i].peer.uid);

		if (n > most) {
			most = n;
			most_uid = s->cl[i].peer.uid;
		}
	}
	if (most <= mine + 1)
		return NULL;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->cl[i].peer.uid == most_uid &&
		    (!oldest || s->cl[i].deadline < oldest->deadline))
			oldest = &s->cl[i];
	s->st.bad++;
	s->st.busy++;
	say(oldest->fd, "error: busy: the mark socket needed this connection for another member\n");
	drop(oldest);
	return oldest;
}

/* uid's bucket, refilled to now. */
static struct bucket *bucket_of(struct argus_mark_server *s, uint32_t uid, uint64_t now)
{
	struct bucket *b = NULL, *free_b = NULL, *fullest = NULL;

	for (int i = 0; i < RATE_UIDS; i++) {
		struct bucket *x = &s->rate[i];

		if (!x->used) {
			if (!free_b)
				free_b = x;
			continue;
		}
		if (now > x->last) {
			x->tokens += (double)(now - x->last) * RATE_PER_S / 1e9;
			if (x->tokens > RATE_BURST)
				x->tokens = RATE_BURST;
			x->last = now;
		}
		if (x->uid == uid)
			b = x;
		if (!fullest || x->tokens > fullest->tokens)
			fullest = x;
	}
	if (b)
		return b;
	/* a new uid: a free bucket, else the fullest's (full: nothing lost) */
	b = free_b ? free_b : fullest;
	*b = (struct bucket){ .uid = uid, .used = true, .tokens = RATE_BURST, .last = now };
	return b;
}

/* Accept what is waiting, at most MAX_CLIENTS connections a call: the
 * members' clients reconnect as fast as they are refused, and an accept
 * loop that ran until the backlog was empty never returned to argusd's
 * main loop while they did (nor to reap the slots they were refused for:
 * e2e_mark_group's flood, 6,800 `busy` answers in 2 s and no mark). */
static void accept_some(struct argus_mark_server *s, uint64_t now)
{
	for (int accepted = 0; accepted < MAX_CLIENTS; accepted++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct argus_mark_peer peer = { 0 };
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct client *slot = NULL;

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			s->st.refused++;
			close(fd);
			continue;
		}
		peer.pid = (uint32_t)cred.pid;
		peer.uid = cred.uid;
		peer.gid = cred.gid;
		peer_groups(fd, &peer, s->group);
		if (argus_mark_peer__check(&peer, s->group,
					   peer.uid == 0 || argus_mark_group__has_uid(peer.uid, s->group))) {
			s->st.refused++;
			say(fd, "error: permission denied: only root and members of the collector's"
				" mark group may mark\n");
			close(fd);
			continue;
		}
		slot = client_slot(s, peer.uid);
		if (!slot) {
			s->st.bad++;
			s->st.busy++;
			say(fd, "error: busy: too many clients on the mark socket, try again\n");
			close(fd);
			continue;
		}
		slot->fd = fd;
		slot->deadline = now + CLIENT_TIMEOUT_NS;
		slot->peer = peer;
		slot->n = 0;
	}
}

/* The client's line is complete (or it closed): answer and drop it. */
static void answer(struct argus_mark_server *s, struct client *c, uint64_t now)
{
	char msg[160];
	char *line = c->buf;
	size_t len;
	int e;

	char *nl = memchr(c->buf, '\n', c->n);

	len = nl ? (size_t)(nl - c->buf) : c->n;
	if (!nl && c->n >= REQ_MAX) {
		s->st.bad++;
		snprintf(msg, sizeof(msg), "error: mark: text too long (at most %d bytes)\n",
			 ARGUS_MARK_TEXT_MAX);
		say(c->fd, msg);
		drop(c);
		return;
	}
	line[len] = 0;
	/* a NUL would hide the rest of the line from every reader */
	if (len < 5 || strncmp(line, "mark ", 5) || memchr(line, 0, len)) {
		s->st.bad++;
		say(c->fd, "error: the mark socket takes only `mark TEXT`: everything else needs"
			   " root (the control socket)\n");
		drop(c);
		return;
	}
	e = argus_mark_text__check(line + 5, len - 5);
	if (e) {
		s->st.bad++;
		if (e == -E2BIG)
			snprintf(msg, sizeof(msg), "error: mark: text too long (at most %d bytes)\n",
				 ARGUS_MARK_TEXT_MAX);
		else
			snprintf(msg, sizeof(msg), "error: mark: the text must be printable characters"
				 " (no control bytes), at least one\n");
		say(c->fd, msg);
		drop(c);
		return;
	}
	/* this member's own bucket: another's marks do not spend it */
	struct bucket *b = bucket_of(s, c->peer.uid, now);
	if (b->tokens < 1) {
		s->st.bad++;
		s->st.too_many++;
		say(c->fd, "error: mark: too many marks, try again in a moment\n");
		drop(c);
		return;
	}
	b->tokens -= 1;
	e = s->fn(s->ctx, c->peer.pid, c->peer.uid, line + 5);
	if (e) {
		snprintf(msg, sizeof(msg), "error: mark: %s\n", strerror(-e));
		say(c->fd, msg);
	} else {
		s->st.marks++;
		say(c->fd, "ok\n");
	}
	drop(c);
}

/* Read every client: answer a complete request, drop one that closed or
 * whose time is up. */
static void serve_clients(struct argus_mark_server *s, uint64_t now)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s->cl[i];
		bool done = false;

		if (c->fd < 0)
			continue;
		while (c->n < REQ_MAX) {
			ssize_t r = read(c->fd, c->buf + c->n, REQ_MAX - c->n);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (r <= 0) {
				done = true; /* EOF (the client's shutdown) or an error */
				break;
			}
			c->n += (size_t)r;
			if (memchr(c->buf + c->n - (size_t)r, '\n', (size_t)r)) {
				done = true;
				break;
			}
		}
		if (done || c->n >= REQ_MAX) {
			if (!c->n) {
				drop(c);
				continue;
			}
			answer(s, c, now);
		} else if (now >= c->deadline) {
			s->st.bad++;
			say(c->fd, "error: mark: no request within a second\n");
			drop(c);
		}
	}
}

void argus_mark_server__serve(struct argus_mark_server *s, uint64_t now)
{
	if (!s)
		return;
	/* first the slots of clients that closed (and the answers due), so
	 * that a newcomer is not refused for a connection already gone; then
	 * the newcomers, whose requests are read at once */
	serve_clients(s, now);
	accept_some(s, now);
	serve_clients(s, now);
}

void argus_mark_server__stats(const struct argus_mark_server *s,
			      struct argus_mark_server_stats *st)
{
	if (s)
		*st = s->st;
	else
		memset(st, 0, sizeof(*st));
}

const char *argus_mark_server__path(const struct argus_mark_server *s)
{
	return s ? s->path : NULL;
}

void argus_mark_server__free(struct argus_mark_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->cl[i].fd >= 0)
			close(s->cl[i].fd);
	close(s->lfd);
	unlink(s->path);
	free(s);
}
