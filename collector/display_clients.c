/* display_clients.c - see display_clients.h.
 *
 * Data: the client inodes reported so far, sorted, so a poll that finds
 * the same connections as the last one costs one netlink dump and no
 * /proc walk.  Inodes of connections that closed drop out of the set.
 */
#include "display_clients.h"

#include <dirent.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct argus_display_scan {
	uint64_t *known;      /* client inodes already reported, sorted */
	size_t nknown;
};

struct ivec {
	uint64_t *v;
	size_t n, cap;
};

static int ivec_push(struct ivec *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 64;
		void *p = realloc(a->v, ncap * sizeof(*a->v));
		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = ncap;
	}
	a->v[a->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void ivec_sort_uniq(struct ivec *a)
{
	size_t j = 0;

	if (!a->n)
		return;
	qsort(a->v, a->n, sizeof(*a->v), cmp_u64);
	for (size_t i = 1; i < a->n; i++)
		if (a->v[i] != a->v[j])
			a->v[++j] = a->v[i];
	a->n = j + 1;
}

static bool has(const uint64_t *v, size_t n, uint64_t x)
{
	return bsearch(&x, v, n, sizeof(*v), cmp_u64) != NULL;
}

bool argus_display_socket_name(const char *name, size_t len)
{
	static const char x11[] = "/tmp/.X11-unix/X";
	const char *base;
	size_t blen;

	if (len && name[0] == 0) { /* abstract: "@/tmp/.X11-unix/X0" */
		name++;
		len--;
	}
	if (len > sizeof(x11) - 1 && !memcmp(name, x11, sizeof(x11) - 1))
		return true;
	base = memrchr(name, '/', len);
	base = base ? base + 1 : name;
	blen = len - (size_t)(base - name);
	/* wayland-0, wayland-1, ... but not the server's wayland-0.lock */
	return blen > 8 && !memcmp(base, "wayland-", 8) &&
	       !(blen > 5 && !memcmp(base + blen - 5, ".lock", 5));
}

/* One sock_diag dump of every unix socket: server-side sockets of display
 * connections (named like a display, with a peer) give their peer, the
 * client; a display listener's pending connections (icons) are server
 * ends too, so sockets whose peer is one of them are clients. */
static int dump_clients(struct ivec *clients)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = { 0 };
	struct ivec icons = { 0 };
	struct ivec peer_of_unnamed = { 0 }; /* pairs: inode, peer */
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static char buf[32768] __attribute__((aligned(8)));
	int fd, rc = 0;
	bool done = false;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_ICONS;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		goto out;
	}
	while (!done) {
		int len = (int)recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		/* NLMSG_OK compares the header's __u32 length with an int len
		 * (netlink(3) says int): clang's -Wsign-compare flags the macro */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
#pragma GCC diagnostic pop
			struct unix_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a;
			const char *name = NULL;
			size_t namelen = 0, rlen;
			uint32_t peer = 0;
			const uint32_t *ic = NULL;
			size_t nic = 0;

			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				/* no unix_diag in this kernel */
				rc = e->error == -ENOENT ? -EOPNOTSUPP : (e->error ? e->error : -EIO);
				goto out;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
				continue;
			rlen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			for (a = (struct rtattr *)(m + 1); RTA_OK(a, rlen); a = RTA_NEXT(a, rlen)) {
				if (a->rta_type == UNIX_DIAG_NAME) {
					name = RTA_DATA(a);
					namelen = RTA_PAYLOAD(a);
				} else if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= 4) {
					peer = *(const uint32_t *)RTA_DATA(a);
				} else if (a->rta_type == UNIX_DIAG_ICONS) {
					ic = RTA_DATA(a);
					nic = RTA_PAYLOAD(a) / 4;
				}
			}
			if (name && argus_display_socket_name(name, namelen)) {
				if (peer && ivec_push(clients, peer))
					rc = -ENOMEM;
				for (size_t i = 0; i < nic; i++)
					if (ivec_push(&icons, ic[i]))
						rc = -ENOMEM;
			} else if (!name && peer) {
				if (ivec_push(&peer_of_unnamed, m->udiag_ino) ||
				    ivec_push(&peer_of_unnamed, peer))
					rc = -ENOMEM;
			}
		}
	}
	/* clients still waiting in a display server's accept queue */
	if (icons.n) {
		ivec_sort_uniq(&icons);
		for (size_t i = 0; i + 1 < peer_of_unnamed.n; i += 2)
			if (has(icons.v, icons.n, peer_of_unnamed.v[i + 1]) &&
			    ivec_push(clients, peer_of_unnamed.v[i]))
				rc = -ENOMEM;
	}
out:
	free(icons.v);
	free(peer_of_unnamed.v);
	close(fd);
	return rc;
}

/* The pids holding any of the sockets in want (sorted). */
static int holders(const struct ivec *want, struct ivec *pids)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;

	if (!proc)
		return -errno;
	while ((pe = readdir(proc))) {
		char path[64], link[64];
		struct dirent *fe;
		DIR *fds;
		char *end;
		unsigned long pid = strtoul(pe->d_name, &end, 10);

		if (!pid || *end)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			ssize_t n;

			if (fe->d_name[0] == '.')
				continue;
			n = readlinkat(dirfd(fds), fe->d_name, link, sizeof(link) - 1);
			if (n < 9 || memcmp(link, "socket:[", 8))
				continue;
			link[n] = 0;
			if (has(want->v, want->n, strtoull(link + 8, NULL, 10))) {
				if (ivec_push(pids, pid)) {
					closedir(fds);
					closedir(proc);
					return -ENOMEM;
				}
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return 0;
}

struct argus_display_scan *argus_display_scan__new(void)
{
	return calloc(1, sizeof(struct argus_display_scan));
}

void argus_display_scan__free(struct argus_display_scan *s)
{
	if (!s)
		return;
	free(s->known);
	free(s);
}

int argus_display_scan__poll(struct argus_display_scan *s, uint32_t **out, size_t *nout)
{
	struct ivec clients = { 0 }, fresh = { 0 }, pids = { 0 };
	int rc;

	*out = NULL;
	*nout = 0;
	rc = dump_clients(&clients);
	if (rc)
		goto done;
	ivec_sort_uniq(&clients);
	for (size_t i = 0; i < clients.n; i++)
		if (!has(s->known, s->nknown, clients.v[i]) && (rc = ivec_push(&fresh, clients.v[i])))
			goto done;
	/* the set now: closed connections drop out */
	free(s->known);
	s->known = clients.v;
	s->nknown = clients.n;
	clients.v = NULL;
	if (!fresh.n)
		goto done;
	if ((rc = holders(&fresh, &pids)))
		goto done;
	ivec_sort_uniq(&pids);
	if (pids.n) {
		uint32_t *p = malloc(pids.n * sizeof(*p));
		if (!p) {
			rc = -ENOMEM;
			goto done;
		}
		for (size_t i = 0; i < pids.n; i++)
			p[i] = (uint32_t)pids.v[i];
		*out = p;
		*nout = pids.n;
	}
done:
	free(clients.v);
	free(fresh.v);
	free(pids.v);
	return rc;
}
